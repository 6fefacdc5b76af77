//! The persona fan-out as jobs for the [executor](crate::exec): one job is one game of the
//! measured game on one chance seed by one agent (the random player, or MCTS with a selection
//! formula — as exact infix text — and its reward), on the agent's own stream; its output the
//! [`GameResult`]. The context is the resolved config with the game's absolute path and a hash of
//! the compiled game's text, so a worker compiles the same game once and refuses another version.

use super::config::{Persona, PersonaConfig};
use super::play::{Agent, GameResult, Measure, Measured, Reward, Search, play_game};
use crate::exec::Executor;
use crate::exec::JobKind;
use crate::game::WgdlGame;
use crate::rng::derive;
use crate::search::formula::Formula;
use crate::wgdl::probe::ValueRef;
use crate::wgdl::{CompileOptions, Program};
use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Stream tags (the "individual" slot of [`derive`]) of the things that are not individuals.
pub(super) const TAG_GAMES: u64 = u64::MAX;
pub(super) const TAG_VANILLA: u64 = u64::MAX - 1;
pub(super) const TAG_RANDOM: u64 = u64::MAX - 2;
pub(super) const TAG_GP: u64 = u64::MAX - 3;
pub(super) const TAG_HELD_OUT: u64 = u64::MAX - 4;

/// Everything a run needs that is fixed for its duration.
pub struct Setup {
    pub cfg: PersonaConfig,
    pub text: String,
    pub config_path: PathBuf,
    /// The compiled game and its score (`None` for a game in its own process).
    pub program: Option<Arc<Program>>,
    pub score: Option<ValueRef>,
    /// A game in its own process (`[external]`).
    pub external: Option<super::external::ExternalGames>,
    pub search: Search,
    pub out_dir: PathBuf,
    /// Stop after this many generations in one call (tests; the checkpoint stays resumable).
    pub max_generations: Option<u64>,
    /// Where the games run (this process by default; `--ray` elsewhere).
    pub exec: Executor,
}

impl Setup {
    /// Compiles the game with the config's parameters and chance override; resolves the score.
    pub fn new(cfg: PersonaConfig, text: String, config_path: &Path, out_root: &Path) -> Result<Setup> {
        let s = &cfg.personas;
        let search = Search { iterations: s.iterations, rollout_horizon: s.rollout_horizon, final_choice: s.final_choice() };
        // One folder per (config name, seed): runs with another seed never overwrite it.
        let out_dir = out_root.join(&s.name).join(format!("seed-{}", s.seed));
        if let Some(ext) = &cfg.external {
            // A config parsed without `load` (a test, a fuzzed input) runs the game in its folder.
            let mut ext = ext.clone();
            if ext.dir.is_none() {
                ext.resolve(config_path, &s.game);
            }
            let external = super::external::ExternalGames::new(&cfg, &ext, config_path, &text)?;
            return Ok(Setup {
                cfg,
                text,
                config_path: config_path.to_path_buf(),
                program: None,
                score: None,
                external: Some(external),
                search,
                out_dir,
                max_generations: None,
                exec: Executor::Local,
            });
        }
        let opts = CompileOptions {
            base_dir: s.game.parent().map(Path::to_path_buf),
            overrides: cfg.parameters.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            turn_order: None,
            overlays: Vec::new(),
        };
        let compiled = crate::wgdl::load_with(&s.game, &opts).map_err(|e| anyhow!("{e}"))?;
        let mut program = (*compiled.program).clone();
        if let Some(c) = &s.chance {
            program.chance_fair = c == "fair";
        }
        let program = Arc::new(program);
        let at = |table: &str, nth: usize, key: &str| crate::config::locate(config_path, &text, table, nth, key);
        let score = program.value_ref(&s.score).map_err(|e| anyhow!("{}: score = \"{}\": {e}", at("personas", 0, "score"), s.score))?;
        for (k, p) in cfg.list.iter().enumerate() {
            if p.measure != "legal_moves" {
                program.value_ref(&p.measure).map_err(|e| {
                    anyhow!("{}: measure = \"{}\": {e}; expected a game value or \"legal_moves\"", at("persona", k, "measure"), p.measure)
                })?;
            }
        }
        Ok(Setup {
            cfg,
            text,
            config_path: config_path.to_path_buf(),
            program: Some(program),
            score: Some(score),
            external: None,
            search,
            out_dir,
            max_generations: None,
            exec: Executor::Local,
        })
    }

    /// The setup of a config file with the command line's overrides (`--seed`,
    /// `--generations`, `--out`; default root `outputs/`).
    pub fn load(config: &Path, seed: Option<u64>, generations: Option<u64>, out: Option<&Path>) -> Result<Setup> {
        let (mut cfg, text) = PersonaConfig::load(config)?;
        if let Some(s) = seed {
            cfg.personas.seed = s;
        }
        if let Some(g) = generations {
            cfg.personas.generations = g;
        }
        // The checkpoint key is the resolved config, so command-line overrides count.
        let text = format!("{text}\n# resolved: seed {} generations {}\n", cfg.personas.seed, cfg.personas.generations);
        Setup::new(cfg, text, config, out.unwrap_or(Path::new("outputs")))
    }

