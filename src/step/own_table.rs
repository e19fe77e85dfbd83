//! Tables like the user's own for `ixbench index`: a sysbench-shaped table with large TEXT
//! values (`--like sbtest --text-bytes B`, seed 004's repro), and a copy of the user's table
//! (`--from-table`) on the same server: same column definitions, PK and secondary indexes,
//! engine and row format, filled from one consistent snapshot (one `INSERT ... SELECT`), the
//! user's table only read. Both tables are ixbench's (see [`crate::workload::tables`]).

use anyhow::{bail, Context, Result};

use crate::dbms::dialect::{self, CopyDdl};
use crate::dbms::{Conn, Dbms, SqlDialect};
use crate::measure::clock::Stopwatch;
use crate::workload::tables;

/// The secondary index of a sysbench table.
pub const SBTEST_INDEX: &str = "k_1";

/// Create `table` (ixbench's) shaped like sysbench's `sbtest` with `c` a TEXT column, and fill
/// it with `rows` rows whose `c` holds `text_bytes` bytes: a 119-character sysbench-like value
/// repeated (as seed 004's `repeat(c, 100)`), then its index `k_1 (k)`. Returns the seconds.
pub fn create_like_sbtest(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    table: &str,
    rows: u64,
    text_bytes: u64,
    seed: u64,
) -> Result<f64> {
    let kind = target.kind();
    let d = target.dialect();
    let start = Stopwatch::start();
    let create = format!(
        "CREATE TABLE {table} (id {}, k INTEGER DEFAULT 0 NOT NULL, c TEXT, \
         pad CHAR(60) DEFAULT '' NOT NULL){}",
        d.int_auto_pk(),
        d.table_options()
    );
    // Shown and bounded while another session's lock holds it up.
    let what = format!("creating {table}");
    crate::dbms::lock_watch::watched(target, conn, &what, |conn| {
        tables::prepare_new(conn, kind, table)?;
        let at = crate::measure::clock::utc_now().to_rfc3339();
        tables::create_owned(conn, kind, table, &create, &at)
    })?;
    // The text: a per-row value repeated by the server, so the statement stays small.
    let unit = 119u64;
    let times = text_bytes.div_ceil(unit).max(1);
    let repeat = |v: &str| d.repeat_text_sql(v, times, text_bytes);
    let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let per_stmt = 20u64;
    let mut done = 0u64;
    while done < rows {
        let n = per_stmt.min(rows - done);
        let mut vals = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let k = next() % rows.max(1) + 1;
            // sysbench's c: groups of 11 digits joined by '-' (119 characters)
            let groups: Vec<String> = (0..10)
                .map(|_| format!("{:011}", next() % 100_000_000_000))
                .collect();
            let c = groups.join("-");
            let pad: String = (0..5)
                .map(|_| format!("{:011}", next() % 100_000_000_000))
                .collect::<Vec<_>>()
                .join("-");
            vals.push(format!("({k}, {}, '{pad}')", repeat(&c[..119])));
        }
        conn.execute(&format!(
            "INSERT INTO {table} (k, c, pad) VALUES {}",
            vals.join(", ")
        ))
        .with_context(|| format!("filling {table}"))?;
        done += n;
    }
    conn.execute(&format!("CREATE INDEX {SBTEST_INDEX} ON {table} (k)"))?;
    Ok(start.elapsed_secs())
}

/// Check a `[SCHEMA.]TABLE` given by the user (see [`dialect::check_user_name`]).
pub fn check_source_name(name: &str) -> Result<()> {
    dialect::check_user_name("--from-table", name, true)
}

/// The name of the copy of the user's `[SCHEMA.]TABLE` `src` ixbench makes with `prefix`:
/// `PREFIXcopy_TABLE` lower case (the name PostgreSQL folds it to, so the catalog finds it
/// quoted too), anything but letters, digits and _ in the table's name as _ (`Key Tab` gives
/// `copy_key_tab`).
pub fn copy_name(prefix: &str, src: &str) -> String {
    let name = src.rsplit('.').next().unwrap_or(src);
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{}copy_{name}", prefix.to_ascii_lowercase())
}

/// How much of the user's table to copy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sample {
    /// Every row.
    All,
    /// About N rows, chosen uniformly at random.
    Rows(u64),
    /// About P percent of the rows, each row kept with probability P/100.
    Pct(f64),
}

impl Sample {
    /// The fraction of the table a copy holds, for the space check.
    fn fraction(self, rows: u64) -> f64 {
        match self {
            Sample::All => 1.0,
            Sample::Rows(n) => (n as f64 / rows.max(1) as f64).min(1.0),
            Sample::Pct(p) => p / 100.0,
        }
    }
}

