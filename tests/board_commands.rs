//! The board games of `games/` (Breakthrough, Othello, Hex) through every shipped command that
//! applies to a two-player game without a score: `check`, `perft`, `run`, tournaments between
//! AIs (MCTS against random and against a weaker MCTS), personas, `generate` over Hex's declared
//! size (CMA-ES and a MAP-Elites map) and `verify` of its answer, `play` and `experiment`,
//! `replay` and `report`, and the play page of `serve`. Each runs through the CLI binary on a
//! config of configs/board/ with a tiny budget (seconds) and checks what it wrote. `playtest`
//! plays each search against itself (win rates per side, draws, length). `balance` refuses these
//! games by design (HexMage's hp/maxHp).

use crate::web::{get, post, start_server};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh folder for one test's outputs, its own even when two tests pass the same name (tests
/// run in parallel: a shared folder would be emptied under the other's run).
fn tmp(name: &str) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("playforge-board-{name}-{}-{k}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the CLI from the repository's root; its exit status and standard output and error.
fn cli_any(args: &[&str]) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_playforge")).args(args).current_dir(root()).output().unwrap();
    (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
}

/// Runs the CLI, which must succeed; its output.
fn cli(args: &[&str]) -> String {
    let (ok, text) = cli_any(args);
    assert!(ok, "playforge {args:?} failed:\n{text}");
    text
}

/// The rows of a CSV file (header first), split on commas (none of these files quote a comma).
fn csv(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|l| l.split(',').map(str::to_string).collect()).collect()
}

/// The column called `name` of a CSV's rows.
fn column(rows: &[Vec<String>], name: &str) -> Vec<String> {
    let k = rows[0].iter().position(|h| h == name).unwrap_or_else(|| panic!("no column `{name}` in {:?}", rows[0]));
    rows[1..].iter().map(|r| r[k].clone()).collect()
}

const GAMES: [&str; 3] = ["breakthrough", "othello", "hex"];

#[test]
fn check_perft_and_run_work_on_each_board_game() {
    for g in GAMES {
        let file = format!("games/{g}.wgdl");
        let text = cli(&["check", &file]);
        assert!(text.contains(": ok"), "check {g}:\n{text}");
        let text = cli(&["run", &file, "--random", "3", "--seed", "3"]);
        assert!(text.contains("stopped after 3 moves"), "run {g}:\n{text}");
    }
    let text = cli(&["perft", "games/hex.wgdl", "--depth", "2", "--set", "rules.size=5"]);
    assert!(text.contains("| 2 | 600 |"), "hex 5×5 perft 2:\n{text}");
    let text = cli(&["perft", "games/othello.wgdl", "--depth", "3"]);
    assert!(text.contains("| 3 | 56 |"), "othello perft 3:\n{text}");
}

