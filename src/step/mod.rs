//! Steps of a run, one file per kind: load ([`load`]: l.i0, l.i1, l.i2), index creation
//! ([`create_index`]: l.x), maintenance ([`maintenance`]), read+write ([`read_write`]: qrN, qpN,
//! qN.K), knob sweeps ([`sweep`]), a transaction workload's clients ([`transactions`]) and the
//! phase every transaction workload's run shares ([`txn_phase`]), the OLTP mixes' and the
//! time series' runners ([`oltp_run`], [`timeseries_run`]: `ixbench run --workload`, `ixbench
//! oltp`, `ixbench timeseries`), the load around a schema change ([`online_ddl`]), the key
//! patterns of a run's inserts ([`key_patterns`]: `--pk-pattern`, `--index-pattern`). This file
//! holds what the insert benchmark's steps share: the step plan, the per-table state, and the
//! checks.

pub mod child;
pub mod create_index;
pub mod exec;
pub mod failover;
pub mod key_patterns;
pub mod load;
pub mod maintenance;
pub mod metrics;
pub mod oltp_run;
pub mod online_ddl;
pub mod own_table;
pub mod read_write;
pub mod schema_tools;
pub mod sweep;
pub mod timeseries_run;
pub mod transactions;
pub mod txn_phase;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::dbms::{Conn, Dbms};
use crate::measure::interval::LineFormat;
use crate::results::{Check, StepResult};
use crate::workload::iibench::INDEXES;

/// Which query a read+write step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryKind {
    /// Short range scans on a secondary index.
    Range,
    /// 10 PKs per query.
    Point,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StepKind {
    /// Insert rows as fast as possible; `create_table` for l.i0; `delete` keeps the table size
    /// constant by deleting as many of the oldest rows.
    Load {
        /// Rows each client inserts.
        rows: u64,
        /// Rows per commit.
        rows_per_commit: usize,
        /// Delete as many rows as are inserted, on a second connection.
        delete: bool,
        /// Create the tables first (PK only).
        create_table: bool,
        /// `--time`: stop inserting after this many seconds instead of after `rows` rows.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seconds: Option<f64>,
    },
    /// Create the secondary indexes.
    CreateIndexes,
    /// The DBMS's maintenance between load and query steps.
    Maintenance,
    /// Queries as fast as possible while each client's writer inserts (and deletes) `rate`
    /// rows/s, until it has inserted `rate * seconds` rows.
    ReadWrite {
        /// Range or point queries.
        query: QueryKind,
        /// Rows/s each client's writer inserts (and deletes).
        rate: u64,
        /// Planned length.
        seconds: f64,
        /// Rows per commit of the writer.
        rows_per_commit: usize,
        /// Delete as many rows as are inserted.
        delete: bool,
        /// `--time`: the step ends at `seconds` even when the writers are behind (else at 3x).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        time_bound: bool,
    },
}

/// One planned step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSpec {
    /// Name as printed (`l.i0`, `qr100`, `q200.1`).
    pub name: String,
    /// What it does.
    pub kind: StepKind,
}

impl StepSpec {
    /// One line describing the step.
    pub fn describe(&self, clients: usize) -> String {
        let per = if clients > 1 { " per client" } else { "" };
        match &self.kind {
            StepKind::Load {
                rows,
                rows_per_commit,
                delete,
                create_table,
                seconds,
            } => format!(
                "{}insert {}{per} as fast as possible, {rows_per_commit} rows/commit{}",
                if *create_table { "create tables (PK only), " } else { "" },
                match seconds {
                    Some(t) => format!("for {t} s (--time)"),
                    None => format!("{rows} rows"),
                },
                if *delete { ", deleting as many of the oldest rows" } else { "" }
            ),
            StepKind::CreateIndexes => "create the secondary indexes".into(),
            StepKind::Maintenance => "maintenance (statistics, checkpoint)".into(),
            StepKind::ReadWrite {
                query,
                rate,
                seconds,
                rows_per_commit,
                delete,
                time_bound,
            } => format!(
                "{} queries as fast as possible while inserting{} {rate} rows/s{per} ({rows_per_commit} rows/commit) for {seconds} s{}",
                match query {
                    QueryKind::Range => "range",
                    QueryKind::Point => "point",
                },
                if *delete { " and deleting" } else { "" },
                if *time_bound { " (--time)" } else { "" }
            ),
        }
    }
}

/// Sizes and counts the plan is made from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlanParams {
    /// Rows per client for l.i0.
    pub rows: u64,
    /// Rows per client for l.i1 + l.i2 (4/5 and 1/5).
    pub rows2: u64,
    /// Rows per commit in l.i0.
    pub rows_per_commit: usize,
    /// Rows per commit in l.i1.
    pub rows_per_commit_i1: usize,
    /// Rows per commit in l.i2.
    pub rows_per_commit_i2: usize,
    /// Rows per commit of the writers in read+write steps.
    pub rw_rows_per_commit: usize,
    /// Rates of the read+write steps (rows/s per client).
    pub rates: Vec<u64>,
    /// Planned seconds of each read+write step.
    pub query_seconds: f64,
}

/// Named step sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Profile {
    /// l.i0, l.x, l.i1, l.i2, maint, then qrN and qpN for each rate.
    Default,
    /// Seed 000's sequence: l.i0, l.x, maint, l.i1 (insert only), then q100.1, q100.2, q200.1
    /// ... q1000.2 (range queries, each rate twice).
    #[value(name = "2020")]
    P2020,
}

/// The rates of the 2020 profile.
pub const RATES_2020: [u64; 6] = [100, 200, 400, 600, 800, 1000];

