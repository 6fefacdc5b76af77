//! `playforge serve`: a small local web app over HTTP/1.1, written on `std::net` (one thread per
//! connection, at most [`MAX_CONNECTIONS`] at once; every response closes its connection). It
//! lists the run folders under the outputs folder with their reports (a folder without a
//! `report.html` gets one rendered on the fly) and the games of the games folder, and plays any
//! WGDL game in the browser through [`super::play::Table`]. It listens on the loopback address
//! unless told otherwise. Nothing a request says can make it panic or read outside its two
//! folders: a request is read within limits (head 16 KiB, body 64 KiB, 15 s), a file path is
//! resolved and must stay under the outputs folder, a game is named from the list it was started
//! with, and a handler that fails answers with a status and a message.

use super::html::{self, escape};
use super::play::{Seat, Table, ai_names};
use anyhow::{Result, anyhow, bail};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const MAX_CONNECTIONS: usize = 32;
const MAX_HEAD: usize = 16 * 1024;
const MAX_BODY: usize = 64 * 1024;
/// Games kept in memory; the oldest untouched one goes first.
const MAX_TABLES: usize = 64;

const PLAY_HTML: &str = include_str!("play.html");
/// A hex in the header's colour (browsers ask for one).
const FAVICON: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><polygon points="8,1 14,4.5 14,11.5 8,15 2,11.5 2,4.5" fill="#2c3e50"/></svg>"##;

/// Where `serve` listens and what it serves.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    pub host: String,
    pub port: u16,
    /// Run folders (and the traces of games played here, under `traces/`).
    pub outputs: PathBuf,
    /// The `.wgdl` files offered for play.
    pub games: PathBuf,
    /// Persona configs (`*.toml` with a `[personas]` table): their runs under the outputs
    /// folder are offered as players of their game.
    pub configs: PathBuf,
    pub mcts_iterations: u64,
}

struct Server {
    opts: ServeOptions,
    outputs: PathBuf,
    games: Vec<(String, PathBuf)>,
    tables: Mutex<HashMap<u64, (Arc<Mutex<Table>>, Instant)>>,
    next: AtomicU64,
}

/// An answer: status, content type, body.
struct Reply(u16, &'static str, Vec<u8>);

impl Reply {
    fn json(v: Value) -> Reply {
        Reply(200, "application/json", v.to_string().into_bytes())
    }
    fn error(code: u16, msg: impl Into<String>) -> Reply {
        Reply(code, "application/json", json!({"error": msg.into()}).to_string().into_bytes())
    }
    fn html(s: String) -> Reply {
        Reply(200, "text/html; charset=utf-8", s.into_bytes())
    }
}

/// Starts the server and serves until the process ends; `ready` hears the bound address first.
pub fn serve(opts: ServeOptions, ready: impl FnOnce(SocketAddr)) -> Result<()> {
    let outputs = {
        std::fs::create_dir_all(&opts.outputs).map_err(|e| anyhow!("{}: {e}", opts.outputs.display()))?;
        opts.outputs.canonicalize().map_err(|e| anyhow!("{}: {e}", opts.outputs.display()))?
    };
    let mut games: Vec<(String, PathBuf)> = std::fs::read_dir(&opts.games)
        .map_err(|e| anyhow!("{}: {e}; expected the folder of .wgdl games (--games)", opts.games.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "wgdl"))
        .filter_map(|p| Some((p.file_stem()?.to_str()?.to_string(), p)))
        .collect();
    games.sort();
    if games.is_empty() {
        bail!("{}: no .wgdl games to play; expected the folder of games (--games)", opts.games.display());
    }
    let listener =
        TcpListener::bind((opts.host.as_str(), opts.port)).map_err(|e| anyhow!("cannot listen on {}:{}: {e}", opts.host, opts.port))?;
    let addr = listener.local_addr()?;
    let server = Arc::new(Server { opts, outputs, games, tables: Mutex::new(HashMap::new()), next: AtomicU64::new(1) });
    ready(addr);
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        if open.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            let _ = respond(&mut stream, Reply::error(503, "too many connections; try again"));
            continue;
        }
        open.fetch_add(1, Ordering::SeqCst);
        let (server, open) = (server.clone(), open.clone());
        std::thread::spawn(move || {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(15)));
            let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
            let reply = match read_request(&mut stream) {
                Ok((method, target, body)) => {
                    // A handler that panics (a bug, never input) answers 500 and the server goes on.
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.route(&method, &target, &body)))
                        .unwrap_or_else(|_| Reply::error(500, "internal error (a bug in playforge: please report it)"))
                }
                Err(e) => Reply::error(400, format!("bad request: {e}")),
            };
            let _ = respond(&mut stream, reply);
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(())
}

