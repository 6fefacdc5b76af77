//! A candidate's games pooled: per table the number of games, how many did not end or were
//! stuck, and each quantity's running mean and sum of squared deviations (Welford; batches
//! merged by Chan et al.'s rule). A pool grows as the candidate plays more games — the looks of a
//! sequential confirmation, an elite's games gathered over a run — and scores as the games it
//! holds would ([`super::quality::Scorer::score_pool`]), without keeping them.

use super::expr::Estimate;
use super::play::GameRecord;
use serde::{Deserialize, Serialize};

/// The game counts a verdict reads: games per table, games in all, games that did not end by
/// the rules (nor stuck), games that ended stuck.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    pub games: u64,
    pub all: u64,
    pub unended: u64,
    pub stuck: u64,
}

/// One quantity's running moments.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Moments {
    pub mean: f64,
    /// Σ (x − mean)².
    pub m2: f64,
}

/// One table's pooled games.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TablePool {
    pub n: u64,
    pub unended: u64,
    pub stuck: u64,
    pub q: Vec<Moments>,
}

impl TablePool {
    /// Adds a batch of games (Chan et al.'s merge of the batch's moments into the pool's).
    pub fn add(&mut self, games: &[GameRecord]) {
        let m = games.len() as u64;
        if m == 0 {
            return;
        }
        let k = games[0].q.len();
        if self.q.len() < k {
            self.q.resize(k, Moments::default());
        }
        let (n, mf) = (self.n as f64, m as f64);
        for (j, pooled) in self.q.iter_mut().enumerate().take(k) {
            let mean = games.iter().map(|r| r.q[j]).sum::<f64>() / mf;
            let m2 = games.iter().map(|r| (r.q[j] - mean) * (r.q[j] - mean)).sum::<f64>();
            let d = mean - pooled.mean;
            let total = n + mf;
            pooled.m2 += m2 + d * d * n * mf / total;
            pooled.mean += d * mf / total;
        }
        self.n += m;
        self.unended += games.iter().filter(|r| !r.ended && !r.stuck).count() as u64;
        self.stuck += games.iter().filter(|r| r.stuck).count() as u64;
    }

    /// Quantity `k`'s estimate: the mean and its standard error, as [`Estimate::of`] gives for
    /// the same games.
    pub fn estimate(&self, k: usize) -> Estimate {
        let Some(m) = self.q.get(k) else { return Estimate { mean: 0.0, se: 0.0 } };
        let n = self.n as f64;
        let se = if self.n > 1 { (m.m2.max(0.0) / (n - 1.0) / n).sqrt() } else { 0.0 };
        Estimate { mean: m.mean, se }
    }
}

/// A candidate's pooled games, table by table.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Pool {
    pub tables: Vec<TablePool>,
}

impl Pool {
    /// The pool of games given table by table.
    pub fn of(games: &[Vec<GameRecord>]) -> Pool {
        let mut p = Pool::default();
        p.add(games);
        p
    }

    /// Adds games given table by table.
    pub fn add(&mut self, games: &[Vec<GameRecord>]) {
        if self.tables.len() < games.len() {
            self.tables.resize(games.len(), TablePool::default());
        }
        for (t, g) in self.tables.iter_mut().zip(games) {
            t.add(g);
        }
    }

    /// Games per table (the first table's: every table plays as many).
    pub fn games(&self) -> u64 {
        self.tables.first().map_or(0, |t| t.n)
    }

    pub fn counts(&self) -> Counts {
        Counts {
            games: self.games(),
            all: self.tables.iter().map(|t| t.n).sum(),
            unended: self.tables.iter().map(|t| t.unended).sum(),
            stuck: self.tables.iter().map(|t| t.stuck).sum(),
        }
    }

    /// Whether every number is one a pool can hold (a checkpoint read back is checked with it).
    pub fn check(&self) -> Result<(), String> {
        for (i, t) in self.tables.iter().enumerate() {
            if t.unended + t.stuck > t.n {
                return Err(format!(
                    "pool table {i} counts {} unended and {} stuck of {} games; expected at most its games",
                    t.unended, t.stuck, t.n
                ));
            }
            if t.q.iter().any(|m| !(m.mean.is_finite() && m.m2.is_finite() && m.m2 >= 0.0)) {
                return Err(format!("pool table {i} holds a moment that is not a finite number (m2 ≥ 0)"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(x: f64, y: f64, ended: bool) -> GameRecord {
        GameRecord { q: vec![x, y], ended, stuck: false }
    }

    #[test]
    fn a_pool_grown_in_batches_estimates_what_the_games_together_do() {
        let games: Vec<GameRecord> = (0..23).map(|i| rec((i * 7 % 11) as f64, 1000.0 + (i % 3) as f64 * 250.0, i != 5)).collect();
        let mut p = Pool::default();
        for batch in [&games[..1], &games[1..8], &games[8..9], &games[9..]] {
            p.add(&[batch.to_vec()]);
        }
        for k in 0..2 {
            let want = Estimate::of(&games.iter().map(|r| r.q[k]).collect::<Vec<_>>());
            let got = p.tables[0].estimate(k);
            assert!((got.mean - want.mean).abs() < 1e-9 && (got.se - want.se).abs() < 1e-9, "{got:?} vs {want:?}");
        }
        assert_eq!(p.counts(), Counts { games: 23, all: 23, unended: 1, stuck: 0 });
        assert!(p.check().is_ok());
        p.tables[0].unended = 40;
        assert!(p.check().unwrap_err().contains("at most its games"));
    }
}
