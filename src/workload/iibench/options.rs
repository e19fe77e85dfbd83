//! The insert benchmark's options of `ixbench run` (under its heading), from which its step
//! plan is built ([`crate::workload::iibench::plan`]) and run (`step::plan_run`, which
//! `ixbench run` flattens them through).

use clap::Args;

use crate::measure::interval::LineFormat;
use crate::workload::iibench::plan::Profile;
use crate::workload::registry::H_IIBENCH;
use crate::workload::runner::{
    query_seconds, BARRIER_TIMEOUT_SECS, MAX_CLIENTS, MAX_RATE, MAX_ROWS,
};

/// The options of `ixbench run` a step plan is built and run from (the insert benchmark's,
/// under its heading).
#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    /// Rows each client loads in l.i0.
    #[arg(long, help_heading = H_IIBENCH, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=MAX_ROWS))]
    pub rows: u64,

    /// Rows each client inserts in l.i1 + l.i2 (4/5 and 1/5).
    #[arg(long, help_heading = H_IIBENCH, default_value_t = 300_000, value_parser = clap::value_parser!(u64).range(5..=MAX_ROWS))]
    pub rows2: u64,

    /// Rows per commit in l.i0.
    #[arg(long, help_heading = H_IIBENCH, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub rows_per_commit: u64,

    /// Rows per commit in l.i1.
    #[arg(long, help_heading = H_IIBENCH, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub rows_per_commit_i1: u64,

    /// Rows per commit in l.i2.
    #[arg(long, help_heading = H_IIBENCH, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub rows_per_commit_i2: u64,

    /// Rows per commit of the rate-limited writers in read+write steps.
    #[arg(long, help_heading = H_IIBENCH, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub rw_rows_per_commit: u64,

    /// Secondary indexes to create in l.x (0..3, in the insert benchmark's order).
    #[arg(long, help_heading = H_IIBENCH, default_value_t = 3, value_parser = clap::value_parser!(u64).range(0..=3))]
    pub secondary_indexes: u64,

    /// Clients: each has its own inserter, deleter and query connection (threads).
    #[arg(long, help_heading = H_IIBENCH, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=MAX_CLIENTS))]
    pub clients: u64,

    /// One table per client (the default).
    #[arg(long, help_heading = H_IIBENCH, conflicts_with = "shared_table")]
    pub table_per_client: bool,

    /// All clients share one table.
    #[arg(long, help_heading = H_IIBENCH)]
    pub shared_table: bool,

    /// Steps to run, in order (e.g. `l.i0,l.x`). Default: the profile's steps.
    #[arg(long, help_heading = H_IIBENCH, value_delimiter = ',')]
    pub steps: Option<Vec<String>>,

    /// Named step sequence: `default`, or `2020` (seed 000's sequence).
    #[arg(long, help_heading = H_IIBENCH, value_enum, default_value_t = Profile::Default)]
    pub profile: Profile,

    /// Insert rates (rows/s per client) of the read+write steps. Default: 100,500,1000 (2020
    /// profile: 100,200,400,600,800,1000).
    #[arg(long, help_heading = H_IIBENCH, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=MAX_RATE))]
    pub rates: Option<Vec<u64>>,

    /// Planned seconds of each read+write step.
    #[arg(long, help_heading = H_IIBENCH, default_value_t = 10.0, value_parser = query_seconds)]
    pub query_seconds: f64,

    /// Per-interval line: v1 (seed 000's 10 columns) or v2 (17 columns with deletes, retries).
    #[arg(long, help_heading = H_IIBENCH, value_enum, default_value_t = LineFormat::V1)]
    pub line_format: LineFormat,

    /// How statements reach the server: prepared (bound parameters, ixbench's default) or
    /// text (literal SQL with the values written in, as the insert benchmark's own client
    /// sends it; to reproduce its published figures).
    #[arg(long, help_heading = H_IIBENCH, value_enum, default_value_t = crate::workload::iibench::StatementMode::Prepared)]
    pub statements: crate::workload::iibench::StatementMode,

    /// Key pattern of the PK's values (`asc`, `desc`, `lr`, `inf`, `streams:N`, ...; see
    /// `ixbench pattern`); ixbench then gives the PK. Default: assigned by the server.
    #[arg(long, help_heading = H_IIBENCH, value_name = "SPEC")]
    pub pk_pattern: Option<String>,

    /// Key pattern of a secondary index's first column, `NAME=SPEC` (NAME: marketsegment,
    /// registersegment, pdc, or all), repeatable. Default: the insert benchmark's values.
    #[arg(long, help_heading = H_IIBENCH, value_name = "NAME=SPEC")]
    pub index_pattern: Vec<String>,
    /// Nice increment (0..19) of the closed-loop query threads of read+write steps, so they
    /// cannot take the CPU from the rate-limited writers of the same process (0: same priority).
    #[arg(long, help_heading = H_IIBENCH, default_value_t = crate::measure::priority::QUERY_NICE, value_parser = clap::value_parser!(i32).range(0..=19))]
    pub query_nice: i32,

    /// This process is client K (0-based) of --client-count processes or hosts: it runs its
    /// --clients on its own tables (numbered after the other processes'), with its own seeds.
    /// `ixbench merge` adds the processes' results into one run.
    #[arg(long, help_heading = H_IIBENCH, requires = "client_count")]
    pub client_id: Option<u64>,

    /// Number of client processes (or hosts) of the run, each started with its --client-id.
    #[arg(long, help_heading = H_IIBENCH, requires = "client_id")]
    pub client_count: Option<u64>,

    /// Start the steps at this time (RFC 3339, e.g. 2026-11-23T16:00:00Z, or Unix seconds),
    /// after connecting: the processes of one run start together without a coordinator.
    #[arg(long, help_heading = H_IIBENCH)]
    pub start_at: Option<String>,

    /// With --client-count above 1 and --start-at: the parts meet before every step (in a small
    /// table of the target database) and start it together; a part waits this long (seconds)
    /// for the others to arrive, then fails naming the part that is missing.
    #[arg(long, help_heading = H_IIBENCH, value_name = "SECONDS", default_value_t = BARRIER_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub barrier_timeout: u64,
}
