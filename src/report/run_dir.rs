//! Output folders of runs. A run writes into one folder per run key (command, config name,
//! optimizer or persona, seed); while it runs it holds the folder's lock (`.lock`, the process
//! id), so a second run on the same folder is refused with the first one's process id instead of
//! racing it; a fresh run (not `--resume`) first removes every file an older run left there, so
//! no chart, replay or table of another run survives beside the new ones. Only folders
//! playforge made (they hold `.playforge`, or a checkpoint, config or results of an older run) are ever cleared: a `--out` pointing at a folder of
//! the user's own is refused, not emptied.

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
        if std::fs::read_to_string(&lock).ok().and_then(|t| t.trim().parse::<u32>().ok()) == Some(std::process::id()) {
            let _ = std::fs::remove_file(lock);
        }
    }
}

/// Takes `path`'s lock: free, stale (its process is gone) or already ours.
fn take_lock(path: &Path) -> Result<(), RunDirError> {
    use std::io::Write;
    let lock = path.join(LOCK);
    let me = std::process::id();
    for _ in 0..3 {
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&lock) {
            Ok(mut f) => {
                return writeln!(f, "{me}").map_err(|err| RunDirError::Io { path: lock.display().to_string(), err });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let pid = std::fs::read_to_string(&lock).ok().and_then(|t| t.trim().parse::<u32>().ok());
                match pid {
                    Some(p) if p == me => return Ok(()),
                    Some(p) if alive(p) => return Err(RunDirError::Locked { path: path.display().to_string(), pid: p }),
                    // Stale (its run was killed) or unreadable: taken over.
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