/// A tournament's games.csv: every AI pair on both sides of every encounter, each game ending
/// with a side's name or a draw; its table, report and replay. Returns MCTS's wins and losses
/// against the random player.
fn check_tournament(game: &str, seed: u64, pairs: usize, encounters: usize, sides: [&str; 2]) -> (usize, usize) {
    let out = tmp(&format!("tournament-{game}"));
    let cfg = format!("configs/board/tournament_{game}.toml");
    let text = cli(&["tournament", &cfg, "--out", out.to_str().unwrap(), "--quiet"]);
    let dir = out.join(format!("board_tournament_{game}/seed-{seed}"));
    let rows = csv(&dir.join("games.csv"));
    assert_eq!(rows.len() - 1, pairs * 2 * encounters, "{game}: games.csv\n{text}");
    let (reds, blues, results) = (column(&rows, "red"), column(&rows, "blue"), column(&rows, "result"));
    for r in &results {
        assert!(sides.contains(&r.as_str()) || r == "draw", "{game}: result `{r}`");
    }
    let (mut won, mut lost) = (0, 0);
    for ((red, blue), r) in reds.iter().zip(&blues).zip(&results) {
        let mcts_side = match (red.as_str(), blue.as_str()) {
            ("MCTS", "Random") => sides[0],
            ("Random", "MCTS") => sides[1],
            _ => continue,
        };
        if r == mcts_side {
            won += 1;
        } else if r != "draw" {
            lost += 1;
        }
    }
    assert!(dir.join("table.md").exists() && dir.join("report.html").exists(), "{game}: no table.md or report.html");
    // The saved replay plays again with `replay`, move for move to the recorded result.
    let replays: Vec<PathBuf> = std::fs::read_dir(dir.join("replays"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert!(!replays.is_empty(), "{game}: no replay saved");
    let rep: playforge::players::ai::Replay = serde_json::from_str(&std::fs::read_to_string(&replays[0]).unwrap()).unwrap();
    let text = cli(&["replay", replays[0].to_str().unwrap()]);
    assert!(text.contains(&format!("\n  {}\n", rep.moves[0])), "{game}: replay without the first move `{}`:\n{text}", rep.moves[0]);
    assert!(text.contains(&format!("end: {} after", rep.result)), "{game}: replay without the result `{}`", rep.result);
    // `report` writes the page again.
    std::fs::remove_file(dir.join("report.html")).unwrap();
    cli(&["report", dir.to_str().unwrap()]);
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    // The table, and the viewer's frames of the replay (its first move among them).
    assert!(html.contains("<table") && html.contains("replay-data"), "{game}: report without the table or the replay viewer");
    assert!(html.contains(&format!("\"{}\"", rep.moves[0])), "{game}: the report's replay lacks the first move");
    (won, lost)
}

#[test]
fn a_breakthrough_tournament_between_mcts_and_random() {
    // MCTS (100 iterations), MCTS (10) and Random: 3 pairs, 2 encounters.
    let (won, lost) = check_tournament("breakthrough", 1, 3, 2, ["black", "white"]);
    assert!(won == 4 && lost == 0, "MCTS against Random won {won}, lost {lost}");
}

/// Hex: one encounter (the size a tournament draws is 5 × 5 for seed 8), MCTS against Random.
#[test]
fn a_hex_tournament_between_mcts_and_random() {
    let (won, lost) = check_tournament("hex", 8, 1, 1, ["black", "white"]);
    assert!(won == 2 && lost == 0, "MCTS against Random won {won}, lost {lost}");
}

/// Othello runs through the tournament (every game ends by the rules with a winner or a draw,
/// checked by `check_tournament`), and MCTS beats a random player at it as it does at
/// Breakthrough and Hex. It did not while the
/// tournament's MCTS rewarded a win only through `State::outcome`, which `winner … game.stuck &&
/// …` lines never set (they are read by `Program::status` when no move is legal): every Othello
/// playout was worth 0 to both sides and MCTS played blind (seed 2, 10 encounters, 300
/// iterations: 5 wins, 13 losses, 2 draws against Random). `WinEval` now reads the status there.
#[test]
fn mcts_beats_random_at_othello() {
    let (won, lost) = check_tournament("othello", 1, 3, 2, ["black", "white"]);
    assert!(won > lost + 2, "MCTS against Random won {won}, lost {lost}");
}

/// Personas on Othello: GP over the selection formula, one persona keeping many moves open and
/// one keeping few, with `game.moves` as the score (a board game has none); every persona writes
/// its history and best formula, and the held-out table compares them with vanilla MCTS.
#[test]
fn personas_evolve_on_othello() {
    let out = tmp("personas");
    cli(&["personas", "configs/board/personas_othello.toml", "--out", out.to_str().unwrap(), "--quiet"]);
    let dir = out.join("board_personas_othello/seed-1");
    for p in ["MaxM", "MinM"] {
        let rows = csv(&dir.join(p).join("history.csv"));
        assert_eq!(rows.len() - 1, 2, "{p}: one history row per generation");
        let f = std::fs::read_to_string(dir.join(p).join("best_formula.txt")).unwrap();
        assert!(!f.trim().is_empty(), "{p}: empty best formula");
    }
    let held = std::fs::read_to_string(dir.join("held_out.md")).unwrap();
    for name in ["MaxM", "MinM", "andom"] {
        assert!(held.contains(name), "held_out.md without {name}:\n{held}");
    }
}

/// Runs the CLI on `threads` rayon threads, which must succeed; its output.
fn cli_threads(threads: usize, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_playforge"))
        .args(args)
        .env("RAYON_NUM_THREADS", threads.to_string())
        .current_dir(root())
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "playforge {args:?} failed:\n{text}");
    text
}

/// The bytes of the files a two-player playtest writes that do not hold the wall clock.
fn playtest_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    ["games.csv", "rates.csv", "summary.md", "replays/explore.json", "replays/greedy.json"]
        .iter()
        .map(|f| (f.to_string(), std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))))
        .collect()
}

