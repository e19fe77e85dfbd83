//! `ixbench run`: plan the steps, open the target and the results directory, run each step,
//! check it, and keep `run.json` and `intervals.ndjson` up to date as it goes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::json;

use crate::cli::{CommonArgs, RunArgs};
use crate::export::text;
use crate::measure::histogram::summarize;
use crate::measure::interval::{rate_at_rank, IntervalLine};
use crate::measure::meter::OpKind;
use crate::measure::reporter::{run_workers, Measured, ReportOptions};
use crate::measure::resources::WindowCost;
use crate::measure::sys::{HostInfo, ProcSnapshot};
use crate::results::store::Store;
use crate::results::{Check, OpLatency, RunResult, Status, StepResult, SummaryLine};
use crate::step::create_index::CostSource;
use crate::step::load::{ClientProgress, WriterPlan};
use crate::step::read_write::QueryTally;
use crate::step::{
    check_plans, check_rows, create_index, load, maintenance, parse_steps, profile_steps,
    read_write, tables, PlanParams, Profile, QueryKind, StepConfig, StepCtx, StepKind, StepSpec,
    TableState, RATES_2020,
};
use crate::target::{self, Target, TargetOptions, TargetSpec};
use crate::workload::iibench::TableSql;

/// A read+write step is stopped at this multiple of its planned time when its writers cannot
/// keep their rate (it would otherwise run until they inserted all their rows).
pub const MAX_STEP_FACTOR: f64 = 3.0;

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
}

