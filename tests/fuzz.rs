//! The fuzzing campaign: structure-aware mutations of every shipped game (`games/**/*.wgdl`,
//! `games/gdl/*.kif`) and config (`configs/**/*.toml`), each compiled or loaded as the CLI
//! would (games played for up to 60 random moves; configs read and their game compiled), with
//! three things asserted: no panic, no input running past [`HANG_SECONDS`], memory (resident
//! set) below [`MAX_RSS_MB`]. Beside them, in the same campaign and budget: selection formulas
//! (the shipped named ones, those configs write, GP trees, each as a `best_formula.txt`), the
//! measure expressions of the generate configs (parsed alone and written back into their
//! config), and replays (the shipped human traces and random games of other shipped games, read
//! as `playforge replay` reads them and drawn as a report draws them).
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
//! changed, including to NUL, `\u{feff}` and non-ASCII. Formulas and expressions are also nested
//! (brackets, functions, signs: often near the parsers' limit of 64 levels, sometimes thousands
//! deep); a replay's JSON is also edited as a tree (a value swapped for a path out of the tree,
//! another game or an edge number, an array repeated or cut, a key dropped, a value nested past
//! serde_json's limit).
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
    /// A `best_formula.txt` (virtual paths `formulas/<name>.formula`).
    Formula,
    /// A measure expression (`exprs/<generate config>/<line>.expr`).
    Expr,
    /// A replay (`.json`).
    Replay,
}

