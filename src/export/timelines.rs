//! The report's sections over a DDL's or an index build's own time: for `ixbench ddl`, per
//! knob point, the load's transactions per second and latency second by second with the
//! baseline, each phase of the DDL (from the DBMS's progress view) and the recovery marked,
//! and the before/during/after figures; for the index lab, each knob point's build progress
//! over time where the DBMS reports it (PostgreSQL's `pg_stat_progress_create_index`,
//! MariaDB's stage progress; SQLite reports none). Both are [`super::html::SECTIONS`].

use super::chart::{self, Series, Span, Timeline};
use super::ddl::f1;
use super::html_table::table;
use super::Table;
use crate::format::opt_ms as ms;
use crate::measure::interval::IntervalLine;
use crate::measure::windows::WindowStats;
use crate::results::ddl::DdlPoint;
use crate::results::{build_groups, RunResult};

use crate::format::html as esc;

/// The phase a progress sample names, without its counts: each part (`index: phase, blocks
/// 3/9` -> `index: phase`), joined with ` | `; `None` for no build running.
pub fn phase_of(sample: &str) -> Option<String> {
    let s = sample.trim();
    if s.is_empty() || s == "none running" {
        return None;
    }
    let parts: Vec<&str> = s
        .split(" | ")
        .map(|p| p.split(", ").next().unwrap_or(p).trim())
        .filter(|p| !p.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join(" | "))
}

/// How far the current phase of a progress sample is, in percent, when the DBMS gave a count
/// with a total or a percentage: the first part's `blocks D/T` or `tuples D/T` (PostgreSQL),
/// `stage S/M P%` or `innodb phase P%` (MariaDB). `None` when the sample has no such figure.
pub fn percent_of(sample: &str) -> Option<f64> {
    for part in sample.split(" | ") {
        for f in part.split(", ") {
            let f = f.trim();
            for label in ["blocks ", "tuples "] {
                if let Some((d, t)) = f.strip_prefix(label).and_then(|r| r.split_once('/')) {
                    if let (Ok(d), Ok(t)) = (d.parse::<f64>(), t.parse::<f64>()) {
                        if t > 0.0 {
                            return Some((100.0 * d / t).min(100.0));
                        }
                    }
                }
            }
            let pct = |r: &str| r.trim().strip_suffix('%')?.parse::<f64>().ok();
            if let Some(r) = f.strip_prefix("stage ") {
                if let Some(p) = r.split_whitespace().nth(1).and_then(pct) {
                    return Some(p);
                }
            }
            if let Some(p) = f.strip_prefix("innodb phase ").and_then(pct) {
                return Some(p);
            }
        }
    }
    None
}

/// The marked stretches of one point's load, in the order [`chart::timeline`] shades them
/// (every other span, from the first): the baseline and the recovery after the DDL unshaded,
/// each phase the DDL went through shaded (consecutive samples of one phase; the first from the
/// DDL's start), or the DDL as one shaded span when no phase was seen; marks (zero-length
/// spans) at the DDL's start and end, and unlabelled ones that keep the shading in step.
/// Seconds from the load's start.
pub fn ddl_spans(p: &DdlPoint, load_end: f64) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    let Some(start) = p.ddl.started_s else {
        return out;
    };
    let end = p.ddl.ended_s.unwrap_or(load_end).max(start);
    let mark = |label: &str, at: f64| Span {
        label: label.into(),
        start: at,
        end: at,
    };
    // index parity decides the shading: shaded spans at even places
    let push = |out: &mut Vec<Span>, s: Span, shaded: bool| {
        if (out.len() % 2 == 0) != shaded {
            out.push(mark("", s.start));
        }
        out.push(s);
    };
    push(&mut out, mark("DDL start", start), false);
    push(
        &mut out,
        Span {
            label: "baseline".into(),
            start: 0.0,
            end: start,
        },
        false,
    );
    let mut phases: Vec<(f64, String)> = Vec::new();
    for (t, s) in &p.ddl.progress {
        if *t > end {
            break;
        }
        let Some(ph) = phase_of(s) else { continue };
        if phases.last().map(|l| &l.1) != Some(&ph) {
            phases.push((t.max(start), ph));
        }
    }
    if phases.is_empty() {
        phases.push((start, String::new()));
    }
    phases[0].0 = start;
    for (i, (t, ph)) in phases.iter().enumerate() {
        let next = phases.get(i + 1).map_or(end, |n| n.0);
        let label = if ph.is_empty() {
            "DDL".to_string()
        } else {
            ph.chars().take(48).collect()
        };
        push(
            &mut out,
            Span {
                label,
                start: *t,
                end: next,
            },
            true,
        );
    }
    // what ended it, when not success
    let how = if p.ddl.cancelled {
        "cancelled"
    } else if p.ddl.error.is_some() {
        "failed"
    } else {
        "end"
    };
    push(&mut out, mark(&format!("DDL {how}"), end), false);
    if load_end > end {
        push(
            &mut out,
            Span {
                label: "after".into(),
                start: end,
                end: load_end,
            },
            false,
        );
    }
    out
}

