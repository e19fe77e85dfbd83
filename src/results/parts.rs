//! Each workload's own records in `run.json`, in one generic place: a workload with figures of
//! its own keeps its records under its part's name (`oltp`, `timeseries`, ...), a list at the
//! top level of the file, so the result model names no workload and a new one adds no field.
//!
//! The keys are the ones the typed fields had (`oltp`, `timeseries`), at the same place in the
//! file: a run.json written before reads as it is, and a new run writes the same file.
//!
//! What a reader that knows no workload may rely on in a record (an object): `checks` (the
//! self-checks, [`Check`]s), `error` (what stopped it), `warnings` (lines), `nodes` (per Galera
//! node, [`NodeStep`]s) and its name ([`Parts::label`]). Everything else is the workload's own,
//! described by its part of the JSON Schema ([`PartSchema`]).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::cluster::NodeStep;
use super::Check;

/// Every workload's records, by part name, in the order each part's records were kept.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parts(BTreeMap<String, Vec<Kept>>);

/// One record: as the readers see it, and as it is written (its fields in its type's order:
/// a `serde_json::Value` would sort them, and a new run's run.json would change).
#[derive(Debug, Clone, PartialEq)]
struct Kept {
    value: Value,
    written: Ordered,
}

impl Kept {
    fn new(written: Ordered) -> serde_json::Result<Self> {
        Ok(Kept {
            value: serde_json::to_value(&written)?,
            written,
        })
    }
}

impl Serialize for Parts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(
            self.0
                .iter()
                .map(|(k, v)| (k, v.iter().map(|r| &r.written).collect::<Vec<_>>())),
        )
    }
}

impl<'de> Deserialize<'de> for Parts {
    /// The fields of run.json the result model does not name: each list of objects is a
    /// workload's part; anything else (a field of a newer ixbench) is ignored, as before.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let rest = BTreeMap::<String, Ordered>::deserialize(d)?;
        let mut parts = BTreeMap::new();
        for (k, v) in rest {
            let Ordered::Array(a) = v else { continue };
            if a.is_empty() || !a.iter().all(|r| matches!(r, Ordered::Object(_))) {
                continue;
            }
            let kept: Vec<Kept> = a
                .into_iter()
                .map(Kept::new)
                .collect::<serde_json::Result<_>>()
                .map_err(serde::de::Error::custom)?;
            parts.insert(k, kept);
        }
        Ok(Parts(parts))
    }
}

/// A JSON value whose objects keep their keys in the order they came.
#[derive(Debug, Clone, PartialEq)]
enum Ordered {
    Object(Vec<(String, Ordered)>),
    Array(Vec<Ordered>),
    Leaf(Value),
}

impl Serialize for Ordered {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Ordered::Object(o) => s.collect_map(o.iter().map(|(k, v)| (k, v))),
            Ordered::Array(a) => s.collect_seq(a),
            Ordered::Leaf(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> serde::de::Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(v.into()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(v.into()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(v.into()))
    }
    fn visit_string<E>(self, v: String) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(v.into()))
    }
    fn visit_unit<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(Value::Null))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Ordered, D::Error> {
        Ordered::deserialize(d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Ordered, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = a.next_element()? {
            out.push(v);
        }
        Ok(Ordered::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Ordered, A::Error> {
        let mut out = Vec::new();
        while let Some((k, v)) = a.next_entry()? {
            out.push((k, v));
        }
        Ok(Ordered::Object(out))
    }
}

impl schemars::JsonSchema for Parts {
    fn schema_name() -> Cow<'static, str> {
        "WorkloadParts".into()
    }

    // Flattened into run.json's object: its properties are the run's, not a definition's.
    fn inline_schema() -> bool {
        true
    }

    /// Any other field is a workload's part, a list of records (each workload's own part is
    /// added by [`crate::results::schema::run_schema`] from its [`PartSchema`]), or a newer
    /// ixbench's field: not constrained, as before.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "additionalProperties": {
                "description": "A workload's own records (a list of objects: its part of \
                                run.json), or a field of a newer ixbench (readers ignore what \
                                they do not know)."
            }
        })
    }
}

impl Parts {
    /// Keep `record` (serialized) as the last of the part `part`.
    pub fn push<T: Serialize>(&mut self, part: &str, record: &T) -> anyhow::Result<()> {
        // Through its text: the record's fields stay in its type's order.
        let written: Ordered = serde_json::from_str(&serde_json::to_string(record)?)?;
        self.0
            .entry(part.to_string())
            .or_default()
            .push(Kept::new(written)?);
        Ok(())
    }