/// `playtest` on a two-player game: each search of configs/board/playtest_othello.toml plays
/// itself, one game per replicate. Each game ends with a side's win or a draw, its returns +1/−1
/// or 0/0 and a length an Othello game can have; per search, black's and white's win rates and
/// the draw rate add up to 1 and count the games; the saved game replays to its result. The same
/// seed gives the same files on 1 and 2 threads and after a resume; another seed other games.
#[test]
fn playtest_plays_othello_against_itself() {
    let out = tmp("playtest");
    let (a, b) = (out.join("one"), out.join("two"));
    let cfg = "configs/board/playtest_othello.toml";
    let text = cli_threads(1, &["playtest", cfg, "--out", a.to_str().unwrap(), "--quiet"]);
    assert!(text.contains("black wins (95% CI)") && text.contains("white wins (95% CI)"), "{text}");
    let dir = a.join("board_playtest_othello/seed-1");
    let games = csv(&dir.join("games.csv"));
    assert_eq!(games.len() - 1, 2 * 10, "two searches × 10 games");
    let (results, moves) = (column(&games, "result"), column(&games, "moves"));
    let (rb, rw) = (column(&games, "return_black"), column(&games, "return_white"));
    for (((r, m), b), w) in results.iter().zip(&moves).zip(&rb).zip(&rw) {
        let want = match r.as_str() {
            "black" => ("1", "-1"),
            "white" => ("-1", "1"),
            "draw" => ("0", "0"),
            _ => panic!("result `{r}`"),
        };
        assert_eq!((b.as_str(), w.as_str()), want, "returns of a game ending `{r}`");
        // At least 9 moves end a game (the shortest wipe-out); at most 60 placements and passes.
        let m: u32 = m.parse().unwrap();
        assert!((9..=70).contains(&m), "an Othello game of {m} moves");
    }
    let rates = csv(&dir.join("rates.csv"));
    assert_eq!(column(&rates, "condition"), ["explore", "greedy"]);
    let num = |c: &str| column(&rates, c).iter().map(|x| x.parse::<f64>().unwrap()).collect::<Vec<f64>>();
    let (black, white, draw, n) = (num("black_rate"), num("white_rate"), num("draw_rate"), num("games"));
    for k in 0..2 {
        assert_eq!(n[k], 10.0);
        assert!((black[k] + white[k] + draw[k] - 1.0).abs() < 1e-3, "rates {} + {} + {} ≠ 1", black[k], white[k], draw[k]);
        let name = &rates[k + 1][0];
        let won = results[k * 10..(k + 1) * 10].iter().filter(|r| *r == "black").count();
        assert_eq!(won as f64 / 10.0, black[k], "{name}: black's rate counts its games");
        assert!(num("black_low")[k] <= black[k] && black[k] <= num("black_high")[k], "{name}: the interval holds the rate");
    }
    // The first game of each search replays to its result.
    let rep: playforge::players::ai::Replay =
        serde_json::from_str(&std::fs::read_to_string(dir.join("replays/explore.json")).unwrap()).unwrap();
    assert_eq!(rep.result, results[0]);
    let text = cli(&["replay", dir.join("replays/explore.json").to_str().unwrap()]);
    assert!(text.contains(&format!("end: {} after", rep.result)), "replay without the result `{}`:\n{text}", rep.result);
    // Two threads, the same files; a resume after losing two games, the same files.
    cli_threads(2, &["playtest", cfg, "--out", b.to_str().unwrap(), "--quiet"]);
    let dir_b = b.join("board_playtest_othello/seed-1");
    assert_eq!(playtest_files(&dir), playtest_files(&dir_b), "1 and 2 threads differ");
    std::fs::remove_file(dir_b.join("runs/explore/rep-03.json")).unwrap();
    std::fs::remove_file(dir_b.join("runs/greedy/rep-10.json")).unwrap();
    cli_threads(2, &["playtest", cfg, "--out", b.to_str().unwrap(), "--quiet", "--resume"]);
    assert_eq!(playtest_files(&dir), playtest_files(&dir_b), "a resumed run differs");
    // Another seed plays other games.
    cli_threads(2, &["playtest", cfg, "--out", b.to_str().unwrap(), "--quiet", "--seed", "2"]);
    let other = std::fs::read(b.join("board_playtest_othello/seed-2/games.csv")).unwrap();
    assert_ne!(other, std::fs::read(dir.join("games.csv")).unwrap(), "seed 2 played seed 1's games");
}

