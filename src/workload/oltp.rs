//! The sysbench-compatible OLTP workload: tables `sbtest1..N` and sysbench's transactions
//! (`oltp_read_write`, `oltp_read_only`, `oltp_write_only`, `oltp_insert`,
//! `oltp_update_index`, `oltp_update_non_index`, `oltp_point_select`) with sysbench's
//! statement mixes, defaults and value shapes, so figures compare with sysbench's.
//!
//! Written from sysbench 1.0's documented behaviour (Debian's `oltp_common.lua` and the OLTP
//! scripts, read, not copied):
//! - table: `id` integer PK assigned by the DBMS (AUTO_INCREMENT, identity, rowid), `k`
//!   integer with the secondary index `k_N`, `c` CHAR(120), `pad` CHAR(60); loaded like
//!   `sysbench prepare`: multi-row INSERTs without `id` (ids 1..table_size), then
//!   `CREATE INDEX k_N`;
//! - `c` is 10 groups of 11 random digits joined by `-` (119 characters), `pad` 5 such groups
//!   (59 characters); `k` and every id drawn from sysbench's default distribution
//!   (`--rand-type=special`: a quarter of the draws the mean of 12 uniform values over the
//!   range, three quarters uniform within the 1% of the range at its centre); the table of
//!   each statement group uniform over the tables;
//! - a transaction: BEGIN (unless `skip_trx`), `point_selects` (10) `SELECT c ... WHERE id=?`
//!   on one table, then each of `simple_ranges`, `sum_ranges`, `order_ranges`,
//!   `distinct_ranges` (1 each, on a table of their own, ids `id..id+range_size-1`,
//!   `range_size` 100), `index_updates` (`SET k=k+1`), `non_index_updates` (`SET c=?`),
//!   `delete_inserts` (DELETE id, then INSERT the same id with new k, c, pad), COMMIT; the
//!   single-statement tests run one autocommit statement (sysbench starts no transaction for
//!   them).
//!
//! Counted as sysbench counts: SELECTs are reads, INSERT/UPDATE/DELETE writes, BEGIN/COMMIT
//! other; queries = all of them.

use std::sync::Arc;

use anyhow::{bail, Context, Result};
use rand::{Rng, RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{TxnDone, Workload, WorkloadClient};
use crate::dbms::{in_txn, Conn, Dbms, SqlDialect, Stmt, TxnKind, Value, MAX_PREPARED};
use crate::workload::tables;

/// The workload's options and transaction types are result types too (`run.json` stores
/// them), so they live with the results; the workload adds their behaviour here.
pub use crate::results::oltp::{Mix, OltpConfig, RandType};

impl Mix {
    /// Every mix, in sysbench's usual order.
    pub const ALL: [Mix; 7] = [
        Mix::OltpReadWrite,
        Mix::OltpReadOnly,
        Mix::OltpWriteOnly,
        Mix::OltpInsert,
        Mix::OltpUpdateIndex,
        Mix::OltpUpdateNonIndex,
        Mix::OltpPointSelect,
    ];

    /// sysbench's name.
    pub fn name(self) -> &'static str {
        match self {
            Mix::OltpReadWrite => "oltp_read_write",
            Mix::OltpReadOnly => "oltp_read_only",
            Mix::OltpWriteOnly => "oltp_write_only",
            Mix::OltpInsert => "oltp_insert",
            Mix::OltpUpdateIndex => "oltp_update_index",
            Mix::OltpUpdateNonIndex => "oltp_update_non_index",
            Mix::OltpPointSelect => "oltp_point_select",
        }
    }

    /// The mix of a sysbench name.
    pub fn parse(s: &str) -> Option<Mix> {
        Mix::ALL.into_iter().find(|m| m.name() == s)
    }

    /// True for the mixes sysbench runs in an explicit transaction (unless `skip_trx`).
    pub fn transactional(self) -> bool {
        matches!(
            self,
            Mix::OltpReadWrite | Mix::OltpReadOnly | Mix::OltpWriteOnly
        )
    }

    /// True when the mix changes rows.
    pub fn writes(self) -> bool {
        !matches!(self, Mix::OltpReadOnly | Mix::OltpPointSelect)
    }
}

/// The OLTP mixes' place in the lists of workloads (their entries' rank; build.rs orders their
/// options in `ixbench run --help` by it).
pub const RANK: u8 = 1;

/// The help heading of the OLTP mixes' own options.
pub const HEADING: &str = "OLTP workloads (--workload oltp_*)";

/// `ixbench oltp --size` (and `ixbench run --workload oltp_* --size`): the flags of a preset.
/// `--size smoke`.
pub const PRESET_SMOKE: crate::workload::registry::Flags = &[
    ("table-size", "1000"),
    ("time", "3"),
    ("quiet-timeout", "10"),
];

