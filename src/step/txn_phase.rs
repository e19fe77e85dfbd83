//! The head every transaction workload's run shares (the OLTP mixes, the time series, and the
//! next one): its options (clients, time, rate, arrivals, interval, retries, stall timeout),
//! their checks, the session, and the measured phase itself: the workload's clients on
//! [`crate::step::transactions`], one interval line per interval printed and appended to
//! `intervals.ndjson`, the cluster's nodes watched on Galera.
//!
//! `ixbench run --workload NAME` (and `ixbench oltp`, `ixbench timeseries` under their old
//! names, which share the head's options as [`TxnHeadArgs`]) build a [`TxnHead`] from their
//! options and hand a [`TxnHost`] to the workload's function (the registry entry's
//! [`crate::workload::runner::Runner::Own`]), which runs it on the one transaction runner
//! (`workload::txn_runner`): the host is the [`Host`] that runner sees, so it imports nothing
//! above the workloads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{anyhow, Result};

use crate::export::Table;
use crate::measure::interval::IntervalDetail;
use crate::measure::interval::IntervalLine;
use crate::measure::meter::TxnTotals;
use crate::measure::reporter::{run_workers_detailed, ReportOptions};
use crate::measure::schedule::Arrivals;
use crate::measure::sys::ProcSnapshot;
use crate::measure::txn::TxnLine;
use crate::options::cli::CommonArgs;
use crate::session::Session;
use crate::step::transactions::{self, TxnRun};
pub use crate::workload::runner::TxnHead;
use crate::workload::runner::{Common, Host, Open, Phase, WatchedNodes};
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

/// The head's options `ixbench oltp` and `ixbench timeseries` share under their own names (each
/// with its own `--threads`; `ixbench run` has these among its shared options instead).
#[derive(Debug, Clone, clap::Args)]
pub struct TxnHeadArgs {
    /// Seconds to run the transactions.
    #[arg(long, default_value_t = 10.0)]
    pub time: f64,

    /// Offered transactions per second of all clients together (open loop: latency counts
    /// from each transaction's intended start); without it, each client runs as fast as it can
    /// (closed loop, as sysbench without --rate).
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
}

impl TxnHeadArgs {
    /// The head of `threads` clients run as these options say.
    pub fn head(&self, threads: u64) -> TxnHead {
        TxnHead {
            threads,
            time: self.time,
            rate: self.rate,
            arrivals: self.arrivals,
            interval: self.interval,
            max_retries: self.max_retries,
            stall_timeout: self.stall_timeout,
        }
    }
}

/// The command's side of a workload's runner: its options, the session once open.
pub struct TxnHost<'a> {
    command: &'a str,
    args: &'a CommonArgs,
    common: Common,
    head: TxnHead,
    argv: Vec<String>,
    interrupt: &'a AtomicBool,
    session: Option<Session>,
}

impl<'a> TxnHost<'a> {
    /// The host of a workload's runner under `command` (`run`, `oltp`, `timeseries`): a
    /// sharded target (which only `ixbench run`'s steps take) is refused here.
    pub fn new(
        command: &'a str,
        args: &'a CommonArgs,
        head: TxnHead,
        argv: Vec<String>,
        interrupt: &'a AtomicBool,
    ) -> Result<Self> {
        crate::cluster_target::refuse_sharded(&args.target, command)?;
        Ok(TxnHost {
            command,
            args,
            common: Common {
                target: args.target.clone(),
                engine: args.engine.clone(),
                seed: args.seed,
                table_prefix: args.table_prefix.clone(),
                data_length: args.data_length.clone(),
            },
            head,
            argv,
            interrupt,
            session: None,
        })
    }

    fn open_session(&mut self) -> Result<&mut Session> {
        self.session
            .as_mut()
            .ok_or_else(|| anyhow!("the workload's runner used the session before opening it"))
    }
}

