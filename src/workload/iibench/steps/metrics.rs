//! Metrics derived from what a step's workers measured: rates, latencies, flow statistics and
//! the self-checks that compare ixbench's counts with each other and with the DBMS's.

use std::sync::atomic::Ordering;

use anyhow::Result;

use super::load::{ClientProgress, WriterPlan};
use super::read_write::QueryTally;
use super::StepCtx;
use crate::measure::histogram::summarize;
use crate::measure::interval::rate_at_rank;
use crate::measure::meter::OpKind;
use crate::measure::reporter::Measured;
use crate::results::{Check, OpLatency, StepResult};
use crate::workload::iibench::plan::QueryKind;

/// Record the step's stalls, the inserters' waits for their deleters and the table size's
/// excursions, with their self-checks: the reporter's interval sums equal the writers' own
/// counts, every latency histogram holds one value per operation (completed or never
/// started), and with deletes each client's inserts and deletes stayed within one batch.
pub(crate) fn flow_stats(
    step: &mut StepResult,
    m: &Measured,
    progress: &[ClientProgress],
    plan: &WriterPlan,
    arrivals: crate::measure::schedule::Arrivals,
    interrupted: bool,
) {
    let per = plan.rows_per_commit.max(1) as u64;
    let mut f = crate::results::FlowStats {
        longest_stall_secs: m.longest_stall_secs,
        stalled_lines: m.stalled_lines,
        stall_timed_out: m.stall_timed_out,
        arrivals: plan.rate.map(|_| arrivals),
        ..Default::default()
    };
    for p in progress {
        f.insert_wait_secs += p.insert_wait_ns.load(Ordering::Relaxed) as f64 / 1e9;
        f.insert_waits += p.insert_waits.load(Ordering::Relaxed);
    }
    let inserted: u64 = progress.iter().map(|p| p.inserted()).sum();
    step.checks.push(Check {
        name: "interval_sums".into(),
        ok: inserted == m.totals.rows[0],
        detail: format!(
            "the interval lines add up to {} rows inserted; the inserters counted {inserted}",
            m.totals.rows[0]
        ),
    });
    for kind in OpKind::ALL {
        let k = kind.idx();
        let want = m.totals.ops[k] + m.totals.never_started[k];
        let have = m.hists[k].as_ref().map_or(0, |h| h.latency.len());
        if want > 0 || have > 0 {
            step.checks.push(Check {
                name: "histogram_counts".into(),
                ok: have == want,
                detail: format!(
                    "{} latency histogram holds {have} values for {} operations and {} never started",
                    kind.name(),
                    m.totals.ops[k],
                    m.totals.never_started[k]
                ),
            });
        }
    }
    if plan.delete {
        let (ex, de) = progress
            .iter()
            .map(|p| p.max_excess())
            .fold((0, 0), |(a, b), (x, y)| (a.max(x), b.max(y)));
        f.max_excess_rows = Some(ex);
        f.max_deficit_rows = Some(de);
        let deleted: u64 = progress.iter().map(|p| p.deleted()).sum();
        // A deleter may be one batch ahead when its inserter is cut off at 3x the planned
        // time (it cannot know that no more rows will come): within one batch per client.
        let cut = progress.iter().any(|p| p.cut.load(Ordering::Acquire));
        let slack = if cut { per * progress.len() as u64 } else { 0 };
        let all_deleted =
            deleted.abs_diff(inserted) <= slack || interrupted || !m.errors.is_empty();
        step.checks.push(Check {
            name: "table_size".into(),
            ok: ex <= per && de <= per && all_deleted,
            detail: format!(
                "each client's inserts ran at most {ex} rows ahead of its deletes and its deletes at most {de} rows ahead (limit: one batch, {per} rows); {deleted} rows deleted for {inserted} inserted (limit: equal, or {slack} apart after a cut-off)"
            ),
        });
    }
    if m.stalled_lines > 0 || m.stall_timed_out {
        step.warnings.push(format!(
            "STALLED: no operation completed for {:.1} s ({} interval lines marked STALLED)",
            m.longest_stall_secs, m.stalled_lines
        ));
    }
    step.flow = Some(f);
}

/// Compare the DBMS's counts of rows inserted and deleted during the step with ixbench's.
pub(crate) fn check_row_counters(
    ctx: &StepCtx,
    conn: &mut dyn crate::dbms::Conn,
    before: Option<crate::dbms::RowCounters>,
    step: &mut StepResult,
) -> Result<()> {
    // A second stop request skips the checks (PostgreSQL's counters may take seconds).
    let Some(before) = before.filter(|_| !crate::stop::hurried()) else {
        return Ok(());
    };
    let Some(after) = row_counters(ctx, conn)? else {
        return Ok(());
    };
    if ctx.cfg.other_processes && ctx.target.row_counters_server_wide() {
        // The other parts' rows are in the server's counters too: nothing to compare with.
        step.warnings.push(
            "dbms_counters not compared: the DBMS's row counters are server-wide and other \
             ixbench processes of this run wrote to the same server"
                .into(),
        );
        return Ok(());
    }
    let ins = after.inserted.saturating_sub(before.inserted);
    let del = after.deleted.saturating_sub(before.deleted);
    let (want_ins, want_del) = (step.totals.rows[0], step.totals.rows[1]);
    step.checks.push(Check {
        name: "dbms_counters".into(),
        ok: ins == want_ins && del == want_del,
        detail: format!(
            "the DBMS counted {ins} rows inserted and {del} deleted; ixbench {want_ins} and {want_del}"
        ),
    });
    Ok(())
}