    /// The records of the part `part` (none when the run has no such part).
    pub fn get(&self, part: &str) -> Vec<&Value> {
        self.0
            .get(part)
            .map_or_else(Vec::new, |v| v.iter().map(|r| &r.value).collect())
    }

    /// The records of `part` read as `T`; a record that is not a `T` is left out.
    pub fn typed<T: DeserializeOwned>(&self, part: &str) -> Vec<T> {
        self.get(part)
            .into_iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect()
    }

    /// The parts' names (each also its workload's results table: `NAME.csv`, `NAME.md`).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// True when no workload kept a record.
    pub fn is_empty(&self) -> bool {
        self.0.values().all(Vec::is_empty)
    }

    /// Every record, part by part (in the parts' name order), with its part's name.
    pub fn records(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0
            .iter()
            .flat_map(|(k, v)| v.iter().map(move |r| (k.as_str(), &r.value)))
    }

    /// What a record is called where its checks and warnings are listed: its `workload`
    /// (`oltp_read_write`, `kv`), else `partitioning P` for a record of one partitioning,
    /// else its part's name.
    pub fn label(part: &str, record: &Value) -> String {
        if let Some(w) = record["workload"].as_str() {
            w.to_string()
        } else if let Some(p) = record["partitioning"].as_str() {
            format!("partitioning {p}")
        } else {
            part.to_string()
        }
    }

    /// A record's self-checks.
    pub fn checks(record: &Value) -> Vec<Check> {
        serde_json::from_value(record["checks"].clone()).unwrap_or_default()
    }

    /// A record's warnings.
    pub fn warnings(record: &Value) -> Vec<String> {
        serde_json::from_value(record["warnings"].clone()).unwrap_or_default()
    }

    /// A record's figures per Galera node.
    pub fn nodes(record: &Value) -> Vec<NodeStep> {
        serde_json::from_value(record["nodes"].clone()).unwrap_or_default()
    }
}

/// A workload's part of `run.json`'s JSON Schema: its part's name, what it holds, and the
/// schema of one record. Each workload hands its own to the schema
/// ([`crate::results::schema::run_schema`]).
#[derive(Clone, Copy)]
pub struct PartSchema {
    /// The part's name (the key in run.json).
    pub part: &'static str,
    /// What its records are, in words (the schema's description).
    pub what: &'static str,
    /// The schema of one record.
    pub record: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
}

impl PartSchema {
    /// The part `part` of records of type `T`.
    pub fn of<T: schemars::JsonSchema>(part: &'static str, what: &'static str) -> Self {
        PartSchema {
            part,
            what,
            record: |g| g.subschema_for::<T>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lists of objects are parts; a field of another shape is not.
    #[test]
    fn only_lists_of_records_are_parts() {
        let p: Parts = serde_json::from_value(serde_json::json!({
            "mine": [{"workload": "w", "checks": [{"name": "c", "ok": true, "detail": "d"}]}],
            "future_scalar": 3,
            "future_list": [1, 2],
            "empty": []
        }))
        .unwrap();
        let r: Vec<(&str, &Value)> = p.records().collect();
        assert_eq!(r.len(), 1);
        assert_eq!(Parts::label(r[0].0, r[0].1), "w");
        assert_eq!(Parts::checks(r[0].1)[0].name, "c");
        assert!(Parts::warnings(r[0].1).is_empty());
        assert!(p.get("future_list").is_empty());
    }

    /// A record is written with its fields in its type's order, read back and written again
    /// unchanged.
    #[test]
    fn records_keep_their_fields_order() {
        #[derive(Serialize)]
        struct R {
            zeta: u32,
            alpha: Vec<f64>,
            mid: Option<String>,
        }
        let mut p = Parts::default();
        let r = R {
            zeta: 1,
            alpha: vec![0.1, 2.5e-7],
            mid: None,
        };
        p.push("mine", &r).unwrap();
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(
            text,
            r#"{"mine":[{"zeta":1,"alpha":[0.1,2.5e-7],"mid":null}]}"#
        );
        let back: Parts = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        assert_eq!(back.get("mine")[0]["alpha"][1], 2.5e-7);
    }
}
