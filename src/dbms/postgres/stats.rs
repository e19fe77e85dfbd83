//! PostgreSQL's own figures, by server version: `pg_stat_database` (the current database),
//! `pg_stat_wal` (14+), `pg_stat_bgwriter` (before 17 with the checkpointer's and backends'
//! writes; 17+ split off `pg_stat_checkpointer`), `pg_stat_io` (16+, one row per backend type,
//! object and context), and the extensions `pg_stat_statements` (time and buffers of the
//! current database's statements) and `pg_stat_kcache` (their CPU and bytes at the kernel)
//! when installed.

use anyhow::{Context, Result};

use crate::dbms::server_stats::{StatsPlan, StatsQuery, UnknownFigure};
use crate::dbms::Conn;

/// `(column, what it counts, unit)` of `pg_stat_database`.
const DATABASE: &[(&str, &str, &str)] = &[
    ("blks_read", "server blocks read", "blocks"),
    (
        "blks_hit",
        "server blocks found in shared buffers",
        "blocks",
    ),
    ("temp_files", "temporary files created", "count"),
    ("temp_bytes", "temporary file bytes written", "bytes"),
    ("xact_commit", "transactions committed", "count"),
    ("xact_rollback", "transactions rolled back", "count"),
    ("tup_inserted", "rows inserted", "rows"),
    ("tup_updated", "rows updated", "rows"),
    ("tup_deleted", "rows deleted", "rows"),
    ("tup_fetched", "rows fetched", "rows"),
    ("tup_returned", "rows returned", "rows"),
    ("deadlocks", "deadlocks", "count"),
    (
        "blk_read_time",
        "time reading blocks (track_io_timing)",
        "ms",
    ),
    (
        "blk_write_time",
        "time writing blocks (track_io_timing)",
        "ms",
    ),
];

/// `pg_stat_wal` (14+); the last two are gone in 18 (in `pg_stat_io` there).
const WAL: &[(&str, &str, &str)] = &[
    ("wal_records", "WAL records", "count"),
    ("wal_fpi", "WAL full-page images", "count"),
    ("wal_bytes", "WAL bytes", "bytes"),
    (
        "wal_buffers_full",
        "WAL writes because the WAL buffers were full",
        "count",
    ),
    ("wal_write", "WAL write calls", "count"),
    ("wal_sync", "WAL syncs", "count"),
];

/// `pg_stat_bgwriter` before 17.
const BGWRITER_OLD: &[(&str, &str, &str)] = &[
    ("checkpoints_timed", "checkpoints by time", "count"),
    ("checkpoints_req", "checkpoints requested", "count"),
    (
        "buffers_checkpoint",
        "blocks written by checkpoints",
        "blocks",
    ),
    (
        "buffers_clean",
        "blocks written by the background writer",
        "blocks",
    ),
    (
        "maxwritten_clean",
        "background writer stops at bgwriter_lru_maxpages",
        "count",
    ),
    ("buffers_backend", "blocks written by backends", "blocks"),
    ("buffers_backend_fsync", "fsyncs by backends", "count"),
    ("buffers_alloc", "buffers allocated", "count"),
];

/// `pg_stat_bgwriter` from 17.
const BGWRITER: &[(&str, &str, &str)] = &[
    (
        "buffers_clean",
        "blocks written by the background writer",
        "blocks",
    ),
    (
        "maxwritten_clean",
        "background writer stops at bgwriter_lru_maxpages",
        "count",
    ),
    ("buffers_alloc", "buffers allocated", "count"),
];

/// `pg_stat_checkpointer` (17+).
const CHECKPOINTER: &[(&str, &str, &str)] = &[
    ("num_timed", "checkpoints by time", "count"),
    ("num_requested", "checkpoints requested", "count"),
    ("buffers_written", "blocks written by checkpoints", "blocks"),
    ("write_time", "checkpoint time writing", "ms"),
    ("sync_time", "checkpoint time syncing", "ms"),
];

