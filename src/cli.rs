//! Command line (clap). Parsing only: the work is in [`crate::run`].

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
    /// Compare runs with base runs (repeats per side: `A1 A2 -- B1 B2`): changes beyond the
    /// run-to-run spread and failed steps flagged, changed versions and settings listed.
    Compare(crate::compare::CompareArgs),
    /// Start or stop a throwaway local PostgreSQL or MariaDB server.
    Server(ServerArgs),
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
    /// Stop a server started by `ixbench server start`.
    Stop(ServerStopArgs),
}

/// Options of `ixbench server start`.
#[derive(Debug, Clone, Args)]
pub struct ServerStartArgs {
    /// Which server.
    #[arg(value_enum)]
    pub kind: crate::server::ServerKind,

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
}

/// Options of `ixbench server stop`.
#[derive(Debug, Clone, Args)]
pub struct ServerStopArgs {
    /// Data directory of the server.
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

    /// Remove the throwaway server's data directory at the end (default: kept with the
    /// results).
    #[arg(long)]
    pub rm: bool,

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

    /// Clients: each has its own inserter, deleter and query connection.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
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
    #[arg(long)]
    pub rebuild: bool,
}
