//! The one measuring loop. Every worker of every command runs its operations through
//! [`drive`]: it is the only place that
//! - paces them: open loop, each operation has an intended start fixed in advance by a
//!   [`Schedule`] (so a stall shows in every operation it delayed), or closed loop (as fast as
//!   the worker can) when there is no rate;
//! - runs one operation through the step's [`Operation`] (an INSERT batch, a DELETE of the
//!   oldest rows, a query, a workload's transaction);
//! - runs it again after a transient error (deadlock, busy, serialization failure), and, on a
//!   target that fails over, when its connection died (a cluster node that left): it connects
//!   again to a surviving node ([`Failover`], counted there) and hands the new connection to
//!   the operation ([`Operation::reconnected`]: its statements, what was in doubt);
//! - records it into the worker's [`Meter`]: latency from the intended start, service time from
//!   the actual start, lag, retries and errors by code;
//! - at its end, records the starts that were due and never began as never started (in the
//!   latency histogram with the time they waited, as wrk2 does).
//!
//! The reporter ([`super::reporter`]) counts each interval's backlog (due starts not yet
//! taken) from a copy of the same schedule ([`super::meter::Gauge`]), so every command's
//! interval lines carry it. Workloads and drivers do not read the clock for a measured figure:
//! they say what they did ([`Done`]), the loop times it.

use std::time::{Duration, Instant};

use anyhow::Result;

use super::failover::Failover;
use super::meter::{Meter, OpKind, TxnDone};
use super::reporter::Signals;
use super::schedule::Schedule;
/// When a loop stops: its home is [`super::until`], below the reporter that reads it too.
use super::until::Until;
use crate::dbms::errcode::error_code;
use crate::dbms::Conn;

/// What one operation did.
#[derive(Debug, Clone, Copy)]
pub enum Done {
    /// An operation of the insert benchmark: its kind and the rows it inserted, deleted or
    /// read.
    Op {
        /// Insert, delete or query.
        kind: OpKind,
        /// Rows moved.
        rows: u64,
    },
    /// A whole transaction of a transaction workload.
    Txn(TxnDone),
}

/// How a worker's retries and errors are counted in its meter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// As retries of one kind of the insert benchmark's operations.
    Op(OpKind),
    /// As errors and retries of transactions, by error code.
    Txn,
}

/// What the operation says before its next slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Go on; the operation is not due before the given instant even if its slot is earlier
    /// (a delete of rows its inserter has not committed yet: waiting for them is not the
    /// delete's latency).
    Go(Option<Instant>),
    /// Nothing left to do: the loop ends.
    Finished,
}

/// What to do after an error that was not transient and that no failover answered.
#[derive(Debug)]
pub enum AfterError {
    /// The worker fails with this error (the step fails).
    Fail(anyhow::Error),
    /// The operation is counted as failed and the loop goes on with the next one.
    Continue,
    /// The loop ends without an error (the operation arranged the stop).
    Stop,
}

/// One kind of operation as a step provides it to [`drive`]: its own connection and state.
/// Only [`Operation::run`], [`Operation::transient`] and [`Operation::counted`] are needed;
/// the rest have defaults for a plain operation.
pub trait Operation {
    /// How retries and errors are counted.
    fn counted(&self) -> Counted;

    /// Before the next operation takes its slot: prepare it (generate its rows, wait for rows
    /// to delete). Runs outside the measured time.
    fn next(&mut self, _sig: &Signals) -> Next {
        Next::Go(None)
    }

    /// After its slot, right before it starts (wait for a partner worker, counted in the
    /// lag); false: stop the loop.
    fn begin(&mut self, _sig: &Signals) -> bool {
        true
    }

    /// Run it once on the current connection.
    fn run(&mut self) -> Result<Done>;

    /// True when the attempt's error is transient (run it again at once).
    fn transient(&mut self, e: &anyhow::Error) -> bool;

    /// Clean up after a failed attempt (roll back an open transaction).
    fn rollback(&mut self) {}

