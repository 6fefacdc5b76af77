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
//! answers an illegal action — as game managers do — noting it in the record.

use super::parse::{Sexp, sexps};
use super::{Gdl, GdlAnyState, JointMove};
use crate::game::Game;
use crate::search::player2::{Player2Config, Session};
use anyhow::{Context, Result, anyhow, bail};
use rand::RngExt;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// Largest message accepted, in bytes.
const MAX_MESSAGE: usize = 16 << 20;
/// Network slack the manager adds to every clock.
const SLACK: Duration = Duration::from_millis(1000);

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
        Player { kind, current: None, seed }
    }

    /// Answers one message (the body of a request).
    pub fn answer(&mut self, body: &str) -> Result<String> {
        let forms = sexps(body).map_err(|e| anyhow!("unreadable message: {:?}", e.first().map(|e| &e.kind)))?;
        let Some(Sexp::List(items, _)) = forms.first() else {
            bail!("expected a message `(info)`, `(start …)`, `(play …)`, `(stop …)` or `(abort …)`")
        };
        let Some(Sexp::Sym(kind, _)) = items.first() else { bail!("expected a message name first") };
        let kind = kind.to_lowercase();
        match (kind.as_str(), &items[1..]) {
            ("info", _) => Ok(if self.current.is_some() { "busy" } else { "available" }.into()),
            ("start", [id, role, Sexp::List(_, rules_span), sc, pc]) => {
                // The rules are the list's contents, read as a description.
                let inner = &body[rules_span.lo as usize + 1..rules_span.hi as usize - 1];
                let game = Arc::new(super::compile_any("START", inner, Default::default()).map_err(|e| anyhow!("{e}"))?);
                let role_name = text(role);
                let r = (0..game.roles())
                    .find(|&r| game.role_name(r) == role_name)
                    .or_else(|| (0..game.roles()).find(|&r| game.role_name(r).eq_ignore_ascii_case(&role_name)))
                    .ok_or_else(|| anyhow!("role `{role_name}` is not in the game"))?;
                let (start, play) = (clock_secs(sc)?, clock_secs(pc)?);
                let mut session = (self.kind == PlayerKind::Player2).then(|| Session::new(game.clone(), r, Player2Config::default()));
                if let Some(s) = session.as_mut() {
                    s.start(within(start)).map_err(|e| anyhow!("{e}"))?;
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
                let mut legal = Vec::new();
                m.game.legal(&m.state, &mut legal).map_err(|e| anyhow!("{e}"))?;
                let Some(&first) = legal.first() else { bail!("no legal move in match `{}`", m.id) };
                // One legal action (a `noop` while another role moves): no search, no clock spent.
                if let [only] = m.game.legal_actions(&m.state)[m.role][..] {
                    return Ok(m.game.action_name(m.role, only));
                }
                let joint = match kind {
                    PlayerKind::Random => legal[m.rng.random_range(0..legal.len())],
                    PlayerKind::Player2 => m
                        .session
                        .as_mut()
                        .expect("a Player2 session")
                        .play(&m.state, within(m.playclock))
                        .map_err(|e| anyhow!("{e}"))?
                        .unwrap_or(first),
                    PlayerKind::Mcts { iterations } => {
                        let eval = super::GoalEval { game: &*m.game };
                        let cfg = crate::search::mcts::MctsConfig {
                            formula: crate::search::formula::Formula::ucb1(std::f64::consts::SQRT_2, 1.0),
                            ..Default::default()
                        };
                        let f = cfg.formula.compile();
                        let t = crate::search::mcts::decision_tree(&*m.game, &m.state, &cfg, &eval, iterations, &mut m.rng)
                            .map_err(|e| anyhow!("{e}"))?;
                        t.final_choice(&f, crate::search::mcts::FinalChoice::MostVisited).map_or(first, |c| c.0)
                    }
                };
                Ok(m.game.action_name(m.role, Gdl::action_of(joint, m.role)))
            }
            ("stop", [id, ..]) | ("abort", [id]) => {
                if self.current.as_ref().is_some_and(|m| m.id == text(id)) {
                    self.current = None;
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

/// Serves a player on 127.0.0.1:`port` until killed (`max_requests` ends it sooner, for tests).
pub fn serve(port: u16, kind: PlayerKind, seed: u64, max_requests: Option<u64>, ready: impl FnOnce(u16)) -> Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port)).with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    ready(listener.local_addr()?.port());
    let mut player = Player::new(kind, seed);
    for (served, stream) in (1u64..).zip(listener.incoming()) {
        let mut stream = stream?;
        let reply = match read_request(&mut stream).and_then(|body| player.answer(&body)) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("ggp: {e:#}");
                "error".into()
            }
        };
        let _ = respond(&mut stream, &reply);
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

/// One played match: the joint moves (as text), notes on replaced moves, and the goals.
#[derive(Debug)]
pub struct Played {
    pub moves: Vec<String>,
    pub notes: Vec<String>,
    pub goals: Vec<u8>,
}

/// Runs a match of `rules` (the description's text) between player URLs, one per role in role
/// order. A late, failing or illegal answer is replaced by a random legal action.
pub fn run_match(rules: &str, urls: &[String], start: Duration, play: Duration, seed: u64) -> Result<Played> {
    let game = super::compile_any("match", rules, Default::default()).map_err(|e| anyhow!("{e}"))?;
    if urls.len() != game.roles() {
        bail!("{} players for {} roles; expected one per role", urls.len(), game.roles());
    }
    let id = format!("playforge-{seed}");
    let (sc, pc) = (start.as_secs_f64(), play.as_secs_f64());
    let starts: Vec<_> = urls
        .iter()
        .enumerate()
        .map(|(r, u)| {
            let msg = format!("(start {id} {} ({rules}) {sc} {pc})", game.role_name(r));
            let u = u.clone();
            std::thread::spawn(move || send(&u, &msg, start + SLACK))
        })
        .collect();
    let mut notes = Vec::new();
    for (r, h) in starts.into_iter().enumerate() {
        match h.join().map_err(|_| anyhow!("start thread panicked"))? {
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
        let msg = format!("(play {id} {last})");
        let answers: Vec<_> = urls
            .iter()
            .map(|u| {
                let (u, m) = (u.clone(), msg.clone());
                std::thread::spawn(move || send(&u, &m, play + SLACK))
            })
            .collect();
        let per_role = game.legal_actions(&st);
        let mut joint: JointMove = 0;
        let mut texts = Vec::new();
        for (r, h) in answers.into_iter().enumerate() {
            let answer = h.join().map_err(|_| anyhow!("play thread panicked"))?;
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
    Ok(Played { moves, notes, goals: game.goal_values(&st) })
}
