//! Runs a step's workers and reports every interval.
//!
//! Each worker is a thread with its own connection and [`Meter`]. This (the calling) thread is
//! the reporter: at each interval boundary it swaps every worker's current [`Part`] (counts and
//! histograms of the same operations, see [`super::meter`]) for an empty one, merges them and
//! passes the [`IntervalLine`] to a sink that prints it and appends it to `intervals.ndjson` at
//! once. The step's totals and histograms are the sums of the interval parts, so interval sums
//! equal the step totals by construction, including the first and the last partial interval.
//! Memory stays flat however long the step: nothing is kept per operation.
//!
//! Backlog: for each open-loop worker the reporter keeps a copy of its schedule (see
//! [`super::meter::Gauge`]) and counts, at each cut, the intended starts that were due and
//! not yet taken: the line's `backlog` (sysbench's queue). It grows while the database holds
//! the load up and falls while the load catches up.
//!
//! Stalls: the reporter knows when the last operation completed. A line whose end is at least
//! [`STALL_MARK`] (or the stall timeout, if shorter) after the last completion is marked
//! stalled; when nothing completed for the stall timeout, the step fails: the workers are told
//! to stop, and those still blocked in a statement a second later get their sockets shut down
//! (so a server that does not answer cannot hold the run forever).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use nix::sys::socket::{getsockopt, shutdown, sockopt, Shutdown};

use super::interval::IntervalLine;
/// What the reporter hands a sink beside each line: their home is [`super::interval`], with the
/// line.
use super::interval::{add_error_codes, IntervalDetail};
use super::meter::{lock, Gauge, KindHists, Meter, Part, Shared, Totals};
use super::until::Until;

/// A line is marked stalled when no operation completed for this long (or for the stall
/// timeout, if shorter) at its end.
pub const STALL_MARK: Duration = Duration::from_secs(1);

/// After the stall timeout, how long workers get to stop by themselves before the reporter
/// shuts down the process's sockets under them.
const UNBLOCK_AFTER: Duration = Duration::from_secs(1);

/// After the sockets were shut down, how long the reporter waits for the workers before it
/// gives up on the process (a worker blocked somewhere a socket shutdown does not reach).
const GIVE_UP_AFTER: Duration = Duration::from_secs(30);

/// The work of one worker thread: it records into the meter and checks
/// [`Signals::should_stop`] between operations.
pub type WorkerBody<'a> = Box<dyn FnOnce(&Meter, &Signals) -> Result<()> + Send + 'a>;

/// A worker: a name (for errors) and the body that runs on its own thread.
pub struct Worker<'a> {
    /// `insert-1`, `delete-2`, `query-1`...
    pub name: String,
    /// The work.
    pub body: WorkerBody<'a>,
}

/// Flags a worker checks between operations.
pub struct Signals<'a> {
    /// Set on Ctrl-C.
    pub interrupt: &'a AtomicBool,
    /// Set when another worker of the step failed, or the step stalled.
    pub abort: &'a AtomicBool,
}

impl Signals<'_> {
    /// True when the worker should stop now.
    #[inline]
    pub fn should_stop(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed)
    }

    /// Sleep until `t`, waking at least every 100 ms to notice a stop. Returns false if asked
    /// to stop.
    pub fn sleep_until(&self, t: Instant) -> bool {
        loop {
            if self.should_stop() {
                return false;
            }
            let now = Instant::now();
            if now >= t {
                return true;
            }
            std::thread::sleep((t - now).min(Duration::from_millis(100)));
        }
    }
}

/// How the reporter reports and when it gives up.
#[derive(Debug, Clone, Copy)]
pub struct ReportOptions {
    /// Time between two lines.
    pub interval: Duration,
    /// Fail the step when no operation completed for this long.
    pub stall_timeout: Duration,
}

