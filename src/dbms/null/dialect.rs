//! The null target's dialect: it stores nothing and sends nothing, so its SQL only has to be
//! well-formed and cheap to build (standard type names, `?` placeholders, no catalog, no
//! identity, no partitions).

use crate::dbms::dialect::{DbmsSql, TableIdentity};
use crate::dbms::{IndexHint, Placeholder, SqlDialect, TextLiteral};

/// The null target's [`SqlDialect`].
pub fn sql_dialect() -> SqlDialect {
    SqlDialect {
        placeholder: Placeholder::Question,
        auto_pk: "BIGINT PRIMARY KEY",
        int_type: "INT",
        bigint_type: "BIGINT",
        timestamp_type: "TIMESTAMP",
        varchar: Some("VARCHAR"),
        table_options: String::new(),
        index_hint: IndexHint::None,
        max_params: usize::MAX,
        text_literal: TextLiteral::Standard,
        sql: &Null,
    }
}

/// The null target's [`DbmsSql`].
pub struct Null;

impl DbmsSql for Null {
    fn name(&self) -> &'static str {
        "null"
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
