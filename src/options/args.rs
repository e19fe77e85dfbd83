//! Parsers and checks of option values the database commands share (`run`, `lab`, ...): each
//! error is one line naming the option. The checks of the shared options against the target
//! are the session's ([`crate::session::check_common`]).

use std::time::Duration;

use anyhow::{bail, Context, Result};

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
        crate::dbms::registry::check_pragma(&k, &v)?;
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
    if !(time > 0.0 && time <= crate::options::cli::MAX_QUERY_SECONDS) {
        bail!(
            "--time must be more than 0 and at most {} seconds",
            crate::options::cli::MAX_QUERY_SECONDS
        );
    }
    if !(crate::options::cli::MIN_INTERVAL..=crate::options::cli::MAX_INTERVAL).contains(&interval)
    {
        bail!(
            "--interval must be between {} and {} seconds",
            crate::options::cli::MIN_INTERVAL,
            crate::options::cli::MAX_INTERVAL
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
