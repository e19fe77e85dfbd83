//! Throwaway clusters started by `ixbench server start galera|spider|pg-shards`, each running
//! a small insert benchmark, with rows counted on every node or shard. Skipped (SKIPPED on
//! stderr) when a package is missing, except under CI=true, where that fails.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::common::sql::SqlExt;
use common::{ixbench, run_json, skip, text};
use ixbench::server::{self, ClusterKind};

/// Stops every node of a cluster left running, if a test fails before it stops it.
struct StopOnDrop(PathBuf);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if self.0.exists() {
            let _ = server::stop_cluster_dir(&self.0);
        }
    }
}

/// A directory the servers' OS users (mysql, postgres) can reach.
fn reachable_tempdir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("ixbench-cluster-test-")
        .tempdir()
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// A started cluster as `ixbench server start` printed it: (role, URL without password, pid).
struct Started {
    dir: PathBuf,
    entry_url: String,
    nodes: Vec<(String, String, u32)>,
    _guard: StopOnDrop,
}

impl Started {
    /// A node's URL with its password (read from its data directory).
    fn url_with_password(&self, role: &str) -> String {
        let (_, url, _) = self.nodes.iter().find(|(r, _, _)| r == role).unwrap();
        let pw = std::fs::read_to_string(self.dir.join(role).join(server::PASSWORD_FILE))
            .unwrap()
            .trim()
            .to_string();
        url.replacen("@", &format!(":{pw}@"), 1)
    }
}

fn show(o: &Output) -> String {
    let (out, err) = text(o);
    format!("stdout: {out}\nstderr: {err}")
}

