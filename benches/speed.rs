//! The speed table: every figure of the engine's speed goals, measured in one run on one core,
//! printed as Markdown (`-- --write-docs` puts it into docs/speed.md, between its markers). `cargo bench --bench speed`
//! runs it all; `cargo bench --bench speed -- c4 arena gdl` runs the sections whose names contain a
//! word; `-- --quick` shortens every measurement (for a smoke run, not for figures).
//!
//! Sections: `c4` (Connect Four MCTS from the start: interpreted, native twin, OpenSpiel's C++
//! MCTSBot), `board` (benches/speed/board.rs: Breakthrough, Othello, Hex, checkers and Pig from
//! games/ against OpenSpiel's own — MCTS against its C++ MCTSBot, random playouts, a Python
//! loop through the OpenSpiel door against pyspiel), `arena` (hex arena playouts and MCTS, interpreted and native, and a move's time in
//! its two parts: listing the legal moves, applying one), `match3` (whole
//! persona games at the paper's 250 iterations per move), `playouts` (Simple Coins and Magic
//! Land, the action-group playouts of `playforge bench`), `python` (Connect Four random games in
//! a Python loop, playforge's API beside pyspiel's), `lowered` (the arena lowered by hand over the
//! interpreter's state: what a compiler of whole games would reach), `tiers` (the interpreted and
//! compiled tiers side by side with the native twin and OpenSpiel, built with `--features
//! compiled`) and `ray` (the Ray executor ÷ the local one
//! on the shipped balance config and a short persona run; needs `bash python/setup.sh`) and
//! `scale` (paper-scale personas projected onto 32 and 256 CPUs from the job times measured here).
//!
//! OpenSpiel is measured by `benches/openspiel/connect_four_mcts.py` (and `board_mcts.py`) when a
//! Python that can `import pyspiel` is found (`$OPENSPIEL_PYTHON`, then
//! `benches/openspiel/.venv/bin/python`, then `.venv/bin/python` of `bash python/setup.sh`);
//! `bash benches/openspiel/setup.sh` makes that virtualenv (or pass `--install-openspiel`).
//! Without one the row says so and the rest runs.
//!
//! Speed goals are measured here, never in timed tests (the tests check results, not time).

#[path = "speed/board.rs"]
mod board;
#[path = "speed/docs.rs"]
mod docs;
#[path = "lowered/hex_arena.rs"]
#[allow(dead_code)]
mod lowered_hex_arena;
#[path = "../tests/native/connect_four.rs"]
#[allow(dead_code)]
mod native_connect_four;
#[path = "../tests/native/hex_arena.rs"]
#[allow(dead_code)]
mod native_hex_arena;

use playforge::game::{Game, WgdlGame, pick_grouped};
use playforge::search::formula::Formula;
use playforge::search::mcts::{Evaluator, Goals, MctsConfig, decision_tree};
use playforge::wgdl::Status;
use rand::RngExt;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Command-line options: section filters and `--quick`.
struct Opts {
    filters: Vec<String>,
    quick: bool,
    install_openspiel: bool,
    /// `--profile interpreted|native`: measure only that side (to profile it alone).
    profile: Option<String>,
    /// `--write-docs`: also write the output into docs/speed.md, between its markers.
    write_docs: bool,
}

