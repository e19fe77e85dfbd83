//! `ixbench run --target pg-shards|spider`: the insert benchmark on a throwaway PostgreSQL
//! coordinator over two postgres_fdw shards, and on a MariaDB Spider head over two MariaDB
//! shards, started for the run: the table sharded by hash of its primary key, the secondary indexes built on every shard (timed per shard), the range
//! queries' plans checked on every shard, rows counted through the head and on every shard,
//! every node's server CPU. Skipped (SKIPPED on stderr) when PostgreSQL or Spider is not
//! installed, except under CI=true. Commands other than `run` and `index` refuse a sharded
//! target in one line.

use crate::common;

use common::{assert_all_ok, assert_one_line_error, ixbench, run_json, skip, text};
use ixbench::server;

#[test]
fn pg_shards_run_shards_the_table_builds_indexes_on_every_shard_and_checks_each() {
    let test = "pg_shards_run_shards_the_table_builds_indexes_on_every_shard_and_checks_each";
    if let Err(e) = server::pg_shards::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    sharded_run(
        "pg-shards",
        "coordinator",
        "postgres_fdw",
        3,
        "Index Only Scan",
    );
}

#[test]
fn spider_run_shards_the_table_builds_indexes_on_every_shard_and_checks_each() {
    let test = "spider_run_shards_the_table_builds_indexes_on_every_shard_and_checks_each";
    if let Err(e) = server::spider::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    // One ALTER TABLE builds the three indexes on a shard, as the insert benchmark does.
    sharded_run("spider", "head", "Spider", 1, "Using index");
}

/// Run the insert benchmark on `target` and check what every shard holds and did.
fn sharded_run(target: &str, head: &str, how: &str, builds_per_shard: usize, covering: &str) {
    let _one = common::shared_cluster();
    let t = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = t.path().join("r");
    let o = ixbench(&[
        "run",
        "--target",
        target,
        "--nodes",
        "2",
        "--rows",
        "3000",
        "--rows2",
        "1000",
        "--steps",
        "l.i0,l.x,l.i1,qr100",
        "--query-seconds",
        "1",
        "--rm",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains(&format!(
            "started a {target} cluster: {head} over 2 shards ({how}"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("index builds ran on every shard"),
        "{stdout}"
    );
    let cluster_dir = out.join(format!("{target}-cluster"));
    assert!(!cluster_dir.exists(), "cluster directory left behind");
    // One row per step and node.
    let csv = std::fs::read_to_string(out.join("nodes.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4 * 3, "{csv}");

    let run = run_json(&out);
    let steps = assert_all_ok(&run);
    let step = |name: &str| steps.iter().find(|s| s["name"] == name).unwrap();
    let checks = |name: &str| -> Vec<(String, String)> {
        step(name)["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["detail"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    // Rows: through the coordinator, on each shard (some on every one), and their sum (all
    // ok: assert_all_ok).
    for name in ["l.i0", "l.i1", "qr100"] {
        let c = checks(name);
        for want in [
            "rows",
            "rows on shard1",
            "rows on shard2",
            "rows over shards",
        ] {
            assert!(
                c.iter().any(|(n, _)| n == want),
                "{name}: no {want} check in {c:?}"
            );
        }
        // PostgreSQL's per-table counters on the shards are compared; MariaDB's are unknown
        // on Spider (they count more than the workload's rows).
        assert_eq!(
            c.iter().any(|(n, _)| n == "dbms_counters"),
            target == "pg-shards",
            "{name}: {c:?}"
        );
        let nodes = step(name)["nodes"].as_array().unwrap();
        let roles: Vec<&str> = nodes.iter().map(|n| n["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["shard1", "shard2", head], "{name}");
        for n in nodes {
            assert!(n["server"]["cpu_us"].is_u64(), "{name}: server CPU of {n}");
        }
    }
    let total = checks("l.i0")
        .into_iter()
        .find(|(n, _)| n == "rows over shards")
        .unwrap()
        .1;
    assert!(total.contains("= 3000 rows on the shards"), "{total}");
    // l.x: three indexes, built on both shards (timed there) and present on both.
    let lx = step("l.x");
    let built: usize = lx["index_builds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["indexes"].as_array().unwrap().len())
        .sum();
    assert_eq!(built, 3, "{lx}");
    for n in lx["nodes"].as_array().unwrap() {
        let built = n["notes"].as_array().map_or(0, |v| {
            v.iter()
                .filter(|x| x.as_str().unwrap().starts_with("built in "))
                .count()
        });
        let want = if n["role"] == head {
            0
        } else {
            builds_per_shard
        };
        assert_eq!(built, want, "{n}");
    }
    // The plan check holds on every shard (the coordinator's plan is a foreign scan).
    for name in ["l.x", "qr100"] {
        let plans: Vec<String> = checks(name)
            .into_iter()
            .filter(|(n, _)| n == "plan")
            .map(|(_, d)| d)
            .collect();
        assert_eq!(plans.len(), 3, "{name}: {plans:?}");
        for p in plans {
            assert!(p.contains("checked on every shard"), "{p}");
            assert!(p.contains("[shard1]") && p.contains("[shard2]"), "{p}");
            assert!(p.contains(covering), "{p}");
        }
    }
}

#[test]
fn commands_other_than_run_and_index_refuse_a_sharded_target_in_one_line() {
    // `ixbench index` runs there (tests/sharded_index.rs).
    for (cmd, target) in [
        ("ddl", "pg-shards"),
        ("oltp", "pg-shards"),
        ("ddl", "spider"),
    ] {
        let o = ixbench(&[cmd, "--target", target]);
        let err = assert_one_line_error(&o);
        assert!(
            err.contains(&format!(
                "ixbench {cmd} --target {target} is not supported yet"
            )),
            "{cmd}: {err}"
        );
    }
    let o = ixbench(&["run", "--target", "pg-shards", "--nodes", "9"]);
    let err = assert_one_line_error(&o);
    assert!(err.contains("1 to 8 shards"), "{err}");
}
