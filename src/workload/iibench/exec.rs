//! Running one of the insert benchmark's steps: wait for a quiet server, run the step's
//! workers, measure them, check the step and record sizes and resources. Shared by the
//! commands that run its steps (`run`'s plan, the index lab's load), on the
//! [`StepHost`] they hand in (the quiet wait, the index builds, the cluster's watch are above
//! the workloads).

use std::sync::atomic::Ordering;

use anyhow::{bail, Context, Result};

use crate::measure::clock::{self, Stopwatch};
use crate::measure::interval::IntervalLine;
use crate::measure::reporter::{run_workers, ReportOptions};
use crate::measure::resources::WindowCost;
use crate::measure::sys::ProcSnapshot;
use crate::results::store::Store;
use crate::results::{Status, StepResult, SummaryLine};
use crate::measure::resources::CostSource;
use crate::workload::iibench::plan::{QueryKind, StepKind, StepSpec};
use crate::workload::iibench::steps::load::{self, ClientProgress, WriterPlan};
use crate::workload::iibench::steps::metrics::{
    absorb, check_row_counters, flow_stats, row_counters, tally_checks,
};
use crate::workload::iibench::steps::read_write::{self, QueryTally};
use crate::workload::iibench::steps::{check_plans, check_rows, maintenance, StepCtx};
use crate::workload::runner::{StepBarrier, StepHost, MAX_ROWS};
use crate::workload::tables;

/// A read+write step is stopped at this multiple of its planned time when its writers cannot
/// keep their rate (it would otherwise run until they inserted all their rows).
pub const MAX_STEP_FACTOR: f64 = 3.0;

/// Run one step and check it; never returns an error: a failure is recorded in the step.
pub fn run_step(
    ctx: &StepCtx,
    conn: &mut dyn crate::dbms::Conn,
    spec: &StepSpec,
    store: &mut Store,
    host: &dyn StepHost,
) -> StepResult {
    run_step_from(ctx, conn, spec, store, host, None)
}

/// [`run_step`], begun at `barrier` when this process is one part of a several-process run:
/// the parts meet at the step's start, client 0 waits for a quiet server once for all of them,
/// and every part starts at one common instant ([`StepBarrier`]).
pub fn run_step_from(
    ctx: &StepCtx,
    conn: &mut dyn crate::dbms::Conn,
    spec: &StepSpec,
    store: &mut Store,
    host: &dyn StepHost,
    barrier: Option<&mut dyn StepBarrier>,
) -> StepResult {
    let mut step = StepResult::new(&spec.name, &spec.describe(ctx.cfg.clients));
    // Prepare: background work left from before (compactions, purge, autovacuum, the last
    // step's WAL) must not slow this step down: wait for it outside the measurement.
    let begun = match barrier {
        Some(b) => meet(ctx, conn, spec, host, b, &mut step),
        None => {
            wait_quiet(ctx, conn, host, "step", &mut step);
            Ok(())
        }
    };
    if let Err(e) = begun {
        failed(ctx, &mut step, e, "interrupted");
        return step;
    }
    ctx.target.take_wal_peak();
    // Run: the step inside the whole step's figures, for what it used outside its measured
    // window (set-up and checks).
    let mut whole = Whole::open(ctx, conn, spec);
    let r = execute(ctx, conn, spec, store, host, &mut step);
    if step.seconds == 0.0 {
        step.seconds = whole.t0.elapsed_secs();
    }
    let windowed = whole.charge(ctx, conn, &mut step);
    wal_figures(ctx, &mut step);
    // Finish: the step's status, its checks and sizes, its figures.
    settle(ctx, conn, spec, r, &mut step);
    resource_figures(spec, &mut step);
    if windowed {
        // Set-up and checks: the whole step, its checks included, minus the window.
        let inner = WindowCost {
            seconds: step.window_secs.unwrap_or(0.0),
            client: step.client,
            server: step.server.clone(),
            dbms: None,
        };
        step.outside = Some(whole.cost().minus(&inner));
    }
    step
}

