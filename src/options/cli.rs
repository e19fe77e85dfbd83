//! The options every command that runs against a database shares ([`CommonArgs`], [`OnError`]),
//! and the bounds and parsers of option values. Each command's own options are in its file
//! under [`crate::cmd`].

use std::path::PathBuf;

use clap::Args;

use super::target::{ClusterShape, OnNodeLoss, Target};

/// The bounds and parsers the workloads' options share (`--rows`, `--rates`,
/// `--query-seconds`, `--clients`; seconds in a range), below the workloads.
pub use crate::workload::runner::{
    query_seconds, seconds_in, MAX_CLIENTS, MAX_QUERY_SECONDS, MAX_RATE, MAX_ROWS,
};
/// Shortest and longest `--interval`, seconds.
pub const MIN_INTERVAL: f64 = crate::measure::interval::MIN_INTERVAL_SECS;
/// Longest `--interval`, seconds.
pub const MAX_INTERVAL: f64 = 3600.0;
/// Largest `--max-retries`.
pub const MAX_RETRIES: u32 = 1_000_000;

pub fn interval_seconds(s: &str) -> Result<f64, String> {
    seconds_in(s, MIN_INTERVAL, MAX_INTERVAL)
}

/// Options shared by the commands that run against a database.
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Database: `sqlite` (a new file in the results directory), `sqlite:PATH`, `null` (no
    /// database: measures the client's own ceiling), `postgres://USER[:PASS]@HOST:PORT/DB`,
    /// `mysql://USER[:PASS]@HOST:PORT/DB`, or a bare `postgres` / `mariadb` (a throwaway local
    /// server started from the installed binaries and stopped at the end).
    /// `galera`: a throwaway MariaDB Galera cluster of `--nodes` nodes, started for the command
    /// and stopped at the end. `pg-shards`, `spider` (`ixbench run` only): a throwaway
    /// PostgreSQL coordinator (postgres_fdw) or MariaDB Spider head over `--nodes` shards
    /// (default 2), the benchmark's tables sharded by hash of their primary key.
    #[arg(long, default_value = "sqlite", value_parser = target_arg)]
    pub target: String,

    /// Storage engine of the benchmark tables on MySQL/MariaDB: innodb or rocksdb (MyRocks).
    #[arg(long, value_parser = ["innodb", "rocksdb"])]
    pub engine: Option<String>,

    /// Results directory (must not exist). Default: `./ixbench-results/<timestamp>`.
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// SQLite PRAGMA as NAME=VALUE, applied after the defaults (repeatable).
    #[arg(long = "sqlite-pragma", value_name = "NAME=VALUE")]
    pub sqlite_pragma: Vec<String>,

    /// Table names are PREFIX1, PREFIX2, ...
    #[arg(long, default_value = "pi")]
    pub table_prefix: String,

    /// Seed of the row and query generators: the same seed gives the same rows.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Length range of the `data` column, MIN..MAX bytes.
    #[arg(long, default_value = "10..20")]
    pub data_length: String,

    /// Setting of the throwaway server started for `--target postgres|mariadb`, NAME=VALUE
    /// (PostgreSQL `-c`, MariaDB `--NAME=VALUE`; repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,

    /// Remove the throwaway server's data directory at the end: the default now (kept for
    /// command lines that say it).
    #[arg(long)]
    pub rm: bool,

    /// Keep the throwaway server's data directory at the end (in the results directory, or
    /// under the system temp dir). Default: removed once the server has stopped.
    #[arg(long, conflicts_with = "rm")]
    pub keep_data: bool,

    /// The `bin/` directory of the PostgreSQL or MariaDB install the throwaway server of
    /// `--target postgres|mariadb` is started from (any build, not only Debian's); recorded in
    /// the results with the version the server reports.
    #[arg(long, value_name = "DIR")]
    pub server_bin: Option<PathBuf>,

    /// Start the throwaway server or cluster (`--target postgres|mariadb|galera|spider|
    /// pg-shards`) taking TCP connections over TLS only, with DIR/server.crt and
    /// DIR/server.key (the certificate must name 127.0.0.1); every connection ixbench makes,
    /// and a cluster's nodes make to each other (postgres_fdw, Spider), verifies it against
    /// DIR/ca.crt.
    #[arg(long, value_name = "DIR")]
    pub server_tls: Option<PathBuf>,

    /// Seconds connecting to a server (TCP and handshake) may take before ixbench gives up
    /// with an error (a server that accepts and never answers would otherwise hang the run).
    #[arg(long, default_value_t = 10.0, value_parser = parse_connect_timeout)]
    pub connect_timeout: f64,

    /// Let ixbench change the global state of a server it did not start: maint's dirty-page
    /// flush (InnoDB `innodb_max_dirty_pages_pct`), MyRocks memtable flushes and compactions,
    /// PostgreSQL `CHECKPOINT` (each set back after use). Always allowed on a throwaway server
    /// (`--target postgres|mariadb`).
    #[arg(long)]
    pub allow_server_changes: bool,

    /// Before each measured step or index build, wait at most this many seconds for the
    /// server to finish its background work (compactions, flushes, purge, autovacuum,
    /// checkpoints); 0 does not wait.
    #[arg(long, default_value_t = 60.0)]
    pub quiet_timeout: f64,

    /// Run length preset: smoke (every step in seconds), small, default, large. Sets the sizes
    /// and times of the command (rows, rows2, query seconds, table size, time...); a flag given
    /// on the command line wins. Recorded in the results.
    #[arg(long, value_enum)]
    pub size: Option<SizePreset>,
    /// Nodes of the throwaway Galera cluster of `--target galera` (default 3), or shards of
    /// `--target pg-shards|spider` (default 2, at most 8).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=9))]
    pub nodes: Option<u64>,

    /// Galera: which nodes the workload's connections go to: `1` (node1 only, the default),
    /// `all` (spread over every node, round robin), or a list such as `1,3`.
    #[arg(long, default_value = "1")]
    pub write_nodes: String,

    /// Where the server's CPU, I/O and memory figures come from: `auto` (its processes through
    /// /proc when they are on this machine, else what the DBMS itself reports), `proc`, `dbms`
    /// (the DBMS's statistics views and status counters over SQL, as for a managed or remote
    /// server), `both` (side by side), `none` (no server figures, no queries for them).
    #[arg(
        long,
        value_enum,
        default_value = "auto",
        alias = "server-metrics",
        value_name = "FROM"
    )]
    pub server_figures: crate::measure::server_figures::ServerFigures,

    /// Galera: when a node leaves the cluster during a step, `continue` the step against the
    /// rest (the results say which node and when) or `stop` the run with an error naming it.
    #[arg(long, value_enum, default_value = "continue")]
    pub on_node_loss: OnNodeLoss,

    /// Serve the run's live figures as Prometheus text at http://ADDR/metrics while the
    /// command runs (counts, rates, latency, backlog, the step in progress, client CPU).
    /// `:9464` (or `9464`) listens on 127.0.0.1 only; another interface only when written out
    /// (`0.0.0.0:9464`). Port 0 takes a free port, printed at the start.
    #[arg(long, value_name = "ADDR", value_parser = crate::measure::live::parse_listen)]
    pub metrics_listen: Option<std::net::SocketAddr>,

    /// `--target` parsed, once asked ([`CommonArgs::parsed_target`]).
    #[arg(skip)]
    parsed_target: std::sync::OnceLock<Target>,

    /// The cluster options checked against it, once asked ([`CommonArgs::cluster_shape`]).
    #[arg(skip)]
    parsed_shape: std::sync::OnceLock<Option<ClusterShape>>,
}

