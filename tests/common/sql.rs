//! The tests' own SQL connections to the servers they start, through ixbench's clients
//! ([`ixbench::dbms::session::Session`]: one client per protocol, as ixbench itself connects),
//! with typed reads of text results: `query_first::<i64, _>(sql)`, `query_one(sql, &[]).get(0)`.

use std::str::FromStr;

use anyhow::{Context, Result};
use ixbench::dbms::session::{Session, SessionOptions};

/// A connection to `url` (with its password, or one ixbench finds). A PostgreSQL connection is
/// named `test-session` (`application_name`), so tests that count ixbench's own sessions
/// (`ixbench-%`) do not count it.
pub fn connect(url: &str) -> Result<Session> {
    let url = if url.starts_with("postgres") && !url.contains("application_name=") {
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}application_name=test-session")
    } else {
        url.to_string()
    };
    Session::connect(&url, &SessionOptions::default())
}

/// A value read from one text cell.
pub trait Cell: Sized {
    /// From the cell (`None`: NULL).
    fn from_cell(v: Option<String>) -> Result<Self>;
}

macro_rules! cell_from_str {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            fn from_cell(v: Option<String>) -> Result<Self> {
                let v = v.context("NULL where a value was expected")?;
                <$t>::from_str(v.trim()).map_err(|e| anyhow::anyhow!("{v:?}: {e}"))
            }
        }
    )*};
}
cell_from_str!(i16, i32, i64, u32, u64, f64, String);

impl Cell for bool {
    fn from_cell(v: Option<String>) -> Result<Self> {
        match v.as_deref() {
            Some("t" | "true" | "1" | "ON") => Ok(true),
            Some("f" | "false" | "0" | "OFF") => Ok(false),
            other => anyhow::bail!("not a boolean: {other:?}"),
        }
    }
}

impl<T: Cell> Cell for Option<T> {
    fn from_cell(v: Option<String>) -> Result<Self> {
        v.map(|s| T::from_cell(Some(s))).transpose()
    }
}

/// A value read from one row: one cell (the first column) or a tuple of the first columns.
pub trait FromRow: Sized {
    /// From the row's cells.
    fn from_row(r: Vec<Option<String>>) -> Result<Self>;
}

impl<T: Cell> FromRow for T {
    fn from_row(r: Vec<Option<String>>) -> Result<Self> {
        T::from_cell(r.into_iter().next().flatten())
    }
}

impl<A: Cell, B: Cell> FromRow for (A, B) {
    fn from_row(r: Vec<Option<String>>) -> Result<Self> {
        let mut r = r.into_iter();
        Ok((
            A::from_cell(r.next().flatten())?,
            B::from_cell(r.next().flatten())?,
        ))
    }
}

/// One row of a result, read by column.
pub struct Row(Vec<Option<String>>);

impl Row {
    /// Column `i`, typed; panics when it is missing or does not parse.
    pub fn get<T: Cell>(&self, i: usize) -> T {
        T::from_cell(self.0.get(i).cloned().flatten())
            .unwrap_or_else(|e| panic!("column {i}: {e:#}"))
    }
}

/// Typed text queries on a [`Session`].
pub trait SqlExt {
    /// Run `sql` (several statements allowed), dropping any rows.
    fn query_drop(&mut self, sql: impl AsRef<str>) -> Result<()>;
    /// Run `sql` (several statements allowed).
    fn batch_execute(&mut self, sql: &str) -> Result<()>;
    /// The first row of `sql`, if any.
    fn query_first<T: FromRow, S: AsRef<str>>(&mut self, sql: S) -> Result<Option<T>>;
    /// Every row of `sql`.
    fn query<T: FromRow>(&mut self, sql: impl AsRef<str>) -> Result<Vec<T>>;
    /// The one row of `sql` (an error when there is none); `params` must be empty.
    fn query_one(&mut self, sql: &str, params: &[&str]) -> Result<Row>;
}

impl SqlExt for Session {
    fn query_drop(&mut self, sql: impl AsRef<str>) -> Result<()> {
        self.execute(sql.as_ref())
    }

    fn batch_execute(&mut self, sql: &str) -> Result<()> {
        self.execute(sql)
    }

    fn query_first<T: FromRow, S: AsRef<str>>(&mut self, sql: S) -> Result<Option<T>> {
        self.rows(sql.as_ref())?
            .into_iter()
            .next()
            .map(T::from_row)
            .transpose()
    }

    fn query<T: FromRow>(&mut self, sql: impl AsRef<str>) -> Result<Vec<T>> {
        self.rows(sql.as_ref())?
            .into_iter()
            .map(T::from_row)
            .collect()
    }

    fn query_one(&mut self, sql: &str, params: &[&str]) -> Result<Row> {
        assert!(params.is_empty(), "text queries take no parameters");
        let row = self
            .rows(sql)?
            .into_iter()
            .next()
            .with_context(|| format!("no row from {sql}"))?;
        Ok(Row(row))
    }
}