/// What the workers of a step did, over the whole step.
#[derive(Debug, Default)]
pub struct Measured {
    /// Wall seconds from start until the last interval's cut (the sum of the lines' `i_sec`).
    pub seconds: f64,
    /// Counts (the sums of the interval lines).
    pub totals: Totals,
    /// Merged histograms per kind (`None` where no operation of that kind ran).
    pub hists: [Option<KindHists>; 3],
    /// Per full interval: (inserts/s, deletes/s, queries/s).
    pub interval_rates: Vec<[f64; 3]>,
    /// Interval lines written.
    pub lines: u64,
    /// Lines marked stalled.
    pub stalled_lines: u64,
    /// The longest time in which no operation of the step completed, seconds (from the step
    /// start to the first completion, between completions, or to the end). Gaps shorter than
    /// an interval are seen only at the interval cuts.
    pub longest_stall_secs: f64,
    /// The step hit the stall timeout.
    pub stall_timed_out: bool,
    /// Errors of workers that failed, and the reporter's own (stall, sink): (who, error).
    pub errors: Vec<(String, anyhow::Error)>,
    /// Merged histograms of whole transactions (`None` where no transaction ran).
    pub txn_hist: Option<KindHists>,
    /// Errors of transaction attempts by code, with counts.
    pub error_codes: Vec<(String, u64)>,
    /// Of those, the ones that were not run again, by code.
    pub fail_codes: Vec<(String, u64)>,
    /// The largest backlog at a cut (intended starts due and not taken), `None` when no worker
    /// paced its operations (closed loop).
    pub peak_backlog: Option<u64>,
}

/// Run `workers` to completion, calling `sink` with each interval's line as soon as it is
/// known. A worker error stops the other workers (the step fails); `interrupt` (Ctrl-C) stops
/// all of them; so does a stall of `opts.stall_timeout`. The sink's own errors (cannot write
/// results) stop the step too.
pub fn run_workers(
    step: &str,
    opts: ReportOptions,
    interrupt: &AtomicBool,
    workers: Vec<Worker<'_>>,
    sink: &mut dyn FnMut(&IntervalLine) -> Result<()>,
) -> Measured {
    run_workers_detailed(step, opts, interrupt, workers, &mut |l, _| sink(l))
}

/// Where a step's clock starts and when its workers stop, for [`run_workers_with`].
#[derive(Default, Clone, Copy)]
pub struct Clock<'a> {
    /// The step's start (its intervals are cut from it); `None`: when the workers are
    /// spawned. A caller whose other threads follow the same clock (a DDL started after a
    /// baseline) gives it.
    pub start: Option<Instant>,
    /// The end the workers stop at (see [`Until`]): once it is known, the interval that
    /// reaches it waits (up to one more interval) for the operations in flight at the end to
    /// complete, so they count in the last interval instead of a sliver after it.
    pub until: Option<&'a Until>,
}

/// [`run_workers`], passing the sink each interval's [`IntervalDetail`] too (transaction
/// workloads: the interval's transaction histograms and errors).
pub fn run_workers_detailed(
    step: &str,
    opts: ReportOptions,
    interrupt: &AtomicBool,
    workers: Vec<Worker<'_>>,
    sink: &mut dyn FnMut(&IntervalLine, &IntervalDetail) -> Result<()>,
) -> Measured {
    run_workers_with(step, opts, interrupt, workers, Clock::default(), sink)
}

