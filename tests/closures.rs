//! The closure compiler (src/wgdl/run/fast/) against the bytecode it is compiled from: on random
//! states of every shipped game (the stacker under each of its overlays, the hex arena also with
//! random parameters), every expression that can run there gives the same value or the same
//! error both ways, and every consequence leaves the same state. Also: re-checking outcomes and
//! goals only where a move wrote (src/wgdl/run/deps.rs) never misses one that a full check sees.

use crate::util;
use playforge::game::{Game, WgdlGame};
use playforge::wgdl::{self, CompileOptions, Program, Status};
use rand::{RngExt, SeedableRng};
use std::path::Path;
use std::sync::Arc;

/// Plays `games` random games of up to `moves` moves and compares every expression in every
/// state reached; returns how many evaluations were compared.
fn compare_on_random_play(p: &Arc<Program>, games: u64, moves: u32) -> usize {
    let g = WgdlGame::new(p.clone());
    let mut compared = 0;
    let mut legal = Vec::new();
    for seed in 0..games {
        let g = g.clone().with_seed(seed);
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut st = g.initial().expect("initial state");
        for _ in 0..moves {
            let (n, bad) = p.closure_mismatches(&st);
            assert!(bad.is_empty(), "seed {seed}, move {}:\n{}", st.moves, bad.join("\n"));
            let missed = p.missed_check(&st).expect("goals and outcomes evaluate");
            assert_eq!(missed, None, "seed {seed}, move {}: a line holds that the move did not record", st.moves);
            compared += n;
            g.legal(&st, &mut legal).expect("legal");
            if g.status(&st, &legal) != Status::Running {
                break;
            }
            let m = legal[rng.random_range(0..legal.len())];
            g.apply(&mut st, m).expect("apply");
        }
    }
    compared
}

#[test]
fn closures_agree_with_bytecode_on_every_shipped_game() {
    for (name, games, moves) in [
        ("simple_coins.wgdl", 5, 80),
        ("magic_land.wgdl", 5, 150),
        ("connect_four.wgdl", 20, 42),
        ("hex_arena.wgdl", 10, 200),
        ("match3.wgdl", 5, 20),
    ] {
        let p = util::game(name).program;
        let n = compare_on_random_play(&p, games, moves);
        assert!(n > 1000, "{name}: only {n} evaluations compared");
    }
}

/// The compiled tier (feature `compiled`): the same comparison with generated code where it
/// covers an expression, and a check that it did generate some.
#[cfg(feature = "compiled")]
#[test]
fn compiled_tier_agrees_with_bytecode_on_every_shipped_game() {
    // Every covered expression generated, however small, so that all of them are compared.
    wgdl::set_compiled_min_nodes(1);
    let (seen0, made0) = wgdl::compiled_functions();
    for (name, games, moves) in [
        ("simple_coins.wgdl", 5, 80),
        ("magic_land.wgdl", 5, 150),
        ("connect_four.wgdl", 20, 42),
        ("hex_arena.wgdl", 10, 200),
        ("match3.wgdl", 5, 20),
        ("stacker.wgdl", 5, 60),
        ("tictactoe.wgdl", 10, 9),
    ] {
        let (s0, m0) = wgdl::compiled_functions();
        let p = Arc::new(util::game(name).program.with_tier(wgdl::Tier::Compiled));
        let n = compare_on_random_play(&p, games, moves);
        assert!(n > 100, "{name}: only {n} evaluations compared");
        let (s1, m1) = wgdl::compiled_functions();
        eprintln!("{name}: {} of {} expressions generated", m1 - m0, s1 - s0);
    }
    let (seen, made) = wgdl::compiled_functions();
    assert!(made - made0 > (seen - seen0) / 2, "only {} of {} expressions generated", made - made0, seen - seen0);
    // Errors in generated code: overflow, division by zero, off the grid — the same errors,
    // with their spans, as the interpreter's.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wgdl/err");
    for (case, want) in [("rt_overflow", "overflow"), ("rt_overflow_product", "overflow"), ("rt_division_by_zero", "division by zero")] {
        let p = wgdl::load(&dir.join(format!("{case}.wgdl"))).unwrap_or_else(|e| panic!("{e}")).program.with_tier(wgdl::Tier::Compiled);
        let st = p.initial_state().unwrap();
        let (n, bad) = p.closure_mismatches(&st);
        assert!(n > 0 && bad.is_empty(), "{case}: {bad:?}");
        let mut legal = Vec::new();
        p.legal_actions(&st, &mut legal).unwrap();
        let err = p.apply(&mut st.clone(), legal[0]).expect_err("the consequence fails");
        let interpreted = wgdl::load(&dir.join(format!("{case}.wgdl"))).unwrap().program;
        let same = interpreted.apply(&mut interpreted.initial_state().unwrap(), legal[0]).expect_err("fails");
        assert!(err.to_string().contains(want) && err.to_string() == same.to_string(), "{case}: {err} / {same}");
    }
}

