//! One game process on the bridge: launched with its command, a loopback port and a nonce in
//! its environment; heard only once it connects and says `hello` with that nonce (any other
//! connection is closed unanswered); then episodes, one at a time. Every wait has a deadline
//! (`connect_timeout` for the hello, `episode_timeout` for an outcome), the process's stderr is
//! kept (its last 4 000 characters) for the error that names it, and a dropped worker kills
//! its process: a game that hangs, dies or talks garbage is a [`Fault`], never a hung run.

use super::protocol::{self, Episode, FromGame, Hello, MAX_LINE, Outcome, PROTOCOL};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How to start a game.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Where it runs.
    pub dir: PathBuf,
    /// The worker's settings (`PLAYFORGE_SETTINGS`).
    pub settings: serde_json::Value,
    pub connect_timeout: Duration,
    pub episode_timeout: Duration,
    /// Speak on the game's stdin/stdout instead of a socket (`PLAYFORGE_STDIO=1`).
    pub stdio: bool,
}

/// What went wrong with a game process.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct Fault {
    pub kind: FaultKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FaultKind {
    /// The command could not start, or the game speaks another protocol.
    Refused,
    /// No hello or no outcome before the deadline.
    Timeout,
    /// The process exited or closed the connection.
    Died,
    /// A line that is not a message of the protocol.
    Garbage,
    /// An outcome that breaks its episode (its prefix, its n, its id): the game is not
    /// deterministic under its seed, or lies.
    Broken,
    /// The game reported an error of its own.
    Game,
}

impl FaultKind {
    /// Whether a fresh process may be tried on the same episode (a crash, a hang, garbage), or
    /// the episode is recorded as failed (a broken trace would break again).
    pub fn retry(self) -> bool {
        matches!(self, FaultKind::Timeout | FaultKind::Died | FaultKind::Garbage)
    }
}

fn fault(kind: FaultKind, message: impl Into<String>) -> Fault {
    Fault { kind, message: message.into() }
}

/// A running game process, introduced and ready for episodes.
pub struct Worker {
    child: Arc<Mutex<Child>>,
    link: Link,
    pub hello: Hello,
    stderr: Arc<Mutex<String>>,
    episode_timeout: Duration,
    command: String,
    /// The game's `log` messages (the last 100).
    pub logs: Vec<String>,
}

/// The last characters a stream wrote, kept by a thread that drains it.
fn keep_tail(mut from: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let tail = Arc::new(Mutex::new(String::new()));
    let keep = tail.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut t = keep.lock().unwrap_or_else(|e| e.into_inner());
            t.push_str(&String::from_utf8_lossy(&buf[..n]));
            if t.len() > 8000 {
                let cut = t.len() - 4000;
                let cut = (cut..t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(t.len());
                t.drain(..cut);
            }
        }
    });
    tail
}