    /// The connection the operation runs on, for the loop to tell whether it died after an
    /// error (with [`Pacing::failover`]); `None`: the operation has none to replace.
    fn conn(&mut self) -> Option<&mut dyn Conn> {
        None
    }

    /// After the loop connected again to a surviving node (its connection died): take `conn`
    /// and prepare on it what the next attempt needs, and record what the lost attempt left
    /// in doubt. The attempt then runs again there; an error: the attempt's error stands.
    fn reconnected(&mut self, _conn: Box<dyn Conn>) -> Result<()> {
        Ok(())
    }

    /// After the operation was recorded, completed at `at`.
    fn done(&mut self, _d: &Done, _at: Instant) {}

    /// After an error that stands (counted already): what the loop does. `tries` is the
    /// attempts that were run again before it.
    fn failed(&mut self, e: anyhow::Error, _tries: u32, _stop: &dyn Fn() -> bool) -> AfterError {
        AfterError::Fail(e)
    }

    /// How many more operations there can be (bounds the backlog recorded as never started
    /// when the loop is cut off at its end).
    fn remaining(&self) -> u64 {
        u64::MAX
    }
}

/// How a loop is paced and bounded.
#[derive(Debug, Default)]
pub struct Pacing<'a> {
    /// The intended starts (open loop), or `None` (closed loop).
    pub schedule: Option<Schedule>,
    /// The end and the stop, when the loop has them (else it runs until its operation has
    /// nothing left or the step is stopped).
    pub until: Option<&'a Until>,
    /// Attempts of one operation run again (after transient errors and failovers) before
    /// its error stands.
    pub max_retries: u32,
    /// Where to connect again when the operation's connection died, on a target that fails
    /// over; `None`: an error the operation does not retry stands.
    pub failover: Option<Failover<'a>>,
    /// A slot taken before the end may fall after it, and the backlog is counted up to when
    /// the loop saw the end had passed (the insert benchmark's writers, whose rows count, not
    /// their time). Otherwise nothing starts at or after the end, and the backlog is counted
    /// up to the end.
    pub slots_past_end: bool,
}

/// How a loop ended.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// It reached its end (time), rather than running out of work or being stopped.
    pub by_end: bool,
    /// Starts due before the end (or the stop) that never began; each is in the latency
    /// histogram with the time from its intended start to the cut.
    pub never_started: u64,
}

/// Sleep until `t`, waking at least every 100 ms to notice `stop`. False when stopped.
fn sleep_until(t: Instant, stop: &dyn Fn() -> bool) -> bool {
    loop {
        if stop() {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(100)));
    }
}

/// Record a completed operation; returns its completion time.
#[inline]
fn record(meter: &Meter, d: &Done, intended: Instant, start: Instant) -> Instant {
    match d {
        Done::Op { kind, rows } => meter.record(*kind, intended, start, *rows),
        Done::Txn(t) => meter.record_txn(intended, start, t),
    }
}

/// Count a failed attempt that runs again.
fn count_retry(meter: &Meter, c: Counted, e: &anyhow::Error) {
    match c {
        Counted::Op(k) => meter.retry(k),
        Counted::Txn => meter.txn_error(&error_code(e), true),
    }
}

/// Count an error that stands (transactions only: the insert benchmark's step fails).
fn count_failure(meter: &Meter, c: Counted, e: &anyhow::Error) {
    if c == Counted::Txn {
        meter.txn_error(&error_code(e), false);
    }
}

