//! `--target galera`: a throwaway MariaDB Galera cluster started for one command (`run`,
//! `index`, `ddl`, ...) in its results directory and stopped at the end, the workload's
//! connections spread over `--write-nodes`, and per step and per node: the `wsrep%` figures
//! (flow control, certification failures, brute-force aborts, queues, replication latency),
//! the node's server CPU and I/O, the row count on every node (read with `wsrep_sync_wait`),
//! and a node that leaves the cluster during the step (which and when; the step goes on, or
//! stops with `--on-node-loss stop`).
//!
//! `--target pg-shards`: a throwaway PostgreSQL coordinator over `--nodes` shards through
//! postgres_fdw, the insert benchmark's tables sharded by the DBMS layer
//! ([`dbms::sharded`]), per step and node the server CPU and I/O and per shard the row count
//! and index builds ([`sharded`]); `--target spider` the same on a MariaDB Spider head over
//! `--nodes` shards.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::dbms::galera::{self, NodeStatus};
use crate::dbms::{self, Dbms, TargetOptions, TargetSpec};
use crate::deadline::Since;
use crate::measure::clock::{self, Stopwatch};
use crate::measure::sys::ServerCounters;
use crate::options::target::ClusterShape;
use crate::results::cluster::{NodeLoss, NodeStep};
use crate::results::store::Store;
use crate::results::{Check, Status, StepResult};
use crate::server::cluster::{start_cluster, ClusterKind, ClusterOptions, RunningCluster};
use crate::workload::tables::CheckedTable;

mod sharded;

use crate::options::target::OnNodeLoss;

/// Set on every connection ixbench makes to a Galera node: reads wait for the node to apply
/// what the cluster committed before them.
pub const SYNC_WAIT: &str = "SET SESSION wsrep_sync_wait = 1";

/// How often the node watcher looks at every node during a step.
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// How long a node whose process runs must read badly (no primary component, status
/// unreadable, no connection) in every reading before it counts as lost.
const LOST_AFTER: Duration = Duration::from_secs(1);

/// Refuse a sharded cluster (`--target pg-shards|spider`) for a command other than `run` (the
/// insert benchmark) and `index` (the index lab): only their tables are created sharded so far.
/// A command that holds its parsed target asks it instead
/// ([`crate::options::target::Target::refuse_sharded`]).
pub fn refuse_sharded(target: &str, command: &str) -> Result<()> {
    crate::options::target::refuse_sharded(ClusterKind::from_target(target), command)
}

/// A cluster started for one command.
pub struct ClusterSession {
    /// The cluster (stopped by [`ClusterSession::stop`], or when dropped).
    pub cluster: RunningCluster,
    /// Node indexes the workload's connections go to.
    pub write: Vec<usize>,
    /// What a step does when a node leaves.
    pub on_loss: OnNodeLoss,
    /// Per node: it left the cluster (shared with the [`dbms::cluster::ClusterDbms`]).
    down: Arc<Vec<AtomicBool>>,
    /// One driver per node, once the target is open.
    drivers: Vec<Arc<dyn Dbms>>,
    /// A sharded cluster's index builds on its shards (see [`dbms::sharded`]).
    shard_builds: Option<Arc<Mutex<Vec<dbms::sharded::ShardBuild>>>>,
    /// Which Galera node is the entry (moved when it leaves), once the target is open.
    entry: Option<dbms::cluster::EntryHandle>,
    /// A sharded cluster's head and shards, for the index lab (see [`dbms::sharded`]).
    sharded: Option<dbms::sharded::ShardedHandle>,
}

/// What watching a Galera cluster's nodes over one span of work saw (see
/// [`ClusterSession::watch`]).
#[derive(Debug, Clone, Default)]
pub struct Watched {
    /// One per node, in node order.
    pub nodes: Vec<NodeStep>,
    /// Nodes still in the cluster at the end (where rows can be counted).
    counted: Vec<usize>,
    /// The entry moved during the span: (from, to) roles.
    pub entry_moved: Option<(String, String)>,
    /// A loss stopped the work (`--on-node-loss stop`).
    pub stopped: bool,
    /// Workers' connections made again during the span.
    pub moves: u64,
}

