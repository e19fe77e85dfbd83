//! The HTML report: one self-contained file (no scripts, no network, charts as inline SVG
//! drawn by [`super::chart`]). Per run: what ran where; the per-second rates and the slowest
//! operation of each interval over the whole run with the steps marked; latency percentile
//! curves per step and operation (from the stored HDR histograms) with the insert
//! benchmark's buckets; the self-checks and warnings; client and server CPU and I/O per
//! operation; for the index lab the build times with the spread of repeats and the build
//! progress, for `ixbench ddl` the load over time with the DDL's phases marked
//! ([`super::timelines`]); then the run's tables. [`comparison`] draws `compare`'s ratios to the base with their noise bands.
//!
//! Every chart is a `<figure class="chart" id="...">`; ids are stable (`timeline-rates`,
//! `pct-<step>`, `builds`, ...) so tests and people can find them.

use super::chart::{self, Bar, Bars, PercentileChart, Series, Span, Timeline};
use super::html_table::table;
use super::Table;
use crate::format as fmt;
use crate::measure::histogram::{deserialize_base64, IIBENCH_BUCKET_LABELS};
use crate::measure::interval::IntervalLine;
use crate::measure::txn::TxnLine;
use crate::results::{build_groups, median, RunResult, Status, StepResult};

use crate::format::html as esc;

/// An id fragment from a name (`l.i0` -> `l-i0`).
pub fn slug(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while out.contains("--") {
        out = out.replace("--", "-");
    }
    out.trim_matches('-').to_string()
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em auto;max-width:1360px;\
padding:0 1em;color:#222}h1{margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid \
#ccc}h3{margin:1em 0 .3em}.tw{overflow-x:auto}table{border-collapse:collapse;margin:.6em 0;\
font-size:13px}th,td{border:1px solid #ccc;padding:2px 7px}th{background:#eee;position:sticky;\
top:0}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
td.bad,p.bad,li.bad{background:#fdd}td.good{background:#dfd}.grid{display:flex;flex-wrap:wrap;\
gap:8px}figure{margin:.4em 0;border:1px solid #ddd;padding:4px;background:#fff}\
th.row{text-align:left;position:static}section.answer li{font-size:15px;margin:.25em 0}\
section.answer ul{padding-left:1.2em}figcaption{font-weight:bold;font-size:14px;margin:2px 4px}.legend{font-weight:normal;\
margin-left:1.5em}.legend span{font-size:18px;margin-left:.6em}figure svg{display:block;\
max-width:100%;height:auto}.note{color:#555;font-size:13px}code{font-size:12px}";

/// A whole page around `body`.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\"><title>{}</title>\n\
         <style>{STYLE}</style></head><body>\n{body}</body></html>\n",
        esc(title)
    )
}

/// The report of one run: [`run_section`] on its own page.
pub fn report(
    run: &RunResult,
    intervals: &[IntervalLine],
    txn: &[TxnLine],
    tables: &[(&str, Table)],
) -> String {
    page(
        "ixbench report",
        &run_section("", None, run, intervals, txn, tables),
    )
}

fn status_text(s: Status) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// One section of a run's report: HTML from the result model and the intervals, `""` when the
/// run has nothing for it. `prefix` goes before each element id.
pub type Section = fn(prefix: &str, run: &RunResult, intervals: &[IntervalLine]) -> String;

/// The sections of a run's report (charts, each with its own small tables), in the order a
/// run of the insert benchmark or a workload shows them. A new kind of result (e.g. an
/// online-DDL test: [`chart::timeline`] with the DDL's start, phases and end as [`Span`]s)
/// adds its function here.
pub const SECTIONS: [Section; 7] = [
    over_time,
    super::timelines::ddl,
    latency,
    resources,
    builds,
    super::timelines::build_progress,
    checks,
];

/// The index lab's order: its own chart (the builds) first, then the build progress; the
/// load steps' charts after them.
const INDEX_SECTIONS: [Section; 7] = [
    builds,
    super::timelines::build_progress,
    resources,
    over_time,
    latency,
    super::timelines::ddl,
    checks,
];

/// The answer of a run ([`super::summary::answer`]) as the report's opening list; alarms in
/// red.
fn answer(prefix: &str, run: &RunResult) -> String {
    let mut out =
        format!("<section class=\"answer\" id=\"{prefix}answer\"><h2>What it found</h2>\n<ul>\n");
    for l in super::summary::answer(run) {
        out.push_str(&format!(
            "<li{}>{}</li>\n",
            if l.alarm { " class=\"bad\"" } else { "" },
            esc(&l.text)
        ));
    }
    out.push_str("</ul></section>\n");
    out
}

/// The command a run's result was made by (`run`, `ddl`, `index`...), from its command line.
fn command_of(run: &RunResult) -> &str {
    run.command_line
        .get(1)
        .map(String::as_str)
        .filter(|c| !c.starts_with('-'))
        .unwrap_or("run")
}

