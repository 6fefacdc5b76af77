//! The web room: a run's `report.html` is one self-contained page (charts inline, the replay
//! viewer's frames inline, nothing fetched) that every run-folder command writes; `playforge
//! serve` answers bad requests with errors (never a file outside its folders), plays a game to
//! its end through its API against an AI, undoes and restarts, and saves a trace that replays to
//! the same final state.

use playforge::players::ai::Replay;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("playforge-web-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn cli(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_playforge")).args(args).current_dir(root()).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "playforge {args:?} failed:\n{text}");
    text
}

/// Nothing in the page reaches past the page: no scripts, styles, images or fonts by address.
fn assert_self_contained(html: &str, name: &str) {
    for bad in ["src=\"http", "href=\"http", "<link", "@import", "url(http", "src=\"//", "fetch(\"http"] {
        assert!(!html.contains(bad), "{name}: `{bad}` in the page");
    }
    // The only addresses are SVG namespaces (names, never fetched).
    for (i, _) in html.match_indices("http").filter(|(i, _)| !html[*i..].starts_with("http-equiv=")) {
        let rest = &html[i..(i + 40).min(html.len())];
        assert!(rest.starts_with("http://www.w3.org/"), "{name}: an address in the page: {rest}");
    }
}

#[test]
fn every_run_folder_command_writes_a_self_contained_report() {
    let out = tmp("report");
    let o = out.to_str().unwrap();
    // A balance run (charts, best content, replays), a tournament, a GDL match, a play run.
    let said = cli(&["balance", "configs/hexmage_balance.toml", "--out", o, "--quiet"]);
    assert!(said.contains("report.html"), "{said}");
    cli(&["tournament", "configs/hex_tournament.toml", "--encounters", "1", "--out", o, "--quiet"]);
    cli(&["play", "configs/simple_coins.toml", "--out", o, "--quiet"]);
    let bal = out.join("hexmage_balance/cma-seed-1");
    let html = std::fs::read_to_string(bal.join("report.html")).unwrap();
    assert_self_contained(&html, "balance");
    // Charts inline as SVG, the same drawing as the PNG beside it.
    assert!(bal.join("convergence.svg").exists() && bal.join("convergence.png").exists());
    assert!(html.contains("<h3>convergence.svg</h3><div class=\"chart\"><svg"), "the chart is inline");
    // The best content with its start drawn, and a viewer over every recorded game's frames.
    assert!(html.contains("best_encounter.toml") && html.contains("the content's start — start"), "the best encounter's start is drawn");
    let replays = std::fs::read_dir(bal.join("replays")).unwrap().count();
    assert!(replays >= 1);
    let data_at = html.find("<script type=\"application/json\" id=\"replay-data\">").expect("the replay data");
    let data = &html[data_at..];
    let data = &data[data.find('>').unwrap() + 1..data.find("</script>").unwrap()];
    let reps: serde_json::Value = serde_json::from_str(&data.replace("<\\/", "</")).unwrap();
    assert_eq!(reps.as_array().unwrap().len(), replays.min(6));
    for r in reps.as_array().unwrap() {
        let (moves, svgs) = (r["moves"].as_array().unwrap(), r["svgs"].as_array().unwrap());
        assert!(!moves.is_empty() && svgs.len() == moves.len() + 1, "a frame per move and the start");
        assert!(r["note"].is_null(), "every move replays: {}", r["note"]);
    }
    // The same page again from `playforge report`: byte for byte (nothing in it depends on the clock).
    cli(&["report", bal.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(bal.join("report.html")).unwrap(), html);
    for dir in [out.join("hex_tournament/seed-1"), out.join("simple_coins/seed-1")] {
        let page = std::fs::read_to_string(dir.join("report.html")).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert_self_contained(&page, &dir.display().to_string());
    }
    let tour = std::fs::read_to_string(out.join("hex_tournament/seed-1/report.html")).unwrap();
    assert!(tour.contains("table.md") && tour.contains("<table>"), "the win-rate table is in the report");
    // A GDL match: its records drawn from the game's facts, a grid for tic-tac-toe's cells.
    let gdl = out.join("gdl");
    cli(&["gdl-match", "games/gdl/tictactoe.kif", "--players", "random,mcts", "--matches", "2", "--out", gdl.to_str().unwrap()]);
    let page = std::fs::read_to_string(gdl.join("report.html")).unwrap();
    assert_self_contained(&page, "gdl-match");
    let at = page.find("id=\"replay-data\">").expect("the GDL matches in the viewer");
    let data = &page[at + "id=\"replay-data\">".len()..];
    let reps: serde_json::Value = serde_json::from_str(&data[..data.find("</script>").unwrap()].replace("<\\/", "</")).unwrap();
    assert_eq!(reps.as_array().unwrap().len(), 2);
    for r in reps.as_array().unwrap() {
        assert!(r["note"].is_null(), "every joint move replays: {}", r["note"]);
        let (moves, svgs) = (r["moves"].as_array().unwrap(), r["svgs"].as_array().unwrap());
        assert!(moves.len() >= 5 && svgs.len() == moves.len() + 1);
        assert!(svgs.last().unwrap().as_str().unwrap().contains("data-cell=\"f0-"), "the cell grid is drawn");
        assert!(r["result"].as_str().unwrap().contains("xplayer"), "{}", r["result"]);
    }
    // Not a folder: an error that says what was expected.
    let o = Command::new(env!("CARGO_BIN_EXE_playforge")).args(["report", "no/such/dir"]).output().unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("expected a run folder"));
}