/// Check `--quiet-timeout` (seconds, 0 = no wait).
pub fn parse_quiet_timeout(secs: f64) -> Result<Duration> {
    if !(0.0..=86_400.0).contains(&secs) {
        bail!("--quiet-timeout must be between 0 and 86400 seconds");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parse `--data-length MIN..MAX`.
pub fn parse_data_length(s: &str) -> Result<(usize, usize)> {
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

/// Check the options every database command shares against the target they name, before
/// anything is created: options that would be silently ignored on this target are errors, and
/// the tables' names (and the index names derived from them) must fit the DBMS's identifier
/// limit.
pub fn check_common(common: &CommonArgs, tables: &[String]) -> Result<()> {
    let spec = TargetSpec::parse(&common.target)?;
    if let Some(engine) = &common.engine {
        if spec.kind != "mysql" {
            bail!(
                "--engine {engine} is for MySQL/MariaDB targets; {} has no storage engine to choose",
                if spec.kind == "postgres" { "PostgreSQL" } else { spec.kind.as_str() }
            );
        }
    }
    if common.rm && !spec.needs_server() {
        bail!("--rm removes the data directory of the server ixbench starts for --target postgres or mariadb; this target has none");
    }
    if !common.sqlite_pragma.is_empty() && spec.kind != "sqlite" {
        bail!(
            "--sqlite-pragma is for SQLite targets; this target is {}",
            spec.kind
        );
    }
    tables::validate_names(&spec.kind, tables)
}

fn plan(args: &RunArgs) -> Result<Plan> {
    // clap bounds these too (crate::cli::seconds_in); checked again for callers that build
    // RunArgs themselves.
    if !(args.query_seconds > 0.0 && args.query_seconds <= crate::cli::MAX_QUERY_SECONDS) {
        bail!(
            "--query-seconds must be more than 0 and at most {}",
            crate::cli::MAX_QUERY_SECONDS
        );
    }
    if !(args.interval >= crate::cli::MIN_INTERVAL && args.interval <= crate::cli::MAX_INTERVAL) {
        bail!(
            "--interval must be between {} and {} seconds",
            crate::cli::MIN_INTERVAL,
            crate::cli::MAX_INTERVAL
        );
    }
    if !(args.stall_timeout >= 0.1 && args.stall_timeout <= 1e6) {
        bail!("--stall-timeout must be between 0.1 and 1000000 seconds");
    }
    let rates = match &args.rates {
        Some(r) => r.clone(),
        None if args.profile == Profile::P2020 => RATES_2020.to_vec(),
        None => vec![100, 500, 1000],
    };
    if let Some(r) = rates.iter().find(|&&r| r == 0 || r > crate::cli::MAX_RATE) {
        bail!(
            "--rates {r}: each rate must be between 1 and {} rows/s per client",
            crate::cli::MAX_RATE
        );
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
        .map(|i| format!("{}{i}", args.common.table_prefix))
        .collect();
    check_common(&args.common, &tables)?;
    parse_pragmas(&args.common.sqlite_pragma)?;
    let step_cfg = StepConfig {
        clients,
        secondary_indexes: args.secondary_indexes as usize,
        seed: args.common.seed,
        data_len: parse_data_length(&args.common.data_length)?,
        interval: Duration::from_secs_f64(args.interval),
        line_format: args.line_format,
        max_retries: args.max_retries,
        arrivals: args.arrivals,
        stall_timeout: Duration::from_secs_f64(args.stall_timeout),
        quiet_timeout: parse_quiet_timeout(args.common.quiet_timeout)?,
    };
    Ok(Plan {
        steps,
        params,
        step_cfg,
        tables,
    })
}

/// What every command that works on a database holds: the results directory, the target, a
/// control connection, and the result that is kept on disk as the command goes.
pub struct Session {
    /// The results directory.
    pub store: Store,
    /// The database.
    pub target: Box<dyn Target>,
    /// A connection for DDL, checks and counters (workers have their own).
    pub conn: Box<dyn crate::target::Conn>,
    /// What is written to run.json.
    pub result: RunResult,
    /// The throwaway server ixbench started for this command, if any.
    pub server: Option<crate::server::RunningServer>,
    /// Remove the throwaway server's data directory at the end.
    rm: bool,
}

/// Parse `--set NAME=VALUE` options.
pub fn parse_settings(list: &[String]) -> Result<Vec<(String, String)>> {
    list.iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .filter(|(k, _)| !k.is_empty())
                .with_context(|| format!("invalid --set {p:?}: expected NAME=VALUE"))
        })
        .collect()
}

/// Start the throwaway server a bare `--target postgres|mariadb` asks for, with its data
/// directory in the results directory when the server's OS user can reach it.
fn start_server(
    spec: &TargetSpec,
    store: &Store,
    settings: Vec<(String, String)>,
) -> Result<crate::server::RunningServer> {
    use crate::server::{reachable_datadir, start, ServerKind, ServerOptions};
    let kind = if spec.kind == "postgres" {
        ServerKind::Postgres
    } else {
        ServerKind::Mariadb
    };
    let preferred = std::path::absolute(store.dir().join(format!("{}-data", kind.name())))?;
    let (datadir, why) = reachable_datadir(kind, &preferred);
    if let Some(why) = why {
        crate::outln!(
            "note: server data directory in {} ({why})",
            datadir.display()
        );
    }
    let t0 = Instant::now();
    let server = start(
        kind,
        &ServerOptions {
            datadir,
            port: None,
            settings,
        },
    )?;
    crate::outln!(
        "started {} on port {} in {:.1} s, data directory {} (ixbench stops it at the end; if ixbench is killed: ixbench server stop {})",
        kind.product(),
        server.port,
        t0.elapsed().as_secs_f64(),
        server.datadir.display(),
        server.datadir.display()
    );
    Ok(server)
}

/// Parse `--sqlite-pragma NAME=VALUE` options.
pub fn parse_pragmas(list: &[String]) -> Result<Vec<(String, String)>> {
    let mut pragmas = Vec::new();
    for p in list {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("invalid --sqlite-pragma {p:?}: expected NAME=VALUE"))?;
        let (k, v) = (k.trim().to_string(), v.trim().to_string());
        crate::target::sqlite::validate_pragma(&k, &v)?;
        pragmas.push((k, v));
    }
    Ok(pragmas)
}

impl Session {
    /// Create the results directory, open the target and print the header. When the target
    /// cannot be opened, the new results directory is removed again and the error returned.
    pub fn open(
        common: &CommonArgs,
        argv: Vec<String>,
        config: serde_json::Value,
    ) -> Result<Session> {
        let pragmas = parse_pragmas(&common.sqlite_pragma)?;
        let settings = parse_settings(&common.set)?;
        let mut spec = TargetSpec::parse(&common.target)?;
        if !settings.is_empty() && !spec.needs_server() {
            bail!(
                "--set configures the server ixbench starts for --target postgres or mariadb; \
                 set {} yourself on this target",
                settings[0].0
            );
        }
        let now = chrono::Utc::now();
        let store = Store::create(
            common.out.as_deref(),
            &now.format("%Y%m%d-%H%M%S").to_string(),
        )?;
        let mut server = None;
        if spec.needs_server() {
            match start_server(&spec, &store, settings) {
                Ok(s) => {
                    // With the generated password: never printed (the location has none).
                    spec.url = Some(s.url_with_password());
                    server = Some(s);
                }
                Err(e) => {
                    store.discard();
                    return Err(e);
                }
            }
        }
        let opened = target::open(
            &spec,
            &TargetOptions {
                engine: common.engine.clone(),
                sqlite_pragmas: pragmas,
                default_sqlite_path: Some(store.dir().join("ixbench.sqlite")),
                connect_timeout: Some(Duration::from_secs_f64(common.connect_timeout)),
                // A throwaway server is ixbench's to change; any other only when asked.
                server_changes: server.is_some() || common.allow_server_changes,
            },
        )
        .and_then(|t| {
            let mut c = t.connect()?;
            let info = t.info(c.as_mut())?;
            Ok((t, c, info))
        });
        let (target, conn, info) = match opened {
            Ok(v) => v,
            Err(e) => {
                // Nothing was measured: leave no empty results directory behind.
                if let Some(srv) = server {
                    let _ = srv.stop_and_remove();
                }
                store.discard();
                return Err(e);
            }
        };
        crate::out!(
            "{}",
            text::run_header(&info, &store.dir().display().to_string())
        );
        let result = RunResult {
            schema_version: crate::results::SCHEMA_VERSION,
            ixbench_version: env!("CARGO_PKG_VERSION").to_string(),
            // A password given in a URL must not reach the results.
            command_line: argv.iter().map(|a| target::redact_url(a)).collect(),
            started_at: now.to_rfc3339(),
            finished_at: None,
            status: Status::Running,
            error: None,
            config,
            target: info,
            host: HostInfo::gather(),
            steps: Vec::new(),
            builds: Vec::new(),
            strategies: Vec::new(),
            warnings: Vec::new(),
        };
        store.write_run(&result)?;
        Ok(Session {
            store,
            target,
            conn,
            result,
            server,
            rm: common.rm,
        })
    }

    /// Record how the command ended, write run.json and the `tables` (name, table) as CSV and
    /// Markdown, print them and where the results are. Returns the exit status, or the
    /// command's error for the caller to print.
    pub fn close(
        mut self,
        outcome: Result<()>,
        interrupt: &AtomicBool,
        checks_ok: bool,
        tables: &[(&str, crate::export::Table)],
    ) -> Result<u8> {
        self.result.finished_at = Some(chrono::Utc::now().to_rfc3339());
        let code = match &outcome {
            // Stopped (Ctrl-C, SIGTERM, SIGHUP): an error the stop caused (a cancelled
            // statement) is part of the interruption, not a failure.
            _ if interrupt.load(Ordering::SeqCst) => {
                self.result.status = Status::Interrupted;
                crate::stop::exit_code()
            }
            Ok(()) if checks_ok => {
                self.result.status = Status::Ok;
                0
            }
            Ok(()) => {
                self.result.status = Status::ChecksFailed;
                EXIT_CHECKS_FAILED
            }
            Err(e) => {
                self.result.status = Status::Failed;
                self.result.error = Some(format!("{e:#}"));
                1
            }
        };
        // Stop the throwaway server before reporting, so its data directory is complete.
        drop(self.conn);
        drop(self.target);
        if let Some(srv) = self.server.take() {
            let dir = srv.datadir.clone();
            let stopped = if self.rm {
                srv.stop_and_remove()
            } else {
                srv.stop()
            };
            match stopped {
                Ok(()) if self.rm => {
                    crate::outln!("stopped the server and removed {}", dir.display())
                }
                Ok(()) => crate::outln!(
                    "stopped the server; its data directory is {}",
                    dir.display()
                ),
                Err(e) => note(&format!("ixbench: warning: stopping the server: {e:#}")),
            }
        }
        // Errors name the target (without any password).
        let location = self.result.target.location.clone();
        let outcome = outcome.map_err(|e| e.context(format!("target {location}")));
        if let Err(e) = &outcome {
            self.result.error = Some(format!("{e:#}"));
        }
        let outcome = match outcome {
            Err(_) if self.result.status == Status::Interrupted => Ok(()),
            other => other,
        };
        self.store.write_run(&self.result)?;
        self.store.write_file(
            "report.html",
            &crate::export::html::report(&self.result, tables),
        )?;
        for (name, t) in tables {
            self.store
                .write_file(&format!("{name}.csv"), &crate::export::csv::render(t))?;
            self.store
                .write_file(&format!("{name}.md"), &crate::export::markdown::render(t))?;
            crate::out!("\n{}", text::table(t));
        }
        crate::outln!("results: {}", self.store.dir().display());
        match self.result.status {
            Status::ChecksFailed => note("ixbench: self-checks failed (see CHECK FAILED above)"),
            Status::Interrupted => note(&format!(
                "ixbench: interrupted; finished work is in {}",
                self.store.dir().display()
            )),
            _ => {}
        }
        outcome.map(|_| code)
    }
}

/// Print a line to stderr, ignoring errors (after SIGHUP the terminal may be gone, and
/// `eprintln!` would panic before the results are saved).
fn note(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Run the insert benchmark as `args` says. Returns the exit status: 0, or
/// [`EXIT_CHECKS_FAILED`], or [`EXIT_INTERRUPTED`]; errors are returned for the caller to print.
pub fn run(args: &RunArgs, argv: Vec<String>, interrupt: &AtomicBool) -> Result<u8> {
    let plan = plan(args)?;
    let config = json!({
        "command": "run",
        "target": target::redact_url(&args.common.target),
        "engine": args.common.engine,
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
        "arrivals": args.arrivals,
        "stall_timeout_secs": args.stall_timeout,
    });
    let mut s = Session::open(&args.common, argv, config)?;
    if s.target.kind() == "sqlite" {
        print_disk_needed(&plan, &s);
    }
    let outcome = run_steps(
        s.target.as_ref(),
        s.conn.as_mut(),
        &plan,
        &mut s.store,
        &mut s.result,
        interrupt,
    );
    let checks_ok = s.result.steps.iter().all(|st| st.checks_ok());
    let steps = crate::export::steps_table(&s.result);
    s.close(outcome, interrupt, checks_ok, &[("steps", steps)])
}

/// Print the disk an SQLite run needs: the most rows its tables hold (l.i0, plus inserts that
/// are not matched by deletes) at the measured bytes per row, plus the WAL bound.
fn print_disk_needed(plan: &Plan, s: &Session) {
    let per_client: u64 = plan
        .steps
        .iter()
        .map(|st| match st.kind {
            StepKind::Load {
                rows,
                delete: false,
                ..
            } => rows,
            _ => 0,
        })
        .sum();
    let rows = per_client.saturating_mul(plan.step_cfg.clients as u64);
    let limit = target::sqlite::wal_limit_of(&s.result.target.settings);
    let (need, per_row) = target::sqlite::disk_needed(
        rows,
        plan.step_cfg.secondary_indexes,
        plan.step_cfg.data_len,
        limit,
    );
    let size = |b: f64| {
        if b >= 1e9 {
            format!("{:.2} GB", b / 1e9)
        } else {
            format!("{:.0} MB", (b / 1e6).ceil())
        }
    };
    let db = size(rows as f64 * per_row);
    match (need, limit) {
        (Some(n), Some(l)) => crate::outln!(
            "disk: this run needs about {}: {rows} rows x {per_row:.0} bytes/row (measured) = \
             {db} of database, and the WAL kept under {} (1.5 x journal_size_limit {l})",
            size(n as f64),
            size(l as f64 * target::sqlite::WAL_BOUND_FACTOR)
        ),
        _ => crate::outln!(
            "disk: {db} of database ({rows} rows x {per_row:.0} bytes/row, measured) and an \
             UNBOUNDED WAL (journal_size_limit < 0): l.i1/l.i2 can grow it to many times the \
             database"
        ),
    }
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
            tables::require_owned(conn, target.kind(), t)?;
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
        crate::outln!(
            "\n== {}: {}",
            spec.name,
            spec.describe(plan.step_cfg.clients)
        );
        let step = run_step(&ctx, conn, spec, store);
        let failed = step.error.clone();
        crate::out!("{}", text::step_summary(&step));
        result.steps.push(step);
        store.write_run(result)?;
        if interrupt.load(Ordering::SeqCst) {
            break;
        }
        if let Some(e) = failed {
            bail!("step {} failed: {e}", spec.name);
        }
    }
    Ok(())
}

/// Run one step and check it; never returns an error: a failure is recorded in the step.
pub(crate) fn run_step(
    ctx: &StepCtx,
    conn: &mut dyn crate::target::Conn,
    spec: &StepSpec,
    store: &mut Store,
) -> StepResult {
    let mut step = StepResult::new(&spec.name, &spec.describe(ctx.cfg.clients));
    // Background work left from before (compactions, purge, autovacuum, the last step's WAL)
    // must not slow this step down: wait for it outside the measurement.
    if let Err(e) = wait_quiet(ctx, conn, "step", &mut step) {
        step.status = Status::Failed;
        step.error = Some(format!("waiting for the server to be quiet: {e:#}"));
        return step;
    }
    ctx.target.take_wal_peak();
    // The whole step, for what it used outside its measured window (set-up and checks).
    let server = match CostSource::for_target(ctx.target) {
        CostSource::Embedded => CostSource::None,
        other => other,
    };
    let server_before = server.sample();
    let before = ProcSnapshot::now();
    let t0 = Instant::now();
    let r = execute(ctx, conn, spec, store, &mut step);
    if step.seconds == 0.0 {
        step.seconds = t0.elapsed().as_secs_f64();
    }
    let whole_since = |server_before: &Option<crate::measure::sys::ServerCounters>| WindowCost {
        seconds: t0.elapsed().as_secs_f64(),
        client: ProcSnapshot::now().since(&before),
        server: match (server_before, server.sample()) {
            (Some(a), Some(b)) => Some(b.since(a)),
            _ => None,
        },
    };
    if step.window_secs.is_none() && !step.index_builds.is_empty() {
        // l.x: the builds' windows, added.
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
        // No narrower window (maint, or a step that failed before its workers): the step's
        // work is charged, its checks are not.
        let w = whole_since(&server_before);
        step.client = w.client;
        step.server = w.server;
    }
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
    match r {
        // Stopped: what failed was cut off (a cancelled statement, an index build left out).
        Err(e) if ctx.interrupt.load(Ordering::SeqCst) => {
            step.status = Status::Interrupted;
            step.warnings.push(format!("interrupted: {e:#}"));
        }
        Err(e) => {
            step.status = Status::Failed;
            step.error = Some(format!("{e:#}"));
        }
        Ok(()) if crate::stop::hurried() => {
            step.status = Status::Interrupted;
            step.warnings
                .push("stopped twice: the step's checks and sizes were skipped".into());
        }
        Ok(()) => {
            if let Err(e) = finish(ctx, conn, spec, &mut step) {
                if ctx.interrupt.load(Ordering::SeqCst) {
                    step.status = Status::Interrupted;
                    step.warnings
                        .push(format!("interrupted during the checks: {e:#}"));
                } else {
                    step.status = Status::Failed;
                    step.error = Some(format!("{e:#}"));
                }
            } else if ctx.interrupt.load(Ordering::SeqCst) {
                step.status = Status::Interrupted;
            } else if step.checks_ok() {
                step.status = Status::Ok;
            } else {
                step.status = Status::ChecksFailed;
            }
        }
    }
    if windowed {
        // Set-up and checks: the whole step, its checks included, minus the window.
        let inner = WindowCost {
            seconds: step.window_secs.unwrap_or(0.0),
            client: step.client,
            server: step.server.clone(),
        };
        step.outside = Some(whole_since(&server_before).minus(&inner));
    }
    step
}

/// Wait (at most `--quiet-timeout`) until the server is quiet, record the wait in the step,
/// print a line when it took noticeable time or found work going on, and warn when the
/// timeout ran out.
pub(crate) fn wait_quiet(
    ctx: &StepCtx,
    conn: &mut dyn crate::target::Conn,
    when: &str,
    step: &mut StepResult,
) -> Result<()> {
    let w = match quiet_wait(ctx.target, conn, ctx.tables, ctx.cfg.quiet_timeout, when) {
        Ok(Some(w)) => w,
        Ok(None) => return Ok(()),
        // Watching is a side query: measure anyway, and say the server was not watched.
        Err(e) => {
            let w = format!("could not watch the server for quiet before the {when}: {e:#}");
            crate::outln!("   WARNING: {w}");
            step.warnings.push(w);
            return Ok(());
        }
    };
    if w.timed_out {
        step.warnings.push(quiet_warning(&w));
    }
    step.quiet.push(w);
    Ok(())
}

/// One wait for quiet, printed as it ends when it mattered; `None` when the target has nothing
/// to wait for or `timeout` is 0.
pub(crate) fn quiet_wait(
    target: &dyn Target,
    conn: &mut dyn crate::target::Conn,
    tables: &[TableState],
    timeout: Duration,
    when: &str,
) -> Result<Option<crate::target::QuietWait>> {
    if timeout.is_zero() {
        return Ok(None);
    }
    let names: Vec<String> = tables.iter().map(|t| t.name().to_string()).collect();
    // The server's CPU, when it runs on this machine (not for an embedded DBMS: that is us).
    let cost = match CostSource::for_target(target) {
        CostSource::Embedded => CostSource::None,
        other => other,
    };
    // CPU used by the server's processes since the wait began (µs, ns-resolution counters).
    let base = cost.sample();
    let cpu = || match (&base, cost.sample()) {
        (Some(a), Some(b)) => Some(b.since(a).cpu_us),
        _ => None,
    };
    let Some(mut w) = target::wait_quiet(target, conn, &names, timeout, &cpu)? else {
        return Ok(None);
    };
    w.when = when.to_string();
    if w.timed_out {
        crate::outln!("   {}", quiet_warning(&w));
    } else if !w.busy_at_start.is_empty() || w.server_cpu_busy || w.seconds >= 2.0 {
        let what = if !w.busy_at_start.is_empty() {
            w.busy_at_start.join(", ")
        } else if w.server_cpu_busy {
            "server CPU busy".to_string()
        } else {
            "background writes".to_string()
        };
        crate::outln!(
            "   waited {:.1} s before the {when} for the server to be quiet ({what})",
            w.seconds
        );
    }
    Ok(Some(w))
}

pub(crate) fn quiet_warning(w: &crate::target::QuietWait) -> String {
    format!(
        "SERVER NOT QUIET: still busy after {:.0} s (--quiet-timeout) before the {}: {}; \
         figures may include its background work",
        w.seconds,
        w.when,
        w.busy_at_end.join(", ")
    )
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
            crate::outln!("{}", IntervalLine::header(fmt));
        }
        printed += 1;
        crate::outln!("{}", l.format(fmt));
        let mut l = l.clone();
        l.wal_bytes = ctx.target.wal_bytes();
        store.append_interval(&l)
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
                if create_tables(ctx, conn)? {
                    // Dropping a big table leaves the server busy (MyRocks removes its
                    // indexes in the background).
                    wait_quiet(
                        ctx,
                        conn,
                        "load, after dropping a table left by an earlier run",
                        step,
                    )?;
                }
            } else if *delete && ctx.target.stores_rows() {
                load::ensure_rows_to_delete(ctx, conn)?;
            }
            let plan = WriterPlan {
                rows: *rows,
                rows_per_commit: *rows_per_commit,
                rate: None,
                max_seconds: None,
                delete: *delete,
            };
            let progress: Vec<ClientProgress> = (0..clients)
                .map(|_| ClientProgress::new(*rows, *rows_per_commit, *delete))
                .collect();
            let workers = load::workers(ctx, plan, &progress);
            measure(
                ctx, conn, &spec.name, workers, &progress, &mut sink, step, &plan,
            )
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
                max_seconds: Some(seconds * MAX_STEP_FACTOR),
                delete: *delete,
            };
            let progress: Vec<ClientProgress> = (0..clients)
                .map(|_| ClientProgress::new(rows, *rows_per_commit, *delete))
                .collect();
            let tally = QueryTally::default();
            let workers = read_write::workers(ctx, *query, plan, &progress, &tally);
            measure(
                ctx, conn, &spec.name, workers, &progress, &mut sink, step, &plan,
            )?;
            if progress.iter().any(|p| p.cut.load(Ordering::Acquire)) {
                let never: u64 = step.totals.never_started[0];
                step.warnings.push(format!(
                    "step stopped at {MAX_STEP_FACTOR}x its planned {seconds} s before the writers inserted {rows} rows each; {never} inserts that were due never started (each is in the insert latency with the time from its intended start to the cut-off)"
                ));
            }
            if ctx.target.stores_rows() {
                tally_checks(step, *query, &tally);
            }
            Ok(())
        }
        StepKind::CreateIndexes => {
            let t0 = Instant::now();
            let builds = create_index::run(ctx, conn, &mut |b| {
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
            })?;
            if !builds.is_empty() {
                let how = create_index::describe_builds(&builds);
                crate::outln!("   {how}");
                step.description = format!("{}: {how}", step.description);
            }
            // The builds' own time: not the existence checks before them nor the connections
            // the plan's sessions open.
            step.seconds = if builds.is_empty() {
                t0.elapsed().as_secs_f64()
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
            step.index_builds = builds;
            Ok(())
        }
        StepKind::Maintenance => {
            let t0 = Instant::now();
            step.maintenance = maintenance::run(ctx, conn)?;
            step.seconds = t0.elapsed().as_secs_f64();
            step.warnings
                .extend(maintenance::skipped(&step.maintenance));
            Ok(())
        }
    }
}

