//! `ixbench ddl` on SQLite, PostgreSQL, MariaDB InnoDB and MyRocks (throwaway servers), at small
//! sizes: seed 003's three test plans, the write dip a blocking build causes (plain CREATE
//! INDEX on PostgreSQL, MyRocks's LOCK=SHARED) and its absence with CREATE INDEX CONCURRENTLY,
//! a 2x2 knob grid, a UNIQUE build that fails on duplicates (its INVALID index reported and
//! dropped), CREATE INDEX CONCURRENTLY waiting for an old snapshot and then a server restart,
//! an ALTER behind a metadata lock that times out and is retried while the load piles up
//! behind it. Every successful run: windows that add up to the run, the timeline in
//! intervals.ndjson, the checks after the DDL.
//!
//! Without the server binaries a test prints `SKIPPED <name>: <why>` and returns; with
//! `CI=true` it fails instead.

use crate::common;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use common::sql::SqlExt;
use common::*;
use ixbench::server::ServerKind;
use serde_json::Value;

/// Small, quick defaults: 2 threads at a fixed 100 TPS (no probe), 2 s of baseline and of
/// recovery.
pub(crate) const QUICK: [&str; 10] = [
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
];

fn ddl(target: &str, out: &Path, args: &[&str]) -> (Output, Value) {
    let mut a = vec!["ddl", "--target", target, "--out", out.to_str().unwrap()];
    a.extend_from_slice(args);
    let o = ixbench(&a);
    let run = run_json(out);
    (o, run)
}

/// The run ended ok; every point ok with its checks; the windows of each point add up to its
/// timeline (seconds and transactions); the timeline is in intervals.ndjson with the DDL's
/// start and end marked. Returns the points.
fn check_ok(o: &Output, run: &Value, out: &Path) -> Vec<Value> {
    let (stdout, stderr) = text(o);
    // A busy machine may make a baseline miss its load: NO VERDICT, exit 5; a REGRESSION exits
    // 3 under --fail-on-regression.
    let has = |st: &str| {
        run["ddl"]["points"]
            .as_array()
            .is_some_and(|v| v.iter().any(|p| p["state"] == st))
    };
    assert!(
        match o.status.code() {
            Some(0) => true,
            Some(3) => has("regression"),
            Some(5) => has("no_verdict"),
            _ => false,
        },
        "exit {:?}: {stderr}\n{stdout}",
        o.status
    );
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    // Every point has a state on the one verdict model; the run's is the worst.
    let states = [
        "failed",
        "regression",
        "no_verdict",
        "improved",
        "no_change",
    ];
    let worst = run["ddl"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let st = p["state"]
                .as_str()
                .unwrap_or_else(|| panic!("no state: {p}"));
            states.iter().position(|s| *s == st).unwrap()
        })
        .min()
        .unwrap();
    assert_eq!(run["ddl"]["state"], states[worst]);
    let points = run["ddl"]["points"].as_array().unwrap().clone();
    assert!(!points.is_empty());
    let lines = intervals(out);
    for (n, p) in points.iter().enumerate() {
        assert_eq!(p["ok"], true, "point {n}: {}", p["error"]);
        let checks = p["checks"].as_array().unwrap();
        assert!(!checks.is_empty(), "point {n} has no checks");
        for c in checks {
            assert_eq!(c["ok"], true, "point {n}: {c}");
        }
        let tl = p["timeline"].as_array().unwrap();
        let i = &p["impact"];
        let windows = ["baseline", "during", "catchup", "after"];
        let secs: f64 = windows.iter().map(|w| f(&i[w]["seconds"])).sum();
        let tl_secs: f64 = tl.iter().map(|r| f(&r["i_sec"])).sum();
        assert!(
            (secs - tl_secs).abs() < 1e-6,
            "point {n}: windows {secs} s vs timeline {tl_secs} s"
        );
        let txns: u64 = windows.iter().map(|w| i[w]["txns"].as_u64().unwrap()).sum();
        let tl_txns: u64 = tl.iter().map(|r| r["txns"].as_u64().unwrap()).sum();
        assert_eq!(txns, tl_txns, "point {n}: windows vs timeline transactions");
        assert!(txns > 0);
        assert!(f(&i["baseline"]["seconds"]) > 0.0);
        // The interval the point ran at: each row ends at its boundary or later (a busy
        // machine wakes the reporter late), never before; the rows follow each other.
        let iv = f(&p["interval_s"]);
        for (k, r) in tl.iter().enumerate() {
            let end = f(&r["t"]) + f(&r["i_sec"]);
            assert!(end >= (k + 1) as f64 * iv - 1e-6, "row {k} of {iv} s: {r}");
            if let Some(next) = tl.get(k + 1) {
                assert!((f(&next["t"]) - end).abs() < 1e-6, "{r} then {next}");
            }
        }
        // Whether the load kept its rate without the DDL is known, and said first when not
        // (a busy machine may make it miss); an open loop has a backlog in every row.
        let rate_ok = i["rate_ok"].as_bool().expect("rate_ok");
        if !rate_ok {
            assert!(stdout.contains("   NO VERDICT: "), "{stdout}");
        }
        assert_eq!(i["no_verdict"].as_array().unwrap().is_empty(), rate_ok);
        assert!(tl.iter().all(|r| r["backlog"].is_u64()), "point {n}");
        // The rule (RATE_RULE) on what was stored: a rate said met was met, with no standing
        // backlog (the level, 90th percentile nearest rank of the baseline's intervals' ends,
        // at most the starts due in 0.1 s, at least 2) and none left at its end.
        let offered = f(&p["offered_tps"]);
        let mut base: Vec<u64> = tl
            .iter()
            .filter(|r| r["window"] == "baseline")
            .map(|r| r["backlog"].as_u64().unwrap())
            .collect();
        base.sort_unstable();
        let level = match base.len() {
            0 => 0,
            k => base[((0.9 * k as f64).ceil() as usize).clamp(1, k) - 1],
        };
        if rate_ok {
            assert!(
                f(&i["baseline"]["tps"]) >= 0.95 * offered,
                "point {n}: rate met at {} of {offered}",
                i["baseline"]
            );
            assert!(
                level as f64 <= (0.1 * offered).max(2.0),
                "point {n}: rate met with a standing backlog of {level} at {offered} TPS"
            );
        } else if level as f64 > (0.1 * offered).max(2.0) {
            assert!(stdout.contains("backlog stood at"), "{stdout}");
        }
        assert!(i["backlog"]["peak"].is_u64(), "{}", i["backlog"]);
        let marks: Vec<String> = tl
            .iter()
            .flat_map(|r| r["marks"].as_array().unwrap().iter())
            .map(|m| m.as_str().unwrap().to_string())
            .collect();
        assert!(marks.contains(&"DDL start".to_string()), "{marks:?}");
        assert!(marks.contains(&"DDL end".to_string()), "{marks:?}");
        let stored = lines.iter().filter(|l| l["point"] == n).count();
        assert_eq!(stored, tl.len(), "point {n}: intervals.ndjson");
        let d = &p["ddl"];
        assert!(d["seconds"].as_f64().unwrap() > 0.0);
        assert_eq!(d["attempts"], 1);
    }
    for f in ["ddl.csv", "ddl.md", "ddl_windows.csv"] {
        assert!(out.join(f).exists(), "{f}");
    }
    points
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn sqlite_three_plans() {
    let dir = tempfile::tempdir().unwrap();
    // Plan 1 with the probe (the offered rate is 70% of it).
    let out = dir.path().join("p1");
    let (o, run) = ddl(
        "sqlite",
        &out,
        &[
            "--table-size",
            "3000",
            "--threads",
            "2",
            "--probe-seconds",
            "2",
            "--baseline-seconds",
            "2",
            "--recovery-seconds",
            "2",
        ],
    );
    let points = check_ok(&o, &run, &out);
    let d = &run["ddl"];
    assert_eq!(d["plan"], "writes-indexed-column");
    assert_eq!(d["workload"], "oltp_read_write");
    assert_eq!(d["dialect"], "SQLite");
    let probe = f(&d["probe"]["tps"]);
    assert!(probe > 0.0);
    assert!((f(&d["rate"]) - 0.7 * probe).abs() < 1e-6 * probe);
    assert_eq!(f(&points[0]["offered_tps"]), f(&d["rate"]));
    assert_eq!(
        d["statements"]["statements"][0],
        "CREATE INDEX sbtest1_c_ixb ON sbtest1 (c)"
    );
    assert_eq!(d["statements"]["online"], false);
    let (stdout, _) = text(&o);
    assert!(stdout.contains("BLOCKING"), "{stdout}");
    assert!(stdout.contains("baseline (no DDL)"), "{stdout}");
    for (plan, workload, column) in [
        ("read-only", "oltp_read_only", "c"),
        ("unrelated-column", "oltp_read_write", "pad"),
    ] {
        let out = dir.path().join(plan);
        let mut a = vec!["--plan", plan, "--table-size", "3000"];
        a.extend_from_slice(&QUICK);
        let (o, run) = ddl("sqlite", &out, &a);
        check_ok(&o, &run, &out);
        assert_eq!(run["ddl"]["workload"], workload);
        assert_eq!(
            run["ddl"]["request"]["indexes"][0]["columns"][0], column,
            "{plan}"
        );
    }
}