/// `2.1 s: phase; 3.1 s: phase` from a point's progress samples (each phase once, when it was
/// first seen).
fn phase_list(p: &DdlPoint) -> String {
    let mut seen: Vec<(f64, String)> = Vec::new();
    for (t, s) in &p.ddl.progress {
        if let Some(ph) = phase_of(s) {
            if seen.last().map(|l| &l.1) != Some(&ph) {
                seen.push((*t, ph));
            }
        }
    }
    seen.iter()
        .map(|(t, ph)| format!("{t:.1} s: {ph}"))
        .collect::<Vec<_>>()
        .join("; ")
}

fn window_row(w: &WindowStats) -> Vec<String> {
    let errors: u64 = w.errors.values().sum();
    vec![
        w.name.clone(),
        format!(
            "{}..{}",
            crate::format::tenths(w.from_s),
            crate::format::tenths(w.from_s + w.seconds)
        ),
        w.txns.to_string(),
        f1(w.tps),
        f1(w.qps),
        ms(w.p50_us),
        ms(w.p99_us),
        ms(w.max_us),
        w.backlog_max.map_or("-".into(), |b| b.to_string()),
        errors.to_string(),
        w.retries.to_string(),
    ]
}

fn point_section(prefix: &str, n: usize, p: &DdlPoint) -> String {
    let knobs: Vec<String> = p.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let name = if knobs.is_empty() {
        format!("point {}", n + 1)
    } else {
        format!("point {}: {}", n + 1, knobs.join(" "))
    };
    let mut out = format!("<h3>{}</h3>\n", esc(&name));
    for l in super::ddl::verdict_lines(p) {
        out.push_str(&format!("<p class=\"bad\"><b>{}</b></p>\n", esc(&l)));
    }
    out.push_str(&format!(
        "<p class=\"{}\">{}</p>\n",
        if p.ok { "note" } else { "bad" },
        esc(&super::ddl::point_line(p))
    ));
    let load_end = p
        .timeline
        .iter()
        .map(|r| r.t + r.i_sec)
        .fold(0.0f64, f64::max);
    let spans = ddl_spans(p, load_end);
    // interval [t, t + i_sec): its figures are drawn at its middle
    let at = |r: &crate::results::ddl::TimelineRow| r.t + r.i_sec / 2.0;
    let mut rates = vec![Series {
        dashed: false,
        name: "transactions/s".into(),
        points: p.timeline.iter().map(|r| (at(r), r.tps())).collect(),
    }];
    if let Some(o) = p.offered_tps.filter(|o| *o > 0.0) {
        rates.push(Series {
            dashed: false,
            name: "offered rate".into(),
            points: vec![(0.0, o), (load_end, o)],
        });
    }
    if p.timeline.iter().any(|r| r.errors > 0) {
        rates.push(Series {
            dashed: false,
            name: "failed/s".into(),
            points: p
                .timeline
                .iter()
                .map(|r| (at(r), r.errors as f64 / r.i_sec.max(1e-9)))
                .collect(),
        });
    }
    if p.timeline.iter().any(|r| r.backlog.unwrap_or(0) > 0) {
        rates.push(Series {
            dashed: false,
            name: "backlog (intended starts not taken)".into(),
            points: p
                .timeline
                .iter()
                .map(|r| (r.t + r.i_sec, r.backlog.map_or(f64::NAN, |b| b as f64)))
                .collect(),
        });
    }
    let x_label = "seconds since the load began";
    let id = format!("{prefix}ddl-{}", n + 1);
    out.push_str(&chart::timeline(&Timeline {
        id: format!("{id}-tps"),
        title: format!("{name}: transactions per second and backlog, DDL phases marked"),
        x_label: x_label.into(),
        y_label: "transactions/s; backlog (starts)".into(),
        log_y: false,
        series: rates,
        spans: spans.clone(),
        size: (1300, 320),
    }));
    // max dashed, on top of p99 (often equal in a short interval): both stay visible
    let lat = |name: &str, f: fn(&crate::results::ddl::TimelineRow) -> Option<u64>| Series {
        dashed: name == "max",
        name: name.into(),
        points: p
            .timeline
            .iter()
            .map(|r| (at(r), f(r).map_or(f64::NAN, |v| v as f64 / 1000.0)))
            .collect(),
    };
    out.push_str(&chart::timeline(&Timeline {
        id: format!("{id}-latency"),
        title: format!("{name}: transaction latency per interval (log scale)"),
        x_label: x_label.into(),
        y_label: "response time (ms)".into(),
        log_y: true,
        series: vec![
            lat("p50", |r| r.p50_us),
            lat("p99", |r| r.p99_us),
            lat("max", |r| r.max_us),
        ],
        spans,
        size: (1300, 320),
    }));
    let phases = phase_list(p);
    out.push_str(&format!(
        "<p class=\"note\">DDL from {} s to {} s; phases the DBMS reported (sampled each \
         second): {}</p>\n",
        f1(p.ddl.started_s),
        f1(p.ddl.ended_s),
        if phases.is_empty() {
            "none".to_string()
        } else {
            esc(&phases)
        }
    ));
    if let Some(i) = &p.impact {
        let mut t = Table::new([
            "window",
            "seconds",
            "txns",
            "TPS",
            "QPS",
            "p50 (ms)",
            "p99 (ms)",
            "max (ms)",
            "backlog (max)",
            "failed",
            "retries",
        ]);
        for w in [&i.baseline, &i.during, &i.catchup, &i.after] {
            t.push(window_row(w));
        }
        for l in super::ddl::recovery_lines(p) {
            out.push_str(&format!("<p class=\"note\">{}</p>\n", esc(&l)));
        }
        out.push_str(&format!(
            "<div id=\"{}-windows\">{}</div>\n",
            esc(&id),
            table(&t)
        ));
    }
    out
}

