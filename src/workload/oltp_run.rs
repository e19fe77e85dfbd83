//! The OLTP mixes as a transaction workload of the one runner ([`crate::workload::txn_runner`]),
//! for `ixbench oltp` and `ixbench run --workload oltp_*` alike (the registry's
//! [`crate::workload::runner::Runner::Own`] of each mix): what differs from any transaction
//! workload is only declared here: the mixes' option checks and config, the load (like
//! `sysbench prepare`) or the reuse of earlier tables, and the rows one transaction may change.
//! The runner runs the transactions for a time (closed loop, or open loop at a rate), prints a
//! line per interval and sysbench's summary, and keeps `run.json` and `intervals.ndjson`.

use anyhow::{bail, Result};
use clap::{Args, FromArgMatches};
use serde_json::{json, Map, Value};

use crate::dbms::{self, Dbms};
use crate::measure::clock::Stopwatch;
use crate::results::oltp::{OltpConfig, OltpRun};
use crate::workload::oltp::{self as oltp, Mix, Oltp, OltpOptions};
use crate::workload::registry::Command;
use crate::workload::runner::{Host, Open, RunIn, TxnHead};
use crate::workload::txn_runner::{self, standard, Figures, Loaded, TxnWorkload, Variant};

/// The OLTP mixes in the workload registry, one entry each (`ixbench oltp --workload MIX` is
/// `ixbench run --workload MIX`).
pub fn entries() -> Vec<crate::workload::registry::Entry> {
    use crate::workload::registry::{Entry, Runner, H_TXN};
    Mix::ALL
        .into_iter()
        .map(|m| Entry {
            name: m.name(),
            rank: oltp::RANK,
            aliases: &[],
            about: match m {
                Mix::OltpReadWrite => {
                    "sysbench's oltp_read_write: point and range selects, updates, delete+insert"
                }
                Mix::OltpReadOnly => "sysbench's oltp_read_only: point and range selects",
                Mix::OltpWriteOnly => "sysbench's oltp_write_only: updates, delete+insert",
                Mix::OltpInsert => "sysbench's oltp_insert: one INSERT, autocommit",
                Mix::OltpUpdateIndex => "sysbench's oltp_update_index: one UPDATE of k, autocommit",
                Mix::OltpUpdateNonIndex => {
                    "sysbench's oltp_update_non_index: one UPDATE of c, autocommit"
                }
                Mix::OltpPointSelect => {
                    "sysbench's oltp_point_select: one SELECT by id, autocommit"
                }
            },
            runner: Runner::Own(run_entry),
            headings: &[H_TXN, oltp::HEADING],
            also_takes: &[],
            presets: oltp::presets,
            notes: |_| Vec::new(),
            ddl_target: crate::workload::registry::DdlTarget {
                table: "sbtest1",
                column: "c",
                pk: "id",
            },
            ddl_tables: |l| (1..=l.tables).map(oltp::table_name).collect(),
            ddl_workload: |name, l, dbms| {
                let Some(mix) = Mix::parse(name) else {
                    bail!("{name} is not an OLTP mix");
                };
                let mut cfg = OltpConfig::new(mix, l.tables, l.table_size);
                cfg.rand_type = l.rand_type;
                Ok(Box::new(Oltp::new(cfg, dbms, l.seed)?))
            },
            indexes: || vec![(oltp::index_name(1), vec!["k".to_string()])],
            lab: None,
        })
        .collect()
}

/// What the runner needs besides the host: the mix and the OLTP options.
pub struct OltpInput<'a> {
    /// The transaction mix.
    pub mix: Mix,
    /// The mixes' own options.
    pub opts: &'a OltpOptions,
}

impl OltpInput<'_> {
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

