//! What `compare` reads from a `run.json`, read defensively from the JSON itself rather than
//! through [`crate::results::RunResult`]: runs made by other ixbench versions (fields added,
//! renamed or made optional) still compare, and a field that is missing or `null` is unknown,
//! never 0.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use serde_json::Value;

use crate::results::parts::Parts;

/// How a figure is judged: rates and CPU per operation move little between identical runs;
/// tail figures (a percentile of intervals or of operations, the slowest operation) are moved by
/// a handful of slow operations and need a wider noise floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Throughput, CPU per operation, build seconds.
    Rate,
    /// p01 of interval rates, p99 of operations, slowest operation.
    Tail,
}

/// One figure of one step (or build) of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Name with its unit where it has one (`ips`, `cpupq`, `p99_insert_ms`).
    pub metric: String,
    /// More is better (rates), or less is (latency, CPU).
    pub higher_is_better: bool,
    /// Noise class.
    pub class: Class,
    /// The value.
    pub value: f64,
    /// How coarsely it was measured (absolute, same unit; 0: finely): figures from /proc CPU
    /// times are whole clock ticks (10 ms), which decide the verdict on short steps and builds.
    pub resolution: f64,
}

/// One clock tick of /proc CPU times (USER_HZ = 100 on Linux), seconds.
const TICK_SECS: f64 = 0.01;

/// One step of a run, as far as `compare` needs it.
#[derive(Debug, Clone, Default)]
pub struct Step {
    /// `l.i0`, `qr100`...
    pub name: String,
    /// `ok`, `failed`, `interrupted`, `checks_failed`, `running`, or `unknown`.
    pub status: String,
    /// The error that stopped it, if any.
    pub error: Option<String>,
    /// `Some(false)` when a throttled writer missed its rate.
    pub rate_ok: Option<bool>,
    /// Target and achieved writer rate (rows/s per client), when throttled.
    pub target_rate: Option<f64>,
    /// Achieved writer rate.
    pub achieved_rate: Option<f64>,
    /// What the rates count when not the insert benchmark's rows/s per writer (a transaction
    /// workload's offered TPS of all clients together).
    pub rate_unit: Option<String>,
    /// Failed self-checks: `name: detail`.
    pub failed_checks: Vec<String>,
    /// The step stopped because nothing completed for `--stall-timeout` (ixbench versions that
    /// detect stalls).
    pub stalls: Vec<String>,
    /// The figures that compare.
    pub figures: Vec<Figure>,
}

/// One index build (ixbench index), or one load strategy.
#[derive(Debug, Clone, Default)]
pub struct Build {
    /// `build mode [knob=value ...]`, or `strategy NAME`.
    pub key: String,
    /// Finished and checked?
    pub ok: bool,
    /// Why not.
    pub problem: Option<String>,
    /// A knob point of `ixbench ddl` whose load did not keep its offered rate without the DDL
    /// (no verdict on the DDL): why, treated like a step's missed rate.
    pub rate_missed: Option<String>,
    /// The figures that compare.
    pub figures: Vec<Figure>,
}

/// One run, as far as `compare` needs it.
#[derive(Debug, Clone)]
pub struct Run {
    /// How the user named it (path).
    pub label: String,
    /// Run status (`ok`, `failed`, `interrupted`, `checks_failed`, `running`, `unknown`).
    pub status: String,
    /// The error that stopped it.
    pub error: Option<String>,
    /// `sqlite`, `postgres`, `mysql`, `null`.
    pub kind: String,
    /// DBMS version.
    pub version: String,
    /// Storage engine, if the DBMS has several.
    pub engine: Option<String>,
    /// DBMS settings (name, value).
    pub settings: Vec<(String, String)>,
    /// The run's effective configuration.
    pub config: Value,
    /// ixbench version that made it.
    pub ixbench_version: String,
    /// The command line that made it (settings a side set itself are named there).
    pub command_line: Vec<String>,
    /// Steps in order.
    pub steps: Vec<Step>,
    /// Index builds and load strategies (`ixbench index`).
    pub builds: Vec<Build>,
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

fn string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// A JSON value as a setting shows it: strings bare, `null` as `none`, the rest as JSON.
pub fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        other => other.to_string(),
    }
}