/// Everything about one run, the answer first: a heading (command, target, status), what the
/// command found ([`super::summary`]), a transaction workload's own charts ([`transactions`]:
/// `oltp`, `timeseries`), the charts of each of [`SECTIONS`] (the index lab's builds first),
/// then `tables` (the summary tables the command wrote), then the details
/// (host, times, command line, build, notes). `prefix` goes before every element id (unique
/// per run when a page shows several); `label` names the run (its directory) when given.
pub fn run_section(
    prefix: &str,
    label: Option<&str>,
    run: &RunResult,
    intervals: &[IntervalLine],
    txn: &[TxnLine],
    tables: &[(&str, Table)],
) -> String {
    let t = &run.target;
    let mut out = String::new();
    let status = status_text(run.status);
    let command = command_of(run);
    out.push_str(&format!(
        "<h1>ixbench {}{}</h1>\n<p>{} {}{} &middot; {} &middot; status <b{}>{}</b> &middot; \
         {}</p>\n",
        esc(command),
        label
            .map(|l| format!(" &middot; {}", esc(l)))
            .unwrap_or_default(),
        esc(&t.kind),
        esc(&t.version),
        t.engine
            .as_deref()
            .map(|e| format!(" ({})", esc(e)))
            .unwrap_or_default(),
        esc(&t.location),
        if run.status == Status::Ok {
            ""
        } else {
            " class=\"bad\""
        },
        esc(&status),
        esc(&fmt::iso_s(&run.started_at)),
    ));
    if let Some(w) = run.build.as_ref().and_then(|b| b.warning()) {
        out.push_str(&format!("<p class=\"bad\">{}</p>\n", esc(&w)));
    }
    if let Some(e) = &run.error {
        out.push_str(&format!("<p class=\"bad\"><b>error:</b> {}</p>\n", esc(e)));
    }
    out.push_str(&answer(prefix, run));
    // ddl's load is a transaction workload too: its own chart is the DDL's timeline
    if run.ddl.is_none() {
        out.push_str(&transactions(prefix, txn));
    }
    let sections = if command == "index" {
        INDEX_SECTIONS
    } else {
        SECTIONS
    };
    for section in sections {
        out.push_str(&section(prefix, run, intervals));
    }
    // The tables the command wrote (also as CSV and Markdown beside run.json).
    for (title, tab) in tables {
        out.push_str(&format!(
            "<section id=\"{prefix}table-{}\"><h2>{}</h2>\n{}</section>\n",
            slug(title),
            esc(title),
            table(tab)
        ));
    }
    out.push_str(&format!(
        "<h2 id=\"{prefix}details\">Details</h2>\n<p>ixbench {} &middot; host {} &middot; {} CPUs \
         &middot; {} &middot; {} &middot; started {}{}</p>\n",
        esc(&run.ixbench_version),
        esc(&run.host.hostname),
        run.host.cpus,
        esc(&fmt::bytes(run.host.memory_bytes as f64)),
        esc(&run.host.kernel),
        esc(&fmt::iso_ms(&run.started_at)),
        run.finished_at
            .as_deref()
            .map(|f| format!(" &middot; finished {}", esc(&fmt::iso_ms(f))))
            .unwrap_or_default()
    ));
    out.push_str(&format!(
        "<p class=\"note\"><code>{}</code></p>\n",
        esc(&run.command_line.join(" "))
    ));
    if let Some(b) = &run.build {
        out.push_str(&format!(
            "<p class=\"note\" id=\"{prefix}build\">measured by {}</p>\n",
            esc(&b.describe())
        ));
    }
    // The target's notes, then the notes of the workload that ran (only its own).
    for n in t.notes.iter().chain(&run.notes) {
        out.push_str(&format!("<p><i>{}</i></p>\n", esc(n)));
    }
    out
}

/// One step on the run's time axis with its intervals.
struct Seg<'a> {
    /// Step name.
    name: String,
    /// Name as shown: `l.i0`, and `l.i0 #2` for a second step of that name.
    label: String,
    /// Unique id fragment (`l-i0`, `l-i0-2`).
    id: String,
    start: f64,
    end: f64,
    lines: Vec<&'a IntervalLine>,
}

/// The steps on the run's time axis, back to back (their wall seconds), each with its own
/// intervals (a step name may repeat, as the index lab's loads do: the k-th step of a name
/// gets the k-th run of intervals of that name); then any intervals without a step result
/// (a step cut off) after them.
fn segments<'a>(run: &RunResult, intervals: &'a [IntervalLine]) -> Vec<Seg<'a>> {
    // runs of intervals: a new run where the step changes or the numbering starts again
    let mut groups: Vec<(String, Vec<&IntervalLine>, bool)> = Vec::new();
    for l in intervals {
        match groups.last_mut() {
            Some((name, v, _)) if *name == l.step && v.last().is_some_and(|p| p.n < l.n) => {
                v.push(l)
            }
            _ => groups.push((l.step.clone(), vec![l], false)),
        }
    }
    let mut segs: Vec<Seg> = Vec::new();
    let mut at = 0.0;
    let mut push =
        |segs: &mut Vec<Seg<'a>>, name: &str, secs: f64, lines: Vec<&'a IntervalLine>| {
            let last = lines.iter().map(|l| l.t_sec).fold(0.0f64, f64::max);
            // a step's intervals may run past its recorded seconds by rounding: never overlap
            let len = secs.max(last);
            let k = segs.iter().filter(|s| s.name == name).count();
            let label = if k == 0 {
                name.to_string()
            } else {
                format!("{name} #{}", k + 1)
            };
            let id = slug(&label);
            segs.push(Seg {
                name: name.to_string(),
                label,
                id,
                start: at,
                end: at + len,
                lines,
            });
            at += len;
        };
    for st in &run.steps {
        let lines = match groups.iter_mut().find(|g| !g.2 && g.0 == st.name) {
            Some(g) => {
                g.2 = true;
                std::mem::take(&mut g.1)
            }
            None => Vec::new(),
        };
        push(&mut segs, &st.name, st.seconds, lines);
    }
    for g in groups.into_iter().filter(|g| !g.2) {
        push(&mut segs, &g.0, 0.0, g.1);
    }
    segs
}

