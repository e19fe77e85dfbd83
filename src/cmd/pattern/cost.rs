//! `ixbench pattern cost`: the same insert-benchmark load with the secondary indexes' keys
//! right-growing, random, or in N streams, on each engine, on throwaway servers with a small
//! cache, so the cost of the insert pattern shows: insert rate, server CPU, I/O and the DBMS's
//! own reads per inserted row.
//!
//! Each (engine, pattern) point is one `ixbench run` (steps `l.i0,l.x,l.i1`, profile 2020 so
//! l.i1 only inserts) with `--index-pattern all=PATTERN` on a new throwaway server started with
//! the cache setting (`--set`), its results in `OUT/ENGINE-N/`; the figures are those of l.i1,
//! where every secondary index exists and grows. Nothing is computed that the run did not
//! measure: a figure the run has not (no server sample, no counter) is shown as `-` and
//! stored as null.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;

use crate::pattern::spec::Spec;
use crate::results::RunResult;
use crate::server::CacheEngine as Engine;

/// Options of `ixbench pattern cost`.
#[derive(Debug, Clone, Args)]
pub struct CostArgs {
    /// Engines: postgres, innodb, myrocks (throwaway servers started by ixbench).
    #[arg(long, value_delimiter = ',', default_value = "postgres,innodb,myrocks")]
    pub engines: Vec<String>,

    /// Patterns of the secondary indexes' keys, each given to all of them.
    #[arg(long, value_delimiter = ',', default_value = "asc,inf,streams:16")]
    pub patterns: Vec<String>,

    /// Run length: `smoke` (20k + 10k rows), `small` (100k + 50k), `default` (1M + 500k),
    /// `large` (10M + 5M); --rows and --rows2 win over it.
    #[arg(long, value_enum)]
    pub size: Option<crate::options::cli::SizePreset>,

    /// Rows loaded in l.i0 (before the indexes are built) [default: 1000000, or --size's].
    #[arg(long)]
    pub rows: Option<u64>,

    /// Rows inserted in l.i1 with the indexes (the figures are of this step) [default: 500000,
    /// or --size's].
    #[arg(long)]
    pub rows2: Option<u64>,

    /// Rows per commit in l.i1.
    #[arg(long, default_value_t = 50)]
    pub rows_per_commit_i1: u64,

    /// Cache size of the servers: PostgreSQL shared_buffers, InnoDB innodb_buffer_pool_size,
    /// MyRocks rocksdb_block_cache_size (e.g. 64MB).
    #[arg(long, default_value = "64MB")]
    pub cache: String,

    /// Results directory (one subdirectory per run, and pattern-cost.json / .csv).
    #[arg(long)]
    pub out: PathBuf,

    /// Seed of the rows.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl CostArgs {
    /// Rows of l.i0 and l.i1: the flags, else `--size`'s, else the defaults.
    pub fn rows(&self) -> (u64, u64) {
        use crate::options::cli::SizePreset::*;
        let (r, r2) = match self.size.unwrap_or(Default) {
            Smoke => (20_000, 10_000),
            Small => (100_000, 50_000),
            Default => (1_000_000, 500_000),
            Large => (10_000_000, 5_000_000),
        };
        (self.rows.unwrap_or(r), self.rows2.unwrap_or(r2))
    }
}

