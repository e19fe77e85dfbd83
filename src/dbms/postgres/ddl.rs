//! PostgreSQL: `CREATE INDEX CONCURRENTLY` (SHARE UPDATE EXCLUSIVE: reads and writes go on; it
//! waits for older transactions twice) or plain `CREATE INDEX` (SHARE: writes wait for the
//! whole build); one statement per index (PostgreSQL has no several-index statement). Waits
//! from `pg_locks` (`waitstart`, PG 14+) and `pg_blocking_pids`; an INVALID index left by a
//! failed CONCURRENTLY build from `pg_index.indisvalid`.

use anyhow::Result;

use crate::dbms::ddl::{
    check_request, count_check, counts_in_snapshot, create_index, gone_check, plan_check,
    probe_query, rows_text, text_literal, Algorithm, DdlDialect, DdlKind, DdlPlan, DdlRequest,
    IndexSpec, LockChoice, Waits,
};
use crate::dbms::Check;
use crate::dbms::Conn;

/// PostgreSQL's dialect.
pub struct Postgres {
    /// Major version (15 for `PostgreSQL 15.8`), 0 when the version string did not say.
    pub major: u32,
}

impl Postgres {
    /// From the version string (`PostgreSQL 15.8 (Debian ...) on x86_64 ...` or `15.8`).
    pub fn new(version: &str) -> Self {
        let major = version
            .split(|c: char| !c.is_ascii_digit())
            .find(|s| !s.is_empty())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Postgres { major }
    }
}

/// The dialect of a PostgreSQL-protocol server from its version string: CockroachDB's or
/// YugabyteDB's when it names them, PostgreSQL's otherwise (the `ddl` of PostgreSQL's row).
pub fn for_version(version: &str, _engine: Option<&str>) -> Box<dyn DdlDialect> {
    use crate::dbms::ddl::distributed::{self, Distributed};
    match Distributed::on_postgres(version) {
        Some(Distributed::Cockroach) => Box::new(distributed::Cockroach),
        Some(Distributed::Yugabyte) => Box::new(distributed::Yugabyte::over(Box::new(Postgres::new(version)))),
        _ => Box::new(Postgres::new(version)),
    }
}

/// SQLSTATEs worth running a DDL again for: lock not available (55P03, `lock_timeout`),
/// deadlock (40P01), serialization failure (40001), query cancelled by a statement timeout
/// (57014 is also a user's cancel: not retried).
const RETRY_STATES: [&str; 3] = ["55P03", "40P01", "40001"];

/// Whether a SQLSTATE is one of [`RETRY_STATES`].
fn retryable_state(code: &str) -> bool {
    RETRY_STATES.contains(&code)
}

