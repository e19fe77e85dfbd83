//! `ixbench oltp`: sysbench's OLTP workloads on their own, so figures compare with sysbench's
//! on the same server: load the tables (like `sysbench prepare`) or reuse them, run the
//! transactions for a time (closed loop, or open loop at `--rate`), print a line per interval
//! and a summary as sysbench does, and keep `run.json` and `intervals.ndjson`. The same as
//! `ixbench run --workload MIX`: both run [`crate::workload::oltp_run`] on the shared
//! transaction head ([`crate::step::txn_phase::TxnHost`]).

use std::sync::atomic::AtomicBool;

use anyhow::Result;
use clap::Args;

use crate::cli::CommonArgs;
use crate::measure::schedule::Arrivals;
use crate::step::txn_phase::{TxnHead, TxnHost};
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

    /// Seconds to run the transactions.
    #[arg(long, default_value_t = 10.0)]
    pub time: f64,

    /// Offered transactions per second of all clients together (open loop: latency counts
    /// from each transaction's intended start); without it, each client runs as fast as it
    /// can (closed loop, as sysbench without --rate).
    #[arg(long)]
    pub rate: Option<f64>,

    /// Spacing of the intended starts with --rate.
    #[arg(long, value_enum, default_value_t = Arrivals::Uniform)]
    pub arrivals: Arrivals,

    /// Seconds between two interval lines (sysbench's --report-interval).
    #[arg(long, default_value_t = 1.0)]
    pub interval: f64,

    /// Retries of one transaction after transient errors (deadlock, serialization failure,
    /// lock wait timeout, busy, duplicate key) before the run fails.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub max_retries: u32,

    /// Fail when no transaction completed for this many seconds.
    #[arg(long, default_value_t = 60.0)]
    pub stall_timeout: f64,

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

    /// Clients, time, rate, ...
    pub fn head(&self) -> TxnHead {
        TxnHead {
            threads: self.threads,
            time: self.time,
            rate: self.rate,
            arrivals: self.arrivals,
            interval: self.interval,
            max_retries: self.max_retries,
            stall_timeout: self.stall_timeout,
        }
    }
}

/// Run `ixbench oltp`: the OLTP mix's runner ([`crate::workload::oltp_run`]), as `ixbench
/// run --workload MIX` runs it. Returns the exit status; errors are returned for the caller
/// to print.
pub fn run(args: &OltpArgs, argv: Vec<String>, interrupt: &AtomicBool) -> Result<u8> {
    let mut host = TxnHost::new("oltp", &args.common, args.head(), argv, interrupt)?;
    oltp_run::run(&args.input(), &mut host)
}
