//! The insert benchmark's table, rows and queries (same as the public insert benchmark, so
//! results compare): schema and secondary indexes, the value domains, the partly random `data`
//! column, the 1-second `dateandtime`, and the range and point queries.
//!
//! All SQL text lives here once; a DBMS contributes only its [`SqlDialect`] (what really
//! differs between DBMSs: type names, placeholders, index hints, parameter limits), and the
//! operations run through the DBMS's generic prepared statements ([`Statements`]).
//!
//! Beside this file: [`plan`] (its step plan: the steps l.i0 ... qrN and their specs, profiles,
//! default rates, the plan line; the function its registry entry carries as `Runner::Steps`),
//! [`load`] (l.i1's inserts and deletes as a [`crate::workload::Workload`], for `ixbench ddl
//! --workload iibench`), [`codes`] (the geek codes of its indexes, from how its rows are
//! made) and [`steps`] (its steps: the loads, read+write, maint, the key patterns of a run,
//! the figures and checks of a step).

pub mod codes;
pub mod exec;
pub mod lab;
pub mod load;
pub mod options;
pub mod plan;
pub mod steps;

use std::sync::Arc;

use anyhow::{bail, Context, Result};
use rand::{Rng, RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::dbms::{Conn, IndexSpec, SqlDialect, Stmt, Value};
use crate::pattern::{KeyGen, Spec};

/// Rows each range query reads.
pub const RANGE_LIMIT: usize = 10;
/// Primary keys each point query asks for.
pub const POINT_KEYS: usize = 10;

/// Exclusive upper bounds of the uniform value domains.
pub const CASHREGISTER_DOMAIN: i64 = 1_000;
/// `productid` in [0, 10000).
pub const PRODUCT_DOMAIN: i64 = 10_000;
/// `customerid` in [0, 100000).
pub const CUSTOMER_DOMAIN: i64 = 100_000;
/// `price` in [0, 500).
pub const PRICE_DOMAIN: i64 = 500;

/// Columns written by inserts, in bind order (the PK is assigned by the server).
pub const INSERT_COLUMNS: [&str; 6] = [
    "dateandtime",
    "cashregisterid",
    "customerid",
    "productid",
    "price",
    "data",
];

/// The insert benchmark's table under `ixbench ddl --workload iibench`.
const DDL_TABLE: &str = "pi1";
/// Rows inserted (and oldest rows deleted) per transaction under `ixbench ddl`: l.i1's default.
const DDL_ROWS_PER_COMMIT: usize = 50;

/// The insert benchmark in the workload registry: `ixbench run`'s default, its own steps.
pub fn entry() -> crate::workload::registry::Entry {
    use crate::workload::registry::{Entry, Runner, H_IIBENCH};
    Entry {
        name: "iibench",
        rank: 0,
        aliases: &["insert-benchmark"],
        about:
            "the insert benchmark: l.i0 load, l.x indexes, l.i1/l.i2 inserts with deletes, qrN/qpN",
        runner: Runner::Steps(plan::plan),
        headings: &[H_IIBENCH],
        also_takes: &[],
        // `ixbench run`'s own presets (options::size::PRESETS) are the insert benchmark's.
        presets: |_| &[],
        notes,
        ddl_target: crate::workload::registry::DdlTarget {
            table: DDL_TABLE,
            column: "customerid",
            pk: "transactionid",
        },
        ddl_tables: |_| vec![DDL_TABLE.to_string()],
        ddl_workload: |_, l, dbms| {
            Ok(Box::new(load::InsertLoad::new(
                DDL_TABLE,
                dbms,
                u64::from(l.table_size),
                DDL_ROWS_PER_COMMIT,
                (10, 20),
                l.seed,
            )?))
        },
        indexes: || {
            INDEXES
                .iter()
                .map(|i| {
                    (
                        i.name(DDL_TABLE),
                        i.columns.iter().map(|c| c.to_string()).collect(),
                    )
                })
                .collect()
        },
        lab: Some(lab::hooks()),
    }
}

/// The insert benchmark's notes on a target (`kind` as [`crate::dbms::TargetInfo`] gives it):
/// how its primary key is assigned, how its rows are inserted, what its plan check requires,
/// where a reader could not guess it. The commands that run this workload (`run`, `index` on
/// its tables) print them under the header and keep them in the run's `notes`; no other
/// workload's output has them.
pub fn notes(kind: &str) -> Vec<String> {
    let d = crate::dbms::registry::dialect(kind);
    let mut out: Vec<String> = Vec::new();
    if let Some(pk) = d.auto_pk_note() {
        out.push(format!("PK: {pk}"));
    }
    if let Some(st) = d.statements_note() {
        out.push(format!("inserts: one multi-row INSERT per commit, {st}"));
    }
    if let Some((explain, must)) = d.plan_check_note() {
        out.push(format!(
            "plan check: {explain} of the range query with the middle of the first column's \
             domain as a literal; it must be {must}"
        ));
    }
    out
}

/// One secondary index of the insert benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexDef {
    /// Name suffix; the index is named `<table>_<suffix>` (index names are per schema in
    /// PostgreSQL and SQLite).
    pub suffix: &'static str,
    /// Indexed columns, in order.
    pub columns: [&'static str; 3],
    /// Exclusive upper bound of the first column's domain, for range query starts.
    pub first_domain: i64,
}

/// The three secondary indexes, in the order `--secondary-indexes N` keeps them.
pub const INDEXES: [IndexDef; 3] = [
    IndexDef {
        suffix: "marketsegment",
        columns: ["productid", "customerid", "price"],
        first_domain: PRODUCT_DOMAIN,
    },
    IndexDef {
        suffix: "registersegment",
        columns: ["cashregisterid", "customerid", "price"],
        first_domain: CASHREGISTER_DOMAIN,
    },
    IndexDef {
        suffix: "pdc",
        columns: ["price", "dateandtime", "customerid"],
        first_domain: PRICE_DOMAIN,
    },
];

impl IndexDef {
    /// The index's name on `table`.
    pub fn name(&self, table: &str) -> String {
        format!("{table}_{}", self.suffix)
    }
}

pub use crate::dbms::Placeholder;

/// How the workload's statements reach the server (`--statements`).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum StatementMode {
    /// Prepared once per connection, values bound as parameters (binary on PostgreSQL,
    /// server-side prepared on MySQL): ixbench's own style.
    #[default]
    Prepared,
    /// Literal SQL text with the values written in, sent without parameters (PostgreSQL's
    /// simple query protocol, MySQL's COM_QUERY, SQLite parsing each statement anew): the
    /// insert benchmark's own client style, to reproduce its published figures.
    Text,
}

impl StatementMode {
    /// `prepared` or `text`.
    pub fn name(self) -> &'static str {
        match self {
            StatementMode::Prepared => "prepared",
            StatementMode::Text => "text",
        }
    }
}

