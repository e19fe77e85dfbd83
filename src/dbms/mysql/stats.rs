//! MySQL's and MariaDB's own figures: global status counters (InnoDB's data and redo bytes,
//! buffer pool reads, rows, handler calls; MyRocks's `Rocksdb_*` bytes written, WAL, flush and
//! compaction bytes when the ROCKSDB engine is loaded), the enabled counters of
//! `information_schema.INNODB_METRICS`, and performance_schema's file I/O summary when
//! performance_schema is on. MyRocks's `SHOW ENGINE ROCKSDB STATUS` is not read: it gives the
//! same cumulative bytes rounded to GB/MB, where the status counters give them exactly.

use anyhow::{Context, Result};

use crate::dbms::server_stats::{quoted_list, StatsPlan, StatsQuery, UnknownFigure};
use crate::dbms::Conn;

/// Global status counters read on every MySQL/MariaDB server: (name, what, unit).
const STATUS: &[(&str, &str, &str)] = &[
    (
        "Innodb_data_read",
        "InnoDB bytes read from data files",
        "bytes",
    ),
    (
        "Innodb_data_written",
        "InnoDB bytes written to data files (doublewrite included)",
        "bytes",
    ),
    ("Innodb_data_reads", "InnoDB data file reads", "count"),
    ("Innodb_data_writes", "InnoDB data file writes", "count"),
    ("Innodb_data_fsyncs", "InnoDB data file fsyncs", "count"),
    (
        "Innodb_os_log_written",
        "InnoDB redo log bytes written",
        "bytes",
    ),
    ("Innodb_log_writes", "InnoDB redo log writes", "count"),
    ("Innodb_os_log_fsyncs", "InnoDB redo log fsyncs", "count"),
    (
        "Innodb_buffer_pool_reads",
        "InnoDB pages read from storage (buffer pool misses)",
        "count",
    ),
    (
        "Innodb_buffer_pool_read_requests",
        "InnoDB buffer pool page requests",
        "count",
    ),
    (
        "Innodb_buffer_pool_write_requests",
        "InnoDB buffer pool page writes requested",
        "count",
    ),
    (
        "Innodb_buffer_pool_pages_flushed",
        "InnoDB pages flushed",
        "count",
    ),
    ("Innodb_pages_read", "InnoDB pages read", "count"),
    ("Innodb_pages_written", "InnoDB pages written", "count"),
    ("Innodb_pages_created", "InnoDB pages created", "count"),
    (
        "Innodb_dblwr_pages_written",
        "InnoDB doublewrite pages written",
        "count",
    ),
    ("Innodb_rows_inserted", "InnoDB rows inserted", "rows"),
    ("Innodb_rows_deleted", "InnoDB rows deleted", "rows"),
    ("Innodb_rows_updated", "InnoDB rows updated", "rows"),
    ("Innodb_rows_read", "InnoDB rows read", "rows"),
    (
        "Handler_write",
        "handler row writes (all engines, temporary tables too)",
        "rows",
    ),
    ("Handler_delete", "handler row deletes", "rows"),
    ("Handler_update", "handler row updates", "rows"),
    ("Handler_read_key", "handler index lookups", "count"),
    (
        "Handler_read_next",
        "handler next-row reads in index order",
        "count",
    ),
    ("Handler_commit", "handler commits", "count"),
    ("Com_insert", "INSERT statements", "count"),
    ("Com_delete", "DELETE statements", "count"),
    ("Com_select", "SELECT statements", "count"),
    ("Com_commit", "COMMIT statements", "count"),
    ("Created_tmp_files", "temporary files created", "count"),
    (
        "Created_tmp_disk_tables",
        "on-disk temporary tables created",
        "count",
    ),
    ("Bytes_received", "bytes received from clients", "bytes"),
    ("Bytes_sent", "bytes sent to clients", "bytes"),
];

