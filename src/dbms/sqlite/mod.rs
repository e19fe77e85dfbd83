//! SQLite, embedded (bundled by rusqlite): the zero-set-up default target.
//!
//! Settings are explicit and printed: WAL, `synchronous=NORMAL`, a 256 MiB page cache per
//! connection, temp tables in memory, a 10 s busy timeout (the inserter and the deleter are two
//! writers on one file). `--sqlite-pragma name=value` overrides or adds any of them. Because the
//! engine runs inside ixbench, the client CPU figures include the engine's work.

pub mod ddl;
pub mod dialect;
pub mod mem;

use std::ffi::{c_char, c_int, CStr};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use rusqlite::{ffi, Connection, ErrorCode, OpenFlags};

use super::ddl::{Algorithm, DdlDialect};
use super::registry::{DdlForms, ErrorClasses, Kind};
use super::{
    Admin, Conn, Dbms, Driver, IndexLab, IndexSpec, KnobScope, MaintAction, Sizes, SqlDialect,
    Stmt, TargetInfo, TargetOptions, TargetSpec, TxnKind, Value,
};
use crate::dbms::FigureClock;
use crate::deadline::Deadline;

/// PRAGMAs every connection gets before the user's `--sqlite-pragma` ones.
pub const DEFAULT_PRAGMAS: [(&str, &str); 6] = [
    ("journal_mode", "WAL"),
    ("synchronous", "NORMAL"),
    ("cache_size", "-262144"),
    ("temp_store", "MEMORY"),
    ("busy_timeout", "10000"),
    // The WAL bound (see WalBound): 64 MiB.
    ("journal_size_limit", "67108864"),
];

/// How long a bounding checkpoint keeps trying (the other writer's commit, its automatic
/// PASSIVE checkpoint, readers) before it gives up; it is tried again a few commits later.
const BOUND_CHECKPOINT_WAIT: Duration = Duration::from_millis(500);

/// The busy timeout of each try of a bounding checkpoint.
const BOUND_CHECKPOINT_TRY: Duration = Duration::from_millis(20);

/// Keeps the WAL bounded. SQLite's automatic checkpoints are PASSIVE: they copy pages back to
/// the database but cannot reset the WAL while another connection is in a transaction, and in
/// l.i1/l.i2 the inserter and the deleter take turns without a gap, so the WAL only grows
/// (6.5 GB for a 0.16 GB database). So after each commit a connection looks at the WAL file's
/// size and, beyond `journal_size_limit`, runs `PRAGMA wal_checkpoint(RESTART)`: it takes the
/// writer lock, copies the rest back, waits for the readers, and makes the next commit start
/// the WAL from its beginning, when SQLite truncates the file to `journal_size_limit`. A try
/// that finds the other connection committing or checkpointing is repeated for up to
/// [`BOUND_CHECKPOINT_WAIT`]. `journal_size_limit=-1` turns this off.
#[derive(Debug)]
pub struct WalBound {
    /// The `-wal` file.
    path: PathBuf,
    /// `journal_size_limit` in bytes, `None` when negative (no bound).
    limit: Option<u64>,
    /// Largest WAL file size seen after a commit since the last [`Admin::take_wal_peak`](super::Admin::take_wal_peak).
    peak: AtomicU64,
    /// Don't try again below this size after a checkpoint that could not restart the WAL.
    retry_above: AtomicU64,
    /// Checkpoints that restarted the WAL, and that could not.
    restarts: AtomicU64,
    busy: AtomicU64,
}

impl WalBound {
    fn size(&self) -> u64 {
        std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0)
    }

    /// Checkpoints that restarted the WAL and checkpoints that found it busy, so far.
    pub fn checkpoints(&self) -> (u64, u64) {
        (
            self.restarts.load(Ordering::Relaxed),
            self.busy.load(Ordering::Relaxed),
        )
    }
}

/// An SQLite database file.
pub struct Sqlite {
    path: PathBuf,
    pragmas: Vec<(String, String)>,
    dialect: SqlDialect,
    wal: Arc<WalBound>,
}

impl Sqlite {
    /// Use the database at `path` (created if missing; its directory must exist and be
    /// writable) with the default PRAGMAs followed by `extra`.
    pub fn open(path: PathBuf, extra: &[(String, String)]) -> Result<Self> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            bail!(
                "cannot create the SQLite database {}: directory {} does not exist",
                path.display(),
                dir.display()
            );
        }
        let mut pragmas: Vec<(String, String)> = DEFAULT_PRAGMAS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        for (k, v) in extra {
            validate_pragma(k, v)?;
            match pragmas.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(k)) {
                Some(p) => p.1 = v.clone(),
                None => pragmas.push((k.clone(), v.clone())),
            }
        }
        let limit = wal_limit_of(&pragmas);
        let mut wal_path = path.clone().into_os_string();
        wal_path.push("-wal");
        let wal = Arc::new(WalBound {
            path: PathBuf::from(wal_path),
            limit,
            peak: AtomicU64::new(0),
            retry_above: AtomicU64::new(limit.unwrap_or(u64::MAX)),
            restarts: AtomicU64::new(0),
            busy: AtomicU64::new(0),
        });
        let s = Sqlite {
            path,
            wal,
            pragmas,
            dialect: dialect::sql_dialect(),
        };
        // Fail now, with the path in the message, rather than in the first worker.
        s.connect_raw()
            .with_context(|| format!("cannot open the SQLite database {}", s.path.display()))?;
        Ok(s)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The WAL bound and its counters.
    pub fn wal_bound(&self) -> &WalBound {
        &self.wal
    }

    fn connect_raw(&self) -> Result<SqliteConn> {
        mem::use_process_allocator();
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        let busy_ms = self
            .pragmas
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("busy_timeout"))
            .and_then(|(_, v)| v.parse::<u64>().ok())
            .unwrap_or(0);
        // The busy timeout first: `journal_mode = WAL` takes the file's exclusive lock, and two
        // processes opening one new database at once (the parts of a several-process run)
        // otherwise fail at once with "database is locked" instead of waiting their turn.
        conn.busy_timeout(Duration::from_millis(busy_ms))?;
        for (k, v) in &self.pragmas {
            // PRAGMAs that report a value (journal_mode) return a row; read and drop it.
            conn.query_row(&format!("PRAGMA {k} = {v}"), [], |_| Ok(()))
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(()),
                    e => Err(e),
                })
                .with_context(|| format!("PRAGMA {k} = {v} failed"))?;
        }
        // Only BEGIN/COMMIT go through rusqlite's cache; workloads keep their statements.
        conn.set_prepared_statement_cache_capacity(4);
        Ok(SqliteConn {
            cell: ConnCell::new(conn, |_| Prepared::default()),
            ts: (i64::MIN, String::new()),
            wal: self.wal.clone(),
            busy_timeout: Duration::from_millis(busy_ms),
        })
    }
}