/// The token the test servers run with (the API needs it in `X-Playforge-Token`).
pub const TOKEN: &str = "test-token-0123456789";

/// Starts `serve` on a free loopback port in this process.
pub fn start_server(outputs: &Path) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    let opts = playforge::web::serve::ServeOptions {
        host: "127.0.0.1".into(),
        port: 0,
        outputs: outputs.to_path_buf(),
        games: root().join("games"),
        configs: root().join("configs"),
        mcts_iterations: 200,
        token: Some(TOKEN.into()),
    };
    std::thread::spawn(move || {
        let _ = playforge::web::serve::serve(opts, |a| tx.send(a).unwrap());
    });
    rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap()
}

/// One raw request; the status and the body.
pub fn request(addr: SocketAddr, raw: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(raw).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).to_string();
    let code = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (code, body)
}

pub fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    request(addr, format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
}

/// A POST as the app's page sends it (its Host, its token).
pub fn post(addr: SocketAddr, path: &str, body: &serde_json::Value) -> (u16, serde_json::Value) {
    let b = body.to_string();
    let (code, text) = request(
        addr,
        format!("POST {path} HTTP/1.1\r\nHost: {addr}\r\nX-Playforge-Token: {TOKEN}\r\nContent-Length: {}\r\n\r\n{b}", b.len()).as_bytes(),
    );
    (code, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}: {text}")))
}

