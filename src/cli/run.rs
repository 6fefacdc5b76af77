//! `check`, `run` and `bench`: the commands that work on one game file.

use crate::game::Game;
use crate::wgdl::program::{Action, Program, State, Status, Ty};
use crate::wgdl::{self, LoadError};
use anyhow::{Result, bail};
use rand::RngExt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct RunArgs {
    /// The game description (.wgdl).
    pub game: PathBuf,
    /// Play up to N uniformly random legal moves (stops earlier when the game ends).
    #[arg(long, value_name = "N", conflicts_with = "moves", value_parser = clap::value_parser!(u64).range(0..=1_000_000_000))]
    pub random: Option<u64>,
    /// Play the moves listed in FILE, one per line, as printed by `run` (e.g. `getCoins(coin20)`).
    #[arg(long, value_name = "FILE")]
    pub moves: Option<PathBuf>,
    /// Seed of the random stream.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Chance seed of the game itself (games that draw, e.g. match-3's refills; games/README.md
    /// §9.13).
    #[arg(long, default_value_t = 0)]
    pub chance_seed: u64,
    /// Draw random moves by action-group weight first, then uniformly inside the group.
    #[arg(long)]
    pub groups: bool,
    /// Print only the summary at the end.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print the grids as text at the start and after every move (with --quiet: the last
    /// position only): the top row first, row numbers and column letters around them (`a1` is
    /// the bottom-left cell), each cell its `pieces` character, else its `view … glyphs` glyph,
    /// else its number.
    #[arg(long)]
    pub board: bool,
    /// Record the game (game file, moves, result) as JSON for `playforge replay`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Parameter values from an encounter file (a `best_encounter.toml` of `playforge balance`):
    /// its [team.*] and [held] values override the game's declared parameters.
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,
    /// Set a declared parameter, e.g. `--set me.colours=4` (after --params; repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub set: Vec<(String, f64)>,
    /// Switch on a named overlay of the game file (a `style <name>:` or `variant <name>:` line
    /// tag; repeatable).
    #[arg(long = "overlay", value_name = "NAME")]
    pub overlays: Vec<String>,
}

/// `name=value` for `--set`.
fn parse_setting(s: &str) -> Result<(String, f64), String> {
    let (k, v) = s.split_once('=').ok_or_else(|| format!("`{s}`: expected NAME=VALUE, e.g. me.colours=4"))?;
    let x: f64 = v.trim().parse().map_err(|_| format!("`{v}`: expected a number after `=`"))?;
    Ok((k.trim().to_string(), x))
}

/// `--seconds`: a measuring time in (0, 86400].
fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 86_400.0 => Ok(x),
        _ => Err(format!("expected seconds greater than 0 and at most 86400, found `{s}`")),
    }
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// The game descriptions to measure: `.wgdl`, or `.kif` (GDL: random joint moves through
    /// the reasoner `check` names).
    #[arg(required_unless_present = "external")]
    pub games: Vec<PathBuf>,
    /// Measure a game in its own process instead: the rollouts per second of the prefix-tree
    /// search on 1 and 2 processes, for the first condition of this playtest config (one with an
    /// `[external]` table, e.g. configs/playtest_external_roguelike.toml).
    #[arg(long, value_name = "CONFIG", conflicts_with_all = ["games", "mcts"])]
    pub external: Option<PathBuf>,
    /// Seconds to measure each game for.
    #[arg(long, default_value_t = 3.0, value_parser = seconds)]
    pub seconds: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Measure plain MCTS iterations/s (UCB1, action-group playouts, one sub-game per goal) on 1
    /// thread and on 2 threads with root parallelism, instead of random playouts.
    #[arg(long)]
    pub mcts: bool,
}

#[derive(clap::Args)]
pub struct PerftArgs {
    /// The game description (.wgdl).
    pub game: PathBuf,
    /// Count the move sequences of every length from 1 to this.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=12))]
    pub depth: u32,
    /// Also count, for each legal move of the start, the sequences of the full depth that begin
    /// with it (as chess engines' `divide`), to find where two implementations part.
    #[arg(long)]
    pub divide: bool,
    /// Set a declared parameter, e.g. `--set rules.size=5` (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub set: Vec<(String, f64)>,
}

