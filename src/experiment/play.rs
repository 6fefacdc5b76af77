//! `play`: one search over one WGDL game as a config describes it, then the best path replayed
//! into a trajectory a designer can read — values over game time, goals reached and when, how
//! often each action and object type was used.
//!
//! The result formula becomes the search's [`Evaluator`]: Σ wᵢ·normᵢ(vᵢ) with weights divided by
//! their sum, each term normalized linearly over [min, max] (inverted when smaller is better)
//! and clamped to [0, 1]. Its optimistic bound (for forfeiting) keeps a term at its current value
//! when the term cannot improve any more (it only moves the wrong way), and at 1 otherwise.

use super::config::{Better, Monotone, PlayConfig, Term};
use crate::game::WgdlGame;
use crate::search::mcts::Evaluator;
use crate::search::run::{Plan, StageStats, plan};
use crate::wgdl::probe::ValueRef;
use crate::wgdl::{self, Action, Program, State};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The result formula, resolved against one program.
pub struct ResultEval {
    pub program: Arc<Program>,
    pub terms: Vec<(ValueRef, Term)>,
    total_weight: f64,
}

impl ResultEval {
    pub fn new(program: Arc<Program>, terms: &[Term]) -> Result<ResultEval, String> {
        let mut out = Vec::new();
        for t in terms {
            let r = program.value_ref(&t.value).map_err(|e| format!("[result] term {e}"))?;
            out.push((r, t.clone()));
        }
        let total_weight = terms.iter().map(|t| t.weight).sum::<f64>();
        if total_weight <= 0.0 {
            return Err("[result] the weights sum to 0".into());
        }
        Ok(ResultEval { program, terms: out, total_weight })
    }

    pub fn raw(&self, st: &State, i: usize) -> f64 {
        self.program.read(st, self.terms[i].0)
    }

    pub fn norm(&self, st: &State, i: usize) -> f64 {
        let t = &self.terms[i].1;
        let x = ((self.raw(st, i) - t.min) / (t.max - t.min)).clamp(0.0, 1.0);
        if t.better == Better::Smaller { 1.0 - x } else { x }
    }

    fn only_worsens(&self, i: usize) -> bool {
        let (r, t) = &self.terms[i];
        let moves = match r {
            ValueRef::Time | ValueRef::Moves | ValueRef::Sessions => Monotone::Up,
            _ => t.moves,
        };
        matches!((t.better, moves), (Better::Bigger, Monotone::Down) | (Better::Smaller, Monotone::Up))
    }
}

impl Evaluator<State> for ResultEval {
    fn value(&self, st: &State, _player: usize) -> f64 {
        (0..self.terms.len()).map(|i| self.terms[i].1.weight * self.norm(st, i)).sum::<f64>() / self.total_weight
    }
    fn bound(&self, st: &State) -> Option<f64> {
        if !(0..self.terms.len()).any(|i| self.only_worsens(i)) {
            return None;
        }
        let b =
            (0..self.terms.len()).map(|i| self.terms[i].1.weight * if self.only_worsens(i) { self.norm(st, i) } else { 1.0 }).sum::<f64>();
        Some(b / self.total_weight)
    }
}

/// One row of the best path's trajectory: after move `moves`, at game time `time`.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub moves: u32,
    pub time: i64,
    pub session: i64,
    pub action: String,
    pub values: Vec<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GoalReached {
    pub goal: u32,
    pub text: String,
    pub moves: u32,
    pub time: i64,
}

/// Everything `play` found.
#[derive(Clone, Debug, Serialize)]
pub struct PlayReport {
    pub experiment: String,
    pub game: String,
    pub seed: u64,
    pub value: f64,
    pub terms: Vec<TermReport>,
    pub goals: Vec<GoalReached>,
    pub goals_total: usize,
    pub moves: usize,
    pub iterations: u64,
    pub seconds: f64,
    pub stages: Vec<StageStats>,
    pub action_counts: BTreeMap<String, usize>,
    pub object_counts: BTreeMap<String, usize>,
    pub trajectory: Vec<Step>,
}

