//! Index creation: l.x (the secondary indexes on the loaded tables, timed one by one; the
//! figure is indexed rows per second = rows in the table / seconds, as in the insert
//! benchmark), and the measured builds of `ixbench index` (cost, progress, size, checks).
//! Both build the indexes their caller hands them on the tables it names
//! ([`crate::workload::tables::IndexedTables`], [`BuildRequest`]): no workload's own.

use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::dbms::{Conn, Dbms};
use crate::measure::resources::{counter_deltas, Window};
use crate::results::{BuildResult, Check, IndexBuild};
use crate::step::build_timer::{BuildTimer, Timed};
use crate::workload::lab::LabTable;
use crate::workload::tables::{IndexedTable, IndexedTables};

/// Build the indexes `ctx` hands over on each of its tables as the target's build plan ([`Dbms::index_build_plan`], blocking) says, the way the insert benchmark builds
/// them: one `ALTER TABLE` with every `ADD INDEX` on MySQL/MariaDB (InnoDB feeds all the
/// indexes from one scan), one `CREATE INDEX` after another on SQLite and PostgreSQL (the
/// plan's parallel sessions run one after the other, each on a connection of its own). Each
/// statement that builds indexes is timed and handed to `on_build` as soon as it ends (to
/// print and record it: a stop or an error later keeps it) with the indexes it built and its
/// text. Stopped (Ctrl-C), it returns an error naming the indexes it left unbuilt.
pub fn run(
    ctx: &dyn IndexedTables,
    conn: &mut dyn Conn,
    on_build: &mut dyn FnMut(IndexBuild),
) -> Result<()> {
    let tables = ctx.indexed_tables();
    if tables.iter().all(|t| t.indexes.is_empty()) {
        return Ok(());
    }
    let target = ctx.target();
    // Another session's lock a build waits for is shown and bounded (dbms::lock_watch): the
    // watcher connects before any build's window opens (see `Watcher::open`).
    let timer = BuildTimer::open(target);
    let conn_id = timer.session_id(&mut *conn);
    let mut lx = Lx {
        target,
        interrupt: ctx.interrupt(),
        timer,
        conn_id,
        // Indexes not built yet, for the error of a stop.
        unbuilt: tables
            .iter()
            .flat_map(|t| t.indexes.iter().map(|x| x.name.clone()))
            .collect(),
        on_build,
    };
    for t in &tables {
        let names: Vec<String> = t.indexes.iter().map(|x| x.name.clone()).collect();
        if target.stores_rows() {
            for name in &names {
                if conn.index_exists(&t.name, name)? {
                    bail!(
                        "index {name} already exists on {}: l.x builds it, so start from l.i0",
                        t.name
                    );
                }
            }
        }
        let plan = target.index_build_plan(&t.indexes, false)?;
        for session in &plan {
            lx.session(conn, t, &names, session, plan.len() > 1)?;
        }
    }
    Ok(())
}

/// l.x under way: the timer its statements run on, and what it has left to build.
struct Lx<'a, 'b> {
    target: &'a dyn Dbms,
    interrupt: &'a std::sync::atomic::AtomicBool,
    timer: BuildTimer<'a>,
    /// The control connection's session, as the lock watcher knows it.
    conn_id: Option<i64>,
    unbuilt: Vec<String>,
    on_build: &'b mut dyn FnMut(IndexBuild),
}

