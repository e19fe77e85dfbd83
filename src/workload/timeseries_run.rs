//! The time series as a transaction workload of the one runner
//! ([`crate::workload::txn_runner`]), for `ixbench timeseries` and `ixbench run --workload
//! timeseries` alike (see [`crate::workload::timeseries`]): the runner loads the retention
//! window and inserts the latest interval across all devices for a time (closed loop, or open
//! loop at a rate) with retention by DROP PARTITION or DELETE, with the same interval lines,
//! histograms, `run.json` and row self-check as every transaction workload (rows in the table =
//! rows before + inserted - removed by retention, exactly). What differs is declared here: its
//! options' checks and config, its variants (`--compare-partitioning` runs it twice with the
//! same rows, range-partitioned then unpartitioned, printed side by side), and its figures
//! after the inserts: the cost per row, the retention and partition checks, then the queries
//! (on the one measuring loop, [`crate::measure::drive`]) and their plans (partition pruning).

use anyhow::{bail, Result};
use clap::{Args, FromArgMatches};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::dbms::{Conn, Dbms, Stmt};
use crate::export::Table;
use crate::format as fmt;
use crate::measure::drive::{drive, Counted, Done, Next, Operation, Pacing};
use crate::measure::histogram::{new_hist, summarize, LatencySummary};
use crate::measure::meter::{Meter, OpKind, TxnTotals};
use crate::measure::reporter::{run_workers, ReportOptions, Signals, Worker};
use crate::measure::resources::WindowCost;
use crate::results::{Check, RunResult};
use crate::workload::registry::Command;
use crate::workload::runner::{Host, Open, RunIn, TxnHead};
use crate::workload::timeseries::{
    Partitioning, QueryArgs, QueryKind, Retention, RetentionEvent, TimeSeries, TsConfig, TsOptions,
    AHEAD, TABLE,
};
pub use crate::workload::txn_runner::GrowthPoint;
use crate::workload::txn_runner::{self, End, Figures, Loaded, Record, TxnWorkload, Variant};

/// The time-series workload in the workload registry (`ixbench timeseries` is `ixbench run
/// --workload timeseries`).
pub fn entry() -> crate::workload::registry::Entry {
    use crate::workload::registry::{Entry, Runner, H_TXN};
    Entry {
        name: "timeseries",
        rank: crate::workload::timeseries::RANK,
        aliases: &["time-series"],
        about:
            "(time, device, metric, value) ingest with retention, range partitions or none, queries",
        runner: Runner::Own(run_entry),
        headings: &[H_TXN, crate::workload::timeseries::HEADING],
        also_takes: &["rows-per-commit"],
        presets: crate::workload::timeseries::presets,
        notes: |_| Vec::new(),
        ddl_target: crate::workload::registry::DdlTarget {
            table: TABLE,
            column: "value",
            pk: "time",
        },
        ddl_tables: |_| vec![TABLE.to_string()],
        ddl_workload: |_, l, dbms| {
            let cfg = TsConfig::for_ddl(l.table_size, l.threads);
            cfg.validate(dbms.kind(), l.threads)?;
            Ok(Box::new(TimeSeries::new(cfg, dbms, l.seed)?))
        },
        indexes: || {
            ["metric", "device"]
                .into_iter()
                .map(|w| {
                    let first = if w == "metric" {
                        "metric_id"
                    } else {
                        "device_id"
                    };
                    (crate::workload::timeseries::index_name(w), vec![first.to_string(), "time".to_string()])
                })
                .collect()
        },
        lab: None,
    }
}

/// Most clients of the time series (`ixbench timeseries --threads` takes no more).
pub const MAX_THREADS: u64 = 256;

/// What the runner needs besides the host: the time series' own options.
pub struct TsInput<'a> {
    /// Rows per INSERT transaction.
    pub rows_per_commit: u64,
    /// The workload's own options.
    pub opts: &'a TsOptions,
}

impl TsInput<'_> {
    fn config(&self, p: Partitioning) -> TsConfig {
        self.opts.config(p, self.rows_per_commit)
    }

    fn partitioning(&self, v: usize) -> Partitioning {
        self.opts.variants()[v]
    }
}

