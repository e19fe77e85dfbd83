//! The null target: rows and queries are generated and measured but sent nowhere, so anyone can
//! see the client's own ceiling (BenchBase's `noop`, sysbench's empty event).

use anyhow::Result;

use super::{Conn, MaintAction, Sizes, Target, TargetInfo};
use crate::workload::iibench::{Batch, Dialect, Placeholder, TableSql, POINT_KEYS, RANGE_LIMIT};

/// A target that stores nothing.
pub struct Null {
    dialect: Dialect,
}

impl Null {
    /// The null target.
    pub fn new() -> Self {
        Null {
            dialect: Dialect {
                placeholder: Placeholder::Question,
                pk_column: "transactionid BIGINT PRIMARY KEY",
                datetime_type: "TIMESTAMP",
                int_type: "INT",
                data_type: "VARCHAR(4000)",
                table_options: String::new(),
                force_index: false,
                max_params: usize::MAX,
            },
        }
    }
}

impl Default for Null {
    fn default() -> Self {
        Self::new()
    }
}

impl Target for Null {
    fn kind(&self) -> &'static str {
        "null"
    }
    fn dialect(&self) -> &Dialect {
        &self.dialect
    }
    fn connect(&self) -> Result<Box<dyn Conn>> {
        Ok(Box::new(NullConn::default()))
    }
    fn info(&self, _conn: &mut dyn Conn) -> Result<TargetInfo> {
        Ok(TargetInfo {
            kind: "null".into(),
            location: "(nowhere)".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            engine: None,
            settings: Vec::new(),
            notes: vec![
                "null target: rows are generated and measured but not sent; figures are the client's own ceiling".into(),
            ],
        })
    }
    fn maintenance(&self, _conn: &mut dyn Conn, _tables: &[String]) -> Result<Vec<MaintAction>> {
        Ok(Vec::new())
    }
    fn sizes(&self, _conn: &mut dyn Conn, _tables: &[String], _detailed: bool) -> Result<Sizes> {
        Ok(Sizes::default())
    }
    fn plan_uses_index(&self, _plan: &str, _index: &str) -> bool {
        true
    }
    fn stores_rows(&self) -> bool {
        false
    }
}

/// A connection to nowhere; it keeps the bytes it was handed so the work cannot be optimized
/// away.
#[derive(Default)]
pub struct NullConn {
    sink: u64,
}

impl Conn for NullConn {
    fn execute(&mut self, _sql: &str) -> Result<()> {
        Ok(())
    }
    fn query_rows(&mut self, _sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        Ok(Vec::new())
    }
    fn insert(&mut self, _t: &TableSql, b: &Batch) -> Result<()> {
        // Touch every value the way a driver would when it encodes them.
        for r in 0..b.len() {
            self.sink = self.sink.wrapping_add(
                (b.cashregisterid[r] ^ b.customerid[r] ^ b.productid[r] ^ b.price[r]) as u64
                    + b.data(r).len() as u64,
            );
        }
        self.sink = self.sink.wrapping_add(b.ts_text.len() as u64);
        std::hint::black_box(self.sink);
        Ok(())
    }
    fn nth_id(&mut self, _t: &TableSql, from: i64, n: usize) -> Result<Option<i64>> {
        Ok(Some(from + n as i64 - 1))
    }
    fn delete_range(&mut self, _t: &TableSql, from: i64, upto: i64) -> Result<u64> {
        Ok(upto.saturating_sub(from).saturating_add(1).max(0) as u64)
    }
    fn range_query(&mut self, _t: &TableSql, _idx: usize, _start: i64) -> Result<usize> {
        Ok(RANGE_LIMIT)
    }
    fn point_query(&mut self, _t: &TableSql, keys: &[i64; POINT_KEYS]) -> Result<usize> {
        self.sink = self.sink.wrapping_add(keys[0] as u64);
        Ok(POINT_KEYS)
    }
    fn table_exists(&mut self, _table: &str) -> Result<bool> {
        Ok(false)
    }
    fn index_exists(&mut self, _table: &str, _index: &str) -> Result<bool> {
        Ok(true)
    }
    fn explain(&mut self, _t: &TableSql, _idx: usize) -> Result<String> {
        Ok("(null target: no plan)".into())
    }
    fn is_retryable(&self, _e: &anyhow::Error) -> bool {
        false
    }
}
