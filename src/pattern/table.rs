//! `ixbench pattern infer --table T --column C`: read one column of a table in insertion (or
//! PK) order, read-only, for the inference. SQLite files are opened read-only (no PRAGMA that
//! would change the file); PostgreSQL and MySQL/MariaDB sessions are set read-only before the
//! one SELECT.

use anyhow::{anyhow, bail, Result};

use crate::dbms::{self, TargetSpec};

/// A plain identifier, optionally schema-qualified (`s.t`): letters, digits, `_`, `$`.
fn check_ident(what: &str, s: &str) -> Result<()> {
    let ok = !s.is_empty()
        && s.split('.').count() <= 2
        && s.split('.').all(|p| {
            !p.is_empty()
                && !p.starts_with(|c: char| c.is_ascii_digit())
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        });
    if !ok {
        bail!("{what} {s:?}: expected a plain name (letters, digits, _; optionally schema.name)");
    }
    Ok(())
}

/// `--order-by`: names, each optionally followed by ASC or DESC, comma-separated.
fn check_order_by(s: &str) -> Result<String> {
    let mut parts = Vec::new();
    for item in s.split(',') {
        let words: Vec<&str> = item.split_whitespace().collect();
        match words.as_slice() {
            [c] => {
                check_ident("--order-by", c)?;
                parts.push(c.to_string());
            }
            [c, d] if d.eq_ignore_ascii_case("asc") || d.eq_ignore_ascii_case("desc") => {
                check_ident("--order-by", c)?;
                parts.push(format!("{c} {}", d.to_ascii_uppercase()));
            }
            _ => bail!(
                "--order-by {s:?}: expected columns, each optionally ASC or DESC, comma-separated"
            ),
        }
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
    check_ident("--table", table)?;
    check_ident("--column", column)?;
    let order = order_by.map(check_order_by).transpose()?;
    let spec = TargetSpec::parse(target)?;
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
