//! `ixbench ddl`'s output: the per-second timeline line, one line per knob point, and the
//! tables (Markdown/CSV/text through [`Table`]): one row per knob point like seed 003's
//! (knobs | DDL s | TPS | QPS | p99 | worst dip | recovery s) with the baseline row first, and
//! every window of every point.

use super::Table;
use crate::dbms::KnobAxis;
use crate::measure::windows::{Impact, WindowStats};
use crate::results::ddl::{DdlPoint, DdlRunResult, TimelineRow};

fn ms(us: Option<u64>) -> String {
    us.map(|v| format!("{:.2}", v as f64 / 1000.0))
        .unwrap_or_else(|| "-".into())
}

fn f1(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into())
}

fn ratio(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2}x")).unwrap_or_else(|| "-".into())
}

/// The header of the per-second lines.
pub fn timeline_header() -> String {
    format!(
        "   {:>5} {:<8} {:>8} {:>9} {:>8} {:>8} {:>8} {:>5}  {}",
        "t", "window", "tps", "qps", "p50_ms", "p99_ms", "max_ms", "err", "DDL"
    )
}

/// One second of the load.
pub fn timeline_line(r: &TimelineRow) -> String {
    let marks: Vec<String> = r.marks.iter().map(|m| format!("[{m}]")).collect();
    let mut ddl = vec![marks.join(" ")];
    ddl.extend(r.phase.iter().cloned());
    ddl.extend(r.waits.iter().cloned());
    ddl.retain(|x| !x.is_empty());
    format!(
        "   {:>5} {:<8} {:>8} {:>9} {:>8} {:>8} {:>8} {:>5}  {}",
        r.t,
        r.window,
        r.txns,
        r.queries,
        ms(r.p50_us),
        ms(r.p99_us),
        ms(r.max_us),
        r.errors,
        ddl.join("; ")
    )
    .trim_end()
    .to_string()
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

fn recovery(v: Option<u32>, i: &Impact) -> String {
    match v {
        Some(s) => format!("{s}"),
        None => format!("not in {}", i.after.seconds),
    }
}

/// The errors and retries of the three windows together.
fn all_windows(i: &Impact) -> WindowStats {
    let mut w = WindowStats::default();
    for x in [&i.baseline, &i.during, &i.after] {
        for (k, v) in &x.errors {
            *w.errors.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &x.retry_codes {
            *w.retry_codes.entry(k.clone()).or_default() += v;
        }
    }
    w
}

/// One line per knob point, printed when it ends.
pub fn point_line(p: &DdlPoint) -> String {
    let mut parts = Vec::new();
    let d = &p.ddl;
    match (&p.error, d.seconds) {
        (Some(e), _) => parts.push(format!("FAILED: {e}")),
        (None, Some(s)) => parts.push(format!(
            "DDL {s:.2} s ({} attempt{})",
            d.attempts,
            if d.attempts == 1 { "" } else { "s" }
        )),
        (None, None) => {}
    }
    if let Some(i) = &p.impact {
        parts.push(format!(
            "baseline {} TPS, p99 {} ms; during {} TPS ({}), p99 {} ms ({}); worst second {} TPS, p99 {} ms; TPS back within 5% after {} s, p99 after {} s (of the after window); errors {}, retries {}",
            f1(i.baseline.tps),
            ms(i.baseline.p99_us),
            f1(i.during.tps),
            ratio(i.tps_ratio),
            ms(i.during.p99_us),
            ratio(i.p99_ratio),
            f1(i.worst_tps.map(|w| w.1)),
            ms(i.worst_p99_us.map(|w| w.1)),
            recovery(i.recovery_tps_s, i),
            recovery(i.recovery_p99_s, i),
            errors(&all_windows(i)),
            i.baseline.retries + i.during.retries + i.after.retries
        ));
    }
    if !d.lock_waits.is_empty() {
        let w: Vec<String> = d
            .lock_waits
            .iter()
            .map(|w| format!("{} at {:.0} s for {:.0} s", w.what, w.from_s, w.seconds))
            .collect();
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
            "{} intended starts not taken at the end (the load fell behind its rate)",
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
/// TPS | QPS | p99 | worst dip | recovery, and the ratios, errors, the DDL's attempts, the most
/// sessions that waited behind it and whether it was ok.
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
            "recovery_s",
            "tps_vs_base",
            "p99_vs_base",
            "errors",
            "ddl_attempts",
            "waiting_sessions",
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
            ms(i.baseline.p99_us),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            errors(&i.baseline),
            "-".into(),
            "-".into(),
            "-".into(),
        ]);
        t.push(row);
    }
    for (n, p) in r.points.iter().enumerate() {
        let mut row = vec![format!("during DDL, point {}", n + 1)];
        row.extend(axes.iter().map(|a| knob(p, a)));
        let ddl_s = match (&p.ddl.error, p.ddl.seconds) {
            (Some(_), Some(s)) => format!("failed {s:.2}"),
            (None, Some(s)) => format!("{s:.2}"),
            _ => "-".into(),
        };
        match &p.impact {
            Some(i) => row.extend([
                ddl_s,
                f1(i.during.tps),
                f1(i.during.qps),
                ms(i.during.p99_us),
                f1(i.worst_tps.map(|w| w.1)),
                ms(i.worst_p99_us.map(|w| w.1)),
                recovery(i.recovery_tps_s, i),
                ratio(i.tps_ratio),
                ratio(i.p99_ratio),
                errors(&i.during),
            ]),
            None => {
                row.push(ddl_s);
                row.extend((0..9).map(|_| "-".to_string()));
            }
        }
        row.push(p.ddl.attempts.to_string());
        row.push(p.ddl.max_blocked_sessions.to_string());
        row.push(if p.ok { "ok".into() } else { "FAILED".into() });
        t.push(row);
    }
    t
}

