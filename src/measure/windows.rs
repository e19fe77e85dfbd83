//! What a schema change did to the load around it, from the load's interval figures (the
//! reporter's intervals, see [`super::reporter`]): the baseline (before the DDL), during,
//! catch-up and after windows, their TPS, QPS and latency percentiles (from the merged
//! histograms, never averaged percentiles), the during/baseline ratios, the worst interval
//! during the DDL, the backlog of intended starts (its peak and when it drained) and the time
//! the load took to recover. Pure: no clock, no database.
//!
//! Interval `i` covers `[t, t + secs)` seconds from the start of the load; a transaction counts
//! in the interval it completed in, and the backlog is read at the interval's end. The windows
//! are whole intervals and add up to the run:
//! - baseline: the intervals that ended before the DDL started;
//! - during: every interval the DDL ran in (at least one);
//! - catch-up: after the DDL, until the backlog is back to the baseline's level (an open loop
//!   that was held up runs above its rate until it has started what was due: that is not the
//!   steady state, and it is not recovery);
//! - after: the rest, the steady state after the DDL.
//!
//! Recovery ([`RULE`]) is judged over stretches of [`RECOVERY_HOLD_SECS`] (at least
//! [`RECOVERY_HOLD_INTERVALS`] intervals): a stretch is within the band when its TPS is within
//! the baseline's band, its p99 at most the band's top and the backlog back to the baseline's
//! level at every interval's end. The band is the spread of the baseline's own stretches of
//! that length (5th to 95th percentile from 20 stretches on, else lowest to highest), at least
//! ±5% of its TPS and [`P99_TOLERANCE`] above its p99: like is judged with like, so one slow
//! transaction in a short interval is not a relapse. After the catch-up the load has
//! *returned* at the first stretch within the band; it has *recovered* at the first stretch
//! from which every stretch stays within the band to the end of the run (or for the hold time
//! asked, `--recovery-hold`) but for blips (listed); a departure after the first return
//! longer than a stretch, or one in which the load stalled (an interval with nothing
//! completed, a backlog above the baseline's highest), is a [`Relapse`], with its start,
//! length and worst interval; a shorter one without a stall (a slow transaction or two) is a
//! blip. The after window's own TPS and
//! p99 against the baseline's ([`Impact::after_tps_ratio`]) say whether the load came back to
//! where it was or to a new steady state.
//!
//! A verdict needs a baseline that kept its offered rate ([`RATE_RULE`]): when the baseline
//! completed less than [`RATE_MET`] of the offered rate, when it had a standing backlog (its
//! backlog level, see [`backlog_level`], more than the starts due in [`BACKLOG_TOLERANCE_S`]:
//! its transactions started late all along, so the load had no headroom and a DDL's backlog
//! could never be told from the baseline's), or when its backlog grew to its end, the load
//! could not keep its rate without any DDL and the comparison says nothing about the DDL
//! ([`Impact::no_verdict`]). A
//! DDL that covers less than half of its during window ([`MIN_COVERAGE`]) is too short for the
//! windows to show it: no ratios then ([`Impact::too_short`]).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::measure::histogram::new_hist;

/// TPS within this share of the baseline's counts as recovered, at the least (the band is
/// wider when the baseline's own stretches spread more).
pub const RECOVERY_TOLERANCE: f64 = 0.05;

/// A p99 up to this share above the baseline's counts as recovered, at the least: a tail
/// figure moves that much between two windows of the same steady load (`compare` needs a
/// tail figure to double before it calls it a change).
pub const P99_TOLERANCE: f64 = 0.5;

/// Seconds of a stretch: the unit recovery is judged in (a stretch's TPS and p99 against the
/// band of the baseline's stretches of the same length).
pub const RECOVERY_HOLD_SECS: f64 = 1.0;

/// Intervals of a stretch, at the least.
pub const RECOVERY_HOLD_INTERVALS: usize = 3;

/// The baseline must complete at least this share of the offered rate.
pub const RATE_MET: f64 = 0.95;

/// The baseline's backlog level may be at most the intended starts due in this many seconds
/// at the offered rate (and at least 2 starts): a load with headroom takes its starts on
/// time, give or take a transaction in flight; one whose starts wait longer than this all
/// along runs at its limit.
pub const BACKLOG_TOLERANCE_S: f64 = 0.1;

/// The rule a baseline must meet for a verdict, as printed with the results.
pub const RATE_RULE: &str = "a verdict needs a baseline that kept its offered rate: completed \
    at least 95% of it, a backlog level (90th percentile of its intervals' ends) of at most the \
    starts due in 0.1 s (at least 2), and a backlog at its end of at most 5% of the starts due \
    in it (at least 2)";

/// The DDL must cover at least this share of its during window for ratios.
pub const MIN_COVERAGE: f64 = 0.5;

/// The recovery rule, as printed with the results.
pub const RULE: &str = "catch-up: from the DDL's end until the backlog of intended starts is \
    back to the baseline's level; after: from there on; a stretch: 1 s (at least 3 intervals), \
    within the band when its TPS is within the baseline's band, its p99 at most the band's top \
    and the backlog at the baseline's level at every interval's end (the band: what the \
    baseline's own stretches did, at least +-5% of its TPS and up to 1.5x its p99); returned: \
    the first stretch after the catch-up within the band; relapse: out of the band again after \
    that for longer than a stretch, or with a stall (an interval with nothing completed, a \
    backlog above the baseline's highest); blip: a shorter departure without a stall; \
    recovered: from the first stretch within the band with no relapse after it to the end of \
    the run (or for --recovery-hold)";

/// The load's figures for one interval.
#[derive(Debug, Clone)]
pub struct IntervalStats {
    /// Start, seconds from the load's start.
    pub t: f64,
    /// Length, seconds.
    pub secs: f64,
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
    /// Intended starts due and not taken at the interval's end; `None` in a closed loop.
    pub backlog: Option<u64>,
}

impl Default for IntervalStats {
    fn default() -> Self {
        IntervalStats {
            t: 0.0,
            secs: 1.0,
            txns: 0,
            queries: 0,
            errors: BTreeMap::new(),
            retries: 0,
            retry_codes: BTreeMap::new(),
            hist: new_hist(),
            backlog: None,
        }
    }
}

