//! Output folders of runs. A run writes into one folder per run key (command, config name,
//! optimizer or persona, seed); while it runs it holds the folder's lock (`.lock`: the process
//! id, and where `/proc` tells them the process's start time and the boot's id, so that a lock
//! left by a killed run whose process id was given to another process since is known stale), so
//! a second run on the same folder is refused with the first one's process id instead of
//! racing it; a fresh run (not `--resume`) first removes every file an older run left there, so
//! no chart, replay or table of another run survives beside the new ones. Only folders
//! playforge made (they hold `.playforge`, or a checkpoint, config or results of an older run) are ever cleared: a `--out` pointing at a folder of
//! the user's own is refused, not emptied.
//!
//! What a run folder names lives here too. Outputs name their game by its absolute path
//! ([`game_path`]): a run folder is a record of a run on this machine, and an absolute path
//! holds from any working folder and after the run folder is moved (a path relative to the run
//! folder would break on that move; one relative to the working folder, what older versions
//! wrote, breaks on a `cd`). [`find_named`] reads every kind back: as written (from the working
//! folder, for older files), then relative to the file that names it and each folder above it.
//! A checkpoint that is not this run's says which line of its key differs ([`key_difference`]).

use std::path::{Path, PathBuf};

/// The lock file in a run folder.
pub const LOCK: &str = ".lock";
/// The marker of a folder playforge made.
pub const MARKER: &str = ".playforge";

/// Why a run folder cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    #[error("cannot use {path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error(
        "{path} is in use by another playforge run (process {pid}); expected one run per output folder: wait for it, stop it, or write elsewhere with --out"
    )]
    Locked { path: String, pid: u32 },
    #[error(
        "{path} exists, is not empty and was not made by playforge; expected a new folder or one of playforge's (choose another --out, or remove it)"
    )]
    Foreign { path: String },
}

/// A run folder held for the life of the value (its lock is removed on drop).
#[derive(Debug)]
pub struct RunDir {
    pub path: PathBuf,
}

impl RunDir {
    /// Creates (if need be) and locks `path`. A fresh run then calls [`RunDir::clear`]; a
    /// resumed one keeps what is there.
    pub fn open(path: &Path) -> Result<RunDir, RunDirError> {
        let io = |err| RunDirError::Io { path: path.display().to_string(), err };
        // Ours: it has the marker, or what a run of an older version (or a copied run) leaves:
        // a checkpoint, a resolved config, an experiment's results. (A run folder is always
        // `<out>/<name>/…`, never `--out` itself, so a folder of the user's own is met rarely.)
        let ours = [MARKER, "checkpoint.json", "config.toml", "results.csv"].iter().any(|f| path.join(f).exists());
        if path.exists() && !ours && std::fs::read_dir(path).map_err(io)?.next().is_some() {
            return Err(RunDirError::Foreign { path: path.display().to_string() });
        }
        std::fs::create_dir_all(path).map_err(io)?;
        std::fs::write(path.join(MARKER), "a playforge run folder: a fresh run removes everything else in it\n").map_err(io)?;
        take_lock(path)?;
        Ok(RunDir { path: path.to_path_buf() })
    }

    /// Removes every output of an older run (a fresh run starts with an empty folder).
    pub fn clear(&self) -> Result<(), RunDirError> {
        clear(&self.path).map_err(|err| RunDirError::Io { path: self.path.display().to_string(), err })
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let lock = self.path.join(LOCK);
        if std::fs::read_to_string(&lock).ok().and_then(|t| Holder::parse(&t)).is_some_and(|h| h.pid == std::process::id()) {
            let _ = std::fs::remove_file(lock);
        }
    }
}

/// Who holds a lock: a process id and, where `/proc` gives them, the process's start time (in
/// clock ticks since boot, field 22 of `/proc/<pid>/stat`) and the boot's id. The file reads
/// `<pid> <start> <boot id>` on one line; an older version's lock is the process id alone.
#[derive(Clone, Debug, PartialEq)]
pub struct Holder {
    pub pid: u32,
    pub start: Option<u64>,
    pub boot: Option<String>,
}

