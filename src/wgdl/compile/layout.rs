//! The last pass: the game-value store is laid out as a trie once every path and string symbol
//! is known, the ops that name store paths are patched, and the [`Program`] is assembled with
//! what the run time precomputes (read sets, walk orders, actor gates).

use super::*;
use crate::wgdl::run::links::Link;

impl Compiler<'_> {
    pub(super) fn finish(mut self) -> Program {
        let written = std::mem::take(&mut self.written);
        let mut p = self.finish_program();
        // The side is written through an object of the turn class, a subclass or a superclass.
        let side_written =
            p.turn.as_ref().map(|t| written.iter().any(|&(c, i)| i == t.side && (p.is_sub(c, t.class) || p.is_sub(t.class, c))));
        if let (Some(t), Some(w)) = (p.turn.as_mut(), side_written) {
            t.side_written = w;
        }
        p.action_groups = p.actions.iter().map(|a| a.group).collect();
        p.filter_flags = p.actions.iter().map(crate::wgdl::run::filters::filter_flags).collect();
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
            p.actions[i].reads = if reads == 0 { crate::wgdl::parts::ALL } else { reads };
        }
        for i in 0..p.aggs.len() {
            let e = p.aggs[i].expr;
            // The object counted is live.
            p.aggs[i].infallible = cannot_fail(&p.code[e.start as usize..(e.start + e.len) as usize], Op::BoundObj);
        }
        p.turn_order = p.fixed_turn_order();
        p
    }

    pub(super) fn finish_program(self) -> Program {
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
                && let [Op::BoundObj, Op::Const(min), Op::Call(Builtin::GRID_CAN_SWAP, g, 2)] =
                    code[e.start as usize..(e.start + e.len) as usize]
            {
                info.swap_filter = Some((g, min));
            }
            // `<grid>[<the bound number>, k] <compared with> c` as the only condition after them,
            // every cell it can read on the grid: a row scan.
            if let (BindKind::Number(lo, hi), [e]) = (info.bind, &info.conditions[info.owner_conds..])
                && let [Op::BoundObj, Op::Const(k), Op::GridCell(g), Op::Load, Op::Const(c), op] =
                    code[e.start as usize..(e.start + e.len) as usize]
                && matches!(op, Op::Eq | Op::Ne | Op::LtL | Op::LeL | Op::GtL | Op::GeL)
                && let Some(gi) = grids.get(g as usize)
                && lo <= hi
                && hi < gi.width
                && (0..gi.height as i64).contains(&k)
            {
                info.row_scan = Some(RowScan { row: gi.base as usize + k as usize * gi.width as usize, op, c });
            }
            // Cell tests on a board binding (`board[to] == 0`): tested natively by the lister.
            if info.row_scan.is_none() && info.swap_filter.is_none() {
                info.cell_tests = super::cells::cell_tests(&code, info, &grids, &self.board.tables);
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
        let has_chance = actions.iter().any(|a| a.chance.is_some());
        let links = plan_links(&code, &grids, &self.board.dirsets);
        let n_code = code.len();
        let n_conses = conses.len();
        let n_actions = actions.len();
        let initial_ends: Vec<usize> = self
            .initial
            .iter()
            .scan(0usize, |end, &g| {
                *end += self.gods[g as usize].init.len();
                Some(*end)
            })
            .collect();
        Program {
            initial_ends,
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
            turn_order: None,
            outcomes: self.x.outcomes,
            stuck_outcomes: self.board.stuck_outcomes,
            hex: self.x.hex,
            occupants: self.x.occupants,
            grids,
            views: self.x.views,
            grid_slots: self.x.grid_slots,
            has_chance,
            board: crate::wgdl::board::Boards {
                tables: self.board.tables,
                notations: self.board.notations,
                pieces: {
                    let mut p = vec![Vec::new(); self.x.grids.len()];
                    for (g, (cs, _)) in self.board.pieces {
                        p[g as usize] = cs;
                    }
                    p
                },
                start: self.board.start_values,
                links,
                dirsets: self.board.dirsets,
                structural: self.board.structural,
                can_move: self.board.can_move,
                options: self.x.opts.clone(),
            },
            params: self.x.params,
            policies: self.x.policies,
            aggs: self.x.aggs,
            constraints: self.x.constraints,
            chance_fair: self.x.chance_fair,
            unless_sees_policy_only,
            overlays: Vec::new(),
            selected: Vec::new(),
            action_groups: Vec::new(),
            filter_flags: Vec::new(),
            fast: {
                let mut f = crate::wgdl::program::FastCode::default().for_tier(crate::wgdl::Tier::default_for_new());
                f.resize(n_code);
                f.resize_conses(n_conses);
                f.resize_actions(n_actions);
                f
            },
        }
    }
}

