//! Knob sweeps: the knobs and values given with `--knob NAME=V1,V2,...` and the full grid of
//! their combinations, which `ixbench index` builds at (see [`crate::cmd::index`]).

use anyhow::{bail, Context, Result};

use crate::dbms::{Conn, Dbms, KnobScope};
use crate::measure::clock::Stopwatch;
use crate::session::Session;

pub use crate::dbms::{knob_label, KnobAxis};

/// The `--knob NAME=V1,V2` axes of a sweep, each parsed, their names checked against the
/// target (a knob a throwaway server would not take stops the command before anything starts).
pub fn parse_knobs(
    common: &crate::options::cli::CommonArgs,
    knobs: &[String],
) -> Result<Vec<KnobAxis>> {
    let axes: Vec<KnobAxis> = knobs.iter().map(|k| parse_knob(k)).collect::<Result<_>>()?;
    let names: Vec<String> = axes.iter().map(|a| a.name.clone()).collect();
    crate::session::check_knob_names(common, &names)?;
    Ok(axes)
}

/// Parse `--knob NAME=V1,V2,...`.
pub fn parse_knob(s: &str) -> Result<KnobAxis> {
    let (name, vals) = s
        .split_once('=')
        .with_context(|| format!("invalid --knob {s:?}: expected NAME=V1,V2,..."))?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        bail!("invalid --knob {s:?}: the name must be letters, digits, _ and .");
    }
    let values: Vec<String> = vals
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() {
        bail!("invalid --knob {s:?}: no values");
    }
    for v in &values {
        if !v
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        {
            bail!("invalid --knob value {v:?} for {name}: use letters, digits, _ - .");
        }
    }
    Ok(KnobAxis {
        name: name.to_string(),
        values,
    })
}

/// Every combination of the axes' values, first axis slowest.
pub fn grid(axes: &[KnobAxis]) -> Vec<Vec<(String, String)>> {
    let mut points: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for a in axes {
        let mut next = Vec::new();
        for p in &points {
            for v in &a.values {
                let mut q = p.clone();
                q.push((a.name.clone(), v.clone()));
                next.push(q);
            }
        }
        points = next;
    }
    points
}

/// Check every knob of `axes` is known, and how it can be set: server-wide knobs need a server that
/// ixbench started (it is restarted with each value).
pub fn knob_scopes(
    axes: &[KnobAxis],
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    own_server: bool,
) -> Result<Vec<KnobScope>> {
    let mut out = Vec::new();
    for a in axes {
        let scope = target.knob_scope(conn, &a.name)?;
        if scope != KnobScope::Session && !own_server {
            bail!(
                "knob {} is server-wide ({}): ixbench sweeps it only on a server it started and can restart (--target {} instead of a URL)",
                a.name,
                if scope == KnobScope::Restart { "restart-only" } else { "global" },
                crate::server::ServerKind::for_target(target.kind()).name()
            );
        }
        out.push(scope);
    }
    Ok(out)
}

/// The knobs of `point` that are set server-wide (not per session), with their values.
pub fn server_wide(point: &[(String, String)], scopes: &[KnobScope]) -> Vec<(String, String)> {
    point
        .iter()
        .zip(scopes)
        .filter(|(_, sc)| **sc != KnobScope::Session)
        .map(|(kv, _)| kv.clone())
        .collect()
}

/// Restart the server ixbench started with the server-wide knobs of `point` (on top of the
/// `--set` settings) if they differ from what it runs with, and reconnect; true when it was
/// restarted.
pub fn apply_server_knobs(
    s: &mut Session,
    point: &[(String, String)],
    scopes: &[KnobScope],
    base: &[(String, String)],
) -> Result<bool> {
    let wanted = server_wide(point, scopes);
    if wanted.is_empty() {
        return Ok(false);
    }
    let Some(server) = s.server.as_mut() else {
        bail!("server-wide knobs need a server ixbench started");
    };
    let mut settings: Vec<(String, String)> = base
        .iter()
        .filter(|(k, _)| !wanted.iter().any(|(w, _)| w.eq_ignore_ascii_case(k)))
        .cloned()
        .collect();
    settings.extend(wanted.iter().cloned());
    let norm = |v: &[(String, String)]| {
        let mut v: Vec<(String, String)> = v
            .iter()
            .map(|(k, x)| (k.to_ascii_lowercase().replace('-', "_"), x.clone()))
            .collect();
        v.sort();
        v
    };
    if norm(&server.settings) == norm(&settings) {
        return Ok(false);
    }
    let t0 = Stopwatch::start();
    server.restart_with(&settings)?;
    s.conn = s.target.connect()?;
    crate::outln!(
        "   restarted the server with {} in {:.1} s",
        knob_label(&wanted),
        t0.elapsed_secs()
    );
    Ok(true)
}

/// Whether a value the DBMS reports is the one asked for (numbers compare as numbers, names
/// case-insensitively).
pub fn same_value(asked: &str, now: &str) -> bool {
    match (asked.parse::<f64>(), now.parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => asked.eq_ignore_ascii_case(now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_and_grid() {
        let a = parse_knob("threads=0,2").unwrap();
        let b = parse_knob("cache_size = -2000, -64000").unwrap();
        assert_eq!(b.values, vec!["-2000", "-64000"]);
        let g = grid(&[a, b]);
        assert_eq!(g.len(), 4);
        assert_eq!(
            g[1],
            vec![
                ("threads".into(), "0".into()),
                ("cache_size".into(), "-64000".into())
            ]
        );
        assert_eq!(grid(&[]), vec![Vec::<(String, String)>::new()]);
        for bad in ["threads", "=1", "x=", "x=1;drop", "a b=1"] {
            assert!(parse_knob(bad).is_err(), "{bad}");
        }
    }
}
