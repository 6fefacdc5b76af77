//! Magic Land (`games/magic_land.wgdl`): the shipped social building game compiles without
//! warnings, starts with the designed number of legal moves, and its mechanics give exact values
//! in scripted play: planting and harvesting, rent on a timer, business contracts, energy
//! regeneration over a pause, level-ups (two from one XP gain), missions paid through the game
//! value store. Random group-weighted play finishes all four sessions without runtime errors.

use crate::util::{self, legal, names, play};
use playforge::game::{Game, WgdlGame, pick_grouped};
use playforge::wgdl::program::Op;
use playforge::wgdl::{Program, State, Status};
use rand::RngExt;

fn program() -> std::sync::Arc<Program> {
    util::game("magic_land.wgdl").program
}

/// Reads `global.coins`, `cottage.ready`, `plot#2.ripe` (the n-th object of a description) or
/// `game.missions.done` / `game.built.sum` from a state.
fn value(p: &Program, st: &State, name: &str) -> i64 {
    if let Some(path) = name.strip_prefix("game.") {
        let n = p.n_store_nodes();
        if let Some(path) = path.strip_suffix(".sum") {
            let node = p.store.paths.iter().position(|x| x == path).unwrap_or_else(|| panic!("no store node {path}"));
            return st.slots[n + node] - st.slots[node];
        }
        let path = if path == "missionsDone" { "missions.done" } else { path };
        return match p.store.paths.iter().position(|x| x == path) {
            Some(node) => st.slots[node],
            None => panic!("no store node {path}"),
        };
    }
    st.slots[slot(p, st, name)]
}

/// The slot of an object attribute such as `global.xp` or `plot#2.ripe`.
fn slot(p: &Program, st: &State, name: &str) -> usize {
    let (obj, attr) = name.split_once('.').expect("object.attribute");
    let (god, nth) = match obj.split_once('#') {
        Some((g, k)) => (g, k.parse::<usize>().expect("#n")),
        None => (obj, 1),
    };
    let g = p.gods.iter().position(|x| x.name == god).unwrap_or_else(|| panic!("no description {god}"));
    let o = st.objects.iter().filter(|o| o.god as usize == g).nth(nth - 1).unwrap_or_else(|| panic!("no object {obj}"));
    assert!(o.alive, "{obj} was deleted");
    let k = p.classes[o.class as usize].attrs.iter().position(|a| a.name == attr).unwrap_or_else(|| panic!("no attribute {name}"));
    o.base as usize + k
}

/// Sets an object attribute directly (to reach a situation without playing up to it).
fn set(p: &Program, st: &mut State, name: &str, v: i64) {
    let k = slot(p, st, name);
    st.slots[k] = v;
    // Goals and outcomes are re-checked after the next move only where something changed.
    st.touch();
}

/// The thesis's score for Magic Land.
fn score(p: &Program, st: &State) -> f64 {
    0.5 * value(p, st, "global.xp") as f64 / 500.0
        + 0.3 * value(p, st, "game.missionsDone") as f64 / 22.0
        + 0.2 * value(p, st, "global.coins") as f64 / 15000.0
}

/// Plays one game to its end with group-weighted (or uniform) random moves; returns the moves.
fn playout(game: &WgdlGame, st: &mut State, seed: u64, grouped: bool, max_moves: u32) -> u32 {
    let mut rng = playforge::rng::stream(seed, 0, 0, 0);
    let weights = game.group_weights();
    let mut moves = Vec::new();
    let mut n = 0;
    loop {
        game.legal(st, &mut moves).unwrap_or_else(|e| panic!("{}", e.render(&game.program)));
        match game.status(st, &moves) {
            Status::Running => {}
            Status::Finished => return n,
            s => panic!("seed {seed}: game ended {s:?} after {n} moves"),
        }
        assert!(n < max_moves, "seed {seed}: no end after {max_moves} moves");
        let a = if grouped { pick_grouped(game, &moves, &weights, &mut rng) } else { moves[rng.random_range(0..moves.len())] };
        game.apply(st, a).unwrap_or_else(|e| panic!("seed {seed}: {}", e.render(&game.program)));
        n += 1;
    }
}

