//! `generate` on a game that runs in its own process (the Python roguelike floor over the
//! bridge): the shipped config meets its designer target and passes `verify` on fresh seeds;
//! 1 or 2 threads and the executor's serialized path write the same files, and so does a resumed
//! run; a game process that dies now and then is restarted and changes nothing; a game that
//! never starts is a clear error; the config's names are checked against the game's hello,
//! each error at its line.

use playforge::exec::Executor;
use playforge::generate::config::GenerateConfig;
use playforge::generate::run::{Outcome, RunOptions, run};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("playforge-generate-external-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The shipped config with `edits`, its outputs in `out`, the game by its absolute path.
fn shipped(out: &Path, edits: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(root().join("configs/generate_external_roguelike.toml")).unwrap();
    let game = root().join("games/external/roguelike.py");
    let mut all = vec![("game = \"../games/external/roguelike.py\"", format!("game = {:?}\nout = {:?}", game.display().to_string(), out))];
    all.extend(edits.iter().map(|(a, b)| (*a, b.to_string())));
    for (a, b) in all {
        assert!(text.contains(a), "the shipped config has no {a:?}");
        text = text.replace(a, &b);
    }
    text
}

fn go(text: &str, opts: &RunOptions) -> Outcome {
    let path = Path::new("generate_external_roguelike.toml");
    let cfg = GenerateConfig::parse(path, text).unwrap_or_else(|e| panic!("{e}"));
    run(&cfg, path, text, opts, &|_, _, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// The error of loading `text` as the run does (the game started, its hello checked).
fn load_err(text: &str) -> String {
    let path = Path::new("g.toml");
    match GenerateConfig::parse(path, text) {
        Err(e) => e.to_string(),
        Ok(cfg) => playforge::generate::jobs::Setup::new(&cfg, path, text).err().expect("an error").to_string(),
    }
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    ["history.csv", "best.toml"].iter().map(|f| (f.to_string(), std::fs::read(dir.join(f)).unwrap_or_default())).collect()
}

#[test]
fn the_roguelike_generate_meets_its_target_and_passes_verify_on_fresh_seeds() {
    let out = tmp("shipped");
    let o = go(&shipped(&out, &[("max_evaluations = 300", "max_evaluations = 160")]), &RunOptions::default());
    let best = o.best.as_ref().expect("a confirmed answer");
    assert!(best.eval.feasible && best.eval.f > 0.99, "F {} on its confirmation", best.eval.f);
    // 100 floors per player on seeds no search used: both bands hold.
    let r = playforge::generate::verify::verify(&o.dir.join("best.toml"), None, Some(100), 1, &Executor::Local, &|_, _| {}).unwrap();
    let c = &r.checked[0];
    assert!(c.pass && c.targets.iter().all(|&(holds, _)| holds), "{}", r.markdown);
    let escape = c.eval.measures[0].mean;
    let score = c.eval.measures[1].mean;
    assert!((0.4..=0.6).contains(&escape) && score >= 60.0, "escape {escape}, expert score {score}");
    let best_toml = std::fs::read_to_string(o.dir.join("best.toml")).unwrap();
    assert!(best_toml.contains("\"rooms\" = ") && best_toml.contains("[measured]"), "{best_toml}");
}

/// A smaller run: 40 evaluations, a weaker expert.
fn small(out: &Path) -> String {
    shipped(
        out,
        &[
            ("max_evaluations = 300", "max_evaluations = 40"),
            ("confirm_games = 40", "confirm_games = 8"),
            ("iterations = 100", "iterations = 12"),
        ],
    )
}

#[test]
fn one_or_two_threads_and_serialized_jobs_give_the_same_run_and_crashes_change_nothing() {
    let pool = |n: usize| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
    let (o1, o2, o3, o4) = (tmp("t1"), tmp("t2"), tmp("wire"), tmp("crash"));
    let a = pool(1).install(|| go(&small(&o1), &RunOptions::default()));
    let b = pool(2).install(|| go(&small(&o2), &RunOptions::default()));
    let c = go(&small(&o3), &RunOptions { exec: Executor::RoundTrip, ..RunOptions::default() });
    assert!(a.best.is_some());
    assert_eq!(files(&a.dir), files(&b.dir), "1 vs 2 threads");
    assert_eq!(files(&a.dir), files(&c.dir), "local vs serialized jobs");
    // Every process of this game dies on its 40th episode: each such episode is played again
    // on a fresh process, and the run is the same.
    let dir = root().join("games/external");
    let marks = tmp("crash-marks");
    let script = format!(
        "import os, sys\nsys.path.insert(0, {:?})\nimport roguelike\nplay, n = roguelike.play, [0]\ndef dying(*a):\n    n[0] += 1\n    if n[0] == 40:\n        open(os.path.join({:?}, str(os.getpid())), 'w').close()\n        os._exit(3)\n    return play(*a)\nroguelike.play = dying\nroguelike.main()",
        dir.display().to_string(),
        marks.display().to_string()
    );
    let crashing = small(&o4)
        .replace("command = [\"python3\", \"roguelike.py\"]", &format!("command = [\"python3\", \"-c\", {}]", toml::Value::String(script)));
    let d = pool(2).install(|| go(&crashing, &RunOptions::default()));
    assert_eq!(files(&a.dir), files(&d.dir), "restarted processes change nothing");
    let crashes = std::fs::read_dir(&marks).unwrap().count();
    assert!(crashes >= 10, "{crashes} processes died");
}

#[test]
fn an_external_config_is_checked_against_the_games_hello() {
    let out = tmp("errors");
    let good = shipped(&out, &[]);
    // (the text replaced, its replacement, the line the error names, what the error says)
    for (from, to, line, want) in [
        ("kind = \"game\"", "kind = \"random\"", "kind = \"random\"", &["kind = \"random\" on an external game", "\"game\""][..]),
        ("of = \"fights\"", "of = \"fight\"", "of = \"fight\"", &["of = \"fight\"", "turns, gold, hp, escaped, fights"]),
        ("params = [\"rooms\",", "params = [\"room\",", "params = ", &["\"room\" matches no declared parameter", "rooms, danger"]),
        (
            "kind = \"game\"",
            "kind = \"game\"\noverlays = [\"sneaky\"]",
            "overlays = ",
            &["\"sneaky\" is neither a play style nor a design variant", "unrestricted, brave, hoarder, regular, deep"],
        ),
        (
            "measure = \"score\"",
            "measure = \"score\"\ndirection = \"min\"",
            "direction = ",
            &["direction on a persona of an external game", "\"max\""],
        ),
        ("measure = \"score\"", "measure = \"gold!\"", "measure = \"gold!\"", &["score = \"gold!\"", "escaped"]),
        ("players = [\"wanderer\"]", "players = [\"wanderer\", \"expert\"]", "players = [\"wanderer\", ", &["expected one player"]),
        ("[external]", "[parameters]\nrooms = 99\n\n[external]", "rooms = 99", &["rooms = 99", "[2, 8]"]),
        (
            "command = [\"python3\", \"roguelike.py\"]",
            "command = [\"python3\", \"-c\", \"import sys; sys.exit(3)\"]",
            "command = ",
            &["exited"],
        ),
    ] {
        assert!(good.contains(from), "{from}");
        let text = good.replacen(from, to, 1);
        let at = format!("g.toml:{}:", text[..text.find(line).unwrap()].lines().count() + 1);
        let err = load_err(&text);
        for w in want.iter().chain([&at.as_str()]) {
            assert!(err.contains(w), "{from} → {to}: {err}\n(wanted {w})");
        }
    }
}

#[test]
fn a_resumed_run_on_an_external_game_equals_a_straight_one() {
    let (a, b) = (tmp("straight"), tmp("resumed"));
    let straight = go(&small(&a), &RunOptions { max_iterations: Some(4), ..RunOptions::default() });
    go(&small(&b), &RunOptions { max_iterations: Some(2), ..RunOptions::default() });
    let resumed = go(&small(&b), &RunOptions { resume: true, max_iterations: Some(2), ..RunOptions::default() });
    assert_eq!(straight.history.len(), 4);
    assert_eq!(files(&straight.dir), files(&resumed.dir));
}
