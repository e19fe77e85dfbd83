//! A schema change under load: a [`Workload`] run by client threads at a fixed offered rate
//! (open loop: every transaction has an intended start, its latency counts from there, so a
//! stall shows in every transaction it delayed) or as fast as they can (closed loop, the
//! probe), with, optionally, a DDL started in its own session after a baseline window, its
//! progress and lock waits sampled from another session, and the load kept on for a recovery
//! window after it. The clients run on the one measuring loop ([`crate::measure::drive`]) and
//! record into the meter; the timeline is the reporter's intervals (`--interval`, sub-second
//! allowed), each with its backlog of intended starts not yet taken. The caller gets each
//! interval as it closes (to print and store it) and the whole run at the end.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::dbms::ddl::{error_code, DdlDialect, DdlPlan, DdlRequest, Waits};
use crate::dbms::errcode::is_duplicate_key;
use crate::dbms::{Conn, Dbms};
use crate::measure::clock;
use crate::measure::drive::{drive, AfterError, Counted, Done, Operation, Pacing};
use crate::measure::interval::IntervalDetail;
use crate::measure::interval::IntervalLine;
use crate::measure::meter::Meter;
use crate::measure::reporter::{run_workers_with, Clock, Measured, ReportOptions, Signals, Worker};
use crate::measure::schedule::{Arrivals, Schedule};
use crate::measure::until::Until;
use crate::measure::windows::{backlog_level, label, IntervalStats};
use crate::results::ddl::{lock_waits, DdlOutcome, TimelineRow};
use crate::step::schema_tools::DdlHook;
use crate::workload::{Workload, WorkloadClient};

/// When the first progress sample is taken after the DDL's start.
const FIRST_SAMPLE: Duration = Duration::from_millis(100);

/// Longest time between two progress samples of the DDL (shorter with shorter intervals, down
/// to [`SAMPLE_AT_MOST`]).
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// Shortest time between two progress samples.
const SAMPLE_AT_MOST: Duration = Duration::from_millis(250);

/// The reporter gives up on a load in which nothing completed for this long beyond the DDL's
/// timeout and windows (a server that stopped answering), so the DDL's own timeout acts first.
const STALL_MARGIN: Duration = Duration::from_secs(60);

/// The load.
pub struct LoadSpec<'a> {
    /// The database.
    pub target: &'a dyn Dbms,
    /// The workload.
    pub workload: &'a dyn Workload,
    /// Client threads, each with its own connection.
    pub threads: usize,
    /// Offered rate, transactions per second over all threads; `None`: closed loop.
    pub rate: Option<f64>,
    /// Uniform or Poisson intended starts.
    pub arrivals: Arrivals,
    /// Seed of the clients' generators.
    pub seed: u64,
    /// Retries of a transaction after a transient error.
    pub max_retries: u32,
    /// Stop at the first foreground error that is not transient (`--on-error stop`).
    pub stop_on_error: bool,
    /// Length of the timeline's intervals.
    pub interval: Duration,
    /// Ctrl-C.
    pub interrupt: &'a AtomicBool,
}

/// The DDL to run during the load.
pub struct DdlJob<'a> {
    /// The engine's dialect.
    pub dialect: &'a dyn DdlDialect,
    /// Its statements.
    pub plan: &'a DdlPlan,
    /// What was asked (the table, for INVALID indexes).
    pub req: &'a DdlRequest,
    /// Session knobs for the DDL's session.
    pub session_knobs: &'a [(String, String)],
    /// Start the DDL this long after the load starts.
    pub baseline: Duration,
    /// Keep the load on this long after the DDL ends.
    pub recovery: Duration,
    /// Cancel the DDL after this long.
    pub timeout: Duration,
    /// Attempts after a failed one whose error is worth retrying.
    pub max_retries: u32,
    /// The method that makes the change instead of the plan's statements (a tool, a user's
    /// command), and measures what it costs; `None`: the statements.
    pub hook: Option<&'a dyn DdlHook>,
}

/// What one load run measured.
#[derive(Debug, Default)]
pub struct LoadRun {
    /// Per interval, over all clients (the reporter's intervals).
    pub intervals: Vec<IntervalStats>,
    /// The timeline rows (as given to the caller while it ran, with the final marks).
    pub rows: Vec<TimelineRow>,
    /// The DDL, when there was one.
    pub ddl: Option<DdlOutcome>,
    /// Intended starts not taken when the load stopped (each recorded as never started, in
    /// the latency with the time it waited).
    pub behind: u64,
    /// The largest backlog at an interval's end (`None`: closed loop).
    pub peak_backlog: Option<u64>,
    /// Client reconnections.
    pub reconnects: u64,
    /// The first foreground error that stopped the run (`stop_on_error`).
    pub foreground_error: Option<String>,
    /// Seconds the load ran.
    pub elapsed: f64,
}

