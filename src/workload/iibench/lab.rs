//! The insert benchmark in the index lab (`ixbench index`, its default workload): its table
//! `PREFIX1`, loaded by its l.i0 step, its three secondary indexes and their plan check (the
//! range query on each), handed to the lab as a [`LabTable`] by its registry entry
//! ([`hooks`]); and what its l.x step builds ([`crate::workload::tables::IndexedTables`] for [`StepCtx`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::dbms::{Conn, Dbms, SqlDialect};
use crate::measure::interval::LineFormat;
use crate::results::StepResult;
use crate::workload::iibench::exec::{create_tables, run_step};
use crate::workload::iibench::plan::{StepKind, StepSpec};
use crate::workload::iibench::steps::{StepConfig, StepCtx};
use crate::workload::iibench::{TableSql, TableState, INDEXES};
use crate::workload::runner::StepHost;
use crate::workload::tables::CheckedTable;
use crate::workload::tables::{IndexedTable, IndexedTables};
use crate::workload::lab::{
    LabHooks, LabIndex, LabOn, LabSettings, LabTable,
};

/// The insert benchmark's hooks for the lab and `ixbench pattern`.
pub fn hooks() -> LabHooks {
    LabHooks {
        table: |prefix| Box::new(IibenchLab::new(&format!("{prefix}1"))),
        codes: crate::workload::iibench::codes::index_codes,
    }
}

/// The insert benchmark's table in the lab.
struct IibenchLab {
    name: String,
    indexes: Vec<LabIndex>,
    /// Its state and the settings of its steps, once the target is known.
    state: OnceLock<(TableState, StepConfig)>,
}

impl IibenchLab {
    fn new(name: &str) -> IibenchLab {
        IibenchLab {
            name: name.to_string(),
            indexes: INDEXES
                .iter()
                .map(|d| LabIndex {
                    short: d.suffix.to_string(),
                    spec: crate::dbms::IndexSpec {
                        table: name.to_string(),
                        name: d.name(name),
                        columns: d.columns.iter().map(|c| c.to_string()).collect(),
                        unique: false,
                    },
                })
                .collect(),
            state: OnceLock::new(),
        }
    }

    fn state(&self) -> &(TableState, StepConfig) {
        self.state.get().expect("the lab table is opened first")
    }

    fn ctx<'a>(&'a self, target: &'a dyn Dbms, interrupt: &'a AtomicBool) -> StepCtx<'a> {
        let (st, cfg) = self.state();
        StepCtx {
            target,
            cfg,
            tables: std::slice::from_ref(st),
            interrupt,
            step_no: 0,
        }
    }
}

impl LabTable for IibenchLab {
    fn name(&self) -> &str {
        &self.name
    }

    fn indexes(&self) -> &[LabIndex] {
        &self.indexes
    }

    fn open(&self, dialect: &SqlDialect, settings: LabSettings) {
        let cfg = StepConfig {
            clients: 1,
            secondary_indexes: 3,
            seed: settings.seed,
            data_len: settings.data_len,
            interval: Duration::from_secs(1),
            line_format: LineFormat::V1,
            max_retries: 100,
            arrivals: crate::measure::schedule::Arrivals::Uniform,
            stall_timeout: Duration::from_secs(60),
            quiet_timeout: settings.quiet_timeout,
            query_nice: 0,
            other_processes: false,
        };
        let st = TableState::new(TableSql::new(&self.name, dialect), 0, 0);
        // Opened once: a second call keeps the first state.
        let _ = self.state.set((st, cfg));
    }

    fn rows(&self) -> u64 {
        self.state().0.expected_rows.load(Ordering::SeqCst).max(0) as u64
    }

    fn set_rows(&self, rows: u64) {
        self.state().0.expected_rows.store(rows as i64, Ordering::SeqCst);
    }

    fn count_rows(&self, conn: &mut dyn Conn) -> Result<u64> {
        self.state().0.sql.count_rows(conn)
    }

    fn columns(&self, dialect: &SqlDialect) -> Vec<String> {
        TableSql::new(&self.name, dialect)
            .create_table()
            .split_once('(')
            .map(|(_, c)| {
                c.split(',')
                    .filter_map(|d| d.split_whitespace().next())
                    .map(|w| w.to_ascii_lowercase())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn explain(&self, conn: &mut dyn Conn, dialect: &SqlDialect, index: &str) -> Result<String> {
        let i = INDEXES
            .iter()
            .position(|d| d.name(&self.name) == index)
            .with_context(|| format!("{index} is not an index of {}", self.name))?;
        TableSql::new(&self.name, dialect).explain(conn, i)
    }

    fn load(&self, on: LabOn, rows: u64, create: bool, host: &dyn StepHost) -> StepResult {
        let spec = StepSpec {
            name: "l.i0".into(),
            kind: StepKind::Load {
                rows,
                rows_per_commit: 100,
                delete: false,
                create_table: create,
                seconds: None,
            },
        };
        crate::outln!("\n== {}: {}", spec.name, spec.describe(1));
        crate::progress::step_named("l.i0");
        let ctx = self.ctx(on.target, on.interrupt);
        let (conn, store) = (on.conn, on.store);
        let tables: Vec<&dyn CheckedTable> = ctx.tables.iter().map(|t| t as _).collect();
        host.watch_step(&spec.name, &tables, &mut || {
            run_step(&ctx, conn, &spec, store, host)
        })
    }

    fn create(&self, on: LabOn, _host: &dyn StepHost) -> Result<()> {
        create_tables(&self.ctx(on.target, on.interrupt), on.conn).map(|_| ())
    }
}

/// l.x builds the first `--secondary-indexes` indexes on every table of the step.
impl IndexedTables for StepCtx<'_> {
    fn target(&self) -> &dyn Dbms {
        self.target
    }

    fn interrupt(&self) -> &AtomicBool {
        self.interrupt
    }

    fn indexed_tables(&self) -> Vec<IndexedTable> {
        let idxs: Vec<usize> = (0..self.cfg.secondary_indexes.min(INDEXES.len())).collect();
        self.tables
            .iter()
            .map(|t| IndexedTable {
                name: t.name().to_string(),
                rows: t.expected_rows.load(Ordering::SeqCst).max(0) as u64,
                indexes: t.sql.indexes(&idxs),
            })
            .collect()
    }
}
