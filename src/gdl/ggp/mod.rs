//! The GGP protocol over HTTP on loopback: a player server (`playforge ggp serve`) and a game
//! manager (`playforge ggp match`), as the general game playing community's managers speak it.
//! This file holds the player and its server; `http.rs` reads and writes the HTTP messages (and
//! sends one, for the manager), `manager.rs` runs a match.
//!
//! Messages are KIF S-expressions in the body of an HTTP POST (content type `text/acl`):
//! * `(info)` → `available` (or `busy` during a match);
//! * `(start ID ROLE (RULES…) STARTCLOCK PLAYCLOCK)` → `ready`, once the rules are read and the
//!   start clock spent pre-searching (clocks in seconds);
//! * `(play ID nil)` for the first move, then `(play ID (A1 … An))` with the last joint move in
//!   role order → this player's action, as KIF;
//! * `(stop ID (A1 … An))` → `done`; `(abort ID)` → `aborted`.
//!
//! The manager sends every player each message, waits up to the play clock (plus a network
//! slack) for the answers, and plays a random legal action for a player that is late, fails or
//! answers an illegal action — as game managers do — noting it in the record. Past `max_steps`
//! joint moves without a terminal state it sends `(abort ID)` and records the match as aborted.
//!
//! The server answers every message in time whatever its reasoner is doing: one worker thread
//! owns the player and reads the messages in order; each connection's thread waits for the
//! worker only until the message's clock runs out (START: the start clock; PLAY: the play
//! clock; both less a margin for the answer to travel), then answers for it — `ready` to START
//! (the worker goes on loading the game), and to PLAY the random legal action the worker drew
//! as soon as it had the state's legal moves (the one of the latest state it reached, if it is
//! still behind). INFO is answered without the worker.
//!
//! **Hostile input** (issue 54). A description is loaded on a thread of its own, never on the
//! worker, so a description that loads slowly holds up neither this match's answers nor the
//! next match's. What the player says, since the protocol has no word for a refusal:
//! * a START whose description is refused (an error, or past the limits: terms nested without
//!   end, too many facts) within the start clock is answered with HTTP 400 and the error, not
//!   `ready`; PLAY for that match then gets HTTP 400 (`no match`), and the manager plays for
//!   the player, as for any failing player;
//! * a START whose description is still loading when the start clock runs out is answered
//!   `ready` (it may yet load: the protocol expects the player to catch up); PLAY before it has
//!   loaded gets HTTP 503, and the joint moves those PLAYs carry are replayed once it loads, so
//!   the player is in step with the manager; should it fail after all, PLAY gets HTTP 400;
//! * at most [`MAX_LOADS`] descriptions load at once (one left behind by a replaced match, and
//!   the current one): a START past that is answered HTTP 503;
//! * PLAY in an accepted match is always answered with a legal action: when the search fails
//!   or the clock runs out, a random legal action (never `nil`); HTTP 503 only while nothing is
//!   known yet (the description still loading);
//! * HTTP: at most [`MAX_CONNECTIONS`] connections are served at once, each request read whole
//!   within [`REQUEST_DEADLINE`]; past the cap a connection is answered 503 by one refusing
//!   thread (its request read first, within [`REFUSE_DEADLINE`]) or, when even its queue is
//!   full, closed; a malformed request gets 400 (413 past [`MAX_MESSAGE`], 408 when too slow,
//!   405 for a method other than POST), never a bare close;
//! * no wildcard CORS: a GGP manager is a program, not a web page, so a browser page of another
//!   site must not drive the player (a `text/plain` POST needs no preflight). A request with an
//!   `Origin` that is not loopback (`http://localhost`, `http://127.0.0.1`, `http://[::1]`, any
//!   port) is refused with 403; a loopback origin (a manager page served locally) gets its own
//!   origin back in `Access-Control-Allow-Origin`, and OPTIONS preflights are answered for it.

mod http;
mod manager;

