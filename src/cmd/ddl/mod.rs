//! `ixbench ddl`: what a schema change does to a live workload (seed 003). Loads the workload's
//! tables (or reuses them), measures the load's ceiling with a short closed-loop probe, then,
//! per knob point, runs the load at a fixed offered rate (default 70% of the probe), starts the
//! DDL in its own session after a baseline window, keeps the load through the build and a
//! recovery window after it, and reports TPS, QPS and latency before, during, in the catch-up
//! and after, the worst interval, the backlog of intended starts (its peak and when it
//! drained), the time to recover, errors and retries, the DDL's time, progress and lock waits,
//! and checks the result. One row per knob point, baseline first, like seed 003's tables.
//!
//! The comparison is a verdict on the DDL only when the load kept its offered rate without it
//! (the baseline) and the DDL lasted long enough for the timeline's intervals; otherwise the
//! output says so first, loudly, and the tables and `compare` treat it like a missed rate.
//!
//! The command in four parts, one after the other: [`plan`] (the arguments parsed and checked,
//! the request, the knob points and the methods, before anything connects), [`prepare`] (the
//! dialect's statements, the methods' programs, the tables, what an earlier run left, the
//! probe and the offered rate), [`points`] (each point: its knobs, the load with the DDL, the
//! timeline and its windows) and [`finish`] (each point's clean-up and checks, then the
//! results' tables, the verdict and the exit status).

mod finish;
mod plan;
mod points;
mod prepare;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;

use crate::dbms::ddl::DdlRequest;
#[allow(unused_imports)]
use crate::options::cli::*;
use crate::session::Session;
use crate::step::schema_tools::{Methods, RowCounting};
use crate::step::sweep::KnobAxis;
use crate::workload::registry::{self, DdlLoad};
use clap::Args;

pub use plan::{choose_interval, index_specs};

/// Longest wait for a lock of ixbench's clean-up statements (dropping an INVALID index, the
/// index just built), seconds: a long transaction must not hang the run.
const CLEANUP_LOCK_WAIT: u32 = 10;

/// Run `ixbench ddl`.
pub fn run(args: &DdlArgs, argv: Vec<String>, interrupt: &AtomicBool) -> Result<u8> {
    let plan = plan::plan(args)?;
    let config = plan.config(args);
    plan.show_progress(args);
    let mut s = Session::open(&args.common, argv, config)?;
    let mut d = Driver {
        args,
        axes: plan.axes,
        req: plan.req,
        workload: plan.workload,
        load: plan.load,
        interrupt,
        quiet_timeout: plan.quiet_timeout,
        stopped_for_loss: Default::default(),
        methods: plan.methods,
        last_ddl_secs: Default::default(),
    };
    let outcome = d.go(&mut s);
    d.finish(s, outcome)
}

struct Driver<'a> {
    args: &'a DdlArgs,
    axes: Vec<KnobAxis>,
    req: DdlRequest,
    /// The workload around the schema change, and its load's options.
    workload: registry::Entry,
    load: DdlLoad,
    interrupt: &'a AtomicBool,
    quiet_timeout: Duration,
    /// A Galera node left during a point and --on-node-loss is stop.
    stopped_for_loss: std::cell::Cell<bool>,
    /// How the change is made (`--method`): each runs every knob point.
    methods: Methods,
    /// The DDL's seconds at the last point where it ran (to choose the next interval).
    last_ddl_secs: std::cell::Cell<Option<f64>>,
}

impl Driver<'_> {
    fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::SeqCst)
    }

    /// The run: the DDL's statements and the methods, the tables and the offered rate, then
    /// every point.
    fn go(&mut self, s: &mut Session) -> Result<()> {
        let ddl = self.prepare_ddl(s)?;
        let workload = self.workload.ddl_workload(&self.load, s.target.as_ref())?;
        // Its committed rows are counted: the tables must hold them after every change.
        let workload = RowCounting::new(workload.as_ref());
        let mut result = self.prepare_tables(s, &ddl, &workload)?;
        if self.interrupted() {
            return Ok(());
        }
        let rate = self.offered_rate(s, &workload, &mut result)?;
        s.result.ddl = Some(result.clone());
        s.store.write_run(&s.result)?;
        self.run_points(s, &ddl, &workload, rate, &mut result)
    }
}

/// Seed 003's test plans: which workload runs and which column the DDL works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DdlPlanArg {
    /// oltp_read_write while the index is built on `c`, a column it updates.
    WritesIndexedColumn,
    /// oltp_read_only while the index is built on `c`: the load only reads.
    ReadOnly,
    /// oltp_read_write while the index is built on `pad`, a column its updates do not touch.
    UnrelatedColumn,
}

