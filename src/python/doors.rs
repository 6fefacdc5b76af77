//! The doors' Rust half for Python (`playforge._core.open_door`, `DoorGame`, `DoorState`): a
//! game and its states as OpenSpiel, PettingZoo and Gymnasium ask for them (`crate::doors`).
//! The state's methods carry pyspiel's names and signatures, so that `playforge.openspiel`
//! can hand them to Python callers as they are (one call into Rust per question, no Python
//! frame in between); `playforge.pettingzoo` and `playforge.gymnasium` build on the same.

use crate::doors::{Door, DoorError, DoorState, OpenOptions, Utility};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyAny;
use std::sync::Arc;

fn py_err(e: DoorError) -> PyErr {
    match e {
        DoorError::Illegal(m) => PyValueError::new_err(m),
        DoorError::Runtime(m) => PyRuntimeError::new_err(m),
    }
}

/// Opens a WGDL game or a grounded GDL description behind the doors (docs/doors.md).
#[pyfunction]
#[pyo3(signature = (path, params = None, turn_order = None, overlays = None, objects = 64, reward = None, simultaneous = None))]
#[allow(clippy::too_many_arguments)]
pub fn open_door(
    py: Python<'_>,
    path: String,
    params: Option<Vec<(String, f64)>>,
    turn_order: Option<String>,
    overlays: Option<Vec<String>>,
    objects: u32,
    reward: Option<String>,
    simultaneous: Option<bool>,
) -> PyResult<DoorGame> {
    let opts = OpenOptions {
        params: params.unwrap_or_default(),
        turn_order,
        overlays: overlays.unwrap_or_default(),
        objects,
        reward: reward.filter(|r| !r.is_empty()),
        simultaneous,
    };
    let door = py.detach(|| Door::open(std::path::Path::new(&path), &opts)).map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
    Ok(DoorGame { door: Arc::new(door), path })
}

/// A game behind the doors: what the frameworks declare about it, and its start states.
#[pyclass(module = "playforge._core", frozen)]
pub struct DoorGame {
    door: Arc<Door>,
    path: String,
}

#[pymethods]
impl DoorGame {
    #[getter]
    fn path(&self) -> String {
        self.path.clone()
    }
    /// `wgdl` or `gdl`.
    #[getter]
    fn language(&self) -> &'static str {
        self.door.info().language
    }
    #[getter]
    fn players(&self) -> Vec<String> {
        self.door.info().players.clone()
    }
    #[getter]
    fn num_distinct_actions(&self) -> usize {
        self.door.info().num_distinct_actions
    }
    #[getter]
    fn observation_len(&self) -> usize {
        self.door.info().observation_len
    }
    #[getter]
    fn simultaneous(&self) -> bool {
        self.door.info().simultaneous
    }
    /// The game draws from its own seeded stream.
    #[getter]
    fn stochastic(&self) -> bool {
        self.door.info().stochastic
    }
    /// The most outcomes of a chance node (0: the game has none).
    #[getter]
    fn max_chance_outcomes(&self) -> usize {
        self.door.info().max_chance_outcomes
    }
    /// A reward after every move (the `reward` value's change).
    #[getter]
    fn rewards(&self) -> bool {
        self.door.info().rewards
    }
    /// `zero_sum` or `general_sum`.
    #[getter]
    fn utility(&self) -> &'static str {
        match self.door.info().utility {
            Utility::ZeroSum => "zero_sum",
            Utility::GeneralSum => "general_sum",
        }
    }
    #[getter]
    fn min_utility(&self) -> f64 {
        self.door.info().min_utility
    }
    #[getter]
    fn max_utility(&self) -> f64 {
        self.door.info().max_utility
    }
    #[getter]
    fn max_game_length(&self) -> usize {
        self.door.info().max_game_length
    }

    /// The start state; `seed` starts a WGDL game's own chance stream.
    #[pyo3(signature = (seed = 0))]
    fn new_initial_state(&self, seed: u64) -> PyResult<DoorGameState> {
        let s = self.door.initial(seed).map_err(py_err)?;
        Ok(DoorGameState { door: self.door.clone(), s, obs: Vec::new() })
    }

    fn __repr__(&self) -> String {
        format!("<playforge.DoorGame {}>", self.path)
    }
}

/// A state behind the doors, with pyspiel's method names.
#[pyclass(name = "DoorState", module = "playforge._core")]
pub struct DoorGameState {
    door: Arc<Door>,
    s: DoorState,
    /// The observation's buffer, reused.
    obs: Vec<f64>,
}

#[pymethods]
impl DoorGameState {
    /// `player`'s legal actions, sorted (the player to move's when `player` is omitted).
    #[pyo3(signature = (player = None))]
    fn legal_actions(&self, player: Option<i64>) -> Vec<i64> {
        match player {
            Some(p) if p < 0 => Vec::new(),
            p => self.s.legal(p.map(|p| p as usize)).to_vec(),
        }
    }

