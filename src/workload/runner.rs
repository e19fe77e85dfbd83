//! What a workload that is not run as the insert benchmark's steps (the transaction
//! workloads: the OLTP mixes, the time series, the key-value mix) gives the registry, and what
//! it gets from the command that runs it.
//!
//! A registry entry ([`crate::workload::registry::Entry::runner`]) says what runs the workload:
//! the insert benchmark's steps ([`Runner::Steps`], with the function that plans them from the
//! options), or the workload's own function ([`Runner::Own`]), which hands its declaration to
//! the one transaction runner ([`crate::workload::txn_runner`]). `ixbench run --workload NAME`
//! hands that function the options it was given ([`RunIn`]) and a [`Host`]: everything the
//! runner needs from the layers above the workloads (the options every database command
//! shares, the session with its target, results directory and `run.json`, the measured
//! transaction phase, the cluster watch), so the runner and the workloads live under
//! `src/workload/` and import nothing above it.
//! The host is implemented once, by `step::txn_phase` (the head every transaction workload
//! shares); `ixbench oltp` and `ixbench timeseries` run the same workloads under their old names.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Result;

use crate::dbms::{Conn, Dbms, QuietWait};
use crate::export::Table;
use crate::measure::interval::IntervalLine;
use crate::measure::meter::TxnTotals;
use crate::measure::interval::IntervalDetail;
use crate::measure::reporter::Measured;
use crate::measure::schedule::Arrivals;
use crate::measure::sys::ProcSnapshot;
use crate::results::cluster::NodeStep;
use crate::results::store::Store;
use crate::results::{BarrierStamps, Check, IndexBuild, RunResult, StepResult};
pub use crate::workload::iibench::plan::PlanFn;
use crate::workload::tables::IndexedTables;
use crate::workload::tables::CheckedTable;
use crate::workload::WorkloadOptions;
use crate::workload::Workload;

/// Largest `--rows` / `--rows2` (rows per client): 10^12, so row counts and keys never
/// overflow (they are kept as i64 and multiplied by the clients); also the ceiling of a step
/// bounded by its time (`crate::options::cli` takes it and the bounds below from here: they
/// are what the workloads' options share).
pub const MAX_ROWS: u64 = 1_000_000_000_000;
/// Largest `--rates` value, rows/s per client.
pub const MAX_RATE: u64 = 10_000_000;
/// Longest `--query-seconds`: one week (a step is stopped at 3x its planned time, so the
/// longest possible step still fits a `Duration` and the rows it inserts fit a u64).
pub const MAX_QUERY_SECONDS: f64 = 604_800.0;
/// Largest `--clients` of one process (three threads and connections each).
pub const MAX_CLIENTS: u64 = 4096;
/// Seconds a part of a several-process run waits at a step's start for the others (default
/// of `--barrier-timeout`; see [`StepBarrier`]).
pub const BARRIER_TIMEOUT_SECS: u64 = 900;

/// A number of seconds in `min..=max` (`min` excluded when it is 0): NaN, infinities, 1e20 and
/// negative values are refused here, with the range in the message.
pub fn seconds_in(s: &str, min: f64, max: f64) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    let low_ok = if min == 0.0 { v > 0.0 } else { v >= min };
    if !(low_ok && v <= max) {
        return Err(if min == 0.0 {
            format!("must be more than 0 and at most {max} seconds")
        } else {
            format!("must be between {min} and {max} seconds")
        });
    }
    Ok(v)
}

/// `--query-seconds`: more than 0, at most [`MAX_QUERY_SECONDS`].
pub fn query_seconds(s: &str) -> Result<f64, String> {
    seconds_in(s, 0.0, MAX_QUERY_SECONDS)
}

/// A workload's runner: its part of `ixbench run`'s options and the host; returns the exit
/// status (0, checks failed, interrupted), errors for the caller to print.
pub type RunFn = fn(&RunIn, &mut dyn Host) -> Result<u8>;

/// What runs a registered workload.
#[derive(Debug, Clone, Copy)]
pub enum Runner {
    /// The insert benchmark's steps (l.i0, l.x, l.i1, l.i2, maint, qrN/qpN), planned from
    /// `ixbench run`'s options under its heading by the workload's function (the insert
    /// benchmark's [`crate::workload::iibench::plan::plan`]) and run by `step::plan_run`.
    Steps(PlanFn),
    /// The workload's function that hands it to the one transaction runner
    /// ([`crate::workload::txn_runner::run`]), on the shared transaction head.
    Own(RunFn),
}

