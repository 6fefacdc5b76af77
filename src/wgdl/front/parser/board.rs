//! Board lines (extension): the bindings `forEveryCell`, `forEveryStep` and `forEveryJump`, and
//! the declarations `pieces`, `start`, `forward`, `notation` and `byChance` (games/README.md §10). What the
//! names mean (a grid, a direction set, a player) is the compiler's to check.

use super::*;

impl LineParser<'_> {
    /// `forEveryCell <var> <grid>`, `forEveryStep <from> <to> <grid> <directions>` or
    /// `forEveryJump <from> <over> <to> <grid> <directions>`, the keyword not yet read.
    pub(super) fn board_binding(&mut self) -> PResult<(Binding, Ident)> {
        let word = self.ident("a binding")?;
        match word.name.as_str() {
            "forEveryCell" => {
                let var = self.ident("a name for the bound cell")?;
                let grid = self.ident("the grid whose cells are bound, as in `forEveryCell c board`")?;
                Ok((Binding::ForEveryCell(grid), var))
            }
            jump => {
                let jump = jump == "forEveryJump";
                let from = self.ident("a name for the cell a move starts from")?;
                let over = if jump { Some(self.ident("a name for the cell jumped over")?) } else { None };
                let to = self.ident("a name for the cell a move ends on")?;
                let grid = self.ident("the grid the move is made on")?;
                let dirs = self.ident("a direction set: orthogonal, diagonal, all, knight, hex, forward, forwardDiagonal, forwards, …")?;
                Ok((Binding::ForEveryStep { over, to, grid, dirs }, from))
            }
        }
    }

    /// A board declaration, its first word (`pieces`, `start`, `forward` or `notation`) read.
    pub(super) fn board_decl(&mut self, head: &Ident) -> PResult<DeclKind> {
        Ok(match head.name.as_str() {
            "pieces" => {
                let grid = self.ident("a grid name")?;
                let (chars, span) = self.quoted("quoted characters, one per cell value from 0, such as \".bw\"")?;
                DeclKind::Pieces { grid, chars, span }
            }
            "start" => {
                let grid = self.ident("a grid name")?;
                let (row, span) =
                    self.quoted("a quoted row of the start position, one `pieces` character per column, such as \"bbbbbbbb\"")?;
                DeclKind::Start { grid, row, span }
            }
            "byChance" => {
                let action = self.ident("the name of the action whose moves chance makes")?;
                let weight = if self.at_end() {
                    None
                } else {
                    self.keyword("weight")?;
                    Some(self.expr()?)
                };
                DeclKind::ByChance { action, weight }
            }
            "forward" => {
                let player = self.ident("a player name declared by `players`")?;
                let dir = self.ident("a direction: north, south, east, west, northEast, northWest, southEast or southWest")?;
                DeclKind::Forward { player, dir }
            }
            _ => {
                let action = self.ident("the name of the action whose moves this writes")?;
                let mut items = Vec::new();
                while !self.at_end() && self.peek_name() != Some("if") {
                    match self.peek().map(|t| (&t.tok, t.span)) {
                        Some((Tok::Quoted(s), _)) => {
                            items.push(NoteItem::Text(s.clone()));
                            self.pos += 1;
                        }
                        _ => items.push(NoteItem::Var(self.ident("a binding's name, quoted text, `if` or the end of the line")?)),
                    }
                }
                if items.is_empty() {
                    return self.err("what a move is written as: binding names and quoted text, such as `from to` or \"pass\"");
                }
                let cond = if self.peek_name() == Some("if") {
                    self.pos += 1;
                    Some(self.expr()?)
                } else {
                    None
                };
                DeclKind::Notation { action, items, cond }
            }
        })
    }

    /// A grid dimension: a whole number ≥ 1 or `<description>.<attribute>`.
    pub(super) fn dim(&mut self, expected: &str) -> PResult<Dim> {
        if self.peek_name().is_some() {
            let god = self.ident(expected)?;
            self.expect_op(".")?;
            let attr = self.ident("the parameter's attribute after `.`")?;
            return Ok(Dim::Param(god, attr));
        }
        Ok(Dim::Number(self.count(expected)?))
    }

    /// A quoted string and its span.
    fn quoted(&mut self, expected: &str) -> PResult<(String, Span)> {
        match self.peek().map(|t| (&t.tok, t.span)) {
            Some((Tok::Quoted(s), span)) => {
                let s = s.clone();
                self.pos += 1;
                Ok((s, span))
            }
            _ => self.err(expected),
        }
    }
}
