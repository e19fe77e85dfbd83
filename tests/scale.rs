//! Several ixbench processes as one run (`--client-id K --client-count N --start-at T`) against
//! one database, and `ixbench merge`: merged totals are the sums, merged percentiles those of
//! one HDR histogram of every sample, interval lines on one time grid; bad parts are refused.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::{assert_all_ok, assert_one_line_error, intervals, ixbench, run_json, text};
use hdrhistogram::Histogram;
use ixbench::measure::histogram::{deserialize_base64, new_hist};
use ixbench::server::ServerKind;
use serde_json::Value;

fn now() -> f64 {
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
fn run_parts(base: &Path, target: &str, n: u64, extra: &[&str]) -> Vec<PathBuf> {
    // Lead time for the processes to start and connect, also on a loaded machine.
    let at = format!("{:.3}", now() + 10.0);
    let mut kids = Vec::new();
    let mut dirs = Vec::new();
    for k in 0..n {
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
fn merge_and_check(base: &Path, parts: &[PathBuf]) -> Value {
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

#[test]
fn sqlite_three_processes_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.sqlite");
    let target = format!("sqlite:{}", db.display());
    let parts = run_parts(
        dir.path(),
        &target,
        3,
        &[
            "--steps",
            "l.i0,l.x,qr50",
            "--rows",
            "3000",
            "--rows-per-commit",
            "50",
            "--query-seconds",
            "2",
            "--interval",
            "0.5",
        ],
    );
    let m = merge_and_check(dir.path(), &parts);
    // The time grid: l.i0 of three processes started together.
    assert_eq!(m["steps"][0]["totals"]["rows"][0].as_u64().unwrap(), 9000);
    // report works on the merged run
    let o = ixbench(&["report", dir.path().join("merged").to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
}

#[test]
fn postgres_two_processes() {
    let Some(s) = common::start_server("scale postgres", ServerKind::Postgres, false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let parts = run_parts(
        dir.path(),
        &s.url(),
        2,
        &[
            "--steps",
            "l.i0,l.x,qp100",
            "--rows",
            "5000",
            "--clients",
            "2",
            "--query-seconds",
            "2",
            "--interval",
            "0.5",
        ],
    );
    let m = merge_and_check(dir.path(), &parts);
    assert_eq!(m["config"]["clients"], 4);
    assert_eq!(m["steps"][0]["totals"]["rows"][0].as_u64().unwrap(), 20_000);
}

fn null_part(base: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = base.join(name);
    let mut a = vec![
        "run",
        "--target",
        "null",
        "--steps",
        "l.i0",
        "--rows",
        "1000",
        "--out",
        out.to_str().unwrap(),
    ];
    a.extend_from_slice(extra);
    let o = ixbench(&a);
    assert!(o.status.success(), "{:?}", text(&o));
    out
}

#[test]
fn bad_parts_and_flags_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |s: &Path| s.to_str().unwrap().to_string();
    let a0 = null_part(d, "a0", &["--client-id", "0", "--client-count", "2"]);
    let a0b = null_part(d, "a0b", &["--client-id", "0", "--client-count", "2"]);
    let a1 = null_part(d, "a1", &["--client-id", "1", "--client-count", "2"]);
    let b1 = null_part(d, "b1", &["--client-id", "1", "--client-count", "3"]);
    let c1 = null_part(
        d,
        "c1",
        &[
            "--client-id",
            "1",
            "--client-count",
            "2",
            "--rows-per-commit",
            "10",
        ],
    );
    let alone = null_part(d, "alone", &[]);
    let out = p(&d.join("m"));
    let merge = |runs: &[&PathBuf]| {
        let mut a = vec!["merge".to_string()];
        a.extend(runs.iter().map(|r| p(r)));
        a.extend(["-o".to_string(), out.clone()]);
        ixbench(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    for (runs, want) in [
        (vec![&a0, &a0b], "overlapping parts"),
        (vec![&a0, &a0], "overlapping parts"),
        (vec![&a0, &b1], "mismatched --client-count"),
        (vec![&a0, &c1], "settings differ"),
        (vec![&a0, &alone], "not part of a several-process run"),
        (vec![&a0], "at least two"),
    ] {
        let e = assert_one_line_error(&merge(&runs));
        assert!(e.contains(want), "{runs:?}: {e}");
        assert!(!d.join("m").exists());
    }
    // A missing part: count 3 with two parts given.
    let b0 = null_part(d, "b0", &["--client-id", "0", "--client-count", "3"]);
    let e = assert_one_line_error(&merge(&[&b0, &b1]));
    assert!(
        e.contains("missing parts") && e.contains("--client-id 2"),
        "{e}"
    );
    // The good pair merges.
    assert!(merge(&[&a1, &a0]).status.success());

    // Bad flags of run.
    let past = format!("{}", now() as u64 - 60);
    for (extra, want) in [
        (vec!["--client-id", "2", "--client-count", "2"], "0..1"),
        (vec!["--client-id", "0"], "--client-count"),
        (
            vec!["--client-id", "0", "--client-count", "2", "--shared-table"],
            "shared-table",
        ),
        (vec!["--start-at", past.as_str()], "in the past"),
        (vec!["--start-at", "soon"], "RFC 3339"),
    ] {
        let mut a = vec!["run", "--target", "null", "--steps", "l.i0", "--rows", "10"];
        a.extend_from_slice(&extra);
        let e = assert_one_line_error(&ixbench(&a));
        assert!(e.contains(want), "{extra:?}: {e}");
    }
}
