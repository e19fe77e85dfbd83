//! Per-worker measurement: the counts and histograms of the worker's current interval, behind
//! the worker's own mutex.
//!
//! A worker records each completed operation into its current [`Part`] (counts, rows, retries
//! and HDR histograms). [`Meter::record`] takes the completion timestamp *inside* the lock, so
//! when the reporter swaps the part out at time `T`, every operation that completed before `T`
//! is in it and every later one is not: counts and histograms of one interval cover exactly the
//! same window, and the reporter never waits for a worker's next operation (a worker stuck in a
//! statement at a boundary simply contributes nothing to that interval). The lock is the
//! worker's own: the only other party is the reporter, once per interval, for the time of a
//! swap, so on the hot path it is one uncontended lock/unlock per operation.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::histogram::{new_hist, record};
use super::schedule::{Due, Schedule};

/// The kinds of operation the insert benchmark measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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

/// Counts summed over workers (and over intervals).
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Totals {
    /// Operations completed per kind (commits for writes, queries for reads).
    pub ops: [u64; 3],
    /// Rows inserted, deleted, or returned by queries, per kind.
    pub rows: [u64; 3],
    /// Operations retried after a transient error (busy, deadlock, serialization), per kind.
    pub retries: [u64; 3],
    /// Operations that were due on a writer's schedule but never started because the step was
    /// cut off (at 3x its planned time); each is in the latency histogram with the time from
    /// its intended start to the cut-off, as wrk2 does.
    #[serde(default)]
    pub never_started: [u64; 3],
    /// Whole transactions of a transaction workload (sysbench-compatible OLTP); all zero (and
    /// left out of results) for the insert benchmark.
    #[serde(default, skip_serializing_if = "TxnTotals::is_zero")]
    pub txn: TxnTotals,
}

impl Totals {
    /// Add `o` to `self`.
    pub fn add(&mut self, o: &Totals) {
        for k in 0..3 {
            self.ops[k] += o.ops[k];
            self.rows[k] += o.rows[k];
            self.retries[k] += o.retries[k];
            self.never_started[k] += o.never_started[k];
        }
        self.txn.add(&o.txn);
    }
}

/// Counts of whole transactions, as sysbench counts them: transactions, their statements by
/// class (reads = SELECT, writes = INSERT/UPDATE/DELETE, other = BEGIN/COMMIT), errors and
/// retries.
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct TxnTotals {
    /// Transactions committed (or single autocommit statements completed).
    pub txns: u64,
    /// SELECT statements of those transactions.
    pub reads: u64,
    /// INSERT, UPDATE, DELETE statements of those transactions.
    pub writes: u64,
    /// Other statements of those transactions (BEGIN, COMMIT).
    pub other: u64,
    /// Rows read or changed by those transactions.
    pub rows: u64,
    /// Rows inserted by those transactions.
    #[serde(default)]
    pub inserted: u64,
    /// Rows deleted by those transactions.
    #[serde(default)]
    pub deleted: u64,
    /// Failed attempts (each error once, whether it was retried or not).
    pub errors: u64,
    /// Attempts run again after a transient error (deadlock, serialization failure, lock
    /// wait timeout, busy, a duplicate key of a concurrent delete+insert).
    pub retries: u64,
    /// Transactions that were due on an open-loop schedule but never started because the
    /// run was cut off (each is in the latency histogram, see [`Meter::never_started`]).
    #[serde(default)]
    pub never_started: u64,
}

impl TxnTotals {
    /// All statements (sysbench's "queries").
    pub fn statements(&self) -> u64 {
        self.reads + self.writes + self.other
    }

    /// True when nothing was counted (the insert benchmark's steps).
    pub fn is_zero(&self) -> bool {
        *self == TxnTotals::default()
    }

    /// Add `o` to `self`.
    pub fn add(&mut self, o: &TxnTotals) {
        self.txns += o.txns;
        self.reads += o.reads;
        self.writes += o.writes;
        self.other += o.other;
        self.rows += o.rows;
        self.inserted += o.inserted;
        self.deleted += o.deleted;
        self.errors += o.errors;
        self.retries += o.retries;
        self.never_started += o.never_started;
    }

