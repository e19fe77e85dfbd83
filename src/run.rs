//! `ixbench run`: plan the steps, open the target and the results directory, run each step,
//! check it, and keep `run.json` and `intervals.ndjson` up to date as it goes.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::json;

use crate::cli::RunArgs;
use crate::export::text;
use crate::measure::histogram::summarize;
use crate::measure::interval::{rate_at_rank, IntervalLine};
use crate::measure::meter::OpKind;
use crate::measure::reporter::{run_workers, Measured};
use crate::measure::sys::{HostInfo, ProcSnapshot};
use crate::results::store::Store;
use crate::results::{Check, OpLatency, RunResult, Status, StepResult, SummaryLine};
use crate::step::load::{ClientProgress, WriterPlan};
use crate::step::read_write::QueryTally;
use crate::step::{
    check_plans, check_rows, create_index, load, maintenance, parse_steps, profile_steps,
    read_write, tables, PlanParams, Profile, QueryKind, StepConfig, StepCtx, StepKind, StepSpec,
    TableState, RATES_2020,
};
use crate::target::{self, Target, TargetOptions, TargetSpec};
use crate::workload::iibench::TableSql;

/// Exit status when a self-check failed.
pub const EXIT_CHECKS_FAILED: u8 = 2;
/// Exit status after Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Validated settings of a run.
struct Plan {
    steps: Vec<StepSpec>,
    params: PlanParams,
    step_cfg: StepConfig,
    tables: Vec<String>,
    pragmas: Vec<(String, String)>,
}

fn parse_data_length(s: &str) -> Result<(usize, usize)> {
    let (a, b) = s
        .split_once("..")
        .with_context(|| format!("invalid --data-length {s:?}: expected MIN..MAX, e.g. 10..20"))?;
    let (a, b): (usize, usize) = (
        a.trim()
            .parse()
            .with_context(|| format!("invalid --data-length {s:?}"))?,
        b.trim()
            .parse()
            .with_context(|| format!("invalid --data-length {s:?}"))?,
    );
    if a == 0 || a > b || b > 4000 {
        bail!("invalid --data-length {s:?}: need 1 <= MIN <= MAX <= 4000");
    }
    Ok((a, b))
}

fn plan(args: &RunArgs) -> Result<Plan> {
    if !(args.query_seconds > 0.0 && args.query_seconds.is_finite()) {
        bail!("--query-seconds must be a positive number");
    }
    if !(args.interval >= 0.05 && args.interval <= 3600.0) {
        bail!("--interval must be between 0.05 and 3600 seconds");
    }
    let rates = match &args.rates {
        Some(r) => r.clone(),
        None if args.profile == Profile::P2020 => RATES_2020.to_vec(),
        None => vec![100, 500, 1000],
    };
    if rates.iter().any(|&r| r == 0) {
        bail!("--rates must be positive rows/s");
    }
    let params = PlanParams {
        rows: args.rows,
        rows2: args.rows2,
        rows_per_commit: args.rows_per_commit as usize,
        rows_per_commit_i1: args.rows_per_commit_i1 as usize,
        rows_per_commit_i2: args.rows_per_commit_i2 as usize,
        rw_rows_per_commit: args.rw_rows_per_commit as usize,
        rates: rates.clone(),
        query_seconds: args.query_seconds,
    };
    let names = match &args.steps {
        Some(s) => s.clone(),
        None => profile_steps(args.profile, &rates),
    };
    let steps = parse_steps(&names, &params, args.profile)?;
    if let Some(pos) = steps.iter().position(|s| s.name == "l.i0") {
        if pos != 0 {
            bail!("l.i0 creates the tables, so it must be the first step");
        }
    }
    let clients = args.clients as usize;
    let n_tables = if args.shared_table { 1 } else { clients };
    let tables: Vec<String> = (1..=n_tables)
        .map(|i| format!("{}{i}", args.table_prefix))
        .collect();
    for t in &tables {
        tables::validate_name(t)?;
    }
    let mut pragmas = Vec::new();
    for p in &args.sqlite_pragma {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("invalid --sqlite-pragma {p:?}: expected NAME=VALUE"))?;
        pragmas.push((k.trim().to_string(), v.trim().to_string()));
    }
    let step_cfg = StepConfig {
        clients,
        secondary_indexes: args.secondary_indexes as usize,
        seed: args.seed,
        data_len: parse_data_length(&args.data_length)?,
        interval: Duration::from_secs_f64(args.interval),
        line_format: args.line_format,
        max_retries: args.max_retries,
    };
    Ok(Plan {
        steps,
        params,
        step_cfg,
        tables,
        pragmas,
    })
}

