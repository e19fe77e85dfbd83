//! Which tables ixbench owns. ixbench records every table it creates in `ixbench_tables`; it
//! drops or changes only tables listed there, and refuses to touch any other.

use std::sync::atomic::AtomicBool;

use anyhow::{bail, Result};

use crate::dbms::dialect::TableIdentity;
use crate::dbms::{Conn, Dbms, IndexSpec};

/// The table where ixbench records the tables it created.
pub const OWNED: &str = "ixbench_tables";

/// Longest table name ixbench records (the `name` column of [`OWNED`] is VARCHAR(64)).
pub const MAX_TABLE_NAME: usize = 64;

/// Check a table name is a plain identifier (it is spliced into SQL) that fits the record of
/// owned tables.
pub fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        bail!("invalid table name {name:?}: use letters, digits and _");
    }
    if name.len() > MAX_TABLE_NAME {
        bail!(
            "table name {name} is {} bytes: ixbench allows at most {MAX_TABLE_NAME}",
            name.len()
        );
    }
    Ok(())
}

/// A table of ixbench's whose rows a step checks, as a cluster target reads it (every node's
/// or shard's count against what the workload counted): any workload's table state
/// implements it (the insert benchmark's `TableState`), so the cluster targets name none.
pub trait CheckedTable: Sync {
    /// The table's name.
    fn name(&self) -> &str;

    /// The rows it must hold: inserted − deleted, as the workload counted them.
    fn expected_rows(&self) -> i64;

    /// The workers' connections to it that were lost and made again on a surviving node
    /// (never reset: a step takes the difference).
    fn reconnects(&self) -> u64;

    /// Count its rows on `conn` (a node's or a shard's own connection).
    fn count_rows(&self, conn: &mut dyn Conn) -> Result<u64>;
}

/// A table checked through a reference (the steps hand the cluster's watch `&dyn CheckedTable`).
impl<T: CheckedTable + ?Sized> CheckedTable for &T {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn expected_rows(&self) -> i64 {
        (**self).expected_rows()
    }

    fn reconnects(&self) -> u64 {
        (**self).reconnects()
    }

    fn count_rows(&self, conn: &mut dyn Conn) -> Result<u64> {
        (**self).count_rows(conn)
    }
}

/// The longest identifier the DBMS of a target kind accepts, in bytes, and the DBMS's name
/// (see [`dialect::DbmsSql::identifier_limit`]); `None` when there is no practical limit.
pub fn identifier_limit(kind: &str) -> Option<(usize, &'static str)> {
    crate::dbms::registry::dialect(kind).identifier_limit()
}

/// Check, before anything runs, that the tables and the index names derived from them
/// (`<table>_registersegment` is the longest) are valid identifiers within the limit of the
/// target's DBMS: a name PostgreSQL truncates or MySQL refuses would otherwise fail the run
/// at l.x, after the load.
///
/// `index_suffixes` are the endings (`_registersegment`, ...) the index names add to a table's
/// name, in the order they are checked (the caller takes them from the workloads' registry).
pub fn validate_names(kind: &str, tables: &[String], index_suffixes: &[String]) -> Result<()> {
    for t in tables {
        validate_name(t)?;
        let Some((limit, dbms)) = identifier_limit(kind) else {
            continue;
        };
        let longest_suffix = index_suffixes.iter().map(|s| s.len()).max().unwrap_or(0);
        for name in std::iter::once(t.clone()).chain(index_suffixes.iter().map(|s| format!("{t}{s}"))) {
            if name.len() > limit {
                bail!(
                    "--table-prefix too long: {dbms} identifiers are at most {limit} bytes and \
                     {name} is {}; tables (and their index names, up to {longest_suffix} bytes \
                     longer) need a table name of at most {} bytes",
                    name.len(),
                    limit - longest_suffix
                );
            }
        }
    }
    Ok(())
}

