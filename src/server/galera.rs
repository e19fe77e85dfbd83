//! A throwaway MariaDB Galera cluster on loopback ports.
//!
//! Every node is a MariaDB server as [`super::start`] makes it (own data directory, port,
//! private socket), plus:
//! - `wsrep_on=ON`, `wsrep_provider=/usr/lib/galera/libgalera_smm.so` (Debian `galera-4`),
//!   `wsrep_cluster_address=gcomm://` listing every node's group-communication port,
//!   `gmcast.listen_addr` and `ist.recv_addr` on free loopback ports, a small `gcache.size`;
//! - `wsrep_sst_method=rsync` with `wsrep_sst_receive_address` on a free loopback port
//!   (`mariadb-backup` is not a dependency; rsync is);
//! - what Galera needs of InnoDB: `binlog_format=ROW`, `innodb_autoinc_lock_mode=2`.
//!
//! The first node bootstraps the cluster (`--wsrep-new-cluster`) and creates the database
//! `ixbench`; the others join one at a time and receive everything, accounts included, by SST.
//! All nodes share one generated password for that reason. The start returns once every node
//! says `wsrep_cluster_size` = N, `wsrep_cluster_status` = Primary and
//! `wsrep_local_state_comment` = Synced.

use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::cluster::{
    free_ports, no_link_params, ClusterKind, ClusterOptions, ClusterRow, RunningCluster,
};
use super::{start_node, NodeInit, ServerKind, ServerOptions};
use crate::dbms::galera;
use crate::deadline::Since;

/// The Galera kind's row (registered in `super::CLUSTERS`): every node a full replica, its
/// `--set` checked against what ixbench manages, clients on its first node.
pub(super) const CLUSTER: ClusterRow = ClusterRow {
    kind: ClusterKind::Galera,
    name: "galera",
    sharded: false,
    sharding: "Galera replication",
    node_kind: "mysql",
    node_server: ServerKind::Mariadb,
    size_range: (1, 9),
    entry_role: "node1",
    check_settings,
    start,
    link_params: no_link_params,
};

/// Where Debian's galera-4 installs the provider.
pub const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";

/// How long the cluster may take to be synced once every node accepts connections.
const SYNC_TIMEOUT: Duration = Duration::from_secs(60);

/// Settings ixbench sets on every node (refused in `--set`).
const MANAGED: &[&str] = &[
    "wsrep_on",
    "wsrep_provider",
    "wsrep_cluster_address",
    "wsrep_cluster_name",
    "wsrep_node_name",
    "wsrep_node_address",
    "wsrep_sst_receive_address",
    "wsrep_new_cluster",
];

/// The settings of node `i` (0-based) of a cluster whose nodes listen for group communication
/// on `gcomm`, for IST on `ist` and SST on `sst`.
pub(crate) fn node_settings(
    name: &str,
    i: usize,
    gcomm: &[u16],
    ist: &[u16],
    sst: &[u16],
) -> Vec<(String, String)> {
    let addrs: Vec<String> = gcomm.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let mut s: Vec<(String, String)> = [
        ("wsrep_on", "ON".to_string()),
        ("wsrep_provider", PROVIDER.to_string()),
        ("wsrep_cluster_name", name.to_string()),
        (
            "wsrep_cluster_address",
            format!("gcomm://{}", addrs.join(",")),
        ),
        ("wsrep_node_name", format!("node{}", i + 1)),
        ("wsrep_node_address", "127.0.0.1".to_string()),
        (
            "wsrep_provider_options",
            format!(
                "gmcast.listen_addr=tcp://127.0.0.1:{};ist.recv_addr=127.0.0.1:{};\
                 gcache.size=64M",
                gcomm[i], ist[i]
            ),
        ),
        ("wsrep_sst_method", "rsync".to_string()),
        ("wsrep_sst_receive_address", format!("127.0.0.1:{}", sst[i])),
        ("binlog_format", "ROW".to_string()),
        ("default_storage_engine", "InnoDB".to_string()),
        ("innodb_autoinc_lock_mode", "2".to_string()),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), v))
    .collect();
    if i == 0 {
        s.push(("wsrep_new_cluster".into(), "ON".into()));
    }
    s
}

/// Fail with one line naming the package when Galera is not installed.
pub fn check_installed() -> Result<()> {
    super::check_installed(ServerKind::Mariadb)?;
    if !std::path::Path::new(PROVIDER).is_file() {
        bail!("the Galera provider {PROVIDER} is missing: install the Debian package galera-4");
    }
    if super::flavor::find_program("rsync", &["/usr/bin"]).is_none() {
        bail!("rsync (for Galera's state transfer) is missing: install the Debian package rsync");
    }
    Ok(())
}

