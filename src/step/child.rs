//! Another ixbench command run as a child process (`ab`'s runs, `pattern cost`'s points): a
//! command composes others this way instead of calling into them, so each run is exactly what
//! the user would get from the same command line, in its own process and results directory.

use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};

/// Run `ixbench ARGS` (this program) to completion with the given output. A stop request to
/// this process (Ctrl-C reaches the child too; SIGTERM or SIGHUP sent to this process alone
/// does not) is passed on once as SIGINT, so the child saves what it finished and stops its
/// server.
pub fn run_ixbench(
    args: &[String],
    stdout: Stdio,
    stderr: Stdio,
    interrupt: &AtomicBool,
) -> Result<ExitStatus> {
    let exe = std::env::current_exe().context("finding the ixbench program")?;
    run_program(&exe, args, stdout, stderr, interrupt)
}

/// [`run_ixbench`] with the program given (ab's sides may name another build).
pub fn run_program(
    exe: &Path,
    args: &[String],
    stdout: Stdio,
    stderr: Stdio,
    interrupt: &AtomicBool,
) -> Result<ExitStatus> {
    let mut child = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .with_context(|| format!("running {}", exe.display()))?;
    let mut passed_on = false;
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(st);
        }
        if interrupt.load(Ordering::SeqCst) && !passed_on {
            passed_on = true;
            // Our own child's pid, which we have not reaped: it cannot name another process.
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
