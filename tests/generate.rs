//! `playforge generate`: config errors name the key and the line and list what is allowed; the
//! same seed gives the same archive on 1 and 2 threads and through the executor's serialized
//! path; a resumed run equals a straight one; infeasible content never enters the map; verify
//! replays the results on fresh seeds; the shipped configs load; a sequential confirmation pools
//! and counts every game; CMA-MAE's thresholds resume with the run.

use playforge::exec::Executor;
use playforge::generate::config::GenerateConfig;
use playforge::generate::run::{RunOptions, out_dir, run};
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("playforge-generate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn game() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("games/match3.wgdl").display().to_string()
}

/// A small match-3 map: random players and a weak persona, the colour weights as genes.
fn config(out: &Path, algorithm: &str, extra: &str) -> String {
    format!(
        r#"[generate]
name = "t"
game = "{game}"
seed = 3
algorithm = "{algorithm}"
params = ["me.colours", "me.weight*"]
max_evaluations = 40
games = 2
confirm_games = 3
out = "{out}"

[[player]]
name = "random"
kind = "random"

[[player]]
name = "greedy"
kind = "persona"
measure = "game.score"
direction = "max"
scale = [0, 10000]
iterations = 4
rollout_horizon = 5

[[measure]]
name = "rnd"
players = ["random"]
of = "game.score"

[[measure]]
name = "best"
players = ["greedy"]
of = "game.score"

[[measure]]
name = "moves"
players = ["random"]
of = "legal_moves"
aggregate = "mean"

[[target]]
expr = "best - rnd"
at_least = 500

[[descriptor]]
expr = "rnd"
min = 0
max = 8000
bins = 4

[[descriptor]]
expr = "moves"
min = 0
max = 20
bins = 4

[qd]
initial = 6
batch = 6
{extra}"#,
        game = game(),
        out = out.display()
    )
}

fn parse(text: &str) -> Result<GenerateConfig, String> {
    GenerateConfig::parse(Path::new("g.toml"), text).map_err(|e| e.to_string())
}

fn go(text: &str, opts: &RunOptions) -> playforge::generate::run::Outcome {
    let cfg = parse(text).unwrap();
    run(&cfg, Path::new("g.toml"), text, opts, &|_, _, _| {}).unwrap()
}

/// The files that must be identical between two runs of one seed.
fn results(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for f in ["history.csv", "archive.csv", "best.toml"] {
        if let Ok(b) = std::fs::read(dir.join(f)) {
            out.push((f.to_string(), b));
        }
    }
    if let Ok(rd) = std::fs::read_dir(dir.join("elites")) {
        let mut names: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        names.sort();
        for p in names {
            out.push((p.file_name().unwrap().to_string_lossy().into(), std::fs::read(&p).unwrap()));
        }
    }
    out
}

