//! Load steps (l.i0, l.i1, l.i2) and the writer workers the read+write steps reuse: an inserter
//! that commits multi-row INSERTs (as fast as possible, or on an open-loop schedule), and a
//! deleter that removes as many of the oldest rows on its own connection so the table size
//! stays constant. Both are operations of the one measuring loop ([`crate::measure::drive`]),
//! which paces, retries, fails over and records them; after a failover they prepare their
//! statements again and record what was in doubt.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::StepCtx;
use crate::dbms::{with_retries, Conn};
use crate::measure::clock;
use crate::measure::drive::{drive, AfterError, Counted, Done, Next, Operation, Pacing};
use crate::measure::until::Until;
use crate::measure::meter::{Meter, OpKind};
use crate::measure::reporter::{Signals, Worker};
use crate::measure::schedule::Schedule;
use crate::workload::iibench::TableState;
use crate::workload::iibench::{derive_seed, Batch, RowGen, Statements};

/// Where one client's inserter and deleter are; with deletes they move in lockstep.
#[derive(Debug, Default)]
struct Flow {
    ins_started: u64,
    ins_done: u64,
    del_started: u64,
    del_done: u64,
    /// The inserter's last commits: (rows inserted before, after, completion time).
    commits: VecDeque<(u64, u64, Instant)>,
    /// Largest `ins_done - del_done` seen (the table grew by this many rows).
    max_excess: u64,
    /// Largest `del_done - ins_done` seen (the table shrank by this many rows).
    max_deficit: u64,
    /// Origin of the inserter's schedule (throttled) and when it stopped.
    span: (Option<Instant>, Option<Instant>),
    /// Threads waiting on `moved` (a notify is a system call: only when someone waits).
    waiting: u32,
}

impl Flow {
    fn note_excess(&mut self) {
        self.max_excess = self
            .max_excess
            .max(self.ins_done.saturating_sub(self.del_done));
        self.max_deficit = self
            .max_deficit
            .max(self.del_done.saturating_sub(self.ins_done));
    }
}

/// How far one client's writer has got, and the lockstep of its inserter and deleter: in a
/// step that deletes, the inserter never starts a batch that would put it more than one batch
/// ahead of the rows its deleter has deleted, and the deleter never starts one that would put
/// it more than one batch ahead of the inserter, so the client's share of the table stays
/// within one batch of its starting size. Time the inserter waits for its deleter is counted.
#[derive(Debug, Default)]
pub struct ClientProgress {
    /// Rows the inserter will insert in all.
    pub planned: u64,
    /// Rows per batch (the lockstep's slack).
    per: u64,
    /// The step deletes: the inserter and the deleter are in lockstep.
    coupled: bool,
    flow: Mutex<Flow>,
    moved: Condvar,
    /// The inserter has stopped (done, failed or interrupted).
    pub done: AtomicBool,
    /// The inserter stopped at `max_seconds` before inserting all its rows.
    pub cut: AtomicBool,
    /// Total time the inserter waited for its deleter, nanoseconds.
    pub insert_wait_ns: AtomicU64,
    /// Batches for which the inserter waited for its deleter.
    pub insert_waits: AtomicU64,
    /// Operations due on the inserter's schedule that never started (cut off).
    pub never_started: AtomicU64,
}

impl ClientProgress {
    /// Progress of a writer that will insert `planned` rows in batches of `per`, with a deleter
    /// in lockstep when `coupled`.
    pub fn new(planned: u64, per: usize, coupled: bool) -> Self {
        ClientProgress {
            planned,
            per: per.max(1) as u64,
            coupled,
            ..Default::default()
        }
    }

    fn flow(&self) -> MutexGuard<'_, Flow> {
        self.flow.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Rows inserted (committed) so far.
    pub fn inserted(&self) -> u64 {
        self.flow().ins_done
    }

    /// Rows deleted (committed) so far.
    pub fn deleted(&self) -> u64 {
        self.flow().del_done
    }

    /// The largest number of rows by which the client's inserts ran ahead of its deletes
    /// (table larger), and behind them (table smaller), during the step.
    pub fn max_excess(&self) -> (u64, u64) {
        let f = self.flow();
        (f.max_excess, f.max_deficit)
    }

