//! Every self-check and warning of a run, whatever command wrote it: the steps' (`run`,
//! `index`), the index builds' and load strategies' (`index`), the knob points' (`ddl`), the
//! workloads' own records (any part of [`super::parts`]: `oltp`, `timeseries`, ...). The text, the report and the tables
//! ([`crate::export::checks_table`]) all render this one list, so no command's checks can be
//! left out of any of them.

use super::parts::Parts;
use super::{Check, RunResult};

/// One check and where in the run it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct RunCheck {
    /// Where it ran: a step (`l.i0`, `l.i0 #2` for a repeated name), an index build
    /// (`pi1_pdc blocking #1`), a knob point (`point 1`), a measured run (`oltp_read_write`,
    /// `partitioning range`).
    pub at: String,
    /// The check.
    pub check: Check,
}

/// A warning (or an error that stopped a part of the run) and where it applies.
#[derive(Debug, Clone, PartialEq)]
pub struct RunNote {
    /// Where (as [`RunCheck::at`]).
    pub at: String,
    /// The warning, on one line.
    pub text: String,
}

/// Labels for a sequence of names: a name that repeats gets `#2`, `#3`... from its second
/// time on.
fn numbered<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut seen: Vec<&str> = Vec::new();
    names
        .into_iter()
        .map(|n| {
            let k = seen.iter().filter(|s| **s == n).count();
            seen.push(n);
            if k == 0 {
                n.to_string()
            } else {
                format!("{n} #{}", k + 1)
            }
        })
        .collect()
}

/// A knob point's label: `point 1`, with its knob settings when it has any.
fn point_label(i: usize, knobs: &[(String, String)]) -> String {
    if knobs.is_empty() {
        format!("point {}", i + 1)
    } else {
        let k: Vec<String> = knobs.iter().map(|(n, v)| format!("{n}={v}")).collect();
        format!("point {} ({})", i + 1, k.join(" "))
    }
}

impl RunResult {
    /// Every check of the run, in the order the run made them.
    pub fn all_checks(&self) -> Vec<RunCheck> {
        let mut out = Vec::new();
        let mut push = |at: &str, checks: &[Check]| {
            out.extend(checks.iter().map(|c| RunCheck {
                at: at.to_string(),
                check: c.clone(),
            }))
        };
        let steps = numbered(self.steps.iter().map(|s| s.name.as_str()));
        for (st, at) in self.steps.iter().zip(&steps) {
            push(at, &st.checks);
        }
        for b in &self.builds {
            push(&format!("{} {} #{}", b.build, b.mode, b.repeat), &b.checks);
        }
        for s in &self.strategies {
            push(&format!("strategy {}", s.strategy), &s.checks);
        }
        if let Some(d) = &self.ddl {
            for (i, p) in d.points.iter().enumerate() {
                push(&point_label(i, &p.knobs), &p.checks);
            }
        }
        let (records, labels) = self.workload_records();
        for ((_, r), at) in records.iter().zip(&labels) {
            push(at, &Parts::checks(r));
        }
        out
    }

    /// True when every check of the run passed (or none ran).
    pub fn checks_ok(&self) -> bool {
        self.all_checks().iter().all(|c| c.check.ok)
    }

    /// Every warning of the run and the errors that stopped a part of it, with where they
    /// apply, in the order the run met them.
    pub fn all_warnings(&self) -> Vec<RunNote> {
        let mut out = Vec::new();
        let mut push = |at: &str, text: String| {
            out.push(RunNote {
                at: at.to_string(),
                text,
            })
        };
        let steps = numbered(self.steps.iter().map(|s| s.name.as_str()));
        for (st, at) in self.steps.iter().zip(&steps) {
            if let Some(e) = &st.error {
                push(at, format!("error: {e}"));
            }
            if !st.rate_ok {
                push(at, "target rate NOT met".into());
            }
            for w in &st.warnings {
                push(at, w.clone());
            }
        }
        for b in &self.builds {
            if let Some(e) = &b.error {
                push(
                    &format!("{} {} #{}", b.build, b.mode, b.repeat),
                    format!("error: {e}"),
                );
            }
        }
        for s in &self.strategies {
            for w in &s.warnings {
                push(&format!("strategy {}", s.strategy), w.clone());
            }
        }
        for w in &self.warnings {
            push(
                &format!("{} build(s)", w.count),
                format!("{} ({})", w.warning, w.applies_to.join(", ")),
            );
        }
        if let Some(d) = &self.ddl {
            for w in &d.warnings {
                push("ddl probe", w.clone());
            }
            for (i, p) in d.points.iter().enumerate() {
                let at = point_label(i, &p.knobs);
                // No verdict on the DDL, or a DDL too short for its windows: first.
                for l in p.verdict_lines() {
                    push(&at, l);
                }
                if let Some(e) = &p.error {
                    push(&at, format!("error: {e}"));
                }
                for w in &p.warnings {
                    push(&at, w.clone());
                }
            }
        }
        let (records, labels) = self.workload_records();
        for ((_, r), at) in records.iter().zip(&labels) {
            if let Some(e) = r["error"].as_str() {
                push(at, format!("error: {e}"));
            }
            for w in Parts::warnings(r) {
                push(at, w);
            }
        }
        out
    }