/// Record `e` in the step: interrupted (a warning `said` the error) when the run was
/// stopped, failed otherwise.
fn failed(ctx: &StepCtx, step: &mut StepResult, e: anyhow::Error, said: &str) {
    if ctx.interrupt.load(Ordering::SeqCst) {
        step.status = Status::Interrupted;
        step.warnings.push(format!("{said}: {e:#}"));
    } else {
        step.status = Status::Failed;
        step.error = Some(format!("{e:#}"));
    }
}

/// What the whole step used, from its start: the server's processes (not an embedded DBMS's:
/// that is the client), the client, and what the DBMS reports for a step without a narrower
/// window (maint).
struct Whole {
    server: CostSource,
    reported: Option<crate::measure::resources::ReportedWindow>,
    server_before: Option<crate::measure::sys::ServerCounters>,
    before: ProcSnapshot,
    t0: Stopwatch,
}

impl Whole {
    fn open(ctx: &StepCtx, conn: &mut dyn crate::dbms::Conn, spec: &StepSpec) -> Whole {
        let server = match CostSource::for_target(ctx.target) {
            CostSource::Embedded => CostSource::None,
            other => other,
        };
        // A step without a narrower window (maint) is read from the DBMS over the whole step.
        let reported = matches!(spec.kind, StepKind::Maintenance)
            .then(|| crate::measure::resources::ReportedWindow::open(ctx.target, conn, &server))
            .flatten();
        let server_before = server.sample();
        Whole {
            server,
            reported,
            server_before,
            before: ProcSnapshot::now(),
            t0: Stopwatch::start(),
        }
    }

    /// The whole step so far.
    fn cost(&self) -> WindowCost {
        WindowCost {
            seconds: self.t0.elapsed_secs(),
            client: ProcSnapshot::now().since(&self.before),
            server: match (&self.server_before, self.server.sample()) {
                (Some(a), Some(b)) => Some(b.since(a)),
                _ => None,
            },
            dbms: None,
        }
    }

    /// Charge the step its work: its measured window (l.x: its builds' windows, added), or
    /// without one (maint, or a step that failed before its workers) the whole step so far;
    /// true when it had a window.
    fn charge(
        &mut self,
        ctx: &StepCtx,
        conn: &mut dyn crate::dbms::Conn,
        step: &mut StepResult,
    ) -> bool {
        if step.window_secs.is_none() && !step.index_builds.is_empty() {
            let costs: Option<Vec<&WindowCost>> =
                step.index_builds.iter().map(|b| b.cost.as_ref()).collect();
            if let Some(costs) = costs {
                let sum = costs
                    .iter()
                    .fold(WindowCost::default(), |acc, c| acc.add(c));
                step.set_window(sum);
            }
        }
        let windowed = step.window_secs.is_some();
        if !windowed {
            // The step's work is charged, its checks are not.
            let w = self.cost();
            step.client = w.client;
            step.server = w.server;
        }
        if let Some(r) = self.reported.take() {
            step.server_reported = Some(r.close(ctx.target, conn));
        }
        windowed
    }
}

/// The WAL's peak over the step and its size at the end, with a warning past its bound.
fn wal_figures(ctx: &StepCtx, step: &mut StepResult) {
    step.wal_peak_bytes = ctx.target.take_wal_peak();
    step.wal_end_bytes = ctx.target.wal_bytes();
    if let (Some(peak), Some(bound)) = (step.wal_peak_bytes, ctx.target.wal_bound()) {
        if peak > bound {
            step.warnings.push(format!(
                "the WAL grew to {:.1} MB, beyond its {:.1} MB bound: checkpoints kept finding \
                 the database busy",
                peak as f64 / 1e6,
                bound as f64 / 1e6
            ));
        }
    }
}