impl TxnWorkload for TsInput<'_> {
    type W = TimeSeries;
    type Run = TsRun;
    const UNIT: &'static str = "commits";
    const SERVER_COST: bool = true;
    const KEEPS_FAILED_PHASE: bool = false;
    const REMOVED: &'static str = "removed by retention";

    fn check(&self, host: &dyn Host) -> Result<Vec<String>> {
        let threads = host.head().threads;
        if threads > MAX_THREADS {
            bail!("--threads of the time series: at most {MAX_THREADS}");
        }
        let o = self.opts;
        if host.common().table_prefix != "pi" {
            let who = if host.command() == "timeseries" {
                "ixbench timeseries"
            } else {
                "--workload timeseries"
            };
            bail!("--table-prefix does not apply to {who}: its table is {TABLE}");
        }
        if o.compare_partitioning && o.partitioning != Partitioning::None {
            bail!(
                "--compare-partitioning runs both partitionings itself: leave out --partitioning"
            );
        }
        if o.compare_partitioning && o.retention.is_some_and(|r| r != Retention::None) {
            bail!("--compare-partitioning compares retention by DROP PARTITION (partitioned) with DELETE (unpartitioned), or no retention with --retention none: leave out --retention drop|delete");
        }
        // a cluster's name stands for its nodes' kind (`--target galera`: MariaDB)
        let spec = crate::server::ClusterKind::target_spec(&host.common().target)?;
        if o.hash_partitions > 0 && o.partitioning == Partitioning::None && !o.compare_partitioning
        {
            bail!("--hash-partitions needs --partitioning range");
        }
        for p in o.variants() {
            self.config(p).validate(&spec.kind, threads)?;
        }
        Ok(vec![TABLE.to_string()])
    }

    fn config(&self, _host: &dyn Host) -> Result<Map<String, Value>> {
        let mut m = Map::new();
        let variants: Vec<TsConfig> = self
            .opts
            .variants()
            .iter()
            .map(|p| self.config(*p))
            .collect();
        m.insert("variants".into(), json!(variants));
        m.insert("queries".into(), json!(self.opts.queries));
        m.insert(
            "compare_partitioning".into(),
            json!(self.opts.compare_partitioning),
        );
        Ok(m)
    }

    fn variants(&self) -> Vec<Variant> {
        self.opts
            .variants()
            .iter()
            .map(|p| {
                let name = format!("{p:?}").to_lowercase();
                Variant {
                    load_step: Some(format!("load, partitioning {name}")),
                    run_step: format!("run, partitioning {name}"),
                    step: "timeseries".into(),
                }
            })
            .collect()
    }

    fn workload(&self, v: usize, target: &dyn Dbms, seed: u64) -> Result<TimeSeries> {
        TimeSeries::new(self.config(self.partitioning(v)), target, seed)
    }

    fn load(&self, v: usize, w: &TimeSeries, s: &mut Open<'_>, _: &TxnHead) -> Result<Loaded> {
        let partitioning = self.partitioning(v);
        let cfg = w.config();
        crate::outln!(
            "\n== timeseries, partitioning {}: {} devices x {} metrics, {} ticks/partition, keep {} partitions{}, retention {}, pk {}",
            match partitioning {
                Partitioning::Range => "range(time)",
                Partitioning::None => "none",
            },
            cfg.devices,
            cfg.metrics,
            cfg.ticks_per_partition,
            cfg.keep_partitions,
            if cfg.hash_partitions > 0 {
                format!(" x hash(device) {}", cfg.hash_partitions)
            } else {
                String::new()
            },
            cfg.retention.name(),
            cfg.pk.name()
        );
        crate::outln!(
            "geek code: {}",
            cfg.geek_codes()
                .iter()
                .map(|(i, c)| format!("{i}={c}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let variant = format!("{partitioning:?}").to_lowercase();
        let step = format!("load, partitioning {variant}");
        let seconds = txn_runner::fill(w, s.target, 1, &step)?;
        let rows = cfg.load_rows();
        crate::outln!("loaded {rows} rows in {seconds:.1} s");
        Ok(Loaded {
            rows,
            seconds,
            threads: 1,
            reused: false,
        })
    }

    fn announce(&self, _: &TimeSeries, _: &TxnHead) {}

    fn figures(&self, f: Figures<'_, TimeSeries>) -> Result<TsRun> {
        figures(self, f)
    }
}

/// What one variant (one partitioning) measured.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TsRun {
    /// `range` or `none`.
    pub partitioning: Partitioning,
    /// The options.
    pub options: TsConfig,
    /// Geek code of each index (name, code).
    pub geek_codes: Vec<(String, String)>,
    /// Rows loaded and seconds.
    pub load_rows: u64,
    /// Seconds of the load.
    pub load_seconds: f64,
    /// Seconds of the insert phase.
    pub seconds: f64,
    /// Transactions, statements, rows inserted and removed, latency of the insert phase.
    pub totals: TxnTotals,
    /// Rows inserted per second.
    pub rows_per_sec: f64,
    /// Commit latency.
    pub latency: LatencySummary,
    /// Client and server resources over the insert phase.
    pub cost: WindowCost,
    /// Server CPU microseconds per inserted row (client CPU for an embedded DBMS).
    pub cpu_us_per_row: Option<f64>,
    /// Bytes read from storage by the server per inserted row (/proc read_bytes).
    pub read_bytes_per_row: Option<f64>,
    /// The DBMS's own reads per inserted row (PostgreSQL blks_read, InnoDB data_reads).
    pub dbms_reads_per_row: Option<(String, f64)>,
    /// Retention and partition actions.
    pub retention: Vec<RetentionEvent>,
    /// Range partitions at the end (partitioned).
    pub partitions_at_end: Option<Vec<u64>>,
    /// Rows before and after the insert phase.
    pub rows_before: u64,
    /// Rows after.
    pub rows_after: u64,
    /// Per query: latency, plan, partitions read.
    pub queries: Vec<QueryResult>,
    /// The insert rate as the data set changed, one point per interval line.
    pub growth: Vec<GrowthPoint>,
    /// Self-checks.
    pub checks: Vec<Check>,
}

/// One query's figures.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct QueryResult {
    /// Its name.
    pub query: String,
    /// The SQL (with placeholders).
    pub sql: String,
    /// Latency.
    pub latency: LatencySummary,
    /// Rows returned in all runs.
    pub rows: u64,
    /// The plan of one run (literal values).
    pub plan: String,
    /// Range partitions the plan reads (`None`: unpartitioned).
    pub partitions_read: Option<usize>,
    /// Range partitions that existed.
    pub partitions_existing: Option<usize>,
    /// Hash sub-partitions read per range partition at most (`None`: no sub-partitions).
    pub hash_partitions_read: Option<u64>,
}

