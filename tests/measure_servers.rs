//! The measuring path against real throwaway servers: a PostgreSQL server stopped with SIGSTOP
//! for a second in the middle of a rate-limited step shows in the writer's max and p99 and in
//! an interval line; a server that stays stopped makes the step fail at `--stall-timeout` with
//! every later line marked STALLED; two clients share one table on PostgreSQL and MariaDB.
//!
//! Without the server binaries a test prints `SKIPPED <name>: <why>` and returns; with
//! `CI=true` it fails instead.

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{intervals, run_json, text};
use ixbench::server::{self, ServerKind};
use serde_json::Value;

/// A throwaway server, stopped when dropped (also when the test panics).
/// A PostgreSQL server the test may stop with SIGSTOP: let it go on (SIGCONT) before it is
/// stopped.
struct Srv(common::TestServer);

impl Srv {
    fn url(&self) -> String {
        self.0.url()
    }

    /// Send `sig` to every process of the server (the postmaster and its backends).
    fn signal(&self, sig: &str) {
        for pid in self.0.pids() {
            let _ = Command::new("kill").args([sig, &pid.to_string()]).status();
        }
    }
}

impl Drop for Srv {
    fn drop(&mut self) {
        self.signal("-CONT");
    }
}

fn installed(kind: ServerKind, test: &str) -> bool {
    match server::check_installed(kind) {
        Ok(()) => true,
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("{test}: {e:#}; CI=true: the server must be installed")
        }
        Err(e) => {
            eprintln!("SKIPPED {test}: {e:#}");
            false
        }
    }
}

fn start_pg(test: &str) -> Option<Srv> {
    common::start_server(test, ServerKind::Postgres, false).map(Srv)
}

fn show(o: &Output) -> String {
    let (out, err) = text(o);
    format!("stdout:\n{out}\nstderr:\n{err}")
}

/// Lines of `step` in intervals.ndjson.
fn lines_of(out: &Path, step: &str) -> Vec<Value> {
    intervals(out)
        .into_iter()
        .filter(|l| l["step"] == step)
        .collect()
}

/// Wait until `step` has written `n` lines (or panic after `limit`).
fn wait_lines(out: &Path, step: &str, n: usize, limit: Duration) {
    let t0 = Instant::now();
    loop {
        let have = std::fs::read_to_string(out.join("intervals.ndjson"))
            .map(|s| {
                s.lines()
                    .filter(|l| l.contains(&format!("\"step\":\"{step}\"")))
                    .count()
            })
            .unwrap_or(0);
        if have >= n {
            return;
        }
        assert!(t0.elapsed() < limit, "{step} never wrote {n} lines");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn step<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

fn latency<'a>(s: &'a Value, op: &str) -> &'a Value {
    &s["latency"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["op"] == op)
        .unwrap_or_else(|| panic!("no {op} latency"))["latency"]
}

