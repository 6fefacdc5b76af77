//! `personas` on a game that runs in its own process (the Python roguelike floor over the
//! bridge): GP evolves the prefix-tree search's selection formula; the evolved personas move
//! their measures the way they were asked to, past the game's own random play, on held-out
//! floors too; 1 or 2 threads and the executor's serialized path write the same history; the
//! config's names and what the tree cannot do are clear errors at their lines.

use playforge::exec::Executor;
use playforge::persona::config::PersonaConfig;
use playforge::persona::jobs::Setup;
use playforge::persona::run::{held_out, run_chosen};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("playforge-personas-external-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The shipped config with `edits`, the game by its absolute path.
fn shipped(edits: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(root().join("configs/personas_external_roguelike.toml")).unwrap();
    let game = root().join("games/external/roguelike.py");
    let mut all = vec![("game = \"../games/external/roguelike.py\"", format!("game = {:?}", game.display().to_string()))];
    all.extend(edits.iter().map(|(a, b)| (*a, b.to_string())));
    for (a, b) in all {
        assert!(text.contains(a), "the shipped config has no {a:?}");
        text = text.replace(a, &b);
    }
    text
}

fn setup(text: &str, out: &Path, exec: Executor) -> Setup {
    let path = Path::new("personas_external_roguelike.toml");
    let cfg = PersonaConfig::parse(path, text).unwrap_or_else(|e| panic!("{e}"));
    let mut s = Setup::new(cfg, text.to_string(), path, out).unwrap_or_else(|e| panic!("{e}"));
    s.exec = exec;
    s
}

#[test]
fn evolved_personas_move_their_measures_past_random_play_on_held_out_floors() {
    let out = tmp("shipped");
    let s = setup(&shipped(&[("generations = 8", "generations = 3")]), &out, Executor::Local);
    let done = AtomicU64::new(0);
    let outcomes = run_chosen(&s, &[0, 1], false, &done, &|_| {}).unwrap();
    let (gold, fights) = (&outcomes[0].1, &outcomes[1].1);
    assert_eq!((gold.history.len(), fights.history.len()), (3, 3));
    for o in [gold, fights] {
        assert!(o.dir.join("best_formula.txt").exists() && o.dir.join("history.csv").exists(), "{}", o.name);
    }
    // The last generation's best against the game's own random play on the same floors.
    let (g, f) = (gold.history.last().unwrap(), fights.history.last().unwrap());
    assert!(g.best > g.random, "gold: best {} vs random {}", g.best, g.random);
    assert!(f.best < f.random - 1.0, "fights: best {} vs random {}", f.best, f.random);
    // Held-out floors: the personas keep their direction against the random player there.
    let rows = held_out(&s, &outcomes, &done).unwrap();
    let measure = |agent: &str| rows.iter().find(|r| r.agent == agent).unwrap_or_else(|| panic!("no row {agent}")).measure;
    let random_fights = rows.iter().filter(|r| r.agent == "random").map(|r| r.measure).collect::<Vec<_>>();
    assert!(!random_fights.is_empty());
    assert!(measure("MinFights") < measure("vanilla (min fights)") + 1e-9, "{rows:?}");
    let md = playforge::persona::run::held_out_markdown(&s, &rows);
    assert!(md.contains("whole episodes per prefix-tree search"), "{md}");
}

#[test]
fn one_or_two_threads_and_serialized_jobs_give_the_same_history() {
    let text = shipped(&[("generations = 8", "generations = 2"), ("held_out = 30", "held_out = 0")]);
    let history = |name: &str, threads: usize, exec: Executor| {
        let out = tmp(name);
        let s = setup(&text, &out, exec);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let o = pool.install(|| run_chosen(&s, &[1], false, &AtomicU64::new(0), &|_| {})).unwrap();
        std::fs::read_to_string(o[0].1.dir.join("population.csv")).unwrap()
            + &o[0].1.history.iter().map(|r| format!("{} {} {} {}\n", r.best, r.vanilla, r.random, r.best_formula)).collect::<String>()
    };
    let a = history("t1", 1, Executor::Local);
    assert_eq!(a, history("t2", 2, Executor::Local), "1 vs 2 threads");
    assert_eq!(a, history("wire", 2, Executor::RoundTrip), "local vs serialized jobs");
}

#[test]
fn an_external_persona_config_is_checked_against_the_game_and_the_tree() {
    let good = shipped(&[]);
    // (the text replaced, its replacement, the line the error names, what the error says)
    for (from, to, line, want) in [
        ("reward = \"continuous\"", "reward = \"binary\"", "reward = ", &["reward = \"binary\" on an external game", "continuous"][..]),
        ("measure = \"gold\"", "measure = \"gold\"\naggregate = \"mean\"", "aggregate = ", &["aggregate = \"mean\" on an external game"]),
        ("measure = \"gold\"", "measure = \"silver\"", "measure = \"silver\"", &["\"silver\"", "turns, gold, hp, escaped, fights"]),
        ("score = \"score\"", "score = \"points\"", "score = \"points\"", &["score = \"points\"", "game.score"]),
        ("rooms = 8", "rooms = 80", "rooms = 80", &["rooms = 80", "[2, 8]"]),
        ("seed = 1\n", "seed = 1\nchance = \"fair\"\n", "chance = ", &["chance on an external game"]),
        (
            "command = [\"python3\", \"roguelike.py\"]",
            "command = [\"python3\", \"-c\", \"import sys; sys.exit(3)\"]",
            "command = ",
            &["exited"],
        ),
    ] {
        assert!(good.contains(from), "{from}");
        let text = good.replacen(from, to, 1);
        let at = format!("g.toml:{}:", text[..text.find(line).unwrap()].lines().count() + 1);
        let path = Path::new("g.toml");
        let err = match PersonaConfig::parse(path, &text) {
            Err(e) => e.to_string(),
            Ok(cfg) => Setup::new(cfg, text.clone(), path, Path::new("/nonexistent")).err().expect("an error").to_string(),
        };
        for w in want.iter().chain([&at.as_str()]) {
            assert!(err.contains(w), "{from} → {to}: {err}\n(wanted {w})");
        }
    }
    // The human comparison reads WGDL states: a clear error, not a panic.
    let s = setup(&good, &tmp("humans"), Executor::Local);
    let Err(err) = s.measured(&s.cfg.list[0]) else { panic!("measured() of an external game is an error") };
    let err = err.to_string();
    assert!(err.contains("a game in its own process"), "{err}");
}
