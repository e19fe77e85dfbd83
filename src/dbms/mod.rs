//! The DBMS drivers: one folder per DBMS behind two small traits.
//!
//! [`Dbms`] is the database as a whole (connect, version and settings, maintenance, sizes);
//! [`Conn`] is one worker's connection: statements prepared once and executed with typed
//! [`Value`] parameters (bound natively, binary where the protocol has it), transactions, and
//! plain text statements for administration. A DBMS describes how its SQL differs
//! ([`dialect::DbmsSql`], in its folder's `dialect.rs`: placeholders, type names, index hints,
//! parameter limit, the statements and catalog queries it writes its own way; with a target's
//! table options, its [`SqlDialect`]) and knows no workload: each workload (`src/workload/`) writes
//! its own SQL from that, and no code outside `src/dbms/` and `src/server/` branches on which
//! DBMS it talks to.
//!
//! [`Dbms`] is split by concern into [`Driver`], [`Admin`] and [`IndexLab`] (one file each).
//! The core is [`Driver`]'s `kind`, `dialect`, `connect` and `info` plus [`Conn`]; [`Admin`]
//! and [`IndexLab`] are optional capabilities whose every method has a default (unknown, or
//! "not supported by this DBMS" with its name). Index and schema-change DDL is written in one
//! place per engine, its [`ddl::DdlDialect`].
//!
//! Which DBMS a kind is, is said once, by its row in [`registry`] ([`registry::Kind`]: its
//! `--target` forms, how to open it, its dialects, its throwaway server, statistics, error
//! classes); nothing else matches on a kind's name. Adding a DBMS = one folder here
//! (`NAME/mod.rs`: [`Conn`], the core of [`Driver`], `impl Admin for X {}` and
//! `impl IndexLab for X {}` overriding what it can tell, and its row `KIND`; `dialect.rs`;
//! optionally `ddl.rs` and `stats.rs`); nothing outside its folder: build.rs finds the folder
//! by its `KIND` and writes its `pub mod` line and its place in [`KINDS`] (see
//! `docs/contributing.md`, "Adding a DBMS").
//!
//! One client per protocol: every PostgreSQL connection goes through [`pgwire`] and every
//! MySQL/MariaDB one through [`mywire`] (the workload's, cancel requests, DDL sessions, and
//! ixbench's own connections to the servers and clusters it starts, through [`session`]); the
//! crates below them are codecs (`postgres-protocol`, `mysql_common`). They, and the readers
//! of libpq's and MariaDB's settings ([`conninfo`], [`mycnf`]), stay here, shared by every
//! engine that speaks their protocol.

pub mod admin;
pub mod cluster;
pub mod conninfo;
pub mod ddl;
pub mod dialect;
pub mod driver;
pub mod errcode;
pub mod forward;
pub mod galera;
pub mod index_lab;
pub mod lock_watch;
pub mod mycnf;
pub mod mywire;
pub mod netio;
pub mod pgwire;
pub mod registry;
pub mod scan;
pub mod server_stats;
pub mod session;
pub mod sharded;
pub mod throwaway;
pub mod tls;

// The engine folders (`NAME/mod.rs` defining its row `pub static KIND`): their `pub mod`
// lines and `KINDS`, every kind's row, written by build.rs so adding an engine edits no list.
include!(concat!(env!("OUT_DIR"), "/dbms_engines.rs"));

pub use admin::Admin;
pub use driver::{ClientParams, Driver};
pub use index_lab::IndexLab;

/// The DBMS traits in one import, for code that calls their methods on a concrete driver
/// type (through `dyn Dbms` they need no import): `use crate::dbms::prelude::*`.
pub mod prelude {
    pub use super::{Admin, Conn, Dbms, Driver, IndexLab};
}

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::deadline::Since;

/// A self-check after a step or a build: what was checked, whether it passed, what was found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Check {
    /// What was checked (`rows`, `range_rows`, `plan`, ...).
    pub name: String,
    /// Passed?
    pub ok: bool,
    /// What was found.
    pub detail: String,
}

/// What a target reports about itself, stored with every run so runs can be compared.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct TargetInfo {
    /// `sqlite`, `postgres`, `mysql`, `null`.
    pub kind: String,
    /// Where it is, without any password (`/path/db.sqlite`, `postgres://u@host:5432/db`).
    pub location: String,
    /// Server or library version.
    pub version: String,
    /// Storage engine where the DBMS has several (`InnoDB`, `RocksDB`).
    pub engine: Option<String>,
    /// Settings in effect (name, value), as the DBMS reports them.
    pub settings: Vec<(String, String)>,
    /// Notes a reader of the results needs (e.g. that client CPU includes the engine).
    pub notes: Vec<String>,
    /// How ixbench's connections reach a server (TCP or Unix socket, TLS with its version and
    /// cipher, the log-in method), as the last connection opened before this was read found
    /// it; absent for embedded targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<netio::Transport>,
}

/// The measuring clock as a driver takes it, from a caller above it (`measure::clock::Figures`):
/// a driver that reports a time (a maintenance action's seconds, a quiet wait's) times it with
/// this and never reads the clock for a figure itself.
pub trait FigureClock {
    /// A stopwatch started now: each call of what it returns gives the seconds since.
    fn start(&self) -> Box<dyn Fn() -> f64>;
}

/// One timed part of a maintenance step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct MaintAction {
    /// What was done (`ANALYZE`, `wal_checkpoint(TRUNCATE)`, ...).
    pub action: String,
    /// Wall seconds.
    pub seconds: f64,
    /// What the DBMS reported, if anything.
    pub detail: String,
}

