//! Lexer: WGDL text → tokens with spans. First stage of the pipeline
//! (text → **tokens** → AST → checked model → program).
//!
//! WGDL is line-oriented, so a newline is a token ([`Tok::Newline`]) that ends a declaration.
//! `//` comments run to the end of the line; `/* */` comments may span lines and count as one
//! newline if they contain one. Keywords are not reserved here — `long`, `and`, `forEveryGOD` are
//! plain names and the parser gives them meaning by position, as the thesis's keyword-first
//! grammar does. The lexer never fails: a bad character becomes a diagnostic and is skipped.

use crate::wgdl::diag::{Cap, DiagKind, Diagnostic, Span};

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Name(String),
    /// Digits with an optional fraction, as written (no sign).
    Number(String),
    /// A double-quoted string (an extension; the thesis writes `String word`).
    Quoted(String),
    Op(&'static str),
    Newline,
    Eof,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

const OPS: [&str; 22] =
    ["==", "!=", "<=", ">=", "&&", "||", "=", "<", ">", "!", "+", "-", "*", "/", "%", "(", ")", ".", ",", ":", "[", "]"];

pub fn lex(src: &str, diags: &mut Vec<Diagnostic>) -> Vec<Token> {
    lex_capped(src, diags, &mut Cap::after(diags))
}

/// [`lex`], keeping at most [`crate::wgdl::diag::MAX_SHOWN`] errors (`cap` counts the rest).
pub fn lex_capped(src: &str, diags: &mut Vec<Diagnostic>, cap: &mut Cap) -> Vec<Token> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => {
                out.push(Token { tok: Tok::Newline, span: Span::new(i, i + 1) });
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let start = i;
                i += 2;
                let mut saw_newline = false;
                loop {
                    if i + 1 >= bytes.len() {
                        cap.push(diags, Diagnostic::error(Span::new(start, start + 2), DiagKind::UnterminatedComment), false);
                        i = bytes.len();
                        break;
                    }
                    if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    saw_newline |= bytes[i] == b'\n';
                    i += 1;
                }
                if saw_newline {
                    out.push(Token { tok: Tok::Newline, span: Span::new(i, i) });
                }
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += 1;
                }
                if i < bytes.len() && bytes[i] == b'"' {
                    out.push(Token { tok: Tok::Quoted(src[start + 1..i].to_string()), span: Span::new(start, i + 1) });
                    i += 1;
                } else {
                    cap.push(diags, Diagnostic::error(Span::new(start, i), DiagKind::UnterminatedString), false);
                    // Keep the text up to the end of the line, so the parser reports nothing more.
                    out.push(Token { tok: Tok::Quoted(src[start + 1..i].to_string()), span: Span::new(start, i) });
                }
            }
            b'0'..=b'9' => {
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
                    i += 1;
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                out.push(Token { tok: Tok::Number(src[start..i].to_string()), span: Span::new(start, i) });
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                out.push(Token { tok: Tok::Name(src[start..i].to_string()), span: Span::new(start, i) });
            }
            _ => {
                if let Some(op) = OPS.iter().find(|op| src[i..].starts_with(**op)) {
                    out.push(Token { tok: Tok::Op(op), span: Span::new(i, i + op.len()) });
                    i += op.len();
                } else {
                    let ch = src[i..].chars().next().unwrap_or('?');
                    cap.push(diags, Diagnostic::error(Span::new(i, i + ch.len_utf8()), DiagKind::BadCharacter { found: ch }), false);
                    i += ch.len_utf8();
                }
            }
        }
    }
    out.push(Token { tok: Tok::Eof, span: Span::new(src.len(), src.len()) });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        let mut d = Vec::new();
        let t = lex(src, &mut d);
        assert!(d.is_empty(), "{d:?}");
        t.into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn names_numbers_ops() {
        assert_eq!(
            toks("condition a global.energy >= long 0.5 // c\n"),
            vec![
                Tok::Name("condition".into()),
                Tok::Name("a".into()),
                Tok::Name("global".into()),
                Tok::Op("."),
                Tok::Name("energy".into()),
                Tok::Op(">="),
                Tok::Name("long".into()),
                Tok::Number("0.5".into()),
                Tok::Newline,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn block_comment_spanning_lines_is_one_newline() {
        assert_eq!(toks("a /* x\ny */ b"), vec![Tok::Name("a".into()), Tok::Newline, Tok::Name("b".into()), Tok::Eof]);
    }

    #[test]
    fn unterminated_comment_is_reported() {
        let mut d = Vec::new();
        lex("class a /* never closed", &mut d);
        assert_eq!(d[0].kind, DiagKind::UnterminatedComment);
    }
}
