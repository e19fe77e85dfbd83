//! The time-series workload (issue 9): a table `(time, device_id, metric_id, value)` whose new
//! measurements arrive for the latest time interval across all devices, with a retention
//! window (the oldest interval is removed as new ones arrive, so the data set keeps its size),
//! optionally partitioned with the engine's native partitioning (PostgreSQL declarative
//! `RANGE (time)` partitions, optionally sub-partitioned by `HASH (device_id)`, with local
//! indexes; MariaDB `PARTITION BY RANGE ... SUBPARTITION BY HASH`), as TimescaleDB's hypertables
//! are. Retention drops the oldest partition or DELETEs its rows; both are timed.
//!
//! Time is a tick number (`time` = tick, a BIGINT): tick `t` holds one row per device and
//! metric. A partition holds `ticks_per_partition` ticks. Rows are numbered in arrival order
//! (`n` -> tick `n / (devices*metrics)`, then device, then metric) and the clients take the
//! next `rows_per_commit` numbers from a shared counter, so concurrent clients together insert
//! the latest interval in order. The client whose rows first enter partition `p` creates
//! every partition up to `p + ahead` not made yet (partitioned) and removes every one up to
//! `p - keep` not removed yet (the retention unit is the same partition-sized range of ticks
//! with DELETE on an unpartitioned table), under one lock: clients take their rows in order but
//! may reach the lock out of order (a client descheduled between taking the first rows of
//! partition 6 and creating partition 8 while another inserts on into partition 8), and the
//! first to get there does the work of the partitions before its own, so no row finds its
//! partition missing however the threads run.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::Serialize;

use super::{TxnDone, Workload, WorkloadClient};
use crate::dbms::dialect::{HashParts, RangePart};
use crate::dbms::{in_txn, Conn, Dbms, SqlDialect, Stmt, TxnKind, Value};
use crate::measure::clock;
use crate::workload::tables;

/// The table's name.
pub const TABLE: &str = "ts_metrics";

/// Partitions created beyond the one receiving inserts.
pub const AHEAD: u64 = 2;

/// Rows of one multi-row INSERT of the load.
const LOAD_ROWS_PER_STMT: u64 = 200;

/// Primary key order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PkOrder {
    /// `(time, device_id, metric_id)`: inserts at the right end.
    TimeFirst,
    /// `(device_id, time, metric_id)`: one ascending stream per device.
    DeviceFirst,
}

impl PkOrder {
    /// Its name as `--pk` takes it.
    pub fn name(self) -> &'static str {
        match self {
            PkOrder::TimeFirst => "time-first",
            PkOrder::DeviceFirst => "device-first",
        }
    }
}

/// How old rows go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Retention {
    /// Drop the oldest partition (partitioned tables only).
    Drop,
    /// DELETE the oldest interval's rows.
    Delete,
    /// Keep everything (the data set grows).
    None,
}

impl Retention {
    /// Its name as `--retention` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Retention::Drop => "drop",
            Retention::Delete => "delete",
            Retention::None => "none",
        }
    }
}

/// Its place in the lists of workloads (its entry's rank; build.rs orders its options in
/// `ixbench run --help` by it).
pub const RANK: u8 = 2;

/// The help heading of its own options.
pub const HEADING: &str = "Time series (--workload timeseries)";

/// `ixbench timeseries --size` (and `ixbench run --workload timeseries --size`): the flags of
/// a preset.
/// `--size smoke`.
pub const PRESET_SMOKE: crate::workload::registry::Flags =
    &[("devices", "20"), ("time", "3"), ("quiet-timeout", "10")];

/// `--size small`.
pub const PRESET_SMALL: crate::workload::registry::Flags = &[("time", "5")];

/// `--size large`.
pub const PRESET_LARGE: crate::workload::registry::Flags = &[("devices", "1000"), ("time", "300")];

pub fn presets(size: &str) -> crate::workload::registry::Flags {
    match size {
        "smoke" => PRESET_SMOKE,
        "small" => PRESET_SMALL,
        "large" => PRESET_LARGE,
        _ => &[],
    }
}

/// Partitioning of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Partitioning {
    /// One table.
    None,
    /// Native RANGE(time) partitions (PostgreSQL, MariaDB).
    Range,
}

/// The time series' own options (`ixbench timeseries`, `ixbench run --workload timeseries`);
/// its rows per commit is the command's `--rows-per-commit`.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = HEADING)]
pub struct TsOptions {
    /// Devices: each sends one row per metric per tick.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub devices: u64,

    /// Metrics per device.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub metrics: u64,

    /// Ticks (time values) per partition: the retention unit.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub ticks_per_partition: u64,

    /// Partitions kept by retention (the retention window); loaded before the run.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub keep_partitions: u64,

    /// Partitioning: none, or range (native RANGE(time) partitions: PostgreSQL, MariaDB).
    #[arg(long, value_enum, default_value_t = Partitioning::None)]
    pub partitioning: Partitioning,

    /// HASH(device_id) sub-partitions of each range partition (0: none).
    #[arg(long, default_value_t = 0)]
    pub hash_partitions: u64,

