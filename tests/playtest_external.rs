//! `playtest` on games that run in their own process: the shipped configs on the Python
//! roguelike floor and the JavaScript deck-builder (every output of a playtest; the exact best
//! of an exhausted condition equal to a brute-force walk of the floor's WGDL twin), and a
//! config's names checked against what the game declares, each error at its file:line:column.

use playforge::playtest::config::PlaytestConfig;
use playforge::playtest::run::{run_playtest, write_reports};
use playforge::playtest::setup::Setup;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("playforge-external-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A shipped config made smaller, loaded as `playforge playtest` loads it.
fn shipped(name: &str, edits: &[(&str, &str)], dir: &Path) -> Setup {
    let mut text = std::fs::read_to_string(root().join("configs").join(name)).unwrap();
    for (a, b) in edits {
        assert!(text.contains(a), "{name} has no {a:?}");
        text = text.replace(a, b);
    }
    let path = root().join("configs").join(format!("test-{}-{name}", std::process::id()));
    std::fs::write(&path, &text).unwrap();
    let (cfg, text) = PlaytestConfig::load(&path).unwrap();
    let setup = Setup::new(cfg, &text, &path, dir);
    std::fs::remove_file(&path).unwrap();
    setup.unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_roguelike_playtest_writes_every_output_and_its_exhausted_bests_are_exact() {
    let dir = temp_dir("roguelike");
    let s =
        shipped("playtest_external_roguelike.toml", &[("replicates = 10", "replicates = 3"), ("rollouts = 3000", "rollouts = 400")], &dir);
    assert_eq!(s.conditions.len(), 6);
    let out = run_playtest(&s, false, &AtomicU64::new(0)).unwrap();
    let (rows, md) = write_reports(&s, &out).unwrap();
    assert!(md.contains("## Mann-Whitney U"), "{md}");
    let d = &s.out_dir;
    for c in &s.conditions {
        assert!(d.join("curves").join(format!("{}.csv", c.file)).exists(), "{}", c.name);
        let best = std::fs::read_to_string(d.join("best").join(format!("{}.trace", c.file))).unwrap();
        assert!(best.contains("replay: an episode with this seed"), "{best}");
    }
    for f in ["finals.csv", "mann_whitney.csv", "playtest.png", "summary.md"] {
        assert!(d.join(f).exists(), "{f}");
    }
    // The regular floor is small: CUT_OFF exhausts it, and its best is the floor's exact best,
    // which a brute-force walk of the WGDL twin under the same layout finds.
    let regular = s.conditions.iter().position(|c| c.name == "unrestricted/regular").unwrap();
    for rep in &out.reps[regular] {
        assert!(rep.exhausted && rep.rollouts < 400, "replicate {} used {} rollouts", rep.replicate, rep.rollouts);
        assert_eq!(rep.best, twin_best(rep.game_seed % 1000), "replicate {}", rep.replicate);
        assert!(rep.failures.is_empty());
    }
    // The styles restrict: never drinking cannot beat drinking when you like.
    let mean = |name: &str| rows.iter().find(|r| r.name == name).unwrap().mean;
    assert!(mean("hoarder/regular") <= mean("unrestricted/regular"));
    // Resumed from its replicate files, the same numbers.
    let again = run_playtest(&s, true, &AtomicU64::new(0)).unwrap();
    let bests = |o: &playforge::playtest::setup::Outcome| o.reps.iter().flatten().map(|r| (r.best, r.rollouts)).collect::<Vec<_>>();
    assert_eq!(bests(&out), bests(&again));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The best score of the regular floor with `layout`, by walking every line of the twin.
fn twin_best(layout: u64) -> f64 {
    let text = std::fs::read_to_string(root().join("games/external/roguelike.wgdl")).unwrap();
    let opts = playforge::wgdl::CompileOptions { overrides: vec![("hero.layout".into(), layout as f64)], ..Default::default() };
    let program = playforge::wgdl::compile_str_with("roguelike.wgdl", &text, &opts).unwrap().program;
    let score = program.value_ref("game.score").unwrap();
    let game = playforge::bridge::local::WgdlEpisodes::new(playforge::game::WgdlGame::new(program), score, 100);
    fn walk(game: &playforge::bridge::local::WgdlEpisodes, prefix: &mut Vec<u64>) -> f64 {
        let ep = playforge::bridge::protocol::Episode {
            id: 0,
            seed: 0,
            policy_seed: 0,
            settings: serde_json::json!({}),
            prefix: prefix.clone(),
        };
        let o = game.play(&ep).unwrap();
        if o.trace.len() == prefix.len() {
            return o.score;
        }
        (0..o.trace[prefix.len()][1]).fold(f64::NEG_INFINITY, |b, c| {
            prefix.push(c);
            let v = walk(game, prefix);
            prefix.pop();
            b.max(v)
        })
    }
    walk(&game, &mut Vec::new())
}

fn node() -> bool {
    std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn the_deckbuilder_playtest_runs_in_node() {
    if !node() {
        eprintln!("skipped: no `node` on the PATH");
        return;
    }
    let dir = temp_dir("deck");
    let s = shipped(
        "playtest_external_deckbuilder.toml",
        &[("replicates = 10", "replicates = 2"), ("rollouts = 2000", "rollouts = 150")],
        &dir,
    );
    let out = run_playtest(&s, false, &AtomicU64::new(0)).unwrap();
    let (rows, md) = write_reports(&s, &out).unwrap();
    assert_eq!(rows.len(), 6, "{md}");
    for r in out.reps.iter().flatten() {
        assert_eq!((r.rollouts, r.exhausted), (150, false), "the deck-builder's tree is far too big to exhaust");
        assert!(r.best > 0.0 && r.failures.is_empty());
        assert_eq!(r.improvements.last().map(|i| i.1), Some(r.best));
    }
    assert!(s.out_dir.join("best/no_pass-cheap_gold.trace").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The error for a roguelike config with `edits`.
fn err(edits: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(root().join("configs/playtest_external_roguelike.toml")).unwrap();
    for (a, b) in edits {
        assert!(text.contains(a), "no {a:?}");
        text = text.replacen(a, b, 1);
    }
    let path = root().join("configs").join(format!("bad-{}-{}.toml", std::process::id(), edits.len()));
    std::fs::write(&path, &text).unwrap();
    let r = PlaytestConfig::load(&path).and_then(|(cfg, text)| Setup::new(cfg, &text, &path, Path::new("/nonexistent")).map(|_| ()));
    std::fs::remove_file(&path).unwrap();
    let e = r.expect_err("an error").to_string();
    assert!(e.contains(".toml:"), "the error names the file: {e}");
    e
}

#[test]
fn a_config_is_checked_against_what_the_game_declares() {
    let e = err(&[("name = \"brave\"", "name = \"coward\"")]);
    assert!(e.contains("style \"coward\" is not one of game \"roguelike\"'s; expected one of: unrestricted, brave, hoarder"), "{e}");
    assert!(e.contains(":28:"), "at the style's line: {e}");
    let e = err(&[("name = \"deep\"", "name = \"deep\"\nparameters = { rooms = 12 }")]);
    assert!(e.contains("rooms = 12; expected a whole number in [2, 8]"), "{e}");
    let e = err(&[("name = \"deep\"", "name = \"deep\"\nparameters = { wizards = 1 }")]);
    assert!(e.contains("no parameter `wizards`") && e.contains("rooms, danger, potions, sneaks, hp"), "{e}");
    let e = err(&[("uct = 20", "uct = 20\nscore = \"treasure\"")]);
    assert!(
        e.contains(
            "score = \"treasure\"; expected \"game.score\" or one of game \"roguelike\"'s measures: turns, gold, hp, escaped, fights"
        ),
        "{e}"
    );
    let e = err(&[("name = \"brave\"", "name = \"persona\"\nformula = \"mean + \"")]);
    assert!(e.contains(":28:") || e.contains(":29:"), "the formula's error at its line: {e}");
    let e = err(&[("name = \"brave\"", "name = \"brave\"\nweights = { fight = 1 }")]);
    assert!(e.contains("weights on a style of an external game"), "{e}");
    let e = err(&[("command = [\"python3\", \"roguelike.py\"]", "command = [\"no-such-program-here\"]")]);
    assert!(e.contains("cannot start `no-such-program-here`"), "{e}");
    let e = err(&[("command = [\"python3\", \"roguelike.py\"]", "command = []")]);
    assert!(e.contains("command = []; expected a program and its arguments"), "{e}");
    // A persona's formula on a style the game does not declare: the game plays unrestricted
    // (no style in the settings) and the formula drives the search.
    let dir = temp_dir("persona");
    let s = shipped("playtest_external_roguelike.toml", &[("name = \"brave\"", "name = \"persona\"\nformula = \"best\"")], &dir);
    let c = s.conditions.iter().find(|c| c.name == "persona/regular").unwrap();
    assert!(c.describe.contains("\"style\":null") && c.describe.contains("prefix-tree formula best"), "{}", c.describe);
    std::fs::remove_dir_all(&dir).unwrap();
    let e = err(&[("workers = 2", "workers = 0")]);
    assert!(e.contains("workers"), "{e}");
}
