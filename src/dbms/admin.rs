//! The administration side of a DBMS: maintenance, sizes, counters, the WAL, and waiting
//! until the server is quiet before a measured step. Part of [`super::Dbms`], and optional:
//! every method has a default (the figure unknown, or "not supported by this DBMS" with the
//! DBMS's name), so a new DBMS writes `impl Admin for X {}` and overrides what it can tell.

use std::path::PathBuf;

use anyhow::Result;

use super::forward::forwarded_trait;
use super::{Conn, Driver, FigureClock, MaintAction, QuietProbe, RowCounters, Sizes};

forwarded_trait! {
/// Maintenance, sizes and counters of a DBMS (see [`super::Dbms`]): an optional capability,
/// every method has a default. A DBMS that answers as another one ([`super::forward::AnswersAs`]:
/// a cluster, as its entry node) gets every method forwarded.
pub trait Admin: Driver {
    /// The maintenance the insert benchmark runs between load and query steps. By default one
    /// action marked `SKIPPED` that says the DBMS has none ixbench knows (the step says so).
    fn maintenance(
        &self,
        _conn: &mut dyn Conn,
        _tables: &[String],
        _clock: &dyn FigureClock,
    ) -> Result<Vec<MaintAction>> {
        Ok(vec![MaintAction {
            action: "maintenance".into(),
            seconds: 0.0,
            detail: format!("SKIPPED: not supported by this DBMS ({})", self.kind()),
        }])
    }

    /// Database and object sizes; `objects` only when `detailed`, since it may scan. By
    /// default unknown (no figure), with a note that says why.
    fn sizes(&self, _conn: &mut dyn Conn, _tables: &[String], _detailed: bool) -> Result<Sizes> {
        Ok(Sizes {
            database_bytes: None,
            objects: Vec::new(),
            notes: vec![format!(
                "sizes unknown: not supported by this DBMS ({})",
                self.kind()
            )],
        })
    }

    /// The DBMS's own cumulative counts of rows inserted and deleted in `tables`
    /// (pg_stat_user_tables n_tup_ins/n_tup_del, Innodb_rows_*, rocksdb_rows_*), read before
    /// and after a step and compared with ixbench's counts. `None` where the DBMS keeps none
    /// (SQLite). Counters that lag (Postgres statistics are sent at transaction end and may be
    /// delayed) must be waited for by the implementation.
    fn row_counters(
        &self,
        _conn: &mut dyn Conn,
        _tables: &[String],
    ) -> Result<Option<RowCounters>> {
        Ok(None)
    }

    /// True when [`Admin::row_counters`] count the whole server's rows, not only `tables`'
    /// (MySQL/MariaDB's status counters): other processes writing to the server are in them.
    fn row_counters_server_wide(&self) -> bool {
        false
    }

    /// The server's data directory as it reports it (`data_directory`, `@@datadir`; SQLite:
    /// the database file's directory), for the size of the directory, the device under it and
    /// the room left on it; `None` when it will not say.
    fn data_directory(&self, _conn: &mut dyn Conn) -> Option<PathBuf> {
        None
    }

    /// What a run needs on disk, in one line for the user (`disk: ...`), where the DBMS's
    /// files can be predicted: `rows` rows of the insert benchmark's table with `secondary`
    /// indexes and `data_len` (min, max) bytes of data, under `settings` (the target's, as
    /// [`super::TargetInfo`] holds them). SQLite: the measured bytes per row and the WAL bound
    /// of `journal_size_limit`; `None` for the others.
    fn disk_note(
        &self,
        _rows: u64,
        _secondary: usize,
        _data_len: (usize, usize),
        _settings: &[(String, String)],
    ) -> Option<String> {
        None
    }

    /// Bytes written as the DBMS counts them, from deltas of [`Dbms::io_counters`], with
    /// the counters they add up; `None` when the DBMS keeps no such counters.
    fn written_bytes(&self, _deltas: &[(String, u64)]) -> Option<(u64, String)> {
        None
    }

    /// Cumulative I/O counters of the DBMS (name, value): WAL and temp bytes, data
    /// read/written. Deltas around each build are reported.
    fn io_counters(&self, _conn: &mut dyn Conn) -> Result<Vec<(String, u64)>> {
        Ok(Vec::new())
    }

    /// Bytes the server has written so far as the DBMS counts them (what
    /// [`Admin::written_bytes`] adds up of [`Admin::io_counters`], from zero), read while other
    /// sessions keep running (a load: nothing waits for them to end), with the counters it
    /// adds up; `None` when the DBMS keeps no such counters or they cannot be read. The
    /// difference of two readings is what was written between them.
    fn written_so_far(&self, conn: &mut dyn Conn) -> Option<(u64, String)> {
        let counters = self.io_counters(conn).ok()?;
        self.written_bytes(&counters)
    }

    /// One look at the background work the server still does from before a measured step
    /// (MyRocks flushes and compactions, dropped indexes being removed; InnoDB purge; autovacuum
    /// on ixbench's tables, a checkpoint in progress). Read-only. `None` when there is nothing
    /// to watch (embedded and null targets). See [`wait_quiet`].
    fn quiet_probe(&self, _conn: &mut dyn Conn, _tables: &[String]) -> Result<Option<QuietProbe>> {
        Ok(None)
    }

    /// What [`Dbms::quiet_probe`] watches, in words, for the results.
    fn quiet_watched(&self) -> String {
        String::new()
    }

    /// What to do before waiting for quiet, returned as done (SQLite: checkpoint ixbench's
    /// WAL so a step does not start with the last one's WAL). Nothing on servers.
    fn prepare_quiet(
        &self,
        _conn: &mut dyn Conn,
        _tables: &[String],
        _clock: &dyn FigureClock,
    ) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    /// Bytes in the write-ahead log now (SQLite: the `-wal` file), `None` when unknown.
    fn wal_bytes(&self) -> Option<u64> {
        None
    }

    /// The size the WAL should stay under (SQLite: 1.5 x `journal_size_limit`), `None` when
    /// unbounded or unknown.
    fn wal_bound(&self) -> Option<u64> {
        None
    }

    /// The largest WAL size seen since the last call (SQLite: the `-wal` file after each
    /// commit), `None` when unknown. Resets the peak to the current size.
    fn take_wal_peak(&self) -> Option<u64> {
        None
    }
}
}
