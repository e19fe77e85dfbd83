//! `ixbench index --target pg-shards|spider`: the index lab on a throwaway PostgreSQL
//! coordinator over two postgres_fdw shards, and on a MariaDB Spider head over two MariaDB
//! shards: 20,000 rows loaded sharded, two indexes built on every shard at once at each value
//! of a session knob; per shard its rows, build seconds, index sizes, server CPU and checks
//! (each index exists on the shard's own server and its range query reads it); the whole
//! build's time covers every shard's; every node's server CPU (the head's too) is known, the
//! servers being local. Options that make no sense on a sharded target are refused in one
//! line. Skipped (SKIPPED on stderr) when PostgreSQL or Spider is not installed, except under
//! CI=true.

use crate::common;

use common::{assert_one_line_error, ixbench, run_json, skip, text};
use ixbench::server;

#[test]
fn pg_shards_index_builds_on_every_shard_in_parallel() {
    let test = "pg_shards_index_builds_on_every_shard_in_parallel";
    if let Err(e) = server::pg_shards::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    sharded_index(
        "pg-shards",
        "coordinator",
        "maintenance_work_mem=8MB,64MB",
        "Index Only Scan",
    );
}

#[test]
fn spider_index_builds_on_every_shard_in_parallel() {
    let test = "spider_index_builds_on_every_shard_in_parallel";
    if let Err(e) = server::spider::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    sharded_index(
        "spider",
        "head",
        "alter_algorithm=INPLACE,COPY",
        "Using index",
    );
}