impl Lx<'_, '_> {
    /// One session of table `t`'s build plan: its statements in order, on a connection of its
    /// own when the plan has `several` (so their session settings stay there), else on `conn`.
    fn session(
        &mut self,
        conn: &mut dyn Conn,
        t: &IndexedTable,
        names: &[String],
        session: &[String],
        several: bool,
    ) -> Result<()> {
        let target = self.target;
        // The DBMS's counters are read once every other session of ixbench has flushed its
        // statistics (PostgreSQL: has exited, or the read waits for it). So a session's
        // window opens on the control connection before the session's own connection
        // exists, and closes there after that connection is gone: neither read waits for
        // an idle connection, and the build's figures cover the build.
        let builds_here = session
            .iter()
            .filter(|sql| names.iter().any(|n| statement_builds(sql, n)))
            .count();
        let mut early = (several && builds_here == 1).then(|| Window::open(target, conn));
        let mut own = if several {
            Some(target.connect()?)
        } else {
            None
        };
        let id = match own.as_mut() {
            Some(o) => self.timer.session_id(o.as_mut()),
            None => self.conn_id,
        };
        for (k, sql) in session.iter().enumerate() {
            if self.interrupt.load(Ordering::Relaxed) {
                bail!("{} not built", self.unbuilt.join(", "));
            }
            let built: Vec<String> = names
                .iter()
                .filter(|n| statement_builds(sql, n))
                .cloned()
                .collect();
            // Resources over exactly this statement (not the index_exists checks).
            let window = (!built.is_empty()).then(|| {
                early
                    .take()
                    .unwrap_or_else(|| Window::open(target, on(&mut own, conn)))
            });
            let seconds = self.statement(on(&mut own, conn), id, t, &session[k..=k], &built)?;
            let Some(window) = window else {
                continue; // a session setting of the plan
            };
            let _wait = crate::progress::waiting("the server's counters of the build");
            // the session's own connection is done after its last statement: closed first
            if k + 1 == session.len() {
                own = None;
            }
            let cost = Some(window.close(target, on(&mut own, conn)));
            let rows = t.rows;
            let b = IndexBuild {
                table: t.name.clone(),
                index: built.join(","),
                seconds,
                rows,
                rows_per_sec: if seconds > 0.0 {
                    rows as f64 / seconds
                } else {
                    0.0
                },
                indexes: built,
                statement: sql.clone(),
                cost,
            };
            self.unbuilt.retain(|n| !b.indexes.contains(n));
            (self.on_build)(b);
        }
        Ok(())
    }

    /// One statement of a session (`one`, a slice of it) on `c`, watched as session `id`,
    /// timed; its seconds.
    fn statement(
        &mut self,
        c: &mut dyn Conn,
        id: Option<i64>,
        t: &IndexedTable,
        one: &[String],
        built: &[String],
    ) -> Result<f64> {
        let sql = one.join("; ");
        let _wait = (!built.is_empty())
            .then(|| crate::progress::waiting(format!("index build {}", built.join(","))));
        let what = if built.is_empty() {
            format!("{sql} on {}", t.name)
        } else {
            format!("building {} on {}", built.join(", "), t.name)
        };
        let mut timed = self
            .timer
            .time(id.as_slice(), &what, vec![(one, c)], None, None);
        match timed.results.pop().unwrap_or(Ok(())) {
            // the watcher's error says why
            Err(e) if timed.cancelled => return Err(e),
            done => done.with_context(|| {
                if built.is_empty() {
                    format!("{sql} failed")
                } else {
                    format!("building {} failed", built.join(", "))
                }
            })?,
        }
        Ok(timed.seconds)
    }
}

/// The connection a session's statement runs on: its own, else the control connection.
fn on<'c>(own: &'c mut Option<Box<dyn Conn>>, conn: &'c mut dyn Conn) -> &'c mut dyn Conn {
    match own {
        Some(c) => c.as_mut(),
        None => conn,
    }
}

/// Whether statement `sql` builds the index `name` (the name as a whole word in it).
fn statement_builds(sql: &str, name: &str) -> bool {
    sql.match_indices(name).any(|(at, _)| {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let before = !sql[..at].chars().next_back().is_some_and(word);
        let after = !sql[at + name.len()..].chars().next().is_some_and(word);
        before && after
    })
}

