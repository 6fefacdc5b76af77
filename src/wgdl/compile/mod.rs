//! Compiler: checked AST → [`Program`]. Third stage (text → tokens → AST → **checked model →
//! program**). Names are resolved here, once; types are checked here; expressions are lowered
//! to bytecode here.
//!
//! The work goes in the thesis's own order (Alg. 4.6): classes, attributes, objects and their
//! values, groups, actions, game values, conditions, consequences, attachments, initials, goals.
//! One file per pass, each an `impl Compiler` block: `classes.rs` → `actions.rs` →
//! `consequences.rs`, with `exprs.rs` (expressions → bytecode) used by all three and `ext.rs`
//! (the extensions) beside them; `layout.rs` assembles the [`Program`]. This file holds the
//! `Compiler`'s state and runs the passes.
//! A consequence is compiled once per *context* it is attached in (owner class and binding),
//! which is the thesis's "from description to instance" step done at compile time: `this.x`
//! becomes a slot offset, `global.coins` an absolute slot, `seed.coinCost` a blueprint constant.
//! Game value store paths are collected while compiling and laid out at the end, when every
//! string symbol is known; the ops that name them are patched then.

use crate::wgdl::ast::{self, ActionKind as AstActionKind, BinOp, Binding, ConsBody, DeclKind, ExprKind, Lit, TypeExpr, UnOp};
use crate::wgdl::diag::{Cap, DiagKind, Diagnostic, Severity, SourceFile, Span};
use crate::wgdl::program::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

const BUILTINS: [&str; 4] = ["time", "sessionTime", "sessionsFinished", "moves"];
const MAX_STORE_NODES: usize = 1_000_000;
/// How deep conditional/timed consequences may chain (`a` applies `b`, which applies `c`, …).
/// Compiling a chain, and applying a conditional one, recurses once per link; the bound keeps
/// any input from overflowing the stack.
const MAX_CHAIN: usize = 100;
/// How many names an "expected one of" list shows (12) before `…`.
const KNOWN_SHOWN: usize = 12;
/// Classes, object descriptions and actions each have a 16-bit index.
pub const MAX_DECLS: usize = u16::MAX as usize;
/// The most attribute values the classes, object descriptions and initial objects hold in all
/// (1 000 000; each counts every attribute and constant it has, inherited ones too). Each of
/// them gets a list of its values, so without it 65 000 subclasses of a class with 10 000
/// attributes (a 1.2 MB file) would ask for 650 million of them.
pub const MAX_SLOTS: usize = 1_000_000;
/// The deepest chain of parent classes (walks up the chain stay short).
pub const MAX_INHERITANCE: usize = 256;

pub fn compile(file: &ast::File, source: Arc<SourceFile>, diags: &mut Vec<Diagnostic>) -> Option<Program> {
    compile_with(file, source, diags, &CompileOptions::default())
}

/// [`compile`] with options: where auxiliary files (maps) are, parameter overrides.
pub fn compile_with(file: &ast::File, source: Arc<SourceFile>, diags: &mut Vec<Diagnostic>, opts: &CompileOptions) -> Option<Program> {
    compile_capped(file, source, diags, opts, &mut Cap::after(diags))
}

/// [`compile_with`], keeping at most [`MAX_SHOWN`](crate::wgdl::diag::MAX_SHOWN) errors and
/// warnings (`cap` counts the rest).
pub fn compile_capped(
    file: &ast::File,
    source: Arc<SourceFile>,
    diags: &mut Vec<Diagnostic>,
    opts: &CompileOptions,
    cap: &mut Cap,
) -> Option<Program> {
    let mut c = Compiler::new(file, source, diags, cap);
    c.x.opts = opts.clone();
    c.run();
    let ok = c.cap.hidden_errors == 0 && !c.diags.iter().any(|d| d.severity == Severity::Error);
    if ok { Some(c.finish()) } else { None }
}

