//! What `ixbench ddl` stores in run.json: the schema change asked for and how the engine ran
//! it, the load's probe and rate, and per knob point the DDL's outcome (time, retries, errors,
//! progress, lock waits), its impact on the load (baseline/during/catch-up/after windows, the
//! backlog, recovery and whether the comparison is a verdict at all), the per-interval
//! timeline and the checks after.

use serde::{Deserialize, Serialize};

use super::verdict::State;
use super::Check;
use crate::dbms::ddl::{DdlPlan, DdlRequest};
use crate::measure::windows::Impact;

/// The whole `ixbench ddl` run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct DdlRunResult {
    /// The engine's dialect (`PostgreSQL`, `MariaDB InnoDB`, `MyRocks`, `SQLite`, `TiDB`).
    pub dialect: String,
    /// The workload and its transaction mix (`oltp_read_write`, ...).
    pub workload: String,
    /// Seed 003's test plan (`writes-indexed-column`, `read-only`, `unrelated-column`).
    pub plan: String,
    /// The schema change asked for.
    pub request: Option<DdlRequest>,
    /// How the engine runs it: statements, lock, notes.
    pub statements: DdlPlan,
    /// Client threads of the load.
    pub threads: usize,
    /// The closed-loop probe that measured the load's ceiling, when it ran.
    pub probe: Option<Probe>,
    /// Offered rate, transactions per second (all threads).
    pub rate: Option<f64>,
    /// Where the rate came from (`70% of the probe's 1234.5 TPS`, `--rate`).
    pub rate_source: String,
    /// One per knob point, in order.
    pub points: Vec<DdlPoint>,
    /// The worst state of the points ([`State::overall`]; see [`DdlPoint::judge`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
    /// What makes the whole run's figures doubtful (a probe that was not steady), one line
    /// each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The closed-loop probe.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Probe {
    /// Seconds measured.
    pub seconds: f64,
    /// Transactions completed.
    pub txns: u64,
    /// Transactions per second.
    pub tps: f64,
    /// Statements per second.
    pub qps: f64,
    /// Coefficient of variation of its per-interval TPS (after the first second): how steady
    /// the machine was while it ran; `None` with fewer than 3 intervals.
    #[serde(default)]
    pub tps_spread: Option<f64>,
    /// Length of its intervals, seconds (`None`: one second, results from before).
    #[serde(default)]
    pub interval_s: Option<f64>,
}

/// One knob point: the load with the DDL in the middle.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct DdlPoint {
    /// Knob settings (name, value as the DBMS reports it).
    pub knobs: Vec<(String, String)>,
    /// DDL done, load without unexpected errors, checks passed.
    pub ok: bool,
    /// Why the point failed, on one line.
    pub error: Option<String>,
    /// The DDL.
    pub ddl: DdlOutcome,
    /// The impact on the load, when there were seconds to analyse.
    pub impact: Option<Impact>,
    /// Offered rate of this point, TPS.
    pub offered_tps: Option<f64>,
    /// Length of the timeline's intervals, seconds (`None`: one second, results from before
    /// it was chosen).
    #[serde(default)]
    pub interval_s: Option<f64>,
    /// How the interval was chosen (`--interval`, or from the rate and the DDL's length).
    #[serde(default)]
    pub interval_source: String,
    /// Intended starts not taken when the load stopped (the load had fallen behind its rate).
    pub behind_at_end: u64,
    /// Reconnections of the load's clients (after a lost connection, e.g. a server restart).
    pub reconnects: u64,
    /// The first foreground error that stopped the point (`--on-error stop`).
    pub foreground_error: Option<String>,
    /// Checks after the DDL.
    pub checks: Vec<Check>,
    /// One row per interval of the load.
    pub timeline: Vec<TimelineRow>,
    /// Per Galera node over this span (`--target galera`; see [`crate::results::cluster`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<crate::results::cluster::NodeStep>,
    /// What went wrong without failing the point (a cluster node that left), one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// How the change was made and what it cost (`--method`; see
    /// [`crate::results::schema_tools`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<crate::results::schema_tools::MethodOutcome>,
    /// The point's state on the one verdict model ([`DdlPoint::judge`]), stored when the point
    /// ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
    /// Why it is in that state, on one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_why: Option<String>,
}

