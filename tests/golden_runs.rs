//! Golden run folders: one small run of every search command, through the CLI binary, whose
//! whole run folder and standard output are compared file for file with the copies kept under
//! `tests/data/runs/<case>/` (`stdout.txt` and `out/…`). They pin what the drivers write — the
//! histories, checkpoints, best contents, charts, reports, summaries — so that a change to the
//! driver layer that changes a byte of what a designer reads fails here, naming the file and the
//! first line that differs.
//!
//! Only what a run cannot reproduce is left out or masked: the timing files (`timing.csv`,
//! `*.seconds`), the executor's line (`executor.txt`: the machine's threads), lock and marker
//! files, the wall clock inside checkpoints and reports, and the paths of this checkout and of
//! the scratch folder (written as `<repo>` and `<run>`). Budgets are cut by the commands' own
//! flags, or by an edited copy of the shipped config where no flag reaches (each edit says why).
//! A file over 48 KB or not text (reports with their replays, PNG charts) is kept as its hash
//! and size in `hashes.txt`; the run's own copy stays in `target/golden-runs/<case>/` to look at.
//!
//! Refresh with `UPDATE_GOLDEN=1 cargo test --release --test tests golden_runs` — only for a
//! change that is meant to change outputs, and say so in the commit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// An edit of a config's copy (the whole file as a table).
type Edit = fn(&mut toml::Table);

/// One golden case: its steps run one after another in one scratch folder (`{cfg}` is the
/// config the case runs: the shipped file, or its edited copy).
struct Case {
    name: &'static str,
    config: &'static str,
    edit: Option<Edit>,
    steps: &'static [&'static [&'static str]],
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The section `name` of `t`, created if missing.
fn section<'a>(t: &'a mut toml::Table, name: &str) -> &'a mut toml::Table {
    t.entry(name).or_insert_with(|| toml::Value::Table(toml::Table::new())).as_table_mut().expect("a TOML table")
}

/// A persona config cut to seconds: 10 MCTS iterations a move, 4 games per generation, 6
/// held-out games, a population of 8 (no flag reaches these).
fn personas_small(t: &mut toml::Table) {
    let p = section(t, "personas");
    p.insert("iterations".into(), 10.into());
    p.insert("games".into(), 4.into());
    p.insert("held_out".into(), 6.into());
    let gp = section(t, "gp");
    gp.insert("population".into(), 8.into());
    gp.insert("elites".into(), 2.into());
    gp.insert("mutants".into(), 3.into());
}

/// A generate config cut to seconds: 2 games per candidate, 4 per confirmation, each player's
/// MCTS iterations per move cut 25-fold (no flag reaches these).
fn generate_small(t: &mut toml::Table) {
    let g = section(t, "generate");
    g.insert("games".into(), 2.into());
    g.insert("confirm_games".into(), 4.into());
    if let Some(players) = t.get_mut("player").and_then(|v| v.as_array_mut()) {
        for p in players.iter_mut().filter_map(|p| p.as_table_mut()) {
            if let Some(n) = p.get("iterations").and_then(|v| v.as_integer()) {
                p.insert("iterations".into(), ((n / 25).max(2)).into());
            }
        }
    }
}

/// The first confirmation: `confirm_games` fresh games for every candidate that would count.
fn fixed_confirmation(t: &mut toml::Table) {
    section(t, "generate").insert("confirm".into(), "fixed".into());
}

/// A search cut to an iteration budget: a wall-clock budget (`budget_ms = B`, which no run
/// reproduces) becomes `iterations = B / 8`, an iteration budget is cut a hundredfold.
fn iterations_only(search: &mut toml::Table) {
    if let Some(ms) = search.remove("budget_ms") {
        search.insert("iterations".into(), (ms.as_integer().expect("budget_ms is an integer") / 8).max(1).into());
    } else if let Some(n) = search.get("iterations").and_then(|v| v.as_integer()) {
        search.insert("iterations".into(), ((n / 100).max(1)).into());
    }
}

/// An experiment cut to seconds: 2 seeds per condition (no flag reaches it), the conditions'
/// searches and its base config's (written beside the copy by `run_case`) by `iterations_only`.
fn experiment_small(t: &mut toml::Table) {
    section(t, "experiment").insert("seeds".into(), 2.into());
    if let Some(cs) = t.get_mut("condition").and_then(|v| v.as_array_mut()) {
        for c in cs.iter_mut().filter_map(|c| c.as_table_mut()) {
            if let Some(s) = c.get_mut("search").and_then(|s| s.as_table_mut()) {
                iterations_only(s);
            }
        }
    }
}

