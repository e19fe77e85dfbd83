//! `ixbench ddl --method`'s output: one line per point on how its method went (the program's
//! exit and last message, what the change added to the server's CPU and writes, the row
//! count), and the comparison table, one row per method (and knob point): DDL seconds, TPS and
//! p99 during against the baseline, the worst second, recovery and relapses (the same cells as
//! the points' table, from [`super::ddl`]), the after window against the baseline, the
//! server's extra CPU and
//! bytes written, lock waits, the load's errors and retries, the rows check, the program's
//! exit status and last message. A view over the points' figures; nothing is measured here.

use super::ddl::{f1, load_errors, lock_wait, ratio, recovery_cell, relapses_cell};
use super::Table;
use crate::dbms::KnobAxis;
use crate::format::opt_ms as ms;
use crate::results::ddl::{ddl_secs, DdlPoint, DdlRunResult};
use crate::results::verdict::State;

/// Bytes in MB (10^6), signed, 3 significant digits; `unknown` when not measured.
fn mb(v: Option<i64>) -> String {
    v.map(|b| crate::format::num(b as f64 / 1e6))
        .unwrap_or_else(|| "unknown".into())
}

/// Seconds with 3 significant digits; `unknown` when not measured.
fn secs(v: Option<f64>) -> String {
    v.map(crate::format::secs)
        .unwrap_or_else(|| "unknown".into())
}

/// The lock waits of a point: the change's own waits and the most sessions that waited
/// behind it.
fn waits(p: &DdlPoint) -> String {
    let mut parts: Vec<String> = p
        .ddl
        .lock_waits
        .iter()
        .map(|w| format!("DDL waited: {}", lock_wait(w)))
        .collect();
    if p.ddl.max_blocked_sessions > 0 {
        parts.push(format!(
            "up to {} sessions waited behind it",
            p.ddl.max_blocked_sessions
        ));
    }
    if let Some(s) = p.method.as_ref().and_then(|m| m.swap_s) {
        parts.push(format!("swap {} s", crate::format::secs(s)));
    }
    if parts.is_empty() {
        "none seen".into()
    } else {
        parts.join("; ")
    }
}

/// The rows check in short: `ok (100000)`, `LOST 12`, `unknown`.
fn rows(p: &DdlPoint) -> String {
    let Some(m) = &p.method else {
        return "-".into();
    };
    match (m.rows_before, m.rows_net, m.rows_after) {
        (Some(b), Some(n), Some(a)) if b + n == a => format!("ok ({a})"),
        (Some(b), Some(n), Some(a)) if a < b + n => format!("LOST {}", b + n - a),
        (Some(b), Some(n), Some(a)) => format!("{} EXTRA", a - b - n),
        _ => "unknown".into(),
    }
}

/// Cut a message to `n` characters.
fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}

/// "X MB written (Y MB beyond the load's)". The extra is what was written minus what the load
/// writes at its rate in as many seconds; when the load was held back (a blocking change), it
/// wrote less than that and the difference is negative: that is said in words, not printed as
/// a negative amount the change would have written.
fn written_clause(written: Option<i64>, extra: Option<i64>) -> String {
    match extra {
        Some(e) if e < 0 => format!(
            "{} MB written (less than the load alone writes at its rate in as long, by {} MB: \
             the load was held back, so the change's own writes cannot be told apart)",
            mb(written),
            mb(Some(-e))
        ),
        _ => format!(
            "{} MB written ({} MB beyond the load's)",
            mb(written),
            mb(extra)
        ),
    }
}

/// One line on how a point's method went; `None` for a point without a method record.
pub fn method_line(p: &DdlPoint) -> Option<String> {
    let m = p.method.as_ref()?;
    let mut parts = vec![m.method.clone()];
    if let Some(e) = &m.exit_status {
        parts.push(match &m.last_message {
            Some(msg) => format!("{e} ({})", short(msg, 120)),
            None => e.clone(),
        });
    }
    parts.push(format!(
        "server CPU {} s during the change ({} s beyond the load's own rate)",
        secs(m.server_cpu_s),
        secs(m.extra_server_cpu_s)
    ));
    parts.push(written_clause(m.written_bytes, m.extra_written_bytes));
    if let Some(c) = m.tool_cpu_s {
        parts.push(format!(
            "the program's own CPU {} s",
            crate::format::secs(c)
        ));
    }
    parts.push(format!("rows {}", rows(p)));
    if !m.cleaned_up.is_empty() {
        parts.push(format!("dropped what it left: {}", m.cleaned_up.join(", ")));
    }
    if !m.left_behind.is_empty() {
        parts.push(format!("LEFT ON THE SERVER: {}", m.left_behind.join(", ")));
    }
    if let Some(f) = &m.output_file {
        parts.push(format!("output in {f}"));
    }
    Some(parts.join("; "))
}

