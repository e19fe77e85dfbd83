//! The one runner of every transaction workload (the OLTP mixes, the time series, the key-value
//! mix, and the next one): a workload declares what it is ([`TxnWorkload`]: its options'
//! checks, its part of `run.json`'s config, its variants, how it loads, how many rows one
//! transaction may change, its figures and checks after the measured phase) and [`run`] does
//! what they all share, in this order:
//! 1. check the head's options, the workload's own, and the shared ones on its tables;
//! 2. open the session with the config (the shared keys and the workload's);
//! 3. for each variant: load (or reuse) its tables, count the rows, run the measured phase on
//!    the host (interval lines, the Galera nodes watched, the server's cost when asked),
//!    check that the interval lines add up to the totals and that the rows in the tables are
//!    the rows before + inserted - deleted, hand everything to the workload's figures, print
//!    its summary and the failed checks, keep its record in `run.json`;
//! 4. close the session with the records' table.
//!
//! The standard record of a transaction run is [`OltpRun`] (transactions, statements by class,
//! latency, errors, checks: sysbench's figures); a workload with no figures of its own keeps
//! it ([`standard`]), so a new transaction workload is its [`Workload`] (tables, load,
//! statements and mix), a [`TxnWorkload`] of a few lines and its registry entry, in one file
//! (see `kv.rs`).

use anyhow::{bail, Result};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::dbms::{self, Conn, Dbms};
use crate::export::Table;
use crate::format as fmt;
use crate::measure::clock::Stopwatch;
use crate::measure::histogram::summarize;
use crate::measure::reporter::Measured;
use crate::measure::resources::{Window, WindowCost};
use crate::measure::sys::ProcSnapshot;
use crate::results::cluster::NodeStep;
use crate::results::oltp::{OltpLoad, OltpRun};
use crate::results::parts::PartSchema;
use crate::results::{Check, RunResult};
use crate::workload::runner::{Host, Open, TxnHead};
use crate::workload::Workload;

/// One run of a workload's tables: most workloads have one; the time series runs each
/// partitioning of `--compare-partitioning` in turn.
#[derive(Debug, Clone)]
pub struct Variant {
    /// The progress step of its load (`None`: nothing is loaded, the tables are reused).
    pub load_step: Option<String>,
    /// The progress step of its measured phase.
    pub run_step: String,
    /// The step its interval lines name (`intervals.ndjson`, errors).
    pub step: String,
}

/// What the load did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Loaded {
    /// Rows loaded (or found, reused).
    pub rows: u64,
    /// Seconds it took.
    pub seconds: f64,
    /// Connections that loaded.
    pub threads: usize,
    /// The tables of an earlier run were reused.
    pub reused: bool,
}

/// The insert rate in one interval and the rows in the table at its end.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GrowthPoint {
    /// Seconds from the start of the inserts to the interval's end.
    pub t_sec: f64,
    /// Rows in the table at the interval's end (rows before + inserted - removed so far).
    pub rows: u64,
    /// Rows inserted per second in the interval.
    pub rows_per_sec: f64,
}

/// A measured phase, as the workload's figures get it: what the loop measured, the shared
/// checks, and the open session for what the workload measures after it.
pub struct Figures<'a, W> {
    /// The variant (index into [`TxnWorkload::variants`]).
    pub variant: usize,
    /// The variant's workload.
    pub w: &'a W,
    /// Clients, time, rate, ...
    pub head: &'a TxnHead,
    /// `--seed`.
    pub seed: u64,
    /// The load.
    pub loaded: Loaded,
    /// The reporter's figures (totals, histograms); its errors are the runner's, see
    /// [`TxnWorkload::KEEPS_FAILED_PHASE`].
    pub m: Measured,
    /// The client process's CPU over the phase.
    pub cpu: ProcSnapshot,
    /// Connections of the workers made again after their node died.
    pub reconnects: u64,
    /// Transactions in flight when their node died.
    pub in_doubt: u64,
    /// The Galera nodes over the phase ([`TxnWorkload::WATCH_NODES`]).
    pub nodes: Vec<NodeStep>,
    /// What went wrong without failing the phase (a node that left).
    pub warnings: Vec<String>,
    /// Rows in the tables at each full interval's end, and the insert rate.
    pub growth: Vec<GrowthPoint>,
    /// Client and server resources over the phase ([`TxnWorkload::SERVER_COST`]).
    pub cost: Option<WindowCost>,
    /// Rows in the tables before the phase (`None`: the DBMS stores no rows).
    pub rows_before: Option<u64>,
    /// Rows after.
    pub rows_after: Option<u64>,
    /// The shared checks: the interval lines add up to the totals, the rows.
    pub checks: Vec<Check>,
    /// The open session.
    pub session: Open<'a>,
}

