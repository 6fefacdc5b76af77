//! Games played in the browser: a [`Table`] is one game of one WGDL description on one chance
//! seed, each side a person or an AI (random, MCTS, one of the game's policies, or a procedural
//! persona: [`PersonaSeat`], deciding as `players::persona::persona_move` does in its games). A person's move
//! is answered by the AIs until a person is to move again or the game is over; `undo` goes back
//! to the person's previous turn, `restart` starts the same board again. Every state is sent as
//! its picture (`view`), its legal moves — each with the board cells it touches, found by playing
//! it on a copy and comparing, so that any board is clickable without knowing the game — and the
//! moves so far. After every move the game is saved as a trace in the replay format (chance seed,
//! overlays, players, moves, result), so the same board and refill stream can be given to the
//! personas. One trace file per game *played*: a finished trace is sealed, and an undo or a
//! restart after the end starts a new file, so a finished game's trace is never shortened. AI moves draw from a stream derived from (seed, move number): the same game replays
//! the same way.

use crate::game::{Game, Status, WgdlGame};
use crate::players::agents::{Agent, choose};
use crate::players::ai::{AiConfig, Replay, resolve};
use crate::players::persona::{MState, Measured, Reward, Search, persona_move};
use crate::search::mcts::MctsConfig;
use crate::wgdl::{Action, Program, State};
use anyhow::{Result, anyhow, bail};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// At most this many moves in one game (a runaway game stops with a message).
pub const MAX_MOVES: usize = 5_000;

/// Who plays a side: a person, or an AI by name (`random`, `mcts`, `policy:<name>`).
#[derive(Clone, Debug, PartialEq)]
pub enum Seat {
    Human,
    Ai(String),
}

impl Seat {
    pub fn parse(s: &str) -> Seat {
        if s == "human" { Seat::Human } else { Seat::Ai(s.to_string()) }
    }
    pub fn label(&self) -> String {
        match self {
            Seat::Human => "human".into(),
            Seat::Ai(n) => n.clone(),
        }
    }
}

/// The AIs a table offers for `program`: random, MCTS, and each of its policies.
pub fn ai_names(program: &Program) -> Vec<String> {
    let mut v = vec!["random".to_string(), "mcts".to_string()];
    v.extend(program.policies.iter().map(|p| format!("policy:{}", p.name)));
    v
}

fn ai_config(name: &str, mcts_iterations: u64) -> Result<AiConfig> {
    let mut cfg: AiConfig = toml::from_str(&format!("name = {}\nkind = \"random\"", toml::Value::String(name.to_string())))?;
    match name {
        "random" => {}
        "mcts" => {
            cfg.kind = "mcts".into();
            cfg.iterations = Some(mcts_iterations);
        }
        n => match n.strip_prefix("policy:") {
            Some(p) => {
                cfg.kind = "policy".into();
                cfg.policy = Some(p.to_string());
            }
            None => bail!("unknown player `{n}`; expected human, random, mcts or policy:<name>"),
        },
    }
    Ok(cfg)
}

/// A procedural persona as a player (a seat named `persona:<config>/<persona>`): its evolved
/// formula, with its config's measure, reward and search, on its config's game.
pub struct PersonaSeat {
    pub measured: Measured,
    pub cfg: MctsConfig,
    pub reward: Reward,
    pub search: Search,
}

/// How an AI seat decides.
enum Brain {
    Ai(Agent, WgdlGame),
    Persona(Box<PersonaSeat>),
}

/// One game in progress.
pub struct Table {
    pub game_path: PathBuf,
    pub program: Arc<Program>,
    pub game: WgdlGame,
    pub seed: u64,
    pub overlays: Vec<String>,
    pub seats: Vec<Seat>,
    agents: Vec<Option<Brain>>,
    /// The states so far: `states[k]` before move k.
    pub states: Vec<State>,
    pub moves: Vec<String>,
    /// The current trace file, if this table keeps traces.
    pub trace: Option<PathBuf>,
    /// The folder of this table's traces.
    traces: Option<PathBuf>,
    /// The moves of the finished game the current trace holds (sealed: never rewritten).
    sealed: Option<Vec<String>>,
    pub error: Option<String>,
}

