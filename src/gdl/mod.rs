//! General game playing: games written in GDL (the Game Description Language of the general
//! game playing community, KIF syntax) read, checked, grounded and played through the same
//! [`crate::game::Game`] contract as WGDL games, so every searcher of playforge plays them.
//!
//! One pass per file, as in [`crate::wgdl`]:
//! * [`parse`] — KIF text to rules, every term with its span;
//! * [`check`] — `or` expanded, the keywords' arities and places, and the GDL restrictions
//!   (safety, stratified negation, the recursion restriction), each error at file:line:column;
//! * [`ground`] — the rules instantiated over the relaxed model (negation ignored, `true` ⊇
//!   `init` ∪ `next`, `does` ⊇ `legal`), the static relations evaluated once, and the rest kept
//!   as ground rules in stratum order;
//! * [`game`] — [`GdlGame`]: states as bit sets of base propositions, moves as joint moves (one
//!   action per role, turn-taking games through their `noop`s), goals 0–100 per role;
//! * [`propnet`] — the differential evaluator [`GdlGame`] uses by default: the ground rules
//!   as a net of counters updated by the inputs a move changed;
//! * [`ggp`] — the GGP protocol over HTTP: a player server and a game manager;
//! * [`nonground`] — the reference evaluator: the checked rules run directly over a state's
//!   facts, no grounding (the grounded one is held to it along random games);
//! * [`any`] — [`Gdl`], what the commands load: grounded, or non-ground when grounding passes
//!   its limits ([`load`], [`compile_any`]).
//!
//! The decisions the GDL papers leave open are written down in `games/gdl/README.md`.

pub mod any;
pub mod check;
pub mod demand;
pub mod fx;
pub mod game;
pub mod ggp;
pub mod ground;
pub mod nonground;
pub mod parse;
pub mod propnet;
pub mod safety;
mod scc;
pub mod trace;

pub use any::{Gdl, GdlAnyState};
pub use game::{GdlGame, GdlState, GoalEval, JointMove, Reasoner};

use crate::wgdl::diag::{SourceFile, Span, render};

/// What went wrong reading or checking a GDL description.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GdlErrorKind {
    #[error("control character {found:?} in a symbol; expected printable text")]
    BadCharacter { found: char },
    #[error("symbol of {len} bytes; expected at most {max}")]
    TokenTooLong { len: usize, max: usize },
    #[error("parentheses nested deeper than {max}; expected at most {max} levels")]
    TooDeep { max: usize },
    #[error("this `(` is never closed; expected a matching `)` before the end of the file")]
    Unclosed,
    #[error("unexpected {found}; expected {expected}")]
    Expected { found: String, expected: &'static str },
    #[error("`{what}` takes {expected} argument(s), found {found}")]
    Arity { what: &'static str, expected: usize, found: usize },
    #[error("relation `{name}` is used with {found} argument(s) here and {first} at line {first_line}; expected one arity per relation")]
    MixedArity { name: String, found: usize, first: usize, first_line: usize },
    #[error("`{name}` cannot be defined by a rule; expected it only in rule bodies (the game manager supplies it)")]
    DefinedKeyword { name: String },
    #[error("`{name}` depends on `{on}`; expected {rule}")]
    BadDependency { name: String, on: String, rule: &'static str },
    #[error("variable `?{var}` is unsafe; expected it in a positive literal of the body (it appears in the head, a `not` or a `distinct`)")]
    Unsafe { var: String },
    #[error(
        "variable `?{var}` of `{name}` is bound only by its callers, and this use leaves it open; expected the other positive literals of the rule to bind it"
    )]
    OpenCall { var: String, name: String },
    #[error(
        "variable `?{var}` appears in more than one `not`/`distinct` and in no positive literal; expected it in a positive literal of the body"
    )]
    FreeTwice { var: String },
    #[error(
        "variable `?{var}` is unsafe: bound nowhere, and `{name}` is asked with every argument open; expected it in a positive literal of the body"
    )]
    OpenKeyword { var: String, name: &'static str },
    #[error("function `{name}` is used with {found} argument(s) here and {first} at line {first_line}; expected one arity per function")]
    MixedFunctionArity { name: String, found: usize, first: usize, first_line: usize },
    #[error("`{name}` depends on itself through negation ({cycle}); expected stratified negation")]
    Unstratified { name: String, cycle: String },
    #[error(
        "recursive literal `{name}` has an argument that is neither ground, a head variable, nor bound by a non-recursive positive literal; expected GDL's recursion restriction"
    )]
    RecursionRestriction { name: String },
    #[error("no `role` facts; expected at least one `(role r)`")]
    NoRoles,
    #[error("role `{role}` has no `legal` rule, so it could never move; expected `(<= (legal {role} …) …)` (a `noop` when it waits)")]
    NoLegal { role: String },
    #[error("{what}; expected {expected}")]
    Limit { what: String, expected: String },
}