impl IntervalStats {
    /// Add another interval's figures (counts and histogram; times are kept).
    pub fn add(&mut self, o: &IntervalStats) {
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

    /// End, seconds from the load's start.
    pub fn end(&self) -> f64 {
        self.t + self.secs
    }

    /// Transactions per second.
    pub fn tps(&self) -> f64 {
        if self.secs > 0.0 {
            self.txns as f64 / self.secs
        } else {
            0.0
        }
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
    /// `baseline`, `during`, `catch-up`, `after`.
    pub name: String,
    /// Start, seconds from the start of the load.
    pub from_s: f64,
    /// Seconds in the window.
    pub seconds: f64,
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
    /// The largest backlog at an interval's end in the window (`None`: closed loop, or
    /// results from before it was measured).
    #[serde(default)]
    pub backlog_max: Option<u64>,
}

/// The backlog of intended starts around the DDL.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct BacklogStats {
    /// The largest backlog at an interval's end after the baseline.
    pub peak: u64,
    /// When it was (the interval's end), seconds from the load's start.
    pub peak_at_s: f64,
    /// The backlog at the end of the last interval the DDL ran in.
    pub at_ddl_end: u64,
    /// The baseline's backlog level ([`backlog_level`]): what "drained" returns to.
    pub baseline_level: u64,
    /// When the backlog was back to the baseline's level after the DDL (the end of that
    /// interval), seconds from the load's start; `None` when it was not within the run.
    pub drained_at_s: Option<f64>,
    /// Seconds from the end of the DDL's last interval until then (0: drained by then).
    pub drained_after_s: Option<f64>,
}

/// The baseline's band: what its own stretches of the hold time did.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Band {
    /// Lowest TPS of an interval within the band.
    pub tps_lo: f64,
    /// Highest.
    pub tps_hi: f64,
    /// Highest per-interval p99 within the band, microseconds.
    pub p99_hi_us: Option<u64>,
    /// Intervals the load must stay within the band to count as recovered.
    pub hold_intervals: u32,
}

/// A stretch of the load out of the baseline's band after it had first returned to it: its
/// start and length (whole intervals), its worst interval, its backlog and failed transactions.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Relapse {
    /// Start, seconds from the start of the load.
    pub at_s: f64,
    /// Start, seconds after the end of the DDL's last interval (as [`Impact::recovery_s`]).
    pub after_ddl_s: f64,
    /// Length, seconds (to the end of the run when `to_end`).
    pub seconds: f64,
    /// Still out of the band when the run ended.
    pub to_end: bool,
    /// The worst interval in it (the first with nothing completed, else the highest p99):
    /// its start, seconds after the end of the DDL's last interval.
    pub worst_after_ddl_s: f64,
    /// That interval's TPS.
    pub worst_tps: f64,
    /// That interval's p99, microseconds (`None`: nothing completed in it).
    pub worst_p99_us: Option<u64>,
    /// The largest backlog at an interval's end in it (`None`: closed loop).
    pub backlog_max: Option<u64>,
    /// Failed transactions in it, by error code.
    pub errors: BTreeMap<String, u64>,
}

/// The impact of the DDL on the load.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Impact {
    /// Before the DDL.
    pub baseline: WindowStats,
    /// While it ran.
    pub during: WindowStats,
    /// After it ended, until the backlog drained (empty when nothing was due late or the load
    /// had no schedule).
    #[serde(default)]
    pub catchup: WindowStats,
    /// The steady state after the DDL (from when the backlog drained).
    pub after: WindowStats,
    /// Length of the intervals, seconds (`None` in results from before it was stored: one
    /// second).
    #[serde(default)]
    pub interval_s: Option<f64>,
    /// during TPS / baseline TPS (`None` when there is no verdict or the DDL was too short).
    pub tps_ratio: Option<f64>,
    /// during QPS / baseline QPS.
    pub qps_ratio: Option<f64>,
    /// during p99 / baseline p99.
    pub p99_ratio: Option<f64>,
    /// The interval with the fewest transactions per second during the DDL: its start and
    /// its TPS.
    pub worst_tps: Option<(f64, f64)>,
    /// The interval with the highest p99 during the DDL: its start and that p99
    /// (microseconds).
    pub worst_p99_us: Option<(f64, u64)>,
    /// Seconds from the end of the DDL's last interval (the first moment the timeline can
    /// tell it is over) until the load's TPS was within the baseline's band and stayed there
    /// (every stretch to the end of the run, or for the hold time); `None` when it did not
    /// within the run.
    pub recovery_tps_s: Option<f64>,
    /// The same for the per-stretch p99 (at most the band's top).
    pub recovery_p99_s: Option<f64>,
    /// Seconds from the end of the DDL's last interval until, after the catch-up, TPS and p99
    /// were both within the band with the backlog drained and stayed so to the end of the run
    /// (or for the hold time, [`Impact::hold_s`]) ([`RULE`]); `None` when not within the run.
    /// The one recovery figure every table and line shows.
    #[serde(default)]
    pub recovery_s: Option<f64>,
    /// Seconds from the end of the DDL's last interval until the load first came back within
    /// the band after the catch-up (it may have left it again: [`Impact::relapses`]); `None`
    /// when it never did within the run.
    #[serde(default)]
    pub returned_s: Option<f64>,
    /// Each time the load left the band again after it first returned, for a stretch or
    /// longer, in order.
    #[serde(default)]
    pub relapses: Vec<Relapse>,
    /// Departures from the band after the first return shorter than a stretch (a slow
    /// transaction or two in a short interval): not relapses, listed so none is hidden.
    #[serde(default)]
    pub blips: Vec<Relapse>,
    /// Seconds the load had to stay within the band to count as recovered (`--recovery-hold`);
    /// `None`: to the end of the run.
    #[serde(default)]
    pub hold_s: Option<f64>,
    /// after TPS / baseline TPS: the steady state after the DDL against the one before it
    /// (`None` when there is no verdict or no after window).
    #[serde(default)]
    pub after_tps_ratio: Option<f64>,
    /// after p99 / baseline p99.
    #[serde(default)]
    pub after_p99_ratio: Option<f64>,
    /// The backlog of intended starts (`None` in a closed loop).
    #[serde(default)]
    pub backlog: Option<BacklogStats>,
    /// The baseline's band.
    #[serde(default)]
    pub band: Option<Band>,
    /// Whether the baseline kept the offered rate (`None`: no offered rate, or no baseline).
    #[serde(default)]
    pub rate_ok: Option<bool>,
    /// Why the before/during/after comparison is no verdict on the DDL (empty: it is one).
    #[serde(default)]
    pub no_verdict: Vec<String>,
    /// The DDL covered less than half of its during window: its windows cannot show it, and
    /// there are no ratios.
    #[serde(default)]
    pub too_short: bool,
}

/// The figures of intervals `[from, to)`.
pub fn window(name: &str, iv: &[IntervalStats], from: usize, to: usize) -> WindowStats {
    let to = to.min(iv.len());
    let from = from.min(to);
    let mut sum = IntervalStats::default();
    for s in &iv[from..to] {
        sum.add(s);
    }
    // (`+ 0.0`: the sum of nothing is -0.0)
    let secs: f64 = iv[from..to].iter().map(|s| s.secs).sum::<f64>() + 0.0;
    let start = iv
        .get(from)
        .map(|s| s.t)
        .or_else(|| iv.last().map(|s| s.end()))
        .unwrap_or(0.0);
    WindowStats {
        name: name.into(),
        from_s: start,
        seconds: secs,
        txns: sum.txns,
        queries: sum.queries,
        tps: (secs > 0.0).then(|| sum.txns as f64 / secs),
        qps: (secs > 0.0).then(|| sum.queries as f64 / secs),
        p50_us: sum.pct(0.50),
        p99_us: sum.pct(0.99),
        max_us: (!sum.hist.is_empty()).then(|| sum.hist.max()),
        errors: sum.errors,
        retries: sum.retries,
        retry_codes: sum.retry_codes,
        backlog_max: iv[from..to].iter().filter_map(|s| s.backlog).max(),
    }
}