#[derive(Clone, Debug, Serialize)]
pub struct TermReport {
    pub value: String,
    pub raw: f64,
    pub normalized: f64,
    pub weight: f64,
}

/// Loads the config's game with the profile applied. Profile goals replace the game's `goal`
/// lines: those lines are blanked (so every other line keeps its number in messages) and the new
/// goals appended.
pub fn load_game(cfg: &PlayConfig) -> Result<Arc<Program>, String> {
    let path = &cfg.experiment.game;
    let c = match &cfg.profile.goals {
        None => wgdl::load(path).map_err(|e| e.to_string())?,
        Some(goals) => {
            let text = crate::input::read_text(path).map_err(|e| e.to_string())?;
            let mut out: String =
                text.lines().map(|l| if l.split_whitespace().next() == Some("goal") { "" } else { l }).collect::<Vec<_>>().join("\n");
            out.push_str("\n// goals from the profile\n");
            for (k, g) in goals.iter().enumerate() {
                out.push_str(&format!("goal {} {g}\n", k + 1));
            }
            wgdl::compile_str(&format!("{} (with profile goals)", path.display()), &out).map_err(|e| e.to_string())?
        }
    };
    let p = &cfg.profile;
    if p.sessions.is_none() && p.session_length.is_none() && p.pause.is_none() {
        return Ok(c.program);
    }
    c.program.with_profile(p.sessions, p.session_length, p.pause).map(Arc::new).map_err(|e| format!("[profile] {e}"))
}

/// Runs the search and replays its best path.
pub fn play(cfg: &PlayConfig) -> Result<PlayReport, String> {
    let program = load_game(cfg)?;
    play_program(cfg, program)
}

pub fn play_program(cfg: &PlayConfig, program: Arc<Program>) -> Result<PlayReport, String> {
    let eval = ResultEval::new(program.clone(), &cfg.result.terms)?;
    let names: Vec<String> = program.groups.iter().map(|g| g.name.clone()).collect();
    let weights: Vec<f64> = program.groups.iter().map(|g| g.weight).collect();
    let pc = cfg.plan_config(&names, &weights)?;
    let game = WgdlGame::new(program.clone());
    let result: Plan<State, Action> = plan(&game, &eval, &pc).map_err(|e| e.render(&program))?;
    report(cfg, &program, &eval, &result)
}

fn report(cfg: &PlayConfig, program: &Program, eval: &ResultEval, result: &Plan<State, Action>) -> Result<PlayReport, String> {
    let mut st = program.initial_state().map_err(|e| e.render(program))?;
    let values = |st: &State| (0..eval.terms.len()).map(|i| eval.raw(st, i)).collect::<Vec<f64>>();
    let mut trajectory = vec![Step { moves: 0, time: st.clock, session: st.sessions, action: "(start)".into(), values: values(&st) }];
    let mut goals = Vec::new();
    let mut action_counts = BTreeMap::new();
    let mut object_counts = BTreeMap::new();
    let mut goal = st.goal;
    for &a in &result.path {
        let info = &program.actions[a.def as usize];
        *action_counts.entry(info.name.clone()).or_insert(0) += 1;
        let owner = &program.gods[st.objects[a.this as usize].god as usize].name;
        *object_counts.entry(owner.clone()).or_insert(0) += 1;
        if let crate::wgdl::program::BindKind::God(_) = info.bind {
            *object_counts.entry(program.gods[a.bound as usize].name.clone()).or_insert(0) += 1;
        }
        let name = program.action_name(&st, a);
        program.apply(&mut st, a).map_err(|e| e.render(program))?;
        while goal < st.goal {
            let g = &program.goals[goal as usize];
            goals.push(GoalReached { goal: g.k, text: g.text.clone(), moves: st.moves, time: st.clock });
            goal += 1;
        }
        trajectory.push(Step { moves: st.moves, time: st.clock, session: st.sessions, action: name, values: values(&st) });
    }
    let terms = eval
        .terms
        .iter()
        .enumerate()
        .map(|(i, (_, t))| TermReport { value: t.value.clone(), raw: eval.raw(&st, i), normalized: eval.norm(&st, i), weight: t.weight })
        .collect();
    Ok(PlayReport {
        experiment: cfg.experiment.name.to_string(),
        game: cfg.experiment.game.display().to_string(),
        seed: cfg.experiment.seed,
        value: eval.value(&st, 0),
        terms,
        goals,
        goals_total: program.goals.len(),
        moves: result.path.len(),
        iterations: result.iterations(),
        seconds: result.elapsed.as_secs_f64(),
        stages: result.stages.clone(),
        action_counts,
        object_counts,
        trajectory,
    })
}

