//! Encounter generation on the hex arena with small budgets: bad configs are errors naming the key
//! and line; the DNA codec keeps ranges, constraints and a fixed team; the same seed gives the
//! same numbers on 1 and 2 threads and after a resume; every output is written and the best
//! encounter loads back; verify, landscape and the optimizer comparison run; Ctrl-C saves.

use playforge::balance::config::BalanceConfig;
use playforge::balance::dna::Codec;
use playforge::balance::run::{Row, RunOptions, load_encounter, run};
use std::path::{Path, PathBuf};

/// A small balance config on the hex arena: Rule/Rule only, 4 neighbours, few evaluations.
fn config(out: &Path, extra: &str) -> String {
    format!(
        r#"{extra}
[balance]
name = "t"
game = "games/hex_arena.wgdl"
seed = 3
optimizer = "es"
max_evaluations = 400
target = 0.99
replays = 1
out = "{}"

[[team]]
name = "red"
params = ["red*"]

[[team]]
name = "blue"
params = ["blue*"]

[evaluation]
pairs = [["Rule", "Rule"]]
games = 2
confirm_games = 3

[[ai]]
name = "Rule"
kind = "policy"
policy = "rule"

[es]
lambda = 4
"#,
        out.display()
    )
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("playforge-balance-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn parse(text: &str) -> Result<BalanceConfig, String> {
    BalanceConfig::parse(Path::new("b.toml"), text).map_err(|e| format!("{e:#}"))
}

fn run_text(text: &str, opts: &RunOptions) -> (Vec<Row>, Option<playforge::balance::run::Best>) {
    let cfg = parse(text).unwrap();
    let o = run(&cfg, Path::new("b.toml"), text, opts, &|_, _, _, _| {}).unwrap();
    (o.history, o.best)
}

fn strip_time(h: &[Row]) -> Vec<Row> {
    h.iter().map(|r| Row { elapsed_s: 0.0, ..r.clone() }).collect()
}

#[test]
fn bad_configs_name_the_key_and_line() {
    let out = tmp("bad");
    let good = config(&out, "");
    assert!(parse(&good).is_ok());
    // (config text, what the message must name, the line that holds the offending key)
    // `needle#2`: its second occurrence.
    let line = |text: &str, needle: &str| {
        let (needle, nth) = needle.split_once('#').map_or((needle, 1), |(n, k)| (n, k.parse().unwrap()));
        let at = text.lines().enumerate().filter(|(_, l)| l.contains(needle)).nth(nth - 1).unwrap().0;
        format!("b.toml:{}:", at + 1)
    };
    let mut cases: Vec<(String, &str, String)> = Vec::new();
    let mut add = |text: String, what: &'static str, needle: &str| {
        let place = line(&text, needle);
        cases.push((text, what, place));
    };
    add(good.replace("lambda = 4", "lambda = 4\nlambada = 2"), "lambada", "lambada");
    add(good.replace("games = 2\n", "games = 0\n"), "games = 0", "games = 0");
    add(config(&out, "[ranges]\n\"red1.maxHp\" = [80, 20]\n"), "reversed", "red1.maxHp");
    add(good.replace("params = [\"red*\"]", "params = [\"green*\"]"), "green*", "green*");
    add(config(&out, "[parameters]\n\"red9.maxHp\" = 5\n"), "red9.maxHp", "red9.maxHp");
    add(good.replace("optimizer = \"es\"", "optimizer = \"ga\""), "optimizer", "optimizer");
    add(good.replace("[[\"Rule\", \"Rule\"]]", "[[\"Rule\", \"Nobody\"]]"), "Nobody", "Nobody");
    add(good.replace("max_evaluations = 400", "max_evaluations = 0"), "max_evaluations", "max_evaluations");
    add(config(&out, "[ranges]\n\"red1.maxHp\" = [2.2, 2.8]\n"), "no whole number", "red1.maxHp");
    add(good.replace("target = 0.99", "target = 1.0"), "target", "target");
    add(good.replace("lambda = 4", "lambda = 4\n[cma]\nsigma_min = 0.5"), "sigma_min", "sigma_min");
    add(good.replace("name = \"blue\"", "name = \"red\""), "both teams", "name = \"red\"#2");
    add(good.replace("params = [\"blue*\"]", "params = [\"blue1*\"]"), "same shape", "blue1*");
    add(good.replace("confirm_games = 3", "confirm_games = 3\nconfirm = \"sometimes\""), "confirm = \"sometimes\"", "sometimes");
    add(good.replace("confirm_games = 3", "confirm_games = 3\nconfirm_alpha = 0.7"), "confirm_alpha", "confirm_alpha");
    // A key after a value spread over several lines is still found.
    add(
        good.replace("pairs = [[\"Rule\", \"Rule\"]]\ngames = 2", "pairs = [\n  [\"Rule\", \"Rule\"],\n]\ngames = 0"),
        "games = 0",
        "games = 0",
    );
    for (text, what, place) in cases {
        // Some errors come from parsing, some from the codec (which reads the game).
        let err = match parse(&text) {
            Err(e) => e,
            Ok(cfg) => match Codec::new(&cfg, Path::new("b.toml"), &text) {
                Err(e) => format!("{e:#}"),
                Ok(_) => panic!("accepted a bad config ({what})"),
            },
        };
        assert!(err.contains(what) && err.contains(&place), "{what} at {place}: {err}");
        assert!(err.contains("expected"), "{what}: says what was expected: {err}");
    }
}

