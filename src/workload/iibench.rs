//! The insert benchmark's table, rows and queries (same as the public insert benchmark, so
//! results compare): schema and secondary indexes, the value domains, the partly random `data`
//! column, the 1-second `dateandtime`, and the range and point queries.
//!
//! All SQL text lives here once; a target contributes only a [`Dialect`] (what really differs
//! between DBMSs: type names, placeholders, index hints).

use rand::{Rng, RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Rows each range query reads.
pub const RANGE_LIMIT: usize = 10;
/// Primary keys each point query asks for.
pub const POINT_KEYS: usize = 10;

/// Exclusive upper bounds of the uniform value domains.
pub const CASHREGISTER_DOMAIN: i64 = 1_000;
/// `productid` in [0, 10000).
pub const PRODUCT_DOMAIN: i64 = 10_000;
/// `customerid` in [0, 100000).
pub const CUSTOMER_DOMAIN: i64 = 100_000;
/// `price` in [0, 500).
pub const PRICE_DOMAIN: i64 = 500;

/// Columns written by inserts, in bind order (the PK is assigned by the server).
pub const INSERT_COLUMNS: [&str; 6] = [
    "dateandtime",
    "cashregisterid",
    "customerid",
    "productid",
    "price",
    "data",
];

/// One secondary index of the insert benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexDef {
    /// Name suffix; the index is named `<table>_<suffix>` (index names are per schema in
    /// PostgreSQL and SQLite).
    pub suffix: &'static str,
    /// Indexed columns, in order.
    pub columns: [&'static str; 3],
    /// Exclusive upper bound of the first column's domain, for range query starts.
    pub first_domain: i64,
}

/// The three secondary indexes, in the order `--secondary-indexes N` keeps them.
pub const INDEXES: [IndexDef; 3] = [
    IndexDef {
        suffix: "marketsegment",
        columns: ["productid", "customerid", "price"],
        first_domain: PRODUCT_DOMAIN,
    },
    IndexDef {
        suffix: "registersegment",
        columns: ["cashregisterid", "customerid", "price"],
        first_domain: CASHREGISTER_DOMAIN,
    },
    IndexDef {
        suffix: "pdc",
        columns: ["price", "dateandtime", "customerid"],
        first_domain: PRICE_DOMAIN,
    },
];

impl IndexDef {
    /// The index's name on `table`.
    pub fn name(&self, table: &str) -> String {
        format!("{table}_{}", self.suffix)
    }
}

/// How bind parameters are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholder {
    /// `?` (SQLite, MySQL).
    Question,
    /// `$1`, `$2`, ... (PostgreSQL).
    Dollar,
}

/// What differs between DBMSs in the insert benchmark's SQL.
#[derive(Debug, Clone)]
pub struct Dialect {
    /// Bind parameter style.
    pub placeholder: Placeholder,
    /// The PK column definition, assigned by the server (auto-increment / identity / rowid).
    pub pk_column: &'static str,
    /// Type of `dateandtime`.
    pub datetime_type: &'static str,
    /// Type of the integer columns.
    pub int_type: &'static str,
    /// Type of `data`.
    pub data_type: &'static str,
    /// Appended to CREATE TABLE (e.g. ` ENGINE=InnoDB`).
    pub table_options: String,
    /// Write `FORCE INDEX (name)` in range queries, as the insert benchmark does on MySQL.
    pub force_index: bool,
    /// The most bind parameters one statement may have.
    pub max_params: usize,
}

/// SQL for one insert-benchmark table in one dialect. The statements of the hot path are built
/// once, when a worker starts, so an operation never formats SQL.
#[derive(Debug, Clone)]
pub struct TableSql {
    /// Table name.
    pub table: String,
    dialect: Dialect,
    /// The range query on each secondary index (see [`TableSql::range_query`]).
    pub range: [String; 3],
    /// The point query (see [`TableSql::point_query`]).
    pub point: String,
    /// DELETE of a PK range (see [`TableSql::delete_range`]).
    pub delete: String,
}

impl TableSql {
    /// SQL builder for `table`.
    pub fn new(table: &str, dialect: &Dialect) -> Self {
        let mut t = TableSql {
            table: table.to_string(),
            dialect: dialect.clone(),
            range: Default::default(),
            point: String::new(),
            delete: String::new(),
        };
        t.range = [t.range_query(0), t.range_query(1), t.range_query(2)];
        t.point = t.point_query();
        t.delete = t.delete_range();
        t
    }

    /// The dialect this SQL is written in.
    pub fn dialect(&self) -> &Dialect {
        &self.dialect
    }

