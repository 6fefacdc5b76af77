//! The hex arena as a compiler of whole games would lower it, written by hand over the
//! interpreter's own `State`: what a compiled tier of playforge could reach (issue 14,
//! docs/speed-log.md "tenth round").
//!
//! Allowed here (benches/ only) to measure speed. It is what straightforward generated code for
//! `games/hex_arena.wgdl` would be: the interpreter's state layout (one slot vector; objects with
//! a description, a class, a base and a liveness bit; class constants read from the description
//! table, so parameters stay writable), every name resolved once at construction, every
//! condition and consequence written out in the file's order, the `hex.*` built-ins called as the
//! run time has them ([`HexMap`]), the turn order, round hooks, move filters and outcome lines
//! lowered as the language defines them. It knows nothing a compiler could not read off the WGDL
//! file: not which ability belongs to which mage (it tests every ability's `owner` against the
//! actor, as the class's actor gate does), no arrays of mages, no end to the object list. The
//! only optimizations are ones the interpreter also makes: the bound class listed once per
//! listing, the occupied cells found once per listing, `choose … by hex.walk` in walk order,
//! outcome lines re-checked only after a move that may write what they read (here: a consequence
//! or round hook that writes a mage's `hp`, which a compiler sees statically).
//! What a real compiled tier would add: errors with spans (this reports a bare [`Fail`]; a
//! compiled tier would rerun the move in the interpreter to report the error exactly), and
//! `walkToward` (a playout-only move, not in uniform playouts, not lowered here).
//!
//! `cargo bench --bench speed -- lowered` checks it against the interpreter move for move (legal
//! lists, statuses and whole states over 300 uniform random games) before timing it, and
//! `tests/hex_arena_native.rs` does the same on the file's numbers and on 60 random encounters.

use playforge::game::{Game, WgdlGame};
use playforge::wgdl::Status;
use playforge::wgdl::hex::HexMap;
use playforge::wgdl::program::{Action, NONE, NULL, ObjRec, Program, State};
use rand::RngExt;
use std::sync::Arc;

/// Plays the uniform random game of `seed` with the interpreter and with `lowered` side by side;
/// panics (naming `what`, the seed and the move) at the first step where their legal lists,
/// statuses or whole states differ. Returns the moves played and the final status. The speed
/// bench runs it before timing, the test on random encounters too.
pub fn lockstep(interp: &WgdlGame, lowered: &LoweredHexArena, seed: u64, what: &str) -> (Vec<Action>, Status) {
    let mut rng = playforge::rng::stream(seed, 0, 0, 0);
    let (mut a, mut b) = (interp.initial().expect("initial"), lowered.initial().expect("lowered initial"));
    assert_eq!(a, b, "{what}: initial states differ");
    let (mut la, mut lb, mut played) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        interp.legal(&a, &mut la).expect("legal");
        lowered.legal(&b, &mut lb).expect("lowered legal");
        assert_eq!(la, lb, "{what}, seed {seed}, move {}: legal moves differ", played.len());
        let status = interp.status(&a, &la);
        assert_eq!(status, lowered.status(&b, &lb), "{what}, seed {seed}: statuses differ");
        if status != Status::Running {
            return (played, status);
        }
        let m = la[rng.random_range(0..la.len())];
        interp.apply(&mut a, m).expect("apply");
        lowered.apply(&mut b, m).expect("lowered apply");
        assert_eq!(a, b, "{what}, seed {seed}: states differ after {}", interp.program.action_name(&a, m));
        played.push(m);
    }
}

/// A lowered-code failure (what the interpreter reports as a `RuntimeError` with a span).
#[derive(Debug)]
pub struct Fail(pub &'static str);

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.0)
    }
}
impl std::error::Error for Fail {}

/// Attribute offsets of `mage`.
#[derive(Clone, Copy)]
pub struct MageAt {
    pub team: u32,
    pub hp: u32,
    pub ap: u32,
    pub pos: u32,
    pub dot_hp: u32,
    pub dot_ap: u32,
    pub dot_life: u32,
    pub walked: u32,
    pub dest: u32,
    /// Class constant indices.
    pub max_ap: usize,
}

