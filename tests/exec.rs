//! The executor seam: a run whose games go through the serialized worker path (context and
//! jobs written to JSON, the worker built from the context alone, outputs read back) writes the
//! same files, byte for byte, as the local run — the proof that a job carries everything its
//! result depends on, which a Ray worker on another machine relies on.

use crate::util::outputs;
use playforge::balance::config::BalanceConfig;
use playforge::balance::run::{RunOptions, run};
use playforge::exec::{self, Executor};
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("playforge-exec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A short balance run on the hex arena (both AI kinds, confirmation on) with `optimizer`.
fn balance_config(out: &Path, optimizer: &str) -> String {
    format!(
        r#"[balance]
name = "t"
game = "games/hex_arena.wgdl"
seed = 5
optimizer = "{optimizer}"
max_evaluations = 60
target = 0.99
replays = 1
out = "{}"

[[team]]
name = "red"
params = ["red*"]

[[team]]
name = "blue"
params = ["blue*"]

[evaluation]
pairs = [["Rule", "Rule"], ["MCTS", "Rule"]]
games = 2
confirm_games = 3

[[ai]]
name = "Rule"
kind = "policy"
policy = "rule"

[[ai]]
name = "MCTS"
kind = "mcts"
iterations = 2
playout = "greedy"

[es]
lambda = 4
"#,
        out.display()
    )
}

/// Runs the short balance with `exec` in one shared folder (its path is in config.toml), then
/// moves the run's outputs to a folder of their own.
fn balance_with(exec: Executor, optimizer: &str, tag: &str) -> (PathBuf, u64) {
    let out = tmp(&format!("balance-{optimizer}"));
    let text = balance_config(&out, optimizer);
    let cfg = BalanceConfig::parse(Path::new("b.toml"), &text).unwrap();
    let o = run(&cfg, Path::new("b.toml"), &text, &RunOptions { max_iterations: Some(3), exec, ..RunOptions::default() }, &|_, _, _, _| {})
        .unwrap();
    let kept = tmp(tag);
    std::fs::rename(&o.dir, kept.join("run")).unwrap();
    (kept.join("run"), o.games_played)
}

#[test]
fn balance_through_serialized_jobs_writes_the_same_files() {
    for optimizer in ["es", "cma"] {
        let (local, games) = balance_with(Executor::Local, optimizer, &format!("local-{optimizer}"));
        let (wire, games_wire) = balance_with(Executor::RoundTrip, optimizer, &format!("wire-{optimizer}"));
        assert!(games > 0);
        assert_eq!(games, games_wire);
        let (a, b) = (outputs(&local), outputs(&wire));
        assert!(a.contains_key(Path::new("history.csv")) && a.contains_key(Path::new("best_encounter.toml")), "{:?}", a.keys());
        assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
        for (name, bytes) in &a {
            assert!(bytes == &b[name], "{optimizer}: {} differs between the local and the serialized executor", name.display());
        }
    }
    // One worker per context: the run's games compiled the game once, not once per job.
    assert!(exec::cached_workers() >= 1);
}

#[test]
fn a_bad_batch_is_an_error_not_a_panic() {
    let err = playforge::jobs::run_batch("nope", "{}", &[], 1).unwrap_err().to_string();
    assert!(err.contains("unknown job kind `nope`") && err.contains("balance.game"), "{err}");
    let err = playforge::jobs::run_batch("balance.game", "{\"config\": 1}", &["{}".into()], 1).unwrap_err().to_string();
    assert!(err.contains("a balance.game context"), "{err}");
}

#[test]
fn ray_without_the_python_package_says_how_to_install_it() {
    if exec::can_connect() {
        return;
    }
    let err = exec::connect("local").unwrap_err().to_string();
    assert!(err.contains("--ray local") && err.contains("python/setup.sh"), "{err}");
}

#[test]
fn a_tournament_through_serialized_jobs_writes_the_same_files() {
    use playforge::experiment::tournament::{TournamentConfig, run};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cfg = TournamentConfig::load(&root.join("configs/hex_tournament.toml")).unwrap();
    cfg.tournament.encounters = 3;
    for ai in &mut cfg.ais {
        if ai.kind == "mcts" {
            ai.iterations = Some(5);
        }
    }
    let go = |exec: Executor, tag: &str| {
        let out = tmp("tournament");
        let md = run(&cfg, &out, &exec, &|_, _| {}).unwrap();
        let kept = tmp(tag);
        std::fs::rename(&out, kept.join("run")).unwrap();
        (md, kept.join("run"))
    };
    let (md_local, local) = go(Executor::Local, "tournament-local");
    let (md_wire, wire) = go(Executor::RoundTrip, "tournament-wire");
    assert_eq!(md_local, md_wire);
    let (a, b) = (outputs(&local), outputs(&wire));
    assert!(a.contains_key(Path::new("games.csv")) && a.keys().any(|k| k.starts_with("replays")), "{:?}", a.keys());
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(bytes == &b[name], "{} differs between the local and the serialized executor", name.display());
    }
}

