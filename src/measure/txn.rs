//! Per-interval lines of a transaction workload, as sysbench prints them (TPS, QPS by class,
//! latency percentiles, errors and retries per second), and stored in `intervals.ndjson`.

use serde::{Deserialize, Serialize};

use super::interval::{add_error_codes, IntervalDetail};
/// What one transaction did: its home is [`super::meter`], which records it.
use super::meter::TxnTotals;

/// One interval of a transaction step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TxnLine {
    /// Step name (`oltp_read_write`, `baseline`, ...).
    pub step: String,
    /// Interval number within the step, from 1.
    pub n: u64,
    /// Length of this interval in seconds.
    pub i_sec: f64,
    /// Seconds since the step began (at the interval's end).
    pub t_sec: f64,
    /// Clients.
    pub threads: usize,
    /// Transactions completed in the interval.
    pub txns: u64,
    /// Statements of those transactions (sysbench's queries).
    pub queries: u64,
    /// Transactions per second.
    pub tps: f64,
    /// Statements per second.
    pub qps: f64,
    /// SELECTs per second.
    pub reads_ps: f64,
    /// INSERT/UPDATE/DELETE per second.
    pub writes_ps: f64,
    /// BEGIN/COMMIT per second.
    pub other_ps: f64,
    /// Median transaction latency (from the intended start), microseconds; `None` when no
    /// transaction completed.
    pub p50_us: Option<u64>,
    /// 95th percentile (sysbench's default), microseconds.
    pub p95_us: Option<u64>,
    /// 99th percentile, microseconds.
    pub p99_us: Option<u64>,
    /// Largest, microseconds.
    pub max_us: Option<u64>,
    /// Failed attempts in the interval.
    pub errors: u64,
    /// Attempts run again in the interval.
    pub retries: u64,
    /// Transactions due on the schedule that never started (an open loop cut off at the end).
    pub never_started: u64,
    /// Errors by code in the interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors_by_code: Vec<(String, u64)>,
    /// Transactions since the step began.
    pub t_txns: u64,
    /// Seconds without any completion at the line's end, when at least a second.
    #[serde(default)]
    pub stalled_secs: Option<f64>,
    /// Intended starts due and not yet taken at the interval's end (an open loop's queue);
    /// `None` (left out) in a closed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog: Option<u64>,
}

impl TxnLine {
    /// The line of one interval: `d` is what the reporter saw in it, `cum` the step's counts
    /// up to its end.
    pub fn compute(
        step: &str,
        n: u64,
        threads: usize,
        d: &IntervalDetail,
        cum: &TxnTotals,
        i_sec: f64,
        t_sec: f64,
    ) -> Self {
        let t = &d.totals.txn;
        let per_s = |v: u64| if i_sec > 0.0 { v as f64 / i_sec } else { 0.0 };
        let h = &d.txn.latency;
        let q = |p: f64| (!h.is_empty()).then(|| h.value_at_quantile(p));
        TxnLine {
            step: step.to_string(),
            n,
            i_sec,
            t_sec,
            threads,
            txns: t.txns,
            queries: t.statements(),
            tps: per_s(t.txns),
            qps: per_s(t.statements()),
            reads_ps: per_s(t.reads),
            writes_ps: per_s(t.writes),
            other_ps: per_s(t.other),
            p50_us: q(0.50),
            p95_us: q(0.95),
            p99_us: q(0.99),
            max_us: (!h.is_empty()).then(|| h.max()),
            errors: t.errors,
            retries: t.retries,
            never_started: t.never_started,
            errors_by_code: d.error_codes.clone(),
            t_txns: cum.txns,
            stalled_secs: d.stalled_secs,
            backlog: d.backlog,
        }
    }

    /// The line as sysbench prints its `--report-interval` lines, with p50, p99 and max
    /// latency, retries and a `STALLED` mark.
    pub fn format(&self) -> String {
        let ms = |v: Option<u64>| match v {
            Some(us) => format!("{:.2}", us as f64 / 1000.0),
            None => "-".into(),
        };
        let per_s = |v: u64| {
            if self.i_sec > 0.0 {
                v as f64 / self.i_sec
            } else {
                0.0
            }
        };
        let mut s = format!(
            "[ {}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms) p50: {} p99: {} max: {} err/s: {:.2} retry/s: {:.2}",
            secs(self.t_sec),
            self.threads,
            self.tps,
            self.qps,
            self.reads_ps,
            self.writes_ps,
            self.other_ps,
            ms(self.p50_us),
            ms(self.p99_us),
            ms(self.max_us),
            per_s(self.errors),
            per_s(self.retries),
        );
        if let Some(b) = self.backlog {
            s.push_str(&format!(" backlog: {b}"));
        }
        if self.never_started > 0 {
            s.push_str(&format!(" never-started: {}", self.never_started));
        }
        if let Some(st) = self.stalled_secs {
            s.push_str(&format!(" STALLED {st:.1}s"));
        }
        s
    }
}