/// `ixbench ddl`: per knob point, the load over time with the DDL marked, and its windows.
pub fn ddl(prefix: &str, run: &RunResult, _: &[IntervalLine]) -> String {
    let Some(d) = &run.ddl else {
        return String::new();
    };
    if d.points.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>Schema change under load</h2>\n");
    let what = d
        .statements
        .statements
        .iter()
        .map(|s| format!("<code>{}</code>", esc(s)))
        .collect::<Vec<_>>()
        .join("; ");
    out.push_str(&format!(
        "<p>{} on {}, plan <b>{}</b>, {} client thread(s) at {} TPS ({}). {}{}</p>\n",
        esc(&d.workload),
        esc(&d.dialect),
        esc(&d.plan),
        d.threads,
        f1(d.rate),
        esc(&d.rate_source),
        if what.is_empty() {
            String::new()
        } else {
            format!("DDL: {what}. ")
        },
        esc(&d.statements.lock),
    ));
    out.push_str(
        "<p class=\"note\">Each interval of the load: transactions per second and their latency \
         (from the intended start at the fixed rate, so a stall shows as latency, not as a \
         missing point), and the backlog of intended starts not yet taken at its end. Shaded: \
         the DDL, from the mark <i>DDL start</i> to <i>DDL end</i> (or <i>failed</i>, \
         <i>cancelled</i>: when its statement returned), split at each phase the DBMS's \
         progress view reported; before it the baseline, after it the catch-up (until the \
         backlog drained) and the steady state.</p>\n",
    );
    for (n, p) in d.points.iter().enumerate() {
        out.push_str(&point_section(prefix, n, p));
    }
    out
}