/// `perft`: how many move sequences of each length the game has from its start (a sequence that
/// ends the game early is not counted at the longer lengths): the count board-game engines
/// publish, to check a description against another implementation.
pub fn perft(args: &PerftArgs) -> Result<()> {
    let c = load_with(&args.game, &wgdl::CompileOptions { overrides: args.set.clone(), ..wgdl::CompileOptions::default() })?;
    let p = &c.program;
    let rt = |e: wgdl::RuntimeError| anyhow::anyhow!(e.render(p));
    let start = p.initial_state().map_err(rt)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "| depth | sequences | seconds |")?;
    writeln!(out, "|---:|---:|---:|")?;
    let mut bufs: Vec<Vec<wgdl::Action>> = Vec::new();
    for d in 1..=args.depth {
        let t0 = Instant::now();
        let n = perft_count(p, &start, d, &mut bufs).map_err(rt)?;
        writeln!(out, "| {d} | {n} | {:.2} |", t0.elapsed().as_secs_f64())?;
    }
    if args.divide {
        let mut legal = Vec::new();
        p.legal_actions(&start, &mut legal).map_err(rt)?;
        writeln!(out, "\n| move | sequences of depth {} |\n|---|---:|", args.depth)?;
        for a in legal {
            let mut st = start.clone();
            p.apply(&mut st, a).map_err(rt)?;
            let n = if args.depth == 1 { 1 } else { perft_count(p, &st, args.depth - 1, &mut bufs).map_err(rt)? };
            writeln!(out, "| {} | {n} |", p.action_name(&start, a))?;
        }
    }
    Ok(())
}

/// The number of move sequences of length `depth` from `st` (one move list per level, reused).
fn perft_count(p: &wgdl::Program, st: &State, depth: u32, bufs: &mut Vec<Vec<wgdl::Action>>) -> Result<u64, wgdl::RuntimeError> {
    let level = depth as usize;
    while bufs.len() <= level {
        bufs.push(Vec::new());
    }
    let mut legal = std::mem::take(&mut bufs[level]);
    p.legal_actions(st, &mut legal)?;
    let n = if p.status(st, &legal) != Status::Running {
        0
    } else if depth == 1 {
        legal.len() as u64
    } else {
        let mut n = 0;
        for &a in &legal {
            let mut next = st.clone();
            p.apply(&mut next, a)?;
            n += perft_count(p, &next, depth - 1, bufs)?;
        }
        n
    };
    bufs[level] = legal;
    Ok(n)
}

fn load(path: &Path) -> Result<wgdl::Compiled> {
    load_with(path, &wgdl::CompileOptions::default())
}

/// A game compiled with `opts`, its diagnostics as the error.
fn load_with(path: &Path, opts: &wgdl::CompileOptions) -> Result<wgdl::Compiled> {
    match wgdl::load_with(path, opts) {
        Ok(c) => Ok(c),
        Err(LoadError::Compile(d)) => bail!("{d}"),
        Err(e) => Err(e.into()),
    }
}

