//! A statement of ixbench's that waits for another session's lock (creating, loading or
//! dropping a table, building or dropping an index, while a session holds `LOCK TABLE`, an
//! open transaction on it or `FLUSH TABLES WITH READ LOCK`): the wait is shown while it lasts, naming the sessions that hold the lock where
//! the DBMS can tell (PostgreSQL `pg_blocking_pids`; MySQL/MariaDB InnoDB's lock waits, the
//! `METADATA_LOCK_INFO` plugin), and bounded: after [`LIMIT`] the statement is cancelled and
//! the error says why, instead of the user seeing the step's first line and nothing more.
//!
//! A second connection asks about the watched session every [`POLL`]; a DBMS that cannot be
//! asked (SQLite: its busy timeout bounds the wait already; null) is not watched.

use std::sync::Mutex;
use std::time::Duration;

use anyhow::{anyhow, Result};

use crate::dbms::{dialect, Conn, Dbms};
use crate::deadline::Since;

/// How long a lock wait lasts before it is shown.
pub const SHOW_AFTER: f64 = 3.0;
/// How often it is shown again while it lasts.
pub const SHOW_EVERY: f64 = 10.0;
/// How long ixbench waits for another session's lock before it cancels its statement.
pub const LIMIT: f64 = 30.0;
/// How often the watched session is looked at.
const POLL: Duration = Duration::from_millis(500);

/// What the watcher saw of one lock wait.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// Seconds the statement had waited (the server's count).
    pub secs: f64,
    /// What it waited for, in the DBMS's words.
    pub what: String,
    /// The sessions holding it, when the DBMS can tell.
    pub holders: Option<String>,
}

impl Seen {
    fn holders_text(&self) -> String {
        match &self.holders {
            Some(h) => format!("held by {h}"),
            None => "held by another session (the DBMS does not say which: see its session \
                     list for one that ran FLUSH TABLES WITH READ LOCK, LOCK TABLE(S), or holds \
                     an open transaction on the table)"
                .into(),
        }
    }

    /// The line shown while it waits.
    pub fn line(&self, what: &str) -> String {
        format!(
            "   {what}: waiting {:.0} s for a lock ({}), {}; ixbench cancels it after {LIMIT:.0} s",
            self.secs,
            self.what,
            self.holders_text()
        )
    }

    /// The error of a wait ixbench cancelled.
    pub fn error(&self, what: &str) -> anyhow::Error {
        anyhow!(
            "{what} waited {LIMIT:.0} s for a lock ({}) {} and was cancelled: end that session's \
             transaction (UNLOCK TABLES after FLUSH TABLES WITH READ LOCK), then run again",
            self.what,
            self.holders_text()
        )
    }
}

/// One look at session `id` from `conn`: the wait it is in, if any.
fn look(conn: &mut dyn Conn, sql: &dyn dialect::DbmsSql, id: i64) -> Option<Seen> {
    let q = sql.lock_wait_of_sql(id)?;
    let rows = conn.query_rows(&q).ok()?;
    let r = rows.first()?;
    let cell = |i: usize| r.get(i).cloned().flatten();
    let what = cell(1).unwrap_or_else(|| "a lock".into());
    let mut holders = cell(2).filter(|h| !h.is_empty());
    if holders.is_none() {
        // A view that may be missing (the plugin not loaded): the DBMS cannot tell then.
        if let Some(q) = sql.lock_holders_sql(id, &what.to_ascii_lowercase()) {
            holders = conn
                .query_rows(&q)
                .ok()
                .and_then(|rows| rows.first().and_then(|r| r.first().cloned().flatten()))
                .filter(|h| !h.is_empty());
        }
    }
    Some(Seen {
        secs: cell(0).and_then(|s| s.parse().ok()).unwrap_or(0.0),
        what,
        holders,
    })
}

/// A second connection that watches sessions of ixbench's for lock waits (see the module's
/// doc). Opened ahead of the work it watches: where that work's server figures are measured
/// over a window, before the window opens (see [`Watcher::open`]).
pub struct Watcher {
    sql: &'static dyn dialect::DbmsSql,
    conn: Box<dyn Conn>,
}

impl Watcher {
    /// The watcher of `target`'s sessions: `None` where the DBMS cannot be asked about
    /// another session's lock waits (SQLite, null) or the connection cannot be made (the work
    /// then runs unwatched, as it did before).
    ///
    /// What it adds to a measured window it stays open across: its connection is made, set
    /// apart from the sessions whose statistics a window's reads wait for (PostgreSQL: its
    /// own `application_name`), and has asked its question once, before the window opens; in
    /// the window it asks again every [`POLL`] (a read of `pg_stat_activity` /
    /// `information_schema.PROCESSLIST`, no table or index of the build): no WAL, no temp
    /// files, no data pages read or written, a little CPU (measured on PostgreSQL 15: the
    /// counters a build records were the same with and without it within their spread; its
    /// CPU share was below that machine's noise, see docs/errors.md).
    pub fn open(target: &dyn Dbms) -> Option<Watcher> {
        // Connections that go round robin over several nodes (a Galera cluster's write nodes)
        // may reach another node than the watched session's, where its id names another
        // session (which a cancel would hit): not watched.
        if target.fails_over() {
            return None;
        }
        let sql = crate::dbms::registry::dialect(target.kind());
        sql.lock_wait_of_sql(0)?;
        let mut conn = target.connect().ok()?;
        if let Some(q) = sql.set_apart_sql() {
            // Not set apart, the window's reads would wait for it to end: a few seconds lost.
            conn.query_rows(q).ok()?;
        }
        // The first look reads the catalog (the session's caches); done here, not in a window.
        let _ = look(conn.as_mut(), sql, 0);
        Some(Watcher { sql, conn })
    }

