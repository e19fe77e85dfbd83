//! A step of transactions: the clients of a [`Workload`], each on its own connection and
//! reporter worker, on the one measuring loop ([`crate::measure::drive`]), in a closed loop (as
//! fast as each can) or an open loop at a fixed total rate (latency from the intended start,
//! each interval's backlog), for a given time. A transient error (deadlock,
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
use std::time::Duration;

use anyhow::{Context, Result};

use crate::dbms::errcode::is_duplicate_key;
use crate::dbms::{Conn, Dbms};
use crate::measure::clock;
use crate::measure::drive::{drive, AfterError, Counted, Done, Operation, Pacing};
use crate::measure::failover::Failover;
use crate::measure::meter::Meter;
use crate::measure::reporter::{Signals, Worker};
use crate::measure::schedule::{Arrivals, Schedule};
use crate::measure::until::Until;
use crate::workload::{Workload, WorkloadClient};

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

/// One client's transactions, as [`drive`] runs them: an error sysbench would ignore (the
/// DBMS's transient errors, [`crate::dbms::Conn::is_retryable`], and duplicate keys) rolls back
/// and runs again; on a cluster that fails over, a dead connection is replaced by one to a
/// surviving node and the transaction in flight runs again there (counted as in doubt); any
/// other error fails the step.
struct Client<'a> {
    workload: &'a dyn Workload,
    run: &'a TxnRun,
    i: usize,
    seed: u64,
    conn: Box<dyn Conn>,
    w: Box<dyn WorkloadClient>,
}

impl Operation for Client<'_> {
    fn counted(&self) -> Counted {
        Counted::Txn
    }

    fn run(&mut self) -> Result<Done> {
        self.w.run(self.conn.as_mut()).map(Done::Txn)
    }

    fn transient(&mut self, e: &anyhow::Error) -> bool {
        self.conn.is_retryable(e) || is_duplicate_key(e)
    }

    fn rollback(&mut self) {
        let _ = self.conn.rollback();
    }

    fn conn(&mut self) -> Option<&mut dyn Conn> {
        Some(self.conn.as_mut())
    }

    fn reconnected(&mut self, conn: Box<dyn Conn>) -> Result<()> {
        // Its node died (a cluster that fails over): go on on another node, the transaction
        // in flight in doubt (it may have committed).
        self.conn = conn;
        self.w = self
            .workload
            .client(self.conn.as_mut(), self.i, self.seed)?;
        self.run.in_doubt.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn failed(&mut self, e: anyhow::Error, tries: u32, _stop: &dyn Fn() -> bool) -> AfterError {
        AfterError::Fail(if tries > 0 {
            e.context(format!("after {tries} retries"))
        } else {
            e
        })
    }
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

/// One client: connect, prepare, run transactions until the end. Never inlined: callgrind
/// counts a client's instructions by this symbol (`bench/li1-oltp-instructions.sh`).
#[inline(never)]
fn client(
    workload: &dyn Workload,
    dbms: &dyn Dbms,
    run: &TxnRun,
    i: usize,
    meter: &Meter,
    sig: &Signals,
) -> Result<()> {
    let until = Until::after(meter.step_start(), run.duration);
    let mut conn = dbms.connect().context("connecting")?;
    let seed = run.seed.wrapping_add(i as u64);
    let w = workload.client(conn.as_mut(), i, seed)?;
    let schedule = run.rate.map(|r| {
        Schedule::for_writer(
            meter.step_start(),
            clock::now(),
            r / run.threads as f64,
            run.arrivals,
            seed ^ 0x0c0f_fee0,
            i,
            run.threads,
        )
    });
    let mut op = Client {
        workload,
        run,
        i,
        seed,
        conn,
        w,
    };
    // The end is the end: a client behind its schedule does not run its backlog after it,
    // it records it as never started.
    let pacing = Pacing {
        schedule,
        until: Some(&until),
        max_retries: run.max_retries,
        failover: Some(Failover {
            target: dbms,
            reconnects: &run.reconnects,
        }),
        slots_past_end: false,
    };
    drive(meter, sig, pacing, &mut op).map(|_| ())
}