/// `--size small`.
pub const PRESET_SMALL: crate::workload::registry::Flags =
    &[("table-size", "10000"), ("time", "10")];

/// `--size large`.
pub const PRESET_LARGE: crate::workload::registry::Flags =
    &[("table-size", "1000000"), ("time", "300")];

pub fn presets(size: &str) -> crate::workload::registry::Flags {
    match size {
        "smoke" => PRESET_SMOKE,
        "small" => PRESET_SMALL,
        "large" => PRESET_LARGE,
        _ => &[],
    }
}

/// The OLTP mixes' own options (`ixbench oltp`, `ixbench run --workload oltp_*`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = HEADING)]
pub struct OltpOptions {
    /// Tables `sbtest1..N`.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub tables: u32,

    /// Rows per table.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=1_073_741_823))]
    pub table_size: u32,

    /// Use the tables of an earlier `ixbench oltp` in this database (they must have been
    /// created by ixbench) instead of loading new ones.
    #[arg(long)]
    pub reuse: bool,

    /// Connections that load the tables in parallel (default: --threads, at most --tables).
    #[arg(long)]
    pub load_threads: Option<usize>,

    /// Rows of a range select.
    #[arg(long, default_value_t = 100)]
    pub range_size: u32,

    /// Point selects per transaction (oltp_point_select: 1).
    #[arg(long)]
    pub point_selects: Option<u32>,

    /// Simple range selects per transaction.
    #[arg(long, default_value_t = 1)]
    pub simple_ranges: u32,

    /// SUM() range selects per transaction.
    #[arg(long, default_value_t = 1)]
    pub sum_ranges: u32,

    /// ORDER BY range selects per transaction.
    #[arg(long, default_value_t = 1)]
    pub order_ranges: u32,

    /// DISTINCT range selects per transaction.
    #[arg(long, default_value_t = 1)]
    pub distinct_ranges: u32,

    /// UPDATEs of the indexed column k per transaction.
    #[arg(long, default_value_t = 1)]
    pub index_updates: u32,

    /// UPDATEs of the unindexed column c per transaction.
    #[arg(long, default_value_t = 1)]
    pub non_index_updates: u32,

    /// DELETE+INSERT pairs per transaction.
    #[arg(long, default_value_t = 1)]
    pub delete_inserts: u32,

    /// Run the range selects: on or off.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "on|off", value_parser = parse_on_off)]
    pub range_selects: bool,

    /// Autocommit every statement: no BEGIN/COMMIT.
    #[arg(long)]
    pub skip_trx: bool,

    /// Distribution of ids and k values (sysbench 1.0's default: special).
    #[arg(long, value_enum, default_value_t = RandType::Special)]
    pub rand_type: RandType,
}

fn parse_on_off(s: &str) -> std::result::Result<bool, String> {
    match s {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        _ => Err("expected on or off".into()),
    }
}

impl OltpOptions {
    /// The workload's configuration for `mix`.
    pub fn config(&self, mix: Mix) -> OltpConfig {
        let mut c = OltpConfig::new(mix, self.tables, self.table_size);
        c.range_size = self.range_size;
        if let Some(p) = self.point_selects {
            c.point_selects = p;
        }
        c.simple_ranges = self.simple_ranges;
        c.sum_ranges = self.sum_ranges;
        c.order_ranges = self.order_ranges;
        c.distinct_ranges = self.distinct_ranges;
        c.index_updates = self.index_updates;
        c.non_index_updates = self.non_index_updates;
        c.delete_inserts = self.delete_inserts;
        c.range_selects = self.range_selects;
        c.skip_trx = self.skip_trx;
        c.rand_type = self.rand_type;
        c
    }
}

/// Percentage of the range that is the hot spot of the special distribution
/// (sysbench `--rand-spec-pct`).
const SPEC_PCT: f64 = 1.0;
/// Percentage of draws that fall in the hot spot (sysbench `--rand-spec-res`).
const SPEC_RES: f64 = 75.0;
/// Uniform draws averaged for the rest (sysbench `--rand-spec-iter`).
const SPEC_ITER: u32 = 12;

/// Digits per group of the `c` and `pad` values.
const GROUP: usize = 11;
/// Groups of `c` (119 characters).
const C_GROUPS: usize = 10;
/// Groups of `pad` (59 characters).
const PAD_GROUPS: usize = 5;

/// Length of a `c` value.
pub const C_LEN: usize = C_GROUPS * (GROUP + 1) - 1;
/// Length of a `pad` value.
pub const PAD_LEN: usize = PAD_GROUPS * (GROUP + 1) - 1;

