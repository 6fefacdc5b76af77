//! The fuzzing campaign: structure-aware mutations of every shipped game (`games/**/*.wgdl`,
//! `games/gdl/*.kif`) and config (`configs/**/*.toml`), each compiled or loaded as the CLI
//! would (games played for up to 60 random moves; configs read and their game compiled), with
//! three things asserted: no panic, no input running past [`HANG_SECONDS`], memory (resident
//! set) below [`MAX_RSS_MB`].
//!
//! `fuzz_campaign` runs for `FUZZ_SECONDS` (default 20 s, what CI spends), starting at seed
//! `FUZZ_FIRST_SEED` (default 0), and prints how many inputs ran, how long, and how many gave an
//! error or loaded fine. An input that panics, hangs or blows the memory bound is written to
//! `tests/data/fuzz/` (the crash files); `fuzz_regressions` replays every file there on every
//! test run. A longer campaign: `FUZZ_SECONDS=1800 cargo test --release fuzz_campaign -- --ignored
//! --nocapture` (the default 20 s one is not ignored).
//!
//! Mutations are structure-aware: whole lines are duplicated, dropped or moved; words are
//! swapped for keywords of the file's own language (WGDL declarations, GDL operators, TOML
//! keys and values) or for edge values (`0`, `-1`, huge numbers, empty strings); characters are
//! changed, including to NUL, `\u{feff}` and non-ASCII.
//!
//! With the cargo feature `compiled`, `fuzz_campaign_compiled_tier` runs the campaign over the
//! WGDL games alone against the compiled tier: every mutated game that compiles is played
//! through both tiers in lockstep (`tests/tiers.rs`), so a mutation on which the tiers part —
//! in a legal list, a status, a state or an error message — is kept like a panic.

use playforge::rng;
use rand::RngExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One input running longer than this is a hang.
const HANG_SECONDS: u64 = 30;
/// The resident set may not pass this.
const MAX_RSS_MB: u64 = 3072;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What an input is, so that it is read the way the CLI reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Wgdl,
    Gdl,
    Toml,
}

impl Kind {
    fn of(path: &Path) -> Option<Kind> {
        match path.extension()?.to_str()? {
            "wgdl" => Some(Kind::Wgdl),
            "kif" => Some(Kind::Gdl),
            "toml" => Some(Kind::Toml),
            _ => None,
        }
    }
    fn words(self) -> &'static [&'static str] {
        match self {
            Kind::Wgdl => &[
                "class",
                "object",
                "attribute",
                "action",
                "condition",
                "consequence",
                "hasConsequence",
                "initial",
                "goal",
                "game",
                "actionGroup",
                "isInGroup",
                "duration",
                "session",
                "limit",
                "players",
                "turn",
                "turnOrder",
                "winner",
                "draw",
                "hexmap",
                "grid",
                "chance",
                "parameter",
                "policy",
                "choose",
                "long",
                "double",
                "boolean",
                "object:",
                "null",
                "this",
                "game.actor",
                "forEveryGOD",
                "forEveryInstance",
                "forEveryNumber",
                "create:",
                "delete",
                "direct",
                "timed",
                "conditional",
                "endTurn",
                "&&",
                "||",
                "==",
                "=",
                "(",
                ")",
                "[",
                "]",
                ".",
                ",",
                "-",
                "/",
                "*",
            ],
            Kind::Gdl => &[
                "(", ")", "<=", "role", "init", "true", "next", "legal", "does", "goal", "terminal", "distinct", "not", "or", "base",
                "input", "?x", "?y", ";", "100", "0",
            ],
            Kind::Toml => &[
                "[",
                "]",
                "[[",
                "]]",
                "=",
                "\"",
                "name",
                "game",
                "seed",
                "games",
                "iterations",
                "generations",
                "replays",
                "tree_parallel",
                "budget_ms",
                "subgoals",
                "max_evaluations",
                "optimizer",
                "true",
                "false",
                "{",
                "}",
                ",",
                "\"../x\"",
                "\"\"",
            ],
        }
    }
}

const EDGE: &[&str] = &[
    "0",
    "-1",
    "1",
    "99999999999999999999",
    "-9223372036854775808",
    "9223372036854775807",
    "1e308",
    "0.0000001",
    "NaN",
    "\"\"",
    "\u{0}",
    "\u{feff}",
    "é",
    "→",
];
const CHARS: &[char] =
    &['a', '0', '9', '.', ':', '=', '<', '!', '-', '+', '*', '/', '(', ')', '[', ']', '"', ' ', '\n', '\t', 'é', '\u{0}'];