impl DdlRunResult {
    /// Judge every point ([`DdlPoint::judge`]), store each state and why, and the run's
    /// overall state (the worst).
    pub fn judge(&mut self) {
        for p in &mut self.points {
            let (st, why) = p.judge();
            p.state = Some(st);
            p.state_why = Some(why);
        }
        self.state = Some(State::overall(self.points.iter().map(|p| p.judge().0)));
    }
}

impl DdlPoint {
    /// The point's state on the one verdict model ([`crate::results::verdict`]) and why, from
    /// its stored figures (docs/ddl.md, "States"):
    /// - FAILED: the point failed (the DDL, the load under `--on-error continue`, a check);
    /// - NO VERDICT: no impact to analyse, a baseline that missed its load
    ///   ([`crate::measure::windows::RATE_RULE`]), a baseline too short for a band, no time
    ///   after the DDL to judge recovery, or an after-window figure unknown;
    /// - REGRESSION: the load relapsed, did not recover within the run, or its after window
    ///   is worse than the baseline beyond the band (TPS below its bottom, p99 above its top):
    ///   a new steady state that is worse;
    /// - IMPROVED: recovered and held, and the after window better beyond the band (TPS above
    ///   its top, or p99 below the baseline's divided by 1 + [`P99_TOLERANCE`]);
    /// - NO CHANGE: recovered and held, the after window within the band.
    ///
    /// [`P99_TOLERANCE`]: crate::measure::windows::P99_TOLERANCE
    pub fn judge(&self) -> (State, String) {
        use crate::measure::windows::P99_TOLERANCE;
        if !self.ok || self.error.is_some() {
            let why = self
                .error
                .clone()
                .or_else(|| self.ddl.error.clone())
                .unwrap_or_else(|| "a check after the DDL failed".into());
            return (State::Failed, why);
        }
        let nv = |why: &str| (State::NoVerdict, why.to_string());
        let Some(i) = &self.impact else {
            return nv("no load figures to judge");
        };
        if !i.no_verdict.is_empty() {
            return (
                State::NoVerdict,
                format!("the baseline missed its load: {}", i.no_verdict.join("; ")),
            );
        }
        let Some(band) = &i.band else {
            return nv("the baseline was too short to have a band (--baseline-seconds)");
        };
        let after_ddl = i.catchup.seconds + i.after.seconds;
        if !i.relapses.is_empty() {
            let n = i.relapses.len();
            return (
                State::Regression,
                format!(
                    "the load relapsed {n} time{} after it was back in the band",
                    if n == 1 { "" } else { "s" }
                ),
            );
        }
        if i.recovery_s.is_none() {
            if after_ddl <= 0.0 {
                return nv("no time after the DDL to judge recovery (--recovery-seconds)");
            }
            return (
                State::Regression,
                format!("not recovered in the {after_ddl:.1} s after the DDL"),
            );
        }
        let (Some(tps), Some(p99), Some(base_p99), Some(p99_hi)) = (
            i.after.tps,
            i.after.p99_us,
            i.baseline.p99_us,
            band.p99_hi_us,
        ) else {
            return nv("the after window's or the baseline's TPS or p99 is unknown");
        };
        let ms = |us: u64| format!("{:.2} ms", us as f64 / 1000.0);
        if tps < band.tps_lo {
            return (
                State::Regression,
                format!(
                    "recovered, but the after window's {tps:.1} TPS is below the band ({:.1}..{:.1})",
                    band.tps_lo, band.tps_hi
                ),
            );
        }
        if p99 > p99_hi {
            return (
                State::Regression,
                format!(
                    "recovered, but the after window's p99 {} is above the band's top {}",
                    ms(p99),
                    ms(p99_hi)
                ),
            );
        }
        if tps > band.tps_hi {
            return (
                State::Improved,
                format!(
                    "recovered; the after window's {tps:.1} TPS is above the band ({:.1}..{:.1})",
                    band.tps_lo, band.tps_hi
                ),
            );
        }
        if (p99 as f64) * (1.0 + P99_TOLERANCE) < base_p99 as f64 {
            return (
                State::Improved,
                format!(
                    "recovered; the after window's p99 {} is below the baseline's {} / {}",
                    ms(p99),
                    ms(base_p99),
                    1.0 + P99_TOLERANCE
                ),
            );
        }
        (
            State::NoChange,
            "recovered and held; the after window is within the baseline's band".into(),
        )
    }