/// The step names of a profile.
pub fn profile_steps(profile: Profile, rates: &[u64]) -> Vec<String> {
    match profile {
        Profile::Default => {
            let mut v: Vec<String> = ["l.i0", "l.x", "l.i1", "l.i2", "maint"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            for r in rates {
                v.push(format!("qr{r}"));
                v.push(format!("qp{r}"));
            }
            v
        }
        Profile::P2020 => {
            let mut v: Vec<String> = ["l.i0", "l.x", "maint", "l.i1"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            for r in rates {
                v.push(format!("q{r}.1"));
                v.push(format!("q{r}.2"));
            }
            v
        }
    }
}

/// Turn step names into specs. In the 2020 profile l.i1 is insert-only (the table grows).
pub fn parse_steps(names: &[String], p: &PlanParams, profile: Profile) -> Result<Vec<StepSpec>> {
    let mut out = Vec::new();
    for name in names {
        let name = name.trim();
        let kind = match name {
            "l.i0" => StepKind::Load {
                rows: p.rows,
                rows_per_commit: p.rows_per_commit,
                delete: false,
                create_table: true,
                seconds: None,
            },
            "l.x" => StepKind::CreateIndexes,
            "l.i1" => StepKind::Load {
                rows: if profile == Profile::P2020 {
                    p.rows2
                } else {
                    p.rows2 * 4 / 5
                },
                rows_per_commit: p.rows_per_commit_i1,
                delete: profile != Profile::P2020,
                create_table: false,
                seconds: None,
            },
            "l.i2" => StepKind::Load {
                rows: p.rows2 / 5,
                rows_per_commit: p.rows_per_commit_i2,
                delete: true,
                create_table: false,
                seconds: None,
            },
            "maint" => StepKind::Maintenance,
            _ => parse_rw(name, p)?,
        };
        out.push(StepSpec {
            name: name.to_string(),
            kind,
        });
    }
    if out.is_empty() {
        bail!("no steps to run");
    }
    Ok(out)
}

fn parse_rw(name: &str, p: &PlanParams) -> Result<StepKind> {
    let bad = || {
        anyhow::anyhow!(
            "unknown step {name:?}: expected l.i0, l.x, l.i1, l.i2, maint, qrN, qpN or qN.K (N = rows/s per client)"
        )
    };
    let (query, num, delete) = if let Some(r) = name.strip_prefix("qr") {
        (QueryKind::Range, r, true)
    } else if let Some(r) = name.strip_prefix("qp") {
        (QueryKind::Point, r, true)
    } else if let Some(r) = name.strip_prefix('q') {
        // q100.1: the 2020 form, range queries with an insert-only writer
        let (rate, rep) = r.split_once('.').ok_or_else(bad)?;
        rep.parse::<u32>().map_err(|_| bad())?;
        (QueryKind::Range, rate, false)
    } else {
        return Err(bad());
    };
    let rate: u64 = num.parse().map_err(|_| bad())?;
    if rate == 0 {
        bail!("step {name}: the insert rate must be at least 1 row/s");
    }
    Ok(StepKind::ReadWrite {
        query,
        rate,
        seconds: p.query_seconds,
        rows_per_commit: p.rw_rows_per_commit,
        delete,
        time_bound: false,
    })
}

pub use crate::workload::iibench::TableState;

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
            let ok = failover::subset_sums(&doubt).contains(&diff);
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
                        crate::out::one_line(&e)
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

    fn params() -> PlanParams {
        PlanParams {
            rows: 1000,
            rows2: 500,
            rows_per_commit: 100,
            rows_per_commit_i1: 50,
            rows_per_commit_i2: 5,
            rw_rows_per_commit: 50,
            rates: vec![100, 500],
            query_seconds: 10.0,
        }
    }

    #[test]
    fn default_profile() {
        let names = profile_steps(Profile::Default, &[100, 500]);
        assert_eq!(
            names,
            ["l.i0", "l.x", "l.i1", "l.i2", "maint", "qr100", "qp100", "qr500", "qp500"]
        );
        let steps = parse_steps(&names, &params(), Profile::Default).unwrap();
        assert_eq!(
            steps[2].kind,
            StepKind::Load {
                rows: 400,
                rows_per_commit: 50,
                delete: true,
                create_table: false,
                seconds: None
            }
        );
        assert_eq!(
            steps[3].kind,
            StepKind::Load {
                rows: 100,
                rows_per_commit: 5,
                delete: true,
                create_table: false,
                seconds: None
            }
        );
        assert!(matches!(
            steps[6].kind,
            StepKind::ReadWrite {
                query: QueryKind::Point,
                rate: 100,
                delete: true,
                ..
            }
        ));
    }

    #[test]
    fn profile_2020() {
        let names = profile_steps(Profile::P2020, &RATES_2020);
        assert_eq!(names.len(), 4 + 12);
        assert_eq!(names[4], "q100.1");
        assert_eq!(names[15], "q1000.2");
        let steps = parse_steps(&names, &params(), Profile::P2020).unwrap();
        assert!(matches!(
            steps[3].kind,
            StepKind::Load {
                rows: 500,
                delete: false,
                ..
            }
        ));
        assert!(matches!(
            steps[5].kind,
            StepKind::ReadWrite {
                query: QueryKind::Range,
                rate: 100,
                delete: false,
                ..
            }
        ));
    }

    #[test]
    fn bad_step_names() {
        for bad in ["l.i9", "qr", "qrx", "qp0", "q100", "q100.x", "x"] {
            let e = parse_steps(&[bad.to_string()], &params(), Profile::Default);
            assert!(e.is_err(), "{bad} accepted");
        }
    }
}
