//! The simplest possible l.i0 loop on SQLite, for `bench/sqlite-li0.sh`: the same rows (same
//! generator and seed), the same PRAGMAs, one prepared multi-row INSERT per commit, nothing
//! measured per operation. ixbench's l.i0 must reach at least 90% of its rows/s.
//!
//! Usage: sqlite_baseline DB_PATH ROWS ROWS_PER_COMMIT

use std::time::Instant;

use ixbench::dbms::prelude::*;
use ixbench::dbms::sqlite::DEFAULT_PRAGMAS;
use ixbench::workload::iibench::{derive_seed, Batch, RowGen, TableSql};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    anyhow::ensure!(
        args.len() == 4,
        "usage: sqlite_baseline DB_PATH ROWS ROWS_PER_COMMIT"
    );
    let (path, rows, per): (&str, u64, usize) = (&args[1], args[2].parse()?, args[3].parse()?);
    let dialect = ixbench::dbms::sqlite::Sqlite::open(path.into(), &[])?
        .dialect()
        .clone();
    let conn = rusqlite::Connection::open(path)?;
    for (k, v) in DEFAULT_PRAGMAS {
        conn.query_row(&format!("PRAGMA {k} = {v}"), [], |_| Ok(()))
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(()),
                e => Err(e),
            })?;
    }
    let t = TableSql::new("pi1", &dialect);
    conn.execute_batch(&t.create_table())?;
    // The same seed ixbench's first client uses in step 0 (l.i0).
    let mut gen = RowGen::new(derive_seed(1, &[0, 0, 1]), 10, 20);
    let mut b = Batch::default();
    let mut st = conn.prepare(&t.insert(per))?;
    let start = Instant::now();
    let ts = chrono::Utc::now().timestamp();
    let mut done = 0;
    while done < rows {
        gen.fill(&mut b, per, ts);
        let mut p = 1;
        for r in 0..per {
            st.raw_bind_parameter(p, b.ts_text.as_str())?;
            st.raw_bind_parameter(p + 1, b.cashregisterid[r])?;
            st.raw_bind_parameter(p + 2, b.customerid[r])?;
            st.raw_bind_parameter(p + 3, b.productid[r])?;
            st.raw_bind_parameter(p + 4, b.price[r])?;
            st.raw_bind_parameter(p + 5, b.data(r))?;
            p += 6;
        }
        st.raw_execute()?;
        done += per as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{:.0}", done as f64 / secs);
    Ok(())
}
