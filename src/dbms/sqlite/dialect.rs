//! SQLite's SQL dialect: `?` placeholders, the rowid as the key, text timestamps, a comment in
//! the CREATE TABLE (kept verbatim in `sqlite_master`) as a table's identity, `sqlite_master`
//! and `pragma_*` queries, no partitions.

use anyhow::{Context, Result};

use crate::dbms::dialect::{split_schema, CopyDdl, DbmsSql, Query, TableIdentity};
use crate::dbms::{Conn, SqlDialect};

/// SQLite's [`SqlDialect`]: no table options.
pub fn sql_dialect() -> SqlDialect {
    SqlDialect::new(&Sqlite, String::new())
}

/// SQLite's [`DbmsSql`].
pub struct Sqlite;

fn first_cell(conn: &mut dyn Conn, sql: &str) -> Result<Option<String>> {
    Ok(conn
        .query_rows(sql)?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next().flatten()))
}

impl DbmsSql for Sqlite {
    fn rebuild_names(&self, _engine: Option<&str>) -> Option<Vec<String>> {
        // `Sqlite::rebuild_statements`.
        Some(vec!["REINDEX".into(), "VACUUM".into()])
    }

    fn name(&self) -> &'static str {
        "SQLite"
    }

    fn auto_pk(&self) -> &'static str {
        // The rowid: assigned on insert, no separate index.
        "INTEGER PRIMARY KEY"
    }

    fn int_type(&self) -> &'static str {
        "INTEGER"
    }

    fn bigint_type(&self) -> &'static str {
        "INTEGER"
    }

    fn timestamp_type(&self) -> &'static str {
        "TEXT"
    }

    fn text_type(&self, _n: usize) -> String {
        // Text has no declared length in SQLite.
        "TEXT".into()
    }

    fn max_params(&self) -> usize {
        32_766
    }

    fn float_type(&self) -> &'static str {
        "REAL"
    }

    fn int_auto_pk(&self) -> &'static str {
        "INTEGER PRIMARY KEY"
    }

    fn repeat_text_sql(&self, unit: &str, times: u64, len: u64) -> String {
        format!("substr(replace(hex(zeroblob({times})), '00', '{unit}'), 1, {len})")
    }

    fn text_cast(&self, column: &str) -> String {
        format!("CAST({column} AS TEXT)")
    }

    fn pragmas(&self) -> bool {
        true
    }

    fn storage_order(&self, _query: &mut Query, _table: &str) -> Result<Option<String>> {
        Ok(Some("rowid".into()))
    }

    fn table_identity(&self) -> TableIdentity {
        TableIdentity::Marker
    }

    fn identity_sql(&self, table: &str) -> Option<String> {
        Some(format!(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '{table}'"
        ))
    }

    fn mark_create_sql(&self, create: &str, table: &str, marker: &str) -> String {
        let head = format!("CREATE TABLE {table} ");
        match create.strip_prefix(&head) {
            Some(rest) => format!("{head}/* {marker} */ {rest}"),
            None => create.to_string(),
        }
    }

    fn columns_sql(&self, table: &str) -> Option<String> {
        let (_, name) = split_schema(table);
        Some(format!(
            "SELECT name FROM pragma_table_xinfo('{name}') WHERE hidden <> 1 ORDER BY cid"
        ))
    }

    fn insert_columns_sql(&self, table: &str) -> Option<String> {
        let (_, name) = split_schema(table);
        Some(format!(
            "SELECT name FROM pragma_table_xinfo('{name}') WHERE hidden = 0 ORDER BY cid"
        ))
    }

    fn secondary_indexes_sql(&self, table: &str) -> Option<String> {
        let (_, name) = split_schema(table);
        Some(format!(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '{name}' \
             AND sql IS NOT NULL"
        ))
    }

    fn table_bytes_sql(&self, _table: &str) -> Option<String> {
        Some(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
                .to_string(),
        )
    }

    fn copy_table_ddl(&self, conn: &mut dyn Conn, src: &str, dst: &str) -> Result<CopyDdl> {
        let (_, name) = split_schema(src);
        let sql = first_cell(
            conn,
            &format!("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '{name}'"),
        )?
        .with_context(|| format!("no definition for {src}"))?;
        let at = sql.find('(').context("odd CREATE TABLE")?;
        let create = format!("CREATE TABLE {dst} {}", &sql[at..]);
        let mut indexes = Vec::new();
        for r in conn.query_rows(&format!(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = '{name}' \
             AND sql IS NOT NULL"
        ))? {
            let (Some(iname), Some(isql)) = (r[0].clone(), r[1].clone()) else {
                continue;
            };
            // index names are per database: the copy's get the copy's name as prefix
            let on = isql
                .to_ascii_uppercase()
                .find(" ON ")
                .context("odd CREATE INDEX")?;
            let cols = isql[on..].find('(').context("odd CREATE INDEX")? + on;
            let unique = isql.to_ascii_uppercase().starts_with("CREATE UNIQUE");
            indexes.push(format!(
                "CREATE {}INDEX {} ON {dst} {}",
                if unique { "UNIQUE " } else { "" },
                self.quote_ident(&format!("{dst}_{iname}")),
                &isql[cols..]
            ));
        }
        Ok(CopyDdl { create, indexes })
    }
}