#[test]
fn config_errors_name_the_key_and_line_and_list_what_is_allowed() {
    let out = tmp("errors");
    let good = config(&out, "cma-me", "");
    assert!(parse(&good).is_ok(), "{:?}", parse(&good).err());
    let cases: &[(&str, &str, &[&str])] = &[
        ("algorithm = \"cma-me\"", "algorithm = \"nsga\"", &["g.toml:5", "algorithm", "\"map-elites\""]),
        ("players = [\"greedy\"]", "players = [\"grumpy\"]", &["g.toml:", "grumpy", "expected one of: random, greedy"]),
        ("expr = \"best - rnd\"", "expr = \"best - rand\"", &["expr", "`rand`", "expected one of: rnd, best, moves"]),
        ("kind = \"persona\"", "kind = \"persona\"\nc = 1.0\nbogus = 1", &["bogus"]),
        ("direction = \"max\"", "direction = \"up\"", &["direction", "\"max\" or \"min\""]),
        ("of = \"legal_moves\"", "of = \"legalmoves\"", &["of = \"legalmoves\"", "legal_moves, length"]),
        ("at_least = 500", "at_least = 500\nat_most = 100", &["at_least = 500 is above at_most = 100"]),
        ("bins = 4\n\n[[descriptor]]", "bins = 0\n\n[[descriptor]]", &["bins"]),
        ("kind = \"random\"", "kind = \"robot\"", &["kind = \"robot\"", "\"ai\", \"persona\" or \"random\""]),
        ("scale = [0, 10000]", "", &["a persona needs its reward"]),
        ("batch = 6", "batch = 6\nsearch_on = \"hope\"", &["search_on = \"hope\"", "\"confirmed\" or \"estimates\""]),
    ];
    for (from, to, wants) in cases {
        assert!(good.contains(from), "{from}");
        let err = parse(&good.replacen(from, to, 1)).unwrap_err();
        for w in *wants {
            assert!(err.contains(w), "{from} → {to}: {err}\n(wanted {w})");
        }
    }
    // A map needs descriptors; one answer needs a target.
    let no_desc = good.replace("[[descriptor]]", "[[unused]]");
    assert!(parse(&no_desc).unwrap_err().contains("unused"), "unknown tables are errors");
    let cma_with_map = config(&out, "cma", "");
    assert!(parse(&cma_with_map).unwrap_err().contains("[[descriptor]] tables need a map"));
    // Game-level checks name the key too: a pattern that matches nothing, a value path.
    let text = good.replace("params = [\"me.colours\", \"me.weight*\"]", "params = [\"you.*\"]");
    let cfg = parse(&text).unwrap();
    let err = run(&cfg, Path::new("g.toml"), &text, &RunOptions::default(), &|_, _, _| {}).err().unwrap().to_string();
    assert!(err.contains("g.toml:6") && err.contains("\"you.*\" matches no declared parameter") && err.contains("me.colours"), "{err}");
    let text = good.replace("of = \"game.score\"", "of = \"game.scor\"");
    let cfg = parse(&text).unwrap();
    let err = run(&cfg, Path::new("g.toml"), &text, &RunOptions::default(), &|_, _, _| {}).err().unwrap().to_string();
    assert!(err.contains("of = \"game.scor\""), "{err}");
}

#[test]
fn same_archive_on_one_and_two_threads_and_through_serialized_jobs() {
    for (algorithm, extra) in [
        ("map-elites", ""),
        ("cma-me", ""),
        ("cma", ""),
        ("cma-me", "search_on = \"estimates\""),
        ("cma-mae", "search_on = \"estimates\"\nlearning_rate = 0.1"),
    ] {
        let mk = |name: &str| {
            let out = tmp(&format!("{algorithm}-{}-{name}", extra.len()));
            let mut text = config(&out, algorithm, extra);
            if algorithm == "cma" {
                let i = text.find("[[descriptor]]").unwrap();
                let j = text.find("[qd]").unwrap();
                text.replace_range(i..j, "");
            }
            (out, text)
        };
        let (o1, t1) = mk("t1");
        let (o2, t2) = mk("t2");
        let (o3, t3) = mk("wire");
        let pool = |n: usize| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
        let a = pool(1).install(|| go(&t1, &RunOptions::default()));
        let b = pool(2).install(|| go(&t2, &RunOptions::default()));
        let c = go(&t3, &RunOptions { exec: Executor::RoundTrip, ..RunOptions::default() });
        let (ra, rb, rc) = (results(&a.dir), results(&b.dir), results(&c.dir));
        assert!(ra.iter().any(|(f, _)| f == "history.csv"));
        assert_eq!(ra, rb, "{algorithm}: 1 vs 2 threads");
        assert_eq!(ra, rc, "{algorithm}: local vs serialized jobs");
        assert!(a.best.is_some(), "{algorithm}: a feasible candidate");
        if algorithm != "cma" {
            assert!(!a.archive.cells.is_empty());
            assert!(a.dir.join("archive.png").exists() && a.dir.join("convergence.png").exists());
            assert_eq!(std::fs::read_dir(a.dir.join("elites")).unwrap().count(), a.archive.cells.len());
            // QD-score is the sum of the elites' qualities.
            let sum: f64 = a.archive.cells.values().map(|e| e.eval.f).sum();
            assert!((a.archive.qd_score() - sum).abs() < 1e-12);
        }
        for o in [o1, o2, o3] {
            let _ = std::fs::remove_dir_all(o);
        }
    }
}