fn checks_failed(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["ok"].as_bool() == Some(false))
        .map(|c| {
            let name = string(&c["name"]).unwrap_or_else(|| "check".into());
            match string(&c["detail"]).filter(|d| !d.is_empty()) {
                Some(d) => format!("{name}: {d}"),
                None => name,
            }
        })
        .collect()
}

/// The figures of a step's summary and latency lists.
fn step_figures(s: &Value) -> Vec<Figure> {
    let sum = &s["summary"];
    let mut out = Vec::new();
    let mut push = |metric: &str, hib: bool, class: Class, v: Option<f64>, resolution: f64| {
        out.extend(v.map(|value| Figure {
            metric: metric.to_string(),
            higher_is_better: hib,
            class,
            value,
            resolution,
        }));
    };
    // A rate of 0 is a measured 0 (nothing done); both sides 0 is skipped later.
    for m in ["ips", "qps", "dps"] {
        push(m, true, Class::Rate, num(&sum[m]), 0.0);
    }
    push("p01", true, Class::Tail, num(&sum["p01"]), 0.0);
    // Client CPU per operation and the slowest operation cannot be 0 when measured: 0 is how
    // older results wrote "unknown" or "no operation".
    let pos = |v: &Value| num(v).filter(|x| *x > 0.0);
    let cpu = ["cli_cpupq", "client_cpupq", "cpupq"]
        .iter()
        .find_map(|k| pos(&sum[*k]));
    push("cpupq", false, Class::Rate, cpu, 0.0);
    // Server CPU comes from /proc in clock ticks: one tick over the step's operations (per
    // query in query steps, per inserted row otherwise) is its resolution.
    let ops = if num(&sum["qps"]).unwrap_or(0.0) > 0.0 {
        num(&s["totals"]["ops"][2])
    } else {
        num(&s["totals"]["rows"][0])
    };
    let srv_res = ops
        .filter(|n| *n > 0.0)
        .map_or(0.0, |n| TICK_SECS * 1e6 / n);
    push(
        "srv_cpupq",
        false,
        Class::Rate,
        num(&sum["srv_cpupq"]),
        srv_res,
    );
    // Server I/O per operation (ixbench versions that record it; `null` is unknown, 0 is 0).
    for m in ["srv_read_kb_per_op", "srv_write_kb_per_op"] {
        push(m, false, Class::Rate, num(&sum[m]), 0.0);
    }
    push("maxop", false, Class::Tail, pos(&sum["maxop"]), 0.0);
    for l in s["latency"].as_array().into_iter().flatten() {
        let Some(op) = l["op"].as_str() else { continue };
        let lat = &l["latency"];
        if num(&lat["count"]).unwrap_or(0.0) > 0.0 {
            push(
                &format!("p99_{op}_ms"),
                false,
                Class::Tail,
                num(&lat["p99_us"]).map(|us| us / 1000.0),
                0.0,
            );
        }
    }
    // Interval lines in which nothing completed (ixbench versions that mark stalls).
    push(
        "stalled_lines",
        false,
        Class::Tail,
        num(&s["flow"]["stalled_lines"]),
        0.0,
    );
    out
}

fn read_step(s: &Value) -> Step {
    let mut stalls = Vec::new();
    if s["flow"]["stall_timed_out"].as_bool() == Some(true) {
        stalls.push(match num(&s["flow"]["longest_stall_secs"]) {
            Some(x) => format!("stalled: nothing completed for {x:.1} s (--stall-timeout)"),
            None => "stalled: nothing completed for --stall-timeout".to_string(),
        });
    }
    Step {
        name: string(&s["name"]).unwrap_or_else(|| "?".into()),
        status: string(&s["status"]).unwrap_or_else(|| "unknown".into()),
        error: string(&s["error"]),
        rate_ok: s["rate_ok"].as_bool(),
        target_rate: num(&s["target_rate"]),
        achieved_rate: num(&s["achieved_rate"]),
        rate_unit: None,
        failed_checks: checks_failed(&s["checks"]),
        stalls,
        figures: step_figures(s),
    }
}

