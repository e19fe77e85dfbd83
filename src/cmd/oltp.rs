//! `ixbench oltp`: sysbench's OLTP workloads on their own, so figures compare with sysbench's
//! on the same server: load the tables (like `sysbench prepare`) or reuse them, run the
//! transactions for a time (closed loop, or open loop at `--rate`), print a line per interval
//! and a summary as sysbench does, and keep `run.json` and `intervals.ndjson`. The same as
//! `ixbench run --workload MIX`: both run [`crate::workload::oltp_run`] on the shared
//! transaction head ([`crate::step::txn_phase::TxnHost`]).

use std::sync::atomic::AtomicBool;

use anyhow::Result;
use clap::Args;

use crate::options::cli::CommonArgs;
use crate::step::txn_phase::{TxnHeadArgs, TxnHost};
use crate::workload::oltp::{Mix, OltpOptions};
use crate::workload::oltp_run::{self, OltpInput};

/// Options of `ixbench oltp`.
#[derive(Debug, Clone, Args)]
pub struct OltpArgs {
    /// Database and results directory.
    #[command(flatten)]
    pub common: CommonArgs,

    /// Transaction type, as sysbench names it.
    #[arg(long, value_enum, default_value_t = Mix::OltpReadWrite)]
    pub workload: Mix,

    /// Clients (connections), as sysbench's --threads.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: u64,

    /// Seconds, rate, arrivals, interval, retries, stall timeout.
    #[command(flatten)]
    pub head: TxnHeadArgs,

    /// The mixes' own options.
    #[command(flatten)]
    pub opts: OltpOptions,
}

impl OltpArgs {
    /// The runner's input.
    pub fn input(&self) -> OltpInput<'_> {
        OltpInput {
            mix: self.workload,
            opts: &self.opts,
        }
    }
}

/// Run `ixbench oltp`: the OLTP mix's runner ([`crate::workload::oltp_run`]), as `ixbench
/// run --workload MIX` runs it. Returns the exit status; errors are returned for the caller
/// to print.
pub fn run(args: &OltpArgs, argv: Vec<String>, interrupt: &AtomicBool) -> Result<u8> {
    let mut host = TxnHost::new(
        "oltp",
        &args.common,
        args.head.head(args.threads),
        argv,
        interrupt,
    )?;
    oltp_run::run(&args.input(), &mut host)
}
