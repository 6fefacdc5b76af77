//! The command line: clap definitions and a thin dispatch. Two stages, as in ripgrep: the raw
//! arguments are validated by clap, then each subcommand builds library objects and reports.
//! `anyhow` is used only here; the library's errors are typed.

/// `println!` for command output that returns the write error instead of panicking: a closed
/// pipe (`playforge … | head -1`) ends the command quietly ([`main`] treats it as success).
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($t)*)
    }};
}

/// `print!` as [`outln!`] does `println!`.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($t)*)
    }};
}

mod balance;
mod experiment;
mod gdl;
mod generate;
mod persona;
mod playtest;
mod run;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "playforge", version, about = "Machine playtesting and balancing of games written in WGDL", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Which tier evaluates WGDL expressions: `interp` (the closures) or `compiled` (machine code
    /// generated where the compiled tier covers an expression; builds with the cargo feature
    /// `compiled` only). Results are the same either way.
    #[arg(long, global = true, value_enum, default_value_t = TierArg::Interp)]
    tier: TierArg,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TierArg {
    Interp,
    Compiled,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and check a game; print its warnings and a summary (classes, objects, actions,
    /// rules, goals, groups).
    Check {
        /// The game description (.wgdl, or .kif for GDL).
        game: PathBuf,
        /// For a .kif: replay a reference reasoner's trace of games (benches/ggp/ProverTrace.java
        /// writes ggp-base's) and compare every state, legal move, terminal test and goal.
        #[arg(long)]
        trace: Option<PathBuf>,
    },
    /// Play random or scripted moves and print each move with the values it changed.
    Run(run::RunArgs),
    /// Measure random playouts per second on one thread (`--mcts`: MCTS iterations per second on
    /// 1 and 2 threads).
    Bench(run::BenchArgs),
    /// Count a game's move sequences of each length from its start (perft), to check a
    /// description against another implementation's published counts (`--divide` splits the
    /// count by first move).
    Perft(run::PerftArgs),
    /// Search a game as a TOML config describes (result formula, profile, MCTS/NMCS and its
    /// enhancements); print the best result and write outputs/<experiment>/seed-<seed>/.
    Play(experiment::PlayArgs),
    /// Repeat play configurations over many seeds; write a CSV, a bar chart of mean ± 95% CI and
    /// Welch t-tests between the configurations. A config with a [compare] table compares the
    /// balance optimizers instead (ES vs SA vs CMA-ES over seeds, same budget).
    Experiment(experiment::ExperimentArgs),
    /// Play AIs (MCTS, WGDL policies, random) against each other on random valid encounters of
    /// a two-player game; print a win-rate table with 95% CIs, write games.csv, table.csv/.md
    /// and a few replays to outputs/<name>/seed-<seed>/.
    Tournament(experiment::TournamentArgs),
    /// Generate a balanced encounter: evolve the declared parameters of a two-player game so that
    /// AI pairs' games come out even, last the target length and the teams differ (HexMage's ES,
    /// simulated annealing or CMA-ES). Writes outputs/<name>/<optimizer>-seed-<seed>/ (history.csv,
    /// best_encounter.toml, best_dna.txt, convergence.png, replays/, checkpoint.json).
    Balance(balance::BalanceArgs),
    /// Play an encounter (a best_encounter.toml) afresh with every AI pair of its balance config;
    /// report each side's win rate with 95% CIs and the game-length distribution. Given
    /// generated content (a `generate` run's best.toml, an elite, or the run folder for every
    /// elite of its map): every measure and target on fresh seeds with 95% intervals.
    Verify(balance::VerifyArgs),
    /// Generate content for any WGDL game: evolve its declared parameters until the players'
    /// measures meet the designer's targets (bands, directions, relations between players), or
    /// fill a map of good answers over behaviour descriptors (MAP-Elites, CMA-ME). Writes
    /// outputs/<name>/<algorithm>-seed-<seed>/ (best.toml; for a map archive.csv, archive.png,
    /// elites/; history.csv, convergence.png, checkpoint.json).
    Generate(generate::GenerateArgs),
    /// Sample random encounters of a balance config and their one-mutation neighbours; report the
    /// ratio of worse to better neighbours and their mean |ΔF| (HexMage: about 5 : 1, 4–7× steeper).
    Landscape(balance::LandscapeArgs),
    /// Evolve procedural personas: genetic programming over the MCTS selection formula so that
    /// an MCTS player maximizes or minimizes a measure (score, legal moves, any game value) —
    /// Mugrai et al. 2019 on any WGDL game. Writes outputs/<name>/seed-<seed>/<persona>/ (history.csv,
    /// convergence.png, hall_of_fame.md, best_formula.txt, population.csv, checkpoint.json) and
    /// held_out.md comparing every persona with vanilla MCTS and a random player on fresh seeds.
    Personas(persona::PersonasArgs),
    /// Play a saved persona formula (or vanilla MCTS, or a random player) on given seeds and
    /// print each game's score, mean legal moves and the persona's measure.
    PersonaPlay(persona::PersonaPlayArgs),
    /// Playtest experiment (Monster Carlo): play styles × design variants × replicates of an MCTS
    /// search over the whole game with fixed chance per replicate; compare the highest scores
    /// seen. Writes outputs/<name>/seed-<seed>/ (summary.md with Mann-Whitney U tests, playtest.png with the
    /// final scores and the best-so-far curves, curves/*.csv, finals.csv, best/*.moves, runs/).
    Playtest(playtest::PlaytestArgs),
    /// Humans beside the personas (Mugrai et al. 2019, Tables I and II): replay a folder of human
    /// traces (games played through `playforge serve`), group them into boards by chance seed,
    /// play every persona of a personas run, vanilla MCTS and a random player on the same
    /// boards, and write per board the human mean, minimum and maximum beside each agent's
    /// score, whether MinS and MaxS bracket the humans, histograms and a chart to
    /// outputs/<name>/humans/.
    Humans(persona::HumansArgs),
    /// Play a recorded game (JSON, e.g. from a tournament's replays/) again, turn by turn, with
    /// an ASCII hex map.
    Replay {
        /// The replay file.
        file: std::path::PathBuf,
    },
    /// Write a run folder's report.html (every run writes one at its end; this writes it again,
    /// for an older run or after `verify`): one self-contained page with the config, the charts,
    /// the tables, the best content drawn on its board and a viewer stepping through the recorded
    /// games. It opens from disk; nothing is fetched.
    Report {
        /// The run folder, e.g. outputs/hexmage_balance/cma-seed-1.
        dir: std::path::PathBuf,
    },
    /// A local web app: browse the run folders and their reports, and play any WGDL game in the
    /// browser — alone, against an AI (random, MCTS, the game's policies, a persona of a personas
    /// run), or watching AIs play.
    /// Each game a person plays is saved as a trace (the replay format, with its chance seed)
    /// under <outputs>/traces/ (one file per game played; a finished one is never rewritten).
    /// Listens on 127.0.0.1 only unless --host says otherwise: on any other address every page
    /// needs the server's token, given in the address printed at start (http://…/?token=…).
    /// Each game started gets a secret id: no other client can move, undo or restart it.
    Serve {
        /// The port (0: any free port, printed at start).
        #[arg(long, default_value_t = 8765)]
        port: u16,
        /// The address to listen on; the default keeps the app on this machine.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// The folder of run folders to browse (traces are written under it).
        #[arg(long, default_value = "outputs")]
        outputs: std::path::PathBuf,
        /// The folder of .wgdl games offered for play.
        #[arg(long, default_value = "games")]
        games: std::path::PathBuf,
        /// The folder of configs: the personas runs of its persona configs (under --outputs)
        /// are offered as players of their game.
        #[arg(long, default_value = "configs")]
        configs: std::path::PathBuf,
        /// MCTS iterations per AI move.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        mcts_iterations: u64,
        /// The server's token (default: a random one, printed in the address when needed); at
        /// least 16 characters of letters, digits, `-` and `_`.
        #[arg(long, value_parser = parse_token)]
        token: Option<String>,
    },
    /// Play matches of a GDL game (.kif) between in-process players — Player2 under start and
    /// play clocks, MCTS, random — seats rotating; write the move records, matches.csv and a
    /// table of mean goals and win rates with 95% Wilson intervals to outputs/gdl_match/.
    GdlMatch(gdl::GdlMatchArgs),
    /// The general game playing protocol over HTTP: `ggp serve` runs a player for game
    /// managers, `ggp match` runs a match between player servers (ours or any URL).
    #[command(subcommand)]
    Ggp(gdl::GgpCommand),
}

/// The run arguments every search command shares (balance, generate, personas, playtest):
/// defined once, flattened into each command's own.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct RunArgs {
    /// Continue an interrupted run from its checkpoint (same config and game; same results).
    #[arg(long)]
    pub resume: bool,
    /// Override the config's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write the run's folder under DIR instead of the config's `out` (default outputs/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub exec: ExecArgs,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The progress bar of a long command: hidden with `--quiet`, else `len` `unit`s with the
/// elapsed time, the estimate of what is left and the command's message.
pub(crate) fn progress_bar(quiet: bool, len: u64, unit: &str) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    let template = format!("{{bar:40}} {{pos}}/{{len}} {unit}  {{elapsed_precise}} (ETA {{eta}})  {{msg}}");
    bar.set_style(indicatif::ProgressStyle::with_template(&template).expect("a valid progress template"));
    bar
}

/// `--ray ADDRESS`, shared by the commands that fan games out.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ExecArgs {
    /// Run the games on a Ray cluster: `local` starts a private local instance (`local:N` with N
    /// CPUs), `auto` joins the running cluster, or give a cluster's address. Same outputs as
    /// without it. Needs the Python package (`bash python/setup.sh`; docs/python.md).
    /// `roundtrip` runs the jobs through the workers' serialized path in this process, no Ray.
    #[arg(long, value_name = "ADDRESS")]
    pub ray: Option<String>,
}