/// What a description does that the GDL specification does not allow but the community's
/// reference prover (ggp-base's `ProverStateMachine`) plays, and how playforge reads it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GdlWarningKind {
    #[error(
        "variable(s) {vars} of `{name}` are bound only by the rules that use it; read top-down, as the reference prover does (each use must bind them)"
    )]
    CallerBound { name: String, vars: String },
    #[error("variable `?{var}` is the role `{name}` is asked for; read as bound to each role, as game managers ask")]
    RoleFromQuery { var: String, name: &'static str },
    #[error("variable `?{var}` appears only in this `not`; read as \"no value of `?{var}` makes it hold\", as the reference prover does")]
    FreeInNot { var: String },
    #[error(
        "variable `?{var}` appears only in this `distinct`, where it is never bound; read as always distinct, as the reference prover does"
    )]
    FreeInDistinct { var: String },
    #[error("this `distinct` compares a term with itself, so the rule never holds")]
    NeverDistinct,
    #[error(
        "`{second}` and `{first}` differ only in case; every symbol of this description is told apart by case, as ggp-base's prover does (written one way, they would be one symbol)"
    )]
    CaseTwins { first: String, second: String },
    #[error("`{name}` is not in its standard shape (`{standard}`); every `{name}` rule is ignored (nothing needs them to play)")]
    NonStandardOptional { name: &'static str, standard: &'static str },
}

/// One warning with its place.
#[derive(Clone, Debug, PartialEq)]
pub struct GdlWarning {
    pub span: Span,
    pub kind: GdlWarningKind,
}

/// Warnings rendered with file:line:column and the line, one after another.
pub fn render_warnings(file: &SourceFile, warnings: &[GdlWarning]) -> String {
    warnings.iter().map(|w| render(file, w.span, "warning", &w.kind.to_string())).collect()
}

/// One error with its place.
#[derive(Clone, Debug, PartialEq)]
pub struct GdlError {
    pub span: Span,
    pub kind: GdlErrorKind,
}

impl GdlError {
    pub fn new(span: Span, kind: GdlErrorKind) -> GdlError {
        GdlError { span, kind }
    }
}

/// Every error of a description, rendered with file:line:column and the line.
#[derive(Debug)]
pub struct GdlErrors {
    pub file: SourceFile,
    pub errors: Vec<GdlError>,
}

impl std::fmt::Display for GdlErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for e in &self.errors {
            write!(f, "{}", render(&self.file, e.span, "error", &e.kind.to_string()))?;
        }
        Ok(())
    }
}

impl std::error::Error for GdlErrors {}

/// Reads, checks and grounds a description given as text (`name` is used in messages).
pub fn compile(name: &str, text: &str) -> Result<GdlGame, GdlErrors> {
    let file = SourceFile::new(name, text);
    let fail = |errors: Vec<GdlError>| GdlErrors { file: file.clone(), errors };
    let mut syms = parse::Symbols::default();
    let rules = parse::parse(text, &mut syms).map_err(fail)?;
    let checked = check::check(rules, &mut syms, &file).map_err(fail)?;
    let grounded = ground::ground(&checked, &syms).map_err(fail)?;
    GdlGame::new(grounded, syms).map_err(fail)
}