/// What `ixbench run --workload NAME` hands a workload's own runner.
pub struct RunIn<'a> {
    /// The workload's name (the registry entry's, not an alias).
    pub name: &'a str,
    /// The workload-specific options of `ixbench run` (each workload reads its own).
    pub opts: &'a WorkloadOptions,
    /// `--rows-per-commit`, an option of the insert benchmark's heading that other workloads
    /// may take too (see [`crate::workload::registry::Entry::also_takes`]).
    pub rows_per_commit: u64,
}

/// How a transaction workload's clients run, whichever command runs it.
#[derive(Debug, Clone)]
pub struct TxnHead {
    /// Clients (connections).
    pub threads: u64,
    /// Seconds of transactions.
    pub time: f64,
    /// Offered transactions per second of all clients together, or closed loop.
    pub rate: Option<f64>,
    /// Spacing of the intended starts with a rate.
    pub arrivals: Arrivals,
    /// Seconds between two interval lines.
    pub interval: f64,
    /// Retries of one transaction after transient errors before the run fails.
    pub max_retries: u32,
    /// Fail when no transaction completed for this many seconds.
    pub stall_timeout: f64,
}

/// The options every database command shares that a runner reads (a copy of the command's).
#[derive(Debug, Clone)]
pub struct Common {
    /// `--target`, with its password (see [`crate::dbms::redact_url`] before recording it).
    pub target: String,
    /// `--engine`.
    pub engine: Option<String>,
    /// `--seed`.
    pub seed: u64,
    /// `--table-prefix`.
    pub table_prefix: String,
    /// `--data-length`.
    pub data_length: String,
}

/// The open session: the target, its admin connection, the results directory and the run's
/// result (`run.json`).
pub struct Open<'a> {
    /// The target.
    pub target: &'a dyn Dbms,
    /// A connection of its own on the target.
    pub conn: &'a mut dyn Conn,
    /// The results directory.
    pub store: &'a mut Store,
    /// What `run.json` holds.
    pub result: &'a mut RunResult,
    /// The interrupt (Ctrl-C, SIGTERM) the phases stop on.
    pub interrupt: &'a AtomicBool,
}

/// The measured phase: what the reporter measured and the sum of the interval lines.
pub struct Phase {
    /// The reporter's figures (totals, histograms, errors).
    pub m: Measured,
    /// The interval lines' transaction counts added up.
    pub line_sum: TxnTotals,
    /// The client process's CPU over the phase.
    pub cpu: ProcSnapshot,
    /// Connections of the workers made again after their node died.
    pub reconnects: u64,
    /// Transactions in flight when their node died (they may have committed there).
    pub in_doubt: u64,
    /// The cluster's nodes, when they were watched (see [`Host::measure`]).
    pub watched: Option<WatchedNodes>,
}

/// The cluster's nodes over a watched phase.
pub struct WatchedNodes {
    /// Per-node figures.
    pub nodes: Vec<NodeStep>,
    /// Their lines, to print.
    pub lines: String,
    /// The error that stopped the phase when a node left (`--on-node-loss stop`).
    pub stop_error: Option<String>,
    /// The warning that a node left while the phase went on.
    pub loss_warning: Option<String>,
}

impl Phase {
    /// The check that the interval lines add up to the totals.
    pub fn interval_sums(&self) -> Check {
        let t = &self.m.totals.txn;
        Check {
            name: "interval_sums".into(),
            ok: self.line_sum == *t,
            detail: format!(
                "{} lines: {} transactions, {} queries; totals {} and {}",
                self.m.lines,
                self.line_sum.txns,
                self.line_sum.statements(),
                t.txns,
                t.statements()
            ),
        }
    }
}

/// What a workload's runner gets from the command that runs it (implemented once, by the
/// shared transaction head in `step::txn_phase`).
pub trait Host {
    /// The command (`run`, or the workload's own old name: `oltp`, `timeseries`), recorded
    /// in the config.
    fn command(&self) -> &str;

    /// The options every database command shares.
    fn common(&self) -> &Common;

    /// Clients, time, rate, ...
    fn head(&self) -> &TxnHead;

