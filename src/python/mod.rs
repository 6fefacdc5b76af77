//! The Python extension (`playforge._core`, cargo feature `python`, built by maturin): the
//! command line (`main`), the worker entry of the Ray executor (`run_batch`), the hook through
//! which the package installs that executor (`set_ray_connector`), and a game API in the style
//! pyspiel users know (`Game`, `State`). The pure-Python part (`python/playforge/`) wraps these
//! with numpy arrays, the Ray executor and the console script.
//!
//! Errors become Python exceptions carrying the same text as the command line's (a game's
//! `file:line:column` diagnostics included): `ValueError` for bad input, `RuntimeError` for a
//! game's runtime error. Long calls release the interpreter (`py.detach`), so that other Python
//! threads run and the Ray executor can call back into Python.

mod doors;
mod runs;

use crate::exec::{self, Remote};
use crate::game::WgdlGame;
use crate::rng::stream;
use crate::wgdl::{self, Action, CompileOptions, Program, State, Status};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyAny;
use rand::RngExt;
use std::sync::Arc;

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{e:#}"))
}

/// Runs the command line on `argv` (the program name first); returns the exit status.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| crate::cli::main_from(argv))
}

/// Runs a batch of serialized jobs of `kind` on this process's worker for `context` (built once
/// per context and kept) on `threads` threads; returns the serialized outputs in job order. The
/// Ray executor's tasks call this, one per node with the node's CPUs.
#[pyfunction]
#[pyo3(signature = (kind, context, jobs, threads = 1))]
fn run_batch(py: Python<'_>, kind: String, context: String, jobs: Vec<String>, threads: usize) -> PyResult<Vec<String>> {
    py.detach(|| crate::jobs::run_batch(&kind, &context, &jobs, threads.max(1))).map_err(|e| PyRuntimeError::new_err(format!("{e:#}")))
}

/// The job kinds `run_batch` knows.
#[pyfunction]
fn job_kinds() -> Vec<&'static str> {
    crate::jobs::KINDS.to_vec()
}

/// An executor object of the Python package: `run(kind, context, jobs) -> list[str]` and
/// `describe() -> str`.
struct PyRemote(Py<PyAny>);

impl Remote for PyRemote {
    fn run(&self, kind: &str, context: &str, jobs: Vec<String>) -> anyhow::Result<Vec<String>> {
        Python::attach(|py| self.0.call_method1(py, "run", (kind, context, jobs))?.extract::<Vec<String>>(py))
            .map_err(|e| anyhow::anyhow!("the Ray executor: {e}"))
    }
    fn describe(&self) -> String {
        Python::attach(|py| self.0.call_method0(py, "describe").and_then(|d| d.extract::<String>(py)))
            .unwrap_or_else(|e| format!("ray (no description: {e})"))
    }
    fn cpus(&self) -> usize {
        Python::attach(|py| self.0.getattr(py, "cpus").and_then(|c| c.extract::<usize>(py))).unwrap_or(1)
    }
}

/// Installs `connect(address) -> executor`, which `--ray ADDRESS` calls.
#[pyfunction]
fn set_ray_connector(connect: Py<PyAny>) {
    let connect = Arc::new(connect);
    exec::set_connector(Arc::new(move |address: &str| {
        let remote = Python::attach(|py| connect.call1(py, (address,))).map_err(|e| anyhow::anyhow!("--ray {address}: {e}"))?;
        Ok(Arc::new(PyRemote(remote)) as Arc<dyn Remote>)
    }));
}

/// A compiled WGDL game.
#[pyclass(name = "Game", module = "playforge._core", frozen)]
struct PyGame {
    program: Arc<Program>,
    path: String,
}

/// Packs a move into one integer that stays the same across states (as pyspiel's actions do):
/// the action definition, the object that acts and its binding, 16 + 24 + 24 bits.
fn pack(a: Action) -> u64 {
    let part = |x: u32| if x == wgdl::program::NONE { 0xFF_FFFF } else { x as u64 & 0xFF_FFFF };
    ((a.def as u64) << 48) | (part(a.this) << 24) | part(a.bound)
}

