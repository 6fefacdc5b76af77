//! HexMage's fitness, every constant from the config: F = Σ wᵢ·termᵢ / Σ wᵢ over
//! balance 1 − H (H = the health left on the board over all the health there was; a draw leaves
//! none), length L (two normal CDFs around the target number of turns), team difference D (a
//! logistic of the normalized distance between the two teams' genes) and, optionally, win
//! balance. An evaluation plays `games` games with every configured AI pair; H and the length are
//! averaged over them. HexMage's AllPlayed rule: if in some game an actor never took a turn while
//! alive, or the game ended inside the first round, F is the penalty instead.
//!
//! Games read only the `Game` contract, the turn info and two named values of the turn class
//! (health and its maximum); nothing here knows the hex arena.

use super::config::{BalanceConfig, FitnessConfig};
use crate::players::{Player, play_out, resolve};
use crate::wgdl::{Program, State, Status};
use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use statrs::function::erf::erf;
use std::sync::Arc;

fn phi(x: f64, mean: f64, sd: f64) -> f64 {
    0.5 * (1.0 + erf((x - mean) / (sd * std::f64::consts::SQRT_2)))
}

/// The length term for a (mean) game length in turns.
pub fn length_term(f: &FitnessConfig, len: f64) -> f64 {
    if len < f.length_switch { phi(len, f.length_mean, f.length_sd) } else { phi(f.length_mirror - len, f.length_mean, f.length_sd_high) }
}

/// The team-difference term for a normalized team distance R.
pub fn difference_term(f: &FitnessConfig, r: f64) -> f64 {
    1.0 / (1.0 + (-f.difference_steepness * r + f.difference_offset).exp())
}

/// The whole-turn lengths whose L is at least `level`: the target band (HexMage: 14–27 at 0.9).
pub fn target_band(f: &FitnessConfig, level: f64) -> Option<(u32, u32)> {
    let ok: Vec<u32> = (0..=(f.length_mirror.max(f.length_switch) as u32 + 50)).filter(|&n| length_term(f, n as f64) >= level).collect();
    Some((*ok.first()?, *ok.last()?))
}

/// How one game ended, as the fitness sees it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct GameOutcome {
    /// Winning side, or `None` for a draw or the turn limit.
    pub winner: Option<u8>,
    pub turns: u32,
    /// Health left over all health (0 for a draw).
    pub h: f64,
    pub all_played: bool,
}

/// One fitness evaluation: the terms, F, and what the games did.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Eval {
    pub f: f64,
    pub balance: f64,
    pub length: f64,
    pub difference: f64,
    pub wins_term: f64,
    pub mean_turns: f64,
    pub all_played: bool,
    pub wins: [u64; 2],
    pub draws: u64,
    pub games: u64,
    /// The standard error of F (the bootstrap, [`Evaluator::f_se`]): a sequential
    /// confirmation's only (0 elsewhere, and then not written).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub f_se: f64,
    /// A sequential confirmation's interval cleared the target at `confirm_alpha`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sure: bool,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Where health lives in the turn class: an attribute slot or a per-description constant.
#[derive(Clone, Copy, Debug)]
enum Field {
    Attr(usize),
    Const(usize),
}

fn field(program: &Program, name: &str, key: &str) -> Result<Field> {
    let turn = program.turn.as_ref().ok_or_else(|| anyhow!("the game has no turns"))?;
    let class = &program.classes[turn.class as usize];
    if let Some(i) = class.attrs.iter().position(|a| a.name == name) {
        return Ok(Field::Attr(i));
    }
    if let Some(i) = class.consts.iter().position(|a| a.name == name) {
        return Ok(Field::Const(i));
    }
    let mut known: Vec<&str> = class.attrs.iter().chain(&class.consts).map(|a| a.name.as_str()).collect();
    known.sort();
    bail!(
        "[fitness] {key} = \"{name}\": the turn class `{}` has no attribute or constant `{name}`; expected one of: {}",
        class.name,
        known.join(", ")
    )
}

/// Plays encounters and scores them.
pub struct Evaluator {
    pub cfg: BalanceConfig,
    health: Field,
    health_max: Field,
    /// AI indices of each pair.
    pairs: Vec<[usize; 2]>,
}

