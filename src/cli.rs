//! Command line (clap). Parsing only: the work is in [`crate::cmd::run`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::measure::interval::LineFormat;
use crate::step::Profile;

/// Largest `--rows` / `--rows2` (rows per client): 10^12, so row counts and keys never
/// overflow (they are kept as i64 and multiplied by the clients).
pub const MAX_ROWS: u64 = 1_000_000_000_000;
/// Largest `--rates` value, rows/s per client.
pub const MAX_RATE: u64 = 10_000_000;
/// Longest `--query-seconds`: one week (a step is stopped at 3x its planned time, so the
/// longest possible step still fits a `Duration` and the rows it inserts fit a u64).
pub const MAX_QUERY_SECONDS: f64 = 604_800.0;
/// Shortest and longest `--interval`, seconds.
pub const MIN_INTERVAL: f64 = 0.05;
/// Longest `--interval`, seconds.
pub const MAX_INTERVAL: f64 = 3600.0;
/// Largest `--clients` of one process (three threads and connections each).
pub const MAX_CLIENTS: u64 = 4096;
/// Largest `--max-retries`.
pub const MAX_RETRIES: u32 = 1_000_000;

/// A number of seconds in `min..=max` (`min` excluded when it is 0): NaN, infinities, 1e20 and
/// negative values are refused here, with the range in the message.
fn seconds_in(s: &str, min: f64, max: f64) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    let low_ok = if min == 0.0 { v > 0.0 } else { v >= min };
    if !(low_ok && v <= max) {
        return Err(if min == 0.0 {
            format!("must be more than 0 and at most {max} seconds")
        } else {
            format!("must be between {min} and {max} seconds")
        });
    }
    Ok(v)
}

fn query_seconds(s: &str) -> Result<f64, String> {
    seconds_in(s, 0.0, MAX_QUERY_SECONDS)
}

fn interval_seconds(s: &str) -> Result<f64, String> {
    seconds_in(s, MIN_INTERVAL, MAX_INTERVAL)
}

/// ixbench: the insert benchmark and friends, for write-heavy workloads with secondary indexes.
#[derive(Debug, Parser)]
#[command(name = "ixbench", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Run the insert benchmark (l.i0, l.x, l.i1, l.i2, maint, qrN/qpN) against a target.
    Run(RunArgs),
    /// Index-build lab: timed CREATE INDEX with its cost, knob sweeps, load strategies,
    /// table rebuilds.
    Index(IndexArgs),
    /// What a schema change does to a live workload: the load at a fixed rate, a baseline, an
    /// online or blocking ADD INDEX (DROP INDEX, ADD COLUMN, rebuild) in its own session, and
    /// recovery; TPS, QPS and p99 before, during and after, over a grid of knobs.
    Ddl(DdlArgs),
    /// Compare runs with base runs (repeats per side: `A1 A2 -- B1 B2`): changes beyond the
    /// run-to-run spread and failed steps flagged, changed versions and settings listed.
    Compare(crate::compare::CompareArgs),
    /// Start or stop a throwaway local PostgreSQL or MariaDB server.
    Server(ServerArgs),
    /// sysbench's OLTP workloads (oltp_read_write, oltp_read_only, ...) on their own, to
    /// compare with sysbench: load sbtest1..N, run for --time, print sysbench-like lines and
    /// summary.
    Oltp(crate::cmd::oltp::OltpArgs),
    /// Write the HTML report of results directories again (several: compared with the first).
    Report(crate::cmd::report::ReportArgs),
    /// Insert patterns: infer the geek code of a key stream, print the code of a pattern
    /// spec, generate a pattern's keys.
    Pattern(crate::cmd::pattern::PatternArgs),
    /// The time-series workload: (time, device_id, metric_id, value) with retention, native
    /// range partitions or none, queries with their plans; --compare-partitioning.
    Timeseries(crate::cmd::timeseries::TsArgs),
    /// Version and configuration A/B: the same command (run, index, ddl, ...) against two or
    /// more server builds (--server-bin) or setting sets, interleaved A B A B with --repeat,
    /// each on a fresh server; the figures that changed beyond the noise, the settings that
    /// differ, a report; exit status 3 on a regression.
    Ab(crate::cmd::ab::AbArgs),
    /// Add the results of the processes of one several-process run (`run --client-id K
    /// --client-count N`) into one run: counts summed, HDR histograms added, interval lines
    /// by time.
    Merge(crate::cmd::merge::MergeArgs),
}