fn unpack(x: u64) -> Action {
    let part = |v: u64| if v == 0xFF_FFFF { wgdl::program::NONE } else { v as u32 };
    Action { def: (x >> 48) as u16, this: part((x >> 24) & 0xFF_FFFF), bound: part(x & 0xFF_FFFF) }
}

fn runtime(p: &Program, e: wgdl::RuntimeError) -> PyErr {
    PyRuntimeError::new_err(e.render(p))
}

#[pymethods]
impl PyGame {
    /// The game's players (empty for a one-player game without `players`).
    #[getter]
    fn players(&self) -> Vec<String> {
        self.program.players.clone()
    }

    /// The number of players (1 for a game without `players`).
    fn num_players(&self) -> usize {
        self.program.players.len().max(1)
    }

    /// The file the game was loaded from.
    #[getter]
    fn path(&self) -> String {
        self.path.clone()
    }

    /// The declared parameters: (name, low, high, whole-number, value), in declaration order.
    fn parameter_table(&self) -> Vec<(String, f64, f64, bool, f64)> {
        self.program.params.iter().map(|p| (p.name.clone(), p.min, p.max, p.integer, p.value)).collect()
    }

    /// The same game with every declared parameter set to `values` (declaration order), written
    /// into the compiled program (nothing is compiled again).
    fn with_parameter_values(&self, values: Vec<f64>) -> PyResult<PyGame> {
        let p = self.program.with_parameters(&values).map_err(|e| value_error(format!("{}: {e}", self.path)))?;
        Ok(PyGame { program: Arc::new(p), path: self.path.clone() })
    }

    /// The start state; `seed` starts the game's own chance stream (games that draw).
    #[pyo3(signature = (seed = 0))]
    fn new_initial_state(&self, seed: u64) -> PyResult<PyState> {
        let st = self.program.initial_state_seeded(seed).map_err(|e| runtime(&self.program, e))?;
        PyState::new(self.program.clone(), st)
    }

    /// One uniformly random game, as `playforge run GAME --random MAX --seed SEED
    /// --chance-seed CHANCE` plays it: the names of the moves played.
    #[pyo3(signature = (seed, chance_seed = 0, max_moves = 1_000_000))]
    fn random_playout(&self, py: Python<'_>, seed: u64, chance_seed: u64, max_moves: u64) -> PyResult<Vec<String>> {
        let p = &self.program;
        py.detach(|| -> Result<Vec<String>, wgdl::RuntimeError> {
            let mut st = p.initial_state_seeded(chance_seed)?;
            let mut rng = stream(seed, 0, 0, 0);
            let (mut legal, mut names) = (Vec::new(), Vec::new());
            while (names.len() as u64) < max_moves {
                p.legal_actions(&st, &mut legal)?;
                if p.status(&st, &legal) != Status::Running {
                    break;
                }
                let a = legal[rng.random_range(0..legal.len())];
                names.push(p.action_name(&st, a));
                p.apply(&mut st, a)?;
            }
            Ok(names)
        })
        .map_err(|e| runtime(p, e))
    }

    /// `n` uniformly random games, game k on the stream (seed, k), played in Rust; returns the
    /// total number of moves played.
    fn random_playouts(&self, py: Python<'_>, n: u64, seed: u64) -> PyResult<u64> {
        let p = &self.program;
        py.detach(|| -> Result<u64, wgdl::RuntimeError> {
            let start = p.initial_state()?;
            let (mut legal, mut total) = (Vec::new(), 0u64);
            for k in 0..n {
                let mut st = start.clone();
                let mut rng = stream(seed, k, 0, 0);
                loop {
                    p.legal_actions(&st, &mut legal)?;
                    if p.status(&st, &legal) != Status::Running {
                        break;
                    }
                    p.apply(&mut st, legal[rng.random_range(0..legal.len())])?;
                    total += 1;
                }
            }
            Ok(total)
        })
        .map_err(|e| runtime(p, e))
    }

