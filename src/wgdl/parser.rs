//! Parser: tokens → [`crate::wgdl::ast::File`]. Second stage (text → tokens → **AST** → checked model → program).
//!
//! The file is cut into lines; each line is one declaration chosen by its first word, as in the
//! thesis (Appendix B). Parsing never fails: a bad line becomes a diagnostic and the parser moves
//! on to the next line, so one run reports every problem.
//!
//! Expressions follow the thesis's precedence *exactly* (section 4.3), lowest first:
//! `= == != && || xor > >= < <= + - * /`, each operator on its own level, left-associative. The
//! operands and operators of an expression are read into a flat list first, then split at the
//! last operator of the lowest level present — the recursive split the spec recommends. One
//! consequence users must know (documented in games/README.md): `a * b / c` means `a * (b / c)`.
//! Unary `-` and `!`/`not` bind tightest.

use super::ast::*;
use super::diag::{DiagKind, Diagnostic, Span, clip};
use super::lexer::{Tok, Token};

const DECLS: &str = "class, object, attribute, action, condition, consequence, hasConsequence, initial, goal, game, \
actionGroup, isInGroup, duration, session, limit, players, turn, turnOrder, winner, draw, hexmap, hexOccupants, grid, chance, parameter, constraint, \
policy, policyOnly, choose, lastResort, unless";

