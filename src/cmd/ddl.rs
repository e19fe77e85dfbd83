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

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::json;

use crate::dbms::ddl::{dialect_for, DdlDialect, DdlKind, DdlPlan, DdlRequest, IndexSpec};
use crate::dbms::{Conn, Dbms, KnobScope};
use crate::deadline::Since;
use crate::export::ddl as tables_out;
use crate::measure::clock::Stopwatch;
use crate::measure::windows::analyse;
use crate::options::cli::OnError;
#[allow(unused_imports)]
use crate::options::cli::*;
use crate::results::ddl::{DdlPoint, DdlRunResult, Probe, TimelineRow};
use crate::results::Check;
use crate::session::Session;
use crate::step::create_index::CostSource;
use crate::step::online_ddl::{run_load, DdlJob, LoadSpec};
use crate::step::schema_tools::{count_rows, row_check, Methods, RowCounting};
use crate::step::sweep::{apply_server_knobs, knob_label, knob_scopes, same_value};
use crate::step::sweep::{grid, parse_knob, KnobAxis};
use crate::workload::registry::{self, DdlLoad};
use crate::workload::Workload;
use clap::Args;

/// Longest wait for a lock of ixbench's clean-up statements (dropping an INVALID index, the
/// index just built), seconds: a long transaction must not hang the run.
const CLEANUP_LOCK_WAIT: u32 = 10;
/// How long the driver waits for a server that went away during a point to come back.
const RECONNECT_WAIT: Duration = Duration::from_secs(60);
/// The column `--ddl add-column` adds.
const ADDED_COLUMN: &str = "ixb_added";
/// Fewest transactions an interval chosen by ixbench holds at the offered rate (fewer make a
/// per-interval p99 the largest of a handful).
const MIN_TXNS_PER_INTERVAL: f64 = 20.0;
/// The intervals ixbench chooses from, seconds.
const INTERVAL_STEPS: [f64; 5] = [0.1, 0.2, 0.25, 0.5, 1.0];
/// A probe whose per-interval TPS varies more than this (coefficient of variation) ran on a
/// machine that was not steady: its ceiling, and the rate taken from it, are uncertain.
const PROBE_UNSTEADY: f64 = 0.25;

/// The timeline's interval for a point, and how it was chosen: `--interval`; else a tenth of
/// the DDL's length at an earlier point (`ddl_secs`), never finer than an interval in which
/// the offered `rate` completes [`MIN_TXNS_PER_INTERVAL`] transactions, at most 1 s; with no
/// earlier DDL, that finest interval.
pub fn choose_interval(
    given: Option<f64>,
    rate: Option<f64>,
    ddl_secs: Option<f64>,
) -> (f64, String) {
    if let Some(v) = given {
        return (v, "--interval".into());
    }
    let step_at_least = |v: f64| {
        INTERVAL_STEPS
            .iter()
            .copied()
            .find(|s| *s >= v - 1e-9)
            .unwrap_or(1.0)
    };
    let finest = match rate.filter(|r| *r > 0.0) {
        Some(r) => step_at_least(MIN_TXNS_PER_INTERVAL / r),
        None => 1.0,
    };
    let rate_text = rate.map_or(String::new(), |r| {
        format!("the finest in which {r:.0} TPS completes {MIN_TXNS_PER_INTERVAL:.0} transactions")
    });
    match ddl_secs.filter(|s| *s > 0.0) {
        Some(d) => {
            let want = INTERVAL_STEPS
                .iter()
                .rev()
                .copied()
                .find(|s| *s <= d / 10.0 + 1e-9)
                .unwrap_or(INTERVAL_STEPS[0]);
            let v = want.max(finest);
            let why = if v > want {
                rate_text
            } else {
                format!("a tenth of the {d:.2} s DDL at the point before, at most 1 s")
            };
            (v, why)
        }
        None => (finest, rate_text),
    }
}

/// The indexes of `--columns` (or the plan's column): `c,pad` is two indexes, `a+b` one on two
/// columns; named `<table>_<cols>_ixb`.
pub fn index_specs(table: &str, columns: &[String], unique: bool) -> Result<Vec<IndexSpec>> {
    let mut out = Vec::new();
    for c in columns {
        let cols: Vec<String> = c
            .split('+')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect();
        if cols.is_empty() {
            bail!("--columns has an empty entry");
        }
        for col in &cols {
            crate::dbms::ddl::check_ident(col).with_context(|| format!("--columns {c:?}"))?;
        }
        let name = format!("{table}_{}_ixb", cols.join("_"));
        if out.iter().any(|i: &IndexSpec| i.name == name) {
            bail!("--columns names {c} twice");
        }
        out.push(IndexSpec {
            table: table.into(),
            name,
            columns: cols,
            unique,
        });
    }
    if out.is_empty() {
        bail!("--columns is empty");
    }
    Ok(out)
}

