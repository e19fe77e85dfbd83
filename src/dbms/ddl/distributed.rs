//! Distributed SQL engines that speak another engine's protocol and cannot be started here:
//! TiDB (MySQL's protocol; its dialect is [`crate::dbms::mysql::ddl::Tidb`]), CockroachDB and YugabyteDB
//! (PostgreSQL's). They are recognised from the version string the server gives, and get their
//! own schema-change dialect (statements, progress, knobs), written from
//! `reference/index-builds.md` §5-7 and the engines' documentation. Tested here: the
//! recognition (real version strings from their documentation) and the SQL, by unit tests;
//! not run against a real server (none is installed on this machine).
//!
//! Version strings:
//! - TiDB, `SELECT VERSION()`: `8.0.11-TiDB-v7.5.1` (older: `5.7.25-TiDB-v6.5.0`).
//! - CockroachDB, `SELECT version()`: `CockroachDB CCL v23.1.11 (x86_64-pc-linux-gnu, built
//!   2023/09/27 ...)`; its `SHOW server_version` says `13.0.0` (the PostgreSQL version it
//!   emulates), so `ixbench ddl` asks `SELECT version()` on PostgreSQL-protocol targets.
//! - YugabyteDB YSQL, `SELECT version()`: `PostgreSQL 11.2-YB-2.18.0.0-b0 on
//!   x86_64-pc-linux-gnu, ...`; `SHOW server_version`: `11.2-YB-2.18.0.0-b0`.

use anyhow::{bail, Result};

use super::{
    check_request, create_index, DdlDialect, DdlKind, DdlPlan, DdlRequest, LockChoice, Waits,
};
use crate::dbms::Check;
use crate::dbms::Conn;

/// The statement that gives the full version string on a PostgreSQL-protocol server.
pub const PG_VERSION_SQL: &str = "SELECT version()";

/// [`crate::dbms::registry::full_version`] on a PostgreSQL-protocol server (the `full_version` of its row).
pub(crate) fn pg_full_version(conn: &mut dyn Conn, shown: &str) -> String {
    let full = conn
        .query_rows(PG_VERSION_SQL)
        .ok()
        .and_then(|r| r.into_iter().next())
        .and_then(|r| r.into_iter().next().flatten());
    match full {
        Some(v) if Distributed::on_postgres(&v).is_some() => v,
        _ => shown.to_string(),
    }
}

/// A distributed engine recognised from its version string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distributed {
    /// PingCAP TiDB (MySQL protocol).
    Tidb,
    /// CockroachDB (PostgreSQL protocol).
    Cockroach,
    /// YugabyteDB YSQL (PostgreSQL protocol).
    Yugabyte,
}

impl Distributed {
    /// The engine a version string names over MySQL's protocol: TiDB.
    pub(crate) fn on_mysql(version: &str) -> Option<Distributed> {
        let v = version.to_ascii_lowercase();
        (v.contains("-tidb-") || v.starts_with("tidb")).then_some(Distributed::Tidb)
    }

    /// The engine a version string names over PostgreSQL's protocol: CockroachDB, YugabyteDB.
    pub(crate) fn on_postgres(version: &str) -> Option<Distributed> {
        let v = version.to_ascii_lowercase();
        if v.starts_with("cockroachdb") || v.contains(" cockroachdb ") {
            Some(Distributed::Cockroach)
        } else if v.contains("-yb-") || v.contains("yugabyte") {
            Some(Distributed::Yugabyte)
        } else {
            None
        }
    }

    /// Its name in the output.
    pub fn name(self) -> &'static str {
        match self {
            Distributed::Tidb => "TiDB",
            Distributed::Cockroach => "CockroachDB",
            Distributed::Yugabyte => "YugabyteDB",
        }
    }

    /// The engine's own version (`v7.5.1`, `v23.1.11`, `2.18.0.0-b0`) from its version
    /// string, when it says.
    pub fn engine_version(self, version: &str) -> Option<String> {
        let v = version.trim();
        match self {
            Distributed::Tidb => v
                .to_ascii_lowercase()
                .find("-tidb-")
                .map(|i| v[i + 6..].to_string()),
            Distributed::Cockroach => v
                .split_whitespace()
                .find(|w| w.starts_with('v') && w[1..].starts_with(|c: char| c.is_ascii_digit()))
                .map(str::to_string),
            Distributed::Yugabyte => {
                let i = v.to_ascii_lowercase().find("-yb-")?;
                v[i + 4..].split_whitespace().next().map(str::to_string)
            }
        }
    }
}