#[test]
fn searching_on_estimates_keeps_every_candidate_in_a_second_map_and_only_confirmed_elites_in_the_result() {
    for algorithm in ["cma-me", "map-elites"] {
        let out = tmp(&format!("estimates-{algorithm}"));
        let text = config(&out, algorithm, "search_on = \"estimates\"").replace("max_evaluations = 40", "max_evaluations = 120");
        let o = go(&text, &RunOptions::default());
        let ck: serde_json::Value = serde_json::from_slice(&std::fs::read(o.dir.join("checkpoint.json")).unwrap()).unwrap();
        let explore = ck["explore"]["cells"].as_object().expect("a searched map in the checkpoint");
        assert!(!o.archive.cells.is_empty() && !explore.is_empty());
        // The searched map holds candidates by their evaluation's 2 games per table; the result
        // only confirmed ones, by their 3 confirmation games.
        for e in explore.values() {
            assert_eq!(e["eval"]["games"], 2, "{e}");
        }
        for e in o.archive.cells.values() {
            assert!(e.eval.feasible && e.eval.games == 3, "{e:?}");
        }
        // The old search (the default) keeps no second map.
        let o = go(&config(&out, algorithm, ""), &RunOptions::default());
        let ck: serde_json::Value = serde_json::from_slice(&std::fs::read(o.dir.join("checkpoint.json")).unwrap()).unwrap();
        assert!(ck.get("explore").is_none());
        let _ = std::fs::remove_dir_all(out);
    }
}

#[test]
fn a_resumed_run_equals_a_straight_one() {
    for algorithm in ["cma-mae", "cma-me"] {
        let a = tmp(&format!("straight-{algorithm}"));
        let b = tmp(&format!("resumed-{algorithm}"));
        let ta = config(&a, algorithm, "").replace("max_evaluations = 40", "max_evaluations = 400");
        let tb = config(&b, algorithm, "").replace("max_evaluations = 40", "max_evaluations = 400");
        let straight = go(&ta, &RunOptions { max_iterations: Some(4), ..RunOptions::default() });
        go(&tb, &RunOptions { max_iterations: Some(2), ..RunOptions::default() });
        let resumed = go(&tb, &RunOptions { resume: true, max_iterations: Some(2), ..RunOptions::default() });
        assert_eq!(straight.history.len(), 4);
        assert_eq!(results(&straight.dir), results(&resumed.dir), "{algorithm}");
        if algorithm == "cma-mae" {
            // The soft archive's thresholds are part of the state.
            let ck: serde_json::Value = serde_json::from_slice(&std::fs::read(resumed.dir.join("checkpoint.json")).unwrap()).unwrap();
            assert!(!ck["search"]["CmaMe"]["thresholds"].as_object().expect("thresholds").is_empty(), "{}", ck["search"]);
        }
    }
    let b = tmp("resumed-cma-me");
    let tb = config(&b, "cma-me", "").replace("max_evaluations = 40", "max_evaluations = 400");
    go(&tb, &RunOptions { max_iterations: Some(2), ..RunOptions::default() });
    let resumed = go(&tb, &RunOptions { resume: true, max_iterations: Some(2), ..RunOptions::default() });
    // A resume with another config is refused.
    let other = tb.replace("seed = 3", "seed = 4");
    let cfg = parse(&other).unwrap();
    let dir_other = out_dir(&cfg);
    std::fs::create_dir_all(&dir_other).unwrap();
    std::fs::copy(resumed.dir.join("checkpoint.json"), dir_other.join("checkpoint.json")).unwrap();
    let err = run(&cfg, Path::new("g.toml"), &other, &RunOptions { resume: true, ..RunOptions::default() }, &|_, _, _| {})
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("another configuration"), "{err}");
}

