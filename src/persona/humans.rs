//! Humans beside the personas (Mugrai et al. 2019, section VII, Tables I and II): a folder of
//! human traces (games played through `playforge serve`, saved in the replay format with their
//! chance seeds) is read, each trace played again on the personas config's game to its score;
//! the traces are grouped into boards by chance seed (same start, same refills); then every
//! persona of a personas run (its `best_formula.txt` and saved goal), vanilla MCTS and the
//! random player play each board, `games` times each on their own streams. Written: the paper's
//! two tables in one (per board the human mean, minimum and maximum beside each agent's score,
//! the legal-move personas' mean legal moves in brackets), whether MinS and MaxS bracket the
//! humans, a histogram of the points each move scored (humans and agents alike: the move's
//! type by what it did, the same for any game with a score), a histogram of final scores, and a
//! chart. A trace that does not replay on this game (another game, overlays, an illegal move,
//! unfinished) is listed as skipped with the reason, never counted.

use super::config::Persona;
use super::jobs::Setup;
use super::play::{Agent, GameResult, Measured};
use super::run::read_formula_file;
use crate::game::{Game, Status, WgdlGame};
use crate::players::ai::Replay;
use crate::report::{chart, csv_bytes, write_atomic};
use crate::rng::{derive, stream};
use anyhow::{Context, Result, anyhow, bail};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;

/// A human game played again: its board (chance seed), score, mean legal moves and the points
/// of each move.
#[derive(Clone, Debug)]
pub struct HumanGame {
    pub file: PathBuf,
    pub seed: u64,
    pub score: f64,
    pub legal_moves: f64,
    pub move_points: Vec<f64>,
}

/// One agent on one board: its games.
#[derive(Clone, Debug)]
pub struct AgentRow {
    pub name: String,
    /// The persona whose measure it was held to (empty for random).
    pub persona: String,
    pub games: Vec<(GameResult, Vec<f64>)>,
}

/// What `humans` found.
pub struct Comparison {
    pub dir: PathBuf,
    pub markdown: String,
    pub boards: Vec<(u64, Vec<HumanGame>, Vec<AgentRow>)>,
    pub skipped: Vec<(PathBuf, String)>,
}

/// The human traces of `dir` (every `*.json`, two folders deep, sorted) that replay on `setup`'s
/// game; the others with the reason.
pub fn read_traces(setup: &Setup, dir: &Path) -> Result<(Vec<HumanGame>, Vec<(PathBuf, String)>)> {
    let mut files = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = stack.pop() {
        let rd = std::fs::read_dir(&d).with_context(|| format!("{}: cannot read the traces folder", d.display()))?;
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() && depth < 2 {
                stack.push((p, depth + 1));
            } else if p.extension().is_some_and(|x| x == "json") {
                files.push(p);
            }
        }
    }
    files.sort();
    let want = setup.cfg.personas.game.file_stem().map(|s| s.to_os_string());
    let mut games = Vec::new();
    let mut skipped = Vec::new();
    for f in files {
        let rep: Replay = match crate::input::read_text(&f).map_err(anyhow::Error::from).and_then(|t| Ok(serde_json::from_str(&t)?)) {
            Ok(r) => r,
            Err(e) => {
                skipped.push((f, format!("not a trace: {e}")));
                continue;
            }
        };
        if rep.game.file_stem().map(|s| s.to_os_string()) != want {
            skipped.push((f, format!("a game of {}, not of this config", rep.game.display())));
            continue;
        }
        if !rep.overlays.is_empty() || !rep.params.is_empty() {
            skipped.push((f, "played with overlays or parameters the config's game does not have".into()));
            continue;
        }
        match replay_score(setup, &rep) {
            Ok(g) => games.push(HumanGame { file: f, ..g }),
            Err(e) => skipped.push((f, format!("{e:#}"))),
        }
    }
    Ok((games, skipped))
}