/// Rows per statement of the load (and fewer when the DBMS takes fewer parameters).
const LOAD_ROWS_PER_STATEMENT: usize = 1000;
/// Rows per commit of the load.
const LOAD_ROWS_PER_COMMIT: usize = 10_000;

impl OltpConfig {
    /// sysbench's defaults for `mix` with `tables` tables of `table_size` rows.
    pub fn new(mix: Mix, tables: u32, table_size: u32) -> Self {
        OltpConfig {
            mix,
            tables,
            table_size,
            range_size: 100,
            point_selects: if mix == Mix::OltpPointSelect { 1 } else { 10 },
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            skip_trx: false,
            rand_type: RandType::Special,
        }
    }

    /// Statements of one transaction by class (reads, writes, other), as sysbench counts them.
    pub fn statements_per_txn(&self) -> (u32, u32, u32) {
        let ranges = if self.range_selects {
            self.simple_ranges + self.sum_ranges + self.order_ranges + self.distinct_ranges
        } else {
            0
        };
        let writes = self.index_updates + self.non_index_updates + 2 * self.delete_inserts;
        let other = if self.mix.transactional() && !self.skip_trx {
            2
        } else {
            0
        };
        match self.mix {
            Mix::OltpReadWrite => (self.point_selects + ranges, writes, other),
            Mix::OltpReadOnly => (self.point_selects + ranges, 0, other),
            Mix::OltpWriteOnly => (0, writes, other),
            Mix::OltpInsert | Mix::OltpUpdateIndex | Mix::OltpUpdateNonIndex => (0, 1, 0),
            Mix::OltpPointSelect => (1, 0, 0),
        }
    }

    /// Check the values make sense before anything is created.
    pub fn validate(&self) -> Result<()> {
        if self.tables == 0 || self.tables > 10_000 {
            bail!("--tables must be between 1 and 10000");
        }
        if self.table_size == 0 || self.table_size > i32::MAX as u32 / 2 {
            bail!(
                "--table-size must be between 1 and {} (sysbench's ids are 32-bit)",
                i32::MAX / 2
            );
        }
        if self.range_size == 0 || self.range_size > self.table_size {
            bail!("--range-size must be between 1 and --table-size");
        }
        Ok(())
    }
}

/// Table `n` (from 1).
pub fn table_name(n: u32) -> String {
    format!("sbtest{n}")
}

/// The secondary index of table `n`.
pub fn index_name(n: u32) -> String {
    format!("k_{n}")
}

/// Rows per load statement when a statement may bind `max_params` parameters (3 a row).
fn rows_per_statement(max_params: usize) -> usize {
    LOAD_ROWS_PER_STATEMENT.min(max_params / 3).max(1)
}

/// The statements of the workload, one slot per kind (see [`Sql`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Point = 0,
    Simple,
    Sum,
    Order,
    Distinct,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    InsertId,
    InsertAuto,
}

const KINDS: usize = 10;

/// SQL per dialect: what differs is the PK column (the 32-bit key the DBMS assigns, see
/// [`crate::dbms::dialect::DbmsSql::int_auto_pk`]), placeholders and table options.
#[derive(Debug, Clone)]
struct Sql {
    kind: &'static str,
    dialect: SqlDialect,
}

impl Sql {
    /// The statements in dialect `d` of a target of kind `kind`.
    fn new(kind: &'static str, d: &SqlDialect) -> Self {
        Sql {
            kind,
            dialect: d.clone(),
        }
    }

    fn ph(&self, n: usize) -> String {
        self.dialect.ph(n)
    }

    fn create_table(&self, t: &str) -> String {
        format!(
            "CREATE TABLE {t} (id {}, k INTEGER DEFAULT 0 NOT NULL, \
             c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL){}",
            self.dialect.int_auto_pk(),
            self.dialect.table_options()
        )
    }

    fn create_index(&self, n: u32) -> String {
        format!("CREATE INDEX {} ON {} (k)", index_name(n), table_name(n))
    }

    /// Rows per load statement within the DBMS's parameter limit.
    fn load_rows_per_statement(&self) -> usize {
        rows_per_statement(self.dialect.max_params())
    }

    fn load_insert(&self, t: &str, rows: usize) -> String {
        let mut s = format!("INSERT INTO {t} (k, c, pad) VALUES ");
        for r in 0..rows {
            if r > 0 {
                s.push(',');
            }
            s.push_str(&format!(
                "({}, {}, {})",
                self.ph(3 * r + 1),
                self.ph(3 * r + 2),
                self.ph(3 * r + 3)
            ));
        }
        s
    }

