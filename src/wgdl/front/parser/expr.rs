//! Expressions: operands and binary operators read flat, then built into a tree by precedence
//! ([`build`]); unary operators, primaries, paths and built-in calls, each bounded in size and
//! bracket depth so that no input overflows the stack.

use super::*;

impl LineParser<'_> {
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

    pub(super) fn peek_binop(&self) -> Option<BinOp> {
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
            Tok::Op("%") => BinOp::Mod,
            Tok::Name(n) if n == "and" => BinOp::And,
            Tok::Name(n) if n == "or" => BinOp::Or,
            Tok::Name(n) if n == "xor" => BinOp::Xor,
            _ => return None,
        })
    }

    pub(super) fn unary(&mut self) -> PResult<Expr> {
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

    pub(super) fn primary(&mut self) -> PResult<Expr> {
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
                            // `board[c]`: a cell by its number; `board[x, y]`: by its coordinates.
                            let y = if self.eat_op(",") { Some(Box::new(self.expr()?)) } else { None };
                            let close = self.expect_op("]")?;
                            let g = path.pop().expect("one name");
                            return Ok(Expr { kind: ExprKind::Index(g, Box::new(x), y), span: start.to(close) });
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
    pub(super) fn call(&mut self, name: Vec<Ident>, start: Span) -> PResult<Expr> {
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
pub(super) fn build(operands: &mut [Option<Expr>], ops: &[BinOp]) -> Expr {
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