/// The window boundaries (interval indexes): baseline `[0, a)` (intervals that ended by the
/// DDL's start), during `[a, b)` (every interval the DDL ran in, at least one), after `[b, n)`.
pub fn bounds(iv: &[IntervalStats], ddl_start: f64, ddl_end: f64) -> (usize, usize) {
    let n = iv.len();
    // A small tolerance: an interval cut a hair after a boundary the DDL started on.
    const EPS: f64 = 1e-6;
    let a = iv
        .iter()
        .position(|s| s.end() > ddl_start + EPS)
        .unwrap_or(n);
    let end = ddl_end.max(ddl_start);
    let b = iv
        .iter()
        .position(|s| s.t >= end - EPS)
        .unwrap_or(n)
        .max(a + 1)
        .min(n);
    (a, b)
}

/// The window an interval `[t, t + secs)` is in, as the timeline labels it, given the DDL's
/// start and end (`None`: not yet) and when the backlog drained after it (`None`: not yet).
pub fn label(
    t: f64,
    secs: f64,
    start: Option<f64>,
    end: Option<f64>,
    drained: Option<f64>,
) -> &'static str {
    const EPS: f64 = 1e-6;
    let Some(st) = start else { return "baseline" };
    if t + secs <= st + EPS {
        return "baseline";
    }
    match end {
        Some(e) if t >= e - EPS => match drained {
            Some(d) if t >= d - EPS => "after",
            _ => "catch-up",
        },
        _ => "during",
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// The value at rank `q` (nearest rank) of `v` (sorted here).
fn at_rank(mut v: Vec<f64>, q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    Some(v[i])
}

/// Intervals `[from, to)` merged into one (its start, summed length, counts and histogram;
/// the backlog at its end).
fn merged(iv: &[IntervalStats], from: usize, to: usize) -> IntervalStats {
    let mut m = IntervalStats {
        t: iv[from].t,
        secs: 0.0,
        backlog: iv[to - 1].backlog,
        ..Default::default()
    };
    for s in &iv[from..to] {
        m.add(s);
        m.secs += s.secs;
    }
    m
}

/// The baseline's band: TPS and p99 of each stretch of `hold` consecutive intervals of the
/// baseline `iv` (the whole baseline when it is shorter), from the lowest to the highest (the
/// 5th to the 95th percentile from 20 stretches on), at least ±5% of the baseline's TPS and
/// 50% above its p99.
fn band(iv: &[IntervalStats], base: &WindowStats, hold: usize) -> Option<Band> {
    let tps = base.tps.filter(|t| *t > 0.0)?;
    let stretches: Vec<IntervalStats> = if iv.len() <= hold {
        vec![merged(iv, 0, iv.len())]
    } else {
        (0..=iv.len() - hold)
            .map(|i| merged(iv, i, i + hold))
            .collect()
    };
    let rates: Vec<f64> = stretches.iter().map(|s| s.tps()).collect();
    let p99s: Vec<f64> = stretches
        .iter()
        .filter_map(|s| s.pct(0.99))
        .map(|v| v as f64)
        .collect();
    let (lo_q, hi_q) = if rates.len() >= 20 {
        (0.05, 0.95)
    } else {
        (0.0, 1.0)
    };
    let lo = at_rank(rates.clone(), lo_q).unwrap_or(tps);
    let hi = at_rank(rates, hi_q).unwrap_or(tps);
    let floor = base.p99_us.map(|p| p as f64 * (1.0 + P99_TOLERANCE));
    let p99_hi = match (at_rank(p99s, hi_q), floor) {
        (Some(v), Some(f)) => Some(v.max(f) as u64),
        (v, f) => v.or(f).map(|x| x as u64),
    };
    Some(Band {
        tps_lo: lo.min(tps * (1.0 - RECOVERY_TOLERANCE)),
        tps_hi: hi.max(tps * (1.0 + RECOVERY_TOLERANCE)),
        p99_hi_us: p99_hi,
        hold_intervals: hold as u32,
    })
}

/// The course of the load from interval `from` on, judged over stretches of `k` intervals
/// (`[s, s + k)` for every `s` from `from` to `n - k`; one shorter stretch, the rest of the
/// run, when fewer than `k` are left), each within the band or not (`ok`, given the stretch
/// merged and its intervals). A departure from the band after the first return is a relapse
/// when it is longer than a stretch or when the load stalled in it (`stalled`, given its
/// intervals: nothing completed in one, or a backlog above the baseline's highest); else it
/// is a blip (a slow transaction or two: at a stretch or shorter, two slow transactions in
/// different intervals are enough to put a stretch's p99 out of the band): listed, but it does
/// not undo a recovery.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Course {
    /// The first interval of the first stretch within the band.
    pub returned: Option<usize>,
    /// The first interval of the first stretch within the band from which the load has no
    /// relapse: to the end of the run, or for `need` intervals from it (fewer when the run
    /// ends first).
    pub recovered: Option<usize>,
    /// After the first return, each departure of more than `k` intervals or with a stall in
    /// it: the intervals it covers, first and last (inclusive), and whether it lasted to the
    /// end of the run.
    pub relapses: Vec<(usize, usize, bool)>,
    /// The other departures, as `relapses`.
    pub blips: Vec<(usize, usize, bool)>,
}

/// The course of intervals `from..` of `iv` (see [`Course`]); `need`: the intervals the load
/// must stay within the band to count as recovered (`None`: to the end of the run).
pub fn course(
    iv: &[IntervalStats],
    from: usize,
    k: usize,
    need: Option<usize>,
    ok: impl Fn(&IntervalStats, &[IntervalStats]) -> bool,
    stalled: impl Fn(&[IntervalStats]) -> bool,
) -> Course {
    let n = iv.len();
    let k = k.max(1);
    if from >= n {
        return Course::default();
    }
    // The stretches: their first intervals from..=last, each k long (or one, the rest).
    let last = if n - from >= k { n - k } else { from };
    let good: Vec<bool> = (from..=last)
        .map(|s| {
            let e = (s + k).min(n);
            ok(&merged(iv, s, e), &iv[s..e])
        })
        .collect();
    let at = |j: usize| from + j;
    let Some(r0) = good.iter().position(|g| *g) else {
        return Course::default();
    };
    // Departures: runs of stretches out of the band after the first return. A run from
    // stretch sa to sb covers the intervals that entered it (sa + k - 1, the one new to
    // stretch sa) to the last one that left it (sb, the one stretch sb + 1 no longer has):
    // exactly the bad intervals when single intervals are out of the band; to the end of the
    // run when the last stretch is out too. Each with the stretches of its run.
    let mut departures = Vec::new();
    let mut j = r0;
    while j < good.len() {
        if good[j] {
            j += 1;
            continue;
        }
        let sa = j;
        while j < good.len() && !good[j] {
            j += 1;
        }
        let sb = j - 1;
        let entered = (at(sa) + k - 1).min(n - 1);
        let span = if j == good.len() {
            (entered, n - 1, true)
        } else {
            (entered.min(at(sb)), entered.max(at(sb)), false)
        };
        departures.push((span, sa, sb));
    }
    let (long, short): (Vec<_>, Vec<_>) = departures
        .into_iter()
        .partition(|((a, b, _), _, _)| b + 1 - a > k || stalled(&iv[*a..=*b]));
    // The stretches of a relapse's run: the load is not within the band there.
    let mut relapsed = vec![false; good.len()];
    for (_, sa, sb) in &long {
        relapsed[*sa..=*sb].iter_mut().for_each(|x| *x = true);
    }
    // Recovered: from a stretch within the band, no stretch of a relapse up to the end of the
    // hold (the stretch that ends with it).
    let recovered = (r0..good.len())
        .find(|&j| {
            let upto = match need {
                Some(h) => (j + h.max(k) - k).min(good.len() - 1),
                None => good.len() - 1,
            };
            good[j] && !relapsed[j..=upto].iter().any(|r| *r)
        })
        .map(at);
    Course {
        returned: Some(at(r0)),
        recovered,
        relapses: long.into_iter().map(|(s, _, _)| s).collect(),
        blips: short.into_iter().map(|(s, _, _)| s).collect(),
    }
}

