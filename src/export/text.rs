//! Human-readable text: the run header, step summaries with response-time histograms in the
//! insert benchmark's buckets and percentiles, and the metrics line.

use std::fmt::Write as _;

use super::Table;
use crate::dbms::TargetInfo;
use crate::measure::histogram::{LatencySummary, IIBENCH_BUCKET_LABELS};
use crate::results::{RunResult, StepResult};

/// The lines printed before the first step.
pub fn run_header(target: &TargetInfo, results_dir: &str) -> String {
    let mut s = String::new();
    let engine = target
        .engine
        .as_deref()
        .map(|e| format!(" ({e})"))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "ixbench {} · {} {}{engine} · {}",
        env!("CARGO_PKG_VERSION"),
        target.kind,
        target.version,
        target.location
    );
    if target.settings.len() > 16 {
        let _ = writeln!(
            s,
            "settings: {} recorded in run.json (target.settings)",
            target.settings.len()
        );
    } else if !target.settings.is_empty() {
        let set: Vec<String> = target
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = writeln!(s, "settings: {}", set.join(" "));
    }
    for n in &target.notes {
        let _ = writeln!(s, "note: {n}");
    }
    let _ = writeln!(s, "results: {results_dir}");
    s
}

use crate::format::{self as fmt, ms};

fn latency_row(label: &str, l: &LatencySummary) -> String {
    let mut s = format!("  {label:<16}");
    for b in &l.buckets {
        let _ = write!(s, "{b:>8}");
    }
    let _ = write!(
        s,
        " |{:>9}{:>9}{:>9}{:>9}{:>10}",
        ms(l.p50_us),
        ms(l.p90_us),
        ms(l.p99_us),
        ms(l.p999_us),
        ms(l.max_us)
    );
    s
}