#[test]
fn codec_keeps_ranges_constraints_and_a_fixed_team() {
    let out = tmp("codec");
    let text = config(&out, "").replace("params = [\"red*\"]", "params = [\"red*\"]\nfixed = true");
    let cfg = parse(&text).unwrap();
    let codec = Codec::new(&cfg, Path::new("b.toml"), &text).unwrap();
    assert_eq!(codec.genes.len(), 96, "HexMage's DNA: 2 teams × 2 mages × (2 + 2 × 11)");
    assert_eq!(codec.evolving.len(), 48, "only blue evolves");
    assert_eq!(codec.teams[0].len(), codec.teams[1].len());
    let file = codec.team_values(&codec.template);
    for s in 0..20u64 {
        let (x, program) = codec.random(&mut playforge::rng::stream(9, 0, s, 0)).unwrap();
        let dna = codec.full(&x);
        let vals = codec.team_values(&dna);
        assert_eq!(vals[0], file[0], "the fixed team keeps the file's values");
        for (name, v) in &vals[1] {
            let p = program.params.iter().find(|p| &p.name == name).unwrap();
            assert!(*v >= p.min && *v <= p.max && v.fract() == 0.0, "{name} = {v}");
            assert_eq!(p.value, *v, "the program carries the decoded value");
        }
        // The game's constraint: an ability costs at most its mage's max AP.
        let get = |n: &str| vals[1].iter().find(|(k, _)| k == n).unwrap().1;
        assert!(get("blue1a.cost") <= get("blue1.maxAp") && get("blue2b.cost") <= get("blue2.maxAp"));
    }
    // A config constraint is enforced too.
    let text2 = config(&out, "constraints = [\"blue1.maxHp >= 2 * blue2.maxHp\"]\n");
    let cfg2 = parse(&text2).unwrap();
    let codec2 = Codec::new(&cfg2, Path::new("b.toml"), &text2).unwrap();
    for s in 0..10u64 {
        let (x, _) = codec2.random(&mut playforge::rng::stream(9, 1, s, 0)).unwrap();
        let v = codec2.team_values(&codec2.full(&x));
        let get = |n: &str| v[1].iter().find(|(k, _)| k == n).unwrap().1;
        assert!(get("blue1.maxHp") >= 2.0 * get("blue2.maxHp"));
    }
}

#[test]
fn same_numbers_on_one_and_two_threads() {
    let out1 = tmp("threads1");
    let out2 = tmp("threads2");
    let go = |out: &Path, threads: usize| {
        let text = config(out, "");
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| run_text(&text, &RunOptions { max_iterations: Some(4), ..RunOptions::default() }))
    };
    let (h1, b1) = go(&out1, 1);
    let (h2, b2) = go(&out2, 2);
    assert_eq!(h1.len(), 4);
    assert_eq!(strip_time(&h1), strip_time(&h2));
    assert_eq!(b1, b2);
    assert!(b1.is_some());
}