    fn ph(&self, i: usize) -> String {
        match self.dialect.placeholder {
            Placeholder::Question => "?".to_string(),
            Placeholder::Dollar => format!("${i}"),
        }
    }

    /// CREATE TABLE with only the PK.
    pub fn create_table(&self) -> String {
        let d = &self.dialect;
        format!(
            "CREATE TABLE {t} ({pk}, dateandtime {dt} NOT NULL, cashregisterid {i} NOT NULL, \
             customerid {i} NOT NULL, productid {i} NOT NULL, price {i} NOT NULL, \
             data {data} NOT NULL){opts}",
            t = self.table,
            pk = d.pk_column,
            dt = d.datetime_type,
            i = d.int_type,
            data = d.data_type,
            opts = d.table_options
        )
    }

    /// CREATE INDEX for secondary index `i` (0..3).
    pub fn create_index(&self, i: usize) -> String {
        let idx = &INDEXES[i];
        format!(
            "CREATE INDEX {} ON {} ({})",
            idx.name(&self.table),
            self.table,
            idx.columns.join(", ")
        )
    }

    /// Most rows one INSERT statement can carry within the dialect's parameter limit.
    pub fn max_rows_per_statement(&self) -> usize {
        (self.dialect.max_params / INSERT_COLUMNS.len()).max(1)
    }

    /// A multi-row INSERT of `rows` rows.
    pub fn insert(&self, rows: usize) -> String {
        let ncol = INSERT_COLUMNS.len();
        let mut s = format!(
            "INSERT INTO {} ({}) VALUES ",
            self.table,
            INSERT_COLUMNS.join(", ")
        );
        for r in 0..rows {
            if r > 0 {
                s.push(',');
            }
            s.push('(');
            for c in 0..ncol {
                if c > 0 {
                    s.push(',');
                }
                s.push_str(&self.ph(r * ncol + c + 1));
            }
            s.push(')');
        }
        s
    }

    /// The range query on secondary index `i`: 10 rows in index order from a start value of its
    /// first column, reading only the index's columns so the index covers it.
    pub fn range_query(&self, i: usize) -> String {
        let idx = &INDEXES[i];
        let cols = idx.columns.join(", ");
        let hint = if self.dialect.force_index {
            format!(" FORCE INDEX ({})", idx.name(&self.table))
        } else {
            String::new()
        };
        format!(
            "SELECT {cols} FROM {t}{hint} WHERE {c0} >= {p} ORDER BY {cols} LIMIT {RANGE_LIMIT}",
            t = self.table,
            c0 = idx.columns[0],
            p = self.ph(1)
        )
    }

    /// The point query: all columns of up to 10 rows by PK.
    pub fn point_query(&self) -> String {
        let ps: Vec<String> = (1..=POINT_KEYS).map(|i| self.ph(i)).collect();
        format!(
            "SELECT transactionid, {} FROM {} WHERE transactionid IN ({})",
            INSERT_COLUMNS.join(", "),
            self.table,
            ps.join(",")
        )
    }

    /// Number of rows.
    pub fn count(&self) -> String {
        format!("SELECT count(*) FROM {}", self.table)
    }

    /// Smallest and largest PK (NULLs when empty).
    pub fn min_max(&self) -> String {
        format!(
            "SELECT min(transactionid), max(transactionid) FROM {}",
            self.table
        )
    }

    /// The PK of the `n`th oldest row at or after `from` (first parameter `from`, no LIMIT
    /// parameter: `n` is part of the text so every DBMS accepts it).
    pub fn nth_id_from(&self, n: usize) -> String {
        format!(
            "SELECT transactionid FROM {} WHERE transactionid >= {} ORDER BY transactionid LIMIT 1 OFFSET {}",
            self.table,
            self.ph(1),
            n.saturating_sub(1)
        )
    }

    /// DELETE of the PK range [from, to] (parameters 1 and 2).
    pub fn delete_range(&self) -> String {
        format!(
            "DELETE FROM {} WHERE transactionid >= {} AND transactionid <= {}",
            self.table,
            self.ph(1),
            self.ph(2)
        )
    }
}

/// Rows of one commit, column by column, reused from batch to batch (no allocation per row).
#[derive(Debug, Clone, Default)]
pub struct Batch {
    /// `dateandtime` of every row in the batch, Unix seconds (one value per batch).
    pub ts_secs: i64,
    /// `dateandtime` as `YYYY-MM-DD HH:MM:SS` (UTC).
    pub ts_text: String,
    /// `cashregisterid` per row.
    pub cashregisterid: Vec<i32>,
    /// `customerid` per row.
    pub customerid: Vec<i32>,
    /// `productid` per row.
    pub productid: Vec<i32>,
    /// `price` per row.
    pub price: Vec<i32>,
    /// All `data` values back to back (ASCII).
    pub data: String,
    /// End offset of each row's `data` in [`Batch::data`].
    pub data_end: Vec<usize>,
}