impl DdlPlanArg {
    /// The plan's name.
    pub fn name(self) -> &'static str {
        match self {
            DdlPlanArg::WritesIndexedColumn => "writes-indexed-column",
            DdlPlanArg::ReadOnly => "read-only",
            DdlPlanArg::UnrelatedColumn => "unrelated-column",
        }
    }

    /// The workload (transaction mix) and the column of the plan.
    pub fn workload_and_column(self) -> (&'static str, &'static str) {
        match self {
            DdlPlanArg::WritesIndexedColumn => ("oltp_read_write", "c"),
            DdlPlanArg::ReadOnly => ("oltp_read_only", "c"),
            DdlPlanArg::UnrelatedColumn => ("oltp_read_write", "pad"),
        }
    }
}

/// Largest `--rate` of `ixbench ddl`, transactions per second.
pub const MAX_DDL_RATE: f64 = 10_000_000.0;

fn ddl_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= MAX_DDL_RATE => Ok(v),
        _ => Err(format!(
            "must be more than 0 and at most {MAX_DDL_RATE} transactions per second"
        )),
    }
}

fn fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err("must be more than 0 and at most 1".into()),
    }
}

fn window_seconds(s: &str) -> Result<f64, String> {
    seconds_in(s, 0.0, 86_400.0)
}

/// Options of `ixbench ddl`.
#[derive(Debug, Clone, Args)]
pub struct DdlArgs {
    /// Database and results directory.
    #[command(flatten)]
    pub common: CommonArgs,

    /// Seed 003's test plan: the workload writes the indexed column, only reads, or the indexed
    /// column is unrelated to its writes.
    #[arg(long, value_enum, default_value_t = DdlPlanArg::WritesIndexedColumn)]
    pub plan: DdlPlanArg,

    /// The workload instead of the plan's mix: an OLTP mix (oltp_read_write, oltp_read_only,
    /// oltp_write_only, oltp_update_non_index, ...), iibench (l.i1's load: inserts with deletes
    /// of the oldest rows; the index goes on pi1.customerid) or timeseries (ingest with
    /// retention; the index goes on ts_metrics.value).
    #[arg(long)]
    pub workload: Option<String>,

    /// The schema change.
    #[arg(long, value_enum, default_value_t = crate::dbms::ddl::DdlKind::AddIndex)]
    pub ddl: crate::dbms::ddl::DdlKind,

    /// Online (CREATE INDEX CONCURRENTLY, LOCK=NONE, INSTANT) or blocking (plain CREATE INDEX,
    /// LOCK=SHARED, a table copy). An engine that cannot run it online runs it blocking and
    /// says so.
    #[arg(long, value_enum, default_value_t = crate::dbms::ddl::LockChoice::Online)]
    pub lock: crate::dbms::ddl::LockChoice,

    /// Columns to index instead of the plan's: one index per column, all in one statement where
    /// the engine can (`c,pad`); `a+b` is one index on two columns.
    #[arg(long, value_delimiter = ',')]
    pub columns: Option<Vec<String>>,

    /// Build UNIQUE indexes (on duplicate values the DDL fails: a fault to test).
    #[arg(long)]
    pub unique: bool,

    /// Tables of the workload (sbtest1..N); the DDL works on sbtest1.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub tables: u32,

    /// Rows per table.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000_000))]
    pub table_size: u32,

    /// Use the tables of an earlier load instead of loading new ones.
    #[arg(long)]
    pub reuse: bool,

    /// With several --method: load the tables again before each method after the first, so
    /// each starts from a freshly loaded table (by default each gets the table the previous
    /// one left, brought back to the same rows and indexes).
    #[arg(long, conflicts_with = "reuse")]
    pub reload: bool,

    /// Distribution of the workload's ids: uniform (seed 003 ran sysbench with
    /// --rand-type=uniform) or sysbench's default special.
    #[arg(long, value_enum, default_value_t = crate::workload::registry::RandType::Uniform)]
    pub rand_type: crate::workload::registry::RandType,

    /// Client threads of the load, each with its own connection.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: u64,

    /// Offered rate, transactions per second (all threads). Default: --rate-fraction of the
    /// TPS a closed-loop probe measured.
    #[arg(long, value_parser = ddl_rate)]
    pub rate: Option<f64>,

    /// The share of the probe's TPS offered when --rate is not given.
    #[arg(long, default_value_t = 0.7, value_parser = fraction)]
    pub rate_fraction: f64,

    /// Seconds of the closed-loop probe.
    #[arg(long, default_value_t = 10.0, value_parser = window_seconds)]
    pub probe_seconds: f64,

    /// Seconds of load before the DDL starts (the baseline window).
    #[arg(long, default_value_t = 30.0, value_parser = window_seconds)]
    pub baseline_seconds: f64,

