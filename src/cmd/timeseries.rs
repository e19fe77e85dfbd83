//! `ixbench timeseries`: the time-series workload on its own: load the retention window,
//! insert the latest interval across all devices for `--time` (closed loop, or open loop at
//! `--rate` commits/s) with retention by DROP PARTITION or DELETE, then time the queries and
//! check their plans (partition pruning). `--compare-partitioning` runs it twice with the same
//! rows, range-partitioned then unpartitioned, and prints both side by side. The same as
//! `ixbench run --workload timeseries`: the command is the time series' own, found in the
//! workload registry by its name ([`crate::workload::registry::Command`]), and runs on the
//! shared transaction head ([`crate::step::workload_command`]); this file names no workload.

use std::sync::atomic::AtomicBool;

use anyhow::Result;

use crate::step::workload_command::{self, WorkloadCommandArgs};

/// Options of `ixbench timeseries`: the shared ones, the head's, and the time series' own
/// (`--rows-per-commit`, `--threads`, its options under its heading).
pub type TsArgs = WorkloadCommandArgs;

/// Run `ixbench timeseries`, as `ixbench run --workload timeseries` runs it.
pub fn run(args: &TsArgs, argv: Vec<String>, interrupt: &AtomicBool) -> Result<u8> {
    workload_command::run("timeseries", args, argv, interrupt)
}