/// The step's status from how it ran (`r`), after its checks and sizes when it ran through.
fn settle(
    ctx: &StepCtx,
    conn: &mut dyn crate::dbms::Conn,
    spec: &StepSpec,
    r: Result<()>,
    step: &mut StepResult,
) {
    let stopped = || ctx.interrupt.load(Ordering::SeqCst);
    match r {
        // Stopped: what failed was cut off (a cancelled statement, an index build left out).
        Err(e) => failed(ctx, step, e, "interrupted"),
        Ok(()) if crate::stop::hurried() => {
            step.status = Status::Interrupted;
            step.warnings
                .push("stopped twice: the step's checks and sizes were skipped".into());
        }
        Ok(()) => match finish(ctx, conn, spec, step) {
            Err(e) => failed(ctx, step, e, "interrupted during the checks"),
            Ok(()) if stopped() => step.status = Status::Interrupted,
            Ok(()) if step.checks_ok() => step.status = Status::Ok,
            Ok(()) => step.status = Status::ChecksFailed,
        },
    }
}

/// Meet the other parts at the step's start: client 0 waits for quiet (over every part's
/// tables) once all have arrived; the stamps go into the step.
fn meet(
    ctx: &StepCtx,
    conn: &mut dyn crate::dbms::Conn,
    spec: &StepSpec,
    host: &dyn StepHost,
    barrier: &mut dyn StepBarrier,
    step: &mut StepResult,
) -> Result<()> {
    let label = format!("{}:{}", ctx.step_no, spec.name);
    let stamps = barrier.meet(
        conn,
        &label,
        &spec.name,
        ctx.interrupt,
        &mut |conn, tables| {
            wait_quiet_on(ctx, conn, host, tables, "step (for every part)", step);
        },
    )?;
    step.barrier = Some(stamps);
    Ok(())
}

/// Wait (at most `--quiet-timeout`) until the server is quiet before the `when`
/// ([`StepHost::wait_quiet`]), recorded in the step with its warnings.
fn wait_quiet(
    ctx: &StepCtx,
    conn: &mut dyn crate::dbms::Conn,
    host: &dyn StepHost,
    when: &str,
    step: &mut StepResult,
) {
    let names: Vec<String> = ctx.tables.iter().map(|t| t.name().to_string()).collect();
    wait_quiet_on(ctx, conn, host, &names, when, step);
}

/// [`wait_quiet`] over the tables `names`.
fn wait_quiet_on(
    ctx: &StepCtx,
    conn: &mut dyn crate::dbms::Conn,
    host: &dyn StepHost,
    names: &[String],
    when: &str,
    step: &mut StepResult,
) {
    // Watching is a side query: measure anyway (the host said the server was not watched).
    let q = host.wait_quiet(ctx.target, conn, names, ctx.cfg.quiet_timeout, when);
    step.warnings.extend(q.warnings);
    step.quiet.extend(q.wait);
}

