//! `ixbench merge RUN... -o OUT`: the results of the processes of one several-process run
//! (`ixbench run --client-id K --client-count N`, see [`crate::options::scale`]) added into one run that
//! `report` and `compare` read like any other.
//!
//! What is added and how:
//! - counts (rows, operations, retries, never-started) are summed;
//! - latency histograms are added as HDR histograms (`hdr_base64` of each part, decoded,
//!   `Histogram::add`, summarized again): the merged percentiles are those of one histogram of
//!   every operation of every process, never averages of percentiles;
//! - a step's rates (ips, qps, dps) are over its common window: from the latest start to the
//!   earliest end of the parts (from the wall-clock time each interval line carries), the
//!   counts of every part within it (a line cut by the window's edge counts in proportion to
//!   the share of its interval inside) over its length ([`CommonWindow`] in the merged
//!   step). When the parts never ran at the same time the rates are over the union (earliest
//!   start to latest end), with a warning saying so; a window under [`POOR_OVERLAP`] of the
//!   union is warned about, by how much and naming the late or early part;
//! - a step's time (`seconds`) and its totals are the union's: everything every part did;
//! - interval lines are put on one time grid through the common window's start (the run's
//!   interval): each process's line goes, whole, into the grid interval its middle falls in,
//!   so the merged lines' counts add up to the merged totals exactly and each is placed within
//!   one interval; the per-interval rates p50 and p01 are of the grid's lines inside the
//!   common window;
//! - the client's resource use is summed (CPU per operation is the total CPU over the total
//!   operations); the server's is left unknown (each process measured the same server);
//! - checks and warnings are kept, each prefixed with its client id.
//!
//! Refused with a one-line error: a run that is not a part (no `--client-id`), parts of
//! different runs (different `--client-count` or `--clients`, different seeds: the run seed
//! every part derives its own from, different targets: kind and database, not the host of one
//! cluster's node, different plans, or any other setting, named), the same client id twice
//! (overlapping parts: the same tables and seeds), a missing part, a part still running (its
//! run.json says `running`: its steps so far would look like a different plan), different
//! steps, and results without interval times.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use hdrhistogram::Histogram;

use crate::measure::histogram::{deserialize_base64, new_hist, summarize, LatencySummary};
use crate::measure::interval::{rate_at_rank, IntervalLine};
use crate::measure::meter::Totals;
use crate::measure::sys::ProcSnapshot;
use crate::options::scale::{shared_config, ClientPart};
use crate::results::store::{read_intervals, read_run, Store};
use crate::results::{
    BarrierStamps, Check, CommonWindow, FlowStats, OpLatency, RunResult, Status, StepResult,
    SummaryLine,
};

/// Options of `ixbench merge`.
#[derive(Debug, Clone, Args)]
#[command(after_help = "Example:\n  \
    for k in 0 1 2; do ixbench run --client-id $k --client-count 3 --start-at $T --out part$k & done; wait\n  \
    ixbench merge part0 part1 part2 --out merged")]
pub struct MergeArgs {
    /// Results directories of the parts (each written by `ixbench run --client-id K
    /// --client-count N`), all N of them.
    #[arg(required = true, value_name = "RUN_DIR")]
    pub runs: Vec<PathBuf>,
    /// The new results directory for the merged run (must not exist). `--out` as every other
    /// command names it; `-o` and `--output` still work.
    #[arg(
        short = 'o',
        long = "out",
        visible_alias = "output",
        value_name = "DIR",
        required = true
    )]
    pub output: PathBuf,
}

/// One part, read back.
struct Part {
    dir: PathBuf,
    run: RunResult,
    part: ClientPart,
    intervals: Vec<IntervalLine>,
}

fn run_dir(p: &Path) -> PathBuf {
    if p.file_name().is_some_and(|n| n == "run.json") {
        p.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        p.to_path_buf()
    }
}

fn load(p: &Path) -> Result<Part> {
    let dir = run_dir(p);
    let run = read_run(&dir.join("run.json"))?;
    let part: ClientPart = match run.config.get("client_part") {
        Some(v) => serde_json::from_value(v.clone())
            .with_context(|| format!("{}: client_part does not parse", dir.display()))?,
        None => bail!(
            "{} is not part of a several-process run (it was not run with --client-id/--client-count): nothing to merge it with",
            dir.display()
        ),
    };
    if run.status == Status::Running {
        bail!(
            "{} is still running (its run.json says status running, {} step(s) finished so far): \
             merge it once its ixbench has ended; a part whose ixbench was killed (SIGKILL, a \
             lost host) stays running for good: run that part again",
            dir.display(),
            run.steps
                .iter()
                .filter(|s| s.status != Status::Running)
                .count()
        );
    }
    let intervals = read_intervals(&dir.join("intervals.ndjson"))?;
    Ok(Part {
        dir,
        run,
        part,
        intervals,
    })
}

