//! MySQL's and MariaDB's SQL dialect (InnoDB and MyRocks; also Galera nodes and the Spider
//! head): `?` placeholders, `AUTO_INCREMENT`, `ENGINE=` table options and `FORCE INDEX`, a
//! table COMMENT as a table's identity, `information_schema` queries, `PARTITION BY RANGE` with
//! hash sub-partitions. MariaDB differs in one thing ixbench uses: no index on an expression.

use std::collections::BTreeMap;

use anyhow::{Context, Result};

use crate::dbms::dialect::{
    split_schema, CopyDdl, DbmsSql, HashParts, PartitionPlan, Query, RangePart, TableIdentity,
};
use crate::dbms::mysql::MAX_PARAMS;
use crate::dbms::{Conn, SqlDialect, TextLiteral};

/// MySQL's (and MariaDB's) [`SqlDialect`] for tables of storage engine `engine` (as CREATE
/// TABLE names it: `InnoDB`, `ROCKSDB`); `mariadb` for a MariaDB server.
pub fn sql_dialect(engine: &str, mariadb: bool) -> SqlDialect {
    let sql: &'static Mysql = if mariadb { &MARIADB } else { &MYSQL };
    SqlDialect::new(sql, format!(" ENGINE={engine}"))
}

/// MySQL's [`DbmsSql`].
pub static MYSQL: Mysql = Mysql { mariadb: false };

/// MariaDB's [`DbmsSql`].
pub static MARIADB: Mysql = Mysql { mariadb: true };

/// The PROCESSLIST states of a session waiting for a lock (metadata, table, global read or
/// backup lock, InnoDB row lock).
const WAIT_STATES: &str = "(p.STATE LIKE 'Waiting for%lock%' OR p.STATE LIKE '%lock wait%')";

/// MySQL's or MariaDB's [`DbmsSql`].
pub struct Mysql {
    /// A MariaDB server.
    pub mariadb: bool,
}

/// `'SCHEMA'`, or `DATABASE()` when the table names none.
fn schema_sql(schema: Option<&str>) -> String {
    schema.map_or("DATABASE()".into(), |s| format!("'{s}'"))
}