    /// The workloads' own records ([`Parts`]), each with its label (a label that repeats
    /// numbered).
    fn workload_records(&self) -> (Vec<(&str, &serde_json::Value)>, Vec<String>) {
        let records: Vec<(&str, &serde_json::Value)> = self.workloads.records().collect();
        let names: Vec<String> = records.iter().map(|(p, r)| Parts::label(p, r)).collect();
        let labels = numbered(names.iter().map(String::as_str));
        (records, labels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ddl::{DdlPoint, DdlRunResult};
    use crate::results::oltp::OltpRun;
    use crate::results::{BuildResult, StepResult};

    fn check(name: &str, ok: bool) -> Check {
        Check {
            name: name.into(),
            ok,
            detail: format!("{name} detail"),
        }
    }

    fn empty_run() -> RunResult {
        RunResult {
            schema_version: crate::results::SCHEMA_VERSION,
            ixbench_version: "0".into(),
            command_line: Vec::new(),
            started_at: String::new(),
            finished_at: None,
            status: crate::results::Status::Ok,
            error: None,
            config: serde_json::Value::Null,
            target: Default::default(),
            host: Default::default(),
            steps: Vec::new(),
            builds: Vec::new(),
            strategies: Vec::new(),
            warnings: Vec::new(),
            ddl: None,
            workloads: Default::default(),
            server_figures: None,
            build: None,
            server: None,
            notes: Vec::new(),
        }
    }

    #[test]
    fn every_kind_of_result_gives_its_checks() {
        let mut run = empty_run();
        assert!(run.all_checks().is_empty());
        for _ in 0..2 {
            let mut st = StepResult::new("l.i0", "load");
            st.checks.push(check("rows", true));
            run.steps.push(st);
        }
        run.builds.push(BuildResult {
            build: "pi1_pdc".into(),
            mode: "blocking".into(),
            repeat: 1,
            checks: vec![check("plan", true)],
            ..Default::default()
        });
        run.ddl = Some(DdlRunResult {
            points: vec![DdlPoint {
                knobs: vec![("cache_size".into(), "-2000".into())],
                checks: vec![check("consistent", false)],
                warnings: vec!["node left".into()],
                ..Default::default()
            }],
            ..Default::default()
        });
        let oltp = OltpRun {
            workload: "oltp_read_write".into(),
            checks: vec![check("interval_sums", true)],
            ..Default::default()
        };
        run.workloads.push("oltp", &oltp).unwrap();
        run.workloads
            .push(
                "timeseries",
                &serde_json::json!({
                    "partitioning": "range",
                    "checks": [{"name": "rows_latest", "ok": true, "detail": "2000 rows"}]
                }),
            )
            .unwrap();
        let at: Vec<(String, String)> = run
            .all_checks()
            .into_iter()
            .map(|c| (c.at, c.check.name))
            .collect();
        let want = [
            ("l.i0", "rows"),
            ("l.i0 #2", "rows"),
            ("pi1_pdc blocking #1", "plan"),
            ("point 1 (cache_size=-2000)", "consistent"),
            ("oltp_read_write", "interval_sums"),
            ("partitioning range", "rows_latest"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()));
        assert_eq!(at, want);
        assert!(!run.checks_ok());
        let w = run.all_warnings();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].at, "point 1 (cache_size=-2000)");
    }
}