#[test]
fn serve_refuses_bad_requests_and_nothing_outside_its_folder() {
    let out = tmp("serve-bad");
    std::fs::write(out.join("inside.txt"), "inside").unwrap();
    let secret = out.parent().unwrap().join(format!("playforge-web-secret-{}", std::process::id()));
    std::fs::write(&secret, "TOP-SECRET-CONTENT").unwrap();
    let addr = start_server(&out);
    assert_eq!(get(addr, "/runs/inside.txt"), (200, "inside".to_string()));
    for path in [
        "/runs/../".to_string() + secret.file_name().unwrap().to_str().unwrap(),
        "/runs/%2e%2e/".to_string() + secret.file_name().unwrap().to_str().unwrap(),
        "/runs/..%2f..%2fetc/passwd".to_string(),
        "/runs//etc/passwd".to_string(),
        format!("/runs/{}", secret.display()),
    ] {
        let (code, body) = get(addr, &path);
        assert!(code == 403 || code == 404, "{path}: {code} {body}");
        assert!(!body.contains("TOP-SECRET-CONTENT"), "{path}");
    }
    // A symbolic link out of the folder is refused too.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&secret, out.join("link.txt")).unwrap();
        let (code, body) = get(addr, "/runs/link.txt");
        assert_eq!(code, 403, "{body}");
    }
    assert_eq!(get(addr, "/nowhere").0, 404);
    let (code, body) = request(
        addr,
        format!("POST /api/new HTTP/1.1\r\nHost: {addr}\r\nX-Playforge-Token: {TOKEN}\r\nContent-Length: 5\r\n\r\n{{nope").as_bytes(),
    );
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("not JSON"));
    let (code, v) = post(addr, "/api/new", &serde_json::json!({"game": "../../etc/passwd", "seats": ["human"]}));
    assert_eq!(code, 400);
    assert!(v["error"].as_str().unwrap().contains("expected one of"), "{v}");
    let (code, v) = post(addr, "/api/new", &serde_json::json!({"game": "connect_four", "seats": ["human"]}));
    assert_eq!(code, 400, "one seat for a two-sided game: {v}");
    let (code, v) = post(addr, "/api/new", &serde_json::json!({"game": "connect_four", "seats": ["human", "wizard"]}));
    assert!(code == 400 && v["error"].as_str().unwrap().contains("wizard"), "{v}");
    let (code, v) = post(addr, "/api/move", &serde_json::json!({"id": "999999-0123", "i": 0}));
    assert!(code == 400 && v["error"].as_str().unwrap().contains("no game"), "{v}");
    let (code, v) = post(addr, "/api/move", &serde_json::json!({"id": "999999", "i": 0}));
    assert!(code == 403 && v["error"].as_str().unwrap().contains("not a game of this client"), "{v}");
    let (code, _) = request(addr, format!("POST /api/new HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n\r\n", 10_000_000).as_bytes());
    assert_eq!(code, 413, "an oversized body is refused before it is read");
    let (code, _) = request(addr, b"\x00\x01garbage\r\n\r\n");
    assert_eq!(code, 400);
    // Still serving after all that.
    assert_eq!(get(addr, "/").0, 200);
    let _ = std::fs::remove_file(secret);
}