impl DbmsSql for Mysql {
    fn auto_pk(&self) -> &'static str {
        "bigint NOT NULL AUTO_INCREMENT PRIMARY KEY"
    }

    fn int_type(&self) -> &'static str {
        "int"
    }

    fn bigint_type(&self) -> &'static str {
        "bigint"
    }

    fn timestamp_type(&self) -> &'static str {
        "datetime"
    }

    fn text_type(&self, n: usize) -> String {
        format!("varchar({n})")
    }

    fn max_params(&self) -> usize {
        MAX_PARAMS
    }

    fn use_index(&self, index: &str) -> String {
        format!(" FORCE INDEX ({index})")
    }

    fn push_text_literal(&self, out: &mut String, v: &str) {
        TextLiteral::Mysql.push(out, v)
    }

    fn lock_wait_sql(&self, secs: u32) -> Option<(String, &'static str)> {
        Some((
            format!("SET SESSION lock_wait_timeout = {secs}"),
            "SET SESSION lock_wait_timeout = DEFAULT",
        ))
    }

    fn rebuild_names(&self, engine: Option<&str>) -> Option<Vec<String>> {
        // `Mysql::rebuild_statements` with their variants.
        let engine = format!("ENGINE={}", engine.unwrap_or("InnoDB"));
        let mut names = self.rebuild_variants(engine.clone(), String::new());
        names.push((engine, String::new()));
        names.push(("OPTIMIZE".into(), String::new()));
        Some(names.into_iter().map(|(n, _)| n).collect())
    }

    fn session_id_sql(&self) -> Option<&'static str> {
        Some("SELECT CONNECTION_ID()")
    }

    fn lock_wait_of_sql(&self, id: i64) -> Option<String> {
        // MySQL 8 removed information_schema's InnoDB lock views: there the wait is read from
        // PROCESSLIST alone and every holder from performance_schema (lock_holders_sql).
        if !self.mariadb {
            return Some(format!(
                "SELECT p.TIME, p.STATE, NULL FROM information_schema.PROCESSLIST p \
                 WHERE p.ID = {id} AND {WAIT_STATES}"
            ));
        }
        // A row lock's holder is in InnoDB's lock waits; a metadata lock's (an open
        // transaction that read the table, LOCK TABLES, FLUSH TABLES WITH READ LOCK) only in
        // the METADATA_LOCK_INFO plugin, asked apart (lock_holders_sql).
        Some(format!(
            "SELECT p.TIME, p.STATE, (SELECT GROUP_CONCAT(DISTINCT CONCAT('session ', \
             t.trx_mysql_thread_id) SEPARATOR '; ') FROM information_schema.INNODB_TRX w \
             JOIN information_schema.INNODB_LOCK_WAITS l ON l.requesting_trx_id = w.trx_id \
             JOIN information_schema.INNODB_TRX t ON t.trx_id = l.blocking_trx_id \
             WHERE w.trx_mysql_thread_id = p.ID) \
             FROM information_schema.PROCESSLIST p WHERE p.ID = {id} AND {WAIT_STATES}"
        ))
    }

    fn lock_holders_sql(&self, id: i64, waits_for: &str) -> Option<String> {
        // FLUSH TABLES WITH READ LOCK: a global read lock (MySQL, MariaDB before 10.4), a
        // backup lock (MariaDB 10.4+).
        let global = ["global read lock", "commit lock", "backup lock"]
            .iter()
            .any(|w| waits_for.contains(w));
        if !self.mariadb {
            // MySQL 8: performance_schema's metadata locks (on by default), granted to
            // another session: the global or commit lock, or one on this database's tables.
            let which = if global {
                "m.OBJECT_TYPE IN ('GLOBAL', 'COMMIT', 'BACKUP LOCK')"
            } else {
                "m.OBJECT_SCHEMA = DATABASE()"
            };
            return Some(format!(
                "SELECT GROUP_CONCAT(DISTINCT CONCAT('session ', t.PROCESSLIST_ID, ' (', \
                 COALESCE(t.PROCESSLIST_USER, '?'), ', ', COALESCE(t.PROCESSLIST_COMMAND, '?'), \
                 ': ', COALESCE(LEFT(t.PROCESSLIST_INFO, 60), m.LOCK_TYPE), ')') SEPARATOR '; ') \
                 FROM performance_schema.metadata_locks m \
                 JOIN performance_schema.threads t ON t.THREAD_ID = m.OWNER_THREAD_ID \
                 WHERE m.LOCK_STATUS = 'GRANTED' AND t.PROCESSLIST_ID <> {id} \
                 AND t.PROCESSLIST_ID <> CONNECTION_ID() AND ({which})"
            ));
        }
        let which = if global {
            "m.LOCK_TYPE LIKE 'Global read lock%' OR m.LOCK_TYPE LIKE 'Commit lock%' \
             OR m.LOCK_TYPE LIKE 'Backup lock%'"
        } else {
            "m.TABLE_SCHEMA = DATABASE()"
        };
        Some(format!(
            "SELECT GROUP_CONCAT(DISTINCT CONCAT('session ', p.ID, ' (', p.USER, ', ', \
             p.COMMAND, ': ', COALESCE(LEFT(p.INFO, 60), m.LOCK_TYPE), ')') SEPARATOR '; ') \
             FROM information_schema.METADATA_LOCK_INFO m \
             JOIN information_schema.PROCESSLIST p ON p.ID = m.THREAD_ID \
             WHERE m.THREAD_ID <> {id} AND m.THREAD_ID <> CONNECTION_ID() AND ({which})"
        ))
    }

    fn cancel_statement_sql(&self, id: i64) -> Option<String> {
        Some(format!("KILL QUERY {id}"))
    }

    fn name(&self) -> &'static str {
        if self.mariadb {
            "MariaDB"
        } else {
            "MySQL"
        }
    }

    fn float_type(&self) -> &'static str {
        "double"
    }

    fn int_auto_pk(&self) -> &'static str {
        "INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY"
    }

    fn repeat_text_sql(&self, unit: &str, times: u64, len: u64) -> String {
        format!("SUBSTRING(REPEAT('{unit}', {times}), 1, {len})")
    }

    fn text_cast(&self, column: &str) -> String {
        column.to_string()
    }

    fn identifier_limit(&self) -> Option<(usize, &'static str)> {
        Some((64, "MySQL/MariaDB"))
    }

    fn index_prefix_lengths(&self) -> bool {
        true
    }

    fn index_expressions(&self) -> bool {
        !self.mariadb
    }

    fn storage_engines(&self) -> bool {
        true
    }

    fn read_only_session_sql(&self) -> Option<&'static str> {
        Some("SET SESSION TRANSACTION READ ONLY")
    }

    fn storage_order(&self, query: &mut Query, table: &str) -> Result<Option<String>> {
        let (schema, name) = split_schema(table);
        let pk = query(&format!(
            "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE \
             WHERE TABLE_SCHEMA = {} AND TABLE_NAME = '{name}' \
             AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION",
            schema_sql(schema)
        ))?;
        let cols: Vec<String> = pk
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .map(|c| self.quote_ident(&c))
            .collect();
        Ok((!cols.is_empty()).then(|| cols.join(", ")))
    }

    fn statements_note(&self) -> Option<&'static str> {
        Some(
            "server-side prepared once per connection (--statements text: literal SQL over \
             COM_QUERY)",
        )
    }

    fn table_identity(&self) -> TableIdentity {
        TableIdentity::Marker
    }

    fn identity_sql(&self, table: &str) -> Option<String> {
        Some(format!(
            "SELECT TABLE_COMMENT FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{table}'"
        ))
    }

    fn mark_create_sql(&self, create: &str, _table: &str, marker: &str) -> String {
        format!("{create} COMMENT='{marker}'")
    }

    fn quote_ident(&self, name: &str) -> String {
        format!("`{}`", name.replace('`', "``"))
    }

    fn insert_columns_sql(&self, table: &str) -> Option<String> {
        let (schema, name) = split_schema(table);
        Some(format!(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = {} \
             AND TABLE_NAME = '{name}' AND EXTRA NOT LIKE '%VIRTUAL GENERATED%' \
             AND EXTRA NOT LIKE '%STORED GENERATED%' AND EXTRA NOT LIKE '%PERSISTENT GENERATED%' \
             ORDER BY ORDINAL_POSITION",
            schema_sql(schema)
        ))
    }

    fn columns_sql(&self, table: &str) -> Option<String> {
        let (schema, name) = split_schema(table);
        Some(format!(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = {} \
             AND TABLE_NAME = '{name}' ORDER BY ORDINAL_POSITION",
            schema_sql(schema)
        ))
    }

    fn secondary_indexes_sql(&self, table: &str) -> Option<String> {
        let (schema, name) = split_schema(table);
        Some(format!(
            "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = {} \
             AND TABLE_NAME = '{name}' AND INDEX_NAME <> 'PRIMARY'",
            schema_sql(schema)
        ))
    }

    fn table_bytes_sql(&self, table: &str) -> Option<String> {
        let (schema, name) = split_schema(table);
        Some(format!(
            "SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = {} AND TABLE_NAME = '{name}'",
            schema_sql(schema)
        ))
    }

    fn copy_table_ddl(&self, conn: &mut dyn Conn, src: &str, dst: &str) -> Result<CopyDdl> {
        let rows = conn.query_rows(&format!("SHOW CREATE TABLE {}", self.quote_table(src)))?;
        let ddl = rows
            .first()
            .and_then(|r| r.get(1).cloned().flatten())
            .with_context(|| format!("no definition for {src}"))?;
        Ok(CopyDdl {
            create: copy_create(&ddl, dst)?,
            indexes: Vec::new(),
        })
    }

    fn defer_secondary_keys(&self, create: &str, dst: &str) -> (String, Vec<String>) {
        let (c, adds) = split_keys(create);
        let mut later = Vec::new();
        if !adds.is_empty() {
            later.push(format!("ALTER TABLE {dst} {}", adds.join(", ")));
        }
        (c, later)
    }

    fn sample_rows_sql(&self, src: &str, n: u64) -> String {
        format!("SELECT * FROM {src} ORDER BY RAND() LIMIT {n}")
    }

    fn sample_pct_sql(&self, src: &str, pct: f64) -> String {
        format!("SELECT * FROM {src} WHERE RAND() < {}", pct / 100.0)
    }

    fn nonlocking_read_sql(&self) -> Option<(&'static str, &'static str)> {
        Some((
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
            "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        ))
    }

    fn rebuild_variants(&self, name: String, sql: String) -> Vec<(String, String)> {
        if !name.starts_with("ENGINE=") {
            return vec![(name, sql)];
        }
        ["COPY", "INPLACE"]
            .iter()
            .map(|alg| {
                (
                    format!("{name} ALGORITHM={alg}"),
                    format!("{sql}, ALGORITHM={alg}"),
                )
            })
            .collect()
    }

    fn range_partitions(&self) -> bool {
        true
    }

    fn partition_table_sql(
        &self,
        table: &str,
        column: &str,
        hash: HashParts,
        parts: &[RangePart],
    ) -> Vec<String> {
        // The table COMMENT ixbench marks it with must precede a PARTITION BY clause, so the
        // new table is partitioned once created.
        let parts: Vec<String> = parts
            .iter()
            .map(|p| format!("PARTITION {} VALUES LESS THAN ({})", p.name, p.hi))
            .collect();
        vec![format!(
            "ALTER TABLE {table} PARTITION BY RANGE ({column}){} ({})",
            if hash.count > 0 {
                format!(
                    " SUBPARTITION BY HASH ({}) SUBPARTITIONS {}",
                    hash.column, hash.count
                )
            } else {
                String::new()
            },
            parts.join(", ")
        )]
    }

    fn add_range_partition_sql(
        &self,
        table: &str,
        _hash: HashParts,
        part: &RangePart,
    ) -> Vec<String> {
        vec![format!(
            "ALTER TABLE {table} ADD PARTITION (PARTITION {} VALUES LESS THAN ({}))",
            part.name, part.hi
        )]
    }

    fn partitions_sql(&self, table: &str) -> Option<String> {
        Some(format!(
            "SELECT DISTINCT partition_name FROM information_schema.partitions \
             WHERE table_schema = DATABASE() AND table_name = '{table}' \
             AND partition_name IS NOT NULL"
        ))
    }

    fn explain_partitions(
        &self,
        conn: &mut dyn Conn,
        query: &str,
        _table: &str,
    ) -> Result<PartitionPlan> {
        // EXPLAIN PARTITIONS: the 4th column lists the partitions read (`p3_p3sp0,...`).
        let rows = conn.query_rows(&format!("EXPLAIN PARTITIONS {query}"))?;
        let mut read = BTreeMap::<u64, u64>::new();
        let mut text = Vec::new();
        for r in &rows {
            let cell = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
            text.push(format!(
                "table={} partitions={} type={} key={} rows={}",
                cell(2),
                cell(3),
                cell(4),
                cell(6),
                cell(9)
            ));
            for p in cell(3).split(',').filter(|s| !s.is_empty()) {
                let range = p.split('_').next().unwrap_or(p);
                if let Some(n) = range.strip_prefix('p').and_then(|s| s.parse().ok()) {
                    *read.entry(n).or_default() += 1;
                }
            }
        }
        Ok(PartitionPlan {
            text: text.join(" | "),
            read,
        })
    }
}

/// The CREATE TABLE of copy `dst` from `ddl` (SHOW CREATE TABLE of the source): same columns,
/// keys, engine and row format; no foreign keys (their names are per schema, and the copy must
/// not tie itself to other tables), no AUTO_INCREMENT start, no comment (the copy gets
/// ixbench's).
fn copy_create(ddl: &str, dst: &str) -> Result<String> {
    let mut lines: Vec<String> = ddl
        .lines()
        .filter(|l| !l.contains("FOREIGN KEY"))
        .map(String::from)
        .collect();
    lines[0] = format!("CREATE TABLE {dst} (");
    // The closing line `) ENGINE=...` (a partitioned table's clauses follow it); a trailing
    // comma left before it by a removed FOREIGN KEY.
    let close = lines
        .iter()
        .position(|l| l.starts_with(')'))
        .context("odd SHOW CREATE TABLE")?;
    if close >= 1 {
        let prev = lines[close - 1]
            .trim_end()
            .trim_end_matches(',')
            .to_string();
        lines[close - 1] = prev;
    }
    let mut tail = lines[close].clone();
    for opt in ["AUTO_INCREMENT=", "COMMENT="] {
        tail = strip_option(&tail, opt);
    }
    lines[close] = tail;
    Ok(lines.join("\n"))
}

/// `tail` without the table option `opt` (`AUTO_INCREMENT=5`, `COMMENT='x'`).
fn strip_option(tail: &str, opt: &str) -> String {
    let Some(at) = tail.find(opt) else {
        return tail.to_string();
    };
    let rest = &tail[at + opt.len()..];
    let end = if let Some(q) = rest.strip_prefix('\'') {
        // a quoted value ('' is a quote inside it)
        let mut i = 0;
        let b = q.as_bytes();
        loop {
            match b.get(i) {
                None => break q.len() + 1,
                Some(b'\'') if b.get(i + 1) == Some(&b'\'') => i += 2,
                Some(b'\'') => break i + 2,
                _ => i += 1,
            }
        }
    } else {
        rest.find(' ').unwrap_or(rest.len())
    };
    format!("{}{}", tail[..at].trim_end(), &rest[end..])
}

/// A MySQL `CREATE TABLE` without its secondary keys, and those keys as `ADD ...` clauses.
fn split_keys(create: &str) -> (String, Vec<String>) {
    let mut keep: Vec<String> = Vec::new();
    let mut adds = Vec::new();
    for l in create.lines() {
        let t = l.trim_start();
        let key = ["KEY ", "UNIQUE KEY ", "FULLTEXT KEY ", "SPATIAL KEY "]
            .iter()
            .any(|p| t.starts_with(p));
        if key {
            adds.push(format!("ADD {}", t.trim_end().trim_end_matches(',')));
        } else {
            keep.push(l.to_string());
        }
    }
    if let Some(close) = keep.iter().position(|l| l.starts_with(')')) {
        if close >= 1 {
            let prev = keep[close - 1].trim_end().trim_end_matches(',').to_string();
            keep[close - 1] = prev;
        }
    }
    (keep.join("\n"), adds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_ddl_text() {
        assert_eq!(
            strip_option(
                ") ENGINE=InnoDB AUTO_INCREMENT=17 DEFAULT CHARSET=utf8mb4",
                "AUTO_INCREMENT="
            ),
            ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
        );
        assert_eq!(
            strip_option(") ENGINE=InnoDB COMMENT='it''s mine'", "COMMENT="),
            ") ENGINE=InnoDB"
        );
        let (c, adds) = split_keys(
            "CREATE TABLE t (\n  `a` int,\n  PRIMARY KEY (`a`),\n  UNIQUE KEY `u` (`a`),\n  KEY `k` (`a`)\n) ENGINE=InnoDB",
        );
        assert_eq!(
            c,
            "CREATE TABLE t (\n  `a` int,\n  PRIMARY KEY (`a`)\n) ENGINE=InnoDB"
        );
        assert_eq!(adds, vec!["ADD UNIQUE KEY `u` (`a`)", "ADD KEY `k` (`a`)"]);
        assert_eq!(
            MYSQL.defer_secondary_keys(
                "CREATE TABLE d (\n  `a` int,\n  PRIMARY KEY (`a`),\n  KEY `k` (`a`)\n) ENGINE=InnoDB",
                "d"
            ),
            (
                "CREATE TABLE d (\n  `a` int,\n  PRIMARY KEY (`a`)\n) ENGINE=InnoDB".to_string(),
                vec!["ALTER TABLE d ADD KEY `k` (`a`)".to_string()]
            )
        );
        let create = copy_create(
            "CREATE TABLE `src` (\n  `a` int NOT NULL AUTO_INCREMENT,\n  `b` int,\n  PRIMARY KEY (`a`),\n  CONSTRAINT `f` FOREIGN KEY (`b`) REFERENCES `o` (`b`)\n) ENGINE=InnoDB AUTO_INCREMENT=9 DEFAULT CHARSET=utf8mb4 COMMENT='theirs'",
            "dst",
        )
        .unwrap();
        assert_eq!(
            create,
            "CREATE TABLE dst (\n  `a` int NOT NULL AUTO_INCREMENT,\n  `b` int,\n  PRIMARY KEY (`a`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
        );
    }
}
