//! `ixbench oltp`: every sysbench transaction type on SQLite, the read_write mix on throwaway
//! PostgreSQL and MariaDB (InnoDB) servers. Each run is checked against sysbench's statement
//! mix (statements per transaction by class), the rows left in the tables against the inserts
//! and deletes counted, TPS x time against the transactions, and the interval lines against
//! the totals.

use crate::common;

use std::path::Path;

use common::{intervals, run_json, start_server, text};
use ixbench::server::ServerKind;
use ixbench::workload::oltp::{Mix, OltpConfig};

/// Run `ixbench oltp` with `extra` options and return the run's `oltp[0]` after checking
/// everything that holds for any run.
fn run_oltp(test: &str, target: &str, mix: Mix, dir: &Path, extra: &[&str]) -> serde_json::Value {
    let out = dir.join(format!("r-{}", mix.name()));
    let mut args = vec![
        "oltp",
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
        "--workload",
        mix.name(),
        "--tables",
        "2",
        "--table-size",
        "2000",
        "--threads",
        "2",
        "--time",
        "1.5",
        "--interval",
        "0.5",
    ];
    args.extend_from_slice(extra);
    let o = common::ixbench(&args);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{test} {}: {so}\n{se}", mix.name());
    let run = run_json(&out);
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    let r = run["oltp"][0].clone();
    assert_eq!(r["workload"], mix.name());
    assert_eq!(r["status"], "ok");
    for c in r["checks"].as_array().unwrap() {
        assert_eq!(c["ok"], true, "{test} {}: {c}", mix.name());
    }
    let t = &r["totals"];
    let n = |v: &serde_json::Value| v.as_u64().unwrap();
    let txns = n(&t["txns"]);
    assert!(txns > 10, "{test} {}: only {txns} transactions", mix.name());
    // sysbench's mix: statements per transaction by class.
    let (reads, writes, other) = OltpConfig::new(mix, 2, 2000).statements_per_txn();
    assert_eq!(n(&t["reads"]), txns * u64::from(reads), "{}", mix.name());
    assert_eq!(n(&t["writes"]), txns * u64::from(writes), "{}", mix.name());
    assert_eq!(n(&t["other"]), txns * u64::from(other), "{}", mix.name());
    // TPS x time = transactions; QPS likewise.
    let secs = r["seconds"].as_f64().unwrap();
    assert!((1.4..3.0).contains(&secs), "{secs}");
    let tps = r["tps"].as_f64().unwrap();
    assert!(
        (tps * secs - txns as f64).abs() < 0.5,
        "{tps} x {secs} != {txns}"
    );
    let qps = r["qps"].as_f64().unwrap();
    let stmts = u64::from(reads + writes + other) * txns;
    assert!((qps * secs - stmts as f64).abs() < 0.5);
    // The interval lines add up to the totals (in the file, not only the run's own check).
    let lines = intervals(&out);
    assert!(lines.len() >= 3, "{}", lines.len());
    let sum = |k: &str| lines.iter().map(|l| n(&l[k])).sum::<u64>();
    assert_eq!(sum("txns"), txns);
    assert_eq!(sum("queries"), stmts);
    assert_eq!(n(&lines.last().unwrap()["t_txns"]), txns);
    let tsum: f64 = lines
        .iter()
        .map(|l| l["tps"].as_f64().unwrap() * l["i_sec"].as_f64().unwrap())
        .sum();
    assert!((tsum - txns as f64).abs() < 0.5);
    assert_eq!(r["latency"]["count"].as_u64().unwrap(), txns);
    assert!(r["latency"]["p99_us"].as_u64().unwrap() > 0);
    assert!(r["client_cpu_us_per_txn"].as_f64().unwrap() > 0.0);
    // The printed summary says it as sysbench does.
    assert!(
        so.contains("transactions:") && so.contains("95th percentile:"),
        "{so}"
    );
    r
}

