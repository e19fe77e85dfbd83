//! Per-worker measurement: counters the reporter reads at each tick, and histograms the worker
//! fills alone and hands over once per interval.
//!
//! The hot path takes no lock and shares no cache line with another worker: counts are relaxed
//! atomics written by a single thread (the reporter only reads them), and latencies go into the
//! worker's own histograms, which it sends over a channel when its clock crosses an interval
//! boundary. An operation's latency belongs to the interval in which it completed; a worker that
//! is stuck in one long operation at a boundary delivers its earlier samples late, and the
//! reporter folds them into the line being printed (counts are never late: they are atomics).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::histogram::{new_hist, record};

/// The kinds of operation the insert benchmark measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    /// One commit of a multi-row INSERT.
    Insert,
    /// One commit of a DELETE of the oldest rows.
    Delete,
    /// One range or point query.
    Query,
}

impl OpKind {
    /// All kinds, in the order of the per-kind arrays.
    pub const ALL: [OpKind; 3] = [OpKind::Insert, OpKind::Delete, OpKind::Query];

    /// Index into per-kind arrays.
    pub fn idx(self) -> usize {
        self as usize
    }

    /// Lower-case name, as in results.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Insert => "insert",
            OpKind::Delete => "delete",
            OpKind::Query => "query",
        }
    }
}

/// Counts of one worker, written only by that worker, read by the reporter at each tick.
#[derive(Debug, Default)]
pub struct Counters {
    /// Operations completed (commits for writes, queries for reads), per [`OpKind`].
    pub ops: [AtomicU64; 3],
    /// Rows inserted, deleted, or returned by queries, per [`OpKind`].
    pub rows: [AtomicU64; 3],
    /// Operations retried after a transient error (busy, deadlock, serialization), per kind.
    pub retries: [AtomicU64; 3],
}

/// A plain copy of counters, summed over workers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Operations per kind.
    pub ops: [u64; 3],
    /// Rows per kind.
    pub rows: [u64; 3],
    /// Retries per kind.
    pub retries: [u64; 3],
}

impl Counters {
    /// Add `delta` to a single-writer counter. Only the owning worker writes, so a relaxed
    /// load + store is enough and avoids a locked read-modify-write on the hot path.
    #[inline]
    fn bump(c: &AtomicU64, delta: u64) {
        c.store(c.load(Ordering::Relaxed) + delta, Ordering::Relaxed);
    }

    /// Add this worker's counts to `t`.
    pub fn add_to(&self, t: &mut Totals) {
        for k in 0..3 {
            t.ops[k] += self.ops[k].load(Ordering::Relaxed);
            t.rows[k] += self.rows[k].load(Ordering::Relaxed);
            t.retries[k] += self.retries[k].load(Ordering::Relaxed);
        }
    }
}

/// Histograms of one kind of operation.
#[derive(Debug, Clone)]
pub struct KindHists {
    /// Response time from the intended start (coordinated omission corrected), microseconds.
    pub latency: Histogram<u64>,
    /// Service time from the actual start, microseconds.
    pub service: Histogram<u64>,
    /// How late operations started versus their schedule (throttled workers only), microseconds.
    pub lag: Histogram<u64>,
}

impl KindHists {
    /// Empty histograms.
    pub fn new() -> Self {
        KindHists {
            latency: new_hist(),
            service: new_hist(),
            lag: new_hist(),
        }
    }

    /// Merge `other` into `self`.
    pub fn add(&mut self, other: &KindHists) {
        // Auto-resizing histograms of the same precision always merge.
        let _ = self.latency.add(&other.latency);
        let _ = self.service.add(&other.service);
        let _ = self.lag.add(&other.lag);
    }
}

impl Default for KindHists {
    fn default() -> Self {
        Self::new()
    }
}

/// Histograms of one worker for one interval.
#[derive(Debug, Default)]
pub struct Part {
    /// Interval index (0 = the first interval of the step) in which the samples completed.
    pub interval: u64,
    /// Per-kind histograms; `None` where the worker did no operation of that kind.
    pub hists: [Option<KindHists>; 3],
}

/// The measuring side of one worker thread.
pub struct Meter {
    step_start: Instant,
    interval_ns: u128,
    cur: u64,
    part: Part,
    counters: Arc<Counters>,
    tx: Sender<Part>,
}

impl Meter {
    /// A meter for a step that began at `step_start`, reporting every `interval`.
    pub fn new(
        step_start: Instant,
        interval: Duration,
        counters: Arc<Counters>,
        tx: Sender<Part>,
    ) -> Self {
        Meter {
            step_start,
            interval_ns: interval.as_nanos().max(1),
            cur: 0,
            part: Part::default(),
            counters,
            tx,
        }
    }