    /// The id other sessions know `conn` by (`None` where it cannot be asked).
    pub fn session_id(&self, conn: &mut dyn Conn) -> Option<i64> {
        self.sql
            .session_id_sql()
            .and_then(|q| conn.query_rows(q).ok())
            .and_then(|rows| rows.first().and_then(|r| r.first().cloned().flatten()))
            .and_then(|s| s.parse::<i64>().ok())
    }

    /// Run `body` (statements of the sessions `ids` that may wait for another session's
    /// lock) while watching those sessions: a wait longer than [`SHOW_AFTER`] is shown (a
    /// line every [`SHOW_EVERY`]), one longer than [`LIMIT`] is cancelled (the waiting
    /// session's statement). Returns `body`'s value and the wait that was cancelled, if one
    /// was: `body`'s error then is the cancellation, [`Seen::error`] says why. `what` names
    /// the work (`creating table pi1`). A wait is counted from when the watcher first sees
    /// it, not from the statement's start: a long build that waits a moment for a lock at its
    /// end (CREATE INDEX CONCURRENTLY, MariaDB's online ALTER) is not cancelled for its
    /// length.
    pub fn watch<T>(
        &mut self,
        ids: &[i64],
        what: &str,
        body: impl FnOnce() -> T,
    ) -> (T, Option<Seen>) {
        let sql = self.sql;
        let (done, stop) = std::sync::mpsc::channel::<()>();
        let cancelled: Mutex<Option<Seen>> = Mutex::new(None);
        let r = std::thread::scope(|scope| {
            let (watcher, cancelled) = (&mut self.conn, &cancelled);
            scope.spawn(move || {
                let mut since: Vec<Option<Since>> = vec![None; ids.len()];
                let mut shown_at: Option<f64> = None;
                // Until `body` ends (the sender dropped), a look every POLL.
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(POLL)
                {
                    let mut longest: Option<Seen> = None;
                    for (k, &id) in ids.iter().enumerate() {
                        let Some(seen) = look(watcher.as_mut(), sql, id) else {
                            since[k] = None;
                            continue;
                        };
                        let secs = since[k]
                            .get_or_insert_with(Since::start)
                            .so_far()
                            .as_secs_f64();
                        let seen = Seen { secs, ..seen };
                        // Past the limit, and every wait after that (the error path's own
                        // statements on the same lock) is cancelled too.
                        let mut c = cancelled.lock().unwrap_or_else(|e| e.into_inner());
                        if secs >= LIMIT || c.is_some() {
                            if let Err(std::sync::mpsc::TryRecvError::Disconnected) =
                                stop.try_recv()
                            {
                                break;
                            }
                            c.get_or_insert(seen);
                            if let Some(q) = sql.cancel_statement_sql(id) {
                                let _ = watcher.query_rows(&q);
                            }
                            continue;
                        }
                        if longest.as_ref().map_or(true, |l| seen.secs > l.secs) {
                            longest = Some(seen);
                        }
                    }
                    let Some(seen) = longest else {
                        shown_at = None;
                        continue;
                    };
                    if seen.secs >= SHOW_AFTER
                        && shown_at.map_or(true, |t| seen.secs - t >= SHOW_EVERY)
                    {
                        crate::outln!("{}", seen.line(what));
                        shown_at = Some(seen.secs);
                    }
                }
            });
            let r = body();
            drop(done);
            r
        });
        (r, cancelled.into_inner().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Run `body` on `conn` (a step's statements that may wait for another session's lock) with
/// a [`Watcher`] on a second connection of `target` (see [`Watcher::watch`]); a wait it
/// cancelled makes `body`'s error one that says so. `what` names the work (`creating table
/// pi1`). Where the session cannot be watched (no session id, no second connection) `body`
/// runs unwatched.
pub fn watched<T>(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    what: &str,
    body: impl FnOnce(&mut dyn Conn) -> Result<T>,
) -> Result<T> {
    let Some(mut w) = Watcher::open(target) else {
        return body(conn);
    };
    let Some(id) = w.session_id(conn) else {
        return body(conn);
    };
    match w.watch(&[id], what, || body(conn)) {
        (Err(_), Some(seen)) => Err(seen.error(what)),
        (r, _) => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_and_the_error_name_the_holder_or_say_the_dbms_cannot_tell() {
        let s = Seen {
            secs: 4.2,
            what: "relation".into(),
            holders: Some("session 7 (u, idle in transaction: LOCK TABLE t)".into()),
        };
        assert_eq!(
            s.line("creating pi1"),
            "   creating pi1: waiting 4 s for a lock (relation), held by session 7 (u, idle in \
             transaction: LOCK TABLE t); ixbench cancels it after 30 s"
        );
        let e = format!("{:#}", s.error("creating pi1"));
        assert!(e.starts_with("creating pi1 waited 30 s for a lock (relation) held by session 7"));
        let s = Seen { holders: None, ..s };
        assert!(format!("{:#}", s.error("x")).contains("FLUSH TABLES WITH READ LOCK"));
    }
}
