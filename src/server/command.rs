//! `ixbench server start|stop`: a server or cluster that outlives the command, for manual runs.

use std::time::Instant;

use anyhow::{bail, Result};

use crate::cli::{ServerArgs, ServerCommand, ServerStartArgs};

use super::cluster::{
    is_cluster_dir, remove_cluster_dir, start_cluster, stop_cluster_dir, ClusterKind,
    ClusterOptions,
};
use super::{datadir, parse_setting, remove_datadir, server_running, stop_datadir, ServerOptions};

/// Run `ixbench server ...`; returns the exit status.
pub fn run(args: &ServerArgs) -> Result<u8> {
    match &args.command {
        ServerCommand::Start(a) => {
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
            };
            let t0 = Instant::now();
            let server = super::start_from(kind, &opts, a.server_bin.as_deref())?;
            let secs = t0.elapsed().as_secs_f64();
            crate::outln!("url: {}", server.url());
            crate::outln!("datadir: {}", server.datadir.display());
            crate::outln!(
                "password: in {} (mode 0600; ixbench finds it by itself for this URL)",
                server.datadir.join(super::PASSWORD_FILE).display()
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
        ServerCommand::Stop(a) => {
            if is_cluster_dir(&a.datadir) {
                let t0 = Instant::now();
                let n = stop_cluster_dir(&a.datadir)?;
                crate::outln!(
                    "stopped {n} node(s) of the cluster in {} in {:.2} s",
                    a.datadir.display(),
                    t0.elapsed().as_secs_f64()
                );
                if a.remove {
                    remove_cluster_dir(&a.datadir)?;
                    crate::outln!("removed {}", a.datadir.display());
                }
                return Ok(0);
            }
            if a.remove && !server_running(&a.datadir)? {
                // Already stopped: nothing to stop, only the directory to remove.
                crate::outln!("no server running on {}", a.datadir.display());
            } else {
                let t0 = Instant::now();
                stop_datadir(&a.datadir)?;
                crate::outln!(
                    "stopped server on {} in {:.2} s",
                    a.datadir.display(),
                    t0.elapsed().as_secs_f64()
                );
            }
            if a.remove {
                remove_datadir(&a.datadir)?;
                crate::outln!("removed {}", a.datadir.display());
            }
            Ok(0)
        }
    }
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
    let size = match kind {
        ClusterKind::Galera => {
            if a.shards.is_some() {
                bail!("--shards is for spider and pg-shards; a Galera cluster takes --nodes");
            }
            a.nodes.unwrap_or(3)
        }
        ClusterKind::Spider | ClusterKind::PgShards => {
            if a.nodes.is_some() {
                bail!("--nodes is for galera; {} takes --shards", kind.name());
            }
            a.shards.unwrap_or(2)
        }
    };
    let opts = ClusterOptions {
        dir: a
            .datadir
            .clone()
            .unwrap_or_else(|| datadir::default_path(kind.name())),
        size,
        settings,
    };
    let t0 = Instant::now();
    let cluster = start_cluster(kind, &opts)?;
    let secs = t0.elapsed().as_secs_f64();
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
        super::PASSWORD_FILE
    );
    crate::outln!("started in: {secs:.2} s");
    crate::outln!("stop with: ixbench server stop {}", cluster.dir.display());
    cluster.detach();
    Ok(0)
}
