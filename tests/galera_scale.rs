//! Several ixbench processes against one Galera cluster (issue 11): `ixbench server start
//! galera --nodes 3`, two `ixbench run --client-id K --client-count 2 --start-at T` parts
//! writing through different nodes, and `ixbench merge`: merged totals are the sums of the
//! parts, merged percentiles those of one histogram of every sample, and every node holds the
//! rows of both parts. The cluster is stopped at the end, also when the test fails. Skipped
//! (SKIPPED on stderr) when Galera is not installed, except under CI=true.

use crate::common;

use std::path::{Path, PathBuf};

use common::scale::{merge_and_check, run_parts_on};
use common::{ixbench, run_json, skip, text};
use ixbench::server;

/// Stops every node of the cluster when dropped (the test passed or failed).
struct StopOnDrop(PathBuf);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if self.0.exists() {
            let _ = server::stop_cluster_dir(&self.0);
        }
    }
}

/// `ixbench server start galera --nodes 3 --datadir DIR`: the nodes' URLs (no password; ixbench
/// finds the password of a server it started) in node order.
fn start_galera(dir: &Path) -> Vec<String> {
    let o = ixbench(&[
        "server",
        "start",
        "galera",
        "--nodes",
        "3",
        "--datadir",
        dir.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "stdout: {out}\nstderr: {err}");
    // "nodeK: URL (pid N, datadir D)"
    let urls: Vec<String> = out
        .lines()
        .filter(|l| l.starts_with("node"))
        .filter_map(|l| {
            l.split_once(": ")?
                .1
                .split_once(" (pid ")
                .map(|x| x.0.to_string())
        })
        .collect();
    assert_eq!(urls.len(), 3, "{out}");
    urls
}

#[test]
fn galera_two_processes_merge() {
    let test = "galera_two_processes_merge";
    if let Err(e) = server::galera::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let _one = common::shared_cluster();
    let t = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let cdir = t.path().join("cluster");
    let _stop = StopOnDrop(cdir.clone());
    let urls = start_galera(&cdir);
    // Part 0 writes through node1, part 1 through node2.
    let parts = run_parts_on(
        t.path(),
        &[urls[0].as_str(), urls[1].as_str()],
        &[
            "--steps",
            "l.i0,l.x,qr100",
            "--rows",
            "3000",
            "--rows-per-commit",
            "50",
            "--query-seconds",
            "3",
            "--interval",
            "0.5",
        ],
    );
    let m = merge_and_check(t.path(), &parts);
    assert_eq!(m["config"]["clients"], 2);
    assert_eq!(m["steps"][0]["totals"]["rows"][0].as_u64().unwrap(), 6000);
    // What was merged, for `--nocapture`.
    for s in m["steps"].as_array().unwrap() {
        eprintln!(
            "merged {}: rows {} ops {} retries {}",
            s["name"], s["totals"]["rows"], s["totals"]["ops"], s["totals"]["retries"]
        );
    }
    // Both parts' tables are on node3 too (replicated), with the rows each part counted.
    let mut c =
        ixbench::dbms::galera::connect(&node_url_with_password(&cdir, "node3", &urls[2])).unwrap();
    use crate::common::sql::SqlExt;
    c.query_drop("SET SESSION wsrep_sync_wait = 1").unwrap();
    for p in &parts {
        let run = run_json(p);
        let table = run["config"]["tables"][0].as_str().unwrap().to_string();
        let want: i64 = run["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                s["totals"]["rows"][0].as_i64().unwrap() - s["totals"]["rows"][1].as_i64().unwrap()
            })
            .sum();
        let have: i64 = c
            .query_first(format!("SELECT COUNT(*) FROM {table}"))
            .unwrap()
            .unwrap();
        assert_eq!(have, want, "{table} on node3");
    }
    drop(c);
    let o = ixbench(&["server", "stop", cdir.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
}

/// A node's URL (with its database) with its password, read from its data directory.
fn node_url_with_password(cdir: &Path, role: &str, url: &str) -> String {
    let pw = std::fs::read_to_string(cdir.join(role).join(server::PASSWORD_FILE))
        .unwrap()
        .trim()
        .to_string();
    url.replacen('@', &format!(":{pw}@"), 1)
}