/// The DDL's state, shared by its thread, the sampler and the reporter.
#[derive(Default)]
struct DdlLive {
    started: Option<Instant>,
    ended: Option<Instant>,
    outcome: DdlOutcome,
    /// (t, phase, waits)
    samples: Vec<(f64, Option<String>, Waits)>,
}

/// Sleep until `t` or until `stop()` says so, in short slices.
fn sleep_until(t: Instant, stop: impl Fn() -> bool) {
    loop {
        let now = clock::now();
        if now >= t || stop() {
            return;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(20)));
    }
}

/// `m` locked: a thread that panicked holding it left it as it was, which is still read.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Run one transaction on a new client before the clock starts, so the first measured interval
/// does not pay for its first statements (statements prepared, plans cached, pages read for
/// the first time). A transient error is rolled back and ignored.
fn prime(conn: &mut dyn Conn, client: &mut dyn WorkloadClient) -> Result<()> {
    match client.run(conn) {
        Ok(_) => Ok(()),
        Err(e) => {
            let _ = conn.rollback();
            if conn.is_retryable(&e) || is_duplicate_key(&e) {
                Ok(())
            } else {
                Err(e.context("its first transaction (before the clock starts) failed"))
            }
        }
    }
}

/// Connect a client: a connection and the workload's client prepared on it.
fn connect_client(spec: &LoadSpec, id: usize) -> Result<(Box<dyn Conn>, Box<dyn WorkloadClient>)> {
    let mut conn = spec.target.connect()?;
    let client =
        spec.workload
            .client(conn.as_mut(), id, spec.seed.wrapping_add(id as u64 * 7919))?;
    Ok((conn, client))
}

struct Shared<'a> {
    origin: Instant,
    /// When the clients stop: the probe's length, or the DDL's end plus the recovery window
    /// once it has ended; or at once (a foreground error).
    until: Until,
    fatal: Mutex<Option<String>>,
    behind: AtomicU64,
    reconnects: AtomicU64,
    interrupt: &'a AtomicBool,
    /// The method making the change, which may make some of the load's errors transient.
    hook: Option<&'a dyn DdlHook>,
}

impl Shared<'_> {
    fn stopping(&self) -> bool {
        self.until.stopped() || self.interrupt.load(Ordering::SeqCst)
    }
}

/// One client's transactions, as [`drive`] runs them: transient errors (and the duplicate key
/// a concurrent DELETE+INSERT of one id may hit, which sysbench ignores too, and an error the
/// method's run causes, [`DdlHook::load_error_is_transient`]) run again; any
/// other error counts as a failed transaction and, with `--on-error stop`, stops the load,
/// else the client goes on (after connecting again when its connection was lost: a server
/// restart, or a cluster node that died, failed over whatever `--on-error` says).
///
/// Why this reconnect is not the one loop's failover ([`crate::measure::failover::Failover`],
/// which [`Pacing::failover`] would give): that one is for a target that fails over (a Galera
/// node that died) and runs the lost attempt again on the new connection, counted as a retry,
/// within a 60 s hang guard. Here the load is the measure of what the DDL costs, so a
/// transaction whose connection was lost is a failed transaction of its interval (the
/// timeline shows it, by its error code), not a retry; the connection is made again on any
/// target, also a single server restarted under the DDL (`tests/ddl.rs`,
/// `postgres_cic_waits_for_old_snapshot_then_restart`), whose restart may outlast a hang
/// guard: it is tried until the run ends. Only what follows the error differs: the loop, its
/// schedule, retries and counts are the one loop's.
struct ClientOp<'a> {
    spec: &'a LoadSpec<'a>,
    id: usize,
    conn: Box<dyn Conn>,
    client: Box<dyn WorkloadClient>,
    sh: &'a Shared<'a>,
}

impl Operation for ClientOp<'_> {
    fn counted(&self) -> Counted {
        Counted::Txn
    }

    fn run(&mut self) -> Result<Done> {
        self.client.run(self.conn.as_mut()).map(Done::Txn)
    }

    fn transient(&mut self, e: &anyhow::Error) -> bool {
        self.conn.is_retryable(e)
            || is_duplicate_key(e)
            || self.sh.hook.is_some_and(|h| h.load_error_is_transient(e))
    }

    fn rollback(&mut self) {
        let _ = self.conn.rollback();
    }

    fn failed(&mut self, e: anyhow::Error, _tries: u32, stop: &dyn Fn() -> bool) -> AfterError {
        let code = error_code(&e);
        // A lost connection: the server restarted, or a cluster node died.
        let lost = self.conn.query_rows("SELECT 1").is_err();
        if self.spec.stop_on_error && !(lost && self.spec.target.fails_over()) {
            let mut f = lock(&self.sh.fatal);
            if f.is_none() {
                *f = Some(format!(
                    "the load failed (error {code}): {}",
                    crate::format::error_line(&e)
                ));
            }
            self.sh.until.stop();
            return AfterError::Stop;
        }
        // Connect again (on a cluster: to a surviving node) until it works or the run ends.
        if lost {
            loop {
                if stop() {
                    return AfterError::Stop;
                }
                match connect_client(self.spec, self.id) {
                    Ok((c, cl)) => {
                        self.conn = c;
                        self.client = cl;
                        self.sh.reconnects.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(250)),
                }
            }
        }
        AfterError::Continue
    }
}