    /// Primary key order.
    #[arg(long, value_enum, default_value_t = PkOrder::TimeFirst)]
    pub pk: PkOrder,

    /// Secondary indexes, comma-separated: metric = (metric_id, time), device = (device_id,
    /// time), or none.
    #[arg(long, default_value = "metric,device")]
    pub indexes: String,

    /// Fraction of rows that arrive late (inserted 1-4 transactions after their interval).
    #[arg(long, default_value_t = 0.0)]
    pub backfill: f64,

    /// How the oldest interval goes: drop (its partition), delete (its rows), none. Default:
    /// drop when partitioned, delete otherwise.
    #[arg(long, value_enum)]
    pub retention: Option<Retention>,

    /// Runs of each query after the inserts (0: no queries).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub queries: u64,

    /// Rows of the "latest points of one device" query.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub latest_n: u64,

    /// Run twice with the same rows: range-partitioned (retention by DROP) then
    /// unpartitioned (retention by DELETE), and compare; with --retention none, both keep
    /// every row (the data set grows).
    #[arg(long)]
    pub compare_partitioning: bool,
}

impl TsOptions {
    /// The workload's options for `partitioning`, with `rows_per_commit` rows per INSERT.
    pub fn config(&self, partitioning: Partitioning, rows_per_commit: u64) -> TsConfig {
        let partitioned = partitioning == Partitioning::Range;
        let indexes = self
            .indexes
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty() && s != "none")
            .collect();
        TsConfig {
            devices: self.devices,
            metrics: self.metrics,
            rows_per_commit,
            ticks_per_partition: self.ticks_per_partition,
            keep_partitions: self.keep_partitions,
            partitioned,
            hash_partitions: if partitioned { self.hash_partitions } else { 0 },
            pk: self.pk,
            indexes,
            backfill: self.backfill,
            retention: match (self.retention, partitioned) {
                (Some(r), _) if !self.compare_partitioning || r == Retention::None => r,
                (_, true) => Retention::Drop,
                (_, false) => Retention::Delete,
            },
            latest_n: self.latest_n,
        }
    }

    /// The partitionings to run: both with `--compare-partitioning`.
    pub fn variants(&self) -> Vec<Partitioning> {
        if self.compare_partitioning {
            vec![Partitioning::Range, Partitioning::None]
        } else {
            vec![self.partitioning]
        }
    }
}

/// The workload's options.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TsConfig {
    /// Devices.
    pub devices: u64,
    /// Metrics per device.
    pub metrics: u64,
    /// Rows per INSERT transaction.
    pub rows_per_commit: u64,
    /// Ticks per partition (the retention unit).
    pub ticks_per_partition: u64,
    /// Partitions kept (the retention window; also the partitions loaded first).
    pub keep_partitions: u64,
    /// Native partitioning by RANGE(time).
    pub partitioned: bool,
    /// HASH(device_id) sub-partitions of each range partition (0: none).
    pub hash_partitions: u64,
    /// Primary key order.
    pub pk: PkOrder,
    /// Secondary indexes: `metric` = (metric_id, time), `device` = (device_id, time).
    pub indexes: Vec<String>,
    /// Fraction of rows that arrive late (out of order), 0..=0.5.
    pub backfill: f64,
    /// How the oldest interval goes.
    pub retention: Retention,
    /// Rows returned by the "latest points of one device" query.
    pub latest_n: u64,
}

impl TsConfig {
    /// The ingest `ixbench ddl --workload timeseries` runs around a schema change: one table
    /// (unpartitioned, retention by DELETE) of about `table_size` rows (10 metrics, 10 ticks
    /// per retention unit, 4 units kept), as many rows per commit as the retention window
    /// allows `threads` clients (at most 50).
    pub fn for_ddl(table_size: u32, threads: u64) -> TsConfig {
        let (metrics, ticks, keep) = (10, 10, 4);
        let devices = (u64::from(table_size) / (metrics * ticks * keep)).max(1);
        let window = (keep - 1) * devices * metrics * ticks;
        TsConfig {
            devices,
            metrics,
            rows_per_commit: (window / (8 * threads.max(1))).clamp(1, 50),
            ticks_per_partition: ticks,
            keep_partitions: keep,
            partitioned: false,
            hash_partitions: 0,
            pk: PkOrder::TimeFirst,
            indexes: vec!["metric".into(), "device".into()],
            backfill: 0.0,
            retention: Retention::Delete,
            latest_n: 100,
        }
    }

    /// Rows of one tick.
    pub fn rows_per_tick(&self) -> u64 {
        self.devices * self.metrics
    }

    /// Rows of one partition.
    pub fn rows_per_partition(&self) -> u64 {
        self.rows_per_tick() * self.ticks_per_partition
    }

    /// Rows loaded before the run (the retention window, full).
    pub fn load_rows(&self) -> u64 {
        self.rows_per_partition() * self.keep_partitions
    }

