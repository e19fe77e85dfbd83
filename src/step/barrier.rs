//! The barrier the parts of a several-process run (`ixbench run --client-id K --client-count N
//! --start-at T`, see [`crate::options::scale`]) meet at before every step, so each step
//! starts together on every part: not only the first (which `--start-at` alone gave), but also
//! every later one, whatever a part's previous step cost it.
//!
//! It is kept in the target database the parts all reach already (nothing new has to run): a
//! small table ixbench creates and owns, [`TABLE`], one row per part and step, keyed by the
//! run key every part derives alike ([`crate::options::scale::run_key`]). At a step's start:
//! 1. each part writes its arrival (its client id, the wall-clock time);
//! 2. client 0 waits until every part has arrived, then waits for a quiet server once for all
//!    of them (over every part's tables), then writes the release: a common start [`LEAD`]
//!    seconds ahead on the wall clock the parts share (one host's, or NTP-synced hosts', as
//!    `--start-at` already assumes);
//! 3. every part polls for the release and sleeps until that instant.
//!
//! Bounded: a part that has not arrived within `--barrier-timeout` makes the others fail with a
//! one-line error naming it; a part whose run fails or is stopped writes that it left, and the
//! others fail at once; Ctrl-C and SIGTERM end the wait. The table is never dropped; rows of
//! runs older than [`KEEP_DAYS`] days are removed by client 0 on its first use. The SQL is
//! plain (CREATE TABLE IF NOT EXISTS, INSERT, DELETE, SELECT) with the DBMS's float type from
//! its dialect, the same on SQLite (one file, several processes), PostgreSQL and MySQL/MariaDB.
//! Single-process runs never touch it: it is per step, never per operation.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::dbms::Conn;
use crate::deadline::Deadline;
use crate::options::scale::{sleep_until_unix, ClientPart};
use crate::results::BarrierStamps;

/// The table of the barrier's rows (named so it cannot clash with a benchmark table, whose
/// names are a prefix and a number, nor with ixbench's record of its tables).
pub const TABLE: &str = "ixbench_step_barrier";

/// Seconds between the release and the common start: more than a poll and a round trip, so
/// every part has read the release before the instant comes.
pub const LEAD: f64 = 0.25;

/// How often a waiting part looks at the table.
const POLL: Duration = Duration::from_millis(40);

/// A wait at a step's start is shown once it lasts this long (seconds), and again every
/// [`SHOW_EVERY`] while it lasts.
const SHOW_AFTER: f64 = 1.0;
const SHOW_EVERY: f64 = 10.0;

/// Shows a barrier wait while it lasts: a line after [`SHOW_AFTER`], then every [`SHOW_EVERY`].
struct Shown {
    arrived: f64,
    last: Option<f64>,
}

impl Shown {
    /// Print `what` (what the part waits for) when a line is due.
    fn tick(&mut self, what: impl FnOnce() -> String) {
        let waited = now_unix() - self.arrived;
        if waited >= SHOW_AFTER && self.last.map_or(true, |t| waited - t >= SHOW_EVERY) {
            crate::outln!("   waiting {waited:.0} s {}", what());
            self.last = Some(waited);
        }
    }
}

/// Rows of runs older than this (days) are removed.
pub const KEEP_DAYS: f64 = 7.0;

/// The client id of the release row.
const RELEASE: i64 = -1;

/// The step name of a part's row saying it left the run (its run failed or was stopped).
const LEFT: &str = "left";

/// One part's side of the barrier.
pub struct Barrier {
    key: String,
    part: ClientPart,
    timeout: Duration,
    /// How long client 0 may wait for quiet after every part arrived (the others' bound on
    /// the release, on top of `timeout`).
    quiet_timeout: Duration,
    /// The tables of every part (client 0 waits for quiet over them all).
    all_tables: Vec<String>,
    float_type: &'static str,
    ready: bool,
}

/// A row of the barrier table: client id, step label, Unix seconds.
type Row = (i64, String, f64);

fn now_unix() -> f64 {
    crate::measure::clock::wall_now().as_secs_f64()
}

fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Client ids as `1, 3`.
fn ids(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// A part's wait at a step's start: the step's label in the table and its name in messages,
/// when the part arrived (Unix seconds), and Ctrl-C.
struct StepWait<'a> {
    label: &'a str,
    shown: &'a str,
    arrived: f64,
    interrupt: &'a AtomicBool,
}

impl StepWait<'_> {
    /// The lines that show this wait while it lasts.
    fn shown_wait(&self) -> Shown {
        Shown {
            arrived: self.arrived,
            last: None,
        }
    }
}

/// The error of a wait that parts `left` ended (their run failed or was stopped).
fn left_error(left: &[u64], shown: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "client {} left the run before step {shown} (its run failed or was stopped): the parts cannot start it together",
        ids(left)
    )
}

