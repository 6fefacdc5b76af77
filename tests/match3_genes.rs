//! Match-3's start layout and tile stream as evolvable content (games/match3.wgdl's `me.weight1`
//! … `me.weight9` and `me.layout`; games/README.md §9.12 and §9.14): at their defaults the game
//! is the one before they existed, draw for draw; a layout number fixes the start board whatever
//! the game's seed; weights tilt the deal and the refills, a weight of 0 switches a colour off;
//! the built-ins' optional arguments (`refill(n, w1, …)`, `deal(n, min, seed, w1, …)`) on a
//! small board of their own; and their wrong forms are compile errors with file:line:column.

use crate::util;
use playforge::game::{Game, WgdlGame};
use playforge::wgdl::{self, Action, CompileOptions, DiagKind, Program, State, Status};
use rand::RngExt;
use std::sync::Arc;

fn match3_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games/match3.wgdl")
}

/// Match-3 with parameter overrides.
fn match3(overrides: &[(&str, f64)]) -> Arc<Program> {
    let opts = CompileOptions { overrides: overrides.iter().map(|(k, v)| (k.to_string(), *v)).collect(), ..CompileOptions::default() };
    wgdl::load_with(&match3_path(), &opts).unwrap_or_else(|e| panic!("{e}")).program
}

/// games/match3.wgdl as it was before the weights and the layout: the same text with the
/// built-ins called in their old forms (the new constants and parameters are then unused).
fn match3_without_genes() -> Arc<Program> {
    let mut src = std::fs::read_to_string(match3_path()).unwrap();
    let weights = |of: &str| (1..=9).map(|c| format!(", {of}.weight{c}")).collect::<String>();
    for (new, old) in [
        (format!("board.deal(this.colours, 3, this.layout{})", weights("this")), "board.deal(this.colours, 3)"),
        (format!("board.refill(me.colours{})", weights("me")), "board.refill(me.colours)"),
        (format!("board.deal(me.colours, 3, 0{})", weights("me")), "board.deal(me.colours, 3)"),
    ] {
        assert_eq!(src.matches(&new).count(), 1, "games/match3.wgdl no longer calls `{new}`");
        src = src.replace(&new, old);
    }
    wgdl::compile_str("old_match3.wgdl", &src).unwrap_or_else(|d| panic!("{d}")).program
}

/// The 49 cells of the board.
fn cells(p: &Program, st: &State) -> Vec<i64> {
    let base = p.grids[0].base as usize;
    st.slots[base..base + 49].to_vec()
}

/// The start state of the game with chance seed `seed`.
fn start(p: &Arc<Program>, seed: u64) -> State {
    WgdlGame::new(p.clone()).with_seed(seed).initial().unwrap_or_else(|e| panic!("{}", e.render(p)))
}

/// Plays seeded random games of `p`, calling `seen` on every state (the start and after every
/// move).
fn play(p: &Arc<Program>, seeds: std::ops::Range<u64>, mut seen: impl FnMut(u64, &State)) {
    for seed in seeds {
        let g = WgdlGame::new(p.clone()).with_seed(seed);
        let mut st = g.initial().unwrap();
        seen(seed, &st);
        let mut rng = playforge::rng::stream(seed, 3, 0, 0);
        let mut legal: Vec<Action> = Vec::new();
        loop {
            g.legal(&st, &mut legal).unwrap();
            if g.status(&st, &legal) != Status::Running {
                break;
            }
            g.apply(&mut st, legal[rng.random_range(0..legal.len())]).unwrap_or_else(|e| panic!("{}", e.render(p)));
            seen(seed, &st);
        }
    }
}