/// What differs between two parts' shared settings, in words: their run seeds (the seed every
/// part derives its own from), their targets (kind and database), their plans (steps, their
/// parameters, profile), or the first other setting.
fn difference(a: &serde_json::Value, b: &serde_json::Value) -> String {
    let get = |v: &serde_json::Value, k: &str| v.get(k).cloned().unwrap_or_default();
    let differs = |k: &str| get(a, k) != get(b, k);
    if differs("run_seed") {
        return format!(
            "different seeds (--seed {} and {})",
            get(a, "run_seed"),
            get(b, "run_seed")
        );
    }
    if differs("target") || differs("engine") {
        return format!(
            "different targets ({} and {})",
            get(a, "target"),
            get(b, "target")
        );
    }
    if let Some(k) = ["steps", "plan", "profile", "time_secs"]
        .into_iter()
        .find(|k| differs(k))
    {
        return format!("different plans ({k} differs)");
    }
    let keys: std::collections::BTreeSet<&String> = a
        .as_object()
        .into_iter()
        .chain(b.as_object())
        .flat_map(|o| o.keys())
        .collect();
    match keys.into_iter().find(|k| differs(k)) {
        Some(k) => format!(
            "their settings differ ({k}: {} and {})",
            get(a, k),
            get(b, k)
        ),
        None => "their settings differ".into(),
    }
}

/// Read and check the parts: one each of client ids 0..N of the same run.
fn load_parts(paths: &[PathBuf]) -> Result<Vec<Part>> {
    let mut parts = Vec::new();
    for p in paths {
        parts.push(load(p)?);
    }
    let first = &parts[0];
    if first.run.config.get("command").and_then(|v| v.as_str()) != Some("run") {
        bail!(
            "{}: only results of `ixbench run` can be merged",
            first.dir.display()
        );
    }
    let want = shared_config(&first.run.config);
    for p in &parts[1..] {
        if p.part.count != first.part.count {
            bail!(
                "mismatched --client-count: {} is client {} of {}, {} is client {} of {}",
                first.dir.display(),
                first.part.id,
                first.part.count,
                p.dir.display(),
                p.part.id,
                p.part.count
            );
        }
        if p.part.clients != first.part.clients {
            bail!(
                "mismatched --clients: {} ran {}, {} ran {}",
                first.dir.display(),
                first.part.clients,
                p.dir.display(),
                p.part.clients
            );
        }
        let got = shared_config(&p.run.config);
        if got != want {
            bail!(
                "{} and {} are not parts of one run: {}",
                first.dir.display(),
                p.dir.display(),
                difference(&want, &got)
            );
        }
    }
    parts.sort_by_key(|p| p.part.id);
    for w in parts.windows(2) {
        if w[0].part.id == w[1].part.id {
            bail!(
                "overlapping parts: {} and {} are both --client-id {} (the same tables and seeds)",
                w[0].dir.display(),
                w[1].dir.display(),
                w[0].part.id
            );
        }
    }
    let n = parts[0].part.count;
    let missing: Vec<String> = (0..n)
        .filter(|k| !parts.iter().any(|p| p.part.id == *k))
        .map(|k| k.to_string())
        .collect();
    if !missing.is_empty() {
        bail!(
            "missing parts: --client-count {n} but no results of --client-id {}",
            missing.join(", ")
        );
    }
    let names = |p: &Part| {
        p.run
            .steps
            .iter()
            .map(|s| s.name.clone())
            .collect::<Vec<_>>()
    };
    let steps0 = names(&parts[0]);
    for p in &parts[1..] {
        let s = names(p);
        if s != steps0 {
            bail!(
                "the parts ran different steps: {} ran [{}], {} ran [{}]",
                parts[0].dir.display(),
                steps0.join(","),
                p.dir.display(),
                s.join(",")
            );
        }
    }
    Ok(parts)
}

/// A step's wall-clock span (Unix seconds) in one part, from its interval lines.
fn span(lines: &[&IntervalLine], dir: &Path, step: &str) -> Result<Option<(f64, f64)>> {
    let Some(last) = lines.last() else {
        return Ok(None);
    };
    let Some(end) = last.at else {
        bail!(
            "{}: the interval lines of step {step} have no time (results written before ixbench merge existed): cannot merge them by time",
            dir.display()
        );
    };
    Ok(Some((end - last.t_sec, end)))
}

