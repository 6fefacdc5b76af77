//! Match-3 (games/match3.wgdl): the paper's scoring pinned on crafted boards (a 3-run is 60, a
//! 4-run 120, a 5-run 200, 20 plain moves 1200), the tile-grid built-ins and seeded chance, and
//! the interpreter against the hand-written native twin (tests/native/match3.rs) move for move.

#[path = "native/match3.rs"]
#[allow(dead_code)]
mod native_match3;

use crate::util;
use native_match3::{Match3, NativeMatch3};
use playforge::game::{Game, WgdlGame};
use playforge::wgdl::probe::ValueRef;
use playforge::wgdl::{Action, CompileOptions, Program, State, Status};
use rand::RngExt;
use std::sync::Arc;

struct M3 {
    p: Arc<Program>,
    game: WgdlGame,
    score: ValueRef,
    mult: ValueRef,
    base: usize,
}

fn m3() -> M3 {
    m3_with(&[])
}

/// Match-3 with parameter overrides (`me.colours` …).
fn m3_with(overrides: &[(&str, f64)]) -> M3 {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games/match3.wgdl");
    let opts = CompileOptions { overrides: overrides.iter().map(|(k, v)| (k.to_string(), *v)).collect(), ..CompileOptions::default() };
    let p = playforge::wgdl::load_with(&path, &opts).unwrap_or_else(|e| panic!("{e}")).program;
    M3 {
        game: WgdlGame::new(p.clone()),
        score: p.value_ref("game.score").unwrap(),
        mult: p.value_ref("me.multiplier").unwrap(),
        base: p.grids[0].base as usize,
        p,
    }
}

impl M3 {
    fn score(&self, st: &State) -> i64 {
        self.p.read(st, self.score) as i64
    }
    fn cells(&self, st: &State) -> Vec<i64> {
        st.slots[self.base..self.base + 49].to_vec()
    }
    /// The legal moves as native swaps (a, b).
    fn swaps(&self, st: &State) -> Vec<(u8, u8)> {
        util::legal(&self.p, st).iter().map(|&a| to_pair(a.bound as usize)).collect()
    }
    fn apply_swap(&self, st: &mut State, pair: (u8, u8)) {
        let m = *util::legal(&self.p, st).iter().find(|a| to_pair(a.bound as usize) == pair).expect("the swap is legal");
        self.p.apply(st, m).unwrap_or_else(|e| panic!("{}", e.render(&self.p)));
    }
}

/// Swap number s of a 7-wide board as the native twin's (a, b).
fn to_pair(s: usize) -> (u8, u8) {
    let i = s / 2;
    if s.is_multiple_of(2) { (i as u8, i as u8 + 1) } else { (i as u8, i as u8 + 7) }
}

/// A 7×7 board with no two equal neighbours (tiles 1–5), with tile 6 planted at `sixes`.
fn crafted(sixes: &[(usize, usize)]) -> Vec<i64> {
    // Across neighbours differ by 2, upper ones by 1 (mod 5): no run, and none appears when the
    // columns of the crafted runs below fall.
    let mut b: Vec<i64> = (0..49).map(|i| 1 + (2 * (i % 7) + i / 7) as i64 % 5).collect();
    for &(x, y) in sixes {
        b[y * 7 + x] = 6;
    }
    b
}

/// Plays swap `pair` on `board` with chance streams 0, 1, 2 … until the refill starts no
/// cascade (the multiplier ends at 2: one clearing step); returns that move's score.
fn one_step_score(m: &M3, board: &[i64], pair: (u8, u8)) -> i64 {
    for seed in 0..200u64 {
        let mut st = m.p.initial_state().unwrap();
        st.slots[m.base..m.base + 49].copy_from_slice(board);
        st.rng = seed;
        st.touch();
        m.apply_swap(&mut st, pair);
        if m.p.read(&st, m.mult) as i64 == 2 {
            return m.score(&st);
        }
    }
    panic!("every refill cascaded");
}

#[test]
fn runs_of_three_four_and_five_score_60_120_200() {
    let m = m3();
    // Row 0: 6 6 _ 6 6 with a 6 above the gap; swapping the gap up makes the run.
    let three = crafted(&[(0, 0), (1, 0), (2, 1)]);
    let four = crafted(&[(0, 0), (1, 0), (3, 0), (2, 1)]);
    let five = crafted(&[(0, 0), (1, 0), (3, 0), (4, 0), (2, 1)]);
    // Swap 2 × 2 + 1: cell (2, 0) with the cell above it.
    assert_eq!(one_step_score(&m, &three, (2, 9)), 60);
    assert_eq!(one_step_score(&m, &four, (2, 9)), 120);
    assert_eq!(one_step_score(&m, &five, (2, 9)), 200);
    // An L (a 3-run across and a 3-run down sharing the moved tile) is two runs: 120.
    let ell = crafted(&[(0, 1), (1, 1), (2, 0), (2, 2), (2, 3)]);
    assert_eq!(one_step_score(&m, &ell, (2, 9)), 120);
}