/// A new trace file for a game on `seed` in `dir`: `seed-<seed>-<n>.json` with the first free
/// `n`, created here (so that two games started at once, by one server or two, never share one).
pub fn new_trace(dir: &Path, seed: u64) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow!("{}: {e}", dir.display()))?;
    for n in 1..1_000_000 {
        let p = dir.join(format!("seed-{seed}-{n}.json"));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&p) {
            Ok(_) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => bail!("{}: {e}", p.display()),
        }
    }
    bail!("{}: no free trace name", dir.display())
}

impl Table {
    /// A new game of `path` on chance seed `seed`, with `seats` (one per side; a one-player game
    /// has one), AIs searching `mcts_iterations` iterations a move, its traces in `traces` (a
    /// folder; the first file is made once the game is set up), `persona` resolving a seat
    /// named `persona:<name>`.
    pub fn new(
        path: &Path,
        seed: u64,
        overlays: Vec<String>,
        seats: Vec<Seat>,
        mcts_iterations: u64,
        traces: Option<PathBuf>,
        persona: &dyn Fn(&str) -> Result<PersonaSeat>,
    ) -> Result<Table> {
        let opts = crate::wgdl::CompileOptions { overlays: overlays.clone(), ..Default::default() };
        let program = crate::wgdl::load_with(path, &opts).map_err(|e| anyhow!("{e}"))?.program;
        let sides = program.players.len().max(1);
        if seats.len() != sides {
            bail!("{} seats for a game of {sides} side(s)", seats.len());
        }
        let mut agents = Vec::new();
        for s in &seats {
            agents.push(match s {
                Seat::Human => None,
                Seat::Ai(name) => match name.strip_prefix("persona:") {
                    Some(who) => {
                        let ps = persona(who)?;
                        if !overlays.is_empty() || ps.measured.game.program.source.text != program.source.text {
                            bail!("persona `{who}` plays the game of its config as written: no overlays, no parameters of its own");
                        }
                        Some(Brain::Persona(Box::new(ps)))
                    }
                    None => {
                        let p = resolve(&ai_config(name, mcts_iterations)?, &program)?;
                        Some(Brain::Ai(p.agent, p.game.with_seed(seed)))
                    }
                },
            });
        }
        let game = WgdlGame::new(program.clone()).with_seed(seed);
        let st = game.initial().map_err(|e| anyhow!("{}", e.render(&program)))?;
        let mut t = Table {
            game_path: path.to_path_buf(),
            program,
            game,
            seed,
            overlays,
            seats,
            agents,
            states: vec![st],
            moves: Vec::new(),
            trace: None,
            traces,
            sealed: None,
            error: None,
        };
        t.advance()?;
        if let Some(dir) = &t.traces {
            t.trace = Some(new_trace(dir, seed)?);
        }
        Ok(t)
    }

    pub fn state(&self) -> &State {
        self.states.last().expect("a table holds its start")
    }

    fn side_to_move(&self) -> usize {
        if self.program.players.is_empty() { 0 } else { self.state().to_move as usize }
    }

    fn legal(&self) -> Result<Vec<Action>> {
        let mut legal = Vec::new();
        self.game.legal(self.state(), &mut legal).map_err(|e| anyhow!("{}", e.render(&self.program)))?;
        Ok(legal)
    }

    pub fn status(&self) -> Result<Status> {
        let legal = self.legal()?;
        Ok(self.game.status(self.state(), &legal))
    }

    /// Whether the game waits for a person.
    pub fn human_to_move(&self) -> bool {
        self.status().is_ok_and(|s| s == Status::Running) && self.seats.get(self.side_to_move()) == Some(&Seat::Human)
    }

    fn play(&mut self, m: Action) -> Result<()> {
        if self.moves.len() >= MAX_MOVES {
            bail!("the game passed {MAX_MOVES} moves; start a new one");
        }
        let name = self.program.action_name(self.state(), m);
        let mut st = self.state().clone();
        self.game.apply(&mut st, m).map_err(|e| anyhow!("{}", e.render(&self.program)))?;
        self.states.push(st);
        self.moves.push(name);
        Ok(())
    }