/// The WAL stays under this multiple of `journal_size_limit` (see [`disk_needed`]).
pub const WAL_BOUND_FACTOR: f64 = 1.5;

/// Bytes per row of the table (without `data`) and of each secondary index, measured with
/// `dbstat` after l.x on 200,000 rows (`--data-length 10..20`, default PRAGMAs): table 11.37 MB
/// (56.9 bytes/row, 15 of them `data`), marketsegment 17.4, registersegment 17.2, pdc 34.5
/// bytes/row.
const TABLE_BYTES_PER_ROW: f64 = 41.9;
const INDEX_BYTES_PER_ROW: [f64; 3] = [17.4, 17.2, 34.5];
/// The file grows by this factor once l.i1 has deleted and inserted (measured: 28.8 MB after
/// l.i1 against 25.2 MB of table and indexes after l.x).
const CHURN: f64 = 1.15;

/// The disk an SQLite run needs at most: `rows` rows at the measured bytes per row for
/// `secondary` indexes and `data` of `data_len` bytes, plus the WAL bound (`wal_limit` and half
/// as much again for the commits while a checkpoint waits: measured peak 86.2 MB for the
/// default 64 MiB limit in l.i1 on 200,000 rows); `None` without a WAL bound.
/// Returns (bytes, bytes per row).
pub fn disk_needed(
    rows: u64,
    secondary: usize,
    data_len: (usize, usize),
    wal_limit: Option<u64>,
) -> (Option<u64>, f64) {
    let per_row = (TABLE_BYTES_PER_ROW
        + (data_len.0 + data_len.1) as f64 / 2.0
        + INDEX_BYTES_PER_ROW.iter().take(secondary).sum::<f64>())
        * CHURN;
    let db = rows as f64 * per_row;
    let wal = wal_limit.map(|l| l as f64 * WAL_BOUND_FACTOR);
    (wal.map(|w| (db + w) as u64), per_row)
}

/// `journal_size_limit` of the run's settings in bytes, `None` when negative or absent.
pub fn wal_limit_of(settings: &[(String, String)]) -> Option<u64> {
    settings
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("journal_size_limit"))
        .and_then(|(_, v)| v.parse::<i64>().ok())
        .filter(|v| *v >= 0)
        .map(|v| v as u64)
}

/// Every row of `sql` on `conn`, each value as text (NULL = `None`).
pub(crate) fn rows_as_text(conn: &Connection, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
    let mut st = conn
        .prepare(sql)
        .with_context(|| format!("SQLite: {sql}"))?;
    let ncol = st.column_count();
    let mut rows = st.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut row = Vec::with_capacity(ncol);
        for i in 0..ncol {
            use rusqlite::types::ValueRef;
            row.push(match r.get_ref(i)? {
                ValueRef::Null => None,
                ValueRef::Integer(v) => Some(v.to_string()),
                ValueRef::Real(v) => Some(v.to_string()),
                ValueRef::Text(t) | ValueRef::Blob(t) => {
                    Some(String::from_utf8_lossy(t).into_owned())
                }
            });
        }
        out.push(row);
    }
    Ok(out)
}

/// The SQLite database `path` opened read-only, for reading a user's table: no PRAGMA, nothing
/// that could change the file.
pub(crate) fn open_read_only(path: &Path) -> Result<Connection> {
    if !path.is_file() {
        bail!("no SQLite database {}", path.display());
    }
    mem::use_process_allocator();
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("cannot open {} read-only", path.display()))
}

/// Call `each` with the first column of every row of `sql` as text (NULL = `None`), one row at
/// a time (a table of any size reads in constant memory).
pub(crate) fn each_row(
    conn: &Connection,
    sql: &str,
    each: &mut dyn FnMut(Option<&str>) -> Result<()>,
) -> Result<()> {
    let mut st = conn.prepare(sql).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut rows = st.query([]).map_err(|e| anyhow::anyhow!("{e}"))?;
    while let Some(r) = rows.next().map_err(|e| anyhow::anyhow!("{e}"))? {
        let v: Option<String> = r.get(0).map_err(|e| anyhow::anyhow!("{e}"))?;
        each(v.as_deref())?;
    }
    Ok(())
}

/// PRAGMA names and values are spliced into SQL text: allow only what PRAGMAs use.
pub fn validate_pragma(name: &str, value: &str) -> Result<()> {
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let val = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
    };
    if !ident(name) || !val(value) {
        bail!("invalid --sqlite-pragma {name}={value}: expected NAME=VALUE with letters, digits, _ - .");
    }
    // SQLite ignores a PRAGMA it does not know: a typo would run with the default, silently.
    let known = known_pragmas();
    if !known.is_empty() && !known.iter().any(|k| k.eq_ignore_ascii_case(name)) {
        let close = known
            .iter()
            .map(|k| {
                (
                    strsim::damerau_levenshtein(&name.to_ascii_lowercase(), k),
                    k,
                )
            })
            .filter(|(d, k)| *d <= 2.max(k.len() / 3))
            .min();
        let hint = close.map_or(String::new(), |(_, k)| format!("; did you mean {k}?"));
        bail!("--sqlite-pragma {name}={value}: SQLite has no PRAGMA {name}{hint}");
    }
    Ok(())
}

/// The PRAGMAs this SQLite knows (`PRAGMA pragma_list`), empty if it cannot list them.
fn known_pragmas() -> Vec<String> {
    // raw_query binds nothing: a second caller of rusqlite's parameter binding made the
    // compiler stop inlining it into the hot path's `bind_all` (+1.6% instructions per row).
    let list = || -> rusqlite::Result<Vec<String>> {
        mem::use_process_allocator();
        let c = Connection::open_in_memory()?;
        let mut st = c.prepare("PRAGMA pragma_list")?;
        let mut rows = st.raw_query();
        let mut names = Vec::new();
        while let Some(r) = rows.next()? {
            names.push(r.get::<_, String>(0)?);
        }
        Ok(names)
    };
    list().unwrap_or_default()
}

