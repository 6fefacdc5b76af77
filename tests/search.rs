//! The searchers on real games: determinism (same seed ⇒ same result, on 1 or 2 root-parallel
//! threads), every enhancement returning a path that replays to the value it reports, the Simple
//! Coins optimum, NMCS, move-by-move play, and the play/experiment configs shipped in configs/.
//! Full expansion and the final move choice (the match-3 persona paper's MCTS) on a four-move
//! game small enough to check the tree by hand.

use crate::util;
use playforge::experiment::config::PlayConfig;
use playforge::experiment::play::{ResultEval, play};
use playforge::game::{Game, WgdlGame};
use playforge::search::formula::Formula;
use playforge::search::mcts::{self, Budget, Evaluator, FinalChoice, MctsConfig, SubGame, decide, decide_with, decision_tree};
use playforge::search::run::{Algorithm, PlanConfig, plan, play_move_by_move};
use playforge::wgdl::probe::ValueRef;
use playforge::wgdl::{Program, State};
use std::path::Path;
use std::sync::Arc;

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
        ("full expansion", PlanConfig { mcts: MctsConfig { full_expansion: true, ..base.mcts.clone() }, ..base.clone() }),
        // Two workers may reach one unvisited (lazily made) leaf at once: it is expanded once.
        (
            "full expansion, tree parallel",
            PlanConfig { mcts: MctsConfig { full_expansion: true, ..base.mcts.clone() }, tree_parallel: 2, ..base.clone() },
        ),
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

/// Four moves, then the step limit ends the game: `gold` (+6, legal only as the first move), `two`
/// (+2), `one` (+1) and `zero` (+0). The best line is gold, two, two, two = 12; from any other
/// first move at most 8 can be reached.
const GOLD: &str = "\
class g
attribute g score long 0
object o is g
initial o
limit steps 4
action g gold
condition gold game.moves == long 0
consequence g6 direct o.score = o.score + long 6
hasConsequence gold g6
action g one
consequence p1 direct o.score = o.score + long 1
hasConsequence one p1
action g two
consequence p2 direct o.score = o.score + long 2
hasConsequence two p2
action g zero
consequence p0 direct o.score = o.score + long 0
hasConsequence zero p0
goal 1 o.score >= long 100
";

/// A value of the state (`o.score`, `game.moves`) divided by `max`, clamped to [0, 1].
struct ValueEval {
    program: Arc<Program>,
    value: ValueRef,
    max: f64,
}

impl Evaluator<State> for ValueEval {
    fn value(&self, st: &State, _player: usize) -> f64 {
        (self.program.read(st, self.value) / self.max).clamp(0.0, 1.0)
    }
}

/// The gold game and an evaluator of `value` / `max`.
fn gold(value: &str, max: f64) -> (WgdlGame, ValueEval) {
    let c = util::compile(GOLD);
    let value = c.program.value_ref(value).unwrap();
    (WgdlGame::new(c.program.clone()), ValueEval { program: c.program, value, max })
}

/// The paper's MCTS: full expansion, UCB1 with C = √2.
fn full_cfg() -> MctsConfig {
    MctsConfig { formula: Formula::ucb1(std::f64::consts::SQRT_2, 1.0), full_expansion: true, ..MctsConfig::default() }
}

fn rng(seed: u64) -> playforge::rng::Rng {
    playforge::rng::stream(seed, 0, 0, 0)
}

fn mean(n: &mcts::Node<playforge::wgdl::Action>) -> f64 {
    if n.visits == 0 { 0.0 } else { n.sum / n.visits as f64 }
}

