//! `playforge serve`: a small web app over HTTP/1.1, written on `std::net`, that people can
//! share safely. It lists the run folders under the outputs folder with their reports (a folder
//! without a `report.html` gets one rendered on the fly, reading only inside the outputs and
//! games folders) and the games of the games folder, and plays any WGDL game in the browser
//! through [`super::play::Table`], each game played kept as its own trace. It listens on the
//! loopback address unless told otherwise. Every limit is a constant here or in [`http`]: one
//! thread per connection, at most [`MAX_CONNECTIONS`] (past that a 503 read whole), a whole
//! request within [`http::REQUEST_DEADLINE`], at most [`MAX_BUSY`] requests at work, at most
//! [`MAX_GAMES`] games in memory (a game in play is never dropped; a new one is refused). Who
//! may do what is [`guard`]'s: Host and Origin checked, a token for the API (and for every page
//! on an address that is not loopback), a key per game. Nothing a request says can make it
//! panic or read outside its folders; a handler that fails answers with a status and a message.

use super::html::{self, escape};
use super::play::{Seat, Table, ai_names};
use anyhow::{Result, anyhow, bail};
use guard::{Guard, Pass};
use http::{Kind, Reply, Request, clip};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub mod guard;
pub mod http;

/// Connections served at once, each on its own thread (reading, then answering). A client that
/// dribbles holds one for at most [`http::REQUEST_DEADLINE`]; past this many the next are
/// answered 503.
pub const MAX_CONNECTIONS: usize = 512;
/// Connections being refused at once on threads (each read briefly so that its 503 arrives
/// whole); past this many a connection is answered 503 at once with what it already sent read.
pub const MAX_REFUSING: usize = 64;
/// Requests doing real work at once (playing moves, compiling games, drawing reports): the
/// machine's cores are few, and a request past this waits up to [`BUSY_WAIT`], then gets 503.
pub const MAX_BUSY: usize = 4;
/// How long a request waits for one of the [`MAX_BUSY`] places.
pub const BUSY_WAIT: Duration = Duration::from_secs(20);
/// Files larger than this are not served (a report's reader has the browser, not this server,
/// open bigger ones from disk).
pub const MAX_FILE: u64 = 256 << 20;
/// Games held in memory. A game in play is never dropped to make room: only finished games
/// and games untouched for [`IDLE`] are; past that a new game is refused with 503.
pub const MAX_GAMES: usize = 256;
/// A game untouched this long is closed when room is needed (its trace stays on disk).
pub const IDLE: Duration = Duration::from_secs(3600);

const PLAY_HTML: &str = include_str!("../play.html");
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
    /// The server's token ([`guard`]); a random one when `None`.
    pub token: Option<String>,
}

/// A game in memory: its table, the secret half of its id, whether it is over, when last used.
struct Held {
    key: String,
    table: Arc<Mutex<Table>>,
    over: bool,
    seen: Instant,
}

struct Server {
    opts: ServeOptions,
    outputs: PathBuf,
    games_dir: PathBuf,
    games: Vec<(String, PathBuf)>,
    guard: Guard,
    tables: Mutex<HashMap<u64, Held>>,
    next: AtomicU64,
    busy: (Mutex<usize>, Condvar),
}

/// Refusals that are not the client's mistake in the request's form: their own status.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    /// 403: a game's key is missing or wrong.
    #[error("{0}")]
    Denied(String),
    /// 503: no room for another game.
    #[error("{0}")]
    Full(String),
}

/// The address to open in a browser for a server listening on `addr` with `token`: with the
/// token when the address is not loopback (every page needs it there).
pub fn url(addr: SocketAddr, token: &str) -> String {
    Guard::new(addr, Some(token.to_string())).url(addr)
}

