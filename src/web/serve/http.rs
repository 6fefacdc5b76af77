//! HTTP/1.1 as `serve` speaks it, within limits a hostile client cannot stretch. A request is
//! read against one deadline for the whole of it ([`REQUEST_DEADLINE`]: a client dribbling a
//! byte every few seconds is cut off with 408, not held open for ever), its head and body are
//! bounded ([`MAX_HEAD`], [`MAX_BODY`]: 431 and 413), and a malformed one gets 400. Every reply
//! closes its connection and carries the security headers of its kind ([`Kind`]): a
//! Content-Security-Policy on every page, files from run folders sandboxed (a script inside
//! one runs in no origin), no framing, no sniffing, no caching. A connection refused for
//! capacity still gets its 503 whole: the request is read first (briefly) and the socket drained
//! after the answer, so the client reads a status instead of a reset.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

/// The most bytes of a request head (request line and headers).
pub const MAX_HEAD: usize = 16 * 1024;
/// The most bytes of a request body.
pub const MAX_BODY: usize = 64 * 1024;
/// The whole request, head and body, must arrive within this, however slowly it is sent.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(10);
/// A whole reply must be taken by the client within this (one deadline, not one per write).
pub const WRITE_DEADLINE: Duration = Duration::from_secs(30);
/// A reply is written in pieces of this many bytes, each against what is left of the deadline.
const CHUNK: usize = 64 * 1024;
/// A request refused for capacity is read for at most this long before its 503.
pub const REFUSAL_DEADLINE: Duration = Duration::from_secs(2);

/// One request as read.
#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// The path and query as sent (`/runs/x?y`).
    pub target: String,
    /// Header names lower-cased, values trimmed, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// Why a request could not be read: each becomes its status.
#[derive(Debug)]
pub enum ReadError {
    /// The client closed before a whole head (nothing to answer).
    Closed,
    /// 408: the deadline passed.
    TooSlow,
    /// 431: the head is over [`MAX_HEAD`].
    HeadTooLarge,
    /// 413: the body is over [`MAX_BODY`].
    BodyTooLarge(usize),
    /// 400, with what was wrong.
    Bad(String),
}

impl ReadError {
    /// The reply for this error, if the client is still there to hear it.
    pub fn reply(&self) -> Option<Reply> {
        Some(match self {
            ReadError::Closed => return None,
            ReadError::TooSlow => Reply::error(408, format!("the request did not arrive within {} s", REQUEST_DEADLINE.as_secs())),
            ReadError::HeadTooLarge => Reply::error(431, format!("request head over {MAX_HEAD} bytes")),
            ReadError::BodyTooLarge(n) => Reply::error(413, format!("body of {n} bytes; at most {MAX_BODY}")),
            ReadError::Bad(why) => Reply::error(400, format!("bad request: {why}")),
        })
    }
}

/// Reads through a socket whose read timeout is set, before every read, to what is left of one
/// deadline.
struct Deadline<'a> {
    stream: &'a TcpStream,
    until: Instant,
    expired: bool,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            self.expired = true;
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
        match (&mut &*self.stream).read(buf) {
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                self.expired = true;
                Err(std::io::ErrorKind::TimedOut.into())
            }
            r => r,
        }
    }
}

/// Reads one request from `stream`, all of it before `until`.
pub fn read_request(stream: &TcpStream, until: Instant) -> Result<Request, ReadError> {
    let mut src = Deadline { stream, until, expired: false };
    let res = read_from(&mut src);
    match res {
        Err(ReadError::Bad(_) | ReadError::Closed) if src.expired => Err(ReadError::TooSlow),
        r => r,
    }
}