/// The step's work, by its kind; its figures go into `step`.
fn execute(
    ctx: &StepCtx,
    conn: &mut dyn crate::dbms::Conn,
    spec: &StepSpec,
    store: &mut Store,
    host: &dyn StepHost,
    step: &mut StepResult,
) -> Result<()> {
    let fmt = ctx.cfg.line_format;
    let mut printed = 0usize;
    // Each interval line printed (the header every 20) and stored with the WAL's size.
    let mut sink = |l: &IntervalLine| -> Result<()> {
        if printed % 20 == 0 {
            crate::outln!("{}", IntervalLine::header(fmt));
        }
        printed += 1;
        crate::outln!("{}", l.format(fmt));
        let mut l = l.clone();
        l.wal_bytes = ctx.target.wal_bytes();
        store.append_interval(&l)
    };
    let run = Run {
        ctx,
        name: &spec.name,
    };
    match &spec.kind {
        StepKind::Load {
            rows,
            rows_per_commit,
            delete,
            create_table,
            seconds,
        } => {
            if *create_table {
                if create_tables(ctx, conn)? {
                    // Dropping a big table leaves the server busy (MyRocks removes its
                    // indexes in the background).
                    wait_quiet(
                        ctx,
                        conn,
                        host,
                        "load, after dropping a table left by an earlier run",
                        step,
                    );
                }
            } else if *delete && ctx.target.stores_rows() {
                load::ensure_rows_to_delete(ctx, conn)?;
            }
            // --time: bounded by seconds; the row count is then only a ceiling no step reaches.
            let rows = if seconds.is_some() {
                MAX_ROWS
            } else {
                *rows
            };
            let plan = WriterPlan {
                rows,
                rows_per_commit: *rows_per_commit,
                rate: None,
                max_seconds: *seconds,
                delete: *delete,
            };
            run.load(conn, plan, &mut sink, step)
        }
        StepKind::ReadWrite {
            query,
            rate,
            seconds,
            rows_per_commit,
            delete,
            time_bound,
        } => {
            if ctx.cfg.secondary_indexes == 0 && *query == QueryKind::Range {
                bail!("range queries need secondary indexes (--secondary-indexes 1..3 and l.x)");
            }
            let rows = ((*rate as f64) * seconds).round().max(1.0) as u64;
            let factor = if *time_bound { 1.0 } else { MAX_STEP_FACTOR };
            let plan = WriterPlan {
                rows,
                rows_per_commit: *rows_per_commit,
                rate: Some(*rate as f64),
                max_seconds: Some(seconds * factor),
                delete: *delete,
            };
            run.read_write(conn, *query, plan, (*seconds, factor), &mut sink, step)
        }
        StepKind::CreateIndexes => create_indexes(ctx, conn, host, step),
        StepKind::Maintenance => {
            let t0 = Stopwatch::start();
            step.maintenance = maintenance::run(ctx, conn)?;
            step.seconds = t0.elapsed_secs();
            step.warnings
                .extend(maintenance::skipped(&step.maintenance));
            Ok(())
        }
    }
}

/// A step whose clients the reporter runs (load, read+write).
struct Run<'a> {
    ctx: &'a StepCtx<'a>,
    name: &'a str,
}

impl Run<'_> {
    /// A load's writers, measured.
    fn load(
        &self,
        conn: &mut dyn crate::dbms::Conn,
        plan: WriterPlan,
        sink: &mut dyn FnMut(&IntervalLine) -> Result<()>,
        step: &mut StepResult,
    ) -> Result<()> {
        let progress = self.progress(&plan);
        let workers = load::workers(self.ctx, plan, &progress);
        measure(
            self.ctx, conn, self.name, workers, &progress, sink, step, &plan,
        )
    }

    /// Read+write: the queries while each client's writer keeps its rate, measured, and the
    /// step cut at `factor` times its planned `seconds` when the writers fell behind.
    fn read_write(
        &self,
        conn: &mut dyn crate::dbms::Conn,
        query: QueryKind,
        plan: WriterPlan,
        (seconds, factor): (f64, f64),
        sink: &mut dyn FnMut(&IntervalLine) -> Result<()>,
        step: &mut StepResult,
    ) -> Result<()> {
        let progress = self.progress(&plan);
        let tally = QueryTally::default();
        let workers = read_write::workers(self.ctx, query, plan, &progress, &tally);
        measure(
            self.ctx, conn, self.name, workers, &progress, sink, step, &plan,
        )?;
        if progress.iter().any(|p| p.cut.load(Ordering::Acquire)) {
            let never: u64 = step.totals.never_started[0];
            step.warnings.push(format!(
                "step stopped at {factor}x its planned {seconds} s before the writers inserted {} rows each; {never} inserts that were due never started (each is in the insert latency with the time from its intended start to the cut-off)",
                plan.rows
            ));
        }
        if self.ctx.target.stores_rows() {
            tally_checks(step, query, &tally);
        }
        Ok(())
    }

    /// Each client's progress through `plan`.
    fn progress(&self, plan: &WriterPlan) -> Vec<ClientProgress> {
        (0..self.ctx.cfg.clients)
            .map(|_| ClientProgress::new(plan.rows, plan.rows_per_commit, plan.delete))
            .collect()
    }
}

