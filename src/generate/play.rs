//! One game at a table, through the one interpreter and the one MCTS: each seat's player (an
//! `[[ai]]`, a persona, random) chooses its moves, and the game's record holds exactly the
//! quantities the table's measures read — game values at the end or averaged before each move,
//! legal moves, length, turns, goals and the move that reached the first, a value when a
//! condition first held (`when`: the session that reached level 5), the outcome — plus
//! whether the game ended by its own rules and whether anyone was stuck.

use super::config::{GenerateConfig, PlayerConfig};
use super::expr::{Cmp, parse_when};
use crate::game::{Game, WgdlGame};
use crate::players::persona::{MState, Measure, Measured, Reward, RewardEval};
use crate::players::{AiConfig, resolve};
use crate::rng::stream;
use crate::search::formula::Formula;
use crate::search::mcts::{FinalChoice, MctsConfig, decide_with};
use crate::search::run::{FORMULA_NAMES, formula_by_name_or_text};
use crate::wgdl::probe::ValueRef;
use crate::wgdl::{Action, Program, State, Status};
use anyhow::{Result, anyhow, bail};
use rand::RngExt;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What a record holds for a measure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Quantity {
    /// A game value by path, at the end or averaged before each move.
    Value {
        path: String,
        mean: bool,
    },
    LegalMoves {
        mean: bool,
    },
    Length,
    Turns,
    Goals,
    GoalMove,
    /// 1 when the seat won, ½ for any end without a winner, 0 for a loss.
    Win(u8),
    Draw,
    Ended,
    /// `of` (a game value path, `length` or `turns`) at the first state where `path op at`
    /// holds — the start state or the state after a move; at the end when it never holds.
    When {
        path: String,
        op: Cmp,
        at: f64,
        of: String,
    },
}

impl Quantity {
    /// The quantity a `[[measure]]` asks for (its `when`, if any, checked when the config loaded).
    pub fn of(of: &str, aggregate: &str, side: u8, when: Option<&str>) -> Quantity {
        if let Some((path, op, at)) = when.and_then(|w| parse_when(w).ok()) {
            return Quantity::When { path, op, at, of: of.to_string() };
        }
        let mean = aggregate == "mean";
        match of {
            "legal_moves" => Quantity::LegalMoves { mean },
            "length" => Quantity::Length,
            "turns" => Quantity::Turns,
            "goals" => Quantity::Goals,
            "goal_move" => Quantity::GoalMove,
            "win" => Quantity::Win(side),
            "draw" => Quantity::Draw,
            "ended" => Quantity::Ended,
            path => Quantity::Value { path: path.to_string(), mean },
        }
    }
}

/// A seating: one player per seat, the overlay set its games are played with, and the
/// quantities its measures read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub players: Vec<usize>,
    pub overlay_set: usize,
    pub quantities: Vec<Quantity>,
}

/// One game's numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// One number per quantity of the table.
    pub q: Vec<f64>,
    /// Ended by its own rules (not a step or turn limit, not the move cap).
    pub ended: bool,
    pub stuck: bool,
}

/// A seat's player, resolved once.
#[derive(Clone, Debug)]
pub enum Seat {
    Ai(AiConfig),
    Random,
    Persona(PersonaSeat),
}

#[derive(Clone, Debug)]
pub struct PersonaSeat {
    pub formula: Formula,
    pub measure: String,
    pub mean: bool,
    pub reward: Reward,
    pub iterations: u64,
    pub rollout_horizon: u32,
    pub final_choice: FinalChoice,
}

/// The formula of a persona player: its text, its file's first non-comment line, or UCB1.
pub(super) fn persona_formula(p: &PlayerConfig) -> Result<Formula> {
    let c = p.c.unwrap_or(std::f64::consts::SQRT_2);
    let text = match (&p.formula, &p.formula_file) {
        (Some(f), _) => f.clone(),
        (None, Some(path)) => {
            let text = crate::input::read_text(path)?;
            text.lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#'))
                .ok_or_else(|| {
                    anyhow!("player `{}`: {} holds no formula line; expected a persona's best_formula.txt", p.name, path.display())
                })?
                .to_string()
        }
        (None, None) => "ucb1".to_string(),
    };
    formula_by_name_or_text(&text, c, 2.0, 0.0).map_err(|e| anyhow!("player `{}`: {e} (or a named formula: {FORMULA_NAMES})", p.name))
}

