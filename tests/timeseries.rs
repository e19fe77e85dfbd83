//! `ixbench timeseries`: the time-series workload on SQLite (unpartitioned), PostgreSQL and
//! MariaDB InnoDB (range x hash partitioned with retention by DROP PARTITION, and
//! unpartitioned with retention by DELETE, via --compare-partitioning). Checked: rows in the
//! table = before + inserted - removed by retention, exactly; the partitions stay bounded and
//! the oldest is dropped; the plans prune partitions for time-bounded queries and fan out for
//! the unbounded one; bad input fails with one line before anything runs.

use crate::common;

use std::path::Path;

use common::{assert_one_line_error, run_json, start_server, text};
use ixbench::server::ServerKind;

/// Small, fast shapes: 20 devices x 2 metrics, 5 ticks per partition = 200 rows per partition.
pub(crate) const SHAPE: &[&str] = &[
    "--devices",
    "20",
    "--metrics",
    "2",
    "--ticks-per-partition",
    "5",
    "--keep-partitions",
    "3",
    "--rows-per-commit",
    "10",
    "--threads",
    "2",
    "--time",
    "1.5",
    "--interval",
    "0.5",
    "--queries",
    "5",
    "--latest-n",
    "10",
];

/// Run `ixbench timeseries` and return run.json's `timeseries` runs after checking what holds
/// for any run.
fn run_ts(test: &str, target: &str, dir: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let out = dir.join("r");
    let mut args = vec![
        "timeseries",
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(SHAPE);
    args.extend_from_slice(extra);
    let o = common::ixbench(&args);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{test}: {so}\n{se}");
    assert!(so.contains("geek code: pk=(nAsc:"), "{so}");
    let run = run_json(&out);
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    let runs = run["timeseries"]
        .as_array()
        .expect("timeseries runs")
        .clone();
    let n = |v: &serde_json::Value| v.as_u64().unwrap();
    for r in &runs {
        for c in r["checks"].as_array().unwrap() {
            assert_eq!(c["ok"], true, "{test}: {c}");
        }
        // The row identity, recomputed here from the figures.
        let t = &r["totals"];
        let (ins, del) = (n(&t["inserted"]), n(&t["deleted"]));
        assert!(ins > 200, "{test}: only {ins} rows inserted");
        assert_eq!(n(&r["rows_after"]), n(&r["rows_before"]) + ins - del);
        let growth = r["growth"].as_array().unwrap();
        assert!(growth.len() >= 2, "{test}: {growth:?}");
        if extra.contains(&"none") && !extra.contains(&"--partitioning") {
            // No retention: nothing removed, the data set grows.
            assert_eq!(del, 0, "{test}");
            assert!(n(&growth[growth.len() - 1]["rows"]) > n(&growth[0]["rows"]));
            continue;
        }
        assert!(del > 0, "{test}: retention removed nothing");
        // The data set keeps its size: at most the window plus the partition being filled.
        assert!(
            n(&r["rows_after"]) <= 4 * 200,
            "{test}: {}",
            r["rows_after"]
        );
        let removed: u64 = r["retention"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| n(&e["rows"]))
            .sum();
        assert_eq!(removed, del);
        assert_eq!(r["queries"].as_array().unwrap().len(), 4);
    }
    runs
}

fn actions(r: &serde_json::Value, action: &str) -> usize {
    r["retention"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == action)
        .count()
}

fn query<'a>(r: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    r["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["query"] == name)
        .unwrap()
}

