//! Runs a step's workers and reports every interval.
//!
//! Each worker is a thread with its own connection and [`Meter`]. This (the calling) thread is
//! the reporter: at each interval boundary it reads the workers' counters, merges the
//! histograms they handed over, and passes the [`IntervalLine`] to a sink that prints it and
//! appends it to `intervals.ndjson` at once. Memory stays flat however long the step: nothing is
//! kept per operation.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};

use super::interval::IntervalLine;
use super::meter::{Counters, KindHists, Meter, OpKind, Part, Totals};
use super::schedule::{Clock, SystemClock};

/// How long after a boundary the reporter waits for workers to hand over their histograms.
const GRACE: Duration = Duration::from_millis(10);

/// The work of one worker thread: it records into the meter and checks
/// [`Signals::should_stop`] between operations.
pub type WorkerBody<'a> = Box<dyn FnOnce(&mut Meter, &Signals) -> Result<()> + Send + 'a>;

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
    /// Set when another worker of the step failed.
    pub abort: &'a AtomicBool,
}

impl Signals<'_> {
    /// True when the worker should stop now.
    #[inline]
    pub fn should_stop(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed)
    }

    /// Sleep until `t`, waking at each interval boundary to hand over the finished interval,
    /// and at least every 100 ms to notice a stop. Returns false if asked to stop.
    pub fn sleep_until(&self, meter: &mut Meter, t: Instant) -> bool {
        let clock = SystemClock;
        loop {
            let now = clock.now();
            meter.tick(now);
            if self.should_stop() {
                return false;
            }
            if now >= t {
                return true;
            }
            let wake = t
                .min(meter.next_boundary(now))
                .min(now + Duration::from_millis(100));
            clock.sleep_until(wake);
        }
    }
}

/// What the workers of a step did, over the whole step.
#[derive(Debug, Default)]
pub struct Measured {
    /// Wall seconds from start until the last worker ended.
    pub seconds: f64,
    /// Counts.
    pub totals: Totals,
    /// Merged histograms per kind (`None` where no operation of that kind ran).
    pub hists: [Option<KindHists>; 3],
    /// Per full interval: (inserts/s, deletes/s, queries/s).
    pub interval_rates: Vec<[f64; 3]>,
    /// Errors of workers that failed: (worker, error).
    pub errors: Vec<(String, anyhow::Error)>,
}

/// Run `workers` to completion, calling `sink` with each interval's line as soon as it is
/// known. A worker error stops the other workers (the step fails); `interrupt` (Ctrl-C) stops
/// all of them. The sink's own errors (cannot write results) stop the step too.
pub fn run_workers(
    step: &str,
    interval: Duration,
    interrupt: &AtomicBool,
    workers: Vec<Worker<'_>>,
    sink: &mut dyn FnMut(&IntervalLine) -> Result<()>,
) -> Measured {
    let n = workers.len();
    let abort = AtomicBool::new(false);
    let finished = AtomicUsize::new(0);
    let counters: Vec<Arc<Counters>> = (0..n).map(|_| Arc::new(Counters::default())).collect();
    let (tx, rx) = channel::<Part>();
    let start = Instant::now();
    let mut out = Measured::default();

    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(n);
        for (w, c) in workers.into_iter().zip(&counters) {
            let meter = Meter::new(start, interval, c.clone(), tx.clone());
            let (abort, finished) = (&abort, &finished);
            let name = w.name;
            let body = w.body;
            handles.push((
                name.clone(),
                s.spawn(move || {
                    let mut meter = meter;
                    let sig = Signals { interrupt, abort };
                    let r = body(&mut meter, &sig);
                    meter.finish();
                    if r.is_err() {
                        abort.store(true, Ordering::Relaxed);
                    }
                    finished.fetch_add(1, Ordering::Release);
                    r
                }),
            ));
        }
        drop(tx);

        let mut pending: BTreeMap<u64, [Option<KindHists>; 3]> = BTreeMap::new();
        let mut prev = Totals::default();
        let mut k: u64 = 1;
        let mut sink_failed = false;
        loop {
            let boundary = start + interval * k as u32;
            let all_done = wait_for(boundary + GRACE, || finished.load(Ordering::Acquire) == n);
            let now = Instant::now();
            let end = if all_done {
                now.min(boundary)
            } else {
                boundary
            };
            drain(&rx, &mut pending, &mut out.hists);
            let mut cur = Totals::default();
            for c in &counters {
                c.add_to(&mut cur);
            }
            // Everything that completed up to this line's interval (and late arrivals).
            let mut maxes = [0u64; 3];
            let mut done_keys = Vec::new();
            for (&iv, h) in pending.iter() {
                if iv < k || all_done {
                    for kind in OpKind::ALL {
                        if let Some(kh) = &h[kind.idx()] {
                            maxes[kind.idx()] = maxes[kind.idx()].max(kh.latency.max());
                        }
                    }
                    done_keys.push(iv);
                }
            }
            for iv in done_keys {
                pending.remove(&iv);
            }
            let t_sec = (end - start).as_secs_f64();
            let i_sec = t_sec - interval.as_secs_f64() * (k - 1) as f64;
            let line = IntervalLine::compute(step, k, &prev, &cur, i_sec, t_sec, maxes);
            if i_sec >= interval.as_secs_f64() * 0.5 {
                out.interval_rates
                    .push([line.i_ips, line.i_dps, line.i_qps]);
            }
            if !sink_failed && i_sec > 0.0 {
                if let Err(e) = sink(&line) {
                    out.errors.push(("reporter".into(), e));
                    abort.store(true, Ordering::Relaxed);
                    sink_failed = true;
                }
            }
            prev = cur;
            if all_done {
                break;
            }
            k += 1;
        }
        for (name, h) in handles {
            match h.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => out.errors.push((name, e)),
                Err(_) => out.errors.push((name, anyhow!("worker thread panicked"))),
            }
        }
        out.seconds = start.elapsed().as_secs_f64();
        drain(&rx, &mut pending, &mut out.hists);
        for c in &counters {
            c.add_to(&mut out.totals);
        }
    });
    out
}