    /// Check the options against each other and the target kind (`sqlite`, `postgres`,
    /// `mysql`), before anything runs.
    pub fn validate(&self, kind: &str, threads: u64) -> Result<()> {
        if self.devices == 0 || self.metrics == 0 || self.ticks_per_partition == 0 {
            bail!("--devices, --metrics and --ticks-per-partition must be at least 1");
        }
        if self.keep_partitions < 2 {
            bail!("--keep-partitions must be at least 2");
        }
        if self.rows_per_commit == 0 || self.rows_per_commit > 2000 {
            bail!("--rows-per-commit must be between 1 and 2000");
        }
        if self.rows_per_partition() > 1_000_000_000_000 {
            bail!("--devices x --metrics x --ticks-per-partition is too large");
        }
        if self.rows_per_commit > self.rows_per_partition() {
            bail!(
                "--rows-per-commit ({}) must be at most the rows of one partition \
                 (devices x metrics x ticks-per-partition = {})",
                self.rows_per_commit,
                self.rows_per_partition()
            );
        }
        if !(0.0..=0.5).contains(&self.backfill) {
            bail!("--backfill must be a fraction between 0 and 0.5");
        }
        // Late rows are held back at most 4 of their client's transactions: they must never
        // fall into a partition already removed.
        if (self.keep_partitions - 1) * self.rows_per_partition()
            < 8 * threads * self.rows_per_commit
        {
            bail!(
                "the retention window is too small for {threads} client(s) of {} rows per commit: \
                 (keep-partitions - 1) x rows per partition must be at least 8 x threads x \
                 rows-per-commit",
                self.rows_per_commit
            );
        }
        for i in &self.indexes {
            if i != "metric" && i != "device" {
                bail!("unknown index {i:?}: expected metric, device or none");
            }
        }
        if self.hash_partitions > 0 && !self.partitioned {
            bail!("--hash-partitions needs --partitioning range");
        }
        if self.hash_partitions > 64 {
            bail!("--hash-partitions must be at most 64");
        }
        let d = crate::dbms::registry::dialect(kind);
        if self.partitioned && !d.range_partitions() {
            bail!(
                "{} has no native partitioning ixbench can use: use --partitioning none",
                d.name()
            );
        }
        if self.retention == Retention::Drop && !self.partitioned {
            bail!("--retention drop needs --partitioning range (an unpartitioned table has no partition to drop): use --retention delete");
        }
        Ok(())
    }

    /// The geek code of each index (seed 000's notation, zero attributes omitted), derived
    /// from the key order: the rows of a tick arrive in (device, metric) order, ticks in
    /// ascending order, so an index led by `time` grows at the right end (one stream), and an
    /// index led by a column with N values followed by `time` gets N ascending streams, the
    /// last one at the right end. With partitions each local index has that shape in the
    /// partition that receives inserts. Late rows (backfill) add a few out-of-order keys.
    pub fn geek_codes(&self) -> Vec<(String, String)> {
        let streams = |n: u64| {
            if n == 1 {
                "(nAsc:1, nRHS:1)".to_string()
            } else {
                format!("(nAsc:{n}, nRHS:1)")
            }
        };
        let mut out = vec![(
            "pk".to_string(),
            match self.pk {
                PkOrder::TimeFirst => streams(1),
                PkOrder::DeviceFirst => streams(self.devices),
            },
        )];
        for i in &self.indexes {
            let n = if i == "metric" {
                self.metrics
            } else {
                self.devices
            };
            out.push((index_name(i), streams(n)));
        }
        out
    }
}

/// The name of secondary index `which` (`metric`, `device`).
pub fn index_name(which: &str) -> String {
    format!("{TABLE}_{which}")
}

/// One retention or partition-maintenance action, timed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RetentionEvent {
    /// `drop partition`, `delete`, `create partition`.
    pub action: String,
    /// The partition (logical, for DELETE) it concerned.
    pub partition: u64,
    /// Wall seconds.
    pub seconds: f64,
    /// Rows removed.
    pub rows: u64,
}

struct Shared {
    cfg: TsConfig,
    kind: &'static str,
    /// The DBMS's placeholders, float type, partition DDL, catalog queries, table options.
    dialect: SqlDialect,
    next_row: AtomicU64,
    /// Partition maintenance done so far (the lock serializes it).
    maint: Mutex<Maint>,
    events: Mutex<Vec<RetentionEvent>>,
}

/// Partition maintenance done so far: the partitions below `next_create` exist (the load made
/// `keep + AHEAD` of them), the intervals below `next_remove` are removed.
struct Maint {
    next_create: u64,
    next_remove: u64,
}

/// The time-series workload.
pub struct TimeSeries {
    sh: Arc<Shared>,
    seed: u64,
}

/// The value of row `n` (deterministic, so the same seed gives the same rows).
fn value_of(seed: u64, n: u64) -> f64 {
    let mut x = n ^ seed.rotate_left(17) ^ 0x9e37_79b9_7f4a_7c15;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    (x % 100_000) as f64 / 100.0
}

