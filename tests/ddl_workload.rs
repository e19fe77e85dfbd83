//! `ixbench ddl --workload iibench|timeseries`: the online ADD INDEX under the insert
//! benchmark's l.i1 load (inserts with deletes of the oldest rows) and under time-series ingest
//! with retention, on SQLite and a throwaway PostgreSQL: the DDL works on the workload's own
//! table and column (from the workload registry), the load ran its inserts and deletes through
//! it, and the ddl's checks (every committed row there, the index used and consistent) hold.
//! A wrong name is a one-line error with a "did you mean"; `--tables` of a one-table workload
//! is refused.

use crate::common;

use std::path::Path;

use common::*;
use ixbench::server::ServerKind;
use serde_json::Value;

/// 2 clients at 100 transactions/s, 2 s of baseline and of recovery, 2000 rows.
const QUICK: [&str; 12] = [
    "--threads",
    "2",
    "--rate",
    "100",
    "--baseline-seconds",
    "2",
    "--recovery-seconds",
    "2",
    "--quiet-timeout",
    "5",
    "--table-size",
    "2000",
];

/// Run `ixbench ddl --workload W` on `target`; check it and return run.json.
fn ddl_under(target: &str, out: &Path, workload: &str, table: &str, column: &str) -> Value {
    let mut a = vec![
        "ddl",
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
        "--workload",
        workload,
    ];
    a.extend_from_slice(&QUICK);
    // A smoke-sized load on a busy machine may miss its rate: NO VERDICT is not what this tests.
    a.extend_from_slice(&["--pass-on", "no-verdict"]);
    let o = ixbench(&a);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{workload}: {se}\n{so}");
    let run = run_json(out);
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    let d = &run["ddl"];
    assert_eq!(d["workload"], workload);
    assert_eq!(run["config"]["workload"], workload);
    // The index goes on the workload's own table and column.
    let stmt = d["statements"]["statements"][0].as_str().unwrap();
    assert!(
        stmt.contains(&format!("{table}_{column}_ixb")) && stmt.contains(table),
        "{workload}: {stmt}"
    );
    let points = d["points"].as_array().unwrap();
    assert!(!points.is_empty());
    for p in points {
        assert_eq!(p["ok"], true, "{workload}: {}", p["error"]);
        let checks = p["checks"].as_array().unwrap();
        let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert!(names.contains(&"row count"), "{workload}: {names:?}");
        for c in checks {
            assert_eq!(c["ok"], true, "{workload}: {c}");
        }
        assert!(p["ddl"]["seconds"].as_f64().unwrap() > 0.0);
        let i = &p["impact"];
        let txns: u64 = ["baseline", "during", "catchup", "after"]
            .iter()
            .map(|w| i[w]["txns"].as_u64().unwrap())
            .sum();
        assert!(txns > 50, "{workload}: only {txns} transactions");
    }
    // The load wrote: its interval lines count transactions in every window.
    let lines = intervals(out);
    assert!(lines.iter().any(|l| l["txns"].as_u64().unwrap_or(0) > 0));
    // Only the insert benchmark's output has its notes, and ddl prints none of them.
    assert!(
        !so.contains("note: PK:") && !so.contains("plan check:"),
        "{so}"
    );
    run
}

#[test]
fn ddl_workload_iibench_and_timeseries_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    for (w, table, column) in [
        ("iibench", "pi1", "customerid"),
        ("timeseries", "ts_metrics", "value"),
    ] {
        let db = format!("sqlite:{}", dir.path().join(format!("{w}.db")).display());
        let out = dir.path().join(w);
        ddl_under(&db, &out, w, table, column);
    }
}

#[test]
fn ddl_workload_iibench_and_timeseries_on_postgres() {
    let Some(s) = start_server(
        "ddl_workload_iibench_and_timeseries_on_postgres",
        ServerKind::Postgres,
        false,
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (w, table, column) in [
        ("iibench", "pi1", "customerid"),
        ("timeseries", "ts_metrics", "value"),
    ] {
        let out = dir.path().join(w);
        let run = ddl_under(&s.url(), &out, w, table, column);
        assert_eq!(
            run["ddl"]["statements"]["statements"][0],
            format!("CREATE INDEX CONCURRENTLY {table}_{column}_ixb ON {table} ({column})")
        );
        assert_eq!(run["ddl"]["statements"]["online"], true);
    }
}

#[test]
fn ddl_workload_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("b.db").display());
    let out = dir.path().join("out");
    for (extra, want) in [
        (vec!["--workload", "iibnech"], "did you mean iibench?"),
        (
            vec!["--workload", "timeseries", "--tables", "2"],
            "--tables does not apply to --workload timeseries",
        ),
    ] {
        let mut a = vec!["ddl", "--target", &db, "--out", out.to_str().unwrap()];
        a.extend(extra.iter().copied());
        let o = ixbench(&a);
        let err = assert_one_line_error(&o);
        assert!(err.contains(want), "{a:?}: {err}");
    }
}