/// What every part did within `[from, to]`: rows inserted, rows deleted, queries, summed over
/// the parts. A line wholly inside counts whole; a line cut by an edge counts in proportion to
/// the share of its interval inside (its operations taken as spread evenly over it): at most
/// one interval's operations per edge and part are so estimated.
pub fn counts_within(parts: &[Vec<&IntervalLine>], from: f64, to: f64) -> [f64; 3] {
    let mut out = [0.0; 3];
    for lines in parts {
        let mut prev = (0u64, 0u64, 0u64);
        for l in lines {
            let Some(end) = l.at else { continue };
            let start = end - l.i_sec;
            let inside = (end.min(to) - start.max(from)).max(0.0);
            let share = if l.i_sec > 0.0 {
                inside / l.i_sec
            } else {
                // an interval of no length: in when its moment is
                f64::from(u8::from(end >= from && end <= to))
            };
            out[0] += share * (l.t_ins - prev.0) as f64;
            out[1] += share * (l.t_del - prev.1) as f64;
            out[2] += share * (l.t_query - prev.2) as f64;
            prev = (l.t_ins, l.t_del, l.t_query);
        }
    }
    out
}

/// Below this share of a step run by all parts together, `merge` warns.
pub const POOR_OVERLAP: f64 = 0.9;

/// Parts whose spans differ by less than this (seconds, starts and ends together) are not
/// warned about, whatever the share: the cost of starting a step's workers.
pub const MIN_APART: f64 = 0.1;

/// The warning for parts whose spans of step `step` overlap poorly (`None` when they ran
/// together for at least [`POOR_OVERLAP`] of it): by how much, and which part started late
/// and which ended early.
fn overlap_warning(step: &str, ids: &[u64], spans: &[(f64, f64)]) -> Option<String> {
    let t0 = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
    let t1 = spans.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
    let c0 = spans.iter().map(|s| s.0).fold(f64::NEG_INFINITY, f64::max);
    let c1 = spans.iter().map(|s| s.1).fold(f64::INFINITY, f64::min);
    let share = if t1 > t0 {
        ((c1 - c0) / (t1 - t0)).max(0.0)
    } else {
        1.0
    };
    // A step of a few hundredths of a second is not judged by its share.
    if share >= POOR_OVERLAP || (t1 - t0) - (c1 - c0).max(0.0) < MIN_APART {
        return None;
    }
    let late = spans
        .iter()
        .zip(ids)
        .max_by(|a, b| a.0 .0.total_cmp(&b.0 .0))
        .map(|(s, id)| (id, s.0 - t0));
    let early = spans
        .iter()
        .zip(ids)
        .min_by(|a, b| a.0 .1.total_cmp(&b.0 .1))
        .map(|(s, id)| (id, t1 - s.1));
    let mut why = Vec::new();
    if let Some((id, d)) = late.filter(|l| l.1 >= 0.05) {
        why.push(format!("client {id} started {d:.1} s late"));
    }
    if let Some((id, d)) = early.filter(|e| e.1 >= 0.05) {
        why.push(format!("client {id} ended {d:.1} s early"));
    }
    if why.is_empty() {
        why.push(format!(
            "their starts and ends are {:.2} s apart in all",
            (t1 - t0) - (c1 - c0).max(0.0)
        ));
    }
    let why = why.join(", ");
    Some(if c1 > c0 {
        format!(
            "{step}: the parts ran together for {:.0}% of the step ({why}); its rates are over those {:.1} s",
            share * 100.0,
            c1 - c0
        )
    } else {
        format!(
            "{step}: the parts never ran at the same time ({why}); its rates are over the whole span from the first start to the last end ({:.1} s), not of the parts together",
            t1 - t0
        )
    })
}

/// Add the HDR histograms of `sums` (base64 V2) into one and summarize it.
fn add_summaries(sums: &[&LatencySummary]) -> Result<LatencySummary> {
    let mut h: Histogram<u64> = new_hist();
    for s in sums {
        if s.count == 0 {
            continue;
        }
        let part =
            deserialize_base64(&s.hdr_base64).context("a latency histogram does not decode")?;
        h.add(&part).context("latency histograms do not add")?;
    }
    Ok(summarize(&h))
}

