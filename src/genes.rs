//! The declared parameters of a game as genes, shared by every generator (balance, generate):
//! a [`Gene`] maps a number in [0, 1] linearly onto a parameter's range and rounds whole-number
//! parameters; [`glob`] picks parameters by patterns with `*`; a [`LinearConstraint`] is a
//! config's validity rule over parameter values (`a.x + 2 <= b.y`); [`held_values`] checks a
//! config's `[parameters]` against a compiled program's declarations and [`game_hash`] names the
//! game a checkpoint or job belongs to. [`Codec`] is the one gene codec: the game read and
//! compiled once (one program per overlay set), the genes a driver picks, the held values, the
//! constraints; a search vector becomes parameter values and compiled programs here. Balance's
//! teams and generate's overlay sets are layers over it (`balance::dna`, `generate::codec`).
//! Plain data over a program's declarations, no games.

use crate::rng::Rng;
use crate::wgdl::program::ParamInfo;
use crate::wgdl::{self, CompileOptions, Program};
use anyhow::{Result, anyhow, bail};
use rand::RngExt;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A parameter as a game declares it: a WGDL `parameter` line, or an external game's hello
/// (docs/bridge.md), whose parameters have no value of their own here.
#[derive(Clone, Debug)]
pub struct Declared {
    pub name: String,
    pub min: f64,
    pub max: f64,
    pub integer: bool,
    /// The value when nothing sets it.
    pub default: f64,
}

impl Declared {
    fn of(p: &ParamInfo) -> Declared {
        Declared { name: p.name.clone(), min: p.min, max: p.max, integer: p.integer, default: p.default }
    }
}

#[derive(Clone, Debug)]
pub struct Gene {
    /// `description.attribute`.
    pub name: String,
    pub min: f64,
    pub max: f64,
    pub integer: bool,
}

impl Gene {
    pub fn decode(&self, g: f64) -> f64 {
        let v = self.min + g.clamp(0.0, 1.0) * (self.max - self.min);
        if self.integer { v.round().clamp(self.min.ceil(), self.max.floor()) } else { v }
    }
    pub fn encode(&self, v: f64) -> f64 {
        if self.max > self.min { ((v - self.min) / (self.max - self.min)).clamp(0.0, 1.0) } else { 0.0 }
    }
}

/// `a + 2 <= b`: sums of numbers and parameter names on both sides of a comparison.
#[derive(Clone, Debug)]
pub struct LinearConstraint {
    pub text: String,
    lhs: Vec<(f64, Option<usize>)>,
    op: String,
    rhs: Vec<(f64, Option<usize>)>,
}

impl LinearConstraint {
    pub fn parse(text: &str, names: &[String]) -> Result<LinearConstraint, String> {
        let ops = ["<=", ">=", "==", "!=", "<", ">"];
        let Some((at, op)) = ops.iter().filter_map(|op| text.find(op).map(|i| (i, *op))).min_by_key(|&(i, op)| (i, usize::MAX - op.len()))
        else {
            return Err("no comparison; expected `<=`, `<`, `>=`, `>`, `==` or `!=` between two sums".into());
        };
        let side = |s: &str| -> Result<Vec<(f64, Option<usize>)>, String> {
            let mut out = Vec::new();
            let s = s.replace('-', "+-");
            for term in s.split('+').map(str::trim).filter(|t| !t.is_empty()) {
                let (sign, t) = if let Some(t) = term.strip_prefix('-') { (-1.0, t.trim()) } else { (1.0, term) };
                let (coef, name) = match t.split_once('*') {
                    Some((c, n)) => (c.trim().parse::<f64>().map_err(|_| format!("`{c}` is not a number"))?, Some(n.trim())),
                    None => match t.parse::<f64>() {
                        Ok(v) => (v, None),
                        Err(_) => (1.0, Some(t)),
                    },
                };
                let idx = match name {
                    Some(n) => {
                        Some(names.iter().position(|x| x == n).ok_or_else(|| format!("`{n}` is not a declared parameter of the game"))?)
                    }
                    None => None,
                };
                out.push((sign * coef, idx));
            }
            if out.is_empty() {
                return Err("an empty side; expected numbers and parameter names joined by + or -".into());
            }
            Ok(out)
        };
        Ok(LinearConstraint { text: text.to_string(), lhs: side(&text[..at])?, op: op.to_string(), rhs: side(&text[at + op.len()..])? })
    }

