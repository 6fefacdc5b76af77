//! The hex arena written by hand in Rust: the native twin of `games/hex_arena.wgdl`.
//!
//! Allowed here (tests/ and benches/ only) to cross-check the interpreter move for move. Only the
//! geometry is shared ([`HexMap`]: distances, walks, line of sight); every rule is written out
//! below from the WGDL file and games/README.md §9. Objects as the interpreter creates them: mages
//! red1, red2, blue1, blue2 (0..=3), abilities red1a … blue2b (4..=11, ability `k` belongs to mage
//! `k / 2`), then area-effect fields. Moves are listed in the interpreter's order — the acting
//! mage's `hide` moves (the three shortest walks, kept in cell order), its `endTurn`, then per
//! ability its `use` moves and its `attackMove` moves (targets in id order) — after the filters:
//! `attackMove` only while no `use` is possible, `endTurn` only when at most one other move is
//! left. `walkToward` is a playout-only move and never listed. Turns go red1, red2, blue1, blue2
//! (mages at 0 HP skipped); after the last one the round ends: AP refills, debuffs tick, fields
//! burn and fade, cooldowns fall. One group (`all`, weight 1).

use playforge::game::Game;
use playforge::wgdl::Status;
use playforge::wgdl::hex::HexMap;
use std::hash::{Hash, Hasher};

pub const MAGE_NAMES: [&str; 4] = ["red1", "red2", "blue1", "blue2"];
pub const ABILITY_NAMES: [&str; 8] = ["red1a", "red1b", "red2a", "red2b", "blue1a", "blue1b", "blue2a", "blue2b"];
const TEAM: [i64; 4] = [0, 0, 1, 1];
const SLOT: [usize; 4] = [0, 1, 0, 1];
/// `limit turns 100`.
const TURN_LIMIT: u32 = 100;
/// The interpreter's default `limit steps`.
const STEP_LIMIT: u32 = 100_000;

/// An ability's class attributes (the tunable numbers).
#[derive(Clone, Copy, Debug, Default)]
pub struct AbilityParams {
    pub dmg: i64,
    pub cost: i64,
    pub range: i64,
    pub cooldown: i64,
    pub dot_hp: i64,
    pub dot_ap: i64,
    pub dot_life: i64,
    pub aoe_radius: i64,
    pub aoe_hp: i64,
    pub aoe_ap: i64,
    pub aoe_life: i64,
}

/// Every declared parameter of the encounter.
#[derive(Clone, Debug)]
pub struct Params {
    pub max_hp: [i64; 4],
    pub max_ap: [i64; 4],
    pub abilities: [AbilityParams; 8],
}

impl Default for Params {
    /// The values written in the WGDL file: "a" abilities are plain bolts, "b" abilities carry a
    /// cooldown, a debuff and an area effect.
    fn default() -> Params {
        let a = AbilityParams { dmg: 12, cost: 4, range: 5, ..AbilityParams::default() };
        let b = AbilityParams {
            dmg: 20,
            cost: 7,
            range: 3,
            cooldown: 1,
            dot_hp: 2,
            dot_ap: 1,
            dot_life: 2,
            aoe_radius: 1,
            aoe_hp: 3,
            aoe_ap: 0,
            aoe_life: 1,
        };
        Params { max_hp: [60; 4], max_ap: [12; 4], abilities: [a, b, a, b, a, b, a, b] }
    }
}