/// The comparison: one row per point (method, then its knobs), the figures of its windows.
pub fn methods_table(r: &DdlRunResult, axes: &[KnobAxis]) -> Table {
    let mut headers: Vec<String> = vec!["method".into()];
    headers.extend(axes.iter().map(|a| a.name.clone()));
    headers.extend(
        [
            "ddl_s",
            "tps_base",
            "tps_during",
            "tps_vs_base",
            "p99_base_ms",
            "p99_during_ms",
            "p99_vs_base",
            "worst_tps",
            "worst_p99_ms",
            "recovery_s",
            "relapses",
            "after_tps_vs_base",
            "after_p99_vs_base",
            "extra_server_cpu_s",
            "extra_written_mb",
            "program_cpu_s",
            "lock_waits",
            "load_errors",
            "rows",
            "exit",
            "last_message",
            "verdict",
            "method_verdict",
            "ok",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let mut t = Table::new(headers);
    let method_name = |p: &DdlPoint| {
        p.method
            .as_ref()
            .map(|m| m.method.clone())
            .unwrap_or_else(|| "native".into())
    };
    for p in &r.points {
        let m = p.method.as_ref();
        let mut row = vec![m
            .map(|m| m.method.clone())
            .unwrap_or_else(|| "native".into())];
        row.extend(axes.iter().map(|a| {
            p.knobs
                .iter()
                .find(|(k, _)| k == &a.name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        }));
        row.push(match (&p.ddl.error, p.ddl.seconds) {
            (Some(_), Some(s)) => format!("failed {}", ddl_secs(s)),
            (None, Some(s)) => ddl_secs(s),
            _ => "-".into(),
        });
        match &p.impact {
            Some(i) => row.extend([
                f1(i.baseline.tps),
                f1(i.during.tps),
                ratio(i.tps_ratio),
                ms(i.baseline.p99_us),
                ms(i.during.p99_us),
                ratio(i.p99_ratio),
                f1(i.worst_tps.map(|w| w.1)),
                ms(i.worst_p99_us.map(|w| w.1)),
                recovery_cell(i),
                relapses_cell(i),
                ratio(i.after_tps_ratio),
                ratio(i.after_p99_ratio),
            ]),
            None => row.extend((0..12).map(|_| "-".to_string())),
        }
        row.push(secs(m.and_then(|m| m.extra_server_cpu_s)));
        row.push(mb(m.and_then(|m| m.extra_written_bytes)));
        row.push(
            m.and_then(|m| m.tool_cpu_s)
                .map(crate::format::secs)
                .unwrap_or_else(|| "-".into()),
        );
        row.push(waits(p));
        row.push(
            p.impact
                .as_ref()
                .map(load_errors)
                .unwrap_or_else(|| "-".into()),
        );
        row.push(rows(p));
        row.push(
            m.and_then(|m| m.exit_status.clone())
                .unwrap_or_else(|| "-".into()),
        );
        row.push(
            m.and_then(|m| m.last_message.as_deref())
                .map(|s| short(s, 100))
                .or_else(|| p.error.as_deref().map(|e| short(e, 100)))
                .unwrap_or_else(|| "-".into()),
        );
        row.push(p.judge().0.text().into());
        // the method's state: the worst of its points (knob points)
        let name = method_name(p);
        row.push(
            State::overall(
                r.points
                    .iter()
                    .filter(|q| method_name(q) == name)
                    .map(|q| q.judge().0),
            )
            .text()
            .into(),
        );
        row.push(if p.ok { "ok".into() } else { "FAILED".into() });
        t.push(row);
    }
    t
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_held_back_load_gives_no_negative_extra_writes() {
        let held = super::written_clause(Some(0), Some(-7_500_000));
        assert!(!held.contains("-7.5"), "{held}");
        assert!(
            held.contains("held back") && held.contains("by 7.50 MB"),
            "{held}"
        );
        let more = super::written_clause(Some(20_000_000), Some(5_000_000));
        assert_eq!(more, "20.0 MB written (5.00 MB beyond the load's)");
        let unknown = super::written_clause(None, None);
        assert_eq!(unknown, "unknown MB written (unknown MB beyond the load's)");
    }

    use super::*;
    use crate::measure::histogram::record;
    use crate::measure::windows::{analyse, IntervalStats};
    use crate::results::ddl::DdlOutcome;
    use crate::results::schema_tools::MethodOutcome;

    fn point(method: &str, dip: u64, ddl_s: f64) -> DdlPoint {
        let secs: Vec<IntervalStats> = (0..10)
            .map(|i| {
                let txns = if i == 5 { dip } else { 100 };
                let mut s = IntervalStats {
                    t: i as f64,
                    backlog: Some(0),
                    txns,
                    queries: txns * 18,
                    ..Default::default()
                };
                for _ in 0..s.txns {
                    record(&mut s.hist, if i == 5 { 40_000 } else { 2_000 });
                }
                s
            })
            .collect();
        DdlPoint {
            ok: true,
            impact: Some(analyse(&secs, 4.5, 4.5 + ddl_s, Some(100.0), None)),
            ddl: DdlOutcome {
                seconds: Some(ddl_s),
                attempts: 1,
                max_blocked_sessions: 3,
                ..Default::default()
            },
            method: Some(MethodOutcome {
                method: method.into(),
                exit_status: (method != "native").then(|| "exit 0".into()),
                last_message: (method != "native")
                    .then(|| "Successfully altered `ixbench`.`sbtest1`.".into()),
                extra_server_cpu_s: Some(1.25),
                extra_written_bytes: Some(12_500_000),
                rows_before: Some(1000),
                rows_net: Some(-2),
                rows_after: Some(998),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn one_row_per_method() {
        let mut lost = point("pt-osc", 50, 1.2);
        lost.method.as_mut().unwrap().rows_after = Some(990);
        let r = DdlRunResult {
            points: vec![point("native", 10, 0.8), lost],
            ..Default::default()
        };
        let t = methods_table(&r, &[]);
        assert_eq!(t.rows.len(), 2);
        assert!(t.rows.iter().all(|r| r.len() == t.headers.len()));
        let col = |name: &str| t.headers.iter().position(|h| h == name).unwrap();
        assert_eq!(t.rows[0][col("method")], "native");
        assert_eq!(t.rows[0][col("ddl_s")], "0.80");
        assert_eq!(t.rows[0][col("tps_base")], "100.0");
        // during = seconds 4 and 5: (100 + 10) / 2
        assert_eq!(t.rows[0][col("tps_during")], "55.0");
        assert_eq!(t.rows[0][col("worst_tps")], "10.0");
        assert_eq!(t.rows[0][col("extra_server_cpu_s")], "1.25");
        assert_eq!(t.rows[0][col("extra_written_mb")], "12.5");
        assert_eq!(t.rows[0][col("rows")], "ok (998)");
        assert_eq!(t.rows[0][col("exit")], "-");
        assert_eq!(t.rows[1][col("rows")], "LOST 8");
        assert_eq!(t.rows[1][col("exit")], "exit 0");
        assert!(t.rows[1][col("lock_waits")].contains("up to 3 sessions"));
        assert_eq!(t.rows[1][col("load_errors")], "none");
        assert_eq!(t.rows[0][col("verdict")], "NO CHANGE");
        assert_eq!(t.rows[0][col("method_verdict")], "NO CHANGE");
        // a method's state is the worst of its points
        let mut failed = point("native", 10, 0.8);
        failed.ok = false;
        failed.error = Some("the DDL failed".into());
        let r2 = DdlRunResult {
            points: vec![point("native", 10, 0.8), failed, point("pt-osc", 50, 1.2)],
            ..Default::default()
        };
        let t2 = methods_table(&r2, &[]);
        assert_eq!(t2.rows[0][col("verdict")], "NO CHANGE");
        assert_eq!(t2.rows[0][col("method_verdict")], "FAILED");
        assert_eq!(t2.rows[1][col("verdict")], "FAILED");
        assert_eq!(t2.rows[2][col("method_verdict")], "NO CHANGE");
        let line = method_line(&r.points[1]).unwrap();
        assert!(
            line.starts_with("pt-osc; exit 0 (Successfully altered"),
            "{line}"
        );
        assert!(line.contains("rows LOST 8"), "{line}");
        let mut unknown = point("native", 10, 0.8);
        unknown.method.as_mut().unwrap().extra_server_cpu_s = None;
        let t = methods_table(
            &DdlRunResult {
                points: vec![unknown],
                ..Default::default()
            },
            &[],
        );
        assert_eq!(t.rows[0][col("extra_server_cpu_s")], "unknown");
    }
}
