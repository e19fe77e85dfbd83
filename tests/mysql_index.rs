//! `ixbench index` on MariaDB with InnoDB and with MyRocks, against real throwaway servers:
//! builds (each and all, blocking and online), a knob sweep with a session knob and a
//! restart-only one, strategies and rebuilds, bad knobs; and the index-lab hooks of the MySQL
//! target on a server the test starts itself.
//!
//! `ixbench index --target mariadb` starts and stops its own server; the hook tests start one
//! with `ixbench::server`. When the MariaDB binaries (or, for MyRocks, the plugin) are missing,
//! a test prints `SKIPPED <test>: <why>` and returns, except with `CI=true`, where it fails.
//! The tests run one at a time (the machine may have 2 cores, and each starts a server).

use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

use crate::common::sql::SqlExt;
use ixbench::dbms::{self, Conn, Dbms, KnobScope, TargetOptions, TargetSpec};
use ixbench::server::{self, RunningServer, ServerKind, ServerOptions};
use ixbench::workload::iibench::{TableSql, INDEXES};
use serde_json::{json, Value};

/// One test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Print SKIPPED and return None, or fail under CI=true.
fn skip<T>(test: &str, why: &str) -> Option<T> {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: {why} (CI=true: a missing server binary is a failure)");
    }
    eprintln!("SKIPPED {test}: {why}");
    None
}

/// `Some(())` when MariaDB (and MyRocks when `rocksdb`) is installed; else SKIPPED.
fn installed(test: &str, rocksdb: bool) -> Option<()> {
    if let Err(e) = server::check_installed(ServerKind::Mariadb) {
        return skip(test, &format!("{e:#}"));
    }
    if rocksdb && !server::rocksdb_available() {
        return skip(
            test,
            "the MyRocks plugin is not installed (Debian package mariadb-plugin-rocksdb)",
        );
    }
    Some(())
}

/// A MariaDB server the test started, and its data directory (the server is stopped first).
struct Fixture {
    server: RunningServer,
    _dir: tempfile::TempDir,
}

fn start_mariadb(test: &str, rocksdb: bool) -> Option<Fixture> {
    installed(test, rocksdb)?;
    let dir = tempfile::tempdir().unwrap();
    let server = server::start(ServerKind::Mariadb, &ServerOptions::new(dir.path()))
        .unwrap_or_else(|e| panic!("{test}: cannot start MariaDB: {e:#}"));
    Some(Fixture { server, _dir: dir })
}

fn ixbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args(args)
        .env_remove("MYSQL_PWD")
        .output()
        .expect("cannot run ixbench")
}

fn show(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("settings:"))
        .collect();
    format!(
        "exit {:?}\n--- stdout (tail)\n{}\n--- stderr\n{}",
        o.status.code(),
        lines[lines.len().saturating_sub(60)..].join("\n"),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn read_run(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("run.json")).expect("no run.json");
    serde_json::from_str(&text).expect("run.json does not parse")
}

/// `ixbench index --target mariadb [--engine E] --rm --out DIR ARGS`: its output and, when it
/// wrote one, its run.json.
fn index_run(engine: &str, args: &[&str]) -> (Output, Option<Value>, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let mut all = vec![
        "index",
        "--target",
        "mariadb",
        "--engine",
        engine,
        "--rm",
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let o = ixbench(&all);
    let run = out.join("run.json").exists().then(|| read_run(&out));
    (o, run, tmp)
}

/// stderr is one line starting with `ixbench: error:`, with no panic.
fn one_line_error(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "expected a failure: {}", show(o));
    assert!(!err.contains("panicked"), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "stderr is not one line: {err}");
    assert!(lines[0].starts_with("ixbench: error:"), "{err}");
    err
}

