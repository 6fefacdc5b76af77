//! `view` lines (an extension): hints for the state view — a class's label, bars, glyph, colour,
//! or a grid's glyphs and colours, or either left out — resolved against the classes and grids
//! into [`Views`]. A subclass without a hint of its own takes its nearest ancestor's. Play never
//! reads them; a bad hint is still an error with its span, like any other line.

use super::Compiler;
use crate::wgdl::ast::{BarMax, DeclKind, ViewHint};
use crate::wgdl::diag::{DiagKind, Span};
use crate::wgdl::program::*;

/// A CSS colour we accept: `#rgb`, `#rrggbb` or a plain name (letters only), so that nothing a
/// file says can break out of an SVG attribute.
fn is_colour(s: &str) -> bool {
    match s.strip_prefix('#') {
        Some(h) => (h.len() == 3 || h.len() == 6) && h.chars().all(|c| c.is_ascii_hexdigit()),
        None => !s.is_empty() && s.len() <= 32 && s.chars().all(|c| c.is_ascii_alphabetic()),
    }
}

impl Compiler<'_> {
    fn view_error(&mut self, span: Span, what: impl Into<String>, expected: impl Into<String>) {
        self.error(span, DiagKind::Invalid { what: what.into(), expected: expected.into() });
    }

    /// An attribute or class constant of `class`, by name, with its type.
    fn view_attr(&mut self, class: ClassId, id: &crate::wgdl::ast::Ident, number: bool) -> Option<AttrRef> {
        let Some((is_const, idx, ty)) = self.find_attr(class, &id.name) else {
            self.no_such_attr(class, id);
            return None;
        };
        if number && !matches!(ty, Ty::Long | Ty::Double) {
            self.view_error(id.span, format!("`{}` in a bar", id.name), "an attribute of type long or double");
            return None;
        }
        Some(if is_const { AttrRef::Const(idx as u32, ty) } else { AttrRef::Inst(idx as u32, ty) })
    }

    pub(super) fn collect_views(&mut self) {
        let n_classes = self.out_classes.len();
        let mut own: Vec<ClassView> = vec![ClassView::default(); n_classes];
        let mut grids: Vec<GridView> = vec![GridView::default(); self.x.grids.len()];
        for d in self.decls() {
            let DeclKind::View { target, hint } = &d.kind else { continue };
            let class = self.class_ix.get(&target.name).copied();
            let grid = self.x.grid_ix.get(&target.name).map(|&g| g as usize);
            match (class, grid, hint) {
                (None, None, _) => {
                    let mut known: Vec<String> = self.class_ix.keys().chain(self.x.grid_ix.keys()).cloned().collect();
                    known.sort();
                    let expected = if known.is_empty() {
                        "a class or grid (none declared)".into()
                    } else {
                        format!("a class or grid: {}", known.join(", "))
                    };
                    self.error(target.span, DiagKind::UnknownName { what: "class or grid", name: target.name.clone(), expected });
                }
                (Some(c), _, ViewHint::Label(a)) => {
                    if let Some(r) = self.view_attr(c, a, false) {
                        own[c as usize].label = Some(r);
                    }
                }
                (Some(c), _, ViewHint::Bar { attr, max }) => {
                    let Some(r) = self.view_attr(c, attr, true) else { continue };
                    let full = match max {
                        BarMax::Number(v) if *v > 0.0 => BarFull::Number(*v),
                        BarMax::Number(v) => {
                            self.view_error(d.span, format!("a bar full at {v}"), "a full value above 0");
                            continue;
                        }
                        BarMax::Attr(m) => match self.view_attr(c, m, true) {
                            Some(m) => BarFull::Attr(m),
                            None => continue,
                        },
                    };
                    own[c as usize].bars.push((r, full));
                }
                (Some(c), _, ViewHint::Glyph(g, span)) => {
                    let n = g.chars().count();
                    if n == 0 || n > 3 {
                        self.view_error(*span, format!("glyph \"{g}\""), "one to three characters");
                        continue;
                    }
                    own[c as usize].glyph = Some(g.clone());
                }
                (Some(c), _, ViewHint::Colour(s, span)) => {
                    if !is_colour(s) {
                        self.view_error(*span, format!("colour \"{s}\""), "#rgb, #rrggbb or a colour name");
                        continue;
                    }
                    own[c as usize].colour = Some(s.clone());
                }
                (Some(c), _, ViewHint::Hide) => own[c as usize].hide = true,
                (Some(_), _, ViewHint::Glyphs(_, span)) => {
                    self.view_error(
                        *span,
                        format!("`glyphs` for class `{}`", target.name),
                        "`glyph \"<text>\"` for a class (`glyphs` is for grids)",
                    );
                }
                (None, Some(g), ViewHint::Glyphs(s, _)) => grids[g].glyphs = s.chars().map(String::from).collect(),
                (None, Some(g), ViewHint::Colour(s, span)) => {
                    let list: Vec<String> = s.split_whitespace().map(String::from).collect();
                    if let Some(bad) = list.iter().find(|c| !is_colour(c)) {
                        self.view_error(*span, format!("colour \"{bad}\""), "#rgb, #rrggbb or a colour name, one per tile value from 0");
                        continue;
                    }
                    grids[g].colours = list;
                }
                (None, Some(g), ViewHint::Hide) => grids[g].hide = true,
                (None, Some(g), ViewHint::Hex) => grids[g].hex = true,
                (Some(_), _, ViewHint::Hex) => {
                    self.view_error(
                        target.span,
                        format!("`hex` for class `{}`", target.name),
                        "`hex` for a grid (a class: label, bar, glyph, colour or hide)",
                    );
                }
                (None, Some(_), _) => {
                    self.view_error(
                        target.span,
                        format!("that hint for grid `{}`", target.name),
                        "for a grid: glyphs, colour, hex or hide",
                    );
                }
            }
        }
        // A subclass takes its nearest ancestor's hint where it has none.
        let mut classes = own.clone();
        for (c, view) in classes.iter_mut().enumerate() {
            let mut up = self.out_classes[c].parent;
            let mut steps = 0;
            while let Some(p) = up
                && steps <= n_classes
            {
                let a = &own[p as usize];
                view.label = view.label.or(a.label);
                if view.bars.is_empty() {
                    view.bars = a.bars.clone();
                }
                view.glyph = view.glyph.take().or_else(|| a.glyph.clone());
                view.colour = view.colour.take().or_else(|| a.colour.clone());
                view.hide |= a.hide;
                up = self.out_classes[p as usize].parent;
                steps += 1;
            }
        }
        self.x.views = Views { classes, grids };
    }
}

#[cfg(test)]
mod tests {
    use super::is_colour;

    #[test]
    fn colours_are_hex_or_plain_names_and_nothing_else() {
        for ok in ["#abc", "#A0b1C2", "red", "rebeccapurple"] {
            assert!(is_colour(ok), "{ok}");
        }
        for bad in ["", "#ab", "#abcd", "#ggg", "red;", "\"red", "url(x)", "red blue"] {
            assert!(!is_colour(bad), "{bad}");
        }
    }
}