fn line_bounds(s: &[char], i: usize) -> (usize, usize) {
    let lo = s[..i].iter().rposition(|&c| c == '\n').map_or(0, |p| p + 1);
    let hi = s[i..].iter().position(|&c| c == '\n').map_or(s.len(), |p| i + p + 1);
    (lo, hi)
}

/// Applies 1–4 edits to `src`.
fn mutate(src: &str, kind: Kind, r: &mut rng::Rng) -> String {
    let mut s: Vec<char> = src.chars().collect();
    for _ in 0..r.random_range(1..=4) {
        let i = r.random_range(0..s.len().max(1)).min(s.len());
        match r.random_range(0..9) {
            0 if i < s.len() => {
                s.remove(i);
            }
            1 if i < s.len() => s[i] = CHARS[r.random_range(0..CHARS.len())],
            2 => {
                // A word replaced by a keyword or an edge value.
                let lo = s[..i].iter().rposition(|c| c.is_whitespace()).map_or(0, |p| p + 1);
                let hi = s[i..].iter().position(|c| c.is_whitespace()).map_or(s.len(), |p| i + p);
                let w = if r.random_bool(0.5) {
                    kind.words()[r.random_range(0..kind.words().len())]
                } else {
                    EDGE[r.random_range(0..EDGE.len())]
                };
                s.splice(lo..hi, w.chars());
            }
            3 => {
                let (lo, hi) = line_bounds(&s, i);
                let line: Vec<char> = s[lo..hi].to_vec();
                s.splice(hi..hi, line);
            }
            4 => {
                let (lo, hi) = line_bounds(&s, i);
                s.drain(lo..hi);
            }
            5 => {
                let (lo, hi) = line_bounds(&s, i);
                let line: Vec<char> = s.drain(lo..hi).collect();
                let j = r.random_range(0..=s.len());
                let (lo2, _) = line_bounds(&s, j);
                s.splice(lo2..lo2, line);
            }
            6 => {
                // A number made extreme.
                if let Some(p) = (i..s.len()).find(|&k| s[k].is_ascii_digit()) {
                    let end = (p..s.len()).find(|&k| !s[k].is_ascii_digit()).unwrap_or(s.len());
                    let w = EDGE[r.random_range(0..6)];
                    s.splice(p..end, w.chars());
                }
            }
            7 => {
                // Truncated.
                s.truncate(i);
            }
            _ => {
                let w = kind.words()[r.random_range(0..kind.words().len())];
                s.splice(i..i, format!(" {w} ").chars());
            }
        }
    }
    s.into_iter().collect()
}

/// Every shipped game and config, as (path relative to the root, text).
fn corpus() -> Vec<(PathBuf, Kind, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("games"), &mut files);
    walk(&root().join("configs"), &mut files);
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let kind = Kind::of(&p)?;
            let text = std::fs::read_to_string(&p).ok()?;
            Some((p.strip_prefix(root()).expect("under the root").to_path_buf(), kind, text))
        })
        .collect()
}

/// A scratch tree mirroring the repository (`games` linked), where mutated configs are written
/// beside where the originals live, so that their relative paths resolve the same way.
fn scratch() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!("playforge-fuzz-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir_all(dir.join("configs/experiments")).expect("scratch folder");
    let link = dir.join("games");
    if !link.exists() {
        std::os::unix::fs::symlink(root().join("games"), &link).expect("link games");
    }
    dir
}