/// SQLite's row in the registry of kinds ([`super::registry`]).
pub static KIND: Kind = Kind {
    name: "sqlite",
    rank: 0,
    words: &["sqlite"],
    path: true,
    schemes: &[],
    conninfo: false,
    shown: &["sqlite", "sqlite:PATH"],
    shown_url: None,
    server: None,
    check_pragma: Some(validate_pragma),
    unknown: false,
    open: open_target,
    sql: &dialect::Sqlite,
    ddl: Some(DdlForms {
        dialect: |_, _| Box::new(ddl::Sqlite),
        full_version: |_, shown| shown.to_string(),
        distributed: |_| None,
        tools: None,
    }),
    stats: None,
    scan: Some(scan),
    session: None,
    errors: ErrorClasses {
        code: error_code,
        duplicate_key: is_duplicate_key,
        retryable: is_busy,
    },
    sharding: None,
};

/// Open the SQLite file `spec` names (or the default file of `opts`).
fn open_target(spec: &TargetSpec, opts: &TargetOptions) -> Result<Box<dyn Dbms>> {
    let path = spec
        .path
        .clone()
        .or_else(|| opts.default_sqlite_path.clone())
        .context("no SQLite database path")?;
    Ok(Box::new(Sqlite::open(path, &opts.sqlite_pragmas)?))
}

/// Read a user's table in the file `spec` names, opened read-only (no PRAGMA that would change
/// the file): see [`super::registry::ScanFn`].
fn scan(
    spec: &TargetSpec,
    select: &str,
    order: &mut dyn FnMut(&mut super::dialect::Query) -> Result<String>,
    each: &mut dyn FnMut(Option<&str>) -> Result<()>,
) -> Result<()> {
    let Some(path) = &spec.path else {
        bail!("--target sqlite needs a file: sqlite:PATH");
    };
    let db = open_read_only(path)?;
    let order = order(&mut |sql| rows_as_text(&db, sql))?;
    let sql = format!("SELECT {select} ORDER BY {order}");
    each_row(&db, &sql, each)
}

/// SQLite's code of an error (`sqlite:<code>`), when it is one of SQLite's.
fn error_code(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    e.downcast_ref::<rusqlite::Error>()
        .and_then(|r| r.sqlite_error_code())
        .map(|code| format!("sqlite:{code:?}"))
}

/// The database is busy or locked (another connection holds its lock): run it again.
fn is_busy(e: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        e.downcast_ref::<rusqlite::Error>()
            .and_then(|e| e.sqlite_error_code()),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked)
    )
}

/// A PRIMARY KEY or UNIQUE constraint failed.
fn is_duplicate_key(e: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        e.downcast_ref::<rusqlite::Error>(),
        Some(rusqlite::Error::SqliteFailure(f, _))
            if f.extended_code == ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                || f.extended_code == ffi::SQLITE_CONSTRAINT_UNIQUE
    )
}

impl Driver for Sqlite {
    fn kind(&self) -> &'static str {
        KIND.name
    }

    fn dialect(&self) -> &SqlDialect {
        &self.dialect
    }

    fn connect(&self) -> Result<Box<dyn Conn>> {
        Ok(Box::new(self.connect_raw()?))
    }

    fn info(&self, conn: &mut dyn Conn) -> Result<TargetInfo> {
        let mut settings = Vec::new();
        for (k, _) in &self.pragmas {
            let v = conn
                .query_rows(&format!("PRAGMA {k}"))?
                .into_iter()
                .next()
                .and_then(|r| r.into_iter().next().flatten())
                .unwrap_or_default();
            settings.push((k.clone(), v));
        }
        for k in ["page_size", "threads", "mmap_size", "wal_autocheckpoint"] {
            if !settings.iter().any(|(n, _)| n == k) {
                let v = conn
                    .query_rows(&format!("PRAGMA {k}"))?
                    .into_iter()
                    .next()
                    .and_then(|r| r.into_iter().next().flatten())
                    .unwrap_or_default();
                settings.push((k.to_string(), v));
            }
        }
        Ok(TargetInfo {
            kind: KIND.name.into(),
            location: self.path.display().to_string(),
            version: rusqlite::version().to_string(),
            engine: None,
            settings,
            notes: vec![
                "embedded: the client CPU figures include the SQLite engine's own work".into(),
            ],
            transport: None,
        })
    }

    fn embedded(&self) -> bool {
        true
    }
}

impl Admin for Sqlite {
    fn disk_note(
        &self,
        rows: u64,
        secondary: usize,
        data_len: (usize, usize),
        settings: &[(String, String)],
    ) -> Option<String> {
        let limit = wal_limit_of(settings);
        let (need, per_row) = disk_needed(rows, secondary, data_len, limit);
        let size = |b: f64| {
            if b >= 1e9 {
                format!("{:.2} GB", b / 1e9)
            } else {
                format!("{:.0} MB", (b / 1e6).ceil())
            }
        };
        let db = size(rows as f64 * per_row);
        Some(match (need, limit) {
            (Some(n), Some(l)) => format!(
                "disk: this run needs about {}: {rows} rows x {per_row:.0} bytes/row (measured) = \
                 {db} of database, and the WAL kept under {} (1.5 x journal_size_limit {l})",
                size(n as f64),
                size(l as f64 * WAL_BOUND_FACTOR)
            ),
            _ => format!(
                "disk: {db} of database ({rows} rows x {per_row:.0} bytes/row, measured) and an \
                 UNBOUNDED WAL (journal_size_limit < 0): l.i1/l.i2 can grow it to many times the \
                 database"
            ),
        })
    }

    /// The directory of the database file, as `PRAGMA database_list` names it.
    fn data_directory(&self, conn: &mut dyn Conn) -> Option<PathBuf> {
        let rows = conn.query_rows("PRAGMA database_list").ok()?;
        let file = rows.first()?.get(2)?.clone()?;
        Path::new(&file).parent().map(|p| p.to_path_buf())
    }

    fn maintenance(
        &self,
        conn: &mut dyn Conn,
        _tables: &[String],
        clock: &dyn FigureClock,
    ) -> Result<Vec<MaintAction>> {
        let t = clock.start();
        conn.execute("ANALYZE")?;
        let analyze = MaintAction {
            action: "ANALYZE".into(),
            seconds: t(),
            detail: String::new(),
        };
        let t = clock.start();
        let r = conn.query_rows("PRAGMA wal_checkpoint(TRUNCATE)")?;
        let cells: Vec<String> = r
            .first()
            .map(|row| row.iter().map(|c| c.clone().unwrap_or_default()).collect())
            .unwrap_or_default();
        let checkpoint = MaintAction {
            action: "PRAGMA wal_checkpoint(TRUNCATE)".into(),
            seconds: t(),
            detail: format!("busy,log,checkpointed = {}", cells.join(",")),
        };
        Ok(vec![analyze, checkpoint])
    }

