//! MySQL and MariaDB (InnoDB and MyRocks), and TiDB (which speaks MySQL's protocol and says
//! `TiDB` in its version).
//!
//! InnoDB: `ALTER TABLE t ADD INDEX a (x), ADD INDEX b (y), ALGORITHM=INPLACE, LOCK=NONE`
//! (reads and writes go on; an exclusive metadata lock for a moment at the start and the end)
//! or `LOCK=SHARED` (writes wait). MyRocks refuses `LOCK=NONE` for ADD INDEX: its in-place
//! build blocks writes, so an online request runs with `LOCK=SHARED` and says so. Waits from
//! PROCESSLIST (`Waiting for table metadata lock` with its TIME); checks: the count through the
//! new index = through the PRIMARY key in one consistent snapshot, `CHECK TABLE`, EXPLAIN.

use anyhow::{bail, Result};

use crate::dbms::ddl::{
    check_ident, check_request, count_check, counts_in_snapshot, gone_check, plan_check, probe_query, Algorithm,
    DdlDialect, DdlKind, DdlPlan, DdlRequest, IndexSpec, LockChoice, Waits,
};
use crate::dbms::Check;
use crate::dbms::Conn;

/// MySQL or MariaDB, InnoDB or MyRocks.
pub struct Mysql {
    /// MariaDB (its version says so) rather than MySQL.
    pub mariadb: bool,
    /// The table is MyRocks's.
    pub rocksdb: bool,
}

/// The dialect of a MySQL-protocol server from its version string and storage engine: TiDB's
/// when the version names it (TiDB answers as MySQL), else MySQL's or MariaDB's, InnoDB or
/// MyRocks (the `ddl` of MySQL's row).
pub fn for_version(version: &str, engine: Option<&str>) -> Box<dyn DdlDialect> {
    if version.to_ascii_lowercase().contains("tidb") {
        return Box::new(Tidb);
    }
    Box::new(Mysql {
        mariadb: version.to_ascii_lowercase().contains("mariadb"),
        rocksdb: engine.is_some_and(|e| e.eq_ignore_ascii_case("rocksdb")),
    })
}

/// Error numbers worth running a DDL again for: lock wait timeout (1205, also a metadata-lock
/// wait past `lock_wait_timeout`), deadlock (1213), the online row log overflowed
/// `innodb_online_alter_log_max_size` (1799).
const RETRY_CODES: [&str; 3] = ["1205", "1213", "1799"];

/// TiDB's: write conflict (9007), information schema changed (8028), plus lock wait timeout
/// and deadlock.
const TIDB_RETRY_CODES: [&str; 4] = ["9007", "8028", "1205", "1213"];

fn index_list(i: &IndexSpec) -> String {
    format!(
        "ADD {}INDEX {} ({})",
        if i.unique { "UNIQUE " } else { "" },
        i.name,
        i.columns.join(", ")
    )
}

/// The change as an `ALTER TABLE` clause, for the MySQL tools (pt-online-schema-change's
/// `--alter`, gh-ost's): `ADD INDEX a (x), ADD INDEX b (y)`, `DROP INDEX a`, `ADD COLUMN c INT
/// NULL`, `ENGINE=<the table's engine>` (a rebuild).
pub fn alter_clause(req: &DdlRequest, engine: &str) -> Result<String> {
    check_request(req)?;
    Ok(match req.kind {
        DdlKind::AddIndex => req.indexes.iter().map(index_list).collect::<Vec<_>>().join(", "),
        DdlKind::DropIndex => req
            .indexes
            .iter()
            .map(|i| format!("DROP INDEX {}", i.name))
            .collect::<Vec<_>>()
            .join(", "),
        DdlKind::AddColumn => format!("ADD COLUMN {} INT NULL", req.column),
        DdlKind::Rebuild => format!("ENGINE={}", check_ident(engine)?),
    })
}

fn add_indexes(t: &str, idxs: &[IndexSpec], tail: &str) -> String {
    let adds: Vec<String> = idxs.iter().map(index_list).collect();
    format!("ALTER TABLE {t} {}{tail}", adds.join(", "))
}

fn drop_indexes(t: &str, idxs: &[IndexSpec], tail: &str) -> String {
    let drops: Vec<String> = idxs
        .iter()
        .map(|i| format!("DROP INDEX {}", i.name))
        .collect();
    format!("ALTER TABLE {t} {}{tail}", drops.join(", "))
}