/// Reads one input as the CLI would. `Ok(true)`: it loaded (and played) fine; `Ok(false)`: it
/// was refused with an error (checked to name a place when it is a game).
/// `tiers`: also play a game that compiles through both tiers in lockstep (feature `compiled`).
fn run_input(rel: &Path, kind: Kind, text: &str, seed: u64, scratch: &Path, tiers: bool) -> bool {
    match kind {
        Kind::Wgdl => {
            let opts = playforge::wgdl::CompileOptions { base_dir: root().join(rel).parent().map(Path::to_path_buf), ..Default::default() };
            let name = rel.display().to_string();
            let c = match playforge::wgdl::compile_str_with(&name, text, &opts) {
                Ok(c) => c,
                Err(d) => {
                    assert!(d.has_errors(), "a failed compile must report an error");
                    let out = d.to_string();
                    assert!(out.contains(&format!("--> {name}:")), "no location:\n{out}");
                    return false;
                }
            };
            #[cfg(feature = "compiled")]
            if tiers {
                use playforge::wgdl::Tier;
                let (a, b) = (c.program.with_tier(Tier::Interpreted), c.program.with_tier(Tier::Compiled));
                super::tiers::lockstep::lockstep(&a, &b, 2, 60, &format!("mutated {name} (seed {seed})"));
            }
            #[cfg(not(feature = "compiled"))]
            let _ = tiers;
            super::util::random_moves(&c.program, seed, 60).is_ok()
        }
        Kind::Gdl => {
            use playforge::game::Game;
            let g = match playforge::gdl::compile_any(&rel.display().to_string(), text, Default::default()) {
                Ok(g) => g,
                Err(_) => return false,
            };
            let mut r = rng::stream(seed, 1, 0, 0);
            let Ok(mut st) = g.initial() else { return false };
            let mut legal = Vec::new();
            for _ in 0..60 {
                if g.legal(&st, &mut legal).is_err() || legal.is_empty() {
                    break;
                }
                let m = legal[r.random_range(0..legal.len())];
                if g.apply(&mut st, m).is_err() {
                    return false;
                }
            }
            true
        }
        Kind::Toml => {
            let path = scratch.join(rel);
            std::fs::write(&path, text).expect("write the mutated config");
            load_config(&path, text).is_ok()
        }
    }
}

/// Loads a config as its command does before running (its game compiled, its names checked).
fn load_config(path: &Path, text: &str) -> anyhow::Result<()> {
    let table: toml::Table = toml::from_str(text)?;
    if table.contains_key("balance") {
        let cfg = playforge::balance::config::BalanceConfig::parse(path, text)?;
        playforge::balance::dna::Codec::new(&cfg, path, text)?;
    } else if table.contains_key("generate") {
        let cfg = playforge::generate::config::GenerateConfig::parse(path, text)?;
        playforge::generate::jobs::Setup::new(&cfg, path, text)?;
    } else if table.contains_key("personas") {
        let cfg = playforge::persona::config::PersonaConfig::parse(path, text)?;
        playforge::persona::run::Setup::new(cfg, text.to_string(), path, Path::new("/nonexistent"))?;
    } else if table.contains_key("playtest") {
        let cfg = playforge::playtest::config::PlaytestConfig::parse(path, text)?;
        playforge::playtest::run::Setup::new(cfg, text, path, Path::new("/nonexistent"))?;
    } else if table.contains_key("tournament") {
        playforge::experiment::tournament::TournamentConfig::load(path)?;
    } else if table.contains_key("compare") {
        // The optimizer comparison runs as it loads; its TOML is read here.
    } else if table.contains_key("conditions") {
        playforge::experiment::repeat::load(path).map_err(anyhow::Error::msg)?;
    } else {
        playforge::experiment::config::PlayConfig::load(path)?;
    }
    Ok(())
}

/// The resident set size in MB (Linux).
fn rss_mb() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|x| x.parse().ok()).unwrap_or(0);
    pages * 4096 / (1 << 20)
}

/// Where crash inputs are kept.
fn crash_dir() -> PathBuf {
    root().join("tests/data/fuzz")
}

/// Keeps a crash input as `tests/data/fuzz/<why>-<seed>-<original name>`.
fn keep(why: &str, seed: u64, rel: &Path, text: &str) -> PathBuf {
    let name = rel.to_string_lossy().replace('/', "__");
    let p = crash_dir().join(format!("{why}-{seed}-{name}"));
    std::fs::create_dir_all(crash_dir()).expect("crash folder");
    std::fs::write(&p, text).expect("write the crash input");
    p
}

