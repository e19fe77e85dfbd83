//! Bad input and faults: a clear one-line error, a non-zero exit, no panic, and nothing lost
//! (finished steps and intervals stay on disk); tables ixbench did not create are never touched.

use crate::common;

use common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn bad_flags_and_values_are_one_line_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let o = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "--no-such-flag"], "--no-such-flag"),
        (vec!["run", "--rows", "0", "--out", o], "--rows"),
        (vec!["run", "--rows", "ten", "--out", o], "--rows"),
        (
            vec!["run", "--secondary-indexes", "4", "--out", o],
            "--secondary-indexes",
        ),
        (vec!["run", "--line-format", "v3", "--out", o], "v3"),
        (vec!["run", "--steps", "l.i0,l.i9", "--out", o], "l.i9"),
        (vec!["run", "--steps", "l.x,l.i0", "--out", o], "first step"),
        (vec!["run", "--target", "oracle", "--out", o], "oracle"),
        (vec!["run", "--rates", "0", "--out", o], "--rates"),
        (
            vec!["run", "--data-length", "20..10", "--out", o],
            "--data-length",
        ),
        (
            vec!["run", "--sqlite-pragma", "cache_size", "--out", o],
            "NAME=VALUE",
        ),
        (
            vec!["run", "--sqlite-pragma", "x=1;DROP", "--out", o],
            "sqlite-pragma",
        ),
        (
            vec!["run", "--table-prefix", "a-b", "--out", o],
            "table name",
        ),
        (vec!["frobnicate"], "frobnicate"),
    ];
    for (args, needle) in cases {
        let r = ixbench(&args);
        let err = assert_one_line_error(&r);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} created the results directory");
    }
}

#[test]
fn results_directory_problems() {
    let tmp = tempfile::tempdir().unwrap();
    // exists already
    let r = ixbench(&["run", "--out", tmp.path().to_str().unwrap(), "--rows", "10"]);
    let err = assert_one_line_error(&r);
    assert!(err.contains("already exists"), "{err}");
    // parent missing
    let missing = tmp.path().join("no/such/dir");
    let r = ixbench(&["run", "--out", missing.to_str().unwrap(), "--rows", "10"]);
    let err = assert_one_line_error(&r);
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn database_in_missing_or_unwritable_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r1");
    let r = ixbench(&[
        "run",
        "--target",
        "sqlite:/no/such/dir/x.db",
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "10",
    ]);
    let err = assert_one_line_error(&r);
    assert!(err.contains("/no/such/dir"), "{err}");
    // /proc refuses new files even for root
    let out = tmp.path().join("r2");
    let r = ixbench(&[
        "run",
        "--target",
        "sqlite:/proc/x.db",
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "10",
    ]);
    let err = assert_one_line_error(&r);
    assert!(err.contains("/proc/x.db"), "{err}");
}

#[test]
fn a_table_ixbench_did_not_create_is_never_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("mine.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("CREATE TABLE pi1 (precious TEXT); INSERT INTO pi1 VALUES ('keep me');")
            .unwrap();
    }
    let out = tmp.path().join("r");
    let r = ixbench(&[
        "run",
        "--target",
        &format!("sqlite:{}", db.display()),
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "100",
    ]);
    let err = assert_one_line_error(&r);
    assert!(
        err.contains("pi1") && err.contains("not created by ixbench"),
        "{err}"
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    let v: String = c
        .query_row("SELECT precious FROM pi1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, "keep me");
    // the failure is recorded
    let run = run_json(&out);
    assert_eq!(run["status"], "failed");
    // and a later step without l.i0 refuses to write into it too
    let out = tmp.path().join("r2");
    let r = ixbench(&[
        "run",
        "--target",
        &format!("sqlite:{}", db.display()),
        "--out",
        out.to_str().unwrap(),
        "--steps",
        "l.i1",
    ]);
    let err = assert_one_line_error(&r);
    assert!(err.contains("not created by ixbench"), "{err}");
}

#[test]
fn a_dbms_error_mid_run_keeps_what_finished() {
    // The database may not grow past 2000 pages (8 MB): l.i0 finishes, l.x or l.i1 hits
    // SQLITE_FULL half way.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let r = ixbench(&[
        "run",
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "60000",
        "--rows2",
        "400000",
        "--sqlite-pragma",
        "max_page_count=2000",
        "--interval",
        "0.2",
    ]);
    let err = assert_one_line_error(&r);
    assert_eq!(r.status.code(), Some(1));
    assert!(err.contains("full"), "{err}");
    let run = run_json(&out);
    assert_eq!(run["status"], "failed");
    let steps = run["steps"].as_array().unwrap();
    assert_eq!(steps[0]["name"], "l.i0");
    assert_eq!(steps[0]["status"], "ok");
    let last = steps.last().unwrap();
    assert_eq!(last["status"], "failed");
    assert!(last["error"].as_str().unwrap().contains("full"));
    assert!(!intervals(&out).is_empty());
}

