//! MariaDB Galera: a node's replication status (`SHOW GLOBAL STATUS LIKE 'wsrep%'`) and its
//! change around a step.
//!
//! Every figure is read from the node; one the node does not report (an older provider, or
//! `wsrep_on=OFF`) is `None`, never 0.
//!
//! - Cumulative counters (`wsrep_flow_control_paused_ns`, `wsrep_local_cert_failures`,
//!   `wsrep_local_bf_aborts`, `wsrep_local_commits`, `wsrep_replicated`, `wsrep_received`,
//!   `wsrep_flow_control_sent`/`_recv`) give per-step deltas in [`NodeDelta`]; the paused
//!   fraction of a step is the paused time over the step's length.
//! - Queue lengths (`wsrep_local_send_queue`, `wsrep_local_recv_queue`) are read as they are at
//!   each end of the step; Galera's `*_queue_avg` is the average since the previous status read
//!   of any client, so read right after [`read`] at the step's start it covers the step (when
//!   nobody else reads the status meanwhile).
//! - `wsrep_flow_control_paused` is Galera's own paused fraction since the last
//!   `FLUSH STATUS`, kept as read.
//! - Replication latency: `wsrep_evs_repl_latency` (`min/avg/max/stddev/samples`, seconds, over
//!   Galera's last measuring window).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result};

use super::session::{Session, SessionOptions};
use serde::Serialize;

/// One node's `wsrep%` status at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct NodeStatus {
    /// `wsrep_cluster_size`: nodes in the node's component.
    pub cluster_size: Option<u64>,
    /// `wsrep_cluster_status`: `Primary`, `non-Primary` or `Disconnected`.
    pub cluster_status: Option<String>,
    /// `wsrep_local_state_comment`: `Synced`, `Donor/Desynced`, `Joining`, ...
    pub local_state_comment: Option<String>,
    /// `wsrep_ready`: whether the node accepts queries.
    pub ready: Option<bool>,
    /// `wsrep_flow_control_paused`: fraction of time paused since the last `FLUSH STATUS`.
    pub flow_control_paused: Option<f64>,
    /// `wsrep_flow_control_paused_ns`: total time paused by flow control, ns.
    pub flow_control_paused_ns: Option<u64>,
    /// `wsrep_flow_control_sent`: pause/resume messages this node sent.
    pub flow_control_sent: Option<u64>,
    /// `wsrep_flow_control_recv`: pause/resume messages this node received.
    pub flow_control_recv: Option<u64>,
    /// `wsrep_local_cert_failures`: local transactions that failed certification.
    pub cert_failures: Option<u64>,
    /// `wsrep_local_bf_aborts`: local transactions aborted by replicated ones (brute force).
    pub local_bf_aborts: Option<u64>,
    /// `wsrep_local_commits`: local transactions committed.
    pub local_commits: Option<u64>,
    /// `wsrep_replicated`: write sets this node sent.
    pub replicated: Option<u64>,
    /// `wsrep_received`: write sets this node received.
    pub received: Option<u64>,
    /// `wsrep_local_send_queue`: send queue length now.
    pub local_send_queue: Option<u64>,
    /// `wsrep_local_recv_queue`: receive queue length now.
    pub local_recv_queue: Option<u64>,
    /// `wsrep_local_send_queue_avg`: average send queue length since the previous status read.
    pub local_send_queue_avg: Option<f64>,
    /// `wsrep_local_recv_queue_avg`: average receive queue length since the previous status read.
    pub local_recv_queue_avg: Option<f64>,
    /// `wsrep_last_committed`: seqno of the last committed write set.
    pub last_committed: Option<u64>,
    /// `wsrep_evs_repl_latency` parsed: replication latency, seconds.
    pub repl_latency: Option<ReplLatency>,
}

/// `wsrep_evs_repl_latency`: group communication round trip of replicated messages, seconds,
/// over Galera's last measuring window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ReplLatency {
    /// Smallest.
    pub min: f64,
    /// Mean.
    pub avg: f64,
    /// Largest.
    pub max: f64,
    /// Standard deviation.
    pub stddev: f64,
    /// Messages measured.
    pub samples: u64,
}