/// The registry's runner of the time series (`ixbench run --workload timeseries`).
pub fn run_entry(r: &RunIn, host: &mut dyn Host) -> Result<u8> {
    run(
        &TsInput {
            rows_per_commit: r.rows_per_commit,
            opts: &r.opts.timeseries,
        },
        host,
    )
}

/// `ixbench timeseries`'s own options listed before the transaction head's (its options under
/// its heading are [`TsOptions`]).
#[derive(Debug, Clone, Args)]
pub struct TsCommand {
    /// Rows per INSERT transaction.
    #[arg(long, default_value_t = 100)]
    pub rows_per_commit: u64,

    /// Clients (connections) inserting.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
}

/// `ixbench timeseries`: the time series under its old command; it runs it as `ixbench run
/// --workload timeseries` does.
pub fn command() -> Command {
    Command {
        name: "timeseries",
        presets: crate::workload::timeseries::presets,
        args: TsCommand::augment_args,
        options: TsOptions::augment_args,
        threads: |m| TsCommand::from_arg_matches(m).map_or(1, |a| a.threads),
        run: |m, host| {
            let opts = TsOptions::from_arg_matches(m)?;
            let rows_per_commit = TsCommand::from_arg_matches(m)?.rows_per_commit;
            run(
                &TsInput {
                    rows_per_commit,
                    opts: &opts,
                },
                host,
            )
        },
    }
}

/// Run the time-series workload (each partitioning of `--compare-partitioning` in turn).
pub fn run(args: &TsInput, host: &mut dyn Host) -> Result<u8> {
    txn_runner::run(args, host)
}

