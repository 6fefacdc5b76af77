//! Genes for any WGDL game: the declared parameters that `params` names (by pattern) are the
//! search vector, each a number in [0, 1] mapped onto its range (narrowed by `[ranges]`);
//! `[parameters]` holds others at a value. A candidate is valid when the config's `constraints`
//! and the game's `constraint` lines hold; [`Codec::build`] writes its values into the compiled
//! program of every overlay set the players need (play styles switch tagged lines on), so a
//! candidate is never compiled again.

use super::config::{GenerateConfig, locate};
use crate::genes::{Gene, LinearConstraint, glob};
use crate::rng::Rng;
use crate::wgdl::{self, CompileOptions, Program};
use anyhow::{Result, anyhow, bail};
use rand::RngExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A candidate's programs, one per overlay set (index 0: the game as written).
pub type Built = Vec<Arc<Program>>;

#[derive(Clone, Debug)]
pub struct Codec {
    pub game: PathBuf,
    text: Arc<String>,
    all_names: Vec<String>,
    all_values: Vec<f64>,
    pub genes: Vec<Gene>,
    gene_param: Vec<usize>,
    pub constraints: Vec<LinearConstraint>,
    /// The compiled game of each overlay set, at the file's (and `[parameters]`') values.
    pub probes: Vec<Arc<Program>>,
    pub overlay_sets: Vec<Vec<String>>,
}

impl Codec {
    /// The codec of a checked config; `overlay_sets` are the sets the tables play with (the
    /// first must be empty).
    pub fn new(cfg: &GenerateConfig, cfg_path: &Path, cfg_text: &str, overlay_sets: &[Vec<String>]) -> Result<Codec> {
        let at = |table: &str, nth: usize, key: &str| locate(cfg_path, cfg_text, table, nth, key);
        let game = cfg.generate.game.clone();
        let text = crate::input::read_text(&game).map_err(|e| anyhow!("{}: {e}", at("generate", 0, "game")))?;
        let compile = |overlays: &[String]| -> Result<Arc<Program>> {
            let opts = CompileOptions {
                base_dir: game.parent().map(Path::to_path_buf),
                turn_order: cfg.generate.turn_order.clone(),
                overlays: overlays.to_vec(),
                ..CompileOptions::default()
            };
            Ok(wgdl::compile_str_with(&game.display().to_string(), &text, &opts).map_err(|e| anyhow!("{e}"))?.program)
        };
        let base = compile(&[])?;
        if base.params.is_empty() {
            bail!("{}: {} declares no `parameter`; expected parameters to generate", at("generate", 0, "game"), game.display());
        }
        let mut probes = vec![base.clone()];
        for set in overlay_sets.iter().skip(1) {
            for o in set {
                if !base.overlays.iter().any(|(_, n)| n == o) {
                    let known: Vec<String> = base.overlays.iter().map(|(k, n)| format!("{} {n}", k.word())).collect();
                    let k = cfg.players.iter().position(|p| p.overlays.contains(o)).unwrap_or(0);
                    bail!(
                        "{}: overlay \"{o}\" is not in {}; expected one of: {}",
                        at("player", k, "overlays"),
                        game.display(),
                        if known.is_empty() { "(the file declares no `style`/`variant` lines)".into() } else { known.join(", ") }
                    );
                }
            }
            let p = compile(set)?;
            if p.params.len() != base.params.len() {
                bail!("{}: the overlays {set:?} change the game's parameters; expected parameter lines outside overlays", game.display());
            }
            probes.push(p);
        }
        let all_names: Vec<String> = base.params.iter().map(|p| p.name.clone()).collect();
        let all_values = crate::genes::held_values(&base.params, &cfg.parameters)
            .map_err(|(key, msg)| anyhow!("{}: {msg} ({})", at("parameters", 0, &key), game.display()))?;
        for pat in &cfg.generate.params {
            if !all_names.iter().any(|n| glob(pat, n)) {
                bail!(
                    "{}: \"{pat}\" matches no declared parameter of {}; expected one of: {}",
                    at("generate", 0, "params"),
                    game.display(),
                    all_names.join(", ")
                );
            }
        }
        let mut genes = Vec::new();
        let mut gene_param = Vec::new();
        for (i, n) in all_names.iter().enumerate() {
            if !cfg.generate.params.iter().any(|p| glob(p, n)) || cfg.parameters.contains_key(n) {
                continue;
            }
            let p = &base.params[i];
            let (mut lo, mut hi) = (p.min, p.max);
            if let Some(&[a, b]) = cfg.ranges.get(n) {
                if a > b || a < p.min || b > p.max {
                    bail!(
                        "{}: {n} = [{a}, {b}]; expected [low, high] inside the declared range {} to {}",
                        at("ranges", 0, n),
                        p.min,
                        p.max
                    );
                }
                if p.integer && a.ceil() > b.floor() {
                    bail!("{}: {n} = [{a}, {b}] holds no whole number; expected a range with at least one", at("ranges", 0, n));
                }
                (lo, hi) = (a, b);
            }
            genes.push(Gene { name: n.clone(), min: lo, max: hi, integer: p.integer });
            gene_param.push(i);
        }
        if genes.is_empty() {
            bail!("{}: every parameter `params` names is held in [parameters]; expected at least one gene", at("generate", 0, "params"));
        }
        for name in cfg.ranges.keys() {
            if !genes.iter().any(|g| &g.name == name) {
                bail!("{}: `{name}` is not a gene (not declared, not in `params`, or held); expected a gene's name", at("ranges", 0, name));
            }
        }
        let mut constraints = Vec::new();
        for c in &cfg.constraints {
            constraints.push(
                LinearConstraint::parse(c, &all_names).map_err(|e| anyhow!("{}: constraint \"{c}\": {e}", at("", 0, "constraints")))?,
            );
        }
        Ok(Codec {
            game,
            text: Arc::new(text),
            all_names,
            all_values,
            genes,
            gene_param,
            constraints,
            probes,
            overlay_sets: overlay_sets.to_vec(),
        })
    }