impl ReplLatency {
    /// Parse `min/avg/max/stddev/samples`; `None` when not five numbers (a node that has
    /// measured nothing yet reports `0/0/0/0/0`, kept: it is what the node says, with 0
    /// samples).
    pub fn parse(s: &str) -> Option<ReplLatency> {
        let p: Vec<&str> = s.trim().split('/').collect();
        if p.len() != 5 {
            return None;
        }
        let f = |i: usize| p[i].trim().parse::<f64>().ok();
        Some(ReplLatency {
            min: f(0)?,
            avg: f(1)?,
            max: f(2)?,
            stddev: f(3)?,
            samples: p[4].trim().parse().ok()?,
        })
    }
}

impl NodeStatus {
    /// From `wsrep%` status variables (names in any case).
    pub fn from_vars(vars: &BTreeMap<String, String>) -> NodeStatus {
        let get = |n: &str| vars.get(n).map(|v| v.trim().to_string());
        let int = |n: &str| get(n).and_then(|v| v.parse::<u64>().ok());
        let float = |n: &str| get(n).and_then(|v| v.parse::<f64>().ok());
        NodeStatus {
            cluster_size: int("wsrep_cluster_size"),
            cluster_status: get("wsrep_cluster_status"),
            local_state_comment: get("wsrep_local_state_comment"),
            ready: get("wsrep_ready").map(|v| v.eq_ignore_ascii_case("ON")),
            flow_control_paused: float("wsrep_flow_control_paused"),
            flow_control_paused_ns: int("wsrep_flow_control_paused_ns"),
            flow_control_sent: int("wsrep_flow_control_sent"),
            flow_control_recv: int("wsrep_flow_control_recv"),
            cert_failures: int("wsrep_local_cert_failures"),
            local_bf_aborts: int("wsrep_local_bf_aborts"),
            local_commits: int("wsrep_local_commits"),
            replicated: int("wsrep_replicated"),
            received: int("wsrep_received"),
            local_send_queue: int("wsrep_local_send_queue"),
            local_recv_queue: int("wsrep_local_recv_queue"),
            local_send_queue_avg: float("wsrep_local_send_queue_avg"),
            local_recv_queue_avg: float("wsrep_local_recv_queue_avg"),
            last_committed: int("wsrep_last_committed"),
            repl_latency: get("wsrep_evs_repl_latency").and_then(|v| ReplLatency::parse(&v)),
        }
    }

    /// Whether the node is a synced member of a primary component of `size` nodes.
    pub fn synced_in(&self, size: u64) -> bool {
        self.cluster_size == Some(size)
            && self.cluster_status.as_deref() == Some("Primary")
            && self.local_state_comment.as_deref() == Some("Synced")
    }

    /// One line for messages: size, status, state.
    pub fn summary(&self) -> String {
        let s = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
        format!(
            "cluster size {}, {}, {}",
            self.cluster_size
                .map_or_else(|| "unknown".to_string(), |n| n.to_string()),
            s(&self.cluster_status),
            s(&self.local_state_comment)
        )
    }
}

/// Read a node's `wsrep%` status.
pub fn read(conn: &mut Session) -> Result<NodeStatus> {
    let rows = conn
        .rows("SHOW GLOBAL STATUS LIKE 'wsrep%'")
        .context("SHOW GLOBAL STATUS LIKE 'wsrep%'")?;
    let vars = rows
        .into_iter()
        .filter_map(|r| {
            let mut r = r.into_iter();
            Some((
                r.next()??.to_ascii_lowercase(),
                r.next()?.unwrap_or_default(),
            ))
        })
        .collect();
    Ok(NodeStatus::from_vars(&vars))
}

/// Connect to a node by a `mysql://USER:PASSWORD@HOST:PORT/DB` URL (with its password), within
/// `opts`' timeouts.
pub fn connect_with(url_with_password: &str, opts: &SessionOptions) -> Result<Session> {
    // The session's errors name the node without the password already.
    Session::connect(url_with_password, opts).context("connecting to a Galera node")
}

/// `mysql://u:p@h:port/db?params` -> `mysql://u:p@h:port/mysql?params`: the status needs no
/// database of ixbench's, and the `mysql` schema is on every node root can log in to. The
/// parameters (TLS: `ssl-mode`, `ssl-ca`, whose value is a path) are kept as they are.
pub fn mysql_schema_url(url: &str) -> String {
    let (main, params) = match url.split_once('?') {
        Some((m, q)) => (m, format!("?{q}")),
        None => (url, String::new()),
    };
    let base = main.rsplit_once('/').map_or(main, |(b, _)| b);
    format!("{base}/mysql{params}")
}