/// Run `op` until it has nothing left, the loop reaches its end, or the step is stopped (see
/// the module documentation). An error is the operation's, after its retries and failovers,
/// when [`Operation::failed`] says the worker fails.
pub fn drive<O: Operation>(
    meter: &Meter,
    sig: &Signals,
    pacing: Pacing<'_>,
    op: &mut O,
) -> Result<Ended> {
    let Pacing {
        mut schedule,
        until,
        max_retries,
        failover,
        slots_past_end,
    } = pacing;
    if let Some(s) = &schedule {
        meter.gauge().pace(s);
    }
    let stop = || sig.should_stop() || until.is_some_and(|u| u.stopped());
    let counted = op.counted();
    let mut out = Ended::default();
    let r = run_ops(
        meter,
        &stop,
        &mut schedule,
        (until, slots_past_end),
        (max_retries, failover),
        counted,
        op,
        sig,
        &mut out,
    );
    if let (Some(s), Some(end)) = (schedule.as_mut(), until.and_then(|u| u.end())) {
        // What was due before the end (or the stop) and never began: an open loop that fell
        // behind does not run its backlog after the end, it records it.
        if out.by_end || stop() {
            let cut = if slots_past_end {
                Instant::now()
            } else {
                Instant::now().min(end)
            };
            let due = s.take_due(cut, op.remaining());
            match counted {
                Counted::Op(k) => meter.never_started(k, &due, cut),
                Counted::Txn => meter.txn_never_started(&due, cut),
            }
            out.never_started = due.len();
        }
    }
    meter.gauge().finish(out.never_started);
    r.map(|()| out)
}

/// After an attempt failed and was not transient: when the target fails over and the
/// operation's connection died, connect again to a surviving node and hand the connection to
/// the operation; true when the attempt runs again there.
fn fail_over<O: Operation>(f: Option<Failover<'_>>, op: &mut O, stop: &dyn Fn() -> bool) -> bool {
    let Some(f) = f else { return false };
    let Some(conn) = op.conn() else { return false };
    match f.reconnect(conn, stop) {
        Some(c) => op.reconnected(c).is_ok(),
        None => false,
    }
}

