//! Read+write steps (qrN, qpN, qN.K): one query connection per client runs range or point
//! queries as fast as possible (closed loop, labelled so) while that client's writer inserts N
//! rows/s and, unless insert-only, deletes N rows/s, both on open-loop schedules; all of them
//! on the one measuring loop ([`crate::measure::drive`]). The step ends
//! when each writer has inserted `N * seconds` rows, so it lasts its planned time only if the
//! writers keep the rate; a writer under 95% of its target is reported loudly.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};

use super::load::{deleter, inserter, ClientProgress, WriterPlan};
use super::StepCtx;
use crate::dbms::Conn;
use crate::deadline::Since;
use crate::measure::drive::{drive, Counted, Done, Next, Operation, Pacing};
use crate::measure::meter::{Meter, OpKind};
use crate::measure::reporter::{Signals, Worker};
use crate::workload::iibench::plan::QueryKind;
use crate::workload::iibench::TableState;
use crate::workload::iibench::{derive_seed, RowGen, Statements, INDEXES, POINT_KEYS, RANGE_LIMIT};

/// What the query workers saw, for the step's checks.
#[derive(Debug, Default)]
pub struct QueryTally {
    /// Range queries whose result could be checked (enough rows at or above the start).
    pub range_checked: AtomicU64,
    /// Of those, queries that returned fewer than `RANGE_LIMIT` rows.
    pub range_short: AtomicU64,
    /// Point queries that returned no row.
    pub point_empty: AtomicU64,
}

/// Expected rows at or above `start` in a uniform domain of size `domain` for a table of
/// `rows` rows. A short range result is an error only where this is at least 100: then fewer
/// than 10 matching rows has a probability under 1e-30.
pub fn range_result_checkable(rows: i64, domain: i64, start: i64) -> bool {
    rows.max(0) as f64 * (domain - start) as f64 / domain as f64 >= 100.0
}

/// The workers of a read+write step.
pub fn workers<'a>(
    ctx: &'a StepCtx<'a>,
    query: QueryKind,
    plan: WriterPlan,
    progress: &'a [ClientProgress],
    tally: &'a QueryTally,
) -> Vec<Worker<'a>> {
    let mut w = Vec::new();
    for (c, p) in progress.iter().enumerate() {
        w.push(inserter(ctx, c, plan, p));
        if plan.delete {
            w.push(deleter(ctx, c, plan, p));
        }
        let table = ctx.table_of(c);
        let seed = derive_seed(ctx.cfg.seed, &[ctx.step_no, c as u64, 3]);
        w.push(Worker {
            name: format!("query-{}", c + 1),
            body: Box::new(move |m: &Meter, sig: &Signals| {
                query_loop(ctx, table, query, p, tally, seed, m, sig)
            }),
        });
    }
    w
}

/// One client's queries, as [`drive`] runs them (closed loop): a point query's key range
/// (the table's current min and max PK) is read every 100 ms before its query, outside its
/// measured time; a transient error runs the query again; on a cluster that fails over, the
/// next query goes to a surviving node.
struct Query<'a> {
    ctx: &'a StepCtx<'a>,
    table: &'a TableState,
    query: QueryKind,
    writer: &'a ClientProgress,
    tally: &'a QueryTally,
    conn: Box<dyn Conn>,
    stmts: Statements,
    gen: RowGen,
    keys: [i64; POINT_KEYS],
    range: Option<(i64, i64)>,
    range_read_at: Since,
    /// An error of reading the key range, for the next attempt to report.
    pending: Option<anyhow::Error>,
}

/// The statements of `query` on `table`, prepared on `conn`.
fn prepare(
    ctx: &StepCtx,
    table: &TableState,
    query: QueryKind,
    conn: &mut dyn Conn,
) -> Result<Statements> {
    let mut stmts = Statements::new(table.sql.clone(), ctx.target.stores_rows());
    match query {
        QueryKind::Point => stmts.prepare_point(conn)?,
        QueryKind::Range => {
            for i in 0..ctx.cfg.secondary_indexes.min(INDEXES.len()) {
                stmts.prepare_range(conn, i)?;
            }
        }
    }
    Ok(stmts)
}

impl Query<'_> {
    /// Read the point queries' key range when it is older than 100 ms (two index probes), so
    /// keys stay current even when the table turns over quickly.
    fn refresh_range(&mut self) -> Result<()> {
        if self.query != QueryKind::Point
            || (self.range.is_some() && self.range_read_at.so_far() < Duration::from_millis(100))
        {
            return Ok(());
        }
        self.range = if self.ctx.target.stores_rows() {
            self.table.sql.min_max_ids(self.conn.as_mut())?
        } else {
            Some((1, 1_000_000))
        };
        self.range_read_at = Since::start();
        if self.range.is_none() {
            anyhow::bail!(
                "table {} is empty: point queries need rows",
                self.table.name()
            );
        }
        Ok(())
    }
}