#[test]
fn full_expansion_adds_every_child_at_once_and_plays_out_one() {
    let (g, eval) = gold("o.score", 12.0);
    let root = g.initial().unwrap();
    let legal = util::legal(&g.program, &root);
    assert_eq!(legal.len(), 4);
    let mut rolled = Vec::new();
    for seed in 1..=20 {
        for eager_expansion in [false, true] {
            let cfg = MctsConfig { eager_expansion, ..full_cfg() };
            let t = decision_tree(&g, &root, &cfg, &eval, 1, &mut rng(seed)).unwrap();
            assert_eq!(t.nodes.len(), 1 + legal.len(), "seed {seed}");
            assert_eq!(t.nodes[0].visits, 1);
            assert!(t.untried(0).is_empty());
            let kids: Vec<u32> = t.children(0).collect();
            // One child per legal move, in move order.
            assert_eq!(kids.iter().map(|&k| t.nodes[k as usize].mv.unwrap()).collect::<Vec<_>>(), legal);
            for &k in &kids {
                let node = &t.nodes[k as usize];
                assert!(!node.terminal && t.n_children(k) == 0);
                assert_eq!((node.depth, node.mover), (1, 0));
                // The played-out child knows its moves; the others know them only when eager.
                if node.visits > 0 || eager_expansion {
                    let mut st = root.clone();
                    g.apply(&mut st, node.mv.unwrap()).unwrap();
                    assert!(node.known);
                    assert_eq!(t.untried(k), util::legal(&g.program, &st));
                    assert_eq!(node.moves, 3);
                } else {
                    assert!(!node.known && t.untried(k).is_empty());
                }
            }
            // Exactly one child was played out, and the whole result went to it and the root.
            let visited: Vec<usize> = (0..kids.len()).filter(|&i| t.nodes[kids[i] as usize].visits > 0).collect();
            assert_eq!(visited.len(), 1, "seed {seed}");
            let v = &t.nodes[kids[visited[0]] as usize];
            assert_eq!(v.visits, 1);
            assert_eq!(v.sum, t.nodes[0].sum);
            if !eager_expansion {
                rolled.push(visited[0]);
            }
        }
    }
    // The child to play out is drawn at random: over 20 seeds, every one of the four comes up.
    rolled.sort();
    rolled.dedup();
    assert_eq!(rolled, [0, 1, 2, 3]);
}

/// Lazy full expansion is exact: the same tree (every node's move, visits, sum and moves) and
/// the same decision as the eager expansion of the paper's code, on the gold game and on whole
/// match-3 games (chance in the state, every move searched), where a child's moves feed the
/// persona formulas through `moves`.
#[test]
fn lazy_full_expansion_gives_the_eager_trees_and_moves() {
    let (g, eval) = gold("o.score", 12.0);
    let root = g.initial().unwrap();
    let shape = |t: &mcts::Tree<WgdlGame>| -> Vec<_> {
        t.nodes.iter().filter(|n| n.visits > 0).map(|n| (n.mv, n.visits, n.sum.to_bits(), n.moves, n.terminal)).collect()
    };
    for seed in 1..=10 {
        for formula in ["mean + 1.4 * sqrt(ln(parent) / visits)", "wins / visits + moves / 10", "0 - visits + moves"] {
            let f = Formula::parse(formula).unwrap();
            let lazy = MctsConfig { formula: f.clone(), max_playout_moves: 2, ..full_cfg() };
            let eager = MctsConfig { eager_expansion: true, ..lazy.clone() };
            let a = decision_tree(&g, &root, &lazy, &eval, 150, &mut rng(seed)).unwrap();
            let b = decision_tree(&g, &root, &eager, &eval, 150, &mut rng(seed)).unwrap();
            assert_eq!(a.nodes.len(), b.nodes.len(), "seed {seed} {formula}");
            assert_eq!(shape(&a), shape(&b), "seed {seed} {formula}");
        }
    }
    // Whole match-3 games through the persona harness: same moves, same scores.
    let m3 = util::game("match3.wgdl").program;
    let score = m3.value_ref("game.score").unwrap();
    let seval = playforge::search::FnEval(|s: &playforge::wgdl::State| m3.read(s, score) / 10_000.0);
    let base = WgdlGame::new(m3.clone());
    for seed in 1..=3u64 {
        let game = base.clone().with_seed(seed);
        let play = |eager_expansion: bool| -> (Vec<playforge::wgdl::Action>, f64) {
            let cfg = MctsConfig {
                formula: Formula::parse("wins / visits + sqrt(moves) / (1 + visits) + sqrt(2 * ln(parent) / visits)").unwrap(),
                full_expansion: true,
                eager_expansion,
                ..MctsConfig::default()
            };
            let mut st = game.initial().unwrap();
            let mut moves = Vec::new();
            let mut r = rng(seed);
            let mut legal = Vec::new();
            loop {
                game.legal(&st, &mut legal).unwrap();
                if game.status(&st, &legal) != playforge::wgdl::Status::Running {
                    break;
                }
                let cfg = MctsConfig { max_playout_moves: 20 - st.moves, ..cfg.clone() };
                let (mv, _) = decide_with(&game, &st, &cfg, &seval, 60, &mut r, FinalChoice::Formula).unwrap();
                game.apply(&mut st, mv).unwrap();
                moves.push(mv);
            }
            (moves, m3.read(&st, score))
        };
        assert_eq!(play(false), play(true), "match-3 seed {seed}");
    }
}