/// Every player of the config as a seat, checked against the game (policies, value paths).
pub fn seats(cfg: &GenerateConfig, probe: &Arc<Program>) -> Result<Vec<Seat>> {
    cfg.players
        .iter()
        .map(|p| -> Result<Seat> {
            Ok(match p.kind.as_str() {
                "ai" => {
                    let name = p.ai.as_ref().expect("checked when the config loads");
                    let ai = cfg.ais.iter().find(|a| &a.name == name).expect("checked when the config loads").clone();
                    resolve(&ai, probe)?;
                    Seat::Ai(ai)
                }
                "random" => Seat::Random,
                _ => {
                    if p.measure != "legal_moves" {
                        probe.value_ref(&p.measure).map_err(|e| anyhow!("player `{}`: measure = \"{}\": {e}", p.name, p.measure))?;
                    }
                    let maximize = p.direction == "max";
                    let reward = match (p.scale, p.goal) {
                        (Some([lo, hi]), _) => Reward::Continuous { lo, hi, maximize },
                        (None, Some(goal)) => Reward::Binary { goal, maximize },
                        (None, None) => unreachable!("checked when the config loads"),
                    };
                    Seat::Persona(PersonaSeat {
                        formula: persona_formula(p)?,
                        measure: p.measure.clone(),
                        mean: p.aggregate == "mean",
                        reward,
                        iterations: p.iterations,
                        rollout_horizon: p.rollout_horizon,
                        final_choice: p.final_choice.unwrap_or(FinalChoice::Formula),
                    })
                }
            })
        })
        .collect()
}

/// The number of seats of a game (1 for a game without `players`).
pub fn n_seats(program: &Program) -> usize {
    program.players.len().max(1)
}

/// A `when` measure resolved against the program: its condition, what it reads, and the value
/// read once the condition first held.
struct Watch {
    cond: ValueRef,
    op: Cmp,
    at: f64,
    of: Of,
    seen: Option<f64>,
}

enum Of {
    Value(ValueRef),
    Length,
    Turns,
}

impl Watch {
    fn read(&self, program: &Program, st: &State, moves: u64) -> f64 {
        match self.of {
            Of::Value(r) => program.read(st, r),
            Of::Length => moves as f64,
            Of::Turns => st.turns as f64,
        }
    }
}

/// A persona's running measure over the real moves, as its searches see it.
struct Running {
    measured: Measured,
    sum: f64,
    n: u32,
}