/// Options of `ixbench server`.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ServerCommand,
}

/// Subcommands of `ixbench server`.
#[derive(Debug, Clone, Subcommand)]
pub enum ServerCommand {
    /// Initialize a new data directory, start a server on 127.0.0.1, print its URL and return,
    /// leaving it running.
    Start(ServerStartArgs),
    /// Stop a server or cluster started by `ixbench server start`.
    Stop(ServerStopArgs),
}

/// Options of `ixbench server start`.
#[derive(Debug, Clone, Args)]
pub struct ServerStartArgs {
    /// Which server, or cluster (galera, spider, pg-shards).
    #[arg(value_enum)]
    pub kind: crate::server::StartKind,

    /// Nodes of a Galera cluster (default 3).
    #[arg(long)]
    pub nodes: Option<usize>,

    /// Shards (backend servers) of a Spider or pg-shards cluster (default 2).
    #[arg(long)]
    pub shards: Option<usize>,

    /// Server setting as NAME=VALUE (PostgreSQL `-c`, MariaDB `--NAME=VALUE`; repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,

    /// New data directory (must not exist, or be empty). Default: a new directory under the
    /// system temp dir.
    #[arg(long)]
    pub datadir: Option<PathBuf>,

    /// TCP port on 127.0.0.1. Default: a free one.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub port: Option<u16>,

    /// The `bin/` directory of the PostgreSQL or MariaDB install to start (any build, not only
    /// Debian's). Default: the installed Debian server.
    #[arg(long, value_name = "DIR")]
    pub server_bin: Option<PathBuf>,
}

/// Options of `ixbench server stop`.
#[derive(Debug, Clone, Args)]
pub struct ServerStopArgs {
    /// Data directory of the server (of a cluster: its directory; every node is stopped).
    pub datadir: PathBuf,

    /// Then remove the data directory (only one ixbench created; also when the server is
    /// already stopped).
    #[arg(long)]
    pub remove: bool,
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
    #[arg(long, default_value = "sqlite")]
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
    pub size: Option<crate::size::SizePreset>,
    /// Nodes of the throwaway Galera cluster of `--target galera` (default 3), or shards of
    /// `--target pg-shards|spider` (default 2, at most 8).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=9))]
    pub nodes: Option<u64>,

    /// Galera: which nodes the workload's connections go to: `1` (node1 only, the default),
    /// `all` (spread over every node, round robin), or a list such as `1,3`.
    #[arg(long, default_value = "1")]
    pub write_nodes: String,

    /// Galera: when a node leaves the cluster during a step, `continue` the step against the
    /// rest (the results say which node and when) or `stop` the run with an error naming it.
    #[arg(long, value_enum, default_value = "continue")]
    pub on_node_loss: crate::cluster_target::OnNodeLoss,
}

/// `--connect-timeout`: positive seconds, at most a day.
fn parse_connect_timeout(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err("expected seconds, more than 0 and at most 86400".into()),
    }
}