/// A two-player playtest measures what a designer asks of a game: Hex's first player wins with
/// best play, and on a 3 × 3 board a self-play search with 2 000 rollouts per move finds the
/// win in every game, in the fewest moves (black's three stones: 5 moves), while near-random
/// play (1 rollout) gives white some games and takes longer. The size is a variant's parameter.
#[test]
fn a_hex_self_play_playtest_finds_the_first_move_win() {
    let out = tmp("playtest-hex");
    let cfg = out.join("hex.toml");
    std::fs::write(
        &cfg,
        format!(
            "[playtest]\nname = \"hex3\"\ngame = \"{}\"\nreplicates = 12\nrollouts = 2000\nuct = 1.4\n\n[[variant]]\nname = \"h3\"\nparameters = {{ \"rules.size\" = 3 }}\n",
            root().join("games/hex.wgdl").display()
        ),
    )
    .unwrap();
    let rates = |rollouts: &str, tag: &str| {
        let o = out.join(tag);
        cli(&["playtest", cfg.to_str().unwrap(), "--out", o.to_str().unwrap(), "--quiet", "--rollouts", rollouts]);
        let rows = csv(&o.join("hex3/seed-1/rates.csv"));
        let get = |c: &str| column(&rows, c)[0].parse::<f64>().unwrap();
        (get("black_wins"), get("mean_moves"))
    };
    let (strong_wins, strong_len) = rates("2000", "strong");
    let (weak_wins, weak_len) = rates("1", "weak");
    assert_eq!((strong_wins, strong_len), (12.0, 5.0), "the strong search: black's wins and the mean length");
    assert!(weak_wins < 12.0 && weak_len > 5.0, "near-random play: black won {weak_wins} of 12 in {weak_len} moves on average");
}

/// A one-player key on a two-player game is refused at its line: a game of sides is judged by
/// who wins, not by a score.
#[test]
fn a_two_player_playtest_refuses_a_score_at_its_line() {
    let dir = tmp("playtest-score");
    let cfg = dir.join("playtest_othello.toml");
    let game = root().join("games/othello.wgdl");
    std::fs::write(
        &cfg,
        format!(
            "[playtest]\nname = \"board_playtest\"\ngame = \"{}\"\nreplicates = 1\nrollouts = 10\nuct = 2\nscore = \"game.moves\"\n",
            game.display()
        ),
    )
    .unwrap();
    let (ok, text) = cli_any(&["playtest", cfg.to_str().unwrap(), "--out", dir.to_str().unwrap(), "--quiet"]);
    assert!(!ok, "playtest ran with a score on Othello:\n{text}");
    assert!(text.contains("on a game of sides; expected no `score`"), "{text}");
    assert!(text.contains("playtest_othello.toml:7:1"), "the error names the config's `score` line: {text}");
}