/// Starts the server and serves until the process ends; `ready` hears the bound address first.
pub fn serve(opts: ServeOptions, ready: impl FnOnce(SocketAddr)) -> Result<()> {
    let outputs = {
        std::fs::create_dir_all(&opts.outputs).map_err(|e| anyhow!("{}: {e}", opts.outputs.display()))?;
        opts.outputs.canonicalize().map_err(|e| anyhow!("{}: {e}", opts.outputs.display()))?
    };
    let games_dir =
        opts.games.canonicalize().map_err(|e| anyhow!("{}: {e}; expected the folder of .wgdl games (--games)", opts.games.display()))?;
    let mut games: Vec<(String, PathBuf)> = std::fs::read_dir(&games_dir)
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
    let guard = Guard::new(addr, opts.token.clone());
    let server = Arc::new(Server {
        opts,
        outputs,
        games_dir,
        games,
        guard,
        tables: Mutex::new(HashMap::new()),
        next: AtomicU64::new(1),
        busy: (Mutex::new(0), Condvar::new()),
    });
    ready(addr);
    let open = Arc::new(AtomicUsize::new(0));
    let refusing = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            // Out of descriptors, say: wait a moment rather than spin.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        if open.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            if refusing.fetch_add(1, Ordering::SeqCst) < MAX_REFUSING {
                let refusing2 = refusing.clone();
                let spawned = std::thread::Builder::new().spawn(move || {
                    http::refuse(stream, &format!("{MAX_CONNECTIONS} connections are open; try again"));
                    refusing2.fetch_sub(1, Ordering::SeqCst);
                });
                if spawned.is_err() {
                    refusing.fetch_sub(1, Ordering::SeqCst);
                }
            } else {
                refusing.fetch_sub(1, Ordering::SeqCst);
                http::refuse_now(stream, &format!("{MAX_CONNECTIONS} connections are open; try again"));
            }
            continue;
        }
        open.fetch_add(1, Ordering::SeqCst);
        let (server2, open2) = (server.clone(), open.clone());
        let spawned = std::thread::Builder::new().spawn(move || {
            server2.connection(stream);
            open2.fetch_sub(1, Ordering::SeqCst);
        });
        if spawned.is_err() {
            open.fetch_sub(1, Ordering::SeqCst);
        }
    }
    Ok(())
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
    /// One connection: its request read within the deadline, answered, closed.
    fn connection(&self, mut stream: TcpStream) {
        let reply = match http::read_request(&stream, Instant::now() + http::REQUEST_DEADLINE) {
            // A handler that panics (a bug, never input) answers 500 and the server goes on.
            Ok(req) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.handle(&req)))
                .unwrap_or_else(|_| Reply::error(500, "internal error (a bug in playforge: please report it)")),
            Err(e) => match e.reply() {
                Some(r) => r,
                None => return,
            },
        };
        let _ = http::respond(&mut stream, reply);
    }

    /// A request checked by the guard, then routed; real work waits for one of the
    /// [`MAX_BUSY`] places.
    fn handle(&self, req: &Request) -> Reply {
        let (raw_path, query) = req.target.split_once('?').unwrap_or((&req.target, ""));
        let path = http::decode_path(raw_path);
        match self.guard.check(req, &path, query) {
            Err(refused) => return refused,
            Ok(Pass::SetCookie(_)) => return self.guard.set_cookie(raw_path, query),
            Ok(Pass::Route) => {}
        }
        match (req.method.as_str(), path.as_str()) {
            ("GET", "/play") => return self.play_page(),
            ("GET", "/favicon.ico") => return Reply::new(200, "image/svg+xml", FAVICON.as_bytes().to_vec()).kind(Kind::File),
            _ => {}
        }
        let Some(_place) = self.busy_place() else {
            return Reply::error(503, format!("the server is busy ({MAX_BUSY} requests at work); try again"))
                .header("Retry-After", "2".into());
        };
        self.route(&req.method, &path, &req.body)
    }

    /// One of the [`MAX_BUSY`] places, waited for up to [`BUSY_WAIT`]; given back on drop.
    fn busy_place(&self) -> Option<impl Drop + '_> {
        struct Place<'a>(&'a (Mutex<usize>, Condvar));
        impl Drop for Place<'_> {
            fn drop(&mut self) {
                if let Ok(mut n) = self.0.0.lock() {
                    *n -= 1;
                }
                self.0.1.notify_one();
            }
        }
        let (lock, cv) = &self.busy;
        let n = lock.lock().ok()?;
        let (mut n, _) = cv.wait_timeout_while(n, BUSY_WAIT, |n| *n >= MAX_BUSY).ok()?;
        if *n >= MAX_BUSY {
            return None;
        }
        *n += 1;
        Some(Place(&self.busy))
    }

    /// The play page with this server's token and a fresh nonce for its one script.
    fn play_page(&self) -> Reply {
        let nonce = guard::secret();
        let page = PLAY_HTML.replacen("<script>", &format!("<script nonce=\"{nonce}\">"), 1).replacen(
            "<head>",
            &format!("<head><meta name=\"playforge-token\" content=\"{}\">", self.guard.token),
            1,
        );
        Reply::html(page).kind(Kind::App(nonce))
    }

    fn route(&self, method: &str, path: &str, body: &[u8]) -> Reply {
        match (method, path) {
            ("GET", "/") => Reply::html(self.index()),
            ("GET", "/api/games") => Reply::json(self.games_json()),
            ("POST", api) if api.starts_with("/api/") => {
                let req: Value = match serde_json::from_slice(body) {
                    Ok(v) => v,
                    Err(e) => return Reply::error(400, format!("the body is not JSON: {e}")),
                };
                match self.api(&api[5..], &req) {
                    Ok(v) => Reply::json(v),
                    Err(e) => match e.downcast_ref::<Refusal>() {
                        Some(Refusal::Denied(m)) => Reply::error(403, m.clone()),
                        Some(Refusal::Full(m)) => Reply::error(503, m.clone()),
                        None => Reply::error(400, format!("{e:#}")),
                    },
                }
            }
            ("GET", p) if p == "/runs" || p.starts_with("/runs/") => self.file(p.trim_start_matches("/runs").trim_start_matches('/')),
            ("GET", _) => Reply::new(
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
            // A persona of a game in its own process plays no WGDL game here (and is not started).
            if !text.contains("[personas]") || text.contains("[external]") {
                continue;
            }
            let Ok(setup) = crate::persona::jobs::Setup::load(&f, None, None, Some(&self.outputs)) else { continue };
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
        let setup = crate::persona::jobs::Setup::load(&f, None, None, Some(&self.outputs))?;
        let k = setup.cfg.list.iter().position(|p| p.name == name).ok_or_else(|| anyhow!("no persona `{name}` in {}", f.display()))?;
        let file = setup.out_dir.join(name).join("best_formula.txt");
        let (formula, goal) = crate::persona::run::read_formula_file(&file)?;
        let goal = goal.ok_or_else(|| anyhow!("{}: no `# goal:` line", file.display()))?;
        let p = &setup.cfg.list[k];
        Ok(super::play::PersonaSeat {
            measured: setup.measured(p)?,
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

    /// The game a call names by its id (`<number>-<key>`), if the key is its own.
    fn table(&self, req: &Value) -> Result<(u64, String, Arc<Mutex<Table>>)> {
        let id = req["id"].as_str().ok_or_else(|| anyhow!("no game `id`"))?;
        let bad = || Refusal::Denied(format!("game id `{}`: not a game of this client; expected the id /api/new gave", clip(id)));
        let (n, key) = id.split_once('-').ok_or_else(bad)?;
        let n: u64 = n.parse().map_err(|_| bad())?;
        let mut tables = self.tables.lock().map_err(|_| anyhow!("the game list is unavailable"))?;
        let held = tables
            .get_mut(&n)
            .ok_or_else(|| anyhow!("no game {n} (the server may have restarted, or closed it after an hour untouched): start a new one"))?;
        if !guard::same(&held.key, key) {
            return Err(bad().into());
        }
        held.seen = Instant::now();
        Ok((n, id.to_string(), held.table.clone()))
    }

    /// Room for one more game: finished games and games untouched for [`IDLE`] are closed
    /// (oldest first) while the list is full; a game in play never is.
    fn make_room(&self, tables: &mut HashMap<u64, Held>) -> Result<()> {
        while tables.len() >= MAX_GAMES {
            let now = Instant::now();
            let closable =
                tables.iter().filter(|(_, h)| h.over || now.duration_since(h.seen) >= IDLE).min_by_key(|(_, h)| h.seen).map(|(k, _)| *k);
            match closable {
                Some(k) => {
                    tables.remove(&k);
                }
                None => {
                    return Err(Refusal::Full(format!(
                        "{MAX_GAMES} games are in play on this server; finish one, or try again later (a game untouched for an hour is closed when room is needed)"
                    ))
                    .into());
                }
            }
        }
        Ok(())
    }

    fn api(&self, what: &str, req: &Value) -> Result<Value> {
        match what {
            "new" => {
                let name = req["game"].as_str().ok_or_else(|| anyhow!("no `game`"))?;
                let Some((stem, path)) = self.games.iter().find(|(n, _)| n == name) else {
                    let known: Vec<&str> = self.games.iter().map(|(n, _)| n.as_str()).collect();
                    bail!("no game `{}`; expected one of: {}", clip(name), known.join(", "));
                };
                let seed = req["seed"].as_u64().unwrap_or(1);
                let list = |key: &str| -> Result<Vec<String>> {
                    let v: Vec<String> =
                        req[key].as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect()).unwrap_or_default();
                    if v.len() > 64 {
                        bail!("{} {key}; expected at most 64", v.len());
                    }
                    Ok(v)
                };
                let seats: Vec<Seat> = list("seats")?.iter().map(|s| Seat::parse(s)).collect();
                let overlays = list("overlays")?;
                // Refused before the game is compiled, when there is no room.
                self.make_room(&mut *self.tables.lock().map_err(|_| anyhow!("the game list is unavailable"))?)?;
                let traces = seats.contains(&Seat::Human).then(|| self.outputs.join("traces").join(stem));
                let mut t = Table::new(path, seed, overlays, seats, self.opts.mcts_iterations, traces, &|who| self.persona_seat(who))?;
                let mut tables = self.tables.lock().map_err(|_| anyhow!("the game list is unavailable"))?;
                // Room again (others may have started games meanwhile): a game refused now leaves
                // no trace behind.
                if let Err(e) = self.make_room(&mut tables) {
                    if let Some(p) = &t.trace {
                        let _ = std::fs::remove_file(p);
                    }
                    return Err(e);
                }
                t.save()?;
                let n = self.next.fetch_add(1, Ordering::SeqCst);
                let key = guard::secret();
                let id = format!("{n}-{key}");
                let view = t.view(&id);
                let over = t.is_over();
                tables.insert(n, Held { key, table: Arc::new(Mutex::new(t)), over, seen: Instant::now() });
                Ok(view)
            }
            "state" | "move" | "step" | "undo" | "restart" => {
                let (n, id, table) = self.table(req)?;
                let mut t = table.lock().map_err(|_| anyhow!("game {n} failed earlier; start a new one"))?;
                let done = match what {
                    "move" => {
                        let i = req["i"].as_u64().ok_or_else(|| anyhow!("no move index `i`"))?;
                        t.human_move(usize::try_from(i).unwrap_or(usize::MAX), req["name"].as_str())
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
                let over = t.is_over();
                if let Ok(mut tables) = self.tables.lock()
                    && let Some(h) = tables.get_mut(&n)
                {
                    h.over = over;
                }
                Ok(t.view(&id))
            }
            _ => bail!("no API `{}`; expected new, state, move, step, undo or restart", clip(what)),
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
                return match super::report::render_confined(&d, std::slice::from_ref(&self.games_dir)) {
                    Ok(p) => Reply::html(p).kind(Kind::Report),
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
                .map(|n| format!("<div><a href=\"/runs/{}{}\">{}</a></div>", html::url_path(&base), html::url_path(n), escape(n)))
                .collect();
            return Reply::html(html::page(
                &format!("outputs/{rel}"),
                "<a href=\"/\">start</a>",
                &[],
                &html::section("files", "Files", &list),
                "",
            ));
        }
        // A regular file only (a pipe or a device could block or never end), sent from disk as
        // it is written to the client: no file is held in memory.
        let meta = match std::fs::metadata(&real) {
            Ok(m) if m.is_file() => m,
            _ => return Reply::error(403, format!("{rel} is not a regular file")),
        };
        if meta.len() > MAX_FILE {
            return Reply::error(413, format!("{rel} is over {} MiB; open it from the outputs folder", MAX_FILE >> 20));
        }
        let kind = if report_wanted { Kind::Report } else { Kind::File };
        match std::fs::File::open(&real) {
            Ok(f) => Reply::file(content_type(&real), f, meta.len()).kind(kind),
            Err(e) => Reply::error(404, format!("{rel}: {e}")),
        }
    }
}
