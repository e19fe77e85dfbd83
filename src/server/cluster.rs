//! Throwaway clusters of local servers: a MariaDB Galera cluster (`galera`), a MariaDB Spider
//! head over MariaDB shards (`spider`), and a PostgreSQL coordinator over PostgreSQL shards
//! through `postgres_fdw` (`pg-shards`).
//!
//! A cluster lives in one directory: `DIR/ixbench-cluster.json` (kind, nodes, whether ixbench
//! created the directory; no secret) and one data directory per node (`DIR/node1`,
//! `DIR/head`, `DIR/shard1`, ...), each a server as [`super::start`] makes it (its own port,
//! generated password, private socket, registry entry). The marker is written before any node
//! starts and updated as nodes come up, so `ixbench server stop DIR` finds every node even after
//! a crash. A start that fails stops every node it started (nothing is left running) and keeps
//! the directory for inspection.
//!
//! What differs between kinds (names, sizes, the node clients connect to, what refuses
//! settings, starts the nodes, links the head to its shards) is one [`ClusterRow`] per kind in
//! the kind's own file (`galera.rs`, `spider.rs`, `pg_shards.rs`), registered in `server/mod.rs`:
//! those files build on this one, and this one names none of them.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::RunningServer;

/// The cluster marker in a cluster directory.
pub const CLUSTER_MARKER: &str = "ixbench-cluster.json";

/// What `ixbench server start` starts: one server, or a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StartKind {
    /// PostgreSQL (initdb, postgres).
    Postgres,
    /// MariaDB (mariadb-install-db, mariadbd), with the RocksDB plugin when installed.
    Mariadb,
    /// A MariaDB Galera cluster (`--nodes`, default 3) on loopback ports.
    Galera,
    /// A MariaDB Spider head over `--shards` MariaDB backends (default 2).
    Spider,
    /// A PostgreSQL coordinator over `--shards` PostgreSQL backends through postgres_fdw.
    PgShards,
}

impl StartKind {
    /// The cluster kind, when it is one.
    pub fn cluster(self) -> Option<ClusterKind> {
        match self {
            StartKind::Galera => Some(ClusterKind::Galera),
            StartKind::Spider => Some(ClusterKind::Spider),
            StartKind::PgShards => Some(ClusterKind::PgShards),
            StartKind::Postgres | StartKind::Mariadb => None,
        }
    }

    /// The single-server kind, when it is one.
    pub fn server(self) -> Option<super::ServerKind> {
        match self {
            StartKind::Postgres => Some(super::ServerKind::Postgres),
            StartKind::Mariadb => Some(super::ServerKind::Mariadb),
            _ => None,
        }
    }
}

/// A kind of cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClusterKind {
    /// MariaDB Galera: every node a full replica, synchronous certification-based replication.
    Galera,
    /// MariaDB Spider: a head whose Spider tables are hash-partitioned over backend servers.
    Spider,
    /// PostgreSQL: a coordinator whose partitioned tables have foreign-table partitions
    /// (postgres_fdw) on backend servers.
    PgShards,
}

impl ClusterKind {
    /// Every kind.
    pub const ALL: [ClusterKind; 3] = [
        ClusterKind::Galera,
        ClusterKind::Spider,
        ClusterKind::PgShards,
    ];

    /// The kind a `--target` names (`galera`, `spider`, `pg-shards`), if it names one.
    pub fn from_target(target: &str) -> Option<ClusterKind> {
        super::CLUSTERS
            .iter()
            .find(|r| r.name == target)
            .map(|r| r.kind)
    }

    /// How to reach the DBMS a `--target` names: a cluster's name stands for its nodes' kind.
    pub fn target_spec(target: &str) -> Result<crate::dbms::TargetSpec> {
        let cluster = Self::from_target(target);
        crate::dbms::TargetSpec::parse(cluster.map_or(target, |k| k.node_kind()))
    }

    /// Whether its tables are sharded over backend servers behind one head that takes the
    /// workload's SQL (Spider, pg-shards); otherwise every node is a full replica that takes it
    /// (Galera: `--write-nodes`, `--on-node-loss`, the `wsrep%` figures).
    pub fn sharded(self) -> bool {
        self.row().sharded
    }

    /// The number of nodes (Galera) or shards when none is given.
    pub fn default_size(self) -> usize {
        if self.sharded() {
            2
        } else {
            3
        }
    }