fn spans(segs: &[Seg]) -> Vec<Span> {
    segs.iter()
        .map(|s| Span {
            label: s.name.clone(),
            start: s.start,
            end: s.end,
        })
        .collect()
}

/// Whether a series is a rate (a short interval draws no point of it: [`chart::rate_points`])
/// or a value of each interval (a response time: every interval's).
#[derive(Clone, Copy, PartialEq)]
enum Per {
    Rate,
    Value,
}

/// The intervals of one step a series of kind `per` draws (see [`chart::rate_points`]).
fn drawn<L>(lines: &[L], i_sec: impl Fn(&L) -> f64, per: Per) -> impl Iterator<Item = &L> {
    let keep = match per {
        Per::Rate => chart::rate_points(&lines.iter().map(&i_sec).collect::<Vec<_>>()),
        Per::Value => vec![true; lines.len()],
    };
    lines.iter().zip(keep).filter(|(_, k)| *k).map(|(l, _)| l)
}

/// One series over the run's time axis from a per-interval value; `None` leaves a point out.
fn over_run(
    segs: &[Seg],
    name: &str,
    per: Per,
    f: impl Fn(&IntervalLine) -> Option<f64>,
) -> Series {
    let mut points = Vec::new();
    for s in segs {
        // a step that never did this (no queries in a load) draws no line
        if s.lines.iter().all(|l| f(l).map_or(true, |v| v == 0.0)) {
            continue;
        }
        for l in drawn(&s.lines, |l| l.i_sec, per) {
            if let Some(v) = f(l) {
                points.push((s.start + l.t_sec, v));
            }
        }
        // Steps are separate lines: a gap between them is not drawn as a slope.
        points.push((s.end, f64::NAN));
    }
    Series {
        dashed: false,
        name: name.into(),
        points,
    }
}

/// How many times the largest series' peak exceeds the smallest's (1 when fewer than two
/// series have a positive point).
fn spread(series: &[Series]) -> f64 {
    let peaks: Vec<f64> = series
        .iter()
        .map(|s| s.points.iter().map(|p| p.1).fold(0.0f64, f64::max))
        .filter(|&p| p > 0.0)
        .collect();
    let hi = peaks.iter().copied().fold(0.0f64, f64::max);
    let lo = peaks.iter().copied().fold(f64::INFINITY, f64::min);
    if peaks.len() < 2 {
        1.0
    } else {
        hi / lo
    }
}

fn over_time(prefix: &str, run: &RunResult, intervals: &[IntervalLine]) -> String {
    let segs = segments(run, intervals);
    let spans = spans(&segs);
    let mut out = String::new();
    let x_label = "seconds since the run began (steps back to back)";
    let positive = |v: f64| if v > 0.0 { Some(v) } else { None };
    let has = |f: &dyn Fn(&IntervalLine) -> f64| intervals.iter().any(|l| f(l) > 0.0);
    let mut rates = Vec::new();
    if has(&|l| l.i_ips) {
        rates.push(over_run(&segs, "inserted rows/s", Per::Rate, |l| {
            Some(l.i_ips)
        }));
    }
    if has(&|l| l.i_dps) {
        // dashed: a steady churn deletes as many rows as it inserts, one line on the other
        let mut deleted = over_run(&segs, "deleted rows/s", Per::Rate, |l| Some(l.i_dps));
        deleted.dashed = true;
        rates.push(deleted);
    }
    out.push_str(&chart::timeline(&Timeline {
        id: format!("{prefix}timeline-rates"),
        // log scale: a bulk load at 1M rows/s and a throttled writer at 100 rows/s in one run
        // differ by orders of magnitude; on a linear axis every step but the load is at zero
        title: "Rows inserted and deleted per second (per interval, log scale)".into(),
        x_label: x_label.into(),
        y_label: "rows/s".into(),
        log_y: true,
        series: rates,
        spans: spans.clone(),
        size: (1300, 340),
    }));
    if has(&|l| l.i_qps) {
        out.push_str(&chart::timeline(&Timeline {
            id: format!("{prefix}timeline-queries"),
            title: "Queries per second (per interval, log scale)".into(),
            x_label: x_label.into(),
            y_label: "queries/s".into(),
            log_y: true,
            series: vec![over_run(&segs, "queries/s", Per::Rate, |l| Some(l.i_qps))],
            spans: spans.clone(),
            size: (1300, 300),
        }));
    }
    let mut lat = Vec::new();
    for (name, f) in [
        (
            "insert",
            (|l: &IntervalLine| l.max_i) as fn(&IntervalLine) -> u64,
        ),
        ("delete", |l| l.max_d),
        ("query", |l| l.max_q),
    ] {
        if intervals.iter().any(|l| f(l) > 0) {
            lat.push(over_run(&segs, name, Per::Value, |l| {
                positive(f(l) as f64 / 1000.0)
            }));
        }
    }
    out.push_str(&chart::timeline(&Timeline {
        id: format!("{prefix}timeline-maxlat"),
        title: "Slowest operation of each interval (response time, log scale)".into(),
        x_label: x_label.into(),
        y_label: "response time (ms)".into(),
        log_y: true,
        series: lat,
        spans,
        size: (1300, 340),
    }));
    // Each step on its own scale: a fast load does not flatten the steps after it.
    let mut per_step = String::new();
    for sg in segs.iter().filter(|s| !s.lines.is_empty()) {
        let mut series = Vec::new();
        for (name, f) in [
            (
                "inserted rows/s",
                (|l: &IntervalLine| l.i_ips) as fn(&IntervalLine) -> f64,
            ),
            ("deleted rows/s", |l| l.i_dps),
            ("queries/s", |l| l.i_qps),
        ] {
            if sg.lines.iter().any(|l| f(l) > 0.0) {
                series.push(Series {
                    dashed: name == "deleted rows/s",
                    name: name.into(),
                    points: drawn(&sg.lines, |l| l.i_sec, Per::Rate)
                        .map(|l| (l.t_sec, f(l)))
                        .collect(),
                });
            }
        }
        // A step's own rates may differ by orders of magnitude too (a throttled writer beside
        // unthrottled queries): log scale then, so the writer is not a line at zero.
        let log_y = spread(&series) > 10.0;
        per_step.push_str(&chart::timeline(&Timeline {
            id: format!("{prefix}step-{}", sg.id),
            title: format!(
                "{}: rates per interval{}",
                sg.label,
                if log_y { " (log scale)" } else { "" }
            ),
            x_label: "seconds since the step began".into(),
            y_label: "rows or queries/s".into(),
            log_y,
            series,
            spans: Vec::new(),
            size: (640, 260),
        }));
    }
    if !per_step.is_empty() {
        out.push_str(&format!("<div class=\"grid\">{per_step}</div>\n"));
    }
    let stalled: Vec<String> = intervals
        .iter()
        .filter_map(|l| {
            l.stalled_secs.map(|s| {
                format!(
                    "{} at {} s: nothing completed for {} s",
                    l.step,
                    fmt::secs(l.t_sec),
                    fmt::secs(s)
                )
            })
        })
        .collect();
    if out.is_empty() && stalled.is_empty() {
        return String::new();
    }
    let mut head = String::from("<h2>Over time</h2>\n");
    if !stalled.is_empty() {
        head.push_str(&format!(
            "<p class=\"bad\">{} interval(s) STALLED: {}</p>\n",
            stalled.len(),
            esc(&stalled
                .iter()
                .take(8)
                .cloned()
                .collect::<Vec<_>>()
                .join("; "))
        ));
    }
    head + &out
}

