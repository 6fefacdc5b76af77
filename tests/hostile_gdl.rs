//! Hostile input to GDL and the GGP player (issue 54, problems 1, 7 and 8): a 180-byte game
//! whose `legal` ranges over an infinite set of terms, refused in seconds with bounded memory by
//! `check` and by a player server (which then plays the next match); 30 000 relations checked
//! in linear time; the player server's HTTP (a status line for every malformed request, 503
//! past its connection cap, no wildcard CORS, foreign origins refused); `--mcts-iterations 0`
//! refused; an unsafe variable reported as such.
//!
//! Work whose memory could grow runs in a child process (the CLI binary) under `ulimit -v`, so
//! that a regression fails the test instead of taking the machine.

use playforge::gdl::ggp::{run_match, send};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The game: `nat` is infinite (`(s (s … 0))`), and `legal` ranges over it.
const NAT: &str = "(role p) (nat 0) (<= (nat (s ?x)) (nat ?x)) (<= (legal p (go ?x)) (nat ?x))
(init (c 0)) (<= (next (c 1)) (does p ?m)) (<= terminal (true (c 1))) (goal p 100)";

/// A term that doubles each round: past the size limit long before the depth limit.
const DOUBLING: &str = "(role p) (q 0) (<= (q (f ?x ?x)) (q ?x)) (<= (legal p (go ?x)) (q ?x))
(init (c 0)) (<= (next (c 1)) (does p ?m)) (<= terminal (true (c 1))) (goal p 100)";

/// Virtual memory a child may take (KiB): 3 GB (the game took 15 GB).
const CHILD_VMEM_KB: u64 = 3_000_000;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_playforge")
}

/// Runs the CLI with `args` under [`CHILD_VMEM_KB`] of virtual memory, killed after `limit`:
/// its exit status (`None` when killed), stdout and stderr, and the time it took.
fn run_limited(args: &[&str], limit: Duration) -> (Option<i32>, String, String, Duration) {
    let script = format!("ulimit -v {CHILD_VMEM_KB}; exec \"$0\" \"$@\"");
    let t = Instant::now();
    let mut child =
        Command::new("sh").arg("-c").arg(script).arg(bin()).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if t.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (status, out, err, t.elapsed())
}

