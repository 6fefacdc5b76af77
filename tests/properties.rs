//! Properties of random play, checked with proptest over random seeds on Simple Coins and on a
//! small farm game written here that uses every dynamic feature: timers, rules, `create`,
//! `createAndAssign`, `create:` hooks, `forEveryGOD`, `forEveryInstance` and `delete`.
//!
//! Every applied action was in the legal list and [`Program::is_legal`] agrees with the list
//! (including on random actions that are not in it); cloning a state and replaying moves gives
//! equal states and fingerprints; different states get different fingerprints; timers fire in
//! order of due time and the clock never goes back; `Finished` means exactly "the last goal
//! holds"; and the same seed gives the same trajectory.

use crate::util;
use playforge::rng;
use playforge::wgdl::program::NONE;
use playforge::wgdl::{Action, Program, State, Status};
use proptest::prelude::*;
use rand::RngExt;
use std::collections::HashMap;
use std::sync::Arc;

/// A farm: plant crops into fields (forEveryGOD + createAndAssign), tend them (two timers with
/// the same due time), harvest them (delete), hire workers (create) and employ them
/// (forEveryInstance + a timer bound to the worker), workers quit (delete). Rules level the
/// player up and check that timers fire in order: each `fire` writes its own due time to
/// `global.lastFired`, and `checkOrder` clears `global.orderOk` if that ever goes down.
const FARM: &str = "class globalClass
attribute globalClass coins long 20
attribute globalClass harvests long 0
attribute globalClass level long 1
attribute globalClass crops long 0
attribute globalClass lastFired long 0
attribute globalClass prevFired long 0
attribute globalClass orderOk boolean true
object global is globalClass
initial global
duration long 7
duration wait long 25

class crop
attribute class crop growTime long 10
attribute crop dueAt long 0
attribute crop ripe boolean false
object wheat is crop
attribute wheat growTime 13
object corn is crop
attribute corn growTime 31

class farm
attribute farm crop object:crop null
object field is farm
initial field
initial field

class worker
attribute worker busy boolean false
object peasant is worker

action create:crop countCrop
consequence incCrops direct global.crops = global.crops + long 1
hasConsequence countCrop incCrops

action farm plant forEveryGOD crop
condition plant this.crop == null
condition plant global.coins >= long 2
consequence pay direct global.coins = global.coins - long 2
consequence sow createAndAssign crop this.crop
hasConsequence plant pay
hasConsequence plant sow

action crop tend
condition tend game.time >= this.dueAt
condition tend not this.ripe
consequence setDue direct this.dueAt = game.time + this.growTime
consequence fireLater timed this.growTime fire
consequence ripenLater timed this.growTime ripen
consequence fire direct global.lastFired = this.dueAt
consequence ripen direct this.ripe = boolean true
hasConsequence tend setDue
hasConsequence tend fireLater
hasConsequence tend ripenLater

action farm harvest
condition harvest this.crop != null
condition harvest this.crop.ripe
consequence earn direct global.coins = global.coins + long 5
consequence countHarvest direct global.harvests = global.harvests + long 1
consequence eat delete this.crop
consequence clear direct this.crop = null
hasConsequence harvest earn
hasConsequence harvest countHarvest
hasConsequence harvest eat
hasConsequence harvest clear

action globalClass hire
condition hire global.coins >= long 3
consequence payHire direct global.coins = global.coins - long 3
consequence newWorker create peasant
hasConsequence hire payHire
hasConsequence hire newWorker

action farm employ forEveryInstance worker
condition employ not worker.busy
consequence occupy direct worker.busy = boolean true
consequence earnWork direct global.coins = global.coins + long 1
consequence freeLater timed long 20 free
consequence free direct worker.busy = boolean false
hasConsequence employ occupy
hasConsequence employ earnWork
hasConsequence employ freeLater

action worker quit
consequence leave delete this
hasConsequence quit leave

action globalClass wait

action levelUp
condition levelUp global.harvests >= global.level * long 2
consequence nextLevel direct global.level = global.level + long 1
hasConsequence levelUp nextLevel

action checkOrder
condition checkOrder global.lastFired != global.prevFired
consequence flag conditional global.lastFired < global.prevFired bad
consequence bad direct global.orderOk = boolean false
consequence sync direct global.prevFired = global.lastFired
hasConsequence checkOrder flag
hasConsequence checkOrder sync

