//! The run of a workload's step plan (the registry entry's
//! [`crate::workload::runner::Runner::Steps`]: the insert benchmark): its options (`ixbench
//! run`'s under the insert benchmark's heading, [`PlanArgs`], the workload's own), their
//! checks, the plan the workload builds from them, the session (target, results directory,
//! `run.json`, `intervals.ndjson`), each step run and checked in turn, and the close.
//!
//! It lives here, in the steps' layer, because it runs the steps (the workload's own `exec`,
//! on the host [`crate::step::step_host::Steps`]) in a session ([`crate::session`]); what is
//! the insert benchmark's own (its options, steps and their specs, profiles, default rates,
//! plan line, warnings and notes) is in `src/workload/iibench/` (`options.rs`, `plan.rs`, the
//! function the registry entry carries). `ixbench run` only hands it its options
//! ([`StepsIn`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Result};
use serde_json::json;

use crate::dbms::{self, Dbms};
use crate::export::text;
use crate::measure::schedule::Arrivals;
use crate::options::args::{parse_data_length, parse_pragmas, parse_quiet_timeout};
use crate::options::cli::{CommonArgs, MAX_RATE};
use crate::results::store::Store;
use crate::results::RunResult;
use crate::session::check_common;
use crate::session::Session;
use crate::step::step_host::Steps;
use crate::workload::iibench::exec::run_step_from;
use crate::workload::iibench::plan::{
    plan_line, planned_steps, statements_note, PlanFn, PlanIn, PlanParams, StepKind, StepPlan,
    StepSpec,
};
use crate::workload::iibench::steps::{StepConfig, StepCtx};
use crate::workload::iibench::{StatementMode, TableSql, TableState};
use crate::workload::registry::Entry;
use crate::workload::runner::{StepBarrier, StepHost};
use crate::workload::tables;
use crate::workload::tables::CheckedTable;

pub use crate::workload::iibench::options::PlanArgs;

/// What `ixbench run` hands a step plan's run.
pub struct StepsIn<'a> {
    /// The workload's registry entry (its name, notes).
    pub entry: &'a Entry,
    /// The function that builds its plan (the entry's `Runner::Steps`).
    pub plan: PlanFn,
    /// The options every database command shares.
    pub common: &'a CommonArgs,
    /// The plan's own options.
    pub opts: &'a PlanArgs,
    /// `--time`.
    pub time: Option<f64>,
    /// `--interval`, seconds.
    pub interval: f64,
    /// `--max-retries`.
    pub max_retries: u32,
    /// `--arrivals`.
    pub arrivals: Arrivals,
    /// `--stall-timeout`, seconds.
    pub stall_timeout: f64,
}

/// Validated settings of a run.
struct Plan {
    steps: Vec<StepSpec>,
    params: PlanParams,
    step_cfg: StepConfig,
    tables: Vec<String>,
    statements: StatementMode,
    /// Key patterns (`--pk-pattern`, `--index-pattern`) and each table's generators.
    patterns: crate::workload::iibench::steps::key_patterns::RunPatterns,
    table_patterns: Vec<Option<std::sync::Arc<crate::workload::iibench::KeyPatterns>>>,
    /// `--client-id/--client-count`: this process's part of a several-process run.
    part: Option<crate::options::scale::ClientPart>,
    /// `--start-at`, Unix seconds.
    start_at: Option<f64>,
}

impl StepsIn<'_> {
    /// What the workload's plan is built from.
    fn plan_in(&self) -> PlanIn {
        let a = self.opts;
        PlanIn {
            rows: a.rows,
            rows2: a.rows2,
            rows_per_commit: a.rows_per_commit,
            rows_per_commit_i1: a.rows_per_commit_i1,
            rows_per_commit_i2: a.rows_per_commit_i2,
            rw_rows_per_commit: a.rw_rows_per_commit,
            steps: a.steps.clone(),
            profile: a.profile,
            rates: a.rates.clone(),
            query_seconds: a.query_seconds,
            time: self.time,
        }
    }
}

