//! What `ixbench oltp` stores in `run.json`: the workload's options, the load, and the
//! measured run as sysbench summarizes it (transactions, queries by class, TPS, QPS, latency,
//! errors, retries), with the client's CPU per transaction and the row-count check.

use serde::{Deserialize, Serialize};

use super::Check;
use crate::measure::histogram::LatencySummary;
use crate::measure::meter::TxnTotals;
use crate::measure::sys::ProcSnapshot;
use crate::workload::oltp::OltpConfig;

/// The load of the tables (`sysbench prepare`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct OltpLoad {
    /// Wall seconds from the first CREATE TABLE to the last CREATE INDEX.
    pub seconds: f64,
    /// Rows loaded (all tables).
    pub rows: u64,
    /// Parallel connections.
    pub threads: usize,
    /// True when the tables of an earlier load were used instead.
    pub reused: bool,
}

/// One measured run of a transaction workload.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct OltpRun {
    /// `oltp_read_write`, ...
    pub workload: String,
    /// The workload's options (sysbench's names).
    pub options: Option<OltpConfig>,
    /// Clients.
    pub threads: usize,
    /// Offered rate of all clients together (open loop), transactions/s; `None`: closed loop.
    pub rate: Option<f64>,
    /// The load, when this command loaded or checked the tables.
    pub load: Option<OltpLoad>,
    /// Wall seconds of the measured run (the sum of the interval lines).
    pub seconds: f64,
    /// Counts over the run (the sums of the interval lines).
    pub totals: TxnTotals,
    /// Transactions per second.
    pub tps: f64,
    /// Statements per second (sysbench's queries).
    pub qps: f64,
    /// SELECTs per second.
    pub reads_per_sec: f64,
    /// INSERT/UPDATE/DELETE per second.
    pub writes_per_sec: f64,
    /// BEGIN/COMMIT per second.
    pub other_per_sec: f64,
    /// Errors per second.
    pub errors_per_sec: f64,
    /// Transaction latency from the intended start (equal to the start in a closed loop).
    pub latency: LatencySummary,
    /// 95th percentile of `latency` (sysbench's default percentile), microseconds.
    pub p95_us: Option<u64>,
    /// Errors of transaction attempts by code, with counts.
    pub errors_by_code: Vec<(String, u64)>,
    /// Interval lines written.
    pub intervals: u64,
    /// Lines marked stalled.
    pub stalled_lines: u64,
    /// The ixbench process over the measured run (for SQLite: the engine too).
    pub client: Option<ProcSnapshot>,
    /// Client CPU (user + system) per transaction, microseconds; `None` when not measured.
    pub client_cpu_us_per_txn: Option<f64>,
    /// Rows in the tables before and after the run.
    pub rows_before: Option<u64>,
    /// Rows after.
    pub rows_after: Option<u64>,
    /// Self-checks (row count against the inserts and deletes counted, interval sums).
    pub checks: Vec<Check>,
    /// How it ended: `ok`, `failed`, `interrupted`.
    pub status: String,
    /// The error that stopped it.
    pub error: Option<String>,
    /// Per Galera node over this span (`--target galera`; see [`crate::results::cluster`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<crate::results::cluster::NodeStep>,
    /// Clients' connections made again on a surviving cluster node after theirs died.
    #[serde(default)]
    pub reconnects: u64,
    /// Transactions in flight on a connection whose node died (run again elsewhere; each
    /// may or may not have committed on the dead node).
    #[serde(default)]
    pub in_doubt: u64,
    /// What went wrong without failing the run (a node that left, one line each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl OltpRun {
    /// True when every check passed.
    pub fn checks_ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }
}
