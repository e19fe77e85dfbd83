//! The OLTP mixes' runner, for `ixbench oltp` and `ixbench run --workload oltp_*` alike (the
//! registry's [`crate::workload::runner::Runner::Own`] of each mix): load the tables (like
//! `sysbench prepare`) or reuse them, run the transactions for a time (closed loop, or open
//! loop at a rate) on the shared transaction phase (the [`Host`]'s), print a line per interval
//! and a summary as sysbench does, and keep `run.json` and `intervals.ndjson`.

use anyhow::{bail, Result};
use serde_json::json;

use crate::dbms::{self, Conn, Dbms};
use crate::format as fmt;
use crate::measure::clock::Stopwatch;
use crate::measure::histogram::summarize;
use crate::results::oltp::{OltpLoad, OltpRun};
use crate::results::Check;
use crate::workload::oltp::{self as oltp, Mix, Oltp, OltpConfig, OltpOptions};
use crate::workload::runner::{Host, RunIn};
use crate::workload::Workload;

/// What the runner needs besides the host: the mix and the OLTP options.
pub struct OltpInput<'a> {
    /// The transaction mix.
    pub mix: Mix,
    /// The mixes' own options.
    pub opts: &'a OltpOptions,
}

impl OltpInput<'_> {
    fn check(&self, host: &dyn Host) -> Result<()> {
        host.check_head("transactions")?;
        if self.opts.load_threads == Some(0) {
            bail!("--load-threads must be at least 1");
        }
        let who = self.who(host);
        let common = host.common();
        if common.table_prefix != "pi" {
            bail!(
                "--table-prefix does not apply to {who}: its tables are sbtest1..N, as sysbench's"
            );
        }
        if common.data_length != "10..20" {
            bail!("--data-length does not apply to {who}: c and pad have sysbench's fixed shapes");
        }
        self.config().validate()?;
        let tables: Vec<String> = (1..=self.opts.tables).map(oltp::table_name).collect();
        host.check_common(&tables)
    }

    fn who(&self, host: &dyn Host) -> String {
        if host.command() == "oltp" {
            "ixbench oltp".into()
        } else {
            format!("--workload {}", self.mix.name())
        }
    }

    fn config(&self) -> OltpConfig {
        self.opts.config(self.mix)
    }
}

/// The registry's runner of the OLTP mixes (`ixbench run --workload oltp_*`).
pub fn run_entry(r: &RunIn, host: &mut dyn Host) -> Result<u8> {
    let Some(mix) = Mix::parse(r.name) else {
        bail!("{} is not an OLTP mix", r.name);
    };
    run(
        &OltpInput {
            mix,
            opts: &r.opts.oltp,
        },
        host,
    )
}

/// Run an OLTP mix. Returns the exit status (0, checks failed, or the interrupt's); errors
/// are returned for the caller to print.
pub fn run(args: &OltpInput, host: &mut dyn Host) -> Result<u8> {
    args.check(host)?;
    let cfg = args.config();
    let head = host.head().clone();
    let common = host.common().clone();
    if args.opts.reuse {
        dbms::require_existing_database(&common.target, "--reuse")?;
    }
    let config = json!({
        "command": host.command(),
        "target": dbms::redact_url(&common.target),
        "engine": common.engine,
        "workload": cfg.mix.name(),
        "options": cfg,
        "threads": head.threads,
        "time_secs": head.time,
        "rate": head.rate,
        "arrivals": head.arrivals,
        "reuse": args.opts.reuse,
        "seed": common.seed,
        "interval_secs": head.interval,
        "max_retries": head.max_retries,
        "stall_timeout_secs": head.stall_timeout,
    });
    {
        use crate::progress::{start, Planned};
        let mut planned = Vec::new();
        if !args.opts.reuse {
            planned.push(("load".to_string(), Planned::Unknown));
        }
        planned.push((cfg.mix.name().to_string(), Planned::Seconds(head.time)));
        start(planned);
    }
    host.open(config)?;
    let mut result = OltpRun {
        workload: cfg.mix.name().into(),
        options: Some(cfg.clone()),
        threads: head.threads as usize,
        rate: head.rate,
        status: "running".into(),
        ..Default::default()
    };
    let outcome = execute(args, cfg, host, &mut result);
    result.status = match &outcome {
        _ if host.interrupt().load(std::sync::atomic::Ordering::SeqCst) => "interrupted".into(),
        Ok(()) => "ok".into(),
        Err(e) => {
            result.error = Some(format!("{e:#}"));
            "failed".into()
        }
    };
    let checks_ok = result.checks_ok();
    let table = summary_table(&result);
    host.session()?.result.oltp.push(result);
    host.close(outcome, checks_ok, vec![("oltp", table)])
}

