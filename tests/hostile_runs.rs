//! Hostile input to the run drivers (issue 54, items 6 and 8): checkpoints that are valid JSON
//! but do not hold together (an empty CMA-ES `diag`, `lambda = 0` or 10^12, a short mean, an ES
//! state under a cma config, genes outside [0, 1], counters past the budget …) are clear errors
//! naming the field, never a panic or a 10 GB allocation; a mutation loop over real checkpoints
//! of balance, generate and personas never panics; `replay` and `verify` work from another
//! working folder; a run folder moved elsewhere resumes, and a changed config is refused with
//! the line that differs; a lock whose process id now belongs to another process is taken over.

use playforge::rng;
use rand::RngExt;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("playforge-hostile-runs-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the CLI in `dir`, killed past `limit` (a hang fails the test, it does not hold it).
fn cli_in(dir: &Path, args: &[&str], limit: Duration) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_playforge"))
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_bounded(child, limit)
}

fn wait_bounded(mut child: std::process::Child, limit: Duration) -> Output {
    let t0 = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("still running after {limit:?}: {}", String::from_utf8_lossy(&o.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Exit codes of a panic (101) and an abort (134): never the answer to bad input.
fn no_crash(o: &Output, what: &str) {
    let code = o.status.code();
    assert!(code != Some(101) && code != Some(134) && code.is_some(), "{what}: exit {code:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// A small balance config (hex arena, Rule against Rule): `optimizer`, a few games.
fn balance_config(game: &str, out: &str, optimizer: &str) -> String {
    format!(
        r#"[balance]
name = "t"
game = "{game}"
seed = 3
optimizer = "{optimizer}"
max_evaluations = 400
target = 0.99
replays = 1
out = "{out}"

[[team]]
name = "red"
params = ["red*"]

[[team]]
name = "blue"
params = ["blue*"]

[evaluation]
pairs = [["Rule", "Rule"]]
games = 2
confirm_games = 3

[[ai]]
name = "Rule"
kind = "policy"
policy = "rule"

[es]
lambda = 4
"#
    )
}

mod balance {
    use super::*;
    use playforge::balance::config::BalanceConfig;
    use playforge::balance::run::{RunOptions, out_dir, run};

    pub fn setup(tag: &str, optimizer: &str) -> (PathBuf, String, PathBuf) {
        let d = tmp(tag);
        let game = root().join("games/hex_arena.wgdl");
        let text = balance_config(&game.display().to_string(), &d.display().to_string(), optimizer);
        let cfg = BalanceConfig::parse(Path::new("b.toml"), &text).unwrap();
        run(&cfg, Path::new("b.toml"), &text, &RunOptions { max_iterations: Some(2), ..RunOptions::default() }, &|_, _, _, _| {}).unwrap();
        let ck = out_dir(&cfg).join("checkpoint.json");
        assert!(ck.exists());
        (d, text, ck)
    }

    /// Resumes `text`'s run for one iteration; a panic is caught and returned as an error
    /// starting with "PANIC".
    pub fn resume(text: &str) -> Result<(), String> {
        let text = text.to_string();
        std::panic::catch_unwind(move || {
            let cfg = BalanceConfig::parse(Path::new("b.toml"), &text).unwrap();
            let opts = RunOptions { resume: true, max_iterations: Some(1), light: true, ..RunOptions::default() };
            run(&cfg, Path::new("b.toml"), &text, &opts, &|_, _, _, _| {}).map(|_| ()).map_err(|e| format!("{e:#}"))
        })
        .unwrap_or_else(|_| Err("PANIC".to_string()))
    }
}

/// `ck` with `edit` applied to its JSON.
fn edited(ck: &Value, edit: impl FnOnce(&mut Value)) -> String {
    let mut v = ck.clone();
    edit(&mut v);
    serde_json::to_string(&v).unwrap()
}

#[test]
fn inconsistent_balance_checkpoints_are_clear_errors() {
    let (d, text, ck_path) = balance::setup("balance-cma", "cma");
    let ck: Value = serde_json::from_str(&std::fs::read_to_string(&ck_path).unwrap()).unwrap();
    fn cma(v: &mut Value) -> &mut Value {
        &mut v["optimizer"]["Cma"]
    }
    let cases: Vec<(&str, String, &str)> = vec![
        ("empty diag", edited(&ck, |v| cma(v)["diag"] = Value::Array(vec![])), "cma diag has 0 values; expected"),
        ("lambda 0", edited(&ck, |v| cma(v)["lambda"] = 0.into()), "cma lambda = 0; expected"),
        ("lambda 1", edited(&ck, |v| cma(v)["lambda"] = 1.into()), "cma lambda = 1; expected"),
        ("negative sigma", edited(&ck, |v| cma(v)["sigma"] = (-0.5).into()), "cma sigma = -0.5; expected"),
        ("zero variance", edited(&ck, |v| cma(v)["diag"][0] = 0.0.into()), "cma diag[0] = 0; expected"),
        (
            "short mean",
            edited(&ck, |v| {
                cma(v)["mean"].as_array_mut().unwrap().pop();
            }),
            "cma mean has",
        ),
        ("mean outside the box", edited(&ck, |v| cma(v)["mean"][0] = 1.5.into()), "cma mean[0] = 1.5; expected a gene in [0, 1]"),
        ("generation past the iterations", edited(&ck, |v| cma(v)["generation"] = 99.into()), "cma generation = 99"),
        ("an ES state", edited(&ck, |v| v["optimizer"] = serde_json::json!({"Es": {"current": null}})), "optimizer is an es state"),
        ("best dna short", edited(&ck, |v| v["best"]["dna"] = serde_json::json!([0.5])), "best dna has 1 values"),
        ("best dna negative", edited(&ck, |v| v["best"]["dna"][0] = (-1.0).into()), "best dna[0] = -1"),
        ("next iteration past the budget", edited(&ck, |v| v["next_iteration"] = 1_000_000.into()), "next_iteration = 1000000"),
        (
            "history shorter than the iterations",
            edited(&ck, |v| {
                v["history"].as_array_mut().unwrap().pop();
            }),
            "history has 1 rows; expected next_iteration = 2",
        ),
        ("negative elapsed", edited(&ck, |v| v["elapsed_s"] = (-3.0).into()), "elapsed_s = -3"),
    ];
    for (what, json, want) in cases {
        std::fs::write(&ck_path, json).unwrap();
        let err = balance::resume(&text).err().unwrap_or_else(|| panic!("{what}: resumed"));
        assert!(err.contains(want) && err.contains("checkpoint.json: checkpoint") && err.contains("without --resume"), "{what}: {err}");
    }
    // Untouched, it resumes.
    std::fs::write(&ck_path, serde_json::to_string(&ck).unwrap()).unwrap();
    balance::resume(&text).unwrap();
    // An ES run's current point of the wrong length.
    let (d2, text, ck_path) = balance::setup("balance-es", "es");
    let ck: Value = serde_json::from_str(&std::fs::read_to_string(&ck_path).unwrap()).unwrap();
    std::fs::write(&ck_path, edited(&ck, |v| v["optimizer"]["Es"]["current"] = serde_json::json!([0.5]))).unwrap();
    let err = balance::resume(&text).unwrap_err();
    assert!(err.contains("optimizer current has 1 values; expected"), "{err}");
    let _ = std::fs::remove_dir_all(d);
    let _ = std::fs::remove_dir_all(d2);
}

/// `lambda = 10^12` used to allocate 10 GB in 10 s: refused before anything of that size is
/// made. The CLI runs under a 3 GB address-space limit, so a regression fails (an abort) instead
/// of taking the machine's memory.
#[test]
fn a_huge_lambda_is_refused_before_allocating() {
    let (d, text, ck_path) = balance::setup("balance-lambda", "cma");
    let cfg = d.join("b.toml");
    std::fs::write(&cfg, &text).unwrap();
    let ck: Value = serde_json::from_str(&std::fs::read_to_string(&ck_path).unwrap()).unwrap();
    std::fs::write(&ck_path, edited(&ck, |v| v["optimizer"]["Cma"]["lambda"] = 1_000_000_000_000u64.into())).unwrap();
    let script =
        format!("ulimit -v 3000000; exec '{}' balance '{}' --resume -q --iterations 1", env!("CARGO_BIN_EXE_playforge"), cfg.display());
    let child = Command::new("sh")
        .args(["-c", &script])
        .current_dir(&d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let o = wait_bounded(child, Duration::from_secs(20));
    no_crash(&o, "lambda 10^12");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cma lambda = 1000000000000; expected"), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    let _ = std::fs::remove_dir_all(d);
}

mod generate {
    use super::*;
    use playforge::generate::config::GenerateConfig;
    use playforge::generate::run::{RunOptions, out_dir, run};

    pub fn config(out: &Path, algorithm: &str) -> String {
        format!(
            r#"[generate]
name = "t"
game = "{game}"
seed = 3
algorithm = "{algorithm}"
params = ["me.colours", "me.weight*"]
max_evaluations = 40
games = 2
confirm_games = 2
out = "{out}"

[[player]]
name = "random"
kind = "random"

[[measure]]
name = "rnd"
players = ["random"]
of = "game.score"

[[measure]]
name = "moves"
players = ["random"]
of = "legal_moves"
aggregate = "mean"

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
initial = 4
batch = 4
"#,
            game = root().join("games/match3.wgdl").display(),
            out = out.display()
        )
    }

    pub fn setup(tag: &str, algorithm: &str, iterations: u64) -> (PathBuf, String, PathBuf) {
        let d = tmp(tag);
        let text = config(&d, algorithm);
        let cfg = GenerateConfig::parse(Path::new("g.toml"), &text).unwrap_or_else(|e| panic!("{e}"));
        run(&cfg, Path::new("g.toml"), &text, &RunOptions { max_iterations: Some(iterations), ..RunOptions::default() }, &|_, _, _| {})
            .unwrap();
        let ck = out_dir(&cfg).join("checkpoint.json");
        (d, text, ck)
    }

    pub fn resume(text: &str) -> Result<(), String> {
        let text = text.to_string();
        std::panic::catch_unwind(move || {
            let cfg = GenerateConfig::parse(Path::new("g.toml"), &text).unwrap();
            let opts = RunOptions { resume: true, max_iterations: Some(1), ..RunOptions::default() };
            run(&cfg, Path::new("g.toml"), &text, &opts, &|_, _, _| {}).map(|_| ()).map_err(|e| format!("{e:#}"))
        })
        .unwrap_or_else(|_| Err("PANIC".to_string()))
    }
}

#[test]
fn inconsistent_generate_checkpoints_are_clear_errors() {
    let (d, text, ck_path) = generate::setup("generate-cmame", "cma-me", 3);
    let ck: Value = serde_json::from_str(&std::fs::read_to_string(&ck_path).unwrap()).unwrap();
    let some_cell = ck["archive"]["cells"].as_object().unwrap().keys().next().expect("an elite after 3 iterations").clone();
    let cases: Vec<(&str, String, &str)> = vec![
        ("no emitters", edited(&ck, |v| v["search"]["CmaMe"]["emitters"] = serde_json::json!([])), "search has 0 emitters; expected 2"),
        (
            "an emitter's empty diag",
            edited(&ck, |v| v["search"]["CmaMe"]["emitters"][0]["diag"] = serde_json::json!([])),
            "emitter 0 diag has 0 values",
        ),
        (
            "an emitter's lambda 10^12",
            edited(&ck, |v| v["search"]["CmaMe"]["emitters"][1]["lambda"] = 1_000_000_000_000u64.into()),
            "emitter 1 lambda = 1000000000000; expected",
        ),
        ("a map-elites state", edited(&ck, |v| v["search"] = "MapElites".into()), "search is a map-elites state"),
        ("other bins", edited(&ck, |v| v["archive"]["dims"][0][2] = 400.into()), "archive dims ="),
        (
            "a cell past the map",
            edited(&ck, |v| {
                let e = v["archive"]["cells"][&some_cell].clone();
                v["archive"]["cells"]["99"] = e;
            }),
            "archive cell 99; expected a cell below 16",
        ),
        (
            "an elite's short genes",
            edited(&ck, |v| v["archive"]["cells"][&some_cell]["x"] = serde_json::json!([0.5])),
            "x has 1 values; expected",
        ),
        ("a quality past 1", edited(&ck, |v| v["archive"]["cells"][&some_cell]["eval"]["f"] = 7.0.into()), "eval f = 7"),
    ];
    for (what, json, want) in cases {
        std::fs::write(&ck_path, json).unwrap();
        let err = generate::resume(&text).err().unwrap_or_else(|| panic!("{what}: resumed"));
        assert!(err.contains(want) && err.contains("checkpoint.json: checkpoint"), "{what}: {err}");
    }
    std::fs::write(&ck_path, serde_json::to_string(&ck).unwrap()).unwrap();
    generate::resume(&text).unwrap();
    let _ = std::fs::remove_dir_all(d);
}

mod personas {
    use super::*;
    use playforge::persona::config::PersonaConfig;
    use playforge::persona::jobs::Setup;
    use playforge::persona::run::run_persona;
    use std::sync::atomic::AtomicU64;

    pub fn text() -> String {
        format!(
            "[personas]\nname = \"tiny\"\ngame = \"{}\"\nseed = 3\ngenerations = 3\ngames = 2\niterations = 8\nheld_out = 0\n\n[gp]\npopulation = 6\nelites = 1\nmutants = 2\n\n[[persona]]\nname = \"MaxS\"\nmeasure = \"game.score\"\ndirection = \"max\"\n",
            root().join("games/match3.wgdl").display()
        )
    }

    pub fn run(out: &Path, resume: bool, generations: u64) -> Result<(), String> {
        let out = out.to_path_buf();
        std::panic::catch_unwind(move || {
            let path = Path::new("tiny.toml");
            let cfg = PersonaConfig::parse(path, &text()).unwrap();
            let mut setup = Setup::new(cfg, text(), path, &out).unwrap();
            setup.max_generations = Some(generations);
            run_persona(&setup, 0, resume, &AtomicU64::new(0), &|_| {}).map(|_| ()).map_err(|e| format!("{e:#}"))
        })
        .unwrap_or_else(|_| Err("PANIC".to_string()))
    }
}

#[test]
fn inconsistent_persona_checkpoints_are_clear_errors() {
    let d = tmp("personas");
    personas::run(&d, false, 1).unwrap();
    let ck_path = d.join("tiny/seed-3/MaxS/checkpoint.json");
    let ck: Value = serde_json::from_str(&std::fs::read_to_string(&ck_path).unwrap()).unwrap();
    let cases: Vec<(&str, String, &str)> = vec![
        ("no population", edited(&ck, |v| v["population"] = serde_json::json!([])), "population has 0 formulas; expected 6"),
        (
            "an origin missing",
            edited(&ck, |v| {
                v["origins"].as_array_mut().unwrap().pop();
            }),
            "origins has 5 entries; expected 6",
        ),
        ("a formula that does not parse", edited(&ck, |v| v["population"][2] = "wins / (".into()), "population[2] `wins / (`"),
        ("no goal after a generation", edited(&ck, |v| v["goal"] = Value::Null), "goal is missing"),
        ("past the generations", edited(&ck, |v| v["next_generation"] = 40.into()), "next_generation = 40; expected at most 3"),
    ];
    for (what, json, want) in cases {
        std::fs::write(&ck_path, json).unwrap();
        let err = personas::run(&d, true, 1).err().unwrap_or_else(|| panic!("{what}: resumed"));
        assert!(err.contains(want) && err.contains("checkpoint.json: checkpoint"), "{what}: {err}");
    }
    std::fs::write(&ck_path, serde_json::to_string(&ck).unwrap()).unwrap();
    personas::run(&d, true, 1).unwrap();
    let _ = std::fs::remove_dir_all(d);
}

/// Every number, array and string leaf of `v` with its path, in document order.
fn leaves(v: &Value, path: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(Value::String(k.clone()));
                leaves(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            out.push(path.clone());
            for (i, x) in a.iter().enumerate() {
                path.push(Value::from(i));
                leaves(x, path, out);
                path.pop();
            }
        }
        Value::Null => {}
        _ => out.push(path.clone()),
    }
}

fn at<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(v, |v, k| match k {
        Value::String(s) => &mut v[s.as_str()],
        k => &mut v[k.as_u64().unwrap() as usize],
    })
}

/// One mutation of `ck`: a number replaced by an edge value, an array emptied, cut, grown or
/// a member repeated, a string swapped, a value nulled.
fn mutate(ck: &Value, r: &mut playforge::rng::Rng) -> Value {
    let mut v = ck.clone();
    let mut all = Vec::new();
    leaves(&v, &mut Vec::new(), &mut all);
    // Most mutations hit the state (the optimizer, the maps, the population, the counters),
    // not the history rows, which outnumber it.
    let (history, state): (Vec<_>, Vec<_>) = all.into_iter().partition(|p| p.first().and_then(Value::as_str) == Some("history"));
    for _ in 0..r.random_range(1..=2usize) {
        let pool = if history.is_empty() || r.random_bool(0.85) { &state } else { &history };
        let path = &pool[r.random_range(0..pool.len())];
        let x = at(&mut v, path);
        let edges: [Value; 10] = [
            0.into(),
            1.into(),
            (-1).into(),
            2.into(),
            0.5.into(),
            (-0.25).into(),
            1e12.into(),
            1e308.into(),
            u64::MAX.into(),
            1_000_000_000_000u64.into(),
        ];
        *x = match x {
            Value::Array(a) => {
                let mut a = a.clone();
                match r.random_range(0..4) {
                    0 => a.clear(),
                    1 => a.truncate(a.len() / 2),
                    2 if !a.is_empty() => a.push(a[0].clone()),
                    _ => a.push(edges[r.random_range(0..edges.len())].clone()),
                }
                Value::Array(a)
            }
            Value::String(_) => Value::String(["", "x", "wins / visits", "1e999", "Es"][r.random_range(0..5)].to_string()),
            _ if r.random_bool(0.1) => Value::Null,
            _ => edges[r.random_range(0..edges.len())].clone(),
        };
    }
    v
}

/// A small fuzz: checkpoints of real runs mutated and resumed, never a panic, within time.
#[test]
fn mutated_checkpoints_never_panic() {
    let t0 = Instant::now();
    let mut r = rng::stream(54, 6, 0, 0);
    let mut tried = 0;
    let (d1, text, ck_path) = balance::setup("fuzz-balance", "cma");
    let ck: Value = serde_json::from_str(&std::fs::read_to_string(&ck_path).unwrap()).unwrap();
    for _ in 0..40 {
        std::fs::write(&ck_path, serde_json::to_string(&mutate(&ck, &mut r)).unwrap()).unwrap();
        let e = balance::resume(&text);
        assert!(e.err().as_deref() != Some("PANIC"), "balance: a mutated checkpoint panicked");
        tried += 1;
    }
    let (d2, text, ck_path) = generate::setup("fuzz-generate", "cma-me", 3);
    let ck: Value = serde_json::from_str(&std::fs::read_to_string(&ck_path).unwrap()).unwrap();
    for _ in 0..25 {
        std::fs::write(&ck_path, serde_json::to_string(&mutate(&ck, &mut r)).unwrap()).unwrap();
        let e = generate::resume(&text);
        assert!(e.err().as_deref() != Some("PANIC"), "generate: a mutated checkpoint panicked");
        tried += 1;
    }
    let d3 = tmp("fuzz-personas");
    personas::run(&d3, false, 1).unwrap();
    let ck_path = d3.join("tiny/seed-3/MaxS/checkpoint.json");
    let ck: Value = serde_json::from_str(&std::fs::read_to_string(&ck_path).unwrap()).unwrap();
    for _ in 0..15 {
        std::fs::write(&ck_path, serde_json::to_string(&mutate(&ck, &mut r)).unwrap()).unwrap();
        let e = personas::run(&d3, true, 1);
        assert!(e.err().as_deref() != Some("PANIC"), "personas: a mutated checkpoint panicked");
        tried += 1;
    }
    assert_eq!(tried, 80);
    assert!(t0.elapsed() < Duration::from_secs(60), "{:?}", t0.elapsed());
    for d in [d1, d2, d3] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// A project of its own in a temporary folder: the hex arena and its map, a config beside them.
fn project(tag: &str) -> PathBuf {
    let p = tmp(tag);
    std::fs::create_dir_all(p.join("games/maps")).unwrap();
    std::fs::create_dir_all(p.join("configs")).unwrap();
    std::fs::copy(root().join("games/hex_arena.wgdl"), p.join("games/hex_arena.wgdl")).unwrap();
    std::fs::copy(root().join("games/maps/arena5.hexmap"), p.join("games/maps/arena5.hexmap")).unwrap();
    std::fs::write(p.join("configs/b.toml"), balance_config("../games/hex_arena.wgdl", "outputs", "es")).unwrap();
    std::fs::create_dir_all(p.join("elsewhere")).unwrap();
    p
}

/// Outputs used to name their game from the working folder (`configs/../games/…`): `replay` and
/// `verify` failed from any other folder.
#[test]
fn replay_and_verify_work_from_another_working_folder() {
    let p = project("portable");
    let limit = Duration::from_secs(60);
    let o = cli_in(&p, &["balance", "configs/b.toml", "--iterations", "2", "-q"], limit);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = p.join("outputs/t/es-seed-3");
    let replay = std::fs::read_dir(run.join("replays")).unwrap().next().unwrap().unwrap().path();
    let elsewhere = p.join("elsewhere");
    let o = cli_in(&elsewhere, &["replay", replay.to_str().unwrap()], limit);
    assert!(o.status.success(), "replay: {}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("end:"));
    let enc = run.join("best_encounter.toml");
    let o = cli_in(&elsewhere, &["verify", enc.to_str().unwrap(), "--games", "2", "-q"], limit);
    assert!(o.status.success(), "verify: {}", String::from_utf8_lossy(&o.stderr));
    // The game is named absolutely.
    let text = std::fs::read_to_string(&enc).unwrap();
    let game = p.join("games/hex_arena.wgdl").canonicalize().unwrap();
    assert!(text.contains(&format!("game = \"{}\"", game.display())), "{text}");
    // An older replay, its game named from the folder the run started in, is found from the
    // replay's folder and above.
    let old = run.join("replays/old.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&replay).unwrap()).unwrap();
    v["game"] = "configs/../games/hex_arena.wgdl".into();
    std::fs::write(&old, serde_json::to_string(&v).unwrap()).unwrap();
    let o = cli_in(&elsewhere, &["replay", old.to_str().unwrap()], limit);
    assert!(o.status.success(), "old replay: {}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(p);
}

/// A run folder moved (and resumed from another working folder) is the same run; a changed
/// config is refused with the line that differs, not "another configuration" alone.
#[test]
fn a_moved_run_folder_resumes_and_a_changed_config_names_the_difference() {
    let p = project("moved");
    let limit = Duration::from_secs(60);
    let o = cli_in(&p, &["balance", "configs/b.toml", "--iterations", "1", "--out", "first", "-q"], limit);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::rename(p.join("first"), p.join("elsewhere/moved")).unwrap();
    // From the project's parent, the config named from there, the folder moved.
    let parent = p.parent().unwrap();
    let name = p.file_name().unwrap().to_str().unwrap();
    let cfg = format!("{name}/configs/b.toml");
    let out = format!("{name}/elsewhere/moved");
    let o = cli_in(parent, &["balance", &cfg, "--resume", "--iterations", "1", "--out", &out, "-q"], limit);
    assert!(o.status.success(), "moved: {}", String::from_utf8_lossy(&o.stderr));
    let history = std::fs::read_to_string(p.join("elsewhere/moved/t/es-seed-3/history.csv")).unwrap();
    assert_eq!(history.lines().count(), 3, "two iterations, one before the move and one after");
    // Another config: the message quotes the line.
    let text = std::fs::read_to_string(p.join("configs/b.toml")).unwrap().replace("confirm_games = 3", "confirm_games = 4");
    std::fs::write(p.join("configs/b.toml"), text).unwrap();
    let o = cli_in(&p, &["balance", "configs/b.toml", "--resume", "--out", "elsewhere/moved", "-q"], limit);
    no_crash(&o, "changed config");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("`confirm_games = 3` where this run has `confirm_games = 4`"), "{err}");
    // Another game: the message says the game changed.
    let text = std::fs::read_to_string(p.join("configs/b.toml")).unwrap().replace("confirm_games = 4", "confirm_games = 3");
    std::fs::write(p.join("configs/b.toml"), text).unwrap();
    let mut game = std::fs::read_to_string(p.join("games/hex_arena.wgdl")).unwrap();
    game.push_str("\n// changed\n");
    std::fs::write(p.join("games/hex_arena.wgdl"), game).unwrap();
    let o = cli_in(&p, &["balance", "configs/b.toml", "--resume", "--out", "elsewhere/moved", "-q"], limit);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("the game's text or map has changed"), "{err}");
    let _ = std::fs::remove_dir_all(p);
}

/// A lock left by a killed run whose process id now belongs to another process (here a
/// `sleep`, alive, started after the lock was written) is stale: taken over. The same process
/// with its own start time holds the folder.
#[test]
fn a_lock_whose_pid_was_reused_is_taken_over() {
    use playforge::report::run_dir::{Holder, LOCK, MARKER, RunDir, start_time};
    let d = tmp("lock");
    std::fs::write(d.join(MARKER), "").unwrap();
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = sleeper.id();
    let Some(start) = start_time(pid) else {
        // No /proc: the pid alone is all there is, and it is alive.
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        return;
    };
    let me = Holder::me();
    // Its own start time: in use.
    std::fs::write(d.join(LOCK), Holder { pid, start: Some(start), boot: me.boot.clone() }.line()).unwrap();
    let e = RunDir::open(&d).unwrap_err().to_string();
    assert!(e.contains(&format!("process {pid}")), "{e}");
    // Another start time: the process that wrote it is gone, its pid given to the sleep.
    std::fs::write(d.join(LOCK), Holder { pid, start: Some(start.saturating_sub(1)), boot: me.boot.clone() }.line()).unwrap();
    let held = RunDir::open(&d).unwrap_or_else(|e| panic!("a stale lock was not taken over: {e}"));
    assert_eq!(Holder::parse(&std::fs::read_to_string(d.join(LOCK)).unwrap()), Some(me.clone()));
    drop(held);
    assert!(!d.join(LOCK).exists(), "the lock goes with the run");
    // Another boot: stale whatever the start time.
    std::fs::write(d.join(LOCK), Holder { pid, start: Some(start), boot: Some("another-boot".into()) }.line()).unwrap();
    assert!(RunDir::open(&d).is_ok() || me.boot.is_none());
    // An older version's lock, the pid alone, of a live process: in use.
    std::fs::write(d.join(LOCK), format!("{pid}\n")).unwrap();
    assert!(RunDir::open(&d).is_err());
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let _ = std::fs::remove_dir_all(d);
}