/// `pg_stat_io` (16+) columns kept, per (backend type, object, context).
const IO: &[(&str, &str, &str)] = &[
    ("reads", "reads", "ops"),
    ("writes", "writes", "ops"),
    ("extends", "extends", "ops"),
    ("hits", "shared buffer hits", "ops"),
    ("evictions", "evictions", "ops"),
    ("fsyncs", "fsyncs", "count"),
];

/// `pg_stat_io` byte columns (18+), per row as [`IO`].
const IO_BYTES: &[(&str, &str, &str)] = &[
    ("read_bytes", "bytes read", "bytes"),
    ("write_bytes", "bytes written", "bytes"),
    ("extend_bytes", "bytes extended", "bytes"),
];

/// Sums over the current database's entries of `pg_stat_statements` (13+ names).
const STATEMENTS: &[(&str, &str, &str)] = &[
    ("calls", "statements executed", "count"),
    ("total_exec_time", "statement execution time", "ms"),
    ("rows", "rows of statements", "rows"),
    (
        "shared_blks_hit",
        "statement blocks found in shared buffers",
        "blocks",
    ),
    ("shared_blks_read", "statement blocks read", "blocks"),
    ("shared_blks_dirtied", "statement blocks dirtied", "blocks"),
    ("shared_blks_written", "statement blocks written", "blocks"),
    (
        "temp_blks_written",
        "statement temporary blocks written",
        "blocks",
    ),
    ("wal_bytes", "statement WAL bytes", "bytes"),
];

/// Sums over the current database's entries of `pg_stat_kcache` (2.2+ names).
const KCACHE: &[(&str, &str, &str)] = &[
    ("exec_user_time", "statement user CPU", "s"),
    ("exec_system_time", "statement system CPU", "s"),
    ("exec_reads", "statement bytes read from storage", "bytes"),
    ("exec_writes", "statement bytes written to storage", "bytes"),
];

/// Column `k` of `table`: `WHAT (VIEW)` and its unit.
fn find(
    view: &str,
    table: &[(&str, &'static str, &'static str)],
    k: &str,
) -> Option<(String, &'static str)> {
    table
        .iter()
        .find(|(c, _, _)| *c == k)
        .map(|(_, w, u)| (format!("{w} ({view})"), *u))
}

fn database(k: &str) -> Option<(String, &'static str)> {
    find("pg_stat_database", DATABASE, k)
}
fn wal(k: &str) -> Option<(String, &'static str)> {
    find("pg_stat_wal", WAL, k)
}
/// Before 14: the WAL bytes from `pg_wal_lsn_diff` of two `pg_current_wal_lsn()` readings.
fn wal_lsn(k: &str) -> Option<(String, &'static str)> {
    (k == "wal_bytes").then(|| {
        (
            "WAL bytes (pg_current_wal_lsn difference, pg_wal_lsn_diff)".into(),
            "bytes",
        )
    })
}
fn bgwriter(k: &str) -> Option<(String, &'static str)> {
    find("pg_stat_bgwriter", BGWRITER_OLD, k).or_else(|| find("pg_stat_bgwriter", BGWRITER, k))
}
fn checkpointer(k: &str) -> Option<(String, &'static str)> {
    find("pg_stat_checkpointer", CHECKPOINTER, k)
}
fn statements(k: &str) -> Option<(String, &'static str)> {
    find("pg_stat_statements", STATEMENTS, k).or_else(|| {
        (k == "total_time").then(|| ("statement execution time (pg_stat_statements)".into(), "ms"))
    })
}
fn kcache(k: &str) -> Option<(String, &'static str)> {
    find("pg_stat_kcache", KCACHE, k)
}
/// `writes[client backend/relation/normal]` -> `writes by client backend, relation normal
/// (pg_stat_io)`.
fn io(k: &str) -> Option<(String, &'static str)> {
    let (col, rest) = k.split_once('[')?;
    let (_, what, unit) = IO.iter().chain(IO_BYTES).find(|(c, _, _)| *c == col)?;
    let mut parts = rest.trim_end_matches(']').splitn(3, '/');
    let (b, o, c) = (parts.next()?, parts.next()?, parts.next()?);
    Some((format!("{what} by {b}, {o} {c} (pg_stat_io)"), unit))
}