/// Run the insert benchmark as `args` says. Returns the exit status: 0, or
/// [`EXIT_CHECKS_FAILED`], or [`EXIT_INTERRUPTED`]; errors are returned for the caller to print.
pub fn run(args: &RunArgs, argv: Vec<String>, interrupt: &AtomicBool) -> Result<u8> {
    let plan = plan(args)?;
    let spec = TargetSpec::parse(&args.target)?;
    let now = chrono::Utc::now();
    let mut store = Store::create(
        args.out.as_deref(),
        &now.format("%Y%m%d-%H%M%S").to_string(),
    )?;
    let target = target::open(
        &spec,
        &TargetOptions {
            engine: args.engine.clone(),
            sqlite_pragmas: plan.pragmas.clone(),
            default_sqlite_path: Some(store.dir().join("ixbench.sqlite")),
        },
    )?;
    let mut conn = target.connect()?;
    let info = target.info(conn.as_mut())?;
    let mut out = std::io::stdout();
    let _ = write!(
        out,
        "{}",
        text::run_header(&info, &store.dir().display().to_string())
    );

    let config = json!({
        "target": target::redact_url(&args.target),
        "steps": plan.steps,
        "profile": args.profile,
        "plan": plan.params,
        "clients": plan.step_cfg.clients,
        "tables": plan.tables,
        "shared_table": args.shared_table,
        "secondary_indexes": plan.step_cfg.secondary_indexes,
        "seed": plan.step_cfg.seed,
        "data_length": [plan.step_cfg.data_len.0, plan.step_cfg.data_len.1],
        "interval_secs": args.interval,
        "line_format": args.line_format,
        "max_retries": args.max_retries,
    });
    let mut result = RunResult {
        schema_version: crate::results::SCHEMA_VERSION,
        ixbench_version: env!("CARGO_PKG_VERSION").to_string(),
        // A URL argument may hold a password: results never do.
        command_line: argv.iter().map(|a| target::redact_url(a)).collect(),
        started_at: now.to_rfc3339(),
        finished_at: None,
        status: Status::Running,
        error: None,
        config,
        target: info,
        host: HostInfo::gather(),
        steps: Vec::new(),
    };
    store.write_run(&result)?;

    let outcome = run_steps(
        target.as_ref(),
        conn.as_mut(),
        &plan,
        &mut store,
        &mut result,
        interrupt,
    );
    result.finished_at = Some(chrono::Utc::now().to_rfc3339());
    let code = match &outcome {
        Ok(()) if interrupt.load(Ordering::SeqCst) => {
            result.status = Status::Interrupted;
            EXIT_INTERRUPTED
        }
        Ok(()) if result.steps.iter().all(|s| s.checks_ok()) => {
            result.status = Status::Ok;
            0
        }
        Ok(()) => {
            result.status = Status::ChecksFailed;
            EXIT_CHECKS_FAILED
        }
        Err(e) => {
            result.status = Status::Failed;
            result.error = Some(format!("{e:#}"));
            1
        }
    };
    store.write_run(&result)?;
    let _ = write!(out, "\n{}", text::run_table(&result));
    let _ = writeln!(out, "results: {}", store.dir().display());
    match code {
        EXIT_CHECKS_FAILED => eprintln!("ixbench: self-checks failed (see CHECK FAILED above)"),
        EXIT_INTERRUPTED => eprintln!(
            "ixbench: interrupted; finished steps and intervals are in {}",
            store.dir().display()
        ),
        _ => {}
    }
    outcome.map(|_| code)
}