/// The series of a transaction workload's charts: the runs of its steps back to back (a new
/// run where the step changes or its numbering starts again) as spans, the rates per second
/// (transactions, and statements when a transaction has more than one; no point for a short
/// interval, [`chart::rate_points`]) and the response times of each interval (p50, p95, p99,
/// the slowest).
fn txn_series(lines: &[TxnLine]) -> (Vec<Span>, Vec<Series>, Vec<Series>) {
    let mut spans: Vec<Span> = Vec::new();
    let mut xs = Vec::with_capacity(lines.len());
    // the lines of each run, for its rate points
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    let mut prev: Option<&TxnLine> = None;
    for (i, l) in lines.iter().enumerate() {
        if !prev.is_some_and(|p| p.step == l.step && p.n < l.n) {
            let start = spans.last().map_or(0.0, |s| s.end);
            spans.push(Span {
                label: l.step.clone(),
                start,
                end: start,
            });
            runs.push(i..i);
        }
        let s = spans.last_mut().expect("a span");
        xs.push(s.start + l.t_sec);
        s.end = s.end.max(s.start + l.t_sec);
        runs.last_mut().expect("a run").end = i + 1;
        prev = Some(l);
    }
    let rate_point: Vec<bool> = runs
        .iter()
        .flat_map(|r| {
            chart::rate_points(&lines[r.clone()].iter().map(|l| l.i_sec).collect::<Vec<_>>())
        })
        .collect();
    let series = |name: &str, dashed: bool, per: Per, f: &dyn Fn(&TxnLine) -> Option<f64>| Series {
        name: name.into(),
        dashed,
        points: xs
            .iter()
            .zip(lines)
            .zip(&rate_point)
            .filter(|(_, keep)| per == Per::Value || **keep)
            .map(|((x, l), _)| (*x, f(l).unwrap_or(f64::NAN)))
            .collect(),
    };
    let mut rates = vec![series("transactions/s", false, Per::Rate, &|l| Some(l.tps))];
    if lines.iter().any(|l| l.qps > l.tps) {
        rates.push(series("statements/s", true, Per::Rate, &|l| Some(l.qps)));
    }
    let ms = |v: Option<u64>| v.filter(|&us| us > 0).map(|us| us as f64 / 1000.0);
    let lat = vec![
        series("p50", false, Per::Value, &|l| ms(l.p50_us)),
        series("p95", false, Per::Value, &|l| ms(l.p95_us)),
        series("p99", false, Per::Value, &|l| ms(l.p99_us)),
        series("slowest", true, Per::Value, &|l| ms(l.max_us)),
    ];
    (spans, rates, lat)
}

/// A transaction workload's charts (`oltp`, `timeseries`): transactions and statements per
/// second, and the transactions' response time (p50, p95, p99, the slowest) per interval,
/// each run of a step (a partitioning, a mix) back to back and shaded; `""` without lines.
fn transactions(prefix: &str, lines: &[TxnLine]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let (spans, rates, lat) = txn_series(lines);
    let x_label = "seconds since the run began";
    let mut out = String::from("<h2>Transactions over time</h2>\n");
    out.push_str(&chart::timeline(&Timeline {
        id: format!("{prefix}timeline-tps"),
        title: "Transactions and statements per second (per interval, log scale)".into(),
        x_label: x_label.into(),
        y_label: "per s".into(),
        log_y: true,
        series: rates,
        spans: spans.clone(),
        size: (1300, 340),
    }));
    out.push_str(&chart::timeline(&Timeline {
        id: format!("{prefix}timeline-txn-latency"),
        title: "Transaction response time per interval (from the intended start, log scale)".into(),
        x_label: x_label.into(),
        y_label: "response time (ms)".into(),
        log_y: true,
        series: lat,
        spans,
        size: (1300, 340),
    }));
    out
}