impl TxnWorkload for OltpInput<'_> {
    type W = Oltp;
    type Run = OltpRun;
    const UNIT: &'static str = "transactions";
    const WATCH_NODES: bool = true;

    fn check(&self, host: &dyn Host) -> Result<Vec<String>> {
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
        Ok((1..=self.opts.tables).map(oltp::table_name).collect())
    }

    fn config(&self, host: &dyn Host) -> Result<Map<String, Value>> {
        if self.opts.reuse {
            dbms::require_existing_database(&host.common().target, "--reuse")?;
        }
        let mut m = standard::head_config(host.head());
        m.insert("workload".into(), json!(self.mix.name()));
        m.insert("options".into(), json!(self.config()));
        m.insert("reuse".into(), json!(self.opts.reuse));
        Ok(m)
    }

    fn variants(&self) -> Vec<Variant> {
        let name = self.mix.name().to_string();
        vec![Variant {
            load_step: (!self.opts.reuse).then(|| "load".to_string()),
            run_step: name.clone(),
            step: name,
        }]
    }

    fn workload(&self, _v: usize, target: &dyn Dbms, seed: u64) -> Result<Oltp> {
        Oltp::new(self.config(), target, seed)
    }

    fn load(&self, _v: usize, w: &Oltp, s: &mut Open<'_>, head: &TxnHead) -> Result<Loaded> {
        let cfg = w.config();
        if self.opts.reuse {
            let t0 = Stopwatch::start();
            let rows = if s.target.stores_rows() {
                w.check_reuse(s.conn)?
            } else {
                Vec::new()
            };
            crate::outln!(
                "reusing {} table(s) with {} rows",
                cfg.tables,
                rows.iter().sum::<u64>()
            );
            return Ok(Loaded {
                seconds: t0.elapsed_secs(),
                rows: rows.iter().sum(),
                threads: 1,
                reused: true,
            });
        }
        let threads = self
            .opts
            .load_threads
            .unwrap_or(head.threads as usize)
            .clamp(1, cfg.tables as usize);
        crate::outln!(
            "loading {} table(s) of {} rows with {threads} connection(s)...",
            cfg.tables,
            cfg.table_size
        );
        let secs = txn_runner::fill(w, s.target, threads, "load")?;
        let rows = u64::from(cfg.tables) * u64::from(cfg.table_size);
        crate::outln!(
            "loaded {rows} rows in {secs:.1} s ({:.0} rows/s), with index k on each table",
            rows as f64 / secs.max(1e-9)
        );
        Ok(Loaded {
            seconds: secs,
            rows,
            threads,
            reused: false,
        })
    }

    fn rows_per_txn(&self) -> u64 {
        u64::from(self.config().statements_per_txn().1)
    }

    fn figures(&self, f: Figures<'_, Oltp>) -> Result<OltpRun> {
        let mut r = standard::figures(self.mix.name(), f);
        r.options = Some(self.config());
        Ok(r)
    }

    fn unmeasured(&self, head: &TxnHead) -> Option<OltpRun> {
        let mut r = standard::unmeasured(self.mix.name(), head);
        r.options = Some(self.config());
        Some(r)
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

/// `ixbench oltp`'s own options listed before the transaction head's (its options under its
/// heading are the mixes' [`OltpOptions`]).
#[derive(Debug, Clone, Args)]
pub struct OltpCommand {
    /// Transaction type, as sysbench names it.
    #[arg(long, value_enum, default_value_t = Mix::OltpReadWrite)]
    pub workload: Mix,

    /// Clients (connections), as sysbench's --threads.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: u64,
}

/// `ixbench oltp`: the OLTP mixes under their old command, with sysbench's options
/// (`--workload MIX`, `--threads`, ...); it runs the mix as `ixbench run --workload MIX` does.
pub fn command() -> Command {
    Command {
        name: "oltp",
        presets: oltp::presets,
        args: OltpCommand::augment_args,
        options: OltpOptions::augment_args,
        threads: |m| OltpCommand::from_arg_matches(m).map_or(1, |a| a.threads),
        run: |m, host| {
            let opts = OltpOptions::from_arg_matches(m)?;
            let mix = OltpCommand::from_arg_matches(m)?.workload;
            run(&OltpInput { mix, opts: &opts }, host)
        },
    }
}

/// Run an OLTP mix. Returns the exit status (0, checks failed, or the interrupt's); errors
/// are returned for the caller to print.
pub fn run(args: &OltpInput, host: &mut dyn Host) -> Result<u8> {
    txn_runner::run(args, host)
}