#[test]
fn a_cascade_step_scores_at_a_higher_multiplier() {
    // Over random games every move scores at least 60, every score is a multiple of 20, and
    // a move whose multiplier ends at m + 1 went through m clearing steps.
    let m = m3();
    let mut rng = playforge::rng::stream(5, 0, 0, 0);
    let mut cascades = 0;
    for seed in 0..100 {
        let g = m.game.clone().with_seed(seed);
        let mut st = g.initial().unwrap();
        let mut legal = Vec::new();
        loop {
            g.legal(&st, &mut legal).unwrap();
            if g.status(&st, &legal) != Status::Running {
                break;
            }
            let before = m.score(&st);
            g.apply(&mut st, legal[rng.random_range(0..legal.len())]).unwrap();
            let gained = m.score(&st) - before;
            let steps = m.p.read(&st, m.mult) as i64 - 1;
            assert!(gained >= 60 * steps.min(1) && gained % 20 == 0, "seed {seed}: a move gained {gained}");
            assert!(steps >= 1);
            // Step j scores at least 60·j: a move of `steps` steps gains at least 60·Σj.
            assert!(gained >= 60 * steps * (steps + 1) / 2, "seed {seed}: {steps} steps gained only {gained}");
            cascades += (steps > 1) as u32;
        }
        assert!(m.score(&st) >= 1200, "seed {seed}: {} below the floor", m.score(&st));
    }
    assert!(cascades > 50, "only {cascades} cascades in 2000 random moves");
}

#[test]
fn twenty_plain_moves_score_the_floor_of_1200() {
    // With the real future visible, pick at each move a swap that clears one 3-run and starts
    // no cascade; some seed allows that for all 20 moves, and then the game scores exactly 1200.
    let m = m3();
    let mut found = None;
    'seeds: for seed in 0..200 {
        let g = m.game.clone().with_seed(seed);
        let mut st = g.initial().unwrap();
        for _ in 0..20 {
            let mut legal = Vec::new();
            g.legal(&st, &mut legal).unwrap();
            let plain = legal.iter().find_map(|&a| {
                let mut next = st.clone();
                g.apply(&mut next, a).unwrap();
                (m.score(&next) - m.score(&st) == 60).then_some(next)
            });
            match plain {
                Some(next) => st = next,
                None => continue 'seeds,
            }
        }
        g.legal(&st, &mut Vec::new()).unwrap();
        assert_eq!(g.status(&st, &[]), Status::Finished, "the game ends after 20 moves");
        found = Some((seed, m.score(&st)));
        break;
    }
    let (seed, score) = found.expect("some seed allows 20 plain moves");
    assert_eq!(score, 1200, "seed {seed}");
}

#[test]
fn start_boards_have_no_run_and_a_legal_move_and_depend_on_the_seed() {
    let m = m3();
    let mut boards = std::collections::HashSet::new();
    for seed in 0..200 {
        let st = m.game.clone().with_seed(seed).initial().unwrap();
        let cells = m.cells(&st);
        assert!(cells.iter().all(|&c| (1..=6).contains(&c)), "seed {seed}: {cells:?}");
        let native = Match3::from_cells(7, 7, 6, &cells.iter().map(|&c| (c - 1) as u8).collect::<Vec<_>>(), 0, 20);
        assert!(!native.has_run(), "seed {seed}: the start board has a run");
        assert!(!m.swaps(&st).is_empty(), "seed {seed}: no legal move");
        boards.insert(cells);
    }
    assert_eq!(boards.len(), 200, "different seeds deal different boards");
}

/// The interpreter's state against the native twin's: board, score, stream and legal moves.
fn same(m: &M3, st: &State, n: &Match3, what: &str) {
    let cells: Vec<i64> = n.cells().iter().map(|&c| c as i64 + 1).collect();
    assert_eq!(m.cells(st), cells, "{what}: boards differ");
    assert_eq!(m.score(st), n.score as i64, "{what}: scores differ");
    assert_eq!(st.rng, n.rng, "{what}: chance streams differ");
    let mut legal = Vec::new();
    NativeMatch3::standard(0).legal(n, &mut legal).unwrap();
    assert_eq!(m.swaps(st), legal, "{what}: legal moves differ");
}