/// Sizes of the database and its objects, in bytes.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Sizes {
    /// Whole database (files of an embedded DB, or the database's size on a server).
    pub database_bytes: Option<u64>,
    /// Per table and index (name, bytes), where the DBMS can tell cheaply.
    pub objects: Vec<(String, u64)>,
    /// What the figures leave out and why (e.g. a memtable flush skipped on a server ixbench
    /// did not start).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What one look at the server found still busy from before (see [`Dbms::quiet_probe`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuietProbe {
    /// Background work pending or running now, one item each (`MyRocks compactions pending:
    /// 2`); empty when there is none.
    pub busy: Vec<String>,
    /// A cumulative counter of background work (bytes flushed or compacted, pages flushed):
    /// the server is quiet only when it stops moving. `None` when the target has none.
    pub activity: Option<i64>,
}

/// The wait before a measured step or build until the server was quiet.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct QuietWait {
    /// Before what (`step`, `build`, `after dropping a table left by an earlier run`).
    #[serde(default)]
    pub when: String,
    /// Wall seconds waited.
    pub seconds: f64,
    /// What was watched (`MyRocks pending compactions and flushes, ...`).
    pub watched: String,
    /// What was busy when the wait began (empty: it was quiet at once).
    pub busy_at_start: Vec<String>,
    /// What was still busy when the wait ended (non-empty only when it timed out).
    pub busy_at_end: Vec<String>,
    /// True when the background-work counter moved during the wait (flushes, compactions,
    /// page writes went on).
    pub background_writes: bool,
    /// True when the server's processes used more than [`QUIET_CPU_SHARE`] of a core over a
    /// [`QUIET_SETTLE`] window while ixbench sent nothing but its probes (a compaction or
    /// purge running: MyRocks shows no count of running compactions). Only for a server on
    /// this machine.
    #[serde(default)]
    pub server_cpu_busy: bool,
    /// True when the timeout ran out before the server was quiet.
    pub timed_out: bool,
    /// What ixbench did to make it quiet, if anything (SQLite: a WAL checkpoint).
    pub actions: Vec<String>,
}

/// How long the background-work counter must stand still for the server to count as quiet.
pub const QUIET_SETTLE: Duration = Duration::from_millis(500);

/// A server on this machine counts as quiet only when its processes use at most this share
/// of one core over a [`QUIET_SETTLE`] window (ixbench's own probes cost a few percent).
pub const QUIET_CPU_SHARE: f64 = 0.25;

/// How often [`wait_quiet`] looks at the server.
const QUIET_POLL: Duration = Duration::from_millis(100);

/// Wait, at most `timeout`, until `target` has no background work pending from before (see
/// [`Dbms::quiet_probe`]) and its background-work counter has not moved for
/// [`QUIET_SETTLE`], and, when `server_cpu` can read the server's cumulative CPU microseconds
/// (a server on this machine), its CPU over that window stayed under [`QUIET_CPU_SHARE`] of a
/// core. Read-only on servers: it only looks. Returns what it waited for and how long (timed
/// with `clock`); `None` when the target has nothing to wait for.
pub fn wait_quiet(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    tables: &[String],
    timeout: Duration,
    server_cpu: &dyn Fn() -> Option<u64>,
    clock: &dyn FigureClock,
) -> Result<Option<QuietWait>> {
    let secs = clock.start();
    let t0 = Since::start();
    let mut actions = target.prepare_quiet(conn, tables, clock)?;
    let Some(first) = target.quiet_probe(conn, tables)? else {
        if actions.is_empty() {
            return Ok(None);
        }
        return Ok(Some(QuietWait {
            seconds: secs(),
            watched: "nothing (no server)".into(),
            actions: std::mem::take(&mut actions),
            ..Default::default()
        }));
    };
    let mut w = QuietWait {
        watched: target.quiet_watched(),
        busy_at_start: first.busy.clone(),
        actions,
        ..Default::default()
    };
    let mut last = first.activity;
    let mut still_since = Since::start();
    let mut cpu_since = server_cpu();
    if cpu_since.is_some() {
        w.watched
            .push_str(", and the server's CPU (/proc) under 25% of a core for the same time");
    }
    let mut probe = first;
    loop {
        let window = still_since.so_far();
        let mut settled = probe.activity.is_none() || window >= QUIET_SETTLE;
        if settled && window >= QUIET_SETTLE {
            if let (Some(a), Some(b)) = (cpu_since, server_cpu()) {
                let share = b.saturating_sub(a) as f64 / 1e6 / window.as_secs_f64();
                if share > QUIET_CPU_SHARE {
                    // Busy: start a new window.
                    settled = false;
                    w.server_cpu_busy = true;
                    still_since.restart();
                    cpu_since = Some(b);
                }
            }
        }
        if probe.busy.is_empty() && settled {
            break;
        }
        if t0.so_far() >= timeout {
            w.timed_out = true;
            w.busy_at_end = probe.busy.clone();
            if probe.busy.is_empty() {
                w.busy_at_end.push(if w.server_cpu_busy {
                    "the server still busy (CPU or background writes)".into()
                } else {
                    "background writes still going on (counter moving)".into()
                });
            }
            break;
        }
        std::thread::sleep(QUIET_POLL);
        probe = target.quiet_probe(conn, tables)?.unwrap_or_default();
        if probe.activity != last {
            last = probe.activity;
            still_since.restart();
            cpu_since = server_cpu();
            w.background_writes = true;
        }
    }
    w.seconds = secs();
    Ok(Some(w))
}

