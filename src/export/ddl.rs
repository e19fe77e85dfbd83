//! `ixbench ddl`'s output: the per-interval timeline line, what is said of a knob point when
//! it ends (a missing verdict first and loudly, then its figures, backlog, recovery and
//! relapses with the rule), and the tables (Markdown/CSV/text through [`Table`]): one row per
//! knob point like seed 003's (knobs | DDL s | TPS | QPS | p99 | worst dip | backlog |
//! recovery s | relapses | after vs base | verdict) with the baseline row first, and every
//! window of every point.
//!
//! A figure `ddl` shows in more than one place (the point's lines, this table, the methods
//! table of [`super::schema_tools`], the report) is turned into text here, once: the
//! formatting of seconds, milliseconds, rates and ratios ([`ms`], [`f1`], [`ratio`]), the
//! recovery ([`recovery_cell`], [`recovery_verdict`]), the relapses ([`relapses_cell`]), the
//! load's errors ([`load_errors`]) and the DDL's lock waits ([`lock_wait`]).

use super::Table;
use crate::dbms::KnobAxis;
use crate::format as fmt;
use crate::measure::windows::{Impact, Relapse, WindowStats};
use crate::results::ddl::{ddl_secs, DdlPoint, DdlRunResult, LockWait, TimelineRow};

/// Seconds and rates with one decimal, `-` when unknown (ddl's figures are judged against
/// tenths of a second: `recovery_s` is `3.5`, never `3.50`).
pub(crate) fn f1(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), crate::format::tenths)
}

/// A ratio to the baseline, `0.91x`, `-` when unknown.
pub(crate) fn ratio(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), crate::format::ratio2)
}

/// Seconds from the end of the DDL's last interval to the end of the run: the time the load
/// had to recover in.
fn after_ddl_secs(i: &Impact) -> f64 {
    i.catchup.seconds + i.after.seconds
}

/// The point's recovery as one cell, the one figure every table shows under `recovery_s`:
/// the seconds after the DDL's end from which the load stayed within the baseline's band
/// (`3.5`), or `not in 21.0` (it did not within the run's 21.0 s after the DDL).
pub fn recovery_cell(i: &Impact) -> String {
    recovery(i.recovery_s, i)
}

/// The relapses as one cell: `none`, or each one's start after the DDL's end and its length
/// (`9.5 s for 16.0 s`, `30.2 s to the end`); `-` when there was no band to judge by.
pub fn relapses_cell(i: &Impact) -> String {
    if i.band.is_none() {
        return "-".into();
    }
    if i.relapses.is_empty() {
        return "none".into();
    }
    i.relapses
        .iter()
        .map(relapse_span)
        .collect::<Vec<_>>()
        .join("; ")
}

/// `9.5 s for 16.0 s` or `30.2 s to the end`.
fn relapse_span(r: &Relapse) -> String {
    if r.to_end {
        format!("{} s to the end", f1(Some(r.after_ddl_s)))
    } else {
        format!(
            "{} s for {} s",
            f1(Some(r.after_ddl_s)),
            f1(Some(r.seconds))
        )
    }
}

/// The after window against the baseline: `after: TPS 0.91x the baseline's, p99 1.90x`
/// (`None` without an after window or a verdict).
fn after_clause(i: &Impact) -> Option<String> {
    (i.after_tps_ratio.is_some() || i.after_p99_ratio.is_some()).then(|| {
        format!(
            "after: TPS {} the baseline's, p99 {}",
            ratio(i.after_tps_ratio),
            ratio(i.after_p99_ratio)
        )
    })
}

/// The point's recovery verdict in words: recovered (and held to the end of the run or for
/// the hold asked), back but relapsed, or not recovered; then the after window against the
/// baseline, so a new steady state reads as such.
pub fn recovery_verdict(i: &Impact) -> String {
    let n = i.relapses.len();
    let relapsed = |n: usize| format!("{n} relapse{} (below)", if n == 1 { "" } else { "s" });
    let mut v = match (i.recovery_s, i.returned_s) {
        (Some(_), returned) => {
            let held = match i.hold_s {
                Some(h) => format!("held the band for the {} s asked", f1(Some(h))),
                None => "stayed in the band to the end of the run".into(),
            };
            let mut v = format!(
                "recovered {} s after the DDL's end, {held}",
                recovery_cell(i)
            );
            if n > 0 {
                v.push_str(&format!(
                    " (first back at {} s; {})",
                    f1(returned),
                    relapsed(n)
                ));
            }
            v
        }
        (None, Some(back)) => format!(
            "NOT recovered: back in the band {} s after the DDL's end, then it RELAPSED ({}) \
             and did not hold the band{} in the {} s after the DDL",
            f1(Some(back)),
            relapsed(n),
            i.hold_s
                .map(|h| format!(" for {} s", f1(Some(h))))
                .unwrap_or_default(),
            f1(Some(after_ddl_secs(i)))
        ),
        (None, None) => format!(
            "NOT recovered in the {} s after the DDL",
            f1(Some(after_ddl_secs(i)))
        ),
    };
    if let Some(a) = after_clause(i) {
        v.push_str("; ");
        v.push_str(&a);
    }
    v
}