#[test]
fn ctrl_c_keeps_finished_steps_and_intervals() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let child = spawn_until_intervals(
        &[
            "run",
            "--out",
            out.to_str().unwrap(),
            "--rows",
            "2000",
            "--rows2",
            "1000",
            "--rates",
            "100",
            "--query-seconds",
            "60",
            "--interval",
            "0.2",
            "--steps",
            "l.i0,l.x,qr100",
        ],
        &out,
        "qr100",
        3,
        Duration::from_secs(60),
    );
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{:?}", text(&o));
    let run = run_json(&out);
    assert_eq!(run["status"], "interrupted");
    let steps = run["steps"].as_array().unwrap();
    assert_eq!(steps[0]["status"], "ok");
    assert_eq!(steps[1]["status"], "ok");
    assert_eq!(steps[2]["status"], "interrupted");
    assert!(steps[2]["seconds"].as_f64().unwrap() < 30.0);
    let lines = intervals(&out);
    assert!(lines.iter().filter(|l| l["step"] == "qr100").count() >= 3);
    let (_, err) = text(&o);
    assert!(err.contains("interrupted"), "{err}");
}

#[test]
fn a_closed_stdout_does_not_stop_the_run() {
    use std::io::{BufRead, BufReader};
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args([
            "run",
            "--out",
            out.to_str().unwrap(),
            "--rows",
            "20000",
            "--steps",
            "l.i0,l.x",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // read the first line, then close the pipe (like `ixbench run | head -1`)
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("ixbench "), "{first}");
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "{:?}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(run_json(&out)["status"], "ok");
}

#[test]
fn out_of_range_numbers_are_one_line_errors_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let o = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        // 1e20 s used to overflow a Duration (panic) or plan a step that never ends
        (
            vec!["run", "--query-seconds", "1e20", "--out", o],
            "--query-seconds",
        ),
        (
            vec!["run", "--query-seconds", "inf", "--out", o],
            "--query-seconds",
        ),
        (
            vec!["run", "--query-seconds", "NaN", "--out", o],
            "--query-seconds",
        ),
        (
            vec!["run", "--query-seconds", "0", "--out", o],
            "--query-seconds",
        ),
        (
            vec!["run", "--query-seconds=-5", "--out", o],
            "--query-seconds",
        ),
        (
            vec!["run", "--query-seconds", "604801", "--out", o],
            "at most 604800",
        ),
        (vec!["run", "--interval", "1e20", "--out", o], "--interval"),
        (
            vec!["run", "--interval", "0.001", "--out", o],
            "between 0.05 and 3600",
        ),
        (vec!["run", "--rows", "1000000000001", "--out", o], "--rows"),
        (
            vec!["run", "--rows2", "1000000000001", "--out", o],
            "--rows2",
        ),
        (
            vec!["run", "--rates", "100,10000001", "--out", o],
            "--rates",
        ),
        (vec!["run", "--clients", "4097", "--out", o], "--clients"),
        (
            vec!["run", "--max-retries", "1000001", "--out", o],
            "--max-retries",
        ),
        (vec!["run", "--max-retries=-1", "--out", o], "--max-retries"),
        (
            vec!["index", "--rows", "1000000000001", "--out", o],
            "--rows",
        ),
    ];
    for (args, needle) in cases {
        let r = ixbench(&args);
        let err = assert_one_line_error(&r);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} created the results directory");
    }
    // the largest accepted values are accepted (the run is cut short by a bad --steps instead,
    // so nothing runs)
    let r = ixbench(&[
        "run",
        "--query-seconds",
        "604800",
        "--interval",
        "3600",
        "--rows",
        "1000000000000",
        "--rates",
        "10000000",
        "--max-retries",
        "1000000",
        "--steps",
        "nosuchstep",
        "--out",
        o,
    ]);
    let err = assert_one_line_error(&r);
    assert!(err.contains("nosuchstep"), "{err}");
}

