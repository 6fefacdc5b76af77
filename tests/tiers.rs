//! The two tiers in lockstep (cargo feature `compiled`; without it this module is empty): every
//! shipped game, the stacker under each overlay, and random parameter vectors of every game that
//! declares parameters, played by the same random moves through the interpreted and the compiled
//! tier, comparing legal lists, statuses and whole states move for move (errors included: both
//! tiers must fail at the same move with the same message). Parameter vectors are written into
//! copies of one program per tier, as balance and generate do, so that generated code shared by
//! the copies is held to each vector.

#[cfg(feature = "compiled")]
pub(crate) mod lockstep {
    use crate::util;
    use playforge::wgdl::{self, CompileOptions, Program, State, Status, Tier};
    use rand::{RngExt, SeedableRng};
    use std::path::Path;

    /// Plays `games` random games of at most `moves` moves on both tiers; returns the moves
    /// compared. Panics, naming `what`, the seed and the move, where the tiers part (the fuzz
    /// campaign's compiled-tier run calls it on mutated games).
    pub(crate) fn lockstep(interp: &Program, compiled: &Program, games: u64, moves: usize, what: &str) -> usize {
        assert_eq!(interp.fast.tier(), Tier::Interpreted);
        assert_eq!(compiled.fast.tier(), Tier::Compiled);
        let mut compared = 0;
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        for seed in 0..games {
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
            let (a, b) = (interp.initial_state_seeded(seed), compiled.initial_state_seeded(seed));
            let (mut a, mut b): (State, State) = match (a, b) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(x), Err(y)) => {
                    assert_eq!(x.to_string(), y.to_string(), "{what}, seed {seed}: the start fails differently");
                    continue;
                }
                (x, y) => panic!("{what}, seed {seed}: one tier starts, the other does not: {:?} / {:?}", x.err(), y.err()),
            };
            for step in 0..moves {
                assert!(a == b, "{what}, seed {seed}, move {step}: the states differ");
                let (ra, rb) = (interp.legal_actions(&a, &mut la), compiled.legal_actions(&b, &mut lb));
                match (ra, rb) {
                    (Ok(()), Ok(())) => {}
                    (Err(x), Err(y)) => {
                        assert_eq!(x.to_string(), y.to_string(), "{what}, seed {seed}, move {step}");
                        break;
                    }
                    (x, y) => panic!("{what}, seed {seed}, move {step}: {x:?} / {y:?}"),
                }
                assert_eq!(la, lb, "{what}, seed {seed}, move {step}: the legal lists differ");
                let status = interp.status(&a, &la);
                assert_eq!(status, compiled.status(&b, &lb), "{what}, seed {seed}, move {step}: the statuses differ");
                if status != Status::Running {
                    break;
                }
                let m = la[rng.random_range(0..la.len())];
                match (interp.apply(&mut a, m), compiled.apply(&mut b, m)) {
                    (Ok(()), Ok(())) => compared += 1,
                    (Err(x), Err(y)) => {
                        assert_eq!(x.to_string(), y.to_string(), "{what}, seed {seed}, move {step}");
                        break;
                    }
                    (x, y) => panic!("{what}, seed {seed}, move {step}: {x:?} / {y:?}"),
                }
            }
        }
        compared
    }

    fn both(p: &Program) -> (Program, Program) {
        (p.with_tier(Tier::Interpreted), p.with_tier(Tier::Compiled))
    }

    #[test]
    fn every_shipped_game_plays_the_same_on_both_tiers() {
        wgdl::set_compiled_min_nodes(1);
        for (name, games, moves) in [
            ("simple_coins.wgdl", 10, 200),
            ("magic_land.wgdl", 6, 400),
            ("connect_four.wgdl", 40, 42),
            ("tictactoe.wgdl", 40, 9),
            ("hex_arena.wgdl", 20, 300),
            ("match3.wgdl", 10, 20),
            ("stacker.wgdl", 10, 100),
        ] {
            let (a, b) = both(&util::game(name).program);
            let n = lockstep(&a, &b, games, moves, name);
            assert!(n > 50, "{name}: only {n} moves compared");
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("games");
        for overlay in ["greedy", "lazy", "monochrome", "tenacious", "tiny"] {
            let opts = CompileOptions { overlays: vec![overlay.into()], ..CompileOptions::default() };
            let p = wgdl::load_with(&root.join("stacker.wgdl"), &opts).unwrap_or_else(|e| panic!("{e}")).program;
            let (a, b) = both(&p);
            lockstep(&a, &b, 5, 100, &format!("stacker +{overlay}"));
        }
    }

    /// 1 000 random parameter vectors of every shipped game that declares parameters (each
    /// game's moves per vector chosen to keep the test near ten seconds).
    #[test]
    fn random_parameter_vectors_play_the_same_on_both_tiers() {
        wgdl::set_compiled_min_nodes(1);
        let mut games: Vec<String> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("games"))
            .expect("games/")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".wgdl"))
            .collect();
        games.sort();
        let mut with_params = Vec::new();
        for name in &games {
            let moves = match name.as_str() {
                "match3.wgdl" => 10,
                "magic_land.wgdl" => 40,
                _ => 60,
            };
            let vectors = 1000;
            let p = util::game(name).program;
            if p.params.is_empty() {
                continue;
            }
            with_params.push(name.clone());
            // Each tier's program once; a vector is written into copies that share its code
            // (parameters are read at run time, never baked into generated code).
            let (ta, tb) = both(&p);
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(45);
            let (mut played, mut tried) = (0, 0);
            for k in 0..vectors {
                let values: Vec<f64> = p
                    .params
                    .iter()
                    .map(|q| {
                        let v = q.min + rng.random::<f64>() * (q.max - q.min);
                        if q.integer { v.round().clamp(q.min, q.max) } else { v }
                    })
                    .collect();
                tried += 1;
                let (Ok(a), Ok(b)) = (ta.with_parameters(&values), tb.with_parameters(&values)) else { continue };
                played += lockstep(&a, &b, 1, moves, &format!("{name}, vector {k}"));
            }
            assert!(played > tried, "{name}: {played} moves over {tried} vectors");
        }
        // The games the issue names, and any added since.
        for name in ["hex_arena.wgdl", "magic_land.wgdl", "match3.wgdl", "stacker.wgdl"] {
            assert!(with_params.iter().any(|g| g == name), "{name} declares parameters");
        }
    }
}
