//! Index creation: l.x (the secondary indexes on the loaded tables, timed one by one; the
//! figure is indexed rows per second = rows in the table / seconds, as in the insert
//! benchmark), and the measured builds of `ixbench index` (cost, progress, size, checks).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::dbms::{Conn, Dbms};
use crate::measure::clock;
use crate::measure::resources::{counter_deltas, Window};
use crate::results::{BuildResult, Check, IndexBuild};
use crate::workload::iibench::steps::StepCtx;
use crate::workload::iibench::{TableState, INDEXES};

/// Build the first `ctx.cfg.secondary_indexes` indexes on every table as the target's build
/// plan ([`Dbms::index_build_plan`], blocking) says, the way the insert benchmark builds
/// them: one `ALTER TABLE` with every `ADD INDEX` on MySQL/MariaDB (InnoDB feeds all the
/// indexes from one scan), one `CREATE INDEX` after another on SQLite and PostgreSQL (the
/// plan's parallel sessions run one after the other, each on a connection of its own). Each
/// statement that builds indexes is timed and handed to `on_build` as soon as it ends (to
/// print and record it: a stop or an error later keeps it) with the indexes it built and its
/// text. Stopped (Ctrl-C), it returns an error naming the indexes it left unbuilt.
pub fn run(ctx: &StepCtx, conn: &mut dyn Conn, on_build: &mut dyn FnMut(IndexBuild)) -> Result<()> {
    let idxs: Vec<usize> = (0..ctx.cfg.secondary_indexes.min(INDEXES.len())).collect();
    if idxs.is_empty() {
        return Ok(());
    }
    // Indexes not built yet, for the error of a stop.
    let mut unbuilt: Vec<String> = ctx
        .tables
        .iter()
        .flat_map(|t| idxs.iter().map(|&i| INDEXES[i].name(t.name())))
        .collect();
    // Another session's lock a build waits for is shown and bounded (dbms::lock_watch): the
    // watcher connects before any build's window opens (see `Watcher::open`).
    let mut watcher = crate::dbms::lock_watch::Watcher::open(ctx.target);
    let conn_id = watcher.as_ref().and_then(|w| w.session_id(&mut *conn));
    for t in ctx.tables {
        let names: Vec<String> = idxs.iter().map(|&i| INDEXES[i].name(t.name())).collect();
        if ctx.target.stores_rows() {
            for name in &names {
                if conn.index_exists(t.name(), name)? {
                    bail!(
                        "index {name} already exists on {}: l.x builds it, so start from l.i0",
                        t.name()
                    );
                }
            }
        }
        let plan = ctx.target.index_build_plan(&t.sql.indexes(&idxs), false)?;
        let several = plan.len() > 1;
        let rows = t.expected_rows.load(Ordering::SeqCst).max(0) as u64;
        for session in &plan {
            // Several sessions (parallel in the lab) run one after the other here, each on a
            // connection of its own so their session settings stay there.
            // The DBMS's counters are read once every other session of ixbench has flushed its
            // statistics (PostgreSQL: has exited, or the read waits for it). So a session's
            // window opens on the control connection before the session's own connection
            // exists, and closes there after that connection is gone: neither read waits for
            // an idle connection, and the build's figures cover the build.
            let builds_here = session
                .iter()
                .filter(|sql| names.iter().any(|n| statement_builds(sql, n)))
                .count();
            let mut early = (several && builds_here == 1).then(|| Window::open(ctx.target, conn));
            let mut own = if several {
                Some(ctx.target.connect()?)
            } else {
                None
            };
            let id = match own.as_mut() {
                Some(o) => watcher.as_ref().and_then(|w| w.session_id(o.as_mut())),
                None => conn_id,
            };
            for (k, sql) in session.iter().enumerate() {
                let last_of_session = k + 1 == session.len();
                if ctx.interrupt.load(Ordering::Relaxed) {
                    bail!("{} not built", unbuilt.join(", "));
                }
                let built: Vec<String> = names
                    .iter()
                    .filter(|n| statement_builds(sql, n))
                    .cloned()
                    .collect();
                let c: &mut dyn Conn = match own.as_mut() {
                    Some(c) => c.as_mut(),
                    None => &mut *conn,
                };
                // Resources over exactly this statement (not the index_exists checks).
                let window = (!built.is_empty())
                    .then(|| early.take().unwrap_or_else(|| Window::open(ctx.target, c)));
                let wait = (!built.is_empty())
                    .then(|| crate::progress::waiting(format!("index build {}", built.join(","))));
                let what = if built.is_empty() {
                    format!("{sql} on {}", t.name())
                } else {
                    format!("building {} on {}", built.join(", "), t.name())
                };
                let start = clock::now();
                let (done, cancelled) = match (watcher.as_mut(), id) {
                    (Some(w), Some(id)) => w.watch(&[id], &what, || c.execute(sql)),
                    _ => (c.execute(sql), None),
                };
                let seconds = clock::since(start).as_secs_f64();
                if let (Err(_), Some(seen)) = (&done, cancelled) {
                    return Err(seen.error(&what));
                }
                done.with_context(|| {
                    if built.is_empty() {
                        format!("{sql} failed")
                    } else {
                        format!("building {} failed", built.join(", "))
                    }
                })?;
                drop(wait);
                let Some(window) = window else {
                    continue; // a session setting of the plan
                };
                let _wait = crate::progress::waiting("the server's counters of the build");
                // the session's own connection is done after its last statement: closed first
                let cost = match own.take() {
                    Some(o) if last_of_session => {
                        drop(o);
                        Some(window.close(ctx.target, &mut *conn))
                    }
                    kept => {
                        own = kept;
                        let c: &mut dyn Conn = match own.as_mut() {
                            Some(c) => c.as_mut(),
                            None => &mut *conn,
                        };
                        Some(window.close(ctx.target, c))
                    }
                };
                let b = IndexBuild {
                    table: t.name().to_string(),
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
                unbuilt.retain(|n| !b.indexes.contains(n));
                on_build(b);
            }
        }
    }
    Ok(())
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
    pub table: &'a TableState,
    /// Secondary indexes to build (0..3).
    pub idxs: Vec<usize>,
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
    /// User-defined indexes (`--index`) to build instead of `idxs` (the insert benchmark's);
    /// they get the validity check but no query-plan check.
    pub specs: Option<Vec<crate::dbms::IndexSpec>>,
}

pub use crate::measure::resources::CostSource;

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

/// What a build waits for once its sessions are open, right before its statements start
/// (`before`), and signals right after they end, before its checks (`after`): builds on
/// several servers started together, or run back to back.
pub struct Gate<'a> {
    /// Called right before the clock starts.
    pub before: &'a dyn Fn(),
    /// Called right after the statements ended.
    pub after: &'a dyn Fn(),
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
    let pass = || {
        if let Some(g) = gate {
            (g.before)();
            (g.after)();
        }
    };
    let t = req.table;
    let specs: Vec<crate::dbms::IndexSpec> = match &req.specs {
        Some(v) => v.clone(),
        None => t.sql.indexes(&req.idxs),
    };
    let names: Vec<String> = specs.iter().map(|x| x.name.clone()).collect();
    let rows = t.expected_rows.load(Ordering::SeqCst).max(0) as u64;
    let mut r = BuildResult {
        knobs: req.knobs.clone(),
        build: req.label.clone(),
        indexes: names.clone(),
        mode: if req.online { "online" } else { "blocking" }.into(),
        repeat: req.repeat,
        rows,
        ..Default::default()
    };
    let plan = match req
        .plan
        .clone()
        .map(Ok)
        .unwrap_or_else(|| target.index_build_plan(&specs, req.online))
    {
        Ok(p) => p,
        Err(e) => {
            r.error = Some(format!("{e:#}"));
            pass();
            return (r, None);
        }
    };
    // Another session's lock the build waits for is shown and bounded (dbms::lock_watch):
    // its watcher connects before the window opens, see `Watcher::open` for what it adds.
    let mut watcher = crate::dbms::lock_watch::Watcher::open(target);
    // What the DBMS reports over the build (`--server-figures`), opened before the sessions
    let reported = crate::measure::resources::ReportedWindow::open(target, conn, cost);
    let counters_before = target.io_counters(conn).unwrap_or_default();
    // Every session connects and gets its knobs before the clock starts: a build's time is its
    // statements' time, not the time to open connections.
    let mut conns = Vec::with_capacity(plan.len());
    let mut ids = Vec::new();
    for _ in &plan {
        match open_session(target, req.session_knobs) {
            Ok(mut c) => {
                ids.extend(watcher.as_ref().and_then(|w| w.session_id(c.as_mut())));
                conns.push(c)
            }
            Err(e) => {
                r.error = Some(format!("{e:#}"));
                pass();
                return (r, None);
            }
        }
    }
    let poll_conn = target.connect().ok();
    if let Some(g) = gate {
        (g.before)();
    }
    let cost_before = cost.sample();
    let done = AtomicBool::new(false);
    let _wait = crate::progress::waiting(format!(
        "index build {}{}",
        names.join(","),
        if req.knobs.is_empty() {
            String::new()
        } else {
            format!(
                " at {}",
                req.knobs
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        }
    ));
    let what = if names.is_empty() {
        format!("{} of {}", req.label, t.name())
    } else {
        format!("building {} on {}", names.join(", "), t.name())
    };
    let start = clock::now();
    let build = || {
        std::thread::scope(|s| {
            let poller = s.spawn(|| poll_progress(target, poll_conn, &done, start));
            let sessions: Vec<_> = plan
                .iter()
                .zip(conns)
                .map(|(stmts, mut c)| {
                    s.spawn(move || {
                        let mut run = || -> Result<()> {
                            for sql in stmts {
                                c.execute(sql)?;
                            }
                            Ok(())
                        };
                        // The connection is closed after the clock stops.
                        (run(), c)
                    })
                })
                .collect();
            let mut open = Vec::new();
            let results: Vec<Result<()>> = sessions
                .into_iter()
                .map(|h| match h.join() {
                    Ok((res, c)) => {
                        open.push(c);
                        res
                    }
                    Err(_) => Err(anyhow::anyhow!("build session panicked")),
                })
                .collect();
            // The sessions are done: the build's time does not include the poller's last sleep.
            let end = clock::now();
            if let Some(g) = gate {
                (g.after)();
            }
            let seconds = end.duration_since(start).as_secs_f64();
            done.store(true, Ordering::SeqCst);
            let progress = poller.join().unwrap_or_default();
            drop(open);
            (results, seconds, progress, end)
        })
    };
    let ((mut results, seconds, progress, end), cancelled) = match watcher.as_mut() {
        Some(w) => w.watch(&ids, &what, build),
        None => (build(), None),
    };
    drop(watcher);
    if let Some(seen) = cancelled {
        // The session the watcher cancelled failed with the DBMS's "cancelled": say why.
        for r in results.iter_mut().filter(|r| r.is_err()) {
            *r = Err(seen.error(&what));
        }
    }
    r.seconds = seconds;
    r.progress = progress;
    // The DBMS's counters first: reading them waits for the build sessions to end, so their
    // CPU and I/O are in the sample that follows.
    let counters_after = target.io_counters(conn).unwrap_or_default();
    r.counters = counter_deltas(&counters_before, &counters_after);
    r.server_reported = reported.map(|w| w.close(target, conn));
    if r.server_write_bytes.is_none() {
        // not on this machine: written as the DBMS counts them, from its own report
        r.server_write_bytes = r.server_reported.as_ref().and_then(|x| x.written_bytes);
    }
    if let (Some(a), Some(b)) = (cost_before, cost.sample()) {
        let d = b.since(&a);
        r.server_cpu_secs = Some(d.cpu_us as f64 / 1e6);
        r.server_read_bytes = d.read_bytes;
        // Bytes written as the DBMS counts them; /proc write_bytes is not bytes written (see
        // `ServerSample::dirtied_bytes`). For an embedded DBMS: the bytes passed to writes.
        r.server_write_bytes = match cost {
            CostSource::Embedded => d.write_call_bytes,
            _ => target.written_bytes(&r.counters).map(|(b, _)| b),
        };
    }
    r.rows_per_sec = if r.seconds > 0.0 {
        rows as f64 / r.seconds
    } else {
        0.0
    };
    let errors: Vec<String> = results
        .into_iter()
        .filter_map(|x| x.err().map(|e| format!("{e:#}")))
        .collect();
    if !errors.is_empty() {
        let mut errors = errors;
        errors.dedup();
        r.error = Some(errors.join("; "));
    }
    // Validity and use, and clean-up of what a failed build left.
    for (i, (spec, name)) in specs.iter().zip(&names).enumerate() {
        let exists = conn.index_exists(t.name(), name).unwrap_or(false);
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
        match validity_action(target.index_valid(conn, t.name(), name)) {
            ValidityAction::Keep => {}
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
                continue;
            }
            ValidityAction::Report(e) => {
                // Not knowing is not INVALID: the index stays, and the check says why it
                // could not be made.
                r.checks.push(Check {
                    name: "valid".into(),
                    ok: false,
                    detail: format!(
                        "cannot tell whether {name} is valid (left in place): the validity query failed: {e}"
                    ),
                });
            }
        }
        if req.specs.is_some() {
            continue; // no query of ixbench's own to explain on a user index
        }
        match t.sql.explain(conn, req.idxs[i]) {
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
    r.warnings
        .extend(target.build_warnings(conn, req.session_knobs, &r.progress));
    if r.error.is_none() {
        let tables = vec![t.name().to_string()];
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
    r.ok = r.error.is_none() && r.checks.iter().all(|c| c.ok);
    (r, Some((start, end)))
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

/// A build session: a new connection with the session knobs applied.
fn open_session(target: &dyn Dbms, knobs: &[(String, String)]) -> Result<Box<dyn Conn>> {
    let mut c = target.connect()?;
    for (k, v) in knobs {
        target.set_session_knob(c.as_mut(), k, v)?;
    }
    Ok(c)
}

/// Sample the DBMS's progress view on `conn` until `done`: every 0.2 s for the first 5 s,
/// then once a second.
fn poll_progress(
    target: &dyn Dbms,
    conn: Option<Box<dyn Conn>>,
    done: &AtomicBool,
    start: Instant,
) -> Vec<(f64, String)> {
    let mut out = Vec::new();
    let Some(mut c) = conn else {
        return out;
    };
    let mut next = start;
    while !done.load(Ordering::SeqCst) {
        if clock::now() >= next {
            match target.build_progress(c.as_mut()) {
                Ok(Some(sample)) => out.push((clock::since(start).as_secs_f64(), sample)),
                Ok(None) | Err(_) if out.is_empty() => return out,
                _ => {}
            }
            // Every 0.2 s for the first 5 s (most builds are short: a progress timeline of
            // them needs several samples), then every second.
            next += if clock::since(start) < std::time::Duration::from_secs(5) {
                std::time::Duration::from_millis(200)
            } else {
                std::time::Duration::from_secs(1)
            };
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    out
}

/// Drop those of the secondary indexes `idxs` of the table that exist (ixbench's own table).
pub fn drop_indexes(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    t: &TableState,
    idxs: &[usize],
) -> Result<()> {
    for &i in idxs {
        let name = INDEXES[i].name(t.name());
        if conn.index_exists(t.name(), &name)? {
            // Shown and bounded while another session's lock holds it up.
            let what = format!("dropping {name}");
            crate::dbms::lock_watch::watched(target, conn, &what, |conn| {
                conn.execute(&target.drop_index_sql(&t.sql.index(i)))
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