    fn statement(&self, kind: Kind, t: &str) -> String {
        let (p1, p2, p3, p4) = (self.ph(1), self.ph(2), self.ph(3), self.ph(4));
        match kind {
            Kind::Point => format!("SELECT c FROM {t} WHERE id={p1}"),
            Kind::Simple => format!("SELECT c FROM {t} WHERE id BETWEEN {p1} AND {p2}"),
            Kind::Sum => format!("SELECT SUM(k) FROM {t} WHERE id BETWEEN {p1} AND {p2}"),
            Kind::Order => {
                format!("SELECT c FROM {t} WHERE id BETWEEN {p1} AND {p2} ORDER BY c")
            }
            Kind::Distinct => {
                format!("SELECT DISTINCT c FROM {t} WHERE id BETWEEN {p1} AND {p2} ORDER BY c")
            }
            Kind::IndexUpdate => format!("UPDATE {t} SET k=k+1 WHERE id={p1}"),
            Kind::NonIndexUpdate => format!("UPDATE {t} SET c={p1} WHERE id={p2}"),
            Kind::Delete => format!("DELETE FROM {t} WHERE id={p1}"),
            Kind::InsertId => {
                format!("INSERT INTO {t} (id, k, c, pad) VALUES ({p1}, {p2}, {p3}, {p4})")
            }
            Kind::InsertAuto => format!("INSERT INTO {t} (k, c, pad) VALUES ({p1}, {p2}, {p3})"),
        }
    }
}

/// Random values as sysbench draws them.
struct Gen {
    rng: Pcg64Mcg,
    rand_type: RandType,
    c: [u8; C_LEN],
    pad: [u8; PAD_LEN],
}

impl Gen {
    fn new(seed: u64, rand_type: RandType) -> Self {
        Gen {
            rng: Pcg64Mcg::seed_from_u64(seed),
            rand_type,
            c: template(),
            pad: template(),
        }
    }

    /// Uniform in `a..=b`.
    #[inline]
    fn uniform(&mut self, a: u32, b: u32) -> u32 {
        let u: f64 = self.rng.random();
        a + (u * f64::from(b - a + 1)) as u32
    }

    /// sysbench's default distribution over `a..=b`.
    #[inline]
    fn default_dist(&mut self, a: u32, b: u32) -> u32 {
        match self.rand_type {
            RandType::Uniform => self.uniform(a, b),
            RandType::Special => {
                let t = f64::from(b - a);
                let rnd: f64 = self.rng.random();
                if rnd * t * (100.0 / (100.0 - SPEC_RES)) < t {
                    // (100 - res)% of the draws: the mean of SPEC_ITER uniform values.
                    let mut sum = 0.0;
                    for _ in 0..SPEC_ITER {
                        sum += self.rng.random::<f64>();
                    }
                    a + (sum * t / f64::from(SPEC_ITER)) as u32
                } else {
                    // The others: within SPEC_PCT% of the range around its centre (from the
                    // same draw, as sysbench does).
                    let d = t * SPEC_PCT / 100.0;
                    let v = rnd * (d + 1.0) + t / 2.0 - t * SPEC_PCT / 200.0;
                    (a + v as u32).min(b)
                }
            }
        }
    }

    /// A new `c` value (10 groups of 11 random digits).
    #[inline]
    fn c(&mut self) -> &str {
        fill_digits(&mut self.rng, &mut self.c);
        ascii(&self.c)
    }

    /// New `c` and `pad` values at once.
    #[inline]
    fn c_pad(&mut self) -> (&str, &str) {
        fill_digits(&mut self.rng, &mut self.c);
        fill_digits(&mut self.rng, &mut self.pad);
        (ascii(&self.c), ascii(&self.pad))
    }
}

/// `###########-###########-...` with `-` in place: digits are filled in later.
fn template<const N: usize>() -> [u8; N] {
    let mut b = [b'0'; N];
    for (i, x) in b.iter_mut().enumerate() {
        if i % (GROUP + 1) == GROUP {
            *x = b'-';
        }
    }
    b
}

/// Overwrite the digit positions of a template with random digits (11 per 64-bit draw).
#[inline]
fn fill_digits(rng: &mut Pcg64Mcg, buf: &mut [u8]) {
    for group in buf.chunks_mut(GROUP + 1) {
        let mut r = rng.next_u64();
        for d in group.iter_mut().take(GROUP) {
            *d = b'0' + (r % 10) as u8;
            r /= 10;
        }
    }
}

/// The text of a buffer that holds only ASCII digits and `-`.
#[inline]
fn ascii(b: &[u8]) -> &str {
    // Always valid: only b'0'..=b'9' and b'-' are ever written.
    std::str::from_utf8(b).unwrap_or_default()
}

/// The sysbench-compatible OLTP workload on one DBMS.
pub struct Oltp {
    cfg: Arc<OltpConfig>,
    sql: Arc<Sql>,
    stores_rows: bool,
    seed: u64,
}