/// How l.x built its indexes, in words for the step's output (run.json has each statement).
pub fn describe_builds(builds: &[IndexBuild]) -> String {
    match builds.iter().find(|b| b.indexes.len() > 1) {
        Some(b) => {
            let head = b.statement.split(" (").next().unwrap_or_default();
            format!(
                "built as the insert benchmark does: {} indexes in one statement per table ({head} ...)",
                b.indexes.len()
            )
        }
        None => "built as the insert benchmark does: one CREATE INDEX after another".to_string(),
    }
}

/// One index build to measure.
pub struct BuildRequest<'a> {
    /// The table.
    pub table: &'a str,
    /// Rows it holds (the build's rate is rows / seconds).
    pub rows: u64,
    /// The indexes to build (or, with `plan`, those checked after it).
    pub indexes: Vec<crate::dbms::IndexSpec>,
    /// The workload's table whose queries each index serves, for the check that the plan of
    /// its query uses it; `None`: no query-plan check (the user's indexes, `--index`).
    pub plan_check: Option<&'a dyn LabTable>,
    /// Online (non-blocking) build?
    pub online: bool,
    /// Session knobs applied on every build connection (name, value).
    pub session_knobs: &'a [(String, String)],
    /// Knob settings to record with the result (all scopes, as the DBMS reports them).
    pub knobs: Vec<(String, String)>,
    /// What is built: an index name or `all`.
    pub label: String,
    /// Repeat number.
    pub repeat: u32,
    /// Statements to run instead of the target's index build plan (table rebuilds).
    pub plan: Option<Vec<Vec<String>>>,
}

pub use crate::measure::resources::CostSource;
pub use crate::step::build_timer::Gate;

/// Build the indexes of `req` as the target plans it (parallel sessions, one statement or
/// several), measuring wall time, the DBMS's CPU and I/O, its own I/O counters, a progress
/// timeline (sampled every second from another connection) and the index sizes; then check
/// each index is valid and used. A failed build is returned with `ok: false` and its error;
/// an invalid index it left behind is reported and dropped.
pub fn measured_build(
    target: &dyn Dbms,
    cost: &CostSource,
    conn: &mut dyn Conn,
    req: &BuildRequest,
) -> BuildResult {
    measured_build_timed(target, cost, conn, req, None).0
}

/// [`measured_build`], with when its statements began and ended (`None` when none ran: the
/// plan or a session could not be made), and an optional [`Gate`]; a build that cannot start
/// still passes its gate (`before` then `after`), so the others are not kept waiting.
pub fn measured_build_timed(
    target: &dyn Dbms,
    cost: &CostSource,
    conn: &mut dyn Conn,
    req: &BuildRequest,
    gate: Option<&Gate>,
) -> (BuildResult, Option<(Instant, Instant)>) {
    // Plan: the indexes, the result's head, the statements of each session.
    let specs: Vec<crate::dbms::IndexSpec> = req.indexes.clone();
    let names: Vec<String> = specs.iter().map(|x| x.name.clone()).collect();
    let mut r = BuildResult {
        knobs: req.knobs.clone(),
        build: req.label.clone(),
        indexes: names.clone(),
        mode: if req.online { "online" } else { "blocking" }.into(),
        repeat: req.repeat,
        rows: req.rows,
        ..Default::default()
    };
    let plan = match req
        .plan
        .clone()
        .map(Ok)
        .unwrap_or_else(|| target.index_build_plan(&specs, req.online))
    {
        Ok(p) => p,
        Err(e) => return not_started(r, e, gate),
    };
    // Prepare: the lock watcher connects before the window opens (see `Watcher::open` for
    // what it adds), then the window, then every session with its knobs.
    let mut timer = BuildTimer::open(target);
    let window = BuildWindow::open(target, conn, cost);
    let (mut conns, ids) = match open_sessions(&timer, target, req.session_knobs, plan.len()) {
        Ok(v) => v,
        Err(e) => return not_started(r, e, gate),
    };
    // Run: the statements on the timer, the server's CPU and I/O read once the gate opens.
    let poll_conn = target.connect().ok();
    let cost_before = std::cell::RefCell::new(None);
    let before = || {
        if let Some(g) = gate {
            (g.before)();
        }
        *cost_before.borrow_mut() = cost.sample();
    };
    let after = || {
        if let Some(g) = gate {
            (g.after)();
        }
    };
    let _wait = crate::progress::waiting(build_status(&names, &req.knobs));
    let what = if names.is_empty() {
        format!("{} of {}", req.label, req.table)
    } else {
        format!("building {} on {}", names.join(", "), req.table)
    };
    let mut sessions: Vec<(&[String], &mut dyn Conn)> = Vec::with_capacity(plan.len());
    for (stmts, c) in plan.iter().zip(conns.iter_mut()) {
        sessions.push((stmts, c.as_mut()));
    }
    let gate = Gate {
        before: &before,
        after: &after,
    };
    let timed = timer.time(&ids, &what, sessions, Some(&gate), poll_conn);
    // The connections are closed after the clock stops, and before the window closes.
    drop(conns);
    drop(timer);
    // Finish: the figures, the checks, the sizes.
    window.close(target, conn, cost, cost_before.into_inner(), &mut r);
    let span = (timed.start, timed.end);
    take_timed(&mut r, timed);
    check_indexes(target, conn, req, &specs, &mut r);
    r.warnings
        .extend(target.build_warnings(conn, req.session_knobs, &r.progress));
    if r.error.is_none() {
        index_sizes(target, conn, req.table, &names, &mut r);
    }
    r.ok = r.error.is_none() && r.checks.iter().all(|c| c.ok);
    (r, Some(span))
}