impl TimeSeries {
    /// The workload for `dbms`; `cfg` must have been validated.
    pub fn new(cfg: TsConfig, dbms: &dyn Dbms, seed: u64) -> Result<Self> {
        Ok(TimeSeries::for_dialect(
            cfg,
            dbms.kind(),
            dbms.dialect(),
            seed,
        ))
    }

    /// The workload in dialect `d` of a target of kind `kind`.
    fn for_dialect(cfg: TsConfig, kind: &'static str, d: &SqlDialect, seed: u64) -> Self {
        TimeSeries {
            sh: Arc::new(Shared {
                next_row: AtomicU64::new(cfg.load_rows()),
                maint: Mutex::new(Maint {
                    next_create: cfg.keep_partitions + AHEAD,
                    next_remove: 0,
                }),
                cfg,
                kind,
                dialect: d.clone(),
                events: Mutex::new(Vec::new()),
            }),
            seed,
        }
    }

    /// The options.
    pub fn config(&self) -> &TsConfig {
        &self.sh.cfg
    }

    /// Retention and partition actions so far.
    pub fn events(&self) -> Vec<RetentionEvent> {
        self.sh.events.lock().unwrap().clone()
    }

    /// Rows numbered so far (the next row's number).
    pub fn next_row(&self) -> u64 {
        self.sh.next_row.load(Ordering::SeqCst)
    }

    /// The newest tick whose rows have all been handed out.
    pub fn complete_ticks(&self) -> u64 {
        self.next_row() / self.sh.cfg.rows_per_tick()
    }

    /// The oldest tick retention has not removed.
    pub fn oldest_tick(&self) -> u64 {
        let c = &self.sh.cfg;
        if c.retention == Retention::None {
            return 0;
        }
        let current = self.next_row().saturating_sub(1) / c.rows_per_partition();
        current.saturating_sub(c.keep_partitions - 1) * c.ticks_per_partition
    }

    fn create_sql(&self) -> String {
        let sh = &self.sh;
        let pk = match sh.cfg.pk {
            PkOrder::TimeFirst => "time, device_id, metric_id",
            PkOrder::DeviceFirst => "device_id, time, metric_id",
        };
        let mut s = format!(
            "CREATE TABLE {TABLE} (time BIGINT NOT NULL, device_id INT NOT NULL, \
             metric_id INT NOT NULL, value {} NOT NULL, PRIMARY KEY ({pk}))",
            sh.dialect.float_type()
        );
        if sh.cfg.partitioned {
            s.push_str(&sh.dialect.partition_by_sql("time"));
        }
        s.push_str(sh.dialect.table_options());
        s
    }

    /// The name of range partition `p` (PostgreSQL: a table; MariaDB: a partition).
    fn partition_name(&self, p: u64) -> String {
        self.sh.dialect.range_partition_name(TABLE, p)
    }

    /// Range partition `p`: its name and ticks.
    fn range_part(&self, p: u64) -> RangePart {
        let t = self.sh.cfg.ticks_per_partition;
        RangePart {
            name: self.partition_name(p),
            lo: p * t,
            hi: (p + 1) * t,
        }
    }

    /// The hash sub-partitions of every range partition.
    fn hash_parts(&self) -> HashParts<'static> {
        HashParts {
            column: "device_id",
            count: self.sh.cfg.hash_partitions,
        }
    }

    /// The statements creating range partition `p` (PostgreSQL: a table and its hash
    /// sub-partitions; MariaDB: ADD PARTITION).
    fn create_partition_sql(&self, p: u64) -> Vec<String> {
        self.sh
            .dialect
            .add_range_partition_sql(TABLE, self.hash_parts(), &self.range_part(p))
    }

    /// Create the table (refusing one ixbench did not create), its partitions and indexes.
    pub fn create_table(&self, conn: &mut dyn Conn) -> Result<()> {
        let sh = &self.sh;
        let c = &sh.cfg;
        let at = clock::utc_now().to_rfc3339();
        tables::prepare_new(conn, sh.kind, TABLE)?;
        tables::create_owned(conn, sh.kind, TABLE, &self.create_sql(), &at)?;
        let first = c.keep_partitions + AHEAD;
        if c.partitioned {
            let parts: Vec<RangePart> = (0..first).map(|p| self.range_part(p)).collect();
            for s in sh
                .dialect
                .partition_table_sql(TABLE, "time", self.hash_parts(), &parts)
            {
                conn.execute(&s)?;
            }
        }
        for i in &c.indexes {
            let cols = if i == "metric" {
                "metric_id, time"
            } else {
                "device_id, time"
            };
            conn.execute(&format!(
                "CREATE INDEX {} ON {TABLE} ({cols})",
                index_name(i)
            ))?;
        }
        Ok(())
    }

    /// The INSERT of `rows` rows.
    fn insert_sql(&self, rows: u64) -> String {
        let d = &self.sh.dialect;
        let mut s = format!("INSERT INTO {TABLE} (time, device_id, metric_id, value) VALUES ");
        for r in 0..rows as usize {
            if r > 0 {
                s.push(',');
            }
            let b = r * 4;
            s.push_str(&format!(
                "({}, {}, {}, {})",
                d.ph(b + 1),
                d.ph(b + 2),
                d.ph(b + 3),
                d.ph(b + 4)
            ));
        }
        s
    }

    /// The partition maintenance a client does when its rows first enter partition `p` (see
    /// the module's comment), on `conn`. Returns the rows retention removed.
    pub fn enter_partition(&self, conn: &mut dyn Conn, p: u64) -> Result<u64> {
        self.sh.enter_partition(self, conn, p)
    }

    /// The partitions (range partitions, in order) that exist now.
    pub fn partitions(&self, conn: &mut dyn Conn) -> Result<Vec<u64>> {
        let rows = match self.sh.dialect.partitions_sql(TABLE) {
            Some(sql) => conn.query_rows(&sql)?,
            None => Vec::new(),
        };
        let prefix = self.partition_name(0);
        let prefix = prefix.trim_end_matches('0');
        let mut v: Vec<u64> = rows
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .filter_map(|n| n.strip_prefix(prefix).and_then(|s| s.parse().ok()))
            .collect();
        v.sort_unstable();
        Ok(v)
    }
}