impl Operation for Query<'_> {
    fn counted(&self) -> Counted {
        Counted::Op(OpKind::Query)
    }

    fn next(&mut self, _sig: &Signals) -> Next {
        if self.writer.writers_done() {
            return Next::Finished;
        }
        if let Err(e) = self.refresh_range() {
            self.pending = Some(e);
        }
        Next::Go(None)
    }

    #[inline]
    fn run(&mut self) -> Result<Done> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        // After a failover: the key range from the new connection.
        self.refresh_range()?;
        let rows = query_once(
            self.ctx,
            self.table,
            self.query,
            &mut self.stmts,
            self.conn.as_mut(),
            &mut self.gen,
            self.range,
            &mut self.keys,
            self.tally,
        )?;
        Ok(Done::Op {
            kind: OpKind::Query,
            rows: rows as u64,
        })
    }

    fn transient(&mut self, e: &anyhow::Error) -> bool {
        self.conn.is_retryable(e)
    }

    fn conn(&mut self) -> Option<&mut dyn Conn> {
        Some(self.conn.as_mut())
    }

    fn reconnected(&mut self, mut conn: Box<dyn Conn>) -> Result<()> {
        self.stmts = prepare(self.ctx, self.table, self.query, conn.as_mut())?;
        self.conn = conn;
        // A query changes nothing: nothing in doubt; the key range is read again there.
        self.range = None;
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
fn query_loop(
    ctx: &StepCtx,
    table: &TableState,
    query: QueryKind,
    writer: &ClientProgress,
    tally: &QueryTally,
    seed: u64,
    m: &Meter,
    sig: &Signals,
) -> Result<()> {
    // Closed loop: yield the CPU to the rate-limited writers (crate::measure::priority).
    crate::measure::priority::lower_this_thread(ctx.cfg.query_nice);
    let mut conn = ctx.target.connect().context("cannot connect")?;
    // Prepared now, not in the first measured query.
    let stmts = prepare(ctx, table, query, conn.as_mut())?;
    let (dmin, dmax) = ctx.cfg.data_len;
    let mut op = Query {
        ctx,
        table,
        query,
        writer,
        tally,
        conn,
        stmts,
        gen: RowGen::new(seed, dmin, dmax),
        keys: [0i64; POINT_KEYS],
        range: None,
        range_read_at: Since::start(),
        pending: None,
    };
    let pacing = Pacing {
        max_retries: ctx.cfg.max_retries,
        failover: Some(ctx.failover(table)),
        ..Default::default()
    };
    drive(m, sig, pacing, &mut op).map(|_| ())
}

/// One range or point query, its result checked where it can be.
#[allow(clippy::too_many_arguments)]
#[inline]
fn query_once(
    ctx: &StepCtx,
    table: &TableState,
    query: QueryKind,
    stmts: &mut Statements,
    conn: &mut dyn Conn,
    gen: &mut RowGen,
    range: Option<(i64, i64)>,
    keys: &mut [i64; POINT_KEYS],
    tally: &QueryTally,
) -> Result<usize> {
    let n_idx = ctx.cfg.secondary_indexes;
    let checks = ctx.target.stores_rows();
    Ok(match query {
        QueryKind::Range => {
            let (idx, from) = gen.range_query(n_idx);
            // An index whose first column follows a key pattern: its values are not
            // uniform in the insert benchmark's domain, so its results are not checked.
            let (from, uniform) = match &table.sql.patterns {
                Some(p) => (p.range_start(idx, from), !p.drives_index(idx)),
                None => (from, true),
            };
            let rows_now = table.expected_rows.load(Ordering::Relaxed);
            let n = stmts.range_query(conn, idx, from).with_context(|| {
                format!("range query on {} failed", INDEXES[idx].name(table.name()))
            })?;
            if checks
                && uniform
                && range_result_checkable(rows_now, INDEXES[idx].first_domain, from)
            {
                tally.range_checked.fetch_add(1, Ordering::Relaxed);
                if n < RANGE_LIMIT {
                    tally.range_short.fetch_add(1, Ordering::Relaxed);
                }
            }
            n
        }
        QueryKind::Point => {
            let (lo, hi) = range.unwrap_or((1, 1));
            gen.point_keys(lo, hi, keys);
            let n = stmts
                .point_query(conn, keys)
                .with_context(|| format!("point query on {} failed", table.name()))?;
            if n == 0 {
                tally.point_empty.fetch_add(1, Ordering::Relaxed);
            }
            n
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkable_only_where_ten_rows_are_certain() {
        // 1M rows, productid domain 10000: 100 rows per value
        assert!(range_result_checkable(1_000_000, 10_000, 9_999));
        // 10k rows: one row per value; the top of the domain is not checkable
        assert!(!range_result_checkable(10_000, 10_000, 9_950));
        assert!(range_result_checkable(10_000, 10_000, 9_000));
        assert!(!range_result_checkable(0, 500, 0));
    }
}
