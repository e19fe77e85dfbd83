//! The null target's dialect: it stores nothing and sends nothing, so its SQL only has to be
//! well-formed and cheap to build (standard type names, `?` placeholders, no catalog, no
//! identity, no partitions).

use crate::dbms::dialect::{DbmsSql, TableIdentity};
use crate::dbms::SqlDialect;

/// The null target's [`SqlDialect`]: no table options.
pub fn sql_dialect() -> SqlDialect {
    SqlDialect::new(&Null, String::new())
}

/// The null target's [`DbmsSql`].
pub struct Null;

impl DbmsSql for Null {
    fn name(&self) -> &'static str {
        "null"
    }

    fn auto_pk(&self) -> &'static str {
        "BIGINT PRIMARY KEY"
    }

    fn int_type(&self) -> &'static str {
        "INT"
    }

    fn bigint_type(&self) -> &'static str {
        "BIGINT"
    }

    fn timestamp_type(&self) -> &'static str {
        "TIMESTAMP"
    }

    fn text_type(&self, n: usize) -> String {
        format!("VARCHAR({n})")
    }

    fn max_params(&self) -> usize {
        // Nothing is sent: no limit.
        usize::MAX
    }

    fn float_type(&self) -> &'static str {
        "REAL"
    }

    fn int_auto_pk(&self) -> &'static str {
        "INTEGER PRIMARY KEY"
    }

    fn repeat_text_sql(&self, unit: &str, times: u64, len: u64) -> String {
        format!("SUBSTRING(REPEAT('{unit}', {times}), 1, {len})")
    }

    fn text_cast(&self, column: &str) -> String {
        column.to_string()
    }

    fn table_identity(&self) -> TableIdentity {
        TableIdentity::None
    }
}
