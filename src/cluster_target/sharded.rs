//! `--target pg-shards` and `--target spider` as targets of the workloads: the cluster's target is a
//! [`ShardedDbms`] (the coordinator, with the shards behind it), and every step is watched
//! per node: the server CPU and I/O of every node's processes, the index builds each shard
//! ran (timed), and, when the step checked its rows through the head, the row count on every
//! shard (each holds some, and they add up to what ixbench inserted minus deleted).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use super::ClusterSession;
use crate::dbms::sharded::{ShardBuild, ShardedDbms};
use crate::dbms::{self, Dbms, TargetOptions, TargetSpec};
use crate::measure::clock;
use crate::measure::sys::ServerCounters;
use crate::results::cluster::NodeStep;
use crate::results::{Check, Status, StepResult};
use crate::server::cluster::RunningCluster;
use crate::workload::tables::CheckedTable;

/// The line printed once the cluster runs.
pub(super) fn started(cluster: &RunningCluster, took: Duration) {
    crate::outln!(
        "started a {} cluster: {} over {} shards ({}, tables sharded by hash of the primary \
         key) in {:.1} s, directory {} (ixbench stops it at the end; if ixbench is killed: \
         ixbench server stop {})",
        cluster.kind.name(),
        entry_role(cluster),
        cluster.shards().len(),
        cluster.kind.sharding(),
        took.as_secs_f64(),
        cluster.dir.display(),
        cluster.dir.display()
    );
}

fn entry_role(cluster: &RunningCluster) -> String {
    let port = cluster.entry().port;
    cluster
        .nodes()
        .iter()
        .find(|n| n.server.port == port)
        .map_or_else(|| "the head".into(), |n| n.role.clone())
}

/// One driver per node and the sharded target over them.
pub(super) fn open_target(s: &mut ClusterSession, opts: &TargetOptions) -> Result<Box<dyn Dbms>> {
    let entry = entry_role(&s.cluster);
    let mut drivers: Vec<Arc<dyn Dbms>> = Vec::new();
    let (mut head, mut shards) = (None, Vec::new());
    for n in s.cluster.nodes() {
        let spec = TargetSpec {
            kind: s.cluster.kind.node_kind().into(),
            path: None,
            url: Some(n.server.url_with_password()),
        };
        let d: Arc<dyn Dbms> =
            Arc::from(dbms::open(&spec, opts).with_context(|| format!("opening {}", n.role))?);
        if n.role == entry {
            head = Some(d.clone());
        } else if n.role.starts_with("shard") {
            shards.push(d.clone());
        }
        drivers.push(d);
    }
    let head = head.context("the cluster has no head")?;
    let link = s.cluster.link_params()?;
    let target = ShardedDbms::new(
        head.clone(),
        crate::dbms::registry::sharding(head.kind()),
        shards,
        s.cluster.pids(),
        Arc::new(clock::Figures),
    )?
    .with_spider_link(&link);
    s.shard_builds = Some(target.builds());
    s.sharded = Some(target.handle());
    s.drivers = drivers;
    Ok(Box::new(target))
}

/// Run `step` with every node watched (see the module doc).
pub(super) fn watch_step<T: CheckedTable>(
    s: &ClusterSession,
    tables: &[T],
    step: impl FnOnce() -> StepResult,
) -> StepResult {
    let nodes = s.cluster.nodes();
    let entry = entry_role(&s.cluster);
    let pids: Vec<Vec<u32>> = nodes.iter().map(|x| x.server.pids()).collect();
    if let Some(b) = &s.shard_builds {
        b.lock().unwrap().clear();
    }
    let before: Vec<Option<ServerCounters>> = pids.iter().map(|p| ServerCounters::now(p)).collect();
    let mut result = step();
    let builds: Vec<ShardBuild> = s
        .shard_builds
        .as_ref()
        .map(|b| std::mem::take(&mut *b.lock().unwrap()))
        .unwrap_or_default();
    for (i, n) in nodes.iter().enumerate() {
        let mut ns = NodeStep {
            role: n.role.clone(),
            writes: n.role == entry,
            ..NodeStep::default()
        };
        ns.server = match (&before[i], ServerCounters::now(&pids[i])) {
            (Some(a), Some(b)) => Some(b.since(a)),
            _ => {
                ns.notes
                    .push("server processes gone: CPU and I/O unknown".into());
                None
            }
        };
        for b in builds.iter().filter(|b| shard_role(b.shard) == n.role) {
            ns.notes
                .push(format!("built in {:.3} s: {}", b.seconds, b.statement));
        }
        result.nodes.push(ns);
    }
    if !builds.is_empty() {
        let mut line = String::from("   index builds ran on every shard, one after the other:");
        for b in &builds {
            line.push_str(&format!(
                " {} {:.3} s ({});",
                shard_role(b.shard),
                b.seconds,
                crate::dbms::redact_text(&b.statement)
            ));
        }
        crate::outln!("{}", line.trim_end_matches(';'));
    }
    if result.checks.iter().any(|c| c.name == "rows") {
        shard_row_checks(s, tables, &mut result);
    }
    match result.status {
        Status::Ok if !result.checks_ok() => result.status = Status::ChecksFailed,
        _ => {}
    }
    crate::out!("{}", node_lines(&result.nodes));
    result
}