#[test]
fn infeasible_content_never_counts() {
    let out = tmp("infeasible");
    // No game scores a billion: nothing is feasible, so no elite and no best.
    let text = config(&out, "map-elites", "\n[[require]]\nexpr = \"rnd\"\nat_least = 1e9\n");
    let o = go(&text, &RunOptions::default());
    assert!(o.archive.cells.is_empty());
    assert!(o.best.is_none());
    // verify says that there is nothing to verify, and why.
    assert!(playforge::generate::verify::is_generated(&o.dir));
    let err = playforge::generate::verify::verify(&o.dir, None, Some(2), 1, &Executor::Local, &|_, _| {}).err().unwrap().to_string();
    assert!(err.contains("no feasible content"), "{err}");
    let h = std::fs::read_to_string(o.dir.join("history.csv")).unwrap();
    assert!(h.lines().skip(1).all(|l| l.split(',').nth(2) == Some("0")), "no feasible candidate in any row:\n{h}");
    // A game that cannot end within max_moves is infeasible too (match-3 takes 20 moves).
    let text = config(&out, "map-elites", "").replace("confirm_games = 3", "confirm_games = 3\nmax_moves = 5");
    let o = go(&text, &RunOptions::default());
    assert!(o.archive.cells.is_empty());
}

#[test]
fn verify_replays_every_elite_on_fresh_seeds() {
    let out = tmp("verify");
    let text = config(&out, "map-elites", "");
    let o = go(&text, &RunOptions::default());
    let r = playforge::generate::verify::verify(&o.dir, None, Some(3), 99, &Executor::Local, &|_, _| {}).unwrap();
    assert_eq!(r.checked.len(), o.archive.cells.len());
    assert!(o.dir.join("verify.md").exists() && o.dir.join("verify.csv").exists());
    for c in &r.checked {
        assert_eq!(c.eval.games, 3);
        // The pass verdict is the feasibility and the band target's estimate.
        let v = c.eval.targets[0].mean;
        assert_eq!(c.pass, c.eval.feasible && v >= 500.0, "{:?}", c.file);
    }
    // One file, and the same file again: the same numbers (fixed seed).
    let one = r.checked[0].file.clone();
    let a = playforge::generate::verify::verify(&one, None, Some(3), 99, &Executor::Local, &|_, _| {}).unwrap();
    let b = playforge::generate::verify::verify(&one, None, Some(3), 99, &Executor::Local, &|_, _| {}).unwrap();
    assert_eq!(a.checked[0].eval, b.checked[0].eval);
    assert!(playforge::generate::verify::is_generated(&one) && playforge::generate::verify::is_generated(&o.dir));
    // An elite is playable with `run --params`: its [held] values load as an encounter.
    let enc = playforge::balance::run::load_encounter(&one).unwrap();
    assert!(enc.overrides.iter().any(|(n, _)| n == "me.colours"));
}

#[test]
fn the_shipped_generate_configs_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("generate_") && name.ends_with(".toml") {
            let (cfg, text) = GenerateConfig::load(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
            playforge::generate::jobs::Setup::new(&cfg, &p, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
            n += 1;
        }
    }
    assert!(n >= 1, "no configs/generate_*.toml");
}

#[test]
fn a_when_measure_reads_its_value_once_the_condition_first_holds() {
    let out = tmp("when");
    let extra = r#"
[[measure]]
name = "at5"
players = ["random"]
of = "game.moves"
when = "game.moves >= 5"

[[measure]]
name = "len_at5"
players = ["random"]
of = "length"
when = "game.moves >= 5"

[[measure]]
name = "never"
players = ["random"]
of = "length"
when = "game.score >= 1e12"

[[measure]]
name = "len"
players = ["random"]
of = "length"
"#;
    let text = config(&out, "cma-me", extra);
    let cfg = parse(&text).unwrap();
    let setup = playforge::generate::jobs::Setup::new(&cfg, Path::new("g.toml"), &text).unwrap();
    let n = setup.codec.genes.len();
    let built = setup.built(&vec![0.5; n]).unwrap();
    let k = |name: &str| setup.scorer.measures[cfg.measures.iter().position(|m| m.name == name).unwrap()];
    let t = k("at5").0;
    let q = |name: &str| {
        assert_eq!(k(name).0, t, "{name} is read at the random player's table");
        k(name).1
    };
    for seed in 0..5 {
        let r = setup.play(&built, t, seed).unwrap();
        // Match-3 lasts 20 moves: the value after move 5, the length when the condition never held.
        assert_eq!(r.q[q("at5")], 5.0, "seed {seed}");
        assert_eq!(r.q[q("len_at5")], 5.0, "seed {seed}");
        assert_eq!(r.q[q("never")], r.q[q("len")], "seed {seed}");
        assert!(r.q[q("len")] > 5.0);
    }
    // A `when` that is not a comparison, or one on a measure read as a mean, names the key.
    let bad = text.replacen("when = \"game.moves >= 5\"", "when = \"game.moves 5\"", 1);
    let err = parse(&bad).unwrap_err();
    assert!(err.contains("when = \"game.moves 5\"") && err.contains("no comparison"), "{err}");
    let bad = text.replacen("of = \"game.moves\"\nwhen", "of = \"game.moves\"\naggregate = \"mean\"\nwhen", 1);
    assert!(parse(&bad).unwrap_err().contains("with `when`"));
    // A value the game does not have is an error naming the key.
    let bad = text.replacen("when = \"game.score >= 1e12\"", "when = \"me.nothing >= 1\"", 1);
    let cfg = parse(&bad).unwrap();
    let err = playforge::generate::jobs::Setup::new(&cfg, Path::new("g.toml"), &bad).err().unwrap().to_string();
    assert!(err.contains("when = \"me.nothing >= 1\""), "{err}");
}

