//! The null target: rows and queries are generated and measured but sent nowhere, so anyone can
//! see the client's own ceiling (BenchBase's `noop`, sysbench's empty event).

pub mod dialect;

use anyhow::Result;

use super::registry::{Kind, NO_ERRORS};
use super::{Admin, Conn, Driver, IndexLab, SqlDialect, Stmt, TargetInfo, TxnKind, Value};

/// The null target's row in the registry of kinds ([`super::registry`]): only the core, no
/// server, no schema changes, no statistics, no errors of its own; its dialect is also that of
/// a kind no row names (`unknown`), since it sends nothing.
pub static KIND: Kind = Kind {
    name: "null",
    rank: 1,
    words: &["null"],
    path: false,
    schemes: &[],
    conninfo: false,
    shown: &["null"],
    shown_url: None,
    server: None,
    check_pragma: None,
    unknown: true,
    open: |_, _| Ok(Box::new(Null::new())),
    sql: &dialect::Null,
    ddl: None,
    stats: None,
    scan: None,
    session: None,
    errors: NO_ERRORS,
    sharding: None,
};

/// A target that stores nothing.
pub struct Null {
    dialect: SqlDialect,
}

impl Null {
    /// The null target.
    pub fn new() -> Self {
        Null {
            dialect: dialect::sql_dialect(),
        }
    }
}

impl Default for Null {
    fn default() -> Self {
        Self::new()
    }
}

impl Driver for Null {
    fn kind(&self) -> &'static str {
        KIND.name
    }
    fn dialect(&self) -> &SqlDialect {
        &self.dialect
    }
    fn connect(&self) -> Result<Box<dyn Conn>> {
        Ok(Box::new(NullConn::default()))
    }
    fn info(&self, _conn: &mut dyn Conn) -> Result<TargetInfo> {
        Ok(TargetInfo {
            kind: KIND.name.into(),
            location: "(nowhere)".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            engine: None,
            settings: Vec::new(),
            notes: vec![
                "null target: rows are generated and measured but not sent; figures are the client's own ceiling".into(),
            ],
            transport: None,
        })
    }
    fn stores_rows(&self) -> bool {
        false
    }
}

/// The null target implements only the core ([`Driver`]'s required methods and [`Conn`]):
/// administration and the index lab are the capabilities' defaults (figures unknown, "not
/// supported by this DBMS (null)"), which is what a new DBMS starts from.
impl Admin for Null {}

/// See [`Admin`]'s impl: the defaults only.
impl IndexLab for Null {}

/// A connection to nowhere; it keeps the bytes it was handed so the work cannot be optimized
/// away.
#[derive(Default)]
pub struct NullConn {
    sink: u64,
    prepared: Vec<String>,
}

impl NullConn {
    /// Take the parameters without encoding them: they exist in memory, built by the
    /// workload (ixbench's own cost, which the null target measures), but no driver turns them
    /// into bytes (a driver's cost, which the null target has none of). The
    /// slice goes through `black_box`, so building the values cannot be optimized away.
    fn touch(&mut self, st: Stmt, params: &[Value]) -> Result<()> {
        if st.0 as usize >= self.prepared.len() {
            anyhow::bail!("no such prepared statement");
        }
        std::hint::black_box(params);
        self.sink = self.sink.wrapping_add(params.len() as u64);
        std::hint::black_box(self.sink);
        Ok(())
    }
}

impl Conn for NullConn {
    fn prepare(&mut self, sql: &str) -> Result<Stmt> {
        let i = match self.prepared.iter().position(|q| q == sql) {
            Some(i) => i,
            None => {
                self.prepared.push(sql.to_string());
                self.prepared.len() - 1
            }
        };
        Ok(Stmt(i as u32))
    }
    fn exec(&mut self, st: Stmt, params: &[Value]) -> Result<u64> {
        self.touch(st, params)?;
        Ok(0)
    }
    fn query(&mut self, st: Stmt, params: &[Value]) -> Result<u64> {
        self.touch(st, params)?;
        Ok(0)
    }
    fn query_int(&mut self, st: Stmt, params: &[Value]) -> Result<Option<i64>> {
        self.touch(st, params)?;
        Ok(None)
    }
    fn begin(&mut self, _kind: TxnKind) -> Result<()> {
        Ok(())
    }
    fn commit(&mut self) -> Result<()> {
        Ok(())
    }
    fn rollback(&mut self) -> Result<()> {
        Ok(())
    }
    fn execute(&mut self, _sql: &str) -> Result<()> {
        Ok(())
    }
    fn query_rows(&mut self, _sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        Ok(Vec::new())
    }
    fn exec_text(&mut self, sql: &str) -> Result<u64> {
        std::hint::black_box(sql.len());
        Ok(0)
    }
    fn query_text(&mut self, sql: &str) -> Result<u64> {
        std::hint::black_box(sql.len());
        Ok(0)
    }
    fn table_exists(&mut self, _table: &str) -> Result<bool> {
        Ok(false)
    }
    fn index_exists(&mut self, _table: &str, _index: &str) -> Result<bool> {
        Ok(true)
    }
    fn explain(&mut self, _sql: &str) -> Result<String> {
        Ok("(null target: no plan)".into())
    }
}
