//! Per-interval lines: the arithmetic from two counter snapshots, and the insert benchmark's
//! two text forms (seed 000's 10 columns, and the current 17 columns with deletes and retries);
//! what the reporter knows of an interval beside its line ([`IntervalDetail`]: its own counts,
//! transaction histograms and errors), which the live view and the transaction lines read.

use serde::{Deserialize, Serialize};

use std::time::Instant;

use super::meter::{KindHists, Totals};

/// The shortest interval between two lines, seconds (`--interval`).
pub const MIN_INTERVAL_SECS: f64 = 0.05;

/// An interval shorter than this share of its step's interval is no rate figure: a step's last
/// interval, cut where the step ended, may be a few milliseconds with a handful of operations,
/// and their rate (over its real length) is noise. The rates' percentiles leave it out
/// ([`super::reporter`]) and the report's charts draw no rate point for it
/// ([`crate::export::chart::rate_points`]); its operations count in every total.
pub const SHORT_INTERVAL_SHARE: f64 = 0.5;

/// Whether an interval of `i_sec` seconds is short ([`SHORT_INTERVAL_SHARE`]) for a step whose
/// interval is `interval` seconds.
pub fn is_short(i_sec: f64, interval: f64) -> bool {
    i_sec < interval * SHORT_INTERVAL_SHARE
}

/// Which per-interval text form to print.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, schemars::JsonSchema,
)]
pub enum LineFormat {
    /// `i_sec t_sec i_ips t_ips i_qps t_qps max_i max_q t_ins t_query` (seed 000).
    V1,
    /// The current 17-column form with deletes and retries.
    V2,
}

/// One interval of one step, as printed and as stored in `intervals.ndjson`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IntervalLine {
    /// Step name (`l.i1`, `qr100`, ...).
    pub step: String,
    /// Interval number within the step, from 1.
    pub n: u64,
    /// Length of this interval in seconds.
    pub i_sec: f64,
    /// Seconds since the step began.
    pub t_sec: f64,
    /// Rows inserted per second in this interval.
    pub i_ips: f64,
    /// Rows inserted per second since the step began.
    pub t_ips: f64,
    /// Rows deleted per second in this interval.
    pub i_dps: f64,
    /// Rows deleted per second since the step began.
    pub t_dps: f64,
    /// Queries per second in this interval.
    pub i_qps: f64,
    /// Queries per second since the step began.
    pub t_qps: f64,
    /// Largest insert response time in the interval, microseconds (0 exactly when no insert
    /// completed, or was counted as never started, in the interval).
    pub max_i: u64,
    /// Largest delete response time in the interval, microseconds.
    pub max_d: u64,
    /// Largest query response time in the interval, microseconds.
    pub max_q: u64,
    /// Rows inserted since the step began.
    pub t_ins: u64,
    /// Rows deleted since the step began.
    pub t_del: u64,
    /// Queries since the step began.
    pub t_query: u64,
    /// Insert retries in the interval.
    pub retry_i: u64,
    /// Delete retries in the interval.
    pub retry_d: u64,
    /// Query retries in the interval.
    pub retry_q: u64,
    /// Seconds since the last operation of the step completed, when at least a second (or the
    /// stall timeout, if shorter) at the line's end; `null` otherwise. Printed as `STALLED`.
    #[serde(default)]
    pub stalled_secs: Option<f64>,
    /// Size of the write-ahead log at the end of the interval, bytes (SQLite: the `-wal`
    /// file); `None` (null: unknown) for other targets.
    #[serde(default)]
    pub wal_bytes: Option<u64>,
    /// Wall-clock time of the interval's end (its cut), Unix seconds: what `ixbench merge`
    /// lines intervals of several processes up by. `None` in results written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<f64>,
    /// Intended starts of the open-loop writers that were due and not yet taken at the
    /// interval's end (sysbench's queue): it grows while the database holds the writers up and
    /// falls as they catch up. `None` (left out) for closed-loop steps, which have no
    /// schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog: Option<u64>,
}

