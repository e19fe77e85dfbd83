//! The result model: what a run stores (`run.json`), with serde, plus the writer that keeps it
//! on disk as the run goes so a run cut off half way keeps every finished step and interval.

pub mod build;
pub mod checks;
pub mod cluster;
pub mod ddl;
pub mod oltp;
pub mod parts;
pub mod schema;
pub mod schema_tools;
pub mod server;
pub mod store;
pub mod verdict;

use serde::{Deserialize, Serialize};

use crate::dbms::{MaintAction, QuietWait, Sizes, TargetInfo};
use crate::measure::histogram::LatencySummary;
use crate::measure::meter::Totals;
use crate::measure::resources::WindowCost;
use crate::measure::sys::{HostInfo, ProcSnapshot, ServerSample};

/// Version of the `run.json` layout; bumped on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

/// How a run or a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Still going (what a reader sees in a run that was killed).
    Running,
    /// Finished and every check passed.
    Ok,
    /// Finished, but a self-check failed.
    ChecksFailed,
    /// Stopped by an error.
    Failed,
    /// Stopped by Ctrl-C.
    Interrupted,
}

/// Everything about one run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunResult {
    /// Layout version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// ixbench version.
    pub ixbench_version: String,
    /// The command line, with any password removed.
    pub command_line: Vec<String>,
    /// When the run began (RFC 3339, UTC).
    pub started_at: String,
    /// When it ended, if it did.
    pub finished_at: Option<String>,
    /// How it ended.
    pub status: Status,
    /// The error that stopped it, if any.
    pub error: Option<String>,
    /// The effective configuration.
    pub config: serde_json::Value,
    /// The database: kind, version, location, settings.
    pub target: TargetInfo,
    /// The machine.
    pub host: HostInfo,
    /// One entry per step, in order; a step being run is not here until it ends.
    pub steps: Vec<StepResult>,
    /// Measured index builds (`ixbench index`), one per build, repeat and knob setting.
    #[serde(default)]
    pub builds: Vec<BuildResult>,
    /// Load strategies compared (`ixbench index --strategy`).
    #[serde(default)]
    pub strategies: Vec<StrategyResult>,
    /// Each distinct warning of the index lab's builds once, with the builds it applies to.
    #[serde(default)]
    pub warnings: Vec<RunWarning>,
    /// A schema change under load (`ixbench ddl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ddl: Option<ddl::DdlRunResult>,
    /// Each workload's own records, by part: each part a list at the top level of the file,
    /// under the name its workload gives it (see [`parts`]).
    #[serde(flatten)]
    pub workloads: parts::Parts,
    /// How the ixbench that measured was built (profile, git commit); `None` in files written
    /// before it was recorded.
    #[serde(default)]
    pub build: Option<build::BuildInfo>,
    /// The throwaway server ixbench started (`--target postgres|mariadb`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<server::ServerRecord>,
    /// Where the server's figures came from (`--server-figures`) and why; `None` in files
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_figures: Option<crate::measure::server_figures::ServerFiguresChoice>,
    /// Notes of the workload that ran, from the workload itself (the insert benchmark's: how
    /// its primary key is assigned, how its rows are inserted, what its plan check requires on
    /// this target); what a reader needs to know about the target itself is in
    /// [`TargetInfo::notes`](crate::dbms::TargetInfo).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A warning and where it applies (the index lab prints each distinct warning once).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RunWarning {
    /// The warning.
    pub warning: String,
    /// How many builds it applies to.
    pub count: usize,
    /// The builds it applies to (knobs, build, mode, repeat).
    pub applies_to: Vec<String>,
}