/// `generate` over Hex's declared size (narrowed to 3–7): CMA-ES finds a size whose random games
/// last 15–25 moves; its best.toml holds a size in range and `verify` replays it.
#[test]
fn generate_evolves_hex_size() {
    let out = tmp("generate");
    cli(&["generate", "configs/board/generate_hex.toml", "--out", out.to_str().unwrap(), "--quiet"]);
    let dir = out.join("board_generate_hex/cma-seed-1");
    let best = std::fs::read_to_string(dir.join("best.toml")).unwrap();
    let size: f64 = best
        .lines()
        .find_map(|l| l.trim().strip_prefix("\"rules.size\" =").or_else(|| l.trim().strip_prefix("rules.size =")))
        .unwrap_or_else(|| panic!("no rules.size in best.toml:\n{best}"))
        .trim()
        .parse()
        .unwrap();
    assert!((3.0..=7.0).contains(&size) && size.fract() == 0.0, "size {size}");
    assert!(csv(&dir.join("history.csv")).len() > 1, "empty history");
    let text = cli(&["verify", dir.join("best.toml").to_str().unwrap()]);
    assert!(text.contains("length"), "verify names the measures:\n{text}");
}

/// A MAP-Elites map of Hex sizes by random games' mean length: more than one size is kept.
#[test]
fn a_map_of_hex_sizes() {
    let out = tmp("generate-map");
    cli(&["generate", "configs/board/generate_hex_map.toml", "--out", out.to_str().unwrap(), "--quiet"]);
    let rows = csv(&out.join("board_generate_hex_map/map-elites-seed-1/archive.csv"));
    let mut sizes = column(&rows, "rules.size");
    sizes.dedup();
    // Sizes 3–7 give random games of about 7, 13, 23, 28 and 40 moves: distinct cells.
    assert!(sizes.len() >= 4, "sizes kept: {sizes:?}");
    assert!(sizes.iter().all(|s| (3..=7).contains(&s.parse::<i64>().unwrap())), "sizes outside 3–7: {sizes:?}");
}

/// `play` (one searcher over the whole game) and `experiment` (it over seeds) on Breakthrough.
#[test]
fn play_and_experiment_on_breakthrough() {
    let out = tmp("play");
    // The search controls both sides: it finds a line in which Black reaches the far row.
    let text = cli(&["play", "configs/board/play_breakthrough.toml", "--out", out.to_str().unwrap()]);
    assert!(text.contains("result 1.0000"), "no Black win found:\n{text}");
    assert!(out.join("board_play_breakthrough/seed-1/path.json").exists(), "no path.json:\n{text}");
    let text = cli(&["experiment", "configs/board/experiment_breakthrough.toml", "--out", out.to_str().unwrap(), "--quiet"]);
    let rows = csv(&out.join("board_experiment_breakthrough/results.csv"));
    // 2 conditions × 3 seeds.
    assert_eq!(rows.len() - 1, 6, "results.csv:\n{text}");
    assert!(column(&rows, "condition").iter().filter(|c| *c == "C 0.3").count() == 3, "{rows:?}");
}