/// One row of `view` (filtered by `filter`), its `cols` as (name, value) rows.
fn unpivot(view: &str, cols: &[(&str, &str, &str)], filter: &str) -> String {
    let values: Vec<String> = cols
        .iter()
        .map(|(c, _, _)| format!("('{c}', v.{c}::text)"))
        .collect();
    format!(
        "SELECT x.k, x.v FROM {view} v, LATERAL (VALUES {}) x(k, v){filter}",
        values.join(", ")
    )
}

/// Sums of `cols` over the rows of `view` of the current database, as (name, value) rows.
fn summed(view: &str, cols: &[(&str, &str, &str)], filter: &str) -> String {
    let sums: Vec<String> = cols
        .iter()
        .map(|(c, _, _)| format!("sum({c})::text AS {c}"))
        .collect();
    let inner = format!("(SELECT {} FROM {view} WHERE {filter})", sums.join(", "));
    let values: Vec<String> = cols
        .iter()
        .map(|(c, _, _)| format!("('{c}', v.{c})"))
        .collect();
    format!(
        "SELECT x.k, x.v FROM {inner} v, LATERAL (VALUES {}) x(k, v)",
        values.join(", ")
    )
}

/// What this server has: the version, the views, the extensions installed in this database
/// (and whether their library is loaded).
pub(crate) fn probe(conn: &mut dyn Conn) -> Result<StatsPlan> {
    let rows = conn.query_rows(
        "SELECT current_setting('server_version_num'), current_setting('server_version'), \
         (SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements'), \
         (SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_kcache'), \
         current_setting('shared_preload_libraries')",
    )?;
    let row = rows.first().context("no answer to the version query")?;
    let cell = |i: usize| row.get(i).cloned().flatten();
    let num: u32 = cell(0)
        .and_then(|v| v.parse().ok())
        .context("server_version_num is not a number")?;
    let version = cell(1).unwrap_or_default();
    let preload = cell(4).unwrap_or_default();
    Ok(plan(num, &version, cell(2), cell(3), &preload))
}