pub fn parse(tokens: &[Token], diags: &mut Vec<Diagnostic>) -> File {
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
            diags.append(&mut p.recovered);
            match result {
                Ok(d) => decls.push(d),
                Err(d) => diags.push(d),
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

/// The most operators, signs and brackets one line may hold. It bounds the depth of the
/// expression tree, which every later stage walks recursively, so that no input can overflow the
/// stack (a hand-written expression has a few dozen at most).
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
                what: "an expression too long or nested too deeply".into(),
                expected: format!("at most {MAX_EXPR_SIZE} operators, signs and brackets in one line; split it with attributes"),
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

    fn decl(&mut self) -> PResult<Decl> {
        let overlay = match self.peek_name() {
            Some(w @ ("style" | "variant")) => {
                let kind = if w == "style" { OverlayKind::Style } else { OverlayKind::Variant };
                self.pos += 1;
                let negated = self.peek_name() == Some("not");
                if negated {
                    self.pos += 1;
                }
                let name = self.ident(&format!("the {w}'s name after `{w}`, then `:` and a declaration"))?;
                self.expect_op(":")?;
                if matches!(self.peek_name(), Some("style" | "variant")) {
                    return self.err("a declaration after the tag (one `style`/`variant` tag per line)");
                }
                Some(Overlay { kind, name, negated })
            }
            _ => None,
        };
        let head = self.ident(&format!("a declaration ({DECLS})"))?;
        let kind = match head.name.as_str() {
            "class" => {
                let name = self.ident("a class name")?;
                let parent = if self.eat_op(":") { Some(self.ident("the parent class name after `:`")?) } else { None };
                DeclKind::Class { name, parent }
            }
            "object" => {
                let name = self.ident("an object description name")?;
                self.keyword("is")?;
                let class = self.ident("a class name after `is`")?;
                DeclKind::Object { name, class }
            }
            "attribute" => self.attribute()?,
            "action" => self.action()?,
            "condition" => {
                let action = self.ident("the name of the action this condition belongs to")?;
                let expr = self.expr()?;
                DeclKind::Condition { action, expr }
            }
            "consequence" => self.consequence()?,
            "hasConsequence" => {
                let action = self.ident("an action name")?;
                let consequence = self.ident("a consequence name")?;
                DeclKind::HasConsequence { action, consequence }
            }
            "initial" => DeclKind::Initial { object: self.ident("an object description name")? },
            "goal" => {
                let k_span = self.here();
                let k = match self.peek().map(|t| &t.tok) {
                    Some(Tok::Number(n)) => n.parse::<u32>().ok().filter(|&k| k >= 1),
                    _ => None,
                };
                let Some(k) = k else { return self.err("a goal number 1, 2, 3, … after `goal`") };
                self.pos += 1;
                let expr = self.expr()?;
                DeclKind::Goal { k, k_span, expr }
            }
            "game" => {
                let name = self.ident("a game value name after `game`")?;
                let mut path = vec![self.path_segment()?];
                while self.eat_op(".") {
                    path.push(self.path_segment()?);
                }
                DeclKind::GameValue { name, path }
            }
            "actionGroup" => {
                let name = self.ident("an action group name")?;
                let w = self.number("a group probability such as 0.8")?;
                DeclKind::ActionGroup { name, weight: w }
            }
            "isInGroup" => {
                let group = self.ident("an action group name")?;
                let action = self.ident("an action name")?;
                DeclKind::IsInGroup { group, action }
            }
            "duration" => {
                // `duration act <expr>` names an action; `duration global.speed` is an expression.
                let action = match (self.peek_name(), self.peek_at(1)) {
                    // WGDL has no function calls: `name (` or `name -` starts the action's expression.
                    (Some(n), Some(next))
                        if !is_type_word(n)
                            && n != "game"
                            && n != "this"
                            && !matches!(next.tok, Tok::Op(o) if o != "(" && o != "-" && o != "!") =>
                    {
                        Some(self.ident("an action name")?)
                    }
                    _ => None,
                };
                DeclKind::Duration { action, expr: self.expr()? }
            }
            "session" => {
                let key = self.ident("`length` or `pause` after `session`")?;
                DeclKind::Session { key, expr: self.expr()? }
            }
            "limit" => {
                let key = self.ident("a limit name (ruleFirings, objects, timers, steps)")?;
                let span = self.here();
                let v = self.number("a whole number")?;
                if v < 1.0 || v.fract() != 0.0 {
                    return Err(Diagnostic::error(
                        span,
                        DiagKind::BadLiteral { ty: "limit", text: v.to_string(), expected: "a whole number ≥ 1" },
                    ));
                }
                DeclKind::Limit { key, value: v as u64 }
            }
            "players" => {
                let mut names = vec![self.ident("a player (side) name")?];
                while !self.at_end() {
                    names.push(self.ident("a player (side) name")?);
                }
                DeclKind::Players { names }
            }
            "turn" => {
                let class = self.ident("the class whose objects take turns")?;
                let side = self.ident("the attribute (long) giving each object's side: 0, 1, …")?;
                let cond = self.while_cond()?;
                DeclKind::Turn { class, side, cond }
            }
            "turnOrder" => DeclKind::TurnOrder { mode: self.ident("`grouped` or `alternating`")? },
            "winner" => {
                let player = self.ident("a player name declared by `players`")?;
                DeclKind::Outcome { player: Some(player), expr: self.one_arg("winner", "a condition after the player name")? }
            }
            "draw" => DeclKind::Outcome { player: None, expr: self.one_arg("draw", "a condition")? },
            "hexmap" => match self.peek().map(|t| (&t.tok, t.span)) {
                Some((Tok::Quoted(s), span)) => {
                    self.pos += 1;
                    DeclKind::HexMap { path: s.clone(), path_span: span }
                }
                _ => return self.err("a quoted map file name such as \"maps/arena5.hexmap\""),
            },
            "hexOccupants" => {
                let class = self.ident("the class whose objects stand on hexes")?;
                let pos = self.ident("the attribute (long) holding an object's hex cell")?;
                let side = self.ident("the attribute (long) holding an object's side")?;
                let cond = self.while_cond()?;
                DeclKind::HexOccupants { class, pos, side, cond }
            }
            "chance" => {
                DeclKind::Chance { mode: self.ident("`oracle` (searches see the real future draws) or `fair` (they draw their own)")? }
            }
            "grid" => {
                let name = self.ident("a grid name")?;
                let width = self.count("a grid width (a whole number ≥ 1)")?;
                let height = self.count("a grid height (a whole number ≥ 1)")?;
                DeclKind::Grid { name, width, height }
            }
            "parameter" => {
                let god = self.ident("an object description, as in `parameter red_mage.hp 1 100`")?;
                self.expect_op(".")?;
                let attr = self.ident("an attribute name after `.`")?;
                let min = self.signed_number("the smallest value")?;
                let max = self.signed_number("the largest value")?;
                DeclKind::Parameter { god, attr, min, max }
            }
            "policy" => {
                let name = self.ident("a policy name")?;
                let action = self.ident("an action name")?;
                let how = self.ident("how to pick: first, random, weight <expr> or max <expr>")?;
                let pick = match how.name.as_str() {
                    "first" => Pick::First,
                    "random" => Pick::Random,
                    "weight" => Pick::Weight(self.expr()?),
                    "max" => Pick::Max(self.expr()?),
                    _ => {
                        return Err(Diagnostic::error(
                            how.span,
                            DiagKind::Unexpected {
                                found: format!("`{}`", how.name),
                                expected: "how to pick: first, random, weight <expr> or max <expr>".into(),
                            },
                        ));
                    }
                };
                let cond = if self.peek_name() == Some("if") {
                    self.pos += 1;
                    Some(self.expr()?)
                } else {
                    None
                };
                DeclKind::Policy { name, action, pick, cond }
            }
            "constraint" => DeclKind::Constraint { expr: self.one_arg("constraint", "a condition")? },
            "policyOnly" => DeclKind::PolicyOnly { action: self.ident("an action name")? },
            "choose" => {
                let action = self.ident("an action name")?;
                let n = self.count("how many moves to keep (a whole number ≥ 1)")?;
                self.keyword("by")?;
                DeclKind::Choose { action, n, key: self.expr()? }
            }
            "lastResort" => {
                let action = self.ident("an action name")?;
                let span = self.here();
                let v = self.number("how many other moves may be legal (a whole number ≥ 0)")?;
                if v < 0.0 || v.fract() != 0.0 {
                    return Err(Diagnostic::error(
                        span,
                        DiagKind::BadLiteral { ty: "lastResort", text: v.to_string(), expected: "a whole number ≥ 0" },
                    ));
                }
                DeclKind::LastResort { action, n: v as u32 }
            }
            "unless" => {
                let action = self.ident("an action name")?;
                let other = self.ident("the action whose legal moves rule it out")?;
                DeclKind::Unless { action, other }
            }
            _ => {
                return Err(Diagnostic::error(head.span, DiagKind::UnknownDeclaration { found: head.name.clone(), expected: DECLS }));
            }
        };
        self.expect_end()?;
        Ok(Decl { kind, span: self.line_span(), overlay })
    }

    /// `while <condition>` at the end of a line, if present.
    fn while_cond(&mut self) -> PResult<Option<Expr>> {
        if self.at_end() {
            return Ok(None);
        }
        self.keyword("while")?;
        Ok(Some(self.expr()?))
    }

    /// A whole number ≥ 1.
    fn count(&mut self, expected: &str) -> PResult<u32> {
        let span = self.here();
        let v = self.number(expected)?;
        if v < 1.0 || v.fract() != 0.0 || v > u32::MAX as f64 {
            return Err(Diagnostic::error(span, DiagKind::BadLiteral { ty: "count", text: v.to_string(), expected: "a whole number ≥ 1" }));
        }
        Ok(v as u32)
    }

    /// A number with an optional `-`.
    fn signed_number(&mut self, expected: &str) -> PResult<f64> {
        let neg = self.eat_op("-");
        let v = self.number(expected)?;
        Ok(if neg { -v } else { v })
    }

    fn number(&mut self, expected: &str) -> PResult<f64> {
        let neg = self.eat_op("-");
        match self.peek() {
            Some(Token { tok: Tok::Number(n), span }) => {
                let v = double_literal(n, *span)?;
                self.pos += 1;
                Ok(if neg { -v } else { v })
            }
            _ => self.err(expected),
        }
    }

    /// A store path segment in a `game` definition: a bare name, `String word` or "quoted".
    fn path_segment(&mut self) -> PResult<Ident> {
        if let Some(n) = self.peek_name()
            && type_word(n) == Some("string")
        {
            self.pos += 1;
        }
        match self.peek() {
            Some(Token { tok: Tok::Name(n) | Tok::Number(n) | Tok::Quoted(n), span }) => {
                self.pos += 1;
                Ok(Ident { name: n.clone(), span: *span })
            }
            _ => self.err("a game value path segment (a name)"),
        }
    }

    fn type_expr(&mut self) -> PResult<(TypeExpr, Span)> {
        let id = self.ident("a type: long, double, boolean, string or object:<Class>")?;
        let t = match type_word(&id.name).unwrap_or(id.name.as_str()) {
            "long" => TypeExpr::Long,
            "double" => TypeExpr::Double,
            "boolean" => TypeExpr::Boolean,
            "string" => TypeExpr::String,
            "object" => {
                self.expect_op(":")?;
                let c = self.ident("a class name after `object:`")?;
                let span = id.span.to(c.span);
                return Ok((TypeExpr::Object(c), span));
            }
            _ => {
                return Err(Diagnostic::error(
                    id.span,
                    DiagKind::Unexpected {
                        found: format!("`{}`", id.name),
                        expected: "a type: long, double, boolean, string or object:<Class>".into(),
                    },
                ));
            }
        };
        Ok((t, id.span))
    }

    fn attribute(&mut self) -> PResult<DeclKind> {
        let mut constant = false;
        if self.peek_name() == Some("class") {
            self.pos += 1;
            constant = true;
        }
        let target = self.ident("a class or object description name")?;
        let name = self.ident("an attribute name")?;
        // Typed form: `attribute C name <type> <value>`; per-object form: `attribute o name <value>`.
        let typed = match (self.peek_name(), self.peek_at(1)) {
            (Some("object"), Some(Token { tok: Tok::Op(":"), .. })) => {
                // `object:Class null` is a type; `object:o` alone is an object-reference value.
                self.peek_at(3).is_some()
            }
            (Some(n), Some(_)) => is_type_word(n),
            _ => false,
        };
        if constant && !typed {
            return self.err("a type and a value: `attribute class <Class> <name> <type> <value>`");
        }
        let ty = if typed { Some(self.type_expr()?) } else { None };
        let value = match (self.attr_value(ty.as_ref().map(|t| &t.0)), &ty) {
            (Ok(v), _) => v,
            // The type is known, so the attribute is declared; only its value is wrong.
            (Err(d), Some((t, tspan))) => {
                self.recovered.push(d);
                self.pos = self.toks.len();
                let lit = match t {
                    TypeExpr::Long => Lit::Long(0),
                    TypeExpr::Double => Lit::Double(0.0),
                    TypeExpr::Boolean => Lit::Bool(false),
                    TypeExpr::String => Lit::Str(String::new()),
                    TypeExpr::Object(_) => Lit::Null,
                };
                Expr { kind: ExprKind::Lit(lit), span: *tspan }
            }
            (Err(d), None) => return Err(d),
        };
        Ok(DeclKind::Attribute { constant, target, name, ty, value })
    }

    /// An attribute's value: after a type the thesis writes a bare value (`String none`,
    /// `long 0`); a per-object override writes it bare too (`attribute coin1 coinValue 1`).
    fn attr_value(&mut self, ty: Option<&TypeExpr>) -> PResult<Expr> {
        let start = self.here();
        match ty {
            Some(TypeExpr::String) => self.string_word(start),
            Some(TypeExpr::Long) => self.typed_number(start, "long"),
            Some(TypeExpr::Double) => self.typed_number(start, "double"),
            Some(TypeExpr::Boolean) => self.bool_word(start),
            Some(TypeExpr::Object(_)) | None => {
                // A bare name in a per-object override is a string (`attribute poor_house name poor_house`).
                if let Some(Token { tok: Tok::Name(n), span }) = self.peek()
                    && !matches!(self.peek_at(1).map(|t| &t.tok), Some(Tok::Op(_)))
                    && !is_type_word(n)
                    && !matches!(n.to_ascii_lowercase().as_str(), "true" | "false" | "null")
                    && n != "object"
                {
                    self.pos += 1;
                    return Ok(Expr { kind: ExprKind::Lit(Lit::Str(n.clone())), span: *span });
                }
                self.expr()
            }
        }
    }

    fn string_word(&mut self, start: Span) -> PResult<Expr> {
        match self.peek() {
            Some(Token { tok: Tok::Name(s) | Tok::Number(s) | Tok::Quoted(s), span }) => {
                self.pos += 1;
                Ok(Expr { kind: ExprKind::Lit(Lit::Str(s.clone())), span: start.to(*span) })
            }
            _ => self.err("a string value (a word or \"quoted text\")"),
        }
    }

    fn typed_number(&mut self, start: Span, ty: &'static str) -> PResult<Expr> {
        let neg = self.eat_op("-");
        match self.peek() {
            Some(Token { tok: Tok::Number(n), span }) => {
                self.pos += 1;
                let span = start.to(*span);
                let lit = if ty == "long" {
                    if n.contains('.') {
                        return Err(Diagnostic::error(
                            span,
                            DiagKind::BadLiteral { ty, text: n.clone(), expected: "a whole number without a fraction" },
                        ));
                    }
                    Lit::Long(long_literal(n, neg, span)?)
                } else {
                    let v = double_literal(n, span)?;
                    Lit::Double(if neg { -v } else { v })
                };
                Ok(Expr { kind: ExprKind::Lit(lit), span })
            }
            Some(t) => Err(Diagnostic::error(
                t.span,
                DiagKind::BadLiteral {
                    ty,
                    text: describe(Some(t)).trim_matches('`').to_string(),
                    expected: if ty == "long" { "a whole number such as 30" } else { "a number such as 0.5" },
                },
            )),
            None => self.err(format!("a {ty} value")),
        }
    }

    fn bool_word(&mut self, start: Span) -> PResult<Expr> {
        if let Some(Token { tok: Tok::Name(n), span }) = self.peek() {
            let v = match n.to_ascii_lowercase().as_str() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            };
            if let Some(v) = v {
                self.pos += 1;
                return Ok(Expr { kind: ExprKind::Lit(Lit::Bool(v)), span: start.to(*span) });
            }
            return Err(Diagnostic::error(
                *span,
                DiagKind::BadLiteral { ty: "boolean", text: n.clone(), expected: "true or false (TRUE/FALSE)" },
            ));
        }
        self.err("true or false")
    }

    fn action(&mut self) -> PResult<DeclKind> {
        // `action create:Class name`
        if self.peek_name() == Some("create") && self.peek_at(1).is_some_and(|t| t.tok == Tok::Op(":")) {
            self.pos += 2;
            let class = self.ident("a class name after `create:`")?;
            let name = self.ident("an action name")?;
            return Ok(DeclKind::Action { name, kind: ActionKind::OnCreate { class } });
        }
        // `action round:Class name [forEveryInstance B]`
        if self.peek_name() == Some("round") && self.peek_at(1).is_some_and(|t| t.tok == Tok::Op(":")) {
            self.pos += 2;
            let class = self.ident("a class name after `round:`")?;
            let name = self.ident("an action name")?;
            let binding = self.binding()?;
            return Ok(DeclKind::Action { name, kind: ActionKind::OnRound { class, binding } });
        }
        let first = self.ident("an action name, or a class name followed by the action name")?;
        if self.at_end() {
            return Ok(DeclKind::Action { name: first, kind: ActionKind::Rule });
        }
        let name = self.ident("an action name")?;
        let binding = self.binding()?;
        Ok(DeclKind::Action { name, kind: ActionKind::Player { class: first, binding } })
    }

    /// An action's optional binding: `forEveryInstance C`, `forEveryGOD C`,
    /// `forEveryNumber v lo hi`, `forEveryHex v`.
    fn binding(&mut self) -> PResult<Option<(Binding, Ident)>> {
        const EXPECTED: &str =
            "`forEveryInstance <Class>`, `forEveryGOD <Class>`, `forEveryNumber <name> <from> <to>`, `forEveryHex <name>` or end of line";
        if self.at_end() {
            return Ok(None);
        }
        let b = match self.peek_name() {
            Some("forEveryInstance") => Binding::ForEveryInstance,
            Some("forEveryGOD") => Binding::ForEveryGod,
            Some("forEveryNumber") => Binding::ForEveryNumber(0, 0),
            Some("forEveryHex") => Binding::ForEveryHex,
            _ => return self.err(EXPECTED),
        };
        self.pos += 1;
        Ok(Some(match b {
            Binding::ForEveryNumber(..) => {
                let var = self.ident("a name for the bound number")?;
                let span = self.here();
                let lo = self.signed_number("the first number")?;
                let hi = self.signed_number("the last number")?;
                if lo.fract() != 0.0 || hi.fract() != 0.0 || lo < 0.0 || hi < lo || hi > 1e6 {
                    return Err(Diagnostic::error(
                        span,
                        DiagKind::BadLiteral {
                            ty: "forEveryNumber",
                            text: format!("{lo} {hi}"),
                            expected: "two whole numbers 0 ≤ from ≤ to ≤ 1000000",
                        },
                    ));
                }
                (Binding::ForEveryNumber(lo as i64, hi as i64), var)
            }
            Binding::ForEveryHex => (b, self.ident("a name for the bound hex cell")?),
            _ => (b, self.ident("a class name to bind")?),
        }))
    }

    fn consequence(&mut self) -> PResult<DeclKind> {
        let name = self.ident("a consequence name")?;
        // Once the name is read the consequence is declared, even if its body is broken.
        let body = match self.consequence_body() {
            Ok(b) => b,
            Err(d) => {
                self.recovered.push(d);
                self.pos = self.toks.len();
                ConsBody::Error
            }
        };
        Ok(DeclKind::Consequence { name, body })
    }

    /// A wrong number of arguments, pointing at the first extra one or at the end of the line.
    fn arity<T>(&self, what: &str, want: usize, expected: &str, args: &[Expr]) -> PResult<T> {
        let span = match args.get(want) {
            Some(extra) => extra.span,
            None => self.here(),
        };
        Err(Diagnostic::error(span, DiagKind::WrongArity { what: what.into(), expected: expected.into(), found: args.len() }))
    }

    /// One expression argument, or a [`DiagKind::WrongArity`] if there is none.
    fn one_arg(&mut self, what: &str, expected: &str) -> PResult<Expr> {
        if self.at_end() {
            return self.arity(what, 1, expected, &[]);
        }
        self.expr()
    }

    fn consequence_body(&mut self) -> PResult<ConsBody> {
        let kind = self.ident(
            "a consequence kind: direct, conditional, timed, create, createAndAssign, game increase, delete, endSession, endTurn or do",
        )?;
        let body = match kind.name.as_str() {
            "direct" => ConsBody::Direct(self.one_arg("direct", "1 argument: `direct <attribute> = <expression>`")?),
            "create" => ConsBody::Create(self.one_arg("create", "1 argument: `create <object description or class>`")?),
            "createAndAssign" => {
                const EXPECTED: &str = "2 arguments: `createAndAssign <object description or class> <attribute>`";
                let mut args = Vec::new();
                while !self.at_end() {
                    args.push(self.expr()?);
                }
                if args.len() != 2 {
                    return self.arity("createAndAssign", 2, EXPECTED, &args);
                }
                let place = args.pop().expect("two arguments");
                ConsBody::CreateAndAssign(args.pop().expect("two arguments"), place)
            }
            "conditional" => {
                let c = self.expr()?;
                ConsBody::Conditional(c, self.ident("the name of the consequence to apply when the condition holds")?)
            }
            "timed" => {
                let c = self.expr()?;
                ConsBody::Timed(c, self.ident("the name of the consequence to apply when the time has passed")?)
            }
            "game" => {
                self.keyword("increase")?;
                if self.at_end() || self.peek_name() == Some("by") {
                    return self.arity(
                        "game increase",
                        1,
                        "at least 1 argument: `game increase String building, String built, this.name`",
                        &[],
                    );
                }
                let mut path = vec![self.expr()?];
                while self.eat_op(",") {
                    path.push(self.expr()?);
                }
                let by = if self.peek_name() == Some("by") {
                    self.pos += 1;
                    Some(self.expr()?)
                } else {
                    None
                };
                ConsBody::GameIncrease { path, by }
            }
            "delete" => ConsBody::Delete(self.one_arg("delete", "1 argument: `delete <object>`")?),
            "endSession" => ConsBody::EndSession,
            "endTurn" => ConsBody::EndTurn,
            "do" => ConsBody::Do(self.one_arg("do", "1 argument: `do <grid>.<operation>(…)`")?),
            _ => {
                return Err(Diagnostic::error(
                    kind.span,
                    DiagKind::Unexpected {
                        found: format!("`{}`", kind.name),
                        expected:
                            "a consequence kind: direct, conditional, timed, create, createAndAssign, game increase, delete, endSession, endTurn or do"
                                .into(),
                    },
                ));
            }
        };
        Ok(body)
    }

    // ---- expressions ----

    /// Reads operands and operators until something that cannot continue the expression.
    pub fn expr(&mut self) -> PResult<Expr> {
        let mut operands = vec![self.unary()?];
        let mut ops = Vec::new();
        while let Some(op) = self.peek_binop() {
            self.grow()?;
            self.pos += 1;
            ops.push(op);
            operands.push(self.unary()?);
        }
        Ok(build(&mut operands.into_iter().map(Some).collect::<Vec<_>>(), &ops))
    }

    fn peek_binop(&self) -> Option<BinOp> {
        Some(match &self.peek()?.tok {
            Tok::Op("=") => BinOp::Assign,
            Tok::Op("==") => BinOp::Eq,
            Tok::Op("!=") => BinOp::Ne,
            Tok::Op("&&") => BinOp::And,
            Tok::Op("||") => BinOp::Or,
            Tok::Op(">") => BinOp::Gt,
            Tok::Op(">=") => BinOp::Ge,
            Tok::Op("<") => BinOp::Lt,
            Tok::Op("<=") => BinOp::Le,
            Tok::Op("+") => BinOp::Add,
            Tok::Op("-") => BinOp::Sub,
            Tok::Op("*") => BinOp::Mul,
            Tok::Op("/") => BinOp::Div,
            Tok::Name(n) if n == "and" => BinOp::And,
            Tok::Name(n) if n == "or" => BinOp::Or,
            Tok::Name(n) if n == "xor" => BinOp::Xor,
            _ => return None,
        })
    }

    fn unary(&mut self) -> PResult<Expr> {
        let start = self.here();
        if self.peek_op("-") || self.peek_op("!") || self.peek_name() == Some("not") {
            self.grow()?;
        }
        if self.eat_op("-") {
            // `-9223372036854775808` (i64::MIN) is one literal: its digits alone do not fit.
            if let Some(Token { tok: Tok::Number(n), span }) = self.peek()
                && !n.contains('.')
            {
                let (n, span) = (n.clone(), start.to(*span));
                self.pos += 1;
                let v = long_literal(&n, true, span)?;
                let e = Expr { kind: ExprKind::Lit(Lit::Long(v)), span };
                return Ok(e);
            }
            let e = self.unary()?;
            // Fold `-5` into a literal so that `long -1` and `-1` read the same.
            let span = start.to(e.span);
            return Ok(match e.kind {
                ExprKind::Lit(Lit::Long(v)) => match v.checked_neg() {
                    Some(v) => Expr { kind: ExprKind::Lit(Lit::Long(v)), span },
                    None => {
                        Expr { kind: ExprKind::Unary(UnOp::Neg, Box::new(Expr { kind: ExprKind::Lit(Lit::Long(v)), span: e.span })), span }
                    }
                },
                ExprKind::Lit(Lit::Double(v)) => Expr { kind: ExprKind::Lit(Lit::Double(-v)), span },
                _ => Expr { kind: ExprKind::Unary(UnOp::Neg, Box::new(e)), span },
            });
        }
        if self.eat_op("!")
            || (self.peek_name() == Some("not") && {
                self.pos += 1;
                true
            })
        {
            let e = self.unary()?;
            let span = start.to(e.span);
            return Ok(Expr { kind: ExprKind::Unary(UnOp::Not, Box::new(e)), span });
        }
        self.primary()
    }

    fn primary(&mut self) -> PResult<Expr> {
        let start = self.here();
        let Some(t) = self.peek() else {
            return self.err("an expression (a value, an attribute path such as this.coins, or `(`)");
        };
        match &t.tok {
            Tok::Op("(") => {
                self.grow()?;
                self.brackets += 1;
                if self.brackets > MAX_BRACKETS {
                    return Err(Diagnostic::error(
                        t.span,
                        DiagKind::Invalid {
                            what: format!("brackets nested more than {MAX_BRACKETS} deep"),
                            expected: format!("at most {MAX_BRACKETS} brackets open at once"),
                        },
                    ));
                }
                self.pos += 1;
                let mut e = self.expr()?;
                let close = self.expect_op(")")?;
                self.brackets -= 1;
                e.span = start.to(close);
                Ok(e)
            }
            Tok::Number(n) => {
                self.pos += 1;
                let lit =
                    if n.contains('.') { Lit::Double(double_literal(n, t.span)?) } else { Lit::Long(long_literal(n, false, t.span)?) };
                Ok(Expr { kind: ExprKind::Lit(lit), span: t.span })
            }
            Tok::Quoted(s) => {
                self.pos += 1;
                Ok(Expr { kind: ExprKind::Lit(Lit::Str(s.clone())), span: t.span })
            }
            Tok::Name(n) => {
                let n = n.clone();
                match type_word(&n).unwrap_or(n.as_str()) {
                    "long" | "double" => {
                        self.pos += 1;
                        self.typed_number(start, if n.eq_ignore_ascii_case("long") { "long" } else { "double" })
                    }
                    "boolean" => {
                        self.pos += 1;
                        self.bool_word(start)
                    }
                    "string" => {
                        self.pos += 1;
                        self.string_word(start)
                    }
                    _ if n.eq_ignore_ascii_case("true") => {
                        self.pos += 1;
                        Ok(Expr { kind: ExprKind::Lit(Lit::Bool(true)), span: t.span })
                    }
                    _ if n.eq_ignore_ascii_case("false") => {
                        self.pos += 1;
                        Ok(Expr { kind: ExprKind::Lit(Lit::Bool(false)), span: t.span })
                    }
                    "null" => {
                        self.pos += 1;
                        Ok(Expr { kind: ExprKind::Lit(Lit::Null), span: t.span })
                    }
                    "object" if self.peek_at(1).is_some_and(|t| t.tok == Tok::Op(":")) => {
                        self.pos += 2;
                        let name = self.ident("an object description name after `object:`")?;
                        Ok(Expr { span: start.to(name.span), kind: ExprKind::ObjRef(name) })
                    }
                    _ => {
                        self.pos += 1;
                        let mut path = vec![Ident { name: n.clone(), span: t.span }];
                        while self.eat_op(".") {
                            path.push(self.ident("an attribute name after `.`")?);
                        }
                        let span = start.to(path.last().map_or(start, |i| i.span));
                        if self.peek_op("(") && n != "game" {
                            return self.call(path, start);
                        }
                        if self.peek_op("[") && path.len() == 1 {
                            self.grow()?;
                            self.pos += 1;
                            let x = self.expr()?;
                            self.expect_op(",")?;
                            let y = self.expr()?;
                            let close = self.expect_op("]")?;
                            let g = path.pop().expect("one name");
                            return Ok(Expr { kind: ExprKind::Index(g, Box::new(x), Box::new(y)), span: start.to(close) });
                        }
                        if n == "game" {
                            if path.len() < 2 {
                                return self.err("`.` and a game value name after `game`");
                            }
                            path.remove(0);
                            return Ok(Expr { kind: ExprKind::GameValue(path), span });
                        }
                        Ok(Expr { kind: ExprKind::Path(path), span })
                    }
                }
            }
            _ => self.err("an expression (a value, an attribute path such as this.coins, or `(`)"),
        }
    }
}

