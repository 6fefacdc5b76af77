//! Pass 1: KIF text → rules. GDL as the general-game-playing community writes it: `;` comments
//! to the end of the line, parenthesised lists, `?variables`, `(<= head body…)` rules.
//!
//! **Case.** The keywords (`role`, `init`, `true`, `next`, `legal`, `does`, `goal`, `terminal`,
//! `base`, `input`, `distinct`, `not`, `or`) are read in any case. Other symbols and variables
//! are compared without regard to case, as KIF and the Dresden server have it, and shown as
//! first written — unless the description spells one name in two ways (`nextFile` and
//! `nextfile`): then every symbol is told apart by its case, as ggp-base's reference prover
//! (which the community's managers run) does, and [`Symbols::twins`] names the pair for a
//! warning. Either way a player's answers are spelled as the description spells them. A fact is a rule
//! with an empty body, whatever its relation (`(next done)` holds in every next state). `(or …)`
//! is kept as written; [`super::check`] expands it. `(not (distinct a b))`, which the community's
//! rulesheets write for `a = b`, is read as [`Literal::Equal`]. A function term may have no
//! arguments (`(gameover)`); it is a term of its own, not the constant `gameover`, as in the
//! reference prover.
//!
//! Every term and literal carries the [`Span`] of its text, so that every later error can point
//! at `file:line:column`. Reading never stops at the first problem inside a rule: an error ends
//! that top-level form, and reading goes on at the next one.

use super::{GdlError, GdlErrorKind};
use crate::wgdl::diag::Span;

/// An interned symbol (lower-cased).
pub type Sym = u32;

/// A term as written: a constant, a variable or a function term `(f a b …)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    Const(Sym),
    /// A variable, numbered within its rule (first occurrence first).
    Var(u32),
    Fn(Sym, Vec<Term>),
}

/// An atom `(p a b …)` or a bare `p`.
#[derive(Clone, Debug, PartialEq)]
pub struct Atom {
    pub pred: Sym,
    pub args: Vec<Term>,
    pub span: Span,
}

/// A body literal.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Pos(Atom),
    Not(Atom),
    Distinct(Term, Term, Span),
    /// `(not (distinct a b))`: the two terms are the same.
    Equal(Term, Term, Span),
    Or(Vec<Literal>, Span),
}

impl Literal {
    pub fn span(&self) -> Span {
        match self {
            Literal::Pos(a) | Literal::Not(a) => a.span,
            Literal::Distinct(_, _, s) | Literal::Equal(_, _, s) | Literal::Or(_, s) => *s,
        }
    }
}

/// A rule `head :- body` (a fact when the body is empty), with its variables' names.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub head: Atom,
    pub body: Vec<Literal>,
    pub vars: Vec<String>,
    pub span: Span,
}

/// The symbol table: names (as first written) by number and back.
#[derive(Clone, Debug, Default)]
pub struct Symbols {
    pub names: Vec<String>,
    index: std::collections::HashMap<String, Sym>,
    /// Symbols are told apart by case (the description spells a name two ways).
    pub case_sensitive: bool,
    /// Names spelled two ways, with the place of the second spelling.
    pub twins: Vec<(String, String, Span)>,
}

impl Symbols {
    fn key(&self, name: &str) -> String {
        if self.case_sensitive { name.to_string() } else { name.to_lowercase() }
    }

    pub fn intern(&mut self, name: &str) -> Sym {
        let key = self.key(name);
        if let Some(&s) = self.index.get(&key) {
            return s;
        }
        let s = self.names.len() as Sym;
        self.names.push(name.to_string());
        self.index.insert(key, s);
        s
    }

    pub fn get(&self, name: &str) -> Option<Sym> {
        self.index.get(&self.key(name)).copied()
    }

    pub fn name(&self, s: Sym) -> &str {
        &self.names[s as usize]
    }
}

/// A token: `(`, `)`, a symbol or a variable (as written; a variable without its `?`; a keyword
/// lower-cased).
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Open,
    Close,
    Sym(String),
    Var(String),
}

/// Longest symbol accepted, in bytes (a longer token is an error, not a slow read).
const MAX_TOKEN: usize = 256;
/// Deepest nesting of parentheses accepted.
const MAX_DEPTH: usize = 64;

