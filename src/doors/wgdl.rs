//! A WGDL game behind a door: the stable action index and the observation tensor.
//!
//! **Action index.** Every player action definition, in file order, owns a block of numbers:
//! (room of its owner class) × (size of its binding). Within the block, an action instance is
//! `owner's ordinal × binding size + binding's rank`, where an object's *ordinal* in a class
//! is how many objects of that class (or a subclass) were created before it — fixed for the
//! object's life, since objects are only ever appended — and the binding's rank is the number
//! minus the range's low end (`forEveryNumber`), the cell (`forEveryHex`), the description's
//! place among the class's descriptions (`forEveryGOD`) or the bound object's ordinal in its
//! class (`forEveryInstance`). A class's room is the number of its objects in the start state,
//! plus [`super::OpenOptions::objects`] for every description a `create` consequence can make.
//! Connect Four: `drop` owned by `red` (ordinal 0) and `yellow` (1), columns 0–6: 14 actions,
//! red's column c is c, yellow's 7 + c.
//!
//! **Observation.** A flat vector of numbers: the side to move, moves played, the clock,
//! sessions finished, goals reached; the game-value store and every grid cell, in slot order;
//! then for every object description in file order, its room of records, one per object of
//! that description in creation order: 1 if alive, then its attributes (doubles as numbers,
//! booleans 0/1, strings by symbol number, objects by index, null −1); absent objects are zeros.

use super::{DoorError, DoorState, Info, Inner, OpenOptions, Utility};
use crate::wgdl::probe::ValueRef;
use crate::wgdl::program::{BindKind, ClassId, Cons, GodSel, NONE, TileOp};
use crate::wgdl::{Action, ActionKind, CompileOptions, Program, State, Status, Ty};
use std::path::Path;
use std::sync::Arc;

/// One player action definition's numbers.
struct Block {
    offset: u64,
    owner: ClassId,
    owners: u64,
    bind: BindKind,
    binds: u64,
    /// `forEveryGOD`: each description's rank in the class (`u32::MAX`: not in it).
    god_rank: Vec<u32>,
}

/// Header values before the store in the observation.
const HEADER: usize = 5;

pub struct WgdlDoor {
    pub program: Arc<Program>,
    pub info: Info,
    /// Per action definition (`None`: not a player action).
    blocks: Vec<Option<Block>>,
    /// (offset, action) of the blocks, by offset, for reading a number back.
    starts: Vec<(u64, u16)>,
    /// Per description: records kept for it in the observation, and where they start.
    room: Vec<u32>,
    obs_at: Vec<usize>,
    /// Slots before the objects (store and grid cells).
    prefix: usize,
    reward: Option<ValueRef>,
    /// [`OpenOptions::objects`], for messages.
    objects: u32,
}

