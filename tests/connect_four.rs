//! Connect Four (`games/connect_four.wgdl`) against its hand-written native twin
//! (`tests/native/connect_four.rs`): perft counts from the start agree with each other and with
//! the published values, seeded random games follow the same columns to the same outcomes, and
//! hand-checked lines win across, down and along both diagonals.

#[path = "native/connect_four.rs"]
pub(crate) mod native_connect_four;

use crate::util;
use native_connect_four::{C4Move, NativeConnectFour, move_name, perft};
use playforge::game::{Game, WgdlGame};
use playforge::wgdl::{Action, Status};
use rand::RngExt;

/// Perft from the start for depths 1..=8 (the published counts).
const PERFT: [u64; 8] = [7, 49, 343, 2401, 16807, 117649, 823536, 5673234];

fn wgdl() -> WgdlGame {
    WgdlGame::new(util::game("connect_four.wgdl").program)
}

#[test]
fn native_perft_matches_the_published_counts() {
    let s = NativeConnectFour.initial().unwrap();
    for (d, &want) in (1..).zip(&PERFT) {
        assert_eq!(perft(&NativeConnectFour, &s, d), want, "native perft {d}");
    }
}

#[test]
fn interpreted_perft_matches_native_and_the_published_counts() {
    let g = wgdl();
    let s = g.initial().unwrap();
    let n = NativeConnectFour.initial().unwrap();
    for (d, &want) in (1..).zip(&PERFT) {
        let got = perft(&g, &s, d);
        assert_eq!(got, perft(&NativeConnectFour, &n, d), "perft {d}: interpreted vs native");
        assert_eq!(got, want, "interpreted perft {d}");
    }
}

/// One uniform-random game: the columns played, the side to move before each move, and the
/// final status. Both implementations draw `random_range(0..legal.len())` from the same stream.
fn random_game<G: Game>(g: &G, seed: u64, column: impl Fn(G::Move) -> u8) -> (Vec<u8>, Vec<usize>, Status) {
    let mut rng = playforge::rng::stream(seed, 0, 0, 0);
    let mut st = g.initial().expect("initial state");
    let mut legal = Vec::new();
    let (mut cols, mut sides) = (Vec::new(), Vec::new());
    loop {
        g.legal(&st, &mut legal).expect("legal moves");
        let status = g.status(&st, &legal);
        if status != Status::Running {
            assert!(legal.is_empty(), "seed {seed}: {status:?} with legal moves left");
            return (cols, sides, status);
        }
        let m = legal[rng.random_range(0..legal.len())];
        cols.push(column(m));
        sides.push(g.to_move(&st));
        g.apply(&mut st, m).expect("apply");
    }
}

#[test]
fn interpreted_matches_native_over_1000_random_games() {
    let g = wgdl();
    let (mut red, mut yellow, mut draws, mut total) = (0, 0, 0, 0);
    for seed in 0..1000 {
        let (a, sa, oa) = random_game(&g, seed, |m: Action| m.bound as u8);
        let (b, sb, ob) = random_game(&NativeConnectFour, seed, |m: C4Move| m);
        assert_eq!(a, b, "seed {seed}: columns differ");
        assert_eq!(sa, sb, "seed {seed}: sides to move differ");
        assert_eq!(oa, ob, "seed {seed}: outcomes differ after {a:?}");
        match ob {
            Status::Won(0) => red += 1,
            Status::Won(1) => yellow += 1,
            Status::Draw => draws += 1,
            s => panic!("seed {seed}: unexpected outcome {s:?}"),
        }
        total += a.len();
    }
    // Uniform random Connect Four: the first player wins a bit more than half the games.
    assert!(red > 400 && yellow > 300, "outcomes not mixed: red {red}, yellow {yellow}, draws {draws}");
    assert!(total > 1000 * 7, "games are suspiciously short: {total} moves");
}

#[test]
fn move_names_match_the_native_twin() {
    let g = wgdl();
    let p = g.program.clone();
    let (mut s, mut n) = (g.initial().unwrap(), NativeConnectFour.initial().unwrap());
    let (mut l, mut ln) = (Vec::new(), Vec::new());
    for &col in &[3u8, 3, 2, 4, 4, 0] {
        g.legal(&s, &mut l).unwrap();
        NativeConnectFour.legal(&n, &mut ln).unwrap();
        let names: Vec<String> = l.iter().map(|&a| p.action_name(&s, a)).collect();
        let native: Vec<String> = ln.iter().map(|&m| move_name(&n, m)).collect();
        assert_eq!(names, native);
        g.apply(&mut s, *l.iter().find(|a| a.bound == col as u32).unwrap()).unwrap();
        NativeConnectFour.apply(&mut n, col).unwrap();
    }
}

