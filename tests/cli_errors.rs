//! Bad input and faults: a clear one-line error, a non-zero exit, no panic, and nothing lost
//! (finished steps and intervals stay on disk); tables ixbench did not create are never touched.

mod common;

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