    /// What spreads a sharded cluster's tables over its shards, as its start line names it
    /// (`Spider`, `postgres_fdw`); Galera replicates.
    pub fn sharding(self) -> &'static str {
        self.row().sharding
    }

    /// The size of the cluster `ixbench server start KIND` starts, from its `--nodes` (Galera)
    /// or `--shards` (Spider, pg-shards); the other option is refused in one line.
    pub fn start_size(self, nodes: Option<usize>, shards: Option<usize>) -> Result<usize> {
        if self.sharded() {
            if nodes.is_some() {
                bail!("--nodes is for galera; {} takes --shards", self.name());
            }
            Ok(shards.unwrap_or(self.default_size()))
        } else {
            if shards.is_some() {
                bail!("--shards is for spider and pg-shards; a Galera cluster takes --nodes");
            }
            Ok(nodes.unwrap_or(self.default_size()))
        }
    }

    /// Name as on the command line.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The target kind of its nodes, as `dbms::TargetSpec` names it: `mysql` (Galera, Spider)
    /// or `postgres` (pg-shards).
    pub fn node_kind(self) -> &'static str {
        self.row().node_kind
    }

    /// The server each node runs.
    pub fn node_server(self) -> super::ServerKind {
        self.row().node_server
    }

    /// The smallest and largest number of nodes (Galera) or shards.
    pub fn size_range(self) -> (usize, usize) {
        self.row().size_range
    }

    /// Its row, as its file gives it (see [`ClusterRow`]).
    fn row(self) -> &'static ClusterRow {
        &super::CLUSTERS[self as usize]
    }
}

/// What ixbench knows of one cluster kind, in one place: its facts and what starts it. Each
/// kind's file (`galera.rs`, `spider.rs`, `pg_shards.rs`) gives its row as `CLUSTER`, and the
/// folder registers them in `super::CLUSTERS` (`server/mod.rs`), so this file calls none of
/// them by name.
pub(super) struct ClusterRow {
    /// The kind (its row is at its place in [`ClusterKind::ALL`]).
    pub(super) kind: ClusterKind,
    /// Its name as on the command line.
    pub(super) name: &'static str,
    /// Whether its tables are sharded behind one head (see [`ClusterKind::sharded`]).
    pub(super) sharded: bool,
    /// What spreads its tables, in its start line.
    pub(super) sharding: &'static str,
    /// The target kind of its nodes (a row of `dbms::registry`).
    pub(super) node_kind: &'static str,
    /// The server each node runs.
    pub(super) node_server: super::ServerKind,
    /// The smallest and largest number of nodes or shards.
    pub(super) size_range: (usize, usize),
    /// The role of the node clients connect to (see [`RunningCluster::entry`]).
    pub(super) entry_role: &'static str,
    /// Refuse `--set` settings the kind cannot take, before anything starts.
    pub(super) check_settings: fn(&[(String, String)]) -> Result<()>,
    /// Start its nodes in a cluster directory begun for it.
    pub(super) start: fn(RunningCluster, &ClusterOptions) -> Result<RunningCluster>,
    /// What the head's tables say to reach the shards (see [`RunningCluster::link_params`]).
    pub(super) link_params: fn(&RunningServer) -> Result<String>,
}

/// For a kind whose nodes take every setting `--set` gives them as they are.
pub(super) fn any_settings(_: &[(String, String)]) -> Result<()> {
    Ok(())
}

/// For a kind whose head needs nothing beyond host and port to reach its shards.
pub(super) fn no_link_params(_: &RunningServer) -> Result<String> {
    Ok(String::new())
}

/// How to start a cluster.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// New cluster directory (must not exist, or be empty).
    pub dir: PathBuf,
    /// Galera nodes, or shards (backends) of Spider and pg-shards.
    pub size: usize,
    /// Settings for every node (`--set`).
    pub settings: Vec<(String, String)>,
    /// Every node takes TCP connections over TLS only, and ixbench's connections and the
    /// nodes' connections to each other verify it (`--server-tls`); `None`: in clear.
    pub tls: Option<super::ServerTls>,
}