/// One measured index build (or table rebuild).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct BuildResult {
    /// Knob settings in effect (name, value as the DBMS reports it).
    pub knobs: Vec<(String, String)>,
    /// What was built: an index name, `all`, or a rebuild's name.
    pub build: String,
    /// Indexes built.
    pub indexes: Vec<String>,
    /// `blocking`, `online`, or `rebuild`.
    pub mode: String,
    /// Repeat number, from 1.
    pub repeat: u32,
    /// Finished and checked?
    pub ok: bool,
    /// The error, if it failed.
    pub error: Option<String>,
    /// Wall seconds.
    pub seconds: f64,
    /// Rows in the table.
    pub rows: u64,
    /// Rows indexed per second (`rows / seconds`).
    pub rows_per_sec: f64,
    /// CPU seconds of the DBMS (its processes, with reaped children; for an embedded DBMS the
    /// ixbench process).
    pub server_cpu_secs: Option<f64>,
    /// Bytes the DBMS's processes read from storage.
    pub server_read_bytes: Option<u64>,
    /// Bytes the DBMS's processes wrote to storage.
    pub server_write_bytes: Option<u64>,
    /// Deltas of the DBMS's own I/O counters (name, value).
    pub counters: Vec<(String, u64)>,
    /// What the DBMS itself reported over the build (see [`StepResult::server_reported`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_reported: Option<crate::measure::server_figures::DbmsReport>,
    /// Size of each built index afterwards (name, bytes).
    pub index_bytes: Vec<(String, u64)>,
    /// Progress samples from the DBMS's progress view: (seconds since start, sample).
    pub progress: Vec<(f64, String)>,
    /// Checks: each index valid and used by its range query.
    pub checks: Vec<Check>,
    /// Warnings (e.g. a knob that had no effect).
    pub warnings: Vec<String>,
    /// The wait for the server to be quiet before the build.
    #[serde(default)]
    pub quiet: Option<QuietWait>,
    /// Per Galera node over this span (`--target galera`; see [`crate::results::cluster`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<crate::results::cluster::NodeStep>,
    /// On a sharded target (`--target spider|pg-shards`): how the build ran, each shard's part
    /// of it and every node's server CPU and I/O. The figures above are then the whole build's:
    /// `seconds` from the first shard's start to the last one's end, `rows` and index sizes
    /// summed over the shards, server CPU and read bytes summed over every node (head
    /// included), written bytes summed over the shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharded: Option<cluster::ShardedBuild>,
}

/// What identifies a group of repeated builds: (knob settings, build, mode).
pub type BuildKey = (Vec<(String, String)>, String, String);

impl BuildResult {
    /// The group this build repeats.
    pub fn key(&self) -> BuildKey {
        (self.knobs.clone(), self.build.clone(), self.mode.clone())
    }
}

/// Builds grouped by [`BuildKey`], in order of first appearance.
pub fn build_groups(builds: &[BuildResult]) -> Vec<(BuildKey, Vec<&BuildResult>)> {
    let mut out: Vec<(BuildKey, Vec<&BuildResult>)> = Vec::new();
    for b in builds {
        let k = b.key();
        match out.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(b),
            None => out.push((k, vec![b])),
        }
    }
    out
}

/// The median of `v` (mean of the middle two for an even count), `None` when empty.
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// One way of getting a loaded, indexed table.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct StrategyResult {
    /// `indexes-first` (create indexes, then load: row-by-row index maintenance) or
    /// `load-first` (load, then build the indexes by sorting).
    pub strategy: String,
    /// Rows loaded.
    pub rows: u64,
    /// Seconds loading.
    pub load_secs: f64,
    /// Seconds building indexes (0 for indexes-first).
    pub index_secs: f64,
    /// load + index seconds.
    pub total_secs: f64,
    /// Size of each index afterwards (name without the table prefix, bytes).
    pub index_bytes: Vec<(String, u64)>,
    /// Checks on the result (row count, indexes valid).
    pub checks: Vec<Check>,
    /// Warnings (e.g. the sizes could not be read: `index_bytes` is then empty).
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// A timed index build.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct IndexBuild {
    /// Table.
    pub table: String,
    /// Index name.
    pub index: String,
    /// Wall seconds.
    pub seconds: f64,
    /// Rows in the table when built.
    pub rows: u64,
    /// Rows indexed per second (`rows / seconds`).
    pub rows_per_sec: f64,
    /// The indexes this statement built (several for one `ALTER TABLE ... ADD INDEX a, ADD
    /// INDEX b`).
    #[serde(default)]
    pub indexes: Vec<String>,
    /// How they were built: the statement, as the target's build plan gives it.
    #[serde(default)]
    pub statement: String,
    /// Client and server CPU and I/O over exactly this build's statement.
    #[serde(default)]
    pub cost: Option<WindowCost>,
}