impl IntervalLine {
    /// Compute a line from the counter totals at the start (`prev`) and end (`cur`) of the
    /// interval, the interval length, the time since the step began, and the interval maxima.
    pub fn compute(
        step: &str,
        n: u64,
        prev: &Totals,
        cur: &Totals,
        i_sec: f64,
        t_sec: f64,
        max: [u64; 3],
    ) -> Self {
        let rate = |v: u64, secs: f64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
        let d = |k: usize| cur.rows[k].saturating_sub(prev.rows[k]);
        let dq = cur.ops[2].saturating_sub(prev.ops[2]);
        IntervalLine {
            step: step.to_string(),
            n,
            i_sec,
            t_sec,
            i_ips: rate(d(0), i_sec),
            t_ips: rate(cur.rows[0], t_sec),
            i_dps: rate(d(1), i_sec),
            t_dps: rate(cur.rows[1], t_sec),
            i_qps: rate(dq, i_sec),
            t_qps: rate(cur.ops[2], t_sec),
            max_i: max[0],
            max_d: max[1],
            max_q: max[2],
            t_ins: cur.rows[0],
            t_del: cur.rows[1],
            t_query: cur.ops[2],
            retry_i: cur.retries[0].saturating_sub(prev.retries[0]),
            retry_d: cur.retries[1].saturating_sub(prev.retries[1]),
            retry_q: cur.retries[2].saturating_sub(prev.retries[2]),
            stalled_secs: None,
            wal_bytes: None,
            at: None,
            backlog: None,
        }
    }

    /// The column header for `fmt`.
    pub fn header(fmt: LineFormat) -> &'static str {
        match fmt {
            LineFormat::V1 => "i_sec\tt_sec\ti_ips\tt_ips\ti_qps\tt_qps\tmax_i\tmax_q\tt_ins\tt_query",
            LineFormat::V2 => "i_sec\tt_sec\ti_ips\tt_ips\ti_dps\tt_dps\ti_qps\tt_qps\tmax_i\tmax_d\tmax_q\tt_ins\tt_del\tt_query\tretry_i\tretry_d\tretry_q",
        }
    }

    /// The line as text in `fmt` (tab-separated, like the insert benchmark), with a
    /// `backlog <n>` column after them when the writers are paced and not all caught up, and a
    /// `STALLED <s>s` column at the end when the step stalled.
    pub fn format(&self, fmt: LineFormat) -> String {
        let mut s = self.columns(fmt);
        if let Some(b) = self.backlog.filter(|b| *b > 0) {
            s.push_str(&format!("\tbacklog {b}"));
        }
        if let Some(st) = self.stalled_secs {
            s.push_str(&format!("\tSTALLED {st:.1}s"));
        }
        s
    }

    fn columns(&self, fmt: LineFormat) -> String {
        match fmt {
            LineFormat::V1 => format!(
                "{}\t{}\t{:.0}\t{:.0}\t{:.0}\t{:.0}\t{}\t{}\t{}\t{}",
                secs(self.i_sec),
                secs(self.t_sec),
                self.i_ips,
                self.t_ips,
                self.i_qps,
                self.t_qps,
                self.max_i,
                self.max_q,
                self.t_ins,
                self.t_query
            ),
            LineFormat::V2 => format!(
                "{}\t{}\t{:.0}\t{:.0}\t{:.0}\t{:.0}\t{:.0}\t{:.0}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                secs(self.i_sec),
                secs(self.t_sec),
                self.i_ips,
                self.t_ips,
                self.i_dps,
                self.t_dps,
                self.i_qps,
                self.t_qps,
                self.max_i,
                self.max_d,
                self.max_q,
                self.t_ins,
                self.t_del,
                self.t_query,
                self.retry_i,
                self.retry_d,
                self.retry_q
            ),
        }
    }
}