/// Rows in the tables after the run against what its inserts and deletes say, with the
/// numbers each mix must give.
fn check_rows(mix: Mix, r: &serde_json::Value, loaded: u64) {
    let n = |k: &str| r[k].as_u64().unwrap();
    let t = &r["totals"];
    let ins = t["inserted"].as_u64().unwrap();
    let del = t["deleted"].as_u64().unwrap();
    let txns = t["txns"].as_u64().unwrap();
    assert_eq!(n("rows_before"), loaded);
    assert_eq!(n("rows_after"), loaded + ins - del, "{}", mix.name());
    match mix {
        Mix::OltpInsert => {
            assert_eq!(ins, txns);
            assert_eq!(n("rows_after"), loaded + txns);
        }
        Mix::OltpReadWrite | Mix::OltpWriteOnly => {
            // One delete+insert of an existing id per transaction: the count stays.
            assert_eq!((ins, del), (txns, txns));
            assert_eq!(n("rows_after"), loaded);
        }
        _ => assert_eq!((ins, del), (0, 0)),
    }
}

#[test]
fn every_transaction_type_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    for mix in Mix::ALL {
        let r = run_oltp("sqlite", "sqlite", mix, dir.path(), &[]);
        check_rows(mix, &r, 4000);
        assert_eq!(r["load"]["rows"], 4000);
    }
}