/// One client: its share of the rate on its own schedule (open loop) or as fast as it can,
/// until the end.
fn client_loop(
    spec: &LoadSpec,
    id: usize,
    conn: Box<dyn Conn>,
    client: Box<dyn WorkloadClient>,
    sh: &Shared,
    m: &Meter,
    sig: &Signals,
) -> Result<()> {
    let schedule = spec.rate.map(|r| {
        Schedule::for_writer(
            sh.origin,
            sh.origin,
            r / spec.threads as f64,
            spec.arrivals,
            spec.seed ^ (id as u64).wrapping_mul(0x9e37_79b9),
            id,
            spec.threads,
        )
    });
    let mut op = ClientOp {
        spec,
        id,
        conn,
        client,
        sh,
    };
    let pacing = Pacing {
        schedule,
        until: Some(&sh.until),
        max_retries: spec.max_retries,
        // A lost connection is handled in `failed` (a restarted server too, not only a node
        // that left a cluster), without running the transaction again (see `ClientOp`).
        failover: None,
        slots_past_end: false,
    };
    let ended = drive(m, sig, pacing, &mut op)?;
    sh.behind.fetch_add(ended.never_started, Ordering::Relaxed);
    Ok(())
}

/// What the DDL's attempts came to: how many ran, the errors of those that failed, the
/// INVALID indexes dropped between them, and the error that stood (code, line; `None`: the
/// last attempt succeeded).
struct Attempts {
    count: u32,
    errors: Vec<String>,
    dropped: Vec<String>,
    failed: Option<(String, String)>,
}

/// The DDL thread: wait for the baseline to pass, run the statements (again after a
/// retryable error, once any INVALID index and partial result is removed), record the times.
fn ddl_thread(job: &DdlJob, mut conn: Box<dyn Conn>, sh: &Shared, live: &Mutex<DdlLive>) {
    if let Some(h) = job.hook {
        h.load_started(sh.origin, conn.as_mut());
    }
    sleep_until(sh.origin + job.baseline, || sh.stopping());
    if sh.stopping() {
        return;
    }
    if let Some(h) = job.hook {
        h.ddl_started(conn.as_mut());
    }
    let t0 = clock::now();
    {
        let mut l = lock(live);
        l.started = Some(t0);
        l.outcome.started_s = Some((t0 - sh.origin).as_secs_f64());
    }
    let tried = run_attempts(job, conn.as_mut(), sh, live);
    let t1 = clock::now();
    record_end(job, conn.as_mut(), sh.origin, live, (t0, t1), tried);
}

/// One attempt at the DDL: the method's own run (a tool's), or the plan's statements in order.
fn attempt(job: &DdlJob, conn: &mut dyn Conn) -> Result<()> {
    match job.hook.and_then(|h| h.run(conn)) {
        Some(r) => r,
        None => {
            for s in &job.plan.statements {
                conn.execute(s).with_context(|| s.clone())?;
            }
            Ok(())
        }
    }
}

/// Attempt the DDL until it succeeds, or fails with an error not worth retrying, or is out of
/// retries, cancelled or stopped with the load.
fn run_attempts(job: &DdlJob, conn: &mut dyn Conn, sh: &Shared, live: &Mutex<DdlLive>) -> Attempts {
    let mut a = Attempts {
        count: 0,
        errors: Vec::new(),
        dropped: Vec::new(),
        failed: None,
    };
    a.failed = loop {
        a.count += 1;
        let Err(e) = attempt(job, conn) else {
            break None;
        };
        if job
            .plan
            .statements
            .first()
            .is_some_and(|s| s.starts_with("BEGIN"))
        {
            let _ = conn.execute("ROLLBACK");
        }
        let code = error_code(&e);
        a.errors
            .push(format!("{code}: {}", crate::format::error_line(&e)));
        let cancelled = lock(live).outcome.cancelled;
        if a.count <= job.max_retries
            && job.dialect.ddl_retryable(&e)
            && !cancelled
            && !sh.stopping()
        {
            clean_for_retry(job, conn, &mut a.dropped);
            std::thread::sleep(Duration::from_millis(500));
            continue;
        }
        break Some((code, crate::format::error_line(&e)));
    };
    a
}

