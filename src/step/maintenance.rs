//! maint: what the insert benchmark does between the load and the query steps, timed (SQLite:
//! ANALYZE and a WAL checkpoint; each target says what it runs).

use anyhow::Result;

use super::StepCtx;
use crate::target::{Conn, MaintAction};

/// Run the target's maintenance on every table.
pub fn run(ctx: &StepCtx, conn: &mut dyn Conn) -> Result<Vec<MaintAction>> {
    let tables: Vec<String> = ctx.tables.iter().map(|t| t.name().to_string()).collect();
    ctx.target.maintenance(conn, &tables)
}