impl Shared {
    /// Partition maintenance when rows first enter partition `p`: create every partition up to
    /// `p + AHEAD` not made yet, remove every interval up to `p - keep` not removed yet (see the
    /// module's comment). Returns the rows removed.
    fn enter_partition(&self, w: &TimeSeries, conn: &mut dyn Conn, p: u64) -> Result<u64> {
        let mut m = self.maint.lock().unwrap_or_else(|e| e.into_inner());
        let c = &self.cfg;
        let mut removed = 0;
        if c.partitioned {
            // One at a time, so a failed statement leaves `next_create` true for a retry.
            while m.next_create <= p + AHEAD {
                let q = m.next_create;
                let t0 = clock::now();
                for s in w.create_partition_sql(q) {
                    conn.execute(&s)
                        .with_context(|| format!("creating partition {q}"))?;
                }
                self.event("create partition", q, t0, 0);
                m.next_create = q + 1;
            }
        }
        if p < c.keep_partitions {
            return Ok(0);
        }
        while m.next_remove <= p - c.keep_partitions {
            let old = m.next_remove;
            removed += self.remove_interval(conn, old)?;
            m.next_remove = old + 1;
        }
        Ok(removed)
    }

    /// Retention of interval `old`: drop its partition or delete its rows. Returns the rows
    /// removed.
    fn remove_interval(&self, conn: &mut dyn Conn, old: u64) -> Result<u64> {
        let c = &self.cfg;
        let t0 = clock::now();
        let mut removed = 0;
        match c.retention {
            Retention::None => {}
            Retention::Drop => {
                let name = self.dialect.range_partition_name(TABLE, old);
                let count = self.dialect.partition_rows_sql(TABLE, &name);
                removed = conn.query_i64(&count)?.unwrap_or(0).max(0) as u64;
                let drop = self.dialect.drop_partition_sql(TABLE, &name);
                conn.execute(&drop)
                    .with_context(|| format!("dropping partition {old}"))?;
                self.event("drop partition", old, t0, removed);
            }
            Retention::Delete => {
                let hi = (old + 1) * c.ticks_per_partition;
                let st = conn.prepare(&format!(
                    "DELETE FROM {TABLE} WHERE time < {}",
                    self.dialect.ph(1)
                ))?;
                removed = in_txn(conn, TxnKind::Write, |conn| {
                    conn.exec(st, &[Value::Int(hi as i64)])
                })
                .with_context(|| format!("deleting the rows of interval {old}"))?;
                self.event("delete", old, t0, removed);
            }
        }
        Ok(removed)
    }

    fn event(&self, action: &str, partition: u64, t0: Instant, rows: u64) {
        self.events.lock().unwrap().push(RetentionEvent {
            action: action.into(),
            partition,
            seconds: clock::since(t0).as_secs_f64(),
            rows,
        });
    }
}

impl Workload for TimeSeries {
    fn name(&self) -> &str {
        "timeseries"
    }

    fn tables(&self) -> Vec<String> {
        vec![TABLE.to_string()]
    }

    fn load(&self, dbms: &dyn Dbms, _threads: usize) -> Result<()> {
        let mut conn = dbms.connect()?;
        let conn = conn.as_mut();
        // Shown and bounded while another session's lock holds it up.
        let what = format!("creating {TABLE}");
        crate::dbms::lock_watch::watched(dbms, conn, &what, |c| self.create_table(c))?;
        let total = self.sh.cfg.load_rows();
        let full = conn.prepare(&self.insert_sql(LOAD_ROWS_PER_STMT))?;
        let one = conn.prepare(&self.insert_sql(1))?;
        let mut n = 0;
        while n < total {
            let end = (n + 20 * LOAD_ROWS_PER_STMT).min(total);
            in_txn(conn, TxnKind::Write, |conn| {
                let mut m = n;
                let mut buf = Vec::with_capacity(4 * LOAD_ROWS_PER_STMT as usize);
                while m < end {
                    let k = if end - m >= LOAD_ROWS_PER_STMT {
                        LOAD_ROWS_PER_STMT
                    } else {
                        1
                    };
                    buf.clear();
                    for r in m..m + k {
                        self.row_values(r, &mut buf);
                    }
                    conn.exec(if k == 1 { one } else { full }, &buf)?;
                    m += k;
                }
                Ok(())
            })?;
            n = end;
        }
        Ok(())
    }

