//! `ixbench timeseries`: the time-series workload (see [`crate::workload::timeseries`]) on its
//! own: load the retention window, insert the latest interval across all devices for `--time`
//! (closed loop, or open loop at `--rate` commits/s) with retention by DROP PARTITION or
//! DELETE, then time the queries and check their plans (partition pruning).
//! `--compare-partitioning` runs it twice with the same rows, range-partitioned then
//! unpartitioned, and prints both side by side. The same as `ixbench run --workload
//! timeseries`: both run [`crate::workload::timeseries_run`] on the shared transaction head
//! ([`crate::step::txn_phase::TxnHost`]).

use std::sync::atomic::AtomicBool;

use anyhow::Result;
use clap::Args;

use crate::options::cli::CommonArgs;
use crate::step::txn_phase::{TxnHeadArgs, TxnHost};
use crate::workload::timeseries::TsOptions;
use crate::workload::timeseries_run::{self, TsInput};

/// Options of `ixbench timeseries`.
#[derive(Debug, Clone, Args)]
pub struct TsArgs {
    /// Database and results directory.
    #[command(flatten)]
    pub common: CommonArgs,

    /// Rows per INSERT transaction.
    #[arg(long, default_value_t = 100)]
    pub rows_per_commit: u64,

    /// Clients (connections) inserting.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,

    /// Seconds, rate, arrivals, interval, retries, stall timeout.
    #[command(flatten)]
    pub head: TxnHeadArgs,

    /// The workload's own options.
    #[command(flatten)]
    pub opts: TsOptions,
}

impl TsArgs {
    /// The runner's input.
    pub fn input(&self) -> TsInput<'_> {
        TsInput {
            rows_per_commit: self.rows_per_commit,
            opts: &self.opts,
        }
    }
}

/// Run `ixbench timeseries` ([`crate::workload::timeseries_run`], as `ixbench run --workload
/// timeseries` runs it).
pub fn run(args: &TsArgs, argv: Vec<String>, interrupt: &AtomicBool) -> Result<u8> {
    let mut host = TxnHost::new(
        "timeseries",
        &args.common,
        args.head.head(args.threads),
        argv,
        interrupt,
    )?;
    timeseries_run::run(&args.input(), &mut host)
}