pub fn check(path: &Path) -> Result<()> {
    let c = load(path)?;
    let p = &c.program;
    let mut out = std::io::stdout().lock();
    write!(out, "{}", c.warnings)?;
    let st = p.initial_state().map_err(|e| anyhow::anyhow!(e.render(p)))?;
    let mut legal = Vec::new();
    p.legal_actions(&st, &mut legal).map_err(|e| anyhow::anyhow!(e.render(p)))?;
    let count = |k| p.actions.iter().filter(|a| a.kind == k).count();
    writeln!(out, "{}: ok", path.display())?;
    writeln!(out, "  classes      {}", p.classes.len())?;
    for cl in &p.classes {
        let parent = cl.parent.map(|x| format!(" : {}", p.classes[x as usize].name)).unwrap_or_default();
        writeln!(
            out,
            "    {}{parent}  ({} attributes, {} constants, {} descriptions)",
            cl.name,
            cl.attrs.len(),
            cl.consts.len(),
            cl.gods
                .iter()
                .filter(|&&g| p.gods[g as usize].class == p.classes.iter().position(|x| x.name == cl.name).unwrap_or(0) as u16)
                .count()
        )?;
    }
    writeln!(out, "  objects      {} descriptions, {} initial instances", p.gods.len(), p.initial.len())?;
    writeln!(
        out,
        "  actions      {} player, {} rules, {} create hooks",
        count(wgdl::ActionKind::Player),
        count(wgdl::ActionKind::Rule),
        count(wgdl::ActionKind::OnCreate)
    )?;
    writeln!(out, "  consequences {} compiled", p.conses.len())?;
    writeln!(out, "  groups       {}", p.groups.iter().map(|g| format!("{} {}", g.name, g.weight)).collect::<Vec<_>>().join(", "))?;
    writeln!(out, "  goals        {}", p.goals.len())?;
    for g in &p.goals {
        writeln!(out, "    goal {}  {}", g.k, g.text)?;
    }
    writeln!(out, "  game values  {} store nodes", p.n_store_nodes() - 1)?;
    if p.session_length > 0 {
        writeln!(out, "  sessions     {} s long, {} s pause", p.session_length, p.session_pause)?;
    }
    writeln!(out, "  start state  {} objects, {} slots, {} legal moves", st.objects.len(), st.slots.len(), legal.len())?;
    // Each overlay compiled on its own, so that an error in an unselected line is found too.
    let mut failed = Vec::new();
    for (kind, name) in &p.overlays {
        let opts = wgdl::CompileOptions { overlays: vec![name.clone()], ..wgdl::CompileOptions::default() };
        let result = wgdl::load_with(path, &opts).map_err(|e| e.to_string()).and_then(|c| {
            let st = c.program.initial_state().map_err(|e| e.render(&c.program))?;
            let mut legal = Vec::new();
            c.program.legal_actions(&st, &mut legal).map_err(|e| e.render(&c.program))?;
            Ok(legal.len())
        });
        match result {
            Ok(n) => writeln!(out, "  {:<12} {name}: ok, {n} legal moves at the start", kind.word())?,
            Err(e) => {
                writeln!(out, "  {:<12} {name}: error\n{e}", kind.word())?;
                failed.push(name.clone());
            }
        }
    }
    if !failed.is_empty() {
        bail!("{}: the overlays {} do not compile", path.display(), failed.join(", "));
    }
    Ok(())
}

fn diff(p: &Program, before: &[(String, Ty, i64)], after: &[(String, Ty, i64)]) -> String {
    let mut parts = Vec::new();
    for (i, (name, ty, v)) in after.iter().enumerate() {
        match before.get(i) {
            Some((n0, _, v0)) if n0 == name => {
                if v0 != v {
                    parts.push(format!("{name} {} → {}", p.show(*ty, *v0), p.show(*ty, *v)));
                }
            }
            _ => parts.push(format!("{name} = {} (new)", p.show(*ty, *v))),
        }
    }
    parts.join(", ")
}