#[test]
fn a_game_played_through_serve_saves_a_trace_that_replays_to_the_same_end() {
    let out = tmp("serve-play");
    let addr = start_server(&out);
    let (code, games) = {
        let (c, b) = get(addr, "/api/games");
        (c, serde_json::from_str::<serde_json::Value>(&b).unwrap())
    };
    assert_eq!(code, 200);
    let names: Vec<&str> = games["games"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
    for g in ["connect_four", "match3", "hex_arena", "magic_land", "tictactoe"] {
        assert!(names.contains(&g), "{g} in {names:?}");
    }
    // Connect Four, the person red against MCTS: always the first lit move.
    let (code, mut v) = post(addr, "/api/new", &serde_json::json!({"game": "connect_four", "seed": 4, "seats": ["human", "mcts"]}));
    assert_eq!(code, 200, "{v}");
    let id = v["id"].clone();
    // Undo after the first exchange goes back to the start; restart gives the same board.
    let start_text = v["state_text"].clone();
    let (_, after) = post(addr, "/api/move", &serde_json::json!({"id": id, "i": 3}));
    assert_eq!(after["moves"].as_array().unwrap().len(), 2, "the person's move and MCTS's answer: {after}");
    let (_, undone) = post(addr, "/api/undo", &serde_json::json!({"id": id}));
    assert_eq!(undone["state_text"], start_text);
    let mut n = 0;
    while !v["over"].as_bool().unwrap() {
        assert!(v["human_to_move"].as_bool().unwrap(), "{v}");
        let legal = v["legal"].as_array().unwrap();
        // Each drop touches its landing cell on the board (clickable there).
        assert!(legal.iter().all(|m| m["cells"].as_array().unwrap().iter().any(|c| c.as_str().unwrap().starts_with("g0-"))));
        let m = &legal[0];
        let (code, next) = post(addr, "/api/move", &serde_json::json!({"id": id, "i": m["i"], "name": m["name"]}));
        assert_eq!(code, 200, "{next}");
        assert!(next["error"].is_null(), "{next}");
        v = next;
        n += 1;
        assert!(n < 50);
    }
    let trace = PathBuf::from(v["trace"].as_str().unwrap());
    let rep: Replay = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert_eq!(rep.players, ["human", "mcts"]);
    assert_eq!(rep.chance_seed, 4);
    assert_eq!(rep.moves, v["moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect::<Vec<_>>());
    assert!(!rep.result.is_empty(), "the trace says how it ended");
    let program = playforge::web::replay::program_of(&rep, &root()).unwrap();
    let game = playforge::game::WgdlGame::new(program.clone()).with_seed(rep.chance_seed);
    use playforge::game::Game;
    let mut st = game.initial().unwrap();
    let mut legal = Vec::new();
    for name in &rep.moves {
        game.legal(&st, &mut legal).unwrap();
        let m = *legal.iter().find(|&&m| program.action_name(&st, m) == *name).expect("a recorded move is legal");
        game.apply(&mut st, m).unwrap();
    }
    assert_eq!(program.state_text(&st), v["state_text"].as_str().unwrap(), "the trace replays to the page's final state");
    // Restart: the same start.
    let (_, again) = post(addr, "/api/restart", &serde_json::json!({"id": id}));
    assert_eq!(again["state_text"], start_text);
    // Match-3 alone on a chance seed: the refills follow the seed, so the trace replays too.
    let (_, mut m3) = post(addr, "/api/new", &serde_json::json!({"game": "match3", "seed": 9, "seats": ["human"]}));
    let id = m3["id"].clone();
    while !m3["over"].as_bool().unwrap() {
        let last = m3["legal"].as_array().unwrap().len() - 1;
        m3 = post(addr, "/api/move", &serde_json::json!({"id": id, "i": last})).1;
        assert!(m3["error"].is_null(), "{m3}");
    }
    let rep: Replay = serde_json::from_str(&std::fs::read_to_string(m3["trace"].as_str().unwrap()).unwrap()).unwrap();
    let f = playforge::web::replay::frames(&rep, &root(), "m3").unwrap();
    assert!(f.note.is_none() && f.moves.len() == rep.moves.len(), "{:?}", f.note);
    // Watching two AIs: the page steps them one move at a time.
    let (_, mut w) = post(addr, "/api/new", &serde_json::json!({"game": "tictactoe", "seed": 1, "seats": ["random", "mcts"]}));
    assert!(w["trace"].is_null(), "no person, no trace");
    let id = w["id"].clone();
    let mut steps = 0;
    while w["ai_to_move"].as_bool().unwrap() {
        w = post(addr, "/api/step", &serde_json::json!({"id": id})).1;
        steps += 1;
        assert!(steps <= 9);
    }
    assert!(w["over"].as_bool().unwrap() && steps >= 5);
}

/// A persona of a personas run plays its game in the page (watching it): listed among the
/// players of match-3 once its best_formula.txt is there, it plays a board to the end.
#[test]
fn a_persona_run_is_offered_as_a_player_of_its_game() {
    let out = tmp("serve-persona");
    let run = out.join("personas_quick/seed-1/MaxS");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("best_formula.txt"), "wins / visits + sqrt(ln(parent) / visits)\n# goal: 3000\n").unwrap();
    let addr = start_server(&out);
    let (_, b) = get(addr, "/api/games");
    let games: serde_json::Value = serde_json::from_str(&b).unwrap();
    let ais = |name: &str| -> Vec<String> {
        let g = games["games"].as_array().unwrap().iter().find(|g| g["name"] == name).unwrap();
        g["ais"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect()
    };
    assert!(ais("match3").contains(&"persona:personas_quick/MaxS".to_string()), "{:?}", ais("match3"));
    assert!(!ais("match3").iter().any(|a| a.ends_with("/MinS")), "no run, no seat");
    assert!(!ais("connect_four").iter().any(|a| a.starts_with("persona:")), "a persona plays its own game only");
    let (code, mut v) = post(addr, "/api/new", &serde_json::json!({"game": "match3", "seed": 3, "seats": ["persona:personas_quick/MaxS"]}));
    assert_eq!(code, 200, "{v}");
    let id = v["id"].clone();
    let mut steps = 0;
    while v["ai_to_move"].as_bool().unwrap() {
        v = post(addr, "/api/step", &serde_json::json!({"id": id})).1;
        assert!(v["error"].is_null(), "{v}");
        steps += 1;
        assert!(steps <= 20);
    }
    assert!(v["over"].as_bool().unwrap() && steps == 20, "{steps} moves");
    for bad in ["persona:../x/MaxS", "persona:personas_quick/Nobody", "persona:nope/MaxS"] {
        let (code, e) = post(addr, "/api/new", &serde_json::json!({"game": "match3", "seed": 3, "seats": [bad]}));
        assert_eq!(code, 400, "{bad}: {e}");
    }
}