#[allow(clippy::too_many_arguments)]
#[inline]
fn run_ops<O: Operation>(
    meter: &Meter,
    stop: &dyn Fn() -> bool,
    schedule: &mut Option<Schedule>,
    (until, slots_past_end): (Option<&Until>, bool),
    (max_retries, failover): (u32, Option<Failover<'_>>),
    counted: Counted,
    op: &mut O,
    sig: &Signals,
    out: &mut Ended,
) -> Result<()> {
    loop {
        if stop() {
            return Ok(());
        }
        if let Some(end) = until.and_then(|u| u.end()) {
            // The end is the end: nothing starts at or after it (unless slots past it are
            // taken).
            let next_due = schedule
                .as_ref()
                .filter(|_| !slots_past_end)
                .map(|s| s.peek());
            if Instant::now() >= end || next_due.is_some_and(|t| t >= end) {
                out.by_end = true;
                return Ok(());
            }
        }
        let not_before = match op.next(sig) {
            Next::Finished => return Ok(()),
            Next::Go(t) => t,
        };
        let intended = match schedule.as_mut() {
            Some(s) => {
                let t = s.next_intended();
                if !sleep_until(t, stop) {
                    return Ok(());
                }
                meter.gauge().took(1);
                Some(not_before.map_or(t, |a| a.max(t)))
            }
            None => None,
        };
        if !op.begin(sig) {
            return Ok(());
        }
        let start = Instant::now();
        let mut tries = 0u32;
        loop {
            match op.run() {
                Ok(d) => {
                    let at = record(meter, &d, intended.unwrap_or(start), start);
                    op.done(&d, at);
                    break;
                }
                Err(e) => {
                    op.rollback();
                    if tries < max_retries && !stop() && op.transient(&e) {
                        count_retry(meter, counted, &e);
                        tries += 1;
                        continue;
                    }
                    if tries < max_retries && !stop() && fail_over(failover, op, stop) {
                        count_retry(meter, counted, &e);
                        tries += 1;
                        continue;
                    }
                    count_failure(meter, counted, &e);
                    if stop() {
                        // Cancelled by the stop (Ctrl-C, another worker's failure).
                        return Ok(());
                    }
                    match op.failed(e, tries, stop) {
                        AfterError::Fail(e) => return Err(e),
                        AfterError::Continue => break,
                        AfterError::Stop => return Ok(()),
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::interval::{IntervalDetail, IntervalLine};
    use crate::measure::reporter::{run_workers_with, Clock, ReportOptions, Worker};
    use crate::measure::schedule::Arrivals;
    use std::sync::atomic::AtomicBool;

    /// An operation that sleeps `ms` per run, except from `block_from` for `block_ms` (the
    /// database held it up), and fails transiently every `flaky`th attempt.
    struct Sleepy {
        ms: u64,
        block: Option<(Instant, Duration)>,
        flaky: u64,
        n: u64,
    }

    impl Operation for Sleepy {
        fn counted(&self) -> Counted {
            Counted::Txn
        }
        fn run(&mut self) -> Result<Done> {
            self.n += 1;
            if let Some((at, d)) = self.block {
                let now = Instant::now();
                if now >= at && now < at + d {
                    std::thread::sleep(at + d - now);
                }
            }
            std::thread::sleep(Duration::from_millis(self.ms));
            if self.flaky > 0 && self.n % self.flaky == 0 {
                anyhow::bail!("busy");
            }
            Ok(Done::Txn(TxnDone {
                writes: 1,
                ..Default::default()
            }))
        }
        fn transient(&mut self, _e: &anyhow::Error) -> bool {
            true
        }
    }

    fn opts(ms: u64) -> ReportOptions {
        ReportOptions {
            interval: Duration::from_millis(ms),
            stall_timeout: Duration::from_secs(60),
        }
    }

    /// An open loop at 100/s per worker, held up for 400 ms: the backlog grows to about 40
    /// per worker at the interval after the hold-up, drains as the worker catches up, and is
    /// 0 at the end; latency counts from the intended start, so the hold-up is in the max;
    /// retries are counted; the lines add up to the totals; nothing runs after the end.
    #[test]
    fn a_hold_up_shows_as_backlog_that_drains_and_in_the_latency() {
        let interrupt = AtomicBool::new(false);
        let origin = Instant::now();
        let until = Until::after(origin, Duration::from_millis(1500));
        let block_at = origin + Duration::from_millis(300);
        let workers: Vec<Worker> = (0..2)
            .map(|w| {
                let until = &until;
                Worker {
                    name: format!("w{w}"),
                    body: Box::new(move |m: &Meter, sig: &Signals| {
                        let s = Schedule::for_writer(
                            m.step_start(),
                            Instant::now(),
                            100.0,
                            Arrivals::Uniform,
                            1,
                            w,
                            2,
                        );
                        let mut op = Sleepy {
                            ms: 1,
                            block: Some((block_at, Duration::from_millis(400))),
                            flaky: 25,
                            n: 0,
                        };
                        let pacing = Pacing {
                            schedule: Some(s),
                            until: Some(until),
                            max_retries: 3,
                            ..Default::default()
                        };
                        drive(m, sig, pacing, &mut op).map(|_| ())
                    }),
                }
            })
            .collect();
        let mut lines: Vec<(IntervalLine, u64, u64)> = Vec::new();
        let m = run_workers_with(
            "t",
            opts(100),
            &interrupt,
            workers,
            Clock {
                start: Some(origin),
                until: Some(&until),
            },
            &mut |l, d: &IntervalDetail| {
                lines.push((l.clone(), d.backlog.unwrap(), d.totals.txn.txns));
                Ok(())
            },
        );
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let t = m.totals.txn;
        // 1.5 s at 2 x 100/s: 300 due, the last ones at the end, which do not start then;
        // whether a slot at the end is counted as never started depends on when the worker
        // looked. Everything else ran: the loop caught up before the end.
        assert!((298..=300).contains(&(t.txns + t.never_started)), "{t:?}");
        assert!(t.txns >= 298, "{t:?}");
        assert!(t.retries > 0 && t.retries == t.errors, "{t:?}");
        let sum: u64 = lines.iter().map(|x| x.2).sum();
        assert_eq!(sum, t.txns);
        let peak = lines.iter().map(|x| x.1).max().unwrap();
        // 400 ms held up at 2 x 100/s: about 80 due and not taken at the worst cut.
        assert!((50..=90).contains(&peak), "peak {peak}: {lines:?}");
        assert_eq!(m.peak_backlog, Some(peak));
        let at_peak = lines.iter().position(|x| x.1 == peak).unwrap();
        assert!(lines[at_peak].0.t_sec >= 0.5, "{lines:?}");
        // Drained well before the end; what the workers leave at their end is the last
        // line's backlog.
        assert_eq!(lines.last().unwrap().1, t.never_started, "{lines:?}");
        let h = m.txn_hist.unwrap();
        assert!(h.latency.max() >= 380_000, "{}", h.latency.max());
        assert!(h.service.max() >= 380_000);
        // The last interval reaches the end and is a whole one (no sliver after it).
        let last = &lines.last().unwrap().0;
        assert!((last.t_sec - 1.5).abs() < 0.09, "{last:?}");
    }

    /// A closed loop has no backlog (unknown, not 0); a loop whose operation fails for good
    /// fails with its error, counted once as an error that was not retried.
    #[test]
    fn closed_loops_have_no_backlog_and_errors_stand() {
        struct Bad;
        impl Operation for Bad {
            fn counted(&self) -> Counted {
                Counted::Txn
            }
            fn run(&mut self) -> Result<Done> {
                anyhow::bail!("no such table")
            }
            fn transient(&mut self, _e: &anyhow::Error) -> bool {
                false
            }
        }
        let interrupt = AtomicBool::new(false);
        let workers = vec![Worker {
            name: "bad".into(),
            body: Box::new(|m: &Meter, sig: &Signals| {
                drive(m, sig, Pacing::default(), &mut Bad).map(|_| ())
            }),
        }];
        let mut backlogs = Vec::new();
        let m = run_workers_with(
            "t",
            opts(50),
            &interrupt,
            workers,
            Clock::default(),
            &mut |_, d| {
                backlogs.push(d.backlog);
                Ok(())
            },
        );
        assert!(backlogs.iter().all(|b| b.is_none()));
        assert_eq!(m.peak_backlog, None);
        assert_eq!(m.errors.len(), 1);
        assert!(format!("{:#}", m.errors[0].1).contains("no such table"));
        assert_eq!(m.totals.txn.errors, 1);
        assert_eq!(m.totals.txn.retries, 0);
        assert_eq!(m.fail_codes.len(), 1);
    }

    /// A loop cut off at its end while far behind records what was due as never started,
    /// and does not run it after the end.
    #[test]
    fn a_loop_behind_at_its_end_records_the_rest_as_never_started() {
        let interrupt = AtomicBool::new(false);
        let origin = Instant::now();
        let until = Until::after(origin, Duration::from_millis(500));
        let workers = vec![Worker {
            name: "slow".into(),
            body: Box::new(|m: &Meter, sig: &Signals| {
                let s = Schedule::new(m.step_start(), 100.0, Arrivals::Uniform, 1);
                let mut op = Sleepy {
                    ms: 40,
                    block: None,
                    flaky: 0,
                    n: 0,
                };
                let e = drive(
                    m,
                    sig,
                    Pacing {
                        schedule: Some(s),
                        until: Some(&until),
                        max_retries: 0,
                        ..Default::default()
                    },
                    &mut op,
                )?;
                assert!(e.by_end);
                assert!(e.never_started >= 20, "{e:?}");
                Ok(())
            }),
        }];
        let m = run_workers_with(
            "t",
            opts(100),
            &interrupt,
            workers,
            Clock {
                start: Some(origin),
                until: Some(&until),
            },
            &mut |_, _| Ok(()),
        );
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let t = m.totals.txn;
        // 50 due by the end (the 50th exactly at it: not started, counted as never
        // started); about 12 ran.
        assert_eq!(t.txns + t.never_started, 50, "{t:?}");
        assert!(t.txns <= 14, "{t:?}");
        assert!(m.seconds < 0.75, "{}", m.seconds);
    }
}