    /// Inserter: wait until `n` more rows stay within one batch of the deleter. Returns the
    /// time waited, or `None` when asked to stop.
    fn begin_insert(&self, n: u64, sig: &Signals) -> Option<Duration> {
        if !self.coupled {
            return Some(Duration::ZERO);
        }
        let mut f = self.flow();
        let t0 = clock::now();
        let mut waited = false;
        while self.coupled && f.ins_started + n > f.del_done + self.per {
            if sig.should_stop() {
                return None;
            }
            waited = true;
            f = self.wait(f);
        }
        f.ins_started += n;
        if !waited {
            return Some(Duration::ZERO);
        }
        let w = clock::since(t0);
        self.insert_wait_ns
            .fetch_add(w.as_nanos() as u64, Ordering::Relaxed);
        self.insert_waits.fetch_add(1, Ordering::Relaxed);
        Some(w)
    }

    /// Inserter: `n` rows committed at `at`.
    fn end_insert(&self, n: u64, at: Instant) {
        let mut f = self.flow();
        let before = f.ins_done;
        f.ins_done += n;
        if !self.coupled {
            return;
        }
        let after = f.ins_done;
        f.commits.push_back((before, after, at));
        if f.commits.len() > 16 {
            f.commits.pop_front();
        }
        f.note_excess();
        self.wake(&f);
    }

    /// Inserter: no more inserts.
    fn finish_inserts(&self) {
        let mut f = self.flow();
        f.span.1 = Some(clock::now());
        self.done.store(true, Ordering::Release);
        self.wake(&f);
    }

    /// Seconds from the start of the throttled inserter's schedule until it stopped: the time
    /// its rows were due in (its phase and the deleter's last batch are not in it).
    pub fn writer_secs(&self) -> Option<f64> {
        match self.flow().span {
            (Some(a), Some(b)) => Some(b.saturating_duration_since(a).as_secs_f64()),
            _ => None,
        }
    }

    /// True when the inserter has stopped and, with deletes, the deleter has deleted every
    /// row it inserted: the client's query connection can stop.
    pub fn writers_done(&self) -> bool {
        if !self.done.load(Ordering::Acquire) {
            return false;
        }
        let f = self.flow();
        !self.coupled || f.del_done >= f.ins_done
    }

    /// Deleter: wait until rows may be deleted; returns how many (0: the inserter is done and
    /// every row it inserted is deleted) and since when they may be (the completion of the
    /// insert that allowed them, when it was recent), or `None` when asked to stop.
    fn begin_delete(&self, sig: &Signals) -> Option<(u64, Option<Instant>)> {
        let mut f = self.flow();
        loop {
            let finished = self.done.load(Ordering::Acquire);
            let slack = if finished || !self.coupled {
                0
            } else {
                self.per
            };
            let allowed = if finished {
                f.ins_done
            } else {
                (f.ins_done + slack).min(self.planned)
            };
            if f.del_started < allowed {
                let n = self.per.min(allowed - f.del_started);
                // The insert whose commit made these rows deletable.
                let need = (f.del_started + n).saturating_sub(slack);
                let since = f
                    .commits
                    .iter()
                    .find(|(b, a, _)| *b < need && need <= *a)
                    .map(|c| c.2);
                f.del_started += n;
                return Some((n, since));
            }
            if finished {
                return Some((0, None));
            }
            if sig.should_stop() {
                return None;
            }
            f = self.wait(f);
        }
    }

    /// Wait (at most 100 ms, to notice a stop) for the other writer to move.
    fn wait<'g>(&'g self, mut f: MutexGuard<'g, Flow>) -> MutexGuard<'g, Flow> {
        f.waiting += 1;
        let mut f = self
            .moved
            .wait_timeout(f, Duration::from_millis(100))
            .unwrap_or_else(|e| e.into_inner())
            .0;
        f.waiting -= 1;
        f
    }

    /// Wake the other writer if it waits.
    fn wake(&self, f: &Flow) {
        if f.waiting > 0 {
            self.moved.notify_all();
        }
    }

    /// Deleter: `n` rows committed.
    fn end_delete(&self, n: u64) {
        let mut f = self.flow();
        f.del_done += n;
        f.note_excess();
        self.wake(&f);
    }
}

/// What a writer does.
#[derive(Debug, Clone, Copy)]
pub struct WriterPlan {
    /// Rows to insert.
    pub rows: u64,
    /// Rows per commit (also the delete batch).
    pub rows_per_commit: usize,
    /// Rows per second, or `None` for as fast as possible.
    pub rate: Option<f64>,
    /// Stop inserting this many seconds after the step began even if not all rows are in
    /// (read+write steps end after `rate * seconds` rows, which never comes when the rate is
    /// out of reach).
    pub max_seconds: Option<f64>,
    /// The step deletes (a deleter per client, in lockstep with the inserter).
    pub delete: bool,
}