impl Opts {
    fn parse() -> Opts {
        let mut o = Opts { filters: Vec::new(), quick: false, install_openspiel: false, profile: None, write_docs: false };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            match a.as_str() {
                "--profile" => o.profile = args.next(),
                // cargo passes `--bench` to every bench target.
                "--bench" => {}
                "--quick" => o.quick = true,
                // A fixed amount of work per figure (for `perf stat`: counts that do not depend
                // on how fast the machine was that second).
                "--calls" => {
                    let n = args.next().and_then(|n| n.parse().ok()).unwrap_or_else(|| {
                        eprintln!("--calls takes a number");
                        std::process::exit(2)
                    });
                    CALLS.store(n, std::sync::atomic::Ordering::Relaxed);
                }
                "--install-openspiel" => o.install_openspiel = true,
                "--write-docs" => o.write_docs = true,
                s if s.starts_with("--") => {
                    eprintln!(
                        "unknown option {s}; expected section names (c4, board, arena, lowered, tiers, match3, gdl, playouts, python, ray, scale), --quick, --calls N, --profile SIDE, --install-openspiel or --write-docs"
                    );
                    std::process::exit(2);
                }
                s => o.filters.push(s.to_string()),
            }
        }
        o
    }
    fn wants(&self, section: &str) -> bool {
        self.filters.is_empty() || self.filters.iter().any(|f| section.contains(f.as_str()))
    }
    /// Whether to measure this side (`interpreted`, `native`, `openspiel`).
    fn side(&self, side: &str) -> bool {
        self.profile.as_deref().is_none_or(|p| p == side)
    }
    /// Seconds to spend on one measurement.
    fn secs(&self, full: f64) -> f64 {
        if self.quick { full / 10.0 } else { full }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load(name: &str) -> WgdlGame {
    let path = root().join("games").join(name);
    let c = playforge::wgdl::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    WgdlGame::new(c.program)
}

/// `--calls N`: every timed figure makes exactly N calls (0: run for its seconds).
static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Repeats `f` until `secs` have passed (at least once), or `--calls` times; returns (calls,
/// seconds).
fn timed(secs: f64, mut f: impl FnMut(u64)) -> (u64, f64) {
    let calls = CALLS.load(std::sync::atomic::Ordering::Relaxed);
    let t0 = Instant::now();
    let mut n = 0u64;
    loop {
        f(n);
        n += 1;
        let el = t0.elapsed().as_secs_f64();
        if (calls == 0 && el >= secs) || (calls > 0 && n >= calls) {
            return (n, el);
        }
    }
}

/// One playout from `start` (uniform or group-weighted), each move made handed to `made`;
/// returns how many were made.
fn playout<G: Game>(
    g: &G,
    start: &G::State,
    weights: Option<&[f64]>,
    legal: &mut Vec<G::Move>,
    st: &mut G::State,
    seed: u64,
    mut made: impl FnMut(G::Move),
) -> u64 {
    let mut rng = playforge::rng::stream(seed, 0, 0, 0);
    st.clone_from(start);
    let mut moves = 0;
    loop {
        g.legal(st, legal).expect("legal");
        if g.status(st, legal) != Status::Running {
            return moves;
        }
        let m = match weights {
            Some(w) => pick_grouped(g, legal, w, &mut rng),
            None => legal[rng.random_range(0..legal.len())],
        };
        g.apply(st, m).expect("apply");
        made(m);
        moves += 1;
    }
}

/// Playouts per second and moves per playout.
fn playouts_per_sec<G: Game>(g: &G, weights: Option<&[f64]>, secs: f64) -> (f64, f64) {
    let start = g.initial().expect("initial");
    let mut st = start.clone();
    let mut legal = Vec::with_capacity(256);
    let mut moves = 0u64;
    let (n, el) = timed(secs, |i| moves += black_box(playout(g, &start, weights, &mut legal, &mut st, i + 1, |_| {})));
    (n as f64 / el, moves as f64 / n as f64)
}

/// Nanoseconds per move of uniform random playouts from the start spent listing the legal
/// moves (with the status check) and applying the move: the moves of 300 playouts (seeds 1 to
/// 300, as [`playout`] plays them; too many for a branch predictor to learn) are recorded,
/// then replayed from the start applying each move alone, and replayed listing the legal moves
/// before each — the difference is the listing. The states are those of a playout, as hot in
/// the caches as a playout has them. Not inlined, so that a profile can collect it alone
/// (`valgrind --tool=callgrind --toggle-collect='*split_ns*' …speed arena --profile
/// interpreted --calls 1`).
#[inline(never)]
fn split_ns<G: Game>(g: &G, secs: f64) -> (f64, f64) {
    let start = g.initial().expect("initial");
    let mut st = start.clone();
    let mut legal = Vec::with_capacity(256);
    let games: Vec<Vec<G::Move>> = (1..=300)
        .map(|seed| {
            let mut moves = Vec::new();
            playout(g, &start, None, &mut legal, &mut st, seed, |m| moves.push(m));
            moves
        })
        .collect();
    let n: usize = games.iter().map(Vec::len).sum();
    let mut replay = |list: bool| {
        let (calls, el) = timed(secs / 2.0, |_| {
            for moves in &games {
                st.clone_from(&start);
                for &m in moves {
                    if list {
                        g.legal(&st, &mut legal).expect("legal");
                        black_box(g.status(&st, &legal));
                    }
                    g.apply(&mut st, m).expect("apply");
                }
            }
            black_box(&st);
        });
        el * 1e9 / (calls as f64 * n as f64)
    };
    let (apply, both) = (replay(false), replay(true));
    (both - apply, apply)
}

/// Reward of a finished two-player game for `player`: 1 win, ½ draw, 0 loss (a game cut by a
/// limit counts as a draw).
struct WinDrawLoss<'a, G>(&'a G);

impl<G: Game + Sync> Evaluator<G::State> for WinDrawLoss<'_, G> {
    fn value(&self, st: &G::State, player: usize) -> f64 {
        match self.0.status(st, &[]) {
            Status::Won(k) if k as usize == player => 1.0,
            Status::Won(_) => 0.0,
            _ => 0.5,
        }
    }
}

/// MCTS iterations per second from the start state: searches of `iterations` each (fresh
/// seeds) until `secs` have passed.
fn mcts_per_sec<G: Game + Goals + Sync>(g: &G, cfg: &MctsConfig, iterations: u64, secs: f64) -> f64 {
    let start = g.initial().expect("initial");
    let eval = WinDrawLoss(g);
    let (n, el) = timed(secs, |i| {
        let mut rng = playforge::rng::stream(i + 1, 0, 0, 0);
        let tree = decision_tree(g, &start, cfg, &eval, iterations, &mut rng).expect("search");
        black_box(tree.nodes.len());
    });
    (n * iterations) as f64 / el
}

/// Timing rounds of a paired section: three, or one for a smoke run and under `--calls N` (a
/// profile of N searches stays N searches).
fn rounds(o: &Opts) -> usize {
    if o.quick || CALLS.load(std::sync::atomic::Ordering::Relaxed) > 0 { 1 } else { 3 }
}

/// The median of the rounds' ratios (`None` when there is none).
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

fn k(x: f64) -> String {
    if x >= 10_000.0 { format!("{:.1} k", x / 1000.0) } else { format!("{x:.0}") }
}

// ---------------------------------------------------------------------------------- OpenSpiel

fn openspiel_python(o: &Opts) -> Result<PathBuf, String> {
    let venv = root().join("benches/openspiel/.venv/bin/python");
    if o.install_openspiel && !venv.exists() {
        let status = Command::new("bash").arg(root().join("benches/openspiel/setup.sh")).status();
        if !status.is_ok_and(|s| s.success()) {
            return Err("benches/openspiel/setup.sh failed (see above)".into());
        }
    }
    let candidates: Vec<PathBuf> =
        std::env::var_os("OPENSPIEL_PYTHON").map(PathBuf::from).into_iter().chain([venv, root().join(".venv/bin/python")]).collect();
    for py in &candidates {
        let ok = Command::new(py).args(["-c", "import pyspiel"]).output().is_ok_and(|o| o.status.success());
        if ok {
            return Ok(py.clone());
        }
    }
    Err("OpenSpiel not importable (no $OPENSPIEL_PYTHON, no benches/openspiel/.venv, no .venv); `bash benches/openspiel/setup.sh` installs it".into())
}