/// A store path requested while compiling; resolved to a node in `finish`.
#[derive(Clone, Debug)]
struct StoreReq {
    segs: Vec<String>,
    /// Where the path is read (`game.x`), and whether as a `sum`; `None` for increments.
    read: Option<(Span, bool)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct CtxKey {
    this: Option<ClassId>,
    bind: BindKind,
    /// The symbol of a `forEveryNumber`/`forEveryHex` variable ([`NO_VAR`] if none).
    var: i64,
}

const NO_VAR: i64 = -1;
const NO_CTX: CtxKey = CtxKey { this: None, bind: BindKind::None, var: NO_VAR };

mod actions;
mod board;
mod calls;
mod cells;
mod classes;
mod consequences;
mod exprs;
mod ext;
mod layout;
mod options;
mod views;
pub use options::CompileOptions;

/// The root of an attribute path.
#[derive(Clone, Copy, Debug)]
enum Base {
    This(ClassId),
    BoundObj(ClassId),
    BoundGod(ClassId),
    /// An initial object named by its description: object index and class.
    Named(u32, ClassId),
    /// A bound number or cell (forEveryNumber, forEveryHex, forEveryCell: `BoundObj`) or a
    /// cell of a bound step (`StepCell`): the op that pushes it.
    Num(Op),
}

struct ClassDecl {
    name: String,
    parent: Option<ClassId>,
    span: Span,
    own_attrs: Vec<(AttrInfo, Option<ast::Expr>)>,
    own_consts: Vec<(AttrInfo, Option<ast::Expr>)>,
}

struct Compiler<'a> {
    file: &'a ast::File,
    source: Arc<SourceFile>,
    diags: &'a mut Vec<Diagnostic>,
    /// Keeps the diagnostics kept within their limit and counts the rest.
    cap: &'a mut Cap,
    class_ix: HashMap<String, ClassId>,
    classes: Vec<ClassDecl>,
    class_order: Vec<ClassId>,
    god_ix: HashMap<String, GodId>,
    god_decl: Vec<(String, ClassId, Span)>,
    action_ix: HashMap<String, ActionId>,
    cons_ix: HashMap<String, usize>,
    syms: Vec<String>,
    sym_ix: HashMap<String, i64>,
    out_classes: Vec<ClassInfo>,
    /// Per class, its own attributes and constants by name: (is a constant, index in the class's
    /// lists, which subclasses share). Filled with `out_classes`.
    attr_ix: Vec<HashMap<String, (bool, usize)>>,
    gods: Vec<GodInfo>,
    actions: Vec<ActionInfo>,
    conses: Vec<ConsInfo>,
    cons_memo: HashMap<(usize, CtxKey), ConsId>,
    cons_stack: Vec<(usize, bool)>,
    /// Per compiled consequence: how many consequences applying it runs one inside another
    /// (conditional links recurse at run time; a timed link starts afresh from the timer queue).
    cons_depth: Vec<usize>,
    code: Vec<Op>,
    spans: Vec<Span>,
    depth: usize,
    max_depth: usize,
    store_reqs: Vec<StoreReq>,
    /// Increments whose path has computed parts: (cons id, fixed prefix, rest).
    dyn_incs: Vec<(ConsId, usize, Vec<Option<String>>)>,
    game_defs: HashMap<String, (Vec<String>, Span)>,
    initial: Vec<GodId>,
    /// First object index of each description in the initial state.
    named: HashMap<GodId, u32>,
    /// Absolute slot base of each initial object, counted from the end of the store.
    initial_base: Vec<u32>,
    /// Absolute `Slot` ops that need the store size added in `finish`.
    slot_fixups: Vec<usize>,
    is_sub: Vec<(u32, u32)>,
    /// The classes and objects would hold more than [`MAX_SLOTS`] values: the passes after
    /// `collect_attributes` are skipped (one error was reported).
    too_big: bool,
    /// The kinds of declarations whose count limit was reported ([`Compiler::over_limit`]).
    limits_hit: Vec<&'static str>,
    groups: Vec<Group>,
    goals: Vec<GoalInfo>,
    limits: Limits,
    default_duration: Option<(ExprId, bool)>,
    session_length: i64,
    session_pause: i64,
    /// The game deletes objects: accesses through `this`, bound instances and named objects
    /// check that the object is alive (otherwise they are plain slot loads).
    has_delete: bool,
    /// Object descriptions whose declaration failed (already reported).
    broken_gods: std::collections::HashSet<String>,
    /// Attribute names assigned anywhere, for the "never holds" lint.
    pub assigned: std::collections::HashSet<String>,
    /// Instance attributes assigned anywhere, as (class of the object written, attribute index).
    written: Vec<(ClassId, u32)>,
    /// The symbol of each action's number/hex variable ([`NO_VAR`] if none).
    action_var: Vec<i64>,
    /// What the extensions collect (players, turns, hex map, grids, parameters, policies).
    x: ext::Ext,
    /// What the board lines collect (pieces, start rows, facing, step tables, notations).
    board: board::BoardCx,
}