/// Move every handed-over part into `pending` (per interval, for lines) and into the step
/// totals.
fn drain(
    rx: &Receiver<Part>,
    pending: &mut BTreeMap<u64, [Option<KindHists>; 3]>,
    totals: &mut [Option<KindHists>; 3],
) {
    while let Ok(part) = rx.try_recv() {
        let slot = pending.entry(part.interval).or_default();
        for (i, h) in part.hists.into_iter().enumerate() {
            if let Some(h) = h {
                totals[i].get_or_insert_with(KindHists::new).add(&h);
                match &mut slot[i] {
                    Some(s) => s.add(&h),
                    None => slot[i] = Some(h),
                }
            }
        }
    }
}

/// Sleep until `deadline` or until `done()` is true; returns `done()`.
fn wait_for(deadline: Instant, done: impl Fn() -> bool) -> bool {
    loop {
        if done() {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(5)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_every_operation_once() {
        let interrupt = AtomicBool::new(false);
        let mut lines = Vec::new();
        let workers: Vec<Worker> = (0..2)
            .map(|w| Worker {
                name: format!("w{w}"),
                body: Box::new(move |m: &mut Meter, sig: &Signals| {
                    let t0 = Instant::now();
                    let mut i = 0;
                    while t0.elapsed() < Duration::from_millis(350) && !sig.should_stop() {
                        let s = Instant::now();
                        std::thread::sleep(Duration::from_millis(2));
                        m.record(OpKind::Insert, s, s, Instant::now(), 10);
                        i += 1;
                    }
                    assert!(i > 10);
                    Ok(())
                }),
            })
            .collect();
        let m = run_workers(
            "t",
            Duration::from_millis(100),
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
        let last = lines.last().unwrap();
        assert_eq!(last.t_ins, m.totals.rows[0]);
        let sum: f64 = lines.iter().map(|l| l.i_ips * l.i_sec).sum();
        assert!((sum - m.totals.rows[0] as f64).abs() < 1.0, "{sum}");
        assert!((3..=6).contains(&lines.len()), "{} lines", lines.len());
        assert!(lines.iter().all(|l| l.max_i >= 2_000 || l.i_ips == 0.0));
    }

    #[test]
    fn a_failing_worker_stops_the_others() {
        let interrupt = AtomicBool::new(false);
        let workers = vec![
            Worker {
                name: "bad".into(),
                body: Box::new(|_m: &mut Meter, _s: &Signals| Err(anyhow!("boom"))),
            },
            Worker {
                name: "good".into(),
                body: Box::new(|_m: &mut Meter, s: &Signals| {
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
            Duration::from_secs(1),
            &interrupt,
            workers,
            &mut |_| Ok(()),
        );
        assert_eq!(m.errors.len(), 1);
        assert_eq!(m.errors[0].0, "bad");
        assert!(m.seconds < 2.0);
    }
}