impl Oltp {
    /// The workload `cfg` in the SQL of `dbms`; `seed` fixes the loaded rows.
    pub fn new(cfg: OltpConfig, dbms: &dyn Dbms, seed: u64) -> Result<Self> {
        cfg.validate()?;
        let d = dbms.dialect();
        Ok(Oltp {
            cfg: Arc::new(cfg),
            sql: Arc::new(Sql::new(dbms.kind(), d)),
            stores_rows: dbms.stores_rows(),
            seed,
        })
    }

    /// Its options.
    pub fn config(&self) -> &OltpConfig {
        &self.cfg
    }

    /// The CREATE TABLE statement of table `n` (without ixbench's identity marker).
    pub fn create_table_sql(&self, n: u32) -> String {
        self.sql.create_table(&table_name(n))
    }

    /// The CREATE INDEX statement of table `n`'s secondary index.
    pub fn create_index_sql(&self, n: u32) -> String {
        self.sql.create_index(n)
    }

    /// Check that tables of an earlier load can be used: each exists, was created by ixbench
    /// (never a table ixbench did not create) and has its index. Returns the rows per table.
    pub fn check_reuse(&self, conn: &mut dyn Conn) -> Result<Vec<u64>> {
        let mut rows = Vec::new();
        for n in 1..=self.cfg.tables {
            let t = table_name(n);
            tables::require_owned(conn, self.sql.kind, &t)
                .with_context(|| format!("cannot reuse {t}"))?;
            if !conn.index_exists(&t, &index_name(n))? {
                bail!("table {t} has no index {}: load it again", index_name(n));
            }
            rows.push(count_rows(conn, &t)?);
        }
        Ok(rows)
    }

    /// Create the tables (dropping only tables ixbench created, see [`tables::prepare_new`]),
    /// one after the other on one connection: the record of owned tables is one table.
    pub fn create_tables(&self, conn: &mut dyn Conn) -> Result<()> {
        if !self.stores_rows {
            return Ok(());
        }
        let at = crate::measure::clock::utc_now().to_rfc3339();
        let kind = self.sql.kind;
        for n in 1..=self.cfg.tables {
            let t = table_name(n);
            tables::prepare_new(conn, kind, &t)?;
            tables::create_owned(conn, kind, &t, &self.sql.create_table(&t), &at)?;
        }
        Ok(())
    }

    /// Load the rows of the new table `n` on `conn` as `sysbench prepare` does (multi-row
    /// INSERTs, ids assigned by the DBMS), then create its index.
    fn fill_table(&self, conn: &mut dyn Conn, n: u32) -> Result<()> {
        let t = table_name(n);
        let per_stmt = self.sql.load_rows_per_statement();
        let full = conn.prepare(&self.sql.load_insert(&t, per_stmt))?;
        let mut gen = Gen::new(
            self.seed ^ (u64::from(n) << 32) ^ 0x005b_7e57_0000,
            self.cfg.rand_type,
        );
        let size = self.cfg.table_size as usize;
        let mut ks: Vec<i64> = Vec::with_capacity(per_stmt);
        let mut texts: Vec<u8> = Vec::with_capacity(per_stmt * (C_LEN + PAD_LEN));
        let mut done = 0usize;
        while done < size {
            let commit_rows = LOAD_ROWS_PER_COMMIT.min(size - done);
            in_txn(conn, TxnKind::Write, |conn| {
                let mut left = commit_rows;
                while left > 0 {
                    let rows = per_stmt.min(left);
                    ks.clear();
                    texts.clear();
                    for _ in 0..rows {
                        ks.push(i64::from(gen.default_dist(1, self.cfg.table_size)));
                        let (c, pad) = gen.c_pad();
                        texts.extend_from_slice(c.as_bytes());
                        texts.extend_from_slice(pad.as_bytes());
                    }
                    let mut params: Vec<Value> = Vec::with_capacity(rows * 3);
                    for (r, k) in ks.iter().enumerate() {
                        let base = r * (C_LEN + PAD_LEN);
                        params.push(Value::Int(*k));
                        params.push(Value::Text(ascii(&texts[base..base + C_LEN])));
                        params.push(Value::Text(ascii(
                            &texts[base + C_LEN..base + C_LEN + PAD_LEN],
                        )));
                    }
                    let st = if rows == per_stmt {
                        full
                    } else {
                        conn.prepare(&self.sql.load_insert(&t, rows))?
                    };
                    conn.exec(st, &params)?;
                    left -= rows;
                }
                Ok(())
            })
            .with_context(|| format!("loading {t}"))?;
            done += commit_rows;
        }
        conn.execute(&self.sql.create_index(n))
            .with_context(|| format!("creating index {} on {t}", index_name(n)))?;
        Ok(())
    }
}

