//! Process plumbing shared by the servers: spawning in a session of its own, signals, waiting
//! for processes to go, finding a process's children in /proc, free ports and log tails.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use nix::errno::Errno;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::os_user::OsUser;
use crate::deadline::Deadline;

/// A command for a server program: run in `cwd`, as `user` when given, in the C locale (so the
/// messages ixbench looks for in logs are in English).
pub fn command(program: &Path, cwd: &Path, user: Option<&OsUser>) -> Command {
    let mut cmd = Command::new(program);
    setup(&mut cmd, cwd, user);
    cmd
}

/// Set the working directory, user and locale of a command, as [`command`] does.
pub fn setup(cmd: &mut Command, cwd: &Path, user: Option<&OsUser>) {
    cmd.current_dir(cwd).env("LC_ALL", "C").env("LANG", "C");
    if let Some(u) = user {
        u.apply(cmd);
    }
}

/// Run a data directory initializer to completion, keeping its output in `log`; on failure the
/// error holds the last lines of that output.
pub fn run_to_end(cmd: &mut Command, what: &str, log: &Path) -> Result<()> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {program}"))?;
    let mut text = out.stdout;
    text.extend_from_slice(&out.stderr);
    std::fs::write(log, &text).with_context(|| format!("writing {}", log.display()))?;
    if !out.status.success() {
        bail!(
            "{what} failed ({}); last lines of {}: {}",
            out.status,
            log.display(),
            log_tail(log, 8)
        );
    }
    Ok(())
}

/// A process as seen at one moment: its PID and start time, so a PID reused by another process
/// after ours exited is not mistaken for ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcId {
    /// Process id.
    pub pid: u32,
    /// Start time in clock ticks since boot (/proc/PID/stat field 22).
    pub starttime: u64,
}

impl ProcId {
    /// The live (not zombie) process `pid`, if there is one.
    pub fn of(pid: u32) -> Option<ProcId> {
        let stat = procfs::process::Process::new(i32::try_from(pid).ok()?)
            .ok()?
            .stat()
            .ok()?;
        (stat.state != 'Z' && stat.state != 'X').then_some(ProcId {
            pid,
            starttime: stat.starttime,
        })
    }

    /// Whether this very process still runs (a zombie counts as gone).
    pub fn alive(&self) -> bool {
        ProcId::of(self.pid).is_some_and(|p| p.starttime == self.starttime)
    }
}

/// The live children of `pid` (one level: PostgreSQL's processes are all children of the
/// postmaster).
pub fn children(pid: u32) -> Vec<ProcId> {
    let Ok(all) = procfs::process::all_processes() else {
        return Vec::new();
    };
    all.filter_map(|p| p.ok())
        .filter_map(|p| p.stat().ok())
        .filter(|s| s.ppid as i64 == pid as i64 && s.state != 'Z' && s.state != 'X')
        .map(|s| ProcId {
            pid: s.pid as u32,
            starttime: s.starttime,
        })
        .collect()
}

/// The command line of `pid` (empty when it cannot be read).
pub fn cmdline(pid: u32) -> Vec<String> {
    i32::try_from(pid)
        .ok()
        .and_then(|p| procfs::process::Process::new(p).ok())
        .and_then(|p| p.cmdline().ok())
        .unwrap_or_default()
}

/// Send `sig` to `pid` (a process already gone is not an error).
pub fn signal(pid: u32, sig: Signal) -> Result<()> {
    let p = i32::try_from(pid).context("pid out of range")?;
    match kill(Pid::from_raw(p), sig) {
        Ok(()) | Err(Errno::ESRCH) => Ok(()),
        Err(e) => Err(e).with_context(|| format!("sending {sig} to process {pid}")),
    }
}

/// A server program started by ixbench: our child process when we spawned it in this
/// process, otherwise just its identity (a server left running by `ixbench server start`).
#[derive(Debug)]
pub enum Proc {
    /// Spawned by this process: waited for (reaped) when it exits.
    Child(Child, ProcId),
    /// Started earlier by another ixbench process.
    Other(ProcId),
}

impl Proc {
    /// Its PID.
    pub fn pid(&self) -> u32 {
        match self {
            Proc::Child(_, id) | Proc::Other(id) => id.pid,
        }
    }

    /// Its identity.
    pub fn id(&self) -> ProcId {
        match self {
            Proc::Child(_, id) | Proc::Other(id) => *id,
        }
    }

    /// How our child exited, once it has (`None` for a process we did not spawn).
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        match self {
            Proc::Child(c, _) => c.try_wait().ok().flatten(),
            Proc::Other(_) => None,
        }
    }

    /// Whether it still runs (reaps our child if it exited).
    pub fn alive(&mut self) -> bool {
        match self {
            Proc::Child(c, _) => matches!(c.try_wait(), Ok(None)),
            Proc::Other(id) => id.alive(),
        }
    }
}

/// Spawn `cmd` as a server: in a new session (so neither a terminal's Ctrl-C nor ixbench's exit
/// reaches it), stdin from /dev/null, stdout and stderr appended to `log`.
pub fn spawn_server(cmd: &mut Command, log: &Path) -> Result<Proc> {
    let out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("opening server log {}", log.display()))?;
    let err = out.try_clone().context("duplicating the log file handle")?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()?;
            Ok(())
        });
    }
    let program = cmd.get_program().to_string_lossy().into_owned();
    let child = cmd.spawn().with_context(|| format!("starting {program}"))?;
    let pid = child.id();
    // The child may exit at once (bad option); its identity then has start time 0.
    let id = ProcId::of(pid).unwrap_or(ProcId { pid, starttime: 0 });
    Ok(Proc::Child(child, id))
}