/// The descent rule of full expansion: a node's unvisited children come first, in child order,
/// so no child gets a second visit while a sibling has none; and reaching a leaf expands it. So
/// after as many iterations as the root has moves, every root child has exactly one visit: the
/// one played out in the first iteration as a new child (not expanded yet), each other one as
/// a leaf the descent reached and expanded (with one of its own children played out).
#[test]
fn full_expansion_visits_every_sibling_once_before_any_twice() {
    let (g, eval) = gold("o.score", 12.0);
    let root = g.initial().unwrap();
    for seed in 1..=5 {
        let first = decision_tree(&g, &root, &full_cfg(), &eval, 1, &mut rng(seed)).unwrap();
        let t = decision_tree(&g, &root, &full_cfg(), &eval, 4, &mut rng(seed)).unwrap();
        assert_eq!(t.nodes.len(), 1 + 4 + 3 * 3, "seed {seed}");
        for c in t.children(0) {
            let k = &t.nodes[c as usize];
            assert_eq!(k.visits, 1, "seed {seed}");
            if first.nodes[c as usize].visits == 1 {
                assert_eq!(t.n_children(c), 0, "seed {seed}: the first iteration's child is not expanded yet");
            } else {
                assert_eq!(t.n_children(c), 3);
                assert_eq!(t.children(c).filter(|&gc| t.nodes[gc as usize].visits == 1).count(), 1);
            }
        }
        for iterations in [10, 50, 300] {
            let t = decision_tree(&g, &root, &full_cfg(), &eval, iterations, &mut rng(seed)).unwrap();
            assert_eq!(t.nodes[0].visits as u64, iterations);
            let below: u32 = t.children(0).map(|c| t.nodes[c as usize].visits).sum();
            assert_eq!(below as u64, iterations, "every iteration passes through one root child");
            for (i, n) in t.nodes.iter().enumerate() {
                let i = i as u32;
                let visits: Vec<u32> = t.children(i).map(|c| t.nodes[c as usize].visits).collect();
                if visits.iter().any(|&v| v >= 2) {
                    assert!(visits.iter().all(|&v| v >= 1), "seed {seed}: a child visited twice beside an unvisited one: {visits:?}");
                }
                if t.n_children(i) > 0 {
                    assert_eq!(t.n_children(i) as u32, n.moves, "a node with children has all of them");
                    assert!(t.untried(i).is_empty());
                }
                if !n.terminal && n.visits >= 2 {
                    assert!(t.n_children(i) > 0, "a non-terminal node visited twice was expanded");
                }
                assert_eq!(n.known, n.visits > 0 || i == 0, "a node is known once visited (lazy expansion)");
            }
        }
    }
}

#[test]
fn full_expansion_is_deterministic_per_seed() {
    let (g, eval) = gold("o.score", 12.0);
    let root = g.initial().unwrap();
    let cfg = MctsConfig { max_playout_moves: 2, ..full_cfg() };
    let shape = |seed| {
        let t = decision_tree(&g, &root, &cfg, &eval, 120, &mut rng(seed)).unwrap();
        t.nodes.iter().map(|n| (n.mv, n.visits, n.sum.to_bits())).collect::<Vec<_>>()
    };
    let trees: Vec<_> = (1..=3).map(shape).collect();
    assert_eq!(trees[0], shape(1));
    assert!(trees[0] != trees[1] || trees[0] != trees[2], "different seeds, different trees");
    for choice in [FinalChoice::BestMean, FinalChoice::MostVisited, FinalChoice::Formula] {
        let a = decide_with(&g, &root, &cfg, &eval, 120, &mut rng(4), choice).unwrap();
        let b = decide_with(&g, &root, &cfg, &eval, 120, &mut rng(4), choice).unwrap();
        assert_eq!((a.0, a.1.to_bits()), (b.0, b.1.to_bits()), "{choice:?}");
    }
}