/// Plain CREATE INDEX blocks writes: a second with far fewer transactions and a far higher
/// p99 than the baseline, sessions waiting behind the DDL. CREATE INDEX CONCURRENTLY on the
/// same table: nobody waits behind it.
#[test]
fn postgres_blocking_dip_and_online() {
    let Some(s) = start_server(
        "postgres_blocking_dip_and_online",
        ServerKind::Postgres,
        false,
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("blocking");
    // Three indexes, one after the other, each holding writes off.
    let mut a = vec![
        "--lock",
        "blocking",
        "--table-size",
        "300000",
        "--columns",
        "c,pad,c+pad",
        // A slower build (external sorts, no parallel workers), so the block usually lasts
        // long enough for a per-second dip (see assert_blocked).
        "--knob",
        "maintenance_work_mem=1MB",
        "--knob",
        "max_parallel_maintenance_workers=0",
    ];
    a.extend_from_slice(&QUICK);
    let (o, run) = ddl(&s.url(), &out, &a);
    let p = &check_ok(&o, &run, &out)[0];
    let d = &run["ddl"];
    assert_eq!(d["statements"]["online"], false);
    assert!(d["statements"]["lock"]
        .as_str()
        .unwrap()
        .contains("writes wait"));
    assert_blocked(p, 3);
    // The timeline shows the build's phase from pg_stat_progress_create_index.
    let phases: Vec<&str> = p["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["phase"].as_str())
        .collect();
    assert!(phases.iter().any(|x| x.contains("sbtest1_")), "{phases:?}");
    // Online, on the same table.
    let out = dir.path().join("online");
    let mut a = vec!["--reuse", "--lock", "online", "--columns", "c,pad,c+pad"];
    a.extend_from_slice(&QUICK);
    let (o, run) = ddl(&s.url(), &out, &a);
    let p = &check_ok(&o, &run, &out)[0];
    assert_eq!(run["ddl"]["statements"]["online"], true);
    assert_eq!(
        run["ddl"]["statements"]["statements"][0],
        "CREATE INDEX CONCURRENTLY sbtest1_c_ixb ON sbtest1 (c)"
    );
    assert_eq!(p["ddl"]["max_blocked_sessions"], 0, "{}", p["ddl"]);
    for c in p["checks"].as_array().unwrap() {
        if c["name"] == "valid" {
            assert!(c["detail"].as_str().unwrap().contains("indisvalid = true"));
        }
    }
}

/// A 2x2 grid of session knobs: four points, one row each after the baseline row. Then a
/// UNIQUE index on `k` (which has duplicates): the DDL fails with 23505, the INVALID index
/// CREATE INDEX CONCURRENTLY left is reported and dropped, the timeline is kept, exit 1 with
/// one line; with --on-error continue, exit 0 and the failure in the results.
#[test]
fn postgres_knob_grid_and_failed_unique_build() {
    let Some(s) = start_server(
        "postgres_knob_grid_and_failed_unique_build",
        ServerKind::Postgres,
        false,
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("grid");
    let mut a = vec![
        "--table-size",
        "20000",
        "--knob",
        "maintenance_work_mem=8MB,64MB",
        "--knob",
        "max_parallel_maintenance_workers=0,2",
        "--baseline-seconds",
        "1",
    ];
    a.extend_from_slice(&QUICK[..4]);
    a.extend_from_slice(&["--recovery-seconds", "1"]);
    let (o, run) = ddl(&s.url(), &out, &a);
    let points = check_ok(&o, &run, &out);
    assert_eq!(points.len(), 4);
    assert_eq!(
        points[3]["knobs"],
        serde_json::json!([
            ["maintenance_work_mem", "64MB"],
            ["max_parallel_maintenance_workers", "2"]
        ])
    );
    let md = std::fs::read_to_string(out.join("ddl.md")).unwrap();
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 2 + 5, "{md}"); // header, rule, baseline, 4 points
    assert!(rows[2].contains("baseline (no DDL)"), "{md}");
    assert!(rows[0].contains("maintenance_work_mem"), "{md}");

    // UNIQUE on k: duplicates.
    let out = dir.path().join("unique");
    let mut a = vec!["--reuse", "--columns", "k", "--unique"];
    a.extend_from_slice(&QUICK);
    let (o, run) = ddl(&s.url(), &out, &a);
    let err = assert_one_line_error(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("23505"), "{err}");
    assert_eq!(run["status"], "failed");
    let p = &run["ddl"]["points"][0];
    assert_eq!(p["ok"], false);
    assert_eq!(p["ddl"]["error_code"], "23505");
    assert_eq!(
        p["ddl"]["invalid_dropped"],
        serde_json::json!(["sbtest1_k_ixb"])
    );
    assert!(p["timeline"].as_array().unwrap().len() >= 3);
    assert!(intervals(&out).len() >= 3, "the timeline is kept");
    let mut c = crate::common::sql::connect(&s.url_with_password()).unwrap();
    let left: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'sbtest1_k_ixb'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "the INVALID index was dropped");
    // --on-error continue: recorded, the point FAILED: exit 4 (0 with --pass-on failed).
    let out = dir.path().join("continue");
    a.extend_from_slice(&["--on-error", "continue"]);
    let (o, run) = ddl(&s.url(), &out, &a);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(4), "{stderr}\n{stdout}");
    assert_eq!(run["status"], "ok");
    assert_eq!(run["ddl"]["points"][0]["ok"], false);
    assert_eq!(run["ddl"]["points"][0]["state"], "failed");
    assert_eq!(run["ddl"]["state"], "failed");
    assert!(run["ddl"]["points"][0]["error"]
        .as_str()
        .unwrap()
        .contains("23505"));
    assert!(stdout.contains("state: FAILED ("), "{stdout}");
    let md = std::fs::read_to_string(out.join("ddl.md")).unwrap();
    assert!(md.contains("| FAILED"), "{md}");
    let out = dir.path().join("pass");
    a.extend_from_slice(&["--pass-on", "failed"]);
    let (o, run) = ddl(&s.url(), &out, &a);
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(run["ddl"]["state"], "failed");
}