#[test]
fn closures_agree_with_bytecode_under_overlays_and_parameters() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("games");
    for overlay in ["greedy", "lazy", "monochrome", "tenacious", "tiny"] {
        let opts = CompileOptions { overlays: vec![overlay.into()], ..CompileOptions::default() };
        let p = wgdl::load_with(&root.join("stacker.wgdl"), &opts).unwrap_or_else(|e| panic!("{e}")).program;
        assert!(compare_on_random_play(&p, 3, 60) > 100, "stacker + {overlay}");
    }
    for style in ["horizontal", "bottom"] {
        let opts = CompileOptions { overlays: vec![style.into()], ..CompileOptions::default() };
        let p = wgdl::load_with(&root.join("match3.wgdl"), &opts).unwrap_or_else(|e| panic!("{e}")).program;
        assert!(compare_on_random_play(&p, 2, 20) > 100, "match3 + {style}");
    }
    // The arena with random encounters: abilities with areas, debuffs and cooldowns.
    let base = util::game("hex_arena.wgdl").program;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
    for _ in 0..6 {
        let overrides: Vec<(String, f64)> = base
            .params
            .iter()
            .map(|p| {
                let v = p.min + rng.random::<f64>() * (p.max - p.min);
                (p.name.clone(), if p.integer { v.round() } else { v })
            })
            .collect();
        let opts = CompileOptions { overrides, ..CompileOptions::default() };
        let p = wgdl::load_with(&root.join("hex_arena.wgdl"), &opts).unwrap_or_else(|e| panic!("{e}")).program;
        assert!(compare_on_random_play(&p, 2, 150) > 100);
    }
    // The same through `with_parameters` on a program that has run already: consequences
    // decided on class constants (`this.dotLife != 0`) are decided again for the new values.
    assert!(compare_on_random_play(&base, 2, 150) > 100);
    for _ in 0..4 {
        let values: Vec<f64> = base
            .params
            .iter()
            .map(|p| {
                let v = p.min + rng.random::<f64>() * (p.max - p.min);
                if p.integer { v.round() } else { v }
            })
            .collect();
        let p = Arc::new(base.with_parameters(&values).expect("values in range"));
        assert!(compare_on_random_play(&p, 2, 150) > 100);
    }
}

/// Overflow and division by zero are the same error through both evaluators: the golden error
/// games' first consequences, evaluated by closure and by bytecode, agree (errors included),
/// and the closure's answer is the error.
#[test]
fn closures_and_bytecode_agree_on_arithmetic_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wgdl/err");
    for (case, want) in [("rt_overflow", "overflow"), ("rt_overflow_product", "overflow"), ("rt_division_by_zero", "division by zero")] {
        let p = wgdl::load(&dir.join(format!("{case}.wgdl"))).unwrap_or_else(|e| panic!("{e}")).program;
        let st = p.initial_state().unwrap();
        let (n, bad) = p.closure_mismatches(&st);
        assert!(n > 0 && bad.is_empty(), "{case}: {bad:?}");
        let mut legal = Vec::new();
        p.legal_actions(&st, &mut legal).unwrap();
        let mut next = st.clone();
        let err = p.apply(&mut next, legal[0]).expect_err("the consequence fails");
        assert!(err.to_string().contains(want), "{case}: {err}");
    }
}

/// The closures built for operand kinds (`src/wgdl/run/fast/spec.rs`) read what the bytecode
/// reads, errors included: a grid cell at the bound number and a constant row, a grid line from
/// the bound number and `this`'s row, and `this.ref.attr` — in conditions, where the number
/// runs off the grid and the reference is null, and in consequences, whose written values
/// differ if any of them reads the wrong slot.
#[test]
fn closures_built_for_operand_kinds_agree_with_bytecode_off_grid_and_on_null() {
    let src = "grid g 3 2\nclass p\nattribute p row long 0\nattribute p v long 0\nattribute p ref object:p null\n\
               object a is p\nobject b is p\nattribute b row 1\nattribute b v 5\nattribute a ref object:b\ninitial a\ninitial b\n\
               action p act forEveryNumber n 0 4\ncondition act g[n, 0] < 6\ncondition act g.line(n, this.row, 1, 0) >= 0\n\
               condition act this.ref.v >= this.v\nconsequence bump direct g[n, 0] = g[n, 0] + 1\nhasConsequence act bump\n\
               consequence tally direct this.v = (g.line(n, this.row, 1, 0) * 1) + (this.ref.v * 1)\nhasConsequence act tally\n\
               goal 1 g[0, 0] > 3\n";
    let p = wgdl::compile_str("kinds.wgdl", src).unwrap_or_else(|e| panic!("{e}")).program;
    let mut st = p.initial_state().unwrap();
    // Different values in the cells read: column 0 holds 2, column 1 holds 1.
    for bound in [0, 0, 1] {
        p.apply(&mut st, wgdl::Action { def: 0, this: 0, bound }).unwrap();
    }
    let (n, bad) = p.closure_mismatches(&st);
    assert!(n >= 6 && bad.is_empty(), "{n} expressions checked; {bad:?}");
    let mut legal = Vec::new();
    let err = p.legal_actions(&st, &mut legal).expect_err("n = 3 is off the grid");
    assert!(err.to_string().contains("off grid"), "{err}");
}