/// A database to benchmark: everything a caller needs, as one trait object. It is the sum of
/// three traits, each in its own file: [`Driver`] (what the DBMS is and how to connect to it),
/// [`Admin`] (maintenance, sizes, counters, waiting for quiet) and [`IndexLab`] (index builds,
/// knobs, progress, validity). A DBMS implements the three (only [`Driver`]'s core has
/// required methods: the other two may be empty impls); `Dbms` comes with them. Code that
/// calls these methods on a concrete type (not through `dyn Dbms`) imports [`prelude`].
pub trait Dbms: Driver + Admin + IndexLab {}

impl<T: Driver + Admin + IndexLab + ?Sized> Dbms for T {}

/// A knob (a DBMS setting) and the values to sweep it over.
#[derive(Debug, Clone, PartialEq)]
pub struct KnobAxis {
    /// Knob name.
    pub name: String,
    /// Values, in order.
    pub values: Vec<String>,
}

/// `name=value name=value` of a point of the grid.
pub fn knob_label(point: &[(String, String)]) -> String {
    point
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How a knob can be changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KnobScope {
    /// Per session (`SET x = ...`, `PRAGMA`): applied on each build's connection.
    Session,
    /// Server-wide and dynamic (`SET GLOBAL`, `ALTER SYSTEM` + reload).
    Global,
    /// Only at server start: needs a server that ixbench started, restarted with the value.
    Restart,
}

/// Cumulative row counters kept by the DBMS.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct RowCounters {
    /// Rows inserted.
    pub inserted: u64,
    /// Rows deleted.
    pub deleted: u64,
}

/// How bind parameters are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholder {
    /// `?` (SQLite, MySQL).
    Question,
    /// `$1`, `$2`, ... (PostgreSQL).
    Dollar,
}

impl Placeholder {
    /// The `n`th placeholder (1-based): `?` or `$n`.
    pub fn nth(self, n: usize) -> String {
        match self {
            Placeholder::Question => "?".into(),
            Placeholder::Dollar => format!("${n}"),
        }
    }
}

/// A secondary index, as DDL writes it: a workload says which of its indexes it means with
/// these, so no DBMS knows any workload's indexes. The index lab, the create-index step and
/// `ixbench ddl` (as `dbms::ddl::IndexSpec`) all use this one type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IndexSpec {
    /// The table (empty in results written before `ixbench ddl` stored it).
    #[serde(default)]
    pub table: String,
    /// The index's name.
    pub name: String,
    /// Indexed columns, in order, as DDL writes each (`c`, `c(10)`, `c DESC`).
    pub columns: Vec<String>,
    /// A UNIQUE index?
    pub unique: bool,
}

impl IndexSpec {
    /// The indexed columns as a list (`a, b, c`).
    pub fn columns_sql(&self) -> String {
        self.columns.join(", ")
    }

    /// `CREATE [UNIQUE] INDEX name ON table (columns)`, as [`ddl::DdlDialect`] writes it.
    pub fn create_sql(&self) -> String {
        ddl::create_index(&self.table, self, false)
    }
}

/// The dialect of one opened target: its DBMS's [`dialect::DbmsSql`] (every fact of its SQL:
/// placeholders, type names, hints, limits, literals, the statements and catalog queries it
/// writes its own way) and the one thing that varies per target, its table options (the storage
/// engine chosen: ` ENGINE=InnoDB`, ` ENGINE=ROCKSDB`). Workloads build their statements from
/// it (see `src/workload/`) and ask it one way: `d.ph(1)`, `d.int_type()`, `d.table_options()`
/// (it derefs to its [`dialect::DbmsSql`], so a caller never picks between two descriptions).
#[derive(Debug, Clone, PartialEq)]
pub struct SqlDialect {
    /// The DBMS's SQL.
    sql: &'static dyn dialect::DbmsSql,
    /// Appended to CREATE TABLE (e.g. ` ENGINE=InnoDB`; empty where nothing is chosen).
    table_options: String,
}

impl SqlDialect {
    /// The dialect `sql` with `table_options` appended to every CREATE TABLE.
    pub fn new(sql: &'static dyn dialect::DbmsSql, table_options: String) -> Self {
        SqlDialect { sql, table_options }
    }

    /// The DBMS's SQL, for code that keeps it beyond this target's life.
    pub fn sql(&self) -> &'static dyn dialect::DbmsSql {
        self.sql
    }

    /// What follows a CREATE TABLE's column list on this target (e.g. ` ENGINE=InnoDB`).
    pub fn table_options(&self) -> &str {
        &self.table_options
    }
}

impl std::ops::Deref for SqlDialect {
    type Target = dyn dialect::DbmsSql;

    /// Every question but the table options goes to the DBMS's SQL: one place to ask.
    fn deref(&self) -> &Self::Target {
        self.sql
    }
}

/// How a DBMS reads a quoted text literal, so a value written into SQL text
/// ([`dialect::DbmsSql::push_text_literal`]) reaches the server unchanged whatever the
/// session's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextLiteral {
    /// Standard SQL: `'...'` with `'` doubled, backslash an ordinary character (SQLite).
    Standard,
    /// PostgreSQL: standard `'...'`; a value with a backslash as `E'...'` (backslash and quote
    /// escaped), which reads the same whether `standard_conforming_strings` is on or off.
    Postgres,
    /// MySQL/MariaDB: `'...'`; a value with a quote, backslash or NUL as a hex literal
    /// `X'...'`, which reads the same with or without `NO_BACKSLASH_ESCAPES` and `ANSI_QUOTES`.
    Mysql,
}

