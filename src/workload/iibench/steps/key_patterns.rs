//! Key patterns on `ixbench run` (`--pk-pattern`, `--index-pattern NAME=SPEC`): parsing and
//! checking them against the insert benchmark's step plan before anything runs, the per-table
//! generators, and the geek code of every index a step's inserts hit. The patterns themselves
//! are [`crate::pattern`]; the insert benchmark's own codes, where no pattern is given, are
//! [`crate::workload::iibench::codes`].

use std::sync::Arc;

use anyhow::{bail, Result};

use crate::pattern::code::{line, GeekCode};
use crate::pattern::spec::{parse_named, Spec};
use crate::workload::iibench::plan::{StepKind, StepSpec};
use crate::workload::iibench::{codes, derive_seed, KeyPatterns, INDEXES};

/// The key patterns of a run: the PK's, and each secondary index's (by [`INDEXES`] position).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunPatterns {
    /// The PK's pattern (`None`: the server assigns ascending PKs).
    pub pk: Option<Spec>,
    /// Each secondary index's pattern (`None`: the insert benchmark's own values).
    pub index: [Option<Spec>; 3],
}

impl RunPatterns {
    /// Parse `--pk-pattern` and `--index-pattern`s for a run with `secondary` secondary
    /// indexes; one-line errors for unknown names, bad specs, an index the run does not create,
    /// or an index given twice.
    pub fn parse(pk: Option<&str>, index: &[String], secondary: usize) -> Result<RunPatterns> {
        let mut out = RunPatterns {
            pk: pk
                .map(|s| {
                    s.parse::<Spec>()
                        .map_err(|e| anyhow::anyhow!("--pk-pattern: {e}"))
                })
                .transpose()?,
            ..Default::default()
        };
        for arg in index {
            let (name, spec) = parse_named(arg, "")
                .map_err(|e| anyhow::anyhow!("--index-pattern {arg:?}: {e}"))?;
            if name.is_empty() {
                bail!("--index-pattern {arg:?}: expected NAME=SPEC (NAME: marketsegment, registersegment, pdc or all)");
            }
            let which: Vec<usize> = if name.eq_ignore_ascii_case("all") {
                (0..secondary.min(INDEXES.len())).collect()
            } else {
                match INDEXES
                    .iter()
                    .position(|d| d.suffix.eq_ignore_ascii_case(&name))
                {
                    Some(i) if i < secondary => vec![i],
                    Some(_) => bail!(
                        "--index-pattern {arg:?}: index {name} is not created with --secondary-indexes {secondary}"
                    ),
                    None => bail!(
                        "--index-pattern {arg:?}: unknown index {name:?} (the insert benchmark's are marketsegment, registersegment, pdc; or all)"
                    ),
                }
            };
            if which.is_empty() {
                bail!("--index-pattern {arg:?}: the run creates no secondary index (--secondary-indexes 0)");
            }
            for i in which {
                if out.index[i].is_some() {
                    bail!("--index-pattern: index {} given twice", INDEXES[i].suffix);
                }
                out.index[i] = Some(spec.clone());
            }
        }
        Ok(out)
    }

    /// True when no pattern is given (the insert benchmark's own values).
    pub fn is_default(&self) -> bool {
        self.pk.is_none() && self.index.iter().all(|s| s.is_none())
    }

    /// Check the patterns against the steps: they number keys from the table's creation, so
    /// the first step must be l.i0; a PK that is not ascending cannot go with steps that
    /// delete the oldest rows (they delete by PK range from the smallest PK).
    pub fn check_steps(&self, steps: &[StepSpec]) -> Result<()> {
        if self.is_default() {
            return Ok(());
        }
        let creates = matches!(
            steps.first().map(|s| &s.kind),
            Some(StepKind::Load {
                create_table: true,
                ..
            })
        );
        if !creates {
            bail!("--pk-pattern/--index-pattern number the keys from the table's creation: the first step must be l.i0");
        }
        if let Some(pk) = &self.pk {
            let asc = pk.rhs && !pk.lhs && pk.mid_asc == 0 && pk.mid_desc == 0 && !pk.random;
            let deleting = steps.iter().find(|s| {
                matches!(
                    s.kind,
                    StepKind::Load { delete: true, .. } | StepKind::ReadWrite { delete: true, .. }
                )
            });
            if let (false, Some(d)) = (asc, deleting) {
                bail!(
                    "--pk-pattern {pk}: step {} deletes the oldest rows by PK range, which needs an ascending PK (asc); choose steps that only insert (l.i0, l.x, maint, and l.i1 with --profile 2020)",
                    d.name
                );
            }
        }
        Ok(())
    }