/// SQLSTATE of a transaction the engine wants retried (CockroachDB and YugabyteDB both
/// abort conflicting transactions with 40001).
const RETRY_STATES: [&str; 2] = ["40001", "40P01"];

/// CockroachDB: `CREATE INDEX` is always online (a background schema-change job backfills
/// while reads and writes go on; `CONCURRENTLY` is accepted and does nothing), one index per
/// statement; progress from `SHOW JOBS`; knobs are cluster settings (`SET CLUSTER SETTING
/// bulkio.index_backfill.batch_size = ...`).
pub struct Cockroach;

impl DdlDialect for Cockroach {
    fn name(&self) -> &'static str {
        "CockroachDB"
    }

    fn plan(&self, req: &DdlRequest) -> Result<DdlPlan> {
        check_request(req)?;
        let t = &req.table;
        let mut p = DdlPlan {
            online: true,
            ..Default::default()
        };
        if req.lock == LockChoice::Blocking {
            p.notes.push(
                "CockroachDB has no blocking schema change: every index build is an online \
                 background job"
                    .into(),
            );
        }
        match req.kind {
            DdlKind::AddIndex => {
                for i in &req.indexes {
                    p.statements.push(create_index(t, i, false));
                    p.undo.push(self.drop_index_sql(t, &i.name, true));
                }
                p.lock = "none: a background schema-change job backfills while reads and writes \
                          go on (its writes may restart conflicting transactions: 40001)"
                    .into();
                if req.indexes.len() > 1 {
                    p.notes.push(format!(
                        "CockroachDB builds one index per statement (one job each): {} \
                         statements, one after the other",
                        req.indexes.len()
                    ));
                }
            }
            DdlKind::DropIndex => {
                for i in &req.indexes {
                    p.setup.push(create_index(t, i, false));
                    p.statements.push(self.drop_index_sql(t, &i.name, true));
                }
                p.lock = "none: an online schema-change job".into();
            }
            DdlKind::AddColumn => {
                p.statements.push(format!(
                    "ALTER TABLE {t} ADD COLUMN {} INT8 NULL",
                    req.column
                ));
                p.undo.push(format!(
                    "ALTER TABLE {t} DROP COLUMN IF EXISTS {}",
                    req.column
                ));
                p.lock = "none: an online schema-change job".into();
            }
            DdlKind::Rebuild => bail!("CockroachDB has no table rebuild statement"),
        }
        Ok(p)
    }

    fn ddl_retryable(&self, e: &anyhow::Error) -> bool {
        RETRY_STATES.contains(&super::error_code(e).as_str())
    }

    /// `SET CLUSTER SETTING` for the backfill's settings (`bulkio.*`, `schemachanger.*`,
    /// `kv.bulk_io_write.*`, `admission.*`): cluster-wide, no restart.
    fn global_knob_sql(&self, name: &str, value: &str) -> Option<String> {
        let name = name.to_ascii_lowercase();
        let known = [
            "bulkio.",
            "schemachanger.",
            "kv.bulk_io_write.",
            "admission.",
        ];
        if !known.iter().any(|k| name.starts_with(k))
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return None;
        }
        let literal = if value.parse::<f64>().is_ok()
            || value.eq_ignore_ascii_case("true")
            || value.eq_ignore_ascii_case("false")
        {
            value.to_ascii_lowercase()
        } else if value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            format!("'{value}'")
        } else {
            return None;
        };
        Some(format!("SET CLUSTER SETTING {name} = {literal}"))
    }

    fn progress_sql(&self) -> Option<&'static str> {
        Some(
            "WITH x AS (SHOW JOBS) SELECT job_id, job_type, status, fraction_completed, \
             running_status FROM x WHERE job_type IN ('SCHEMA CHANGE', 'NEW SCHEMA CHANGE') \
             AND status = 'running'",
        )
    }

    fn drop_index_sql(&self, table: &str, index: &str, _online: bool) -> String {
        format!("DROP INDEX IF EXISTS {table}@{index}")
    }

    fn lock_timeout_sql(&self, secs: u32) -> Option<String> {
        Some(format!("SET lock_timeout = '{secs}s'"))
    }

    fn verify(&self, conn: &mut dyn Conn, req: &DdlRequest) -> Vec<Check> {
        let mut out = Vec::new();
        match req.kind {
            DdlKind::AddIndex => {
                for i in &req.indexes {
                    // The count through the index (forced with t@index) and through the table.
                    let r = super::counts_in_snapshot(
                        conn,
                        &["BEGIN"],
                        &[
                            format!("SELECT count(*) FROM {}@{}", req.table, i.name),
                            format!("SELECT count(*) FROM {}@primary", req.table),
                        ],
                    );
                    out.push(super::count_check(&i.name, r));
                }
            }
            DdlKind::DropIndex => {
                for i in &req.indexes {
                    out.push(super::gone_check(conn, &req.table, &i.name));
                }
            }
            DdlKind::AddColumn => out.push(super::column_check(conn, &req.table, &req.column)),
            DdlKind::Rebuild => {}
        }
        out
    }
}