/// Check the options, build the workload's plan from them (`input.plan`) and settle what the
/// steps run with.
fn plan(input: &StepsIn) -> Result<Plan> {
    let args = input.opts;
    let common = input.common;
    // clap bounds these too (crate::options::cli::seconds_in); checked again for callers that build
    // the options themselves.
    if !(args.query_seconds > 0.0 && args.query_seconds <= crate::options::cli::MAX_QUERY_SECONDS) {
        bail!(
            "--query-seconds must be more than 0 and at most {}",
            crate::options::cli::MAX_QUERY_SECONDS
        );
    }
    if !(input.interval >= crate::options::cli::MIN_INTERVAL
        && input.interval <= crate::options::cli::MAX_INTERVAL)
    {
        bail!(
            "--interval must be between {} and {} seconds",
            crate::options::cli::MIN_INTERVAL,
            crate::options::cli::MAX_INTERVAL
        );
    }
    if !(input.stall_timeout >= 0.1 && input.stall_timeout <= 1e6) {
        bail!("--stall-timeout must be between 0.1 and 1000000 seconds");
    }
    // Rates given (a profile's own are in bounds).
    if let Some(r) = args
        .rates
        .iter()
        .flatten()
        .find(|&&r| r == 0 || r > MAX_RATE)
    {
        bail!(
            "--rates {r}: each rate must be between 1 and {} rows/s per client",
            MAX_RATE
        );
    }
    let StepPlan { steps, params } = (input.plan)(&input.plan_in())?;
    let clients = args.clients as usize;
    let part =
        crate::options::scale::ClientPart::new(args.client_id, args.client_count, args.clients)?;
    let tables = crate::options::scale::table_names(
        &common.table_prefix,
        args.clients,
        args.shared_table,
        part.as_ref(),
    )?;
    let start_at = match &args.start_at {
        Some(s) => {
            let at = crate::options::scale::parse_start_at(s)?;
            crate::options::scale::wait_for_start(at)?;
            Some(at)
        }
        None => None,
    };
    check_common(common, &tables)?;
    parse_pragmas(&common.sqlite_pragma)?;
    let step_cfg = StepConfig {
        clients,
        secondary_indexes: args.secondary_indexes as usize,
        seed: match &part {
            Some(p) => p.seed(common.seed),
            None => common.seed,
        },
        data_len: parse_data_length(&common.data_length)?,
        interval: Duration::from_secs_f64(input.interval),
        line_format: args.line_format,
        max_retries: input.max_retries,
        arrivals: input.arrivals,
        stall_timeout: Duration::from_secs_f64(input.stall_timeout),
        quiet_timeout: parse_quiet_timeout(common.quiet_timeout)?,
        query_nice: args.query_nice,
        other_processes: part.as_ref().is_some_and(|p| p.count > 1),
    };
    let patterns = crate::workload::iibench::steps::key_patterns::RunPatterns::parse(
        args.pk_pattern.as_deref(),
        &args.index_pattern,
        step_cfg.secondary_indexes,
    )?;
    patterns.check_steps(&steps)?;
    let keys = crate::workload::iibench::steps::key_patterns::RunPatterns::planned_keys(
        &steps,
        if args.shared_table { clients } else { 1 },
    );
    let table_patterns = (0..tables.len())
        .map(|i| patterns.for_table(step_cfg.seed, i as u64, keys))
        .collect::<Result<Vec<_>>>()?;
    Ok(Plan {
        steps,
        params,
        step_cfg,
        tables,
        statements: args.statements,
        patterns,
        table_patterns,
        part,
        start_at,
    })
}

