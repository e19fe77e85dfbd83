//! The time-series workload's runner (see [`crate::workload::timeseries`]), for `ixbench
//! timeseries` and `ixbench run --workload timeseries` alike: load the retention window,
//! insert the latest interval across all devices for a time (closed loop, or open loop at a
//! rate) with retention by DROP PARTITION or DELETE, then time the queries and check their
//! plans (partition pruning). `--compare-partitioning` runs it twice with the same rows,
//! range-partitioned then unpartitioned, and prints both side by side.
//!
//! The transactions run on the shared transaction phase (the [`Host`]'s) as the
//! OLTP mixes' do: the same interval lines, histograms, `run.json` and row self-check (rows in
//! the table = rows before + inserted - removed by retention, exactly).

use anyhow::{bail, Result};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use serde::Serialize;
use serde_json::json;

use crate::dbms::{self, Dbms};
use crate::format as fmt;
use crate::measure::clock::Stopwatch;
use crate::measure::histogram::{new_hist, record, summarize, LatencySummary};
use crate::measure::meter::TxnTotals;
use crate::measure::resources::{Window, WindowCost};
use crate::results::Check;
use crate::workload::runner::{Host, RunIn};
use crate::workload::timeseries::{
    Partitioning, QueryKind, Retention, RetentionEvent, TimeSeries, TsConfig, TsOptions, AHEAD,
    TABLE,
};
use crate::workload::Workload;

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

    fn variants(&self) -> Vec<Partitioning> {
        self.opts.variants()
    }

    fn check(&self, host: &dyn Host) -> Result<()> {
        host.check_head("commits")?;
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
        for p in self.variants() {
            self.config(p).validate(&spec.kind, threads)?;
        }
        host.check_common(&[TABLE.to_string()])
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

/// The insert rate in one interval and the rows in the table at its end.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GrowthPoint {
    /// Seconds from the start of the inserts to the interval's end.
    pub t_sec: f64,
    /// Rows in the table at the interval's end (rows before + inserted - removed so far).
    pub rows: u64,
    /// Rows inserted per second in the interval.
    pub rows_per_sec: f64,
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
            opts: &r.opts.ts,
        },
        host,
    )
}

