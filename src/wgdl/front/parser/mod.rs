//! Parser: tokens → [`crate::wgdl::ast::File`]. Second stage (text → tokens → **AST** → checked model → program).
//!
//! The file is cut into lines; each line is one declaration chosen by its first word, as in the
//! thesis (Appendix B). Parsing never fails: a bad line becomes a diagnostic and the parser moves
//! on to the next line, so one run reports every problem.
//!
//! Expressions follow the thesis's precedence *exactly* (section 4.3), lowest first:
//! `= == != && || xor > >= < <= + - * /` (then `%`, an extension), each operator on its own level, left-associative. The
//! operands and operators of an expression are read into a flat list first, then split at the
//! last operator of the lowest level present — the recursive split the spec recommends. One
//! consequence users must know (documented in games/README.md): `a * b / c` means `a * (b / c)`.
//! Unary `-` and `!`/`not` bind tightest.

use crate::wgdl::ast::*;
use crate::wgdl::diag::{Cap, DiagKind, Diagnostic, Span, clip};
use crate::wgdl::lexer::{Tok, Token};

mod board;
mod decl;
mod expr;

const DECLS: &str = "class, object, attribute, action, condition, consequence, hasConsequence, initial, goal, game, \
actionGroup, isInGroup, duration, session, limit, players, turn, turnOrder, winner, draw, hexmap, hexOccupants, grid, chance, parameter, constraint, \
policy, policyOnly, choose, lastResort, unless, view, pieces, start, forward, notation, byChance";

pub fn parse(tokens: &[Token], diags: &mut Vec<Diagnostic>) -> File {
    parse_capped(tokens, diags, &mut Cap::after(diags))
}

/// [`parse`], keeping at most [`crate::wgdl::diag::MAX_SHOWN`] errors (`cap` counts the rest).
pub fn parse_capped(tokens: &[Token], diags: &mut Vec<Diagnostic>, cap: &mut Cap) -> File {
    let mut decls = Vec::new();
    let mut start = 0;
    for (i, t) in tokens.iter().enumerate() {
        if matches!(t.tok, Tok::Newline | Tok::Eof) {
            let line = &tokens[start..i];
            start = i + 1;
            if line.is_empty() {
                continue;
            }
            let mut p = LineParser { toks: line, pos: 0, end: t.span, recovered: Vec::new(), size: 0, brackets: 0 };
            let result = p.decl();
            for d in p.recovered {
                cap.push(diags, d, false);
            }
            match result {
                Ok(d) => decls.push(d),
                Err(d) => cap.push(diags, d, false),
            }
        }
    }
    File { decls }
}

type PResult<T> = Result<T, Diagnostic>;

struct LineParser<'a> {
    toks: &'a [Token],
    pos: usize,
    /// The newline (or end of file) after the line, for "expected … at end of line".
    end: Span,
    /// Errors in a part of the line the parser recovered from: the declaration is kept (so its
    /// name stays declared and later lines using it do not report follow-on errors).
    recovered: Vec<Diagnostic>,
    /// Operators, signs and brackets read so far in this line; see [`MAX_EXPR_SIZE`].
    size: usize,
    /// Brackets open at this point; see [`MAX_BRACKETS`].
    brackets: usize,
}

/// The most operators, signs and brackets one line may hold: 500 (binary operators, unary `-`
/// and `!`, each `(`, `[` and call). It bounds the depth of the expression tree, which every later
/// stage walks recursively, so that no input can overflow the stack (a hand-written expression
/// has a few dozen at most). Documented in games/README.md §2 ("Length of a line").
const MAX_EXPR_SIZE: usize = 500;
/// The deepest bracket nesting allowed. Each level costs several parser frames, the largest of
/// all, so this is lower than [`MAX_EXPR_SIZE`].
const MAX_BRACKETS: usize = 64;

/// A long literal's digits (with its sign): out-of-range values are named as such.
fn long_literal(digits: &str, neg: bool, span: Span) -> PResult<i64> {
    let text = if neg { format!("-{digits}") } else { digits.to_string() };
    text.parse::<i64>().map_err(|_| {
        Diagnostic::error(
            span,
            DiagKind::BadLiteral {
                ty: "long",
                text: clip(&text, 40),
                expected: "a whole number from -9223372036854775808 to 9223372036854775807 (64 bits)",
            },
        )
    })
}