impl ExecArgs {
    /// The executor: Ray's when `--ray` is given, else this process.
    pub(crate) fn executor(&self) -> anyhow::Result<crate::exec::Executor> {
        match self.ray.as_deref() {
            // The worker's path in this process, without Ray (a check of the job seam).
            Some("roundtrip") => Ok(crate::exec::Executor::RoundTrip),
            Some(address) => crate::exec::connect(address),
            None => Ok(crate::exec::Executor::Local),
        }
    }

    /// The line a command prints about where its games ran (`None` when they ran here), and
    /// writes as `executor.txt` beside `timing.csv` (a stale one of an earlier run is removed).
    pub(crate) fn summary(&self, exec: &crate::exec::Executor, dir: &std::path::Path) -> anyhow::Result<Option<String>> {
        if self.ray.is_none() {
            let _ = std::fs::remove_file(dir.join("executor.txt"));
            return Ok(None);
        }
        let line = exec.describe();
        crate::report::write_atomic(&dir.join("executor.txt"), format!("{line}\n").as_bytes())?;
        Ok(Some(format!("executor: {line}")))
    }
}

/// A run that stopped at Ctrl-C after saving its checkpoint: the process exits 130 (128 +
/// SIGINT, what shells and schedulers expect of an interrupted command), not 0, since the run
/// is unfinished. The command has already said how to resume.
#[derive(Debug)]
pub(crate) struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// Writes `dir/report.html` at the end of a run and says where. A failure is a warning: the
/// run's own outputs are already written.
pub(crate) fn write_report(dir: &std::path::Path) -> std::io::Result<()> {
    // An interrupted run says so in its report (and in a report rendered later): the mark stays
    // until a run of the folder ends whole.
    let mark = dir.join(crate::web::report::INTERRUPTED);
    if crate::drive::stop::requested() {
        let _ = crate::report::write_atomic(&mark, b"interrupted: resume with --resume\n");
    } else if mark.exists() {
        let _ = std::fs::remove_file(&mark);
    }
    match crate::web::report::write(dir) {
        Ok(p) => outln!("report: {} (opens in a browser, no network)", p.display()),
        Err(e) => {
            eprintln!("warning: report.html not written in {}: {e:#}", dir.display());
            Ok(())
        }
    }
}

