//! Playtest experiments (Monster Carlo): named overlays select styles and variants, the factored
//! encoding offers kinds first, the stacker's styles restrict what they claim to, CUT_OFF finds
//! the exhaustive optimum of a tiny board and stops early, runs are the same on 1 and 2 threads
//! and after a resume, the outputs are written, and config errors name file:line:column.

use crate::util::compile_err;
use playforge::game::{Game, WgdlGame};
use playforge::playtest::config::PlaytestConfig;
use playforge::playtest::encode::{EMove, Encoded};
use playforge::playtest::run::{run_playtest, write_reports};
use playforge::playtest::setup::Setup;
use playforge::search::mcts::Goals;
use playforge::wgdl::{self, CompileOptions, Program, Status};
use rand::{RngExt, SeedableRng};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn stacker(overlays: &[&str], params: &[(&str, f64)]) -> Arc<Program> {
    let opts = CompileOptions {
        overlays: overlays.iter().map(|s| s.to_string()).collect(),
        overrides: params.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ..CompileOptions::default()
    };
    wgdl::load_with(&root().join("games/stacker.wgdl"), &opts).unwrap_or_else(|e| panic!("{e}")).program
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("playforge-playtest-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn setup(text: &str, out: &Path) -> Setup {
    let text = text.replace("GAME", &root().join("games/stacker.wgdl").display().to_string());
    let path = Path::new("pt.toml");
    let cfg = PlaytestConfig::parse(path, &text).unwrap_or_else(|e| panic!("{e}"));
    Setup::new(cfg, &text, path, out).unwrap_or_else(|e| panic!("{e}"))
}

fn setup_err(text: &str) -> String {
    let text = text.replace("GAME", &root().join("games/stacker.wgdl").display().to_string());
    let path = Path::new("pt.toml");
    match PlaytestConfig::parse(path, &text) {
        Err(e) => e.to_string(),
        Ok(cfg) => match Setup::new(cfg, &text, path, Path::new("/nonexistent")) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected an error for\n{text}"),
        },
    }
}

const OVERLAYS: &str = "class c
attribute c v long 1
variant not big: attribute c w long 1
variant big: attribute c w long 10
object o is c
initial o
action c step
condition step this.v < 5
style slow: condition step this.v < 2
consequence inc direct this.v = this.v + this.w
hasConsequence step inc
goal 1 o.v >= 2
";

fn start_value(p: &Program, path: &str) -> f64 {
    let st = p.initial_state().unwrap();
    p.read(&st, p.value_ref(path).unwrap())
}

#[test]
fn overlays_switch_lines_on_and_off() {
    let plain = wgdl::compile_str("t.wgdl", OVERLAYS).unwrap_or_else(|e| panic!("{e}")).program;
    assert_eq!(start_value(&plain, "o.w"), 1.0, "`variant not big:` counts when big is not selected");
    let names: Vec<String> = plain.overlays.iter().map(|(k, n)| format!("{} {n}", k.word())).collect();
    assert_eq!(names, ["variant big", "style slow"]);
    let big = wgdl::compile_str_with("t.wgdl", OVERLAYS, &CompileOptions { overlays: vec!["big".into()], ..Default::default() })
        .unwrap_or_else(|e| panic!("{e}"))
        .program;
    assert_eq!(start_value(&big, "o.w"), 10.0);
    // The style's extra condition: after one step (v = 2) `slow` allows no more steps.
    let slow = wgdl::compile_str_with("t.wgdl", OVERLAYS, &CompileOptions { overlays: vec!["slow".into()], ..Default::default() })
        .unwrap_or_else(|e| panic!("{e}"))
        .program;
    for (p, legal_after_one) in [(&plain, 1), (&slow, 0)] {
        let mut st = p.initial_state().unwrap();
        let mut legal = Vec::new();
        p.legal_actions(&st, &mut legal).unwrap();
        p.apply(&mut st, legal[0]).unwrap();
        p.legal_actions(&st, &mut legal).unwrap();
        assert_eq!(legal.len(), legal_after_one);
    }
    // An unknown name is an error that lists the declared ones.
    let e = wgdl::compile_str_with("t.wgdl", OVERLAYS, &CompileOptions { overlays: vec!["fast".into()], ..Default::default() })
        .err()
        .expect("an unknown overlay is an error")
        .to_string();
    assert!(e.contains("fast") && e.contains("variant big") && e.contains("style slow"), "{e}");
    // A tag needs a name and a colon.
    let d = compile_err("class c\nstyle : class d\n").to_string();
    assert!(d.contains("t.wgdl:2:7") || d.contains(":2:7"), "{d}");
    let d = compile_err("class c\nvariant x class d\n").to_string();
    assert!(d.contains(":2:11") && d.contains("`:`"), "{d}");
}