/// CREATE INDEX CONCURRENTLY waits for a transaction that holds an old snapshot: the timeline
/// shows the wait; with --ddl-timeout it is cancelled. Then the server restarts under the DDL and the load: one line, exit 1,
/// the timeline kept, and the INVALID index the interrupted build left dropped.
#[test]
fn postgres_cic_waits_for_old_snapshot_then_restart() {
    let Some(mut s) = start_server(
        "postgres_cic_waits_for_old_snapshot_then_restart",
        ServerKind::Postgres,
        false,
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("load");
    let mut a = vec!["--table-size", "5000"];
    a.extend_from_slice(&QUICK);
    let (o, run) = ddl(&s.url(), &out, &a);
    check_ok(&o, &run, &out);
    let mut blocker = crate::common::sql::connect(&s.url_with_password()).unwrap();
    blocker
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM sbtest1")
        .unwrap();
    // Cancelled after --ddl-timeout: error 57014, exit 1. Once the cancel is in the timeline
    // the old transaction ends, so ixbench can drop the INVALID index the build left.
    let out = dir.path().join("cancel");
    let url = s.url();
    let args = [
        "ddl",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--reuse",
        "--ddl-timeout",
        "2",
        "--threads",
        "2",
        "--rate",
        "50",
        "--baseline-seconds",
        "1",
        "--recovery-seconds",
        "1",
    ];
    let child = spawn_until_intervals(&args, &out, "DDL cancelled", 1, Duration::from_secs(90));
    blocker.batch_execute("COMMIT").unwrap();
    let o = child.wait_with_output().unwrap();
    let err = assert_one_line_error(&o);
    assert!(err.contains("57014"), "{err}");
    let run = run_json(&out);
    let p = &run["ddl"]["points"][0];
    assert_eq!(p["ddl"]["cancelled"], true);
    assert_eq!(p["ddl"]["error_code"], "57014");
    assert_eq!(
        p["ddl"]["invalid_dropped"],
        serde_json::json!(["sbtest1_c_ixb"])
    );

    blocker
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM sbtest1")
        .unwrap();
    let out = dir.path().join("restart");
    let url = s.url();
    let args = [
        "ddl",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--reuse",
        "--threads",
        "2",
        "--rate",
        "50",
        "--baseline-seconds",
        "1",
        "--recovery-seconds",
        "1",
    ];
    let child = spawn_until_intervals(&args, &out, "during", 3, Duration::from_secs(90));
    let waits: Vec<String> = intervals(&out)
        .iter()
        .filter_map(|l| l["waits"].as_str().map(String::from))
        .collect();
    assert!(
        waits.iter().any(|w| w.contains("older transactions")),
        "{waits:?}"
    );
    let settings = s.server.settings.clone();
    s.server.restart_with(&settings).unwrap();
    drop(blocker);
    let o = child.wait_with_output().unwrap();
    let err = assert_one_line_error(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("the DDL failed"), "{err}");
    let run = run_json(&out);
    assert_eq!(run["status"], "failed");
    let p = &run["ddl"]["points"][0];
    assert!(p["timeline"].as_array().unwrap().len() >= 3);
    let lw = p["ddl"]["lock_waits"].as_array().unwrap();
    assert!(
        lw.iter()
            .any(|w| w["what"].as_str().unwrap().contains("older transactions")),
        "{lw:?}"
    );
    assert_eq!(
        p["ddl"]["invalid_dropped"],
        serde_json::json!(["sbtest1_c_ixb"]),
        "{}\n{}",
        p["ddl"],
        p["checks"]
    );

    // The same restart with --on-error continue: the clients reconnect and the load goes on
    // after the restart; the failed DDL is in the results: the point FAILED, exit 4.
    let mut blocker = crate::common::sql::connect(&s.url_with_password()).unwrap();
    blocker
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM sbtest1")
        .unwrap();
    let out = dir.path().join("continue");
    let mut args: Vec<&str> = args.to_vec();
    let o_ = out.to_str().unwrap().to_string();
    args[4] = &o_;
    args.extend_from_slice(&["--on-error", "continue"]);
    // Time for the server to come back within the recovery window.
    let r = args
        .iter()
        .position(|a| *a == "--recovery-seconds")
        .unwrap();
    args[r + 1] = "5";
    let child = spawn_until_intervals(&args, &out, "during", 2, Duration::from_secs(90));
    s.server.restart_with(&settings).unwrap();
    drop(blocker);
    let o = child.wait_with_output().unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(4), "{stderr}\n{stdout}");
    let run = run_json(&out);
    let p = &run["ddl"]["points"][0];
    assert_eq!(p["ok"], false);
    assert_eq!(p["state"], "failed");
    assert!(
        p["error"].as_str().unwrap().contains("the DDL failed"),
        "{}",
        p["error"]
    );
    assert!(p["reconnects"].as_u64().unwrap() >= 1, "{p}");
    let after: u64 = p["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["window"] == "after" || r["window"] == "catch-up")
        .map(|r| r["txns"].as_u64().unwrap())
        .sum();
    assert!(after > 0, "the load went on after the restart");
    let errors = p["impact"]["during"]["errors"].as_object().unwrap();
    assert!(
        !errors.is_empty(),
        "the restart's errors are counted by code"
    );
}

/// InnoDB, read-only plan, online (LOCK=NONE). Then an open transaction holds the table's
/// metadata lock: the ALTER waits for it, the load piles up behind the ALTER, the ALTER
/// times out (lock_wait_timeout=1 on its session, error 1205) and is retried until the
/// transaction ends.
#[test]
fn mariadb_innodb_read_only_and_metadata_lock_retry() {
    let Some(s) = start_server(
        "mariadb_innodb_read_only_and_metadata_lock_retry",
        ServerKind::Mariadb,
        false,
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ro");
    let mut a = vec![
        "--engine",
        "innodb",
        "--plan",
        "read-only",
        "--table-size",
        "20000",
    ];
    a.extend_from_slice(&QUICK);
    let (o, run) = ddl(&s.url(), &out, &a);
    check_ok(&o, &run, &out);
    assert_eq!(run["ddl"]["dialect"], "MariaDB InnoDB");
    assert_eq!(
        run["ddl"]["statements"]["statements"][0],
        "ALTER TABLE sbtest1 ADD INDEX sbtest1_c_ixb (c), ALGORITHM=INPLACE, LOCK=NONE"
    );

    let mut blocker = crate::common::sql::connect(&s.url_with_password()).unwrap();
    blocker
        .query_drop("START TRANSACTION")
        .and_then(|_| blocker.query_drop("SELECT COUNT(*) FROM sbtest1"))
        .unwrap();
    let out = dir.path().join("mdl");
    let url = s.url();
    let args = [
        "ddl",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--engine",
        "innodb",
        "--reuse",
        "--threads",
        "2",
        "--rate",
        "50",
        "--baseline-seconds",
        "1",
        "--recovery-seconds",
        "2",
        "--knob",
        "lock_wait_timeout=1",
        "--ddl-retries",
        "20",
        // the blocked DDL may leave no after window to judge (NO VERDICT, exit 5): this test
        // is about the retries
        "--pass-on",
        "no-verdict",
    ];
    let child = spawn_until_intervals(&args, &out, "during", 4, Duration::from_secs(90));
    blocker.query_drop("COMMIT").unwrap();
    let o = child.wait_with_output().unwrap();
    let run = run_json(&out);
    let p = &run["ddl"]["points"][0];
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}\n{stdout}");
    assert_eq!(p["ok"], true, "{}", p["error"]);
    let d = &p["ddl"];
    assert!(d["attempts"].as_u64().unwrap() >= 2, "{d}");
    assert!(
        d["attempt_errors"][0].as_str().unwrap().starts_with("1205"),
        "{d}"
    );
    assert!(
        d["lock_waits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["what"].as_str().unwrap().contains("metadata lock")),
        "{d}"
    );
    assert!(d["max_blocked_sessions"].as_u64().unwrap() >= 1, "{d}");
    // The pile-up: transactions waited behind the ALTER.
    // The pile-up: transactions waited behind the ALTER's metadata lock request, each attempt
    // for lock_wait_timeout (1 s); latency counts from the intended start, so the worst
    // second's p99 is a good part of that second.
    let i = &p["impact"];
    let (base, worst) = (f(&i["baseline"]["p99_us"]), f(&i["worst_p99_us"][1]));
    assert!(
        worst >= 2.0 * base && worst >= 400_000.0,
        "no p99 spike: {worst} vs {base}"
    );
}

/// MyRocks's in-place ADD INDEX blocks writes (LOCK=SHARED, and an online request says so):
/// the dip is visible; the index is consistent and used afterwards.
#[test]
fn myrocks_blocking_dip() {
    let Some(s) = start_server("myrocks_blocking_dip", ServerKind::Mariadb, true) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rocks");
    let mut a = vec![
        "--engine",
        "rocksdb",
        "--plan",
        "unrelated-column",
        "--table-size",
        "200000",
        "--columns",
        "pad,c",
    ];
    a.extend_from_slice(&QUICK);
    let (o, run) = ddl(&s.url(), &out, &a);
    let p = &check_ok(&o, &run, &out)[0];
    let d = &run["ddl"];
    assert_eq!(d["dialect"], "MyRocks");
    assert_eq!(d["statements"]["online"], false);
    assert!(d["statements"]["notes"][0]
        .as_str()
        .unwrap()
        .contains("refuses LOCK=NONE"));
    let statements = d["statements"]["statements"].as_array().unwrap().len();
    assert_blocked(p, statements);
}

/// The marks a DDL that holds writes off leaves on an open-loop load of `statements`
/// statements run back to back: the worst second's p99 well above the baseline's and at
/// least a good part of one statement's time (transactions meant to start during a statement
/// wait for its end; latency counts from the intended start), and, when the DDL lasted 2 s or
/// more, a second inside it with far fewer transactions than the baseline (at most one per
/// client slips through between two statements). A shorter block is caught up within the
/// second it ends in, so no per-second dip is certain then.
fn assert_blocked(p: &Value, statements: usize) {
    let i = &p["impact"];
    let ddl_s = f(&p["ddl"]["seconds"]);
    let (base_tps, worst_tps) = (f(&i["baseline"]["tps"]), f(&i["worst_tps"][1]));
    // The transactions a block holds complete once it ends: in the DDL's last interval, or
    // (when it ended at an interval's edge) in the catch-up or after window (seen in CI: worst
    // TPS 0 inside the DDL, its own intervals' p99 1.6 ms). The spike is the highest of them.
    let base_p99 = f(&i["baseline"]["p99_us"]);
    let worst_p99 = [
        i["worst_p99_us"][1].as_f64(),
        i["catchup"]["p99_us"].as_f64(),
        i["after"]["p99_us"].as_f64(),
    ]
    .into_iter()
    .flatten()
    .fold(0.0, f64::max);
    eprintln!(
        "blocking DDL {ddl_s:.2} s ({statements} statements): worst TPS {worst_tps} vs \
         baseline {base_tps}, worst p99 {worst_p99} us vs {base_p99} us"
    );
    let per_statement = ddl_s / statements.max(1) as f64;
    assert!(
        worst_p99 >= 2.0 * base_p99 && worst_p99 >= 0.25 * per_statement * 1e6,
        "no p99 spike: worst {worst_p99} us vs baseline {base_p99} us in a {ddl_s:.2} s DDL"
    );
    if ddl_s >= 2.0 {
        assert!(
            worst_tps <= 0.75 * base_tps,
            "no TPS dip in a {ddl_s:.2} s blocking DDL: worst {worst_tps} vs baseline {base_tps}"
        );
    }
    assert!(
        p["ddl"]["max_blocked_sessions"].as_u64().unwrap() >= 1,
        "{}",
        p["ddl"]
    );
}

/// Bad input: one line, exit status 2 for what clap refuses, 1 for the rest, and no results
/// directory left behind for input refused before anything ran.
#[test]
fn bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o_ = out.to_str().unwrap();
    for (args, code, says) in [
        (vec!["--workload", "oltp_nope"], 1, "unknown --workload"),
        (vec!["--columns", "c;drop"], 1, "--columns"),
        (vec!["--columns", "c,c"], 1, "twice"),
        (vec!["--knob", "x"], 1, "--knob"),
        (vec!["--rate", "0"], 2, "--rate"),
        (vec!["--rate-fraction", "1.5"], 2, "--rate-fraction"),
        (vec!["--ddl", "truncate"], 2, "--ddl"),
        (vec!["--plan", "other"], 2, "--plan"),
        (vec!["--recovery-hold", "soon"], 2, "--recovery-hold"),
        (
            vec!["--recovery-seconds", "5", "--recovery-hold", "6"],
            1,
            "--recovery-hold 6 is longer than --recovery-seconds 5",
        ),
    ] {
        let mut a = vec!["ddl", "--target", "sqlite", "--out", o_];
        a.extend_from_slice(&args);
        let o = ixbench(&a);
        let err = assert_one_line_error(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} left {}", out.display());
    }
    // An unknown knob is refused before anything is loaded.
    let o = ixbench(&[
        "ddl",
        "--target",
        "sqlite",
        "--out",
        o_,
        "--knob",
        "no_such_pragma=1,2",
    ]);
    let err = assert_one_line_error(&o);
    assert!(err.contains("no_such_pragma"), "{err}");
    let run = run_json(&out);
    assert_eq!(run["status"], "failed");
    assert!(run["ddl"].is_null(), "nothing ran: {}", run["ddl"]);
}

/// The rows of a point's timeline.
fn rows(p: &Value) -> Vec<Value> {
    p["timeline"].as_array().unwrap().clone()
}

/// A load offered far above what the machine does (50,000 TPS from two SQLite clients) cannot
/// keep its rate even without the DDL: the before/during/after comparison is no verdict on
/// the DDL. The text says so first, on its own line, before the point's figures; run.json has
/// it with no during/baseline ratio; the tables have it in a column; report.html in its
/// warnings; `compare` lists it as a missed rate. The backlog grows through the baseline.
#[test]
fn a_load_that_cannot_keep_its_rate_is_no_verdict_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let db = format!("sqlite:{}", dir.path().join("x.db").display());
    let mut args = DDL_MISSED_RATE.to_vec();
    args.extend(["--quiet-timeout", "5"]);
    let (o, run) = ddl(&db, &out, &args);
    let (stdout, stderr) = text(&o);
    // NO VERDICT on the one verdict model: exit 5, said in text and JSON.
    assert_eq!(o.status.code(), Some(5), "{stderr}\n{stdout}");
    assert_eq!(run["status"], "ok");
    let p = &run["ddl"]["points"][0];
    assert_eq!(p["state"], "no_verdict", "{}", p["state_why"]);
    assert!(
        p["state_why"]
            .as_str()
            .unwrap()
            .contains("the baseline missed its load"),
        "{}",
        p["state_why"]
    );
    assert_eq!(run["ddl"]["state"], "no_verdict");
    assert!(
        stdout.contains("state: NO VERDICT (the baseline missed its load"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ixbench: ddl: NO VERDICT (point 1): exit status 5"),
        "{stdout}"
    );
    let i = &p["impact"];
    assert_eq!(i["rate_ok"], false, "{i}");
    let why = i["no_verdict"].as_array().unwrap();
    assert!(
        why.iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("did not keep its offered rate")),
        "{why:?}"
    );
    assert!(i["tps_ratio"].is_null() && i["p99_ratio"].is_null(), "{i}");
    // The backlog grew through the baseline: thousands behind at its end.
    let base: Vec<u64> = rows(p)
        .iter()
        .filter(|r| r["window"] == "baseline")
        .map(|r| r["backlog"].as_u64().unwrap())
        .collect();
    assert!(base.len() >= 2, "{base:?}");
    assert!(
        base.last().unwrap() > &base[0] && *base.last().unwrap() >= 10_000,
        "{base:?}"
    );
    // The text: its own line, before the point's figures.
    let lines: Vec<&str> = stdout.lines().collect();
    let nv = lines
        .iter()
        .position(|l| l.starts_with("   NO VERDICT: "))
        .unwrap_or_else(|| panic!("no NO VERDICT line:\n{stdout}"));
    let figures = lines
        .iter()
        .position(|l| l.starts_with("   DDL ") || l.starts_with("   FAILED"))
        .unwrap();
    assert!(nv < figures, "{stdout}");
    // The tables.
    for f in ["ddl.csv", "ddl.md"] {
        let t = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(
            t.contains("rate NOT met") && t.contains("NO VERDICT"),
            "{f}:\n{t}"
        );
    }
    let t = std::fs::read_to_string(out.join("ddl_windows.csv")).unwrap();
    assert!(t.contains("NO VERDICT"), "{t}");
    // The report: in its warnings, and first in the point's section.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let warn = html.find("warnings\">").expect("a list of warnings");
    assert!(html[warn..].contains("NO VERDICT"), "not in the warnings");
    assert!(!html.contains("no warnings"));
    // compare: a missed rate, like a run step's.
    let o = ixbench(&["compare", out.to_str().unwrap(), out.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert!(stdout.contains("rate NOT met"), "{stdout}\n{stderr}");
    // --pass-on no-verdict lets it exit 0 on purpose; the state is still said.
    let out = dir.path().join("pass");
    let mut a = args.to_vec();
    a.extend_from_slice(&["--reuse", "--pass-on", "no-verdict"]);
    let (o, run) = ddl(&db, &out, &a);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}\n{stdout}");
    assert_eq!(run["ddl"]["state"], "no_verdict");
}

/// At sub-second intervals the text prints one line per second where nothing happens and
/// every interval of the seconds in which the DDL starts or ends or the window changes
/// (`run`'s lines are per interval, but ddl's run for tens of seconds per point); the files
/// keep every interval. (The smoke size, which chose 0.1 s intervals by itself, printed
/// about 300 lines per point before.)
#[test]
fn sqlite_text_at_a_tenth_of_a_second_is_a_line_per_quiet_second() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mut a = vec!["--table-size", "3000", "--interval", "0.1"];
    a.extend_from_slice(&QUICK);
    let (o, run) = ddl("sqlite", &out, &a);
    let p = &check_ok(&o, &run, &out)[0];
    assert_eq!(f(&p["interval_s"]), 0.1);
    let (stdout, _) = text(&o);
    assert!(
        stdout.contains("a line every 0.1 s (--interval); printed here: a line per second"),
        "{stdout}"
    );
    // The timeline's lines: from its header to the point's first line after it.
    let lines: Vec<&str> = stdout.lines().collect();
    let h = lines
        .iter()
        .position(|l| l.trim_start().starts_with("t window"))
        .unwrap_or_else(|| panic!("no header:\n{stdout}"));
    let tl_text: Vec<&str> = lines[h + 1..]
        .iter()
        .take_while(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<f64>().is_ok())
        })
        .copied()
        .collect();
    let tl = rows(p);
    let stored = intervals(&out).len();
    assert_eq!(stored, tl.len());
    // Every interval is in the files; the text has about a line per second plus the
    // intervals of the eventful seconds (the DDL's start and end, the window changes).
    let secs: f64 = tl.iter().map(|r| f(&r["i_sec"])).sum();
    assert!(
        tl.len() as f64 >= 8.0 * secs,
        "{} rows in {secs} s",
        tl.len()
    );
    assert!(
        (tl_text.len() as f64) < 0.7 * tl.len() as f64,
        "{} text lines for {} intervals:\n{}",
        tl_text.len(),
        tl.len(),
        tl_text.join("\n")
    );
    // The DDL's start is on a line of its own interval (t with one decimal), and the
    // transactions of the text's lines add up to the run's.
    let start = tl_text
        .iter()
        .find(|l| l.contains("[DDL start]"))
        .unwrap_or_else(|| panic!("no DDL start:\n{}", tl_text.join("\n")));
    assert!(
        start.split_whitespace().next().unwrap().contains('.'),
        "{start}"
    );
    let quiet = tl_text
        .iter()
        .filter(|l| !l.split_whitespace().next().unwrap().contains('.'))
        .count();
    assert!(quiet >= 2, "no merged second:\n{}", tl_text.join("\n"));
    let text_txns: f64 = tl_text
        .iter()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let per_s: f64 = w[2].parse().unwrap();
            // a merged line covers about a second, an interval's line a tenth
            per_s * if w[0].contains('.') { 0.1 } else { 1.0 }
        })
        .sum();
    let txns: u64 = tl.iter().map(|r| r["txns"].as_u64().unwrap()).sum();
    assert!(
        (text_txns - txns as f64).abs() <= 0.1 * txns as f64 + 20.0,
        "text {text_txns} vs {txns}"
    );
}

