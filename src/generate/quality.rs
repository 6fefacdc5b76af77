//! From games to a verdict: the tables every evaluation plays (one per distinct seating the
//! measures name), each measure's estimate over its table's games, the targets' scores and
//! quality F = Σ wᵢ·scoreᵢ / Σ wᵢ, feasibility (the games end, nobody is stuck, every
//! `[[require]]` holds), and the behaviour descriptors of a map.
//!
//! A band target scores 1 inside the band and 1 / (1 + d / tolerance) at a distance d outside,
//! so that the optimizer is pulled towards the band from anywhere; a direction target scores its
//! expression mapped linearly from `scale` onto [0, 1] (turned over for `min`). A `certain` band
//! is scored at the worse end of its expression's 95% interval.

use super::config::{GenerateConfig, TargetConfig};
use super::expr::{Estimate, Expr};
use super::play::{GameRecord, Quantity, Table};
pub use super::pool::{Counts, Pool};
use serde::{Deserialize, Serialize};

/// One evaluation of a candidate.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Eval {
    /// Quality in [0, 1] (1 when every band target holds and every direction is at its best).
    pub f: f64,
    pub feasible: bool,
    /// Why not, when infeasible.
    #[serde(default)]
    pub why: String,
    /// Each `[[measure]]`, each `[[target]]`'s expression, each `[[descriptor]]`'s.
    pub measures: Vec<Estimate>,
    pub targets: Vec<Estimate>,
    pub descriptors: Vec<Estimate>,
    /// Games per table.
    pub games: u64,
    /// How far an infeasible candidate is from feasible (0 when feasible): the share of games
    /// that did not end properly, times 10, plus each requirement's distance outside its band
    /// by its estimate, in units of the band's width (or of its bound's size, at least 1).
    #[serde(default)]
    pub violation: f64,
}

impl Eval {
    /// The key candidates are ranked by: feasible ones first, then by F.
    pub fn rank_key(&self) -> (bool, f64) {
        (self.feasible, self.f)
    }
}

/// What a look settles about a question of a sequential confirmation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    Pass,
    Fail,
    Doubt,
}

/// Scores candidates from their games.
#[derive(Clone, Debug)]
pub struct Scorer {
    pub tables: Vec<Table>,
    /// (table, quantity) of each measure.
    pub measures: Vec<(usize, usize)>,
    targets: Vec<(Expr, TargetConfig)>,
    /// (expression, at least, at most, its text, certain).
    requires: Vec<(Expr, Option<f64>, Option<f64>, String, bool)>,
    descriptors: Vec<Expr>,
    ends: bool,
    not_stuck: bool,
}

/// The band score: 1 inside `[lo, hi]`, 1 / (1 + d / tol) at distance d outside.
pub fn band_score(v: f64, lo: Option<f64>, hi: Option<f64>, tol: Option<f64>) -> f64 {
    let d = lo.map_or(0.0, |l| (l - v).max(0.0)) + hi.map_or(0.0, |h| (v - h).max(0.0));
    let size = lo.into_iter().chain(hi).map(f64::abs).fold(0.0, f64::max);
    let tol = tol.unwrap_or((0.25 * size).max(1.0));
    1.0 / (1.0 + d / tol)
}

/// Whether `v` lies in the band.
pub fn in_band(v: f64, lo: Option<f64>, hi: Option<f64>) -> bool {
    lo.is_none_or(|l| v >= l) && hi.is_none_or(|h| v <= h)
}