#[test]
fn resume_continues_with_identical_results_and_outputs_are_written() {
    for optimizer in ["es", "sa", "cma"] {
        let a = tmp(&format!("straight-{optimizer}"));
        let b = tmp(&format!("resumed-{optimizer}"));
        let ta = config(&a, "").replace("optimizer = \"es\"", &format!("optimizer = \"{optimizer}\""));
        let tb = config(&b, "").replace("optimizer = \"es\"", &format!("optimizer = \"{optimizer}\""));
        let (straight, best_a) = run_text(&ta, &RunOptions { max_iterations: Some(5), ..RunOptions::default() });
        run_text(&tb, &RunOptions { max_iterations: Some(2), ..RunOptions::default() });
        let (resumed, best_b) = run_text(&tb, &RunOptions { resume: true, max_iterations: Some(3), ..RunOptions::default() });
        assert_eq!(strip_time(&straight), strip_time(&resumed), "{optimizer}");
        assert_eq!(best_a, best_b, "{optimizer}");
        // A resume with another config is refused.
        let other = tb.replace("seed = 3", "seed = 4");
        let cfg = parse(&other).unwrap();
        let dir_other = playforge::balance::run::out_dir(&cfg);
        std::fs::create_dir_all(&dir_other).unwrap();
        std::fs::copy(b.join(format!("t/{optimizer}-seed-3/checkpoint.json")), dir_other.join("checkpoint.json")).unwrap();
        let err = run(&cfg, Path::new("b.toml"), &other, &RunOptions { resume: true, ..RunOptions::default() }, &|_, _, _, _| {})
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("another configuration"), "{err}");
    }
    let dir = std::env::temp_dir().join(format!("playforge-balance-resumed-es-{}", std::process::id())).join("t/es-seed-3");
    for f in ["config.toml", "history.csv", "best_encounter.toml", "best_dna.txt", "convergence.png", "checkpoint.json"] {
        assert!(dir.join(f).exists(), "{f}");
    }
    assert!(std::fs::read_dir(dir.join("replays")).unwrap().count() >= 1);
    let history = std::fs::read_to_string(dir.join("history.csv")).unwrap();
    assert!(history.starts_with("iteration,f,balance,length,difference,wins,mean_turns,best_so_far,games,penalized\n"));
    assert!(dir.join("timing.csv").exists(), "the wall clock goes to timing.csv");
    assert_eq!(history.lines().count(), 1 + 5);
}

#[test]
fn best_encounter_loads_back_as_an_override_and_verifies() {
    let out = tmp("verify");
    let text = config(&out, "");
    let cfg = parse(&text).unwrap();
    let o =
        run(&cfg, Path::new("b.toml"), &text, &RunOptions { max_iterations: Some(2), ..RunOptions::default() }, &|_, _, _, _| {}).unwrap();
    let best = o.best.unwrap();
    let file = o.dir.join("best_encounter.toml");
    let enc = load_encounter(&file).unwrap();
    assert_eq!(enc.game, PathBuf::from("games/hex_arena.wgdl").canonicalize().unwrap(), "named absolutely");
    let want = o.codec.overrides(&best.dna);
    let mut got = enc.overrides.clone();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    let mut want_sorted = want.clone();
    want_sorted.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(got, want_sorted, "every parameter round-trips");
    let r = playforge::balance::verify::verify(&file, None, 10, 1, &playforge::exec::Executor::Local, &|_, _| {}).unwrap();
    assert_eq!(r.pairs.len(), 1);
    let p = &r.pairs[0];
    assert_eq!(p.wins[0] + p.wins[1] + p.draws, 10);
    assert!(r.markdown.contains("Rule-vs-Rule"));
    assert_eq!(r.band, Some((14, 27)));
    // A broken encounter file is an error, not a panic.
    std::fs::write(out.join("bad.toml"), "game = \"games/hex_arena.wgdl\"\n[team.red]\n\"red1.maxHp\" = \"lots\"\n").unwrap();
    let err = load_encounter(&out.join("bad.toml")).err().unwrap().to_string();
    assert!(err.contains("expected a number"), "{err}");
}

#[test]
fn landscape_counts_every_neighbour() {
    let out = tmp("landscape");
    let text = config(&out, "");
    let cfg = parse(&text).unwrap();
    let l = playforge::balance::landscape::landscape(&cfg, Path::new("b.toml"), &text, 4, 3, &playforge::exec::Executor::Local, &|_, _| {})
        .unwrap();
    assert_eq!(l.better + l.worse + l.equal, 12);
    assert!(l.markdown.contains("worse : better"));
    assert!(out.join("t/landscape/landscape.csv").exists());
}

#[test]
fn shipped_balance_configs_parse() {
    for f in ["configs/hexmage_balance.toml", "configs/landscape_hexmage.toml"] {
        let text = std::fs::read_to_string(f).unwrap();
        // Its game path is relative to the config file.
        let (cfg, _) = BalanceConfig::load(Path::new(f)).unwrap();
        assert_eq!(cfg.balance.game, Path::new("configs/../games/hex_arena.wgdl"));
        Codec::new(&cfg, Path::new(f), &text).unwrap();
    }
    let text = std::fs::read_to_string("configs/compare_optimizers.toml").unwrap();
    assert!(playforge::balance::compare::is_compare(&text));
}