/// The queries and unknowns of a server of version `num` with the extensions' versions
/// (`None`: not installed) and its `shared_preload_libraries`.
fn plan(
    num: u32,
    version: &str,
    statements_ext: Option<String>,
    kcache_ext: Option<String>,
    preload: &str,
) -> StatsPlan {
    let mut p = StatsPlan::default();
    let mut views = vec!["pg_stat_database"];
    fn q(
        view: &'static str,
        sql: String,
        describe: fn(&str) -> Option<(String, &'static str)>,
        moved_only: bool,
        what: &'static str,
    ) -> StatsQuery {
        StatsQuery {
            view,
            sql,
            describe,
            moved_only,
            what,
        }
    }
    let db_cols: Vec<_> = DATABASE.to_vec();
    p.queries.push(q(
        "pg_stat_database",
        unpivot(
            "pg_stat_database",
            &db_cols,
            " WHERE v.datname = current_database()",
        ),
        database,
        false,
        "pg_stat_database figures",
    ));
    let unknown = |name: &str, why: String| UnknownFigure {
        name: name.into(),
        why,
    };
    if num >= 140_000 {
        let cols: Vec<_> = if num >= 180_000 {
            WAL[..4].to_vec()
        } else {
            WAL.to_vec()
        };
        p.queries.push(q(
            "pg_stat_wal",
            unpivot("pg_stat_wal", &cols, ""),
            wal,
            false,
            "pg_stat_wal figures",
        ));
        views.push("pg_stat_wal");
    } else {
        // The WAL bytes from the WAL position's difference; the records and full-page images
        // only pg_stat_wal counts.
        p.queries.push(q(
            "pg_current_wal_lsn",
            format!(
                "SELECT 'wal_bytes', v::text FROM ({}) x(v) WHERE v IS NOT NULL",
                crate::dbms::postgres::WAL_LSN_SQL
            ),
            wal_lsn,
            false,
            "the WAL position (pg_current_wal_lsn)",
        ));
        views.push("pg_current_wal_lsn");
        p.unknown.push(unknown(
            "WAL records and full-page images (pg_stat_wal)",
            format!("pg_stat_wal is in PostgreSQL 14 and later; this server is {version}"),
        ));
    }
    if num >= 170_000 {
        p.queries.push(q(
            "pg_stat_bgwriter",
            unpivot("pg_stat_bgwriter", BGWRITER, ""),
            bgwriter,
            false,
            "pg_stat_bgwriter figures",
        ));
        p.queries.push(q(
            "pg_stat_checkpointer",
            unpivot("pg_stat_checkpointer", CHECKPOINTER, ""),
            checkpointer,
            false,
            "pg_stat_checkpointer figures",
        ));
        views.extend(["pg_stat_bgwriter", "pg_stat_checkpointer"]);
    } else {
        p.queries.push(q(
            "pg_stat_bgwriter",
            unpivot("pg_stat_bgwriter", BGWRITER_OLD, ""),
            bgwriter,
            false,
            "pg_stat_bgwriter figures",
        ));
        views.push("pg_stat_bgwriter");
    }
    if num >= 160_000 {
        let bytes = if num >= 180_000 { IO_BYTES } else { &[] };
        let values: Vec<String> = IO
            .iter()
            .chain(bytes)
            .map(|(c, _, _)| {
                format!(
                    "('{c}[' || v.backend_type || '/' || v.object || '/' || v.context || ']', \
                     v.{c}::text)"
                )
            })
            .collect();
        p.queries.push(q(
            "pg_stat_io",
            format!(
                "SELECT x.k, x.v FROM pg_stat_io v, LATERAL (VALUES {}) x(k, v) \
                 WHERE x.v IS NOT NULL AND x.v <> '0'",
                values.join(", ")
            ),
            io,
            true,
            "pg_stat_io figures",
        ));
        views.push("pg_stat_io");
    } else {
        p.unknown.push(unknown(
            "reads, writes, extends, hits and fsyncs by backend type (pg_stat_io)",
            format!("pg_stat_io is in PostgreSQL 16 and later; this server is {version}"),
        ));
    }
    let loaded = |lib: &str| {
        preload
            .split(',')
            .any(|l| l.trim().trim_matches('"') == lib)
    };
    let this_db = "dbid = (SELECT oid FROM pg_database WHERE datname = current_database())";
    match statements_ext {
        Some(_) if !loaded("pg_stat_statements") => p.unknown.push(unknown(
            "statement time and buffers (pg_stat_statements)",
            "pg_stat_statements is installed in this database but not in \
             shared_preload_libraries, so it counts nothing"
                .into(),
        )),
        Some(_) => {
            let mut cols: Vec<_> = STATEMENTS.to_vec();
            if num < 130_000 {
                // before 13: total_time, no WAL columns
                cols.retain(|(c, _, _)| *c != "wal_bytes" && *c != "total_exec_time");
                cols.push(("total_time", "statement execution time", "ms"));
            }
            p.queries.push(q(
                "pg_stat_statements",
                summed("pg_stat_statements", &cols, this_db),
                statements,
                false,
                "pg_stat_statements figures",
            ));
            views.push("pg_stat_statements");
        }
        None => p.unknown.push(unknown(
            "statement time and buffers (pg_stat_statements)",
            "pg_stat_statements is not installed in this database (it needs \
             shared_preload_libraries = 'pg_stat_statements' and CREATE EXTENSION \
             pg_stat_statements)"
                .into(),
        )),
    }
    match kcache_ext {
        Some(v) if !loaded("pg_stat_kcache") => p.unknown.push(unknown(
            "server CPU of statements (pg_stat_kcache)",
            format!("pg_stat_kcache {v} is installed but not in shared_preload_libraries"),
        )),
        Some(v) if version_at_least(&v, 2, 2) => {
            p.queries.push(q(
                "pg_stat_kcache",
                summed("pg_stat_kcache", KCACHE, "datname = current_database()"),
                kcache,
                false,
                "pg_stat_kcache figures",
            ));
            views.push("pg_stat_kcache");
        }
        Some(v) => p.unknown.push(unknown(
            "server CPU of statements (pg_stat_kcache)",
            format!("pg_stat_kcache {v} is older than 2.2 (exec_user_time), which ixbench reads"),
        )),
        None => p.unknown.push(unknown(
            "server CPU of statements (pg_stat_kcache)",
            "pg_stat_kcache is not installed in this database: PostgreSQL itself reports no \
             CPU time, so the server's CPU is unknown"
                .into(),
        )),
    }
    p.source = format!("PostgreSQL {version}: {}", views.join(", "));
    p
}

/// `2.2.3` >= `major.minor`.
fn version_at_least(v: &str, major: u32, minor: u32) -> bool {
    let mut it = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
    (a, b) >= (major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_follow_the_version() {
        let p15 = plan(150_008, "15.8", None, None, "");
        let views: Vec<&str> = p15.queries.iter().map(|q| q.view).collect();
        assert_eq!(
            views,
            ["pg_stat_database", "pg_stat_wal", "pg_stat_bgwriter"]
        );
        assert!(p15.unknown.iter().any(|u| u.why.contains("PostgreSQL 16")));
        assert!(p15
            .unknown
            .iter()
            .any(|u| u.name.contains("pg_stat_kcache")));
        let p17 = plan(
            170_002,
            "17.2",
            Some("1.11".into()),
            Some("2.3.0".into()),
            "pg_stat_statements,pg_stat_kcache",
        );
        let views: Vec<&str> = p17.queries.iter().map(|q| q.view).collect();
        assert_eq!(
            views,
            [
                "pg_stat_database",
                "pg_stat_wal",
                "pg_stat_bgwriter",
                "pg_stat_checkpointer",
                "pg_stat_io",
                "pg_stat_statements",
                "pg_stat_kcache"
            ]
        );
        assert!(p17.unknown.is_empty(), "{:?}", p17.unknown);
        // 18: pg_stat_wal without wal_write/wal_sync; pg_stat_io in bytes too
        let p18 = plan(180_001, "18.1", None, None, "");
        assert!(!p18.queries[1].sql.contains("wal_sync"));
        assert!(p18.queries[4].sql.contains("v.write_bytes"));
        assert!(!p17.queries[4].sql.contains("write_bytes"));
        assert_eq!(
            io("write_bytes[checkpointer/wal/init]").unwrap(),
            (
                "bytes written by checkpointer, wal init (pg_stat_io)".into(),
                "bytes"
            )
        );
        // 13: no pg_stat_wal; installed but not loaded says so
        let p13 = plan(130_010, "13.10", Some("1.8".into()), None, "");
        assert!(p13.unknown.iter().any(|u| u.why.contains("14 and later")));
        // ... but its WAL bytes from the WAL position
        let lsn = p13.queries.iter().find(|q| q.view == "pg_current_wal_lsn");
        assert!(lsn.unwrap().sql.contains("pg_wal_lsn_diff"));
        assert_eq!(wal_lsn("wal_bytes").unwrap().1, "bytes");
        assert!(p13
            .unknown
            .iter()
            .any(|u| u.why.contains("not in shared_preload_libraries")));
    }

    #[test]
    fn io_rows_are_named() {
        assert_eq!(
            io("writes[client backend/relation/normal]").unwrap().0,
            "writes by client backend, relation normal (pg_stat_io)"
        );
        assert!(io("nonsense").is_none());
    }
}
