//! Workloads: one file each, owning its tables, indexes, statements (with per-dialect variants
//! where the SQL differs), value generators and operation mix. A workload talks to a DBMS only
//! through [`crate::dbms::Conn`]'s prepared statements with typed [`crate::dbms::Value`]
//! parameters and transactions, so it runs on every DBMS and no DBMS knows any workload.
//!
//! Every workload is registered by name in [`registry`] (its aliases, description, option
//! headings, `--size` presets, notes, the table and column a schema change works on, its
//! indexes): `ixbench run --workload NAME` and `ixbench ddl --workload NAME` find it there.
//! The insert benchmark (`iibench`) plans its own steps under `run` (load, read+write at a
//! rate: [`iibench::plan`], its steps [`iibench::steps`], run one by one by `step::plan_run`) and is a [`Workload`] too ([`iibench::load`]: l.i1's inserts with deletes of the
//! oldest rows); the transaction workloads (sysbench-compatible OLTP, the time series, the
//! key-value mix [`kv`]) implement [`Workload`] and declare themselves to the one transaction
//! runner ([`txn_runner`], on the [`runner::Host`] that `step::txn_phase` implements: the
//! OLTP mixes in [`oltp_run`], the time series in [`timeseries_run`]), which the commands that
//! run a load while something else happens (`ixbench ddl`) drive on a schedule too.
//!
//! Adding a workload is its file (see docs/contributing.md, "Adding things"): its
//! [`Workload`], its registry entry (`pub fn entry()`) and its [`txn_runner::TxnWorkload`]
//! declaration; build.rs finds it and writes its `pub mod` line and its place in
//! [`registry::all`], and reads these conventions in its code (each a line of its own at the
//! start of a line, outside its unit tests), so no list is edited by hand:
//! - options of its own: `pub const HEADING: &str = "...";` (its help heading of `ixbench
//!   run`) and its clap `Args` struct as the `pub struct` right after
//!   `#[command(next_help_heading = HEADING)]`: a field named as its module in
//!   [`WorkloadOptions`] (its runner reads `RunIn::opts.MODULE`), its heading among
//!   [`registry::headings`]; `pub const RANK: u8 = N;` (its entry's `rank`) orders them in
//!   `ixbench run --help`;
//! - a record of its own ([`txn_runner::Record`]): `pub struct T` and `impl Record for T` in
//!   one module add its part of `run.json`'s JSON Schema ([`txn_runner::record_parts`]);
//! - a command of its own (`ixbench oltp`, `ixbench timeseries`): `pub fn command() ->
//!   registry::Command` (its name, presets, options and runner; [`registry::command`]).
//!
//! [`registry`] and [`txn_runner`] name no workload module: they reach the workloads only
//! through these lists, written here by build.rs.

// Every module of this folder (a `NAME.rs` file or a `NAME/` folder): its `pub mod` line, and
// what build.rs finds in them: `entries()` (the registry entries), `WorkloadOptions` and
// `HEADINGS` (their options), `record_parts()` (their records' parts of `run.json`) and
// `commands()` (their commands of their own), written by build.rs so adding a workload edits
// no list.
include!(concat!(env!("OUT_DIR"), "/workloads.rs"));

use anyhow::Result;

use crate::dbms::{Conn, Dbms};

pub use crate::measure::meter::TxnDone;

/// A workload of transactions on tables it owns.
pub trait Workload: Send + Sync {
    /// Its name, as `--workload` takes it (`oltp_read_write`, `iibench`, ...).
    fn name(&self) -> &str;

    /// The tables it owns, in creation order.
    fn tables(&self) -> Vec<String>;

    /// Create its tables (refusing tables ixbench did not create; see
    /// [`crate::workload::tables`]) and load their rows with their secondary indexes, using up to
    /// `threads` connections.
    fn load(&self, dbms: &dyn Dbms, threads: usize) -> Result<()>;

    /// A client: its own random generator (from `seed`) and statements prepared on `conn`,
    /// the connection it will run on.
    fn client(&self, conn: &mut dyn Conn, id: usize, seed: u64) -> Result<Box<dyn WorkloadClient>>;
}

/// One client of a [`Workload`]: runs one transaction at a time on its connection.
pub trait WorkloadClient: Send {
    /// Run one whole transaction (BEGIN to COMMIT, or a single autocommit statement where the
    /// workload has no transaction) on the client's connection. On an error the caller rolls
    /// back; a retryable one ([`Conn::is_retryable`]) is run again and counted as a retry.
    fn run(&mut self, conn: &mut dyn Conn) -> Result<TxnDone>;
}