pub use http::send;
use http::{loopback_origin, read_request, respond};
pub use manager::{Played, run_match};

use super::parse::{Sexp, sexps};
use super::{Gdl, GdlAnyState, JointMove};
use crate::game::Game;
use crate::search::player2::{Player2Config, Session};
use anyhow::{Context, Result, anyhow, bail};
use rand::RngExt;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// Largest message accepted, in bytes (16 MiB, as a description file).
pub const MAX_MESSAGE: usize = 16 << 20;
/// Largest request head (request line and headers), in bytes: 64 KiB.
const MAX_HEAD: usize = 64 << 10;
/// Network slack the manager adds to every clock.
const SLACK: Duration = Duration::from_millis(1000);
/// How long a connection may take to send its whole request (10 s; a deadline for the request,
/// not for each read, so a client sending a byte at a time cannot hold a connection).
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(10);
/// Connections served at once (32); past it, connections are refused with 503.
pub const MAX_CONNECTIONS: usize = 32;
/// Connections waiting for the refusing thread (64); past it, a connection is closed unread.
const REFUSE_QUEUE: usize = 64;
/// How long the refusing thread reads a refused connection's request before answering 503.
pub const REFUSE_DEADLINE: Duration = Duration::from_millis(500);
/// Descriptions loading at once (2: one left behind by a replaced match, and the current one).
pub const MAX_LOADS: usize = 2;
/// Longest error text sent back (bytes): an error never echoes a large message whole.
const MAX_ERROR_TEXT: usize = 400;
/// Share of the start clock the grounder may spend before the non-ground reasoner takes over.
const GROUND_SHARE: f64 = 0.3;

/// The time to think within a clock: a quarter of it, at most half a second, is kept for the
/// answer to travel.
fn within(clock: Duration) -> Duration {
    clock.saturating_sub((clock / 4).min(Duration::from_millis(500)))
}

/// Which searcher a server plays with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlayerKind {
    Player2,
    Mcts { iterations: u64 },
    Random,
}

/// A match as a player sees it.
struct Match {
    id: String,
    game: Arc<Gdl>,
    role: usize,
    state: GdlAnyState,
    playclock: Duration,
    session: Option<Session<Gdl>>,
    rng: crate::rng::Rng,
}

/// A player: its searcher and the match it is in, if any.
pub struct Player {
    kind: PlayerKind,
    current: Option<Match>,
    /// A match whose description was still loading when its start clock ran out.
    pending: Option<Pending>,
    /// Descriptions loading now (at most [`MAX_LOADS`]).
    loaders: Arc<AtomicUsize>,
    seed: u64,
    board: Arc<Mutex<Board>>,
}

/// What comes back from a loading thread: the game, or why it was refused.
type Loaded = std::result::Result<Arc<Gdl>, String>;

/// A match accepted while its description was still loading.
/// The most joint moves kept for a match whose description is still loading.
const MAX_PENDING_MOVES: usize = 10_000;

struct Pending {
    id: String,
    role: String,
    playclock: Duration,
    loaded: mpsc::Receiver<Loaded>,
    /// The joint moves PLAY brought meanwhile, to replay once it has loaded.
    moves: Vec<Vec<Sexp>>,
}

/// A message the player refuses, with the HTTP status that says so (400: the message or its
/// description is wrong; 503: not now).
#[derive(Debug)]
pub struct Refused {
    pub status: u16,
    pub why: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.why)
    }
}

impl std::error::Error for Refused {}

fn refused(status: u16, why: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Refused { status, why: why.into() })
}

/// The HTTP status of an error of [`Player::answer`]: its [`Refused`] status, else 400.
pub fn status_of(e: &anyhow::Error) -> u16 {
    e.downcast_ref::<Refused>().map_or(400, |r| r.status)
}

/// What a connection's thread reads without waiting for the worker.
#[derive(Default)]
struct Board {
    /// A match is on (from START until STOP or ABORT): INFO answers `busy`.
    in_match: bool,
    playclock: Option<Duration>,
    /// A random legal action of this player's role in the latest state the worker reached.
    fallback: Option<String>,
}