impl Watched {
    /// Nodes (indexes) still in the cluster at the end.
    pub fn counted_nodes(&self) -> Vec<usize> {
        self.counted.clone()
    }

    /// Whether a node left during the span.
    pub fn lost_any(&self) -> bool {
        self.nodes.iter().any(|n| n.lost.is_some())
    }

    fn first_loss(&self) -> Option<(&str, &NodeLoss)> {
        self.nodes
            .iter()
            .find_map(|n| n.lost.as_ref().map(|l| (n.role.as_str(), l)))
    }

    /// The error of work that a loss stopped (`--on-node-loss stop`), naming the node.
    pub fn stop_error(&self) -> Option<String> {
        let (role, loss) = self.first_loss().filter(|_| self.stopped)?;
        Some(format!(
            "stopped: Galera {role} left the cluster at {} ({:.1} s into the step: {}) and \
             --on-node-loss is stop",
            loss.at, loss.secs_into_step, loss.how
        ))
    }

    /// The warning of work that went on after a loss: which node, when, the moves.
    pub fn loss_warning(&self) -> Option<String> {
        let (role, loss) = self.first_loss().filter(|_| !self.stopped)?;
        Some(format!(
            "Galera {role} left the cluster at {} ({:.1} s into the step: {}); the step went \
             on against the rest ({} workers' connections moved to surviving nodes){}",
            loss.at,
            loss.secs_into_step,
            loss.how,
            self.moves,
            match &self.entry_moved {
                Some((from, to)) => format!("; the entry moved from {from} to {to}"),
                None => String::new(),
            }
        ))
    }
}

impl ClusterSession {
    /// Start the cluster `--target` names (`shape`, see [`crate::options::target::Target`]), its directory in the
    /// results directory when the server's OS user can reach it.
    pub fn start(
        shape: &ClusterShape,
        store: &Store,
        settings: Vec<(String, String)>,
        tls: Option<crate::server::ServerTls>,
    ) -> Result<ClusterSession> {
        let kind = shape.kind;
        let size = shape.size;
        let write = shape.write.clone();
        let dir_name = format!("{}-cluster", kind.name());
        let preferred = std::path::absolute(store.dir().join(&dir_name))?;
        let (dir, why) = crate::server::reachable_datadir(kind.node_server(), &preferred);
        let dir: PathBuf = if why.is_some() {
            // The server's user cannot reach the results directory: a new directory next to
            // where ixbench keeps data directories it cannot put in the results.
            dir.with_file_name(format!(
                "{dir_name}-{}",
                clock::utc_now().format("%Y%m%d-%H%M%S-%f")
            ))
        } else {
            dir
        };
        if let Some(why) = why {
            crate::outln!("note: cluster directory in {} ({why})", dir.display());
        }
        let t0 = Stopwatch::start();
        let cluster = start_cluster(
            kind,
            &ClusterOptions {
                dir: dir.clone(),
                size,
                settings,
                tls,
            },
        )?;
        if kind.sharded() {
            sharded::started(&cluster, t0.elapsed_time());
        } else {
            crate::outln!(
            "started a {size}-node Galera cluster in {:.1} s, directory {} (ixbench stops it at \
             the end; if ixbench is killed: ixbench server stop {}); writes go to {}",
            t0.elapsed_secs(),
            cluster.dir.display(),
            cluster.dir.display(),
            write
                .iter()
                .map(|i| format!("node{}", i + 1))
                .collect::<Vec<_>>()
                .join(", ")
        );
        }
        for n in cluster.nodes() {
            crate::outln!(
                "   {}: {} (pid {})",
                n.role,
                n.server.url(),
                n.server
                    .pids()
                    .first()
                    .map_or_else(|| "?".into(), |p| p.to_string())
            );
        }
        let nodes = cluster.nodes().len();
        let down = Arc::new((0..nodes).map(|_| AtomicBool::new(false)).collect());
        Ok(ClusterSession {
            cluster,
            write,
            on_loss: shape.on_loss,
            down,
            drivers: Vec::new(),
            shard_builds: None,
            entry: None,
            sharded: None,
        })
    }

