//! `ixbench run --target galera`: a throwaway 3-node cluster started for the run, writes
//! spread over two nodes, per-node figures and row checks per step, and a node killed during a
//! step (the step goes on against the rest; the results say which node and when). Skipped
//! (SKIPPED on stderr) when Galera is not installed, except under CI=true.

use crate::common;

use std::time::Duration;

use common::galera::{kill_node_during, node_pid, results_dir};
use common::{ixbench, run_json, skip, text};
use ixbench::server;

#[test]
fn galera_run_spreads_writes_checks_every_node_and_survives_a_killed_node() {
    let test = "galera_run_spreads_writes_checks_every_node_and_survives_a_killed_node";
    if let Err(e) = server::galera::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let _one = common::one_cluster();
    let (t, out) = results_dir();
    let args = [
        "run",
        "--target",
        "galera",
        "--nodes",
        "3",
        "--write-nodes",
        "1,2",
        "--clients",
        "2",
        "--rows",
        "3000",
        "--rows2",
        "2000",
        "--steps",
        "l.i0,l.x,qr100",
        "--query-seconds",
        "8",
        "--quiet-timeout",
        "5",
        "--rm",
        "--out",
        out.to_str().unwrap(),
    ];
    // Wait until qr100 is measuring, then kill node3 (it takes no writes). Output goes to a
    // file, so a run that never gets there shows how far it got.
    let log = t.path().join("ixbench.log");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args(args)
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(out.join("intervals.ndjson"))
        .map(|s| s.lines().filter(|l| l.contains("\"qr100\"")).count() >= 2)
        .unwrap_or(false)
    {
        if t0.elapsed() > Duration::from_secs(240) || child.try_wait().unwrap().is_some() {
            // SIGINT: ixbench stops its cluster before it exits.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            let o = child.wait_with_output().unwrap();
            panic!(
                "qr100 never measured: stdout {}\nstderr {}",
                std::fs::read_to_string(&log).unwrap_or_default(),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let cluster_dir = out.join("galera-cluster");
    let pid = node_pid(&cluster_dir, "node3");
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let o = child.wait_with_output().unwrap();
    let (_, stderr) = text(&o);
    let stdout = std::fs::read_to_string(&log).unwrap();
    assert!(o.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains("started a 3-node Galera cluster"),
        "{stdout}"
    );
    assert!(
        stdout.contains("NODE LOST: node3 left the cluster"),
        "{stdout}"
    );
    // One row per step and node in nodes.csv; node3's loss in qr100's row.
    let csv = std::fs::read_to_string(out.join("nodes.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 3, "{csv}");
    let node3 = csv
        .lines()
        .find(|l| l.starts_with("qr100,node3,"))
        .unwrap_or_else(|| panic!("{csv}"));
    assert!(!node3.ends_with(",-"), "loss time recorded: {node3}");
    // --rm: the cluster directory is gone, nothing left running.
    assert!(!cluster_dir.exists(), "cluster directory left behind");

    let run = run_json(&out);
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    let steps = run["steps"].as_array().unwrap();
    let step = |name: &str| steps.iter().find(|s| s["name"] == name).unwrap();
    // l.i0: written through node1 and node2; rows counted on every node, all equal.
    let l0 = step("l.i0");
    let names: Vec<&str> = l0["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == true)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for role in ["node1", "node2", "node3"] {
        assert_eq!(
            names
                .iter()
                .filter(|n| **n == format!("rows on {role}"))
                .count(),
            2,
            "two tables checked on {role}: {}",
            l0["checks"]
        );
    }
    let nodes = l0["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3);
    assert_eq!(nodes[0]["writes"], true);
    assert_eq!(nodes[1]["writes"], true);
    assert_eq!(nodes[2]["writes"], false);
    // Both write nodes committed (local commits), the third only received write sets.
    let commits = |n: &serde_json::Value| n["wsrep"]["local_commits"].as_u64().unwrap();
    assert!(
        commits(&nodes[0]) > 0 && commits(&nodes[1]) > 0,
        "{nodes:?}"
    );
    assert_eq!(commits(&nodes[2]), 0, "{nodes:?}");
    assert!(nodes[2]["wsrep"]["received"].as_u64().unwrap() > 0);
    for n in nodes {
        let f = n["wsrep"]["flow_control_paused_fraction"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&f), "{n}");
        assert!(n["server"]["cpu_us"].as_u64().unwrap() > 0, "{n}");
        assert!(n["lost"].is_null(), "{n}");
    }
    // qr100: node3 was killed during it; the step went on, the results name the node.
    let q = step("qr100");
    assert_eq!(q["status"], "ok", "{}", q["error"]);
    let qn = q["nodes"].as_array().unwrap();
    let lost = &qn[2]["lost"];
    assert!(lost.is_object(), "{qn:?}");
    let secs = lost["secs_into_step"].as_f64().unwrap();
    assert!(secs > 0.0 && secs < 60.0, "{lost}");
    assert!(lost["at"].as_str().unwrap().contains('T'));
    assert!(qn[0]["lost"].is_null() && qn[1]["lost"].is_null());
    assert!(
        q["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("node3 left the cluster")),
        "{}",
        q["warnings"]
    );
    // The surviving nodes still hold every row; node3 is not counted.
    let qc: Vec<&str> = q["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(qc.contains(&"rows on node1") && qc.contains(&"rows on node2"));
    assert!(!qc.contains(&"rows on node3"), "{qc:?}");
}

/// Writes go to every node and node2 (a write node, not the entry) is SIGKILLed during qr100:
/// its workers connect again to node1 and node3 and the step goes on; the writes that were in
/// flight are retried (their outcome settled by the row count), and every check holds.
#[test]
fn galera_workers_on_a_killed_write_node_move_to_the_others() {
    let test = "galera_workers_on_a_killed_write_node_move_to_the_others";
    if let Err(e) = server::galera::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let _one = common::one_cluster();
    let (t, out) = results_dir();
    let args = [
        "run",
        "--target",
        "galera",
        "--nodes",
        "3",
        "--write-nodes",
        "all",
        "--on-node-loss",
        "continue",
        "--clients",
        "2",
        "--rows",
        "2000",
        "--steps",
        "l.i0,l.x,qr100",
        "--query-seconds",
        "8",
        "--quiet-timeout",
        "5",
        "--rm",
        "--out",
        out.to_str().unwrap(),
    ];
    let log = t.path().join("ixbench.log");
    // Two clients make six workers (inserter, deleter, query) round robin over three nodes:
    // two of them are on node2, and both write or query again after the kill.
    let (stdout, run) = kill_node_during(&args, &out, &log, "qr100", "node2");
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    let q = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "qr100")
        .unwrap();
    assert_eq!(q["status"], "ok", "{}\n{stdout}", q["error"]);
    let qn = q["nodes"].as_array().unwrap();
    assert!(qn.iter().all(|n| n["writes"] == true), "{qn:?}");
    let lost = &qn[1]["lost"];
    assert!(lost.is_object(), "{qn:?}");
    assert!(lost["at"].as_str().unwrap().contains('T'));
    let moved = lost["connections_moved"].as_u64().unwrap();
    assert!(moved >= 1, "{lost}");
    assert!(qn[0]["lost"].is_null() && qn[2]["lost"].is_null());
    // What was in flight on node2 was retried, never dropped.
    let retries: u64 = q["totals"]["retries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_u64().unwrap())
        .sum();
    assert!(retries >= moved, "retries {retries}, moved {moved}");
    // Every check holds: rows = inserted − deleted on the cluster and on node1 and node3.
    let checks = q["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["ok"] == true), "{checks:?}");
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    for want in ["rows", "rows on node1", "rows on node3"] {
        assert!(names.contains(&want), "{want}: {names:?}");
    }
    assert!(!names.contains(&"rows on node2"), "{names:?}");
    // What happened, for `--nocapture`: the loss, the moves, how the rows were counted.
    eprintln!("qr100 node2: {lost}; retries {retries}");
    for c in checks.iter().filter(|c| c["name"] == "rows") {
        eprintln!("{}", c["detail"]);
    }
    assert!(
        q["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("connections moved")),
        "{}",
        q["warnings"]
    );
}

#[test]
fn cluster_options_on_other_targets_are_refused() {
    for (args, msg) in [
        (
            vec!["--target", "sqlite", "--nodes", "3"],
            "--nodes is for --target galera",
        ),
        (
            vec!["--target", "null", "--write-nodes", "all"],
            "--write-nodes is for --target galera",
        ),
        (
            vec!["--target", "galera", "--nodes", "2", "--write-nodes", "3"],
            "node 3 is not one of the cluster's 2 nodes",
        ),
        (
            vec!["--target", "spider", "--write-nodes", "all"],
            "--write-nodes is for --target galera",
        ),
    ] {
        let mut a = vec!["run", "--rows", "10"];
        a.extend(args);
        let o = ixbench(&a);
        let e = common::assert_one_line_error(&o);
        assert!(e.contains(msg), "{a:?}: {e}");
    }
}

/// The time series on `--target galera` (it read the target text itself and took the cluster's
/// name for an unknown target): it runs on a throwaway one-node cluster, its checks pass, and
/// the cluster is gone after.
#[test]
fn timeseries_runs_on_a_galera_target() {
    let test = "timeseries_runs_on_a_galera_target";
    if let Err(e) = server::galera::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let _one = common::shared_cluster();
    let (_t, out) = results_dir();
    let o = ixbench(&[
        "timeseries",
        "--target",
        "galera",
        "--nodes",
        "1",
        "--size",
        "smoke",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("checks: all"), "{stdout}");
    assert!(stdout.contains("stopped the cluster"), "{stdout}");
    assert_eq!(run_json(&out)["status"], "ok");
}
