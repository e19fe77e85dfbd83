//! A step of transactions: the clients of a [`Workload`], each on its own connection and
//! reporter worker, in a closed loop (as fast as each can) or an open loop at a fixed total
//! rate (latency from the intended start), for a given time. A transient error (deadlock,
//! serialization failure, lock wait timeout, busy, a duplicate key of a concurrent
//! delete+insert, as sysbench ignores them) rolls back and runs the transaction again, counted
//! as an error of its code and a retry; any other error, or more than `max_retries` retries of
//! one transaction, fails the step with the error. On a cluster that fails over (Galera), a
//! client whose node died connects to a surviving node and runs the transaction in flight
//! again, counted as an error of its code and a retry (and as in doubt: it may have
//! committed).
//!
//! Used by `ixbench oltp` and by any command that runs a load while something else happens.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::dbms::errcode::{error_code, is_duplicate_key};
use crate::dbms::Dbms;
use crate::measure::meter::Meter;
use crate::measure::reporter::{Signals, Worker};
use crate::measure::schedule::{Arrivals, Schedule};
use crate::workload::Workload;

/// How the clients run.
#[derive(Debug, Clone)]
pub struct TxnRun {
    /// Clients, one connection each.
    pub threads: usize,
    /// How long they run (from the step's start).
    pub duration: Duration,
    /// Transactions per second of all clients together (open loop), or `None` for a closed
    /// loop.
    pub rate: Option<f64>,
    /// Spacing of the intended starts in an open loop.
    pub arrivals: Arrivals,
    /// Retries of one transaction after transient errors before the step fails.
    pub max_retries: u32,
    /// Seed of the clients' generators (client `i` gets its own stream).
    pub seed: u64,
    /// Clients' connections made again on a surviving node after theirs died.
    pub reconnects: Arc<AtomicU64>,
    /// Transactions in flight on a connection that died (each may or may not have committed).
    pub in_doubt: Arc<AtomicU64>,
}

/// Whether `e` is an error sysbench would ignore and retry: the DBMS's transient errors
/// ([`crate::dbms::Conn::is_retryable`]) and duplicate keys.
fn transient(conn: &dyn crate::dbms::Conn, e: &anyhow::Error) -> bool {
    conn.is_retryable(e) || is_duplicate_key(e)
}

/// The reporter workers of `run`: client `i` connects, prepares its statements and runs
/// transactions until the step's `duration` is over (or it is told to stop).
pub fn workers<'a>(
    workload: &'a dyn Workload,
    dbms: &'a dyn Dbms,
    run: &'a TxnRun,
) -> Vec<Worker<'a>> {
    (0..run.threads)
        .map(|i| Worker {
            name: format!("client-{}", i + 1),
            body: Box::new(move |meter: &Meter, sig: &Signals| {
                client(workload, dbms, run, i, meter, sig)
            }),
        })
        .collect()
}

fn client(
    workload: &dyn Workload,
    dbms: &dyn Dbms,
    run: &TxnRun,
    i: usize,
    meter: &Meter,
    sig: &Signals,
) -> Result<()> {
    let end = meter.step_start() + run.duration;
    let mut conn = dbms.connect().context("connecting")?;
    let seed = run.seed.wrapping_add(i as u64);
    let mut w = workload.client(conn.as_mut(), i, seed)?;
    let mut schedule = run.rate.map(|r| {
        Schedule::for_writer(
            meter.step_start(),
            Instant::now(),
            r / run.threads as f64,
            run.arrivals,
            seed ^ 0x0c0f_fee0,
            i,
            run.threads,
        )
    });
    loop {
        // The end is the end: a client behind its schedule does not run its backlog after it.
        if sig.should_stop() || Instant::now() >= end {
            break;
        }
        let intended = match schedule.as_mut() {
            Some(s) => {
                if s.peek() >= end {
                    break;
                }
                let t = s.next_intended();
                if !sig.sleep_until(t) {
                    break;
                }
                t
            }
            None => Instant::now(),
        };
        let start = Instant::now();
        let mut tries = 0u32;
        loop {
            match w.run(conn.as_mut()) {
                Ok(done) => {
                    meter.record_txn(intended, start, &done);
                    break;
                }
                Err(e) => {
                    let _ = conn.rollback();
                    let code = error_code(&e);
                    if transient(conn.as_ref(), &e) && tries < run.max_retries && !sig.should_stop()
                    {
                        meter.txn_error(&code, true);
                        tries += 1;
                        continue;
                    }
                    if tries < run.max_retries && !sig.should_stop() {
                        // Its node died (a cluster that fails over): go on on another node.
                        let stop = || sig.should_stop();
                        if let Some(c) = crate::step::failover::reconnect_to(
                            dbms,
                            &run.reconnects,
                            conn.as_mut(),
                            &stop,
                        ) {
                            conn = c;
                            w = workload.client(conn.as_mut(), i, seed)?;
                            run.in_doubt.fetch_add(1, Ordering::SeqCst);
                            meter.txn_error(&code, true);
                            tries += 1;
                            continue;
                        }
                    }
                    meter.txn_error(&code, false);
                    if sig.should_stop() {
                        // Cancelled by the stop (Ctrl-C, another client's failure).
                        return Ok(());
                    }
                    return Err(if tries > 0 {
                        e.context(format!("after {tries} retries"))
                    } else {
                        e
                    });
                }
            }
        }
    }
    // An open loop that fell behind: what was due before the end but never started counts
    // in the latency histogram from its intended start to the end.
    if let Some(s) = schedule.as_mut() {
        let cut = Instant::now().min(end);
        let due = s.take_due(cut, u64::MAX);
        meter.txn_never_started(&due, cut);
    }
    Ok(())
}