impl Batch {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.price.len()
    }

    /// True when the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.price.is_empty()
    }

    /// Row ranges `from..to` of at most `per` rows each, covering the batch in order: the
    /// statements a batch is split into when it has more parameters than one statement may
    /// carry.
    pub fn chunks(&self, per: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let per = per.max(1);
        (0..self.len())
            .step_by(per)
            .map(move |from| (from, (from + per).min(self.len())))
    }

    /// The `data` value of row `r`.
    pub fn data(&self, r: usize) -> &str {
        let start = if r == 0 { 0 } else { self.data_end[r - 1] };
        &self.data[start..self.data_end[r]]
    }
}

const BASE64_CHARS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// A deterministic generator of insert-benchmark rows and query arguments.
#[derive(Debug, Clone)]
pub struct RowGen {
    rng: Pcg64Mcg,
    data_min: usize,
    data_max: usize,
    ts_cached: i64,
}

impl RowGen {
    /// A generator seeded with `seed`; `data` lengths uniform in `[data_min, data_max]`.
    pub fn new(seed: u64, data_min: usize, data_max: usize) -> Self {
        RowGen {
            rng: Pcg64Mcg::seed_from_u64(seed),
            data_min,
            data_max: data_max.max(data_min),
            ts_cached: i64::MIN,
        }
    }

    /// Fill `b` with `n` new rows whose `dateandtime` is `ts_secs`.
    pub fn fill(&mut self, b: &mut Batch, n: usize, ts_secs: i64) {
        if ts_secs != self.ts_cached || b.ts_text.is_empty() {
            b.ts_text = format_ts(ts_secs);
            self.ts_cached = ts_secs;
        }
        b.ts_secs = ts_secs;
        b.cashregisterid.clear();
        b.customerid.clear();
        b.productid.clear();
        b.price.clear();
        b.data.clear();
        b.data_end.clear();
        for _ in 0..n {
            b.cashregisterid
                .push(self.rng.random_range(0..CASHREGISTER_DOMAIN) as i32);
            b.customerid
                .push(self.rng.random_range(0..CUSTOMER_DOMAIN) as i32);
            b.productid
                .push(self.rng.random_range(0..PRODUCT_DOMAIN) as i32);
            b.price.push(self.rng.random_range(0..PRICE_DOMAIN) as i32);
            self.push_data(&mut b.data);
            b.data_end.push(b.data.len());
        }
    }

    /// Append one `data` value: about half random base64 characters, the rest a constant
    /// filler, so the column is partly compressible like the insert benchmark's.
    fn push_data(&mut self, out: &mut String) {
        let len = self.rng.random_range(self.data_min..=self.data_max);
        let random = len.div_ceil(2);
        let mut bits = 0u64;
        let mut left = 0;
        for _ in 0..random {
            if left == 0 {
                bits = self.rng.next_u64();
                left = 10;
            }
            out.push(BASE64_CHARS[(bits & 63) as usize] as char);
            bits >>= 6;
            left -= 1;
        }
        for _ in random..len {
            out.push('a');
        }
    }

    /// A range query: which secondary index (among the first `n_indexes`) and the start value.
    pub fn range_query(&mut self, n_indexes: usize) -> (usize, i64) {
        let i = self.rng.random_range(0..n_indexes.max(1));
        (i, self.rng.random_range(0..INDEXES[i].first_domain))
    }

    /// `POINT_KEYS` PKs uniform in `[min, max]`.
    pub fn point_keys(&mut self, min: i64, max: i64, out: &mut [i64; POINT_KEYS]) {
        let hi = max.max(min);
        for k in out.iter_mut() {
            *k = self.rng.random_range(min..=hi);
        }
    }
}

/// `YYYY-MM-DD HH:MM:SS` in UTC.
pub fn format_ts(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| "1970-01-01 00:00:00".to_string())
}

