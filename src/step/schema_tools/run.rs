//! Running a method's program: started in its own process group with the password in a memory
//! file it inherits, its output read line by line into the log (password masked) and into
//! phases, stopped (SIGTERM, then SIGKILL) when ixbench asks, reaped with its CPU time, and
//! cleaned up after ([`super::undo`]); the outcome is one line.

use std::io::{BufRead, Write};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, FdFlag};
use nix::sys::prctl;
use nix::sys::signal::{killpg, Signal};
use nix::sys::time::{TimeVal, TimeValLike};
use nix::sys::wait::WaitPidFlag;
use nix::unistd::Pid;

use super::{lock, Launch, MethodRunner, State};
use crate::dbms::ddl::tools::{self, EngineTools, Method, ToolObjects};
use crate::dbms::Conn;
use crate::deadline::{Deadline, Since};
use crate::measure::clock;

/// How long a tool has to exit after SIGTERM before it gets SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(5);
/// How long the output readers may go on after the program ended (a grandchild that keeps
/// the pipes open is not waited for).
const READER_WAIT: Duration = Duration::from_secs(2);
/// Lines of a program's last burst on stderr kept for its last message.
const BURST_LINES: usize = 3;

/// The program's log, shared by its output readers.
type Log = Arc<Mutex<std::io::BufWriter<std::fs::File>>>;

/// A memory-only file holding `text` (close-on-exec; see its use in [`MethodRunner::spawn`]),
/// for a program that reads a password from a file it is given by name.
fn secret_fd(text: &str) -> Result<std::fs::File> {
    use nix::sys::memfd::{memfd_create, MFdFlags};
    let fd = memfd_create("ixbench-secret", MFdFlags::MFD_CLOEXEC)
        .context("cannot create a memory file for the tool's password")?;
    let mut f = std::fs::File::from(fd);
    f.write_all(text.as_bytes())?;
    Ok(f)
}

/// The name of a signal (`SIGTERM`), or its number when it has none (a real-time signal).
fn signal_name(sig: i32) -> String {
    match Signal::try_from(sig) {
        Ok(s) => s.as_str().into(),
        Err(_) => format!("signal {sig}"),
    }
}

/// A program started: its process, when, its log, and the memory file with the password it
/// inherited (held until it has ended).
struct Started {
    child: std::process::Child,
    pid: Pid,
    t0: Instant,
    log: Log,
    _secret: Option<std::fs::File>,
}

/// How a program ended.
struct Reaped {
    /// `exit N`, `killed by SIGNAL`.
    exit: String,
    /// It exited 0.
    ok: bool,
    /// ixbench stopped it.
    stopped: bool,
    /// Its user + system CPU, microseconds.
    cpu_us: u64,
}

impl Reaped {
    /// From the wait status `wait4` gave (read by std's `ExitStatus`, which, unlike nix's
    /// `WaitStatus`, also takes a real-time signal's number) and the program's CPU time.
    fn new(status: i32, cpu_us: u64, stopped: bool) -> Reaped {
        use std::os::unix::process::ExitStatusExt;
        let st = std::process::ExitStatus::from_raw(status);
        let (exit, ok) = match (st.code(), st.signal()) {
            (Some(c), _) => (format!("exit {c}"), c == 0),
            (None, Some(sig)) => (format!("killed by {}", signal_name(sig)), false),
            (None, None) => (format!("wait status {status}"), false),
        };
        Reaped {
            exit,
            ok,
            stopped,
            cpu_us,
        }
    }
}

