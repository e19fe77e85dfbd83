//! A schema change under load: a [`Workload`] run by client threads at a fixed offered rate
//! (open loop: every transaction has an intended start, its latency counts from there, so a
//! stall shows in every transaction it delayed) or as fast as they can (closed loop, the
//! probe), with, optionally, a DDL started in its own session after a baseline window, its
//! progress and lock waits sampled every second from another session, and the load kept on
//! for a recovery window after it. Figures are kept per second (completion time) and merged
//! across clients; the caller gets each second as it closes (to print and store it) and the
//! whole run at the end.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::dbms::ddl::{error_code, DdlDialect, DdlPlan, DdlRequest, Waits};
use crate::dbms::errcode::is_duplicate_key;
use crate::dbms::{Conn, Dbms};
use crate::measure::histogram::record;
use crate::measure::meter::micros;
use crate::measure::schedule::{Arrivals, Schedule};
use crate::measure::windows::{bounds, Second};
use crate::results::ddl::{lock_waits, DdlOutcome, TimelineRow};
use crate::step::schema_tools::DdlHook;
use crate::workload::{Workload, WorkloadClient};

/// How long after a second ends its figures are read (a transaction that completed just
/// before the boundary is recorded by then).
const GRACE: Duration = Duration::from_millis(150);

/// When the first progress sample is taken after the DDL's start.
const FIRST_SAMPLE: Duration = Duration::from_millis(100);

/// Time between two progress samples of the DDL.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

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
    /// Per second, merged over the clients.
    pub seconds: Vec<Second>,
    /// The timeline rows (as given to the caller while it ran, with the final figures).
    pub rows: Vec<TimelineRow>,
    /// The DDL, when there was one.
    pub ddl: Option<DdlOutcome>,
    /// Intended starts not taken when the load stopped.
    pub behind: u64,
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

/// Per-client figures by second.
type Buckets = Mutex<Vec<Second>>;

fn add_to(b: &Buckets, sec: usize, f: impl FnOnce(&mut Second)) {
    let mut v = b.lock().unwrap_or_else(|e| e.into_inner());
    if v.len() <= sec {
        v.resize_with(sec + 1, Second::default);
    }
    f(&mut v[sec]);
}

/// Sleep until `t` or until `stop()` says so, in short slices.
fn sleep_until(t: Instant, stop: impl Fn() -> bool) {
    loop {
        let now = Instant::now();
        if now >= t || stop() {
            return;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(20)));
    }
}

/// Run one transaction on a new client before the clock starts, so the first measured second
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
    /// Nanoseconds from the origin at which clients stop starting transactions (u64::MAX: not
    /// set yet).
    end_ns: AtomicU64,
    stop: AtomicBool,
    fatal: Mutex<Option<String>>,
    behind: AtomicU64,
    reconnects: AtomicU64,
    interrupt: &'a AtomicBool,
}

impl Shared<'_> {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || self.interrupt.load(Ordering::SeqCst)
    }

    fn end(&self) -> Option<Instant> {
        match self.end_ns.load(Ordering::SeqCst) {
            u64::MAX => None,
            ns => Some(self.origin + Duration::from_nanos(ns)),
        }
    }
}

