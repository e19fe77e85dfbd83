//! `ixbench index` on PostgreSQL, against real throwaway servers only: those `ixbench index
//! --target postgres` starts and stops itself, or one a test starts with `ixbench::server` (for
//! a `postgres://` URL). Builds each and all, blocking and online; a sweep of a session knob and
//! a restart-only knob; the fewer-workers warning; strategies and rebuilds; bad knobs; a failed
//! online build that leaves an INVALID index.
//!
//! Without PostgreSQL binaries (initdb, postgres) each test prints `SKIPPED <name>: <why>` to
//! stderr and returns; with `CI=true` it fails instead.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use ixbench::dbms::postgres::Postgres;
use ixbench::dbms::prelude::*;
use ixbench::dbms::KnobScope;
use ixbench::server::{self, RunningServer, ServerKind, ServerOptions};
use serde_json::{json, Value};

use common::{assert_one_line_error, run_json};

/// Whether PostgreSQL is installed; when not, say so (`SKIPPED`), or fail under `CI=true`.
fn have_pg(name: &str) -> bool {
    match server::check_installed(ServerKind::Postgres) {
        Ok(()) => true,
        Err(e) => {
            let why = format!("{e:#}");
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("{name}: {why}; CI=true: PostgreSQL must be installed");
            }
            eprintln!("SKIPPED {name}: {why}");
            false
        }
    }
}

/// A throwaway server started by the test, stopped when dropped (also when the test panics).
struct Pg {
    server: Option<RunningServer>,
    _dir: tempfile::TempDir,
}

impl Pg {
    fn url(&self) -> String {
        self.server.as_ref().expect("server running").url()
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            if let Err(e) = s.stop() {
                eprintln!("stopping the test server failed: {e:#}");
            }
        }
    }
}

fn start_pg(name: &str) -> Option<Pg> {
    if !have_pg(name) {
        return None;
    }
    let dir = tempfile::Builder::new()
        .prefix("ixbench-pgidx-")
        .tempdir()
        .expect("temp dir");
    // The server may run as the postgres user (when the tests run as root): let it through.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod temp dir");
    }
    let server = server::start(
        ServerKind::Postgres,
        &ServerOptions::new(dir.path().join("pgdata")),
    )
    .unwrap_or_else(|e| panic!("{name}: cannot start a PostgreSQL server: {e:#}"));
    Some(Pg {
        server: Some(server),
        _dir: dir,
    })
}

