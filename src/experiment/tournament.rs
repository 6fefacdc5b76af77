//! `playforge tournament`: AIs against each other on random valid encounters (HexMage's
//! AI comparison, Table 5.1). Each of N random parameter sets (every declared parameter drawn
//! uniformly in its range, redrawn until every `constraint` holds) is played by every pair of
//! AIs on both sides. The table gives, per pair, the row AI's share of the decided games with a
//! 95% Wilson interval; draws and turn-limit games are counted apart.
//!
//! Every game's random stream derives from (seed, encounter, AI pair, side), so results do not
//! depend on the number of threads.

use crate::drive::game::{Context, Source};
use crate::exec::{Executor, JobKind};
use crate::game::{Game, WgdlGame};
use crate::players::{AiConfig, Player, Replay, play_out, resolve};
use crate::report::stats::wilson;
use crate::rng::stream;
use crate::wgdl::{CompileOptions, Program, Status};
use anyhow::{Result, anyhow, bail};
use rand::RngExt;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TournamentConfig {
    pub tournament: Settings,
    #[serde(rename = "ai")]
    pub ais: Vec<AiConfig>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Outputs go to `<out>/<name>/`.
    pub name: crate::config::FolderName,
    pub game: PathBuf,
    #[serde(default = "one")]
    pub seed: u64,
    /// Random encounters (parameter sets); each AI pair plays each on both sides.
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000>")]
    pub encounters: u64,
    /// `grouped` (R R B B, HexMage) or `alternating` (R B R B); default: the game's.
    #[serde(default)]
    pub turn_order: Option<String>,
    /// Encounters whose first game of each AI pair is saved as a replay.
    #[serde(default = "one")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 0, 10_000>")]
    pub replays: u64,
    #[serde(default = "default_out")]
    pub out: PathBuf,
    /// Declared parameters held at these values in every encounter (`{ "rules.size" = 7 }`);
    /// the others are drawn.
    #[serde(default)]
    pub parameters: std::collections::BTreeMap<String, f64>,
}

fn one() -> u64 {
    1
}
fn default_out() -> PathBuf {
    PathBuf::from("outputs")
}

impl TournamentConfig {
    pub fn load(path: &Path) -> Result<TournamentConfig> {
        let text = crate::input::read_text(path)?;
        let mut cfg: TournamentConfig = crate::config::toml(&path.display().to_string(), &text).map_err(|e| anyhow!(e))?;
        // Paths in a config are relative to the config file.
        cfg.tournament.game = crate::config::resolve_path(path, &cfg.tournament.game);
        if cfg.ais.len() < 2 {
            bail!("{}: {} [[ai]] tables; expected at least 2 AIs to compare", path.display(), cfg.ais.len());
        }
        Ok(cfg)
    }
}

/// Draws every declared parameter uniformly in its range until the constraints hold.
pub fn sample_encounter(path: &Path, base: &CompileOptions, seed: u64, k: u64) -> Result<(Arc<Program>, Vec<(String, f64)>)> {
    sample_from(&Source::load(path, base)?.program, path, base, seed, k)
}

/// [`sample_encounter`] from the game `first` compiled once (`path` for messages).
pub fn sample_from(first: &Program, path: &Path, base: &CompileOptions, seed: u64, k: u64) -> Result<(Arc<Program>, Vec<(String, f64)>)> {
    let mut rng = stream(seed, 0, k, u64::MAX);
    for _ in 0..10_000 {
        let values: Vec<(String, f64)> = first
            .params
            .iter()
            .map(|p| {
                let v = if p.integer { rng.random_range(p.min as i64..=p.max as i64) as f64 } else { rng.random_range(p.min..=p.max) };
                // A value the config holds (the draw is made all the same, so that holding one
                // parameter leaves the others' draws as they were).
                let held = base.overrides.iter().find(|(n, _)| *n == p.name).map(|(_, v)| *v);
                (p.name.clone(), held.unwrap_or(v))
            })
            .collect();
        // Written into the compiled program (the same game as compiling with these overrides).
        let list: Vec<f64> = values.iter().map(|v| v.1).collect();
        let program = Arc::new(first.with_parameters(&list).map_err(|e| anyhow!("{}: {e}", path.display()))?);
        let st = program.initial_state().map_err(|e| anyhow!("{}", e.render(&program)))?;
        if program.violated_constraints(&st).map_err(|e| anyhow!("{}", e.render(&program)))?.is_empty() {
            return Ok((program, values));
        }
    }
    bail!("no parameter values meeting every `constraint` in 10 000 draws; expected satisfiable constraints")
}