/// Longest `data` value the table takes.
pub const DATA_MAX_LEN: usize = 4000;

/// SQL for one insert-benchmark table in one DBMS's dialect: the workload's statements, all
/// written here from the DBMS's [`SqlDialect`]. The hot path's texts are built once per table;
/// a worker prepares them once on its connection ([`Statements`]), so an operation never
/// formats SQL.
#[derive(Debug, Clone)]
pub struct TableSql {
    /// Table name.
    pub table: String,
    dialect: SqlDialect,
    /// The range query on each secondary index (see [`TableSql::range_query`]).
    pub range: [String; 3],
    /// The point query (see [`TableSql::point_query`]).
    pub point: String,
    /// DELETE of a PK range (see [`TableSql::delete_range`]).
    pub delete: String,
    /// How [`Statements`] on this table send their SQL.
    pub statements: StatementMode,
    /// Key patterns driving the PK's and the indexed columns' values (`--pk-pattern`,
    /// `--index-pattern`); `None`: the insert benchmark's own values.
    pub patterns: Option<Arc<KeyPatterns>>,
    /// The PK is given by ixbench (a PK pattern), not assigned by the server.
    pub explicit_pk: bool,
}

impl TableSql {
    /// SQL builder for `table`.
    pub fn new(table: &str, dialect: &SqlDialect) -> Self {
        let mut t = TableSql {
            table: table.to_string(),
            dialect: dialect.clone(),
            range: Default::default(),
            point: String::new(),
            delete: String::new(),
            statements: StatementMode::Prepared,
            patterns: None,
            explicit_pk: false,
        };
        t.range = [t.range_query(0), t.range_query(1), t.range_query(2)];
        t.point = t.point_query();
        t.delete = t.delete_range();
        t
    }

    /// The same SQL, with [`Statements`] sending it as `mode` says.
    pub fn with_statements(mut self, mode: StatementMode) -> Self {
        self.statements = mode;
        self
    }

    /// SQL builder for `table` whose rows take their PK and indexed columns' values from
    /// `patterns` (see [`KeyPatterns`]).
    pub fn with_patterns(table: &str, dialect: &SqlDialect, patterns: Arc<KeyPatterns>) -> Self {
        let mut t = TableSql::new(table, dialect);
        t.explicit_pk = patterns.pk.is_some();
        t.patterns = Some(patterns);
        t
    }

    /// Columns one inserted row binds.
    fn insert_columns(&self) -> usize {
        INSERT_COLUMNS.len() + self.explicit_pk as usize
    }

    /// The dialect this SQL is written in.
    pub fn dialect(&self) -> &SqlDialect {
        &self.dialect
    }

    fn ph(&self, i: usize) -> String {
        self.dialect.ph(i)
    }

    /// CREATE TABLE with only the PK.
    pub fn create_table(&self) -> String {
        let d = &self.dialect;
        let explicit_pk = format!("{} PRIMARY KEY", d.bigint_type());
        let pk = if self.explicit_pk {
            explicit_pk.as_str()
        } else {
            d.auto_pk()
        };
        format!(
            "CREATE TABLE {t} (transactionid {pk}, dateandtime {dt} NOT NULL, \
             cashregisterid {i} NOT NULL, customerid {i} NOT NULL, productid {i} NOT NULL, \
             price {i} NOT NULL, data {data} NOT NULL){opts}",
            t = self.table,
            dt = d.timestamp_type(),
            i = d.int_type(),
            data = d.text_type(DATA_MAX_LEN),
            opts = d.table_options()
        )
    }

    /// Secondary index `i` (0..3) of this table, as DDL takes it.
    pub fn index(&self, i: usize) -> IndexSpec {
        let idx = &INDEXES[i];
        IndexSpec {
            table: self.table.clone(),
            name: idx.name(&self.table),
            columns: idx.columns.iter().map(|c| c.to_string()).collect(),
            unique: false,
        }
    }

    /// Secondary indexes `idxs` of this table.
    pub fn indexes(&self, idxs: &[usize]) -> Vec<IndexSpec> {
        idxs.iter().map(|&i| self.index(i)).collect()
    }

    /// CREATE INDEX for secondary index `i` (0..3).
    pub fn create_index(&self, i: usize) -> String {
        self.index(i).create_sql()
    }

    /// Most rows one INSERT statement can carry within the dialect's parameter limit.
    pub fn max_rows_per_statement(&self) -> usize {
        (self.dialect.max_params() / self.insert_columns()).max(1)
    }

    /// A multi-row INSERT of `rows` rows.
    pub fn insert(&self, rows: usize) -> String {
        let ncol = self.insert_columns();
        let pk = if self.explicit_pk {
            "transactionid, "
        } else {
            ""
        };
        let mut s = format!(
            "INSERT INTO {} ({pk}{}) VALUES ",
            self.table,
            INSERT_COLUMNS.join(", ")
        );
        for r in 0..rows {
            if r > 0 {
                s.push(',');
            }
            s.push('(');
            for c in 0..ncol {
                if c > 0 {
                    s.push(',');
                }
                s.push_str(&self.ph(r * ncol + c + 1));
            }
            s.push(')');
        }
        s
    }

    /// Append a multi-row INSERT of `b`'s rows `from..to` to `out` with every value written
    /// as a literal in this dialect (`--statements text`): the same rows the prepared INSERT
    /// binds, in the same column order.
    pub fn insert_literal(&self, out: &mut String, b: &Batch, from: usize, to: usize) {
        use std::fmt::Write as _;
        let pk = if self.explicit_pk {
            "transactionid, "
        } else {
            ""
        };
        let _ = write!(
            out,
            "INSERT INTO {} ({pk}{}) VALUES ",
            self.table,
            INSERT_COLUMNS.join(", ")
        );
        for r in from..to {
            if r > from {
                out.push(',');
            }
            out.push('(');
            if self.explicit_pk {
                // A PK pattern gives the PK (as the prepared INSERT binds it first).
                let _ = write!(out, "{},", b.transactionid[r]);
            }
            self.dialect.push_text_literal(out, &b.ts_text);
            let _ = write!(
                out,
                ",{},{},{},{},",
                b.cashregisterid[r], b.customerid[r], b.productid[r], b.price[r]
            );
            self.dialect.push_text_literal(out, b.data(r));
            out.push(')');
        }
    }

    /// The range query on secondary index `i` from `start` (a placeholder or a literal): 10
    /// rows in index order from a start value of its first column, reading only the index's
    /// columns so the index covers it.
    fn range_query_from(&self, i: usize, start: &str) -> String {
        let idx = &INDEXES[i];
        let cols = idx.columns.join(", ");
        format!(
            "SELECT {cols} FROM {t}{hint} WHERE {c0} >= {start} ORDER BY {cols} LIMIT {RANGE_LIMIT}",
            t = self.table,
            hint = self.dialect.use_index(&idx.name(&self.table)),
            c0 = idx.columns[0],
        )
    }