#[test]
fn clap_hints_stay_on_the_one_line() {
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["run", "--rowz", "10"],
            vec!["--rowz", "tip: a similar argument exists: '--rows'"],
        ),
        (
            vec!["run", "--line-format", "v3"],
            vec!["v3", "[possible values: v1, v2]"],
        ),
        (
            vec!["run", "--engine", "rocks"],
            vec![
                "rocks",
                "[possible values: innodb, rocksdb]",
                "tip: a similar value exists: 'rocksdb'",
            ],
        ),
        (
            vec!["compare"],
            vec!["required arguments were not provided: <RUN>..."],
        ),
        (
            vec!["runn"],
            vec!["runn", "tip: a similar subcommand exists: 'run'"],
        ),
    ];
    for (args, needles) in cases {
        let r = ixbench(&args);
        let err = assert_one_line_error(&r);
        assert_eq!(r.status.code(), Some(2));
        for n in needles {
            assert!(err.contains(n), "{args:?}: {n} missing in {err}");
        }
        assert!(!err.contains("Usage:"), "{err}");
    }
}

#[test]
fn options_the_target_would_ignore_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let o = out.to_str().unwrap();
    // port 1: nothing is contacted, the check comes first
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", "--engine", "rocksdb", "--out", o],
            "--engine rocksdb is for MySQL",
        ),
        (
            vec!["index", "--engine", "rocksdb", "--out", o],
            "--engine rocksdb is for MySQL",
        ),
        (
            vec![
                "run",
                "--engine",
                "innodb",
                "--target",
                "postgres://u@127.0.0.1:1/db",
                "--out",
                o,
            ],
            "PostgreSQL has no storage engine",
        ),
        (
            vec!["run", "--engine", "innodb", "--target", "null", "--out", o],
            "--engine",
        ),
        (
            vec!["run", "--rm", "--out", o],
            "--rm removes the data directory",
        ),
        (
            vec![
                "run",
                "--sqlite-pragma",
                "cache_size=-2000",
                "--target",
                "mysql://u@127.0.0.1:1/db",
                "--out",
                o,
            ],
            "--sqlite-pragma is for SQLite",
        ),
    ];
    for (args, needle) in cases {
        let r = ixbench(&args);
        let err = assert_one_line_error(&r);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} created the results directory");
    }
}

#[test]
fn identifier_limits_are_checked_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let o = out.to_str().unwrap();
    let p47 = "p".repeat(47); // pppp..1_registersegment = 64 bytes > 63
    let p48 = "p".repeat(48); // 65 bytes > 64
    let p64 = "p".repeat(64); // the table name itself: 65 bytes
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "run",
                "--target",
                "postgres://u@127.0.0.1:1/db",
                "--table-prefix",
                &p47,
                "--out",
                o,
            ],
            "at most 63 bytes",
        ),
        (
            vec![
                "index",
                "--target",
                "postgres://u@127.0.0.1:1/db",
                "--table-prefix",
                &p47,
                "--out",
                o,
            ],
            "at most 63 bytes",
        ),
        (
            vec![
                "run",
                "--target",
                "mysql://u@127.0.0.1:1/db",
                "--table-prefix",
                &p48,
                "--out",
                o,
            ],
            "at most 64 bytes",
        ),
        (
            vec!["run", "--table-prefix", &p64, "--out", o],
            "at most 64",
        ),
    ];
    for (args, needle) in cases {
        let r = ixbench(&args);
        let err = assert_one_line_error(&r);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} created the results directory");
    }
    // with many clients the table names grow: PREFIX100 is 2 bytes longer than PREFIX1
    let p45 = "p".repeat(45);
    let r = ixbench(&[
        "run",
        "--target",
        "postgres://u@127.0.0.1:1/db",
        "--table-prefix",
        &p45,
        "--clients",
        "256",
        "--out",
        o,
    ]);
    let err = assert_one_line_error(&r);
    assert!(err.contains(&format!("{p45}100_registersegment")), "{err}");
}

