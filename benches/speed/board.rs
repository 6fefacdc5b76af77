//! The `board` section of the speed table: OpenSpiel's board games as games/ writes them
//! (Breakthrough, Othello, Hex 11×11 and 5×5, English checkers, Pig) against OpenSpiel 2.0.2's
//! own, on one core — MCTS from the start against the C++ MCTSBot with the same settings,
//! uniform random playouts in Rust against OpenSpiel's C++ random games, and random games in a
//! Python loop through playforge's OpenSpiel door against pyspiel's. Every pair is timed in
//! alternating rounds, and a ratio shown is the median of the rounds' ratios (as the `c4`
//! section does). Included by benches/speed.rs (`#[path]`), whose helpers it uses.

use super::{MctsConfig, Opts, k, mcts_per_sec, median, openspiel_python, playforge_python, root, rounds};
use playforge::game::WgdlGame;
use playforge::search::formula::Formula;
use playforge::wgdl::{CompileOptions, Program, Status};
use rand::RngExt;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

/// One game of the section: our file and its parameters, OpenSpiel's name for the same game, and
/// the simulations of one search (chosen so that OpenSpiel's search takes about 2–3 s on this
/// machine with its two cores lightly loaded).
struct Board {
    label: &'static str,
    file: &'static str,
    params: &'static [(&'static str, f64)],
    pyspiel: &'static str,
    sims: u64,
}

const BOARDS: &[Board] = &[
    Board { label: "Breakthrough", file: "games/breakthrough.wgdl", params: &[], pyspiel: "breakthrough", sims: 40_000 },
    Board { label: "Othello", file: "games/othello.wgdl", params: &[], pyspiel: "othello", sims: 8_000 },
    Board { label: "Hex 11×11", file: "games/hex.wgdl", params: &[], pyspiel: "hex", sims: 40_000 },
    Board { label: "Hex 5×5", file: "games/hex.wgdl", params: &[("rules.size", 5.0)], pyspiel: "hex(board_size=5)", sims: 200_000 },
    Board { label: "checkers", file: "games/checkers.wgdl", params: &[], pyspiel: "checkers", sims: 12_000 },
    Board { label: "Pig", file: "games/pig.wgdl", params: &[], pyspiel: "pig", sims: 150_000 },
];