impl WgdlDoor {
    pub fn open(path: &Path, opts: &OpenOptions) -> anyhow::Result<WgdlDoor> {
        let copts = CompileOptions {
            overrides: opts.params.clone(),
            turn_order: opts.turn_order.clone(),
            overlays: opts.overlays.clone(),
            ..CompileOptions::default()
        };
        let compiled = crate::wgdl::load_with(path, &copts)?;
        WgdlDoor::new(compiled.program, opts).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    pub fn new(program: Arc<Program>, opts: &OpenOptions) -> Result<WgdlDoor, String> {
        let p = &*program;
        let start = p.initial_state().map_err(|e| e.render(p))?;
        // Descriptions a `create` can make: named ones, and every description of a class bound
        // by `forEveryGOD` where a consequence creates "the bound one".
        let mut creatable = vec![false; p.gods.len()];
        let mut stochastic = false;
        for c in &p.conses {
            match (&c.code, c.bind) {
                (Cons::Create { god: GodSel::Fixed(g), .. }, _) => creatable[*g as usize] = true,
                (Cons::Create { god: GodSel::Bound, .. }, BindKind::God(k)) => {
                    for &g in &p.classes[k as usize].gods {
                        creatable[g as usize] = true;
                    }
                }
                (Cons::Tile { op: TileOp::Refill | TileOp::Deal, .. }, _) => stochastic = true,
                _ => {}
            }
        }
        stochastic |= p.has_chance;
        let room: Vec<u32> = (0..p.gods.len())
            .map(|g| start.objects.iter().filter(|o| o.god as usize == g).count() as u32 + if creatable[g] { opts.objects } else { 0 })
            .collect();
        let class_room = |c: ClassId| -> u64 { p.classes[c as usize].gods.iter().map(|&g| room[g as usize] as u64).sum() };
        let mut blocks = Vec::with_capacity(p.actions.len());
        let mut starts = Vec::new();
        let mut total = 0u64;
        for (i, a) in p.actions.iter().enumerate() {
            let (ActionKind::Player, Some(owner)) = (a.kind, a.class) else {
                blocks.push(None);
                continue;
            };
            let mut god_rank = Vec::new();
            let binds = match a.bind {
                BindKind::None => 1,
                BindKind::Number(lo, hi) => hi as u64 - lo as u64 + 1,
                BindKind::Hex => p.hex.as_ref().map_or(0, |h| h.len() as u64),
                BindKind::Step(t) => p.board.tables[t as usize].moves.len() as u64,
                BindKind::Instance(c) => class_room(c),
                BindKind::God(c) => {
                    god_rank = vec![u32::MAX; p.gods.len()];
                    for (k, &g) in p.classes[c as usize].gods.iter().enumerate() {
                        god_rank[g as usize] = k as u32;
                    }
                    p.classes[c as usize].gods.len() as u64
                }
            };
            let owners = class_room(owner);
            if owners * binds > 0 {
                starts.push((total, i as u16));
            }
            blocks.push(Some(Block { offset: total, owner, owners, bind: a.bind, binds, god_rank }));
            total += owners * binds;
        }
        if total > i32::MAX as u64 {
            return Err(format!("{total} distinct actions; OpenSpiel numbers actions below 2^31 (fewer `objects` of room?)"));
        }
        let prefix = 2 * p.n_store_nodes() + p.grid_slots as usize;
        let mut obs_at = Vec::with_capacity(p.gods.len());
        let mut len = HEADER + prefix;
        for (g, info) in p.gods.iter().enumerate() {
            obs_at.push(len);
            len += room[g] as usize * (1 + p.classes[info.class as usize].attrs.len());
        }
        let players: Vec<String> = if p.players.is_empty() { vec!["player".to_string()] } else { p.players.clone() };
        let reward = match &opts.reward {
            None => None,
            Some(_) if players.len() > 1 => {
                return Err("a reward value is for one-player games; this game has players".into());
            }
            Some(path) => Some(p.value_ref(path)?),
        };
        let n = players.len();
        let info = Info {
            language: "wgdl",
            num_distinct_actions: total as usize,
            observation_len: len,
            simultaneous: false,
            stochastic,
            // Chance's moves of one state: at most the bindings of its `byChance` actions.
            max_chance_outcomes: p
                .actions
                .iter()
                .zip(&blocks)
                .filter(|(a, _)| a.chance.is_some())
                .map(|(_, b)| b.as_ref().map_or(0, |b| b.binds as usize))
                .sum(),
            rewards: reward.is_some(),
            utility: if n == 2 && reward.is_none() { Utility::ZeroSum } else { Utility::GeneralSum },
            min_utility: if reward.is_some() {
                f64::NEG_INFINITY
            } else if n == 1 {
                0.0
            } else {
                -1.0
            },
            max_utility: if reward.is_some() { f64::INFINITY } else { 1.0 },
            max_game_length: p.limits.steps as usize,
            players,
        };
        Ok(WgdlDoor { program, info, blocks, starts, room, obs_at, prefix, reward, objects: opts.objects })
    }

    pub(super) fn reward_value(&self, st: &State) -> f64 {
        self.reward.map_or(0.0, |v| self.program.read(st, v))
    }

    /// How many objects of class `c` (or a subclass) were created before object `id`.
    fn ordinal(&self, st: &State, id: u32, c: ClassId) -> u64 {
        let p = &*self.program;
        st.objects[..(id as usize).min(st.objects.len())].iter().filter(|o| p.is_sub(o.class, c)).count() as u64
    }

    fn past_room(&self, st: &State, id: u32) -> DoorError {
        DoorError::Runtime(format!(
            "{}: more objects of its description than the doors keep room for (the start state's, plus {} for a description that `create` makes); open the game with a larger `objects`",
            self.program.object_label(st, id),
            self.objects
        ))
    }

    /// The stable number of a legal move.
    pub fn index(&self, st: &State, a: Action) -> Result<i64, DoorError> {
        let Some(b) = self.blocks.get(a.def as usize).and_then(|b| b.as_ref()) else {
            return Err(DoorError::Runtime(format!("move {a:?} is not a player action")));
        };
        let own = self.ordinal(st, a.this, b.owner);
        if own >= b.owners {
            return Err(self.past_room(st, a.this));
        }
        let k = match b.bind {
            BindKind::None => 0,
            BindKind::Number(lo, _) => (a.bound - lo) as u64,
            BindKind::Hex | BindKind::Step(_) => a.bound as u64,
            BindKind::God(_) => b.god_rank.get(a.bound as usize).copied().unwrap_or(u32::MAX) as u64,
            BindKind::Instance(c) => {
                let k = self.ordinal(st, a.bound, c);
                if k >= b.binds {
                    return Err(self.past_room(st, a.bound));
                }
                k
            }
        };
        Ok((b.offset + own * b.binds + k) as i64)
    }

    pub(super) fn refresh(&self, s: &mut DoorState) -> Result<(), DoorError> {
        let Inner::Wgdl(st) = &s.inner else { unreachable!("a GDL state in a WGDL door") };
        let p = &*self.program;
        p.legal_actions(st, &mut s.wgdl_moves).map_err(|e| DoorError::Runtime(e.render(p)))?;
        s.status = p.status(st, &s.wgdl_moves);
        for l in &mut s.legal {
            l.clear();
        }
        s.chance.clear();
        s.chance_legal.clear();
        if s.status != Status::Running {
            s.wgdl_moves.clear();
            s.player = super::TERMINAL;
            return Ok(());
        }
        let mover = if p.players.is_empty() { 0 } else { st.to_move as usize };
        s.player = mover as i64;
        let mut pairs = std::mem::take(&mut s.pairs);
        pairs.clear();
        for &a in &s.wgdl_moves {
            pairs.push((self.index(st, a)?, a));
        }
        // Moves come out grouped by owner and action; the index orders them by action first.
        if pairs.windows(2).any(|w| w[0].0 > w[1].0) {
            pairs.sort_unstable_by_key(|&(i, _)| i);
        }
        let chance = p.is_chance(&s.wgdl_moves);
        let legal = if chance { &mut s.chance_legal } else { &mut s.legal[mover] };
        s.wgdl_moves.clear();
        for &(i, a) in &pairs {
            legal.push(i);
            s.wgdl_moves.push(a);
        }
        pairs.clear();
        s.pairs = pairs;
        if chance {
            s.player = super::CHANCE;
            let mut w = Vec::new();
            p.chance_weights(st, &s.wgdl_moves, &mut w).map_err(|e| DoorError::Runtime(e.render(p)))?;
            let total: i64 = w.iter().map(|&x| x.min(1 << 32)).sum();
            if total <= 0 {
                return Err(DoorError::Runtime(format!("every chance move weighs 0 here ({})", p.action_name(st, s.wgdl_moves[0]))));
            }
            s.chance.extend(s.chance_legal.iter().zip(&w).map(|(&i, &x)| (i, x.min(1 << 32) as f64 / total as f64)));
        }
        Ok(())
    }

    pub(super) fn apply(&self, s: &mut DoorState, action: i64) -> Result<(), DoorError> {
        let mover = s.player.max(0) as usize;
        let list = if s.player == super::CHANCE { &s.chance_legal } else { &s.legal[mover] };
        let Ok(k) = list.binary_search(&action) else {
            let Inner::Wgdl(st) = &s.inner else { unreachable!() };
            let names: Vec<String> =
                list.iter().zip(&s.wgdl_moves).map(|(i, &m)| format!("{i} ({})", self.program.action_name(st, m))).collect();
            return Err(DoorError::Illegal(format!("action {action} is not legal here; expected one of: {}", names.join(", "))));
        };
        let a = s.wgdl_moves[k];
        let Inner::Wgdl(st) = &mut s.inner else { unreachable!() };
        self.program.apply(st, a).map_err(|e| DoorError::Runtime(e.render(&self.program)))
    }

    /// Reads a number back into its parts and names the move (`drop(red, 3)`), or describes
    /// it by its parts when this state has no such object (`drop(player#3, 3)`).
    pub(super) fn action_name(&self, st: &State, action: i64) -> String {
        let p = &*self.program;
        let x = action as u64;
        let at = self.starts.partition_point(|&(o, _)| o <= x).saturating_sub(1);
        let Some(&(_, def)) = self.starts.get(at) else { return format!("action {action}") };
        let Some(b) = &self.blocks[def as usize] else { return format!("action {action}") };
        let (own, k) = ((x - b.offset) / b.binds, (x - b.offset) % b.binds);
        let name = &p.actions[def as usize].name;
        let find = |c: ClassId, ord: u64| -> Option<u32> {
            st.objects.iter().enumerate().filter(|(_, o)| p.is_sub(o.class, c)).nth(ord as usize).map(|(i, _)| i as u32)
        };
        let class_name = |c: ClassId| p.classes[c as usize].name.clone();
        let this = find(b.owner, own);
        let bound = match b.bind {
            BindKind::None => Some(NONE),
            BindKind::Number(lo, _) => Some(lo + k as u32),
            BindKind::Hex | BindKind::Step(_) => Some(k as u32),
            BindKind::God(c) => p.classes[c as usize].gods.get(k as usize).copied().map(|g| g as u32),
            BindKind::Instance(c) => find(c, k),
        };
        match (this, bound) {
            (Some(this), Some(bound)) => p.action_name(st, Action { def, this, bound }),
            _ => {
                let owner = format!("{}#{}", class_name(b.owner), own + 1);
                match b.bind {
                    BindKind::None => format!("{name}({owner})"),
                    BindKind::Instance(c) => format!("{name}({owner}, {}#{})", class_name(c), k + 1),
                    _ => format!("{name}({owner}, {k})"),
                }
            }
        }
    }

    pub(super) fn observation(&self, st: &State, out: &mut Vec<f64>) -> Result<(), DoorError> {
        let p = &*self.program;
        out.resize(self.info.observation_len, 0.0);
        let head = [st.to_move as f64, st.moves as f64, st.clock as f64, st.sessions as f64, st.goal as f64];
        out[..HEADER].copy_from_slice(&head);
        for (o, &v) in out[HEADER..HEADER + self.prefix].iter_mut().zip(&st.slots) {
            *o = v as f64;
        }
        let mut seen = vec![0u32; p.gods.len()];
        for (id, o) in st.objects.iter().enumerate() {
            let g = o.god as usize;
            let nth = seen[g];
            seen[g] += 1;
            if nth >= self.room[g] {
                return Err(self.past_room(st, id as u32));
            }
            let attrs = &p.classes[o.class as usize].attrs;
            let at = self.obs_at[g] + nth as usize * (1 + attrs.len());
            if !o.alive {
                continue;
            }
            out[at] = 1.0;
            for (k, a) in attrs.iter().enumerate() {
                let v = st.slots[o.base as usize + k];
                out[at + 1 + k] = match a.ty {
                    Ty::Double => f64::from_bits(v as u64),
                    _ => v as f64,
                };
            }
        }
        Ok(())
    }
}