    /// Seconds of load after the DDL ends (the recovery window).
    #[arg(long, default_value_t = 30.0, value_parser = window_seconds)]
    pub recovery_seconds: f64,

    /// Seconds the load must stay within the baseline's band to count as recovered (at most
    /// --recovery-seconds). Default: to the end of the run; a return that does not hold is a
    /// relapse either way.
    #[arg(long, value_parser = window_seconds)]
    pub recovery_hold: Option<f64>,

    /// Seconds between two timeline lines (sub-second allowed). Default: chosen per point: the
    /// shortest of 0.1, 0.2, 0.25, 0.5, 1 s in which the offered rate completes 20
    /// transactions, or, after a point whose DDL took longer, a tenth of that DDL's time (at
    /// most 1 s).
    #[arg(long, value_parser = interval_seconds)]
    pub interval: Option<f64>,

    /// Cancel the DDL after this many seconds.
    #[arg(long, default_value_t = 3600.0, value_parser = window_seconds)]
    pub ddl_timeout: f64,

    /// Run a failed DDL again this many times when its error is transient (lock wait timeout,
    /// deadlock, an online row log that overflowed).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub ddl_retries: u32,

    /// A knob and the values to sweep, NAME=V1,V2,... (repeatable: the full grid; session knobs
    /// on the DDL's session, server-wide ones by restarting a server ixbench started).
    #[arg(long = "knob", value_name = "NAME=V1,V2")]
    pub knobs: Vec<String>,

    /// On a failed DDL, a failed transaction of the load or a refused knob: stop (exit status
    /// 1), or record it and go on (the point is FAILED: exit status 4 unless --pass-on failed).
    #[arg(long, value_enum, default_value_t = OnError::Stop)]
    pub on_error: OnError,

    /// Which states exit 0 on purpose (docs/ddl.md, "States").
    #[command(flatten)]
    pub pass: crate::results::verdict::PassArgs,

    /// Exit 3 when a point is a REGRESSION (not recovered, relapsed, or a worse steady state
    /// after the DDL); by default a regression exits 0, since a DDL normally dips its load.
    #[arg(long)]
    pub fail_on_regression: bool,

    /// Retries of a load transaction after a transient error (deadlock, busy).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(0..=MAX_RETRIES as i64))]
    pub max_retries: u32,

    /// Intended starts of the load: a fixed grid or Poisson arrivals (seeded from --seed).
    #[arg(long, value_enum, default_value_t = crate::measure::schedule::Arrivals::Uniform)]
    pub arrivals: crate::measure::schedule::Arrivals,

    /// How the change is made; several (comma-separated) run one after the other on the same
    /// table under the same load, and a comparison table follows: native (the engine's
    /// statement, per --lock), pt-osc (pt-online-schema-change, MySQL/MariaDB), pg-repack and
    /// pg-repack-indexes (pg_repack, and --only-indexes; PostgreSQL, --ddl rebuild),
    /// vacuum-full, cluster, reindex-concurrently (PostgreSQL's rebuild statements), external
    /// (--ddl-command).
    #[arg(long, value_delimiter = ',', default_value = "native")]
    pub method: Vec<String>,

    /// Extra arguments of a method's program, METHOD=ARGS (repeatable), e.g.
    /// pt-osc='--chunk-size 500 --chunk-time 0 --sleep 0.05' (chunking, throttling).
    #[arg(long = "method-opt", value_name = "METHOD=ARGS")]
    pub method_opt: Vec<String>,

    /// The command --method external runs as the change (through /bin/sh), e.g. gh-ost or
    /// pg_squeeze. It finds the target in IXBENCH_KIND, IXBENCH_HOST, IXBENCH_PORT,
    /// IXBENCH_SOCKET, IXBENCH_USER, IXBENCH_PASSWORD, IXBENCH_DB, IXBENCH_TABLE, IXBENCH_DDL,
    /// IXBENCH_ALTER (MySQL: the change as an ALTER TABLE clause), IXBENCH_SQL (the engine's own
    /// statements), and in PG*/MYSQL_* for psql and mariadb.
    #[arg(long, value_name = "COMMAND")]
    pub ddl_command: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_from_columns() {
        let v = index_specs("sbtest1", &["c".into(), "k+pad".into()], false).unwrap();
        assert_eq!(v[0].name, "sbtest1_c_ixb");
        assert_eq!(v[1].columns, ["k", "pad"]);
        assert_eq!(v[1].name, "sbtest1_k_pad_ixb");
        assert!(index_specs("sbtest1", &["c".into(), "c".into()], false).is_err());
        assert!(index_specs("sbtest1", &["c;x".into()], false).is_err());
        assert!(index_specs("sbtest1", &["+".into()], false).is_err());
        assert!(index_specs("sbtest1", &["c".into()], true).unwrap()[0].unique);
    }
}