/// Plays one game of `table` on `program` with game seed `seed` (the game's chance stream and
/// the players' streams both derive from it).
pub fn play(program: &Arc<Program>, table: &Table, seats: &[Seat], seed: u64, max_moves: u64) -> Result<GameRecord> {
    let render = |e: crate::wgdl::RuntimeError| anyhow!("{}", e.render(program));
    let n = n_seats(program);
    if table.players.len() != n {
        bail!("a table of {} players for a game of {n} seats", table.players.len());
    }
    let game = WgdlGame::new(program.clone()).with_seed(seed);
    // Resolved per game: AIs carry their playout policy, personas their measured game.
    enum Live {
        Ai(crate::players::Player),
        Random,
        Persona(Box<Running>, PersonaSeat),
    }
    let mut live: Vec<Live> = Vec::with_capacity(n);
    for &p in &table.players {
        live.push(match &seats[p] {
            Seat::Ai(ai) => Live::Ai(resolve(ai, program)?),
            Seat::Random => Live::Random,
            Seat::Persona(ps) => {
                let measure = if ps.measure == "legal_moves" {
                    Measure::LegalMoves
                } else {
                    Measure::Value(program.value_ref(&ps.measure).map_err(|e| anyhow!("{e}"))?)
                };
                let measured = Measured { game: game.clone(), measure, mean: ps.mean };
                Live::Persona(Box::new(Running { measured, sum: 0.0, n: 0 }), ps.clone())
            }
        });
    }
    let value_ref = |path: &str| program.value_ref(path).map_err(|e| anyhow!("{e}"));
    let refs: Vec<Option<ValueRef>> = table
        .quantities
        .iter()
        .map(|q| match q {
            Quantity::Value { path, .. } => value_ref(path).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<_>>()?;
    let mut whens: Vec<Option<Watch>> = table
        .quantities
        .iter()
        .map(|q| match q {
            Quantity::When { path, op, at, of } => Ok(Some(Watch {
                cond: value_ref(path)?,
                op: *op,
                at: *at,
                of: match of.as_str() {
                    "length" => Of::Length,
                    "turns" => Of::Turns,
                    path => Of::Value(value_ref(path)?),
                },
                seen: None,
            })),
            _ => Ok(None),
        })
        .collect::<Result<_>>()?;
    let watch = |whens: &mut [Option<Watch>], st: &State, moves: u64| {
        for w in whens.iter_mut().flatten() {
            if w.seen.is_none() && w.op.holds(program.read(st, w.cond), w.at) {
                w.seen = Some(w.read(program, st, moves));
            }
        }
    };
    let mut sums = vec![0.0; table.quantities.len()];
    let mut st: State = game.initial().map_err(render)?;
    let mut legal: Vec<Action> = Vec::new();
    let mut rng = stream(seed, 1, 0, 0);
    let mut moves: u64 = 0;
    let mut goal_move: Option<u64> = if st.goal >= 1 { Some(0) } else { None };
    watch(&mut whens, &st, moves);
    let status = loop {
        game.legal(&st, &mut legal).map_err(render)?;
        let status = game.status(&st, &legal);
        if status != Status::Running {
            break Some(status);
        }
        if moves >= max_moves {
            break None;
        }
        for (k, q) in table.quantities.iter().enumerate() {
            match q {
                Quantity::Value { mean: true, .. } => sums[k] += program.read(&st, refs[k].expect("resolved above")),
                Quantity::LegalMoves { mean: true } => sums[k] += legal.len() as f64,
                _ => {}
            }
        }
        let side = game.to_move(&st).min(n - 1);
        let mv = match &mut live[side] {
            _ if legal.len() == 1 => legal[0],
            Live::Random => legal[rng.random_range(0..legal.len())],
            Live::Ai(p) => crate::players::agents::choose(&p.game, &p.agent, &st, &legal, &mut rng).map_err(render)?,
            Live::Persona(run, ps) => {
                let g = &run.measured;
                let mut root = MState::new(st.clone(), run.sum, run.n);
                if g.hidden_chance() {
                    g.reseed(&mut root, rng.random::<u64>());
                }
                let horizon = if ps.rollout_horizon > 0 { ps.rollout_horizon.saturating_sub(moves as u32) } else { u32::MAX };
                let cfg =
                    MctsConfig { formula: ps.formula.clone(), full_expansion: true, max_playout_moves: horizon, ..MctsConfig::default() };
                let eval = RewardEval { game: g, reward: ps.reward };
                decide_with(g, &root, &cfg, &eval, ps.iterations, &mut rng, ps.final_choice).map_err(render)?.0
            }
        };
        // Every persona's running measure counts the real move (before it is made).
        for l in live.iter_mut() {
            if let Live::Persona(run, _) = l
                && run.measured.mean
            {
                run.sum += match run.measured.measure {
                    Measure::LegalMoves => legal.len() as f64,
                    Measure::Value(v) => program.read(&st, v),
                };
                run.n += 1;
            }
        }
        game.apply(&mut st, mv).map_err(render)?;
        moves += 1;
        watch(&mut whens, &st, moves);
        if goal_move.is_none() && st.goal >= 1 {
            goal_move = Some(moves);
        }
    };
    let ended = matches!(status, Some(Status::Finished | Status::Won(_) | Status::Draw));
    let stuck = status == Some(Status::Stuck);
    let winner = match status {
        Some(Status::Won(k)) => Some(k),
        _ => None,
    };
    let m = moves.max(1) as f64;
    let q = table
        .quantities
        .iter()
        .enumerate()
        .map(|(k, q)| match q {
            Quantity::Value { mean: true, .. } | Quantity::LegalMoves { mean: true } => {
                if moves > 0 {
                    sums[k] / m
                } else {
                    0.0
                }
            }
            Quantity::Value { .. } => program.read(&st, refs[k].expect("resolved above")),
            Quantity::LegalMoves { mean: false } => legal.len() as f64,
            Quantity::Length => moves as f64,
            Quantity::Turns => st.turns as f64,
            Quantity::Goals => st.goal as f64,
            Quantity::GoalMove => goal_move.unwrap_or(moves) as f64,
            Quantity::Win(side) => match winner {
                Some(w) if w == *side => 1.0,
                Some(_) => 0.0,
                None => 0.5,
            },
            Quantity::Draw => winner.is_none() as u8 as f64,
            Quantity::Ended => ended as u8 as f64,
            Quantity::When { .. } => {
                let w = whens[k].as_ref().expect("resolved above");
                w.seen.unwrap_or_else(|| w.read(program, &st, moves))
            }
        })
        .collect();
    Ok(GameRecord { q, ended, stuck })
}
