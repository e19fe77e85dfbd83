//! What a method needs on the server before it runs, as the target's engine says
//! ([`crate::dbms::ddl::tools::EngineTools`]: the pg_repack extension, created on a server
//! ixbench started; a key pg_repack can replay the writes by), and the tool's objects that
//! existed before it started (never dropped by [`super::undo`]).

use anyhow::{Context, Result};

use super::{MethodRunner, Methods};
use crate::dbms::ddl::tools::ToolObjects;
use crate::dbms::registry;
use crate::dbms::Conn;

impl Methods {
    /// Check every method can make `ddl` on this target (of kind `kind`, DDL dialect named
    /// `dialect`), and get what it needs on the server (the pg_repack extension: created on a
    /// server ixbench started, `ours`). Returns lines for the output.
    pub fn prepare(
        &self,
        conn: &mut dyn Conn,
        kind: &str,
        dialect: &str,
        ddl: crate::dbms::ddl::DdlKind,
        ours: bool,
    ) -> Result<Vec<String>> {
        let tools = registry::tools(kind);
        for m in &self.list {
            m.check(tools, dialect, ddl)?;
        }
        let mut notes = Vec::new();
        // Once per program (pg-repack and pg-repack-indexes run the same one).
        let mut prepared = Vec::new();
        for (m, t) in &self.tools {
            let Some(e) = tools else { break };
            if prepared.contains(&&t.path) {
                continue;
            }
            prepared.push(&t.path);
            notes.extend(e.prepare(*m, conn, ours, t.numbers)?);
        }
        for (m, t) in &self.tools {
            notes.push(format!(
                "{}: {} ({})",
                m.name(),
                t.version,
                t.path.display()
            ));
        }
        Ok(notes)
    }
}

impl MethodRunner<'_> {
    /// Before the program starts: refuse a table the tool cannot take (pg_repack's without a
    /// key), and look for the tool's objects already there (kept whatever happens).
    pub(super) fn before_run(&self, conn: &mut dyn Conn) -> Result<ToolObjects> {
        let db = self
            .target
            .client_params()
            .map(|p| p.database)
            .unwrap_or_default();
        let Some(tools) = self.tools else {
            return Ok(ToolObjects::default());
        };
        tools.before_run(self.method, conn, &self.req.table)?;
        tools
            .objects(self.method, conn, &db, &self.req.table)
            .context("looking for the tool's objects before it starts")
    }
}