/// A variant's record: the inserts' figures and cost per row, the retention and partition
/// checks, the queries.
fn figures(args: &TsInput, f: Figures<'_, TimeSeries>) -> Result<TsRun> {
    let w = f.w;
    let cfg = w.config().clone();
    let m = f.m;
    let t = m.totals.txn;
    let secs = m.seconds;
    let cost = f.cost.unwrap_or_default();
    let per_row = per_row_figures(&cost, t.inserted, f.session.target.embedded());
    let mut checks = f.checks;
    let events = w.events();
    let removed: u64 = events.iter().map(|e| e.rows).sum();
    checks.push(Check {
        name: "retention_rows".into(),
        ok: removed == t.deleted,
        detail: format!(
            "retention actions removed {removed} rows; the transactions counted {}",
            t.deleted
        ),
    });
    let mut s = f.session;
    let partitions = if cfg.partitioned {
        let parts = w.partitions(s.conn)?;
        checks.push(partitions_check(w, &parts));
        Some(parts)
    } else {
        None
    };
    let stopped = s.interrupt.load(std::sync::atomic::Ordering::SeqCst);
    let queries = if args.opts.queries > 0 && !stopped {
        let mut rng = Pcg64Mcg::seed_from_u64(f.seed ^ 0x9e11);
        let existing = partitions.as_ref().map(|p| p.len());
        let mut qs = Vec::new();
        for q in QueryKind::ALL {
            let ctx = QueryCtx {
                w,
                head: f.head,
                queries: args.opts.queries,
                existing,
            };
            qs.push(ctx.run(q, &mut rng, &mut s, &mut checks)?);
        }
        qs
    } else {
        Vec::new()
    };
    let rows_ins = t.inserted;
    let r = TsRun {
        partitioning: args.partitioning(f.variant),
        geek_codes: cfg.geek_codes(),
        load_rows: f.loaded.rows,
        load_seconds: f.loaded.seconds,
        seconds: secs,
        totals: t,
        rows_per_sec: if secs > 0.0 {
            rows_ins as f64 / secs
        } else {
            0.0
        },
        latency: m
            .txn_hist
            .as_ref()
            .map(|h| summarize(&h.latency))
            .unwrap_or_else(|| summarize(&new_hist())),
        cost,
        cpu_us_per_row: per_row.0,
        read_bytes_per_row: per_row.1,
        dbms_reads_per_row: per_row.2,
        options: cfg,
        retention: events,
        partitions_at_end: partitions,
        rows_before: f.rows_before.unwrap_or(0),
        rows_after: f.rows_after.unwrap_or(0),
        queries,
        growth: f.growth,
        checks,
    };
    Ok(r)
}

/// Per inserted row: the server's CPU microseconds (the client's for an embedded DBMS), the
/// bytes it read from storage, and the DBMS's own reads.
type PerRow = (Option<f64>, Option<f64>, Option<(String, f64)>);

fn per_row_figures(cost: &WindowCost, rows_ins: u64, embedded: bool) -> PerRow {
    let per_row = |v: u64| (rows_ins > 0).then(|| v as f64 / rows_ins as f64);
    let cpu_us_per_row = match &cost.server {
        Some(srv) => per_row(srv.cpu_us),
        None if embedded => per_row(cost.client.cpu_us()),
        None => None,
    };
    let read_bytes_per_row = cost
        .server
        .as_ref()
        .and_then(|srv| srv.read_bytes)
        .and_then(per_row);
    let dbms_reads_per_row = cost.server.as_ref().and_then(|srv| {
        srv.dbms_counters
            .iter()
            .find(|(n, _)| n == "blks_read" || n == "data_reads" || n == "data_read_bytes")
            .and_then(|(n, v)| per_row(*v).map(|x| (n.clone(), x)))
    });
    (cpu_us_per_row, read_bytes_per_row, dbms_reads_per_row)
}

/// The range partitions at the end: dropping keeps them bounded, the oldest kept is the one
/// the window starts in; DELETE or no retention leaves them all; the newest is made ahead.
fn partitions_check(w: &TimeSeries, parts: &[u64]) -> Check {
    let cfg = w.config();
    let bound = (cfg.keep_partitions + AHEAD) as usize;
    let current = (w.next_row().saturating_sub(1)) / cfg.rows_per_partition();
    let oldest = current.saturating_sub(cfg.keep_partitions - 1);
    let ok = (cfg.retention != Retention::Drop
        || (parts.len() <= bound && parts.first() == Some(&oldest)))
        && parts.last() == Some(&(current + AHEAD));
    Check {
        name: "partitions".into(),
        ok,
        detail: format!(
            "{} range partitions (p{}..p{}), at most {bound}; rows now enter partition {current}, the oldest kept should be {oldest} and the newest {}",
            parts.len(),
            parts.first().map_or("?".into(), |v| v.to_string()),
            parts.last().map_or("?".into(), |v| v.to_string()),
            current + AHEAD
        ),
    }
}

