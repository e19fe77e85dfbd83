//! Schema changes under load (`ixbench ddl`): per engine, the statements of an ADD INDEX (online
//! where the engine can, blocking otherwise), DROP INDEX, ADD COLUMN and a table rebuild, the
//! lock each takes in words, how to find and cancel the DDL's session, what it waits for, and
//! how to check the result (count through the new index = count through the table in one
//! snapshot, PostgreSQL `indisvalid`, `CHECK TABLE`, the index in a plan).
//!
//! Each engine's dialect is a `ddl.rs` in its folder (`postgres/ddl.rs`, `mysql/ddl.rs`,
//! `sqlite/ddl.rs`); what is shared by all of them is here. A [`DdlDialect`] is chosen by the
//! kind's row (its `ddl` forms) from its version string and storage engine ([`crate::dbms::registry::ddl_dialect`]),
//! so engines that speak another engine's protocol (TiDB speaks MySQL's; CockroachDB and
//! YugabyteDB speak PostgreSQL's, in `distributed.rs`) get their own dialect without touching
//! the drivers. Progress comes from the driver's [`crate::dbms::Dbms::build_progress`] (the index
//! lab's), plus [`DdlDialect::waits`] for lock waits.

pub mod distributed;
pub mod tools;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::dbms::Check;
use crate::dbms::Conn;

/// What schema change to run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum DdlKind {
    /// Add one or several secondary indexes.
    AddIndex,
    /// Drop one or several secondary indexes (created, untimed, before the load starts).
    DropIndex,
    /// Add a nullable column.
    AddColumn,
    /// Rebuild the table (and its indexes).
    Rebuild,
}

impl DdlKind {
    /// As `--ddl` takes it.
    pub fn name(self) -> &'static str {
        match self {
            DdlKind::AddIndex => "add-index",
            DdlKind::DropIndex => "drop-index",
            DdlKind::AddColumn => "add-column",
            DdlKind::Rebuild => "rebuild",
        }
    }
}

/// Online (the engine's non-blocking form) or blocking.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum LockChoice {
    /// CREATE INDEX CONCURRENTLY, ALGORITHM=INPLACE/INSTANT with LOCK=NONE.
    Online,
    /// Plain CREATE INDEX, LOCK=SHARED, a table copy.
    Blocking,
}

/// One index to add or drop: the DBMS layer's [`crate::dbms::IndexSpec`] (its `table` is the
/// request's table).
pub use crate::dbms::IndexSpec;

/// The schema change asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DdlRequest {
    /// What.
    pub kind: DdlKind,
    /// Online or blocking.
    pub lock: LockChoice,
    /// The table (one ixbench created).
    pub table: String,
    /// Its primary-key column.
    pub pk: String,
    /// Indexes to add or drop (add-index, drop-index).
    pub indexes: Vec<IndexSpec>,
    /// The column to add (add-column).
    pub column: String,
}

/// How a dialect runs a [`DdlRequest`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DdlPlan {
    /// Statements run before the load starts, untimed (the indexes a DROP INDEX drops).
    pub setup: Vec<String>,
    /// The DDL: run in order on its own session while the load goes on; timed.
    pub statements: Vec<String>,
    /// Statements that bring the table back after a grid point (drop the index just built,
    /// the column just added), so the next point starts from the same table.
    pub undo: Vec<String>,
    /// True when the statements let writes go on (reads always go on, except where `lock`
    /// says otherwise).
    pub online: bool,
    /// The lock the DDL takes, in words (printed and stored).
    pub lock: String,
    /// What the reader should know: why an online build was not possible, what the engine
    /// does instead.
    pub notes: Vec<String>,
}

/// One look at what the DDL's session waits for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Waits {
    /// What the DDL waits for now (`Lock relation ShareLock`, `Waiting for table metadata
    /// lock`, `older transactions (virtualxid)`), with how long the server says it has been
    /// waiting, seconds, when it says.
    pub ddl_waits: Option<(String, Option<f64>)>,
    /// Other sessions waiting behind the DDL (blocked by its lock), and the longest wait.
    pub blocked_sessions: u32,
    /// The longest wait of those sessions, seconds, when the server says.
    pub blocked_max_secs: Option<f64>,
}