/// Runs mutated inputs for `secs` seconds from seed `first`; returns (inputs, errors, fine).
/// `tiers`: WGDL games alone, each that compiles also played through both tiers in lockstep.
fn campaign(secs: f64, first: u64, tiers: bool) -> (u64, u64, u64) {
    let mut corpus = corpus();
    assert!(corpus.len() >= 20, "the corpus holds the shipped games and configs ({} files)", corpus.len());
    if tiers {
        corpus.retain(|(_, kind, _)| *kind == Kind::Wgdl);
    }
    let scratch = scratch();
    // The watchdog: an input running past HANG_SECONDS is kept and ends the process.
    let current: Arc<Mutex<(u64, PathBuf, String)>> = Arc::new(Mutex::new((0, PathBuf::new(), String::new())));
    let started = Arc::new(AtomicU64::new(u64::MAX));
    let stop = Arc::new(AtomicBool::new(false));
    let t0 = Instant::now();
    let dog = {
        let (current, started, stop) = (current.clone(), started.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(250));
                let s = started.load(Ordering::Relaxed);
                if s != u64::MAX && t0.elapsed().as_secs().saturating_sub(s) > HANG_SECONDS {
                    let c = current.lock().unwrap_or_else(|e| e.into_inner());
                    let p = keep("hang", c.0, &c.1, &c.2);
                    eprintln!("fuzz: input seed {} ran past {HANG_SECONDS} s; kept as {}", c.0, p.display());
                    std::process::exit(3);
                }
            }
        })
    };
    let (mut n, mut errors, mut fine, mut panics) = (0u64, 0u64, 0u64, 0u64);
    let mut seed = first;
    while t0.elapsed().as_secs_f64() < secs {
        let (rel, kind, original) = &corpus[(seed % corpus.len() as u64) as usize];
        let mut r = rng::stream(seed, 11, 0, 0);
        let mut text = original.clone();
        for _ in 0..r.random_range(1..=3) {
            text = mutate(&text, *kind, &mut r);
        }
        *current.lock().unwrap_or_else(|e| e.into_inner()) = (seed, rel.clone(), text.clone());
        started.store(t0.elapsed().as_secs(), Ordering::Relaxed);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_input(rel, *kind, &text, seed, &scratch, tiers)));
        started.store(u64::MAX, Ordering::Relaxed);
        match outcome {
            Ok(true) => fine += 1,
            Ok(false) => errors += 1,
            Err(_) => {
                panics += 1;
                let p = keep("panic", seed, rel, &text);
                eprintln!("fuzz: input seed {seed} panicked; kept as {}", p.display());
            }
        }
        let rss = rss_mb();
        if rss > MAX_RSS_MB {
            let p = keep("memory", seed, rel, &text);
            panic!("fuzz: {rss} MB resident after input seed {seed} (bound {MAX_RSS_MB} MB); kept as {}", p.display());
        }
        n += 1;
        seed += 1;
    }
    stop.store(true, Ordering::Relaxed);
    dog.join().expect("watchdog");
    let _ = std::fs::remove_dir_all(&scratch);
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "fuzz campaign: {n} inputs (seeds {first}..{seed}) from {} files in {secs:.0} s ({:.0}/s): {errors} refused with an error, {fine} loaded fine, {panics} panics, 0 hangs, peak resident {} MB",
        corpus.len(),
        n as f64 / secs,
        rss_mb()
    );
    assert_eq!(panics, 0, "panicking inputs were kept in tests/data/fuzz/");
    (n, errors, fine)
}

#[test]
fn fuzz_campaign() {
    let secs: f64 = std::env::var("FUZZ_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(20.0);
    let first: u64 = std::env::var("FUZZ_FIRST_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    let (n, errors, fine) = campaign(secs, first, false);
    // The mutations reach both sides: refused inputs and inputs that still load and play.
    assert!(n > 100 && errors > n / 10 && fine > n / 20, "{n} inputs: {errors} errors, {fine} fine");
}

/// The campaign against the compiled tier: mutated WGDL games played through both tiers in
/// lockstep (`FUZZ_SECONDS`, `FUZZ_FIRST_SEED` as for the campaign).
#[cfg(feature = "compiled")]
#[test]
fn fuzz_campaign_compiled_tier() {
    playforge::wgdl::set_compiled_min_nodes(1);
    let secs: f64 = std::env::var("FUZZ_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(20.0);
    let first: u64 = std::env::var("FUZZ_FIRST_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    let (n, errors, fine) = campaign(secs, first, true);
    assert!(n > 50 && errors > 0 && fine > n / 20, "{n} inputs: {errors} errors, {fine} fine");
}

/// Every kept crash input loads without a panic now.
#[test]
fn fuzz_regressions() {
    let Ok(rd) = std::fs::read_dir(crash_dir()) else { return };
    let scratch = scratch();
    for e in rd.flatten() {
        let p = e.path();
        let name = p.file_name().expect("a file").to_string_lossy().into_owned();
        if name == "README.md" {
            continue;
        }
        // `<why>-<seed>-<original path with / as __>`
        let original = name.splitn(3, '-').nth(2).expect("a crash file name").replace("__", "/");
        let rel = PathBuf::from(&original);
        let kind = Kind::of(&rel).expect("a known kind");
        let text = std::fs::read_to_string(&p).expect("a crash input");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_input(&rel, kind, &text, 0, &scratch, false)));
        assert!(r.is_ok(), "{} panics again", p.display());
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
