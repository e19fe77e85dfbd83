//! Per-node figures of a step run on a throwaway cluster (`--target galera`): each node's
//! replication figures (Galera `wsrep%` deltas), its server processes' CPU and I/O, whether
//! the workload's connections went to it, and when it left the cluster if it did. And how an
//! index build of `ixbench index` ran on a sharded target: each shard's part, every node's
//! CPU and I/O ([`ShardedBuild`]).

use serde::{Deserialize, Serialize};

use crate::dbms::galera::NodeDelta;
use crate::dbms::QuietWait;
use crate::measure::sys::ServerSample;

use super::Check;

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

/// How an index build (or table rebuild) of `ixbench index` ran on a sharded target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShardedBuild {
    /// How ixbench built it, in words (e.g. `built on each of 2 shards in parallel ...`).
    pub how: String,
    /// Whether the shards built at the same time (`--shard-builds parallel`) or one after the
    /// other.
    pub parallel: bool,
    /// Each shard's part of the build, shard1 first.
    pub shards: Vec<ShardPart>,
    /// Every node's server processes (shards and head) over the whole build, from before the
    /// first shard's build sessions opened to after the last shard's checks; `writes` marks the
    /// head (the node clients connect to).
    pub nodes: Vec<NodeStep>,
    /// Spider: seconds to declare the built indexes on the head once every shard had built
    /// them (the head's table created again with them; it holds no rows), not in the build's
    /// seconds. `None` on PostgreSQL (the coordinator's partitions are foreign tables, with no
    /// indexes) and for statements that change no index.
    pub head_declare_secs: Option<f64>,
}

/// One shard's part of a build: its own build, measured as a build on one server is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShardPart {
    /// `shard1`, `shard2`, ...
    pub role: String,
    /// Rows of the table on this shard (counted on it before the builds).
    pub rows: u64,
    /// When its build statements began, seconds after the first shard's began.
    pub started_after: f64,
    /// Wall seconds of its build statements.
    pub seconds: f64,
    /// `rows / seconds`.
    pub rows_per_sec: f64,
    /// CPU seconds of this shard's server processes over its build; `None` when unknown.
    pub server_cpu_secs: Option<f64>,
    /// Bytes its server's processes read from storage over its build.
    pub server_read_bytes: Option<u64>,
    /// Bytes its server wrote, as the DBMS counts them (WAL, redo, data files).
    pub server_write_bytes: Option<u64>,
    /// Deltas of its DBMS's own I/O counters (name, value).
    pub counters: Vec<(String, u64)>,
    /// Size of each built index on this shard (name, bytes).
    pub index_bytes: Vec<(String, u64)>,
    /// The statements it ran: the outer list is sessions run in parallel on the shard.
    pub statements: Vec<Vec<String>>,
    /// Its checks, on its own server: each index exists, is valid and is used by its range
    /// query.
    pub checks: Vec<Check>,
    /// The wait for this shard's server to be quiet before the builds.
    pub quiet: Option<QuietWait>,
    /// Its error, if its build failed.
    pub error: Option<String>,
    /// Its warnings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}