    /// Whether this is a Galera cluster (every node takes the workload's SQL).
    pub fn is_galera(&self) -> bool {
        !self.cluster.kind.sharded()
    }

    /// A sharded cluster's head and shards (`--target spider|pg-shards`), once the target is
    /// open; `None` for Galera.
    pub fn sharded(&self) -> Option<&dbms::sharded::ShardedHandle> {
        self.sharded.as_ref()
    }

    /// Every node's role, whether it is the head (the node clients connect to), and its server's
    /// PIDs now (new ones after a restart).
    pub fn node_pids(&self) -> Vec<(String, bool, Vec<u32>)> {
        let entry = self.cluster.entry().port;
        self.cluster
            .nodes()
            .iter()
            .map(|n| (n.role.clone(), n.server.port == entry, n.server.pids()))
            .collect()
    }

    /// The settings each shard's server runs with now: (role, settings).
    pub fn shard_settings(&self) -> Vec<(String, Vec<(String, String)>)> {
        self.cluster
            .nodes()
            .iter()
            .filter(|n| n.role.starts_with("shard"))
            .map(|n| (n.role.clone(), n.server.settings.clone()))
            .collect()
    }

    /// Restart the shard `role` with `settings` instead of its current ones.
    pub fn restart_shard(&mut self, role: &str, settings: &[(String, String)]) -> Result<()> {
        self.cluster
            .node_mut(role)
            .with_context(|| format!("the cluster has no {role}"))?
            .restart_with(settings)
            .with_context(|| format!("restarting {role}"))
    }

    /// The entry node's URL with its password (never print it).
    pub fn entry_url(&self) -> String {
        self.cluster.entry().url_with_password()
    }

    /// Open one driver per node and the cluster target over them; refuse a cluster that is
    /// split or not synced.
    pub fn open_target(&mut self, opts: &TargetOptions) -> Result<Box<dyn Dbms>> {
        if self.cluster.kind.sharded() {
            return sharded::open_target(self, opts);
        }
        self.check_whole()?;
        let mut drivers: Vec<Arc<dyn Dbms>> = Vec::new();
        for n in self.cluster.nodes() {
            let spec = TargetSpec {
                kind: self.cluster.kind.node_kind().into(),
                path: None,
                url: Some(n.server.url_with_password()),
            };
            let d = dbms::open(&spec, opts).with_context(|| format!("opening {}", n.role))?;
            drivers.push(Arc::from(d));
        }
        self.drivers = drivers.clone();
        let target = dbms::cluster::ClusterDbms::new(
            drivers,
            self.down.clone(),
            self.write.clone(),
            self.cluster.pids(),
        )?
        // Causal reads: a read on one node sees every write committed on any node before it
        // (the self-checks count rows on node1 that other nodes inserted; a deleter finds the
        // oldest rows another node's inserter wrote).
        .with_session_init(vec![SYNC_WAIT.to_string()]);
        self.entry = Some(target.entry_handle());
        Ok(Box::new(target))
    }

    /// Refuse the cluster unless every node still in it is a synced member of one primary
    /// component holding all of them (a split-brain or non-primary cluster gets a clear
    /// error naming each node and what it says).
    pub fn check_whole(&self) -> Result<()> {
        let mut seen = Vec::new();
        for (i, n) in self.cluster.nodes().iter().enumerate() {
            if self.down[i].load(Ordering::SeqCst) {
                continue;
            }
            let st = galera::connect(&base_url(&n.server.url_with_password()))
                .and_then(|mut c| galera::read(&mut c))
                .unwrap_or_else(|e| NodeStatus {
                    cluster_status: Some(format!(
                        "unreachable ({})",
                        crate::format::error_line(&e)
                    )),
                    ..NodeStatus::default()
                });
            seen.push((n.role.clone(), st));
        }
        galera::check_whole(&seen)
    }

