//! Declarations: one line of WGDL read into a [`Decl`] — classes, objects, attributes with
//! their typed values, actions with bindings, consequence bodies, conditions, goals, game values
//! and the extension keywords, each with the span of every name.

use super::*;

impl LineParser<'_> {
    pub(super) fn decl(&mut self) -> PResult<Decl> {
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
                let mut consequences = vec![self.ident("a consequence name")?];
                while !self.at_end() {
                    consequences.push(self.ident("another consequence name or the end of the line")?);
                }
                DeclKind::HasConsequence { action, consequences }
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
                let width = self.dim("a grid width (a whole number ≥ 1, or a parameter such as `size.n`)")?;
                let height = self.dim("a grid height (a whole number ≥ 1, or a parameter such as `size.n`)")?;
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
                let mut others = vec![self.ident("the action whose legal moves rule it out")?];
                while !self.at_end() {
                    others.push(self.ident("another action whose legal moves rule it out, or end of line")?);
                }
                DeclKind::Unless { action, others }
            }
            "view" => {
                let target = self.ident("a class or grid name")?;
                let how = self.ident("a view hint: label, bar, glyph, glyphs, colour, hex or hide")?;
                let quoted = |me: &mut Self, what: &str| match me.peek().map(|t| (&t.tok, t.span)) {
                    Some((Tok::Quoted(s), span)) => {
                        let s = s.clone();
                        me.pos += 1;
                        Ok((s, span))
                    }
                    _ => me.err(what),
                };
                let hint = match how.name.as_str() {
                    "label" => ViewHint::Label(self.ident("the attribute that names an object")?),
                    "bar" => {
                        let attr = self.ident("the attribute drawn as a bar")?;
                        let max = match self.peek().map(|t| &t.tok) {
                            Some(Tok::Number(_)) => BarMax::Number(self.number("the bar's full value")?),
                            _ => BarMax::Attr(self.ident("the bar's full value: a number or an attribute name")?),
                        };
                        ViewHint::Bar { attr, max }
                    }
                    "glyph" => {
                        let (s, span) = quoted(self, "a quoted glyph such as \"M\"")?;
                        ViewHint::Glyph(s, span)
                    }
                    "glyphs" => {
                        let (s, span) = quoted(self, "quoted characters, one per tile value from 0, such as \".XO\"")?;
                        ViewHint::Glyphs(s, span)
                    }
                    "colour" | "color" => {
                        let (s, span) = quoted(self, "a quoted colour such as \"#c0392b\" (a grid: one per value from 0)")?;
                        ViewHint::Colour(s, span)
                    }
                    "hide" => ViewHint::Hide,
                    "hex" => ViewHint::Hex,
                    _ => {
                        return Err(Diagnostic::error(
                            how.span,
                            DiagKind::Unexpected {
                                found: format!("`{}`", how.name),
                                expected: "a view hint: label, bar, glyph, glyphs, colour, hex or hide".into(),
                            },
                        ));
                    }
                };
                DeclKind::View { target, hint }
            }
            "pieces" | "start" | "forward" | "notation" | "byChance" => self.board_decl(&head)?,
            _ => {
                return Err(Diagnostic::error(head.span, DiagKind::UnknownDeclaration { found: head.name.clone(), expected: DECLS }));
            }
        };
        self.expect_end()?;
        Ok(Decl { kind, span: self.line_span(), overlay })
    }

    /// `while <condition>` at the end of a line, if present.
    pub(super) fn while_cond(&mut self) -> PResult<Option<Expr>> {
        if self.at_end() {
            return Ok(None);
        }
        self.keyword("while")?;
        Ok(Some(self.expr()?))
    }

    /// A whole number ≥ 1.
    pub(super) fn count(&mut self, expected: &str) -> PResult<u32> {
        let span = self.here();
        let v = self.number(expected)?;
        if v < 1.0 || v.fract() != 0.0 || v > u32::MAX as f64 {
            return Err(Diagnostic::error(span, DiagKind::BadLiteral { ty: "count", text: v.to_string(), expected: "a whole number ≥ 1" }));
        }
        Ok(v as u32)
    }

    /// A number with an optional `-`.
    pub(super) fn signed_number(&mut self, expected: &str) -> PResult<f64> {
        let neg = self.eat_op("-");
        let v = self.number(expected)?;
        Ok(if neg { -v } else { v })
    }

    pub(super) fn number(&mut self, expected: &str) -> PResult<f64> {
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
    pub(super) fn path_segment(&mut self) -> PResult<Ident> {
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

    pub(super) fn type_expr(&mut self) -> PResult<(TypeExpr, Span)> {
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

    pub(super) fn attribute(&mut self) -> PResult<DeclKind> {
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
    pub(super) fn attr_value(&mut self, ty: Option<&TypeExpr>) -> PResult<Expr> {
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

    pub(super) fn string_word(&mut self, start: Span) -> PResult<Expr> {
        match self.peek() {
            Some(Token { tok: Tok::Name(s) | Tok::Number(s) | Tok::Quoted(s), span }) => {
                self.pos += 1;
                Ok(Expr { kind: ExprKind::Lit(Lit::Str(s.clone())), span: start.to(*span) })
            }
            _ => self.err("a string value (a word or \"quoted text\")"),
        }
    }

    pub(super) fn typed_number(&mut self, start: Span, ty: &'static str) -> PResult<Expr> {
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

    pub(super) fn bool_word(&mut self, start: Span) -> PResult<Expr> {
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

    pub(super) fn action(&mut self) -> PResult<DeclKind> {
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
        // `action rule1 forEveryNumber k 0 3`: a binding on a rule (a binding word followed by
        // more), which would otherwise read as an action named `forEveryNumber` of class `rule1`
        // and fail at `k` with a misleading "unexpected `k`".
        if let Some(word) = self.peek_name().filter(|w| BINDING_WORDS.contains(w))
            && self.peek_at(1).is_some()
        {
            return Err(Diagnostic::error(
                self.here(),
                DiagKind::Invalid {
                    what: format!(
                        "`{word}` after rule `{}`: a rule (an action without a class) runs by itself after every move, once and for no object, so it cannot bind",
                        first.name
                    ),
                    expected: "a binding on a player action (`action <Class> <name> forEvery…`), or an aggregate inside the rule's \
                               condition (`board.any(c, <condition>)`, `board.countCells(c, <condition>)`, `countOf(<Class>, <condition>)`)"
                        .into(),
                },
            ));
        }
        let name = self.ident("an action name")?;
        let binding = self.binding()?;
        Ok(DeclKind::Action { name, kind: ActionKind::Player { class: first, binding } })
    }

    /// An action's optional binding: `forEveryInstance C`, `forEveryGOD C`,
    /// `forEveryNumber v lo hi`, `forEveryHex v`, or a board's (`parser/board.rs`).
    pub(super) fn binding(&mut self) -> PResult<Option<(Binding, Ident)>> {
        const EXPECTED: &str = "`forEveryInstance <Class>`, `forEveryGOD <Class>`, `forEveryNumber <name> <from> <to>`, `forEveryHex <name>`, \
             `forEveryCell <name> <grid>`, `forEveryStep <from> <to> <grid> <directions>`, \
             `forEveryJump <from> <over> <to> <grid> <directions>` or end of line";
        if self.at_end() {
            return Ok(None);
        }
        let b = match self.peek_name() {
            Some("forEveryInstance") => Binding::ForEveryInstance,
            Some("forEveryGOD") => Binding::ForEveryGod,
            Some("forEveryNumber") => Binding::ForEveryNumber(0, 0),
            Some("forEveryHex") => Binding::ForEveryHex,
            Some("forEveryCell" | "forEveryStep" | "forEveryJump") => return self.board_binding().map(Some),
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

    pub(super) fn consequence(&mut self) -> PResult<DeclKind> {
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
    pub(super) fn arity<T>(&self, what: &str, want: usize, expected: &str, args: &[Expr]) -> PResult<T> {
        let span = match args.get(want) {
            Some(extra) => extra.span,
            None => self.here(),
        };
        Err(Diagnostic::error(span, DiagKind::WrongArity { what: what.into(), expected: expected.into(), found: args.len() }))
    }

    /// One expression argument, or a [`DiagKind::WrongArity`] if there is none.
    pub(super) fn one_arg(&mut self, what: &str, expected: &str) -> PResult<Expr> {
        if self.at_end() {
            return self.arity(what, 1, expected, &[]);
        }
        self.expr()
    }

    pub(super) fn consequence_body(&mut self) -> PResult<ConsBody> {
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
                let mut targets = vec![self.ident("the name of the consequence to apply when the condition holds")?];
                while !self.at_end() {
                    targets.push(self.ident("another consequence to apply, or the end of the line")?);
                }
                ConsBody::Conditional(c, targets)
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
}

/// The words that open an action's binding ([`LineParser::binding`]).
const BINDING_WORDS: [&str; 7] =
    ["forEveryInstance", "forEveryGOD", "forEveryNumber", "forEveryHex", "forEveryCell", "forEveryStep", "forEveryJump"];