    /// The lines that must be read before any figure of a point, loudly: the comparison is no
    /// verdict on the DDL (the load missed its offered rate without it), or the DDL was too short
    /// for the timeline's intervals.
    pub fn verdict_lines(&self) -> Vec<String> {
        let p = self;
        let mut out = Vec::new();
        let Some(i) = &p.impact else { return out };
        if !i.no_verdict.is_empty() {
            out.push(format!(
                "NO VERDICT: {}: the before/during/after comparison is not a measurement of the \
             DDL (offer a lower --rate or --rate-fraction; {})",
                i.no_verdict.join("; "),
                crate::measure::windows::RATE_RULE
            ));
        }
        if i.too_short {
            out.push(format!(
                "DDL TOO SHORT: the DDL ran {} s, less than half of its during window ({:.2} s of \
             {} s intervals): its windows cannot show it and there is no during/baseline \
             ratio; its effect is the worst interval's latency (max {} ms) and the backlog{}",
                p.ddl.seconds.map_or("-".into(), ddl_secs),
                i.during.seconds,
                short_secs(p.interval_s.or(i.interval_s).unwrap_or(1.0)),
                i.during
                    .max_us
                    .map_or_else(|| "-".into(), crate::format::ms2),
                match (p.interval_s, p.ddl.seconds) {
                    (Some(v), Some(d))
                        if 2.0 * d >= crate::measure::interval::MIN_INTERVAL_SECS
                            && 2.0 * d < v =>
                    {
                        format!(" (--interval {} would show it)", short_secs(2.0 * d))
                    }
                    _ => String::new(),
                }
            ));
        }
        out
    }
}

/// A DDL's seconds: two decimals, three when shorter than a tenth.
pub fn ddl_secs(s: f64) -> String {
    if s < 0.1 {
        format!("{s:.3}")
    } else {
        format!("{s:.2}")
    }
}

/// Seconds without trailing zeros (`0.2`, `1`, `0.05`).
pub fn short_secs(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// How the DDL went.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct DdlOutcome {
    /// Seconds from the load's start to the DDL's first statement.
    pub started_s: Option<f64>,
    /// Seconds from the load's start to its end (success or failure).
    pub ended_s: Option<f64>,
    /// Wall seconds of the DDL (all attempts), `None` when it did not run.
    pub seconds: Option<f64>,
    /// Attempts (1 + retries).
    pub attempts: u32,
    /// The error of each failed attempt, with its code.
    pub attempt_errors: Vec<String>,
    /// The final error, when it failed.
    pub error: Option<String>,
    /// Its code (SQLSTATE, error number), when it failed.
    pub error_code: Option<String>,
    /// True when ixbench cancelled it (timeout, a foreground error, Ctrl-C).
    pub cancelled: bool,
    /// True when the cancel was ixbench's own `--ddl-timeout` (the DBMS's error then only
    /// says a user cancelled the statement).
    #[serde(default)]
    pub timed_out: bool,
    /// Progress samples: (seconds from the load's start, what the progress view said).
    pub progress: Vec<(f64, String)>,
    /// Lock waits seen while sampling.
    pub lock_waits: Vec<LockWait>,
    /// The most sessions seen waiting behind the DDL at once.
    pub max_blocked_sessions: u32,
    /// INVALID indexes a failed online build left, reported and dropped.
    pub invalid_dropped: Vec<String>,
}

/// A stretch of samples in which the DDL waited for the same thing.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct LockWait {
    /// What it waited for.
    pub what: String,
    /// First sample, seconds from the load's start.
    pub from_s: f64,
    /// From the first to the last sample that saw it, seconds.
    pub seconds: f64,
    /// The longest wait the server reported, seconds.
    pub server_secs: Option<f64>,
}