    fn sizes(&self, conn: &mut dyn Conn, tables: &[String], detailed: bool) -> Result<Sizes> {
        let file = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        let mut s = Sizes {
            database_bytes: Some(file(&self.path) + file(Path::new(&wal))),
            objects: Vec::new(),
            notes: Vec::new(),
        };
        if detailed && !tables.is_empty() {
            // dbstat reads every page: only on request (after index builds, at the end).
            let rows = conn.query_rows(
                "SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table','index') ORDER BY name",
            )?;
            let ours: Vec<String> = rows
                .into_iter()
                .filter_map(
                    |r| match (r.first().cloned().flatten(), r.get(1).cloned().flatten()) {
                        (Some(n), Some(t)) if tables.contains(&t) => Some(n),
                        _ => None,
                    },
                )
                .collect();
            for name in ours {
                let bytes = conn
                    .query_i64(&format!(
                        "SELECT sum(pgsize) FROM dbstat WHERE name = '{}'",
                        name.replace('\'', "''")
                    ))?
                    .unwrap_or(0);
                s.objects.push((name, bytes.max(0) as u64));
            }
        }
        Ok(s)
    }

    fn wal_bytes(&self) -> Option<u64> {
        Some(self.wal.size())
    }

    fn wal_bound(&self) -> Option<u64> {
        self.wal.limit.map(|l| (l as f64 * WAL_BOUND_FACTOR) as u64)
    }

    fn take_wal_peak(&self) -> Option<u64> {
        let now = self.wal.size();
        Some(self.wal.peak.swap(now, Ordering::Relaxed).max(now))
    }

    /// A `PRAGMA wal_checkpoint(TRUNCATE)` so a step starts with an empty WAL rather than the
    /// last step's (the data is unchanged; only where it lives).
    fn prepare_quiet(
        &self,
        conn: &mut dyn Conn,
        _tables: &[String],
        clock: &dyn FigureClock,
    ) -> Result<Vec<String>> {
        let before = self.wal.size();
        let t = clock.start();
        let r = conn.query_rows("PRAGMA wal_checkpoint(TRUNCATE)")?;
        let busy = r
            .first()
            .and_then(|row| row.first().cloned().flatten())
            .unwrap_or_default();
        Ok(vec![format!(
            "PRAGMA wal_checkpoint(TRUNCATE): WAL {before} -> {} bytes in {:.3} s{}",
            self.wal.size(),
            t(),
            if busy == "1" {
                " (busy: not complete)"
            } else {
                ""
            }
        )])
    }
}

impl IndexLab for Sqlite {
    fn plan_uses_index(&self, plan: &str, index: &str) -> Option<bool> {
        Some(plan.contains(&format!("COVERING INDEX {index}")))
    }

    /// [`DdlDialect::add_indexes_sql`] (the one writer of index DDL): blocking only; several
    /// indexes in one transaction, one table scan each.
    fn index_build_plan(&self, idxs: &[IndexSpec], online: bool) -> Result<Vec<Vec<String>>> {
        let table = idxs.first().map(|i| i.table.as_str()).unwrap_or_default();
        Ok(vec![ddl::Sqlite.add_indexes_sql(
            table,
            idxs,
            online,
            Algorithm::Session,
        )?])
    }

    /// [`DdlDialect::drop_index_sql`]: `DROP INDEX IF EXISTS`.
    fn drop_index_sql(&self, idx: &IndexSpec) -> String {
        ddl::Sqlite.drop_index_sql(&idx.table, &idx.name, false)
    }

    fn knob_scope(&self, conn: &mut dyn Conn, name: &str) -> Result<KnobScope> {
        validate_pragma(name, "0")?;
        // SQLite ignores unknown PRAGMAs silently: a PRAGMA that reads back nothing is unknown.
        if conn.query_rows(&format!("PRAGMA {name}"))?.is_empty() {
            bail!("unknown SQLite knob {name}: PRAGMA {name} reports no value");
        }
        Ok(KnobScope::Session)
    }

    fn knob_value(&self, conn: &mut dyn Conn, name: &str) -> Result<String> {
        validate_pragma(name, "0")?;
        conn.query_rows(&format!("PRAGMA {name}"))?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten())
            .with_context(|| format!("unknown SQLite knob {name}"))
    }

    fn set_session_knob(&self, conn: &mut dyn Conn, name: &str, value: &str) -> Result<String> {
        validate_pragma(name, value)?;
        let _ = conn.query_rows(&format!("PRAGMA {name} = {value}"))?;
        let now = conn
            .query_rows(&format!("PRAGMA {name}"))?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten())
            .with_context(|| format!("unknown SQLite knob {name}"))?;
        // SQLite never says no: it coerces what it cannot use. A word that does not read back
        // as itself (or as its number, for the enum PRAGMAs) was refused.
        let upper = value.to_ascii_uppercase();
        let canonical = match (name.to_ascii_lowercase().as_str(), upper.as_str()) {
            ("temp_store", "DEFAULT") | ("synchronous", "OFF") => "0",
            ("temp_store", "FILE") | ("synchronous", "NORMAL") => "1",
            ("temp_store", "MEMORY") | ("synchronous", "FULL") => "2",
            ("synchronous", "EXTRA") => "3",
            _ => value,
        };
        if value.parse::<f64>().is_err() && !canonical.eq_ignore_ascii_case(&now) {
            bail!("SQLite refused {name}={value}: it reports {now}");
        }
        Ok(now)
    }

    fn rebuild_statements(&self, table: &str) -> Vec<(String, String)> {
        vec![
            ("REINDEX".into(), format!("REINDEX {table}")),
            ("VACUUM".into(), "VACUUM".into()),
        ]
    }
}

/// The statements a connection keeps prepared across commits: those prepared through
/// [`Conn::prepare`] (index = [`Stmt`]), with their SQL text.
#[derive(Default)]
pub struct Prepared<'conn> {
    stmts: Vec<(String, RawStmt<'conn>)>,
}

self_cell::self_cell!(
    /// A connection and the statements it keeps prepared across commits. (rusqlite's
    /// statement cache would clear all the statement's bindings each time it is returned, so
    /// SQLite would free and re-allocate every bound text value on each commit.)
    struct ConnCell {
        owner: Connection,
        #[covariant]
        dependent: Prepared,
    }
);

/// One SQLite connection.
pub struct SqliteConn {
    /// The connection and its prepared statements.
    cell: ConnCell,
    /// The database's WAL bound, shared by its connections.
    wal: Arc<WalBound>,
    /// The connection's `busy_timeout`, restored after a bounding checkpoint.
    busy_timeout: Duration,
    /// The last timestamp bound as text: (Unix seconds, text).
    ts: (i64, String),
}