/// The endings the index names of `indexes` (name, columns) add to `table`'s name, in their
/// order: a registry entry's indexes ([`crate::workload::registry::Entry::indexes`]) on its
/// table give the suffixes [`validate_names`] checks (`_marketsegment`, ...). Names that do not
/// start with the table's name add nothing.
pub fn index_suffixes(indexes: &[(String, Vec<String>)], table: &str) -> Vec<String> {
    indexes
        .iter()
        .filter_map(|(name, _)| name.strip_prefix(table))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// How ixbench knows a table is the very one it created, not merely one with the same name:
/// an identity read back from the DBMS right after CREATE TABLE and recorded in [`OWNED`], and
/// compared again before the table is dropped, altered or written to. PostgreSQL: the table's
/// OID (a table dropped and re-created gets a new one). MySQL/MariaDB: a `COMMENT` with a
/// random token, part of the table's own definition. SQLite: the same token in a comment
/// inside the CREATE TABLE statement, which SQLite keeps verbatim in `sqlite_master`.
pub fn identity(conn: &mut dyn Conn, kind: &str, table: &str) -> Result<Option<String>> {
    let d = crate::dbms::registry::dialect(kind);
    let Some(sql) = d.identity_sql(table) else {
        return Ok(None);
    };
    let text = conn
        .query_rows(&sql)?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next().flatten());
    Ok(match d.table_identity() {
        TableIdentity::CatalogId => text,
        TableIdentity::Marker | TableIdentity::None => text.and_then(|t| marker_in(&t)),
    })
}

const MARKER: &str = "ixbench:";

