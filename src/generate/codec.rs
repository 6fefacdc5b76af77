//! Genes for any WGDL game: [`crate::genes::Codec`] with overlay sets as a layer over it. The
//! declared parameters that `params` names (by pattern) are the search vector, each a number in
//! [0, 1] mapped onto its range (narrowed by `[ranges]`); `[parameters]` holds others at a
//! value. A candidate is valid when the config's `constraints` and the game's `constraint` lines
//! hold; [`crate::genes::Codec::build`] writes its values into the compiled program of every overlay set the
//! players need (play styles switch tagged lines on), so a candidate is never compiled again.
//! A game in its own process has no program: its hello declares the parameters, and a
//! candidate is its values alone.

use super::config::{GenerateConfig, locate};
use crate::bridge::protocol::Hello;
use crate::genes::{Declared, glob};
use crate::rng::Rng;
use crate::wgdl::{CompileOptions, Program};
use anyhow::{Result, bail};
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

/// A candidate: its programs, one per overlay set (index 0: the game as written; none for a
/// game in its own process), and every parameter's value.
#[derive(Clone, Debug)]
pub struct Built {
    pub programs: Vec<Arc<Program>>,
    pub values: Vec<(String, f64)>,
}

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
    pub fn new(
        cfg: &GenerateConfig,
        cfg_path: &Path,
        cfg_text: &str,
        overlay_sets: &[Vec<String>],
        hello: Option<&Hello>,
    ) -> Result<Codec> {
        let at = |table: &str, nth: usize, key: &str| locate(cfg_path, cfg_text, table, nth, key);
        let game = cfg.generate.game.clone();
        let (mut codec, all_names) = match hello {
            Some(hello) => external(cfg, hello, &at)?,
            None => {
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
                let names = codec.names().to_vec();
                (codec, names)
            }
        };
        codec.hold(&cfg.parameters, &|key| at("parameters", 0, key))?;
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
        for (i, n) in codec.names().to_vec().iter().enumerate() {
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

/// The codec of a game in its own process: the parameters its hello declares that the config
/// names (genes by `params`, held ones by `[parameters]`; the others keep the game's own
/// values, never sent), and every play style or variant the players name checked against it.
/// Returns the codec and every declared name (for the errors).
fn external(cfg: &GenerateConfig, hello: &Hello, at: &dyn Fn(&str, usize, &str) -> String) -> Result<(crate::genes::Codec, Vec<String>)> {
    let game = &cfg.generate.game;
    let text = crate::input::read_text(game).map_err(|e| anyhow::anyhow!("{}: {e}", at("generate", 0, "game")))?;
    if hello.params.is_empty() {
        bail!(
            "{}: game {:?} declares no parameter in its hello; expected parameters to generate",
            at("external", 0, "command"),
            hello.game
        );
    }
    crate::bridge::config::check_params(hello, &cfg.parameters, |n| at("parameters", 0, n))?;
    for (k, p) in cfg.players.iter().enumerate() {
        let styles = p.overlays.iter().filter(|o| hello.styles.contains(o)).count();
        let variants = p.overlays.iter().filter(|o| hello.variants.contains(o)).count();
        if let Some(o) = p.overlays.iter().find(|o| !hello.styles.contains(o) && !hello.variants.contains(o)) {
            let known: Vec<&str> = hello.styles.iter().chain(&hello.variants).map(String::as_str).collect();
            bail!(
                "{}: \"{o}\" is neither a play style nor a design variant of game {:?}; expected one of: {}",
                at("player", k, "overlays"),
                hello.game,
                if known.is_empty() { "(it declares none)".to_string() } else { known.join(", ") }
            );
        }
        if styles > 1 || variants > 1 {
            bail!("{}: {:?}; expected at most one play style and one design variant", at("player", k, "overlays"), p.overlays);
        }
    }
    let used = |n: &str| cfg.generate.params.iter().any(|p| glob(p, n)) || cfg.parameters.contains_key(n);
    let declared = hello
        .params
        .iter()
        .filter(|p| used(&p.name))
        .map(|p| {
            let mid = (p.min + p.max) / 2.0;
            let default = if p.integer { mid.floor().max(p.min.ceil()) } else { mid };
            Declared { name: p.name.clone(), min: p.min, max: p.max, integer: p.integer, default }
        })
        .collect();
    let all = hello.params.iter().map(|p| p.name.clone()).collect();
    Ok((crate::genes::Codec::declared(game, text, declared), all))
}
