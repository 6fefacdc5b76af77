//! The bridge from playforge's side (src/bridge/) against game processes written in Python with
//! the package's client (python/playforge/bridge.py, loaded as one file): episodes replay their
//! prefix and return checked outcomes, the same seeds give the same outcome, and every fault —
//! a game that sends garbage, hangs, dies, lies about n, answers with a wrong nonce or cannot
//! start — is a clear error within its timeout, never a hang.

use playforge::bridge::process::{FaultKind, Launch, Worker};
use playforge::bridge::protocol::Episode;
use std::path::Path;
use std::time::{Duration, Instant};

/// A Python game: `body` runs after `game = bridge.connect(...)` (the client loaded from
/// python/playforge/bridge.py, so no compiled package is needed).
fn python(body: &str) -> Launch {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = format!(
        "import sys, time, json\nsys.path.insert(0, {:?})\nimport bridge\ngame = bridge.connect('toy', measures=['turns'])\n{body}\n",
        root.join("python/playforge").display().to_string()
    );
    Launch {
        command: vec!["python3".into(), "-c".into(), script],
        dir: root.to_path_buf(),
        settings: serde_json::json!({"style": "plain"}),
        connect_timeout: Duration::from_secs(20),
        episode_timeout: Duration::from_secs(20),
        stdio: false,
    }
}

/// Three decisions of 3, 2 and 4 options; the score is the sum of the choices.
const TOY: &str = "for ep in game.episodes():\n    picks = [ep.select(3), ep.select(2), ep.select(4)]\n    ep.outcome(sum(picks), turns=3)";

fn episode(id: u64, prefix: &[u64]) -> Episode {
    Episode { id, seed: 5, policy_seed: u64::MAX - id % 2, settings: serde_json::json!({}), prefix: prefix.to_vec() }
}

#[test]
fn a_game_replays_its_prefix_and_the_same_seeds_give_the_same_outcome() {
    let mut w = Worker::start(&python(TOY)).unwrap();
    assert_eq!(w.hello.game, "toy");
    assert_eq!(w.hello.measures, ["turns"]);
    let a = w.play(&episode(0, &[2, 1])).unwrap();
    assert_eq!(a.trace.len(), 3);
    assert_eq!((a.trace[0], a.trace[1]), ([2, 3], [1, 2]));
    assert_eq!(a.score, a.trace.iter().map(|t| t[0] as f64).sum::<f64>());
    assert_eq!(a.measures["turns"], 3.0);
    let b = w.play(&episode(2, &[2, 1])).unwrap();
    assert_eq!((a.trace.clone(), a.score), (b.trace, b.score), "same prefix and policy seed, same rollout");
    // Every full prefix is followed exactly.
    for (k, prefix) in [[0, 0, 0], [2, 1, 3], [1, 0, 2]].iter().enumerate() {
        let o = w.play(&episode(10 + k as u64, prefix)).unwrap();
        assert_eq!(o.trace.iter().map(|t| t[0]).collect::<Vec<_>>(), prefix);
    }
    w.stop();
}

/// Starts `launch` and plays one episode: the fault, and how long it took to come.
fn fails(launch: Launch) -> (FaultKind, String, Duration) {
    let t = Instant::now();
    let e = match Worker::start(&launch) {
        Err(e) => e,
        Ok(mut w) => w.play(&episode(0, &[1])).expect_err("a fault"),
    };
    (e.kind, e.message, t.elapsed())
}

#[test]
fn every_fault_of_a_game_is_a_clear_error_within_its_timeout() {
    let quick = |mut l: Launch| {
        l.connect_timeout = Duration::from_secs(3);
        l.episode_timeout = Duration::from_secs(1);
        l
    };
    let raw = "link = game._link\nlink.receive()\n";
    let cases: Vec<(Launch, FaultKind, &str)> = vec![
        (
            python(&format!("{raw}link._out.write('not json at all\\n'); link._out.flush(); time.sleep(30)")),
            FaultKind::Garbage,
            "expected a JSON object",
        ),
        (python(&format!("{raw}time.sleep(30)")), FaultKind::Timeout, "no outcome within 1s"),
        // Logging without end is no outcome either: the deadline holds across lines.
        (
            python(&format!("{raw}while True:\n    game.log('still thinking'); time.sleep(0.01)")),
            FaultKind::Timeout,
            "no outcome within 1s",
        ),
        (
            python(&format!("{raw}link.send({{'type': 'outcome', 'id': 0, 'score': 1, 'trace': [[1, 3000000]]}}); time.sleep(30)")),
            FaultKind::Broken,
            "offers 3000000 options; expected at most 1048576",
        ),
        (
            python(&format!("{raw}sys.stderr.write('boom: the game fell over\\n'); sys.exit(3)")),
            FaultKind::Died,
            "boom: the game fell over",
        ),
        (
            python(&format!("{raw}link.send({{'type': 'outcome', 'id': 0, 'score': 1, 'trace': [[1, 3], [5, 3]]}}); time.sleep(30)")),
            FaultKind::Broken,
            "chose 5 of 3 options",
        ),
        (
            python(&format!("{raw}link.send({{'type': 'outcome', 'id': 0, 'score': 1, 'trace': [[0, 3]]}}); time.sleep(30)")),
            FaultKind::Broken,
            "its prefix says 1",
        ),
        (
            python("game.log('a note')\nfor ep in game.episodes():\n    ep.select(1)"),
            FaultKind::Game,
            "prefix entry 0 is 1, but the game offers 1 options",
        ),
        (
            {
                let mut l = python("");
                l.command[2] = l.command[2].replace("import bridge", "import bridge, os\nos.environ['PLAYFORGE_NONCE'] = 'forged'");
                l
            },
            FaultKind::Died,
            "before it said hello",
        ),
        (Launch { command: vec!["/nonexistent/game".into()], ..python("") }, FaultKind::Refused, "cannot start `/nonexistent/game`"),
        (python("sys.exit(0)"), FaultKind::Died, "closed the connection"),
        (python("time.sleep(30)"), FaultKind::Timeout, "no outcome within 1s"),
    ];
    for (launch, kind, says) in cases {
        let (got, message, took) = fails(quick(launch));
        eprintln!("{got:?} in {took:?}: {message}");
        assert_eq!(got, kind, "{message}");
        assert!(message.contains(says), "{says:?} not in: {message}");
        assert!(took < Duration::from_secs(10), "{kind:?} took {took:?}");
        assert_eq!(got.retry(), matches!(kind, FaultKind::Timeout | FaultKind::Died | FaultKind::Garbage));
    }
}