/// What a copy did.
#[derive(Debug, Clone)]
pub struct CopyInfo {
    /// Rows in the user's table (at the copy's start).
    pub source_rows: u64,
    /// Rows in the copy.
    pub rows: u64,
    /// Seconds to create and fill the copy (its indexes included).
    pub seconds: f64,
    /// The copy's secondary indexes (name).
    pub indexes: Vec<String>,
    /// Bytes of the user's table (data + indexes) as the catalog says, if known.
    pub source_bytes: Option<u64>,
    /// With the secondary indexes deferred: seconds of the load alone and of the index
    /// builds after it (`None` when they were in place during the load).
    pub deferred: Option<(f64, f64)>,
}

/// Rows of a table.
pub fn count_rows(conn: &mut dyn Conn, table: &str) -> Result<u64> {
    let rows = conn.query_rows(&format!("SELECT COUNT(*) FROM {table}"))?;
    Ok(rows
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

fn first_cell(conn: &mut dyn Conn, sql: &str) -> Result<Option<String>> {
    Ok(conn
        .query_rows(sql)?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next().flatten()))
}

/// Bytes of table `src` (data + indexes), from the catalog.
fn table_bytes(conn: &mut dyn Conn, d: &SqlDialect, src: &str) -> Option<u64> {
    let sql = d.table_bytes_sql(src)?;
    first_cell(conn, &sql).ok().flatten()?.parse().ok()
}

/// Free bytes on the file system holding `dir`.
pub fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    let st = nix::sys::statvfs::statvfs(dir).ok()?;
    Some(st.blocks_available() as u64 * st.fragment_size() as u64)
}

/// Everything that can be checked before a copy: the source exists and can be read, the
/// destination name is free or ixbench's, the copy fits. Returns the source's rows and bytes.
pub fn check_copy(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    src: &str,
    dst: &str,
    sample: Sample,
) -> Result<(u64, Option<u64>)> {
    let kind = target.kind();
    check_source_name(src)?;
    tables::validate_name(dst)?;
    crate::index_spec::table_columns(conn, kind, src)
        .with_context(|| format!("--from-table {src}"))?;
    let rows = count_rows(conn, &target.dialect().quote_table(src))
        .with_context(|| format!("--from-table {src}: cannot read it"))?;
    if conn.table_exists(dst)? {
        if let Some(why) = tables::ownership(conn, kind, dst)?.refusal(dst) {
            bail!("the copy's name clashes: {why}; ixbench never drops it: use another --table-prefix");
        }
    }
    let bytes = table_bytes(conn, target.dialect(), src);
    // Where the database's files are: the DBMS's data directory (SQLite: the file's).
    if let (Some(b), Some(dir)) = (bytes, target.data_directory(conn)) {
        if let Some(free) = free_bytes(&dir) {
            // The copy, plus a margin for the builds and rebuilds run on it.
            let need = (b as f64 * sample.fraction(rows) * 2.0) as u64;
            if need > free {
                bail!(
                    "the copy of {src} would not fit: it needs about {:.1} MB (twice its {:.1} MB for the copy and the builds on it), {} has {:.1} MB free",
                    need as f64 / 1e6,
                    b as f64 * sample.fraction(rows) / 1e6,
                    dir.display(),
                    free as f64 / 1e6
                );
            }
        }
    }
    Ok((rows, bytes))
}