impl Params {
    /// The defaults with `(name, value)` overrides such as `red1.maxHp` or `blue2b.aoeLife`.
    pub fn from_overrides(values: &[(String, f64)]) -> Params {
        let mut p = Params::default();
        for (name, v) in values {
            assert!(v.fract() == 0.0, "{name} = {v}: every hex arena attribute is a long");
            let v = *v as i64;
            let (obj, attr) = name.split_once('.').unwrap_or_else(|| panic!("parameter {name}: expected object.attribute"));
            if let Some(m) = MAGE_NAMES.iter().position(|&n| n == obj) {
                match attr {
                    "maxHp" => p.max_hp[m] = v,
                    "maxAp" => p.max_ap[m] = v,
                    _ => panic!("unknown mage parameter {name}"),
                }
            } else if let Some(k) = ABILITY_NAMES.iter().position(|&n| n == obj) {
                let a = &mut p.abilities[k];
                let slot = match attr {
                    "dmg" => &mut a.dmg,
                    "cost" => &mut a.cost,
                    "range" => &mut a.range,
                    "cooldown" => &mut a.cooldown,
                    "dotHp" => &mut a.dot_hp,
                    "dotAp" => &mut a.dot_ap,
                    "dotLife" => &mut a.dot_life,
                    "aoeRadius" => &mut a.aoe_radius,
                    "aoeHp" => &mut a.aoe_hp,
                    "aoeAp" => &mut a.aoe_ap,
                    "aoeLife" => &mut a.aoe_life,
                    _ => panic!("unknown ability parameter {name}"),
                };
                *slot = v;
            } else {
                panic!("unknown object in parameter {name}");
            }
        }
        p
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mage {
    pub hp: i64,
    pub ap: i64,
    pub pos: usize,
    pub dot_hp: i64,
    pub dot_ap: i64,
    pub dot_life: i64,
}

/// An area effect left on the ground.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    pub center: usize,
    pub radius: i64,
    pub hp: i64,
    pub ap: i64,
    pub life: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HaState {
    pub mages: [Mage; 4],
    pub cooldown_left: [i64; 8],
    /// Live fields in creation order.
    pub fields: Vec<Field>,
    /// The acting mage (`None`: nobody can act).
    pub actor: Option<usize>,
    pub turns: u32,
    pub moves: u32,
    pub rounds: u32,
    /// Decided outcome: 0 none yet, 1 draw, `side + 2` that side won (as the interpreter).
    pub outcome: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HaMove {
    Hide { mage: u8, cell: u16 },
    EndTurn { mage: u8 },
    Use { ability: u8, target: u8 },
    AttackMove { ability: u8, target: u8 },
}

pub struct NativeHexArena {
    pub map: HexMap,
    pub params: Params,
}

#[derive(Debug)]
pub struct Never;
impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("never")
    }
}
impl std::error::Error for Never {}

impl NativeHexArena {
    /// The game on `games/maps/arena5.hexmap` with these parameters.
    pub fn new(params: Params) -> NativeHexArena {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games/maps/arena5.hexmap");
        let text = std::fs::read_to_string(&path).expect("arena5.hexmap");
        let map = HexMap::parse(&text).unwrap_or_else(|e| panic!("{}:{}:{}: {}", path.display(), e.line, e.col, e.msg));
        NativeHexArena { map, params }
    }

    /// The move as the interpreter's `action_name` writes it.
    pub fn move_name(&self, m: HaMove) -> String {
        match m {
            HaMove::Hide { mage, cell } => {
                let c = cell as usize;
                format!("hide({}, {}:({},{}))", MAGE_NAMES[mage as usize], c, self.map.q[c], self.map.r[c])
            }
            HaMove::EndTurn { mage } => format!("endTurn({})", MAGE_NAMES[mage as usize]),
            HaMove::Use { ability, target } => format!("use({}, {})", ABILITY_NAMES[ability as usize], MAGE_NAMES[target as usize]),
            HaMove::AttackMove { ability, target } => {
                format!("attackMove({}, {})", ABILITY_NAMES[ability as usize], MAGE_NAMES[target as usize])
            }
        }
    }

    /// A living mage stands on `cell` (`hexOccupants mage pos team while this.hp > 0`).
    fn occupied(s: &HaState, cell: usize) -> bool {
        s.mages.iter().any(|m| m.hp > 0 && m.pos == cell)
    }

    /// `hex.approach(from, target, budget, range)`: the nearest (by walk, then cell number) free
    /// cell other than `from`, within `budget` steps, from which `target` is within `range` and
    /// in sight — cells in walk order, the first that qualifies.
    fn approach(&self, s: &HaState, from: usize, target: usize, budget: i64, range: i64) -> Option<usize> {
        let free = |c: usize| Ok::<_, Never>(!Self::occupied(s, c));
        self.map.approach(from, target, budget, range, free).unwrap_or(None)
    }

    /// The conditions of `use(ability, target)` and `attackMove(ability, target)` they share.
    fn can_aim(&self, s: &HaState, actor: usize, k: usize, t: usize) -> bool {
        let a = &self.params.abilities[k];
        s.cooldown_left[k] == 0 && s.mages[actor].ap >= a.cost && TEAM[t] != TEAM[actor] && s.mages[t].hp > 0
    }