/// What PROCESSLIST says the DDL's session waits for and who waits behind it.
fn processlist_waits(conn: &mut dyn Conn, id: i64) -> Result<Waits> {
    let mut w = Waits::default();
    let rows = conn.query_rows(&format!(
        "SELECT STATE, TIME FROM information_schema.PROCESSLIST WHERE ID = {id}"
    ))?;
    if let Some(r) = rows.first() {
        let state = r.first().cloned().flatten().unwrap_or_default();
        if state.to_ascii_lowercase().starts_with("waiting for") {
            let secs = r.get(1).cloned().flatten().and_then(|s| s.parse().ok());
            w.ddl_waits = Some((state, secs));
        }
    }
    let rows = conn.query_rows(&format!(
        "SELECT COUNT(*), MAX(TIME) FROM information_schema.PROCESSLIST \
         WHERE ID <> {id} AND ID <> CONNECTION_ID() AND STATE LIKE 'Waiting for table metadata lock%'"
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

/// The checks after an ADD INDEX on the MySQL protocol: counts through the index and through
/// the PRIMARY key in one consistent snapshot, and a query on the index's first column that
/// should use it.
fn index_checks(conn: &mut dyn Conn, req: &DdlRequest, out: &mut Vec<Check>) {
    let t = &req.table;
    for i in &req.indexes {
        let first = &i.columns[0];
        let counts = counts_in_snapshot(
            conn,
            &["START TRANSACTION WITH CONSISTENT SNAPSHOT"],
            &[
                format!(
                    "SELECT COUNT(*) FROM {t} FORCE INDEX ({}) WHERE {first} IS NOT NULL",
                    i.name
                ),
                format!("SELECT COUNT(*) FROM {t} FORCE INDEX (PRIMARY) WHERE {first} IS NOT NULL"),
            ],
        );
        out.push(count_check(&i.name, counts));
        match probe_query(conn, t, i) {
            Ok(Some(q)) => {
                // The JSON plan names the index chosen as `"key": "name"` (possible_keys
                // also lists it, so the tabular plan's text would not do).
                let plan = crate::dbms::ddl::rows_text(conn, &format!("EXPLAIN FORMAT=JSON {q}"))
                    .map(|j| {
                        let flat: String = j.split_whitespace().collect();
                        let keys: Vec<&str> = flat
                            .match_indices("\"key\":\"")
                            .map(|(at, m)| {
                                let rest = &flat[at + m.len()..];
                                &rest[..rest.find('"').unwrap_or(rest.len())]
                            })
                            .collect();
                        format!("key={}", keys.join(","))
                    });
                out.push(plan_check(&i.name, &q, plan));
            }
            Ok(None) => {}
            Err(e) => out.push(plan_check(&i.name, "a query on it", Err(e))),
        }
    }
}

/// `CHECK TABLE t`: its last row says `OK` or what is wrong. `None` when the engine does not
/// support it.
fn check_table(conn: &mut dyn Conn, t: &str) -> Option<Check> {
    match conn.query_rows(&format!("CHECK TABLE {t}")) {
        Ok(rows) => {
            let texts: Vec<String> = rows
                .iter()
                .map(|r| {
                    format!(
                        "{}: {}",
                        r.get(2).cloned().flatten().unwrap_or_default(),
                        r.get(3).cloned().flatten().unwrap_or_default()
                    )
                })
                .collect();
            let all = texts.join("; ");
            if all.to_ascii_lowercase().contains("doesn't support") {
                return None;
            }
            let ok = rows
                .last()
                .and_then(|r| r.get(3).cloned().flatten())
                .is_some_and(|m| m.eq_ignore_ascii_case("OK"));
            Some(Check {
                name: "check table".into(),
                ok,
                detail: format!("CHECK TABLE {t}: {all}"),
            })
        }
        Err(e) => Some(Check {
            name: "check table".into(),
            ok: false,
            detail: format!("CHECK TABLE {t} failed: {}", crate::format::error_line(&e)),
        }),
    }
}

impl DdlDialect for Mysql {
    fn external_alter_clause(&self, req: &DdlRequest, engine: &str) -> Option<String> {
        alter_clause(req, engine).ok()
    }

    fn name(&self) -> &'static str {
        match (self.mariadb, self.rocksdb) {
            (_, true) => "MyRocks",
            (true, false) => "MariaDB InnoDB",
            (false, false) => "MySQL InnoDB",
        }
    }

    fn index_build_note(&self) -> Option<&'static str> {
        self.rocksdb.then_some(
            "MyRocks: ADD INDEX blocks writes (LOCK=SHARED; it refuses LOCK=NONE), so the \
             online index builds are LOCK=SHARED too; several indexes in one ALTER take one \
             table scan each",
        )
    }

    fn plan(&self, req: &DdlRequest) -> Result<DdlPlan> {
        check_request(req)?;
        let t = &req.table;
        let want_online = req.lock == LockChoice::Online;
        let mut p = DdlPlan::default();
        match req.kind {
            DdlKind::AddIndex => {
                p.statements =
                    self.add_indexes_sql(t, &req.indexes, want_online, Algorithm::InPlace)?;
                if self.rocksdb {
                    p.lock = "LOCK=SHARED (MyRocks's in-place ADD INDEX): reads go on, writes wait for the whole build".into();
                    if want_online {
                        p.notes.push("MyRocks cannot add an index online (it refuses LOCK=NONE): the build blocks writes".into());
                    }
                    if req.indexes.len() > 1 {
                        p.notes.push(format!(
                            "MyRocks scans the table once per added index ({} scans)",
                            req.indexes.len()
                        ));
                    }
                } else if want_online {
                    p.online = true;
                    p.lock = "LOCK=NONE (ALGORITHM=INPLACE): reads and writes go on; an exclusive metadata lock for a moment at the start and the end".into();
                } else {
                    p.lock = "LOCK=SHARED (ALGORITHM=INPLACE): reads go on, writes wait for the whole build".into();
                }
                p.undo
                    .push(drop_indexes(t, &req.indexes, ", ALGORITHM=INPLACE"));
            }
            DdlKind::DropIndex => {
                p.setup.push(add_indexes(t, &req.indexes, ""));
                let online = want_online && !self.rocksdb;
                p.online = want_online;
                p.statements.push(drop_indexes(
                    t,
                    &req.indexes,
                    if online {
                        ", ALGORITHM=INPLACE, LOCK=NONE"
                    } else if want_online {
                        ", ALGORITHM=INPLACE"
                    } else {
                        ", ALGORITHM=INPLACE, LOCK=SHARED"
                    },
                ));
                p.lock = if online {
                    "LOCK=NONE: dropping an index changes the dictionary only"
                } else if want_online {
                    "the lock MyRocks chooses (no LOCK clause): dropping an index changes the dictionary only"
                } else {
                    "LOCK=SHARED: writes wait while it runs"
                }
                .into();
            }
            DdlKind::AddColumn => {
                let c = &req.column;
                if self.rocksdb {
                    p.statements.push(format!(
                        "ALTER TABLE {t} ADD COLUMN {c} INT NULL, ALGORITHM=COPY, LOCK=SHARED"
                    ));
                    p.lock = "LOCK=SHARED (ALGORITHM=COPY): MyRocks copies the table; writes wait for the whole copy".into();
                    if want_online {
                        p.notes.push(
                            "MyRocks has no instant or in-place ADD COLUMN: the table is copied"
                                .into(),
                        );
                    }
                } else if want_online {
                    p.online = true;
                    p.statements.push(format!(
                        "ALTER TABLE {t} ADD COLUMN {c} INT NULL, ALGORITHM=INSTANT"
                    ));
                    p.lock = "ALGORITHM=INSTANT: the dictionary only; an exclusive metadata lock for a moment".into();
                } else {
                    p.statements.push(format!(
                        "ALTER TABLE {t} ADD COLUMN {c} INT NULL, ALGORITHM=COPY, LOCK=SHARED"
                    ));
                    p.lock = "LOCK=SHARED (ALGORITHM=COPY): the table is copied; writes wait for the whole copy".into();
                }
                p.undo.push(format!("ALTER TABLE {t} DROP COLUMN {c}"));
            }
            DdlKind::Rebuild => {
                if want_online && !self.rocksdb {
                    p.online = true;
                    p.statements.push(format!(
                        "ALTER TABLE {t} FORCE, ALGORITHM=INPLACE, LOCK=NONE"
                    ));
                    p.lock = "LOCK=NONE (ALGORITHM=INPLACE): the table is rebuilt in place; reads and writes go on".into();
                } else {
                    p.statements.push(format!(
                        "ALTER TABLE {t} FORCE, ALGORITHM=COPY, LOCK=SHARED"
                    ));
                    p.lock = "LOCK=SHARED (ALGORITHM=COPY): the table is copied; writes wait for the whole copy".into();
                    if want_online {
                        p.notes
                            .push("MyRocks rebuilds a table by copying it: writes blocked".into());
                    }
                }
            }
        }
        Ok(p)
    }

    fn session_id_sql(&self) -> Option<&'static str> {
        Some("SELECT CONNECTION_ID()")
    }

    fn cancel_sql(&self, id: i64) -> Option<String> {
        Some(format!("KILL QUERY {id}"))
    }

    fn waits(&self, conn: &mut dyn Conn, id: i64) -> Result<Waits> {
        processlist_waits(conn, id)
    }

    fn ddl_retryable(&self, e: &anyhow::Error) -> bool {
        RETRY_CODES.contains(&crate::dbms::ddl::error_code(e).as_str())
    }

    /// One `ALTER TABLE` for all of `idxs` (InnoDB feeds every new index from one scan of the
    /// clustered index; MyRocks scans once per index). Blocking: `LOCK=SHARED` (reads go on,
    /// writes wait). Online: `LOCK=NONE` on InnoDB; MyRocks refuses `LOCK=NONE` (its in-place
    /// ADD INDEX blocks writes), so its online build is `LOCK=SHARED` too.
    fn add_indexes_sql(
        &self,
        table: &str,
        idxs: &[IndexSpec],
        online: bool,
        algorithm: Algorithm,
    ) -> Result<Vec<String>> {
        if idxs.is_empty() {
            bail!("no index to build");
        }
        let lock = if online && !self.rocksdb {
            "NONE"
        } else {
            "SHARED"
        };
        let algorithm = match algorithm {
            Algorithm::Session => "",
            Algorithm::InPlace => ", ALGORITHM=INPLACE",
        };
        Ok(vec![add_indexes(
            table,
            idxs,
            &format!("{algorithm}, LOCK={lock}"),
        )])
    }

    /// `ALGORITHM=INPLACE` so that dropping an index never copies the table, whatever
    /// `alter_algorithm` a swept knob left on the connection; dropping an index changes the
    /// dictionary only, online or not.
    fn drop_index_sql(&self, table: &str, index: &str, _online: bool) -> String {
        format!("ALTER TABLE {table} DROP INDEX {index}, ALGORITHM=INPLACE")
    }

    fn lock_timeout_sql(&self, secs: u32) -> Option<String> {
        Some(format!("SET SESSION lock_wait_timeout = {secs}"))
    }

    fn verify(&self, conn: &mut dyn Conn, req: &DdlRequest) -> Vec<Check> {
        let t = &req.table;
        let mut out = Vec::new();
        match req.kind {
            DdlKind::AddIndex => index_checks(conn, req, &mut out),
            DdlKind::DropIndex => {
                for i in &req.indexes {
                    out.push(gone_check(conn, t, &i.name));
                }
            }
            DdlKind::AddColumn => out.push(crate::dbms::ddl::column_check(conn, t, &req.column)),
            DdlKind::Rebuild => {}
        }
        if req.kind != DdlKind::DropIndex {
            out.extend(check_table(conn, t));
        }
        out
    }
}