    /// Run `step` (a whole step) with every node watched: the result gets one [`NodeStep`]
    /// per node, a row check per node and table when the step checked rows, and the node that
    /// left (if one did). With `--on-node-loss stop` the loss stops the step (through
    /// `interrupt`) and fails it with the node named.
    pub fn watch_step<T: CheckedTable>(
        &self,
        name: &str,
        tables: &[T],
        interrupt: &AtomicBool,
        step: impl FnOnce() -> StepResult,
    ) -> StepResult {
        if self.cluster.kind.sharded() {
            return sharded::watch_step(self, tables, step);
        }
        let reconnects = || -> u64 { tables.iter().map(|t| t.reconnects()).sum() };
        let (mut result, w) = match self.watch(interrupt, &reconnects, step) {
            Ok(v) => v,
            // A split or non-primary cluster is not measured.
            Err(e) => {
                let mut r = StepResult::new(name, "");
                r.status = Status::Failed;
                r.error = Some(format!("{e:#}"));
                return r;
            }
        };
        let checked_rows = result.checks.iter().any(|c| c.name == "rows");
        if checked_rows {
            for i in w.counted_nodes() {
                node_row_checks(self.drivers.get(i), &w.nodes[i].role, tables, &mut result);
            }
        }
        let nodes_agree = result
            .checks
            .iter()
            .filter(|c| c.name.starts_with("rows"))
            .all(|c| c.ok);
        if w.lost_any() && nodes_agree {
            // A view change replays or aborts the transactions in flight (Galera's
            // wsrep_local_replays, brute-force aborts): InnoDB counts their rows again, so its
            // row counters exceed what was committed; and after the entry moved, the counters
            // before and after the step are two nodes'. The row counts on the surviving nodes,
            // which all passed, are the check of this step.
            for c in result
                .checks
                .iter_mut()
                .filter(|c| c.name == "dbms_counters" && !c.ok)
            {
                c.ok = true;
                c.detail.push_str(
                    " (not compared: a node left during the step, and the transactions Galera \
                     replayed or aborted in the view change are counted again by InnoDB; the \
                     row counts on every surviving node matched)",
                );
                result
                    .warnings
                    .push(format!("dbms_counters not compared: {}", c.detail));
            }
        }
        if let Some((from, to)) = &w.entry_moved {
            // The DBMS's write counters of the window were read on two nodes: unknown.
            for s in [
                result.server.as_mut(),
                result.outside.as_mut().and_then(|o| o.server.as_mut()),
            ]
            .into_iter()
            .flatten()
            {
                s.dbms_written_bytes = None;
                s.dbms_written_what = None;
                s.dbms_counters.clear();
            }
            result.summary.srv_write_kb_per_op = None;
            result.warnings.push(format!(
                "the entry node moved from {from} to {to} during the step: the control session, \
                 self-checks, counters and sizes after it are {to}'s; the DBMS's write counters \
                 of the step are unknown (read on two nodes)"
            ));
        }
        // Per-node checks added above may fail a step that passed; the one set aside above may
        // pass one that failed.
        match result.status {
            Status::Ok if !result.checks_ok() => result.status = Status::ChecksFailed,
            Status::ChecksFailed if result.checks_ok() => result.status = Status::Ok,
            _ => {}
        }
        if let Some(e) = w.stop_error() {
            result.status = Status::Failed;
            result.error = Some(e);
        } else if let Some(l) = w.loss_warning() {
            result.warnings.push(l);
        }
        crate::out!("{}", node_lines(&w.nodes));
        result.nodes = w.nodes;
        result
    }