/// The options of the load around the schema change.
fn ddl_load(args: &DdlArgs) -> DdlLoad {
    DdlLoad {
        tables: args.tables,
        table_size: args.table_size,
        threads: args.threads,
        rand_type: args.rand_type,
        seed: args.common.seed,
    }
}

/// The registered workload `name` (an OLTP mix, the insert benchmark, the time series).
fn workload_entry(name: &str) -> Result<registry::Entry> {
    match registry::parse_arg(name) {
        Ok(n) => Ok(registry::find(&n).expect("a parsed workload is registered")),
        Err(e) => bail!(
            "{}",
            e.replacen("unknown workload", "unknown --workload", 1)
        ),
    }
}

/// Run `ixbench ddl`.
pub fn run(args: &DdlArgs, argv: Vec<String>, interrupt: &AtomicBool) -> Result<u8> {
    crate::cluster_target::refuse_sharded(&args.common.target, "ddl")?;
    if args.reuse {
        crate::dbms::require_existing_database(&args.common.target, "--reuse")?;
    }
    if let Some(h) = args.recovery_hold.filter(|h| *h > args.recovery_seconds) {
        bail!(
            "--recovery-hold {h} is longer than --recovery-seconds {}: the run would end before \
             the load could hold the band that long",
            args.recovery_seconds
        );
    }
    let axes: Vec<KnobAxis> = args
        .knobs
        .iter()
        .map(|k| parse_knob(k))
        .collect::<Result<_>>()?;
    let names: Vec<String> = axes.iter().map(|a| a.name.clone()).collect();
    crate::session::check_knob_names(&args.common, &names)?;
    let (plan_workload, plan_column) = args.plan.workload_and_column();
    let workload_name = args.workload.clone().unwrap_or(plan_workload.into());
    let entry = workload_entry(&workload_name)?;
    let workload_name = entry.name.to_string();
    let target = entry.ddl_target;
    // The plan's column where the plan's table is the workload's; else the workload's own.
    let plan_table = workload_entry(plan_workload)?.ddl_target.table;
    let default_column = if plan_table == target.table {
        plan_column
    } else {
        target.column
    };
    let columns = args
        .columns
        .clone()
        .unwrap_or_else(|| vec![default_column.to_string()]);
    let indexes = index_specs(target.table, &columns, args.unique)?;
    let load = ddl_load(args);
    let tables = (entry.ddl_tables)(&load);
    if args.tables > 1 && tables.len() == 1 {
        bail!("--tables does not apply to --workload {workload_name}: it has one table");
    }
    crate::session::check_common(&args.common, &tables)?;
    let quiet_timeout = crate::options::args::parse_quiet_timeout(args.common.quiet_timeout)?;
    // The methods' programs are found (and their versions checked) before anything starts.
    let methods = Methods::from_args(&args.method, &args.method_opt, args.ddl_command.as_deref())?;
    methods.check_embedded(&args.common.target, args.ddl)?;
    let req = DdlRequest {
        kind: args.ddl,
        lock: args.lock,
        table: target.table.into(),
        pk: target.pk.into(),
        indexes: if matches!(args.ddl, DdlKind::AddIndex | DdlKind::DropIndex) {
            indexes
        } else {
            Vec::new()
        },
        column: ADDED_COLUMN.into(),
    };
    let config = json!({
        "command": "ddl",
        "target": crate::dbms::redact_url(&args.common.target),
        "engine": args.common.engine,
        "plan": args.plan.name(),
        "workload": workload_name,
        "ddl": args.ddl.name(),
        "lock": format!("{:?}", args.lock).to_lowercase(),
        "columns": columns,
        "unique": args.unique,
        "tables": args.tables,
        "table_size": args.table_size,
        "reuse": args.reuse,
        "reload": args.reload,
        "threads": args.threads,
        "rate": args.rate,
        "rate_fraction": args.rate_fraction,
        "probe_seconds": args.probe_seconds,
        "baseline_seconds": args.baseline_seconds,
        "recovery_seconds": args.recovery_seconds,
        "recovery_hold": args.recovery_hold,
        "interval": args.interval,
        "ddl_timeout": args.ddl_timeout,
        "ddl_retries": args.ddl_retries,
        "knobs": axes.iter().map(|a| json!({"name": a.name, "values": a.values})).collect::<Vec<_>>(),
        "on_error": format!("{:?}", args.on_error).to_lowercase(),
        "max_retries": args.max_retries,
        "arrivals": format!("{:?}", args.arrivals).to_lowercase(),
        "seed": args.common.seed,
        "methods": methods.config(),
    });
    {
        // Each point is a baseline, the DDL and a recovery: at least the two windows.
        use crate::progress::{start, Planned};
        let mut planned = Vec::new();
        if !args.reuse {
            planned.push(("load".to_string(), Planned::Unknown));
        }
        if args.rate.is_none() {
            planned.push(("probe".to_string(), Planned::Seconds(args.probe_seconds)));
        }
        let n = grid(&axes).len() * methods.list.len();
        for p in 1..=n {
            planned.push((format!("point {p}/{n}"), Planned::Unknown));
        }
        start(planned);
    }
    let mut s = Session::open(&args.common, argv, config)?;
    let mut d = Driver {
        args,
        axes,
        req,
        workload: entry,
        load,
        interrupt,
        quiet_timeout,
        stopped_for_loss: Default::default(),
        methods,
        last_ddl_secs: Default::default(),
    };
    let outcome = d.go(&mut s);
    if let Some(r) = s.result.ddl.as_mut() {
        r.judge();
    }
    let ddl = s.result.ddl.clone().unwrap_or_default();
    let checks_ok = ddl.points.iter().all(|p| p.checks.iter().all(|c| c.ok));
    let failed: Vec<&DdlPoint> = ddl.points.iter().filter(|p| p.error.is_some()).collect();
    let outcome = match outcome {
        Ok(()) if !failed.is_empty() && args.on_error == OnError::Stop => Err(anyhow::anyhow!(
            "{}",
            failed[0].error.clone().unwrap_or_default()
        )),
        other => other,
    };
    let mut out = Vec::new();
    if !ddl.points.is_empty() {
        out.push(("ddl", tables_out::points_table(&ddl, &d.axes)));
        out.push(("ddl_windows", tables_out::windows_table(&ddl, &d.axes)));
        if !d.methods.only_native() {
            out.push((
                "ddl_methods",
                crate::export::schema_tools::methods_table(&ddl, &d.axes),
            ));
        }
    }
    if let Some(nodes) = crate::cluster_target::nodes_table(&s.result) {
        out.push(("nodes", nodes));
    }
    let code = s.close(outcome, interrupt, checks_ok, &out)?;
    Ok(verdict_exit(code, &ddl, args))
}