/// One finished game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameRecord {
    pub encounter: u64,
    pub red: String,
    pub blue: String,
    /// `red`, `blue`, `draw` or `turn limit`.
    pub result: String,
    pub turns: u32,
    pub moves: u32,
    pub rounds: u32,
}

/// [`play_out`], keeping the move names when `record` is set.
fn play_game(program: &Arc<Program>, sides: [&Player; 2], seed: u64, record: bool) -> Result<(Status, crate::wgdl::State, Vec<String>)> {
    let mut moves = Vec::new();
    let (status, st) = play_out(program, sides, seed, &mut |st, m| {
        if record {
            moves.push(program.action_name(st, m));
        }
    })?;
    Ok((status, st, moves))
}

pub(crate) fn result_name(program: &Program, status: Status) -> String {
    match status {
        Status::Won(k) => program.players.get(k as usize).cloned().unwrap_or_else(|| format!("side {k}")),
        Status::Draw => "draw".into(),
        Status::TurnLimit => "turn limit".into(),
        s => format!("{s:?}").to_lowercase(),
    }
}

/// The AI pairs of a tournament (each unordered pair once).
fn ai_pairs(cfg: &TournamentConfig) -> Vec<(usize, usize)> {
    let n_ai = cfg.ais.len();
    (0..n_ai).flat_map(|a| (a + 1..n_ai).map(move |b| (a, b))).collect()
}

/// The compile options every encounter of the tournament starts from.
pub(crate) fn base_options(cfg: &TournamentConfig) -> CompileOptions {
    CompileOptions {
        turn_order: cfg.tournament.turn_order.clone(),
        overrides: cfg.tournament.parameters.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        ..CompileOptions::default()
    }
}

/// Game `side` (0: the pair's first AI is red) of AI pair `p` on encounter `k`.
pub(crate) fn play_one(
    cfg: &TournamentConfig,
    encounter: &(Arc<Program>, Vec<(String, f64)>),
    (k, p, side): (u64, usize, usize),
) -> Result<(GameRecord, Option<Replay>)> {
    let t = &cfg.tournament;
    let (program, params) = encounter;
    let (a, b) = *ai_pairs(cfg).get(p).ok_or_else(|| anyhow!("no AI pair {p}"))?;
    let (red, blue) = if side == 0 { (a, b) } else { (b, a) };
    let pr = resolve(&cfg.ais[red], program)?;
    let pb = resolve(&cfg.ais[blue], program)?;
    let record = k < t.replays && side == 0;
    let seed = crate::rng::derive(t.seed, k, p as u64, side as u64);
    let (status, st, moves) = play_game(program, [&pr, &pb], seed, record)?;
    let result = result_name(program, status);
    let rec = GameRecord {
        encounter: k,
        red: pr.name.clone(),
        blue: pb.name.clone(),
        result: result.clone(),
        turns: st.turns,
        moves: st.moves,
        rounds: st.round,
    };
    let replay = record.then(|| Replay {
        // Absolute: `replay` and the report find it from any working folder.
        game: crate::report::run_dir::game_path(&t.game),
        turn_order: t.turn_order.clone(),
        params: params.clone(),
        players: vec![pr.name.clone(), pb.name.clone()],
        moves,
        result,
        chance_seed: 0,
        overlays: Vec::new(),
    });
    Ok((rec, replay))
}

