//! Monster Carlo's prefix-tree search (src/bridge/tree.rs) on a game in its own process and on
//! its WGDL twin: the Python roguelike floor (games/external/roguelike.py) and
//! games/external/roguelike.wgdl find the same best scores where CUT_OFF exhausts both, rollout
//! for rollout the same search (the same options in the same order, the same default policy);
//! one process or two, a socket or stdin/stdout, give the same search; a game that crashes or hangs now and then has its
//! episodes retried on a fresh process, one that lies about n has them recorded as failed.

use playforge::bridge::local::WgdlEpisodes;
use playforge::bridge::pool::Pool;
use playforge::bridge::process::Launch;
use playforge::bridge::tree::{Found, Streams, TreeConfig, search};
use playforge::game::WgdlGame;
use playforge::wgdl::CompileOptions;
use std::path::Path;
use std::time::Duration;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The WGDL twin under a style, a variant and the layout of `seed`.
fn twin(style: &str, variant: &str, seed: u64) -> WgdlEpisodes {
    twin_with(style, variant, seed, &[])
}

/// The twin with the game's parameters set (`rooms` is `hero.rooms` there).
fn twin_with(style: &str, variant: &str, seed: u64, params: &[(&str, f64)]) -> WgdlEpisodes {
    let path = root().join("games/external/roguelike.wgdl");
    let text = std::fs::read_to_string(&path).unwrap();
    let overlays = [style, variant].into_iter().filter(|o| !matches!(*o, "unrestricted" | "regular")).map(String::from).collect();
    let mut overrides = vec![("hero.layout".to_string(), (seed % 1000) as f64)];
    overrides.extend(params.iter().map(|(k, v)| (format!("hero.{k}"), *v)));
    let opts = CompileOptions { overrides, overlays, ..CompileOptions::default() };
    let program = playforge::wgdl::compile_str_with("roguelike.wgdl", &text, &opts).unwrap().program;
    let score = program.value_ref("game.score").unwrap();
    WgdlEpisodes::new(WgdlGame::new(program), score, 1000)
}

fn launch(command: Vec<String>) -> Launch {
    Launch {
        command,
        dir: root().join("games/external"),
        settings: serde_json::json!({}),
        connect_timeout: Duration::from_secs(20),
        episode_timeout: Duration::from_secs(20),
        stdio: false,
    }
}

fn python_game() -> Launch {
    launch(vec!["python3".into(), "roguelike.py".into()])
}

fn settings(style: &str, variant: &str) -> serde_json::Value {
    serde_json::json!({"style": style, "variant": variant, "params": {}})
}

fn cfg(workers: usize) -> TreeConfig {
    TreeConfig { uct: 10.0, cut_off: true, save_best_path: false, workers, measure: None, formula: None, reward: None }
}

fn streams(replicate: u64) -> Streams {
    Streams { seed: 3, replicate, stream: 7 }
}

fn run(source: &mut impl playforge::bridge::tree::Episodes, cfg: &TreeConfig, seed: u64, set: &serde_json::Value, rollouts: u64) -> Found {
    search(source, cfg, seed, set, rollouts, &streams(seed), |_, _| true).unwrap()
}