/// YugabyteDB YSQL: PostgreSQL's statements, except that `CREATE INDEX` is online by
/// default and ixbench writes `CONCURRENTLY` explicitly (in a transaction block YugabyteDB
/// would otherwise fall back to a non-concurrent build with only a NOTICE); a blocking build
/// is `NONCONCURRENTLY` (unsafe with concurrent writes unless table locks are on). Progress
/// from `pg_stat_progress_create_index` (phases initializing, backfilling), waits, the
/// session id and INVALID-index checks as PostgreSQL's. Its backfill knobs are tserver and
/// master flags, not settable from SQL.
pub struct Yugabyte {
    pg: Box<dyn DdlDialect>,
}

impl Yugabyte {
    /// Over `pg`, PostgreSQL's dialect for its version string (`11.2-YB-2.18.0.0-b0`), given
    /// by PostgreSQL's engine (its folder owns that dialect; this file names no engine).
    pub fn over(pg: Box<dyn DdlDialect>) -> Self {
        Yugabyte { pg }
    }
}

impl DdlDialect for Yugabyte {
    fn name(&self) -> &'static str {
        "YugabyteDB"
    }

    fn plan(&self, req: &DdlRequest) -> Result<DdlPlan> {
        check_request(req)?;
        let t = &req.table;
        let online = req.lock == LockChoice::Online;
        match req.kind {
            DdlKind::AddIndex => {
                let mut p = DdlPlan {
                    online,
                    ..Default::default()
                };
                for i in &req.indexes {
                    let sql = create_index(t, i, online);
                    p.statements.push(if online {
                        sql
                    } else {
                        sql.replacen("INDEX ", "INDEX NONCONCURRENTLY ", 1)
                    });
                    p.undo.push(self.drop_index_sql(t, &i.name, true));
                }
                p.lock = if online {
                    "none: CREATE INDEX CONCURRENTLY backfills every tablet in parallel and \
                     mirrors new writes (concurrent transactions may be aborted: 40001)"
                } else {
                    "NONCONCURRENTLY: no online backfill; unsafe with concurrent writes unless \
                     table-level locks are enabled"
                }
                .into();
                Ok(p)
            }
            DdlKind::Rebuild => bail!("YugabyteDB has no table rebuild statement ixbench runs"),
            _ => {
                let mut p = self.pg.plan(req)?;
                p.notes
                    .push("YugabyteDB: PostgreSQL's statement (not run here)".into());
                Ok(p)
            }
        }
    }

    fn session_id_sql(&self) -> Option<&'static str> {
        self.pg.session_id_sql()
    }

    fn cancel_sql(&self, id: i64) -> Option<String> {
        self.pg.cancel_sql(id)
    }

    fn waits(&self, conn: &mut dyn Conn, id: i64) -> Result<Waits> {
        self.pg.waits(conn, id)
    }

    fn ddl_retryable(&self, e: &anyhow::Error) -> bool {
        RETRY_STATES.contains(&super::error_code(e).as_str())
    }

    fn progress_sql(&self) -> Option<&'static str> {
        Some(
            "SELECT phase, tuples_done, tuples_total FROM pg_stat_progress_create_index \
             WHERE pid <> pg_backend_pid()",
        )
    }

    fn invalid_indexes(&self, conn: &mut dyn Conn, table: &str) -> Result<Vec<String>> {
        self.pg.invalid_indexes(conn, table)
    }

    fn drop_index_sql(&self, table: &str, index: &str, online: bool) -> String {
        self.pg.drop_index_sql(table, index, online)
    }

    fn lock_timeout_sql(&self, secs: u32) -> Option<String> {
        self.pg.lock_timeout_sql(secs)
    }

    fn verify(&self, conn: &mut dyn Conn, req: &DdlRequest) -> Vec<Check> {
        self.pg.verify(conn, req)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::req;
    use super::*;

    #[test]
    fn recognises_engines_from_real_version_strings() {
        let cases = [
            ("mysql", "8.0.11-TiDB-v7.5.1", Some(Distributed::Tidb), Some("v7.5.1")),
            ("mysql", "5.7.25-TiDB-v6.5.0", Some(Distributed::Tidb), Some("v6.5.0")),
            (
                "postgres",
                "CockroachDB CCL v23.1.11 (x86_64-pc-linux-gnu, built 2023/09/27 01:53:43, go1.19.10)",
                Some(Distributed::Cockroach),
                Some("v23.1.11"),
            ),
            (
                "postgres",
                "CockroachDB OSS v21.2.4 (x86_64-unknown-linux-gnu, built 2022/01/10 18:50:15, go1.16.6)",
                Some(Distributed::Cockroach),
                Some("v21.2.4"),
            ),
            (
                "postgres",
                "PostgreSQL 11.2-YB-2.18.0.0-b0 on x86_64-pc-linux-gnu, compiled by clang version 15.0.3, 64-bit",
                Some(Distributed::Yugabyte),
                Some("2.18.0.0-b0"),
            ),
            ("postgres", "11.2-YB-2.18.0.0-b0", Some(Distributed::Yugabyte), Some("2.18.0.0-b0")),
            ("postgres", "PostgreSQL 15.8 (Debian 15.8-0+deb12u1) on x86_64-pc-linux-gnu", None, None),
            ("postgres", "13.0.0", None, None),
            ("mysql", "10.11.6-MariaDB-0+deb12u1", None, None),
            ("mysql", "8.0.36", None, None),
            // The protocol matters: a PostgreSQL string over MySQL's is not YugabyteDB.
            ("mysql", "11.2-YB-2.18.0.0-b0", None, None),
        ];
        for (kind, v, want, ver) in cases {
            let got = crate::dbms::registry::distributed(kind, v);
            assert_eq!(got, want, "{kind} {v}");
            if let Some(d) = got {
                assert_eq!(d.engine_version(v).as_deref(), ver, "{v}");
            }
        }
        // The DDL dialect follows the recognition.
        let d = |k: &str, v: &str| {
            crate::dbms::registry::ddl_dialect(k, v, None)
                .unwrap()
                .name()
        };
        assert_eq!(d("mysql", "8.0.11-TiDB-v7.5.1"), "TiDB");
        assert_eq!(
            d("postgres", "CockroachDB CCL v23.1.11 (x86_64-pc-linux-gnu)"),
            "CockroachDB"
        );
        assert_eq!(d("postgres", "11.2-YB-2.18.0.0-b0"), "YugabyteDB");
        assert_eq!(d("postgres", "PostgreSQL 15.8"), "PostgreSQL");
    }

    #[test]
    fn cockroach_statements() {
        let c = Cockroach;
        let p = c
            .plan(&req(DdlKind::AddIndex, LockChoice::Online, 2))
            .unwrap();
        assert!(p.online);
        assert_eq!(
            p.statements,
            vec![
                "CREATE INDEX c_idx ON sbtest1 (c)".to_string(),
                "CREATE INDEX pad_idx ON sbtest1 (pad)".to_string()
            ]
        );
        assert_eq!(p.undo[0], "DROP INDEX IF EXISTS sbtest1@c_idx");
        let b = c
            .plan(&req(DdlKind::AddIndex, LockChoice::Blocking, 1))
            .unwrap();
        assert!(b.online && b.notes[0].contains("no blocking schema change"));
        let col = c
            .plan(&req(DdlKind::AddColumn, LockChoice::Online, 1))
            .unwrap();
        assert_eq!(
            col.statements,
            vec!["ALTER TABLE sbtest1 ADD COLUMN ixb_col INT8 NULL"]
        );
        assert!(c
            .plan(&req(DdlKind::Rebuild, LockChoice::Online, 1))
            .is_err());
        assert_eq!(
            c.global_knob_sql("bulkio.index_backfill.batch_size", "30000")
                .as_deref(),
            Some("SET CLUSTER SETTING bulkio.index_backfill.batch_size = 30000")
        );
        assert_eq!(
            c.global_knob_sql("bulkio.index_backfill.elastic_control.enabled", "FALSE")
                .as_deref(),
            Some("SET CLUSTER SETTING bulkio.index_backfill.elastic_control.enabled = false")
        );
        assert_eq!(
            c.global_knob_sql("sql.defaults.x", "1"),
            None,
            "not a build knob"
        );
        assert_eq!(
            c.global_knob_sql("bulkio.x; DROP TABLE t", "1"),
            None,
            "not a name"
        );
        assert_eq!(c.global_knob_sql("bulkio.x", "1'; DROP"), None);
        let progress = c.progress_sql().unwrap();
        assert!(
            progress.starts_with("WITH x AS (SHOW JOBS)")
                && progress.contains("fraction_completed")
                && progress.contains("'NEW SCHEMA CHANGE'"),
            "{progress}"
        );
        assert_eq!(
            c.lock_timeout_sql(5).as_deref(),
            Some("SET lock_timeout = '5s'")
        );
    }

    #[test]
    fn yugabyte_statements() {
        let y = Yugabyte::over(Box::new(crate::dbms::postgres::ddl::Postgres::new(
            "11.2-YB-2.18.0.0-b0",
        )));
        let p = y
            .plan(&req(DdlKind::AddIndex, LockChoice::Online, 1))
            .unwrap();
        assert_eq!(
            p.statements,
            vec!["CREATE INDEX CONCURRENTLY c_idx ON sbtest1 (c)"]
        );
        assert!(p.online);
        let b = y
            .plan(&req(DdlKind::AddIndex, LockChoice::Blocking, 1))
            .unwrap();
        assert_eq!(
            b.statements,
            vec!["CREATE INDEX NONCONCURRENTLY c_idx ON sbtest1 (c)"]
        );
        assert!(!b.online && b.lock.contains("unsafe with concurrent writes"));
        let progress = y.progress_sql().unwrap();
        assert!(
            progress.contains("pg_stat_progress_create_index"),
            "{progress}"
        );
        assert_eq!(y.session_id_sql(), Some("SELECT pg_backend_pid()"));
        assert!(y
            .plan(&req(DdlKind::Rebuild, LockChoice::Online, 1))
            .is_err());
        let d = y
            .plan(&req(DdlKind::DropIndex, LockChoice::Online, 1))
            .unwrap();
        assert_eq!(d.statements, vec!["DROP INDEX CONCURRENTLY c_idx"]);
        assert!(y
            .global_knob_sql("num_concurrent_backfills_allowed", "4")
            .is_none());
    }
}