/// Seconds since the Unix epoch, for `dateandtime`.
fn unix_secs() -> i64 {
    clock::wall_now().as_secs() as i64
}

/// The schedule of client `c`'s inserter (`role` 0) or deleter (`role` 1): its own phase among
/// the step's writers, its own seed for Poisson arrivals.
fn writer_schedule(
    ctx: &StepCtx,
    m: &Meter,
    plan: &WriterPlan,
    c: usize,
    role: usize,
) -> Option<Schedule> {
    let rate = plan.rate? / plan.rows_per_commit.max(1) as f64;
    let per_client = if plan.delete { 2 } else { 1 };
    Some(Schedule::for_writer(
        m.step_start(),
        clock::now(),
        rate,
        ctx.cfg.arrivals,
        derive_seed(ctx.cfg.seed, &[ctx.step_no, c as u64, 10 + role as u64]),
        c * per_client + role,
        ctx.cfg.clients.max(1) * per_client,
    ))
}

/// The inserter of client `c`.
pub fn inserter<'a>(
    ctx: &'a StepCtx<'a>,
    c: usize,
    plan: WriterPlan,
    progress: &'a ClientProgress,
) -> Worker<'a> {
    let table = ctx.table_of(c);
    let seed = derive_seed(ctx.cfg.seed, &[ctx.step_no, c as u64, 1]);
    Worker {
        name: format!("insert-{}", c + 1),
        body: Box::new(move |m: &Meter, sig: &Signals| {
            let r = insert_loop(ctx, table, plan, progress, seed, c, m, sig);
            progress.finish_inserts();
            r
        }),
    }
}

/// One client's INSERT batches, as [`drive`] runs them: the batch is generated before its
/// slot, the inserter waits for its deleter (lockstep) after it, a transient error runs the
/// batch again, and on a cluster that fails over the batch goes again through a surviving
/// node (whether the lost attempt committed is found out by the rows check).
struct Insert<'a> {
    ctx: &'a StepCtx<'a>,
    table: &'a TableState,
    plan: WriterPlan,
    progress: &'a ClientProgress,
    conn: Box<dyn Conn>,
    stmts: Statements,
    gen: RowGen,
    batch: Batch,
    /// Rows inserted so far, and in the batch at hand.
    done: u64,
    n: u64,
}

impl Insert<'_> {
    fn per(&self) -> u64 {
        self.plan.rows_per_commit.max(1) as u64
    }
}

impl Operation for Insert<'_> {
    fn counted(&self) -> Counted {
        Counted::Op(OpKind::Insert)
    }

    fn next(&mut self, _sig: &Signals) -> Next {
        if self.done >= self.plan.rows {
            return Next::Finished;
        }
        self.n = self.per().min(self.plan.rows - self.done);
        self.gen.fill(&mut self.batch, self.n as usize, unix_secs());
        if let Some(p) = &self.table.sql.patterns {
            p.apply(&mut self.batch);
        }
        Next::Go(None)
    }

    fn begin(&mut self, sig: &Signals) -> bool {
        self.progress.begin_insert(self.n, sig).is_some()
    }

    #[inline]
    fn run(&mut self) -> Result<Done> {
        self.stmts.insert(self.conn.as_mut(), &self.batch)?;
        Ok(Done::Op {
            kind: OpKind::Insert,
            rows: self.n,
        })
    }

    fn transient(&mut self, e: &anyhow::Error) -> bool {
        self.conn.is_retryable(e)
    }

    fn conn(&mut self) -> Option<&mut dyn Conn> {
        Some(self.conn.as_mut())
    }

    fn reconnected(&mut self, conn: Box<dyn Conn>) -> Result<()> {
        self.conn = conn;
        self.stmts = Statements::new(self.table.sql.clone(), self.ctx.target.stores_rows());
        self.stmts
            .prepare_insert(self.conn.as_mut(), self.plan.rows_per_commit.max(1))?;
        // The lost attempt's rows may have committed: the rows check tells.
        super::in_doubt(self.table, self.n as i64);
        Ok(())
    }

    #[inline]
    fn done(&mut self, _d: &Done, at: Instant) {
        self.table
            .expected_rows
            .fetch_add(self.n as i64, Ordering::SeqCst);
        self.progress.end_insert(self.n, at);
        self.done += self.n;
    }

    fn failed(&mut self, e: anyhow::Error, _tries: u32, _stop: &dyn Fn() -> bool) -> AfterError {
        AfterError::Fail(e.context(format!("insert into {} failed", self.table.name())))
    }

    fn remaining(&self) -> u64 {
        (self.plan.rows - self.done).div_ceil(self.per())
    }
}