/// Before the DDL runs again: drop what the failed attempt left, so the next one starts clean
/// (the INVALID indexes dropped are added to `dropped`).
fn clean_for_retry(job: &DdlJob, conn: &mut dyn Conn, dropped: &mut Vec<String>) {
    // An INVALID index the failed online build left (the driver drops it otherwise, once the
    // load has stopped).
    if let Ok(inv) = job.dialect.invalid_indexes(conn, &job.req.table) {
        for i in inv {
            if conn
                .execute(&job.dialect.drop_index_sql(&job.req.table, &i, true))
                .is_ok()
            {
                dropped.push(i);
            }
        }
    }
    // What a partial run built (PostgreSQL builds one index per statement): drop the indexes
    // of the request that exist.
    if job.req.kind == crate::dbms::ddl::DdlKind::AddIndex {
        for i in &job.req.indexes {
            if conn.index_exists(&job.req.table, &i.name).unwrap_or(false) {
                let _ = conn.execute(&job.dialect.drop_index_sql(&job.req.table, &i.name, true));
            }
        }
    }
}

/// Record the DDL's end (`times`: its start and end) and what its attempts came to, with the
/// method's last phase (a swap that took less than a sample's interval).
fn record_end(
    job: &DdlJob,
    conn: &mut dyn Conn,
    origin: Instant,
    live: &Mutex<DdlLive>,
    (t0, t1): (Instant, Instant),
    tried: Attempts,
) {
    let last_phase = job.hook.and_then(|h| {
        h.ddl_ended(conn);
        h.phase(conn)
    });
    let mut l = lock(live);
    if let Some(p) = last_phase {
        l.samples
            .push(((t1 - origin).as_secs_f64(), Some(p), Waits::default()));
    }
    l.ended = Some(t1);
    let o = &mut l.outcome;
    o.ended_s = Some((t1 - origin).as_secs_f64());
    o.seconds = Some((t1 - t0).as_secs_f64());
    o.attempts = tried.count;
    o.attempt_errors = tried.errors;
    o.invalid_dropped = tried.dropped;
    if let Some((code, msg)) = tried.failed {
        o.error_code = Some(code);
        o.error = Some(msg);
    }
}

/// Sample the DDL's progress and waits every `every` while it runs.
fn sampler_thread(
    spec: &LoadSpec,
    job: &DdlJob,
    every: Duration,
    mut conn: Box<dyn Conn>,
    session_id: Option<i64>,
    sh: &Shared,
    live: &Mutex<DdlLive>,
) {
    let mut next = sh.origin + job.baseline;
    loop {
        sleep_until(next, || lock(live).ended.is_some() || sh.stopping());
        let (started, ended) = {
            let l = lock(live);
            (l.started, l.ended)
        };
        if ended.is_some() || (sh.stopping() && started.is_none()) {
            return;
        }
        let Some(started) = started else {
            next = clock::now() + Duration::from_millis(20);
            continue;
        };
        // The first sample a moment after the start, once the statement has registered in
        // the progress views; then every `every`.
        if clock::now() < started + FIRST_SAMPLE {
            next = started + FIRST_SAMPLE;
            continue;
        }
        let t = (clock::now() - sh.origin).as_secs_f64();
        let phase = match job.hook.and_then(|h| h.phase(conn.as_mut())) {
            Some(p) => Some(p),
            None => match job.dialect.progress_sql() {
                Some(sql) => crate::dbms::ddl::rows_text(conn.as_mut(), sql).ok(),
                None => spec.target.build_progress(conn.as_mut()).ok().flatten(),
            },
        };
        let waits = match job.hook.and_then(|h| h.waits(conn.as_mut())) {
            Some(w) => w,
            None => session_id
                .and_then(|id| job.dialect.waits(conn.as_mut(), id).ok())
                .unwrap_or_default(),
        };
        lock(live).samples.push((t, phase, waits));
        // A cancelled DDL is sampled until it ends.
        next += every;
    }
}

/// An interval's figures from the reporter's line and detail: failed transactions by code,
/// and the retried errors by code (every failed attempt's code, less those that stood).
fn interval_stats(l: &IntervalLine, d: &IntervalDetail) -> IntervalStats {
    let mut errors = std::collections::BTreeMap::new();
    for (c, n) in &d.fail_codes {
        *errors.entry(c.clone()).or_default() += n;
    }
    let mut retry_codes = std::collections::BTreeMap::new();
    for (c, n) in &d.error_codes {
        let failed = errors.get(c).copied().unwrap_or(0);
        if *n > failed {
            retry_codes.insert(c.clone(), n - failed);
        }
    }
    IntervalStats {
        t: (l.t_sec - l.i_sec).max(0.0),
        secs: l.i_sec,
        txns: d.totals.txn.txns,
        queries: d.totals.txn.statements(),
        errors,
        retries: d.totals.txn.retries,
        retry_codes,
        hist: d.txn.latency.clone(),
        backlog: d.backlog,
    }
}

/// Where the DDL and the load's backlog are, for the timeline's labels: the DDL's start and
/// end (seconds from the load's start), the baseline's highest backlog, and when the backlog
/// drained to it after the DDL.
#[derive(Debug, Default, Clone)]
struct Phases {
    start: Option<f64>,
    end: Option<f64>,
    /// The baseline's backlogs so far, and their level ([`backlog_level`]).
    baseline: Vec<u64>,
    level: u64,
    drained: Option<f64>,
}