#[test]
fn genes_of_another_optimizer_that_break_a_constraint_come_back_infeasible_without_games() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/generate_hex_map.toml");
    let out = tmp("constraint");
    let (mut cfg, text) = GenerateConfig::load(&path).unwrap();
    cfg.generate.out = out.clone();
    let at = playforge::generate::asktell::AskTell::start(cfg, &path, &text, false, Executor::Local).unwrap();
    let names = at.gene_names();
    // Every ability at its highest cost, every actor at its lowest AP: `cost <= maxAp` breaks.
    let broken: Vec<f64> = names
        .iter()
        .map(|n| {
            if n.ends_with(".cost") {
                1.0
            } else if n.ends_with(".maxAp") {
                0.0
            } else {
                0.5
            }
        })
        .collect();
    let fine = vec![0.5; names.len()];
    let cand = |genes: Vec<f64>| playforge::generate::run::Candidate { genes, values: Vec::new(), who: 0 };
    let req = playforge::generate::run::EvalRequest { iteration: 0, confirm: false, games: 2, candidates: vec![cand(broken), cand(fine)] };
    let evals = at.evaluate(&req).unwrap();
    assert_eq!(evals.len(), 2);
    assert!(!evals[0].feasible && evals[0].games == 0 && evals[0].why.contains("constraint"), "{:?}", evals[0]);
    assert_eq!(evals[1].games, 2);
    assert_eq!(evals[1].descriptors.len(), 2);
}

#[test]
fn stop_at_target_ends_a_cma_run_once_its_best_reaches_the_targets_with_confidence() {
    // One answer (no map), a target the greedy persona clears against random play.
    let one = |out: &Path, stop: &str, confirm: &str| {
        let mut text = config(out, "cma", "")
            .replace("confirm_games = 3", &format!("confirm_games = 8\nconfirm = \"{confirm}\"\nstop = \"{stop}\""))
            .replace("max_evaluations = 40", "max_evaluations = 400")
            .replace("at_least = 500", "at_least = 0");
        let i = text.find("[[descriptor]]").unwrap();
        let j = text.find("[qd]").unwrap();
        text.replace_range(i..j, "");
        text
    };
    let budget = 400 * 2 * 2;
    for confirm in ["sequential", "fixed"] {
        let (oa, ob) = (tmp(&format!("stop-t-{confirm}")), tmp(&format!("stop-b-{confirm}")));
        let early = go(&one(&oa, "target", confirm), &RunOptions::default());
        let full = go(&one(&ob, "budget", confirm), &RunOptions::default());
        assert!(full.games_played >= budget, "{confirm}: the budget run played {} of {budget}", full.games_played);
        assert!(early.games_played < budget, "{confirm}: stop = \"target\" played the whole budget");
        // It stopped on an answer whose target holds with its whole interval (z ≥ 1.96).
        let best = early.best.as_ref().expect("a best answer");
        let t = &best.eval.targets[0];
        assert!(best.eval.feasible && best.eval.f >= 1.0 && t.mean - 1.96 * t.se >= 0.0, "{:?}", best.eval);
        // The same iterations up to the stop.
        // The same search up to the stop; under `sequential` the best played more games on the way.
        let key = |o: &playforge::generate::run::Outcome| -> Vec<(u64, u64, u64)> {
            let games = |g: u64| if confirm == "fixed" { g } else { 0 };
            o.history.iter().map(|r| (r.iteration, games(r.games), r.batch_best_f.to_bits())).collect()
        };
        let n = early.history.len();
        assert!(n < full.history.len());
        assert_eq!(key(&early)[..], key(&full)[..n], "{confirm}");
        for o in [oa, ob] {
            let _ = std::fs::remove_dir_all(o);
        }
    }
    let out = tmp("stop-err");
    let bad = parse(&config(&out, "cma-me", "").replace("confirm_games = 3", "confirm_games = 3\nstop = \"target\"")).unwrap_err();
    assert!(bad.contains("g.toml:") && bad.contains("a map has no single answer"), "{bad}");
    let bad = parse(&one(&out, "soon", "sequential")).unwrap_err();
    assert!(bad.contains("expected \"budget\" or \"target\""), "{bad}");
}