impl Kind {
    fn of(path: &Path) -> Option<Kind> {
        match path.extension()?.to_str()? {
            "wgdl" => Some(Kind::Wgdl),
            "kif" => Some(Kind::Gdl),
            "toml" => Some(Kind::Toml),
            "formula" => Some(Kind::Formula),
            "expr" => Some(Kind::Expr),
            "json" => Some(Kind::Replay),
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
            Kind::Formula => &[
                "mean",
                "wins",
                "visits",
                "parent",
                "sumsq",
                "best",
                "moves",
                "sqrt(",
                "ln(",
                "max(",
                "min(",
                "(",
                ")",
                ",",
                "+",
                "-",
                "*",
                "/",
                "1e308",
                "1e309",
                "-0",
                "0.",
                "#",
                "# goal:",
                "# goal: nan",
                "\n",
            ],
            Kind::Expr => {
                &["maxs", "mins", "vanilla", "legal_moves", "win", "(", ")", "+", "-", "*", "/", "1e308", "1e999", "1_000", ".", "e", "-0"]
            }
            Kind::Replay => &[
                "{",
                "}",
                "[",
                "]",
                "\"",
                ":",
                ",",
                "null",
                "\"game\"",
                "\"moves\"",
                "\"params\"",
                "\"players\"",
                "\"chance_seed\"",
                "\"overlays\"",
                "\"turn_order\"",
                "\"/etc/passwd\"",
                "\"games/hex_arena.wgdl\"",
                "\"../../../../etc/hostname\"",
                "\"swap(me, 2)\"",
                "18446744073709551615",
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

/// Every input of the campaign: the shipped games, configs and replays, the formulas and
/// measure expressions, and replays of other games made here.
fn corpus() -> Vec<(PathBuf, Kind, String)> {
    let mut out = corpus_files();
    let formulas = formula_corpus(&out);
    let exprs = expr_corpus(&out);
    out.extend(formulas);
    out.extend(exprs);
    out.extend([replay_of("connect_four.wgdl", 1, 30), replay_of("hex_arena.wgdl", 2, 40), replay_of("stacker.wgdl", 3, 30)]);
    out
}

/// Every shipped game, config and replay, as (path relative to the root, text).
fn corpus_files() -> Vec<(PathBuf, Kind, String)> {
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
            // Configs in a folder of their own (configs/board/) get it in the scratch tree too.
            std::fs::create_dir_all(path.parent().expect("a config's folder")).expect("the config's scratch folder");
            std::fs::write(&path, text).expect("write the mutated config");
            load_config(&path, text).is_ok()
        }
        Kind::Formula => run_formula(text, scratch),
        Kind::Expr => run_expr(rel, text, scratch),
        Kind::Replay => run_replay(text, scratch),
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
        playforge::persona::jobs::Setup::new(cfg, text.to_string(), path, Path::new("/nonexistent"))?;
    } else if table.contains_key("playtest") {
        let cfg = playforge::playtest::config::PlaytestConfig::parse(path, text)?;
        playforge::playtest::setup::Setup::new(cfg, text, path, Path::new("/nonexistent"))?;
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
    // Inputs per kind (games, GDL, configs, formulas, expressions, replays).
    let mut per_kind = [0u64; 6];
    let mut seed = first;
    while t0.elapsed().as_secs_f64() < secs {
        let (rel, kind, original) = &corpus[(seed % corpus.len() as u64) as usize];
        let mut r = rng::stream(seed, 11, 0, 0);
        let mut text = original.clone();
        for _ in 0..r.random_range(1..=3) {
            text = mutate(&text, *kind, &mut r);
        }
        match kind {
            Kind::Formula | Kind::Expr if r.random_bool(0.3) => text = deepen(&text, *kind, &mut r),
            Kind::Replay if r.random_bool(0.5) => text = mutate_json(original, &mut r),
            Kind::Replay if r.random_bool(0.1) => text = deepen(&text, *kind, &mut r),
            _ => {}
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
        per_kind[*kind as usize] += 1;
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
    println!(
        "  by kind: {} WGDL, {} GDL, {} configs, {} formulas, {} expressions, {} replays",
        per_kind[0], per_kind[1], per_kind[2], per_kind[3], per_kind[4], per_kind[5]
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

// ---------------------------------------------------------------------------------------------
// Formulas, measure expressions and replays

/// A formula file as `playforge personas` writes `best_formula.txt` (the formula, its simplified
/// form, the goal and what it was evolved for).
fn best_formula_txt(f: &playforge::search::formula::Formula) -> String {
    format!("{f}\n# simplified: {}\n# goal: 0.25\n# persona fuzz: max final of score, generation 3\n", playforge::evolve::gp::pretty(f))
}

/// The formula inputs: every shipped named formula, every formula a config writes as text, and
/// GP trees as `personas` writes them (`formulas/<name>.formula`).
fn formula_corpus(configs: &[(PathBuf, Kind, String)]) -> Vec<(PathBuf, Kind, String)> {
    use playforge::search::formula::Formula;
    let mut out = Vec::new();
    for name in playforge::search::run::FORMULA_NAMES.split(", ") {
        let f = playforge::search::run::named_formula(name, 0.7, 0.02, 0.2).expect("a shipped formula");
        out.push((PathBuf::from(format!("formulas/{name}.formula")), Kind::Formula, best_formula_txt(&f)));
    }
    for (rel, _, text) in configs.iter().filter(|(_, k, _)| *k == Kind::Toml) {
        for (i, line) in text.lines().enumerate() {
            let Some(v) = line.trim().strip_prefix("formula = \"").and_then(|v| v.strip_suffix('"')) else { continue };
            if let Ok(f) = Formula::parse(v) {
                let stem = rel.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                out.push((PathBuf::from(format!("formulas/{stem}-{}.formula", i + 1)), Kind::Formula, best_formula_txt(&f)));
            }
        }
    }
    let cfg = playforge::evolve::gp::GpConfig::default();
    let mut r = rng::stream(54, 2, 0, 0);
    for k in 0..4 {
        let f = playforge::evolve::gp::random_tree(&cfg, &mut r, 2, cfg.max_height, k % 2 == 0);
        out.push((PathBuf::from(format!("formulas/gp-{k}.formula")), Kind::Formula, best_formula_txt(&f)));
    }
    out
}

/// The measure-expression inputs: every `expr = "…"` of the shipped generate configs, as
/// `exprs/<config>/<line>.expr` (the line the expression is written on).
fn expr_corpus(configs: &[(PathBuf, Kind, String)]) -> Vec<(PathBuf, Kind, String)> {
    let mut out = Vec::new();
    for (rel, _, text) in configs.iter().filter(|(rel, k, _)| *k == Kind::Toml && rel.to_string_lossy().contains("generate_")) {
        let stem = rel.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            if let Some(v) = line.trim().strip_prefix("expr = \"").and_then(|v| v.strip_suffix('"')) {
                out.push((PathBuf::from(format!("exprs/{stem}/{}.expr", i + 1)), Kind::Expr, v.to_string()));
            }
        }
    }
    out
}

/// A replay of `moves` random moves of a shipped game, as a tournament writes one (the shipped
/// traces are match-3 only), as `replays/<game>.json`.
fn replay_of(game: &str, seed: u64, moves: usize) -> (PathBuf, Kind, String) {
    use playforge::game::{Game, WgdlGame};
    let rel = format!("games/{game}");
    let program = playforge::wgdl::load(&root().join(&rel)).unwrap_or_else(|e| panic!("{e}")).program;
    let g = WgdlGame::new(program.clone());
    let mut st = g.initial().expect("a start");
    let (mut legal, mut names) = (Vec::new(), Vec::new());
    let mut r = rng::stream(seed, 3, 0, 0);
    for _ in 0..moves {
        if g.legal(&st, &mut legal).is_err() || legal.is_empty() {
            break;
        }
        let m = legal[r.random_range(0..legal.len())];
        names.push(program.action_name(&st, m));
        g.apply(&mut st, m).expect("a legal move applies");
    }
    let rep = playforge::players::ai::Replay {
        game: PathBuf::from(&rel),
        turn_order: None,
        params: Vec::new(),
        players: vec!["random".into(), "random".into()],
        moves: names,
        result: String::new(),
        chance_seed: 0,
        overlays: Vec::new(),
    };
    let stem = game.trim_end_matches(".wgdl");
    (PathBuf::from(format!("replays/{stem}.json")), Kind::Replay, serde_json::to_string_pretty(&rep).expect("JSON"))
}

/// The measure names of every shipped generate config (what a mutated expression may name).
fn measure_names() -> &'static [String] {
    static NAMES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(read_measure_names);
    &NAMES
}

fn read_measure_names() -> Vec<String> {
    let mut names = Vec::new();
    for (_, kind, text) in corpus_files() {
        let Ok(t) = text.parse::<toml::Table>() else { continue };
        if kind != Kind::Toml || !t.contains_key("generate") {
            continue;
        }
        for m in t.get("measure").and_then(|m| m.as_array()).into_iter().flatten() {
            if let Some(n) = m.get("name").and_then(|n| n.as_str())
                && !names.iter().any(|x| x == n)
            {
                names.push(n.to_string());
            }
        }
    }
    names
}

/// A formula read every way the tools read one: each line parsed (as a config's `formula` is),
/// what parses printed and parsed back, compiled and evaluated (the compiled paths agree with the
/// tree to the bit), simplified and fingerprinted as GP does; then the text as a
/// `best_formula.txt` (`serve`, `persona-play`, `humans`).
fn run_formula(text: &str, scratch: &Path) -> bool {
    use playforge::search::formula::{Formula, Stats};
    for line in text.lines() {
        let Ok(f) = Formula::parse(line) else { continue };
        let printed = f.to_string();
        let back = Formula::parse(&printed).unwrap_or_else(|e| panic!("`{line}` parses, prints as `{printed}`, which does not: {e}"));
        assert_eq!(back, f, "`{line}` printed as `{printed}` parses back to another tree");
        let c = f.compile();
        for s in [
            Stats { mean: 0.4, wins: 4.0, visits: 10.0, parent: 100.0, sumsq: 2.0, best: 0.9, moves: 21.0 },
            Stats::default(),
            Stats { mean: 1.0, wins: 1e9, visits: 1e9, parent: 1e12, sumsq: 1e9, best: 1.0, moves: 500.0 },
        ] {
            let (a, b, d) = (f.eval(&s), c.eval(&s), c.eval_child(&c.at_parent(s.parent), &s));
            let same = |x: f64, y: f64| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
            assert!(same(a, b) && same(a, d), "`{line}`: tree {a}, compiled {b}, per node {d}");
        }
        let _ = playforge::evolve::gp::pretty(&f);
        let _ = playforge::evolve::gp::fingerprint(&f);
    }
    let path = scratch.join("best_formula.txt");
    std::fs::write(&path, text).expect("write the formula file");
    match playforge::persona::run::read_formula_file(&path) {
        Ok(_) => true,
        Err(e) => {
            assert!(e.to_string().contains("best_formula.txt"), "no file named: {e}");
            false
        }
    }
}

/// A measure expression parsed as generate does (evaluated with its standard error when it
/// parses), then written as the `expr` of its config's line and the config parsed.
fn run_expr(rel: &Path, text: &str, scratch: &Path) -> bool {
    use playforge::generate::expr::{Estimate, Expr};
    let names: Vec<&str> = measure_names().iter().map(String::as_str).collect();
    let ok = match Expr::parse(text, &names) {
        Ok(e) => {
            let m: Vec<Estimate> = (0..names.len()).map(|i| Estimate { mean: i as f64 - 1.0, se: 0.5 }).collect();
            let _ = e.estimate(&m);
            true
        }
        Err(e) => {
            assert!(e.at.is_none_or(|at| at <= text.len()), "position {:?} past the end: {e}", e.at);
            assert!(e.to_string().len() < 2000, "an error quotes a window of the expression, not all of it");
            false
        }
    };
    // `exprs/<config>/<line>.expr`: the expression written back on that line of the config.
    let config = rel.parent().and_then(|p| p.file_name()).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let line: usize = rel.file_stem().and_then(|s| s.to_str()).and_then(|s| s.parse().ok()).unwrap_or(0);
    if let Ok(original) = std::fs::read_to_string(root().join("configs").join(format!("{config}.toml"))) {
        let value = toml::Value::String(text.to_string()).to_string();
        let cfg: Vec<String> =
            original.lines().enumerate().map(|(i, l)| if i + 1 == line { format!("expr = {value}") } else { l.to_string() }).collect();
        let path = scratch.join("configs").join(format!("{config}.toml"));
        let _ = playforge::generate::config::GenerateConfig::parse(&path, &cfg.join("\n"));
    }
    ok
}

/// A replay read as `playforge replay` reads it, then drawn as a report and `serve` draw one.
fn run_replay(text: &str, scratch: &Path) -> bool {
    let path = scratch.join("replay.json");
    std::fs::write(&path, text).expect("write the replay");
    let mut out = Vec::new();
    let ok = playforge::experiment::tournament::replay(&path, &mut out).is_ok();
    if let Ok(rep) = serde_json::from_str::<playforge::players::ai::Replay>(text) {
        let _ = playforge::web::replay::frames(&rep, scratch, "fuzz");
    }
    ok
}

/// Wraps a stretch of `src` in `k` levels of nesting (brackets, functions or signs of the
/// input's language), `k` often near the parsers' limit of 64.
fn deepen(src: &str, kind: Kind, r: &mut rng::Rng) -> String {
    let s: Vec<char> = src.chars().collect();
    let i = r.random_range(0..=s.len());
    let j = r.random_range(i..=s.len());
    let k = if r.random_bool(0.5) { r.random_range(56..=72) } else { r.random_range(1..=3000) };
    let (open, close) = match (kind, r.random_range(0..4)) {
        (Kind::Replay, _) => ("[", "]"),
        (_, 0 | 1) => ("(", ")"),
        (Kind::Formula, 2) => ("sqrt(", ")"),
        (_, 2) => ("- ", ""),
        (_, _) => ("-", ""),
    };
    let mut out: String = s[..i].iter().collect();
    out.push_str(&open.repeat(k));
    out.extend(&s[i..j]);
    out.push_str(&close.repeat(k));
    out.extend(&s[j..]);
    out
}

/// Strings and numbers a replay's values are swapped for: paths out of the tree, other games,
/// moves, huge and negative numbers.
const REPLAY_VALUES: &[&str] = &[
    "\"/etc/passwd\"",
    "\"../../../../../../etc/hostname\"",
    "\"games\"",
    "\"games/connect_four.wgdl\"",
    "\"games/hex_arena.wgdl\"",
    "\"games/gdl/tictactoe.kif\"",
    "\"\"",
    "\"swap(me, 2)\"",
    "\"me.maxHp\"",
    "\"alternating\"",
    "\"damageStats\"",
    "0",
    "-1",
    "1e308",
    "18446744073709551615",
    "9007199254740993",
    "0.5",
    "null",
    "true",
    "[]",
    "{}",
    "[\"me.weight1\", 1e308]",
];

/// A structural edit of a replay's JSON: one value replaced, an array repeated or cut, a key
/// dropped or added, or a value nested deeply; `src` unchanged when it is not JSON.
fn mutate_json(src: &str, r: &mut rng::Rng) -> String {
    use serde_json::Value;
    let Ok(mut v) = serde_json::from_str::<Value>(src) else { return src.to_string() };
    fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| pointers(x, format!("{at}/{i}"), out)),
            Value::Object(o) => o.iter().for_each(|(k, x)| pointers(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out)),
            _ => {}
        }
        out.push(at);
    }
    let mut all = Vec::new();
    pointers(&v, String::new(), &mut all);
    let at = &all[r.random_range(0..all.len())];
    let Some(node) = v.pointer_mut(at) else { return src.to_string() };
    match r.random_range(0..6) {
        0 | 1 => *node = serde_json::from_str(REPLAY_VALUES[r.random_range(0..REPLAY_VALUES.len())]).expect("a JSON value"),
        2 => match node {
            Value::Array(a) if !a.is_empty() => {
                let times = r.random_range(2..=200);
                let copy = a.clone();
                for _ in 1..times {
                    a.extend(copy.iter().cloned());
                }
            }
            other => *other = Value::Array(vec![other.take(), Value::Null]),
        },
        3 => match node {
            Value::Array(a) => {
                let n = r.random_range(0..=a.len());
                a.truncate(n);
            }
            Value::Object(o) => {
                let keys: Vec<String> = o.keys().cloned().collect();
                if r.random_bool(0.5) && !keys.is_empty() {
                    o.remove(&keys[r.random_range(0..keys.len())]);
                } else {
                    o.insert("unknown".into(), Value::from(1));
                }
            }
            other => *other = Value::String(String::new()),
        },
        _ => {
            // Near serde_json's limit of 128 levels, or far past it (at most 500: writing and
            // dropping the value recurse, on the test's stack).
            let k = if r.random_bool(0.5) { r.random_range(120..=136) } else { r.random_range(1..=500) };
            for _ in 0..k {
                *node = Value::Array(vec![node.take()]);
            }
        }
    }
    serde_json::to_string_pretty(&v).unwrap_or_else(|_| src.to_string())
}