#[test]
fn a_table_dropped_and_recreated_by_the_user_is_not_ixbenchs() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let target = format!("sqlite:{}", db.display());
    let run = |name: &str, steps: &str| {
        ixbench(&[
            "run",
            "--target",
            &target,
            "--out",
            tmp.path().join(name).to_str().unwrap(),
            "--steps",
            steps,
            "--rows",
            "200",
            "--rows2",
            "100",
        ])
    };
    let o = run("a", "l.i0");
    assert!(o.status.success(), "{:?}", text(&o));
    // ixbench's own table: a second l.i0 drops and re-creates it
    let o = run("b", "l.i0");
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(text(&o)
        .0
        .contains("dropped pi1 left by an earlier ixbench run"));
    // the user drops it and creates their own table under the same name, with the same
    // columns: the record in ixbench_tables still names pi1, but the identity differs
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        let sql: String = c
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'pi1'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(
            sql.contains("/* ixbench:"),
            "the marker is in the definition: {sql}"
        );
        c.execute_batch(
            "DROP TABLE pi1; CREATE TABLE pi1 (transactionid INTEGER PRIMARY KEY, \
             dateandtime TEXT, cashregisterid INT, customerid INT, productid INT, price INT, \
             data TEXT); INSERT INTO pi1 (data) VALUES ('keep me');",
        )
        .unwrap();
        let n: i64 = c
            .query_row(
                "SELECT count(*) FROM ixbench_tables WHERE name = 'pi1'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 1, "the stale record is there");
    }
    for (name, steps) in [("c", "l.i0"), ("d", "l.i1"), ("e", "l.x")] {
        let o = run(name, steps);
        let err = assert_one_line_error(&o);
        assert!(
            err.contains("pi1")
                && err.contains("not created by ixbench")
                && err.contains("identity"),
            "{steps}: {err}"
        );
    }
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        let v: String = c
            .query_row("SELECT data FROM pi1", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, "keep me");
        // the user drops their table: the stale record no longer blocks a new l.i0
        c.execute_batch("DROP TABLE pi1").unwrap();
    }
    let o = run("f", "l.i0");
    assert!(o.status.success(), "{:?}", text(&o));
    // and the ixbench index lab refuses a re-created table as well (--reuse)
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("DROP TABLE pi1; CREATE TABLE pi1 (x INT)")
            .unwrap();
    }
    let o = ixbench(&[
        "index",
        "--target",
        &target,
        "--reuse",
        "--out",
        tmp.path().join("g").to_str().unwrap(),
    ]);
    let err = assert_one_line_error(&o);
    assert!(err.contains("not created by ixbench"), "{err}");
}