    fn __repr__(&self) -> String {
        format!("<playforge.Game {}>", self.path)
    }
}

/// A game state, with its legal moves listed once per change.
#[pyclass(name = "State", module = "playforge._core")]
struct PyState {
    program: Arc<Program>,
    st: State,
    legal: Vec<Action>,
    status: Status,
}

impl PyState {
    fn new(program: Arc<Program>, st: State) -> PyResult<PyState> {
        let mut s = PyState { program, st, legal: Vec::new(), status: Status::Running };
        s.refresh()?;
        Ok(s)
    }
    fn refresh(&mut self) -> PyResult<()> {
        self.program.legal_actions(&self.st, &mut self.legal).map_err(|e| runtime(&self.program, e))?;
        self.status = self.program.status(&self.st, &self.legal);
        Ok(())
    }
}

#[pymethods]
impl PyState {
    /// The legal moves, as integers that mean the same move in every state.
    fn legal_actions(&self) -> Vec<u64> {
        self.legal.iter().map(|&a| pack(a)).collect()
    }

    /// A move's readable name, e.g. `drop(red, 3)`.
    fn action_to_string(&self, action: u64) -> PyResult<String> {
        let a = self.legal_move(action)?;
        Ok(self.program.action_name(&self.st, a))
    }

    /// Plays a legal move (a `ValueError` for one that is not legal here). A move is short
    /// work: the interpreter is not released for it (that would cost more than the move).
    fn apply_action(&mut self, action: u64) -> PyResult<()> {
        let a = self.legal_move(action)?;
        self.program.apply(&mut self.st, a).map_err(|e| runtime(&self.program, e))?;
        self.refresh()
    }

    fn is_terminal(&self) -> bool {
        self.status != Status::Running
    }

    /// Why the game is over or that it is not: `running`, `won:<player>`, `draw`, `finished`,
    /// `stuck`, `turn-limit`, `step-limit`.
    fn status(&self) -> String {
        match self.status {
            Status::Running => "running".into(),
            Status::Won(k) => format!("won:{}", self.program.players.get(k as usize).map_or("?", |s| s.as_str())),
            Status::Draw => "draw".into(),
            Status::Finished => "finished".into(),
            Status::Stuck => "stuck".into(),
            Status::TurnLimit => "turn-limit".into(),
            Status::StepLimit => "step-limit".into(),
        }
    }

    /// Each player's return: +1 win, −1 loss, 0 otherwise (draws, limits, unfinished games); a
    /// one-player game returns 1 when its last goal holds, else 0.
    fn returns(&self) -> Vec<f64> {
        let n = self.program.players.len().max(1);
        match self.status {
            Status::Won(k) => (0..n).map(|i| if i == k as usize { 1.0 } else { -1.0 }).collect(),
            Status::Finished if n == 1 => vec![1.0],
            _ => vec![0.0; n],
        }
    }

    /// The player to move (0 in one-player games), −4 once the game is over (pyspiel's
    /// terminal id).
    fn current_player(&self) -> i64 {
        if self.status != Status::Running {
            return -4;
        }
        crate::game::Game::to_move(&WgdlGame::new(self.program.clone()), &self.st) as i64
    }

    /// Moves played so far.
    fn move_number(&self) -> u64 {
        self.st.moves as u64
    }

    fn clone(&self) -> PyState {
        PyState { program: self.program.clone(), st: self.st.clone(), legal: self.legal.clone(), status: self.status }
    }

    fn __copy__(&self) -> PyState {
        self.clone()
    }

    /// Every named value, one `name = value` per line (the clock, the game's values, then each
    /// object's attributes), then each grid's rows (`Program::state_text`).
    fn __str__(&self) -> String {
        self.program.state_text(&self.st)
    }
}

impl PyState {
    fn legal_move(&self, action: u64) -> PyResult<Action> {
        let a = unpack(action);
        if self.legal.contains(&a) {
            return Ok(a);
        }
        let names: Vec<String> = self.legal.iter().map(|&m| format!("{} ({})", pack(m), self.program.action_name(&self.st, m))).collect();
        Err(PyValueError::new_err(format!("action {action} is not legal here; expected one of: {}", names.join(", "))))
    }
}