impl Phases {
    /// Take in interval `s` (in order): the baseline's backlog level, and the drain.
    fn see(&mut self, s: &IntervalStats) {
        const EPS: f64 = 1e-6;
        match (self.start, self.end) {
            (Some(st), _) if s.end() <= st + EPS => {
                self.baseline.extend(s.backlog);
                self.level = backlog_level(&self.baseline);
            }
            (None, _) => {
                self.baseline.extend(s.backlog);
                self.level = backlog_level(&self.baseline);
            }
            (Some(_), Some(e))
                if self.drained.is_none()
                    && s.end() > e
                    && s.backlog.map_or(true, |b| b <= self.level) =>
            {
                self.drained = Some(s.end());
            }
            _ => {}
        }
    }
}

/// The timeline row of interval `s`.
fn row(point: usize, s: &IntervalStats, live: Option<&DdlLive>, ph: &Phases) -> TimelineRow {
    let mut r = TimelineRow {
        point,
        t: s.t,
        i_sec: s.secs,
        window: "probe".into(),
        txns: s.txns,
        queries: s.queries,
        p50_us: s.pct(0.5),
        p99_us: s.pct(0.99),
        max_us: (!s.hist.is_empty()).then(|| s.hist.max()),
        errors: s.error_count(),
        retries: s.retries,
        backlog: s.backlog,
        ..Default::default()
    };
    let Some(l) = live else {
        return r;
    };
    r.window = label(s.t, s.secs, ph.start, ph.end, ph.drained).into();
    let inside = |t: f64| t >= s.t && t < s.end();
    if ph.start.is_some_and(inside) {
        r.marks.push("DDL start".into());
    }
    if ph.end.is_some_and(inside) {
        r.marks.push(
            if l.outcome.cancelled {
                "DDL cancelled"
            } else if l.outcome.error.is_some() {
                "DDL failed"
            } else {
                "DDL end"
            }
            .into(),
        );
    }
    if ph.drained.is_some_and(|d| (d - s.end()).abs() < 1e-9) && s.backlog.is_some() {
        r.marks.push("drained".into());
    }
    if let Some((_, p, w)) = l.samples.iter().rev().find(|(t, _, _)| inside(*t)) {
        r.phase = p.clone();
        let d = w.describe();
        r.waits = (!d.is_empty()).then_some(d);
    }
    r
}

/// The intervals of one line of the text at sub-second intervals: about a second of them,
/// merged (counts summed, percentiles from the merged histograms, never averaged).
#[derive(Default)]
struct TextGroup {
    merged: Option<IntervalStats>,
    rows: Vec<TimelineRow>,
}

impl TextGroup {
    /// Take in interval `s` and its row.
    fn push(&mut self, s: &IntervalStats, r: &TimelineRow) {
        match &mut self.merged {
            Some(m) => {
                m.add(s);
                m.secs += s.secs;
                m.backlog = s.backlog;
            }
            None => self.merged = Some(s.clone()),
        }
        self.rows.push(r.clone());
    }

    /// The line of the intervals taken in since the last one, as one row (the window, backlog
    /// and phase of the last; every mark), and start the next.
    fn close(&mut self, point: usize) -> Option<TimelineRow> {
        let m = self.merged.take()?;
        let rows = std::mem::take(&mut self.rows);
        let last = rows.last()?;
        let mut marks: Vec<String> = Vec::new();
        for k in rows.iter().flat_map(|r| r.marks.iter()) {
            if !marks.contains(k) {
                marks.push(k.clone());
            }
        }
        Some(TimelineRow {
            point,
            t: m.t,
            i_sec: m.secs,
            window: last.window.clone(),
            txns: m.txns,
            queries: m.queries,
            p50_us: m.pct(0.5),
            p99_us: m.pct(0.99),
            max_us: (!m.hist.is_empty()).then(|| m.hist.max()),
            errors: m.error_count(),
            retries: m.retries,
            phase: rows.iter().rev().find_map(|r| r.phase.clone()),
            waits: rows.iter().rev().find_map(|r| r.waits.clone()),
            marks,
            backlog: last.backlog,
        })
    }
}

/// Intervals per line of the text: one at intervals of a second or more, else as many as make
/// about a second.
fn per_text_line(interval: Duration) -> usize {
    let i = interval.as_secs_f64();
    if i >= 0.999 {
        1
    } else {
        ((1.0 / i) - 1e-6).ceil().max(1.0) as usize
    }
}

/// The DDL's start and end, seconds from `origin`.
fn ddl_times(l: &DdlLive, origin: Instant) -> (Option<f64>, Option<f64>) {
    let at = |i: Instant| (i - origin).as_secs_f64();
    (l.started.map(at), l.ended.map(at))
}