/// Every driver's small run (ARCHITECTURE.md, "Layers": the five drivers and the grids).
const CASES: &[Case] = &[
    Case {
        name: "balance_es",
        config: "configs/hexmage_balance.toml",
        edit: None,
        steps: &[&["balance", "{cfg}", "--out", "out", "--optimizer", "es", "--iterations", "2"]],
    },
    Case {
        name: "balance_sa",
        config: "configs/hexmage_balance.toml",
        edit: None,
        steps: &[&["balance", "{cfg}", "--out", "out", "--optimizer", "sa", "--iterations", "3"]],
    },
    // The shipped optimizer, its encounter verified on fresh seeds, and a landscape.
    Case {
        name: "balance_cma",
        config: "configs/hexmage_balance.toml",
        edit: None,
        steps: &[
            &["balance", "{cfg}", "--out", "out", "--iterations", "3"],
            &["verify", "out/hexmage_balance/cma-seed-1/best_encounter.toml", "--games", "8"],
            &["landscape", "configs/landscape_hexmage.toml", "--out", "out", "--samples", "3", "--neighbours", "2"],
        ],
    },
    Case {
        name: "generate_cma",
        config: "configs/generate_match3.toml",
        edit: Some(generate_small),
        steps: &[&["generate", "{cfg}", "--out", "out", "--iterations", "2"]],
    },
    // The map, its elites verified on fresh seeds: confirmed the first way (fixed), then as the
    // shipped config asks (sequentially).
    Case {
        name: "generate_cma_me",
        config: "configs/generate_hex_map.toml",
        edit: Some(fixed_confirmation),
        steps: &[
            &["generate", "{cfg}", "--out", "out", "--evaluations", "350"],
            &["verify", "out/generate_hex_map/cma-me-seed-1", "--games", "4"],
        ],
    },
    Case {
        name: "generate_sequential",
        config: "configs/generate_hex_map.toml",
        edit: None,
        steps: &[
            &["generate", "{cfg}", "--out", "out", "--evaluations", "1500"],
            &["verify", "out/generate_hex_map/cma-me-seed-1", "--games", "200"],
        ],
    },
    Case {
        name: "personas",
        config: "configs/personas_quick.toml",
        edit: Some(personas_small),
        steps: &[&["personas", "{cfg}", "--out", "out", "--generations", "1", "--only", "MaxS,MinM"]],
    },
    Case {
        name: "playtest",
        config: "configs/playtest_stacker.toml",
        edit: None,
        steps: &[&["playtest", "{cfg}", "--out", "out", "--replicates", "2", "--rollouts", "200"]],
    },
    // Self-play on a two-player board game.
    Case {
        name: "playtest_selfplay",
        config: "configs/board/playtest_othello.toml",
        edit: None,
        steps: &[&["playtest", "{cfg}", "--out", "out", "--replicates", "2", "--rollouts", "10"]],
    },
    Case {
        name: "experiment",
        config: "configs/experiments/e4_ucb.toml",
        edit: Some(experiment_small),
        steps: &[&["experiment", "{cfg}", "--out", "out"]],
    },
    Case {
        name: "tournament",
        config: "configs/hex_tournament.toml",
        edit: None,
        steps: &[&["tournament", "{cfg}", "--out", "out", "--encounters", "2"]],
    },
];

/// Reads a config as a table with its relative paths (`game`, `base`, `out`'s are left) made
/// absolute, so that its copy in the scratch folder names the same files.
fn load_anchored(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut t: toml::Table = text.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dir = path.parent().expect("a config's folder");
    for (_, v) in t.iter_mut() {
        if let Some(s) = v.as_table_mut() {
            for key in ["game", "base"] {
                if let Some(p) = s.get(key).and_then(|p| p.as_str()).map(PathBuf::from)
                    && p.is_relative()
                {
                    s.insert(key.into(), toml::Value::String(dir.join(p).display().to_string()));
                }
            }
        }
    }
    t
}

/// Every file under `dir` by its path relative to `base`, as `normalize` leaves it; bookkeeping
/// files (`left_out`) are not listed.
fn tree(base: &Path, dir: &Path, masks: &[(String, &str)], out: &mut BTreeMap<String, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("a folder entry").path();
        let rel = p.strip_prefix(base).expect("under the base").to_string_lossy().replace('\\', "/");
        if p.is_dir() {
            tree(base, &p, masks, out);
        } else if !left_out(&rel) {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            out.insert(rel.clone(), normalize(&rel, &bytes, masks));
        }
    }
}

