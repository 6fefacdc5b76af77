//! The board games of `games/` held to OpenSpiel 2.0.2: perft from the start (the number of move
//! sequences of each length; a sequence that ends the game early counts 0 at the longer lengths,
//! as OpenSpiel counts) equals OpenSpiel's published figures, and a seeded random game of each is
//! the same game twice and ends with a winner or a draw.

use playforge::game::{Game, WgdlGame};
use playforge::wgdl::{self, Action, CompileOptions, Program, State, Status};
use rand::RngExt;
use std::path::Path;
use std::sync::Arc;

/// One game of the table: its file, the declared parameters set for it, and OpenSpiel 2.0.2's
/// perft for depths 1, 2, … (as many as are checked here).
struct Case {
    file: &'static str,
    set: &'static [(&'static str, f64)],
    perft: &'static [u64],
}

/// OpenSpiel 2.0.2's perft figures. Depths checked are those the issue names (Breakthrough to 5,
/// Othello to 8, Hex 5×5 to 5, checkers to 7); each case takes about a second in a release test
/// run. Pig's count a chance outcome as a move, as OpenSpiel's tree does (its lockstep test
/// checks the probabilities).
const CASES: &[Case] = &[
    Case { file: "breakthrough.wgdl", set: &[], perft: &[22, 484, 11_132, 256_036, 6_182_818] },
    Case { file: "othello.wgdl", set: &[], perft: &[4, 12, 56, 244, 1_396, 8_200, 55_092, 390_216] },
    Case { file: "hex.wgdl", set: &[("rules.size", 5.0)], perft: &[25, 600, 13_800, 303_600, 6_375_600] },
    Case { file: "checkers.wgdl", set: &[], perft: &[7, 49, 302, 1_469, 7_361, 36_768, 179_255] },
    Case { file: "pig.wgdl", set: &[], perft: &[2, 8, 20, 68, 188, 596] },
];

/// Compiles `games/<file>` with the declared parameters in `set` overridden.
fn compile(file: &str, set: &[(&str, f64)]) -> Arc<Program> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games").join(file);
    let opts = CompileOptions { overrides: set.iter().map(|&(n, v)| (n.to_string(), v)).collect(), ..CompileOptions::default() };
    wgdl::load_with(&path, &opts).unwrap_or_else(|e| panic!("{file}: {e}")).program
}

/// The move sequences of length `depth` from `st` (as `playforge perft` counts them: 0 from a
/// state that is over); one move list per level, reused.
fn perft(p: &Program, st: &State, depth: usize, bufs: &mut Vec<Vec<Action>>) -> u64 {
    let mut legal = std::mem::take(&mut bufs[depth]);
    p.legal_actions(st, &mut legal).unwrap_or_else(|e| panic!("{}", e.render(p)));
    let n = if p.status(st, &legal) != Status::Running {
        0
    } else if depth == 1 {
        legal.len() as u64
    } else {
        let mut n = 0;
        for &a in &legal {
            let mut next = st.clone();
            p.apply(&mut next, a).unwrap_or_else(|e| panic!("{}", e.render(p)));
            n += perft(p, &next, depth - 1, bufs);
        }
        n
    };
    bufs[depth] = legal;
    n
}

fn check_perft(case: &Case) {
    let p = compile(case.file, case.set);
    let start = p.initial_state().unwrap_or_else(|e| panic!("{}", e.render(&p)));
    let mut bufs = vec![Vec::new(); case.perft.len() + 1];
    let got: Vec<u64> = (1..=case.perft.len()).map(|d| perft(&p, &start, d, &mut bufs)).collect();
    assert_eq!(got, case.perft, "{} {:?}: perft against OpenSpiel 2.0.2", case.file, case.set);
}

#[test]
fn breakthrough_perft_matches_openspiel_to_depth_5() {
    check_perft(&CASES[0]);
}

#[test]
fn othello_perft_matches_openspiel_to_depth_8() {
    check_perft(&CASES[1]);
}

#[test]
fn hex_5x5_perft_matches_openspiel_to_depth_5() {
    check_perft(&CASES[2]);
}

#[test]
fn checkers_perft_matches_openspiel_to_depth_7() {
    check_perft(&CASES[3]);
}

#[test]
fn pig_perft_matches_openspiel_to_depth_6() {
    check_perft(&CASES[4]);
}

/// Hex's size is a declared parameter: at its default (11 × 11, OpenSpiel's) the first move has
/// 121 choices, and every other size its square.
#[test]
fn hex_size_is_a_parameter() {
    for (size, want) in [(None, 121), (Some(3.0), 9), (Some(7.0), 49)] {
        let set: Vec<(&str, f64)> = size.map(|s| vec![("rules.size", s)]).unwrap_or_default();
        let p = compile("hex.wgdl", &set);
        let mut bufs = vec![Vec::new(); 2];
        assert_eq!(perft(&p, &p.initial_state().unwrap(), 1, &mut bufs), want, "hex size {size:?}");
    }
}

/// One uniformly random game from `seed`: the moves by name, and how it ended.
fn random_game(g: &WgdlGame, seed: u64) -> (Vec<String>, Status) {
    let mut rng = playforge::rng::stream(seed, 0, 0, 0);
    let mut st = g.initial().expect("initial state");
    let (mut legal, mut moves) = (Vec::new(), Vec::new());
    // A bound far above any of these games' lengths (Othello ≤ 60 placements plus passes,
    // Breakthrough and Hex far fewer): a game that does not end is a failure, not a hang.
    for _ in 0..1_000 {
        g.legal(&st, &mut legal).expect("legal moves");
        let status = g.status(&st, &legal);
        if status != Status::Running {
            return (moves, status);
        }
        let m = legal[rng.random_range(0..legal.len())];
        moves.push(g.program.action_name(&st, m));
        g.apply(&mut st, m).expect("apply");
    }
    panic!("seed {seed}: no end after 1 000 moves: {moves:?}");
}

#[test]
fn random_games_are_reproducible_and_end_with_a_winner_or_a_draw() {
    for case in CASES {
        let g = WgdlGame::new(compile(case.file, case.set));
        let mut wins = [0; 2];
        for seed in 0..20 {
            let (a, end) = random_game(&g, seed);
            let (b, again) = random_game(&g, seed);
            assert_eq!((&a, end), (&b, again), "{} seed {seed}: the same seed, another game", case.file);
            assert!(!a.is_empty(), "{} seed {seed}: no move played", case.file);
            match end {
                Status::Won(k) if k < 2 => wins[k as usize] += 1,
                // Othello by equal counts, checkers by 40 quiet moves.
                Status::Draw => assert!(matches!(case.file, "othello.wgdl" | "checkers.wgdl"), "{} seed {seed}: a draw", case.file),
                s => panic!("{} seed {seed}: ended as {s:?} after {a:?}", case.file),
            }
        }
        // Over 20 random games each side wins some (uniform play is far from one-sided).
        assert!(wins[0] > 0 && wins[1] > 0, "{}: wins by side {wins:?}", case.file);
        // Hex cannot end drawn, and a full board has a winner: at most size² moves.
        if case.file == "hex.wgdl" {
            let (moves, _) = random_game(&g, 99);
            assert!(moves.len() <= 25, "hex 5×5: {} moves", moves.len());
        }
    }
}