/// The method, target and body of one request, within the limits.
fn read_request(stream: &mut TcpStream) -> Result<(String, String, Vec<u8>)> {
    let mut r = BufReader::new(stream.try_clone()?);
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = (&mut r).take((MAX_HEAD - head.len().min(MAX_HEAD)) as u64 + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            bail!("the connection closed in the request head");
        }
        head.extend_from_slice(&line);
        if head.len() > MAX_HEAD {
            bail!("request head over {MAX_HEAD} bytes");
        }
        if line == b"\r\n" || line == b"\n" {
            break;
        }
    }
    let head = String::from_utf8(head).map_err(|_| anyhow!("request head is not UTF-8"))?;
    let mut lines = head.lines();
    let first = lines.next().unwrap_or("");
    let mut parts = first.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else { bail!("request line `{first}`") };
    let mut len = 0usize;
    for l in lines {
        if let Some((k, v)) = l.split_once(':')
            && k.trim().eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().map_err(|_| anyhow!("Content-Length `{}`", v.trim()))?;
        }
    }
    if len > MAX_BODY {
        bail!("body of {len} bytes; at most {MAX_BODY}");
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body)?;
    Ok((method.to_string(), target.to_string(), body))
}

fn respond(stream: &mut TcpStream, Reply(code, ty, body): Reply) -> std::io::Result<()> {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    };
    write!(
        stream,
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {ty}\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\r\n",
        body.len()
    )?;
    stream.write_all(&body)?;
    stream.flush()
}

/// `%XX` and `+` decoded (bad escapes kept as written).
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match ((b[i + 1] as char).to_digit(16), (b[i + 2] as char).to_digit(16)) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).to_string()
}

fn content_type(p: &Path) -> &'static str {
    match p.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "json" => "application/json",
        "csv" | "md" | "toml" | "txt" | "moves" | "wgdl" | "kif" | "seconds" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

impl Server {
    fn route(&self, method: &str, target: &str, body: &[u8]) -> Reply {
        let (path, _query) = target.split_once('?').unwrap_or((target, ""));
        let path = decode(path);
        match (method, path.as_str()) {
            ("GET", "/") => Reply::html(self.index()),
            ("GET", "/play") => Reply::html(PLAY_HTML.to_string()),
            ("GET", "/favicon.ico") => Reply(200, "image/svg+xml", FAVICON.as_bytes().to_vec()),
            ("GET", "/api/games") => Reply::json(self.games_json()),
            ("POST", api) if api.starts_with("/api/") => {
                let req: Value = match serde_json::from_slice(body) {
                    Ok(v) => v,
                    Err(e) => return Reply::error(400, format!("the body is not JSON: {e}")),
                };
                match self.api(&api[5..], &req) {
                    Ok(v) => Reply::json(v),
                    Err(e) => Reply::error(400, format!("{e:#}")),
                }
            }
            ("GET", p) if p == "/runs" || p.starts_with("/runs/") => self.file(p.trim_start_matches("/runs").trim_start_matches('/')),
            ("GET", _) => Reply(
                404,
                "text/html; charset=utf-8",
                html::page("not found", "", &[], "<p>No such page. <a href=\"/\">Back to the start.</a></p>", "").into_bytes(),
            ),
            _ => Reply::error(405, format!("{method} {path}: expected GET, or POST to /api/…")),
        }
    }

