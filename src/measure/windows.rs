//! What a schema change did to the load around it, from per-second figures: the baseline
//! (before the DDL), during and after windows, their TPS, QPS and latency percentiles (from the
//! merged histograms, never averaged percentiles), the during/baseline ratios, the worst
//! second during the DDL, and the time the load took to come back to within 5% of the
//! baseline. Pure: no clock, no database.
//!
//! Second `i` covers `[i, i+1)` seconds from the start of the load; a transaction counts in the
//! second it completed in. The windows are whole seconds: baseline `[0, floor(start))`, during
//! `[floor(start), ceil(end))` (every second the DDL ran in, at least one), after the rest; so
//! they add up to the run.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::measure::histogram::new_hist;

/// Within this share of the baseline counts as recovered.
pub const RECOVERY_TOLERANCE: f64 = 0.05;

/// Consecutive seconds within the tolerance that count as recovered (fewer when the run ends
/// first).
pub const RECOVERY_RUN: usize = 3;

/// The load's figures for one second.
#[derive(Debug, Clone)]
pub struct Second {
    /// Transactions completed.
    pub txns: u64,
    /// Statements of those transactions (sysbench's queries).
    pub queries: u64,
    /// Failed transactions by error code.
    pub errors: BTreeMap<String, u64>,
    /// Transactions run again after a transient error.
    pub retries: u64,
    /// The transient errors that were retried, by code.
    pub retry_codes: BTreeMap<String, u64>,
    /// Latency of the completed transactions, microseconds (from the intended start under a
    /// fixed rate).
    pub hist: Histogram<u64>,
}

impl Default for Second {
    fn default() -> Self {
        Second {
            txns: 0,
            queries: 0,
            errors: BTreeMap::new(),
            retries: 0,
            retry_codes: BTreeMap::new(),
            hist: new_hist(),
        }
    }
}

impl Second {
    /// Add another worker's figures for the same second.
    pub fn add(&mut self, o: &Second) {
        self.txns += o.txns;
        self.queries += o.queries;
        self.retries += o.retries;
        for (k, v) in &o.errors {
            *self.errors.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &o.retry_codes {
            *self.retry_codes.entry(k.clone()).or_default() += v;
        }
        let _ = self.hist.add(&o.hist);
    }

    /// Failed transactions.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// A percentile in microseconds, `None` when nothing completed.
    pub fn pct(&self, q: f64) -> Option<u64> {
        (!self.hist.is_empty()).then(|| self.hist.value_at_quantile(q))
    }
}

/// The figures of one window.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct WindowStats {
    /// `baseline`, `during`, `after`.
    pub name: String,
    /// First second (from the start of the load).
    pub from_s: u32,
    /// Seconds in the window.
    pub seconds: u32,
    /// Transactions completed.
    pub txns: u64,
    /// Statements.
    pub queries: u64,
    /// Transactions per second (`None` for an empty window).
    pub tps: Option<f64>,
    /// Statements per second.
    pub qps: Option<f64>,
    /// Median latency, microseconds (`None` when nothing completed).
    pub p50_us: Option<u64>,
    /// 99th percentile, microseconds.
    pub p99_us: Option<u64>,
    /// Largest, microseconds.
    pub max_us: Option<u64>,
    /// Failed transactions by error code.
    pub errors: BTreeMap<String, u64>,
    /// Retries after transient errors.
    pub retries: u64,
    /// The transient errors that were retried, by code.
    #[serde(default)]
    pub retry_codes: BTreeMap<String, u64>,
}

/// The impact of the DDL on the load.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Impact {
    /// Before the DDL.
    pub baseline: WindowStats,
    /// While it ran.
    pub during: WindowStats,
    /// After it ended.
    pub after: WindowStats,
    /// during TPS / baseline TPS.
    pub tps_ratio: Option<f64>,
    /// during QPS / baseline QPS.
    pub qps_ratio: Option<f64>,
    /// during p99 / baseline p99.
    pub p99_ratio: Option<f64>,
    /// The second with the fewest transactions during the DDL, and its TPS.
    pub worst_tps: Option<(u32, f64)>,
    /// The second with the highest p99 during the DDL, and that p99 (microseconds).
    pub worst_p99_us: Option<(u32, u64)>,
    /// Whole seconds after the DDL (from the first full second after its end) until TPS was
    /// within 5% of the baseline for [`RECOVERY_RUN`] seconds in a row; `None` when it was not
    /// within the run.
    pub recovery_tps_s: Option<u32>,
    /// The same for the per-second p99 (at most 5% above the baseline's p99).
    pub recovery_p99_s: Option<u32>,
}

