//! A workload's command of its own (`ixbench oltp`, `ixbench timeseries`: the OLTP mixes and
//! the time series under the names they had before `ixbench run --workload`), for the command
//! files that name no workload: the command's options are the options every database command
//! shares ([`CommonArgs`]), the workload's own listed before the head's (`--workload`,
//! `--threads`, ...), the transaction head's ([`TxnHeadArgs`]) and the workload's options under
//! its heading, in that order (the order of its `--help`); the workload's part is added and
//! read by its registry row ([`registry::Command`], found by the command's name), and it runs
//! on the shared transaction head ([`TxnHost`]).

use std::sync::atomic::AtomicBool;

use anyhow::{anyhow, Result};
use clap::{ArgMatches, Args, FromArgMatches};

use crate::options::cli::CommonArgs;
use crate::step::txn_phase::{TxnHeadArgs, TxnHost};
use crate::workload::registry;

/// The options of a workload's command of its own (clap's `Args`: a subcommand's options, added
/// for the workload whose command has the subcommand's name).
#[derive(Debug, Clone)]
pub struct WorkloadCommandArgs {
    /// Database and results directory.
    pub common: CommonArgs,
    /// Seconds, rate, arrivals, interval, retries, stall timeout.
    pub head: TxnHeadArgs,
    /// The command line as parsed: the workload reads its own options from it.
    pub own: ArgMatches,
}

/// The registered command `name`.
fn registered(name: &str) -> Result<registry::Command> {
    registry::command(name).ok_or_else(|| anyhow!("no workload has the command {name:?}"))
}

impl FromArgMatches for WorkloadCommandArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(WorkloadCommandArgs {
            common: CommonArgs::from_arg_matches(m)?,
            head: TxnHeadArgs::from_arg_matches(m)?,
            own: m.clone(),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for WorkloadCommandArgs {
    /// The options of the subcommand `cmd` (named as the workload's command).
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let name = cmd.get_name().to_string();
        let own = registered(&name).unwrap_or_else(|e| panic!("{e}"));
        let cmd = CommonArgs::augment_args(cmd);
        let cmd = (own.args)(cmd);
        let cmd = TxnHeadArgs::augment_args(cmd);
        (own.options)(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// Run the workload's command `name` with `args` on the shared transaction head. Returns the
/// exit status; errors are returned for the caller to print.
pub fn run(
    name: &str,
    args: &WorkloadCommandArgs,
    argv: Vec<String>,
    interrupt: &AtomicBool,
) -> Result<u8> {
    let own = registered(name)?;
    let threads = (own.threads)(&args.own);
    let mut host = TxnHost::new(
        own.name,
        &args.common,
        args.head.head(threads),
        argv,
        interrupt,
    )?;
    (own.run)(&args.own, &mut host)
}