    /// The personas that can play `game`: `<config stem>/<persona>` for every persona config of
    /// the configs folder about that game whose run (under the outputs folder) has the persona's
    /// best_formula.txt.
    fn personas_of(&self, game: &Path) -> Vec<String> {
        let mut v = Vec::new();
        let Ok(rd) = std::fs::read_dir(&self.opts.configs) else { return v };
        let mut files: Vec<PathBuf> = rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
        files.sort();
        for f in files {
            let Ok(text) = crate::input::read_text(&f) else { continue };
            if !text.contains("[personas]") {
                continue;
            }
            let Ok(setup) = crate::persona::run::Setup::load(&f, None, None, Some(&self.outputs)) else { continue };
            if setup.cfg.personas.game.file_stem() != game.file_stem() || !setup.cfg.parameters.is_empty() {
                continue;
            }
            let stem = f.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
            for p in &setup.cfg.list {
                if setup.out_dir.join(&p.name).join("best_formula.txt").is_file() {
                    v.push(format!("{stem}/{}", p.name));
                }
            }
        }
        v
    }

    /// A persona seat `<config stem>/<persona>` (one [`Server::personas_of`] lists).
    fn persona_seat(&self, who: &str) -> Result<super::play::PersonaSeat> {
        let (stem, name) = who.split_once('/').ok_or_else(|| anyhow!("persona `{who}`; expected <config>/<persona>"))?;
        let ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !ok(stem) || !ok(name) {
            bail!("persona `{who}`; expected <config>/<persona> as listed");
        }
        let f = self.opts.configs.join(format!("{stem}.toml"));
        let setup = crate::persona::run::Setup::load(&f, None, None, Some(&self.outputs))?;
        let k = setup.cfg.list.iter().position(|p| p.name == name).ok_or_else(|| anyhow!("no persona `{name}` in {}", f.display()))?;
        let file = setup.out_dir.join(name).join("best_formula.txt");
        let (formula, goal) = crate::persona::run::read_formula_file(&file)?;
        let goal = goal.ok_or_else(|| anyhow!("{}: no `# goal:` line", file.display()))?;
        let p = &setup.cfg.list[k];
        Ok(super::play::PersonaSeat {
            measured: setup.measured(p),
            cfg: crate::search::mcts::MctsConfig { formula, full_expansion: true, ..Default::default() },
            reward: setup.reward(p, goal),
            search: setup.search,
        })
    }

    fn games_json(&self) -> Value {
        let list: Vec<Value> = self
            .games
            .iter()
            .map(|(name, path)| match crate::wgdl::load(path) {
                Ok(l) => {
                    let overlays: Vec<&String> = l.program.overlays.iter().map(|(_, n)| n).collect();
                    let mut ais = ai_names(&l.program);
                    ais.extend(self.personas_of(path).into_iter().map(|p| format!("persona:{p}")));
                    json!({"name": name, "sides": l.program.players, "ais": ais, "overlays": overlays})
                }
                Err(e) => json!({"name": name, "error": e.to_string()}),
            })
            .collect();
        json!({"games": list, "mcts_iterations": self.opts.mcts_iterations})
    }

    fn table(&self, req: &Value) -> Result<Arc<Mutex<Table>>> {
        let id: u64 =
            req["id"].as_str().and_then(|s| s.parse().ok()).or_else(|| req["id"].as_u64()).ok_or_else(|| anyhow!("no game `id`"))?;
        let mut tables = self.tables.lock().map_err(|_| anyhow!("the game list is unavailable"))?;
        let (t, seen) = tables.get_mut(&id).ok_or_else(|| anyhow!("no game {id} (the server may have restarted): start a new one"))?;
        *seen = Instant::now();
        Ok(t.clone())
    }