pub fn run(args: &RunArgs) -> Result<()> {
    let (overrides, turn_order) = match &args.params {
        Some(f) => {
            let e = crate::balance::run::load_encounter(f)?;
            let same = match (std::fs::canonicalize(&e.game), std::fs::canonicalize(&args.game)) {
                (Ok(a), Ok(b)) => a == b,
                _ => e.game == args.game,
            };
            if !same {
                bail!(
                    "{}: the encounter is for {}, not {}; expected the game it was made for",
                    f.display(),
                    e.game.display(),
                    args.game.display()
                );
            }
            (e.overrides, e.turn_order)
        }
        None => (Vec::new(), None),
    };
    let mut overrides = overrides;
    overrides.extend(args.set.iter().cloned());
    let opts = wgdl::CompileOptions {
        overrides: overrides.clone(),
        turn_order: turn_order.clone(),
        overlays: args.overlays.clone(),
        ..wgdl::CompileOptions::default()
    };
    let c = load_with(&args.game, &opts)?;
    let p = &c.program;
    let rt = |e: wgdl::RuntimeError| anyhow::anyhow!(e.render(p));
    let mut out = std::io::stdout().lock();
    let mut st = p.initial_state_seeded(args.chance_seed).map_err(rt)?;
    let mut legal: Vec<Action> = Vec::new();
    let mut rng = crate::rng::stream(args.seed, 0, 0, 0);
    let script: Option<Vec<(usize, String)>> = match &args.moves {
        Some(f) => {
            let text = crate::input::read_text(f)?;
            Some(
                text.lines()
                    .enumerate()
                    .map(|(i, l)| (i + 1, l.split("//").next().unwrap_or("").trim().to_string()))
                    .filter(|(_, l)| !l.is_empty())
                    .collect(),
            )
        }
        None => None,
    };
    let limit = match (&script, args.random) {
        (Some(s), _) => s.len() as u64,
        (None, Some(n)) => n,
        (None, None) => bail!("say what to play: --random N or --moves FILE (see --help)"),
    };
    let game = crate::game::WgdlGame::new(p.clone());
    let weights = game.group_weights();
    let mut step = 0u64;
    let mut recorded: Vec<String> = Vec::new();
    if args.board && !args.quiet {
        write!(out, "{}", crate::view::text::grids(p, &st))?;
    }
    let status = loop {
        p.legal_actions(&st, &mut legal).map_err(rt)?;
        let status = p.status(&st, &legal);
        if status != Status::Running || step >= limit {
            break status;
        }
        let a = match &script {
            Some(s) => {
                let (line, want) = &s[step as usize];
                let norm = |x: &str| x.replace(' ', "");
                match legal.iter().find(|a| norm(&p.action_name(&st, **a)) == norm(want)) {
                    Some(a) => *a,
                    None => {
                        let names: Vec<String> = legal.iter().map(|a| p.action_name(&st, *a)).collect();
                        bail!(
                            "{}:{line}:1: move `{want}` is not legal here; expected one of: {}",
                            args.moves.as_ref().map(|f| f.display().to_string()).unwrap_or_default(),
                            names.join(", ")
                        );
                    }
                }
            }
            // Chance's moves are drawn from the game's own stream, by their weights.
            None if p.is_chance(&legal) => p.draw_chance(&mut st, &legal).map_err(rt)?,
            None if args.groups => crate::game::pick_grouped(&game, &legal, &weights, &mut rng),
            None => legal[rng.random_range(0..legal.len())],
        };
        let before = if args.quiet { Vec::new() } else { p.named_values(&st) };
        let name = p.action_name(&st, a);
        p.apply(&mut st, a).map_err(rt)?;
        recorded.push(name.clone());
        step += 1;
        if !args.quiet {
            writeln!(out, "{step:>5}  t={:<6} {name}  {}", st.clock, diff(p, &before, &p.named_values(&st)))?;
            if args.board {
                write!(out, "{}", crate::view::text::grids(p, &st))?;
            }
        }
    };
    if args.board && args.quiet {
        write!(out, "{}", crate::view::text::grids(p, &st))?;
    }
    let why = match status {
        Status::Finished => "finished: the last goal holds".to_string(),
        Status::Stuck => "stuck: no legal move".to_string(),
        Status::StepLimit => format!("stopped: `limit steps` ({}) reached without reaching the last goal", p.limits.steps),
        Status::Running => format!("stopped after {step} moves (the game goes on)"),
        Status::Won(k) => format!("won by {}", p.players.get(k as usize).map_or("?", |s| s.as_str())),
        Status::Draw => "a draw".to_string(),
        Status::TurnLimit => format!("stopped: `limit turns` ({}) reached without a winner", p.limits.turns),
    };
    if let Some(file) = &args.record {
        let rep = crate::players::Replay {
            // Absolute: `replay` and the report find it from any working folder.
            game: crate::report::run_dir::game_path(&args.game),
            turn_order,
            params: overrides,
            players: if p.players.is_empty() { vec!["player".into()] } else { p.players.clone() },
            moves: recorded,
            result: why.clone(),
            chance_seed: args.chance_seed,
            overlays: args.overlays.clone(),
        };
        crate::report::write_atomic(file, serde_json::to_string_pretty(&rep)?.as_bytes())?;
    }
    writeln!(
        out,
        "{why}; goals reached {}/{}, {} moves, game time {} s, {} sessions",
        st.goal,
        p.goals.len(),
        st.moves,
        st.clock,
        st.sessions
    )?;
    Ok(())
}