// SAFETY: a `SqliteConn` owns its `Connection` (which is `Send`) and the statements prepared on
// it; a `RawStmt` is `!Send` (a raw pointer) and borrows the `!Sync` connection. Both move
// together, and nothing outside this struct refers to either, so after a move only the new
// thread can use them: exactly SQLite's multi-thread mode contract (one thread at a time per
// connection and its statements), which the connection is opened in (SQLITE_OPEN_NO_MUTEX).
unsafe impl Send for SqliteConn {}

/// A statement prepared on a connection with SQLite's C API (`sqlite3_prepare_v2` on
/// [`Connection::handle`]), finalized when dropped; the lifetime ties it to the connection, so
/// it cannot outlive it.
///
/// The per-statement path (bind, step, reset, read) calls SQLite's C functions from the
/// non-generic functions below, instead of rusqlite's `Statement`, whose binding is generic
/// (`raw_bind_parameter<T: ToSql>` over `bind_parameter<P: ToSql>`): whether the compiler
/// inlined those instances into the loop moved with its codegen-unit partitioning, by 1.5% of
/// l.i0's instructions per row, with no change of ours. Nothing generic is left on the path
/// (the error constructors are cold), so there is nothing whose instantiation can move.
/// Errors are rusqlite's (`Error::SqliteFailure` with the code and `sqlite3_errmsg`), as
/// rusqlite builds them, so callers ([`Conn::is_retryable`], [`super::errcode`]) see no change.
pub struct RawStmt<'conn> {
    ptr: NonNull<ffi::sqlite3_stmt>,
    db: *mut ffi::sqlite3,
    _conn: PhantomData<&'conn Connection>,
}

impl Drop for RawStmt<'_> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `sqlite3_prepare_v2` and is finalized only here, once; the
        // connection is still open (the lifetime). Bindings do not outlive a `Bound`, so
        // nothing dangles either way.
        unsafe { ffi::sqlite3_finalize(self.ptr.as_ptr()) };
    }
}

/// rusqlite's error for a failed SQLite call on `db`: the code and the connection's message.
#[cold]
#[inline(never)]
fn sqlite_error(db: *mut ffi::sqlite3, rc: c_int) -> rusqlite::Error {
    // SAFETY: `db` is an open connection (a `RawStmt`'s, alive as long as it); the message is
    // a NUL-terminated string SQLite owns until the next call on the connection, copied here.
    let msg = unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(db)) };
    rusqlite::Error::SqliteFailure(
        ffi::Error::new(rc),
        Some(String::from_utf8_lossy(msg.to_bytes()).into_owned()),
    )
}

/// A text too long for SQLite's `int` length, as rusqlite reports it.
#[cold]
#[inline(never)]
fn too_big() -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_TOOBIG), None)
}

/// The length of `s` as SQLite's `int`, or rusqlite's `SQLITE_TOOBIG` error.
fn c_len(s: &str) -> rusqlite::Result<c_int> {
    match c_int::try_from(s.len()) {
        Ok(n) if n < c_int::MAX => Ok(n),
        _ => Err(too_big()),
    }
}

impl<'conn> RawStmt<'conn> {
    /// Prepare `sql` (one statement) on `conn`.
    fn prepare(conn: &'conn Connection, sql: &str) -> Result<Self> {
        let len = c_len(sql)?;
        // SAFETY: the handle is `conn`'s open connection, used on this thread only (see
        // `SqliteConn`'s `Send`); rusqlite's own calls on it are not interleaved with ours.
        let db = unsafe { conn.handle() };
        let mut ptr = std::ptr::null_mut();
        // SAFETY: `sql` is valid for `len` bytes (no NUL terminator needed with a length);
        // `ptr` receives the statement or NULL.
        let rc = unsafe {
            ffi::sqlite3_prepare_v2(
                db,
                sql.as_ptr().cast::<c_char>(),
                len,
                &mut ptr,
                std::ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(sqlite_error(db, rc).into());
        }
        let Some(ptr) = NonNull::new(ptr) else {
            bail!("no SQL statement in {sql:?}");
        };
        Ok(RawStmt {
            ptr,
            db,
            _conn: PhantomData,
        })
    }

    /// Bind `params` (1-based), timestamps as `YYYY-MM-DD HH:MM:SS` text. The bindings last
    /// as long as the returned [`Bound`], which borrows `params`: their texts are bound
    /// `SQLITE_STATIC` (not copied), which SQLite allows while they stay valid, and the
    /// `Bound` clears every binding when dropped, so none outlives them. A timestamp's text is
    /// bound `SQLITE_TRANSIENT` (copied): it lives in `ts`, which the next timestamp parameter
    /// of the same statement may replace before the step.
    fn bind<'s, 'p>(
        &'s mut self,
        params: &'p [Value<'p>],
        ts: &mut (i64, String),
    ) -> Result<Bound<'s, 'p, 'conn>> {
        let p = self.ptr.as_ptr();
        // SAFETY: `p` is this live statement.
        let expected = unsafe { ffi::sqlite3_bind_parameter_count(p) } as usize;
        if expected != params.len() {
            bail!(
                "the statement has {expected} parameters, {} given",
                params.len()
            );
        }
        let bound = Bound {
            st: self,
            _params: PhantomData,
        };
        for (i, v) in params.iter().enumerate() {
            let col = i as c_int + 1;
            // SAFETY: `p` is live and `col` within its parameters (counted above). A text
            // bound STATIC is borrowed by `bound` (`'p`), which clears the binding when
            // dropped; a TRANSIENT one SQLite copies before returning.
            let rc = unsafe {
                match *v {
                    Value::Null => ffi::sqlite3_bind_null(p, col),
                    Value::Int(x) => ffi::sqlite3_bind_int64(p, col, x),
                    Value::Float(x) => ffi::sqlite3_bind_double(p, col, x),
                    Value::Text(x) => {
                        ffi::sqlite3_bind_text(p, col, text_ptr(x), c_len(x)?, ffi::SQLITE_STATIC())
                    }
                    Value::Timestamp(secs) => {
                        if ts.0 != secs || ts.1.is_empty() {
                            *ts = (secs, super::timestamp_text(secs));
                        }
                        ffi::sqlite3_bind_text(
                            p,
                            col,
                            text_ptr(&ts.1),
                            c_len(&ts.1)?,
                            ffi::SQLITE_TRANSIENT(),
                        )
                    }
                }
            };
            if rc != ffi::SQLITE_OK {
                return Err(sqlite_error(bound.st.db, rc).into());
            }
        }
        Ok(bound)
    }
}