    /// The range query on secondary index `i`, its start value the only parameter.
    pub fn range_query(&self, i: usize) -> String {
        self.range_query_from(i, &self.ph(1))
    }

    /// The range query on secondary index `i` with the middle of its first column's domain
    /// as a literal: the query whose plan is checked ([`Conn::explain`]).
    pub fn explain_range(&self, i: usize) -> String {
        self.range_query_from(i, &(INDEXES[i].first_domain / 2).to_string())
    }

    /// The point query: all columns of up to 10 rows by PK.
    pub fn point_query(&self) -> String {
        let ps: Vec<String> = (1..=POINT_KEYS).map(|i| self.ph(i)).collect();
        self.point_query_of(&ps)
    }

    /// The point query for `keys` written in (`--statements text`).
    pub fn point_query_literal(&self, keys: &[i64]) -> String {
        let ks: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        self.point_query_of(&ks)
    }

    fn point_query_of(&self, keys: &[String]) -> String {
        format!(
            "SELECT transactionid, {} FROM {} WHERE transactionid IN ({})",
            INSERT_COLUMNS.join(", "),
            self.table,
            keys.join(",")
        )
    }

    /// The range query on secondary index `i` from `start` written in (`--statements text`).
    pub fn range_query_literal(&self, i: usize, start: i64) -> String {
        self.range_query_from(i, &start.to_string())
    }

    /// Number of rows.
    pub fn count(&self) -> String {
        format!("SELECT count(*) FROM {}", self.table)
    }

    /// Smallest and largest PK (NULLs when empty).
    pub fn min_max(&self) -> String {
        format!(
            "SELECT min(transactionid), max(transactionid) FROM {}",
            self.table
        )
    }

    /// The PK of the `n`th oldest row at or after `from` (first parameter `from`, no LIMIT
    /// parameter: `n` is part of the text so every DBMS accepts it).
    pub fn nth_id_from(&self, n: usize) -> String {
        self.nth_id_of(&self.ph(1), n)
    }

    /// The n-th PK query from `from` written in (`--statements text`).
    pub fn nth_id_literal(&self, from: i64, n: usize) -> String {
        self.nth_id_of(&from.to_string(), n)
    }

    fn nth_id_of(&self, from: &str, n: usize) -> String {
        format!(
            "SELECT transactionid FROM {} WHERE transactionid >= {from} ORDER BY transactionid LIMIT 1 OFFSET {}",
            self.table,
            n.saturating_sub(1)
        )
    }

    /// DELETE of the PK range [from, to] (parameters 1 and 2).
    pub fn delete_range(&self) -> String {
        self.delete_range_of(&self.ph(1), &self.ph(2))
    }

    /// DELETE of the PK range [from, to] written in (`--statements text`).
    pub fn delete_range_literal(&self, from: i64, to: i64) -> String {
        self.delete_range_of(&from.to_string(), &to.to_string())
    }

    fn delete_range_of(&self, from: &str, to: &str) -> String {
        format!(
            "DELETE FROM {} WHERE transactionid >= {from} AND transactionid <= {to}",
            self.table
        )
    }

    /// Rows in the table (a side query: formats its SQL).
    pub fn count_rows(&self, conn: &mut dyn Conn) -> Result<u64> {
        Ok(conn.query_i64(&self.count())?.unwrap_or(0).max(0) as u64)
    }

    /// Smallest and largest PK, `None` when the table is empty (a side query).
    pub fn min_max_ids(&self, conn: &mut dyn Conn) -> Result<Option<(i64, i64)>> {
        let rows = conn.query_rows(&self.min_max())?;
        let row = rows.into_iter().next().unwrap_or_default();
        let get = |i: usize| -> Result<Option<i64>> {
            row.get(i)
                .cloned()
                .flatten()
                .map(|s| {
                    s.parse::<i64>()
                        .with_context(|| format!("not an integer: {s}"))
                })
                .transpose()
        };
        Ok(match (get(0)?, get(1)?) {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        })
    }

    /// The plan of the range query on secondary index `i`, as the DBMS shows it.
    pub fn explain(&self, conn: &mut dyn Conn, i: usize) -> Result<String> {
        conn.explain(&self.explain_range(i))
    }
}

/// Distinct statement sizes (rows per INSERT, n of the n-th oldest PK) one worker prepares
/// for one table; the batches of a run use two or three (the full batch, the last partial one,
/// the chunks of a batch over the parameter limit).
const MAX_SIZES: usize = 8;

/// Result of deleting the oldest rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deleted {
    /// Rows deleted.
    pub rows: u64,
    /// The PK to start the next delete from.
    pub next_from: i64,
}

/// One worker's statements on one table, prepared on its connection on first use and kept
/// (as [`Stmt`] handles) for the connection's life: an operation binds [`Value`]s and runs a
/// handle, with no SQL formatting or lookup by text. On a DBMS that stores nothing
/// ([`crate::dbms::Dbms::stores_rows`] false: the null target) the statements are still
/// bound and sent, and the operations count the rows they were meant to touch.
pub struct Statements {
    sql: Arc<TableSql>,
    stores_rows: bool,
    per_statement: usize,
    /// By rows per INSERT.
    insert: Vec<(usize, Stmt)>,
    /// By n of the n-th oldest PK.
    nth: Vec<(usize, Stmt)>,
    delete: Option<Stmt>,
    range: [Option<Stmt>; 3],
    point: Option<Stmt>,
    /// The INSERT's parameters, reused from batch to batch (empty between operations).
    params: Vec<Value<'static>>,
    /// `--statements text`: SQL written with its values, nothing prepared.
    text: bool,
    /// The literal INSERT's text, reused from batch to batch.
    text_buf: String,
}