/// TiDB: every ADD INDEX is online (its schema change walks the index through delete-only,
/// write-only and write-reorg states while it backfills); several indexes in one statement
/// (v6.2+). Its build knobs (`tidb_ddl_reorg_worker_cnt`, `tidb_ddl_reorg_batch_size`) are
/// server-wide and set with `SET GLOBAL`, no restart. Not run here: no TiDB on this machine.
pub struct Tidb;

impl DdlDialect for Tidb {
    fn external_alter_clause(&self, req: &DdlRequest, engine: &str) -> Option<String> {
        alter_clause(req, engine).ok()
    }

    fn name(&self) -> &'static str {
        "TiDB"
    }

    fn plan(&self, req: &DdlRequest) -> Result<DdlPlan> {
        check_request(req)?;
        let t = &req.table;
        let mut p = DdlPlan {
            online: true,
            ..Default::default()
        };
        if req.lock == LockChoice::Blocking && req.kind != DdlKind::Rebuild {
            p.notes
                .push("TiDB has no blocking schema change: it runs online".into());
        }
        match req.kind {
            DdlKind::AddIndex => {
                p.statements.push(add_indexes(t, &req.indexes, ""));
                p.undo.push(drop_indexes(t, &req.indexes, ""));
                p.lock = "none: TiDB's online schema change (delete-only, write-only, write-reorg, public); the backfill may conflict with writes to the indexed column".into();
            }
            DdlKind::DropIndex => {
                p.setup.push(add_indexes(t, &req.indexes, ""));
                p.statements.push(drop_indexes(t, &req.indexes, ""));
                p.lock = "none: TiDB's online schema change".into();
            }
            DdlKind::AddColumn => {
                p.statements.push(format!(
                    "ALTER TABLE {t} ADD COLUMN {} INT NULL",
                    req.column
                ));
                p.undo
                    .push(format!("ALTER TABLE {t} DROP COLUMN {}", req.column));
                p.lock = "none: TiDB adds a column in its dictionary only".into();
            }
            DdlKind::Rebuild => bail!("TiDB has no table rebuild statement"),
        }
        Ok(p)
    }

    fn session_id_sql(&self) -> Option<&'static str> {
        Some("SELECT CONNECTION_ID()")
    }

    fn ddl_retryable(&self, e: &anyhow::Error) -> bool {
        TIDB_RETRY_CODES.contains(&crate::dbms::ddl::error_code(e).as_str())
    }

    /// `SET GLOBAL` for TiDB's DDL knobs (`tidb_ddl_*`: reorg worker count, batch size, ...).
    fn global_knob_sql(&self, name: &str, value: &str) -> Option<String> {
        let name = name.to_ascii_lowercase();
        if !name.starts_with("tidb_ddl_") || crate::dbms::ddl::check_ident(&name).is_err() {
            return None;
        }
        let literal = if value.parse::<f64>().is_ok() {
            value.to_string()
        } else if value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            format!("'{value}'")
        } else {
            return None;
        };
        Some(format!("SET GLOBAL {name} = {literal}"))
    }

    fn progress_sql(&self) -> Option<&'static str> {
        Some("ADMIN SHOW DDL JOBS 1")
    }

    fn drop_index_sql(&self, table: &str, index: &str, _online: bool) -> String {
        format!("ALTER TABLE {table} DROP INDEX {index}")
    }

    fn verify(&self, conn: &mut dyn Conn, req: &DdlRequest) -> Vec<Check> {
        let mut out = Vec::new();
        match req.kind {
            DdlKind::AddIndex => {
                index_checks(conn, req, &mut out);
                for i in &req.indexes {
                    let sql = format!("ADMIN CHECK INDEX {} {}", req.table, i.name);
                    out.push(match conn.execute(&sql) {
                        Ok(()) => Check {
                            name: "admin check".into(),
                            ok: true,
                            detail: format!("{sql}: OK"),
                        },
                        Err(e) => Check {
                            name: "admin check".into(),
                            ok: false,
                            detail: format!("{sql}: {}", crate::format::error_line(&e)),
                        },
                    });
                }
            }
            DdlKind::DropIndex => {
                for i in &req.indexes {
                    out.push(gone_check(conn, &req.table, &i.name));
                }
            }
            DdlKind::AddColumn => out.push(crate::dbms::ddl::column_check(
                conn,
                &req.table,
                &req.column,
            )),
            DdlKind::Rebuild => {}
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::ddl::tests::req;

    #[test]
    fn alter_clauses() {
        let r = req(DdlKind::AddIndex, LockChoice::Online, 2);
        assert_eq!(
            alter_clause(&r, "InnoDB").unwrap(),
            "ADD INDEX c_idx (c), ADD INDEX pad_idx (pad)"
        );
        let r = req(DdlKind::DropIndex, LockChoice::Online, 1);
        assert_eq!(alter_clause(&r, "InnoDB").unwrap(), "DROP INDEX c_idx");
        let r = req(DdlKind::AddColumn, LockChoice::Online, 0);
        assert_eq!(
            alter_clause(&r, "InnoDB").unwrap(),
            "ADD COLUMN ixb_col INT NULL"
        );
        let r = req(DdlKind::Rebuild, LockChoice::Online, 0);
        assert_eq!(alter_clause(&r, "InnoDB").unwrap(), "ENGINE=InnoDB");
        assert!(alter_clause(&r, "Inno;DB").is_err());
    }

    #[test]
    fn innodb_statements() {
        let m = Mysql {
            mariadb: true,
            rocksdb: false,
        };
        let p = m
            .plan(&req(DdlKind::AddIndex, LockChoice::Online, 2))
            .unwrap();
        assert_eq!(
            p.statements,
            ["ALTER TABLE sbtest1 ADD INDEX c_idx (c), ADD INDEX pad_idx (pad), ALGORITHM=INPLACE, LOCK=NONE"]
        );
        assert!(p.online && p.lock.starts_with("LOCK=NONE"));
        assert_eq!(
            p.undo,
            ["ALTER TABLE sbtest1 DROP INDEX c_idx, DROP INDEX pad_idx, ALGORITHM=INPLACE"]
        );
        let p = m
            .plan(&req(DdlKind::AddIndex, LockChoice::Blocking, 1))
            .unwrap();
        assert!(p.statements[0].ends_with("LOCK=SHARED") && !p.online);
        let p = m
            .plan(&req(DdlKind::AddColumn, LockChoice::Online, 0))
            .unwrap();
        assert_eq!(
            p.statements,
            ["ALTER TABLE sbtest1 ADD COLUMN ixb_col INT NULL, ALGORITHM=INSTANT"]
        );
        let p = m
            .plan(&req(DdlKind::Rebuild, LockChoice::Online, 0))
            .unwrap();
        assert_eq!(
            p.statements,
            ["ALTER TABLE sbtest1 FORCE, ALGORITHM=INPLACE, LOCK=NONE"]
        );
        let p = m
            .plan(&req(DdlKind::DropIndex, LockChoice::Online, 1))
            .unwrap();
        assert_eq!(p.setup, ["ALTER TABLE sbtest1 ADD INDEX c_idx (c)"]);
        assert_eq!(m.cancel_sql(7).unwrap(), "KILL QUERY 7");
    }

    #[test]
    fn myrocks_blocks_writes_and_says_so() {
        assert_eq!(
            Mysql {
                mariadb: true,
                rocksdb: true
            }
            .index_build_note(),
            Some(
                "MyRocks: ADD INDEX blocks writes (LOCK=SHARED; it refuses LOCK=NONE), so the \
                 online index builds are LOCK=SHARED too; several indexes in one ALTER take one \
                 table scan each"
            )
        );
        assert_eq!(
            Mysql {
                mariadb: true,
                rocksdb: false
            }
            .index_build_note(),
            None
        );
        let m = Mysql {
            mariadb: true,
            rocksdb: true,
        };
        let p = m
            .plan(&req(DdlKind::AddIndex, LockChoice::Online, 2))
            .unwrap();
        assert!(!p.online);
        assert!(p.statements[0].ends_with("ALGORITHM=INPLACE, LOCK=SHARED"));
        assert!(p.notes[0].contains("refuses LOCK=NONE"), "{:?}", p.notes);
        assert!(p.notes[1].contains("2 scans"));
        let p = m
            .plan(&req(DdlKind::AddColumn, LockChoice::Online, 0))
            .unwrap();
        assert!(p.statements[0].contains("ALGORITHM=COPY") && !p.online);
    }

    #[test]
    fn tidb_knobs_and_statements() {
        let t = Tidb;
        let p = t
            .plan(&req(DdlKind::AddIndex, LockChoice::Online, 2))
            .unwrap();
        assert_eq!(
            p.statements,
            ["ALTER TABLE sbtest1 ADD INDEX c_idx (c), ADD INDEX pad_idx (pad)"]
        );
        assert!(p.online);
        assert_eq!(
            t.global_knob_sql("tidb_ddl_reorg_worker_cnt", "4").unwrap(),
            "SET GLOBAL tidb_ddl_reorg_worker_cnt = 4"
        );
        assert_eq!(
            t.global_knob_sql("TIDB_DDL_REORG_BATCH_SIZE", "256")
                .unwrap(),
            "SET GLOBAL tidb_ddl_reorg_batch_size = 256"
        );
        assert_eq!(
            t.global_knob_sql("tidb_ddl_enable_fast_reorg", "ON")
                .unwrap(),
            "SET GLOBAL tidb_ddl_enable_fast_reorg = 'ON'"
        );
        assert!(t
            .global_knob_sql("tidb_ddl_reorg_worker_cnt", "1; DROP")
            .is_none());
        assert!(t.global_knob_sql("innodb_sort_buffer_size", "1").is_none());
        assert!(t
            .plan(&req(DdlKind::Rebuild, LockChoice::Online, 0))
            .is_err());
        assert_eq!(t.progress_sql(), Some("ADMIN SHOW DDL JOBS 1"));
        // Mysql's knobs go through the index lab's scopes.
        let m = Mysql {
            mariadb: false,
            rocksdb: false,
        };
        assert!(m
            .global_knob_sql("tidb_ddl_reorg_worker_cnt", "4")
            .is_none());
    }

    #[test]
    fn retry_codes() {
        assert!(RETRY_CODES.contains(&"1799") && !RETRY_CODES.contains(&"1062"));
        assert!(TIDB_RETRY_CODES.contains(&"9007"));
    }
}
