//! Who may use `serve`, checked on every request before anything else runs. Three secrets and
//! two headers:
//!
//! - The **server token** (random at start, or `--token`): on loopback it guards the API only
//!   (every POST carries it in `X-Playforge-Token`, which the app's page holds; another site's
//!   page can neither read it nor send a custom header without a CORS preflight, which is never
//!   granted); on any other address every request needs it — the `?token=` of the address
//!   printed at start (as Jupyter does), then a `SameSite=Strict` cookie.
//! - A **game key** per game (the secret half of its id): every call on a game must carry it,
//!   so no other client can move, undo or restart it.
//! - **Host** must name this server (a loopback name or address when it listens on loopback),
//!   which defeats DNS rebinding; **Origin** and `Sec-Fetch-Site`, when a browser sends them,
//!   must say the request comes from this server's own pages.
//!
//! Secrets come from the operating system's random source (`/dev/urandom`), or from the
//! standard library's randomly keyed hasher where there is none; they are compared in time
//! independent of where they differ.

use super::http::{Reply, Request, clip};
use std::hash::{BuildHasher, Hasher};
use std::io::Read;
use std::net::{IpAddr, SocketAddr};

/// The cookie that carries the server token once the printed address was opened.
pub const COOKIE: &str = "playforge_token";
/// The header that carries the server token on API calls.
pub const HEADER: &str = "x-playforge-token";

/// 128 random bits as 32 hex digits.
pub fn secret() -> String {
    let mut b = [0u8; 16];
    let from_os = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)).is_ok();
    if !from_os {
        for (k, chunk) in b.chunks_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(k as u64);
            h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Equal strings, in time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The access rules of one server.
pub struct Guard {
    /// Listening on a loopback address: pages are open to this machine, the API needs the token.
    pub loopback: bool,
    pub token: String,
    /// The port, for the Host and Origin checks.
    port: u16,
}

/// What a request may do once it passed [`Guard::check`].
#[derive(Debug, PartialEq)]
pub enum Pass {
    /// Go on to the route.
    Route,
    /// The token came in the address: set the cookie and send the browser to the same path
    /// without it.
    SetCookie(String),
}

impl Guard {
    pub fn new(addr: SocketAddr, token: Option<String>) -> Guard {
        Guard { loopback: addr.ip().is_loopback(), token: token.unwrap_or_else(secret), port: addr.port() }
    }

    /// The address to print at start: with the token when one is needed for pages.
    pub fn url(&self, addr: SocketAddr) -> String {
        if self.loopback { format!("http://{addr}/") } else { format!("http://{addr}/?token={}", self.token) }
    }

    /// Whether `host` (a Host header) names this server: any name on an address that is not
    /// loopback (the token guards it), else `localhost` or a loopback address, with our port or
    /// none.
    fn host_ok(&self, host: &str) -> bool {
        if !self.loopback {
            return true;
        }
        let (name, port) = split_host(host);
        if port.is_some_and(|p| p != self.port) {
            return false;
        }
        name.eq_ignore_ascii_case("localhost")
            || name.to_ascii_lowercase().ends_with(".localhost")
            || name.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }

    /// The token a request carries: header, cookie or `token=` in the query.
    fn carried<'a>(req: &'a Request, query: &'a str) -> (Option<&'a str>, Option<&'a str>) {
        let in_query = query.split('&').find_map(|kv| kv.strip_prefix("token="));
        let header = req.header(HEADER).or_else(|| {
            req.headers
                .iter()
                .filter(|(k, _)| k == "cookie")
                .flat_map(|(_, v)| v.split(';'))
                .find_map(|c| c.trim().strip_prefix(COOKIE).and_then(|r| r.strip_prefix('=')))
        });
        (header, in_query)
    }

    /// Whether `req` may go on, or the reply that refuses it.
    pub fn check(&self, req: &Request, path: &str, query: &str) -> Result<Pass, Reply> {
        let Some(host) = req.header("host") else {
            return Err(Reply::error(400, "no Host header; expected HTTP/1.1 with Host"));
        };
        if !self.host_ok(host) {
            return Err(Reply::error(421, format!("Host `{}` is not this server; expected localhost or a loopback address", clip(host))));
        }
        // A browser says where a request comes from: only this server's own pages may act.
        if let Some(site) = req.header("sec-fetch-site")
            && !matches!(site, "same-origin" | "none")
            && (req.method != "GET" || path.starts_with("/api/"))
        {
            return Err(Reply::error(403, format!("a request from another site ({site}); expected this server's own pages")));
        }
        if let Some(origin) = req.header("origin")
            && (req.method != "GET" || path.starts_with("/api/"))
            && !origin.strip_prefix("http://").is_some_and(|o| same_site(o, host))
        {
            return Err(Reply::error(403, "a request from another origin; expected this server's own pages"));
        }
        let (carried, in_query) = Self::carried(req, query);
        let good = |t: Option<&str>| t.is_some_and(|t| same(t, &self.token));
        let api = path.starts_with("/api/") && req.method != "GET";
        if api && !good(req.header(HEADER)) {
            return Err(Reply::error(403, "no valid X-Playforge-Token header; expected the token of this server's page (reload it)"));
        }
        if self.loopback || good(carried) {
            return Ok(Pass::Route);
        }
        if good(in_query) {
            return Ok(Pass::SetCookie(self.token.clone()));
        }
        Err(Reply::error(401, "this server needs its token: open the address it printed at start (http://…/?token=…)"))
    }

    /// The redirect that stores the token in a cookie and drops it from the address: to the
    /// same path (as sent, still escaped) on this server, or to the start page when the path or
    /// query holds anything that could leave this server or split a header.
    pub fn set_cookie(&self, raw_path: &str, query: &str) -> Reply {
        let rest: Vec<&str> = query.split('&').filter(|kv| !kv.is_empty() && !kv.starts_with("token=")).collect();
        let to = if rest.is_empty() { raw_path.to_string() } else { format!("{raw_path}?{}", rest.join("&")) };
        let plain = |c: char| c.is_ascii_alphanumeric() || "/-._~%?&=+,;:@!$'()*".contains(c);
        let to = if to.starts_with('/') && !to.starts_with("//") && to.chars().all(plain) { to } else { "/".to_string() };
        Reply::new(303, "text/plain; charset=utf-8", b"signed in\n".to_vec())
            .header("Location", to)
            .header("Set-Cookie", format!("{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/", self.token))
    }
}