    pub fn holds(&self, values: &[f64]) -> bool {
        let sum = |s: &[(f64, Option<usize>)]| s.iter().map(|&(c, i)| c * i.map_or(1.0, |i| values[i])).sum::<f64>();
        let (a, b) = (sum(&self.lhs), sum(&self.rhs));
        match self.op.as_str() {
            "<=" => a <= b + 1e-9,
            ">=" => a + 1e-9 >= b,
            "<" => a < b,
            ">" => a > b,
            "==" => (a - b).abs() < 1e-9,
            _ => (a - b).abs() >= 1e-9,
        }
    }
}

/// Every declared parameter's value: the file's, or the one a config's `[parameters]` holds it
/// at. An error names the offending key and says what was expected (its caller adds where).
pub fn held_values(params: &[Declared], held: &BTreeMap<String, f64>) -> Result<Vec<f64>, (String, String)> {
    let mut values: Vec<f64> = params.iter().map(|p| p.default).collect();
    for (name, &v) in held {
        let Some(i) = params.iter().position(|p| &p.name == name) else {
            let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
            return Err((name.clone(), format!("`{name}` is not a declared parameter; expected one of: {}", names.join(", "))));
        };
        let p = &params[i];
        if v < p.min || v > p.max || (p.integer && v.fract() != 0.0) {
            let kind = if p.integer { "a whole number" } else { "a number" };
            return Err((name.clone(), format!("{name} = {v}; expected {kind} from {} to {}", p.min, p.max)));
        }
        values[i] = v;
    }
    Ok(values)
}

/// A hash of a game's text and its compiled map: what a checkpoint and a job belong to.
pub fn game_hash(text: &str, program: &Program) -> u64 {
    let map = program.hex.as_ref().map(|m| m.render(|_| None)).unwrap_or_default();
    fnv(text.bytes().chain(map.bytes()))
}

/// FNV-1a over bytes.
fn fnv(bytes: impl Iterator<Item = u8>) -> u64 {
    bytes.fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// `pattern` with `*` standing for any run of characters (`red*`, `*.maxHp`) matches `name`.
pub fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.starts_with(head) && name.len() >= head.len() && {
                let rest = &name[head.len()..];
                (0..=rest.len()).any(|i| rest.is_char_boundary(i) && glob(tail, &rest[i..]))
            }
        }
    }
}

/// The one gene codec: a game's declared parameters, the genes a driver picked among them and
/// the rules a candidate must keep. A *DNA* has one number in [0, 1] per gene; the *search
/// vector* holds the evolving genes only (the others stay at their template value). A driver
/// builds it in three steps: [`Codec::open`] (read and compile the game), [`Codec::hold`] (`[parameters]`),
/// [`Codec::add_gene`] per picked parameter, [`Codec::add_constraints`].
#[derive(Clone, Debug)]
pub struct Codec {
    pub game: PathBuf,
    text: Arc<String>,
    /// Every declared parameter, its name and the value it has when no gene sets it.
    declared: Vec<Declared>,
    names: Vec<String>,
    held: Vec<f64>,
    pub genes: Vec<Gene>,
    /// Index in `names` of each gene.
    gene_param: Vec<usize>,
    /// Genes the optimizers move, in gene order.
    pub evolving: Vec<usize>,
    /// The full DNA when nothing evolves: every gene at its file / `[parameters]` value.
    pub template: Vec<f64>,
    pub constraints: Vec<LinearConstraint>,
    /// The compiled game of each overlay set at the file's values (index 0: the game as written);
    /// none for a game that runs in its own process ([`Codec::declared`]).
    pub probes: Vec<Arc<Program>>,
    options: CompileOptions,
}

impl Codec {
    /// Reads and compiles `game` with `options` (`at_game` says where the config names it);
    /// every parameter is held at the file's value until [`Codec::hold`].
    pub fn open(game: &Path, options: CompileOptions, at_game: &dyn Fn() -> String) -> Result<Codec> {
        let text = crate::input::read_text(game).map_err(|e| anyhow!("{}: {e}", at_game()))?;
        let probe = wgdl::compile_str_with(&game.display().to_string(), &text, &options).map_err(|e| anyhow!("{e}"))?.program;
        Ok(Codec {
            game: game.to_path_buf(),
            text: Arc::new(text),
            declared: probe.params.iter().map(Declared::of).collect(),
            names: probe.params.iter().map(|p| p.name.clone()).collect(),
            held: probe.params.iter().map(|p| p.default).collect(),
            genes: Vec::new(),
            gene_param: Vec::new(),
            evolving: Vec::new(),
            template: Vec::new(),
            constraints: Vec::new(),
            probes: vec![probe],
            options,
        })
    }