    /// The interrupt (Ctrl-C, SIGTERM) the phases stop on.
    fn interrupt(&self) -> &AtomicBool;

    /// Check the head's options against each other (`unit`: what the rate counts).
    fn check_head(&self, unit: &str) -> Result<()>;

    /// Check the shared options (target, engine, pragmas, ...) for a run on `tables`.
    fn check_common(&self, tables: &[String]) -> Result<()>;

    /// Open the session (target, results directory, `run.json` with `config`).
    fn open(&mut self, config: serde_json::Value) -> Result<()>;

    /// The open session (an error before [`Host::open`]).
    fn session(&mut self) -> Result<Open<'_>>;

    /// Run `w`'s clients as the head says for the step `step`: each interval's line printed
    /// and appended to `intervals.ndjson`; `each` sees every line with the totals so far
    /// (before it is printed). `watch`: on a Galera cluster every node is watched (per-node
    /// figures, a node that leaves).
    fn measure(
        &mut self,
        step: &str,
        w: &dyn Workload,
        watch: bool,
        each: &mut dyn FnMut(&IntervalLine, &IntervalDetail, &TxnTotals),
    ) -> Result<Phase>;

    /// Record how the run ended, write `run.json` and the `tables` (name, table; the
    /// cluster's nodes' table is added when there is one), print the checks and where the
    /// results are. Returns the exit status, or the runner's error for the caller to print.
    fn close(
        &mut self,
        outcome: Result<()>,
        checks_ok: bool,
        tables: Vec<(&str, Table)>,
    ) -> Result<u8>;
}

/// How a wait for a quiet server ended (see [`StepHost::wait_quiet`]), for the measurement
/// that follows it to record.
#[derive(Debug, Default)]
pub struct Quiet {
    /// The wait (`None`: nothing to wait for, `--quiet-timeout 0`, or not watched).
    pub wait: Option<QuietWait>,
    /// The warnings the measurement carries (the server could not be watched, or was still
    /// busy when the timeout ran out).
    pub warnings: Vec<String>,
}

/// What a workload's own steps (the insert benchmark's, run by its own code under its folder
/// for `ixbench run` and the index lab) get from the layers above the workloads: the one wait
/// for a quiet server, the one index build, the cluster's watch around a step. Implemented
/// once, by `step::step_host`; beside [`Host`] (a transaction workload's session: open,
/// measure, close) because the index lab runs the same steps in a session of its own.
pub trait StepHost {
    /// Wait (at most `timeout`) until the server has finished its background work on `tables`
    /// before the `when` (`step`, ...), printed as it ends when it mattered; a server that
    /// could not be watched is said at once and comes back as a warning.
    fn wait_quiet(
        &self,
        target: &dyn Dbms,
        conn: &mut dyn Conn,
        tables: &[String],
        timeout: Duration,
        when: &str,
    ) -> Quiet;

    /// Build the indexes `on` hands (each build handed to `on_build` as it ends).
    fn build_indexes(
        &self,
        on: &dyn IndexedTables,
        conn: &mut dyn Conn,
        on_build: &mut dyn FnMut(IndexBuild),
    ) -> Result<()>;

    /// How the builds were made (one statement per index, or several in one), for the
    /// step's line and description.
    fn describe_builds(&self, builds: &[IndexBuild]) -> String;

    /// Run the step `name` on `tables` (`step`), on a cluster with every node watched
    /// (per-node figures and row checks, a node that leaves).
    fn watch_step(
        &self,
        name: &str,
        tables: &[&dyn CheckedTable],
        step: &mut dyn FnMut() -> StepResult,
    ) -> StepResult;
}

/// The barrier the parts of a several-process run meet at before every step (implemented by
/// `step::barrier`).
pub trait StepBarrier {
    /// Meet the other parts at the start of step `label` (`shown` in messages); client 0 calls
    /// `quiet` once every part has arrived, with every part's tables. Returns this part's
    /// stamps once the common start has come; an error names the part that is missing or left.
    fn meet(
        &mut self,
        conn: &mut dyn Conn,
        label: &str,
        shown: &str,
        interrupt: &AtomicBool,
        quiet: &mut dyn FnMut(&mut dyn Conn, &[String]),
    ) -> Result<BarrierStamps>;

    /// Say this part left the run (best effort), so the others fail at once.
    fn leave(&mut self, conn: &mut dyn Conn);
}
