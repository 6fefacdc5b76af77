//! The DNA codec, generic over a game's declared parameters (`parameter desc.attr lo hi`).
//!
//! The config's `[[team]]` patterns pick which parameters form each team; a team's genes keep
//! the file's declaration order, so gene k of one team lines up with gene k of the other (the
//! team-difference term needs that). A gene is a number in [0, 1]; decoding maps it linearly onto
//! the parameter's range (narrowed by `[ranges]`) and rounds whole-number parameters. Genes of a
//! fixed team and parameters held in `[parameters]` never change; the optimizers see only the
//! evolving genes (the *search vector*). An encounter is valid when the game's `constraint` lines
//! and the config's `constraints` all hold; [`Codec::build`] compiles it and says which.

use super::config::{BalanceConfig, locate};
pub use crate::genes::{Gene, LinearConstraint, glob};
use crate::rng::Rng;
use crate::wgdl::{self, CompileOptions, Program};
use anyhow::{Result, anyhow, bail};
use rand::RngExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Maps search vectors to parameter overrides and compiled encounters.
#[derive(Clone, Debug)]
pub struct Codec {
    pub game: PathBuf,
    text: Arc<String>,
    /// Every declared parameter's name and the value it has when no gene sets it.
    all_names: Vec<String>,
    all_values: Vec<f64>,
    /// The team genes: team 0's in declaration order, then team 1's.
    pub genes: Vec<Gene>,
    /// Index in `all_names` of each gene.
    gene_param: Vec<usize>,
    pub team_names: [String; 2],
    /// Indices (into `genes`) of each team's genes, aligned.
    pub teams: [Vec<usize>; 2],
    /// Genes the optimizers move.
    pub evolving: Vec<usize>,
    /// The full DNA when nothing evolves: every gene at its file / `[parameters]` value.
    pub template: Vec<f64>,
    pub constraints: Vec<LinearConstraint>,
    /// The probe program (the file's values), for names and checks.
    pub probe: Arc<Program>,
}