fn lex(text: &str, errors: &mut Vec<GdlError>) -> Vec<(Tok, Span)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b';' => {
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    i += 1;
                }
            }
            b'(' => {
                out.push((Tok::Open, Span::new(i, i + 1)));
                i += 1;
            }
            b')' => {
                out.push((Tok::Close, Span::new(i, i + 1)));
                i += 1;
            }
            _ => {
                let start = i;
                while i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b'\r' | b'\n' | b'(' | b')' | b';') {
                    i += 1;
                }
                let word = &text[start..i];
                let span = Span::new(start, i);
                if word.len() > MAX_TOKEN {
                    errors.push(GdlError::new(span, GdlErrorKind::TokenTooLong { len: word.len(), max: MAX_TOKEN }));
                    continue;
                }
                if let Some(bad) = word.chars().find(|c| c.is_control()) {
                    errors.push(GdlError::new(span, GdlErrorKind::BadCharacter { found: bad }));
                    continue;
                }
                let lower = word.to_lowercase();
                let word = if is_keyword(&lower) || KEYWORDS.contains(&lower.as_str()) { lower.as_str() } else { word };
                if let Some(v) = word.strip_prefix('?') {
                    if v.is_empty() {
                        errors.push(GdlError::new(
                            span,
                            GdlErrorKind::Expected { found: "`?`".into(), expected: "a variable name after `?`" },
                        ));
                        continue;
                    }
                    out.push((Tok::Var(v.to_string()), span));
                } else {
                    out.push((Tok::Sym(word.to_string()), span));
                }
            }
        }
    }
    out
}

/// An S-expression as read, before it is given a meaning.
#[derive(Clone, Debug)]
pub enum Sexp {
    Sym(String, Span),
    Var(String, Span),
    List(Vec<Sexp>, Span),
}

impl Sexp {
    pub fn span(&self) -> Span {
        match self {
            Sexp::Sym(_, s) | Sexp::Var(_, s) | Sexp::List(_, s) => *s,
        }
    }
    fn describe(&self) -> String {
        match self {
            Sexp::Sym(s, _) => format!("`{s}`"),
            Sexp::Var(v, _) => format!("variable `?{v}`"),
            Sexp::List(..) => "a list".into(),
        }
    }
}

/// Reads the top-level forms (lists, or bare symbols such as `terminal` facts).
fn read_sexps(toks: &[(Tok, Span)], errors: &mut Vec<GdlError>) -> Vec<Sexp> {
    let mut out = Vec::new();
    // Stack of open lists: their items and where they opened.
    let mut stack: Vec<(Vec<Sexp>, Span)> = Vec::new();
    for (tok, span) in toks {
        let item = match tok {
            Tok::Open => {
                if stack.len() >= MAX_DEPTH {
                    errors.push(GdlError::new(*span, GdlErrorKind::TooDeep { max: MAX_DEPTH }));
                    // Give up on this file: the nesting cannot be trusted any more.
                    return out;
                }
                stack.push((Vec::new(), *span));
                continue;
            }
            Tok::Close => match stack.pop() {
                Some((items, open)) => Sexp::List(items, open.to(*span)),
                None => {
                    errors.push(GdlError::new(
                        *span,
                        GdlErrorKind::Expected { found: "`)`".into(), expected: "a form: `(` or a symbol (this `)` closes nothing)" },
                    ));
                    continue;
                }
            },
            Tok::Sym(s) => Sexp::Sym(s.clone(), *span),
            Tok::Var(v) => Sexp::Var(v.clone(), *span),
        };
        match stack.last_mut() {
            Some((items, _)) => items.push(item),
            None => out.push(item),
        }
    }
    for (_, open) in stack.iter().take(1) {
        errors.push(GdlError::new(*open, GdlErrorKind::Unclosed));
    }
    out
}

/// Gives rules their meaning: heads, bodies, literals and terms.
struct Builder<'a> {
    syms: &'a mut Symbols,
    vars: Vec<String>,
}