/// Options of `ixbench run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Database and results directory.
    #[command(flatten)]
    pub common: CommonArgs,

    /// Rows each client loads in l.i0.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=MAX_ROWS))]
    pub rows: u64,

    /// Rows each client inserts in l.i1 + l.i2 (4/5 and 1/5).
    #[arg(long, default_value_t = 300_000, value_parser = clap::value_parser!(u64).range(5..=MAX_ROWS))]
    pub rows2: u64,

    /// Rows per commit in l.i0.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub rows_per_commit: u64,

    /// Rows per commit in l.i1.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub rows_per_commit_i1: u64,

    /// Rows per commit in l.i2.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub rows_per_commit_i2: u64,

    /// Rows per commit of the rate-limited writers in read+write steps.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub rw_rows_per_commit: u64,

    /// Secondary indexes to create in l.x (0..3, in the insert benchmark's order).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(0..=3))]
    pub secondary_indexes: u64,

    /// Clients: each has its own inserter, deleter and query connection (threads).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=MAX_CLIENTS))]
    pub clients: u64,

    /// One table per client (the default).
    #[arg(long, conflicts_with = "shared_table")]
    pub table_per_client: bool,

    /// All clients share one table.
    #[arg(long)]
    pub shared_table: bool,

    /// Steps to run, in order (e.g. `l.i0,l.x`). Default: the profile's steps.
    #[arg(long, value_delimiter = ',')]
    pub steps: Option<Vec<String>>,

    /// Named step sequence: `default`, or `2020` (seed 000's sequence).
    #[arg(long, value_enum, default_value_t = Profile::Default)]
    pub profile: Profile,

    /// Insert rates (rows/s per client) of the read+write steps. Default: 100,500,1000 (2020
    /// profile: 100,200,400,600,800,1000).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=MAX_RATE))]
    pub rates: Option<Vec<u64>>,

    /// Planned seconds of each read+write step.
    #[arg(long, default_value_t = 10.0, value_parser = query_seconds)]
    pub query_seconds: f64,

    /// Seconds between two per-interval lines.
    #[arg(long, default_value_t = 1.0, value_parser = interval_seconds)]
    pub interval: f64,

    /// Per-interval line: v1 (seed 000's 10 columns) or v2 (17 columns with deletes, retries).
    #[arg(long, value_enum, default_value_t = LineFormat::V1)]
    pub line_format: LineFormat,

    /// How statements reach the server: prepared (bound parameters, ixbench's default) or
    /// text (literal SQL with the values written in, as the insert benchmark's own client
    /// sends it; to reproduce its published figures).
    #[arg(long, value_enum, default_value_t = crate::workload::iibench::StatementMode::Prepared)]
    pub statements: crate::workload::iibench::StatementMode,

    /// Retries of a transient error (busy, deadlock) before the step fails.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(0..=MAX_RETRIES as i64))]
    pub max_retries: u32,

    /// Intended starts of the rate-limited writers: a fixed grid (`uniform`) or Poisson
    /// arrivals with the same mean rate (seeded from --seed). Each writer has its own phase.
    #[arg(long, value_enum, default_value_t = crate::measure::schedule::Arrivals::Uniform)]
    pub arrivals: crate::measure::schedule::Arrivals,

    /// Fail a step when none of its operations completed for this many seconds (interval
    /// lines say `STALLED` from one second on).
    #[arg(long, default_value_t = 60.0)]
    pub stall_timeout: f64,

    /// Bound l.i1, l.i2 and the read+write steps by this many seconds each instead of by rows
    /// (l.i1/l.i2 insert as fast as possible until then; read+write steps end then even when
    /// their writers are behind). l.i0 still loads --rows.
    #[arg(long, value_parser = query_seconds)]
    pub time: Option<f64>,
    /// Key pattern of the PK's values (`asc`, `desc`, `lr`, `inf`, `streams:N`, ...; see
    /// `ixbench pattern`); ixbench then gives the PK. Default: assigned by the server.
    #[arg(long, value_name = "SPEC")]
    pub pk_pattern: Option<String>,

    /// Key pattern of a secondary index's first column, `NAME=SPEC` (NAME: marketsegment,
    /// registersegment, pdc, or all), repeatable. Default: the insert benchmark's values.
    #[arg(long, value_name = "NAME=SPEC")]
    pub index_pattern: Vec<String>,
    /// Nice increment (0..19) of the closed-loop query threads of read+write steps, so they
    /// cannot take the CPU from the rate-limited writers of the same process (0: same priority).
    #[arg(long, default_value_t = crate::measure::priority::QUERY_NICE, value_parser = clap::value_parser!(i32).range(0..=19))]
    pub query_nice: i32,

    /// This process is client K (0-based) of --client-count processes or hosts: it runs its
    /// --clients on its own tables (numbered after the other processes'), with its own seeds.
    /// `ixbench merge` adds the processes' results into one run.
    #[arg(long, requires = "client_count")]
    pub client_id: Option<u64>,

    /// Number of client processes (or hosts) of the run, each started with its --client-id.
    #[arg(long, requires = "client_id")]
    pub client_count: Option<u64>,

    /// Start the steps at this time (RFC 3339, e.g. 2026-11-23T16:00:00Z, or Unix seconds),
    /// after connecting: the processes of one run start together without a coordinator.
    #[arg(long)]
    pub start_at: Option<String>,
}