pub use crate::workload::tables::count_rows;

impl Workload for Oltp {
    fn name(&self) -> &str {
        self.cfg.mix.name()
    }

    fn tables(&self) -> Vec<String> {
        (1..=self.cfg.tables).map(table_name).collect()
    }

    fn load(&self, dbms: &dyn Dbms, threads: usize) -> Result<()> {
        let threads = threads.clamp(1, self.cfg.tables as usize);
        let mut conns = Vec::with_capacity(threads);
        for _ in 0..threads {
            conns.push(dbms.connect()?);
        }
        // Shown and bounded while another session's lock holds it up.
        let what = format!("creating {}", self.tables().join(", "));
        crate::dbms::lock_watch::watched(dbms, conns[0].as_mut(), &what, |c| {
            self.create_tables(c)
        })?;
        // Table i is filled by connection (i - 1) % threads, as sysbench prepare spreads them.
        std::thread::scope(|s| -> Result<()> {
            let handles: Vec<_> = conns
                .iter_mut()
                .enumerate()
                .map(|(i, conn)| {
                    s.spawn(move || -> Result<()> {
                        let mut n = i as u32 + 1;
                        while n <= self.cfg.tables {
                            self.fill_table(conn.as_mut(), n)?;
                            n += threads as u32;
                        }
                        Ok(())
                    })
                })
                .collect();
            let mut first = None;
            for h in handles {
                let r = h
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a load thread panicked")));
                if let (Err(e), None) = (r, &first) {
                    first = Some(e);
                }
            }
            first.map_or(Ok(()), Err)
        })
    }

    fn client(&self, conn: &mut dyn Conn, id: usize, seed: u64) -> Result<Box<dyn WorkloadClient>> {
        let _ = conn;
        let per_table = match self.cfg.mix {
            Mix::OltpReadWrite => 9,
            Mix::OltpReadOnly => 5,
            Mix::OltpWriteOnly => 4,
            _ => 1,
        };
        if self.cfg.tables as usize * per_table > MAX_PREPARED {
            bail!(
                "{} on {} tables needs up to {} prepared statements per connection; ixbench \
                 keeps at most {MAX_PREPARED}: use at most {} tables",
                self.cfg.mix.name(),
                self.cfg.tables,
                self.cfg.tables as usize * per_table,
                MAX_PREPARED / per_table
            );
        }
        Ok(Box::new(OltpClient {
            cfg: self.cfg.clone(),
            sql: self.sql.clone(),
            stmts: vec![[None; KINDS]; self.cfg.tables as usize],
            gen: Gen::new(
                seed ^ (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                self.cfg.rand_type,
            ),
        }))
    }
}

/// One client: its generator and the statements it prepared, per table, on first use.
struct OltpClient {
    cfg: Arc<OltpConfig>,
    sql: Arc<Sql>,
    stmts: Vec<[Option<Stmt>; KINDS]>,
    gen: Gen,
}

impl OltpClient {
    /// The statement `kind` of table `t` (0-based), prepared on first use.
    #[inline]
    fn stmt(&mut self, conn: &mut dyn Conn, t: usize, kind: Kind) -> Result<Stmt> {
        if let Some(s) = self.stmts[t][kind as usize] {
            return Ok(s);
        }
        let s = conn.prepare(&self.sql.statement(kind, &table_name(t as u32 + 1)))?;
        self.stmts[t][kind as usize] = Some(s);
        Ok(s)
    }

    #[inline]
    fn table(&mut self) -> usize {
        (self.gen.uniform(1, self.cfg.tables) - 1) as usize
    }

    #[inline]
    fn id(&mut self) -> i64 {
        i64::from(self.gen.default_dist(1, self.cfg.table_size))
    }

    fn point_selects(&mut self, conn: &mut dyn Conn, d: &mut TxnDone) -> Result<()> {
        let t = self.table();
        let st = self.stmt(conn, t, Kind::Point)?;
        for _ in 0..self.cfg.point_selects {
            let id = self.id();
            d.rows += conn.query(st, &[Value::Int(id)])?;
            d.reads += 1;
        }
        Ok(())
    }

    fn ranges(&mut self, conn: &mut dyn Conn, d: &mut TxnDone, kind: Kind, n: u32) -> Result<()> {
        let t = self.table();
        let st = self.stmt(conn, t, kind)?;
        for _ in 0..n {
            let id = self.id();
            let hi = id + i64::from(self.cfg.range_size) - 1;
            d.rows += conn.query(st, &[Value::Int(id), Value::Int(hi)])?;
            d.reads += 1;
        }
        Ok(())
    }