    /// Rows one table receives over the steps: each step's rows per client times the clients
    /// writing to the table.
    pub fn planned_keys(steps: &[StepSpec], clients_per_table: usize) -> u64 {
        let per_client: u64 = steps
            .iter()
            .map(|s| match s.kind {
                StepKind::Load { rows, .. } => rows,
                StepKind::ReadWrite { rate, seconds, .. } => (rate as f64 * seconds).ceil() as u64,
                _ => 0,
            })
            .sum();
        per_client.saturating_mul(clients_per_table.max(1) as u64)
    }

    /// The generators of table number `table_no` for `keys` rows (`None` without patterns).
    pub fn for_table(
        &self,
        seed: u64,
        table_no: u64,
        keys: u64,
    ) -> Result<Option<Arc<KeyPatterns>>> {
        if self.is_default() {
            return Ok(None);
        }
        let idx = [
            self.index[0].as_ref(),
            self.index[1].as_ref(),
            self.index[2].as_ref(),
        ];
        let p = KeyPatterns::new(
            self.pk.as_ref(),
            idx,
            derive_seed(seed, &[0x9a77_e12e, table_no]),
            keys.max(1),
        )
        .map_err(|e| anyhow::anyhow!(e))?;
        Ok(Some(Arc::new(p)))
    }

    /// The geek code of the PK and of the first `present` secondary indexes when `rows` rows
    /// are inserted per table at `rows_per_second` per table: a pattern's code where one is
    /// given, else the insert benchmark's own ([`codes::index_codes`]).
    ///
    /// `oldest_deleted`: the table's oldest rows have been deleted. A pattern's first keys are
    /// fences that keep its middle streams off the index's ends
    /// ([`crate::pattern::gen`]); once they are deleted, the highest middle ascending stream
    /// grows at the right end when no middle descending stream lies above it (and the lowest
    /// middle descending one at the left end when no ascending one lies below), and the code
    /// says so.
    pub fn codes(
        &self,
        present: usize,
        rows: u64,
        rows_per_second: f64,
        oldest_deleted: bool,
    ) -> Vec<(String, GeekCode)> {
        let code = |s: &Spec| {
            let c = s.code();
            match c {
                GeekCode::Streams {
                    n_asc,
                    n_desc,
                    lhs,
                    rhs,
                } if oldest_deleted => GeekCode::Streams {
                    n_asc,
                    n_desc,
                    // middle descending streams lie above the ascending ones
                    // (crate::pattern::gen), so each side's fence guards only when the
                    // other direction has no middle streams
                    lhs: lhs || (s.mid_desc > 0 && s.mid_asc == 0),
                    rhs: rhs || (s.mid_asc > 0 && s.mid_desc == 0),
                },
                c => c,
            }
        };
        let mut out = codes::index_codes(present.min(INDEXES.len()), rows, rows_per_second);
        if let Some(pk) = &self.pk {
            out[0].1 = code(pk);
        }
        for (i, s) in self.index.iter().enumerate() {
            if let (Some(s), Some(slot)) = (s, out.get_mut(i + 1)) {
                slot.1 = code(s);
            }
        }
        out
    }

    /// [`RunPatterns::codes`] as one line.
    pub fn code_line(
        &self,
        present: usize,
        rows: u64,
        rows_per_second: f64,
        oldest_deleted: bool,
    ) -> String {
        line(&self.codes(present, rows, rows_per_second, oldest_deleted))
    }