/// The whole tournament on `exec`; returns the markdown table. `progress` is called as games
/// finish.
pub fn run(cfg: &TournamentConfig, out_dir: &Path, exec: &Executor, progress: &(dyn Fn(u64, u64) + Sync)) -> Result<String> {
    let t = &cfg.tournament;
    let base = base_options(cfg);
    if let Some(o) = &t.turn_order
        && o != "grouped"
        && o != "alternating"
    {
        bail!("[tournament] turn_order = \"{o}\"; expected \"grouped\" or \"alternating\"");
    }
    // Resolve the AIs once against the file's program (names are checked before any game).
    let source = Source::load(&t.game, &base)?;
    let probe = &source.program;
    if probe.players.len() != 2 {
        bail!("{}: a tournament needs a two-player game (`players a b`); this one has {}", t.game.display(), probe.players.len());
    }
    for ai in &cfg.ais {
        resolve(ai, probe)?;
    }
    let local = matches!(exec, Executor::Local);
    // Elsewhere each worker samples the encounters it plays itself.
    let encounters: Vec<(Arc<Program>, Vec<(String, f64)>)> = if local {
        (0..t.encounters).into_par_iter().map(|k| sample_from(probe, &t.game, &base, t.seed, k)).collect::<Result<_>>()?
    } else {
        Vec::new()
    };
    let n_ai = cfg.ais.len();
    let pairs = ai_pairs(cfg);
    let jobs: Vec<GameJob> = (0..t.encounters)
        .flat_map(|k| (0..pairs.len()).flat_map(move |p| (0..2).map(move |side| GameJob { encounter: k, pair: p, side })))
        .collect();
    let total = jobs.len() as u64;
    let done = AtomicU64::new(0);
    let kept: Vec<Mutex<Option<(GameRecord, Option<Replay>)>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    crate::drive::grid::run::<TournamentGame>(
        exec,
        crate::drive::grid::Local::Parallel,
        || TournamentContext::new(cfg, source.hash),
        &jobs,
        |_, j| {
            let r = play_one(cfg, &encounters[j.encounter as usize], (j.encounter, j.pair, j.side))?;
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            Ok(r)
        },
        |i, r| {
            *kept[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            Ok(())
        },
    )?;
    let mut results: Vec<(GameRecord, Option<Replay>)> = kept
        .into_iter()
        .map(|k| {
            k.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .ok_or_else(|| anyhow!("the tournament was stopped before every game was played"))
        })
        .collect::<Result<_>>()?;
    if !local {
        progress(total, total);
        // Replays name the game as a local run does (absolutely), not as the worker read it.
        for (_, replay) in &mut results {
            if let Some(r) = replay {
                r.game = crate::report::run_dir::game_path(&t.game);
            }
        }
    }
    // Outputs: every game, the replays, the table.
    let header: Vec<String> = ["encounter", "red", "blue", "result", "turns", "moves", "rounds"].iter().map(|s| s.to_string()).collect();
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|(r, _)| {
            vec![
                r.encounter.to_string(),
                r.red.clone(),
                r.blue.clone(),
                r.result.clone(),
                r.turns.to_string(),
                r.moves.to_string(),
                r.rounds.to_string(),
            ]
        })
        .collect();
    crate::report::write_atomic(&out_dir.join("games.csv"), &crate::report::csv_bytes(&header, &rows))?;
    for (r, rep) in &results {
        if let Some(rep) = rep {
            let file = out_dir.join("replays").join(format!("encounter{}-{}-vs-{}.json", r.encounter, r.red, r.blue).replace(' ', "_"));
            crate::report::write_atomic(&file, serde_json::to_string_pretty(rep)?.as_bytes())?;
        }
    }
    let names: Vec<&str> = cfg.ais.iter().map(|a| a.name.as_str()).collect();
    let mut md = format!(
        "Win rate of the row AI against the column AI over decided games (95% Wilson CI); {} encounters from `{}`, each pair on both sides.\n\n",
        t.encounters,
        t.game.display()
    );
    md.push_str(&format!("| row \\ column | {} |\n|---|{}\n", names.join(" | "), "---|".repeat(n_ai)));
    let mut summary_rows = Vec::new();
    let tally = |x: usize, y: usize| {
        let (mut wins, mut losses, mut draws, mut limits) = (0u64, 0u64, 0u64, 0u64);
        for (r, _) in &results {
            let (xr, yr) = (r.red == names[x] && r.blue == names[y], r.blue == names[x] && r.red == names[y]);
            if !xr && !yr {
                continue;
            }
            match r.result.as_str() {
                "draw" => draws += 1,
                "turn limit" => limits += 1,
                w if (w == probe.players[0]) == xr => wins += 1,
                _ => losses += 1,
            }
        }
        (wins, losses, draws, limits)
    };
    for x in 0..n_ai {
        let mut cells = Vec::new();
        for y in 0..n_ai {
            if x == y {
                cells.push("–".to_string());
                continue;
            }
            let (w, l, d, lim) = tally(x, y);
            let (lo, hi) = wilson(w, w + l);
            let rate = if w + l == 0 { f64::NAN } else { w as f64 / (w + l) as f64 };
            cells.push(format!("{:.1}% ({:.1}–{:.1})", 100.0 * rate, 100.0 * lo, 100.0 * hi));
            if x < y {
                summary_rows.push(vec![
                    names[x].to_string(),
                    names[y].to_string(),
                    w.to_string(),
                    l.to_string(),
                    d.to_string(),
                    lim.to_string(),
                    format!("{rate:.4}"),
                    format!("{lo:.4}"),
                    format!("{hi:.4}"),
                ]);
            }
        }
        md.push_str(&format!("| **{}** | {} |\n", names[x], cells.join(" | ")));
    }
    md.push_str("\n| pair | games | row wins | column wins | draws | turn limit | mean turns |\n|---|---|---|---|---|---|---|\n");
    for &(a, b) in &pairs {
        let (w, l, d, lim) = tally(a, b);
        let games: Vec<&GameRecord> = results
            .iter()
            .map(|(r, _)| r)
            .filter(|r| (r.red == names[a] && r.blue == names[b]) || (r.red == names[b] && r.blue == names[a]))
            .collect();
        let mean_turns = games.iter().map(|r| r.turns as f64).sum::<f64>() / games.len().max(1) as f64;
        md.push_str(&format!("| {} vs {} | {} | {w} | {l} | {d} | {lim} | {mean_turns:.1} |\n", names[a], names[b], games.len()));
    }
    let sh: Vec<String> = ["row", "column", "row_wins", "column_wins", "draws", "turn_limit", "win_rate", "ci_low", "ci_high"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    crate::report::write_atomic(&out_dir.join("table.csv"), &crate::report::csv_bytes(&sh, &summary_rows))?;
    crate::report::write_atomic(&out_dir.join("table.md"), md.as_bytes())?;
    crate::report::write_atomic(&out_dir.join("config.toml"), toml::to_string(cfg)?.as_bytes())?;
    Ok(md)
}

/// Plays a recorded game again and prints it turn by turn, with the hex map when there is one.
pub fn replay(path: &Path, out: &mut dyn std::io::Write) -> Result<()> {
    let text = crate::input::read_text(path)?;
    let rep: Replay = serde_json::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    // Absolute in what this version writes; an older replay's path held from the working
    // folder it was made in: found from here, or from the replay's folder and above.
    let game = crate::report::run_dir::find_named(&rep.game, path).ok_or_else(|| {
        anyhow!(
            "{}: the game {} named by the replay was not found (from the working folder, or from {} and the folders above it); expected the game's file",
            path.display(),
            rep.game.display(),
            path.parent().unwrap_or(Path::new(".")).display()
        )
    })?;
    let program = rep.program(&game)?;
    let game = WgdlGame::new(program.clone()).with_seed(rep.chance_seed);
    let render = |e: crate::wgdl::RuntimeError| anyhow!("{}", e.render(&program));
    let mut st = game.initial().map_err(render)?;
    let mut legal = Vec::new();
    let sides: Vec<String> = rep
        .players
        .iter()
        .enumerate()
        .map(|(k, who)| format!("{who} ({})", program.players.get(k).map_or("the player", |s| s.as_str())))
        .collect();
    writeln!(out, "{}: {}", rep.game.display(), sides.join(" vs "))?;
    if program.turn.is_none() {
        // Without turns there is no turn header to show the board under: the start, then the end.
        write!(out, "{}", board(&program, &st))?;
    }
    let mut last_turn = u32::MAX;
    for (i, name) in rep.moves.iter().enumerate() {
        if program.turn.is_some() && st.turns != last_turn {
            last_turn = st.turns;
            let side = program.players.get(st.to_move as usize).map_or("?", |s| s.as_str());
            writeln!(out, "\n— round {}, turn {}: {} ({side}) —", st.round + 1, st.turns + 1, program.object_label(&st, st.actor))?;
            write!(out, "{}", board(&program, &st))?;
        }
        game.legal(&st, &mut legal).map_err(render)?;
        let Some(&m) = legal.iter().find(|&&m| program.action_name(&st, m) == *name) else {
            bail!("{}: move {} `{name}` is not legal here; the replay does not match the game", path.display(), i + 1);
        };
        writeln!(out, "  {name}")?;
        game.apply(&mut st, m).map_err(render)?;
    }
    game.legal(&st, &mut legal).map_err(render)?;
    writeln!(out, "\nend: {} after {} turns ({} rounds)", result_name(&program, game.status(&st, &legal)), st.turns, st.round)?;
    write!(out, "{}", board(&program, &st))?;
    Ok(())
}

/// The grids as text ([`crate::view::text::grids`]), indented, then the hex map ([`hex_board`]).
pub(crate) fn board(program: &Program, st: &crate::wgdl::State) -> String {
    let grids: String = crate::view::text::grids(program, st).lines().map(|l| format!("    {l}\n")).collect();
    grids + &hex_board(program, st)
}

/// The hex map with every occupant as its glyph's first letter (lower case once it no longer
/// counts, as `hexOccupants … while` says) and a number, then each with its `view … bar` values.
fn hex_board(program: &Program, st: &crate::wgdl::State) -> String {
    let Some(h) = &program.hex else { return String::new() };
    let scene = crate::view::scene(program, st, "");
    let Some(crate::view::Board::Hex(hb)) = scene.boards.iter().find(|b| matches!(b, crate::view::Board::Hex(_))) else {
        return String::new();
    };
    let mut at: Vec<Option<char>> = vec![None; h.len()];
    let mut lines = String::new();
    let mut count: std::collections::HashMap<char, u32> = std::collections::HashMap::new();
    for p in &hb.pieces {
        let letter = p.glyph.chars().next().unwrap_or('?').to_ascii_uppercase();
        let n = count.entry(letter).or_insert(0);
        *n += 1;
        let ch = char::from_digit(*n, 10).unwrap_or('+');
        let vals: Vec<String> = p.bars.iter().map(|(name, v, _)| format!("{name} {v}")).collect();
        let vals = if vals.is_empty() { String::new() } else { format!(" ({})", vals.join(", ")) };
        lines.push_str(&format!("    {letter}{ch} = {}{vals}\n", p.label));
        if at[p.cell].is_none() {
            at[p.cell] = Some(if p.faded { letter.to_ascii_lowercase() } else { letter });
        }
    }
    let map = h.render(|c| at[c]);
    let mut s: String = map.lines().map(|l| format!("    {l}\n")).collect();
    s.push_str(&lines);
    s
}

// The job kind `tournament.game`: one game (an encounter, an AI pair, a side); its output the
// game's record and, for the first encounters, its replay. A worker samples the encounters it
// plays from the seed (the same draw as the driver's, written into the game it compiled once)
// and keeps the last few; the context is the config with the game's absolute path and the
// game's hash (text and map).

/// The config (its game path absolute) and the game's hash as the driver read it.
pub type TournamentContext = Context<TournamentConfig>;

impl Context<TournamentConfig> {
    pub fn new(cfg: &TournamentConfig, game_hash: u64) -> Result<TournamentContext> {
        let mut config = cfg.clone();
        config.tournament.game = std::path::absolute(&cfg.tournament.game)?;
        Ok(Context::bare(config, game_hash))
    }
}

/// One game: encounter `encounter`, AI pair `pair`, `side` 0 (the pair's first AI is red) or 1.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct GameJob {
    pub encounter: u64,
    pub pair: usize,
    pub side: usize,
}