/// One node of a cluster as the marker records it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NodeEntry {
    /// `node1`..: Galera nodes; `head`, `shard1`..: Spider; `coordinator`, `shard1`..:
    /// pg-shards.
    pub role: String,
    /// Its data directory.
    pub datadir: PathBuf,
    /// Its port on 127.0.0.1 (0 until it started).
    pub port: u16,
}

/// What `DIR/ixbench-cluster.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClusterMarker {
    /// The kind of cluster.
    pub kind: ClusterKind,
    /// Whether ixbench created the directory (only then may it remove it).
    pub created_dir: bool,
    /// The nodes, in start order.
    pub nodes: Vec<NodeEntry>,
}

impl ClusterMarker {
    /// The marker of `dir`, if it is a cluster directory.
    pub fn read(dir: &Path) -> Result<Option<ClusterMarker>> {
        let path = dir.join(CLUSTER_MARKER);
        match std::fs::read_to_string(&path) {
            Ok(s) => Ok(Some(
                serde_json::from_str(&s).with_context(|| format!("reading {}", path.display()))?,
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(CLUSTER_MARKER);
        let tmp = dir.join(format!(".{CLUSTER_MARKER}.tmp"));
        let text = serde_json::to_string_pretty(self).context("encoding the cluster marker")?;
        std::fs::write(&tmp, text + "\n").with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))
    }
}

/// A node of a running cluster.
#[derive(Debug)]
pub struct Node {
    /// Its role (see [`NodeEntry::role`]).
    pub role: String,
    /// The server.
    pub server: RunningServer,
}

/// A cluster started by ixbench. Dropping it stops every node (last started first), unless
/// it was detached.
#[derive(Debug)]
pub struct RunningCluster {
    /// What it is.
    pub kind: ClusterKind,
    /// Its directory (absolute).
    pub dir: PathBuf,
    /// Whether ixbench created the directory.
    pub created_dir: bool,
    nodes: Vec<Node>,
    detached: bool,
}

impl RunningCluster {
    /// Begin a cluster in a new or empty directory `dir` (mode 0755: each node's data directory
    /// inside is private to its server's user).
    pub(crate) fn begin(kind: ClusterKind, dir: &Path) -> Result<RunningCluster> {
        let created = match std::fs::symlink_metadata(dir) {
            Ok(m) if m.is_dir() => {
                let mut entries =
                    std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
                if entries.next().is_some() {
                    bail!(
                        "cluster directory {} is not empty: give a path that does not exist or \
                         an empty directory",
                        dir.display()
                    );
                }
                false
            }
            Ok(_) => bail!("{} exists and is not a directory", dir.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(p) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(p)
                        .with_context(|| format!("creating {}", p.display()))?;
                }
                std::fs::create_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
                true
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
        };
        let dir = dir
            .canonicalize()
            .with_context(|| format!("resolving {}", dir.display()))?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))
                .with_context(|| format!("chmod 755 {}", dir.display()))?;
        }
        let c = RunningCluster {
            kind,
            dir,
            created_dir: created,
            nodes: Vec::new(),
            detached: false,
        };
        c.write_marker(&[])?;
        Ok(c)
    }

    /// The data directory of the node with `role`.
    pub(crate) fn node_dir(&self, role: &str) -> PathBuf {
        self.dir.join(role)
    }

    /// Record that the node `role` is being started (before it starts, so a stop finds it).
    pub(crate) fn announce(&self, role: &str) -> Result<()> {
        self.write_marker(&[role])
    }

    /// Add a started node.
    pub(crate) fn add(&mut self, role: &str, server: RunningServer) -> Result<()> {
        self.nodes.push(Node {
            role: role.to_string(),
            server,
        });
        self.write_marker(&[])
    }

    fn write_marker(&self, starting: &[&str]) -> Result<()> {
        let mut nodes: Vec<NodeEntry> = self
            .nodes
            .iter()
            .map(|n| NodeEntry {
                role: n.role.clone(),
                datadir: n.server.datadir.clone(),
                port: n.server.port,
            })
            .collect();
        nodes.extend(starting.iter().map(|r| NodeEntry {
            role: r.to_string(),
            datadir: self.node_dir(r),
            port: 0,
        }));
        ClusterMarker {
            kind: self.kind,
            created_dir: self.created_dir,
            nodes,
        }
        .write(&self.dir)
    }

    /// The node with `role`, to change.
    pub fn node_mut(&mut self, role: &str) -> Option<&mut RunningServer> {
        self.nodes
            .iter_mut()
            .find(|n| n.role == role)
            .map(|n| &mut n.server)
    }

    /// The nodes, in start order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The node with `role`.
    pub fn node(&self, role: &str) -> Option<&RunningServer> {
        self.nodes
            .iter()
            .find(|n| n.role == role)
            .map(|n| &n.server)
    }

    /// The node clients connect to: Spider's head, pg-shards' coordinator, Galera's first node.
    pub fn entry(&self) -> &RunningServer {
        self.node(self.kind.row().entry_role)
            .or_else(|| self.nodes.first().map(|n| &n.server))
            .expect("a started cluster has nodes")
    }

    /// The shards (Spider and pg-shards backends), in order.
    pub fn shards(&self) -> Vec<&RunningServer> {
        self.nodes
            .iter()
            .filter(|n| n.role.starts_with("shard"))
            .map(|n| &n.server)
            .collect()
    }

    /// Run `build` on every shard, one after the other, and return the number of shards; an
    /// error names the shard (`what` says what was run).
    pub fn on_shards(
        &self,
        what: &str,
        mut build: impl FnMut(&RunningServer) -> Result<()>,
    ) -> Result<usize> {
        let shards = self.shards();
        for (k, s) in shards.iter().enumerate() {
            build(s).with_context(|| format!("{what} on shard{}", k + 1))?;
        }
        Ok(shards.len())
    }

    /// What the head's tables say to reach the shards beyond host and port (Spider: the TLS
    /// settings, see `spider.rs`); empty for the other kinds.
    pub fn link_params(&self) -> Result<String> {
        (self.kind.row().link_params)(self.entry())
    }

    /// PIDs of every node's processes.
    pub fn pids(&self) -> Vec<u32> {
        self.nodes.iter().flat_map(|n| n.server.pids()).collect()
    }

    /// Stop every node (last started first) and wait for them; the directory is kept.
    pub fn stop(mut self) -> Result<()> {
        self.stop_nodes()
    }

    /// Stop every node, then remove the directory if ixbench created it.
    pub fn stop_and_remove(mut self) -> Result<()> {
        self.stop_nodes()?;
        if self.created_dir {
            std::fs::remove_dir_all(&self.dir)
                .with_context(|| format!("removing {}", self.dir.display()))?;
        }
        Ok(())
    }

    /// Leave every node running (for `ixbench server start`); stop them with
    /// [`stop_cluster_dir`].
    pub fn detach(mut self) {
        self.detached = true;
        for n in self.nodes.drain(..) {
            n.server.detach();
        }
    }

    fn stop_nodes(&mut self) -> Result<()> {
        let mut errors = Vec::new();
        while let Some(n) = self.nodes.pop() {
            if let Err(e) = n.server.stop() {
                errors.push(format!("{}: {e:#}", n.role));
            }
        }
        if !errors.is_empty() {
            bail!("stopping the cluster: {}", errors.join("; "));
        }
        Ok(())
    }
}