impl DdlDialect for Postgres {
    fn name(&self) -> &'static str {
        "PostgreSQL"
    }

    fn plan(&self, req: &DdlRequest) -> Result<DdlPlan> {
        check_request(req)?;
        let t = &req.table;
        let online = req.lock == LockChoice::Online;
        let mut p = DdlPlan {
            online,
            ..Default::default()
        };
        match req.kind {
            DdlKind::AddIndex => {
                p.statements = self.add_indexes_sql(t, &req.indexes, online, Algorithm::InPlace)?;
                for i in &req.indexes {
                    p.undo.push(self.drop_index_sql(t, &i.name, true));
                }
                p.lock = if online {
                    "SHARE UPDATE EXCLUSIVE (CREATE INDEX CONCURRENTLY): reads and writes go on; \
                     the build waits for transactions older than it, twice"
                } else {
                    "SHARE (plain CREATE INDEX): reads go on, writes wait for the whole build"
                }
                .into();
                if req.indexes.len() > 1 {
                    p.notes.push(format!(
                        "PostgreSQL builds one index per statement: {} statements, one after the other",
                        req.indexes.len()
                    ));
                }
            }
            DdlKind::DropIndex => {
                for i in &req.indexes {
                    p.setup.push(create_index(t, i, false));
                    p.statements.push(format!(
                        "DROP INDEX {}{}",
                        if online { "CONCURRENTLY " } else { "" },
                        i.name
                    ));
                }
                p.lock = if online {
                    "SHARE UPDATE EXCLUSIVE (DROP INDEX CONCURRENTLY): waits for transactions using the table"
                } else {
                    "ACCESS EXCLUSIVE (DROP INDEX): reads and writes wait while it runs"
                }
                .into();
            }
            DdlKind::AddColumn => {
                let c = &req.column;
                if online {
                    p.statements
                        .push(format!("ALTER TABLE {t} ADD COLUMN {c} integer"));
                    p.lock = "ACCESS EXCLUSIVE for a moment: a nullable column without a default changes the catalog only".into();
                } else {
                    // A volatile default makes PostgreSQL write every row again.
                    p.statements.push(format!(
                        "ALTER TABLE {t} ADD COLUMN {c} integer DEFAULT (random() * 1000)::integer"
                    ));
                    p.lock = "ACCESS EXCLUSIVE (a volatile default rewrites the table): reads and writes wait for the whole rewrite".into();
                }
                p.undo
                    .push(format!("ALTER TABLE {t} DROP COLUMN IF EXISTS {c}"));
            }
            DdlKind::Rebuild => {
                if online {
                    p.statements.push(format!("REINDEX TABLE CONCURRENTLY {t}"));
                    p.lock = "SHARE UPDATE EXCLUSIVE (REINDEX TABLE CONCURRENTLY): reads and writes go on".into();
                    p.notes.push(
                        "PostgreSQL has no online rebuild of the table itself: REINDEX TABLE CONCURRENTLY rebuilds its indexes"
                            .into(),
                    );
                } else {
                    p.statements.push(format!("VACUUM FULL {t}"));
                    p.lock = "ACCESS EXCLUSIVE (VACUUM FULL): reads and writes wait for the whole rebuild".into();
                }
            }
        }
        Ok(p)
    }

    fn session_id_sql(&self) -> Option<&'static str> {
        Some("SELECT pg_backend_pid()")
    }

    fn cancel_sql(&self, id: i64) -> Option<String> {
        Some(format!("SELECT pg_cancel_backend({id})"))
    }

    fn waits(&self, conn: &mut dyn Conn, id: i64) -> Result<Waits> {
        let waitstart = if self.major >= 14 {
            "extract(epoch FROM clock_timestamp() - l.waitstart)::float8"
        } else {
            "NULL::float8"
        };
        let rows = conn.query_rows(&format!(
            "SELECT l.locktype, l.mode, {waitstart} FROM pg_locks l \
             WHERE l.pid = {id} AND NOT l.granted LIMIT 1"
        ))?;
        let mut w = Waits::default();
        if let Some(r) = rows.first() {
            let cell = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
            let what = if cell(0) == "virtualxid" {
                "older transactions to end (virtualxid)".to_string()
            } else {
                format!("{} lock on a {}", cell(1), cell(0))
            };
            w.ddl_waits = Some((what, cell(2).parse().ok()));
        }
        let rows = conn.query_rows(&format!(
            "SELECT count(*), max(extract(epoch FROM clock_timestamp() - state_change))::float8 \
             FROM pg_stat_activity WHERE {id} = ANY(pg_blocking_pids(pid))"
        ))?;
        if let Some(r) = rows.first() {
            w.blocked_sessions = r
                .first()
                .cloned()
                .flatten()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            w.blocked_max_secs = r.get(1).cloned().flatten().and_then(|s| s.parse().ok());
        }
        Ok(w)
    }

    fn ddl_retryable(&self, e: &anyhow::Error) -> bool {
        retryable_state(&crate::dbms::ddl::error_code(e))
    }

    fn invalid_indexes(&self, conn: &mut dyn Conn, table: &str) -> Result<Vec<String>> {
        let rows = conn.query_rows(&format!(
            "SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid \
             JOIN pg_class c ON c.oid = x.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = current_schema() AND c.relname = {} AND NOT x.indisvalid \
             ORDER BY 1",
            text_literal(&table.to_ascii_lowercase())
        ))?;
        Ok(rows
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect())
    }

    /// One `CREATE [UNIQUE] INDEX [CONCURRENTLY]` per index (PostgreSQL has no several-index
    /// statement).
    fn add_indexes_sql(
        &self,
        table: &str,
        idxs: &[IndexSpec],
        online: bool,
        _algorithm: Algorithm,
    ) -> Result<Vec<String>> {
        Ok(idxs
            .iter()
            .map(|i| create_index(table, i, online))
            .collect())
    }

    /// Online, `CONCURRENTLY`: a plain DROP INDEX takes ACCESS EXCLUSIVE, and while it waits
    /// for a long transaction every statement of the load queues behind it. Blocking (nothing
    /// else runs): plain, which neither waits for every older transaction nor fails in a
    /// transaction block.
    fn drop_index_sql(&self, _table: &str, index: &str, online: bool) -> String {
        if online {
            format!("DROP INDEX CONCURRENTLY IF EXISTS {index}")
        } else {
            format!("DROP INDEX IF EXISTS {index}")
        }
    }

    fn lock_timeout_sql(&self, secs: u32) -> Option<String> {
        Some(format!("SET lock_timeout = '{secs}s'"))
    }

    fn verify(&self, conn: &mut dyn Conn, req: &DdlRequest) -> Vec<Check> {
        let t = &req.table;
        let mut out = Vec::new();
        match req.kind {
            DdlKind::AddIndex => {
                for i in &req.indexes {
                    let valid = conn
                        .query_rows(&format!(
                            "SELECT x.indisvalid FROM pg_index x \
                             JOIN pg_class i ON i.oid = x.indexrelid \
                             JOIN pg_namespace n ON n.oid = i.relnamespace \
                             WHERE n.nspname = current_schema() AND i.relname = {}",
                            text_literal(&i.name.to_ascii_lowercase())
                        ))
                        .and_then(
                            |r| match r.first().and_then(|r| r.first().cloned().flatten()) {
                                Some(v) => Ok(v == "t"),
                                None => anyhow::bail!("{} is not in pg_index", i.name),
                            },
                        );
                    out.push(match valid {
                        Ok(ok) => Check {
                            name: "valid".into(),
                            ok,
                            detail: format!(
                                "{}: pg_index.indisvalid = {}",
                                i.name,
                                if ok { "true" } else { "false" }
                            ),
                        },
                        Err(e) => Check {
                            name: "valid".into(),
                            ok: false,
                            detail: format!(
                                "cannot tell whether {} is valid: {}",
                                i.name,
                                crate::format::error_line(&e)
                            ),
                        },
                    });
                    let first = &i.columns[0];
                    // Through the table: a sequential scan; through the index: an index-only
                    // scan (other plans off), in one REPEATABLE READ snapshot.
                    let counts = counts_in_snapshot(
                        conn,
                        &["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"],
                        &[
                            "SET LOCAL enable_seqscan = off".into(),
                            "SET LOCAL enable_bitmapscan = off".into(),
                            format!("SELECT count(*) FROM {t} WHERE {first} IS NOT NULL"),
                            "SET LOCAL enable_seqscan = on".into(),
                            "SET LOCAL enable_indexscan = off".into(),
                            "SET LOCAL enable_indexonlyscan = off".into(),
                            format!("SELECT count(*) FROM {t} WHERE {first} IS NOT NULL"),
                        ],
                    )
                    .map(|v| vec![v[2], v[6]]);
                    out.push(count_check(&i.name, counts));
                    match probe_query(conn, t, i) {
                        Ok(Some(q)) => {
                            let plan = rows_text(conn, &format!("EXPLAIN {q}"));
                            out.push(plan_check(&i.name, &q, plan));
                        }
                        Ok(None) => {}
                        Err(e) => out.push(plan_check(&i.name, "a query on it", Err(e))),
                    }
                }
            }
            DdlKind::DropIndex => {
                for i in &req.indexes {
                    out.push(gone_check(conn, t, &i.name));
                }
            }
            DdlKind::AddColumn => out.push(crate::dbms::ddl::column_check(conn, t, &req.column)),
            DdlKind::Rebuild => match self.invalid_indexes(conn, t) {
                Ok(v) => out.push(Check {
                    name: "valid".into(),
                    ok: v.is_empty(),
                    detail: if v.is_empty() {
                        format!("every index of {t} is valid")
                    } else {
                        format!("INVALID: {}", v.join(", "))
                    },
                }),
                Err(e) => out.push(Check {
                    name: "valid".into(),
                    ok: false,
                    detail: format!("cannot read pg_index: {}", crate::format::error_line(&e)),
                }),
            },
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::ddl::tests::req;

    #[test]
    fn statements_and_locks() {
        let pg = Postgres::new("PostgreSQL 15.8 (Debian 15.8-0+deb12u1) on x86_64");
        assert_eq!(pg.major, 15);
        let p = pg
            .plan(&req(DdlKind::AddIndex, LockChoice::Online, 2))
            .unwrap();
        assert_eq!(
            p.statements,
            [
                "CREATE INDEX CONCURRENTLY c_idx ON sbtest1 (c)",
                "CREATE INDEX CONCURRENTLY pad_idx ON sbtest1 (pad)"
            ]
        );
        assert!(p.online && p.lock.starts_with("SHARE UPDATE EXCLUSIVE"));
        assert_eq!(p.undo[0], "DROP INDEX CONCURRENTLY IF EXISTS c_idx");
        let p = pg
            .plan(&req(DdlKind::AddIndex, LockChoice::Blocking, 1))
            .unwrap();
        assert_eq!(p.statements, ["CREATE INDEX c_idx ON sbtest1 (c)"]);
        assert!(!p.online && p.lock.contains("writes wait"));
        let p = pg
            .plan(&req(DdlKind::DropIndex, LockChoice::Online, 1))
            .unwrap();
        assert_eq!(p.setup, ["CREATE INDEX c_idx ON sbtest1 (c)"]);
        assert_eq!(p.statements, ["DROP INDEX CONCURRENTLY c_idx"]);
        let p = pg
            .plan(&req(DdlKind::AddColumn, LockChoice::Blocking, 0))
            .unwrap();
        assert!(p.statements[0].contains("DEFAULT (random()"));
        assert_eq!(
            p.undo,
            ["ALTER TABLE sbtest1 DROP COLUMN IF EXISTS ixb_col"]
        );
        let p = pg
            .plan(&req(DdlKind::Rebuild, LockChoice::Blocking, 0))
            .unwrap();
        assert_eq!(p.statements, ["VACUUM FULL sbtest1"]);
        assert_eq!(pg.cancel_sql(42).unwrap(), "SELECT pg_cancel_backend(42)");
    }

    #[test]
    fn retryable_states() {
        assert_eq!(Postgres::new("16.2").major, 16);
        assert!(retryable_state("55P03") && retryable_state("40P01"));
        assert!(!retryable_state("23505") && !retryable_state("57014"));
        assert!(!Postgres::new("16").ddl_retryable(&anyhow::anyhow!("55P03")));
    }
}