/// A relapse's figures: intervals `a..=b` of `iv`, times from `after` (the end of the DDL's
/// last interval).
fn relapse(iv: &[IntervalStats], a: usize, b: usize, to_end: bool, after: f64) -> Relapse {
    let span = &iv[a..=b];
    // The worst interval: the first in which nothing completed, else the highest p99.
    let worst = span
        .iter()
        .find(|s| s.txns == 0)
        .or_else(|| span.iter().max_by_key(|s| s.pct(0.99)))
        .unwrap_or(&iv[a]);
    let mut errors = BTreeMap::new();
    for s in span {
        for (c, v) in &s.errors {
            *errors.entry(c.clone()).or_default() += v;
        }
    }
    Relapse {
        at_s: iv[a].t,
        after_ddl_s: (iv[a].t - after).max(0.0),
        seconds: iv[b].end() - iv[a].t,
        to_end,
        worst_after_ddl_s: (worst.t - after).max(0.0),
        worst_tps: worst.tps(),
        worst_p99_us: worst.pct(0.99),
        backlog_max: span.iter().filter_map(|s| s.backlog).max(),
        errors,
    }
}

/// The backlog level "drained" returns to: the baseline's backlogs at its intervals' ends at
/// their 90th percentile (nearest rank; the highest of fewer than 10): what an open loop that
/// keeps its rate has due and not yet taken at a moment (a client busy when its next start
/// comes), without a hiccup of the baseline raising it.
pub fn backlog_level(baseline: &[u64]) -> u64 {
    at_rank(baseline.iter().map(|b| *b as f64).collect(), 0.9).map_or(0, |v| v as u64)
}

/// The median interval length (the run's `--interval`; the last one may be longer).
fn interval_of(iv: &[IntervalStats]) -> f64 {
    at_rank(iv.iter().map(|s| s.secs).collect(), 0.5).unwrap_or(1.0)
}

