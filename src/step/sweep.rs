//! Knob sweeps: the knobs and values given with `--knob NAME=V1,V2,...` and the full grid of
//! their combinations, which `ixbench index` builds at (see [`crate::cmd::index`]).

use anyhow::{bail, Context, Result};

/// A knob and the values to sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct KnobAxis {
    /// Knob name.
    pub name: String,
    /// Values, in order.
    pub values: Vec<String>,
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