/// What the queries share: the workload, the head (interval, retries, stall timeout), the runs
/// of each query, the range partitions that exist.
struct QueryCtx<'a> {
    w: &'a TimeSeries,
    head: &'a TxnHead,
    queries: u64,
    existing: Option<usize>,
}

/// One query's runs as the one loop runs them ([`drive`]): before each, new random parameters
/// in the complete retained ticks; each run is a query of the meter with the rows it returned;
/// the first run that returned other rows than its range holds is kept for the check.
struct QueryRuns<'a> {
    w: &'a TimeSeries,
    conn: &'a mut dyn Conn,
    st: Stmt,
    q: QueryKind,
    rng: &'a mut Pcg64Mcg,
    /// Complete retained ticks `[oldest, newest)`.
    ticks: (u64, u64),
    left: u64,
    args: Option<QueryArgs>,
    short: Option<(QueryArgs, u64)>,
}

impl Operation for QueryRuns<'_> {
    fn counted(&self) -> Counted {
        Counted::Op(OpKind::Query)
    }

    fn next(&mut self, _sig: &Signals) -> Next {
        if self.left == 0 {
            return Next::Finished;
        }
        self.left -= 1;
        let (oldest, newest) = self.ticks;
        self.args = Some(self.w.query_args(self.q, self.rng, oldest, newest));
        Next::Go(None)
    }

    fn run(&mut self) -> Result<Done> {
        let Some(a) = self.args else {
            bail!("a query ran before its parameters were drawn");
        };
        let n = self
            .conn
            .query(self.st, &TimeSeries::query_params(self.q, &a))?;
        if n != self.w.expected_rows(self.q, &a) && self.short.is_none() {
            self.short = Some((a, n));
        }
        Ok(Done::Op {
            kind: OpKind::Query,
            rows: n,
        })
    }

    fn transient(&mut self, e: &anyhow::Error) -> bool {
        self.conn.is_retryable(e)
    }

    fn rollback(&mut self) {
        let _ = self.conn.rollback();
    }

    fn remaining(&self) -> u64 {
        self.left
    }
}

impl QueryCtx<'_> {
    /// Query `q`: its latency over `queries` runs with random parameters (on the one loop,
    /// into the meter), its rows checked against what its range holds, and its plan.
    fn run(
        &self,
        q: QueryKind,
        rng: &mut Pcg64Mcg,
        s: &mut Open<'_>,
        checks: &mut Vec<Check>,
    ) -> Result<QueryResult> {
        let (w, cfg) = (self.w, self.w.config());
        let newest = w.complete_ticks().saturating_sub(1);
        let oldest = w.oldest_tick();
        let sql = w.query_sql(q, None);
        let st = s.conn.prepare(&sql)?;
        let mut op = QueryRuns {
            w,
            conn: &mut *s.conn,
            st,
            q,
            rng: &mut *rng,
            ticks: (oldest, newest),
            left: self.queries,
            args: None,
            short: None,
        };
        let opts = ReportOptions {
            interval: std::time::Duration::from_secs_f64(self.head.interval),
            stall_timeout: std::time::Duration::from_secs_f64(self.head.stall_timeout),
        };
        let max_retries = self.head.max_retries;
        let worker = Worker {
            name: format!("query {}", q.name()),
            body: Box::new(|meter: &Meter, sig: &Signals| {
                let pacing = Pacing {
                    max_retries,
                    ..Default::default()
                };
                drive(meter, sig, pacing, &mut op).map(|_| ())
            }),
        };
        // The queries print no interval lines: their figures are the step's totals.
        let mut m = run_workers(q.name(), opts, s.interrupt, vec![worker], &mut |_| Ok(()));
        if let Some((_, e)) = m.errors.drain(..).next() {
            return Err(e);
        }
        let short = op.short;
        let k = OpKind::Query.idx();
        let rows = m.totals.rows[k];
        let latency = m.hists[k]
            .as_ref()
            .map(|h| summarize(&h.latency))
            .unwrap_or_else(|| summarize(&new_hist()));
        // Without late rows every complete tick in the window is there; the latest-N
        // query is checked only when each device has N rows in the complete ticks.
        let checkable =
            q != QueryKind::Latest || cfg.latest_n <= newest.saturating_sub(oldest) * cfg.metrics;
        if cfg.backfill == 0.0 && checkable {
            checks.push(Check {
                name: format!("rows_{}", q.name()),
                ok: short.is_none(),
                detail: match short {
                    None => {
                        format!("every run returned the rows its range holds ({rows} in all)")
                    }
                    Some((a, n)) => format!(
                        "device {} metric {} ticks {}..{} returned {n} rows, expected {}",
                        a.device,
                        a.metric,
                        a.lo,
                        a.hi,
                        w.expected_rows(q, &a)
                    ),
                },
            });
        }
        let a = w.query_args(q, rng, oldest, newest);
        let (plan, parts, hash) = w.plan(s.conn, q, &a)?;
        if let (Some(p), Some(e)) = (&parts, self.existing) {
            checks.push(plan_check(cfg, q, &a, p, e, hash));
        }
        Ok(QueryResult {
            query: q.name().into(),
            sql,
            latency,
            rows,
            plan,
            partitions_read: parts.map(|p| p.len()),
            partitions_existing: self.existing,
            hash_partitions_read: hash,
        })
    }
}