/// [`run_workers_detailed`] on a given [`Clock`].
pub fn run_workers_with(
    step: &str,
    opts: ReportOptions,
    interrupt: &AtomicBool,
    workers: Vec<Worker<'_>>,
    clock: Clock<'_>,
    sink: &mut dyn FnMut(&IntervalLine, &IntervalDetail) -> Result<()>,
) -> Measured {
    let n = workers.len();
    let interval = opts.interval;
    let mark = STALL_MARK.min(opts.stall_timeout);
    let abort = AtomicBool::new(false);
    let finished = AtomicUsize::new(0);
    let parts: Vec<Shared> = (0..n).map(|_| Arc::default()).collect();
    let gauges: Vec<Arc<Gauge>> = (0..n).map(|_| Arc::default()).collect();
    let mut spares: Vec<Part> = (0..n).map(|_| Part::default()).collect();
    let start = clock.start.unwrap_or_else(Instant::now);
    let mut out = Measured::default();

    // The reporter (this thread) waits parked; a worker that finishes wakes it at once.
    let reporter = std::thread::current();
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(n);
        for ((w, p), g) in workers.into_iter().zip(&parts).zip(&gauges) {
            let meter = Meter::new(start, p.clone(), g.clone());
            let (abort, finished, reporter) = (&abort, &finished, &reporter);
            let name = w.name;
            let body = w.body;
            handles.push((
                name.clone(),
                s.spawn(move || {
                    let sig = Signals { interrupt, abort };
                    let r = body(&meter, &sig);
                    if r.is_err() {
                        abort.store(true, Ordering::Relaxed);
                    }
                    finished.fetch_add(1, Ordering::Release);
                    reporter.unpark();
                    r
                }),
            ));
        }

        let mut cum = Totals::default();
        let mut prev_cut = start;
        let mut last_done: Option<Instant> = None;
        let mut timed_out: Option<Instant> = None;
        let mut unblocked: Option<Instant> = None;
        let mut sink_failed = false;
        // The interval's histograms merged over the workers, for the live view only.
        let mut live_hists: Option<[KindHists; 3]> = None;
        let mut k: u64 = 1;
        loop {
            let boundary = start + interval.mul_f64(k as f64);
            let all_finished = || finished.load(Ordering::Acquire) == n;
            // The interval that reaches the workers' end waits for what is in flight at it.
            // The interval that reaches the workers' end is a whole one, and waits (up to one
            // more interval) for what is in flight at the end.
            let all_done = match clock.until.filter(|u| !u.stopped()).and_then(|u| u.end()) {
                Some(end) if boundary >= end => {
                    wait_for(boundary, || interrupt.load(Ordering::Relaxed));
                    wait_for(boundary + interval, all_finished)
                }
                _ => wait_for(boundary, all_finished),
            };
            // The cut: every operation that completed before the swap below is in this line.
            let cut = Instant::now();
            let cut_wall = std::time::SystemTime::now();
            for (p, spare) in parts.iter().zip(spares.iter_mut()) {
                std::mem::swap(&mut *lock(p), spare);
            }
            let mut line = Totals::default();
            let mut detail = IntervalDetail {
                cut: Some(cut),
                ..Default::default()
            };
            let mut maxes = [0u64; 3];
            let live = super::live::enabled();
            if live && live_hists.is_none() {
                live_hists = Some(Default::default());
            }
            let mut first: Option<Instant> = None;
            let mut last: Option<Instant> = None;
            for spare in spares.iter_mut() {
                line.add(&spare.totals);
                for (kind, max) in maxes.iter_mut().enumerate() {
                    if spare.totals.ops[kind] + spare.totals.never_started[kind] > 0 {
                        let h = &spare.hists[kind];
                        *max = (*max).max(h.latency.max());
                        out.hists[kind].get_or_insert_with(KindHists::new).add(h);
                        if let Some(lh) = live_hists.as_mut().filter(|_| live) {
                            lh[kind].add(h);
                        }
                    }
                }
                first = match (first, spare.first_done) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                last = last.max(spare.last_done);
                if !spare.txn.latency.is_empty() {
                    detail.txn.add(&spare.txn);
                }
                if !spare.error_codes.is_empty() {
                    add_error_codes(&mut detail.error_codes, &spare.error_codes);
                    add_error_codes(&mut detail.fail_codes, &spare.fail_codes);
                }
                spare.clear();
            }
            for g in &gauges {
                if let Some(b) = g.backlog(cut) {
                    *detail.backlog.get_or_insert(0) += b;
                }
            }
            if let Some(b) = detail.backlog {
                out.peak_backlog = Some(out.peak_backlog.unwrap_or(0).max(b));
            }
            if let Some(f) = first {
                let gap = f.saturating_duration_since(last_done.unwrap_or(start));
                out.longest_stall_secs = out.longest_stall_secs.max(gap.as_secs_f64());
            }
            if last.is_some() {
                last_done = last;
            }
            let stalled_for = cut.saturating_duration_since(last_done.unwrap_or(start));
            out.longest_stall_secs = out.longest_stall_secs.max(stalled_for.as_secs_f64());

            let prev = cum;
            cum.add(&line);
            let t_sec = (cut - start).as_secs_f64();
            let i_sec = (cut - prev_cut).as_secs_f64();
            prev_cut = cut;
            let mut l = IntervalLine::compute(step, k, &prev, &cum, i_sec, t_sec, maxes);
            l.at = cut_wall
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .map(|d| d.as_secs_f64());
            l.backlog = detail.backlog;
            if stalled_for >= mark {
                l.stalled_secs = Some(stalled_for.as_secs_f64());
                detail.stalled_secs = l.stalled_secs;
                out.stalled_lines += 1;
            }
            detail.totals = line;
            // The live view (`--metrics-listen`): once per interval, on this thread.
            if let Some(lh) = live_hists.as_mut().filter(|_| live) {
                super::live::publish(&l, &detail, lh);
                lh.iter_mut().for_each(KindHists::reset);
            }
            if !detail.txn.latency.is_empty() {
                out.txn_hist
                    .get_or_insert_with(KindHists::new)
                    .add(&detail.txn);
            }
            add_error_codes(&mut out.error_codes, &detail.error_codes);
            add_error_codes(&mut out.fail_codes, &detail.fail_codes);
            if !super::interval::is_short(i_sec, interval.as_secs_f64()) {
                out.interval_rates.push([l.i_ips, l.i_dps, l.i_qps]);
            }
            if !sink_failed {
                match sink(&l, &detail) {
                    Ok(()) => {
                        out.lines += 1;
                        crate::progress::interval([l.i_ips, l.i_dps, l.i_qps], l.t_ins, l.t_sec);
                    }
                    Err(e) => {
                        out.errors.push(("reporter".into(), e));
                        abort.store(true, Ordering::Relaxed);
                        sink_failed = true;
                    }
                }
            }
            if all_done {
                out.seconds = t_sec;
                break;
            }
            if timed_out.is_none() && stalled_for >= opts.stall_timeout {
                timed_out = Some(cut);
                out.stall_timed_out = true;
                out.errors.insert(
                    0,
                    (
                        "reporter".into(),
                        anyhow!(
                            "no operation completed for {:.1} s (--stall-timeout {}): the database stopped answering",
                            stalled_for.as_secs_f64(),
                            opts.stall_timeout.as_secs_f64()
                        ),
                    ),
                );
                abort.store(true, Ordering::Relaxed);
            }
            if let Some(t) = timed_out {
                if unblocked.is_none() && cut >= t + UNBLOCK_AFTER {
                    // Workers blocked inside a statement do not see `abort`: close their
                    // connections under them so they return with an error.
                    shutdown_sockets();
                    unblocked = Some(cut);
                }
            }
            if let Some(t) = unblocked {
                if cut >= t + GIVE_UP_AFTER {
                    // Nothing can be joined or returned safely while a worker still runs on
                    // borrowed state: say so on one line and end the process.
                    eprintln!(
                        "ixbench: error: step {step}: no operation completed for {:.0} s and a worker is still blocked after its connections were shut down; exiting (finished steps and intervals are on disk)",
                        stalled_for.as_secs_f64()
                    );
                    std::process::exit(1);
                }
            }
            k += 1;
        }
        for (name, h) in handles {
            match h.join() {
                Ok(Ok(())) => {}
                // After a stall, the workers' errors are consequences of the shutdown.
                Ok(Err(_)) if out.stall_timed_out => {}
                Ok(Err(e)) => out.errors.push((name, e)),
                Err(_) => out.errors.push((name, anyhow!("worker thread panicked"))),
            }
        }
        // Every worker has ended, so the parts are empty: nothing is lost after the last cut.
        for p in &parts {
            let p = lock(p);
            debug_assert!(
                p.totals == Totals::default(),
                "an operation after the last cut"
            );
        }
        out.totals = cum;
    });
    out
}

