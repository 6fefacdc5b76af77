//! The generator's games as jobs for the [executor](crate::exec): `generate.game` plays games
//! of one candidate (its search vector), each at a table on a seed, and returns their records.
//! The context is the resolved config with the game's absolute path and content hash, so a
//! worker anywhere builds the same codec, seats and tables (and refuses another game version).

use super::codec::{Built, Codec};
use super::config::GenerateConfig;
use super::play::{GameRecord, Seat, Table, play, seats};
use super::quality::Scorer;
use crate::exec::JobKind;
use anyhow::{Result, anyhow};
use std::path::Path;

/// What every job of the run shares: the resolved config, where it came from, the game's hash
/// ([`crate::drive::game::Context`]).
pub type GenerateContext = crate::drive::game::Context<GenerateConfig>;

impl GenerateContext {
    pub fn new(cfg: &GenerateConfig, cfg_path: &Path, cfg_text: &str, codec: &Codec) -> Result<GenerateContext> {
        let mut config = cfg.clone();
        config.generate.game = std::path::absolute(&cfg.generate.game)?;
        for p in &mut config.players {
            if let Some(f) = &p.formula_file {
                p.formula_file = Some(std::path::absolute(f)?);
            }
        }
        GenerateContext::of(config, cfg_path, cfg_text, codec.game_hash())
    }
}

pub use crate::drive::fanout::GameJob;

/// Everything a game needs: the codec, the seats, the tables; and the candidates built last.
pub struct Setup {
    pub codec: Codec,
    pub seats: Vec<Seat>,
    /// Judges confirmations (a `certain` requirement by its whole interval).
    pub scorer: Scorer,
    /// Judges the search's own games by estimates: a few games' interval is too wide to be
    /// certain of anything, so `certain` waits for the confirmation.
    pub loose: Scorer,
    pub max_moves: u64,
    built: crate::exec::BuiltCache<Built>,
    /// A game in its own process (`[external]`): how its episodes are played.
    pub external: Option<super::external::External>,
}

impl Setup {
    /// Builds the codec, the seats and the tables of a checked config.
    pub fn new(cfg: &GenerateConfig, cfg_path: &Path, cfg_text: &str) -> Result<Setup> {
        let (scorer, overlay_sets) = Scorer::new(cfg);
        let loose = scorer.on_estimates();
        let built = crate::exec::BuiltCache::new(8);
        if let Some(ext) = &cfg.external {
            // A config parsed without `load` (a test, a fuzzed input) runs the game in its folder.
            let mut ext = ext.clone();
            if ext.dir.is_none() {
                ext.resolve(cfg_path, &cfg.generate.game);
            }
            let at = || crate::config::locate(cfg_path, cfg_text, "external", 0, "command");
            let hello = crate::bridge::pool::probe(&ext.launch(serde_json::json!({}))).map_err(|e| anyhow!("{}: {e}", at()))?;
            let codec = Codec::new(cfg, cfg_path, cfg_text, &overlay_sets, Some(&hello))?;
            let external = Some(super::external::External::new(cfg, cfg_path, cfg_text, &ext, hello)?);
            return Ok(Setup { codec, seats: Vec::new(), scorer, loose, max_moves: cfg.generate.max_moves, built, external });
        }
        let codec = Codec::new(cfg, cfg_path, cfg_text, &overlay_sets, None)?;
        let seats = seats(cfg, &codec.probes[0]).map_err(|e| anyhow!("{}: {e}", cfg_path.display()))?;
        let seats_n = super::play::n_seats(&codec.probes[0]);
        for (k, m) in cfg.measures.iter().enumerate() {
            if m.players.len() != seats_n {
                return Err(anyhow!(
                    "{}: players = {:?} seats {} player(s); expected {seats_n}, one per seat of {}",
                    crate::config::locate(cfg_path, cfg_text, "measure", k, "players"),
                    m.players,
                    m.players.len(),
                    codec.game.display()
                ));
            }
            // Value paths resolve against the program of the measure's own table (its overlays).
            let probe = &codec.probes[scorer.tables[scorer.measures[k].0].overlay_set];
            let when = m.when.as_deref().and_then(|w| super::expr::parse_when(w).ok()).map(|(path, ..)| path);
            for (key, text, path) in [
                ("of", m.of.as_str(), Some(m.of.as_str()).filter(|o| o.contains('.'))),
                ("when", m.when.as_deref().unwrap_or(""), when.as_deref()),
            ] {
                if let Some(path) = path {
                    probe.value_ref(path).map_err(|e| {
                        anyhow!("{}: {key} = \"{text}\": {e}", crate::config::locate(cfg_path, cfg_text, "measure", k, key))
                    })?;
                }
            }
            if m.of == "win" && m.side as usize >= seats_n {
                return Err(anyhow!(
                    "{}: side = {}; expected a seat from 0 to {}",
                    crate::config::locate(cfg_path, cfg_text, "measure", k, "side"),
                    m.side,
                    seats_n - 1
                ));
            }
        }
        Ok(Setup { codec, seats, scorer, loose, max_moves: cfg.generate.max_moves, built, external: None })
    }

    pub fn tables(&self) -> &[Table] {
        &self.scorer.tables
    }

    /// The programs of a candidate (the last few are kept: a batch's jobs mostly share one).
    pub fn built(&self, x: &[f64]) -> Result<Built> {
        self.built.get(x, || {
            let programs =
                self.codec.build(x)?.ok_or_else(|| anyhow!("a job's candidate breaks a constraint; expected a valid candidate"))?;
            Ok(Built { programs, values: self.codec.overrides(x) })
        })
    }

    pub fn play(&self, built: &Built, t: usize, seed: u64) -> Result<GameRecord> {
        let table = &self.scorer.tables[t];
        match &self.external {
            Some(ext) => ext.play(&built.values, table, seed),
            None => play(&built.programs[table.overlay_set], table, &self.seats, seed, self.max_moves),
        }
    }
}

/// One batch of a candidate's games (`generate.game`).
pub struct GenerateGame;

impl JobKind for GenerateGame {
    const NAME: &'static str = "generate.game";
    type Context = GenerateContext;
    type Worker = Setup;
    type Job = GameJob;
    type Output = Vec<GameRecord>;

    fn worker(ctx: &GenerateContext) -> Result<Setup> {
        let setup = Setup::new(&ctx.config, &ctx.config_path, &ctx.config_text)?;
        crate::exec::same_game(&ctx.config.generate.game, setup.codec.game_hash(), ctx.game_hash)?;
        Ok(setup)
    }

    fn run(w: &Setup, job: &GameJob) -> Result<Vec<GameRecord>> {
        let built = w.built(&job.x)?;
        job.games.iter().map(|&(t, seed)| w.play(&built, t, seed)).collect()
    }
}