impl TextLiteral {
    /// Append `v` to `out` as a text literal of this kind, read back as exactly `v`.
    pub fn push(self, out: &mut String, v: &str) {
        let special = |c: char| c == '\'' || c == '\\' || c == '\0';
        match self {
            TextLiteral::Mysql if v.contains(special) => {
                out.push_str("X'");
                for b in v.bytes() {
                    const HEX: &[u8; 16] = b"0123456789ABCDEF";
                    out.push(HEX[(b >> 4) as usize] as char);
                    out.push(HEX[(b & 15) as usize] as char);
                }
                out.push('\'');
            }
            TextLiteral::Postgres if v.contains('\\') => {
                out.push_str("E'");
                for c in v.chars() {
                    match c {
                        '\'' => out.push_str("''"),
                        '\\' => out.push_str("\\\\"),
                        c => out.push(c),
                    }
                }
                out.push('\'');
            }
            _ => {
                out.push('\'');
                for c in v.chars() {
                    if c == '\'' {
                        out.push('\'');
                    }
                    out.push(c);
                }
                out.push('\'');
            }
        }
    }
}

/// A [`Value::Timestamp`] as SQL text, `YYYY-MM-DD HH:MM:SS` in UTC (for DBMSs that store
/// timestamps as text).
pub fn timestamp_text(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| "1970-01-01 00:00:00".to_string())
}

/// A bind parameter, borrowed from the caller's buffers: each driver encodes it straight into
/// its protocol (binary where the protocol has one), so a workload's hot path builds a slice of
/// these and never formats SQL or copies text first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// SQL NULL.
    Null,
    /// An integer, for any integer column type (range-checked where the column is narrower).
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// Text, for CHAR/VARCHAR/TEXT columns.
    Text(&'a str),
    /// A timestamp without time zone, as Unix seconds (UTC).
    Timestamp(i64),
}

/// A statement prepared on one connection (see [`Conn::prepare`]); valid only on the
/// connection that prepared it, for the connection's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stmt(pub u32);

/// Statement `st` of a connection's prepared list (SQL, handle): a free function so that the
/// connection's socket can be borrowed beside the list.
pub fn prepared_at<T>(list: &[(String, T)], st: Stmt) -> Result<&T> {
    list.get(st.0 as usize)
        .map(|(_, s)| s)
        .context("no such prepared statement")
}

/// `sql`'s statement when the connection prepared it before; `None` when it is to be prepared
/// now; an error when the connection holds [`MAX_PREPARED`] statements already.
pub fn already_prepared<T>(list: &[(String, T)], sql: &str) -> Result<Option<Stmt>> {
    if let Some(i) = list.iter().position(|(q, _)| q == sql) {
        return Ok(Some(Stmt(i as u32)));
    }
    if list.len() >= MAX_PREPARED {
        bail!("more than {MAX_PREPARED} prepared statements on one connection");
    }
    Ok(None)
}

/// The most statements one connection keeps prepared through [`Conn::prepare`]: workloads
/// prepare a fixed, small set when a worker connects (the OLTP workload up to 9 per table).
pub const MAX_PREPARED: usize = 512;

/// Whether a transaction will write: SQLite takes its write lock at BEGIN for writers (so two
/// writers never deadlock on a lock upgrade) and none for readers; servers ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnKind {
    /// Only reads.
    Read,
    /// Writes (and may read).
    Write,
}

/// One worker's connection.
pub trait Conn: Send {
    /// Prepare `sql` (placeholders in the DBMS's style, see [`Placeholder`]) on this connection
    /// and return its handle. Preparing the same text again returns the same handle. A
    /// connection keeps at most [`MAX_PREPARED`] statements.
    fn prepare(&mut self, sql: &str) -> Result<Stmt>;

    /// Execute a prepared statement that returns no rows; returns the rows it changed (0 on a
    /// DBMS that stores nothing, see [`Dbms::stores_rows`]).
    fn exec(&mut self, st: Stmt, params: &[Value]) -> Result<u64>;

    /// Run a prepared query and read every row and value as a client would; returns the
    /// number of rows (0 on a DBMS that stores nothing).
    fn query(&mut self, st: Stmt, params: &[Value]) -> Result<u64>;

    /// Run a prepared query and return the first column of its first row as an integer
    /// (`None` for no row or NULL; an error for a non-integer).
    fn query_int(&mut self, st: Stmt, params: &[Value]) -> Result<Option<i64>>;

    /// Start a transaction.
    fn begin(&mut self, kind: TxnKind) -> Result<()>;

    /// Commit the transaction.
    fn commit(&mut self) -> Result<()>;

    /// Roll the transaction back (no error when none is open).
    fn rollback(&mut self) -> Result<()>;

    /// Run a statement that returns no rows (DDL, SET, ...).
    fn execute(&mut self, sql: &str) -> Result<()>;

    /// Run a query without parameters and return every row as text (NULL = `None`).
    fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>>;

    /// Run literal SQL text that returns no rows the way a client without bind parameters
    /// sends it (PostgreSQL's simple query protocol, MySQL's COM_QUERY, SQLite: parsed anew each
    /// time), for `--statements text`; returns the rows it changed (0 on a DBMS that stores
    /// nothing).
    fn exec_text(&mut self, sql: &str) -> Result<u64> {
        let _ = sql;
        bail!("--statements text is not supported on this DBMS")
    }