    /// The counts since `prev` (an earlier snapshot of the same cumulative counts).
    pub fn since(&self, prev: &TxnTotals) -> TxnTotals {
        TxnTotals {
            txns: self.txns.saturating_sub(prev.txns),
            reads: self.reads.saturating_sub(prev.reads),
            writes: self.writes.saturating_sub(prev.writes),
            other: self.other.saturating_sub(prev.other),
            rows: self.rows.saturating_sub(prev.rows),
            inserted: self.inserted.saturating_sub(prev.inserted),
            deleted: self.deleted.saturating_sub(prev.deleted),
            errors: self.errors.saturating_sub(prev.errors),
            retries: self.retries.saturating_sub(prev.retries),
            never_started: self.never_started.saturating_sub(prev.never_started),
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

    /// Empty them, keeping their memory.
    pub fn reset(&mut self) {
        self.latency.reset();
        self.service.reset();
        self.lag.reset();
    }
}

impl Default for KindHists {
    fn default() -> Self {
        Self::new()
    }
}

/// What one worker did in one interval: counts and histograms of the same operations.
#[derive(Debug, Default)]
pub struct Part {
    /// Counts of the operations completed in the interval.
    pub totals: Totals,
    /// Per-kind histograms (empty where the worker did no operation of that kind).
    pub hists: [KindHists; 3],
    /// Histograms of whole transactions (transaction workloads only).
    pub txn: KindHists,
    /// Errors of transaction attempts by code (`40P01`, `1213`, `SQLITE_BUSY`, ...), with
    /// their counts; the few distinct codes of a run, in order of first appearance.
    pub error_codes: Vec<(String, u64)>,
    /// Of those, the errors that were not run again (the transaction failed), by code.
    pub fail_codes: Vec<(String, u64)>,
    /// Completion time of the first operation of the interval.
    pub first_done: Option<Instant>,
    /// Completion time of the last operation of the interval.
    pub last_done: Option<Instant>,
}

impl Part {
    /// Empty it for the next interval, keeping the histograms' memory.
    pub fn clear(&mut self) {
        if !self.txn.latency.is_empty() {
            self.txn.reset();
        }
        self.totals = Totals::default();
        for h in &mut self.hists {
            h.reset();
        }
        self.error_codes.clear();
        self.fail_codes.clear();
        self.first_done = None;
        self.last_done = None;
    }
}

/// The shared side of a meter: the reporter swaps the part out once per interval.
pub type Shared = Arc<Mutex<Part>>;

/// Lock a part; a worker that panicked while holding it left counts that are still valid.
pub fn lock(p: &Mutex<Part>) -> MutexGuard<'_, Part> {
    p.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the reporter knows of an open-loop worker's pacing, to count its backlog at a cut:
/// a copy of the worker's schedule (it generates the same intended starts again: the schedule
/// is deterministic) and how many of them the worker has taken. The backlog at `t` is the
/// starts due by `t` minus those taken: operations that should have started and have not,
/// sysbench's queue. A closed-loop worker has no schedule and no backlog (unknown, not 0).
#[derive(Debug, Default)]
pub struct Gauge {
    shadow: Mutex<Option<Shadow>>,
    taken: AtomicU64,
}

#[derive(Debug)]
struct Shadow {
    schedule: Schedule,
    due: u64,
    /// Set when the worker stopped: the starts it left due and never taken.
    finished: Option<u64>,
}

impl Gauge {
    /// The worker paces its operations on `schedule` (called before it takes any start).
    pub fn pace(&self, schedule: &Schedule) {
        *self.shadow.lock().unwrap_or_else(|e| e.into_inner()) = Some(Shadow {
            schedule: schedule.clone(),
            due: 0,
            finished: None,
        });
    }

    /// The worker took `n` due starts (began them, or counted them as never started).
    #[inline]
    pub fn took(&self, n: u64) {
        self.taken.fetch_add(n, Ordering::Relaxed);
    }

    /// The worker stopped pacing with `left` starts due and never taken (counted as never
    /// started): its backlog stays that from now on (what it left behind at its end).
    pub fn finish(&self, left: u64) {
        let mut g = self.shadow.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = g.as_mut() {
            s.finished = Some(left);
        }
    }

    /// Starts due by `t` and not taken; `None` for a worker that does not pace (closed loop).
    pub fn backlog(&self, t: Instant) -> Option<u64> {
        let mut g = self.shadow.lock().unwrap_or_else(|e| e.into_inner());
        let s = g.as_mut()?;
        if let Some(left) = s.finished {
            return Some(left);
        }
        s.due += s.schedule.count_due(t);
        Some(s.due.saturating_sub(self.taken.load(Ordering::Relaxed)))
    }
}

/// The measuring side of one worker thread.
pub struct Meter {
    step_start: Instant,
    part: Shared,
    gauge: Arc<Gauge>,
}

impl Meter {
    /// A meter for a step that began at `step_start`, recording into `part`, its pacing seen
    /// through `gauge`.
    pub fn new(step_start: Instant, part: Shared, gauge: Arc<Gauge>) -> Self {
        Meter {
            step_start,
            part,
            gauge,
        }
    }

    /// The worker's pacing, as the reporter sees it (backlog per interval).
    pub fn gauge(&self) -> &Gauge {
        &self.gauge
    }

    /// When the step began (the common origin of the writers' schedules).
    pub fn step_start(&self) -> Instant {
        self.step_start
    }

    /// Record one completed operation that moved `rows` rows, and return its completion time,
    /// which is taken under the part's lock (see the module documentation).
    ///
    /// `intended` is when it should have started (equal to `start` for unthrottled workers).
    #[inline]
    pub fn record(&self, kind: OpKind, intended: Instant, start: Instant, rows: u64) -> Instant {
        let mut p = lock(&self.part);
        let done = Instant::now();
        let k = kind.idx();
        let h = &mut p.hists[k];
        record(&mut h.latency, micros(done - intended.min(start)));
        record(&mut h.service, micros(done - start));
        if intended < start {
            record(&mut h.lag, micros(start - intended));
        }
        p.totals.ops[k] += 1;
        p.totals.rows[k] += rows;
        if p.first_done.is_none() {
            p.first_done = Some(done);
        }
        p.last_done = Some(done);
        done
    }

    /// Record operations that were due at `due` times but never started because the step was
    /// cut off at `cut`: each goes into the latency histogram as `cut - intended` and is
    /// counted as never started (not as completed).
    pub fn never_started(&self, kind: OpKind, due: &Due, cut: Instant) {
        if due.is_empty() {
            return;
        }
        let mut p = lock(&self.part);
        let k = kind.idx();
        record_backlog(&mut p.hists[k].latency, due, cut);
        p.totals.never_started[k] += due.len();
    }

    /// Count a retried operation.
    pub fn retry(&self, kind: OpKind) {
        lock(&self.part).totals.retries[kind.idx()] += 1;
    }

    /// Record one completed transaction of a transaction workload (its statements by class
    /// and rows in `done`), and return its completion time, taken under the part's lock.
    /// `intended` is when it should have started (equal to `start` in a closed loop); a
    /// transaction that was retried counts from the start of its first attempt.
    #[inline]
    pub fn record_txn(&self, intended: Instant, start: Instant, done: &TxnDone) -> Instant {
        let mut p = lock(&self.part);
        let now = Instant::now();
        let h = &mut p.txn;
        record(&mut h.latency, micros(now - intended.min(start)));
        record(&mut h.service, micros(now - start));
        if intended < start {
            record(&mut h.lag, micros(start - intended));
        }
        let t = &mut p.totals.txn;
        t.txns += 1;
        t.reads += u64::from(done.reads);
        t.writes += u64::from(done.writes);
        t.other += u64::from(done.other);
        t.rows += done.rows;
        t.inserted += done.inserted;
        t.deleted += done.deleted;
        if p.first_done.is_none() {
            p.first_done = Some(now);
        }
        p.last_done = Some(now);
        now
    }

    /// Count a failed transaction attempt with the DBMS's error `code`, and whether it will be
    /// run again (a retry).
    pub fn txn_error(&self, code: &str, retried: bool) {
        let mut p = lock(&self.part);
        p.totals.txn.errors += 1;
        if retried {
            p.totals.txn.retries += 1;
        }
        count_code(&mut p.error_codes, code);
        if !retried {
            count_code(&mut p.fail_codes, code);
        }
    }

    /// Record transactions that were due at `due` times but never started because the run
    /// was cut off at `cut` (as [`Meter::never_started`] does for the insert benchmark).
    pub fn txn_never_started(&self, due: &Due, cut: Instant) {
        if due.is_empty() {
            return;
        }
        let mut p = lock(&self.part);
        record_backlog(&mut p.txn.latency, due, cut);
        p.totals.txn.never_started += due.len();
    }
}

/// Add one to `code`'s count.
fn count_code(v: &mut Vec<(String, u64)>, code: &str) {
    match v.iter_mut().find(|(c, _)| c == code) {
        Some((_, n)) => *n += 1,
        None => v.push((code.to_string(), 1)),
    }
}

/// Record the latencies `cut - due[i]` of a backlog into `h`, one bucket at a time (a backlog
/// of millions costs one record per histogram bucket, not per operation).
fn record_backlog(h: &mut Histogram<u64>, due: &Due, cut: Instant) {
    let lat = |i: u64| micros(cut.saturating_duration_since(due.at(i))).max(1);
    let n = due.len();
    let mut i = 0;
    while i < n {
        // Latencies fall as i grows: find the run of them in the bucket of the first.
        let v = lat(i);
        let lo = h.lowest_equivalent(v).max(1);
        let (mut a, mut b) = (i, n - 1);
        while a < b {
            let mid = a + (b - a).div_ceil(2);
            if lat(mid) >= lo {
                a = mid;
            } else {
                b = mid - 1;
            }
        }
        let _ = h.record_n(v, a - i + 1);
        i = a + 1;
    }
}

/// Whole microseconds of a duration (saturating).
#[inline]
pub fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// What one transaction did, counted as sysbench counts it: statements by class (reads =
/// SELECTs, writes = INSERT/UPDATE/DELETE, other = BEGIN/COMMIT and the like) and rows
/// read or changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TxnDone {
    /// SELECT statements.
    pub reads: u32,
    /// INSERT, UPDATE, DELETE statements.
    pub writes: u32,
    /// Other statements (BEGIN, COMMIT).
    pub other: u32,
    /// Rows read or changed.
    pub rows: u64,
    /// Rows inserted (so a run can check the table's row count afterwards).
    pub inserted: u64,
    /// Rows deleted.
    pub deleted: u64,
}

impl TxnDone {
    /// All statements (sysbench's "queries").
    pub fn statements(&self) -> u32 {
        self.reads + self.writes + self.other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swap_cuts_counts_and_histograms_at_the_same_instant() {
        let t0 = Instant::now();
        let shared: Shared = Arc::default();
        let m = Meter::new(t0, shared.clone(), Arc::default());
        let s = Instant::now();
        let d1 = m.record(OpKind::Insert, s, s, 100);
        m.retry(OpKind::Insert);
        // The reporter's swap.
        let cut = Instant::now();
        let mut spare = Part::default();
        std::mem::swap(&mut *lock(&shared), &mut spare);
        let d2 = m.record(OpKind::Query, s, s, 10);
        assert!(d1 <= cut && cut <= d2);
        assert_eq!(spare.totals.ops, [1, 0, 0]);
        assert_eq!(spare.totals.rows, [100, 0, 0]);
        assert_eq!(spare.totals.retries, [1, 0, 0]);
        assert_eq!(spare.hists[0].latency.len(), 1);
        assert!(spare.hists[2].latency.is_empty());
        assert_eq!(spare.last_done, Some(d1));
        let now = lock(&shared);
        assert_eq!(now.totals.ops, [0, 0, 1]);
        assert_eq!(now.hists[2].latency.len(), 1);
        assert_eq!(now.first_done, Some(d2));
    }

    #[test]
    fn latency_from_intended_service_from_start_and_never_started() {
        let shared: Shared = Arc::default();
        let now = Instant::now();
        let m = Meter::new(now, shared.clone(), Arc::default());
        let intended = now - Duration::from_millis(50);
        let start = now - Duration::from_millis(20);
        let done = m.record(OpKind::Insert, intended, start, 1);
        m.never_started(
            OpKind::Insert,
            &Due::List(vec![done - Duration::from_millis(300), done]),
            done + Duration::from_millis(100),
        );
        let p = lock(&shared);
        let h = &p.hists[0];
        assert_eq!(h.latency.len(), 3);
        assert_eq!(h.service.len(), 1);
        assert_eq!(h.lag.len(), 1);
        assert!(h.service.max() >= 20_000 && h.service.max() < 21_000);
        assert!((30_000..30_100).contains(&h.lag.max()), "{}", h.lag.max());
        assert!((400_000..401_000).contains(&h.latency.max()));
        assert_eq!(p.totals.ops[0], 1);
        assert_eq!(p.totals.never_started[0], 2);
    }

    /// A backlog of a million on a grid is recorded bucket by bucket with the same result as
    /// one value at a time.
    #[test]
    fn a_grid_backlog_is_recorded_like_each_of_its_values() {
        let shared: Shared = Arc::default();
        let t0 = Instant::now();
        let m = Meter::new(t0, shared.clone(), Arc::default());
        let cut = t0 + Duration::from_secs(3);
        let due = Due::Grid {
            first: t0 + Duration::from_millis(1),
            period_ns: 2_000.0,
            count: 1_000_000,
        };
        m.never_started(OpKind::Insert, &due, cut);
        let mut one_by_one = new_hist();
        for i in 0..due.len() {
            record(&mut one_by_one, micros(cut - due.at(i)));
        }
        let p = lock(&shared);
        let h = &p.hists[0].latency;
        assert_eq!(h.len(), 1_000_000);
        assert_eq!(p.totals.never_started[0], 1_000_000);
        for q in [0.0, 0.01, 0.5, 0.99, 1.0] {
            assert_eq!(
                h.value_at_quantile(q),
                one_by_one.value_at_quantile(q),
                "{q}"
            );
        }
        assert_eq!(h.max(), one_by_one.max());
    }
}