/// Signal a server to shut down and wait until it and `others` are gone; after `deadline`,
/// SIGKILL them all and report that the shutdown was not clean.
pub fn shut_down(
    proc: &mut Proc,
    others: &[ProcId],
    sig: Signal,
    deadline: Duration,
) -> Result<()> {
    let end = Deadline::after(deadline);
    if proc.alive() {
        signal(proc.pid(), sig)?;
    }
    let gone = |proc: &mut Proc| !proc.alive() && others.iter().all(|o| !o.alive());
    while !end.expired() {
        if gone(proc) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = proc.pid();
    for p in std::iter::once(pid).chain(others.iter().filter(|o| o.alive()).map(|o| o.pid)) {
        let _ = signal(p, Signal::SIGKILL);
    }
    let end = Deadline::after(Duration::from_secs(10));
    while !end.expired() && !gone(proc) {
        std::thread::sleep(Duration::from_millis(10));
    }
    if !gone(proc) {
        bail!("server process {pid} survived SIGKILL");
    }
    bail!(
        "server process {pid} did not shut down within {} s and was killed with SIGKILL",
        deadline.as_secs()
    )
}

/// A TCP port on 127.0.0.1 that is free now (bound to port 0, then released).
pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind(("127.0.0.1", 0)).context("finding a free port on 127.0.0.1")?;
    Ok(l.local_addr().context("reading the port bound")?.port())
}

/// Fail when `port` is already taken on 127.0.0.1.
pub fn check_port_free(port: u16) -> Result<()> {
    TcpListener::bind(("127.0.0.1", port))
        .map(drop)
        .with_context(|| format!("port {port} on 127.0.0.1 is not free"))
}

/// The last `n` non-empty lines of a log file, joined with ` | ` so an error stays on one line.
pub fn log_tail(log: &Path, n: usize) -> String {
    let Ok(mut f) = std::fs::File::open(log) else {
        return format!("(no log at {})", log.display());
    };
    // Only the end matters; 64 KiB holds far more than n lines.
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)));
    let mut bytes = Vec::new();
    let _ = f.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = lines[lines.len().saturating_sub(n)..].join(" | ");
    if tail.is_empty() {
        format!("(log {} is empty)", log.display())
    } else {
        tail
    }
}

/// The server's own error in what its log got from byte `from` on (the log's length when this
/// start began: earlier starts' lines are not this start's cause), MariaDB `[ERROR] ...`,
/// PostgreSQL `FATAL:`/`PANIC:`/`ERROR:`, without its timestamp prefix: the first one found
/// (within the last 64 KiB), since a failed start-up logs the cause once and then the
/// consequences.
pub fn log_error(log: &Path, from: u64) -> Option<String> {
    let mut f = std::fs::File::open(log).ok()?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024).max(from)));
    let mut bytes = Vec::new();
    let _ = f.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    text.lines().find_map(|l| {
        for tag in ["[ERROR] ", "FATAL:  ", "PANIC:  ", "ERROR:  "] {
            if let Some(at) = l.find(tag) {
                let msg = l[at + tag.len()..].trim();
                // MariaDB's "Aborting" is the consequence, not the cause; a connection refused
                // while the server was starting is not its error either
                if !msg.is_empty()
                    && msg != "Aborting"
                    && !msg.starts_with("the database system is")
                {
                    return Some(msg.to_string());
                }
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_own_error_comes_out_of_its_log() {
        let t = tempfile::tempdir().unwrap();
        let log = t.path().join("server.log");
        std::fs::write(
            &log,
            "2026-11-26 16:26:56 0 [Note] InnoDB: Completed initialization of buffer pool\n\
             2026-11-26 16:26:57 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'innodb_bufer_pool_size=64M'\n\
             2026-11-26 16:26:57 0 [ERROR] Aborting\n",
        )
        .unwrap();
        assert_eq!(
            log_error(&log, 0).as_deref(),
            Some("/usr/sbin/mariadbd: unknown variable 'innodb_bufer_pool_size=64M'")
        );
        std::fs::write(
            &log,
            "2026-11-26 16:00:00.000 UTC [1] LOG:  starting PostgreSQL 15\n\
             2026-11-26 16:00:00.001 UTC [1] FATAL:  unrecognized configuration parameter \"work_meme\"\n",
        )
        .unwrap();
        assert_eq!(
            log_error(&log, 0).as_deref(),
            Some("unrecognized configuration parameter \"work_meme\"")
        );
        // an earlier start's error before `from` is not this start's
        let from = std::fs::metadata(&log).unwrap().len();
        assert_eq!(log_error(&log, from), None);
        std::fs::write(&log, "2026-11-26 [Note] all well\n").unwrap();
        assert_eq!(log_error(&log, 0), None);
    }

    #[test]
    fn tail_keeps_last_lines_on_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("x.log");
        std::fs::write(&log, "a\nb\n\nc\nd\n").unwrap();
        assert_eq!(log_tail(&log, 2), "c | d");
        assert_eq!(log_tail(&log, 10), "a | b | c | d");
        assert!(log_tail(&dir.path().join("none"), 3).contains("no log"));
    }

    #[test]
    fn child_lifecycle() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("sleep.log");
        let mut p = spawn_server(Command::new("sleep").arg("30"), &log).unwrap();
        assert!(p.alive());
        let id = ProcId::of(p.pid()).unwrap();
        shut_down(&mut p, &[], Signal::SIGTERM, Duration::from_secs(5)).unwrap();
        assert!(!p.alive());
        assert!(!id.alive());
    }

    #[test]
    fn free_port_is_bindable() {
        let p = free_port().unwrap();
        check_port_free(p).unwrap();
        let l = TcpListener::bind(("127.0.0.1", p)).unwrap();
        assert!(check_port_free(p).is_err());
        drop(l);
    }
}