fn replay_score(setup: &Setup, rep: &Replay) -> Result<HumanGame> {
    let (p, score) = setup.wgdl()?;
    let game = WgdlGame::new(p.clone()).with_seed(rep.chance_seed);
    let render = |e: crate::wgdl::RuntimeError| anyhow!("{}", e.render(p));
    let mut st = game.initial().map_err(render)?;
    let mut legal = Vec::new();
    let (mut legal_sum, mut points) = (0usize, Vec::new());
    for (i, name) in rep.moves.iter().enumerate() {
        game.legal(&st, &mut legal).map_err(render)?;
        let Some(&m) = legal.iter().find(|&&m| p.action_name(&st, m) == *name) else {
            bail!("move {} `{name}` is not legal on this game and seed", i + 1);
        };
        legal_sum += legal.len();
        let before = p.read(&st, score);
        game.apply(&mut st, m).map_err(render)?;
        points.push(p.read(&st, score) - before);
    }
    game.legal(&st, &mut legal).map_err(render)?;
    if game.status(&st, &legal) == Status::Running {
        bail!("unfinished: the game goes on after its {} moves", rep.moves.len());
    }
    let n = rep.moves.len().max(1) as f64;
    Ok(HumanGame {
        file: PathBuf::new(),
        seed: rep.chance_seed,
        score: p.read(&st, score),
        legal_moves: legal_sum as f64 / n,
        move_points: points,
    })
}

/// The points of each move an agent makes, by playing its game again with a recording
/// (the same stream, so the same game as `play_game`'s).
fn with_points(setup: &Setup, m: &Measured, seed: u64, agent: &Agent, rng_seed: (u64, u64, u64, u64)) -> Result<(GameResult, Vec<f64>)> {
    let (p, score) = setup.wgdl()?;
    let mut points = Vec::new();
    let mut last = None;
    let (a, b, c, d) = rng_seed;
    let r = crate::players::persona::play_game_observed(m, seed, score, agent, &setup.search, &mut stream(a, b, c, d), &mut |s| {
        let now = p.read(s, score);
        if let Some(prev) = last {
            points.push(now - prev);
        }
        last = Some(now);
    })
    .map_err(|e| anyhow!("{}", e.render(p)))?;
    Ok((r, points))
}

/// The agents: every persona of the run in `from` (those with a best_formula.txt), vanilla MCTS
/// held to each persona's measure, and the random player.
fn agents(setup: &Setup, from: &Path) -> Result<Vec<(String, usize, Agent)>> {
    let mut v = Vec::new();
    for (k, p) in setup.cfg.list.iter().enumerate() {
        let f = from.join(&p.name).join("best_formula.txt");
        if !f.exists() {
            continue;
        }
        let (formula, goal) = read_formula_file(&f)?;
        let goal = goal.ok_or_else(|| anyhow!("{}: no `# goal:` line; expected the file a personas run writes", f.display()))?;
        v.push((p.name.clone(), k, Agent::Mcts { formula, reward: setup.reward(p, goal) }));
    }
    if v.is_empty() {
        let names: Vec<&str> = setup.cfg.list.iter().map(|p| p.name.as_str()).collect();
        bail!(
            "{}: no <persona>/best_formula.txt for any of {}; expected a personas run folder of this config",
            from.display(),
            names.join(", ")
        );
    }
    Ok(v)
}

