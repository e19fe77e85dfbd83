//! Resource figures through the production paths (the ixbench binary) against real throwaway
//! servers: server bytes written cross-checked with the DBMS's own WAL/redo counters and the
//! device; CPU charged over the operations' window only; unknown figures stay unknown.
//!
//! Without the server binaries a test prints `SKIPPED <name>: <why>`; with `CI=true` it fails.

use crate::common;

use std::path::Path;

use ixbench::dbms::{self, Dbms, TargetOptions, TargetSpec};
use ixbench::server::{self, ServerKind};
use serde_json::Value;

use common::TestServer as Fixture;

fn start(test: &str, kind: ServerKind) -> Option<Fixture> {
    common::start_server(test, kind, false)
}

/// The DBMS's own I/O counters now, through a separate connection.
fn counters(t: &dyn Dbms) -> Vec<(String, u64)> {
    let mut c = t.connect().unwrap();
    t.io_counters(c.as_mut()).unwrap()
}

fn get(v: &[(String, u64)], k: &str) -> u64 {
    v.iter()
        .find(|(n, _)| n == k)
        .unwrap_or_else(|| panic!("no counter {k} in {v:?}"))
        .1
}

fn delta(before: &[(String, u64)], after: &[(String, u64)], k: &str) -> u64 {
    get(after, k) - get(before, k)
}

fn run_ok(args: &[&str], out: &Path) -> Value {
    let o = common::ixbench(args);
    let (so, se) = common::text(&o);
    assert_eq!(o.status.code(), Some(0), "{so}\n{se}");
    let run = common::run_json(out);
    common::assert_all_ok(&run);
    run
}