    /// Run `body` (a step, a build, a DDL point, a run of transactions) with every Galera node
    /// watched: per node its `wsrep%` figures and server CPU and I/O over the span, and a node
    /// that leaves (which and when, printed as it happens). When the node that leaves is the
    /// entry, the entry moves to a surviving synced node (admin connections follow it). With
    /// `--on-node-loss stop` a loss stops `body` through `interrupt` (reset afterwards: see
    /// [`Watched::stop_error`]). `moved()` counts the workers' connections made again so far.
    /// An error, and `body` not run, when the cluster is split or not synced at the start.
    pub fn watch<T>(
        &self,
        interrupt: &AtomicBool,
        moved: &dyn Fn() -> u64,
        body: impl FnOnce() -> T,
    ) -> Result<(T, Watched)> {
        let nodes = self.cluster.nodes();
        let n = nodes.len();
        let roles: Vec<String> = nodes.iter().map(|x| x.role.clone()).collect();
        let urls: Vec<String> = nodes
            .iter()
            .map(|x| base_url(&x.server.url_with_password()))
            .collect();
        let pids: Vec<Vec<u32>> = nodes.iter().map(|x| x.server.pids()).collect();
        let was_down: Vec<bool> = self.down.iter().map(|d| d.load(Ordering::SeqCst)).collect();
        self.check_whole()?;
        // Before: each live node's status (right before the span, so Galera's `_avg` queue
        // figures cover it) and its processes' counters.
        let before: Vec<Option<NodeStatus>> = urls
            .iter()
            .enumerate()
            .map(|(i, u)| {
                (!was_down[i])
                    .then(|| {
                        galera::connect(u)
                            .and_then(|mut c| galera::read(&mut c))
                            .ok()
                    })
                    .flatten()
            })
            .collect();
        let cpu_before: Vec<Option<ServerCounters>> =
            pids.iter().map(|p| ServerCounters::now(p)).collect();
        let moved_before = moved();
        let lost: Mutex<Vec<Option<NodeLoss>>> = Mutex::new(vec![None; n]);
        let entry_moved: Mutex<Option<(usize, usize)>> = Mutex::new(None);
        let stopped_for_loss = AtomicBool::new(false);
        let done = AtomicBool::new(false);
        let t0 = clock::now();
        let out = std::thread::scope(|sc| {
            sc.spawn(|| {
                watch_nodes(&urls, &pids, &was_down, t0, &done, |i, mut loss| {
                    self.down[i].store(true, Ordering::SeqCst);
                    crate::outln!(
                        "   NODE LOST: {} left the cluster {:.1} s into the step ({}){}",
                        roles[i],
                        loss.secs_into_step,
                        loss.how,
                        if self.on_loss == OnNodeLoss::Stop {
                            "; stopping (--on-node-loss stop)"
                        } else {
                            "; going on against the rest"
                        }
                    );
                    if let Some(to) = self.move_entry_from(i, &urls) {
                        crate::outln!(
                            "   ENTRY MOVED: {} was the entry; the control session, self-checks, \
                             counters and sizes now use {}",
                            roles[i],
                            roles[to]
                        );
                        loss.entry_moved_to = Some(roles[to].clone());
                        *entry_moved.lock().unwrap() = Some((i, to));
                    }
                    lost.lock().unwrap()[i] = Some(loss);
                    if self.on_loss == OnNodeLoss::Stop
                        && !stopped_for_loss.swap(true, Ordering::SeqCst)
                        && !interrupt.load(Ordering::SeqCst)
                    {
                        interrupt.store(true, Ordering::SeqCst);
                    }
                })
            });
            let r = body();
            done.store(true, Ordering::SeqCst);
            r
        });
        let stopped = stopped_for_loss.load(Ordering::SeqCst);
        if stopped {
            // The interruption was ours, not the user's: the caller fails with the node named.
            interrupt.store(false, Ordering::SeqCst);
        }
        let elapsed = clock::since(t0);
        let mut lost = lost.into_inner().unwrap();
        // The workers whose node died connected again to the rest: the moves belong to the
        // node that left when one did.
        let moves = moved().saturating_sub(moved_before);
        if lost.iter().filter(|l| l.is_some()).count() == 1 {
            for l in lost.iter_mut().flatten() {
                l.connections_moved = Some(moves);
            }
        }
        let mut ns_all = Vec::with_capacity(n);
        let mut counted = Vec::new();
        for i in 0..n {
            let mut ns = NodeStep {
                role: roles[i].clone(),
                writes: self.write.contains(&i),
                lost: lost[i].clone(),
                ..NodeStep::default()
            };
            if was_down[i] {
                ns.notes
                    .push("left the cluster in an earlier step: not watched".into());
                ns_all.push(ns);
                continue;
            }
            let after = galera::connect(&urls[i]).and_then(|mut c| galera::read(&mut c));
            match (&before[i], after) {
                (Some(b), Ok(a)) => ns.wsrep = Some(galera::delta(b, &a, elapsed)),
                (None, _) => ns
                    .notes
                    .push("wsrep status unreadable at the step's start".into()),
                (_, Err(e)) => ns.notes.push(format!(
                    "wsrep status unreadable at the step's end: {}",
                    crate::format::error_line(&e)
                )),
            }
            ns.server = match (&cpu_before[i], ServerCounters::now(&pids[i])) {
                (Some(a), Some(b)) => Some(b.since(a)),
                _ => {
                    ns.notes
                        .push("server processes gone: CPU and I/O unknown".into());
                    None
                }
            };
            if lost[i].is_none() && !self.down[i].load(Ordering::SeqCst) {
                counted.push(i);
            }
            ns_all.push(ns);
        }
        let entry_moved = entry_moved
            .into_inner()
            .unwrap()
            .map(|(a, b)| (roles[a].clone(), roles[b].clone()));
        Ok((
            out,
            Watched {
                nodes: ns_all,
                counted,
                entry_moved,
                stopped,
                moves,
            },
        ))
    }

