//! `playforge gdl-match`: matches of a GDL game between in-process players (Player2 under its
//! start and play clocks, MCTS with a fixed number of iterations per move, a random player),
//! seats rotating from match to match; the move records, the goals, and a table of each
//! player's mean goal and win rate with 95% Wilson intervals; a match that reaches
//! `--max-steps` without a terminal state is recorded as aborted and counts in neither. Also
//! `playforge check` on a `.kif` file and `playforge ggp` (the HTTP protocol: `src/gdl/ggp/`).
//!
//! Reproducibility: MCTS and random draw from streams derived from (seed, match, role); Player2
//! is clock-bound, so its depth — and with it its moves — depends on the machine's speed.

use crate::game::Game;
use crate::gdl::{Gdl, GoalEval, JointMove};
use crate::search::formula::Formula;
use crate::search::mcts::{FinalChoice, MctsConfig, decision_tree};
use crate::search::player2::{Player2Config, Session};
use anyhow::{Context, Result, bail};
use rand::RngExt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct GdlMatchArgs {
    /// The game description (.kif, GDL).
    pub game: PathBuf,
    /// One player per role, comma-separated: player2, mcts or random (rotated over the roles
    /// from match to match).
    #[arg(long, default_value = "player2,mcts")]
    pub players: String,
    /// Seconds of the start clock (Player2 pre-searches the initial state).
    #[arg(long, default_value_t = 1.0)]
    pub startclock: f64,
    /// Seconds of the play clock (Player2's time per move).
    #[arg(long, default_value_t = 0.5)]
    pub playclock: f64,
    /// MCTS iterations per move.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub mcts_iterations: u64,
    /// Joint moves after which a match with no terminal state is ended as aborted (no goals).
    #[arg(long, default_value_t = DEFAULT_MAX_STEPS, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub max_steps: u64,
    /// Matches to play (with --tournament: per seating).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub matches: u64,
    /// Every ordered choice of distinct players from --players for the roles (all pairings,
    /// both seatings), --matches times each.
    #[arg(long)]
    pub tournament: bool,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output folder (default outputs/gdl_match/<game>-seed-<seed>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// The default step limit of a match: every corpus game that ends under random play ends
/// within 201 joint moves, and 300 moves at a 0.25 s play clock take 75 s.
pub const DEFAULT_MAX_STEPS: u64 = 300;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Player2,
    Mcts,
    Random,
}

fn parse_players(s: &str) -> Result<Vec<Kind>> {
    s.split(',')
        .map(|p| match p.trim() {
            "player2" => Ok(Kind::Player2),
            "mcts" => Ok(Kind::Mcts),
            "random" => Ok(Kind::Random),
            other => bail!("--players: unknown player `{other}`; expected player2, mcts or random"),
        })
        .collect()
}

fn clock(secs: f64, what: &str) -> Result<Duration> {
    if !(secs > 0.0 && secs <= 3600.0) {
        bail!("--{what} {secs}: expected seconds in (0, 3600]");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// One match: the joint moves as text, one line per step, and each role's goal (none when the
/// match reached --max-steps without a terminal state).
fn play_match(g: &Arc<Gdl>, seats: &[Kind], a: &GdlMatchArgs, m: u64) -> Result<(Vec<String>, Option<Vec<u8>>)> {
    let (start, play) = (clock(a.startclock, "startclock")?, clock(a.playclock, "playclock")?);
    let mut sessions: Vec<Option<Session<Gdl>>> = seats
        .iter()
        .enumerate()
        .map(|(r, k)| (*k == Kind::Player2).then(|| Session::new(g.clone(), r, Player2Config::default())))
        .collect();
    for s in sessions.iter_mut().flatten() {
        s.start(start).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let mut rngs: Vec<_> = (0..seats.len()).map(|r| crate::rng::stream(a.seed, m, r as u64, 0)).collect();
    let cfg = MctsConfig { formula: Formula::ucb1(std::f64::consts::SQRT_2, 1.0), ..MctsConfig::default() };
    let f = cfg.formula.compile();
    let mut st = g.initial().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut legal = Vec::new();
    let mut record = Vec::new();
    loop {
        g.legal(&st, &mut legal).map_err(|e| anyhow::anyhow!("{e}"))?;
        if g.status(&st, &legal) != crate::wgdl::Status::Running {
            break;
        }
        if record.len() as u64 >= a.max_steps {
            return Ok((record, None));
        }
        // Each role picks its own action; the joint move is made of them. A role with one
        // legal action (a `noop` while another moves) plays it without searching.
        let per_role = g.legal_actions(&st);
        let mut joint: JointMove = 0;
        for (r, kind) in seats.iter().enumerate() {
            if let [only] = per_role[r][..] {
                joint |= crate::gdl::game::joint_part(only, r);
                continue;
            }
            let pick: JointMove = match kind {
                Kind::Random => legal[rngs[r].random_range(0..legal.len())],
                Kind::Mcts => {
                    let eval = GoalEval { game: &**g };
                    let t = decision_tree(&**g, &st, &cfg, &eval, a.mcts_iterations, &mut rngs[r]).map_err(|e| anyhow::anyhow!("{e}"))?;
                    t.final_choice(&f, FinalChoice::MostVisited).map(|c| c.0).unwrap_or(legal[0])
                }
                Kind::Player2 => sessions[r]
                    .as_mut()
                    .expect("a session per Player2 seat")
                    .play(&st, play)
                    .map_err(|e| anyhow::anyhow!("{e}"))?
                    .unwrap_or(legal[0]),
            };
            joint |= crate::gdl::game::joint_part(Gdl::action_of(pick, r), r);
        }
        record.push(g.show_move(joint));
        g.apply(&mut st, joint).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok((record, Some(g.goal_values(&st))))
}

pub fn gdl_match(a: &GdlMatchArgs) -> Result<()> {
    let g = Arc::new(crate::gdl::load(&a.game)?);
    let players = parse_players(&a.players)?;
    if players.len() != g.roles() && !a.tournament {
        bail!(
            "--players: {} players for {} roles ({}); expected one per role (or --tournament)",
            players.len(),
            g.roles(),
            (0..g.roles()).map(|r| g.role_name(r)).collect::<Vec<_>>().join(", ")
        );
    }
    let stem = a.game.file_stem().and_then(|s| s.to_str()).unwrap_or("game");
    let out = a.out.clone().unwrap_or_else(|| Path::new("outputs/gdl_match").join(format!("{stem}-seed-{}", a.seed)));
    std::fs::create_dir_all(&out)?;
    // The game these records belong to, for the report's viewer (`web::replay::gdl_frames`).
    crate::report::write_atomic(&out.join("game.txt"), format!("{}\n", a.game.display()).as_bytes())?;
    let n = g.roles();
    let mut csv = String::from("match,ended,steps,");
    csv += &(0..n).map(|r| format!("{}_player,{}_goal", g.role_name(r), g.role_name(r))).collect::<Vec<_>>().join(",");
    csv.push('\n');
    // Per player kind: goals summed, wins (a goal strictly above every other role's), games
    // ended, games aborted at the step limit (which count in neither).
    let mut stats: Vec<(Kind, f64, u64, u64, u64)> = Vec::new();
    // The seatings: the players rotated over the roles, or under --tournament every ordered
    // choice of distinct players for the roles (each player alone in a one-role game).
    let seatings: Vec<Vec<Kind>> = if a.tournament {
        let mut all: Vec<Vec<usize>> = vec![Vec::new()];
        for _ in 0..n {
            let mut longer = Vec::new();
            for s in &all {
                for i in (0..players.len()).filter(|i| !s.contains(i)) {
                    longer.push([s.clone(), vec![i]].concat());
                }
            }
            all = longer;
        }
        if all.is_empty() {
            bail!("--tournament: {} players for {n} roles; expected at least {n} distinct players", players.len());
        }
        all.into_iter().map(|s| s.into_iter().map(|i| players[i]).collect()).collect()
    } else {
        (0..players.len()).map(|k| (0..n).map(|r| players[(r + k) % players.len()]).collect()).collect()
    };
    let total = if a.tournament { a.matches * seatings.len() as u64 } else { a.matches };
    for m in 0..total {
        let seats: Vec<Kind> = seatings[(m % seatings.len() as u64) as usize].clone();
        let (record, goals) = play_match(&g, &seats, a, m)?;
        let mut moves = String::new();
        for (k, line) in record.iter().enumerate() {
            writeln!(moves, "{k:>4}  {line}")?;
        }
        match &goals {
            Some(goals) => {
                writeln!(moves, "goals: {}", (0..n).map(|r| format!("{} {}", g.role_name(r), goals[r])).collect::<Vec<_>>().join(", "))?
            }
            None => writeln!(moves, "aborted: no terminal state after {} joint moves (--max-steps)", record.len())?,
        }
        crate::report::write_atomic(&out.join(format!("match-{m}.moves")), moves.as_bytes())?;
        write!(csv, "{m},{},{}", if goals.is_some() { "terminal" } else { "aborted" }, record.len())?;
        for r in 0..n {
            let s = match stats.iter_mut().position(|s| s.0 == seats[r]) {
                Some(i) => &mut stats[i],
                None => {
                    stats.push((seats[r], 0.0, 0, 0, 0));
                    stats.last_mut().expect("just pushed")
                }
            };
            let Some(goals) = &goals else {
                write!(csv, ",{:?},", seats[r])?;
                s.4 += 1;
                continue;
            };
            write!(csv, ",{:?},{}", seats[r], goals[r])?;
            // A win: strictly above every other role; alone, the full 100.
            let won = if n == 1 { goals[r] == 100 } else { (0..n).all(|o| o == r || goals[r] > goals[o]) };
            s.1 += goals[r] as f64;
            s.2 += won as u64;
            s.3 += 1;
        }
        csv.push('\n');
        let seats_text = seats.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(" vs ");
        match &goals {
            Some(goals) => outln!("match {m}: {seats_text} — goals {goals:?} in {} steps", record.len())?,
            None => outln!("match {m}: {seats_text} — aborted after {} steps (--max-steps)", record.len())?,
        }
    }
    crate::report::write_atomic(&out.join("matches.csv"), csv.as_bytes())?;
    let mut table =
        String::from("| player | seats | mean goal | wins | win rate (95% Wilson) | aborted |\n|---|---:|---:|---:|---|---:|\n");
    for (k, sum, wins, games, aborted) in &stats {
        if *games == 0 {
            writeln!(table, "| {k:?} | 0 | – | 0 | – | {aborted} |")?;
            continue;
        }
        let (lo, hi) = crate::report::stats::wilson(*wins, *games);
        let (mean, rate) = (sum / *games as f64, *wins as f64 / *games as f64);
        writeln!(table, "| {k:?} | {games} | {mean:.1} | {wins} | {rate:.2} [{lo:.2}, {hi:.2}] | {aborted} |")?;
    }
    crate::report::write_atomic(&out.join("table.md"), table.as_bytes())?;
    out!("{table}")?;
    outln!("wrote {}", out.display())?;
    super::write_report(&out)?;
    Ok(())
}

/// `playforge check` on a .kif file: roles, sizes, the initial state's legal moves.
pub fn check(path: &Path, trace: Option<&Path>) -> Result<()> {
    let (g, report) = crate::gdl::load_reported(path, Default::default())?;
    eprint!("{}", report.render_warnings());
    let st = g.initial().map_err(|e| anyhow::anyhow!("{e}"))?;
    outln!(
        "{}: ok{}",
        path.display(),
        match report.warnings.len() {
            0 => String::new(),
            1 => " (1 warning)".into(),
            n => format!(" ({n} warnings)"),
        }
    )?;
    outln!("  roles        {}", (0..g.roles()).map(|r| g.role_name(r)).collect::<Vec<_>>().join(", "))?;
    outln!("  reasoner     {}", g.reasoner_name())?;
    outln!("  because      {}", report.why())?;
    outln!("  initial      {}", g.show_state(&st).join(" "))?;
    let per_role = g.legal_actions(&st);
    for (r, acts) in per_role.iter().enumerate() {
        outln!("  legal        {}: {}", g.role_name(r), acts.iter().map(|&i| g.action_name(r, i)).collect::<Vec<_>>().join(" "))?;
    }
    if let Some(trace) = trace {
        let text = crate::input::read_text(trace)?;
        let t = std::time::Instant::now();
        let done = crate::gdl::trace::replay(&g, &text).map_err(|e| anyhow::anyhow!("{}:{e}", trace.display()))?;
        outln!(
            "  trace        {}: agrees, {} games, {} states ({:.1} s)",
            trace.display(),
            done.games,
            done.states,
            t.elapsed().as_secs_f64()
        )?;
    }
    Ok(())
}

#[derive(clap::Subcommand, Debug)]
pub enum GgpCommand {
    /// Serve a player on 127.0.0.1:PORT for GGP game managers (INFO, START, PLAY, STOP, ABORT).
    Serve {
        #[arg(long, default_value_t = 9147)]
        port: u16,
        /// player2, mcts or random.
        #[arg(long, default_value = "player2")]
        player: String,
        /// MCTS iterations per move (for --player mcts).
        #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
        mcts_iterations: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Run a match over HTTP between players: URLs (host:port) or player2 / mcts / random, for
    /// which a server process is started on a free port. Writes the move record and the goals.
    Match {
        /// The game description (.kif).
        game: PathBuf,
        /// One player per role, comma-separated.
        #[arg(long)]
        players: String,
        /// Seconds of the start clock.
        #[arg(long, default_value_t = 5.0)]
        startclock: f64,
        /// Seconds of the play clock.
        #[arg(long, default_value_t = 2.0)]
        playclock: f64,
        /// Joint moves after which a match with no terminal state is aborted (recorded so).
        #[arg(long, default_value_t = DEFAULT_MAX_STEPS, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        max_steps: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output folder (default outputs/ggp/<game>-seed-<seed>/).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn kind_of(player: &str, iterations: u64) -> Result<crate::gdl::ggp::PlayerKind> {
    use crate::gdl::ggp::PlayerKind;
    Ok(match player {
        "player2" => PlayerKind::Player2,
        "mcts" => PlayerKind::Mcts { iterations },
        "random" => PlayerKind::Random,
        p => bail!("--player {p}: expected player2, mcts or random"),
    })
}

pub fn ggp(cmd: &GgpCommand) -> Result<()> {
    match cmd {
        GgpCommand::Serve { port, player, mcts_iterations, seed } => {
            let kind = kind_of(player, *mcts_iterations)?;
            crate::gdl::ggp::serve(*port, kind, *seed, None, |p| eprintln!("ggp: {player} listening on http://127.0.0.1:{p}/"))
        }
        GgpCommand::Match { game, players, startclock, playclock, max_steps, seed, out } => {
            let rules = crate::input::read_text(game)?;
            // Fails early, with file:line:column, on a bad description.
            crate::gdl::load(game)?;
            let (start, play) = (clock(*startclock, "startclock")?, clock(*playclock, "playclock")?);
            let mut children = Vec::new();
            let mut urls = Vec::new();
            for p in players.split(',').map(str::trim) {
                if matches!(p, "player2" | "mcts" | "random") {
                    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
                    let child = std::process::Command::new(std::env::current_exe()?)
                        .args(["ggp", "serve", "--port", &port.to_string(), "--player", p, "--seed", &seed.to_string()])
                        .stderr(std::process::Stdio::null())
                        .spawn()
                        .context("cannot start a player server")?;
                    children.push(child);
                    urls.push(format!("127.0.0.1:{port}"));
                } else {
                    urls.push(p.to_string());
                }
            }
            // Our servers listen within moments; wait until each answers INFO.
            for u in &urls {
                let t = std::time::Instant::now();
                while crate::gdl::ggp::send(u, "(info)", Duration::from_millis(200)).is_err() {
                    if t.elapsed() > Duration::from_secs(10) {
                        bail!("player {u} does not answer (info)");
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            let played = crate::gdl::ggp::run_match(&rules, &urls, start, play, *seed, *max_steps);
            for mut c in children {
                let _ = c.kill();
                let _ = c.wait();
            }
            let played = played?;
            let stem = game.file_stem().and_then(|s| s.to_str()).unwrap_or("game");
            let out = out.clone().unwrap_or_else(|| Path::new("outputs/ggp").join(format!("{stem}-seed-{seed}")));
            std::fs::create_dir_all(&out)?;
            let mut rec = String::new();
            writeln!(rec, "players: {}", urls.join(", "))?;
            for (k, m) in played.moves.iter().enumerate() {
                writeln!(rec, "{k:>4}  {m}")?;
            }
            for n in &played.notes {
                writeln!(rec, "note: {n}")?;
            }
            let slow = |f: fn(&(Duration, Duration)) -> Duration| {
                played.slowest.iter().map(|d| format!("{:.3}", f(d).as_secs_f64())).collect::<Vec<_>>().join(", ")
            };
            writeln!(rec, "slowest answers (s): start [{}], play [{}]", slow(|d| d.0), slow(|d| d.1))?;
            match &played.goals {
                Some(goals) => writeln!(rec, "goals: {goals:?}")?,
                None => writeln!(rec, "aborted: no terminal state after {} joint moves (--max-steps)", played.moves.len())?,
            }
            crate::report::write_atomic(&out.join("match.moves"), rec.as_bytes())?;
            crate::report::write_atomic(&out.join("game.txt"), format!("{}\n", game.display()).as_bytes())?;
            out!("{rec}")?;
            outln!("wrote {}", out.join("match.moves").display())?;
            super::write_report(&out)?;
            Ok(())
        }
    }
}

/// Random playouts of a GDL game on one thread for `seconds` (the `bench` row of a `.kif`):
/// every role picks uniformly among its legal actions (ggp-base's random depth charge), through
/// the reasoner `check` chooses. Returns (whole playouts, joint moves, seconds).
pub fn bench_random(path: &Path, seconds: f64, seed: u64) -> Result<(u64, u64, f64)> {
    let g = crate::gdl::load(path)?;
    let start = g.initial().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut rng = crate::rng::stream(seed, 0, 0, 0);
    let mut legal = Vec::new();
    let (mut playouts, mut moves) = (0u64, 0u64);
    let t0 = std::time::Instant::now();
    // A playout cut by the clock counts its moves, not itself (a chess game may outlast it).
    'clock: while t0.elapsed().as_secs_f64() < seconds {
        let mut st = start.clone();
        loop {
            g.legal(&st, &mut legal).map_err(|e| anyhow::anyhow!("{e}"))?;
            if g.status(&st, &legal) != crate::wgdl::Status::Running {
                break;
            }
            let mv: JointMove = legal[rng.random_range(0..legal.len())];
            g.apply(&mut st, mv).map_err(|e| anyhow::anyhow!("{e}"))?;
            moves += 1;
            if t0.elapsed().as_secs_f64() >= seconds {
                break 'clock;
            }
        }
        playouts += 1;
    }
    Ok((playouts, moves, t0.elapsed().as_secs_f64()))
}