fn shard_role(k: usize) -> String {
    format!("shard{}", k + 1)
}

/// Rows from which every shard must hold some: hashing this many keys over at most 8 shards
/// leaves none empty (Spider: key mod N; PostgreSQL's hash: a chance below 1e-50).
const SPREAD_ROWS: i64 = 1000;

/// Count every table's rows on every shard directly: each shard holds some (from
/// [`SPREAD_ROWS`] rows on) and they add up to what ixbench inserted minus
/// deleted (the head's count, checked by the step).
fn shard_row_checks<T: CheckedTable>(s: &ClusterSession, tables: &[T], step: &mut StepResult) {
    let shards: Vec<(String, &Arc<dyn Dbms>)> = s
        .cluster
        .nodes()
        .iter()
        .zip(&s.drivers)
        .filter(|(n, _)| n.role.starts_with("shard"))
        .map(|(n, d)| (n.role.clone(), d))
        .collect();
    for t in tables {
        let want = t.expected_rows();
        let mut sum = Some(0i64);
        let mut per = Vec::new();
        for (role, d) in &shards {
            let counted = d.connect_admin().and_then(|mut c| t.count_rows(c.as_mut()));
            match counted {
                Ok(have) => {
                    let have = have as i64;
                    sum = sum.map(|x| x + have);
                    per.push(format!("{role} {have}"));
                    let (ok, why) = if want >= SPREAD_ROWS {
                        (have > 0, "every shard must hold some")
                    } else if want > 0 {
                        (have >= 0, "too few rows to require some on every shard")
                    } else {
                        (have == 0, "the table is empty")
                    };
                    step.checks.push(Check {
                        name: format!("rows on {role}"),
                        ok,
                        detail: format!("{}: {have} rows on {role} ({why})", t.name()),
                    });
                }
                Err(e) => {
                    sum = None;
                    step.checks.push(Check {
                        name: format!("rows on {role}"),
                        ok: false,
                        detail: format!(
                            "could not count the rows of {} on {role}: {}",
                            t.name(),
                            crate::format::error_line(&e)
                        ),
                    });
                }
            }
        }
        if let Some(sum) = sum {
            step.checks.push(Check {
                name: "rows over shards".into(),
                ok: sum == want,
                detail: format!(
                    "{}: {} = {sum} rows on the shards, {want} expected (inserted − deleted)",
                    t.name(),
                    per.join(" + ")
                ),
            });
        }
    }
}

/// The per-node lines printed after a step.
fn node_lines(nodes: &[NodeStep]) -> String {
    let mut out = String::new();
    for n in nodes {
        let mut line = format!("   {}{}:", n.role, if n.writes { " (head)" } else { "" });
        match &n.server {
            Some(s) => line.push_str(&format!(
                " server CPU {:.2} s, read {} B, write calls {} B",
                s.cpu_us as f64 / 1e6,
                s.read_bytes.map_or_else(|| "?".into(), |b| b.to_string()),
                s.write_call_bytes
                    .map_or_else(|| "?".into(), |b| b.to_string())
            )),
            None => line.push_str(" server CPU and I/O unknown"),
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
