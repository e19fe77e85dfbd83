//! Reading one column of a user's table, read-only (`ixbench pattern infer --table`): an SQLite
//! file is opened read-only (no PRAGMA that would change the file); a PostgreSQL or
//! MySQL/MariaDB session is set read-only ([`dialect::DbmsSql::read_only_session_sql`]) before the one
//! SELECT. Rows come in the order asked for, or in the order they were stored
//! ([`dialect::DbmsSql::storage_order`]).

use anyhow::{bail, Result};

use super::dialect;
use super::{TargetOptions, TargetSpec};

/// Call `each(row_number, value)` for every value of `column` of `table` (both as the catalog
/// spells them, checked by [`dialect::check_user_name`]; quoted here) in the database `spec` names, ordered by `order` (an
/// ORDER BY list, its columns quoted) or else in the order the rows were stored. Returns the
/// rows read.
pub fn scan_column(
    spec: &TargetSpec,
    table: &str,
    column: &str,
    order: Option<String>,
    each: &mut dyn FnMut(u64, Option<&str>) -> Result<()>,
) -> Result<u64> {
    let d = crate::dbms::registry::dialect(&spec.kind);
    let order_or_stored = |query: &mut dialect::Query| -> Result<String> {
        match &order {
            Some(o) => Ok(o.clone()),
            None => match d.storage_order(query, table)? {
                Some(o) => Ok(o),
                None => {
                    bail!("table {table} has no PRIMARY KEY to read in order: give --order-by")
                }
            },
        }
    };
    let select = format!(
        "{} FROM {}",
        d.text_cast(&d.quote_ident(column)),
        d.quote_table(table)
    );
    let Some(scan) = super::registry::find(&spec.kind).and_then(|k| k.scan) else {
        bail!(
            "--target {}: pattern infer --table reads SQLite, PostgreSQL or MySQL/MariaDB tables",
            spec.kind
        );
    };
    let mut n = 0u64;
    let mut order = order_or_stored;
    scan(spec, &select, &mut order, &mut |v| {
        n += 1;
        each(n, v)
    })?;
    Ok(n)
}

/// How a server's row reads a user's table (see [`super::registry::ScanFn`]): one connection
/// as the target's, set read-only ([`dialect::DbmsSql::read_only_session_sql`]) before the one
/// SELECT.
pub(crate) fn scan_server(
    spec: &TargetSpec,
    select: &str,
    order: &mut dyn FnMut(&mut dialect::Query) -> Result<String>,
    each: &mut dyn FnMut(Option<&str>) -> Result<()>,
) -> Result<()> {
    let d = crate::dbms::registry::dialect(&spec.kind);
    let db = super::open(
        spec,
        &TargetOptions {
            engine: None,
            sqlite_pragmas: Vec::new(),
            default_sqlite_path: None,
            connect_timeout: None,
            server_changes: false,
        },
    )?;
    let mut conn = db.connect()?;
    if let Some(read_only) = d.read_only_session_sql() {
        conn.execute(read_only)?;
    }
    let order = order(&mut |sql| conn.query_rows(sql))?;
    let rows = conn.query_rows(&format!("SELECT {select} ORDER BY {order}"))?;
    for r in rows {
        let v = r.into_iter().next().flatten();
        each(v.as_deref())?;
    }
    Ok(())
}
