//! Stopping ixbench short of SIGKILL without losing the run.
//!
//! [`install`] turns SIGINT (Ctrl-C), SIGTERM and SIGHUP into a stop request:
//!
//! 1. the first sets the interrupt flag every worker checks between operations; a statement
//!    still running [`GRACE`] later (an index build, a statement waiting for a lock) is
//!    cancelled; the run then checks and saves what it finished and stops its server;
//! 2. the second cancels every statement in flight at once and skips the remaining checks
//!    ([`hurried`]), but still saves the results and stops the server;
//! 3. the third asks the throwaway servers to shut down and exits at once.
//!
//! Statements are cancelled through the cancellers each connection registers
//! ([`register_canceller`]): PostgreSQL's cancel request, MySQL's `KILL QUERY` from a new
//! connection. The exit status of a stopped command is 128 + the first signal's number
//! ([`exit_code`]).

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// How long after the first stop request statements still running are cancelled.
pub const GRACE: Duration = Duration::from_secs(3);

/// The signal that stopped the command (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Set by the second stop request: cancel now and skip the remaining checks.
static HURRY: AtomicBool = AtomicBool::new(false);

type Canceller = Arc<dyn Fn() + Send + Sync>;

static CANCELLERS: Mutex<Vec<(u64, Canceller)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// Throwaway servers of this process: (pid, shutdown signal), for the third stop request.
static SERVERS: Mutex<Vec<(u32, Signal)>> = Mutex::new(Vec::new());

/// Handle SIGINT, SIGTERM and SIGHUP as described in the module documentation, setting
/// `interrupt` on the first. Fails only if the handlers cannot be installed.
pub fn install(interrupt: Arc<AtomicBool>) -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("ixbench-signals".into())
        .spawn(move || {
            let mut count = 0;
            for sig in signals.forever() {
                count += 1;
                match count {
                    1 => {
                        SIGNAL.store(sig, Ordering::SeqCst);
                        interrupt.store(true, Ordering::SeqCst);
                        note(&format!(
                            "ixbench: {}: stopping; statements still running in {} s are cancelled (again: cancel now and skip the checks; a third time: exit at once)",
                            name(sig),
                            GRACE.as_secs()
                        ));
                        std::thread::spawn(|| {
                            std::thread::sleep(GRACE);
                            if !HURRY.load(Ordering::SeqCst) {
                                cancel_all();
                            }
                        });
                    }
                    2 => {
                        HURRY.store(true, Ordering::SeqCst);
                        note(&format!(
                            "ixbench: {}: cancelling statements now, skipping checks (again: exit at once)",
                            name(sig)
                        ));
                        std::thread::spawn(cancel_all);
                    }
                    _ => {
                        note(&format!("ixbench: {}: exiting now", name(sig)));
                        stop_servers_now();
                        std::process::exit(exit_code().into());
                    }
                }
            }
        })?;
    Ok(())
}

/// Whether a second stop request asked to cancel at once and skip the remaining checks.
pub fn hurried() -> bool {
    HURRY.load(Ordering::SeqCst)
}

/// The signal that stopped this command, if any.
pub fn signal() -> Option<i32> {
    Some(SIGNAL.load(Ordering::SeqCst)).filter(|&s| s != 0)
}

/// The exit status of a stopped command: 128 + the signal (130 for Ctrl-C, 143 for SIGTERM,
/// 129 for SIGHUP); 130 when stopped otherwise.
pub fn exit_code() -> u8 {
    signal()
        .and_then(|s| u8::try_from(128 + s).ok())
        .unwrap_or(130)
}

fn name(sig: i32) -> &'static str {
    match sig {
        SIGINT => "interrupt (SIGINT)",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

/// Print to stderr, ignoring errors (after SIGHUP the terminal may be gone).
fn note(line: &str) {
    use std::io::Write;
    // Above the status line on a terminal, not through it.
    crate::progress::suspend(|| {
        let _ = writeln!(std::io::stderr(), "{line}");
    });
}

/// Removes its canceller when dropped (the connection is closed).
#[derive(Debug)]
pub struct CancelGuard(u64);

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if let Ok(mut v) = CANCELLERS.lock() {
            v.retain(|(id, _)| *id != self.0);
        }
    }
}

/// Register how to cancel the statement a connection is running (a no-op when it runs none).
/// Keep the guard as long as the connection.
pub fn register_canceller(cancel: impl Fn() + Send + Sync + 'static) -> CancelGuard {
    let id = NEXT_ID.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut v) = CANCELLERS.lock() {
        v.push((id, Arc::new(cancel)));
    }
    CancelGuard(id)
}

/// Cancel the statement every registered connection is running, in parallel; returns when all
/// cancel requests were sent (each is bounded by its driver's connect timeout).
pub fn cancel_all() {
    let all: Vec<Canceller> = match CANCELLERS.lock() {
        Ok(v) => v.iter().map(|(_, c)| c.clone()).collect(),
        Err(_) => return,
    };
    let threads: Vec<_> = all
        .into_iter()
        .map(|c| std::thread::spawn(move || c()))
        .collect();
    for t in threads {
        let _ = t.join();
    }
}

/// Record a throwaway server's main process, so a third stop request can ask it to shut down
/// before exiting.
pub fn register_server(pid: u32, stop_signal: Signal) {
    if let Ok(mut v) = SERVERS.lock() {
        v.push((pid, stop_signal));
    }
}

/// Forget a server (it was stopped).
pub fn unregister_server(pid: u32) {
    if let Ok(mut v) = SERVERS.lock() {
        v.retain(|(p, _)| *p != pid);
    }
}

fn stop_servers_now() {
    let Ok(v) = SERVERS.lock() else { return };
    for &(pid, sig) in v.iter() {
        if let Ok(p) = i32::try_from(pid) {
            let _ = kill(Pid::from_raw(p), sig);
        }
    }
}
