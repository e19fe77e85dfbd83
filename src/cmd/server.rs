//! `ixbench server start|stop`: a server or cluster that outlives the command, for manual runs.

use anyhow::{bail, Result};

use clap::{Args, Subcommand};
use std::path::PathBuf;

use crate::measure::clock::{self, Stopwatch};
use crate::server::cluster::{
    is_cluster_dir, remove_cluster_dir, start_cluster, stop_cluster_dir, ClusterKind,
    ClusterOptions,
};
use crate::server::{
    datadir, parse_setting, remove_datadir, server_running, stop_datadir, ServerOptions,
};

/// Options of `ixbench server`.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ServerCommand,
}

/// Subcommands of `ixbench server`.
#[derive(Debug, Clone, Subcommand)]
pub enum ServerCommand {
    /// Initialize a new data directory, start a server on 127.0.0.1, print its URL and return,
    /// leaving it running.
    Start(ServerStartArgs),
    /// Stop a server or cluster started by `ixbench server start`.
    Stop(ServerStopArgs),
    /// The servers this user's ixbench started and did not stop: URL, data directory, PID, age.
    List,
}

/// Options of `ixbench server start`.
#[derive(Debug, Clone, Args)]
pub struct ServerStartArgs {
    /// Which server, or cluster (galera, spider, pg-shards).
    #[arg(value_enum)]
    pub kind: crate::server::StartKind,

    /// Nodes of a Galera cluster (default 3).
    #[arg(long)]
    pub nodes: Option<usize>,

    /// Shards (backend servers) of a Spider or pg-shards cluster (default 2).
    #[arg(long)]
    pub shards: Option<usize>,

    /// Server setting as NAME=VALUE (PostgreSQL `-c`, MariaDB `--NAME=VALUE`; repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,

    /// New data directory (must not exist, or be empty). Default: a new directory under the
    /// system temp dir.
    #[arg(long)]
    pub datadir: Option<PathBuf>,

    /// TCP port on 127.0.0.1. Default: a free one.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub port: Option<u16>,

    /// The `bin/` directory of the PostgreSQL or MariaDB install to start (any build, not only
    /// Debian's). Default: the installed Debian server.
    #[arg(long, value_name = "DIR")]
    pub server_bin: Option<PathBuf>,

    /// Start the server, or every node of the cluster, taking TCP connections over TLS only,
    /// with DIR/server.crt and DIR/server.key (the certificate must name 127.0.0.1); ixbench's
    /// connections (and a cluster's nodes' connections to each other) verify it against
    /// DIR/ca.crt. The URL printed carries the TLS settings.
    #[arg(long, value_name = "DIR")]
    pub server_tls: Option<PathBuf>,
}

/// Options of `ixbench server stop`.
#[derive(Debug, Clone, Args)]
pub struct ServerStopArgs {
    /// Data directory of the server (of a cluster: its directory; every node is stopped).
    pub datadir: PathBuf,

    /// Then remove the data directory (only one ixbench created; also when the server is
    /// already stopped).
    #[arg(long)]
    pub remove: bool,
}

/// Run `ixbench server ...`; returns the exit status.
pub fn run(args: &ServerArgs) -> Result<u8> {
    match &args.command {
        ServerCommand::Start(a) => start(a),
        ServerCommand::List => list(),
        ServerCommand::Stop(a) => stop(a),
    }
}

/// `ixbench server start`: a cluster, or one server started and left running, what it is
/// printed.
fn start(a: &ServerStartArgs) -> Result<u8> {
    let settings = a
        .set
        .iter()
        .map(|s| parse_setting(s))
        .collect::<Result<Vec<_>>>()?;
    if let Some(kind) = a.kind.cluster() {
        if a.server_bin.is_some() {
            bail!("--server-bin is for a single postgres or mariadb server, not a cluster");
        }
        return start_detached_cluster(a, kind, settings);
    }
    if a.nodes.is_some() || a.shards.is_some() {
        bail!("--nodes is for galera, --shards for spider and pg-shards");
    }
    let kind = a.kind.server().expect("not a cluster: a server");
    let opts = ServerOptions {
        datadir: a
            .datadir
            .clone()
            .unwrap_or_else(|| datadir::default_path(kind.name())),
        port: a.port,
        settings,
        tls: server_tls(a.server_tls.as_deref())?,
    };
    let t0 = Stopwatch::start();
    let server = crate::server::start_from(kind, &opts, a.server_bin.as_deref())?;
    let secs = t0.elapsed_secs();
    crate::outln!("url: {}", server.url());
    crate::outln!("datadir: {}", server.datadir.display());
    crate::outln!(
        "password: in {} (mode 0600; ixbench finds it by itself for this URL)",
        server.datadir.join(crate::server::PASSWORD_FILE).display()
    );
    crate::outln!("log: {}", server.log.display());
    if let Some(s) = &server.socket {
        crate::outln!("socket: {}", s.display());
    }
    if let Some(pid) = server.pids().first() {
        crate::outln!("pid: {pid}");
    }
    crate::outln!("started in: {secs:.2} s");
    crate::outln!(
        "stop with: ixbench server stop {}",
        server.datadir.display()
    );
    server.detach();
    Ok(0)
}