/// MyRocks's counters, read when the ROCKSDB engine is loaded.
const ROCKSDB: &[(&str, &str, &str)] = &[
    (
        "Rocksdb_bytes_written",
        "MyRocks bytes written (memtable inserts)",
        "bytes",
    ),
    ("Rocksdb_bytes_read", "MyRocks bytes read", "bytes"),
    ("Rocksdb_wal_bytes", "MyRocks WAL bytes", "bytes"),
    ("Rocksdb_wal_synced", "MyRocks WAL syncs", "count"),
    (
        "Rocksdb_flush_write_bytes",
        "MyRocks flush bytes written",
        "bytes",
    ),
    (
        "Rocksdb_compact_read_bytes",
        "MyRocks compaction bytes read",
        "bytes",
    ),
    (
        "Rocksdb_compact_write_bytes",
        "MyRocks compaction bytes written",
        "bytes",
    ),
    (
        "Rocksdb_block_cache_miss",
        "MyRocks block cache misses",
        "count",
    ),
    (
        "Rocksdb_block_cache_hit",
        "MyRocks block cache hits",
        "count",
    ),
    (
        "Rocksdb_number_keys_written",
        "MyRocks keys written",
        "count",
    ),
    ("Rocksdb_rows_inserted", "MyRocks rows inserted", "rows"),
    ("Rocksdb_rows_deleted", "MyRocks rows deleted", "rows"),
    ("Rocksdb_rows_read", "MyRocks rows read", "rows"),
    ("Rocksdb_stall_micros", "MyRocks write stall time", "us"),
];

fn status(k: &str) -> Option<(String, &'static str)> {
    STATUS
        .iter()
        .chain(ROCKSDB)
        .find(|(n, _, _)| n.eq_ignore_ascii_case(k))
        .map(|(_, w, u)| (format!("{w} (global status {k})"), *u))
}

/// INNODB_METRICS counters are named by the server (`NAME`): kept as they are.
fn innodb_metric(k: &str) -> Option<(String, &'static str)> {
    Some((format!("InnoDB metric {k} (INNODB_METRICS)"), "count"))
}

/// `write_bytes/wait/io/file/innodb/innodb_log_file` -> what it is.
fn file_io(k: &str) -> Option<(String, &'static str)> {
    let (col, event) = k.split_once('/')?;
    let (what, unit) = match col {
        "read_bytes" => ("bytes read", "bytes"),
        "write_bytes" => ("bytes written", "bytes"),
        "reads" => ("reads", "count"),
        "writes" => ("writes", "count"),
        "misc" => ("other file operations (fsync, open, close)", "count"),
        _ => return None,
    };
    Some((
        format!("{what}, {event} (performance_schema.file_summary_by_event_name)"),
        unit,
    ))
}

/// What this server has: its version, whether the ROCKSDB engine is loaded, whether
/// INNODB_METRICS and performance_schema are there.
pub(crate) fn probe(conn: &mut dyn Conn) -> Result<StatsPlan> {
    let rows = conn.query_rows(
        "SELECT @@version, @@performance_schema, \
         (SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'), \
         (SELECT count(*) FROM information_schema.TABLES \
          WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = 'INNODB_METRICS')",
    )?;
    let row = rows.first().context("no answer to the version query")?;
    let cell = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
    let version = cell(0);
    let pfs = matches!(cell(1).as_str(), "1" | "ON");
    let rocksdb = matches!(cell(2).as_str(), "YES" | "DEFAULT");
    let metrics = cell(3) != "0" && !cell(3).is_empty();
    Ok(plan(&version, pfs, rocksdb, metrics))
}