/// A client's connection and the workload's client prepared on it.
type Client = (Box<dyn Conn>, Box<dyn WorkloadClient>);

/// Connect every client and run its first transaction, before the clock starts.
fn connect_clients(spec: &LoadSpec) -> Result<Vec<Client>> {
    let mut clients = Vec::with_capacity(spec.threads);
    for id in 0..spec.threads {
        let (mut conn, mut client) =
            connect_client(spec, id).with_context(|| format!("connecting client {}", id + 1))?;
        prime(conn.as_mut(), client.as_mut()).with_context(|| format!("client {}", id + 1))?;
        clients.push((conn, client));
    }
    Ok(clients)
}

/// The sessions a DDL needs beside the clients', connected before the clock starts.
struct DdlSessions {
    /// The DDL's own, with the point's session knobs.
    ddl: Box<dyn Conn>,
    /// Its id on the server (to read its waits and cancel it), when the dialect can tell.
    id: Option<i64>,
    /// The progress sampler's.
    sampler: Box<dyn Conn>,
    /// The one that cancels the DDL.
    control: Box<dyn Conn>,
}

impl DdlSessions {
    fn connect(spec: &LoadSpec, job: &DdlJob) -> Result<Self> {
        let mut c = spec
            .target
            .connect_admin()
            .context("connecting the DDL's session")?;
        for (k, v) in job.session_knobs {
            spec.target
                .set_session_knob(c.as_mut(), k, v)
                .with_context(|| format!("knob {k}={v} on the DDL's session"))?;
        }
        let id = match job.dialect.session_id_sql() {
            Some(sql) => c.query_i64(sql)?,
            None => None,
        };
        let sampler = spec
            .target
            .connect_admin()
            .context("connecting the progress sampler")?;
        let control = spec
            .target
            .connect_admin()
            .context("connecting the control session")?;
        Ok(DdlSessions {
            ddl: c,
            id,
            sampler,
            control,
        })
    }
}

/// How long the reporter waits for a completed transaction before it gives up on the load:
/// [`STALL_MARGIN`] beyond the DDL's timeout and windows, or beyond the probe's length.
fn stall_timeout(duration: Option<Duration>, ddl: Option<&DdlJob>) -> Duration {
    match (duration, ddl) {
        (_, Some(job)) => job.timeout + job.baseline + job.recovery + STALL_MARGIN,
        (Some(d), None) => d + STALL_MARGIN,
        (None, None) => STALL_MARGIN,
    }
}

/// The DDL's cancel, sent once: marked in its outcome, handed to the method's hook and sent
/// on the control session.
struct Cancel<'a> {
    live: &'a Mutex<DdlLive>,
    control: Option<Box<dyn Conn>>,
    session_id: Option<i64>,
    sent: bool,
}

impl Cancel<'_> {
    /// Cancel the DDL (`overdue`: past its timeout), unless that was done already.
    fn send(&mut self, job: &DdlJob, overdue: bool) {
        if self.sent {
            return;
        }
        self.sent = true;
        {
            let mut l = lock(self.live);
            l.outcome.cancelled = true;
            l.outcome.timed_out = overdue;
        }
        // A schema-change tool run as the DDL is stopped (and cleaned up) by its hook.
        if let Some(h) = job.hook {
            h.cancel();
        }
        if let (Some(c), Some(id)) = (self.control.as_mut(), self.session_id) {
            if let Some(sql) = job.dialect.cancel_sql(id) {
                let _ = c.as_mut().query_rows(&sql);
            }
        }
    }
}

/// The timeline as its intervals close: each one's figures and row, the phases seen so far,
/// and the line of text being gathered.
struct Timeline {
    point: usize,
    /// Intervals per line of the text ([`per_text_line`]).
    per_line: usize,
    rows: Vec<TimelineRow>,
    stats: Vec<IntervalStats>,
    phases: Phases,
    text: TextGroup,
}

/// One load run: what it runs, and the state its threads and the reporter share.
struct Load<'a> {
    spec: &'a LoadSpec<'a>,
    ddl: Option<&'a DdlJob<'a>>,
    /// The intervals' length (at least 10 ms).
    interval: Duration,
    sh: Shared<'a>,
    live: Mutex<DdlLive>,
}