/// Shut down every connected socket of this process, so that workers blocked reading from a
/// server that does not answer get an error at once. ixbench's only connections are its
/// database connections (and scrapes of the live view, which can take another), and after a
/// stall timeout the step (and the run) is over. A listening socket (`--metrics-listen`) is
/// left alone: the live view still shows the stall. Returns how many were shut down.
fn shutdown_sockets() -> usize {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return 0;
    };
    let mut n = 0;
    for e in dir.flatten() {
        let Ok(fd) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let is_socket = std::fs::read_link(e.path())
            .map(|p| p.to_string_lossy().starts_with("socket:"))
            .unwrap_or(false);
        // shutdown(2) changes only the state of the connection: the descriptor stays open and
        // owned by its driver, which then reads EOF and reports an error.
        if is_socket && !is_listening(fd) && shutdown(fd, Shutdown::Both).is_ok() {
            n += 1;
        }
    }
    n
}

/// True when `fd` is a listening socket (SO_ACCEPTCONN).
fn is_listening(fd: i32) -> bool {
    if fd < 0 {
        return false; // no descriptor (BorrowedFd may not hold -1)
    }
    // SAFETY: `fd` is open for the call: read from /proc/self/fd just before, and ixbench
    // closes no socket of its own while a stall is being handled.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    getsockopt(&fd, sockopt::AcceptConn).unwrap_or(false)
}