/// Where a text starts for SQLite: an empty one points at a static NUL (as rusqlite does), not
/// at Rust's dangling pointer for an empty slice.
fn text_ptr(s: &str) -> *const c_char {
    if s.is_empty() {
        c"".as_ptr()
    } else {
        s.as_ptr().cast::<c_char>()
    }
}

/// A statement with its parameters bound (see [`RawStmt::bind`]), stepped through this. When
/// dropped, or by [`Bound::finish`], the statement is reset and its bindings cleared.
struct Bound<'s, 'p, 'conn> {
    st: &'s mut RawStmt<'conn>,
    _params: PhantomData<&'p [Value<'p>]>,
}

impl Drop for Bound<'_, '_, '_> {
    fn drop(&mut self) {
        // SAFETY: the statement is live; after this no binding refers to the parameters.
        unsafe {
            ffi::sqlite3_reset(self.st.ptr.as_ptr());
            ffi::sqlite3_clear_bindings(self.st.ptr.as_ptr());
        }
    }
}

impl Bound<'_, '_, '_> {
    /// One `sqlite3_step`: `Ok(true)` for a row, `Ok(false)` when done.
    fn step(&mut self) -> rusqlite::Result<bool> {
        // SAFETY: the statement is live and bound.
        match unsafe { ffi::sqlite3_step(self.st.ptr.as_ptr()) } {
            ffi::SQLITE_ROW => Ok(true),
            ffi::SQLITE_DONE => Ok(false),
            rc => Err(sqlite_error(self.st.db, rc)),
        }
    }

    /// Run a statement that returns no rows: the rows it changed (`sqlite3_changes64`, as
    /// rusqlite's `execute`). A statement that returns a row is an error, as in rusqlite.
    fn execute(mut self) -> rusqlite::Result<u64> {
        if self.step()? {
            return Err(rusqlite::Error::ExecuteReturnedResults);
        }
        // SAFETY: the connection is open; the statement halted, which set its changes.
        let n = unsafe { ffi::sqlite3_changes64(self.st.db) };
        let db = self.st.db;
        match self.finish() {
            ffi::SQLITE_OK => Ok(n as u64),
            rc => Err(sqlite_error(db, rc)),
        }
    }

    /// Reset the statement and clear its bindings: `sqlite3_reset`'s code.
    fn finish(self) -> c_int {
        let p = self.st.ptr.as_ptr();
        std::mem::forget(self);
        // SAFETY: the statement is live; after this no binding refers to the parameters.
        unsafe {
            let rc = ffi::sqlite3_reset(p);
            ffi::sqlite3_clear_bindings(p);
            rc
        }
    }

    /// Read every column of the current row as a client would (rusqlite's `get_ref`: the type,
    /// then the value, or a text's or blob's pointer and length).
    fn read_row(&self) {
        let p = self.st.ptr.as_ptr();
        // SAFETY: the statement is live and on a row; `i` is within its columns.
        unsafe {
            for i in 0..ffi::sqlite3_column_count(p) {
                match ffi::sqlite3_column_type(p, i) {
                    ffi::SQLITE_INTEGER => {
                        std::hint::black_box(ffi::sqlite3_column_int64(p, i));
                    }
                    ffi::SQLITE_FLOAT => {
                        std::hint::black_box(ffi::sqlite3_column_double(p, i));
                    }
                    ffi::SQLITE_TEXT => {
                        std::hint::black_box(ffi::sqlite3_column_text(p, i));
                        std::hint::black_box(ffi::sqlite3_column_bytes(p, i));
                    }
                    ffi::SQLITE_BLOB => {
                        std::hint::black_box(ffi::sqlite3_column_blob(p, i));
                        std::hint::black_box(ffi::sqlite3_column_bytes(p, i));
                    }
                    _ => {}
                }
            }
        }
    }

    /// The current row's first column as an integer, `None` for NULL; another type is
    /// rusqlite's `InvalidColumnType` error.
    fn first_int(&self) -> rusqlite::Result<Option<i64>> {
        let p = self.st.ptr.as_ptr();
        // SAFETY: the statement is live and on a row with at least one column (a query).
        unsafe {
            let ty = match ffi::sqlite3_column_type(p, 0) {
                ffi::SQLITE_INTEGER => return Ok(Some(ffi::sqlite3_column_int64(p, 0))),
                ffi::SQLITE_NULL => return Ok(None),
                ffi::SQLITE_FLOAT => rusqlite::types::Type::Real,
                ffi::SQLITE_TEXT => rusqlite::types::Type::Text,
                _ => rusqlite::types::Type::Blob,
            };
            let name = ffi::sqlite3_column_name(p, 0);
            let name = if name.is_null() {
                String::new()
            } else {
                CStr::from_ptr(name).to_string_lossy().into_owned()
            };
            Err(rusqlite::Error::InvalidColumnType(0, name, ty))
        }
    }
}

impl SqliteConn {
    fn conn(&self) -> &Connection {
        self.cell.borrow_owner()
    }

    /// After a commit: note the WAL's size and, beyond the bound, checkpoint it so the next
    /// commit restarts it (see [`WalBound`]). A checkpoint that fails or finds the database
    /// busy does not fail the commit; it is retried once the WAL has grown by another eighth
    /// of the bound.
    fn bound_wal(&mut self) {
        let w = self.wal.clone();
        let size = w.size();
        w.peak.fetch_max(size, Ordering::Relaxed);
        let Some(limit) = w.limit else {
            return;
        };
        if size <= limit.max(w.retry_above.load(Ordering::Relaxed)) {
            return;
        }
        let conn = self.conn();
        let _ = conn.busy_timeout(BOUND_CHECKPOINT_TRY);
        let deadline = Deadline::after(BOUND_CHECKPOINT_WAIT);
        let done = loop {
            // Busy (1) when another connection holds the checkpoint lock (its automatic
            // checkpoint after a commit) or the writer lock, or a reader stayed.
            let r: rusqlite::Result<i64> =
                conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |r| r.get(0));
            match r {
                Ok(0) => break true,
                Ok(_) if !deadline.expired() => std::thread::sleep(Duration::from_millis(1)),
                _ => break false,
            }
        };
        let _ = conn.busy_timeout(self.busy_timeout);
        if done {
            w.restarts.fetch_add(1, Ordering::Relaxed);
            w.retry_above.store(limit, Ordering::Relaxed);
        } else {
            w.busy.fetch_add(1, Ordering::Relaxed);
            w.retry_above
                .store(size.saturating_add(limit / 16), Ordering::Relaxed);
        }
    }
}