impl Worker {
    /// Starts the game and waits for its hello.
    pub fn start(launch: &Launch) -> Result<Worker, Fault> {
        let Some((program, args)) = launch.command.split_first() else {
            return Err(fault(FaultKind::Refused, "command = []; expected a program and its arguments"));
        };
        // As errors name it: one line, at most 100 characters.
        let mut command = launch.command.join(" ").lines().next().unwrap_or("").to_string();
        if command.len() > 100 || launch.command.iter().any(|a| a.contains('\n')) {
            command = format!("{}…", command.chars().take(100).collect::<String>());
        }
        let io = |e: std::io::Error| fault(FaultKind::Refused, format!("`{command}`: {e}"));
        if launch.stdio {
            return Self::start_stdio(launch, program, args, command);
        }
        let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(io)?;
        let port = listener.local_addr().map_err(io)?.port();
        let nonce = format!("{:032x}", rand::random::<u128>());
        let mut child = spawn(launch, program, args, &nonce, Some(port), &command)?;
        let stderr = keep_tail(child.stderr.take().expect("stderr is piped"));
        let deadline = Instant::now() + launch.connect_timeout;
        if let Err(e) = listener.set_nonblocking(true) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io(e));
        }
        let w = loop {
            match listener.accept() {
                Ok((stream, _)) => match Self::introduce(stream, &nonce, deadline, &command) {
                    Ok(Some(w)) => break w,
                    Ok(None) => {}
                    Err(e) => {
                        let _ = child.kill();
                        let _ = child.wait();
                        return Err(e);
                    }
                },
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if let Ok(Some(status)) = child.try_wait() {
                        let err = tail(&stderr);
                        return Err(fault(FaultKind::Died, format!("`{command}` exited ({status}) before it said hello{err}")));
                    }
                    if Instant::now() >= deadline {
                        let _ = child.kill();
                        let _ = child.wait();
                        let err = tail(&stderr);
                        return Err(fault(
                            FaultKind::Timeout,
                            format!("`{command}` said no hello with its nonce within {:?} of its launch{err}", launch.connect_timeout),
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(io(e));
                }
            }
        };
        let (writer, reader, hello) = w;
        // A game that stops reading cannot block a write for longer than an episode may take.
        let _ = writer.set_write_timeout(Some(launch.episode_timeout.max(Duration::from_millis(1))));
        // The worker first, so that a failed welcome kills the process (its drop).
        let mut w = Worker {
            child: Arc::new(Mutex::new(child)),
            link: Link::Tcp { reader, writer },
            hello,
            stderr,
            episode_timeout: launch.episode_timeout,
            command,
            logs: Vec::new(),
        };
        w.send(&protocol::welcome())?;
        Ok(w)
    }

    /// Starts the game on pipes: its stdout carries the protocol (read by a thread into a
    /// channel, so that every wait has its deadline), its stdin playforge's messages.
    fn start_stdio(launch: &Launch, program: &str, args: &[String], command: String) -> Result<Worker, Fault> {
        let nonce = format!("{:032x}", rand::random::<u128>());
        let mut child = spawn(launch, program, args, &nonce, None, &command)?;
        let stderr = keep_tail(child.stderr.take().expect("stderr is piped"));
        let lines = read_lines(child.stdout.take().expect("stdout is piped"));
        let writer = child.stdin.take().expect("stdin is piped");
        let mut w = Worker {
            child: Arc::new(Mutex::new(child)),
            link: Link::Pipe { lines, writer },
            hello: Hello::default(),
            stderr,
            episode_timeout: launch.episode_timeout,
            command,
            logs: Vec::new(),
        };
        let deadline = Instant::now() + launch.connect_timeout;
        let first = match w.link.read_line(deadline) {
            Ok(line) => line,
            Err((FaultKind::Timeout, _)) => {
                let what = format!("said no hello within {:?} of its launch", launch.connect_timeout);
                return Err(w.fault(FaultKind::Timeout, &what, START));
            }
            Err((kind, what)) => return Err(w.fault(kind, &format!("before its hello: {what}"), START)),
        };
        let hello = match protocol::parse(&first) {
            Ok(FromGame::Hello(h)) if h.nonce == nonce => h,
            Ok(FromGame::Hello(_)) => return Err(w.fault(FaultKind::Refused, "said hello with another nonce", START)),
            Ok(_) => return Err(w.fault(FaultKind::Garbage, "spoke before its hello", START)),
            Err(e) => return Err(w.fault(FaultKind::Garbage, &e, START)),
        };
        if hello.protocol != PROTOCOL {
            let message = format!("protocol {}; this playforge speaks {PROTOCOL}", hello.protocol);
            let _ = w.send(&protocol::error(&message));
            return Err(w.fault(FaultKind::Refused, &format!("(game {:?}) speaks {message}", hello.game), START));
        }
        w.hello = hello;
        w.send(&protocol::welcome())?;
        Ok(w)
    }

    /// Reads a connection's hello: `None` for a connection that is not the game's (a wrong
    /// nonce, or no hello: closed unanswered).
    fn introduce(
        stream: TcpStream,
        nonce: &str,
        deadline: Instant,
        command: &str,
    ) -> Result<Option<(TcpStream, BufReader<TcpStream>, Hello)>, Fault> {
        let io = |e: std::io::Error| fault(FaultKind::Died, format!("`{command}`: {e}"));
        stream.set_nonblocking(false).map_err(io)?;
        let mut reader = BufReader::new(stream.try_clone().map_err(io)?);
        let Ok(line) = read_line(&mut reader, deadline) else { return Ok(None) };
        let Ok(FromGame::Hello(hello)) = protocol::parse(&line) else { return Ok(None) };
        if hello.nonce != nonce {
            return Ok(None);
        }
        let mut stream = stream;
        if hello.protocol != PROTOCOL {
            let message = format!("protocol {}; this playforge speaks {PROTOCOL}", hello.protocol);
            let _ = stream.write_all(protocol::error(&message).as_bytes());
            return Err(fault(FaultKind::Refused, format!("`{command}` (game {:?}) speaks {message}", hello.game)));
        }
        Ok(Some((stream, reader, hello)))
    }

    /// Plays one episode: its outcome, checked against it.
    pub fn play(&mut self, episode: &Episode) -> Result<Outcome, Fault> {
        if let Err(e) = self.send(&episode.line()) {
            return Err(self.fault(FaultKind::Died, &format!("closed the connection ({})", e.message), episode.id));
        }
        let deadline = Instant::now() + self.episode_timeout;
        loop {
            // Checked on every line, not only when a read times out: a game that keeps
            // logging without ever ending its episode still meets its deadline.
            if Instant::now() >= deadline {
                let what = format!("no outcome within {:?}", self.episode_timeout);
                return Err(self.fault(FaultKind::Timeout, &what, episode.id));
            }
            let line = self.link.read_line(deadline).map_err(|(kind, what)| {
                let what = if kind == FaultKind::Timeout { format!("no outcome within {:?}", self.episode_timeout) } else { what };
                self.fault(kind, &what, episode.id)
            })?;
            match protocol::parse(&line) {
                Ok(FromGame::Outcome(o)) => {
                    protocol::check(&o, episode).map_err(|e| fault(FaultKind::Broken, format!("`{}`: {e}", self.command)))?;
                    return Ok(o);
                }
                Ok(FromGame::Log { message }) => {
                    if self.logs.len() == 100 {
                        self.logs.remove(0);
                    }
                    self.logs.push(message);
                }
                Ok(FromGame::Error { message }) => {
                    return Err(self.fault(FaultKind::Game, &format!("reported an error: {message}"), episode.id));
                }
                Ok(FromGame::Hello(_)) => return Err(self.fault(FaultKind::Garbage, "said hello again; expected an outcome", episode.id)),
                Err(e) => return Err(self.fault(FaultKind::Garbage, &e, episode.id)),
            }
        }
    }

    /// A handle that kills this worker's process.
    pub fn killer(&self) -> Killer {
        Killer(self.child.clone())
    }

    /// Asks the game to stop and waits a second for it to exit (then kills it).
    pub fn stop(mut self) {
        let _ = self.send(&protocol::stop());
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until {
            if let Ok(Some(_)) = lock(&self.child).try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn send(&mut self, line: &str) -> Result<(), Fault> {
        let w: &mut dyn Write = match &mut self.link {
            Link::Tcp { writer, .. } => writer,
            Link::Pipe { writer, .. } => writer,
        };
        w.write_all(line.as_bytes()).and_then(|_| w.flush()).map_err(|e| fault(FaultKind::Died, format!("`{}`: {e}", self.command)))
    }

    /// A fault in episode `id`, with the process's state and the end of its stderr; the process
    /// is killed (its stream can no longer be trusted).
    fn fault(&mut self, kind: FaultKind, what: &str, id: u64) -> Fault {
        // A process that closed its end may be exiting: its own status says more than a kill.
        let until = Instant::now() + Duration::from_millis(if kind == FaultKind::Died { 300 } else { 0 });
        while Instant::now() < until && matches!(lock(&self.child).try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let status = {
            let mut child = lock(&self.child);
            let _ = child.kill();
            child.wait().map(|s| format!(" ({s})")).unwrap_or_default()
        };
        std::thread::sleep(Duration::from_millis(20));
        let err = tail(&self.stderr);
        let at = if id == START { String::new() } else { format!(", episode {id}") };
        fault(kind, format!("`{}`{status}{at}: {what}{err}", self.command))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        Killer(self.child.clone()).kill();
    }
}

/// Kills a worker's process from another thread (a run that stops while an episode is in
/// flight): the worker's wait then ends at once with [`FaultKind::Died`].
#[derive(Clone)]
pub struct Killer(Arc<Mutex<Child>>);

impl Killer {
    pub fn kill(&self) {
        let mut child = lock(&self.0);
        let _ = child.kill();
        let _ = child.wait();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// "; its stderr ends: …" when it wrote anything.
fn tail(stderr: &Arc<Mutex<String>>) -> String {
    let t = stderr.lock().unwrap_or_else(|e| e.into_inner());
    let t = t.trim();
    if t.is_empty() { String::new() } else { format!("; its stderr ends:\n{t}") }
}

/// Starts the game with the protocol's environment: a loopback `port` to connect to, or
/// (`None`) its stdin/stdout for the protocol; its stderr always piped (kept for errors).
fn spawn(launch: &Launch, program: &str, args: &[String], nonce: &str, port: Option<u16>, command: &str) -> Result<Child, Fault> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(&launch.dir)
        .env("PLAYFORGE_PROTOCOL", PROTOCOL.to_string())
        .env("PLAYFORGE_NONCE", nonce)
        .env("PLAYFORGE_SETTINGS", launch.settings.to_string())
        .stderr(Stdio::piped());
    match port {
        Some(port) => {
            cmd.env("PLAYFORGE_ADDR", "127.0.0.1").env("PLAYFORGE_PORT", port.to_string()).env_remove("PLAYFORGE_STDIO");
            cmd.stdin(Stdio::null()).stdout(Stdio::null());
        }
        None => {
            cmd.env("PLAYFORGE_STDIO", "1").env_remove("PLAYFORGE_ADDR").env_remove("PLAYFORGE_PORT");
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        }
    }
    cmd.spawn().map_err(|e| fault(FaultKind::Refused, format!("cannot start `{command}` in {}: {e}", launch.dir.display())))
}

/// The episode id of a fault before the first episode (the start).
const START: u64 = u64::MAX;

/// How playforge and a game talk: a loopback socket, or the game's stdin/stdout.
enum Link {
    Tcp { reader: BufReader<TcpStream>, writer: TcpStream },
    Pipe { lines: Receiver<Result<String, (FaultKind, String)>>, writer: ChildStdin },
}

impl Link {
    fn read_line(&mut self, deadline: Instant) -> Result<String, (FaultKind, String)> {
        match self {
            Link::Tcp { reader, .. } => read_line(reader, deadline),
            Link::Pipe { lines, .. } => {
                let left = deadline.saturating_duration_since(Instant::now());
                match lines.recv_timeout(left) {
                    Ok(r) => r,
                    Err(RecvTimeoutError::Timeout) => Err((FaultKind::Timeout, format!("no answer within {left:?}"))),
                    Err(RecvTimeoutError::Disconnected) => Err((FaultKind::Died, "closed its stdout".into())),
                }
            }
        }
    }
}

/// The lines a game writes on its stdout, read by a thread (each at most [`MAX_LINE`] bytes;
/// the first fault ends the stream).
fn read_lines(stdout: ChildStdout) -> Receiver<Result<String, (FaultKind, String)>> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut line = String::new();
            let r = match reader.by_ref().take(MAX_LINE as u64 + 1).read_line(&mut line) {
                Ok(0) => Err((FaultKind::Died, "closed its stdout".into())),
                Ok(_) if line.len() > MAX_LINE => Err((FaultKind::Garbage, format!("a line over {MAX_LINE} bytes"))),
                Ok(_) if !line.ends_with('\n') => Err((FaultKind::Died, "closed its stdout mid-line".into())),
                Ok(_) => Ok(line),
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err((FaultKind::Garbage, "a line that is not UTF-8".into())),
                Err(e) => Err((FaultKind::Died, format!("its stdout failed ({e})"))),
            };
            let end = r.is_err();
            if tx.send(r).is_err() || end {
                break;
            }
        }
    });
    rx
}

/// One line before `deadline`, at most [`MAX_LINE`] bytes.
fn read_line(reader: &mut BufReader<TcpStream>, deadline: Instant) -> Result<String, (FaultKind, String)> {
    let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    reader.get_ref().set_read_timeout(Some(left)).map_err(|e| (FaultKind::Died, e.to_string()))?;
    let mut line = String::new();
    match reader.by_ref().take(MAX_LINE as u64 + 1).read_line(&mut line) {
        Ok(0) => Err((FaultKind::Died, "closed the connection".into())),
        Ok(_) if line.len() > MAX_LINE => Err((FaultKind::Garbage, format!("a line over {MAX_LINE} bytes"))),
        Ok(_) if !line.ends_with('\n') => Err((FaultKind::Died, "closed the connection mid-line".into())),
        Ok(_) => Ok(line),
        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
            Err((FaultKind::Timeout, format!("no answer within {left:?}")))
        }
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err((FaultKind::Garbage, "a line that is not UTF-8".into())),
        Err(e) => Err((FaultKind::Died, format!("closed the connection ({e})"))),
    }
}