/// Attribute offsets and constant indices of `ability`.
#[derive(Clone, Copy)]
pub struct AbilityAt {
    pub owner: u32,
    pub cooldown_left: u32,
    pub last_field: u32,
    pub dmg: usize,
    pub cost: usize,
    pub range: usize,
    pub cooldown: usize,
    pub dot_hp: usize,
    pub dot_ap: usize,
    pub dot_life: usize,
    pub aoe_radius: usize,
    pub aoe_hp: usize,
    pub aoe_ap: usize,
    pub aoe_life: usize,
}

#[derive(Clone, Copy)]
struct FieldAt {
    center: u32,
    radius: u32,
    pub hp: u32,
    pub ap: u32,
    life: u32,
}

/// The arena's program, lowered.
pub struct LoweredHexArena {
    pub program: Arc<Program>,
    map: Arc<HexMap>,
    pub mage: u16,
    pub ability: u16,
    field: u16,
    pub m: MageAt,
    pub a: AbilityAt,
    f: FieldAt,
    aoe_god: u16,
    pub act_use: u16,
    act_attack: u16,
    act_hide: u16,
    act_end: u16,
    turn_order: Vec<u32>,
    turn_limit_objects: u32,
}

impl LoweredHexArena {
    /// Resolves every name the lowered code uses (once).
    pub fn new(program: Arc<Program>) -> LoweredHexArena {
        let p = &*program;
        let class = |n: &str| p.classes.iter().position(|c| c.name == n).unwrap_or_else(|| panic!("class {n}")) as u16;
        let (mage, ability, field) = (class("mage"), class("ability"), class("field"));
        let attr =
            |c: u16, n: &str| p.classes[c as usize].attrs.iter().position(|a| a.name == n).unwrap_or_else(|| panic!("attr {n}")) as u32;
        let cnst = |c: u16, n: &str| p.classes[c as usize].consts.iter().position(|a| a.name == n).unwrap_or_else(|| panic!("const {n}"));
        let action = |n: &str| p.actions.iter().position(|a| a.name == n).unwrap_or_else(|| panic!("action {n}")) as u16;
        let m = MageAt {
            team: attr(mage, "team"),
            hp: attr(mage, "hp"),
            ap: attr(mage, "ap"),
            pos: attr(mage, "pos"),
            dot_hp: attr(mage, "dotHp"),
            dot_ap: attr(mage, "dotAp"),
            dot_life: attr(mage, "dotLife"),
            walked: attr(mage, "walked"),
            dest: attr(mage, "dest"),
            max_ap: cnst(mage, "maxAp"),
        };
        let a = AbilityAt {
            owner: attr(ability, "owner"),
            cooldown_left: attr(ability, "cooldownLeft"),
            last_field: attr(ability, "lastField"),
            dmg: cnst(ability, "dmg"),
            cost: cnst(ability, "cost"),
            range: cnst(ability, "range"),
            cooldown: cnst(ability, "cooldown"),
            dot_hp: cnst(ability, "dotHp"),
            dot_ap: cnst(ability, "dotAp"),
            dot_life: cnst(ability, "dotLife"),
            aoe_radius: cnst(ability, "aoeRadius"),
            aoe_hp: cnst(ability, "aoeHp"),
            aoe_ap: cnst(ability, "aoeAp"),
            aoe_life: cnst(ability, "aoeLife"),
        };
        let f = FieldAt {
            center: attr(field, "center"),
            radius: attr(field, "radius"),
            hp: attr(field, "hp"),
            ap: attr(field, "ap"),
            life: attr(field, "life"),
        };
        let aoe_god = p.gods.iter().position(|g| g.name == "aoe").expect("aoe") as u16;
        let turn_order = p.turn_order.clone().expect("a fixed turn order (the compiler proves it as the interpreter does)");
        let map = p.hex.clone().expect("hex map");
        assert!(map.words() <= 8, "the occupied-cell bits here hold maps of up to 512 cells");
        LoweredHexArena {
            map,
            mage,
            ability,
            field,
            m,
            a,
            f,
            aoe_god,
            act_use: action("use"),
            act_attack: action("attackMove"),
            act_hide: action("hide"),
            act_end: action("endTurn"),
            turn_order,
            turn_limit_objects: p.limits.objects,
            program,
        }
    }

    #[inline(always)]
    fn at(st: &State, o: u32, off: u32) -> i64 {
        st.slots[(st.objects[o as usize].base + off) as usize]
    }

    #[inline(always)]
    fn set(st: &mut State, o: u32, off: u32, v: i64) {
        let b = st.objects[o as usize].base;
        st.slots[(b + off) as usize] = v;
    }