/// An empty vector of values of any lifetime with `v`'s allocation, so the INSERT's parameter
/// vector is allocated once per worker, not once per batch.
fn recycle<'b>(mut v: Vec<Value<'_>>) -> Vec<Value<'b>> {
    v.clear();
    let mut v = std::mem::ManuallyDrop::new(v);
    let (ptr, cap) = (v.as_mut_ptr(), v.capacity());
    // SAFETY: the vector is empty, so no value with the old lifetime survives; `Value<'a>` and
    // `Value<'b>` differ only in a lifetime, so they have one layout, and the allocation (from
    // the global allocator, `cap` values) is handed over whole and never used through `v` again.
    unsafe { Vec::from_raw_parts(ptr.cast::<Value<'b>>(), 0, cap) }
}

impl Statements {
    /// Statements on `sql`'s table for a worker whose DBMS stores rows (`stores_rows`) or not.
    /// Nothing is prepared until first used (a range query's FORCE INDEX fails to prepare
    /// while its index does not exist); with [`StatementMode::Text`] (the table's
    /// [`TableSql::statements`]) nothing is prepared at all: every operation writes its values
    /// into the SQL text and sends it without parameters.
    pub fn new(sql: Arc<TableSql>, stores_rows: bool) -> Self {
        Statements {
            text: sql.statements == StatementMode::Text,
            text_buf: String::new(),
            per_statement: sql.max_rows_per_statement(),
            sql,
            stores_rows,
            insert: Vec::new(),
            nth: Vec::new(),
            delete: None,
            range: [None; 3],
            point: None,
            params: Vec::new(),
        }
    }

    /// The table's SQL.
    pub fn sql(&self) -> &TableSql {
        &self.sql
    }

    fn sized(
        conn: &mut dyn Conn,
        cache: &mut Vec<(usize, Stmt)>,
        n: usize,
        what: &str,
        sql: impl FnOnce() -> String,
    ) -> Result<Stmt> {
        if let Some((_, st)) = cache.iter().find(|(k, _)| *k == n) {
            return Ok(*st);
        }
        if cache.len() >= MAX_SIZES {
            bail!("more than {MAX_SIZES} sizes of {what} on one connection");
        }
        let st = conn.prepare(&sql())?;
        cache.push((n, st));
        Ok(st)
    }

    fn once(conn: &mut dyn Conn, slot: &mut Option<Stmt>, sql: &str) -> Result<Stmt> {
        if let Some(st) = slot {
            return Ok(*st);
        }
        let st = conn.prepare(sql)?;
        *slot = Some(st);
        Ok(st)
    }

    /// Rows `from..to` of `b` in one INSERT.
    fn insert_rows(
        &mut self,
        conn: &mut dyn Conn,
        b: &Batch,
        from: usize,
        to: usize,
    ) -> Result<()> {
        let n = to - from;
        let sql = &self.sql;
        if self.text {
            let mut buf = std::mem::take(&mut self.text_buf);
            buf.clear();
            sql.insert_literal(&mut buf, b, from, to);
            let stored = conn.exec_text(&buf);
            self.text_buf = buf;
            return self.check_stored(stored?, n);
        }
        let st = Self::sized(conn, &mut self.insert, n, "INSERT", || sql.insert(n))?;
        let mut p = recycle(std::mem::take(&mut self.params));
        p.reserve(n * sql.insert_columns());
        let ts = Value::Timestamp(b.ts_secs);
        let mut start = if from == 0 { 0 } else { b.data_end[from - 1] };
        let cols = b.cashregisterid[from..to]
            .iter()
            .zip(&b.customerid[from..to])
            .zip(&b.productid[from..to])
            .zip(&b.price[from..to])
            .zip(&b.data_end[from..to]);
        if sql.explicit_pk {
            // A PK pattern: the PK is bound first (a separate loop keeps the default's lean).
            for (((((&cr, &cu), &pr), &pc), &end), &id) in cols.zip(&b.transactionid[from..to]) {
                p.extend([
                    Value::Int(id),
                    ts,
                    Value::Int(cr as i64),
                    Value::Int(cu as i64),
                    Value::Int(pr as i64),
                    Value::Int(pc as i64),
                    Value::Text(&b.data[start..end]),
                ]);
                start = end;
            }
        } else {
            for ((((&cr, &cu), &pr), &pc), &end) in cols {
                p.extend([
                    ts,
                    Value::Int(cr as i64),
                    Value::Int(cu as i64),
                    Value::Int(pr as i64),
                    Value::Int(pc as i64),
                    Value::Text(&b.data[start..end]),
                ]);
                start = end;
            }
        }
        let stored = conn.exec(st, &p);
        self.params = recycle(p);
        self.check_stored(stored?, n)
    }

    fn check_stored(&self, stored: u64, n: usize) -> Result<()> {
        if self.stores_rows && stored != n as u64 {
            bail!("INSERT stored {stored} rows, expected {n}");
        }
        Ok(())
    }

    /// Insert the batch in one commit: one multi-row INSERT in autocommit, or, when the batch
    /// has more parameters than one statement may carry, several in one transaction.
    pub fn insert(&mut self, conn: &mut dyn Conn, b: &Batch) -> Result<()> {
        if b.is_empty() {
            return Ok(());
        }
        let per = self.per_statement;
        if b.len() <= per {
            return self.insert_rows(conn, b, 0, b.len());
        }
        crate::dbms::in_txn(conn, crate::dbms::TxnKind::Write, |c| {
            for (from, to) in b.chunks(per) {
                self.insert_rows(c, b, from, to)?;
            }
            Ok(())
        })
    }

    /// The PK of the `n`th oldest row with PK >= `from` (the last of the `n` rows a delete of
    /// the oldest rows takes), `None` when fewer rows are there.
    pub fn nth_id(&mut self, conn: &mut dyn Conn, from: i64, n: usize) -> Result<Option<i64>> {
        let sql = &self.sql;
        let id = if self.text {
            conn.query_i64(&sql.nth_id_literal(from, n))?
        } else {
            let st = Self::sized(conn, &mut self.nth, n, "n-th PK query", || {
                sql.nth_id_from(n)
            })?;
            conn.query_int(st, &[Value::Int(from)])?
        };
        if !self.stores_rows {
            return Ok(Some(from.saturating_add(n as i64 - 1)));
        }
        Ok(id)
    }

    /// Delete the rows with `from <= PK <= upto` in one commit (one statement in
    /// autocommit); returns the rows deleted.
    pub fn delete_range(&mut self, conn: &mut dyn Conn, from: i64, upto: i64) -> Result<u64> {
        let n = if self.text {
            conn.exec_text(&self.sql.delete_range_literal(from, upto))?
        } else {
            let st = Self::once(conn, &mut self.delete, &self.sql.delete)?;
            conn.exec(st, &[Value::Int(from), Value::Int(upto)])?
        };
        if !self.stores_rows {
            return Ok(upto.saturating_sub(from).saturating_add(1).max(0) as u64);
        }
        Ok(n)
    }

    /// Delete the `n` oldest rows with PK >= `from`: [`Statements::nth_id`], then
    /// [`Statements::delete_range`] (when fewer than `n` rows are left, all of them).
    /// Concurrent deleters of one table must not compute the same range: the load step claims
    /// ranges under a per-table lock between the two calls instead of calling this.
    pub fn delete_oldest(&mut self, conn: &mut dyn Conn, from: i64, n: usize) -> Result<Deleted> {
        let upto = self.nth_id(conn, from, n)?.unwrap_or(i64::MAX);
        let rows = self.delete_range(conn, from, upto)?;
        Ok(Deleted {
            rows,
            next_from: upto.saturating_add(1),
        })
    }

    /// Run range query `idx` from `start`; returns the rows read.
    pub fn range_query(&mut self, conn: &mut dyn Conn, idx: usize, start: i64) -> Result<usize> {
        let sql = self
            .sql
            .range
            .get(idx)
            .with_context(|| format!("no range query {idx}"))?;
        let n = if self.text {
            conn.query_text(&self.sql.range_query_literal(idx, start))?
        } else {
            let st = Self::once(conn, &mut self.range[idx], sql)?;
            conn.query(st, &[Value::Int(start)])?
        };
        Ok(if self.stores_rows {
            n as usize
        } else {
            RANGE_LIMIT
        })
    }

    /// Run the point query for `keys`; returns the rows read.
    pub fn point_query(&mut self, conn: &mut dyn Conn, keys: &[i64; POINT_KEYS]) -> Result<usize> {
        let n = if self.text {
            conn.query_text(&self.sql.point_query_literal(keys))?
        } else {
            let st = Self::once(conn, &mut self.point, &self.sql.point)?;
            conn.query(st, &keys.map(Value::Int))?
        };
        Ok(if self.stores_rows {
            n as usize
        } else {
            POINT_KEYS
        })
    }

    /// Prepare the INSERT of a batch of `rows` rows now (it is otherwise prepared on first use;
    /// a batch over the parameter limit is sent as INSERTs of the most rows one may carry).
    pub fn prepare_insert(&mut self, conn: &mut dyn Conn, rows: usize) -> Result<()> {
        if self.text {
            return Ok(());
        }
        let rows = rows.min(self.per_statement);
        let sql = &self.sql;
        Self::sized(conn, &mut self.insert, rows, "INSERT", || sql.insert(rows)).map(|_| ())
    }

    /// Prepare a delete of the `n` oldest rows now: the n-th PK query and the DELETE.
    pub fn prepare_delete(&mut self, conn: &mut dyn Conn, n: usize) -> Result<()> {
        if self.text {
            return Ok(());
        }
        let sql = &self.sql;
        Self::sized(conn, &mut self.nth, n, "n-th PK query", || {
            sql.nth_id_from(n)
        })?;
        Self::once(conn, &mut self.delete, &self.sql.delete).map(|_| ())
    }

    /// Prepare the point query now.
    pub fn prepare_point(&mut self, conn: &mut dyn Conn) -> Result<()> {
        if self.text {
            return Ok(());
        }
        Self::once(conn, &mut self.point, &self.sql.point).map(|_| ())
    }

    /// Prepare the range query on secondary index `idx` now (the index must exist where the
    /// DBMS takes index hints).
    pub fn prepare_range(&mut self, conn: &mut dyn Conn, idx: usize) -> Result<()> {
        if self.text {
            return Ok(());
        }
        let sql = self
            .sql
            .range
            .get(idx)
            .with_context(|| format!("no range query {idx}"))?;
        Self::once(conn, &mut self.range[idx], sql).map(|_| ())
    }

    /// Statements prepared so far.
    pub fn prepared(&self) -> usize {
        self.insert.len()
            + self.nth.len()
            + self.delete.is_some() as usize
            + self.range.iter().flatten().count()
            + self.point.is_some() as usize
    }
}

/// Rows of one commit, column by column, reused from batch to batch (no allocation per row).
#[derive(Debug, Clone, Default)]
pub struct Batch {
    /// `dateandtime` of every row in the batch, Unix seconds (one value per batch).
    pub ts_secs: i64,
    /// `dateandtime` as `YYYY-MM-DD HH:MM:SS` (UTC).
    pub ts_text: String,
    /// `cashregisterid` per row.
    pub cashregisterid: Vec<i32>,
    /// `customerid` per row.
    pub customerid: Vec<i32>,
    /// `productid` per row.
    pub productid: Vec<i32>,
    /// `price` per row.
    pub price: Vec<i32>,
    /// All `data` values back to back (ASCII).
    pub data: String,
    /// End offset of each row's `data` in [`Batch::data`].
    pub data_end: Vec<usize>,
    /// `transactionid` per row when a PK pattern gives it ([`KeyPatterns::apply`]); empty
    /// when the server assigns it.
    pub transactionid: Vec<i64>,
}

impl Batch {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.price.len()
    }

    /// True when the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.price.is_empty()
    }

    /// Row ranges `from..to` of at most `per` rows each, covering the batch in order: the
    /// statements a batch is split into when it has more parameters than one statement may
    /// carry.
    pub fn chunks(&self, per: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let per = per.max(1);
        (0..self.len())
            .step_by(per)
            .map(move |from| (from, (from + per).min(self.len())))
    }

    /// The `data` value of row `r`.
    pub fn data(&self, r: usize) -> &str {
        let start = if r == 0 { 0 } else { self.data_end[r - 1] };
        &self.data[start..self.data_end[r]]
    }
}