fn write_temp(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("playforge-hostile-gdl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn check_refuses_an_infinite_legal_relation_in_seconds_naming_it() {
    for (name, text, rel) in [("nat.kif", NAT, "nat"), ("doubling.kif", DOUBLING, "q")] {
        let path = write_temp(name, text);
        let (status, _, err, took) = run_limited(&["check", path.to_str().unwrap()], Duration::from_secs(30));
        // Refused with an error (status 1), not killed by the limit or the clock (a signal).
        assert_eq!(status, Some(1), "{name}: status {status:?} after {took:?}; stderr: {err}");
        assert!(took < Duration::from_secs(10), "{name}: took {took:?}");
        assert!(err.contains(&format!("relation `{rel}`")) && err.contains("nested deeper than 64"), "{name}: {err}");
    }
}

/// A player server as a child process (random player) under the memory limit, and its URL.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start() -> Server {
        let script = format!("ulimit -v {CHILD_VMEM_KB}; exec \"$0\" \"$@\"");
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(bin())
            .args(["ggp", "serve", "--port", "0", "--player", "random"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        let port = first.rsplit(':').next().unwrap().trim_end_matches('/').to_string();
        // The rest of its stderr drained, so that it never blocks writing.
        std::thread::spawn(move || lines.for_each(drop));
        Server { child, url: format!("127.0.0.1:{port}") }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A one-role game, so that one server plays every role of the match.
fn lightsout() -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games/gdl/lightsout.kif")).unwrap()
}

/// The rules as a manager sends them (one line, no comments).
fn one_line(text: &str) -> String {
    text.lines().map(|l| l.split(';').next().unwrap()).collect::<Vec<_>>().join(" ")
}

#[test]
fn a_player_refuses_a_hostile_start_in_time_and_plays_the_next_match() {
    let server = Server::start();
    let start = Duration::from_secs(2);
    for (id, rules) in [("bad1", NAT.to_string()), ("bad2", DOUBLING.to_string())] {
        let t = Instant::now();
        let answer = send(&server.url, &format!("(start {id} p ({}) 2 1)", one_line(&rules)), start + Duration::from_secs(1));
        let took = t.elapsed();
        assert!(took < start, "{id}: START answered after {took:?}");
        let e = answer.expect_err("a refused description is no `ready`").to_string();
        assert!(e.contains("HTTP 400") && e.contains("nested deeper than 64"), "{id}: {e}");
        // PLAY for the refused match: an HTTP error, not a crash.
        let e = send(&server.url, &format!("(play {id} nil)"), Duration::from_secs(2)).unwrap_err().to_string();
        assert!(e.contains("HTTP 400"), "{e}");
    }
    // The server still plays: a whole match, every answer a legal action in time.
    let clock = Duration::from_millis(500);
    let played = run_match(&lightsout(), std::slice::from_ref(&server.url), clock, clock, 1, 300).unwrap();
    assert!(played.notes.is_empty(), "{:?}", played.notes);
    assert!(played.goals.is_some());
}

/// `n` facts of distinct static relations, then the same as rules, then as a chain.
fn many(shape: &str, n: usize) -> String {
    let mut s =
        String::from("(role p) (init (c 0)) (<= (next (c 1)) (does p ?m)) (<= terminal (true (c 1))) (goal p 100) (legal p go) (q a)\n");
    for i in 0..n {
        match shape {
            "relations" => s.push_str(&format!("(r{i} a)\n")),
            "facts" => s.push_str(&format!("(r a{i})\n")),
            "rules" => s.push_str(&format!("(<= (r{i} ?x) (q ?x))\n")),
            _ => s.push_str(&format!("(<= (r{} ?x) ({} ?x))\n", i + 1, if i == 0 { "q".to_string() } else { format!("r{i}") })),
        }
    }
    s
}

#[test]
fn thirty_thousand_relations_are_checked_in_linear_time() {
    for shape in ["relations", "facts", "rules", "chain"] {
        let text = many(shape, 30_000);
        let t = Instant::now();
        let g = playforge::gdl::compile_any(shape, &text, Default::default());
        let took = t.elapsed();
        assert!(g.is_ok(), "{shape}: {:?}", g.err().map(|e| e.to_string()));
        // It took 24 to 60 s before (a pass per relation over every rule); well under 1 s now.
        assert!(took < Duration::from_secs(10), "{shape}: {took:?}");
    }
}

#[test]
fn a_start_of_thirty_thousand_relations_leaves_the_player_playing() {
    let server = Server::start();
    let t = Instant::now();
    let answer = send(&server.url, &format!("(start big p ({}) 1 1)", one_line(&many("chain", 30_000))), Duration::from_secs(3));
    assert!(t.elapsed() < Duration::from_secs(1), "START answered after {:?}: {answer:?}", t.elapsed());
    let clock = Duration::from_millis(500);
    let played = run_match(&lightsout(), std::slice::from_ref(&server.url), clock, clock, 2, 300).unwrap();
    assert!(played.notes.is_empty(), "{:?}", played.notes);
}

/// Sends raw bytes and reads the whole answer (empty when the connection was reset).
fn raw(url: &str, request: &[u8]) -> String {
    let mut s = TcpStream::connect(url).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    s.write_all(request).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn malformed_requests_get_an_http_status_and_no_wildcard_cors() {
    let server = Server::start();
    let url = &server.url;
    for (req, status) in [
        (&b"GARBAGE\r\n\r\n"[..], "400"),
        (b"POST / HTTP/1.0\r\nContent-Length: lots\r\n\r\n", "400"),
        (b"POST / HTTP/1.0\r\nContent-Length: 99999999999\r\n\r\n", "413"),
        (b"GET / HTTP/1.0\r\n\r\n", "405"),
        (b"POST / HTTP/1.0\r\nContent-Length: 7\r\n\r\n(dance)", "400"),
        (b"POST / HTTP/1.0\r\nContent-Length: 6\r\n\r\n((((((", "400"),
        (b"POST / HTTP/1.0\r\nContent-Length: 10\r\n\r\n(inf", "400"),
    ] {
        let answer = raw(url, req);
        assert!(answer.starts_with(&format!("HTTP/1.0 {status} ")), "{:?} → {answer:?}", String::from_utf8_lossy(req));
    }
    let info = |origin: &str| raw(url, format!("POST / HTTP/1.0\r\n{origin}Content-Length: 6\r\n\r\n(info)").as_bytes());
    let plain = info("");
    assert!(plain.starts_with("HTTP/1.0 200 ") && plain.ends_with("available"), "{plain}");
    assert!(!plain.to_lowercase().contains("access-control-allow-origin"), "{plain}");
    // A web page of another site cannot drive the player (a text/plain POST needs no preflight).
    let foreign = info("Origin: http://evil.example\r\n");
    assert!(foreign.starts_with("HTTP/1.0 403 "), "{foreign}");
    let local = info("Origin: http://localhost:8080\r\n");
    assert!(local.starts_with("HTTP/1.0 200 ") && local.contains("Access-Control-Allow-Origin: http://localhost:8080\r\n"), "{local}");
    assert!(!local.contains("Access-Control-Allow-Origin: *"), "{local}");
}

#[test]
fn past_its_connection_cap_the_player_answers_503_and_recovers() {
    let server = Server::start();
    // Connections that send nothing hold the 32 slots.
    let idle: Vec<TcpStream> = (0..32).map(|_| TcpStream::connect(&server.url).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    let over = raw(&server.url, b"POST / HTTP/1.0\r\nContent-Length: 6\r\n\r\n(info)");
    assert!(over.starts_with("HTTP/1.0 503 "), "{over}");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    drop(idle);
    std::thread::sleep(Duration::from_millis(300));
    let info = send(&server.url, "(info)", Duration::from_secs(3)).unwrap();
    assert_eq!(info, "available");
}

#[test]
fn a_request_sent_a_byte_at_a_time_is_cut_at_its_deadline() {
    let server = Server::start();
    let mut s = TcpStream::connect(&server.url).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let t = Instant::now();
    // One byte every 2 s never finishes the head; the server answers 408 at 10 s.
    let mut answer = Vec::new();
    for b in b"POST / HTTP/1.0\r\nX: ".iter().cycle().take(20) {
        if s.write_all(&[*b]).is_err() {
            break;
        }
        let mut buf = [0u8; 256];
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                answer.extend_from_slice(&buf[..n]);
                let _ = s.read_to_end(&mut answer);
                break;
            }
            Err(_) => {}
        }
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.0 408 "), "{answer:?}");
    assert!(t.elapsed() < Duration::from_secs(14), "{:?}", t.elapsed());
}

#[test]
fn ggp_serve_refuses_zero_mcts_iterations() {
    let (status, _, err, took) = run_limited(&["ggp", "serve", "--port", "0", "--mcts-iterations", "0"], Duration::from_secs(10));
    assert_eq!(status, Some(2), "it served instead ({took:?}): {err}");
    assert!(err.contains("--mcts-iterations") && err.contains("0"), "{err}");
}

#[test]
fn an_unsafe_variable_is_reported_as_unsafe_not_as_a_missing_legal_rule() {
    let text = "(role p) (init (c 0)) (<= (legal p (go ?x)) (true (c 0))) (<= (next (c 1)) (does p ?m))
(<= terminal (true (c 1))) (goal p 100)";
    let e = playforge::gdl::compile_any("unsafe.kif", text, Default::default()).err().expect("an unsafe rule is an error").to_string();
    assert!(e.contains("`?x` is unsafe"), "{e}");
    assert!(!e.contains("no `legal` rule"), "{e}");
    assert!(e.contains("unsafe.kif:1:"), "{e}");
}

#[test]
fn nine_roles_are_refused_on_either_reasoner() {
    // A counter without end passes the grounding limits, so the non-ground evaluator would
    // play it, with a joint move of 9 × 16 bits in 128.
    let roles: String = (0..9).map(|r| format!("(role r{r}) ")).collect();
    let text = format!(
        "{roles}(<= (legal ?r go) (role ?r)) (init (n 0)) (<= (next (n (s ?x))) (true (n ?x))) (<= terminal (true (n (s (s 0)))))
(<= (goal ?r 100) (role ?r))"
    );
    let e = playforge::gdl::compile_any("roles.kif", &text, Default::default()).err().expect("9 roles are refused").to_string();
    assert!(e.contains("9 roles; expected at most 8 roles"), "{e}");
}
