//! The hex arena and the two-sided extensions: turns and rounds, outcomes, parameters and their
//! overrides, hex maps, policies — and the clear errors for malformed maps, parameters outside
//! their range and bad policies.

use crate::util;
use playforge::game::{Game, WgdlGame};
use playforge::players::agents::{Agent, choose};
use playforge::wgdl::{self, CompileOptions, Status};
use std::path::{Path, PathBuf};

fn arena_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("games/hex_arena.wgdl")
}

fn arena_with(opts: &CompileOptions) -> Result<WgdlGame, String> {
    wgdl::load_with(&arena_path(), opts).map(|c| WgdlGame::new(c.program)).map_err(|e| e.to_string())
}

/// Plays one game with `agents[side]`; returns the status and the final state.
fn play(game: &WgdlGame, agents: [&Agent; 2], seed: u64) -> (Status, playforge::wgdl::State) {
    let mut rng = playforge::rng::stream(seed, 0, 0, 0);
    let mut st = game.initial().unwrap();
    let mut legal = Vec::new();
    loop {
        game.legal(&st, &mut legal).unwrap();
        let s = game.status(&st, &legal);
        if s != Status::Running {
            return (s, st);
        }
        // Only the acting mage's moves are offered.
        for m in &legal {
            let owner = m.this;
            let p = &game.program;
            let actor_side = p.side_of(&st, st.actor);
            assert_eq!(actor_side, st.to_move);
            let _ = owner;
        }
        let m = choose(game, agents[game.to_move(&st)], &st, &legal, &mut rng).unwrap();
        game.apply(&mut st, m).unwrap();
    }
}

#[test]
fn the_arena_compiles_with_its_parameters_and_constraints() {
    let c = util::game("hex_arena.wgdl");
    let p = &c.program;
    assert!(c.warnings.items.is_empty(), "{}", c.warnings);
    assert_eq!(p.players, ["red", "blue"]);
    assert_eq!(p.params.len(), 4 * 2 + 8 * 11, "HexMage's 96 genes: HP and AP per mage, 11 per ability");
    assert_eq!(p.constraints.len(), 8);
    let hex = p.hex.as_ref().unwrap();
    assert_eq!((hex.len(), hex.wall.iter().filter(|w| **w).count()), (91, 16));
    assert_eq!(hex.starts.iter().map(|s| s.len()).collect::<Vec<_>>(), [2, 2]);
    let st = p.initial_state().unwrap();
    assert!(p.violated_constraints(&st).unwrap().is_empty());
    assert_eq!(p.object_label(&st, st.actor), "red1", "red's first mage opens the first round");
}

#[test]
fn random_games_end_in_a_win_a_draw_or_the_turn_cap() {
    let game = arena_with(&CompileOptions::default()).unwrap();
    let mut wins = [0; 2];
    for seed in 0..60 {
        let (s, st) = play(&game, [&Agent::Random, &Agent::Random], seed);
        match s {
            Status::Won(k) => wins[k as usize] += 1,
            Status::Draw | Status::TurnLimit => {}
            other => panic!("seed {seed}: {other:?}"),
        }
        assert!(st.turns <= 100);
    }
    assert!(wins[0] > 5 && wins[1] > 5, "both sides win some random games: {wins:?}");
}

#[test]
fn turn_order_is_grouped_or_alternating() {
    let order = |mode: &str| {
        let game = arena_with(&CompileOptions { turn_order: Some(mode.into()), ..Default::default() }).unwrap();
        let p = game.program.clone();
        let mut st = game.initial().unwrap();
        let mut actors = vec![p.object_label(&st, st.actor)];
        let end = p.actions.iter().position(|a| a.name == "endTurn").unwrap() as u16;
        while actors.len() < 5 {
            let m = playforge::wgdl::Action { def: end, this: st.actor, bound: u32::MAX };
            p.apply(&mut st, m).unwrap();
            actors.push(p.object_label(&st, st.actor));
        }
        (actors, st.round)
    };
    assert_eq!(order("grouped"), (vec!["red1".into(), "red2".into(), "blue1".into(), "blue2".into(), "red1".into()], 1));
    assert_eq!(order("alternating"), (vec!["red1".into(), "blue1".into(), "red2".into(), "blue2".into(), "red1".into()], 1));
}

#[test]
fn the_rule_ai_beats_the_random_ai() {
    let game = arena_with(&CompileOptions::default()).unwrap();
    let rule = Agent::Policy(game.program.policy_index("rule").unwrap());
    let (mut rule_wins, mut random_wins) = (0, 0);
    for seed in 0..40 {
        for side in 0..2 {
            let agents = if side == 0 { [&rule, &Agent::Random] } else { [&Agent::Random, &rule] };
            if let (Status::Won(k), _) = play(&game, agents, seed) {
                if k as usize == side { rule_wins += 1 } else { random_wins += 1 }
            }
        }
    }
    assert!(rule_wins >= 2 * random_wins, "rule {rule_wins} vs random {random_wins}");
}