/// What the run recorded of the DBMS over `[from, to)` seconds from the load's start: the
/// DDL's phases and waits, marks, the method's phases. Empty when it recorded nothing.
fn recorded_then(p: &DdlPoint, from: f64, to: f64) -> Vec<String> {
    const EPS: f64 = 1e-6;
    let inside = |t: f64| t >= from - EPS && t < to - EPS;
    let mut out: Vec<String> = Vec::new();
    let mut add = |x: String| {
        if !out.contains(&x) {
            out.push(x);
        }
    };
    for r in p.timeline.iter().filter(|r| inside(r.t)) {
        for m in r.marks.iter().filter(|m| *m != "drained") {
            add(format!("[{m}]"));
        }
        if let Some(ph) = &r.phase {
            add(ph.clone());
        }
        if let Some(w) = &r.waits {
            add(w.clone());
        }
    }
    if let Some(m) = &p.method {
        for (t, ph) in m.phases.iter().filter(|(t, _)| inside(*t)) {
            add(format!("{} at {} s: {ph}", m.method, f1(Some(*t))));
        }
    }
    out
}

/// One line per relapse: its start after the DDL's end and length, its worst interval (TPS and
/// p99) against the band, its backlog and failed transactions, and what the run recorded of
/// the DBMS then.
pub fn relapse_lines(p: &DdlPoint) -> Vec<String> {
    let Some(i) = &p.impact else {
        return Vec::new();
    };
    i.relapses
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let mut parts = vec![format!(
                "relapsed{} {} s after the DDL's end: {}",
                if k == 0 { "" } else { " again" },
                f1(Some(r.after_ddl_s)),
                if r.to_end {
                    format!(
                        "still out of the band when the run ended ({} s)",
                        f1(Some(r.seconds))
                    )
                } else {
                    format!("out of the band for {} s", f1(Some(r.seconds)))
                }
            )];
            parts.push(format!(
                "worst interval at {} s: {} TPS, p99 {} ms{}",
                f1(Some(r.worst_after_ddl_s)),
                f1(Some(r.worst_tps)),
                fmt::opt_ms(r.worst_p99_us),
                i.band
                    .as_ref()
                    .map(|b| format!(
                        " (band {}..{} TPS, p99 at most {} ms)",
                        f1(Some(b.tps_lo)),
                        f1(Some(b.tps_hi)),
                        fmt::opt_ms(b.p99_hi_us)
                    ))
                    .unwrap_or_default()
            ));
            if let Some(b) = r.backlog_max {
                parts.push(format!("backlog up to {b}"));
            }
            if !r.errors.is_empty() {
                let e: Vec<String> = r.errors.iter().map(|(k, v)| format!("{v}x {k}")).collect();
                parts.push(format!("failed {}", e.join(", ")));
            }
            let then = recorded_then(p, r.at_s, r.at_s + r.seconds);
            parts.push(if then.is_empty() {
                "the DBMS then: nothing recorded (ixbench samples the DDL's progress and waits \
                 only while it runs)"
                    .into()
            } else {
                format!("the DBMS then: {}", then.join("; "))
            });
            parts.join("; ")
        })
        .collect()
}

/// The departures from the band shorter than a stretch, on one line (`None`: there were
/// none).
pub fn blips_line(i: &Impact) -> Option<String> {
    if i.blips.is_empty() {
        return None;
    }
    let b: Vec<String> = i
        .blips
        .iter()
        .map(|r| {
            format!(
                "{} (worst {} TPS, p99 {} ms)",
                relapse_span(r),
                f1(Some(r.worst_tps)),
                fmt::opt_ms(r.worst_p99_us)
            )
        })
        .collect();
    Some(format!(
        "blips (out of the band for less than a stretch, not relapses): {}",
        b.join("; ")
    ))
}

