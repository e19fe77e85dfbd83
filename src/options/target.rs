//! `--target` and the cluster options (`--nodes`, `--write-nodes`, `--on-node-loss`) parsed once
//! into one typed value, [`Target`]: how to reach the DBMS (its kind, a file or a URL) and the
//! shape of the cluster ixbench starts for it, if it names one. A command gets it from
//! [`CommonArgs::parsed_target`] (parsed on the first call, kept in the options); what differs
//! between kinds is asked of the value ([`Target::sharded`]) or of the registries below it
//! ([`ClusterKind`], [`crate::dbms`]), never by matching the text again.

use anyhow::{bail, Result};

use crate::dbms::TargetSpec;
use crate::server::ClusterKind;

/// What `--target` names.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// How to reach it: the DBMS kind (a cluster's: its nodes'), a file or a URL; no URL when
    /// ixbench starts the server or cluster.
    pub spec: TargetSpec,
    /// The cluster ixbench starts for it, when `--target` names one.
    pub cluster: Option<ClusterKind>,
}

/// The cluster a `--target galera|spider|pg-shards` asks for, with its options.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterShape {
    /// Its kind.
    pub kind: ClusterKind,
    /// Nodes (Galera) or shards (Spider, pg-shards).
    pub size: usize,
    /// Galera: the nodes (indexes) the workload's connections go to; empty on a sharded
    /// cluster (they go to its head).
    pub write: Vec<usize>,
    /// What a step does when a node leaves.
    pub on_loss: OnNodeLoss,
}

/// What a step does when a node leaves the cluster during it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnNodeLoss {
    /// Go on against the remaining nodes; the results say which node left and when.
    Continue,
    /// Stop the run with an error naming the node.
    Stop,
}

impl Target {
    /// Parse `--target`: a cluster's name (`galera`, `spider`, `pg-shards`: its nodes' kind,
    /// no URL), or what [`TargetSpec::parse`] takes.
    pub fn parse(target: &str) -> Result<Target> {
        Ok(Target {
            spec: ClusterKind::target_spec(target)?,
            cluster: ClusterKind::from_target(target),
        })
    }

    /// Whether it is a sharded cluster (`--target spider|pg-shards`).
    pub fn sharded(&self) -> bool {
        self.cluster.is_some_and(ClusterKind::sharded)
    }

    /// Refuse a sharded cluster for a command other than `run` and `index` (see
    /// [`refuse_sharded`]).
    pub fn refuse_sharded(&self, command: &str) -> Result<()> {
        refuse_sharded(self.cluster, command)
    }

    /// The cluster options (`--nodes`, `--write-nodes`, `--on-node-loss`) checked against the
    /// target, and the cluster's shape when it names one: an option that does not fit is an
    /// error in one line.
    pub fn cluster_shape(
        &self,
        nodes: Option<u64>,
        write_nodes: &str,
        on_loss: OnNodeLoss,
    ) -> Result<Option<ClusterShape>> {
        let Some(kind) = self.cluster.filter(|k| !k.sharded()) else {
            if nodes.is_some() && self.cluster.is_none() {
                bail!("--nodes is for --target galera, pg-shards and spider");
            }
            if let (Some(k), Some(n)) = (self.cluster, nodes) {
                let (lo, hi) = k.size_range();
                if (n as usize) < lo || n as usize > hi {
                    bail!(
                        "--nodes {n}: a {} cluster has {lo} to {hi} shards",
                        k.name()
                    );
                }
            }
            if write_nodes != "1" {
                bail!("--write-nodes is for --target galera");
            }
            if on_loss != OnNodeLoss::Continue {
                bail!("--on-node-loss is for --target galera");
            }
            return Ok(self.cluster.map(|kind| ClusterShape {
                kind,
                size: nodes.map_or(kind.default_size(), |n| n as usize),
                write: Vec::new(),
                on_loss,
            }));
        };
        let size = nodes.map_or(kind.default_size(), |n| n as usize);
        Ok(Some(ClusterShape {
            kind,
            size,
            write: parse_write_nodes(write_nodes, size)?,
            on_loss,
        }))
    }
}

/// Refuse a sharded cluster (`--target pg-shards|spider`) for a command other than `run` (the
/// insert benchmark) and `index` (the index lab): only their tables are created sharded so far.
pub fn refuse_sharded(kind: Option<ClusterKind>, command: &str) -> Result<()> {
    match kind {
        Some(k) if k.sharded() => bail!(
            "ixbench {command} --target {} is not supported yet: only `ixbench run` (the \
             insert benchmark) and `ixbench index` (the index lab) run on a sharded cluster",
            k.name()
        ),
        _ => Ok(()),
    }
}

