//! Galera failover beyond `run`'s write nodes: the entry node (node1: the control session,
//! self-checks, counters, sizes) killed during a step of `ixbench run` (the entry moves to a
//! surviving node and the rows check holds there), a node killed during `ixbench oltp` (its
//! clients connect again to the others; the results name the node), and `ixbench ddl` with
//! per-node figures per point. Each case starts its own 3-node cluster. Skipped (SKIPPED on
//! stderr) when Galera is not installed, except under CI=true.

use crate::common;

use common::galera::{kill_node_during, results_dir};
use common::{run_json, skip, text};
use ixbench::server;

/// Writes go to node1 only (the default) and node1, the entry, is SIGKILLed during qr100:
/// the workers connect again to node2 and node3, the entry moves to a surviving node, the
/// step completes and rows = inserted − deleted holds, counted on the survivors.
#[test]
fn galera_run_survives_the_entry_node_killed() {
    let test = "galera_run_survives_the_entry_node_killed";
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
    let (stdout, run) = kill_node_during(&args, &out, &log, "qr100", "node1");
    assert!(
        stdout.contains("ENTRY MOVED: node1 was the entry"),
        "{stdout}"
    );
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    let q = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "qr100")
        .unwrap();
    assert_eq!(q["status"], "ok", "{}\n{stdout}", q["error"]);
    let qn = q["nodes"].as_array().unwrap();
    let lost = &qn[0]["lost"];
    assert!(lost.is_object(), "{qn:?}");
    assert!(lost["at"].as_str().unwrap().contains('T'), "{lost}");
    let to = lost["entry_moved_to"].as_str().unwrap();
    assert!(to == "node2" || to == "node3", "{lost}");
    // Every worker was on node1: each that wrote or queried again connected elsewhere.
    assert!(lost["connections_moved"].as_u64().unwrap() >= 1, "{lost}");
    assert!(qn[1]["lost"].is_null() && qn[2]["lost"].is_null(), "{qn:?}");
    // Every check holds: rows = inserted − deleted on the cluster (counted on the new entry)
    // and on node2 and node3; node1 is not counted.
    let checks = q["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["ok"] == true), "{checks:?}");
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    for want in ["rows", "rows on node2", "rows on node3"] {
        assert!(names.contains(&want), "{want}: {names:?}");
    }
    assert!(!names.contains(&"rows on node1"), "{names:?}");
    let warnings: Vec<&str> = q["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("node1 left the cluster") && w.contains("entry moved")),
        "{warnings:?}"
    );
    eprintln!("qr100 node1: {lost}");
    for c in checks.iter().filter(|c| c["name"] == "rows") {
        eprintln!("{}", c["detail"]);
    }
}

/// `ixbench oltp` writing to every node, node3 (not the entry) SIGKILLed during the run: its
/// clients connect again to node1 and node2, the transactions in flight are counted as
/// errors of their code and retries, the results name the node, and the rows check holds.
#[test]
fn galera_oltp_clients_on_a_killed_node_move_to_the_others() {
    let test = "galera_oltp_clients_on_a_killed_node_move_to_the_others";
    if let Err(e) = server::galera::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let _one = common::one_cluster();
    let (t, out) = results_dir();
    let args = [
        "oltp",
        "--target",
        "galera",
        "--write-nodes",
        "all",
        "--threads",
        "3",
        "--table-size",
        "1000",
        "--time",
        "10",
        "--rm",
        "--out",
        out.to_str().unwrap(),
    ];
    let log = t.path().join("ixbench.log");
    let (_, run) = kill_node_during(&args, &out, &log, "oltp_read_write", "node3");
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    let r = &run["oltp"][0];
    assert_eq!(r["status"], "ok", "{}", r["error"]);
    // Three clients round robin over three nodes: one was on node3.
    assert!(r["reconnects"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["totals"]["retries"].as_u64().unwrap() >= 1, "{r}");
    assert!(!r["errors_by_code"].as_array().unwrap().is_empty(), "{r}");
    let nodes = r["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3, "{nodes:?}");
    let lost = &nodes[2]["lost"];
    assert!(lost["at"].as_str().unwrap().contains('T'), "{nodes:?}");
    assert!(lost["entry_moved_to"].is_null(), "{lost}");
    assert!(nodes[0]["lost"].is_null() && nodes[1]["lost"].is_null());
    assert!(nodes[0]["wsrep"]["local_commits"].as_u64().unwrap() > 0);
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .contains("node3 left the cluster"),
        "{r}"
    );
    let checks = r["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["ok"] == true), "{checks:?}");
    let csv = std::fs::read_to_string(out.join("nodes.csv")).unwrap();
    assert!(
        csv.lines().any(|l| l.starts_with("oltp_read_write,node3,")),
        "{csv}"
    );
    eprintln!("oltp node3: {lost}; reconnects {}", r["reconnects"]);
    for c in checks {
        eprintln!("{}: {}", c["name"], c["detail"]);
    }
}

/// `ixbench ddl --target galera`: the point's per-node figures (flow control, certification
/// failures, queues) in run.json and nodes.csv, and the point ok.
#[test]
fn galera_ddl_has_per_node_figures() {
    let test = "galera_ddl_has_per_node_figures";
    if let Err(e) = server::galera::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let _one = common::shared_cluster();
    let (_t, out) = results_dir();
    let o = common::ixbench(&[
        "ddl",
        "--target",
        "galera",
        "--write-nodes",
        "all",
        "--tables",
        "1",
        "--table-size",
        "2000",
        "--threads",
        "2",
        "--rate",
        "40",
        "--baseline-seconds",
        "2",
        "--recovery-seconds",
        "2",
        "--rm",
        "--pass-on",
        "no-verdict",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    let run = run_json(&out);
    let p = &run["ddl"]["points"][0];
    assert_eq!(p["ok"], true, "{}", p["error"]);
    let nodes = p["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3, "{p}");
    for n in nodes {
        let w = &n["wsrep"];
        let f = w["flow_control_paused_fraction"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&f), "{n}");
        assert!(w["cert_failures"].is_u64(), "{n}");
        assert!(w["received"].as_u64().unwrap() > 0, "{n}");
        assert!(n["lost"].is_null(), "{n}");
    }
    let csv = std::fs::read_to_string(out.join("nodes.csv")).unwrap();
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("point 1,")).count(),
        3,
        "{csv}"
    );
    assert!(stdout.contains("node1 (writes): fc paused"), "{stdout}");
}