#[test]
fn l_x_says_how_it_built_the_indexes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = ixbench(&[
        "run",
        "--out",
        out.to_str().unwrap(),
        "--steps",
        "l.i0,l.x",
        "--rows",
        "2000",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let run = run_json(&out);
    let lx = &run["steps"][1];
    assert!(
        lx["description"]
            .as_str()
            .unwrap()
            .contains("one CREATE INDEX after another"),
        "{lx}"
    );
    let builds = lx["index_builds"].as_array().unwrap();
    assert_eq!(builds.len(), 3);
    // the step's figure: rows / the builds' own seconds
    let secs: f64 = builds.iter().map(|b| b["seconds"].as_f64().unwrap()).sum();
    assert!(
        (lx["seconds"].as_f64().unwrap() - secs).abs() < 1e-9,
        "{lx}"
    );
    let ips = lx["summary"]["ips"].as_f64().unwrap();
    assert!((ips - 2000.0 / secs).abs() < 1e-6 * ips, "{lx}");
    for b in builds {
        assert_eq!(b["indexes"].as_array().unwrap().len(), 1, "{b}");
        assert!(
            b["statement"].as_str().unwrap().starts_with("CREATE INDEX"),
            "{b}"
        );
    }
}

#[test]
fn a_table_recorded_by_an_older_ixbench_without_identity_is_not_dropped() {
    // the record an older ixbench kept: by name only
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("old.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE ixbench_tables (name VARCHAR(64) NOT NULL PRIMARY KEY, \
             created_at VARCHAR(40) NOT NULL, ixbench_version VARCHAR(40) NOT NULL); \
             INSERT INTO ixbench_tables VALUES ('pi1', '2026-01-01T00:00:00Z', '0.0.9'); \
             CREATE TABLE pi1 (x TEXT); INSERT INTO pi1 VALUES ('keep me');",
        )
        .unwrap();
    }
    let r = ixbench(&[
        "run",
        "--target",
        &format!("sqlite:{}", db.display()),
        "--out",
        tmp.path().join("r").to_str().unwrap(),
        "--rows",
        "100",
        "--steps",
        "l.i0",
    ]);
    let err = assert_one_line_error(&r);
    assert!(err.contains("without an identity"), "{err}");
    let c = rusqlite::Connection::open(&db).unwrap();
    let v: String = c.query_row("SELECT x FROM pi1", [], |r| r.get(0)).unwrap();
    assert_eq!(v, "keep me");
    // the record table got its identity column; a new table is recorded with one
    let r = ixbench(&[
        "run",
        "--target",
        &format!("sqlite:{}", db.display()),
        "--out",
        tmp.path().join("r2").to_str().unwrap(),
        "--rows",
        "100",
        "--steps",
        "l.i0",
        "--table-prefix",
        "fresh",
    ]);
    assert!(r.status.success(), "{:?}", text(&r));
    let id: String = c
        .query_row(
            "SELECT identity FROM ixbench_tables WHERE name = 'fresh1'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(id.starts_with("ixbench:"), "{id}");
}

#[test]
fn a_mistyped_target_or_knob_is_caught_before_anything_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let o = out.to_str().unwrap();
    // a target typo is a usage error (exit 2) with a did-you-mean and every target listed
    let r = ixbench(&["run", "--target", "postgress", "--out", o]);
    assert_eq!(r.status.code(), Some(2));
    let err = assert_one_line_error(&r);
    assert!(err.contains("did you mean postgres?"), "{err}");
    for t in ["galera", "spider", "pg-shards", "sqlite:PATH"] {
        assert!(err.contains(t), "{t} missing from: {err}");
    }
    assert!(!out.exists());
    // a URL of another scheme: the message keeps its reason (the redaction once masked it up
    // to the `@` of a form it lists), and no part of the password shows
    let r = ixbench(&[
        "run",
        "--target",
        "http://u:s3cret@127.0.0.1:5432/db",
        "--out",
        o,
    ]);
    assert_eq!(r.status.code(), Some(2));
    let err = assert_one_line_error(&r);
    assert!(
        err.contains("unknown target \"http://u:***@127.0.0.1:5432/db\"")
            && err.contains("postgres://USER@HOST:PORT/DB")
            && !err.contains("s3cret"),
        "{err}"
    );
    // a storage engine given as the target points to --engine
    let r = ixbench(&["run", "--target", "myrocks", "--out", o]);
    assert_eq!(r.status.code(), Some(2));
    let err = assert_one_line_error(&r);
    assert!(
        err.contains("--target mariadb") && err.contains("--engine rocksdb"),
        "{err}"
    );
    assert!(!out.exists());
    // a PRAGMA SQLite does not know (SQLite itself ignores it silently)
    let r = ixbench(&["run", "--sqlite-pragma", "cache_sise=100", "--out", o]);
    assert_ne!(r.status.code(), Some(0));
    let err = assert_one_line_error(&r);
    assert!(err.contains("did you mean cache_size?"), "{err}");
    assert!(!out.exists());
    // a knob the server's program does not know, before a server starts or a directory exists
    let cases = [
        (
            "postgres",
            "maintenance_work_meme=1MB,2MB",
            "maintenance_work_mem",
        ),
        (
            "mariadb",
            "innodb_sort_bufer_size=1M,2M",
            "innodb_sort_buffer_size",
        ),
    ];
    for (target, knob, meant) in cases {
        let kind = if target == "postgres" {
            ixbench::server::ServerKind::Postgres
        } else {
            ixbench::server::ServerKind::Mariadb
        };
        if ixbench::server::check_installed(kind).is_err()
            && skip::<()>(
                "a_mistyped_target_or_knob",
                &format!("{target} not installed"),
            )
            .is_none()
        {
            continue;
        }
        for cmd in ["index", "ddl"] {
            let r = ixbench(&[cmd, "--target", target, "--knob", knob, "--out", o]);
            assert_eq!(r.status.code(), Some(1), "{cmd} {target}");
            let err = assert_one_line_error(&r);
            assert!(
                err.contains(&format!("did you mean {meant}?")),
                "{cmd}: {err}"
            );
            assert!(
                !out.exists(),
                "{cmd} {target} created the results directory"
            );
        }
    }
    // a known knob passes the check (and the run is then refused for another reason here)
    let r = ixbench(&[
        "index",
        "--target",
        "postgres",
        "--knob",
        "work_mem=1MB",
        "--reuse",
        "--out",
        o,
    ]);
    let (_, err) = text(&r);
    assert!(!err.contains("has no setting"), "{err}");
}