impl Evaluator {
    pub fn new(cfg: &BalanceConfig, probe: &Arc<Program>) -> Result<Evaluator> {
        let health = field(probe, &cfg.fitness.health, "health")?;
        let health_max = field(probe, &cfg.fitness.health_max, "health_max")?;
        for ai in &cfg.ais {
            resolve(ai, probe)?;
        }
        let idx = |n: &String| cfg.ais.iter().position(|a| &a.name == n).expect("pairs are checked when the config loads");
        let pairs = cfg.evaluation.pairs.iter().map(|[a, b]| [idx(a), idx(b)]).collect();
        Ok(Evaluator { cfg: cfg.clone(), health, health_max, pairs })
    }

    pub fn n_pairs(&self) -> usize {
        self.pairs.len()
    }

    pub fn pair_name(&self, p: usize) -> String {
        format!("{}-vs-{}", self.cfg.ais[self.pairs[p][0]].name, self.cfg.ais[self.pairs[p][1]].name)
    }

    fn health_of(&self, program: &Program, st: &State) -> (f64, f64) {
        let turn = program.turn.as_ref().expect("checked: the game has turns");
        let (mut left, mut total) = (0.0, 0.0);
        let read = |f: Field, o: &crate::wgdl::program::ObjRec| match f {
            Field::Attr(i) => st.slots[o.base as usize + i] as f64,
            Field::Const(i) => program.gods[o.god as usize].consts[i] as f64,
        };
        for o in &st.objects {
            if !program.is_sub(o.class, turn.class) {
                continue;
            }
            total += read(self.health_max, o).max(0.0);
            if o.alive {
                left += read(self.health, o).max(0.0);
            }
        }
        (left, total)
    }

    /// Plays one game of pair `p` with the stream `seed`; `moves` collects the move names.
    pub fn play(&self, program: &Arc<Program>, p: usize, seed: u64, mut moves: Option<&mut Vec<String>>) -> Result<GameOutcome> {
        let pr: Player = resolve(&self.cfg.ais[self.pairs[p][0]], program)?;
        let pb: Player = resolve(&self.cfg.ais[self.pairs[p][1]], program)?;
        let turn_class = program.turn.as_ref().expect("checked: the game has turns").class;
        // AllPlayed: every actor alive at the start takes a turn in the first round.
        let mut actors: Option<usize> = None;
        let mut first_round: Vec<u32> = Vec::new();
        let (status, st) = play_out(program, [&pr, &pb], seed, &mut |st, m| {
            if actors.is_none() {
                actors = Some(st.objects.iter().filter(|o| o.alive && program.is_sub(o.class, turn_class)).count());
            }
            if st.round == 0 && !first_round.contains(&st.actor) {
                first_round.push(st.actor);
            }
            if let Some(mv) = moves.as_deref_mut() {
                mv.push(program.action_name(st, m));
            }
        })?;
        let (left, total) = self.health_of(program, &st);
        let winner = match status {
            Status::Won(k) => Some(k),
            _ => None,
        };
        let h = if status == Status::Draw || total <= 0.0 { 0.0 } else { left / total };
        Ok(GameOutcome { winner, turns: st.turns, h, all_played: st.round >= 1 && actors.is_some_and(|n| first_round.len() >= n) })
    }