/// Index lab: each knob point's build progress over time (its first repeat with progress
/// figures), where the DBMS reports progress.
pub fn build_progress(prefix: &str, run: &RunResult, _: &[IntervalLine]) -> String {
    if run.builds.is_empty() {
        return String::new();
    }
    let mut series = Vec::new();
    let mut phases: Vec<String> = Vec::new();
    for ((knobs, build, mode), group) in build_groups(&run.builds) {
        let Some(b) = group
            .iter()
            .find(|b| b.progress.iter().any(|(_, s)| percent_of(s).is_some()))
        else {
            continue;
        };
        let knob_text: Vec<String> = knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let name = format!("{build} {mode} {}", knob_text.join(" "))
            .trim()
            .to_string();
        let mut points = vec![(0.0, 0.0)];
        let mut last_phase: Option<String> = None;
        for (t, s) in &b.progress {
            let ph = phase_of(s);
            // a new phase starts again from 0: break the line there
            if ph.is_some() && last_phase.is_some() && ph != last_phase {
                points.push((*t, f64::NAN));
            }
            if let Some(p) = percent_of(s) {
                points.push((*t, p));
            }
            if let Some(ph) = &ph {
                if !phases.contains(ph) {
                    phases.push(ph.clone());
                }
            }
            last_phase = ph.or(last_phase);
        }
        series.push(Series {
            dashed: false,
            name,
            points,
        });
    }
    let sampled = run.builds.iter().any(|b| !b.progress.is_empty());
    if series.is_empty() {
        return if sampled {
            "<h2>Build progress</h2>\n<p class=\"note\">The DBMS reported build phases but no \
             counts to draw (see each build's <code>progress</code> in run.json).</p>\n"
                .into()
        } else {
            String::new()
        };
    }
    let mut out = String::from("<h2>Build progress</h2>\n");
    out.push_str(&chart::timeline(&Timeline {
        id: format!("{prefix}build-progress"),
        title: "Index build progress per knob setting (% of the current phase, as the DBMS \
                reports it)"
            .into(),
        x_label: "seconds since the build began".into(),
        y_label: "% of phase".into(),
        log_y: false,
        series,
        spans: Vec::new(),
        size: (1300, 320),
    }));
    out.push_str(&format!(
        "<p class=\"note\">From the DBMS's progress view, sampled every 0.2 s for the first 5 s \
         of a build, then every second (PostgreSQL: blocks or tuples done of the phase's total; \
         MariaDB: the stage's or InnoDB's online-DDL percentage); the first repeat of each knob setting. A line starts \
         again at each new phase. Phases seen: {}.</p>\n",
        esc(&phases.join("; "))
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ddl::DdlOutcome;

    #[test]
    fn phases_and_percentages() {
        let pg = "pi1_pdc: building index: scanning table, blocks 39/197, workers 2 | pi1_x: initializing";
        assert_eq!(
            phase_of(pg).as_deref(),
            Some("pi1_pdc: building index: scanning table | pi1_x: initializing")
        );
        let p = percent_of(pg).unwrap();
        assert!((p - 100.0 * 39.0 / 197.0).abs() < 1e-9, "{p}");
        assert_eq!(
            percent_of("i: building index: loading tuples in tree, tuples 50/200"),
            Some(25.0)
        );
        assert_eq!(
            percent_of("ALTER: copy to tmp table, stage 1/2 40.0%"),
            Some(40.0)
        );
        assert_eq!(
            percent_of("ALTER: altering table, innodb phase 12.50%"),
            Some(12.5)
        );
        assert_eq!(percent_of("i: initializing"), None);
        assert_eq!(phase_of("none running"), None);
    }

    #[test]
    fn spans_mark_baseline_phases_end_after() {
        let p = DdlPoint {
            ddl: DdlOutcome {
                started_s: Some(2.3),
                ended_s: Some(5.6),
                progress: vec![
                    (2.5, "i: building index: scanning table, blocks 1/9".into()),
                    (3.5, "i: building index: scanning table, blocks 5/9".into()),
                    (4.5, "i: building index: sorting live tuples".into()),
                    (5.9, "none running".into()),
                ],
                ..Default::default()
            },
            ..Default::default()
        };
        let s = ddl_spans(&p, 9.0);
        let labelled: Vec<(&str, f64, f64)> = s
            .iter()
            .filter(|s| !s.label.is_empty())
            .map(|s| (s.label.as_str(), s.start, s.end))
            .collect();
        assert_eq!(
            labelled,
            vec![
                ("DDL start", 2.3, 2.3),
                ("baseline", 0.0, 2.3),
                ("i: building index: scanning table", 2.3, 4.5),
                ("i: building index: sorting live tuples", 4.5, 5.6),
                ("DDL end", 5.6, 5.6),
                ("after", 5.6, 9.0),
            ]
        );
        // the chart shades every other span from the first: the DDL's phases, not the
        // baseline or the recovery
        for (i, sp) in s.iter().enumerate() {
            if sp.end > sp.start {
                let shaded = i % 2 == 0;
                assert_eq!(shaded, sp.label.contains("building"), "{i}: {}", sp.label);
            }
        }
        assert_eq!(phase_list(&p), "2.5 s: i: building index: scanning table; 4.5 s: i: building index: sorting live tuples");
        // no phase seen: the DDL as one span; a failure says so
        let mut q = p.clone();
        q.ddl.progress.clear();
        q.ddl.error = Some("boom".into());
        let labels: Vec<String> = ddl_spans(&q, 9.0)
            .into_iter()
            .map(|s| s.label)
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(
            labels,
            ["DDL start", "baseline", "DDL", "DDL failed", "after"]
        );
    }
}
