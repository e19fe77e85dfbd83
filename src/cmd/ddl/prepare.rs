//! `ixbench ddl`'s preparation: the dialect's statements for the request (shown before
//! anything runs), the knobs' scopes, the methods' programs and extensions, the tables (loaded
//! or reused), what an earlier run left (the index, the column, an INVALID index), and the
//! offered rate (`--rate`, or a share of a closed-loop probe's TPS).

use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{Driver, CLEANUP_LOCK_WAIT};
use crate::dbms::ddl::{DdlDialect, DdlPlan};
use crate::dbms::registry::ddl_dialect_of;
use crate::dbms::KnobScope;
use crate::measure::clock::Stopwatch;
use crate::results::ddl::{DdlRunResult, Probe};
use crate::session::Session;
use crate::step::online_ddl::run_load;
use crate::step::schema_tools::RowCounting;
use crate::step::sweep::knob_scopes;
use crate::workload::Workload;

/// A probe whose per-interval TPS varies more than this (coefficient of variation) ran on a
/// machine that was not steady: its ceiling, and the rate taken from it, are uncertain.
const PROBE_UNSTEADY: f64 = 0.25;

/// The change as this target makes it: its dialect, the plan's statements, the knobs' scopes,
/// and what the methods' programs need of the server.
pub(super) struct Ddl {
    pub dialect: Box<dyn DdlDialect>,
    pub plan: DdlPlan,
    pub scopes: Vec<KnobScope>,
    /// The MySQL engine (pt-osc's), InnoDB unless the target says.
    pub engine: String,
    /// The server's major version (pg_repack's figures), 0 where the target does not tell.
    pub pg_major: u32,
}

/// Run statements, ignoring errors (the clean-up of what an earlier point or run left).
pub(super) fn run_quietly(conn: &mut dyn crate::dbms::Conn, stmts: &[String]) {
    for s in stmts {
        let _ = conn.execute(s);
    }
}

impl Driver<'_> {
    /// The dialect and its plan (shown), the knobs' scopes (an unknown knob stops the command
    /// before anything is loaded), the methods' preparation.
    pub(super) fn prepare_ddl(&self, s: &mut Session) -> Result<Ddl> {
        let dialect = ddl_dialect_of(
            s.target.kind(),
            s.conn.as_mut(),
            &s.result.target.version,
            s.result.target.engine.as_deref(),
        )?;
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
        self.prepare_methods(s, dialect.as_ref())?;
        Ok(Ddl {
            dialect,
            plan,
            scopes,
            engine,
            pg_major,
        })
    }

    /// The methods other than the engine's own statement: what they need of the server (an
    /// extension), shown with their programs.
    fn prepare_methods(&self, s: &mut Session, dialect: &dyn DdlDialect) -> Result<()> {
        if self.methods.only_native() {
            return Ok(());
        }
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
        Ok(())
    }

    /// The run's result so far (recorded), the tables loaded or reused, and what an earlier,
    /// interrupted run may have left (the index, the column, an INVALID index) dropped.
    pub(super) fn prepare_tables(
        &self,
        s: &mut Session,
        ddl: &Ddl,
        workload: &RowCounting,
    ) -> Result<DdlRunResult> {
        let args = self.args;
        let result = DdlRunResult {
            dialect: ddl.dialect.name().into(),
            workload: workload.name().to_string(),
            plan: args.plan.name().into(),
            request: Some(self.req.clone()),
            statements: ddl.plan.clone(),
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
            crate::progress::step_named("load");
            self.load_tables(s, workload, "loading the workload's tables")?;
        }
        // What an earlier, interrupted run may have left: the index, the column.
        if let Some(sql) = ddl.dialect.lock_timeout_sql(CLEANUP_LOCK_WAIT) {
            s.conn.execute(&sql)?;
        }
        run_quietly(s.conn.as_mut(), &ddl.plan.undo);
        let left = self.drop_invalid(ddl.dialect.as_ref(), s.conn.as_mut(), &mut Vec::new());
        if let Some((i, e)) = left.first() {
            bail!(
                "the INVALID index {i} on {} could not be dropped: {e}",
                self.req.table
            );
        }
        Ok(result)
    }

    /// Load the workload's tables (again), timed; `context` names the load in an error.
    pub(super) fn load_tables(
        &self,
        s: &mut Session,
        workload: &RowCounting,
        context: &'static str,
    ) -> Result<()> {
        let t0 = Stopwatch::start();
        let wait = crate::progress::waiting("the load");
        workload
            .load(s.target.as_ref(), self.args.threads as usize)
            .context(context)?;
        drop(wait);
        crate::outln!("   loaded in {:.1} s", t0.elapsed_secs());
        Ok(())
    }

    /// The offered rate: `--rate`, or `--rate-fraction` of the load's ceiling, closed loop
    /// (the probe, recorded in `result` with a warning when it was not steady).
    pub(super) fn offered_rate(
        &self,
        s: &mut Session,
        workload: &RowCounting,
        result: &mut DdlRunResult,
    ) -> Result<Option<f64>> {
        let args = self.args;
        if let Some(r) = args.rate {
            result.rate = Some(r);
            result.rate_source = "--rate".into();
            crate::outln!("\noffered rate {r:.1} TPS (--rate)");
            return Ok(Some(r));
        }
        let probe = self.probe(s, workload)?;
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
        Ok(Some(offered))
    }

    /// The probe: the load's ceiling, its threads as fast as they can for --probe-seconds.
    fn probe(&self, s: &mut Session, workload: &dyn Workload) -> Result<Probe> {
        let args = self.args;
        crate::progress::step_named("probe");
        crate::outln!(
            "\n== probe: {} threads as fast as they can for {} s (closed loop)",
            args.threads,
            args.probe_seconds
        );
        // Whole seconds, or quarter seconds for a short probe (the first second warms up and
        // is left out when there is more).
        let probe_interval = if args.probe_seconds >= 5.0 { 1.0 } else { 0.25 };
        let spec = self.load_spec(
            s.target.as_ref(),
            workload,
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
        let probe = Probe {
            seconds: n,
            txns,
            tps: txns as f64 / n,
            qps: queries as f64 / n,
            tps_spread: spread(&whole),
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
        Ok(probe)
    }
}

/// The coefficient of variation of `tps` (per interval), from three intervals on.
fn spread(tps: &[f64]) -> Option<f64> {
    (tps.len() >= 3).then(|| {
        let mean = tps.iter().sum::<f64>() / tps.len() as f64;
        let var = tps.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / tps.len() as f64;
        if mean > 0.0 {
            var.sqrt() / mean
        } else {
            0.0
        }
    })
}