impl<'a> Load<'a> {
    /// The workers: the clients, and with a DDL its session and its progress sampler.
    fn workers<'w>(
        &'w self,
        clients: Vec<Client>,
        sessions: Option<DdlSessions>,
    ) -> (Vec<Worker<'w>>, Cancel<'w>) {
        let (spec, sh, live) = (self.spec, &self.sh, &self.live);
        let mut workers: Vec<Worker> = Vec::new();
        for (id, (conn, client)) in clients.into_iter().enumerate() {
            workers.push(Worker {
                name: format!("client-{}", id + 1),
                body: Box::new(move |m: &Meter, sig: &Signals| {
                    client_loop(spec, id, conn, client, sh, m, sig)
                }),
            });
        }
        let mut cancel = Cancel {
            live,
            control: None,
            session_id: None,
            sent: false,
        };
        if let (Some(job), Some(s)) = (self.ddl, sessions) {
            cancel.session_id = s.id;
            cancel.control = Some(s.control);
            let every = self.interval.clamp(SAMPLE_AT_MOST, SAMPLE_EVERY);
            let (c, id, sampler) = (s.ddl, s.id, s.sampler);
            // The DDL's session and the sampler run beside the clients, on the same clock;
            // they record nothing, and the load's intervals go on until the DDL has ended
            // even when the clients stopped (a foreground error, Ctrl-C).
            workers.push(Worker {
                name: "ddl".into(),
                body: Box::new(move |_: &Meter, _: &Signals| {
                    ddl_thread(job, c, sh, live);
                    Ok(())
                }),
            });
            workers.push(Worker {
                name: "ddl-progress".into(),
                body: Box::new(move |_: &Meter, _: &Signals| {
                    sampler_thread(spec, job, every, sampler, id, sh, live);
                    Ok(())
                }),
            });
        }
        (workers, cancel)
    }

    /// Run the workers on the reporter until the load ends, taking in each interval as it
    /// closes ([`Load::take`]) and steering the end ([`Load::steer`]).
    fn measure(
        &self,
        clients: Vec<Client>,
        sessions: Option<DdlSessions>,
        stall_timeout: Duration,
        tl: &mut Timeline,
        on_row: &mut dyn FnMut(&TimelineRow, Option<&TimelineRow>),
    ) -> Measured {
        let (workers, mut cancel) = self.workers(clients, sessions);
        let opts = ReportOptions {
            interval: self.interval,
            stall_timeout,
        };
        let clock = Clock {
            start: Some(self.sh.origin),
            until: Some(&self.sh.until),
        };
        let step = if self.ddl.is_some() { "load" } else { "probe" };
        let m = run_workers_with(
            step,
            opts,
            self.spec.interrupt,
            workers,
            clock,
            &mut |l, d| {
                self.take(tl, interval_stats(l, d), on_row);
                self.steer(&mut cancel);
                Ok(())
            },
        );
        // The load stopped while the DDL still ran (its clients failed for good): cancel it;
        // its worker ended with it.
        if let Some(job) = self.ddl {
            let l = lock(&self.live);
            let running = l.started.is_some() && l.ended.is_none();
            drop(l);
            if running {
                cancel.send(job, false);
            }
        }
        m
    }

    /// Take in the interval `st`: its row (given to `on_row` with the line of text it
    /// closes, if any), kept with its figures.
    fn take(
        &self,
        tl: &mut Timeline,
        st: IntervalStats,
        on_row: &mut dyn FnMut(&TimelineRow, Option<&TimelineRow>),
    ) {
        let origin = self.sh.origin;
        let l = lock(&self.live);
        if self.ddl.is_some() {
            (tl.phases.start, tl.phases.end) = ddl_times(&l, origin);
        }
        tl.phases.see(&st);
        let r = row(tl.point, &st, self.ddl.map(|_| &*l), &tl.phases);
        drop(l);
        tl.text.push(&st, &r);
        // The run's last interval closes its line too.
        let last = self.sh.until.end().is_some_and(|e| {
            st.end() >= (e - origin).as_secs_f64() - 0.5 * self.interval.as_secs_f64()
        });
        let line = (tl.text.rows.len() >= tl.per_line || last)
            .then(|| tl.text.close(tl.point))
            .flatten();
        on_row(&r, line.as_ref());
        tl.rows.push(r);
        tl.stats.push(st);
    }

    /// After an interval: cancel a DDL on a stop or past its timeout, end the load a recovery
    /// window after the DDL's end, stop it on a foreground error or Ctrl-C.
    fn steer(&self, cancel: &mut Cancel) {
        let (sh, origin, interval) = (&self.sh, self.sh.origin, self.interval);
        let now = clock::now();
        let fatal = lock(&sh.fatal).is_some();
        let stopping = fatal || self.spec.interrupt.load(Ordering::SeqCst);
        match self.ddl {
            Some(job) => {
                let (started, ended) = {
                    let l = lock(&self.live);
                    (l.started, l.ended)
                };
                let overdue = started.is_some_and(|t| now - t > job.timeout);
                if started.is_some() && ended.is_none() && (stopping || overdue) {
                    cancel.send(job, overdue && !stopping);
                }
                if let Some(e) = ended {
                    if sh.until.end().is_none() {
                        // The recovery window, to a whole interval.
                        let want = (e - origin + job.recovery).as_secs_f64();
                        let k = (want / interval.as_secs_f64()).ceil();
                        sh.until.set_end(origin + interval.mul_f64(k));
                    }
                }
                if stopping && (ended.is_some() || started.is_none()) {
                    sh.until.stop();
                }
            }
            None if stopping => sh.until.stop(),
            None => {}
        }
    }

    /// What the load measured, once it has ended.
    fn finish(self, measured: Measured, tl: Timeline) -> LoadRun {
        let origin = self.sh.origin;
        let elapsed = clock::since(origin).as_secs_f64();
        // The reporter's own errors (no transaction completed for the stall timeout).
        let mut fatal = self
            .sh
            .fatal
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        if fatal.is_none() {
            if let Some((who, e)) = measured.errors.first() {
                fatal = Some(format!(
                    "the load failed ({who}): {}",
                    crate::format::error_line(e)
                ));
            }
        }
        let l = self.live.into_inner().unwrap_or_else(|e| e.into_inner());
        let with_ddl = self.ddl.is_some();
        LoadRun {
            rows: final_rows(&tl, with_ddl.then_some(&l), origin),
            intervals: tl.stats,
            ddl: with_ddl.then(|| ddl_outcome(&l)),
            behind: self.sh.behind.load(Ordering::SeqCst),
            peak_backlog: measured.peak_backlog,
            reconnects: self.sh.reconnects.load(Ordering::SeqCst),
            foreground_error: fatal,
            elapsed,
        }
    }
}