    /// The interval index `t` falls in.
    pub fn interval_of(&self, t: Instant) -> u64 {
        (t.saturating_duration_since(self.step_start).as_nanos() / self.interval_ns) as u64
    }

    /// The next interval boundary after `t`.
    pub fn next_boundary(&self, t: Instant) -> Instant {
        let k = self.interval_of(t) + 1;
        self.step_start + Duration::from_nanos((u128::from(k) * self.interval_ns) as u64)
    }

    /// Hand over the finished interval's histograms if `now` is in a later interval.
    #[inline]
    pub fn tick(&mut self, now: Instant) {
        let k = self.interval_of(now);
        if k > self.cur {
            self.flush();
            self.cur = k;
            self.part.interval = k;
        }
    }

    fn flush(&mut self) {
        if self.part.hists.iter().any(Option::is_some) {
            let part = std::mem::take(&mut self.part);
            // The reporter only goes away after joining workers; a send error cannot lose data
            // that anyone would read.
            let _ = self.tx.send(part);
        }
    }

    /// Record one completed operation that moved `rows` rows.
    ///
    /// `intended` is when it should have started (equal to `start` for unthrottled workers).
    #[inline]
    pub fn record(
        &mut self,
        kind: OpKind,
        intended: Instant,
        start: Instant,
        done: Instant,
        rows: u64,
    ) {
        self.tick(done);
        let h = self.part.hists[kind.idx()].get_or_insert_with(KindHists::new);
        record(&mut h.latency, micros(done - intended.min(start)));
        record(&mut h.service, micros(done - start));
        if intended < start {
            record(&mut h.lag, micros(start - intended));
        }
        Counters::bump(&self.counters.ops[kind.idx()], 1);
        Counters::bump(&self.counters.rows[kind.idx()], rows);
    }

    /// Count a retried operation.
    pub fn retry(&mut self, kind: OpKind) {
        Counters::bump(&self.counters.retries[kind.idx()], 1);
    }

    /// Send what is left; call when the worker ends.
    pub fn finish(mut self) {
        self.flush();
    }
}

/// Whole microseconds of a duration (saturating).
#[inline]
pub fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn parts_are_tagged_with_completion_interval() {
        let t0 = Instant::now();
        let (tx, rx) = channel();
        let counters = Arc::new(Counters::default());
        let mut m = Meter::new(t0, Duration::from_secs(1), counters.clone(), tx);
        let ms = Duration::from_millis;
        m.record(OpKind::Insert, t0, t0, t0 + ms(5), 100);
        m.record(
            OpKind::Insert,
            t0 + ms(900),
            t0 + ms(900),
            t0 + ms(999),
            100,
        );
        // completes in interval 1: interval 0's part is sent first
        m.record(
            OpKind::Query,
            t0 + ms(990),
            t0 + ms(995),
            t0 + ms(1_200),
            10,
        );
        let p0 = rx.try_recv().unwrap();
        assert_eq!(p0.interval, 0);
        let ins = p0.hists[0].as_ref().unwrap();
        assert_eq!(ins.latency.len(), 2);
        assert!(ins.latency.max() >= 99_000 && ins.latency.max() < 100_000);
        assert!(p0.hists[2].is_none());
        // nothing in interval 2 or 3: a tick in interval 4 sends interval 1 only
        m.tick(t0 + ms(4_100));
        let p1 = rx.try_recv().unwrap();
        assert_eq!(p1.interval, 1);
        let q = p1.hists[2].as_ref().unwrap();
        // latency from intended (210 ms), service from actual start (205 ms), lag 5 ms
        assert_eq!(q.latency.max() / 1000, 210);
        assert_eq!(q.service.max() / 1000, 205);
        assert_eq!(q.lag.max() / 1000, 5);
        assert!(rx.try_recv().is_err());
        let mut t = Totals::default();
        counters.add_to(&mut t);
        assert_eq!(t.ops, [2, 0, 1]);
        assert_eq!(t.rows, [200, 0, 10]);
        m.finish();
        assert!(rx.try_recv().is_err(), "empty interval sends nothing");
    }

    #[test]
    fn boundaries() {
        let t0 = Instant::now();
        let (tx, _rx) = channel();
        let m = Meter::new(
            t0,
            Duration::from_millis(500),
            Arc::new(Counters::default()),
            tx,
        );
        assert_eq!(m.interval_of(t0 + Duration::from_millis(499)), 0);
        assert_eq!(m.interval_of(t0 + Duration::from_millis(500)), 1);
        assert_eq!(
            m.next_boundary(t0 + Duration::from_millis(700)),
            t0 + Duration::from_secs(1)
        );
    }
}