#[test]
fn overrides_change_the_start_and_bad_ones_are_errors() {
    let opts = CompileOptions { overrides: vec![("red1.maxHp".into(), 7.0)], ..Default::default() };
    let game = arena_with(&opts).unwrap();
    let st = game.initial().unwrap();
    let red1 = game.program.gods.iter().position(|g| g.name == "red1").unwrap();
    let hp = game.program.classes[game.program.gods[red1].class as usize].attrs.iter().position(|a| a.name == "hp").unwrap();
    assert_eq!(st.slots[st.objects[0].base as usize + hp], 7);
    let e = arena_with(&CompileOptions { overrides: vec![("red1.maxHp".into(), 101.0)], ..Default::default() }).unwrap_err();
    assert!(e.contains("red1.maxHp = 101 is outside 1 to 100"), "{e}");
    let e = arena_with(&CompileOptions { overrides: vec![("red1.maxAp".into(), 2.5)], ..Default::default() }).unwrap_err();
    assert!(e.contains("whole number"), "{e}");
    let e = arena_with(&CompileOptions { overrides: vec![("red9.maxHp".into(), 5.0)], ..Default::default() }).unwrap_err();
    assert!(e.contains("unknown parameter (override) `red9.maxHp`"), "{e}");
    // A constraint is checked on the start state, not at compile time.
    let opts = CompileOptions { overrides: vec![("red1.maxAp".into(), 1.0)], ..Default::default() };
    let game = arena_with(&opts).unwrap();
    let bad = game.program.violated_constraints(&game.initial().unwrap()).unwrap();
    assert_eq!(bad, ["red1a.cost <= red1.maxAp", "red1b.cost <= red1.maxAp"]);
}