/// `ixbench ARGS` with no PGPASSWORD from the environment.
fn ixbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args(args)
        .env_remove("PGPASSWORD")
        .output()
        .expect("run the ixbench binary")
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `ixbench index --target postgres --rm --out OUT ARGS` (a server of its own, removed at the
/// end), expected to succeed; returns run.json and stdout.
fn index_ok(out: &Path, args: &[&str]) -> (Value, String) {
    let mut all = vec![
        "index",
        "--target",
        "postgres",
        "--rm",
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let o = ixbench(&all);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let run = run_json(out);
    assert_eq!(run["status"], "ok", "{}", show(&o));
    (run, String::from_utf8_lossy(&o.stdout).into_owned())
}

fn builds(run: &Value) -> &Vec<Value> {
    run["builds"].as_array().expect("builds array")
}

fn counter(b: &Value, name: &str) -> Option<u64> {
    b["counters"]
        .as_array()?
        .iter()
        .find(|c| c[0] == name)
        .and_then(|c| c[1].as_u64())
}

fn warnings(b: &Value) -> Vec<String> {
    b["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

/// A finished build with its figures consistent: ok, every index sized, rows/s = rows /
/// seconds, server CPU and I/O measured (the server is local), WAL written (index pages are
/// WAL-logged, so a build whose counters were read stale would show none), and each index
/// valid with an index-only plan.
fn assert_good_build(b: &Value, rows: u64) {
    assert_eq!(b["ok"], true, "{b}");
    assert!(b["error"].is_null(), "{b}");
    assert_eq!(b["rows"], rows, "{b}");
    let secs = b["seconds"].as_f64().unwrap();
    assert!(secs > 0.0, "{b}");
    let rps = b["rows_per_sec"].as_f64().unwrap();
    assert!(
        (rps - rows as f64 / secs).abs() <= 1e-6 * rps,
        "rows/s {rps} != {rows} / {secs}"
    );
    let indexes = b["indexes"].as_array().unwrap();
    let sizes = b["index_bytes"].as_array().unwrap();
    assert_eq!(sizes.len(), indexes.len(), "{b}");
    assert!(sizes.iter().all(|s| s[1].as_u64().unwrap() > 0), "{b}");
    // Server CPU: some, and no more than every core for the whole build (plus the sampling
    // slack): a child counted twice would break it.
    let cpu = b["server_cpu_secs"].as_f64().expect("server CPU measured");
    let cores = std::thread::available_parallelism().unwrap().get() as f64;
    assert!(
        cpu > 0.0 && cpu <= (secs + 0.5) * cores,
        "cpu {cpu} s in {secs} s: {b}"
    );
    let wal = counter(b, "wal_bytes").unwrap_or(0);
    assert!(wal > 0, "no WAL counted: {b}");
    // Bytes written: the DBMS's count, which holds the build's WAL (index pages are
    // WAL-logged).
    let written = b["server_write_bytes"].as_u64().expect("written known");
    assert!(written >= wal, "written {written} < WAL {wal}: {b}");
    let checks = b["checks"].as_array().unwrap();
    for i in indexes {
        let plan = checks
            .iter()
            .find(|c| {
                c["name"] == "plan" && c["detail"].as_str().unwrap().contains(i.as_str().unwrap())
            })
            .unwrap_or_else(|| panic!("no plan check for {i}: {b}"));
        assert_eq!(plan["ok"], true, "{plan}");
        assert!(
            plan["detail"]
                .as_str()
                .unwrap()
                .contains("Index Only Scan using"),
            "{plan}"
        );
    }
    assert!(checks.iter().all(|c| c["ok"] == true), "{b}");
    assert!(
        !b["progress"].as_array().unwrap().is_empty(),
        "no progress sample: {b}"
    );
}

#[test]
fn builds_each_and_all_blocking_and_online() {
    if !have_pg("builds_each_and_all_blocking_and_online") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let (run, stdout) = index_ok(&out, &["--rows", "20000", "--mode", "both"]);
    let b = builds(&run);
    // (3 alone + all) x (blocking, online)
    assert_eq!(b.len(), 8, "{stdout}");
    for x in b {
        assert_good_build(x, 20_000);
        // max_parallel_maintenance_workers is at its default: nothing was asked, no warning
        assert!(warnings(x).is_empty(), "{x}");
    }
    let modes: Vec<(&str, &str)> = b
        .iter()
        .map(|x| (x["build"].as_str().unwrap(), x["mode"].as_str().unwrap()))
        .collect();
    for mode in ["blocking", "online"] {
        for build in ["pi1_marketsegment", "pi1_registersegment", "pi1_pdc", "all"] {
            assert!(modes.contains(&(build, mode)), "{build} {mode}: {modes:?}");
        }
    }
    // a CONCURRENTLY build makes the same index as a blocking one
    let size = |build: &str, mode: &str| {
        b.iter()
            .find(|x| x["build"] == build && x["mode"] == mode)
            .map(|x| x["index_bytes"][0][1].as_u64().unwrap())
            .unwrap()
    };
    assert_eq!(size("pi1_pdc", "blocking"), size("pi1_pdc", "online"));
    // `all` builds the three indexes; the same sizes as alone
    let all = b
        .iter()
        .find(|x| x["build"] == "all" && x["mode"] == "blocking")
        .unwrap();
    assert_eq!(all["indexes"].as_array().unwrap().len(), 3);
    let pdc_in_all = all["index_bytes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s[0] == "pi1_pdc")
        .unwrap()[1]
        .as_u64()
        .unwrap();
    assert_eq!(pdc_in_all, size("pi1_pdc", "blocking"));
    // progress samples are PostgreSQL's: our builds by index name, or none running
    for x in b {
        for s in x["progress"].as_array().unwrap() {
            let text = s[1].as_str().unwrap();
            assert!(
                text == "none running" || text.starts_with("pi1_"),
                "unexpected progress sample {text:?}"
            );
        }
    }
    let csv = std::fs::read_to_string(out.join("index.csv")).unwrap();
    assert!(csv.starts_with("build,mode,n,secs"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 8, "{csv}");
}

#[test]
fn sweep_of_a_session_knob_and_a_restart_only_knob() {
    if !have_pg("sweep_of_a_session_knob_and_a_restart_only_knob") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let (run, stdout) = index_ok(
        &out,
        &[
            "--rows",
            "20000",
            "--builds",
            "all",
            "--knob",
            "max_worker_processes=2,8",
            "--knob",
            "maintenance_work_mem=8MB,64MB",
            "--repeat",
            "1",
        ],
    );
    // the lab restarted the server it started for the restart-only knob, once per value
    assert!(
        stdout.contains("restarted the server with max_worker_processes=2"),
        "{stdout}"
    );
    assert!(
        stdout.contains("restarted the server with max_worker_processes=8"),
        "{stdout}"
    );
    let b = builds(&run);
    assert_eq!(b.len(), 4, "{stdout}");
    // the grid is complete, with the values PostgreSQL reports (SHOW's form)
    for mwp in ["2", "8"] {
        for mwm in ["8MB", "64MB"] {
            let n = b
                .iter()
                .filter(|x| {
                    x["knobs"]
                        == json!([["max_worker_processes", mwp], ["maintenance_work_mem", mwm]])
                })
                .count();
            assert_eq!(
                n, 1,
                "max_worker_processes={mwp} maintenance_work_mem={mwm}"
            );
        }
    }
    for x in b {
        // CPU and I/O are still measured after a restart (the server's new processes)
        assert_good_build(x, 20_000);
        assert!(
            warnings(x).is_empty(),
            "no knob differs from what was asked: {x}"
        );
    }
    let cpu: f64 = b
        .iter()
        .map(|x| x["server_cpu_secs"].as_f64().unwrap())
        .sum();
    assert!(cpu > 0.0, "server CPU is counted: {cpu}");
    let csv = std::fs::read_to_string(out.join("index.csv")).unwrap();
    assert!(
        csv.starts_with("max_worker_processes,maintenance_work_mem,build,mode"),
        "{csv}"
    );
}

#[test]
fn fewer_parallel_workers_than_asked_is_a_warning() {
    if !have_pg("fewer_parallel_workers_than_asked_is_a_warning") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    // min_parallel_table_scan_size=0: the planner gives even this small table workers, so
    // maintenance_work_mem is what limits them (PostgreSQL keeps 32MB per participant).
    let (run, stdout) = index_ok(
        &out,
        &[
            "--rows",
            "20000",
            "--builds",
            "all",
            "--indexes",
            "pdc",
            "--set",
            "min_parallel_table_scan_size=0",
            "--knob",
            "maintenance_work_mem=64MB,1GB",
            "--knob",
            "max_parallel_maintenance_workers=0,4",
            "--repeat",
            "2",
        ],
    );
    let b = builds(&run);
    assert_eq!(b.len(), 8, "{stdout}");
    let at = |mwm: &str, w: &str| {
        b.iter()
            .find(|x| {
                x["knobs"]
                    == json!([
                        ["maintenance_work_mem", mwm],
                        ["max_parallel_maintenance_workers", w]
                    ])
            })
            .unwrap_or_else(|| panic!("no build at {mwm} {w}"))
    };
    for x in b {
        assert_good_build(x, 20_000);
    }
    // no workers asked: no warning
    assert!(warnings(at("64MB", "0")).is_empty());
    assert!(warnings(at("1GB", "0")).is_empty());
    // 4 asked, 64MB for the leader and the workers: PostgreSQL plans 1
    let w = warnings(at("64MB", "4"));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("pi1_pdc: PostgreSQL planned 1 parallel worker where max_parallel_maintenance_workers=4"),
        "{w:?}"
    );
    assert!(
        w[0].contains("maintenance_work_mem=64MB allows at most 1"),
        "{w:?}"
    );
    // the same warning at both repeats: printed once, listed once with both builds
    assert_eq!(
        stdout
            .matches("WARNING: pi1_pdc: PostgreSQL planned 1")
            .count(),
        1,
        "{stdout}"
    );
    let listed: Vec<&Value> = run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["warning"] == w[0].as_str())
        .collect();
    assert_eq!(listed.len(), 1, "{}", run["warnings"]);
    assert_eq!(listed[0]["count"], 2, "{}", listed[0]);
    assert_eq!(
        listed[0]["applies_to"],
        json!([
            "maintenance_work_mem=64MB max_parallel_maintenance_workers=4 all blocking #1",
            "maintenance_work_mem=64MB max_parallel_maintenance_workers=4 all blocking #2"
        ])
    );
    assert!(std::fs::read_to_string(out.join("warnings.md"))
        .unwrap()
        .contains("PostgreSQL planned 1"));
    // 4 asked with 1GB: all 4 planned, nothing to warn about
    let w = warnings(at("1GB", "4"));
    assert!(
        w.iter()
            .all(|x| !x.contains("planned 1") && !x.contains("PostgreSQL planned")),
        "{w:?}"
    );
}

#[test]
fn strategies_and_rebuilds() {
    if !have_pg("strategies_and_rebuilds") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let (run, stdout) = index_ok(
        &out,
        &[
            "--rows",
            "20000",
            "--builds",
            "all",
            "--strategy",
            "--rebuild",
        ],
    );
    let b = builds(&run);
    let rebuilds: Vec<&Value> = b.iter().filter(|x| x["mode"] == "rebuild").collect();
    let names: Vec<&str> = rebuilds
        .iter()
        .map(|x| x["build"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["VACUUM FULL", "REINDEX TABLE", "REINDEX TABLE CONCURRENTLY"],
        "{stdout}"
    );
    for x in &rebuilds {
        // every index rebuilt, valid and used afterwards
        assert_good_build(x, 20_000);
        assert_eq!(x["indexes"].as_array().unwrap().len(), 3);
    }
    let st = run["strategies"].as_array().unwrap();
    assert_eq!(st.len(), 2, "{stdout}");
    assert_eq!(st[0]["strategy"], "indexes-first");
    assert_eq!(st[1]["strategy"], "load-first");
    assert_eq!(st[0]["index_secs"], 0.0);
    for s in st {
        let total = s["total_secs"].as_f64().unwrap();
        let parts = s["load_secs"].as_f64().unwrap() + s["index_secs"].as_f64().unwrap();
        assert!((total - parts).abs() < 1e-9, "{s}");
        assert!(s["load_secs"].as_f64().unwrap() > 0.0, "{s}");
        assert_eq!(s["rows"], 20_000, "{s}");
        let sizes = s["index_bytes"].as_array().unwrap();
        assert_eq!(sizes.len(), 3, "{s}");
        assert!(sizes.iter().all(|x| x[1].as_u64().unwrap() > 0), "{s}");
        assert!(
            s["checks"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["ok"] == true),
            "{s}"
        );
    }
    // the load-first build is a measured build like the others
    assert!(st[1]["index_secs"].as_f64().unwrap() > 0.0);
    assert!(out.join("strategies.csv").exists());
    assert!(stdout.contains("load-first: load"), "{stdout}");
}

#[test]
fn unknown_knob_and_refused_value() {
    if !have_pg("unknown_knob_and_refused_value") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // a knob PostgreSQL does not know: one line naming it, nothing built
    let out = tmp.path().join("a");
    let o = ixbench(&[
        "index",
        "--target",
        "postgres",
        "--rm",
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "1000",
        "--knob",
        "no_such_knob=1",
    ]);
    let err = assert_one_line_error(&o);
    // checked against the postgres program's own list of settings before anything starts:
    // no server, no results directory
    assert!(
        err.contains("PostgreSQL has no setting \"no_such_knob\""),
        "{err}"
    );
    assert!(!out.exists(), "{}", out.display());
    // a refused value with --on-error continue: that point fails with PostgreSQL's reason,
    // the next is built, and the exit status is not 0
    let out = tmp.path().join("b");
    let o = ixbench(&[
        "index",
        "--target",
        "postgres",
        "--rm",
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "1000",
        "--builds",
        "all",
        "--knob",
        "maintenance_work_mem=lots,8MB",
        "--on-error",
        "continue",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let run = run_json(&out);
    let b = builds(&run);
    assert_eq!(b.len(), 2, "{}", show(&o));
    let e = b[0]["error"].as_str().unwrap();
    assert!(
        e.contains("maintenance_work_mem=lots") && e.contains("invalid value for parameter"),
        "{e}"
    );
    assert_eq!(b[1]["ok"], true, "{}", b[1]);
    assert_eq!(b[1]["knobs"], json!([["maintenance_work_mem", "8MB"]]));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("1 of 2 builds failed"), "{stderr}");
}

#[test]
fn on_a_server_ixbench_did_not_start() {
    let Some(pg) = start_pg("on_a_server_ixbench_did_not_start") else {
        return;
    };
    let url = pg.url();
    let tmp = tempfile::tempdir().unwrap();

    // the hooks, straight on the target
    let t = Postgres::open_raw(&url).unwrap();
    let mut c = t.connect().unwrap();
    let c = c.as_mut();
    assert_eq!(
        t.knob_scope(c, "maintenance_work_mem").unwrap(),
        KnobScope::Session
    );
    assert_eq!(
        t.knob_scope(c, "checkpoint_timeout").unwrap(),
        KnobScope::Global
    );
    assert_eq!(
        t.knob_scope(c, "max_worker_processes").unwrap(),
        KnobScope::Restart
    );
    let e = format!("{:#}", t.knob_scope(c, "block_size").unwrap_err());
    assert!(
        e.contains("block_size") && e.contains("cannot be changed"),
        "{e}"
    );
    let e = format!("{:#}", t.knob_scope(c, "nope_knob").unwrap_err());
    assert!(e.contains("nope_knob"), "{e}");
    assert_eq!(
        t.set_session_knob(c, "maintenance_work_mem", "16MB")
            .unwrap(),
        "16MB"
    );
    assert_eq!(t.knob_value(c, "maintenance_work_mem").unwrap(), "16MB");
    // a quote in the value is data, not SQL
    let e = format!(
        "{:#}",
        t.set_session_knob(c, "work_mem", "1'; DROP TABLE x; --")
            .unwrap_err()
    );
    assert!(
        e.contains("PostgreSQL refused work_mem=") && e.contains("22023"),
        "{e}"
    );
    assert_eq!(
        t.build_progress(c).unwrap().as_deref(),
        Some("none running")
    );

    // a restart-only knob on a server ixbench did not start: one line, nothing built
    let out = tmp.path().join("a");
    let o = ixbench(&[
        "index",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "1000",
        "--knob",
        "max_worker_processes=2,8",
    ]);
    let err = assert_one_line_error(&o);
    assert!(
        err.contains("max_worker_processes") && err.contains("restart-only"),
        "{err}"
    );
    assert!(builds(&run_json(&out)).is_empty());

    // a failed online build: no temporary file may be written (temp_file_limit=0) and the sort
    // must spill (maintenance_work_mem=1MB), so CREATE INDEX CONCURRENTLY fails after it has
    // entered the index in the catalog: the INVALID index it leaves is reported and dropped
    let out = tmp.path().join("b");
    let o = ixbench(&[
        "index",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "20000",
        "--mode",
        "online",
        "--builds",
        "each",
        "--indexes",
        "pdc",
        "--knob",
        "temp_file_limit=0",
        "--knob",
        "maintenance_work_mem=1MB",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout
            .contains("CHECK FAILED: pi1_pdc is INVALID (left by a failed online build); dropped"),
        "{}",
        show(&o)
    );
    let run = run_json(&out);
    let b = builds(&run);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0]["ok"], false);
    assert!(
        b[0]["error"].as_str().unwrap().contains("temp_file_limit"),
        "{}",
        b[0]
    );
    assert!(
        b[0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "valid" && c["ok"] == false),
        "{}",
        b[0]
    );
    // and it is gone from the server
    let mut c = t.connect().unwrap();
    let c = c.as_mut();
    assert!(!c.index_exists("pi1", "pi1_pdc").unwrap());
    let invalid = c
        .query_i64("SELECT count(*) FROM pg_index WHERE NOT indisvalid")
        .unwrap();
    assert_eq!(invalid, Some(0));

    // the same table, reused, builds fine online once the knobs are gone
    let out = tmp.path().join("c");
    let o = ixbench(&[
        "index",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--reuse",
        "--mode",
        "online",
        "--builds",
        "each",
        "--indexes",
        "pdc",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let run = run_json(&out);
    assert_good_build(&builds(&run)[0], 20_000);
    assert!(t.index_valid(c, "pi1", "pi1_pdc").unwrap());
}

/// The URL with another user and database.
fn url_as(url: &str, user: &str, db: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let host_and_db = rest.rsplit_once('@').map(|(_, h)| h).unwrap_or(rest);
    let host = host_and_db
        .split_once('/')
        .map(|(h, _)| h)
        .unwrap_or(host_and_db);
    format!("{scheme}://{user}@{host}/{db}")
}

/// Item 15 on a real PostgreSQL server: the longest prefix whose index names fit 63 bytes works
/// through l.x (built one CREATE INDEX after another, as the insert benchmark does); a table
/// dropped and re-created by the user under ixbench's name has another OID and is refused and
/// kept; and when the catalog ixbench reads sizes and validity from (pg_index) is denied to the
/// user, l.x keeps its measurement (sizes unknown, with a warning) and a build's index whose
/// validity cannot be read is reported and left in place, never taken for INVALID and dropped.
#[test]
fn limits_ownership_and_failed_side_queries() {
    let Some(pg) = start_pg("limits_ownership_and_failed_side_queries") else {
        return;
    };
    let url = pg.url();
    let tmp = tempfile::tempdir().unwrap();
    let t = Postgres::open_raw(&url).unwrap();
    let mut c = t.connect().unwrap();

    // 46 + "1" = 47 bytes; 47 + "_registersegment" = 63 bytes: the longest that fits
    let prefix = "q".repeat(46);
    let table = format!("{prefix}1");
    let out = tmp.path().join("a");
    let o = ixbench(&[
        "run",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--steps",
        "l.i0,l.x",
        "--rows",
        "3000",
        "--table-prefix",
        &prefix,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let run = run_json(&out);
    let lx = &run["steps"][1];
    assert_eq!(lx["status"], "ok", "{lx}");
    let b = lx["index_builds"].as_array().unwrap();
    assert_eq!(b.len(), 3, "{lx}");
    for (x, idx) in b.iter().zip(ixbench::workload::iibench::INDEXES.iter()) {
        let name = idx.name(&table);
        assert_eq!(x["indexes"], json!([name.clone()]), "{x}");
        assert!(
            x["statement"].as_str().unwrap().starts_with("CREATE INDEX"),
            "{x}"
        );
        // the full name: PostgreSQL did not truncate it
        assert!(c.index_exists(&table, &name).unwrap(), "{name}");
    }
    assert!(
        lx["description"]
            .as_str()
            .unwrap()
            .contains("one CREATE INDEX after another"),
        "{lx}"
    );
    assert!(
        lx["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["ok"] == true),
        "{lx}"
    );
    let o = ixbench(&[
        "run",
        "--target",
        &url,
        "--out",
        tmp.path().join("b").to_str().unwrap(),
        "--table-prefix",
        &"q".repeat(47),
    ]);
    let err = assert_one_line_error(&o);
    assert!(err.contains("at most 63 bytes"), "{err}");

    // the user drops ixbench's table and creates their own of the same name: a new OID
    let oid_before = c
        .query_i64(&format!("SELECT to_regclass('{table}')::oid::bigint"))
        .unwrap();
    c.execute(&format!("DROP TABLE {table}")).unwrap();
    c.execute(&format!(
        "CREATE TABLE {table} (transactionid bigint PRIMARY KEY, data text); \
         INSERT INTO {table} VALUES (1, 'keep me')"
    ))
    .unwrap();
    let oid_after = c
        .query_i64(&format!("SELECT to_regclass('{table}')::oid::bigint"))
        .unwrap();
    assert_ne!(oid_before, oid_after);
    for (name, steps) in [("c", "l.i0"), ("d", "l.i1")] {
        let o = ixbench(&[
            "run",
            "--target",
            &url,
            "--out",
            tmp.path().join(name).to_str().unwrap(),
            "--steps",
            steps,
            "--rows",
            "100",
            "--table-prefix",
            &prefix,
        ]);
        let err = assert_one_line_error(&o);
        assert!(
            err.contains("not created by ixbench") && err.contains("oid:"),
            "{steps}: {err}"
        );
    }
    let kept = c.query_rows(&format!("SELECT data FROM {table}")).unwrap();
    assert_eq!(kept[0][0].as_deref(), Some("keep me"));

    // a user who may not read pg_index (revoked in a database of their own; the pg_indexes
    // view, which runs with its owner's rights, still answers)
    c.execute("CREATE ROLE ixb_nocat LOGIN PASSWORD 'nocat-pw'")
        .unwrap();
    c.execute("CREATE DATABASE nocat OWNER ixb_nocat").unwrap();
    let admin_nocat = url_as(&url, "postgres", "nocat");
    let ta = Postgres::open_raw(&admin_nocat).unwrap();
    let mut ca = ta.connect().unwrap();
    ca.execute("REVOKE SELECT ON pg_catalog.pg_index FROM PUBLIC")
        .unwrap();
    // throwaway servers ask for passwords (scram-sha-256)
    let user_url = url_as(&url, "ixb_nocat:nocat-pw", "nocat");
    let out = tmp.path().join("e");
    let o = ixbench(&[
        "run",
        "--target",
        &user_url,
        "--out",
        out.to_str().unwrap(),
        "--steps",
        "l.i0,l.x",
        "--rows",
        "3000",
    ]);
    // the size query failed after l.x finished: the step keeps its figures and says why the
    // sizes are unknown
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let run = run_json(&out);
    let lx = &run["steps"][1];
    assert_eq!(lx["status"], "ok", "{lx}");
    assert_eq!(lx["index_builds"].as_array().unwrap().len(), 3, "{lx}");
    assert!(lx["summary"]["ips"].as_f64().unwrap() > 0.0, "{lx}");
    assert!(lx["summary"]["dbgb"].is_null(), "unknown, not 0: {lx}");
    assert!(lx["sizes"]["database_bytes"].is_null(), "{lx}");
    let w: Vec<&str> = lx["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        w.iter()
            .any(|w| w.contains("sizes unknown") && w.contains("permission denied")),
        "{w:?}"
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("dbgb=unknown"), "{}", show(&o));

    // the index lab on that table: index_valid's query fails for real (permission denied on
    // pg_index). That is reported as a failed check, and the index stays.
    let out = tmp.path().join("f");
    let o = ixbench(&[
        "index",
        "--target",
        &user_url,
        "--out",
        out.to_str().unwrap(),
        "--reuse",
        "--builds",
        "each",
        "--indexes",
        "pdc",
    ]);
    assert_eq!(o.status.code(), Some(2), "checks failed: {}", show(&o));
    let run = run_json(&out);
    let b = &builds(&run)[0];
    assert!(b["error"].is_null(), "the build itself worked: {b}");
    let valid = b["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "valid")
        .unwrap_or_else(|| panic!("no validity check: {b}"));
    assert_eq!(valid["ok"], false);
    let detail = valid["detail"].as_str().unwrap();
    assert!(
        detail.contains("cannot tell whether pi1_pdc is valid (left in place)")
            && detail.contains("permission denied"),
        "{detail}"
    );
    assert!(!detail.contains("INVALID"), "{detail}");
    assert!(
        b["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("index sizes unknown")),
        "{b}"
    );
    // not dropped: the index is there and valid
    assert!(ca.index_exists("pi1", "pi1_pdc").unwrap());
    let v = ca
        .query_rows("SELECT indisvalid FROM pg_index WHERE indexrelid = 'pi1_pdc'::regclass")
        .unwrap();
    assert_eq!(v[0][0].as_deref(), Some("t"));

    // load strategies on that user: both are measured and kept; their sizes are unknown
    // (`-`) with a warning, their validity checks say they could not be made
    let out = tmp.path().join("g");
    let o = ixbench(&[
        "index",
        "--target",
        &user_url,
        "--out",
        out.to_str().unwrap(),
        "--reuse",
        "--builds",
        "all",
        "--indexes",
        "pdc",
        "--strategy",
        "--rows",
        "3000",
    ]);
    assert_eq!(o.status.code(), Some(2), "checks failed: {}", show(&o));
    let run = run_json(&out);
    let st = run["strategies"].as_array().unwrap();
    assert_eq!(st.len(), 2, "{}", show(&o));
    for s in st {
        assert!(s["total_secs"].as_f64().unwrap() > 0.0, "{s}");
        assert!(s["index_bytes"].as_array().unwrap().is_empty(), "{s}");
        assert!(
            s["warnings"][0]
                .as_str()
                .unwrap()
                .contains("index sizes unknown"),
            "{s}"
        );
        let v = &s["checks"].as_array().unwrap()[1];
        assert_eq!(v["ok"], false, "{s}");
        assert!(
            v["detail"]
                .as_str()
                .unwrap()
                .contains("cannot tell whether pi1_pdc is valid"),
            "{v}"
        );
    }
    let csv = std::fs::read_to_string(out.join("strategies.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(
        rows.iter().all(|r| r.split(',').nth(5) == Some("-")),
        "{csv}"
    );
}