/// A random stream (xoshiro), as every stream of playforge: `Rng(seed, generation,
/// individual, game)`. Bots draw from the one they are given, so that two bots sharing one
/// stream play as the command line's tournament does.
#[pyclass(name = "Rng", module = "playforge._core")]
struct PyRng(crate::rng::Rng);

#[pymethods]
impl PyRng {
    #[new]
    #[pyo3(signature = (seed, generation = 0, individual = 0, game = 0))]
    fn new(seed: u64, generation: u64, individual: u64, game: u64) -> PyRng {
        PyRng(stream(seed, generation, individual, game))
    }

    /// A uniform integer in [0, n).
    fn below(&mut self, n: u64) -> PyResult<u64> {
        if n == 0 {
            return Err(PyValueError::new_err("below(0); expected n ≥ 1"));
        }
        Ok(self.0.random_range(0..n))
    }
}

/// The seed of stream (seed, generation, individual, game), as the command line derives every
/// game's seed.
#[pyfunction]
fn derive(seed: u64, generation: u64, individual: u64, game: u64) -> u64 {
    crate::rng::derive(seed, generation, individual, game)
}

/// An AI player as the command line's `[[ai]]` tables describe one (JSON of the same keys):
/// `mcts` (iterations, c, playout policy, fallback policy below a mean), a WGDL `policy`, or
/// `random`.
#[pyclass(name = "Bot", module = "playforge._core", frozen)]
struct PyBot {
    player: crate::players::Player,
}

#[pymethods]
impl PyBot {
    #[new]
    fn new(game: &PyGame, config: &str) -> PyResult<PyBot> {
        let ai: crate::players::AiConfig = serde_json::from_str(config).map_err(|e| value_error(format!("a bot's config: {e}")))?;
        let player = crate::players::resolve(&ai, &game.program).map_err(value_error)?;
        Ok(PyBot { player })
    }

    /// The bot's move in `state`, drawing from `rng`.
    fn step(&self, py: Python<'_>, state: &PyState, rng: &mut PyRng) -> PyResult<u64> {
        if state.status != Status::Running {
            return Err(PyValueError::new_err("the game is over; expected a state with legal moves"));
        }
        let p = &self.player;
        let r = &mut rng.0;
        let m = py
            .detach(|| crate::players::agents::choose(&p.game, &p.agent, &state.st, &state.legal, r))
            .map_err(|e| runtime(&p.game.program, e))?;
        Ok(pack(m))
    }

    #[getter]
    fn name(&self) -> String {
        self.player.name.clone()
    }
}

/// Loads a WGDL game; `params` sets declared parameters by name (`{"red1.maxHp": 40}`),
/// `turn_order` is `grouped` or `alternating` for games with turns.
#[pyfunction]
#[pyo3(signature = (path, params = None, turn_order = None))]
fn load_game(py: Python<'_>, path: String, params: Option<Vec<(String, f64)>>, turn_order: Option<String>) -> PyResult<PyGame> {
    let opts = CompileOptions { overrides: params.unwrap_or_default(), turn_order, ..CompileOptions::default() };
    let c = py.detach(|| wgdl::load_with(std::path::Path::new(&path), &opts)).map_err(value_error)?;
    Ok(PyGame { program: c.program, path })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(run_batch, m)?)?;
    m.add_function(wrap_pyfunction!(job_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(set_ray_connector, m)?)?;
    m.add_function(wrap_pyfunction!(load_game, m)?)?;
    m.add_class::<PyGame>()?;
    m.add_class::<PyState>()?;
    m.add_class::<PyRng>()?;
    m.add_class::<PyBot>()?;
    m.add_class::<runs::PyRun>()?;
    m.add_function(wrap_pyfunction!(derive, m)?)?;
    m.add_function(wrap_pyfunction!(doors::open_door, m)?)?;
    m.add_class::<doors::DoorGame>()?;
    m.add_class::<doors::DoorGameState>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