/// The `ixbench:<token>` marker in a table's definition or comment.
fn marker_in(text: &str) -> Option<String> {
    let at = text.find(MARKER)?;
    let token: String = text[at + MARKER.len()..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    (!token.is_empty()).then(|| format!("{MARKER}{token}"))
}

/// A new random token (std's per-process random hash keys over the time and the process id).
fn new_token() -> String {
    use std::hash::BuildHasher;
    let nanos = crate::measure::clock::wall_now().as_nanos();
    let a = std::collections::hash_map::RandomState::new().hash_one((nanos, std::process::id()));
    let b = std::collections::hash_map::RandomState::new().hash_one(a);
    format!("{a:016x}{b:016x}")
}

/// `CREATE TABLE` with ixbench's identity marker in the table's own definition (SQLite: a
/// comment after the name; MySQL: a table COMMENT; PostgreSQL: unchanged, the OID is the
/// identity; see [`dialect::DbmsSql::mark_create_sql`]).
pub fn marked_create_sql(create: &str, kind: &str, table: &str) -> String {
    let token = format!("{MARKER}{}", new_token());
    crate::dbms::registry::dialect(kind).mark_create_sql(create, table, &token)
}

/// What [`OWNED`] says about `table`: its recorded identity (`Some(None)`: recorded by an
/// ixbench that kept no identity), or `None` when it is not recorded.
fn recorded(conn: &mut dyn Conn, table: &str) -> Result<Option<Option<String>>> {
    if !conn.table_exists(OWNED)? {
        return Ok(None);
    }
    ensure_identity_column(conn)?;
    let rows = conn.query_rows(&format!(
        "SELECT identity FROM {OWNED} WHERE name = '{table}'"
    ))?;
    Ok(rows
        .into_iter()
        .next()
        .map(|r| r.into_iter().next().flatten()))
}

/// Add the `identity` column to an [`OWNED`] table an older ixbench created without it. When
/// the column cannot be read and cannot be added either, the error is the read's (e.g. no
/// privilege on the table), which says what is wrong.
fn ensure_identity_column(conn: &mut dyn Conn) -> Result<()> {
    if let Err(read) = conn.query_rows(&format!("SELECT identity FROM {OWNED} WHERE 1 = 0")) {
        if conn
            .execute(&format!(
                "ALTER TABLE {OWNED} ADD COLUMN identity VARCHAR(100)"
            ))
            .is_err()
        {
            return Err(read.context(format!("cannot read {OWNED}")));
        }
    }
    Ok(())
}

/// Whether a table of ixbench's name is the one it created.
#[derive(Debug, PartialEq, Eq)]
pub enum Ownership {
    /// Recorded with the identity it has now.
    Owned,
    /// Not recorded: someone else's.
    NotRecorded,
    /// Recorded by an older ixbench that kept no identity: cannot be proven.
    NoIdentity,
    /// Recorded, but the table now has another identity: dropped and re-created since.
    OtherIdentity {
        /// Its identity now.
        now: Option<String>,
        /// The identity ixbench recorded.
        recorded: String,
    },
}

impl Ownership {
    /// Why the table is not ixbench's, in words for the user (`None` when it is).
    pub fn refusal(&self, table: &str) -> Option<String> {
        match self {
            Ownership::Owned => None,
            Ownership::NotRecorded => Some(format!(
                "table {table} exists and was not created by ixbench"
            )),
            Ownership::NoIdentity => Some(format!(
                "table {table} is recorded in {OWNED} without an identity (an older ixbench), so \
                 ixbench cannot tell it is the table it created: as far as ixbench can prove, it \
                 was not created by ixbench"
            )),
            Ownership::OtherIdentity { now, recorded } => Some(format!(
                "table {table} was not created by ixbench: a table of that name was, but this \
                 one has another identity ({} now, {recorded} recorded), so it was dropped and \
                 re-created since",
                now.as_deref().unwrap_or("none")
            )),
        }
    }
}

/// Whether `table` is the table ixbench created under that name: recorded in [`OWNED`] with
/// the identity it has now. `Err` only when the DBMS could not be asked.
pub fn ownership(conn: &mut dyn Conn, kind: &str, table: &str) -> Result<Ownership> {
    let now = identity(conn, kind, table)?;
    Ok(match recorded(conn, table)? {
        None => Ownership::NotRecorded,
        Some(None) => Ownership::NoIdentity,
        Some(Some(rec)) if now.as_deref() != Some(rec.as_str()) => {
            Ownership::OtherIdentity { now, recorded: rec }
        }
        Some(Some(_)) => Ownership::Owned,
    })
}

/// Whether `table` is the table ixbench created (see [`ownership`]).
pub fn is_owned(conn: &mut dyn Conn, kind: &str, table: &str) -> Result<bool> {
    Ok(ownership(conn, kind, table)? == Ownership::Owned)
}

/// Seconds ixbench waits for another session's lock on a table of its own it drops.
pub const DROP_LOCK_WAIT_SECS: u32 = 10;

/// Make `table` ready to be created: if it exists it must be ixbench's (same identity), and is
/// dropped; a stale record of a table that no longer exists is removed. Returns true if an old
/// ixbench table was dropped.
pub fn prepare_new(conn: &mut dyn Conn, kind: &str, table: &str) -> Result<bool> {
    if !conn.table_exists(table)? {
        if recorded(conn, table)?.is_some() {
            conn.execute(&format!("DELETE FROM {OWNED} WHERE name = '{table}'"))?;
        }
        return Ok(false);
    }
    if let Some(why) = ownership(conn, kind, table)?.refusal(table) {
        bail!("{why}; ixbench never drops it: use another database or --table-prefix");
    }
    // Bounded: another session that holds the table (an open transaction on it) would make
    // the drop wait forever, with nothing on the screen but the load's first line.
    let bound = crate::dbms::registry::dialect(kind).lock_wait_sql(DROP_LOCK_WAIT_SECS);
    if let Some((set, _)) = &bound {
        conn.execute(set)?;
    }
    let dropped = conn.execute(&format!("DROP TABLE {table}"));
    if let Some((_, reset)) = &bound {
        let _ = conn.execute(reset);
    }
    dropped.map_err(|e| {
        let why = format!("{e:#}");
        if why.to_ascii_lowercase().contains("lock") {
            anyhow::anyhow!(
                "cannot drop the old {table} to load it again: another session holds a lock on \
                 it (waited {DROP_LOCK_WAIT_SECS} s): {why}; end that session's transaction, or \
                 use another --table-prefix"
            )
        } else {
            e
        }
    })?;
    conn.execute(&format!("DELETE FROM {OWNED} WHERE name = '{table}'"))?;
    Ok(true)
}

/// Create `table` with `create` (its CREATE TABLE statement), marked with a new identity, and
/// record it with that identity as ixbench's.
pub fn create_owned(
    conn: &mut dyn Conn,
    kind: &str,
    table: &str,
    create: &str,
    at: &str,
) -> Result<()> {
    conn.execute(&marked_create_sql(create, kind, table))?;
    let Some(id) = identity(conn, kind, table)? else {
        bail!("cannot read the identity of the new table {table}");
    };
    if !conn.table_exists(OWNED)? {
        // Several ixbench processes (--client-count) may create it at once: IF NOT EXISTS,
        // and a failure that left the table there (PostgreSQL's catalog race between two
        // IF NOT EXISTS) is another process's success.
        if let Err(e) = conn.execute(&format!(
            "CREATE TABLE IF NOT EXISTS {OWNED} (name VARCHAR(64) NOT NULL PRIMARY KEY, \
             created_at VARCHAR(40) NOT NULL, ixbench_version VARCHAR(40) NOT NULL, \
             identity VARCHAR(100))"
        )) {
            if !conn.table_exists(OWNED)? {
                return Err(e);
            }
        }
    }
    ensure_identity_column(conn)?;
    conn.execute(&format!(
        "INSERT INTO {OWNED} (name, created_at, ixbench_version, identity) \
         VALUES ('{table}', '{at}', '{}', '{id}')",
        env!("CARGO_PKG_VERSION")
    ))
}

/// A table a step without l.i0 will use (write to, index, alter) must exist and be the one
/// ixbench created.
pub fn require_owned(conn: &mut dyn Conn, kind: &str, table: &str) -> Result<()> {
    if !conn.table_exists(table)? {
        bail!(
            "table {table} does not exist: load it first (without --reuse; for `ixbench run`, \
             steps that start with l.i0)"
        );
    }
    if let Some(why) = ownership(conn, kind, table)?.refusal(table) {
        bail!("{why}; ixbench does not write to it");
    }
    Ok(())
}

/// Rows in `table`.
pub fn count_rows(conn: &mut dyn Conn, table: &str) -> Result<u64> {
    Ok(conn
        .query_i64(&format!("SELECT COUNT(*) FROM {table}"))?
        .unwrap_or(0)
        .max(0) as u64)
}

/// One table an index build step builds on: its name, the rows it holds (the build's rate is
/// rows / seconds) and the indexes to build on it.
#[derive(Debug, Clone)]
pub struct IndexedTable {
    /// The table.
    pub name: String,
    /// Rows it holds.
    pub rows: u64,
    /// The indexes to build, in order.
    pub indexes: Vec<IndexSpec>,
}

/// What an index build step (`step::create_index::run`) builds: its target, its interrupt
/// and the tables with their indexes, as the workload hands them.
pub trait IndexedTables {
    /// The target.
    fn target(&self) -> &dyn Dbms;
    /// Ctrl-C.
    fn interrupt(&self) -> &AtomicBool;
    /// The tables and their indexes.
    fn indexed_tables(&self) -> Vec<IndexedTable>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers() {
        let c = "CREATE TABLE pi1 (a INT)";
        let m = marked_create_sql(c, "sqlite", "pi1");
        assert!(m.starts_with("CREATE TABLE pi1 /* ixbench:"), "{m}");
        let id = marker_in(&m).unwrap();
        assert_eq!(id.len(), MARKER.len() + 32);
        assert_ne!(marker_in(&marked_create_sql(c, "sqlite", "pi1")), Some(id));
        let m = marked_create_sql("CREATE TABLE t (a INT) ENGINE=InnoDB", "mysql", "t");
        assert!(m.contains("ENGINE=InnoDB COMMENT='ixbench:"), "{m}");
        assert_eq!(marked_create_sql(c, "postgres", "pi1"), c);
        assert_eq!(marker_in("no marker"), None);
    }

    #[test]
    fn identifier_limits() {
        // the default workload's (the insert benchmark's) index names: registersegment is the
        // longest suffix: 47 + 16 = 63 bytes fit PostgreSQL, 48 not
        let e = crate::workload::registry::find(crate::workload::registry::DEFAULT).unwrap();
        let sx = index_suffixes(&(e.indexes)(), e.ddl_target.table);
        assert_eq!(sx.len(), 3, "{sx:?}");
        let validate_names = |kind: &str, t: &[String]| validate_names(kind, t, &sx);
        let t47 = vec![format!("{}1", "p".repeat(46))];
        let t48 = vec![format!("{}1", "p".repeat(47))];
        let t49 = vec![format!("{}1", "p".repeat(48))];
        assert!(validate_names("postgres", &t47).is_ok());
        let e = validate_names("postgres", &t48).unwrap_err().to_string();
        assert!(e.contains("63") && e.contains("registersegment"), "{e}");
        assert!(validate_names("mysql", &t48).is_ok());
        assert!(validate_names("mysql", &t49).is_err());
        assert!(validate_names("sqlite", &t49).is_ok());
    }

    #[test]
    fn names() {
        assert!(validate_name("pi1").is_ok());
        assert!(validate_name("_x9").is_ok());
        assert!(validate_name(&"x".repeat(64)).is_ok());
        for bad in ["", "1a", "a-b", "a;drop", "a b", &"x".repeat(65)] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
    }
}