/// Pruning: a time-bounded query reads the range partitions its range covers (at most 2); one
/// that is not bounded reads them all (fan-out, reported); a query naming a device reads one
/// hash sub-partition.
fn plan_check(
    cfg: &TsConfig,
    q: QueryKind,
    a: &QueryArgs,
    p: &[u64],
    e: usize,
    hash: Option<u64>,
) -> Check {
    let want = (a.hi - a.lo).div_ceil(cfg.ticks_per_partition) as usize + 1;
    let ok = if q.bounds_time() {
        !p.is_empty() && p.len() <= want && p.len() < e
    } else {
        !p.is_empty()
    };
    let hash_ok = match hash {
        Some(h) if q.names_device() => h == 1,
        _ => true,
    };
    Check {
        name: format!("plan_{}", q.name()),
        ok: ok && hash_ok,
        detail: format!(
            "reads {} of {e} range partitions{}{}",
            p.len(),
            match hash {
                Some(h) => format!(
                    ", at most {h} of {} hash sub-partitions each",
                    cfg.hash_partitions
                ),
                None => String::new(),
            },
            if q.bounds_time() {
                " (pruned by the time range)"
            } else {
                " (no time bound: fan-out over all partitions)"
            }
        ),
    }
}

impl Record for TsRun {
    const TABLE: &'static str = "timeseries";
    const WHAT: &'static str = "Measured runs of the time-series workload (`ixbench timeseries`), \
                                one per partitioning.";

    fn checks(&self) -> &[Check] {
        &self.checks
    }

    fn summary(&self) -> String {
        summary_text(self)
    }

    /// Kept as it always was: its fields sorted by name (as a `serde_json::Value` holds them).
    fn keep(&mut self, _end: &End, result: &mut RunResult) -> Result<()> {
        result
            .workloads
            .push(Self::TABLE, &serde_json::to_value(&*self)?)
    }

    fn table(runs: &[Self]) -> Table {
        summary_table(runs)
    }
}

fn opt(v: Option<f64>, prec: usize) -> String {
    fmt::or_unknown(v, |x| format!("{x:.prec$}"))
}