/// `wait4` without blocking: how the program ended and its user + system CPU in
/// microseconds (with that of the children it waited for), `None` while it runs. nix has
/// `waitpid` but no `wait4`, and only `wait4` gives one child's resource usage (getrusage's
/// RUSAGE_CHILDREN sums every child ixbench reaped), so this one call stays libc.
fn try_wait4(pid: Pid) -> nix::Result<Option<(i32, u64)>> {
    let mut status: libc::c_int = 0;
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: wait4 on our own child's pid with valid pointers.
    let r = unsafe {
        libc::wait4(
            pid.as_raw(),
            &mut status,
            WaitPidFlag::WNOHANG.bits(),
            usage.as_mut_ptr(),
        )
    };
    if Errno::result(r)? == 0 {
        return Ok(None);
    }
    // SAFETY: wait4 filled it (and a zeroed rusage is a valid one anyway).
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| TimeVal::from(t).num_microseconds().max(0) as u64;
    Ok(Some((status, tv(usage.ru_utime) + tv(usage.ru_stime))))
}

/// What one output reader needs, moved into its thread.
struct Reader {
    tag: &'static str,
    t0: Instant,
    state: Arc<Mutex<State>>,
    log: Log,
    method: Method,
    /// The target's methods (they read the program's lines).
    tools: Option<&'static dyn EngineTools>,
    secret: Option<String>,
}

impl Reader {
    /// Read `stream` to its end, line by line (a `\r` ends a progress line too).
    fn read(self, stream: Box<dyn std::io::Read + Send>) {
        let mut r = std::io::BufReader::new(stream);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match r.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let raw = String::from_utf8_lossy(&buf);
            for piece in raw.split('\r') {
                let mut line = piece.trim_end_matches('\n').to_string();
                if let Some(s) = &self.secret {
                    line = line.replace(s.as_str(), "***");
                }
                if !line.trim().is_empty() {
                    self.line(&line);
                }
            }
        }
    }

    /// One line (password masked): into the log, and what it says into the state (a phase,
    /// pg_repack's refusal, the last message).
    fn line(&self, line: &str) {
        let now = clock::now();
        let _ = writeln!(
            lock(&self.log),
            "{:9.3} {} {line}",
            now.saturating_duration_since(self.t0).as_secs_f64(),
            self.tag
        );
        let said = self
            .tools
            .map(|t| t.read_line(self.method, line))
            .unwrap_or_default();
        if let Some(p) = said.phase {
            MethodRunner::set_phase(&self.state, p, now);
        }
        let mut st = lock(&self.state);
        if self.method == Method::External {
            let short: String = line.trim().chars().take(80).collect();
            st.current = Some(format!("command: {short}"));
        }
        if let Some(r) = said.refusal {
            st.refusal.get_or_insert(r);
        }
        if !crate::dbms::registry::is_tool_progress_line(line) {
            let keep = tools::without_timestamp(line).to_string();
            if self.tag == "err" {
                st.last_err.push((now, keep));
                if st.last_err.len() > BURST_LINES {
                    st.last_err.remove(0);
                }
            } else {
                st.last_out = Some(keep);
            }
        }
    }
}