    /// 1 for each legal action, 0 for the others, over every distinct action.
    #[pyo3(signature = (player = None))]
    fn legal_actions_mask(&self, player: Option<i64>) -> Vec<i64> {
        let mut mask = vec![0; self.door.info().num_distinct_actions];
        for &a in &self.legal_actions(player) {
            mask[a as usize] = 1;
        }
        mask
    }

    /// A role's own legal actions whoever is to move (GDL; WGDL: as `legal_actions`).
    fn role_legal_actions(&self, player: usize) -> Vec<i64> {
        self.s.role_legal(player).to_vec()
    }

    fn apply_action(&mut self, action: i64) -> PyResult<()> {
        self.door.apply(&mut self.s, action).map_err(py_err)
    }

    /// One action per player at once (−1 for a role's only action).
    fn apply_actions(&mut self, actions: Vec<i64>) -> PyResult<()> {
        self.door.apply_joint(&mut self.s, &actions).map_err(py_err)
    }

    fn is_terminal(&self) -> bool {
        self.s.is_terminal()
    }
    /// A chance node: a WGDL `byChance` action's moves are legal (other games roll their own
    /// seeded dice inside their moves and have none).
    fn is_chance_node(&self) -> bool {
        self.s.current_player() == crate::doors::CHANCE
    }
    /// At a chance node, chance's actions and their probabilities.
    fn chance_outcomes(&self) -> Vec<(i64, f64)> {
        self.door.chance_outcomes(&self.s)
    }
    /// Plays chance's moves from the game's own stream until a player is to move.
    fn resolve_chance(&mut self) -> PyResult<()> {
        self.door.resolve_chance(&mut self.s).map_err(py_err)
    }
    fn is_simultaneous_node(&self) -> bool {
        self.s.current_player() == crate::doors::SIMULTANEOUS
    }
    fn is_player_node(&self) -> bool {
        self.s.current_player() >= 0
    }
    fn is_mean_field_node(&self) -> bool {
        false
    }
    /// The player to move, −2 at a simultaneous node, −4 once the game is over.
    fn current_player(&self) -> i64 {
        self.s.current_player()
    }
    fn returns(&self) -> Vec<f64> {
        self.door.returns(&self.s)
    }
    fn rewards(&self) -> Vec<f64> {
        self.door.rewards(&self.s)
    }
    fn player_return(&self, player: usize) -> PyResult<f64> {
        self.door.returns(&self.s).get(player).copied().ok_or_else(|| PyValueError::new_err(format!("player {player}; no such player")))
    }
    fn player_reward(&self, player: usize) -> PyResult<f64> {
        self.door.rewards(&self.s).get(player).copied().ok_or_else(|| PyValueError::new_err(format!("player {player}; no such player")))
    }
    fn history(&self) -> Vec<i64> {
        self.s.history().to_vec()
    }
    /// Moves played (a joint move counts once).
    fn move_number(&self) -> usize {
        self.s.moves()
    }
    /// `action_to_string(action)` for the player to move, or `action_to_string(player, action)`.
    #[pyo3(signature = (a, b = None))]
    fn action_to_string(&self, a: i64, b: Option<i64>) -> PyResult<String> {
        let (player, action) = match b {
            Some(action) => (a.max(0) as usize, action),
            None => (self.s.current_player().max(0) as usize, a),
        };
        self.door.action_name(&self.s, player, action).map_err(py_err)
    }
    /// The flat observation (docs/doors.md); the same for every player (perfect information).
    #[pyo3(signature = (player = None))]
    fn observation_tensor(&mut self, player: Option<i64>) -> PyResult<Vec<f64>> {
        let _ = player;
        self.door.observation(&self.s, &mut self.obs).map_err(py_err)?;
        Ok(self.obs.clone())
    }
    #[pyo3(signature = (player = None))]
    fn observation_string(&self, player: Option<i64>) -> String {
        let _ = player;
        self.door.text(&self.s)
    }
    #[pyo3(signature = (player = None))]
    fn information_state_string(&self, player: Option<i64>) -> String {
        let _ = player;
        self.door.text(&self.s)
    }
    /// `running`, `won:<player>`, `draw`, `finished`, `stuck`, `turn-limit`, `step-limit`.
    fn status(&self) -> String {
        self.door.status_name(&self.s)
    }
    /// The game stopped at a turn or step limit rather than by its rules.
    fn truncated(&self) -> bool {
        self.s.truncated()
    }
    fn clone(&self) -> DoorGameState {
        DoorGameState { door: self.door.clone(), s: self.s.clone(), obs: Vec::new() }
    }
    /// pyspiel's C++ `Clone` of a Python state deep-copies its attributes: a copy.
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> DoorGameState {
        self.clone()
    }
    fn __copy__(&self) -> DoorGameState {
        self.clone()
    }
    fn __str__(&self) -> String {
        self.door.text(&self.s)
    }
}