fn plan(version: &str, pfs: bool, rocksdb: bool, metrics: bool) -> StatsPlan {
    let mut p = StatsPlan::default();
    let mut names: Vec<&str> = STATUS.iter().map(|(n, _, _)| *n).collect();
    let mut views = vec!["global status"];
    if rocksdb {
        names.extend(ROCKSDB.iter().map(|(n, _, _)| *n));
    } else {
        p.unknown.push(UnknownFigure {
            name: "MyRocks bytes written, WAL, flush and compaction bytes (Rocksdb_* status)"
                .into(),
            why: "the ROCKSDB engine is not loaded on this server".into(),
        });
    }
    p.queries.push(StatsQuery {
        view: "status",
        sql: format!(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
            quoted_list(&names)
        ),
        describe: status,
        moved_only: false,
        what: "global status figures",
    });
    if metrics {
        // Cumulative counters only ('value' ones are gauges); the status ones repeat global
        // status under another name.
        p.queries.push(StatsQuery {
            view: "INNODB_METRICS",
            // (MySQL says STATUS = 'enabled', MariaDB ENABLED = 1: a disabled counter does not
            // move, and only counters that moved are kept)
            sql: "SELECT NAME, COUNT FROM information_schema.INNODB_METRICS \
                  WHERE COUNT <> 0 AND TYPE IN ('counter', 'set_member', 'set_owner')"
                .into(),
            describe: innodb_metric,
            moved_only: true,
            what: "INNODB_METRICS figures",
        });
        views.push("information_schema.INNODB_METRICS (enabled counters)");
    }
    if pfs {
        let cols = [
            ("read_bytes", "SUM_NUMBER_OF_BYTES_READ"),
            ("write_bytes", "SUM_NUMBER_OF_BYTES_WRITE"),
            ("reads", "COUNT_READ"),
            ("writes", "COUNT_WRITE"),
            ("misc", "COUNT_MISC"),
        ];
        let parts: Vec<String> = cols
            .iter()
            .map(|(k, c)| {
                format!(
                    "SELECT CONCAT('{k}/', EVENT_NAME), {c} \
                     FROM performance_schema.file_summary_by_event_name WHERE COUNT_STAR > 0"
                )
            })
            .collect();
        p.queries.push(StatsQuery {
            view: "file_summary_by_event_name",
            sql: parts.join(" UNION ALL "),
            describe: file_io,
            moved_only: true,
            what: "performance_schema file I/O figures",
        });
        views.push("performance_schema.file_summary_by_event_name");
    } else {
        p.unknown.push(UnknownFigure {
            name: "file I/O by file kind (performance_schema.file_summary_by_event_name)".into(),
            why: "performance_schema is off on this server (performance_schema = ON at start \
                  turns it on)"
                .into(),
        });
    }
    p.unknown.push(UnknownFigure {
        name: "server CPU".into(),
        why: "MySQL/MariaDB report no CPU time of the server over SQL".into(),
    });
    p.source = format!("MySQL/MariaDB {version}: {}", views.join(", "));
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_follows_what_the_server_has() {
        let p = plan("10.11.6-MariaDB", false, false, true);
        let views: Vec<&str> = p.queries.iter().map(|q| q.view).collect();
        assert_eq!(views, ["status", "INNODB_METRICS"]);
        assert!(!p.queries[0].sql.contains("Rocksdb_"));
        assert!(p.unknown.iter().any(|u| u.why.contains("ROCKSDB engine")));
        assert!(p
            .unknown
            .iter()
            .any(|u| u.why.contains("performance_schema is off")));
        let p = plan("10.11.6-MariaDB", true, true, true);
        assert!(p.queries[0].sql.contains("'Rocksdb_wal_bytes'"));
        assert_eq!(p.queries.len(), 3);
        assert_eq!(
            status("innodb_os_log_written").unwrap().0,
            "InnoDB redo log bytes written (global status innodb_os_log_written)"
        );
        assert_eq!(
            file_io("write_bytes/wait/io/file/innodb/innodb_log_file")
                .unwrap()
                .0,
            "bytes written, wait/io/file/innodb/innodb_log_file \
             (performance_schema.file_summary_by_event_name)"
        );
    }
}