/// Whether an Origin's `host[:port]` and a Host header name the same server (a missing port
/// is 80, as browsers leave it out of both).
fn same_site(origin: &str, host: &str) -> bool {
    let ((a, pa), (b, pb)) = (split_host(origin), split_host(host));
    a.eq_ignore_ascii_case(b) && pa.unwrap_or(80) == pb.unwrap_or(80)
}

/// `name` and port of a Host header (`[::1]:8765`, `localhost`, `127.0.0.1:80`).
fn split_host(host: &str) -> (&str, Option<u16>) {
    if let Some(rest) = host.strip_prefix('[') {
        let (ip, tail) = rest.split_once(']').unwrap_or((rest, ""));
        return (ip, tail.strip_prefix(':').and_then(|p| p.parse().ok()));
    }
    match host.rsplit_once(':') {
        Some((n, p)) if !n.contains(':') => (n, Some(p.parse().unwrap_or(0))),
        _ => (host, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, headers: &[(&str, &str)]) -> Request {
        Request {
            method: method.into(),
            target: "/".into(),
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            body: Vec::new(),
        }
    }

    #[test]
    fn loopback_needs_a_loopback_host_and_the_api_its_token() {
        let g = Guard::new("127.0.0.1:8765".parse().unwrap(), Some("t0k".into()));
        assert_eq!(g.check(&req("GET", &[("host", "127.0.0.1:8765")]), "/", "").ok(), Some(Pass::Route));
        assert!(g.check(&req("GET", &[("host", "localhost:8765")]), "/", "").is_ok());
        assert!(g.check(&req("GET", &[("host", "[::1]:8765")]), "/", "").is_ok());
        assert!(g.check(&req("GET", &[("host", "evil.example:8765")]), "/", "").is_err(), "DNS rebinding");
        assert!(g.check(&req("GET", &[("host", "localhost:9999")]), "/", "").is_err(), "another port");
        assert!(g.check(&req("GET", &[]), "/", "").is_err(), "no Host");
        let h = ("host", "127.0.0.1:8765");
        assert!(g.check(&req("POST", &[h]), "/api/new", "").is_err(), "no token");
        assert!(g.check(&req("POST", &[h, (HEADER, "t0x")]), "/api/new", "").is_err(), "a wrong token");
        assert!(g.check(&req("POST", &[h, (HEADER, "t0k")]), "/api/new", "").is_ok());
        let cross = [h, (HEADER, "t0k"), ("origin", "http://evil.example")];
        assert!(g.check(&req("POST", &cross), "/api/new", "").is_err(), "another origin");
        let site = [h, (HEADER, "t0k"), ("sec-fetch-site", "cross-site")];
        assert!(g.check(&req("POST", &site), "/api/new", "").is_err(), "another site");
        let own = [h, (HEADER, "t0k"), ("origin", "http://127.0.0.1:8765"), ("sec-fetch-site", "same-origin")];
        assert!(g.check(&req("POST", &own), "/api/new", "").is_ok());
        let g80 = Guard::new("127.0.0.1:80".parse().unwrap(), Some("t0k".into()));
        let own80 = [("host", "localhost:80"), (HEADER, "t0k"), ("origin", "http://localhost")];
        assert!(g80.check(&req("POST", &own80), "/api/new", "").is_ok(), "port 80 left out of the Origin");
    }

    #[test]
    fn other_addresses_need_the_token_for_every_page() {
        let g = Guard::new("0.0.0.0:8765".parse().unwrap(), Some("t0k".into()));
        let h = ("host", "example.lan:8765");
        assert!(g.check(&req("GET", &[h]), "/", "").is_err());
        assert_eq!(g.check(&req("GET", &[h]), "/", "token=t0k").ok(), Some(Pass::SetCookie("t0k".into())));
        assert!(g.check(&req("GET", &[h, ("cookie", "a=b; playforge_token=t0k")]), "/", "").is_ok());
        assert!(g.check(&req("GET", &[h, ("cookie", "playforge_token=nope")]), "/", "").is_err());
        assert!(g.url("0.0.0.0:8765".parse().unwrap()).ends_with("/?token=t0k"));
        let r = g.set_cookie("/play", "game=x&token=t0k");
        assert!(r.headers.iter().any(|(k, v)| *k == "Location" && v == "/play?game=x"));
        // Nothing that leaves the server or splits a header.
        for (path, query) in [("//evil.example/", "token=t0k"), ("/%0d%0aSet-Cookie:x=y", "token=t0k"), ("/a\r\nX: y", "")] {
            let r = g.set_cookie(path, query);
            let to = &r.headers.iter().find(|(k, _)| *k == "Location").unwrap().1;
            assert!(to == "/" || to == path, "{path}: {to}");
            assert!(!to.contains('\r') && !to.starts_with("//"), "{to}");
        }
    }

    #[test]
    fn secrets_are_long_random_and_compared_whole() {
        let (a, b) = (secret(), secret());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(same(&a, &a.clone()) && !same(&a, &b) && !same("ab", "abc"));
    }
}
