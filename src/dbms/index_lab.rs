//! The index-lab side of a DBMS: how it builds and drops secondary indexes (online or not,
//! several at once), its knobs and their scopes, build progress and warnings, index validity
//! and table rebuilds. Used by `ixbench index`, `ixbench ddl` and the create-index step. Part
//! of [`super::Dbms`], and optional: every method has a default (unknown, or "not supported by
//! this DBMS" with its name), so a new DBMS writes `impl IndexLab for X {}` and overrides what
//! it can do. The statements themselves come from [`super::ddl::DdlDialect`], the one writer
//! of index DDL.

use anyhow::{bail, Result};

use super::forward::forwarded_trait;
use super::{Conn, Driver, IndexSpec, KnobScope};

forwarded_trait! {
/// Index builds, knobs and progress of a DBMS (see [`super::Dbms`]): an optional capability,
/// every method has a default. A DBMS that answers as another one
/// ([`super::forward::AnswersAs`]: a cluster, as its entry node) gets every method forwarded.
pub trait IndexLab: Driver {
    /// Whether a plan (the text of [`Conn::explain`]) reads `index` as a covering index (an
    /// index-only scan of it); `None` (the default) when ixbench cannot read this DBMS's plans,
    /// and the plan check says it was not checked.
    fn plan_uses_index(&self, _plan: &str, _index: &str) -> Option<bool> {
        None
    }

    /// How to build secondary indexes `idxs` (all of one table): the outer list is sessions
    /// run in parallel, the inner list statements run in order in one session. The default
    /// is the SQL-standard dialect's ([`super::ddl::DdlDialect::add_indexes_sql`]'s default):
    /// plain `CREATE INDEX` one after the other, and no online build; targets override it for
    /// online builds and for several indexes in one statement (`ALTER TABLE ... ADD INDEX a,
    /// ADD INDEX b`) or parallel sessions (PostgreSQL), with their own dialect's statements.
    fn index_build_plan(&self, idxs: &[IndexSpec], online: bool) -> Result<Vec<Vec<String>>> {
        if online {
            bail!(
                "online (non-blocking) index builds are not supported by this DBMS ({})",
                self.kind()
            );
        }
        Ok(vec![idxs.iter().map(IndexSpec::create_sql).collect()])
    }

    /// The statement that drops secondary index `idx` with nothing else running. The default
    /// is the SQL-standard `DROP INDEX name` ([`super::ddl::drop_index`]).
    fn drop_index_sql(&self, idx: &IndexSpec) -> String {
        super::ddl::drop_index(&idx.name)
    }

    /// How a knob (setting) can be changed, or an error naming the knob if the DBMS does not
    /// know it.
    fn knob_scope(&self, _conn: &mut dyn Conn, name: &str) -> Result<KnobScope> {
        bail!(
            "knobs are not supported by this DBMS ({}): ixbench cannot set {name}",
            self.kind()
        )
    }

    /// Set a session-scope knob on `conn` (each build session gets it) and return the value
    /// the DBMS now reports; an error names the knob and value it refused.
    fn set_session_knob(&self, _conn: &mut dyn Conn, name: &str, _value: &str) -> Result<String> {
        bail!(
            "knobs are not supported by this DBMS ({}): ixbench cannot set {name}",
            self.kind()
        )
    }

    /// The value of a knob as the DBMS reports it now (`SHOW`, `PRAGMA`).
    fn knob_value(&self, _conn: &mut dyn Conn, name: &str) -> Result<String> {
        bail!(
            "knobs are not supported by this DBMS ({}): ixbench cannot read {name}",
            self.kind()
        )
    }

    /// One sample of the progress of index builds running now, from the DBMS's progress view
    /// (`pg_stat_progress_create_index`, `Innodb_onlineddl_pct_progress`); `None` when the DBMS
    /// has none.
    fn build_progress(&self, _conn: &mut dyn Conn) -> Result<Option<String>> {
        Ok(None)
    }

    /// Warnings about a build that just ran, from what the DBMS reported about it: e.g. that
    /// it ran fewer parallel workers than the knobs allow. `session_knobs` are the knobs the
    /// build's sessions had, `progress` its progress samples. None by default.
    fn build_warnings(
        &self,
        _conn: &mut dyn Conn,
        _session_knobs: &[(String, String)],
        _progress: &[(f64, String)],
    ) -> Vec<String> {
        Vec::new()
    }

    /// Whether a built index is valid (PostgreSQL `indisvalid`); by default, that it exists.
    fn index_valid(&self, conn: &mut dyn Conn, table: &str, index: &str) -> Result<bool> {
        conn.index_exists(table, index)
    }

    /// Whole-table rebuilds of `table` worth timing: (name, statement).
    fn rebuild_statements(&self, _table: &str) -> Vec<(String, String)> {
        Vec::new()
    }
}
}