/// Copy `src` into `dst` (ixbench's, created here): definition, then the rows (all, or a
/// uniform random sample) with one `INSERT ... SELECT` (one statement: one consistent
/// snapshot of `src`; a non-locking read on InnoDB), then the indexes SQLite keeps apart.
///
/// With `defer`, the secondary indexes are left out during the load and built after it (seed
/// 002's load-then-build; on PostgreSQL the indexes behind a constraint stay in place).
pub fn copy_table(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    src: &str,
    dst: &str,
    sample: Sample,
    defer: bool,
) -> Result<CopyInfo> {
    let kind = target.kind();
    let d = target.dialect();
    let (source_rows, source_bytes) = check_copy(target, conn, src, dst, sample)?;
    let start = Stopwatch::start();
    let CopyDdl {
        mut create,
        indexes: mut idx_sql,
    } = d.copy_table_ddl(conn, src, dst)?;
    if defer {
        let (c, later) = d.defer_secondary_keys(&create, dst);
        create = c;
        idx_sql.extend(later);
    }
    // Shown and bounded while another session's lock holds it up.
    let what = format!("creating {dst}");
    crate::dbms::lock_watch::watched(target, conn, &what, |conn| {
        tables::prepare_new(conn, kind, dst)?;
        let at = crate::measure::clock::utc_now().to_rfc3339();
        tables::create_owned(conn, kind, dst, &create, &at)
    })?;
    if defer {
        idx_sql.extend(d.detach_secondary_indexes(conn, dst)?);
    }
    if !defer {
        // SQLite's indexes, in place before the rows like the others'
        for s in idx_sql.drain(..) {
            conn.execute(&s)?;
        }
    }
    // The columns that take values: a generated (computed) column is computed again in the
    // copy, and an INSERT that names it is refused.
    let columns = insert_columns(conn, d, src)?;
    let quoted = d.quote_table(src);
    let select = match sample {
        Sample::All => format!("SELECT {columns} FROM {quoted}"),
        Sample::Rows(n) => format!(
            "SELECT {columns} FROM ({}) ixbench_sample",
            d.sample_rows_sql(&quoted, n)
        ),
        Sample::Pct(p) => format!(
            "SELECT {columns} FROM ({}) ixbench_sample",
            d.sample_pct_sql(&quoted, p)
        ),
    };
    let insert = d.insert_select_sql(dst, &columns, &select);
    let isolation = d.nonlocking_read_sql();
    if let Some((read_committed, _)) = isolation {
        // A consistent non-locking read of the user's table (no shared row locks on it).
        conn.execute(read_committed)?;
    }
    let copied = conn
        .execute(&insert)
        .with_context(|| format!("copying {src} into {dst}"));
    if let Some((_, back)) = isolation {
        conn.execute(back)?;
    }
    copied?;
    let loaded = start.elapsed_secs();
    let t_idx = Stopwatch::start();
    for s in &idx_sql {
        conn.execute(s)?;
    }
    let deferred = defer.then(|| (loaded, t_idx.elapsed_secs()));
    let seconds = start.elapsed_secs();
    let rows = count_rows(conn, dst)?;
    let indexes = secondary_indexes(conn, kind, dst)?;
    Ok(CopyInfo {
        source_rows,
        rows,
        seconds,
        indexes,
        source_bytes,
        deferred,
    })
}

/// The columns of `src` an INSERT gives values to (not its generated ones), quoted the DBMS's
/// way and joined with ", "; an error when the catalog lists none.
fn insert_columns(conn: &mut dyn Conn, d: &SqlDialect, src: &str) -> Result<String> {
    let sql = d
        .insert_columns_sql(src)
        .with_context(|| format!("{}: ixbench cannot copy tables on this target", d.name()))?;
    let cols: Vec<String> = conn
        .query_rows(&sql)
        .with_context(|| format!("cannot read the columns of {src}"))?
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .map(|c| d.quote_ident(&c))
        .collect();
    if cols.is_empty() {
        bail!("{src} has no column an INSERT can fill (all are generated)");
    }
    Ok(cols.join(", "))
}

/// The secondary (non-primary) indexes of `table`, by name, sorted.
pub fn secondary_indexes(conn: &mut dyn Conn, kind: &str, table: &str) -> Result<Vec<String>> {
    let Some(sql) = crate::dbms::registry::dialect(kind).secondary_indexes_sql(table) else {
        return Ok(Vec::new());
    };
    let mut v: Vec<String> = conn
        .query_rows(&sql)?
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect();
    v.sort();
    Ok(v)
}

/// Drop `table` if it is ixbench's (the copy, the sbtest-like table).
pub fn drop_owned(conn: &mut dyn Conn, kind: &str, table: &str) -> Result<()> {
    tables::prepare_new(conn, kind, table).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_options() {
        assert!(check_source_name("airportdb.booking").is_ok());
        assert!(check_source_name("booking").is_ok());
        for user in ["order", "Key Tab", "s.Order", "1a", "a;b"] {
            assert!(check_source_name(user).is_ok(), "{user}");
        }
        for bad in ["", "a.b.c", "a'b", "a\"b", "a`b", "a\\b", "a\nb", ".a"] {
            assert!(check_source_name(bad).is_err(), "{bad}");
        }
        assert_eq!(copy_name("px", "Key Tab"), "pxcopy_key_tab");
        assert_eq!(copy_name("", "s.Order"), "copy_order");
        assert_eq!(copy_name("PX", "t"), "pxcopy_t");
        assert_eq!(Sample::Rows(50).fraction(100), 0.5);
        assert_eq!(Sample::Pct(10.0).fraction(5), 0.1);
    }
}
