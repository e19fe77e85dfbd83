//! The head every transaction workload's run shares (the OLTP mixes, the time series, and the
//! next one): its options (clients, time, rate, arrivals, interval, retries, stall timeout),
//! their checks, and the measured phase itself: the workload's clients on
//! [`crate::step::transactions`], one interval line per interval printed and appended to
//! `intervals.ndjson`, and the check that the lines add up to the totals.
//!
//! `ixbench oltp`, `ixbench timeseries` and `ixbench run --workload NAME` build a [`TxnHead`]
//! from their options and hand it to the workload's runner ([`crate::step::oltp_run`],
//! [`crate::step::timeseries_run`]).

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Result;

use crate::dbms::Dbms;
use crate::measure::interval::IntervalLine;
use crate::measure::meter::TxnTotals;
use crate::measure::reporter::{run_workers_detailed, IntervalDetail, Measured, ReportOptions};
use crate::measure::schedule::Arrivals;
use crate::measure::txn::TxnLine;
use crate::results::store::Store;
use crate::results::Check;
use crate::step::transactions::{self, TxnRun};
use crate::workload::Workload;

/// The options of `ixbench run` that every transaction workload takes (the others it shares
/// with the insert benchmark: `--time`, `--interval`, `--arrivals`, `--max-retries`,
/// `--stall-timeout`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = crate::workload::registry::H_TXN)]
pub struct TxnOptions {
    /// Clients (connections) of a transaction workload. Default: 1.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,

    /// Offered transactions (commits) per second of all clients together (open loop: latency
    /// counts from each transaction's intended start); default: closed loop.
    #[arg(long)]
    pub rate: Option<f64>,
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

/// The measured phase: what the reporter measured and the sum of the interval lines.
pub struct Phase {
    /// The reporter's figures (totals, histograms, errors).
    pub m: Measured,
    /// The interval lines' transaction counts added up.
    pub line_sum: TxnTotals,
}

impl TxnHead {
    /// Check the options against each other (`unit`: what the rate counts).
    pub fn check(&self, unit: &str) -> Result<()> {
        crate::args::check_timed_run(
            self.time,
            self.interval,
            self.stall_timeout,
            self.rate,
            unit,
        )
    }

    /// How the clients run, their generators seeded from `seed`.
    pub fn txn_run(&self, seed: u64) -> TxnRun {
        TxnRun {
            threads: self.threads as usize,
            duration: Duration::from_secs_f64(self.time),
            rate: self.rate,
            arrivals: self.arrivals,
            max_retries: self.max_retries,
            seed,
            reconnects: Default::default(),
            in_doubt: Default::default(),
        }
    }

    /// Run `w`'s clients as `run` says for the step `step`: each interval's line printed and
    /// appended to `store`'s `intervals.ndjson`; `each` sees every line with the totals so far
    /// (before it is printed).
    #[allow(clippy::too_many_arguments)]
    pub fn measure(
        &self,
        step: &str,
        run: &TxnRun,
        w: &dyn Workload,
        target: &dyn Dbms,
        store: &mut Store,
        interrupt: &AtomicBool,
        each: &mut dyn FnMut(&IntervalLine, &IntervalDetail, &TxnTotals),
    ) -> Phase {
        let mut cum = TxnTotals::default();
        let m = run_workers_detailed(
            step,
            ReportOptions {
                interval: Duration::from_secs_f64(self.interval),
                stall_timeout: Duration::from_secs_f64(self.stall_timeout),
            },
            interrupt,
            transactions::workers(w, target, run),
            &mut |l, d| {
                cum.add(&d.totals.txn);
                each(l, d, &cum);
                let tl = TxnLine::compute(step, l.n, run.threads, d, &cum, l.i_sec, l.t_sec);
                crate::outln!("{}", tl.format());
                store.append_json(&tl)
            },
        );
        Phase { m, line_sum: cum }
    }
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
