//! The GGP protocol over HTTP on loopback: a player server (`playforge ggp serve`) and a game
//! manager (`playforge ggp match`), as the general game playing community's managers speak it.
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

use super::parse::{Sexp, sexps};
use super::{Gdl, GdlAnyState, JointMove};
use crate::game::Game;
use crate::search::player2::{Player2Config, Session};
use anyhow::{Context, Result, anyhow, bail};
use rand::RngExt;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// Largest message accepted, in bytes.
const MAX_MESSAGE: usize = 16 << 20;
/// Network slack the manager adds to every clock.
const SLACK: Duration = Duration::from_millis(1000);
/// How long a connection may take to send its request.
const READ_LIMIT: Duration = Duration::from_secs(30);
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
    seed: u64,
    board: Arc<Mutex<Board>>,
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
fn joint_of(game: &Gdl, moves: &[Sexp]) -> Result<JointMove> {
    if moves.len() != game.roles() {
        bail!("{} moves for {} roles", moves.len(), game.roles());
    }
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
        Player { kind, current: None, seed, board: Arc::default() }
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
            ("info", _) => Ok(if self.current.is_some() { "busy" } else { "available" }.into()),
            ("start", [id, role, Sexp::List(_, rules_span), sc, pc]) => {
                let (start, play) = (clock_secs(sc)?, clock_secs(pc)?);
                {
                    let mut b = lock(&self.board);
                    *b = Board { in_match: true, playclock: Some(play), fallback: None };
                }
                self.current = None;
                // The rules are the list's contents, read as a description; the grounder gets a
                // share of the start clock, past which the non-ground reasoner plays.
                let inner = &body[rules_span.lo as usize + 1..rules_span.hi as usize - 1];
                let limits = super::ground::GroundLimits {
                    time: super::ground::GroundLimits::default().time.min(start.mul_f64(GROUND_SHARE)),
                    ..Default::default()
                };
                let game = Arc::new(super::compile_any("START", inner, limits).map_err(|e| anyhow!("{e}"))?);
                let role_name = text(role);
                let r = (0..game.roles())
                    .find(|&r| game.role_name(r) == role_name)
                    .or_else(|| (0..game.roles()).find(|&r| game.role_name(r).eq_ignore_ascii_case(&role_name)))
                    .ok_or_else(|| anyhow!("role `{role_name}` is not in the game"))?;
                let mut session = (self.kind == PlayerKind::Player2).then(|| Session::new(game.clone(), r, Player2Config::default()));
                if let Some(s) = session.as_mut() {
                    let left = (arrived + within(start)).saturating_duration_since(Instant::now());
                    if !left.is_zero() {
                        s.start(left).map_err(|e| anyhow!("{e}"))?;
                    }
                }
                let state = game.initial().map_err(|e| anyhow!("{e}"))?;
                let rng = crate::rng::stream(self.seed, 0, r as u64, 0);
                self.current = Some(Match { id: text(id), game, role: r, state, playclock: play, session, rng });
                Ok("ready".into())
            }
            ("play", [id, moves]) => {
                let kind = self.kind;
                let m = self.current.as_mut().filter(|m| m.id == text(id)).ok_or_else(|| anyhow!("no match `{}`", text(id)))?;
                if let Sexp::List(ms, _) = moves {
                    let j = joint_of(&m.game, ms)?;
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
                let joint = match kind {
                    PlayerKind::Random => return Ok(m.game.action_name(m.role, random)),
                    PlayerKind::Player2 => {
                        m.session.as_mut().expect("a Player2 session").play(&m.state, left).map_err(|e| anyhow!("{e}"))?.unwrap_or(first)
                    }
                    PlayerKind::Mcts { iterations } => mcts_within(m, iterations, left)?.unwrap_or(first),
                };
                Ok(m.game.action_name(m.role, Gdl::action_of(joint, m.role)))
            }
            ("stop", [id, ..]) | ("abort", [id]) => {
                if self.current.as_ref().is_some_and(|m| m.id == text(id)) {
                    self.current = None;
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

/// Reads one HTTP request's body (POST with Content-Length).
fn read_request(stream: &mut TcpStream) -> Result<String> {
    let mut reader = BufReader::new(stream);
    let mut len = 0usize;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            bail!("connection closed before the headers ended");
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().context("Content-Length")?;
        }
    }
    if len > MAX_MESSAGE {
        bail!("message of {len} bytes; expected at most {MAX_MESSAGE}");
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    Ok(String::from_utf8(body)?)
}

fn respond(stream: &mut TcpStream, body: &str) -> Result<()> {
    write!(
        stream,
        "HTTP/1.0 200 OK\r\nContent-Type: text/acl\r\nContent-Length: {}\r\nAccess-Control-Allow-Origin: *\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()?;
    Ok(())
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

type Job = (String, Instant, mpsc::Sender<String>);

/// One connection: reads the request, hands it to the worker, and answers by the message's
/// clock whether or not the worker has.
fn handle(mut stream: TcpStream, board: &Mutex<Board>, worker: &mpsc::Sender<Job>) -> Result<()> {
    stream.set_read_timeout(Some(READ_LIMIT))?;
    stream.set_write_timeout(Some(READ_LIMIT))?;
    let body = read_request(&mut stream)?;
    let arrived = Instant::now();
    let (kind, start) = peek(&body);
    if kind == "info" {
        let busy = lock(board).in_match;
        return respond(&mut stream, if busy { "busy" } else { "available" });
    }
    let budget = match kind.as_str() {
        "start" => within(start.unwrap_or(SLACK * 10)),
        "play" => within(lock(board).playclock.unwrap_or(SLACK * 10)),
        _ => SLACK,
    };
    let (tx, rx) = mpsc::channel();
    worker.send((body, arrived, tx)).map_err(|_| anyhow!("the player's worker has stopped"))?;
    let reply = match rx.recv_timeout(budget.saturating_sub(arrived.elapsed())) {
        Ok(r) => r,
        Err(_) => {
            let late = match kind.as_str() {
                "start" => "ready".to_string(),
                "play" => lock(board).fallback.clone().unwrap_or_else(|| "nil".into()),
                "stop" => "done".into(),
                "abort" => "aborted".into(),
                _ => "error".into(),
            };
            eprintln!("ggp: the reasoner is late on `{kind}`; answered `{late}`");
            late
        }
    };
    respond(&mut stream, &reply)
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
            let r = player.answer_at(&body, arrived).unwrap_or_else(|e| {
                eprintln!("ggp: {e:#}");
                "error".into()
            });
            let _ = reply.send(r);
        }
    });
    for (served, stream) in (1u64..).zip(listener.incoming()) {
        let stream = stream?;
        let (board, jobs) = (board.clone(), jobs.clone());
        std::thread::spawn(move || {
            if let Err(e) = handle(stream, &board, &jobs) {
                eprintln!("ggp: {e:#}");
            }
        });
        if max_requests.is_some_and(|m| served >= m) {
            break;
        }
    }
    Ok(())
}

/// Sends one message to a player URL (`http://host:port/` or `host:port`) and waits up to
/// `timeout` for the answer.
pub fn send(url: &str, body: &str, timeout: Duration) -> Result<String> {
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let sock = std::net::ToSocketAddrs::to_socket_addrs(addr)?.next().ok_or_else(|| anyhow!("no address for {addr}"))?;
    let mut s = TcpStream::connect_timeout(&sock, timeout)?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    write!(s, "POST / HTTP/1.0\r\nHost: {addr}\r\nContent-Type: text/acl\r\nContent-Length: {}\r\n\r\n{body}", body.len())?;
    let mut resp = String::new();
    s.read_to_string(&mut resp)?;
    let (_, b) = resp.split_once("\r\n\r\n").ok_or_else(|| anyhow!("no HTTP body in the answer"))?;
    Ok(b.trim().to_string())
}

/// One played match: the joint moves (as text), notes on replaced moves, and the goals — none
/// when the match was aborted at the step limit.
#[derive(Debug)]
pub struct Played {
    pub moves: Vec<String>,
    pub notes: Vec<String>,
    pub goals: Option<Vec<u8>>,
    /// Each role's slowest answer to START and to PLAY (the time from sending to reading it).
    pub slowest: Vec<(Duration, Duration)>,
}

/// Runs a match of `rules` (the description's text) between player URLs, one per role in role
/// order, for at most `max_steps` joint moves (then the players get `(abort ID)`). A late,
/// failing or illegal answer is replaced by a random legal action.
pub fn run_match(rules: &str, urls: &[String], start: Duration, play: Duration, seed: u64, max_steps: u64) -> Result<Played> {
    let game = super::compile_any("match", rules, Default::default()).map_err(|e| anyhow!("{e}"))?;
    if urls.len() != game.roles() {
        bail!("{} players for {} roles; expected one per role", urls.len(), game.roles());
    }
    // The rules as managers send them: the forms alone, without the file's comments (a last
    // comment line would swallow the message's closing parenthesis).
    let forms = sexps(rules).map_err(|e| anyhow!("unreadable rules: {:?}", e.first().map(|e| &e.kind)))?;
    let rules = forms.iter().map(text).collect::<Vec<_>>().join(" ");
    let id = format!("playforge-{seed}");
    let (sc, pc) = (start.as_secs_f64(), play.as_secs_f64());
    let starts: Vec<_> = urls
        .iter()
        .enumerate()
        .map(|(r, u)| {
            let msg = format!("(start {id} {} ({rules}) {sc} {pc})", game.role_name(r));
            let u = u.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                (send(&u, &msg, start + SLACK), t.elapsed())
            })
        })
        .collect();
    let mut notes = Vec::new();
    let mut slowest = vec![(Duration::ZERO, Duration::ZERO); urls.len()];
    for (r, h) in starts.into_iter().enumerate() {
        let (answer, took) = h.join().map_err(|_| anyhow!("start thread panicked"))?;
        slowest[r].0 = took;
        match answer {
            Ok(a) if a.eq_ignore_ascii_case("ready") => {}
            other => notes.push(format!("start: role {} answered {other:?}", game.role_name(r))),
        }
    }
    let mut rng = crate::rng::stream(seed, 0, 0, 1);
    let mut st = game.initial().map_err(|e| anyhow!("{e}"))?;
    let mut legal = Vec::new();
    let mut last = "nil".to_string();
    let mut moves = Vec::new();
    loop {
        game.legal(&st, &mut legal).map_err(|e| anyhow!("{e}"))?;
        if game.status(&st, &legal) != crate::game::Status::Running {
            break;
        }
        if moves.len() as u64 >= max_steps {
            for u in urls {
                let _ = send(u, &format!("(abort {id})"), SLACK);
            }
            return Ok(Played { moves, notes, goals: None, slowest });
        }
        let msg = format!("(play {id} {last})");
        let answers: Vec<_> = urls
            .iter()
            .map(|u| {
                let (u, m) = (u.clone(), msg.clone());
                std::thread::spawn(move || {
                    let t = Instant::now();
                    (send(&u, &m, play + SLACK), t.elapsed())
                })
            })
            .collect();
        let per_role = game.legal_actions(&st);
        let mut joint: JointMove = 0;
        let mut texts = Vec::new();
        for (r, h) in answers.into_iter().enumerate() {
            let (answer, took) = h.join().map_err(|_| anyhow!("play thread panicked"))?;
            slowest[r].1 = slowest[r].1.max(took);
            let pick = match &answer {
                Ok(a) => game.action_index(r, a).filter(|i| per_role[r].contains(i)),
                Err(_) => None,
            };
            let i = pick.unwrap_or_else(|| {
                notes.push(format!(
                    "step {}: role {} answered {answer:?}; a random legal action was played",
                    moves.len(),
                    game.role_name(r)
                ));
                per_role[r][rng.random_range(0..per_role[r].len())]
            });
            joint |= super::game::joint_part(i, r);
            texts.push(game.action_name(r, i));
        }
        last = format!("({})", texts.join(" "));
        moves.push(texts.join(" "));
        game.apply(&mut st, joint).map_err(|e| anyhow!("{e}"))?;
    }
    let stop = format!("(stop {id} {last})");
    for u in urls {
        let _ = send(u, &stop, SLACK);
    }
    Ok(Played { moves, notes, goals: Some(game.goal_values(&st)), slowest })
}