/// Run the time-series workload (each partitioning of `--compare-partitioning` in turn).
pub fn run(args: &TsInput, host: &mut dyn Host) -> Result<u8> {
    args.check(host)?;
    let head = host.head().clone();
    let common = host.common().clone();
    let config = json!({
        "command": host.command(),
        "target": dbms::redact_url(&common.target),
        "engine": common.engine,
        "variants": args.variants().iter().map(|p| args.config(*p)).collect::<Vec<_>>(),
        "threads": head.threads,
        "time_secs": head.time,
        "rate": head.rate,
        "queries": args.opts.queries,
        "seed": common.seed,
        "compare_partitioning": args.opts.compare_partitioning,
    });
    {
        use crate::progress::{start, Planned};
        let mut planned = Vec::new();
        for p in args.variants() {
            let name = format!("{p:?}").to_lowercase();
            planned.push((format!("load, partitioning {name}"), Planned::Unknown));
            planned.push((
                format!("run, partitioning {name}"),
                Planned::Seconds(head.time),
            ));
        }
        start(planned);
    }
    host.open(config)?;
    let mut runs: Vec<TsRun> = Vec::new();
    let mut outcome = Ok(());
    for p in args.variants() {
        match execute(args, p, host) {
            Ok(r) => {
                let s = host.session()?;
                s.result.timeseries.push(serde_json::to_value(&r)?);
                s.store.write_run(s.result)?;
                runs.push(r);
            }
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
        if host.interrupt().load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
    }
    let checks_ok = runs.iter().all(|r| r.checks.iter().all(|c| c.ok));
    let table = summary_table(&runs);
    host.close(outcome, checks_ok, vec![("timeseries", table)])
}

fn execute(args: &TsInput, partitioning: Partitioning, host: &mut dyn Host) -> Result<TsRun> {
    let cfg = args.config(partitioning);
    let head = host.head().clone();
    let seed = host.common().seed;
    let s = host.session()?;
    let target: &dyn Dbms = s.target;
    let w = TimeSeries::new(cfg.clone(), target, seed)?;
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
    let codes = cfg.geek_codes();
    crate::outln!(
        "geek code: {}",
        codes
            .iter()
            .map(|(i, c)| format!("{i}={c}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let variant = format!("{partitioning:?}").to_lowercase();
    crate::progress::step_named(&format!("load, partitioning {variant}"));
    let t0 = Stopwatch::start();
    let wait = crate::progress::waiting("the load");
    w.load(target, 1)?;
    drop(wait);
    let load_seconds = t0.elapsed_secs();
    let load_rows = cfg.load_rows();
    crate::outln!("loaded {load_rows} rows in {load_seconds:.1} s");
    let rows_before = crate::workload::tables::count_rows(s.conn, TABLE)?;
    crate::progress::step_named(&format!("run, partitioning {variant}"));

    let step = "timeseries";
    let mut growth: Vec<GrowthPoint> = Vec::new();
    let win = Window::open(target, s.conn);
    let interval = head.interval;
    let phase = host.measure(step, &w, false, &mut |l, d, cum| {
        // A short last line (the tail after the last full interval) says little.
        if l.i_sec >= interval * 0.5 {
            growth.push(GrowthPoint {
                t_sec: l.t_sec,
                rows: (rows_before + cum.inserted).saturating_sub(cum.deleted),
                rows_per_sec: d.totals.txn.inserted as f64 / l.i_sec,
            });
        }
    })?;
    let s = host.session()?;
    let target: &dyn Dbms = s.target;
    let cost = win.close(target, s.conn);
    let interval_sums = phase.interval_sums();
    let m = phase.m;
    if let Some((who, e)) = m.errors.into_iter().next() {
        return Err(e.context(format!("{step} {who}")));
    }
    let t = m.totals.txn;
    let secs = m.seconds;
    let rows_ins = t.inserted;
    let per_row = |v: u64| (rows_ins > 0).then(|| v as f64 / rows_ins as f64);
    let cpu_us_per_row = match &cost.server {
        Some(srv) => per_row(srv.cpu_us),
        None if target.embedded() => per_row(cost.client.cpu_us()),
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
    let mut checks = vec![interval_sums];
    let rows_after = crate::workload::tables::count_rows(s.conn, TABLE)?;
    let want = (rows_before + t.inserted).saturating_sub(t.deleted);
    checks.push(Check {
        name: "rows".into(),
        ok: rows_after == want,
        detail: format!(
            "{rows_after} rows after; {rows_before} before + {} inserted - {} removed by retention = {want}",
            t.inserted, t.deleted
        ),
    });
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
    let partitions = if cfg.partitioned {
        let parts = w.partitions(s.conn)?;
        let bound = (cfg.keep_partitions + AHEAD) as usize;
        let current = (w.next_row().saturating_sub(1)) / cfg.rows_per_partition();
        let oldest = current.saturating_sub(cfg.keep_partitions - 1);
        // Dropping keeps the partitions bounded; DELETE or no retention leaves them all.
        let ok = (cfg.retention != Retention::Drop
            || (parts.len() <= bound && parts.first() == Some(&oldest)))
            && parts.last() == Some(&(current + AHEAD));
        checks.push(Check {
            name: "partitions".into(),
            ok,
            detail: format!(
                "{} range partitions (p{}..p{}), at most {bound}; rows now enter partition {current}, the oldest kept should be {oldest} and the newest {}",
                parts.len(),
                parts.first().map_or("?".into(), |v| v.to_string()),
                parts.last().map_or("?".into(), |v| v.to_string()),
                current + AHEAD
            ),
        });
        Some(parts)
    } else {
        None
    };

    // Queries: latency over random parameters, and each one's plan.
    let mut queries = Vec::new();
    let stopped = s.interrupt.load(std::sync::atomic::Ordering::SeqCst);
    if args.opts.queries > 0 && !stopped {
        let newest = w.complete_ticks().saturating_sub(1);
        let oldest = w.oldest_tick();
        let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x9e11);
        let conn = s.conn;
        for q in QueryKind::ALL {
            let sql = w.query_sql(q, None);
            let st = conn.prepare(&sql)?;
            let mut h = new_hist();
            let mut rows = 0;
            let mut short = None;
            for _ in 0..args.opts.queries {
                let a = w.query_args(q, &mut rng, oldest, newest);
                let t = Stopwatch::start();
                let n = conn.query(st, &TimeSeries::query_params(q, &a))?;
                record(&mut h, t.elapsed_time().as_micros() as u64);
                rows += n;
                if n != w.expected_rows(q, &a) && short.is_none() {
                    short = Some((a, n));
                }
            }
            // Without late rows every complete tick in the window is there; the latest-N
            // query is checked only when each device has N rows in the complete ticks.
            let checkable = q != QueryKind::Latest
                || cfg.latest_n <= newest.saturating_sub(oldest) * cfg.metrics;
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
            let a = w.query_args(q, &mut rng, oldest, newest);
            let (plan, parts, hash) = w.plan(conn, q, &a)?;
            let existing = partitions.as_ref().map(|p| p.len());
            if let (Some(p), Some(e)) = (&parts, existing) {
                // Pruning: a time-bounded query reads the range partitions its range covers
                // (at most 2); one that is not bounded reads them all (fan-out, reported).
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
                checks.push(Check {
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
                });
            }
            queries.push(QueryResult {
                query: q.name().into(),
                sql,
                latency: summarize(&h),
                rows,
                plan,
                partitions_read: parts.map(|p| p.len()),
                partitions_existing: existing,
                hash_partitions_read: hash,
            });
        }
    }
    let r = TsRun {
        partitioning,
        geek_codes: codes,
        options: cfg,
        load_rows,
        load_seconds,
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
        cpu_us_per_row,
        read_bytes_per_row,
        dbms_reads_per_row,
        retention: events,
        partitions_at_end: partitions,
        rows_before,
        rows_after,
        queries,
        growth,
        checks,
    };
    crate::out!("{}", summary_text(&r));
    for c in r.checks.iter().filter(|c| !c.ok) {
        crate::outln!("CHECK FAILED: {}: {}", c.name, c.detail);
    }
    Ok(r)
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