fn stats(xs: &[f64]) -> (f64, f64, f64) {
    if xs.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    (
        xs.iter().sum::<f64>() / xs.len() as f64,
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

/// A histogram of `values` over `edges` (bins `[e_k, e_k+1)`, the last closed): counts.
fn histogram(values: &[f64], edges: &[f64]) -> Vec<usize> {
    let mut c = vec![0; edges.len().saturating_sub(1)];
    for &v in values {
        if let Some(k) = (0..c.len()).find(|&k| v >= edges[k] && (v < edges[k + 1] || k + 1 == c.len() && v <= edges[k + 1])) {
            c[k] += 1;
        }
    }
    c
}

/// Bins over the values' range: doubling from the smallest positive value where the values are
/// non-negative and span more than a factor of 16 (points per move: a plain match, a combo, a
/// cascade), else eight equal bins (rounded out to whole numbers).
fn edges(values: &[f64]) -> Vec<f64> {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min).floor();
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max).ceil();
    if !lo.is_finite() || !hi.is_finite() {
        return vec![0.0, 1.0];
    }
    let least = values.iter().copied().filter(|&v| v > 0.0).fold(f64::INFINITY, f64::min);
    if lo >= 0.0 && least.is_finite() && hi / least > 16.0 {
        let mut e = if lo < least { vec![lo, least] } else { vec![least] };
        while *e.last().expect("an edge") < hi {
            let next = e.last().expect("an edge") * 2.0;
            e.push(next);
        }
        return e;
    }
    let width = ((hi - lo) / 8.0).ceil().max(1.0);
    (0..=8).map(|k| lo + width * k as f64).collect()
}