/// A partitioned run: bounded partitions, the oldest dropped, pruning in the plans.
fn check_partitioned(test: &str, r: &serde_json::Value, hash: u64) {
    assert_eq!(r["partitioning"], "range");
    let parts: Vec<u64> = r["partitions_at_end"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    // keep 3 + 2 created ahead.
    assert!(parts.len() <= 5, "{test}: {parts:?}");
    assert!(parts[0] > 0, "{test}: partition 0 never dropped: {parts:?}");
    let drops = actions(r, "drop partition");
    assert!(drops >= 1, "{test}");
    assert_eq!(actions(r, "delete"), 0);
    // Partition 0 was loaded and dropped first: the drops are of 0, 1, 2, ... in order.
    let dropped: Vec<u64> = r["retention"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "drop partition")
        .map(|e| e["partition"].as_u64().unwrap())
        .collect();
    assert_eq!(dropped, (0..drops as u64).collect::<Vec<_>>(), "{test}");
    assert_eq!(parts[0], drops as u64, "{test}: {parts:?}");
    for name in ["device_range", "metric_range", "minmax"] {
        let q = query(r, name);
        let (read, all) = (
            q["partitions_read"].as_u64().unwrap(),
            q["partitions_existing"].as_u64().unwrap(),
        );
        assert!((1..=2).contains(&read) && read < all, "{test} {name}: {q}");
    }
    let latest = query(r, "latest");
    assert_eq!(
        latest["partitions_read"], latest["partitions_existing"],
        "{test}: latest has no time bound: fan-out expected: {latest}"
    );
    if hash > 0 {
        assert_eq!(
            query(r, "device_range")["hash_partitions_read"],
            1,
            "{test}"
        );
        assert_eq!(
            query(r, "metric_range")["hash_partitions_read"],
            hash,
            "{test}"
        );
    }
}

fn check_unpartitioned(test: &str, r: &serde_json::Value) {
    assert_eq!(r["partitioning"], "none");
    assert!(r["partitions_at_end"].is_null());
    assert!(actions(r, "delete") >= 1, "{test}");
    assert_eq!(actions(r, "drop partition"), 0);
    assert!(query(r, "latest")["partitions_read"].is_null());
}

#[test]
fn sqlite_unpartitioned_with_delete_retention_and_backfill() {
    let dir = tempfile::tempdir().unwrap();
    let runs = run_ts("sqlite", "sqlite", dir.path(), &[]);
    assert_eq!(runs.len(), 1);
    check_unpartitioned("sqlite", &runs[0]);
    assert_eq!(runs[0]["geek_codes"][0][1], "(nAsc:1, nRHS:1)");
    assert_eq!(runs[0]["geek_codes"][1][1], "(nAsc:2, nRHS:1)");
    assert_eq!(runs[0]["geek_codes"][2][1], "(nAsc:20, nRHS:1)");
    // Query results are checked against the rows each range must hold (no late rows).
    assert!(runs[0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["name"] == "rows_device_range"));
    let dir = tempfile::tempdir().unwrap();
    let runs = run_ts(
        "sqlite backfill",
        "sqlite",
        dir.path(),
        &["--backfill", "0.1", "--pk", "device-first"],
    );
    check_unpartitioned("sqlite backfill", &runs[0]);
    assert_eq!(runs[0]["geek_codes"][0][1], "(nAsc:20, nRHS:1)");
    let dir = tempfile::tempdir().unwrap();
    let runs = run_ts(
        "sqlite growing",
        "sqlite",
        dir.path(),
        &["--retention", "none"],
    );
    assert!(runs[0]["retention"].as_array().unwrap().is_empty());
}

#[test]
fn bad_input_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x");
    let o = out.to_str().unwrap();
    for (args, want) in [
        (
            vec!["--target", "sqlite", "--partitioning", "range"],
            "SQLite has no native partitioning",
        ),
        (
            vec!["--target", "sqlite", "--compare-partitioning"],
            "SQLite has no native partitioning",
        ),
        (
            vec!["--target", "sqlite", "--retention", "drop"],
            "--retention drop needs --partitioning range",
        ),
        (
            vec!["--target", "sqlite", "--hash-partitions", "4"],
            "--hash-partitions needs --partitioning range",
        ),
        (
            vec!["--target", "sqlite", "--indexes", "colour"],
            "unknown index",
        ),
        (
            vec!["--target", "sqlite", "--no-such-option"],
            "--no-such-option",
        ),
        (vec!["--target", "sqlite", "--pk", "sideways"], "sideways"),
        (
            vec!["--target", "sqlite", "--rows-per-commit", "100000"],
            "--rows-per-commit",
        ),
    ] {
        let mut a = vec!["timeseries", "--out", o];
        a.extend(args.iter().copied());
        let res = common::ixbench(&a);
        let err = assert_one_line_error(&res);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(
            !out.exists(),
            "{args:?}: a results directory was left behind"
        );
    }
}

