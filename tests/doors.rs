//! The doors (`playforge::doors`, docs/doors.md): on every shipped WGDL game and every GDL game
//! that grounds, in random games, the legal actions are sorted, distinct and inside the action
//! space; each number read back names the very move the interpreter lists; one number never
//! means two moves, nor one move two numbers (the index is stable); the observation has its
//! declared length. Connect Four's numbering is the documented one; rewards add up to the
//! chosen value's change; bad requests are errors that say what was expected.

use playforge::doors::{Door, DoorError, Inner, Kind, OpenOptions};
use playforge::game::Status;
use rand::{RngExt, SeedableRng};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

fn open(path: &Path) -> Door {
    Door::open(path, &OpenOptions::default()).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

/// The interpreter's own names of the legal moves (WGDL) or of each role's legal actions (GDL).
fn interpreter_names(door: &Door, s: &playforge::doors::DoorState, player: usize) -> Vec<String> {
    match (&door.kind, &s.inner) {
        (Kind::Wgdl(d), Inner::Wgdl(st)) => {
            let mut legal = Vec::new();
            d.program.legal_actions(st, &mut legal).unwrap();
            legal.iter().map(|&m| d.program.action_name(st, m)).collect()
        }
        (Kind::Gdl(d), Inner::Gdl(st)) => d.game.legal_actions(st)[player].iter().map(|&i| d.game.action_name(player, i)).collect(),
        _ => unreachable!(),
    }
}

/// Plays `games` random games (at most `moves` moves each), checking the index at every state.
fn check_index(path: &Path, games: u64, moves: usize) -> usize {
    let door = open(path);
    let info = door.info().clone();
    let mut obs = Vec::new();
    let mut states = 0;
    for g in 0..games {
        let mut meaning: BTreeMap<(usize, i64), u128> = BTreeMap::new();
        let mut number: BTreeMap<(usize, u128), i64> = BTreeMap::new();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(g);
        let mut s = door.initial(g).unwrap();
        for _ in 0..moves {
            states += 1;
            door.observation(&s, &mut obs).unwrap();
            assert_eq!(obs.len(), info.observation_len, "{}", path.display());
            if s.is_terminal() {
                assert!(s.legal(None).is_empty());
                break;
            }
            // A chance node (WGDL `byChance`): chance's actions, sorted, with probabilities
            // that add up to 1; one of them is played.
            if s.current_player() == playforge::doors::CHANCE {
                let legal = s.legal(None).to_vec();
                assert!(!legal.is_empty() && legal.windows(2).all(|w| w[0] < w[1]), "{}: chance {legal:?}", path.display());
                let outcomes = door.chance_outcomes(&s);
                assert_eq!(outcomes.iter().map(|o| o.0).collect::<Vec<_>>(), legal, "{}", path.display());
                assert!((outcomes.iter().map(|o| o.1).sum::<f64>() - 1.0).abs() < 1e-9, "{}: {outcomes:?}", path.display());
                door.apply(&mut s, legal[rng.random_range(0..legal.len())]).unwrap();
                continue;
            }
            let players: Vec<usize> =
                if s.current_player() >= 0 { vec![s.current_player() as usize] } else { (0..info.players.len()).collect() };
            for &p in &players {
                let legal = s.legal(Some(p)).to_vec();
                assert!(!legal.is_empty(), "{}: no legal action for the player to move", path.display());
                assert!(legal.windows(2).all(|w| w[0] < w[1]), "{}: not sorted and distinct: {legal:?}", path.display());
                assert!(legal.iter().all(|&a| a >= 0 && (a as usize) < info.num_distinct_actions));
                let mut ours: Vec<String> = legal.iter().map(|&a| door.action_name(&s, p, a).unwrap()).collect();
                let mut theirs = interpreter_names(&door, &s, p);
                ours.sort();
                theirs.sort();
                assert_eq!(ours, theirs, "{}: the numbers read back name other moves", path.display());
                // Within a game an object keeps its id, so a move is (action, owner, binding):
                // WGDL numbers every player's moves in one space, GDL each role's own.
                let moves: Vec<(usize, u128)> = match &s.inner {
                    Inner::Wgdl(_) => {
                        s.wgdl_moves().iter().map(|m| (0, ((m.def as u128) << 64) | ((m.this as u128) << 32) | m.bound as u128)).collect()
                    }
                    Inner::Gdl(_) => legal.iter().map(|&a| (p, a as u128)).collect(),
                };
                for (&a, &mv) in legal.iter().zip(&moves) {
                    if let Some(old) = meaning.insert((mv.0, a), mv.1) {
                        assert_eq!(old, mv.1, "{}: number {a} means two moves in one game", path.display());
                    }
                    if let Some(old) = number.insert(mv, a) {
                        assert_eq!(old, a, "{}: one move has two numbers in one game", path.display());
                    }
                }
            }
            if s.current_player() >= 0 {
                let legal = s.legal(None);
                let a = legal[rng.random_range(0..legal.len())];
                door.apply(&mut s, a).unwrap();
            } else {
                let joint: Vec<i64> = (0..info.players.len())
                    .map(|p| {
                        let l = s.legal(Some(p));
                        l[rng.random_range(0..l.len())]
                    })
                    .collect();
                door.apply_joint(&mut s, &joint).unwrap();
                assert_eq!(s.history().len() % info.players.len(), 0);
            }
        }
    }
    states
}

#[test]
fn every_shipped_wgdl_game_has_a_stable_sorted_action_index() {
    let games = files("games", "wgdl");
    assert!(games.len() >= 7, "{games:?}");
    for path in games {
        let states = check_index(&path, 6, 300);
        assert!(states > 20, "{}: {states} states", path.display());
    }
}

#[test]
fn every_gdl_game_that_grounds_has_a_stable_action_index_per_role() {
    let mut games = files("games/gdl", "kif");
    games.extend(files("tests/data/gdl", "kif"));
    assert!(games.len() >= 6, "{games:?}");
    for path in games {
        check_index(&path, 6, 200);
    }
}

#[test]
fn connect_four_numbers_a_drop_by_side_and_column() {
    let door = open(&root().join("games/connect_four.wgdl"));
    let info = door.info();
    assert_eq!((info.num_distinct_actions, info.players.len(), info.simultaneous, info.stochastic), (14, 2, false, false));
    let mut s = door.initial(0).unwrap();
    assert_eq!(s.legal(None), (0..7).collect::<Vec<i64>>());
    assert_eq!(door.action_name(&s, 0, 3).unwrap(), "drop(red, 3)");
    assert_eq!(door.action_name(&s, 0, 12).unwrap(), "drop(yellow, 5)");
    let mut before = Vec::new();
    door.observation(&s, &mut before).unwrap();
    door.apply(&mut s, 3).unwrap();
    assert_eq!((s.current_player(), s.legal(None)), (1, (7..14).collect::<Vec<i64>>().as_slice()));
    let mut after = Vec::new();
    door.observation(&s, &mut after).unwrap();
    assert_ne!(before, after, "a drop changes the observation");
    // Red stacks column 0 four times while yellow plays column 1: red wins, returns ±1.
    for _ in 0..3 {
        door.apply(&mut s, 8).unwrap();
        door.apply(&mut s, 3).unwrap();
    }
    assert_eq!(s.status(), Status::Won(0));
    assert_eq!(door.returns(&s), vec![1.0, -1.0]);
    assert_eq!(door.rewards(&s), vec![1.0, -1.0]);
    assert_eq!(s.current_player(), playforge::doors::TERMINAL);
    assert!(matches!(door.apply(&mut s, 0), Err(DoorError::Illegal(m)) if m.contains("over")));
}

#[test]
fn an_illegal_action_is_an_error_naming_the_legal_ones() {
    let door = open(&root().join("games/connect_four.wgdl"));
    let mut s = door.initial(0).unwrap();
    match door.apply(&mut s, 9) {
        Err(DoorError::Illegal(m)) => assert!(m.contains("not legal") && m.contains("drop(red, 0)"), "{m}"),
        other => panic!("{:?}", other.err()),
    }
    assert!(matches!(door.action_name(&s, 0, 14), Err(DoorError::Illegal(m)) if m.contains("0 … 13")));
    assert_eq!(s.history(), &[] as &[i64]);
}

#[test]
fn rewards_add_up_to_the_chosen_values_change() {
    let path = root().join("games/match3.wgdl");
    let opts = OpenOptions { reward: Some("game.score".into()), params: vec![("me.maxMoves".into(), 6.0)], ..OpenOptions::default() };
    let door = Door::open(&path, &opts).unwrap();
    assert!(door.info().rewards && door.info().stochastic);
    let mut s = door.initial(42).unwrap();
    let mut total = 0.0;
    while !s.is_terminal() {
        let a = s.legal(None)[0];
        door.apply(&mut s, a).unwrap();
        total += door.rewards(&s)[0];
        assert_eq!(door.returns(&s)[0], total);
    }
    assert!(total > 0.0);
    let Kind::Wgdl(d) = &door.kind else { unreachable!() };
    let Inner::Wgdl(st) = &s.inner else { unreachable!() };
    let score = d.program.value_ref("game.score").unwrap();
    assert_eq!(d.program.read(st, score), total);
    // A game that draws: two seeds, two boards; one seed, one board.
    let text = |seed| door.text(&door.initial(seed).unwrap());
    assert_ne!(text(1), text(2));
    assert_eq!(text(3), text(3));
}

#[test]
fn bad_requests_say_what_was_expected() {
    let c4 = root().join("games/connect_four.wgdl");
    let two = Door::open(&c4, &OpenOptions { reward: Some("game.moves".into()), ..OpenOptions::default() }).err().unwrap();
    assert!(format!("{two:#}").contains("one-player"), "{two:#}");
    let m3 = root().join("games/match3.wgdl");
    let bad = Door::open(&m3, &OpenOptions { reward: Some("me.nope".into()), ..OpenOptions::default() }).err().unwrap();
    assert!(format!("{bad:#}").contains("no attribute `nope`"), "{bad:#}");
    let gdl = Door::open(&root().join("games/gdl/tictactoe.kif"), &OpenOptions { reward: Some("x".into()), ..OpenOptions::default() });
    assert!(format!("{:#}", gdl.err().unwrap()).contains("WGDL"));
    // Sequential by declaration, simultaneous in play: the node says so.
    let pennies = root().join("tests/data/gdl/matching_pennies.kif");
    let seq = Door::open(&pennies, &OpenOptions { simultaneous: Some(false), ..OpenOptions::default() }).err().unwrap();
    assert!(format!("{seq:#}").contains("simultaneous"), "{seq:#}");
    let sim = open(&pennies);
    let mut s = sim.initial(0).unwrap();
    assert_eq!(s.current_player(), playforge::doors::SIMULTANEOUS);
    assert!(matches!(sim.apply(&mut s, 0), Err(DoorError::Illegal(m)) if m.contains("apply_actions")));
    assert!(matches!(sim.apply_joint(&mut s, &[0]), Err(DoorError::Illegal(m)) if m.contains("one per role")));
}

#[test]
fn objects_past_the_room_are_an_error_not_a_wrong_number() {
    // Magic Land builds: with no room for created objects, the first building is refused by
    // name; with the default room random games go on.
    let path = root().join("games/magic_land.wgdl");
    let tight = Door::open(&path, &OpenOptions { objects: 0, ..OpenOptions::default() }).unwrap();
    let roomy = open(&path);
    assert!(roomy.info().num_distinct_actions > tight.info().num_distinct_actions);
    let mut refused = 0;
    for g in 0..20u64 {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(g);
        let mut s = tight.initial(0).unwrap();
        for _ in 0..2000 {
            if s.is_terminal() {
                break;
            }
            let legal = s.legal(None);
            let a = legal[rng.random_range(0..legal.len())];
            match tight.apply(&mut s, a) {
                Ok(()) => {}
                Err(DoorError::Runtime(m)) => {
                    assert!(m.contains("larger `objects`"), "{m}");
                    refused += 1;
                    break;
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    assert!(refused > 0, "no random game built anything");
}