fn lock(b: &Mutex<Board>) -> std::sync::MutexGuard<'_, Board> {
    b.lock().unwrap_or_else(|e| e.into_inner())
}

fn text(s: &Sexp) -> String {
    match s {
        Sexp::Sym(x, _) => x.clone(),
        Sexp::Var(v, _) => format!("?{v}"),
        Sexp::List(items, _) => format!("({})", items.iter().map(text).collect::<Vec<_>>().join(" ")),
    }
}

fn clock_secs(s: &Sexp) -> Result<Duration> {
    let t = text(s);
    let v: f64 = t.parse().map_err(|_| anyhow!("clock `{t}`: expected seconds"))?;
    if !(v > 0.0 && v <= 86_400.0) {
        bail!("clock {v}: expected seconds in (0, 86400]");
    }
    Ok(Duration::from_secs_f64(v))
}

/// The joint move of a list of action terms in role order.
fn joint_of(game: &Gdl, state: &GdlAnyState, moves: &[Sexp]) -> Result<JointMove> {
    if moves.len() != game.roles() {
        bail!("{} moves for {} roles", moves.len(), game.roles());
    }
    // The state's legal actions first: the non-ground reasoner numbers an action when it first
    // sees it legal (the moves replayed after a late load come from states it never asked).
    game.legal_actions(state);
    let mut j = 0;
    for (r, m) in moves.iter().enumerate() {
        let t = text(m);
        let i = game.action_index(r, &t).ok_or_else(|| anyhow!("`{t}` is no action of role {}", game.role_name(r)))?;
        j |= super::game::joint_part(i, r);
    }
    Ok(j)
}

impl Player {
    pub fn new(kind: PlayerKind, seed: u64) -> Player {
        Player { kind, current: None, pending: None, loaders: Arc::default(), seed, board: Arc::default() }
    }

    /// Makes `game` the current match: the role found, the session pre-searching until `until`
    /// (none when the start clock is spent), the initial state.
    fn install(&mut self, id: String, role_name: &str, game: Arc<Gdl>, play: Duration, until: Option<Instant>) -> Result<()> {
        let r = (0..game.roles())
            .find(|&r| game.role_name(r) == role_name)
            .or_else(|| (0..game.roles()).find(|&r| game.role_name(r).eq_ignore_ascii_case(role_name)))
            .ok_or_else(|| anyhow!("role `{role_name}` is not in the game"))?;
        let mut session = (self.kind == PlayerKind::Player2).then(|| Session::new(game.clone(), r, Player2Config::default()));
        if let (Some(s), Some(until)) = (session.as_mut(), until) {
            let left = until.saturating_duration_since(Instant::now());
            if !left.is_zero() {
                s.start(left).map_err(|e| anyhow!("{e}"))?;
            }
        }
        let state = game.initial().map_err(|e| anyhow!("{e}"))?;
        let rng = crate::rng::stream(self.seed, 0, r as u64, 0);
        self.current = Some(Match { id, game, role: r, state, playclock: play, session, rng });
        Ok(())
    }