    fn client(&self, conn: &mut dyn Conn, id: usize, seed: u64) -> Result<Box<dyn WorkloadClient>> {
        let full = conn.prepare(&self.insert_sql(self.sh.cfg.rows_per_commit))?;
        let one = conn.prepare(&self.insert_sql(1))?;
        let _ = id;
        Ok(Box::new(TsClient {
            w: TimeSeries {
                sh: self.sh.clone(),
                seed: self.seed,
            },
            full,
            one,
            rng: Pcg64Mcg::seed_from_u64(seed ^ 0x7153_0000),
            held: VecDeque::new(),
            txn_no: 0,
            batch: None,
        }))
    }
}

impl TimeSeries {
    /// Append row `n`'s four values to `buf`.
    fn row_values(&self, n: u64, buf: &mut Vec<Value<'static>>) {
        let c = &self.sh.cfg;
        let tick = n / c.rows_per_tick();
        let r = n % c.rows_per_tick();
        buf.push(Value::Int(tick as i64));
        buf.push(Value::Int((r / c.metrics) as i64));
        buf.push(Value::Int((r % c.metrics) as i64));
        buf.push(Value::Float(value_of(self.seed, n)));
    }
}

struct TsClient {
    w: TimeSeries,
    full: Stmt,
    one: Stmt,
    rng: Pcg64Mcg,
    /// Late rows: (the transaction number they are due in, row number).
    held: VecDeque<(u64, u64)>,
    txn_no: u64,
    /// The batch being inserted: kept across a retry (a transient error rolls the INSERT
    /// back), so its rows are inserted once and its partition maintenance is done once.
    batch: Option<Batch>,
}

/// One transaction's rows and what was done for them so far.
struct Batch {
    /// Row numbers to insert (late rows due now first).
    rows: Vec<u64>,
    /// Partitions whose maintenance is still to do, in order.
    enter: VecDeque<u64>,
    /// Rows retention removed for this batch (committed already).
    deleted: u64,
    /// Maintenance actions done.
    actions: u32,
}

impl TsClient {
    /// The next batch: the next `rows_per_commit` row numbers, less the rows held back as
    /// late, plus the late rows due now.
    fn next_batch(&mut self) -> Batch {
        let c = &self.w.sh.cfg;
        let r = c.rows_per_commit;
        let start = self.w.sh.next_row.fetch_add(r, Ordering::SeqCst);
        let end = start + r;
        let rpp = c.rows_per_partition();
        let enter = (start / rpp..=(end - 1) / rpp)
            .filter(|p| p * rpp >= start && p * rpp < end)
            .collect();
        self.txn_no += 1;
        let mut rows: Vec<u64> = Vec::with_capacity(r as usize + 8);
        while self
            .held
            .front()
            .is_some_and(|(due, _)| *due <= self.txn_no)
        {
            rows.push(self.held.pop_front().unwrap().1);
        }
        for n in start..end {
            if c.backfill > 0.0 && self.rng.random::<f64>() < c.backfill {
                let due = self.txn_no + self.rng.random_range(1..=4u64);
                let at = self.held.partition_point(|(d, _)| *d <= due);
                self.held.insert(at, (due, n));
            } else {
                rows.push(n);
            }
        }
        Batch {
            rows,
            enter,
            deleted: 0,
            actions: 0,
        }
    }
}

impl WorkloadClient for TsClient {
    fn run(&mut self, conn: &mut dyn Conn) -> Result<TxnDone> {
        let sh = self.w.sh.clone();
        let r = sh.cfg.rows_per_commit;
        if self.batch.is_none() {
            self.batch = Some(self.next_batch());
        }
        let b = self.batch.as_mut().unwrap();
        // Partition maintenance first, so the partitions the rows go to exist.
        while let Some(&p) = b.enter.front() {
            b.deleted += sh.enter_partition(&self.w, conn, p)?;
            b.actions += 1;
            b.enter.pop_front();
        }
        let (full, one) = (self.full, self.one);
        let w = &self.w;
        let rows = &b.rows;
        let mut writes = 0u32;
        let inserted = in_txn(conn, TxnKind::Write, |conn| {
            let mut buf: Vec<Value<'static>> = Vec::with_capacity(4 * r as usize);
            let mut chunks = rows.chunks_exact(r as usize);
            let mut n = 0;
            for ch in &mut chunks {
                buf.clear();
                for &x in ch {
                    w.row_values(x, &mut buf);
                }
                n += conn.exec(full, &buf)?;
                writes += 1;
            }
            for &x in chunks.remainder() {
                buf.clear();
                w.row_values(x, &mut buf);
                n += conn.exec(one, &buf)?;
                writes += 1;
            }
            Ok(n)
        })?;
        let b = self.batch.take().unwrap();
        Ok(TxnDone {
            reads: 0,
            writes,
            other: 2 + b.actions,
            rows: inserted + b.deleted,
            inserted: b.rows.len() as u64,
            deleted: b.deleted,
        })
    }
}