/// A DDL held up for a known time: a test session holds ROW EXCLUSIVE on the table, so a plain
/// CREATE INDEX waits for it, and the load's writes queue behind the CREATE INDEX. The session
/// commits 2 s after the DDL started: the backlog of intended starts grows for those 2 s and
/// drains after the DDL; the catch-up runs above the offered rate; recovery comes after the
/// drain. The same blocked stretch shows at 1 s and at 0.1 s intervals.
#[test]
fn postgres_a_ddl_blocked_for_two_seconds_shows_backlog_drain_and_recovery() {
    let Some(s) = start_server(
        "postgres_a_ddl_blocked_for_two_seconds_shows_backlog_drain_and_recovery",
        ServerKind::Postgres,
        false,
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Low enough for a busy 2-core machine to keep without the DDL.
    const RATE: f64 = 30.0;
    for (n, interval) in ["1", "0.1"].into_iter().enumerate() {
        let out = dir.path().join(format!("i{interval}"));
        let url = s.url();
        let mut args = vec![
            "ddl",
            "--target",
            &url,
            "--out",
            out.to_str().unwrap(),
            "--lock",
            "blocking",
            "--threads",
            "2",
            "--rate",
            "30",
            "--baseline-seconds",
            "3",
            "--recovery-seconds",
            "5",
            "--interval",
            interval,
        ];
        if n == 0 {
            args.extend_from_slice(&["--table-size", "5000"]);
        } else {
            args.push("--reuse");
        }
        let child = spawn_until_intervals(&args, &out, "baseline", 1, Duration::from_secs(120));
        let mut blocker = crate::common::sql::connect(&s.url_with_password()).unwrap();
        blocker
            .batch_execute("BEGIN; LOCK TABLE sbtest1 IN ROW EXCLUSIVE MODE")
            .unwrap();
        // Until the DDL has started (its mark is written when its interval ends), then 2 s.
        let t0 = std::time::Instant::now();
        while !std::fs::read_to_string(out.join("intervals.ndjson"))
            .unwrap_or_default()
            .contains("\"DDL start\"")
        {
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "the DDL never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_secs(2));
        blocker.batch_execute("COMMIT").unwrap();
        let o = child.wait_with_output().unwrap();
        let run = run_json(&out);
        let p = &check_ok(&o, &run, &out)[0];
        let i = &p["impact"];
        let d = f(&p["ddl"]["seconds"]);
        let (start, end) = (f(&p["ddl"]["started_s"]), f(&p["ddl"]["ended_s"]));
        assert!(d >= 1.9, "the DDL waited 2 s: {d}");
        let iv = f(&p["interval_s"]);
        assert_eq!(iv, interval.parse::<f64>().unwrap());
        // Whether the load kept its rate before the DDL (a machine too busy for even this
        // rate makes it no verdict, and says so: see check_ok).
        let rate_ok = i["rate_ok"] == true;
        let tl = rows(p);
        // The intervals entirely inside the wait: the two clients complete at most the
        // transactions they had in flight at its start, and the backlog grows at the offered
        // rate from one interval to the next.
        let inside: Vec<&Value> = tl
            .iter()
            .filter(|r| f(&r["t"]) >= start && f(&r["t"]) + f(&r["i_sec"]) <= end)
            .collect();
        // They cover the wait but for less than an interval at each end (a reporter that
        // ticked late on a busy machine makes one interval longer, not one fewer second: so
        // their time is counted, not their number; a lost interval would leave a gap).
        let covered: f64 = inside.iter().map(|r| f(&r["i_sec"])).sum();
        assert!(
            !inside.is_empty() && covered >= (end - start) - 2.0 * iv - 1e-3,
            "{interval}: {} intervals ({covered:.3} s) inside the {:.3} s wait",
            inside.len(),
            end - start
        );
        let done: u64 = inside.iter().map(|r| r["txns"].as_u64().unwrap()).sum();
        assert!(
            done <= 2,
            "{interval}: {done} transactions completed during the wait"
        );
        for r in &inside {
            let due = RATE * (f(&r["t"]) + f(&r["i_sec"]) - start);
            let b = r["backlog"].as_u64().unwrap() as f64;
            assert!(
                b >= 0.8 * due - 4.0,
                "{interval}: backlog {b} after {due} due: {r}"
            );
        }
        for w in inside.windows(2) {
            assert!(
                w[1]["backlog"].as_u64() > w[0]["backlog"].as_u64(),
                "{interval}: the backlog did not grow: {} then {}",
                w[0],
                w[1]
            );
        }
        // Its peak: at least what was due by the last cut inside the wait.
        let b = &i["backlog"];
        let peak = f(&b["peak"]);
        let floor = 0.8 * RATE * (end - start - iv) - 4.0;
        assert!(peak >= floor, "{interval}: peak {peak} < {floor}: {b}");
        // At the DDL's end (its last interval), unless the machine fell behind the offered
        // rate after it (seen at a load average of 20: the backlog grew on for a second or two
        // with no lock held); the DDL's own backlog is then still all there at its end.
        let at = f(&b["peak_at_s"]);
        assert!(at >= start, "{b}");
        if at > end + iv + 0.05 {
            let at_end = f(&b["at_ddl_end"]);
            assert!(
                at_end >= floor,
                "{interval}: backlog {at_end} at the DDL's end < {floor}: {b}"
            );
            eprintln!("{interval} s: the backlog grew on after the DDL (a busy machine): {b}");
        }
        // Drained after the DDL (at 0.1 s, with a catch-up above the offered rate); recovery,
        // when it came within the run, after the drain. A machine too busy to keep even this
        // rate without the DDL, or to drain within the recovery window, says so.
        let (stdout, _) = text(&o);
        if !rate_ok {
            eprintln!("{interval} s: the machine did not keep {RATE} TPS: no verdict");
        } else if b["drained_at_s"].is_null() {
            assert!(
                stdout.contains("NOT back to the baseline's level"),
                "{stdout}"
            );
            assert_eq!(f(&i["after"]["seconds"]), 0.0, "{i}");
            eprintln!("{interval} s: the backlog did not drain within the run");
        } else {
            assert!(f(&b["drained_at_s"]) > end - 1e-6, "{b}");
            let after = f(&b["drained_after_s"]);
            match i["recovery_s"].as_f64() {
                Some(rec) => assert!(
                    rec >= after - 1e-9,
                    "recovered {rec} s before the drain {after} s"
                ),
                None => assert!(stdout.contains("NOT recovered"), "{stdout}"),
            }
            // Still behind at the end of the DDL's last interval (at 0.1 s it ends right after
            // the wait): a catch-up, above the offered rate.
            if f(&b["at_ddl_end"]) > f(&b["baseline_level"]) + 4.0 {
                assert!(f(&i["catchup"]["seconds"]) > 0.0, "{}", i["catchup"]);
                assert!(f(&i["catchup"]["tps"]) > RATE, "{}", i["catchup"]);
            }
        }
        // A transaction due at the wait's start waited it out (latency from its intended
        // start).
        let max = tl
            .iter()
            .filter_map(|r| r["max_us"].as_u64())
            .max()
            .unwrap() as f64;
        assert!(
            max >= 0.9 * (end - start) * 1e6 - 1e5,
            "{max} in a {d} s wait"
        );
        assert!(stdout.contains("   rule: catch-up: "), "{stdout}");
        assert!(stdout.contains("   backlog: peak "), "{stdout}");
    }
}

/// A CSV table the run wrote, as (headers, rows), read back with ixbench's own reader.
fn csv_table(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let t = ixbench::export::csv::parse(&text).unwrap_or_else(|| panic!("{path:?} parses"));
    (t.headers, t.rows)
}

/// A cell of `row` under `header`.
fn cell<'a>(headers: &[String], row: &'a [String], header: &str) -> &'a str {
    let i = headers
        .iter()
        .position(|h| h == header)
        .unwrap_or_else(|| panic!("no column {header} in {headers:?}"));
    &row[i]
}

