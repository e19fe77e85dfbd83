//! Checks and parsers of the options the database commands share (`run`, `lab`, ...):
//! each error is one line naming the option.

use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::cli::CommonArgs;
use crate::workload::tables;

/// Check `--quiet-timeout` (seconds, 0 = no wait).
pub fn parse_quiet_timeout(secs: f64) -> Result<Duration> {
    if !(0.0..=86_400.0).contains(&secs) {
        bail!("--quiet-timeout must be between 0 and 86400 seconds");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parse `--data-length MIN..MAX`.
pub fn parse_data_length(s: &str) -> Result<(usize, usize)> {
    let (a, b) = s
        .split_once("..")
        .with_context(|| format!("invalid --data-length {s:?}: expected MIN..MAX, e.g. 10..20"))?;
    let (a, b): (usize, usize) = (
        a.trim()
            .parse()
            .with_context(|| format!("invalid --data-length {s:?}"))?,
        b.trim()
            .parse()
            .with_context(|| format!("invalid --data-length {s:?}"))?,
    );
    if a == 0 || a > b || b > 4000 {
        bail!("invalid --data-length {s:?}: need 1 <= MIN <= MAX <= 4000");
    }
    Ok((a, b))
}

/// Check the options every database command shares against the target they name, before
/// anything is created: options that would be silently ignored on this target are errors, and
/// the tables' names (and the index names derived from them) must fit the DBMS's identifier
/// limit.
pub fn check_common(common: &CommonArgs, tables: &[String]) -> Result<()> {
    let spec = crate::cluster_target::target_spec(&common.target)?;
    crate::cluster_target::check_args(common)?;
    let dialect = crate::dbms::dialect::for_kind(&spec.kind);
    if let Some(engine) = &common.engine {
        if !dialect.storage_engines() {
            bail!(
                "--engine {engine} is for MySQL/MariaDB targets; {} has no storage engine to choose",
                dialect.name()
            );
        }
    }
    if common.keep_data && !spec.needs_server() {
        bail!("--keep-data keeps the data directory of the server ixbench starts for --target postgres or mariadb; this target has none");
    }
    if let Some(dir) = &common.server_bin {
        if !spec.needs_server() {
            bail!("--server-bin starts the throwaway server of --target postgres or mariadb from another install; this target has none");
        }
        let kind = crate::server::ServerKind::for_target(&spec.kind);
        crate::server::check_server_bin(kind, Some(dir))?;
    }
    if common.rm && !spec.needs_server() {
        bail!("--rm removes the data directory of the server ixbench starts for --target postgres or mariadb; this target has none");
    }
    if !common.sqlite_pragma.is_empty() && !dialect.pragmas() {
        bail!(
            "--sqlite-pragma is for SQLite targets; this target is {}",
            spec.kind
        );
    }
    tables::validate_names(&spec.kind, tables)
}

/// Parse `--set NAME=VALUE` options.
pub fn parse_settings(list: &[String]) -> Result<Vec<(String, String)>> {
    list.iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .filter(|(k, _)| !k.is_empty())
                .with_context(|| format!("invalid --set {p:?}: expected NAME=VALUE"))
        })
        .collect()
}

/// Parse `--sqlite-pragma NAME=VALUE` options.
pub fn parse_pragmas(list: &[String]) -> Result<Vec<(String, String)>> {
    let mut pragmas = Vec::new();
    for p in list {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("invalid --sqlite-pragma {p:?}: expected NAME=VALUE"))?;
        let (k, v) = (k.trim().to_string(), v.trim().to_string());
        crate::dbms::sqlite::validate_pragma(&k, &v)?;
        pragmas.push((k, v));
    }
    Ok(pragmas)
}

/// The options every timed transaction command shares (`ixbench oltp`, `ixbench timeseries`):
/// `--time`, `--interval`, `--stall-timeout` and `--rate` (in `rate_unit` per second).
pub fn check_timed_run(
    time: f64,
    interval: f64,
    stall_timeout: f64,
    rate: Option<f64>,
    rate_unit: &str,
) -> Result<()> {
    if !(time > 0.0 && time <= crate::cli::MAX_QUERY_SECONDS) {
        bail!(
            "--time must be more than 0 and at most {} seconds",
            crate::cli::MAX_QUERY_SECONDS
        );
    }
    if !(crate::cli::MIN_INTERVAL..=crate::cli::MAX_INTERVAL).contains(&interval) {
        bail!(
            "--interval must be between {} and {} seconds",
            crate::cli::MIN_INTERVAL,
            crate::cli::MAX_INTERVAL
        );
    }
    if !(0.1..=1e6).contains(&stall_timeout) {
        bail!("--stall-timeout must be between 0.1 and 1000000 seconds");
    }
    if let Some(r) = rate {
        if !(r > 0.0 && r <= 1e7) {
            bail!("--rate must be more than 0 and at most 10000000 {rate_unit}/s");
        }
    }
    Ok(())
}

/// The knobs of a sweep (`--knob NAME=...`) checked against the settings the throwaway server's
/// program knows, before anything is started or created (a typo is found at once, with a "did
/// you mean"). A server ixbench does not start is checked when connected.
pub fn check_knob_names(common: &CommonArgs, names: &[String]) -> Result<()> {
    let spec = crate::cluster_target::target_spec(&common.target)?;
    if names.is_empty() || !spec.needs_server() {
        return Ok(());
    }
    let kind = crate::server::ServerKind::for_target(&spec.kind);
    crate::server::check_setting_names(kind, common.server_bin.as_deref(), names)
        .map_err(|e| anyhow::anyhow!("--knob: {e}"))
}
