//! Allocation test, in its own binary because the counting allocator is global to the process:
//! once warmed up, playing a game through the interpreter allocates nothing — no allocation per
//! expression evaluation, per legal-move generation or per applied move — and neither do MCTS
//! iterations (selection, replay, expansion, playout, backpropagation) once the tree has room.
//!
//! Also pins the sizes of the hot types, so a change that bloats them is seen.

use playforge::game::{Game, WgdlGame, pick_grouped};
use playforge::wgdl::Status;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

struct Counting;

thread_local! {
    // Per thread, so tests running in parallel do not count each other's allocations.
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: during thread teardown the slot may be gone; those allocations don't matter.
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

fn allocations() -> usize {
    ALLOCS.with(|c| c.get())
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn game(name: &str) -> WgdlGame {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games").join(name);
    WgdlGame::new(playforge::wgdl::load(&path).unwrap_or_else(|e| panic!("{e}")).program)
}

/// Plays `n` playouts reusing one state buffer and one move buffer; returns allocations counted.
fn allocations_in_playouts(g: &WgdlGame, n: u64) -> (usize, u64) {
    let start = g.initial().unwrap();
    let weights = g.group_weights();
    let mut st = start.clone();
    let mut legal = Vec::with_capacity(1024);
    let mut rngs: Vec<_> = (0..2 * n).map(|s| playforge::rng::stream(s, 0, 0, 0)).collect();
    let mut moves = 0;
    let mut play = |rng: &mut playforge::rng::Rng, st: &mut playforge::wgdl::State, legal: &mut Vec<_>| {
        st.clone_from(&start);
        loop {
            g.legal(st, legal).unwrap();
            if g.status(st, legal) != Status::Running {
                break;
            }
            let m = pick_grouped(g, legal, &weights, rng);
            g.apply(st, m).unwrap();
            moves += 1;
        }
    };
    // Warm up: buffers grow to their working size.
    for r in rngs[..n as usize].iter_mut() {
        play(r, &mut st, &mut legal);
    }
    let before = allocations();
    for r in rngs[n as usize..].iter_mut() {
        play(r, &mut st, &mut legal);
    }
    (allocations() - before, moves)
}

#[test]
fn simple_coins_playouts_allocate_nothing_once_warm() {
    let (allocs, moves) = allocations_in_playouts(&game("simple_coins.wgdl"), 50);
    assert!(moves > 1000);
    assert_eq!(allocs, 0, "{allocs} allocations in {moves} moves");
}

#[test]
fn magic_land_playouts_allocate_almost_nothing_once_warm() {
    // Magic Land creates objects and schedules timers, whose vectors may grow past their warm-up
    // size in an unusually long game; at most a few growth steps per playout are allowed.
    let (allocs, moves) = allocations_in_playouts(&game("magic_land.wgdl"), 50);
    assert!(moves > 500);
    assert!(allocs <= 50, "{allocs} allocations in {moves} moves");
}

#[test]
fn tile_group_playouts_allocate_nothing_once_warm() {
    // Every connected-group built-in (games/README.md §9.15) in the legal moves, the points and
    // the clear: the flood fill's scratch is reused, not allocated per evaluation. (With 4 tile
    // values the `groupDistinct` condition always holds; it is there to be evaluated.)
    let src = "grid board 6 6
class player
attribute player made long 0
object me is player
initial me
action create:player setUp
consequence dealBoard do board.deal(4, 3)
hasConsequence setUp dealBoard
action player pop forEveryNumber c 0 35
condition pop this.made < 20
condition pop board.groupLead(c, 1, 2)
condition pop board.groupDistinct(c, 1) <= 4
consequence points game increase score by board.group(c, 1) + board.groups(0, 2)
consequence clear do board.clearGroup(c, 1)
consequence fall do board.fall()
consequence refill do board.refill(4)
consequence count direct this.made = this.made + 1
hasConsequence pop points
hasConsequence pop clear
hasConsequence pop fall
hasConsequence pop refill
hasConsequence pop count
goal 1 me.made >= 20
";
    let p = playforge::wgdl::compile_str("groups.wgdl", src).unwrap_or_else(|d| panic!("{d}")).program;
    let g = WgdlGame::new(p);
    let (allocs, moves) = allocations_in_playouts(&g, 50);
    assert!(moves > 500, "{moves} moves");
    assert_eq!(allocs, 0, "{allocs} allocations in {moves} moves");
}

/// MCTS iterations on Connect Four (the speed table's search: one random playout per
/// iteration, UCT), with the tree and its kept states given room up front and every buffer
/// warm: no allocation at all. On the hex arena (its filters, occupancy and walk orders), whose
/// states grow as area effects are created, without kept states (a state kept for the first
/// time would grow its slot): almost none — a playout that leaves more area effects on the
/// ground than any before grows the scratch state's vectors.
#[test]
fn mcts_iterations_allocate_nothing_once_warm() {
    use playforge::search::formula::Formula;
    use playforge::search::mcts::{Evaluator, MctsConfig, Scratch, Selected, SubGame, Tree, run_iterations};
    struct Wins;
    impl Evaluator<playforge::wgdl::State> for Wins {
        fn value(&self, st: &playforge::wgdl::State, player: usize) -> f64 {
            if st.outcome as usize == player + 2 { 1.0 } else { 0.0 }
        }
    }
    for (name, warm, counted, allowed, state_cache) in
        [("connect_four.wgdl", 3_000u64, 20_000u64, 0, 1024), ("hex_arena.wgdl", 1_000, 2_000, 5, 0)]
    {
        let g = game(name);
        let root = g.initial().unwrap();
        let cfg = MctsConfig { formula: Formula::ucb1(1.0, 1.0), max_playout_moves: 200, state_cache, ..MctsConfig::default() };
        let f = cfg.formula.compile();
        let sub = SubGame { goal_target: usize::MAX };
        let mut tree = Tree::new(&g, &root, sub, &cfg).unwrap();
        // Room for every node and every node's untried moves.
        tree.reserve(2 * (warm + counted) as usize, 64 * (warm + counted) as usize);
        tree.reserve_states(&root);
        let mut scratch = Scratch::new(&root);
        let mut sel = Selected::new();
        let mut rng = playforge::rng::stream(1, 0, 0, 0);
        run_iterations(&mut tree, &g, &root, &f, &cfg, &Wins, warm, &mut rng, &mut scratch, &mut sel).unwrap();
        let before = allocations();
        run_iterations(&mut tree, &g, &root, &f, &cfg, &Wins, warm + counted, &mut rng, &mut scratch, &mut sel).unwrap();
        let allocs = allocations() - before;
        assert_eq!(tree.iterations, warm + counted, "{name}");
        assert!(allocs <= allowed, "{name}: {allocs} allocations in {counted} iterations");
    }
}

#[test]
fn hot_types_stay_small() {
    use playforge::wgdl::program::{Action, ObjRec, Op, Timer};
    assert_eq!(std::mem::size_of::<Op>(), 16);
    assert_eq!(std::mem::size_of::<Action>(), 12);
    assert_eq!(std::mem::size_of::<ObjRec>(), 12);
    assert_eq!(std::mem::size_of::<Timer>(), 32);
    // Results of evaluations are two words (the error is boxed).
    assert_eq!(std::mem::size_of::<Result<i64, playforge::wgdl::RuntimeError>>(), 16);
    assert!(std::mem::size_of::<playforge::search::mcts::Node<Action>>() <= 96);
}

/// The board games of games/ (issue 55): steps and jumps over their tables, flips, connections,
/// `canMove` chains, `game.stuck` lines and chance's moves allocate nothing once warm.
#[test]
fn board_game_playouts_allocate_nothing_once_warm() {
    for name in ["breakthrough.wgdl", "othello.wgdl", "hex.wgdl", "checkers.wgdl", "pig.wgdl"] {
        let (allocs, moves) = allocations_in_playouts(&game(name), 20);
        assert!(moves > 200, "{name}: {moves} moves");
        assert_eq!(allocs, 0, "{name}: {allocs} allocations in {moves} moves");
    }
}