/// `ixbench server list`.
fn list() -> Result<u8> {
    let servers = crate::server::registered_servers();
    if servers.is_empty() {
        crate::outln!("no server started by ixbench is running for this user");
    }
    for r in servers {
        crate::outln!(
            "{}  {}  pid {}  up {}  datadir {}",
            r.kind,
            r.url,
            r.pid
                .map_or("- (not running)".to_string(), |p| p.to_string()),
            r.started
                .and_then(clock::wall_since)
                .map_or("-".to_string(), |d| crate::progress::human(d.as_secs_f64())),
            r.datadir.display()
        );
    }
    Ok(0)
}

/// `ixbench server stop`: every node of a cluster, or a server this user's ixbench started;
/// with `--remove`, its directory too.
fn stop(a: &ServerStopArgs) -> Result<u8> {
    if !is_cluster_dir(&a.datadir) {
        hint_datadir_below(&a.datadir)?;
    }
    if is_cluster_dir(&a.datadir) {
        let t0 = Stopwatch::start();
        let n = stop_cluster_dir(&a.datadir)?;
        crate::outln!(
            "stopped {n} node(s) of the cluster in {} in {:.2} s",
            a.datadir.display(),
            t0.elapsed_secs()
        );
        if a.remove {
            remove_cluster_dir(&a.datadir)?;
            crate::outln!("removed {}", a.datadir.display());
        }
        return Ok(0);
    }
    // Only a server this user's ixbench started (refused before anything is read or
    // signalled otherwise).
    crate::server::check_own_datadir(&a.datadir)?;
    if a.remove && !server_running(&a.datadir)? {
        // Already stopped: nothing to stop, only the directory to remove.
        crate::outln!("no server running on {}", a.datadir.display());
    } else {
        let t0 = Stopwatch::start();
        stop_datadir(&a.datadir)?;
        crate::outln!(
            "stopped server on {} in {:.2} s",
            a.datadir.display(),
            t0.elapsed_secs()
        );
    }
    if a.remove {
        remove_datadir(&a.datadir)?;
        crate::outln!("removed {}", a.datadir.display());
    }
    Ok(0)
}

/// `--server-tls DIR` read, or `None` without it.
fn server_tls(dir: Option<&std::path::Path>) -> Result<Option<crate::server::ServerTls>> {
    dir.map(crate::server::ServerTls::from_dir).transpose()
}

/// `ixbench server start galera|spider|pg-shards`.
fn start_detached_cluster(
    a: &ServerStartArgs,
    kind: ClusterKind,
    settings: Vec<(String, String)>,
) -> Result<u8> {
    if a.port.is_some() {
        bail!("--port is for one server: the nodes of a cluster get free ports");
    }
    let size = kind.start_size(a.nodes, a.shards)?;
    let opts = ClusterOptions {
        dir: a
            .datadir
            .clone()
            .unwrap_or_else(|| datadir::default_path(kind.name())),
        size,
        settings,
        tls: server_tls(a.server_tls.as_deref())?,
    };
    let t0 = Stopwatch::start();
    let cluster = start_cluster(kind, &opts)?;
    let secs = t0.elapsed_secs();
    crate::outln!("cluster: {} ({} nodes)", kind.name(), cluster.nodes().len());
    crate::outln!("url: {}", cluster.entry().url());
    for n in cluster.nodes() {
        crate::outln!(
            "{}: {} (pid {}, datadir {})",
            n.role,
            n.server.url(),
            n.server
                .pids()
                .first()
                .map_or_else(|| "unknown".to_string(), |p| p.to_string()),
            n.server.datadir.display()
        );
    }
    crate::outln!("dir: {}", cluster.dir.display());
    crate::outln!(
        "passwords: in each node's {} (mode 0600; ixbench finds them by itself for these URLs)",
        crate::server::PASSWORD_FILE
    );
    crate::outln!("started in: {secs:.2} s");
    crate::outln!("stop with: ixbench server stop {}", cluster.dir.display());
    cluster.detach();
    Ok(0)
}

/// `server stop RESULTS_DIR` where the data directory is one level down (a run's results
/// directory holds its server's): name it instead of failing on a directory that is none.
fn hint_datadir_below(dir: &std::path::Path) -> Result<()> {
    let is_datadir =
        |d: &std::path::Path| d.join(datadir::MARKER).is_file() || d.join("PG_VERSION").is_file();
    if !dir.is_dir() || is_datadir(dir) || dir.join("mysql").is_dir() {
        return Ok(());
    }
    let below: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir() && (is_datadir(p) || is_cluster_dir(p)))
                .collect()
        })
        .unwrap_or_default();
    match below.as_slice() {
        [one] => bail!(
            "{} is not a data directory; the server's is {} (ixbench server stop {})",
            dir.display(),
            one.display(),
            one.display()
        ),
        [] => Ok(()),
        many => bail!(
            "{} is not a data directory; it holds {}: name one",
            dir.display(),
            many.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