/// Range of the values a pattern gives an indexed column (the columns are 32-bit integers).
pub const PATTERN_COLUMN_RANGE: (i64, i64) = (0, i32::MAX as i64);
/// Range of the PK values a PK pattern gives.
pub const PATTERN_PK_RANGE: (i64, i64) = (1, 1 << 40);

/// Key patterns for one table (`--pk-pattern`, `--index-pattern`): the PK's values and, for
/// each secondary index with a pattern, its first column's values (`productid` for
/// marketsegment, `cashregisterid` for registersegment, `price` for pdc) come from a
/// [`KeyGen`]. Those values are distinct, so the index's keys arrive in the pattern's order and
/// its geek code is the pattern's. Rows are numbered from the table's creation by one counter
/// per table, so inserters sharing a table draw disjoint key numbers and later steps go on
/// with the sequence.
#[derive(Debug)]
pub struct KeyPatterns {
    /// The PK's generator.
    pub pk: Option<KeyGen>,
    /// The generators of the secondary indexes' first columns, in [`INDEXES`] order.
    pub index: [Option<KeyGen>; 3],
    next: std::sync::atomic::AtomicU64,
}

impl KeyPatterns {
    /// Generators for `keys` rows (one error line when a pattern cannot make that many:
    /// more streams than keys, or a range too small), seeded from `seed`.
    pub fn new(
        pk: Option<&Spec>,
        index: [Option<&Spec>; 3],
        seed: u64,
        keys: u64,
    ) -> std::result::Result<Self, String> {
        let pk = pk
            .map(|s| {
                let (lo, hi) = PATTERN_PK_RANGE;
                KeyGen::new(s, derive_seed(seed, &[100]), lo, hi, keys)
                    .map_err(|e| format!("--pk-pattern {s}: {e}"))
            })
            .transpose()?;
        let mut gens: [Option<KeyGen>; 3] = [None, None, None];
        for (i, s) in index.iter().enumerate() {
            if let Some(s) = s {
                let (lo, hi) = PATTERN_COLUMN_RANGE;
                gens[i] = Some(
                    KeyGen::new(s, derive_seed(seed, &[101 + i as u64]), lo, hi, keys)
                        .map_err(|e| format!("--index-pattern {}={s}: {e}", INDEXES[i].suffix))?,
                );
            }
        }
        Ok(KeyPatterns {
            pk,
            index: gens,
            next: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// True when secondary index `i`'s first column follows a pattern.
    pub fn drives_index(&self, i: usize) -> bool {
        self.index.get(i).is_some_and(|g| g.is_some())
    }

    /// Rows numbered so far.
    pub fn keys_used(&self) -> u64 {
        self.next.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Give the batch's rows the next key numbers' values: the PK (into
    /// [`Batch::transactionid`]) and each patterned index's first column.
    pub fn apply(&self, b: &mut Batch) {
        let n = b.len() as u64;
        let first = self.next.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        b.transactionid.clear();
        if let Some(g) = &self.pk {
            b.transactionid
                .extend((first..first + n).map(|i| g.key_at(i)));
        }
        for (i, g) in self.index.iter().enumerate() {
            let Some(g) = g else { continue };
            let col = match INDEXES[i].columns[0] {
                "productid" => &mut b.productid,
                "cashregisterid" => &mut b.cashregisterid,
                _ => &mut b.price,
            };
            for (k, v) in col.iter_mut().enumerate() {
                // within PATTERN_COLUMN_RANGE, so it fits
                *v = g.key_at(first + k as u64) as i32;
            }
        }
    }

    /// Where range queries on secondary index `i` start: the insert benchmark's start
    /// `start` in `[0, first_domain)` scaled to the pattern's key range when the index follows
    /// a pattern (its values are not in the insert benchmark's domain), else `start`.
    pub fn range_start(&self, i: usize, start: i64) -> i64 {
        if !self.drives_index(i) {
            return start;
        }
        let (lo, hi) = PATTERN_COLUMN_RANGE;
        lo + ((hi - lo) as i128 * start as i128 / INDEXES[i].first_domain as i128) as i64
    }
}

const BASE64_CHARS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// A deterministic generator of insert-benchmark rows and query arguments.
#[derive(Debug, Clone)]
pub struct RowGen {
    rng: Pcg64Mcg,
    data_min: usize,
    data_max: usize,
    ts_cached: i64,
}

impl RowGen {
    /// A generator seeded with `seed`; `data` lengths uniform in `[data_min, data_max]`.
    pub fn new(seed: u64, data_min: usize, data_max: usize) -> Self {
        RowGen {
            rng: Pcg64Mcg::seed_from_u64(seed),
            data_min,
            data_max: data_max.max(data_min),
            ts_cached: i64::MIN,
        }
    }

    /// Fill `b` with `n` new rows whose `dateandtime` is `ts_secs`.
    pub fn fill(&mut self, b: &mut Batch, n: usize, ts_secs: i64) {
        if ts_secs != self.ts_cached || b.ts_text.is_empty() {
            b.ts_text = format_ts(ts_secs);
            self.ts_cached = ts_secs;
        }
        b.ts_secs = ts_secs;
        b.cashregisterid.clear();
        b.customerid.clear();
        b.productid.clear();
        b.price.clear();
        b.data.clear();
        b.data_end.clear();
        for _ in 0..n {
            b.cashregisterid
                .push(self.rng.random_range(0..CASHREGISTER_DOMAIN) as i32);
            b.customerid
                .push(self.rng.random_range(0..CUSTOMER_DOMAIN) as i32);
            b.productid
                .push(self.rng.random_range(0..PRODUCT_DOMAIN) as i32);
            b.price.push(self.rng.random_range(0..PRICE_DOMAIN) as i32);
            self.push_data(&mut b.data);
            b.data_end.push(b.data.len());
        }
    }

    /// Append one `data` value: about half random base64 characters, the rest a constant
    /// filler, so the column is partly compressible like the insert benchmark's.
    fn push_data(&mut self, out: &mut String) {
        let len = self.rng.random_range(self.data_min..=self.data_max);
        let random = len.div_ceil(2);
        // SAFETY: only ASCII bytes (BASE64_CHARS and b'a') are appended, so `out` stays UTF-8.
        // Byte pushes instead of `String::push` (a UTF-8 encoding per character) take a
        // third off the client's instructions per row on the null target.
        let bytes = unsafe { out.as_mut_vec() };
        bytes.reserve(len);
        let mut left = random;
        while left > 0 {
            let k = left.min(10);
            let mut bits = self.rng.next_u64();
            // A range's map has a known length: one capacity check for the k bytes.
            bytes.extend((0..k).map(|_| {
                let c = BASE64_CHARS[(bits & 63) as usize];
                bits >>= 6;
                c
            }));
            left -= k;
        }
        bytes.resize(bytes.len() + (len - random), b'a');
    }

    /// A range query: which secondary index (among the first `n_indexes`) and the start value.
    pub fn range_query(&mut self, n_indexes: usize) -> (usize, i64) {
        let i = self.rng.random_range(0..n_indexes.max(1));
        (i, self.rng.random_range(0..INDEXES[i].first_domain))
    }

    /// `POINT_KEYS` PKs uniform in `[min, max]`.
    pub fn point_keys(&mut self, min: i64, max: i64, out: &mut [i64; POINT_KEYS]) {
        let hi = max.max(min);
        for k in out.iter_mut() {
            *k = self.rng.random_range(min..=hi);
        }
    }
}

/// `YYYY-MM-DD HH:MM:SS` in UTC.
pub fn format_ts(secs: i64) -> String {
    crate::dbms::timestamp_text(secs)
}

/// Derive the seed of one worker from the run's seed (shared below the workloads: a
/// several-process run's part derives its seeds with it too).
pub use crate::pattern::derive_seed;

/// One benchmark table and what ixbench knows of its contents.
pub struct TableState {
    /// SQL for it (shared with the workers' [`crate::workload::iibench::Statements`]).
    pub sql: std::sync::Arc<TableSql>,
    /// Rows it must hold: inserted − deleted, as counted by ixbench.
    pub expected_rows: std::sync::atomic::AtomicI64,
    /// Smallest PK not yet deleted (where the next delete starts).
    pub delete_from: std::sync::atomic::AtomicI64,
    /// Deletes that removed fewer rows than asked.
    pub short_deletes: std::sync::atomic::AtomicU64,
    /// Held by a deleter while it finds the PK range of its next delete and moves
    /// `delete_from` past it, so deleters of a shared table never claim the same rows.
    pub delete_claim: std::sync::Mutex<()>,
    /// Row changes (+ inserted, − deleted) of writes whose commit's outcome is unknown: the
    /// connection was lost (a cluster node died) after the write was sent. Not in
    /// `expected_rows`; [`crate::workload::iibench::steps::check_rows`] finds which of them committed from the row count.
    pub in_doubt: std::sync::Mutex<Vec<i64>>,
    /// Workers' connections to this table that were lost and made again on a surviving node
    /// (see [`crate::measure::failover`]); never reset (a step takes the difference).
    pub reconnects: std::sync::atomic::AtomicU64,
}

impl TableState {
    /// State for a table with `rows` rows whose smallest PK is `min_id`.
    pub fn new(sql: TableSql, rows: i64, min_id: i64) -> Self {
        TableState {
            sql: std::sync::Arc::new(sql),
            expected_rows: std::sync::atomic::AtomicI64::new(rows),
            delete_from: std::sync::atomic::AtomicI64::new(min_id),
            short_deletes: std::sync::atomic::AtomicU64::new(0),
            delete_claim: std::sync::Mutex::new(()),
            in_doubt: std::sync::Mutex::new(Vec::new()),
            reconnects: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Table name.
    pub fn name(&self) -> &str {
        &self.sql.table
    }
}

impl crate::workload::tables::CheckedTable for TableState {
    fn name(&self) -> &str {
        &self.sql.table
    }

    fn expected_rows(&self) -> i64 {
        self.expected_rows.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn reconnects(&self) -> u64 {
        self.reconnects.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn count_rows(&self, conn: &mut dyn Conn) -> Result<u64> {
        self.sql.count_rows(conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statements on every engine, byte for byte as they were (`testdata/iibench.sql`).
    #[test]
    fn sql_text_on_every_engine() {
        let got = crate::dbms::dialect::every_engine_text(|d| {
            let t = TableSql::new("pi1", d);
            let mut pk = TableSql::new("pi2", d);
            pk.explicit_pk = true;
            let mut lines = vec![t.create_table(), pk.create_table()];
            for i in 0..3 {
                lines.push(t.create_index(i));
                lines.push(t.range_query(i));
                lines.push(t.explain_range(i));
                lines.push(t.range_query_literal(i, 17));
            }
            let mut lit = String::new();
            for v in ["plain", "it's", "a\\b", "a'\\"] {
                d.push_text_literal(&mut lit, v);
                lit.push(' ');
            }
            lines.extend([
                t.insert(2),
                pk.insert(2),
                format!(
                    "rows per statement {} {}",
                    t.max_rows_per_statement(),
                    pk.max_rows_per_statement()
                ),
                t.point_query(),
                t.point_query_literal(&[1, 2]),
                t.count(),
                t.min_max(),
                t.nth_id_from(10),
                t.nth_id_literal(3, 10),
                t.delete_range(),
                t.delete_range_literal(5, 9),
                lit,
            ]);
            lines.join("\n")
        });
        assert_eq!(got, include_str!("../testdata/iibench.sql"));
    }

    fn sqlite_like() -> SqlDialect {
        crate::dbms::sqlite::dialect::sql_dialect()
    }

    #[test]
    fn rows_stay_in_their_domains() {
        let mut g = RowGen::new(7, 10, 20);
        let mut b = Batch::default();
        let mut seen_max = [0i32; 4];
        for _ in 0..200 {
            g.fill(&mut b, 100, 1_700_000_000);
            assert_eq!(b.len(), 100);
            for r in 0..b.len() {
                assert!((0..1_000).contains(&b.cashregisterid[r]));
                assert!((0..100_000).contains(&b.customerid[r]));
                assert!((0..10_000).contains(&b.productid[r]));
                assert!((0..500).contains(&b.price[r]));
                let d = b.data(r);
                assert!((10..=20).contains(&d.len()), "len {}", d.len());
                let random = d.len().div_ceil(2);
                assert!(d[random..].bytes().all(|c| c == b'a'));
                assert!(d.bytes().all(|c| BASE64_CHARS.contains(&c)));
                seen_max[0] = seen_max[0].max(b.cashregisterid[r]);
                seen_max[1] = seen_max[1].max(b.customerid[r]);
                seen_max[2] = seen_max[2].max(b.productid[r]);
                seen_max[3] = seen_max[3].max(b.price[r]);
            }
        }
        // 20000 draws reach the top of every domain's last percent
        assert!(seen_max[0] >= 990 && seen_max[1] >= 99_000);
        assert!(seen_max[2] >= 9_900 && seen_max[3] >= 495);
        assert_eq!(b.ts_text, "2023-11-14 22:13:20");
    }

    /// `data` is the same as the insert benchmark port always made it: half base64 from the
    /// generator's 64-bit words, 6 bits a character, 10 characters a word, then `a`s.
    #[test]
    fn data_values_are_the_documented_ones() {
        // Replay the draws of one fill by hand: short values (one word) and long ones (the
        // random half spans several words, and a word's last characters are cut).
        for (seed, dmin, dmax) in [(5, 3, 9), (6, 30, 61), (7, 1, 1)] {
            let mut b = Batch::default();
            let mut g = RowGen::new(seed, dmin, dmax);
            let mut rng = g.rng.clone();
            g.fill(&mut b, 3, 0);
            for r in 0..3 {
                let _ = rng.random_range(0..CASHREGISTER_DOMAIN);
                let _ = rng.random_range(0..CUSTOMER_DOMAIN);
                let _ = rng.random_range(0..PRODUCT_DOMAIN);
                let _ = rng.random_range(0..PRICE_DOMAIN);
                let len = rng.random_range(dmin..=dmax);
                let mut want = String::new();
                let mut bits = 0u64;
                for i in 0..len.div_ceil(2) {
                    if i % 10 == 0 {
                        bits = rng.next_u64();
                    }
                    want.push(BASE64_CHARS[(bits & 63) as usize] as char);
                    bits >>= 6;
                }
                while want.len() < len {
                    want.push('a');
                }
                assert_eq!(b.data(r), want, "seed {seed}, row {r}");
            }
        }
    }

    #[test]
    fn same_seed_same_rows_other_seed_other_rows() {
        let mut a = RowGen::new(42, 10, 20);
        let mut b = RowGen::new(42, 10, 20);
        let mut c = RowGen::new(43, 10, 20);
        let (mut ba, mut bb, mut bc) = (Batch::default(), Batch::default(), Batch::default());
        a.fill(&mut ba, 50, 0);
        b.fill(&mut bb, 50, 0);
        c.fill(&mut bc, 50, 0);
        assert_eq!(ba.data, bb.data);
        assert_eq!(ba.price, bb.price);
        assert_ne!(ba.data, bc.data);
        assert_ne!(derive_seed(1, &[0, 1]), derive_seed(1, &[1, 0]));
    }

    #[test]
    fn range_and_point_arguments() {
        let mut g = RowGen::new(1, 10, 20);
        let mut used = [0usize; 3];
        for _ in 0..3_000 {
            let (i, start) = g.range_query(3);
            assert!(start >= 0 && start < INDEXES[i].first_domain);
            used[i] += 1;
        }
        assert!(used.iter().all(|&n| n > 800), "{used:?}");
        for _ in 0..100 {
            assert_eq!(g.range_query(1).0, 0);
        }
        let mut keys = [0i64; POINT_KEYS];
        g.point_keys(100, 200, &mut keys);
        assert!(keys.iter().all(|k| (100..=200).contains(k)));
    }

    #[test]
    fn chunks_cover_the_batch() {
        let mut g = RowGen::new(1, 10, 20);
        let mut b = Batch::default();
        g.fill(&mut b, 7, 0);
        assert_eq!(
            b.chunks(3).collect::<Vec<_>>(),
            vec![(0, 3), (3, 6), (6, 7)]
        );
        assert_eq!(b.chunks(10).collect::<Vec<_>>(), vec![(0, 7)]);
        g.fill(&mut b, 0, 0);
        assert_eq!(b.chunks(3).count(), 0);
    }

    /// The null target stores nothing: the operations still bind and send their statements,
    /// and count the rows they were meant to touch.
    #[test]
    fn operations_on_the_null_target() {
        use crate::dbms::prelude::*;
        let db = crate::dbms::null::Null::new();
        let mut conn = db.connect().unwrap();
        let t = TableSql::new("ops", db.dialect());
        let mut st = Statements::new(Arc::new(t), db.stores_rows());
        let mut g = RowGen::new(1, 10, 20);
        let mut b = Batch::default();
        g.fill(&mut b, 100, 0);
        st.insert(conn.as_mut(), &b).unwrap();
        let d = st.delete_oldest(conn.as_mut(), 1, 100).unwrap();
        assert_eq!((d.rows, d.next_from), (100, 101));
        assert_eq!(st.range_query(conn.as_mut(), 2, 5).unwrap(), RANGE_LIMIT);
        assert_eq!(
            st.point_query(conn.as_mut(), &[1; POINT_KEYS]).unwrap(),
            POINT_KEYS
        );
        assert_eq!(st.prepared(), 5);
    }

    /// `--statements text`: the literal INSERT carries the same values the prepared one
    /// binds, each text value quoted so the DBMS reads it back unchanged.
    #[test]
    fn literal_sql_per_dialect() {
        let mut b = Batch::default();
        RowGen::new(1, 10, 20).fill(&mut b, 2, 1_700_000_000);
        b.data = "it's\\x".to_string();
        b.data_end = vec![4, 6];
        let d = sqlite_like();
        let mut out = String::new();
        TableSql::new("t", &d).insert_literal(&mut out, &b, 0, 2);
        let want = format!(
            "INSERT INTO t (dateandtime, cashregisterid, customerid, productid, price, data) VALUES \
             ('2023-11-14 22:13:20',{},{},{},{},'it''s'),('2023-11-14 22:13:20',{},{},{},{},'\\x')",
            b.cashregisterid[0], b.customerid[0], b.productid[0], b.price[0],
            b.cashregisterid[1], b.customerid[1], b.productid[1], b.price[1]
        );
        assert_eq!(out, want);
        let lit = |d: &SqlDialect, v: &str| {
            let mut s = String::new();
            d.push_text_literal(&mut s, v);
            s
        };
        assert_eq!(lit(&d, "a'b\\c"), "'a''b\\c'");
        let d = crate::dbms::postgres::dialect::sql_dialect();
        assert_eq!(lit(&d, "a'b"), "'a''b'");
        assert_eq!(lit(&d, "a'b\\c"), "E'a''b\\\\c'");
        let d = crate::dbms::mysql::dialect::sql_dialect("InnoDB", false);
        assert_eq!(lit(&d, "plain é"), "'plain é'");
        assert_eq!(lit(&d, "a'\\"), "X'61275C'");
        let t = TableSql::new("t", &d);
        assert_eq!(
            t.delete_range_literal(5, 9),
            "DELETE FROM t WHERE transactionid >= 5 AND transactionid <= 9"
        );
        assert!(t
            .range_query_literal(2, 17)
            .contains("WHERE price >= 17 ORDER BY"));
        assert!(t.point_query_literal(&[1, 2]).ends_with("IN (1,2)"));
        assert!(t
            .nth_id_literal(3, 10)
            .ends_with(">= 3 ORDER BY transactionid LIMIT 1 OFFSET 9"));
    }

    #[test]
    fn sql_text() {
        let s = TableSql::new("pi1", &sqlite_like());
        assert_eq!(
            s.create_index(0),
            "CREATE INDEX pi1_marketsegment ON pi1 (productid, customerid, price)"
        );
        assert_eq!(
            s.insert(2),
            "INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data) VALUES (?,?,?,?,?,?),(?,?,?,?,?,?)"
        );
        assert_eq!(
            s.range_query(2),
            "SELECT price, dateandtime, customerid FROM pi1 WHERE price >= ? ORDER BY price, dateandtime, customerid LIMIT 10"
        );
        let p = TableSql::new("pi2", &crate::dbms::postgres::dialect::sql_dialect());
        let m = TableSql::new(
            "pi2",
            &crate::dbms::mysql::dialect::sql_dialect("InnoDB", false),
        );
        assert!(p.insert(2).ends_with("($7,$8,$9,$10,$11,$12)"));
        assert!(p
            .range_query(1)
            .contains("FROM pi2 WHERE cashregisterid >= $1"));
        assert!(m
            .range_query(1)
            .contains("FROM pi2 FORCE INDEX (pi2_registersegment) WHERE cashregisterid >= ?"));
        assert!(p
            .point_query()
            .ends_with("IN ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)"));
        assert_eq!(s.max_rows_per_statement(), 5461);
    }

    /// The notes per DBMS, word for word (their DBMS parts come from the dialect).
    #[test]
    fn notes_per_dbms() {
        assert_eq!(
            notes("postgres"),
            vec![
                "PK: bigint identity with sequence CACHE 1000 per connection (as the insert \
                 benchmark's bigserial), so PKs have gaps where a connection ends",
                "inserts: one multi-row INSERT per commit, prepared once per connection, \
                 binary parameters (--statements text: literal SQL over the simple query \
                 protocol)",
                "plan check: EXPLAIN (ANALYZE, COSTS OFF) of the range query with the middle \
                 of the first column's domain as a literal; it must be an Index Only Scan on \
                 the index",
            ]
        );
        assert_eq!(
            notes("mysql"),
            vec![
                "inserts: one multi-row INSERT per commit, server-side prepared once per \
                 connection (--statements text: literal SQL over COM_QUERY)"
            ]
        );
        assert!(notes("sqlite").is_empty());
        assert!(notes("null").is_empty());
    }
}
