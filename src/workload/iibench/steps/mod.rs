//! The insert benchmark's steps, one file per kind: the loads ([`load`]: l.i0, l.i1, l.i2),
//! read+write ([`read_write`]: qrN, qpN, qN.K), maint ([`maintenance`]), the key patterns of a
//! run's inserts ([`key_patterns`]: `--pk-pattern`, `--index-pattern`) and a step's figures and
//! checks from what it measured ([`metrics`]). This file holds what they share: the settings
//! and context every step reads, the writes in doubt after a failover, and the checks of the
//! tables after a step. The index build (l.x) is the index lab's too and lives with it
//! (`step::create_index`, reached through the steps' host, `workload::runner::StepHost`); what
//! runs one step is [`crate::workload::iibench::exec`], a plan of them in a session
//! `step::plan_run`.

pub mod key_patterns;
pub mod load;
pub mod maintenance;
pub mod metrics;
pub mod read_write;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;

use crate::dbms::{Conn, Dbms};
use crate::measure::failover::{subset_sums, Failover};
use crate::measure::interval::LineFormat;
use crate::results::{Check, StepResult};
use crate::workload::iibench::{TableState, INDEXES};

/// Settings every step reads.
#[derive(Debug, Clone)]
pub struct StepConfig {
    /// Clients (each with its own writer, deleter and query connections).
    pub clients: usize,
    /// Secondary indexes kept (0..=3).
    pub secondary_indexes: usize,
    /// Run seed.
    pub seed: u64,
    /// Length of `data` values.
    pub data_len: (usize, usize),
    /// Reporting interval.
    pub interval: Duration,
    /// Per-interval text form.
    pub line_format: LineFormat,
    /// Retries of a transient error before the step fails.
    pub max_retries: u32,
    /// Spacing of the throttled writers' intended starts.
    pub arrivals: crate::measure::schedule::Arrivals,
    /// A step fails when no operation completed for this long.
    pub stall_timeout: Duration,
    /// Longest wait for the server to be quiet before a measured step or build.
    pub quiet_timeout: Duration,
    /// Nice increment of the closed-loop query threads of read+write steps (0: none), see
    /// [`crate::measure::priority`].
    pub query_nice: i32,
    /// Other ixbench processes write to the same server at the same time (this process is
    /// one part of a `--client-count` run).
    pub other_processes: bool,
}

/// What a step runs with.
pub struct StepCtx<'a> {
    /// The database.
    pub target: &'a dyn Dbms,
    /// Settings.
    pub cfg: &'a StepConfig,
    /// The tables (one per client, or one shared).
    pub tables: &'a [TableState],
    /// Ctrl-C.
    pub interrupt: &'a AtomicBool,
    /// Index of this step in the run (for seeds).
    pub step_no: u64,
}

impl StepCtx<'_> {
    /// The table client `c` writes to.
    pub fn table_of(&self, c: usize) -> &TableState {
        &self.tables[c % self.tables.len()]
    }

    /// Where a worker writing to or reading `table` connects again when its node died: the
    /// target, and `table`'s count of connections made again (the node watcher's figure).
    pub fn failover<'t>(&'t self, table: &'t TableState) -> Failover<'t> {
        Failover {
            target: self.target,
            reconnects: &table.reconnects,
        }
    }
}

/// Check that every table holds exactly the rows ixbench inserted minus those it deleted, and
/// that no delete came up short.
pub fn check_rows(conn: &mut dyn Conn, tables: &[TableState], step: &mut StepResult) -> Result<()> {
    for t in tables {
        let have = t.sql.count_rows(conn)? as i64;
        let want = t.expected_rows.load(Ordering::SeqCst);
        let doubt = std::mem::take(&mut *t.in_doubt.lock().unwrap_or_else(|e| e.into_inner()));
        if doubt.is_empty() {
            step.checks.push(Check {
                name: "rows".into(),
                ok: have == want,
                detail: format!(
                    "{}: {have} rows in the table, {want} expected (inserted − deleted)",
                    t.name()
                ),
            });
        } else {
            // Each write in doubt committed whole or not at all: the count must be what was
            // surely committed plus the changes of some of them; those then count as committed.
            let diff = have - want;
            let ok = subset_sums(&doubt).contains(&diff);
            if ok {
                t.expected_rows.fetch_add(diff, Ordering::SeqCst);
            }
            step.checks.push(Check {
                name: "rows".into(),
                ok,
                detail: format!(
                    "{}: {have} rows in the table, {want} expected (inserted − deleted) plus \
                     the commits of some of {} writes whose outcome was unknown (connection lost \
                     mid-write, changes {doubt:?}): {}",
                    t.name(),
                    doubt.len(),
                    if ok {
                        format!("{diff:+} rows of them committed")
                    } else {
                        format!("no choice of them explains {diff:+} rows")
                    }
                ),
            });
        }
        let short = t.short_deletes.load(Ordering::SeqCst);
        if short > 0 {
            step.checks.push(Check {
                name: "deletes".into(),
                ok: false,
                detail: format!(
                    "{}: {short} deletes removed fewer rows than asked",
                    t.name()
                ),
            });
        }
    }
    Ok(())
}