/// OpenSpiel's C++ MCTSBot on Connect Four: simulations per second (one search of `sims`
/// from the start, repeated for `secs`).
fn openspiel_c4(py: &Path, sims: u64, secs: f64) -> Result<f64, String> {
    let out = Command::new(py)
        .arg(root().join("benches/openspiel/connect_four_mcts.py"))
        .args(["--simulations", &sims.to_string(), "--seconds", &secs.to_string()])
        .output()
        .map_err(|e| format!("running python: {e}"))?;
    if !out.status.success() {
        return Err(format!("connect_four_mcts.py failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find_map(|l| l.strip_prefix("sims_per_sec ")).ok_or("no `sims_per_sec` line in its output")?;
    line.trim().parse::<f64>().map_err(|e| format!("bad number `{line}`: {e}"))
}

// ---------------------------------------------------------------------------------- sections

/// Connect Four: MCTS from the start, one random rollout per leaf, UCT with OpenSpiel's
/// c = 2 on rewards in [−1, 1], i.e. c = 1 on our [0, 1] rewards (win 1, draw ½, loss 0).
/// The interpreter and OpenSpiel are timed in alternating rounds, each pair seconds apart, so
/// that the machine's drift over minutes falls on both sides of a ratio; the ratio shown is the
/// median of the rounds' ratios, and each round's is printed.
fn section_c4(o: &Opts) {
    println!("\n### Connect Four MCTS from the start (one core)\n");
    println!("Searches of 100 000 simulations from the empty board, one uniformly random rollout per");
    println!("simulation; UCT x̄ + 1·√(ln n / n_j) on win 1 / draw ½ / loss 0 (≡ OpenSpiel's uct_c = 2 on ±1).\n");
    let sims = if o.quick { 10_000 } else { 100_000 };
    let rounds = rounds(o);
    let secs = o.secs(4.0) / rounds as f64;
    let cfg = MctsConfig { formula: Formula::ucb1(1.0, 1.0), ..MctsConfig::default() };
    let game = load("connect_four.wgdl");
    let py = if o.side("openspiel") { openspiel_python(o) } else { Err("not measured (--profile)".into()) };
    // (playforge interpreted, OpenSpiel) per round.
    let mut pairs: Vec<(f64, Result<f64, String>)> = Vec::new();
    for _ in 0..rounds {
        let i = if o.side("interpreted") { mcts_per_sec(&game, &cfg, sims, secs) } else { f64::NAN };
        let os = py.clone().and_then(|py| openspiel_c4(&py, sims, secs));
        pairs.push((i, os));
    }
    let native =
        if o.side("native") { mcts_per_sec(&native_connect_four::NativeConnectFour, &cfg, sims, secs * rounds as f64) } else { f64::NAN };
    let interp = pairs.iter().map(|p| p.0).sum::<f64>() / rounds as f64;
    let os: Result<f64, String> = pairs.iter().map(|p| p.1.clone()).sum::<Result<f64, String>>().map(|t| t / rounds as f64);
    let median = median(pairs.iter().filter_map(|(i, s)| s.as_ref().ok().map(|s| i / s)).collect());
    println!("| program | simulations/s | ÷ OpenSpiel |");
    println!("|---|---:|---:|");
    let ratio = |x: f64| match &os {
        Ok(v) => format!("{:.2}×", x / v),
        Err(_) => "–".into(),
    };
    let interp_ratio = median.map_or("–".into(), |m| format!("{m:.2}×"));
    println!("| playforge, interpreted (games/connect_four.wgdl) | {} | **{interp_ratio}** |", k(interp));
    println!("| playforge MCTS on the native bitboard twin (tests/native) | {} | {} |", k(native), ratio(native));
    match &os {
        Ok(v) => println!("| OpenSpiel MCTSBot (C++, pyspiel), RandomRolloutEvaluator(1) | {} | 1.00× |", k(*v)),
        Err(e) => println!("| OpenSpiel MCTSBot | skipped: {e} | – |"),
    }
    if rounds > 1 && os.is_ok() && o.side("interpreted") {
        let each: Vec<String> = pairs
            .iter()
            .map(|(i, s)| format!("{} ÷ {} = {:.2}×", k(*i), k(*s.as_ref().expect("measured")), i / s.as_ref().expect("measured")))
            .collect();
        println!(
            "\nThe interpreter and OpenSpiel were timed in {rounds} alternating rounds (seconds apart, so that the machine's drift falls on both); the ratio shown is the median of the rounds': {}.",
            each.join("; ")
        );
    }
}

/// Hex arena with the file's values: uniform random playouts and MCTS (HexMage's 200-move
/// rollout cap), interpreted and native. As for Connect Four, the two sides are timed in
/// alternating rounds seconds apart; a row's ratio is the median of its rounds' ratios, and
/// each round's is printed.
fn section_arena(o: &Opts) {
    println!("\n### Hex arena (games/hex_arena.wgdl with its own values, one core)\n");
    let interp = load("hex_arena.wgdl");
    let native = native_hex_arena::NativeHexArena::new(native_hex_arena::Params::default());
    let rounds = rounds(o);
    let secs = o.secs(3.0) / rounds as f64;
    let cfg = MctsConfig { formula: Formula::ucb1(std::f64::consts::SQRT_2, 2.0), max_playout_moves: 200, ..MctsConfig::default() };
    let iters = if o.quick { 200 } else { 1000 };
    // (interpreted, native) per round, for playouts and for MCTS.
    let (mut play, mut mcts) = (Vec::new(), Vec::new());
    let mut len = f64::NAN;
    for _ in 0..rounds {
        let (pi, l) = if o.side("interpreted") { playouts_per_sec(&interp, None, secs) } else { (f64::NAN, f64::NAN) };
        let (pn, _) = if o.side("native") { playouts_per_sec(&native, None, secs) } else { (f64::NAN, f64::NAN) };
        play.push((pi, pn));
        len = l;
    }
    for _ in 0..rounds {
        let mi = if o.side("interpreted") { mcts_per_sec(&interp, &cfg, iters, secs) } else { f64::NAN };
        let mn = if o.side("native") { mcts_per_sec(&native, &cfg, iters, secs) } else { f64::NAN };
        mcts.push((mi, mn));
    }
    // Where the time goes, inside playouts on each side (the same games on both).
    let (mut lists, mut applies) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (li, ai) = if o.side("interpreted") { split_ns(&interp, secs) } else { (f64::NAN, f64::NAN) };
        let (ln, an) = if o.side("native") { split_ns(&native, secs) } else { (f64::NAN, f64::NAN) };
        lists.push((li, ln));
        applies.push((ai, an));
    }
    let mean = |v: &[(f64, f64)], side: fn(&(f64, f64)) -> f64| v.iter().map(side).sum::<f64>() / v.len() as f64;
    let slowdown = |v: &[(f64, f64)]| median(v.iter().map(|(i, n)| n / i).collect()).unwrap_or(f64::NAN);
    let (pi, pn, mi, mn) = (mean(&play, |p| p.0), mean(&play, |p| p.1), mean(&mcts, |p| p.0), mean(&mcts, |p| p.1));
    println!("| measure | interpreted | native twin | interpreted ÷ native |");
    println!("|---|---:|---:|---:|");
    println!(
        "| uniform random playouts/s ({len:.1} moves each) | {} ({} moves/s) | {} | {:.2}× |",
        k(pi),
        k(pi * len),
        k(pn),
        slowdown(&play)
    );
    println!("| MCTS iterations/s (decisions of {iters} from the start) | **{}** | {} | {:.2}× |", k(mi), k(mn), slowdown(&mcts));
    // (Times, not rates: the ratio is interpreted ÷ native.)
    let cost = |v: &[(f64, f64)]| median(v.iter().map(|(i, n)| i / n).collect()).unwrap_or(f64::NAN);
    println!(
        "\nWhere a move's time goes (nanoseconds per move of 300 of those playouts, replayed: applying the moves alone, and listing the legal moves before each; the listing is the difference):\n"
    );
    println!("| part | interpreted | native twin | interpreted ÷ native |");
    println!("|---|---:|---:|---:|");
    println!(
        "| list the legal moves (and check the status) | {:.0} | {:.0} | {:.2}× |",
        mean(&lists, |p| p.0),
        mean(&lists, |p| p.1),
        cost(&lists)
    );
    println!("| apply the move | {:.0} | {:.0} | {:.2}× |", mean(&applies, |p| p.0), mean(&applies, |p| p.1), cost(&applies));
    if rounds > 1 && o.side("interpreted") && o.side("native") {
        let each =
            |v: &[(f64, f64)]| v.iter().map(|(i, n)| format!("{} ÷ {} = {:.2}×", k(*n), k(*i), n / i)).collect::<Vec<_>>().join("; ");
        let times = |v: &[(f64, f64)]| v.iter().map(|(i, n)| format!("{i:.0} ÷ {n:.0} = {:.2}×", i / n)).collect::<Vec<_>>().join("; ");
        println!(
            "\nThe two sides were timed in {rounds} alternating rounds per row (seconds apart); rates and times are the rounds' means, each ratio the median of the rounds' native ÷ interpreted rates (interpreted ÷ native times): playouts {}; MCTS {}; listing {}; applying {}.",
            each(&play),
            each(&mcts),
            times(&lists),
            times(&applies)
        );
    }
}

/// The hex arena lowered by hand over the interpreter's own `State` (`benches/lowered/`): what a
/// compiler of whole games would emit, so what a compiled tier could reach. Checked against the
/// interpreter move for move (legal lists, statuses, whole states) over 300 uniform random games,
/// then timed beside the interpreter and the native twin in alternating rounds. `--profile
/// lowered` times only its move split (for a profile of it alone).
fn section_lowered(o: &Opts) {
    if o.profile.as_deref().is_some_and(|p| p != "lowered") {
        return;
    }
    println!("\n### Hex arena lowered by hand: what a compiler of whole games would reach (one core)\n");
    let interp = load("hex_arena.wgdl");
    let lowered = lowered_hex_arena::LoweredHexArena::new(interp.program.clone());
    let native = native_hex_arena::NativeHexArena::new(native_hex_arena::Params::default());
    let checked: usize = (1..=300).map(|seed| lowered_hex_arena::lockstep(&interp, &lowered, seed, "lowered arena").0.len()).sum();
    println!(
        "`benches/lowered/hex_arena.rs`: the arena's rules written out as straightforward generated code would be, over the interpreter's own state layout (names resolved once, no closures, no knowledge beyond the WGDL file). Checked first: the same legal lists, statuses and states as the interpreter's over {checked} moves of 300 uniform random games.\n"
    );
    if o.profile.is_some() {
        let (l, a) = split_ns(&lowered, o.secs(2.0));
        println!("lowered: listing {l:.0} ns, applying {a:.0} ns per move");
        return;
    }
    let rounds = rounds(o);
    let secs = o.secs(3.0) / rounds as f64;
    let cfg = MctsConfig { formula: Formula::ucb1(std::f64::consts::SQRT_2, 2.0), max_playout_moves: 200, ..MctsConfig::default() };
    let iters = if o.quick { 200 } else { 1000 };
    let (mut play, mut mcts, mut lists, mut applies) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        play.push((
            playouts_per_sec(&interp, None, secs).0,
            playouts_per_sec(&lowered, None, secs).0,
            playouts_per_sec(&native, None, secs).0,
        ));
    }
    for _ in 0..rounds {
        mcts.push((
            mcts_per_sec(&interp, &cfg, iters, secs),
            mcts_per_sec(&lowered, &cfg, iters, secs),
            mcts_per_sec(&native, &cfg, iters, secs),
        ));
    }
    for _ in 0..rounds {
        let (a, b, c) = (split_ns(&interp, secs), split_ns(&lowered, secs), split_ns(&native, secs));
        lists.push((a.0, b.0, c.0));
        applies.push((a.1, b.1, c.1));
    }
    type Row = (f64, f64, f64);
    let mean = |v: &[Row], f: fn(&Row) -> f64| v.iter().map(f).sum::<f64>() / v.len() as f64;
    let med = |v: &[Row], f: fn(&Row) -> f64| median(v.iter().map(f).collect()).unwrap_or(f64::NAN);
    println!("| measure | interpreted | lowered | native twin | interpreted ÷ twin | lowered ÷ twin |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, v) in [("uniform random playouts/s", &play), ("MCTS iterations/s (decisions of 1000)", &mcts)] {
        println!(
            "| {name} | {} | {} | {} | {:.2}× | {:.2}× |",
            k(mean(v, |r| r.0)),
            k(mean(v, |r| r.1)),
            k(mean(v, |r| r.2)),
            med(v, |r| r.2 / r.0),
            med(v, |r| r.2 / r.1)
        );
    }
    for (name, v) in [("list the legal moves (ns per move, with the status)", &lists), ("apply the move (ns per move)", &applies)] {
        println!(
            "| {name} | {:.0} | {:.0} | {:.0} | {:.2}× | {:.2}× |",
            mean(v, |r| r.0),
            mean(v, |r| r.1),
            mean(v, |r| r.2),
            med(v, |r| r.0 / r.2),
            med(v, |r| r.1 / r.2)
        );
    }
    if rounds > 1 {
        let rates = |v: &[Row]| v.iter().map(|r| format!("{:.2}×", r.2 / r.1)).collect::<Vec<_>>().join(", ");
        let times = |v: &[Row]| v.iter().map(|r| format!("{:.2}×", r.1 / r.2)).collect::<Vec<_>>().join(", ");
        println!(
            "\nThe three programs were timed in {rounds} alternating rounds per row; figures are the rounds' means, ratios the median of the rounds' (lowered ÷ twin: playouts {}; MCTS {}; listing {}; applying {}).",
            rates(&play),
            rates(&mcts),
            times(&lists),
            times(&applies)
        );
    }
}

/// The two tiers side by side (issue 45), with the references the issue measures them against,
/// all in one run: the hex arena (playouts and MCTS) against its native twin, Connect Four MCTS
/// against OpenSpiel's C++ `MCTSBot`, Magic Land playouts and a match-3 persona game against the
/// interpreted tier. Every figure is timed in alternating rounds; a ratio is the median of its
/// rounds'. Needs `--features compiled` (without it, says so).
fn section_tiers(o: &Opts) {
    use playforge::wgdl::Tier;
    println!("\n### The interpreted and compiled tiers side by side (one core)\n");
    if !Tier::AVAILABLE {
        println!("Built without the compiled tier: `cargo bench --features compiled --bench speed -- tiers` measures it.");
        return;
    }
    let rounds = rounds(o);
    let secs = o.secs(3.0) / rounds as f64;
    let compiled = |g: &WgdlGame| WgdlGame::new(std::sync::Arc::new(g.program.with_tier(Tier::Compiled)));
    // Per row: (interpreted, compiled, reference) per round, as rates (higher is faster).
    let mut rows: Vec<(&str, &str, Vec<(f64, f64, f64)>)> = Vec::new();
    let arena = load("hex_arena.wgdl");
    let arena_c = compiled(&arena);
    let twin = native_hex_arena::NativeHexArena::new(native_hex_arena::Params::default());
    let cfg = MctsConfig { formula: Formula::ucb1(std::f64::consts::SQRT_2, 2.0), max_playout_moves: 200, ..MctsConfig::default() };
    let iters = if o.quick { 200 } else { 1000 };
    let mut v = Vec::new();
    for _ in 0..rounds {
        v.push((playouts_per_sec(&arena, None, secs).0, playouts_per_sec(&arena_c, None, secs).0, playouts_per_sec(&twin, None, secs).0));
    }
    rows.push(("hex arena, uniform random playouts/s", "native twin", v));
    let mut v = Vec::new();
    for _ in 0..rounds {
        v.push((
            mcts_per_sec(&arena, &cfg, iters, secs),
            mcts_per_sec(&arena_c, &cfg, iters, secs),
            mcts_per_sec(&twin, &cfg, iters, secs),
        ));
    }
    rows.push(("hex arena, MCTS iterations/s", "native twin", v));
    let c4 = load("connect_four.wgdl");
    let c4_c = compiled(&c4);
    let sims = if o.quick { 10_000 } else { 100_000 };
    let c4_cfg = MctsConfig { formula: Formula::ucb1(1.0, 1.0), ..MctsConfig::default() };
    let py = openspiel_python(o);
    let mut v = Vec::new();
    for _ in 0..rounds {
        let os = py.clone().and_then(|py| openspiel_c4(&py, sims, secs)).unwrap_or(f64::NAN);
        v.push((mcts_per_sec(&c4, &c4_cfg, sims, secs), mcts_per_sec(&c4_c, &c4_cfg, sims, secs), os));
    }
    rows.push(("Connect Four, MCTS simulations/s", "OpenSpiel C++ MCTSBot", v));
    let ml = load("magic_land.wgdl");
    let ml_c = compiled(&ml);
    let w = ml.group_weights();
    let mut v = Vec::new();
    for _ in 0..rounds {
        v.push((playouts_per_sec(&ml, Some(&w), secs).0, playouts_per_sec(&ml_c, Some(&w), secs).0, f64::NAN));
    }
    rows.push(("Magic Land, playouts/s (action-group weights)", "–", v));
    let persona = |tier: Tier| {
        use playforge::persona::config::PersonaConfig;
        use playforge::persona::jobs::Setup;
        use playforge::persona::play::{Agent, play_game};
        // The setup's programs are compiled with the default tier of the moment.
        Tier::set_default(tier);
        let path = root().join("configs/personas_paper.toml");
        let (cfg, text) = PersonaConfig::load(&path).expect("personas_paper.toml");
        let setup = Setup::new(cfg, text, &path, &std::env::temp_dir()).expect("persona setup");
        Tier::set_default(Tier::Interpreted);
        let p = setup.cfg.list.iter().find(|p| p.name == "MaxS").expect("MaxS in the paper config").clone();
        let m = setup.measured(&p).expect("a WGDL game");
        let agent = Agent::Mcts { formula: setup.vanilla(), reward: setup.reward(&p, 2700.0) };
        move |secs: f64| {
            let (n, el) = timed(secs, |i| {
                let mut rng = playforge::rng::stream(1, 0, 0, i);
                play_game(&m, 1000 + i, setup.score.expect("a WGDL game"), &agent, &setup.search, &mut rng).expect("game");
            });
            n as f64 / el
        }
    };
    let (pi, pc) = (persona(Tier::Interpreted), persona(Tier::Compiled));
    let mut v = Vec::new();
    for _ in 0..rounds {
        v.push((pi(2.0 * secs), pc(2.0 * secs), f64::NAN));
    }
    rows.push(("match-3, MaxS persona games/s (paper settings)", "–", v));
    println!("| measure | interpreted | compiled | compiled ÷ interpreted | reference | reference ÷ compiled |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut detail = Vec::new();
    for (name, refname, v) in &rows {
        let mean = |f: fn(&(f64, f64, f64)) -> f64| v.iter().map(f).sum::<f64>() / v.len() as f64;
        let speedup = median(v.iter().map(|r| r.1 / r.0).collect()).unwrap_or(f64::NAN);
        let vs = median(v.iter().map(|r| r.2 / r.1).collect()).unwrap_or(f64::NAN);
        let fmt = |x: f64| match x {
            x if x.is_nan() => "–".to_string(),
            x if x < 100.0 => format!("{x:.2}"),
            x => k(x),
        };
        let rf = if refname == &"–" { "–".to_string() } else { format!("{} ({refname})", fmt(mean(|r| r.2))) };
        let vs = if vs.is_nan() { "–".to_string() } else { format!("{vs:.2}×") };
        println!("| {name} | {} | {} | **{speedup:.2}×** | {rf} | {vs} |", fmt(mean(|r| r.0)), fmt(mean(|r| r.1)));
        detail.push(format!("{name}: {}", v.iter().map(|r| format!("{:.2}×", r.1 / r.0)).collect::<Vec<_>>().join(", ")));
    }
    let cover = [("hex arena", &arena_c), ("Connect Four", &c4_c), ("Magic Land", &ml_c)]
        .iter()
        .map(|(n, g)| match g.program.compiled_lister() {
            Some((i, a)) => format!("{n} {i} of {a}"),
            None => format!("{n} none"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    #[cfg(feature = "compiled")]
    let (seen, made) = playforge::wgdl::compiled_functions();
    #[cfg(not(feature = "compiled"))]
    let (seen, made) = (0, 0);
    println!(
        "\nRates are the {rounds} rounds' means; ratios the medians of the rounds' (compiled ÷ interpreted per round — {}). The compiled tier generated {made} functions (move listers and expressions; {seen} expressions handed to it); the move listers inline the conditions and bindings of these actions (the rest listed by the interpreter's code): {cover}.",
        detail.join("; ")
    );
}

/// Whole match-3 persona games as the paper plays them (250 iterations per move, full
/// expansion, rollouts to move 20, the formula picks the move), one core, vanilla UCB1.
fn section_match3(o: &Opts) {
    use playforge::persona::config::PersonaConfig;
    use playforge::persona::jobs::Setup;
    use playforge::persona::play::{Agent, play_game};
    println!("\n### Match-3 persona games (configs/personas_paper.toml, one core)\n");
    let path = root().join("configs/personas_paper.toml");
    let (cfg, text) = PersonaConfig::load(&path).expect("personas_paper.toml");
    let setup = Setup::new(cfg, text, &path, &std::env::temp_dir()).expect("persona setup");
    println!("| persona (vanilla UCB1, its measure and reward) | seconds per game | games | MCTS iterations/s |");
    println!("|---|---:|---:|---:|");
    for name in ["MaxS", "MaxM"] {
        let p = setup.cfg.list.iter().find(|p| p.name == name).expect("persona in the paper config");
        let m = setup.measured(p).expect("a WGDL game");
        // A fixed goal near the random player's mean: the speed does not depend on it.
        let goal = if name == "MaxS" { 2700.0 } else { 7.6 };
        let agent = Agent::Mcts { formula: setup.vanilla(), reward: setup.reward(p, goal) };
        let mut iterations = 0u64;
        let (n, el) = timed(o.secs(6.0), |i| {
            let mut rng = playforge::rng::stream(1, 0, 0, i);
            let r = play_game(&m, 1000 + i, setup.score.expect("a WGDL game"), &agent, &setup.search, &mut rng).expect("game");
            iterations += r.moves as u64 * setup.search.iterations;
        });
        println!("| {name} | **{:.3}** | {n} | {} |", el / n as f64, k(iterations as f64 / el));
    }
}

/// The action-group playouts of `playforge bench` (whole games from the start).
fn section_playouts(o: &Opts) {
    println!("\n### Random playouts (action-group weights, one core)\n");
    println!("| game | playouts/s | moves per playout |");
    println!("|---|---:|---:|");
    for name in ["simple_coins.wgdl", "magic_land.wgdl", "connect_four.wgdl"] {
        // `-- magic_land` measures one game alone (`-- playouts` all of them).
        if !o.filters.is_empty() && !o.filters.iter().any(|f| "playouts".contains(f.as_str()) || name.contains(f.as_str())) {
            continue;
        }
        let g = load(name);
        let w = g.group_weights();
        let (p, len) = playouts_per_sec(&g, Some(&w), o.secs(3.0));
        println!("| games/{name} | **{}** | {len:.1} |", k(p));
    }
}

/// GDL against WGDL: the same games through the grounded GDL evaluator and the WGDL
/// interpreter, random playouts and MCTS (UCT as in the Connect Four section).
fn section_gdl(o: &Opts) {
    println!("\n### GDL against WGDL (the same games, one core)\n");
    println!(
        "Uniform random playouts from the start; MCTS searches of {} simulations from the start.\n",
        if o.quick { 2_000 } else { 20_000 }
    );
    println!(
        "GDL runs its default reasoner, the differential net; the last column is the full evaluator (every rule for every state) on the same playouts.\n"
    );
    println!(
        "| game | WGDL playouts/s | GDL playouts/s | WGDL ÷ GDL | WGDL MCTS sims/s | GDL MCTS sims/s | WGDL ÷ GDL | GDL full evaluator playouts/s |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let sims = if o.quick { 2_000 } else { 20_000 };
    let cfg = MctsConfig { formula: Formula::ucb1(1.0, 1.0), ..MctsConfig::default() };
    for (name, wgdl, kif) in [("tic-tac-toe", "tictactoe.wgdl", "tictactoe.kif"), ("Connect Four", "connect_four.wgdl", "connect_four.kif")]
    {
        let w = load(wgdl);
        let g = playforge::gdl::load_grounded(&root().join("games/gdl").join(kif)).expect("a shipped GDL game");
        let (wp, _) = playouts_per_sec(&w, None, o.secs(2.0));
        let (gp, _) = playouts_per_sec(&g, None, o.secs(2.0));
        let wm = mcts_per_sec(&w, &cfg, sims, o.secs(2.0));
        let gm = mcts_per_sec(&g, &cfg, sims, o.secs(2.0));
        let (fp, _) = playouts_per_sec(&g.clone().with_reasoner(playforge::gdl::Reasoner::Full), None, o.secs(2.0));
        println!("| {name} | {} | **{}** | {:.2}× | {} | **{}** | {:.2}× | {} |", k(wp), k(gp), wp / gp, k(wm), k(gm), wm / gm, k(fp));
    }
}

/// The Python that has the playforge package (`$PLAYFORGE_PYTHON`, else `.venv` of
/// `bash python/setup.sh`).
fn playforge_python() -> Result<PathBuf, String> {
    let venv = root().join(".venv/bin/python");
    let candidates: Vec<PathBuf> = std::env::var_os("PLAYFORGE_PYTHON").map(PathBuf::from).into_iter().chain([venv]).collect();
    for py in &candidates {
        let ok = Command::new(py).args(["-c", "import playforge._core"]).output().is_ok_and(|o| o.status.success());
        if ok {
            return Ok(py.clone());
        }
    }
    Err("the playforge Python package is not importable (no $PLAYFORGE_PYTHON, no .venv); `bash python/setup.sh` makes it".into())
}

/// Runs `benches/python/scale.py ARGS` with `py`; its JSON line.
fn scale(py: &Path, args: &[&str]) -> Result<serde_json::Value, String> {
    let out =
        Command::new(py).arg(root().join("benches/python/scale.py")).args(args).current_dir(root()).output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("failed").to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

/// Connect Four random games in a Python loop: playforge's API against pyspiel's.
fn section_python(o: &Opts) {
    println!("\n### Python: Connect Four random games in a Python loop (one core)\n");
    println!(
        "`state.legal_actions()`, a uniform `random.choice`, `state.apply_action(a)` until `state.is_terminal()` (benches/python/scale.py).\n"
    );
    println!("| package | games/s | moves/s | ÷ pyspiel |\n|---|---:|---:|---:|");
    let secs = format!("{}", o.secs(3.0));
    let ours = playforge_python().and_then(|py| scale(&py, &["loop", "playforge", &secs]));
    let theirs = openspiel_python(o).and_then(|py| scale(&py, &["loop", "pyspiel", &secs]));
    let games = |v: &serde_json::Value| v["games_per_s"].as_f64().unwrap_or(f64::NAN);
    let moves = |v: &serde_json::Value| v["moves_per_s"].as_f64().unwrap_or(f64::NAN);
    match &ours {
        Ok(v) => {
            let ratio = theirs.as_ref().map_or("–".to_string(), |t| format!("**{:.2}×**", games(v) / games(t)));
            println!("| playforge (games/connect_four.wgdl) | {} | {} | {ratio} |", k(games(v)), k(moves(v)));
        }
        Err(e) => println!("| playforge | – | – | skipped: {e} |"),
    }
    match &theirs {
        Ok(v) => println!("| pyspiel (OpenSpiel's connect_four) | {} | {} | 1.00× |", k(games(v)), k(moves(v))),
        Err(e) => println!("| pyspiel | – | – | skipped: {e} |"),
    }
}

/// The Ray executor against this process, on the shipped balance config and a short persona
/// run (the runs' own timing, the cluster's start-up left out).
fn section_ray(o: &Opts) {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("\n### Ray executor ÷ local executor (`--ray local:{cpus}`, this machine)\n");
    println!(
        "Run times as the runs record them (timing.csv), the median of three of each, local and Ray alternating; Ray's start-up, before the run, is left out.\n"
    );
    println!("| run | local | Ray | Ray ÷ local |\n|---|---:|---:|---:|");
    if o.quick {
        println!("| (skipped in a quick run) | | | |");
        return;
    }
    match playforge_python().and_then(|py| scale(&py, &["ray", &cpus.to_string()])) {
        Ok(v) => {
            for (name, label) in [
                ("balance", "balance configs/hexmage_balance.toml"),
                ("personas", "personas configs/personas_quick.toml --generations 3 --only MaxS"),
            ] {
                let r = &v[name];
                let f = |key: &str| r[key].as_f64().unwrap_or(f64::NAN);
                println!("| {label} | {:.2} s | {:.2} s | **{:.2}×** |", f("local_s"), f("ray_s"), f("ratio"));
            }
        }
        Err(e) => println!("| skipped: {e} | | | |"),
    }
}

/// CPUs per node of the projected clusters (a common cloud and HPC node size).
const NODE_CPUS: usize = 32;

/// The wall time of one batch of `jobs` (seconds each) on the Ray executor's schedule
/// (python/playforge/ray_executor.py): the jobs dealt over the CPU slots (job i to slot i mod
/// CPUs, slots node by node), one task per node costing `task` more, in which the node's threads
/// take the node's jobs in order as they come free (rayon inside the task); the batch costs
/// `latency` more.
fn batch_wall(jobs: &[f64], cpus: usize, task: f64, latency: f64) -> f64 {
    let nodes = cpus.div_ceil(NODE_CPUS);
    let mut wall = 0.0f64;
    for n in 0..nodes {
        let slots = (n * NODE_CPUS)..((n + 1) * NODE_CPUS).min(cpus);
        let mut free = vec![task; slots.len()];
        for (_, t) in jobs.iter().enumerate().filter(|(i, _)| slots.contains(&(i % cpus))) {
            let (k, _) = free.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1)).expect("a thread");
            free[k] += t;
        }
        wall = wall.max(free.iter().copied().fold(0.0, f64::max));
    }
    wall + latency
}

/// Paper-scale personas projected onto a cluster: the job-time distribution of a generation
/// measured here (MCTS games of generation 0's random formulas, random-player games), the
/// per-task and per-batch costs of the Ray executor measured on this machine, and each
/// generation's schedule (a batch of the random player's games, then one batch of vanilla's and
/// every individual's games) simulated by resampling the measured times.
fn section_scale(o: &Opts) {
    use playforge::persona::config::PersonaConfig;
    use playforge::persona::jobs::Setup;
    use playforge::persona::play::{Agent, Reward, play_game};
    let path = root().join("configs/personas_paper.toml");
    let (cfg, text) = PersonaConfig::load(&path).expect("the shipped paper config");
    let setup = Setup::new(cfg, text, &path, Path::new("")).expect("the paper setup");
    let s = &setup.cfg.personas;
    let mut rng = playforge::rng::stream(1, 0, 0, 0);
    let pop = playforge::evolve::gp::initial_population(&setup.cfg.gp, &mut rng).expect("a population");
    let m = setup.measured(&setup.cfg.list[0]).expect("a WGDL game");
    let reward = Reward::Binary { goal: 2700.0, maximize: true };
    // Individuals × games measured: every individual once per seed, until the time is up.
    let (mut mcts, mut random) = (Vec::new(), Vec::new());
    let t0 = Instant::now();
    let budget = o.secs(20.0);
    'outer: for j in 0..s.games {
        let t = Instant::now();
        play_game(&m, j, setup.score.expect("a WGDL game"), &Agent::Random, &setup.search, &mut playforge::rng::stream(2, 0, 0, j))
            .expect("a game");
        random.push(t.elapsed().as_secs_f64());
        for (i, f) in pop.iter().enumerate() {
            let agent = Agent::Mcts { formula: f.clone(), reward };
            let t = Instant::now();
            play_game(&m, j, setup.score.expect("a WGDL game"), &agent, &setup.search, &mut playforge::rng::stream(1, 0, i as u64, j))
                .expect("a game");
            mcts.push(t.elapsed().as_secs_f64());
            if t0.elapsed().as_secs_f64() > budget {
                break 'outer;
            }
        }
    }
    let stats = |v: &[f64]| {
        let mut w = v.to_vec();
        w.sort_by(f64::total_cmp);
        let mean = w.iter().sum::<f64>() / w.len() as f64;
        let sd = (w.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (w.len() as f64 - 1.0).max(1.0)).sqrt();
        (mean, sd, w[w.len() / 2], w[(w.len() - 1) * 99 / 100], w[w.len() - 1])
    };
    let (mean, sd, med, p99, max) = stats(&mcts);
    let (rmean, ..) = stats(&random);
    // Ray's costs on this machine (benches/python/scale.py overhead), else the figures
    // docs/python.md gives.
    let (task, latency) = playforge_python()
        .and_then(|py| scale(&py, &["overhead"]))
        .map(|v| (v["task_s"].as_f64().unwrap_or(0.0025), v["batch_s"].as_f64().unwrap_or(0.005)))
        .unwrap_or((0.0025, 0.005));
    println!("\n### Paper-scale personas on a cluster (projection)\n");
    println!(
        "Measured here, one core: {} MCTS games of generation 0's random formulas at the paper's settings (250 iterations/move, full expansion): mean {:.1} ms, sd {:.1}, median {:.1}, p99 {:.1}, max {:.1}; random player {:.2} ms. Ray costs: {:.1} ms per task, {:.1} ms per batch.\n",
        mcts.len(),
        mean * 1e3,
        sd * 1e3,
        med * 1e3,
        p99 * 1e3,
        max * 1e3,
        rmean * 1e3,
        task * 1e3,
        latency * 1e3
    );
    let per_gen = (s.games * (setup.cfg.gp.population as u64 + 1)) as usize;
    let work = per_gen as f64 * mean + s.games as f64 * rmean;
    let gens = (s.generations * setup.cfg.list.len() as u64) as f64;
    println!(
        "A generation: {} random-player games, then one batch of {per_gen} MCTS games (vanilla and {} individuals × {} seeds); {} personas × {} generations.\n",
        s.games,
        setup.cfg.gp.population,
        s.games,
        setup.cfg.list.len(),
        s.generations
    );
    println!("Nodes of {NODE_CPUS} CPUs (one node below that); one task per node and batch.\n");
    println!("| CPUs | wall per generation | whole run | efficiency (work ÷ CPUs ÷ wall) |\n|---:|---:|---:|---:|");
    let mut pick = playforge::rng::stream(7, 0, 0, 0);
    for cpus in [2usize, 32, 256] {
        // Mean of 20 simulated generations, job times resampled from the measured ones.
        let mut wall = 0.0;
        for _ in 0..20 {
            let draw = |v: &[f64], r: &mut playforge::rng::Rng| v[r.random_range(0..v.len())];
            let rs: Vec<f64> = (0..s.games).map(|_| draw(&random, &mut pick)).collect();
            let ms: Vec<f64> = (0..per_gen).map(|_| draw(&mcts, &mut pick)).collect();
            wall += batch_wall(&rs, cpus, task, latency) + batch_wall(&ms, cpus, task, latency);
        }
        wall /= 20.0;
        let hours = wall * gens / 3600.0;
        println!(
            "| {cpus} | {:.2} s | {} | **{:.1} %** |",
            wall,
            if hours >= 24.0 { format!("{:.1} days", hours / 24.0) } else { format!("{hours:.1} h") },
            100.0 * work / cpus as f64 / wall
        );
    }
}

fn main() {
    let o = Opts::parse();
    if o.write_docs {
        return docs::write_docs();
    }
    println!("## playforge speed ({})\n", if o.quick { "quick run: not for figures" } else { "cargo bench --bench speed" });
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    println!(
        "Machine: {cpu}, {} logical cores; release build, one thread per figure.",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    if o.wants("c4") {
        section_c4(&o);
    }
    if o.wants("board") {
        board::section_board(&o);
    }
    if o.wants("arena") {
        section_arena(&o);
    }
    if o.wants("lowered") {
        section_lowered(&o);
    }
    if o.wants("tiers") {
        section_tiers(&o);
    }
    if o.wants("match3") {
        section_match3(&o);
    }
    if o.wants("gdl") {
        section_gdl(&o);
    }
    if o.wants("python") {
        section_python(&o);
    }
    if o.wants("ray") {
        section_ray(&o);
    }
    if o.wants("scale") {
        section_scale(&o);
    }
    if o.wants("playouts")
        || o.filters.iter().any(|f| ["simple_coins", "magic_land", "connect_four"].iter().any(|g| g.contains(f.as_str())))
    {
        section_playouts(&o);
    }
}