impl Waits {
    /// One line for the timeline (empty when nothing waits).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some((what, secs)) = &self.ddl_waits {
            parts.push(match secs {
                Some(s) => format!("DDL waits for {what} ({s:.0} s)"),
                None => format!("DDL waits for {what}"),
            });
        }
        if self.blocked_sessions > 0 {
            parts.push(match self.blocked_max_secs {
                Some(s) => format!(
                    "{} sessions wait behind the DDL (longest {s:.0} s)",
                    self.blocked_sessions
                ),
                None => format!("{} sessions wait behind the DDL", self.blocked_sessions),
            });
        }
        parts.join("; ")
    }
}

/// Whether an ADD INDEX names its algorithm (MySQL's `ALGORITHM=`; the other engines have no
/// such clause and ignore it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// No clause: the session's `alter_algorithm` (MariaDB) chooses, and at its default the
    /// server takes the fastest the engine supports; so the index lab's `--knob
    /// alter_algorithm=...` works.
    Session,
    /// `ALGORITHM=INPLACE`: the statement fails rather than copy the table whatever the
    /// session says (`ixbench ddl`, which measures the in-place build it names).
    InPlace,
}

/// An engine's schema-change dialect: the one writer of index DDL. [`DdlDialect::plan`]
/// (`ixbench ddl`), the index lab's build plans and the create-index step
/// ([`crate::dbms::IndexLab::index_build_plan`] and [`crate::dbms::IndexLab::drop_index_sql`]
/// of each driver) all take their CREATE/ADD INDEX and DROP INDEX statements from
/// [`DdlDialect::add_indexes_sql`] and [`DdlDialect::drop_index_sql`].
pub trait DdlDialect: Send + Sync {
    /// Its name in the output (`PostgreSQL`, `MariaDB InnoDB`, `MyRocks`, `SQLite`, `TiDB`).
    fn name(&self) -> &'static str;

    /// The statements of `req`, the lock they take and what the reader should know. An error
    /// when the engine cannot do it at all.
    fn plan(&self, req: &DdlRequest) -> Result<DdlPlan>;

