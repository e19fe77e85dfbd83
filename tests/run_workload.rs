//! `ixbench run --workload NAME`: every registered workload under `run` on SQLite gives what
//! its own command gives (the same run.json shape, the same checks, the same output lines),
//! `--size` takes the workload's own presets (a workload's notes stay in its own output: the
//! registry's unit tests, as SQLite has no insert benchmark notes), and a wrong workload name or an option of another workload is a one-line usage error (exit 2)
//! before anything starts.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{run_json, text};

/// Every key path of a JSON value (array items by their first element), without values.
fn key_paths(v: &serde_json::Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{k}");
                out.insert(p.clone());
                key_paths(x, &p, out);
            }
        }
        serde_json::Value::Array(a) => {
            if let Some(x) = a.first() {
                key_paths(x, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

/// Names and results of every check of the workload's runs in run.json (`section`: `oltp` or
/// `timeseries`).
fn checks(run: &serde_json::Value, section: &str) -> Vec<(String, bool)> {
    run[section]
        .as_array()
        .unwrap_or_else(|| panic!("no {section} in run.json"))
        .iter()
        .flat_map(|r| r["checks"].as_array().unwrap().clone())
        .map(|c| (c["name"].as_str().unwrap().to_string(), c["ok"] == true))
        .collect()
}

/// The output's lines as words with every number masked, without the lines naming the results
/// directory or the database file.
fn shape(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| !l.starts_with("results:") && !l.starts_with("ixbench "))
        .map(|l| {
            // Words with each number as one 9 (column widths follow the numbers, and a
            // figure shown to 3 significant digits has decimals or not by its size: 10.4, 104).
            let mut s = String::new();
            for c in l.split_whitespace().collect::<Vec<_>>().join(" ").chars() {
                let c = if c.is_ascii_digit() { '9' } else { c };
                if !(c == '9' && s.ends_with('9')) {
                    s.push(c);
                }
            }
            s.replace("9.9", "9")
        })
        .collect()
}

/// Run `ixbench ARGS` in `dir` on its own SQLite file, returning its output and run.json.
fn ixbench_in(dir: &Path, name: &str, args: &[&str]) -> (String, serde_json::Value) {
    let out = dir.join(name);
    let db = format!("sqlite:{}", dir.join(format!("{name}.db")).display());
    let mut all = args.to_vec();
    all.extend(["--target", &db, "--out", out.to_str().unwrap()]);
    let o = common::ixbench(&all);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{all:?}: {so}\n{se}");
    (so, run_json(&out))
}

/// `run --workload MIX` and `oltp --workload MIX` with the same options: same keys, checks,
/// output lines (numbers aside); the config says which command ran.
#[test]
fn run_workload_oltp_is_ixbench_oltp() {
    let dir = tempfile::tempdir().unwrap();
    for mix in ["oltp_read_write", "oltp_insert"] {
        let opts = [
            "--workload",
            mix,
            "--table-size",
            "500",
            "--tables",
            "2",
            "--threads",
            "2",
            "--time",
            "1",
            "--interval",
            "0.5",
        ];
        let mut a = vec!["run"];
        a.extend(opts);
        let mut b = vec!["oltp"];
        b.extend(opts);
        let (out_run, run) = ixbench_in(dir.path(), &format!("run-{mix}"), &a);
        let (out_old, old) = ixbench_in(dir.path(), &format!("oltp-{mix}"), &b);
        let (mut k1, mut k2) = (BTreeSet::new(), BTreeSet::new());
        key_paths(&run, "", &mut k1);
        key_paths(&old, "", &mut k2);
        assert_eq!(k1, k2, "{mix}: run.json keys differ");
        let c = checks(&run, "oltp");
        assert_eq!(c, checks(&old, "oltp"), "{mix}");
        assert!(
            c.iter().any(|(n, _)| n == "rows") && c.iter().all(|(_, ok)| *ok),
            "{c:?}"
        );
        assert_eq!(run["config"]["command"], "run");
        assert_eq!(old["config"]["command"], "oltp");
        assert_eq!(run["config"]["workload"], mix);
        assert_eq!(run["oltp"][0]["workload"], mix);
        assert_eq!(run["config"]["options"], old["config"]["options"], "{mix}");
        // The same lines, but for the interval lines (their count follows the timing).
        let keep = |s: &str| {
            shape(s)
                .into_iter()
                .filter(|l| !l.starts_with('['))
                .collect::<Vec<_>>()
        };
        assert_eq!(keep(&out_run), keep(&out_old), "{mix}");
    }
}

/// `run --workload timeseries` and `timeseries` with `--size smoke` (the time series' own
/// preset under both) and `--rows-per-commit`: the same keys, checks and lines.
#[test]
fn run_workload_timeseries_is_ixbench_timeseries() {
    let dir = tempfile::tempdir().unwrap();
    let opts = [
        "--size",
        "smoke",
        "--time",
        "1",
        "--rows-per-commit",
        "50",
        "--queries",
        "3",
    ];
    let mut a = vec!["run", "--workload", "timeseries"];
    a.extend(opts);
    let mut b = vec!["timeseries"];
    b.extend(opts);
    let (out_run, run) = ixbench_in(dir.path(), "run-ts", &a);
    let (out_old, old) = ixbench_in(dir.path(), "ts", &b);
    let (mut k1, mut k2) = (BTreeSet::new(), BTreeSet::new());
    key_paths(&run, "", &mut k1);
    key_paths(&old, "", &mut k2);
    assert_eq!(k1, k2, "run.json keys differ");
    let c = checks(&run, "timeseries");
    assert_eq!(c, checks(&old, "timeseries"));
    assert!(c.iter().any(|(n, _)| n == "retention_rows") && c.iter().all(|(_, ok)| *ok));
    // The preset is the time series' (20 devices), not the insert benchmark's.
    assert_eq!(run["config"]["variants"][0]["devices"], 20);
    assert_eq!(run["config"]["variants"][0]["rows_per_commit"], 50);
    assert_eq!(run["config"]["variants"], old["config"]["variants"]);
    assert_eq!(run["config"]["command"], "run");
    let keep = |s: &str| {
        shape(s)
            .into_iter()
            .filter(|l| !l.starts_with('['))
            .collect::<Vec<_>>()
    };
    assert_eq!(keep(&out_run), keep(&out_old));
}

/// The insert benchmark stays `run`'s default, with its notes; `--workload iibench` is it.
#[test]
fn run_workload_iibench_is_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run", "--size", "smoke", "--steps", "l.i0,l.x", "--rows", "2000",
    ];
    let (out, run) = ixbench_in(dir.path(), "default", &args);
    let mut with = args.to_vec();
    with.extend(["--workload", "iibench"]);
    let (out2, run2) = ixbench_in(dir.path(), "named", &with);
    common::assert_all_ok(&run);
    common::assert_all_ok(&run2);
    let names = |r: &serde_json::Value| {
        r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&run), ["l.i0", "l.x"]);
    assert_eq!(names(&run), names(&run2));
    assert_eq!(shape(&out).len(), shape(&out2).len());
}

/// A wrong name and an option of another workload: one line, exit status 2, nothing started.
#[test]
fn run_workload_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("u.db").display());
    let out = dir.path().join("out");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--workload", "oltp_red_write"],
            "did you mean oltp_read_write?",
        ),
        (&["--workload", "timeserie"], "did you mean timeseries?"),
        (&["--workload", "zzzzzzzzzzzz"], "iibench, oltp_read_write"),
        (
            &["--workload", "oltp_read_write", "--rows", "5"],
            "--rows does not apply to --workload oltp_read_write",
        ),
        (
            &["--workload", "oltp_read_only", "--devices=5"],
            "--devices does not apply to --workload oltp_read_only",
        ),
        (
            &["--workload", "timeseries", "--table-size", "5"],
            "--table-size does not apply to --workload timeseries",
        ),
        (
            &["--threads", "2"],
            "--threads does not apply to --workload iibench",
        ),
        (
            &["--workload", "iibench", "--reuse"],
            "--reuse does not apply to --workload iibench",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["run", "--target", &db, "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = common::ixbench(&args);
        let err = common::assert_one_line_error(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} started a run");
        assert!(
            !dir.path().join("u.db").exists(),
            "{args:?} opened the target"
        );
    }
}