impl LineParser<'_> {
    /// `name(args)` after the name: a built-in function call (extension).
    fn call(&mut self, name: Vec<Ident>, start: Span) -> PResult<Expr> {
        self.grow()?;
        self.brackets += 1;
        if self.brackets > MAX_BRACKETS {
            return self.err(format!("at most {MAX_BRACKETS} brackets open at once"));
        }
        self.pos += 1;
        let mut args = Vec::new();
        if !self.peek_op(")") {
            args.push(self.expr()?);
            while self.eat_op(",") {
                args.push(self.expr()?);
            }
        }
        let close = self.expect_op(")")?;
        self.brackets -= 1;
        Ok(Expr { kind: ExprKind::Call(name, args), span: start.to(close) })
    }
}

/// Builds the tree by splitting at the last operator of the lowest precedence level present.
fn build(operands: &mut [Option<Expr>], ops: &[BinOp]) -> Expr {
    if ops.is_empty() {
        return operands[0].take().expect("each operand is used once");
    }
    let lowest = ops.iter().map(|o| o.level()).min().expect("non-empty");
    // Assignment is right-associative (split at the first); everything else left (the last).
    let at = if lowest == BinOp::Assign.level() {
        ops.iter().position(|o| o.level() == lowest)
    } else {
        ops.iter().rposition(|o| o.level() == lowest)
    }
    .expect("lowest level is present");
    let (lo, hi) = operands.split_at_mut(at + 1);
    let l = build(lo, &ops[..at]);
    let r = build(hi, &ops[at + 1..]);
    Expr { span: l.span.to(r.span), kind: ExprKind::Binary(ops[at], Box::new(l), Box::new(r)) }
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