fn line_of(src: &SourceFile, span: Span) -> usize {
    src.line_col(span.lo).0
}

impl<'a> Compiler<'a> {
    fn new(file: &'a ast::File, source: Arc<SourceFile>, diags: &'a mut Vec<Diagnostic>, cap: &'a mut Cap) -> Compiler<'a> {
        Compiler {
            file,
            source,
            diags,
            cap,
            class_ix: HashMap::new(),
            classes: Vec::new(),
            class_order: Vec::new(),
            god_ix: HashMap::new(),
            god_decl: Vec::new(),
            action_ix: HashMap::new(),
            cons_ix: HashMap::new(),
            syms: Vec::new(),
            sym_ix: HashMap::new(),
            out_classes: Vec::new(),
            attr_ix: Vec::new(),
            gods: Vec::new(),
            actions: Vec::new(),
            conses: Vec::new(),
            cons_memo: HashMap::new(),
            cons_stack: Vec::new(),
            cons_depth: Vec::new(),
            code: Vec::new(),
            spans: Vec::new(),
            depth: 0,
            max_depth: 0,
            store_reqs: Vec::new(),
            dyn_incs: Vec::new(),
            game_defs: HashMap::new(),
            initial: Vec::new(),
            named: HashMap::new(),
            initial_base: Vec::new(),
            slot_fixups: Vec::new(),
            action_var: Vec::new(),
            x: ext::Ext::default(),
            board: board::BoardCx::default(),
            is_sub: Vec::new(),
            limits_hit: Vec::new(),
            too_big: false,
            groups: Vec::new(),
            goals: Vec::new(),
            limits: Limits::default(),
            default_duration: None,
            session_length: 0,
            session_pause: 0,
            has_delete: file.decls.iter().any(|d| matches!(&d.kind, DeclKind::Consequence { body: ConsBody::Delete(_), .. })),
            assigned: Default::default(),
            written: Vec::new(),
            broken_gods: Default::default(),
        }
    }

    fn error(&mut self, span: Span, kind: DiagKind) {
        // An object whose own declaration failed (its class is unknown) was reported once there;
        // later uses of its name would only repeat that error.
        if let DiagKind::UnknownName { what: "object description" | "object" | "class or object description", name, .. } = &kind
            && self.broken_gods.contains(name)
        {
            return;
        }
        // A consequence compiled in several contexts may report the same problem twice.
        self.cap.push(self.diags, Diagnostic::error(span, kind), true);
    }

    fn warn(&mut self, span: Span, kind: DiagKind) {
        self.cap.push(self.diags, Diagnostic::warning(span, kind), true);
    }

    fn intern(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.sym_ix.get(s) {
            return i;
        }
        let i = self.syms.len() as i64;
        self.syms.push(s.to_string());
        self.sym_ix.insert(s.to_string(), i);
        i
    }

    fn decls(&self) -> impl Iterator<Item = &'a ast::Decl> + 'a {
        self.file.decls.iter()
    }

    /// The names of `map` for an "expected one of" list: the first [`KNOWN_SHOWN`] in sorted
    /// order, then `…`. Linear in the map (no sort of every name), and empty once no more errors
    /// are kept (the message would not be shown), so that many unknown names cost linear time.
    fn known(&self, map: &HashMap<String, impl Copy>) -> String {
        if self.cap.full(Severity::Error) {
            return String::new();
        }
        let mut v: Vec<&str> = Vec::with_capacity(KNOWN_SHOWN + 1);
        for name in map.keys() {
            // `v` holds the smallest names seen so far, sorted, at most KNOWN_SHOWN + 1 of them.
            if v.len() > KNOWN_SHOWN && name.as_str() >= v[KNOWN_SHOWN] {
                continue;
            }
            let at = v.partition_point(|&s| s < name.as_str());
            v.insert(at, name);
            v.truncate(KNOWN_SHOWN + 1);
        }
        if v.len() > KNOWN_SHOWN {
            v.truncate(KNOWN_SHOWN);
            v.push("…");
        }
        if v.is_empty() { "none declared".into() } else { v.join(", ") }
    }

    fn run(&mut self) {
        self.collect_classes();
        self.collect_attributes();
        if self.too_big {
            return;
        }
        self.collect_objects();
        self.collect_parameters();
        self.collect_game_defs();
        self.collect_misc();
        self.collect_ext_decls();
        self.collect_board_decls();
        self.collect_views();
        self.collect_groups();
        self.collect_actions();
        self.collect_filters();
        self.compile_actions();
        self.compile_goals();
        self.compile_ext();
        self.compile_notations();
        self.compile_chance();
        self.check_store_size();
        self.lint_unused_consequences();
        self.lint_unincreased_reads();
    }

    /// Warns about `game.x` reads that no `game increase` can ever change (a typo, usually).
    /// Fixed increment paths go into a trie, so a read is checked in time linear in its length;
    /// only paths with a computed segment (`*`, bounded by [`MAX_STORE_NODES`]) are scanned.
    fn lint_unincreased_reads(&mut self) {
        // The trie of fixed targets: per node, whether a target ends there and whether one goes below.
        let mut child: HashMap<(usize, &str), usize> = HashMap::new();
        let mut ends = vec![false];
        let mut below = vec![false];
        for r in &self.store_reqs {
            if r.read.is_none() {
                let mut n = 0;
                for seg in &r.segs {
                    below[n] = true;
                    let next = ends.len();
                    n = *child.entry((n, seg.as_str())).or_insert(next);
                    if n == next {
                        ends.push(false);
                        below.push(false);
                    }
                }
                ends[n] = true;
            }
        }
        // Targets with computed segments; a computed segment matches any name (`*`).
        let mut wild: Vec<Vec<String>> = Vec::new();
        for (_, req, rest) in &self.dyn_incs {
            let mut t = self.store_reqs[*req].segs.clone();
            t.extend(rest.iter().map(|x| x.clone().unwrap_or_else(|| "*".into())));
            wild.push(t);
        }
        let matches = |read: &[String], target: &[String], sum: bool| {
            let prefix_ok = |n: usize| read.iter().zip(target).take(n).all(|(a, b)| b == "*" || a == b);
            if sum { target.len() > read.len() && prefix_ok(read.len()) } else { target.len() == read.len() && prefix_ok(read.len()) }
        };
        let fixed = |read: &[String], sum: bool| {
            let mut n = 0;
            for seg in read {
                match child.get(&(n, seg.as_str())) {
                    Some(&c) => n = c,
                    None => return false,
                }
            }
            if sum { below[n] } else { ends[n] }
        };
        let mut warn = Vec::new();
        for r in &self.store_reqs {
            if let Some((span, sum)) = r.read
                && !fixed(&r.segs, sum)
                && !wild.iter().any(|t| matches(&r.segs, t, sum))
            {
                let path = r.segs.join(".");
                warn.push((span, format!("game value `{path}{}` is never increased by any `game increase`, so it is always 0; expected a path that some consequence increases", if sum { ".sum" } else { "" })));
            }
        }
        for (span, msg) in warn {
            self.warn(span, DiagKind::Lint(msg));
        }
    }

    /// `game increase` segments computed at run time (`this.name`) get a store node for every
    /// symbol, at every level below the first such segment (see `finish`). Counts those nodes
    /// the way `finish` makes them and refuses a layout over [`MAX_STORE_NODES`], which `finish`
    /// would cut short (and a counter path outside it would then index past the store).
    fn check_store_size(&mut self) {
        let width = self.syms.len().max(1) as u128;
        let mut total: u128 = 1 + self.store_reqs.iter().map(|r| r.segs.len() as u128).sum::<u128>();
        for i in 0..self.dyn_incs.len() {
            let (id, _, rest) = &self.dyn_incs[i];
            let mut frontier: u128 = 1;
            for seg in rest {
                total = total.saturating_add(frontier.saturating_mul(width));
                if seg.is_none() {
                    frontier = frontier.saturating_mul(width);
                }
            }
            if total > MAX_STORE_NODES as u128 {
                let span = self.conses[*id as usize].span;
                self.error(
                    span,
                    DiagKind::Invalid {
                        what: format!("computed `game increase` paths need more than {MAX_STORE_NODES} game value store counters"),
                        expected: "fewer computed segments such as `this.name` in one path (each can be any of the game's names)".into(),
                    },
                );
                return;
            }
        }
    }
}