/// With the new options off, `decide` and `search` give exactly what they gave before full
/// expansion and the final choices existed (values recorded from that code).
#[test]
fn defaults_give_the_results_from_before_full_expansion() {
    let (g, eval) = gold("o.score", 12.0);
    let root = g.initial().unwrap();
    let name = |mv| g.program.action_name(&root, mv);
    for (seed, bits, nodes) in [(1, 0x3fe7ffffffffffff_u64, 52), (2, 0x3fe8888888888889, 53), (3, 0x3fe8c71c71c71c71, 52)] {
        let (mv, mean) = decide(&g, &root, &MctsConfig::default(), &eval, 50, &mut rng(seed)).unwrap();
        assert_eq!((name(mv).as_str(), mean.to_bits()), ("gold(o)", bits), "seed {seed}: mean {mean}");
        let same = decide_with(&g, &root, &MctsConfig::default(), &eval, 50, &mut rng(seed), FinalChoice::BestMean).unwrap();
        assert_eq!((same.0, same.1.to_bits()), (mv, bits));
        let cfg = MctsConfig { formula: Formula::ucb1(0.5, 2.0), max_playout_moves: 2, ..MctsConfig::default() };
        let sub = SubGame { goal_target: usize::MAX };
        let r = mcts::search(&g, &root, sub, &cfg, &eval, Budget::Iterations(60), &mut rng(seed)).unwrap();
        assert_eq!((r.value, r.nodes), (1.0, nodes), "seed {seed}");
    }
}

/// The three final choices on one tree: the most visited child, the best mean, and the child the
/// formula ranks first; `0 - visits` ranks the least visited (visited) child first.
#[test]
fn final_choices_pick_best_mean_most_visits_or_the_formula() {
    let (g, eval) = gold("o.score", 12.0);
    let root = g.initial().unwrap();
    for (seed, full_expansion) in [(1, true), (2, true), (3, false)] {
        let cfg = MctsConfig { full_expansion, ..full_cfg() };
        let t = decision_tree(&g, &root, &cfg, &eval, 200, &mut rng(seed)).unwrap();
        let kids: Vec<_> = t.children(0).map(|c| &t.nodes[c as usize]).collect();
        let first_max = |key: &dyn Fn(usize) -> f64| (0..kids.len()).fold(0, |b, i| if key(i) > key(b) { i } else { b });
        let by_mean = first_max(&|i| mean(kids[i]));
        let by_visits = first_max(&|i| kids[i].visits as f64);
        let least = first_max(&|i| if kids[i].visits == 0 { f64::NEG_INFINITY } else { -(kids[i].visits as f64) });
        let pick = |f: &Formula, choice| t.final_choice(&f.compile(), choice).unwrap();
        let anything = Formula::parse("mean").unwrap();
        assert_eq!(pick(&anything, FinalChoice::BestMean), (kids[by_mean].mv.unwrap(), mean(kids[by_mean])));
        assert_eq!(pick(&anything, FinalChoice::MostVisited), (kids[by_visits].mv.unwrap(), mean(kids[by_visits])));
        let fewest = pick(&Formula::parse("0 - visits").unwrap(), FinalChoice::Formula);
        assert_eq!(fewest, (kids[least].mv.unwrap(), mean(kids[least])));
        assert_ne!(least, by_mean, "seed {seed}: the test needs the choices to differ");
        assert_ne!(least, by_visits, "seed {seed}");
        // `decide_with` chooses from the same tree (same seed) with the configured formula.
        for choice in [FinalChoice::BestMean, FinalChoice::MostVisited, FinalChoice::Formula] {
            let d = decide_with(&g, &root, &cfg, &eval, 200, &mut rng(seed), choice).unwrap();
            assert_eq!(d, pick(&cfg.formula, choice), "seed {seed} {choice:?}");
        }
    }
}