    /// One AI move, if an AI is to move in a running game. Returns whether it moved.
    pub fn ai_step(&mut self) -> Result<bool> {
        if self.status()? != Status::Running {
            return Ok(false);
        }
        let side = self.side_to_move();
        let Some(Some(brain)) = self.agents.get(side) else { return Ok(false) };
        let legal = self.legal()?;
        let mut rng = crate::rng::stream(self.seed, 7, side as u64, self.moves.len() as u64);
        let render = |e: crate::wgdl::RuntimeError| anyhow!("{}", e.render(&self.program));
        let m = match brain {
            Brain::Ai(agent, game) => choose(game, agent, self.state(), &legal, &mut rng).map_err(render)?,
            Brain::Persona(_) if legal.len() == 1 => legal[0],
            Brain::Persona(ps) => {
                // The persona's state: the measure summed before each move so far, as in its games.
                let g = ps.measured.seeded(self.seed);
                let (mut sum, mut n) = (0.0, 0);
                if g.mean {
                    for st in &self.states[..self.states.len() - 1] {
                        sum += g.now(st).map_err(render)?;
                        n += 1;
                    }
                }
                let s = MState::new(self.state().clone(), sum, n);
                let mut cfg = ps.cfg.clone();
                persona_move(&g, &s, &mut cfg, ps.reward, &ps.search, self.moves.len() as u32, &mut rng).map_err(render)?
            }
        };
        self.play(m)?;
        Ok(true)
    }

    /// AIs move until a person is to move or the game is over (every seat an AI: nothing; the
    /// page steps them).
    fn advance(&mut self) -> Result<()> {
        if self.seats.iter().all(|s| *s != Seat::Human) {
            return Ok(());
        }
        while self.ai_step()? {}
        Ok(())
    }

    /// A person's move, by its index in the legal list the page was sent; then the AIs answer.
    pub fn human_move(&mut self, index: usize, expect: Option<&str>) -> Result<()> {
        if !self.human_to_move() {
            bail!("it is not a person's turn");
        }
        let legal = self.legal()?;
        let Some(&m) = legal.get(index) else { bail!("move {index}: there are {} legal moves", legal.len()) };
        if let Some(name) = expect
            && self.program.action_name(self.state(), m) != name
        {
            bail!("move {index} is no longer `{name}`: reload the page");
        }
        self.play(m)?;
        self.advance()
    }

    /// Back to the person's previous turn (undoing the AIs' answers too).
    pub fn undo(&mut self) {
        let human_at = |t: &Table, k: usize| {
            let st = &t.states[k];
            let side = if t.program.players.is_empty() { 0 } else { st.to_move as usize };
            t.seats.get(side) == Some(&Seat::Human)
        };
        let all_ai = self.seats.iter().all(|s| *s != Seat::Human);
        while self.states.len() > 1 {
            self.states.pop();
            self.moves.pop();
            if all_ai || human_at(self, self.states.len() - 1) {
                break;
            }
        }
    }

    /// The same board from the start.
    pub fn restart(&mut self) -> Result<()> {
        self.states.truncate(1);
        self.moves.clear();
        self.advance()
    }

    /// The game as a replay (a trace of a person's game).
    pub fn replay(&self) -> Replay {
        let result = match self.status() {
            Ok(Status::Running) => String::new(),
            Ok(s) => format!("{s:?}"),
            Err(e) => format!("error: {e}"),
        };
        Replay {
            game: self.game_path.clone(),
            turn_order: None,
            params: Vec::new(),
            players: self.seats.iter().map(Seat::label).collect(),
            moves: self.moves.clone(),
            result,
            chance_seed: self.seed,
            overlays: self.overlays.clone(),
        }
    }

    /// Whether the game is over (or cannot go on).
    pub fn is_over(&self) -> bool {
        !matches!(self.status(), Ok(Status::Running))
    }