/// A self-check after a step (defined with the DBMS layer, whose index and table checks
/// make them).
pub use crate::dbms::Check;

/// Latency summaries of one kind of operation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct OpLatency {
    /// `insert`, `delete` or `query`.
    pub op: String,
    /// What one operation is (`commit of 100 rows`, `range query of 10 rows`).
    pub unit: String,
    /// Response time from the intended start (coordinated omission corrected).
    pub latency: LatencySummary,
    /// Service time from the actual start.
    pub service: LatencySummary,
    /// Schedule lag (throttled steps only): how late operations started.
    pub lag: Option<LatencySummary>,
}

/// The metrics line of a step: throughput (the insert benchmark's names `ips`, `qps`, `dps`,
/// `p50`, `p01`, `maxop`), then the client's (ixbench's) and the server's resource figures,
/// named apart. Resource figures cover the step's measured window only (the workers, or
/// each index build), per operation = per inserted row in load steps, per query in query
/// steps, per indexed row in l.x. A server figure that could not be measured is `None`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct SummaryLine {
    /// Rows inserted per second (for l.x: rows indexed per second).
    pub ips: f64,
    /// Queries per second.
    pub qps: f64,
    /// Rows deleted per second.
    pub dps: f64,
    /// MB/s the ixbench process read from storage (for an embedded DB: the engine's reads).
    #[serde(default)]
    pub client_read_mbps: f64,
    /// MB/s the ixbench process passed to write calls (for an embedded DB: the engine's).
    #[serde(default)]
    pub client_write_mbps: f64,
    /// Client context switches per second.
    #[serde(default)]
    pub client_cs_per_sec: f64,
    /// Client CPU: percent of one core.
    #[serde(default)]
    pub client_cpu_pct: f64,
    /// Client CPU microseconds per operation.
    pub cpupq: f64,
    /// Database size in GB after the step (`None`: unknown, e.g. the size query failed).
    pub dbgb: Option<f64>,
    /// Peak RSS of the ixbench process, MB (`None`: unknown, e.g. a step stopped before it was
    /// measured).
    #[serde(default)]
    pub client_rss_mb: Option<f64>,
    /// Largest response time of any operation in the step, seconds.
    pub maxop: f64,
    /// Server CPU microseconds per operation (same unit as `cpupq`).
    #[serde(default)]
    pub srv_cpupq: Option<f64>,
    /// KB (1000 bytes) the server's processes read from storage per operation.
    #[serde(default)]
    pub srv_read_kb_per_op: Option<f64>,
    /// KB written per operation as the DBMS counts them (WAL/redo + data pages + temp; see
    /// `ServerSample::dbms_written_what`).
    #[serde(default)]
    pub srv_write_kb_per_op: Option<f64>,
    /// KB the server's processes passed to write calls per operation.
    #[serde(default)]
    pub srv_write_call_kb_per_op: Option<f64>,
    /// KB the device under the data directory wrote per operation (every process on it).
    #[serde(default)]
    pub dev_write_kb_per_op: Option<f64>,
    /// Memory of the server's processes at the end of the window (PSS: shared memory counted
    /// once), MB.
    #[serde(default)]
    pub srv_rss_mb: Option<f64>,
    /// Size of the server's data directory after the step, GB.
    #[serde(default)]
    pub srv_datadir_gb: Option<f64>,
    /// Per-interval insert (or query) rate at the median interval; `None` (unknown) when the
    /// step had no interval of at least half the interval length (a step shorter than one
    /// interval).
    pub p50: Option<f64>,
    /// Per-interval rate at the 1st percentile: the bad-interval throughput (higher is
    /// better); `None` as for `p50`.
    pub p01: Option<f64>,
}