    /// Run a literal query (see [`Conn::exec_text`]) and read every row and value as a client
    /// would; returns the number of rows (0 on a DBMS that stores nothing).
    fn query_text(&mut self, sql: &str) -> Result<u64> {
        let _ = sql;
        bail!("--statements text is not supported on this DBMS")
    }

    /// Whether the table exists.
    fn table_exists(&mut self, table: &str) -> Result<bool>;

    /// Whether the index exists on the table.
    fn index_exists(&mut self, table: &str, index: &str) -> Result<bool>;

    /// The plan of `sql` (a query without parameters), on one line, as the DBMS's EXPLAIN
    /// shows it (PostgreSQL runs it: `EXPLAIN ANALYZE`, so the plan shows heap fetches).
    fn explain(&mut self, sql: &str) -> Result<String>;

    /// Whether `e` is transient (busy, deadlock, serialization failure) so the operation should
    /// be retried and counted as a retry. A property of the error, not of the connection: the
    /// error classes of the kind whose driver raised it (its registry row's
    /// [`registry::ErrorClasses::retryable`], [`errcode::is_retryable`]).
    fn is_retryable(&self, e: &anyhow::Error) -> bool {
        errcode::is_retryable(e)
    }
}

/// Run `body` in one transaction of `kind`: COMMIT when it succeeds, ROLLBACK (keeping the
/// first error) when it or the COMMIT fails.
pub fn in_txn<T>(
    conn: &mut dyn Conn,
    kind: TxnKind,
    body: impl FnOnce(&mut dyn Conn) -> Result<T>,
) -> Result<T> {
    conn.begin(kind)?;
    match body(&mut *conn).and_then(|v| conn.commit().map(|_| v)) {
        Ok(v) => Ok(v),
        Err(e) => {
            let _ = conn.rollback();
            Err(e)
        }
    }
}

impl dyn Conn + '_ {
    /// The first column of the first row as an integer (`None` for NULL or no row).
    pub fn query_i64(&mut self, sql: &str) -> Result<Option<i64>> {
        let rows = self.query_rows(sql)?;
        let v = rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .flatten();
        v.map(|s| {
            s.trim()
                .parse::<i64>()
                .with_context(|| format!("not an integer: {s}"))
        })
        .transpose()
    }
}

/// Run `op`, retrying transient errors up to `max_retries` times; `on_retry` is called for each.
pub fn with_retries<T>(
    conn: &mut dyn Conn,
    max_retries: u32,
    mut on_retry: impl FnMut(),
    mut op: impl FnMut(&mut dyn Conn) -> Result<T>,
) -> Result<T> {
    let mut tries = 0;
    loop {
        match op(conn) {
            Ok(v) => return Ok(v),
            Err(e) if tries < max_retries && conn.is_retryable(&e) => {
                tries += 1;
                on_retry();
            }
            Err(e) => return Err(e),
        }
    }
}

/// Where and what to benchmark, as given on the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetSpec {
    /// `sqlite`, `null`, `postgres`, `mysql`.
    pub kind: String,
    /// For SQLite: the database file.
    pub path: Option<PathBuf>,
    /// For servers: the URL as given (may hold a password: never print it; see
    /// [`redact_url`]). `None` with kind `postgres`/`mysql`/`mariadb` means: start a throwaway
    /// local server.
    pub url: Option<String>,
}

/// The `--engine` value a storage engine's name stands for (`myrocks` -> `rocksdb`), for a
/// hint when one is given as a `--target`.
pub fn engine_of_name(name: &str) -> Option<&'static str> {
    match name.to_ascii_lowercase().as_str() {
        "myrocks" | "rocksdb" => Some("rocksdb"),
        "innodb" => Some("innodb"),
        _ => None,
    }
}

/// Refuse a target whose database is a file that does not exist (SQLite), for a command that
/// only uses what is there (`--reuse`, `--from-table`): opening it would create an empty
/// database in its place. `what` names the option (`--reuse`).
pub fn require_existing_database(target: &str, what: &str) -> Result<()> {
    // A cluster target (`galera`, ...) is not one plain target: nothing to check here.
    match TargetSpec::parse(target).ok().and_then(|s| s.path) {
        Some(p) if !p.exists() => bail!("{what}: the database {} does not exist", p.display()),
        _ => Ok(()),
    }
}

impl TargetSpec {
    /// Parse `--target`: `sqlite`, `sqlite:PATH`, `null`, `postgres://...`, a libpq `key=value`
    /// connection string, `mysql://...`, or a bare `postgres` / `mariadb` (a throwaway local
    /// server).
    pub fn parse(s: &str) -> Result<Self> {
        let spec = |kind: &registry::Kind, path: Option<PathBuf>, url: Option<String>| TargetSpec {
            kind: kind.name.into(),
            path,
            url,
        };
        let scheme = s.split_once("://").map(|(scheme, _)| scheme);
        if let Some(kind) = scheme.and_then(registry::by_scheme) {
            return Ok(spec(kind, None, Some(s.to_string())));
        }
        // A libpq connection string (`host=... dbname=... sslmode=require`, `service=name`).
        if conninfo::is_keyvalue(s) {
            if let Some(kind) = registry::KINDS.iter().find(|k| k.conninfo) {
                return Ok(spec(kind, None, Some(s.to_string())));
            }
        }
        let (word, rest) = match s.split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (s, None),
        };
        match registry::KINDS.iter().find(|k| k.words.contains(&word)) {
            Some(kind) if kind.path => Ok(spec(
                kind,
                rest.filter(|r| !r.is_empty()).map(PathBuf::from),
                None,
            )),
            Some(kind) if rest.is_none() => Ok(spec(kind, None, None)),
            _ => Err(registry::unknown_target(&redact_url(s))),
        }
    }

    /// True when a throwaway local server must be started for this target.
    pub fn needs_server(&self) -> bool {
        registry::find(&self.kind).is_some_and(|k| k.server.is_some()) && self.url.is_none()
    }
}

