//! `ixbench pattern infer --table T --column C`: read one column of a table in insertion (or
//! PK) order, read-only, for the inference. SQLite files are opened read-only (no PRAGMA that
//! would change the file); PostgreSQL and MySQL/MariaDB sessions are set read-only before the
//! one SELECT.

use anyhow::{anyhow, bail, Context, Result};

use crate::dbms::{self, TargetOptions, TargetSpec};

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
    let null = |row: u64| anyhow!("row {row} of {table}: {column} is NULL (no key to order)");
    let mut n = 0u64;
    match spec.kind.as_str() {
        "sqlite" => {
            let path = spec
                .path
                .ok_or_else(|| anyhow!("--target sqlite needs a file: sqlite:PATH"))?;
            if !path.is_file() {
                bail!("no SQLite database {}", path.display());
            }
            let db = rusqlite::Connection::open_with_flags(
                &path,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .with_context(|| format!("cannot open {} read-only", path.display()))?;
            let order = order.unwrap_or_else(|| "rowid".into());
            let sql = format!("SELECT CAST({column} AS TEXT) FROM {table} ORDER BY {order}");
            let mut st = db.prepare(&sql).map_err(|e| anyhow!("{e}"))?;
            let mut rows = st.query([]).map_err(|e| anyhow!("{e}"))?;
            while let Some(r) = rows.next().map_err(|e| anyhow!("{e}"))? {
                n += 1;
                let v: Option<String> = r.get(0).map_err(|e| anyhow!("{e}"))?;
                each(n, v.as_deref().ok_or_else(|| null(n))?)?;
            }
        }
        "postgres" | "mysql" => {
            if spec.url.is_none() {
                bail!("--target {target}: pattern infer reads an existing server's table; give its URL ({}://USER@HOST:PORT/DB)", spec.kind);
            }
            let db = dbms::open(
                &spec,
                &TargetOptions {
                    engine: None,
                    sqlite_pragmas: Vec::new(),
                    default_sqlite_path: None,
                    connect_timeout: None,
                    server_changes: false,
                },
            )?;
            let mut conn = db.connect()?;
            let pg = spec.kind == "postgres";
            conn.execute(if pg {
                "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"
            } else {
                "SET SESSION TRANSACTION READ ONLY"
            })?;
            let order = match order {
                Some(o) => o,
                None if pg => "ctid".into(),
                None => {
                    let (schema, name) = match table.split_once('.') {
                        Some((s, t)) => (format!("'{s}'"), t),
                        None => ("DATABASE()".to_string(), table),
                    };
                    let pk = conn.query_rows(&format!(
                        "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE \
                         WHERE TABLE_SCHEMA = {schema} AND TABLE_NAME = '{name}' \
                         AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION"
                    ))?;
                    let cols: Vec<String> = pk.into_iter().filter_map(|r| r.into_iter().next().flatten()).collect();
                    if cols.is_empty() {
                        bail!("table {table} has no PRIMARY KEY to read in order: give --order-by");
                    }
                    cols.join(", ")
                }
            };
            let cast = if pg { format!("{column}::text") } else { column.to_string() };
            let rows = conn.query_rows(&format!("SELECT {cast} FROM {table} ORDER BY {order}"))?;
            for r in rows {
                n += 1;
                let v = r.into_iter().next().flatten();
                each(n, v.as_deref().ok_or_else(|| null(n))?)?;
            }
        }
        other => bail!("--target {other}: pattern infer --table reads SQLite, PostgreSQL or MySQL/MariaDB tables"),
    }
    if n == 0 {
        bail!("table {table} has no rows: no keys to infer a pattern from");
    }
    Ok(n)
}
