//! `serve` under hostile clients (issue 54, problems 2, 4, 5 and 8): each probe that once took the
//! server down, let one client act for another or read outside the outputs folder, replayed
//! against a server in this process on a free loopback port. Slow clients dribbling bytes, more
//! connections than the server holds, requests from other origins and other Hosts, calls on
//! someone else's game, finished traces rewritten, games evicted in play, reports that follow
//! links out of their folder or inline a planted script, deep formula files, and a burst of
//! mutated requests: every one answered with a status, within its deadline, and the server still
//! serving a well-behaved client.

use crate::web::{TOKEN, get, post, start_server};
use playforge::web::serve::{MAX_CONNECTIONS, MAX_GAMES, http::REQUEST_DEADLINE};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("playforge-hostile-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A raw request; the whole answer as text (empty when the connection was reset or closed
/// without one).
fn exchange(addr: SocketAddr, raw: &[u8]) -> String {
    let Ok(mut s) = TcpStream::connect(addr) else { return String::new() };
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let _ = s.write_all(raw);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).to_string()
}

fn status(answer: &str) -> u16 {
    answer.strip_prefix("HTTP/1.1 ").and_then(|r| r.get(..3)).and_then(|c| c.parse().ok()).unwrap_or(0)
}

/// The value of header `name` in a raw answer.
fn header<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    let head = answer.split("\r\n\r\n").next()?;
    head.lines().find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim()))
}

/// Problem 2: a slow client held a slot for ever (the limit was per read) and 33 of them shut the
/// server. Now 200 clients dribbling a byte a second do not stop a second client being served,
/// and each of them is cut off with 408 at the whole-request deadline.
#[test]
fn a_client_is_served_while_200_slow_clients_dribble() {
    let out = tmp("slow");
    let addr = start_server(&out);
    let mut slow: Vec<TcpStream> = (0..200).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let t0 = Instant::now();
    let mut served = Vec::new();
    // Dribble for 4 s, a byte a second each, asking a well-behaved client to be served meanwhile.
    for round in 0..4 {
        for s in &mut slow {
            let _ = s.write_all(&b"GET / HTTP/1.1\r\n"[round..round + 1]);
        }
        let t = Instant::now();
        let (code, body) = get(addr, "/");
        assert_eq!(code, 200, "{body}");
        served.push(t.elapsed());
        std::thread::sleep(Duration::from_secs(1));
    }
    assert!(served.iter().all(|d| *d < Duration::from_secs(5)), "the second client waited {served:?}");
    eprintln!("with 200 slow clients dribbling, a second client was served in {served:?}");
    // Every slow client hears 408 once the deadline has passed, not later than a few seconds after.
    for s in slow.iter_mut().take(20) {
        s.set_read_timeout(Some(REQUEST_DEADLINE + Duration::from_secs(10))).unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        assert_eq!(status(&answer), 408, "{answer}");
    }
    assert!(t0.elapsed() < REQUEST_DEADLINE + Duration::from_secs(10), "{:?}", t0.elapsed());
}