#[test]
fn landscape_and_verify_through_serialized_jobs_give_the_same_reports() {
    let dir = tmp("verify");
    let cfg_path = dir.join("b.toml");
    let text = balance_config(&dir, "es");
    std::fs::write(&cfg_path, &text).unwrap();
    let (cfg, text) = BalanceConfig::load(&cfg_path).unwrap();
    // Landscape: the rows and the report.
    let land = |exec: &Executor| {
        let l = playforge::balance::landscape::landscape(&cfg, &cfg_path, &text, 3, 2, exec, &|_, _| {}).unwrap();
        (l.markdown, std::fs::read(l.dir.join("landscape.csv")).unwrap())
    };
    let a = land(&Executor::Local);
    assert_eq!(a, land(&Executor::RoundTrip));
    assert_eq!(String::from_utf8(a.1).unwrap().lines().count(), 1 + 3 * 2);
    // Verify the run's best encounter.
    let o = run(&cfg, &cfg_path, &text, &RunOptions { max_iterations: Some(2), ..RunOptions::default() }, &|_, _, _, _| {}).unwrap();
    let best = o.dir.join("best_encounter.toml");
    let check = |exec: &Executor| {
        let r = playforge::balance::verify::verify(&best, Some(&cfg_path), 6, 2, exec, &|_, _| {}).unwrap();
        (r.markdown, std::fs::read(r.dir.join("verify.csv")).unwrap())
    };
    let v = check(&Executor::Local);
    assert!(v.0.contains("Rule-vs-Rule"), "{}", v.0);
    assert_eq!(v, check(&Executor::RoundTrip));
}

#[test]
fn an_experiment_through_serialized_jobs_writes_the_same_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tmp("experiment");
    let file = dir.join("e.toml");
    std::fs::write(
        &file,
        format!(
            r#"[experiment]
name = "e"
base = "{}"
seeds = 3
out = "{}"

[[condition]]
name = "c 0.1"
search = {{ iterations = 300, c = 0.1 }}

[[condition]]
name = "c 1"
search = {{ iterations = 300, c = 1.0 }}
"#,
            root.join("configs/simple_coins.toml").display(),
            dir.join("out").display()
        ),
    )
    .unwrap();
    let go = |exec: Executor, tag: &str| {
        let o = playforge::experiment::repeat::run(&file, None, false, &exec, &|_, _, _| {}).unwrap();
        let kept = tmp(tag);
        std::fs::rename(&o.dir, kept.join("run")).unwrap();
        kept.join("run")
    };
    let (a, b) = (outputs(&go(Executor::Local, "experiment-local")), outputs(&go(Executor::RoundTrip, "experiment-wire")));
    assert!(a.contains_key(Path::new("results.csv")) && a.contains_key(Path::new("summary.csv")), "{:?}", a.keys());
    assert_eq!(String::from_utf8_lossy(&a[Path::new("results.csv")]).lines().count(), 1 + 6);
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(bytes == &b[name], "{} differs between the local and the serialized executor", name.display());
    }
}