impl Drop for RunningCluster {
    fn drop(&mut self) {
        if self.detached {
            return;
        }
        if let Err(e) = self.stop_nodes() {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "ixbench: warning: {e:#}");
        }
    }
}

/// Start a cluster of `kind`.
pub fn start_cluster(kind: ClusterKind, opts: &ClusterOptions) -> Result<RunningCluster> {
    let (lo, hi) = kind.size_range();
    if !(lo..=hi).contains(&opts.size) {
        bail!(
            "a {} cluster takes {lo} to {hi} {}, not {}",
            kind.name(),
            if kind.sharded() { "shards" } else { "nodes" },
            opts.size
        );
    }
    (kind.row().check_settings)(&opts.settings)?;
    let cluster = RunningCluster::begin(kind, &opts.dir)?;
    let dir = cluster.dir.clone();
    let started = (kind.row().start)(cluster, opts);
    // On failure the cluster value was dropped inside, which stopped every node.
    started.with_context(|| {
        format!(
            "starting a {} cluster (nothing left running; directory kept for inspection: {})",
            kind.name(),
            dir.display()
        )
    })
}

/// Whether `dir` is a cluster directory made by ixbench.
pub fn is_cluster_dir(dir: &Path) -> bool {
    dir.join(CLUSTER_MARKER).is_file()
}