/// A server URL split at its user part: `SCHEME://[USER[:PASSWORD]@]REST`, all as given (not
/// percent-decoded).
///
/// A password may hold any character, even unencoded `@ : / ? #`: when the text before the
/// first `@` has a `:` (a password follows the user), the user part ends at the *last* `@`;
/// otherwise (no password) at the first. The user ends at the first `:` (a user name cannot
/// hold an unencoded `:`). So a `@` in the host, database or parameters must be written `%40`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UrlParts<'a> {
    /// What comes before `://` (e.g. `postgres`, or `--target=postgres` in a command line).
    pub scheme: &'a str,
    /// The user, when the URL has a user part.
    pub user: Option<&'a str>,
    /// The password, when the user part has a `:`.
    pub password: Option<&'a str>,
    /// Host, port, path and parameters.
    pub rest: &'a str,
}

/// Split `url` as [`UrlParts`] says; `None` when it has no `://`.
pub fn split_url(url: &str) -> Option<UrlParts<'_>> {
    let (scheme, after) = url.split_once("://")?;
    let first_at = after.find('@');
    let at = match first_at {
        Some(i) if after[..i].contains(':') => after.rfind('@'),
        other => other,
    };
    Some(match at {
        Some(i) => {
            let (auth, rest) = (&after[..i], &after[i + 1..]);
            let (user, password) = match auth.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (auth, None),
            };
            UrlParts {
                scheme,
                user: Some(user),
                password,
                rest,
            }
        }
        None => UrlParts {
            scheme,
            user: None,
            password: None,
            rest: after,
        },
    })
}

/// The URL with any password (`user:PASSWORD@`, `?password=`) replaced by `***`, for messages
/// and results. No part of a password is kept, whatever characters it holds (see
/// [`split_url`]).
pub fn redact_url(url: &str) -> String {
    let Some(parts) = split_url(url) else {
        return redact_password_params(url);
    };
    let rest = redact_password_params(parts.rest);
    match (parts.user, parts.password) {
        (Some(user), Some(_)) => format!("{}://{user}:***@{rest}", parts.scheme),
        (Some(user), None) => format!("{}://{user}@{rest}", parts.scheme),
        _ => format!("{}://{rest}", parts.scheme),
    }
}

/// [`redact_url`] applied to every word of a text that holds a URL (e.g. a command-line
/// error that echoes the value given). A word with a password is cut at its user part when
/// the password may hold a space: nothing after `user:` is kept up to the last `@` of the
/// text.
pub fn redact_text(text: &str) -> String {
    if !text.contains("://") {
        return redact_password_params(text);
    }
    // A password may hold spaces: treat everything from a URL's scheme to the text's last `@`
    // (then to the next space or quote) as one word.
    let stop = |c: char| c.is_whitespace() || c == '\'' || c == '"';
    let mut out = String::new();
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let start = rest[..pos].rfind(stop).map(|i| i + 1).unwrap_or(0);
        out.push_str(&redact_password_params(&rest[..start]));
        let after = pos + 3;
        // The URL's last `@` lies before the next URL of the text (an error message may list
        // `postgres://USER@HOST...` forms after the value it quotes: their `@` is not this
        // URL's, and taking it masked the message up to there).
        let window = rest[after..]
            .find("://")
            .map(|i| after + i)
            .unwrap_or(rest.len());
        let from = rest[after..window]
            .rfind('@')
            .map(|i| after + i)
            .unwrap_or(after);
        let end = rest[from..]
            .find(stop)
            .map(|i| from + i)
            .unwrap_or(rest.len());
        out.push_str(&redact_url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(&redact_password_params(rest));
    out
}

/// Percent-decode one part of a URL (user, password, database); an error says to encode a
/// raw `%`.
pub fn percent_decode(s: &str, what: &str) -> Result<String> {
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(s).collect();
    // A `%` not followed by two hex digits is kept as is by the decoder: refuse it, so a
    // password is never silently different from the one meant.
    let b = s.as_bytes();
    let bad = b.iter().enumerate().any(|(i, &c)| {
        c == b'%'
            && !(i + 2 < b.len() && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit())
    });
    if bad {
        bail!("the {what} has a % that is not percent-encoding: write % as %25");
    }
    String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("the {what} is not UTF-8 once percent-decoded"))
}

/// Percent-encode a user or password for a URL (everything but letters, digits and `-._~`).
pub fn percent_encode(s: &str) -> String {
    use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
    const KEEP: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    utf8_percent_encode(s, KEEP).to_string()
}