/// Plays `cols` through the interpreter by name (`drop(red, 0)`, `drop(yellow, 1)`, …) and
/// through the twin, checking both are running before every move; returns both final statuses
/// and asserts no move is legal in either if the game is over.
fn play_line(cols: &[u8]) -> (Status, Status) {
    let c = util::game("connect_four.wgdl");
    let p = c.program.clone();
    let g = WgdlGame::new(p.clone());
    let (mut s, mut n) = (g.initial().unwrap(), NativeConnectFour.initial().unwrap());
    let (mut l, mut ln) = (Vec::new(), Vec::new());
    for (i, &col) in cols.iter().enumerate() {
        g.legal(&s, &mut l).unwrap();
        assert_eq!(g.status(&s, &l), Status::Running, "interpreted game over before move {i} of {cols:?}");
        NativeConnectFour.legal(&n, &mut ln).unwrap();
        assert_eq!(NativeConnectFour.status(&n, &ln), Status::Running, "native game over before move {i}");
        let side = ["red", "yellow"][i % 2];
        util::play(&p, &mut s, &format!("drop({side}, {col})"));
        NativeConnectFour.apply(&mut n, col).unwrap();
    }
    g.legal(&s, &mut l).unwrap();
    NativeConnectFour.legal(&n, &mut ln).unwrap();
    let (a, b) = (g.status(&s, &l), NativeConnectFour.status(&n, &ln));
    if a != Status::Running {
        assert!(l.is_empty(), "interpreted: {a:?} but legal {:?}", util::names(&p, &s));
    }
    if b != Status::Running {
        assert!(ln.is_empty(), "native: {b:?} but legal {ln:?}");
    }
    (a, b)
}

#[test]
fn red_wins_down_a_column() {
    // Red 0, 0, 0, 0; yellow 1, 1, 1 beside it.
    assert_eq!(play_line(&[0, 1, 0, 1, 0, 1]), (Status::Running, Status::Running));
    assert_eq!(play_line(&[0, 1, 0, 1, 0, 1, 0]), (Status::Won(0), Status::Won(0)));
}

#[test]
fn yellow_wins_across_the_bottom_row() {
    // Yellow 1, 2, 3, 4 on row 0; red stacks two in columns 0 and 6.
    let line = [0, 1, 0, 2, 6, 3, 6, 4];
    assert_eq!(play_line(&line[..7]), (Status::Running, Status::Running));
    assert_eq!(play_line(&line), (Status::Won(1), Status::Won(1)));
}

#[test]
fn red_wins_up_the_rising_diagonal() {
    // Red (0,0) (1,1) (2,2) (3,3); the last move completes the line from its top end.
    let line = [0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3];
    assert_eq!(play_line(&line[..10]), (Status::Running, Status::Running));
    assert_eq!(play_line(&line), (Status::Won(0), Status::Won(0)));
}

#[test]
fn red_wins_down_the_falling_diagonal() {
    // The mirror image: red (6,0) (5,1) (4,2) (3,3), a line along (1, -1).
    let line = [6, 5, 5, 4, 4, 3, 4, 3, 3, 0, 3];
    assert_eq!(play_line(&line[..10]), (Status::Running, Status::Running));
    assert_eq!(play_line(&line), (Status::Won(0), Status::Won(0)));
}

#[test]
fn yellow_wins_by_filling_the_middle_of_a_row() {
    // Yellow 2, 3, 5 on row 0, then 4 fills the gap: the line counts both ways from the move.
    let line = [0, 2, 0, 3, 6, 5, 6, 4];
    assert_eq!(play_line(&line), (Status::Won(1), Status::Won(1)));
}

#[test]
fn a_full_board_without_four_is_a_draw() {
    // Find a drawn random game with the twin, then replay it through the interpreter.
    let seed =
        (0..100_000u64).find(|&s| random_game(&NativeConnectFour, s, |m| m).2 == Status::Draw).expect("a draw among 100 000 random games");
    let (cols, _, _) = random_game(&NativeConnectFour, seed, |m| m);
    assert_eq!(cols.len(), 42);
    assert_eq!(play_line(&cols[..41]), (Status::Running, Status::Running));
    assert_eq!(play_line(&cols), (Status::Draw, Status::Draw));
}

#[test]
fn four_made_by_the_last_disc_is_a_win_not_a_draw() {
    // The `winner` lines come before the `draw` line: a four on move 42 wins for yellow.
    let seed = (0..100_000u64)
        .find(|&s| {
            let (cols, _, st) = random_game(&NativeConnectFour, s, |m| m);
            cols.len() == 42 && st == Status::Won(1)
        })
        .expect("a move-42 win among 100 000 random games");
    let (cols, _, _) = random_game(&NativeConnectFour, seed, |m| m);
    assert_eq!(play_line(&cols[..41]), (Status::Running, Status::Running));
    assert_eq!(play_line(&cols), (Status::Won(1), Status::Won(1)));
}