    #[inline(always)]
    fn konst(&self, st: &State, o: u32, k: usize) -> i64 {
        self.program.gods[st.objects[o as usize].god as usize].consts[k]
    }

    /// An object reference read from a slot: live, or the error `this.owner.ap` would raise.
    #[inline(always)]
    fn deref(st: &State, v: i64) -> Result<u32, Fail> {
        match st.objects.get(v as usize) {
            Some(o) if v >= 0 && o.alive => Ok(v as u32),
            _ => Err(Fail("a path through a null or deleted object")),
        }
    }

    #[inline(always)]
    fn cell(&self, v: i64) -> Result<usize, Fail> {
        if v < 0 || v as usize >= self.map.len() { Err(Fail("a cell off the map")) } else { Ok(v as usize) }
    }

    /// `hexOccupants mage pos team while this.hp > 0`: the occupied cells.
    fn occupied_bits(&self, st: &State, bits: &mut [u64; 8]) -> Result<(), Fail> {
        for o in st.objects.iter() {
            if o.alive && o.class == self.mage && st.slots[(o.base + self.m.hp) as usize] > 0 {
                let c = self.cell(st.slots[(o.base + self.m.pos) as usize])?;
                bits[c / 64] |= 1 << (c % 64);
            }
        }
        Ok(())
    }

