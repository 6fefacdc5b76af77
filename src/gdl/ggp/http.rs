//! HTTP on loopback, both ends of the GGP protocol: the player server reads a request whole
//! within its limits (size, deadline; [`read_request`]), checks a browser's `Origin`
//! ([`loopback_origin`]) and answers with a status and, for a loopback origin, its CORS header
//! ([`respond`]); the manager [`send`]s a message and reads the answer (the module doc of
//! `ggp/`).

use super::*;

/// One HTTP request as the server reads it.
pub(super) struct Request {
    pub(super) method: String,
    /// The `Origin` header, when a browser sent the request.
    pub(super) origin: Option<String>,
    pub(super) body: String,
}

/// Whether an `Origin` is a page served from this machine (`http://localhost`, `127.0.0.1`
/// or `[::1]`, any port).
pub(super) fn loopback_origin(origin: &str) -> bool {
    // Echoed into a header: nothing but printable ASCII.
    if !origin.bytes().all(|b| b.is_ascii_graphic()) {
        return false;
    }
    let Some(rest) = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) else { return false };
    let host = if rest.starts_with('[') {
        rest.split_once(']').map_or(rest, |(h, _)| h).trim_start_matches('[')
    } else {
        rest.split(':').next().unwrap_or(rest)
    };
    matches!(host, "localhost" | "127.0.0.1" | "::1")
}

/// Reads one HTTP request whole by `deadline` (head, then a body of Content-Length bytes); a
/// refusal with its status (400 malformed, 408 too slow, 413 too large) otherwise.
pub(super) fn read_request(stream: &mut TcpStream, deadline: Instant) -> std::result::Result<Request, Refused> {
    let fail = |status: u16, why: String| Refused { status, why };
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut read = |stream: &mut TcpStream, buf: &mut Vec<u8>| -> std::result::Result<usize, Refused> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(fail(408, format!("the request took more than {} s", REQUEST_DEADLINE.as_secs())));
        }
        stream.set_read_timeout(Some(left)).map_err(|e| fail(400, e.to_string()))?;
        match stream.read(&mut chunk) {
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                Ok(n)
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                Err(fail(408, "the request was not sent in time".into()))
            }
            Err(e) => Err(fail(400, e.to_string())),
        }
    };
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_HEAD {
            return Err(fail(431, format!("request head over {MAX_HEAD} bytes")));
        }
        if read(stream, &mut buf)? == 0 {
            return Err(fail(400, "connection closed before the request head ended".into()));
        }
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).map_err(|_| fail(400, "request head is not UTF-8".into()))?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split(' ');
    let (method, _target, version) = (parts.next().unwrap_or(""), parts.next(), parts.next());
    if method.is_empty() || !version.is_some_and(|v| v.starts_with("HTTP/")) {
        return Err(fail(400, format!("malformed request line `{}`; expected `POST / HTTP/1.1`", first_line(request_line))));
    }
    let (mut len, mut origin) = (0usize, None);
    for l in lines.filter(|l| !l.is_empty()) {
        let Some((k, v)) = l.split_once(':') else { return Err(fail(400, format!("malformed header `{}`", first_line(l)))) };
        if k.eq_ignore_ascii_case("content-length") {
            len = v
                .trim()
                .parse()
                .map_err(|_| fail(400, format!("Content-Length `{}`: expected a number of bytes", first_line(v.trim()))))?;
        } else if k.eq_ignore_ascii_case("origin") {
            origin = Some(v.trim().to_string());
        } else if k.eq_ignore_ascii_case("transfer-encoding") {
            return Err(fail(400, "Transfer-Encoding is not supported; expected Content-Length".into()));
        }
    }
    if len > MAX_MESSAGE {
        return Err(fail(413, format!("message of {len} bytes; expected at most {MAX_MESSAGE}")));
    }
    buf.drain(..head_end);
    while buf.len() < len {
        if read(stream, &mut buf)? == 0 {
            return Err(fail(400, format!("connection closed after {} of {len} bytes of the body", buf.len())));
        }
    }
    buf.truncate(len);
    let body = String::from_utf8(buf).map_err(|_| fail(400, "the message is not UTF-8".into()))?;
    Ok(Request { method: method.to_string(), origin, body })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        403 => "Forbidden",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        _ => "Service Unavailable",
    }
}

/// Writes a whole response; `origin` (a loopback one) is allowed to read it.
pub(super) fn respond(stream: &mut TcpStream, status: u16, body: &str, origin: Option<&str>) -> Result<()> {
    let cors = match origin {
        Some(o) => format!(
            "Access-Control-Allow-Origin: {o}\r\nAccess-Control-Allow-Methods: POST\r\nAccess-Control-Allow-Headers: Content-Type\r\nVary: Origin\r\n"
        ),
        None => String::new(),
    };
    write!(
        stream,
        "HTTP/1.0 {status} {}\r\nContent-Type: text/acl\r\nContent-Length: {}\r\nConnection: close\r\n{cors}\r\n{body}",
        reason(status),
        body.len()
    )?;
    stream.flush()?;
    // Closed for writing first, so that the client reads the whole answer before the close.
    let _ = stream.shutdown(std::net::Shutdown::Write);
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
    let mut resp = Vec::new();
    s.take(MAX_MESSAGE as u64).read_to_end(&mut resp)?;
    let resp = String::from_utf8_lossy(&resp);
    let (head, b) = resp.split_once("\r\n\r\n").ok_or_else(|| anyhow!("no HTTP body in the answer"))?;
    let status = head.split(' ').nth(1).unwrap_or("");
    if status != "200" {
        bail!("HTTP {status}: {}", first_line(b));
    }
    Ok(b.trim().to_string())
}