    /// For a message of match `id`: a pending match whose description has loaded since becomes
    /// current (the joint moves played meanwhile replayed); one still loading is a 503, one
    /// whose description failed a 400.
    fn settle(&mut self, id: &str, moves: Option<&[Sexp]>) -> Result<()> {
        let Some(p) = self.pending.as_mut().filter(|p| p.id == id) else { return Ok(()) };
        let why = match p.loaded.try_recv() {
            Err(mpsc::TryRecvError::Empty) => {
                if let Some(ms) = moves {
                    // A match's moves are kept while it loads, as many as a long match has, so
                    // that a client repeating PLAY cannot fill the memory.
                    if p.moves.len() >= MAX_PENDING_MOVES {
                        return Err(refused(400, format!("match `{id}`: more than {MAX_PENDING_MOVES} moves while its description loads")));
                    }
                    p.moves.push(ms.to_vec());
                }
                return Err(refused(503, format!("the description of match `{id}` is still loading")));
            }
            Err(mpsc::TryRecvError::Disconnected) => "its loading stopped".to_string(),
            Ok(Err(e)) => e,
            Ok(Ok(game)) => {
                let p = self.pending.take().expect("a pending match");
                self.install(p.id, &p.role, game, p.playclock, None)?;
                let m = self.current.as_mut().expect("installed");
                for ms in &p.moves {
                    let j = joint_of(&m.game, &m.state, ms)?;
                    m.game.apply(&mut m.state, j).map_err(|e| anyhow!("{e}"))?;
                }
                return Ok(());
            }
        };
        {
            self.pending = None;
            *lock(&self.board) = Board::default();
            Err(refused(400, format!("the description of match `{id}` was refused: {}", first_line(&why))))
        }
    }

    /// Answers one message (the body of a request) received now.
    pub fn answer(&mut self, body: &str) -> Result<String> {
        self.answer_at(body, Instant::now())
    }

