//! What `ixbench oltp` stores in `run.json`: the workload's options, the load, and the
//! measured run as sysbench summarizes it (transactions, queries by class, TPS, QPS, latency,
//! errors, retries), with the client's CPU per transaction and the row-count check.

use serde::{Deserialize, Serialize};

use super::Check;
use crate::measure::histogram::LatencySummary;
use crate::measure::meter::TxnTotals;
use crate::measure::sys::ProcSnapshot;

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

/// sysbench's transaction types.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Mix {
    /// Point selects, four kinds of range selects, index and non-index updates, delete+insert.
    #[value(name = "oltp_read_write")]
    OltpReadWrite,
    /// Point selects and the four kinds of range selects.
    #[value(name = "oltp_read_only")]
    OltpReadOnly,
    /// Index and non-index updates, delete+insert.
    #[value(name = "oltp_write_only")]
    OltpWriteOnly,
    /// One INSERT of a new row (id assigned by the DBMS), autocommit.
    #[value(name = "oltp_insert")]
    OltpInsert,
    /// One `UPDATE ... SET k=k+1 WHERE id=?`, autocommit.
    #[value(name = "oltp_update_index")]
    OltpUpdateIndex,
    /// One `UPDATE ... SET c=? WHERE id=?`, autocommit.
    #[value(name = "oltp_update_non_index")]
    OltpUpdateNonIndex,
    /// One `SELECT c ... WHERE id=?`, autocommit.
    #[value(name = "oltp_point_select")]
    OltpPointSelect,
}

/// The distribution of ids and `k` values (sysbench `--rand-type`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    /// sysbench 1.0's default: hot spot at the centre of the range (see the module docs).
    Special,
    /// Uniform over the range.
    Uniform,
}

/// Options of the workload, with sysbench's names and defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OltpConfig {
    /// Transaction type.
    pub mix: Mix,
    /// Number of tables (`--tables`, 1).
    pub tables: u32,
    /// Rows per table (`--table-size`, 10000).
    pub table_size: u32,
    /// Rows of a range select (`--range_size`, 100).
    pub range_size: u32,
    /// Point selects per transaction (`--point_selects`, 10; 1 in `oltp_point_select`).
    pub point_selects: u32,
    /// Simple range selects per transaction (1).
    pub simple_ranges: u32,
    /// `SUM(k)` range selects per transaction (1).
    pub sum_ranges: u32,
    /// `ORDER BY c` range selects per transaction (1).
    pub order_ranges: u32,
    /// `DISTINCT c` range selects per transaction (1).
    pub distinct_ranges: u32,
    /// `SET k=k+1` updates per transaction (1).
    pub index_updates: u32,
    /// `SET c=?` updates per transaction (1).
    pub non_index_updates: u32,
    /// DELETE+INSERT pairs per transaction (1).
    pub delete_inserts: u32,
    /// Run the range selects (`--range_selects`, on).
    pub range_selects: bool,
    /// Autocommit every statement, no BEGIN/COMMIT (`--skip_trx`, off).
    pub skip_trx: bool,
    /// Distribution of ids and `k` (`--rand-type`, special).
    pub rand_type: RandType,
}