impl Scorer {
    /// The tables and compiled expressions of a checked config; the overlay sets the tables
    /// use come back too (the first is always the empty set).
    pub fn new(cfg: &GenerateConfig) -> (Scorer, Vec<Vec<String>>) {
        let names: Vec<&str> = cfg.measures.iter().map(|m| m.name.as_str()).collect();
        let parse = |e: &str| Expr::parse(e, &names).expect("checked when the config loads");
        let player_ix = |n: &String| cfg.players.iter().position(|p| &p.name == n).expect("checked when the config loads");
        let mut overlay_sets: Vec<Vec<String>> = vec![Vec::new()];
        let mut tables: Vec<Table> = Vec::new();
        let mut measures = Vec::new();
        for m in &cfg.measures {
            let players: Vec<usize> = m.players.iter().map(player_ix).collect();
            let mut set: Vec<String> = players.iter().flat_map(|&p| cfg.players[p].overlays.clone()).collect();
            set.sort();
            set.dedup();
            let overlay_set = match overlay_sets.iter().position(|s| s == &set) {
                Some(i) => i,
                None => {
                    overlay_sets.push(set);
                    overlay_sets.len() - 1
                }
            };
            let t = match tables.iter().position(|t| t.players == players) {
                Some(t) => t,
                None => {
                    tables.push(Table { players, overlay_set, quantities: Vec::new() });
                    tables.len() - 1
                }
            };
            let q = Quantity::of(&m.of, &m.aggregate, m.side, m.when.as_deref());
            let k = match tables[t].quantities.iter().position(|x| x == &q) {
                Some(k) => k,
                None => {
                    tables[t].quantities.push(q);
                    tables[t].quantities.len() - 1
                }
            };
            measures.push((t, k));
        }
        let scorer = Scorer {
            tables,
            measures,
            targets: cfg.targets.iter().map(|t| (parse(&t.expr), t.clone())).collect(),
            requires: cfg.requires.iter().map(|r| (parse(&r.expr), r.at_least, r.at_most, r.expr.clone(), r.certain)).collect(),
            descriptors: cfg.descriptors.iter().map(|d| parse(&d.expr)).collect(),
            ends: cfg.feasible.ends,
            not_stuck: cfg.feasible.not_stuck,
        };
        (scorer, overlay_sets)
    }

    /// The same scorer judging requirements by their estimates only (`certain` off): what
    /// `verify` asks of content on fresh seeds.
    pub fn on_estimates(&self) -> Scorer {
        let mut s = self.clone();
        for r in &mut s.requires {
            r.4 = false;
        }
        s
    }

    /// The number of behaviour descriptors (0 without a map).
    pub fn n_descriptors(&self) -> usize {
        self.descriptors.len()
    }

    /// The score of target `k` for its expression's value.
    pub fn target_score(&self, k: usize, v: f64) -> f64 {
        let t = &self.targets[k].1;
        match (&t.direction, t.scale) {
            (Some(d), Some([lo, hi])) => {
                let x = ((v - lo) / (hi - lo)).clamp(0.0, 1.0);
                if d == "max" { x } else { 1.0 - x }
            }
            _ => band_score(v, t.at_least, t.at_most, t.tolerance),
        }
    }

    /// The score of target `k` for its estimate: at the estimate, or for a `certain` band at
    /// the worse of its 95% interval's two ends.
    pub fn target_score_of(&self, k: usize, e: &Estimate) -> f64 {
        if self.targets[k].1.certain {
            let (lo, hi) = e.ci();
            self.target_score(k, lo).min(self.target_score(k, hi))
        } else {
            self.target_score(k, e.mean)
        }
    }

    /// Whether `e` reaches every target with confidence: feasible, and each target's score 1 at
    /// both ends of its interval of `z` standard errors (a band holding the whole interval; a
    /// direction at its best end even so). No targets, nothing to reach.
    pub fn target_reached(&self, e: &Eval, z: f64) -> bool {
        e.feasible
            && !self.targets.is_empty()
            && e.targets.len() == self.targets.len()
            && e.targets.iter().enumerate().all(|(k, t)| {
                let (a, b) = (t.mean - z * t.se, t.mean + z * t.se);
                a.is_finite() && b.is_finite() && self.target_score(k, a) >= 1.0 && self.target_score(k, b) >= 1.0
            })
    }

    /// Whether band target `k` holds at `v` (direction targets always do).
    pub fn target_met(&self, k: usize, v: f64) -> bool {
        let t = &self.targets[k].1;
        t.direction.is_some() || in_band(v, t.at_least, t.at_most)
    }

    /// Scores one candidate from its games: `games[t]` holds table t's records.
    pub fn score(&self, games: &[&[GameRecord]]) -> Eval {
        let measures: Vec<Estimate> =
            self.measures.iter().map(|&(t, k)| Estimate::of(&games[t].iter().map(|r| r.q[k]).collect::<Vec<_>>())).collect();
        let all = || games.iter().flat_map(|g| g.iter());
        let counts = Counts {
            games: games.first().map_or(0, |g| g.len()) as u64,
            all: all().count() as u64,
            unended: all().filter(|r| !r.ended && !r.stuck).count() as u64,
            stuck: all().filter(|r| r.stuck).count() as u64,
        };
        self.judge(measures, counts)
    }