fn counter(b: &Value, name: &str) -> Option<u64> {
    b["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c[0] == name)
        .map(|c| c[1].as_u64().unwrap())
}

/// Every build finished, its figures agree with each other, its indexes are valid, have a
/// size, and their range queries read them as covering indexes.
fn check_build(b: &Value, rows: u64) {
    assert_eq!(b["ok"], true, "{b}");
    assert!(b["error"].is_null(), "{b}");
    assert_eq!(b["rows"].as_u64().unwrap(), rows, "{b}");
    let secs = b["seconds"].as_f64().unwrap();
    assert!(secs > 0.0, "{b}");
    let rps = b["rows_per_sec"].as_f64().unwrap();
    let want = rows as f64 / secs;
    assert!((rps - want).abs() <= 1e-6 * want, "rows/s {rps} != {want}");
    // The server runs here: its CPU is measured for every build, and is no more than every
    // core for the whole build (plus the sampling slack): a child counted twice would break it.
    let cpu = b["server_cpu_secs"].as_f64().expect("server CPU measured");
    let cores = std::thread::available_parallelism().unwrap().get() as f64;
    assert!(
        cpu > 0.0 && cpu <= (secs + 0.5) * cores,
        "cpu {cpu} s in {secs} s: {b}"
    );
    // Bytes written are the DBMS's count: at least each of its parts.
    let written = b["server_write_bytes"].as_u64().expect("written known");
    for (name, v) in b["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (&c[0], &c[1]))
    {
        let parts = [
            "data_written_bytes",
            "redo_bytes",
            "wal_bytes",
            "flush_bytes",
            "compact_write_bytes",
        ];
        if parts.iter().any(|p| name == p) {
            assert!(
                written >= v.as_u64().unwrap(),
                "written {written} < {name} {v}: {b}"
            );
        }
    }
    assert!(
        b["server_read_bytes"].as_u64().is_some(),
        "read unknown: {b}"
    );
    let indexes: Vec<&str> = b["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap())
        .collect();
    let sizes = b["index_bytes"].as_array().unwrap();
    assert_eq!(sizes.len(), indexes.len(), "{b}");
    for s in sizes {
        assert!(indexes.contains(&s[0].as_str().unwrap()), "{b}");
        assert!(s[1].as_u64().unwrap() > 0, "size of {}: {b}", s[0]);
    }
    let plans: Vec<&Value> = b["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "plan")
        .collect();
    assert_eq!(plans.len(), indexes.len(), "{b}");
    for (c, idx) in plans.iter().zip(&indexes) {
        let d = c["detail"].as_str().unwrap();
        assert_eq!(c["ok"], true, "{d}");
        assert!(d.contains(&format!("key={idx} ")), "{d}");
        assert!(d.contains("Using index"), "{d}");
    }
    assert!(!b["progress"].as_array().unwrap().is_empty(), "{b}");
    assert!(
        b["warnings"].as_array().unwrap().is_empty(),
        "no warning expected: {b}"
    );
}

/// Each index alone and all together, blocking and online, then the load strategies and the
/// table rebuilds.
fn builds_strategies_rebuilds(test: &str, engine: &str) {
    let _one = serial();
    if installed(test, engine == "rocksdb").is_none() {
        return;
    }
    let rows = 5000;
    let (o, run, _tmp) = index_run(
        engine,
        &[
            "--rows",
            "5000",
            "--mode",
            "both",
            "--strategy",
            "--rebuild",
        ],
    );
    assert!(o.status.success(), "{}", show(&o));
    let run = run.unwrap();
    assert_eq!(run["status"], "ok", "{}", show(&o));
    let builds = run["builds"].as_array().unwrap();
    let label = |b: &Value| {
        format!(
            "{} {}",
            b["build"].as_str().unwrap(),
            b["mode"].as_str().unwrap()
        )
    };
    let got: Vec<String> = builds.iter().map(label).collect();
    let mut want = Vec::new();
    for mode in ["blocking", "online"] {
        for b in ["pi1_marketsegment", "pi1_registersegment", "pi1_pdc", "all"] {
            want.push(format!("{b} {mode}"));
        }
    }
    let engine_name = if engine == "rocksdb" {
        "ROCKSDB"
    } else {
        "InnoDB"
    };
    want.push(format!("ENGINE={engine_name} rebuild"));
    want.push("OPTIMIZE rebuild".into());
    // the load-first strategy's build of all the indexes, in a group of its own
    want.push("all (load-first) blocking".into());
    assert_eq!(got, want);
    for b in builds {
        check_build(b, rows);
    }
    let cpu: f64 = builds
        .iter()
        .map(|b| b["server_cpu_secs"].as_f64().unwrap())
        .sum();
    assert!(cpu > 0.0, "the server's CPU is counted");
    // one statement builds all: its index sizes are those of the indexes built alone
    let size_of = |build: &str, mode: &str, index: &str| -> u64 {
        let b = builds
            .iter()
            .find(|b| b["build"] == build && b["mode"] == mode)
            .unwrap();
        b["index_bytes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s[0] == index)
            .unwrap()[1]
            .as_u64()
            .unwrap()
    };
    for idx in ["pi1_marketsegment", "pi1_registersegment", "pi1_pdc"] {
        let alone = size_of(idx, "blocking", idx);
        let together = size_of("all", "blocking", idx);
        assert!(
            alone.abs_diff(together) * 10 <= alone,
            "{idx}: {alone} alone, {together} with the others"
        );
    }
    // the engine's own I/O counters are read around every build
    let first = if engine == "rocksdb" {
        "read_bytes"
    } else {
        "data_read_bytes"
    };
    for b in builds {
        assert!(counter(b, first).is_some(), "{b}");
        assert!(counter(b, "tmp_files").is_some(), "{b}");
    }
    if engine == "innodb" {
        // InnoDB logs the pages of the indexes it builds
        for b in builds.iter().filter(|b| b["mode"] != "rebuild") {
            assert!(counter(b, "redo_bytes").unwrap() > 0, "{b}");
        }
    } else {
        // the index lab's note on MyRocks (the run's, not the target's: no other command
        // has it)
        let notes = run["notes"].to_string();
        assert!(
            notes.contains("LOCK=SHARED") && notes.contains("refuses LOCK=NONE"),
            "{notes}"
        );
    }
    let st = run["strategies"].as_array().unwrap();
    let names: Vec<&str> = st.iter().map(|s| s["strategy"].as_str().unwrap()).collect();
    assert_eq!(names, ["indexes-first", "load-first"]);
    for s in st {
        assert_eq!(s["rows"].as_u64().unwrap(), rows, "{s}");
        let total = s["total_secs"].as_f64().unwrap();
        let parts = s["load_secs"].as_f64().unwrap() + s["index_secs"].as_f64().unwrap();
        assert!((total - parts).abs() < 1e-9, "{s}");
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
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("indexes-first: load"), "{}", show(&o));
}

#[test]
fn innodb_builds_strategies_rebuilds() {
    builds_strategies_rebuilds("innodb_builds_strategies_rebuilds", "innodb");
}

#[test]
fn rocksdb_builds_strategies_rebuilds() {
    builds_strategies_rebuilds("rocksdb_builds_strategies_rebuilds", "rocksdb");
}

/// A 2x2 grid on InnoDB: `alter_algorithm` (a session knob: an in-place build or a table copy)
/// x `innodb_sort_buffer_size` (read-only on MariaDB 10.11: ixbench restarts its server with
/// each value). Every point is built, the recorded values are the server's, and both knobs
/// had their effect.
#[test]
fn innodb_session_and_restart_knobs() {
    let test = "innodb_session_and_restart_knobs";
    let _one = serial();
    if installed(test, false).is_none() {
        return;
    }
    let rows = 10_000;
    let (o, run, _tmp) = index_run(
        "innodb",
        &[
            "--rows",
            "10000",
            "--builds",
            "all",
            "--knob",
            "alter_algorithm=INPLACE,COPY",
            "--knob",
            "innodb_sort_buffer_size=65536,1048576",
        ],
    );
    assert!(o.status.success(), "{}", show(&o));
    let run = run.unwrap();
    let builds = run["builds"].as_array().unwrap();
    assert_eq!(builds.len(), 4, "{}", show(&o));
    let mut by_point = std::collections::HashMap::new();
    for alg in ["INPLACE", "COPY"] {
        for sort in ["65536", "1048576"] {
            let point = json!([["alter_algorithm", alg], ["innodb_sort_buffer_size", sort]]);
            let found: Vec<&Value> = builds.iter().filter(|b| b["knobs"] == point).collect();
            assert_eq!(found.len(), 1, "{point}: {}", show(&o));
            check_build(found[0], rows);
            by_point.insert((alg, sort), found[0]);
        }
    }
    // The server was restarted for the restart-only knob (not for the session one), and its
    // CPU is still measured after each restart (the new server process is found).
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("restarted the server with innodb_sort_buffer_size=65536"),
        "{}",
        show(&o)
    );
    assert!(!stdout.contains("restarted the server with alter_algorithm"));
    let cpu: f64 = builds
        .iter()
        .map(|b| b["server_cpu_secs"].as_f64().unwrap())
        .sum();
    assert!(cpu > 0.0);
    // alter_algorithm=COPY copies the table: it writes more redo than the in-place build
    // (which logs only the new index pages).
    for sort in ["65536", "1048576"] {
        let redo = |alg| counter(by_point[&(alg, sort)], "redo_bytes").unwrap();
        assert!(
            redo("COPY") > redo("INPLACE"),
            "sort buffer {sort}: redo COPY {} <= INPLACE {}",
            redo("COPY"),
            redo("INPLACE")
        );
    }
    // A 64 KiB sort buffer spills the in-place sort of 10000 rows to temporary files; 1 MiB
    // holds it.
    let tmp = |sort| counter(by_point[&("INPLACE", sort)], "tmp_files").unwrap();
    assert!(
        tmp("65536") > tmp("1048576"),
        "temporary files with a 64 KiB sort buffer {} vs 1 MiB {}",
        tmp("65536"),
        tmp("1048576")
    );
}

/// A session knob of MyRocks's index build: every value is built and recorded as the server
/// reports it.
#[test]
fn rocksdb_session_knob() {
    let test = "rocksdb_session_knob";
    let _one = serial();
    if installed(test, true).is_none() {
        return;
    }
    let (o, run, _tmp) = index_run(
        "rocksdb",
        &[
            "--rows",
            "5000",
            "--builds",
            "all",
            "--knob",
            "rocksdb_merge_buf_size=65536,67108864",
            "--mode",
            "online",
        ],
    );
    assert!(o.status.success(), "{}", show(&o));
    let builds = run.unwrap()["builds"].as_array().unwrap().clone();
    assert_eq!(builds.len(), 2);
    for (b, v) in builds.iter().zip(["65536", "67108864"]) {
        assert_eq!(b["knobs"], json!([["rocksdb_merge_buf_size", v]]));
        assert_eq!(b["mode"], "online");
        check_build(b, 5000);
    }
}

/// Unknown and read-only knobs fail in one line naming them; a refused value fails its point
/// only (with `--on-error continue`), the next is built, and the exit status is non-zero; a
/// value the server adjusts is recorded as adjusted, with a warning.
#[test]
fn bad_knobs() {
    let test = "bad_knobs";
    let _one = serial();
    if installed(test, false).is_none() {
        return;
    }
    let (o, _, _tmp) = index_run("innodb", &["--rows", "1000", "--knob", "no_such_knob=1"]);
    let e = one_line_error(&o);
    // checked against mariadbd's own list of settings before a server starts
    assert!(e.contains("MariaDB has no setting \"no_such_knob\""), "{e}");

    let (o, _, _tmp) = index_run("innodb", &["--rows", "1000", "--knob", "version=1"]);
    let e = one_line_error(&o);
    assert!(e.contains("knob version is read-only"), "{e}");

    let (o, run, _tmp) = index_run(
        "innodb",
        &[
            "--rows",
            "1000",
            "--builds",
            "all",
            "--knob",
            "alter_algorithm=BOGUS,INPLACE",
            "--knob",
            "sort_buffer_size=1",
            "--on-error",
            "continue",
        ],
    );
    assert!(!o.status.success(), "a failed point fails the run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("1 of 2 builds failed"), "{}", show(&o));
    let builds = run.unwrap()["builds"].as_array().unwrap().clone();
    assert_eq!(builds.len(), 2, "{}", show(&o));
    let err = builds[0]["error"].as_str().unwrap();
    assert!(err.contains("alter_algorithm=BOGUS"), "{err}");
    assert!(err.contains("ERROR 1231"), "the server's message: {err}");
    assert_eq!(builds[1]["ok"], true, "{}", builds[1]);
    // MariaDB raised sort_buffer_size to its minimum: recorded as it is, with a warning
    assert_eq!(
        builds[1]["knobs"],
        json!([["alter_algorithm", "INPLACE"], ["sort_buffer_size", "1024"]])
    );
    let w = builds[1]["warnings"].to_string();
    assert!(
        w.contains("sort_buffer_size: asked 1, the DBMS reports 1024"),
        "{w}"
    );
}

/// A restart-only knob against a server ixbench did not start: one line saying so.
#[test]
fn restart_knob_on_a_server_ixbench_did_not_start() {
    let test = "restart_knob_on_a_server_ixbench_did_not_start";
    let _one = serial();
    let Some(f) = start_mariadb(test, false) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = ixbench(&[
        "index",
        "--target",
        &f.server.url(),
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "1000",
        "--knob",
        "innodb_sort_buffer_size=65536,1048576",
    ]);
    let e = one_line_error(&o);
    assert!(
        e.contains("innodb_sort_buffer_size is server-wide (restart-only)"),
        "{e}"
    );
    // a session knob is fine on that server
    let out = tmp.path().join("s");
    let o = ixbench(&[
        "index",
        "--target",
        &f.server.url(),
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "1000",
        "--builds",
        "all",
        "--knob",
        "alter_algorithm=INPLACE",
    ]);
    assert!(o.status.success(), "{}", show(&o));
    check_build(&read_run(&out)["builds"][0], 1000);
}

fn open(url: &str, engine: &str) -> Box<dyn Dbms> {
    dbms::open(
        &TargetSpec::parse(url).unwrap(),
        &TargetOptions {
            engine: Some(engine.into()),
            ..Default::default()
        },
    )
    .unwrap()
}

/// A table of `rows` rows, loaded by `ixbench run`.
fn load(url: &str, engine: &str, prefix: &str, rows: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let o = ixbench(&[
        "run",
        "--target",
        url,
        "--engine",
        engine,
        "--out",
        tmp.path().join("r").to_str().unwrap(),
        "--steps",
        "l.i0",
        "--rows",
        rows,
        "--table-prefix",
        prefix,
    ]);
    assert!(o.status.success(), "{}", show(&o));
}

fn innodb_table_id(c: &mut dyn Conn, table: &str) -> i64 {
    c.query_i64(&format!(
        "SELECT TABLE_ID FROM information_schema.INNODB_SYS_TABLES WHERE NAME = 'ixbench/{table}'"
    ))
    .unwrap()
    .unwrap()
}

/// The index-lab hooks of the MySQL target, on a server the test started.
#[test]
fn hooks_innodb() {
    let test = "hooks_innodb";
    let _one = serial();
    let Some(mut f) = start_mariadb(test, false) else {
        return;
    };
    let url = f.server.url();
    load(&url, "innodb", "h", "3000");
    let t = open(&url, "innodb");
    let mut c = t.connect().unwrap();
    let sql = TableSql::new("h1", t.dialect());

    // plans: one ALTER for all the indexes, the column lists of the benchmark's indexes
    let plan = t.index_build_plan(&sql.indexes(&[0, 2]), false).unwrap();
    assert_eq!(
        plan,
        vec![vec![format!(
            "ALTER TABLE h1 ADD INDEX h1_marketsegment ({}), ADD INDEX h1_pdc ({}), LOCK=SHARED",
            INDEXES[0].columns.join(", "),
            INDEXES[2].columns.join(", ")
        )]]
    );
    let online = t.index_build_plan(&sql.indexes(&[1]), true).unwrap();
    assert_eq!(online.len(), 1);
    assert!(online[0][0].ends_with(", LOCK=NONE"), "{online:?}");

    // the default build is in place: the table is not copied (same InnoDB table id) ...
    let id = innodb_table_id(c.as_mut(), "h1");
    let counters_before = t.io_counters(c.as_mut()).unwrap();
    let mut b = t.connect().unwrap();
    for s in &plan[0] {
        b.execute(s).unwrap();
    }
    assert_eq!(innodb_table_id(c.as_mut(), "h1"), id, "built in place");
    for n in ["h1_marketsegment", "h1_pdc"] {
        assert!(t.index_valid(c.as_mut(), "h1", n).unwrap(), "{n}");
    }
    assert!(!t
        .index_valid(c.as_mut(), "h1", "h1_registersegment")
        .unwrap());
    let counters_after = t.io_counters(c.as_mut()).unwrap();
    let names: Vec<&str> = counters_after.iter().map(|(n, _)| n.as_str()).collect();
    for n in [
        "data_read_bytes",
        "data_written_bytes",
        "doublewrite_pages",
        "redo_bytes",
        "buffer_pool_reads",
        "tmp_files",
    ] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    let get = |v: &[(String, u64)], n: &str| v.iter().find(|(k, _)| k == n).unwrap().1;
    assert!(get(&counters_after, "redo_bytes") > get(&counters_before, "redo_bytes"));
    for i in [0, 2] {
        b.execute(&t.drop_index_sql(&sql.index(i))).unwrap();
    }
    assert!(!c.index_exists("h1", "h1_pdc").unwrap());

    // ... and with alter_algorithm=COPY on the session, the same plan copies it
    assert_eq!(
        t.set_session_knob(b.as_mut(), "alter_algorithm", "COPY")
            .unwrap(),
        "COPY"
    );
    for s in &plan[0] {
        b.execute(s).unwrap();
    }
    assert_ne!(innodb_table_id(c.as_mut(), "h1"), id, "copied");
    // a table copy cannot be online
    let e = b.execute(&online[0][0]).unwrap_err();
    assert!(
        format!("{e:#}").contains("LOCK=NONE is not supported"),
        "{e:#}"
    );

    // knob scopes come from the server
    let mut scope = |n: &str| t.knob_scope(c.as_mut(), n);
    assert_eq!(scope("alter_algorithm").unwrap(), KnobScope::Session);
    assert_eq!(scope("SORT_BUFFER_SIZE").unwrap(), KnobScope::Session);
    assert_eq!(scope("innodb_io_capacity").unwrap(), KnobScope::Global);
    assert_eq!(
        scope("innodb_sort_buffer_size").unwrap(),
        KnobScope::Restart
    );
    let e = format!("{:#}", scope("no_such_knob").unwrap_err());
    assert!(e.contains("unknown knob no_such_knob"), "{e}");
    let e = format!("{:#}", scope("in_transaction").unwrap_err());
    assert!(e.contains("in_transaction is read-only"), "{e}");
    assert!(scope("x; DROP TABLE h1").is_err());

    // values: the session's where there is one, else the global one
    assert_eq!(
        t.knob_value(c.as_mut(), "innodb_sort_buffer_size").unwrap(),
        "1048576"
    );
    assert_eq!(
        t.set_session_knob(c.as_mut(), "sort_buffer_size", "1048576")
            .unwrap(),
        "1048576"
    );
    assert_eq!(
        t.knob_value(c.as_mut(), "sort_buffer_size").unwrap(),
        "1048576"
    );
    assert_eq!(
        t.set_session_knob(c.as_mut(), "innodb_strict_mode", "OFF")
            .unwrap(),
        "OFF"
    );
    let e = format!(
        "{:#}",
        t.set_session_knob(c.as_mut(), "alter_algorithm", "FAST")
            .unwrap_err()
    );
    assert!(e.contains("alter_algorithm=FAST"), "{e}");
    assert!(e.contains("can't be set to the value of 'FAST'"), "{e}");
    let e = format!(
        "{:#}",
        t.set_session_knob(c.as_mut(), "sort_buffer_size", "1'; SELECT '1")
            .unwrap_err()
    );
    assert!(e.contains("invalid value"), "{e}");

    // progress: nothing running, then an ALTER waiting for a transaction that holds the table
    assert_eq!(
        t.build_progress(c.as_mut()).unwrap().as_deref(),
        Some("none running")
    );
    let mut holder = t.connect().unwrap();
    holder.execute("BEGIN").unwrap();
    holder.query_rows("SELECT * FROM h1 LIMIT 1").unwrap();
    let mut blocked = t.connect().unwrap();
    let alter = t.index_build_plan(&sql.indexes(&[1]), true).unwrap()[0][0].clone();
    let sample = std::thread::scope(|s| {
        let h = s.spawn(move || blocked.execute(&alter));
        let mut sample = String::new();
        for _ in 0..100 {
            sample = t.build_progress(c.as_mut()).unwrap().unwrap();
            if sample.contains("metadata lock") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        holder.execute("COMMIT").unwrap();
        h.join().unwrap().unwrap();
        sample
    });
    assert!(
        sample.starts_with("ALTER: Waiting for table metadata lock"),
        "{sample}"
    );
    assert!(t
        .index_valid(c.as_mut(), "h1", "h1_registersegment")
        .unwrap());

    // rebuilds; an administrative statement that reports an error fails
    let names: Vec<String> = t
        .rebuild_statements(&sql.table)
        .into_iter()
        .map(|(name, stmt)| {
            c.execute(&stmt).unwrap();
            name
        })
        .collect();
    assert_eq!(names, ["ENGINE=InnoDB", "OPTIMIZE"]);
    let e = format!(
        "{:#}",
        c.execute("OPTIMIZE TABLE no_such_table").unwrap_err()
    );
    assert!(e.contains("doesn't exist"), "{e}");

    // the server runs here: its port and process; after a restart the new process is found
    assert_eq!(t.local_port(), Some(f.server.port));
    assert_eq!(t.server_pids(), f.server.pids());
    let old = f.server.pids();
    f.server.restart_with(&[]).unwrap();
    assert_ne!(f.server.pids(), old);
    assert_eq!(t.server_pids(), f.server.pids());
}

/// MyRocks's hooks: the same single ALTER, LOCK=SHARED even online; validity from its data
/// dictionary; sizes after a table copy (rows left in the memtable are flushed first).
#[test]
fn hooks_rocksdb() {
    let test = "hooks_rocksdb";
    let _one = serial();
    let Some(f) = start_mariadb(test, true) else {
        return;
    };
    let url = f.server.url();
    load(&url, "rocksdb", "r", "3000");
    let t = open(&url, "rocksdb");
    let mut c = t.connect().unwrap();
    let sql = TableSql::new("r1", t.dialect());
    let plan = t.index_build_plan(&sql.indexes(&[0, 1, 2]), true).unwrap();
    assert_eq!(plan.len(), 1);
    assert_eq!(plan[0].len(), 1);
    let stmt = &plan[0][0];
    assert!(
        stmt.starts_with("ALTER TABLE r1 ADD INDEX r1_marketsegment ("),
        "{stmt}"
    );
    assert!(stmt.ends_with(", LOCK=SHARED"), "{stmt}");
    // MyRocks refuses LOCK=NONE: that is why the online plan takes LOCK=SHARED
    let none = stmt.replace("LOCK=SHARED", "LOCK=NONE");
    let e = format!("{:#}", c.execute(&none).unwrap_err());
    assert!(e.contains("LOCK=NONE is not supported"), "{e}");
    c.execute(stmt).unwrap();
    for idx in &INDEXES {
        let n = idx.name("r1");
        assert!(t.index_valid(c.as_mut(), "r1", &n).unwrap(), "{n}");
    }
    let in_ddl = |c: &mut dyn Conn| {
        c.query_i64(
            "SELECT count(*) FROM information_schema.ROCKSDB_DDL \
             WHERE TABLE_NAME = 'r1' AND INDEX_NAME = 'r1_pdc'",
        )
        .unwrap()
        .unwrap()
    };
    assert_eq!(in_ddl(c.as_mut()), 1);
    let counters = t.io_counters(c.as_mut()).unwrap();
    let names: Vec<&str> = counters.iter().map(|(n, _)| n.as_str()).collect();
    for n in [
        "read_bytes",
        "written_bytes",
        "wal_bytes",
        "flush_bytes",
        "compact_read_bytes",
        "compact_write_bytes",
        "tmp_files",
    ] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    assert_eq!(
        t.knob_scope(c.as_mut(), "rocksdb_merge_buf_size").unwrap(),
        KnobScope::Session
    );
    assert_eq!(
        t.set_session_knob(c.as_mut(), "rocksdb_merge_buf_size", "1048576")
            .unwrap(),
        "1048576"
    );
    // a table copy leaves its rows in the memtable: without leave to change the server the
    // sizes do not flush it and say what they leave out; with it (the test started this
    // server) they flush and see every index
    let (name, rebuild) = t.rebuild_statements(&sql.table).remove(0);
    assert_eq!(name, "ENGINE=ROCKSDB");
    c.execute(&rebuild).unwrap();
    let sizes = t.sizes(c.as_mut(), &["r1".to_string()], true).unwrap();
    assert!(
        sizes
            .notes
            .iter()
            .any(|n| n.contains("memtables") && n.contains("SKIPPED")),
        "{:?}",
        sizes.notes
    );
    let allowed = dbms::open(
        &TargetSpec::parse(&url).unwrap(),
        &TargetOptions {
            engine: Some("rocksdb".into()),
            server_changes: true,
            ..Default::default()
        },
    )
    .unwrap();
    let sizes = allowed
        .sizes(c.as_mut(), &["r1".to_string()], true)
        .unwrap();
    assert!(sizes.notes.is_empty(), "{:?}", sizes.notes);
    for n in ["r1", "r1_marketsegment", "r1_registersegment", "r1_pdc"] {
        let bytes = sizes.objects.iter().find(|(o, _)| o == n).map(|(_, b)| *b);
        assert!(bytes.is_some_and(|b| b > 0), "{n}: {:?}", sizes.objects);
    }
    c.execute(&t.drop_index_sql(&sql.index(2))).unwrap();
    assert!(!t.index_valid(c.as_mut(), "r1", "r1_pdc").unwrap());
    assert_eq!(in_ddl(c.as_mut()), 0);
    let mut admin =
        crate::common::sql::connect(&f.server.url_with_password()).expect("admin connection");
    let engine: String = admin
        .query_first(
            "SELECT ENGINE FROM information_schema.TABLES \
             WHERE table_schema = 'ixbench' AND table_name = 'r1'",
        )
        .unwrap()
        .unwrap();
    assert_eq!(engine.to_ascii_uppercase(), "ROCKSDB");
}

/// l.x of `ixbench run` builds the indexes as the insert benchmark does on MySQL: one ALTER
/// TABLE with every ADD INDEX (InnoDB: one scan), through the target's build plan, and says so;
/// the longest table prefix whose index names fit MySQL's 64 bytes works through l.x; a table
/// the user dropped and re-created under ixbench's name is refused (its COMMENT identity
/// differs) and kept.
fn lx_limits_and_ownership(test: &str, engine: &str) {
    let _one = serial();
    let Some(f) = start_mariadb(test, engine == "rocksdb") else {
        return;
    };
    let url = f.server.url();
    let tmp = tempfile::tempdir().unwrap();
    // 47 + "1" = 48 bytes; 48 + "_registersegment" = 64 bytes: the longest that fits
    let prefix = "m".repeat(47);
    let table = format!("{prefix}1");
    let run = |name: &str, steps: &str| {
        let out = tmp.path().join(name);
        let o = ixbench(&[
            "run",
            "--target",
            &url,
            "--engine",
            engine,
            "--out",
            out.to_str().unwrap(),
            "--steps",
            steps,
            "--rows",
            "3000",
            "--table-prefix",
            &prefix,
        ]);
        (o, out)
    };
    let (o, out) = run("a", "l.i0,l.x");
    assert!(o.status.success(), "{}", show(&o));
    let r = read_run(&out);
    assert_eq!(r["status"], "ok", "{}", show(&o));
    let lx = &r["steps"][1];
    assert_eq!(lx["status"], "ok", "{lx}");
    let builds = lx["index_builds"].as_array().unwrap();
    assert_eq!(builds.len(), 1, "one statement for the three indexes: {lx}");
    let b = &builds[0];
    assert_eq!(b["indexes"].as_array().unwrap().len(), 3, "{b}");
    let stmt = b["statement"].as_str().unwrap();
    assert!(
        stmt.starts_with(&format!("ALTER TABLE {table} ADD INDEX ")),
        "{stmt}"
    );
    assert_eq!(stmt.matches("ADD INDEX").count(), 3, "{stmt}");
    assert_eq!(b["rows"], 3000);
    let secs = b["seconds"].as_f64().unwrap();
    assert!((b["rows_per_sec"].as_f64().unwrap() - 3000.0 / secs).abs() < 1e-6 * 3000.0 / secs);
    assert!(
        lx["description"]
            .as_str()
            .unwrap()
            .contains("3 indexes in one statement per table (ALTER TABLE"),
        "{lx}"
    );
    // every index exists under its full name, and the plan checks of l.x passed
    let t = open(&url, engine);
    let mut c = t.connect().unwrap();
    for idx in &INDEXES {
        let n = idx.name(&table);
        assert!(n.len() <= 64);
        assert!(c.index_exists(&table, &n).unwrap(), "{n}");
    }
    assert!(
        lx["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["ok"] == true),
        "{lx}"
    );
    // one byte longer is refused before anything runs
    let longer = "m".repeat(48);
    let o = ixbench(&[
        "run",
        "--target",
        &url,
        "--engine",
        engine,
        "--out",
        tmp.path().join("b").to_str().unwrap(),
        "--table-prefix",
        &longer,
    ]);
    let err = one_line_error(&o);
    assert!(err.contains("at most 64 bytes"), "{err}");
    assert!(!tmp.path().join("b").exists());
    // the user drops ixbench's table and creates their own under the same name
    let comment = c
        .query_rows(&format!(
            "SELECT TABLE_COMMENT FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{table}'"
        ))
        .unwrap();
    assert!(
        comment[0][0]
            .as_deref()
            .unwrap_or("")
            .starts_with("ixbench:"),
        "{comment:?}"
    );
    c.execute(&format!("DROP TABLE {table}")).unwrap();
    c.execute(&format!(
        "CREATE TABLE {table} (transactionid BIGINT PRIMARY KEY, data VARCHAR(20)) ENGINE={engine}"
    ))
    .unwrap();
    c.execute(&format!("INSERT INTO {table} VALUES (1, 'keep me')"))
        .unwrap();
    for (name, steps) in [("c", "l.i0"), ("d", "l.i1")] {
        let (o, _) = run(name, steps);
        let err = one_line_error(&o);
        assert!(
            err.contains("not created by ixbench") && err.contains("identity"),
            "{steps}: {err}"
        );
    }
    let kept = c.query_rows(&format!("SELECT data FROM {table}")).unwrap();
    assert_eq!(kept[0][0].as_deref(), Some("keep me"));
}

#[test]
fn innodb_lx_limits_and_ownership() {
    lx_limits_and_ownership("innodb_lx_limits_and_ownership", "innodb");
}

#[test]
fn rocksdb_lx_limits_and_ownership() {
    lx_limits_and_ownership("rocksdb_lx_limits_and_ownership", "rocksdb");
}