/// The error of a wait the parts `missing` did not come to within `waited`.
fn not_reached(missing: &[u64], shown: &str, waited: Duration) -> anyhow::Error {
    anyhow::anyhow!(
        "client {} of the run did not reach step {shown} within {:.0} s (--barrier-timeout): a part is missing or far behind",
        ids(missing),
        waited.as_secs_f64()
    )
}

/// The error of a wait Ctrl-C or SIGTERM ended.
fn interrupted(shown: &str) -> anyhow::Error {
    anyhow::anyhow!("interrupted while waiting for the other parts at the start of step {shown}")
}

impl Barrier {
    /// The barrier of run `key` for `part`, on a target of `kind`; `all_tables` are every part's
    /// tables.
    pub fn new(
        key: String,
        part: ClientPart,
        timeout: Duration,
        quiet_timeout: Duration,
        all_tables: Vec<String>,
        kind: &str,
    ) -> Self {
        Barrier {
            key,
            part,
            timeout,
            quiet_timeout,
            all_tables,
            float_type: crate::dbms::registry::dialect(kind).float_type(),
            ready: false,
        }
    }

    /// The run key the parts share.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Create the table when it does not exist (several parts may try at once: a failure that
    /// left the table there is another part's success) and, on client 0, remove old runs' rows.
    fn ensure_table(&mut self, conn: &mut dyn Conn) -> Result<()> {
        if self.ready {
            return Ok(());
        }
        if !conn.table_exists(TABLE)? {
            let create = format!(
                "CREATE TABLE IF NOT EXISTS {TABLE} (run_key VARCHAR(40) NOT NULL, \
                 step VARCHAR(120) NOT NULL, client BIGINT NOT NULL, at_unix {} NOT NULL, \
                 PRIMARY KEY (run_key, step, client))",
                self.float_type
            );
            if let Err(e) = conn.execute(&create) {
                if !conn.table_exists(TABLE)? {
                    return Err(e.context(format!("cannot create the barrier table {TABLE}")));
                }
            }
        }
        if self.part.id == 0 {
            let old = now_unix() - KEEP_DAYS * 86_400.0;
            conn.execute(&format!("DELETE FROM {TABLE} WHERE at_unix < {old:.3}"))
                .with_context(|| format!("cannot remove old rows of {TABLE}"))?;
        }
        self.ready = true;
        Ok(())
    }

    /// Write this part's row for `step` (replacing one left by an attempt of the same run).
    fn put(&self, conn: &mut dyn Conn, step: &str, client: i64, at: f64) -> Result<()> {
        let (k, s) = (quoted(&self.key), quoted(step));
        conn.execute(&format!(
            "DELETE FROM {TABLE} WHERE run_key = {k} AND step = {s} AND client = {client}"
        ))?;
        conn.execute(&format!(
            "INSERT INTO {TABLE} (run_key, step, client, at_unix) VALUES ({k}, {s}, {client}, {at:.6})"
        ))
    }

    /// The rows of `step` and the rows of parts that left.
    fn rows(&self, conn: &mut dyn Conn, step: &str) -> Result<Vec<Row>> {
        let sql = format!(
            "SELECT client, step, at_unix FROM {TABLE} WHERE run_key = {} AND (step = {} OR step = {})",
            quoted(&self.key),
            quoted(step),
            quoted(LEFT)
        );
        let mut out = Vec::new();
        for r in conn.query_rows(&sql)? {
            let cell = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
            let client: i64 = cell(0)
                .trim()
                .parse()
                .with_context(|| format!("{TABLE}: a client id does not parse"))?;
            let at: f64 = cell(2)
                .trim()
                .parse()
                .with_context(|| format!("{TABLE}: a time does not parse"))?;
            out.push((client, cell(1), at));
        }
        Ok(out)
    }

    /// The parts not arrived at `step` and the parts that left, from `rows`.
    fn missing_and_left(&self, rows: &[Row], step: &str) -> (Vec<u64>, Vec<u64>) {
        let arrived: BTreeSet<i64> = rows
            .iter()
            .filter(|r| r.1 == step && r.0 >= 0)
            .map(|r| r.0)
            .collect();
        let missing = (0..self.part.count)
            .filter(|k| !arrived.contains(&(*k as i64)))
            .collect();
        let left = rows
            .iter()
            .filter(|r| r.1 == LEFT && r.0 >= 0 && r.0 as u64 != self.part.id)
            .map(|r| r.0 as u64)
            .collect();
        (missing, left)
    }