    /// A query returning the session's id, to cancel it and find its waits (`None`: the
    /// engine has no such id, e.g. SQLite).
    fn session_id_sql(&self) -> Option<&'static str> {
        None
    }

    /// The statement that cancels the statement running in session `id`.
    fn cancel_sql(&self, _id: i64) -> Option<String> {
        None
    }

    /// What session `id` (the DDL) waits for now and who waits behind it.
    fn waits(&self, _conn: &mut dyn Conn, _id: i64) -> Result<Waits> {
        Ok(Waits::default())
    }

    /// Whether a failed DDL is worth running again (lock wait timeout, deadlock, an online
    /// row log that overflowed), as opposed to one that will fail again (duplicate key).
    fn ddl_retryable(&self, e: &anyhow::Error) -> bool;

    /// How the engine's index builds run where a reader of the index lab's results could not
    /// guess it (MyRocks: `MyRocks: ADD INDEX blocks writes (LOCK=SHARED; it refuses LOCK=NONE),
    /// so the online index builds are LOCK=SHARED too; several indexes in one ALTER take one
    /// table scan each`); `None` for the others.
    fn index_build_note(&self) -> Option<&'static str> {
        None
    }

    /// The statement that sets a server-wide knob without a restart when the engine has knobs
    /// the DDL reads from the server (TiDB's `SET GLOBAL tidb_ddl_reorg_*`); `None`: the index
    /// lab's scopes apply (session knobs on the DDL's session, global and restart knobs by
    /// restarting a server ixbench started).
    fn global_knob_sql(&self, _name: &str, _value: &str) -> Option<String> {
        None
    }

    /// The engine's own DDL progress where the driver's progress view has none (TiDB:
    /// `ADMIN SHOW DDL JOBS`).
    fn progress_sql(&self) -> Option<&'static str> {
        None
    }

    /// Indexes left INVALID on `table` by a failed online build (PostgreSQL), to report and
    /// drop; empty where an engine has no such thing.
    fn invalid_indexes(&self, _conn: &mut dyn Conn, _table: &str) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    /// The statements that add secondary indexes `idxs` to `table`, run in order on one
    /// session: one statement per index where the engine has no several-index statement, one
    /// `ALTER TABLE ... ADD INDEX a, ADD INDEX b` where it has. `online`: the engine's
    /// non-blocking form, or its nearest (MyRocks: `LOCK=SHARED`, see
    /// [`DdlDialect::index_build_note`]); an error where the engine has none at all. By default
    /// plain `CREATE [UNIQUE] INDEX` per index, blocking only.
    fn add_indexes_sql(
        &self,
        table: &str,
        idxs: &[IndexSpec],
        online: bool,
        _algorithm: Algorithm,
    ) -> Result<Vec<String>> {
        if online {
            bail!("{} has no online (non-blocking) index build", self.name());
        }
        Ok(idxs.iter().map(|i| create_index(table, i, false)).collect())
    }

    /// The statement that drops index `index` of `table` if it is there. `online`: the form
    /// that does not queue the load's statements behind it (the DDL's undo and clean-up run
    /// under load); blocking where nothing else runs (the index lab between builds).
    fn drop_index_sql(&self, table: &str, index: &str, online: bool) -> String;

    /// The statement that bounds lock waits of a session to `secs` seconds (for ixbench's own
    /// clean-up, which must not wait forever behind a long transaction); `None` where the
    /// engine has none.
    fn lock_timeout_sql(&self, _secs: u32) -> Option<String> {
        None
    }

    /// The change `req` as an `ALTER TABLE` clause for a user's `--ddl-command`
    /// (`IXBENCH_ALTER`), where the engine's tools take one (MySQL, MariaDB, TiDB: `ADD INDEX a
    /// (x)`, `ENGINE=<engine>` for a rebuild of a table in storage engine `engine`); `None`
    /// where they do not, or the change cannot be said so.
    fn external_alter_clause(&self, _req: &DdlRequest, _engine: &str) -> Option<String> {
        None
    }

    /// After the DDL (with the load stopped): checks that its result is there and sound.
    fn verify(&self, conn: &mut dyn Conn, req: &DdlRequest) -> Vec<Check>;
}

/// The error's code as the DBMS gave it (see [`crate::dbms::errcode::error_code`]).
pub use crate::dbms::errcode::error_code;

/// Quote an identifier ixbench validated (letters, digits, `_`), as every engine takes it.
pub(crate) fn check_ident(name: &str) -> Result<&str> {
    if name.is_empty()
        || name.len() > 64
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || name.starts_with(|c: char| c.is_ascii_digit())
    {
        bail!("invalid name {name:?}: use letters, digits and _ (at most 64)");
    }
    Ok(name)
}

/// Check every name of a request.
pub(crate) fn check_request(req: &DdlRequest) -> Result<()> {
    check_ident(&req.table)?;
    check_ident(&req.pk)?;
    if matches!(req.kind, DdlKind::AddIndex | DdlKind::DropIndex) {
        if req.indexes.is_empty() {
            bail!("no index to {}", req.kind.name().replace('-', " "));
        }
        for i in &req.indexes {
            check_ident(&i.name)?;
            if i.columns.is_empty() {
                bail!("index {} has no column", i.name);
            }
            for c in &i.columns {
                check_ident(c)?;
            }
        }
    }
    if req.kind == DdlKind::AddColumn {
        check_ident(&req.column)?;
    }
    Ok(())
}

/// `CREATE [UNIQUE] INDEX [CONCURRENTLY] name ON table (cols)`.
pub(crate) fn create_index(table: &str, i: &IndexSpec, concurrently: bool) -> String {
    format!(
        "CREATE {}INDEX {}{} ON {table} ({})",
        if i.unique { "UNIQUE " } else { "" },
        if concurrently { "CONCURRENTLY " } else { "" },
        i.name,
        i.columns.join(", ")
    )
}

/// `DROP INDEX name`: the SQL-standard form (engines whose DROP INDEX names the table or
/// takes options write their own in [`DdlDialect::drop_index_sql`]).
pub(crate) fn drop_index(index: &str) -> String {
    format!("DROP INDEX {index}")
}