    /// A hash of the game's text and its compiled map: what a checkpoint and a job belong to.
    pub fn game_hash(&self) -> u64 {
        crate::genes::game_hash(&self.text, &self.probes[0])
    }

    /// Every parameter's value for a search vector.
    pub fn values(&self, x: &[f64]) -> Vec<f64> {
        let mut v = self.all_values.clone();
        for (k, g) in self.genes.iter().enumerate() {
            v[self.gene_param[k]] = g.decode(x[k]);
        }
        v
    }

    /// `(name, value)` of every parameter for a search vector.
    pub fn overrides(&self, x: &[f64]) -> Vec<(String, f64)> {
        self.all_names.iter().cloned().zip(self.values(x)).collect()
    }

    /// The genes' decoded values only.
    pub fn gene_values(&self, x: &[f64]) -> Vec<(String, f64)> {
        self.genes.iter().zip(x).map(|(g, &v)| (g.name.clone(), g.decode(v))).collect()
    }

    /// The programs of a candidate, or `None` when a constraint fails.
    pub fn build(&self, x: &[f64]) -> Result<Option<Built>> {
        let values = self.values(x);
        if !self.constraints.iter().all(|c| c.holds(&values)) {
            return Ok(None);
        }
        let mut out = Vec::with_capacity(self.probes.len());
        for probe in &self.probes {
            out.push(Arc::new(probe.with_parameters(&values).map_err(|e| anyhow!("{}: {e}", self.game.display()))?));
        }
        let st = out[0].initial_state().map_err(|e| anyhow!("{}", e.render(&out[0])))?;
        let ok = out[0].violated_constraints(&st).map_err(|e| anyhow!("{}", e.render(&out[0])))?.is_empty();
        Ok(ok.then_some(out))
    }

    /// A uniformly random valid search vector.
    pub fn random(&self, rng: &mut Rng) -> Result<Vec<f64>> {
        for _ in 0..10_000 {
            let x: Vec<f64> = self.genes.iter().map(|_| rng.random::<f64>()).collect();
            if self.build(&x)?.is_some() {
                return Ok(x);
            }
        }
        bail!("no valid candidate in 10 000 random draws; expected satisfiable constraints")
    }
}
