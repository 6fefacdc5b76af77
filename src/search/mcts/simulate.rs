//! Phase 2 (state only): the selected path replayed from the root state (or the deepest kept
//! state on it), the new move applied, and a playout with the action-group policy until the
//! sub-game ends; forfeiting cuts hopeless playouts short.

use super::*;

/// True when `state` ends the sub-game.
pub fn is_terminal<G: Game + Goals>(game: &G, state: &G::State, legal: &[G::Move], sub: SubGame) -> bool {
    game.status(state, legal) != Status::Running || game.goals_reached(state) >= sub.goal_target
}

/// Phase 2 (state only): replay the path, expand, play out, evaluate.
#[allow(clippy::too_many_arguments)]
pub fn simulate<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    root: &G::State,
    sel: &Selected<G::Move>,
    cfg: &MctsConfig,
    eval: &E,
    sub: SubGame,
    best_so_far: f64,
    seen_at_depth: Option<&HashSet<u64>>,
    rng: &mut Rng,
    scratch: &mut Scratch<G>,
) -> Result<Simulated<G::State, G::Move>, G::Error> {
    simulate_from(game, root, None, sel, cfg, eval, sub, best_so_far, seen_at_depth, rng, scratch)
}

/// [`simulate`] replaying from a kept state (`start`: the tree's [`Tree::start_state`]).
#[allow(clippy::too_many_arguments)]
pub fn simulate_from<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    root: &G::State,
    start: Option<&G::State>,
    sel: &Selected<G::Move>,
    cfg: &MctsConfig,
    eval: &E,
    sub: SubGame,
    best_so_far: f64,
    seen_at_depth: Option<&HashSet<u64>>,
    rng: &mut Rng,
    scratch: &mut Scratch<G>,
) -> Result<Simulated<G::State, G::Move>, G::Error> {
    replay(game, root, sel, start, scratch)?;
    simulate_at_leaf(game, sel, cfg, eval, sub, best_so_far, seen_at_depth, rng, scratch)
}

/// The leaf's state into `scratch.leaf`: from the kept state of `path_nodes[start − 1]` when
/// there is one (else from the root), the rest of the path replayed; the state at `save` kept
/// in `scratch.saved`.
pub(super) fn replay<G: Game>(
    game: &G,
    root: &G::State,
    sel: &Selected<G::Move>,
    start: Option<&G::State>,
    scratch: &mut Scratch<G>,
) -> Result<(), G::Error> {
    let from = match start {
        Some(st) => {
            scratch.leaf.clone_from(st);
            sel.start
        }
        None => {
            scratch.leaf.clone_from(root);
            0
        }
    };
    for (k, &m) in sel.path_moves.iter().enumerate().skip(from) {
        game.apply(&mut scratch.leaf, m)?;
        if k + 1 == sel.save {
            scratch.saved.clone_from(&scratch.leaf);
        }
    }
    Ok(())
}

/// Phase 2 from the leaf state already in `scratch.leaf` (after [`simulate`] replayed it).
#[allow(clippy::too_many_arguments)]
pub fn simulate_at_leaf<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    sel: &Selected<G::Move>,
    cfg: &MctsConfig,
    eval: &E,
    sub: SubGame,
    best_so_far: f64,
    seen_at_depth: Option<&HashSet<u64>>,
    rng: &mut Rng,
    scratch: &mut Scratch<G>,
) -> Result<Simulated<G::State, G::Move>, G::Error> {
    let mut sim = Simulated {
        new_child: None,
        full: None,
        leaf_learned: None,
        values: [0.0; 4],
        duplicate: false,
        forfeited: false,
        playout: Vec::new(),
        final_state: None,
        final_value: 0.0,
    };
    let mut leaf_terminal = sel.leaf_terminal;
    let Scratch { state: st, leaf, legal, playout, child_moves, leaf_moves, eager, eager_moves, .. } = scratch;
    st.clone_from(leaf);
    if let Some(m) = sel.expand {
        let mover = game.to_move(st) as u8;
        game.apply(st, m)?;
        let hash = if cfg.duplicate_detection { game.hash(st) } else { 0 };
        if let Some(seen) = seen_at_depth
            && seen.contains(&hash)
        {
            sim.duplicate = true;
            return Ok(sim);
        }
        game.legal(st, child_moves)?;
        let terminal = is_terminal(game, st, child_moves, sub);
        sim.new_child = Some(NewChild { mv: m, hash, terminal, mover });
    }
    if cfg.full_expansion {
        if !sel.leaf_known {
            // A child of an earlier expansion, visited for the first time: learn its moves.
            game.legal(leaf, leaf_moves)?;
            leaf_terminal = is_terminal(game, leaf, leaf_moves, sub);
            if leaf_terminal {
                leaf_moves.clear();
            }
            sim.leaf_learned = Some(leaf_terminal);
        }
        let moves: &[G::Move] = if sel.leaf_known { &sel.expand_all } else { leaf_moves };
        if !moves.is_empty() {
            let k = rng.random_range(0..moves.len());
            let mover = game.to_move(leaf) as u8;
            if cfg.eager_expansion {
                eager.clear();
                eager_moves.clear();
                for (i, &m) in moves.iter().enumerate() {
                    if i != k {
                        st.clone_from(leaf);
                        game.apply(st, m)?;
                        game.legal(st, legal)?;
                        let terminal = is_terminal(game, st, legal, sub);
                        let at = eager_moves.len() as u32;
                        if !terminal {
                            eager_moves.extend_from_slice(legal);
                        }
                        eager.push((terminal, at, eager_moves.len() as u32 - at));
                    }
                }
            }
            st.clone_from(leaf);
            game.apply(st, moves[k])?;
            game.legal(st, child_moves)?;
            let terminal = is_terminal(game, st, child_moves, sub);
            sim.full = Some(FullExpansion { rollout: k, mover, terminal });
        }
    }
    // Playout.
    playout.clear();
    let mut forfeited = false;
    if !(leaf_terminal && sel.expand.is_none() && sim.full.is_none()) {
        let mut n = 0u32;
        // The expanded child's moves are already listed.
        let mut listed = sel.expand.is_some() || sim.full.is_some();
        loop {
            let legal: &Vec<G::Move> = if listed {
                listed = false;
                child_moves
            } else {
                game.legal(st, legal)?;
                legal
            };
            if is_terminal(game, st, legal, sub) || n >= cfg.max_playout_moves {
                break;
            }
            if let Some(factor) = cfg.forfeit
                && best_so_far > 0.0
                && let Some(b) = eval.bound(st)
                && b * factor < best_so_far
            {
                forfeited = true;
                break;
            }
            let m = match game.playout_move(st, rng)? {
                Some(m) => m,
                None => match &cfg.group_weights {
                    Some(w) => pick_grouped(game, legal, w, rng),
                    None => legal[rng.random_range(0..legal.len())],
                },
            };
            game.apply(st, m)?;
            playout.push(m);
            n += 1;
        }
    }
    let final_value = if forfeited { 0.0 } else { eval.value(st, 0) };
    if !forfeited {
        for (p, v) in sim.values.iter_mut().enumerate() {
            *v = if p == 0 { final_value } else { eval.value(st, p) };
        }
    }
    let better = !forfeited && final_value > best_so_far;
    sim.forfeited = forfeited;
    sim.final_value = final_value;
    if better {
        sim.playout = playout.clone();
        sim.final_state = Some(st.clone());
    }
    Ok(sim)
}