/// The create-index step (l.x): each build recorded as it ends (one stopped half way keeps the
/// ones done), the step's time the builds' own, its rate the rows indexed per second.
fn create_indexes(
    ctx: &StepCtx,
    conn: &mut dyn crate::dbms::Conn,
    host: &dyn StepHost,
    step: &mut StepResult,
) -> Result<()> {
    let t0 = Stopwatch::start();
    // Each build is recorded as it ends: one stopped half way keeps the ones done.
    let built = host.build_indexes(ctx, conn, &mut |b| {
        crate::outln!(
            "   {} on {}: {:.2} s, {:.0} rows/s{}",
            b.index,
            b.table,
            b.seconds,
            b.rows_per_sec,
            if b.indexes.len() > 1 {
                format!(" ({} indexes in one statement)", b.indexes.len())
            } else {
                String::new()
            }
        );
        step.index_builds.push(b);
    });
    let builds = &step.index_builds;
    if built.is_ok() && !builds.is_empty() {
        let how = host.describe_builds(builds);
        crate::outln!("   {how}");
        step.description = format!("{}: {how}", step.description);
    }
    // The builds' own time: not the existence checks before them nor the connections
    // the plan's sessions open.
    step.seconds = if builds.is_empty() {
        t0.elapsed_secs()
    } else {
        builds.iter().map(|b| b.seconds).sum()
    };
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
    built
}

/// Run a step's workers, fold what they measured into the step, cross-check the reporter's
/// counts with the writers' own and with the DBMS's row counters.
#[allow(clippy::too_many_arguments)]
fn measure(
    ctx: &StepCtx,
    conn: &mut dyn crate::dbms::Conn,
    name: &str,
    workers: Vec<crate::measure::reporter::Worker<'_>>,
    progress: &[ClientProgress],
    sink: &mut dyn FnMut(&IntervalLine) -> Result<()>,
    step: &mut StepResult,
    plan: &WriterPlan,
) -> Result<()> {
    let counters = row_counters(ctx, conn)?;
    let opts = ReportOptions {
        interval: ctx.cfg.interval,
        stall_timeout: ctx.cfg.stall_timeout,
    };
    // Resources are charged over exactly the workers' window.
    let window = crate::measure::resources::Window::open(ctx.target, conn);
    let m = run_workers(name, opts, ctx.interrupt, workers, sink);
    let stalled = m.stall_timed_out;
    if !stalled {
        step.set_window(window.close(ctx.target, conn));
    }
    let interrupted = ctx.interrupt.load(Ordering::SeqCst);
    flow_stats(step, &m, progress, plan, ctx.cfg.arrivals, interrupted);
    let spans: Vec<f64> = progress.iter().filter_map(|p| p.writer_secs()).collect();
    let writer_secs = (!spans.is_empty()).then(|| spans.iter().sum::<f64>() / spans.len() as f64);
    if let Some(f) = &mut step.flow {
        f.writer_secs = writer_secs;
    }
    absorb(
        step,
        m,
        plan.rows_per_commit,
        plan.rate,
        ctx.cfg.clients,
        writer_secs,
    )?;
    if stalled {
        // The connections were shut down under the workers: nothing more to ask the DBMS.
        return Ok(());
    }
    check_row_counters(ctx, conn, counters, step)
}

/// Create the benchmark tables (PK only), recording them as ixbench's. True when a table left
/// by an earlier run was dropped first.
pub fn create_tables(ctx: &StepCtx, conn: &mut dyn crate::dbms::Conn) -> Result<bool> {
    let names: Vec<&str> = ctx.tables.iter().map(|t| t.name()).collect();
    let what = format!("creating {}", names.join(", "));
    crate::dbms::lock_watch::watched(ctx.target, conn, &what, |conn| create_tables_on(ctx, conn))
}

