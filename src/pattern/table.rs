//! `ixbench pattern infer --table T --column C`: read one column of a table in insertion (or
//! PK) order, read-only, for the inference. SQLite files are opened read-only (no PRAGMA that
//! would change the file); PostgreSQL and MySQL/MariaDB sessions are set read-only before the
//! one SELECT.

use anyhow::{anyhow, bail, Result};

use crate::dbms::dialect::{check_user_name, DbmsSql};
use crate::dbms::{self, TargetSpec};

/// `--order-by`: columns, each as the catalog spells it, in double quotes when it has a comma
/// or spaces (`"Key Col"`), optionally followed by ASC or DESC, comma-separated; the ORDER BY
/// list with each column quoted the DBMS's way.
fn order_by_sql(d: &dyn DbmsSql, s: &str) -> Result<String> {
    let bad = || {
        anyhow!("--order-by {s:?}: expected columns, each optionally ASC or DESC, comma-separated")
    };
    let mut parts = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let (col, after) = match rest.strip_prefix('"') {
            Some(q) => q.split_once('"').ok_or_else(bad)?,
            None => rest.split_at(rest.find([',', ' ', '\t']).unwrap_or(rest.len())),
        };
        check_user_name("--order-by", col, false)?;
        let (dir, next) = after.split_once(',').unwrap_or((after, ""));
        let dir = match dir.trim() {
            "" => "",
            w if w.eq_ignore_ascii_case("asc") => " ASC",
            w if w.eq_ignore_ascii_case("desc") => " DESC",
            _ => return Err(bad()),
        };
        parts.push(format!("{}{dir}", d.quote_ident(col)));
        rest = next.trim();
        if rest.is_empty() && after.contains(',') {
            return Err(bad());
        }
    }
    if parts.is_empty() {
        return Err(bad());
    }
    Ok(parts.join(", "))
}

/// Call `each(row_number, value)` for every value of `column` in `table` of `target`, in
/// `order_by` order (default: see the `--order-by` help). A NULL key is an error. Read-only.
pub fn read_column(
    target: &str,
    table: &str,
    column: &str,
    order_by: Option<&str>,
    each: &mut dyn FnMut(u64, &str) -> Result<()>,
) -> Result<u64> {
    check_user_name("--table", table, true)?;
    check_user_name("--column", column, false)?;
    let spec = TargetSpec::parse(target)?;
    let order = order_by
        .map(|o| order_by_sql(crate::dbms::registry::dialect(&spec.kind), o))
        .transpose()?;
    if spec.needs_server() {
        bail!("--target {target}: pattern infer reads an existing server's table; give its URL ({}://USER@HOST:PORT/DB)", spec.kind);
    }
    let n = dbms::scan::scan_column(&spec, table, column, order, &mut |row, v| {
        let v =
            v.ok_or_else(|| anyhow!("row {row} of {table}: {column} is NULL (no key to order)"))?;
        each(row, v)
    })?;
    if n == 0 {
        bail!("table {table} has no rows: no keys to infer a pattern from");
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_by_columns_are_quoted_the_dbms_way() {
        let pg = crate::dbms::registry::dialect("postgres");
        let my = crate::dbms::registry::dialect("mysql");
        assert_eq!(
            order_by_sql(pg, r#""Key Col" DESC, id,select asc"#).unwrap(),
            r#""Key Col" DESC, "id", "select" ASC"#
        );
        assert_eq!(order_by_sql(my, r#""a,b", c"#).unwrap(), "`a,b`, `c`");
        for bad in ["", "a,", "a sideways", r#""open"#, "a'b", "a,,b"] {
            assert!(order_by_sql(pg, bad).is_err(), "{bad}");
        }
    }
}
