//! The key-value workload (`--workload kv`): one table `kv (k BIGINT PRIMARY KEY, v
//! VARCHAR(N))` loaded with the keys `0..--kv-keys`, and clients that each run a mix of gets
//! (`SELECT v FROM kv WHERE k = ?`) and puts (`UPDATE kv SET v = ? WHERE k = ?`, a new value of
//! `--kv-value-size` bytes) of uniform random keys, one autocommit statement each: the point
//! read and write path of the primary key, the smallest workload a DB engineer compares engines
//! with.
//!
//! It is also the example of a transaction workload on the one runner
//! ([`crate::workload::txn_runner`]): this file is all of it (its table, load, statements and
//! mix as a [`Workload`], its options, its [`TxnWorkload`] declaration with its own check, and
//! its registry entry); the runner gives it the interval lines, the summary, `run.json` (its
//! runs are transaction runs, with `workload: "kv"`), the rows check and the interval sums.

use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde_json::{json, Map, Value as Json};

use super::{TxnDone, Workload, WorkloadClient};
use crate::dbms::{in_txn, Conn, Dbms, SqlDialect, Stmt, TxnKind, Value};
use crate::results::oltp::OltpRun;
use crate::results::Check;
use crate::workload::registry::{DdlTarget, Entry, Flags, Runner, H_TXN};
use crate::workload::runner::{Host, Open, RunIn, TxnHead};
use crate::workload::tables;
use crate::workload::txn_runner::{self, standard, Figures, Loaded, TxnWorkload, Variant};

/// The table's name.
pub const TABLE: &str = "kv";

/// The help heading of its options of `ixbench run`.
pub const HEADING: &str = "Key-value (--workload kv)";

/// Its place in the lists of workloads (its entry's rank; build.rs orders its options in
/// `ixbench run --help` by it).
pub const RANK: u8 = 3;

/// Rows of one commit of the load.
const LOAD_ROWS_PER_COMMIT: u64 = 10_000;

/// Its registry entry.
pub fn entry() -> Entry {
    Entry {
        name: "kv",
        rank: RANK,
        aliases: &["key-value"],
        about: "key-value gets and puts of random keys over one table, one statement each",
        runner: Runner::Own(run_entry),
        headings: &[H_TXN, HEADING],
        also_takes: &[],
        presets,
        notes: |_| Vec::new(),
        ddl_target: DdlTarget {
            table: TABLE,
            column: "v",
            pk: "k",
        },
        ddl_tables: |_| vec![TABLE.to_string()],
        ddl_workload: |_, l, dbms| {
            let cfg = KvOptions {
                kv_keys: u64::from(l.table_size),
                ..KvOptions::default()
            };
            Ok(Box::new(Kv::new(cfg, dbms, l.seed)?))
        },
        indexes: Vec::new,
        lab: None,
    }
}

/// `--size`: the flags of a preset.
fn presets(size: &str) -> Flags {
    match size {
        "smoke" => &[("kv-keys", "1000"), ("time", "3"), ("quiet-timeout", "10")],
        "small" => &[("kv-keys", "100000"), ("time", "10")],
        "large" => &[("kv-keys", "10000000"), ("time", "300")],
        _ => &[],
    }
}

/// The key-value workload's options.
#[derive(Debug, Clone, serde::Serialize, clap::Args)]
#[command(next_help_heading = HEADING)]
pub struct KvOptions {
    /// Keys (rows) of the table.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub kv_keys: u64,

    /// Percent of the operations that are gets (the others are puts).
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub kv_get_percent: u8,

    /// Bytes of a value.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=4000))]
    pub kv_value_size: u32,
}

impl Default for KvOptions {
    fn default() -> Self {
        KvOptions {
            kv_keys: 10_000,
            kv_get_percent: 90,
            kv_value_size: 100,
        }
    }
}

/// The key-value workload on one DBMS.
pub struct Kv {
    cfg: KvOptions,
    kind: &'static str,
    dialect: SqlDialect,
    create: String,
    stores_rows: bool,
    seed: u64,
}

impl Kv {
    /// The workload `cfg` in the SQL of `dbms`; `seed` fixes the loaded values.
    pub fn new(cfg: KvOptions, dbms: &dyn Dbms, seed: u64) -> Result<Self> {
        Ok(Kv::for_dialect(
            cfg,
            dbms.kind(),
            dbms.dialect(),
            dbms.stores_rows(),
            seed,
        ))
    }