/// Run the workload's step plan as `input` says. Returns the exit status: 0, or checks failed,
/// or interrupted; errors are returned for the caller to print.
pub fn run(input: &StepsIn, argv: Vec<String>, interrupt: &AtomicBool) -> Result<u8> {
    let plan = plan(input)?;
    let args = input.opts;
    let common = input.common;
    let config = json!({
        "command": "run",
        "target": dbms::redact_url(&common.target),
        "engine": common.engine,
        "steps": plan.steps,
        "profile": args.profile,
        "plan": plan.params,
        "clients": plan.step_cfg.clients,
        "tables": plan.tables,
        "shared_table": args.shared_table,
        "secondary_indexes": plan.step_cfg.secondary_indexes,
        "seed": plan.step_cfg.seed,
        "data_length": [plan.step_cfg.data_len.0, plan.step_cfg.data_len.1],
        "interval_secs": input.interval,
        "line_format": args.line_format,
        "statements": args.statements,
        "max_retries": input.max_retries,
        "arrivals": input.arrivals,
        "stall_timeout_secs": input.stall_timeout,
        "time_secs": input.time,
        "key_patterns": plan.patterns.to_json(),
    });
    crate::progress::start(planned_steps(&plan.steps, plan.step_cfg.clients));
    let mut config = config;
    if let Some(p) = &plan.part {
        config["client_part"] = json!(p);
        config["run_seed"] = json!(common.seed);
    }
    if let Some(at) = plan.start_at {
        config["start_at_unix"] = json!(at);
    }
    // The run key every part derives alike (before the session adds what differs per part).
    let run_key = crate::options::scale::run_key(&config);
    crate::measure::live::set_workload(input.entry.name);
    let mut s = Session::open(common, argv, config)?;
    s.workload_notes((input.entry.notes)(&s.result.target.kind));
    crate::outln!("{}", statements_note(plan.statements));
    crate::outln!("{}", plan_line(&plan.steps, plan.step_cfg.clients));
    for (w, applies_to) in crate::workload::iibench::plan::warnings(&input.plan_in(), &plan.steps) {
        crate::outln!("WARNING: {w}");
        s.result.warnings.push(crate::results::RunWarning {
            warning: w,
            count: 1,
            applies_to,
        });
    }
    print_disk_needed(&plan, &s);
    if let Some(at) = plan.start_at {
        // Connected and ready: wait for the common start (the time was checked in `plan`, but
        // opening the target may have taken it).
        let outcome = crate::options::scale::wait_for_start(at).map(|d| {
            crate::outln!("waiting {:.1} s for --start-at", d.as_secs_f64());
            crate::options::scale::sleep_until_unix(at, interrupt);
        });
        if let Err(e) = outcome {
            let checks_ok = true;
            return s.close(Err(e), interrupt, checks_ok, &[]);
        }
    }
    let mut barrier = match barrier(&plan, input, &s, run_key) {
        Ok(b) => b,
        Err(w) => {
            if let Some(w) = w {
                crate::outln!("WARNING: {w}");
                s.result.warnings.push(crate::results::RunWarning {
                    warning: w,
                    count: 1,
                    applies_to: Vec::new(),
                });
            }
            None
        }
    };
    let outcome = run_steps(
        s.target.as_ref(),
        s.conn.as_mut(),
        &plan,
        &mut s.store,
        &mut s.result,
        interrupt,
        s.cluster.as_ref(),
        barrier.as_mut(),
    );
    let checks_ok = s.result.steps.iter().all(|st| st.checks_ok());
    let steps = crate::export::steps_table(&s.result);
    let mut tables = vec![("steps", steps)];
    if let Some(nodes) = crate::cluster_target::nodes_table(&s.result) {
        tables.push(("nodes", nodes));
    }
    s.close(outcome, interrupt, checks_ok, &tables)
}

/// The barrier this part meets the others at before every step: `Ok(None)` for a run of one
/// process, `Err(Some(warning))` for parts that cannot meet (no `--start-at`, which tells one
/// run from another; or a target that keeps nothing the parts share, the null target).
fn barrier(
    plan: &Plan,
    input: &StepsIn,
    s: &Session,
    key: String,
) -> std::result::Result<Option<crate::step::barrier::Barrier>, Option<String>> {
    let Some(part) = plan.part.filter(|p| p.count > 1) else {
        return Ok(None);
    };
    if plan.start_at.is_none() {
        return Err(Some(format!(
            "--client-count {} without --start-at: the parts do not meet before each step (the \
             start time tells one run from another), so their steps start at different times; \
             `ixbench merge` rates them over the time all parts ran",
            part.count
        )));
    }
    if !s.target.stores_rows() {
        return Err(Some(format!(
            "the {} target keeps nothing the parts share: they do not meet before each step",
            s.target.kind()
        )));
    }
    // Every part's tables, for the one wait for quiet (bounded: a huge run waits over its own).
    let all: Vec<String> = if part.count.saturating_mul(part.clients) <= 4096 {
        (0..part.count)
            .flat_map(|id| {
                let p = crate::options::scale::ClientPart { id, ..part };
                crate::options::scale::table_names(
                    &input.common.table_prefix,
                    part.clients,
                    false,
                    Some(&p),
                )
                .unwrap_or_default()
            })
            .collect()
    } else {
        plan.tables.clone()
    };
    Ok(Some(crate::step::barrier::Barrier::new(
        key,
        part,
        Duration::from_secs(input.opts.barrier_timeout),
        plan.step_cfg.quiet_timeout,
        all,
        s.target.kind(),
    )))
}