/// One step of a run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepResult {
    /// `l.i0`, `l.x`, `l.i1`, `l.i2`, `maint`, `qr100`, `qp500`, `q100.1`...
    pub name: String,
    /// What the step does, in words.
    pub description: String,
    /// How it ended.
    pub status: Status,
    /// The error, if it failed.
    pub error: Option<String>,
    /// Wall seconds.
    pub seconds: f64,
    /// Writers were rate limited (open loop)?
    pub throttled: bool,
    /// Target insert rate per client (rows/s), for throttled steps.
    pub target_rate: Option<f64>,
    /// Achieved insert rate per client (rows/s).
    pub achieved_rate: Option<f64>,
    /// False when a throttled writer fell under 95% of its target rate.
    pub rate_ok: bool,
    /// Counts over the step.
    pub totals: Totals,
    /// Latency per kind of operation that ran.
    pub latency: Vec<OpLatency>,
    /// The metrics line.
    pub summary: SummaryLine,
    /// The ixbench process's own resource use over the step's measured window (its workers,
    /// or its index builds; the whole step for maint).
    pub client: ProcSnapshot,
    /// The server's CPU, I/O and memory over the same window (its processes, from /proc, and
    /// the DBMS's own counters), when it runs on this machine and is not embedded.
    #[serde(default)]
    pub server: Option<ServerSample>,
    /// What the DBMS itself reported over the same window (its statistics views and status
    /// counters, each figure named), with what it could not say and why; `None` when not read
    /// (`--server-figures proc|none`, or `auto` with the server's processes on this machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_reported: Option<crate::measure::server_figures::DbmsReport>,
    /// Seconds of the measured window (`None`: the whole step was the window).
    #[serde(default)]
    pub window_secs: Option<f64>,
    /// What the step used outside its measured window: set-up (DROP/CREATE), self-checks,
    /// statistics waits.
    #[serde(default)]
    pub outside: Option<WindowCost>,
    /// Index builds (l.x).
    pub index_builds: Vec<IndexBuild>,
    /// Maintenance actions (maint).
    pub maintenance: Vec<MaintAction>,
    /// Database and object sizes after the step.
    pub sizes: Sizes,
    /// Self-checks.
    pub checks: Vec<Check>,
    /// Warnings (rate not met, client saturated...).
    pub warnings: Vec<String>,
    /// Stalls, the writers' lockstep and the cut-off backlog (steps with workers).
    #[serde(default)]
    pub flow: Option<FlowStats>,
    /// The waits for the server to be quiet before the step was measured (what was waited for,
    /// how long): one before the step, and one more after l.i0 dropped a table left by an
    /// earlier run.
    #[serde(default)]
    pub quiet: Vec<QuietWait>,
    /// Largest size of the write-ahead log during the step (SQLite: the `-wal` file after each
    /// commit), bytes; `None` (unknown) for other targets.
    #[serde(default)]
    pub wal_peak_bytes: Option<u64>,
    /// The geek code of every index the step's inserts hit (seed 000's notation, zero
    /// attributes omitted: `pk=(nAsc:1, nRHS:1) marketsegment=(inf) ...`), from the run's key
    /// patterns and, for the insert benchmark's own values, the step's measured insert rate
    /// per table (`ixbench run`; steps that insert).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geek_code: Option<String>,
    /// Size of the write-ahead log when the step ended, bytes; `None` when unknown.
    #[serde(default)]
    pub wal_end_bytes: Option<u64>,
    /// Per node, on a throwaway cluster (`--target galera`): replication figures, server
    /// CPU/IO, node loss. Empty on a single server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<cluster::NodeStep>,
    /// A part of a several-process run (`--client-count` above 1 with `--start-at`): when it
    /// met the other parts at the step's start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub barrier: Option<BarrierStamps>,
    /// A merged step (`ixbench merge`): the window in which every part ran, its rates' time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_window: Option<CommonWindow>,
}

/// When one part of a several-process run met the others at a step's start: Unix seconds on
/// the wall clock the parts share (one host's, or NTP-synced hosts').
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct BarrierStamps {
    /// This part arrived at the step's start.
    pub arrived_unix: f64,
    /// The common start every part was given: written by client 0 a moment ahead, once every
    /// part had arrived and the server was quiet.
    pub released_unix: f64,
    /// This part woke to start the step (at or just after `released_unix`).
    pub started_unix: f64,
}