impl Holder {
    /// This process.
    pub fn me() -> Holder {
        let pid = std::process::id();
        Holder { pid, start: start_time(pid), boot: boot_id() }
    }

    /// A lock file's text; `None` when it holds no process id.
    pub fn parse(text: &str) -> Option<Holder> {
        let mut words = text.split_whitespace();
        let pid = words.next()?.parse().ok()?;
        let start = words.next().and_then(|w| w.parse().ok());
        let boot = words.next().map(String::from);
        Some(Holder { pid, start, boot })
    }

    /// The lock file's text.
    pub fn line(&self) -> String {
        let mut s = self.pid.to_string();
        if let Some(t) = self.start {
            s.push_str(&format!(" {t}"));
            if let Some(b) = &self.boot {
                s.push_str(&format!(" {b}"));
            }
        }
        s.push('\n');
        s
    }

    /// Whether the process that wrote the lock still runs: its pid is alive and, where both are
    /// known, it started when the lock says, in the same boot. Without `/proc` only the pid is
    /// asked (elsewhere than Linux it is assumed alive).
    pub fn alive(&self) -> bool {
        if !alive(self.pid) {
            return false;
        }
        if let (Some(b), Some(now)) = (&self.boot, boot_id())
            && *b != now
        {
            return false;
        }
        match (self.start, start_time(self.pid)) {
            (Some(t), Some(now)) => t == now,
            _ => true,
        }
    }
}

/// Process `pid`'s start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`), if
/// `/proc` says.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 2, the command's name, is in parentheses and may hold spaces and parentheses:
    // the fields after it start past the last `)`; field 22 is the 20th of those.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`), if `/proc` says.
fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    (!id.is_empty() && !id.contains(char::is_whitespace)).then(|| id.to_string())
}

/// Takes `path`'s lock: free, stale (its process is gone) or already ours.
fn take_lock(path: &Path) -> Result<(), RunDirError> {
    use std::io::Write;
    let lock = path.join(LOCK);
    let me = Holder::me();
    for _ in 0..3 {
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&lock) {
            Ok(mut f) => {
                return f.write_all(me.line().as_bytes()).map_err(|err| RunDirError::Io { path: lock.display().to_string(), err });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let holder = std::fs::read_to_string(&lock).ok().and_then(|t| Holder::parse(&t));
                match holder {
                    Some(h) if h.pid == me.pid => return Ok(()),
                    Some(h) if h.alive() => return Err(RunDirError::Locked { path: path.display().to_string(), pid: h.pid }),
                    // Stale (its run was killed, or its pid now belongs to a process started
                    // later) or unreadable: taken over.
                    _ => {
                        let _ = std::fs::remove_file(&lock);
                    }
                }
            }
            Err(err) => return Err(RunDirError::Io { path: lock.display().to_string(), err }),
        }
    }
    Err(RunDirError::Locked { path: path.display().to_string(), pid: 0 })
}

/// Whether process `pid` is running (Linux: its /proc entry; elsewhere assumed so).
fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") { Path::new(&format!("/proc/{pid}")).exists() } else { true }
}

/// An output's game path as outputs write it: absolute (see the module's opening paragraph),
/// with `..` and links resolved when the file exists.
pub fn game_path(p: &Path) -> PathBuf {
    p.canonicalize().or_else(|_| std::path::absolute(p)).unwrap_or_else(|_| p.to_path_buf())
}

/// The file a path in an output names, `named` as written in the file at `near` (a replay, an
/// encounter, a config in a run folder): as written (absolute, or from the working folder, as
/// older versions wrote it), else relative to `near`'s folder and each folder above it.
pub fn find_named(named: &Path, near: &Path) -> Option<PathBuf> {
    if named.is_file() {
        return Some(named.to_path_buf());
    }
    if named.is_absolute() {
        return None;
    }
    let dir = if near.is_dir() { near } else { near.parent().unwrap_or(Path::new(".")) };
    let start = game_path(if dir.as_os_str().is_empty() { Path::new(".") } else { dir });
    start.ancestors().map(|d| d.join(named)).find(|p| p.is_file())
}