/// Connect to a node by a `mysql://USER:PASSWORD@HOST:PORT/DB` URL (with its password), within
/// 5 s.
pub fn connect(url_with_password: &str) -> Result<Session> {
    connect_with(
        url_with_password,
        &SessionOptions::connect_within(Duration::from_secs(5)),
    )
}

/// How a node's status changed over a step.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct NodeDelta {
    /// Wall time between the two reads, s.
    pub seconds: f64,
    /// Flow-control paused time over the step's length (0..1), from
    /// `wsrep_flow_control_paused_ns`.
    pub flow_control_paused_fraction: Option<f64>,
    /// Flow-control pause/resume messages sent during the step.
    pub flow_control_sent: Option<u64>,
    /// Flow-control pause/resume messages received during the step.
    pub flow_control_recv: Option<u64>,
    /// Certification failures during the step.
    pub cert_failures: Option<u64>,
    /// Brute-force aborts of local transactions during the step.
    pub local_bf_aborts: Option<u64>,
    /// Local commits during the step.
    pub local_commits: Option<u64>,
    /// Write sets sent during the step.
    pub replicated: Option<u64>,
    /// Write sets received during the step.
    pub received: Option<u64>,
    /// Send and receive queue lengths at the step's end.
    pub local_send_queue_end: Option<u64>,
    /// Receive queue length at the step's end.
    pub local_recv_queue_end: Option<u64>,
    /// Average send queue length since the start read (Galera's `_avg`, see the module doc).
    pub local_send_queue_avg: Option<f64>,
    /// Average receive queue length since the start read.
    pub local_recv_queue_avg: Option<f64>,
    /// Replication latency as reported at the step's end.
    pub repl_latency: Option<ReplLatency>,
    /// Cluster size, status and local state at the end.
    pub end_state: String,
}

/// The change from `before` to `after`, `elapsed` apart. A counter that went backwards (a
/// `FLUSH STATUS` or a node restart in between) gives `None`.
pub fn delta(before: &NodeStatus, after: &NodeStatus, elapsed: Duration) -> NodeDelta {
    let d = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => b.checked_sub(a),
        _ => None,
    };
    let secs = elapsed.as_secs_f64();
    let paused = d(before.flow_control_paused_ns, after.flow_control_paused_ns)
        .filter(|_| elapsed.as_nanos() > 0)
        .map(|ns| ns as f64 / elapsed.as_nanos() as f64);
    NodeDelta {
        seconds: secs,
        flow_control_paused_fraction: paused,
        flow_control_sent: d(before.flow_control_sent, after.flow_control_sent),
        flow_control_recv: d(before.flow_control_recv, after.flow_control_recv),
        cert_failures: d(before.cert_failures, after.cert_failures),
        local_bf_aborts: d(before.local_bf_aborts, after.local_bf_aborts),
        local_commits: d(before.local_commits, after.local_commits),
        replicated: d(before.replicated, after.replicated),
        received: d(before.received, after.received),
        local_send_queue_end: after.local_send_queue,
        local_recv_queue_end: after.local_recv_queue,
        local_send_queue_avg: after.local_send_queue_avg,
        local_recv_queue_avg: after.local_recv_queue_avg,
        repl_latency: after.repl_latency,
        end_state: after.summary(),
    }
}

/// Reads every node of a cluster before and after a step.
pub struct StepWatch {
    conns: Vec<Session>,
    before: Vec<NodeStatus>,
}

impl StepWatch {
    /// Connect to every node (URLs with passwords) and read their status.
    pub fn start(urls_with_password: &[String]) -> Result<StepWatch> {
        let mut conns = urls_with_password
            .iter()
            .map(|u| connect(u))
            .collect::<Result<Vec<_>>>()?;
        let before = conns.iter_mut().map(read).collect::<Result<Vec<_>>>()?;
        Ok(StepWatch { conns, before })
    }

    /// The status read at the start, per node.
    pub fn before(&self) -> &[NodeStatus] {
        &self.before
    }