/// The window of a merged step in which every part ran: from the latest start to the earliest
/// end of the parts' interval lines. The merged rates are its counts over its seconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CommonWindow {
    /// Its start (the latest part's start), Unix seconds.
    pub start_unix: f64,
    /// Its end (the earliest part's end), Unix seconds.
    pub end_unix: f64,
    /// Its length, seconds (0 when the parts never ran at the same time).
    pub seconds: f64,
    /// Its share of the step's whole span (earliest start to latest end), 0..1.
    pub share: f64,
    /// Rows inserted, rows deleted and queries within the window, summed over the parts; an
    /// interval line cut by the window's edge counts in proportion to the part of it inside.
    pub counts: [f64; 3],
}

/// How a step's operations flowed: stalls, the inserters' waits for their deleters, how far
/// the table size moved, the backlog at a cut-off.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct FlowStats {
    /// The longest time in which no operation of the step completed, seconds (exact for gaps
    /// of at least one interval; shorter ones are seen at the interval cuts).
    pub longest_stall_secs: f64,
    /// Interval lines marked `STALLED` (nothing completed for a second or more at their end).
    pub stalled_lines: u64,
    /// The step failed because nothing completed for `--stall-timeout` seconds.
    pub stall_timed_out: bool,
    /// Seconds the inserters waited for their deleters (summed over clients).
    pub insert_wait_secs: f64,
    /// Insert batches that waited for the deleter.
    pub insert_waits: u64,
    /// Largest number of rows by which a client's inserts ran ahead of its deletes (steps
    /// that delete; the table was never larger than at the start by more than the sum).
    pub max_excess_rows: Option<u64>,
    /// Largest number of rows by which a client's deletes ran ahead of its inserts.
    pub max_deficit_rows: Option<u64>,
    /// Spacing of the throttled writers' intended starts (`uniform` or `poisson`).
    pub arrivals: Option<crate::measure::schedule::Arrivals>,
    /// Seconds the throttled inserters' rows were due in (from their schedules' origins until
    /// they stopped, mean over clients): the achieved rate is rows per client over this.
    pub writer_secs: Option<f64>,
}

impl StepResult {
    /// An empty result for a step called `name`.
    pub fn new(name: &str, description: &str) -> Self {
        StepResult {
            name: name.to_string(),
            description: description.to_string(),
            status: Status::Running,
            error: None,
            seconds: 0.0,
            throttled: false,
            target_rate: None,
            achieved_rate: None,
            rate_ok: true,
            totals: Totals::default(),
            latency: Vec::new(),
            summary: SummaryLine::default(),
            client: ProcSnapshot::default(),
            server: None,
            server_reported: None,
            window_secs: None,
            outside: None,
            index_builds: Vec::new(),
            maintenance: Vec::new(),
            sizes: Sizes::default(),
            checks: Vec::new(),
            warnings: Vec::new(),
            flow: None,
            quiet: Vec::new(),
            wal_peak_bytes: None,
            wal_end_bytes: None,
            geek_code: None,
            nodes: Vec::new(),
            barrier: None,
            common_window: None,
        }
    }

    /// Record the client and server figures of the step's measured window.
    pub fn set_window(&mut self, w: WindowCost) {
        self.client = w.client;
        self.server = w.server;
        self.server_reported = w.dbms;
        self.window_secs = Some(w.seconds);
    }

    /// True when every check passed.
    pub fn checks_ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }

    /// Why the step's per-interval rates (`p50`, `p01`) are unknown, when they are: a step
    /// that ran operations but had no interval of at least half the interval length, or one
    /// that times no operations per interval (l.x, maint).
    pub fn interval_rates_unknown(&self) -> Option<&'static str> {
        if self.summary.p50.is_some() && self.summary.p01.is_some() {
            None
        } else if self.totals.ops.iter().any(|&o| o > 0) {
            Some("step shorter than an interval")
        } else {
            Some("no operations timed per interval")
        }
    }

    /// `p01` (or `p50`) as a table shows it: the rate; `n/a (step shorter than an interval)`
    /// where the step's operations ran too briefly for one; `-` (the tables' unknown) in a
    /// step that times no operations per interval.
    pub fn interval_rate_text(&self, v: Option<f64>) -> String {
        match (v, self.interval_rates_unknown()) {
            (Some(v), _) => format!("{v:.0}"),
            (None, _) if self.totals.ops.iter().all(|&o| o == 0) => "-".into(),
            (None, why) => format!("n/a ({})", why.unwrap_or("unknown")),
        }
    }
}