/// A number's digits as a double: finite, or an error naming the literal.
fn double_literal(digits: &str, span: Span) -> PResult<f64> {
    match digits.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(Diagnostic::error(
            span,
            DiagKind::BadLiteral { ty: "double", text: clip(digits, 40), expected: "a number below 1.8e308 (a finite double)" },
        )),
    }
}

fn describe(t: Option<&Token>) -> String {
    match t.map(|t| &t.tok) {
        None | Some(Tok::Newline) | Some(Tok::Eof) => "end of line".into(),
        Some(Tok::Name(n)) => format!("`{n}`"),
        Some(Tok::Number(n)) => format!("number `{n}`"),
        Some(Tok::Quoted(s)) => format!("string \"{s}\""),
        Some(Tok::Op(o)) => format!("`{o}`"),
    }
}

/// The type word `n` spells, in any case (`long`, `Long`, `STRING`, …): the thesis mixes
/// `string`/`String` and `TRUE`/`true`, so case is ignored.
fn type_word(n: &str) -> Option<&'static str> {
    ["long", "double", "boolean", "string"].into_iter().find(|t| n.eq_ignore_ascii_case(t))
}

fn is_type_word(n: &str) -> bool {
    type_word(n).is_some()
}

impl<'a> LineParser<'a> {
    fn peek(&self) -> Option<&'a Token> {
        self.toks.get(self.pos)
    }
    fn peek_at(&self, k: usize) -> Option<&'a Token> {
        self.toks.get(self.pos + k)
    }
    fn here(&self) -> Span {
        self.peek().map_or(Span { lo: self.end.lo, hi: self.end.lo }, |t| t.span)
    }
    fn line_span(&self) -> Span {
        self.toks[0].span.to(self.toks[self.toks.len() - 1].span)
    }
    fn err<T>(&self, expected: impl Into<String>) -> PResult<T> {
        Err(Diagnostic::error(self.here(), DiagKind::Unexpected { found: describe(self.peek()), expected: expected.into() }))
    }
    /// Counts one more operator, sign or bracket, failing once the line has too many.
    fn grow(&mut self) -> PResult<()> {
        self.size += 1;
        if self.size <= MAX_EXPR_SIZE {
            return Ok(());
        }
        Err(Diagnostic::error(
            self.here(),
            DiagKind::Invalid {
                what: format!(
                    "an expression too long or nested too deeply: more than {MAX_EXPR_SIZE} operators, signs and brackets in this line"
                ),
                expected: format!(
                    "at most {MAX_EXPR_SIZE} in one line (the limit keeps the checker's and the interpreter's recursion bounded); \
                     split it over several `condition` lines (all must hold), or keep a part in an attribute"
                ),
            },
        ))
    }
    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }
    fn expect_end(&self) -> PResult<()> {
        if self.at_end() { Ok(()) } else { self.err("end of line (one declaration per line)") }
    }
    fn peek_name(&self) -> Option<&'a str> {
        match self.peek().map(|t| &t.tok) {
            Some(Tok::Name(n)) => Some(n),
            _ => None,
        }
    }
    fn peek_op(&self, op: &str) -> bool {
        matches!(self.peek().map(|t| &t.tok), Some(Tok::Op(o)) if *o == op)
    }
    fn eat_op(&mut self, op: &str) -> bool {
        if self.peek_op(op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_op(&mut self, op: &str) -> PResult<Span> {
        let span = self.here();
        if self.eat_op(op) { Ok(span) } else { self.err(format!("`{op}`")) }
    }
    fn ident(&mut self, what: &str) -> PResult<Ident> {
        match self.peek() {
            Some(Token { tok: Tok::Name(n), span }) => {
                self.pos += 1;
                Ok(Ident { name: n.clone(), span: *span })
            }
            _ => self.err(what),
        }
    }
    fn keyword(&mut self, kw: &str) -> PResult<Span> {
        match self.peek() {
            Some(Token { tok: Tok::Name(n), span }) if n == kw => {
                self.pos += 1;
                Ok(*span)
            }
            _ => self.err(format!("`{kw}`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wgdl::lexer::lex;

    fn parse_expr(src: &str) -> Expr {
        let mut d = Vec::new();
        let toks = lex(&format!("condition x {src}"), &mut d);
        let f = parse(&toks, &mut d);
        assert!(d.is_empty(), "{d:?}");
        match &f.decls[0].kind {
            DeclKind::Condition { expr, .. } => expr.clone(),
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn thesis_precedence_examples() {
        assert_eq!(parse_expr("long 2 + long 5 * long 7").to_string(), "(long 2 + (long 5 * long 7))");
        assert_eq!(parse_expr("(long 2 + long 5) * long 7").to_string(), "((long 2 + long 5) * long 7)");
        // `/` binds tighter than `*` in the thesis's list.
        assert_eq!(parse_expr("a * b / c").to_string(), "(a * (b / c))");
        assert_eq!(parse_expr("a - b - c").to_string(), "((a - b) - c)");
        // `&&` binds looser than `||`.
        assert_eq!(parse_expr("a || b && c").to_string(), "((a || b) && c)");
        assert_eq!(parse_expr("x.y = x.y + long 1").to_string(), "(x.y = (x.y + long 1))");
        assert_eq!(parse_expr("global.coins > 1000 and not this.done").to_string(), "((global.coins > long 1000) && !(this.done))");
    }

    #[test]
    fn printed_expressions_parse_back_to_the_same_tree() {
        for src in ["long 2 + long 5 * long 7", "a.b.c >= -3 xor game.x.sum < 2.5", "!(a == b) || c != null", "x = (y - 1) / 2"] {
            let e = parse_expr(src);
            let again = parse_expr(&e.to_string());
            assert_eq!(e.to_string(), again.to_string(), "{src}");
        }
    }

    #[test]
    fn attribute_forms() {
        let mut d = Vec::new();
        let src = "attribute class building coinValue long 0\nattribute house name String none\nattribute poor_house name poor_house\nattribute tree fruit object:fruit null\nattribute coin1 coinValue 1\n";
        let f = parse(&lex(src, &mut d), &mut d);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(f.decls.len(), 5);
        match &f.decls[2].kind {
            DeclKind::Attribute { ty: None, value, .. } => assert_eq!(value.kind, ExprKind::Lit(Lit::Str("poor_house".into()))),
            k => panic!("{k:?}"),
        }
        match &f.decls[3].kind {
            DeclKind::Attribute { ty: Some((TypeExpr::Object(c), _)), value, .. } => {
                assert_eq!(c.name, "fruit");
                assert_eq!(value.kind, ExprKind::Lit(Lit::Null));
            }
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn bad_lines_are_reported_and_parsing_goes_on() {
        let mut d = Vec::new();
        let f = parse(&lex("clas x\nclass y\nattribute y a long 1.5\n", &mut d), &mut d);
        // The attribute keeps its declaration (value 0) so that uses of it do not cascade.
        assert_eq!(f.decls.len(), 2);
        assert!(matches!(d[0].kind, DiagKind::UnknownDeclaration { .. }));
        assert!(matches!(d[1].kind, DiagKind::BadLiteral { ty: "long", .. }));
    }

    #[test]
    fn the_smallest_long_is_a_literal_and_out_of_range_ones_are_named() {
        // i64::MIN reads as one literal, in an expression and after `long`.
        assert_eq!(parse_expr("x < -9223372036854775808").to_string(), "(x < long -9223372036854775808)");
        assert_eq!(parse_expr("x < long -9223372036854775808").to_string(), "(x < long -9223372036854775808)");
        // Negating it again is left to the runtime's overflow check, not folded (it would wrap).
        assert_eq!(parse_expr("- -9223372036854775808").to_string(), "-(long -9223372036854775808)");
        let mut d = Vec::new();
        parse(
            &lex("attribute y a long 9223372036854775808\nattribute y b long -9223372036854775809\nattribute y c double 1", &mut d),
            &mut d,
        );
        let texts: Vec<_> = d
            .iter()
            .map(|x| match &x.kind {
                DiagKind::BadLiteral { ty: "long", text, expected } => {
                    assert!(expected.contains("64 bits"), "{expected}");
                    text.clone()
                }
                k => panic!("{k:?}"),
            })
            .collect();
        assert_eq!(texts, ["9223372036854775808", "-9223372036854775809"]);
        let huge = format!("attribute y c double {}", "9".repeat(400));
        let mut d = Vec::new();
        parse(&lex(&huge, &mut d), &mut d);
        assert!(matches!(&d[0].kind, DiagKind::BadLiteral { ty: "double", text, .. } if text.chars().count() == 41), "{d:?}");
    }
}