/// Problem 8: past capacity the server reset connections (2 984 of 4 000). Now with every
/// connection taken, a further request reads a whole 503 answer, and the server serves again
/// once the idle ones are gone.
#[test]
fn past_capacity_a_client_reads_a_whole_503() {
    let out = tmp("full");
    let addr = start_server(&out);
    let idle: Vec<TcpStream> = (0..MAX_CONNECTIONS).map(|_| TcpStream::connect(addr).unwrap()).collect();
    // Let the server take them all.
    std::thread::sleep(Duration::from_millis(500));
    let mut codes = Vec::new();
    for _ in 0..50 {
        let answer = exchange(addr, format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes());
        let code = status(&answer);
        if code == 503 {
            let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
            let len: usize = header(&answer, "content-length").unwrap().parse().unwrap();
            assert_eq!(body.len(), len, "the whole 503: {answer}");
            assert!(body.contains("connections are open"), "{body}");
        }
        codes.push(code);
    }
    assert!(codes.iter().all(|&c| c == 503), "{codes:?}");
    drop(idle);
    let t = Instant::now();
    loop {
        if get(addr, "/").0 == 200 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "the server did not recover");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Problem 5: any Host was accepted (DNS rebinding) and cross-origin `text/plain` POSTs created
/// games. Now the API needs the page's token, another origin or site is refused, and a Host
/// that is not this server is refused before anything runs.
#[test]
fn a_page_of_another_origin_cannot_act() {
    let out = tmp("origin");
    let addr = start_server(&out);
    let body = r#"{"game":"connect_four","seats":["human","mcts"]}"#;
    let len = body.len();
    let cases = [
        // A cross-site form or fetch: a simple request, no token.
        (
            format!(
                "POST /api/new HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://evil.example\r\nContent-Type: text/plain\r\nContent-Length: {len}\r\n\r\n{body}"
            ),
            403,
        ),
        (format!("POST /api/new HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {len}\r\n\r\n{body}"), 403),
        (
            format!(
                "POST /api/new HTTP/1.1\r\nHost: {addr}\r\nX-Playforge-Token: wrong-token-0000000\r\nContent-Length: {len}\r\n\r\n{body}"
            ),
            403,
        ),
        // The token, but another origin or site says the browser.
        (
            format!(
                "POST /api/new HTTP/1.1\r\nHost: {addr}\r\nX-Playforge-Token: {TOKEN}\r\nOrigin: http://evil.example\r\nContent-Length: {len}\r\n\r\n{body}"
            ),
            403,
        ),
        (
            format!(
                "POST /api/new HTTP/1.1\r\nHost: {addr}\r\nX-Playforge-Token: {TOKEN}\r\nSec-Fetch-Site: cross-site\r\nContent-Length: {len}\r\n\r\n{body}"
            ),
            403,
        ),
        // DNS rebinding: the attacker's name resolving to 127.0.0.1.
        (
            format!(
                "POST /api/new HTTP/1.1\r\nHost: evil.example:{}\r\nX-Playforge-Token: {TOKEN}\r\nContent-Length: {len}\r\n\r\n{body}",
                addr.port()
            ),
            421,
        ),
        (format!("GET /api/games HTTP/1.1\r\nHost: evil.example:{}\r\n\r\n", addr.port()), 421),
        ("GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n".to_string(), 421),
        ("GET / HTTP/1.1\r\n\r\n".to_string(), 400),
    ];
    for (raw, want) in &cases {
        let answer = exchange(addr, raw.as_bytes());
        assert_eq!(status(&answer), *want, "{raw}\n→ {answer}");
    }
    assert!(!out.join("traces").exists(), "no game was started, no trace written");
    // The same request from the app's own page goes through.
    let own = format!(
        "POST /api/new HTTP/1.1\r\nHost: {addr}\r\nX-Playforge-Token: {TOKEN}\r\nOrigin: http://{addr}\r\nSec-Fetch-Site: same-origin\r\nContent-Length: {len}\r\n\r\n{body}"
    );
    assert_eq!(status(&exchange(addr, own.as_bytes())), 200);
    // The page carries the token and a Content-Security-Policy whose script nonce it uses.
    let page = exchange(addr, format!("GET /play HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes());
    assert!(page.contains(&format!("content=\"{TOKEN}\"")));
    let csp = header(&page, "content-security-policy").unwrap();
    let nonce = csp.split("'nonce-").nth(1).unwrap().split('\'').next().unwrap();
    assert!(page.contains(&format!("<script nonce=\"{nonce}\">")), "{csp}");
    assert!(csp.contains("connect-src 'self'") && csp.contains("frame-ancestors 'none'"), "{csp}");
    // Every page, answer and file carries a policy.
    for path in ["/", "/api/games", "/nowhere", "/runs/"] {
        let a = exchange(addr, format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes());
        assert!(header(&a, "content-security-policy").is_some(), "{path}: {a}");
    }
}

/// Problem 4: game ids were sequential with no secret. Now another client cannot move, undo or
/// restart a game, even knowing its number.
#[test]
fn no_client_acts_on_another_clients_game() {
    let out = tmp("keys");
    let addr = start_server(&out);
    let (code, v) = post(addr, "/api/new", &serde_json::json!({"game": "connect_four", "seed": 2, "seats": ["human", "human"]}));
    assert_eq!(code, 200, "{v}");
    let id = v["id"].as_str().unwrap().to_string();
    let (n, key) = id.split_once('-').unwrap();
    assert!(key.len() >= 32, "{id}");
    let (_, moved) = post(addr, "/api/move", &serde_json::json!({"id": id, "i": 0}));
    assert_eq!(moved["moves"].as_array().unwrap().len(), 1);
    for forged in [n.to_string(), format!("{n}-"), format!("{n}-{}", "0".repeat(32)), format!("{n}-{}x", &key[..31])] {
        for what in ["move", "undo", "restart", "state", "step"] {
            let (code, e) = post(addr, &format!("/api/{what}"), &serde_json::json!({"id": forged, "i": 0}));
            assert_eq!(code, 403, "{what} with {forged}: {e}");
        }
    }
    let (_, st) = post(addr, "/api/state", &serde_json::json!({"id": id}));
    assert_eq!(st["moves"].as_array().unwrap().len(), 1, "the game is as its player left it");
}

/// Problem 4: a restart or undo after the end rewrote the finished trace with the shortened game.
/// Now a finished trace is never changed: what comes after the end goes to a new trace.
#[test]
fn a_finished_trace_is_never_changed() {
    let out = tmp("traces");
    let addr = start_server(&out);
    let (_, mut v) = post(addr, "/api/new", &serde_json::json!({"game": "connect_four", "seed": 4, "seats": ["human", "human"]}));
    let id = v["id"].clone();
    // Both sides drop in columns 0 and 1 in turn: the first side wins on its fourth drop.
    let mut k = 0;
    while !v["over"].as_bool().unwrap() {
        let legal = v["legal"].as_array().unwrap();
        v = post(addr, "/api/move", &serde_json::json!({"id": id, "i": legal[k % 2]["i"]})).1;
        k += 1;
        assert!(k < 43);
    }
    let trace = PathBuf::from(v["trace"].as_str().unwrap());
    let finished = std::fs::read(&trace).unwrap();
    let moves = v["moves"].as_array().unwrap().len();
    assert!(moves >= 7, "{v}");
    let (_, u) = post(addr, "/api/undo", &serde_json::json!({"id": id}));
    assert_eq!(u["moves"].as_array().unwrap().len(), moves - 1);
    assert_ne!(u["trace"], v["trace"], "the game after the undo goes on in a new trace");
    let (_, r) = post(addr, "/api/restart", &serde_json::json!({"id": id}));
    assert_eq!(r["moves"].as_array().unwrap().len(), 0);
    post(addr, "/api/state", &serde_json::json!({"id": id}));
    assert_eq!(std::fs::read(&trace).unwrap(), finished, "the finished trace, byte for byte");
    let rep: playforge::players::ai::Replay = serde_json::from_slice(&finished).unwrap();
    assert_eq!(rep.moves.len(), moves);
    assert!(!rep.result.is_empty());
    let traces = std::fs::read_dir(trace.parent().unwrap()).unwrap().count();
    assert!(traces >= 2, "{traces} trace files");
}

/// Problem 4: past 64 games, tables were evicted under their players. Now a game in play is
/// never dropped: a new game is refused with 503 while every place holds one, and a finished
/// game makes room.
#[test]
fn a_game_in_play_is_never_evicted() {
    let out = tmp("evict");
    let addr = start_server(&out);
    let new = || post(addr, "/api/new", &serde_json::json!({"game": "tictactoe", "seed": 1, "seats": ["random", "random"]}));
    let (_, first) = new();
    let first_id = first["id"].clone();
    let mut last = first.clone();
    for _ in 1..MAX_GAMES {
        let (code, v) = new();
        assert_eq!(code, 200, "{v}");
        last = v;
    }
    let (code, e) = new();
    assert_eq!(code, 503, "{e}");
    assert!(e["error"].as_str().unwrap().contains("games are in play"), "{e}");
    let (code, st) = post(addr, "/api/step", &serde_json::json!({"id": first_id}));
    assert_eq!(code, 200, "the first game is still there: {st}");
    // The last game played to its end makes room for one more.
    let id = last["id"].clone();
    let mut v = last;
    while v["ai_to_move"].as_bool().unwrap() {
        v = post(addr, "/api/step", &serde_json::json!({"id": id})).1;
    }
    assert_eq!(new().0, 200);
    assert_eq!(post(addr, "/api/step", &serde_json::json!({"id": first_id})).0, 200, "and the first game is still there");
}

/// Problem 5: the report rendered on the fly followed a symlinked config.toml, a replay's game
/// path and game.txt to any file and put its text in the page; any SVG was inlined as it was.
/// Now nothing outside the outputs and games folders is read, and a planted script is gone.
#[test]
fn a_report_reads_nothing_outside_and_runs_no_planted_script() {
    let out = tmp("report");
    let secret = out.parent().unwrap().join(format!("playforge-hostile-secret-{}.wgdl", std::process::id()));
    std::fs::write(&secret, "TOP SECRET line one\nTOP SECRET line two\n").unwrap();
    let run = out.join("evil/seed-1");
    std::fs::create_dir_all(run.join("replays")).unwrap();
    std::fs::write(run.join(".playforge"), "").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&secret, run.join("config.toml")).unwrap();
    std::fs::write(run.join("game.txt"), secret.display().to_string()).unwrap();
    std::fs::write(run.join("match-1.moves"), "1 (noop)\n").unwrap();
    let replay = serde_json::json!({"game": secret, "players": ["a", "b"], "moves": [], "result": "", "chance_seed": 0});
    std::fs::write(run.join("replays/r.json"), replay.to_string()).unwrap();
    let up = serde_json::json!({"game": "../../../../../../../../..".to_string() + &secret.display().to_string(), "players": [], "moves": [], "result": "", "chance_seed": 0});
    std::fs::write(run.join("replays/up.json"), up.to_string()).unwrap();
    std::fs::write(
        run.join("chart.svg"),
        r#"<svg xmlns="http://www.w3.org/2000/svg" onload="fetch('/api/new')"><script>alert('planted')</script><rect width="5" height="5" fill="red"/></svg>"#,
    )
    .unwrap();
    let addr = start_server(&out);
    let answer = exchange(addr, format!("GET /runs/evil/seed-1/report.html HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes());
    assert_eq!(status(&answer), 200, "{answer}");
    assert!(!answer.contains("TOP SECRET"), "{answer}");
    assert!(!answer.contains("planted") && !answer.contains("onload"), "the planted script is gone");
    assert!(answer.contains("<rect width=\"5\" height=\"5\" fill=\"red\"/>"), "the drawing stays");
    let csp = header(&answer, "content-security-policy").unwrap();
    assert!(csp.starts_with("sandbox allow-scripts"), "a report runs in no origin: {csp}");
    // The planted SVG opened directly: sandboxed, no script.
    let svg = exchange(addr, format!("GET /runs/evil/seed-1/chart.svg HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes());
    let csp = header(&svg, "content-security-policy").unwrap();
    assert!(csp.starts_with("sandbox;") && !csp.contains("script-src"), "{csp}");
    // `playforge report` on the same folder (the user's own command, which reads the games its
    // outputs name wherever they are) inlines no planted script either, and follows no link out.
    std::fs::remove_file(run.join("game.txt")).unwrap();
    std::fs::remove_dir_all(run.join("replays")).unwrap();
    let page = playforge::web::report::render(&run).unwrap();
    assert!(!page.contains("planted") && !page.contains("TOP SECRET line"), "{page}");
    let _ = std::fs::remove_file(secret);
}

/// Problem 8: an interrupted run's report looked complete. Now a run folder whose run was
/// interrupted, or whose lock another process holds, says so at the top of its report.
#[test]
fn an_unfinished_run_says_so_in_its_report() {
    let run = tmp("unfinished");
    std::fs::write(run.join("history.csv"), "iteration,f\n1,0.5\n").unwrap();
    let page = playforge::web::report::render(&run).unwrap();
    assert!(!page.contains("Unfinished"), "a finished run");
    std::fs::write(run.join(playforge::web::report::INTERRUPTED), "").unwrap();
    assert!(playforge::web::report::render(&run).unwrap().contains("This run was interrupted"));
    std::fs::remove_file(run.join(playforge::web::report::INTERRUPTED)).unwrap();
    // A lock of a process that is gone: stopped before its end.
    std::fs::write(run.join(playforge::report::run_dir::LOCK), "4000000\n").unwrap();
    assert!(playforge::web::report::render(&run).unwrap().contains("it was stopped before its end"));
    // A lock of a live process (this test's child): running now.
    let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let holder = playforge::report::run_dir::Holder::parse(&child.id().to_string()).unwrap();
    std::fs::write(run.join(playforge::report::run_dir::LOCK), holder.line()).unwrap();
    let page = playforge::web::report::render(&run).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(page.contains(&format!("it is running now (process {})", child.id())), "{page}");
}

/// Problem 3: a 5 000-deep best_formula.txt under outputs took serve down with one request (a
/// stack overflow aborts the process). Now the persona seat is refused with a message and the
/// server goes on.
#[test]
fn a_deep_formula_file_does_not_take_serve_down() {
    let out = tmp("deep");
    let run = out.join("personas_quick/seed-1/MaxS");
    std::fs::create_dir_all(&run).unwrap();
    let deep = format!("{}visits{}\n# goal: 3000\n", "(".repeat(5000), ")".repeat(5000));
    std::fs::write(run.join("best_formula.txt"), deep).unwrap();
    let addr = start_server(&out);
    let (code, e) = post(addr, "/api/new", &serde_json::json!({"game": "match3", "seed": 3, "seats": ["persona:personas_quick/MaxS"]}));
    assert_eq!(code, 400, "{e}");
    assert!(e["error"].as_str().unwrap().contains("best_formula.txt"), "{e}");
    assert_eq!(get(addr, "/").0, 200, "still serving");
}

/// The fuzz campaign's HTTP leg: requests mutated from well-formed ones (bytes flipped, lines
/// dropped or repeated, numbers and lengths changed, bodies cut) each get an HTTP answer with a
/// status, never a 500, and the server still serves afterwards. `FUZZ_SECONDS` (default 5 here)
/// sets how long.
#[test]
fn mutated_requests_get_an_answer_and_never_a_500() {
    let out = tmp("fuzz");
    let addr = start_server(&out);
    let seconds: u64 = std::env::var("FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(5).min(60);
    let (_, v) = post(addr, "/api/new", &serde_json::json!({"game": "tictactoe", "seed": 1, "seats": ["human", "human"]}));
    let id = v["id"].as_str().unwrap().to_string();
    let bodies = [
        serde_json::json!({"game": "tictactoe", "seed": 1, "seats": ["human", "mcts"]}).to_string(),
        serde_json::json!({"id": id, "i": 0}).to_string(),
        serde_json::json!({"id": id}).to_string(),
    ];
    let paths =
        ["/api/new", "/api/move", "/api/undo", "/api/restart", "/api/state", "/api/step", "/", "/play?game=x", "/runs/", "/api/games"];
    let words: [&[u8]; 12] = [
        b"GET",
        b"POST",
        b"HTTP/1.1",
        b"Content-Length: 99999999",
        b"Host: evil",
        b"%2e%2e/",
        b"\x00",
        b"\xff\xfe",
        b"-1",
        b"18446744073709551616",
        b"{\"id\":null}",
        b"\r\n",
    ];
    let mut rng = playforge::rng::stream(54, 0, 0, 0);
    use rand::RngExt;
    let t0 = Instant::now();
    let (mut n, mut by_code) = (0, std::collections::BTreeMap::<u16, u32>::new());
    while t0.elapsed() < Duration::from_secs(seconds) {
        let body = &bodies[rng.random_range(0..bodies.len())];
        let path = paths[rng.random_range(0..paths.len())];
        let method = if path.starts_with("/api/") && path != "/api/games" { "POST" } else { "GET" };
        let mut raw = format!(
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nX-Playforge-Token: {TOKEN}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes();
        for _ in 0..rng.random_range(1..4) {
            if raw.is_empty() {
                break;
            }
            let at = rng.random_range(0..raw.len());
            match rng.random_range(0..4) {
                0 => raw[at] = rng.random(),
                1 => {
                    let w = words[rng.random_range(0..words.len())];
                    raw.splice(at..at, w.iter().copied());
                }
                2 => raw.truncate(at.max(1)),
                _ => {
                    let end = (at + rng.random_range(1..20)).min(raw.len());
                    raw.drain(at..end);
                }
            }
        }
        // A request cut short waits for the rest: close our side so that it ends.
        let answer = {
            let Ok(mut s) = TcpStream::connect(addr) else { panic!("the server stopped accepting") };
            s.set_read_timeout(Some(REQUEST_DEADLINE + Duration::from_secs(10))).unwrap();
            let _ = s.write_all(&raw);
            let _ = s.shutdown(std::net::Shutdown::Write);
            let mut out = Vec::new();
            let _ = s.read_to_end(&mut out);
            String::from_utf8_lossy(&out).to_string()
        };
        let code = status(&answer);
        assert_ne!(code, 500, "{}\n→ {answer}", String::from_utf8_lossy(&raw));
        // Nothing but a request that ended before its head was done goes unanswered.
        if code == 0 {
            assert!(!raw.windows(4).any(|w| w == b"\r\n\r\n"), "no answer to {}", String::from_utf8_lossy(&raw));
        }
        *by_code.entry(code).or_default() += 1;
        n += 1;
    }
    eprintln!("{n} mutated requests in {seconds} s: {by_code:?}");
    assert!(n > 50, "{n}");
    assert_eq!(get(addr, "/").0, 200);
}