    /// Scores one candidate from its pooled games ([`Pool`]): what [`Scorer::score`] says of the
    /// same games, up to rounding.
    pub fn score_pool(&self, pool: &Pool) -> Eval {
        let measures = self.measures.iter().map(|&(t, k)| pool.tables[t].estimate(k)).collect();
        self.judge(measures, pool.counts())
    }

    /// The verdict on a candidate's measures and game counts.
    fn judge(&self, measures: Vec<Estimate>, c: Counts) -> Eval {
        let targets: Vec<Estimate> = self.targets.iter().map(|(e, _)| e.estimate(&measures)).collect();
        let descriptors: Vec<Estimate> = self.descriptors.iter().map(|e| e.estimate(&measures)).collect();
        let wsum: f64 = self.targets.iter().map(|(_, t)| t.weight).sum();
        let f = if self.targets.is_empty() {
            1.0
        } else {
            self.targets.iter().enumerate().map(|(k, (_, t))| t.weight * self.target_score_of(k, &targets[k])).sum::<f64>() / wsum
        };
        let mut why = String::new();
        if self.ends && c.unended > 0 {
            why = format!("{} game(s) did not end by the rules (a step or turn limit, or max_moves)", c.unended);
        } else if self.not_stuck && c.stuck > 0 {
            why = format!("{} game(s) ended with nobody able to move", c.stuck);
        } else {
            for (e, lo, hi, text, certain) in &self.requires {
                let est = e.estimate(&measures);
                let v = est.mean;
                let (a, b) = est.ci();
                if !in_band(v, *lo, *hi) || (*certain && !(in_band(a, *lo, *hi) && in_band(b, *lo, *hi))) {
                    if *certain && in_band(v, *lo, *hi) {
                        why = format!(
                            "require `{text}` = {v:.4} [{a:.4}, {b:.4}]: its 95% interval leaves [{}, {}]",
                            lo.map_or("−∞".into(), |x| x.to_string()),
                            hi.map_or("∞".into(), |x| x.to_string())
                        );
                        break;
                    }
                    why = format!(
                        "require `{text}` = {v:.4} is outside [{}, {}]",
                        lo.map_or("−∞".into(), |x| x.to_string()),
                        hi.map_or("∞".into(), |x| x.to_string())
                    );
                    break;
                }
            }
        }
        let feasible = why.is_empty();
        let violation = if feasible { 0.0 } else { self.violation(&c, &measures) };
        Eval { f, feasible, why, measures, targets, descriptors, games: c.games, violation }
    }

    /// The standard error of F by the delta rule (each target's score moved by one standard
    /// error of its expression either way; targets taken as independent).
    pub fn f_se(&self, targets: &[Estimate]) -> f64 {
        let wsum: f64 = self.targets.iter().map(|(_, t)| t.weight).sum();
        if wsum <= 0.0 || targets.len() != self.targets.len() {
            return 0.0;
        }
        let var: f64 = self
            .targets
            .iter()
            .enumerate()
            .map(|(k, (_, t))| {
                let e = &targets[k];
                let d = (self.target_score(k, e.mean + e.se) - self.target_score(k, e.mean - e.se)) / 2.0;
                (t.weight / wsum * d).powi(2)
            })
            .sum();
        var.sqrt()
    }

    /// What a look at a candidate's pooled games settles about its requirements (a sequential
    /// confirmation, [`super::sequential`]): `Fail` when a game did not end (or was stuck, as the
    /// config forbids), or a requirement's one-sided `z_fail` interval lies beyond a bound — for a
    /// `certain` requirement, beyond what could still pass its 95% interval at `cap` games per
    /// table (the futility bound); `Pass` when every requirement's `z` interval (z ≥ 1.96) lies
    /// inside its band; else `Doubt`.
    pub fn settle_requirements(&self, e: &Eval, counts: &Counts, z: f64, z_fail: f64, cap: u64) -> Settled {
        if (self.ends && counts.unended > 0) || (self.not_stuck && counts.stuck > 0) {
            return Settled::Fail;
        }
        let mut verdict = Settled::Pass;
        for (expr, lo, hi, _, certain) in &self.requires {
            let est = expr.estimate(&e.measures);
            let (m, se) = (est.mean, est.se);
            if m.is_nan() {
                return Settled::Fail;
            }
            // A certain requirement passes at the cap only if its mean is 1.96 standard errors
            // (of `cap` games) inside the band.
            let margin = if *certain && counts.games > 0 { 1.96 * se * (counts.games as f64 / cap.max(1) as f64).sqrt() } else { 0.0 };
            if lo.is_some_and(|l| m + z_fail * se < l + margin) || hi.is_some_and(|h| m - z_fail * se > h - margin) {
                return Settled::Fail;
            }
            if !(lo.is_none_or(|l| m - z * se >= l) && hi.is_none_or(|h| m + z * se <= h)) {
                verdict = Settled::Doubt;
            }
        }
        verdict
    }

