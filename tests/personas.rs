//! Procedural personas: config errors name file:line:column, a run gives the same numbers on 1
//! and 2 threads and after an interruption and `--resume`, the outputs are written, and the
//! measured game's running mean is what it claims.

use playforge::game::Game;
use playforge::persona::config::PersonaConfig;
use playforge::persona::jobs::Setup;
use playforge::persona::play::{Agent, Search, play_game};
use playforge::persona::run::{GenRow, held_out, run_persona, with_finished};
use playforge::search::mcts::FinalChoice;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;

const TINY: &str = r#"
[personas]
name = "tiny"
game = "GAME"
seed = 3
generations = 3
games = 2
iterations = 8
held_out = 2

[gp]
population = 6
elites = 1
mutants = 2

[[persona]]
name = "MaxS"
measure = "game.score"
direction = "max"

[[persona]]
name = "MinM"
measure = "legal_moves"
aggregate = "mean"
direction = "min"
"#;

fn game_path() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("games/match3.wgdl").display().to_string()
}

fn tiny_text() -> String {
    TINY.replace("GAME", &game_path())
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("playforge-personas-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn setup(text: &str, out: &Path) -> Setup {
    let path = Path::new("tiny.toml");
    let cfg = PersonaConfig::parse(path, text).unwrap_or_else(|e| panic!("{e}"));
    Setup::new(cfg, text.to_string(), path, out).unwrap_or_else(|e| panic!("{e}"))
}

fn run(setup: &Setup, k: usize, resume: bool) -> Vec<GenRow> {
    let done = AtomicU64::new(0);
    run_persona(setup, k, resume, &done, &|_| {}).unwrap_or_else(|e| panic!("{e}")).history
}

fn err(text: &str) -> String {
    match PersonaConfig::parse(Path::new("bad.toml"), text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_configs_name_the_line_and_what_was_expected() {
    let t = tiny_text();
    let cases = [
        (t.replace("direction = \"max\"", "direction = \"up\""), "bad.toml:19:1", "expected \"max\" or \"min\""),
        (t.replace("games = 2", "games = 0"), "bad.toml:7:9", "expected a whole number from 1 to"),
        (t.replace("aggregate = \"mean\"", "aggregate = \"median\""), "bad.toml:24:1", "\"final\" or \"mean\""),
        (t.replace("iterations = 8", "iterations = 8\nreward = \"sometimes\""), "bad.toml:9:1", "\"binary\" or \"continuous\""),
        (t.replace("iterations = 8", "iterations = 8\nreward = \"continuous\""), "bad.toml:18:1", "range = [low, high]"),
        (t.replace("mutants = 2", "mutants = 9"), "bad.toml:11:1", "mutants"),
        (t.replace("name = \"MinM\"", "name = \"MaxS\""), "bad.toml:22:1", "distinct names"),
        (t.replace("seed = 3", "seed = 3\ncolour = 4"), "bad.toml", "unknown field `colour`"),
    ];
    for (text, at, expected) in cases {
        let e = err(&text);
        assert!(e.contains(at) && e.contains(expected), "wanted {at} … {expected}, got: {e}");
    }
    // A measure the game lacks is found when the game is compiled.
    let text = t.replace("measure = \"game.score\"", "measure = \"game.points\"");
    let cfg = PersonaConfig::parse(Path::new("bad.toml"), &text).unwrap();
    let e = Setup::new(cfg, text.clone(), Path::new("bad.toml"), &temp_dir("bad")).err().expect("an error").to_string();
    assert!(e.contains("bad.toml:18:1") && e.contains("game.points"), "{e}");
}

#[test]
fn same_numbers_on_one_and_two_threads_and_after_resume() {
    let text = tiny_text();
    let pool = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
    let one = pool(1).install(|| run(&setup(&text, &temp_dir("one")), 0, false));
    let two = pool(2).install(|| run(&setup(&text, &temp_dir("two")), 0, false));
    assert_eq!(one.len(), 3);
    let strip = |h: &[GenRow]| h.iter().map(|r| GenRow { elapsed_s: 0.0, ..r.clone() }).collect::<Vec<_>>();
    assert_eq!(strip(&one), strip(&two), "1 and 2 threads differ");
    // Interrupted after one generation, then resumed: the same history.
    let dir = temp_dir("resume");
    let mut s = setup(&text, &dir);
    s.max_generations = Some(1);
    assert_eq!(run(&s, 0, false).len(), 1);
    s.max_generations = None;
    let resumed = run(&s, 0, true);
    assert_eq!(strip(&resumed), strip(&one), "a resumed run differs from an uninterrupted one");
    // The outputs of a persona.
    for f in ["history.csv", "convergence.png", "hall_of_fame.md", "best_formula.txt", "population.csv", "checkpoint.json"] {
        assert!(dir.join("tiny/seed-3/MaxS").join(f).exists(), "{f} missing");
    }
    let history = std::fs::read_to_string(dir.join("tiny/seed-3/MaxS/history.csv")).unwrap();
    assert_eq!(history.lines().count(), 4, "a header and 3 generations:\n{history}");
    // Generation 0's goal is the random player's mean; later goals are the previous best.
    assert_eq!(one[0].goal, one[0].random);
    assert_eq!(one[1].goal, one[0].best);
    assert_eq!(one[2].goal, one[1].best);
    // A resume with another config is refused.
    let other = setup(&text.replace("iterations = 8", "iterations = 9"), &dir);
    let done = AtomicU64::new(0);
    let e = run_persona(&other, 0, true, &done, &|_| {}).expect_err("a refusal").to_string();
    assert!(e.contains("another configuration"), "{e}");
}

#[test]
fn min_personas_rank_by_the_smallest_mean() {
    let text = tiny_text();
    let h = run(&setup(&text, &temp_dir("min")), 1, false);
    for r in &h {
        assert_eq!(r.best, r.min, "generation {}: a min persona's best is the population's minimum", r.generation);
        assert!(r.best_legal_moves > 0.0);
    }
}

#[test]
fn the_measured_mean_is_the_mean_of_legal_moves_before_each_move() {
    let text = tiny_text();
    let s = setup(&text, &temp_dir("measure"));
    let p = &s.cfg.list[1];
    let m = s.measured(p).unwrap();
    let search = Search { iterations: 5, rollout_horizon: 20, final_choice: FinalChoice::Formula };
    let mut rng = playforge::rng::stream(1, 0, 0, 0);
    let r = play_game(&m, 42, s.score.unwrap(), &Agent::Random, &search, &mut rng).unwrap();
    // Replay the same random game by hand and average the legal-move counts.
    let g = m.seeded(42);
    let mut st = g.initial().unwrap();
    let mut rng = playforge::rng::stream(1, 0, 0, 0);
    let (mut sum, mut n) = (0usize, 0usize);
    let mut legal = Vec::new();
    loop {
        g.legal(&st, &mut legal).unwrap();
        if legal.is_empty() {
            break;
        }
        sum += legal.len();
        n += 1;
        use rand::RngExt;
        let mv = legal[rng.random_range(0..legal.len())];
        g.apply(&mut st, mv).unwrap();
    }
    assert_eq!(n, 20);
    let want = sum as f64 / n as f64;
    assert!((r.measure - want).abs() < 1e-12 && (r.legal_moves - want).abs() < 1e-12, "{} {} vs {want}", r.measure, r.legal_moves);
    assert!(r.score >= 1200.0);
}

#[test]
fn a_score_maximizing_search_beats_random_play() {
    // The persona harness's MCTS (full expansion, formula choice) with a plain greedy formula
    // and the continuous reward: clearly above random play on the same seeds.
    let text = tiny_text()
        .replace("iterations = 8", "iterations = 60\nreward = \"continuous\"")
        .replace("direction = \"max\"", "direction = \"max\"\nrange = [0, 10000]")
        .replace("direction = \"min\"", "direction = \"min\"\nrange = [0, 30]");
    let s = setup(&text, &temp_dir("beats"));
    let p = &s.cfg.list[0];
    let m = s.measured(p).unwrap();
    let f = playforge::search::formula::Formula::parse("mean + 0.5 * sqrt(ln(parent) / visits)").unwrap();
    let greedy = Agent::Mcts { formula: f, reward: s.reward(p, 0.0) };
    let (mut a, mut b) = (0.0, 0.0);
    for seed in 0..12 {
        let mut rng = playforge::rng::stream(seed, 0, 0, 0);
        a += play_game(&m, seed, s.score.unwrap(), &greedy, &s.search, &mut rng).unwrap().score;
        b += play_game(&m, seed, s.score.unwrap(), &Agent::Random, &s.search, &mut rng).unwrap().score;
    }
    assert!(a > 1.15 * b, "search {a} vs random {b}");
}

/// Personas run in pieces (`--only MaxS`, then `--only MinM`) give the same held-out table as
/// one run of both: the table holds every persona finished so far, and the random player's row
/// no longer depends on which personas ran (it changed with `--only`). Runs with another seed
/// write another folder (`--seed 9` overwrote seed 3's files in part).
#[test]
fn held_out_covers_every_finished_persona_and_seeds_have_their_own_folders() {
    let text = tiny_text();
    let done = AtomicU64::new(0);
    let whole = setup(&text, &temp_dir("whole"));
    let both: Vec<_> = (0..2).map(|k| (k, run_persona(&whole, k, false, &done, &|_| {}).unwrap())).collect();
    let table = held_out(&whole, &both, &done).unwrap();
    let pieces = setup(&text, &temp_dir("pieces"));
    let first = vec![(0, run_persona(&pieces, 0, false, &done, &|_| {}).unwrap())];
    let alone = held_out(&pieces, &with_finished(&pieces, &first), &done).unwrap();
    let second = vec![(1, run_persona(&pieces, 1, false, &done, &|_| {}).unwrap())];
    let merged = held_out(&pieces, &with_finished(&pieces, &second), &done).unwrap();
    let rows = |t: &[playforge::persona::run::HeldOutRow]| {
        t.iter().map(|r| format!("{} {} {} {}", r.agent, r.persona, r.measure, r.score_mean)).collect::<Vec<_>>()
    };
    assert_eq!(rows(&merged), rows(&table), "pieces and one run differ");
    // MaxS alone: its two rows and the same random row.
    assert_eq!(rows(&alone)[..2], rows(&table)[..2]);
    assert_eq!(rows(&alone).last(), rows(&table).last());
    assert!(rows(&table).last().unwrap().starts_with("random"));
    // Another seed, another folder.
    let nine = setup(&text.replace("seed = 3", "seed = 9"), &temp_dir("pieces"));
    assert_ne!(nine.out_dir, pieces.out_dir);
    assert!(nine.out_dir.ends_with("tiny/seed-9"), "{}", nine.out_dir.display());
}

/// Ask/tell over the persona loop with the built-in play told back writes the folder the
/// command line's loop writes (`run_chosen`), file for file.
#[test]
fn ask_tell_with_the_built_in_play_is_the_cli_run() {
    use playforge::persona::asktell::AskTell;
    use playforge::persona::run::run_chosen;
    let dir = temp_dir("asktell");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, tiny_text()).unwrap();
    let out = dir.join("out");
    let keep = |tag: &str| {
        let to = dir.join(tag);
        std::fs::rename(out.join("tiny/seed-3"), &to).unwrap();
        to
    };
    let setup = Setup::load(&config, None, None, Some(&out)).unwrap();
    run_chosen(&setup, &[0, 1], false, &AtomicU64::new(0), &|_| {}).unwrap();
    let cli = keep("cli");
    let mut at = AskTell::start(&config, None, None, Some(&out), Vec::new(), false).unwrap();
    let mut asked = 0;
    while let Some(jobs) = at.ask().unwrap() {
        asked += 1;
        let results = at.evaluate(&jobs).unwrap();
        at.tell(results).unwrap();
    }
    assert_eq!(at.outcomes().unwrap().len(), 2);
    // Per persona and generation: the random player, then vanilla and the individuals; then the
    // held-out table's batches.
    assert_eq!(asked, 2 * 3 * 2 + 2 * 3 + 1);
    assert_eq!(crate::util::outputs(&cli), crate::util::outputs(&keep("asktell")));
    // A wrong number of results is refused.
    let mut at = AskTell::start(&config, Some(4), None, Some(&out), vec![0], false).unwrap();
    let jobs = at.ask().unwrap().unwrap();
    assert!(!jobs.is_empty());
    assert!(at.tell(Vec::new()).unwrap_err().to_string().contains("expected one per game"));
}

/// The games sent through the serialized worker path (as a Ray worker gets them) write the same
/// files as the local run, byte for byte (tests/exec.rs does the other commands).
#[test]
fn personas_through_serialized_jobs_write_the_same_files() {
    let go = |exec: playforge::exec::Executor, tag: &str| {
        let mut s = setup(&tiny_text(), &temp_dir(tag));
        s.exec = exec;
        let done = AtomicU64::new(0);
        let outcomes: Vec<_> = (0..2).map(|k| (k, run_persona(&s, k, false, &done, &|_| {}).unwrap())).collect();
        held_out(&s, &outcomes, &done).unwrap();
        assert_eq!(done.load(std::sync::atomic::Ordering::Relaxed), s.total_games(2, 2));
        crate::util::outputs(&s.out_dir)
    };
    let local = go(playforge::exec::Executor::Local, "wire-local");
    let wire = go(playforge::exec::Executor::RoundTrip, "wire-wire");
    assert!(local.contains_key(Path::new("held_out.md")) && local.contains_key(Path::new("MaxS/history.csv")), "{:?}", local.keys());
    assert_eq!(local.keys().collect::<Vec<_>>(), wire.keys().collect::<Vec<_>>());
    for (name, bytes) in &local {
        assert!(bytes == &wire[name], "{} differs between the local and the serialized executor", name.display());
    }
}

/// `humans`: traces recorded on two boards (one of another game, one unfinished: skipped with the
/// reason), each persona of a run folder and the baselines played on the same boards; the human
/// columns are the traces' own scores.
#[test]
fn humans_puts_the_traces_beside_every_persona_on_the_same_boards() {
    let out = temp_dir("humans");
    let bin = env!("CARGO_BIN_EXE_playforge");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let traces = out.join("traces");
    std::fs::create_dir_all(&traces).unwrap();
    let record = |args: &[&str], file: &str| {
        let o = std::process::Command::new(bin).args(args).arg("--record").arg(traces.join(file)).current_dir(root).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    for (seed, chance, file) in [("1", "5", "a.json"), ("2", "5", "b.json"), ("3", "6", "c.json")] {
        record(&["run", "games/match3.wgdl", "--random", "100", "--seed", seed, "--chance-seed", chance, "--quiet"], file);
    }
    record(&["run", "games/match3.wgdl", "--random", "3", "--chance-seed", "6", "--quiet"], "unfinished.json");
    record(&["run", "games/connect_four.wgdl", "--random", "50", "--quiet"], "other.json");
    // A personas run folder by hand: two formulas with their goals.
    let from = out.join("run");
    for (name, formula, goal) in [("MaxS", "wins / visits + sqrt(ln(parent) / visits)", "2000"), ("MinM", "wins / visits", "5")] {
        std::fs::create_dir_all(from.join(name)).unwrap();
        std::fs::write(from.join(name).join("best_formula.txt"), format!("{formula}\n# goal: {goal}\n")).unwrap();
    }
    let cfg = out.join("tiny.toml");
    std::fs::write(&cfg, tiny_text()).unwrap();
    let o = std::process::Command::new(bin)
        .args(["humans", cfg.to_str().unwrap(), "--traces", traces.to_str().unwrap(), "--from", from.to_str().unwrap(), "--games", "2"])
        .args(["--out", out.join("o").to_str().unwrap()])
        .current_dir(root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{text}");
    let dir = out.join("o/tiny/humans");
    let md = std::fs::read_to_string(dir.join("humans.md")).unwrap();
    assert!(md.contains("| MaxS | MinM | Vanilla | Random |"), "{md}");
    assert!(md.contains("| 5 | 2 |") && md.contains("| 6 | 1 |"), "two boards, two traces and one: {md}");
    assert!(md.contains("unfinished.json`: unfinished") && md.contains("other.json`: a game of"), "{md}");
    // The human columns are the traces' scores, played again here.
    let rows: Vec<Vec<String>> =
        std::fs::read_to_string(dir.join("humans.csv")).unwrap().lines().map(|l| l.split(',').map(String::from).collect()).collect();
    let human: Vec<&Vec<String>> = rows.iter().filter(|r| r[1] == "human").collect();
    assert_eq!(human.len(), 3);
    let program = playforge::wgdl::load(&root.join("games/match3.wgdl")).unwrap().program;
    for r in &human {
        let rep: playforge::players::ai::Replay = serde_json::from_str(&std::fs::read_to_string(&r[4]).unwrap()).unwrap();
        let game = playforge::game::WgdlGame::new(program.clone()).with_seed(rep.chance_seed);
        let mut st = game.initial().unwrap();
        let mut legal = Vec::new();
        for name in &rep.moves {
            game.legal(&st, &mut legal).unwrap();
            let m = *legal.iter().find(|&&m| program.action_name(&st, m) == *name).unwrap();
            game.apply(&mut st, m).unwrap();
        }
        let score = program.read(&st, program.value_ref("game.score").unwrap());
        assert_eq!(r[2].parse::<f64>().unwrap(), score, "{r:?}");
        assert_eq!(r[0], rep.chance_seed.to_string());
    }
    // Every agent played each board twice.
    for who in ["MaxS", "MinM", "Vanilla", "Random"] {
        assert_eq!(rows.iter().filter(|r| r[1] == who).count(), 4, "{who}");
    }
    assert!(dir.join("humans.svg").exists() && dir.join("report.html").exists());
}
