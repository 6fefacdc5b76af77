//! The DNA codec of balance: [`crate::genes::Codec`] with two teams as a layer over it.
//!
//! The config's `[[team]]` patterns pick which parameters form each team; a team's genes keep
//! the file's declaration order, so gene k of one team lines up with gene k of the other (the
//! team-difference term needs that). Genes of a fixed team and parameters held in
//! `[parameters]` never change; the optimizers see only the evolving genes (the *search
//! vector*). An encounter is valid when the game's `constraint` lines and the config's
//! `constraints` all hold; [`Codec::build`] writes its values into the compiled game and says
//! which.

use super::config::{BalanceConfig, locate};
pub use crate::genes::{Gene, LinearConstraint, glob};
use crate::rng::Rng;
use crate::wgdl::{CompileOptions, Program};
use anyhow::{Result, bail};
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

/// Maps search vectors to parameter overrides and compiled encounters: the generic codec (its
/// genes are the two teams', team 0's first) plus the teams.
#[derive(Clone, Debug)]
pub struct Codec {
    genes: crate::genes::Codec,
    pub team_names: [String; 2],
    /// Indices (into `genes`) of each team's genes, aligned.
    pub teams: [Vec<usize>; 2],
}

impl Deref for Codec {
    type Target = crate::genes::Codec;
    fn deref(&self) -> &crate::genes::Codec {
        &self.genes
    }
}

impl Codec {
    /// Builds the codec from a checked config (`text` is its source, for error positions).
    pub fn new(cfg: &BalanceConfig, cfg_path: &Path, cfg_text: &str) -> Result<Codec> {
        let at = |table: &str, nth: usize, key: &str| locate(cfg_path, cfg_text, table, nth, key);
        let game = cfg.balance.game.clone();
        let options = CompileOptions {
            base_dir: game.parent().map(Path::to_path_buf),
            turn_order: cfg.balance.turn_order.clone(),
            ..CompileOptions::default()
        };
        let mut codec = crate::genes::Codec::open(&game, options, &|| at("balance", 0, "game"))?;
        let probe = codec.probe().clone();
        if probe.players.len() != 2 || probe.turn.is_none() {
            bail!(
                "{}: {} is not a two-player game with turns (`players a b`, `turn …`); balancing needs one",
                at("balance", 0, "game"),
                game.display()
            );
        }
        if probe.params.is_empty() {
            bail!("{}: {} declares no `parameter`; expected parameters to evolve", at("balance", 0, "game"), game.display());
        }
        codec.hold(&cfg.parameters, &|key| at("parameters", 0, key))?;
        let all_names = codec.names().to_vec();
        let mut owner: Vec<Option<usize>> = vec![None; all_names.len()];
        let mut teams: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
        for (t, team) in cfg.teams.iter().enumerate() {
            for pat in &team.params {
                if !all_names.iter().any(|n| glob(pat, n)) {
                    bail!(
                        "{}: \"{pat}\" matches no declared parameter of {}; expected a name like `{}`",
                        at("team", t, "params"),
                        game.display(),
                        all_names[0]
                    );
                }
            }
            for (i, n) in all_names.iter().enumerate() {
                if team.params.iter().any(|p| glob(p, n)) {
                    if let Some(o) = owner[i] {
                        if o != t {
                            bail!("{}: `{n}` is in both teams; expected every parameter in at most one team", at("team", t, "params"));
                        }
                        continue;
                    }
                    owner[i] = Some(t);
                    let evolves = !team.fixed && !cfg.parameters.contains_key(n);
                    let range = cfg.ranges.get(n).copied();
                    if range.is_some() && !evolves {
                        bail!(
                            "{}: `{n}` does not evolve (its team is fixed or it is in [parameters]); expected [ranges] for evolving parameters only",
                            at("ranges", 0, n)
                        );
                    }
                    teams[t].push(codec.add_gene(i, range, evolves, &|| at("ranges", 0, n))?);
                }
            }
        }
        for name in cfg.ranges.keys() {
            if !codec.genes.iter().any(|g| &g.name == name) {
                bail!(
                    "{}: `{name}` is not an evolved parameter (not declared, or in no team); expected a team parameter",
                    at("ranges", 0, name)
                );
            }
        }
        if codec.evolving.is_empty() {
            bail!(
                "{}: no parameter left to evolve; expected a team that is not fixed and not all in [parameters]",
                at("team", 0, "params")
            );
        }
        if cfg.fitness.difference > 0.0 && teams[0].len() != teams[1].len() {
            bail!(
                "{}: team `{}` has {} parameters and team `{}` {}; expected teams of the same shape (the difference term compares gene k with gene k)",
                at("team", 1, "params"),
                cfg.teams[0].name,
                teams[0].len(),
                cfg.teams[1].name,
                teams[1].len()
            );
        }
        codec.add_constraints(&cfg.constraints, &at("", 0, "constraints"))?;
        let team_names = [cfg.teams[0].name.clone(), cfg.teams[1].name.clone()];
        Ok(Codec { genes: codec, team_names, teams })
    }

    /// The compiled encounter of a full DNA, or `None` when a constraint fails.
    pub fn build(&self, dna: &[f64]) -> Result<Option<Arc<Program>>> {
        Ok(self.genes.build(dna)?.map(|mut p| p.swap_remove(0)))
    }

    /// A uniformly random valid search vector (redrawn whole until valid, as HexMage).
    pub fn random(&self, rng: &mut Rng) -> Result<(Vec<f64>, Arc<Program>)> {
        let (x, mut p) = self.genes.random(rng, "encounter")?;
        Ok((x, p.swap_remove(0)))
    }

    /// R: the distance between the two teams' genes over the largest possible one (√genes).
    pub fn team_distance(&self, dna: &[f64]) -> f64 {
        let n = self.teams[0].len().min(self.teams[1].len());
        if n == 0 {
            return 0.0;
        }
        let d2: f64 = (0..n).map(|k| (dna[self.teams[0][k]] - dna[self.teams[1][k]]).powi(2)).sum();
        d2.sqrt() / (n as f64).sqrt()
    }

    /// Each team's decoded parameters, for `best_encounter.toml`.
    pub fn team_values(&self, dna: &[f64]) -> [Vec<(String, f64)>; 2] {
        let v = self.values(dna);
        let team = |t: usize| self.teams[t].iter().map(|&g| (self.genes.genes[g].name.clone(), self.gene_value(g, &v))).collect();
        [team(0), team(1)]
    }
}