    /// The codec of a game that runs in its own process: its source's text (what a checkpoint
    /// belongs to) and the parameters it declares, with no program (a candidate builds to its
    /// values alone, checked against the config's constraints).
    pub fn declared(game: &Path, text: String, declared: Vec<Declared>) -> Codec {
        Codec {
            game: game.to_path_buf(),
            text: Arc::new(text),
            names: declared.iter().map(|p| p.name.clone()).collect(),
            held: declared.iter().map(|p| p.default).collect(),
            declared,
            genes: Vec::new(),
            gene_param: Vec::new(),
            evolving: Vec::new(),
            template: Vec::new(),
            constraints: Vec::new(),
            probes: Vec::new(),
            options: CompileOptions::default(),
        }
    }

    /// Holds every parameter a config's `[parameters]` names at its value (`at_held` says where
    /// a key is); before any gene is added.
    pub fn hold(&mut self, held: &BTreeMap<String, f64>, at_held: &dyn Fn(&str) -> String) -> Result<()> {
        self.held =
            held_values(&self.declared, held).map_err(|(key, msg)| anyhow!("{}: {msg} ({})", at_held(&key), self.game.display()))?;
        Ok(())
    }

    /// The game as written, compiled at the file's values.
    pub fn probe(&self) -> &Arc<Program> {
        &self.probes[0]
    }

    /// Every declared parameter's name, in declaration order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Compiles the game once more with `overlays` switched on: a candidate's programs then
    /// hold one per overlay set, in the order they were added.
    pub fn add_overlay_set(&mut self, overlays: &[String]) -> Result<()> {
        let options = CompileOptions { overlays: overlays.to_vec(), ..self.options.clone() };
        let p = wgdl::compile_str_with(&self.game.display().to_string(), &self.text, &options).map_err(|e| anyhow!("{e}"))?.program;
        if p.params.len() != self.names.len() {
            bail!(
                "{}: the overlays {overlays:?} change the game's parameters; expected parameter lines outside overlays",
                self.game.display()
            );
        }
        self.probes.push(p);
        Ok(())
    }

    /// Makes parameter `param` (its index in [`Codec::names`]) a gene over its declared range,
    /// narrowed by `range` (`at` says where the config gives it); an evolving gene is moved by
    /// the search, the others stay at their held value. Returns the gene's index.
    pub fn add_gene(&mut self, param: usize, range: Option<[f64; 2]>, evolves: bool, at: &dyn Fn() -> String) -> Result<usize> {
        let p = &self.declared[param];
        let n = &self.names[param];
        let (mut lo, mut hi) = (p.min, p.max);
        if let Some([a, b]) = range {
            if a > b {
                bail!("{}: {n} = [{a}, {b}] is reversed; expected [low, high] with low ≤ high", at());
            }
            if a < p.min || b > p.max {
                bail!("{}: {n} = [{a}, {b}] leaves the declared range {} to {}; expected a range inside it", at(), p.min, p.max);
            }
            if p.integer && a.ceil() > b.floor() {
                bail!("{}: {n} = [{a}, {b}] holds no whole number; expected a range with at least one", at());
            }
            (lo, hi) = (a, b);
        }
        let gene = Gene { name: n.clone(), min: lo, max: hi, integer: p.integer };
        self.template.push(gene.encode(self.held[param]));
        if evolves {
            self.evolving.push(self.genes.len());
        }
        self.genes.push(gene);
        self.gene_param.push(param);
        Ok(self.genes.len() - 1)
    }

    /// Parses a config's validity rules over parameter values (`at` says where they are).
    pub fn add_constraints(&mut self, constraints: &[String], at: &str) -> Result<()> {
        for c in constraints {
            self.constraints.push(LinearConstraint::parse(c, &self.names).map_err(|e| anyhow!("{at}: constraint \"{c}\": {e}"))?);
        }
        Ok(())
    }

