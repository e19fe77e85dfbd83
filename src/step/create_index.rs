//! l.x: create the secondary indexes on the loaded tables, timed one by one; the figure is
//! indexed rows per second (rows in the table / seconds), as in the insert benchmark.

use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::StepCtx;
use crate::results::IndexBuild;
use crate::target::Conn;
use crate::workload::iibench::INDEXES;

/// Build the first `ctx.cfg.secondary_indexes` indexes on every table; `on_build` is called
/// after each one (to print it).
pub fn run(
    ctx: &StepCtx,
    conn: &mut dyn Conn,
    on_build: &mut dyn FnMut(&IndexBuild),
) -> Result<Vec<IndexBuild>> {
    let mut builds = Vec::new();
    for t in ctx.tables {
        for (i, idx) in INDEXES.iter().enumerate().take(ctx.cfg.secondary_indexes) {
            let name = idx.name(t.name());
            if ctx.target.stores_rows() && conn.index_exists(t.name(), &name)? {
                bail!(
                    "index {name} already exists on {}: l.x builds it, so start from l.i0",
                    t.name()
                );
            }
            if ctx.interrupt.load(Ordering::Relaxed) {
                bail!("interrupted");
            }
            let rows = t.expected_rows.load(Ordering::SeqCst).max(0) as u64;
            let start = Instant::now();
            conn.execute(&t.sql.create_index(i))
                .with_context(|| format!("CREATE INDEX {name} failed"))?;
            let seconds = start.elapsed().as_secs_f64();
            let b = IndexBuild {
                table: t.name().to_string(),
                index: name,
                seconds,
                rows,
                rows_per_sec: if seconds > 0.0 {
                    rows as f64 / seconds
                } else {
                    0.0
                },
            };
            on_build(&b);
            builds.push(b);
        }
    }
    Ok(builds)
}