goal 1 global.level >= long 2
goal 2 global.level >= long 3
goal 3 global.level >= long 5
";

fn farm() -> Arc<Program> {
    util::compile(FARM).program
}

fn coins() -> Arc<Program> {
    util::game("simple_coins.wgdl").program
}

/// One random game: the states (initial first) and the moves between them, with the legal list
/// of every state. Stops when the game is over or after `max` moves.
struct Trajectory {
    states: Vec<State>,
    moves: Vec<Action>,
    legal: Vec<Vec<Action>>,
}

fn play(p: &Program, seed: u64, max: usize) -> Trajectory {
    let mut r = rng::stream(seed, 0, 0, 0);
    let mut st = p.initial_state().unwrap_or_else(|e| panic!("{}", e.render(p)));
    let mut t = Trajectory { states: vec![st.clone()], moves: vec![], legal: vec![] };
    for _ in 0..max {
        let mut legal = Vec::new();
        p.legal_actions(&st, &mut legal).unwrap_or_else(|e| panic!("{}", e.render(p)));
        let over = p.status(&st, &legal) != Status::Running;
        t.legal.push(legal.clone());
        if over {
            break;
        }
        let a = legal[r.random_range(0..legal.len())];
        // apply_checked asks is_legal again before applying.
        p.apply_checked(&mut st, a).unwrap_or_else(|e| panic!("{}", e.render(p)));
        t.moves.push(a);
        t.states.push(st.clone());
    }
    t
}

/// Everything in a state that can change how the game goes on, except the move counter and
/// the timers' tie-breaking sequence numbers (the fingerprint leaves those out on purpose, to
/// find transpositions).
fn essence(st: &State) -> impl PartialEq + std::fmt::Debug + '_ {
    let timers: Vec<_> = st.timers.iter().map(|t| (t.due, t.cons, t.this, t.bound)).collect();
    (&st.slots, &st.objects, timers, st.clock, st.sessions, st.goal, st.to_move, st.rng)
}