fn execute(
    args: &OltpInput,
    cfg: OltpConfig,
    host: &mut dyn Host,
    result: &mut OltpRun,
) -> Result<()> {
    let head = host.head().clone();
    let seed = host.common().seed;
    let s = host.session()?;
    let target: &dyn Dbms = s.target;
    let w = Oltp::new(cfg.clone(), target, seed)?;
    let stores = target.stores_rows();
    let t0 = Stopwatch::start();
    if args.opts.reuse {
        let rows = if stores {
            w.check_reuse(s.conn)?
        } else {
            Vec::new()
        };
        crate::outln!(
            "reusing {} table(s) with {} rows",
            cfg.tables,
            rows.iter().sum::<u64>()
        );
        result.load = Some(OltpLoad {
            seconds: t0.elapsed_secs(),
            rows: rows.iter().sum(),
            threads: 1,
            reused: true,
        });
    } else {
        let threads = args
            .opts
            .load_threads
            .unwrap_or(head.threads as usize)
            .clamp(1, cfg.tables as usize);
        crate::outln!(
            "loading {} table(s) of {} rows with {threads} connection(s)...",
            cfg.tables,
            cfg.table_size
        );
        crate::progress::step_named("load");
        let wait = crate::progress::waiting("the load");
        w.load(target, threads)?;
        drop(wait);
        let secs = t0.elapsed_secs();
        let rows = u64::from(cfg.tables) * u64::from(cfg.table_size);
        crate::outln!(
            "loaded {rows} rows in {secs:.1} s ({:.0} rows/s), with index k on each table",
            rows as f64 / secs.max(1e-9)
        );
        result.load = Some(OltpLoad {
            seconds: secs,
            rows,
            threads,
            reused: false,
        });
    }
    s.store.write_run(s.result)?;
    let rows_before = if stores {
        Some(count_all(s.conn, &w.tables())?)
    } else {
        None
    };
    result.rows_before = rows_before;

    crate::progress::step_named(cfg.mix.name());
    crate::outln!(
        "\nrunning {} with {} thread(s) for {} s{}",
        cfg.mix.name(),
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
    let step = cfg.mix.name();
    // On a Galera cluster every node is watched: per-node figures, a node that leaves.
    let phase = host.measure(step, &w, true, &mut |_, _, _| {})?;
    let cpu = phase.cpu;
    result.reconnects = phase.reconnects;
    result.in_doubt = phase.in_doubt;
    let mut stopped_for_loss = None;
    if let Some(w) = &phase.watched {
        crate::out!("{}", w.lines);
        stopped_for_loss = w.stop_error.clone();
        if let Some(l) = &w.loss_warning {
            crate::outln!("WARNING: {l}");
            result.warnings.push(l.clone());
        }
    }
    let interval_sums = phase.interval_sums();
    if let Some(w) = phase.watched {
        result.nodes = w.nodes;
    }
    let m = phase.m;
    let t = m.totals.txn;
    let secs = m.seconds;
    let per_s = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
    result.seconds = secs;
    result.totals = t;
    result.tps = per_s(t.txns);
    result.qps = per_s(t.statements());
    result.reads_per_sec = per_s(t.reads);
    result.writes_per_sec = per_s(t.writes);
    result.other_per_sec = per_s(t.other);
    result.errors_per_sec = per_s(t.errors);
    if let Some(h) = &m.txn_hist {
        result.latency = summarize(&h.latency);
        result.p95_us = (!h.latency.is_empty()).then(|| h.latency.value_at_quantile(0.95));
    } else {
        result.latency = summarize(&crate::measure::histogram::new_hist());
    }
    result.errors_by_code = m.error_codes.clone();
    result.intervals = m.lines;
    result.stalled_lines = m.stalled_lines;
    result.client = Some(cpu);
    result.client_cpu_us_per_txn = (t.txns > 0).then(|| cpu.cpu_us() as f64 / t.txns as f64);

    // Checks: the lines add up to the totals; the rows are what the inserts and deletes say.
    result.checks.push(interval_sums);
    if let Some(before) = rows_before {
        let after = count_all(host.session()?.conn, &w.tables())?;
        result.rows_after = Some(after);
        let want = (before + t.inserted).saturating_sub(t.deleted);
        // Transactions in flight when their node died may have committed there: each changes
        // the row count by at most its write statements (one row each).
        let slack = result.in_doubt * u64::from(cfg.statements_per_txn().1);
        result.checks.push(Check {
            name: "rows".into(),
            ok: after.abs_diff(want) <= slack,
            detail: format!(
                "{after} rows after; {before} before + {} inserted - {} deleted = {want}{}",
                t.inserted,
                t.deleted,
                if result.in_doubt > 0 {
                    format!(
                        "; {} transactions in doubt (in flight when their node died, each \
                         changing at most {} rows): within {slack} of it",
                        result.in_doubt,
                        cfg.statements_per_txn().1
                    )
                } else {
                    String::new()
                }
            ),
        });
    }
    crate::out!("{}", summary_text(result));
    for c in result.checks.iter().filter(|c| !c.ok) {
        crate::outln!("CHECK FAILED: {}: {}", c.name, c.detail);
    }
    if let Some(e) = stopped_for_loss {
        bail!("{e}");
    }
    if let Some((who, e)) = m.errors.into_iter().next() {
        return Err(e.context(format!("{step} {who}")));
    }
    Ok(())
}

/// Rows in all `tables`.
fn count_all(conn: &mut dyn Conn, tables: &[String]) -> Result<u64> {
    let mut n = 0;
    for t in tables {
        n += oltp::count_rows(conn, t)?;
    }
    Ok(n)
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

/// The run as one table row (for oltp.csv / oltp.md).
fn summary_table(r: &OltpRun) -> crate::export::Table {
    let ms = |v: Option<u64>| fmt::or_unknown(v, fmt::ms2);
    let has = r.latency.count > 0;
    let mut t = crate::export::Table::new([
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
    t
}