    /// The patterns as given, for the run's configuration (`{"pk": "asc", "pdc": "streams:4"}`).
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        if let Some(p) = &self.pk {
            m.insert("pk".into(), p.to_string().into());
        }
        for (i, s) in self.index.iter().enumerate() {
            if let Some(s) = s {
                m.insert(INDEXES[i].suffix.into(), s.to_string().into());
            }
        }
        serde_json::Value::Object(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_errors() {
        let p = RunPatterns::parse(Some("asc"), &["pdc=streams:4".into()], 3).unwrap();
        assert_eq!(
            p.code_line(3, 1_000_000, 100.0, false),
            "pk=(nAsc:1, nRHS:1) marketsegment=(inf) registersegment=(inf) pdc=(nAsc:4)"
        );
        // the insert benchmark's own pdc at 100 rows/s
        let d = RunPatterns::parse(None, &[], 3).unwrap();
        assert!(d.is_default());
        assert!(d
            .code_line(3, 1_000_000, 100.0, false)
            .ends_with("pdc=(nAsc:500, nRHS:1)"));
        assert_eq!(d.code_line(0, 1000, 1e4, false), "pk=(nAsc:1, nRHS:1)");
        let all = RunPatterns::parse(Some("desc"), &["all=lr".into()], 2).unwrap();
        assert_eq!(
            all.code_line(2, 10, 1.0, false),
            "pk=(nDesc:1, nLHS:1) marketsegment=(nAsc:1, nDesc:1, nLHS:1, nRHS:1) registersegment=(nAsc:1, nDesc:1, nLHS:1, nRHS:1)"
        );
        for (pk, idx, sec, want) in [
            (None, "xyz=asc", 3, "unknown index \"xyz\""),
            (None, "pdc=asc", 2, "not created with --secondary-indexes 2"),
            (None, "pdc=up", 3, "unknown part"),
            (None, "asc", 3, "expected NAME=SPEC"),
            (Some("sideways"), "pdc=asc", 3, "--pk-pattern"),
            (None, "all=asc", 0, "no secondary index"),
        ] {
            let mut v = vec![idx.to_string()];
            if idx == "pdc=asc" && sec == 3 {
                v.push("pdc=inf".into());
            }
            let e = RunPatterns::parse(pk, &v, sec).unwrap_err().to_string();
            assert!(e.contains(want), "{idx}: {e}");
            assert!(!e.contains('\n'));
        }
        let s = RunPatterns::parse(None, &["pdc=streams:2asc+1desc".into()], 3).unwrap();
        for deleted in [false, true] {
            assert!(s
                .code_line(3, 10, 1.0, deleted)
                .ends_with("pdc=(nAsc:2, nDesc:1)"));
        }
        let s = RunPatterns::parse(None, &["pdc=streams:2".into(), "pk=x".into()], 3);
        assert!(s.is_err());
        let s = RunPatterns::parse(Some("desc"), &["pdc=streams:2".into()], 3).unwrap();
        assert!(s
            .code_line(3, 10, 1.0, true)
            .ends_with("pdc=(nAsc:2, nRHS:1)"));
        let s = RunPatterns::parse(None, &["pdc=streams:3desc".into()], 3).unwrap();
        assert!(s
            .code_line(3, 10, 1.0, true)
            .ends_with("pdc=(nDesc:3, nLHS:1)"));
        assert!(s.code_line(3, 10, 1.0, false).ends_with("pdc=(nDesc:3)"));
        let e = RunPatterns::parse(None, &["pdc=asc".into(), "all=inf".into()], 3)
            .unwrap_err()
            .to_string();
        assert!(e.contains("given twice"), "{e}");
    }

    #[test]
    fn more_streams_than_keys_is_an_error() {
        let p = RunPatterns::parse(None, &["pdc=streams:100".into()], 3).unwrap();
        let e = p.for_table(1, 1, 50).unwrap_err().to_string();
        assert!(e.contains("more than the 50 keys"), "{e}");
        assert!(e.starts_with("--index-pattern pdc=streams:100"), "{e}");
        assert!(p.for_table(1, 1, 100).unwrap().is_some());
        assert!(RunPatterns::default().for_table(1, 1, 1).unwrap().is_none());
    }
}
