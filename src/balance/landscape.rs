//! `playforge landscape`: how rugged is the fitness landscape? Samples random valid encounters
//! and, for each, neighbours made by one mutation (the ES's own operator), plays the point and
//! its neighbours on the same game seeds (common random numbers, so a difference is the
//! neighbour's, not the dice's) and counts better and worse neighbours and their mean |ΔF|.
//! HexMage found about 5 worse neighbours per better one, 4–7× steeper down.

use super::config::BalanceConfig;
use super::dna::Codec;
use super::fitness::Evaluator;
use super::jobs::{BalanceContext, BalanceGame, Worker};
use super::optim::mutate;
use crate::exec::{Executor, JobKind};
use crate::report::{csv_bytes, write_atomic};
use crate::rng::{derive, stream};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Stream tag of landscape samples.
const LANDSCAPE: u64 = 0x4c41_4e44;

pub struct Landscape {
    pub samples: u64,
    pub neighbours: u64,
    pub better: u64,
    pub worse: u64,
    pub equal: u64,
    pub mean_up: f64,
    pub mean_down: f64,
    pub markdown: String,
    pub dir: PathBuf,
}

/// One sample's rows (sample, neighbour, F of the point, F of the neighbour): a random valid
/// point and `neighbours` one-mutation neighbours, all played on the sample's game seeds.
pub(crate) fn sample(codec: &Codec, ev: &Evaluator, j: &SampleJob) -> Result<Vec<(u64, u64, f64, f64)>> {
    let (cfg, s) = (&ev.cfg, j.sample);
    let seed = cfg.balance.seed;
    let (pairs, games) = (ev.n_pairs(), cfg.evaluation.games as usize);
    let (x, p0) = codec.random(&mut stream(seed, LANDSCAPE, s, 0))?;
    let score = |x: &[f64], program: &std::sync::Arc<crate::wgdl::Program>| -> Result<f64> {
        let mut os = Vec::with_capacity(pairs * games);
        for p in 0..pairs {
            for g in 0..games {
                os.push(ev.play(program, p, derive(seed, LANDSCAPE, s, (p * games + g) as u64 + 1_000_000), None)?);
            }
        }
        Ok(ev.score(&os, codec.team_distance(&codec.full(x))).f)
    };
    let f0 = score(&x, &p0)?;
    let mut out = Vec::new();
    for k in 0..j.neighbours {
        let (y, p1) = mutate(codec, &cfg.es, &x, &mut stream(seed, LANDSCAPE, s, k + 1))?;
        out.push((s, k, f0, score(&y, &p1)?));
    }
    Ok(out)
}

pub fn landscape(
    cfg: &BalanceConfig,
    cfg_path: &Path,
    cfg_text: &str,
    samples: u64,
    neighbours: u64,
    exec: &Executor,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Landscape> {
    let codec = Codec::new(cfg, cfg_path, cfg_text)?;
    let ev = Evaluator::new(cfg, codec.probe()).map_err(|e| anyhow::anyhow!("{}: {e}", cfg_path.display()))?;
    let done = std::sync::atomic::AtomicU64::new(0);
    // Each sample: its point and neighbours, all played on the sample's game seeds.
    let jobs: Vec<SampleJob> = (0..samples).map(|sample| SampleJob { sample, neighbours }).collect();
    let rows: Vec<Vec<(u64, u64, f64, f64)>> = exec.map::<LandscapeSample>(
        || BalanceContext::new(cfg, cfg_path, cfg_text, &codec),
        &jobs,
        |_, j| {
            let r = sample(&codec, &ev, j);
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, samples);
            r
        },
    )?;
    let rows: Vec<(u64, u64, f64, f64)> = rows.into_iter().flatten().collect();
    let stats = |keep: &dyn Fn(&(u64, u64, f64, f64)) -> bool| {
        let eps = 1e-9;
        let sel: Vec<&(u64, u64, f64, f64)> = rows.iter().filter(|r| keep(r)).collect();
        let ups: Vec<f64> = sel.iter().map(|r| r.3 - r.2).filter(|d| *d > eps).collect();
        let downs: Vec<f64> = sel.iter().map(|r| r.2 - r.3).filter(|d| *d > eps).collect();
        let mean = |v: &[f64]| if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 };
        (sel.len() as u64, ups.len() as u64, downs.len() as u64, mean(&ups), mean(&downs))
    };
    let (n, better, worse, mean_up, mean_down) = stats(&|_| true);
    let equal = n - better - worse;
    let dir = cfg.balance.out.join(&cfg.balance.name).join("landscape");
    let header: Vec<String> = ["sample", "neighbour", "f_point", "f_neighbour", "delta"].map(String::from).to_vec();
    let csv_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| vec![r.0.to_string(), r.1.to_string(), format!("{:.6}", r.2), format!("{:.6}", r.3), format!("{:.6}", r.3 - r.2)])
        .collect();
    write_atomic(&dir.join("landscape.csv"), &csv_bytes(&header, &csv_rows))?;
    let penalty = cfg.fitness.all_played_penalty;
    let mut markdown = format!(
        "Fitness landscape of `{}`: {samples} random valid encounters × {neighbours} one-mutation neighbours, {} game(s) per AI pair each \
         (the same seeds for a point and its neighbours).\n\n\
         | points | pairs | better | worse | equal | worse : better | mean \\|ΔF\\| up | mean \\|ΔF\\| down | down ÷ up |\n|---|---|---|---|---|---|---|---|---|\n",
        cfg.balance.game.display(),
        cfg.evaluation.games,
    );
    let mut row = |label: &str, keep: &dyn Fn(&(u64, u64, f64, f64)) -> bool| {
        let (n, b, w, up, down) = stats(keep);
        markdown.push_str(&format!(
            "| {label} | {n} | {b} | {w} | {} | {:.2} : 1 | {up:.4} | {down:.4} | {:.2}× |\n",
            n - b - w,
            w as f64 / b.max(1) as f64,
            down / up
        ));
    };
    row("all", &|_| true);
    row("both sides of the pair playable (F above the penalty)", &|r| r.2 > penalty && r.3 > penalty);
    for level in [0.5, 0.7, 0.8] {
        row(&format!("point F ≥ {level}"), &|r| r.2 >= level);
    }
    markdown.push_str("\nHexMage reports about 5 worse neighbours per better one, worse steps 4–7× as steep.\n");
    write_atomic(&dir.join("landscape.md"), markdown.as_bytes())?;
    Ok(Landscape { samples, neighbours, better, worse, equal, mean_up, mean_down, markdown, dir })
}

// The job kind `landscape.sample`: one random point and its neighbours, on a balance worker.

/// One landscape sample: sample `sample` with `neighbours` neighbours.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct SampleJob {
    pub sample: u64,
    pub neighbours: u64,
}

/// One landscape sample (`landscape.sample`); its rows (sample, neighbour, F₀, F₁).
pub struct LandscapeSample;

impl JobKind for LandscapeSample {
    const NAME: &'static str = "landscape.sample";
    type Context = BalanceContext;
    type Worker = Worker;
    type Job = SampleJob;
    type Output = Vec<(u64, u64, f64, f64)>;

    fn worker(ctx: &BalanceContext) -> Result<Worker> {
        BalanceGame::worker(ctx)
    }

    fn run(w: &Worker, job: &SampleJob) -> Result<Self::Output> {
        sample(&w.codec, &w.ev, job)
    }
}