/// How a variant ended, for its record.
#[derive(Debug, Clone, Default)]
pub struct End {
    /// The error that stopped it.
    pub error: Option<String>,
    /// Stopped by Ctrl-C or SIGTERM.
    pub interrupted: bool,
}

/// What one measured variant records: its checks, its summary, its part of `run.json` (with its
/// part of the JSON Schema) and its row of the results table.
pub trait Record: Clone + Serialize + schemars::JsonSchema {
    /// The results table's name (`NAME.csv`, `NAME.md`), and its part's in `run.json` (the key
    /// its records are kept under, see [`crate::results::parts`]).
    const TABLE: &'static str;
    /// What its records are, in words (its part's description in the JSON Schema).
    const WHAT: &'static str;

    /// Its checks.
    fn checks(&self) -> &[Check];

    /// What it did, in words (printed after the phase).
    fn summary(&self) -> String;

    /// Put it in `run.json`, with how it ended: by default as it is, the last of its part.
    fn keep(&mut self, _end: &End, result: &mut RunResult) -> Result<()> {
        result.workloads.push(Self::TABLE, self)
    }

    /// The results table of the variants kept.
    fn table(runs: &[Self]) -> Table;

    /// Its part of `run.json`'s JSON Schema.
    fn part() -> PartSchema {
        PartSchema::of::<Self>(Self::TABLE, Self::WHAT)
    }
}

/// Every workload's part of `run.json`'s JSON Schema ([`crate::results::schema::run_schema`]):
/// the standard record's, then those of the records of a workload's own (a `pub struct` of
/// its module with `impl Record for` it: build.rs finds them).
pub fn record_parts() -> Vec<PartSchema> {
    std::iter::once(OltpRun::part())
        .chain(crate::workload::record_parts())
        .collect()
}

/// A transaction workload as [`run`] runs it.
pub trait TxnWorkload {
    /// The workload its clients run (tables, load, statements, mix).
    type W: Workload;
    /// What one measured variant records.
    type Run: Record;

    /// What `--rate` counts (`transactions`, `commits`).
    const UNIT: &'static str;
    /// On a Galera cluster, watch every node over the phase (per-node figures, a node that
    /// leaves).
    const WATCH_NODES: bool = false;
    /// Measure the client's and the server's resources over the phase ([`Figures::cost`]).
    const SERVER_COST: bool = false;
    /// A client's error fails the run after the figures of the phase were printed and kept
    /// (true), or at once, with no figures (false).
    const KEEPS_FAILED_PHASE: bool = true;
    /// What the rows check calls the rows the transactions deleted.
    const REMOVED: &'static str = "deleted";

    /// Check its own options (the head's are checked before); returns its tables, on which
    /// the shared options are checked.
    fn check(&self, host: &dyn Host) -> Result<Vec<String>>;

    /// Its keys of `run.json`'s config (besides command, target, engine, threads, time_secs,
    /// rate and seed); an error stops the run before the session opens.
    fn config(&self, host: &dyn Host) -> Result<Map<String, Value>>;

    /// Its variants, run in turn.
    fn variants(&self) -> Vec<Variant>;

    /// Variant `v`'s workload on `target`.
    fn workload(&self, v: usize, target: &dyn Dbms, seed: u64) -> Result<Self::W>;

