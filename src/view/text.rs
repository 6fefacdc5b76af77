//! A state's grids as plain text, for `playforge run --board` and `playforge replay`: one
//! character (or glyph) per cell, the top row (y = height − 1) first, each row opened by its
//! number from 1 and the column letters under the board — the way OpenSpiel prints Breakthrough,
//! so that `a1` is the bottom-left cell as in the move notation (`crate::wgdl::board::cell_name`):
//!
//! ```text
//! 8bbbbbbbb
//! 7bbbbbbbb
//! 6........
//! …
//! 1wwwwwwww
//!  abcdefgh
//! ```
//!
//! A cell shows its grid's `pieces` character for its value where the file declares them, else
//! its `view <grid> glyphs` glyph, else the number; a blank glyph shows as `.`. When any cell or
//! column label is wider than one character, cells are padded to one width and separated by a
//! space. A hex grid (`view <grid> hex`) always separates its cells by a space and indents row y
//! by y half cells, so that each row stands half a cell right of the row below — the rhombus
//! OpenSpiel prints for Hex, upside down since row 1 is at the bottom here:
//!
//! ```text
//! 3   . . .
//! 2  . x .
//! 1 o . .
//!   a b c
//! ```
//!
//! A grid the file hides (`view <grid> hide`) is left out; with several grids, each is
//! headed by its name.

use crate::wgdl::{Program, State};

/// Every shown grid of `p` in `st` as text, each ending with a newline (empty when the game has
/// no grid).
pub fn grids(p: &Program, st: &State) -> String {
    let shown: Vec<usize> = (0..p.grids.len()).filter(|&k| !p.views.grids.get(k).is_some_and(|v| v.hide)).collect();
    let mut out = String::new();
    for &k in &shown {
        if shown.len() > 1 {
            out.push_str(&p.grids[k].name);
            out.push_str(":\n");
        }
        out.push_str(&grid(p, st, k));
    }
    out
}

/// Grid `k` of `p` in `st` as text (see the module's opening paragraph).
pub fn grid(p: &Program, st: &State, k: usize) -> String {
    let g = &p.grids[k];
    let (w, h) = (g.width as usize, g.height as usize);
    let pieces = p.board.pieces.get(k).filter(|c| !c.is_empty());
    let glyphs = p.views.grids.get(k).map(|v| v.glyphs.as_slice()).unwrap_or(&[]);
    let show = |v: i64| -> String {
        let declared = usize::try_from(v).ok().and_then(|i| match pieces {
            Some(chars) => chars.get(i).map(|c| c.to_string()),
            None => glyphs.get(i).cloned(),
        });
        match declared {
            Some(s) if s.trim().is_empty() => ".".to_string(),
            Some(s) => s,
            None => v.to_string(),
        }
    };
    let cells: Vec<String> = (0..w * h).map(|c| show(st.slots.get(g.base as usize + c).copied().unwrap_or(0))).collect();
    let columns: Vec<String> = (0..w as i64).map(|x| crate::wgdl::board::cell_name(x, g.width).trim_end_matches('1').to_string()).collect();
    let width = cells.iter().chain(&columns).map(|s| s.chars().count()).max().unwrap_or(1);
    let hex = p.views.grids.get(k).is_some_and(|v| v.hex);
    let sep = if width > 1 || hex { " " } else { "" };
    let margin = h.to_string().len();
    let pad = |s: &str| format!("{s:<width$}");
    let mut out = String::new();
    for y in (0..h).rev() {
        let row: Vec<String> = (0..w).map(|x| pad(&cells[y * w + x])).collect();
        // A hex grid's row y stands y half cells (a cell and its space) right of the bottom row.
        let indent = if hex { " ".repeat((y * (width + 1)).div_ceil(2)) } else { String::new() };
        out.push_str(&format!("{:>margin$}{sep}{indent}{}\n", y + 1, row.join(sep).trim_end()));
    }
    let letters: Vec<String> = columns.iter().map(|c| pad(c)).collect();
    out.push_str(&format!("{:margin$}{sep}{}\n", "", letters.join(sep).trim_end()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(src: &str) -> (std::sync::Arc<Program>, State) {
        let c = crate::wgdl::compile_str("t.wgdl", src).unwrap_or_else(|d| panic!("{d}"));
        let st = c.program.initial_state().expect("start");
        (c.program, st)
    }

    #[test]
    fn breakthrough_prints_as_openspiel_does() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games/breakthrough.wgdl");
        let p = crate::wgdl::load(&path).unwrap_or_else(|e| panic!("{e}")).program;
        let st = p.initial_state().expect("start");
        let want = "8bbbbbbbb\n7bbbbbbbb\n6........\n5........\n4........\n3........\n2wwwwwwww\n1wwwwwwww\n abcdefgh\n";
        assert_eq!(grids(&p, &st), want);
    }

    #[test]
    fn glyphs_then_numbers_and_wide_cells_are_spaced() {
        let base = "class g\nobject global is g\ninitial global\naction g go\ngoal 1 game.moves > 5\n";
        // `view … glyphs`: value 0 is a space (shown as `.`), 1 `X`; a value past them: its number.
        let (p, mut st) = load(&format!("{base}grid board 3 2\nview board glyphs \" X\"\n"));
        let b = p.grids[0].base as usize;
        st.slots[b] = 1; // a1
        st.slots[b + 5] = 7; // c2
        assert_eq!(grids(&p, &st), "2..7\n1X..\n abc\n");
        // No hints: numbers; a two-digit one widens every cell; two grids are named; a hidden
        // one is left out.
        let (p, mut st) = load(&format!("{base}grid a 2 1\ngrid b 1 1\ngrid c 1 1\nview c hide\n"));
        st.slots[p.grids[0].base as usize + 1] = 12;
        assert_eq!(grids(&p, &st), "a:\n1 0  12\n  a  b\nb:\n10\n a\n");
        // Ten rows: the numbers are right-aligned.
        let (p, st) = load(&format!("{base}grid t 1 10\n"));
        assert!(grids(&p, &st).starts_with("100\n 90\n"), "{}", grids(&p, &st));
    }

    #[test]
    fn a_hex_grid_leans_half_a_cell_per_row() {
        let base = "class g\nobject global is g\ninitial global\naction g go\ngoal 1 game.moves > 5\n";
        let (p, mut st) = load(&format!("{base}grid board 3 3\npieces board \".xo\"\nview board hex\n"));
        let b = p.grids[0].base as usize;
        st.slots[b] = 2; // a1
        st.slots[b + 4] = 1; // b2
        assert_eq!(grids(&p, &st), "3   . . .\n2  . x .\n1 o . .\n  a b c\n");
        // A class takes no `hex`, and a grid's hint is checked as the others are.
        let d = crate::wgdl::compile_str("t.wgdl", &format!("{base}view g hex\n")).err().expect("an error");
        assert!(d.to_string().contains("`hex` for class `g`"), "{d}");
    }
}