/// The final rows: the marks with what is known now (a DDL that ended in an interval whose
/// row was written first); what the sampler said in each interval is kept.
fn final_rows(tl: &Timeline, live: Option<&DdlLive>, origin: Instant) -> Vec<TimelineRow> {
    let mut ph = Phases::default();
    if let Some(l) = live {
        (ph.start, ph.end) = ddl_times(l, origin);
    }
    tl.stats
        .iter()
        .enumerate()
        .map(|(i, st)| {
            ph.see(st);
            let mut r = row(tl.point, st, live, &ph);
            if let Some(old) = tl.rows.get(i) {
                if r.phase.is_none() {
                    r.phase = old.phase.clone();
                }
            }
            r
        })
        .collect()
}

/// The DDL's outcome with what its samples said: its progress, lock waits and the most
/// sessions it blocked.
fn ddl_outcome(l: &DdlLive) -> DdlOutcome {
    let mut o = l.outcome.clone();
    o.progress = l
        .samples
        .iter()
        .filter_map(|(t, p, _)| p.clone().map(|p| (*t, p)))
        .collect();
    let waits: Vec<(f64, Option<String>, Option<f64>)> = l
        .samples
        .iter()
        .map(|(t, _, w)| {
            (
                *t,
                w.ddl_waits.as_ref().map(|(what, _)| what.clone()),
                w.ddl_waits.as_ref().and_then(|(_, s)| *s),
            )
        })
        .collect();
    o.lock_waits = lock_waits(&waits);
    o.max_blocked_sessions = l
        .samples
        .iter()
        .map(|(_, _, w)| w.blocked_sessions)
        .max()
        .unwrap_or(0);
    o
}

/// Run the load: for `duration` (the probe), or with `ddl` in the middle until its recovery
/// window has passed. `on_row` gets each interval's row as it closes, and, when the interval
/// closes a line of the text, that line: the row itself at intervals of a second or more, at
/// shorter ones about a second of intervals merged (see [`crate::export::ddl::TextTimeline`],
/// which prints them; the last line of a run may be shorter, and one cut short by a stop never
/// comes). Errors only when the clients or the DDL's sessions cannot connect at the start;
/// everything after is in the result.
pub fn run_load(
    spec: &LoadSpec,
    point: usize,
    duration: Option<Duration>,
    ddl: Option<&DdlJob>,
    on_row: &mut dyn FnMut(&TimelineRow, Option<&TimelineRow>),
) -> Result<LoadRun> {
    // Every session connects before the clock starts.
    let clients = connect_clients(spec)?;
    let sessions = match ddl {
        Some(job) => Some(DdlSessions::connect(spec, job)?),
        None => None,
    };
    let interval = spec.interval.max(Duration::from_millis(10));
    let origin = clock::now();
    let load = Load {
        spec,
        ddl,
        interval,
        sh: Shared {
            origin,
            until: match duration {
                Some(d) => Until::after(origin, d),
                None => Until::open(origin),
            },
            fatal: Mutex::new(None),
            behind: AtomicU64::new(0),
            reconnects: AtomicU64::new(0),
            interrupt: spec.interrupt,
            hook: ddl.and_then(|j| j.hook),
        },
        live: Mutex::new(DdlLive::default()),
    };
    let mut tl = Timeline {
        point,
        per_line: per_text_line(interval),
        rows: Vec::new(),
        stats: Vec::new(),
        phases: Phases::default(),
        text: TextGroup::default(),
    };
    let stall = stall_timeout(duration, ddl);
    let measured = load.measure(clients, sessions, stall, &mut tl, on_row);
    Ok(load.finish(measured, tl))
}