/// The summary printed after a step.
pub fn step_summary(step: &StepResult) -> String {
    let mut s = String::new();
    let t = &step.totals;
    let mode = match (step.throttled, step.target_rate) {
        (true, Some(r)) => format!(
            "writers throttled to {r:.0} rows/s per client (open loop; latency from intended start), queries unthrottled (closed loop)"
        ),
        _ => "unthrottled (closed loop: as fast as possible)".to_string(),
    };
    let rates = if t.ops.iter().any(|&o| o > 0) {
        format!(
            ": {:.0} ins/s, {:.0} del/s, {:.0} queries/s; {mode}",
            step.summary.ips, step.summary.dps, step.summary.qps
        )
    } else if !step.index_builds.is_empty() {
        format!(": {:.0} rows indexed/s", step.summary.ips)
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "-- {} {} in {:.1} s{rates}",
        step.name,
        match step.status {
            crate::results::Status::Ok => "done",
            crate::results::Status::ChecksFailed => "done, CHECKS FAILED,",
            crate::results::Status::Failed => "FAILED",
            crate::results::Status::Interrupted => "INTERRUPTED",
            crate::results::Status::Running => "running",
        },
        step.seconds,
    );
    if t.ops.iter().any(|&o| o > 0) {
        let _ = writeln!(
            s,
            "   counts: {} rows inserted in {} commits, {} rows deleted in {} commits, {} queries returning {} rows; retries {}/{}/{}",
            t.rows[0], t.ops[0], t.rows[1], t.ops[1], t.ops[2], t.rows[2], t.retries[0], t.retries[1], t.retries[2]
        );
    }
    if !step.latency.is_empty() {
        let mut head = format!("  {:<16}", "response (ms)");
        for b in IIBENCH_BUCKET_LABELS {
            let _ = write!(head, "{b:>8}");
        }
        let _ = write!(
            head,
            " |{:>9}{:>9}{:>9}{:>9}{:>10}",
            "p50", "p90", "p99", "p99.9", "max"
        );
        let _ = writeln!(s, "{head}");
        for l in &step.latency {
            let _ = writeln!(s, "{}", latency_row(&l.op, &l.latency));
            if step.throttled && l.op != "query" {
                let _ = writeln!(
                    s,
                    "{}",
                    latency_row(&format!("{} service", l.op), &l.service)
                );
            }
        }
    }
    for m in &step.maintenance {
        // A skipped action ran for no time that was measured: no "0.000 s" in front of it.
        if m.detail.starts_with("SKIPPED") {
            let _ = writeln!(s, "   {}: {}", m.action, m.detail);
        } else {
            let _ = writeln!(
                s,
                "   {}: {} s {}",
                m.action,
                fmt::secs(m.seconds),
                m.detail
            );
        }
    }
    if !step.sizes.objects.is_empty() {
        let parts: Vec<String> = step
            .sizes
            .objects
            .iter()
            .map(|(n, b)| format!("{n}={}MB", fmt::num(*b as f64 / 1e6)))
            .collect();
        let _ = writeln!(s, "   sizes: {}", parts.join(" "));
    }
    let m = &step.summary;
    let rates = match (m.p50, m.p01, step.interval_rates_unknown()) {
        (Some(p50), Some(p01), _) => format!("p50={p50:.0} p01={p01:.0}"),
        (_, _, why) => format!("p50=n/a p01=n/a ({})", why.unwrap_or("unknown")),
    };
    let _ = writeln!(
        s,
        "   summary: ips={:.0} qps={:.0} dps={:.0} maxop={}s {rates} dbgb={}",
        m.ips,
        m.qps,
        m.dps,
        fmt::secs(m.maxop),
        m.dbgb.map(fmt::num).unwrap_or_else(|| "unknown".into())
    );
    let window = match step.window_secs {
        Some(w) => format!("over the {} s of its operations", fmt::secs(w)),
        None => "over the whole step".to_string(),
    };
    let _ = writeln!(
        s,
        "   client (ixbench) {window}: cpu {} us/op, {:.0}% of a core, read {} MB/s, write calls {} MB/s, {:.0} cs/s, peak rss {}",
        fmt::num(m.cpupq),
        m.client_cpu_pct,
        fmt::num(m.client_read_mbps),
        fmt::num(m.client_write_mbps),
        m.client_cs_per_sec,
        m.client_rss_mb
            .map(|v| format!("{v:.0} MB"))
            .unwrap_or_else(|| "unknown".into())
    );
    if let Some(srv) = &step.server {
        let _ = writeln!(s, "   server {window}: {}", server_figures(srv, m));
    }
    if let Some(r) = &step.server_reported {
        s.push_str(&reported_figures(r, &window, m.srv_write_kb_per_op));
    }
    if let Some(o) = &step.outside {
        let srv = o
            .server
            .as_ref()
            .map(|v| {
                format!(
                    ", server cpu {} s, server write calls {}",
                    fmt::secs(v.cpu_us as f64 / 1e6),
                    mb(v.write_call_bytes)
                )
            })
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "   set-up and checks (not in the figures above): {} s, client cpu {} s{srv}",
            fmt::secs(o.seconds),
            fmt::secs(o.client.cpu_us() as f64 / 1e6),
        );
    }
    if let Some(f) = &step.flow {
        let mut parts = vec![format!(
            "longest time without a completed operation {} s",
            fmt::secs(f.longest_stall_secs)
        )];
        if let (Some(ex), Some(de)) = (f.max_excess_rows, f.max_deficit_rows) {
            parts.push(format!(
                "table size within +{ex}/-{de} rows per client; inserters waited {} s for their deleters ({} batches)",
                fmt::secs(f.insert_wait_secs), f.insert_waits
            ));
        }
        if let Some(a) = f.arrivals {
            parts.push(format!("{a:?} arrivals").to_lowercase());
        }
        let _ = writeln!(s, "   flow: {}", parts.join("; "));
    }
    if let (Some(peak), Some(end)) = (step.wal_peak_bytes, step.wal_end_bytes) {
        let _ = writeln!(
            s,
            "   wal: peak {} MB, {} MB at the end",
            fmt::num(peak as f64 / 1e6),
            fmt::num(end as f64 / 1e6)
        );
    }
    for w in &step.warnings {
        let _ = writeln!(s, "   WARNING: {w}");
    }
    if !step.checks.is_empty() {
        let failed: Vec<_> = step.checks.iter().filter(|c| !c.ok).collect();
        if failed.is_empty() {
            let _ = writeln!(s, "   checks: ok ({} passed)", step.checks.len());
        } else {
            for c in failed {
                let _ = writeln!(s, "   CHECK FAILED [{}]: {}", c.name, c.detail);
            }
        }
    }
    if let Some(e) = &step.error {
        let _ = writeln!(s, "   error: {e}");
    }
    s
}

/// `12.3 MB`, or `unknown`.
fn mb(v: Option<u64>) -> String {
    v.map(|b| format!("{} MB", fmt::num(b as f64 / 1e6)))
        .unwrap_or_else(|| "unknown".into())
}