/// Fold what the workers measured into the step result; a worker error fails the step.
pub(crate) fn absorb(
    step: &mut StepResult,
    m: Measured,
    rows_per_commit: usize,
    rate: Option<f64>,
    clients: usize,
    writer_secs: Option<f64>,
) -> Result<()> {
    step.seconds = m.seconds;
    step.totals = m.totals;
    step.throttled = rate.is_some();
    step.target_rate = rate;
    let secs = m.seconds.max(1e-9);
    step.summary.ips = m.totals.rows[0] as f64 / secs;
    step.summary.dps = m.totals.rows[1] as f64 / secs;
    step.summary.qps = m.totals.ops[2] as f64 / secs;
    let main = if m.totals.ops[2] > 0 { 2 } else { 0 };
    // Only intervals of at least half the interval length count: a step shorter than that
    // has no per-interval rate, and its p50 and p01 stay unknown (not 0).
    let rates: Vec<f64> = m.interval_rates.iter().map(|r| r[main]).collect();
    let at_rank = |q: f64| (!rates.is_empty()).then(|| rate_at_rank(&rates, q));
    step.summary.p50 = at_rank(0.5);
    step.summary.p01 = at_rank(0.01);
    let mut maxop = 0u64;
    for kind in OpKind::ALL {
        if let Some(h) = &m.hists[kind.idx()] {
            maxop = maxop.max(h.latency.max());
            let unit = match kind {
                OpKind::Insert => format!("commit of {rows_per_commit} rows"),
                OpKind::Delete => format!("commit deleting {rows_per_commit} rows"),
                OpKind::Query => "query".to_string(),
            };
            step.latency.push(OpLatency {
                op: kind.name().to_string(),
                unit,
                latency: summarize(&h.latency),
                service: summarize(&h.service),
                lag: if rate.is_some() && kind != OpKind::Query {
                    Some(summarize(&h.lag))
                } else {
                    None
                },
            });
        }
    }
    step.summary.maxop = maxop as f64 / 1e6;
    if let Some(r) = rate {
        // Over the time the throttled inserters' rows were due in (from their schedules'
        // origins until they stopped), not the step's: a writer's phase and its deleter's last
        // batch are not time it had to insert in.
        let wsecs = writer_secs.unwrap_or(secs).max(1e-9);
        let achieved = m.totals.rows[0] as f64 / clients as f64 / wsecs;
        step.achieved_rate = Some(achieved);
        if achieved < 0.95 * r {
            step.rate_ok = false;
            step.warnings.push(format!(
                "WRITERS FELL BEHIND: {achieved:.0} rows/s per client achieved, {r:.0} targeted ({:.0}%); query figures of this step are not comparable",
                100.0 * achieved / r
            ));
        }
    }
    if let Some((name, e)) = m.errors.into_iter().next() {
        if name == "reporter" {
            return Err(e);
        }
        return Err(e.context(format!("worker {name}")));
    }
    Ok(())
}

pub(crate) fn tally_checks(step: &mut StepResult, query: QueryKind, tally: &QueryTally) {
    let queries = step.totals.ops[2];
    step.checks.push(Check {
        name: "queries_return_rows".into(),
        ok: queries == 0 || step.totals.rows[2] > 0,
        detail: format!("{queries} queries returned {} rows", step.totals.rows[2]),
    });
    match query {
        QueryKind::Range => {
            let checked = tally.range_checked.load(Ordering::Relaxed);
            let short = tally.range_short.load(Ordering::Relaxed);
            step.checks.push(Check {
                name: "range_rows".into(),
                ok: short == 0,
                detail: format!(
                    "{short} of {checked} checkable range queries returned fewer than 10 rows"
                ),
            });
        }
        QueryKind::Point => {
            let empty = tally.point_empty.load(Ordering::Relaxed);
            step.checks.push(Check {
                name: "point_rows".into(),
                ok: empty * 10 <= queries.max(1),
                detail: format!("{empty} of {queries} point queries found none of their 10 keys"),
            });
        }
    }
}

/// The DBMS's own row counters before a step's workers start.
pub(crate) fn row_counters(
    ctx: &StepCtx,
    conn: &mut dyn crate::dbms::Conn,
) -> Result<Option<crate::dbms::RowCounters>> {
    let names: Vec<String> = ctx.tables.iter().map(|t| t.name().to_string()).collect();
    ctx.target.row_counters(conn, &names)
}