impl Conn for SqliteConn {
    fn prepare(&mut self, sql: &str) -> Result<Stmt> {
        if let Some(st) = super::already_prepared(&self.cell.borrow_dependent().stmts, sql)? {
            return Ok(st);
        }
        self.cell.with_dependent_mut(|owner, dep| -> Result<Stmt> {
            let st = RawStmt::prepare(owner, sql)
                .with_context(|| format!("SQLite: cannot prepare {sql}"))?;
            dep.stmts.push((sql.to_string(), st));
            Ok(Stmt(dep.stmts.len() as u32 - 1))
        })
    }

    fn exec(&mut self, st: Stmt, params: &[Value]) -> Result<u64> {
        let ts = &mut self.ts;
        let n = self.cell.with_dependent_mut(|_, dep| -> Result<u64> {
            let (_, s) = dep
                .stmts
                .get_mut(st.0 as usize)
                .context("no such prepared statement")?;
            Ok(s.bind(params, ts)?.execute()?)
        })?;
        if self.conn().is_autocommit() {
            self.bound_wal();
        }
        Ok(n)
    }

    fn query(&mut self, st: Stmt, params: &[Value]) -> Result<u64> {
        let ts = &mut self.ts;
        self.cell.with_dependent_mut(|_, dep| -> Result<u64> {
            let (_, s) = dep
                .stmts
                .get_mut(st.0 as usize)
                .context("no such prepared statement")?;
            let mut b = s.bind(params, ts)?;
            let mut n = 0;
            while b.step()? {
                b.read_row();
                n += 1;
            }
            Ok(n)
        })
    }

    fn query_int(&mut self, st: Stmt, params: &[Value]) -> Result<Option<i64>> {
        let ts = &mut self.ts;
        self.cell
            .with_dependent_mut(|_, dep| -> Result<Option<i64>> {
                let (_, s) = dep
                    .stmts
                    .get_mut(st.0 as usize)
                    .context("no such prepared statement")?;
                let mut b = s.bind(params, ts)?;
                Ok(if b.step()? { b.first_int()? } else { None })
            })
    }

    fn begin(&mut self, kind: TxnKind) -> Result<()> {
        let sql = match kind {
            TxnKind::Write => "BEGIN IMMEDIATE",
            TxnKind::Read => "BEGIN",
        };
        self.conn().prepare_cached(sql)?.execute([])?;
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        self.conn().prepare_cached("COMMIT")?.execute([])?;
        self.bound_wal();
        Ok(())
    }

    fn rollback(&mut self) -> Result<()> {
        if !self.conn().is_autocommit() {
            self.conn().execute_batch("ROLLBACK")?;
        }
        Ok(())
    }

    fn execute(&mut self, sql: &str) -> Result<()> {
        self.conn()
            .execute_batch(sql)
            .with_context(|| format!("SQLite: {sql}"))
    }

    fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        rows_as_text(self.conn(), sql)
    }

    /// SQLite has no wire protocol: literal SQL is parsed and planned anew on every call (no
    /// statement cache), which is what a client without bind parameters costs it.
    fn exec_text(&mut self, sql: &str) -> Result<u64> {
        let n = self.conn().execute(sql, [])?;
        if self.conn().is_autocommit() {
            self.bound_wal();
        }
        Ok(n as u64)
    }

    fn query_text(&mut self, sql: &str) -> Result<u64> {
        let mut st = self.conn().prepare(sql)?;
        let ncol = st.column_count();
        let mut rows = st.query([])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            for i in 0..ncol {
                std::hint::black_box(r.get_ref(i)?);
            }
            n += 1;
        }
        Ok(n)
    }

    fn table_exists(&mut self, table: &str) -> Result<bool> {
        let n: i64 = self.conn().query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    fn index_exists(&mut self, table: &str, index: &str) -> Result<bool> {
        let n: i64 = self.conn().query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = ?1 AND name = ?2",
            [table, index],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    /// `EXPLAIN QUERY PLAN`: the plan's `detail` lines joined with `; `.
    fn explain(&mut self, sql: &str) -> Result<String> {
        let sql = format!("EXPLAIN QUERY PLAN {sql}");
        let mut st = self
            .conn()
            .prepare(&sql)
            .with_context(|| format!("SQLite: {sql}"))?;
        let mut rows = st.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(r.get::<_, String>(3)?);
        }
        Ok(out.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection to a new database in `dir` with table `t` (id, n, f, s, a, b).
    fn conn_with_table(dir: &Path, extra: &[(String, String)]) -> (Sqlite, SqliteConn) {
        let db = Sqlite::open(dir.join("x.db"), extra).unwrap();
        let mut c = db.connect_raw().unwrap();
        c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INT, f REAL, s TEXT, a TEXT, b TEXT)")
            .unwrap();
        (db, c)
    }

    /// The statement's SQL with its bound values (`sqlite3_expanded_sql`).
    fn expanded(c: &SqliteConn, st: Stmt) -> String {
        let p = c.cell.borrow_dependent().stmts[st.0 as usize]
            .1
            .ptr
            .as_ptr();
        // SAFETY: a live statement; SQLite's string is copied, then freed with sqlite3_free.
        unsafe {
            let z = ffi::sqlite3_expanded_sql(p);
            let s = CStr::from_ptr(z).to_string_lossy().into_owned();
            ffi::sqlite3_free(z.cast());
            s
        }
    }

    /// The texts of a statement's parameters are bound without a copy, so no binding may stay
    /// once the call returns (the caller's strings are gone by then): after exec, query and
    /// query_int, on success and on error, every parameter is unbound (NULL).
    #[test]
    fn no_binding_outlives_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let (_db, mut c) = conn_with_table(dir.path(), &[]);
        let ins = c
            .prepare("INSERT INTO t (id, n, f, s, a) VALUES (?1, ?2, ?3, ?4, ?5)")
            .unwrap();
        let unbound = "INSERT INTO t (id, n, f, s, a) VALUES (NULL, NULL, NULL, NULL, NULL)";
        fn row(id: i64, s: &str) -> [Value<'_>; 5] {
            [
                Value::Int(id),
                Value::Int(7),
                Value::Float(0.5),
                Value::Text(s),
                Value::Timestamp(1_700_000_000),
            ]
        }
        let s = String::from("kept");
        assert_eq!(c.exec(ins, &row(1, &s)).unwrap(), 1);
        assert_eq!(expanded(&c, ins), unbound);
        // A duplicate key fails in the step.
        assert!(c.exec(ins, &row(1, &s)).is_err());
        assert_eq!(expanded(&c, ins), unbound);
        let sel = c.prepare("SELECT n FROM t WHERE s = ?1").unwrap();
        assert_eq!(c.query(sel, &[Value::Text(&s)]).unwrap(), 1);
        assert_eq!(expanded(&c, sel), "SELECT n FROM t WHERE s = NULL");
        assert_eq!(c.query_int(sel, &[Value::Text(&s)]).unwrap(), Some(7));
        assert_eq!(expanded(&c, sel), "SELECT n FROM t WHERE s = NULL");
        // An error while binding (a wrong count binds nothing; SQLite's own checks bind some).
        assert!(c.exec(ins, &[Value::Text(&s)]).is_err());
        assert_eq!(expanded(&c, ins), unbound);
    }

    /// Values arrive as bound, from texts dropped right after the call, and two different
    /// timestamps of one row each keep their own (the cached timestamp text changes between
    /// them, so it must be copied when bound).
    #[test]
    fn bound_values_are_stored_as_given() {
        let dir = tempfile::tempdir().unwrap();
        let (_db, mut c) = conn_with_table(dir.path(), &[]);
        let ins = c
            .prepare("INSERT INTO t (id, n, f, s, a, b) VALUES (?, ?, ?, ?, ?, ?)")
            .unwrap();
        for id in 1..=3i64 {
            let s = format!("text {id}");
            let n = c
                .exec(
                    ins,
                    &[
                        Value::Int(id),
                        if id == 2 {
                            Value::Null
                        } else {
                            Value::Int(-id)
                        },
                        Value::Float(id as f64 / 8.0),
                        Value::Text(if id == 3 { "" } else { &s }),
                        Value::Timestamp(86_400 * id),
                        Value::Timestamp(86_400 * id + 1),
                    ],
                )
                .unwrap();
            assert_eq!(n, 1);
            drop(s);
        }
        assert_eq!(
            c.query_rows("SELECT id, n, f, s, a, b FROM t ORDER BY id")
                .unwrap(),
            [
                [
                    "1",
                    "-1",
                    "0.125",
                    "text 1",
                    "1970-01-02 00:00:00",
                    "1970-01-02 00:00:01"
                ],
                [
                    "2",
                    "",
                    "0.25",
                    "text 2",
                    "1970-01-03 00:00:00",
                    "1970-01-03 00:00:01"
                ],
                [
                    "3",
                    "-3",
                    "0.375",
                    "",
                    "1970-01-04 00:00:00",
                    "1970-01-04 00:00:01"
                ],
            ]
            .map(|r| r
                .map(|v| (!v.is_empty() || r[0] == "3").then(|| v.to_string()))
                .to_vec())
        );
    }

    /// Errors are rusqlite's, as before: a duplicate key is one, a busy database is
    /// retryable, a statement that returns rows is not executed, a text is no integer.
    #[test]
    fn errors_keep_their_codes() {
        let dir = tempfile::tempdir().unwrap();
        let quick = [("busy_timeout".to_string(), "0".to_string())];
        let (db, mut c) = conn_with_table(dir.path(), &quick);
        let ins = c.prepare("INSERT INTO t (id, s) VALUES (?1, ?2)").unwrap();
        c.exec(ins, &[Value::Int(1), Value::Text("a")]).unwrap();
        let e = c.exec(ins, &[Value::Int(1), Value::Text("b")]).unwrap_err();
        assert!(super::super::errcode::is_duplicate_key(&e), "{e:#}");
        assert!(
            format!("{e:#}").contains("UNIQUE constraint failed: t.id"),
            "{e:#}"
        );
        assert!(!c.is_retryable(&e));

        let mut other = db.connect_raw().unwrap();
        other.begin(TxnKind::Write).unwrap();
        let e = c.exec(ins, &[Value::Int(2), Value::Text("c")]).unwrap_err();
        assert!(c.is_retryable(&e), "{e:#}");
        assert_eq!(super::super::errcode::error_code(&e), "sqlite:DatabaseBusy");
        other.rollback().unwrap();
        c.exec(ins, &[Value::Int(2), Value::Text("c")]).unwrap();

        let sel = c.prepare("SELECT id FROM t WHERE id = ?1").unwrap();
        let e = c.exec(sel, &[Value::Int(1)]).unwrap_err();
        assert!(
            matches!(
                e.downcast_ref::<rusqlite::Error>(),
                Some(rusqlite::Error::ExecuteReturnedResults)
            ),
            "{e:#}"
        );
        let text = c.prepare("SELECT s FROM t WHERE id = ?1").unwrap();
        let e = c.query_int(text, &[Value::Int(1)]).unwrap_err();
        assert!(
            matches!(
                e.downcast_ref::<rusqlite::Error>(),
                Some(rusqlite::Error::InvalidColumnType(0, name, rusqlite::types::Type::Text))
                    if name == "s"
            ),
            "{e:#}"
        );
        assert_eq!(c.query_int(text, &[Value::Int(9)]).unwrap(), None);
        let e = c.prepare("SELECT nope FROM t").unwrap_err();
        assert!(format!("{e:#}").contains("no such column: nope"), "{e:#}");
        assert!(c.prepare("-- nothing").is_err());
    }

    #[test]
    fn a_pragma_sqlite_does_not_know_is_refused() {
        assert!(known_pragmas().iter().any(|k| k == "cache_size"));
        validate_pragma("cache_size", "-1000").unwrap();
        validate_pragma("Synchronous", "OFF").unwrap();
        let e = validate_pragma("cache_sise", "100")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no PRAGMA cache_sise; did you mean cache_size?"),
            "{e}"
        );
        assert!(validate_pragma("no_such_thing_at_all", "1").is_err());
    }

    #[test]
    fn disk_needed_from_measured_bytes_per_row() {
        // 1M rows, 3 indexes, data 10..20: (41.9 + 15 + 69.1) x 1.15 = 144.9 bytes/row.
        let (need, per_row) = disk_needed(1_000_000, 3, (10, 20), Some(64 << 20));
        assert!((per_row - 144.9).abs() < 0.01, "{per_row}");
        let want = 1_000_000.0 * per_row + (64u64 << 20) as f64 * WAL_BOUND_FACTOR;
        assert_eq!(need, Some(want as u64));
        // No bound: no total.
        assert_eq!(disk_needed(10, 0, (10, 20), None).0, None);
        // Fewer indexes, fewer bytes.
        assert!(disk_needed(10, 0, (10, 20), None).1 < per_row);
    }

    #[test]
    fn wal_limit_from_settings() {
        let s = |v: &str| vec![("journal_size_limit".to_string(), v.to_string())];
        assert_eq!(wal_limit_of(&s("67108864")), Some(67_108_864));
        assert_eq!(wal_limit_of(&s("-1")), None);
        assert_eq!(wal_limit_of(&[]), None);
    }
}