/// A build that could not start: its error, and its gate passed (`before` then `after`) so
/// the builds it goes with are not kept waiting.
fn not_started(
    mut r: BuildResult,
    e: anyhow::Error,
    gate: Option<&Gate>,
) -> (BuildResult, Option<(Instant, Instant)>) {
    r.error = Some(format!("{e:#}"));
    if let Some(g) = gate {
        (g.before)();
        (g.after)();
    }
    (r, None)
}

/// The status line of a build: its indexes, and its knobs.
fn build_status(names: &[String], knobs: &[(String, String)]) -> String {
    let at: Vec<String> = knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if at.is_empty() {
        format!("index build {}", names.join(","))
    } else {
        format!("index build {} at {}", names.join(","), at.join(" "))
    }
}

/// Every session of a build: a connection with the session knobs applied, and its id as the
/// lock watcher knows it; opened before the clock starts, so a build's time is its
/// statements' time, not the time to open connections.
#[allow(clippy::type_complexity)]
fn open_sessions(
    timer: &BuildTimer,
    target: &dyn Dbms,
    knobs: &[(String, String)],
    n: usize,
) -> Result<(Vec<Box<dyn Conn>>, Vec<i64>)> {
    let mut conns = Vec::with_capacity(n);
    let mut ids = Vec::new();
    for _ in 0..n {
        let mut c = target.connect()?;
        for (k, v) in knobs {
            target.set_session_knob(c.as_mut(), k, v)?;
        }
        ids.extend(timer.session_id(c.as_mut()));
        conns.push(c);
    }
    Ok((conns, ids))
}

/// What the index lab reads over a build besides its time: the DBMS's I/O counters and its
/// report (`--server-figures`), opened before the sessions connect, and the server's CPU and
/// I/O (sampled when the gate opens, see [`measured_build_timed`]).
struct BuildWindow {
    reported: Option<crate::measure::resources::ReportedWindow>,
    counters_before: Vec<(String, u64)>,
}

impl BuildWindow {
    fn open(target: &dyn Dbms, conn: &mut dyn Conn, cost: &CostSource) -> Self {
        BuildWindow {
            reported: crate::measure::resources::ReportedWindow::open(target, conn, cost),
            counters_before: target.io_counters(conn).unwrap_or_default(),
        }
    }