/// The server's figures of a step, each named for what it is; `unknown` where unreadable.
fn server_figures(
    srv: &crate::measure::sys::ServerSample,
    m: &crate::results::SummaryLine,
) -> String {
    let per = |v: Option<f64>, unit: &str| {
        v.map(|v| format!(" ({} {unit}/op)", fmt::num(v)))
            .unwrap_or_default()
    };
    let mut parts = vec![
        format!(
            "cpu {} s{}",
            fmt::secs(srv.cpu_us as f64 / 1e6),
            per(m.srv_cpupq, "us")
        ),
        format!(
            "read {}{}",
            mb(srv.read_bytes),
            per(m.srv_read_kb_per_op, "KB")
        ),
        format!(
            "written {}{} by the DBMS's count",
            mb(srv.dbms_written_bytes),
            per(m.srv_write_kb_per_op, "KB")
        ),
        format!("write calls {}", mb(srv.write_call_bytes)),
    ];
    match &srv.device {
        Some(d) => parts.push(format!(
            "device {} wrote {} (all processes)",
            d.device,
            mb(Some(d.written_bytes))
        )),
        None => parts.push("device unknown".into()),
    }
    parts.push(format!("memory {} PSS", mb(srv.pss_bytes)));
    parts.push(format!(
        "data directory {}",
        srv.datadir_bytes
            .map(|b| format!("{} GB", fmt::num(b as f64 / 1e9)))
            .unwrap_or_else(|| "unknown".into())
    ));
    format!("{} ({} processes)", parts.join(", "), srv.processes)
}

/// How many of the DBMS's own figures a step's summary shows (the rest are in run.json).
const REPORTED_SHOWN: usize = 10;

/// The DBMS's own figures of a window (`--server-figures dbms|both`, or `auto` for a server
/// not on this machine): bytes first, then rows, then counts, each with where it comes from,
/// and every figure it could not give with why.
pub fn reported_figures(
    r: &crate::measure::server_figures::DbmsReport,
    window: &str,
    write_kb_per_op: Option<f64>,
) -> String {
    let mut s = String::new();
    let written = match (r.written_bytes, write_kb_per_op) {
        (Some(b), Some(k)) => format!("{} ({} KB/op)", mb(Some(b)), fmt::num(k)),
        (b, _) => mb(b),
    };
    let mut moved: Vec<&crate::dbms::server_stats::ReportedFigure> =
        r.figures.iter().filter(|f| f.value > 0.0).collect();
    let rank = |u: &str| match u {
        "bytes" => 0,
        "rows" => 1,
        _ => 2,
    };
    moved.sort_by_key(|f| rank(&f.unit));
    let shown: Vec<String> = moved
        .iter()
        .take(REPORTED_SHOWN)
        .map(|f| match f.unit.as_str() {
            "bytes" => format!("{} {}", f.name, mb(Some(f.value as u64))),
            "count" | "rows" => format!("{} {:.0}", f.name, f.value),
            u => format!("{} {:.0} {u}", f.name, f.value),
        })
        .collect();
    let more =
        moved.len().saturating_sub(REPORTED_SHOWN) + r.figures.len().saturating_sub(moved.len());
    let _ = writeln!(
        s,
        "   server as the DBMS reports it {window}: written {written} by the DBMS's count; {}{}",
        if shown.is_empty() {
            "no counter moved".to_string()
        } else {
            shown.join(", ")
        },
        if more > 0 {
            format!(" (+{more} more in run.json)")
        } else {
            String::new()
        }
    );
    if !r.unknown.is_empty() {
        let names: Vec<&str> = r.unknown.iter().map(|u| u.name.as_str()).collect();
        let _ = writeln!(
            s,
            "     unknown (why: at the start, and server_figures in run.json): {}",
            names.join("; ")
        );
    }
    for u in &r.failed {
        let _ = writeln!(s, "     unknown: {}: {}", u.name, u.why);
    }
    s
}

/// Where the server's figures come from, printed once as a command starts when the DBMS's own
/// are read: why, what the server reports, and what it cannot, each with why.
pub fn figures_choice(c: &crate::measure::server_figures::ServerFiguresChoice) -> String {
    let mut s = format!(
        "server figures: {}
",
        c.why
    );
    if let Some(src) = &c.dbms_source {
        let _ = writeln!(s, "   from {src}");
    }
    for u in &c.dbms_unknown {
        let _ = writeln!(s, "   unknown: {}: {}", u.name, u.why);
    }
    s
}