impl Builder<'_> {
    fn var(&mut self, name: &str) -> u32 {
        let same = |v: &String| if self.syms.case_sensitive { v == name } else { v.eq_ignore_ascii_case(name) };
        match self.vars.iter().position(same) {
            Some(i) => i as u32,
            None => {
                self.vars.push(name.to_string());
                (self.vars.len() - 1) as u32
            }
        }
    }

    fn term(&mut self, s: &Sexp) -> Result<Term, GdlError> {
        match s {
            Sexp::Sym(n, _) => Ok(Term::Const(self.syms.intern(n))),
            Sexp::Var(v, _) => Ok(Term::Var(self.var(v))),
            Sexp::List(items, span) => match items.split_first() {
                Some((Sexp::Sym(f, _), args)) => {
                    let f = self.syms.intern(f);
                    Ok(Term::Fn(f, args.iter().map(|a| self.term(a)).collect::<Result<_, _>>()?))
                }
                Some((first, _)) => Err(GdlError::new(
                    first.span(),
                    GdlErrorKind::Expected { found: first.describe(), expected: "a function symbol first in a term `(f a …)`" },
                )),
                None => Err(GdlError::new(
                    *span,
                    GdlErrorKind::Expected { found: "`()`".into(), expected: "a term (a symbol, a variable or `(f a …)`)" },
                )),
            },
        }
    }

    fn atom(&mut self, s: &Sexp) -> Result<Atom, GdlError> {
        match s {
            Sexp::Sym(n, span) => Ok(Atom { pred: self.syms.intern(n), args: Vec::new(), span: *span }),
            Sexp::List(items, span) => match items.split_first() {
                Some((Sexp::Sym(p, _), args)) => {
                    if is_keyword(p) {
                        return Err(GdlError::new(
                            *span,
                            GdlErrorKind::Expected {
                                found: format!("`{p}`"),
                                expected: "a relation name (`<=`, `not`, `or`, `distinct` are not relations)",
                            },
                        ));
                    }
                    let pred = self.syms.intern(p);
                    let args = args.iter().map(|a| self.term(a)).collect::<Result<_, _>>()?;
                    Ok(Atom { pred, args, span: *span })
                }
                Some((first, _)) => Err(GdlError::new(
                    first.span(),
                    GdlErrorKind::Expected { found: first.describe(), expected: "a relation name first in an atom `(p a …)`" },
                )),
                None => Err(GdlError::new(
                    *span,
                    GdlErrorKind::Expected { found: "`()`".into(), expected: "an atom `(p a …)` or a bare relation name" },
                )),
            },
            Sexp::Var(v, span) => Err(GdlError::new(
                *span,
                GdlErrorKind::Expected { found: format!("variable `?{v}`"), expected: "an atom (a sentence cannot be a variable)" },
            )),
        }
    }

    fn literal(&mut self, s: &Sexp) -> Result<Literal, GdlError> {
        if let Sexp::List(items, span) = s
            && let Some((Sexp::Sym(k, kspan), args)) = items.split_first()
        {
            match k.as_str() {
                "not" => {
                    return match args {
                        [a] => match self.literal(a)? {
                            Literal::Pos(atom) => Ok(Literal::Not(atom)),
                            Literal::Distinct(x, y, _) => Ok(Literal::Equal(x, y, *span)),
                            _ => Err(GdlError::new(
                                a.span(),
                                GdlErrorKind::Expected {
                                    found: a.describe(),
                                    expected: "an atom or a `distinct` inside `not` (GDL negates atoms only)",
                                },
                            )),
                        },
                        _ => Err(GdlError::new(*span, GdlErrorKind::Arity { what: "not", expected: 1, found: args.len() })),
                    };
                }
                "distinct" => {
                    return match args {
                        [a, b] => Ok(Literal::Distinct(self.term(a)?, self.term(b)?, *span)),
                        _ => Err(GdlError::new(*span, GdlErrorKind::Arity { what: "distinct", expected: 2, found: args.len() })),
                    };
                }
                "or" => {
                    if args.is_empty() {
                        return Err(GdlError::new(
                            *kspan,
                            GdlErrorKind::Expected { found: "`(or)`".into(), expected: "at least one literal inside `or`" },
                        ));
                    }
                    return Ok(Literal::Or(args.iter().map(|a| self.literal(a)).collect::<Result<_, _>>()?, *span));
                }
                _ => {}
            }
        }
        Ok(Literal::Pos(self.atom(s)?))
    }

    fn rule(&mut self, s: &Sexp) -> Result<Rule, GdlError> {
        self.vars.clear();
        if let Sexp::List(items, span) = s
            && let Some((Sexp::Sym(k, _), rest)) = items.split_first()
            && k == "<="
        {
            let Some((head, body)) = rest.split_first() else {
                return Err(GdlError::new(*span, GdlErrorKind::Expected { found: "`(<=)`".into(), expected: "a head after `<=`" }));
            };
            let head = self.atom(head)?;
            let body = body.iter().map(|b| self.literal(b)).collect::<Result<_, _>>()?;
            return Ok(Rule { head, body, vars: std::mem::take(&mut self.vars), span: *span });
        }
        let head = self.atom(s)?;
        Ok(Rule { head, body: Vec::new(), vars: std::mem::take(&mut self.vars), span: s.span() })
    }
}

fn is_keyword(s: &str) -> bool {
    matches!(s, "<=" | "not" | "or" | "distinct")
}

/// The relations GDL gives a meaning, read in any case.
const KEYWORDS: [&str; 10] = ["role", "init", "true", "next", "legal", "does", "goal", "terminal", "base", "input"];