/// One of the queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueryKind {
    /// One device's latest N points.
    Latest,
    /// One device over a time range (half a partition).
    DeviceRange,
    /// All devices for one metric over a short range (two ticks).
    MetricRange,
    /// Min/max value per device over one partition's time range.
    MinMax,
}

impl QueryKind {
    /// All, in report order.
    pub const ALL: [QueryKind; 4] = [
        QueryKind::Latest,
        QueryKind::DeviceRange,
        QueryKind::MetricRange,
        QueryKind::MinMax,
    ];

    /// Its name in results.
    pub fn name(self) -> &'static str {
        match self {
            QueryKind::Latest => "latest",
            QueryKind::DeviceRange => "device_range",
            QueryKind::MetricRange => "metric_range",
            QueryKind::MinMax => "minmax",
        }
    }

    /// Whether its predicate bounds time (so range partitions can be pruned).
    pub fn bounds_time(self) -> bool {
        self != QueryKind::Latest
    }

    /// Whether its predicate names one device (so hash sub-partitions can be pruned).
    pub fn names_device(self) -> bool {
        matches!(self, QueryKind::Latest | QueryKind::DeviceRange)
    }
}

/// The parameters of one query: a device, a metric, a tick range `[lo, hi)`.
#[derive(Debug, Clone, Copy)]
pub struct QueryArgs {
    /// Device.
    pub device: u64,
    /// Metric.
    pub metric: u64,
    /// First tick.
    pub lo: u64,
    /// Tick after the last.
    pub hi: u64,
}

impl TimeSeries {
    /// The SQL of query `q`: with `args`' values as literals when given (for EXPLAIN), else
    /// with placeholders (device, metric, lo, hi as the query needs them).
    pub fn query_sql(&self, q: QueryKind, args: Option<QueryArgs>) -> String {
        let d = &self.sh.dialect;
        let v = |i: usize, x: fn(&QueryArgs) -> u64| match &args {
            Some(a) => x(a).to_string(),
            None => d.ph(i),
        };
        match q {
            QueryKind::Latest => format!(
                "SELECT time, metric_id, value FROM {TABLE} WHERE device_id = {} \
                 ORDER BY time DESC LIMIT {}",
                v(1, |a| a.device),
                self.sh.cfg.latest_n
            ),
            QueryKind::DeviceRange => format!(
                "SELECT time, metric_id, value FROM {TABLE} WHERE device_id = {} \
                 AND time >= {} AND time < {}",
                v(1, |a| a.device),
                v(2, |a| a.lo),
                v(3, |a| a.hi)
            ),
            QueryKind::MetricRange => format!(
                "SELECT device_id, time, value FROM {TABLE} WHERE metric_id = {} \
                 AND time >= {} AND time < {}",
                v(1, |a| a.metric),
                v(2, |a| a.lo),
                v(3, |a| a.hi)
            ),
            QueryKind::MinMax => format!(
                "SELECT device_id, MIN(value), MAX(value) FROM {TABLE} \
                 WHERE time >= {} AND time < {} GROUP BY device_id",
                v(1, |a| a.lo),
                v(2, |a| a.hi)
            ),
        }
    }

    /// Random parameters for query `q`, with its time range inside the complete retained
    /// ticks `[oldest, newest)`.
    pub fn query_args(
        &self,
        q: QueryKind,
        rng: &mut Pcg64Mcg,
        oldest: u64,
        newest: u64,
    ) -> QueryArgs {
        let c = &self.sh.cfg;
        let len = match q {
            QueryKind::Latest => 0,
            QueryKind::DeviceRange => (c.ticks_per_partition / 2).max(1),
            QueryKind::MetricRange => 2,
            QueryKind::MinMax => c.ticks_per_partition,
        };
        let span = newest.saturating_sub(oldest);
        let len = len.min(span.max(1));
        let lo = oldest + rng.random_range(0..=span.saturating_sub(len));
        QueryArgs {
            device: rng.random_range(0..c.devices),
            metric: rng.random_range(0..c.metrics),
            lo,
            hi: lo + len,
        }
    }

