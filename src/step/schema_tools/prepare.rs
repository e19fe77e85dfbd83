//! What a method needs on the server before it runs: the pg_repack extension (created on a
//! server ixbench started), a key pg_repack can replay the writes by, and the tool's objects
//! that existed before it started (never dropped by [`super::undo`]).

use anyhow::{bail, Context, Result};

use super::{MethodRunner, Methods};
use crate::dbms::ddl::tools::{self, Method, ToolObjects};
use crate::dbms::Conn;

/// Make sure the pg_repack extension is in the target's database, at the version of the
/// program: created on a server ixbench started (`ours`), a one-line error on another server.
/// Returns what was done, for the output.
pub fn prepare_pg_repack(
    conn: &mut dyn Conn,
    ours: bool,
    program: (u32, u32, u32),
) -> Result<String> {
    let (installed, available) = tools::pg_repack_extension(conn)?;
    let db = conn
        .query_rows("SELECT current_database()")?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next().flatten())
        .unwrap_or_default();
    let installed = match installed {
        Some(v) => v,
        None if ours && available => {
            conn.execute("CREATE EXTENSION pg_repack")
                .context("CREATE EXTENSION pg_repack")?;
            return Ok(format!(
                "created the pg_repack extension in database {db} (a server ixbench started)"
            ));
        }
        None if ours => bail!(
            "the pg_repack extension is not installed on this PostgreSQL server (its files are missing: install postgresql-NN-repack for this server's version)"
        ),
        None => bail!(
            "the pg_repack extension is not in database {db}: a superuser must run CREATE EXTENSION pg_repack there first (ixbench creates it only on a server it started)"
        ),
    };
    match tools::parse_version(&installed) {
        Some(v) if v == program => Ok(format!("pg_repack extension {installed} in database {db}")),
        _ => bail!(
            "pg_repack is {}.{}.{} but the extension in database {db} is {installed}: pg_repack refuses to run with another version (ALTER EXTENSION pg_repack UPDATE, or install the matching program)",
            program.0,
            program.1,
            program.2
        ),
    }
}

impl Methods {
    /// Check every method can make `ddl` on this target, and get what it needs on the server
    /// (the pg_repack extension: created on a server ixbench started, `ours`). Returns lines
    /// for the output.
    pub fn prepare(
        &self,
        conn: &mut dyn Conn,
        kind: &str,
        dialect: &str,
        ddl: crate::dbms::ddl::DdlKind,
        ours: bool,
    ) -> Result<Vec<String>> {
        for m in &self.list {
            m.check(kind, dialect, ddl)?;
        }
        let mut notes = Vec::new();
        if let Some((_, t)) = self
            .tools
            .iter()
            .find(|(m, _)| matches!(m, Method::PgRepack | Method::PgRepackIndexes))
        {
            notes.push(prepare_pg_repack(conn, ours, t.numbers)?);
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
    /// Before the program starts: refuse a table pg_repack cannot take, and look for the
    /// tool's objects already there (kept whatever happens).
    pub(super) fn before_run(&self, conn: &mut dyn Conn) -> Result<ToolObjects> {
        let db = self
            .target
            .client_params()
            .map(|p| p.database)
            .unwrap_or_default();
        if matches!(self.method, Method::PgRepack | Method::PgRepackIndexes)
            && !tools::pg_has_repack_key(conn, &self.req.table)?
        {
            bail!(
                "pg_repack refuses {}: it has no primary key and no unique index on NOT NULL columns (pg_repack needs one to replay the writes made during the copy)",
                self.req.table
            );
        }
        tools::tool_objects(self.method, conn, &db, &self.req.table)
            .context("looking for the tool's objects before it starts")
    }
}