/// The load's failed and retried transactions over all four windows: `3 failed (2x 1213, 1x
/// 1205), 5 retried`, or `none`.
pub fn load_errors(i: &Impact) -> String {
    let w = all_windows(i);
    let n: u64 = w.errors.values().sum();
    let retried = i.baseline.retries + i.during.retries + i.catchup.retries + i.after.retries;
    let mut parts = Vec::new();
    if n > 0 {
        let codes: Vec<String> = w.errors.iter().map(|(k, v)| format!("{v}x {k}")).collect();
        parts.push(format!("{n} failed ({})", codes.join(", ")));
    }
    if retried > 0 {
        parts.push(format!("{retried} retried"));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// One of the DDL's lock waits: `what at 3.2 s for 1.5 s`.
pub fn lock_wait(w: &LockWait) -> String {
    format!(
        "{} at {} s for {} s",
        w.what,
        f1(Some(w.from_s)),
        f1(Some(w.seconds))
    )
}

/// The header of the per-interval lines.
pub fn timeline_header() -> String {
    format!(
        "   {:>7} {:<8} {:>8} {:>9} {:>8} {:>8} {:>8} {:>7} {:>5}  {}",
        "t", "window", "tps", "qps", "p50_ms", "p99_ms", "max_ms", "backlog", "err", "DDL"
    )
}

/// Seconds with as many decimals as the interval needs.
fn t_text(t: f64, i_sec: f64) -> String {
    // (a measured interval is a little shorter or longer than the one asked for)
    if i_sec >= 0.9 && (t - t.round()).abs() < 0.05 {
        format!("{t:.0}")
    } else if i_sec >= 0.09 {
        format!("{t:.1}")
    } else {
        format!("{t:.2}")
    }
}

/// One interval of the load: its start, window, rates, latency, backlog (`-` in a closed
/// loop), failed transactions, and the DDL's marks, phase and waits.
pub fn timeline_line(r: &TimelineRow) -> String {
    let marks: Vec<String> = r.marks.iter().map(|m| format!("[{m}]")).collect();
    let mut ddl = vec![marks.join(" ")];
    ddl.extend(r.phase.iter().cloned());
    ddl.extend(r.waits.iter().cloned());
    ddl.retain(|x| !x.is_empty());
    format!(
        "   {:>7} {:<8} {:>8.0} {:>9.0} {:>8} {:>8} {:>8} {:>7} {:>5}  {}",
        t_text(r.t, r.i_sec),
        r.window,
        r.tps(),
        r.qps(),
        fmt::opt_ms(r.p50_us),
        fmt::opt_ms(r.p99_us),
        fmt::opt_ms(r.max_us),
        r.backlog.map_or("-".to_string(), |b| b.to_string()),
        r.errors,
        ddl.join("; ")
    )
    .trim_end()
    .to_string()
}

/// The timeline in the text, as the load runs: every interval at intervals of a second or
/// more; at shorter ones one line per about a second (the intervals merged by the load, see
/// [`crate::step::online_ddl::run_load`]), except where something happens in it (the DDL
/// starts, ends or fails, or the window changes: baseline to during, during to catch-up,
/// catch-up to after), whose intervals are printed one by one. The files keep every interval.
#[derive(Debug, Default)]
pub struct TextTimeline {
    /// The intervals of the line not yet printed.
    pending: Vec<TimelineRow>,
}

impl TextTimeline {
    /// Take in an interval's row and, when it closes a line, that line; returns the lines to
    /// print now.
    pub fn push(&mut self, r: &TimelineRow, line: Option<&TimelineRow>) -> Vec<String> {
        self.pending.push(r.clone());
        let Some(line) = line else {
            return Vec::new();
        };
        let rows = std::mem::take(&mut self.pending);
        let eventful = rows
            .iter()
            .any(|r| r.marks.iter().any(|m| m.starts_with("DDL")))
            || rows.iter().any(|r| r.window != rows[0].window);
        if rows.len() <= 1 || !eventful {
            vec![timeline_line(line)]
        } else {
            rows.iter().map(timeline_line).collect()
        }
    }

    /// The intervals of a line the run ended in before it closed (a stop), one by one.
    pub fn finish(&mut self) -> Vec<String> {
        std::mem::take(&mut self.pending)
            .iter()
            .map(timeline_line)
            .collect()
    }
}

/// What the text does with intervals shorter than a second ([`TextTimeline`]), to follow the
/// line that gives the interval; empty at a second or more.
pub fn text_note(interval_s: f64) -> &'static str {
    if interval_s >= 0.999 {
        ""
    } else {
        "; printed here: a line per second, and every interval of the seconds in which the DDL \
         starts or ends or the window changes (intervals.ndjson has them all)"
    }
}

/// Failed transactions by code, then retried errors by code; `none` when there were none.
fn errors(w: &WindowStats) -> String {
    let mut parts: Vec<String> = w.errors.iter().map(|(k, v)| format!("{v}x {k}")).collect();
    parts.extend(
        w.retry_codes
            .iter()
            .map(|(k, v)| format!("{v}x {k} retried")),
    );
    if parts.is_empty() {
        return "none".into();
    }
    parts.join(", ")
}

/// Seconds after the DDL's end, or `not in X` (X: the seconds the run had after it).
fn recovery(v: Option<f64>, i: &Impact) -> String {
    match v {
        Some(s) => f1(Some(s)),
        None => format!("not in {}", f1(Some(after_ddl_secs(i)))),
    }
}

/// The point's state for tables, in the verdict model's words ([`DdlPoint::judge`]):
/// `FAILED`, `REGRESSION`, `NO VERDICT`, `IMPROVED`, `NO CHANGE`.
pub fn verdict(p: &DdlPoint) -> &'static str {
    p.judge().0.text()
}

/// The point's state and why, on one line: `state: NO VERDICT (the baseline missed its
/// load: ...)`.
pub fn state_line(p: &DdlPoint) -> String {
    let (st, why) = p.judge();
    format!("state: {st} ({why})")
}

/// The lines that must be read before any figure of a point, loudly (see
/// [`DdlPoint::verdict_lines`]).
pub fn verdict_lines(p: &DdlPoint) -> Vec<String> {
    p.verdict_lines()
}

/// The backlog, the recovery verdict, each relapse and the rule they follow, a line each
/// (none when there was no impact to analyse).
pub fn recovery_lines(p: &DdlPoint) -> Vec<String> {
    let Some(i) = &p.impact else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match &i.backlog {
        Some(b) => out.push(format!(
            "backlog: peak {} at {} s, {} at the DDL's end; {}; {}; after {} TPS, p99 {} ms",
            b.peak,
            f1(Some(b.peak_at_s)),
            b.at_ddl_end,
            match (b.drained_at_s, b.drained_after_s) {
                (Some(at), Some(after)) => format!(
                    "back to the baseline's level ({}) at {} s ({} s after the DDL)",
                    b.baseline_level,
                    f1(Some(at)),
                    f1(Some(after))
                ),
                _ => format!(
                    "NOT back to the baseline's level ({}) within the run",
                    b.baseline_level
                ),
            },
            if i.catchup.seconds > 0.0 {
                format!(
                    "catch-up {} s at {} TPS, p99 {} ms",
                    f1(Some(i.catchup.seconds)),
                    f1(i.catchup.tps),
                    fmt::opt_ms(i.catchup.p99_us)
                )
            } else {
                "no catch-up".to_string()
            },
            f1(i.after.tps),
            fmt::opt_ms(i.after.p99_us),
        )),
        None => out.push(format!(
            "closed loop (no backlog); after {} TPS, p99 {} ms",
            f1(i.after.tps),
            fmt::opt_ms(i.after.p99_us)
        )),
    }
    out.push(recovery_verdict(i));
    out.extend(relapse_lines(p));
    if let Some(b) = blips_line(i) {
        out.push(b);
    }
    if let Some(b) = &i.band {
        out.push(format!(
            "rule: {}; band: {}..{} TPS, p99 at most {} ms, over stretches of {} intervals",
            crate::measure::windows::RULE,
            f1(Some(b.tps_lo)),
            f1(Some(b.tps_hi)),
            fmt::opt_ms(b.p99_hi_us),
            b.hold_intervals
        ));
    }
    out
}