#[test]
fn a_revisited_map_gathers_its_elites_games_and_repeats_itself() {
    // Sequential, confirm_games 8 of 2 screening games; every elite below 8 revisited each
    // iteration ([qd] revisit far above the map's size).
    let seq = |out: &Path, extra: &str| {
        config(out, "cma-me", extra)
            .replace("confirm_games = 3", "confirm_games = 8\nconfirm = \"sequential\"")
            .replace("max_evaluations = 40", "max_evaluations = 80")
    };
    let (o0, o1, o2, o3) = (tmp("rev0"), tmp("rev1"), tmp("rev2"), tmp("revw"));
    let pool = |n: usize| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
    let plain = go(&seq(&o0, ""), &RunOptions::default());
    let a = pool(1).install(|| go(&seq(&o1, "revisit = 1000"), &RunOptions::default()));
    let b = pool(2).install(|| go(&seq(&o2, "revisit = 1000"), &RunOptions::default()));
    let c = go(&seq(&o3, "revisit = 1000"), &RunOptions { exec: Executor::RoundTrip, ..RunOptions::default() });
    assert_eq!(results(&a.dir), results(&b.dir), "1 vs 2 threads");
    assert_eq!(results(&a.dir), results(&c.dir), "local vs serialized jobs");
    // Without revisiting, some elite keeps fewer games than the cap (what revisiting is for).
    assert!(plain.archive.cells.values().any(|e| e.eval.games < 8), "every plain elite already holds 8 games");
    // Revisited, an elite three iterations old holds the cap (2 + 2 + 2 + 2 at the least), and
    // its evaluation is its pool's.
    let last = a.history.last().expect("iterations").iteration;
    let old: Vec<_> = a.archive.cells.values().filter(|e| e.iteration + 3 <= last).collect();
    assert!(!old.is_empty(), "no elite older than three iterations");
    for e in a.archive.cells.values() {
        let games = e.pool.as_ref().expect("a sequential elite keeps its games").games();
        assert_eq!(e.eval.games, games);
        assert!(e.eval.feasible && games < 8 + 2, "{e:?}");
    }
    for e in &old {
        assert!(e.eval.games >= 8, "an elite of iteration {} (of {last}) holds {} games", e.iteration, e.eval.games);
    }
    // Revisiting is for a sequential map only.
    let bad = parse(&config(&o0, "cma-me", "revisit = 2")).unwrap_err();
    assert!(bad.contains("g.toml:") && bad.contains("revisit = 2") && bad.contains("confirm = \"sequential\""), "{bad}");
    for o in [o0, o1, o2, o3] {
        let _ = std::fs::remove_dir_all(o);
    }
}