/// Plays the same seeded random games through `a` and `b` and asserts that they stay equal:
/// every slot, the chance stream and the legal moves, after every move.
fn same_games(a: &Arc<Program>, b: &Arc<Program>, games: u64, what: &str) {
    for seed in 0..games {
        let (ga, gb) = (WgdlGame::new(a.clone()).with_seed(seed), WgdlGame::new(b.clone()).with_seed(seed));
        let (mut sa, mut sb) = (ga.initial().unwrap(), gb.initial().unwrap());
        let mut rng = playforge::rng::stream(seed, 4, 0, 0);
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        for k in 0.. {
            assert_eq!(sa.slots, sb.slots, "{what}: seed {seed}, after move {k}: the states differ");
            assert_eq!(sa.rng, sb.rng, "{what}: seed {seed}, after move {k}: the chance streams differ");
            ga.legal(&sa, &mut la).unwrap();
            gb.legal(&sb, &mut lb).unwrap();
            assert_eq!(la, lb, "{what}: seed {seed}, after move {k}: the legal moves differ");
            if ga.status(&sa, &la) != Status::Running {
                assert_eq!(k, 20);
                break;
            }
            let i = rng.random_range(0..la.len());
            ga.apply(&mut sa, la[i]).unwrap();
            gb.apply(&mut sb, lb[i]).unwrap();
        }
    }
}