    /// Read every node again: the change per node, in the order of the URLs; `elapsed` is the
    /// time since [`StepWatch::start`] as the caller measured it (rates per second divide by it).
    pub fn finish(mut self, elapsed: Duration) -> Result<Vec<NodeDelta>> {
        let after = self
            .conns
            .iter_mut()
            .map(read)
            .collect::<Result<Vec<_>>>()?;
        Ok(self
            .before
            .iter()
            .zip(&after)
            .map(|(b, a)| delta(b, a, elapsed))
            .collect())
    }
}

/// Refuse a cluster that is split or not fully synced: every node (named by `nodes`' first
/// field) must be a synced member of one primary component holding all of them. The error
/// names each node that is not, with what it says.
pub fn check_whole(nodes: &[(String, NodeStatus)]) -> Result<()> {
    let size = nodes.len() as u64;
    let bad: Vec<String> = nodes
        .iter()
        .filter(|(_, s)| !s.synced_in(size))
        .map(|(n, s)| format!("{n}: {}", s.summary()))
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    let non_primary = nodes
        .iter()
        .any(|(_, s)| s.cluster_status.as_deref().is_some_and(|v| v != "Primary"));
    anyhow::bail!(
        "the Galera cluster is {} (expected {size} synced nodes in one primary component): {}",
        if non_primary {
            "split or non-primary"
        } else {
            "not fully synced"
        },
        bad.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parses_status_and_leaves_missing_unknown() {
        let s = NodeStatus::from_vars(&vars(&[
            ("wsrep_cluster_size", "3"),
            ("wsrep_cluster_status", "Primary"),
            ("wsrep_local_state_comment", "Synced"),
            ("wsrep_flow_control_paused_ns", "1500000000"),
            ("wsrep_flow_control_paused", "0.25"),
            ("wsrep_local_cert_failures", "2"),
            ("wsrep_evs_repl_latency", "0.0001/0.0002/0.0005/5e-05/120"),
            ("wsrep_local_recv_queue_avg", "0.5"),
        ]));
        assert!(s.synced_in(3));
        assert!(!s.synced_in(2));
        assert_eq!(s.flow_control_paused, Some(0.25));
        assert_eq!(s.cert_failures, Some(2));
        assert_eq!(s.local_commits, None, "not reported: unknown, not 0");
        let l = s.repl_latency.unwrap();
        assert_eq!((l.max, l.samples), (0.0005, 120));
        assert_eq!(ReplLatency::parse("1/2/3"), None);

        let mut after = s.clone();
        after.flow_control_paused_ns = Some(2_500_000_000);
        after.cert_failures = Some(5);
        after.local_commits = Some(10);
        let d = delta(&s, &after, Duration::from_secs(4));
        assert_eq!(d.flow_control_paused_fraction, Some(0.25));
        assert_eq!(d.cert_failures, Some(3));
        assert_eq!(d.local_commits, None, "no start value");
        // A counter reset (FLUSH STATUS) gives unknown, not a huge or negative delta.
        after.cert_failures = Some(1);
        assert_eq!(
            delta(&s, &after, Duration::from_secs(1)).cert_failures,
            None
        );
    }

    #[test]
    fn split_or_unsynced_clusters_are_refused() {
        let node = |size: u64, status: &str, state: &str| NodeStatus {
            cluster_size: Some(size),
            cluster_status: Some(status.into()),
            local_state_comment: Some(state.into()),
            ..NodeStatus::default()
        };
        let whole = vec![
            ("node1".to_string(), node(2, "Primary", "Synced")),
            ("node2".to_string(), node(2, "Primary", "Synced")),
        ];
        check_whole(&whole).unwrap();
        let split = vec![
            ("node1".to_string(), node(1, "non-Primary", "Initialized")),
            ("node2".to_string(), node(1, "non-Primary", "Initialized")),
        ];
        let e = check_whole(&split).unwrap_err().to_string();
        assert!(
            e.contains("split or non-primary") && e.contains("node2"),
            "{e}"
        );
        let joining = vec![
            ("node1".to_string(), node(2, "Primary", "Donor/Desynced")),
            ("node2".to_string(), node(2, "Primary", "Joiner")),
        ];
        let e = check_whole(&joining).unwrap_err().to_string();
        assert!(
            e.contains("not fully synced") && e.contains("Donor/Desynced"),
            "{e}"
        );
    }
}