/// Names the description spells in two ways (keywords aside), each with the place of its
/// second spelling.
fn case_twins(toks: &[(Tok, Span)]) -> Vec<(String, String, Span)> {
    let mut first: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    let mut twins: Vec<(String, String, Span)> = Vec::new();
    for (t, span) in toks {
        let Tok::Sym(w) = t else { continue };
        match first.get(&w.to_lowercase()) {
            None => {
                first.insert(w.to_lowercase(), w);
            }
            Some(&f) if f != w && !twins.iter().any(|(a, b, _)| a == f && b == w) => twins.push((f.to_string(), w.clone(), *span)),
            Some(_) => {}
        }
    }
    twins
}

/// Reads S-expressions (GGP messages): every top-level form, or the errors.
pub fn sexps(text: &str) -> Result<Vec<Sexp>, Vec<GdlError>> {
    let mut errors = Vec::new();
    let toks = lex(text, &mut errors);
    let forms = read_sexps(&toks, &mut errors);
    if errors.is_empty() { Ok(forms) } else { Err(errors) }
}

/// Reads a whole description: its rules (facts included), in order, or every error found.
pub fn parse(text: &str, syms: &mut Symbols) -> Result<Vec<Rule>, Vec<GdlError>> {
    let mut errors = Vec::new();
    let toks = lex(text, &mut errors);
    syms.twins = case_twins(&toks);
    syms.case_sensitive = !syms.twins.is_empty();
    let forms = read_sexps(&toks, &mut errors);
    let mut b = Builder { syms, vars: Vec::new() };
    let mut rules = Vec::new();
    for f in &forms {
        match b.rule(f) {
            Ok(r) => rules.push(r),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() { Ok(rules) } else { Err(errors) }
}

/// The keyword relations' symbols (and, through `Keywords::arity`, their arities).
#[derive(Clone, Copy, Debug)]
pub struct Keywords {
    pub role: Sym,
    pub init: Sym,
    pub true_: Sym,
    pub next: Sym,
    pub legal: Sym,
    pub does: Sym,
    pub goal: Sym,
    pub terminal: Sym,
}

impl Keywords {
    pub fn new(syms: &mut Symbols) -> Keywords {
        Keywords {
            role: syms.intern("role"),
            init: syms.intern("init"),
            true_: syms.intern("true"),
            next: syms.intern("next"),
            legal: syms.intern("legal"),
            does: syms.intern("does"),
            goal: syms.intern("goal"),
            terminal: syms.intern("terminal"),
        }
    }

    pub(super) fn arity(&self, p: Sym) -> Option<(usize, &'static str)> {
        let k = [
            (self.role, 1, "role"),
            (self.init, 1, "init"),
            (self.true_, 1, "true"),
            (self.next, 1, "next"),
            (self.legal, 2, "legal"),
            (self.does, 2, "does"),
            (self.goal, 2, "goal"),
            (self.terminal, 0, "terminal"),
        ];
        k.iter().find(|(s, _, _)| *s == p).map(|&(_, a, n)| (a, n))
    }
}

/// The variables of a term, into `out`.
pub fn term_vars(t: &Term, out: &mut Vec<u32>) {
    match t {
        Term::Var(v) => out.push(*v),
        Term::Const(_) => {}
        Term::Fn(_, args) => args.iter().for_each(|a| term_vars(a, out)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_facts_and_case() {
        let mut syms = Symbols::default();
        let rules = parse("; c\n(ROLE x)\n(<= (Legal ?R noop) (role ?r) (not (true (control ?r))))\nterminal", &mut syms).unwrap();
        assert_eq!(rules.len(), 3);
        assert_eq!(syms.name(rules[1].head.pred), "legal");
        assert_eq!(rules[1].vars, vec!["R".to_string()], "one variable, named as first written");
        assert!(!syms.case_sensitive);
        assert!(matches!(rules[1].body[1], Literal::Not(_)));
        assert!(rules[2].body.is_empty() && rules[2].head.args.is_empty());
    }

    #[test]
    fn errors_point_at_the_text() {
        let mut syms = Symbols::default();
        let text = "(role x)\n(<= (legal ?r) (not))\n(init (cell 1";
        let errs = parse(text, &mut syms).unwrap_err();
        assert!(errs.iter().any(|e| matches!(e.kind, GdlErrorKind::Arity { what: "not", .. }) && e.span.lo == 24), "{errs:?}");
        assert!(
            errs.iter().any(|e| matches!(e.kind, GdlErrorKind::Unclosed) && e.span.lo as usize == text.find("(init").unwrap()),
            "{errs:?}"
        );
    }
}
