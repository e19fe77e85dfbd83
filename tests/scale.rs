//! Several ixbench processes as one run (`--client-id K --client-count N --start-at T`) against
//! one database, and `ixbench merge`: merged totals are the sums, merged percentiles those of
//! one HDR histogram of every sample, interval lines on one time grid; bad parts are refused.
//! The parts meet before every step (the barrier in the target database): a part held up by a
//! real lock makes the others wait, every step starts together, and merged rates are the sum
//! of the parts' rates over the window in which all of them ran.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::scale::{merge_and_check, now, run_parts};
use common::{assert_one_line_error, intervals, ixbench, run_json, text};
use ixbench::server::ServerKind;
use serde_json::Value;

#[test]
fn sqlite_three_processes_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.sqlite");
    let target = format!("sqlite:{}", db.display());
    let parts = run_parts(
        dir.path(),
        &target,
        3,
        &[
            "--steps",
            "l.i0,l.x,qr50",
            "--rows",
            "3000",
            "--rows-per-commit",
            "50",
            "--query-seconds",
            "2",
            "--interval",
            "0.5",
        ],
    );
    let m = merge_and_check(dir.path(), &parts);
    // The time grid: l.i0 of three processes started together.
    assert_eq!(m["steps"][0]["totals"]["rows"][0].as_u64().unwrap(), 9000);
    // report works on the merged run
    let o = ixbench(&["report", dir.path().join("merged").to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
}

#[test]
fn postgres_two_processes() {
    let Some(s) = common::start_server("scale postgres", ServerKind::Postgres, false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let parts = run_parts(
        dir.path(),
        &s.url(),
        2,
        &[
            "--steps",
            "l.i0,l.x,qp100",
            "--rows",
            "5000",
            "--clients",
            "2",
            "--query-seconds",
            "2",
            "--interval",
            "0.5",
        ],
    );
    let m = merge_and_check(dir.path(), &parts);
    assert_eq!(m["config"]["clients"], 4);
    assert_eq!(m["steps"][0]["totals"]["rows"][0].as_u64().unwrap(), 20_000);
}

fn null_part(base: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = base.join(name);
    let mut a = vec![
        "run",
        "--steps",
        "l.i0",
        "--rows",
        "1000",
        "--out",
        out.to_str().unwrap(),
    ];
    if !extra.contains(&"--target") {
        a.extend(["--target", "null"]);
    }
    a.extend_from_slice(extra);
    let o = ixbench(&a);
    assert!(o.status.success(), "{:?}", text(&o));
    out
}

#[test]
fn bad_parts_and_flags_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |s: &Path| s.to_str().unwrap().to_string();
    let a0 = null_part(d, "a0", &["--client-id", "0", "--client-count", "2"]);
    let a0b = null_part(d, "a0b", &["--client-id", "0", "--client-count", "2"]);
    let a1 = null_part(d, "a1", &["--client-id", "1", "--client-count", "2"]);
    let b1 = null_part(d, "b1", &["--client-id", "1", "--client-count", "3"]);
    let c1 = null_part(
        d,
        "c1",
        &[
            "--client-id",
            "1",
            "--client-count",
            "2",
            "--rows-per-commit",
            "10",
        ],
    );
    let alone = null_part(d, "alone", &[]);
    let s1 = null_part(
        d,
        "s1",
        &["--client-id", "1", "--client-count", "2", "--seed", "5"],
    );
    let db = d.join("t.sqlite");
    let t1 = null_part(
        d,
        "t1",
        &[
            "--client-id",
            "1",
            "--client-count",
            "2",
            "--target",
            &format!("sqlite:{}", db.display()),
        ],
    );
    let out = p(&d.join("m"));
    let merge = |runs: &[&PathBuf]| {
        let mut a = vec!["merge".to_string()];
        a.extend(runs.iter().map(|r| p(r)));
        a.extend(["-o".to_string(), out.clone()]);
        ixbench(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    for (runs, want) in [
        (vec![&a0, &a0b], "overlapping parts"),
        (vec![&a0, &a0], "overlapping parts"),
        (vec![&a0, &b1], "mismatched --client-count"),
        (vec![&a0, &c1], "different plans"),
        (vec![&a0, &s1], "different seeds"),
        (vec![&a0, &t1], "different targets"),
        (vec![&a0, &alone], "not part of a several-process run"),
        (vec![&a0], "at least two"),
    ] {
        let e = assert_one_line_error(&merge(&runs));
        assert!(e.contains(want), "{runs:?}: {e}");
        assert!(!d.join("m").exists());
    }
    // A missing part: count 3 with two parts given.
    let b0 = null_part(d, "b0", &["--client-id", "0", "--client-count", "3"]);
    let e = assert_one_line_error(&merge(&[&b0, &b1]));
    assert!(
        e.contains("missing parts") && e.contains("--client-id 2"),
        "{e}"
    );
    // The good pair merges.
    assert!(merge(&[&a1, &a0]).status.success());

    // Bad flags of run.
    let past = format!("{}", now() as u64 - 60);
    for (extra, want) in [
        (vec!["--client-id", "2", "--client-count", "2"], "0..1"),
        (vec!["--client-id", "0"], "--client-count"),
        (
            vec!["--client-id", "0", "--client-count", "2", "--shared-table"],
            "shared-table",
        ),
        (vec!["--start-at", past.as_str()], "in the past"),
        (vec!["--start-at", "soon"], "RFC 3339"),
    ] {
        let mut a = vec!["run", "--target", "null", "--steps", "l.i0", "--rows", "10"];
        a.extend_from_slice(&extra);
        let e = assert_one_line_error(&ixbench(&a));
        assert!(e.contains(want), "{extra:?}: {e}");
    }
}

fn spawn_part(args: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ixbench starts")
}

/// The arguments of part `k` of `n` of a run starting at `at`.
fn part_args(base: &Path, target: &str, k: u64, n: u64, at: f64, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "run",
        "--target",
        target,
        "--client-id",
        &k.to_string(),
        "--client-count",
        &n.to_string(),
        "--start-at",
        &format!("{at:.3}"),
        "--out",
        base.join(format!("part{k}")).to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// A step's interval lines in a results directory.
fn lines_of(dir: &Path, step: &str) -> Vec<Value> {
    intervals(dir)
        .into_iter()
        .filter(|l| l["step"] == step)
        .collect()
}

/// (start, end) of a part's step from its interval lines (Unix seconds).
fn span_of(lines: &[Value]) -> (f64, f64) {
    let last = lines.last().expect("interval lines");
    let end = last["at"].as_f64().unwrap();
    (end - last["t_sec"].as_f64().unwrap(), end)
}

/// A part's rows inserted and queries within `[from, to]`, from its own interval lines: whole
/// lines inside, lines cut by an edge in proportion (the test's own reading of the parts'
/// files, which `merge` must agree with).
fn part_counts(lines: &[Value], from: f64, to: f64) -> (f64, f64) {
    let (mut ins, mut q, mut prev) = (0.0, 0.0, (0u64, 0u64));
    for l in lines {
        let end = l["at"].as_f64().unwrap();
        let len = l["i_sec"].as_f64().unwrap();
        let share = ((end.min(to) - (end - len).max(from)).max(0.0)) / len;
        let (ti, tq) = (l["t_ins"].as_u64().unwrap(), l["t_query"].as_u64().unwrap());
        ins += share * (ti - prev.0) as f64;
        q += share * (tq - prev.1) as f64;
        prev = (ti, tq);
    }
    (ins, q)
}

/// The checks of a merged step against its parts: the rates are the sum of the parts' rates
/// over the common window (within 2%), and the parts' steps started together.
fn check_together(parts: &[PathBuf], merged: &Value, step: &str) {
    let s = merged["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == step)
        .unwrap();
    let lines: Vec<Vec<Value>> = parts.iter().map(|p| lines_of(p, step)).collect();
    let spans: Vec<(f64, f64)> = lines.iter().map(|l| span_of(l)).collect();
    let c0 = spans.iter().map(|s| s.0).fold(f64::MIN, f64::max);
    let c1 = spans.iter().map(|s| s.1).fold(f64::MAX, f64::min);
    assert!(c1 > c0, "{step}: the parts never ran together: {spans:?}");
    let (mut ins, mut q) = (0.0, 0.0);
    for l in &lines {
        let (i, qq) = part_counts(l, c0, c1);
        ins += i / (c1 - c0);
        q += qq / (c1 - c0);
    }
    let near = |got: f64, want: f64| (got - want).abs() <= 0.02 * want.max(1.0);
    let sum = &s["summary"];
    assert!(
        near(sum["qps"].as_f64().unwrap(), q),
        "{step}: merged qps {} vs the parts' {q:.1} over the common window",
        sum["qps"]
    );
    assert!(
        near(sum["ips"].as_f64().unwrap(), ins),
        "{step}: merged ips {} vs the parts' {ins:.1} over the common window",
        sum["ips"]
    );
    let w = &s["common_window"];
    assert!(
        (w["seconds"].as_f64().unwrap() - (c1 - c0)).abs() < 1e-6,
        "{w}"
    );
    // The barrier: one release for every part, each woke within 0.1 s of it (a sleep's
    // overshoot on a loaded machine), and the steps' first operations within 0.5 s of each
    // other (each part's own set-up between the release and its workers: a counters query,
    // threads and connections started).
    let stamps: Vec<Value> = parts
        .iter()
        .map(|p| {
            let r = run_json(p);
            r["steps"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == step)
                .unwrap()["barrier"]
                .clone()
        })
        .collect();
    let r0 = stamps[0]["released_unix"].as_f64().expect("barrier stamps");
    for b in &stamps {
        assert_eq!(
            b["released_unix"].as_f64().unwrap(),
            r0,
            "{step}: {stamps:?}"
        );
        let late = b["started_unix"].as_f64().unwrap() - r0;
        assert!(
            (0.0..0.1).contains(&late),
            "{step}: woke {late} s after the release"
        );
    }
    let starts: Vec<f64> = spans.iter().map(|s| s.0).collect();
    let spread = starts.iter().fold(f64::MIN, |a, b| a.max(*b))
        - starts.iter().fold(f64::MAX, |a, b| a.min(*b));
    assert!(
        spread < 0.5,
        "{step}: starts {spread:.3} s apart: {starts:?}"
    );
    // The old failure: the merged rate is the parts' rates added, not their counts spread over
    // the union of steps that ran at different times.
    let own: f64 = parts
        .iter()
        .map(|p| {
            let r = run_json(p);
            r["steps"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == step)
                .unwrap()["summary"]["qps"]
                .as_f64()
                .unwrap()
        })
        .sum();
    let merged_qps = sum["qps"].as_f64().unwrap();
    assert!(
        merged_qps >= 0.9 * own,
        "{step}: merged {merged_qps:.0} q/s where the parts ran {own:.0} q/s together"
    );
}

/// `n` parts against a server where the last part's table is held by a lock for a few
/// seconds (`lock` takes it on `piN`, `unlock` ends it): its l.i0 cannot drop the table an
/// earlier run left, so it starts late; the others wait for it before qp100, which then starts
/// together on every part.
fn held_part(url: &str, n: u64, lock: &[&str], unlock: &str) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    // The tables pi1..piN, left by an earlier (single-process) run for l.i0 to drop.
    let pre = base.join("pre");
    let o = ixbench(&[
        "run",
        "--target",
        url,
        "--steps",
        "l.i0",
        "--rows",
        "10",
        "--clients",
        &n.to_string(),
        "--secondary-indexes",
        "0",
        "--out",
        pre.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    // The last part's table held.
    let mut holder = common::sql::connect(url).unwrap();
    for sql in lock {
        holder
            .execute(&sql.replace("piN", &format!("pi{n}")))
            .unwrap();
    }
    let at = common::scale::now() + 6.0;
    let extra = [
        "--steps",
        "l.i0,qp100",
        "--secondary-indexes",
        "0",
        "--rows",
        "20000",
        "--query-seconds",
        "3",
        "--interval",
        "0.5",
    ];
    let kids: Vec<Child> = (0..n)
        .map(|k| spawn_part(&part_args(base, url, k, n, at, &extra)))
        .collect();
    // Held for 3 s past the start.
    std::thread::sleep(Duration::from_secs_f64(
        (at + 3.0 - common::scale::now()).max(0.0),
    ));
    holder.execute(unlock).unwrap();
    let mut parts = Vec::new();
    for (k, c) in kids.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        let (out, err) = text(&o);
        assert!(o.status.success(), "part {k} failed:\n{out}\n{err}");
        parts.push(base.join(format!("part{k}")));
    }
    let m = merge_and_check(base, &parts);
    // The wait was real: the held part reached qp100 seconds after part 0 did.
    let arrived = |p: &Path| {
        run_json(p)["steps"][1]["barrier"]["arrived_unix"]
            .as_f64()
            .unwrap()
    };
    let held = arrived(&parts[n as usize - 1]) - arrived(&parts[0]);
    assert!(
        held > 1.0,
        "the held part arrived only {held:.2} s after part 0"
    );
    check_together(&parts, &m, "qp100");
    // l.i0 did not start together (the lock): merge says by how much, naming the part.
    let w: Vec<&str> = m["steps"][0]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.starts_with("l.i0: the parts"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", m["steps"][0]["warnings"]);
    assert!(
        w[0].contains(&format!("client {} started", n - 1)),
        "{}",
        w[0]
    );
    let o = ixbench(&["report", base.join("merged").to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
}

#[test]
fn postgres_parts_meet_before_every_step() {
    let Some(s) = common::start_server("scale barrier", ServerKind::Postgres, false) else {
        return;
    };
    // ACCESS SHARE: its DROP TABLE waits.
    let lock = ["BEGIN", "LOCK TABLE piN IN ACCESS SHARE MODE"];
    held_part(&s.url(), 2, &lock, "COMMIT");
    held_part(&s.url(), 4, &lock, "COMMIT");
}

#[test]
fn mariadb_parts_meet_before_every_step() {
    let Some(s) = common::start_server("scale barrier mariadb", ServerKind::Mariadb, false) else {
        return;
    };
    // A read lock: its DROP TABLE waits for the metadata lock.
    held_part(&s.url(), 2, &["LOCK TABLES piN READ"], "UNLOCK TABLES");
}

#[test]
fn sqlite_parts_meet_and_a_missing_part_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    let target = format!("sqlite:{}", base.join("shared.sqlite").display());
    let extra = [
        "--steps",
        "l.i0,qp100",
        "--secondary-indexes",
        "0",
        "--rows",
        "3000",
        "--query-seconds",
        "2",
        "--interval",
        "0.5",
    ];
    let at = common::scale::now() + 4.0;
    let kids: Vec<Child> = (0..2)
        .map(|k| spawn_part(&part_args(base, &target, k, 2, at, &extra)))
        .collect();
    let mut parts = Vec::new();
    for (k, c) in kids.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        let (out, err) = text(&o);
        assert!(o.status.success(), "part {k} failed:\n{out}\n{err}");
        parts.push(base.join(format!("part{k}")));
    }
    let m = merge_and_check(base, &parts);
    check_together(&parts, &m, "qp100");

    // A part alone: it fails at its first step's start, naming the part that never came,
    // after --barrier-timeout, never hanging.
    let lone = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", lone.path().join("db.sqlite").display());
    let mut a = part_args(
        lone.path(),
        &target,
        0,
        3,
        common::scale::now() + 1.5,
        &extra,
    );
    a.extend(["--barrier-timeout".to_string(), "2".to_string()]);
    let t = Instant::now();
    let o = spawn_part(&a).wait_with_output().unwrap();
    let e = assert_one_line_error(&o);
    assert!(
        e.contains("client 1, 2") && e.contains("l.i0") && e.contains("--barrier-timeout"),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());

    // Stopped while waiting (SIGTERM): it ends at once.
    let mut a = part_args(
        lone.path(),
        &target,
        1,
        2,
        common::scale::now() + 1.0,
        &extra,
    );
    let out = a.iter().position(|x| x == "--out").unwrap() + 1;
    a[out] = lone.path().join("stopped").to_str().unwrap().to_string();
    let child = spawn_part(&a);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let t = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(!o.status.success());
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    let r = run_json(&lone.path().join("stopped"));
    assert_eq!(r["steps"][0]["status"], "interrupted", "{}", r["steps"][0]);
}

/// A part other than client 0 waiting at a step's start for the others shows what it waits
/// for while it waits (it showed nothing: only client 0 said it waited), and fails at the
/// bound in one line naming the part that never came (issue 29).
#[test]
fn a_waiting_part_says_what_it_waits_for() {
    let lone = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", lone.path().join("db.sqlite").display());
    let extra = [
        "--steps",
        "l.i0",
        "--rows",
        "1000",
        "--barrier-timeout",
        "2",
        "--quiet-timeout",
        "0",
    ];
    let a = part_args(
        lone.path(),
        &target,
        1,
        2,
        common::scale::now() + 1.0,
        &extra,
    );
    let o = spawn_part(&a).wait_with_output().unwrap();
    let e = assert_one_line_error(&o);
    assert!(
        e.contains("client 0") && e.contains("l.i0") && e.contains("--barrier-timeout"),
        "{e}"
    );
    let (out, _) = text(&o);
    assert!(
        out.lines().any(|l| l.contains("waiting ")
            && l.contains("at the start of l.i0 for client 0 to arrive")
            && l.contains("--barrier-timeout")),
        "the wait was not shown: {out}"
    );
}
