//! Several ixbench processes as parts of one run (`--client-id K --client-count N
//! --start-at T`) and `ixbench merge` of them, checked against the parts: used by
//! tests/scale.rs (one server) and tests/galera_scale.rs (one Galera cluster).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use hdrhistogram::Histogram;
use ixbench::measure::histogram::{deserialize_base64, new_hist};
use serde_json::Value;

use super::{assert_all_ok, intervals, ixbench, run_json, text};

pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn spawn(args: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ixbench starts")
}

/// Run `n` parts of one run at once (`--start-at` a few seconds ahead), each with `extra`;
/// returns their results directories.
pub fn run_parts(base: &Path, target: &str, n: u64, extra: &[&str]) -> Vec<PathBuf> {
    let targets: Vec<&str> = (0..n).map(|_| target).collect();
    run_parts_on(base, &targets, extra)
}

/// Run one part per target (part K against `targets[K]`) at once, each with `extra`; returns
/// their results directories.
pub fn run_parts_on(base: &Path, targets: &[&str], extra: &[&str]) -> Vec<PathBuf> {
    let n = targets.len();
    // Lead time for the processes to start and connect, also on a loaded machine.
    let at = format!("{:.3}", now() + 10.0);
    let mut kids = Vec::new();
    let mut dirs = Vec::new();
    for (k, target) in targets.iter().enumerate() {
        let out = base.join(format!("part{k}"));
        let mut a: Vec<String> = [
            "run",
            "--target",
            target,
            "--client-id",
            &k.to_string(),
            "--client-count",
            &n.to_string(),
            "--start-at",
            &at,
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        kids.push(spawn(&a));
        dirs.push(out);
    }
    for (k, c) in kids.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        let (out, err) = text(&o);
        assert!(o.status.success(), "part {k} failed:\n{out}\n{err}");
    }
    dirs
}

fn hist_of(summaries: &[&Value]) -> Histogram<u64> {
    let mut h = new_hist();
    for s in summaries {
        if s["count"].as_u64().unwrap() > 0 {
            h.add(deserialize_base64(s["hdr_base64"].as_str().unwrap()).unwrap())
                .unwrap();
        }
    }
    h
}

/// Merge `parts` and check the merged run against them.
pub fn merge_and_check(base: &Path, parts: &[PathBuf]) -> Value {
    let out = base.join("merged");
    let mut a = vec!["merge".to_string()];
    a.extend(parts.iter().map(|p| p.to_str().unwrap().to_string()));
    a.extend(["-o".to_string(), out.to_str().unwrap().to_string()]);
    let o = ixbench(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let (so, se) = text(&o);
    assert!(o.status.success(), "merge failed:\n{so}\n{se}");
    let runs: Vec<Value> = parts.iter().map(|p| run_json(p)).collect();
    for r in &runs {
        assert_all_ok(r);
    }
    // Each part had its own tables and seed.
    let tables: Vec<&Value> = runs
        .iter()
        .flat_map(|r| r["config"]["tables"].as_array().unwrap())
        .collect();
    let mut uniq = tables.clone();
    uniq.dedup();
    assert_eq!(uniq.len(), tables.len(), "parts shared a table: {tables:?}");
    assert_ne!(runs[0]["config"]["seed"], runs[1]["config"]["seed"]);

    let m = run_json(&out);
    let steps = assert_all_ok(&m);
    let clients: u64 = runs
        .iter()
        .map(|r| r["config"]["clients"].as_u64().unwrap())
        .sum();
    assert_eq!(m["config"]["clients"].as_u64().unwrap(), clients);
    let lines = intervals(&out);
    for (i, s) in steps.iter().enumerate() {
        let name = s["name"].as_str().unwrap();
        // Totals: the sums.
        for field in ["ops", "rows", "retries", "never_started"] {
            for k in 0..3 {
                let sum: u64 = runs
                    .iter()
                    .map(|r| r["steps"][i]["totals"][field][k].as_u64().unwrap())
                    .sum();
                assert_eq!(
                    s["totals"][field][k].as_u64().unwrap(),
                    sum,
                    "{name} {field}[{k}]"
                );
            }
        }
        // Percentiles: those of one histogram of every sample (HDR add), exactly.
        for lat in s["latency"].as_array().unwrap() {
            let op = lat["op"].as_str().unwrap();
            for what in ["latency", "service"] {
                let of: Vec<&Value> = runs
                    .iter()
                    .map(|r| {
                        &r["steps"][i]["latency"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .find(|l| l["op"] == op)
                            .unwrap()[what]
                    })
                    .collect();
                let h = hist_of(&of);
                let got = &lat[what];
                assert_eq!(
                    got["count"].as_u64().unwrap(),
                    h.len(),
                    "{name} {op} {what} count"
                );
                assert!(!h.is_empty());
                for (q, key) in [(50.0, "p50_us"), (99.0, "p99_us"), (99.9, "p999_us")] {
                    assert_eq!(
                        got[key].as_u64().unwrap(),
                        h.value_at_percentile(q),
                        "{name} {op} {what} {key}"
                    );
                }
                assert_eq!(
                    got["max_us"].as_u64().unwrap(),
                    h.max(),
                    "{name} {op} {what} max"
                );
            }
        }
        // Interval lines: on one grid by time, and they add up to the totals.
        let mine: Vec<&Value> = lines.iter().filter(|l| l["step"] == name).collect();
        if mine.is_empty() {
            continue;
        }
        let last = mine.last().unwrap();
        assert_eq!(
            last["t_ins"], s["totals"]["rows"][0],
            "{name} intervals vs totals"
        );
        assert_eq!(last["t_del"], s["totals"]["rows"][1]);
        assert_eq!(last["t_query"], s["totals"]["ops"][2]);
        let at: Vec<f64> = mine.iter().map(|l| l["at"].as_f64().unwrap()).collect();
        assert!(
            at.windows(2).all(|w| w[1] > w[0]),
            "{name}: times not increasing"
        );
        let interval = m["config"]["interval_secs"].as_f64().unwrap();
        for l in &mine[..mine.len() - 1] {
            assert!((l["i_sec"].as_f64().unwrap() - interval).abs() < 1e-6);
        }
        // The merged span covers every part's.
        let secs = s["seconds"].as_f64().unwrap();
        for r in &runs {
            assert!(secs + 1e-6 >= r["steps"][i]["seconds"].as_f64().unwrap());
        }
    }
    m
}