#[test]
fn the_python_floor_and_its_wgdl_twin_give_the_same_search_and_exhaustive_best() {
    let mut pool = Pool::new(&python_game(), 2, 1);
    let cases: [(&str, &str, u64, &[(&str, f64)]); 5] = [
        ("unrestricted", "regular", 1, &[]),
        ("brave", "regular", 42, &[]),
        ("hoarder", "regular", 977, &[]),
        ("unrestricted", "deep", 5, &[]),
        // The declared parameters, set on both sides.
        ("unrestricted", "deep", 314, &[("rooms", 6.0), ("danger", 2.0), ("potions", 1.0), ("hp", 11.0)]),
    ];
    for (style, variant, seed, params) in cases {
        let mut set = settings(style, variant);
        set["params"] = params.iter().map(|(k, v)| (k.to_string(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>().into();
        let c = cfg(2);
        let py = run(&mut pool, &c, seed, &set, 20_000);
        let wg = run(&mut twin_with(style, variant, seed, params), &c, seed, &set, 20_000);
        let what = format!("{style}/{variant}, seed {seed}, {params:?}");
        assert!(py.exhausted && wg.exhausted, "{what}: CUT_OFF exhausts both within 20 000 rollouts ({} and {})", py.rollouts, wg.rollouts);
        assert!(py.failures.is_empty(), "{what}: {:?}", py.failures);
        assert_eq!(py.best, wg.best, "{what}: the exact best");
        assert_eq!(
            (py.rollouts, py.nodes, &py.improvements),
            (wg.rollouts, wg.nodes, &wg.improvements),
            "{what}: the same search, rollout for rollout"
        );
        assert_eq!(py.best_outcome.as_ref().unwrap().trace, wg.best_outcome.as_ref().unwrap().trace, "{what}: the same best line");
        // The exact best is the maximum over every line: a brute-force walk of the twin agrees.
        assert_eq!(py.best, brute_force(&twin_with(style, variant, seed, params), &mut Vec::new()), "{what}: brute force");
    }
}

/// The best score over every line from `prefix` on, by walking the twin's options.
fn brute_force(game: &WgdlEpisodes, prefix: &mut Vec<u64>) -> f64 {
    let ep =
        playforge::bridge::protocol::Episode { id: 0, seed: 0, policy_seed: 0, settings: serde_json::json!({}), prefix: prefix.clone() };
    let o = game.play(&ep).unwrap();
    if o.trace.len() == prefix.len() {
        return o.score;
    }
    let n = o.trace[prefix.len()][1];
    let mut best = f64::NEG_INFINITY;
    for c in 0..n {
        prefix.push(c);
        best = best.max(brute_force(game, prefix));
        prefix.pop();
    }
    best
}

#[test]
fn one_process_or_two_and_save_best_path_change_nothing_but_what_they_should() {
    let set = settings("unrestricted", "deep");
    let mut c = cfg(3);
    c.cut_off = false;
    let one = run(&mut Pool::new(&python_game(), 1, 1), &c, 11, &set, 300);
    let two = run(&mut Pool::new(&python_game(), 2, 1), &c, 11, &set, 300);
    assert_eq!((one.rollouts, one.nodes, &one.improvements), (two.rollouts, two.nodes, &two.improvements));
    // On the game's stdin/stdout instead of a socket: the same search.
    let mut stdio = python_game();
    stdio.stdio = true;
    let piped = run(&mut Pool::new(&stdio, 2, 1), &c, 11, &set, 300);
    assert_eq!((one.rollouts, one.nodes, &one.improvements), (piped.rollouts, piped.nodes, &piped.improvements));
    assert!(piped.failures.is_empty(), "{:?}", piped.failures);
    assert_eq!((one.rollouts, one.exhausted), (300, false));
    // Without CUT_OFF every rollout adds at most one node; saving the best path adds whole lines.
    assert!(one.nodes <= 300);
    c.save_best_path = true;
    let saved = run(&mut twin("unrestricted", "deep", 11), &c, 11, &set, 300);
    assert!(saved.nodes > one.nodes, "save best path adds the best lines whole: {} vs {} nodes", saved.nodes, one.nodes);
}

/// The toy game of tests/bridge.rs with a fault on some episodes.
fn faulty(fault: &str) -> Launch {
    let script = format!(
        "import sys, os, time\nsys.path.insert(0, {:?})\nimport bridge\ngame = bridge.connect('toy')\nfor ep in game.episodes():\n    picks = [ep.select(3), ep.select(2), ep.select(4)]\n    {fault}\n    ep.outcome(sum(picks))",
        root().join("python/playforge").display().to_string()
    );
    let mut l = launch(vec!["python3".into(), "-c".into(), script]);
    l.episode_timeout = Duration::from_millis(1500);
    l
}

#[test]
fn crashes_and_hangs_are_retried_on_a_fresh_process_and_lies_are_recorded() {
    // Its timeouts are short: not beside the tests that load every core.
    let _alone = crate::util::wall_clock();
    let set = serde_json::json!({});
    let c = cfg(2);
    let clean = run(&mut WgdlLikeToy, &c, 1, &set, 40);
    // A crash on the episodes whose id is 5 mod 7 (once each: a marker file per episode).
    let marks = tempfile_dir();
    let crash = format!(
        "m = os.path.join({:?}, str(ep.id))\n    if ep.id % 7 == 5 and not os.path.exists(m): open(m, 'w').close(); os._exit(3)",
        marks.display().to_string()
    );
    let mut pool = Pool::new(&faulty(&crash), 2, 2);
    let got = run(&mut pool, &c, 1, &set, 40);
    assert!(got.failures.is_empty(), "{:?}", got.failures);
    assert_eq!((got.best, &got.improvements, got.nodes), (clean.best, &clean.improvements, clean.nodes), "retried episodes change nothing");
    assert!(pool.restarts.load(std::sync::atomic::Ordering::Relaxed) >= 5);
    // A hang on episode 3, every time: retried, then recorded as failed; the search goes on.
    let t = std::time::Instant::now();
    let got = run(&mut Pool::new(&faulty("if ep.id == 3: time.sleep(60)"), 2, 1), &c, 1, &set, 12);
    assert_eq!(got.failures.len(), 1, "{:?}", got.failures);
    assert!(got.failures[0].reason.contains("no outcome within"), "{}", got.failures[0].reason);
    assert_eq!(got.rollouts, 12);
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    // Lying about n on episode 4 (it says 5 options where it has 3): recorded, not retried.
    let lie = "if ep.id == 4: ep.trace[0][1] = 5";
    let got = run(&mut Pool::new(&faulty(lie), 1, 2), &c, 1, &set, 12);
    assert_eq!(got.failures.len(), 1, "{:?}", got.failures);
    assert!(got.failures[0].reason.contains("offered 5 options; an earlier episode saw 3"), "{}", got.failures[0].reason);
    // A game that fails every episode stops the run with its reason.
    let err = search(&mut Pool::new(&faulty("ep.trace[0][0] = 9"), 1, 0), &c, 1, &set, 100, &streams(1), |_, _| true).unwrap_err();
    assert!(err.to_string().contains("rollouts all failed"), "{err}");
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "playforge-bridge-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The toy game in this process (3, 2 and 4 options; the score is the sum of the choices).
struct WgdlLikeToy;
impl playforge::bridge::tree::Episodes for WgdlLikeToy {
    fn start(&mut self, ep: playforge::bridge::protocol::Episode) -> anyhow::Result<()> {
        let mut rng = playforge::bridge::local::SplitMix64(ep.policy_seed);
        let trace: Vec<[u64; 2]> =
            [3u64, 2, 4].iter().enumerate().map(|(k, &n)| [ep.prefix.get(k).copied().unwrap_or_else(|| rng.below(n)), n]).collect();
        let score = trace.iter().map(|t| t[0] as f64).sum();
        TOY_DONE.with(|d| {
            d.borrow_mut().push_back(playforge::bridge::protocol::Outcome { id: ep.id, score, measures: Default::default(), trace })
        });
        Ok(())
    }
    fn finish(&mut self) -> anyhow::Result<Result<playforge::bridge::protocol::Outcome, playforge::bridge::process::Fault>> {
        Ok(Ok(TOY_DONE.with(|d| d.borrow_mut().pop_front()).unwrap()))
    }
}
thread_local! {
    static TOY_DONE: std::cell::RefCell<std::collections::VecDeque<playforge::bridge::protocol::Outcome>> = Default::default();
}

#[test]
fn a_persona_formula_drives_the_prefix_search() {
    let set = settings("unrestricted", "deep");
    let mut c = cfg(2);
    c.cut_off = false;
    let built_in = run(&mut twin("unrestricted", "deep", 8), &c, 8, &set, 500);
    // UCB1 written as a formula over the node's quantities: the same search, number for number.
    c.formula = Some(playforge::search::formula::Formula::parse("mean + 10 * sqrt(ln(parent) / visits)").unwrap());
    let written = run(&mut twin("unrestricted", "deep", 8), &c, 8, &set, 500);
    assert_eq!((built_in.nodes, &built_in.improvements), (written.nodes, &written.improvements));
    // A greedy persona (the best score under a child, no exploration) searches otherwise.
    c.formula = Some(playforge::search::formula::Formula::parse("best").unwrap());
    let greedy = run(&mut twin("unrestricted", "deep", 8), &c, 8, &set, 500);
    assert_ne!((built_in.nodes, &built_in.improvements), (greedy.nodes, &greedy.improvements));
}