fn read_from(src: &mut Deadline) -> Result<Request, ReadError> {
    let io = |e: std::io::Error| ReadError::Bad(e.to_string());
    let mut r = BufReader::with_capacity(4096, src);
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = (&mut r).take((MAX_HEAD - head.len().min(MAX_HEAD)) as u64 + 1).read_until(b'\n', &mut line).map_err(io)?;
        if n == 0 {
            return Err(if head.is_empty() {
                ReadError::Closed
            } else {
                ReadError::Bad("the connection closed in the request head".into())
            });
        }
        head.extend_from_slice(&line);
        if head.len() > MAX_HEAD {
            return Err(ReadError::HeadTooLarge);
        }
        if line == b"\r\n" || line == b"\n" {
            break;
        }
        if !line.ends_with(b"\n") {
            return Err(ReadError::Bad("the connection closed in the request head".into()));
        }
    }
    let head = String::from_utf8(head).map_err(|_| ReadError::Bad("the request head is not UTF-8".into()))?;
    let mut lines = head.lines();
    let first = lines.next().unwrap_or("");
    let mut parts = first.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(ReadError::Bad(format!("request line `{}`; expected `METHOD /path HTTP/1.1`", clip(first))));
    };
    if !version.starts_with("HTTP/1.") || parts.next().is_some() || !target.starts_with('/') {
        return Err(ReadError::Bad(format!("request line `{}`; expected `METHOD /path HTTP/1.1`", clip(first))));
    }
    let mut headers = Vec::new();
    for l in lines.filter(|l| !l.is_empty()) {
        let Some((k, v)) = l.split_once(':') else {
            return Err(ReadError::Bad(format!("header line `{}`; expected `Name: value`", clip(l))));
        };
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let req = Request { method: method.to_string(), target: target.to_string(), headers, body: Vec::new() };
    if req.header("transfer-encoding").is_some() {
        return Err(ReadError::Bad("Transfer-Encoding is not supported; expected Content-Length".into()));
    }
    let lens: Vec<&str> = req.headers.iter().filter(|(k, _)| k == "content-length").map(|(_, v)| v.as_str()).collect();
    let len = match lens.as_slice() {
        [] => 0,
        [v] => v.parse::<usize>().map_err(|_| ReadError::Bad(format!("Content-Length `{}`; expected a byte count", clip(v))))?,
        _ => return Err(ReadError::Bad("more than one Content-Length".into())),
    };
    if len > MAX_BODY {
        return Err(ReadError::BodyTooLarge(len));
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => ReadError::Bad(format!("the body ended before its {len} bytes")),
        _ => io(e),
    })?;
    Ok(Request { body, ..req })
}

/// At most 80 characters of a client's text, for a message.
pub fn clip(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// What a reply is, for its security headers.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// The app's own pages and API answers: scripts only with the page's nonce (none when
    /// empty), requests only to this server.
    App(String),
    /// A report from a run folder: its own inline viewer runs, sandboxed (no origin, so no
    /// access to the app or its API), nothing fetched.
    Report,
    /// Any other file of a run folder: sandboxed, no script at all.
    File,
}

/// What a reply carries: bytes made here, or a file sent from disk as the client takes it.
pub enum Body {
    Bytes(Vec<u8>),
    File(std::fs::File, u64),
}

