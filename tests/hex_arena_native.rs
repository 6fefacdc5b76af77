//! The hex arena (`games/hex_arena.wgdl`) against its hand-written native twin
//! (`tests/native/hex_arena.rs`): seeded uniform-random games on random valid encounters (every
//! parameter drawn by `sample_encounter`) and on the file's own numbers must offer the same legal
//! moves, by name, at every step, play the same moves and end with the same status. The arena
//! lowered by hand over the interpreter's state (`benches/lowered/hex_arena.rs`, the speed
//! bench's measure of a compiled tier) must match the interpreter state for state, so that its
//! figures stay about the same game.

#[path = "../benches/lowered/hex_arena.rs"]
#[allow(dead_code)]
mod lowered_hex_arena;
#[path = "native/hex_arena.rs"]
mod native_hex_arena;

use crate::util;
use native_hex_arena::{NativeHexArena, Params};
use playforge::experiment::tournament::sample_encounter;
use playforge::game::{Game, WgdlGame};
use playforge::wgdl::{CompileOptions, Status};
use rand::RngExt;
use std::collections::BTreeMap;
use std::path::Path;

/// Random encounters, and games played on each.
const ENCOUNTERS: u64 = 250;
const GAMES_PER_ENCOUNTER: u64 = 4;

/// Plays one uniform-random game in both implementations side by side; panics at the first step
/// where the legal moves (by name) or the status differ. Returns the moves and the final status.
fn lockstep(interp: &WgdlGame, native: &NativeHexArena, seed: u64, what: &str) -> (Vec<String>, Status) {
    let p = &interp.program;
    let mut rng = playforge::rng::stream(seed, 0, 0, 0);
    let mut rng2 = rng.clone();
    let (mut a, mut b) = (interp.initial().expect("initial state"), native.initial().unwrap());
    let (mut la, mut lb) = (Vec::new(), Vec::new());
    let mut path: Vec<String> = Vec::new();
    loop {
        interp.legal(&a, &mut la).expect("legal moves");
        native.legal(&b, &mut lb).unwrap();
        let na: Vec<String> = la.iter().map(|&m| p.action_name(&a, m)).collect();
        let nb: Vec<String> = lb.iter().map(|&m| native.move_name(m)).collect();
        let (sa, sb) = (interp.status(&a, &la), native.status(&b, &lb));
        if na != nb || sa != sb {
            panic!(
                "{what}, seed {seed}: differ after {} moves (last: {:?})\n interpreter {sa:?}: {na:?}\n native      {sb:?}: {nb:?}",
                path.len(),
                path.last()
            );
        }
        assert_eq!(interp.to_move(&a), native.to_move(&b), "{what}, seed {seed}: side to move after {} moves", path.len());
        if sa != Status::Running {
            return (path, sa);
        }
        let ia = rng.random_range(0..la.len());
        let ib = rng2.random_range(0..lb.len());
        path.push(na[ia].clone());
        interp.apply(&mut a, la[ia]).expect("apply");
        native.apply(&mut b, lb[ib]).unwrap();
    }
}

/// Plays one uniform-random game alone; returns the move names and the final status.
fn random_game<G: Game>(g: &G, seed: u64, name: impl Fn(&G::State, G::Move) -> String) -> (Vec<String>, Status) {
    let mut rng = playforge::rng::stream(seed, 0, 0, 0);
    let mut st = g.initial().expect("initial state");
    let mut legal = Vec::new();
    let mut path = Vec::new();
    loop {
        g.legal(&st, &mut legal).expect("legal moves");
        let status = g.status(&st, &legal);
        if status != Status::Running {
            return (path, status);
        }
        let m = legal[rng.random_range(0..legal.len())];
        path.push(name(&st, m));
        g.apply(&mut st, m).expect("apply");
    }
}