    fn index_updates(&mut self, conn: &mut dyn Conn, d: &mut TxnDone) -> Result<()> {
        let t = self.table();
        let st = self.stmt(conn, t, Kind::IndexUpdate)?;
        for _ in 0..self.cfg.index_updates {
            let id = self.id();
            d.rows += conn.exec(st, &[Value::Int(id)])?;
            d.writes += 1;
        }
        Ok(())
    }

    fn non_index_updates(&mut self, conn: &mut dyn Conn, d: &mut TxnDone) -> Result<()> {
        let t = self.table();
        let st = self.stmt(conn, t, Kind::NonIndexUpdate)?;
        for _ in 0..self.cfg.non_index_updates {
            let id = self.id();
            let c = self.gen.c();
            d.rows += conn.exec(st, &[Value::Text(c), Value::Int(id)])?;
            d.writes += 1;
        }
        Ok(())
    }

    fn delete_inserts(&mut self, conn: &mut dyn Conn, d: &mut TxnDone) -> Result<()> {
        let t = self.table();
        let del = self.stmt(conn, t, Kind::Delete)?;
        let ins = self.stmt(conn, t, Kind::InsertId)?;
        for _ in 0..self.cfg.delete_inserts {
            let id = self.id();
            let k = self.id();
            let gone = conn.exec(del, &[Value::Int(id)])?;
            d.rows += gone;
            d.deleted += gone;
            d.writes += 1;
            let (c, pad) = self.gen.c_pad();
            let new = conn.exec(
                ins,
                &[
                    Value::Int(id),
                    Value::Int(k),
                    Value::Text(c),
                    Value::Text(pad),
                ],
            )?;
            d.rows += new;
            d.inserted += new;
            d.writes += 1;
        }
        Ok(())
    }

    fn insert(&mut self, conn: &mut dyn Conn, d: &mut TxnDone) -> Result<()> {
        let t = self.table();
        let st = self.stmt(conn, t, Kind::InsertAuto)?;
        let k = self.id();
        let (c, pad) = self.gen.c_pad();
        let new = conn.exec(st, &[Value::Int(k), Value::Text(c), Value::Text(pad)])?;
        d.rows += new;
        d.inserted += new;
        d.writes += 1;
        Ok(())
    }

    fn read_ranges(&mut self, conn: &mut dyn Conn, d: &mut TxnDone) -> Result<()> {
        if self.cfg.range_selects {
            let c = self.cfg.clone();
            self.ranges(conn, d, Kind::Simple, c.simple_ranges)?;
            self.ranges(conn, d, Kind::Sum, c.sum_ranges)?;
            self.ranges(conn, d, Kind::Order, c.order_ranges)?;
            self.ranges(conn, d, Kind::Distinct, c.distinct_ranges)?;
        }
        Ok(())
    }

    fn writes(&mut self, conn: &mut dyn Conn, d: &mut TxnDone) -> Result<()> {
        self.index_updates(conn, d)?;
        self.non_index_updates(conn, d)?;
        self.delete_inserts(conn, d)
    }
}

impl WorkloadClient for OltpClient {
    fn run(&mut self, conn: &mut dyn Conn) -> Result<TxnDone> {
        let mut d = TxnDone::default();
        let mix = self.cfg.mix;
        let trx = mix.transactional() && !self.cfg.skip_trx;
        if trx {
            conn.begin(if mix.writes() {
                TxnKind::Write
            } else {
                TxnKind::Read
            })?;
            d.other += 1;
        }
        match mix {
            Mix::OltpReadWrite => {
                self.point_selects(conn, &mut d)?;
                self.read_ranges(conn, &mut d)?;
                self.writes(conn, &mut d)?;
            }
            Mix::OltpReadOnly => {
                self.point_selects(conn, &mut d)?;
                self.read_ranges(conn, &mut d)?;
            }
            Mix::OltpWriteOnly => self.writes(conn, &mut d)?,
            Mix::OltpInsert => self.insert(conn, &mut d)?,
            Mix::OltpUpdateIndex => self.index_updates(conn, &mut d)?,
            Mix::OltpUpdateNonIndex => self.non_index_updates(conn, &mut d)?,
            Mix::OltpPointSelect => self.point_selects(conn, &mut d)?,
        }
        if trx {
            conn.commit()?;
            d.other += 1;
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statements on every engine, byte for byte as they were (`testdata/oltp.sql`).
    #[test]
    fn sql_text_on_every_engine() {
        let got = crate::dbms::dialect::every_engine_text(|d| {
            let sql = Sql::new("x", d);
            let mut lines = vec![
                sql.create_table("sbtest1"),
                sql.create_index(1),
                sql.load_insert("sbtest1", 2),
                format!("load rows per statement {}", sql.load_rows_per_statement()),
            ];
            for k in [
                Kind::Point,
                Kind::Simple,
                Kind::Sum,
                Kind::Order,
                Kind::Distinct,
                Kind::IndexUpdate,
                Kind::NonIndexUpdate,
                Kind::Delete,
                Kind::InsertId,
                Kind::InsertAuto,
            ] {
                lines.push(sql.statement(k, "sbtest1"));
            }
            lines.join("\n")
        });
        assert_eq!(got, include_str!("testdata/oltp.sql"));
    }

    #[test]
    fn value_shapes() {
        let mut g = Gen::new(7, RandType::Special);
        let c = g.c().to_string();
        assert_eq!(c.len(), 119);
        let groups: Vec<&str> = c.split('-').collect();
        assert_eq!(groups.len(), 10);
        assert!(groups
            .iter()
            .all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit())));
        let pad = g.c_pad().1.to_string();
        assert_eq!(pad.len(), 59);
        assert_eq!(pad.split('-').count(), 5);
        assert_ne!(g.c(), c.as_str(), "new digits each time");
    }