    /// The workload `cfg` in dialect `d` of a target of kind `kind`.
    fn for_dialect(
        cfg: KvOptions,
        kind: &'static str,
        d: &SqlDialect,
        stores_rows: bool,
        seed: u64,
    ) -> Self {
        Kv {
            create: format!(
                "CREATE TABLE {TABLE} (k {} NOT NULL PRIMARY KEY, v {} NOT NULL){}",
                d.bigint_type(),
                d.text_type(cfg.kv_value_size as usize),
                d.table_options()
            ),
            cfg,
            kind,
            dialect: d.clone(),
            stores_rows,
            seed,
        }
    }

    /// The INSERT of `rows` keys and values.
    fn insert_sql(&self, rows: usize) -> String {
        let ph = |n| self.dialect.ph(n);
        let values: Vec<String> = (0..rows)
            .map(|r| format!("({}, {})", ph(2 * r + 1), ph(2 * r + 2)))
            .collect();
        format!("INSERT INTO {TABLE} (k, v) VALUES {}", values.join(","))
    }

    fn get_sql(&self) -> String {
        format!("SELECT v FROM {TABLE} WHERE k = {}", self.dialect.ph(1))
    }

    fn put_sql(&self) -> String {
        let ph = |n| self.dialect.ph(n);
        format!("UPDATE {TABLE} SET v = {} WHERE k = {}", ph(1), ph(2))
    }
}

/// A new value: `len` random letters.
fn fill_value(rng: &mut Pcg64Mcg, v: &mut String, len: usize) {
    v.clear();
    v.extend((0..len).map(|_| char::from(b'a' + rng.random_range(0..26u8))));
}

impl Workload for Kv {
    fn name(&self) -> &str {
        "kv"
    }

    fn tables(&self) -> Vec<String> {
        vec![TABLE.to_string()]
    }

    fn load(&self, dbms: &dyn Dbms, _threads: usize) -> Result<()> {
        if !self.stores_rows {
            return Ok(());
        }
        let mut conn = dbms.connect()?;
        let conn = conn.as_mut();
        let at = crate::measure::clock::utc_now().to_rfc3339();
        tables::prepare_new(conn, self.kind, TABLE)?;
        tables::create_owned(conn, self.kind, TABLE, &self.create, &at)?;
        let per_stmt = (self.dialect.max_params() / 2).clamp(1, 500) as u64;
        let mut rng = Pcg64Mcg::seed_from_u64(self.seed ^ 0x6b76);
        let len = self.cfg.kv_value_size as usize;
        let mut values: Vec<String> = vec![String::new(); per_stmt as usize];
        let full = conn.prepare(&self.insert_sql(per_stmt as usize))?;
        let mut k = 0;
        while k < self.cfg.kv_keys {
            let end = (k + LOAD_ROWS_PER_COMMIT).min(self.cfg.kv_keys);
            in_txn(conn, TxnKind::Write, |conn| {
                while k < end {
                    let rows = per_stmt.min(end - k);
                    for v in values.iter_mut().take(rows as usize) {
                        fill_value(&mut rng, v, len);
                    }
                    let mut params = Vec::with_capacity(2 * rows as usize);
                    for (i, v) in values.iter().take(rows as usize).enumerate() {
                        params.push(Value::Int((k + i as u64) as i64));
                        params.push(Value::Text(v.as_str()));
                    }
                    let st = if rows == per_stmt {
                        full
                    } else {
                        conn.prepare(&self.insert_sql(rows as usize))?
                    };
                    conn.exec(st, &params)?;
                    k += rows;
                }
                Ok(())
            })
            .with_context(|| format!("loading {TABLE}"))?;
        }
        Ok(())
    }

    fn client(&self, conn: &mut dyn Conn, id: usize, seed: u64) -> Result<Box<dyn WorkloadClient>> {
        Ok(Box::new(KvClient {
            get: conn.prepare(&self.get_sql())?,
            put: conn.prepare(&self.put_sql())?,
            rng: Pcg64Mcg::seed_from_u64(seed ^ (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            keys: self.cfg.kv_keys,
            get_percent: self.cfg.kv_get_percent,
            len: self.cfg.kv_value_size as usize,
            value: String::new(),
        }))
    }
}

/// One client: its generator, its two statements and the buffer of its next value.
struct KvClient {
    get: Stmt,
    put: Stmt,
    rng: Pcg64Mcg,
    keys: u64,
    get_percent: u8,
    len: usize,
    value: String,
}

impl WorkloadClient for KvClient {
    fn run(&mut self, conn: &mut dyn Conn) -> Result<TxnDone> {
        let k = Value::Int(self.rng.random_range(0..self.keys) as i64);
        let mut d = TxnDone::default();
        if self.rng.random_range(0..100u8) < self.get_percent {
            d.rows = conn.query(self.get, &[k])?;
            d.reads = 1;
        } else {
            fill_value(&mut self.rng, &mut self.value, self.len);
            d.rows = conn.exec(self.put, &[Value::Text(&self.value), k])?;
            d.writes = 1;
        }
        Ok(d)
    }
}

/// The key-value workload as the one runner runs it.
struct KvRun<'a> {
    opts: &'a KvOptions,
}

impl TxnWorkload for KvRun<'_> {
    type W = Kv;
    type Run = OltpRun;
    const UNIT: &'static str = "operations";