/// Writes the run's folder: `config.toml` (resolved), `report.json`, `path.json`,
/// `values.csv` (values over game time) and `values.png`. Returns the folder.
/// The output folder of a play run: `<out>/<name>/seed-<seed>/`.
pub fn out_dir(cfg: &PlayConfig) -> std::path::PathBuf {
    cfg.experiment.out.join(&cfg.experiment.name).join(format!("seed-{}", cfg.experiment.seed))
}

pub fn write_outputs(cfg: &PlayConfig, r: &PlayReport) -> Result<std::path::PathBuf, String> {
    use crate::report::{chart, csv_bytes, write_atomic};
    let dir = out_dir(cfg);
    let io = |e: std::io::Error| format!("writing {}: {e}", dir.display());
    let mut resolved = toml::to_string_pretty(cfg).map_err(|e| e.to_string())?;
    if cfg.timed() {
        resolved = format!("# {}\n{resolved}", crate::experiment::config::NOT_REPRODUCIBLE);
    }
    write_atomic(&dir.join("config.toml"), resolved.as_bytes()).map_err(io)?;
    let mut slim = r.clone();
    slim.trajectory.clear();
    write_atomic(&dir.join("report.json"), serde_json::to_string_pretty(&slim).map_err(|e| e.to_string())?.as_bytes()).map_err(io)?;
    let path: Vec<serde_json::Value> = r
        .trajectory
        .iter()
        .skip(1)
        .map(|s| serde_json::json!({ "move": s.moves, "time": s.time, "session": s.session, "action": s.action }))
        .collect();
    write_atomic(&dir.join("path.json"), serde_json::to_string_pretty(&path).map_err(|e| e.to_string())?.as_bytes()).map_err(io)?;
    let mut header = vec!["move".to_string(), "time".into(), "session".into(), "action".into()];
    header.extend(r.terms.iter().map(|t| t.value.clone()));
    let rows: Vec<Vec<String>> = r
        .trajectory
        .iter()
        .map(|s| {
            let mut row = vec![s.moves.to_string(), s.time.to_string(), s.session.to_string(), s.action.clone()];
            row.extend(s.values.iter().map(|v| format!("{v}")));
            row
        })
        .collect();
    write_atomic(&dir.join("values.csv"), &csv_bytes(&header, &rows)).map_err(io)?;
    // One panel per value, over game time (over moves when the game has no clock).
    let timed = r.trajectory.last().is_some_and(|s| s.time > 0);
    let panels: Vec<chart::Panel> = r
        .terms
        .iter()
        .enumerate()
        .map(|(i, t)| chart::Panel {
            title: t.value.clone(),
            x_label: if timed { "game time (s)".into() } else { "move".into() },
            y_label: t.value.clone(),
            series: vec![chart::Series {
                name: String::new(),
                points: r.trajectory.iter().map(|s| (if timed { s.time as f64 } else { s.moves as f64 }, s.values[i])).collect(),
                band: None,
                markers: false,
            }],
        })
        .collect();
    let title = format!("{} — best path, value {:.4} (seed {})", r.experiment, r.value, r.seed);
    chart::line_panels(&dir.join("values.png"), &title, &panels, 900, 260).map_err(|e| format!("drawing values.png: {e}"))?;
    Ok(dir)
}