#[test]
fn server_list_runs_and_stop_names_the_datadir_below() {
    let r = ixbench(&["server", "list"]);
    assert_eq!(r.status.code(), Some(0), "{:?}", text(&r));
    // a results directory holding a data directory: stop names the one below
    let tmp = tempfile::tempdir().unwrap();
    let dd = tmp.path().join("postgres-data");
    std::fs::create_dir_all(&dd).unwrap();
    std::fs::write(dd.join("PG_VERSION"), "15\n").unwrap();
    let r = ixbench(&["server", "stop", tmp.path().to_str().unwrap()]);
    let err = assert_one_line_error(&r);
    assert!(
        err.contains("is not a data directory; the server's is"),
        "{err}"
    );
    assert!(err.contains("postgres-data"), "{err}");
}

/// A command that only uses what a SQLite database holds (`--reuse`, `--from-table`) refuses a
/// file that does not exist, and creates neither it nor a results directory (it left an empty
/// database in its place).
#[test]
fn reading_a_sqlite_file_that_does_not_exist_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("nope.db");
    let target = format!("sqlite:{}", db.display());
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    for (args, what) in [
        (vec!["index", "--reuse"], "--reuse"),
        (vec!["oltp", "--reuse"], "--reuse"),
        (vec!["ddl", "--reuse"], "--reuse"),
        (
            vec!["index", "--from-table", "t", "--index", "a: x"],
            "--from-table t",
        ),
    ] {
        let mut a = args.clone();
        a.extend(["--target", &target, "--size", "smoke", "--out", o]);
        let r = ixbench(&a);
        assert_eq!(r.status.code(), Some(1), "{args:?}");
        let err = assert_one_line_error(&r);
        assert!(
            err.contains(&format!(
                "{what}: the database {} does not exist",
                db.display()
            )),
            "{args:?}: {err}"
        );
        assert!(!db.exists(), "{args:?} created {}", db.display());
        assert!(!out.exists(), "{args:?} created the results directory");
    }
}

/// A method that cannot work on an embedded target (pt-osc, pg_repack, PostgreSQL's own
/// rebuilds on SQLite) is refused before anything is written (it printed a header and
/// `results: DIR`, left an empty run, then refused).
#[test]
fn a_method_the_embedded_target_cannot_run_is_refused_first() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    for (args, want) in [
        (
            vec!["ddl", "--method", "pt-osc"],
            "pt-online-schema-change works on MySQL and MariaDB; this target is SQLite",
        ),
        (
            vec!["ddl", "--method", "vacuum-full", "--ddl", "rebuild"],
            "--method vacuum-full is PostgreSQL's statement; this target is SQLite",
        ),
    ] {
        let mut a = args.clone();
        a.extend(["--size", "smoke", "--out", o]);
        let r = ixbench(&a);
        assert_eq!(r.status.code(), Some(1), "{args:?}");
        let err = assert_one_line_error(&r);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(
            String::from_utf8_lossy(&r.stdout).trim().is_empty(),
            "{args:?} printed"
        );
        assert!(!out.exists(), "{args:?} created the results directory");
    }
}

