//! The searchers on real games: determinism (same seed ⇒ same result, on 1 or 2 root-parallel
//! threads), every enhancement returning a path that replays to the value it reports, the Simple
//! Coins optimum, NMCS, move-by-move play, and the play/experiment configs shipped in configs/.

use crate::util;
use playforge::experiment::config::PlayConfig;
use playforge::experiment::play::{ResultEval, play};
use playforge::game::{Game, WgdlGame};
use playforge::search::formula::Formula;
use playforge::search::mcts::{Budget, Evaluator, MctsConfig};
use playforge::search::run::{Algorithm, PlanConfig, plan, play_move_by_move};
use std::path::Path;

fn sc_eval(c: &playforge::wgdl::Compiled) -> ResultEval {
    let cfg = PlayConfig::parse(
        "t.toml",
        "[experiment]\nname=\"t\"\ngame=\"x\"\n[result]\nterms=[{value=\"global.coins\",weight=1.0,max=2400}]\n",
    )
    .unwrap();
    ResultEval::new(c.program.clone(), &cfg.result.terms).unwrap()
}

fn sc_cfg(iterations: u64, seed: u64) -> PlanConfig {
    PlanConfig {
        budget: Budget::Iterations(iterations),
        subgoals: 4,
        seed,
        mcts: MctsConfig {
            formula: Formula::ucb1(0.1, 2.0),
            group_weights: Some(vec![0.1, 0.9]),
            duplicate_detection: true,
            add_best_path: true,
            cut_off: true,
            ..MctsConfig::default()
        },
        ..PlanConfig::default()
    }
}

/// Replays a path from the start and returns the evaluator's value at its end.
fn replay(g: &WgdlGame, eval: &ResultEval, path: &[playforge::wgdl::Action]) -> f64 {
    let mut st = g.initial().unwrap();
    for &a in path {
        assert!(g.program.is_legal(&st, a).unwrap(), "path contains an illegal move");
        g.apply(&mut st, a).unwrap();
    }
    eval.value(&st, 0)
}

#[test]
fn same_seed_same_result_on_one_or_two_threads() {
    let c = util::game("simple_coins.wgdl");
    let g = WgdlGame::new(c.program.clone());
    let eval = sc_eval(&c);
    let a = plan(&g, &eval, &sc_cfg(20_000, 7)).unwrap();
    let b = plan(&g, &eval, &sc_cfg(20_000, 7)).unwrap();
    assert_eq!(a.path, b.path);
    assert_eq!(a.value, b.value);
    // Two root-parallel trees: the same on a 1-thread and a 2-thread pool.
    let two = PlanConfig { root_parallel: 2, ..sc_cfg(20_000, 7) };
    let on =
        |threads: usize| rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| plan(&g, &eval, &two).unwrap());
    let (x, y) = (on(1), on(2));
    assert_eq!(x.path, y.path);
    assert_eq!(x.value, y.value);
    let other = plan(&g, &eval, &sc_cfg(20_000, 8)).unwrap();
    assert!(other.path != a.path || other.value != a.value || a.value == 1.0);
}

#[test]
fn simple_coins_optimum_2400_is_found() {
    let c = util::game("simple_coins.wgdl");
    let g = WgdlGame::new(c.program.clone());
    let eval = sc_eval(&c);
    let best = (1..=3).map(|seed| plan(&g, &eval, &sc_cfg(1_200_000, seed)).unwrap().value).fold(0.0, f64::max);
    assert_eq!((best * 2400.0).round(), 2400.0, "best of 3 seeds: {}", best * 2400.0);
}

#[test]
fn every_enhancement_returns_a_path_that_replays_to_its_value() {
    let c = util::game("simple_coins.wgdl");
    let g = WgdlGame::new(c.program.clone());
    let eval = sc_eval(&c);
    let base = sc_cfg(4_000, 3);
    let variants: Vec<(&str, PlanConfig)> = vec![
        ("plain", PlanConfig { mcts: MctsConfig { group_weights: None, ..MctsConfig::default() }, ..base.clone() }),
        ("one goal", PlanConfig { subgoals: 1, ..base.clone() }),
        ("forfeit", PlanConfig { mcts: MctsConfig { forfeit: Some(1.0), ..base.mcts.clone() }, ..base.clone() }),
        ("non-tree", PlanConfig { mcts: MctsConfig { non_tree_until: Some(500), ..base.mcts.clone() }, ..base.clone() }),
        ("widening", PlanConfig { mcts: MctsConfig { widening: Some(2), ..base.mcts.clone() }, ..base.clone() }),
        ("node limit", PlanConfig { mcts: MctsConfig { node_limit_factor: Some(2.0), ..base.mcts.clone() }, ..base.clone() }),
        ("split runs", PlanConfig { split_runs: 2, ..base.clone() }),
        ("root parallel", PlanConfig { root_parallel: 2, ..base.clone() }),
        ("tree parallel", PlanConfig { tree_parallel: 2, ..base.clone() }),
        ("ucb-tuned2", PlanConfig { mcts: MctsConfig { formula: Formula::ucb_tuned2(0.5, 0.02), ..base.mcts.clone() }, ..base.clone() }),
        ("sp-mcts", PlanConfig { mcts: MctsConfig { formula: Formula::sp_mcts(0.3, 0.01), ..base.mcts.clone() }, ..base.clone() }),
        ("nmcs 1", PlanConfig { algorithm: Algorithm::Nmcs(1), ..base.clone() }),
    ];
    for (name, cfg) in variants {
        let p = plan(&g, &eval, &cfg).unwrap();
        let v = replay(&g, &eval, &p.path);
        assert!((v - p.value).abs() < 1e-12, "{name}: reported {} but the path replays to {v}", p.value);
        // Random group-weighted play ends a session after ~9 coin moves: about 400 coins (0.17).
        assert!(p.value > 0.3, "{name}: value {} is hardly better than random play", p.value);
        assert!(p.iterations() > 0, "{name}");
    }
}