/// What to do when an index build or a sweep point fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnError {
    /// Stop the sweep (finished points stay in the results).
    Stop,
    /// Record the failure and go on with the next point.
    Continue,
}

/// Blocking or online builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BuildMode {
    /// Plain CREATE INDEX (writes blocked).
    Blocking,
    /// CREATE INDEX CONCURRENTLY / ALGORITHM=INPLACE, LOCK=NONE (LOCK=SHARED on MyRocks).
    Online,
    /// Both.
    Both,
}

/// How a build runs on the shards of `--target spider|pg-shards`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShardBuilds {
    /// Every shard builds at the same time, on its own connection to its server.
    Parallel,
    /// One shard after the other.
    Sequential,
}

/// Options of `ixbench index`.
#[derive(Debug, Clone, Args)]
pub struct IndexArgs {
    /// Database and results directory.
    #[command(flatten)]
    pub common: CommonArgs,

    /// Rows to load (l.i0) before building, unless --reuse.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=MAX_ROWS))]
    pub rows: u64,

    /// Build on the ixbench table already in the database (from an earlier run) instead of
    /// loading a new one.
    #[arg(long)]
    pub reuse: bool,

    /// Indexes to build: names (marketsegment, registersegment, pdc) or numbers 1..3.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "marketsegment,registersegment,pdc"
    )]
    pub indexes: Vec<String>,

    /// What to build: `each` (every index alone), `all` (all together, one statement or
    /// parallel sessions where the DBMS can), or both.
    #[arg(long, value_delimiter = ',', default_value = "each,all")]
    pub builds: Vec<String>,

    /// Blocking or online builds, or both.
    #[arg(long, value_enum, default_value_t = BuildMode::Blocking)]
    pub mode: BuildMode,

    /// A knob and the values to sweep, NAME=V1,V2,... (repeatable: the full grid is run).
    #[arg(long = "knob", value_name = "NAME=V1,V2")]
    pub knobs: Vec<String>,

    /// Builds per point; the summary shows the median and the spread.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,

    /// On a failed build or a refused knob: stop, or go on with the next point.
    #[arg(long, value_enum, default_value_t = OnError::Stop)]
    pub on_error: OnError,

    /// Also compare load strategies on the same rows: indexes first then load, versus load
    /// then create the indexes.
    #[arg(long)]
    pub strategy: bool,

    /// Also time whole-table rebuilds (VACUUM/REINDEX, ALTER TABLE ... ENGINE, OPTIMIZE).
    /// With --like, --from-table or --index they run at every point of the knob grid.
    #[arg(long)]
    pub rebuild: bool,

    /// A secondary index to build instead of the insert benchmark's:
    /// '[UNIQUE] NAME: col1, col2 [DESC], col3(10)' (repeatable; prefix lengths on
    /// MySQL/MariaDB). On ixbench's own table, the copy (--from-table) or --like's table.
    #[arg(long = "index", value_name = "SPEC")]
    pub user_indexes: Vec<String>,

    /// Build on a synthetic table shaped like another benchmark's instead of the insert
    /// benchmark's: `sbtest` (sysbench's id, k, c, pad with c a TEXT of --text-bytes bytes
    /// and --rows rows; index k_1 (k)).
    #[arg(long, value_name = "SHAPE", conflicts_with_all = ["from_table", "reuse"])]
    pub like: Option<String>,

    /// Bytes of each `c` value of --like sbtest (seed 004: sysbench's 119 repeated 500 times).
    #[arg(long, default_value_t = 119, value_parser = clap::value_parser!(u64).range(1..=16_000_000), requires = "like")]
    pub text_bytes: u64,

    /// Build on a copy of the user's table [SCHEMA.]TABLE on the same server (same columns,
    /// keys, engine and row format; the user's table is only read), dropped at the end unless
    /// --keep. The copy's time is reported apart.
    #[arg(long, value_name = "[SCHEMA.]TABLE", conflicts_with = "reuse")]
    pub from_table: Option<String>,

    /// Copy about N rows of --from-table, chosen uniformly at random.
    #[arg(long, requires = "from_table", conflicts_with = "sample_pct", value_parser = clap::value_parser!(u64).range(1..))]
    pub sample: Option<u64>,

    /// Copy about P percent of the rows of --from-table (each row kept with probability P/100).
    #[arg(long, requires = "from_table")]
    pub sample_pct: Option<f64>,

    /// Only the rebuilds whose name contains one of these words (case-insensitive), e.g.
    /// `copy,inplace` or `vacuum`.
    #[arg(long, value_delimiter = ',', requires = "rebuild")]
    pub rebuilds: Vec<String>,

    /// Keep the copy (--from-table) or --like's table at the end.
    #[arg(long)]
    pub keep: bool,

    /// On --target spider|pg-shards: build on every shard at once, each on its own connection
    /// to its server (parallel, the default), or one shard after the other (sequential).
    #[arg(long, value_enum, value_name = "HOW")]
    pub shard_builds: Option<ShardBuilds>,
}