/// Everything said about a point when it ends: the verdict lines first, the figures, the
/// backlog and recovery with their rule, and the point's state with why ([`state_line`]).
pub fn point_text(p: &DdlPoint) -> Vec<String> {
    let mut out = verdict_lines(p);
    out.push(point_line(p));
    out.extend(recovery_lines(p));
    out.push(state_line(p));
    out
}

/// The errors and retries of the four windows together.
fn all_windows(i: &Impact) -> WindowStats {
    let mut w = WindowStats::default();
    for x in [&i.baseline, &i.during, &i.catchup, &i.after] {
        for (k, v) in &x.errors {
            *w.errors.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &x.retry_codes {
            *w.retry_codes.entry(k.clone()).or_default() += v;
        }
    }
    w
}

/// A window's latency counts the transactions that finished in it: those a DDL held back
/// (their intended start during it, the backlog above the baseline's at its end) finish in the
/// catch-up, so "during"'s p99 can read better than the baseline's while the load was stuck.
/// Said next to the ratio whenever the catch-up's p99 is above the during window's.
fn held_back(i: &Impact) -> Option<String> {
    let b = i.backlog.as_ref()?;
    let (during, catchup) = (i.during.p99_us?, i.catchup.p99_us?);
    (b.at_ddl_end > b.baseline_level && catchup > during).then(|| {
        format!(
            "{} intended starts were held back at the DDL's end: they finished in the catch-up, \
             so their latency is in its p99 ({} ms), not in during's",
            b.at_ddl_end - b.baseline_level,
            fmt::opt_ms(Some(catchup))
        )
    })
}

/// One line per knob point, printed when it ends.
pub fn point_line(p: &DdlPoint) -> String {
    let mut parts = Vec::new();
    let d = &p.ddl;
    match (&p.error, d.seconds) {
        (Some(e), _) => parts.push(format!("FAILED: {e}")),
        (None, Some(s)) => parts.push(format!(
            "DDL {} s ({} attempt{})",
            ddl_secs(s),
            d.attempts,
            if d.attempts == 1 { "" } else { "s" }
        )),
        (None, None) => {}
    }
    if let Some(i) = &p.impact {
        parts.push(format!(
            "baseline {} TPS, p99 {} ms; during {} TPS ({}), p99 {} ms ({}); worst interval {} TPS, p99 {} ms; TPS back in the baseline's band for good {} s after the DDL, p99 {} s after (recovery, with the backlog drained: below); errors {}",
            f1(i.baseline.tps),
            fmt::opt_ms(i.baseline.p99_us),
            f1(i.during.tps),
            ratio(i.tps_ratio),
            fmt::opt_ms(i.during.p99_us),
            ratio(i.p99_ratio),
            f1(i.worst_tps.map(|w| w.1)),
            fmt::opt_ms(i.worst_p99_us.map(|w| w.1)),
            recovery(i.recovery_tps_s, i),
            recovery(i.recovery_p99_s, i),
            load_errors(i),
        ));
        if let Some(h) = held_back(i) {
            parts.push(h);
        }
    }
    if !d.lock_waits.is_empty() {
        let w: Vec<String> = d.lock_waits.iter().map(lock_wait).collect();
        parts.push(format!("DDL waited: {}", w.join("; ")));
    }
    if d.max_blocked_sessions > 0 {
        parts.push(format!(
            "up to {} sessions waited behind the DDL",
            d.max_blocked_sessions
        ));
    }
    if p.behind_at_end > 0 {
        parts.push(format!(
            "{} intended starts not taken at the end (the load fell behind its rate; each is in the latency with the time it waited)",
            p.behind_at_end
        ));
    }
    if p.reconnects > 0 {
        parts.push(format!("{} client reconnections", p.reconnects));
    }
    let c = p.checks.iter().filter(|c| c.ok).count();
    if !p.checks.is_empty() {
        parts.push(format!("checks {c}/{} ok", p.checks.len()));
    }
    parts.join("; ")
}

/// One row per knob point, the baseline (no DDL, from the first point) first: knobs | DDL s |
/// TPS | QPS | p99 | worst dip | backlog peak | drained | recovery | relapses, and the ratios
/// (during and after against the baseline), errors, the
/// DDL's attempts, the most sessions that waited behind it, the verdict (`NO VERDICT` when
/// the load missed its rate without the DDL; the baseline row says whether it kept it) and
/// whether it was ok.
pub fn points_table(r: &DdlRunResult, axes: &[KnobAxis]) -> Table {
    let mut headers: Vec<String> = vec!["row".into()];
    headers.extend(axes.iter().map(|a| a.name.clone()));
    headers.extend(
        [
            "ddl_s",
            "tps",
            "qps",
            "p99_ms",
            "worst_tps",
            "worst_p99_ms",
            "backlog_peak",
            "drained_s",
            "recovery_s",
            "relapses",
            "tps_vs_base",
            "p99_vs_base",
            "after_tps_vs_base",
            "after_p99_vs_base",
            "errors",
            "ddl_attempts",
            "waiting_sessions",
            "verdict",
            "ok",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let mut t = Table::new(headers);
    let knob = |p: &DdlPoint, a: &KnobAxis| {
        p.knobs
            .iter()
            .find(|(k, _)| k == &a.name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    if let Some((p, i)) = r
        .points
        .iter()
        .find_map(|p| p.impact.as_ref().map(|i| (p, i)))
    {
        let mut row = vec!["baseline (no DDL)".to_string()];
        row.extend(axes.iter().map(|a| knob(p, a)));
        row.extend([
            "-".into(),
            f1(i.baseline.tps),
            f1(i.baseline.qps),
            fmt::opt_ms(i.baseline.p99_us),
            "-".into(),
            "-".into(),
            i.baseline.backlog_max.map_or("-".into(), |b| b.to_string()),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            errors(&i.baseline),
            "-".into(),
            "-".into(),
            match i.rate_ok {
                Some(true) => "rate met".into(),
                Some(false) => "rate NOT met".into(),
                None => "-".into(),
            },
            "-".into(),
        ]);
        t.push(row);
    }
    for (n, p) in r.points.iter().enumerate() {
        let mut row = vec![format!("during DDL, point {}", n + 1)];
        row.extend(axes.iter().map(|a| knob(p, a)));
        let ddl_s = match (&p.ddl.error, p.ddl.seconds) {
            (Some(_), Some(s)) => format!("failed {}", ddl_secs(s)),
            (None, Some(s)) => ddl_secs(s),
            _ => "-".into(),
        };
        match &p.impact {
            Some(i) => row.extend([
                ddl_s,
                f1(i.during.tps),
                f1(i.during.qps),
                fmt::opt_ms(i.during.p99_us),
                f1(i.worst_tps.map(|w| w.1)),
                fmt::opt_ms(i.worst_p99_us.map(|w| w.1)),
                i.backlog
                    .as_ref()
                    .map_or("-".into(), |b| b.peak.to_string()),
                match &i.backlog {
                    Some(b) => b
                        .drained_after_s
                        .map_or("not drained".into(), |d| f1(Some(d))),
                    None => "-".into(),
                },
                recovery_cell(i),
                relapses_cell(i),
                ratio(i.tps_ratio),
                ratio(i.p99_ratio),
                ratio(i.after_tps_ratio),
                ratio(i.after_p99_ratio),
                errors(&i.during),
            ]),
            None => {
                row.push(ddl_s);
                row.extend((0..14).map(|_| "-".to_string()));
            }
        }
        row.push(p.ddl.attempts.to_string());
        row.push(p.ddl.max_blocked_sessions.to_string());
        row.push(verdict(p).into());
        row.push(if p.ok { "ok".into() } else { "FAILED".into() });
        t.push(row);
    }
    t
}

/// Every window of every point: baseline, during, catch-up, after.
pub fn windows_table(r: &DdlRunResult, axes: &[KnobAxis]) -> Table {
    let mut headers: Vec<String> = vec!["point".into()];
    headers.extend(axes.iter().map(|a| a.name.clone()));
    headers.extend(
        [
            "window",
            "from_s",
            "seconds",
            "txns",
            "tps",
            "qps",
            "p50_ms",
            "p99_ms",
            "max_ms",
            "backlog_max",
            "errors",
            "retries",
            "verdict",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let mut t = Table::new(headers);
    for (n, p) in r.points.iter().enumerate() {
        let Some(i) = &p.impact else { continue };
        for w in [&i.baseline, &i.during, &i.catchup, &i.after] {
            let mut row = vec![(n + 1).to_string()];
            row.extend(axes.iter().map(|a| {
                p.knobs
                    .iter()
                    .find(|(k, _)| k == &a.name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            }));
            row.extend([
                w.name.clone(),
                crate::format::secs(w.from_s),
                crate::format::secs(w.seconds),
                w.txns.to_string(),
                f1(w.tps),
                f1(w.qps),
                fmt::opt_ms(w.p50_us),
                fmt::opt_ms(w.p99_us),
                fmt::opt_ms(w.max_us),
                w.backlog_max.map_or("-".into(), |b| b.to_string()),
                errors(w),
                w.retries.to_string(),
                verdict(p).into(),
            ]);
            t.push(row);
        }
    }
    t
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::measure::histogram::record;
    use crate::measure::windows::{analyse, IntervalStats};
    use crate::results::ddl::DdlOutcome;

    #[test]
    fn held_back_transactions_are_said_next_to_during_p99() {
        use crate::measure::windows::BacklogStats;
        let mut i = Impact::default();
        i.during.p99_us = Some(2_000);
        i.catchup.p99_us = Some(900_000);
        i.backlog = Some(BacklogStats {
            peak: 700,
            at_ddl_end: 650,
            baseline_level: 2,
            ..Default::default()
        });
        let h = held_back(&i).expect("a blocking DDL's held-back starts");
        assert!(h.starts_with("648 intended starts were held back"), "{h}");
        assert!(h.contains("p99 (900 ms)"), "{h}");
        // a DDL that held nothing back, or whose catch-up was no slower, gets no clause
        i.backlog.as_mut().unwrap().at_ddl_end = 2;
        assert_eq!(held_back(&i), None);
        i.backlog.as_mut().unwrap().at_ddl_end = 650;
        i.catchup.p99_us = Some(1_000);
        assert_eq!(held_back(&i), None);
    }

    /// A point measured by ddl's own analysis: 10 intervals at 100 TPS, the fifth at 10, with
    /// `maintenance_work_mem=knob` (the summary's tests use it too).
    pub(crate) fn point(knob: &str, ddl_s: f64) -> DdlPoint {
        let iv: Vec<IntervalStats> = (0..10)
            .map(|i| {
                let txns = if i == 5 { 10 } else { 100 };
                let mut s = IntervalStats {
                    t: i as f64,
                    txns,
                    queries: txns * 18,
                    ..Default::default()
                };
                for _ in 0..s.txns {
                    record(&mut s.hist, if i == 5 { 50_000 } else { 2_000 });
                }
                s
            })
            .collect();
        DdlPoint {
            knobs: vec![("maintenance_work_mem".into(), knob.into())],
            ok: true,
            impact: Some(analyse(&iv, 4.5, 4.5 + ddl_s, Some(100.0), None)),
            ddl: DdlOutcome {
                seconds: Some(ddl_s),
                attempts: 1,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn seed_003_table_baseline_first() {
        let r = DdlRunResult {
            points: vec![point("64MB", 1.2), point("1GB", 0.8)],
            ..Default::default()
        };
        let axes = [KnobAxis {
            name: "maintenance_work_mem".into(),
            values: vec!["64MB".into(), "1GB".into()],
        }];
        let t = points_table(&r, &axes);
        assert_eq!(t.rows.len(), 3);
        assert_eq!(
            &t.headers[..4],
            &["row", "maintenance_work_mem", "ddl_s", "tps"]
        );
        let col = |name: &str| t.headers.iter().position(|h| h == name).unwrap();
        assert_eq!(t.rows[0][0], "baseline (no DDL)");
        assert_eq!(t.rows[0][3], "100.0");
        assert_eq!(t.rows[0][4], "1800");
        assert_eq!(t.rows[0][col("verdict")], "rate met");
        assert_eq!(t.rows[1][1], "64MB");
        assert_eq!(t.rows[1][2], "1.20");
        // during = seconds 4 and 5: (100 + 10) / 2
        assert_eq!(t.rows[1][3], "55.0");
        assert_eq!(t.rows[1][col("worst_tps")], "10.0");
        // back in the band from second 6, the first after the DDL (it ended at 5.7 s)
        assert_eq!(t.rows[1][col("recovery_s")], "0.0");
        assert_eq!(t.rows[1][col("tps_vs_base")], "0.55x");
        assert_eq!(t.rows[1][col("verdict")], "NO CHANGE");
        // 0.8 s of a 2 s during window: too short for a ratio
        assert_eq!(t.rows[2][col("tps_vs_base")], "-");
        // too short for its windows, but judged by its recovery and after window
        assert_eq!(t.rows[2][col("verdict")], "NO CHANGE");
        assert_eq!(t.rows[2][col("ddl_attempts")], "1");
        assert_eq!(t.rows[2][col("waiting_sessions")], "0");
        assert_eq!(t.rows[2][col("ok")], "ok");
        assert!(t.rows.iter().all(|r| r.len() == t.headers.len()));
        let w = windows_table(&r, &axes);
        assert_eq!(w.rows.len(), 8);
        assert_eq!(w.rows[1][2], "during");
        assert_eq!(w.rows[2][2], "catch-up");
        let text = point_text(&r.points[0]);
        assert!(text[0].starts_with("DDL 1.20 s (1 attempt)"), "{text:?}");
        assert!(text[0].contains("worst interval 10.0 TPS"), "{text:?}");
        assert!(text.iter().any(|l| l.starts_with("rule: ")), "{text:?}");
        let text = point_text(&r.points[1]);
        assert!(text[0].starts_with("DDL TOO SHORT"), "{text:?}");
        assert!(r.points[0].verdict_lines().is_empty());
        assert!(
            text.last()
                .unwrap()
                .starts_with("state: NO CHANGE (recovered and held"),
            "{text:?}"
        );
    }

    /// Every state of a point from its figures (docs/ddl.md, "States"), and the methods
    /// table's worst-of-its-points.
    #[test]
    fn a_point_s_state_on_the_one_model() {
        use crate::results::verdict::State;
        let ok = point("64MB", 1.2);
        assert_eq!(ok.judge().0, State::NoChange);
        // a failed DDL (or a failed load under --on-error continue)
        let mut p = ok.clone();
        p.ok = false;
        p.error = Some("23505 duplicate key".into());
        assert_eq!(p.judge(), (State::Failed, "23505 duplicate key".into()));
        // a baseline that missed its load
        let mut p = ok.clone();
        p.impact.as_mut().unwrap().no_verdict = vec!["did not keep its offered rate".into()];
        assert_eq!(p.judge().0, State::NoVerdict);
        assert!(p.judge().1.contains("missed its load"));
        // no band, no impact
        let mut p = ok.clone();
        p.impact.as_mut().unwrap().band = None;
        assert_eq!(p.judge().0, State::NoVerdict);
        let mut p = ok.clone();
        p.impact = None;
        assert_eq!(p.judge().0, State::NoVerdict);
        // not recovered; relapsed; a worse steady state
        let mut p = ok.clone();
        p.impact.as_mut().unwrap().recovery_s = None;
        assert_eq!(p.judge().0, State::Regression);
        let mut p = ok.clone();
        p.impact.as_mut().unwrap().relapses = vec![Default::default()];
        assert_eq!(p.judge().0, State::Regression);
        let mut p = ok.clone();
        let i = p.impact.as_mut().unwrap();
        i.after.p99_us = Some(i.band.as_ref().unwrap().p99_hi_us.unwrap() + 1);
        assert_eq!(p.judge().0, State::Regression);
        let mut p = ok.clone();
        let i = p.impact.as_mut().unwrap();
        i.after.tps = Some(i.band.as_ref().unwrap().tps_lo - 1.0);
        assert_eq!(p.judge().0, State::Regression);
        // better beyond the band: p99 under the baseline's / 1.5
        let mut p = ok.clone();
        let i = p.impact.as_mut().unwrap();
        i.after.p99_us = Some(i.baseline.p99_us.unwrap() / 2);
        assert_eq!(p.judge().0, State::Improved);
        // an after figure unknown
        let mut p = ok.clone();
        p.impact.as_mut().unwrap().after.p99_us = None;
        assert_eq!(p.judge().0, State::NoVerdict);
        // the run: the worst of its points
        let mut r = DdlRunResult {
            points: vec![ok.clone(), p],
            ..Default::default()
        };
        r.judge();
        assert_eq!(r.state, Some(State::NoVerdict));
        assert_eq!(r.points[0].state, Some(State::NoChange));
        let t = points_table(&r, &[]);
        let col = t.headers.iter().position(|h| h == "verdict").unwrap();
        assert_eq!(t.rows[2][col], "NO VERDICT");
    }

    /// A point whose baseline missed the rate: the first line says NO VERDICT, the tables
    /// say so, the report's warnings too.
    #[test]
    fn no_verdict_is_said_first_and_everywhere() {
        let iv: Vec<IntervalStats> = (0..10)
            .map(|i| {
                let mut s = IntervalStats {
                    t: i as f64,
                    txns: 50,
                    queries: 900,
                    backlog: Some(60 * i),
                    ..Default::default()
                };
                for _ in 0..50 {
                    record(&mut s.hist, 300_000);
                }
                s
            })
            .collect();
        let p = DdlPoint {
            ok: true,
            impact: Some(analyse(&iv, 5.0, 7.0, Some(100.0), None)),
            ddl: DdlOutcome {
                seconds: Some(2.0),
                attempts: 1,
                ..Default::default()
            },
            ..Default::default()
        };
        let text = point_text(&p);
        assert!(text[0].starts_with("NO VERDICT: "), "{text:?}");
        assert!(text[0].contains("50.0 of 100.0 TPS"), "{text:?}");
        let r = DdlRunResult {
            points: vec![p],
            ..Default::default()
        };
        let t = points_table(&r, &[]);
        let col = t.headers.iter().position(|h| h == "verdict").unwrap();
        assert_eq!(t.rows[0][col], "rate NOT met");
        assert_eq!(t.rows[1][col], "NO VERDICT");
        let w = r.points[0].verdict_lines();
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("NO VERDICT"), "{w:?}");
    }

    /// A point back at once that relapses 4 s after the DDL for 3 s (a stall at 16-18 s, with
    /// a mark the run recorded in it) and holds from 7 s: the verdict line, the relapse line,
    /// the points table and the methods table say the same recovery, rounded alike.
    #[test]
    fn one_recovery_everywhere_and_the_relapse_line() {
        let iv: Vec<IntervalStats> = (0..30)
            .map(|t| {
                let (txns, lat) = match t {
                    10 => (80, 2_000),
                    11 => (60, 20_000),
                    16 | 18 => (50, 50_000),
                    17 => (50, 60_000),
                    25 => (100, 5_000),
                    _ => (100, 1_000),
                };
                let mut s = IntervalStats {
                    t: t as f64 + 0.03,
                    txns,
                    queries: txns * 18,
                    backlog: Some(if (16..=18).contains(&t) { 40 } else { 0 }),
                    ..Default::default()
                };
                for _ in 0..txns {
                    record(&mut s.hist, lat);
                }
                s
            })
            .collect();
        let mut p = point("64MB", 0.7);
        p.impact = Some(analyse(&iv, 10.5, 11.2, Some(100.0), None));
        p.timeline = vec![TimelineRow {
            t: 17.03,
            marks: vec!["drained".into(), "node 2 left".into()],
            ..Default::default()
        }];
        let i = p.impact.as_ref().unwrap();
        // 7 s less the 0.03 s the intervals are cut after whole seconds: unrounded 7.0000...1
        let rec = i.recovery_s.unwrap();
        assert!((rec - 7.0).abs() < 1e-9, "{rec}");
        assert_eq!(recovery_cell(i), "7.0");
        let v = recovery_verdict(i);
        assert!(
            v.starts_with(
                "recovered 7.0 s after the DDL's end, stayed in the band to the end of the run \
                 (first back at 0.0 s; 1 relapse (below)); after: TPS 0.92x the baseline's, p99 "
            ),
            "{v}"
        );
        let lines = recovery_lines(&p);
        assert!(lines.contains(&v), "{lines:#?}");
        let r = &lines[2];
        assert!(
            r.starts_with(
                "relapsed 4.0 s after the DDL's end: out of the band for 3.0 s; worst interval \
                 at 5.0 s: 50.0 TPS, p99 60."
            ),
            "{r}"
        );
        assert!(
            r.ends_with(
                " ms (band 95.0..105.0 TPS, p99 at most 1.50 ms); backlog up to 40; the DBMS \
                 then: [node 2 left]"
            ),
            "{r}"
        );
        // One slow second, no stall: a blip, listed, not a relapse.
        assert_eq!(
            lines[3],
            "blips (out of the band for less than a stretch, not relapses): 13.0 s for 1.0 s \
             (worst 100.0 TPS, p99 5.00 ms)"
        );
        let r = DdlRunResult {
            points: vec![p.clone()],
            ..Default::default()
        };
        let t = points_table(&r, &[]);
        let col = |t: &Table, name: &str| t.headers.iter().position(|h| h == name).unwrap();
        assert_eq!(t.rows[1][col(&t, "recovery_s")], "7.0");
        assert_eq!(t.rows[1][col(&t, "relapses")], "4.0 s for 3.0 s");
        assert_eq!(t.rows[1][col(&t, "after_tps_vs_base")], "0.92x");
        let m = crate::export::schema_tools::methods_table(&r, &[]);
        for h in [
            "recovery_s",
            "relapses",
            "after_tps_vs_base",
            "after_p99_vs_base",
        ] {
            assert_eq!(m.rows[0][col(&m, h)], t.rows[1][col(&t, h)], "{h}");
        }
        assert_eq!(m.rows[0][col(&m, "ddl_s")], t.rows[1][col(&t, "ddl_s")]);
        // Not recovered: the same words in the cell and the line.
        p.impact = Some(analyse(&iv[..19], 10.5, 11.2, Some(100.0), None));
        let i = p.impact.as_ref().unwrap();
        assert_eq!(recovery_cell(i), "not in 7.0");
        let v = recovery_verdict(i);
        assert!(
            v.starts_with(
                "NOT recovered: back in the band 0.0 s after the DDL's end, then it RELAPSED \
                 (1 relapse (below)) and did not hold the band in the 7.0 s after the DDL"
            ),
            "{v}"
        );
        assert!(
            relapse_lines(&p)[0].contains("still out of the band when the run ended (3.0 s)"),
            "{:?}",
            relapse_lines(&p)
        );
    }

    #[test]
    fn timeline_lines() {
        let r = TimelineRow {
            t: 7.0,
            window: "during".into(),
            txns: 12,
            queries: 240,
            p99_us: Some(12_345),
            marks: vec!["DDL start".into()],
            phase: Some("c_idx: building index".into()),
            backlog: Some(3),
            ..Default::default()
        };
        let l = timeline_line(&r);
        // 3 significant digits (crate::format)
        assert!(l.contains(" 12.3 "), "{l}");
        assert!(l.contains("[DDL start]; c_idx: building index"), "{l}");
        let w: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(&w[..4], &["7", "during", "12", "240"], "{l}");
        assert_eq!(w[7], "3", "{l}");
        assert_eq!(
            timeline_header().split_whitespace().count(),
            10,
            "{}",
            timeline_header()
        );
        // A tenth of a second: one decimal, rates per second.
        let r = TimelineRow {
            t: 7.1,
            i_sec: 0.1,
            txns: 12,
            queries: 240,
            ..Default::default()
        };
        let w: Vec<String> = timeline_line(&r)
            .split_whitespace()
            .map(String::from)
            .collect();
        assert_eq!(w[0], "7.1");
        assert_eq!(w[1], "120");
        assert_eq!(w[2], "2400");
        assert_eq!(w[6], "-");
        // A measured interval a little short of a tenth still prints one decimal.
        let r = TimelineRow {
            t: 0.6097,
            i_sec: 0.0949,
            ..Default::default()
        };
        assert!(timeline_line(&r).trim_start().starts_with("0.6 "), "{r:?}");
    }

    /// At 0.1 s intervals the text has one line per second where nothing happens (the line
    /// the load merged) and every interval of a second in which the DDL starts or ends or
    /// the window changes; nothing is printed before a line closes, and a run cut short
    /// prints what it had.
    #[test]
    fn text_timeline_one_line_per_quiet_second() {
        let tenth = |k: usize, window: &str, marks: &[&str]| TimelineRow {
            t: k as f64 * 0.1,
            i_sec: 0.1,
            window: window.into(),
            txns: 10,
            queries: 200,
            marks: marks.iter().map(|m| m.to_string()).collect(),
            ..Default::default()
        };
        let second = |k: usize, window: &str| TimelineRow {
            t: k as f64,
            i_sec: 1.0,
            window: window.into(),
            txns: 100,
            queries: 2000,
            ..Default::default()
        };
        let mut tt = TextTimeline::default();
        let mut lines = Vec::new();
        // Second 0: baseline; second 1: the DDL starts at 1.5 (the window changes too);
        // second 2: during, quiet; second 3: ended (a mark) at 3.2; 4.0..4.3 cut short.
        for k in 0..43 {
            let w = match k {
                0..=14 => "baseline",
                15..=32 => "during",
                _ => "catch-up",
            };
            let marks: &[&str] = match k {
                15 => &["DDL start"],
                32 => &["DDL end"],
                _ => &[],
            };
            let r = tenth(k, w, marks);
            let closes = (k + 1) % 10 == 0;
            let line = closes.then(|| second(k / 10, w));
            let out = tt.push(&r, line.as_ref());
            if !closes {
                assert!(out.is_empty(), "{k}: {out:?}");
            }
            lines.extend(out);
        }
        lines.extend(tt.finish());
        // 1 + 10 + 1 + 10 + 3 lines.
        assert_eq!(lines.len(), 25, "{lines:#?}");
        let t0: Vec<&str> = lines
            .iter()
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(t0[0], "0");
        assert_eq!(&t0[1..3], &["1.0", "1.1"]);
        assert_eq!(t0[11], "2");
        assert_eq!(&t0[12..14], &["3.0", "3.1"]);
        assert_eq!(&t0[22..], &["4.0", "4.1", "4.2"]);
        assert!(
            lines[0].contains(" 100 ") && lines[0].contains(" 2000 "),
            "{}",
            lines[0]
        );
        assert!(lines[6].contains("[DDL start]"), "{}", lines[6]);
        assert!(lines[14].contains("[DDL end]"), "{}", lines[14]);
        assert!(text_note(0.1).contains("a line per second"));
        assert_eq!(text_note(1.0), "");
        // At whole-second intervals every line is the interval's own.
        let mut tt = TextTimeline::default();
        let r = second(5, "during");
        assert_eq!(tt.push(&r, Some(&r)), vec![timeline_line(&r)]);
        assert!(tt.finish().is_empty());
    }
}