/// An answer: status, content type, body, its kind and extra headers.
pub struct Reply {
    pub code: u16,
    pub ty: &'static str,
    pub body: Body,
    pub kind: Kind,
    pub headers: Vec<(&'static str, String)>,
}

impl Reply {
    pub fn new(code: u16, ty: &'static str, body: Vec<u8>) -> Reply {
        Reply { code, ty, body: Body::Bytes(body), kind: Kind::App(String::new()), headers: Vec::new() }
    }
    /// `len` bytes of `file`, read as they are sent.
    pub fn file(ty: &'static str, file: std::fs::File, len: u64) -> Reply {
        Reply { body: Body::File(file, len), ..Reply::new(200, ty, Vec::new()) }
    }
    pub fn json(v: serde_json::Value) -> Reply {
        Reply::new(200, "application/json", v.to_string().into_bytes())
    }
    pub fn error(code: u16, msg: impl Into<String>) -> Reply {
        Reply::new(code, "application/json", serde_json::json!({"error": msg.into()}).to_string().into_bytes())
    }
    pub fn html(s: String) -> Reply {
        Reply::new(200, "text/html; charset=utf-8", s.into_bytes())
    }
    pub fn kind(self, kind: Kind) -> Reply {
        Reply { kind, ..self }
    }
    pub fn header(mut self, name: &'static str, value: String) -> Reply {
        self.headers.push((name, value));
        self
    }
}

/// The Content-Security-Policy of a reply of `kind`.
pub fn csp(kind: &Kind) -> String {
    match kind {
        Kind::App(nonce) => {
            let script = if nonce.is_empty() { "'none'".to_string() } else { format!("'nonce-{nonce}'") };
            format!(
                "default-src 'none'; script-src {script}; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
            )
        }
        Kind::Report => "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
            .to_string(),
        Kind::File => "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'".to_string(),
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        421 => "Misdirected Request",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// Writes `reply` within [`WRITE_DEADLINE`] and closes the connection: the write side is shut and
/// whatever the client still sends is drained briefly, so that it reads the whole answer rather
/// than a reset.
pub fn respond(stream: &mut TcpStream, reply: Reply) -> std::io::Result<()> {
    let until = Instant::now() + WRITE_DEADLINE;
    let len = match &reply.body {
        Body::Bytes(b) => b.len() as u64,
        Body::File(_, n) => *n,
    };
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\
X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\nContent-Security-Policy: {}\r\n",
        reply.code,
        reason(reply.code),
        reply.ty,
        len,
        csp(&reply.kind)
    );
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    write_until(stream, head.as_bytes(), until)?;
    match reply.body {
        Body::Bytes(b) => write_until(stream, &b, until)?,
        Body::File(f, n) => {
            let mut f = f.take(n);
            let mut buf = vec![0; CHUNK];
            loop {
                let k = f.read(&mut buf)?;
                if k == 0 {
                    break;
                }
                write_until(stream, &buf[..k], until)?;
            }
        }
    }
    linger(stream);
    Ok(())
}

/// Writes `bytes` in pieces, each with the socket's write timeout set to what is left before
/// `until`: a client taking a byte now and then cannot stretch the reply past the deadline.
fn write_until(stream: &mut TcpStream, bytes: &[u8], until: Instant) -> std::io::Result<()> {
    for piece in bytes.chunks(CHUNK) {
        let mut rest = piece;
        while !rest.is_empty() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(std::io::ErrorKind::TimedOut.into());
            }
            stream.set_write_timeout(Some(left.max(Duration::from_millis(1))))?;
            match stream.write(rest) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(k) => rest = &rest[k..],
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// Shuts the write side and reads what is left (at most 64 KiB, at most 1 s), so that closing
/// does not reset a connection the client is still writing to.
fn linger(stream: &mut TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let until = Instant::now() + Duration::from_secs(1);
    let mut src = Deadline { stream: &*stream, until, expired: false };
    let _ = std::io::copy(&mut (&mut src).take(64 * 1024), &mut std::io::sink());
}

/// Refuses a connection for capacity: its request read (within [`REFUSAL_DEADLINE`]), then a
/// 503 the client can read whole.
pub fn refuse(mut stream: TcpStream, why: &str) {
    let _ = read_request(&stream, Instant::now() + REFUSAL_DEADLINE);
    let _ = respond(&mut stream, Reply::error(503, why).header("Retry-After", "1".into()));
}

/// Refuses a connection at once, without a thread: what the client already sent is read
/// (without waiting), then a 503 written and the write side shut. A client whose request is
/// still on its way may see a reset; [`refuse`] (on a thread) is for when threads are left.
pub fn refuse_now(mut stream: TcpStream, why: &str) {
    if stream.set_nonblocking(true).is_err() {
        return;
    }
    let mut buf = [0u8; 16 * 1024];
    for _ in 0..4 {
        match (&stream).read(&mut buf) {
            Ok(n) if n > 0 => continue,
            _ => break,
        }
    }
    let body = serde_json::json!({"error": why}).to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\nRetry-After: 1\r\n\
X-Content-Type-Options: nosniff\r\nContent-Security-Policy: default-src 'none'\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.shutdown(Shutdown::Write);
}

/// A path's `%XX` escapes decoded (bad escapes kept as written; `+` is a plus in a path).
pub fn decode_path(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
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

#[cfg(test)]
mod tests {
    use super::decode_path as decode;

    #[test]
    fn percent_escapes_decode_and_bad_ones_stay() {
        assert_eq!(decode("a%20b+c"), "a b+c");
        assert_eq!(decode("%2e%2E/x"), "../x");
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz"), "%zz");
        assert_eq!(decode("%4"), "%4");
    }
}