fn compare_on(test: &str, kind: ServerKind) {
    let Some(s) = start_server(test, kind, false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let runs = run_ts(
        test,
        &s.url(),
        dir.path(),
        &["--compare-partitioning", "--hash-partitions", "2"],
    );
    assert_eq!(runs.len(), 2, "{test}");
    check_partitioned(test, &runs[0], 2);
    check_unpartitioned(test, &runs[1]);
    // Server figures were measured (a server on this machine).
    for r in &runs {
        assert!(r["cpu_us_per_row"].as_f64().unwrap() > 0.0, "{test}: {r}");
    }
}

#[test]
fn postgres_partitioned_and_not() {
    compare_on("postgres_partitioned_and_not", ServerKind::Postgres);
}

#[test]
fn mariadb_innodb_partitioned_and_not() {
    compare_on("mariadb_innodb_partitioned_and_not", ServerKind::Mariadb);
}

#[test]
fn postgres_range_only_device_first() {
    let Some(s) = start_server("postgres_range_only", ServerKind::Postgres, false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let runs = run_ts(
        "postgres range",
        &s.url(),
        dir.path(),
        &[
            "--partitioning",
            "range",
            "--pk",
            "device-first",
            "--indexes",
            "metric",
        ],
    );
    check_partitioned("postgres range", &runs[0], 0);
    assert!(runs[0]["queries"][0]["plan"]
        .as_str()
        .unwrap()
        .contains("ts_metrics_p"));
}

/// Partition maintenance reached out of order, as when the client that took the first rows of
/// partition 3 is descheduled before it creates partition 5 while another client takes the
/// first rows of partition 4 (CI once failed with `no partition of relation "ts_metrics"
/// found for row` this way): entering 4 first creates 5 and 6 and drops 0 and 1, entering 3
/// afterwards has nothing left to do. On PostgreSQL (range x hash partitions) and MariaDB.
#[test]
fn partition_maintenance_out_of_order_leaves_no_partition_missing() {
    for kind in [ServerKind::Postgres, ServerKind::Mariadb] {
        let test = "partition_maintenance_out_of_order_leaves_no_partition_missing";
        let Some(s) = start_server(test, kind, false) else {
            return;
        };
        use ixbench::workload::timeseries::{PkOrder, Retention, TimeSeries, TsConfig};
        let cfg = TsConfig {
            devices: 4,
            metrics: 2,
            rows_per_commit: 8,
            ticks_per_partition: 5,
            keep_partitions: 3,
            partitioned: true,
            hash_partitions: 2,
            pk: PkOrder::TimeFirst,
            indexes: vec!["metric".into()],
            backfill: 0.0,
            retention: Retention::Drop,
            latest_n: 10,
        };
        let dbms = ixbench::dbms::open(
            &ixbench::dbms::TargetSpec::parse(&s.url_with_password()).unwrap(),
            &ixbench::dbms::TargetOptions::default(),
        )
        .unwrap();
        let ts = TimeSeries::new(cfg, dbms.as_ref(), 1).unwrap();
        let mut conn = dbms.connect().unwrap();
        let conn = conn.as_mut();
        ts.create_table(conn).unwrap();
        // The load makes keep + 2 partitions: 0..=4.
        assert_eq!(
            ts.partitions(conn).unwrap(),
            vec![0, 1, 2, 3, 4],
            "{kind:?}"
        );
        // (partition entered, the partitions after it)
        for (p, want) in [
            (4, [2, 3, 4, 5, 6]),
            (3, [2, 3, 4, 5, 6]),
            (5, [3, 4, 5, 6, 7]),
        ] {
            ts.enter_partition(conn, p).unwrap();
            assert_eq!(ts.partitions(conn).unwrap(), want, "{kind:?} after {p}");
        }
        conn.execute(&format!(
            "DROP TABLE {}",
            ixbench::workload::timeseries::TABLE
        ))
        .unwrap();
    }
}