/// `compare A -- B --html F`: a flag after `--` is named as a flag in the wrong place (the
/// message said `--html does not exist`).
#[test]
fn a_flag_after_the_runs_separator_is_named_so() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let r = ixbench(&[
        "compare",
        a.to_str().unwrap(),
        "--",
        b.to_str().unwrap(),
        "--html",
        "f.html",
    ]);
    assert_ne!(r.status.code(), Some(0));
    let err = assert_one_line_error(&r);
    assert!(
        err.contains("--html: after `--` every argument is a run"),
        "{err}"
    );
}

#[test]
fn a_child_command_of_ab_without_dashes_is_shown_in_the_right_form() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ab");
    let o = out.to_str().unwrap();
    let r = ixbench(&[
        "ab",
        "--out",
        o,
        "--side",
        "a:",
        "--side",
        "b: --set x=1",
        "run",
        "--size",
        "smoke",
    ]);
    let err = assert_one_line_error(&r);
    let line = err
        .split("after '--', last: ")
        .nth(1)
        .and_then(|t| t.split(" (see 'ixbench --help')").next())
        .unwrap_or_else(|| panic!("no command line in the hint: {err}"))
        .trim()
        .to_string();
    let words = shlex::split(&line).expect("the hint's line splits like a shell's");
    assert_eq!(
        words.iter().skip_while(|w| *w != "--").collect::<Vec<_>>(),
        ["--", "run", "--size", "smoke"],
        "{line}"
    );
    ixbench::cmd::check_command_line(words.clone())
        .unwrap_or_else(|e| panic!("the advised {line:?} does not parse: {e}"));
    assert!(!out.exists(), "{err}");
}

/// Every `--flag` an error message's advice names ("use --table-prefix", "give --order-by")
/// is one some ixbench command takes: the advice in `src/` read as text, the flags from the
/// command table itself.
#[test]
fn every_flag_advised_in_an_error_exists() {
    use clap::CommandFactory;
    fn flags(c: &clap::Command, out: &mut std::collections::BTreeSet<String>) {
        for a in c.get_arguments() {
            if let Some(l) = a.get_long() {
                out.insert(format!("--{l}"));
            }
            for l in a.get_all_aliases().unwrap_or_default() {
                out.insert(format!("--{l}"));
            }
        }
        for s in c.get_subcommands() {
            flags(s, out);
        }
    }
    let mut known = std::collections::BTreeSet::new();
    flags(&ixbench::cmd::Cli::command(), &mut known);
    let advice = regex_lite_advice();
    let mut wrong = Vec::new();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut dirs = vec![src];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let mut seen = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if t.starts_with("//") || !t.contains('"') {
                continue;
            }
            for flag in advice(line) {
                seen += 1;
                if !known.contains(&flag) {
                    wrong.push(format!("{}:{}: {flag}: {}", f.display(), n + 1, t));
                }
            }
        }
    }
    assert!(
        seen > 10,
        "only {seen} advised flags found: the scan is broken"
    );
    assert!(
        wrong.is_empty(),
        "advice naming flags no command takes:\n{}",
        wrong.join("\n")
    );
}

