//! Nothing lost: each long command (balance, generate, personas, playtest — of a WGDL game and of
//! a game in its own process — and experiment) is
//! killed with SIGKILL at a random point of its run, then continued with `--resume`; its outputs
//! must be byte-identical to an uninterrupted run's. Only the files that hold the wall clock or the
//! run's own bookkeeping are left out: `timing.csv` and a playtest replicate's `rep-NN.seconds`
//! (elapsed seconds, kept apart for this reason), `checkpoint.json` (holds elapsed seconds too)
//! and the folder's `.lock`/`.playforge`.

use playforge::rng;
use rand::RngExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::util::outputs;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[String]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_playforge")).args(args).current_dir(root()).output().unwrap()
}

/// Runs `args` (+ `--out X`) to the end, then again killed after a random share of that time
/// and resumed; asserts the two output trees are the same bytes. Returns how long it waited
/// before the kill and whether `--resume` found something to continue.
fn killed_and_resumed(tag: &str, args: &[&str], seed: u64) -> (Duration, bool) {
    let work = std::env::temp_dir().join(format!("playforge-kill-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let out = work.join("out");
    let with_out = |extra: &[&str]| -> Vec<String> {
        args.iter().chain(["--out", out.to_str().unwrap(), "-q"].iter()).chain(extra).map(|s| s.to_string()).collect()
    };
    let t0 = Instant::now();
    let o = run(&with_out(&[]));
    assert!(o.status.success(), "{tag}: {}", String::from_utf8_lossy(&o.stderr));
    let full = t0.elapsed();
    let straight = work.join("straight");
    std::fs::rename(&out, &straight).unwrap();
    // Killed somewhere between 30% and 80% of an uninterrupted run.
    let mut r = rng::stream(seed, 0, 0, 0);
    let wait = full.mul_f64(r.random_range(0.3..0.8));
    let mut child = Command::new(env!("CARGO_BIN_EXE_playforge")).args(with_out(&[])).current_dir(root()).spawn().unwrap();
    std::thread::sleep(wait);
    child.kill().unwrap();
    child.wait().unwrap();
    let o = run(&with_out(&["--resume"]));
    let err = String::from_utf8_lossy(&o.stderr);
    let resumed = o.status.success();
    if !resumed {
        // Killed before its first checkpoint: --resume says so, and a fresh run is the answer.
        assert!(err.contains("--resume: no"), "{tag}: {err}");
        let o = run(&with_out(&[]));
        assert!(o.status.success(), "{tag}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let (a, b) = (outputs(&straight), outputs(&out));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "{tag}: other files after kill -9 and --resume");
    for (k, v) in &a {
        assert!(b[k] == *v, "{tag}: {} differs after kill -9 and --resume", k.display());
    }
    std::fs::remove_dir_all(&work).unwrap();
    (wait, resumed)
}

#[test]
fn kill_9_then_resume_gives_byte_identical_outputs() {
    let work = std::env::temp_dir().join(format!("playforge-kill-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    // Small versions of the shipped configs.
    let balance = work.join("balance.toml");
    let text = std::fs::read_to_string(root().join("configs/hexmage_balance.toml"))
        .unwrap()
        .replace("max_evaluations = 12000", "max_evaluations = 1500")
        .replace("\"../games/", &format!("\"{}/games/", root().display()));
    std::fs::write(&balance, text).unwrap();
    let experiment = work.join("tiny.toml");
    std::fs::write(
        &experiment,
        format!(
            "[experiment]\nname = \"tiny\"\nbase = \"{}\"\nseeds = 4\nmetric = \"global.coins\"\n\n[[condition]]\nname = \"on\"\nsearch = {{ duplicate_detection = true, iterations = 40000 }}\n\n[[condition]]\nname = \"off\"\nsearch = {{ duplicate_detection = false, iterations = 40000 }}\n",
            root().join("configs/simple_coins.toml").display()
        ),
    )
    .unwrap();
    let cases: [(&str, Vec<&str>); 6] = [
        ("balance", vec!["balance", balance.to_str().unwrap()]),
        ("generate", vec!["generate", "configs/generate_hex_map.toml", "--evaluations", "800"]),
        ("personas", vec!["personas", "configs/personas_quick.toml", "--only", "MaxS", "--generations", "3"]),
        ("playtest", vec!["playtest", "configs/playtest_stacker.toml", "--replicates", "3", "--rollouts", "3000"]),
        ("experiment", vec!["experiment", experiment.to_str().unwrap()]),
        // A game in its own process (Python, over the bridge): its processes die with the run.
        ("playtest_external", vec!["playtest", "configs/playtest_external_roguelike.toml", "--replicates", "4", "--rollouts", "1500"]),
    ];
    let mut resumed_any = false;
    for (k, (tag, args)) in cases.iter().enumerate() {
        let (waited, resumed) = killed_and_resumed(tag, args, 40 + k as u64);
        resumed_any |= resumed;
        let how = if resumed { "continued from its checkpoint" } else { "killed before its first checkpoint, run afresh" };
        println!("{tag}: killed after {:.2} s, {how}: outputs byte-identical", waited.as_secs_f64());
    }
    assert!(resumed_any, "no command was killed after its first checkpoint");
    std::fs::remove_dir_all(&work).unwrap();
}