    /// The figures over the build into `r`; `cost_before` is the server's sample at the start.
    fn close(
        self,
        target: &dyn Dbms,
        conn: &mut dyn Conn,
        cost: &CostSource,
        cost_before: Option<crate::measure::sys::ServerCounters>,
        r: &mut BuildResult,
    ) {
        // The DBMS's counters first: reading them waits for the build sessions to end, so
        // their CPU and I/O are in the sample that follows.
        let counters_after = target.io_counters(conn).unwrap_or_default();
        r.counters = counter_deltas(&self.counters_before, &counters_after);
        r.server_reported = self.reported.map(|w| w.close(target, conn));
        if r.server_write_bytes.is_none() {
            // not on this machine: written as the DBMS counts them, from its own report
            r.server_write_bytes = r.server_reported.as_ref().and_then(|x| x.written_bytes);
        }
        if let (Some(a), Some(b)) = (cost_before, cost.sample()) {
            let d = b.since(&a);
            r.server_cpu_secs = Some(d.cpu_us as f64 / 1e6);
            r.server_read_bytes = d.read_bytes;
            // Bytes written as the DBMS counts them; /proc write_bytes is not bytes written
            // (see `ServerSample::dirtied_bytes`). For an embedded DBMS: the bytes passed to
            // writes.
            r.server_write_bytes = match cost {
                CostSource::Embedded => d.write_call_bytes,
                _ => target.written_bytes(&r.counters).map(|(b, _)| b),
            };
        }
    }
}

/// The timer's figures into `r`: seconds, progress, rate, and the sessions' errors.
fn take_timed(r: &mut BuildResult, timed: Timed) {
    r.seconds = timed.seconds;
    r.progress = timed.progress;
    r.rows_per_sec = if r.seconds > 0.0 {
        r.rows as f64 / r.seconds
    } else {
        0.0
    };
    let mut errors: Vec<String> = timed
        .results
        .into_iter()
        .filter_map(|x| x.err().map(|e| format!("{e:#}")))
        .collect();
    if !errors.is_empty() {
        errors.dedup();
        r.error = Some(errors.join("; "));
    }
}

/// After the build: each index exists, is valid (an INVALID one a failed online build left is
/// dropped) and, for a workload's own (`plan_check`), is used by its query.
fn check_indexes(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    req: &BuildRequest,
    specs: &[crate::dbms::IndexSpec],
    r: &mut BuildResult,
) {
    let t = req.table;
    for spec in specs {
        let name = &spec.name;
        let exists = conn.index_exists(t, name).unwrap_or(false);
        if !exists {
            if r.error.is_none() {
                r.checks.push(Check {
                    name: "index".into(),
                    ok: false,
                    detail: format!("{name} does not exist after the build"),
                });
            }
            continue;
        }
        if !check_valid(target, conn, t, spec, r) {
            continue;
        }
        let Some(lab) = req.plan_check else {
            continue; // no query of ixbench's own to explain on a user index
        };
        match lab.explain(conn, target.dialect(), name) {
            Ok(plan) => match target.plan_uses_index(&plan, name) {
                Some(ok) => r.checks.push(Check {
                    name: "plan".into(),
                    ok,
                    detail: format!("range query on {name}: {plan}"),
                }),
                None => r.warnings.push(format!(
                    "plan of the range query on {name} not checked: reading plans is not supported by this DBMS ({})",
                    target.kind()
                )),
            },
            Err(e) => r.checks.push(Check {
                name: "plan".into(),
                ok: false,
                detail: format!("EXPLAIN failed: {e:#}"),
            }),
        }
    }
}