/// Points (percentile as a fraction, ms) of a stored histogram: HdrHistogram's quantile
/// iteration, and the largest value at the rank of the last operation.
fn percentile_points(hdr: &str) -> Option<Vec<(f64, f64)>> {
    let h = deserialize_base64(hdr).ok()?;
    let n = h.len();
    if n == 0 {
        return None;
    }
    let mut pts: Vec<(f64, f64)> = Vec::new();
    for v in h.iter_quantiles(4) {
        let q = v.quantile_iterated_to();
        if q >= 1.0 {
            break;
        }
        pts.push((q, v.value_iterated_to() as f64 / 1000.0));
    }
    let last = if n > 1 { 1.0 - 1.0 / n as f64 } else { 0.5 };
    pts.retain(|p| p.0 < last);
    pts.push((last, h.max() as f64 / 1000.0));
    Some(pts)
}

fn latency(prefix: &str, run: &RunResult, _: &[IntervalLine]) -> String {
    let mut charts = String::new();
    let mut t = Table::new(
        [
            "step",
            "op",
            "unit",
            "count",
            "mean (ms)",
            "p50 (ms)",
            "p90 (ms)",
            "p99 (ms)",
            "p99.9 (ms)",
            "max (ms)",
        ]
        .into_iter()
        .map(String::from)
        .chain(IIBENCH_BUCKET_LABELS.iter().map(|b| format!("<={b}")))
        .collect::<Vec<_>>(),
    );
    if let Some(h) = t.headers.last_mut() {
        *h = ">16s".into();
    }
    let ms = fmt::ms;
    for (st, label) in run.steps.iter().zip(step_labels(run)) {
        let id = slug(&label);
        let mut series = Vec::new();
        for l in st.latency.iter().filter(|l| l.latency.count > 0) {
            if let Some(points) = percentile_points(&l.latency.hdr_base64) {
                series.push(Series {
                    // deletes dashed: as many as the inserts, often as fast
                    dashed: l.op == "delete",
                    name: l.op.clone(),
                    points,
                });
            }
            let s = &l.latency;
            let mut row = vec![
                label.clone(),
                l.op.clone(),
                l.unit.clone(),
                s.count.to_string(),
                fmt::num(s.mean_us / 1000.0),
                ms(s.p50_us),
                ms(s.p90_us),
                ms(s.p99_us),
                ms(s.p999_us),
                ms(s.max_us),
            ];
            row.extend(s.buckets.iter().map(|b| b.to_string()));
            t.push(row);
        }
        charts.push_str(&chart::percentiles(&PercentileChart {
            id: format!("{prefix}pct-{id}"),
            title: format!("{label}: response time by percentile"),
            series,
            size: (640, 300),
        }));
    }
    if t.rows.is_empty() {
        return String::new();
    }
    format!(
        "<h2>Latency</h2>\n<p class=\"note\">Response time from each operation's intended start \
         (coordinated omission corrected), from the stored HdrHistogram of each step; the last \
         point of a curve is the slowest operation. The table's bucket columns count operations \
         as the insert benchmark does (up to 256us, 1ms, ... , over 16s).</p>\n\
         <div class=\"grid\">{charts}</div>\n{}",
        table(&t)
    )
}

/// Every check of the run, whatever command made it ([`super::checks_table`]), and every
/// warning ([`RunResult::all_warnings`]): a summary line, the failed checks in sight, all of
/// them folded away.
fn checks(prefix: &str, run: &RunResult, _: &[IntervalLine]) -> String {
    let t = super::checks_table(run);
    let failed = t.rows.iter().filter(|r| r[2] != "ok").count();
    let mut out = String::from("<h2>Self-checks and warnings</h2>\n");
    out.push_str(&format!(
        "<p id=\"{prefix}checks-summary\" class=\"{}\">{}</p>\n",
        if failed > 0 { "bad" } else { "note" },
        if failed > 0 {
            format!("{failed} of {} check(s) FAILED", t.rows.len())
        } else if t.rows.is_empty() {
            "no self-check ran".to_string()
        } else {
            format!("all {} check(s) passed", t.rows.len())
        }
    ));
    // Failed checks in sight; every check folded away.
    let mut bad = Table::new(t.headers.clone());
    bad.rows = t.rows.iter().filter(|r| r[2] != "ok").cloned().collect();
    if !bad.rows.is_empty() {
        out.push_str(&table(&bad));
    }
    if !t.rows.is_empty() {
        // A short list open, a long one (a run's 80 checks) folded.
        out.push_str(&format!(
            "<details id=\"{prefix}checks\"{}><summary>every check ({})</summary>\n{}</details>\n",
            if t.rows.len() <= 12 { " open" } else { "" },
            t.rows.len(),
            table(&t)
        ));
    }
    let warnings = run.all_warnings();
    if warnings.is_empty() {
        out.push_str("<p class=\"note\">no warnings</p>\n");
    } else {
        out.push_str(&format!("<ul id=\"{prefix}warnings\">\n"));
        for w in &warnings {
            out.push_str(&format!(
                "<li><b>{}</b>: {}</li>\n",
                esc(&w.at),
                esc(&w.text)
            ));
        }
        out.push_str("</ul>\n");
    }
    out
}