/// Group-weighted (`grouped`) or uniform random playouts from the start: (mean moves, mean score).
fn random_play(p: &std::sync::Arc<Program>, n: u64, grouped: bool, max_moves: u32) -> (f64, f64) {
    let game = WgdlGame::new(p.clone());
    let (mut moves, mut total) = (0u64, 0.0);
    for seed in 0..n {
        let mut st = p.initial_state().expect("start state");
        moves += playout(&game, &mut st, seed, grouped, max_moves) as u64;
        assert_eq!(st.goal, 4, "seed {seed}");
        assert_eq!(st.sessions, 4, "seed {seed}");
        assert_eq!(st.clock, 4 * 3900, "seed {seed}: the game ends at the start of the fifth session");
        for v in [
            "global.energy",
            "global.coins",
            "global.food",
            "global.wood",
            "global.stone",
            "global.trinkets",
            "global.stardust",
            "global.freeSpace",
        ] {
            assert!(value(p, &st, v) >= 0, "seed {seed}: {v} < 0");
        }
        assert!(value(p, &st, "global.energy") <= value(p, &st, "global.energyCap"), "seed {seed}: energy above the cap");
        assert!(value(p, &st, "game.missionsDone") <= 22);
        total += score(p, &st);
    }
    (moves as f64 / n as f64, total / n as f64)
}

#[test]
fn compiles_without_warnings() {
    let c = util::game("magic_land.wgdl");
    assert_eq!(c.warnings.items.len(), 0, "{}", c.warnings);
    let p = &c.program;
    assert_eq!(
        p.groups.iter().map(|g| (g.name.as_str(), g.weight)).collect::<Vec<_>>(),
        [("Play", 0.8), ("Build", 0.09), ("FinishSubgoal", 0.1), ("Wait", 0.01)]
    );
    assert_eq!(p.goals.len(), 4);
    assert_eq!((p.session_length, p.session_pause), (300, 3600));
    let missions = p.gods.iter().filter(|g| p.classes[g.class as usize].name == "mission").count();
    assert_eq!(missions, 22);
}

/// `game.missionsDone`, the scoring value, names the store counter `missions.done`.
#[test]
fn missions_done_is_a_game_value() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games/magic_land.wgdl");
    let text = std::fs::read_to_string(path).unwrap() + "\ngoal 5 game.missionsDone >= long 22\n";
    let p = util::compile(&text).program;
    let g = &p.goals[4];
    match p.code[g.expr.start as usize] {
        Op::StoreOwn(node) => assert_eq!(p.store.paths[node as usize], "missions.done"),
        op => panic!("goal 5 starts with {op:?}"),
    }
}

#[test]
fn start_state_has_22_legal_moves() {
    let p = program();
    let st = p.initial_state().unwrap();
    let expected = [
        "build(global, plot)",
        "build(global, flowerbed)",
        "wait60(global)",
        "endSessionNow(global)",
        "demolish(cottage)",
        "collectRent(cottage)",
        "demolish(bakery)",
        "stock(bakery)",
        "plantSeed(plot#1, turnip)",
        "plantSeed(plot#1, wheat)",
        "plantSeed(plot#2, turnip)",
        "plantSeed(plot#2, wheat)",
        "chop(oak#1)",
        "chop(oak#2)",
        "chop(oak#3)",
        "chop(pine#1)",
        "chop(pine#2)",
        "smash(boulder#1)",
        "smash(boulder#2)",
        "smash(rubble)",
        "whack(goblin#1)",
        "whack(goblin#2)",
    ];
    assert_eq!(names(&p, &st), expected);
    assert_eq!(p.status(&st, &legal(&p, &st)), Status::Running);
    for (v, want) in [
        ("global.xp", 0),
        ("global.level", 1),
        ("global.energy", 30),
        ("global.energyCap", 30),
        ("global.coins", 300),
        ("global.food", 15),
        ("global.freeSpace", 6),
        ("game.missionsDone", 0),
        ("game.built.houses", 1),
        ("game.built.businesses", 1),
        ("game.built.farms", 2),
        ("game.built.sum", 4),
        ("firstSeeds.state", 1),
        ("firstHarvest.state", 0),
    ] {
        assert_eq!(value(&p, &st, v), want, "{v}");
    }
}