/// The flags advised in a line: `--flag` after "use", "give", "add", "try", "pass", "set", "or",
/// "see" (optionally in backquotes).
fn regex_lite_advice() -> impl Fn(&str) -> Vec<String> {
    |line: &str| {
        const WORDS: [&str; 8] = ["use", "give", "add", "try", "pass", "set", "or", "see"];
        let toks: Vec<&str> = line.split_whitespace().collect();
        let mut out = Vec::new();
        for w in toks.windows(2) {
            let verb = w[0].trim_matches(|c: char| !c.is_ascii_alphabetic());
            let flag = w[1].trim_start_matches(['`', '\'', '(']);
            if !WORDS.contains(&verb.to_ascii_lowercase().as_str()) || !flag.starts_with("--") {
                continue;
            }
            let name: String = flag[2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            // `cargo build --release`, a server's own `--version` are not ixbench's advice
            if !name.is_empty()
                && !["release", "locked", "path", "version"].contains(&name.as_str())
            {
                out.push(format!("--{name}"));
            }
        }
        out
    }
}

/// `index --rebuilds WORD`: a word that chooses no rebuild is an error naming it and the
/// rebuilds there are; a word that chooses one times that one only, on the insert benchmark's
/// table too (it was ignored there); the refusal comes before the results directory is made
/// (issue 29).
#[test]
fn a_rebuilds_filter_that_matches_nothing_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let index = |dir: &str, words: &str| {
        let out = tmp.path().join(dir);
        let o = out.to_str().unwrap();
        let r = ixbench(&[
            "index",
            "--out",
            o,
            "--target",
            "sqlite",
            "--rows",
            "1000",
            "--builds",
            "all",
            "--rebuild",
            "--rebuilds",
            words,
        ]);
        (r, out)
    };
    let (r, none) = index("none", "vacuum,nosuch");
    let err = assert_one_line_error(&r);
    assert!(
        err.contains("\"nosuch\"") && err.contains("VACUUM") && err.contains("REINDEX"),
        "{err}"
    );
    // Refused before anything is written: no results directory (issue 29).
    assert!(!none.exists(), "{} was made", none.display());
    let (r, out) = index("vacuum", "vacuum");
    assert!(r.status.success(), "{:?}", text(&r));
    let run = run_json(&out);
    let rebuilds: Vec<&str> = run["builds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["mode"] == "rebuild")
        .map(|b| b["build"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(rebuilds, ["VACUUM"], "{run:#}");
}

/// Errors whose message advises a flag: the command run again with that flag (as the advice
/// says) is accepted and does not hit the same error (issue 29).
#[test]
fn following_an_errors_advice_gets_past_it() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();
    let keys = p("keys.txt");
    let text_keys: String = (0..300).map(|i| format!("k{i:04}\n")).collect();
    std::fs::write(&keys, text_keys).unwrap();
    let db = p("user.db");
    let url = format!("sqlite:{db}");
    {
        let t = ixbench::dbms::open(
            &ixbench::dbms::TargetSpec::parse(&url).unwrap(),
            &ixbench::dbms::TargetOptions::default(),
        )
        .unwrap();
        let mut c = t.connect().unwrap();
        c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER)")
            .unwrap();
        c.execute("INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)")
            .unwrap();
        c.execute("CREATE TABLE u AS SELECT * FROM t").unwrap();
        // not ixbench's: its name is u's copy's with the default prefix
        c.execute("CREATE TABLE picopy_u (x INTEGER)").unwrap();
    }
    let existing = p("existing");
    std::fs::create_dir(&existing).unwrap();
    std::fs::write(tmp.path().join("existing/run.json"), "{}").unwrap();
    // (the command, its --out and the --out of the command as advised (none: no --out), the
    // flag its error advises, what the advice adds)
    let none = (String::new(), String::new());
    type Case<'a> = (Vec<&'a str>, (String, String), &'a str, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        (
            vec!["pattern", "infer", &keys],
            none,
            "--compare text",
            vec!["--compare", "text"],
        ),
        (
            vec!["index", "--target", "sqlite", "--rows", "100"],
            (existing.clone(), p("o1")),
            "--out",
            vec![],
        ),
        (
            vec!["index", "--target", &url, "--from-table", "t"],
            (p("o2"), p("o3")),
            "--rebuild",
            vec!["--rebuild"],
        ),
        (
            vec!["index", "--target", &url, "--from-table", "u", "--rebuild"],
            (p("o4"), p("o5")),
            "--table-prefix",
            vec!["--table-prefix", "qq"],
        ),
    ];
    for (base, (out, fixed_out), flag, extra) in cases {
        let mut args = base.clone();
        let mut fixed = base;
        if !out.is_empty() {
            args.extend(["--out", out.as_str()]);
            fixed.extend(["--out", fixed_out.as_str()]);
        }
        fixed.extend(extra);
        let r = ixbench(&args);
        assert!(!r.status.success(), "{args:?} did not fail: {:?}", text(&r));
        let err = assert_one_line_error(&r);
        assert!(
            err.contains(flag),
            "{args:?}: the advice names no {flag}: {err}"
        );
        let r = ixbench(&fixed);
        let (_, fixed_err) = text(&r);
        let head: String = err.chars().take(40).collect();
        assert!(
            r.status.success() && !fixed_err.contains(&head),
            "{fixed:?}, as {err:?} advises, failed: {fixed_err}"
        );
    }
}
