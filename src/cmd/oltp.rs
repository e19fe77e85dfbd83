//! `ixbench oltp`: sysbench's OLTP workloads on their own, so figures compare with sysbench's
//! on the same server: load the tables (like `sysbench prepare`) or reuse them, run the
//! transactions for a time (closed loop, or open loop at `--rate`), print a line per interval
//! and a summary as sysbench does, and keep `run.json` and `intervals.ndjson`. The same as
//! `ixbench run --workload MIX`: the command is the OLTP mixes' own, found in the workload
//! registry by its name ([`crate::workload::registry::Command`]: its options and what runs
//! it), and runs on the shared transaction head ([`crate::step::workload_command`]); this file
//! names no workload.

use std::sync::atomic::AtomicBool;

use anyhow::Result;

use crate::step::workload_command::{self, WorkloadCommandArgs};

/// Options of `ixbench oltp`: the shared ones, the head's, and the mixes' own (`--workload
/// MIX`, `--threads`, their options under their heading).
pub type OltpArgs = WorkloadCommandArgs;

/// Run `ixbench oltp`, as `ixbench run --workload MIX` runs the mix. Returns the exit status;
/// errors are returned for the caller to print.
pub fn run(args: &OltpArgs, argv: Vec<String>, interrupt: &AtomicBool) -> Result<u8> {
    workload_command::run("oltp", args, argv, interrupt)
}