/// Run `sqls` in one snapshot and return the first column of each as an integer.
pub(crate) fn counts_in_snapshot(
    conn: &mut dyn Conn,
    begin: &[&str],
    sqls: &[String],
) -> Result<Vec<Option<i64>>> {
    for b in begin {
        conn.execute(b)?;
    }
    let mut out = Vec::new();
    for s in sqls {
        match conn.query_i64(s) {
            Ok(v) => out.push(v),
            Err(e) => {
                let _ = conn.execute("ROLLBACK");
                return Err(e);
            }
        }
    }
    conn.execute("COMMIT")?;
    Ok(out)
}

/// The consistency check: the count through the index and through the table, at one snapshot.
pub(crate) fn count_check(index: &str, r: Result<Vec<Option<i64>>>) -> Check {
    match r {
        Ok(v) if v.len() == 2 => {
            let (a, b) = (v[0].unwrap_or(-1), v[1].unwrap_or(-1));
            Check {
                name: "consistent".into(),
                ok: a == b && a >= 0,
                detail: format!(
                    "{index}: {a} rows through the index, {b} through the table, at one snapshot"
                ),
            }
        }
        Ok(_) => Check {
            name: "consistent".into(),
            ok: false,
            detail: format!("{index}: the counts did not come back"),
        },
        Err(e) => Check {
            name: "consistent".into(),
            ok: false,
            detail: format!(
                "{index}: the count through the index failed: {}",
                crate::format::error_line(&e)
            ),
        },
    }
}

/// A check that `plan` (EXPLAIN output) names `index`.
pub(crate) fn plan_check(index: &str, query: &str, plan: Result<String>) -> Check {
    match plan {
        Ok(p) => Check {
            name: "used".into(),
            ok: p.to_ascii_lowercase().contains(&index.to_ascii_lowercase()),
            detail: format!("{query}: {p}"),
        },
        Err(e) => Check {
            name: "used".into(),
            ok: false,
            detail: format!("EXPLAIN {query} failed: {}", crate::format::error_line(&e)),
        },
    }
}

/// Every row of a query as one text (cells joined with spaces, rows with ` | `).
pub(crate) fn rows_text(conn: &mut dyn Conn, sql: &str) -> Result<String> {
    let rows = conn.query_rows(sql)?;
    Ok(rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| c.clone().unwrap_or_else(|| "NULL".into()))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join(" | "))
}