    /// Meet the other parts at the start of step `label` (`shown` in messages). Client 0 calls
    /// `quiet` once every part has arrived, with every part's tables. Returns this part's
    /// stamps once the common start has come; an error names the part that is missing or left.
    pub fn meet(
        &mut self,
        conn: &mut dyn Conn,
        label: &str,
        shown: &str,
        interrupt: &AtomicBool,
        quiet: &mut dyn FnMut(&mut dyn Conn, &[String]),
    ) -> Result<BarrierStamps> {
        self.ensure_table(conn)?;
        let arrived = now_unix();
        self.put(conn, label, self.part.id as i64, arrived)?;
        let wait = StepWait {
            label,
            shown,
            arrived,
            interrupt,
        };
        let released = if self.part.id == 0 {
            self.wait_for_all(conn, &wait)?;
            // Every part is here: one wait for quiet, for all of them.
            let tables = self.all_tables.clone();
            quiet(conn, &tables);
            // Whole milliseconds: every DBMS stores and prints them exactly alike.
            let at = ((now_unix() + LEAD) * 1e3).round() / 1e3;
            self.put(conn, label, RELEASE, at)?;
            at
        } else {
            self.wait_for_release(conn, &wait)?
        };
        if !sleep_until_unix(released, interrupt) {
            return Err(interrupted(shown));
        }
        let started = now_unix();
        if released - arrived >= 1.0 {
            crate::outln!(
                "   waited {:.1} s at the start of {shown} (for the other parts and a quiet server); started together",
                released - arrived
            );
        }
        Ok(BarrierStamps {
            arrived_unix: arrived,
            released_unix: released,
            started_unix: started,
        })
    }

    /// Client 0's wait: until every part has arrived at the step (`--barrier-timeout`).
    fn wait_for_all(&self, conn: &mut dyn Conn, w: &StepWait) -> Result<()> {
        let shown = w.shown;
        let deadline = Deadline::after(self.timeout);
        let mut waiting = w.shown_wait();
        loop {
            if w.interrupt.load(Ordering::SeqCst) {
                return Err(interrupted(shown));
            }
            let rows = self.rows(conn, w.label)?;
            let (missing, left) = self.missing_and_left(&rows, w.label);
            if !left.is_empty() {
                return Err(left_error(&left, shown));
            }
            if missing.is_empty() {
                return Ok(());
            }
            if deadline.expired() {
                return Err(not_reached(&missing, shown, self.timeout));
            }
            waiting.tick(|| {
                format!(
                    "at the start of {shown} for client {} (at most {:.0} s, --barrier-timeout)",
                    ids(&missing),
                    self.timeout.as_secs_f64()
                )
            });
            std::thread::sleep(POLL);
        }
    }

    /// The other parts' wait: until client 0 writes the release (every part arrived and the
    /// server quiet: `--barrier-timeout` and `--quiet-timeout`); the common start it says.
    fn wait_for_release(&self, conn: &mut dyn Conn, w: &StepWait) -> Result<f64> {
        let (label, shown) = (w.label, w.shown);
        let budget = self.timeout + self.quiet_timeout + Duration::from_secs(5);
        let deadline = Deadline::after(budget);
        let mut waiting = w.shown_wait();
        loop {
            if w.interrupt.load(Ordering::SeqCst) {
                return Err(interrupted(shown));
            }
            let rows = self.rows(conn, label)?;
            if let Some(r) = rows.iter().find(|r| r.1 == label && r.0 == RELEASE) {
                return Ok(r.2);
            }
            let (missing, left) = self.missing_and_left(&rows, label);
            if !left.is_empty() {
                return Err(left_error(&left, shown));
            }
            if deadline.expired() {
                if missing.is_empty() {
                    bail!(
                        "client 0 did not start step {shown} within {:.0} s of every part's arrival (--barrier-timeout and --quiet-timeout)",
                        budget.as_secs_f64()
                    );
                }
                return Err(not_reached(&missing, shown, budget));
            }
            waiting.tick(|| {
                let whom = if missing.is_empty() {
                    "client 0 to start it (it waits for a quiet server)".to_string()
                } else {
                    format!("client {} to arrive", ids(&missing))
                };
                format!(
                    "at the start of {shown} for {whom} (at most {:.0} s, --barrier-timeout and --quiet-timeout)",
                    budget.as_secs_f64()
                )
            });
            std::thread::sleep(POLL);
        }
    }

    /// Say this part left the run (its run failed or was stopped), so the others waiting at a
    /// step's start fail at once instead of after the timeout. Best effort: a failure to write
    /// it is ignored (the others then fail at their timeout).
    pub fn leave(&mut self, conn: &mut dyn Conn) {
        if self.ensure_table(conn).is_ok() {
            let _ = self.put(conn, LEFT, self.part.id as i64, now_unix());
        }
    }
}