/// Wait until `deadline` or until `done()` is true; returns `done()`. The thread is parked: a
/// finishing worker unparks it (so it sees `done()` at once), and it looks again at least
/// every 100 ms for what wakes no one (an interrupt). Before, it slept 5 ms at a time: about
/// 200 system calls a second of a step for nothing.
fn wait_for(deadline: Instant, done: impl Fn() -> bool) -> bool {
    loop {
        if done() {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::park_timeout((deadline - now).min(Duration::from_millis(100)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::meter::OpKind;

    fn opts(interval_ms: u64, stall_ms: u64) -> ReportOptions {
        ReportOptions {
            interval: Duration::from_millis(interval_ms),
            stall_timeout: Duration::from_millis(stall_ms),
        }
    }

    /// Workers with bursts and pauses longer than an interval: every line with operations has
    /// its max, none without has one, and the lines add up to the totals.
    #[test]
    fn lines_count_every_operation_once_and_max_goes_with_counts() {
        let interrupt = AtomicBool::new(false);
        let mut lines = Vec::new();
        let workers: Vec<Worker> = (0..3)
            .map(|w| Worker {
                name: format!("w{w}"),
                body: Box::new(move |m: &Meter, sig: &Signals| {
                    let t0 = Instant::now();
                    let mut i = 0u64;
                    while t0.elapsed() < Duration::from_millis(600) && !sig.should_stop() {
                        let s = Instant::now();
                        // Pauses of 130 ms now and then leave whole intervals empty.
                        let pause = if i % 20 == 19 { 130 } else { 1 };
                        std::thread::sleep(Duration::from_millis(pause));
                        m.record(OpKind::Insert, s, s, 10);
                        if w == 0 {
                            m.record(OpKind::Query, s, s, 1);
                        }
                        i += 1;
                    }
                    Ok(())
                }),
            })
            .collect();
        let m = run_workers(
            "t",
            opts(50, 60_000),
            &interrupt,
            workers,
            &mut |l: &IntervalLine| {
                lines.push(l.clone());
                Ok(())
            },
        );
        assert!(m.errors.is_empty());
        let h = m.hists[0].as_ref().unwrap();
        assert_eq!(h.latency.len(), m.totals.ops[0]);
        assert_eq!(m.totals.rows[0], m.totals.ops[0] * 10);
        assert_eq!(lines.last().unwrap().t_ins, m.totals.rows[0]);
        let rows: f64 = lines.iter().map(|l| l.i_ips * l.i_sec).sum();
        assert!((rows - m.totals.rows[0] as f64).abs() < 0.5, "{rows}");
        let secs: f64 = lines.iter().map(|l| l.i_sec).sum();
        assert!((secs - m.seconds).abs() < 1e-6);
        for l in &lines {
            let ins = (l.i_ips * l.i_sec).round() as u64;
            assert_eq!(l.max_i > 0, ins > 0, "{l:?}");
            let q = (l.i_qps * l.i_sec).round() as u64;
            assert_eq!(l.max_q > 0, q > 0, "{l:?}");
            assert_eq!(l.max_d, 0);
        }
        assert_eq!(m.lines, lines.len() as u64);
        assert!(m.longest_stall_secs >= 0.1, "{}", m.longest_stall_secs);
        assert_eq!(m.stalled_lines, 0);
    }

    #[test]
    fn a_failing_worker_stops_the_others() {
        let interrupt = AtomicBool::new(false);
        let workers = vec![
            Worker {
                name: "bad".into(),
                body: Box::new(|_m: &Meter, _s: &Signals| Err(anyhow!("boom"))),
            },
            Worker {
                name: "good".into(),
                body: Box::new(|_m: &Meter, s: &Signals| {
                    let t0 = Instant::now();
                    while !s.should_stop() {
                        assert!(t0.elapsed() < Duration::from_secs(5), "not stopped");
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Ok(())
                }),
            },
        ];
        let m = run_workers(
            "t",
            opts(1000, 60_000),
            &interrupt,
            workers,
            &mut |_| Ok(()),
        );
        assert_eq!(m.errors.len(), 1);
        assert_eq!(m.errors[0].0, "bad");
        assert!(m.seconds < 2.0);
    }

    /// A worker that stops completing operations at 0.1 s (but notices the stop between
    /// them): the lines from 1 s of stall on say STALLED, none before, and at the timeout
    /// (1.5 s) the step fails with the stall error.
    #[test]
    fn a_stall_marks_lines_and_times_out() {
        let interrupt = AtomicBool::new(false);
        let workers = vec![Worker {
            name: "w".into(),
            body: Box::new(|m: &Meter, s: &Signals| {
                let t0 = Instant::now();
                while !s.should_stop() {
                    if t0.elapsed() < Duration::from_millis(100) {
                        let st = Instant::now();
                        m.record(OpKind::Query, st, st, 1);
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(())
            }),
        }];
        let mut lines = Vec::new();
        let m = run_workers(
            "t",
            opts(100, 1_500),
            &interrupt,
            workers,
            &mut |l: &IntervalLine| {
                lines.push(l.clone());
                Ok(())
            },
        );
        assert!(m.stall_timed_out);
        assert!(format!("{:#}", m.errors[0].1).contains("no operation completed"));
        assert!(m.longest_stall_secs >= 1.5);
        assert!(m.seconds < 3.0, "{}", m.seconds);
        for l in &lines {
            // (the worker's thread may start late on a busy machine: a margin)
            if l.t_sec >= 1.4 {
                assert!(l.stalled_secs.unwrap() >= 1.0, "{l:?}");
            }
            if l.t_sec < 1.05 {
                assert_eq!(l.stalled_secs, None, "{l:?}");
            }
        }
        assert!(lines.iter().filter(|l| l.stalled_secs.is_some()).count() >= 3);
    }

    /// The stall timeout's socket shutdown passes over listening sockets (the live view's)
    /// and takes connected ones.
    #[test]
    fn listening_sockets_are_told_apart() {
        use std::os::fd::AsRawFd;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        assert!(is_listening(l.as_raw_fd()));
        assert!(!is_listening(c.as_raw_fd()));
        assert!(!is_listening(-1));
    }

    /// Transactions: each interval's detail holds its own counts, histogram and errors, and
    /// they add up to the step's totals, merged histogram and errors.
    #[test]
    fn interval_details_add_up_to_the_transaction_totals() {
        use crate::measure::meter::TxnDone;
        let interrupt = AtomicBool::new(false);
        let workers: Vec<Worker> = (0..2)
            .map(|w| Worker {
                name: format!("c{w}"),
                body: Box::new(move |m: &Meter, sig: &Signals| {
                    let t0 = Instant::now();
                    let mut i = 0u64;
                    while t0.elapsed() < Duration::from_millis(350) && !sig.should_stop() {
                        let s = Instant::now();
                        std::thread::sleep(Duration::from_millis(2));
                        if i % 7 == 3 {
                            m.txn_error("40P01", true);
                        }
                        let d = TxnDone {
                            reads: 14,
                            writes: 4,
                            other: 2,
                            rows: 300,
                            inserted: 1,
                            deleted: 1,
                        };
                        m.record_txn(s, s, &d);
                        i += 1;
                    }
                    Ok(())
                }),
            })
            .collect();
        let mut sum = crate::measure::meter::TxnTotals::default();
        let mut hist_count = 0u64;
        let mut errs = Vec::new();
        let m = run_workers_detailed(
            "t",
            opts(50, 60_000),
            &interrupt,
            workers,
            &mut |l: &IntervalLine, d: &IntervalDetail| {
                assert_eq!(d.txn.latency.len(), d.totals.txn.txns, "{l:?}");
                assert_eq!(l.t_ins, 0, "no insert-benchmark counts");
                sum.add(&d.totals.txn);
                hist_count += d.txn.latency.len();
                add_error_codes(&mut errs, &d.error_codes);
                Ok(())
            },
        );
        assert!(m.errors.is_empty());
        let t = m.totals.txn;
        assert!(t.txns > 20, "{t:?}");
        assert_eq!(sum, t);
        assert_eq!(t.statements(), 20 * t.txns);
        assert_eq!(hist_count, t.txns);
        assert_eq!(m.txn_hist.as_ref().unwrap().latency.len(), t.txns);
        assert_eq!(t.errors, t.retries);
        assert_eq!(errs, vec![("40P01".to_string(), t.errors)]);
        assert_eq!(m.error_codes, errs);
        assert!(m.hists.iter().all(|h| h.is_none()));
    }
}