/// Compiles `src` next to a map file holding `map`; returns the rendered errors.
fn with_map(src: &str, map: &str) -> String {
    let dir = std::env::temp_dir().join(format!("playforge-map-{}-{}", std::process::id(), src.len() + map.len()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("m.hexmap"), map).unwrap();
    std::fs::write(dir.join("g.wgdl"), src).unwrap();
    let r = wgdl::load(&dir.join("g.wgdl"));
    std::fs::remove_dir_all(&dir).ok();
    match r {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

const SMALL: &str = "players a b\nclass m\nattribute m side long 0\nattribute m pos long 0\nobject x is m\ninitial x\nturn m side\nhexmap \"m.hexmap\"\nhexOccupants m pos side\nwinner a x.pos == 3\n";

#[test]
fn malformed_maps_name_the_map_file_line_and_column() {
    assert_eq!(with_map(SMALL, "radius 1\n . .\n. A B\n . .\n"), "");
    let e = with_map(SMALL, "radius 1\n . .\n. A ?\n . .\n");
    assert!(e.contains("m.hexmap:3:5") && e.contains("found `?`"), "{e}");
    let e = with_map(SMALL, "radius 1\n . .\n. A B\n");
    assert!(e.contains("3 rows for radius 1, found 2"), "{e}");
    let e = with_map(SMALL, "radius 1\n . . .\n. A B\n . .\n");
    assert!(e.contains("m.hexmap:2:6") && e.contains("one too many"), "{e}");
    let e = with_map(&SMALL.replace("m.hexmap", "missing.hexmap"), "radius 1\n . .\n. A B\n . .\n");
    assert!(e.contains("cannot read hex map"), "{e}");
}

#[test]
fn bad_policies_and_filters_are_errors() {
    let base = "players a b\nclass m\nattribute m side long 0\nobject x is m\ninitial x\nturn m side\naction m go\nconsequence e endTurn\nhasConsequence go e\nwinner a game.turns > 3\n";
    let e = util::compile_err(&format!("{base}policy p goo first\n")).to_string();
    assert!(e.contains("unknown action `goo`"), "{e}");
    let e = util::compile_err(&format!("{base}policy p go best\n")).to_string();
    assert!(e.contains("how to pick: first, random, weight <expr> or max <expr>"), "{e}");
    let e = util::compile_err(&format!("{base}policy p go weight this.side == 1\n")).to_string();
    assert!(e.contains("expected a number (long or double)"), "{e}");
    let e = util::compile_err(&format!("{base}lastResort go -1\n")).to_string();
    assert!(e.contains("a whole number ≥ 0"), "{e}");
    let e = util::compile_err(&format!("{base}winner c game.turns > 3\n")).to_string();
    assert!(e.contains("unknown player `c`"), "{e}");
    let e = util::compile_err(
        "class m\nattribute m side long 0\nobject x is m\ninitial x\naction m go\nconsequence e endTurn\nhasConsequence go e\n",
    )
    .to_string();
    assert!(e.contains("`endTurn` in a game without turns"), "{e}");
    // A policy plays: `first` takes the first move in legal order.
    let c = util::compile(&format!("{base}policy p go first\n"));
    let g = WgdlGame::new(c.program);
    let st = g.initial().unwrap();
    let mut rng = playforge::rng::stream(1, 0, 0, 0);
    let m = g.program.policy_move(&st, 0, &mut rng, &mut Vec::new()).unwrap().unwrap();
    assert_eq!(g.program.action_name(&st, m), "go(x)");
}

#[test]
fn recorded_games_replay_turn_by_turn() {
    use playforge::experiment::tournament::replay;
    use playforge::players::Replay;
    let dir = std::env::temp_dir().join(format!("playforge-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let game = arena_with(&CompileOptions::default()).unwrap();
    let rule = Agent::Policy(game.program.policy_index("rule").unwrap());
    let mut rng = playforge::rng::stream(5, 0, 0, 0);
    let mut st = game.initial().unwrap();
    let (mut legal, mut moves) = (Vec::new(), Vec::new());
    loop {
        game.legal(&st, &mut legal).unwrap();
        if game.status(&st, &legal) != Status::Running {
            break;
        }
        let m = choose(&game, &rule, &st, &legal, &mut rng).unwrap();
        moves.push(game.program.action_name(&st, m));
        game.apply(&mut st, m).unwrap();
    }
    let rep = Replay {
        game: arena_path(),
        turn_order: None,
        params: vec![],
        players: vec!["Rule".into(), "Rule".into()],
        moves,
        result: String::new(),
        chance_seed: 0,
        overlays: vec![],
    };
    let file = dir.join("r.json");
    std::fs::write(&file, serde_json::to_string(&rep).unwrap()).unwrap();
    let mut out = Vec::new();
    replay(&file, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("— round 1, turn 1: red1 (red) —"), "{text}");
    assert!(text.contains("R1 = red1 (hp 60, ap 12)"), "{text}");
    assert_eq!(text.matches("— round").count() as u32, st.turns + 1, "a header per turn played (the last turn ends the game)");
    // A move that does not fit the game is an error naming the move.
    let mut bad = rep.clone();
    bad.moves.insert(0, "endTurn(blue2)".into());
    std::fs::write(&file, serde_json::to_string(&bad).unwrap()).unwrap();
    let e = replay(&file, &mut Vec::new()).unwrap_err().to_string();
    assert!(e.contains("move 1 `endTurn(blue2)` is not legal here"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `choose hide 3 by hex.walk(this.pos, h)` with free, hidden and walk-bound conditions is
/// generated from one bit set of the cells that are free and hidden; with the bit set turned
/// off the general walk-order loop lists the same moves, on random games with random
/// parameters. A walk bound whose operand can fail (checked `-`) keeps the general loop.
#[test]
fn walk_ordered_moves_from_bit_sets_are_the_general_loops() {
    use rand::RngExt;
    let c = util::game("hex_arena.wgdl");
    let hide = c.program.actions.iter().position(|a| a.name == "hide").expect("hide");
    assert!(c.program.actions[hide].walk_order.as_ref().is_some_and(|w| w.bits), "hide is generated from bits");
    let src = std::fs::read_to_string(arena_path())
        .unwrap()
        .replace("condition hide hex.walk(this.pos, h) <= this.ap", "condition hide hex.walk(this.pos, h) <= this.ap - 1");
    let opts = CompileOptions { base_dir: Some(arena_path().parent().unwrap().to_path_buf()), ..Default::default() };
    let minus = wgdl::compile_str_with("hex_arena.wgdl", &src, &opts).unwrap_or_else(|e| panic!("{e}")).program;
    assert!(minus.actions[hide].walk_order.as_ref().is_some_and(|w| !w.bits), "`this.ap - 1` can overflow");
    let mut rng = playforge::rng::stream(3, 0, 0, 0);
    let mut lists = 0;
    for game in 0..30u64 {
        // Random parameters within their ranges (those of the file for the first games).
        let values: Vec<f64> = c
            .program
            .params
            .iter()
            .map(|p| if game < 5 { p.value } else { rng.random_range(p.min as i64..=p.max as i64) as f64 })
            .collect();
        let Ok(bits) = c.program.with_parameters(&values) else { continue };
        let mut general = bits.clone();
        if let Some(w) = general.actions[hide].walk_order.as_mut() {
            w.bits = false;
        }
        let mut st = bits.initial_state().unwrap();
        for _ in 0..200 {
            let (a, b) = (util::legal(&bits, &st), util::legal(&general, &st));
            assert_eq!(a, b, "game {game}, move {}", st.moves);
            lists += 1;
            if a.is_empty() {
                break;
            }
            bits.apply(&mut st, a[rng.random_range(0..a.len())]).unwrap();
        }
    }
    assert!(lists > 1000, "{lists} move lists compared");
}
