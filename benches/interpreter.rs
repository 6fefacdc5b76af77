//! Interpreter speed: random group-weighted playouts per second, single thread, on the shipped
//! games, and on the native Simple Coins, Connect Four, hex arena and match-3 twins for the
//! interpreted ÷ native ratio; MCTS decisions (the hex arena's, and match-3's full-expansion
//! search of the persona paper).
//!
//! Run with `cargo bench --bench interpreter`. Each iteration plays one complete playout from
//! the start state with a fresh seed (the state clone is included, as in MCTS).

#[path = "../tests/native/connect_four.rs"]
mod native_connect_four;
#[path = "../tests/native/hex_arena.rs"]
#[allow(dead_code)]
mod native_hex_arena;
#[path = "../tests/native/match3.rs"]
#[allow(dead_code)]
mod native_match3;
#[path = "../tests/native/simple_coins.rs"]
mod native_simple_coins;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use playforge::game::{Game, WgdlGame, pick_grouped};
use playforge::wgdl::Status;
use std::hint::black_box;
use std::path::Path;

fn playout<G: Game>(g: &G, start: &G::State, weights: &[f64], legal: &mut Vec<G::Move>, seed: u64) -> u32 {
    let mut rng = playforge::rng::stream(seed, 0, 0, 0);
    let mut st = start.clone();
    let mut moves = 0;
    loop {
        g.legal(&st, legal).expect("legal");
        if g.status(&st, legal) != Status::Running {
            return moves;
        }
        let m = pick_grouped(g, legal, weights, &mut rng);
        g.apply(&mut st, m).expect("apply");
        moves += 1;
    }
}

fn bench_game<G: Game>(c: &mut Criterion, name: &str, g: &G) {
    let start = g.initial().expect("initial");
    let weights = g.group_weights();
    let mut legal = Vec::with_capacity(256);
    let mut group = c.benchmark_group("playout");
    group.throughput(Throughput::Elements(1));
    let mut seed = 0u64;
    group.bench_function(name, |b| {
        b.iter(|| {
            seed += 1;
            black_box(playout(g, &start, &weights, &mut legal, seed))
        })
    });
    group.finish();
}

/// Reward 1 for the side that won (two-player MCTS), for any game.
struct WinOf<'a, G>(&'a G);

impl<G: Game + Sync> playforge::search::mcts::Evaluator<G::State> for WinOf<'_, G> {
    fn value(&self, st: &G::State, player: usize) -> f64 {
        if self.0.status(st, &[]) == Status::Won(player as u8) { 1.0 } else { 0.0 }
    }
}

/// One MCTS decision of 100 iterations (uniform random playouts, HexMage's 200-move cap) from
/// the start state: the iterations/s of a two-player search.
fn bench_mcts<G: Game + playforge::search::mcts::Goals + Sync>(c: &mut Criterion, name: &str, g: &G) {
    use playforge::search::{
        formula::Formula,
        mcts::{MctsConfig, decide},
    };
    let start = g.initial().expect("initial");
    let cfg = MctsConfig { formula: Formula::ucb1(std::f64::consts::SQRT_2, 2.0), max_playout_moves: 200, ..MctsConfig::default() };
    let mut group = c.benchmark_group("mcts100");
    group.throughput(Throughput::Elements(100));
    let mut seed = 0u64;
    group.bench_function(name, |b| {
        b.iter(|| {
            seed += 1;
            let mut rng = playforge::rng::stream(seed, 0, 0, 0);
            black_box(decide(g, &start, &cfg, &WinOf(g), 100, &mut rng).expect("search").1)
        })
    });
    group.finish();
}

/// One match-3 decision as the persona paper's MCTS makes it: 250 iterations, full expansion,
/// uniform rollouts to the end of the 20 moves, the score / 10 000 as the reward.
fn bench_match3_mcts<G: Game + playforge::search::mcts::Goals + Sync>(
    c: &mut Criterion,
    name: &str,
    g: &G,
    score: impl Fn(&G::State) -> f64 + Sync,
) {
    use playforge::search::{
        FnEval,
        formula::Formula,
        mcts::{FinalChoice, MctsConfig, decide_with},
    };
    let start = g.initial().expect("initial");
    let cfg = MctsConfig {
        formula: Formula::ucb1(std::f64::consts::SQRT_2, 1.0),
        full_expansion: true,
        max_playout_moves: 20,
        ..MctsConfig::default()
    };
    let eval = FnEval(|s: &G::State| score(s) / 10_000.0);
    let mut group = c.benchmark_group("mcts250_full_expansion");
    group.throughput(Throughput::Elements(250));
    let mut seed = 0u64;
    group.bench_function(name, |b| {
        b.iter(|| {
            seed += 1;
            let mut rng = playforge::rng::stream(seed, 0, 0, 0);
            black_box(decide_with(g, &start, &cfg, &eval, 250, &mut rng, FinalChoice::Formula).expect("search").1)
        })
    });
    group.finish();
}

fn load(name: &str) -> Option<WgdlGame> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games").join(name);
    let c = playforge::wgdl::load(&path).ok()?;
    Some(WgdlGame::new(c.program))
}

fn benches(c: &mut Criterion) {
    let sc = load("simple_coins.wgdl").expect("games/simple_coins.wgdl compiles");
    bench_game(c, "simple_coins/interpreted", &sc);
    bench_game(c, "simple_coins/native", &native_simple_coins::NativeSimpleCoins);
    let c4 = load("connect_four.wgdl").expect("games/connect_four.wgdl compiles");
    bench_game(c, "connect_four/interpreted", &c4);
    bench_game(c, "connect_four/native", &native_connect_four::NativeConnectFour);
    // The hex arena with the file's values (a mirror match), uniform random playouts.
    let ha = load("hex_arena.wgdl").expect("games/hex_arena.wgdl compiles");
    bench_game(c, "hex_arena/interpreted", &ha);
    let native = native_hex_arena::NativeHexArena::new(native_hex_arena::Params::default());
    bench_game(c, "hex_arena/native", &native);
    bench_mcts(c, "hex_arena/interpreted", &ha);
    bench_mcts(c, "hex_arena/native", &native);
    // Match-3 on chance seed 7 (the same start board in both), uniform random playouts.
    let m3 = load("match3.wgdl").expect("games/match3.wgdl compiles").with_seed(7);
    let m3_native = native_match3::NativeMatch3::standard(7);
    bench_game(c, "match3/interpreted", &m3);
    bench_game(c, "match3/native", &m3_native);
    let score = m3.program.value_ref("game.score").expect("match-3 has a score");
    let p = m3.program.clone();
    bench_match3_mcts(c, "match3/interpreted", &m3, move |s| p.read(s, score));
    bench_match3_mcts(c, "match3/native", &m3_native, |s| s.score as f64);
    if let Some(ml) = load("magic_land.wgdl") {
        bench_game(c, "magic_land/interpreted", &ml);
    }
}

criterion_group!(name = interpreter; config = Criterion::default().sample_size(30); targets = benches);
criterion_main!(interpreter);
