//! A noise-aware map (`[qd] revisit = K`, with `confirm = "sequential"`; Justesen et al. 2019's
//! adaptive sampling, Flageat et al. 2023's archive-sampling): each iteration the K elites
//! holding the fewest games, while they hold fewer than `confirm_games` per table, play `games`
//! more per table on fresh seeds. Their pools grow, their evaluations are the pooled games', and
//! the map follows the evidence: an elite its games no longer show feasible leaves its cell, one
//! whose pooled descriptors now fall in another cell moves there (kept if it beats that cell's
//! elite by its estimate, else dropped). A challenger then races against the pooled estimate.
//!
//! [`grow`] does the same for `cma`'s one answer under `stop = "target"`, doubling its games.
//!
//! Without it, an elite accepted on its screening games (a candidate clear by far) keeps the
//! numbers of those few games for the rest of the run: its descriptors place it where a lucky
//! draw put it, and its quality bars the cell against better challengers.

use super::archive::{Archive, Elite};
use super::play::GameRecord;
use super::quality::Scorer;
use anyhow::Result;

/// What revisiting did to the map.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Revisited {
    /// Elites that played more games.
    pub elites: u64,
    /// Games played in all (every table).
    pub games: u64,
    /// Elites that left the map (no longer feasible on their games, or moved into a cell whose
    /// elite is better).
    pub evicted: u64,
    /// Elites that moved to another cell and stayed.
    pub moved: u64,
}

/// The cells to revisit: up to `k` elites with pools of fewer than `cap` games per table, the
/// fewest first (ties by cell).
pub fn pick(archive: &Archive, k: usize, cap: u64) -> Vec<usize> {
    let mut open: Vec<(u64, usize)> =
        archive.cells.iter().filter_map(|(&c, e)| e.pool.as_ref().map(|p| (p.games(), c))).filter(|&(n, _)| n < cap).collect();
    open.sort_unstable();
    open.into_iter().take(k).map(|(_, c)| c).collect()
}

/// Revisits up to `k` elites of `archive` (see the module's text): `play(elites, batch)` plays
/// `batch` games per table for each (cell, genes) given, table by table.
pub fn revisit(
    archive: &mut Archive,
    scorer: &Scorer,
    k: usize,
    cap: u64,
    batch: u64,
    play: &mut dyn FnMut(&[(usize, Vec<f64>)], u64) -> Result<Vec<Vec<Vec<GameRecord>>>>,
) -> Result<Revisited> {
    let cells = pick(archive, k, cap);
    let mut r = Revisited::default();
    if cells.is_empty() || batch == 0 {
        return Ok(r);
    }
    let who: Vec<(usize, Vec<f64>)> = cells.iter().filter_map(|c| archive.cells.get(c).map(|e| (*c, e.x.clone()))).collect();
    let games = play(&who, batch)?;
    let mut out: Vec<Elite> = Vec::new();
    for (&c, g) in cells.iter().zip(&games) {
        let Some(mut e) = archive.cells.remove(&c) else { continue };
        let pool = e.pool.get_or_insert_with(Default::default);
        pool.add(g);
        e.eval = scorer.score_pool(pool);
        r.elites += 1;
        r.games += batch * g.len() as u64;
        if !e.eval.feasible {
            r.evicted += 1;
        } else if archive.cell(&e.eval.descriptors.iter().map(|d| d.mean).collect::<Vec<_>>()) == c {
            archive.cells.insert(c, e);
        } else {
            out.push(e);
        }
    }
    // Moves last, so that an elite moving into a revisited cell meets its pooled elite.
    for e in out {
        if archive.place(e) {
            r.moved += 1;
        } else {
            r.evicted += 1;
        }
    }
    Ok(r)
}

/// Doubles the pool of one answer (`cma` with `stop = "target"`: the best that has not yet
/// reached its targets with confidence) up to `cap` games per table; `play(batch)` plays its
/// games. Returns the games played (every table).
pub fn grow(elite: &mut Elite, scorer: &Scorer, cap: u64, play: &mut dyn FnMut(u64) -> Result<Vec<Vec<GameRecord>>>) -> Result<u64> {
    let Some(pool) = elite.pool.as_mut() else { return Ok(0) };
    let n = pool.games();
    if n >= cap {
        return Ok(0);
    }
    let batch = n.max(1).min(cap - n);
    let games = play(batch)?;
    pool.add(&games);
    elite.eval = scorer.score_pool(pool);
    Ok(batch * games.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::config::DescriptorConfig;
    use crate::generate::expr::Estimate;
    use crate::generate::quality::{Eval, Pool};

    fn elite(f: f64, d: f64, games: u64) -> Elite {
        let mut pool = Pool::default();
        pool.add(&[(0..games).map(|_| GameRecord { q: vec![0.0], ended: true, stuck: false }).collect()]);
        let eval = Eval { f, feasible: true, descriptors: vec![Estimate { mean: d, se: 0.0 }], ..Eval::default() };
        Elite { x: vec![d], eval, iteration: 0, pool: Some(pool) }
    }

    #[test]
    fn the_fewest_games_first_below_the_cap() {
        let d = DescriptorConfig { expr: "x".into(), min: 0.0, max: 10.0, bins: 10 };
        let mut a = Archive::new(&[d]);
        for (f, x, n) in [(0.5, 0.5, 8), (0.5, 1.5, 4), (0.5, 2.5, 12), (0.5, 3.5, 4), (0.5, 4.5, 2)] {
            assert!(a.place(elite(f, x, n)));
        }
        assert_eq!(pick(&a, 2, 12), vec![4, 1]);
        assert_eq!(pick(&a, 10, 12), vec![4, 1, 3, 0]);
        assert_eq!(pick(&a, 10, 4), vec![4]);
        // An elite without a pool (a fixed confirmation's) is never picked.
        a.cells.get_mut(&4).expect("cell 4").pool = None;
        assert_eq!(pick(&a, 1, 12), vec![1]);
    }
}
