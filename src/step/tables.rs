//! Which tables ixbench owns. ixbench records every table it creates in `ixbench_tables`; it
//! drops or changes only tables listed there, and refuses to touch any other.

use anyhow::{bail, Result};

use crate::target::Conn;

/// The table where ixbench records the tables it created.
pub const OWNED: &str = "ixbench_tables";

/// Check a table name is a plain identifier (it is spliced into SQL).
pub fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 60
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        bail!("invalid table name {name:?}: use letters, digits and _ (at most 60)");
    }
    Ok(())
}

/// Whether `table` is recorded as created by ixbench.
pub fn is_owned(conn: &mut dyn Conn, table: &str) -> Result<bool> {
    if !conn.table_exists(OWNED)? {
        return Ok(false);
    }
    let n = conn.query_i64(&format!(
        "SELECT count(*) FROM {OWNED} WHERE name = '{table}'"
    ))?;
    Ok(n.unwrap_or(0) > 0)
}

/// Make `table` ready to be created: if it exists it must be ixbench's, and is dropped.
/// Returns true if an old ixbench table was dropped.
pub fn prepare_new(conn: &mut dyn Conn, table: &str) -> Result<bool> {
    if !conn.table_exists(table)? {
        return Ok(false);
    }
    if !is_owned(conn, table)? {
        bail!(
            "table {table} already exists and was not created by ixbench; ixbench never drops it: \
             use another database or --table-prefix"
        );
    }
    conn.execute(&format!("DROP TABLE {table}"))?;
    conn.execute(&format!("DELETE FROM {OWNED} WHERE name = '{table}'"))?;
    Ok(true)
}

/// Record that ixbench created `table`.
pub fn record_created(conn: &mut dyn Conn, table: &str, at: &str) -> Result<()> {
    if !conn.table_exists(OWNED)? {
        conn.execute(&format!(
            "CREATE TABLE {OWNED} (name VARCHAR(64) NOT NULL PRIMARY KEY, \
             created_at VARCHAR(40) NOT NULL, ixbench_version VARCHAR(40) NOT NULL)"
        ))?;
    }
    conn.execute(&format!(
        "INSERT INTO {OWNED} (name, created_at, ixbench_version) VALUES ('{table}', '{at}', '{}')",
        env!("CARGO_PKG_VERSION")
    ))
}

/// A table a step without l.i0 will use must exist and be ixbench's.
pub fn require_owned(conn: &mut dyn Conn, table: &str) -> Result<()> {
    if !conn.table_exists(table)? {
        bail!("table {table} does not exist: run l.i0 first (e.g. --steps l.i0,...)");
    }
    if !is_owned(conn, table)? {
        bail!("table {table} was not created by ixbench; ixbench does not write to it");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(validate_name("pi1").is_ok());
        assert!(validate_name("_x9").is_ok());
        for bad in ["", "1a", "a-b", "a;drop", "a b", &"x".repeat(61)] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
    }
}