/// Plant two seeds (mission 1.1 pays), harvest the turnip after its 120 s, collect rent twice
/// 150 s apart (mission 2.1 pays), chop two trees (mission 3.1 pays); the move that brings the
/// 20th XP gives level 2 with its energy refill and coin bonus.
#[test]
fn scripted_farm_rent_and_first_missions() {
    let p = program();
    let mut st = p.initial_state().unwrap();
    let check = |st: &State, want: &[(&str, i64)]| {
        for &(v, w) in want {
            assert_eq!(value(&p, st, v), w, "{v} at t={}", st.clock);
        }
    };
    play(&p, &mut st, "plantSeed(plot#1, turnip)"); // ripe at 0 + 120
    check(
        &st,
        &[
            ("global.energy", 29),
            ("global.xp", 1),
            ("global.coins", 290),
            ("plot#1.isFree", 0),
            ("plot#1.pendingFood", 6),
            ("game.farm.planted", 1),
        ],
    );
    assert_eq!(st.clock, 5);
    play(&p, &mut st, "plantSeed(plot#2, wheat)"); // ripe at 5 + 900; mission 1.1 pays 5 XP, 40 coins
    check(
        &st,
        &[
            ("global.energy", 28),
            ("global.xp", 7),
            ("global.coins", 300),
            ("game.missionsDone", 1),
            ("firstSeeds.state", 2),
            ("firstHarvest.state", 1),
        ],
    );
    assert!(!names(&p, &st).iter().any(|n| n.starts_with("harvest")));
    play(&p, &mut st, "wait60(global)");
    play(&p, &mut st, "wait60(global)");
    assert_eq!(st.clock, 130);
    check(&st, &[("plot#1.ripe", 1), ("plot#2.ripe", 0)]);
    play(&p, &mut st, "harvest(plot#1)");
    check(
        &st,
        &[
            ("global.energy", 27),
            ("global.xp", 8),
            ("global.food", 21),
            ("plot#1.isFree", 1),
            ("plot#1.ripe", 0),
            ("game.farm.harvested", 1),
        ],
    );
    assert!(!names(&p, &st).contains(&"harvest(plot#2)".to_string()));

    play(&p, &mut st, "collectRent(cottage)"); // at t=135: ready again at 285
    check(&st, &[("global.energy", 26), ("global.xp", 9), ("global.coins", 320), ("cottage.ready", 0), ("game.collected.houses", 1)]);
    assert!(!names(&p, &st).contains(&"collectRent(cottage)".to_string()));
    play(&p, &mut st, "wait60(global)");
    play(&p, &mut st, "wait60(global)");
    play(&p, &mut st, "chop(oak#1)"); // 3 energy, 15 s
    assert_eq!(st.clock, 275);
    check(&st, &[("global.energy", 23), ("global.xp", 12), ("global.wood", 5), ("global.freeSpace", 7), ("cottage.ready", 0)]);
    play(&p, &mut st, "chop(pine#1)"); // 2 energy, 10 s; mission 3.1 pays 5 XP, 40 coins
    assert_eq!(st.clock, 285);
    check(
        &st,
        &[
            ("global.energy", 21),
            ("global.xp", 19),
            ("global.coins", 360),
            ("global.wood", 8),
            ("game.cleared.trees", 2),
            ("stoneWork.state", 1),
            ("cottage.ready", 1),
        ],
    );
    // The 20th XP: level 2 (cap 32, energy refilled, 100 coins), and mission 2.1 pays 5 XP, 40 coins.
    play(&p, &mut st, "collectRent(cottage)");
    check(
        &st,
        &[
            ("global.xp", 25),
            ("global.level", 2),
            ("global.nextLevelXp", 60),
            ("global.energyCap", 32),
            ("global.energy", 32),
            ("global.coins", 520),
            ("game.missionsDone", 3),
            ("rentDay.state", 2),
            ("newNeighbours.state", 1),
        ],
    );
    assert_eq!((st.clock, st.sessions, st.goal), (290, 0, 0));
}