/// Replace the value of every `password=` key (URL query strings, connection strings such as
/// PostgreSQL's `primary_conninfo`) by `***`.
pub fn redact_password_params(s: &str) -> String {
    const KEY: &str = "password=";
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.to_ascii_lowercase().find(KEY) {
        let start = pos + KEY.len();
        out.push_str(&rest[..start]);
        out.push_str("***");
        let tail = &rest[start..];
        let end = match tail.strip_prefix('\'') {
            // a quoted conninfo value: up to its closing quote
            Some(q) => q.find('\'').map(|i| i + 2).unwrap_or(tail.len()),
            None => tail.find(['&', ' ', '\t']).unwrap_or(tail.len()),
        };
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The wire protocol a server speaks, as [`probe_protocol`] found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// MySQL / MariaDB: the server speaks first, with a handshake packet.
    Mysql,
    /// PostgreSQL: waits for the client; answers an SSLRequest with one byte `S` or `N`.
    Postgres,
}

impl Protocol {
    fn name(self) -> &'static str {
        match self {
            Protocol::Mysql => "the MySQL/MariaDB protocol",
            Protocol::Postgres => "the PostgreSQL protocol",
        }
    }

    fn scheme(self) -> &'static str {
        match self {
            Protocol::Mysql => "mysql://",
            Protocol::Postgres => "postgres://",
        }
    }
}

/// How long a MySQL server may take to send its greeting before the probe asks in
/// PostgreSQL's way (a MySQL server greets at once).
const GREETING_WAIT: std::time::Duration = std::time::Duration::from_millis(1000);

/// Check, before the driver connects, that the server at `host:port` answers within
/// `timeout` and speaks `want`: a MySQL server sends a handshake packet first, a PostgreSQL
/// server answers an SSLRequest with `S` or `N`. Fails with one line saying the server speaks
/// the other protocol, something else, or nothing within the timeout (a driver would wait
/// forever on a server that accepts and never answers). Nothing is sent to a MySQL server.
pub fn probe_protocol(
    host: &str,
    port: u16,
    want: Protocol,
    timeout: std::time::Duration,
) -> Result<()> {
    use std::io::{Read, Write};
    use std::net::{TcpStream, ToSocketAddrs};
    let t0 = crate::deadline::Since::start();
    let where_ = format!("{host}:{port}");
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<_> = (bare, port)
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {host}"))?
        .collect();
    let mut last_err = None;
    let mut stream = None;
    for a in &addrs {
        let left = t0.left_of(timeout).max(std::time::Duration::from_millis(1));
        match TcpStream::connect_timeout(a, left) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last_err = Some(e),
        }
    }
    let mut s = match stream {
        Some(s) => s,
        None => {
            let e = last_err
                .map(|e| e.to_string())
                .unwrap_or_else(|| "no address".into());
            let hint = if e.contains("refused") {
                " (is the server running and listening there?)"
            } else {
                ""
            };
            bail!("cannot connect to {where_}: {e}{hint}");
        }
    };
    let mut buf = [0u8; 64];
    let mut got = 0usize;
    let read_some =
        |s: &mut TcpStream, buf: &mut [u8], wait: std::time::Duration| -> Result<usize> {
            s.set_read_timeout(Some(wait.max(std::time::Duration::from_millis(1))))?;
            match s.read(buf) {
                Ok(n) => Ok(n),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    Ok(usize::MAX)
                }
                Err(e) => Err(e.into()),
            }
        };
    // A MySQL URL: wait a moment for the greeting before saying anything.
    if want == Protocol::Mysql {
        let wait = GREETING_WAIT.min(t0.left_of(timeout));
        match read_some(&mut s, &mut buf, wait)? {
            usize::MAX => {}
            0 => bail!("the server at {where_} closed the connection without a word (it does not speak {})", want.name()),
            n => got = n,
        }
    }
    if got == 0 {
        // PostgreSQL's SSLRequest: length 8, code 80877103.
        let _ = s.write_all(&[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
        match read_some(&mut s, &mut buf, t0.left_of(timeout))? {
            usize::MAX => bail!(
                "the server at {where_} accepted the connection but did not answer within {} s \
                 (see --connect-timeout)",
                timeout.as_secs_f64()
            ),
            0 => bail!("the server at {where_} closed the connection without a word (it does not speak {})", want.name()),
            n => got = n,
        }
    }
    let b = &buf[..got];
    let found = if got >= 5 && b[3] == 0 && (b[4] == 10 || b[4] == 0xff) {
        Some(Protocol::Mysql)
    } else if matches!(b[0], b'S' | b'N' | b'E') && (got == 1 || b[0] == b'E') {
        Some(Protocol::Postgres)
    } else {
        None
    };
    match found {
        Some(p) if p == want => Ok(()),
        Some(p) => bail!(
            "the server at {where_} speaks {}, not {} that the URL names: use a {} URL for it",
            p.name(),
            want.name(),
            p.scheme()
        ),
        None => bail!(
            "the server at {where_} does not speak {} (its first bytes are not a {} answer)",
            want.name(),
            want.name().trim_start_matches("the ")
        ),
    }
}

/// Run `connect` on a thread of its own and give up after `timeout`: drivers bound the TCP
/// connect, but not every one bounds the handshake after it, so a server that accepts and then
/// stops answering would hang the caller. On timeout the thread is left to end with its socket.
pub fn connect_within<T: Send + 'static>(
    timeout: std::time::Duration,
    connect: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("ixbench-connect".into())
        .spawn(move || {
            let _ = tx.send(connect());
        })
        .context("starting a connect thread")?;
    match rx.recv_timeout(timeout) {
        Ok(r) => r,
        Err(_) => bail!(
            "the server accepted the connection but its handshake got no answer within {:.0} s \
             (see --connect-timeout)",
            timeout.as_secs_f64()
        ),
    }
}