    /// [`Eval::violation`] of a candidate's games.
    fn violation(&self, c: &Counts, measures: &[Estimate]) -> f64 {
        let share = |bad: u64| bad as f64 / c.all.max(1) as f64;
        let mut v = 0.0;
        if self.ends {
            v += 10.0 * share(c.unended);
        }
        if self.not_stuck {
            v += 10.0 * share(c.stuck);
        }
        for (e, lo, hi, _, _) in &self.requires {
            let x = e.estimate(measures).mean;
            let unit = match (lo, hi) {
                (Some(l), Some(h)) if h > l => h - l,
                _ => lo.iter().chain(hi).map(|b| b.abs()).fold(1.0, f64::max),
            };
            let d = lo.map_or(0.0, |l| (l - x).max(0.0)) + hi.map_or(0.0, |h| (x - h).max(0.0));
            v += if d.is_nan() { 10.0 } else { d / unit };
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn scorer(require: &str) -> Scorer {
        let text = format!(
            "[generate]\nname = \"t\"\ngame = \"g.wgdl\"\nparams = [\"a.*\"]\nmax_evaluations = 1\n\n[[player]]\nname = \"p\"\nkind = \"random\"\n\n[[measure]]\nname = \"m\"\nplayers = [\"p\"]\nof = \"game.x\"\n\n[[target]]\nexpr = \"m\"\nat_least = 0.45\nat_most = 0.55\n\n[[require]]\nexpr = \"m\"\nat_least = 0.4\nat_most = 0.6\n{require}"
        );
        Scorer::new(&GenerateConfig::parse(Path::new("t.toml"), &text).unwrap()).0
    }

    fn games(xs: &[f64]) -> Vec<GameRecord> {
        xs.iter().map(|&x| GameRecord { q: vec![x], ended: true, stuck: false }).collect()
    }

    #[test]
    fn violation_is_the_distance_to_feasible_in_band_widths_and_unfinished_games_weigh_most() {
        let loose = scorer("");
        assert_eq!(loose.score(&[&games(&[0.5, 0.5])]).violation, 0.0);
        // Mean 0.8 against the band [0.4, 0.6]: 0.2 outside, one band width.
        let e = loose.score(&[&games(&[0.8, 0.8])]);
        assert!(!e.feasible && (e.violation - 1.0).abs() < 1e-12, "{e:?}");
        let nearer = loose.score(&[&games(&[0.7, 0.7])]);
        assert!(nearer.violation < e.violation);
        // One of two games did not end: 10 × ½, plus its distance.
        let mut g = games(&[0.7, 0.7]);
        g[0].ended = false;
        assert!((loose.score(&[&g]).violation - (5.0 + 0.5)).abs() < 1e-9);
    }

    #[test]
    fn a_certain_requirement_needs_its_whole_interval_and_verify_reads_the_estimate() {
        let sure = games(&[0.49, 0.51, 0.5, 0.5, 0.52, 0.48]);
        let wide = games(&[0.1, 0.9, 0.5, 0.5, 0.2, 0.8]);
        let loose = scorer("");
        let strict = scorer("certain = true");
        for s in [&loose, &strict] {
            let e = s.score(&[&sure]);
            assert!(e.feasible && e.f == 1.0, "{e:?}");
        }
        // The same mean, a wide interval: feasible on the estimate, not when certainty is asked.
        assert!(loose.score(&[&wide]).feasible);
        let e = strict.score(&[&wide]);
        assert!(!e.feasible && e.why.contains("95% interval"), "{}", e.why);
        assert!(strict.on_estimates().score(&[&wide]).feasible);
        // Outside the band on the estimate: infeasible either way.
        let off = games(&[0.7, 0.7, 0.7]);
        assert!(!loose.score(&[&off]).feasible && !strict.score(&[&off]).feasible);
        // A band target's score falls off outside the band: 1 / (1 + d / tolerance).
        assert!((band_score(0.65, Some(0.45), Some(0.55), Some(0.1)) - 0.5).abs() < 1e-12);
        assert_eq!(band_score(0.5, Some(0.45), Some(0.55), None), 1.0);
    }
}