fn worst(a: Status, b: Status) -> Status {
    let rank = |s: Status| match s {
        Status::Ok => 0,
        Status::ChecksFailed => 1,
        Status::Running => 2,
        Status::Interrupted => 3,
        Status::Failed => 4,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

fn add_proc(a: &mut ProcSnapshot, b: &ProcSnapshot) {
    a.user_us += b.user_us;
    a.sys_us += b.sys_us;
    a.ctx_switches += b.ctx_switches;
    a.read_bytes += b.read_bytes;
    a.write_bytes += b.write_bytes;
    a.write_call_bytes += b.write_call_bytes;
    a.read_calls += b.read_calls;
    a.write_calls += b.write_calls;
    a.max_rss_bytes += b.max_rss_bytes;
}

/// The operations a step's CPU per operation is per: inserted rows in load steps, queries in
/// query steps, rows indexed in l.x (its `ips` over its time).
fn per_ops(s: &StepResult) -> u64 {
    if s.totals.ops[2] > 0 {
        s.totals.ops[2]
    } else if s.totals.rows[0] > 0 {
        s.totals.rows[0]
    } else {
        (s.summary.ips * s.seconds).round() as u64
    }
}

/// Put the parts' interval lines of one step, which ran from `t0` to `t_end`, on one grid of
/// `interval` seconds through `origin` (at or before `t0`: the common window's start, so the
/// grid's lines inside the window are whole). Returns the merged lines (their counts add up
/// to the sum of the parts').
pub fn merge_intervals(
    step: &str,
    parts: &[Vec<&IntervalLine>],
    origin: f64,
    t0: f64,
    t_end: f64,
    interval: f64,
) -> Vec<IntervalLine> {
    // Whole grid intervals before t0 are left out.
    let skip = ((t0 - origin) / interval).floor().max(0.0);
    let origin = origin + skip * interval;
    let n = (((t_end - origin) / interval).ceil() as usize).max(1);
    let mut per = vec![Totals::default(); n];
    let mut maxes = vec![[0u64; 3]; n];
    let mut stalled: Vec<Option<f64>> = vec![None; n];
    for lines in parts {
        let mut prev = (0u64, 0u64, 0u64);
        for l in lines {
            let Some(at) = l.at else { continue };
            // By its middle: parts whose cuts are a little apart still share a grid line.
            let mid = at - l.i_sec / 2.0;
            let k = (((mid - origin) / interval).floor().max(0.0) as usize).min(n - 1);
            let t = &mut per[k];
            t.rows[0] += l.t_ins - prev.0;
            t.rows[1] += l.t_del - prev.1;
            t.ops[2] += l.t_query - prev.2;
            t.retries[0] += l.retry_i;
            t.retries[1] += l.retry_d;
            t.retries[2] += l.retry_q;
            prev = (l.t_ins, l.t_del, l.t_query);
            maxes[k][0] = maxes[k][0].max(l.max_i);
            maxes[k][1] = maxes[k][1].max(l.max_d);
            maxes[k][2] = maxes[k][2].max(l.max_q);
            // Stalled only when every part that reported here was.
            if let Some(s) = l.stalled_secs {
                stalled[k] = Some(stalled[k].map_or(s, |o: f64| o.min(s)));
            }
        }
    }
    let mut out = Vec::with_capacity(n);
    let mut cum = Totals::default();
    for k in 0..n {
        let prev = cum;
        cum.add(&per[k]);
        let end = (origin + interval * (k + 1) as f64).min(t_end);
        let start = (origin + interval * k as f64).max(t0);
        let mut l = IntervalLine::compute(
            step,
            k as u64 + 1,
            &prev,
            &cum,
            (end - start).max(1e-9),
            (end - t0).max(1e-9),
            maxes[k],
        );
        l.stalled_secs = stalled[k];
        l.at = Some(end);
        out.push(l);
    }
    out
}

fn merge_step(parts: &[Part], i: usize, interval: f64) -> Result<(StepResult, Vec<IntervalLine>)> {
    let steps: Vec<&StepResult> = parts.iter().map(|p| &p.run.steps[i]).collect();
    let name = steps[0].name.clone();
    let lines: Vec<Vec<&IntervalLine>> = parts
        .iter()
        .map(|p| p.intervals.iter().filter(|l| l.step == name).collect())
        .collect();
    let mut spans = Vec::new();
    for (p, l) in parts.iter().zip(&lines) {
        if let Some(s) = span(l, &p.dir, &name)? {
            spans.push(s);
        }
    }
    let mut out = StepResult::new(&name, &steps[0].description);
    add_parts(&mut out, parts, &steps);
    // The union of the parts' spans; without intervals (maint, l.x), the longest part.
    let (t0, t1, seconds) = if spans.is_empty() {
        let s = steps.iter().map(|s| s.seconds).fold(0.0, f64::max);
        (0.0, s, s)
    } else {
        let a = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
        let b = spans.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
        (a, b, b - a)
    };
    out.seconds = seconds;
    // The window in which every part ran: the rates are over it. Only when every part has
    // interval lines (a part without any, e.g. a step of no operations, is then left to the
    // union).
    if !spans.is_empty() && spans.len() == parts.len() {
        let ids: Vec<u64> = parts.iter().map(|p| p.part.id).collect();
        if let Some(w) = overlap_warning(&name, &ids, &spans) {
            out.warnings.push(w);
        }
        out.common_window = Some(common_window(&spans, &lines, seconds));
    }
    // The parts met before the step (the barrier): they were given one start; say when not.
    let stamps: Vec<&BarrierStamps> = steps.iter().filter_map(|s| s.barrier.as_ref()).collect();
    if stamps.len() == steps.len() {
        let r0 = stamps[0].released_unix;
        if stamps.iter().any(|b| (b.released_unix - r0).abs() > 1e-3) {
            out.warnings.push(format!(
                "{name}: the parts were given different starts at the barrier (results of different runs?)"
            ));
        }
    }
    let windows: Vec<f64> = steps.iter().filter_map(|s| s.window_secs).collect();
    out.window_secs = (!windows.is_empty() && !spans.is_empty()).then_some(seconds);
    out.latency = merge_latency(&steps)?;
    // The grid runs through the common window's start, so its lines inside it are whole.
    let merged_lines = if spans.is_empty() {
        Vec::new()
    } else {
        let together = out.common_window.as_ref().filter(|w| w.seconds > 0.0);
        let origin = together.map_or(t0, |w| w.start_unix);
        merge_intervals(&name, &lines, origin, t0, t1, interval)
    };
    out.summary = merged_summary(&steps, &out, &merged_lines, interval);
    out.flow = merge_flow(&steps, &merged_lines);
    if steps.iter().any(|s| s.server.is_some()) {
        out.warnings.push(
            "server figures are not merged (each process measured the same server): see the parts"
                .into(),
        );
    }
    Ok((out, merged_lines))
}

/// The parts' step results added into `out`: the worst status, the first error, totals,
/// client figures, checks and warnings (each named by its client), builds, maintenance, and
/// the rate each was given and kept.
fn add_parts(out: &mut StepResult, parts: &[Part], steps: &[&StepResult]) {
    out.status = Status::Ok;
    for (p, s) in parts.iter().zip(steps) {
        out.status = worst(out.status, s.status);
        if let Some(e) = &s.error {
            out.error
                .get_or_insert_with(|| format!("client {}: {e}", p.part.id));
        }
        out.totals.add(&s.totals);
        add_proc(&mut out.client, &s.client);
        for c in &s.checks {
            out.checks.push(Check {
                name: c.name.clone(),
                ok: c.ok,
                detail: format!("client {}: {}", p.part.id, c.detail),
            });
        }
        for w in &s.warnings {
            out.warnings.push(format!("client {}: {w}", p.part.id));
        }
        out.index_builds.extend(s.index_builds.iter().cloned());
        out.maintenance.extend(s.maintenance.iter().cloned());
    }
    out.throttled = steps[0].throttled;
    out.target_rate = steps[0].target_rate;
    out.rate_ok = steps.iter().all(|s| s.rate_ok);
    let rates: Vec<f64> = steps.iter().filter_map(|s| s.achieved_rate).collect();
    out.achieved_rate = (rates.len() == steps.len() && !rates.is_empty())
        .then(|| rates.iter().sum::<f64>() / rates.len() as f64);
}

/// The window in which every part ran (the latest start to the earliest end of `spans`), with
/// the operations the parts' lines counted inside it; `seconds` is the union's length.
fn common_window(spans: &[(f64, f64)], lines: &[Vec<&IntervalLine>], seconds: f64) -> CommonWindow {
    let c0 = spans.iter().map(|s| s.0).fold(f64::NEG_INFINITY, f64::max);
    let c1 = spans.iter().map(|s| s.1).fold(f64::INFINITY, f64::min);
    let secs = (c1 - c0).max(0.0);
    CommonWindow {
        start_unix: c0,
        end_unix: c1,
        seconds: secs,
        share: if seconds > 0.0 { secs / seconds } else { 1.0 },
        counts: if secs > 0.0 {
            counts_within(lines, c0, c1)
        } else {
            [0.0; 3]
        },
    }
}

/// Latency per kind of operation: the parts' HDR histograms added, in the order the first part
/// has them.
fn merge_latency(steps: &[&StepResult]) -> Result<Vec<OpLatency>> {
    let mut ops: Vec<String> = Vec::new();
    for s in steps {
        for l in &s.latency {
            if !ops.contains(&l.op) {
                ops.push(l.op.clone());
            }
        }
    }
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        let of: Vec<&OpLatency> = steps
            .iter()
            .filter_map(|s| s.latency.iter().find(|l| l.op == op))
            .collect();
        let lat = add_summaries(&of.iter().map(|l| &l.latency).collect::<Vec<_>>())?;
        let svc = add_summaries(&of.iter().map(|l| &l.service).collect::<Vec<_>>())?;
        let lags: Vec<&LatencySummary> = of.iter().filter_map(|l| l.lag.as_ref()).collect();
        let lag = if lags.is_empty() {
            None
        } else {
            Some(add_summaries(&lags)?)
        };
        out.push(OpLatency {
            op,
            unit: of[0].unit.clone(),
            latency: lat,
            service: svc,
            lag,
        });
    }
    Ok(out)
}

/// The merged step's metrics line: rates over the common window of `out` (or, when the parts
/// never ran at the same time, over the whole span, with the warning said), client figures
/// summed, interval-rate percentiles from the merged lines inside the common window.
fn merged_summary(
    steps: &[&StepResult],
    out: &StepResult,
    merged_lines: &[IntervalLine],
    interval: f64,
) -> SummaryLine {
    let together = out.common_window.as_ref().filter(|w| w.seconds > 0.0);
    let (secs, counts) = match together {
        Some(w) => (w.seconds, w.counts),
        None => (
            out.seconds.max(1e-9),
            [
                out.totals.rows[0] as f64,
                out.totals.rows[1] as f64,
                out.totals.ops[2] as f64,
            ],
        ),
    };
    let cpu_ops: u64 = steps.iter().map(|s| per_ops(s)).sum();
    let cpu_us: f64 = steps
        .iter()
        .map(|s| s.summary.cpupq * per_ops(s) as f64)
        .sum();
    // Per-interval rates: the grid's lines within the common window (where every part ran).
    let full: Vec<&IntervalLine> = merged_lines
        .iter()
        .filter(|l| l.i_sec >= interval * 0.5)
        .filter(|l| {
            together.map_or(true, |w| {
                let end = l.at.unwrap_or(0.0);
                end - l.i_sec >= w.start_unix - 1e-6 && end <= w.end_unix + 1e-6
            })
        })
        .collect();
    let main_q = out.totals.ops[2] > 0;
    let irates: Vec<f64> = full
        .iter()
        .map(|l| if main_q { l.i_qps } else { l.i_ips })
        .collect();
    let sum = |f: fn(&SummaryLine) -> f64| steps.iter().map(|s| f(&s.summary)).sum::<f64>();
    SummaryLine {
        ips: if steps[0].name == "l.x" {
            sum(|s| s.ips)
        } else {
            counts[0] / secs
        },
        qps: counts[2] / secs,
        dps: counts[1] / secs,
        client_read_mbps: sum(|s| s.client_read_mbps),
        client_write_mbps: sum(|s| s.client_write_mbps),
        client_cs_per_sec: sum(|s| s.client_cs_per_sec),
        client_cpu_pct: sum(|s| s.client_cpu_pct),
        cpupq: if cpu_ops > 0 {
            cpu_us / cpu_ops as f64
        } else {
            0.0
        },
        dbgb: None,
        // the parts' processes together; unknown when any part's is
        client_rss_mb: steps
            .iter()
            .map(|s| s.summary.client_rss_mb)
            .sum::<Option<f64>>(),
        maxop: steps.iter().map(|s| s.summary.maxop).fold(0.0, f64::max),
        // unknown when no part had an interval of at least half the length
        p50: (!irates.is_empty()).then(|| rate_at_rank(&irates, 0.5)),
        p01: (!irates.is_empty()).then(|| rate_at_rank(&irates, 0.01)),
        ..Default::default()
    }
}

/// The flow: summed waits, the worst stall; none when no part had one.
fn merge_flow(steps: &[&StepResult], merged_lines: &[IntervalLine]) -> Option<FlowStats> {
    let flows: Vec<&FlowStats> = steps.iter().filter_map(|s| s.flow.as_ref()).collect();
    if flows.is_empty() {
        return None;
    }
    let sum_opt = |f: fn(&FlowStats) -> Option<u64>| {
        let v: Vec<u64> = flows.iter().filter_map(|x| f(x)).collect();
        (v.len() == flows.len()).then(|| v.iter().sum())
    };
    let ws: Vec<f64> = flows.iter().filter_map(|f| f.writer_secs).collect();
    Some(FlowStats {
        longest_stall_secs: flows
            .iter()
            .map(|f| f.longest_stall_secs)
            .fold(0.0, f64::max),
        stalled_lines: merged_lines
            .iter()
            .filter(|l| l.stalled_secs.is_some())
            .count() as u64,
        stall_timed_out: flows.iter().any(|f| f.stall_timed_out),
        insert_wait_secs: flows.iter().map(|f| f.insert_wait_secs).sum(),
        insert_waits: flows.iter().map(|f| f.insert_waits).sum(),
        max_excess_rows: sum_opt(|f| f.max_excess_rows),
        max_deficit_rows: sum_opt(|f| f.max_deficit_rows),
        arrivals: flows[0].arrivals,
        writer_secs: (ws.len() == flows.len()).then(|| ws.iter().sum::<f64>() / ws.len() as f64),
    })
}

/// Merge the parts in `paths` into one run. Returns it and its interval lines.
pub fn merge(paths: &[PathBuf]) -> Result<(RunResult, Vec<IntervalLine>)> {
    let parts = load_parts(paths)?;
    let interval = parts[0]
        .run
        .config
        .get("interval_secs")
        .and_then(|v| v.as_f64())
        .unwrap_or(1.0);
    let mut run = parts[0].run.clone();
    run.steps.clear();
    run.status = parts.iter().fold(Status::Ok, |a, p| worst(a, p.run.status));
    run.error = parts.iter().find_map(|p| {
        p.run
            .error
            .as_ref()
            .map(|e| format!("client {}: {e}", p.part.id))
    });
    run.started_at = parts
        .iter()
        .map(|p| p.run.started_at.clone())
        .min()
        .unwrap_or_default();
    run.finished_at = parts
        .iter()
        .map(|p| p.run.finished_at.clone())
        .collect::<Option<Vec<_>>>()
        .and_then(|v| v.into_iter().max());
    let clients = parts[0].part.clients * parts[0].part.count;
    if let Some(o) = run.config.as_object_mut() {
        o.remove("client_part");
        o.insert("clients".into(), clients.into());
        o.insert(
            "tables".into(),
            parts
                .iter()
                .flat_map(|p| {
                    p.run.config["tables"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                })
                .collect::<Vec<_>>()
                .into(),
        );
        o.insert(
            "merged_from".into(),
            serde_json::json!(parts
                .iter()
                .map(|p| serde_json::json!({
                    "client_id": p.part.id,
                    "dir": p.dir.display().to_string(),
                    "seed": p.run.config.get("seed"),
                    "target": p.run.config.get("target"),
                }))
                .collect::<Vec<_>>()),
        );
        o.insert("client_count".into(), parts[0].part.count.into());
    }
    let mut lines = Vec::new();
    for i in 0..parts[0].run.steps.len() {
        let (s, l) = merge_step(&parts, i, interval)?;
        run.steps.push(s);
        lines.extend(l);
    }
    Ok((run, lines))
}

/// Seconds as the merge's lines show them: hundredths under 10 s, tenths above.
fn secs(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.2}")
    } else {
        format!("{s:.1}")
    }
}

