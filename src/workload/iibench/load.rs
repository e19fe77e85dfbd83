//! The insert benchmark as a [`Workload`] of transactions: its table (`pi1`: the PK and the
//! three secondary indexes, loaded with `rows` rows), and l.i1's load as transactions, each
//! inserting a batch of new rows and deleting as many of the oldest rows, so the table keeps
//! its size. A command that runs a load while something else happens (`ixbench ddl
//! --workload iibench`: an online ADD INDEX under l.i1) runs it at a rate on the one
//! measuring loop, as it runs the OLTP mixes.
//!
//! One transaction: claim the oldest `n` rows under a lock shared by the clients (the PK of
//! the `n`th oldest row not yet claimed), then in one transaction insert `n` new rows and
//! delete the claimed range. Claiming before the transaction lets clients run at once; a
//! transaction that fails leaves its claimed rows in the table and counts nothing, so the rows
//! after are always the rows before + inserted - deleted.

use std::sync::{Arc, Mutex};

use anyhow::{bail, Result};

use crate::dbms::{in_txn, Conn, Dbms, TxnKind};
use crate::workload::iibench::{derive_seed, Batch, RowGen, Statements, TableSql, INDEXES};
use crate::workload::tables;
use crate::workload::{TxnDone, Workload, WorkloadClient};

/// Rows per commit of the load (as l.i0's default).
const LOAD_ROWS_PER_COMMIT: usize = 100;

/// The insert benchmark's l.i1 as transactions on one table.
pub struct InsertLoad {
    sql: Arc<TableSql>,
    kind: &'static str,
    stores_rows: bool,
    rows: u64,
    rows_per_commit: usize,
    data_len: (usize, usize),
    seed: u64,
    /// The PK the next delete of the oldest rows starts from (`None` until a client reads it).
    next_delete: Arc<Mutex<Option<i64>>>,
}

impl InsertLoad {
    /// The table `table` in `dbms`'s SQL, `rows` rows loaded, `rows_per_commit` rows inserted
    /// and deleted per transaction, `data` lengths in `data_len`.
    pub fn new(
        table: &str,
        dbms: &dyn Dbms,
        rows: u64,
        rows_per_commit: usize,
        data_len: (usize, usize),
        seed: u64,
    ) -> Result<Self> {
        tables::validate_name(table)?;
        let sql = TableSql::new(table, dbms.dialect());
        let per = sql.max_rows_per_statement();
        if rows_per_commit == 0 || rows_per_commit > per {
            bail!("rows per commit of the insert benchmark's load: 1 to {per} on this DBMS");
        }
        Ok(InsertLoad {
            sql: Arc::new(sql),
            kind: dbms.kind(),
            stores_rows: dbms.stores_rows(),
            rows,
            rows_per_commit,
            data_len,
            seed,
            next_delete: Default::default(),
        })
    }

    /// Its table's SQL.
    pub fn sql(&self) -> &TableSql {
        &self.sql
    }
}

impl Workload for InsertLoad {
    fn name(&self) -> &str {
        "iibench"
    }

    fn tables(&self) -> Vec<String> {
        vec![self.sql.table.clone()]
    }

    fn load(&self, dbms: &dyn Dbms, _threads: usize) -> Result<()> {
        let mut conn = dbms.connect()?;
        let conn = conn.as_mut();
        let t = &self.sql.table;
        if self.stores_rows {
            // Shown and bounded while another session's lock holds it up.
            let what = format!("creating {t}");
            crate::dbms::lock_watch::watched(dbms, conn, &what, |conn| {
                tables::prepare_new(conn, self.kind, t)?;
                let at = crate::measure::clock::utc_now().to_rfc3339();
                tables::create_owned(conn, self.kind, t, &self.sql.create_table(), &at)
            })?;
        }
        let mut st = Statements::new(self.sql.clone(), self.stores_rows);
        let mut gen = RowGen::new(
            derive_seed(self.seed, &[0x10ad]),
            self.data_len.0,
            self.data_len.1,
        );
        let mut b = Batch::default();
        let mut done = 0u64;
        let ts = crate::measure::clock::utc_now().timestamp();
        while done < self.rows {
            let n = (self.rows - done).min(LOAD_ROWS_PER_COMMIT as u64) as usize;
            gen.fill(&mut b, n, ts);
            st.insert(conn, &b)?;
            done += n as u64;
        }
        for i in 0..INDEXES.len() {
            conn.execute(&self.sql.create_index(i))?;
        }
        *self.next_delete.lock().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }

    fn client(&self, conn: &mut dyn Conn, id: usize, seed: u64) -> Result<Box<dyn WorkloadClient>> {
        let _ = conn;
        Ok(Box::new(InsertClient {
            st: Statements::new(self.sql.clone(), self.stores_rows),
            gen: RowGen::new(
                derive_seed(seed, &[id as u64, 0x11]),
                self.data_len.0,
                self.data_len.1,
            ),
            batch: Batch::default(),
            n: self.rows_per_commit,
            next_delete: self.next_delete.clone(),
        }))
    }
}

/// One client: its statements, row generator and batch.
struct InsertClient {
    st: Statements,
    gen: RowGen,
    batch: Batch,
    n: usize,
    next_delete: Arc<Mutex<Option<i64>>>,
}

impl WorkloadClient for InsertClient {
    fn run(&mut self, conn: &mut dyn Conn) -> Result<TxnDone> {
        let n = self.n;
        // Claim the oldest n rows not yet claimed.
        let (from, upto) = {
            let mut next = self.next_delete.lock().unwrap_or_else(|e| e.into_inner());
            let from = match *next {
                Some(f) => f,
                None => self.st.sql().min_max_ids(conn)?.map_or(1, |m| m.0),
            };
            let upto = self.st.nth_id(conn, from, n)?.unwrap_or(i64::MAX);
            *next = Some(upto.saturating_add(1));
            (from, upto)
        };
        let ts = crate::measure::clock::utc_now().timestamp();
        self.gen.fill(&mut self.batch, n, ts);
        let (st, b) = (&mut self.st, &self.batch);
        let deleted = in_txn(conn, TxnKind::Write, |c| {
            st.insert(c, b)?;
            st.delete_range(c, from, upto)
        })?;
        Ok(TxnDone {
            reads: 1,
            writes: 2,
            other: 2,
            rows: n as u64 + deleted,
            inserted: n as u64,
            deleted,
        })
    }
}