/// Why a checkpoint's key (what it belongs to: a resolved config, a game's hash or text) is not
/// the one this run expects: the first line that differs, quoted from both (each cut to 120
/// characters). A `# game` line names the game's text or map.
pub fn key_difference(stored: &str, expected: &str) -> String {
    let cut = |s: &str| -> String {
        let s = s.trim();
        if s.chars().count() > 120 { format!("{}…", s.chars().take(120).collect::<String>()) } else { s.to_string() }
    };
    let (mut a, mut b) = (stored.lines(), expected.lines());
    for n in 1.. {
        match (a.next(), b.next()) {
            (None, None) => break,
            (x, y) if x == y => continue,
            (Some(x), Some(y)) if x.starts_with("# game") && y.starts_with("# game") => {
                return "the game's text or map has changed since the checkpoint (its hash differs)".to_string();
            }
            (Some(x), Some(y)) => return format!("line {n} of what it belongs to reads `{}` where this run has `{}`", cut(x), cut(y)),
            (Some(x), None) => return format!("it has a line {n} `{}` that this run has not", cut(x)),
            (None, Some(y)) => return format!("this run has a line {n} `{}` that it has not", cut(y)),
        }
    }
    "it differs".to_string()
}

/// The error of a checkpoint that belongs to another run: what differs, and what to do.
pub fn stale_checkpoint(path: &Path, stored: &str, expected: &str) -> String {
    format!(
        "{}: this checkpoint belongs to another configuration or another version of the game: {}; expected the same config and game as the interrupted run (or run without --resume)",
        path.display(),
        key_difference(stored, expected)
    )
}

/// The error of a checkpoint that does not hold together: `what` names the field and what was
/// expected.
pub fn bad_checkpoint(path: &Path, what: &str) -> String {
    format!("{}: checkpoint {what} (delete it or run without --resume)", path.display())
}

/// Removes everything in `path` but the lock and the marker.
pub fn clear(path: &Path) -> std::io::Result<()> {
    for e in std::fs::read_dir(path)? {
        let e = e?;
        let name = e.file_name();
        if name == LOCK || name == MARKER {
            continue;
        }
        let p = e.path();
        if e.file_type()?.is_dir() { std::fs::remove_dir_all(&p)? } else { std::fs::remove_file(&p)? }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("playforge-rundir-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_fresh_run_clears_and_a_kept_one_keeps() {
        let d = tmp("fresh");
        {
            let r = RunDir::open(&d).unwrap();
            std::fs::write(r.path.join("old.png"), "x").unwrap();
            std::fs::create_dir_all(r.path.join("replays")).unwrap();
        }
        assert!(!d.join(LOCK).exists(), "the lock goes with the run");
        {
            let _r = RunDir::open(&d).unwrap();
            assert!(d.join("old.png").exists());
        }
        RunDir::open(&d).unwrap().clear().unwrap();
        assert!(!d.join("old.png").exists() && !d.join("replays").exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_live_lock_refuses_a_stale_one_is_taken_and_a_foreign_folder_is_left_alone() {
        let d = tmp("lock");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(MARKER), "").unwrap();
        // Process 1 (init) is alive and is not us.
        std::fs::write(d.join(LOCK), "1\n").unwrap();
        let e = RunDir::open(&d).unwrap_err().to_string();
        assert!(e.contains("in use by another playforge run (process 1)"), "{e}");
        // A process id that cannot be running.
        std::fs::write(d.join(LOCK), "4294967290\n").unwrap();
        assert!(RunDir::open(&d).is_ok());
        std::fs::remove_dir_all(&d).unwrap();
        let f = tmp("foreign");
        std::fs::create_dir_all(&f).unwrap();
        std::fs::write(f.join("thesis.tex"), "mine").unwrap();
        let e = RunDir::open(&f).unwrap_err().to_string();
        assert!(e.contains("not made by playforge"), "{e}");
        assert!(f.join("thesis.tex").exists());
        std::fs::remove_dir_all(&f).unwrap();
    }
}