#[test]
fn a_sequential_confirmation_races_pools_every_game_and_repeats_itself() {
    // A requirement in doubt at 2 games: the race plays up to 8 per table where it must.
    let seq = |out: &Path, algorithm: &str| {
        let mut text = config(out, algorithm, "")
            .replace("confirm_games = 3", "confirm_games = 8\nconfirm = \"sequential\"")
            .replace("max_evaluations = 40", "max_evaluations = 60")
            .replace("[[descriptor]]", "[[require]]\nexpr = \"best - rnd\"\nat_least = 200\n\n[[descriptor]]");
        if algorithm == "cma" {
            let i = text.find("[[descriptor]]").unwrap();
            let j = text.find("[qd]").unwrap();
            text.replace_range(i..j, "");
        }
        text
    };
    for algorithm in ["cma-me", "cma"] {
        let (o1, o2, o3) = (tmp(&format!("seq1-{algorithm}")), tmp(&format!("seq2-{algorithm}")), tmp(&format!("seqw-{algorithm}")));
        let pool = |n: usize| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
        let a = pool(1).install(|| go(&seq(&o1, algorithm), &RunOptions::default()));
        let b = pool(2).install(|| go(&seq(&o2, algorithm), &RunOptions::default()));
        let c = go(&seq(&o3, algorithm), &RunOptions { exec: Executor::RoundTrip, ..RunOptions::default() });
        assert_eq!(results(&a.dir), results(&b.dir), "{algorithm}: 1 vs 2 threads");
        assert_eq!(results(&a.dir), results(&c.dir), "{algorithm}: local vs serialized jobs");
        let elites: Vec<_> =
            if algorithm == "cma" { a.best.iter().cloned().collect() } else { a.archive.cells.values().cloned().collect() };
        assert!(!elites.is_empty(), "{algorithm}: something accepted");
        for e in &elites {
            // Its evaluation is its pool's: the 2 screening games and as many more as it needed.
            let pool = e.pool.as_ref().expect("a sequential elite keeps its games");
            assert_eq!(e.eval.games, pool.games());
            assert!((2..=8).contains(&e.eval.games) && e.eval.feasible, "{e:?}");
        }
        // Every game counts: the screening games alone are below what the run played whenever
        // a candidate got more.
        let screening: u64 = a.history.iter().map(|r| r.candidates * 2 * 2).sum();
        assert!(a.games_played >= screening, "{} < {screening}", a.games_played);
        if algorithm == "cma-me" {
            assert!(a.games_played > screening, "no candidate was ever in doubt");
        }
        for o in [o1, o2, o3] {
            let _ = std::fs::remove_dir_all(o);
        }
    }
    // Resumed equals straight.
    let (sa, sb) = (tmp("seq-straight"), tmp("seq-resumed"));
    let straight = go(&seq(&sa, "cma-me"), &RunOptions { max_iterations: Some(6), ..RunOptions::default() });
    go(&seq(&sb, "cma-me"), &RunOptions { max_iterations: Some(3), ..RunOptions::default() });
    let resumed = go(&seq(&sb, "cma-me"), &RunOptions { resume: true, max_iterations: Some(3), ..RunOptions::default() });
    assert_eq!(results(&straight.dir), results(&resumed.dir));
    // A user's evaluation cannot be pooled: a clear error, not a silent fixed confirmation.
    let hook: std::sync::Arc<playforge::generate::run::EvalHook> =
        std::sync::Arc::new(|_: &playforge::generate::run::EvalRequest| Ok(Vec::new()));
    let text = seq(&sa, "cma-me");
    let err =
        run(&parse(&text).unwrap(), Path::new("g.toml"), &text, &RunOptions { hook: Some(hook), ..RunOptions::default() }, &|_, _, _| {})
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
    assert!(err.contains("confirm = \"sequential\"") && err.contains("built-in evaluation"), "{err}");
    let bad = parse(&config(&sa, "cma-me", "").replace("confirm_games = 3", "confirm_games = 3\nconfirm = \"seq\"")).unwrap_err();
    assert!(bad.contains("g.toml:") && bad.contains("expected \"fixed\" or \"sequential\""), "{bad}");
    for o in [sa, sb] {
        let _ = std::fs::remove_dir_all(o);
    }
}