    /// Scores the games of one evaluation: `games` holds each pair's games in turn, the same
    /// number per pair.
    pub fn score(&self, games: &[GameOutcome], team_distance: f64) -> Eval {
        let f = &self.cfg.fitness;
        let n = games.len().max(1) as f64;
        let h = games.iter().map(|g| g.h).sum::<f64>() / n;
        let mean_turns = games.iter().map(|g| g.turns as f64).sum::<f64>() / n;
        let tally = |gs: &[GameOutcome]| {
            let mut wins = [0u64; 2];
            for g in gs {
                if let Some(k @ 0..=1) = g.winner {
                    wins[k as usize] += 1;
                }
            }
            let len = gs.iter().map(|g| g.turns as f64).sum::<f64>() / gs.len().max(1) as f64;
            // |wins₁ − wins₂| / n less what a fair coin gives on average, √(2 / (π n)).
            let n = gs.len().max(1) as f64;
            let dev = (wins[0] as f64 - wins[1] as f64).abs() / n;
            let noise = if f.wins_noise_corrected { (2.0 / (std::f64::consts::PI * n)).sqrt() } else { 0.0 };
            (wins, 1.0 - (dev - noise).max(0.0), length_term(f, len))
        };
        let (wins, all_w, all_l) = tally(games);
        let (wins_term, length) = if f.per_pair && self.pairs.len() > 1 && games.len().is_multiple_of(self.pairs.len()) {
            let per = games.len() / self.pairs.len();
            let parts: Vec<_> = games.chunks(per).map(tally).collect();
            let k = parts.len() as f64;
            let l = if f.length_per_pair { parts.iter().map(|p| p.2).sum::<f64>() / k } else { all_l };
            (parts.iter().map(|p| p.1).sum::<f64>() / k, l)
        } else {
            (all_w, all_l)
        };
        let draws = games.len() as u64 - wins[0] - wins[1];
        let balance = 1.0 - h;
        let difference = difference_term(f, team_distance);
        let all_played = games.iter().all(|g| g.all_played);
        let wsum = f.balance + f.length + f.difference + f.wins;
        let mut fit = (f.balance * balance + f.length * length + f.difference * difference + f.wins * wins_term) / wsum;
        if !all_played && f.all_played_penalty >= 0.0 {
            fit = f.all_played_penalty;
        }
        Eval {
            f: fit,
            balance,
            length,
            difference,
            wins_term,
            mean_turns,
            all_played,
            wins,
            draws,
            games: games.len() as u64,
            f_se: 0.0,
            sure: false,
        }
    }

    /// Whether F of these games is the AllPlayed penalty (more games leave it there).
    pub fn penalized(&self, e: &Eval) -> bool {
        !e.all_played && self.cfg.fitness.all_played_penalty >= 0.0
    }

    /// The standard error of [`Evaluator::score`]'s F over `games` (each pair's in turn, the
    /// same number per pair), by the bootstrap: F of [`BOOTSTRAP`] resamples, each pair's games
    /// drawn with replacement from its own, on a stream fixed by the number of games (so the
    /// same games give the same error). The delta rule does not do here: the win-balance term
    /// is flat around an even pair (its noise allowance) and kinked at the allowance, so a
    /// linear rule reads its spread as 0 or as twice what it is. Infinite below 2 games per
    /// pair; 0 for a penalized F (more games leave it there).
    pub fn f_se(&self, games: &[GameOutcome], team_distance: f64) -> f64 {
        use rand::RngExt;
        let n = games.len();
        let per = if self.pairs.len() > 1 && n.is_multiple_of(self.pairs.len()) { n / self.pairs.len() } else { n };
        if per < 2 {
            return f64::INFINITY;
        }
        if !games.iter().all(|g| g.all_played) && self.cfg.fitness.all_played_penalty >= 0.0 {
            return 0.0;
        }
        let mut rng = crate::rng::stream(BOOTSTRAP as u64, n as u64, 0, 0);
        let mut sample = Vec::with_capacity(n);
        let fs: Vec<f64> = (0..BOOTSTRAP)
            .map(|_| {
                sample.clear();
                for chunk in games.chunks(per) {
                    sample.extend((0..per).map(|_| chunk[rng.random_range(0..per)]));
                }
                self.score(&sample, team_distance).f
            })
            .collect();
        let mean = fs.iter().sum::<f64>() / BOOTSTRAP as f64;
        (fs.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / (BOOTSTRAP - 1) as f64).sqrt()
    }
}

/// Resamples of [`Evaluator::f_se`]'s bootstrap.
pub const BOOTSTRAP: usize = 200;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_and_difference_terms_match_hexmage() {
        let f = FitnessConfig::default();
        // Values from the spec (§4.5): L(6) = .09, L(10) = .50, L(14) = .91, L(30) = .50, L(34) = .02.
        for (len, want) in [(6.0, 0.09), (10.0, 0.5), (14.0, 0.91), (22.0, 1.0), (28.0, 0.84), (30.0, 0.5), (34.0, 0.02)] {
            assert!((length_term(&f, len) - want).abs() < 0.006, "L({len}) = {}", length_term(&f, len));
        }
        // D(0) = .18, D(.025) = .50, D(.05) = .82, D(.1) ≈ .99.
        for (r, want) in [(0.0, 0.18), (0.025, 0.5), (0.05, 0.82), (0.1, 0.99)] {
            assert!((difference_term(&f, r) - want).abs() < 0.006, "D({r}) = {}", difference_term(&f, r));
        }
        assert_eq!(target_band(&f, 0.9), Some((14, 27)));
    }
}