    /// The compiled game and its score, for what reads a WGDL game's states.
    pub fn wgdl(&self) -> Result<(&Arc<Program>, ValueRef)> {
        match (&self.program, self.score) {
            (Some(p), Some(s)) => Ok((p, s)),
            _ => Err(anyhow!(
                "{}: a game in its own process; expected a WGDL game (this reads the game's states)",
                self.cfg.personas.game.display()
            )),
        }
    }

    /// The measured game of persona `p` (chance seed 0; games reseed it).
    pub fn measured(&self, p: &Persona) -> Result<Measured> {
        let (program, _) = self.wgdl()?;
        let measure = if p.measure == "legal_moves" {
            Measure::LegalMoves
        } else {
            Measure::Value(program.value_ref(&p.measure).map_err(|e| anyhow!("{e}"))?)
        };
        Ok(Measured { game: WgdlGame::new(program.clone()), measure, mean: p.mean() })
    }

    /// One game of persona `k` by `agent` on chance seed `seed`, the agent's stream `stream`
    /// (seed, generation, individual, game): MCTS on the WGDL game, or the prefix-tree search
    /// on a game in its own process.
    pub fn play(&self, k: usize, agent: &Agent, seed: u64, stream: (u64, u64, u64, u64)) -> Result<GameResult> {
        let p = self.cfg.list.get(k).ok_or_else(|| anyhow!("a game for persona {k}, which the config lacks"))?;
        if let Some(ext) = &self.external {
            return ext.play(p, agent, self.search.iterations, seed, stream);
        }
        let (program, score) = self.wgdl()?;
        let (a, b, c, d) = stream;
        play_game(&self.measured(p)?, seed, score, agent, &self.search, &mut crate::rng::stream(a, b, c, d))
            .map_err(|e| anyhow!("{}", e.render(program)))
    }

    /// The reward of an MCTS agent of persona `p` held to `goal`.
    pub fn reward(&self, p: &Persona, goal: f64) -> Reward {
        match p.range {
            Some([lo, hi]) if !self.cfg.personas.binary() => Reward::Continuous { lo, hi, maximize: p.maximize() },
            _ => Reward::Binary { goal, maximize: p.maximize() },
        }
    }

    /// The vanilla baseline: UCB1 x̄ + C·√(ln n / n_j).
    pub fn vanilla(&self) -> Formula {
        Formula::ucb1(self.cfg.personas.vanilla_c, 1.0)
    }

    /// The game seeds of a generation (shared by individuals, baselines and personas).
    pub fn game_seeds(&self, generation: u64) -> Vec<u64> {
        (0..self.cfg.personas.games).map(|k| derive(self.cfg.personas.seed, generation, TAG_GAMES, k)).collect()
    }

    /// The held-out seeds.
    pub fn held_out_seeds(&self) -> Vec<u64> {
        (0..self.cfg.personas.held_out).map(|k| derive(self.cfg.personas.seed, 0, TAG_HELD_OUT, k)).collect()
    }

    /// The seed of persona `k`'s streams.
    pub(super) fn persona_seed(&self, k: usize) -> u64 {
        derive(self.cfg.personas.seed, k as u64, 0, 0)
    }

    /// Games a run plays (for the progress bar): `evolved` personas evolved, then a held-out
    /// table of `in_table` personas (three agents each, then the random player's row).
    pub fn total_games(&self, evolved: usize, in_table: usize) -> u64 {
        let s = &self.cfg.personas;
        let held_out = if s.held_out == 0 { 0 } else { (3 * in_table as u64 + 1) * s.held_out };
        evolved as u64 * s.generations * (self.cfg.gp.population as u64 + 2) * s.games + held_out
    }
}

/// What every job of the run shares: the resolved config, where it came from, the game's hash
/// ([`crate::drive::game::Context`]).
pub type PersonaContext = crate::drive::game::Context<PersonaConfig>;

/// A hash of a run's compiled game: its source text and map (the one rule, [`crate::drive::game::game_hash`]).
pub fn game_hash(setup: &Setup) -> u64 {
    match (&setup.program, &setup.external) {
        (Some(p), _) => crate::drive::game::game_hash(&p.source.text, p),
        (None, Some(e)) => e.hash,
        (None, None) => 0,
    }
}

impl PersonaContext {
    pub fn new(setup: &Setup) -> Result<PersonaContext> {
        let mut config = setup.cfg.clone();
        config.personas.game = std::path::absolute(&config.personas.game)?;
        PersonaContext::of(config, &setup.config_path, &setup.text, game_hash(setup))
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
        setup.play(job.persona, &job.agent.agent()?, job.seed, job.stream)
    }
}