/// One (engine, pattern) point.
#[derive(Debug, Clone, Serialize)]
pub struct CostRow {
    /// postgres, innodb or myrocks.
    pub engine: String,
    /// The secondary indexes' pattern.
    pub pattern: String,
    /// The geek code l.i1 stored.
    pub geek_code: Option<String>,
    /// The run's results directory.
    pub run_dir: String,
    /// Rows l.i1 inserted.
    pub rows: u64,
    /// l.i1's insert rate, rows/s.
    pub inserts_per_sec: f64,
    /// Server CPU (user + system) per inserted row, microseconds.
    pub server_cpu_us_per_row: Option<f64>,
    /// Bytes the server processes read from storage per inserted row (/proc read_bytes).
    pub read_bytes_per_row: Option<f64>,
    /// Bytes the server dirtied or wrote per inserted row (/proc write_bytes, see run.json).
    pub dirtied_bytes_per_row: Option<f64>,
    /// The DBMS's own count of reads (cache misses) per inserted row.
    pub dbms_reads_per_row: Option<f64>,
    /// Which counter `dbms_reads_per_row` is.
    pub dbms_reads_counter: String,
    /// All checks of the run passed.
    pub checks_ok: bool,
    /// The database's size after l.i1, bytes (unknown where the DBMS does not tell).
    pub data_bytes: Option<u64>,
    /// The data fits in the cache: the inserts need no reads, so the patterns' cost difference
    /// cannot appear (unknown when the size is).
    pub fits_in_cache: Option<bool>,
}

/// How one engine is started, and its cache-miss counter (the throwaway servers' table).
fn engine(name: &str) -> Result<Engine> {
    crate::server::cache_engine(name)
        .with_context(|| format!("--engines: unknown engine {name:?} (postgres, innodb, myrocks)"))
}

/// `64MB` -> the setting's text on each server: the unit letter followed by `suffix`
/// (PostgreSQL `64MB`, MariaDB `64M`).
fn cache_value(cache: &str, suffix: &str) -> Result<String> {
    let c = cache.trim().to_ascii_uppercase();
    let (num, unit) = c.split_at(c.find(|ch: char| !ch.is_ascii_digit()).unwrap_or(c.len()));
    let n: u64 = num
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .with_context(|| format!("--cache {cache:?}: expected a size such as 64MB"))?;
    let u = match unit.trim_end_matches('B') {
        "K" => "K",
        "M" | "" if !unit.is_empty() => "M",
        "G" => "G",
        _ => bail!("--cache {cache:?}: expected a size in KB, MB or GB, such as 64MB"),
    };
    Ok(format!("{n}{u}{suffix}"))
}

