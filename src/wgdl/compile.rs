//! Compiler: checked AST → [`Program`]. Third stage (text → tokens → AST → **checked model →
//! program**). Names are resolved here, once; types are checked here; expressions are lowered
//! to bytecode here.
//!
//! The work goes in the thesis's own order (Alg. 4.6): classes, attributes, objects and their
//! values, groups, actions, game values, conditions, consequences, attachments, initials, goals.
//! A consequence is compiled once per *context* it is attached in (owner class and binding),
//! which is the thesis's "from description to instance" step done at compile time: `this.x`
//! becomes a slot offset, `global.coins` an absolute slot, `seed.coinCost` a blueprint constant.
//! Game value store paths are collected while compiling and laid out at the end, when every
//! string symbol is known; the ops that name them are patched then.

use super::ast::{self, ActionKind as AstActionKind, BinOp, Binding, ConsBody, DeclKind, ExprKind, Lit, TypeExpr, UnOp};
use super::diag::{DiagKind, Diagnostic, SourceFile, Span};
use super::program::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

const BUILTINS: [&str; 4] = ["time", "sessionTime", "sessionsFinished", "moves"];
const MAX_STORE_NODES: usize = 1_000_000;
/// How deep conditional/timed consequences may chain (`a` applies `b`, which applies `c`, …).
/// Compiling a chain, and applying a conditional one, recurses once per link; the bound keeps
/// any input from overflowing the stack.
const MAX_CHAIN: usize = 100;
/// Classes, object descriptions and actions each have a 16-bit index.
pub const MAX_DECLS: usize = u16::MAX as usize;
/// The deepest chain of parent classes (walks up the chain stay short).
pub const MAX_INHERITANCE: usize = 256;

pub fn compile(file: &ast::File, source: Arc<SourceFile>, diags: &mut Vec<Diagnostic>) -> Option<Program> {
    compile_with(file, source, diags, &CompileOptions::default())
}