fn run_steps(
    target: &dyn Target,
    conn: &mut dyn crate::target::Conn,
    plan: &Plan,
    store: &mut Store,
    result: &mut RunResult,
    interrupt: &AtomicBool,
) -> Result<()> {
    let dialect = target.dialect().clone();
    let creates = matches!(
        plan.steps[0].kind,
        StepKind::Load {
            create_table: true,
            ..
        }
    );
    let mut states = Vec::new();
    for t in &plan.tables {
        let sql = TableSql::new(t, &dialect);
        if creates || !target.stores_rows() {
            states.push(TableState::new(sql, 0, 0));
        } else {
            tables::require_owned(conn, t)?;
            let rows = conn.count_rows(&sql)? as i64;
            let min = conn.min_max(&sql)?.map(|m| m.0).unwrap_or(0);
            states.push(TableState::new(sql, rows, min));
        }
    }
    for (no, spec) in plan.steps.iter().enumerate() {
        if interrupt.load(Ordering::SeqCst) {
            break;
        }
        let ctx = StepCtx {
            target,
            cfg: &plan.step_cfg,
            tables: &states,
            interrupt,
            step_no: no as u64,
        };
        println!(
            "\n== {}: {}",
            spec.name,
            spec.describe(plan.step_cfg.clients)
        );
        let step = run_step(&ctx, conn, spec, store);
        let failed = step.error.clone();
        print!("{}", text::step_summary(&step));
        result.steps.push(step);
        store.write_run(result)?;
        if let Some(e) = failed {
            bail!("step {} failed: {e}", spec.name);
        }
    }
    Ok(())
}

/// Run one step and check it; never returns an error: a failure is recorded in the step.
fn run_step(
    ctx: &StepCtx,
    conn: &mut dyn crate::target::Conn,
    spec: &StepSpec,
    store: &mut Store,
) -> StepResult {
    let mut step = StepResult::new(&spec.name, &spec.describe(ctx.cfg.clients));
    let before = ProcSnapshot::now();
    let t0 = Instant::now();
    let r = execute(ctx, conn, spec, store, &mut step);
    let elapsed = t0.elapsed().as_secs_f64();
    if step.seconds == 0.0 {
        step.seconds = elapsed;
    }
    step.client = ProcSnapshot::now().since(&before);
    match r {
        Err(e) => {
            step.status = Status::Failed;
            step.error = Some(format!("{e:#}"));
        }
        Ok(()) => {
            if let Err(e) = finish(ctx, conn, spec, &mut step) {
                step.status = Status::Failed;
                step.error = Some(format!("{e:#}"));
            } else if ctx.interrupt.load(Ordering::SeqCst) {
                step.status = Status::Interrupted;
            } else if step.checks_ok() {
                step.status = Status::Ok;
            } else {
                step.status = Status::ChecksFailed;
            }
        }
    }
    step
}