    fn is_occupied(&self, st: &State, c: usize) -> Result<bool, Fail> {
        for o in st.objects.iter() {
            if o.alive
                && o.class == self.mage
                && st.slots[(o.base + self.m.hp) as usize] > 0
                && st.slots[(o.base + self.m.pos) as usize] == c as i64
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `hex.approach(from, target, budget, range)`: −1 when there is no such cell; `occ`: the
    /// occupied cells, when already known.
    fn approach(&self, st: &State, from: i64, target: i64, budget: i64, range: i64, occ: Option<&[u64; 8]>) -> Result<i64, Fail> {
        let (from, target) = (self.cell(from)?, self.cell(target)?);
        let found = match occ {
            Some(bits) => self.map.approach(from, target, budget, range, |c| Ok::<_, Fail>(bits[c / 64] >> (c % 64) & 1 == 0))?,
            None => self.map.approach(from, target, budget, range, |c| self.is_occupied(st, c).map(|o| !o))?,
        };
        Ok(found.map_or(NULL, |c| c as i64))
    }

    /// The binding conditions `use` and `attackMove` share: the target `t` of an ability owned
    /// by `me`.
    #[inline(always)]
    fn aims(&self, st: &State, me: u32, t: u32) -> bool {
        let m = self.m;
        Self::at(st, t, m.team) != Self::at(st, me, m.team) && Self::at(st, t, m.hp) > 0
    }

    /// A fresh object of description `god` (no create hooks for fields).
    fn create(&self, st: &mut State, god: u16) -> Result<u32, Fail> {
        if st.objects.len() as u32 >= self.turn_limit_objects {
            return Err(Fail("too many objects"));
        }
        let g = &self.program.gods[god as usize];
        let id = st.objects.len() as u32;
        st.objects.push(ObjRec { god, class: g.class, alive: true, base: st.slots.len() as u32 });
        st.slots.extend_from_slice(&g.init);
        Ok(id)
    }

    /// The consequences `use` and `attackMove` share, from `startCooldown` to `pay`.
    fn hit(&self, st: &mut State, k: u32, t: u32) -> Result<(), Fail> {
        let (m, a) = (self.m, self.a);
        let kc = |st: &State, i: usize| self.konst(st, k, i);
        // startCooldown
        let v = kc(st, a.cooldown);
        Self::set(st, k, a.cooldown_left, v);
        // hurt
        let t = Self::deref(st, t as i64)?;
        let v = (Self::at(st, t, m.hp) - kc(st, a.dmg)).max(0);
        Self::set(st, t, m.hp, v);
        // dotFresh1, dotFresh2
        if kc(st, a.dot_life) != 0 && Self::at(st, t, m.dot_life) == 0 {
            Self::set(st, t, m.dot_hp, 0);
        }
        if kc(st, a.dot_life) != 0 && Self::at(st, t, m.dot_life) == 0 {
            Self::set(st, t, m.dot_ap, 0);
        }
        // dotAddHp, dotAddAp, dotLonger
        if kc(st, a.dot_life) != 0 {
            let v = Self::at(st, t, m.dot_hp).wrapping_add(kc(st, a.dot_hp));
            Self::set(st, t, m.dot_hp, v);
        }
        if kc(st, a.dot_life) != 0 {
            let v = Self::at(st, t, m.dot_ap).wrapping_add(kc(st, a.dot_ap));
            Self::set(st, t, m.dot_ap, v);
        }
        if kc(st, a.dot_life) != 0 {
            let v = Self::at(st, t, m.dot_life).max(kc(st, a.dot_life));
            Self::set(st, t, m.dot_life, v);
        }
        // aoeMake … aoeLife
        if kc(st, a.aoe_radius) != 0 {
            let id = self.create(st, self.aoe_god)?;
            Self::set(st, k, a.last_field, id as i64);
        }
        if kc(st, a.aoe_radius) != 0 {
            let fo = Self::deref(st, Self::at(st, k, a.last_field))?;
            let v = Self::at(st, t, m.pos);
            Self::set(st, fo, self.f.center, v);
        }
        for (test, what, off) in [
            (a.aoe_radius, a.aoe_radius, self.f.radius),
            (a.aoe_radius, a.aoe_hp, self.f.hp),
            (a.aoe_radius, a.aoe_ap, self.f.ap),
            (a.aoe_radius, a.aoe_life, self.f.life),
        ] {
            if kc(st, test) != 0 {
                let fo = Self::deref(st, Self::at(st, k, a.last_field))?;
                let v = kc(st, what);
                Self::set(st, fo, off, v);
            }
        }
        // pay
        let o = Self::deref(st, Self::at(st, k, a.owner))?;
        let v = (Self::at(st, o, m.ap) - kc(st, a.cost)).max(0);
        Self::set(st, o, m.ap, v);
        Ok(())
    }

    /// `turn mage team while this.hp > 0` in the fixed order: the next actor after `after`.
    fn next_actor(&self, st: &State, after: u32) -> u32 {
        let from =
            if after == NONE { 0 } else { self.turn_order.iter().position(|&o| o == after).map_or(self.turn_order.len(), |i| i + 1) };
        for &o in &self.turn_order[from..] {
            if st.objects[o as usize].alive && Self::at(st, o, self.m.hp) > 0 {
                return o;
            }
        }
        NONE
    }

    /// The round hooks in file order: refill, dotTick, burn, fade, coolDown.
    fn end_round(&self, st: &mut State) -> Result<(), Fail> {
        let (m, a, f) = (self.m, self.a, self.f);
        let n = st.objects.len();
        // refill
        for o in 0..n as u32 {
            if st.objects[o as usize].alive && st.objects[o as usize].class == self.mage {
                let v = self.konst(st, o, m.max_ap);
                Self::set(st, o, m.ap, v);
            }
        }
        // dotTick
        for o in 0..n as u32 {
            if st.objects[o as usize].alive
                && st.objects[o as usize].class == self.mage
                && Self::at(st, o, m.hp) > 0
                && Self::at(st, o, m.dot_life) != 0
            {
                let v = Self::at(st, o, m.dot_life).wrapping_sub(1);
                Self::set(st, o, m.dot_life, v);
                let v = (Self::at(st, o, m.hp) - Self::at(st, o, m.dot_hp)).max(0);
                Self::set(st, o, m.hp, v);
                let v = (Self::at(st, o, m.ap) - Self::at(st, o, m.dot_ap)).max(0);
                Self::set(st, o, m.ap, v);
            }
        }
        // burn: every field × every mage
        for o in 0..n as u32 {
            if !(st.objects[o as usize].alive && st.objects[o as usize].class == self.field) {
                continue;
            }
            for b in 0..n as u32 {
                if !(st.objects[b as usize].alive && st.objects[b as usize].class == self.mage) {
                    continue;
                }
                if Self::at(st, b, m.hp) > 0 {
                    let (c, p) = (self.cell(Self::at(st, o, f.center))?, self.cell(Self::at(st, b, m.pos))?);
                    if self.map.distance(c, p) <= Self::at(st, o, f.radius) {
                        let v = (Self::at(st, b, m.hp) - Self::at(st, o, f.hp)).max(0);
                        Self::set(st, b, m.hp, v);
                        let v = (Self::at(st, b, m.ap) - Self::at(st, o, f.ap)).max(0);
                        Self::set(st, b, m.ap, v);
                    }
                }
            }
        }
        // fade
        for o in 0..n as u32 {
            if st.objects[o as usize].alive && st.objects[o as usize].class == self.field {
                let v = Self::at(st, o, f.life).wrapping_sub(1);
                Self::set(st, o, f.life, v);
                if Self::at(st, o, f.life) <= 0 {
                    st.objects[o as usize].alive = false;
                }
            }
        }
        // coolDown
        for o in 0..n as u32 {
            if st.objects[o as usize].alive && st.objects[o as usize].class == self.ability && Self::at(st, o, a.cooldown_left) > 0 {
                let v = Self::at(st, o, a.cooldown_left) - 1;
                Self::set(st, o, a.cooldown_left, v);
            }
        }
        Ok(())
    }

    fn end_turn(&self, st: &mut State) -> Result<(), Fail> {
        st.turns += 1;
        let next = if st.actor == NONE { NONE } else { self.next_actor(st, st.actor) };
        st.actor = if next != NONE {
            next
        } else {
            st.round += 1;
            self.end_round(st)?;
            self.next_actor(st, NONE)
        };
        st.to_move = if st.actor == NONE { 0 } else { Self::at(st, st.actor, self.m.team) as u8 };
        Ok(())
    }

    /// `countOf(mage, (mage.team == side) && (mage.hp > 0))`.
    fn living(&self, st: &State, side: i64) -> i64 {
        let mut n = 0;
        for o in st.objects.iter() {
            if o.alive
                && o.class == self.mage
                && st.slots[(o.base + self.m.team) as usize] == side
                && st.slots[(o.base + self.m.hp) as usize] > 0
            {
                n += 1;
            }
        }
        n
    }

    /// The outcome lines in file order (the first that holds).
    fn check_outcomes(&self, st: &mut State) {
        if st.outcome != 0 {
            return;
        }
        if self.living(st, 0) == 0 && self.living(st, 1) == 0 {
            st.outcome = 1;
        } else if self.living(st, 1) == 0 {
            st.outcome = 2;
        } else if self.living(st, 0) == 0 {
            st.outcome = 3;
        }
    }
}

impl Game for LoweredHexArena {
    type State = State;
    type Move = Action;
    type Error = Fail;

    fn initial(&self) -> Result<State, Fail> {
        self.program.initial_state().map_err(|_| Fail("initial state"))
    }

    fn legal(&self, st: &State, out: &mut Vec<Action>) -> Result<(), Fail> {
        out.clear();
        if st.outcome != 0 || st.actor == NONE {
            return Ok(());
        }
        let (m, a) = (self.m, self.a);
        let me = st.actor;
        // The live mages, once (the bound class of `use` and `attackMove`).
        let mut mages = [0u32; 32];
        let mut nm = 0;
        for (i, o) in st.objects.iter().enumerate() {
            if o.alive && o.class == self.mage {
                *mages.get_mut(nm).ok_or(Fail("more than 32 mages (a fixed-size list in this bench)"))? = i as u32;
                nm += 1;
            }
        }
        let mages = &mages[..nm];
        // `hexOccupants`, once per listing (as the interpreter's occupancy cache has it).
        let mut occ = [0u64; 8];
        self.occupied_bits(st, &mut occ)?;
        // hide (the actor is a mage: the gate `this == game.actor`).
        if st.objects[me as usize].class == self.mage {
            let pos = self.cell(Self::at(st, me, m.pos))?;
            let ap = Self::at(st, me, m.ap);
            let team = Self::at(st, me, m.team);
            let mut ok = [u64::MAX; 8];
            for (w, o) in ok.iter_mut().zip(occ) {
                *w &= !o;
            }
            for &o in mages {
                if Self::at(st, o, m.hp) > 0 && Self::at(st, o, m.team) != team {
                    let p = self.cell(Self::at(st, o, m.pos))?;
                    for (w, r) in ok.iter_mut().zip(self.map.sees_row(p)) {
                        *w &= !r;
                    }
                }
            }
            let start = out.len();
            for &c in self.map.by_walk(pos) {
                let c = c as usize;
                if self.map.walk(pos, c) > ap {
                    break;
                }
                if ok[c / 64] >> (c % 64) & 1 == 1 {
                    out.push(Action { def: self.act_hide, this: me, bound: c as u32 });
                    if out.len() - start == 3 {
                        break;
                    }
                }
            }
            out[start..].sort_unstable_by_key(|m| m.bound);
            out.push(Action { def: self.act_end, this: me, bound: NONE });
        }
        // use, attackMove: abilities whose owner is the actor.
        let mut uses = 0;
        for (k, o) in st.objects.iter().enumerate() {
            if !o.alive || o.class != self.ability {
                continue;
            }
            let k = k as u32;
            if st.slots[(o.base + a.owner) as usize] != me as i64 {
                continue;
            }
            let owner = me;
            if Self::at(st, k, a.cooldown_left) != 0 || Self::at(st, owner, m.ap) < self.konst(st, k, a.cost) {
                continue;
            }
            let range = self.konst(st, k, a.range);
            let from = self.cell(Self::at(st, owner, m.pos))?;
            for &t in mages {
                if self.aims(st, owner, t) {
                    let to = self.cell(Self::at(st, t, m.pos))?;
                    if self.map.distance(from, to) <= range && self.map.sees(from, to) {
                        out.push(Action { def: self.act_use, this: k, bound: t });
                        uses += 1;
                    }
                }
            }
            // `unless attackMove use`: not while a use is listed.
            if uses == 0 {
                let budget = Self::at(st, owner, m.ap) - self.konst(st, k, a.cost);
                for &t in mages {
                    if self.aims(st, owner, t) && self.approach(st, from as i64, Self::at(st, t, m.pos), budget, range, Some(&occ))? >= 0 {
                        out.push(Action { def: self.act_attack, this: k, bound: t });
                    }
                }
            }
        }
        // The filters: `unless attackMove use`, then `lastResort endTurn 1`.
        if uses > 0 {
            out.retain(|x| x.def != self.act_attack);
        }
        if out.len() > 2
            && let Some(i) = out.iter().position(|x| x.def == self.act_end)
        {
            out.remove(i);
        }
        Ok(())
    }

    fn apply(&self, st: &mut State, mv: Action) -> Result<(), Fail> {
        let m = self.m;
        let mut end_turn = false;
        let mut hp_written = false;
        if mv.def == self.act_use {
            self.hit(st, mv.this, mv.bound)?;
            hp_written = true;
        } else if mv.def == self.act_attack {
            let (k, a) = (mv.this, self.a);
            let owner = Self::deref(st, Self::at(st, k, a.owner))?;
            let t = Self::deref(st, mv.bound as i64)?;
            // approachHex
            let budget = Self::at(st, owner, m.ap) - self.konst(st, k, a.cost);
            let dest = self.approach(st, Self::at(st, owner, m.pos), Self::at(st, t, m.pos), budget, self.konst(st, k, a.range), None)?;
            Self::set(st, owner, m.dest, dest);
            // approachPay
            let w = self.map.walk(self.cell(Self::at(st, owner, m.pos))?, self.cell(Self::at(st, owner, m.dest))?);
            let v = (Self::at(st, owner, m.ap) - w).max(0);
            Self::set(st, owner, m.ap, v);
            // approachGo
            let v = Self::at(st, owner, m.dest);
            Self::set(st, owner, m.pos, v);
            self.hit(st, k, t)?;
            hp_written = true;
        } else if mv.def == self.act_hide {
            let o = mv.this;
            let w = self.map.walk(self.cell(Self::at(st, o, m.pos))?, self.cell(mv.bound as i64)?);
            let v = Self::at(st, o, m.ap).wrapping_sub(w);
            Self::set(st, o, m.ap, v);
            Self::set(st, o, m.pos, mv.bound as i64);
            Self::set(st, o, m.walked, 0);
            end_turn = true;
        } else if mv.def == self.act_end {
            Self::set(st, mv.this, m.walked, 0);
            end_turn = true;
        } else {
            return Err(Fail("a move this bench does not lower (walkToward)"));
        }
        if end_turn {
            let round = st.round;
            self.end_turn(st)?;
            hp_written |= st.round != round;
        }
        st.moves += 1;
        if hp_written {
            self.check_outcomes(st);
        }
        Ok(())
    }

    fn status(&self, st: &State, legal: &[Action]) -> Status {
        self.program.status(st, legal)
    }

    fn to_move(&self, st: &State) -> usize {
        st.to_move as usize
    }

    fn hash(&self, st: &State) -> u64 {
        st.fingerprint()
    }
}

impl playforge::search::mcts::Goals for LoweredHexArena {
    fn goals_reached(&self, _s: &State) -> usize {
        0
    }
    fn n_goals(&self) -> usize {
        0
    }
}