/// What one variant did, in words.
pub fn summary_text(r: &TsRun) -> String {
    let t = &r.totals;
    let mut s = format!(
        "\ninserted {} rows in {} commits over {:.1} s: {:.0} rows/s; commit latency p50 {} ms, p99 {} ms, max {} ms\n",
        t.inserted,
        t.txns,
        r.seconds,
        r.rows_per_sec,
        fmt::ms2(r.latency.p50_us),
        fmt::ms2(r.latency.p99_us),
        fmt::ms2(r.latency.max_us)
    );
    s.push_str(&format!(
        "{} {} us/row, storage reads {} bytes/row{}\n",
        if r.cost.server.is_some() {
            "server CPU"
        } else {
            "CPU (ixbench with the embedded engine)"
        },
        opt(r.cpu_us_per_row, 1),
        opt(r.read_bytes_per_row, 1),
        match &r.dbms_reads_per_row {
            Some((n, v)) => format!(", {n} {v:.3}/row"),
            None => String::new(),
        }
    ));
    if r.growth.len() >= 2 {
        let n = r.growth.len();
        let mut at = vec![0, n / 3, 2 * n / 3, n - 1];
        at.dedup();
        let picks: Vec<&GrowthPoint> = at.iter().map(|&i| &r.growth[i]).collect();
        s.push_str(&format!(
            "as the data set went: {}\n",
            picks
                .iter()
                .map(|g| format!(
                    "{:.0} s {} rows {:.0} rows/s",
                    g.t_sec, g.rows, g.rows_per_sec
                ))
                .collect::<Vec<_>>()
                .join(" -> ")
        ));
    }
    let mut by: std::collections::BTreeMap<&str, (u64, f64, f64, u64)> = Default::default();
    for e in &r.retention {
        let x = by.entry(e.action.as_str()).or_default();
        x.0 += 1;
        x.1 += e.seconds;
        x.2 = x.2.max(e.seconds);
        x.3 += e.rows;
    }
    for (a, (n, sum, max, rows)) in by {
        s.push_str(&format!(
            "retention: {n} x {a}, {} ms total, max {} ms, {rows} rows removed\n",
            fmt::num(sum * 1000.0),
            fmt::num(max * 1000.0)
        ));
    }
    s.push_str(&format!(
        "rows: {} before, {} after{}\n",
        r.rows_before,
        r.rows_after,
        match &r.partitions_at_end {
            Some(p) => format!(
                "; range partitions now {} ({})",
                match (p.first(), p.last()) {
                    (Some(a), Some(b)) => format!("p{a}..p{b}"),
                    _ => "none".into(),
                },
                p.len()
            ),
            None => String::new(),
        }
    ));
    for q in &r.queries {
        s.push_str(&format!(
            "query {:<13} p50 {} ms, p99 {} ms, {} rows; plan reads {}\n",
            q.query,
            fmt::ms2(q.latency.p50_us),
            fmt::ms2(q.latency.p99_us),
            q.rows,
            match (q.partitions_read, q.partitions_existing) {
                (Some(p), Some(e)) => format!(
                    "{p} of {e} partitions{}",
                    q.hash_partitions_read
                        .map(|h| format!(" ({h} hash sub-partition(s) each)"))
                        .unwrap_or_default()
                ),
                _ => "the whole table (unpartitioned)".into(),
            }
        ));
    }
    s
}

/// One row per variant.
fn summary_table(runs: &[TsRun]) -> crate::export::Table {
    let mut head = vec![
        "partitioning".to_string(),
        "retention".into(),
        "rows/s".into(),
        "commit p99 ms".into(),
        "server CPU us/row".into(),
        "read bytes/row".into(),
        "dbms reads/row".into(),
        "retention ms".into(),
        "create partition ms".into(),
    ];
    for q in QueryKind::ALL {
        head.push(format!("{} p50 ms", q.name()));
    }
    let mut t = crate::export::Table::new(head);
    for r in runs {
        let mut row = vec![
            match r.partitioning {
                Partitioning::Range if r.options.hash_partitions > 0 => {
                    format!("range x hash {}", r.options.hash_partitions)
                }
                Partitioning::Range => "range".into(),
                Partitioning::None => "none".into(),
            },
            r.options.retention.name().into(),
            format!("{:.0}", r.rows_per_sec),
            fmt::ms2(r.latency.p99_us),
            opt(r.cpu_us_per_row, 1),
            opt(r.read_bytes_per_row, 1),
            r.dbms_reads_per_row
                .as_ref()
                .map(|(n, v)| format!("{v:.3} ({n})"))
                .unwrap_or_else(|| "unknown".into()),
            format!(
                "{:.1}",
                r.retention
                    .iter()
                    .filter(|e| e.action != "create partition")
                    .map(|e| e.seconds * 1000.0)
                    .fold(0.0, |a, b| a + b)
            ),
            if r.options.partitioned {
                format!(
                    "{:.1}",
                    r.retention
                        .iter()
                        .filter(|e| e.action == "create partition")
                        .map(|e| e.seconds * 1000.0)
                        .fold(0.0, |a, b| a + b)
                )
            } else {
                "n/a".into()
            },
        ];
        for q in QueryKind::ALL {
            row.push(
                r.queries
                    .iter()
                    .find(|x| x.query == q.name())
                    .map(|x| fmt::ms2(x.latency.p50_us))
                    .unwrap_or_else(|| "unknown".into()),
            );
        }
        t.push(row);
    }
    t
}