    /// Answers one message received at `arrived`: its clock runs from then.
    pub fn answer_at(&mut self, body: &str, arrived: Instant) -> Result<String> {
        let forms = sexps(body).map_err(|e| anyhow!("unreadable message: {:?}", e.first().map(|e| &e.kind)))?;
        let Some(Sexp::List(items, _)) = forms.first() else {
            bail!("expected a message `(info)`, `(start …)`, `(play …)`, `(stop …)` or `(abort …)`")
        };
        let Some(Sexp::Sym(kind, _)) = items.first() else { bail!("expected a message name first") };
        let kind = kind.to_lowercase();
        match (kind.as_str(), &items[1..]) {
            ("info", _) => Ok(if self.current.is_some() || self.pending.is_some() { "busy" } else { "available" }.into()),
            ("start", [id, role, Sexp::List(_, rules_span), sc, pc]) => {
                let (start, play) = (clock_secs(sc)?, clock_secs(pc)?);
                self.current = None;
                self.pending = None;
                if self.loaders.load(Ordering::SeqCst) >= MAX_LOADS {
                    *lock(&self.board) = Board::default();
                    return Err(refused(503, format!("{MAX_LOADS} descriptions are loading already; expected one at a time")));
                }
                {
                    let mut b = lock(&self.board);
                    *b = Board { in_match: true, playclock: Some(play), fallback: None };
                }
                // The rules are the list's contents, read as a description on a thread of its
                // own; the grounder gets a share of the start clock, past which the non-ground
                // reasoner plays.
                let inner = body[rules_span.lo as usize + 1..rules_span.hi as usize - 1].to_string();
                let limits = super::ground::GroundLimits {
                    time: super::ground::GroundLimits::default().time.min(start.mul_f64(GROUND_SHARE)),
                    ..Default::default()
                };
                let (tx, loaded) = mpsc::channel::<Loaded>();
                let loaders = self.loaders.clone();
                loaders.fetch_add(1, Ordering::SeqCst);
                std::thread::Builder::new()
                    .name("ggp-load".into())
                    .spawn(move || {
                        let r = super::compile_any("START", &inner, limits).map(Arc::new).map_err(|e| e.to_string());
                        loaders.fetch_sub(1, Ordering::SeqCst);
                        let _ = tx.send(r);
                    })
                    .map_err(|e| {
                        self.loaders.fetch_sub(1, Ordering::SeqCst);
                        refused(503, format!("cannot start a thread to load the description: {e}"))
                    })?;
                // The worker's deadline falls before the connection's (which answers `ready`
                // for a worker that is late), so that its answer is the one sent.
                let until = arrived + within(within(start));
                match loaded.recv_timeout(until.saturating_duration_since(Instant::now())) {
                    Ok(Ok(game)) => {
                        self.install(text(id), &text(role), game, play, Some(until))
                            .inspect_err(|_| *lock(&self.board) = Board::default())?;
                        Ok("ready".into())
                    }
                    Ok(Err(e)) => {
                        *lock(&self.board) = Board::default();
                        Err(refused(400, format!("the description was refused: {}", first_line(&e))))
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        self.pending = Some(Pending { id: text(id), role: text(role), playclock: play, loaded, moves: Vec::new() });
                        Ok("ready".into())
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        *lock(&self.board) = Board::default();
                        Err(refused(500, "loading the description stopped"))
                    }
                }
            }
            ("play", [id, moves]) => {
                let kind = self.kind;
                let ms = if let Sexp::List(ms, _) = moves { Some(&ms[..]) } else { None };
                self.settle(&text(id), ms)?;
                let m = self.current.as_mut().filter(|m| m.id == text(id)).ok_or_else(|| anyhow!("no match `{}`", text(id)))?;
                if let Sexp::List(ms, _) = moves {
                    let j = joint_of(&m.game, &m.state, ms)?;
                    m.game.apply(&mut m.state, j).map_err(|e| anyhow!("{e}"))?;
                }
                let deadline = arrived + within(m.playclock);
                let mut legal = Vec::new();
                m.game.legal(&m.state, &mut legal).map_err(|e| anyhow!("{e}"))?;
                let Some(&first) = legal.first() else { bail!("no legal move in match `{}`", m.id) };
                // The answer given if the search is late: a random legal action.
                let mine = &m.game.legal_actions(&m.state)[m.role];
                let random = mine[m.rng.random_range(0..mine.len())];
                lock(&self.board).fallback = Some(m.game.action_name(m.role, random));
                // One legal action (a `noop` while another role moves), or no time left: no search.
                if mine.len() == 1 || Instant::now() >= deadline {
                    return Ok(m.game.action_name(m.role, random));
                }
                let left = deadline.saturating_duration_since(Instant::now());
                // A search that fails (its reasoner passing a limit) answers the random legal
                // action: an accepted match is always answered with a legal one.
                let joint = match kind {
                    PlayerKind::Random => return Ok(m.game.action_name(m.role, random)),
                    PlayerKind::Player2 => m.session.as_mut().expect("a Player2 session").play(&m.state, left).map_err(|e| anyhow!("{e}")),
                    PlayerKind::Mcts { iterations } => mcts_within(m, iterations, left),
                };
                match joint {
                    Ok(j) => Ok(m.game.action_name(m.role, Gdl::action_of(j.unwrap_or(first), m.role))),
                    Err(_) => Ok(m.game.action_name(m.role, random)),
                }
            }
            ("stop", [id, ..]) | ("abort", [id]) => {
                if self.current.as_ref().is_some_and(|m| m.id == text(id)) || self.pending.as_ref().is_some_and(|p| p.id == text(id)) {
                    self.current = None;
                    self.pending = None;
                    *lock(&self.board) = Board::default();
                }
                Ok(if kind == "stop" { "done" } else { "aborted" }.into())
            }
            (k, _) => bail!(
                "message `{k}` with {} arguments: expected (info), (start ID ROLE RULES SC PC), (play ID MOVES), (stop ID MOVES) or (abort ID)",
                items.len() - 1
            ),
        }
    }
}

