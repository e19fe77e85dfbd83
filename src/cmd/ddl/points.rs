//! `ixbench ddl`'s points: every knob point once per method, the methods one after the other;
//! at each, its knobs and the plan's setup, then the load at the offered rate with the DDL
//! started after the baseline window, its timeline printed and stored as it goes, and the
//! windows (baseline, during, catch-up, after) analysed. The point's clean-up and checks are
//! [`super::finish`]'s.

use std::time::Duration;

use anyhow::{bail, Result};

use super::plan::choose_interval;
use super::prepare::{run_quietly, Ddl};
use super::Driver;
use crate::cluster_target::{ClusterSession, Watched};
use crate::dbms::ddl::tools::Method;
use crate::dbms::ddl::DdlDialect;
use crate::dbms::{Conn, Dbms, KnobScope};
use crate::export::ddl as tables_out;
use crate::measure::windows::analyse;
use crate::options::cli::OnError;
use crate::results::ddl::{DdlPoint, DdlRunResult, TimelineRow};
use crate::results::store::Store;
use crate::session::Session;
use crate::step::online_ddl::{run_load, DdlJob, LoadRun, LoadSpec};
use crate::step::schema_tools::{count_rows, RowCounting};
use crate::step::sweep::{apply_server_knobs, grid, knob_label, same_value};
use crate::workload::Workload;