/// A real relapse, and one recovery everywhere. On PostgreSQL, two methods (REINDEX TABLE
/// CONCURRENTLY, then VACUUM FULL), so the methods table is written too; two seconds after the
/// first point's DDL ended, the load's table is locked (ACCESS EXCLUSIVE) for 2 s: the load
/// stalls for real after it had come back. The first point then reports a relapse that starts
/// where the lock did (within an interval) and lasts at least the lock, and is not called
/// recovered before it ended. For every point the methods table, the points table, the point's
/// text and run.json say the same recovery, the same relapses and the same after ratios, with
/// one decimal (the methods table once printed an unrounded TPS-only recovery under
/// `recovery_s`).
#[test]
fn postgres_a_stall_after_the_ddl_is_a_relapse_and_every_table_says_one_recovery() {
    let name = "postgres_a_stall_after_the_ddl_is_a_relapse_and_every_table_says_one_recovery";
    let Some(s) = start_server(name, ServerKind::Postgres, false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let url = s.url();
    const IV: f64 = 0.25;
    let args = [
        "ddl",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--table-size",
        "5000",
        "--threads",
        "2",
        "--rate",
        "100",
        "--baseline-seconds",
        "3",
        "--recovery-seconds",
        "8",
        "--interval",
        "0.25",
        "--quiet-timeout",
        "10",
        "--ddl",
        "rebuild",
        "--method",
        "native,vacuum-full",
        "--fail-on-regression",
    ];
    let child = spawn_until_intervals(&args, &out, "baseline", 1, Duration::from_secs(120));
    let mut blocker = crate::common::sql::connect(&s.url_with_password()).unwrap();
    // The first "DDL end" mark is written when the interval the DDL ended in does: from here
    // the test's clock runs with the load's time after the DDL (its figures' zero).
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(out.join("intervals.ndjson"))
        .unwrap_or_default()
        .contains("\"DDL end\"")
    {
        assert!(t0.elapsed() < Duration::from_secs(120), "no DDL end");
        std::thread::sleep(Duration::from_millis(5));
    }
    let mark = std::time::Instant::now();
    std::thread::sleep(Duration::from_secs(2));
    let asked = mark.elapsed().as_secs_f64();
    blocker
        .batch_execute("BEGIN; LOCK TABLE sbtest1 IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    blocker.batch_execute("COMMIT").unwrap();
    let released = mark.elapsed().as_secs_f64();
    let o = child.wait_with_output().unwrap();
    let run = run_json(&out);
    let points = check_ok(&o, &run, &out);
    assert_eq!(points.len(), 2);
    let (stdout, _) = text(&o);
    // The relapse of the first point: a relapse needs the load to have come back first. On
    // a machine running four tests at once the load's p99 can stay above the band from the
    // DDL's end into the lock (seen once in CI: first back 5.25 s after the DDL, the lock at
    // 2-4 s): then there is no relapse to see, and what the run must not do is call the load
    // recovered (or back) before the lock ended.
    let i = &points[0]["impact"];
    let back_before_lock = i["returned_s"].as_f64().is_some_and(|r| r < asked);
    if !back_before_lock {
        eprintln!(
            "the load was not back before the lock ({}): no relapse to see in this run",
            i["returned_s"]
        );
        for k in ["returned_s", "recovery_s"] {
            if let Some(x) = i[k].as_f64() {
                assert!(
                    x >= released - IV - 0.15,
                    "{k} {x} s, the lock ended at {released:.2} s: {i}"
                );
            }
        }
    } else {
        // A relapse is a REGRESSION; --fail-on-regression makes it exit 3. A baseline that
        // missed its load (a busy machine) has no band to judge by: NO VERDICT, exit 5, and
        // the relapse is still measured and checked below.
        let why = points[0]["state_why"].as_str().unwrap_or("");
        if points[0]["state"] == "no_verdict" && why.contains("the baseline missed its load") {
            eprintln!("the baseline missed its load: NO VERDICT ({why})");
            assert_eq!(o.status.code(), Some(5), "{stdout}");
        } else {
            assert_eq!(points[0]["state"], "regression", "{why}");
            assert_eq!(o.status.code(), Some(3), "{stdout}");
            assert!(
                stdout.contains("ixbench: ddl: REGRESSION (point 1"),
                "{stdout}"
            );
        }
        let relapses = i["relapses"].as_array().unwrap();
        let r = relapses
            .iter()
            .find(|r| {
                let (a, l) = (f(&r["after_ddl_s"]), f(&r["seconds"]));
                a <= released && a + l >= asked
            })
            .unwrap_or_else(|| panic!("no relapse over {asked:.2}..{released:.2} s: {i}"));
        let (at, len) = (f(&r["after_ddl_s"]), f(&r["seconds"]));
        let after_ddl = f(&r["at_s"]) - at;
        // An interval out of the band by its own figures: nothing completed, a p99 above the
        // band's top or a backlog above the baseline's level (its TPS alone is too coarse at 25
        // transactions an interval). On a machine shared with other builds such an interval can
        // come a moment before the lock or after the drain: a relapse then starts or ends there,
        // as the rule says (bad intervals closer than a stretch are one departure).
        let band = &i["band"];
        let level = i["backlog"]["baseline_level"].as_u64().unwrap();
        let tl = rows(&points[0]);
        let since = |x: &Value| f(&x["t"]) - after_ddl;
        let out_of_band = |x: &Value| {
            x["p99_us"]
                .as_f64()
                .map_or(true, |p| p > f(&band["p99_hi_us"]))
                || x["backlog"].as_u64().unwrap() > level
        };
        let near = |t: f64| {
            tl.iter()
                .find(|x| (since(x) - t).abs() < 0.01)
                .unwrap_or_else(|| panic!("no interval at {t} s after the DDL"))
        };
        let around: Vec<String> = tl
            .iter()
            .filter(|x| since(x) > at - 1.0)
            .map(|x| {
                format!(
                    "{:.2} {} txns p99 {} backlog {}",
                    since(x),
                    x["txns"],
                    x["p99_us"],
                    x["backlog"]
                )
            })
            .collect();
        let why = format!("{r}; band {band}; {around:#?}");
        // Its start: where the lock was taken (within an interval), or an interval out of the
        // band by itself before it.
        assert!(
            (at - asked).abs() <= IV + 0.15 || (at < asked && out_of_band(near(at))),
            "the relapse starts {at} s after the DDL, the lock {asked:.2} s: {why}"
        );
        assert!(
            len >= released - asked - IV - 0.15,
            "{len} s for a {:.2} s lock: {why}",
            released - asked
        );
        // Its end: once the backlog the lock left has drained (and a stretch's slack), or at an
        // interval out of the band by itself.
        let drained = tl
            .iter()
            .find(|x| since(x) >= released && x["backlog"].as_u64().unwrap() <= level)
            .map(|x| since(x) + f(&x["i_sec"]))
            .expect("the backlog drained after the lock");
        let last = tl
            .iter()
            .rev()
            .find(|x| since(x) < at + len - 0.01)
            .unwrap();
        assert!(
            at + len <= drained + 3.0 * IV + 0.15 || out_of_band(last),
            "the relapse ends {} s after the DDL, the backlog drained at {drained} s: {why}",
            at + len
        );
        assert_eq!(r["worst_tps"], 0.0, "the lock stalled an interval: {r}");
        match i["recovery_s"].as_f64() {
            Some(rec) => assert!(rec >= at + len - 1e-6, "recovered at {rec} s, in: {r}"),
            None => assert!(stdout.contains("NOT recovered"), "{stdout}"),
        }
        assert!(
            stdout.contains(&format!("   relapsed {at:.1} s after the DDL's end: ")),
            "{stdout}"
        );
    }
    // One recovery everywhere.
    let (ph, pr) = csv_table(&out.join("ddl.csv"));
    let (mh, mr) = csv_table(&out.join("ddl_methods.csv"));
    assert_eq!(mr.len(), 2);
    let sections: Vec<&str> = stdout.split("\n== point ").skip(1).collect();
    assert_eq!(sections.len(), 2, "{stdout}");
    for (n, p) in points.iter().enumerate() {
        let i = &p["impact"];
        let after = f(&i["catchup"]["seconds"]) + f(&i["after"]["seconds"]);
        let want = match i["recovery_s"].as_f64() {
            Some(x) => format!("{x:.1}"),
            None => format!("not in {after:.1}"),
        };
        let spans: Vec<String> = i["relapses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| match r["to_end"].as_bool().unwrap() {
                true => format!("{:.1} s to the end", f(&r["after_ddl_s"])),
                false => format!(
                    "{:.1} s for {:.1} s",
                    f(&r["after_ddl_s"]),
                    f(&r["seconds"])
                ),
            })
            .collect();
        let spans = if spans.is_empty() {
            "none".to_string()
        } else {
            spans.join("; ")
        };
        let prow = pr
            .iter()
            .find(|r| r[0] == format!("during DDL, point {}", n + 1))
            .unwrap();
        let mrow = &mr[n];
        for (h, v) in [("recovery_s", &want), ("relapses", &spans)] {
            assert_eq!(cell(&ph, prow, h), v, "point {n}: the points table's {h}");
            assert_eq!(cell(&mh, mrow, h), v, "point {n}: the methods table's {h}");
        }
        for h in ["ddl_s", "after_tps_vs_base", "after_p99_vs_base"] {
            assert_eq!(cell(&ph, prow, h), cell(&mh, mrow, h), "point {n}: {h}");
        }
        // unknown (no after window to compare, e.g. a run slowed so much the DDL ended at the
        // run's end) is "-", never a number
        let tps = i["after_tps_ratio"].as_f64();
        assert_eq!(
            cell(&mh, mrow, "after_tps_vs_base"),
            tps.map_or_else(|| "-".to_string(), |t| format!("{t:.2}x"))
        );
        let words = match i["recovery_s"].as_f64() {
            Some(_) => format!("   recovered {want} s after the DDL's end, "),
            None => "   NOT recovered".to_string(),
        };
        assert!(
            sections[n].contains(&words),
            "point {n}: {words}: {}",
            sections[n]
        );
        if let Some(tps) = tps {
            assert!(
                sections[n].contains(&format!("after: TPS {tps:.2}x the baseline's, p99 ")),
                "{}",
                sections[n]
            );
        }
        // One decimal, or not within the run: never an unrounded figure.
        let rec = cell(&mh, mrow, "recovery_s");
        let num = rec.strip_prefix("not in ").unwrap_or(rec);
        let (whole, frac) = num.split_once('.').unwrap_or_else(|| panic!("{rec}"));
        assert!(
            whole.chars().all(|c| c.is_ascii_digit()) && frac.len() == 1,
            "{rec}"
        );
    }
}
