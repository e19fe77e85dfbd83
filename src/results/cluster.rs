//! Per-node figures of a step run on a throwaway cluster (`--target galera`): each node's
//! replication figures (Galera `wsrep%` deltas), its server processes' CPU and I/O, whether
//! the workload's connections went to it, and when it left the cluster if it did.

use serde::{Deserialize, Serialize};

use crate::dbms::galera::NodeDelta;
use crate::measure::sys::ServerSample;

/// One node over one step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NodeStep {
    /// `node1`, `node2`, ...
    pub role: String,
    /// Whether the workload's connections went to this node (`--write-nodes`).
    pub writes: bool,
    /// How its `wsrep%` status changed over the step; `None` when it could not be read at
    /// both ends (a node that left, a provider that reports nothing).
    pub wsrep: Option<NodeDelta>,
    /// CPU and I/O of the node's server processes over the step (from /proc); `None` when its
    /// processes were gone at either end.
    pub server: Option<ServerSample>,
    /// When and how the node left the cluster during the step, if it did.
    pub lost: Option<NodeLoss>,
    /// Why figures of this node are unknown (one line each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A node that left the cluster during a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NodeLoss {
    /// When it was seen gone (RFC 3339, UTC).
    pub at: String,
    /// Seconds after the step's start.
    pub secs_into_step: f64,
    /// What was seen: `process exited`, `status unreadable: ...`, `non-Primary`.
    pub how: String,
    /// Workers' connections that were lost during the step and made again on a surviving
    /// node (`--write-nodes` over several nodes); `None` when more than one node left during
    /// the step (the moves are not told apart per node) or in results written before it was
    /// recorded.
    #[serde(default)]
    pub connections_moved: Option<u64>,
    /// The node was the entry (the control session, self-checks, counters, sizes) and the
    /// entry moved to this node (`node2`, ...); `None` when it was not the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_moved_to: Option<String>,
}