/// Stop every node of the cluster in `dir` that still runs (last started first). Returns how
/// many were running.
pub fn stop_cluster_dir(dir: &Path) -> Result<usize> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("no cluster directory {}", dir.display()))?;
    let marker = ClusterMarker::read(&dir)?
        .with_context(|| format!("{} has no {CLUSTER_MARKER}", dir.display()))?;
    let mut stopped = 0;
    let mut errors = Vec::new();
    for n in marker.nodes.iter().rev() {
        if !n.datadir.starts_with(&dir) {
            errors.push(format!(
                "{}: data directory {} is outside the cluster directory (left alone)",
                n.role,
                n.datadir.display()
            ));
            continue;
        }
        if !n.datadir.is_dir() {
            continue;
        }
        match super::server_running(&n.datadir) {
            Ok(true) => match super::stop_datadir(&n.datadir) {
                Ok(()) => stopped += 1,
                Err(e) => errors.push(format!("{}: {e:#}", n.role)),
            },
            Ok(false) => {}
            // A node whose initialization had not written its files yet: nothing runs there.
            Err(_) => {}
        }
    }
    if !errors.is_empty() {
        bail!("stopping cluster {}: {}", dir.display(), errors.join("; "));
    }
    Ok(stopped)
}

/// Remove a cluster directory ixbench created, once no node runs.
pub fn remove_cluster_dir(dir: &Path) -> Result<()> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("no cluster directory {}", dir.display()))?;
    let marker = ClusterMarker::read(&dir)?
        .with_context(|| format!("{} has no {CLUSTER_MARKER}", dir.display()))?;
    if !marker.created_dir {
        bail!(
            "{} existed before ixbench started a cluster in it: ixbench removes only directories \
             it created",
            dir.display()
        );
    }
    for n in &marker.nodes {
        if n.datadir.is_dir() && super::server_running(&n.datadir).unwrap_or(false) {
            bail!(
                "node {} still runs on {}: stop it first",
                n.role,
                n.datadir.display()
            );
        }
    }
    std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))
}

/// A node of a cluster left running by `ixbench server start`, as its directory tells.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInfo {
    /// Its role.
    pub role: String,
    /// Its URL, without password (ixbench finds the password by the port).
    pub url: String,
    /// Whether its server runs now.
    pub running: bool,
}

/// The nodes of the cluster in `dir` (for a run against a cluster started earlier): kind and
/// nodes in start order.
pub fn describe_cluster_dir(dir: &Path) -> Result<(ClusterKind, Vec<NodeInfo>)> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("no cluster directory {}", dir.display()))?;
    let marker = ClusterMarker::read(&dir)?
        .with_context(|| format!("{} has no {CLUSTER_MARKER}", dir.display()))?;
    let server_kind = marker.kind.node_server();
    let nodes = marker
        .nodes
        .iter()
        .filter(|n| n.port != 0)
        .map(|n| NodeInfo {
            role: n.role.clone(),
            url: server_kind.flavor().url(n.port),
            running: n.datadir.starts_with(&dir)
                && super::server_running(&n.datadir).unwrap_or(false),
        })
        .collect();
    Ok((marker.kind, nodes))
}

/// Free TCP ports on 127.0.0.1, all different, below the kernel's ephemeral range.
///
/// A cluster's ports are picked before its first node starts and its last node binds them
/// a minute later (after the others' state transfers). A port from the ephemeral range (what
/// binding port 0 hands out) can be taken meanwhile by any outgoing connection on the machine
/// (a CI run's other tests took node3's in one), so these come from below it, at random, each
/// checked bindable: there only another explicit bind can take them.
pub(crate) fn free_ports(n: usize) -> Result<Vec<u16>> {
    use rand::Rng;
    let (lo, hi) = below_ephemeral();
    let mut rng = rand_pcg::Pcg64Mcg::new(u128::from(seed()?));
    let mut ports: Vec<u16> = Vec::with_capacity(n);
    let mut tries = 0;
    while ports.len() < n {
        tries += 1;
        if tries > 1000 * n.max(1) {
            bail!(
                "found only {} of {n} free ports in {lo}..{hi} on 127.0.0.1",
                ports.len()
            );
        }
        let p = rng.random_range(lo..hi);
        if !ports.contains(&p) && super::process::check_port_free(p).is_ok() {
            ports.push(p);
        }
    }
    Ok(ports)
}