    /// The `hurt`, debuff, area-effect and `pay` consequences of an ability hitting `t`.
    fn hit(&self, s: &mut HaState, k: usize, t: usize) {
        let a = self.params.abilities[k];
        let owner = k / 2;
        s.cooldown_left[k] = a.cooldown;
        let m = &mut s.mages[t];
        m.hp = (m.hp - a.dmg).max(0);
        if a.dot_life != 0 {
            if m.dot_life == 0 {
                m.dot_hp = 0;
                m.dot_ap = 0;
            }
            m.dot_hp += a.dot_hp;
            m.dot_ap += a.dot_ap;
            m.dot_life = m.dot_life.max(a.dot_life);
        }
        if a.aoe_radius != 0 {
            let center = s.mages[t].pos;
            s.fields.push(Field { center, radius: a.aoe_radius, hp: a.aoe_hp, ap: a.aoe_ap, life: a.aoe_life });
        }
        let o = &mut s.mages[owner];
        o.ap = (o.ap - a.cost).max(0);
    }

    /// The next living mage after `after` this round (`None`: from the round's start).
    fn next_actor(s: &HaState, after: Option<usize>) -> Option<usize> {
        let from = after.map_or(0, |a| a + 1);
        (from..4).find(|&i| s.mages[i].hp > 0)
    }

    fn end_turn(&self, s: &mut HaState) {
        s.turns += 1;
        let next = match s.actor {
            None => None,
            Some(a) => Self::next_actor(s, Some(a)),
        };
        s.actor = match next {
            Some(n) => Some(n),
            None => {
                s.rounds += 1;
                self.end_round(s);
                Self::next_actor(s, None)
            }
        };
    }

    /// The round hooks in file order: refill, dotTick, burn, fade, coolDown.
    fn end_round(&self, s: &mut HaState) {
        for (i, m) in s.mages.iter_mut().enumerate() {
            m.ap = self.params.max_ap[i];
        }
        for m in s.mages.iter_mut() {
            if m.hp > 0 && m.dot_life != 0 {
                m.dot_life -= 1;
                m.hp = (m.hp - m.dot_hp).max(0);
                m.ap = (m.ap - m.dot_ap).max(0);
            }
        }
        for f in &s.fields {
            for m in s.mages.iter_mut() {
                if m.hp > 0 && self.map.distance(f.center, m.pos) <= f.radius {
                    m.hp = (m.hp - f.hp).max(0);
                    m.ap = (m.ap - f.ap).max(0);
                }
            }
        }
        for f in s.fields.iter_mut() {
            f.life -= 1;
        }
        s.fields.retain(|f| f.life > 0);
        for c in s.cooldown_left.iter_mut() {
            if *c > 0 {
                *c -= 1;
            }
        }
    }

    /// The `draw` and `winner` lines in file order; once decided the outcome stays.
    fn check_outcome(s: &mut HaState) {
        if s.outcome != 0 {
            return;
        }
        let alive = |team: i64| (0..4).any(|i| TEAM[i] == team && s.mages[i].hp > 0);
        let (red, blue) = (alive(0), alive(1));
        s.outcome = match (red, blue) {
            (false, false) => 1,
            (_, false) => 2,
            (false, _) => 3,
            _ => 0,
        };
    }
}

impl Game for NativeHexArena {
    type State = HaState;
    type Move = HaMove;
    type Error = Never;

    fn initial(&self) -> Result<HaState, Never> {
        let mages = std::array::from_fn(|i| Mage {
            hp: self.params.max_hp[i],
            ap: self.params.max_ap[i],
            pos: self.map.starts[TEAM[i] as usize][SLOT[i]] as usize,
            dot_hp: 0,
            dot_ap: 0,
            dot_life: 0,
        });
        let mut s = HaState { mages, cooldown_left: [0; 8], fields: Vec::new(), actor: None, turns: 0, moves: 0, rounds: 0, outcome: 0 };
        s.actor = Self::next_actor(&s, None);
        Self::check_outcome(&mut s);
        Ok(s)
    }