#[test]
fn hex_arena_interpreted_matches_native_over_1000_random_encounter_games() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/hex_arena.wgdl");
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let (mut games, mut moves) = (0usize, 0usize);
    for enc in 0..ENCOUNTERS {
        let (program, values) = sample_encounter(&path, &CompileOptions::default(), 7, enc).expect("an encounter");
        let interp = WgdlGame::new(program);
        let native = NativeHexArena::new(Params::from_overrides(&values));
        for g in 0..GAMES_PER_ENCOUNTER {
            let seed = enc * GAMES_PER_ENCOUNTER + g;
            let what = format!("encounter {enc}");
            let (a, sa) = lockstep(&interp, &native, seed, &what);
            // The same games played separately, as the brief's sequences of names.
            let p = interp.program.clone();
            let (b, sb) = random_game(&native, seed, |_, m| native.move_name(m));
            assert_eq!(a, b, "{what}, seed {seed}: trajectories differ");
            assert_eq!(sa, sb, "{what}, seed {seed}: outcomes differ");
            let (c, sc) = random_game(&interp, seed, |st, m| p.action_name(st, m));
            assert_eq!((a.clone(), sa), (c, sc), "{what}, seed {seed}: the interpreter alone plays differently");
            *outcomes.entry(format!("{sa:?}")).or_default() += 1;
            for m in &a {
                *kinds.entry(m.split('(').next().unwrap_or("").to_string()).or_default() += 1;
            }
            games += 1;
            moves += a.len();
        }
    }
    assert!(games >= 1000, "only {games} games");
    // Random play should both finish fights and run into the turn limit.
    assert!(outcomes.len() >= 3, "suspiciously uniform outcomes: {outcomes:?}");
    assert!(moves > games * 20, "games are suspiciously short: {moves} moves in {games} games");
    // Every kind of listed move was played.
    for k in ["hide", "endTurn", "use", "attackMove"] {
        assert!(kinds.get(k).is_some_and(|&n| n > 0), "no {k} move in {games} games: {kinds:?}");
    }
    eprintln!("hex arena differential: {games} games, {moves} moves, outcomes {outcomes:?}, moves {kinds:?}");
}

#[test]
fn hex_arena_file_defaults_match_native_defaults() {
    let interp = WgdlGame::new(util::game("hex_arena.wgdl").program);
    let native = NativeHexArena::new(Params::default());
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    for seed in 0..100 {
        let (_, s) = lockstep(&interp, &native, 1_000_000 + seed, "file defaults");
        *outcomes.entry(format!("{s:?}")).or_default() += 1;
    }
    eprintln!("hex arena file defaults: outcomes {outcomes:?}");
    assert!(outcomes.len() >= 2, "suspiciously uniform outcomes: {outcomes:?}");
}

#[test]
fn hex_arena_lowered_by_hand_matches_the_interpreter_state_for_state() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/hex_arena.wgdl");
    let mut programs = vec![util::game("hex_arena.wgdl").program];
    for enc in 0..60 {
        programs.push(sample_encounter(&path, &CompileOptions::default(), 11, enc).expect("an encounter").0);
    }
    let (mut moves, mut finished) = (0usize, 0usize);
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for (enc, program) in programs.into_iter().enumerate() {
        let interp = WgdlGame::new(program);
        let lowered = lowered_hex_arena::LoweredHexArena::new(interp.program.clone());
        for g in 0..4u64 {
            let (played, status) = lowered_hex_arena::lockstep(&interp, &lowered, enc as u64 * 4 + g, &format!("encounter {enc}"));
            finished += matches!(status, Status::Won(_) | Status::Draw) as usize;
            moves += played.len();
            for m in played {
                *kinds.entry(interp.program.actions[m.def as usize].name.clone()).or_default() += 1;
            }
        }
    }
    // The games went far enough to exercise every move and both ends of a game.
    assert!(finished > 0 && moves > 244 * 20, "{moves} moves, {finished} games won or drawn");
    for k in ["hide", "endTurn", "use", "attackMove"] {
        assert!(kinds.get(k).is_some_and(|&n| n > 0), "no {k} move: {kinds:?}");
    }
}