/// `ixbench merge`: write the merged run into a new results directory.
pub fn run(args: &MergeArgs, argv: Vec<String>) -> Result<u8> {
    if args.runs.len() < 2 {
        bail!("ixbench merge needs the results of at least two parts");
    }
    let (mut run, lines) = merge(&args.runs)?;
    run.command_line = argv;
    let mut store = Store::create(Some(&args.output), "")?;
    for l in &lines {
        store.append_interval(l)?;
    }
    store.write_run(&run)?;
    let steps = crate::export::steps_table(&run);
    let (intervals, txn) = store.intervals_so_far()?;
    store.write_file(
        "report.html",
        &crate::export::html::report(&run, &intervals, &txn, &[("steps", steps.clone())]),
    )?;
    crate::out!("{}", crate::export::text::table(&steps));
    // Over which time each step's rates are, and what the parts' overlap was.
    for st in &run.steps {
        if let Some(w) = &st.common_window {
            crate::outln!(
                "{}: rates over the {} s all parts ran together ({:.0}% of the step's {} s)",
                st.name,
                secs(w.seconds),
                w.share * 100.0,
                secs(st.seconds)
            );
        }
        for warn in st
            .warnings
            .iter()
            .filter(|w| w.starts_with(&format!("{}: ", st.name)))
        {
            crate::outln!("WARNING: {warn}");
        }
    }
    // The parts' checks, as every command shows its own.
    let checks = crate::export::checks_table(&run);
    store.write_file("checks.csv", &crate::export::csv::render(&checks))?;
    store.write_file("checks.md", &crate::export::markdown::render(&checks))?;
    crate::out!("\n{}", crate::export::text::checks(&run));
    crate::outln!(
        "merged {} parts ({} clients) into {}",
        args.runs.len(),
        run.config["clients"],
        store.dir().display()
    );
    crate::outln!("report: {}", store.dir().join("report.html").display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::scale::without_address;

    #[test]
    fn parts_may_use_different_nodes_of_one_cluster() {
        assert_eq!(
            without_address("mysql://root@127.0.0.1:4001/ixbench"),
            "mysql://root@*/ixbench"
        );
        assert_eq!(
            without_address("mysql://root@127.0.0.1:4002/ixbench"),
            without_address("mysql://root@127.0.0.1:4001/ixbench")
        );
        assert_ne!(
            without_address("mysql://root@h:1/a"),
            without_address("mysql://root@h:1/b")
        );
        assert_eq!(without_address("postgres://h:5/db"), "postgres://*/db");
        assert_eq!(without_address("sqlite:/tmp/x.db"), "sqlite:/tmp/x.db");
    }

    /// A part's lines: `per` queries per second for `n` intervals of 1 s from `start`.
    fn part(start: f64, n: u64, per: u64) -> Vec<IntervalLine> {
        (1..=n)
            .map(|k| {
                let prev = Totals {
                    ops: [0, 0, per * (k - 1)],
                    ..Default::default()
                };
                let cur = Totals {
                    ops: [0, 0, per * k],
                    ..Default::default()
                };
                let mut l = IntervalLine::compute("qr1", k, &prev, &cur, 1.0, k as f64, [0, 0, k]);
                l.at = Some(start + k as f64);
                l
            })
            .collect()
    }

    #[test]
    fn counts_within_the_common_window() {
        // 10 q/s from 100, 5 q/s from 100.3: the window [100.3, 103] holds 2.7 s of each.
        let a = part(100.0, 3, 10);
        let b = part(100.3, 3, 5);
        let lines = vec![a.iter().collect(), b.iter().collect::<Vec<_>>()];
        let c = counts_within(&lines, 100.3, 103.0);
        assert!((c[2] - 2.7 * 15.0).abs() < 1e-9, "{c:?}");
        assert_eq!(counts_within(&lines, 90.0, 110.0)[2], 45.0);
        assert_eq!(counts_within(&lines, 104.0, 105.0)[2], 0.0);
    }

    #[test]
    fn poor_overlap_is_warned_with_its_size() {
        assert_eq!(
            overlap_warning("qr1", &[0, 1], &[(100.0, 110.0), (100.2, 110.1)]),
            None
        );
        let w = overlap_warning("qr1", &[0, 1], &[(100.0, 110.0), (103.0, 113.0)]).unwrap();
        assert!(
            w.starts_with("qr1: the parts ran together for 54% of the step")
                && w.contains("client 1 started 3.0 s late")
                && w.contains("client 0 ended 3.0 s early"),
            "{w}"
        );
        let w = overlap_warning("l.i0", &[0, 1], &[(100.0, 101.0), (102.0, 103.0)]).unwrap();
        assert!(w.contains("never ran at the same time"), "{w}");
        // a step of hundredths of a second is not judged by its share
        assert_eq!(
            overlap_warning("l.i0", &[0, 1], &[(100.0, 100.02), (100.03, 100.05)]),
            None
        );
    }

    #[test]
    fn refusals_name_what_differs() {
        let a = serde_json::json!({"run_seed": 1, "target": "postgres://*/a", "steps": ["l.i0"], "x": 1});
        let mut b = a.clone();
        b["run_seed"] = 2.into();
        assert!(difference(&a, &b).contains("different seeds"));
        let mut b = a.clone();
        b["target"] = "postgres://*/b".into();
        assert!(difference(&a, &b).contains("different targets"));
        let mut b = a.clone();
        b["steps"] = serde_json::json!(["l.i0", "l.x"]);
        assert!(difference(&a, &b).contains("different plans"));
        let mut b = a.clone();
        b["x"] = 2.into();
        assert!(difference(&a, &b).contains("(x: 1 and 2)"));
    }

    #[test]
    fn lines_of_parts_a_little_apart_share_grid_lines() {
        let a = part(100.0, 3, 10);
        let b = part(100.3, 3, 5);
        let lines = vec![a.iter().collect(), b.iter().collect::<Vec<_>>()];
        let m = merge_intervals("qr1", &lines, 100.0, 100.0, 103.3, 1.0);
        assert_eq!(m.len(), 4);
        let per: Vec<u64> = m
            .iter()
            .scan(0, |prev, l| {
                let d = l.t_query - *prev;
                *prev = l.t_query;
                Some(d)
            })
            .collect();
        assert_eq!(per, [15, 15, 15, 0]);
        assert_eq!(m[3].t_query, 45);
        assert_eq!(m[2].max_q, 3);
        assert!((m[3].i_sec - 0.3).abs() < 1e-9);
        assert_eq!(m[0].at, Some(101.0));
    }
}
