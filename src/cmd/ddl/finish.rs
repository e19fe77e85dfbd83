//! `ixbench ddl`'s clean-up and end: after each point, the connection made again when the
//! server went away, an INVALID index dropped, the point's error (a failed, cancelled or
//! unstarted DDL, a node lost), the checks (the change, every committed row, what a method's
//! program left) and the plan's undo; at the end, the verdict on each point, the results'
//! tables and the exit status.

use std::time::Duration;

use anyhow::Result;

use super::prepare::run_quietly;
use super::{DdlArgs, Driver, CLEANUP_LOCK_WAIT};
use crate::dbms::ddl::{DdlDialect, DdlPlan};
use crate::dbms::{Conn, Dbms};
use crate::deadline::Since;
use crate::export::ddl as tables_out;
use crate::options::cli::OnError;
use crate::results::ddl::{DdlPoint, DdlRunResult};
use crate::results::Check;
use crate::session::Session;
use crate::step::schema_tools::{count_rows, row_check, MethodRunner, RowCounting};

/// How long the driver waits for a server that went away during a point to come back.
const RECONNECT_WAIT: Duration = Duration::from_secs(60);

impl Driver<'_> {
    /// The end of the run that ended with `outcome`: judge its points, write the results'
    /// tables, close the session and return the exit status.
    pub(super) fn finish(&self, mut s: Session, outcome: Result<()>) -> Result<u8> {
        let args = self.args;
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
            out.push(("ddl", tables_out::points_table(&ddl, &self.axes)));
            out.push(("ddl_windows", tables_out::windows_table(&ddl, &self.axes)));
            if !self.methods.only_native() {
                out.push((
                    "ddl_methods",
                    crate::export::schema_tools::methods_table(&ddl, &self.axes),
                ));
            }
        }
        if let Some(nodes) = crate::cluster_target::nodes_table(&s.result) {
            out.push(("nodes", nodes));
        }
        let code = s.close(outcome, self.interrupt, checks_ok, &out)?;
        Ok(verdict_exit(code, &ddl, args))
    }

    /// After a point's load: the connection back, INVALID indexes dropped, the point's error
    /// or the change verified, every committed row checked, the method's outcome, the undo.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn settle(
        &self,
        (conn, target): (&mut Box<dyn Conn>, &dyn Dbms),
        dialect: &dyn DdlDialect,
        plan: &DdlPlan,
        runner: &MethodRunner,
        (counted, tables, rows_before): (&RowCounting, &[String], Option<i64>),
        (stopped_for_loss, ddl_node_lost): (Option<String>, Option<String>),
        p: &mut DdlPoint,
    ) {
        let mut dropped = p.ddl.invalid_dropped.clone();
        reconnect(conn, target);
        for (i, e) in self.drop_invalid(dialect, conn.as_mut(), &mut dropped) {
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
        p.ddl.invalid_dropped = dropped;
        if let Some(e) = stopped_for_loss {
            self.stopped_for_loss.set(true);
            p.error = Some(e);
        } else if let Some(e) = self.ddl_error(p, ddl_node_lost.as_deref()) {
            p.error = Some(e);
        } else {
            p.checks.extend(dialect.verify(conn.as_mut(), &self.req));
        }
        // Every row the workload committed is there, whatever the method did (a trigger-based
        // copy must lose none written during the copy).
        let net = counted.net();
        let rows_after = (!crate::stop::hurried())
            .then(|| count_rows(conn.as_mut(), tables))
            .flatten();
        if !crate::stop::hurried() {
            p.checks
                .push(row_check(tables, rows_before, net, rows_after));
        }
        let outcome = runner.outcome(conn.as_mut(), (rows_before, Some(net), rows_after));
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
        run_quietly(conn.as_mut(), &plan.undo);
        p.ok = p.error.is_none() && p.checks.iter().all(|c| c.ok);
    }

    /// The point's error from its DDL: cancelled by --ddl-timeout, failed (with the server's
    /// error code, and `node_lost`: how its session's node left), or never started; `None`
    /// when the DDL ran to its end.
    fn ddl_error(&self, p: &DdlPoint, node_lost: Option<&str>) -> Option<String> {
        // The server's error code, when it gave one.
        let code = p.ddl.error_code.clone().filter(|c| c != "other");
        if p.ddl.timed_out && p.ddl.error.is_some() {
            // ixbench's own cancel: the DBMS's error only says a user cancelled it.
            Some(format!(
                "the DDL ran past --ddl-timeout {} s and was cancelled (after {:.1} s{}); \
                 raise --ddl-timeout, or see what it waited for in the timeline's waits",
                self.args.ddl_timeout,
                p.ddl.seconds.unwrap_or(0.0),
                code.as_ref()
                    .map(|c| format!("; the server's error {c}"))
                    .unwrap_or_default(),
            ))
        } else if let Some(e) = &p.ddl.error {
            Some(format!(
                "the DDL failed{} after {:.1} s: {e}{}",
                code.as_ref()
                    .map(|c| format!(" (error {c})"))
                    .unwrap_or_default(),
                p.ddl.seconds.unwrap_or(0.0),
                node_lost.map(|l| format!(" ({l})")).unwrap_or_default()
            ))
        } else if p.ddl.started_s.is_none() {
            Some(match &p.foreground_error {
                Some(e) => format!("the DDL did not start: {e}"),
                None => "the DDL did not start (interrupted)".into(),
            })
        } else {
            None
        }
    }

    /// Report and drop INVALID indexes on the table (a failed CONCURRENTLY build), waiting at
    /// most [`CLEANUP_LOCK_WAIT`] seconds for locks; returns those that could not be dropped,
    /// with why.
    pub(super) fn drop_invalid(
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
                    crate::format::error_line(&e)
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
                        Err(e) => left.push((i, crate::format::error_line(&e))),
                    }
                }
            }
        }
        left
    }
}

/// Connect again when the server went away meanwhile (a restart during the DDL): for up to
/// [`RECONNECT_WAIT`] while it comes back.
fn reconnect(conn: &mut Box<dyn Conn>, target: &dyn Dbms) {
    if conn.query_rows("SELECT 1").is_ok() {
        return;
    }
    let t0 = Since::start();
    loop {
        match target.connect_admin() {
            Ok(c) => {
                *conn = c;
                crate::outln!("   reconnected to the server");
                break;
            }
            Err(e) if t0.so_far() >= RECONNECT_WAIT => {
                crate::outln!("   WARNING: cannot reconnect to the server: {e:#}");
                break;
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(250)),
        }
    }
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