/// Options a target needs beyond its spec.
#[derive(Debug, Clone, Default)]
pub struct TargetOptions {
    /// MySQL-protocol storage engine for the benchmark tables: `innodb` or `rocksdb`.
    pub engine: Option<String>,
    /// SQLite PRAGMAs given with `--sqlite-pragma name=value`, applied after the defaults.
    pub sqlite_pragmas: Vec<(String, String)>,
    /// Where the SQLite file goes when the spec names none.
    pub default_sqlite_path: Option<PathBuf>,
    /// How long connecting (TCP and handshake) may take; `None`: 10 s.
    pub connect_timeout: Option<std::time::Duration>,
    /// ixbench may change the server's global state (SET GLOBAL, forced flushes, compactions,
    /// CHECKPOINT): true for a throwaway server ixbench started, or with
    /// `--allow-server-changes`. Otherwise those are skipped and the results say so.
    pub server_changes: bool,
}

/// Connect timeout when `--connect-timeout` is not given.
pub const DEFAULT_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Open the target a spec names.
pub fn open(spec: &TargetSpec, opts: &TargetOptions) -> Result<Box<dyn Dbms>> {
    match registry::find(&spec.kind) {
        Some(kind) => (kind.open)(spec, opts),
        None => bail!("unknown target {}", spec.kind),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        let s = TargetSpec::parse("sqlite:/tmp/x.db").unwrap();
        assert_eq!(
            (s.kind.as_str(), s.path.unwrap()),
            ("sqlite", PathBuf::from("/tmp/x.db"))
        );
        assert!(TargetSpec::parse("sqlite").unwrap().path.is_none());
        assert_eq!(TargetSpec::parse("null").unwrap().kind, "null");
        let p = TargetSpec::parse("postgres://u:pw@h:5/db").unwrap();
        assert_eq!(p.kind, "postgres");
        assert!(!p.needs_server());
        assert!(TargetSpec::parse("postgres").unwrap().needs_server());
        assert_eq!(TargetSpec::parse("mariadb").unwrap().kind, "mysql");
        assert_eq!(TargetSpec::parse("mysql://r@h/d").unwrap().kind, "mysql");
        for bad in ["oracle", "null:x", "postgres:x"] {
            assert!(TargetSpec::parse(bad).is_err(), "{bad}");
        }
        let e = TargetSpec::parse("pg://u:secret@h/db")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("secret"), "{e}");
    }

    #[test]
    fn redaction() {
        assert_eq!(
            redact_url("postgres://u:pw@h:5/db"),
            "postgres://u:***@h:5/db"
        );
        assert_eq!(redact_url("mysql://root@h/db"), "mysql://root@h/db");
        assert_eq!(redact_url("mysql://u:p@ss@h/db"), "mysql://u:***@h/db");
        assert_eq!(redact_url("/tmp/x"), "/tmp/x");
        assert_eq!(
            redact_url("postgres://u@h/db?sslmode=disable&password=pw&x=1"),
            "postgres://u@h/db?sslmode=disable&password=***&x=1"
        );
        assert_eq!(
            redact_url("--target=postgres://u:pw@h/db"),
            "--target=postgres://u:***@h/db"
        );
        assert_eq!(
            redact_password_params("host=h password='a b' user=u"),
            "host=h password=*** user=u"
        );
    }

    /// Passwords with every character that means something in a URL: no part of them may
    /// survive redaction, and the URL splits where the user meant.
    #[test]
    fn passwords_with_url_characters() {
        for pw in [
            "pw@rd", "p:w", "a/b", "x#y", "q?r=s", "@:/#?", "sp ace", "50%off", "end@",
        ] {
            for scheme in ["postgres", "mysql", "--target=postgres"] {
                let url = format!("{scheme}://bench:{pw}@db.example:5432/ixb");
                let parts = split_url(&url).unwrap();
                assert_eq!(parts.user, Some("bench"), "{url}");
                assert_eq!(parts.password, Some(pw), "{url}");
                assert_eq!(parts.rest, "db.example:5432/ixb", "{url}");
                let shown = redact_url(&url);
                assert_eq!(shown, format!("{scheme}://bench:***@db.example:5432/ixb"));
                let text = redact_text(&format!("invalid value '{url}' for '--rows': bad"));
                assert_eq!(
                    text,
                    format!("invalid value '{scheme}://bench:***@db.example:5432/ixb' for '--rows': bad")
                );
            }
        }
        // A later URL's `@` is not this one's: the message between them is kept.
        assert_eq!(
            redact_text(
                "unknown target \"http://127.0.0.1:5432/db\" (targets: sqlite, \
                 postgres://USER@HOST:PORT/DB, mysql://USER@HOST:PORT/DB)"
            ),
            "unknown target \"http://127.0.0.1:5432/db\" (targets: sqlite, \
             postgres://USER@HOST:PORT/DB, mysql://USER@HOST:PORT/DB)"
        );
        assert_eq!(
            redact_text("bad 'http://u:s3cret@h/db' (targets: postgres://USER@HOST/DB)"),
            "bad 'http://u:***@h/db' (targets: postgres://USER@HOST/DB)"
        );
        // No password: the first @ ends the user.
        let p = split_url("postgres://u@h/db?application_name=a@b").unwrap();
        assert_eq!(
            (p.user, p.password, p.rest),
            (Some("u"), None, "h/db?application_name=a@b")
        );
        assert_eq!(percent_decode("p%40ss%2F", "password").unwrap(), "p@ss/");
        let e = percent_decode("50%off", "password")
            .unwrap_err()
            .to_string();
        assert!(e.contains("%25") && !e.contains("off"), "{e}");
        assert_eq!(percent_encode("a@b:c/d#e f"), "a%40b%3Ac%2Fd%23e%20f");
    }
}