/// One interval of the load (the reporter's interval: see [`crate::measure::reporter`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct TimelineRow {
    /// Knob point (index into the points, from 0).
    pub point: usize,
    /// Start of the interval, seconds from the load's start (whole seconds in results from
    /// before intervals could be shorter).
    pub t: f64,
    /// Length of the interval, seconds.
    #[serde(default = "one_second")]
    pub i_sec: f64,
    /// `probe`, `baseline`, `during`, `catch-up`, `after`.
    pub window: String,
    /// Transactions completed in this interval.
    pub txns: u64,
    /// Statements completed.
    pub queries: u64,
    /// Median latency, microseconds.
    pub p50_us: Option<u64>,
    /// 99th percentile, microseconds.
    pub p99_us: Option<u64>,
    /// Largest, microseconds.
    pub max_us: Option<u64>,
    /// Failed transactions.
    pub errors: u64,
    /// Retries.
    pub retries: u64,
    /// The DDL's phase in this interval (last progress sample).
    pub phase: Option<String>,
    /// What the DDL waited for, and who waited behind it.
    pub waits: Option<String>,
    /// `DDL start`, `DDL end`, `DDL failed`, `DDL cancelled`, `drained`.
    pub marks: Vec<String>,
    /// Intended starts due and not yet taken at the interval's end (`None`: closed loop, or
    /// results from before it was measured).
    #[serde(default)]
    pub backlog: Option<u64>,
}

fn one_second() -> f64 {
    1.0
}

impl Default for TimelineRow {
    fn default() -> Self {
        TimelineRow {
            point: 0,
            t: 0.0,
            i_sec: 1.0,
            window: String::new(),
            txns: 0,
            queries: 0,
            p50_us: None,
            p99_us: None,
            max_us: None,
            errors: 0,
            retries: 0,
            phase: None,
            waits: None,
            marks: Vec::new(),
            backlog: None,
        }
    }
}

impl TimelineRow {
    /// Transactions per second in this interval.
    pub fn tps(&self) -> f64 {
        if self.i_sec > 0.0 {
            self.txns as f64 / self.i_sec
        } else {
            0.0
        }
    }

    /// Statements per second.
    pub fn qps(&self) -> f64 {
        if self.i_sec > 0.0 {
            self.queries as f64 / self.i_sec
        } else {
            0.0
        }
    }
}

/// Group consecutive wait samples `(t, what, server_secs)` into [`LockWait`]s: a stretch ends
/// when a sample sees something else or nothing.
pub fn lock_waits(samples: &[(f64, Option<String>, Option<f64>)]) -> Vec<LockWait> {
    let mut out: Vec<LockWait> = Vec::new();
    let mut open = false;
    for (t, what, secs) in samples {
        match what {
            Some(w) => {
                if let Some(last) = out.last_mut().filter(|l| open && &l.what == w) {
                    last.seconds = t - last.from_s;
                    last.server_secs = match (last.server_secs, secs) {
                        (Some(a), Some(b)) => Some(a.max(*b)),
                        (a, b) => a.or(*b),
                    };
                } else {
                    out.push(LockWait {
                        what: w.clone(),
                        from_s: *t,
                        seconds: 0.0,
                        server_secs: *secs,
                    });
                }
                open = true;
            }
            None => open = false,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_stretches() {
        let s = |t: f64, w: Option<&str>, x: Option<f64>| (t, w.map(String::from), x);
        let v = lock_waits(&[
            s(1.0, None, None),
            s(2.0, Some("mdl"), Some(0.0)),
            s(3.0, Some("mdl"), Some(1.0)),
            s(4.0, Some("mdl"), None),
            s(5.0, None, None),
            s(6.0, Some("mdl"), Some(0.0)),
            s(7.0, Some("virtualxid"), None),
        ]);
        assert_eq!(v.len(), 3);
        assert_eq!(
            (v[0].from_s, v[0].seconds, v[0].server_secs),
            (2.0, 2.0, Some(1.0))
        );
        assert_eq!((v[1].from_s, v[1].seconds), (6.0, 0.0));
        assert_eq!(v[2].what, "virtualxid");
    }
}
