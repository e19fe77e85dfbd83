//! maint: what the insert benchmark does between the load and the query steps, timed (SQLite:
//! ANALYZE and a WAL checkpoint; each target says what it runs).

use anyhow::Result;

use super::StepCtx;
use crate::dbms::{Conn, MaintAction};

/// Warnings for the actions that were skipped (server-wide changes on a server ixbench did not
/// start), so the step says what it did not do.
pub fn skipped(actions: &[MaintAction]) -> Vec<String> {
    actions
        .iter()
        .filter(|a| a.detail.starts_with("SKIPPED"))
        .map(|a| format!("maint: {} {}", a.action, a.detail))
        .collect()
}

/// Run the target's maintenance on every table.
pub fn run(ctx: &StepCtx, conn: &mut dyn Conn) -> Result<Vec<MaintAction>> {
    let tables: Vec<String> = ctx.tables.iter().map(|t| t.name().to_string()).collect();
    let _wait = crate::progress::waiting("maintenance (statistics, checkpoint)");
    ctx.target
        .maintenance(conn, &tables, &crate::measure::clock::Figures)
}