/// A business: stock 10 food, the contract runs 240 s, then sell for 45 coins; twice completes
/// nothing yet (mission 1.3 is locked behind 1.2), but the counter counts.
#[test]
fn scripted_business_contract() {
    let p = program();
    let mut st = p.initial_state().unwrap();
    play(&p, &mut st, "stock(bakery)");
    assert_eq!((value(&p, &st, "global.food"), value(&p, &st, "bakery.stage"), value(&p, &st, "global.energy")), (5, 1, 30));
    assert!(!names(&p, &st).contains(&"stock(bakery)".to_string()), "5 food is not enough and the bakery is busy");
    for _ in 0..3 {
        play(&p, &mut st, "wait60(global)");
    }
    assert_eq!((st.clock, value(&p, &st, "bakery.stage")), (185, 1));
    play(&p, &mut st, "wait60(global)");
    assert_eq!((st.clock, value(&p, &st, "bakery.stage")), (245, 2));
    play(&p, &mut st, "sell(bakery)");
    for (v, want) in [
        ("global.coins", 345),
        ("global.energy", 29),
        ("global.xp", 1),
        ("bakery.stage", 0),
        ("game.collected.businesses", 1),
        ("game.stocked", 1),
    ] {
        assert_eq!(value(&p, &st, v), want, "{v}");
    }
}

/// Energy: 15 spent in session 1, then 13 come back over the session's end and the 3600 s pause
/// (ticks at 300, 600, …, 3900); over the next pause it stops at the cap of 30.
#[test]
fn energy_regenerates_one_per_300_seconds_up_to_the_cap() {
    let p = program();
    let mut st = p.initial_state().unwrap();
    for m in ["smash(boulder#1)", "smash(boulder#2)", "smash(rubble)", "chop(oak#1)", "plantSeed(plot#1, turnip)", "collectRent(cottage)"] {
        play(&p, &mut st, m);
    }
    assert_eq!((value(&p, &st, "global.energy"), value(&p, &st, "global.xp"), value(&p, &st, "global.level")), (15, 15, 1));
    assert_eq!(st.clock, 75);
    play(&p, &mut st, "endSessionNow(global)");
    assert_eq!((st.clock, st.sessions, st.goal), (3900, 1, 1));
    assert_eq!(value(&p, &st, "global.energy"), 15 + 13);
    // Timers ran during the pause: the turnip ripened, the cottage is ready again.
    assert_eq!((value(&p, &st, "plot#1.ripe"), value(&p, &st, "cottage.ready")), (1, 1));
    play(&p, &mut st, "endSessionNow(global)");
    assert_eq!((st.clock, st.sessions, st.goal), (7800, 2, 2));
    assert_eq!(value(&p, &st, "global.energy"), 30);
    // A session that runs out of time: 5 waits of 60 s end session 3 at its 300th second.
    play(&p, &mut st, "endSessionNow(global)");
    for _ in 0..5 {
        play(&p, &mut st, "wait60(global)");
    }
    assert_eq!((st.clock, st.sessions, st.goal), (15600, 4, 4));
    assert_eq!(p.status(&st, &legal(&p, &st)), Status::Finished);
}

/// The levelUp rule fires at the threshold, and again in the same move when one gain passes two
/// thresholds: XP 59 + 1 passes 20 and 60.
#[test]
fn level_ups_refill_energy_and_can_come_two_at_once() {
    let p = program();
    let mut st = p.initial_state().unwrap();
    play(&p, &mut st, "whack(goblin#1)"); // 5 energy, 5 XP; mission 4.1 pays 10 XP, 60 coins
    assert_eq!((value(&p, &st, "global.xp"), value(&p, &st, "global.level"), value(&p, &st, "global.energy")), (15, 1, 25));
    set(&p, &mut st, "global.xp", 59);
    play(&p, &mut st, "collectRent(cottage)");
    for (v, want) in [
        ("global.xp", 60),
        ("global.level", 3),
        ("global.levelStep", 65),
        ("global.nextLevelXp", 125),
        ("global.energyCap", 34),
        ("global.energy", 34),
        // 300 + 20 (goblin) + 60 (mission) + 20 (rent) + 100 (level 2) + 150 (level 3)
        ("global.coins", 650),
    ] {
        assert_eq!(value(&p, &st, v), want, "{v}");
    }
}

