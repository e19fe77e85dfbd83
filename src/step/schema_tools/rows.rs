//! The row-count check of a method: the workload's clients count the rows their committed
//! transactions inserted and deleted, and after the change the tables must hold exactly that.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use anyhow::Result;

use crate::dbms::{Conn, Dbms};
use crate::workload::{TxnDone, Workload, WorkloadClient};

/// The row-count check: the tables hold the rows they held when the load started plus what
/// the workload's committed transactions inserted less what they deleted.
pub fn row_check(
    tables: &[String],
    before: Option<i64>,
    net: i64,
    after: Option<i64>,
) -> crate::results::Check {
    let what = tables.join(", ");
    match (before, after) {
        (Some(b), Some(a)) => crate::results::Check {
            name: "row count".into(),
            ok: b + net == a,
            detail: format!(
                "{what}: {b} rows when the load started {} {} from the workload's committed transactions = {}; the tables hold {a}",
                if net < 0 { "-" } else { "+" },
                net.abs(),
                b + net
            ),
        },
        _ => crate::results::Check {
            name: "row count".into(),
            ok: false,
            detail: format!("{what}: the rows could not be counted"),
        },
    }
}

/// A workload whose clients count the rows their committed transactions inserted and
/// deleted (a transaction that returned Ok committed: see [`WorkloadClient::run`]).
pub struct RowCounting<'a> {
    inner: &'a dyn Workload,
    net: Arc<AtomicI64>,
}

impl<'a> RowCounting<'a> {
    /// Count the rows of `inner`'s clients.
    pub fn new(inner: &'a dyn Workload) -> Self {
        RowCounting {
            inner,
            net: Arc::default(),
        }
    }

    /// Inserted less deleted rows since the last [`RowCounting::reset`].
    pub fn net(&self) -> i64 {
        self.net.load(Ordering::SeqCst)
    }

    /// Start counting from zero.
    pub fn reset(&self) {
        self.net.store(0, Ordering::SeqCst);
    }
}

impl Workload for RowCounting<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn tables(&self) -> Vec<String> {
        self.inner.tables()
    }

    fn load(&self, dbms: &dyn Dbms, threads: usize) -> Result<()> {
        self.inner.load(dbms, threads)
    }

    fn client(&self, conn: &mut dyn Conn, id: usize, seed: u64) -> Result<Box<dyn WorkloadClient>> {
        Ok(Box::new(CountingClient {
            inner: self.inner.client(conn, id, seed)?,
            net: Arc::clone(&self.net),
        }))
    }
}

struct CountingClient {
    inner: Box<dyn WorkloadClient>,
    net: Arc<AtomicI64>,
}

impl WorkloadClient for CountingClient {
    fn run(&mut self, conn: &mut dyn Conn) -> Result<TxnDone> {
        let d = self.inner.run(conn)?;
        self.net
            .fetch_add(d.inserted as i64 - d.deleted as i64, Ordering::SeqCst);
        Ok(d)
    }
}

/// The rows of `tables` now, summed (`None` when a count failed).
pub fn count_rows(conn: &mut dyn Conn, tables: &[String]) -> Option<i64> {
    let mut n = 0;
    for t in tables {
        n += conn
            .query_i64(&format!("SELECT COUNT(*) FROM {t}"))
            .ok()??;
    }
    Some(n)
}