/// Every window of every point.
pub fn windows_table(r: &DdlRunResult, axes: &[KnobAxis]) -> Table {
    let mut headers: Vec<String> = vec!["point".into()];
    headers.extend(axes.iter().map(|a| a.name.clone()));
    headers.extend(
        [
            "window", "from_s", "seconds", "txns", "tps", "qps", "p50_ms", "p99_ms", "max_ms",
            "errors", "retries",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let mut t = Table::new(headers);
    for (n, p) in r.points.iter().enumerate() {
        let Some(i) = &p.impact else { continue };
        for w in [&i.baseline, &i.during, &i.after] {
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
                w.from_s.to_string(),
                w.seconds.to_string(),
                w.txns.to_string(),
                f1(w.tps),
                f1(w.qps),
                ms(w.p50_us),
                ms(w.p99_us),
                ms(w.max_us),
                errors(w),
                w.retries.to_string(),
            ]);
            t.push(row);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::histogram::record;
    use crate::measure::windows::{analyse, Second};
    use crate::results::ddl::DdlOutcome;

    fn point(knob: &str, ddl_s: f64) -> DdlPoint {
        let secs: Vec<Second> = (0..10)
            .map(|i| {
                let txns = if i == 5 { 10 } else { 100 };
                let mut s = Second {
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
            impact: Some(analyse(&secs, 4.5, 4.5 + ddl_s)),
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
        assert_eq!(t.rows[0][0], "baseline (no DDL)");
        assert_eq!(t.rows[0][3], "100.0");
        assert_eq!(t.rows[0][4], "1800.0");
        assert_eq!(t.rows[1][1], "64MB");
        assert_eq!(t.rows[1][2], "1.20");
        // during = seconds 4 and 5: (100 + 10) / 2
        assert_eq!(t.rows[1][3], "55.0");
        assert_eq!(t.rows[1][6], "10.0");
        assert_eq!(t.rows[1][8], "0");
        assert_eq!(t.rows[1][9], "0.55x");
        assert_eq!(t.rows[2][12], "1"); // attempts
        assert_eq!(t.rows[2][13], "0"); // nobody waited behind it
        assert_eq!(t.rows[2][14], "ok");
        assert!(t.rows.iter().all(|r| r.len() == t.headers.len()));
        let w = windows_table(&r, &axes);
        assert_eq!(w.rows.len(), 6);
        assert_eq!(w.rows[1][2], "during");
        let line = point_line(&r.points[0]);
        assert!(line.starts_with("DDL 1.20 s (1 attempt)"), "{line}");
        assert!(line.contains("worst second 10.0 TPS"), "{line}");
    }

    #[test]
    fn timeline_lines() {
        let r = TimelineRow {
            t: 7,
            window: "during".into(),
            txns: 12,
            queries: 240,
            p99_us: Some(12_345),
            marks: vec!["DDL start".into()],
            phase: Some("c_idx: building index".into()),
            ..Default::default()
        };
        let l = timeline_line(&r);
        assert!(l.contains("12.35") || l.contains("12.34"), "{l}");
        assert!(l.contains("[DDL start]; c_idx: building index"), "{l}");
        assert_eq!(
            timeline_header().split_whitespace().count(),
            9,
            "{}",
            timeline_header()
        );
    }
}