fn sharded_index(target: &str, head: &str, knob: &str, covering: &str) {
    let _one = common::shared_cluster();
    let t = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = t.path().join("r");
    let o = ixbench(&[
        "index",
        "--target",
        target,
        "--nodes",
        "2",
        "--rows",
        "20000",
        "--indexes",
        "marketsegment,pdc",
        "--builds",
        "all",
        "--knob",
        knob,
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains("index builds on this target: built on each of 2 shards in parallel"),
        "{stdout}"
    );
    let run = run_json(&out);
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    // The results as an interface: run.json, with its sharded builds, fits the kept schema.
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/run.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let errors: Vec<String> = jsonschema::validator_for(&schema)
        .unwrap()
        .iter_errors(&run)
        .take(10)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "run.json breaks the schema: {errors:?}");
    // The load's rows, counted on every shard.
    let load = &run["steps"][0];
    for c in [
        "rows",
        "rows on shard1",
        "rows on shard2",
        "rows over shards",
    ] {
        assert!(
            load["checks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["name"] == c && x["ok"] == true),
            "no passed {c} check: {}",
            load["checks"]
        );
    }
    let builds = run["builds"].as_array().unwrap();
    assert_eq!(builds.len(), 2, "one build per knob value: {builds:?}");
    let (knob_name, _) = knob.split_once('=').unwrap();
    let mut values = Vec::new();
    for b in builds {
        assert_eq!(b["ok"], true, "{b}");
        values.push(b["knobs"][0][1].as_str().unwrap().to_string());
        assert_eq!(b["knobs"][0][0], knob_name, "{b}");
        let sh = &b["sharded"];
        assert_eq!(sh["parallel"], true, "{sh}");
        let parts = sh["shards"].as_array().unwrap();
        assert_eq!(parts.len(), 2, "{sh}");
        let mut rows = 0;
        let mut slowest: f64 = 0.0;
        for (k, p) in parts.iter().enumerate() {
            let role = format!("shard{}", k + 1);
            assert_eq!(p["role"], role.as_str());
            assert!(p["rows"].as_u64().unwrap() > 0, "{p}");
            rows += p["rows"].as_u64().unwrap();
            let secs = p["seconds"].as_f64().unwrap();
            assert!(secs > 0.0, "{p}");
            slowest = slowest.max(p["started_after"].as_f64().unwrap() + secs);
            let sizes = p["index_bytes"].as_array().unwrap();
            assert_eq!(sizes.len(), 2, "{p}");
            for s in sizes {
                assert!(s[1].as_u64().unwrap() > 0, "index size on {role}: {p}");
            }
            assert!(p["server_cpu_secs"].is_f64(), "server CPU of {role}: {p}");
            // Checked on the shard's own server: each index exists there, and its range query
            // reads it.
            let checks = p["checks"].as_array().unwrap();
            for idx in ["pi1_marketsegment", "pi1_pdc"] {
                for name in ["exists", "plan"] {
                    assert!(
                        checks.iter().any(|c| c["name"] == name
                            && c["ok"] == true
                            && c["detail"].as_str().unwrap().contains(idx)),
                        "{role}: no passed {name} check of {idx}: {checks:?}"
                    );
                }
            }
            assert!(
                checks
                    .iter()
                    .filter(|c| c["name"] == "plan")
                    .all(|c| c["detail"].as_str().unwrap().contains(covering)),
                "{checks:?}"
            );
        }
        assert_eq!(rows, 20000, "{sh}");
        assert_eq!(b["rows"], 20000);
        // The whole build: from the first shard's start to the last one's end.
        let whole = b["seconds"].as_f64().unwrap();
        assert!(whole + 1e-6 >= slowest, "whole {whole} < slowest {slowest}");
        for p in parts {
            assert!(whole + 1e-6 >= p["seconds"].as_f64().unwrap(), "{b}");
        }
        // The whole index sizes are the shards' sums.
        for s in b["index_bytes"].as_array().unwrap() {
            let name = &s[0];
            let sum: u64 = parts
                .iter()
                .flat_map(|p| p["index_bytes"].as_array().unwrap().iter())
                .filter(|x| &x[0] == name)
                .map(|x| x[1].as_u64().unwrap())
                .sum();
            assert_eq!(s[1].as_u64().unwrap(), sum, "{b}");
        }
        // Every node's server CPU is known (the servers are local), the head's too.
        let nodes = sh["nodes"].as_array().unwrap();
        let roles: Vec<&str> = nodes.iter().map(|n| n["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["shard1", "shard2", head], "{sh}");
        for n in nodes {
            assert!(n["server"]["cpu_us"].is_u64(), "server CPU of {n}");
        }
        assert_eq!(nodes[2]["writes"], true, "the head is marked: {sh}");
        assert!(b["server_cpu_secs"].is_f64(), "{b}");
        assert_eq!(
            sh["head_declare_secs"].is_f64(),
            target == "spider",
            "only Spider's head declares the indexes: {sh}"
        );
    }
    // Each build at its own value, as the shards report it.
    assert_ne!(values[0], values[1], "{values:?}");
    // The per-shard table: one row per build and node.
    let csv = std::fs::read_to_string(out.join("shards.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 3, "{csv}");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let cpu_col = header.iter().position(|h| *h == "node_cpu_s").unwrap();
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), header.len(), "{csv}");
        // Every node's CPU, the head's too, in its column.
        assert!(cells[cpu_col].parse::<f64>().is_ok(), "{line}");
    }
    assert!(out.join("shards.md").exists());
    assert!(out.join("index.csv").exists());
    assert!(stdout.contains("shard2: "), "{stdout}");
    assert!(
        stdout.contains("server CPU s over the whole build"),
        "{stdout}"
    );
}

#[test]
fn options_that_make_no_sense_on_a_sharded_target_are_refused_in_one_line() {
    for (target, args, want) in [
        ("spider", vec!["--reuse"], "--reuse on --target spider"),
        (
            "pg-shards",
            vec!["--from-table", "public.orders"],
            "--from-table on --target pg-shards",
        ),
        (
            "spider",
            vec!["--like", "sbtest"],
            "--like on --target spider",
        ),
        (
            "pg-shards",
            vec!["--index", "UNIQUE u1: dateandtime"],
            "unique on that shard only",
        ),
        (
            "postgres",
            vec!["--shard-builds", "sequential"],
            "--shard-builds is for --target spider and pg-shards",
        ),
    ] {
        let mut a = vec!["index", "--target", target];
        a.extend(args.iter().copied());
        let o = ixbench(&a);
        let err = assert_one_line_error(&o);
        assert!(err.contains(want), "{a:?}: {err}");
    }
}