/// Missions with a delivery (FinishSubgoal): 3.1 and 3.2 by clearing, then 3.3 wants 10 wood and
/// 6 stone handed over; `deliver` is legal only with enough of both.
#[test]
fn scripted_delivery_mission() {
    let p = program();
    let mut st = p.initial_state().unwrap();
    play(&p, &mut st, "chop(pine#1)"); // 3 wood
    play(&p, &mut st, "chop(oak#1)"); // 8 wood; mission 3.1
    play(&p, &mut st, "smash(boulder#1)"); // 6 stone
    play(&p, &mut st, "smash(rubble)"); // 9 stone; mission 3.2
    assert_eq!((value(&p, &st, "stoneWork.state"), value(&p, &st, "riverBridge.state")), (2, 1));
    assert!(!names(&p, &st).contains(&"deliver(riverBridge)".to_string()), "8 wood < 10");
    play(&p, &mut st, "chop(oak#2)"); // 13 wood
    // 2 + 3 + 4 + 2 + 3 energy = 14 XP, plus 5 + 10 from the missions = 29: level 2 on the way.
    assert_eq!((value(&p, &st, "global.xp"), value(&p, &st, "global.level")), (29, 2));
    let before = value(&p, &st, "global.coins");
    play(&p, &mut st, "deliver(riverBridge)");
    for (v, want) in [
        ("global.wood", 3),
        ("global.stone", 3),
        ("global.xp", 44),
        ("global.coins", before + 150),
        ("riverBridge.state", 2),
        ("riverBridge.delivered", 1),
        ("newLands.state", 1),
        ("game.missions.deliveries", 1),
        ("game.missionsDone", 3),
    ] {
        assert_eq!(value(&p, &st, v), want, "{v}");
    }
    assert!(!names(&p, &st).iter().any(|n| n.starts_with("deliver")));
}

/// Build, expand and demolish: a plot is a new object with its own plantSeed moves; demolishing
/// refunds a fifth and frees the land; expanding brings space and three new obstacles.
#[test]
fn scripted_building() {
    let p = program();
    let mut st = p.initial_state().unwrap();
    play(&p, &mut st, "build(global, plot)");
    assert_eq!((value(&p, &st, "global.coins"), value(&p, &st, "global.freeSpace"), value(&p, &st, "global.xp")), (220, 5, 1));
    assert_eq!(value(&p, &st, "game.built.farms"), 3);
    assert!(names(&p, &st).contains(&"plantSeed(plot#3, turnip)".to_string()));
    play(&p, &mut st, "demolish(cottage)");
    assert_eq!((value(&p, &st, "global.coins"), value(&p, &st, "global.freeSpace"), value(&p, &st, "global.energy")), (244, 7, 29));
    assert!(!names(&p, &st).iter().any(|n| n.contains("cottage")));
    assert!(!names(&p, &st).iter().any(|n| n.starts_with("expand")), "expanding needs level 2");
    let n_obj = st.objects.len();
    set(&p, &mut st, "global.xp", 19);
    play(&p, &mut st, "build(global, flowerbed)"); // 80 coins, 1 XP: level 2, +100 coins
    assert_eq!((value(&p, &st, "global.level"), value(&p, &st, "global.coins"), value(&p, &st, "game.built.decorations")), (2, 264, 1));
    assert!(!names(&p, &st).iter().any(|n| n.starts_with("expand")), "264 coins < 400");
    set(&p, &mut st, "global.coins", 1000);
    play(&p, &mut st, "expand(global)");
    assert_eq!((value(&p, &st, "global.coins"), value(&p, &st, "global.expandCost"), value(&p, &st, "global.freeSpace")), (600, 800, 9));
    assert_eq!(st.objects.len(), n_obj + 1 + 3);
    assert!(names(&p, &st).contains(&"chop(oak#4)".to_string()));
    assert_eq!(value(&p, &st, "newLands.state"), 0, "mission 3.4 is not active yet, the counter waits");
    assert_eq!(value(&p, &st, "game.land.expansions"), 1);
}

/// 1000 group-weighted random playouts all play four sessions to the last goal without a runtime
/// error, within 300 moves; their mean length is that of real sessions (the thesis: 30–60 moves).
#[test]
fn random_grouped_playouts_finish_all_four_sessions() {
    let p = program();
    let (mean_moves, mean_score) = random_play(&p, 1000, true, 300);
    println!("magic_land: 1000 grouped playouts, mean {mean_moves:.1} moves, mean score {mean_score:.3}");
    assert!((60.0..140.0).contains(&mean_moves), "mean moves {mean_moves}");
}