/// Plays random moves of the encoded stacker until the end; returns the game's own moves.
fn random_game(game: &Encoded<WgdlGame>, seed: u64, mut check: impl FnMut(&[EMove<wgdl::Action>])) -> (Vec<wgdl::Action>, f64) {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut st = game.initial().unwrap();
    let mut trace = Vec::new();
    let mut legal = Vec::new();
    loop {
        game.legal(&st, &mut legal).unwrap();
        if game.status(&st, &legal) != Status::Running {
            break;
        }
        check(&legal);
        let m = legal[rng.random_range(0..legal.len())];
        trace.push(m);
        game.apply(&mut st, m).unwrap();
    }
    let p = &game.game.program;
    (Encoded::moves(&trace), p.read(&st.st, p.value_ref("game.score").unwrap()))
}

#[test]
fn factored_encoding_offers_kinds_only_when_both_are_legal() {
    let program = stacker(&[], &[]);
    let factored = Encoded::new(WgdlGame::new(program.clone()).with_seed(7), true);
    let flat = Encoded::new(WgdlGame::new(program.clone()).with_seed(7), false);
    assert_eq!(factored.kind_names(), ["land", "collect"]);
    let (mut kind_levels, mut games) = (0, 0);
    for seed in 0..40 {
        let (moves, score) = random_game(&factored, seed, |legal| {
            let kinds = legal.iter().filter(|m| matches!(m, EMove::Kind(..))).count();
            // Either a kind level (exactly land and collect) or plain moves, never a mixture.
            assert!(kinds == 0 || (kinds == 2 && legal.len() == 2), "{legal:?}");
            if kinds == 2 {
                kind_levels += 1;
            }
        });
        // The same moves replayed on the flat game (and the bare game) reach the same score.
        let mut st = flat.initial().unwrap();
        for &m in &moves {
            flat.apply(&mut st, EMove::Move(m)).unwrap();
        }
        assert_eq!(program.read(&st.st, program.value_ref("game.score").unwrap()), score);
        assert!(flat.goals_reached(&st) <= 1);
        games += 1;
    }
    assert!(kind_levels > 0 && games == 40, "random stacker games offered a collect at some point");
}

#[test]
fn stacker_styles_restrict_when_to_collect() {
    let (mut greedy_collects, mut lazy_collects) = (0, 0);
    for (style, seed) in [("greedy", 1), ("greedy", 2), ("lazy", 3), ("lazy", 4)] {
        let plain = Encoded::new(WgdlGame::new(stacker(&[], &[])).with_seed(seed), false);
        let styled = Encoded::new(WgdlGame::new(stacker(&[style], &[])).with_seed(seed), false);
        let (moves, _) = random_game(&styled, seed, |_| {});
        // Walk the styled game's moves on the unrestricted game and compare the legal sets.
        let mut st = plain.initial().unwrap();
        let mut sst = styled.initial().unwrap();
        let (mut all, mut allowed) = (Vec::new(), Vec::new());
        for &m in &moves {
            plain.legal(&st, &mut all).unwrap();
            styled.legal(&sst, &mut allowed).unwrap();
            let kind = |e: &EMove<wgdl::Action>| match e {
                EMove::Move(a) => plain.kind(*a),
                EMove::Kind(k, _) => *k as usize,
            };
            let lands = all.iter().filter(|e| kind(e) == 0).count();
            let collects = all.iter().filter(|e| kind(e) == 1).count();
            let allowed_collects = allowed.iter().filter(|e| kind(e) == 1).count();
            if style == "greedy" {
                // Land only when nothing can be collected.
                assert_eq!(allowed.len(), if collects > 0 { collects } else { lands });
                greedy_collects += allowed_collects;
            } else {
                // Collect only when nothing can land.
                assert_eq!(allowed.len(), if lands > 0 { lands } else { collects });
                lazy_collects += allowed_collects;
            }
            plain.apply(&mut st, EMove::Move(m)).unwrap();
            styled.apply(&mut sst, EMove::Move(m)).unwrap();
        }
    }
    assert!(greedy_collects > 0 && lazy_collects > 0);
}