/// The steps' names as the report shows them: a name that repeats (the index lab's loads)
/// gets `#2`, `#3`... from its second time on.
fn step_labels(run: &RunResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, st) in run.steps.iter().enumerate() {
        let k = run.steps[..i].iter().filter(|s| s.name == st.name).count();
        out.push(if k == 0 {
            st.name.clone()
        } else {
            format!("{} #{}", st.name, k + 1)
        });
    }
    out
}

/// The operation a step's per-op figures are per.
fn per_op(st: &StepResult) -> &'static str {
    if !st.index_builds.is_empty() {
        "indexed row"
    } else if st.summary.qps > 0.0 && st.summary.ips == 0.0 {
        "query"
    } else if st.summary.qps > 0.0 {
        "query (inserts run beside)"
    } else {
        "inserted row"
    }
}

/// [`per_op`] in a word or two, for a chart's category label.
fn per_op_short(st: &StepResult) -> &'static str {
    match per_op(st) {
        "query (inserts run beside)" => "query",
        p => p,
    }
}

fn resources(prefix: &str, run: &RunResult, _: &[IntervalLine]) -> String {
    let opt = |v: Option<f64>, _: usize| fmt::opt(v);
    let mut t = Table::new([
        "step",
        "per",
        "client CPU (us/op)",
        "server CPU (us/op)",
        "server read (KB/op)",
        "server written, DBMS count (KB/op)",
        "server write calls (KB/op)",
        "device written (KB/op)",
        "client CPU (% of a core)",
        "server RSS (MB)",
    ]);
    let mut cpu: Vec<Bar> = Vec::new();
    let mut io: Vec<Bar> = Vec::new();
    for (st, label) in run.steps.iter().zip(step_labels(run)) {
        let m = &st.summary;
        if m.cpupq == 0.0 && m.srv_cpupq.is_none() {
            continue;
        }
        t.push(vec![
            label.clone(),
            per_op(st).into(),
            fmt::num(m.cpupq),
            opt(m.srv_cpupq, 2),
            opt(m.srv_read_kb_per_op, 3),
            opt(m.srv_write_kb_per_op, 3),
            opt(m.srv_write_call_kb_per_op, 3),
            opt(m.dev_write_kb_per_op, 3),
            format!("{:.0}", m.client_cpu_pct),
            opt(m.srv_rss_mb, 0),
        ]);
        // short category labels (the table below says what each step's operation is)
        let name = format!("{label} per {}", per_op_short(st));
        if m.cpupq > 0.0 {
            cpu.push(Bar {
                label: format!("{name}, client"),
                value: m.cpupq,
                range: None,
                color: 0,
            });
        }
        if let Some(v) = m.srv_cpupq {
            cpu.push(Bar {
                label: format!("{name}, server"),
                value: v,
                range: None,
                color: 1,
            });
        }
        for (what, v, c) in [
            ("read", m.srv_read_kb_per_op, 2),
            ("written", m.srv_write_kb_per_op, 1),
        ] {
            if let Some(v) = v {
                io.push(Bar {
                    label: format!("{name}, server {what}"),
                    value: v,
                    range: None,
                    color: c,
                });
            }
        }
    }
    if t.rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<h2>CPU and I/O per operation</h2>\n<p class=\"note\">Client = the ixbench process, \
         server = the DBMS's processes (for an embedded DBMS such as SQLite the server figures \
         are unknown: its work is in the client's), over each step's measured window. \
         <code>-</code> = unknown.</p>\n",
    );
    // full width: a category label (`qr1000 per query, client`) and ten ticks both fit
    out.push_str(&chart::bars(&Bars {
        log: false,
        id: format!("{prefix}cpu-per-op"),
        title: "CPU per operation (us)".into(),
        x_label: "microseconds of CPU per operation".into(),
        bars: cpu,
        origin: 0.0,
        band: None,
        width: 1300,
    }));
    out.push_str(&chart::bars(&Bars {
        log: false,
        id: format!("{prefix}io-per-op"),
        title: "Server I/O per operation (KB)".into(),
        x_label: "KB per operation".into(),
        bars: io,
        origin: 0.0,
        band: None,
        width: 1300,
    }));
    out.push_str(&table(&t));
    out
}

fn builds(prefix: &str, run: &RunResult, _: &[IntervalLine]) -> String {
    if run.builds.is_empty() && run.strategies.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>Index builds</h2>\n");
    let mut bars = Vec::new();
    for ((knobs, build, mode), group) in build_groups(&run.builds) {
        let knob_text: Vec<String> = knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let label = format!("{build} {mode} {}", knob_text.join(" "))
            .trim()
            .to_string();
        let ok: Vec<&&crate::results::BuildResult> = group.iter().filter(|b| b.ok).collect();
        let secs: Vec<f64> = ok.iter().map(|b| b.seconds).collect();
        let Some(m) = median(secs.clone()) else {
            continue;
        };
        let (mn, mx) = secs
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
        let label = if ok.len() < group.len() {
            format!("{label} ({} of {} ok)", ok.len(), group.len())
        } else {
            label
        };
        bars.push(Bar {
            label: format!("{label} [{}x]", secs.len()),
            value: m,
            range: (secs.len() > 1).then_some((mn, mx)),
            color: 0,
        });
    }
    out.push_str(&chart::bars(&Bars {
        log: false,
        id: format!("{prefix}builds"),
        title: "Build time per knob setting: median of repeats, bar = min..max".into(),
        x_label: "build time (s)".into(),
        bars,
        origin: 0.0,
        band: None,
        width: 1300,
    }));
    let strategies: Vec<Bar> = run
        .strategies
        .iter()
        .map(|s| Bar {
            label: format!(
                "{} (load {} s + index {} s)",
                s.strategy,
                fmt::secs(s.load_secs),
                fmt::secs(s.index_secs)
            ),
            value: s.total_secs,
            range: None,
            color: 4,
        })
        .collect();
    out.push_str(&chart::bars(&Bars {
        log: false,
        id: format!("{prefix}strategies"),
        title: "Load strategies: seconds to a loaded, indexed table".into(),
        x_label: "load and index time (s)".into(),
        bars: strategies,
        origin: 0.0,
        band: None,
        width: 1300,
    }));
    out
}