/// Run a step's workers, fold what they measured into the step, cross-check the reporter's
/// counts with the writers' own and with the DBMS's row counters.
#[allow(clippy::too_many_arguments)]
fn measure(
    ctx: &StepCtx,
    conn: &mut dyn crate::target::Conn,
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

/// Record the step's stalls, the inserters' waits for their deleters and the table size's
/// excursions, with their self-checks: the reporter's interval sums equal the writers' own
/// counts, every latency histogram holds one value per operation (completed or never
/// started), and with deletes each client's inserts and deletes stayed within one batch.
fn flow_stats(
    step: &mut StepResult,
    m: &Measured,
    progress: &[ClientProgress],
    plan: &WriterPlan,
    arrivals: crate::measure::schedule::Arrivals,
    interrupted: bool,
) {
    let per = plan.rows_per_commit.max(1) as u64;
    let mut f = crate::results::FlowStats {
        longest_stall_secs: m.longest_stall_secs,
        stalled_lines: m.stalled_lines,
        stall_timed_out: m.stall_timed_out,
        arrivals: plan.rate.map(|_| arrivals),
        ..Default::default()
    };
    for p in progress {
        f.insert_wait_secs += p.insert_wait_ns.load(Ordering::Relaxed) as f64 / 1e9;
        f.insert_waits += p.insert_waits.load(Ordering::Relaxed);
    }
    let inserted: u64 = progress.iter().map(|p| p.inserted()).sum();
    step.checks.push(Check {
        name: "interval_sums".into(),
        ok: inserted == m.totals.rows[0],
        detail: format!(
            "the interval lines add up to {} rows inserted; the inserters counted {inserted}",
            m.totals.rows[0]
        ),
    });
    for kind in OpKind::ALL {
        let k = kind.idx();
        let want = m.totals.ops[k] + m.totals.never_started[k];
        let have = m.hists[k].as_ref().map_or(0, |h| h.latency.len());
        if want > 0 || have > 0 {
            step.checks.push(Check {
                name: "histogram_counts".into(),
                ok: have == want,
                detail: format!(
                    "{} latency histogram holds {have} values for {} operations and {} never started",
                    kind.name(),
                    m.totals.ops[k],
                    m.totals.never_started[k]
                ),
            });
        }
    }
    if plan.delete {
        let (ex, de) = progress
            .iter()
            .map(|p| p.max_excess())
            .fold((0, 0), |(a, b), (x, y)| (a.max(x), b.max(y)));
        f.max_excess_rows = Some(ex);
        f.max_deficit_rows = Some(de);
        let deleted: u64 = progress.iter().map(|p| p.deleted()).sum();
        // A deleter may be one batch ahead when its inserter is cut off at 3x the planned
        // time (it cannot know that no more rows will come): within one batch per client.
        let cut = progress.iter().any(|p| p.cut.load(Ordering::Acquire));
        let slack = if cut { per * progress.len() as u64 } else { 0 };
        let all_deleted =
            deleted.abs_diff(inserted) <= slack || interrupted || !m.errors.is_empty();
        step.checks.push(Check {
            name: "table_size".into(),
            ok: ex <= per && de <= per && all_deleted,
            detail: format!(
                "each client's inserts ran at most {ex} rows ahead of its deletes and its deletes at most {de} rows ahead (limit: one batch, {per} rows); {deleted} rows deleted for {inserted} inserted (limit: equal, or {slack} apart after a cut-off)"
            ),
        });
    }
    if m.stalled_lines > 0 || m.stall_timed_out {
        step.warnings.push(format!(
            "STALLED: no operation completed for {:.1} s ({} interval lines marked STALLED)",
            m.longest_stall_secs, m.stalled_lines
        ));
    }
    step.flow = Some(f);
}

/// The DBMS's own row counters before a step's workers start.
fn row_counters(
    ctx: &StepCtx,
    conn: &mut dyn crate::target::Conn,
) -> Result<Option<crate::target::RowCounters>> {
    let names: Vec<String> = ctx.tables.iter().map(|t| t.name().to_string()).collect();
    ctx.target.row_counters(conn, &names)
}

/// Compare the DBMS's counts of rows inserted and deleted during the step with ixbench's.
fn check_row_counters(
    ctx: &StepCtx,
    conn: &mut dyn crate::target::Conn,
    before: Option<crate::target::RowCounters>,
    step: &mut StepResult,
) -> Result<()> {
    // A second stop request skips the checks (PostgreSQL's counters may take seconds).
    let Some(before) = before.filter(|_| !crate::stop::hurried()) else {
        return Ok(());
    };
    let Some(after) = row_counters(ctx, conn)? else {
        return Ok(());
    };
    let ins = after.inserted.saturating_sub(before.inserted);
    let del = after.deleted.saturating_sub(before.deleted);
    let (want_ins, want_del) = (step.totals.rows[0], step.totals.rows[1]);
    step.checks.push(Check {
        name: "dbms_counters".into(),
        ok: ins == want_ins && del == want_del,
        detail: format!(
            "the DBMS counted {ins} rows inserted and {del} deleted; ixbench {want_ins} and {want_del}"
        ),
    });
    Ok(())
}

/// Create the benchmark tables (PK only), recording them as ixbench's. True when a table left
/// by an earlier run was dropped first.
pub(crate) fn create_tables(ctx: &StepCtx, conn: &mut dyn crate::target::Conn) -> Result<bool> {
    let at = chrono::Utc::now().to_rfc3339();
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

/// Fold what the workers measured into the step result; a worker error fails the step.
fn absorb(
    step: &mut StepResult,
    m: Measured,
    rows_per_commit: usize,
    rate: Option<f64>,
    clients: usize,
    writer_secs: Option<f64>,
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
        // Over the time the throttled inserters' rows were due in (from their schedules'
        // origins until they stopped), not the step's: a writer's phase and its deleter's last
        // batch are not time it had to insert in.
        let wsecs = writer_secs.unwrap_or(secs).max(1e-9);
        let achieved = m.totals.rows[0] as f64 / clients as f64 / wsecs;
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
        if name == "reporter" {
            return Err(e);
        }
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
    // Sizes are a side figure: a failed size query leaves them unknown, with a warning, and
    // never throws away the step's measurement.
    step.sizes = match ctx.target.sizes(conn, &names, detailed) {
        Ok(sizes) => sizes,
        Err(e) => {
            step.warnings.push(format!(
                "sizes unknown: the size query failed: {}",
                crate::step::one_line(&e)
            ));
            Default::default()
        }
    };
    step.warnings.extend(step.sizes.notes.iter().cloned());
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
    s.client_rss_mb = c.max_rss_bytes as f64 / 1e6;
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
    Ok(())
}