#[allow(clippy::too_many_arguments)]
fn insert_loop(
    ctx: &StepCtx,
    table: &TableState,
    plan: WriterPlan,
    progress: &ClientProgress,
    seed: u64,
    c: usize,
    m: &Meter,
    sig: &Signals,
) -> Result<()> {
    let mut conn = ctx.target.connect().context("cannot connect")?;
    let mut stmts = Statements::new(table.sql.clone(), ctx.target.stores_rows());
    // Prepared now, not in the first measured insert.
    stmts.prepare_insert(conn.as_mut(), plan.rows_per_commit.max(1))?;
    let (dmin, dmax) = ctx.cfg.data_len;
    let schedule = writer_schedule(ctx, m, &plan, c, 0);
    if let Some(s) = &schedule {
        progress.flow().span.0 = Some(s.origin());
    }
    let until = plan
        .max_seconds
        .map(|s| Until::after(m.step_start(), Duration::from_secs_f64(s)));
    let mut op = Insert {
        ctx,
        table,
        plan,
        progress,
        conn,
        stmts,
        gen: RowGen::new(seed, dmin, dmax),
        batch: Batch::default(),
        done: 0,
        n: 0,
    };
    // A slot taken before the end may fall after it (a writer's rows count, not its time).
    let pacing = Pacing {
        schedule,
        until: until.as_ref(),
        max_retries: ctx.cfg.max_retries,
        failover: Some(ctx.failover(table)),
        slots_past_end: true,
    };
    let ended = drive(m, sig, pacing, &mut op)?;
    if ended.by_end {
        // The backlog, due and never started, is in the latency with the time it waited.
        progress.cut.store(true, Ordering::Release);
        progress
            .never_started
            .fetch_add(ended.never_started, Ordering::Relaxed);
    }
    Ok(())
}

/// The deleter of client `c`: deletes the oldest rows in batches of `rows_per_commit`, in
/// lockstep with its inserter (see [`ClientProgress`]), and ends when it has deleted as many
/// rows as the inserter inserted.
pub fn deleter<'a>(
    ctx: &'a StepCtx<'a>,
    c: usize,
    plan: WriterPlan,
    progress: &'a ClientProgress,
) -> Worker<'a> {
    let table = ctx.table_of(c);
    Worker {
        name: format!("delete-{}", c + 1),
        body: Box::new(move |m: &Meter, sig: &Signals| {
            delete_loop(ctx, table, plan, progress, c, m, sig)
        }),
    }
}

/// One client's deletes of the oldest rows, as [`drive`] runs them: the rows it may delete
/// are waited for before its slot (a throttled delete is due at its slot, but not before the
/// rows it may delete exist: waiting for its own inserter is not a delete's latency); the
/// range is claimed once and deleted, again after a transient error; on a cluster that fails
/// over, the same range is deleted again through a surviving node (if the lost attempt
/// committed, this one finds fewer rows, counted as in doubt).
struct Delete<'a> {
    ctx: &'a StepCtx<'a>,
    table: &'a TableState,
    plan: WriterPlan,
    progress: &'a ClientProgress,
    m: &'a Meter,
    conn: Box<dyn Conn>,
    stmts: Statements,
    /// Rows of the delete at hand, its claimed PK range, and whether an attempt at it was
    /// lost with its connection.
    n: u64,
    range: Option<(i64, i64)>,
    doubtful: bool,
}