fn create_tables_on(ctx: &StepCtx, conn: &mut dyn crate::dbms::Conn) -> Result<bool> {
    let at = clock::utc_now().to_rfc3339();
    let kind = ctx.target.kind();
    let mut dropped = false;
    for t in ctx.tables {
        if tables::prepare_new(conn, kind, t.name())? {
            crate::outln!("   dropped {} left by an earlier ixbench run", t.name());
            dropped = true;
        }
        if ctx.target.stores_rows() {
            tables::create_owned(conn, kind, t.name(), &t.sql.create_table(), &at)
                .with_context(|| format!("cannot create table {}", t.name()))?;
        } else {
            conn.execute(&t.sql.create_table())
                .with_context(|| format!("cannot create table {}", t.name()))?;
        }
        t.expected_rows.store(0, Ordering::SeqCst);
        t.delete_from.store(0, Ordering::SeqCst);
    }
    Ok(dropped)
}

/// After a step: self-checks and sizes.
fn finish(
    ctx: &StepCtx,
    conn: &mut dyn crate::dbms::Conn,
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
    // Sizes are a side figure: a failed size query leaves them unknown, with a warning, and
    // never throws away the step's measurement.
    step.sizes = match ctx.target.sizes(conn, &names, detailed) {
        Ok(sizes) => sizes,
        Err(e) => {
            step.warnings.push(format!(
                "sizes unknown: the size query failed: {}",
                crate::format::error_line(&e)
            ));
            Default::default()
        }
    };
    step.warnings.extend(step.sizes.notes.iter().cloned());
    Ok(())
}

/// The resource figures of the metrics line, from what the step's window measured: for
/// every step, however it ended (a step stopped half way has measured its part).
fn resource_figures(spec: &StepSpec, step: &mut StepResult) {
    // Rates over the measured window's own length; per-op figures over its operations.
    let secs = step.window_secs.unwrap_or(step.seconds).max(1e-9);
    let ops = match spec.kind {
        StepKind::ReadWrite { .. } => step.totals.ops[2],
        // rows x indexes: the same figure whether the indexes were built one per statement
        // or several in one
        StepKind::CreateIndexes => step
            .index_builds
            .iter()
            .map(|b| b.rows * b.indexes.len().max(1) as u64)
            .sum(),
        _ => step.totals.rows[0],
    };
    let c = step.client;
    let srv = step.server.clone();
    let s: &mut SummaryLine = &mut step.summary;
    s.client_read_mbps = c.read_bytes as f64 / 1e6 / secs;
    s.client_write_mbps = c.write_call_bytes as f64 / 1e6 / secs;
    s.client_cs_per_sec = c.ctx_switches as f64 / secs;
    s.client_cpu_pct = c.cpu_us() as f64 / 1e4 / secs;
    s.dbgb = step.sizes.database_bytes.map(|b| b as f64 / 1e9);
    // 0: getrusage did not answer, or nothing was measured (the step stopped before)
    s.client_rss_mb = (c.max_rss_bytes > 0).then(|| c.max_rss_bytes as f64 / 1e6);
    s.cpupq = if ops > 0 {
        c.cpu_us() as f64 / ops as f64
    } else {
        0.0
    };
    let per_op =
        |v: Option<u64>, unit: f64| v.filter(|_| ops > 0).map(|v| v as f64 / unit / ops as f64);
    if let Some(srv) = srv {
        s.srv_cpupq = per_op(Some(srv.cpu_us), 1.0);
        s.srv_read_kb_per_op = per_op(srv.read_bytes, 1e3);
        s.srv_write_kb_per_op = per_op(srv.dbms_written_bytes, 1e3);
        s.srv_write_call_kb_per_op = per_op(srv.write_call_bytes, 1e3);
        s.dev_write_kb_per_op = per_op(srv.device.as_ref().map(|d| d.written_bytes), 1e3);
        s.srv_rss_mb = srv.pss_bytes.map(|b| b as f64 / 1e6);
        s.srv_datadir_gb = srv.datadir_bytes.map(|b| b as f64 / 1e9);
    }
    // bytes written as the DBMS counts them, from its own report when /proc was not read
    if s.srv_write_kb_per_op.is_none() {
        let reported = step.server_reported.as_ref().and_then(|r| r.written_bytes);
        step.summary.srv_write_kb_per_op = per_op(reported, 1e3);
    }
}