/// Derive the seed of one worker from the run's seed, so each worker has its own stream and the
/// same `--seed` gives the same rows (SplitMix64 finalizer over the parts).
pub fn derive_seed(seed: u64, parts: &[u64]) -> u64 {
    let mut x = seed;
    for &p in parts {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15).wrapping_add(p);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite_like() -> Dialect {
        Dialect {
            placeholder: Placeholder::Question,
            pk_column: "transactionid INTEGER PRIMARY KEY",
            datetime_type: "TEXT",
            int_type: "INTEGER",
            data_type: "TEXT",
            table_options: String::new(),
            force_index: false,
            max_params: 32766,
        }
    }

    #[test]
    fn rows_stay_in_their_domains() {
        let mut g = RowGen::new(7, 10, 20);
        let mut b = Batch::default();
        let mut seen_max = [0i32; 4];
        for _ in 0..200 {
            g.fill(&mut b, 100, 1_700_000_000);
            assert_eq!(b.len(), 100);
            for r in 0..b.len() {
                assert!((0..1_000).contains(&b.cashregisterid[r]));
                assert!((0..100_000).contains(&b.customerid[r]));
                assert!((0..10_000).contains(&b.productid[r]));
                assert!((0..500).contains(&b.price[r]));
                let d = b.data(r);
                assert!((10..=20).contains(&d.len()), "len {}", d.len());
                let random = d.len().div_ceil(2);
                assert!(d[random..].bytes().all(|c| c == b'a'));
                assert!(d.bytes().all(|c| BASE64_CHARS.contains(&c)));
                seen_max[0] = seen_max[0].max(b.cashregisterid[r]);
                seen_max[1] = seen_max[1].max(b.customerid[r]);
                seen_max[2] = seen_max[2].max(b.productid[r]);
                seen_max[3] = seen_max[3].max(b.price[r]);
            }
        }
        // 20000 draws reach the top of every domain's last percent
        assert!(seen_max[0] >= 990 && seen_max[1] >= 99_000);
        assert!(seen_max[2] >= 9_900 && seen_max[3] >= 495);
        assert_eq!(b.ts_text, "2023-11-14 22:13:20");
    }

    #[test]
    fn same_seed_same_rows_other_seed_other_rows() {
        let mut a = RowGen::new(42, 10, 20);
        let mut b = RowGen::new(42, 10, 20);
        let mut c = RowGen::new(43, 10, 20);
        let (mut ba, mut bb, mut bc) = (Batch::default(), Batch::default(), Batch::default());
        a.fill(&mut ba, 50, 0);
        b.fill(&mut bb, 50, 0);
        c.fill(&mut bc, 50, 0);
        assert_eq!(ba.data, bb.data);
        assert_eq!(ba.price, bb.price);
        assert_ne!(ba.data, bc.data);
        assert_ne!(derive_seed(1, &[0, 1]), derive_seed(1, &[1, 0]));
    }

    #[test]
    fn range_and_point_arguments() {
        let mut g = RowGen::new(1, 10, 20);
        let mut used = [0usize; 3];
        for _ in 0..3_000 {
            let (i, start) = g.range_query(3);
            assert!(start >= 0 && start < INDEXES[i].first_domain);
            used[i] += 1;
        }
        assert!(used.iter().all(|&n| n > 800), "{used:?}");
        for _ in 0..100 {
            assert_eq!(g.range_query(1).0, 0);
        }
        let mut keys = [0i64; POINT_KEYS];
        g.point_keys(100, 200, &mut keys);
        assert!(keys.iter().all(|k| (100..=200).contains(k)));
    }

    #[test]
    fn chunks_cover_the_batch() {
        let mut g = RowGen::new(1, 10, 20);
        let mut b = Batch::default();
        g.fill(&mut b, 7, 0);
        assert_eq!(
            b.chunks(3).collect::<Vec<_>>(),
            vec![(0, 3), (3, 6), (6, 7)]
        );
        assert_eq!(b.chunks(10).collect::<Vec<_>>(), vec![(0, 7)]);
        g.fill(&mut b, 0, 0);
        assert_eq!(b.chunks(3).count(), 0);
    }

    #[test]
    fn sql_text() {
        let s = TableSql::new("pi1", &sqlite_like());
        assert_eq!(
            s.create_index(0),
            "CREATE INDEX pi1_marketsegment ON pi1 (productid, customerid, price)"
        );
        assert_eq!(
            s.insert(2),
            "INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data) VALUES (?,?,?,?,?,?),(?,?,?,?,?,?)"
        );
        assert_eq!(
            s.range_query(2),
            "SELECT price, dateandtime, customerid FROM pi1 WHERE price >= ? ORDER BY price, dateandtime, customerid LIMIT 10"
        );
        let mut pg = sqlite_like();
        pg.placeholder = Placeholder::Dollar;
        pg.force_index = true;
        let p = TableSql::new("pi2", &pg);
        assert!(p.insert(2).ends_with("($7,$8,$9,$10,$11,$12)"));
        assert!(p
            .range_query(1)
            .contains("FROM pi2 FORCE INDEX (pi2_registersegment) WHERE cashregisterid >= $1"));
        assert!(p
            .point_query()
            .ends_with("IN ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)"));
        assert_eq!(s.max_rows_per_statement(), 5461);
    }
}
