//! `ixbench index --workload NAME` on SQLite: the lab on a registered workload's table (the OLTP
//! mixes' sbtest1, the time series' ts_metrics): the workload loads its table, then the lab
//! times builds of that workload's secondary indexes (from the registry), each valid, and
//! drops the table at the end; `--index` builds others on the same table.

use crate::common;

use common::{run_json, text};

/// The builds' labels of a lab run, in order.
fn builds(run: &serde_json::Value) -> Vec<String> {
    run["builds"]
        .as_array()
        .expect("builds")
        .iter()
        .map(|b| b["build"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn index_workload_builds_the_workloads_indexes() {
    let dir = tempfile::tempdir().unwrap();
    for (w, table, want) in [
        ("oltp_read_write", "sbtest1", vec!["k_1"]),
        (
            "timeseries",
            "ts_metrics",
            vec!["ts_metrics_metric", "ts_metrics_device", "all"],
        ),
    ] {
        let out = dir.path().join(w);
        let db = format!("sqlite:{}", dir.path().join(format!("{w}.db")).display());
        let o = common::ixbench(&[
            "index",
            "--size",
            "smoke",
            "--rows",
            "3000",
            "--workload",
            w,
            "--target",
            &db,
            "--out",
            out.to_str().unwrap(),
        ]);
        let (so, se) = text(&o);
        assert!(o.status.success(), "{w}: {se}\n{so}");
        let run = run_json(&out);
        assert_eq!(run["status"], "ok", "{}", run["error"]);
        assert_eq!(run["config"]["own"]["source"]["workload"], w);
        assert_eq!(run["config"]["own"]["table"], table);
        let loaded = &run["config"]["workload_table"];
        assert_eq!(loaded["table"], table);
        assert!(loaded["rows"].as_u64().unwrap() >= 1000, "{loaded}");
        assert_eq!(builds(&run), want, "{w}");
        for b in run["builds"].as_array().unwrap() {
            assert_eq!(b["ok"], true, "{w}: {b}");
            assert!(b["seconds"].as_f64().unwrap() > 0.0, "{w}: {b}");
        }
        assert!(so.contains(&format!("dropped {table}")), "{so}");
        // The insert benchmark's table is not made, nor its notes printed.
        assert!(!so.contains("pi1"), "{so}");
    }
    // --index builds another index on the workload's table.
    let out = dir.path().join("user");
    let db = format!("sqlite:{}", dir.path().join("user.db").display());
    let o = common::ixbench(&[
        "index",
        "--size",
        "smoke",
        "--rows",
        "2000",
        "--workload",
        "oltp_read_only",
        "--index",
        "c_pad: c, pad",
        "--target",
        &db,
        "--out",
        out.to_str().unwrap(),
    ]);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{se}\n{so}");
    assert_eq!(builds(&run_json(&out)), ["c_pad"]);
    // A typo is a usage error.
    let o = common::ixbench(&["index", "--workload", "timeseris"]);
    let err = common::assert_one_line_error(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("did you mean timeseries?"), "{err}");
}
