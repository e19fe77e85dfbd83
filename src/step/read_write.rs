//! Read+write steps (qrN, qpN, qN.K): one query connection per client runs range or point
//! queries as fast as possible (closed loop, labelled so) while that client's writer inserts N
//! rows/s and, unless insert-only, deletes N rows/s, both on open-loop schedules. The step ends
//! when each writer has inserted `N * seconds` rows, so it lasts its planned time only if the
//! writers keep the rate; a writer under 95% of its target is reported loudly.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::load::{deleter, inserter, ClientProgress, WriterPlan};
use super::{failover, QueryKind, StepCtx, TableState};
use crate::dbms::{with_retries, Conn};
use crate::measure::meter::{Meter, OpKind};
use crate::measure::reporter::{Signals, Worker};
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
    let prepare = |conn: &mut dyn Conn| -> Result<Statements> {
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
    };
    let mut stmts = prepare(conn.as_mut())?;
    let (dmin, dmax) = ctx.cfg.data_len;
    let mut gen = RowGen::new(seed, dmin, dmax);
    let checks = ctx.target.stores_rows();
    let mut keys = [0i64; POINT_KEYS];
    let mut range: Option<(i64, i64)> = None;
    let mut range_read_at = Instant::now();
    while !writer.writers_done() && !sig.should_stop() {
        if query == QueryKind::Point
            && (range.is_none() || range_read_at.elapsed() >= Duration::from_millis(100))
        {
            // The PKs live between the current min and max; read them every 100 ms (two
            // index probes), so keys stay current even when the table turns over quickly.
            range = if checks {
                match table.sql.min_max_ids(conn.as_mut()) {
                    Ok(r) => r,
                    Err(e) => {
                        let Some(c) = failover::reconnect(ctx, table, conn.as_mut(), sig) else {
                            return Err(e);
                        };
                        conn = c;
                        stmts = prepare(conn.as_mut())?;
                        m.retry(OpKind::Query);
                        continue;
                    }
                }
            } else {
                Some((1, 1_000_000))
            };
            range_read_at = Instant::now();
            if range.is_none() {
                anyhow::bail!("table {} is empty: point queries need rows", table.name());
            }
        }
        let start = Instant::now();
        let rows = match query_once(
            ctx,
            table,
            query,
            &mut stmts,
            conn.as_mut(),
            &mut gen,
            range,
            &mut keys,
            tally,
            m,
        ) {
            Ok(n) => n,
            Err(e) => {
                // The node died: the next query goes to a surviving node.
                let Some(c) = failover::reconnect(ctx, table, conn.as_mut(), sig) else {
                    return Err(e);
                };
                conn = c;
                stmts = prepare(conn.as_mut())?;
                m.retry(OpKind::Query);
                range = None;
                continue;
            }
        };
        m.record(OpKind::Query, start, start, rows as u64);
    }
    Ok(())
}

/// One range or point query, its result checked where it can be.
#[allow(clippy::too_many_arguments)]
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
    m: &Meter,
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
            let n = with_retries(
                conn,
                ctx.cfg.max_retries,
                || m.retry(OpKind::Query),
                |c: &mut dyn Conn| stmts.range_query(c, idx, from),
            )
            .with_context(|| {
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
            let n = with_retries(
                conn,
                ctx.cfg.max_retries,
                || m.retry(OpKind::Query),
                |c: &mut dyn Conn| stmts.point_query(c, keys),
            )
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