/// `ixbench server start KIND SIZE_OPT N --datadir DIR/c`.
fn start(kind: &str, size_opt: &str, n: usize, dir: &Path) -> Started {
    let cdir = dir.join("c");
    let guard = StopOnDrop(cdir.clone());
    let o = ixbench(&[
        "server",
        "start",
        kind,
        size_opt,
        &n.to_string(),
        "--datadir",
        cdir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", show(&o));
    let (out, _) = text(&o);
    let field = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in {out}"))
            .trim()
            .to_string()
    };
    let entry_url = field("url:");
    let mut nodes = Vec::new();
    for l in out.lines() {
        // "ROLE: URL (pid N, datadir D)"
        let Some((role, rest)) = l.split_once(": ") else {
            continue;
        };
        let Some((url, rest)) = rest.split_once(" (pid ") else {
            continue;
        };
        let pid: u32 = rest.split(',').next().unwrap().parse().unwrap();
        nodes.push((role.to_string(), url.to_string(), pid));
    }
    assert_eq!(
        field("dir:"),
        cdir.canonicalize().unwrap().to_str().unwrap()
    );
    Started {
        dir: cdir.canonicalize().unwrap(),
        entry_url,
        nodes,
        _guard: guard,
    }
}

/// `ixbench server stop DIR`, then every node's process must be gone.
fn stop(c: &Started) {
    let o = ixbench(&["server", "stop", c.dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", show(&o));
    for (role, _, pid) in &c.nodes {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .map(|s| s.contains(") Z "))
                    .unwrap_or(true),
            "{role} (pid {pid}) still runs after server stop"
        );
    }
    assert_eq!(server::stop_cluster_dir(&c.dir).unwrap(), 0, "nothing left");
}

/// Run a short insert benchmark against `url`; returns ixbench's own count of the rows the
/// table holds (inserted − deleted, over every step) after checking every step passed.
fn insert_benchmark(url: &str, prefix: &str, out: &Path) -> (i64, u64) {
    let o = ixbench(&[
        "run",
        "--target",
        url,
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "20000",
        "--rows2",
        "2000",
        "--steps",
        "l.i0,l.x,l.i1",
        "--table-prefix",
        prefix,
    ]);
    assert!(o.status.success(), "{}", show(&o));
    let run = run_json(out);
    let steps = common::assert_all_ok(&run);
    let mut rows = 0i64;
    let mut commits = 0u64;
    for s in &steps {
        rows += s["totals"]["rows"][0].as_i64().unwrap() - s["totals"]["rows"][1].as_i64().unwrap();
        commits +=
            s["totals"]["ops"][0].as_u64().unwrap() + s["totals"]["ops"][1].as_u64().unwrap();
    }
    (rows, commits)
}

#[test]
fn galera_three_nodes_insert_benchmark_and_status() {
    let test = "galera_three_nodes_insert_benchmark_and_status";
    if let Err(e) = server::galera::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let _one = common::one_cluster();
    let dir = reachable_tempdir();
    let c = start("galera", "--nodes", 3, dir.path());
    let roles: Vec<&str> = c.nodes.iter().map(|(r, _, _)| r.as_str()).collect();
    assert_eq!(roles, ["node1", "node2", "node3"]);
    assert_eq!(c.entry_url, c.nodes[0].1);
    // The directory tells the same nodes, all running.
    let (kind, info) = server::describe_cluster_dir(&c.dir).unwrap();
    assert_eq!(kind, ClusterKind::Galera);
    let told: Vec<(&str, &str, bool)> = info
        .iter()
        .map(|n| (n.role.as_str(), n.url.as_str(), n.running))
        .collect();
    let printed: Vec<(&str, &str, bool)> = c
        .nodes
        .iter()
        .map(|(r, u, _)| (r.as_str(), u.as_str(), true))
        .collect();
    assert_eq!(told, printed);
    let urls: Vec<String> = roles.iter().map(|r| c.url_with_password(r)).collect();

    // Every node is a synced member of a 3-node primary component.
    let watch = ixbench::dbms::galera::StepWatch::start(&urls).unwrap();
    let watched = ixbench::measure::clock::Stopwatch::start();
    for (r, s) in roles.iter().zip(watch.before()) {
        assert!(s.synced_in(3), "{r}: {}", s.summary());
    }
    let named: Vec<(String, _)> = roles
        .iter()
        .map(|r| r.to_string())
        .zip(watch.before().iter().cloned())
        .collect();
    ixbench::dbms::galera::check_whole(&named).unwrap();

    let out = dir.path().join("r");
    let (rows, commits) = insert_benchmark(&c.nodes[0].1, "gal", &out);
    assert_eq!(rows, 20000, "l.i1 deletes as many rows as it inserts");
    let deltas = watch.finish(watched.elapsed_time()).unwrap();

    // The figures are read from the nodes: node1 committed the benchmark's transactions
    // locally, the others received them as write sets.
    let d1 = &deltas[0];
    assert!(
        d1.local_commits.unwrap() >= commits,
        "node1 local commits {:?} < {commits}",
        d1.local_commits
    );
    assert!(d1.replicated.unwrap() >= commits, "{d1:?}");
    for (r, d) in roles.iter().zip(&deltas).skip(1) {
        assert!(d.received.unwrap() >= commits, "{r}: {d:?}");
        assert_eq!(
            d.local_commits,
            Some(0),
            "{r} ran no local transaction: {d:?}"
        );
    }
    for (r, d) in roles.iter().zip(&deltas) {
        let f = d
            .flow_control_paused_fraction
            .expect("paused_ns is reported");
        assert!((0.0..=1.0).contains(&f), "{r}: paused fraction {f}");
        assert!(d.cert_failures.is_some(), "{r}: {d:?}");
        assert!(d.local_recv_queue_avg.is_some(), "{r}: {d:?}");
        assert!(d.seconds > 0.0);
    }

    // Every node holds exactly the rows ixbench counted.
    for (r, url) in roles.iter().zip(&urls) {
        let mut conn = ixbench::dbms::galera::connect(url).unwrap();
        // Wait until this node has applied everything committed before the read.
        conn.query_drop("SET SESSION wsrep_sync_wait = 1").unwrap();
        let n: i64 = conn
            .query_first("SELECT count(*) FROM gal1")
            .unwrap()
            .unwrap();
        assert_eq!(n, rows, "{r}: rows in gal1");
        // l.x's index build (one ALTER TABLE, run on every node by TOI) reached every node.
        let idx: i64 = conn
            .query_first(
                "SELECT count(DISTINCT index_name) FROM information_schema.STATISTICS WHERE \
                 table_schema = 'ixbench' AND table_name = 'gal1' AND index_name <> 'PRIMARY'",
            )
            .unwrap()
            .unwrap();
        assert_eq!(idx, 3, "{r}: secondary indexes of gal1");
    }

    // A node dies (SIGKILL): the other two go on as a primary component of 2.
    let kill = |pid: u32| {
        let st = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        assert!(st.success());
    };
    kill(c.nodes[2].2);
    // SIGKILL is delivered asynchronously: the process may take a moment to go.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let running = loop {
        let (_, info) = server::describe_cluster_dir(&c.dir).unwrap();
        let running: Vec<bool> = info.iter().map(|n| n.running).collect();
        if !running[2] || std::time::Instant::now() > deadline {
            break running;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(running, [true, true, false]);
    let two = wait_for(&urls[..2], |s| s.synced_in(2));
    let named: Vec<(String, _)> = roles[..2].iter().map(|r| r.to_string()).zip(two).collect();
    ixbench::dbms::galera::check_whole(&named).unwrap();
    // A second one dies: node1 alone is not a majority of the last primary component, and the
    // check refuses it, naming its state.
    kill(c.nodes[1].2);
    let one = wait_for(&urls[..1], |s| {
        s.cluster_status.as_deref() != Some("Primary")
    });
    let e = ixbench::dbms::galera::check_whole(&[("node1".to_string(), one[0].clone())])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("split or non-primary") && e.contains("node1"),
        "{e}"
    );
    stop(&c);
}

/// Poll every node until `ok` holds for all (60 s at most); their last status.
fn wait_for(
    urls: &[String],
    ok: impl Fn(&ixbench::dbms::galera::NodeStatus) -> bool,
) -> Vec<ixbench::dbms::galera::NodeStatus> {
    let t0 = std::time::Instant::now();
    loop {
        let all: Vec<_> = urls
            .iter()
            .map(|u| {
                let mut c = ixbench::dbms::galera::connect(u).unwrap();
                ixbench::dbms::galera::read(&mut c).unwrap()
            })
            .collect();
        if all.iter().all(&ok) {
            return all;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "not reached within 60 s: {:?}",
            all.iter().map(|s| s.summary()).collect::<Vec<_>>()
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

#[test]
fn galera_start_that_fails_leaves_nothing_running() {
    let test = "galera_start_that_fails_leaves_nothing_running";
    if let Err(e) = server::galera::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let _one = common::shared_cluster();
    let dir = reachable_tempdir();
    let cdir = dir.path().join("c");
    let _guard = StopOnDrop(cdir.clone());
    // The first node bootstraps without a state transfer; the second needs one, by a method
    // that does not exist, and cannot join.
    let o = ixbench(&[
        "server",
        "start",
        "galera",
        "--nodes",
        "2",
        "--set",
        "wsrep_sst_method=nosuchmethod",
        "--datadir",
        cdir.to_str().unwrap(),
    ]);
    let err = common::assert_one_line_error(&o);
    assert!(err.contains("node2"), "{err}");
    assert!(err.contains("nothing left running"), "{err}");
    let marker = server::cluster::ClusterMarker::read(&cdir)
        .unwrap()
        .unwrap();
    assert_eq!(marker.kind, ClusterKind::Galera);
    assert_eq!(marker.nodes.len(), 2);
    for n in &marker.nodes {
        assert!(
            !server::server_running(&n.datadir).unwrap_or(false),
            "{} still runs",
            n.role
        );
    }
    // Nothing to stop; the directory can go.
    let o = ixbench(&["server", "stop", "--remove", cdir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", show(&o));
    assert!(!cdir.exists());
}

/// Rows of `table` on a MariaDB node, by URL with password.
fn mysql_count(url: &str, table: &str) -> i64 {
    let mut c = ixbench::dbms::galera::connect(url).unwrap();
    c.query_first(format!("SELECT count(*) FROM {table}"))
        .unwrap()
        .unwrap()
}

#[test]
fn spider_head_over_two_shards() {
    let test = "spider_head_over_two_shards";
    if let Err(e) = server::spider::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let _one = common::shared_cluster();
    let dir = reachable_tempdir();
    let c = start("spider", "--shards", 2, dir.path());
    let roles: Vec<&str> = c.nodes.iter().map(|(r, _, _)| r.as_str()).collect();
    assert_eq!(roles, ["shard1", "shard2", "head"]);
    assert_eq!(c.entry_url, c.nodes[2].1);
    stop(&c);
    // The library does what `ixbench server start` did, on a cluster the test holds.
    let cl = server::start_cluster(
        ClusterKind::Spider,
        &server::ClusterOptions {
            dir: dir.path().join("lib"),
            size: 2,
            settings: vec![],
            tls: None,
        },
    )
    .unwrap();
    let columns = "id BIGINT NOT NULL PRIMARY KEY, k INT NOT NULL, pad VARCHAR(40) NOT NULL";
    server::spider::create_sharded_table(&cl, "sp", columns, "id").unwrap();
    let head = cl.node("head").unwrap().url_with_password();
    let mut h = ixbench::dbms::galera::connect(&head).unwrap();
    let engine: String = h
        .query_first(
            "SELECT ENGINE FROM information_schema.TABLES WHERE table_schema = 'ixbench' \
             AND table_name = 'sp'",
        )
        .unwrap()
        .unwrap();
    assert_eq!(engine.to_ascii_uppercase(), "SPIDER");
    let total = 3000i64;
    for batch in 0..(total / 500) {
        let values: Vec<String> = (batch * 500..(batch + 1) * 500)
            .map(|i| format!("({i}, {}, 'row {i}')", i % 97))
            .collect();
        h.query_drop(format!("INSERT INTO sp VALUES {}", values.join(",")))
            .unwrap();
    }
    let through_head: i64 = h.query_first("SELECT count(*) FROM sp").unwrap().unwrap();
    assert_eq!(through_head, total);
    let per_shard: Vec<i64> = cl
        .shards()
        .iter()
        .map(|s| mysql_count(&s.url_with_password(), "sp"))
        .collect();
    assert_eq!(per_shard.len(), 2);
    assert!(
        per_shard.iter().all(|&n| n > 0),
        "rows on both: {per_shard:?}"
    );
    assert_eq!(per_shard.iter().sum::<i64>(), total, "{per_shard:?}");
    // A row is on the shard its key hashes to, once.
    let one: i64 = h
        .query_first("SELECT count(*) FROM sp WHERE id = 1234")
        .unwrap()
        .unwrap();
    assert_eq!(one, 1);
    // A secondary index is built on each shard.
    let built = server::spider::add_index_on_shards(&cl, "sp", "sp_k", "k").unwrap();
    assert_eq!(built, 2);
    for s in cl.shards() {
        let mut sc = ixbench::dbms::galera::connect(&s.url_with_password()).unwrap();
        let idx: Option<String> = sc
            .query_first(
                "SELECT index_name FROM information_schema.STATISTICS WHERE table_schema = \
                 'ixbench' AND table_name = 'sp' AND index_name = 'sp_k' LIMIT 1",
            )
            .unwrap();
        assert_eq!(idx.as_deref(), Some("sp_k"));
    }
    assert_eq!(cl.pids().len(), 3, "one mariadbd per node");
    cl.stop_and_remove().unwrap();
}

#[test]
fn pg_shards_coordinator_over_two_shards() {
    let test = "pg_shards_coordinator_over_two_shards";
    if let Err(e) = server::pg_shards::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let _one = common::shared_cluster();
    let dir = reachable_tempdir();
    let c = start("pg-shards", "--shards", 2, dir.path());
    let roles: Vec<&str> = c.nodes.iter().map(|(r, _, _)| r.as_str()).collect();
    assert_eq!(roles, ["shard1", "shard2", "coordinator"]);
    assert_eq!(c.entry_url, c.nodes[2].1);
    assert!(c.entry_url.starts_with("postgres://postgres@127.0.0.1:"));
    stop(&c);

    let cl = server::start_cluster(
        ClusterKind::PgShards,
        &server::ClusterOptions {
            dir: dir.path().join("lib"),
            size: 2,
            settings: vec![],
            tls: None,
        },
    )
    .unwrap();
    use server::pg_shards;
    pg_shards::create_sharded_table(
        &cl,
        "ps",
        "id bigint NOT NULL, k int NOT NULL, pad text NOT NULL",
        "PRIMARY KEY (id)",
        "id",
    )
    .unwrap();
    let mut co = pg_shards::connect(cl.node("coordinator").unwrap()).unwrap();
    let foreign: i64 = co
        .query_one(
            "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
             WHERE i.inhparent = 'ps'::regclass AND c.relkind = 'f'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(foreign, 2, "two foreign-table partitions");
    let total = 3000i64;
    co.batch_execute(&format!(
        "INSERT INTO ps SELECT g, g % 97, 'row ' || g FROM generate_series(0, {}) g",
        total - 1
    ))
    .unwrap();
    let through: i64 = co.query_one("SELECT count(*) FROM ps", &[]).unwrap().get(0);
    assert_eq!(through, total);
    let per_shard: Vec<i64> = cl
        .shards()
        .iter()
        .map(|s| {
            pg_shards::connect(s)
                .unwrap()
                .query_one("SELECT count(*) FROM ps", &[])
                .unwrap()
                .get(0)
        })
        .collect();
    assert!(
        per_shard.iter().all(|&n| n > 0),
        "rows on both: {per_shard:?}"
    );
    assert_eq!(per_shard.iter().sum::<i64>(), total, "{per_shard:?}");
    // The shards' primary keys hold: a duplicate key is refused through the coordinator.
    assert!(co
        .batch_execute("INSERT INTO ps VALUES (7, 1, 'dup')")
        .is_err());
    let built = pg_shards::add_index_on_shards(&cl, "ps", "ps_k", "k").unwrap();
    assert_eq!(built, 2);
    for s in cl.shards() {
        let n: i64 = pg_shards::connect(s)
            .unwrap()
            .query_one(
                "SELECT count(*) FROM pg_indexes WHERE indexname = 'ps_k'",
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(n, 1);
    }
    cl.stop_and_remove().unwrap();
}

#[test]
fn cluster_options_refused_with_one_line() {
    let dir = reachable_tempdir();
    let d = dir.path().join("c");
    let d = d.to_str().unwrap();
    for (args, want) in [
        (
            vec!["server", "start", "galera", "--nodes", "0", "--datadir", d],
            "1 to 9 nodes",
        ),
        (
            vec![
                "server",
                "start",
                "galera",
                "--port",
                "3306",
                "--datadir",
                d,
            ],
            "--port is for one server",
        ),
        (
            vec!["server", "start", "galera", "--shards", "2", "--datadir", d],
            "takes --nodes",
        ),
        (
            vec!["server", "start", "spider", "--nodes", "2", "--datadir", d],
            "spider takes --shards",
        ),
        (
            vec![
                "server",
                "start",
                "postgres",
                "--nodes",
                "2",
                "--datadir",
                d,
            ],
            "--nodes is for galera",
        ),
        (
            vec![
                "server",
                "start",
                "galera",
                "--set",
                "wsrep_provider=/x.so",
                "--datadir",
                d,
            ],
            "wsrep_provider is managed by ixbench",
        ),
    ] {
        let o = ixbench(&args);
        let err = common::assert_one_line_error(&o);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!Path::new(d).exists(), "{args:?} left {d}");
    }
}

#[test]
fn galera_node1_restarted_rejoins() {
    let test = "galera_node1_restarted_rejoins";
    if let Err(e) = server::galera::check_installed() {
        return skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let _one = common::one_cluster();
    let dir = reachable_tempdir();
    let mut cl = server::start_cluster(
        ClusterKind::Galera,
        &server::ClusterOptions {
            dir: dir.path().join("g"),
            size: 2,
            settings: vec![("innodb_buffer_pool_size".into(), "64M".into())],
            tls: None,
        },
    )
    .unwrap();
    server::galera::wait_synced(&cl, 2).unwrap();
    // Restarted with another setting, the bootstrap node joins its cluster again rather than
    // founding a new one of its own.
    let node1 = cl.node_mut("node1").unwrap();
    let mut settings = node1.settings.clone();
    assert!(!settings.iter().any(|(n, _)| n == "wsrep_new_cluster"));
    settings.retain(|(n, _)| n != "innodb_buffer_pool_size");
    settings.push(("innodb_buffer_pool_size".into(), "96M".into()));
    node1.restart_with(&settings).unwrap();
    server::galera::wait_synced(&cl, 2).unwrap();
    let mut c =
        ixbench::dbms::galera::connect(&cl.node("node1").unwrap().url_with_password()).unwrap();
    let bp: u64 = c
        .query_first("SELECT @@innodb_buffer_pool_size")
        .unwrap()
        .unwrap();
    assert_eq!(bp, 96 << 20);
    cl.stop_and_remove().unwrap();
}