impl CommonArgs {
    /// `--target` as one typed value (see [`super::target`]): parsed on the first call, then
    /// kept, so the rest of the command receives the same value instead of reading the text
    /// again.
    pub fn parsed_target(&self) -> anyhow::Result<&Target> {
        if let Some(t) = self.parsed_target.get() {
            return Ok(t);
        }
        let t = Target::parse(&self.target)?;
        Ok(self.parsed_target.get_or_init(|| t))
    }

    /// The cluster options checked against `--target`, and the shape of the cluster it names
    /// (see [`super::target::Target::cluster_shape`]); kept as [`CommonArgs::parsed_target`].
    pub fn cluster_shape(&self) -> anyhow::Result<Option<&ClusterShape>> {
        if let Some(s) = self.parsed_shape.get() {
            return Ok(s.as_ref());
        }
        let s = self.parsed_target()?.cluster_shape(
            self.nodes,
            &self.write_nodes,
            self.on_node_loss,
        )?;
        Ok(self.parsed_shape.get_or_init(|| s).as_ref())
    }
}

/// `--connect-timeout`: positive seconds, at most a day.
pub fn parse_connect_timeout(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err("expected seconds, more than 0 and at most 86400".into()),
    }
}

/// What to do when an index build or a sweep point fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnError {
    /// Stop the sweep (finished points stay in the results).
    Stop,
    /// Record the failure and go on with the next point.
    Continue,
}

/// A named run length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SizePreset {
    /// Every step in seconds (under 30 s per step on 2 cores, on every engine): to try a
    /// target, a flag or a build.
    Smoke,
    /// A tenth of the default sizes, short read+write steps.
    Small,
    /// The built-in defaults (the insert benchmark's shape at 1M rows).
    Default,
    /// Ten times the default rows, 5-minute read+write steps.
    Large,
}

impl SizePreset {
    /// The preset's name as given on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SizePreset::Smoke => "smoke",
            SizePreset::Small => "small",
            SizePreset::Default => "default",
            SizePreset::Large => "large",
        }
    }
}

/// The names `--target` takes without a path or URL.
pub const TARGET_NAMES: &[&str] = &[
    "sqlite",
    "null",
    "postgres",
    "mariadb",
    "mysql",
    "galera",
    "spider",
    "pg-shards",
];

/// `--target`: checked at parsing, so a typo is a usage error (exit status 2) with a "did you
/// mean" and the list of targets, before anything starts.
pub fn target_arg(s: &str) -> Result<String, String> {
    let known = TARGET_NAMES.contains(&s) || crate::dbms::TargetSpec::parse(s).is_ok();
    if known {
        return Ok(s.to_string());
    }
    let shown = crate::dbms::redact_url(s);
    let close = TARGET_NAMES
        .iter()
        .map(|n| (strsim::damerau_levenshtein(&s.to_ascii_lowercase(), n), *n))
        .filter(|(d, n)| *d <= 2.max(n.len() / 3))
        .min();
    // A storage engine given as the target: the engine is its own option.
    let engine = crate::dbms::engine_of_name(s);
    let hint = match engine {
        Some(e) => format!(
            "; {s} is a storage engine, not a target: --target mariadb (or a mysql:// URL) \
             --engine {e}"
        ),
        None => close.map_or(String::new(), |(_, n)| format!("; did you mean {n}?")),
    };
    Err(format!(
        "unknown target {shown:?}{hint} (targets: {}, sqlite:PATH, \
         postgres://USER@HOST:PORT/DB, 'host=HOST dbname=DB ...', mysql://USER@HOST:PORT/DB)",
        TARGET_NAMES.join(", ")
    ))
}