/// `--token`: long enough to guess in no lifetime, and safe in an address and a cookie.
fn parse_token(s: &str) -> Result<String, String> {
    if s.len() < 16 || s.len() > 256 || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err("expected 16 to 256 letters, digits, `-` or `_`".into());
    }
    Ok(s.to_string())
}

/// Ctrl-C asks every loop to stop ([`crate::drive::stop`]; the loop saves and stops at its
/// next safe point, saying `what` it finishes first); a second Ctrl-C quits at once. A second
/// handler cannot be set (tests, repeated calls); the first one is enough.
fn on_interrupt(what: &'static str) {
    let _ = ctrlc::set_handler(move || {
        if crate::drive::stop::request() {
            std::process::exit(130);
        }
        eprintln!("\ninterrupted: {what} (Ctrl-C again to quit at once)");
    });
}

pub fn main() -> ExitCode {
    if let Some(code) = ray_through_python() {
        return ExitCode::from(code);
    }
    ExitCode::from(main_from(std::env::args_os()))
}

/// `--ray` given to the plain binary: the Ray executor lives in the Python package, so the
/// command is run again as `python -m playforge …` with the Python that has it
/// (`$PLAYFORGE_PYTHON`, else this checkout's `.venv` that `python/setup.sh` makes). `None`:
/// no `--ray`, or no such Python (the command then says how to install it).
fn ray_through_python() -> Option<u8> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let ray = args.iter().position(|a| a == "--ray" || a.to_string_lossy().starts_with("--ray="))?;
    if args[ray] == "--ray=roundtrip" || args.get(ray + 1).is_some_and(|a| a == "roundtrip") {
        return None;
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    let python = std::env::var_os("PLAYFORGE_PYTHON").map(PathBuf::from).or_else(|| venv.exists().then_some(venv))?;
    let has_it = std::process::Command::new(&python)
        .args(["-c", "import playforge._core"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_it {
        return None;
    }
    let status = std::process::Command::new(&python).args(["-m", "playforge"]).args(&args).status().ok()?;
    Some(status.code().map_or(1, |c| c.clamp(0, 255) as u8))
}

/// The command line on `args` (the program name first), returning the exit status instead of
/// exiting: `--help`, `--version` and argument errors print and return as `main` would exit.
/// The Python package's `playforge` script and `python -m playforge` run this.
pub fn main_from<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code().clamp(0, 255) as u8;
        }
    };
    if cli.tier == TierArg::Compiled && !crate::wgdl::Tier::AVAILABLE {
        eprintln!(
            "error: --tier compiled: this build has no compiled tier; expected a build with the cargo feature `compiled` (cargo build --release --features compiled)"
        );
        return 2;
    }
    crate::wgdl::Tier::set_default(if cli.tier == TierArg::Compiled {
        crate::wgdl::Tier::Compiled
    } else {
        crate::wgdl::Tier::Interpreted
    });
    let result = match cli.command {
        Command::Check { game, trace } if game.extension().is_some_and(|e| e == "kif") => gdl::check(&game, trace.as_deref()),
        Command::Check { trace: Some(_), .. } => Err(anyhow::anyhow!("--trace replays a GDL reasoner's trace; expected a .kif game")),
        Command::Check { game, .. } => run::check(&game),
        Command::Run(args) => run::run(&args),
        Command::Bench(args) => match &args.external {
            Some(config) => playtest::bench_external(&args, config),
            None => run::bench(&args),
        },
        Command::Perft(args) => run::perft(&args),
        Command::Play(args) => experiment::play(&args),
        Command::Experiment(args) => experiment::experiment(&args),
        Command::Tournament(args) => experiment::tournament(&args),
        Command::Balance(args) => balance::balance(&args),
        Command::Verify(args) if crate::generate::verify::is_generated(&args.file) => generate::verify(&args),
        Command::Verify(args) => balance::verify(&args),
        Command::Generate(args) => generate::generate(&args),
        Command::Landscape(args) => balance::landscape(&args),
        Command::Personas(args) => persona::personas(&args),
        Command::PersonaPlay(args) => persona::persona_play(&args),
        Command::Humans(args) => persona::humans(&args),
        Command::Playtest(args) => playtest::playtest(&args),
        Command::GdlMatch(args) => gdl::gdl_match(&args),
        Command::Ggp(cmd) => gdl::ggp(&cmd),
        Command::Report { dir } => crate::web::report::write(&dir).and_then(|p| {
            outln!("wrote {}", p.display())?;
            Ok(())
        }),
        Command::Serve { port, host, outputs, games, configs, mcts_iterations, token } => {
            let token = token.unwrap_or_else(crate::web::serve::guard::secret);
            let opts = crate::web::serve::ServeOptions { host, port, outputs, games, configs, mcts_iterations, token: Some(token.clone()) };
            crate::web::serve::serve(opts, |addr| {
                let url = crate::web::serve::url(addr, &token);
                if !addr.ip().is_loopback() {
                    eprintln!(
                        "warning: listening on {addr}, beyond this machine: every page needs the token in the address below; share it only with the people who should play"
                    );
                }
                let _ = outln!("playforge serve: open {url} in a browser (Ctrl-C stops)");
            })
        }
        Command::Replay { file } => crate::experiment::tournament::replay(&file, &mut std::io::stdout().lock()),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            if e.downcast_ref::<Interrupted>().is_some() {
                return 130;
            }
            // A closed pipe (`playforge run … | head`) is not an error.
            if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) {
                return 0;
            }
            eprint!("{e:#}");
            if !format!("{e:#}").ends_with('\n') {
                eprintln!();
            }
            1
        }
    }
}