/// Analyse the load's intervals around a DDL that ran from `ddl_start` to `ddl_end` seconds
/// after the load started, the load offered at `offered` transactions per second (`None`:
/// closed loop), recovered when it stayed within the band for `hold_s` seconds (`None`: to
/// the end of the run).
pub fn analyse(
    iv: &[IntervalStats],
    ddl_start: f64,
    ddl_end: f64,
    offered: Option<f64>,
    hold_s: Option<f64>,
) -> Impact {
    let n = iv.len();
    let interval = interval_of(iv);
    let (a, b) = bounds(iv, ddl_start, ddl_end);
    // Recovery and drain count from the end of the DDL's last interval: the timeline cannot
    // tell finer.
    let after_ddl = iv
        .get(b)
        .map_or_else(|| iv.last().map_or(ddl_end, |s| s.end()), |s| s.t);
    let baseline = window("baseline", iv, 0, a);
    let during = window("during", iv, a, b);
    // The backlog: its level in the baseline, its peak after it, when it drained.
    let paced = iv.iter().any(|s| s.backlog.is_some());
    let level = backlog_level(&iv[..a].iter().filter_map(|s| s.backlog).collect::<Vec<_>>());
    let drained_ix = if paced {
        let last_during = b.saturating_sub(1);
        (last_during..n).find(|&i| iv[i].backlog.is_some_and(|x| x <= level))
    } else {
        Some(b.saturating_sub(1))
    };
    // Catch-up: [b, c); after: [c, n).
    let c = match drained_ix {
        Some(i) => (i + 1).max(b).min(n),
        None => n,
    };
    let catchup = window("catch-up", iv, b, c);
    let after = window("after", iv, c, n);
    let backlog = paced.then(|| {
        let (peak_i, peak) = (a..n)
            .filter_map(|i| iv[i].backlog.map(|x| (i, x)))
            .max_by_key(|&(i, x)| (x, std::cmp::Reverse(i)))
            .unwrap_or((a.min(n.saturating_sub(1)), 0));
        let drained_at = drained_ix.map(|i| iv[i].end());
        BacklogStats {
            peak,
            peak_at_s: iv.get(peak_i).map_or(0.0, |s| s.end()),
            at_ddl_end: iv
                .get(b.saturating_sub(1))
                .and_then(|s| s.backlog)
                .unwrap_or(0),
            baseline_level: level,
            drained_at_s: drained_at,
            drained_after_s: drained_at.map(|d| (d - after_ddl).max(0.0)),
        }
    });
    let worst_tps = (a..b)
        .min_by(|&x, &y| iv[x].tps().total_cmp(&iv[y].tps()))
        .map(|s| (iv[s].t, iv[s].tps()));
    let worst_p99_us = (a..b)
        .filter_map(|s| iv[s].pct(0.99).map(|p| (iv[s].t, p)))
        .max_by_key(|&(_, p)| p);
    let hold = RECOVERY_HOLD_INTERVALS.max((RECOVERY_HOLD_SECS / interval - 0.01).ceil() as usize);
    let band = band(&iv[..a], &baseline, hold);
    let (mut recovery_tps_s, mut recovery_p99_s, mut recovery_s) = (None, None, None);
    let (mut returned_s, mut relapses, mut blips) = (None, Vec::new(), Vec::new());
    if let Some(bd) = &band {
        let tps_ok = |s: &IntervalStats| (bd.tps_lo..=bd.tps_hi).contains(&s.tps());
        let p99_ok = |s: &IntervalStats| match (s.pct(0.99), bd.p99_hi_us) {
            (Some(p), Some(hi)) => p <= hi,
            _ => false,
        };
        let drained =
            |v: &[IntervalStats]| v.iter().all(|s| s.backlog.map_or(true, |x| x <= level));
        // A stall: nothing completed in an interval, or a backlog above the baseline's highest.
        let top = baseline.backlog_max.unwrap_or(0);
        let stalled = |v: &[IntervalStats]| {
            v.iter()
                .any(|s| s.txns == 0 || s.backlog.is_some_and(|x| x > top))
        };
        // The hold asked, in intervals (a stretch at the least).
        let need = hold_s.map(|h| hold.max((h / interval - 0.01).ceil() as usize));
        let secs = |i: usize| (iv[i].t - after_ddl).max(0.0);
        recovery_tps_s = course(iv, b, hold, need, |m, _| tps_ok(m), stalled)
            .recovered
            .map(secs);
        recovery_p99_s = course(iv, b, hold, need, |m, _| p99_ok(m), stalled)
            .recovered
            .map(secs);
        // From the end of the catch-up on: recovery is not the catch-up's work.
        let c = course(
            iv,
            c,
            hold,
            need,
            |m, v| tps_ok(m) && p99_ok(m) && drained(v),
            stalled,
        );
        recovery_s = c.recovered.map(secs);
        returned_s = c.returned.map(secs);
        let figures = |v: &[(usize, usize, bool)]| -> Vec<Relapse> {
            v.iter()
                .map(|&(x, y, to_end)| relapse(iv, x, y, to_end, after_ddl))
                .collect()
        };
        relapses = figures(&c.relapses);
        blips = figures(&c.blips);
    }
    // Did the baseline keep the offered rate?
    let mut no_verdict = Vec::new();
    let rate_ok = match (offered.filter(|o| *o > 0.0), baseline.tps) {
        (Some(o), Some(tps)) if a > 0 => {
            let due = o * baseline.seconds;
            let end_backlog = iv[a - 1].backlog.unwrap_or(0);
            // A few per client may be due at a cut in a healthy open loop; more than 5% of
            // the baseline's starts is a backlog that grew.
            let grew = end_backlog as f64 > (0.05 * due).max(2.0);
            let met = tps >= RATE_MET * o;
            // Starts late all along: the level "drained" returns to, against the tolerance.
            let allowed = (BACKLOG_TOLERANCE_S * o).max(2.0);
            let standing = level as f64 > allowed;
            if !met {
                no_verdict.push(format!(
                    "the load did not keep its offered rate without any DDL: the baseline \
                     completed {tps:.1} of {o:.1} TPS ({:.0}%)",
                    100.0 * tps / o
                ));
            }
            if standing {
                no_verdict.push(format!(
                    "the load ran behind its offered rate without any DDL: the baseline's \
                     backlog stood at {level} intended starts not taken (90th percentile of its \
                     intervals' ends; {:.2} s of the offered rate, more than the {:.0} due in \
                     {BACKLOG_TOLERANCE_S} s), p99 {} ms",
                    level as f64 / o,
                    allowed,
                    baseline
                        .p99_us
                        .map_or("-".into(), |v| format!("{:.2}", v as f64 / 1000.0))
                ));
            }
            if grew {
                no_verdict.push(format!(
                    "the baseline's backlog grew to {end_backlog} intended starts not taken \
                     ({:.0}% of the {:.0} due in it)",
                    100.0 * end_backlog as f64 / due.max(1.0),
                    due
                ));
            }
            Some(met && !grew && !standing)
        }
        _ => None,
    };
    let ddl_secs = (ddl_end - ddl_start).max(0.0);
    let too_short = during.seconds > 0.0 && ddl_secs < MIN_COVERAGE * during.seconds;
    let ratios = no_verdict.is_empty() && !too_short;
    let r = |x: Option<f64>, y: Option<f64>| if ratios { ratio(x, y) } else { None };
    Impact {
        tps_ratio: r(during.tps, baseline.tps),
        qps_ratio: r(during.qps, baseline.qps),
        p99_ratio: r(
            during.p99_us.map(|v| v as f64),
            baseline.p99_us.map(|v| v as f64),
        ),
        interval_s: Some(interval),
        after_tps_ratio: if no_verdict.is_empty() {
            ratio(after.tps, baseline.tps)
        } else {
            None
        },
        after_p99_ratio: if no_verdict.is_empty() {
            ratio(
                after.p99_us.map(|v| v as f64),
                baseline.p99_us.map(|v| v as f64),
            )
        } else {
            None
        },
        returned_s,
        relapses,
        blips,
        hold_s,
        worst_tps,
        worst_p99_us,
        recovery_tps_s,
        recovery_p99_s,
        recovery_s,
        backlog,
        band,
        rate_ok,
        no_verdict,
        too_short,
        baseline,
        during,
        catchup,
        after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::histogram::record;

    /// An interval at `t` of one second with `txns` transactions of `lat_us` each, 20
    /// statements per transaction, and `backlog` at its end.
    fn sec(t: usize, txns: u64, lat_us: u64, backlog: u64) -> IntervalStats {
        let mut s = IntervalStats {
            t: t as f64,
            secs: 1.0,
            txns,
            queries: txns * 20,
            backlog: Some(backlog),
            ..Default::default()
        };
        for _ in 0..txns {
            record(&mut s.hist, lat_us);
        }
        s
    }

    /// 10 s at 100 TPS and 1 ms, a DDL from 10.5 to 14.2 s with a stall, the catch-up, then
    /// back.
    fn run() -> Vec<IntervalStats> {
        let mut v: Vec<IntervalStats> = (0..10).map(|t| sec(t, 100, 1_000, 1)).collect();
        let rest = [
            (80, 2_000, 20),      // 10: DDL starts at 10.5
            (0, 0, 120),          // 11: stalled
            (0, 0, 220),          // 12
            (50, 3_000_000, 270), // 13: the stalled ones complete, late
            (120, 500_000, 250),  // 14: DDL ends at 14.2; backlog
            (250, 100_000, 100),  // 15: catching up
            (200, 5_000, 0),      // 16: drained at its end
            (101, 1_000, 1),      // 17
            (99, 1_020, 0),       // 18
            (100, 1_000, 1),      // 19
            (100, 1_000, 0),      // 20
        ];
        for (i, (n, lat, b)) in rest.into_iter().enumerate() {
            v.push(sec(10 + i, n, lat, b));
        }
        v
    }

    #[test]
    fn windows_add_up_to_the_run() {
        let v = run();
        let i = analyse(&v, 10.5, 14.2, Some(100.0), None);
        assert_eq!((i.baseline.from_s, i.baseline.seconds), (0.0, 10.0));
        assert_eq!((i.during.from_s, i.during.seconds), (10.0, 5.0));
        assert_eq!((i.catchup.from_s, i.catchup.seconds), (15.0, 2.0));
        assert_eq!((i.after.from_s, i.after.seconds), (17.0, 4.0));
        let total: u64 = v.iter().map(|s| s.txns).sum();
        let ws = [&i.baseline, &i.during, &i.catchup, &i.after];
        assert_eq!(ws.iter().map(|w| w.txns).sum::<u64>(), total);
        assert_eq!(ws.iter().map(|w| w.queries).sum::<u64>(), total * 20);
        assert_eq!(ws.iter().map(|w| w.seconds).sum::<f64>(), v.len() as f64);
    }

    #[test]
    fn figures_ratios_dip_backlog_and_recovery() {
        let i = analyse(&run(), 10.5, 14.2, Some(100.0), None);
        assert_eq!(i.rate_ok, Some(true));
        assert!(i.no_verdict.is_empty() && !i.too_short);
        assert_eq!(i.baseline.tps, Some(100.0));
        assert_eq!(i.baseline.qps, Some(2000.0));
        assert_eq!(i.during.tps, Some(50.0)); // 250 in 5 s
        assert_eq!(i.tps_ratio, Some(0.5));
        assert_eq!(i.qps_ratio, Some(0.5));
        assert_eq!(i.baseline.p50_us, Some(1_000));
        let p99 = i.during.p99_us.unwrap();
        assert!((2_990_000..=3_010_000).contains(&p99), "{p99}");
        assert!(i.p99_ratio.unwrap() > 2_000.0);
        assert_eq!(i.worst_tps, Some((11.0, 0.0)));
        assert_eq!(i.worst_p99_us.map(|(s, _)| s), Some(13.0));
        let b = i.backlog.as_ref().unwrap();
        assert_eq!((b.peak, b.peak_at_s), (270, 14.0));
        assert_eq!(b.at_ddl_end, 250);
        assert_eq!(b.baseline_level, 1);
        assert_eq!(b.drained_at_s, Some(17.0));
        // from the end of the DDL's last interval (15 s)
        assert_eq!(b.drained_after_s, Some(2.0));
        // The band of a flat baseline: 95..105 TPS, p99 at most 1.5 ms.
        let band = i.band.as_ref().unwrap();
        assert_eq!((band.tps_lo, band.tps_hi), (95.0, 105.0));
        assert_eq!(band.p99_hi_us, Some(1_500));
        assert_eq!(band.hold_intervals, 3);
        // TPS: 15 (250) and 16 (200) are catch-up, above the band; 17.. within it.
        assert_eq!(i.recovery_tps_s, Some(2.0));
        assert_eq!(i.recovery_p99_s, Some(2.0));
        // Recovery needs all three, from 17 (backlog 1 is the baseline's level).
        assert_eq!(i.recovery_s, Some(2.0));
        let max = i.catchup.max_us.unwrap();
        assert!((100_000..100_100).contains(&max), "{max}");
        assert!(i.after.max_us.unwrap() < 1_100);
    }

    /// Catch-up at the offered rate is not recovery: TPS back in the band with the backlog
    /// still high does not count.
    #[test]
    fn a_backlog_keeps_recovery_back() {
        let mut v: Vec<IntervalStats> = (0..5).map(|t| sec(t, 100, 1_000, 0)).collect();
        v.push(sec(5, 0, 0, 100)); // DDL 5.0..6.0: blocked
        for t in 6..9 {
            v.push(sec(t, 100, 1_000, 100)); // at the rate, but still 100 behind
        }
        for t in 9..13 {
            v.push(sec(t, 100, 1_000, 0));
        }
        let i = analyse(&v, 5.0, 6.0, Some(100.0), None);
        assert_eq!(i.recovery_tps_s, Some(0.0));
        // from the end of the catch-up (the drained interval, 9, is still catch-up)
        assert_eq!(i.recovery_s, Some(4.0));
        assert_eq!(i.backlog.as_ref().unwrap().drained_at_s, Some(10.0));
        assert_eq!((i.catchup.from_s, i.catchup.seconds), (6.0, 4.0));
        assert_eq!(i.after.from_s, 10.0);
    }

    #[test]
    fn not_recovered_and_empty_windows() {
        let mut v: Vec<IntervalStats> = (0..5).map(|t| sec(t, 100, 1_000, 0)).collect();
        v.extend((5..10).map(|t| sec(t, 50, 9_000, 0)));
        let i = analyse(&v, 5.0, 6.0, None, None);
        assert_eq!(i.recovery_tps_s, None);
        assert_eq!(i.recovery_p99_s, None);
        assert_eq!(i.recovery_s, None);
        assert_eq!(i.rate_ok, None);
        // A DDL at the very start: no baseline, so no ratios and no recovery.
        let i = analyse(&v, 0.0, 0.7, Some(100.0), None);
        assert_eq!(i.baseline.seconds, 0.0);
        assert_eq!(i.baseline.tps, None);
        assert_eq!(i.tps_ratio, None);
        assert_eq!(i.during.seconds, 1.0);
        assert_eq!(i.recovery_tps_s, None);
        assert_eq!(i.rate_ok, None);
        // A DDL that had not ended when the run stopped: during runs to the end.
        let i = analyse(&v, 4.5, 99.0, None, None);
        assert_eq!(
            (i.during.from_s, i.during.seconds, i.after.seconds),
            (4.0, 6.0, 0.0)
        );
    }

    /// A baseline that does not keep its offered rate, or whose backlog grows, is no verdict:
    /// no ratios, and it says why.
    #[test]
    fn a_missed_rate_is_no_verdict() {
        let v: Vec<IntervalStats> = (0..10)
            .map(|t| sec(t, 60, 200_000, 40 * t as u64))
            .collect();
        let i = analyse(&v, 6.0, 7.0, Some(100.0), None);
        assert_eq!(i.rate_ok, Some(false));
        assert_eq!(i.no_verdict.len(), 3, "{:?}", i.no_verdict);
        assert!(
            i.no_verdict[0].contains("60.0 of 100.0 TPS"),
            "{:?}",
            i.no_verdict
        );
        assert!(
            i.no_verdict[1].contains("backlog stood at 200"),
            "{:?}",
            i.no_verdict
        );
        assert!(
            i.no_verdict[2].contains("backlog grew to 200"),
            "{:?}",
            i.no_verdict
        );
        assert_eq!(i.tps_ratio, None);
        assert_eq!(i.p99_ratio, None);
        // Kept: 97% and a backlog that stays small.
        let v: Vec<IntervalStats> = (0..10).map(|t| sec(t, 97, 1_000, 2)).collect();
        let i = analyse(&v, 6.0, 7.0, Some(100.0), None);
        assert_eq!(i.rate_ok, Some(true), "{:?}", i.no_verdict);
        assert!(i.tps_ratio.is_some());
    }

    /// The oddity of a smoke run on SQLite: the baseline completed its offered rate, but its
    /// transactions started a third of a second late all along (a standing backlog of about
    /// 500 at 1,445 TPS, p99 about 300 ms) and the backlog at its very end was low: no
    /// headroom, so no verdict, and it says why. A backlog within the tolerance (the starts
    /// due in 0.1 s) keeps the verdict.
    #[test]
    fn a_standing_backlog_is_no_verdict_even_at_the_rate() {
        let o = 1440.0;
        let tenth = |k: usize, txns: u64, lat: u64, backlog: u64| {
            let mut s = sec(0, txns, lat, backlog);
            s.t = k as f64 * 0.1;
            s.secs = 0.1;
            s
        };
        // 3 s of baseline at the rate, 500-700 behind, the last cut at 40.
        let mut v: Vec<IntervalStats> = (0..30)
            .map(|k| tenth(k, 145, 300_000, 500 + (k as u64 * 7) % 200))
            .collect();
        v[29].backlog = Some(40);
        v.extend((30..60).map(|k| tenth(k, 145, 300_000, 40)));
        let i = analyse(&v, 3.0, 3.5, Some(o), None);
        assert!(i.baseline.tps.unwrap() >= RATE_MET * o, "{:?}", i.baseline);
        assert_eq!(i.rate_ok, Some(false));
        assert_eq!(i.no_verdict.len(), 1, "{:?}", i.no_verdict);
        assert!(
            i.no_verdict[0].contains("backlog stood at")
                && i.no_verdict[0].contains("more than the 144 due in 0.1 s"),
            "{:?}",
            i.no_verdict
        );
        assert_eq!((i.tps_ratio, i.p99_ratio), (None, None));
        // The same run 100 behind (0.07 s of the rate): a verdict.
        for s in v.iter_mut().take(29) {
            s.backlog = Some(100);
        }
        let i = analyse(&v, 3.0, 3.5, Some(o), None);
        assert_eq!(i.rate_ok, Some(true), "{:?}", i.no_verdict);
        assert!(i.tps_ratio.is_some());
        // At a low rate the floor is 2 starts: 3 behind all along is a standing backlog.
        let v: Vec<IntervalStats> = (0..10).map(|t| sec(t, 10, 1_000, 3)).collect();
        let i = analyse(&v, 6.0, 7.0, Some(10.0), None);
        assert_eq!(i.rate_ok, Some(false), "{:?}", i.no_verdict);
        let v: Vec<IntervalStats> = (0..10).map(|t| sec(t, 10, 1_000, 2)).collect();
        let i = analyse(&v, 6.0, 7.0, Some(10.0), None);
        assert_eq!(i.rate_ok, Some(true), "{:?}", i.no_verdict);
    }

    /// A 0.02 s DDL in a 1 s interval is too short for its windows: no ratios. At 0.1 s
    /// intervals, a 0.3 s DDL is not.
    #[test]
    fn a_ddl_shorter_than_its_window_has_no_ratio() {
        let v: Vec<IntervalStats> = (0..10).map(|t| sec(t, 100, 1_000, 0)).collect();
        let i = analyse(&v, 5.3, 5.32, Some(100.0), None);
        assert!(i.too_short);
        assert_eq!(i.tps_ratio, None);
        assert!(i.no_verdict.is_empty());
        let v: Vec<IntervalStats> = (0..100)
            .map(|k| {
                let mut s = sec(0, 10, 1_000, 0);
                s.t = k as f64 * 0.1;
                s.secs = 0.1;
                s
            })
            .collect();
        let i = analyse(&v, 5.0, 5.3, Some(100.0), None);
        assert!(!i.too_short);
        assert!(
            (i.during.seconds - 0.3).abs() < 1e-9,
            "{}",
            i.during.seconds
        );
        assert!(
            (i.tps_ratio.unwrap() - 1.0).abs() < 1e-9,
            "{:?}",
            i.tps_ratio
        );
        assert_eq!(i.band.as_ref().unwrap().hold_intervals, 10);
    }

    #[test]
    fn errors_by_code_per_window() {
        let mut v: Vec<IntervalStats> = (0..6).map(|t| sec(t, 10, 1_000, 0)).collect();
        v[1].errors.insert("1205".into(), 2);
        v[3].errors.insert("1205".into(), 1);
        v[3].errors.insert("40P01".into(), 4);
        v[3].retries = 3;
        v[3].retry_codes.insert("1213".into(), 3);
        let i = analyse(&v, 3.0, 4.0, None, None);
        assert_eq!(i.baseline.errors.get("1205"), Some(&2));
        assert_eq!(i.during.errors.get("1205"), Some(&1));
        assert_eq!(i.during.errors.get("40P01"), Some(&4));
        assert_eq!(i.during.retries, 3);
        assert_eq!(i.during.retry_codes.get("1213"), Some(&3));
        assert!(i.after.errors.is_empty());
        assert_eq!(v[3].error_count(), 5);
    }

    /// 10 s at 100 TPS and 1 ms; a short DDL from 10.5 to 11.2 s (intervals 10 and 11, after
    /// it from 12 s); after it `after(t)` gives each interval's TPS and latency to 30 s.
    fn around(after: impl Fn(usize) -> (u64, u64)) -> Vec<IntervalStats> {
        let mut v: Vec<IntervalStats> = (0..10).map(|t| sec(t, 100, 1_000, 0)).collect();
        v.push(sec(10, 80, 2_000, 0));
        v.push(sec(11, 60, 20_000, 0));
        v.extend((12..30).map(|t| {
            let (n, lat) = after(t);
            sec(t, n, lat, 0)
        }));
        v
    }

    /// Back at once, out of the band from 16 to 19 s (longer than a stretch, no stall), back
    /// from 20 s to the end: returned at 0 s, recovered (for good) at 8 s, one relapse 4 s
    /// after the DDL for 4 s with its worst interval; the after window (which has the relapse
    /// in it) against the baseline.
    #[test]
    fn a_return_that_does_not_hold_is_a_relapse() {
        let v = around(|t| match t {
            16 | 18 | 19 => (50, 50_000),
            17 => (50, 80_000),
            _ => (100, 1_000),
        });
        let i = analyse(&v, 10.5, 11.2, Some(100.0), None);
        assert_eq!((i.during.from_s, i.during.seconds), (10.0, 2.0));
        assert_eq!(i.after.from_s, 12.0);
        assert_eq!(i.returned_s, Some(0.0));
        assert_eq!(i.recovery_s, Some(8.0));
        assert_eq!(i.recovery_tps_s, Some(8.0));
        assert_eq!(i.recovery_p99_s, Some(8.0));
        assert_eq!(i.relapses.len(), 1, "{:?}", i.relapses);
        let r = &i.relapses[0];
        assert_eq!(
            (r.at_s, r.after_ddl_s, r.seconds, r.to_end),
            (16.0, 4.0, 4.0, false)
        );
        assert_eq!((r.worst_after_ddl_s, r.worst_tps), (5.0, 50.0));
        let w = r.worst_p99_us.unwrap();
        assert!((79_900..80_100).contains(&w), "{w}");
        assert_eq!(r.backlog_max, Some(0));
        // after: 14 s at 100 and 4 at 50 over 18 s; its p99 has the relapse's 50-80 ms
        let a = i.after_tps_ratio.unwrap();
        assert!((a - 1600.0 / 18.0 / 100.0).abs() < 1e-9, "{a}");
        assert!(i.after_p99_ratio.unwrap() > 40.0, "{:?}", i.after_p99_ratio);
        assert_eq!(i.hold_s, None);
        // With a hold of 3 s asked, the first return held it: recovered at 0 s, and the
        // relapse after it is still there.
        let h = analyse(&v, 10.5, 11.2, Some(100.0), Some(3.0));
        assert_eq!(h.recovery_s, Some(0.0));
        assert_eq!(h.relapses, i.relapses);
        assert_eq!(h.hold_s, Some(3.0));
        // A hold of 5 s: the return at 0 s lasted 4 s; recovered at 8 s.
        let h = analyse(&v, 10.5, 11.2, Some(100.0), Some(5.0));
        assert_eq!(h.recovery_s, Some(8.0));
    }

    /// Back at once, then out of the band from 25 s to the end: not recovered, returned at 0,
    /// one relapse that lasts to the end.
    #[test]
    fn a_relapse_to_the_end_is_not_recovery() {
        let v = around(|t| if t >= 25 { (60, 40_000) } else { (100, 1_000) });
        let i = analyse(&v, 10.5, 11.2, Some(100.0), None);
        assert_eq!(i.returned_s, Some(0.0));
        assert_eq!(i.recovery_s, None);
        assert_eq!(i.relapses.len(), 1);
        let r = &i.relapses[0];
        assert_eq!((r.after_ddl_s, r.seconds, r.to_end), (13.0, 5.0, true));
        // With a hold of 10 s the first 13 s held it.
        let h = analyse(&v, 10.5, 11.2, Some(100.0), Some(10.0));
        assert_eq!(h.recovery_s, Some(0.0));
        assert!(h.relapses[0].to_end);
    }

    /// Two stalled seconds (nothing completed, their transactions late in the next) are a
    /// relapse of those three seconds; one slow second is a blip (shorter than a stretch), listed
    /// but no relapse; a new steady state (TPS back, p99 twice the baseline's for good) never
    /// returns, and the after ratios say so.
    #[test]
    fn a_stall_a_blip_and_a_new_steady_state() {
        let v = around(|t| match t {
            15 => (100, 30_000),
            20 | 21 => (0, 0),
            22 => (300, 1_900_000),
            _ => (100, 1_000),
        });
        let i = analyse(&v, 10.5, 11.2, Some(100.0), None);
        assert_eq!(i.recovery_s, Some(11.0));
        assert_eq!(i.relapses.len(), 1);
        let r = &i.relapses[0];
        assert_eq!((r.after_ddl_s, r.seconds), (8.0, 3.0));
        assert_eq!(
            (r.worst_after_ddl_s, r.worst_tps, r.worst_p99_us),
            (8.0, 0.0, None)
        );
        assert_eq!(i.blips.len(), 1);
        assert_eq!((i.blips[0].after_ddl_s, i.blips[0].seconds), (3.0, 1.0));
        // The blip alone does not undo the return at 0 s.
        let v = around(|t| if t == 15 { (100, 30_000) } else { (100, 1_000) });
        let i = analyse(&v, 10.5, 11.2, Some(100.0), None);
        assert_eq!((i.returned_s, i.recovery_s), (Some(0.0), Some(0.0)));
        assert!(i.relapses.is_empty());
        assert_eq!(i.blips.len(), 1);
        let v = around(|_| (100, 2_000));
        let i = analyse(&v, 10.5, 11.2, Some(100.0), None);
        assert_eq!((i.returned_s, i.recovery_s), (None, None));
        assert!(i.relapses.is_empty());
        assert_eq!(i.recovery_tps_s, Some(0.0));
        assert_eq!(i.recovery_p99_s, None);
        assert_eq!(i.after_tps_ratio, Some(1.0));
        let p = i.after_p99_ratio.unwrap();
        assert!((1.99..2.01).contains(&p), "{p}");
    }

    /// The course over stretches of 3: a departure covers exactly the intervals out of the
    /// band (bad intervals closer than a stretch are one); more than 3 intervals, or a stall,
    /// is a relapse, else a blip; the last stretch out of the band lasts to the end; before
    /// the first return nothing is a departure.
    #[test]
    fn departures_cover_the_bad_intervals() {
        let run = |bad: &[usize], n: usize| {
            let v: Vec<IntervalStats> = (0..n)
                .map(|t| sec(t, if bad.contains(&t) { 10 } else { 100 }, 1_000, 0))
                .collect();
            course(
                &v,
                0,
                3,
                None,
                |m, _| m.txns == 100 * m.secs as u64,
                |v| v.iter().any(|s| s.txns == 1),
            )
        };
        let c = run(&[5], 15);
        assert_eq!((c.blips, c.relapses), (vec![(5, 5, false)], vec![]));
        assert_eq!(c.recovered, Some(0));
        assert_eq!(run(&[5, 6], 15).blips, vec![(5, 6, false)]);
        assert_eq!(run(&[5, 6, 7], 15).blips, vec![(5, 7, false)]);
        let c = run(&[5, 6, 7, 8, 9], 15);
        assert_eq!(c.relapses, vec![(5, 9, false)]);
        assert_eq!((c.returned, c.recovered), (Some(0), Some(10)));
        let c = run(&[5, 7], 15);
        assert_eq!((c.blips, c.recovered), (vec![(5, 7, false)], Some(0)));
        assert_eq!(
            run(&[4, 10], 15).blips,
            vec![(4, 4, false), (10, 10, false)]
        );
        let c = run(&[14], 15);
        assert_eq!((c.blips, c.recovered), (vec![(14, 14, true)], Some(0)));
        let c = run(&[11, 12, 13, 14], 15);
        assert_eq!((c.relapses, c.recovered), (vec![(11, 14, true)], None));
        // With a hold of 5 intervals the return at 0 held it.
        let v: Vec<IntervalStats> = (0..15)
            .map(|t| sec(t, if t >= 11 { 10 } else { 100 }, 1_000, 0))
            .collect();
        let c = course(
            &v,
            0,
            3,
            Some(5),
            |m, _| m.txns == 100 * m.secs as u64,
            |_| false,
        );
        assert_eq!(c.recovered, Some(0));
        let c = run(&[0, 1, 2, 9, 10, 11, 12], 17);
        assert_eq!(c.returned, Some(3));
        assert_eq!(c.relapses, vec![(9, 12, false)]);
        assert_eq!(c.recovered, Some(13));
        // A stall (here: an interval of 1 transaction) makes a short departure a relapse.
        let v: Vec<IntervalStats> = (0..15)
            .map(|t| sec(t, if t == 7 { 1 } else { 100 }, 1_000, 0))
            .collect();
        let c = course(
            &v,
            0,
            3,
            None,
            |m, _| m.txns == 100 * m.secs as u64,
            |v| v.iter().any(|s| s.txns == 1),
        );
        assert_eq!((c.relapses, c.recovered), (vec![(7, 7, false)], Some(8)));
        // Fewer intervals than a stretch: one shorter stretch.
        let c = run(&[], 2);
        assert_eq!((c.returned, c.recovered), (Some(0), Some(0)));
        assert_eq!(run(&[], 0), Course::default());
    }

    #[test]
    fn labels() {
        assert_eq!(label(0.0, 1.0, None, None, None), "baseline");
        assert_eq!(label(4.0, 1.0, Some(5.0), None, None), "baseline");
        assert_eq!(label(4.9, 0.1, Some(5.0), None, None), "baseline");
        assert_eq!(label(5.0, 1.0, Some(5.0), None, None), "during");
        assert_eq!(label(6.0, 1.0, Some(5.0), Some(6.5), None), "during");
        assert_eq!(label(7.0, 1.0, Some(5.0), Some(6.5), None), "catch-up");
        assert_eq!(label(9.0, 1.0, Some(5.0), Some(6.5), Some(9.0)), "after");
    }
}