/// One client thread: run transactions at its share of the rate until the end.
fn client_loop(
    spec: &LoadSpec,
    id: usize,
    mut conn: Box<dyn Conn>,
    mut client: Box<dyn WorkloadClient>,
    sh: &Shared,
    buckets: &Buckets,
) {
    let mut sched = spec.rate.map(|r| {
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
    loop {
        if sh.stopping() {
            break;
        }
        let now = Instant::now();
        let intended = sched.as_ref().map(|s| s.peek()).unwrap_or(now);
        if sh.end().is_some_and(|e| intended >= e || now >= e) {
            break;
        }
        if intended > now {
            std::thread::sleep((intended - now).min(Duration::from_millis(20)));
            continue;
        }
        if let Some(s) = sched.as_mut() {
            s.next_intended();
        }
        let start = Instant::now();
        let mut retries = 0u64;
        let mut retried: Vec<String> = Vec::new();
        let res = loop {
            match client.run(conn.as_mut()) {
                Ok(d) => break Ok(d),
                Err(e) => {
                    let _ = conn.rollback();
                    // Transient: deadlock, busy, serialization failure, and the duplicate key a
                    // concurrent DELETE+INSERT of one id may hit (sysbench ignores it too).
                    let transient = conn.is_retryable(&e) || is_duplicate_key(&e);
                    if retries < spec.max_retries as u64 && transient && !sh.stopping() {
                        retries += 1;
                        retried.push(error_code(&e));
                        continue;
                    }
                    break Err(e);
                }
            }
        };
        let done = Instant::now();
        let mut sec = done.saturating_duration_since(sh.origin).as_secs() as usize;
        // A transaction started before the end and completed after it counts in the run's
        // last second: the run is whole seconds.
        if let Some(last) = sh.end().map(|e| (e - sh.origin).as_secs() as usize) {
            sec = sec.min(last.saturating_sub(1));
        }
        if !retried.is_empty() {
            add_to(buckets, sec, |s| {
                for c in retried.drain(..) {
                    *s.retry_codes.entry(c).or_default() += 1;
                }
            });
        }
        match res {
            Ok(d) => {
                let from = if sched.is_some() { intended } else { start };
                let lat = micros(done.saturating_duration_since(from));
                add_to(buckets, sec, |s| {
                    s.txns += 1;
                    s.queries += d.statements() as u64;
                    s.retries += retries;
                    record(&mut s.hist, lat);
                });
            }
            Err(e) => {
                let code = error_code(&e);
                add_to(buckets, sec, |s| {
                    s.retries += retries;
                    *s.errors.entry(code.clone()).or_default() += 1;
                });
                if sh.stopping() {
                    break;
                }
                // A lost connection: the server restarted, or a cluster node died (failed
                // over to a surviving node, whatever --on-error says).
                let lost = conn.query_rows("SELECT 1").is_err();
                if spec.stop_on_error && !(lost && spec.target.fails_over()) {
                    let mut f = sh.fatal.lock().unwrap_or_else(|e| e.into_inner());
                    if f.is_none() {
                        *f = Some(format!(
                            "the load failed (error {code}): {}",
                            crate::out::one_line(&e)
                        ));
                    }
                    sh.stop.store(true, Ordering::SeqCst);
                    break;
                }
                // Connect again (on a cluster: to a surviving node) until it works or the run
                // ends.
                if lost {
                    loop {
                        if sh.stopping() {
                            return;
                        }
                        match connect_client(spec, id) {
                            Ok((c, cl)) => {
                                conn = c;
                                client = cl;
                                sh.reconnects.fetch_add(1, Ordering::Relaxed);
                                break;
                            }
                            Err(_) => std::thread::sleep(Duration::from_millis(250)),
                        }
                    }
                }
            }
        }
    }
    if let (Some(s), Some(end)) = (sched.as_mut(), sh.end()) {
        let cut = end.min(Instant::now());
        sh.behind
            .fetch_add(s.take_due(cut, u64::MAX).len(), Ordering::Relaxed);
    }
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
    let t0 = Instant::now();
    {
        let mut l = live.lock().unwrap_or_else(|e| e.into_inner());
        l.started = Some(t0);
        l.outcome.started_s = Some((t0 - sh.origin).as_secs_f64());
    }
    let mut attempts = 0u32;
    let mut errors = Vec::new();
    let mut dropped = Vec::new();
    let final_err = loop {
        attempts += 1;
        let r = match job.hook.and_then(|h| h.run(conn.as_mut())) {
            Some(r) => r,
            None => (|| -> Result<()> {
                for s in &job.plan.statements {
                    conn.execute(s).with_context(|| s.clone())?;
                }
                Ok(())
            })(),
        };
        let Err(e) = r else { break None };
        if job
            .plan
            .statements
            .first()
            .is_some_and(|s| s.starts_with("BEGIN"))
        {
            let _ = conn.execute("ROLLBACK");
        }
        let code = error_code(&e);
        errors.push(format!("{code}: {}", crate::out::one_line(&e)));
        let cancelled = live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .outcome
            .cancelled;
        if attempts <= job.max_retries
            && job.dialect.ddl_retryable(&e)
            && !cancelled
            && !sh.stopping()
        {
            // Before running it again: an INVALID index the failed online build left (the
            // driver drops it otherwise, once the load has stopped).
            if let Ok(inv) = job.dialect.invalid_indexes(conn.as_mut(), &job.req.table) {
                for i in inv {
                    if conn
                        .execute(&job.dialect.drop_index_sql(&job.req.table, &i))
                        .is_ok()
                    {
                        dropped.push(i);
                    }
                }
            }
            // What a partial run built (PostgreSQL builds one index per statement): drop
            // the indexes of the request that exist, so the next attempt starts clean.
            if job.req.kind == crate::dbms::ddl::DdlKind::AddIndex {
                for i in &job.req.indexes {
                    if conn.index_exists(&job.req.table, &i.name).unwrap_or(false) {
                        let _ = conn.execute(&job.dialect.drop_index_sql(&job.req.table, &i.name));
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(500));
            continue;
        }
        break Some((code, crate::out::one_line(&e)));
    };
    let t1 = Instant::now();
    // The method's last phases (a swap that took less than a sample's interval).
    let last_phase = job.hook.and_then(|h| {
        h.ddl_ended(conn.as_mut());
        h.phase(conn.as_mut())
    });
    let mut l = live.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = last_phase {
        l.samples
            .push(((t1 - sh.origin).as_secs_f64(), Some(p), Waits::default()));
    }
    l.ended = Some(t1);
    let o = &mut l.outcome;
    o.ended_s = Some((t1 - sh.origin).as_secs_f64());
    o.seconds = Some((t1 - t0).as_secs_f64());
    o.attempts = attempts;
    o.attempt_errors = errors;
    o.invalid_dropped = dropped;
    if let Some((code, msg)) = final_err {
        o.error_code = Some(code);
        o.error = Some(msg);
    }
}

/// Sample the DDL's progress and waits every second while it runs.
fn sampler_thread(
    spec: &LoadSpec,
    job: &DdlJob,
    mut conn: Box<dyn Conn>,
    session_id: Option<i64>,
    sh: &Shared,
    live: &Mutex<DdlLive>,
) {
    let mut next = sh.origin + job.baseline;
    loop {
        sleep_until(next, || {
            live.lock()
                .unwrap_or_else(|e| e.into_inner())
                .ended
                .is_some()
                || sh.stopping()
        });
        let (started, ended) = {
            let l = live.lock().unwrap_or_else(|e| e.into_inner());
            (l.started, l.ended)
        };
        if ended.is_some() || (sh.stopping() && started.is_none()) {
            return;
        }
        let Some(started) = started else {
            next = Instant::now() + Duration::from_millis(20);
            continue;
        };
        // The first sample a moment after the start, once the statement has registered in
        // the progress views; then every second.
        if Instant::now() < started + FIRST_SAMPLE {
            next = started + FIRST_SAMPLE;
            continue;
        }
        let t = (Instant::now() - sh.origin).as_secs_f64();
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
        live.lock()
            .unwrap_or_else(|e| e.into_inner())
            .samples
            .push((t, phase, waits));
        // A cancelled DDL is sampled until it ends.
        next += SAMPLE_EVERY;
    }
}

/// Merge second `s` of every client.
fn merged(buckets: &[Buckets], s: usize) -> Second {
    let mut out = Second::default();
    for b in buckets {
        let v = b.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(x) = v.get(s) {
            out.add(x);
        }
    }
    out
}

/// The timeline row of second `s`.
fn row(
    point: usize,
    s: usize,
    sec: &Second,
    live: Option<&DdlLive>,
    origin: Instant,
) -> TimelineRow {
    let mut r = TimelineRow {
        point,
        t: s as u32,
        window: "baseline".into(),
        txns: sec.txns,
        queries: sec.queries,
        p50_us: sec.pct(0.5),
        p99_us: sec.pct(0.99),
        max_us: (!sec.hist.is_empty()).then(|| sec.hist.max()),
        errors: sec.error_count(),
        retries: sec.retries,
        ..Default::default()
    };
    let Some(l) = live else {
        r.window = "probe".into();
        return r;
    };
    let at = |i: Instant| (i - origin).as_secs_f64();
    if let Some(st) = l.started.map(at) {
        let end = l.ended.map(at).unwrap_or(f64::MAX);
        let (a, b) = bounds(usize::MAX, st, end);
        r.window = if s < a {
            "baseline"
        } else if s < b {
            "during"
        } else {
            "after"
        }
        .into();
        if st.floor() as usize == s {
            r.marks.push("DDL start".into());
        }
        if l.ended.map(at).is_some_and(|e| e.floor() as usize == s) {
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
    }
    let inside = |t: f64| t >= s as f64 && t < (s + 1) as f64;
    if let Some((_, p, w)) = l.samples.iter().rev().find(|(t, _, _)| inside(*t)) {
        r.phase = p.clone();
        let d = w.describe();
        r.waits = (!d.is_empty()).then_some(d);
    }
    r
}

/// Run the load: for `duration` (the probe), or with `ddl` in the middle until its recovery
/// window has passed. `on_second` gets each second's row as it closes. Errors only when the
/// clients or the DDL's sessions cannot connect at the start; everything after is in the
/// result.
pub fn run_load(
    spec: &LoadSpec,
    point: usize,
    duration: Option<Duration>,
    ddl: Option<&DdlJob>,
    on_second: &mut dyn FnMut(&TimelineRow),
) -> Result<LoadRun> {
    // Every session connects before the clock starts.
    let mut clients = Vec::with_capacity(spec.threads);
    for id in 0..spec.threads {
        let (mut conn, mut client) =
            connect_client(spec, id).with_context(|| format!("connecting client {}", id + 1))?;
        prime(conn.as_mut(), client.as_mut()).with_context(|| format!("client {}", id + 1))?;
        clients.push((conn, client));
    }
    let mut ddl_sessions = None;
    if let Some(job) = ddl {
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
        ddl_sessions = Some((c, id, sampler, control));
    }
    let sh = Shared {
        origin: Instant::now(),
        end_ns: AtomicU64::new(u64::MAX),
        stop: AtomicBool::new(false),
        fatal: Mutex::new(None),
        behind: AtomicU64::new(0),
        reconnects: AtomicU64::new(0),
        interrupt: spec.interrupt,
    };
    if let Some(d) = duration {
        sh.end_ns.store(d.as_nanos() as u64, Ordering::SeqCst);
    }
    let buckets: Vec<Buckets> = (0..spec.threads).map(|_| Mutex::new(Vec::new())).collect();
    let live = Mutex::new(DdlLive::default());
    let mut rows = Vec::new();
    let mut control = None;
    let mut session_id = None;
    std::thread::scope(|s| {
        for (id, ((conn, client), b)) in clients.into_iter().zip(&buckets).enumerate() {
            let sh = &sh;
            s.spawn(move || client_loop(spec, id, conn, client, sh, b));
        }
        if let (Some(job), Some((c, id, sampler, ctl))) = (ddl, ddl_sessions) {
            session_id = id;
            control = Some(ctl);
            let (sh, live) = (&sh, &live);
            s.spawn(move || ddl_thread(job, c, sh, live));
            s.spawn(move || sampler_thread(spec, job, sampler, id, sh, live));
        }
        // The reporter: each second once it has closed.
        let mut next = 0usize;
        let mut cancel_sent = false;
        loop {
            sleep_until(
                sh.origin + Duration::from_secs(next as u64 + 1) + GRACE,
                || false,
            );
            {
                let l = live.lock().unwrap_or_else(|e| e.into_inner());
                let r = row(
                    point,
                    next,
                    &merged(&buckets, next),
                    ddl.map(|_| &*l),
                    sh.origin,
                );
                drop(l);
                on_second(&r);
                rows.push(r);
            }
            next += 1;
            let now = Instant::now();
            let fatal = sh.fatal.lock().unwrap_or_else(|e| e.into_inner()).is_some();
            let stopping = fatal || spec.interrupt.load(Ordering::SeqCst);
            if let Some(job) = ddl {
                let (started, ended) = {
                    let l = live.lock().unwrap_or_else(|e| e.into_inner());
                    (l.started, l.ended)
                };
                let overdue = started.is_some_and(|t| now - t > job.timeout);
                if started.is_some() && ended.is_none() && (stopping || overdue) && !cancel_sent {
                    cancel_sent = true;
                    live.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .outcome
                        .cancelled = true;
                    if let Some(h) = job.hook {
                        h.cancel();
                    }
                    if let (Some(c), Some(id)) = (control.as_mut(), session_id) {
                        if let Some(sql) = job.dialect.cancel_sql(id) {
                            let _ = c.as_mut().query_rows(&sql);
                        }
                    }
                }
                if let Some(e) = ended {
                    if sh.end().is_none() {
                        let want = (e - sh.origin + job.recovery).as_secs_f64().ceil();
                        sh.end_ns.store((want * 1e9) as u64, Ordering::SeqCst);
                    }
                }
                if stopping && (ended.is_some() || started.is_none()) {
                    sh.stop.store(true, Ordering::SeqCst);
                    break;
                }
            } else if stopping {
                sh.stop.store(true, Ordering::SeqCst);
                break;
            }
            if sh.end().is_some_and(|e| now >= e) {
                break;
            }
        }
        sh.stop.store(true, Ordering::SeqCst);
    });
    let elapsed = sh.origin.elapsed().as_secs_f64();
    // The final figures: every second any client recorded.
    let n = buckets
        .iter()
        .map(|b| b.lock().unwrap_or_else(|e| e.into_inner()).len())
        .max()
        .unwrap_or(0)
        .max(rows.len());
    let seconds: Vec<Second> = (0..n).map(|i| merged(&buckets, i)).collect();
    let l = live.into_inner().unwrap_or_else(|e| e.into_inner());
    let final_rows: Vec<TimelineRow> = (0..n)
        .map(|i| {
            let mut r = row(point, i, &seconds[i], ddl.map(|_| &l), sh.origin);
            if let Some(old) = rows.get(i) {
                // Keep what the sampler said in that second.
                if r.phase.is_none() {
                    r.phase = old.phase.clone();
                }
            }
            r
        })
        .collect();
    for r in final_rows.iter().skip(rows.len()) {
        on_second(r);
    }
    let ddl_outcome = ddl.map(|_| {
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
    });
    Ok(LoadRun {
        seconds,
        rows: final_rows,
        ddl: ddl_outcome,
        behind: sh.behind.load(Ordering::SeqCst),
        reconnects: sh.reconnects.load(Ordering::SeqCst),
        foreground_error: sh.fatal.into_inner().unwrap_or_else(|e| e.into_inner()),
        elapsed,
    })
}