/// Whether index `spec` on `t` is valid, as a check in `r`; false when it was INVALID (and
/// dropped).
fn check_valid(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    t: &str,
    spec: &crate::dbms::IndexSpec,
    r: &mut BuildResult,
) -> bool {
    let name = &spec.name;
    match validity_action(target.index_valid(conn, t, name)) {
        ValidityAction::Keep => true,
        ValidityAction::Drop => {
            let dropped = conn.execute(&target.drop_index_sql(spec)).is_ok();
            r.checks.push(Check {
                name: "valid".into(),
                ok: false,
                detail: format!(
                    "{name} is INVALID (left by a failed online build){}",
                    if dropped {
                        "; dropped"
                    } else {
                        "; could not drop it"
                    }
                ),
            });
            false
        }
        ValidityAction::Report(e) => {
            // Not knowing is not INVALID: the index stays, and the check says why it could
            // not be made.
            r.checks.push(Check {
                name: "valid".into(),
                ok: false,
                detail: format!(
                    "cannot tell whether {name} is valid (left in place): the validity query failed: {e}"
                ),
            });
            true
        }
    }
}

/// The sizes of the indexes `names` on `t` into `r` (unknown, with a warning, when the size
/// query fails).
fn index_sizes(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    t: &str,
    names: &[String],
    r: &mut BuildResult,
) {
    let tables = vec![t.to_string()];
    match target.sizes(conn, &tables, true) {
        Ok(sizes) => {
            r.warnings.extend(sizes.notes.iter().cloned());
            r.index_bytes = sizes
                .objects
                .into_iter()
                .filter(|(n, _)| names.contains(n))
                .collect()
        }
        Err(e) => r.warnings.push(format!(
            "index sizes unknown: the size query failed: {}",
            crate::format::error_line(&e)
        )),
    }
}

/// What to do with a built index after asking the DBMS whether it is valid.
#[derive(Debug, PartialEq, Eq)]
pub enum ValidityAction {
    /// Valid: keep it.
    Keep,
    /// The DBMS says it is INVALID (PostgreSQL `indisvalid = false`): report and drop it.
    Drop,
    /// The question could not be answered (the query failed): report the error, keep the index.
    Report(String),
}

/// Map the answer of [`Dbms::index_valid`] to the action: only a real "invalid" drops the
/// index; an error is reported as an error and never taken for INVALID.
pub fn validity_action(answer: Result<bool>) -> ValidityAction {
    match answer {
        Ok(true) => ValidityAction::Keep,
        Ok(false) => ValidityAction::Drop,
        Err(e) => ValidityAction::Report(crate::format::error_line(&e)),
    }
}

/// Drop those of the indexes `specs` of table `t` that exist (ixbench's own table).
pub fn drop_indexes(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    t: &str,
    specs: &[crate::dbms::IndexSpec],
) -> Result<()> {
    for spec in specs {
        let name = &spec.name;
        if conn.index_exists(t, name)? {
            // Shown and bounded while another session's lock holds it up.
            let what = format!("dropping {name}");
            crate::dbms::lock_watch::watched(target, conn, &what, |conn| {
                conn.execute(&target.drop_index_sql(spec))
                    .with_context(|| format!("cannot drop {name}"))
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_and_index_names() {
        let sql = "ALTER TABLE pi1 ADD INDEX pi1_marketsegment (a), ADD INDEX pi1_pdc (b)";
        assert!(statement_builds(sql, "pi1_marketsegment"));
        assert!(statement_builds(sql, "pi1_pdc"));
        assert!(!statement_builds(sql, "pi1_registersegment"));
        assert!(!statement_builds(
            "CREATE INDEX pi11_pdc ON pi11 (a)",
            "pi1_pdc"
        ));
        assert!(!statement_builds(
            "SET client_min_messages = debug1",
            "pi1_pdc"
        ));
    }

    #[test]
    fn only_a_real_invalid_drops() {
        assert_eq!(validity_action(Ok(true)), ValidityAction::Keep);
        assert_eq!(validity_action(Ok(false)), ValidityAction::Drop);
        let e = anyhow::anyhow!("permission denied for table pg_index").context("validity");
        match validity_action(Err(e)) {
            ValidityAction::Report(m) => assert!(m.contains("permission denied"), "{m}"),
            other => panic!("an error became {other:?}"),
        }
    }
}
