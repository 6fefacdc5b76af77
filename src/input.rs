//! Reading the text files a user gives (games, maps, configs, move lists): one place that
//! bounds their size and checks their encoding, so that a huge file, a NUL byte or bytes that
//! are not UTF-8 are reported with the file, a line and a column, never passed on; and a run's
//! checkpoint, read back and refused when it belongs to another config or game.
//!
//! A UTF-8 byte-order mark at the start is dropped (editors on Windows write one); positions are
//! then counted from the first character after it, as the user sees the file. A message that
//! quotes a user's text of any length quotes a [`window`] of it.

use std::path::Path;

/// The largest text file playforge reads (16 MiB): far above any game or config (the shipped
/// ones are under 40 KB) and far below what would take minutes to compile.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// Why a text file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("{path}: the file has {size} bytes; expected at most {max} bytes for a game, map or config file")]
    TooBig { path: String, size: u64, max: u64 },
    #[error("{path}:{line}:{col}: {what}; expected UTF-8 text")]
    Encoding { path: String, line: usize, col: usize, what: String },
}

/// At most `shown` characters of `text` around character `at`, with `…` where it was cut: what
/// an error quotes of a formula, an expression or a value of any length.
pub fn window(text: &str, at: usize, shown: usize) -> String {
    let n = text.chars().count();
    if n <= shown {
        return text.to_string();
    }
    let start = at.saturating_sub(shown / 2).min(n - shown);
    let mut s: String = if start > 0 { "…".into() } else { String::new() };
    s.extend(text.chars().skip(start).take(shown));
    if start + shown < n {
        s.push('…');
    }
    s
}

/// Reads `path` as text: at most [`MAX_INPUT_BYTES`], UTF-8 without NUL bytes, a leading
/// byte-order mark dropped.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    read_text_within(path, MAX_INPUT_BYTES)
}

/// [`read_text`] with another size limit.
pub fn read_text_within(path: &Path, max: u64) -> Result<String, InputError> {
    use std::io::Read;
    let name = || path.display().to_string();
    let io = |err| InputError::Io { path: name(), err };
    let file = std::fs::File::open(path).map_err(io)?;
    // Read one byte past the limit rather than trusting the file's metadata (pipes, /proc).
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > max {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(bytes.len() as u64).max(bytes.len() as u64);
        return Err(InputError::TooBig { path: name(), size, max });
    }
    text_from_bytes(&name(), bytes)
}

/// Checks `bytes` as [`read_text`] does (`name` is the file named in errors).
pub fn text_from_bytes(name: &str, mut bytes: Vec<u8>) -> Result<String, InputError> {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        bytes.drain(..3);
    }
    let bad = |bytes: &[u8], at: usize, what: String| {
        let (line, col) = line_col(&bytes[..at]);
        InputError::Encoding { path: name.to_string(), line, col, what }
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.into_bytes();
        bad(&bytes, at, format!("byte 0x{:02X} is not UTF-8", bytes[at]))
    })?;
    match text.bytes().position(|b| b == 0) {
        Some(at) => Err(bad(text.as_bytes(), at, "a NUL byte (\\0), as in a binary file".into())),
        None => Ok(text),
    }
}

/// Line and column (1-based, in characters) just after `before`, which is valid UTF-8.
fn line_col(before: &[u8]) -> (usize, usize) {
    let text = String::from_utf8_lossy(before);
    let line = text.matches('\n').count() + 1;
    let col = text.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// The checkpoint at `path` of an interrupted run, to resume it. One that does not `belong` (another
/// config, or another version of the game) is refused, or with `stale_is_fresh` read as none so
/// that the run starts afresh; one that is not a checkpoint is refused with what JSON said.
pub fn read_checkpoint<T: serde::de::DeserializeOwned>(
    path: &Path,
    belongs: impl Fn(&T) -> bool,
    stale_is_fresh: bool,
) -> anyhow::Result<Option<T>> {
    let text = read_text_within(path, 1 << 30)?;
    let ck: T =
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}; expected a checkpoint written by playforge", path.display()))?;
    if belongs(&ck) {
        Ok(Some(ck))
    } else if stale_is_fresh {
        Ok(None)
    } else {
        anyhow::bail!(
            "{}: this checkpoint belongs to another configuration or another version of the game; expected the same config and game as the interrupted run (or run without --resume)",
            path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(bytes: &[u8]) -> Result<String, String> {
        text_from_bytes("f.wgdl", bytes.to_vec()).map_err(|e| e.to_string())
    }

    #[test]
    fn encodings_are_checked_with_a_position() {
        assert_eq!(check(b"\xEF\xBB\xBFclass x\n").unwrap(), "class x\n");
        assert_eq!(check(b"class x\ncla\xC3\xA9\xFFss\n").unwrap_err(), "f.wgdl:2:5: byte 0xFF is not UTF-8; expected UTF-8 text");
        assert_eq!(check(b"class x\n\nab\0c").unwrap_err(), "f.wgdl:3:3: a NUL byte (\\0), as in a binary file; expected UTF-8 text");
        assert_eq!(check(b"\xEF\xBB\xBF\xC3").unwrap_err(), "f.wgdl:1:1: byte 0xC3 is not UTF-8; expected UTF-8 text");
    }

    #[test]
    fn a_file_past_the_limit_is_refused_with_its_size() {
        let dir = std::env::temp_dir().join(format!("playforge-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("big.wgdl");
        std::fs::write(&p, vec![b' '; 101]).unwrap();
        let e = read_text_within(&p, 100).unwrap_err().to_string();
        assert!(e.contains("101 bytes") && e.contains("at most 100"), "{e}");
        assert_eq!(read_text_within(&p, 101).unwrap().len(), 101);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