impl Codec {
    /// Builds the codec from a checked config (`text` is its source, for error positions).
    pub fn new(cfg: &BalanceConfig, cfg_path: &Path, cfg_text: &str) -> Result<Codec> {
        let at = |table: &str, nth: usize, key: &str| locate(cfg_path, cfg_text, table, nth, key);
        let game = cfg.balance.game.clone();
        let text = crate::input::read_text(&game).map_err(|e| anyhow!("{}: {e}", at("balance", 0, "game")))?;
        let base = CompileOptions {
            base_dir: game.parent().map(Path::to_path_buf),
            turn_order: cfg.balance.turn_order.clone(),
            ..CompileOptions::default()
        };
        let probe = wgdl::compile_str_with(&game.display().to_string(), &text, &base).map_err(|e| anyhow!("{e}"))?.program;
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
        let all_names: Vec<String> = probe.params.iter().map(|p| p.name.clone()).collect();
        let all_values = crate::genes::held_values(&probe.params, &cfg.parameters)
            .map_err(|(key, msg)| anyhow!("{}: {msg} ({})", at("parameters", 0, &key), game.display()))?;
        let mut owner: Vec<Option<usize>> = vec![None; all_names.len()];
        let mut teams: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
        let mut genes = Vec::new();
        let mut gene_param = Vec::new();
        let mut gene_team: Vec<usize> = Vec::new();
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
                    let p = &probe.params[i];
                    let (mut lo, mut hi) = (p.min, p.max);
                    if let Some(&[a, b]) = cfg.ranges.get(n) {
                        if a > b {
                            bail!("{}: {n} = [{a}, {b}] is reversed; expected [low, high] with low ≤ high", at("ranges", 0, n));
                        }
                        if a < p.min || b > p.max {
                            bail!(
                                "{}: {n} = [{a}, {b}] leaves the declared range {} to {}; expected a range inside it",
                                at("ranges", 0, n),
                                p.min,
                                p.max
                            );
                        }
                        if p.integer && a.ceil() > b.floor() {
                            bail!("{}: {n} = [{a}, {b}] holds no whole number; expected a range with at least one", at("ranges", 0, n));
                        }
                        if team.fixed || cfg.parameters.contains_key(n) {
                            bail!(
                                "{}: `{n}` does not evolve (its team is fixed or it is in [parameters]); expected [ranges] for evolving parameters only",
                                at("ranges", 0, n)
                            );
                        }
                        (lo, hi) = (a, b);
                    }
                    teams[t].push(genes.len());
                    genes.push(Gene { name: n.clone(), min: lo, max: hi, integer: p.integer });
                    gene_team.push(t);
                    gene_param.push(i);
                }
            }
        }
        for name in cfg.ranges.keys() {
            if !genes.iter().any(|g| &g.name == name) {
                bail!(
                    "{}: `{name}` is not an evolved parameter (not declared, or in no team); expected a team parameter",
                    at("ranges", 0, name)
                );
            }
        }
        let template: Vec<f64> = genes.iter().zip(&gene_param).map(|(g, &i)| g.encode(all_values[i])).collect();
        let evolving: Vec<usize> =
            (0..genes.len()).filter(|&k| !cfg.teams[gene_team[k]].fixed && !cfg.parameters.contains_key(&genes[k].name)).collect();
        if evolving.is_empty() {
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
        let mut constraints = Vec::new();
        for c in &cfg.constraints {
            constraints.push(
                LinearConstraint::parse(c, &all_names).map_err(|e| anyhow!("{}: constraint \"{c}\": {e}", at("", 0, "constraints")))?,
            );
        }
        let team_names = [cfg.teams[0].name.clone(), cfg.teams[1].name.clone()];
        Ok(Codec {
            game,
            text: Arc::new(text),
            all_names,
            all_values,
            genes,
            gene_param,
            team_names,
            teams,
            evolving,
            template,
            constraints,
            probe,
        })
    }

    /// A hash of the game's text and its compiled map: what a checkpoint belongs to.
    pub fn game_hash(&self) -> u64 {
        crate::genes::game_hash(&self.text, &self.probe)
    }

    /// The full DNA of a search vector.
    pub fn full(&self, x: &[f64]) -> Vec<f64> {
        let mut dna = self.template.clone();
        for (k, &g) in self.evolving.iter().enumerate() {
            dna[g] = x[k];
        }
        dna
    }

    /// The search vector of a full DNA.
    pub fn search(&self, dna: &[f64]) -> Vec<f64> {
        self.evolving.iter().map(|&g| dna[g]).collect()
    }

    /// Every parameter's value for a full DNA (genes decoded, the rest as held).
    pub fn values(&self, dna: &[f64]) -> Vec<f64> {
        // Genes that never evolve keep their held value exactly (no encode/decode round trip).
        let mut v = self.all_values.clone();
        for &k in &self.evolving {
            v[self.gene_param[k]] = self.genes[k].decode(dna[k]);
        }
        v
    }

    /// The overrides that make the encounter of a full DNA.
    pub fn overrides(&self, dna: &[f64]) -> Vec<(String, f64)> {
        self.all_names.iter().cloned().zip(self.values(dna)).collect()
    }

    /// The game with every parameter at `values` (in declaration order), written into the
    /// compiled probe program.
    fn with_values(&self, values: &[f64]) -> Result<Program> {
        self.probe.with_parameters(values).map_err(|e| anyhow!("{}: {e}", self.game.display()))
    }

    /// The compiled encounter, or `None` when a constraint fails.
    pub fn build(&self, dna: &[f64]) -> Result<Option<Arc<Program>>> {
        let values = self.values(dna);
        if !self.constraints.iter().all(|c| c.holds(&values)) {
            return Ok(None);
        }
        // The parameter values written into the compiled program: nothing is compiled again.
        let program = Arc::new(self.with_values(&values)?);
        let st = program.initial_state().map_err(|e| anyhow!("{}", e.render(&program)))?;
        let ok = program.violated_constraints(&st).map_err(|e| anyhow!("{}", e.render(&program)))?.is_empty();
        Ok(ok.then_some(program))
    }

    /// A uniformly random valid search vector (redrawn whole until valid, as HexMage).
    pub fn random(&self, rng: &mut Rng) -> Result<(Vec<f64>, Arc<Program>)> {
        for _ in 0..10_000 {
            let x: Vec<f64> = self.evolving.iter().map(|_| rng.random::<f64>()).collect();
            if let Some(p) = self.build(&self.full(&x))? {
                return Ok((x, p));
            }
        }
        bail!("no valid encounter in 10 000 random draws; expected satisfiable constraints")
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
        let team = |t: usize| self.teams[t].iter().map(|&g| (self.genes[g].name.clone(), v[self.gene_param[g]])).collect();
        [team(0), team(1)]
    }

    /// Parameters in no team (held or at the file's value) and their values.
    pub fn others(&self) -> Vec<(String, f64)> {
        (0..self.all_names.len())
            .filter(|i| !self.gene_param.contains(i))
            .map(|i| (self.all_names[i].clone(), self.all_values[i]))
            .collect()
    }
}