    /// After node `i` left: when it was the entry, make the first surviving node that says
    /// it is Synced in a primary component the entry (else the first surviving node) and
    /// return it; `None` when `i` was not the entry or no node remains.
    fn move_entry_from(&self, i: usize, urls: &[String]) -> Option<usize> {
        let entry = self.entry.as_ref()?;
        if entry.get() != i {
            return None;
        }
        let alive: Vec<usize> = (0..urls.len())
            .filter(|&j| j != i && !self.down[j].load(Ordering::SeqCst))
            .collect();
        let synced = alive.iter().copied().find(|&j| {
            watch_connect(&urls[j])
                .and_then(|mut c| galera::read(&mut c))
                .is_ok_and(|s| {
                    s.cluster_status.as_deref() == Some("Primary")
                        && s.local_state_comment.as_deref() == Some("Synced")
                })
        });
        let to = synced.or(alive.first().copied())?;
        entry.move_to(to);
        Some(to)
    }

    /// Stop every node; remove the directory too when `rm`.
    pub fn stop(self, rm: bool) -> Result<()> {
        if rm {
            self.cluster.stop_and_remove()
        } else {
            self.cluster.stop()
        }
    }
}

/// A node's URL to its `mysql` schema, its TLS settings kept (see [`galera::mysql_schema_url`]).
fn base_url(url: &str) -> String {
    galera::mysql_schema_url(url)
}

/// Row count of every table on one node, read after its applier caught up
/// (`wsrep_sync_wait = 1`), against what ixbench inserted minus deleted.
fn node_row_checks<T: CheckedTable>(
    driver: Option<&Arc<dyn Dbms>>,
    role: &str,
    tables: &[T],
    step: &mut StepResult,
) {
    let counted = driver
        .context("no driver for the node")
        .and_then(|d| d.connect())
        .and_then(|mut c| {
            c.execute(SYNC_WAIT)?;
            tables
                .iter()
                .map(|t| Ok((t, t.count_rows(c.as_mut())? as i64)))
                .collect::<Result<Vec<_>>>()
        });
    match counted {
        Ok(v) => {
            for (t, have) in v {
                let want = t.expected_rows();
                step.checks.push(Check {
                    name: format!("rows on {role}"),
                    ok: have == want,
                    detail: format!(
                        "{}: {have} rows on {role}, {want} expected (inserted − deleted)",
                        t.name()
                    ),
                });
            }
        }
        Err(e) => step.checks.push(Check {
            name: format!("rows on {role}"),
            ok: false,
            detail: format!(
                "could not count the rows on {role}: {}",
                crate::format::error_line(&e)
            ),
        }),
    }
}