/// Seed 003's test plans: which workload runs and which column the DDL works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DdlPlanArg {
    /// oltp_read_write while the index is built on `c`, a column it updates.
    WritesIndexedColumn,
    /// oltp_read_only while the index is built on `c`: the load only reads.
    ReadOnly,
    /// oltp_read_write while the index is built on `pad`, a column its updates do not touch.
    UnrelatedColumn,
}

impl DdlPlanArg {
    /// The plan's name.
    pub fn name(self) -> &'static str {
        match self {
            DdlPlanArg::WritesIndexedColumn => "writes-indexed-column",
            DdlPlanArg::ReadOnly => "read-only",
            DdlPlanArg::UnrelatedColumn => "unrelated-column",
        }
    }

    /// The workload (transaction mix) and the column of the plan.
    pub fn workload_and_column(self) -> (&'static str, &'static str) {
        match self {
            DdlPlanArg::WritesIndexedColumn => ("oltp_read_write", "c"),
            DdlPlanArg::ReadOnly => ("oltp_read_only", "c"),
            DdlPlanArg::UnrelatedColumn => ("oltp_read_write", "pad"),
        }
    }
}

/// Largest `--rate` of `ixbench ddl`, transactions per second.
pub const MAX_DDL_RATE: f64 = 10_000_000.0;

fn ddl_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= MAX_DDL_RATE => Ok(v),
        _ => Err(format!(
            "must be more than 0 and at most {MAX_DDL_RATE} transactions per second"
        )),
    }
}

fn fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err("must be more than 0 and at most 1".into()),
    }
}

fn window_seconds(s: &str) -> Result<f64, String> {
    seconds_in(s, 0.0, 86_400.0)
}

/// Options of `ixbench ddl`.
#[derive(Debug, Clone, Args)]
pub struct DdlArgs {
    /// Database and results directory.
    #[command(flatten)]
    pub common: CommonArgs,

    /// Seed 003's test plan: the workload writes the indexed column, only reads, or the indexed
    /// column is unrelated to its writes.
    #[arg(long, value_enum, default_value_t = DdlPlanArg::WritesIndexedColumn)]
    pub plan: DdlPlanArg,

    /// The workload's transaction mix instead of the plan's (oltp_read_write, oltp_read_only,
    /// oltp_write_only, oltp_update_non_index, ...).
    #[arg(long)]
    pub workload: Option<String>,

    /// The schema change.
    #[arg(long, value_enum, default_value_t = crate::dbms::ddl::DdlKind::AddIndex)]
    pub ddl: crate::dbms::ddl::DdlKind,

    /// Online (CREATE INDEX CONCURRENTLY, LOCK=NONE, INSTANT) or blocking (plain CREATE INDEX,
    /// LOCK=SHARED, a table copy). An engine that cannot run it online runs it blocking and
    /// says so.
    #[arg(long, value_enum, default_value_t = crate::dbms::ddl::LockChoice::Online)]
    pub lock: crate::dbms::ddl::LockChoice,

    /// Columns to index instead of the plan's: one index per column, all in one statement where
    /// the engine can (`c,pad`); `a+b` is one index on two columns.
    #[arg(long, value_delimiter = ',')]
    pub columns: Option<Vec<String>>,

    /// Build UNIQUE indexes (on duplicate values the DDL fails: a fault to test).
    #[arg(long)]
    pub unique: bool,

    /// Tables of the workload (sbtest1..N); the DDL works on sbtest1.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub tables: u32,

    /// Rows per table.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000_000))]
    pub table_size: u32,