    /// The params of query `q` with `a`, in placeholder order.
    pub fn query_params(q: QueryKind, a: &QueryArgs) -> Vec<Value<'static>> {
        let i = |x: u64| Value::Int(x as i64);
        match q {
            QueryKind::Latest => vec![i(a.device)],
            QueryKind::DeviceRange => vec![i(a.device), i(a.lo), i(a.hi)],
            QueryKind::MetricRange => vec![i(a.metric), i(a.lo), i(a.hi)],
            QueryKind::MinMax => vec![i(a.lo), i(a.hi)],
        }
    }

    /// The rows query `q` must return for `a` when every row of its range is present.
    pub fn expected_rows(&self, q: QueryKind, a: &QueryArgs) -> u64 {
        let c = &self.sh.cfg;
        match q {
            QueryKind::Latest => c.latest_n,
            QueryKind::DeviceRange => (a.hi - a.lo) * c.metrics,
            QueryKind::MetricRange => (a.hi - a.lo) * c.devices,
            QueryKind::MinMax => c.devices,
        }
    }

    /// The plan of query `q` with `a` and the partitions it reads: (plan text, range
    /// partitions read, hash sub-partitions read per range partition at most). Partitions
    /// are `None` for an unpartitioned table.
    pub fn plan(
        &self,
        conn: &mut dyn Conn,
        q: QueryKind,
        a: &QueryArgs,
    ) -> Result<(String, Option<Vec<u64>>, Option<u64>)> {
        let sql = self.query_sql(q, Some(*a));
        let c = &self.sh.cfg;
        if !c.partitioned {
            return Ok((conn.explain(&sql)?, None, None));
        }
        let plan = self.sh.dialect.explain_partitions(conn, &sql, TABLE)?;
        let max_sub = plan.read.values().copied().max();
        Ok((
            plan.text,
            Some(plan.read.keys().copied().collect()),
            if c.hash_partitions > 0 { max_sub } else { None },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statements on every engine, byte for byte as they were (`testdata/timeseries.sql`).
    #[test]
    fn sql_text_on_every_engine() {
        let got = crate::dbms::dialect::every_engine_text(|d| {
            let mut lines = Vec::new();
            for partitioned in [false, true] {
                let ts = TimeSeries::for_dialect(
                    TsConfig {
                        partitioned,
                        ..cfg()
                    },
                    "x",
                    d,
                    1,
                );
                lines.push(ts.create_sql());
                lines.push(ts.insert_sql(2));
                lines.push(ts.partition_name(3));
                for q in QueryKind::ALL {
                    lines.push(ts.query_sql(q, None));
                    let a = QueryArgs {
                        device: 4,
                        metric: 2,
                        lo: 10,
                        hi: 20,
                    };
                    lines.push(ts.query_sql(q, Some(a)));
                }
            }
            lines.join("\n")
        });
        assert_eq!(got, include_str!("testdata/timeseries.sql"));
    }

    fn cfg() -> TsConfig {
        TsConfig {
            devices: 20,
            metrics: 3,
            rows_per_commit: 10,
            ticks_per_partition: 5,
            keep_partitions: 3,
            partitioned: false,
            hash_partitions: 0,
            pk: PkOrder::TimeFirst,
            indexes: vec!["metric".into(), "device".into()],
            backfill: 0.0,
            retention: Retention::Delete,
            latest_n: 10,
        }
    }

    #[test]
    fn geek_codes_follow_the_key_order() {
        let mut c = cfg();
        let codes = c.geek_codes();
        assert_eq!(
            codes,
            vec![
                ("pk".into(), "(nAsc:1, nRHS:1)".into()),
                ("ts_metrics_metric".into(), "(nAsc:3, nRHS:1)".into()),
                ("ts_metrics_device".into(), "(nAsc:20, nRHS:1)".into()),
            ]
        );
        c.pk = PkOrder::DeviceFirst;
        c.indexes.clear();
        assert_eq!(
            c.geek_codes(),
            vec![("pk".into(), "(nAsc:20, nRHS:1)".into())]
        );
    }

    #[test]
    fn validation() {
        let c = cfg();
        c.validate("sqlite", 1).unwrap();
        let mut p = cfg();
        p.partitioned = true;
        assert!(p
            .validate("sqlite", 1)
            .unwrap_err()
            .to_string()
            .contains("SQLite"));
        p.validate("postgres", 1).unwrap();
        let mut d = cfg();
        d.retention = Retention::Drop;
        assert!(d.validate("postgres", 1).is_err());
        let mut b = cfg();
        b.rows_per_commit = 301; // more than one partition (300 rows)
        let e = b.validate("sqlite", 1).unwrap_err().to_string();
        assert!(e.contains("at most the rows of one partition"), "{e}");
        // 8 x threads x rows per commit must fit in (keep - 1) partitions = 600 rows.
        cfg().validate("sqlite", 7).unwrap();
        let e = cfg().validate("sqlite", 8).unwrap_err().to_string();
        assert!(e.contains("retention window is too small"), "{e}");
        let mut i = cfg();
        i.indexes = vec!["colour".into()];
        assert!(i.validate("sqlite", 1).is_err());
    }

    #[test]
    fn rows_are_numbered_by_tick_device_metric() {
        let c = cfg();
        assert_eq!(c.rows_per_partition(), 300);
        assert_eq!(c.load_rows(), 900);
        // Row values are deterministic per seed and differ between rows.
        assert_eq!(value_of(1, 7), value_of(1, 7));
        assert_ne!(value_of(1, 7), value_of(1, 8));
    }
}