    /// A hash of the game's text and its compiled map: what a checkpoint and a job belong to.
    pub fn game_hash(&self) -> u64 {
        match self.probes.first() {
            Some(p) => game_hash(&self.text, p),
            None => fnv(self.text.bytes()),
        }
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

    /// Every parameter's value for a full DNA (evolving genes decoded, the rest as held: a gene
    /// that never evolves keeps its held value exactly, with no encode/decode round trip).
    pub fn values(&self, dna: &[f64]) -> Vec<f64> {
        let mut v = self.held.clone();
        for &k in &self.evolving {
            v[self.gene_param[k]] = self.genes[k].decode(dna[k]);
        }
        v
    }

    /// `(name, value)` of every parameter for a full DNA.
    pub fn overrides(&self, dna: &[f64]) -> Vec<(String, f64)> {
        self.names.iter().cloned().zip(self.values(dna)).collect()
    }

    /// The value of gene `k`'s parameter among `values` (from [`Codec::values`]).
    pub fn gene_value(&self, k: usize, values: &[f64]) -> f64 {
        values[self.gene_param[k]]
    }

    /// Parameters that are no gene and their held values.
    pub fn others(&self) -> Vec<(String, f64)> {
        (0..self.names.len()).filter(|i| !self.gene_param.contains(i)).map(|i| (self.names[i].clone(), self.held[i])).collect()
    }

    /// A full DNA's programs (one per overlay set, the values written into each compiled probe:
    /// nothing is compiled again; none for a game in its own process), or `None` when a
    /// constraint of the config or the game fails.
    pub fn build(&self, dna: &[f64]) -> Result<Option<Vec<Arc<Program>>>> {
        let values = self.values(dna);
        if !self.constraints.iter().all(|c| c.holds(&values)) {
            return Ok(None);
        }
        if self.probes.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let mut out = Vec::with_capacity(self.probes.len());
        for probe in &self.probes {
            out.push(Arc::new(probe.with_parameters(&values).map_err(|e| anyhow!("{}: {e}", self.game.display()))?));
        }
        let st = out[0].initial_state().map_err(|e| anyhow!("{}", e.render(&out[0])))?;
        let ok = out[0].violated_constraints(&st).map_err(|e| anyhow!("{}", e.render(&out[0])))?.is_empty();
        Ok(ok.then_some(out))
    }

    /// A uniformly random valid search vector and its programs (redrawn whole until valid, as
    /// HexMage); `what` names a candidate in the error.
    pub fn random(&self, rng: &mut Rng, what: &str) -> Result<(Vec<f64>, Vec<Arc<Program>>)> {
        for _ in 0..10_000 {
            let x: Vec<f64> = self.evolving.iter().map(|_| rng.random::<f64>()).collect();
            if let Some(p) = self.build(&self.full(&x))? {
                return Ok((x, p));
            }
        }
        bail!("no valid {what} in 10 000 random draws; expected satisfiable constraints")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_prefixes_and_infixes() {
        assert!(glob("red*", "red1a.dmg"));
        assert!(glob("*.maxHp", "blue2.maxHp"));
        assert!(glob("red1a.dmg", "red1a.dmg"));
        assert!(!glob("red*", "blue1.maxHp"));
        assert!(!glob("*.maxHp", "blue2.maxAp"));
    }

    #[test]
    fn genes_decode_into_range_and_round() {
        let g = Gene { name: "x".into(), min: 5.0, max: 30.0, integer: true };
        assert_eq!(g.decode(0.0), 5.0);
        assert_eq!(g.decode(1.0), 30.0);
        assert_eq!(g.decode(0.5), 18.0); // 17.5 rounds to even-away: 18
        assert_eq!(g.decode(2.0), 30.0);
        assert!((g.encode(g.decode(0.52)) - 0.52).abs() < 0.03);
    }

    #[test]
    fn linear_constraints_parse_and_hold() {
        let names = vec!["a.x".to_string(), "b.y".to_string()];
        let c = LinearConstraint::parse("a.x + 2 <= b.y", &names).unwrap();
        assert!(c.holds(&[3.0, 5.0]));
        assert!(!c.holds(&[4.0, 5.0]));
        let c = LinearConstraint::parse("2*a.x - b.y > 0", &names).unwrap();
        assert!(c.holds(&[3.0, 5.0]));
        assert!(!c.holds(&[2.0, 5.0]));
        assert!(LinearConstraint::parse("a.x <= c.z", &names).unwrap_err().contains("c.z"));
        assert!(LinearConstraint::parse("a.x", &names).is_err());
    }
}