/// The command line of one point's run.
fn run_argv(a: &CostArgs, e: &Engine, pattern: &str, dir: &std::path::Path) -> Result<Vec<String>> {
    let mut v: Vec<String> = [
        "ixbench",
        "run",
        "--target",
        e.target,
        "--rm",
        "--steps",
        "l.i0,l.x,l.i1",
        "--profile",
        "2020",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(en) = e.engine {
        v.extend(["--engine".into(), en.into()]);
    }
    v.extend([
        "--set".into(),
        format!(
            "{}={}",
            e.cache_setting,
            cache_value(&a.cache, e.size_suffix)?
        ),
        "--out".into(),
        dir.display().to_string(),
        "--rows".into(),
        a.rows().0.to_string(),
        "--rows2".into(),
        a.rows().1.to_string(),
        "--rows-per-commit-i1".into(),
        a.rows_per_commit_i1.to_string(),
        "--seed".into(),
        a.seed.to_string(),
        "--index-pattern".into(),
        format!("all={pattern}"),
    ]);
    Ok(v)
}

/// The point's figures from its run's results (l.i1).
pub fn row_of(
    engine: &str,
    pattern: &str,
    reads_counter: &str,
    run_dir: &std::path::Path,
    run: &RunResult,
) -> Result<CostRow> {
    let st = run
        .steps
        .iter()
        .find(|s| s.name == "l.i1")
        .context("the run has no l.i1 step")?;
    let rows = st.totals.rows[0];
    let per_row = |v: Option<u64>| v.filter(|_| rows > 0).map(|v| v as f64 / rows as f64);
    let srv = st.server.as_ref();
    Ok(CostRow {
        engine: engine.to_string(),
        pattern: pattern.to_string(),
        geek_code: st.geek_code.clone(),
        run_dir: run_dir.display().to_string(),
        rows,
        inserts_per_sec: st.summary.ips,
        server_cpu_us_per_row: per_row(srv.map(|s| s.cpu_us)),
        read_bytes_per_row: per_row(srv.and_then(|s| s.read_bytes)),
        dirtied_bytes_per_row: per_row(srv.and_then(|s| s.dirtied_bytes)),
        dbms_reads_per_row: per_row(srv.and_then(|s| {
            s.dbms_counters
                .iter()
                .find(|(n, _)| n == reads_counter)
                .map(|(_, v)| *v)
        })),
        dbms_reads_counter: reads_counter.to_string(),
        checks_ok: run.steps.iter().all(|s| s.checks_ok()),
        data_bytes: st.sizes.database_bytes,
        fits_in_cache: None,
    })
}

/// `--cache` in bytes.
fn cache_bytes(cache: &str) -> Result<u64> {
    // `64MB`: the unit letter and `B`, whatever the server's own syntax
    let v = cache_value(cache, "B")?;
    let (num, unit) = v.split_at(v.len() - 2);
    let n: u64 = num.parse().context("cache size")?;
    Ok(n << match unit {
        "KB" => 10,
        "MB" => 20,
        _ => 30,
    })
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// The table `pattern cost` prints (Markdown).
pub fn table(rows: &[CostRow]) -> String {
    let mut s = String::from(
        "| engine | pattern | geek code (l.i1) | rows | inserts/s | server CPU µs/row | read KB/row | dirtied KB/row | DBMS reads/row | data MB (fits in cache?) |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let code = r
            .geek_code
            .as_deref()
            .and_then(|c| c.split(" pdc=").nth(1).map(|x| format!("pdc={x}")))
            .unwrap_or_else(|| "-".into());
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.0} | {} | {} | {} | {} ({}) | {} |\n",
            r.engine,
            r.pattern,
            code,
            r.rows,
            r.inserts_per_sec,
            fmt_opt(r.server_cpu_us_per_row, 1),
            fmt_opt(r.read_bytes_per_row.map(|b| b / 1024.0), 3),
            fmt_opt(r.dirtied_bytes_per_row.map(|b| b / 1024.0), 2),
            fmt_opt(r.dbms_reads_per_row, 3),
            r.dbms_reads_counter,
            match (r.data_bytes, r.fits_in_cache) {
                (Some(b), Some(f)) => format!(
                    "{:.0} ({})",
                    b as f64 / 1048576.0,
                    if f {
                        "YES: no cost difference can show"
                    } else {
                        "no"
                    }
                ),
                _ => "unknown".to_string(),
            },
        ));
    }
    s
}