    /// Writes the trace (atomically), if this table keeps one: from the start, so that an
    /// abandoned game is a trace too (an unfinished one, which `humans` skips and says so). A
    /// trace that holds a finished game is sealed: if the moves changed since (an undo or a
    /// restart after the end), the game goes on in a new file; if not, nothing is written.
    pub fn save(&mut self) -> Result<()> {
        let Some(dir) = &self.traces else { return Ok(()) };
        if let Some(done) = &self.sealed {
            if *done == self.moves {
                return Ok(());
            }
            self.trace = Some(new_trace(dir, self.seed)?);
            self.sealed = None;
        }
        if let Some(p) = &self.trace {
            crate::report::write_atomic(p, serde_json::to_string_pretty(&self.replay())?.as_bytes())?;
            if self.is_over() {
                self.sealed = Some(self.moves.clone());
            }
        }
        Ok(())
    }

    /// The board cells (`data-cell` ids of the picture) move `m` changes: grid cells whose value
    /// changes, and the hex cells an occupant whose attributes change stands on before or after.
    fn touched(&self, m: Action) -> Vec<String> {
        let before = self.state();
        let mut after = before.clone();
        if self.game.apply(&mut after, m).is_err() {
            return Vec::new();
        }
        let p = &self.program;
        let mut cells = Vec::new();
        for (k, g) in p.grids.iter().enumerate() {
            for y in 0..g.height {
                for x in 0..g.width {
                    let s = (g.base + y * g.width + x) as usize;
                    if before.slots.get(s) != after.slots.get(s) {
                        cells.push(format!("g{k}-{x}-{y}"));
                    }
                }
            }
        }
        if let (Some(h), Some(occ)) = (&p.hex, &p.occupants) {
            let cell_of = |st: &State, i: usize| -> Option<usize> {
                let o = st.objects.get(i)?;
                let c = *st.slots.get(o.base as usize + occ.pos as usize)?;
                (c >= 0 && (c as usize) < h.len()).then_some(c as usize)
            };
            for i in 0..after.objects.len() {
                let o = after.objects[i];
                if !p.is_sub(o.class, occ.class) {
                    continue;
                }
                let n = p.classes[o.class as usize].attrs.len();
                let range = o.base as usize..o.base as usize + n;
                let changed = match before.objects.get(i) {
                    None => true,
                    Some(b) => b.alive != o.alive || before.slots.get(b.base as usize..b.base as usize + n) != after.slots.get(range),
                };
                if changed {
                    for c in [cell_of(before, i), cell_of(&after, i)].into_iter().flatten() {
                        let key = format!("h-{c}");
                        if !cells.contains(&key) {
                            cells.push(key);
                        }
                    }
                }
            }
        }
        cells
    }

    /// What the page shows.
    pub fn view(&self, id: &str) -> Value {
        let status = self.status();
        let over = !matches!(status, Ok(Status::Running));
        let legal = if over { Vec::new() } else { self.legal().unwrap_or_default() };
        let human = self.human_to_move();
        let moves: Vec<Value> = legal
            .iter()
            .enumerate()
            .map(|(i, &m)| json!({"i": i, "name": self.program.action_name(self.state(), m), "cells": if human { self.touched(m) } else { Vec::new() }}))
            .collect();
        let title = self.game_path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
        let side = self.side_to_move();
        json!({
            "id": id,
            "game": title,
            "seed": self.seed,
            "seats": self.seats.iter().map(Seat::label).collect::<Vec<_>>(),
            "sides": self.program.players,
            "svg": crate::view::render_svg(&self.program, self.state(), &format!("{title} — seed {}, move {}", self.seed, self.moves.len())),
            "legal": moves,
            "status": match &status {
                Ok(Status::Won(k)) => format!("{} won", self.program.players.get(*k as usize).map_or("?", |s| s.as_str())),
                Ok(s) => format!("{s:?}"),
                Err(e) => format!("error: {e}"),
            },
            "over": over,
            "human_to_move": human,
            "to_move": self.program.players.get(side).cloned().unwrap_or_default(),
            "ai_to_move": !over && !human,
            "moves": self.moves,
            "state_text": self.program.state_text(self.state()),
            "trace": self.trace.as_ref().map(|p| p.display().to_string()),
            "error": self.error,
        })
    }
}