/// Refuse `--set` options ixbench sets itself on every node.
pub(crate) fn check_settings(settings: &[(String, String)]) -> Result<()> {
    for (n, _) in settings {
        let n = super::flavor::normalize(n);
        if MANAGED.contains(&n.as_str()) {
            bail!("option {n} is managed by ixbench for its Galera cluster");
        }
    }
    Ok(())
}

/// Start the nodes of `cluster` (see the module doc).
pub(crate) fn start(mut cluster: RunningCluster, opts: &ClusterOptions) -> Result<RunningCluster> {
    check_installed()?;
    check_settings(&opts.settings)?;
    let n = opts.size;
    let ports = free_ports(4 * n)?;
    let (sql, rest) = ports.split_at(n);
    let (gcomm, rest) = rest.split_at(n);
    let (ist, sst) = rest.split_at(n);
    let name = format!("ixbench-{}", sql[0]);
    let password = super::secret::generate()?;
    for (i, &port) in sql.iter().enumerate() {
        let role = format!("node{}", i + 1);
        cluster.announce(&role)?;
        let mut settings = node_settings(&name, i, gcomm, ist, sst);
        settings.extend(opts.settings.iter().cloned());
        let sopts = ServerOptions {
            datadir: cluster.node_dir(&role),
            port: Some(port),
            settings,
            tls: opts.tls.clone(),
        };
        // The database is created once node1 is synced (before, it refuses queries with
        // "WSREP has not yet prepared node for application use"); joiners get it by SST.
        let init = NodeInit {
            password: Some(password.clone()),
            skip_create_database: true,
            ..NodeInit::default()
        };
        let server = start_node(ServerKind::Mariadb, &sopts, &init)
            .with_context(|| format!("starting Galera {role}"))?;
        cluster.add(&role, server)?;
        // Let each joiner finish its state transfer before the next one asks for one.
        wait_synced(&cluster, i + 1)?;
        if i == 0 {
            // Bootstrapped: a later restart of node1 (`restart_with`) must join the cluster,
            // not found a new one.
            if let Some(s) = cluster.node_mut(&role) {
                s.settings.retain(|(n, _)| n != "wsrep_new_cluster");
            }
            ServerKind::Mariadb
                .flavor()
                .create_database(port, &password, opts.tls.is_some())
                .context("creating database ixbench on node1")?;
        }
    }
    Ok(cluster)
}

/// Wait until every node of `cluster` is a synced member of a primary component of `size`.
pub fn wait_synced(cluster: &RunningCluster, size: usize) -> Result<()> {
    let t0 = Since::start();
    let urls: Vec<(String, String)> = cluster
        .nodes()
        .iter()
        .map(|n| {
            // The `mysql` schema, not `ixbench`: node1 is waited for before it has one.
            let url = galera::mysql_schema_url(&n.server.url_with_password());
            (n.role.clone(), url)
        })
        .collect();
    let mut last = Vec::new();
    loop {
        last.clear();
        let mut all = true;
        for (role, url) in &urls {
            let state = galera::connect(url).and_then(|mut c| galera::read(&mut c));
            match state {
                Ok(s) if s.synced_in(size as u64) => {}
                Ok(s) => {
                    all = false;
                    last.push(format!("{role}: {}", s.summary()));
                }
                Err(e) => {
                    all = false;
                    let e = format!("{role}: {e:#}");
                    // A certificate refused (a `--server-tls` root that did not sign the
                    // nodes' certificate) is not cured by waiting.
                    if e.contains("the server's certificate") {
                        bail!("{e}");
                    }
                    last.push(e);
                }
            }
        }
        if all {
            return Ok(());
        }
        if t0.so_far() > SYNC_TIMEOUT {
            bail!(
                "the Galera cluster did not reach {size} synced nodes within {} s: {}",
                SYNC_TIMEOUT.as_secs(),
                last.join("; ")
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_settings_name_every_port() {
        let s = node_settings("c", 1, &[1, 2, 3], &[4, 5, 6], &[7, 8, 9]);
        let get = |n: &str| s.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        assert_eq!(
            get("wsrep_cluster_address"),
            Some("gcomm://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3")
        );
        let p = get("wsrep_provider_options").unwrap();
        assert!(p.contains("gmcast.listen_addr=tcp://127.0.0.1:2;"), "{p}");
        assert!(p.contains("ist.recv_addr=127.0.0.1:5;"), "{p}");
        assert_eq!(get("wsrep_sst_receive_address"), Some("127.0.0.1:8"));
        assert_eq!(
            get("wsrep_new_cluster"),
            None,
            "only the first node bootstraps"
        );
        let first = node_settings("c", 0, &[1, 2, 3], &[4, 5, 6], &[7, 8, 9]);
        assert!(first
            .iter()
            .any(|(k, v)| k == "wsrep_new_cluster" && v == "ON"));
    }
}