/// Run `ixbench pattern cost`.
pub fn run(a: &CostArgs, interrupt: &AtomicBool) -> Result<u8> {
    // everything checked before the first server starts
    let engines = a
        .engines
        .iter()
        .map(|e| Ok((e.trim().to_ascii_lowercase(), engine(e.trim())?)))
        .collect::<Result<Vec<_>>>()?;
    if engines.is_empty() || a.patterns.is_empty() {
        bail!("--engines and --patterns need at least one each");
    }
    for p in &a.patterns {
        p.parse::<Spec>()
            .map_err(|e| anyhow::anyhow!("--patterns: {e}"))?;
    }
    if a.out.exists()
        && a.out
            .read_dir()
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        bail!("--out {}: exists and is not empty", a.out.display());
    }
    for (_, e) in &engines {
        cache_value(&a.cache, e.size_suffix)?;
        if !e.installed() {
            bail!("--engines myrocks: the MyRocks plugin is not installed (Debian package mariadb-plugin-rocksdb)");
        }
    }
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create {}", a.out.display()))?;
    let mut rows = Vec::new();
    let mut status = 0u8;
    for (name, e) in &engines {
        for (i, p) in a.patterns.iter().enumerate() {
            if interrupt.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            let dir = a.out.join(format!("{name}-{}", i + 1));
            let argv = run_argv(a, e, p, &dir)?;
            crate::outln!(
                "\n=== pattern cost: {name}, secondary keys {p}: {}",
                argv[1..].join(" ")
            );
            // `ixbench run` in its own process, exactly as the printed command line
            let st = crate::step::child::run_ixbench(
                &argv[1..],
                std::process::Stdio::inherit(),
                std::process::Stdio::inherit(),
                interrupt,
            )
            .with_context(|| format!("{name} with {p}"))?;
            let Some(rc) = st.code() else {
                bail!("{name} with {p}: ixbench run was killed by a signal");
            };
            let rc = u8::try_from(rc).unwrap_or(1);
            status = status.max(rc);
            let text = std::fs::read_to_string(dir.join("run.json"))
                .with_context(|| format!("cannot read {}/run.json", dir.display()))?;
            let run: RunResult = serde_json::from_str(&text)
                .with_context(|| format!("bad {}/run.json", dir.display()))?;
            let mut row = row_of(name, p, e.reads, &dir, &run)?;
            let cache = cache_bytes(&a.cache)?;
            row.fits_in_cache = row.data_bytes.map(|d| d <= cache);
            if row.fits_in_cache == Some(true) {
                crate::outln!(
                    "WARNING: {name}: the data ({:.0} MB after l.i1) fits in the cache (--cache {}): \
                     the inserts read nothing, so the patterns' cost difference cannot appear; \
                     use more --rows (or --size large) or a smaller --cache",
                    row.data_bytes.unwrap_or(0) as f64 / 1048576.0,
                    a.cache
                );
            }
            rows.push(row);
            // after every point, so a failure later loses nothing finished
            std::fs::write(
                a.out.join("pattern-cost.json"),
                serde_json::to_string_pretty(&serde_json::json!({
                    "command": "pattern cost",
                    "cache": a.cache,
                    "rows": a.rows().0,
                    "rows2": a.rows().1,
                    "points": rows,
                }))?,
            )?;
            std::fs::write(a.out.join("pattern-cost.md"), table(&rows))?;
        }
    }
    crate::outln!(
        "\npattern cost: l.i1 ({} rows after {} loaded), cache {} on each server\n{}results: {}",
        a.rows().1,
        a.rows().0,
        a.cache,
        table(&rows),
        a.out.display()
    );
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_in_bytes() {
        assert_eq!(cache_bytes("64MB").unwrap(), 64 << 20);
        assert_eq!(cache_bytes("1G").unwrap(), 1 << 30);
        assert_eq!(cache_bytes("512kb").unwrap(), 512 << 10);
    }

    #[test]
    fn sizes_set_rows_and_flags_win() {
        use clap::Parser;
        #[derive(Parser)]
        struct P {
            #[command(flatten)]
            a: CostArgs,
        }
        let p = |v: &[&str]| {
            P::try_parse_from(["x", "--out", "o"].iter().chain(v))
                .unwrap()
                .a
        };
        assert_eq!(p(&[]).rows(), (1_000_000, 500_000));
        assert_eq!(p(&["--size", "smoke"]).rows(), (20_000, 10_000));
        assert_eq!(p(&["--size", "smoke", "--rows", "7"]).rows(), (7, 10_000));
    }

    #[test]
    fn cache_values() {
        let pg = engine("postgres").unwrap().size_suffix;
        let innodb = engine("innodb").unwrap().size_suffix;
        assert_eq!(cache_value("64MB", pg).unwrap(), "64MB");
        assert_eq!(cache_value("64mb", innodb).unwrap(), "64M");
        assert_eq!(cache_value("1G", innodb).unwrap(), "1G");
        assert!(cache_value("64", pg).is_err());
        assert!(cache_value("0MB", pg).is_err());
        assert!(cache_value("big", pg).is_err());
        assert!(engine("oracle").is_err());
    }
}
