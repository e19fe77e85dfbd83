//! `ixbench run`: run a workload from the registry ([`crate::workload::registry`],
//! `--workload`, the insert benchmark by default), as its entry says: a step plan
//! ([`crate::workload::runner::Runner::Steps`]: the workload's function builds the plan from
//! its options, [`crate::step::plan_run`] runs it step by step in a session), or a runner of
//! the workload's own ([`crate::workload::runner::Runner::Own`]) on the shared transaction
//! head ([`crate::step::txn_phase::TxnHost`]). This file parses the options, picks the
//! workload and hands them over: it names no workload. An option under another workload's
//! help heading is a usage error (exit status 2).

use std::sync::atomic::AtomicBool;

use anyhow::{bail, Result};

#[allow(unused_imports)]
use crate::options::cli::*;
use crate::step::plan_run::{self, PlanArgs, StepsIn};
use crate::step::txn_phase::{TxnHead, TxnHost, TxnOptions};
use crate::workload::registry::{self, WorkloadOptions};
use crate::workload::runner::{RunIn, Runner};
use clap::Args;

/// Run the workload `--workload` names (the insert benchmark by default) as `args` says.
/// Returns the exit status: 0, or [`EXIT_CHECKS_FAILED`], or [`EXIT_INTERRUPTED`], or 2 for an
/// option of another workload; errors are returned for the caller to print.
pub fn run(args: &RunArgs, argv: Vec<String>, interrupt: &AtomicBool) -> Result<u8> {
    let Some(entry) = registry::find(&args.workload) else {
        bail!("unknown workload {:?}", args.workload);
    };
    if let Some(line) = foreign_option(&entry, &argv) {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "ixbench: error: {line} (see 'ixbench run --help')"
        );
        return Ok(EXIT_USAGE);
    }
    match entry.runner {
        Runner::Steps(plan) => {
            let input = StepsIn {
                entry: &entry,
                plan,
                common: &args.common,
                opts: &args.plan,
                time: args.time,
                interval: args.interval,
                max_retries: args.max_retries,
                arrivals: args.arrivals,
                stall_timeout: args.stall_timeout,
            };
            plan_run::run(&input, argv, interrupt)
        }
        Runner::Own(run) => {
            // The transaction workloads share run's --time, --interval, --arrivals,
            // --max-retries and --stall-timeout, and their own --threads and --rate.
            let head = TxnHead {
                threads: args.txn.threads.unwrap_or(1),
                time: args.time.unwrap_or(DEFAULT_TXN_SECONDS),
                rate: args.txn.rate,
                arrivals: args.arrivals,
                interval: args.interval,
                max_retries: args.max_retries,
                stall_timeout: args.stall_timeout,
            };
            let mut host = TxnHost::new("run", &args.common, head, argv, interrupt)?;
            let input = RunIn {
                name: entry.name,
                opts: &args.workloads,
                rows_per_commit: args.plan.rows_per_commit,
            };
            run(&input, &mut host)
        }
    }
}

/// Exit status of a usage error (as clap's).
const EXIT_USAGE: u8 = 2;

/// Seconds of a transaction workload's transactions without `--time`.
const DEFAULT_TXN_SECONDS: f64 = 10.0;

/// The options of `ixbench run`: (long, help heading), for the workload-option check.
fn run_options() -> Vec<(String, String)> {
    let cmd = RunArgs::augment_args(clap::Command::new("run"));
    cmd.get_arguments()
        .filter_map(|a| {
            Some((
                a.get_long()?.to_string(),
                a.get_help_heading().unwrap_or_default().to_string(),
            ))
        })
        .collect()
}

/// The usage error for an option of another workload's group given with `entry`, if any:
/// the options given are read from the command line after `run` (a `--size` preset's flags
/// are not there, and are the workload's own).
fn foreign_option(entry: &registry::Entry, argv: &[String]) -> Option<String> {
    let after = argv.iter().position(|a| a == "run").map_or(0, |i| i + 1);
    let given: Vec<String> = argv
        .iter()
        .skip(after)
        .take_while(|a| a.as_str() != "--")
        .filter_map(|a| a.strip_prefix("--"))
        .map(|a| a.split('=').next().unwrap_or(a).to_string())
        .collect();
    let options = run_options();
    let (long, heading) = registry::foreign_option(entry, &options, &given)?;
    Some(format!(
        "--{long} does not apply to --workload {}: it is one of the options under \"{heading}\"",
        entry.name
    ))
}

/// Options of `ixbench run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Database and results directory.
    #[command(flatten)]
    pub common: CommonArgs,

    /// The workload: iibench (the insert
    /// benchmark, the default), oltp_read_write, oltp_read_only, oltp_write_only,
    /// oltp_insert, oltp_update_index, oltp_update_non_index, oltp_point_select, timeseries.
    /// Each takes the options under its own heading below.
    #[arg(long, default_value = registry::DEFAULT, value_parser = registry::parse_arg)]
    pub workload: String,

    /// The step plan's options (the insert benchmark's, under its heading).
    #[command(flatten)]
    pub plan: PlanArgs,

    /// Seconds between two per-interval lines.
    #[arg(long, default_value_t = 1.0, value_parser = interval_seconds)]
    pub interval: f64,

    /// Retries of a transient error (busy, deadlock) before the step fails.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(0..=MAX_RETRIES as i64))]
    pub max_retries: u32,

    /// Intended starts of the rate-limited writers: a fixed grid (`uniform`) or Poisson
    /// arrivals with the same mean rate (seeded from --seed). Each writer has its own phase.
    #[arg(long, value_enum, default_value_t = crate::measure::schedule::Arrivals::Uniform)]
    pub arrivals: crate::measure::schedule::Arrivals,

    /// Fail a step when none of its operations completed for this many seconds (interval
    /// lines say `STALLED` from one second on).
    #[arg(long, default_value_t = 60.0)]
    pub stall_timeout: f64,

    /// Bound l.i1, l.i2 and the read+write steps by this many seconds each instead of by rows
    /// (l.i1/l.i2 insert as fast as possible until then; read+write steps end then even when
    /// their writers are behind). l.i0 still loads --rows. With a transaction workload: the
    /// seconds of its transactions (default 10).
    #[arg(long, value_parser = query_seconds)]
    pub time: Option<f64>,
    /// The options every transaction workload takes.
    #[command(flatten)]
    pub txn: TxnOptions,

    /// Each workload's own options (under its own heading).
    #[command(flatten)]
    pub workloads: WorkloadOptions,
}