type Encounter = Arc<(Arc<Program>, Vec<(String, f64)>)>;

pub struct Worker {
    cfg: TournamentConfig,
    /// The game compiled once (encounters are written into it).
    probe: Arc<Program>,
    /// The encounters sampled last (a chunk's jobs come encounter by encounter).
    sampled: Mutex<Vec<(u64, Encounter)>>,
}

/// One tournament game (`tournament.game`).
pub struct TournamentGame;

impl JobKind for TournamentGame {
    const NAME: &'static str = "tournament.game";
    type Context = TournamentContext;
    type Worker = Worker;
    type Job = GameJob;
    type Output = (GameRecord, Option<Replay>);

    fn worker(ctx: &TournamentContext) -> Result<Worker> {
        let source = Source::load(&ctx.config.tournament.game, &base_options(&ctx.config))?;
        crate::exec::same_game(&source.path, source.hash, ctx.game_hash)?;
        Ok(Worker { cfg: ctx.config.clone(), probe: source.program, sampled: Mutex::new(Vec::new()) })
    }

    fn run(w: &Worker, job: &GameJob) -> Result<(GameRecord, Option<Replay>)> {
        let found = w.sampled.lock().unwrap_or_else(|p| p.into_inner()).iter().find(|(k, _)| *k == job.encounter).map(|(_, e)| e.clone());
        let encounter = match found {
            Some(e) => e,
            None => {
                let t = &w.cfg.tournament;
                let e = Arc::new(sample_from(&w.probe, &t.game, &base_options(&w.cfg), t.seed, job.encounter)?);
                let mut sampled = w.sampled.lock().unwrap_or_else(|p| p.into_inner());
                if sampled.len() >= 8 {
                    sampled.remove(0);
                }
                sampled.push((job.encounter, e.clone()));
                e
            }
        };
        play_one(&w.cfg, &encounter, (job.encounter, job.pair, job.side))
    }
}