/// Checks common to both servers: `wal` is the DBMS's own count of its log bytes over the
/// whole run, read by the test; `written` the DBMS's write total over the run (log + data).
fn check_step_written(step: &Value, wal_key: &str, run_wal: u64, run_written: u64) {
    let srv = &step["server"];
    let name = &step["name"];
    let wal = srv["dbms_counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c[0] == wal_key)
        .unwrap_or_else(|| panic!("{name}: no {wal_key} in {srv}"))[1]
        .as_u64()
        .unwrap();
    // The step's window holds (nearly) all the run's log: the rest is CREATE TABLE etc.
    assert!(
        wal <= run_wal && wal as f64 >= 0.9 * run_wal as f64,
        "{name}: window {wal_key} {wal}, whole run {run_wal}"
    );
    // The figure reported as written: the DBMS's own count, within 10% + 1 MB of what the
    // test read itself over the whole run (the old /proc write_bytes figure was 18x).
    let written = srv["dbms_written_bytes"].as_u64().expect("written known");
    assert!(
        written as f64 <= 1.1 * run_written as f64 + 1e6 && written >= wal,
        "{name}: reported written {written}, run's DBMS total {run_written}, {wal_key} {wal}"
    );
    let ops = step["totals"]["rows"][0].as_u64().unwrap() as f64;
    let per_op = step["summary"]["srv_write_kb_per_op"].as_f64().unwrap();
    assert!(
        (per_op * 1e3 * ops - written as f64).abs() <= 0.01 * written as f64 + 1e3,
        "{name}: {per_op} KB/op x {ops} vs {written}"
    );
    // /proc write calls: every log byte passes through a write call (PostgreSQL's WAL and
    // MariaDB's redo are written with pwrite), so they are at least the log.
    let calls = srv["write_call_bytes"].as_u64().expect("write calls known");
    assert!(
        calls >= wal,
        "{name}: write calls {calls} < {wal_key} {wal}"
    );
    // The device: the log was fsynced inside the window, so the device wrote at least it
    // (other processes on the device only add).
    if let Some(dev) = srv["device"].as_object() {
        let d = dev["written_bytes"].as_u64().unwrap();
        assert!(
            d as f64 >= 0.9 * wal as f64,
            "{name}: device wrote {d} < {wal_key} {wal}"
        );
    }
    eprintln!(
        "{name}: {wal_key} {wal}, DBMS written {written}, write calls {calls}, /proc write_bytes {}, device {}",
        srv["dirtied_bytes"], srv["device"]
    );
}

#[test]
fn postgres_server_writes_match_the_wal_and_the_device() {
    let test = "postgres_server_writes_match_the_wal_and_the_device";
    let Some(f) = start(test, ServerKind::Postgres) else {
        return;
    };
    let url = f.url();
    let t = dbms::open(&TargetSpec::parse(&url).unwrap(), &TargetOptions::default()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let roots = f.pids();
    let before = counters(t.as_ref());
    let ticks_before = tree_cpu_secs(&roots);
    // 2000 commits of 10 rows: each rewrites the WAL's last page after an fsync, the pattern
    // that large folios turn into gigabytes of /proc write_bytes.
    let run = run_ok(
        &[
            "run",
            "--target",
            &url,
            "--out",
            out.to_str().unwrap(),
            "--rows",
            "20000",
            "--rows-per-commit",
            "10",
            "--steps",
            "l.i0",
        ],
        &out,
    );
    let after = counters(t.as_ref());
    let ticks = tree_cpu_secs(&roots) - ticks_before;
    let wal = delta(&before, &after, "wal_bytes");
    let written = wal
        + delta(&before, &after, "checkpoint_write_bytes")
        + delta(&before, &after, "bgwriter_write_bytes")
        // 17+: pg_stat_io's writes; before: buffers_backend, named for what it counts
        + if after.iter().any(|(k, _)| k == "backend_write_bytes") {
            delta(&before, &after, "backend_write_bytes")
        } else {
            delta(&before, &after, "backend_sync_request_bytes")
        }
        + delta(&before, &after, "temp_bytes");
    let step = &run["steps"][0];
    check_step_written(step, "wal_bytes", wal, written);
    // Each commit writes at most its WAL plus the two 8 KiB pages it touches, and the WAL
    // segments started are zero-filled (16 MiB each, wal_init_zero), and the table grows by
    // zero pages: a bound, not a guess, on the write calls.
    let calls = step["server"]["write_call_bytes"].as_u64().unwrap();
    let commits = step["totals"]["ops"][0].as_u64().unwrap();
    let segments = wal / (16 << 20) + 2;
    let db = (step["summary"]["dbgb"].as_f64().expect("size known") * 1e9) as u64;
    let bound = wal + commits * 16384 + segments * (16 << 20) + 2 * db;
    assert!(calls <= bound, "write calls {calls} > bound {bound}");
    // Server CPU (ns, per thread, reaped children once) of the step's window and of its
    // set-up and checks, against the kernel's tick accounting of the whole process tree over
    // the whole run (which also holds the connection and the settings query before the
    // step): within 20% + 0.3 s.
    check_cpu_against_ticks(step, ticks);
}

fn check_cpu_against_ticks(step: &Value, ticks: f64) {
    let cpu = |v: &Value| v["cpu_us"].as_u64().unwrap() as f64 / 1e6;
    let steps = cpu(&step["server"]) + cpu(&step["outside"]["server"]);
    assert!(
        steps <= ticks + 0.1 && steps >= 0.8 * ticks - 0.3,
        "server CPU {steps} s in the step, {ticks} s by the kernel's ticks over the run"
    );
    eprintln!("server CPU: {steps:.3} s in the step, {ticks:.3} s over the run (ticks)");
}

/// User + system CPU of the processes rooted at `roots` and their children, alive or reaped
/// (stat utime/stime + cutime/cstime), in seconds, at clock-tick resolution.
fn tree_cpu_secs(roots: &[u32]) -> f64 {
    let tps = procfs::ticks_per_second() as f64;
    let mut ticks = 0u64;
    for p in procfs::process::all_processes().unwrap().flatten() {
        let Ok(st) = p.stat() else { continue };
        let root = roots.contains(&(st.pid as u32));
        if root || roots.contains(&(st.ppid as u32)) {
            ticks += st.utime + st.stime;
            if root {
                ticks += (st.cutime + st.cstime) as u64;
            }
        }
    }
    ticks as f64 / tps
}

#[test]
fn mariadb_server_writes_match_the_redo_log_and_the_device() {
    let test = "mariadb_server_writes_match_the_redo_log_and_the_device";
    let Some(f) = start(test, ServerKind::Mariadb) else {
        return;
    };
    let url = f.url();
    let t = dbms::open(
        &TargetSpec::parse(&url).unwrap(),
        &TargetOptions {
            engine: Some("innodb".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let roots = f.pids();
    let before = counters(t.as_ref());
    let ticks_before = tree_cpu_secs(&roots);
    let run = run_ok(
        &[
            "run",
            "--target",
            &url,
            "--engine",
            "innodb",
            "--out",
            out.to_str().unwrap(),
            "--rows",
            "20000",
            "--rows-per-commit",
            "10",
            "--steps",
            "l.i0",
        ],
        &out,
    );
    let after = counters(t.as_ref());
    let ticks = tree_cpu_secs(&roots) - ticks_before;
    let redo = delta(&before, &after, "redo_bytes");
    let written = redo + delta(&before, &after, "data_written_bytes");
    let step = &run["steps"][0];
    check_step_written(step, "redo_bytes", redo, written);
    // Redo is written with pwrite, one call per commit rewriting at most the log block(s) it
    // ends in (4 KiB each) as well as the new bytes.
    let calls = step["server"]["write_call_bytes"].as_u64().unwrap();
    let commits = step["totals"]["ops"][0].as_u64().unwrap();
    let bound = written + commits * 8192 + (1 << 20);
    assert!(calls <= bound, "write calls {calls} > bound {bound}");
    // InnoDB writes its files with O_DIRECT (innodb_flush_method, innodb_log_file_buffering
    // off), where /proc write_bytes counts exactly what was submitted: at least the DBMS's
    // count, at most that plus the redo blocks rewritten at each commit.
    let srv = &step["server"];
    let direct = srv["dirtied_bytes"].as_u64().expect("write_bytes readable");
    let dbms = srv["dbms_written_bytes"].as_u64().unwrap();
    assert!(
        direct as f64 >= 0.95 * dbms as f64 && direct <= bound,
        "/proc write_bytes {direct}, DBMS written {dbms}, bound {bound}"
    );
    check_cpu_against_ticks(step, ticks);
}

/// MyRocks appends its WAL with write calls and keeps no page to rewrite: the server's write
/// calls over l.i0 equal the DBMS's count (WAL + flush + compaction bytes) within 5% + 256 KiB.
#[test]
fn myrocks_write_calls_match_its_own_counters() {
    let test = "myrocks_write_calls_match_its_own_counters";
    if server::check_installed(ServerKind::Mariadb).is_ok() && !server::rocksdb_available() {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{test}: the MyRocks plugin is not installed (CI=true)");
        }
        eprintln!("SKIPPED {test}: the MyRocks plugin is not installed");
        return;
    }
    let Some(f) = start(test, ServerKind::Mariadb) else {
        return;
    };
    let url = f.url();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let run = run_ok(
        &[
            "run",
            "--target",
            &url,
            "--engine",
            "rocksdb",
            "--out",
            out.to_str().unwrap(),
            "--rows",
            "20000",
            "--rows-per-commit",
            "10",
            "--steps",
            "l.i0",
        ],
        &out,
    );
    let srv = &run["steps"][0]["server"];
    let dbms = srv["dbms_written_bytes"].as_u64().expect("written known") as f64;
    let calls = srv["write_call_bytes"].as_u64().expect("write calls known") as f64;
    assert!(dbms > 0.0, "{srv}");
    assert!(
        (calls - dbms).abs() <= 0.05 * dbms + 262144.0,
        "write calls {calls}, MyRocks's count {dbms}: {srv}"
    );
}

/// l.i0 on an SQLite file that still holds a large table of an earlier run: the step first
/// drops it (real CPU and I/O of the embedded engine, in the client), then inserts a few
/// rows. The drop is set-up: it must be in `outside`, not in the per-operation CPU.
#[test]
fn setup_cost_is_not_charged_to_operations() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db.sqlite");
    let target = format!("sqlite:{}", db.display());
    let first = tmp.path().join("r1");
    run_ok(
        &[
            "run",
            "--target",
            &target,
            "--out",
            first.to_str().unwrap(),
            "--rows",
            "100000",
            "--steps",
            "l.i0,l.x",
        ],
        &first,
    );
    let second = tmp.path().join("r2");
    let run = run_ok(
        &[
            "run",
            "--target",
            &target,
            "--out",
            second.to_str().unwrap(),
            "--rows",
            "1000",
            "--steps",
            "l.i0",
        ],
        &second,
    );
    let step = &run["steps"][0];
    let cpu = |c: &Value| c["user_us"].as_u64().unwrap() + c["sys_us"].as_u64().unwrap();
    let setup = cpu(&step["outside"]["client"]);
    let ops = cpu(&step["client"]);
    // The construct works: dropping the old table cost more than inserting 1000 rows.
    assert!(setup > ops, "set-up {setup} us, operations {ops} us");
    // cpu per op is over the operations only: below what the set-up alone would add per op
    // (the old whole-step window gave (set-up + operations) / rows).
    let cpupq = step["summary"]["cpupq"].as_f64().unwrap();
    assert!(
        cpupq < setup as f64 / 1000.0,
        "cpupq {cpupq} us/op with a set-up of {setup} us for 1000 rows"
    );
    // The window is the workers' (their seconds), not the whole step.
    let window = step["window_secs"].as_f64().unwrap();
    let outside = step["outside"]["seconds"].as_f64().unwrap();
    assert!(outside > 0.0 && window > 0.0, "{window} {outside}");
}

/// SQLite has no server process: server figures are unknown (`-` in steps.csv, null in
/// run.json), never 0.
#[test]
fn server_figures_of_an_embedded_dbms_are_unknown_not_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let run = run_ok(
        &[
            "run",
            "--out",
            out.to_str().unwrap(),
            "--rows",
            "2000",
            "--steps",
            "l.i0",
        ],
        &out,
    );
    let s = &run["steps"][0]["summary"];
    for k in [
        "srv_cpupq",
        "srv_write_kb_per_op",
        "srv_rss_mb",
        "srv_datadir_gb",
    ] {
        assert!(s[k].is_null(), "{k} = {}", s[k]);
    }
    let csv = std::fs::read_to_string(out.join("steps.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    for (h, v) in head.iter().zip(&row) {
        if h.starts_with("srv_") || h.starts_with("dev_") || h.starts_with("datadir") {
            assert_eq!(*v, "-", "{h}");
        }
        // Every header but the step's name and status names its unit.
        if *h != "step" && *h != "status" && *h != "secs" {
            assert!(h.contains('('), "no unit in {h}");
        }
    }
}