/// Check that each secondary index exists and that its range query's plan reads it as a
/// covering index.
pub fn check_plans(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    tables: &[TableState],
    n_indexes: usize,
    step: &mut StepResult,
) -> Result<()> {
    for t in tables {
        for (i, idx) in INDEXES.iter().enumerate().take(n_indexes) {
            let name = idx.name(t.name());
            if !conn.index_exists(t.name(), &name)? {
                step.checks.push(Check {
                    name: "index".into(),
                    ok: false,
                    detail: format!("{name} does not exist"),
                });
                continue;
            }
            // EXPLAIN is a side query: when it fails the plan is unknown (a warning says why)
            // and the step keeps what it measured.
            let plan = match t.sql.explain(conn, i) {
                Ok(p) => p,
                Err(e) => {
                    step.warnings.push(format!(
                        "plan of the range query on {name} unknown (not checked): EXPLAIN failed: {}",
                        crate::format::error_line(&e)
                    ));
                    continue;
                }
            };
            match target.plan_uses_index(&plan, &name) {
                Some(ok) => step.checks.push(Check {
                    name: "plan".into(),
                    ok,
                    detail: format!("range query on {name}: {plan}"),
                }),
                None => step.warnings.push(format!(
                    "plan of the range query on {name} not checked: reading plans is not supported by this DBMS ({})",
                    target.kind()
                )),
            }
        }
    }
    Ok(())
}

/// Record a write of `rows` row changes (+ inserted, − deleted) whose commit may or may not
/// have happened ([`check_rows`] settles them).
pub fn in_doubt(table: &TableState, rows: i64) {
    if rows != 0 {
        table
            .in_doubt
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(rows);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows check after writes in doubt: the count must be what surely committed plus
    /// the rows of some of them (which then count as committed); anything else fails.
    #[test]
    fn rows_check_settles_writes_in_doubt() {
        use crate::workload::iibench::{Batch, RowGen, Statements, TableSql};
        let dir = tempfile::tempdir().unwrap();
        let spec = crate::dbms::TargetSpec::parse(&format!(
            "sqlite:{}",
            dir.path().join("d.db").display()
        ))
        .unwrap();
        let db = crate::dbms::open(&spec, &Default::default()).unwrap();
        let mut conn = db.connect().unwrap();
        let sql = TableSql::new("pi1", db.dialect());
        conn.execute(&sql.create_table()).unwrap();
        let t = TableState::new(sql, 0, 0);
        let mut stmts = Statements::new(t.sql.clone(), true);
        stmts.prepare_insert(conn.as_mut(), 10).unwrap();
        let mut gen = RowGen::new(1, 10, 10);
        let mut b = Batch::default();
        for _ in 0..3 {
            gen.fill(&mut b, 10, 0);
            stmts.insert(conn.as_mut(), &b).unwrap();
        }
        // 30 rows: 20 surely committed, two inserts of 10 in doubt (one committed) and a
        // delete of 5 in doubt (not committed).
        t.expected_rows.store(20, Ordering::SeqCst);
        *t.in_doubt.lock().unwrap() = vec![10, 10, -5];
        let mut step = StepResult::new("l.i1", "");
        check_rows(conn.as_mut(), std::slice::from_ref(&t), &mut step).unwrap();
        assert!(step.checks[0].ok, "{:?}", step.checks);
        assert!(step.checks[0].detail.contains("+10 rows of them committed"));
        assert_eq!(t.expected_rows.load(Ordering::SeqCst), 30);
        assert!(t.in_doubt.lock().unwrap().is_empty());
        // 30 rows with 22 surely committed and one insert of 10 in doubt: no choice explains it.
        t.expected_rows.store(22, Ordering::SeqCst);
        *t.in_doubt.lock().unwrap() = vec![10];
        let mut step = StepResult::new("l.i1", "");
        check_rows(conn.as_mut(), std::slice::from_ref(&t), &mut step).unwrap();
        assert!(!step.checks[0].ok, "{:?}", step.checks);
        assert!(step.checks[0]
            .detail
            .contains("no choice of them explains +8 rows"));
        assert_eq!(t.expected_rows.load(Ordering::SeqCst), 22);
    }
}