#[test]
fn optimizer_comparison_runs_every_arm_and_resumes() {
    let out = tmp("compare");
    let base = out.join("base.toml");
    std::fs::write(&base, config(&out, "")).unwrap();
    let cmp = out.join("cmp.toml");
    let text = format!(
        "[compare]\nname = \"c\"\nbase = \"{}\"\nseeds = 2\noptimizers = [\"es\", \"cma\"]\nout = \"{}\"\n\
         [[arm]]\nname = \"sa-classic\"\noptimizer = \"sa\"\noverrides = {{ sa = {{ neighbours = 1 }} }}\n\
         [overrides.balance]\nmax_evaluations = 30\n",
        base.display(),
        out.display()
    );
    std::fs::write(&cmp, &text).unwrap();
    let c = playforge::balance::compare::compare(&cmp, None, &playforge::exec::Executor::Local, &|_, _, _| {}).unwrap();
    for arm in ["| es |", "| cma |", "| sa-classic |"] {
        assert!(c.markdown.contains(arm), "{arm}: {}", c.markdown);
    }
    for f in ["summary.md", "runs.csv", "chart.png"] {
        assert!(out.join("c").join(f).exists(), "{f}");
    }
    let runs = std::fs::read_to_string(out.join("c/runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 1 + 3 * 2);
    // Every run spent (about) the same budget: 30 evaluations × 2 games, plus a last confirmation.
    for line in runs.lines().skip(1) {
        let games: u64 = line.rsplit(',').next().unwrap().parse().unwrap();
        assert!((60..60 + 4 * 3 + 40).contains(&games), "{line}");
    }
    // Run again: every run resumes from its finished checkpoint, same table.
    let again = playforge::balance::compare::compare(&cmp, None, &playforge::exec::Executor::Local, &|_, _, _| {}).unwrap();
    assert_eq!(c.markdown, again.markdown);
    // A changed config: the stale checkpoints are replaced by fresh runs, not an error.
    std::fs::write(&cmp, text.replace("max_evaluations = 30", "max_evaluations = 40")).unwrap();
    let changed = playforge::balance::compare::compare(&cmp, None, &playforge::exec::Executor::Local, &|_, _, _| {}).unwrap();
    assert!(changed.markdown.contains("(80 games)"), "{}", changed.markdown);
    // A bad arm is named.
    std::fs::write(&cmp, text.replace("optimizer = \"sa\"", "optimizer = \"hill\"")).unwrap();
    let err = playforge::balance::compare::compare(&cmp, None, &playforge::exec::Executor::Local, &|_, _, _| {}).err().unwrap().to_string();
    assert!(err.contains("hill") && err.contains("expected"), "{err}");
}

#[test]
fn ctrl_c_saves_and_resume_finishes() {
    let out = tmp("ctrlc");
    let cfg = out.join("b.toml");
    std::fs::write(&cfg, config(&out, "").replace("max_evaluations = 400", "max_evaluations = 200000")).unwrap();
    let bin = env!("CARGO_BIN_EXE_playforge");
    let child = std::process::Command::new(bin)
        .args(["balance", cfg.to_str().unwrap(), "--quiet"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let ck = out.join("t/es-seed-3/checkpoint.json");
    let t0 = std::time::Instant::now();
    while !ck.exists() && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(ck.exists(), "the run writes a checkpoint after its first iteration");
    let status = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let o = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    // Saved, but unfinished: the exit status says so (130 = 128 + SIGINT), not success.
    assert_eq!(o.status.code(), Some(130), "{stdout} {}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("--resume"), "{stdout}");
    assert!(out.join("t/es-seed-3/history.csv").exists() && out.join("t/es-seed-3/best_encounter.toml").exists());
    let rows = std::fs::read_to_string(out.join("t/es-seed-3/history.csv")).unwrap().lines().count() - 1;
    // Resume for two more iterations: the history grows from where it stopped.
    let o = std::process::Command::new(bin)
        .args(["balance", cfg.to_str().unwrap(), "--quiet", "--resume", "--iterations", "2"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows2 = std::fs::read_to_string(out.join("t/es-seed-3/history.csv")).unwrap().lines().count() - 1;
    assert_eq!(rows2, rows + 2);
}

/// A candidate is its parameter values written into the one compiled program
/// (`Program::with_parameters`), not the text compiled again: on random encounters of the
/// arena, that program and the one compiled with the values as overrides start alike, judge
/// the constraints alike and play the same random games move for move.
#[test]
fn parameters_written_into_the_program_give_the_compiled_game() {
    use playforge::game::{Game, WgdlGame};
    use playforge::wgdl::{self, CompileOptions, Status};
    use rand::{RngExt, SeedableRng};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/hex_arena.wgdl");
    let base = wgdl::load(&path).unwrap().program;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
    let mut violated = 0;
    for k in 0..40u64 {
        let values: Vec<f64> = base
            .params
            .iter()
            .map(|p| if p.integer { rng.random_range(p.min as i64..=p.max as i64) as f64 } else { rng.random_range(p.min..=p.max) })
            .collect();
        let overrides = base.params.iter().map(|p| p.name.clone()).zip(values.iter().copied()).collect();
        let compiled = wgdl::load_with(&path, &CompileOptions { overrides, ..CompileOptions::default() }).unwrap().program;
        let written = std::sync::Arc::new(base.with_parameters(&values).unwrap());
        let (a, b) = (compiled.initial_state().unwrap(), written.initial_state().unwrap());
        assert_eq!(a, b, "encounter {k}: start states differ");
        let (ca, cb) = (compiled.violated_constraints(&a).unwrap(), written.violated_constraints(&b).unwrap());
        assert_eq!(ca, cb, "encounter {k}: constraints judged differently");
        violated += usize::from(!ca.is_empty());
        let (ga, gb) = (WgdlGame::new(compiled.clone()), WgdlGame::new(written.clone()));
        let (mut sa, mut sb) = (a, b);
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        for _ in 0..150 {
            ga.legal(&sa, &mut la).unwrap();
            gb.legal(&sb, &mut lb).unwrap();
            assert_eq!(la, lb, "encounter {k}");
            if ga.status(&sa, &la) != Status::Running {
                break;
            }
            let m = la[rng.random_range(0..la.len())];
            ga.apply(&mut sa, m).unwrap();
            gb.apply(&mut sb, m).unwrap();
            assert_eq!(sa, sb, "encounter {k}");
        }
    }
    assert!(violated > 0 && violated < 40, "the encounters should include valid and invalid ones ({violated} invalid)");
    // Out of range: an error, as an override would be.
    let mut bad: Vec<f64> = base.params.iter().map(|p| p.default).collect();
    bad[0] = base.params[0].max + 1.0;
    assert!(base.with_parameters(&bad).unwrap_err().contains("outside"));
}

/// A config's `name` becomes a folder under the output folder, so it can never lead outside
/// it: `../../x` (and a name with a separator, or none) is refused as the config is read, with
/// the config's line and what was expected — for balance, tournament, experiment and play
/// configs alike.
#[test]
fn a_name_cannot_write_outside_the_outputs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tmp("names");
    let bad = |file: &str, first: &str| {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let p = dir.join(Path::new(file).file_name().unwrap());
        std::fs::write(&p, text.replacen(first, "name = \"../../x\"", 1)).unwrap();
        (p, text.replacen(first, "name = \"../../x\"", 1))
    };
    let check = |what: &str, err: String| {
        // The line of `name` in each config (6 or 7), and what a name must be.
        assert!(err.contains("folder name") && (err.contains(".toml:6:8: name") || err.contains(".toml:7:8: name")), "{what}: {err}");
    };
    let (p, text) = bad("configs/hexmage_balance.toml", "name = \"hexmage_balance\"");
    check("balance", playforge::balance::config::BalanceConfig::parse(&p, &text).err().unwrap().to_string());
    let (p, _) = bad("configs/hex_tournament.toml", "name = \"hex_tournament\"");
    check("tournament", playforge::experiment::tournament::TournamentConfig::load(&p).err().unwrap().to_string());
    let (p, _) = bad("configs/experiments/e4_ucb.toml", "name = \"e4_ucb\"");
    check("experiment", playforge::experiment::repeat::load(&p).err().unwrap());
    assert!(playforge::balance::config::FolderName::new("a/b").is_err());
    assert!(playforge::balance::config::FolderName::new("").is_err());
    assert!(playforge::balance::config::FolderName::new(".hidden").is_err());
    assert!(playforge::balance::config::FolderName::new("e4_ucb-2").is_ok());
}

/// Outputs that never mix: a fresh run removes an older run's files before it writes (a run
/// killed early used to leave the older best_encounter.toml, charts and replays beside its new
/// history); a folder another live run holds is refused; `--resume` without a checkpoint says
/// so instead of starting afresh.
#[test]
fn a_fresh_run_starts_clean_a_held_folder_is_refused_and_resume_needs_a_checkpoint() {
    let a = tmp("clean");
    let text = config(&a, "");
    let cfg = parse(&text).unwrap();
    let dir = playforge::balance::run::out_dir(&cfg);
    run_text(&text, &RunOptions { max_iterations: Some(2), ..RunOptions::default() });
    assert!(dir.join("best_encounter.toml").exists());
    std::fs::write(dir.join("old_chart.png"), "from an older run").unwrap();
    std::fs::create_dir_all(dir.join("replays/old")).unwrap();
    // A fresh run stopped after one iteration: nothing of the older run is left.
    run_text(&text, &RunOptions { max_iterations: Some(1), ..RunOptions::default() });
    assert!(!dir.join("old_chart.png").exists() && !dir.join("replays/old").exists());
    let history = std::fs::read_to_string(dir.join("history.csv")).unwrap();
    assert_eq!(history.lines().count(), 2, "one iteration after the header:\n{history}");
    // Another live process (pid 1) holds the folder.
    std::fs::write(dir.join(".lock"), "1\n").unwrap();
    let err = run(&cfg, Path::new("b.toml"), &text, &RunOptions::default(), &|_, _, _, _| {}).err().unwrap().to_string();
    assert!(err.contains("in use by another playforge run (process 1)"), "{err}");
    std::fs::remove_file(dir.join(".lock")).unwrap();
    std::fs::remove_file(dir.join("checkpoint.json")).unwrap();
    let err = run(&cfg, Path::new("b.toml"), &text, &RunOptions { resume: true, ..RunOptions::default() }, &|_, _, _, _| {})
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("--resume: no checkpoint in"), "{err}");
}

/// Ask/tell with the built-in evaluation told back is the command line's run, file for file;
/// an evaluation of the user's drives the same loop (here: F = 1 − the first gene, so the
/// optimizer heads for small first genes).
#[test]
fn ask_tell_with_the_built_in_evaluation_is_the_cli_run() {
    use playforge::balance::asktell::AskTell;
    use playforge::balance::fitness::Eval;
    let go = |tell_own: bool, tag: &str| {
        let out = tmp("asktell");
        let text = config(&out, "");
        let cfg = parse(&text).unwrap();
        let mut at = AskTell::start(cfg, Path::new("b.toml"), &text, false, playforge::exec::Executor::Local).unwrap();
        let mut asked = 0;
        while let Some(req) = at.ask().unwrap() {
            asked += 1;
            let evals = if tell_own {
                req.candidates.iter().map(|c| Eval { f: 1.0 - c.dna[0], ..Eval::default() }).collect()
            } else {
                at.evaluate(&req).unwrap()
            };
            at.tell(evals).unwrap();
        }
        assert!(asked > 3);
        let dir = at.outcome().unwrap().dir.clone();
        let kept = tmp(tag);
        std::fs::rename(&dir, kept.join("run")).unwrap();
        kept.join("run")
    };
    let cli = {
        let out = tmp("asktell");
        let text = config(&out, "");
        let cfg = parse(&text).unwrap();
        let o = run(&cfg, Path::new("b.toml"), &text, &RunOptions::default(), &|_, _, _, _| {}).unwrap();
        let kept = tmp("asktell-cli");
        std::fs::rename(&o.dir, kept.join("run")).unwrap();
        kept.join("run")
    };
    let (a, b) = (crate::util::outputs(&cli), crate::util::outputs(&go(false, "asktell-built-in")));
    assert!(a.contains_key(Path::new("history.csv")));
    assert_eq!(a, b, "ask/tell with the built-in evaluation differs from the run");
    let own = crate::util::outputs(&go(true, "asktell-own"));
    assert_ne!(own[Path::new("history.csv")], a[Path::new("history.csv")]);
}

/// The loop plays a confirmation together with the next iteration's first batch (one round trip
/// to the executor instead of two) and drops that iteration when the confirmation ends the run.
/// An evaluation hook (ask/tell) plays them one after the other; both must give the same
/// history, best and checkpointed optimizer, whether the run ends by the target or by the budget.
#[test]
fn confirmations_riding_along_give_the_numbers_of_one_batch_at_a_time() {
    use playforge::balance::fitness::Evaluator;
    use playforge::balance::jobs::BalanceContext;
    use playforge::balance::optim::Games;
    use playforge::exec::Executor;
    use std::sync::Arc;
    let mut ends = Vec::new();
    for (k, (optimizer, target)) in [("cma", "0.99"), ("es", "0.5"), ("es", "0.7"), ("es", "0.8")].into_iter().enumerate() {
        let go = |tag: &str, sequential: bool| {
            let out = tmp(&format!("ride-{k}-{tag}"));
            let text = config(&out, "")
                .replace("optimizer = \"es\"", &format!("optimizer = \"{optimizer}\""))
                .replace("target = 0.99", &format!("target = {target}"));
            let cfg = parse(&text).unwrap();
            let hook: Option<Arc<playforge::balance::optim::EvalHook>> = sequential.then(|| {
                let codec = Codec::new(&cfg, Path::new("b.toml"), &text).unwrap();
                let ev = Evaluator::new(&cfg, codec.probe()).unwrap();
                let jobs = BalanceContext::new(&cfg, Path::new("b.toml"), &text, &codec).unwrap();
                let seed = cfg.balance.seed;
                Arc::new(move |req: &playforge::balance::optim::EvalRequest| {
                    Games { codec: &codec, ev: &ev, exec: &Executor::Local, jobs: &jobs, seed }.evaluate_request(req)
                }) as Arc<playforge::balance::optim::EvalHook>
            });
            let o = run(
                &cfg,
                Path::new("b.toml"),
                &text,
                &RunOptions { max_iterations: Some(12), hook, ..RunOptions::default() },
                &|_, _, _, _| {},
            )
            .unwrap();
            let ck: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(o.dir.join("checkpoint.json")).unwrap()).unwrap();
            (strip_time(&o.history), o.best, o.games_played, o.reached, ck["optimizer"].clone())
        };
        let (riding, sequential) = (go("riding", false), go("sequential", true));
        assert!(!riding.0.is_empty(), "{optimizer} {target}: no iteration");
        assert_eq!(riding.0, sequential.0, "{optimizer} {target}: history");
        assert_eq!(riding.1, sequential.1, "{optimizer} {target}: best");
        assert_eq!((riding.2, riding.3), (sequential.2, sequential.3), "{optimizer} {target}: games, reached");
        assert_eq!(riding.4, sequential.4, "{optimizer} {target}: the checkpointed optimizer");
        eprintln!("{optimizer} target {target}: {} iterations, reached {}", riding.0.len(), riding.3);
        ends.push((riding.0.len(), riding.3));
    }
    // Both ends were seen: by the target (a confirmation with a dropped next iteration, at the
    // first iteration and at a later one) and by the budget.
    assert_eq!(ends, [(12, false), (1, true), (7, true), (12, false)]);
}

/// `confirm = "sequential"`: a confirmation plays more games only while in doubt (some stop at
/// the first look, some play to the cap, every game counted), gives the same numbers on 1 and 2
/// threads and after a resume, and the run stops only when the best's interval clears the
/// target (its F less z standard errors above it), not when its F alone does.
#[test]
fn a_sequential_confirmation_plays_only_while_in_doubt_and_stops_when_sure() {
    let text = |out: &Path, target: &str| {
        config(out, "")
            .replace("optimizer = \"es\"", "optimizer = \"cma\"")
            .replace("confirm_games = 3", "confirm_games = 40\nconfirm = \"sequential\"")
            .replace("target = 0.99", &format!("target = {target}"))
            .replace("max_evaluations = 400", "max_evaluations = 600")
    };
    // 1 and 2 threads, and a run stopped after 3 iterations then resumed: one history.
    let go = |tag: &str, threads: usize, stops: &[u64]| {
        let out = tmp(tag);
        let t = text(&out, "0.99");
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut last = None;
        for (k, &n) in stops.iter().enumerate() {
            last = Some(pool.install(|| run_text(&t, &RunOptions { resume: k > 0, max_iterations: Some(n), ..RunOptions::default() })));
        }
        last.unwrap()
    };
    let (h1, b1) = go("seq1", 1, &[30]);
    let (h2, b2) = go("seq2", 2, &[30]);
    let (h3, b3) = go("seq3", 2, &[3, 27]);
    assert_eq!(strip_time(&h1), strip_time(&h2));
    assert_eq!(strip_time(&h1), strip_time(&h3));
    assert_eq!((&b1, &b1), (&b2, &b3));
    // Each iteration plays its candidates (the fewest games any iteration played) and maybe a
    // confirmation of 8, 16, 32 or 40 games (one AI pair): the looks.
    let mut before = 0;
    let steps: Vec<u64> = h1.iter().map(|r| (r.games - before, before = r.games).0).collect();
    let own = *steps.iter().min().unwrap();
    let confirmations: Vec<u64> = steps.iter().map(|s| s - own).filter(|&c| c > 0).collect();
    assert!(confirmations.iter().all(|c| [8, 16, 32, 40].contains(c)), "{steps:?}");
    assert!(confirmations.iter().any(|&c| c < 40) && confirmations.contains(&40), "{steps:?}");
    let best = b1.unwrap();
    assert!(best.eval.f_se > 0.0 && best.eval.f_se.is_finite() && best.eval.games >= 8, "{:?}", best.eval);
    assert!(!best.eval.sure, "F = {} cannot be sure of 0.99", best.eval.f);
    // A target its best clears with confidence ends the run; one its F passes but its interval
    // does not, never.
    let out = tmp("seq-sure");
    let cfg = parse(&text(&out, "0.3")).unwrap();
    let o = run(&cfg, Path::new("b.toml"), &text(&out, "0.3"), &RunOptions::default(), &|_, _, _, _| {}).unwrap();
    let b = o.best.clone().unwrap();
    assert!(o.reached && b.eval.sure && o.games_played < 600 * 2, "{:?} after {} games", b.eval, o.games_played);
    assert!(b.eval.f - 1.96 * b.eval.f_se > 0.3, "{:?}", b.eval);
    // A target just below that best's F, inside its interval: the fixed rule would stop at the
    // first best above it; here the run goes on past it unless it grows sure.
    let unsure = format!("{:.5}", best.eval.f - 0.8 * best.eval.f_se);
    let limit: f64 = unsure.parse().unwrap();
    let out = tmp("seq-unsure");
    let t = text(&out, &unsure);
    let o = run(
        &parse(&t).unwrap(),
        Path::new("b.toml"),
        &t,
        &RunOptions { max_iterations: Some(30), ..RunOptions::default() },
        &|_, _, _, _| {},
    )
    .unwrap();
    let b = o.best.unwrap();
    assert_eq!(o.reached, b.eval.sure);
    let passed = o.history.iter().position(|r| r.best_so_far > limit);
    assert!(passed.is_some_and(|i| i + 1 < o.history.len()), "F passed {unsure} at {passed:?} of {} iterations", o.history.len());
}

/// F's standard error by the bootstrap ([`Evaluator::f_se`]) is calibrated: on the main job's
/// fitness (win balance per pair, weight 2) and AI pairs, for the game's own encounter, its mean
/// over 60 replicates of 16 games per pair is within a factor of the spread of F over them.
#[test]
fn the_bootstrap_standard_error_of_f_matches_its_spread_over_replicates() {
    use playforge::balance::fitness::Evaluator;
    let text = std::fs::read_to_string("configs/hexmage_balance.toml").unwrap().replace("\"../games/", "\"games/");
    let path = Path::new("b.toml");
    let cfg = BalanceConfig::parse(path, &text).unwrap();
    let codec = Codec::new(&cfg, path, &text).unwrap();
    let ev = Evaluator::new(&cfg, codec.probe()).unwrap();
    let (reps, n) = (60u64, 16u64);
    let mut fs = Vec::new();
    let mut ses = Vec::new();
    for r in 0..reps {
        let games: Vec<_> = (0..ev.n_pairs())
            .flat_map(|p| (0..n).map(move |g| (p, 1_000 * r + g)))
            .map(|(p, seed)| ev.play(codec.probe(), p, seed, None).unwrap())
            .collect();
        let e = ev.score(&games, 0.5);
        fs.push(e.f);
        ses.push(ev.f_se(&games, 0.5));
    }
    let mean = fs.iter().sum::<f64>() / reps as f64;
    let sd = (fs.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / (reps - 1) as f64).sqrt();
    let se = ses.iter().sum::<f64>() / reps as f64;
    eprintln!("F {mean:.4}, spread {sd:.4}, bootstrap {se:.4} (ratio {:.2})", se / sd);
    assert!(se > 0.7 * sd && se < 1.4 * sd, "the bootstrap's {se:.4} against the spread {sd:.4}");
}