impl Operation for Delete<'_> {
    fn counted(&self) -> Counted {
        Counted::Op(OpKind::Delete)
    }

    fn next(&mut self, sig: &Signals) -> Next {
        match self.progress.begin_delete(sig) {
            None | Some((0, _)) => Next::Finished,
            Some((n, since)) => {
                self.n = n;
                self.range = None;
                self.doubtful = false;
                Next::Go(since)
            }
        }
    }

    fn run(&mut self) -> Result<Done> {
        let (from, upto) = match self.range {
            Some(r) => r,
            None => {
                let r = claim_oldest(
                    self.ctx,
                    self.conn.as_mut(),
                    &mut self.stmts,
                    self.table,
                    self.n as usize,
                    self.m,
                )?;
                self.range = Some(r);
                r
            }
        };
        let rows = self.stmts.delete_range(self.conn.as_mut(), from, upto)?;
        Ok(Done::Op {
            kind: OpKind::Delete,
            rows,
        })
    }

    fn transient(&mut self, e: &anyhow::Error) -> bool {
        self.conn.is_retryable(e)
    }

    fn conn(&mut self) -> Option<&mut dyn Conn> {
        Some(self.conn.as_mut())
    }

    fn reconnected(&mut self, conn: Box<dyn Conn>) -> Result<()> {
        self.conn = conn;
        self.stmts = Statements::new(self.table.sql.clone(), self.ctx.target.stores_rows());
        self.stmts
            .prepare_delete(self.conn.as_mut(), self.plan.rows_per_commit.max(1))?;
        // A delete of a claimed range may have committed on the node that died.
        self.doubtful |= self.range.is_some();
        Ok(())
    }

    fn done(&mut self, d: &Done, _at: Instant) {
        let Done::Op { rows, .. } = *d else { return };
        let n = self.n;
        self.table
            .expected_rows
            .fetch_sub(rows as i64, Ordering::SeqCst);
        if self.doubtful && rows < n {
            // The rows this delete did not find were deleted by the lost attempt, or were
            // never there (a short delete): the rows check tells.
            super::in_doubt(self.table, -((n - rows) as i64));
        } else if rows < n {
            self.table.short_deletes.fetch_add(1, Ordering::SeqCst);
        }
        self.progress.end_delete(n);
    }

    fn failed(&mut self, e: anyhow::Error, _tries: u32, _stop: &dyn Fn() -> bool) -> AfterError {
        AfterError::Fail(if self.range.is_some() {
            e.context(format!("delete from {} failed", self.table.name()))
        } else {
            e
        })
    }
}

fn delete_loop(
    ctx: &StepCtx,
    table: &TableState,
    plan: WriterPlan,
    progress: &ClientProgress,
    c: usize,
    m: &Meter,
    sig: &Signals,
) -> Result<()> {
    let mut conn = ctx.target.connect().context("cannot connect")?;
    let mut stmts = Statements::new(table.sql.clone(), ctx.target.stores_rows());
    stmts.prepare_delete(conn.as_mut(), plan.rows_per_commit.max(1))?;
    let schedule = writer_schedule(ctx, m, &plan, c, 1);
    let mut op = Delete {
        ctx,
        table,
        plan,
        progress,
        m,
        conn,
        stmts,
        n: 0,
        range: None,
        doubtful: false,
    };
    let pacing = Pacing {
        schedule,
        until: None,
        max_retries: ctx.cfg.max_retries,
        failover: Some(ctx.failover(table)),
        slots_past_end: false,
    };
    drive(m, sig, pacing, &mut op).map(|_| ())
}

/// Claim the PK range of the `n` oldest rows not claimed yet: under the table's claim lock,
/// find the `n`th PK from `delete_from` and move `delete_from` past it. Deleters of a shared
/// table thus delete disjoint ranges (computing the range inside each delete's transaction
/// made two deleters pick the same rows, and one of them delete none).
fn claim_oldest(
    ctx: &StepCtx,
    conn: &mut dyn Conn,
    stmts: &mut Statements,
    table: &TableState,
    n: usize,
    m: &Meter,
) -> Result<(i64, i64)> {
    let _claim = table.delete_claim.lock().unwrap_or_else(|e| e.into_inner());
    let from = table.delete_from.load(Ordering::SeqCst);
    let upto = with_retries(
        conn,
        ctx.cfg.max_retries,
        || m.retry(OpKind::Delete),
        |c: &mut dyn Conn| stmts.nth_id(c, from, n),
    )
    .with_context(|| format!("finding the oldest rows of {} failed", table.name()))?
    // Fewer than n rows left: delete what there is (the short delete is reported).
    .unwrap_or(i64::MAX);
    table
        .delete_from
        .store(upto.saturating_add(1), Ordering::SeqCst);
    Ok((from, upto))
}

/// Run a load step's workers: an inserter per client, and a deleter per client when asked.
pub fn workers<'a>(
    ctx: &'a StepCtx<'a>,
    plan: WriterPlan,
    progress: &'a [ClientProgress],
) -> Vec<Worker<'a>> {
    let mut w = Vec::new();
    for (c, p) in progress.iter().enumerate() {
        w.push(inserter(ctx, c, plan, p));
        if plan.delete {
            w.push(deleter(ctx, c, plan, p));
        }
    }
    w
}

/// Check a load step may delete: the table must hold at least the rows it will delete.
pub fn ensure_rows_to_delete(ctx: &StepCtx, conn: &mut dyn Conn) -> Result<()> {
    for t in ctx.tables {
        if t.sql.count_rows(conn)? == 0 {
            bail!(
                "table {} is empty: deleting steps need a loaded table (run l.i0 first)",
                t.name()
            );
        }
    }
    Ok(())
}
