//! The JSON Schemas of what ixbench writes, generated from the result types themselves (so they
//! cannot drift from the files; their doc comments are the descriptions) and kept in the
//! repository as `schema/run.schema.json` and `schema/intervals.schema.json` for people and
//! tools that read results without ixbench (`tests/schema.rs` checks the kept files equal these
//! and validates every command's real output against them). Also the `schema_version` check a
//! reader of `run.json` makes first.
//!
//! Every command that measures (`run`, `index`, `ddl`, `oltp`, `timeseries`) writes the same
//! `run.json` layout (its own part filled: `steps`, `builds`, `ddl`, or a workload's own part,
//! [`super::parts`], such as `oltp` and `timeseries`) and
//! one JSON object per line in `intervals.ndjson`; `compare` and `report` write no JSON.
//!
//! Versioning: a new field may appear without a new `schema_version` (readers ignore what they
//! do not know); removing or renaming a field or changing its type or meaning bumps
//! [`SCHEMA_VERSION`].

use std::path::Path;

use anyhow::{bail, Result};
use serde_json::{json, Value};

use super::parts::PartSchema;
use super::{RunResult, SCHEMA_VERSION};
use crate::measure::interval::IntervalLine;
use crate::measure::txn::TxnLine;
use crate::results::ddl::TimelineRow;

/// The schema_versions this ixbench reads.
pub const READS: &[u32] = &[SCHEMA_VERSION];

/// One line of `intervals.ndjson`: which kind depends on the command (an untagged union).
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum IntervalsLine {
    /// `run` and `index`: one interval of an insert-benchmark step (the insert benchmark's
    /// per-interval line).
    Interval(IntervalLine),
    /// `oltp` and `timeseries`: one interval of a transaction step (sysbench's line).
    Txn(TxnLine),
    /// `ddl`: one second of the load, with the DDL's phase and marks.
    Ddl(TimelineRow),
}

fn finish(mut v: Value, title: &str) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.insert("title".into(), json!(title));
    }
    v
}

/// The schema of `run.json`, with `schema_version` fixed to [`SCHEMA_VERSION`] and each
/// workload's part (`parts`: every workload's, e.g. `crate::workload::txn_runner::record_parts`)
/// described by its records' schema.
pub fn run_schema(parts: &[PartSchema]) -> Value {
    let mut g = schemars::SchemaGenerator::default();
    // The parts' record types first: their definitions join the run's.
    let described: Vec<(&str, Value)> = parts
        .iter()
        .map(|p| {
            let items = (p.record)(&mut g).to_value();
            (
                p.part,
                json!({"description": p.what, "items": items, "type": "array"}),
            )
        })
        .collect();
    let mut v = g.into_root_schema_for::<RunResult>().to_value();
    if let Some(props) = v.pointer_mut("/properties").and_then(Value::as_object_mut) {
        for (part, schema) in described {
            props.insert(part.into(), schema);
        }
    }
    if let Some(p) = v.pointer_mut("/properties/schema_version") {
        *p = json!({
            "description": "Layout version of this file; a reader checks it first (this schema \
                            describes version 1).",
            "const": SCHEMA_VERSION,
        });
    }
    finish(v, "ixbench run.json")
}

/// The schema of one line of `intervals.ndjson`.
pub fn intervals_schema() -> Value {
    let v = schemars::schema_for!(IntervalsLine).to_value();
    finish(v, "ixbench intervals.ndjson line")
}

/// The schemas as kept in `schema/`, with the workloads' `parts` of run.json: (file name,
/// pretty JSON with a final newline).
pub fn files(parts: &[PartSchema]) -> Vec<(&'static str, String)> {
    let pretty = |v: Value| serde_json::to_string_pretty(&v).expect("a JSON value") + "\n";
    vec![
        ("run.schema.json", pretty(run_schema(parts))),
        ("intervals.schema.json", pretty(intervals_schema())),
    ]
}

/// Check the `schema_version` of a `run.json` read from `path` before using it: a clear
/// one-line error for a file of another version (or none).
pub fn check_version(v: &Value, path: &Path) -> Result<()> {
    match v.get("schema_version").map(|x| (x, x.as_u64())) {
        Some((_, Some(n))) if READS.iter().any(|&r| u64::from(r) == n) => Ok(()),
        Some((_, Some(n))) => {
            let by = v
                .get("ixbench_version")
                .and_then(Value::as_str)
                .map(|w| format!(" (written by ixbench {w})"))
                .unwrap_or_default();
            bail!(
                "{} has schema_version {n}{by}, which this ixbench {} cannot read (it reads \
                 version {}): use a matching ixbench",
                path.display(),
                env!("CARGO_PKG_VERSION"),
                READS
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        Some((x, None)) => bail!(
            "{} is not an ixbench run.json (schema_version {x} is not a number)",
            path.display()
        ),
        None => bail!(
            "{} is not an ixbench run.json (no schema_version)",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        let p = Path::new("x/run.json");
        assert!(check_version(&json!({"schema_version": SCHEMA_VERSION}), p).is_ok());
        let e = check_version(
            &json!({"schema_version": 99, "ixbench_version": "9.0.0"}),
            p,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("schema_version 99") && e.contains("9.0.0"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        let e = check_version(&json!({"steps": []}), p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no schema_version"), "{e}");
        let e = check_version(&json!({"schema_version": "1"}), p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a number"), "{e}");
    }

    #[test]
    fn schemas_name_their_parts() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Mine {
            /// Its figure.
            figure: f64,
        }
        let r = run_schema(&[PartSchema::of::<Mine>("mine", "My records.")]);
        assert_eq!(r["properties"]["schema_version"]["const"], SCHEMA_VERSION);
        for f in ["steps", "builds", "ddl", "mine", "build"] {
            assert!(r["properties"].get(f).is_some(), "run.json: {f}");
        }
        // a workload's part: its records' type among the definitions, its words
        assert_eq!(
            r["properties"]["mine"]["items"]["$ref"], "#/$defs/Mine",
            "{r}"
        );
        assert_eq!(r["properties"]["mine"]["description"], "My records.");
        assert!(
            r["$defs"]["Mine"]["properties"].get("figure").is_some(),
            "{r}"
        );
        let i = intervals_schema();
        assert_eq!(i["anyOf"].as_array().map(Vec::len), Some(3), "{i}");
    }
}