/// The play page: each board game is listed, and a game between two random players started
/// through the API steps to its end with a winner (or, in Othello, possibly a draw).
#[test]
fn the_play_page_plays_each_board_game() {
    let out = tmp("serve");
    let addr = start_server(&out);
    let (code, body) = get(addr, "/api/games");
    assert_eq!(code, 200);
    let games: serde_json::Value = serde_json::from_str(&body).unwrap();
    let names: Vec<&str> = games["games"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
    for g in GAMES {
        assert!(names.contains(&g), "{g} not in {names:?}");
        let (code, mut v) = post(addr, "/api/new", &serde_json::json!({"game": g, "seed": 1, "seats": ["random", "random"]}));
        assert_eq!(code, 200, "{g}: {v}");
        let id = v["id"].clone();
        let mut steps = 0;
        while v["ai_to_move"].as_bool().unwrap() {
            v = post(addr, "/api/step", &serde_json::json!({"id": id})).1;
            assert!(v["error"].is_null(), "{g}: {v}");
            steps += 1;
            assert!(steps <= 200, "{g}: no end after 200 moves");
        }
        assert!(v["over"].as_bool().unwrap(), "{g}: stopped before the end: {v}");
        assert!(steps >= 5, "{g}: {steps} moves");
    }
    // A person against MCTS on Breakthrough: the person's move and the AI's answer.
    let (code, v) = post(addr, "/api/new", &serde_json::json!({"game": "breakthrough", "seed": 2, "seats": ["human", "mcts"]}));
    assert_eq!(code, 200, "{v}");
    let first = &v["legal"].as_array().unwrap()[0];
    let (code, after) = post(addr, "/api/move", &serde_json::json!({"id": v["id"], "i": first["i"], "name": first["name"]}));
    assert_eq!(code, 200, "{after}");
    assert_eq!(after["moves"].as_array().unwrap().len(), 2, "the person's move and MCTS's answer: {after}");
}

/// What the test above rests on, in one game: at the end of a random Othello game
/// `Program::status` names a winner, but MCTS's evaluator (`WinEval`, reading `State::outcome`)
/// gives both sides 0. Breakthrough's and Hex's winner lines are set by the move (they pass).
#[test]
fn mcts_sees_othello_wins() {
    use playforge::search::mcts::Evaluator;
    for g in ["breakthrough", "othello"] {
        let p = crate::util::game(&format!("{g}.wgdl")).program;
        let game = playforge::game::WgdlGame::new(p.clone());
        let mut st = p.initial_state().unwrap();
        let mut legal = Vec::new();
        let mut rng = playforge::rng::stream(5, 0, 0, 0);
        loop {
            p.legal_actions(&st, &mut legal).unwrap();
            if p.status(&st, &legal) != playforge::wgdl::Status::Running {
                break;
            }
            use rand::RngExt;
            p.apply(&mut st, legal[rng.random_range(0..legal.len())]).unwrap();
        }
        let status = p.status(&st, &legal);
        let seen = [0, 1].map(|side| playforge::players::agents::WinEval(&game).value(&st, side));
        match status {
            playforge::wgdl::Status::Won(k) => assert_eq!(seen[k as usize], 1.0, "{g}: {status:?} but MCTS sees {seen:?}"),
            s => assert_eq!(seen, [0.0, 0.0], "{g}: {s:?}"),
        }
    }
}

/// The value of `key = …` in a best.toml (quoted or not), as a number.
fn toml_number(text: &str, key: &str) -> f64 {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("\"{key}\" =")).or_else(|| l.trim().strip_prefix(&format!("{key} ="))))
        .unwrap_or_else(|| panic!("no {key} in:\n{text}"))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{key}: {e}"))
}

/// The `[measured]` line `name = [mean, low, high]` of a best.toml.
fn measured(text: &str, name: &str) -> [f64; 3] {
    let line = text.lines().find(|l| l.starts_with(&format!("{name} = ["))).unwrap_or_else(|| panic!("no measure {name} in:\n{text}"));
    let v: Vec<f64> = line.split_once('[').unwrap().1.trim_end_matches(']').split(',').map(|x| x.trim().parse().unwrap()).collect();
    [v[0], v[1], v[2]]
}