    /// A fresh trace file for a game of `stem` on `seed`: traces/<stem>/seed-<seed>-<n>.json,
    /// created here (so that two games started at once never share one).
    fn trace_path(&self, stem: &str, seed: u64) -> Result<PathBuf> {
        let dir = self.outputs.join("traces").join(stem);
        std::fs::create_dir_all(&dir).map_err(|e| anyhow!("{}: {e}", dir.display()))?;
        for n in 1..100_000 {
            let p = dir.join(format!("seed-{seed}-{n}.json"));
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&p) {
                Ok(_) => return Ok(p),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => bail!("{}: {e}", p.display()),
            }
        }
        bail!("{}: no free trace name", dir.display())
    }

    fn api(&self, what: &str, req: &Value) -> Result<Value> {
        match what {
            "new" => {
                let name = req["game"].as_str().ok_or_else(|| anyhow!("no `game`"))?;
                let Some((stem, path)) = self.games.iter().find(|(n, _)| n == name) else {
                    let known: Vec<&str> = self.games.iter().map(|(n, _)| n.as_str()).collect();
                    bail!("no game `{name}`; expected one of: {}", known.join(", "));
                };
                let seed = req["seed"].as_u64().unwrap_or(1);
                let seats: Vec<Seat> =
                    req["seats"].as_array().map(|a| a.iter().filter_map(|s| s.as_str()).map(Seat::parse).collect()).unwrap_or_default();
                let overlays: Vec<String> =
                    req["overlays"].as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect()).unwrap_or_default();
                let trace = if seats.contains(&Seat::Human) { Some(self.trace_path(stem, seed)?) } else { None };
                let t = match Table::new(path, seed, overlays, seats, self.opts.mcts_iterations, trace.clone(), &|who| {
                    self.persona_seat(who)
                }) {
                    Ok(t) => t,
                    Err(e) => {
                        if let Some(p) = trace {
                            let _ = std::fs::remove_file(p);
                        }
                        return Err(e);
                    }
                };
                t.save()?;
                let id = self.next.fetch_add(1, Ordering::SeqCst);
                let view = t.view(id);
                let mut tables = self.tables.lock().map_err(|_| anyhow!("the game list is unavailable"))?;
                if tables.len() >= MAX_TABLES
                    && let Some(old) = tables.iter().min_by_key(|(_, (_, seen))| *seen).map(|(k, _)| *k)
                {
                    tables.remove(&old);
                }
                tables.insert(id, (Arc::new(Mutex::new(t)), Instant::now()));
                Ok(view)
            }
            "state" | "move" | "step" | "undo" | "restart" => {
                let id = req["id"].as_str().and_then(|s| s.parse().ok()).or_else(|| req["id"].as_u64()).unwrap_or(0);
                let table = self.table(req)?;
                let mut t = table.lock().map_err(|_| anyhow!("game {id} failed earlier; start a new one"))?;
                let done = match what {
                    "move" => {
                        let i = req["i"].as_u64().ok_or_else(|| anyhow!("no move index `i`"))? as usize;
                        t.human_move(i, req["name"].as_str())
                    }
                    "step" => t.ai_step().map(|_| ()),
                    "undo" => {
                        t.undo();
                        Ok(())
                    }
                    "restart" => t.restart(),
                    _ => Ok(()),
                };
                t.error = done.err().map(|e| format!("{e:#}"));
                t.save()?;
                Ok(t.view(id))
            }
            _ => bail!("no API `{what}`; expected new, state, move, step, undo or restart"),
        }
    }

    /// The run folders: every folder under the outputs folder (4 deep) with a `.playforge` mark
    /// or a report, newest first.
    fn runs(&self) -> Vec<(String, std::time::SystemTime)> {
        fn walk(root: &Path, rel: &Path, depth: usize, out: &mut Vec<(String, std::time::SystemTime)>) {
            let Ok(rd) = std::fs::read_dir(root.join(rel)) else { return };
            for e in rd.flatten() {
                if !e.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                let r = rel.join(e.file_name());
                let d = root.join(&r);
                if d.join(".playforge").exists() || d.join("report.html").exists() {
                    let t = std::fs::metadata(&d).and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH);
                    out.push((r.to_string_lossy().replace('\\', "/"), t));
                } else if depth < 4 {
                    walk(root, &r, depth + 1, out);
                }
            }
        }
        let mut v = Vec::new();
        walk(&self.outputs, Path::new(""), 0, &mut v);
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    fn index(&self) -> String {
        let mut games = String::from("<table><tr><th>game</th><th>sides</th><th></th></tr>");
        for (name, path) in &self.games {
            let sides = crate::wgdl::load(path)
                .map(|l| if l.program.players.is_empty() { "one player".to_string() } else { l.program.players.join(" vs ") });
            match sides {
                Ok(s) => games.push_str(&format!(
                    "<tr><td>{}</td><td>{}</td><td><a href=\"/play?game={}\">play</a></td></tr>",
                    escape(name),
                    escape(&s),
                    escape(name)
                )),
                Err(e) => games.push_str(&format!(
                    "<tr><td>{}</td><td class=\"err\" colspan=\"2\">{}</td></tr>",
                    escape(name),
                    escape(&e.to_string())
                )),
            }
        }
        games.push_str("</table>");
        let runs = self.runs();
        let mut list = String::new();
        if runs.is_empty() {
            list.push_str(&format!("<p class=\"muted\">No run folders under {} yet.</p>", escape(&self.outputs.display().to_string())));
        }
        for (r, _) in runs.iter().take(500) {
            list.push_str(&format!(
                "<div><a href=\"/runs/{}/report.html\">{}</a> · <a href=\"/runs/{}/\">files</a></div>",
                escape(r),
                escape(r),
                escape(r)
            ));
        }
        let body = format!(
            "{}{}",
            html::section(
                "play",
                "Play a game",
                &format!(
                    "{games}<p class=\"muted\">Games of {}. Each game you play is saved as a trace under traces/ in the outputs folder.</p>",
                    escape(&self.opts.games.display().to_string())
                )
            ),
            html::section("runs", "Run folders", &list)
        );
        html::page("playforge", &format!("serving {}", escape(&self.outputs.display().to_string())), &[], &body, "")
    }

    /// A file or folder under the outputs folder.
    fn file(&self, rel: &str) -> Reply {
        let rel_path = Path::new(rel);
        if rel.contains('\\') || rel_path.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Reply::error(403, "a path under the outputs folder only");
        }
        let full = self.outputs.join(rel_path);
        let report_wanted = rel_path.file_name().is_some_and(|n| n == "report.html");
        let Ok(real) = full.canonicalize() else {
            // A run folder without a report yet: render one on the fly.
            if report_wanted
                && let Some(dir) = full.parent()
                && let Ok(d) = dir.canonicalize()
                && d.starts_with(&self.outputs)
            {
                return match super::report::render(&d) {
                    Ok(p) => Reply::html(p),
                    Err(e) => Reply::error(404, format!("{e:#}")),
                };
            }
            return Reply::error(404, format!("no {rel} under the outputs folder"));
        };
        if !real.starts_with(&self.outputs) {
            return Reply::error(403, "a path under the outputs folder only");
        }
        if real.is_dir() {
            let mut entries: Vec<String> = std::fs::read_dir(&real)
                .map(|rd| {
                    rd.flatten().map(|e| e.file_name().to_string_lossy().to_string() + if e.path().is_dir() { "/" } else { "" }).collect()
                })
                .unwrap_or_default();
            entries.sort();
            let base = if rel.is_empty() || rel.ends_with('/') { rel.to_string() } else { format!("{rel}/") };
            let list: String = entries
                .iter()
                .filter(|n| !n.starts_with('.'))
                .map(|n| format!("<div><a href=\"/runs/{}{}\">{}</a></div>", escape(&base), escape(n), escape(n)))
                .collect();
            return Reply::html(html::page(
                &format!("outputs/{rel}"),
                "<a href=\"/\">start</a>",
                &[],
                &html::section("files", "Files", &list),
                "",
            ));
        }
        match std::fs::read(&real) {
            Ok(bytes) => Reply(200, content_type(&real), bytes),
            Err(e) => Reply::error(404, format!("{rel}: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn percent_escapes_and_plus_decode_and_bad_ones_stay() {
        assert_eq!(decode("a%20b+c"), "a b c");
        assert_eq!(decode("%2e%2E/x"), "../x");
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz"), "%zz");
        assert_eq!(decode("%4"), "%4");
    }
}
