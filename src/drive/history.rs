//! A run's history, written the same way by every search command: `history.csv`, one row per
//! step with the numbers that are the same on every rerun and resume, and `timing.csv` beside it
//! with the wall clock at the end of each step (which is not).

use crate::report::{csv_bytes, write_atomic};
use anyhow::{Context, Result};
use std::path::Path;

/// One row of a history.
pub trait Row {
    /// The step column's name (`iteration`, `generation`).
    const STEP: &'static str;
    /// The columns of history.csv.
    fn header() -> &'static [&'static str];
    /// The row's cells, as history.csv shows them.
    fn cells(&self) -> Vec<String>;
    /// The step and the wall seconds at its end (timing.csv).
    fn timing(&self) -> (u64, f64);
}

/// Writes `dir/history.csv` and `dir/timing.csv` (atomically).
pub fn write<R: Row>(dir: &Path, rows: &[R]) -> Result<()> {
    let header: Vec<String> = R::header().iter().map(|h| h.to_string()).collect();
    let cells: Vec<Vec<String>> = rows.iter().map(Row::cells).collect();
    let path = dir.join("history.csv");
    write_atomic(&path, &csv_bytes(&header, &cells)).with_context(|| format!("cannot write {}", path.display()))?;
    let timing: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let (step, s) = r.timing();
            vec![step.to_string(), format!("{s:.2}")]
        })
        .collect();
    let path = dir.join("timing.csv");
    write_atomic(&path, &csv_bytes(&[R::STEP.to_string(), "elapsed_s".to_string()], &timing))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
