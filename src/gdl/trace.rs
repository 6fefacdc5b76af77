//! Holding a reasoner to a reference: a **trace** of games written by another GDL reasoner
//! (`benches/ggp/ProverTrace.java` writes ggp-base's `ProverStateMachine`) is replayed through
//! ours, and every state is compared — its `true` terms, each role's legal moves, whether it is
//! terminal, the goals at the end — before the trace's joint move is applied. This is how
//! `playforge check GAME.kif --trace FILE` checks a game too large for the differential tests'
//! second reasoner against an implementation nobody here wrote.
//!
//! The format, a line each: `game N` starts a game at the initial state; a state is its
//! `true T` lines, `terminal yes|no`, then `goal R V…` per role when terminal (every value that
//! holds; ours reads a role's goal as the largest, 0 when none does, so that is what is
//! compared) or `legal R M` per legal move and `does R M` per role. Terms are KIF; they are compared in lower case with no space inside
//! parentheses, as sets.

use super::{Gdl, GdlAnyState, JointMove};
use crate::game::{Game, Status};

/// What a replay compared.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Agreement {
    pub games: usize,
    /// States compared.
    pub states: usize,
}

/// One state of the trace, with the line it starts at.
#[derive(Default)]
struct Step {
    line: usize,
    truths: Vec<String>,
    terminal: Option<bool>,
    legal: Vec<Vec<String>>,
    goals: Vec<(usize, Vec<u8>)>,
    does: Vec<String>,
}

/// A term as compared: lower case, single spaces, none inside parentheses.
fn norm(t: &str) -> String {
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    t.replace("( ", "(").replace(" )", ")")
}

/// The trace's games, each its states in order; an error `line: what` on a malformed line.
fn parse(text: &str, roles: usize) -> Result<Vec<Vec<Step>>, String> {
    let mut games: Vec<Vec<Step>> = Vec::new();
    for (k, raw) in text.lines().enumerate() {
        let line = k + 1;
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        let (word, rest) = raw.split_once(' ').unwrap_or((raw, ""));
        if word == "game" {
            games.push(Vec::new());
            continue;
        }
        let Some(game) = games.last_mut() else { return Err(format!("{line}: expected `game N` before `{word}`")) };
        // A `true` line after a finished state (or first in a game) starts the next state.
        if game.last().is_none_or(|s: &Step| s.terminal.is_some() && word == "true") {
            game.push(Step { line, legal: vec![Vec::new(); roles], ..Step::default() });
        }
        let step = game.last_mut().expect("pushed above");
        let role = |rest: &str| -> Result<(usize, String), String> {
            let (r, m) = rest.split_once(' ').ok_or_else(|| format!("{line}: expected `{word} ROLE TERM`"))?;
            let r: usize = r
                .parse()
                .ok()
                .filter(|&r| r < roles)
                .ok_or_else(|| format!("{line}: expected a role number below {roles}, found `{r}`"))?;
            Ok((r, norm(m)))
        };
        match word {
            "true" => step.truths.push(norm(rest)),
            "terminal" => {
                step.terminal = Some(match rest {
                    "yes" => true,
                    "no" => false,
                    _ => return Err(format!("{line}: expected `terminal yes` or `terminal no`")),
                })
            }
            "legal" => {
                let (r, m) = role(rest)?;
                step.legal[r].push(m);
            }
            "goal" => {
                let mut words = rest.split_whitespace();
                let r: usize = words
                    .next()
                    .and_then(|r| r.parse().ok())
                    .filter(|&r| r < roles)
                    .ok_or_else(|| format!("{line}: expected `goal ROLE VALUE…`"))?;
                let values = words
                    .map(|v| v.parse::<u8>().map_err(|_| format!("{line}: expected goal values from 0 to 255, found `{v}`")))
                    .collect::<Result<_, _>>()?;
                step.goals.push((r, values));
            }
            "does" => {
                let (r, m) = role(rest)?;
                if step.does.len() != r {
                    return Err(format!("{line}: expected the roles' moves in order, role {} next", step.does.len()));
                }
                step.does.push(m);
            }
            other => return Err(format!("{line}: expected game, true, terminal, legal, goal or does; found `{other}`")),
        }
        if word != "true" && step.terminal.is_none() {
            return Err(format!("{line}: expected `terminal` after a state's `true` lines"));
        }
    }
    Ok(games)
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v.dedup();
    v
}

/// Replays `text` (a trace) through `g`; the first disagreement as `line: what differs`.
pub fn replay(g: &Gdl, text: &str) -> Result<Agreement, String> {
    let roles = g.roles();
    let games = parse(text, roles)?;
    let mut done = Agreement::default();
    let mut buf: Vec<JointMove> = Vec::new();
    for game in &games {
        let mut st: GdlAnyState = g.initial().map_err(|e| format!("the initial state: {e}"))?;
        for step in game {
            let line = step.line;
            let ours = sorted(g.show_state(&st).iter().map(|t| norm(t)).collect());
            let theirs = sorted(step.truths.clone());
            if ours != theirs {
                let only = |a: &[String], b: &[String]| a.iter().filter(|t| !b.contains(t)).cloned().collect::<Vec<_>>().join(" ");
                return Err(format!(
                    "{line}: the state differs (only in the trace: {}; only ours: {})",
                    only(&theirs, &ours),
                    only(&ours, &theirs)
                ));
            }
            g.legal(&st, &mut buf).map_err(|e| format!("{line}: our reasoner failed: {e}"))?;
            let ended = g.status(&st, &buf) != Status::Running;
            if Some(ended) != step.terminal {
                return Err(format!("{line}: the trace says terminal {:?}, ours {ended}", step.terminal));
            }
            done.states += 1;
            if ended {
                let goals = g.goal_values(&st);
                for (r, values) in &step.goals {
                    let want = values.iter().copied().max().unwrap_or(0);
                    if goals.get(*r) != Some(&want) {
                        return Err(format!(
                            "{line}: role {r}'s goal: the trace {values:?} (the largest {want}), ours {:?}",
                            goals.get(*r)
                        ));
                    }
                }
                break;
            }
            let legal = g.legal_actions(&st);
            for (r, acts) in legal.iter().enumerate() {
                let ours = sorted(acts.iter().map(|&i| norm(&g.action_name(r, i))).collect());
                let theirs = sorted(step.legal[r].clone());
                if ours != theirs {
                    return Err(format!("{line}: role {r}'s legal moves differ: the trace {theirs:?}, ours {ours:?}"));
                }
            }
            if step.does.is_empty() {
                // The trace stopped here (its step limit).
                break;
            }
            if step.does.len() != roles {
                return Err(format!("{line}: expected a `does` line for each of {roles} roles"));
            }
            let mut mv: JointMove = 0;
            for (r, m) in step.does.iter().enumerate() {
                let i = g.action_index(r, m).ok_or_else(|| format!("{line}: role {r}'s move {m} is not among our legal moves"))?;
                mv |= (i as JointMove) << (16 * r);
            }
            g.apply(&mut st, mv).map_err(|e| format!("{line}: our reasoner failed: {e}"))?;
        }
        done.games += 1;
    }
    Ok(done)
}