/// Transaction figures over a window of whole intervals (a baseline, the time a DDL ran, the
/// recovery after it): the intervals' counts and histograms merged, so its percentiles are
/// those of every transaction in it (not an average of per-interval percentiles).
#[derive(Debug, Default, Clone)]
pub struct TxnWindow {
    /// Seconds of the intervals added.
    pub seconds: f64,
    /// Their counts.
    pub totals: TxnTotals,
    /// Their transaction latency histogram (from the intended start).
    pub latency: Option<hdrhistogram::Histogram<u64>>,
    /// Their errors by code.
    pub error_codes: Vec<(String, u64)>,
    /// Intervals added.
    pub intervals: u64,
}

impl TxnWindow {
    /// Add one interval of `i_sec` seconds.
    pub fn add(&mut self, d: &IntervalDetail, i_sec: f64) {
        self.seconds += i_sec;
        self.totals.add(&d.totals.txn);
        if !d.txn.latency.is_empty() {
            let h = self
                .latency
                .get_or_insert_with(crate::measure::histogram::new_hist);
            // Auto-resizing histograms of the same precision always merge.
            let _ = h.add(&d.txn.latency);
        }
        add_error_codes(&mut self.error_codes, &d.error_codes);
        self.intervals += 1;
    }

    /// Transactions per second.
    pub fn tps(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.totals.txns as f64 / self.seconds)
    }

    /// Statements per second.
    pub fn qps(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.totals.statements() as f64 / self.seconds)
    }

    /// Latency at quantile `q` (0..=1), microseconds; `None` when no transaction completed.
    pub fn latency_at(&self, q: f64) -> Option<u64> {
        self.latency
            .as_ref()
            .filter(|h| !h.is_empty())
            .map(|h| h.value_at_quantile(q))
    }

    /// Largest latency, microseconds.
    pub fn max_us(&self) -> Option<u64> {
        self.latency
            .as_ref()
            .filter(|h| !h.is_empty())
            .map(|h| h.max())
    }
}

/// Whole seconds as sysbench prints them, or three decimals where that would hide a partial
/// interval (the last one ends when the clients end).
fn secs(v: f64) -> String {
    if (v - v.round()).abs() < 0.0005 {
        format!("{:.0}", v.round())
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::histogram::record;

    #[test]
    fn a_line_from_an_interval() {
        let mut d = IntervalDetail::default();
        d.totals.txn = TxnTotals {
            txns: 50,
            reads: 700,
            writes: 200,
            other: 100,
            errors: 2,
            retries: 2,
            ..Default::default()
        };
        for v in 1..=100u64 {
            record(&mut d.txn.latency, v * 100);
        }
        d.error_codes.push(("40P01".into(), 2));
        let cum = TxnTotals {
            txns: 150,
            ..Default::default()
        };
        let l = TxnLine::compute("rw", 3, 4, &d, &cum, 0.5, 3.0);
        assert_eq!((l.tps, l.qps), (100.0, 2000.0));
        assert_eq!(
            (l.reads_ps, l.writes_ps, l.other_ps),
            (1400.0, 400.0, 200.0)
        );
        assert_eq!(l.queries, 1000);
        let p99 = l.p99_us.unwrap();
        assert!((9_890..=9_910).contains(&p99), "{p99}");
        let f = l.format();
        assert!(f.starts_with("[ 3s ] thds: 4 tps: 100.00 qps: 2000.00 (r/w/o: 1400.00/400.00/200.00) lat (ms) p50: 5.00"), "{f}");
        assert!(f.ends_with("err/s: 4.00 retry/s: 4.00"), "{f}");
        let mut w = TxnWindow::default();
        w.add(&d, 0.5);
        w.add(&IntervalDetail::default(), 0.5);
        assert_eq!(w.tps(), Some(50.0));
        assert_eq!(w.qps(), Some(1000.0));
        assert_eq!(w.latency_at(0.99), Some(p99));
        assert_eq!(w.error_codes, vec![("40P01".to_string(), 2)]);
        assert_eq!(TxnWindow::default().latency_at(0.5), None);
        let empty = TxnLine::compute("rw", 4, 4, &IntervalDetail::default(), &cum, 1.0, 4.0);
        assert_eq!(empty.p99_us, None);
        assert!(empty.format().contains("p50: - p99: - max: -"));
    }
}
