//! Playtests of a game that runs in its own process (`[external]`, docs/bridge.md): Monster
//! Carlo's experiment as the thesis ran it on a studio's game. Each condition is a play style
//! and a design variant the game declares in its `hello` (plus parameter values it declares),
//! sent as the episode's settings; each replicate is one prefix-tree search
//! ([`crate::bridge::tree`]) over the whole game under the replicate's seed, on `workers`
//! processes of its own. Everything after the search — the replicate files, the curves, the
//! Mann-Whitney table, the chart, the best traces — is the WGDL playtest's.

use super::config::PlaytestConfig;
use super::setup::{Condition, Play, Replicate, Setup, fnv};
use crate::bridge::config::{check_params, declared, measure};
use crate::bridge::pool::{self, Pool};
use crate::bridge::protocol::Episode;
use crate::bridge::tree::{self, Episodes, Streams, TreeConfig};
use crate::config::locate;
use crate::exec::Executor;
use anyhow::{Result, anyhow, bail};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

impl Setup {
    /// Compiles one program per condition and checks every name the config uses against the
    /// game ([`Setup::wgdl`]), or, with an `[external]` table, starts the game once and checks
    /// them against its hello ([`setup`]). `text` is the config's text (for error locations
    /// and the key).
    pub fn new(cfg: PlaytestConfig, text: &str, config_path: &Path, out_root: &Path) -> Result<Setup> {
        if cfg.external.is_some() { setup(cfg, text, config_path, out_root) } else { Setup::wgdl(cfg, text, config_path, out_root) }
    }
}

/// The setup of an external game's playtest: the game started once to read its `hello`, every
/// name of the config checked against it.
pub fn setup(cfg: PlaytestConfig, text: &str, config_path: &Path, out_root: &Path) -> Result<Setup> {
    let at = |table: &str, nth: usize, key: &str| locate(config_path, text, table, nth, key);
    let s = &cfg.playtest;
    let ext = cfg.external.clone().ok_or_else(|| anyhow!("no [external] table"))?;
    let game_text = crate::input::read_text(&s.game).map_err(|e| anyhow!("{}: game: {e}", at("playtest", 0, "game")))?;
    let hello = pool::probe(&ext.launch(serde_json::json!({}))).map_err(|e| anyhow!("{}: {e}", at("external", 0, "command")))?;
    let measure = measure(&hello, &s.score, || at("playtest", 0, "score"))?;
    check_params(&hello, &cfg.parameters, |n| at("parameters", 0, n))?;
    let mut conditions = Vec::new();
    for (a, st, v) in cfg.conditions(|| at("playtest", 0, "conditions"))? {
        let (arm, style, variant) = (&cfg.searches[a], &cfg.styles[st], &cfg.variants[v]);
        if arm.encoding.is_some() {
            bail!(
                "{}: encoding on an external game; expected none (the game's own `select` calls are its encoding)",
                at("search", a, "encoding")
            );
        }
        let own = "expected only a name (an external game's play styles are its own, declared in its hello)";
        for (key, set) in [("overlays", style.overlays.is_some()), ("weights", !style.weights.is_empty())] {
            if set {
                bail!("{}: {key} on a style of an external game; {own}", at("style", st, key));
            }
        }
        // A persona's formula drives the search; the game then plays its own unrestricted
        // style unless the style's name is one it declares.
        let formula = super::setup::style_formula(style, &|key| at("style", st, key))?;
        let formula_text = formula.as_ref().map(|(_, t)| t.clone());
        if variant.overlays.is_some() {
            bail!("{}: overlays on an external game; expected a variant it declares and parameters", at("variant", v, "overlays"));
        }
        let style_name = match &formula {
            Some(_) if !hello.styles.contains(&style.name) => None,
            _ => declared(&hello, "style", &style.name, "unrestricted", || at("style", st, "name"))?,
        };
        let variant_name = declared(&hello, "variant", &variant.name, "base", || at("variant", v, "name"))?;
        check_params(&hello, &variant.parameters, |n| at("variant", v, n))?;
        let mut params = cfg.parameters.clone();
        params.extend(variant.parameters.iter().map(|(k, x)| (k.clone(), *x)));
        let settings = serde_json::json!({"style": style_name, "variant": variant_name, "params": params});
        let tree = TreeConfig {
            uct: arm.uct.unwrap_or(s.uct),
            cut_off: arm.cut_off.unwrap_or(s.cut_off),
            save_best_path: arm.save_best_path.unwrap_or(s.save_best_path),
            workers: ext.workers,
            measure: measure.clone(),
            formula: formula.as_ref().map(|(f, _)| f.clone()),
            reward: None,
        };
        let selection = match &formula_text {
            Some(text) => format!("formula {text}"),
            None => format!("UCT c = {}", tree.uct),
        };
        let describe = format!(
            "settings {settings}; prefix-tree {selection}; CUT_OFF {}; save best path {}; {} workers",
            if tree.cut_off { "on" } else { "off" },
            if tree.save_best_path { "on" } else { "off" },
            tree.workers
        );
        let name = cfg.condition_name((a, st, v));
        conditions.push(Condition {
            file: name.replace('/', "-"),
            name,
            play: Play::External { settings, tree },
            describe,
            stream: fnv(&format!("{}/{}/{}", arm.name, style.name, variant.name)),
            overlays: Vec::new(),
            params: params.into_iter().collect(),
        });
    }
    // The key: the config (paths as file names), the game file's text and what the game says
    // of itself. A changed game file or hello is another run.
    let mut keyed = cfg.clone();
    keyed.playtest.game = keyed.playtest.game.file_name().map(PathBuf::from).unwrap_or_default();
    if let Some(e) = &mut keyed.external {
        e.dir = None;
    }
    // The nonce is the process's, not the game's.
    let hello_text = serde_json::to_string(&crate::bridge::protocol::Hello { nonce: String::new(), ..hello.clone() })?;
    let key = format!(
        "{:016x}",
        fnv(&format!("{}\n--- game\n{game_text}\n--- hello\n{hello_text}", toml::to_string(&keyed).unwrap_or_default()))
    );
    Ok(Setup {
        out_dir: out_root.join(&cfg.playtest.name).join(format!("seed-{}", cfg.playtest.seed)),
        legacy_keys: [key.clone(), key.clone()],
        key,
        game_hash: fnv(&format!("{game_text}\n--- hello\n{hello_text}")),
        game_path: cfg.playtest.game.clone(),
        conditions,
        cfg,
        config_path: config_path.to_path_buf(),
        text: text.to_string(),
        exec: Executor::Local,
        sides: Vec::new(),
    })
}