    fn legal(&self, s: &HaState, out: &mut Vec<HaMove>) -> Result<(), Never> {
        out.clear();
        if s.outcome != 0 {
            return Ok(());
        }
        let Some(actor) = s.actor else { return Ok(()) };
        let me = s.mages[actor];
        // hide: the three free hidden cells within reach nearest by walk (then cell number),
        // `choose hide 3 by hex.walk(this.pos, h)`, listed in cell order: cells in walk order
        // until three are found or the walk exceeds the AP.
        let words = self.map.words();
        let mut seen = [0u64; 4];
        for (i, m) in s.mages.iter().enumerate() {
            if m.hp > 0 && TEAM[i] != TEAM[actor] {
                for (w, r) in seen.iter_mut().zip(self.map.sees_row(m.pos)) {
                    *w |= r;
                }
            }
        }
        debug_assert!(words <= seen.len());
        let start = out.len();
        for &c in self.map.by_walk(me.pos) {
            let c = c as usize;
            if self.map.walk(me.pos, c) > me.ap {
                break;
            }
            if !Self::occupied(s, c) && seen[c / 64] >> (c % 64) & 1 == 0 {
                out.push(HaMove::Hide { mage: actor as u8, cell: c as u16 });
                if out.len() - start == 3 {
                    break;
                }
            }
        }
        out[start..].sort_unstable_by_key(|m| match m {
            HaMove::Hide { cell, .. } => *cell,
            _ => 0,
        });
        let end_turn_at = out.len();
        out.push(HaMove::EndTurn { mage: actor as u8 });
        // Every `use` first: `unless attackMove use` drops every attack move while there is
        // one, so attack moves (and their `approach` searches) are looked for only when there
        // is none. Listed in the interpreter's order all the same (an ability's attack moves
        // would follow its use moves, and there are none of those then).
        let before_uses = out.len();
        for k in 2 * actor..2 * actor + 2 {
            let a = &self.params.abilities[k];
            for t in 0..4 {
                if self.can_aim(s, actor, k, t)
                    && self.map.distance(me.pos, s.mages[t].pos) <= a.range
                    && self.map.sees(me.pos, s.mages[t].pos)
                {
                    out.push(HaMove::Use { ability: k as u8, target: t as u8 });
                }
            }
        }
        if out.len() == before_uses {
            for k in 2 * actor..2 * actor + 2 {
                let a = &self.params.abilities[k];
                for t in 0..4 {
                    if self.can_aim(s, actor, k, t) && self.approach(s, me.pos, s.mages[t].pos, me.ap - a.cost, a.range).is_some() {
                        out.push(HaMove::AttackMove { ability: k as u8, target: t as u8 });
                    }
                }
            }
        }
        // `lastResort endTurn 1`.
        if out.len() - 1 > 1 {
            out.remove(end_turn_at);
        }
        Ok(())
    }

    fn apply(&self, s: &mut HaState, m: HaMove) -> Result<(), Never> {
        match m {
            HaMove::Hide { mage, cell } => {
                let (i, c) = (mage as usize, cell as usize);
                let w = self.map.walk(s.mages[i].pos, c);
                s.mages[i].ap -= w;
                s.mages[i].pos = c;
                self.end_turn(s);
            }
            HaMove::EndTurn { .. } => self.end_turn(s),
            HaMove::Use { ability, target } => self.hit(s, ability as usize, target as usize),
            HaMove::AttackMove { ability, target } => {
                let (k, t) = (ability as usize, target as usize);
                let owner = k / 2;
                let a = self.params.abilities[k];
                let from = s.mages[owner].pos;
                let dest = self
                    .approach(s, from, s.mages[t].pos, s.mages[owner].ap - a.cost, a.range)
                    .expect("attackMove is legal only with a cell to approach");
                let o = &mut s.mages[owner];
                o.ap = (o.ap - self.map.walk(from, dest)).max(0);
                o.pos = dest;
                self.hit(s, k, t);
            }
        }
        s.moves += 1;
        Self::check_outcome(s);
        Ok(())
    }

    fn status(&self, s: &HaState, legal: &[HaMove]) -> Status {
        if s.outcome == 1 {
            Status::Draw
        } else if s.outcome >= 2 {
            Status::Won(s.outcome - 2)
        } else if s.turns >= TURN_LIMIT {
            Status::TurnLimit
        } else if s.moves >= STEP_LIMIT {
            Status::StepLimit
        } else if legal.is_empty() {
            Status::Stuck
        } else {
            Status::Running
        }
    }

    fn to_move(&self, s: &HaState) -> usize {
        s.actor.map_or(0, |a| TEAM[a] as usize)
    }

    fn hash(&self, s: &HaState) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        s.hash(&mut h);
        h.finish()
    }
}

/// No goals: the whole game is one search (two-player MCTS).
impl playforge::search::mcts::Goals for NativeHexArena {
    fn goals_reached(&self, _s: &HaState) -> usize {
        0
    }
    fn n_goals(&self) -> usize {
        0
    }
}