impl Board {
    fn program(&self) -> Arc<Program> {
        let path = root().join(self.file);
        let opts =
            CompileOptions { overrides: self.params.iter().map(|(n, v)| (n.to_string(), *v)).collect(), ..CompileOptions::default() };
        let c = playforge::wgdl::load_with(&path, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        c.program
    }
    /// The file as the table names it (`games/hex.wgdl rules.size=5`).
    fn ours(&self) -> String {
        let mut s = self.file.to_string();
        for (n, v) in self.params {
            s.push_str(&format!(" {n}={v}"));
        }
        s
    }
}

/// Simulations of one search in a run (a twentieth in a smoke run).
fn sims(o: &Opts, b: &Board) -> u64 {
    if o.quick { b.sims / 20 } else { b.sims }
}

/// Uniform random playouts per second from the start and moves per playout, as `playforge
/// bench` plays them: each playout with its own chance (the state's stream reseeded), a chance
/// move drawn by weight from the state's stream and counted as a move (as OpenSpiel's history
/// counts it).
fn playouts_per_sec(p: &Program, secs: f64) -> (f64, f64) {
    let start = p.initial_state().expect("initial");
    let game = WgdlGame::new(Arc::new(p.clone()));
    let mut st = start.clone();
    let mut legal = Vec::with_capacity(256);
    let mut rng = playforge::rng::stream(1, 0, 0, 0);
    let mut moves = 0u64;
    let (n, el) = super::timed(secs, |_| {
        st.clone_from(&start);
        playforge::game::Game::reseed(&game, &mut st, rng.random::<u64>());
        loop {
            p.legal_actions(&st, &mut legal).expect("legal");
            if p.status(&st, &legal) != Status::Running {
                break;
            }
            let a =
                if p.is_chance(&legal) { p.draw_chance(&mut st, &legal).expect("chance") } else { legal[rng.random_range(0..legal.len())] };
            p.apply(&mut st, a).expect("apply");
            moves += 1;
        }
        black_box(&st);
    });
    (n as f64 / el, moves as f64 / n as f64)
}

/// Runs `benches/openspiel/board_mcts.py GAME ARGS` with `py`; the number on its `key` line.
fn openspiel(py: &Path, game: &str, args: &[&str], key: &str) -> Result<f64, String> {
    let out = Command::new(py)
        .arg(root().join("benches/openspiel/board_mcts.py"))
        .arg(game)
        .args(args)
        .output()
        .map_err(|e| format!("running python: {e}"))?;
    if !out.status.success() {
        return Err(format!("board_mcts.py failed: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("").trim()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find_map(|l| l.strip_prefix(key)).ok_or(format!("no `{key}` line in its output"))?;
    line.trim().parse::<f64>().map_err(|e| format!("bad number `{line}`: {e}"))
}

/// Runs `benches/python/board_loop.py ARGS` with `py`: (games/s, mean moves per game).
fn python_loop(py: &Path, args: &[String]) -> Result<(f64, f64), String> {
    let out = Command::new(py)
        .arg(root().join("benches/python/board_loop.py"))
        .args(args)
        .current_dir(root())
        .output()
        .map_err(|e| format!("running python: {e}"))?;
    if !out.status.success() {
        return Err(format!("board_loop.py failed: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("").trim()));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    let f = |key: &str| v[key].as_f64().ok_or(format!("no `{key}` in board_loop.py's output"));
    Ok((f("games_per_s")?, f("mean_moves")?))
}

/// The 1-, 5- and 15-minute load averages (/proc/loadavg), for the reader to judge the figures
/// by (other work on the machine shares its cores).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or("unknown".into(), |t| t.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

/// One row's rounds: ours and theirs per round, theirs possibly missing.
struct Rounds {
    pairs: Vec<(f64, Result<f64, String>)>,
}

impl Rounds {
    fn ours(&self) -> f64 {
        self.pairs.iter().map(|p| p.0).sum::<f64>() / self.pairs.len() as f64
    }
    fn theirs(&self) -> Result<f64, String> {
        let n = self.pairs.len() as f64;
        self.pairs.iter().map(|p| p.1.clone()).sum::<Result<f64, String>>().map(|t| t / n)
    }
    /// The median of the rounds' ours ÷ theirs, bold; `–` when theirs is missing.
    fn ratio(&self) -> String {
        median(self.pairs.iter().filter_map(|(i, s)| s.as_ref().ok().map(|s| i / s)).collect())
            .map_or("–".into(), |m| format!("**{m:.2}×**"))
    }
    fn theirs_cell(&self) -> String {
        match self.theirs() {
            Ok(v) => k(v),
            Err(e) => format!("skipped: {e}"),
        }
    }
    /// `a ÷ b = r×` for each round (empty when theirs is missing).
    fn each(&self) -> String {
        if self.pairs.len() < 2 || self.theirs().is_err() {
            return String::new();
        }
        let each: Vec<String> = self
            .pairs
            .iter()
            .map(|(i, s)| format!("{} ÷ {} = {:.2}×", k(*i), k(*s.as_ref().expect("measured")), i / s.as_ref().expect("measured")))
            .collect();
        each.join("; ")
    }
}

/// Prints the rounds of each row under a table (when there were several); `theirs` names the
/// other side.
fn print_rounds(theirs: &str, rows: &[(&str, &Rounds)]) {
    let parts: Vec<String> = rows.iter().filter(|(_, r)| !r.each().is_empty()).map(|(l, r)| format!("{l} {}", r.each())).collect();
    if !parts.is_empty() {
        println!("\nEach round (playforge ÷ {theirs}): {}.", parts.join("; "));
    }
}

pub(super) fn section_board(o: &Opts) {
    let rounds = rounds(o);
    let os_py = openspiel_python(o);
    let pf_py = playforge_python();
    println!("\n### Board games against OpenSpiel (one core)\n");
    println!("OpenSpiel 2.0.2's Breakthrough, Othello, Hex (11×11, its default, and 5×5), English checkers and");
    println!("Pig, each as games/ writes it (equal to OpenSpiel's move for move) and as pyspiel has it. MCTS:");
    println!("one search of N simulations from the start, one uniformly random rollout per simulation, UCT");
    println!("x̄ + 1·√(ln n / n_j) on win 1 / draw ½ / loss 0 (≡ OpenSpiel's uct_c = 2 on ±1; a game that ends");
    println!("because the side to move has no move is scored by the file's `game.stuck` lines), against");
    println!("`pyspiel.MCTSBot(game, RandomRolloutEvaluator(1), uct_c = 2, N)`, only `bot.step(start)` timed");
    println!("(benches/openspiel/board_mcts.py); Pig's die is settled inside a move on our side, a chance node");
    println!("in OpenSpiel's tree. Random playouts: uniform moves from the start, chance drawn by weight and");
    println!("counted as a move, in Rust as `playforge bench` plays them, beside OpenSpiel's random games in");
    println!("C++ (`pyspiel.evaluate_bots` with two uniform random bots: the loop and the bots are C++). Python");
    println!("loop: `legal_actions()`, `random.choice`, `apply_action` (a chance outcome drawn from");
    println!("`chance_outcomes()` by probability) until terminal, through `playforge.openspiel.load_game(path)`");
    println!("and on `pyspiel.load_game(name)` (benches/python/board_loop.py). Each pair timed in {rounds} alternating");
    println!(
        "round(s); a ratio is the median of the rounds' ratios, a rate the rounds' mean. Load average at the start: {}.\n",
        load_average()
    );

    // MCTS.
    let mut mcts = Vec::new();
    for b in BOARDS {
        let game = WgdlGame::new(b.program());
        let cfg = MctsConfig { formula: Formula::ucb1(1.0, 1.0), ..MctsConfig::default() };
        let n = sims(o, b);
        let mut r = Rounds { pairs: Vec::new() };
        for _ in 0..rounds {
            // One search a side per round (the searches take seconds).
            let ours = if o.side("interpreted") { mcts_per_sec(&game, &cfg, n, 0.0) } else { f64::NAN };
            let theirs = os_py
                .clone()
                .and_then(|py| openspiel(&py, b.pyspiel, &["--simulations", &n.to_string(), "--seconds", "0"], "sims_per_sec "));
            r.pairs.push((ours, theirs));
        }
        mcts.push(r);
    }
    println!("| game | N | playforge simulations/s | OpenSpiel MCTSBot (C++) simulations/s | playforge ÷ OpenSpiel |");
    println!("|---|---:|---:|---:|---:|");
    for (b, r) in BOARDS.iter().zip(&mcts) {
        println!(
            "| {} ({}; pyspiel `{}`) | {} | {} | {} | {} |",
            b.label,
            b.ours(),
            b.pyspiel,
            sims(o, b),
            k(r.ours()),
            r.theirs_cell(),
            r.ratio()
        );
    }
    print_rounds("OpenSpiel", &BOARDS.iter().zip(&mcts).map(|(b, r)| (b.label, r)).collect::<Vec<_>>());

    // Random playouts in Rust and in C++.
    let secs = o.secs(1.0);
    let mut play = Vec::new();
    let mut lens = Vec::new();
    for b in BOARDS {
        let p = b.program();
        let mut r = Rounds { pairs: Vec::new() };
        let mut len = f64::NAN;
        for _ in 0..rounds {
            let (ours, l) = playouts_per_sec(&p, secs);
            len = l;
            let theirs = os_py
                .clone()
                .and_then(|py| openspiel(&py, b.pyspiel, &["--random-games", "--seconds", &secs.to_string()], "games_per_sec "));
            r.pairs.push((ours, theirs));
        }
        play.push(r);
        lens.push(len);
    }
    println!(
        "\n| game | playforge random playouts/s, Rust (moves each) | OpenSpiel random games/s, C++ evaluate_bots | playforge ÷ OpenSpiel |"
    );
    println!("|---|---:|---:|---:|");
    for ((b, r), len) in BOARDS.iter().zip(&play).zip(&lens) {
        println!("| {} | {} ({len:.1}) | {} | {} |", b.label, k(r.ours()), r.theirs_cell(), r.ratio());
    }
    print_rounds("OpenSpiel", &BOARDS.iter().zip(&play).map(|(b, r)| (b.label, r)).collect::<Vec<_>>());

    // The Python loop.
    let secs = format!("{}", o.secs(1.5));
    let mut py = Vec::new();
    let mut means = Vec::new();
    for b in BOARDS {
        let mut ours_args = vec!["playforge".to_string(), b.file.to_string()];
        ours_args.extend(b.params.iter().map(|(n, v)| format!("{n}={v}")));
        ours_args.extend(["--seconds".to_string(), secs.clone()]);
        let theirs_args = ["pyspiel".to_string(), b.pyspiel.to_string(), "--seconds".to_string(), secs.clone()];
        let mut r = Rounds { pairs: Vec::new() };
        let mut ours_err = None;
        let (mut ours_len, mut theirs_len) = (f64::NAN, f64::NAN);
        for _ in 0..rounds {
            let ours = pf_py.clone().and_then(|py| python_loop(&py, &ours_args));
            let theirs = os_py.clone().and_then(|py| python_loop(&py, &theirs_args));
            if let Ok((_, l)) = &theirs {
                theirs_len = *l;
            }
            match ours {
                Ok((g, l)) => {
                    ours_len = l;
                    r.pairs.push((g, theirs.map(|t| t.0)));
                }
                Err(e) => ours_err = Some(e),
            }
        }
        py.push((r, ours_err));
        means.push((ours_len, theirs_len));
    }
    println!("\n| game | playforge door games/s (moves each) | pyspiel games/s (moves each) | playforge ÷ pyspiel |");
    println!("|---|---:|---:|---:|");
    for ((b, (r, err)), (ol, tl)) in BOARDS.iter().zip(&py).zip(&means) {
        match err {
            Some(e) if r.pairs.is_empty() => println!("| {} | skipped: {e} | – | – |", b.label),
            _ => println!("| {} | {} ({ol:.1}) | {} ({tl:.1}) | {} |", b.label, k(r.ours()), r.theirs_cell(), r.ratio()),
        }
    }
    print_rounds("pyspiel", &BOARDS.iter().zip(&py).map(|(b, (r, _))| (b.label, r)).collect::<Vec<_>>());
    println!("\nLoad average at the end: {}.", load_average());
}
