//! SQLite: one writer at a time, so every schema change is blocking: `CREATE INDEX` holds the
//! write lock for the whole build (readers go on in WAL mode; writers wait on their busy
//! timeout, then fail with SQLITE_BUSY). Several indexes are built in one transaction. Checks:
//! the count through the index (`INDEXED BY`) = through the table (`NOT INDEXED`) in one read
//! transaction, `PRAGMA integrity_check`, and `EXPLAIN QUERY PLAN`.

use anyhow::{bail, Result};

use crate::dbms::ddl::{
    check_request, count_check, counts_in_snapshot, create_index, gone_check, plan_check,
    probe_query, rows_text, Algorithm, DdlDialect, DdlKind, DdlPlan, DdlRequest, IndexSpec,
    LockChoice,
};
use crate::dbms::Check;
use crate::dbms::Conn;

/// SQLite's dialect.
pub struct Sqlite;

/// Several statements in one write transaction (`BEGIN IMMEDIATE` ... `COMMIT`); one as it is.
fn in_one_transaction(stmts: Vec<String>) -> Vec<String> {
    if stmts.len() > 1 {
        let mut v = vec!["BEGIN IMMEDIATE".to_string()];
        v.extend(stmts);
        v.push("COMMIT".into());
        v
    } else {
        stmts
    }
}

impl DdlDialect for Sqlite {
    fn name(&self) -> &'static str {
        "SQLite"
    }

    fn plan(&self, req: &DdlRequest) -> Result<DdlPlan> {
        check_request(req)?;
        let t = &req.table;
        let mut p = DdlPlan::default();
        if req.lock == LockChoice::Online {
            p.notes.push(
                "SQLite has no online schema change: one writer at a time, so writes wait for the whole DDL"
                    .into(),
            );
        }
        match req.kind {
            DdlKind::AddIndex => {
                p.statements = self.add_indexes_sql(t, &req.indexes, false, Algorithm::Session)?;
                p.undo = req
                    .indexes
                    .iter()
                    .map(|i| self.drop_index_sql(t, &i.name, true))
                    .collect();
                p.lock = "the database's write lock (one writer): reads go on (WAL), writes wait for the whole build".into();
            }
            DdlKind::DropIndex => {
                p.setup = req
                    .indexes
                    .iter()
                    .map(|i| create_index(t, i, false))
                    .collect();
                p.statements = in_one_transaction(
                    req.indexes
                        .iter()
                        .map(|i| crate::dbms::ddl::drop_index(&i.name))
                        .collect(),
                );
                p.lock = "the database's write lock (one writer): writes wait while it runs".into();
            }
            DdlKind::AddColumn => {
                p.statements
                    .push(format!("ALTER TABLE {t} ADD COLUMN {} INTEGER", req.column));
                p.undo
                    .push(format!("ALTER TABLE {t} DROP COLUMN {}", req.column));
                p.lock =
                    "the database's write lock for a moment: the schema changes, no row is written"
                        .into();
            }
            DdlKind::Rebuild => {
                p.statements.push("VACUUM".into());
                p.lock = "the database's write lock: VACUUM rewrites the whole database file; writes wait".into();
            }
        }
        Ok(p)
    }

    fn ddl_retryable(&self, e: &anyhow::Error) -> bool {
        matches!(
            crate::dbms::ddl::error_code(e).as_str(),
            "sqlite:DatabaseBusy" | "sqlite:DatabaseLocked"
        )
    }

    /// Blocking only (SQLite has one writer); several indexes in one transaction, one table
    /// scan each.
    fn add_indexes_sql(
        &self,
        table: &str,
        idxs: &[IndexSpec],
        online: bool,
        _algorithm: Algorithm,
    ) -> Result<Vec<String>> {
        if online {
            bail!("SQLite has no online index build: CREATE INDEX holds the write lock throughout");
        }
        Ok(in_one_transaction(
            idxs.iter().map(|i| create_index(table, i, false)).collect(),
        ))
    }

    /// `IF EXISTS`, online or not (SQLite has one kind of DROP INDEX).
    fn drop_index_sql(&self, _table: &str, index: &str, _online: bool) -> String {
        format!("DROP INDEX IF EXISTS {index}")
    }

    fn verify(&self, conn: &mut dyn Conn, req: &DdlRequest) -> Vec<Check> {
        let t = &req.table;
        let mut out = Vec::new();
        match req.kind {
            DdlKind::AddIndex => {
                for i in &req.indexes {
                    let first = &i.columns[0];
                    let counts = counts_in_snapshot(
                        conn,
                        &["BEGIN"],
                        &[
                            format!(
                                "SELECT count(*) FROM {t} INDEXED BY {} WHERE {first} IS NOT NULL",
                                i.name
                            ),
                            format!(
                                "SELECT count(*) FROM {t} NOT INDEXED WHERE {first} IS NOT NULL"
                            ),
                        ],
                    );
                    out.push(count_check(&i.name, counts));
                    match probe_query(conn, t, i) {
                        Ok(Some(q)) => {
                            let plan = rows_text(conn, &format!("EXPLAIN QUERY PLAN {q}"));
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
            DdlKind::Rebuild => {}
        }
        if req.kind != DdlKind::DropIndex {
            out.push(match rows_text(conn, "PRAGMA integrity_check") {
                Ok(text) => Check {
                    name: "integrity".into(),
                    ok: text == "ok",
                    detail: format!("PRAGMA integrity_check: {text}"),
                },
                Err(e) => Check {
                    name: "integrity".into(),
                    ok: false,
                    detail: format!(
                        "PRAGMA integrity_check failed: {}",
                        crate::format::error_line(&e)
                    ),
                },
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::ddl::tests::req;

    #[test]
    fn always_blocking() {
        let p = Sqlite
            .plan(&req(DdlKind::AddIndex, LockChoice::Online, 2))
            .unwrap();
        assert!(!p.online);
        assert_eq!(
            p.statements,
            [
                "BEGIN IMMEDIATE",
                "CREATE INDEX c_idx ON sbtest1 (c)",
                "CREATE INDEX pad_idx ON sbtest1 (pad)",
                "COMMIT"
            ]
        );
        assert!(p.notes[0].contains("no online"));
        let p = Sqlite
            .plan(&req(DdlKind::AddIndex, LockChoice::Blocking, 1))
            .unwrap();
        assert_eq!(p.statements, ["CREATE INDEX c_idx ON sbtest1 (c)"]);
        assert!(p.notes.is_empty());
        assert_eq!(p.undo, ["DROP INDEX IF EXISTS c_idx"]);
    }
}