    #[test]
    fn special_distribution_has_its_hot_spot_and_stays_in_range() {
        let mut g = Gen::new(1, RandType::Special);
        let (a, b) = (1u32, 1_000_000u32);
        let n = 200_000;
        let mut hot = 0;
        for _ in 0..n {
            let v = g.default_dist(a, b);
            assert!((a..=b).contains(&v), "{v}");
            // the central 1%: 495_000..=505_001
            if (494_999..=505_001).contains(&v) {
                hot += 1;
            }
        }
        // 75% in the hot spot (and a little of the other quarter falls there too)
        let share = hot as f64 / n as f64;
        assert!((0.74..0.80).contains(&share), "{share}");
        let mut u = Gen::new(1, RandType::Uniform);
        let mut lo = 0;
        for _ in 0..n {
            let v = u.default_dist(1, 10);
            assert!((1..=10).contains(&v));
            if v == 1 {
                lo += 1;
            }
        }
        assert!((0.09..0.11).contains(&(lo as f64 / n as f64)));
    }

    #[test]
    fn statement_counts_follow_sysbench() {
        let c = |m| OltpConfig::new(m, 1, 10_000).statements_per_txn();
        assert_eq!(c(Mix::OltpReadWrite), (14, 4, 2));
        assert_eq!(c(Mix::OltpReadOnly), (14, 0, 2));
        assert_eq!(c(Mix::OltpWriteOnly), (0, 4, 2));
        assert_eq!(c(Mix::OltpInsert), (0, 1, 0));
        assert_eq!(c(Mix::OltpUpdateIndex), (0, 1, 0));
        assert_eq!(c(Mix::OltpUpdateNonIndex), (0, 1, 0));
        assert_eq!(c(Mix::OltpPointSelect), (1, 0, 0));
        let mut s = OltpConfig::new(Mix::OltpReadWrite, 1, 10_000);
        s.skip_trx = true;
        s.range_selects = false;
        assert_eq!(s.statements_per_txn(), (10, 4, 0));
        for m in Mix::ALL {
            assert_eq!(Mix::parse(m.name()), Some(m));
        }
    }

    #[test]
    fn sql_per_dialect() {
        let pg = Sql::new("postgres", &crate::dbms::postgres::dialect::sql_dialect());
        assert_eq!(
            pg.statement(Kind::Distinct, "sbtest1"),
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN $1 AND $2 ORDER BY c"
        );
        assert!(pg
            .create_table("sbtest1")
            .contains("GENERATED BY DEFAULT AS IDENTITY"));
        assert_eq!(
            pg.load_insert("t", 2),
            "INSERT INTO t (k, c, pad) VALUES ($1, $2, $3),($4, $5, $6)"
        );
        let my = Sql::new(
            "mysql",
            &crate::dbms::mysql::dialect::sql_dialect("RocksDB", false),
        );
        let ct = my.create_table("sbtest2");
        assert!(
            ct.contains("AUTO_INCREMENT") && ct.ends_with(") ENGINE=RocksDB"),
            "{ct}"
        );
        assert_eq!(
            my.statement(Kind::NonIndexUpdate, "sbtest2"),
            "UPDATE sbtest2 SET c=? WHERE id=?"
        );
        assert_eq!(my.create_index(2), "CREATE INDEX k_2 ON sbtest2 (k)");
        assert_eq!(my.load_rows_per_statement(), 1000);
        let sq = Sql::new("sqlite", &crate::dbms::sqlite::dialect::sql_dialect());
        assert_eq!(rows_per_statement(999), 333);
        assert!(sq
            .create_table("sbtest1")
            .starts_with("CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY,"));
    }
}
