//! What the index lab (`ixbench index`) and `ixbench pattern` ask of a workload, through its
//! registry entry ([`crate::workload::registry::Entry::lab`]), so that neither names one:
//! a workload that has a lab table of its own (the insert benchmark: its table loaded by its
//! l.i0 step, its secondary indexes chosen by `--indexes`, their plan check, `--reuse`, load
//! strategies and rebuilds) hands out a [`LabTable`] and the geek codes of its indexes; one
//! without ([`LabHooks`] `None`) is built on through its entry's `ddl_workload`, `ddl_target`
//! and `indexes`, as own data (`ixbench index --workload NAME`). The default workload is the
//! registry's first ([`crate::workload::registry::default_entry`]), found by its rank, not by its name.
//!
//! What an index build step gets to build is in [`crate::workload::tables`] ([`crate::workload::tables::IndexedTables`]: the tables and the
//! indexes the caller hands it), so `step::create_index` builds any workload's indexes.

use std::sync::atomic::AtomicBool;

use anyhow::Result;

use crate::dbms::{Conn, Dbms, IndexSpec, SqlDialect};
use crate::pattern::GeekCode;
use crate::results::store::Store;
use crate::results::StepResult;
use crate::workload::runner::StepHost;

/// A workload's hooks for the index lab and `ixbench pattern`.
#[derive(Debug, Clone, Copy)]
pub struct LabHooks {
    /// Its lab table, named after `--table-prefix` (nothing is read or connected yet).
    pub table: fn(prefix: &str) -> Box<dyn LabTable>,
    /// The geek codes of its primary key and its first `indexes` secondary indexes, with
    /// `rows` rows inserted per table at `rate` rows/s (`ixbench pattern code`).
    pub codes: fn(indexes: usize, rows: u64, rate: f64) -> Vec<(String, GeekCode)>,
}

/// One secondary index of a lab table.
#[derive(Debug, Clone)]
pub struct LabIndex {
    /// Its short name, as `--indexes` takes it and `run.json` records it.
    pub short: String,
    /// The index on the table.
    pub spec: IndexSpec,
}

/// What the load of a lab table runs with.
#[derive(Debug, Clone)]
pub struct LabSettings {
    /// `--seed`.
    pub seed: u64,
    /// `--data-length`, checked.
    pub data_len: (usize, usize),
    /// `--quiet-timeout`, checked.
    pub quiet_timeout: std::time::Duration,
}

/// A workload's table in the index lab: its name, indexes, rows, load and plan check.
pub trait LabTable: Send + Sync {
    /// The table's name.
    fn name(&self) -> &str;

    /// Its secondary indexes, in the order `--indexes N` numbers them (from 1).
    fn indexes(&self) -> &[LabIndex];

    /// Ready the table's state on a target whose SQL is `dialect` (no rows yet). Called once,
    /// before anything else below.
    fn open(&self, dialect: &SqlDialect, settings: LabSettings);

    /// Rows it holds, as ixbench counted them (its loads; [`LabTable::set_rows`]).
    fn rows(&self) -> u64;

    /// It holds `rows` rows (a table reused from an earlier run).
    fn set_rows(&self, rows: u64);

    /// Rows in the table, counted by the DBMS.
    fn count_rows(&self, conn: &mut dyn Conn) -> Result<u64>;

    /// Its columns in `dialect` (lower case), for the checks of `--index`.
    fn columns(&self, dialect: &SqlDialect) -> Vec<String>;

    /// The plan of the workload's query that index `index` serves (`dialect`: the SQL of the
    /// server it runs on), for the check that it uses the index.
    fn explain(&self, conn: &mut dyn Conn, dialect: &SqlDialect, index: &str) -> Result<String>;

    /// Load about `rows` rows (into a new table when `create`) as a step of the run on `host`
    /// (the session's quiet wait and cluster watch), printed as it goes; the step's result, for
    /// the caller to keep.
    fn load(&self, on: LabOn, rows: u64, create: bool, host: &dyn StepHost) -> StepResult;

    /// Create the table new, with its primary key only (before a load that keeps the indexes
    /// built first).
    fn create(&self, on: LabOn, host: &dyn StepHost) -> Result<()>;
}

/// Where a lab table is loaded: the target, the control connection, the results directory
/// and the interrupt (Ctrl-C).
pub struct LabOn<'a> {
    /// The target.
    pub target: &'a dyn Dbms,
    /// The control connection.
    pub conn: &'a mut dyn Conn,
    /// The results directory (a step's interval lines).
    pub store: &'a mut Store,
    /// Ctrl-C.
    pub interrupt: &'a AtomicBool,
}