/// Files a run cannot reproduce: timings, the executor's line, locks, markers, temporary files.
fn left_out(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    matches!(name, "timing.csv" | "executor.txt" | ".lock" | ".playforge") || name.ends_with(".seconds") || name.contains(".tmp")
}

/// `bytes` with the wall clock and this machine's paths masked (text files only).
fn normalize(rel: &str, bytes: &[u8], masks: &[(String, &str)]) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(bytes) else { return bytes.to_vec() };
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let mut text = match name {
        "checkpoint.json" => mask_number_after(text, "\"elapsed_s\":"),
        "report.json" => mask_number_after(text, "\"seconds\":"),
        "report.html" => mask_number_after(text, "&quot;seconds&quot;:"),
        _ => text.to_string(),
    };
    for (from, to) in masks {
        text = text.replace(from.as_str(), to);
    }
    text.into_bytes()
}

/// Masks each number that follows `before` (spaces allowed between).
fn mask_number_after(text: &str, before: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(before) {
        out.push_str(&rest[..i + before.len()]);
        let tail = &rest[i + before.len()..];
        let spaces = tail.len() - tail.trim_start().len();
        let t = &tail[spaces..];
        let n = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')).len();
        out.push_str(&tail[..spaces]);
        if n > 0 {
            out.push('0');
        }
        rest = &t[n..];
    }
    out.push_str(rest);
    out
}

/// Runs the case in a fresh scratch folder: every file of its `out/` folder and the standard
/// outputs of its steps (as `stdout.txt`), normalized.
fn run_case(case: &Case) -> BTreeMap<String, Vec<u8>> {
    let scratch = root().join("target").join("golden-runs").join(case.name);
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch).expect("clear the scratch folder");
    }
    std::fs::create_dir_all(&scratch).expect("create the scratch folder");
    let config = match case.edit {
        None => root().join(case.config),
        Some(edit) => {
            let mut t = load_anchored(&root().join(case.config));
            edit(&mut t);
            if let Some(e) = t.get_mut("experiment").and_then(|e| e.as_table_mut())
                && let Some(base) = e.get("base").and_then(|b| b.as_str()).map(PathBuf::from)
            {
                let mut b = load_anchored(&base);
                iterations_only(section(&mut b, "search"));
                let to = scratch.join("base.toml");
                std::fs::write(&to, toml::to_string(&b).expect("a config serializes")).expect("write the base's copy");
                e.insert("base".into(), toml::Value::String(to.display().to_string()));
            }
            let to = scratch.join("config.toml");
            std::fs::write(&to, toml::to_string(&t).expect("a config serializes")).expect("write the config's copy");
            to
        }
    };
    let masks = vec![(scratch.display().to_string(), "<run>"), (root().display().to_string(), "<repo>")];
    let mut stdout = String::new();
    for step in case.steps {
        let args: Vec<String> = step
            .iter()
            .map(|a| match *a {
                "{cfg}" => config.display().to_string(),
                a if a.starts_with("configs/") => root().join(a).display().to_string(),
                a => a.to_string(),
            })
            .collect();
        let o = Command::new(env!("CARGO_BIN_EXE_playforge"))
            .args(&args)
            .arg("--quiet")
            .current_dir(&scratch)
            .output()
            .expect("start playforge");
        assert!(
            o.status.success(),
            "{}: `playforge {}` failed ({}):\n{}\n{}",
            case.name,
            step.join(" "),
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        stdout.push_str(&format!("$ playforge {} --quiet\n{}", step.join(" "), String::from_utf8_lossy(&o.stdout)));
    }
    let mut files = BTreeMap::new();
    tree(&scratch, &scratch.join("out"), &masks, &mut files);
    let stdout = normalize("stdout.txt", crate::util::mask_wall_clock(&stdout).as_bytes(), &masks);
    files.insert("stdout.txt".to_string(), stdout);
    keep_small(files)
}

/// The largest file kept as it is; a larger or binary one (reports with their replays, charts)
/// is kept as a line of `hashes.txt`: its FNV-1a hash, its size and its path.
const KEPT_AS_IS: usize = 48 * 1024;