    /// Use the tables of an earlier load instead of loading new ones.
    #[arg(long)]
    pub reuse: bool,

    /// Distribution of the workload's ids: uniform (seed 003 ran sysbench with
    /// --rand-type=uniform) or sysbench's default special.
    #[arg(long, value_enum, default_value_t = crate::workload::oltp::RandType::Uniform)]
    pub rand_type: crate::workload::oltp::RandType,

    /// Client threads of the load, each with its own connection.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: u64,

    /// Offered rate, transactions per second (all threads). Default: --rate-fraction of the
    /// TPS a closed-loop probe measured.
    #[arg(long, value_parser = ddl_rate)]
    pub rate: Option<f64>,

    /// The share of the probe's TPS offered when --rate is not given.
    #[arg(long, default_value_t = 0.7, value_parser = fraction)]
    pub rate_fraction: f64,

    /// Seconds of the closed-loop probe.
    #[arg(long, default_value_t = 10.0, value_parser = window_seconds)]
    pub probe_seconds: f64,

    /// Seconds of load before the DDL starts (the baseline window).
    #[arg(long, default_value_t = 30.0, value_parser = window_seconds)]
    pub baseline_seconds: f64,

    /// Seconds of load after the DDL ends (the recovery window).
    #[arg(long, default_value_t = 30.0, value_parser = window_seconds)]
    pub recovery_seconds: f64,

    /// Cancel the DDL after this many seconds.
    #[arg(long, default_value_t = 3600.0, value_parser = window_seconds)]
    pub ddl_timeout: f64,

    /// Run a failed DDL again this many times when its error is transient (lock wait timeout,
    /// deadlock, an online row log that overflowed).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub ddl_retries: u32,

    /// A knob and the values to sweep, NAME=V1,V2,... (repeatable: the full grid; session knobs
    /// on the DDL's session, server-wide ones by restarting a server ixbench started).
    #[arg(long = "knob", value_name = "NAME=V1,V2")]
    pub knobs: Vec<String>,

    /// On a failed DDL, a failed transaction of the load or a refused knob: stop (exit status
    /// 1), or record it and go on (exit status 0).
    #[arg(long, value_enum, default_value_t = OnError::Stop)]
    pub on_error: OnError,

    /// Retries of a load transaction after a transient error (deadlock, busy).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(0..=MAX_RETRIES as i64))]
    pub max_retries: u32,

    /// Intended starts of the load: a fixed grid or Poisson arrivals (seeded from --seed).
    #[arg(long, value_enum, default_value_t = crate::measure::schedule::Arrivals::Uniform)]
    pub arrivals: crate::measure::schedule::Arrivals,

    /// How the change is made; several (comma-separated) run one after the other on the same
    /// table under the same load, and a comparison table follows: native (the engine's
    /// statement, per --lock), pt-osc (pt-online-schema-change, MySQL/MariaDB), pg-repack and
    /// pg-repack-indexes (pg_repack, and --only-indexes; PostgreSQL, --ddl rebuild),
    /// vacuum-full, cluster, reindex-concurrently (PostgreSQL's rebuild statements), external
    /// (--ddl-command).
    #[arg(long, value_delimiter = ',', default_value = "native")]
    pub method: Vec<String>,

    /// Extra arguments of a method's program, METHOD=ARGS (repeatable), e.g.
    /// pt-osc='--chunk-size 500 --chunk-time 0 --sleep 0.05' (chunking, throttling).
    #[arg(long = "method-opt", value_name = "METHOD=ARGS")]
    pub method_opt: Vec<String>,

    /// The command --method external runs as the change (through /bin/sh), e.g. gh-ost or
    /// pg_squeeze. It finds the target in IXBENCH_KIND, IXBENCH_HOST, IXBENCH_PORT,
    /// IXBENCH_SOCKET, IXBENCH_USER, IXBENCH_PASSWORD, IXBENCH_DB, IXBENCH_TABLE, IXBENCH_DDL,
    /// IXBENCH_ALTER (MySQL: the change as an ALTER TABLE clause), IXBENCH_SQL (the engine's own
    /// statements), and in PG*/MYSQL_* for psql and mariadb.
    #[arg(long, value_name = "COMMAND")]
    pub ddl_command: Option<String>,
}
