//! Load steps (l.i0, l.i1, l.i2) and the writer workers the read+write steps reuse: an inserter
//! that commits multi-row INSERTs (as fast as possible, or on an open-loop schedule), and a
//! deleter that removes as many of the oldest rows on its own connection so the table size
//! stays constant.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};

use super::{StepCtx, TableState};
use crate::measure::meter::{Meter, OpKind};
use crate::measure::reporter::{Signals, Worker};
use crate::measure::schedule::Schedule;
use crate::target::{with_retries, Conn};
use crate::workload::iibench::{derive_seed, Batch, RowGen};

/// How far one client's writer has got; its deleter follows it.
#[derive(Debug, Default)]
pub struct ClientProgress {
    /// Rows the client's inserter has committed.
    pub inserted: AtomicU64,
    /// Rows the inserter will insert in all.
    pub planned: u64,
    /// The inserter has stopped (done, failed or interrupted).
    pub done: AtomicBool,
    /// The inserter stopped at `max_seconds` before inserting all its rows.
    pub cut: AtomicBool,
}

impl ClientProgress {
    /// Progress of a writer that will insert `planned` rows.
    pub fn new(planned: u64) -> Self {
        ClientProgress {
            planned,
            ..Default::default()
        }
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
    /// Stop inserting after this many seconds even if not all rows are in (read+write steps
    /// end after `rate * seconds` rows, which never comes when the rate is out of reach).
    pub max_seconds: Option<f64>,
}

/// Seconds since the Unix epoch, for `dateandtime`.
fn unix_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Wait for the next operation's turn. Throttled: sleep until its intended start and return
/// `Some(Some(intended))`; unthrottled: `Some(None)` at once. `None` when the worker must stop.
fn next_slot(
    schedule: &mut Option<Schedule>,
    m: &mut Meter,
    sig: &Signals,
) -> Option<Option<Instant>> {
    match schedule {
        Some(s) => {
            let t = s.next_intended();
            sig.sleep_until(m, t).then_some(Some(t))
        }
        None => (!sig.should_stop()).then_some(None),
    }
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
        body: Box::new(move |m: &mut Meter, sig: &Signals| {
            let r = insert_loop(ctx, table, plan, progress, seed, m, sig);
            progress.done.store(true, Ordering::Release);
            r
        }),
    }
}

fn insert_loop(
    ctx: &StepCtx,
    table: &TableState,
    plan: WriterPlan,
    progress: &ClientProgress,
    seed: u64,
    m: &mut Meter,
    sig: &Signals,
) -> Result<()> {
    let mut conn = ctx.target.connect().context("cannot connect")?;
    let (dmin, dmax) = ctx.cfg.data_len;
    let mut gen = RowGen::new(seed, dmin, dmax);
    let mut batch = Batch::default();
    let per = plan.rows_per_commit.max(1);
    let mut schedule = plan
        .rate
        .map(|r| Schedule::after(Instant::now(), r / per as f64));
    let deadline = plan
        .max_seconds
        .map(|s| Instant::now() + std::time::Duration::from_secs_f64(s));
    let mut done = 0u64;
    while done < plan.rows && !sig.should_stop() {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            progress.cut.store(true, Ordering::Release);
            break;
        }
        let n = (per as u64).min(plan.rows - done) as usize;
        gen.fill(&mut batch, n, unix_secs());
        let Some(intended) = next_slot(&mut schedule, m, sig) else {
            break;
        };
        let start = Instant::now();
        m.tick(start);
        with_retries(
            conn.as_mut(),
            ctx.cfg.max_retries,
            || m.retry(OpKind::Insert),
            |c: &mut dyn Conn| c.insert(&table.sql, &batch),
        )
        .with_context(|| format!("insert into {} failed", table.name()))?;
        let end = Instant::now();
        table.expected_rows.fetch_add(n as i64, Ordering::SeqCst);
        progress.inserted.fetch_add(n as u64, Ordering::Release);
        m.record(
            OpKind::Insert,
            intended.unwrap_or(start),
            start,
            end,
            n as u64,
        );
        done += n as u64;
    }
    Ok(())
}