/// Right after one full expansion only the played-out child has statistics: the formula choice
/// ignores its unvisited siblings even when they tie with it or rank above it.
#[test]
fn formula_choice_ignores_unvisited_children() {
    let (g, eval) = gold("o.score", 12.0);
    let root = g.initial().unwrap();
    let mut later = 0;
    for seed in 1..=12 {
        let t = decision_tree(&g, &root, &full_cfg(), &eval, 1, &mut rng(seed)).unwrap();
        let kids: Vec<u32> = t.children(0).collect();
        let visited = *kids.iter().find(|&&c| t.nodes[c as usize].visits == 1).unwrap();
        let expected = (t.nodes[visited as usize].mv.unwrap(), mean(&t.nodes[visited as usize]));
        for text in ["1", "0 - mean", "0 - wins"] {
            assert_eq!(t.final_choice(&Formula::parse(text).unwrap().compile(), FinalChoice::Formula), Some(expected), "{text}");
        }
        later += usize::from(visited != kids[0]);
    }
    assert!(later > 0, "the test needs a played-out child that is not the first");
}

/// The match-3 persona MCTS (full expansion, 250 iterations, UCB1 with C = √2, short rollouts)
/// finds the one clearly best first move. Choosing by the formula uses a greedy formula here: UCB1
/// at the root ranks children by how much they are owed exploration, not by how good they are.
#[test]
fn full_expansion_finds_the_clearly_best_first_move() {
    let (g, eval) = gold("o.score", 12.0);
    let root = g.initial().unwrap();
    for max_playout_moves in [3, 1] {
        for seed in 1..=5 {
            let cfg = MctsConfig { max_playout_moves, ..full_cfg() };
            for choice in [FinalChoice::BestMean, FinalChoice::MostVisited] {
                let (mv, _) = decide_with(&g, &root, &cfg, &eval, 250, &mut rng(seed), choice).unwrap();
                assert_eq!(g.program.action_name(&root, mv), "gold(o)", "seed {seed} {choice:?}");
            }
            let greedy = MctsConfig { formula: Formula::parse("wins / visits + 0.1 * sqrt(ln(parent) / visits)").unwrap(), ..cfg };
            let (mv, mean) = decide_with(&g, &root, &greedy, &eval, 250, &mut rng(seed), FinalChoice::Formula).unwrap();
            assert_eq!(g.program.action_name(&root, mv), "gold(o)", "seed {seed} formula");
            assert!(mean >= 0.5, "gold alone is worth 6 of 12: {mean}");
        }
    }
}

/// The rollout stops after `max_playout_moves` moves (the persona harness's 20 − moves made):
/// with a value that counts moves, one iteration's result is the expanded move plus the rollout.
#[test]
fn max_playout_moves_caps_the_rollout() {
    let (g, eval) = gold("game.moves", 4.0);
    let root = g.initial().unwrap();
    for full_expansion in [false, true] {
        for (cap, moves) in [(0, 1.0), (1, 2.0), (2, 3.0), (3, 4.0), (100, 4.0)] {
            let cfg = MctsConfig { max_playout_moves: cap, full_expansion, ..full_cfg() };
            let t = decision_tree(&g, &root, &cfg, &eval, 1, &mut rng(1)).unwrap();
            assert_eq!(t.nodes[0].sum, moves / 4.0, "cap {cap}, full expansion {full_expansion}");
            let (_, mean) = decide_with(&g, &root, &cfg, &eval, 1, &mut rng(1), FinalChoice::BestMean).unwrap();
            assert_eq!(mean, moves / 4.0);
        }
        // With no rollout at all, every iteration ends at the node it expanded (or a terminal):
        // each leaf's mean is its depth.
        let cfg = MctsConfig { max_playout_moves: 0, full_expansion, ..full_cfg() };
        let t = decision_tree(&g, &root, &cfg, &eval, 40, &mut rng(2)).unwrap();
        for (_, n) in t.nodes.iter().enumerate().filter(|(i, n)| t.n_children(*i as u32) == 0 && n.visits > 0) {
            assert_eq!(mean(n), n.depth as f64 / 4.0);
        }
    }
}