/// Reads and checks a description for the non-ground evaluator.
pub fn compile_nonground(name: &str, text: &str) -> Result<nonground::NonGround, GdlErrors> {
    let file = SourceFile::new(name, text);
    let fail = |errors: Vec<GdlError>| GdlErrors { file: file.clone(), errors };
    let mut syms = parse::Symbols::default();
    let rules = parse::parse(text, &mut syms).map_err(fail)?;
    let checked = check::check(rules, &mut syms, &file).map_err(fail)?;
    Ok(nonground::NonGround::new(&checked, &syms))
}

/// Facts of one relation in the initial state past which the non-ground evaluator tries
/// computing it only where it is asked ([`compile_reported`]).
const LARGE_RELATION: usize = 20_000;

/// Facts of one dynamic stratum in the initial state past which loading tries computing the
/// stratum's relations only where asked before it computes them in full ([`compile_reported`]).
const PROBE_FACTS: usize = 25_000;

/// What loading a description found besides the game: its warnings, and which reasoner plays
/// it and why.
#[derive(Debug)]
pub struct LoadReport {
    pub file: SourceFile,
    pub warnings: Vec<GdlWarning>,
    /// How long grounding ran, and why it gave up when it did (the game is then non-ground).
    pub grounding: (std::time::Duration, Option<String>),
    /// The relations the non-ground evaluator computes only where they are asked.
    pub restricted: Vec<String>,
}

impl LoadReport {
    /// The warnings, rendered with file:line:column.
    pub fn render_warnings(&self) -> String {
        render_warnings(&self.file, &self.warnings)
    }

    /// Why the game is played by the reasoner it is.
    pub fn why(&self) -> String {
        let secs = self.grounding.0.as_secs_f64();
        match &self.grounding.1 {
            None => format!("grounded in {secs:.2} s"),
            Some(why) if self.restricted.is_empty() => {
                format!("grounding gave up after {secs:.2} s ({why}); the non-ground evaluator plays it")
            }
            Some(why) => format!(
                "grounding gave up after {secs:.2} s ({why}); the non-ground evaluator plays it, computing {} only where asked",
                self.restricted.join(", ")
            ),
        }
    }
}

/// Reads, checks and grounds a description given as text, or — when grounding passes `limits`
/// — readies it for the non-ground evaluator. Errors in the description are errors either way.
pub fn compile_any(name: &str, text: &str, limits: ground::GroundLimits) -> Result<Gdl, GdlErrors> {
    compile_reported(name, text, limits).map(|(g, _)| g)
}