/// Runs the comparison and writes humans.md, humans.csv, humans.png/.svg under
/// `<out>/<config name>/humans/`.
pub fn compare(setup: &Setup, traces: &Path, from: &Path, games: u64, done: &AtomicU64) -> Result<Comparison> {
    let (humans, skipped) = read_traces(setup, traces)?;
    if humans.is_empty() {
        let why: Vec<String> = skipped.iter().take(5).map(|(f, w)| format!("{}: {w}", f.display())).collect();
        bail!(
            "{}: no trace of {} to compare ({} skipped{}{})",
            traces.display(),
            setup.cfg.personas.game.display(),
            skipped.len(),
            if why.is_empty() { "" } else { ": " },
            why.join("; ")
        );
    }
    let agents = agents(setup, from)?;
    let mut seeds: Vec<u64> = humans.iter().map(|h| h.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    let vanilla_k = agents.first().map_or(0, |a| a.1);
    let s = &setup.cfg.personas;
    let mut boards = Vec::new();
    for (b, &seed) in seeds.iter().enumerate() {
        let hs: Vec<HumanGame> = humans.iter().filter(|h| h.seed == seed).cloned().collect();
        let mut rows = Vec::new();
        for (ai, (name, k, agent)) in agents.iter().enumerate() {
            let m = setup.measured(&setup.cfg.list[*k])?;
            let games: Result<Vec<_>> =
                (0..games).map(|j| with_points(setup, &m, seed, agent, (derive(s.seed, 7, b as u64, ai as u64), j, 0, 0))).collect();
            rows.push(AgentRow { name: name.clone(), persona: name.clone(), games: games? });
        }
        // Vanilla held to beating random on this board (as persona-play does), and random.
        let p: &Persona = &setup.cfg.list[vanilla_k];
        let m = setup.measured(p)?;
        let random: Vec<(GameResult, Vec<f64>)> = (0..games)
            .map(|j| with_points(setup, &m, seed, &Agent::Random, (derive(s.seed, 7, b as u64, 1000), j, 0, 0)))
            .collect::<Result<_>>()?;
        let goal = random.iter().map(|r| r.0.measure).sum::<f64>() / random.len().max(1) as f64;
        let vanilla = Agent::Mcts { formula: setup.vanilla(), reward: setup.reward(p, goal) };
        let vg: Vec<(GameResult, Vec<f64>)> = (0..games)
            .map(|j| with_points(setup, &m, seed, &vanilla, (derive(s.seed, 7, b as u64, 1001), j, 0, 0)))
            .collect::<Result<_>>()?;
        rows.push(AgentRow { name: "Vanilla".into(), persona: p.name.clone(), games: vg });
        rows.push(AgentRow { name: "Random".into(), persona: String::new(), games: random });
        done.fetch_add((agents.len() as u64 + 2) * games, std::sync::atomic::Ordering::Relaxed);
        boards.push((seed, hs, rows));
    }
    let dir = setup.out_dir.parent().unwrap_or(&setup.out_dir).join("humans");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let markdown = write_outputs(setup, &dir, &boards, &skipped, games, traces, from)?;
    Ok(Comparison { dir, markdown, boards, skipped })
}

fn write_outputs(
    setup: &Setup,
    dir: &Path,
    boards: &[(u64, Vec<HumanGame>, Vec<AgentRow>)],
    skipped: &[(PathBuf, String)],
    games: u64,
    traces: &Path,
    from: &Path,
) -> Result<String> {
    let s = &setup.cfg.personas;
    let names: Vec<String> = boards.first().map(|b| b.2.iter().map(|r| r.name.clone()).collect()).unwrap_or_default();
    let legal_personas: Vec<&str> = setup.cfg.list.iter().filter(|p| p.measure == "legal_moves").map(|p| p.name.as_str()).collect();
    let mut md = format!(
        "# Humans beside the personas — {}\n\nHuman traces from `{}`, personas from `{}`. A board is a chance seed: the same start and the same refills for everyone. Each agent plays each board {games} times ({} MCTS iterations a move); its cell is its mean score [min – max]; the legal-move personas' mean legal moves are in brackets, as in the paper's Table II. Score = `{}`.\n\n",
        s.name,
        traces.display(),
        from.display(),
        s.iterations,
        s.score
    );
    md += "| board (chance seed) | humans | human mean | human min | human max |";
    for n in &names {
        md += &format!(" {n} |");
    }
    md += " MinS ≤ human min | MaxS ≥ human max |\n|---|---:|---:|---:|---:|";
    for _ in &names {
        md += "---:|";
    }
    md += "---|---|\n";
    let mut csv = Vec::new();
    let mut bars = Vec::new();
    let (mut below, mut above, mut judged) = (0, 0, 0);
    for (seed, hs, rows) in boards {
        let (hm, hmin, hmax) = stats(&hs.iter().map(|h| h.score).collect::<Vec<_>>());
        md += &format!("| {seed} | {} | {hm:.0} | {hmin:.0} | {hmax:.0} |", hs.len());
        bars.push(chart::Bar { label: format!("{seed}: humans"), mean: hm, half_width: (hmax - hmin) / 2.0 });
        let mut mean_of = std::collections::HashMap::new();
        for r in rows {
            let scores: Vec<f64> = r.games.iter().map(|g| g.0.score).collect();
            let (m, lo, hi) = stats(&scores);
            mean_of.insert(r.name.clone(), m);
            let legal = if legal_personas.contains(&r.name.as_str()) {
                format!(" ({:.2})", r.games.iter().map(|g| g.0.legal_moves).sum::<f64>() / r.games.len().max(1) as f64)
            } else {
                String::new()
            };
            md += &format!(" {m:.0} [{lo:.0} – {hi:.0}]{legal} |");
            bars.push(chart::Bar { label: format!("{seed}: {}", r.name), mean: m, half_width: 0.0 });
            for g in &r.games {
                csv.push(vec![
                    seed.to_string(),
                    r.name.clone(),
                    format!("{}", g.0.score),
                    format!("{:.3}", g.0.legal_moves),
                    String::new(),
                ]);
            }
        }
        let verdict = |name: &str, ok: &dyn Fn(f64) -> bool| match mean_of.get(name) {
            Some(&v) => {
                if ok(v) {
                    "yes"
                } else {
                    "no"
                }
            }
            None => "–",
        };
        let lo_ok = verdict("MinS", &|v| v <= hmin);
        let hi_ok = verdict("MaxS", &|v| v >= hmax);
        if lo_ok != "–" && hi_ok != "–" {
            judged += 1;
            below += (lo_ok == "yes") as usize;
            above += (hi_ok == "yes") as usize;
        }
        md += &format!(" {lo_ok} | {hi_ok} |\n");
        for h in hs {
            csv.push(vec![
                seed.to_string(),
                "human".into(),
                format!("{}", h.score),
                format!("{:.3}", h.legal_moves),
                h.file.display().to_string(),
            ]);
        }
    }
    if judged > 0 {
        md += &format!(
            "\nMinS scores at or below the lowest human on {below} of {judged} boards; MaxS at or above the highest human on {above} of {judged} (the paper: MinS below every user on all three boards, MaxS above on two of three).\n"
        );
    }
    // Histograms: points per move (the move's type by what it did) and final scores.
    let mut pools: Vec<(String, Vec<f64>, Vec<f64>)> = vec![(
        "humans".into(),
        boards.iter().flat_map(|b| b.1.iter().flat_map(|h| h.move_points.iter().copied())).collect(),
        boards.iter().flat_map(|b| b.1.iter().map(|h| h.score)).collect(),
    )];
    for (k, n) in names.iter().enumerate() {
        pools.push((
            n.clone(),
            boards.iter().flat_map(|b| b.2[k].games.iter().flat_map(|g| g.1.iter().copied())).collect(),
            boards.iter().flat_map(|b| b.2[k].games.iter().map(|g| g.0.score)).collect(),
        ));
    }
    for (title, pick) in [("Points a move scored (share of moves)", 1usize), ("Final scores (share of games)", 2usize)] {
        let all: Vec<f64> = pools.iter().flat_map(|p| if pick == 1 { p.1.clone() } else { p.2.clone() }).collect();
        let e = edges(&all);
        md += &format!("\n## {title}\n\n| who |");
        for w in e.windows(2) {
            md += &format!(" {:.0}–{:.0} |", w[0], w[1]);
        }
        md += " n |\n|---|";
        for _ in e.windows(2) {
            md += "---:|";
        }
        md += "---:|\n";
        for (who, pts, scores) in &pools {
            let v = if pick == 1 { pts } else { scores };
            let h = histogram(v, &e);
            md += &format!("| {who} |");
            for c in &h {
                md += &format!(" {:.0}% |", 100.0 * *c as f64 / v.len().max(1) as f64);
            }
            md += &format!(" {} |\n", v.len());
        }
    }
    if !skipped.is_empty() {
        md += "\n## Traces skipped\n\n";
        for (f, why) in skipped {
            md += &format!("- `{}`: {why}\n", f.display());
        }
    }
    let header: Vec<String> = ["board", "who", "score", "legal_moves", "trace"].iter().map(|s| s.to_string()).collect();
    write_atomic(&dir.join("humans.csv"), &csv_bytes(&header, &csv))?;
    write_atomic(&dir.join("humans.md"), md.as_bytes())?;
    chart::bars(
        &dir.join("humans.png"),
        &format!("{}: humans (mean, min–max) beside the agents", s.name),
        &s.score,
        &bars,
        60 * bars.len().max(6) as u32 + 200,
        560,
    )
    .map_err(|e| anyhow!("humans.png: {e}"))?;
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::{edges, histogram};

    #[test]
    fn histogram_bins_cover_the_range_and_count_every_value_once() {
        let v = [0.0, 60.0, 60.0, 120.0, 480.0];
        let e = edges(&v);
        assert_eq!(e.first(), Some(&0.0));
        assert!(*e.last().unwrap() >= 480.0);
        assert_eq!(histogram(&v, &e).iter().sum::<usize>(), v.len());
        // Doubling bins where the values span a wide range: 60 and 120 fall apart.
        let v = [60.0, 60.0, 120.0, 1200.0, 4000.0];
        let e = edges(&v);
        assert_eq!(&e[..3], &[60.0, 120.0, 240.0]);
        assert_eq!(histogram(&v, &e)[..2], [2, 1]);
        // A narrow range: eight equal bins.
        assert_eq!(edges(&[10.0, 20.0]).len(), 9);
    }
}