/// The first line of an error, at most [`MAX_ERROR_TEXT`] bytes (an error must not echo a
/// large message whole).
fn first_line(e: &str) -> String {
    let line = e.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    match line.char_indices().nth(MAX_ERROR_TEXT) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// MCTS from the match's state within `left`: a probe of a few iterations times one, then as
/// many of the `iterations` as the rest of the time allows (all of them when there is time).
fn mcts_within(m: &mut Match, iterations: u64, left: Duration) -> Result<Option<JointMove>> {
    use crate::search::mcts::{FinalChoice, MctsConfig, decision_tree};
    let t = Instant::now();
    let eval = super::GoalEval { game: &*m.game };
    let cfg = MctsConfig { formula: crate::search::formula::Formula::ucb1(std::f64::consts::SQRT_2, 1.0), ..Default::default() };
    let f = cfg.formula.compile();
    let probe = iterations.min(32);
    let mut tree = decision_tree(&*m.game, &m.state, &cfg, &eval, probe, &mut m.rng).map_err(|e| anyhow!("{e}"))?;
    let per = t.elapsed().as_secs_f64() / probe as f64;
    let rest = left.saturating_sub(t.elapsed()).as_secs_f64() * 0.8;
    let n = if per > 0.0 { ((rest / per) as u64).min(iterations) } else { iterations };
    if n > probe {
        tree = decision_tree(&*m.game, &m.state, &cfg, &eval, n, &mut m.rng).map_err(|e| anyhow!("{e}"))?;
    }
    Ok(tree.final_choice(&f, FinalChoice::MostVisited).map(|c| c.0))
}

/// The message's name, lowercased, and for START its start clock (read off the end of the
/// text, without parsing the rules).
fn peek(body: &str) -> (String, Option<Duration>) {
    let t = body.trim_start().trim_start_matches('(');
    let kind = t.split(|c: char| c.is_whitespace() || c == '(' || c == ')').next().unwrap_or("").to_lowercase();
    let start = (kind == "start")
        .then(|| {
            let mut tail = body.trim_end().trim_end_matches(')').split_whitespace().rev();
            let (_, sc) = (tail.next(), tail.next()?);
            sc.parse::<f64>().ok().filter(|v| *v > 0.0 && *v <= 86_400.0).map(Duration::from_secs_f64)
        })
        .flatten();
    (kind, start)
}

type Job = (String, Instant, mpsc::Sender<(u16, String)>);

/// One connection: reads the request, hands it to the worker, and answers by the message's
/// clock whether or not the worker has.
fn handle(mut stream: TcpStream, board: &Mutex<Board>, worker: &mpsc::Sender<Job>) -> Result<()> {
    stream.set_write_timeout(Some(REQUEST_DEADLINE))?;
    let req = match read_request(&mut stream, Instant::now() + REQUEST_DEADLINE) {
        Ok(r) => r,
        Err(e) => return respond(&mut stream, e.status, &e.why, None),
    };
    let arrived = Instant::now();
    let origin = match req.origin.as_deref() {
        Some(o) if !loopback_origin(o) => {
            return respond(&mut stream, 403, &format!("origin `{}` refused; expected a manager on this machine", first_line(o)), None);
        }
        o => o,
    };
    match req.method.as_str() {
        "POST" => {}
        "OPTIONS" => return respond(&mut stream, 204, "", origin),
        m => return respond(&mut stream, 405, &format!("method `{}`; expected POST", first_line(m)), origin),
    }
    let body = req.body;
    let (kind, start) = peek(&body);
    if kind == "info" {
        let busy = lock(board).in_match;
        return respond(&mut stream, 200, if busy { "busy" } else { "available" }, origin);
    }
    let budget = match kind.as_str() {
        "start" => within(start.unwrap_or(SLACK * 10)),
        "play" => within(lock(board).playclock.unwrap_or(SLACK * 10)),
        _ => SLACK,
    };
    let (tx, rx) = mpsc::channel();
    worker.send((body, arrived, tx)).map_err(|_| anyhow!("the player's worker has stopped"))?;
    let (status, reply) = match rx.recv_timeout(budget.saturating_sub(arrived.elapsed())) {
        Ok(r) => r,
        Err(_) => {
            let late = match kind.as_str() {
                "start" => (200, "ready".to_string()),
                "play" => match lock(board).fallback.clone() {
                    Some(a) => (200, a),
                    None => (503, "no legal move is known yet".to_string()),
                },
                "stop" => (200, "done".into()),
                "abort" => (200, "aborted".into()),
                _ => (503, "the player is busy".into()),
            };
            eprintln!("ggp: the reasoner is late on `{}`; answered {} `{}`", first_line(&kind), late.0, late.1);
            late
        }
    };
    respond(&mut stream, status, &reply, origin)
}

/// A connection past [`MAX_CONNECTIONS`]: its request read (within [`REFUSE_DEADLINE`]) so
/// that the client reads the answer, then 503.
fn refuse(mut stream: TcpStream) {
    let _ = stream.set_write_timeout(Some(REFUSE_DEADLINE));
    let _ = read_request(&mut stream, Instant::now() + REFUSE_DEADLINE);
    let _ = respond(&mut stream, 503, &format!("the player serves {MAX_CONNECTIONS} connections at once; try again"), None);
}

/// Decrements the count of connections served when a connection's thread ends.
struct Served(Arc<AtomicUsize>);

impl Drop for Served {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Serves a player on 127.0.0.1:`port` until killed (`max_requests` ends it sooner, for tests).
pub fn serve(port: u16, kind: PlayerKind, seed: u64, max_requests: Option<u64>, ready: impl FnOnce(u16)) -> Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port)).with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    ready(listener.local_addr()?.port());
    let mut player = Player::new(kind, seed);
    let board = player.board.clone();
    let (jobs, inbox) = mpsc::channel::<Job>();
    std::thread::spawn(move || {
        for (body, arrived, reply) in inbox {
            let r = player.answer_at(&body, arrived).map(|a| (200, a)).unwrap_or_else(|e| {
                eprintln!("ggp: {}", first_line(&format!("{e:#}")));
                (status_of(&e), first_line(&format!("{e:#}")))
            });
            let _ = reply.send(r);
        }
    });
    let (to_refuse, refusals) = mpsc::sync_channel::<TcpStream>(REFUSE_QUEUE);
    std::thread::spawn(move || refusals.into_iter().for_each(refuse));
    let active = Arc::new(AtomicUsize::new(0));
    for (served, stream) in (1u64..).zip(listener.incoming()) {
        let Ok(stream) = stream else {
            // Out of descriptors, say: wait a moment rather than spin.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            // The refusing thread's queue full too: closed unread.
            let _ = to_refuse.try_send(stream);
        } else {
            active.fetch_add(1, Ordering::SeqCst);
            let guard = Served(active.clone());
            let (board, jobs) = (board.clone(), jobs.clone());
            let spawned = std::thread::Builder::new().name("ggp-conn".into()).spawn(move || {
                let _guard = guard;
                if let Err(e) = handle(stream, &board, &jobs) {
                    eprintln!("ggp: {}", first_line(&format!("{e:#}")));
                }
            });
            if let Err(e) = spawned {
                eprintln!("ggp: cannot start a connection's thread: {e}");
            }
        }
        if max_requests.is_some_and(|m| served >= m) {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After a late load, a server replays the moves played meanwhile from states its reasoner
    /// never asked: the non-ground reasoner must still know their actions.
    #[test]
    fn moves_replayed_after_a_late_load_are_found_on_the_non_ground_reasoner() {
        let text = include_str!("../../../games/gdl/tictactoe.kif");
        let limits = super::super::ground::GroundLimits { atoms: 2, ..Default::default() };
        let g = super::super::compile_any("tictactoe.kif", text, limits).expect("loads");
        assert!(matches!(g, Gdl::NonGround(_)));
        let mut st = g.initial().expect("initial");
        for moves in ["(mark 1 1) noop", "noop (mark 2 2)", "(mark 3 3) noop"] {
            let forms = sexps(moves).expect("moves");
            let j = joint_of(&g, &st, &forms).expect("every move is an action of its role");
            g.apply(&mut st, j).expect("applies");
        }
        let forms = sexps("noop (mark 9 9)").expect("moves");
        assert!(joint_of(&g, &st, &forms).is_err(), "a move that is not legal is still refused");
    }
}