/// Watch every node (not already down) until `done`: a node whose processes exited, whose
/// status cannot be read, or that is not in a primary component is reported once to `lost`.
fn watch_nodes(
    urls: &[String],
    pids: &[Vec<u32>],
    was_down: &[bool],
    t0: Instant,
    done: &AtomicBool,
    mut lost: impl FnMut(usize, NodeLoss),
) {
    let n = urls.len();
    let mut gone: Vec<bool> = was_down.to_vec();
    let mut conns: Vec<Option<dbms::session::Session>> = (0..n).map(|_| None).collect();
    // The first of the consecutive bad readings of a node whose process still runs: one bad
    // reading (a status query slower than its timeout on a busy machine, a view change while
    // another node leaves) is not a lost node; bad readings for LOST_AFTER are.
    let mut bad_since: Vec<Option<(Since, NodeLoss)>> = (0..n).map(|_| None).collect();
    while !done.load(Ordering::SeqCst) {
        for i in 0..n {
            if gone[i] {
                continue;
            }
            let exited =
                !pids[i].is_empty() && pids[i].iter().all(|&p| !crate::server::process_runs(p));
            let how = if exited {
                Some("process exited".to_string())
            } else {
                if conns[i].is_none() {
                    conns[i] = watch_connect(&urls[i]).ok();
                }
                match conns[i].as_mut().map(galera::read) {
                    Some(Ok(s)) if s.cluster_status.as_deref() == Some("Primary") => None,
                    Some(Ok(s)) => Some(format!("not in a primary component: {}", s.summary())),
                    Some(Err(e)) => {
                        conns[i] = None;
                        Some(format!(
                            "status unreadable: {}",
                            crate::format::error_line(&e)
                        ))
                    }
                    None => Some("cannot connect".to_string()),
                }
            };
            let Some(how) = how else {
                bad_since[i] = None;
                continue;
            };
            let now = NodeLoss {
                at: clock::utc_now().to_rfc3339(),
                secs_into_step: clock::since(t0).as_secs_f64(),
                how,
                connections_moved: None,
                entry_moved_to: None,
            };
            if exited {
                gone[i] = true;
                lost(i, now);
                continue;
            }
            match &bad_since[i] {
                None => bad_since[i] = Some((Since::start(), now)),
                Some((since, first)) if since.so_far() >= LOST_AFTER => {
                    gone[i] = true;
                    // When it went bad, and what the latest reading said.
                    lost(
                        i,
                        NodeLoss {
                            at: first.at.clone(),
                            secs_into_step: first.secs_into_step,
                            how: now.how,
                            connections_moved: None,
                            entry_moved_to: None,
                        },
                    );
                }
                Some(_) => {}
            }
        }
        std::thread::sleep(WATCH_EVERY);
    }
}

/// A status connection with short timeouts (a frozen node must not hang the watcher).
fn watch_connect(url_with_password: &str) -> Result<dbms::session::Session> {
    galera::connect_with(
        url_with_password,
        &dbms::session::SessionOptions {
            connect_timeout: Duration::from_secs(2),
            io_timeout: Some(Duration::from_secs(3)),
            url_only: false,
        },
    )
}

/// One row per step (a run's step, an index build, a DDL point, a run of transactions) and
/// node (`nodes.csv`, `nodes.md` and the table printed at the end); `None` when nothing ran
/// on a cluster. Unknown figures are `-`.
pub fn nodes_table(run: &crate::results::RunResult) -> Option<crate::export::Table> {
    use crate::results::parts::Parts;
    // The workloads' records name their nodes in the generic part of the run.
    let workload_nodes: Vec<(String, Vec<NodeStep>)> = run
        .workloads
        .records()
        .map(|(p, r)| (Parts::label(p, r), Parts::nodes(r)))
        .collect();
    let mut spans: Vec<(String, &[NodeStep])> = Vec::new();
    for st in &run.steps {
        spans.push((st.name.clone(), &st.nodes));
    }
    for b in &run.builds {
        let knobs = crate::dbms::knob_label(&b.knobs);
        spans.push((
            format!(
                "build {}{}",
                b.build,
                if knobs.is_empty() {
                    String::new()
                } else {
                    format!(" ({knobs})")
                }
            ),
            &b.nodes,
        ));
    }
    if let Some(d) = &run.ddl {
        for (i, p) in d.points.iter().enumerate() {
            spans.push((format!("point {}", i + 1), &p.nodes));
        }
    }
    for (label, nodes) in &workload_nodes {
        spans.push((label.clone(), nodes));
    }
    if spans.iter().all(|(_, n)| n.is_empty()) {
        return None;
    }
    let mut t = crate::export::Table::new([
        "step",
        "node",
        "writes",
        "fc_paused",
        "cert_fail",
        "bf_aborts",
        "commits",
        "repl",
        "recv",
        "sendq_avg",
        "recvq_avg",
        "repl_lat_ms",
        "srv_cpu_s",
        "lost_at_s",
    ]);
    let f = |v: Option<f64>, p: usize| v.map_or_else(|| "-".into(), |v| format!("{v:.p$}"));
    let u = |v: Option<u64>| v.map_or_else(|| "-".into(), |v| v.to_string());
    for (name, nodes) in &spans {
        for n in nodes.iter() {
            let w = n.wsrep.as_ref();
            t.rows.push(vec![
                name.clone(),
                n.role.clone(),
                if n.writes { "yes" } else { "no" }.into(),
                f(w.and_then(|w| w.flow_control_paused_fraction), 3),
                u(w.and_then(|w| w.cert_failures)),
                u(w.and_then(|w| w.local_bf_aborts)),
                u(w.and_then(|w| w.local_commits)),
                u(w.and_then(|w| w.replicated)),
                u(w.and_then(|w| w.received)),
                f(w.and_then(|w| w.local_send_queue_avg), 2),
                f(w.and_then(|w| w.local_recv_queue_avg), 2),
                f(w.and_then(|w| w.repl_latency.map(|l| l.avg * 1e3)), 2),
                f(n.server.as_ref().map(|s| s.cpu_us as f64 / 1e6), 2),
                f(n.lost.as_ref().map(|l| l.secs_into_step), 1),
            ]);
        }
    }
    Some(t)
}