fn execute(
    ctx: &StepCtx,
    conn: &mut dyn crate::target::Conn,
    spec: &StepSpec,
    store: &mut Store,
    step: &mut StepResult,
) -> Result<()> {
    let fmt = ctx.cfg.line_format;
    let mut printed = 0usize;
    let mut sink = |l: &IntervalLine| -> Result<()> {
        if printed % 20 == 0 {
            println!("{}", IntervalLine::header(fmt));
        }
        printed += 1;
        println!("{}", l.format(fmt));
        store.append_interval(l)
    };
    let clients = ctx.cfg.clients;
    match &spec.kind {
        StepKind::Load {
            rows,
            rows_per_commit,
            delete,
            create_table,
        } => {
            if *create_table {
                create_tables(ctx, conn)?;
            } else if *delete && ctx.target.stores_rows() {
                load::ensure_rows_to_delete(ctx, conn)?;
            }
            let plan = WriterPlan {
                rows: *rows,
                rows_per_commit: *rows_per_commit,
                rate: None,
            };
            let progress: Vec<ClientProgress> =
                (0..clients).map(|_| ClientProgress::new(*rows)).collect();
            let workers = load::workers(ctx, plan, *delete, &progress);
            let m = run_workers(
                &spec.name,
                ctx.cfg.interval,
                ctx.interrupt,
                workers,
                &mut sink,
            );
            absorb(step, m, *rows_per_commit, None, clients)
        }
        StepKind::ReadWrite {
            query,
            rate,
            seconds,
            rows_per_commit,
            delete,
        } => {
            if ctx.cfg.secondary_indexes == 0 && *query == QueryKind::Range {
                bail!("range queries need secondary indexes (--secondary-indexes 1..3 and l.x)");
            }
            let rows = ((*rate as f64) * seconds).round().max(1.0) as u64;
            let plan = WriterPlan {
                rows,
                rows_per_commit: *rows_per_commit,
                rate: Some(*rate as f64),
            };
            let progress: Vec<ClientProgress> =
                (0..clients).map(|_| ClientProgress::new(rows)).collect();
            let tally = QueryTally::default();
            let workers = read_write::workers(ctx, *query, plan, *delete, &progress, &tally);
            let m = run_workers(
                &spec.name,
                ctx.cfg.interval,
                ctx.interrupt,
                workers,
                &mut sink,
            );
            absorb(step, m, *rows_per_commit, Some(*rate as f64), clients)?;
            if ctx.target.stores_rows() {
                tally_checks(step, *query, &tally);
            }
            Ok(())
        }
        StepKind::CreateIndexes => {
            let t0 = Instant::now();
            let builds = create_index::run(ctx, conn, &mut |b| {
                println!(
                    "   {} on {}: {:.2} s, {:.0} rows/s",
                    b.index, b.table, b.seconds, b.rows_per_sec
                );
            })?;
            step.seconds = t0.elapsed().as_secs_f64();
            let rows: u64 = ctx
                .tables
                .iter()
                .map(|t| t.expected_rows.load(Ordering::SeqCst).max(0) as u64)
                .sum();
            step.summary.ips = if step.seconds > 0.0 && !builds.is_empty() {
                rows as f64 / step.seconds
            } else {
                0.0
            };
            step.index_builds = builds;
            Ok(())
        }
        StepKind::Maintenance => {
            let t0 = Instant::now();
            step.maintenance = maintenance::run(ctx, conn)?;
            step.seconds = t0.elapsed().as_secs_f64();
            Ok(())
        }
    }
}

/// Create the benchmark tables (PK only), recording them as ixbench's.
fn create_tables(ctx: &StepCtx, conn: &mut dyn crate::target::Conn) -> Result<()> {
    let at = chrono::Utc::now().to_rfc3339();
    for t in ctx.tables {
        if tables::prepare_new(conn, t.name())? {
            println!("   dropped {} left by an earlier ixbench run", t.name());
        }
        conn.execute(&t.sql.create_table())
            .with_context(|| format!("cannot create table {}", t.name()))?;
        if ctx.target.stores_rows() {
            tables::record_created(conn, t.name(), &at)?;
        }
        t.expected_rows.store(0, Ordering::SeqCst);
        t.delete_from.store(0, Ordering::SeqCst);
    }
    Ok(())
}

/// Fold what the workers measured into the step result; a worker error fails the step.
fn absorb(
    step: &mut StepResult,
    m: Measured,
    rows_per_commit: usize,
    rate: Option<f64>,
    clients: usize,
) -> Result<()> {
    step.seconds = m.seconds;
    step.totals = m.totals;
    step.throttled = rate.is_some();
    step.target_rate = rate;
    let secs = m.seconds.max(1e-9);
    step.summary.ips = m.totals.rows[0] as f64 / secs;
    step.summary.dps = m.totals.rows[1] as f64 / secs;
    step.summary.qps = m.totals.ops[2] as f64 / secs;
    let main = if m.totals.ops[2] > 0 { 2 } else { 0 };
    let rates: Vec<f64> = m.interval_rates.iter().map(|r| r[main]).collect();
    step.summary.p50 = rate_at_rank(&rates, 0.5);
    step.summary.p01 = rate_at_rank(&rates, 0.01);
    let mut maxop = 0u64;
    for kind in OpKind::ALL {
        if let Some(h) = &m.hists[kind.idx()] {
            maxop = maxop.max(h.latency.max());
            let unit = match kind {
                OpKind::Insert => format!("commit of {rows_per_commit} rows"),
                OpKind::Delete => format!("commit deleting {rows_per_commit} rows"),
                OpKind::Query => "query".to_string(),
            };
            step.latency.push(OpLatency {
                op: kind.name().to_string(),
                unit,
                latency: summarize(&h.latency),
                service: summarize(&h.service),
                lag: if rate.is_some() && kind != OpKind::Query {
                    Some(summarize(&h.lag))
                } else {
                    None
                },
            });
        }
    }
    step.summary.maxop = maxop as f64 / 1e6;
    if let Some(r) = rate {
        let achieved = m.totals.rows[0] as f64 / clients as f64 / secs;
        step.achieved_rate = Some(achieved);
        if achieved < 0.95 * r {
            step.rate_ok = false;
            step.warnings.push(format!(
                "WRITERS FELL BEHIND: {achieved:.0} rows/s per client achieved, {r:.0} targeted ({:.0}%); query figures of this step are not comparable",
                100.0 * achieved / r
            ));
        }
    }
    if let Some((name, e)) = m.errors.into_iter().next() {
        return Err(e.context(format!("worker {name}")));
    }
    Ok(())
}