/// One replicate: a prefix-tree search on `workers` fresh processes under the replicate's
/// seed, then the best line replayed once (the thesis's check that the game is a function of
/// its seed and choices). `None` when interrupted.
pub fn run_replicate(setup: &Setup, c: &Condition, r: u64, progress: &AtomicU64) -> Result<Option<Replicate>> {
    let Play::External { settings, tree } = &c.play else { bail!("{}: not an external game's condition", c.name) };
    let ext = setup.cfg.external.as_ref().ok_or_else(|| anyhow!("no [external] table"))?;
    let t0 = Instant::now();
    let s = &setup.cfg.playtest;
    let game_seed = setup.game_seed(r);
    let mut pool = Pool::new(&ext.launch(settings.clone()), ext.workers, ext.retries);
    let streams = Streams { seed: s.seed, replicate: r, stream: c.stream };
    let fail = |e: anyhow::Error| anyhow!("{} replicate {}: {e}", c.name, r + 1);
    let found = tree::search(&mut pool, tree, game_seed, settings, s.rollouts, &streams, |_, _| {
        progress.fetch_add(1, Ordering::Relaxed);
        !crate::drive::stop::requested()
    })
    .map_err(fail)?;
    if found.stopped {
        return Ok(None);
    }
    progress.fetch_add(s.rollouts - found.rollouts, Ordering::Relaxed);
    let Some(best) = &found.best_outcome else {
        let first = found.failures.first().map(|f| f.reason.as_str()).unwrap_or("none recorded");
        bail!("{} replicate {}: no rollout ended with an outcome ({} failed; the first: {first})", c.name, r + 1, found.failures.len());
    };
    let prefix: Vec<u64> = best.trace.iter().map(|t| t[0]).collect();
    pool.start(Episode { id: found.rollouts, seed: game_seed, policy_seed: 0, settings: settings.clone(), prefix }).map_err(fail)?;
    let again = pool.finish().map_err(fail)?.map_err(|f| anyhow!("{} replicate {}: replaying the best line: {f}", c.name, r + 1))?;
    let replayed = match &tree.measure {
        None => Some(again.score),
        Some(m) => again.measures.get(m).copied(),
    };
    if replayed != Some(found.best) || again.trace != best.trace {
        bail!(
            "{} replicate {}: the best line scores {replayed:?} when replayed but {} in the search; the game is not a function of its seed and choices",
            c.name,
            r + 1,
            found.best
        );
    }
    drop(pool);
    Ok(Some(Replicate {
        key: setup.key.clone(),
        condition: c.name.clone(),
        replicate: r,
        game_seed,
        best: found.best,
        improvements: found.improvements,
        rollouts: found.rollouts,
        exhausted: found.exhausted,
        nodes: found.nodes,
        seconds: t0.elapsed().as_secs_f64(),
        trace: best.trace.iter().map(|[c, n]| format!("{c} of {n}")).collect(),
        game: None,
        failures: found.failures,
    }))
}

/// Throughput of an external game: the first condition's search on `workers` processes for
/// `seconds` (CUT_OFF off, so that it does not stop early); the process start is left out.
pub struct Throughput {
    pub workers: usize,
    pub rollouts: u64,
    pub decisions: u64,
    pub seconds: f64,
}

pub fn bench(setup: &Setup, workers: usize, seconds: f64) -> Result<Throughput> {
    let c = setup.conditions.first().ok_or_else(|| anyhow!("no condition"))?;
    let Play::External { settings, tree } = &c.play else { bail!("{}: not an external game", c.name) };
    let ext = setup.cfg.external.as_ref().ok_or_else(|| anyhow!("no [external] table"))?;
    let tree = TreeConfig { cut_off: false, workers, ..tree.clone() };
    let mut pool = Pool::new(&ext.launch(settings.clone()), workers, ext.retries);
    // Warm up: every process started and introduced before the clock starts.
    let streams = Streams { seed: setup.cfg.playtest.seed, replicate: 0, stream: c.stream };
    tree::search(&mut pool, &tree, setup.game_seed(0), settings, workers as u64 * 2, &streams, |_, _| true)?;
    let t0 = Instant::now();
    let found = tree::search(&mut pool, &tree, setup.game_seed(0), settings, u64::MAX, &streams, |_, _| {
        t0.elapsed().as_secs_f64() < seconds && !crate::drive::stop::requested()
    })?;
    Ok(Throughput { workers, rollouts: found.rollouts, decisions: found.decisions, seconds: t0.elapsed().as_secs_f64() })
}