/// Seconds with one decimal, or three when that would hide a partial interval (a step's
/// last interval ends when its workers end).
fn secs(v: f64) -> String {
    if ((v * 10.0).round() - v * 10.0).abs() < 0.05 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The value at rank `q` (0..=1) of per-interval rates, nearest-rank on the sorted values.
///
/// The insert benchmark's p50/p99 summary columns are of this kind: a throughput at a rank, to
/// show bad intervals. For a "bad interval" figure use a low rank (e.g. q = 0.01).
pub fn rate_at_rank(rates: &[f64], q: f64) -> f64 {
    if rates.is_empty() {
        return 0.0;
    }
    let mut v = rates.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let idx = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[idx]
}

/// What the reporter knows of one interval beyond its [`IntervalLine`]: its own counts (not
/// cumulative), when it ended, and its transactions' histograms and errors, so a caller can
/// keep each interval's histogram (per-second p99, windows merged from intervals).
#[derive(Debug, Default)]
pub struct IntervalDetail {
    /// Counts of this interval only.
    pub totals: Totals,
    /// Transactions' histograms of this interval (empty when none completed).
    pub txn: KindHists,
    /// Errors of transaction attempts in this interval by code, with counts.
    pub error_codes: Vec<(String, u64)>,
    /// Of those, the ones that were not run again (failed transactions), by code.
    pub fail_codes: Vec<(String, u64)>,
    /// Intended starts due and not taken at the cut, `None` in a closed loop.
    pub backlog: Option<u64>,
    /// The cut that ended the interval.
    pub cut: Option<Instant>,
    /// How long no operation had completed at the cut, when at least the stall mark.
    pub stalled_secs: Option<f64>,
}

/// Merge error counts by code.
pub fn add_error_codes(into: &mut Vec<(String, u64)>, from: &[(String, u64)]) {
    for (c, n) in from {
        match into.iter_mut().find(|(k, _)| k == c) {
            Some((_, m)) => *m += n,
            None => into.push((c.clone(), *n)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(ins: u64, del: u64, q: u64, retries: [u64; 3]) -> Totals {
        Totals {
            ops: [ins / 100, del / 100, q],
            rows: [ins, del, q * 10],
            retries,
            never_started: [0; 3],
            ..Default::default()
        }
    }

    #[test]
    fn rates_from_snapshots() {
        let prev = totals(1_000, 500, 20, [1, 0, 0]);
        let cur = totals(3_000, 1_500, 70, [4, 1, 0]);
        let l = IntervalLine::compute("l.i1", 3, &prev, &cur, 0.5, 2.5, [900, 80, 7]);
        assert_eq!(l.i_ips, 4_000.0); // 2000 rows in 0.5 s
        assert_eq!(l.t_ips, 1_200.0); // 3000 rows in 2.5 s
        assert_eq!(l.i_dps, 2_000.0);
        assert_eq!(l.t_dps, 600.0);
        assert_eq!(l.i_qps, 100.0);
        assert_eq!(l.t_qps, 28.0);
        assert_eq!((l.retry_i, l.retry_d, l.retry_q), (3, 1, 0));
        assert_eq!((l.t_ins, l.t_del, l.t_query), (3_000, 1_500, 70));
        let v1 = l.format(LineFormat::V1);
        assert_eq!(v1, "0.5\t2.5\t4000\t1200\t100\t28\t900\t7\t3000\t70");
        assert_eq!(
            v1.split('\t').count(),
            IntervalLine::header(LineFormat::V1).split('\t').count()
        );
        assert_eq!(
            l.format(LineFormat::V2).split('\t').count(),
            IntervalLine::header(LineFormat::V2).split('\t').count()
        );
    }

    #[test]
    fn stalled_lines_say_so() {
        let t = Totals::default();
        let mut l = IntervalLine::compute("x", 1, &t, &t, 1.0, 5.0, [0; 3]);
        assert!(!l.format(LineFormat::V1).contains("STALLED"));
        l.stalled_secs = Some(4.04);
        assert!(l.format(LineFormat::V1).ends_with("\tSTALLED 4.0s"));
        l.backlog = Some(0);
        assert!(!l.format(LineFormat::V2).contains("backlog"));
        l.backlog = Some(12);
        assert!(l
            .format(LineFormat::V2)
            .ends_with("\tbacklog 12\tSTALLED 4.0s"));
        assert!(l.format(LineFormat::V2).ends_with("\tSTALLED 4.0s"));
    }

    #[test]
    fn partial_intervals_keep_their_length() {
        assert_eq!(secs(1.0), "1.0");
        assert_eq!(secs(12.0004), "12.0");
        assert_eq!(secs(0.025), "0.025");
        assert_eq!(secs(12.025), "12.025");
    }

    #[test]
    fn zero_length_is_not_a_division_by_zero() {
        let t = Totals::default();
        let l = IntervalLine::compute("x", 1, &t, &t, 0.0, 0.0, [0; 3]);
        assert_eq!(l.i_ips, 0.0);
        assert_eq!(l.t_qps, 0.0);
    }

    #[test]
    fn ranks() {
        let r = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(rate_at_rank(&r, 0.5), 3.0);
        assert_eq!(rate_at_rank(&r, 0.01), 1.0);
        assert_eq!(rate_at_rank(&r, 0.99), 5.0);
        assert_eq!(rate_at_rank(&[], 0.5), 0.0);
    }
}