/// The best score reachable from `st`, by trying every line (the tiny board only).
fn exhaustive(game: &Encoded<WgdlGame>, st: &<Encoded<WgdlGame> as Game>::State, nodes: &mut u64) -> f64 {
    *nodes += 1;
    let mut legal = Vec::new();
    game.legal(st, &mut legal).unwrap();
    if game.status(st, &legal) != Status::Running {
        let p = &game.game.program;
        return p.read(&st.st, p.value_ref("game.score").unwrap());
    }
    let mut best = f64::NEG_INFINITY;
    for m in legal {
        let mut next = st.clone();
        game.apply(&mut next, m).unwrap();
        best = best.max(exhaustive(game, &next, nodes));
    }
    best
}

const TINY: &str = r#"
[playtest]
name = "tiny"
game = "GAME"
replicates = 3
rollouts = 20000
uct = 200
conditions = ["tiny"]
[parameters]
"me.colours" = 2
"me.minGroup" = 2
"me.collections" = 2
[[variant]]
name = "tiny"
overlays = ["tiny", "monochrome"]
"#;

#[test]
fn cut_off_reaches_the_exhaustive_optimum_of_a_tiny_board_and_stops() {
    let out = temp_dir("cutoff");
    let s = setup(TINY, &out);
    let done = AtomicU64::new(0);
    let o = run_playtest(&s, false, &done).unwrap();
    let c = &s.conditions[0];
    let mut optima = Vec::new();
    for rep in &o.reps[0] {
        let playforge::playtest::setup::Play::Wgdl { game, .. } = &c.play else { panic!("a WGDL condition") };
        let mut game = game.clone();
        game.game.seed = rep.game_seed;
        let mut nodes = 0;
        let optimum = exhaustive(&game, &game.initial().unwrap(), &mut nodes);
        assert!(nodes > 1000, "the tiny board is not trivial: {nodes} nodes");
        assert_eq!(rep.best, optimum, "replicate {} (seed {})", rep.replicate, rep.game_seed);
        // Stopped as soon as every line was expanded: one rollout per node below the root.
        assert!(rep.exhausted, "replicate {}", rep.replicate);
        assert_eq!(rep.rollouts, nodes - 1, "one rollout per node of the game tree");
        optima.push(optimum);
        // The curve is complete: after the stop, the best carries on to the budget.
        assert_eq!(*rep.curve(20_000).last().unwrap(), optimum);
    }
    assert!(optima.iter().any(|&x| x != optima[0]), "the seeds give different boards: {optima:?}");
    // Without CUT_OFF the search spends its whole budget, far beyond the tree's size, and
    // finds the same optimum.
    let no_cut = TINY.replace("rollouts = 20000", "rollouts = 20000\ncut_off = false").replace("replicates = 3", "replicates = 1");
    let s = setup(&no_cut, &temp_dir("nocut"));
    let o = run_playtest(&s, false, &done).unwrap();
    assert_eq!(o.reps[0][0].rollouts, 20000);
    assert!(!o.reps[0][0].exhausted);
    assert!(o.reps[0][0].best <= optima[0]);
}

const SMALL: &str = r#"
[playtest]
name = "small"
game = "GAME"
replicates = 3
rollouts = 150
uct = 500
seed = 5

[[style]]
name = "unrestricted"
[[style]]
name = "lazy"
weights = { collect = 1.0 }

[[variant]]
name = "regular"
[[variant]]
name = "monochrome"
"#;

fn finals(o: &playforge::playtest::setup::Outcome) -> Vec<(String, u64, f64, Vec<(u64, f64)>)> {
    o.reps.iter().flatten().map(|r| (r.condition.clone(), r.replicate, r.best, r.improvements.clone())).collect()
}