/// The exit status of a run that ended with `code` (0: it ran to its end): the verdict's when
/// the run ended, by the one verdict model, REGRESSION exiting 0 unless
/// `--fail-on-regression` (a DDL normally dips its load: a measuring run must not fail on it),
/// FAILED (4) and NO VERDICT (5) unless `--pass-on` lets them pass. Any other end keeps its own
/// status (1 an error, 2 failed checks, a signal's).
fn verdict_exit(code: u8, ddl: &DdlRunResult, args: &DdlArgs) -> u8 {
    if code != 0 || ddl.points.is_empty() {
        return code;
    }
    let mut pass = args.pass.pass_on.clone();
    if !args.fail_on_regression {
        pass.push(crate::results::verdict::PassOn::Regression);
    }
    let states: Vec<_> = ddl.points.iter().map(|p| p.judge().0).collect();
    let exit = crate::results::verdict::exit_status(states.iter().copied(), &pass);
    // the state that gave the exit status, and its points
    if let Some(st) = crate::results::verdict::State::ALL
        .into_iter()
        .find(|s| exit != 0 && s.exit_status() == exit)
    {
        let points: Vec<String> = (1..=states.len())
            .filter(|n| states[n - 1] == st)
            .map(|n| n.to_string())
            .collect();
        crate::outln!(
            "ixbench: ddl: {st} (point {}): exit status {exit} (docs/ddl.md, \"States\"; \
             --pass-on lets a state exit 0)",
            points.join(", ")
        );
    }
    exit
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

/// Run statements, ignoring errors (the clean-up of what an earlier point or run left).
fn run_quietly(conn: &mut dyn Conn, stmts: &[String]) {
    for s in stmts {
        let _ = conn.execute(s);
    }
}

impl Driver<'_> {
    fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::SeqCst)
    }

    fn go(&mut self, s: &mut Session) -> Result<()> {
        let args = self.args;
        // CockroachDB's server_version names PostgreSQL: recognise it by its version().
        let version = crate::dbms::ddl::distributed::full_version(
            s.target.kind(),
            s.conn.as_mut(),
            &s.result.target.version,
        );
        let dialect = dialect_for(s.target.kind(), &version, s.result.target.engine.as_deref())?;
        let plan = dialect.plan(&self.req)?;
        // Knobs first: an unknown one stops the command before anything is loaded.
        let tidb_knobs = self
            .axes
            .iter()
            .all(|a| dialect.global_knob_sql(&a.name, &a.values[0]).is_some());
        let scopes = if tidb_knobs {
            vec![KnobScope::Global; self.axes.len()]
        } else {
            knob_scopes(
                &self.axes,
                s.target.as_ref(),
                s.conn.as_mut(),
                s.server.is_some(),
            )?
        };
        crate::outln!(
            "\n{} {}: {}",
            dialect.name(),
            self.req.kind.name(),
            plan.statements.join("; ")
        );
        crate::outln!(
            "   {}: {}",
            if plan.online { "online" } else { "BLOCKING" },
            plan.lock
        );
        for n in &plan.notes {
            crate::outln!("   note: {n}");
        }
        // The server's major version, for a method's figures (pg_repack's WAL on PostgreSQL).
        let pg_major = s.target.major_version().unwrap_or(0);
        let engine = s
            .result
            .target
            .engine
            .clone()
            .unwrap_or_else(|| "InnoDB".into());
        if !self.methods.only_native() {
            let notes = self.methods.prepare(
                s.conn.as_mut(),
                s.target.kind(),
                dialect.name(),
                self.req.kind,
                s.server.is_some(),
            )?;
            crate::outln!(
                "methods: {}",
                self.methods
                    .list
                    .iter()
                    .map(|m| m.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for n in notes {
                crate::outln!("   {n}");
            }
        }
        let workload = self.workload.ddl_workload(&self.load, s.target.as_ref())?;
        // Its committed rows are counted: the tables must hold them after every change.
        let workload = RowCounting::new(workload.as_ref());
        let mut result = DdlRunResult {
            dialect: dialect.name().into(),
            workload: workload.name().to_string(),
            plan: args.plan.name().into(),
            request: Some(self.req.clone()),
            statements: plan.clone(),
            threads: args.threads as usize,
            ..Default::default()
        };
        s.result.ddl = Some(result.clone());
        s.store.write_run(&s.result)?;
        if args.reuse {
            crate::outln!("\nreusing {}", workload.tables().join(", "));
            for t in workload.tables() {
                crate::workload::tables::require_owned(s.conn.as_mut(), s.target.kind(), &t)
                    .with_context(|| format!("cannot reuse {t}"))?;
            }
            let table = &self.req.table;
            let rows = s.conn.query_i64(&format!("SELECT COUNT(*) FROM {table}"))?;
            crate::outln!("   {table}: {} rows", rows.unwrap_or(0));
        } else {
            crate::outln!(
                "\n== load: {} tables of {} rows ({})",
                args.tables,
                args.table_size,
                workload.name()
            );
            let t0 = Stopwatch::start();
            crate::progress::step_named("load");
            let wait = crate::progress::waiting("the load");
            workload
                .load(s.target.as_ref(), args.threads as usize)
                .context("loading the workload's tables")?;
            drop(wait);
            crate::outln!("   loaded in {:.1} s", t0.elapsed_secs());
        }
        // What an earlier, interrupted run may have left: the index, the column.
        if let Some(sql) = dialect.lock_timeout_sql(CLEANUP_LOCK_WAIT) {
            s.conn.execute(&sql)?;
        }
        run_quietly(s.conn.as_mut(), &plan.undo);
        let left = self.drop_invalid(dialect.as_ref(), s.conn.as_mut(), &mut Vec::new());
        if let Some((i, e)) = left.first() {
            bail!(
                "the INVALID index {i} on {} could not be dropped: {e}",
                self.req.table
            );
        }
        if self.interrupted() {
            return Ok(());
        }
        let stop_on_error = args.on_error == OnError::Stop;
        let mut rate = args.rate;
        // The probe: the load's ceiling, closed loop.
        match args.rate {
            Some(r) => {
                result.rate = Some(r);
                result.rate_source = "--rate".into();
                crate::outln!("\noffered rate {r:.1} TPS (--rate)");
            }
            None => {
                crate::progress::step_named("probe");
                crate::outln!(
                    "\n== probe: {} threads as fast as they can for {} s (closed loop)",
                    args.threads,
                    args.probe_seconds
                );
                // Whole seconds, or quarter seconds for a short probe (the first second warms
                // up and is left out when there is more).
                let probe_interval = if args.probe_seconds >= 5.0 { 1.0 } else { 0.25 };
                let spec = self.load_spec(
                    s.target.as_ref(),
                    &workload,
                    None,
                    Duration::from_secs_f64(probe_interval),
                );
                let run = run_load(
                    &spec,
                    0,
                    Some(Duration::from_secs_f64(args.probe_seconds)),
                    None,
                    &mut |_, _| {},
                )?;
                let skip = if args.probe_seconds > 2.0 { 1.0 } else { 0.0 };
                let secs: Vec<_> = run
                    .intervals
                    .iter()
                    .filter(|x| x.t >= skip - 1e-6)
                    .collect();
                let txns: u64 = secs.iter().map(|x| x.txns).sum();
                let queries: u64 = secs.iter().map(|x| x.queries).sum();
                let n: f64 = secs.iter().map(|x| x.secs).sum::<f64>().max(1e-9);
                let whole: Vec<f64> = secs
                    .iter()
                    .filter(|x| x.secs >= 0.5 * probe_interval)
                    .map(|x| x.tps())
                    .collect();
                let spread = (whole.len() >= 3).then(|| {
                    let mean = whole.iter().sum::<f64>() / whole.len() as f64;
                    let var =
                        whole.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / whole.len() as f64;
                    if mean > 0.0 {
                        var.sqrt() / mean
                    } else {
                        0.0
                    }
                });
                let probe = Probe {
                    seconds: n,
                    txns,
                    tps: txns as f64 / n,
                    qps: queries as f64 / n,
                    tps_spread: spread,
                    interval_s: Some(probe_interval),
                };
                if let Some(e) = run.foreground_error {
                    bail!("the probe failed: {e}");
                }
                if probe.tps <= 0.0 {
                    bail!(
                        "the probe completed no transaction in {} s",
                        args.probe_seconds
                    );
                }
                let offered = probe.tps * args.rate_fraction;
                crate::outln!(
                    "   {:.1} TPS, {:.1} QPS closed loop; offered rate {offered:.1} TPS ({:.0}% of the probe; --rate to choose)",
                    probe.tps,
                    probe.qps,
                    args.rate_fraction * 100.0
                );
                result.rate = Some(offered);
                result.rate_source = format!(
                    "{:.0}% of the probe's {:.1} TPS",
                    args.rate_fraction * 100.0,
                    probe.tps
                );
                if let Some(cv) = probe.tps_spread.filter(|c| *c > PROBE_UNSTEADY) {
                    let w = format!(
                        "the probe was not steady: its TPS varied by {:.0}% (coefficient of \
                         variation) between intervals; the machine may have been busy, so its \
                         ceiling and the {offered:.1} TPS offered from it are uncertain",
                        cv * 100.0
                    );
                    crate::outln!("   WARNING: {w}");
                    result.warnings.push(w);
                }
                result.probe = Some(probe);
                rate = Some(offered);
            }
        }
        s.result.ddl = Some(result.clone());
        s.store.write_run(&s.result)?;
        let base = s
            .server
            .as_ref()
            .map(|v| v.settings.clone())
            .unwrap_or_default();
        let grid_points = grid(&self.axes);
        // Every knob point once per method, the methods one after the other.
        let points: Vec<(crate::dbms::ddl::tools::Method, &Vec<(String, String)>)> = self
            .methods
            .list
            .iter()
            .flat_map(|m| grid_points.iter().map(move |p| (*m, p)))
            .collect();
        let total = points.len();
        let mut previous = None;
        for (pi, (method, point)) in points.into_iter().enumerate() {
            if self.interrupted() {
                return Ok(());
            }
            if args.reload && previous.is_some_and(|m| m != method) {
                crate::outln!("\n== load again for --method {} (--reload)", method.name());
                let t0 = Stopwatch::start();
                let wait = crate::progress::waiting("the load");
                workload
                    .load(s.target.as_ref(), args.threads as usize)
                    .context("loading the workload's tables again")?;
                drop(wait);
                crate::outln!("   loaded in {:.1} s", t0.elapsed_secs());
            }
            previous = Some(method);
            let mut label = knob_label(point);
            if !self.methods.only_native() {
                label = if label.is_empty() {
                    format!("--method {}", method.name())
                } else {
                    format!("--method {}, {label}", method.name())
                };
            }
            crate::progress::step_named(&format!("point {}/{total}", pi + 1));
            crate::outln!(
                "\n== point {}/{total}{}",
                pi + 1,
                if label.is_empty() {
                    String::new()
                } else {
                    format!(": {label}")
                }
            );
            let p = self.point(
                s,
                dialect.as_ref(),
                &plan,
                &workload,
                rate,
                pi,
                point,
                &scopes,
                &base,
                (method, &engine, pg_major),
            );
            for l in tables_out::point_text(&p) {
                crate::outln!("   {l}");
            }
            if let Some(l) = crate::export::schema_tools::method_line(&p) {
                crate::outln!("   {l}");
            }
            let failed = p.error.clone();
            result.points.push(p);
            s.result.ddl = Some(result.clone());
            s.store.write_run(&s.result)?;
            if self.stopped_for_loss.get() {
                bail!("{}", failed.unwrap_or_default());
            }
            if failed.is_some() && stop_on_error {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The load: the run's threads, retries and arrivals at `rate` (`None`: closed loop),
    /// measured in intervals of `interval`.
    fn load_spec<'b>(
        &'b self,
        target: &'b dyn Dbms,
        workload: &'b dyn Workload,
        rate: Option<f64>,
        interval: Duration,
    ) -> LoadSpec<'b> {
        LoadSpec {
            target,
            workload,
            threads: self.args.threads as usize,
            rate,
            arrivals: self.args.arrivals,
            seed: self.args.common.seed,
            max_retries: self.args.max_retries,
            stop_on_error: self.args.on_error == OnError::Stop,
            interval,
            interrupt: self.interrupt,
        }
    }

    /// Report and drop INVALID indexes on the table (a failed CONCURRENTLY build), waiting at
    /// most [`CLEANUP_LOCK_WAIT`] seconds for locks; returns those that could not be dropped,
    /// with why.
    fn drop_invalid(
        &self,
        dialect: &dyn DdlDialect,
        conn: &mut dyn Conn,
        dropped: &mut Vec<String>,
    ) -> Vec<(String, String)> {
        let mut left = Vec::new();
        if let Some(sql) = dialect.lock_timeout_sql(CLEANUP_LOCK_WAIT) {
            let _ = conn.execute(&sql);
        }
        match dialect.invalid_indexes(conn, &self.req.table) {
            Err(e) => left.push((
                "(unknown)".into(),
                format!(
                    "cannot look for INVALID indexes: {}",
                    crate::out::one_line(&e)
                ),
            )),
            Ok(inv) => {
                for i in inv {
                    crate::outln!(
                        "   INVALID index {i} on {} (a failed online build): dropping it",
                        self.req.table
                    );
                    match conn.execute(&dialect.drop_index_sql(&self.req.table, &i, true)) {
                        Ok(()) => dropped.push(i),
                        Err(e) => left.push((i, crate::out::one_line(&e))),
                    }
                }
            }
        }
        left
    }

    /// Knobs of a point: server-wide ones by a restart (or TiDB's SET GLOBAL), session ones
    /// checked on a connection of their own; returns (session knobs, effective values,
    /// warnings).
    #[allow(clippy::type_complexity)]
    fn apply_knobs(
        &self,
        s: &mut Session,
        dialect: &dyn DdlDialect,
        point: &[(String, String)],
        scopes: &[KnobScope],
        base: &[(String, String)],
    ) -> Result<(Vec<(String, String)>, Vec<(String, String)>, Vec<String>)> {
        let mut session = Vec::new();
        let mut effective = Vec::new();
        let mut warnings = Vec::new();
        let tidb: Vec<String> = point
            .iter()
            .filter_map(|(k, v)| dialect.global_knob_sql(k, v))
            .collect();
        if !tidb.is_empty() && tidb.len() == point.len() {
            for sql in &tidb {
                s.conn.execute(sql)?;
            }
            for (k, v) in point {
                effective.push((k.clone(), v.clone()));
            }
            return Ok((session, effective, warnings));
        }
        apply_server_knobs(s, point, scopes, base)?;
        let target = s.target.as_ref();
        let mut probe: Option<Box<dyn Conn>> = None;
        for ((k, v), scope) in point.iter().zip(scopes) {
            let now = if *scope == KnobScope::Session {
                session.push((k.clone(), v.clone()));
                let mut c = match probe.take() {
                    Some(c) => c,
                    None => target.connect()?,
                };
                let now = target.set_session_knob(c.as_mut(), k, v)?;
                probe = Some(c);
                now
            } else {
                target.knob_value(s.conn.as_mut(), k)?
            };
            if !same_value(v, &now) {
                warnings.push(format!("{k}: asked {v}, the DBMS reports {now}"));
            }
            effective.push((k.clone(), now));
        }
        Ok((session, effective, warnings))
    }

    /// Wait (at most --quiet-timeout) for the server to finish the background work of the
    /// load or the last point.
    fn wait_quiet(&self, s: &mut Session) {
        if self.quiet_timeout.is_zero() {
            return;
        }
        let target = s.target.as_ref();
        let cost = match CostSource::for_target(target) {
            CostSource::Embedded => CostSource::None,
            other => other,
        };
        let base = cost.sample();
        let cpu = || match (&base, cost.sample()) {
            (Some(a), Some(b)) => Some(b.since(a).cpu_us),
            _ => None,
        };
        let tables = vec![self.req.table.clone()];
        match crate::dbms::wait_quiet(
            target,
            s.conn.as_mut(),
            &tables,
            self.quiet_timeout,
            &cpu,
            &crate::measure::clock::Figures,
        ) {
            Ok(Some(w)) if w.timed_out => {
                crate::outln!("   {}", crate::step::exec::quiet_warning(&w))
            }
            Ok(Some(w)) if w.seconds >= 2.0 => {
                crate::outln!("   waited {:.1} s for the server to be quiet", w.seconds)
            }
            Ok(_) => {}
            Err(e) => crate::outln!("   WARNING: could not watch the server for quiet: {e:#}"),
        }
    }

    /// One knob point: knobs, setup, the load with the DDL, checks, undo.
    #[allow(clippy::too_many_arguments)]
    fn point(
        &self,
        s: &mut Session,
        dialect: &dyn DdlDialect,
        plan: &DdlPlan,
        workload: &RowCounting,
        rate: Option<f64>,
        pi: usize,
        point: &[(String, String)],
        scopes: &[KnobScope],
        base: &[(String, String)],
        (method, engine, pg_major): (crate::dbms::ddl::tools::Method, &str, u32),
    ) -> DdlPoint {
        let mut p = DdlPoint {
            knobs: point.to_vec(),
            offered_tps: rate,
            ..Default::default()
        };
        let (session_knobs, effective, warnings) =
            match self.apply_knobs(s, dialect, point, scopes, base) {
                Ok(v) => v,
                Err(e) => {
                    p.error = Some(format!(
                        "knob {}: {}",
                        knob_label(point),
                        crate::out::one_line(&e)
                    ));
                    return p;
                }
            };
        p.knobs = effective;
        for w in warnings {
            crate::outln!("   WARNING: {w}");
        }
        for st in &plan.setup {
            if let Err(e) = s.conn.execute(st) {
                p.error = Some(format!("setting up ({st}): {}", crate::out::one_line(&e)));
                return p;
            }
        }
        self.wait_quiet(s);
        // The method (a tool, a user's command, or the plan's statements) and its plan.
        let (runner, method_plan) = match self.methods.runner(
            method,
            s.target.as_ref(),
            &self.req,
            plan,
            engine,
            pg_major,
            s.store.dir(),
            pi,
        ) {
            Ok(v) => v,
            Err(e) => {
                p.error = Some(crate::out::one_line(&e));
                run_quietly(s.conn.as_mut(), &plan.undo);
                return p;
            }
        };
        let plan = &method_plan;
        if !self.methods.only_native() {
            crate::outln!("   {}: {}", method.name(), plan.statements.join("; "));
        }
        let tables = workload.tables();
        let rows_before = count_rows(s.conn.as_mut(), &tables);
        let counted: &RowCounting = workload;
        let job = DdlJob {
            dialect,
            plan,
            req: &self.req,
            session_knobs: &session_knobs,
            baseline: Duration::from_secs_f64(self.args.baseline_seconds),
            recovery: Duration::from_secs_f64(self.args.recovery_seconds),
            timeout: Duration::from_secs_f64(self.args.ddl_timeout),
            max_retries: self.args.ddl_retries,
            hook: Some(&runner),
        };
        counted.reset();
        let (interval, why) = choose_interval(self.args.interval, rate, self.last_ddl_secs.get());
        p.interval_s = Some(interval);
        p.interval_source = why;
        crate::outln!(
            "   {} threads at {} TPS; the DDL after {} s, then {} s of recovery; a line every {interval} s ({}){}",
            self.args.threads,
            rate.map(|r| format!("{r:.1}"))
                .unwrap_or_else(|| "max".into()),
            self.args.baseline_seconds,
            self.args.recovery_seconds,
            p.interval_source,
            tables_out::text_note(interval)
        );
        crate::outln!("{}", tables_out::timeline_header());
        let target_spec = self.load_spec(
            s.target.as_ref(),
            workload,
            rate,
            Duration::from_secs_f64(interval),
        );
        let store = &mut s.store;
        let mut store_err = None;
        let mut text = tables_out::TextTimeline::default();
        let mut body = || {
            run_load(
                &target_spec,
                pi,
                None,
                Some(&job),
                &mut |r: &TimelineRow, line: Option<&TimelineRow>| {
                    for l in text.push(r, line) {
                        crate::outln!("{l}");
                    }
                    if let Err(e) = store.append_json(r) {
                        store_err.get_or_insert(e);
                    }
                },
            )
        };
        // On a Galera cluster every node is watched: per-node figures, a node that leaves
        // (the load's clients on it fail over; the DDL's session on it fails the DDL).
        let (run, watched) = match s.cluster.as_ref().filter(|c| c.is_galera()) {
            Some(c) => match c.watch(self.interrupt, &|| 0u64, body) {
                Ok((r, w)) => (r, Some(w)),
                Err(e) => (Err(e), None),
            },
            None => (body(), None),
        };
        for l in text.finish() {
            crate::outln!("{l}");
        }
        if let Some(e) = store_err {
            crate::outln!("   WARNING: {e:#}");
        }
        let mut stopped_for_loss = None;
        let mut ddl_node_lost = None;
        if let Some(mut w) = watched {
            let moved = run.as_ref().map(|r| r.reconnects).unwrap_or(0);
            w.moves = moved;
            if w.nodes.iter().filter(|n| n.lost.is_some()).count() == 1 {
                for l in w.nodes.iter_mut().filter_map(|n| n.lost.as_mut()) {
                    l.connections_moved = Some(moved);
                }
            }
            crate::out!("{}", crate::cluster_target::node_lines(&w.nodes));
            stopped_for_loss = w.stop_error();
            if let Some(l) = w.loss_warning() {
                crate::outln!("   WARNING: {l}");
                p.warnings.push(l);
            }
            // The DDL's session is on the entry: the entry's node leaving is the DDL's.
            ddl_node_lost = w.nodes.iter().find_map(|n| {
                let l = n.lost.as_ref()?;
                l.entry_moved_to.as_ref().map(|_| {
                    format!(
                        "its session's node {} left the cluster at {} ({:.1} s into the point: {})",
                        n.role, l.at, l.secs_into_step, l.how
                    )
                })
            });
            p.nodes = w.nodes;
        }
        let run = match run {
            Ok(r) => r,
            Err(e) => {
                p.error = Some(crate::out::one_line(&e));
                return p;
            }
        };
        let o = run.ddl.clone().unwrap_or_default();
        if let (Some(st), Some(en)) = (o.started_s, o.ended_s) {
            p.impact = Some(analyse(
                &run.intervals,
                st,
                en,
                rate,
                self.args.recovery_hold,
            ));
        }
        if o.error.is_none() {
            if let Some(secs) = o.seconds {
                self.last_ddl_secs.set(Some(secs));
            }
        }
        p.behind_at_end = run.behind;
        p.reconnects = run.reconnects;
        p.foreground_error = run.foreground_error.clone();
        p.timeline = run.rows;
        let mut dropped = o.invalid_dropped.clone();
        // Reconnect when the server went away meanwhile (a restart during the DDL): for up to
        // RECONNECT_WAIT while it comes back.
        if s.conn.query_rows("SELECT 1").is_err() {
            let t0 = Since::start();
            loop {
                match s.target.connect_admin() {
                    Ok(c) => {
                        s.conn = c;
                        crate::outln!("   reconnected to the server");
                        break;
                    }
                    Err(e) if t0.so_far() >= RECONNECT_WAIT => {
                        crate::outln!("   WARNING: cannot reconnect to the server: {e:#}");
                        break;
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(250)),
                }
            }
        }
        for (i, e) in self.drop_invalid(dialect, s.conn.as_mut(), &mut dropped) {
            p.checks.push(Check {
                name: "invalid index".into(),
                ok: false,
                detail: if i == "(unknown)" {
                    e
                } else {
                    format!(
                        "{i} was left INVALID by the failed online build and could not be dropped (drop it yourself): {e}"
                    )
                },
            });
        }
        for i in &dropped {
            p.checks.push(Check {
                name: "invalid index".into(),
                ok: true,
                detail: format!("{i} was left INVALID by the failed online build; dropped"),
            });
        }
        p.ddl = o;
        p.ddl.invalid_dropped = dropped;
        // The server's error code, when it gave one.
        let code = p.ddl.error_code.clone().filter(|c| c != "other");
        if let Some(e) = &stopped_for_loss {
            self.stopped_for_loss.set(true);
            p.error = Some(e.clone());
        } else if p.ddl.timed_out && p.ddl.error.is_some() {
            // ixbench's own cancel: the DBMS's error only says a user cancelled it.
            p.error = Some(format!(
                "the DDL ran past --ddl-timeout {} s and was cancelled (after {:.1} s{}); \
                 raise --ddl-timeout, or see what it waited for in the timeline's waits",
                self.args.ddl_timeout,
                p.ddl.seconds.unwrap_or(0.0),
                code.as_ref()
                    .map(|c| format!("; the server's error {c}"))
                    .unwrap_or_default(),
            ));
        } else if let Some(e) = &p.ddl.error {
            p.error = Some(format!(
                "the DDL failed{} after {:.1} s: {e}{}",
                code.as_ref()
                    .map(|c| format!(" (error {c})"))
                    .unwrap_or_default(),
                p.ddl.seconds.unwrap_or(0.0),
                ddl_node_lost
                    .as_ref()
                    .map(|l| format!(" ({l})"))
                    .unwrap_or_default()
            ));
        } else if p.ddl.started_s.is_none() {
            p.error = Some(match &p.foreground_error {
                Some(e) => format!("the DDL did not start: {e}"),
                None => "the DDL did not start (interrupted)".into(),
            });
        } else {
            p.checks.extend(dialect.verify(s.conn.as_mut(), &self.req));
        }
        // Every row the workload committed is there, whatever the method did (a trigger-based
        // copy must lose none written during the copy).
        let net = counted.net();
        let rows_after = (!crate::stop::hurried())
            .then(|| count_rows(s.conn.as_mut(), &tables))
            .flatten();
        if !crate::stop::hurried() {
            p.checks
                .push(row_check(&tables, rows_before, net, rows_after));
        }
        let outcome = runner.outcome(s.conn.as_mut(), (rows_before, Some(net), rows_after));
        for l in &outcome.left_behind {
            p.checks.push(Check {
                name: "left behind".into(),
                ok: false,
                detail: format!("the method's program left {l}"),
            });
        }
        p.method = Some(outcome);
        if p.error.is_none() {
            if let Some(e) = &p.foreground_error {
                p.error = Some(e.clone());
            }
        }
        for c in p.checks.iter().filter(|c| !c.ok) {
            crate::outln!("   CHECK FAILED: {}", c.detail);
        }
        run_quietly(s.conn.as_mut(), &plan.undo);
        p.ok = p.error.is_none() && p.checks.iter().all(|c| c.ok);
        p
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