/// The self-checks of a run ([`super::checks_table`]), for the end of any command: a count,
/// then per place (a step, a build, a knob point, a measured run) the names of the checks that
/// passed and those that failed, each failed one with what it found. `No self-check ran`
/// when none did.
pub fn checks(run: &RunResult) -> String {
    let t = super::checks_table(run);
    if t.rows.is_empty() {
        return "checks: no self-check ran\n".into();
    }
    let failed = t.rows.iter().filter(|r| r[2] != "ok").count();
    let mut s = if failed == 0 {
        format!("checks: all {} passed\n", t.rows.len())
    } else {
        format!("checks: {failed} of {} FAILED\n", t.rows.len())
    };
    // Places in order of first appearance, each with its checks' names (a name repeated in a
    // place, as one plan check per index, once with its count).
    let mut places: Vec<(&str, Vec<&Vec<String>>)> = Vec::new();
    for r in &t.rows {
        match places.iter_mut().find(|(p, _)| *p == r[0]) {
            Some((_, v)) => v.push(r),
            None => places.push((&r[0], vec![r])),
        }
    }
    let names = |rows: &[&Vec<String>]| {
        let mut out: Vec<(String, usize)> = Vec::new();
        for r in rows {
            match out.iter_mut().find(|(n, _)| *n == r[1]) {
                Some((_, k)) => *k += 1,
                None => out.push((r[1].clone(), 1)),
            }
        }
        out.into_iter()
            .map(|(n, k)| if k > 1 { format!("{n} x{k}") } else { n })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let width = places
        .iter()
        .map(|(p, _)| p.chars().count())
        .max()
        .unwrap_or(0);
    for (place, rows) in &places {
        let (ok, bad): (Vec<&Vec<String>>, Vec<&Vec<String>>) =
            rows.iter().partition(|r| r[2] == "ok");
        let mut parts = Vec::new();
        if !ok.is_empty() {
            parts.push(format!("{} ok: {}", ok.len(), names(&ok)));
        }
        if !bad.is_empty() {
            parts.push(format!("{} FAILED: {}", bad.len(), names(&bad)));
        }
        let _ = writeln!(s, "   {place:<width$}  {}", parts.join("; "));
        for r in bad {
            let _ = writeln!(s, "   {:<width$}    CHECK FAILED [{}]: {}", "", r[1], r[3]);
        }
    }
    s
}

/// One line per step, for the end of a run.
pub fn run_table(run: &RunResult) -> String {
    table(&super::steps_table(run))
}

/// A cell wider than this that ends in a parenthesised reason (`n/a (step shorter than an
/// interval)`) is shortened to its head and a footnote mark in [`table`].
const WIDE_CELL: usize = 20;

/// A table as aligned text columns (numbers right-aligned). A wide cell of the form
/// `HEAD (REASON)` is printed `HEAD [k]` with `[k] REASON` below the table, so one long reason
/// does not widen its column for every row.
pub fn table(t: &Table) -> String {
    let mut notes: Vec<String> = Vec::new();
    let mut short = t.clone();
    for row in &mut short.rows {
        for c in row.iter_mut() {
            *c = fmt::cell(c).into_owned();
            if c.chars().count() <= WIDE_CELL || !c.ends_with(')') {
                continue;
            }
            let Some((head, reason)) = c[..c.len() - 1].split_once(" (") else {
                continue;
            };
            if head.is_empty() || head.contains(' ') {
                continue;
            }
            let k = match notes.iter().position(|n| n == reason) {
                Some(k) => k + 1,
                None => {
                    notes.push(reason.to_string());
                    notes.len()
                }
            };
            *c = format!("{head} [{k}]");
        }
    }
    let mut s = aligned(&short);
    for (k, n) in notes.iter().enumerate() {
        let _ = writeln!(s, "[{}] {n}", k + 1);
    }
    s
}

fn aligned(t: &Table) -> String {
    let n = t.headers.len();
    let mut w = vec![0usize; n];
    for row in std::iter::once(&t.headers).chain(t.rows.iter()) {
        for (i, c) in row.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut s = String::new();
    for row in std::iter::once(&t.headers).chain(t.rows.iter()) {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 0 {
                    format!("{c:<width$}", width = w[i])
                } else {
                    format!("{c:>width$}", width = w[i])
                }
            })
            .collect();
        let _ = writeln!(s, "{}", cells.join("  ").trim_end());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_reason_is_a_footnote() {
        let mut t = Table::new(["step", "p01 (ops/s)", "status"]);
        t.push(vec![
            "l.i0".into(),
            "n/a (step shorter than an interval)".into(),
            "ok".into(),
        ]);
        t.push(vec!["l.i1".into(), "5899".into(), "ok".into()]);
        t.push(vec![
            "l.i2".into(),
            "n/a (step shorter than an interval)".into(),
            "ok (rate NOT met)".into(),
        ]);
        let s = table(&t);
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[1].contains("n/a [1]"), "{s}");
        assert!(lines[3].contains("n/a [1]"), "{s}");
        // a short parenthesis stays
        assert!(lines[3].contains("ok (rate NOT met)"), "{s}");
        assert_eq!(lines[4], "[1] step shorter than an interval", "{s}");
        assert!(lines[..4].iter().all(|l| l.len() < 45), "{s}");
    }
}