#[test]
fn runs_agree_on_one_and_two_threads_and_after_resume_and_write_reports() {
    let a_dir = temp_dir("threads1");
    let b_dir = temp_dir("threads2");
    let pool = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
    let done = AtomicU64::new(0);
    let sa = setup(SMALL, &a_dir);
    let a = pool(1).install(|| run_playtest(&sa, false, &done)).unwrap();
    let sb = setup(SMALL, &b_dir);
    let b = pool(2).install(|| run_playtest(&sb, false, &done)).unwrap();
    assert_eq!(finals(&a), finals(&b));
    assert_eq!(a.reps.len(), 4);
    assert!(a.reps.iter().all(|r| r.len() == 3));
    // Resume: drop two replicate files and run again; the same numbers come back.
    let runs = b_dir.join("small/seed-5/runs");
    std::fs::remove_file(runs.join("lazy-regular/rep-02.json")).unwrap();
    std::fs::remove_file(runs.join("unrestricted-monochrome/rep-03.json")).unwrap();
    let before = std::fs::read(runs.join("lazy-monochrome/rep-01.json")).unwrap();
    let c = pool(2).install(|| run_playtest(&sb, true, &done)).unwrap();
    assert_eq!(finals(&a), finals(&c));
    assert_eq!(std::fs::read(runs.join("lazy-monochrome/rep-01.json")).unwrap(), before, "kept replicates are not rerun");
    // A different seed is a different config: nothing is reused.
    let other = setup(&SMALL.replace("seed = 5", "seed = 6"), &b_dir);
    let d = run_playtest(&other, true, &done).unwrap();
    assert_ne!(finals(&a), finals(&d));
    // Reports.
    let (rows, md) = write_reports(&sa, &a).unwrap();
    assert_eq!(rows.len(), 4);
    let dir = a_dir.join("small/seed-5");
    for f in
        ["summary.md", "finals.csv", "mann_whitney.csv", "playtest.png", "curves/lazy-regular.csv", "best/unrestricted-monochrome.moves"]
    {
        assert!(dir.join(f).exists(), "{f}");
    }
    let curve = std::fs::read_to_string(dir.join("curves/lazy-regular.csv")).unwrap();
    assert_eq!(curve.lines().count(), 151, "a header and one row per rollout");
    assert!(curve.starts_with("rollout,rep01,rep02,rep03"));
    assert_eq!(std::fs::read_to_string(dir.join("mann_whitney.csv")).unwrap().lines().count(), 1 + 6, "4 conditions: 6 pairs");
    assert!(md.contains("Mann-Whitney") && md.contains("lazy/monochrome"), "{md}");
    // The best trace replays to its score with the overlays the file names.
    let moves = std::fs::read_to_string(dir.join("best/lazy-monochrome.moves")).unwrap();
    let best = a.reps[3].iter().map(|r| r.best).fold(f64::NEG_INFINITY, f64::max);
    let seed: u64 = moves.lines().next().unwrap().rsplit("chance seed ").next().unwrap().trim_end_matches(')').parse().unwrap();
    assert!(moves.contains("--overlay lazy --overlay monochrome"), "{moves}");
    let p = stacker(&["lazy", "monochrome"], &[]);
    let mut st = p.initial_state_seeded(seed).unwrap();
    let mut legal = Vec::new();
    for line in moves.lines().filter(|l| !l.starts_with("//")) {
        p.legal_actions(&st, &mut legal).unwrap();
        let m = *legal.iter().find(|&&m| p.action_name(&st, m) == line).unwrap_or_else(|| panic!("{line} is not legal"));
        p.apply(&mut st, m).unwrap();
    }
    assert_eq!(p.read(&st, p.value_ref("game.score").unwrap()), best);
}

#[test]
fn bad_configs_name_the_key_and_line() {
    let base = "[playtest]\nname = \"x\"\ngame = \"GAME\"\nrollouts = 10\nuct = 100\n";
    let cases: &[(&str, &str, &str)] = &[
        ("encoding = \"deep\"\n", "pt.toml:6:", "\"factored\""),
        ("game_seed = \"x\"\n", "pt.toml:6:", "per_replicate"),
        ("replicates = 0\n", "pt.toml:6:14", "from 1 to"),
        ("conditions = [\"nope\"]\n", "pt.toml:6:", "expected one of"),
        ("[[style]]\nname = \"lazy\"\noverlays = [\"lazzy\"]\n", "pt.toml:8:", "style lazy"),
        ("[[style]]\nname = \"w\"\nweights = { jump = 1.0 }\n", "pt.toml:8:", "land, collect"),
        ("[[style]]\nname = \"f\"\nformula = \"wins +\"\n", "pt.toml:8:", "formula"),
        ("[[style]]\nname = \"f\"\nformula_file = \"/nonexistent/best_formula.txt\"\n", "pt.toml:8:", "cannot read"),
        ("[[variant]]\nname = \"v\"\nparameters = { \"me.colours\" = 99 }\n", "", "me.colours"),
        ("[[search]]\nname = \"a\"\nuct = -1\n", "pt.toml:8:", "≥ 0"),
        ("[[variant]]\nname = \"a\"\n[[variant]]\nname = \"a\"\n", "pt.toml:9:", "distinct"),
    ];
    for (extra, at, what) in cases {
        let e = setup_err(&format!("{base}{extra}"));
        assert!(e.contains(at) && e.contains(what), "for {extra:?}: {e}");
    }
    let e = setup_err(&base.replace("uct = 100\n", ""));
    assert!(e.contains("uct"), "{e}");
}

#[test]
fn shipped_playtest_configs_load() {
    for f in ["configs/playtest_stacker.toml", "configs/playtest_uct.toml", "configs/playtest_match3.toml"] {
        let path = root().join(f);
        let (cfg, text) = PlaytestConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
        // Cargo runs tests in the package root, where the configs' relative game paths hold.
        let s = Setup::new(cfg, &text, &path, Path::new("/nonexistent")).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(!s.conditions.is_empty());
    }
}