/// `generate` over Pig's target score (configs/board/generate_pig.toml): the answer is a whole
/// target in the narrowed range 10–60 whose random games surely last 40–50 decisions, reached
/// from a first generation far from it; Pig's die is chance's, drawn from each game's seed, so a second run
/// writes the same best.toml while the games themselves differ (the length's interval is not a
/// point); `verify` replays it on fresh seeds and it holds there too.
#[test]
fn generate_evolves_pig_target() {
    let run = |name: &str| {
        let out = tmp(name);
        cli(&["generate", "configs/board/generate_pig.toml", "--out", out.to_str().unwrap(), "--quiet"]);
        out.join("board_generate_pig/cma-seed-2")
    };
    let dir = run("generate-pig");
    let best = std::fs::read_to_string(dir.join("best.toml")).unwrap();
    let target = toml_number(&best, "rules.target");
    assert!((10.0..=60.0).contains(&target) && target.fract() == 0.0, "target {target}");
    let [mean, lo, hi] = measured(&best, "length");
    assert!((40.0..=50.0).contains(&mean), "random games of target {target} last {mean} decisions:\n{best}");
    assert!(lo < hi, "every game the same length: no chance drawn?\n{best}");
    // The search moved towards the goal: from a first generation whose best confirmed
    // candidate was far from the band to one surely inside it.
    let history = csv(&dir.join("history.csv"));
    let first: f64 = column(&history, "best_f")[0].parse().unwrap();
    let quality = toml_number(&best, "quality");
    assert!(quality == 1.0 && first < 0.9, "quality {quality}, the first generation's best {first}");
    // Reproducible although every game rolls its own die.
    let again = std::fs::read_to_string(run("generate-pig-again").join("best.toml")).unwrap();
    assert_eq!(best, again, "the same seed gave another best.toml");
    let text = cli(&["verify", dir.join("best.toml").to_str().unwrap()]);
    assert!(text.contains("length"), "verify names the measures:\n{text}");
}

/// Hex's grid (`view board hex` in games/hex.wgdl) is drawn as a rhombus of hexagons: `run
/// --board` indents each row half a cell (one space) right of the row below, and the picture the
/// play page and the report's replays show holds a `hexgrid` of hexagons, where Breakthrough's
/// grid stays squares.
#[test]
fn hex_is_drawn_as_hexagons() {
    let text = cli(&["run", "games/hex.wgdl", "--set", "rules.size=3", "--random", "0", "--board"]);
    assert!(text.contains("3   . . .\n2  . . .\n1 . . .\n  a b c\n"), "hex 3×3 start:\n{text}");
    let text = cli(&["run", "games/hex.wgdl", "--set", "rules.size=5", "--random", "4", "--seed", "2", "--board", "--quiet"]);
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit())).collect();
    assert_eq!(rows.len(), 5, "{text}");
    for (k, row) in rows.iter().enumerate() {
        // Row 5 first: its cells start after 4 spaces of lean (plus the margin's one).
        let lean = row[1..].chars().take_while(|c| *c == ' ').count() - 1;
        assert_eq!(lean, 4 - k, "row {}:\n{text}", 5 - k);
    }
    assert_eq!(rows.iter().map(|r| r.matches(['x', 'o']).count()).sum::<usize>(), 4, "four stones:\n{text}");
    let out = tmp("hexview");
    let addr = start_server(&out);
    for (g, hex) in [("hex", true), ("breakthrough", false)] {
        let (code, v) = post(addr, "/api/new", &serde_json::json!({"game": g, "seed": 1, "seats": ["human", "human"]}));
        assert_eq!(code, 200, "{g}: {v}");
        let svg = v["svg"].as_str().unwrap();
        assert_eq!(svg.contains(r#"<g class="hexgrid">"#), hex, "{g}: {svg}");
        let cells = svg.matches(r#"<g data-cell="g0-"#).count();
        let shapes = svg.matches(if hex { "<polygon points=" } else { "<rect x=" }).count();
        assert!(cells == 64 || cells == 121, "{g}: {cells} cells");
        assert!(shapes >= cells, "{g}: {shapes} shapes for {cells} cells");
    }
    // A Hex tournament's report: its replay frames are drawn as hexagons too.
    cli(&["tournament", "configs/board/tournament_hex.toml", "--out", out.to_str().unwrap(), "--quiet"]);
    let html = std::fs::read_to_string(out.join("board_tournament_hex/seed-8/report.html")).unwrap();
    assert!(html.contains("hexgrid") && html.contains("polygon points="), "the report's Hex frames are not hexagons");
}