/// `compare`'s table as bars: each figure's ratio new/base (median of each side), coloured
/// by verdict (orange worse, green better), with the noise band that a change must leave to
/// be flagged. `side` is the name of the new side (`new`, `new2`...).
pub fn comparison(id: &str, title: &str, t: &Table, side: &str) -> String {
    use crate::results::verdict::State;
    // `compare` names a column `<side> <name>`, or just `<name>` when there is one new side
    // (except `<side> spread`).
    let col = |name: &str| {
        t.headers
            .iter()
            .position(|h| *h == format!("{side} {name}"))
            .or_else(|| t.headers.iter().position(|h| h == name))
    };
    let (Some(ratio), Some(verdict), Some(rule), Some(spread)) =
        (col("ratio"), col("verdict"), col("rule"), col("spread"))
    else {
        return String::new();
    };
    let base_spread = t.headers.iter().position(|h| h == "base spread");
    // "3 runs, 2.1%" -> 0.021
    let pct = |c: &str| -> Option<f64> {
        c.rsplit(", ")
            .next()?
            .strip_suffix('%')?
            .parse::<f64>()
            .ok()
            .map(|v| v / 100.0)
    };
    let mut bars = Vec::new();
    for r in &t.rows {
        let Some(v) = r.get(ratio).and_then(|c| c.parse::<f64>().ok()) else {
            continue;
        };
        // The half-width of the noise band: the rule's floor or single-run limit, widened by
        // either side's spread.
        let rule_text = r.get(rule).map(String::as_str).unwrap_or("");
        let limit = rule_text
            .rsplit([' ', '>'])
            .next()
            .and_then(|c| c.strip_suffix('%'))
            .and_then(|c| c.parse::<f64>().ok())
            .map(|v| v / 100.0);
        let l = [
            limit,
            r.get(spread).and_then(|c| pct(c)),
            base_spread.and_then(|i| r.get(i)).and_then(|c| pct(c)),
        ]
        .into_iter()
        .flatten()
        .fold(0.0f64, f64::max);
        // The state's word as the table says it (results::verdict), on every bar but NO
        // CHANGE.
        let verdict = r.get(verdict).map(String::as_str).unwrap_or("");
        let state = State::from_text(verdict);
        bars.push(Bar {
            label: format!(
                "{} {}{}",
                r[0],
                r[1],
                if verdict.is_empty() || state == Some(State::NoChange) {
                    String::new()
                } else {
                    format!(" {verdict}")
                }
            ),
            value: v,
            range: (l > 0.0).then(|| (1.0 / (1.0 + l), 1.0 + l)),
            color: match state {
                Some(State::Regression | State::Failed) => 1,
                Some(State::Improved) => 2,
                _ => 0,
            },
        });
    }
    chart::bars(&Bars {
        // log scale: half and double are as far from 1, and a wide whisker does not squash the rest
        log: true,
        id: id.into(),
        title: title.into(),
        // short enough to leave the bars' labels room (the plot must hold it whole)
        x_label: "new / base, log scale (1 = same); whiskers: the noise band".into(),
        bars,
        origin: 1.0,
        band: None,
        width: 1300,
    })
}

/// Whether a note of a comparison is part of its answer: a verdict line (the verdict model's
/// words, [`crate::export::compare::verdict_line`]), the count of figures beyond the noise,
/// or a warning.
fn answer_note(n: &str) -> bool {
    n.starts_with("verdict")
        || n.contains("figure(s) worse beyond the noise")
        || n.starts_with("warning")
}

