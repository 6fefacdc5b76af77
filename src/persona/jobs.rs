//! The persona fan-out as jobs for the [executor](crate::exec): one job is one game of the
//! measured game on one chance seed by one agent (the random player, or MCTS with a selection
//! formula — as exact infix text — and its reward), on the agent's own stream; its output the
//! [`GameResult`]. The context is the resolved config with the game's absolute path and a hash of
//! the compiled game's text, so a worker compiles the same game once and refuses another version.

use super::config::PersonaConfig;
use super::play::{Agent, GameResult, Reward, play_game};
use super::run::Setup;
use crate::exec::{JobKind, fnv};
use crate::rng::stream;
use crate::search::formula::Formula;
use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What every game of a persona run shares.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PersonaContext {
    /// The resolved config (its game path absolute).
    pub config: PersonaConfig,
    pub config_path: PathBuf,
    pub config_text: String,
    /// [`game_hash`] of the game the driver compiled.
    pub game_hash: u64,
}

/// A hash of a run's compiled game (its source text).
pub fn game_hash(setup: &Setup) -> u64 {
    fnv(setup.program.source.text.as_bytes())
}

impl PersonaContext {
    pub fn new(setup: &Setup) -> Result<PersonaContext> {
        let mut config = setup.cfg.clone();
        config.personas.game = std::path::absolute(&config.personas.game)?;
        Ok(PersonaContext {
            config,
            config_path: std::path::absolute(&setup.config_path)?,
            config_text: setup.text.clone(),
            game_hash: game_hash(setup),
        })
    }
}

/// Who plays a job's game, as data.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum AgentSpec {
    Random,
    Mcts { formula: String, reward: Reward },
}

impl AgentSpec {
    pub fn of(agent: &Agent) -> AgentSpec {
        match agent {
            Agent::Random => AgentSpec::Random,
            Agent::Mcts { formula, reward } => AgentSpec::Mcts { formula: formula.to_string(), reward: *reward },
        }
    }
    fn agent(&self) -> Result<Agent> {
        Ok(match self {
            AgentSpec::Random => Agent::Random,
            AgentSpec::Mcts { formula, reward } => {
                Agent::Mcts { formula: Formula::parse(formula).map_err(|e| anyhow!("a job's {e}"))?, reward: *reward }
            }
        })
    }
}

/// One game: the persona (whose measure is read), the agent, the chance seed and the agent's
/// stream (seed, generation, individual, game).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameJob {
    pub persona: usize,
    pub agent: AgentSpec,
    pub seed: u64,
    pub stream: (u64, u64, u64, u64),
}

/// One persona game (`persona.game`).
pub struct PersonaGame;

impl JobKind for PersonaGame {
    const NAME: &'static str = "persona.game";
    type Context = PersonaContext;
    type Worker = Setup;
    type Job = GameJob;
    type Output = GameResult;

    fn worker(ctx: &PersonaContext) -> Result<Setup> {
        // The worker writes nothing: the output root is never used.
        let setup = Setup::new(ctx.config.clone(), ctx.config_text.clone(), &ctx.config_path, Path::new(""))?;
        crate::exec::same_game(&ctx.config.personas.game, game_hash(&setup), ctx.game_hash)?;
        Ok(setup)
    }

    fn run(setup: &Setup, job: &GameJob) -> Result<GameResult> {
        let p = setup.cfg.list.get(job.persona).ok_or_else(|| anyhow!("a job for persona {}, which the config lacks", job.persona))?;
        let (a, b, c, d) = job.stream;
        play_game(&setup.measured(p), job.seed, setup.score, &job.agent.agent()?, &setup.search, &mut stream(a, b, c, d))
            .map_err(|e| anyhow!("{}", e.render(&setup.program)))
    }
}