/// Row scans (`RowScan`: `g[n, k] OP literal` over `forEveryNumber n`, listed in one pass along
/// the row) list the numbers whose conditions hold through the closures: every comparison, two
/// rows, a range not starting at 0, random boards; and a range that runs off the grid is no
/// scan — the generic path reports the cell.
#[test]
fn row_scans_list_the_numbers_whose_conditions_hold() {
    let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
    for op in ["==", "!=", "<", "<=", ">", ">="] {
        for row in [0, 2] {
            let src = format!(
                "grid g 5 3\nclass p\nobject me is p\ninitial me\naction p pick forEveryNumber n 1 4\ncondition pick g[n, {row}] {op} 2\n"
            );
            let p = wgdl::compile_str("scan.wgdl", &src).unwrap_or_else(|e| panic!("{e}")).program;
            let base = p.grids[0].base as usize;
            for _ in 0..40 {
                let mut st = p.initial_state().unwrap();
                for v in &mut st.slots[base..base + 15] {
                    *v = r.random_range(0..5);
                }
                st.touch();
                let listed: Vec<u32> = util::legal(&p, &st).iter().map(|a| a.bound).collect();
                let holding: Vec<u32> = (1..=4).filter(|&n| p.is_legal(&st, wgdl::Action { def: 0, this: 0, bound: n }).unwrap()).collect();
                assert_eq!(listed, holding, "g[n, {row}] {op} 2 on {:?}", &st.slots[base..base + 15]);
            }
        }
    }
    let src = "grid g 5 3\nclass p\nobject me is p\ninitial me\naction p pick forEveryNumber n 0 5\ncondition pick g[n, 0] < 2\n";
    let p = wgdl::compile_str("off.wgdl", src).unwrap_or_else(|e| panic!("{e}")).program;
    let st = p.initial_state().unwrap();
    let err = p.legal_actions(&st, &mut Vec::new()).expect_err("n = 5 is off the grid");
    assert!(err.to_string().contains("off grid"), "{err}");
}

/// A `countOf` compared with zero stops at the first object that counts only when its
/// condition cannot fail: every comparison with 0 and 1 gives the bytecode's full count's
/// answer, and a condition that fails on a later object (a null reference) is still the error.
#[test]
fn counts_compared_with_zero_stop_early_only_when_nothing_can_fail() {
    let tests = ["== 0", "!= 0", "> 0", ">= 1", "<= 0", "< 1", "== 1", "> 1"];
    let head = "class p\nattribute p hp long 1\nattribute p ref object:p null\n\
                object a is p\nobject b is p\nattribute b hp 0\nobject c is p\nattribute a ref object:b\n\
                initial a\ninitial b\ninitial c\n";
    // A game that deletes objects reads attributes through the object (`BoundObj, Field`).
    let deletes = "action p gone\nconsequence goneNow delete this\nhasConsequence gone goneNow\n";
    for ((pred, fails), tail) in
        [("q.hp > 0", false), ("q.hp > 5", false), ("q.ref.hp >= 0", true)].into_iter().flat_map(|c| [(c, ""), (c, deletes)])
    {
        let mut src = format!("{head}{tail}");
        for (i, t) in tests.iter().enumerate() {
            src += &format!("action p t{i}\ncondition t{i} countOf(p, {pred}) {t}\n");
        }
        let src = src.replace("countOf(p, q.", "countOf(p, p.");
        let p = wgdl::compile_str("counts.wgdl", &src).unwrap_or_else(|e| panic!("{e}")).program;
        let st = p.initial_state().unwrap();
        let (n, bad) = p.closure_mismatches(&st);
        assert!(n >= tests.len() && bad.is_empty(), "{pred}: {n} expressions checked; {bad:?}");
        let mut legal = Vec::new();
        match p.legal_actions(&st, &mut legal) {
            Err(e) => assert!(fails && e.to_string().contains("null"), "{pred}: {e}"),
            Ok(()) => assert!(!fails, "{pred}: b's null reference is read by the full count"),
        }
    }
}