/// The range free ports are picked from: 10000 up to the start of the kernel's ephemeral
/// range (`/proc/sys/net/ipv4/ip_local_port_range`, Linux's default 32768), or 20000..30000
/// when that range leaves too little room below it.
fn below_ephemeral() -> (u16, u16) {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    if low >= 12000 {
        (10000, low)
    } else {
        (20000, 30000)
    }
}

/// A seed for the port picker from the OS (so two test processes pick different ports).
fn seed() -> Result<u64> {
    use std::io::Read;
    let mut b = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .context("reading /dev/urandom")?;
    Ok(u64::from_le_bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_round_trip_and_ports() {
        let t = tempfile::tempdir().unwrap();
        let c = RunningCluster::begin(ClusterKind::Spider, &t.path().join("c")).unwrap();
        c.announce("head").unwrap();
        let m = ClusterMarker::read(&c.dir).unwrap().unwrap();
        assert_eq!(m.kind, ClusterKind::Spider);
        assert!(m.created_dir);
        assert_eq!(m.nodes.len(), 1);
        assert_eq!(m.nodes[0].datadir, c.dir.join("head"));
        // Nothing runs there: stop finds nothing to stop, and remove takes the directory.
        assert_eq!(stop_cluster_dir(&c.dir).unwrap(), 0);
        let dir = c.dir.clone();
        drop(c);
        remove_cluster_dir(&dir).unwrap();
        assert!(!dir.exists());

        let p = free_ports(5).unwrap();
        let mut q = p.clone();
        q.sort();
        q.dedup();
        assert_eq!(q.len(), 5);
        // Below the ephemeral range, where no outgoing connection can take them.
        let (lo, hi) = below_ephemeral();
        assert!(
            p.iter().all(|&x| (lo..hi).contains(&x)),
            "{p:?} not in {lo}..{hi}"
        );
        // A non-empty directory is refused.
        std::fs::write(t.path().join("x"), "x").unwrap();
        assert!(RunningCluster::begin(ClusterKind::Galera, t.path()).is_err());
        let e = start_cluster(
            ClusterKind::Galera,
            &ClusterOptions {
                dir: t.path().join("g"),
                size: 0,
                settings: vec![],
                tls: None,
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("1 to 9 nodes"), "{e}");
    }

    /// What the commands ask of a cluster kind is answered here, by kind.
    #[test]
    fn what_a_kind_says_of_itself() {
        for (i, k) in ClusterKind::ALL.into_iter().enumerate() {
            // Each kind's row is its own, at its place.
            assert_eq!(super::super::CLUSTERS[i].kind, k);
            assert_eq!(ClusterKind::from_target(k.name()), Some(k));
            assert!(crate::dbms::registry::find(k.node_kind()).is_some());
            // The name on the command line is the one in the marker.
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                format!("\"{}\"", k.name())
            );
        }
        assert_eq!(ClusterKind::from_target("mariadb"), None);
        assert_eq!(ClusterKind::from_target("Galera"), None);
        let g = ClusterKind::Galera;
        let (sp, pg) = (ClusterKind::Spider, ClusterKind::PgShards);
        assert!(!g.sharded() && sp.sharded() && pg.sharded());
        assert_eq!(
            [g.default_size(), sp.default_size(), pg.default_size()],
            [3, 2, 2]
        );
        assert_eq!([sp.sharding(), pg.sharding()], ["Spider", "postgres_fdw"]);
        assert_eq!(
            [g.node_server(), sp.node_server(), pg.node_server()],
            [
                super::super::ServerKind::Mariadb,
                super::super::ServerKind::Mariadb,
                super::super::ServerKind::Postgres
            ]
        );
        assert_eq!(g.start_size(Some(5), None).unwrap(), 5);
        assert_eq!(g.start_size(None, None).unwrap(), 3);
        assert_eq!(pg.start_size(None, Some(4)).unwrap(), 4);
        assert_eq!(sp.start_size(None, None).unwrap(), 2);
        assert_eq!(
            g.start_size(None, Some(2)).unwrap_err().to_string(),
            "--shards is for spider and pg-shards; a Galera cluster takes --nodes"
        );
        assert_eq!(
            pg.start_size(Some(2), None).unwrap_err().to_string(),
            "--nodes is for galera; pg-shards takes --shards"
        );
    }
}