impl Host for TxnHost<'_> {
    fn command(&self) -> &str {
        self.command
    }

    fn common(&self) -> &Common {
        &self.common
    }

    fn head(&self) -> &TxnHead {
        &self.head
    }

    fn interrupt(&self) -> &AtomicBool {
        self.interrupt
    }

    fn check_head(&self, unit: &str) -> Result<()> {
        let h = &self.head;
        crate::options::args::check_timed_run(h.time, h.interval, h.stall_timeout, h.rate, unit)
    }

    fn check_common(&self, tables: &[String]) -> Result<()> {
        crate::session::check_common(self.args, tables)
    }

    fn open(&mut self, config: serde_json::Value) -> Result<()> {
        let argv = std::mem::take(&mut self.argv);
        self.session = Some(Session::open(self.args, argv, config)?);
        Ok(())
    }

    fn session(&mut self) -> Result<Open<'_>> {
        let interrupt = self.interrupt;
        let s = self.open_session()?;
        Ok(Open {
            target: s.target.as_ref(),
            conn: s.conn.as_mut(),
            store: &mut s.store,
            result: &mut s.result,
            interrupt,
        })
    }

    fn measure(
        &mut self,
        step: &str,
        w: &dyn Workload,
        watch: bool,
        each: &mut dyn FnMut(&IntervalLine, &IntervalDetail, &TxnTotals),
    ) -> Result<Phase> {
        let run = txn_run(&self.head, self.common.seed);
        let interrupt = self.interrupt;
        let head = &self.head;
        let s = self
            .session
            .as_mut()
            .ok_or_else(|| anyhow!("the workload's runner measured before opening the session"))?;
        let target = s.target.as_ref();
        let store = &mut s.store;
        let mut body = || {
            let cpu0 = ProcSnapshot::now();
            let mut cum = TxnTotals::default();
            let m = run_workers_detailed(
                step,
                ReportOptions {
                    interval: Duration::from_secs_f64(head.interval),
                    stall_timeout: Duration::from_secs_f64(head.stall_timeout),
                },
                interrupt,
                transactions::workers(w, target, &run),
                &mut |l, d| {
                    cum.add(&d.totals.txn);
                    each(l, d, &cum);
                    let tl = TxnLine::compute(step, l.n, run.threads, d, &cum, l.i_sec, l.t_sec);
                    crate::outln!("{}", tl.format());
                    store.append_json(&tl)
                },
            );
            (m, cum, ProcSnapshot::now().since(&cpu0))
        };
        let moved = || run.reconnects.load(Ordering::SeqCst);
        let ((m, line_sum, cpu), watched) =
            match s.cluster.as_ref().filter(|c| watch && c.is_galera()) {
                Some(c) => {
                    let (v, w) = c.watch(interrupt, &moved, body)?;
                    let watched = WatchedNodes {
                        lines: crate::cluster_target::node_lines(&w.nodes),
                        stop_error: w.stop_error(),
                        loss_warning: w.loss_warning(),
                        nodes: w.nodes,
                    };
                    (v, Some(watched))
                }
                None => (body(), None),
            };
        Ok(Phase {
            m,
            line_sum,
            cpu,
            reconnects: run.reconnects.load(Ordering::SeqCst),
            in_doubt: run.in_doubt.load(Ordering::SeqCst),
            watched,
        })
    }

    fn close(
        &mut self,
        outcome: Result<()>,
        checks_ok: bool,
        mut tables: Vec<(&str, Table)>,
    ) -> Result<u8> {
        let Some(s) = self.session.take() else {
            return outcome.map(|()| 0);
        };
        if let Some(nodes) = crate::cluster_target::nodes_table(&s.result) {
            tables.push(("nodes", nodes));
        }
        s.close(outcome, self.interrupt, checks_ok, &tables)
    }
}

/// How the clients run as `head` says, their generators seeded from `seed`.
pub fn txn_run(head: &TxnHead, seed: u64) -> TxnRun {
    TxnRun {
        threads: head.threads as usize,
        duration: Duration::from_secs_f64(head.time),
        rate: head.rate,
        arrivals: head.arrivals,
        max_retries: head.max_retries,
        seed,
        reconnects: Default::default(),
        in_doubt: Default::default(),
    }
}