#[test]
fn a_one_second_sigstop_shows_in_the_writer_max_p99_and_one_line() {
    let test = "a_one_second_sigstop_shows_in_the_writer_max_p99_and_one_line";
    let Some(pg) = start_pg(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let child = Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args([
            "run",
            "--target",
            &pg.url(),
            "--out",
            out.to_str().unwrap(),
            "--steps",
            "l.i0,qp100",
            "--rows",
            "5000",
            "--secondary-indexes",
            "0",
            "--rw-rows-per-commit",
            "10",
            "--query-seconds",
            "4",
            "--interval",
            "0.1",
            "--table-prefix",
            "mstall",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_lines(&out, "qp100", 12, Duration::from_secs(60));
    pg.signal("-STOP");
    std::thread::sleep(Duration::from_secs(1));
    pg.signal("-CONT");
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let run = run_json(&out);
    let s = step(&run, "qp100");
    assert_eq!(s["status"], "ok", "{s}");
    // Inserts are due every 100 ms: those due during the stop waited up to a second.
    let ins = latency(s, "insert");
    assert!(ins["max_us"].as_u64().unwrap() >= 850_000, "{ins}");
    assert!(ins["p99_us"].as_u64().unwrap() >= 500_000, "{ins}");
    let lines = lines_of(&out, "qp100");
    assert!(
        lines
            .iter()
            .any(|l| l["max_i"].as_u64().unwrap() >= 850_000
                || l["max_q"].as_u64().unwrap() >= 850_000),
        "no line shows the stall"
    );
    // The paced writers fell behind during it: 20 writes due per second per client.
    assert!(
        lines.iter().all(|l| l["backlog"].is_u64())
            && lines.iter().any(|l| l["backlog"].as_u64().unwrap() >= 10),
        "no line shows the writers' backlog"
    );
    // A second without completions is not a stall timeout, but the lines of it say STALLED
    // only once a full second has passed: at most a few.
    assert!(s["flow"]["longest_stall_secs"].as_f64().unwrap() >= 0.85);
    assert_eq!(s["flow"]["stall_timed_out"], false);
    // The lines add up on a server too, with max exactly where there are operations.
    let (mut ins_rows, mut q) = (0u64, 0u64);
    for l in &lines {
        let di = l["t_ins"].as_u64().unwrap() - ins_rows;
        let dq = l["t_query"].as_u64().unwrap() - q;
        (ins_rows, q) = (l["t_ins"].as_u64().unwrap(), l["t_query"].as_u64().unwrap());
        assert_eq!(l["max_i"].as_u64().unwrap() > 0, di > 0, "{l}");
        assert_eq!(l["max_q"].as_u64().unwrap() > 0, dq > 0, "{l}");
    }
    assert_eq!(ins_rows, s["totals"]["rows"][0]);
    assert_eq!(q, s["totals"]["ops"][2]);
    for c in s["checks"].as_array().unwrap() {
        assert_eq!(c["ok"], true, "{c}");
    }
}

#[test]
fn a_server_that_stays_stopped_fails_the_step_at_the_stall_timeout() {
    let test = "a_server_that_stays_stopped_fails_the_step_at_the_stall_timeout";
    let Some(pg) = start_pg(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args([
            "run",
            "--target",
            &pg.url(),
            "--out",
            out.to_str().unwrap(),
            "--steps",
            "l.i0,qp100",
            "--rows",
            "5000",
            "--secondary-indexes",
            "0",
            "--query-seconds",
            "60",
            "--interval",
            "0.5",
            "--stall-timeout",
            "3",
            "--table-prefix",
            "mstop",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_lines(&out, "qp100", 2, Duration::from_secs(60));
    pg.signal("-STOP");
    let stopped = Instant::now();
    // Bounded: the stall timeout, a second for the workers, the socket shutdown.
    let mut code = None;
    while stopped.elapsed() < Duration::from_secs(20) {
        if let Some(c) = child.try_wait().unwrap() {
            code = Some(c);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let took = stopped.elapsed();
    if code.is_none() {
        let _ = child.kill();
    }
    let o = child.wait_with_output().unwrap();
    pg.signal("-CONT");
    let code = code.unwrap_or_else(|| panic!("ixbench still running 20 s after the stop"));
    assert!(!code.success(), "{}", show(&o));
    let (_, err) = text(&o);
    let err_lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(err_lines.len(), 1, "{err}");
    assert!(err.contains("no operation completed for"), "{err}");
    assert!(took >= Duration::from_secs(3), "{took:?}");
    let run = run_json(&out);
    assert_eq!(run["status"], "failed");
    let s = step(&run, "qp100");
    assert_eq!(s["status"], "failed");
    assert_eq!(s["flow"]["stall_timed_out"], true);
    assert!(s["error"].as_str().unwrap().contains("stall-timeout"));
    // Every line after the first one marked says STALLED, with a growing stall, and so does
    // the printed output.
    let lines = lines_of(&out, "qp100");
    let first = lines
        .iter()
        .position(|l| !l["stalled_secs"].is_null())
        .expect("a line marked stalled");
    assert!(
        lines.len() - first >= 4,
        "{} lines marked",
        lines.len() - first
    );
    let mut prev = 0.0;
    for l in &lines[first..] {
        let st = l["stalled_secs"]
            .as_f64()
            .expect("every later line is marked");
        assert!(st >= 1.0 && st >= prev, "{l}");
        prev = st;
    }
    let (stdout, _) = text(&o);
    assert!(stdout.contains("\tSTALLED "), "{stdout}");
}

fn shared_table_run(target: &str, test: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args([
            "run",
            "--target",
            target,
            "--out",
            out.to_str().unwrap(),
            "--steps",
            "l.i0,l.x,l.i1,l.i2,qr100",
            "--clients",
            "2",
            "--shared-table",
            "--rows",
            "4000",
            "--rows2",
            "4000",
            "--rows-per-commit-i1",
            "20",
            "--query-seconds",
            "1",
            "--interval",
            "0.2",
            "--rm",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{test}: {}", show(&o));
    let run = run_json(&out);
    let steps = common::assert_all_ok(&run);
    // 2 clients x 3200 and 800 rows, each deleted once
    assert_eq!(steps[2]["totals"]["rows"][1], 6_400);
    assert_eq!(steps[3]["totals"]["rows"][1], 1_600);
    for s in &steps[2..] {
        let f = &s["flow"];
        assert!(f["max_excess_rows"].as_u64().unwrap() <= 50, "{f}");
    }
}

#[test]
fn two_clients_share_a_table_on_postgres() {
    let test = "two_clients_share_a_table_on_postgres";
    if installed(ServerKind::Postgres, test) {
        shared_table_run("postgres", test);
    }
}

#[test]
fn two_clients_share_a_table_on_mariadb() {
    let test = "two_clients_share_a_table_on_mariadb";
    if installed(ServerKind::Mariadb, test) {
        shared_table_run("mariadb", test);
    }
}

/// Spawn `ixbench ARGS`, wait until `needle` (a quoted JSON string) is in `n` lines of
/// intervals.ndjson, stop the server for one second (SIGSTOP, then SIGCONT), and return the
/// finished run's output.
fn stall_during(pg: &Srv, args: &[&str], out: &Path, needle: &str, n: usize) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        let have = std::fs::read_to_string(out.join("intervals.ndjson"))
            .map(|s| s.lines().filter(|l| l.contains(needle)).count())
            .unwrap_or(0);
        if have >= n {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "{needle} never in {n} lines"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    pg.signal("-STOP");
    std::thread::sleep(Duration::from_secs(1));
    pg.signal("-CONT");
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", show(&o));
    o
}

/// A one-second SIGSTOP of the server under `oltp`, `timeseries` and `ddl` (open loops at a
/// fixed rate, on the one measuring loop): the transactions due during the stop waited for
/// it, from their intended starts, so the stop is in each command's max and p99 and in one
/// interval line, and in the backlog of that line. (`run` is the test above.)
#[test]
fn a_one_second_sigstop_shows_under_oltp_timeseries_and_ddl() {
    let test = "a_one_second_sigstop_shows_under_oltp_timeseries_and_ddl";
    let Some(pg) = start_pg(test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let url = pg.url();
    // Lines of 0.2 s: the stop fills at least four of them.
    let stalled_line = |lines: &[Value], max: &str| {
        lines
            .iter()
            .find(|l| l[max].as_u64().unwrap_or(0) >= 850_000)
            .cloned()
            .unwrap_or_else(|| panic!("no line shows the stop: {lines:?}"))
    };

    // oltp: 6 s at 100 TPS, the stop after 2 s.
    let out = tmp.path().join("oltp");
    let o = out.to_str().unwrap();
    let args = [
        "oltp",
        "--target",
        &url,
        "--out",
        o,
        "--tables",
        "1",
        "--table-size",
        "1000",
        "--threads",
        "2",
        "--rate",
        "100",
        "--time",
        "6",
        "--interval",
        "0.2",
    ];
    stall_during(&pg, &args, &out, "\"step\":\"oltp_read_write\"", 10);
    let run = run_json(&out);
    let r = &run["oltp"][0];
    let lat = &r["latency"];
    assert!(lat["max_us"].as_u64().unwrap() >= 900_000, "oltp: {lat}");
    // A sixth of the transactions were due during the stop: the top 1% waited most of it.
    assert!(lat["p99_us"].as_u64().unwrap() >= 500_000, "oltp: {lat}");
    let lines = intervals(&out);
    let l = stalled_line(&lines, "max_us");
    assert!(l["backlog"].as_u64().is_some(), "oltp: {l}");
    assert!(
        lines
            .iter()
            .any(|l| l["backlog"].as_u64().unwrap_or(0) >= 50),
        "oltp: the stop left no backlog in any line"
    );

    // timeseries: the same shape of run.
    let out = tmp.path().join("ts");
    let o = out.to_str().unwrap();
    let args = [
        "timeseries",
        "--target",
        &url,
        "--out",
        o,
        "--devices",
        "20",
        "--metrics",
        "2",
        "--rows-per-commit",
        "10",
        "--threads",
        "2",
        "--rate",
        "100",
        "--time",
        "6",
        "--interval",
        "0.2",
        "--queries",
        "1",
    ];
    stall_during(&pg, &args, &out, "\"step\":\"timeseries\"", 10);
    let run = run_json(&out);
    let lat = &run["timeseries"][0]["latency"];
    assert!(
        lat["max_us"].as_u64().unwrap() >= 900_000,
        "timeseries: {lat}"
    );
    assert!(
        lat["p99_us"].as_u64().unwrap() >= 500_000,
        "timeseries: {lat}"
    );
    let lines: Vec<Value> = intervals(&out)
        .into_iter()
        .filter(|l| l["step"] == "timeseries")
        .collect();
    stalled_line(&lines, "max_us");

    // ddl: the stop in the steady state after the DDL (4 s of it at 100 TPS).
    let out = tmp.path().join("ddl");
    let o = out.to_str().unwrap();
    let args = [
        "ddl",
        "--target",
        &url,
        "--out",
        o,
        "--table-size",
        "2000",
        "--threads",
        "2",
        "--rate",
        "100",
        "--baseline-seconds",
        "2",
        "--recovery-seconds",
        "5",
        "--interval",
        "0.2",
        "--quiet-timeout",
        "5",
        // the stop may leave the after window with no verdict: not what this test is about
        "--pass-on",
        "no-verdict",
    ];
    stall_during(&pg, &args, &out, "\"after\"", 3);
    let run = run_json(&out);
    let p = &run["ddl"]["points"][0];
    let after = &p["impact"]["after"];
    assert!(after["max_us"].as_u64().unwrap() >= 900_000, "ddl: {after}");
    assert!(after["p99_us"].as_u64().unwrap() >= 500_000, "ddl: {after}");
    let tl = p["timeline"].as_array().unwrap();
    let l = stalled_line(tl, "max_us");
    assert_eq!(l["window"], "after", "{l}");
    assert!(
        tl.iter().any(|r| r["backlog"].as_u64().unwrap_or(0) >= 50),
        "ddl: the stop left no backlog in any row"
    );
}