impl MethodRunner<'_> {
    /// Run the program once: start it, read its output, stop it when asked, reap it, clean up
    /// after it. The error is one line: how it ended, its last message, what was dropped or
    /// left.
    pub(super) fn run_program(&self, launch: &Launch, conn: &mut dyn Conn) -> Result<()> {
        let before = self.before_run(conn)?;
        let mut started = self.spawn(launch)?;
        Self::set_phase(
            &self.state,
            match self.method {
                Method::External => "command started".into(),
                _ => "started".into(),
            },
            started.t0,
        );
        let readers = self.read_output(&mut started);
        let reaped = self.reap(started.pid, launch)?;
        let deadline = Deadline::after(READER_WAIT);
        for rx in readers {
            let left = deadline.remaining();
            let _ = rx.recv_timeout(left);
        }
        let _ = lock(&started.log).flush();
        self.after_run(conn, &before, &reaped)
    }

    /// Start the program in its own process group, the password's memory file inherited,
    /// its output piped.
    fn spawn(&self, launch: &Launch) -> Result<Started> {
        // The option file with the password lives in memory only: a memfd the program
        // inherits and reads as /proc/self/fd/N, so no file holds the password, even when
        // ixbench is killed while the program runs (a file in the results directory stayed).
        let secret = match &launch.secret_file {
            Some((path, text)) => Some((path.display().to_string(), secret_fd(text)?)),
            None => None,
        };
        let args: Vec<String> = match &secret {
            Some((path, fd)) => {
                let inherited = format!("/proc/self/fd/{}", fd.as_raw_fd());
                launch
                    .args
                    .iter()
                    .map(|a| a.replace(path.as_str(), &inherited))
                    .collect()
            }
            None => launch.args.clone(),
        };
        let log = std::fs::File::create(&launch.log_path)
            .with_context(|| format!("cannot write {}", launch.log_path.display()))?;
        let log = Arc::new(Mutex::new(std::io::BufWriter::new(log)));
        let mut cmd = std::process::Command::new(&launch.program);
        cmd.args(&args)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        {
            use std::os::unix::process::CommandExt;
            // Its own process group: a Ctrl-C at the terminal reaches ixbench only, which
            // stops the program and cleans up after it; and the group is stopped whole.
            cmd.process_group(0);
            let keep = secret.as_ref().map(|(_, fd)| fd.as_raw_fd());
            // SAFETY: prctl and fcntl are async-signal-safe; the closure touches no memory of
            // ours but a copied integer, the fd of the memfd held open until the child ended.
            unsafe {
                cmd.pre_exec(move || {
                    // If ixbench dies, the program is told to stop too.
                    let _ = prctl::set_pdeathsig(Signal::SIGTERM);
                    // The secret's memfd (close-on-exec for every other child) stays open in
                    // this one.
                    if let Some(fd) = keep {
                        let fd = BorrowedFd::borrow_raw(fd);
                        let _ = fcntl(fd, FcntlArg::F_SETFD(FdFlag::empty()));
                    }
                    Ok(())
                });
            }
        }
        let t0 = clock::now();
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {}", launch.program.display()))?;
        Ok(Started {
            pid: Pid::from_raw(child.id() as i32),
            child,
            t0,
            log,
            _secret: secret.map(|(_, fd)| fd),
        })
    }

    /// A thread per output stream reading it to its end; each says on its channel when done.
    fn read_output(&self, started: &mut Started) -> Vec<Receiver<()>> {
        let streams = [
            (
                "out",
                started
                    .child
                    .stdout
                    .take()
                    .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            ),
            (
                "err",
                started
                    .child
                    .stderr
                    .take()
                    .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            ),
        ];
        let mut readers = Vec::new();
        for (tag, stream) in streams {
            let Some(stream) = stream else { continue };
            let reader = Reader {
                tag,
                t0: started.t0,
                state: Arc::clone(&self.state),
                log: Arc::clone(&started.log),
                method: self.method,
                tools: self.tools,
                secret: self.secret.clone(),
            };
            let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
            std::thread::spawn(move || {
                reader.read(stream);
                let _ = done_tx.send(());
            });
            readers.push(done_rx);
        }
        readers
    }

    /// Wait for the program to end, stopping its group when asked (SIGTERM, SIGKILL after
    /// [`TERM_GRACE`] or when hurried).
    fn reap(&self, pid: Pid, launch: &Launch) -> Result<Reaped> {
        let mut termed: Option<Since> = None;
        let mut killed = false;
        let (status, cpu_us) = loop {
            match try_wait4(pid) {
                Ok(Some(ended)) => break ended,
                Ok(None) => {}
                Err(Errno::EINTR) => continue,
                Err(e) => bail!("waiting for {}: {e}", launch.program.display()),
            }
            let stop = self.cancel.load(Ordering::SeqCst);
            if stop && termed.is_none() {
                termed = Some(Since::start());
                let _ = killpg(pid, Signal::SIGTERM);
            }
            if let Some(t) = termed {
                if !killed && (t.so_far() >= TERM_GRACE || crate::stop::hurried()) {
                    killed = true;
                    let _ = killpg(pid, Signal::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        // Whatever the program left running in its group goes too (the group may be empty:
        // ESRCH is fine).
        if termed.is_some() {
            let _ = killpg(pid, Signal::SIGKILL);
        }
        Ok(Reaped::new(status, cpu_us, termed.is_some()))
    }

    /// The program has ended: record how, drop what it left, and say in one line what went
    /// wrong, if anything.
    fn after_run(&self, conn: &mut dyn Conn, before: &ToolObjects, r: &Reaped) -> Result<()> {
        let ended = clock::now();
        let phase_then = {
            let mut st = lock(&self.state);
            st.exit_status = Some(r.exit.clone());
            st.tool_cpu_us = Some(st.tool_cpu_us.unwrap_or(0) + r.cpu_us);
            st.current.clone()
        };
        // A program stopped by ixbench or that failed: drop what it left. One that
        // succeeded: drop what it left anyway (e.g. --no-drop-old-table), and say so.
        let (cleaned, left) = self.clean_up(conn, before);
        {
            let mut st = lock(&self.state);
            st.cleaned.extend(cleaned.iter().cloned());
            st.left.extend(left.iter().cloned());
        }
        Self::set_phase(
            &self.state,
            if r.ok && !r.stopped {
                "ended".into()
            } else {
                format!("ended ({})", r.exit)
            },
            ended,
        );
        let mut tail = String::new();
        if !cleaned.is_empty() {
            tail.push_str(&format!(
                "; ixbench dropped what it left: {}",
                cleaned.join(", ")
            ));
        }
        if !left.is_empty() {
            tail.push_str(&format!(
                "; LEFT ON THE SERVER (drop it yourself): {}",
                left.join(", ")
            ));
        }
        let during = phase_then
            .filter(|p| p != "started")
            .map(|p| format!(" while {p}"))
            .unwrap_or_default();
        self.verdict(r, &during, &tail, !left.is_empty())
    }

    /// The one-line error of a program that was stopped, failed, declined the table or left
    /// objects behind; `Ok` otherwise.
    fn verdict(&self, r: &Reaped, during: &str, tail: &str, left: bool) -> Result<()> {
        let exit = &r.exit;
        let name = match self.method {
            Method::External => "the --ddl-command".to_string(),
            m => self
                .tools
                .and_then(|t| t.tool(m))
                .map(|t| t.program.to_string())
                .unwrap_or_default(),
        };
        let (refusal, message) = {
            let st = lock(&self.state);
            let message = self
                .last_message(&st)
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
            (st.refusal.clone(), message)
        };
        if r.stopped {
            bail!("ixbench stopped {name}{during} ({exit}){tail}");
        }
        if !r.ok {
            bail!("{name} failed ({exit}){during}{message}{tail}");
        }
        if let Some(refusal) = refusal {
            bail!("{name} declined the table (exit 0): {refusal}{tail}");
        }
        if left {
            bail!("{name} succeeded but left objects ixbench could not drop{tail}");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(Signal::SIGKILL as i32), "SIGKILL");
        assert_eq!(signal_name(Signal::SIGSEGV as i32), "SIGSEGV");
        assert_eq!(signal_name(64), "signal 64");
    }

    #[test]
    fn how_it_ended() {
        // Raw wait statuses: exit code in the second byte, a terminating signal in the first.
        let r = Reaped::new(0, 7, false);
        assert_eq!((r.exit.as_str(), r.ok, r.cpu_us), ("exit 0", true, 7));
        let r = Reaped::new(3 << 8, 0, false);
        assert_eq!((r.exit.as_str(), r.ok), ("exit 3", false));
        let r = Reaped::new(Signal::SIGKILL as i32, 0, true);
        assert_eq!(
            (r.exit.as_str(), r.ok, r.stopped),
            ("killed by SIGKILL", false, true)
        );
        let r = Reaped::new(64, 0, false);
        assert_eq!(r.exit, "killed by signal 64");
    }
}