/// The premise of the thesis's action groups: group-weighted random play scores far better than
/// uniform random play, which builds, demolishes and ends sessions early.
#[test]
fn grouped_random_play_beats_uniform_random_play() {
    let p = program();
    let (grouped_moves, grouped) = random_play(&p, 300, true, 300);
    let (uniform_moves, uniform) = random_play(&p, 300, false, 300);
    println!("magic_land: grouped {grouped:.3} ({grouped_moves:.1} moves), uniform {uniform:.3} ({uniform_moves:.1} moves)");
    assert!(grouped > uniform + 0.15, "grouped {grouped} vs uniform {uniform}");
    assert!(uniform_moves < grouped_moves);
}

/// Not a check but the numbers behind the design (run with `--ignored --nocapture`): random play
/// group-weighted and uniform (moves per session, XP, level, missions, coins, score, how often each
/// mission is finished), and two games of flat Monte Carlo (every move: each legal move followed
/// by 6 group-weighted playouts, keep the best mean score) as a stand-in for good play.
#[test]
#[ignore = "design exploration: prints statistics, takes a few seconds"]
fn design_report() {
    let p = program();
    let game = WgdlGame::new(p.clone());
    let missions: Vec<&str> = p.gods.iter().filter(|g| p.classes[g.class as usize].name == "mission").map(|g| g.name.as_str()).collect();
    let summary = |st: &State| {
        let v = |n| value(&p, st, n);
        format!(
            "xp {} level {} missions {} coins {} score {:.3}",
            v("global.xp"),
            v("global.level"),
            v("game.missionsDone"),
            v("global.coins"),
            score(&p, st)
        )
    };
    for grouped in [true, false] {
        let n = 1000;
        let (mut per_session, mut done, mut total) = ([0u32; 4], vec![0u32; missions.len()], [0.0; 5]);
        for seed in 0..n {
            let mut st = p.initial_state().unwrap();
            let mut rng = playforge::rng::stream(seed, 0, 0, 0);
            let weights = game.group_weights();
            let mut moves = Vec::new();
            loop {
                game.legal(&st, &mut moves).unwrap();
                if game.status(&st, &moves) != Status::Running {
                    break;
                }
                let a = if grouped { pick_grouped(&game, &moves, &weights, &mut rng) } else { moves[rng.random_range(0..moves.len())] };
                let session = st.sessions as usize;
                game.apply(&mut st, a).unwrap();
                per_session[session] += 1;
            }
            for (i, m) in missions.iter().enumerate() {
                done[i] += (value(&p, &st, &format!("{m}.state")) == 2) as u32;
            }
            for (k, v) in ["global.xp", "global.level", "game.missionsDone", "global.coins"].iter().enumerate() {
                total[k] += value(&p, &st, v) as f64;
            }
            total[4] += score(&p, &st);
        }
        let n = n as f64;
        let t = total.map(|x| x / n);
        println!(
            "{}: moves per session {:?}, xp {:.1} level {:.2} missions {:.2} coins {:.0} score {:.3}",
            if grouped { "grouped" } else { "uniform" },
            per_session.map(|x| (x as f64 / n * 10.0).round() / 10.0),
            t[0],
            t[1],
            t[2],
            t[3],
            t[4]
        );
        println!("  {}", missions.iter().zip(&done).map(|(m, d)| format!("{m} {:.2}", *d as f64 / n)).collect::<Vec<_>>().join(", "));
    }
    for g in 0..2u64 {
        let mut st = p.initial_state().unwrap();
        let mut line = Vec::new();
        loop {
            let moves = legal(&p, &st);
            if p.status(&st, &moves) != Status::Running {
                break;
            }
            let mut best = (f64::MIN, moves[0]);
            for (i, &a) in moves.iter().enumerate() {
                let mut total = 0.0;
                for j in 0..6 {
                    let mut s2 = st.clone();
                    p.apply(&mut s2, a).unwrap();
                    playout(&game, &mut s2, (g << 40) + ((st.moves as u64) << 20) + ((i as u64) << 8) + j, true, 5000);
                    total += score(&p, &s2);
                }
                if total > best.0 {
                    best = (total, a);
                }
            }
            line.push(p.action_name(&st, best.1));
            p.apply(&mut st, best.1).unwrap();
        }
        let missing: Vec<&str> = missions.iter().copied().filter(|m| value(&p, &st, &format!("{m}.state")) != 2).collect();
        println!("flat MC {g}: {} moves, {}, missions not done {missing:?}", st.moves, summary(&st));
        println!("  {}", line.join(" "));
    }
}
