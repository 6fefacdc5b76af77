//! Genes for any WGDL game: [`crate::genes::Codec`] with overlay sets as a layer over it. The
//! declared parameters that `params` names (by pattern) are the search vector, each a number in
//! [0, 1] mapped onto its range (narrowed by `[ranges]`); `[parameters]` holds others at a
//! value. A candidate is valid when the config's `constraints` and the game's `constraint` lines
//! hold; [`crate::genes::Codec::build`] writes its values into the compiled program of every overlay set the
//! players need (play styles switch tagged lines on), so a candidate is never compiled again.

use super::config::{GenerateConfig, locate};
use crate::genes::glob;
use crate::rng::Rng;
use crate::wgdl::{CompileOptions, Program};
use anyhow::{Result, bail};
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

/// A candidate's programs, one per overlay set (index 0: the game as written).
pub type Built = Vec<Arc<Program>>;

/// The generic codec (every gene evolves: a search vector is a full DNA) and the overlay sets
/// its probes were compiled with.
#[derive(Clone, Debug)]
pub struct Codec {
    genes: crate::genes::Codec,
    pub overlay_sets: Vec<Vec<String>>,
}

impl Deref for Codec {
    type Target = crate::genes::Codec;
    fn deref(&self) -> &crate::genes::Codec {
        &self.genes
    }
}

impl Codec {
    /// The codec of a checked config; `overlay_sets` are the sets the tables play with (the
    /// first must be empty).
    pub fn new(cfg: &GenerateConfig, cfg_path: &Path, cfg_text: &str, overlay_sets: &[Vec<String>]) -> Result<Codec> {
        let at = |table: &str, nth: usize, key: &str| locate(cfg_path, cfg_text, table, nth, key);
        let game = cfg.generate.game.clone();
        let options = CompileOptions {
            base_dir: game.parent().map(Path::to_path_buf),
            turn_order: cfg.generate.turn_order.clone(),
            ..CompileOptions::default()
        };
        let mut codec = crate::genes::Codec::open(&game, options, &|| at("generate", 0, "game"))?;
        let base = codec.probe().clone();
        if base.params.is_empty() {
            bail!("{}: {} declares no `parameter`; expected parameters to generate", at("generate", 0, "game"), game.display());
        }
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
            codec.add_overlay_set(set)?;
        }
        codec.hold(&cfg.parameters, &|key| at("parameters", 0, key))?;
        let all_names = codec.names().to_vec();
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
        for (i, n) in all_names.iter().enumerate() {
            if cfg.generate.params.iter().any(|p| glob(p, n)) && !cfg.parameters.contains_key(n) {
                codec.add_gene(i, cfg.ranges.get(n).copied(), true, &|| at("ranges", 0, n))?;
            }
        }
        if codec.genes.is_empty() {
            bail!("{}: every parameter `params` names is held in [parameters]; expected at least one gene", at("generate", 0, "params"));
        }
        for name in cfg.ranges.keys() {
            if !codec.genes.iter().any(|g| &g.name == name) {
                bail!("{}: `{name}` is not a gene (not declared, not in `params`, or held); expected a gene's name", at("ranges", 0, name));
            }
        }
        codec.add_constraints(&cfg.constraints, &at("", 0, "constraints"))?;
        Ok(Codec { genes: codec, overlay_sets: overlay_sets.to_vec() })
    }

    /// The genes' decoded values only.
    pub fn gene_values(&self, x: &[f64]) -> Vec<(String, f64)> {
        self.genes.genes.iter().zip(x).map(|(g, &v)| (g.name.clone(), g.decode(v))).collect()
    }

    /// A uniformly random valid search vector.
    pub fn random(&self, rng: &mut Rng) -> Result<Vec<f64>> {
        Ok(self.genes.random(rng, "candidate")?.0)
    }
}