fn tally_checks(step: &mut StepResult, query: QueryKind, tally: &QueryTally) {
    let queries = step.totals.ops[2];
    step.checks.push(Check {
        name: "queries_return_rows".into(),
        ok: queries == 0 || step.totals.rows[2] > 0,
        detail: format!("{queries} queries returned {} rows", step.totals.rows[2]),
    });
    match query {
        QueryKind::Range => {
            let checked = tally.range_checked.load(Ordering::Relaxed);
            let short = tally.range_short.load(Ordering::Relaxed);
            step.checks.push(Check {
                name: "range_rows".into(),
                ok: short == 0,
                detail: format!(
                    "{short} of {checked} checkable range queries returned fewer than 10 rows"
                ),
            });
        }
        QueryKind::Point => {
            let empty = tally.point_empty.load(Ordering::Relaxed);
            step.checks.push(Check {
                name: "point_rows".into(),
                ok: empty * 10 <= queries.max(1),
                detail: format!("{empty} of {queries} point queries found none of their 10 keys"),
            });
        }
    }
}

/// After a step: self-checks, sizes and the resource figures of the metrics line.
fn finish(
    ctx: &StepCtx,
    conn: &mut dyn crate::target::Conn,
    spec: &StepSpec,
    step: &mut StepResult,
) -> Result<()> {
    let names: Vec<String> = ctx.tables.iter().map(|t| t.name().to_string()).collect();
    let stores = ctx.target.stores_rows();
    if stores {
        match spec.kind {
            StepKind::Load { .. } | StepKind::ReadWrite { .. } => {
                check_rows(conn, ctx.tables, step)?;
            }
            _ => {}
        }
        match spec.kind {
            StepKind::CreateIndexes | StepKind::Maintenance | StepKind::ReadWrite { .. } => {
                check_plans(
                    ctx.target,
                    conn,
                    ctx.tables,
                    ctx.cfg.secondary_indexes,
                    step,
                )?;
            }
            _ => {}
        }
    }
    let detailed = matches!(spec.kind, StepKind::CreateIndexes | StepKind::Maintenance);
    step.sizes = ctx.target.sizes(conn, &names, detailed)?;
    let secs = step.seconds.max(1e-9);
    let c = &step.client;
    let s: &mut SummaryLine = &mut step.summary;
    s.rmbps = c.read_bytes as f64 / 1e6 / secs;
    s.wmbps = c.write_bytes as f64 / 1e6 / secs;
    s.csps = c.ctx_switches as f64 / secs;
    s.cpu_pct = c.cpu_us() as f64 / 1e4 / secs;
    s.dbgb = step.sizes.database_bytes.unwrap_or(0) as f64 / 1e9;
    s.rss_mb = c.max_rss_bytes as f64 / 1e6;
    let ops = match spec.kind {
        StepKind::ReadWrite { .. } => step.totals.ops[2],
        StepKind::CreateIndexes => step.index_builds.iter().map(|b| b.rows).sum(),
        _ => step.totals.rows[0],
    };
    s.cpupq = if ops > 0 {
        c.cpu_us() as f64 / ops as f64
    } else {
        0.0
    };
    Ok(())
}
