//! The one timer of an index build. Every measured build goes through [`BuildTimer::time`]:
//! l.x's statements one by one ([`crate::step::create_index::run`]) and the index lab's
//! builds, rebuilds and builds on shards ([`crate::step::create_index::measured_build_timed`]).
//! It runs a build's sessions side by side, each on a connection of its own, and times them
//! from the moment they start to the moment the last one ends, with another session's lock a
//! build waits for shown and bounded (`dbms::lock_watch`) and the DBMS's progress view sampled
//! meanwhile. The lock watcher connects in [`BuildTimer::open`], before the caller opens the
//! build's statistics window: the watcher's own connection and first question stay out of it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::dbms::lock_watch::Watcher;
use crate::dbms::{Conn, Dbms};
use crate::measure::clock;

/// What a build waits for once its sessions are open, right before its statements start
/// (`before`), and signals right after they end, before its checks (`after`): builds on
/// several servers started together, or run back to back.
pub struct Gate<'a> {
    /// Called right before the clock starts.
    pub before: &'a dyn Fn(),
    /// Called right after the statements ended.
    pub after: &'a dyn Fn(),
}

/// What [`BuildTimer::time`] measured.
pub struct Timed {
    /// Each session's outcome, in the order of the sessions; the session whose lock wait the
    /// watcher cancelled fails with an error that says why.
    pub results: Vec<Result<()>>,
    /// True when the watcher cancelled a lock wait.
    pub cancelled: bool,
    /// Wall seconds from the start of the statements to the end of the last.
    pub seconds: f64,
    /// When the statements started.
    pub start: Instant,
    /// When the last one ended.
    pub end: Instant,
    /// The progress view's samples (seconds into the build, what it said).
    pub progress: Vec<(f64, String)>,
}

/// The lock watcher of one or more builds, and the clock they are timed with.
pub struct BuildTimer<'a> {
    target: &'a dyn Dbms,
    watcher: Option<Watcher>,
}

impl<'a> BuildTimer<'a> {
    /// Connect the lock watcher (none where the DBMS cannot be asked about lock waits), before
    /// the build's statistics window opens (see `Watcher::open`).
    pub fn open(target: &'a dyn Dbms) -> Self {
        BuildTimer {
            target,
            watcher: Watcher::open(target),
        }
    }

    /// The id the watcher knows the session on `conn` by (`None`: not watched), asked before
    /// the clock starts.
    pub fn session_id(&self, conn: &mut dyn Conn) -> Option<i64> {
        self.watcher.as_ref().and_then(|w| w.session_id(conn))
    }

    /// Run `sessions` (statements, and the connection they run on) side by side and time
    /// them: `gate.before` right before the clock starts, `gate.after` right after the last
    /// statement ends. The sessions `ids` are watched for lock waits; `what` names the work
    /// in the watcher's lines and errors. `poll`, when given, samples the progress view
    /// until the statements end.
    pub fn time(
        &mut self,
        ids: &[i64],
        what: &str,
        sessions: Vec<(&[String], &mut dyn Conn)>,
        gate: Option<&Gate>,
        poll: Option<Box<dyn Conn>>,
    ) -> Timed {
        if let Some(g) = gate {
            (g.before)();
        }
        let target = self.target;
        let start = clock::now();
        let build = || run_sessions(target, sessions, gate, poll, start);
        let (mut timed, seen) = match self.watcher.as_mut().filter(|_| !ids.is_empty()) {
            Some(w) => w.watch(ids, what, build),
            None => (build(), None),
        };
        if let Some(seen) = seen {
            // The session the watcher cancelled failed with the DBMS's "cancelled": say why.
            for r in timed.results.iter_mut().filter(|r| r.is_err()) {
                *r = Err(seen.error(what));
            }
            timed.cancelled = true;
        }
        timed
    }
}

/// The sessions on threads of their own and the progress poller beside them, from `start`.
fn run_sessions(
    target: &dyn Dbms,
    sessions: Vec<(&[String], &mut dyn Conn)>,
    gate: Option<&Gate>,
    poll: Option<Box<dyn Conn>>,
    start: Instant,
) -> Timed {
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let poller = s.spawn(|| poll_progress(target, poll, &done, start));
        let running: Vec<_> = sessions
            .into_iter()
            .map(|(stmts, c)| {
                s.spawn(move || -> Result<()> {
                    for sql in stmts {
                        c.execute(sql)?;
                    }
                    Ok(())
                })
            })
            .collect();
        let results: Vec<Result<()>> = running
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("build session panicked")))
            })
            .collect();
        // The sessions are done: the build's time does not include the poller's last sleep.
        let end = clock::now();
        if let Some(g) = gate {
            (g.after)();
        }
        done.store(true, Ordering::SeqCst);
        let progress = poller.join().unwrap_or_default();
        Timed {
            results,
            cancelled: false,
            seconds: end.duration_since(start).as_secs_f64(),
            start,
            end,
            progress,
        }
    })
}

/// Sample the DBMS's progress view on `conn` until `done`: every 0.2 s for the first 5 s,
/// then once a second.
fn poll_progress(
    target: &dyn Dbms,
    conn: Option<Box<dyn Conn>>,
    done: &AtomicBool,
    start: Instant,
) -> Vec<(f64, String)> {
    let mut out = Vec::new();
    let Some(mut c) = conn else {
        return out;
    };
    let mut next = start;
    while !done.load(Ordering::SeqCst) {
        if clock::now() >= next {
            match target.build_progress(c.as_mut()) {
                Ok(Some(sample)) => out.push((clock::since(start).as_secs_f64(), sample)),
                Ok(None) | Err(_) if out.is_empty() => return out,
                _ => {}
            }
            // Every 0.2 s for the first 5 s (most builds are short: a progress timeline of
            // them needs several samples), then every second.
            next += if clock::since(start) < Duration::from_secs(5) {
                Duration::from_millis(200)
            } else {
                Duration::from_secs(1)
            };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    out
}