    fn check(&self, host: &dyn Host) -> Result<Vec<String>> {
        if host.common().table_prefix != "pi" {
            bail!("--table-prefix does not apply to --workload kv: its table is {TABLE}");
        }
        Ok(vec![TABLE.to_string()])
    }

    fn config(&self, host: &dyn Host) -> Result<Map<String, Json>> {
        let mut m = standard::head_config(host.head());
        m.insert("workload".into(), json!("kv"));
        m.insert("options".into(), json!(self.opts));
        Ok(m)
    }

    fn variants(&self) -> Vec<Variant> {
        vec![Variant {
            load_step: Some("load".into()),
            run_step: "kv".into(),
            step: "kv".into(),
        }]
    }

    fn workload(&self, _v: usize, target: &dyn Dbms, seed: u64) -> Result<Kv> {
        Kv::new(self.opts.clone(), target, seed)
    }

    fn load(&self, _v: usize, w: &Kv, s: &mut Open<'_>, _: &TxnHead) -> Result<Loaded> {
        let rows = self.opts.kv_keys;
        crate::outln!("loading {rows} keys...");
        let seconds = txn_runner::fill(w, s.target, 1, "load")?;
        crate::outln!("loaded {rows} keys in {seconds:.1} s");
        Ok(Loaded {
            rows,
            seconds,
            threads: 1,
            reused: false,
        })
    }

    fn figures(&self, f: Figures<'_, Kv>) -> Result<OltpRun> {
        let stores = f.rows_before.is_some();
        let mut r = standard::figures("kv", f);
        // Every key was loaded and no operation deletes one: each get reads one row and each
        // put changes one.
        let t = &r.totals;
        if stores {
            r.checks.push(Check {
                name: "keys_found".into(),
                ok: t.rows == t.txns,
                detail: format!(
                    "{} gets and puts touched {} rows: one each expected",
                    t.txns, t.rows
                ),
            });
        }
        Ok(r)
    }

    fn unmeasured(&self, head: &TxnHead) -> Option<OltpRun> {
        Some(standard::unmeasured("kv", head))
    }
}

/// The registry's runner of the key-value workload.
fn run_entry(r: &RunIn, host: &mut dyn Host) -> Result<u8> {
    txn_runner::run(&KvRun { opts: &r.opts.kv }, host)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statements on every engine, byte for byte as they were (`testdata/kv.sql`).
    #[test]
    fn sql_text_on_every_engine() {
        let got = crate::dbms::dialect::every_engine_text(|d| {
            let kv = Kv::for_dialect(KvOptions::default(), "x", d, true, 1);
            format!(
                "{}\n{}\n{}\n{}\nper statement {}",
                kv.create,
                kv.insert_sql(3),
                kv.get_sql(),
                kv.put_sql(),
                kv.dialect.max_params()
            )
        });
        assert_eq!(got, include_str!("testdata/kv.sql"));
    }

    #[test]
    fn statements_in_each_placeholder_style() {
        let kv = Kv {
            cfg: KvOptions::default(),
            kind: "postgres",
            dialect: crate::dbms::postgres::dialect::sql_dialect(),
            create: String::new(),
            stores_rows: true,
            seed: 1,
        };
        assert_eq!(kv.get_sql(), "SELECT v FROM kv WHERE k = $1");
        assert_eq!(kv.put_sql(), "UPDATE kv SET v = $1 WHERE k = $2");
        assert_eq!(
            kv.insert_sql(2),
            "INSERT INTO kv (k, v) VALUES ($1, $2),($3, $4)"
        );
        let my = Kv {
            dialect: crate::dbms::mysql::dialect::sql_dialect("InnoDB", false),
            ..kv
        };
        assert_eq!(my.put_sql(), "UPDATE kv SET v = ? WHERE k = ?");
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let mut v = String::new();
        fill_value(&mut rng, &mut v, 17);
        assert_eq!(v.len(), 17);
        assert!(v.bytes().all(|b| b.is_ascii_lowercase()));
    }
}