pub fn bench(args: &BenchArgs) -> Result<()> {
    if args.mcts {
        if let Some(k) = args.games.iter().find(|p| p.extension().is_some_and(|x| x == "kif")) {
            anyhow::bail!("--mcts with {}: it measures WGDL games; expected .wgdl files (a .kif measures random playouts)", k.display());
        }
        return bench_mcts(args);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "| game | playouts/s | moves/s | mean moves per playout |")?;
    writeln!(out, "|---|---:|---:|---:|")?;
    for path in &args.games {
        if path.extension().is_some_and(|x| x == "kif") {
            let (playouts, moves, secs) = super::gdl::bench_random(path, args.seconds, args.seed)?;
            let per = if playouts > 0 { moves as f64 / playouts as f64 } else { f64::NAN };
            writeln!(out, "| {} | {:.1} | {:.1} | {per:.1} |", path.display(), playouts as f64 / secs, moves as f64 / secs)?;
            continue;
        }
        let c = load(path)?;
        let p = &c.program;
        let rt = |e: wgdl::RuntimeError| anyhow::anyhow!(e.render(p));
        let start_state = p.initial_state().map_err(rt)?;
        let game = crate::game::WgdlGame::new(p.clone());
        let weights = game.group_weights();
        let mut rng = crate::rng::stream(args.seed, 0, 0, 0);
        let mut legal = Vec::with_capacity(256);
        let (mut playouts, mut moves) = (0u64, 0u64);
        let t0 = Instant::now();
        while t0.elapsed().as_secs_f64() < args.seconds {
            let mut st = start_state.clone();
            // Each playout draws its own chance (a game's future is in its state's stream).
            crate::game::Game::reseed(&game, &mut st, rand::RngExt::random::<u64>(&mut rng));
            loop {
                p.legal_actions(&st, &mut legal).map_err(rt)?;
                if p.status(&st, &legal) != Status::Running {
                    break;
                }
                let a = if p.is_chance(&legal) {
                    p.draw_chance(&mut st, &legal).map_err(rt)?
                } else {
                    crate::game::pick_grouped(&game, &legal, &weights, &mut rng)
                };
                p.apply(&mut st, a).map_err(rt)?;
                moves += 1;
            }
            playouts += 1;
        }
        let secs = t0.elapsed().as_secs_f64();
        writeln!(
            out,
            "| {} | {:.0} | {:.0} | {:.1} |",
            path.display(),
            playouts as f64 / secs,
            moves as f64 / secs,
            moves as f64 / playouts as f64
        )?;
    }
    Ok(())
}

fn bench_mcts(args: &BenchArgs) -> Result<()> {
    use crate::search::mcts::{Budget, MctsConfig};
    use crate::search::run::{PlanConfig, plan};
    let mut out = std::io::stdout().lock();
    writeln!(out, "| game | threads | MCTS iterations/s | speed-up |")?;
    writeln!(out, "|---|---:|---:|---:|")?;
    for path in &args.games {
        let c = load(path)?;
        let p = c.program.clone();
        let game = crate::game::WgdlGame::new(p.clone());
        let n_goals = p.goals.len().max(1) as f64;
        // A neutral evaluator: the fraction of goals reached. Speed does not depend on it.
        let eval = crate::search::FnEval(move |s: &State| s.goal as f64 / n_goals);
        let mut base = 0.0;
        for threads in [1usize, 2] {
            let cfg = PlanConfig {
                budget: Budget::Millis((args.seconds * 1000.0) as u64),
                root_parallel: threads,
                seed: args.seed,
                mcts: MctsConfig { group_weights: Some(game.group_weights()), ..MctsConfig::default() },
                ..PlanConfig::default()
            };
            let r = plan(&game, &eval, &cfg).map_err(|e| anyhow::anyhow!(e.render(&p)))?;
            let rate = r.iterations() as f64 / r.elapsed.as_secs_f64();
            if threads == 1 {
                base = rate;
            }
            writeln!(out, "| {} | {threads} | {rate:.0} | {:.2}× |", path.display(), rate / base)?;
        }
    }
    Ok(())
}