/// The deleter of client `c`: deletes the oldest rows in batches of `rows_per_commit`, never
/// more than one batch ahead of its inserter, and ends when it has deleted as many rows as the
/// inserter inserted.
pub fn deleter<'a>(
    ctx: &'a StepCtx<'a>,
    c: usize,
    plan: WriterPlan,
    progress: &'a ClientProgress,
) -> Worker<'a> {
    let table = ctx.table_of(c);
    Worker {
        name: format!("delete-{}", c + 1),
        body: Box::new(move |m: &mut Meter, sig: &Signals| {
            delete_loop(ctx, table, plan, progress, m, sig)
        }),
    }
}

fn delete_loop(
    ctx: &StepCtx,
    table: &TableState,
    plan: WriterPlan,
    progress: &ClientProgress,
    m: &mut Meter,
    sig: &Signals,
) -> Result<()> {
    let mut conn = ctx.target.connect().context("cannot connect")?;
    let per = plan.rows_per_commit.max(1) as u64;
    let mut schedule = plan
        .rate
        .map(|r| Schedule::after(Instant::now(), r / per as f64));
    let mut deleted = 0u64;
    loop {
        // How many rows may be deleted now: one batch ahead of the inserter while it runs
        // (so a throttled deleter does not wait for each insert), exactly as many in the end.
        let inserted = progress.inserted.load(Ordering::Acquire);
        let writer_done = progress.done.load(Ordering::Acquire);
        let allowed = if writer_done {
            progress.inserted.load(Ordering::Acquire)
        } else {
            (inserted + per).min(progress.planned)
        };
        if deleted >= allowed {
            if writer_done || sig.should_stop() {
                break;
            }
            let now = Instant::now();
            m.tick(now);
            std::thread::sleep(std::time::Duration::from_micros(200));
            continue;
        }
        let n = per.min(allowed - deleted) as usize;
        let Some(intended) = next_slot(&mut schedule, m, sig) else {
            break;
        };
        let start = Instant::now();
        m.tick(start);
        let from = table.delete_from.load(Ordering::SeqCst);
        let d = with_retries(
            conn.as_mut(),
            ctx.cfg.max_retries,
            || m.retry(OpKind::Delete),
            |c: &mut dyn Conn| c.delete_oldest(&table.sql, from, n),
        )
        .with_context(|| format!("delete from {} failed", table.name()))?;
        let end = Instant::now();
        table.delete_from.fetch_max(d.next_from, Ordering::SeqCst);
        table
            .expected_rows
            .fetch_sub(d.rows as i64, Ordering::SeqCst);
        if d.rows < n as u64 {
            table.short_deletes.fetch_add(1, Ordering::SeqCst);
        }
        m.record(
            OpKind::Delete,
            intended.unwrap_or(start),
            start,
            end,
            d.rows,
        );
        deleted += n as u64;
    }
    Ok(())
}

/// Run a load step's workers: an inserter per client, and a deleter per client when asked.
pub fn workers<'a>(
    ctx: &'a StepCtx<'a>,
    plan: WriterPlan,
    delete: bool,
    progress: &'a [ClientProgress],
) -> Vec<Worker<'a>> {
    let mut w = Vec::new();
    for (c, p) in progress.iter().enumerate() {
        w.push(inserter(ctx, c, plan, p));
        if delete {
            w.push(deleter(ctx, c, plan, p));
        }
    }
    w
}

/// Check a load step may delete: the table must hold at least the rows it will delete.
pub fn ensure_rows_to_delete(ctx: &StepCtx, conn: &mut dyn Conn) -> Result<()> {
    for t in ctx.tables {
        if conn.count_rows(&t.sql)? == 0 {
            bail!(
                "table {} is empty: deleting steps need a loaded table (run l.i0 first)",
                t.name()
            );
        }
    }
    Ok(())
}