/// [`compile`] with options: where auxiliary files (maps) are, parameter overrides.
pub fn compile_with(file: &ast::File, source: Arc<SourceFile>, diags: &mut Vec<Diagnostic>, opts: &CompileOptions) -> Option<Program> {
    let mut c = Compiler::new(file, source, diags);
    c.x.opts = opts.clone();
    c.run();
    let ok = !c.diags.iter().any(|d| d.severity == super::diag::Severity::Error);
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

mod ext;
pub use ext::CompileOptions;

/// The root of an attribute path.
#[derive(Clone, Copy, Debug)]
enum Base {
    This(ClassId),
    BoundObj(ClassId),
    BoundGod(ClassId),
    /// An initial object named by its description: object index and class.
    Named(u32, ClassId),
    /// A bound number or hex cell (forEveryNumber, forEveryHex).
    Num,
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
    /// The symbol of each action's number/hex variable ([`NO_VAR`] if none).
    action_var: Vec<i64>,
    /// What the extensions collect (players, turns, hex map, grids, parameters, policies).
    x: ext::Ext,
}

fn line_of(src: &SourceFile, span: Span) -> usize {
    src.line_col(span.lo).0
}

impl<'a> Compiler<'a> {
    fn new(file: &'a ast::File, source: Arc<SourceFile>, diags: &'a mut Vec<Diagnostic>) -> Compiler<'a> {
        Compiler {
            file,
            source,
            diags,
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
            is_sub: Vec::new(),
            limits_hit: Vec::new(),
            groups: Vec::new(),
            goals: Vec::new(),
            limits: Limits::default(),
            default_duration: None,
            session_length: 0,
            session_pause: 0,
            has_delete: file.decls.iter().any(|d| matches!(&d.kind, DeclKind::Consequence { body: ConsBody::Delete(_), .. })),
            assigned: Default::default(),
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
        let d = Diagnostic::error(span, kind);
        // A consequence compiled in several contexts may report the same problem twice.
        if !self.diags.contains(&d) {
            self.diags.push(d);
        }
    }

    fn warn(&mut self, span: Span, kind: DiagKind) {
        let d = Diagnostic::warning(span, kind);
        if !self.diags.contains(&d) {
            self.diags.push(d);
        }
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

    fn known(map: &HashMap<String, impl Copy>) -> String {
        let mut v: Vec<&str> = map.keys().map(|s| s.as_str()).collect();
        v.sort();
        if v.len() > 12 {
            v.truncate(12);
            v.push("…");
        }
        if v.is_empty() { "none declared".into() } else { v.join(", ") }
    }

    fn run(&mut self) {
        self.collect_classes();
        self.collect_attributes();
        self.collect_objects();
        self.collect_parameters();
        self.collect_game_defs();
        self.collect_misc();
        self.collect_ext_decls();
        self.collect_groups();
        self.collect_actions();
        self.collect_filters();
        self.compile_actions();
        self.compile_goals();
        self.compile_ext();
        self.check_store_size();
        self.lint_unused_consequences();
        self.lint_unincreased_reads();
    }

    /// Warns about `game.x` reads that no `game increase` can ever change (a typo, usually).
    fn lint_unincreased_reads(&mut self) {
        // Increment targets as paths; a computed segment matches any name (`*`).
        let mut targets: Vec<Vec<String>> = Vec::new();
        for r in &self.store_reqs {
            if r.read.is_none() {
                targets.push(r.segs.clone());
            }
        }
        for (_, req, rest) in &self.dyn_incs {
            let mut t = self.store_reqs[*req].segs.clone();
            t.extend(rest.iter().map(|x| x.clone().unwrap_or_else(|| "*".into())));
            targets.push(t);
        }
        let matches = |read: &[String], target: &[String], sum: bool| {
            let prefix_ok = |n: usize| read.iter().zip(target).take(n).all(|(a, b)| b == "*" || a == b);
            if sum { target.len() > read.len() && prefix_ok(read.len()) } else { target.len() == read.len() && prefix_ok(read.len()) }
        };
        let mut warn = Vec::new();
        for r in &self.store_reqs {
            if let Some((span, sum)) = r.read
                && !targets.iter().any(|t| matches(&r.segs, t, sum))
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

    // ---------------------------------------------------------------- classes

    fn collect_classes(&mut self) {
        let mut parents: Vec<Option<ast::Ident>> = Vec::new();
        for d in self.decls() {
            if let DeclKind::Class { name, parent } = &d.kind {
                if let Some(&prev) = self.class_ix.get(&name.name) {
                    let first_line = line_of(&self.source, self.classes[prev as usize].span);
                    self.error(name.span, DiagKind::Duplicate { what: "class", name: name.name.clone(), first_line });
                    continue;
                }
                if self.over_limit(self.classes.len(), "classes", name.span) {
                    continue;
                }
                self.class_ix.insert(name.name.clone(), self.classes.len() as ClassId);
                self.classes.push(ClassDecl {
                    name: name.name.clone(),
                    parent: None,
                    span: name.span,
                    own_attrs: vec![],
                    own_consts: vec![],
                });
                parents.push(parent.clone());
            }
        }
        for (i, p) in parents.iter().enumerate() {
            if let Some(p) = p {
                match self.class_ix.get(&p.name) {
                    Some(&pc) => self.classes[i].parent = Some(pc),
                    None => {
                        let known = Self::known(&self.class_ix);
                        self.error(
                            p.span,
                            DiagKind::UnknownName {
                                what: "parent class",
                                name: p.name.clone(),
                                expected: format!("a declared class ({known})"),
                            },
                        );
                    }
                }
            }
        }
        // Cycles: walk up from each class not yet seen until a class already placed (done),
        // the top (None) or a class on the current walk (a loop). Linear in the classes.
        let n = self.classes.len();
        let mut in_cycle = vec![false; n];
        // 0 unseen, 1 on the current walk, 2 done.
        let mut mark = vec![0u8; n];
        let mut walk: Vec<usize> = Vec::new();
        for i in 0..n {
            walk.clear();
            let mut c = Some(i);
            while let Some(x) = c {
                match mark[x] {
                    2 => break,
                    1 => {
                        let at = walk.iter().position(|&w| w == x).expect("on the walk");
                        let mut cycle = walk[at..].to_vec();
                        // Named from its first-declared class, up the chain and back to it.
                        let first = (0..cycle.len()).min_by_key(|&k| cycle[k]).expect("a loop has classes");
                        cycle.rotate_left(first);
                        for &k in &cycle {
                            in_cycle[k] = true;
                        }
                        let mut names: Vec<String> = cycle.iter().map(|&k| self.classes[k].name.clone()).collect();
                        names.push(self.classes[cycle[0]].name.clone());
                        let span = self.classes[cycle[0]].span;
                        self.error(span, DiagKind::CyclicInheritance { cycle: names.join(" : ") });
                        break;
                    }
                    _ => {
                        mark[x] = 1;
                        walk.push(x);
                        c = self.classes[x].parent.map(|p| p as usize);
                    }
                }
            }
            for &w in &walk {
                mark[w] = 2;
            }
        }
        for (i, &bad) in in_cycle.iter().enumerate() {
            if bad {
                self.classes[i].parent = None;
            }
        }
        // Parents before children, and each class's subtree as an interval of a pre-order
        // numbering (linear in the number of classes, however deep the chains). A class more
        // than MAX_INHERITANCE levels down is cut from its parent (one error) and numbered as
        // a tree of its own.
        let mut kids: Vec<Vec<ClassId>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, c) in self.classes.iter().enumerate() {
            match c.parent {
                Some(p) => kids[p as usize].push(i as ClassId),
                None => roots.push(i as ClassId),
            }
        }
        // Popped in declaration order.
        roots.reverse();
        let mut depth = vec![0usize; n];
        let mut span = vec![(0u32, 0u32); n];
        let mut next = 0u32;
        let mut reported = false;
        // (class, entered): a class is numbered on entry and closed after its subtree.
        let mut stack: Vec<(ClassId, bool)> = Vec::new();
        while let Some(root) = roots.pop() {
            stack.push((root, false));
            while let Some((c, entered)) = stack.pop() {
                let c = c as usize;
                if entered {
                    span[c].1 = next - 1;
                    continue;
                }
                span[c].0 = next;
                next += 1;
                stack.push((c as ClassId, true));
                for &k in kids[c].iter().rev() {
                    if depth[c] < MAX_INHERITANCE {
                        depth[k as usize] = depth[c] + 1;
                        stack.push((k, false));
                        continue;
                    }
                    if !reported {
                        reported = true;
                        let span = self.classes[k as usize].span;
                        self.error(
                            span,
                            DiagKind::Invalid {
                                what: format!("a chain of more than {MAX_INHERITANCE} parent classes"),
                                expected: format!("classes at most {MAX_INHERITANCE} levels below the top"),
                            },
                        );
                    }
                    self.classes[k as usize].parent = None;
                    roots.push(k);
                }
            }
        }
        let mut order: Vec<ClassId> = (0..n as ClassId).collect();
        order.sort_by_key(|&c| (depth[c as usize], c));
        self.class_order = order;
        self.is_sub = span;
    }

    /// Whether `count` declarations of a kind already fill its 16-bit index; reports the
    /// first one past the limit (once per kind), so an index can never wrap.
    fn over_limit(&mut self, count: usize, what: &'static str, span: Span) -> bool {
        if count < MAX_DECLS {
            return false;
        }
        if !self.limits_hit.contains(&what) {
            self.limits_hit.push(what);
            self.error(
                span,
                DiagKind::Invalid {
                    what: format!("more than {MAX_DECLS} {what}"),
                    expected: format!("at most {MAX_DECLS} {what} in one game (the limit of a 16-bit index)"),
                },
            );
        }
        true
    }

    fn class_is_sub(&self, a: ClassId, b: ClassId) -> bool {
        crate::wgdl::program::within(&self.is_sub, a, b)
    }

    fn resolve_class(&mut self, id: &ast::Ident, what: &'static str) -> Option<ClassId> {
        match self.class_ix.get(&id.name) {
            Some(&c) => Some(c),
            None => {
                let known = Self::known(&self.class_ix);
                let hint = if self.god_ix.contains_key(&id.name) {
                    format!("a class, but `{}` is an object description", id.name)
                } else {
                    format!("a declared class ({known})")
                };
                self.error(id.span, DiagKind::UnknownName { what, name: id.name.clone(), expected: hint });
                None
            }
        }
    }

    fn type_of(&mut self, t: &TypeExpr) -> Option<Ty> {
        Some(match t {
            TypeExpr::Long => Ty::Long,
            TypeExpr::Double => Ty::Double,
            TypeExpr::Boolean => Ty::Bool,
            TypeExpr::String => Ty::Str,
            TypeExpr::Object(c) => Ty::Obj(self.resolve_class(c, "class")?),
        })
    }

    /// Finds an attribute (instance or constant) by name in a class or its ancestors.
    fn find_attr(&self, class: ClassId, name: &str) -> Option<(bool, usize, Ty)> {
        let ci = &self.out_classes[class as usize];
        if let Some(i) = ci.attrs.iter().position(|a| a.name == name) {
            return Some((false, i, ci.attrs[i].ty));
        }
        if let Some(i) = ci.consts.iter().position(|a| a.name == name) {
            return Some((true, i, ci.consts[i].ty));
        }
        None
    }

    fn collect_attributes(&mut self) {
        // Object names are needed to tell the per-object form apart; collect them first.
        for d in self.decls() {
            if let DeclKind::Object { name, class } = &d.kind {
                if self.god_ix.contains_key(&name.name) {
                    let first = self.god_decl[self.god_ix[&name.name] as usize].2;
                    let first_line = line_of(&self.source, first);
                    self.error(name.span, DiagKind::Duplicate { what: "object description", name: name.name.clone(), first_line });
                    continue;
                }
                if self.class_ix.contains_key(&name.name) {
                    let first_line = line_of(&self.source, self.classes[self.class_ix[&name.name] as usize].span);
                    self.error(
                        name.span,
                        DiagKind::Duplicate { what: "name (a class and an object description)", name: name.name.clone(), first_line },
                    );
                    continue;
                }
                if self.over_limit(self.god_decl.len(), "object descriptions", name.span) {
                    self.broken_gods.insert(name.name.clone());
                    continue;
                }
                let Some(c) = self.resolve_class(class, "class") else {
                    self.broken_gods.insert(name.name.clone());
                    continue;
                };
                self.god_ix.insert(name.name.clone(), self.god_decl.len() as GodId);
                self.god_decl.push((name.name.clone(), c, name.span));
            }
        }
        for d in self.decls() {
            let DeclKind::Attribute { constant, target, name, ty, value } = &d.kind else { continue };
            if let Some(&c) = self.class_ix.get(&target.name) {
                let Some((te, tspan)) = ty else {
                    self.error(
                        name.span.to(value.span),
                        DiagKind::Unexpected {
                            found: "a value without a type".into(),
                            expected: format!(
                                "a type before the value: `attribute {} {} long 0` (`{}` is a class)",
                                target.name, name.name, target.name
                            ),
                        },
                    );
                    continue;
                };
                let Some(t) = self.type_of(te) else { continue };
                // Duplicates in this class (ancestors are checked once all lines are read, so that
                // the order of lines does not matter).
                let cd = &self.classes[c as usize];
                let dup = cd.own_attrs.iter().chain(cd.own_consts.iter()).find(|(a, _)| a.name == name.name).map(|(a, _)| a.span);
                if let Some(first) = dup {
                    let first_line = line_of(&self.source, first);
                    self.error(name.span, DiagKind::Duplicate { what: "attribute", name: name.name.clone(), first_line });
                    continue;
                }
                let info = AttrInfo { name: name.name.clone(), ty: t, span: name.span.to(*tspan) };
                let cd = &mut self.classes[c as usize];
                if *constant { cd.own_consts.push((info, Some(value.clone()))) } else { cd.own_attrs.push((info, Some(value.clone()))) }
            } else if self.god_ix.contains_key(&target.name) {
                if *constant {
                    self.error(
                        target.span,
                        DiagKind::UnknownName {
                            what: "class",
                            name: target.name.clone(),
                            expected: "a class after `attribute class` (this is an object description)".into(),
                        },
                    );
                }
                // Per-object values are applied in collect_objects.
            } else {
                let mut all = Self::known(&self.class_ix);
                all.push_str("; objects: ");
                all.push_str(&Self::known(&self.god_ix));
                self.error(
                    target.span,
                    DiagKind::UnknownName {
                        what: "class or object description",
                        name: target.name.clone(),
                        expected: format!("a declared class or object ({all})"),
                    },
                );
            }
        }
        // An attribute declared again in a subclass (in any line order) is a duplicate.
        for c in 0..self.classes.len() {
            let mut anc = self.classes[c].parent;
            while let Some(a) = anc {
                let inherited: Vec<(String, Span)> = self.classes[a as usize]
                    .own_attrs
                    .iter()
                    .chain(&self.classes[a as usize].own_consts)
                    .map(|(i, _)| (i.name.clone(), i.span))
                    .collect();
                let mut errs = Vec::new();
                let cd = &mut self.classes[c];
                for list in [&mut cd.own_attrs, &mut cd.own_consts] {
                    list.retain(|(i, _)| match inherited.iter().find(|(n, _)| *n == i.name) {
                        Some((_, first)) => {
                            errs.push((i.span, i.name.clone(), *first));
                            false
                        }
                        None => true,
                    });
                }
                for (span, name, first) in errs {
                    let first_line = line_of(&self.source, first);
                    self.error(
                        Span { lo: span.lo, hi: span.lo + name.len() as u32 },
                        DiagKind::Duplicate { what: "attribute (inherited)", name, first_line },
                    );
                }
                anc = self.classes[a as usize].parent;
            }
        }
        // Layout: inherited attributes first, so offsets hold in every subclass.
        self.out_classes = self
            .classes
            .iter()
            .map(|c| ClassInfo {
                name: c.name.clone(),
                parent: c.parent,
                attrs: vec![],
                consts: vec![],
                actions: vec![],
                create_hooks: vec![],
                gods: vec![],
                actor_gate: None,
                span: c.span,
            })
            .collect();
        for &c in &self.class_order.clone() {
            let (mut attrs, mut consts) = match self.classes[c as usize].parent {
                Some(p) => (self.out_classes[p as usize].attrs.clone(), self.out_classes[p as usize].consts.clone()),
                None => (vec![], vec![]),
            };
            attrs.extend(self.classes[c as usize].own_attrs.iter().map(|(a, _)| a.clone()));
            consts.extend(self.classes[c as usize].own_consts.iter().map(|(a, _)| a.clone()));
            self.out_classes[c as usize].attrs = attrs;
            self.out_classes[c as usize].consts = consts;
        }
    }

    /// A literal value for an attribute of type `ty`, as the 64-bit slot value.
    fn literal(&mut self, e: &ast::Expr, ty: Ty) -> Option<i64> {
        let (v, found) = match &e.kind {
            ExprKind::Lit(Lit::Long(v)) => (*v, Ty::Long),
            ExprKind::Lit(Lit::Double(v)) => (v.to_bits() as i64, Ty::Double),
            ExprKind::Lit(Lit::Bool(b)) => (*b as i64, Ty::Bool),
            ExprKind::Lit(Lit::Str(s)) => (self.intern(s), Ty::Str),
            ExprKind::Lit(Lit::Null) => (NULL, Ty::Null),
            ExprKind::ObjRef(name) => {
                let Some(&g) = self.god_ix.get(&name.name) else {
                    let known = Self::known(&self.god_ix);
                    self.error(
                        name.span,
                        DiagKind::UnknownName {
                            what: "object description",
                            name: name.name.clone(),
                            expected: format!("a declared object ({known})"),
                        },
                    );
                    return None;
                };
                let Some(&id) = self.named.get(&g) else {
                    self.error(
                        name.span,
                        DiagKind::Invalid {
                            what: format!("`object:{}` names a description with no `initial` instance", name.name),
                            expected: format!("`initial {}` somewhere in the file", name.name),
                        },
                    );
                    return None;
                };
                (id as i64, Ty::Obj(self.god_decl[g as usize].1))
            }
            _ => {
                self.error(
                    e.span,
                    DiagKind::Unexpected {
                        found: "an expression".into(),
                        expected: "a literal value (attribute values are constants)".into(),
                    },
                );
                return None;
            }
        };
        match (ty, found) {
            (a, b) if a == b => Some(v),
            (Ty::Double, Ty::Long) => Some((v as f64).to_bits() as i64),
            (Ty::Str, Ty::Long) | (Ty::Str, Ty::Double) => {
                // `attribute o name 5` on a string attribute: the text as written.
                let text = self.source.slice(e.span).to_string();
                Some(self.intern(&text))
            }
            (Ty::Obj(_), Ty::Null) => Some(NULL),
            (Ty::Obj(want), Ty::Obj(got)) if self.class_is_sub(got, want) => Some(v),
            _ => {
                let expected = self.ty_name(ty);
                let found = self.ty_name(found);
                self.error(e.span, DiagKind::TypeMismatch { expected, found });
                None
            }
        }
    }

    fn ty_name(&self, t: Ty) -> String {
        match t {
            Ty::Long => "long".into(),
            Ty::Double => "double".into(),
            Ty::Bool => "boolean".into(),
            Ty::Str => "string".into(),
            Ty::Null => "null".into(),
            Ty::Obj(c) => format!("object:{}", self.classes[c as usize].name),
        }
    }

    fn collect_objects(&mut self) {
        // Initials first: named objects get their indices and slot bases from file order.
        for d in self.decls() {
            if let DeclKind::Initial { object } = &d.kind {
                match self.god_ix.get(&object.name) {
                    Some(&g) => {
                        self.named.entry(g).or_insert(self.initial.len() as u32);
                        self.initial.push(g);
                    }
                    None => {
                        let known = Self::known(&self.god_ix);
                        let hint = if self.class_ix.contains_key(&object.name) {
                            format!("an object description, but `{}` is a class; declare `object <name> is {}`", object.name, object.name)
                        } else {
                            format!("a declared object description ({known})")
                        };
                        self.error(
                            object.span,
                            DiagKind::UnknownName { what: "object description", name: object.name.clone(), expected: hint },
                        );
                    }
                }
            }
        }
        // Class defaults first (so `object:x` defaults can see named objects).
        let mut defaults: Vec<(Vec<i64>, Vec<i64>)> = vec![(vec![], vec![]); self.classes.len()];
        for &c in &self.class_order.clone() {
            let (mut a, mut k) = match self.classes[c as usize].parent {
                Some(p) => defaults[p as usize].clone(),
                None => (vec![], vec![]),
            };
            let own_attrs: Vec<_> = self.classes[c as usize].own_attrs.iter().map(|(i, e)| (i.ty, e.clone())).collect();
            let own_consts: Vec<_> = self.classes[c as usize].own_consts.iter().map(|(i, e)| (i.ty, e.clone())).collect();
            for (ty, e) in own_attrs {
                a.push(e.and_then(|e| self.literal(&e, ty)).unwrap_or(0));
            }
            for (ty, e) in own_consts {
                k.push(e.and_then(|e| self.literal(&e, ty)).unwrap_or(0));
            }
            defaults[c as usize] = (a, k);
        }
        for (i, (name, class, span)) in self.god_decl.clone().into_iter().enumerate() {
            let (init, consts) = defaults[class as usize].clone();
            let name_sym = self.intern(&name);
            self.gods.push(GodInfo { name, name_sym, class, init, consts, span });
            let mut c = Some(class);
            while let Some(x) = c {
                self.out_classes[x as usize].gods.push(i as GodId);
                c = self.classes[x as usize].parent;
            }
        }
        let mut seen: HashMap<(GodId, String), Span> = HashMap::new();
        for d in self.decls() {
            let DeclKind::Attribute { constant: false, target, name, ty, value } = &d.kind else { continue };
            let Some(&g) = self.god_ix.get(&target.name) else { continue };
            if let Some(first) = seen.insert((g, name.name.clone()), name.span) {
                let first_line = line_of(&self.source, first);
                self.error(
                    name.span,
                    DiagKind::Duplicate { what: "attribute value", name: format!("{}.{}", target.name, name.name), first_line },
                );
                continue;
            }
            let class = self.gods[g as usize].class;
            let Some((is_const, idx, aty)) = self.find_attr(class, &name.name) else {
                let known: Vec<String> = self.out_classes[class as usize]
                    .attrs
                    .iter()
                    .chain(&self.out_classes[class as usize].consts)
                    .map(|a| a.name.clone())
                    .collect();
                self.error(
                    name.span,
                    DiagKind::UnknownAttribute {
                        class: self.classes[class as usize].name.clone(),
                        attr: name.name.clone(),
                        known: if known.is_empty() { "none declared".into() } else { known.join(", ") },
                    },
                );
                continue;
            };
            if let Some((te, tspan)) = ty
                && let Some(t) = self.type_of(te)
                && t != aty
            {
                let (expected, found) = (self.ty_name(aty), self.ty_name(t));
                self.error(*tspan, DiagKind::TypeMismatch { expected, found });
                continue;
            }
            if let Some(v) = self.literal(value, aty) {
                if is_const { self.gods[g as usize].consts[idx] = v } else { self.gods[g as usize].init[idx] = v }
            }
        }
        let mut base = 0u32;
        for &g in &self.initial {
            self.initial_base.push(base);
            base += self.gods[g as usize].init.len() as u32;
        }
    }

    fn collect_game_defs(&mut self) {
        for d in self.decls() {
            if let DeclKind::GameValue { name, path } = &d.kind {
                if BUILTINS.contains(&name.name.as_str()) {
                    self.error(
                        name.span,
                        DiagKind::Invalid {
                            what: format!("`game.{}` is a built-in game value", name.name),
                            expected: format!("a name other than {}", BUILTINS.join(", ")),
                        },
                    );
                    continue;
                }
                if let Some((_, first)) = self.game_defs.get(&name.name) {
                    let first_line = line_of(&self.source, *first);
                    self.error(name.span, DiagKind::Duplicate { what: "game value", name: name.name.clone(), first_line });
                    continue;
                }
                let segs: Vec<String> = path.iter().map(|s| s.name.clone()).collect();
                if segs.last().map(|s| s.as_str()) == Some("sum") && segs.len() == 1 {
                    self.error(
                        path[0].span,
                        DiagKind::Invalid {
                            what: "`sum` alone is not a store path".into(),
                            expected: "a path such as `building.built.sum`".into(),
                        },
                    );
                }
                self.game_defs.insert(name.name.clone(), (segs, name.span));
            }
        }
    }

    fn const_long(&mut self, e: &ast::Expr, what: &str) -> Option<i64> {
        match &e.kind {
            ExprKind::Lit(Lit::Long(v)) if *v >= 0 => Some(*v),
            ExprKind::Lit(Lit::Double(v)) if *v >= 0.0 => Some(v.floor() as i64),
            _ => {
                self.error(
                    e.span,
                    DiagKind::Unexpected {
                        found: format!("`{}`", self.source.slice(e.span)),
                        expected: format!("{what}: a number of seconds ≥ 0 such as `long 300`"),
                    },
                );
                None
            }
        }
    }

    fn collect_misc(&mut self) {
        let mut seen: HashMap<String, Span> = HashMap::new();
        for d in self.decls() {
            match &d.kind {
                DeclKind::Session { key, expr } => {
                    if let Some(first) = seen.insert(format!("session {}", key.name), key.span) {
                        let first_line = line_of(&self.source, first);
                        self.error(key.span, DiagKind::Duplicate { what: "session setting", name: key.name.clone(), first_line });
                        continue;
                    }
                    match key.name.as_str() {
                        "length" => self.session_length = self.const_long(expr, "a session length").unwrap_or(0),
                        "pause" => self.session_pause = self.const_long(expr, "a pause between sessions").unwrap_or(0),
                        _ => self.error(
                            key.span,
                            DiagKind::UnknownName {
                                what: "session setting",
                                name: key.name.clone(),
                                expected: "`length` or `pause`".into(),
                            },
                        ),
                    }
                }
                DeclKind::Limit { key, value } => {
                    let v = (*value).min(u32::MAX as u64) as u32;
                    match key.name.as_str() {
                        "ruleFirings" => self.limits.rule_firings = v,
                        "objects" => self.limits.objects = v,
                        "timers" => self.limits.timers = v,
                        "steps" => self.limits.steps = v,
                        "turns" => self.limits.turns = v,
                        _ => self.error(
                            key.span,
                            DiagKind::UnknownName {
                                what: "limit",
                                name: key.name.clone(),
                                expected: "ruleFirings, objects, timers, steps or turns".into(),
                            },
                        ),
                    }
                }
                _ => {}
            }
        }
        if self.session_pause > 0 && self.session_length == 0 {
            let span = seen["session pause"];
            self.error(
                span,
                DiagKind::Invalid {
                    what: "a session pause without a session length".into(),
                    expected: "`session length <seconds>` as well".into(),
                },
            );
        }
    }

    fn collect_groups(&mut self) {
        let mut ix: HashMap<String, (u16, Span)> = HashMap::new();
        for d in self.decls() {
            if let DeclKind::ActionGroup { name, weight } = &d.kind {
                if let Some((_, first)) = ix.get(&name.name) {
                    let first_line = line_of(&self.source, *first);
                    self.error(name.span, DiagKind::Duplicate { what: "action group", name: name.name.clone(), first_line });
                    continue;
                }
                if !(*weight >= 0.0) || !weight.is_finite() {
                    self.error(d.span, DiagKind::BadLiteral { ty: "probability", text: weight.to_string(), expected: "a weight ≥ 0" });
                }
                ix.insert(name.name.clone(), (self.groups.len() as u16, name.span));
                self.groups.push(Group { name: name.name.clone(), weight: *weight });
            }
        }
    }

    // ---------------------------------------------------------------- actions

    fn collect_actions(&mut self) {
        for d in self.decls() {
            match &d.kind {
                DeclKind::Action { name, kind } => {
                    if let Some(&prev) = self.action_ix.get(&name.name) {
                        let first_line = line_of(&self.source, self.actions[prev as usize].span);
                        self.error(name.span, DiagKind::Duplicate { what: "action", name: name.name.clone(), first_line });
                        continue;
                    }
                    let mut var = NO_VAR;
                    let (k, class, bind) = match kind {
                        AstActionKind::Rule => (ActionKind::Rule, None, BindKind::None),
                        AstActionKind::OnCreate { class } => (ActionKind::OnCreate, self.resolve_class(class, "class"), BindKind::None),
                        AstActionKind::Player { class, binding } | AstActionKind::OnRound { class, binding } => {
                            let c = self.resolve_class(class, "class");
                            let b = match binding {
                                None => BindKind::None,
                                Some((Binding::ForEveryGod, bc)) => self.resolve_class(bc, "class").map_or(BindKind::None, BindKind::God),
                                Some((Binding::ForEveryInstance, bc)) => {
                                    self.resolve_class(bc, "class").map_or(BindKind::None, BindKind::Instance)
                                }
                                Some((Binding::ForEveryNumber(lo, hi), v)) => {
                                    var = self.intern(&v.name);
                                    BindKind::Number(*lo as u32, *hi as u32)
                                }
                                Some((Binding::ForEveryHex, v)) => {
                                    var = self.intern(&v.name);
                                    if self.x.hex.is_none() {
                                        self.error(
                                            v.span,
                                            DiagKind::Invalid {
                                                what: "`forEveryHex` without a hex map".into(),
                                                expected: "a `hexmap \"<file>\"` line".into(),
                                            },
                                        );
                                    }
                                    BindKind::Hex
                                }
                            };
                            let round = matches!(kind, AstActionKind::OnRound { .. });
                            if round && !matches!(b, BindKind::None | BindKind::Instance(_)) {
                                self.error(
                                    name.span,
                                    DiagKind::Invalid {
                                        what: "a `round:` hook with a binding other than forEveryInstance".into(),
                                        expected: "`action round:<Class> <name>` or `… forEveryInstance <Class>`".into(),
                                    },
                                );
                            }
                            (if round { ActionKind::OnRound } else { ActionKind::Player }, c, b)
                        }
                    };
                    if k != ActionKind::Rule && class.is_none() {
                        continue;
                    }
                    if self.over_limit(self.actions.len(), "actions", name.span) {
                        continue;
                    }
                    self.action_ix.insert(name.name.clone(), self.actions.len() as ActionId);
                    self.actions.push(ActionInfo {
                        id: self.actions.len() as ActionId,
                        name: name.name.clone(),
                        span: name.span,
                        kind: k,
                        class,
                        bind,
                        conditions: vec![],
                        consequences: vec![],
                        group: 0,
                        duration: None,
                        policy_only: false,
                        choose: None,
                        last_resort: None,
                        unless: Vec::new(),
                        owner_conds: 0,
                        global_conds: 0,
                        reads: 0,
                        swap_filter: None,
                        walk_order: None,
                        actor_gate: None,
                    });
                    self.action_var.push(var);
                }
                DeclKind::Consequence { name, .. } => {
                    if let Some(&prev) = self.cons_ix.get(&name.name) {
                        let first_line = line_of(&self.source, self.file.decls[prev].span);
                        self.error(name.span, DiagKind::Duplicate { what: "consequence", name: name.name.clone(), first_line });
                        continue;
                    }
                    let idx = self.file.decls.iter().position(|x| std::ptr::eq(x, d)).expect("decl is in the file");
                    self.cons_ix.insert(name.name.clone(), idx);
                }
                _ => {}
            }
        }
        // Group membership.
        let group_ix: HashMap<String, u16> = self.groups.iter().enumerate().map(|(i, g)| (g.name.clone(), i as u16)).collect();
        let mut member: HashMap<ActionId, Span> = HashMap::new();
        for d in self.decls() {
            if let DeclKind::IsInGroup { group, action } = &d.kind {
                let Some(&g) = group_ix.get(&group.name) else {
                    let known = Self::known(&group_ix);
                    self.error(
                        group.span,
                        DiagKind::UnknownName {
                            what: "action group",
                            name: group.name.clone(),
                            expected: format!("a group declared with `actionGroup` ({known})"),
                        },
                    );
                    continue;
                };
                let Some(a) = self.lookup_action(action) else { continue };
                if self.actions[a as usize].kind != ActionKind::Player {
                    self.error(
                        action.span,
                        DiagKind::Invalid {
                            what: format!("`{}` is not a player action", action.name),
                            expected: "only player actions (`action <Class> <name>`) belong to groups".into(),
                        },
                    );
                    continue;
                }
                if let Some(first) = member.insert(a, action.span) {
                    let first_line = line_of(&self.source, first);
                    self.error(
                        action.span,
                        DiagKind::Duplicate { what: "group membership of action", name: action.name.clone(), first_line },
                    );
                    continue;
                }
                self.actions[a as usize].group = g;
            }
        }
        if self.groups.is_empty() {
            self.groups.push(Group { name: "all".into(), weight: 1.0 });
        } else {
            for a in 0..self.actions.len() {
                if self.actions[a].kind == ActionKind::Player && !member.contains_key(&(a as ActionId)) {
                    let (span, name) = (self.actions[a].span, self.actions[a].name.clone());
                    let groups: Vec<&str> = self.groups.iter().map(|g| g.name.as_str()).collect();
                    let groups = groups.join(", ");
                    self.error(
                        span,
                        DiagKind::Invalid {
                            what: format!("player action `{name}` is in no action group"),
                            expected: format!("`isInGroup <group> {name}` with one of: {groups}"),
                        },
                    );
                }
            }
        }
        // Per-class action lists and create hooks: the parent's first (as `ClassInfo` promises),
        // then the class's own in declaration order. `class_order` puts parents before children.
        for &c in &self.class_order.clone() {
            let (mut actions, mut hooks) = match self.classes[c as usize].parent {
                Some(p) => (self.out_classes[p as usize].actions.clone(), self.out_classes[p as usize].create_hooks.clone()),
                None => (vec![], vec![]),
            };
            for (a, info) in self.actions.iter().enumerate() {
                if info.class == Some(c) {
                    match info.kind {
                        ActionKind::Player => actions.push(a as ActionId),
                        ActionKind::OnCreate => hooks.push(a as ActionId),
                        ActionKind::Rule | ActionKind::OnRound => {}
                    }
                }
            }
            self.out_classes[c as usize].actions = actions;
            self.out_classes[c as usize].create_hooks = hooks;
        }
    }

    fn lookup_action(&mut self, id: &ast::Ident) -> Option<ActionId> {
        match self.action_ix.get(&id.name) {
            Some(&a) => Some(a),
            None => {
                let known = Self::known(&self.action_ix);
                self.error(
                    id.span,
                    DiagKind::UnknownName { what: "action", name: id.name.clone(), expected: format!("a declared action ({known})") },
                );
                None
            }
        }
    }

    fn ctx_of(&self, a: ActionId) -> CtxKey {
        let info = &self.actions[a as usize];
        CtxKey { this: info.class, bind: info.bind, var: self.action_var[a as usize] }
    }

    fn compile_actions(&mut self) {
        // Where each duration was first given (`None` = the default duration).
        let mut durations: HashMap<Option<ActionId>, Span> = HashMap::new();
        for d in self.decls() {
            match &d.kind {
                DeclKind::Condition { action, expr } => {
                    let Some(a) = self.lookup_action(action) else { continue };
                    let cx = self.ctx_of(a);
                    if let Some(e) = self.top_expr(expr, cx, Some(Ty::Bool), "a condition") {
                        self.actions[a as usize].conditions.push(e);
                    }
                }
                DeclKind::HasConsequence { action, consequence } => {
                    let Some(a) = self.lookup_action(action) else { continue };
                    let Some(&ci) = self.cons_ix.get(&consequence.name) else {
                        let known = Self::known(&self.cons_ix);
                        self.error(
                            consequence.span,
                            DiagKind::UnknownName {
                                what: "consequence",
                                name: consequence.name.clone(),
                                expected: format!("a declared consequence ({known})"),
                            },
                        );
                        continue;
                    };
                    let cx = self.ctx_of(a);
                    if let Some(c) = self.consequence(ci, cx, consequence.span) {
                        self.actions[a as usize].consequences.push(c);
                    }
                }
                DeclKind::Duration { action, expr } => match action {
                    None => {
                        if let Some(&first) = durations.get(&None) {
                            let first_line = line_of(&self.source, first);
                            self.error(d.span, DiagKind::Duplicate { what: "default duration", name: "duration".into(), first_line });
                            continue;
                        }
                        durations.insert(None, d.span);
                        self.default_duration = self.duration_expr(expr, NO_CTX);
                    }
                    Some(a) => {
                        let Some(a) = self.lookup_action(a) else { continue };
                        if self.actions[a as usize].kind != ActionKind::Player {
                            self.error(
                                d.span,
                                DiagKind::Invalid {
                                    what: "a duration on a rule or create hook".into(),
                                    expected: "durations only on player actions".into(),
                                },
                            );
                            continue;
                        }
                        if let Some(&first) = durations.get(&Some(a)) {
                            let first_line = line_of(&self.source, first);
                            self.error(
                                d.span,
                                DiagKind::Duplicate { what: "duration of action", name: self.actions[a as usize].name.clone(), first_line },
                            );
                            continue;
                        }
                        durations.insert(Some(a), d.span);
                        let cx = self.ctx_of(a);
                        self.actions[a as usize].duration = self.duration_expr(expr, cx);
                    }
                },
                _ => {}
            }
        }
    }

    fn duration_expr(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<(ExprId, bool)> {
        let (id, ty) = self.top_expr_any(e, cx)?;
        match ty {
            Ty::Long => Some((id, false)),
            Ty::Double => Some((id, true)),
            t => {
                let found = self.ty_name(t);
                self.error(e.span, DiagKind::TypeMismatch { expected: "a number of seconds (long or double)".into(), found });
                None
            }
        }
    }

    fn compile_goals(&mut self) {
        let mut by_k: BTreeMap<u32, (ExprId, Span, String)> = BTreeMap::new();
        for d in self.decls() {
            if let DeclKind::Goal { k, k_span, expr } = &d.kind {
                if let Some((_, first, _)) = by_k.get(k) {
                    let first_line = line_of(&self.source, *first);
                    self.error(*k_span, DiagKind::Duplicate { what: "goal", name: k.to_string(), first_line });
                    continue;
                }
                if let Some(e) = self.top_expr(expr, NO_CTX, Some(Ty::Bool), "a goal") {
                    by_k.insert(*k, (e, *k_span, self.source.slice(expr.span).to_string()));
                }
            }
        }
        for (i, (k, (e, span, text))) in by_k.into_iter().enumerate() {
            if k as usize != i + 1 {
                self.error(
                    span,
                    DiagKind::Invalid {
                        what: format!("goal {k} follows goal {i}"),
                        expected: format!("goals numbered 1, 2, 3, … without gaps (goal {} is missing)", i + 1),
                    },
                );
            }
            self.goals.push(GoalInfo { k, expr: e, text, reads: 0 });
        }
    }

    fn lint_unused_consequences(&mut self) {
        let used: std::collections::HashSet<usize> = self.cons_memo.keys().map(|(i, _)| *i).collect();
        let mut unused: Vec<(usize, Span, String)> = Vec::new();
        for (name, &i) in &self.cons_ix {
            if !used.contains(&i) {
                unused.push((i, self.file.decls[i].span, name.clone()));
            }
        }
        unused.sort();
        for (_, span, name) in unused {
            self.warn(
                span,
                DiagKind::Lint(format!(
                    "consequence `{name}` is never attached (`hasConsequence <action> {name}`) or used by a conditional/timed consequence"
                )),
            );
        }
    }

    // ---------------------------------------------------------------- consequences

    fn consequence(&mut self, ci: usize, cx: CtxKey, use_span: Span) -> Option<ConsId> {
        if let Some(&id) = self.cons_memo.get(&(ci, cx)) {
            // Re-entered while compiling: a cycle. `cons_stack` holds (consequence, edge to the
            // next is timed). Through a timed edge it is a repeating timer, which is fine; through
            // conditional edges only it would recurse forever.
            if let Some(pos) = self.cons_stack.iter().position(|(i, _)| *i == ci)
                && self.cons_stack[pos..].iter().all(|(_, timed)| !timed)
            {
                let mut names: Vec<String> = self.cons_stack[pos..].iter().map(|(i, _)| self.cons_name(*i)).collect();
                names.push(self.cons_name(ci));
                self.error(use_span, DiagKind::ConsequenceCycle { name: self.cons_name(ci), cycle: names.join(" → ") });
                return None;
            }
            return Some(id);
        }
        let decl = &self.file.decls[ci];
        let DeclKind::Consequence { name, body } = &decl.kind else { unreachable!("cons_ix points at consequences") };
        let id = self.conses.len() as ConsId;
        self.conses.push(ConsInfo { name: name.name.clone(), span: decl.span, code: Cons::EndSession, bind: cx.bind });
        self.cons_depth.push(1);
        self.cons_memo.insert((ci, cx), id);
        let code = self.consequence_body(ci, body, cx, decl.span)?;
        if let Cons::Conditional { then, .. } = code {
            let depth = 1 + self.cons_depth[then as usize];
            self.cons_depth[id as usize] = depth;
            if depth > MAX_CHAIN {
                self.chain_too_deep(use_span);
                return None;
            }
        }
        self.conses[id as usize].code = code;
        Some(id)
    }

    fn chain_too_deep(&mut self, span: Span) {
        self.error(
            span,
            DiagKind::Invalid {
                what: format!("consequences chain more than {MAX_CHAIN} deep (conditional/timed targets)"),
                expected: format!("at most {MAX_CHAIN} consequences applying one another in a row"),
            },
        );
    }

    fn cons_name(&self, ci: usize) -> String {
        match &self.file.decls[ci].kind {
            DeclKind::Consequence { name, .. } => name.name.clone(),
            _ => "?".into(),
        }
    }

    fn target(&mut self, ci: usize, id: &ast::Ident, cx: CtxKey, timed: bool) -> Option<ConsId> {
        let Some(&ti) = self.cons_ix.get(&id.name) else {
            let known = Self::known(&self.cons_ix);
            self.error(
                id.span,
                DiagKind::UnknownName { what: "consequence", name: id.name.clone(), expected: format!("a declared consequence ({known})") },
            );
            return None;
        };
        if self.cons_stack.len() >= MAX_CHAIN {
            self.chain_too_deep(id.span);
            return None;
        }
        self.cons_stack.push((ci, timed));
        let r = self.consequence(ti, cx, id.span);
        self.cons_stack.pop();
        r
    }

    fn consequence_body(&mut self, ci: usize, body: &ConsBody, cx: CtxKey, span: Span) -> Option<Cons> {
        Some(match body {
            ConsBody::Direct(e) => {
                let ExprKind::Binary(BinOp::Assign, lhs, rhs) = &e.kind else {
                    self.error(
                        e.span,
                        DiagKind::Invalid {
                            what: "a direct consequence that assigns nothing".into(),
                            expected: "an assignment `<attribute> = <expression>`".into(),
                        },
                    );
                    return None;
                };
                let (place, ty) = self.place(lhs, cx)?;
                let start = self.begin();
                let vt = self.expr(rhs, cx)?;
                self.coerce(vt, ty, rhs.span)?;
                let value = self.end(start)?;
                Cons::Assign { place, value }
            }
            ConsBody::Conditional(c, t) => {
                let cond = self.top_expr(c, cx, Some(Ty::Bool), "the condition of a conditional consequence")?;
                let then = self.target(ci, t, cx, false)?;
                Cons::Conditional { cond, then }
            }
            ConsBody::Timed(d, t) => {
                let (delay, delay_is_double) = self.duration_expr(d, cx)?;
                let then = self.target(ci, t, cx, true)?;
                Cons::Timed { delay, delay_is_double, then }
            }
            ConsBody::Create(what) => Cons::Create { god: self.god_sel(what, cx)?, assign: None },
            ConsBody::CreateAndAssign(what, place) => {
                let god = self.god_sel(what, cx)?;
                let (p, ty) = self.place(place, cx)?;
                let made = match god {
                    GodSel::Fixed(g) => self.gods[g as usize].class,
                    GodSel::Bound => match cx.bind {
                        BindKind::God(c) => c,
                        _ => unreachable!("god_sel checked the binding"),
                    },
                };
                match ty {
                    Ty::Obj(want) if self.class_is_sub(made, want) => {}
                    _ => {
                        let (expected, found) = (self.ty_name(ty), self.ty_name(Ty::Obj(made)));
                        self.error(
                            place.span,
                            DiagKind::TypeMismatch {
                                expected: format!("an attribute of type object:{}", found.trim_start_matches("object:")),
                                found: expected,
                            },
                        );
                        return None;
                    }
                }
                Cons::Create { god, assign: Some(p) }
            }
            ConsBody::GameIncrease { path, by } => {
                let mut fixed: Vec<String> = Vec::new();
                let mut rest: Vec<Option<String>> = Vec::new();
                let mut dynamic: Vec<Segment> = Vec::new();
                for seg in path {
                    match self.store_segment(seg, cx)? {
                        Ok(name) if rest.is_empty() => fixed.extend(name),
                        Ok(name) => {
                            for n in name {
                                let s = self.intern(&n);
                                rest.push(Some(n));
                                dynamic.push(Segment::Sym(s));
                            }
                        }
                        Err(e) => {
                            rest.push(None);
                            dynamic.push(Segment::Dynamic(e));
                        }
                    }
                }
                if fixed.len() == 1 && rest.is_empty() && BUILTINS.contains(&fixed[0].as_str()) {
                    self.error(
                        span,
                        DiagKind::Invalid {
                            what: format!("`game increase {}` on a built-in game value", fixed[0]),
                            expected: format!("a counter name other than {}", BUILTINS.join(", ")),
                        },
                    );
                    return None;
                }
                if fixed.last().map(|s| s.as_str()) == Some("sum") && rest.is_empty() {
                    self.error(
                        span,
                        DiagKind::Invalid {
                            what: "`game increase` on a `sum`".into(),
                            expected: "a counter path; `sum` is computed from the counters below it".into(),
                        },
                    );
                    return None;
                }
                let by = match by {
                    Some(b) => Some(self.top_expr(b, cx, Some(Ty::Long), "the amount after `by`")?),
                    None => None,
                };
                let req = self.store_req(fixed);
                if !rest.is_empty() {
                    self.dyn_incs.push((self.cons_memo[&(ci, cx)], req, rest));
                }
                Cons::GameIncrease { node: req as u32, rest: dynamic, by }
            }
            ConsBody::Delete(e) => {
                let start = self.begin();
                let t = self.expr(e, cx)?;
                if !matches!(t, Ty::Obj(_)) {
                    let found = self.ty_name(t);
                    self.error(e.span, DiagKind::TypeMismatch { expected: "an object (e.g. `this` or `this.fruit`)".into(), found });
                    return None;
                }
                Cons::Delete { obj: self.end(start)? }
            }
            ConsBody::EndSession => Cons::EndSession,
            ConsBody::EndTurn => {
                if self.x.turn_decl.is_none() {
                    self.error(
                        span,
                        DiagKind::Invalid {
                            what: "`endTurn` in a game without turns".into(),
                            expected: "a `turn <Class> <side>` line".into(),
                        },
                    );
                    return None;
                }
                Cons::EndTurn
            }
            ConsBody::Do(e) => return self.tile_do(e, cx),
            // The parser reported it.
            ConsBody::Error => return None,
        })
    }

    /// One `game increase` segment: fixed names (`String built`, `building`, `a.b.c` with an
    /// unknown root), or a string expression computed at run time (`this.name`).
    fn store_segment(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<Result<Vec<String>, ExprId>> {
        match &e.kind {
            ExprKind::Lit(Lit::Str(s)) => return Some(Ok(vec![s.clone()])),
            ExprKind::Lit(Lit::Long(_)) => return Some(Ok(vec![self.source.slice(e.span).to_string()])),
            ExprKind::Path(p) if p.len() == 1 && p[0].name != "this" => return Some(Ok(vec![p[0].name.clone()])),
            ExprKind::Path(p) if !self.is_path_root(&p[0].name, cx) => return Some(Ok(p.iter().map(|i| i.name.clone()).collect())),
            _ => {}
        }
        let start = self.begin();
        let t = self.expr(e, cx)?;
        if t != Ty::Str {
            let found = self.ty_name(t);
            self.error(e.span, DiagKind::TypeMismatch { expected: "a string (a game value store path segment)".into(), found });
            return None;
        }
        Some(Err(self.end(start)?))
    }

    fn is_path_root(&self, name: &str, cx: CtxKey) -> bool {
        name == "this"
            || self.god_ix.contains_key(name)
            || match cx.bind {
                BindKind::God(c) | BindKind::Instance(c) => self.classes[c as usize].name == name,
                BindKind::None | BindKind::Number(..) | BindKind::Hex => false,
            }
            || (cx.var != NO_VAR && self.syms[cx.var as usize] == name)
    }

    fn store_req(&mut self, segs: Vec<String>) -> usize {
        self.store_reqs.push(StoreReq { segs, read: None });
        self.store_reqs.len() - 1
    }

    fn god_sel(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<GodSel> {
        let name = match &e.kind {
            ExprKind::Path(p) if p.len() == 1 => &p[0],
            _ => {
                self.error(
                    e.span,
                    DiagKind::Unexpected {
                        found: format!("`{}`", self.source.slice(e.span)),
                        expected: "an object description name, or the class bound by `forEveryGOD`".into(),
                    },
                );
                return None;
            }
        };
        if let Some(&g) = self.god_ix.get(&name.name) {
            return Some(GodSel::Fixed(g));
        }
        if let BindKind::God(c) = cx.bind
            && self.classes[c as usize].name == name.name
        {
            return Some(GodSel::Bound);
        }
        let expected = if self.class_ix.contains_key(&name.name) {
            format!("an object description; `{}` is a class, usable here only inside an action with `forEveryGOD {}`", name.name, name.name)
        } else {
            format!("a declared object description ({})", Self::known(&self.god_ix))
        };
        self.error(name.span, DiagKind::UnknownName { what: "object description", name: name.name.clone(), expected });
        None
    }

    // ---------------------------------------------------------------- expressions

    fn begin(&mut self) -> usize {
        self.depth = 0;
        self.code.len()
    }

    fn end(&mut self, start: usize) -> Option<ExprId> {
        if self.max_depth > 32 {
            self.max_depth = 0;
            let span = self.spans[start];
            self.error(
                span,
                DiagKind::Invalid {
                    what: "an expression nested too deeply".into(),
                    expected: "at most 32 pending values; split it with brackets or attributes".into(),
                },
            );
            return None;
        }
        Some(ExprId { start: start as u32, len: (self.code.len() - start) as u32 })
    }

    fn emit(&mut self, op: Op, span: Span) {
        let delta: isize = match op {
            Op::Const(_)
            | Op::Slot(_)
            | Op::This(_)
            | Op::Bound(_)
            | Op::ThisConst(_)
            | Op::BoundConst(_)
            | Op::GodInit(_)
            | Op::GodConst(_)
            | Op::NamedConst(..)
            | Op::ThisObj
            | Op::BoundObj
            | Op::GodName
            | Op::StoreOwn(_)
            | Op::StoreSum(_)
            | Op::Time
            | Op::SessionTime
            | Op::Sessions
            | Op::Moves
            | Op::Agg(_)
            | Op::Actor
            | Op::Round
            | Op::Turns
            | Op::ToMove => 1,
            Op::Field(_)
            | Op::FieldConst(_)
            | Op::NameOf
            | Op::NegL
            | Op::NegD
            | Op::L2D
            | Op::L2DUnder
            | Op::Not
            | Op::Load
            | Op::Skip(_) => 0,
            Op::Call(b) => 1 - b.arity() as isize,
            Op::GridLine(_) => -3,
            Op::GridGroupLead(_) => -2,
            _ => -1,
        };
        self.depth = (self.depth as isize + delta).max(0) as usize;
        self.max_depth = self.max_depth.max(self.depth);
        if let Op::Slot(_) = op {
            self.slot_fixups.push(self.code.len());
        }
        self.code.push(op);
        self.spans.push(span);
    }

    fn top_expr(&mut self, e: &ast::Expr, cx: CtxKey, want: Option<Ty>, what: &str) -> Option<ExprId> {
        let start = self.begin();
        let t = self.expr(e, cx)?;
        if let Some(w) = want
            && t != w
        {
            let found = self.ty_name(t);
            let expected = format!("{} for {what}", self.ty_name(w));
            self.error(e.span, DiagKind::TypeMismatch { expected, found });
            return None;
        }
        self.end(start)
    }

    fn top_expr_any(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<(ExprId, Ty)> {
        let start = self.begin();
        let t = self.expr(e, cx)?;
        Some((self.end(start)?, t))
    }

    fn coerce(&mut self, found: Ty, want: Ty, span: Span) -> Option<()> {
        match (found, want) {
            (a, b) if a == b => Some(()),
            (Ty::Long, Ty::Double) => {
                self.emit(Op::L2D, span);
                Some(())
            }
            (Ty::Null, Ty::Obj(_)) => Some(()),
            (Ty::Obj(a), Ty::Obj(b)) if self.class_is_sub(a, b) => Some(()),
            _ => {
                let (expected, found) = (self.ty_name(want), self.ty_name(found));
                self.error(span, DiagKind::TypeMismatch { expected, found });
                None
            }
        }
    }

    fn expr(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<Ty> {
        match &e.kind {
            ExprKind::Lit(l) => {
                let (v, t) = match l {
                    Lit::Long(v) => (*v, Ty::Long),
                    Lit::Double(v) => (v.to_bits() as i64, Ty::Double),
                    Lit::Bool(b) => (*b as i64, Ty::Bool),
                    Lit::Str(s) => (self.intern(s), Ty::Str),
                    Lit::Null => (NULL, Ty::Null),
                };
                self.emit(Op::Const(v), e.span);
                Some(t)
            }
            ExprKind::ObjRef(_) => {
                // Reuse the literal resolver for `object:name`.
                let any = Ty::Obj(0);
                let ty = match &e.kind {
                    ExprKind::ObjRef(n) => self.god_ix.get(&n.name).map(|&g| Ty::Obj(self.god_decl[g as usize].1)).unwrap_or(any),
                    _ => any,
                };
                let v = self.literal(e, ty)?;
                self.emit(Op::Const(v), e.span);
                Some(ty)
            }
            ExprKind::GameValue(segs) => self.game_value(segs, e.span),
            ExprKind::Path(p) => self.path(p, cx),
            ExprKind::Unary(op, inner) => {
                let t = self.expr(inner, cx)?;
                match (op, t) {
                    (UnOp::Neg, Ty::Long) => self.emit(Op::NegL, e.span),
                    (UnOp::Neg, Ty::Double) => self.emit(Op::NegD, e.span),
                    (UnOp::Not, Ty::Bool) => self.emit(Op::Not, e.span),
                    _ => {
                        let expected = if *op == UnOp::Neg { "a number after `-`" } else { "a boolean after `!`/`not`" };
                        let found = self.ty_name(t);
                        self.error(inner.span, DiagKind::TypeMismatch { expected: expected.into(), found });
                        return None;
                    }
                }
                Some(t)
            }
            ExprKind::Binary(op, l, r) => self.binary(*op, l, r, e.span, cx),
            ExprKind::Call(name, args) => self.call(name, args, e.span, cx),
            ExprKind::Index(g, x, y) => {
                self.grid_cell(g, x, y, cx)?;
                self.emit(Op::Load, e.span);
                Some(Ty::Long)
            }
        }
    }

    fn binary(&mut self, op: BinOp, l: &ast::Expr, r: &ast::Expr, span: Span, cx: CtxKey) -> Option<Ty> {
        let opspan = Span { lo: l.span.hi, hi: r.span.lo };
        match op {
            BinOp::Assign => {
                self.error(
                    opspan,
                    DiagKind::Invalid {
                        what: "`=` inside an expression".into(),
                        expected: "`==` to compare; assignment only as the whole of a direct consequence".into(),
                    },
                );
                None
            }
            BinOp::And | BinOp::Or => {
                let lt = self.expr(l, cx)?;
                self.want_bool(lt, l.span)?;
                let jump_at = self.code.len();
                self.emit(if op == BinOp::And { Op::AndJump(0) } else { Op::OrJump(0) }, span);
                let rt = self.expr(r, cx)?;
                self.want_bool(rt, r.span)?;
                let off = (self.code.len() - jump_at) as u32;
                self.code[jump_at] = if op == BinOp::And { Op::AndJump(off) } else { Op::OrJump(off) };
                Some(Ty::Bool)
            }
            BinOp::Xor => {
                let lt = self.expr(l, cx)?;
                self.want_bool(lt, l.span)?;
                let rt = self.expr(r, cx)?;
                self.want_bool(rt, r.span)?;
                self.emit(Op::Xor, span);
                Some(Ty::Bool)
            }
            _ => {
                let lt = self.expr(l, cx)?;
                let rt = self.expr(r, cx)?;
                let numeric = |t: Ty| matches!(t, Ty::Long | Ty::Double);
                if numeric(lt) && numeric(rt) {
                    let dbl = lt == Ty::Double || rt == Ty::Double;
                    if dbl && lt == Ty::Long {
                        self.emit(Op::L2DUnder, span);
                    }
                    if dbl && rt == Ty::Long {
                        self.emit(Op::L2D, span);
                    }
                    let (o, t) = match (op, dbl) {
                        (BinOp::Add, false) => (Op::AddL, Ty::Long),
                        (BinOp::Sub, false) => (Op::SubL, Ty::Long),
                        (BinOp::Mul, false) => (Op::MulL, Ty::Long),
                        (BinOp::Div, false) => (Op::DivL, Ty::Long),
                        (BinOp::Add, true) => (Op::AddD, Ty::Double),
                        (BinOp::Sub, true) => (Op::SubD, Ty::Double),
                        (BinOp::Mul, true) => (Op::MulD, Ty::Double),
                        (BinOp::Div, true) => (Op::DivD, Ty::Double),
                        (BinOp::Eq, false) => (Op::Eq, Ty::Bool),
                        (BinOp::Ne, false) => (Op::Ne, Ty::Bool),
                        (BinOp::Lt, false) => (Op::LtL, Ty::Bool),
                        (BinOp::Le, false) => (Op::LeL, Ty::Bool),
                        (BinOp::Gt, false) => (Op::GtL, Ty::Bool),
                        (BinOp::Ge, false) => (Op::GeL, Ty::Bool),
                        (BinOp::Eq, true) => (Op::EqD, Ty::Bool),
                        (BinOp::Ne, true) => (Op::NeD, Ty::Bool),
                        (BinOp::Lt, true) => (Op::LtD, Ty::Bool),
                        (BinOp::Le, true) => (Op::LeD, Ty::Bool),
                        (BinOp::Gt, true) => (Op::GtD, Ty::Bool),
                        (BinOp::Ge, true) => (Op::GeD, Ty::Bool),
                        _ => unreachable!("logical operators handled above"),
                    };
                    // Operator errors point at the operator's span, for the runtime division check.
                    self.emit(o, if matches!(o, Op::DivL | Op::DivD) { span } else { opspan });
                    return Some(t);
                }
                if matches!(op, BinOp::Eq | BinOp::Ne) {
                    let same = match (lt, rt) {
                        (a, b) if a == b => true,
                        (Ty::Obj(_), Ty::Null) | (Ty::Null, Ty::Obj(_)) => true,
                        (Ty::Obj(a), Ty::Obj(b)) => self.class_is_sub(a, b) || self.class_is_sub(b, a),
                        _ => false,
                    };
                    if same {
                        self.emit(if op == BinOp::Eq { Op::Eq } else { Op::Ne }, opspan);
                        return Some(Ty::Bool);
                    }
                    let (a, b) = (self.ty_name(lt), self.ty_name(rt));
                    self.error(
                        span,
                        DiagKind::TypeMismatch {
                            expected: format!("both sides of `{}` of one type ({a} on the left)", op.symbol()),
                            found: b,
                        },
                    );
                    return None;
                }
                let bad = if numeric(lt) { (rt, r.span) } else { (lt, l.span) };
                let found = self.ty_name(bad.0);
                self.error(bad.1, DiagKind::TypeMismatch { expected: format!("a number (long or double) for `{}`", op.symbol()), found });
                None
            }
        }
    }

    fn want_bool(&mut self, t: Ty, span: Span) -> Option<()> {
        if t == Ty::Bool {
            Some(())
        } else {
            let found = self.ty_name(t);
            self.error(span, DiagKind::TypeMismatch { expected: "boolean for a logical operator".into(), found });
            None
        }
    }

    fn game_value(&mut self, segs: &[ast::Ident], span: Span) -> Option<Ty> {
        if segs.len() == 1 {
            let op = match segs[0].name.as_str() {
                "time" => Some(Op::Time),
                "sessionTime" => Some(Op::SessionTime),
                "sessionsFinished" => Some(Op::Sessions),
                "moves" => Some(Op::Moves),
                "round" | "turns" | "toMove" | "actor" if self.x.turn_decl.is_none() => {
                    self.error(
                        span,
                        DiagKind::Invalid {
                            what: format!("`game.{}` in a game without turns", segs[0].name),
                            expected: "a `turn <Class> <side>` line".into(),
                        },
                    );
                    return None;
                }
                "round" => Some(Op::Round),
                "turns" => Some(Op::Turns),
                "toMove" => Some(Op::ToMove),
                "actor" => {
                    self.emit(Op::Actor, span);
                    return Some(Ty::Obj(self.x.turn_decl.expect("checked above").0));
                }
                _ => None,
            };
            if let Some(op) = op {
                self.emit(op, span);
                return Some(Ty::Long);
            }
        }
        let mut path: Vec<String> = match self.game_defs.get(&segs[0].name) {
            Some((p, _)) => p.clone(),
            None => vec![segs[0].name.clone()],
        };
        path.extend(segs[1..].iter().map(|s| s.name.clone()));
        let sum = path.last().map(|s| s.as_str()) == Some("sum");
        if sum {
            path.pop();
            if path.is_empty() {
                self.error(
                    span,
                    DiagKind::Invalid { what: "`game.sum`".into(), expected: "a path before `sum`, e.g. `game.building.built.sum`".into() },
                );
                return None;
            }
        }
        let req = self.store_req(path) as u32;
        self.store_reqs[req as usize].read = Some((span, sum));
        self.emit(if sum { Op::StoreSum(req) } else { Op::StoreOwn(req) }, span);
        Some(Ty::Long)
    }

    fn path_base(&mut self, root: &ast::Ident, cx: CtxKey) -> Option<Base> {
        let name = root.name.as_str();
        if cx.var != NO_VAR && self.syms[cx.var as usize] == name {
            return Some(Base::Num);
        }
        if name == "this" {
            return match cx.this {
                Some(c) => Some(Base::This(c)),
                None => {
                    self.error(
                        root.span,
                        DiagKind::Invalid {
                            what: "`this` in a rule or goal, which belongs to no object".into(),
                            expected: "an object name such as `global`".into(),
                        },
                    );
                    None
                }
            };
        }
        match cx.bind {
            BindKind::Instance(c) if self.classes[c as usize].name == name => return Some(Base::BoundObj(c)),
            BindKind::God(c) if self.classes[c as usize].name == name => return Some(Base::BoundGod(c)),
            _ => {}
        }
        if let Some(&g) = self.god_ix.get(name) {
            return match self.named.get(&g) {
                Some(&id) => Some(Base::Named(id, self.gods[g as usize].class)),
                None => {
                    self.error(
                        root.span,
                        DiagKind::Invalid {
                            what: format!("`{name}` has no `initial` instance to refer to"),
                            expected: format!("`initial {name}`, or `this`/a bound class"),
                        },
                    );
                    None
                }
            };
        }
        let expected = if self.class_ix.contains_key(name) {
            format!(
                "`this`, an object name or the bound class; class `{name}` is not bound by `forEveryGOD`/`forEveryInstance` in this action"
            )
        } else {
            format!("`this`, an object name ({}) or the bound class", Self::known(&self.god_ix))
        };
        self.error(root.span, DiagKind::UnknownName { what: "object", name: name.to_string(), expected });
        None
    }

    fn no_such_attr(&mut self, class: ClassId, id: &ast::Ident) {
        let ci = &self.out_classes[class as usize];
        let known: Vec<String> = ci.attrs.iter().chain(&ci.consts).map(|a| a.name.clone()).collect();
        self.error(
            id.span,
            DiagKind::UnknownAttribute {
                class: ci.name.clone(),
                attr: id.name.clone(),
                known: if known.is_empty() { "none declared".into() } else { known.join(", ") },
            },
        );
    }

    /// Reads an attribute path; pushes its value.
    fn path(&mut self, p: &[ast::Ident], cx: CtxKey) -> Option<Ty> {
        let base = self.path_base(&p[0], cx)?;
        let span0 = p[0].span;
        if let Base::Num = base {
            if p.len() > 1 {
                self.error(
                    p[1].span,
                    DiagKind::Invalid {
                        what: format!("`.{}` after the bound number `{}`", p[1].name, p[0].name),
                        expected: "the number alone".into(),
                    },
                );
                return None;
            }
            self.emit(Op::BoundObj, span0);
            return Some(Ty::Long);
        }
        // Just an object.
        if p.len() == 1 {
            return match base {
                Base::Num => unreachable!("handled above"),
                Base::This(c) => {
                    self.emit(Op::ThisObj, span0);
                    Some(Ty::Obj(c))
                }
                Base::BoundObj(c) => {
                    self.emit(Op::BoundObj, span0);
                    Some(Ty::Obj(c))
                }
                Base::Named(id, c) => {
                    self.emit(Op::Const(id as i64), span0);
                    Some(Ty::Obj(c))
                }
                Base::BoundGod(_) => {
                    self.error(
                        span0,
                        DiagKind::Invalid {
                            what: format!("`{}` is an object description here (forEveryGOD), not an object", p[0].name),
                            expected: format!("one of its attributes, e.g. `{}.<attribute>`", p[0].name),
                        },
                    );
                    None
                }
            };
        }
        let class = match base {
            Base::This(c) | Base::BoundObj(c) | Base::BoundGod(c) | Base::Named(_, c) => c,
            Base::Num => unreachable!("handled above"),
        };
        let first = &p[1];
        let span = span0.to(first.span);
        let mut ty = match self.find_attr(class, &first.name) {
            Some((is_const, idx, ty)) => {
                if self.has_delete && !is_const && !matches!(base, Base::BoundGod(_)) {
                    // Checked: the object may have been deleted.
                    let obj = match base {
                        Base::This(_) => Op::ThisObj,
                        Base::BoundObj(_) => Op::BoundObj,
                        Base::Named(id, _) => Op::Const(id as i64),
                        Base::BoundGod(_) | Base::Num => unreachable!("excluded above"),
                    };
                    self.emit(obj, span0);
                    self.emit(Op::Field(idx as u32), span);
                    ty
                } else {
                    let op = match (base, is_const) {
                        (Base::This(_), false) => Op::This(idx as u32),
                        (Base::This(_), true) => Op::ThisConst(idx as u32),
                        (Base::BoundObj(_), false) => Op::Bound(idx as u32),
                        (Base::BoundObj(_), true) => Op::BoundConst(idx as u32),
                        (Base::BoundGod(_), false) => Op::GodInit(idx as u32),
                        (Base::BoundGod(_), true) => Op::GodConst(idx as u32),
                        (Base::Named(id, _), false) => Op::Slot(self.initial_base[id as usize] + idx as u32),
                        (Base::Named(id, _), true) => {
                            let g = self.initial[id as usize];
                            if self.x.params.iter().any(|p| p.god == g && p.is_const && p.idx as usize == idx) {
                                Op::NamedConst(g, idx as u32)
                            } else {
                                Op::Const(self.gods[g as usize].consts[idx])
                            }
                        }
                        (Base::Num, _) => unreachable!("handled above"),
                    };
                    self.emit(op, span);
                    ty
                }
            }
            None if first.name == "name" => {
                match base {
                    Base::This(_) => {
                        self.emit(Op::ThisObj, span0);
                        self.emit(Op::NameOf, span);
                    }
                    Base::BoundObj(_) => {
                        self.emit(Op::BoundObj, span0);
                        self.emit(Op::NameOf, span);
                    }
                    Base::BoundGod(_) => self.emit(Op::GodName, span),
                    Base::Named(id, _) => {
                        let s = self.gods[self.initial[id as usize] as usize].name_sym;
                        self.emit(Op::Const(s), span);
                    }
                    Base::Num => unreachable!("handled above"),
                }
                Ty::Str
            }
            None => {
                self.no_such_attr(class, first);
                return None;
            }
        };
        let mut span = span;
        for seg in &p[2..] {
            let Ty::Obj(c) = ty else {
                let found = self.ty_name(ty);
                self.error(seg.span, DiagKind::TypeMismatch { expected: format!("an object before `.{}`", seg.name), found });
                return None;
            };
            span = span.to(seg.span);
            ty = match self.find_attr(c, &seg.name) {
                Some((false, idx, t)) => {
                    self.emit(Op::Field(idx as u32), span);
                    t
                }
                Some((true, idx, t)) => {
                    self.emit(Op::FieldConst(idx as u32), span);
                    t
                }
                None if seg.name == "name" => {
                    self.emit(Op::NameOf, span);
                    Ty::Str
                }
                None => {
                    self.no_such_attr(c, seg);
                    return None;
                }
            };
        }
        Some(ty)
    }

    /// An assignment target: an instance attribute of an object.
    fn place(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<(Place, Ty)> {
        if let ExprKind::Index(g, x, y) = &e.kind {
            let start = self.begin();
            self.grid_cell(g, x, y, cx)?;
            let id = self.end(start)?;
            return Some((Place::Dyn(id), Ty::Long));
        }
        let ExprKind::Path(p) = &e.kind else {
            self.error(
                e.span,
                DiagKind::Unexpected {
                    found: format!("`{}`", self.source.slice(e.span)),
                    expected: "an attribute to assign to, such as `global.coins`".into(),
                },
            );
            return None;
        };
        if p.len() < 2 {
            self.error(
                e.span,
                DiagKind::Unexpected {
                    found: format!("`{}`", p[0].name),
                    expected: "an attribute to assign to, such as `this.isFree`".into(),
                },
            );
            return None;
        }
        let last = &p[p.len() - 1];
        let (class, place_of): (ClassId, Box<dyn Fn(u32) -> Place>) = if p.len() == 2 {
            let base = self.path_base(&p[0], cx)?;
            if let Base::Num = base {
                self.error(
                    p[1].span,
                    DiagKind::Invalid {
                        what: format!("`.{}` after the bound number `{}`", p[1].name, p[0].name),
                        expected: "an object attribute to assign to".into(),
                    },
                );
                return None;
            }
            if let Base::BoundGod(_) = base {
                self.error(
                    p[0].span,
                    DiagKind::Invalid {
                        what: format!("assigning to the description `{}` (forEveryGOD binds descriptions, which are constant)", p[0].name),
                        expected: "an attribute of `this`, a named object or a bound instance".into(),
                    },
                );
                return None;
            }
            if self.has_delete {
                // Checked writes: the object may have been deleted.
                let (op, c) = match base {
                    Base::This(c) => (Op::ThisObj, c),
                    Base::BoundObj(c) => (Op::BoundObj, c),
                    Base::Named(id, c) => (Op::Const(id as i64), c),
                    Base::BoundGod(_) | Base::Num => unreachable!("rejected above"),
                };
                let start = self.begin();
                self.emit(op, p[0].span);
                let id = self.end(start)?;
                (c, Box::new(move |o| Place::Field(id, o)))
            } else {
                match base {
                    Base::This(c) => (c, Box::new(Place::This)),
                    Base::BoundObj(c) => (c, Box::new(Place::Bound)),
                    Base::Named(id, c) => {
                        let slot = self.initial_base[id as usize];
                        (c, Box::new(move |o| Place::Slot(slot + o)))
                    }
                    Base::BoundGod(_) | Base::Num => unreachable!("rejected above"),
                }
            }
        } else {
            let start = self.begin();
            let t = self.path(&p[..p.len() - 1], cx)?;
            let Ty::Obj(c) = t else {
                let found = self.ty_name(t);
                self.error(last.span, DiagKind::TypeMismatch { expected: format!("an object before `.{}`", last.name), found });
                return None;
            };
            let id = self.end(start)?;
            (c, Box::new(move |o| Place::Field(id, o)))
        };
        match self.find_attr(class, &last.name) {
            Some((false, idx, ty)) => {
                self.assigned.insert(last.name.clone());
                Some((place_of(idx as u32), ty))
            }
            Some((true, _, _)) => {
                self.error(
                    last.span,
                    DiagKind::AssignToConstant { class: self.classes[class as usize].name.clone(), attr: last.name.clone() },
                );
                None
            }
            None => {
                self.no_such_attr(class, last);
                None
            }
        }
    }

    // ---------------------------------------------------------------- store layout

    fn finish(self) -> Program {
        let mut p = self.finish_program();
        p.action_groups = p.actions.iter().map(|a| a.group).collect();
        // What goals and outcomes read, for re-checking only what a move changed.
        for i in 0..p.goals.len() {
            p.goals[i].reads = p.reads(p.goals[i].expr);
        }
        for i in 0..p.outcomes.len() {
            p.outcomes[i].reads = p.reads(p.outcomes[i].expr);
        }
        for i in 0..p.actions.len() {
            // A rule that reads nothing (no condition, or constant ones) is always evaluated.
            let reads = p.actions[i].conditions.iter().fold(0, |m, &c| m | p.reads(c));
            p.actions[i].reads = if reads == 0 { super::deps::ALL } else { reads };
        }
        p
    }

    fn finish_program(self) -> Program {
        let mut syms = self.syms;
        let mut trie = Trie { paths: vec![String::new()], parent: vec![0], child: HashMap::new() };
        let req_nodes: Vec<u32> = self.store_reqs.iter().map(|r| trie.node(0, &r.segs)).collect();
        // Fixed names after a computed segment are looked up by symbol, so they need one.
        for (_, _, rest) in &self.dyn_incs {
            for name in rest.iter().flatten() {
                if !syms.contains(name) {
                    syms.push(name.clone());
                }
            }
        }
        // Every node a computed segment can start from gets a child for every symbol.
        let mut dyn_parents: Vec<u32> = Vec::new();
        for (_, req, rest) in &self.dyn_incs {
            let mut frontier = vec![req_nodes[*req]];
            for seg in rest {
                let mut next = Vec::new();
                for &n in &frontier {
                    dyn_parents.push(n);
                    for s in &syms {
                        let c = trie.node(n, std::slice::from_ref(s));
                        if seg.as_ref().is_none_or(|name| name == s) {
                            next.push(c);
                        }
                    }
                    if trie.paths.len() > MAX_STORE_NODES {
                        break;
                    }
                }
                frontier = next;
            }
        }
        dyn_parents.sort();
        dyn_parents.dedup();
        let mut dyn_base = vec![u32::MAX; trie.paths.len()];
        let mut dyn_children = Vec::new();
        for &n in &dyn_parents {
            dyn_base[n as usize] = dyn_children.len() as u32;
            for s in &syms {
                dyn_children.push(trie.child[&(n, s.clone())]);
            }
        }
        let Trie { paths, parent, .. } = trie;
        let n_nodes = paths.len() as u32;
        // Grids sit between the store and the objects.
        let grid_base = 2 * n_nodes;
        let store_slots = 2 * n_nodes + self.x.grid_slots;
        let mut code = self.code;
        for op in code.iter_mut() {
            match op {
                Op::StoreOwn(r) => *op = Op::StoreOwn(req_nodes[*r as usize]),
                Op::StoreSum(r) => *op = Op::StoreSum(req_nodes[*r as usize]),
                _ => {}
            }
        }
        for &i in &self.slot_fixups {
            if let Op::Slot(s) = code[i] {
                code[i] = Op::Slot(s + store_slots);
            }
        }
        let mut grids = self.x.grids.clone();
        for g in grids.iter_mut() {
            g.base += grid_base;
        }
        let rules_read_time = self
            .actions
            .iter()
            .filter(|a| a.kind == ActionKind::Rule)
            .flat_map(|a| a.conditions.iter())
            .any(|e| code[e.start as usize..(e.start + e.len) as usize].iter().any(|op| matches!(op, Op::Time | Op::SessionTime)));
        let mut conses = self.conses;
        for c in conses.iter_mut() {
            match &mut c.code {
                Cons::GameIncrease { node, .. } => *node = req_nodes[*node as usize],
                Cons::Assign { place: Place::Slot(s), .. } => *s += store_slots,
                Cons::Create { assign: Some(Place::Slot(s)), .. } => *s += store_slots,
                _ => {}
            }
        }
        // Leading conditions that never read the binding (no bound loads anywhere in their code,
        // aggregates included, conservatively) can be checked once per owner.
        let mut actions = self.actions;
        let mut spans = self.spans;
        for info in actions.iter_mut() {
            info.owner_conds =
                info.conditions.iter().take_while(|e| !reads_binding(&code[e.start as usize..(e.start + e.len) as usize])).count();
            info.global_conds = info.conditions[..info.owner_conds]
                .iter()
                .take_while(|e| !reads_owner(&code[e.start as usize..(e.start + e.len) as usize]))
                .count();
            // `this == game.actor` / `this.<attr> == game.actor` first (in either order).
            if info.owner_conds > 0 && info.kind == ActionKind::Player {
                let c = info.conditions[0];
                info.actor_gate = match code[c.start as usize..(c.start + c.len) as usize] {
                    [Op::ThisObj, Op::Actor, Op::Eq] | [Op::Actor, Op::ThisObj, Op::Eq] => Some(ActorGate::This),
                    [Op::This(o), Op::Actor, Op::Eq] | [Op::ThisObj, Op::Field(o), Op::Actor, Op::Eq] => Some(ActorGate::Attr(o)),
                    [Op::Actor, Op::This(o), Op::Eq] | [Op::Actor, Op::ThisObj, Op::Field(o), Op::Eq] => Some(ActorGate::Attr(o)),
                    _ => None,
                };
            }
            info.walk_order = walk_order(&code, info).map(|mut w| {
                // Sub-expressions evaluated on their own get their own copy of the code: an
                // expression is known by where it starts (X starts where the key does).
                let mut own = |e: ExprId| {
                    let start = code.len() as u32;
                    code.extend_from_within(e.start as usize..(e.start + e.len) as usize);
                    spans.extend_from_within(e.start as usize..(e.start + e.len) as usize);
                    ExprId { start, len: e.len }
                };
                w.from = own(w.from);
                for c in w.conds.iter_mut() {
                    match c {
                        CellCond::Hidden(x) => *x = own(*x),
                        CellCond::WalkBound { limit, .. } => *limit = own(*limit),
                        CellCond::Free | CellCond::Eval(_) => {}
                    }
                }
                w
            });
            // `<grid>.canSwap(<the bound number>, <constant>)` right after: a native filter.
            if let (BindKind::Number(..), Some(e)) = (info.bind, info.conditions.get(info.owner_conds))
                && let [Op::BoundObj, Op::Const(min), Op::GridCanSwap(g)] = code[e.start as usize..(e.start + e.len) as usize]
            {
                info.swap_filter = Some((g, min));
            }
        }
        // A class whose every player action opens with the same actor gate: move generation
        // passes over its objects that are not (or whose attribute is not) the actor at once.
        let mut classes = self.out_classes;
        for c in classes.iter_mut() {
            let gate = |&a: &ActionId| {
                let info = &actions[a as usize];
                if info.global_conds == 0 { info.actor_gate } else { None }
            };
            let first = c.actions.first().and_then(gate);
            c.actor_gate = first.filter(|_| c.actions.iter().all(|a| gate(a) == first));
        }
        let unless_sees_policy_only = actions.iter().any(|a| a.unless.iter().any(|&o| actions[o as usize].policy_only));
        let round_hooks: Vec<ActionId> =
            actions.iter().enumerate().filter(|(_, a)| a.kind == ActionKind::OnRound).map(|(i, _)| i as ActionId).collect();
        let has_filters = actions.iter().any(|a| a.policy_only || a.choose.is_some() || a.last_resort.is_some() || !a.unless.is_empty());
        let n_code = code.len();
        let n_conses = conses.len();
        let n_actions = actions.len();
        Program {
            source: self.source,
            syms,
            classes,
            gods: self.gods,
            rules: actions.iter().enumerate().filter(|(_, a)| a.kind == ActionKind::Rule).map(|(i, _)| i as ActionId).collect(),
            actions,
            conses,
            code,
            spans,
            initial: self.initial,
            goals: self.goals,
            groups: self.groups,
            store: StoreLayout { paths, parent, dyn_base, dyn_children },
            game_values: {
                let mut v: Vec<(String, String)> = self.game_defs.iter().map(|(n, (p, _))| (n.clone(), p.join("."))).collect();
                v.sort();
                v
            },
            limits: self.limits,
            default_duration: self.default_duration,
            rules_read_time,
            session_length: self.session_length,
            session_pause: self.session_pause,
            is_sub: self.is_sub,
            max_stack: 32,
            round_hooks,
            has_filters,
            players: self.x.players,
            turn: self.x.turn,
            outcomes: self.x.outcomes,
            hex: self.x.hex,
            occupants: self.x.occupants,
            grids,
            grid_slots: self.x.grid_slots,
            params: self.x.params,
            policies: self.x.policies,
            aggs: self.x.aggs,
            constraints: self.x.constraints,
            chance_fair: self.x.chance_fair,
            unless_sees_policy_only,
            overlays: Vec::new(),
            selected: Vec::new(),
            action_groups: Vec::new(),
            fast: {
                let mut f = super::fast::FastCode::default();
                f.resize(n_code);
                f.resize_conses(n_conses);
                f.resize_actions(n_actions);
                f
            },
        }
    }
}

/// Whether code reads the binding of its action (conservatively: any aggregate counts).
fn reads_binding(code: &[Op]) -> bool {
    code.iter().any(|op| {
        matches!(op, Op::Bound(_) | Op::BoundObj | Op::BoundConst(_) | Op::GodInit(_) | Op::GodConst(_) | Op::GodName | Op::Agg(_))
    })
}

/// Whether code reads the owner (`this`) of its action (conservatively: any aggregate, which
/// passes `this` on, counts).
fn reads_owner(code: &[Op]) -> bool {
    code.iter().any(|op| matches!(op, Op::This(_) | Op::ThisObj | Op::ThisConst(_) | Op::Agg(_) | Op::GridSumRuns(..)))
}

/// The walk order of a `forEveryHex` action whose `choose` key is `hex.walk(X, h)` or
/// `hex.walk(h, X)` (walks are symmetric) with X not reading `h`; and its bound condition, one
/// whose code is the key's followed by E and `<=`/`<`, E not reading `h`.
fn walk_order(code: &[Op], info: &ActionInfo) -> Option<WalkOrder> {
    let (BindKind::Hex, Some((_, key))) = (info.bind, info.choose) else { return None };
    let kc = &code[key.start as usize..(key.start + key.len) as usize];
    let n = kc.len();
    if n < 3 || kc[n - 1] != Op::Call(Builtin::HexWalk) {
        return None;
    }
    let from = if kc[n - 2] == Op::BoundObj {
        ExprId { start: key.start, len: key.len - 2 }
    } else if kc[0] == Op::BoundObj {
        ExprId { start: key.start + 1, len: key.len - 2 }
    } else {
        return None;
    };
    if reads_binding(&code[from.start as usize..(from.start + from.len) as usize]) {
        return None;
    }
    let bound = info.conditions.iter().position(|c| {
        let cc = &code[c.start as usize..(c.start + c.len) as usize];
        cc.len() > n + 1 && cc[..n] == *kc && matches!(cc[cc.len() - 1], Op::LeL | Op::LtL) && !reads_binding(&cc[n..cc.len() - 1])
    });
    let conds = info
        .conditions
        .iter()
        .enumerate()
        .skip(info.owner_conds)
        .map(|(i, &c)| {
            let cc = &code[c.start as usize..(c.start + c.len) as usize];
            let m = cc.len();
            if Some(i) == bound {
                CellCond::WalkBound { limit: ExprId { start: c.start + n as u32, len: (m - n - 1) as u32 }, strict: cc[m - 1] == Op::LtL }
            } else if cc == [Op::BoundObj, Op::Call(Builtin::HexFree)] {
                CellCond::Free
            } else if m > 2 && cc[0] == Op::BoundObj && cc[m - 1] == Op::Call(Builtin::HexHidden) && !reads_binding(&cc[1..m - 1]) {
                CellCond::Hidden(ExprId { start: c.start + 1, len: (m - 2) as u32 })
            } else {
                CellCond::Eval(c)
            }
        })
        .collect();
    Some(WalkOrder { from, bound, conds })
}

/// The game value store's nodes while they are laid out.
struct Trie {
    paths: Vec<String>,
    parent: Vec<u32>,
    child: HashMap<(u32, String), u32>,
}

impl Trie {
    /// The node below `from` along `segs`, created if new.
    fn node(&mut self, from: u32, segs: &[String]) -> u32 {
        let mut n = from;
        for s in segs {
            n = match self.child.get(&(n, s.clone())) {
                Some(&c) => c,
                None => {
                    let c = self.paths.len() as u32;
                    let p = if n == 0 { s.clone() } else { format!("{}.{}", self.paths[n as usize], s) };
                    self.paths.push(p);
                    self.parent.push(n);
                    self.child.insert((n, s.clone()), c);
                    c
                }
            };
        }
        n
    }
}