/// Print the disk the run needs where the DBMS can tell (SQLite): the most rows its tables
/// hold (l.i0, plus inserts that are not matched by deletes) at the measured bytes per row,
/// plus the WAL bound.
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
    if let Some(note) = s.target.disk_note(
        rows,
        plan.step_cfg.secondary_indexes,
        plan.step_cfg.data_len,
        &s.result.target.settings,
    ) {
        crate::outln!("{note}");
    }
}

#[allow(clippy::too_many_arguments)]
fn run_steps(
    target: &dyn Dbms,
    conn: &mut dyn crate::dbms::Conn,
    plan: &Plan,
    store: &mut Store,
    result: &mut RunResult,
    interrupt: &AtomicBool,
    cluster: Option<&crate::cluster_target::ClusterSession>,
    mut barrier: Option<&mut crate::step::barrier::Barrier>,
) -> Result<()> {
    let r = run_plan_steps(
        target,
        conn,
        plan,
        store,
        result,
        interrupt,
        cluster,
        barrier.as_deref_mut(),
    );
    if let Some(b) = barrier {
        // A part that stops early says so: the others fail at the next step's start at once.
        let stopped = interrupt.load(Ordering::SeqCst) || r.is_err();
        if stopped {
            b.leave(conn);
        }
    }
    r
}

#[allow(clippy::too_many_arguments)]
fn run_plan_steps(
    target: &dyn Dbms,
    conn: &mut dyn crate::dbms::Conn,
    plan: &Plan,
    store: &mut Store,
    result: &mut RunResult,
    interrupt: &AtomicBool,
    cluster: Option<&crate::cluster_target::ClusterSession>,
    mut barrier: Option<&mut crate::step::barrier::Barrier>,
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
    for (t, patterns) in plan.tables.iter().zip(&plan.table_patterns) {
        let sql = match patterns {
            Some(p) => TableSql::with_patterns(t, &dialect, p.clone()),
            None => TableSql::new(t, &dialect),
        }
        .with_statements(plan.statements);
        if creates || !target.stores_rows() {
            states.push(TableState::new(sql, 0, 0));
        } else {
            tables::require_owned(conn, target.kind(), t)?;
            let rows = sql.count_rows(conn)? as i64;
            let min = sql.min_max_ids(conn)?.map(|m| m.0).unwrap_or(0);
            states.push(TableState::new(sql, rows, min));
        }
    }
    // Secondary indexes that exist while a step inserts (for its geek code).
    let mut indexes_present = if creates {
        0
    } else {
        plan.step_cfg.secondary_indexes
    };
    // The oldest rows (and with them a pattern's fence keys) are deleted.
    let mut oldest_deleted = !creates;
    let host = Steps { cluster, interrupt };
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
        crate::progress::step(no);
        // On a cluster every node watched: per-node figures and row checks, a node that leaves.
        let checked: Vec<&dyn CheckedTable> = states.iter().map(|t| t as _).collect();
        let mut step = host.watch_step(&spec.name, &checked, &mut || {
            let barrier = barrier.as_deref_mut().map(|b| b as &mut dyn StepBarrier);
            run_step_from(&ctx, conn, spec, store, &host, barrier)
        });
        if matches!(spec.kind, StepKind::CreateIndexes) {
            indexes_present = plan.step_cfg.secondary_indexes;
        }
        oldest_deleted |= step.totals.rows[1] > 0;
        if step.totals.rows[0] > 0 && step.seconds > 0.0 {
            // The insert benchmark's pdc code depends on the insert rate per table.
            let n = plan.tables.len().max(1) as f64;
            let rows = step.totals.rows[0] as f64 / n;
            let code = plan.patterns.code_line(
                indexes_present,
                rows as u64,
                rows / step.seconds,
                oldest_deleted,
            );
            crate::outln!("geek code: {code}");
            step.geek_code = Some(code);
        }
        let failed = step.error.clone();
        crate::out!("{}", text::step_summary(&step));
        if plan.step_cfg.line_format == crate::measure::interval::LineFormat::V2 {
            // The insert benchmark's own response-time lines, for scripts that read its output.
            crate::out!("{}", crate::export::rt_lines::step_rt_lines(&step));
        }
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