fn build_key(b: &Value) -> String {
    let build = string(&b["build"]).unwrap_or_else(|| "?".into());
    let mode = string(&b["mode"]).unwrap_or_default();
    let knobs: Vec<String> = b["knobs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|kv| Some(format!("{}={}", show(kv.get(0)?), show(kv.get(1)?))))
        .collect();
    if knobs.is_empty() {
        format!("{build} {mode}").trim().to_string()
    } else {
        format!("{build} {mode} [{}]", knobs.join(" "))
    }
}

fn read_build(b: &Value) -> Build {
    let error = string(&b["error"]);
    let failed = checks_failed(&b["checks"]);
    let ok = b["ok"].as_bool().unwrap_or(error.is_none()) && error.is_none();
    let problem = if let Some(e) = &error {
        Some(format!("failed: {e}"))
    } else if !ok {
        Some("did not finish".into())
    } else if !failed.is_empty() {
        Some(format!("check failed: {}", failed.join("; ")))
    } else {
        None
    };
    let mut figures = Vec::new();
    if ok {
        // Server CPU seconds are whole clock ticks, and 0 is a measured "under one tick".
        // Bytes the server wrote, and sort spill (PostgreSQL temp files), in MB: counted, not
        // timed, so a change in how a build works (a sort that no longer fits in memory) shows
        // even when the machine is too noisy for its time to.
        let temp = b["counters"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|kv| kv.get(0).and_then(Value::as_str) == Some("temp_bytes"))
            .and_then(|kv| num(&kv[1]));
        let mb = |v: Option<f64>| v.map(|x| x / 1e6);
        for (metric, v, resolution) in [
            ("build_secs", num(&b["seconds"]).filter(|x| *x > 0.0), 0.0),
            ("build_srv_cpu_secs", num(&b["server_cpu_secs"]), TICK_SECS),
            ("build_srv_write_mb", mb(num(&b["server_write_bytes"])), 0.0),
            ("build_temp_mb", mb(temp), 0.0),
        ] {
            if let Some(value) = v {
                figures.push(Figure {
                    metric: metric.into(),
                    higher_is_better: false,
                    class: Class::Rate,
                    value,
                    resolution,
                });
            }
        }
    }
    Build {
        key: build_key(b),
        ok: problem.is_none(),
        problem,
        rate_missed: None,
        figures,
    }
}

/// A knob point of `ixbench ddl`: the DDL's time and what it did to the load (TPS and p99
/// during the DDL relative to the baseline window).
fn read_ddl_point(p: &Value) -> Build {
    let knobs: Vec<String> = p["knobs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|kv| Some(format!("{}={}", show(kv.get(0)?), show(kv.get(1)?))))
        .collect();
    let key = if knobs.is_empty() {
        "ddl".to_string()
    } else {
        format!("ddl [{}]", knobs.join(" "))
    };
    let failed = checks_failed(&p["checks"]);
    let error = string(&p["error"]).or_else(|| string(&p["ddl"]["error"]));
    let ok = p["ok"].as_bool().unwrap_or(false) && error.is_none();
    let problem = if let Some(e) = &error {
        Some(format!("failed: {e}"))
    } else if !ok {
        Some("did not finish".into())
    } else if !failed.is_empty() {
        Some(format!("check failed: {}", failed.join("; ")))
    } else {
        None
    };
    let mut figures = Vec::new();
    if ok {
        for (metric, v, higher, class) in [
            ("ddl_secs", num(&p["ddl"]["seconds"]), false, Class::Rate),
            (
                "tps_during_ratio",
                num(&p["impact"]["tps_ratio"]),
                true,
                Class::Rate,
            ),
            (
                "p99_during_ratio",
                num(&p["impact"]["p99_ratio"]),
                false,
                Class::Tail,
            ),
        ] {
            if let Some(value) = v {
                figures.push(Figure {
                    metric: metric.into(),
                    higher_is_better: higher,
                    class,
                    value,
                    resolution: 0.0,
                });
            }
        }
    }
    // No verdict: the load missed its offered rate in the baseline (ixbench versions that
    // judge it); the ratios are left out by ixbench itself then.
    let rate_missed = (p["impact"]["rate_ok"].as_bool() == Some(false)).then(|| {
        let why: Vec<String> = p["impact"]["no_verdict"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(String::from))
            .collect();
        if why.is_empty() {
            "the load did not keep its offered rate without the DDL".to_string()
        } else {
            why.join("; ")
        }
    });
    Build {
        key,
        ok: problem.is_none(),
        problem,
        rate_missed,
        figures,
    }
}

fn read_strategy(s: &Value) -> Build {
    let name = string(&s["strategy"]).unwrap_or_else(|| "?".into());
    let failed = checks_failed(&s["checks"]);
    let mut figures = Vec::new();
    for (metric, key) in [
        ("load_secs", "load_secs"),
        ("index_secs", "index_secs"),
        ("total_secs", "total_secs"),
    ] {
        if let Some(value) = num(&s[key]).filter(|x| *x > 0.0) {
            figures.push(Figure {
                metric: metric.into(),
                higher_is_better: false,
                class: Class::Rate,
                value,
                resolution: 0.0,
            });
        }
    }
    Build {
        key: format!("strategy {name}"),
        ok: failed.is_empty(),
        problem: (!failed.is_empty()).then(|| format!("check failed: {}", failed.join("; "))),
        rate_missed: None,
        figures,
    }
}

/// A figure, when it was measured.
fn fig(metric: &str, higher_is_better: bool, class: Class, v: Option<f64>) -> Option<Figure> {
    v.map(|value| Figure {
        metric: metric.to_string(),
        higher_is_better,
        class,
        value,
        resolution: 0.0,
    })
}

/// Microseconds as milliseconds (latency figures compare in ms).
fn ms(v: &Value) -> Option<f64> {
    num(v).map(|us| us / 1000.0)
}

/// The figures every transaction phase carries under the same names, whatever its workload:
/// transactions per second, statements per second, latency p95/p99 (ms), errors and retries
/// per second, client CPU per transaction. `secs` is the phase's wall time.
fn txn_figures(totals: &Value, latency: &Value, secs: Option<f64>) -> Vec<Figure> {
    let per_sec = |k: &str| {
        let n = num(&totals[k])?;
        secs.filter(|s| *s > 0.0).map(|s| n / s)
    };
    let has_ops = num(&latency["count"]).unwrap_or(0.0) > 0.0;
    let lat = |k: &str| if has_ops { ms(&latency[k]) } else { None };
    [
        fig("p99_ms", false, Class::Tail, lat("p99_us")),
        fig("errors_per_sec", false, Class::Tail, per_sec("errors")),
        fig("retries_per_sec", false, Class::Tail, per_sec("retries")),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A measured run of a transaction workload (`run --workload oltp_*`, `ixbench oltp`) as a
/// step named after its workload: TPS, QPS, latency p95/p99, errors and retries, client CPU
/// per transaction, its checks, and a missed offered rate (open loop) like a throttled step's.
fn read_oltp(part: &str, r: &Value) -> Step {
    let secs = num(&r["seconds"]);
    let tps = num(&r["tps"]);
    let mut figures: Vec<Figure> = [
        fig("tps", true, Class::Rate, tps),
        fig("qps", true, Class::Rate, num(&r["qps"])),
        fig("p95_ms", false, Class::Tail, ms(&r["p95_us"])),
    ]
    .into_iter()
    .flatten()
    .collect();
    figures.extend(txn_figures(&r["totals"], &r["latency"], secs));
    figures.extend(fig(
        "cpupq",
        false,
        Class::Rate,
        num(&r["client_cpu_us_per_txn"]).filter(|x| *x > 0.0),
    ));
    let target = num(&r["rate"]).filter(|x| *x > 0.0);
    let rate_ok = target.map(|t| tps.unwrap_or(0.0) >= crate::measure::windows::RATE_MET * t);
    Step {
        name: string(&r["workload"]).unwrap_or_else(|| part.into()),
        status: string(&r["status"]).unwrap_or_else(|| "unknown".into()),
        error: string(&r["error"]),
        rate_ok,
        target_rate: target,
        achieved_rate: target.and(tps),
        rate_unit: Some("TPS (all clients)".into()),
        failed_checks: checks_failed(&r["checks"]),
        stalls: Vec::new(),
        figures,
    }
}

/// A measured run of the time-series workload, one per partitioning, as a step named
/// `timeseries.PARTITIONING`: ingest rate, commit latency, CPU per row, retention time, and
/// each query's latency (`p50_QUERY_ms`, `p99_QUERY_ms`).
fn read_timeseries(r: &Value) -> Step {
    let secs = num(&r["seconds"]);
    let mut figures: Vec<Figure> = [
        fig("rows_per_sec", true, Class::Rate, num(&r["rows_per_sec"])),
        fig(
            "cpupq",
            false,
            Class::Rate,
            num(&r["cpu_us_per_row"]).filter(|x| *x > 0.0),
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    figures.extend(txn_figures(&r["totals"], &r["latency"], secs));
    let events: Vec<&Value> = r["retention"].as_array().into_iter().flatten().collect();
    if !events.is_empty() {
        let total: Option<f64> = events.iter().map(|e| num(&e["seconds"])).sum();
        figures.extend(fig("retention_secs", false, Class::Rate, total));
    }
    for q in r["queries"].as_array().into_iter().flatten() {
        let Some(name) = q["query"].as_str() else {
            continue;
        };
        let lat = &q["latency"];
        if num(&lat["count"]).unwrap_or(0.0) > 0.0 {
            figures.extend(fig(
                &format!("p50_{name}_ms"),
                false,
                Class::Tail,
                ms(&lat["p50_us"]),
            ));
            figures.extend(fig(
                &format!("p99_{name}_ms"),
                false,
                Class::Tail,
                ms(&lat["p99_us"]),
            ));
        }
    }
    let failed_checks = checks_failed(&r["checks"]);
    let part = string(&r["partitioning"]).unwrap_or_else(|| "?".into());
    Step {
        name: format!("timeseries.{part}"),
        status: if failed_checks.is_empty() {
            "ok".into()
        } else {
            "checks_failed".into()
        },
        error: None,
        rate_ok: None,
        target_rate: None,
        achieved_rate: None,
        rate_unit: None,
        failed_checks,
        stalls: Vec::new(),
        figures,
    }
}

/// Parse a `run.json` already read as JSON.
pub fn from_json(label: &str, v: &Value) -> Result<Run> {
    let has = |k: &str| v.get(k).is_some_and(|x| !x.is_null());
    // The workloads' own records: every list of records the result model does not name.
    let parts = Parts::deserialize(v).unwrap_or_default();
    let parts: Vec<(&str, &Value)> = parts
        .records()
        .filter(|(p, _)| !["steps", "builds", "strategies", "warnings"].contains(p))
        .collect();
    if !v.is_object() || (!["steps", "builds", "ddl"].iter().any(|k| has(k)) && parts.is_empty()) {
        bail!("{label} is not an ixbench run.json (no steps, no builds)");
    }
    let t = &v["target"];
    let settings = t["settings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|kv| Some((show(kv.get(0)?), show(kv.get(1)?))))
        .collect();
    let mut builds: Vec<Build> = v["builds"]
        .as_array()
        .into_iter()
        .flatten()
        .map(read_build)
        .collect();
    builds.extend(
        v["strategies"]
            .as_array()
            .into_iter()
            .flatten()
            .map(read_strategy),
    );
    builds.extend(
        v["ddl"]["points"]
            .as_array()
            .into_iter()
            .flatten()
            .map(read_ddl_point),
    );
    // A step list may repeat a step (`--steps l.i1,l.i1`): the second is `l.i1#2`.
    // Every workload's measured phases are steps with named figures: the insert benchmark's,
    // then each workload's own records, part by part (a transaction workload's runs, the
    // time-series workload's).
    let phases = v["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(read_step)
        .chain(parts.iter().map(|&(part, r)| {
            // A run of one partitioning is a time-series run; any other record is read as
            // the standard record of a transaction run (`oltp`), each figure it lacks left out.
            if r.get("partitioning").is_some() {
                read_timeseries(r)
            } else {
                read_oltp(part, r)
            }
        }));
    let mut steps: Vec<Step> = Vec::new();
    for mut st in phases {
        let seen = steps
            .iter()
            .filter(|x| x.name.split('#').next() == Some(st.name.as_str()))
            .count();
        if seen > 0 {
            st.name = format!("{}#{}", st.name, seen + 1);
        }
        steps.push(st);
    }
    Ok(Run {
        label: label.to_string(),
        status: string(&v["status"]).unwrap_or_else(|| "unknown".into()),
        error: string(&v["error"]),
        kind: string(&t["kind"]).unwrap_or_else(|| "unknown".into()),
        version: string(&t["version"]).unwrap_or_else(|| "unknown".into()),
        engine: string(&t["engine"]),
        settings,
        config: v["config"].clone(),
        ixbench_version: string(&v["ixbench_version"]).unwrap_or_else(|| "unknown".into()),
        command_line: v["command_line"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(String::from))
            .collect(),
        steps,
        builds,
    })
}

fn read_one(file: &Path, label: &str) -> Result<Run> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let v: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not an ixbench run.json", file.display()))?;
    crate::results::schema::check_version(&v, file)?;
    from_json(label, &v)
}

/// The runs a command-line path names: a `run.json`, a results directory, or a directory whose
/// subdirectories are results directories (repeats, in name order).
pub fn load_path(p: &Path) -> Result<Vec<Run>> {
    let label = p.display().to_string();
    if !p.exists() {
        bail!("{label} does not exist");
    }
    if !p.is_dir() {
        return Ok(vec![read_one(p, &label)?]);
    }
    let direct = p.join("run.json");
    if direct.is_file() {
        return Ok(vec![read_one(&direct, &label)?]);
    }
    let mut subs: Vec<PathBuf> = std::fs::read_dir(p)
        .with_context(|| format!("cannot list {label}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|d| d.join("run.json").is_file())
        .collect();
    subs.sort();
    if subs.is_empty() {
        bail!("{label} holds no run.json and no results directories with one");
    }
    subs.iter()
        .map(|d| read_one(&d.join("run.json"), &d.display().to_string()))
        .collect()
}

#[cfg(test)]
mod ddl_tests {
    use super::*;

    #[test]
    fn ddl_points_are_compared_as_builds() {
        let v = serde_json::json!({
            "status": "ok", "steps": [], "target": {"kind": "sqlite", "version": "3"},
            "ddl": {"points": [
                {"knobs": [], "ok": true, "checks": [],
                 "ddl": {"seconds": 1.5}, "impact": {"tps_ratio": 0.5, "p99_ratio": 3.0}},
                {"knobs": [["maintenance_work_mem", "1MB"]], "ok": false, "error": "boom",
                 "checks": [], "ddl": {"seconds": null}, "impact": null}
            ]}
        });
        let r = from_json("x", &v).unwrap();
        assert_eq!(r.builds.len(), 2);
        let b = &r.builds[0];
        assert_eq!(b.key, "ddl");
        let m: Vec<(&str, f64, bool)> = b
            .figures
            .iter()
            .map(|f| (f.metric.as_str(), f.value, f.higher_is_better))
            .collect();
        assert_eq!(
            m,
            [
                ("ddl_secs", 1.5, false),
                ("tps_during_ratio", 0.5, true),
                ("p99_during_ratio", 3.0, false)
            ]
        );
        let f = &r.builds[1];
        assert_eq!(f.key, "ddl [maintenance_work_mem=1MB]");
        assert!(!f.ok && f.figures.is_empty());
        assert_eq!(f.problem.as_deref(), Some("failed: boom"));
        assert_eq!(b.rate_missed, None);
    }

    /// A point whose load missed its offered rate in the baseline is a failure like a step's
    /// missed rate: listed as `rate NOT met` with ixbench's reasons; its DDL time still
    /// compares.
    #[test]
    fn a_ddl_point_without_a_verdict_is_a_missed_rate() {
        let v = serde_json::json!({
            "status": "ok", "steps": [], "target": {"kind": "sqlite", "version": "3"},
            "ddl": {"points": [
                {"knobs": [], "ok": true, "checks": [], "ddl": {"seconds": 0.5},
                 "impact": {"tps_ratio": null, "rate_ok": false,
                            "no_verdict": ["the baseline completed 60.0 of 100.0 TPS (60%)"]}}
            ]}
        });
        let r = from_json("x", &v).unwrap();
        let b = &r.builds[0];
        assert!(b.ok);
        assert_eq!(b.figures.len(), 1);
        let f = crate::export::compare::failures(&r, &[], &[]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, "rate NOT met");
        assert!(f[0].detail.contains("60.0 of 100.0 TPS"), "{:?}", f[0]);
    }
}

#[cfg(test)]
mod workload_tests {
    use super::*;

    /// A transaction workload's runs and the time series' are steps with named figures; an
    /// open-loop run that fell behind its offered rate is a missed rate.
    #[test]
    fn oltp_and_timeseries_runs_are_steps() {
        let v = serde_json::json!({
            "status": "ok", "target": {"kind": "sqlite", "version": "3"},
            "oltp": [{"workload": "oltp_read_write", "status": "ok", "seconds": 2.0,
                      "tps": 50.0, "qps": 1000.0, "rate": 100.0, "p95_us": 2000,
                      "totals": {"errors": 4, "retries": 2},
                      "latency": {"count": 100, "p99_us": 3000},
                      "client_cpu_us_per_txn": null,
                      "checks": [{"name": "rows", "ok": false, "detail": "off by 1"}]}],
            "timeseries": [{"partitioning": "range", "seconds": 1.0, "rows_per_sec": 9.0,
                            "totals": {}, "latency": {"count": 0},
                            "retention": [{"seconds": 0.5}, {"seconds": 0.25}],
                            "queries": [{"query": "latest",
                                         "latency": {"count": 3, "p50_us": 100, "p99_us": 400}}],
                            "checks": []}]
        });
        let r = from_json("x", &v).unwrap();
        let names: Vec<&str> = r.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["oltp_read_write", "timeseries.range"]);
        let figs = |i: usize| -> Vec<(String, f64)> {
            r.steps[i]
                .figures
                .iter()
                .map(|f| (f.metric.clone(), f.value))
                .collect()
        };
        let m = |a: &str, v: f64| (a.to_string(), v);
        assert_eq!(
            figs(0),
            [
                m("tps", 50.0),
                m("qps", 1000.0),
                m("p95_ms", 2.0),
                m("p99_ms", 3.0),
                m("errors_per_sec", 2.0),
                m("retries_per_sec", 1.0)
            ]
        );
        assert_eq!(
            figs(1),
            [
                m("rows_per_sec", 9.0),
                m("retention_secs", 0.75),
                m("p50_latest_ms", 0.1),
                m("p99_latest_ms", 0.4)
            ]
        );
        let f = crate::export::compare::failures(&r, &[], &[]);
        let kinds: Vec<&str> = f.iter().map(|f| f.kind.as_str()).collect();
        assert_eq!(kinds, ["check failed", "rate NOT met"], "{f:?}");
        assert!(f[1].detail.contains("50.0 of 100.0 TPS"), "{:?}", f[1]);
    }

    /// A workload's own part that compare has never heard of is read like the standard
    /// record: a run holding only it is a run, its records are steps named by their
    /// `workload` (else the part), with the figures they have; the result model's own lists
    /// are not parts.
    #[test]
    fn a_new_workloads_part_is_read() {
        let v = serde_json::json!({
            "status": "ok", "target": {"kind": "sqlite", "version": "3"},
            "warnings": [],
            "queue": [{"workload": "queue", "status": "ok", "seconds": 2.0, "tps": 8.0,
                       "checks": [{"name": "drained", "ok": false, "detail": "3 left"}]},
                      {"seconds": 1.0, "tps": 4.0}]
        });
        let r = from_json("x", &v).unwrap();
        let names: Vec<&str> = r.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["queue", "queue#2"]);
        assert_eq!(r.steps[0].figures[0].metric, "tps");
        assert_eq!(r.steps[1].figures[0].value, 4.0);
        assert_eq!(r.steps[0].failed_checks.len(), 1, "{:?}", r.steps[0]);
        let none = serde_json::json!({"status": "ok", "warnings": [{"warning": "w"}]});
        assert!(from_json("y", &none).is_err());
    }
}