    /// Create and fill its tables (see [`fill`]) or check the ones it reuses, saying what it
    /// does.
    fn load(&self, v: usize, w: &Self::W, s: &mut Open<'_>, head: &TxnHead) -> Result<Loaded>;

    /// Say what the measured phase runs (the line before the interval lines).
    fn announce(&self, w: &Self::W, head: &TxnHead) {
        crate::outln!(
            "\nrunning {} with {} thread(s) for {} s{}",
            w.name(),
            head.threads,
            head.time,
            match head.rate {
                Some(r) => format!(
                    ", offered rate {r} transactions/s ({:?} arrivals)",
                    head.arrivals
                ),
                None => String::new(),
            }
        );
    }

    /// The most rows one transaction changes: the rows check allows that many per
    /// transaction in doubt (in flight when its node died; it may have committed there).
    fn rows_per_txn(&self) -> u64 {
        0
    }

    /// The variant's record from the measured phase (add the shared checks to it), with what
    /// the workload measures and checks after the phase.
    fn figures(&self, f: Figures<'_, Self::W>) -> Result<Self::Run>;

    /// The record of a variant that failed before its figures, if it keeps one.
    fn unmeasured(&self, _head: &TxnHead) -> Option<Self::Run> {
        None
    }
}

/// Run the transaction workload `t` on `host`. Returns the exit status (0, checks failed,
/// interrupted); errors are returned for the caller to print.
pub fn run<T: TxnWorkload>(t: &T, host: &mut dyn Host) -> Result<u8> {
    host.check_head(T::UNIT)?;
    let tables = t.check(host)?;
    host.check_common(&tables)?;
    let own = t.config(host)?;
    let head = host.head().clone();
    let common = host.common().clone();
    let mut config = json!({
        "command": host.command(),
        "target": dbms::redact_url(&common.target),
        "engine": common.engine,
        "threads": head.threads,
        "time_secs": head.time,
        "rate": head.rate,
        "seed": common.seed,
    });
    if let Some(c) = config.as_object_mut() {
        c.extend(own);
    }
    let variants = t.variants();
    {
        use crate::progress::{start, Planned};
        let mut planned = Vec::new();
        for v in &variants {
            if let Some(l) = &v.load_step {
                planned.push((l.clone(), Planned::Unknown));
            }
            planned.push((v.run_step.clone(), Planned::Seconds(head.time)));
        }
        start(planned);
    }
    host.open(config)?;
    let mut runs: Vec<T::Run> = Vec::new();
    let mut outcome = Ok(());
    for (v, variant) in variants.iter().enumerate() {
        let mut measured = None;
        let r = run_variant(t, v, variant, host, &mut measured);
        let end = End {
            error: r.as_ref().err().map(|e| format!("{e:#}")),
            interrupted: host.interrupt().load(std::sync::atomic::Ordering::SeqCst),
        };
        if let Some(mut rec) = measured.or_else(|| t.unmeasured(&head)) {
            let s = host.session()?;
            rec.keep(&end, s.result)?;
            s.store.write_run(s.result)?;
            runs.push(rec);
        }
        if let Err(e) = r {
            outcome = Err(e);
            break;
        }
        if end.interrupted {
            break;
        }
    }
    let checks_ok = runs.iter().all(|r| r.checks().iter().all(|c| c.ok));
    let table = T::Run::table(&runs);
    host.close(outcome, checks_ok, vec![(T::Run::TABLE, table)])
}

/// Fill `w`'s tables with up to `threads` connections as the progress step `step`; returns
/// the seconds it took.
pub fn fill(w: &dyn Workload, target: &dyn Dbms, threads: usize, step: &str) -> Result<f64> {
    crate::progress::step_named(step);
    let t0 = Stopwatch::start();
    let wait = crate::progress::waiting("the load");
    w.load(target, threads)?;
    drop(wait);
    Ok(t0.elapsed_secs())
}

/// Rows in all `tables`.
pub fn count_all(conn: &mut dyn Conn, tables: &[String]) -> Result<u64> {
    let mut n = 0;
    for t in tables {
        n += crate::workload::tables::count_rows(conn, t)?;
    }
    Ok(n)
}

/// Variant `v`: load, measure, figures. Its record, once its figures are made, goes to
/// `measured` (kept even when the variant fails afterwards).
fn run_variant<T: TxnWorkload>(
    t: &T,
    v: usize,
    variant: &Variant,
    host: &mut dyn Host,
    measured: &mut Option<T::Run>,
) -> Result<()> {
    let head = host.head().clone();
    let seed = host.common().seed;
    let (w, loaded, rows_before) = prepare(t, v, host, &head, seed)?;
    crate::progress::step_named(&variant.run_step);
    t.announce(&w, &head);
    let s = host.session()?;
    let win = T::SERVER_COST.then(|| Window::open(s.target, s.conn));
    let mut growth: Vec<GrowthPoint> = Vec::new();
    let base = rows_before.unwrap_or(0);
    let step = variant.step.as_str();
    let mut phase = host.measure(step, &w, T::WATCH_NODES, &mut |l, d, cum| {
        // A short last line (the tail after the last full interval) says little.
        if l.i_sec >= head.interval * 0.5 {
            growth.push(GrowthPoint {
                t_sec: l.t_sec,
                rows: (base + cum.inserted).saturating_sub(cum.deleted),
                rows_per_sec: d.totals.txn.inserted as f64 / l.i_sec,
            });
        }
    })?;
    let s = host.session()?;
    let cost = win.map(|win| win.close(s.target, s.conn));
    let (mut nodes, mut warnings, mut stopped_for_loss) = (Vec::new(), Vec::new(), None);
    if let Some(wn) = phase.watched.take() {
        crate::out!("{}", wn.lines);
        stopped_for_loss = wn.stop_error;
        if let Some(l) = wn.loss_warning {
            crate::outln!("WARNING: {l}");
            warnings.push(l);
        }
        nodes = wn.nodes;
    }
    let mut checks = vec![phase.interval_sums()];
    let mut errors = std::mem::take(&mut phase.m.errors).into_iter();
    let mut first_error = move || {
        errors
            .next()
            .map(|(who, e)| e.context(format!("{step} {who}")))
    };
    if !T::KEEPS_FAILED_PHASE {
        if let Some(e) = first_error() {
            return Err(e);
        }
    }
    let t_totals = phase.m.totals.txn;
    let rows_after = match rows_before {
        Some(before) => {
            let after = count_all(s.conn, &w.tables())?;
            checks.push(rows_check(
                before,
                after,
                &t_totals,
                (phase.in_doubt, t.rows_per_txn()),
                T::REMOVED,
            ));
            Some(after)
        }
        None => None,
    };
    let run = t.figures(Figures {
        variant: v,
        w: &w,
        head: &head,
        seed,
        loaded,
        m: phase.m,
        cpu: phase.cpu,
        reconnects: phase.reconnects,
        in_doubt: phase.in_doubt,
        nodes,
        warnings,
        growth,
        cost,
        rows_before,
        rows_after,
        checks,
        session: s,
    })?;
    crate::out!("{}", run.summary());
    for c in run.checks().iter().filter(|c| !c.ok) {
        crate::outln!("CHECK FAILED: {}: {}", c.name, c.detail);
    }
    *measured = Some(run);
    if let Some(e) = stopped_for_loss {
        bail!("{e}");
    }
    first_error().map_or(Ok(()), Err)
}

/// Variant `v`'s workload, loaded (the results so far written), and the rows in its tables
/// (`None`: the DBMS stores no rows).
fn prepare<T: TxnWorkload>(
    t: &T,
    v: usize,
    host: &mut dyn Host,
    head: &TxnHead,
    seed: u64,
) -> Result<(T::W, Loaded, Option<u64>)> {
    let mut s = host.session()?;
    let w = t.workload(v, s.target, seed)?;
    let loaded = t.load(v, &w, &mut s, head)?;
    s.store.write_run(s.result)?;
    let rows_before = if s.target.stores_rows() {
        Some(count_all(s.conn, &w.tables())?)
    } else {
        None
    };
    Ok((w, loaded, rows_before))
}

/// The rows in the tables are the rows before + inserted - deleted, within what the
/// transactions in doubt (`in_doubt.0`, each changing at most `in_doubt.1` rows) may have
/// changed.
fn rows_check(
    before: u64,
    after: u64,
    t: &crate::measure::meter::TxnTotals,
    (in_doubt, per_txn): (u64, u64),
    removed: &str,
) -> Check {
    let want = (before + t.inserted).saturating_sub(t.deleted);
    let slack = in_doubt * per_txn;
    Check {
        name: "rows".into(),
        ok: after.abs_diff(want) <= slack,
        detail: format!(
            "{after} rows after; {before} before + {} inserted - {} {removed} = {want}{}",
            t.inserted,
            t.deleted,
            if in_doubt > 0 && per_txn > 0 {
                format!(
                    "; {in_doubt} transactions in doubt (in flight when their node died, each \
                     changing at most {per_txn} rows): within {slack} of it"
                )
            } else {
                String::new()
            }
        ),
    }
}

/// The standard record of a transaction run ([`OltpRun`]): what a workload with no figures of
/// its own keeps, and the OLTP mixes' record.
pub mod standard {
    use super::*;

    /// The record of `f`'s phase for the workload `name`.
    pub fn figures<W>(name: &str, f: Figures<'_, W>) -> OltpRun {
        let m = f.m;
        let t = m.totals.txn;
        let secs = m.seconds;
        let per_s = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
        let (latency, p95_us) = match &m.txn_hist {
            Some(h) => (
                summarize(&h.latency),
                (!h.latency.is_empty()).then(|| h.latency.value_at_quantile(0.95)),
            ),
            None => (summarize(&crate::measure::histogram::new_hist()), None),
        };
        let cpu = f.cpu;
        OltpRun {
            workload: name.into(),
            options: None,
            threads: f.head.threads as usize,
            rate: f.head.rate,
            load: Some(OltpLoad {
                seconds: f.loaded.seconds,
                rows: f.loaded.rows,
                threads: f.loaded.threads,
                reused: f.loaded.reused,
            }),
            seconds: secs,
            totals: t,
            tps: per_s(t.txns),
            qps: per_s(t.statements()),
            reads_per_sec: per_s(t.reads),
            writes_per_sec: per_s(t.writes),
            other_per_sec: per_s(t.other),
            errors_per_sec: per_s(t.errors),
            latency,
            p95_us,
            errors_by_code: m.error_codes,
            intervals: m.lines,
            stalled_lines: m.stalled_lines,
            client: Some(cpu),
            client_cpu_us_per_txn: (t.txns > 0).then(|| cpu.cpu_us() as f64 / t.txns as f64),
            rows_before: f.rows_before,
            rows_after: f.rows_after,
            checks: f.checks,
            status: "running".into(),
            error: None,
            nodes: f.nodes,
            reconnects: f.reconnects,
            in_doubt: f.in_doubt,
            warnings: f.warnings,
        }
    }

    /// The record of a run that failed before its figures: what it was asked to run.
    pub fn unmeasured(name: &str, head: &TxnHead) -> OltpRun {
        OltpRun {
            workload: name.into(),
            threads: head.threads as usize,
            rate: head.rate,
            status: "running".into(),
            ..Default::default()
        }
    }

    /// The head's keys of `run.json`'s config besides the shared ones (the spacing of the
    /// starts, the interval, the retries, the stall timeout).
    pub fn head_config(head: &TxnHead) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("arrivals".into(), json!(head.arrivals));
        m.insert("interval_secs".into(), json!(head.interval));
        m.insert("max_retries".into(), json!(head.max_retries));
        m.insert("stall_timeout_secs".into(), json!(head.stall_timeout));
        m
    }
}

impl Record for OltpRun {
    const TABLE: &'static str = "oltp";
    const WHAT: &'static str = "Measured runs of a transaction workload (`ixbench oltp`, \
                                `ixbench run --workload kv`), in order.";

    fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// The summary as sysbench prints it after a run, with p50 and p99 besides its 95th
    /// percentile, retries, and the client's CPU per transaction.
    fn summary(&self) -> String {
        summary_text(self)
    }

    fn keep(&mut self, end: &End, result: &mut RunResult) -> Result<()> {
        self.status = match &end.error {
            _ if end.interrupted => "interrupted".into(),
            None => "ok".into(),
            Some(e) => {
                self.error = Some(e.clone());
                "failed".into()
            }
        };
        result.workloads.push(Self::TABLE, self)
    }

    fn table(runs: &[Self]) -> Table {
        summary_table(runs)
    }
}

/// The summary as sysbench prints it after a run, with p50 and p99 besides its 95th
/// percentile, retries, and the client's CPU per transaction.
pub fn summary_text(r: &OltpRun) -> String {
    let t = &r.totals;
    let ms = |v: Option<u64>| fmt::or_unknown(v, fmt::ms2);
    let some = |v: u64| (r.latency.count > 0).then_some(v);
    let mut s = String::new();
    s.push_str("\nSQL statistics:\n    queries performed:\n");
    s.push_str(&format!(
        "        read:                            {}\n",
        t.reads
    ));
    s.push_str(&format!(
        "        write:                           {}\n",
        t.writes
    ));
    s.push_str(&format!(
        "        other:                           {}\n",
        t.other
    ));
    s.push_str(&format!(
        "        total:                           {}\n",
        t.statements()
    ));
    s.push_str(&format!(
        "    transactions:                        {:<8} ({:.2} per sec.)\n",
        t.txns, r.tps
    ));
    s.push_str(&format!(
        "    queries:                             {:<8} ({:.2} per sec.)\n",
        t.statements(),
        r.qps
    ));
    s.push_str(&format!(
        "    errors:                              {:<8} ({:.2} per sec.){}\n",
        t.errors,
        r.errors_per_sec,
        if r.errors_by_code.is_empty() {
            String::new()
        } else {
            format!(
                " by code: {}",
                r.errors_by_code
                    .iter()
                    .map(|(c, n)| format!("{c} x{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    ));
    s.push_str(&format!(
        "    retries:                             {}\n",
        t.retries
    ));
    if r.reconnects > 0 {
        s.push_str(&format!(
            "    reconnects (a node died):            {} ({} transactions in doubt, run again)\n",
            r.reconnects, r.in_doubt
        ));
    }
    if t.never_started > 0 {
        s.push_str(&format!(
            "    never started (behind the rate):     {}\n",
            t.never_started
        ));
    }
    s.push_str("\nGeneral statistics:\n");
    s.push_str(&format!(
        "    total time:                          {:.4}s\n",
        r.seconds
    ));
    s.push_str(&format!(
        "    total number of events:              {}\n",
        t.txns
    ));
    s.push_str("\nLatency (ms):\n");
    s.push_str(&format!(
        "         p50:                            {}\n",
        ms(some(r.latency.p50_us))
    ));
    s.push_str(&format!(
        "         avg:                            {}\n",
        if r.latency.count > 0 {
            format!("{:.2}", r.latency.mean_us / 1000.0)
        } else {
            "unknown".into()
        }
    ));
    s.push_str(&format!(
        "         95th percentile:                {}\n",
        ms(r.p95_us)
    ));
    s.push_str(&format!(
        "         p99:                            {}\n",
        ms(some(r.latency.p99_us))
    ));
    s.push_str(&format!(
        "         max:                            {}\n",
        ms(some(r.latency.max_us))
    ));
    s.push_str(&format!(
        "\nClient CPU: {} us per transaction\n",
        r.client_cpu_us_per_txn
            .map(|v| format!("{v:.1}"))
            .unwrap_or_else(|| "unknown".into())
    ));
    s
}

/// The runs as a table, one row each (`oltp.csv`, `oltp.md`).
fn summary_table(runs: &[OltpRun]) -> Table {
    let ms = |v: Option<u64>| fmt::or_unknown(v, fmt::ms2);
    let mut t = Table::new([
        "workload",
        "threads",
        "seconds",
        "transactions",
        "tps",
        "qps",
        "reads/s",
        "writes/s",
        "other/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "errors",
        "retries",
        "client us/txn",
    ]);
    for r in runs {
        let has = r.latency.count > 0;
        t.push(vec![
            r.workload.clone(),
            r.threads.to_string(),
            format!("{:.1}", r.seconds),
            r.totals.txns.to_string(),
            format!("{:.2}", r.tps),
            format!("{:.2}", r.qps),
            format!("{:.2}", r.reads_per_sec),
            format!("{:.2}", r.writes_per_sec),
            format!("{:.2}", r.other_per_sec),
            ms(has.then_some(r.latency.p50_us)),
            ms(r.p95_us),
            ms(has.then_some(r.latency.p99_us)),
            ms(has.then_some(r.latency.max_us)),
            r.totals.errors.to_string(),
            r.totals.retries.to_string(),
            r.client_cpu_us_per_txn
                .map(|v| format!("{v:.1}"))
                .unwrap_or_else(|| "unknown".into()),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::meter::TxnTotals;

    /// Exact without transactions in doubt; within their rows with them; the word for the
    /// deleted rows is the workload's.
    #[test]
    fn the_rows_check_allows_only_what_transactions_in_doubt_changed() {
        let t = TxnTotals {
            inserted: 30,
            deleted: 10,
            ..Default::default()
        };
        let c = rows_check(100, 120, &t, (0, 4), "deleted");
        assert!(c.ok, "{}", c.detail);
        assert_eq!(
            c.detail,
            "120 rows after; 100 before + 30 inserted - 10 deleted = 120"
        );
        assert!(!rows_check(100, 121, &t, (0, 4), "deleted").ok);
        let c = rows_check(100, 127, &t, (2, 4), "deleted");
        assert!(
            c.ok && c.detail.contains("2 transactions in doubt"),
            "{}",
            c.detail
        );
        assert!(!rows_check(100, 129, &t, (2, 4), "deleted").ok);
        // A workload whose transactions are not in doubt (no rows per transaction) is exact.
        let c = rows_check(100, 121, &t, (2, 0), "removed by retention");
        assert!(
            !c.ok && c.detail.ends_with("10 removed by retention = 120"),
            "{}",
            c.detail
        );
    }
}