#[test]
fn a_style_can_search_with_a_persona_formula_from_a_file() {
    let dir = temp_dir("formula");
    let file = dir.join("best_formula.txt");
    std::fs::write(&file, "# a persona's formula\nwins / visits + 150 * sqrt(ln(parent) / visits)\n# goal: 1000\n").unwrap();
    let text = format!(
        "[playtest]\nname = \"f\"\ngame = \"GAME\"\nreplicates = 2\nrollouts = 100\nuct = 100\n[[style]]\nname = \"persona\"\nformula_file = \"{}\"\n",
        file.display()
    );
    let s = setup(&text, &dir);
    assert!(s.conditions[0].describe.contains("formula wins / visits + 150"), "{}", s.conditions[0].describe);
    let done = AtomicU64::new(0);
    let o = run_playtest(&s, false, &done).unwrap();
    assert!(o.reps[0].iter().all(|r| r.best > 0.0 && r.rollouts == 100));
}

/// The replicates sent through the serialized worker path (as a Ray worker gets them) write the
/// same files as the local run, byte for byte (tests/exec.rs does balance and personas).
#[test]
fn replicates_through_serialized_jobs_write_the_same_files() {
    let run = |exec: playforge::exec::Executor, tag: &str| {
        let dir = temp_dir(tag);
        let mut s = setup(SMALL, &dir);
        s.exec = exec;
        let done = AtomicU64::new(0);
        let o = run_playtest(&s, false, &done).unwrap();
        assert_eq!(done.load(std::sync::atomic::Ordering::Relaxed), s.total_rollouts());
        write_reports(&s, &o).unwrap();
        s.out_dir.clone()
    };
    let local = crate::util::outputs(&run(playforge::exec::Executor::Local, "wire-local"));
    let wire = crate::util::outputs(&run(playforge::exec::Executor::RoundTrip, "wire-wire"));
    assert!(local.contains_key(Path::new("summary.md")) && local.keys().any(|k| k.starts_with("runs")), "{:?}", local.keys());
    assert_eq!(local.keys().collect::<Vec<_>>(), wire.keys().collect::<Vec<_>>());
    for (name, bytes) in &local {
        assert!(bytes == &wire[name], "{} differs between the local and the serialized executor", name.display());
    }
}

#[test]
fn a_changed_hex_map_is_another_game_on_resume() {
    // The map lives in its own file: the key (what replicate files belong to) and the game's
    // hash (what a worker is checked against) read the map as compiled, as every driver's do.
    let dir = temp_dir("hexmap");
    let game = "hexmap \"m.hexmap\"\nclass c\nattribute c v long 0\nobject o is c\ninitial o\naction c step\n\
                condition step this.v < 3\nconsequence inc direct this.v = this.v + 1\nhasConsequence step inc\ngoal 1 o.v >= 3\n";
    std::fs::write(dir.join("g.wgdl"), game).unwrap();
    std::fs::write(dir.join("m.hexmap"), "radius 1\n  . .\n . # .\n  . .\n").unwrap();
    let text = format!(
        "[playtest]\nname = \"hm\"\ngame = \"{}\"\nscore = \"o.v\"\nreplicates = 1\nrollouts = 10\nuct = 10\nseed = 1\n",
        dir.join("g.wgdl").display()
    );
    let path = Path::new("pt.toml");
    let make = || Setup::new(PlaytestConfig::parse(path, &text).unwrap(), &text, path, &dir).unwrap_or_else(|e| panic!("{e}"));
    let a = make();
    let done = AtomicU64::new(0);
    run_playtest(&a, false, &done).unwrap();
    let rep = dir.join("hm/seed-1/runs/base/rep-01.json");
    let key_in = |p: &Path| serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(p).unwrap()).unwrap()["key"].clone();
    assert_eq!(key_in(&rep), a.key.as_str());
    let same = make();
    assert_eq!((same.key.as_str(), same.game_hash), (a.key.as_str(), a.game_hash), "the same files are the same game");
    std::fs::write(dir.join("m.hexmap"), "radius 1\n  . .\n . . .\n  # .\n").unwrap();
    let b = make();
    assert_ne!(b.key, a.key, "a changed map is another game");
    assert_ne!(b.game_hash, a.game_hash);
    run_playtest(&b, true, &done).unwrap();
    assert_eq!(key_in(&rep), b.key.as_str(), "the replicate of the old map is played again, not reused");
}