/// Plays `games` seeded random games through both and compares them after every move; returns
/// the mean score and how many moves were followed by a redeal (a deal draws ≥ 49 tiles; no
/// single clearing comes near that).
fn differential(m: &M3, colours: u8, games: u64) -> (f64, u32) {
    let mut total = 0u64;
    let mut redeals = 0;
    for seed in 0..games {
        let g = m.game.clone().with_seed(seed);
        let mut st = g.initial().unwrap();
        let native = NativeMatch3 { colours, ..NativeMatch3::standard(seed) };
        let mut n = native.initial().unwrap();
        same(m, &st, &n, &format!("{colours} colours, seed {seed}, start"));
        let mut rng = playforge::rng::stream(seed, 9, 0, 0);
        let mut legal: Vec<Action> = Vec::new();
        let mut k = 0;
        loop {
            g.legal(&st, &mut legal).unwrap();
            let mut nl = Vec::new();
            native.legal(&n, &mut nl).unwrap();
            assert_eq!(g.status(&st, &legal), native.status(&n, &nl), "seed {seed}, move {k}");
            if g.status(&st, &legal) != Status::Running {
                break;
            }
            let i = rng.random_range(0..legal.len());
            let rng_before = n.rng;
            g.apply(&mut st, legal[i]).unwrap();
            native.apply(&mut n, nl[i]).unwrap();
            k += 1;
            same(m, &st, &n, &format!("{colours} colours, seed {seed}, after move {k}"));
            redeals += (n.rng - rng_before >= 49) as u32;
        }
        assert_eq!(k, 20);
        total += n.score;
    }
    (total as f64 / games as f64, redeals)
}

#[test]
fn interpreted_match3_matches_native_over_1000_games() {
    let (mean, _) = differential(&m3(), 6, 1000);
    assert!((1500.0..6000.0).contains(&mean), "random play averages {mean}");
    // With 9 colours deadlocks are common: the redeal rule is exercised too.
    let (_, redeals) = differential(&m3_with(&[("me.colours", 9.0)]), 9, 200);
    assert!(redeals > 0, "no deadlock redeal in 4000 moves with 9 colours: the rule is untested");
}

#[test]
fn chance_fair_is_declared_and_oracle_is_the_default() {
    let m = m3();
    assert!(!m.game.hidden_chance(), "games/match3.wgdl declares `chance oracle`");
    let src = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games/match3.wgdl")).unwrap();
    let fair = playforge::wgdl::compile_str("fair.wgdl", &src.replace("chance oracle", "chance fair")).unwrap();
    let g = WgdlGame::new(fair.program.clone()).with_seed(4);
    assert!(g.hidden_chance());
    // Reseeding changes the future refills but not the board.
    let st = g.initial().unwrap();
    let mut other = st.clone();
    g.reseed(&mut other, 12345);
    assert_eq!(m.cells(&st), m.cells(&other));
    assert_ne!(st.rng, other.rng);
}

/// A game recorded by `run --chance-seed N --overlay S --record` replays to the same end: the
/// replay keeps the game's chance seed (the refill stream) and its overlays; without them the
/// recorded moves stop being legal.
#[test]
fn a_recorded_game_replays_with_its_chance_seed_and_overlays() {
    let bin = env!("CARGO_BIN_EXE_playforge");
    let dir = std::env::temp_dir().join(format!("playforge-m3-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("game.json");
    let cmd = |args: &[&str]| {
        let o = std::process::Command::new(bin).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
        (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr))
    };
    let rec_s = rec.to_str().unwrap();
    let (ok, ran) = cmd(&[
        "run",
        "games/match3.wgdl",
        "--random",
        "20",
        "--seed",
        "3",
        "--chance-seed",
        "7",
        "--overlay",
        "bottom",
        "--record",
        rec_s,
        "-q",
    ]);
    assert!(ok, "{ran}");
    let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    assert_eq!(saved["chance_seed"], 7);
    assert_eq!(saved["overlays"], serde_json::json!(["bottom"]));
    let (ok, replayed) = cmd(&["replay", rec_s]);
    assert!(ok, "{replayed}");
    assert!(replayed.contains("\nend: "), "{replayed}");
    // The same moves on another refill stream: the replay no longer matches the game.
    let mut other = saved.clone();
    other["chance_seed"] = serde_json::json!(8);
    std::fs::write(&rec, serde_json::to_string(&other).unwrap()).unwrap();
    let (ok, err) = cmd(&["replay", rec_s]);
    assert!(!ok && err.contains("is not legal here"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}