/// The per-node lines printed after a step.
pub fn node_lines(nodes: &[NodeStep]) -> String {
    let mut out = String::new();
    for n in nodes {
        let f = |v: Option<f64>, p: usize| v.map_or_else(|| "?".into(), |v| format!("{v:.p$}"));
        let u = |v: Option<u64>| v.map_or_else(|| "?".into(), |v| v.to_string());
        let mut line = format!("   {}{}:", n.role, if n.writes { " (writes)" } else { "" });
        match &n.wsrep {
            Some(w) => line.push_str(&format!(
                " fc paused {} , cert failures {}, bf aborts {}, commits {}, repl/recv {}/{}, \
                 send/recv queue avg {}/{}, repl latency avg {} ms",
                f(w.flow_control_paused_fraction, 3),
                u(w.cert_failures),
                u(w.local_bf_aborts),
                u(w.local_commits),
                u(w.replicated),
                u(w.received),
                f(w.local_send_queue_avg, 2),
                f(w.local_recv_queue_avg, 2),
                f(w.repl_latency.map(|l| l.avg * 1e3), 2)
            )),
            None => line.push_str(" wsrep unknown"),
        }
        if let Some(s) = &n.server {
            line.push_str(&format!(", server CPU {:.2} s", s.cpu_us as f64 / 1e6));
        }
        if let Some(l) = &n.lost {
            line.push_str(&format!(", LEFT at {:.1} s ({})", l.secs_into_step, l.how));
            if let Some(m) = l.connections_moved {
                line.push_str(&format!(", {m} connections moved"));
            }
            if let Some(to) = &l.entry_moved_to {
                line.push_str(&format!(", the entry moved to {to}"));
            }
        }
        out.push_str(&line.replace(" ,", ","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuse_sharded_names_the_command_and_target() {
        let e = refuse_sharded("pg-shards", "index")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ixbench index --target pg-shards is not supported yet"),
            "{e}"
        );
        assert!(refuse_sharded("galera", "index").is_ok());
        assert!(refuse_sharded("sqlite", "ddl").is_ok());
        assert!(crate::server::process_runs(std::process::id()));
        assert!(!crate::server::process_runs(u32::MAX));
        assert_eq!(
            base_url("mysql://root:p@127.0.0.1:5/ixbench"),
            "mysql://root:p@127.0.0.1:5/mysql"
        );
        // The TLS settings stay, a path in them untouched.
        assert_eq!(
            base_url(
                "mysql://root:p@127.0.0.1:5/ixbench?ssl-mode=VERIFY_IDENTITY&ssl-ca=/d/ca.crt"
            ),
            "mysql://root:p@127.0.0.1:5/mysql?ssl-mode=VERIFY_IDENTITY&ssl-ca=/d/ca.crt"
        );
    }
}