impl Driver<'_> {
    /// Every point, each recorded in `result` (and run.json) as it ends; stops at the first
    /// failed one with --on-error stop.
    pub(super) fn run_points(
        &self,
        s: &mut Session,
        ddl: &Ddl,
        workload: &RowCounting,
        rate: Option<f64>,
        result: &mut DdlRunResult,
    ) -> Result<()> {
        let args = self.args;
        let base = s
            .server
            .as_ref()
            .map(|v| v.settings.clone())
            .unwrap_or_default();
        let grid_points = grid(&self.axes);
        // Every knob point once per method, the methods one after the other.
        let points: Vec<(Method, &Vec<(String, String)>)> = self
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
                self.load_tables(s, workload, "loading the workload's tables again")?;
            }
            previous = Some(method);
            let label = self.point_label(method, point);
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
            let p = self.point(s, ddl, workload, rate, pi, point, &base, method);
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
            if failed.is_some() && args.on_error == OnError::Stop {
                return Ok(());
            }
        }
        Ok(())
    }

    /// A point's name: its knobs, and its method when there are several.
    fn point_label(&self, method: Method, point: &[(String, String)]) -> String {
        let label = knob_label(point);
        if self.methods.only_native() {
            label
        } else if label.is_empty() {
            format!("--method {}", method.name())
        } else {
            format!("--method {}, {label}", method.name())
        }
    }

    /// One knob point: knobs, setup, the load with the DDL, checks, undo.
    #[allow(clippy::too_many_arguments)]
    fn point(
        &self,
        s: &mut Session,
        ddl: &Ddl,
        workload: &RowCounting,
        rate: Option<f64>,
        pi: usize,
        point: &[(String, String)],
        base: &[(String, String)],
        method: Method,
    ) -> DdlPoint {
        let mut p = DdlPoint {
            knobs: point.to_vec(),
            offered_tps: rate,
            ..Default::default()
        };
        let Some(session_knobs) = self.set_up_point(s, ddl, point, base, &mut p) else {
            return p;
        };
        // The method (a tool, a user's command, or the plan's statements) and its plan.
        let (runner, method_plan) = match self.methods.runner(
            method,
            s.target.as_ref(),
            &self.req,
            ddl.dialect.as_ref(),
            &ddl.plan,
            &ddl.engine,
            ddl.pg_major,
            s.store.dir(),
            pi,
        ) {
            Ok(v) => v,
            Err(e) => {
                p.error = Some(crate::format::error_line(&e));
                run_quietly(s.conn.as_mut(), &ddl.plan.undo);
                return p;
            }
        };
        let plan = &method_plan;
        if !self.methods.only_native() {
            crate::outln!("   {}: {}", method.name(), plan.statements.join("; "));
        }
        let tables = workload.tables();
        let rows_before = count_rows(s.conn.as_mut(), &tables);
        let job = DdlJob {
            dialect: ddl.dialect.as_ref(),
            plan,
            req: &self.req,
            session_knobs: &session_knobs,
            baseline: Duration::from_secs_f64(self.args.baseline_seconds),
            recovery: Duration::from_secs_f64(self.args.recovery_seconds),
            timeout: Duration::from_secs_f64(self.args.ddl_timeout),
            max_retries: self.args.ddl_retries,
            hook: Some(&runner),
        };
        workload.reset();
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
        let spec = self.load_spec(
            s.target.as_ref(),
            workload,
            rate,
            Duration::from_secs_f64(interval),
        );
        let (run, watched) = self.timeline(&spec, &mut s.store, s.cluster.as_ref(), pi, &job);
        let (stopped_for_loss, ddl_node_lost) = match watched {
            Some(w) => self.galera_nodes(w, &run, &mut p),
            None => (None, None),
        };
        let run = match run {
            Ok(r) => r,
            Err(e) => {
                p.error = Some(crate::format::error_line(&e));
                return p;
            }
        };
        self.take_run(run, rate, &mut p);
        self.settle(
            (&mut s.conn, s.target.as_ref()),
            ddl.dialect.as_ref(),
            plan,
            &runner,
            (workload, &tables, rows_before),
            (stopped_for_loss, ddl_node_lost),
            &mut p,
        );
        p
    }

    /// A point's knobs (the values the DBMS reports recorded in `p`) and the plan's setup
    /// statements, then a wait for the server to be quiet; the session knobs of the DDL's
    /// session, or `None` with `p`'s error set.
    fn set_up_point(
        &self,
        s: &mut Session,
        ddl: &Ddl,
        point: &[(String, String)],
        base: &[(String, String)],
        p: &mut DdlPoint,
    ) -> Option<Vec<(String, String)>> {
        let (session_knobs, effective, warnings) =
            match self.apply_knobs(s, ddl.dialect.as_ref(), point, &ddl.scopes, base) {
                Ok(v) => v,
                Err(e) => {
                    p.error = Some(format!(
                        "knob {}: {}",
                        knob_label(point),
                        crate::format::error_line(&e)
                    ));
                    return None;
                }
            };
        p.knobs = effective;
        for w in warnings {
            crate::outln!("   WARNING: {w}");
        }
        for st in &ddl.plan.setup {
            if let Err(e) = s.conn.execute(st) {
                p.error = Some(format!(
                    "setting up ({st}): {}",
                    crate::format::error_line(&e)
                ));
                return None;
            }
        }
        self.wait_quiet(s);
        Some(session_knobs)
    }

    /// The load with the DDL, its timeline printed and stored as it goes. On a Galera cluster
    /// every node is watched: per-node figures, a node that leaves (the load's clients on it
    /// fail over; the DDL's session on it fails the DDL).
    fn timeline(
        &self,
        target_spec: &LoadSpec,
        store: &mut Store,
        cluster: Option<&ClusterSession>,
        pi: usize,
        job: &DdlJob,
    ) -> (Result<LoadRun>, Option<Watched>) {
        let mut store_err = None;
        let mut text = tables_out::TextTimeline::default();
        let mut body = || {
            // The live view's phase of the point: the report's window of the last interval
            // (baseline, during, catch-up, after), from the load's start to its end.
            crate::progress::phase(Some("baseline"));
            run_load(target_spec, pi, None, Some(job), &mut |r: &TimelineRow,
                                                             line: Option<
                &TimelineRow,
            >| {
                crate::progress::phase(Some(&r.window));
                for l in text.push(r, line) {
                    crate::outln!("{l}");
                }
                if let Err(e) = store.append_json(r) {
                    store_err.get_or_insert(e);
                }
            })
        };
        let (run, watched) = match cluster.filter(|c| c.is_galera()) {
            Some(c) => match c.watch(self.interrupt, &|| 0u64, body) {
                Ok((r, w)) => (r, Some(w)),
                Err(e) => (Err(e), None),
            },
            None => (body(), None),
        };
        crate::progress::phase(None);
        for l in text.finish() {
            crate::outln!("{l}");
        }
        if let Some(e) = store_err {
            crate::outln!("   WARNING: {e:#}");
        }
        (run, watched)
    }

    /// The nodes of a Galera cluster through the point, recorded in `p` and shown; returns
    /// the error that stops the run (a node left and --on-node-loss is stop) and how the
    /// DDL's node left, when it did.
    fn galera_nodes(
        &self,
        mut w: Watched,
        run: &Result<LoadRun>,
        p: &mut DdlPoint,
    ) -> (Option<String>, Option<String>) {
        let moved = run.as_ref().map(|r| r.reconnects).unwrap_or(0);
        w.moves = moved;
        if w.nodes.iter().filter(|n| n.lost.is_some()).count() == 1 {
            for l in w.nodes.iter_mut().filter_map(|n| n.lost.as_mut()) {
                l.connections_moved = Some(moved);
            }
        }
        crate::out!("{}", crate::cluster_target::node_lines(&w.nodes));
        let stopped_for_loss = w.stop_error();
        if let Some(l) = w.loss_warning() {
            crate::outln!("   WARNING: {l}");
            p.warnings.push(l);
        }
        // The DDL's session is on the entry: the entry's node leaving is the DDL's.
        let ddl_node_lost = w.nodes.iter().find_map(|n| {
            let l = n.lost.as_ref()?;
            l.entry_moved_to.as_ref().map(|_| {
                format!(
                    "its session's node {} left the cluster at {} ({:.1} s into the point: {})",
                    n.role, l.at, l.secs_into_step, l.how
                )
            })
        });
        p.nodes = w.nodes;
        (stopped_for_loss, ddl_node_lost)
    }

    /// The load's figures into `p`: the windows' analysis, the backlog, reconnections, the
    /// timeline, the DDL's outcome (its length kept for the next point's interval).
    fn take_run(&self, run: LoadRun, rate: Option<f64>, p: &mut DdlPoint) {
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
        p.ddl = o;
    }

    /// The load: the run's threads, retries and arrivals at `rate` (`None`: closed loop),
    /// measured in intervals of `interval`.
    pub(super) fn load_spec<'b>(
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
    /// load or the last point ([`crate::step::quiet::wait`]; a point's lines name no `when`).
    fn wait_quiet(&self, s: &mut Session) {
        let tables = vec![self.req.table.clone()];
        let quiet = crate::step::quiet::wait(
            s.target.as_ref(),
            s.conn.as_mut(),
            &tables,
            self.quiet_timeout,
            "",
        );
        quiet.say_unwatched();
    }
}