fn programs() -> [(&'static str, Arc<Program>); 2] {
    [("simple_coins", coins()), ("farm", farm())]
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn every_move_is_in_the_legal_list_and_is_legal_agrees(seed in any::<u64>()) {
        for (name, p) in programs() {
            let t = play(&p, seed, 250);
            let mut r = rng::stream(seed, 1, 0, 0);
            for (i, legal) in t.legal.iter().enumerate() {
                let st = &t.states[i];
                if let Some(a) = t.moves.get(i) {
                    prop_assert!(legal.contains(a), "{name}: move {i} was not listed");
                }
                let mut sorted = legal.clone();
                sorted.sort();
                sorted.dedup();
                prop_assert_eq!(sorted.len(), legal.len(), "{}: a move is listed twice", name);
                for &a in legal {
                    prop_assert_eq!(p.is_legal(st, a), Ok(true), "{}: listed {} is not legal", name, p.action_name(st, a));
                }
                // Random actions that are not listed are not legal.
                let n_ids = st.objects.len().max(p.gods.len()) as u32 + 2;
                for _ in 0..20 {
                    let a = Action {
                        def: r.random_range(0..p.actions.len() as u16 + 2),
                        this: r.random_range(0..st.objects.len() as u32 + 2),
                        bound: if r.random_bool(0.3) { NONE } else { r.random_range(0..n_ids) },
                    };
                    if !legal.contains(&a) {
                        prop_assert_eq!(p.is_legal(st, a), Ok(false), "{}: unlisted {:?} is legal", name, a);
                    }
                }
            }
        }
    }

    #[test]
    fn a_cloned_state_replays_to_equal_states_and_fingerprints(seed in any::<u64>(), cut in 0usize..100) {
        for (name, p) in programs() {
            let t = play(&p, seed, 200);
            let k = cut.min(t.moves.len());
            let mut st = t.states[k].clone();
            prop_assert_eq!(st.fingerprint(), t.states[k].fingerprint());
            for (i, &a) in t.moves.iter().enumerate().skip(k) {
                p.apply(&mut st, a).unwrap_or_else(|e| panic!("{}", e.render(&p)));
                prop_assert!(st == t.states[i + 1], "{}: replay differs after move {}", name, i);
                prop_assert_eq!(st.fingerprint(), t.states[i + 1].fingerprint());
            }
        }
    }

    #[test]
    fn timers_stay_sorted_fire_in_order_and_the_clock_never_goes_back(seed in any::<u64>()) {
        let p = farm();
        let t = play(&p, seed, 250);
        let global = 0;
        let attr = |st: &State, name: &str| {
            let i = p.classes[st.objects[global].class as usize].attrs.iter().position(|a| a.name == name).expect("attribute");
            st.slots[st.objects[global].base as usize + i]
        };
        for w in t.states.windows(2) {
            let (before, after) = (&w[0], &w[1]);
            prop_assert!(after.clock >= before.clock, "clock went back");
            // Sorted so that the next to fire is last: descending by (due, seq).
            prop_assert!(after.timers.windows(2).all(|x| (x[0].due, x[0].seq) > (x[1].due, x[1].seq)), "timers out of order");
            prop_assert!(after.timers.iter().all(|t| t.due > after.clock), "a timer is overdue");
            prop_assert!(attr(after, "lastFired") <= after.clock);
            prop_assert_eq!(attr(after, "orderOk"), 1, "a timer fired before an earlier one");
        }
    }

    #[test]
    fn finished_exactly_when_the_last_goal_is_reached(seed in any::<u64>()) {
        for (name, p) in programs() {
            let t = play(&p, seed, 300);
            for (st, legal) in t.states.iter().zip(&t.legal) {
                let finished = p.status(st, legal) == Status::Finished;
                prop_assert_eq!(finished, st.goal as usize == p.goals.len(), "{}: goal {}", name, st.goal);
            }
        }
    }
}

#[test]
fn simple_coins_random_play_always_finishes_after_four_sessions() {
    let p = coins();
    for seed in 0..50 {
        let t = play(&p, seed, 1000);
        let last = t.states.last().expect("a state");
        assert_eq!(p.status(last, t.legal.last().expect("legal")), Status::Finished, "seed {seed}");
        assert_eq!(t.moves.iter().filter(|a| p.actions[a.def as usize].name == "endSession").count(), 4);
    }
}

#[test]
fn the_farm_exercises_what_it_is_meant_to() {
    // Random play on the farm must actually plant, tend, harvest, hire, quit and level up, or the
    // properties above say little about them.
    let p = farm();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let (mut finished, mut fired) = (0, 0);
    for seed in 0..200 {
        let t = play(&p, seed, 300);
        for a in &t.moves {
            *seen.entry(p.actions[a.def as usize].name.clone()).or_default() += 1;
        }
        let last = t.states.last().expect("a state");
        finished += (last.goal as usize == p.goals.len()) as usize;
        assert!(t.states.iter().any(|s| !s.timers.is_empty()), "seed {seed}: no timer was ever pending");
        // `fire` timers write a due time > 0 into global.lastFired.
        let (g, i) = (last.objects[0], p.classes[0].attrs.iter().position(|a| a.name == "lastFired").expect("lastFired"));
        fired += (last.slots[g.base as usize + i] > 0) as usize;
    }
    for action in ["plant", "tend", "harvest", "hire", "employ", "quit", "wait"] {
        assert!(seen.get(action).copied().unwrap_or(0) > 20, "{action} played only {:?} times", seen.get(action));
    }
    assert!(finished > 0, "no random game reached the last goal");
    assert!(fired > 150, "timers fired in only {fired} games");
}

#[test]
fn different_states_have_different_fingerprints() {
    for (name, p) in programs() {
        let mut by_print: HashMap<u64, State> = HashMap::new();
        for seed in 0..100 {
            for st in play(&p, seed, 200).states {
                match by_print.get(&st.fingerprint()) {
                    Some(other) => assert_eq!(essence(other), essence(&st), "{name}: two different states share a fingerprint"),
                    None => {
                        by_print.insert(st.fingerprint(), st);
                    }
                }
            }
        }
        assert!(by_print.len() > 1000, "{name}: only {} distinct states", by_print.len());
    }
}

#[test]
fn the_same_seed_gives_the_same_trajectory() {
    for (name, p) in programs() {
        let prints = |seed| play(&p, seed, 200).states.iter().map(State::fingerprint).collect::<Vec<_>>();
        for seed in 0..20 {
            let (a, b) = (play(&p, seed, 200), play(&p, seed, 200));
            assert_eq!(a.moves, b.moves, "{name}: seed {seed}");
            assert!(a.states == b.states, "{name}: seed {seed}");
        }
        assert_ne!(prints(1), prints(2), "{name}: different seeds should play differently");
    }
}