/// The figures of seconds `[from, to)`.
pub fn window(name: &str, seconds: &[Second], from: usize, to: usize) -> WindowStats {
    let to = to.min(seconds.len());
    let from = from.min(to);
    let mut sum = Second::default();
    for s in &seconds[from..to] {
        sum.add(s);
    }
    let n = (to - from) as f64;
    WindowStats {
        name: name.into(),
        from_s: from as u32,
        seconds: (to - from) as u32,
        txns: sum.txns,
        queries: sum.queries,
        tps: (n > 0.0).then(|| sum.txns as f64 / n),
        qps: (n > 0.0).then(|| sum.queries as f64 / n),
        p50_us: sum.pct(0.50),
        p99_us: sum.pct(0.99),
        max_us: (!sum.hist.is_empty()).then(|| sum.hist.max()),
        errors: sum.errors,
        retries: sum.retries,
        retry_codes: sum.retry_codes,
    }
}

/// The window boundaries (second indexes): baseline `[0, a)`, during `[a, b)`, after `[b, n)`.
pub fn bounds(n: usize, ddl_start: f64, ddl_end: f64) -> (usize, usize) {
    let a = (ddl_start.max(0.0).floor() as usize).min(n);
    let b = (ddl_end.max(ddl_start).ceil() as usize).max(a + 1).min(n);
    (a, b)
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// The first `s` in `from..` where `ok` holds for [`RECOVERY_RUN`] seconds in a row (or up to
/// the end), as seconds after `from`.
fn recovered(n: usize, from: usize, ok: impl Fn(usize) -> bool) -> Option<u32> {
    (from..n)
        .find(|&s| (s..(s + RECOVERY_RUN).min(n)).all(&ok))
        .map(|s| (s - from) as u32)
}

/// Analyse the load's seconds around a DDL that ran from `ddl_start` to `ddl_end` seconds
/// after the load started.
pub fn analyse(seconds: &[Second], ddl_start: f64, ddl_end: f64) -> Impact {
    let n = seconds.len();
    let (a, b) = bounds(n, ddl_start, ddl_end);
    let baseline = window("baseline", seconds, 0, a);
    let during = window("during", seconds, a, b);
    let after = window("after", seconds, b, n);
    let worst_tps = (a..b)
        .min_by_key(|&s| seconds[s].txns)
        .map(|s| (s as u32, seconds[s].txns as f64));
    let worst_p99_us = (a..b)
        .filter_map(|s| seconds[s].pct(0.99).map(|p| (s as u32, p)))
        .max_by_key(|&(_, p)| p);
    let recovery_tps_s = baseline.tps.filter(|t| *t > 0.0).and_then(|base| {
        recovered(n, b, |s| {
            (seconds[s].txns as f64 - base).abs() <= RECOVERY_TOLERANCE * base
        })
    });
    let recovery_p99_s = baseline.p99_us.and_then(|base| {
        let limit = base as f64 * (1.0 + RECOVERY_TOLERANCE);
        recovered(n, b, |s| {
            seconds[s].pct(0.99).is_some_and(|p| p as f64 <= limit)
        })
    });
    Impact {
        tps_ratio: ratio(during.tps, baseline.tps),
        qps_ratio: ratio(during.qps, baseline.qps),
        p99_ratio: ratio(
            during.p99_us.map(|v| v as f64),
            baseline.p99_us.map(|v| v as f64),
        ),
        worst_tps,
        worst_p99_us,
        recovery_tps_s,
        recovery_p99_s,
        baseline,
        during,
        after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::histogram::record;

    /// A second with `txns` transactions of `lat_us` each, 20 statements per transaction.
    fn sec(txns: u64, lat_us: u64) -> Second {
        let mut s = Second {
            txns,
            queries: txns * 20,
            ..Default::default()
        };
        for _ in 0..txns {
            record(&mut s.hist, lat_us);
        }
        s
    }

    /// 10 s at 100 TPS and 1 ms, a DDL from 10.5 to 14.2 s with a stall, then back.
    fn run() -> Vec<Second> {
        let mut v: Vec<Second> = (0..10).map(|_| sec(100, 1_000)).collect();
        v.push(sec(80, 2_000)); // 10: DDL starts at 10.5
        v.push(sec(0, 0)); // 11: stalled
        v.push(sec(0, 0)); // 12
        v.push(sec(50, 3_000_000)); // 13: the stalled ones complete, late
        v.push(sec(120, 500_000)); // 14: DDL ends at 14.2; backlog
        v.push(sec(150, 100_000)); // 15: catching up
        v.push(sec(101, 1_000)); // 16
        v.push(sec(99, 1_020)); // 17
        v.push(sec(100, 1_000)); // 18
        v.push(sec(100, 1_000)); // 19
        v
    }

    #[test]
    fn windows_add_up_to_the_run() {
        let v = run();
        let i = analyse(&v, 10.5, 14.2);
        assert_eq!((i.baseline.from_s, i.baseline.seconds), (0, 10));
        assert_eq!((i.during.from_s, i.during.seconds), (10, 5));
        assert_eq!((i.after.from_s, i.after.seconds), (15, 5));
        let total: u64 = v.iter().map(|s| s.txns).sum();
        assert_eq!(i.baseline.txns + i.during.txns + i.after.txns, total);
        assert_eq!(
            i.baseline.queries + i.during.queries + i.after.queries,
            total * 20
        );
        assert_eq!(
            (i.baseline.seconds + i.during.seconds + i.after.seconds) as usize,
            v.len()
        );
    }

    #[test]
    fn figures_ratios_dip_and_recovery() {
        let i = analyse(&run(), 10.5, 14.2);
        assert_eq!(i.baseline.tps, Some(100.0));
        assert_eq!(i.baseline.qps, Some(2000.0));
        assert_eq!(i.during.tps, Some(50.0)); // 250 in 5 s
        assert_eq!(i.tps_ratio, Some(0.5));
        assert_eq!(i.qps_ratio, Some(0.5));
        // p50 of the baseline is 1 ms (3 significant figures)
        assert_eq!(i.baseline.p50_us, Some(1_000));
        let p99 = i.during.p99_us.unwrap();
        assert!((2_990_000..=3_010_000).contains(&p99), "{p99}");
        assert!(i.p99_ratio.unwrap() > 2_000.0);
        assert_eq!(i.worst_tps, Some((11, 0.0)));
        assert_eq!(i.worst_p99_us.map(|(s, _)| s), Some(13));
        // 15 is 150 (catching up), 16..18 are within 5%: recovered 1 s after the first full
        // second after the DDL.
        assert_eq!(i.recovery_tps_s, Some(1));
        // p99 within 5% of 1 ms: 16 (1 ms), 17 (1.02 ms), 18.
        assert_eq!(i.recovery_p99_s, Some(1));
        let max = i.after.max_us.unwrap();
        assert!((100_000..100_200).contains(&max), "{max}");
    }

    #[test]
    fn not_recovered_and_empty_windows() {
        let mut v: Vec<Second> = (0..5).map(|_| sec(100, 1_000)).collect();
        v.extend((0..5).map(|_| sec(50, 9_000)));
        let i = analyse(&v, 5.0, 6.0);
        assert_eq!(i.recovery_tps_s, None);
        assert_eq!(i.recovery_p99_s, None);
        // A DDL at the very start: no baseline, so no ratios and no recovery.
        let i = analyse(&v, 0.0, 0.3);
        assert_eq!(i.baseline.seconds, 0);
        assert_eq!(i.baseline.tps, None);
        assert_eq!(i.tps_ratio, None);
        assert_eq!(i.during.seconds, 1);
        assert_eq!(i.recovery_tps_s, None);
        // A DDL that had not ended when the run stopped: during runs to the end.
        let i = analyse(&v, 4.5, 99.0);
        assert_eq!(
            (i.during.from_s, i.during.seconds, i.after.seconds),
            (4, 6, 0)
        );
    }

    #[test]
    fn errors_by_code_per_window() {
        let mut v: Vec<Second> = (0..6).map(|_| sec(10, 1_000)).collect();
        v[1].errors.insert("1205".into(), 2);
        v[3].errors.insert("1205".into(), 1);
        v[3].errors.insert("40P01".into(), 4);
        v[3].retries = 3;
        v[3].retry_codes.insert("1213".into(), 3);
        let i = analyse(&v, 3.0, 4.0);
        assert_eq!(i.baseline.errors.get("1205"), Some(&2));
        assert_eq!(i.during.errors.get("1205"), Some(&1));
        assert_eq!(i.during.errors.get("40P01"), Some(&4));
        assert_eq!(i.during.retries, 3);
        assert_eq!(i.during.retry_codes.get("1213"), Some(&3));
        assert!(i.after.errors.is_empty());
        assert_eq!(v[3].error_count(), 5);
    }
}