/// --skip-trx drops BEGIN/COMMIT from the count; --range-selects off drops the ranges; an
/// open loop at a rate runs at that rate.
#[test]
fn options_change_the_mix_and_the_rate_holds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("skip");
    let o = common::ixbench(&[
        "oltp",
        "--out",
        out.to_str().unwrap(),
        "--tables",
        "1",
        "--table-size",
        "1000",
        "--time",
        "1",
        "--skip-trx",
        "--range-selects",
        "off",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let r = &run_json(&out)["oltp"][0];
    let t = &r["totals"];
    let txns = t["txns"].as_u64().unwrap();
    assert_eq!(t["other"], 0);
    assert_eq!(t["reads"].as_u64().unwrap(), 10 * txns);
    assert_eq!(t["writes"].as_u64().unwrap(), 4 * txns);

    let out = dir.path().join("rate");
    let o = common::ixbench(&[
        "oltp",
        "--out",
        out.to_str().unwrap(),
        "--tables",
        "1",
        "--table-size",
        "1000",
        "--workload",
        "oltp_point_select",
        "--time",
        "2",
        "--threads",
        "2",
        "--rate",
        "200",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let r = &run_json(&out)["oltp"][0];
    // Open loop: never above the rate; every intended start of the 2 s is either a
    // transaction or counted as never started (a stall near the end of a loaded machine
    // leaves some due, which is not a bug, so the count of done ones is not pinned).
    let tps = r["tps"].as_f64().unwrap();
    assert!(tps <= 205.0, "{tps}");
    let t = &r["totals"];
    let (done, due) = (
        t["txns"].as_u64().unwrap(),
        t["never_started"].as_u64().unwrap(),
    );
    assert!(done >= 200, "{t}");
    assert!((396..=404).contains(&(done + due)), "{t}");
    assert_eq!(r["rate"], 200.0);
}

/// --reuse runs on the tables of an earlier run; tables ixbench did not create are refused,
/// never dropped.
#[test]
fn reuse_and_foreign_tables() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let target = format!("sqlite:{}", db.display());
    run_oltp("reuse", &target, Mix::OltpInsert, dir.path(), &[]);
    let out = dir.path().join("again");
    let o = common::ixbench(&[
        "oltp",
        "--target",
        &target,
        "--out",
        out.to_str().unwrap(),
        "--tables",
        "2",
        "--table-size",
        "2000",
        "--time",
        "0.5",
        "--reuse",
        "--workload",
        "oltp_read_only",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let r = &run_json(&out)["oltp"][0];
    assert_eq!(r["load"]["reused"], true);
    // 4000 loaded plus the first run's inserts.
    assert!(r["rows_before"].as_u64().unwrap() > 4000);

    let foreign = dir.path().join("foreign.sqlite");
    {
        let c = rusqlite::Connection::open(&foreign).unwrap();
        c.execute_batch("CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, k INT); INSERT INTO sbtest1 VALUES (1, 1)")
            .unwrap();
    }
    let ft = format!("sqlite:{}", foreign.display());
    for extra in [&[][..], &["--reuse"][..]] {
        let out = dir.path().join(format!("f{}", extra.len()));
        let mut args = vec![
            "oltp",
            "--target",
            &ft,
            "--out",
            out.to_str().unwrap(),
            "--time",
            "0.5",
        ];
        args.extend_from_slice(extra);
        let o = common::ixbench(&args);
        let err = text(&o).1;
        assert!(!o.status.success());
        assert!(err.contains("was not created by ixbench"), "{err}");
    }
    let c = rusqlite::Connection::open(&foreign).unwrap();
    let n: i64 = c
        .query_row("SELECT COUNT(*) FROM sbtest1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1, "the foreign table was touched");
}

#[test]
fn read_write_on_postgres() {
    let Some(s) = start_server("read_write_on_postgres", ServerKind::Postgres, false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let r = run_oltp("postgres", &s.url(), Mix::OltpReadWrite, dir.path(), &[]);
    check_rows(Mix::OltpReadWrite, &r, 4000);
}

#[test]
fn read_write_on_mariadb_innodb() {
    let Some(s) = start_server("read_write_on_mariadb_innodb", ServerKind::Mariadb, false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let r = run_oltp(
        "mariadb",
        &s.url(),
        Mix::OltpReadWrite,
        dir.path(),
        &["--engine", "innodb"],
    );
    check_rows(Mix::OltpReadWrite, &r, 4000);
}

/// Eight clients on 50 rows, the hot spot of sysbench's distribution one id wide: concurrent
/// delete+insert and updates of the same ids collide (duplicate keys, deadlocks, lock waits).
/// Each collision is rolled back, counted by its code and retried, the run ends ok, and the
/// rows left are still what the committed inserts and deletes say.
fn contention(test: &str, kind: ServerKind, extra: &[&str]) {
    let Some(s) = start_server(test, kind, false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let url = s.url();
    let mut args = vec![
        "oltp",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--workload",
        "oltp_write_only",
        "--tables",
        "1",
        "--table-size",
        "50",
        "--range-size",
        "5",
        "--threads",
        "8",
        "--time",
        "3",
    ];
    args.extend_from_slice(extra);
    let o = common::ixbench(&args);
    assert!(o.status.success(), "{:?}", text(&o));
    let r = &run_json(&out)["oltp"][0];
    for c in r["checks"].as_array().unwrap() {
        assert_eq!(c["ok"], true, "{c}");
    }
    let t = &r["totals"];
    let errors = t["errors"].as_u64().unwrap();
    assert!(
        errors > 0,
        "no collision in 3 s of 8 clients on 50 rows: {t}"
    );
    assert_eq!(t["retries"], t["errors"], "every collision retried");
    let by_code: u64 = r["errors_by_code"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[1].as_u64().unwrap())
        .sum();
    assert_eq!(by_code, errors);
    let codes: Vec<String> = r["errors_by_code"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[0].as_str().unwrap().to_string())
        .collect();
    let known = ["23505", "40P01", "40001", "1213", "1205", "1062", "1020"];
    assert!(
        codes.iter().all(|c| known.contains(&c.as_str())),
        "{codes:?}"
    );
    let lines = intervals(&out);
    let sum: u64 = lines.iter().map(|l| l["errors"].as_u64().unwrap()).sum();
    assert_eq!(sum, errors);
    assert!(text(&o).0.contains("errors:"));
}

#[test]
fn collisions_are_retried_on_postgres() {
    contention(
        "collisions_are_retried_on_postgres",
        ServerKind::Postgres,
        &[],
    );
}

#[test]
fn collisions_are_retried_on_mariadb() {
    contention(
        "collisions_are_retried_on_mariadb",
        ServerKind::Mariadb,
        &["--engine", "innodb"],
    );
}

/// Bad input: one line on stderr, a non-zero exit, no results directory left behind.
#[test]
fn bad_input_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = out.to_str().unwrap();
    for (args, needle) in [
        (vec!["--time", "0"], "--time"),
        (vec!["--rate=-5"], "--rate"),
        (vec!["--rate", "0"], "--rate"),
        (vec!["--tables", "0"], "--tables"),
        (vec!["--table-size", "10"], "--range-size"),
        (vec!["--workload", "oltp_nothing"], "oltp_read_write"),
        (vec!["--table-prefix", "x"], "sbtest"),
        (vec!["--range-selects", "maybe"], "on or off"),
        (vec!["--engine", "innodb"], "MySQL/MariaDB"),
    ] {
        let mut a = vec!["oltp", "--out", o];
        a.extend_from_slice(&args);
        let r = common::ixbench(&a);
        let err = common::assert_one_line_error(&r);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} left {}", out.display());
    }
}