#[test]
fn the_new_parameters_are_declared_with_their_ranges_and_defaults() {
    let p = match3(&[]);
    let params: Vec<(String, f64, f64, bool)> = p.params.iter().map(|q| (q.name.clone(), q.min, q.max, q.integer)).collect();
    // The old parameters keep their places (configs and the Python API address them by index).
    assert_eq!(params[0], ("me.colours".into(), 3.0, 9.0, true));
    assert_eq!(params[1], ("me.maxMoves".into(), 1.0, 100.0, true));
    for c in 1..=9 {
        let low = if c <= 3 { 1.0 } else { 0.0 };
        assert_eq!(params[1 + c], (format!("me.weight{c}"), low, 10.0, true));
    }
    assert_eq!(params[11], ("me.layout".into(), 0.0, 1_000_000.0, true));
    assert_eq!(params.len(), 12);
    // Every parameter at its default: the file's own program, and no constraint to break.
    let defaults: Vec<f64> = p.params.iter().map(|q| q.value).collect();
    assert_eq!(&defaults[2..], &[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
    assert!(p.violated_constraints(&start(&p, 0)).unwrap().is_empty());
}

#[test]
fn at_their_defaults_the_genes_change_no_draw() {
    // Against the file with the built-ins in their old forms: every slot, the stream and the
    // legal moves, move for move (the native twin checks the same in tests/match3.rs).
    let old = match3_without_genes();
    same_games(&match3(&[]), &old, 300, "defaults");
    // Equal weights draw as none, whatever their value.
    let sevens: Vec<(String, f64)> = (1..=9).map(|c| (format!("me.weight{c}"), 7.0)).collect();
    let sevens: Vec<(&str, f64)> = sevens.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    same_games(&match3(&sevens), &old, 100, "all weights 7");
    // 9 colours, where deadlocks are common: the redeal's call too.
    let nine = [("me.colours", 9.0)];
    let old_nine = Arc::new(
        old.with_parameters(&old.params.iter().map(|q| if q.name == "me.colours" { 9.0 } else { q.value }).collect::<Vec<_>>()).unwrap(),
    );
    same_games(&match3(&nine), &old_nine, 100, "9 colours");
    // Weights past the colours in play do not count: 6 colours of weight 2, colours 7–9 at 10.
    let tail: Vec<(String, f64)> = (1..=9).map(|c| (format!("me.weight{c}"), if c <= 6 { 2.0 } else { 10.0 })).collect();
    let tail: Vec<(&str, f64)> = tail.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    same_games(&match3(&tail), &old, 50, "weights past the colours in play");
}

#[test]
fn a_layout_deals_one_start_board_whatever_the_game_seed() {
    let boards = |layout: f64| -> Vec<Vec<i64>> {
        let p = match3(&[("me.layout", layout)]);
        (0..8)
            .map(|seed| {
                let st = start(&p, seed);
                // A proper start: tiles 1 … 6, no run, a legal move.
                let b = cells(&p, &st);
                assert!(b.iter().all(|&c| (1..=6).contains(&c)) && !has_run(&b), "layout {layout}, seed {seed}: {b:?}");
                assert!(!util::legal(&p, &st).is_empty(), "layout {layout}, seed {seed}: no legal move");
                b
            })
            .collect()
    };
    let mut firsts = Vec::new();
    for layout in [1.0, 2.0, 3.0, 777.0, 1_000_000.0] {
        let b = boards(layout);
        assert!(b.iter().all(|x| *x == b[0]), "layout {layout}: the start board depends on the game seed");
        assert!(!firsts.contains(&b[0]), "layout {layout} deals the board of another layout");
        firsts.push(b[0].clone());
    }
    // Layout 0: the game's stream, a board per seed as before.
    let b = boards(0.0);
    assert!(b.iter().skip(1).all(|x| *x != b[0]), "layout 0 must deal from the game's stream");
    // Layout k deals from the word mix(mix(k)): the board of the game with chance seed mix(k)
    // and layout 0. The game's own stream is untouched by the deal.
    let (laid, plain) = (match3(&[("me.layout", 777.0)]), match3(&[]));
    let k = playforge::rng::mix(777);
    assert_eq!(cells(&laid, &start(&laid, 5)), cells(&plain, &start(&plain, k)));
    for seed in 0..8 {
        assert_eq!(start(&laid, seed).rng, playforge::rng::mix(seed), "seed {seed}: the deal drew from the game's stream");
    }
    // Refills still come from the game's stream: the same first move on one board refills
    // differently under different seeds.
    let after_first_move: Vec<Vec<i64>> = (0..8)
        .map(|seed| {
            let g = WgdlGame::new(laid.clone()).with_seed(seed);
            let mut st = g.initial().unwrap();
            let mut legal = Vec::new();
            g.legal(&st, &mut legal).unwrap();
            g.apply(&mut st, legal[0]).unwrap();
            cells(&laid, &st)
        })
        .collect();
    let distinct: std::collections::HashSet<_> = after_first_move.iter().collect();
    assert!(distinct.len() > 1, "every seed refilled the same tiles");
}

/// Whether a 7 × 7 board has a run of 3 equal tiles across or up.
fn has_run(b: &[i64]) -> bool {
    (0..49).any(|i| {
        let (x, y) = (i % 7, i / 7);
        (x < 5 && b[i] == b[i + 1] && b[i] == b[i + 2]) || (y < 5 && b[i] == b[i + 7] && b[i] == b[i + 14])
    })
}

/// How often each tile value 0 … 9 occurs in `cells`.
fn tally(into: &mut [u64; 10], cells: &[i64]) {
    for &c in cells {
        into[c as usize] += 1;
    }
}

#[test]
fn weights_favouring_one_colour_deal_and_refill_mostly_that_colour() {
    // Colour 2 weighs 10, the other five 1: 2/3 of the draws.
    let p = match3(&[("me.weight2", 10.0)]);
    let mut dealt = [0u64; 10];
    for seed in 0..40 {
        tally(&mut dealt, &cells(&p, &start(&p, seed)));
    }
    let total: u64 = dealt.iter().sum();
    // A deal redraws a tile that would complete a run, which the favourite does most often, so
    // its share is below 2/3; uniform draws would give 1/6.
    let share = dealt[2] as f64 / total as f64;
    assert!(share > 0.35, "colour 2 is {share:.3} of the dealt tiles: {dealt:?}");
    assert!((1..=6).filter(|&c| c != 2).all(|c| dealt[c] < dealt[2]), "{dealt:?}");
    // Refilled tiles: colour 2 is most of them; with equal weights, about a sixth.
    let refilled = refilled_tiles(&p, 30);
    let share = refilled[2] as f64 / refilled.iter().sum::<u64>() as f64;
    assert!(share > 0.4, "colour 2 is {share:.3} of the refilled tiles: {refilled:?}");
    assert!((1..=6).filter(|&c| c != 2).all(|c| 2 * refilled[c] < refilled[2]), "{refilled:?}");
    let even = refilled_tiles(&match3(&[]), 30);
    let share = even[2] as f64 / even.iter().sum::<u64>() as f64;
    assert!((0.12..0.22).contains(&share), "colour 2 is {share:.3} of the refilled tiles with equal weights: {even:?}");
}

/// Tiles refilled in `games` seeded random games, counted by colour: after a move, a column that
/// lost tiles to a run (it differs from the board with the swap made) has a refilled tile on top.
fn refilled_tiles(p: &Arc<Program>, games: u64) -> [u64; 10] {
    let mut refilled = [0u64; 10];
    for seed in 0..games {
        let g = WgdlGame::new(p.clone()).with_seed(seed);
        let mut st = g.initial().unwrap();
        let mut rng = playforge::rng::stream(seed, 5, 0, 0);
        let mut legal = Vec::new();
        loop {
            g.legal(&st, &mut legal).unwrap();
            if g.status(&st, &legal) != Status::Running {
                break;
            }
            let a = legal[rng.random_range(0..legal.len())];
            let mut swapped = cells(p, &st);
            let i = a.bound as usize / 2;
            swapped.swap(i, if a.bound % 2 == 0 { i + 1 } else { i + 7 });
            g.apply(&mut st, a).unwrap();
            let after = cells(p, &st);
            for x in 0..7 {
                if (0..7).any(|y| after[y * 7 + x] != swapped[y * 7 + x]) {
                    refilled[after[42 + x] as usize] += 1;
                }
            }
        }
    }
    refilled
}

#[test]
fn a_colour_of_weight_zero_never_appears() {
    let p = match3(&[("me.weight4", 0.0), ("me.weight6", 0.0), ("me.weight5", 3.0)]);
    let mut seen = [0u64; 10];
    play(&p, 0..30, |seed, st| {
        let b = cells(&p, st);
        assert!(!b.contains(&4) && !b.contains(&6), "seed {seed}, move {}: {b:?}", st.moves);
        tally(&mut seen, &b);
    });
    assert!([1, 2, 3, 5].iter().all(|&c| seen[c] > 0), "{seen:?}");
    // With 9 colours of which 4 … 9 are off, three colours remain and the game still plays.
    let p = match3(&[
        ("me.colours", 9.0),
        ("me.weight4", 0.0),
        ("me.weight5", 0.0),
        ("me.weight6", 0.0),
        ("me.weight7", 0.0),
        ("me.weight8", 0.0),
        ("me.weight9", 0.0),
    ]);
    play(&p, 0..10, |seed, st| assert!(cells(&p, st).iter().all(|&c| (1..=3).contains(&c)), "seed {seed}"));
}

/// A 7 × 7 board dealt by `deal` at the start, and a move that empties it (`clearRuns(1)`:
/// every tile is in a run of one) and refills it by `refill`.
fn board_game(deal: &str, refill: &str) -> Arc<Program> {
    let src = format!(
        "grid board 7 7
class player
attribute player made long 0
object me is player
initial me
action create:player setUp
consequence dealBoard do board.{deal}
hasConsequence setUp dealBoard
action player again
consequence empty do board.clearRuns(1)
consequence fill do board.{refill}
consequence count direct this.made = this.made + 1
hasConsequence again empty
hasConsequence again fill
hasConsequence again count
goal 1 me.made >= 1000
"
    );
    util::compile(&src).program
}

/// The tiles of `moves` refills of the whole board (after the deal), counted by value, and the
/// chance stream at the end.
fn refills(p: &Arc<Program>, seed: u64, moves: usize) -> ([u64; 10], Vec<i64>, u64) {
    let mut st = start(p, seed);
    let dealt = cells(p, &st);
    let mut counts = [0u64; 10];
    for _ in 0..moves {
        let legal = util::legal(p, &st);
        p.apply(&mut st, legal[0]).unwrap_or_else(|e| panic!("{}", e.render(p)));
        tally(&mut counts, &cells(p, &st));
    }
    (counts, dealt, st.rng)
}

#[test]
fn refill_and_deal_weights_on_a_board_of_their_own() {
    let uniform = board_game("deal(4, 3)", "refill(4)");
    let (base, base_dealt, base_rng) = refills(&uniform, 9, 100);
    // Equal weights, weights all 0, weights past n and a seed of 0 draw exactly as none.
    for (deal, refill) in [
        ("deal(4, 3, 0)", "refill(4, 1, 1, 1, 1)"),
        ("deal(4, 3, 0, 5, 5, 5, 5)", "refill(4, 0, 0, 0, 0)"),
        ("deal(4, 3, 0, 2, 2, 2, 2, 9, 0)", "refill(4, -3, 0, -1, 0, 8)"),
    ] {
        let (c, d, r) = refills(&board_game(deal, refill), 9, 100);
        assert_eq!((c, &d, r), (base, &base_dealt, base_rng), "{deal} / {refill}");
    }
    // 1 : 3 : 0 (a negative weight counts as 0): value 2 is 3/4 of 4 900 tiles, 3 never comes.
    let (c, _, _) = refills(&board_game("deal(4, 3)", "refill(3, 1, 3, -2)"), 1, 100);
    assert_eq!(c[3] + c[4] + c[0], 0, "{c:?}");
    let share = c[2] as f64 / 4900.0;
    assert!((0.72..0.78).contains(&share), "value 2 is {share:.3} of the refills, expected 0.75: {c:?}");
    // A value past the weights given weighs 0: refill(6, 1, 1) gives 1 and 2 only.
    let (c, _, _) = refills(&board_game("deal(4, 3)", "refill(6, 1, 1)"), 2, 30);
    assert_eq!(c[1] + c[2], 30 * 49, "{c:?}");
    // Deal weights: 10 : 1 : 1 : 1 deals value 1 most, 0 : 1 : 1 : 1 never.
    let (_, d, _) = refills(&board_game("deal(4, 3, 0, 10, 1, 1, 1)", "refill(4)"), 3, 0);
    assert!(d.iter().filter(|&&v| v == 1).count() > 20, "{d:?}");
    let (_, d, _) = refills(&board_game("deal(4, 3, 0, 0, 1, 1, 1)", "refill(4)"), 3, 0);
    assert!(!d.contains(&1), "{d:?}");
    // A seed: one board whatever the game's seed, the game's stream untouched; another seed,
    // another board.
    let seeded = board_game("deal(4, 3, 42)", "refill(4)");
    let boards: Vec<(Vec<i64>, u64)> = (0..6).map(|s| (cells(&seeded, &start(&seeded, s)), start(&seeded, s).rng)).collect();
    for (s, (b, rng)) in boards.iter().enumerate() {
        assert_eq!(*b, boards[0].0, "seed {s}");
        assert_eq!(*rng, playforge::rng::mix(s as u64), "seed {s}: the seeded deal drew from the game's stream");
    }
    let other = board_game("deal(4, 3, 43)", "refill(4)");
    assert_ne!(cells(&other, &start(&other, 0)), boards[0].0);
}

#[test]
fn an_impossible_weighted_deal_names_the_values_that_can_come_out() {
    // Two values of positive weight cannot always avoid a run of 3 (a tile may need to differ
    // from the pair to its left and the pair below): a runtime error at the deal, counting 2.
    let p = board_game("deal(6, 3, 0, 1, 1)", "refill(6)");
    let mut outcomes = Vec::new();
    for seed in 0..20 {
        match WgdlGame::new(p.clone()).with_seed(seed).initial() {
            Ok(_) => {}
            Err(e) => outcomes.push(e.render(&p)),
        }
    }
    assert!(!outcomes.is_empty(), "20 deals of a 7 × 7 board from 2 values never got stuck");
    for out in &outcomes {
        assert!(out.contains("without runs of 3 from 2 tile values") && out.contains("test.wgdl:7:1"), "{out}");
    }
}

/// Compiles `src` as `genes.wgdl`, which must fail with exactly one error; returns it and the
/// rendered diagnostics.
fn one_error(src: &str) -> (DiagKind, String) {
    let d = match wgdl::compile_str("genes.wgdl", src) {
        Ok(_) => panic!("expected an error, but it compiled:\n{src}"),
        Err(d) => d,
    };
    let errors: Vec<_> = d.errors().collect();
    assert_eq!(errors.len(), 1, "expected exactly one error:\n{d}");
    (errors[0].kind.clone(), d.to_string())
}

/// A game around one consequence line (line 7).
fn with_line(line: &str) -> String {
    format!(
        "// One bad call of a tile operation.\ngrid board 3 3\nclass player\nobject me is player\ninitial me\naction player tap\n{line}\nhasConsequence tap c\n"
    )
}

#[test]
fn wrong_forms_of_the_weighted_built_ins_are_compile_errors_at_their_place() {
    let weights = (1..=17).map(|_| "1").collect::<Vec<_>>().join(", ");
    let cases: Vec<(String, &str, &str)> = vec![
        // Too many weights: the first argument past the 16th weight.
        (
            format!("consequence c do board.refill(6, {weights})"),
            "wrong number of arguments to `board.refill`: expected 1 to 17 argument(s): `refill(n[, w1, …, wk])`, at most 16 weights, found 18",
            "genes.wgdl:7:",
        ),
        (
            format!("consequence c do board.deal(6, 3, 0, {weights})"),
            "wrong number of arguments to `board.deal`: expected 2 to 19 argument(s): `deal(n, min[, seed[, w1, …, wk]])`, at most 16 weights, found 20",
            "genes.wgdl:7:",
        ),
        // Too few: the required count, as before the weights.
        (
            "consequence c do board.deal(6)".into(),
            "wrong number of arguments to `board.deal`: expected 2 argument(s), found 1",
            "genes.wgdl:7:18",
        ),
        // Operations without optional arguments are unchanged.
        (
            "consequence c do board.swap(1, 2)".into(),
            "wrong number of arguments to `board.swap`: expected 1 argument(s), found 2",
            "genes.wgdl:7:",
        ),
        // Every argument is a long: a double weight, a boolean seed.
        ("consequence c do board.refill(3, 1, 0.5, 1)".into(), "expected long for a grid operation, found double", "genes.wgdl:7:37"),
        ("consequence c do board.deal(3, 3, true)".into(), "expected long for a grid operation, found boolean", "genes.wgdl:7:35"),
    ];
    for (line, message, at) in cases {
        let src = with_line(&line);
        let (kind, out) = one_error(&src);
        assert!(matches!(kind, DiagKind::WrongArity { .. } | DiagKind::TypeMismatch { .. }), "{kind:?}");
        assert!(out.contains(message), "{line}\nwanted: {message}\ngot:\n{out}");
        assert!(out.contains(&format!("--> {at}")), "{line}: not at {at}\n{out}");
        assert!(out.contains(&format!("7 | {line}")), "{line}: the line is not shown\n{out}");
    }
    // The whole rendering of one case, as the golden files in tests/data/wgdl/err/ hold them.
    let (_, out) = one_error(&with_line("consequence c do board.refill(3, 1, 0.5, 1)"));
    assert_eq!(
        out,
        "error: type mismatch: expected long for a grid operation, found double
 --> genes.wgdl:7:37
  |
7 | consequence c do board.refill(3, 1, 0.5, 1)
  |                                     ^^^
genes.wgdl: 1 error(s), 0 warning(s)
"
    );
}