/// Whether `code` cannot fail: every instruction is [`infallible`], or reads an attribute
/// directly through `live` (`ThisObj` or `BoundObj`), an object known to be live there (as
/// games that delete objects compile `this.x` and `bound.x`).
fn cannot_fail(code: &[Op], live: Op) -> bool {
    code.iter()
        .enumerate()
        .all(|(k, &op)| infallible(op) || (matches!(op, Op::Field(_) | Op::FieldConst(_)) && k > 0 && code[k - 1] == live))
}

/// An instruction that cannot fail: a load, a comparison, a logical operator, double arithmetic.
fn infallible(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        Const(_)
            | Slot(_)
            | This(_)
            | Bound(_)
            | ThisConst(_)
            | BoundConst(_)
            | GodInit(_)
            | GodConst(_)
            | NamedConst(..)
            | ThisObj
            | BoundObj
            | GodName
            | StoreOwn(_)
            | StoreSum(_)
            | Time
            | SessionTime
            | Sessions
            | Moves
            | Actor
            | Round
            | Turns
            | ToMove
            | Eq
            | Ne
            | LtL
            | LeL
            | GtL
            | GeL
            | EqD
            | NeD
            | LtD
            | LeD
            | GtD
            | GeD
            | Not
            | Xor
            | AndJump(_)
            | OrJump(_)
            | L2D
            | L2DUnder
            | AddD
            | SubD
            | MulD
            | NegD
    )
}

/// Whether code reads the binding of its action (conservatively: any aggregate counts).
fn reads_binding(code: &[Op]) -> bool {
    code.iter().any(|op| {
        matches!(
            op,
            Op::Bound(_)
                | Op::BoundObj
                | Op::BoundConst(_)
                | Op::GodInit(_)
                | Op::GodConst(_)
                | Op::GodName
                | Op::Agg(_)
                | Op::StepCell(..)
        )
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
    if n < 3 || kc[n - 1] != Op::Call(Builtin::HEX_WALK, 0, 2) {
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
            } else if cc == [Op::BoundObj, Op::Call(Builtin::HEX_FREE, 0, 1)] {
                CellCond::Free
            } else if m > 2 && cc[0] == Op::BoundObj && cc[m - 1] == Op::Call(Builtin::HEX_HIDDEN, 0, 2) && !reads_binding(&cc[1..m - 1]) {
                CellCond::Hidden(ExprId { start: c.start + 1, len: (m - 2) as u32 })
            } else {
                CellCond::Eval(c)
            }
        })
        .collect::<Vec<CellCond>>();
    // The operands are evaluated once for an owner, which is live.
    let owner_safe = |e: ExprId| cannot_fail(&code[e.start as usize..(e.start + e.len) as usize], Op::ThisObj);
    let bits = conds.iter().all(|c| match *c {
        CellCond::Free => true,
        CellCond::Hidden(x) => owner_safe(x),
        CellCond::WalkBound { limit, .. } => owner_safe(limit),
        CellCond::Eval(_) => false,
    });
    Some(WalkOrder { from, bound, conds, bits })
}

/// The game value store's nodes while they are laid out.
struct Trie {
    paths: Vec<String>,
    parent: Vec<u32>,
    child: HashMap<(u32, String), u32>,
}

impl Trie {
    /// The node below `from` along `segs`, created if new.
    pub(super) fn node(&mut self, from: u32, segs: &[String]) -> u32 {
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

/// The links of a program (`run/links.rs`): one per grid and direction list that a `board.joins` call in `code`
/// names (its direction set and edges written as names, as the compiler emits them), their
/// forests laid out one after another.
fn plan_links(code: &[Op], grids: &[GridInfo], dirsets: &[Vec<Vec<(i32, i32)>>]) -> Vec<Link> {
    let mut links: Vec<Link> = Vec::new();
    for w in code.windows(4) {
        let [Op::Const(k), Op::Const(_), Op::Const(_), Op::Call(b, g, 4)] = *w else { continue };
        let (Some(gi), Some(per_side)) = (grids.get(g as usize), dirsets.get(k as usize)) else { continue };
        if b != Builtin::GRID_JOINS {
            continue;
        }
        for dirs in per_side {
            if !links.iter().any(|l| l.grid == g && l.dirs == *dirs) {
                let off = links.iter().map(Link::words).sum();
                links.push(Link::new(g, gi.width, gi.height, dirs, off));
            }
        }
    }
    links
}