/// A literal for a value read back as text: `'...'` with quotes doubled (every engine coerces
/// a quoted literal to the column's type).
pub(crate) fn text_literal(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

/// A query that should use `index` (equality on each of its columns, the values of one row of
/// the table) and its text; `None` when the table is empty.
pub(crate) fn probe_query(
    conn: &mut dyn Conn,
    table: &str,
    index: &IndexSpec,
) -> Result<Option<String>> {
    let cols = index.columns.join(", ");
    let not_null: Vec<String> = index
        .columns
        .iter()
        .map(|c| format!("{c} IS NOT NULL"))
        .collect();
    let rows = conn.query_rows(&format!(
        "SELECT {cols} FROM {table} WHERE {} LIMIT 1",
        not_null.join(" AND ")
    ))?;
    let Some(row) = rows.into_iter().next() else {
        return Ok(None);
    };
    let conds: Vec<String> = index
        .columns
        .iter()
        .zip(row)
        .map(|(c, v)| format!("{c} = {}", text_literal(&v.unwrap_or_default())))
        .collect();
    Ok(Some(format!(
        "SELECT {cols} FROM {table} WHERE {}",
        conds.join(" AND ")
    )))
}

/// Whether an index exists, for the checks after a DROP INDEX.
pub(crate) fn gone_check(conn: &mut dyn Conn, table: &str, index: &str) -> Check {
    match conn.index_exists(table, index) {
        Ok(exists) => Check {
            name: "dropped".into(),
            ok: !exists,
            detail: if exists {
                format!("{index} still exists")
            } else {
                format!("{index} is gone")
            },
        },
        Err(e) => Check {
            name: "dropped".into(),
            ok: false,
            detail: format!(
                "cannot tell whether {index} exists: {}",
                crate::format::error_line(&e)
            ),
        },
    }
}

/// Whether the added column is there (a query naming it runs).
pub(crate) fn column_check(conn: &mut dyn Conn, table: &str, column: &str) -> Check {
    match conn.query_rows(&format!("SELECT {column} FROM {table} LIMIT 1")) {
        Ok(_) => Check {
            name: "column".into(),
            ok: true,
            detail: format!("{table}.{column} is there"),
        },
        Err(e) => Check {
            name: "column".into(),
            ok: false,
            detail: format!("{table}.{column}: {}", crate::format::error_line(&e)),
        },
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::dbms::mysql::ddl as my;
    use crate::dbms::postgres::ddl as pg;
    use crate::dbms::sqlite::ddl as lite;

    pub fn req(kind: DdlKind, lock: LockChoice, n: usize) -> DdlRequest {
        let idx = |name: &str, col: &str| IndexSpec {
            table: "sbtest1".into(),
            name: name.into(),
            columns: vec![col.into()],
            unique: false,
        };
        DdlRequest {
            kind,
            lock,
            table: "sbtest1".into(),
            pk: "id".into(),
            indexes: [idx("c_idx", "c"), idx("pad_idx", "pad")][..n].to_vec(),
            column: "ixb_col".into(),
        }
    }

    #[test]
    fn dialects_by_version() {
        let d = |k: &str, v: &str, e: Option<&str>| {
            crate::dbms::registry::ddl_dialect(k, v, e).unwrap().name()
        };
        assert_eq!(d("postgres", "PostgreSQL 15.8", None), "PostgreSQL");
        assert_eq!(
            d("mysql", "10.11.6-MariaDB-0+deb12u1", Some("InnoDB")),
            "MariaDB InnoDB"
        );
        assert_eq!(d("mysql", "10.11.6-MariaDB", Some("RocksDB")), "MyRocks");
        assert_eq!(d("mysql", "8.0.36", Some("InnoDB")), "MySQL InnoDB");
        assert_eq!(d("mysql", "8.0.11-TiDB-v7.5.1", Some("InnoDB")), "TiDB");
        assert_eq!(d("sqlite", "3.46.0", None), "SQLite");
        assert!(crate::dbms::registry::ddl_dialect("null", "", None).is_err());
        assert_eq!(d("postgres", "CockroachDB CCL v24.1", None), "CockroachDB");
    }

    #[test]
    fn names_are_checked() {
        let mut r = req(DdlKind::AddIndex, LockChoice::Online, 1);
        assert!(check_request(&r).is_ok());
        r.indexes[0].columns[0] = "c; DROP TABLE x".into();
        assert!(check_request(&r).is_err());
        let mut r = req(DdlKind::AddIndex, LockChoice::Online, 0);
        assert!(check_request(&r).is_err());
        r.kind = DdlKind::AddColumn;
        assert!(check_request(&r).is_ok());
        r.column = "1x".into();
        assert!(check_request(&r).is_err());
    }

    #[test]
    fn waits_in_words() {
        assert_eq!(Waits::default().describe(), "");
        let w = Waits {
            ddl_waits: Some(("Waiting for table metadata lock".into(), Some(3.0))),
            blocked_sessions: 4,
            blocked_max_secs: Some(2.0),
        };
        assert_eq!(
            w.describe(),
            "DDL waits for Waiting for table metadata lock (3 s); 4 sessions wait behind the DDL (longest 2 s)"
        );
    }

    #[test]
    fn literals_and_index_text() {
        assert_eq!(text_literal("a'b"), "'a''b'");
        let i = IndexSpec {
            table: "t".into(),
            name: "u".into(),
            columns: vec!["a".into(), "b".into()],
            unique: true,
        };
        assert_eq!(
            create_index("t", &i, true),
            "CREATE UNIQUE INDEX CONCURRENTLY u ON t (a, b)"
        );
        assert_eq!(
            create_index("t", &i, false),
            "CREATE UNIQUE INDEX u ON t (a, b)"
        );
    }

    /// The one writer of index DDL, pinned per DBMS: what the index lab sends (the session's
    /// algorithm, a blocking drop between builds) and what `ixbench ddl` sends (ALGORITHM=INPLACE,
    /// a drop that does not queue the load behind it).
    #[test]
    fn index_ddl_per_dbms() {
        let r = req(DdlKind::AddIndex, LockChoice::Online, 2);
        let (t, two) = (&r.table, &r.indexes);
        let one = std::slice::from_ref(&two[0]);
        let add = |d: &dyn DdlDialect, idxs: &[IndexSpec], online, a| {
            d.add_indexes_sql(t, idxs, online, a)
                .map_err(|e| e.to_string())
        };
        use Algorithm::{InPlace, Session};

        let pg = pg::Postgres::new("PostgreSQL 16.4");
        for a in [Session, InPlace] {
            assert_eq!(
                add(&pg, two, true, a).unwrap(),
                [
                    "CREATE INDEX CONCURRENTLY c_idx ON sbtest1 (c)",
                    "CREATE INDEX CONCURRENTLY pad_idx ON sbtest1 (pad)"
                ]
            );
            assert_eq!(
                add(&pg, one, false, a).unwrap(),
                ["CREATE INDEX c_idx ON sbtest1 (c)"]
            );
        }
        // The two writers disagreed here: both are right for where they run.
        assert_eq!(
            pg.drop_index_sql(t, "c_idx", true),
            "DROP INDEX CONCURRENTLY IF EXISTS c_idx"
        );
        assert_eq!(
            pg.drop_index_sql(t, "c_idx", false),
            "DROP INDEX IF EXISTS c_idx"
        );
        assert_eq!(
            pg.plan(&r).unwrap().undo,
            [
                "DROP INDEX CONCURRENTLY IF EXISTS c_idx",
                "DROP INDEX CONCURRENTLY IF EXISTS pad_idx"
            ]
        );

        let both = "ALTER TABLE sbtest1 ADD INDEX c_idx (c), ADD INDEX pad_idx (pad)";
        for (rocksdb, online_lock) in [(false, "NONE"), (true, "SHARED")] {
            let my = my::Mysql {
                mariadb: true,
                rocksdb,
            };
            assert_eq!(
                add(&my, two, true, Session).unwrap(),
                [format!("{both}, LOCK={online_lock}")]
            );
            assert_eq!(
                add(&my, two, false, Session).unwrap(),
                [format!("{both}, LOCK=SHARED")]
            );
            assert_eq!(
                add(&my, two, true, InPlace).unwrap(),
                [format!("{both}, ALGORITHM=INPLACE, LOCK={online_lock}")]
            );
            assert_eq!(
                my.plan(&r).unwrap().statements,
                [format!("{both}, ALGORITHM=INPLACE, LOCK={online_lock}")]
            );
            for online in [true, false] {
                assert_eq!(
                    my.drop_index_sql(t, "c_idx", online),
                    "ALTER TABLE sbtest1 DROP INDEX c_idx, ALGORITHM=INPLACE"
                );
            }
            assert_eq!(
                add(&my, &[], false, Session).unwrap_err(),
                "no index to build"
            );
        }

        let lite = lite::Sqlite;
        assert_eq!(
            add(&lite, two, false, Session).unwrap(),
            [
                "BEGIN IMMEDIATE",
                "CREATE INDEX c_idx ON sbtest1 (c)",
                "CREATE INDEX pad_idx ON sbtest1 (pad)",
                "COMMIT"
            ]
        );
        assert_eq!(
            add(&lite, one, false, Session).unwrap(),
            ["CREATE INDEX c_idx ON sbtest1 (c)"]
        );
        assert!(add(&lite, one, true, Session)
            .unwrap_err()
            .contains("SQLite has no online index build"));
        // The two writers disagreed here too: IF EXISTS (a clean-up must not fail).
        assert_eq!(
            lite.drop_index_sql(t, "c_idx", false),
            "DROP INDEX IF EXISTS c_idx"
        );
        assert_eq!(
            two[0].create_sql(),
            "CREATE INDEX c_idx ON sbtest1 (c)",
            "IndexSpec::create_sql is the dialect's plain CREATE INDEX"
        );
    }
}