/// `--write-nodes`: `1`, `all` or a list `1,3` (1-based) into node indexes (0-based), each
/// once, in the order given.
pub fn parse_write_nodes(s: &str, nodes: usize) -> Result<Vec<usize>> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("all") {
        return Ok((0..nodes).collect());
    }
    let mut out = Vec::new();
    for part in s.split(',') {
        let k: usize = part.trim().parse().map_err(|_| {
            anyhow::anyhow!("--write-nodes {s:?}: expected 1, all, or node numbers such as 1,3")
        })?;
        if k == 0 || k > nodes {
            bail!("--write-nodes {s}: node {k} is not one of the cluster's {nodes} nodes");
        }
        if out.contains(&(k - 1)) {
            bail!("--write-nodes {s}: node {k} is given twice");
        }
        out.push(k - 1);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        common: crate::options::cli::CommonArgs,
    }

    fn common(args: &[&str]) -> crate::options::cli::CommonArgs {
        Cli::try_parse_from(std::iter::once("ixbench").chain(args.iter().copied()))
            .unwrap()
            .common
    }

    #[test]
    fn a_target_is_parsed_once_into_its_kind_spec_and_cluster() {
        for (text, kind, cluster, sharded) in [
            ("galera", "mysql", Some(ClusterKind::Galera), false),
            ("spider", "mysql", Some(ClusterKind::Spider), true),
            ("pg-shards", "postgres", Some(ClusterKind::PgShards), true),
            ("mariadb", "mysql", None, false),
            ("null", "null", None, false),
        ] {
            let t = Target::parse(text).unwrap();
            assert_eq!((t.spec.kind.as_str(), t.cluster), (kind, cluster), "{text}");
            assert_eq!(t.sharded(), sharded, "{text}");
        }
        assert!(Target::parse("galera").unwrap().spec.needs_server());
        assert!(Target::parse("nosuch").is_err());
        // Kept: the second ask gets the same value, not a new parse.
        let c = common(&["--target", "pg-shards"]);
        let first: *const Target = c.parsed_target().unwrap();
        assert!(std::ptr::eq(first, c.parsed_target().unwrap()));
        let shape: *const ClusterShape = c.cluster_shape().unwrap().unwrap();
        assert!(std::ptr::eq(shape, c.cluster_shape().unwrap().unwrap()));
        let e = c
            .parsed_target()
            .unwrap()
            .refuse_sharded("ddl")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ixbench ddl --target pg-shards is not supported yet"),
            "{e}"
        );
        assert!(Target::parse("galera")
            .unwrap()
            .refuse_sharded("ddl")
            .is_ok());
    }

    #[test]
    fn the_cluster_options_give_the_shape_or_a_one_line_error() {
        let shape = |args: &[&str]| common(args).cluster_shape().map(|s| s.cloned());
        assert_eq!(shape(&["--target", "sqlite"]).unwrap(), None);
        assert_eq!(
            shape(&["--target", "galera"]).unwrap(),
            Some(ClusterShape {
                kind: ClusterKind::Galera,
                size: 3,
                write: vec![0],
                on_loss: OnNodeLoss::Continue
            })
        );
        let g = shape(&[
            "--target",
            "galera",
            "--nodes",
            "4",
            "--write-nodes",
            "all",
            "--on-node-loss",
            "stop",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            (g.size, g.write, g.on_loss),
            (4, vec![0, 1, 2, 3], OnNodeLoss::Stop)
        );
        let s = shape(&["--target", "spider"]).unwrap().unwrap();
        assert_eq!((s.kind, s.size, s.write), (ClusterKind::Spider, 2, vec![]));
        let s = shape(&["--target", "pg-shards", "--nodes", "5"])
            .unwrap()
            .unwrap();
        assert_eq!(s.size, 5);
        for (args, msg) in [
            (
                &["--target", "sqlite", "--nodes", "2"][..],
                "--nodes is for --target galera, pg-shards and spider",
            ),
            (
                &["--target", "spider", "--nodes", "9"][..],
                "--nodes 9: a spider cluster has 1 to 8 shards",
            ),
            (
                &["--target", "postgres", "--write-nodes", "all"][..],
                "--write-nodes is for --target galera",
            ),
            (
                &["--target", "pg-shards", "--on-node-loss", "stop"][..],
                "--on-node-loss is for --target galera",
            ),
            (
                &["--target", "galera", "--nodes", "2", "--write-nodes", "3"][..],
                "--write-nodes 3: node 3 is not one of the cluster's 2 nodes",
            ),
        ] {
            let e = shape(args).unwrap_err().to_string();
            assert_eq!(e, msg, "{args:?}");
        }
    }

    #[test]
    fn write_nodes() {
        assert_eq!(parse_write_nodes("1", 3).unwrap(), vec![0]);
        assert_eq!(parse_write_nodes("all", 3).unwrap(), vec![0, 1, 2]);
        assert_eq!(parse_write_nodes("3, 1", 3).unwrap(), vec![2, 0]);
        for (bad, msg) in [
            ("4", "not one of the cluster's 3 nodes"),
            ("0", "not one of"),
            ("1,1", "given twice"),
            ("x", "expected 1, all"),
            ("", "expected 1, all"),
        ] {
            let e = parse_write_nodes(bad, 3).unwrap_err().to_string();
            assert!(e.contains(msg), "{bad}: {e}");
        }
    }
}
