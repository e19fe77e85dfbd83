//! The result model: what a run stores (`run.json`), with serde, plus the writer that keeps it
//! on disk as the run goes so a run cut off half way keeps every finished step and interval.

pub mod store;

use serde::{Deserialize, Serialize};

use crate::measure::histogram::LatencySummary;
use crate::measure::meter::Totals;
use crate::measure::sys::{HostInfo, ProcSnapshot, ServerSample};
use crate::target::{MaintAction, QuietWait, Sizes, TargetInfo};

/// Version of the `run.json` layout; bumped on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

/// How a run or a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
}

/// One measured index build (or table rebuild).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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
}

/// A timed index build.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
}

/// A self-check after a step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Check {
    /// What was checked (`rows`, `range_rows`, `plan`, ...).
    pub name: String,
    /// Passed?
    pub ok: bool,
    /// What was found.
    pub detail: String,
}

/// Latency summaries of one kind of operation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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

/// The insert benchmark's one-line metrics per step, for comparing DBMSs and configs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SummaryLine {
    /// Rows inserted per second (for l.x: rows indexed per second).
    pub ips: f64,
    /// Queries per second.
    pub qps: f64,
    /// Rows deleted per second.
    pub dps: f64,
    /// Read MB/s caused by the ixbench process (for an embedded DB: the engine's reads).
    pub rmbps: f64,
    /// Write MB/s caused by the ixbench process.
    pub wmbps: f64,
    /// Client context switches per second.
    pub csps: f64,
    /// Client CPU: percent of one core.
    pub cpu_pct: f64,
    /// Client CPU microseconds per operation (per inserted row in load steps, per query in
    /// query steps).
    pub cpupq: f64,
    /// Database size in GB after the step.
    pub dbgb: f64,
    /// Peak RSS of the ixbench process, MB.
    pub rss_mb: f64,
    /// Largest response time of any operation in the step, seconds.
    pub maxop: f64,
    /// Server CPU microseconds per operation (same unit as `cpupq`), when the server's
    /// processes are known.
    #[serde(default)]
    pub srv_cpupq: Option<f64>,
    /// Per-interval insert (or query) rate at the median interval.
    pub p50: f64,
    /// Per-interval rate at the 1st percentile: the bad-interval throughput (higher is better).
    pub p01: f64,
}

/// One step of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// The ixbench process's own resource use during the step.
    pub client: ProcSnapshot,
    /// The server's CPU and I/O during the step (its processes, from /proc), when it runs on
    /// this machine and is not embedded.
    #[serde(default)]
    pub server: Option<ServerSample>,
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
    /// The waits for the server to be quiet before the step was measured (what was waited for,
    /// how long): one before the step, and one more after l.i0 dropped a table left by an
    /// earlier run.
    #[serde(default)]
    pub quiet: Vec<QuietWait>,
    /// Largest size of the write-ahead log during the step (SQLite: the `-wal` file after each
    /// commit), bytes; `None` (unknown) for other targets.
    #[serde(default)]
    pub wal_peak_bytes: Option<u64>,
    /// Size of the write-ahead log when the step ended, bytes; `None` when unknown.
    #[serde(default)]
    pub wal_end_bytes: Option<u64>,
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
            index_builds: Vec::new(),
            maintenance: Vec::new(),
            sizes: Sizes::default(),
            checks: Vec::new(),
            warnings: Vec::new(),
            quiet: Vec::new(),
            wal_peak_bytes: None,
            wal_end_bytes: None,
        }
    }

    /// True when every check passed.
    pub fn checks_ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }
}