/// A comparison, the answer first: the verdicts and the count of changes beyond the noise
/// (and any warning), then one chart of ratios per new side (`sides`: their names, see
/// [`comparison`]), the table, and the rest of the notes (the runs, the rule, settings that
/// differ) as details.
pub fn comparison_section(notes: &[String], t: &Table, sides: &[String]) -> String {
    use crate::results::verdict::State;
    let mut out = String::from("<h1>ixbench comparison</h1>\n");
    let paint = |n: &str| {
        // Warnings, failures and verdicts other than a pass are painted as alarms; the rule's
        // own text (which names the states) is not one.
        let rule_text = n.starts_with("rule:") || n.starts_with(' ');
        let alarm = [State::Failed, State::Regression, State::NoVerdict]
            .iter()
            .any(|s| n.contains(&format!(": {}", s.text())));
        if n.starts_with("warning") || (alarm && !rule_text) {
            " class=\"bad\""
        } else {
            ""
        }
    };
    out.push_str("<section class=\"answer\" id=\"answer\"><h2>What it found</h2>\n<ul>\n");
    for n in notes.iter().filter(|n| answer_note(n)) {
        out.push_str(&format!("<li{}>{}</li>\n", paint(n), esc(n)));
    }
    out.push_str("</ul></section>\n");
    for s in sides {
        out.push_str(&comparison(
            &format!("compare-{}", slug(s)),
            &format!("{s} relative to base (median of each side)"),
            t,
            s,
        ));
    }
    out.push_str(&table(t));
    out.push_str("<h2>Details of the comparison</h2>\n");
    for n in notes.iter().filter(|n| !n.is_empty() && !answer_note(n)) {
        out.push_str(&format!("<p{}>{}</p>\n", paint(n), esc(n)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transaction line of `txns` transactions (5 statements each) over `i_sec` seconds.
    fn txn_line(step: &str, n: u64, t_sec: f64, i_sec: f64, txns: u64) -> TxnLine {
        let d = crate::measure::interval::IntervalDetail::default();
        let mut l = TxnLine::compute(step, n, 1, &d, &Default::default(), i_sec, t_sec);
        l.txns = txns;
        l.tps = txns as f64 / i_sec;
        l.qps = 5.0 * l.tps;
        l.p99_us = Some(1000);
        l
    }

    #[test]
    fn a_step_s_short_last_interval_draws_no_rate_point() {
        // two steps of 1 s intervals, each cut a few ms into its last (1 transaction in 6 ms:
        // 167/s against 1000/s)
        let lines = vec![
            txn_line("load", 1, 1.0, 1.0, 1000),
            txn_line("load", 2, 2.0, 1.0, 1000),
            txn_line("load", 3, 2.006, 0.006, 1),
            txn_line("run", 1, 1.0, 1.0, 900),
            txn_line("run", 2, 1.2, 0.2, 180),
        ];
        let (spans, rates, lat) = txn_series(&lines);
        assert_eq!(spans.len(), 2);
        for s in &rates {
            let xs: Vec<f64> = s.points.iter().map(|p| p.0).collect();
            assert_eq!(xs, [1.0, 2.0, 3.006], "{}", s.name);
        }
        assert_eq!(rates[0].points[0].1, 1000.0);
        assert_eq!(rates[0].points[2].1, 900.0);
        // a response time of a short interval is still one: every interval draws it
        assert!(lat.iter().all(|s| s.points.len() == 5));

        // the insert benchmark's steps: the same rule for rows and queries per second
        let il = |step: &str, n: u64, t_sec: f64, i_sec: f64| IntervalLine {
            i_ips: 100.0,
            max_i: 5,
            ..IntervalLine::compute(
                step,
                n,
                &Default::default(),
                &Default::default(),
                i_sec,
                t_sec,
                [0; 3],
            )
        };
        let ivs = [il("l.i0", 1, 1.0, 1.0), il("l.i0", 2, 1.01, 0.01)];
        let segs = vec![Seg {
            name: "l.i0".into(),
            label: "l.i0".into(),
            id: "l-i0".into(),
            start: 0.0,
            end: 1.01,
            lines: ivs.iter().collect(),
        }];
        let rate = over_run(&segs, "inserted rows/s", Per::Rate, |l| Some(l.i_ips));
        let finite = |s: &Series| s.points.iter().filter(|p| p.1.is_finite()).count();
        assert_eq!(finite(&rate), 1);
        let max = over_run(&segs, "insert", Per::Value, |l| Some(l.max_i as f64));
        assert_eq!(finite(&max), 2);
    }

    #[test]
    fn the_rule_text_is_no_alarm() {
        let t = Table::new(["what"]);
        let notes = vec![
            "rule: with repeats a figure is a REGRESSION (or IMPROVED) only when ...".to_string(),
            "      with fewer runs no spread is known".to_string(),
            "warning: a side has a failed step".to_string(),
            "verdict new vs base: NO VERDICT: too few runs".to_string(),
            "verdict same vs base: NO CHANGE: 0 figure(s) worse".to_string(),
        ];
        let h = comparison_section(&notes, &t, &[]);
        assert!(
            h.contains("<p>rule: with repeats a figure is a REGRESSION"),
            "{h}"
        );
        assert!(h.contains("<li class=\"bad\">warning: a side"), "{h}");
        assert!(
            h.contains("<li class=\"bad\">verdict new vs base: NO VERDICT"),
            "{h}"
        );
        assert!(h.contains("<li>verdict same vs base: NO CHANGE"), "{h}");
        // the answer (verdicts, warnings) before the rule's text
        assert!(h.find("verdict new vs base").unwrap() < h.find("rule: with repeats").unwrap());
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("l.i0"), "l-i0");
        assert_eq!(slug("q100.1"), "q100-1");
        assert_eq!(slug("All  x"), "all-x");
    }

    #[test]
    fn comparison_bars_from_compare_table() {
        let mut t = Table::new([
            "what",
            "metric",
            "better",
            "base",
            "base spread",
            "new",
            "new spread",
            "ratio",
            "verdict",
            "rule",
        ]);
        t.push(
            [
                "l.i0",
                "ips",
                "higher",
                "1000",
                "3 runs, 2.0%",
                "700",
                "3 runs, 1.0%",
                "0.700",
                "REGRESSION",
                "spread, floor 5%",
            ]
            .map(String::from)
            .to_vec(),
        );
        t.push(
            [
                "l.i1",
                "ips",
                "higher",
                "1000",
                "1 run",
                "1010",
                "1 run",
                "1.010",
                "NO CHANGE",
                "no spread, >50%",
            ]
            .map(String::from)
            .to_vec(),
        );
        // a failure row has no ratio: no bar
        t.push(
            [
                "qr100",
                "failed",
                "",
                "",
                "",
                "1 of 1 runs",
                "",
                "",
                "FAILED",
                "",
            ]
            .map(String::from)
            .to_vec(),
        );
        let h = comparison("cmp", "vs base", &t, "new");
        assert!(h.contains("l.i0 ips REGRESSION"), "{h}");
        assert!(h.contains("l.i1 ips") && !h.contains("NO CHANGE"), "{h}");
        assert!(!h.contains("qr100"), "{h}");
    }
}