/// CUT_OFF under full expansion: the whole four-move tree (1 + 4 + 12 + 36 + 108 nodes) is built,
/// the search stops by itself once the root is exhausted, and the best line is the optimum.
#[test]
fn full_expansion_with_cut_off_solves_the_gold_game() {
    let (g, eval) = gold("o.score", 12.0);
    let root = g.initial().unwrap();
    let cfg = MctsConfig { cut_off: true, ..full_cfg() };
    let sub = SubGame { goal_target: usize::MAX };
    let r = mcts::search(&g, &root, sub, &cfg, &eval, Budget::Iterations(100_000), &mut rng(1)).unwrap();
    assert_eq!(r.nodes, 161);
    assert!(r.iterations < 1_000, "{} iterations: the search did not stop at exhaustion", r.iterations);
    assert_eq!(r.value, 1.0);
    let mut st = root.clone();
    for &m in &r.path {
        g.apply(&mut st, m).unwrap();
    }
    assert_eq!(eval.value(&st, 0), 1.0);
}

/// Kept node states (`MctsConfig::state_cache`) only shorten replays: with none, a few or many,
/// the same trees (every node's move, visits and sum) on Connect Four, the hex arena and the
/// match-3 persona search (lazy full expansion), and the same search results.
#[test]
fn kept_states_change_no_tree() {
    let shape = |t: &mcts::Tree<WgdlGame>| -> Vec<_> { t.nodes.iter().map(|n| (n.mv, n.visits, n.sum.to_bits(), n.moves)).collect() };
    for (name, full_expansion, iterations) in
        [("connect_four.wgdl", false, 3000), ("hex_arena.wgdl", false, 400), ("match3.wgdl", true, 400)]
    {
        let g = WgdlGame::new(util::game(name).program).with_seed(3);
        let root = g.initial().unwrap();
        struct Wins;
        impl Evaluator<playforge::wgdl::State> for Wins {
            fn value(&self, st: &playforge::wgdl::State, player: usize) -> f64 {
                (st.outcome as usize == player + 2) as u8 as f64 + st.moves as f64 * 1e-3
            }
        }
        let trees: Vec<_> = [0, 3, 1024]
            .iter()
            .map(|&state_cache| {
                let cfg = MctsConfig { full_expansion, state_cache, max_playout_moves: 30, ..MctsConfig::default() };
                shape(&decision_tree(&g, &root, &cfg, &Wins, iterations, &mut rng(9)).unwrap())
            })
            .collect();
        assert_eq!(trees[0], trees[1], "{name}: a few kept states");
        assert_eq!(trees[0], trees[2], "{name}: many kept states");
        let searched: Vec<_> = [0, 1024]
            .iter()
            .map(|&state_cache| {
                let cfg = MctsConfig { full_expansion, state_cache, max_playout_moves: 30, ..MctsConfig::default() };
                let r =
                    mcts::search(&g, &root, SubGame { goal_target: usize::MAX }, &cfg, &Wins, Budget::Iterations(iterations), &mut rng(4))
                        .unwrap();
                (r.value.to_bits(), r.path, r.nodes)
            })
            .collect();
        assert_eq!(searched[0], searched[1], "{name}: search");
    }
}

/// A search under a wall-clock budget says, in its output and its resolved config, that its
/// numbers are not reproducible (nothing said so); an iteration budget says nothing of the kind.
#[test]
fn a_wall_clock_budget_is_marked_not_reproducible() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("playforge-timed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let game = root.join("games/simple_coins.wgdl");
    for (budget, timed) in [("budget_ms = 30", true), ("iterations = 50", false)] {
        let cfg = dir.join("timed.toml");
        std::fs::write(
            &cfg,
            format!(
                "[experiment]\nname = \"timed\"\ngame = \"{}\"\n[result]\nterms = [{{ value = \"global.coins\", weight = 1.0, max = 2400 }}]\n[search]\n{budget}\nsubgoals = 1\n",
                game.display()
            ),
        )
        .unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_playforge"))
            .args(["play", &cfg.display().to_string(), "-q", "--out", &dir.join("out").display().to_string()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stdout = String::from_utf8_lossy(&o.stdout);
        let resolved = std::fs::read_to_string(dir.join("out/timed/seed-1/config.toml")).unwrap();
        assert_eq!(stdout.contains("Not reproducible"), timed, "{stdout}");
        assert_eq!(resolved.starts_with("# Not reproducible"), timed, "{resolved}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
