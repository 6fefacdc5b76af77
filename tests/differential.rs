//! Differential tests: the interpreter and the hand-written native twins in `tests/native/` play
//! the same seeded random games and must follow the same trajectories to the same outcomes.

#[path = "native/simple_coins.rs"]
mod native_simple_coins;

use crate::util;
use native_simple_coins::NativeSimpleCoins;
use playforge::game::{Game, WgdlGame, pick_grouped};

/// Plays one group-weighted random playout; returns the moves' indices and the final status.
fn playout<G: Game>(g: &G, seed: u64, name: impl Fn(&G::State, G::Move) -> String) -> (Vec<String>, playforge::wgdl::Status) {
    let mut rng = playforge::rng::stream(seed, 0, 0, 0);
    let weights = g.group_weights();
    let mut st = g.initial().expect("initial state");
    let mut legal = Vec::new();
    let mut path = Vec::new();
    loop {
        g.legal(&st, &mut legal).expect("legal moves");
        let status = g.status(&st, &legal);
        if status != playforge::wgdl::Status::Running {
            return (path, status);
        }
        let m = pick_grouped(g, &legal, &weights, &mut rng);
        path.push(name(&st, m));
        g.apply(&mut st, m).expect("apply");
    }
}

#[test]
fn simple_coins_interpreted_matches_native_over_1000_games() {
    let c = util::game("simple_coins.wgdl");
    let interp = WgdlGame::new(c.program.clone());
    let p = c.program.clone();
    let mut total_moves = 0;
    for seed in 0..1000 {
        let (a, sa) = playout(&interp, seed, |st, m| p.action_name(st, m));
        let (b, sb) =
            playout(&NativeSimpleCoins, seed, |_, m| if m == 0 { "endSession(global)".to_string() } else { format!("getCoins(coin{m})") });
        assert_eq!(a, b, "seed {seed}: trajectories differ");
        assert_eq!(sa, sb);
        total_moves += a.len();
    }
    assert!(total_moves > 1000 * 20, "playouts are suspiciously short: {total_moves} moves");
}

#[test]
fn simple_coins_final_coins_match_native() {
    let c = util::game("simple_coins.wgdl");
    let p = c.program.clone();
    let g = WgdlGame::new(p.clone());
    let coins_slot = p.n_store_nodes() * 2 + 2; // global is object 0; coins is its third attribute
    assert_eq!(p.classes[0].attrs[2].name, "coins");
    for seed in 0..200 {
        let mut rng = playforge::rng::stream(seed, 1, 0, 0);
        let mut rng2 = rng.clone();
        let (mut s, mut n) = (g.initial().unwrap(), NativeSimpleCoins.initial().unwrap());
        let (mut l, mut ln) = (Vec::new(), Vec::new());
        loop {
            g.legal(&s, &mut l).unwrap();
            NativeSimpleCoins.legal(&n, &mut ln).unwrap();
            assert_eq!(l.len(), ln.len());
            if g.status(&s, &l) != playforge::wgdl::Status::Running {
                break;
            }
            let a = pick_grouped(&g, &l, &g.group_weights(), &mut rng);
            let b = pick_grouped(&NativeSimpleCoins, &ln, &NativeSimpleCoins.group_weights(), &mut rng2);
            g.apply(&mut s, a).unwrap();
            NativeSimpleCoins.apply(&mut n, b).unwrap();
            assert_eq!(s.slots[coins_slot], n.coins, "seed {seed}");
        }
        assert_eq!(n.sessions, 4);
    }
}