#[test]
fn duplicate_detection_aborts_iterations_and_improves_simple_coins() {
    let c = util::game("simple_coins.wgdl");
    let g = WgdlGame::new(c.program.clone());
    let eval = sc_eval(&c);
    let off = |seed| PlanConfig {
        mcts: MctsConfig { duplicate_detection: false, cut_off: false, ..sc_cfg(0, seed).mcts },
        ..sc_cfg(60_000, seed)
    };
    let on = |seed| PlanConfig { mcts: MctsConfig { cut_off: false, ..sc_cfg(0, seed).mcts }, ..sc_cfg(60_000, seed) };
    let (mut s_on, mut s_off, mut aborted) = (0.0, 0.0, 0);
    for seed in 1..=4 {
        let a = plan(&g, &eval, &on(seed)).unwrap();
        aborted += a.stages.iter().map(|s| s.aborted).sum::<u64>();
        s_on += a.value;
        s_off += plan(&g, &eval, &off(seed)).unwrap().value;
    }
    assert!(aborted > 0);
    assert!(s_on > s_off, "duplicate detection on {s_on} vs off {s_off} (sum of 4 seeds)");
}

#[test]
fn move_by_move_play_with_tree_reuse_finishes_the_game() {
    let c = util::game("simple_coins.wgdl");
    let g = WgdlGame::new(c.program.clone());
    let eval = sc_eval(&c);
    let cfg = MctsConfig { formula: Formula::ucb1(0.1, 2.0), group_weights: Some(vec![0.1, 0.9]), ..MctsConfig::default() };
    let (moves, st) = play_move_by_move(&g, &eval, &cfg, Budget::Iterations(300), 1000, 5).unwrap();
    assert_eq!(st.goal, 4);
    assert!(eval.value(&st, 0) > 0.6, "{}", eval.value(&st, 0));
    assert!(moves.len() >= 4);
}

#[test]
fn shipped_play_configs_load_and_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::env::set_current_dir(root).unwrap();
    for name in ["simple_coins.toml", "magic_land.toml", "magic_land_level5.toml"] {
        let mut cfg = PlayConfig::load(&root.join("configs").join(name)).unwrap_or_else(|e| panic!("{e}"));
        cfg.search.budget_ms = None;
        cfg.search.iterations = Some(300);
        cfg.search.root_parallel = 1;
        let r = play(&cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.goals.len(), r.goals_total, "{name}: not every goal reached");
        assert!(r.value > 0.0, "{name}");
    }
}

#[test]
fn shipped_experiment_configs_resolve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::env::set_current_dir(root).unwrap();
    let mut n = 0;
    for e in std::fs::read_dir(root.join("configs/experiments")).unwrap() {
        let p = e.unwrap().path();
        playforge::experiment::repeat::load(&p).unwrap_or_else(|e| panic!("{e}"));
        n += 1;
    }
    assert!(n >= 8, "only {n} experiment configs");
}

#[test]
fn retrying_after_a_duplicate_abort_is_an_exact_shortcut() {
    let c = util::game("simple_coins.wgdl");
    let g = WgdlGame::new(c.program.clone());
    let eval = sc_eval(&c);
    for (seed, cut_off) in [(1, false), (2, true), (3, true)] {
        let mut with = sc_cfg(30_000, seed);
        with.mcts.cut_off = cut_off;
        let mut without = with.clone();
        without.mcts.retry_duplicates = false;
        let (a, b) = (plan(&g, &eval, &with).unwrap(), plan(&g, &eval, &without).unwrap());
        assert_eq!(a.path, b.path, "seed {seed}");
        assert_eq!(a.value, b.value, "seed {seed}");
        let aborted = |p: &playforge::search::run::Plan<_, _>| p.stages.iter().map(|s| s.aborted).sum::<u64>();
        assert_eq!(aborted(&a), aborted(&b), "seed {seed}");
        assert!(aborted(&a) > 1000, "the test must exercise aborts");
    }
}