/// `files` with every large or binary file replaced by its line in `hashes.txt`.
fn keep_small(files: BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    let mut kept = BTreeMap::new();
    let mut hashes = String::new();
    for (rel, bytes) in files {
        if bytes.len() <= KEPT_AS_IS && std::str::from_utf8(&bytes).is_ok() {
            kept.insert(rel, bytes);
        } else {
            let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
            hashes.push_str(&format!("{h:016x} {:>9} {rel}\n", bytes.len()));
        }
    }
    if !hashes.is_empty() {
        kept.insert("hashes.txt".to_string(), hashes.into_bytes());
    }
    kept
}

/// The kept copy of a case: every file under `tests/data/runs/<case>/`.
fn kept(case: &Case) -> BTreeMap<String, Vec<u8>> {
    let dir = root().join("tests/data/runs").join(case.name);
    let mut files = BTreeMap::new();
    if dir.is_dir() {
        tree(&dir, &dir, &[], &mut files);
    }
    files
}

/// The first line where `a` and `b` part, or the first differing byte of binary files.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    match (std::str::from_utf8(a), std::str::from_utf8(b)) {
        (Ok(x), Ok(y)) => {
            let (mut xs, mut ys) = (x.lines(), y.lines());
            let mut n = 0;
            loop {
                n += 1;
                match (xs.next(), ys.next()) {
                    (Some(l), Some(m)) if l == m => continue,
                    (l, m) => {
                        let cut = |s: Option<&str>| s.map_or("(end)".to_string(), |s| s.chars().take(200).collect());
                        return format!("line {n}:\n    kept: {}\n    now:  {}", cut(l), cut(m));
                    }
                }
            }
        }
        _ => {
            let at = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
            format!("binary, first difference at byte {at} (sizes {} and {})", a.len(), b.len())
        }
    }
}

/// Runs the case and compares it with its kept copy (or, under `UPDATE_GOLDEN=1`, writes the
/// copy anew).
fn check(name: &str) {
    let _cores = crate::util::all_cores();
    let case = CASES.iter().find(|c| c.name == name).expect("a case of CASES");
    let now = run_case(case);
    let dir = root().join("tests/data/runs").join(case.name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        if dir.exists() {
            std::fs::remove_dir_all(&dir).expect("clear the kept copy");
        }
        for (rel, bytes) in &now {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().expect("a parent")).expect("create the kept copy's folders");
            std::fs::write(&p, bytes).expect("write the kept copy");
        }
        return;
    }
    let kept = kept(case);
    assert!(!kept.is_empty(), "{}: no kept copy under tests/data/runs/{0}; write it with UPDATE_GOLDEN=1", case.name);
    let mut problems = Vec::new();
    for rel in kept.keys().filter(|r| !now.contains_key(*r)) {
        problems.push(format!("{rel}: kept, but the run no longer writes it"));
    }
    for rel in now.keys().filter(|r| !kept.contains_key(*r)) {
        problems.push(format!("{rel}: written by the run, not kept"));
    }
    for (rel, bytes) in &now {
        if let Some(k) = kept.get(rel)
            && k != bytes
        {
            problems.push(format!("{rel}: differs at {}", first_difference(k, bytes)));
        }
    }
    assert!(
        problems.is_empty(),
        "{}: the run folder differs from tests/data/runs/{0} (scratch copy: target/golden-runs/{0}):\n{}",
        case.name,
        problems.join("\n")
    );
}

#[test]
fn every_case_has_a_test() {
    // The tests below name the cases; a case without one would never run.
    let tested = [
        "balance_es",
        "balance_sa",
        "balance_cma",
        "generate_cma",
        "generate_cma_me",
        "generate_sequential",
        "personas",
        "playtest",
        "playtest_selfplay",
        "experiment",
        "tournament",
    ];
    let names: Vec<&str> = CASES.iter().map(|c| c.name).collect();
    assert_eq!(names, tested);
}

#[test]
fn balance_es() {
    check("balance_es");
}

#[test]
fn balance_sa() {
    check("balance_sa");
}

#[test]
fn balance_cma() {
    check("balance_cma");
}

#[test]
fn generate_cma() {
    check("generate_cma");
}

#[test]
fn generate_cma_me() {
    check("generate_cma_me");
}

#[test]
fn generate_sequential() {
    check("generate_sequential");
}

#[test]
fn personas() {
    check("personas");
}

#[test]
fn playtest() {
    check("playtest");
}

#[test]
fn playtest_selfplay() {
    check("playtest_selfplay");
}

#[test]
fn experiment() {
    check("experiment");
}

#[test]
fn tournament() {
    check("tournament");
}