/// As [`compile_any`], with the warnings and the reasoner's choice.
pub fn compile_reported(name: &str, text: &str, limits: ground::GroundLimits) -> Result<(Gdl, LoadReport), GdlErrors> {
    let file = SourceFile::new(name, text);
    let fail = |errors: Vec<GdlError>| GdlErrors { file: file.clone(), errors };
    let mut parsed_syms = parse::Symbols::default();
    let rules = parse::parse(text, &mut parsed_syms).map_err(fail)?;
    let mut syms = parsed_syms.clone();
    let mut checked = check::check(rules.clone(), &mut syms, &file).map_err(fail)?;
    // Both reasoners hold a joint move in one number, 16 bits per role (the grounded one checks
    // this too, but a description past the grounding limits would reach the other unchecked).
    if checked.roles.len() > game::MAX_ROLES {
        let what = format!("{} roles", checked.roles.len());
        return Err(fail(vec![GdlError::new(
            Span::new(0, 0),
            GdlErrorKind::Limit { what, expected: format!("at most {} roles", game::MAX_ROLES) },
        )]));
    }
    let t = std::time::Instant::now();
    let grounded = ground::ground_within(&checked, &syms, limits);
    let took = t.elapsed();
    let warnings = checked.warnings.clone();
    let report = |why: Option<String>, restricted: Vec<String>| LoadReport {
        file: file.clone(),
        warnings: warnings.clone(),
        grounding: (took, why),
        restricted,
    };
    let why = match grounded {
        Ok(grounded) => return Ok((Gdl::Ground(GdlGame::new(grounded, syms).map_err(fail)?), report(None, Vec::new()))),
        Err(e) if e.iter().all(|e| matches!(e.kind, GdlErrorKind::Limit { .. })) => {
            e.iter().map(|e| e.kind.to_string()).collect::<Vec<_>>().join("; ")
        }
        Err(e) => return Err(fail(e)),
    };
    // The non-ground evaluator; a relation too large to compute in full is computed where its
    // uses ask, and the description checked again with it restricted (a few rounds at most).
    let mut on_demand: Vec<parse::Sym> = Vec::new();
    // A probe first: a dynamic stratum past PROBE_FACTS facts in the initial state has its
    // relations, and those that ask them, computed where asked (a few rounds, while the
    // checker accepts the restriction); cheaper than computing a million facts to learn the
    // same, for a server has a start clock of a second or two. The rounds below then load at
    // the full budget. The answers are the same whatever is restricted.
    for _ in 0..3 {
        let Err(o) = nonground::NonGround::try_new_within(&checked, &syms, PROBE_FACTS) else { break };
        let over: Vec<parse::Sym> = o.relations.iter().filter_map(|&p| own_relation(&syms, p)).collect();
        if o.deep.is_some() || over.is_empty() {
            break;
        }
        let kw = parse::Keywords::new(&mut syms);
        let wanted = demand::with_callers(&checked.rules, &kw, &syms, &[checked.restricted.clone(), over].concat());
        let mut s2 = parsed_syms.clone();
        match check::check_with(rules.clone(), &mut s2, &file, &wanted) {
            Ok(c2) if c2.restricted.len() > checked.restricted.len() => {
                on_demand = c2.restricted.iter().map(|&p| s2.name(p)).filter_map(|n| parsed_syms.get(n)).collect();
                (checked, syms) = (c2, s2);
            }
            _ => break,
        }
    }
    for _ in 0..6 {
        match nonground::NonGround::try_new(&checked, &syms) {
            Ok(mut ng) => {
                // Relations large in the initial state: computed where asked instead, when that
                // evaluates the initial state faster (the answers are the same either way).
                let kw = parse::Keywords::new(&mut syms);
                let keywords = [kw.role, kw.init, kw.true_, kw.next, kw.legal, kw.does, kw.goal, kw.terminal];
                for _ in 0..3 {
                    let large: Vec<parse::Sym> = ng
                        .sample
                        .1
                        .iter()
                        .filter(|&&(p, n)| {
                            n > LARGE_RELATION && !keywords.contains(&p) && !syms.name(p).contains(' ') && !checked.restricted.contains(&p)
                        })
                        .map(|&(p, _)| p)
                        .collect();
                    if large.is_empty() {
                        break;
                    }
                    // With the relations that ask them (up to the keywords), whose demand is
                    // what binds theirs, else alone.
                    let alone = [checked.restricted.clone(), large].concat();
                    let with_callers = demand::with_callers(&checked.rules, &kw, &syms, &alone);
                    let mut better = false;
                    for wanted in [with_callers, alone] {
                        let mut s2 = parsed_syms.clone();
                        if let Ok(c2) = check::check_with(rules.clone(), &mut s2, &file, &wanted)
                            && c2.restricted.len() > checked.restricted.len()
                            && let Ok(ng2) = nonground::NonGround::try_new(&c2, &s2)
                            && ng2.sample.0 < ng.sample.0
                        {
                            (ng, checked, syms) = (ng2, c2, s2);
                            better = true;
                            break;
                        }
                    }
                    if !better {
                        break;
                    }
                }
                let restricted = checked.restricted.iter().map(|&p| syms.name(p).to_string()).collect();
                return Ok((Gdl::NonGround(nonground::NonGroundGame::new(ng)), report(Some(why), restricted)));
            }
            Err(o) => {
                let over: Vec<parse::Sym> = o.relations.iter().filter_map(|&p| own_relation(&syms, p)).collect();
                let mut new: Vec<parse::Sym> = over.iter().copied().filter(|p| !on_demand.contains(p)).collect();
                if new.is_empty() {
                    // Restricted already and still too large: restrict the relations that
                    // use them too, whose demand may bind more of their arguments.
                    let kw = parse::Keywords::new(&mut syms);
                    let keywords = [kw.role, kw.init, kw.true_, kw.next, kw.legal, kw.does, kw.goal, kw.terminal];
                    for r in &checked.rules {
                        let h = r.head.pred;
                        let uses =
                            r.body.iter().any(|l| matches!(l, parse::Literal::Pos(a) | parse::Literal::Not(a) if over.contains(&a.pred)));
                        if uses && !keywords.contains(&h) && !syms.name(h).contains(' ') && !on_demand.contains(&h) && !new.contains(&h) {
                            new.push(h);
                        }
                    }
                }
                if new.is_empty()
                    && let Some((pred, depth, size)) = o.deep
                {
                    // At the first rule that nests the relation's terms (else the file's start).
                    let at = checked
                        .rules
                        .iter()
                        .find(|r| r.head.pred == pred && r.head.args.iter().any(|t| matches!(t, parse::Term::Fn(..))))
                        .map_or(Span::new(0, 0), |r| r.head.span);
                    return Err(fail(vec![GdlError::new(
                        at,
                        GdlErrorKind::Limit {
                            what: format!(
                                "relation `{}` derives a term nested deeper than {} levels or of more than {} symbols (one {depth} deep of {size} symbols at least)",
                                syms.name(pred),
                                ground::MAX_TERM_DEPTH,
                                ground::MAX_TERM_SIZE
                            ),
                            expected: "a finite relation (a recursive rule that wraps its own terms in a function, as `(<= (nat (s ?x)) (nat ?x))`, never stops)".into(),
                        },
                    )]));
                }
                if new.is_empty() {
                    let names = o.relations.iter().map(|&p| format!("`{}`", syms.name(p))).collect::<Vec<_>>().join(", ");
                    return Err(fail(vec![GdlError::new(
                        Span::new(0, 0),
                        GdlErrorKind::Limit {
                            what: format!("{why}; the non-ground evaluator computed {} facts of {names} while loading", o.facts),
                            expected: format!(
                                "at most {} (relations this large, asked with their arguments open, cannot be played here)",
                                nonground::LOAD_FACTS
                            ),
                        },
                    )]));
                }
                on_demand.extend(new);
                syms = parsed_syms.clone();
                checked = check::check_with(rules.clone(), &mut syms, &file, &on_demand).map_err(fail)?;
            }
        }
    }
    Err(fail(vec![GdlError::new(
        Span::new(0, 0),
        GdlErrorKind::Limit {
            what: format!("{why}; the non-ground evaluator overflowed after six restrictions"),
            expected: "a smaller game".into(),
        },
    )]))
}

/// The relation a relation of an overflowing stratum stands for: a demand's relation, or itself
/// (none for the other relations the checker adds).
fn own_relation(syms: &parse::Symbols, p: parse::Sym) -> Option<parse::Sym> {
    match syms.name(p).strip_prefix("need ") {
        Some(base) => syms.get(base),
        None => (!syms.name(p).contains(' ')).then_some(p),
    }
}

/// Reads a grounded description from a file (an error past the grounding limits).
pub fn load_grounded(path: &std::path::Path) -> anyhow::Result<GdlGame> {
    let text = crate::input::read_text(path)?;
    Ok(compile(&path.display().to_string(), &text)?)
}

/// Reads a description from a file, grounded when grounding stays within the default limits,
/// else for the non-ground evaluator.
pub fn load(path: &std::path::Path) -> anyhow::Result<Gdl> {
    Ok(load_reported(path, ground::GroundLimits::default())?.0)
}

/// As [`load`], within `limits`, with the warnings and the reasoner's choice.
pub fn load_reported(path: &std::path::Path, limits: ground::GroundLimits) -> anyhow::Result<(Gdl, LoadReport)> {
    let text = crate::input::read_text(path)?;
    Ok(compile_reported(&path.display().to_string(), &text, limits)?)
}
