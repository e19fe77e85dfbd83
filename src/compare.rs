//! `ixbench compare BASE NEW...`: did a version or a config change make it slower?
//!
//! Steps are matched by name and index builds by (knobs, build, mode); every figure is shown
//! relative to the base, as the insert benchmark's reports do, and a ratio beyond the threshold
//! in the bad direction is flagged. The DBMS versions and the settings that differ are listed
//! first, since they usually explain the rest.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::export::{csv, markdown, text, Table};
use crate::results::store::read_run;
use crate::results::{build_groups, median, RunResult, StepResult};

/// Output format of the comparison table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns.
    Text,
    /// GitHub Markdown.
    Markdown,
    /// CSV.
    Csv,
}

/// Options of `ixbench compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// The base run: a results directory or its run.json.
    pub base: PathBuf,
    /// Runs to compare with the base.
    #[arg(required = true)]
    pub new: Vec<PathBuf>,
    /// Relative change that counts as a regression or an improvement.
    #[arg(long, default_value_t = 0.05)]
    pub threshold: f64,
    /// Exit with status 3 when any figure regressed beyond the threshold (for CI gates).
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Table format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// A figure and whether more of it is better.
struct Metric {
    name: &'static str,
    higher_is_better: bool,
    step: fn(&StepResult) -> Option<f64>,
}

const STEP_METRICS: [Metric; 6] = [
    Metric {
        name: "ips",
        higher_is_better: true,
        step: |s| nonzero(s.summary.ips),
    },
    Metric {
        name: "qps",
        higher_is_better: true,
        step: |s| nonzero(s.summary.qps),
    },
    Metric {
        name: "dps",
        higher_is_better: true,
        step: |s| nonzero(s.summary.dps),
    },
    Metric {
        name: "p01",
        higher_is_better: true,
        step: |s| nonzero(s.summary.p01),
    },
    Metric {
        name: "cpupq",
        higher_is_better: false,
        step: |s| nonzero(s.summary.cpupq),
    },
    Metric {
        name: "maxop",
        higher_is_better: false,
        step: |s| nonzero(s.summary.maxop),
    },
];

fn nonzero(v: f64) -> Option<f64> {
    (v > 0.0).then_some(v)
}

fn load(p: &Path) -> Result<RunResult> {
    let f = if p.is_dir() {
        p.join("run.json")
    } else {
        p.to_path_buf()
    };
    read_run(&f)
}

/// Ratio new/base and its verdict: `worse`, `better` or empty.
fn verdict(base: f64, new: f64, higher_is_better: bool, threshold: f64) -> (f64, &'static str) {
    let r = new / base;
    let good = if higher_is_better {
        r > 1.0 + threshold
    } else {
        r < 1.0 - threshold
    };
    let bad = if higher_is_better {
        r < 1.0 - threshold
    } else {
        r > 1.0 + threshold
    };
    (
        r,
        if bad {
            "WORSE"
        } else if good {
            "better"
        } else {
            ""
        },
    )
}

/// Build the comparison of `base` with each of `news`; returns the table and the number of
/// regressions.
pub fn compare(base: &RunResult, news: &[(String, RunResult)], threshold: f64) -> (Table, usize) {
    let mut headers = vec!["what".to_string(), "metric".to_string(), "base".to_string()];
    for (name, _) in news {
        headers.push(name.clone());
        headers.push("ratio".into());
        headers.push(String::new());
    }
    let mut t = Table::new(headers);
    let mut regressions = 0;
    let mut push =
        |what: String, metric: &str, b: f64, vals: Vec<Option<f64>>, hib: bool, t: &mut Table| {
            let mut row = vec![what, metric.to_string(), fmt(b)];
            for v in vals {
                match v {
                    Some(v) => {
                        let (r, verdict) = verdict(b, v, hib, threshold);
                        if verdict == "WORSE" {
                            regressions += 1;
                        }
                        row.extend([fmt(v), format!("{r:.3}"), verdict.to_string()]);
                    }
                    None => row.extend(["-".into(), "-".into(), String::new()]),
                }
            }
            t.push(row);
        };
    for bs in &base.steps {
        for m in &STEP_METRICS {
            let Some(b) = (m.step)(bs) else { continue };
            let vals = news
                .iter()
                .map(|(_, r)| {
                    r.steps
                        .iter()
                        .find(|s| s.name == bs.name)
                        .and_then(|s| (m.step)(s))
                })
                .collect();
            push(bs.name.clone(), m.name, b, vals, m.higher_is_better, &mut t);
        }
    }
    for ((knobs, build, mode), _) in build_groups(&base.builds) {
        let pick = |r: &RunResult| -> Option<f64> {
            median(
                r.builds
                    .iter()
                    .filter(|b| {
                        b.error.is_none() && b.key() == (knobs.clone(), build.clone(), mode.clone())
                    })
                    .map(|b| b.seconds)
                    .collect(),
            )
        };
        let Some(b) = pick(base) else { continue };
        let label = if knobs.is_empty() {
            format!("{build} {mode}")
        } else {
            let k: Vec<String> = knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{build} {mode} [{}]", k.join(" "))
        };
        let vals = news.iter().map(|(_, r)| pick(r)).collect();
        push(label, "build_secs", b, vals, false, &mut t);
    }
    (t, regressions)
}

fn fmt(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// Versions and settings that differ between the base and a run.
pub fn setting_changes(base: &RunResult, new: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    if base.target.kind != new.target.kind || base.target.version != new.target.version {
        out.push(format!(
            "target: {} {} -> {} {}",
            base.target.kind, base.target.version, new.target.kind, new.target.version
        ));
    }
    if base.target.engine != new.target.engine {
        out.push(format!(
            "engine: {:?} -> {:?}",
            base.target.engine, new.target.engine
        ));
    }
    for (k, v) in &new.target.settings {
        match base.target.settings.iter().find(|(n, _)| n == k) {
            Some((_, old)) if old != v => out.push(format!("{k}: {old} -> {v}")),
            None => out.push(format!("{k}: (absent) -> {v}")),
            _ => {}
        }
    }
    if base.ixbench_version != new.ixbench_version {
        out.push(format!(
            "ixbench: {} -> {}",
            base.ixbench_version, new.ixbench_version
        ));
    }
    if base.config != new.config {
        out.push("the run configurations differ (see config in run.json)".into());
    }
    out
}

/// Run `ixbench compare`; returns the exit status.
pub fn run(args: &CompareArgs) -> Result<u8> {
    if !(args.threshold > 0.0 && args.threshold < 1.0) {
        bail!("--threshold must be between 0 and 1 (e.g. 0.05 for 5%)");
    }
    let base = load(&args.base)?;
    let mut news = Vec::new();
    for (i, p) in args.new.iter().enumerate() {
        let name = if args.new.len() == 1 {
            "new".to_string()
        } else {
            format!("new{}", i + 1)
        };
        news.push((name, load(p)?));
    }
    crate::outln!(
        "base: {} ({} {})",
        args.base.display(),
        base.target.kind,
        base.target.version
    );
    for ((name, r), p) in news.iter().zip(&args.new) {
        crate::outln!(
            "{name}: {} ({} {})",
            p.display(),
            r.target.kind,
            r.target.version
        );
        for c in setting_changes(&base, r) {
            crate::outln!("   changed: {c}");
        }
    }
    let (t, regressions) = compare(&base, &news, args.threshold);
    crate::outln!();
    match args.format {
        Format::Text => crate::out!("{}", text::table(&t)),
        Format::Markdown => crate::out!("{}", markdown::render(&t)),
        Format::Csv => crate::out!("{}", csv::render(&t)),
    }
    crate::outln!(
        "\n{regressions} figure(s) worse by more than {:.0}%",
        args.threshold * 100.0
    );
    Ok(if args.fail_on_regression && regressions > 0 {
        3
    } else {
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_direction() {
        assert_eq!(verdict(100.0, 90.0, true, 0.05), (0.9, "WORSE"));
        assert_eq!(verdict(100.0, 90.0, false, 0.05), (0.9, "better"));
        assert_eq!(verdict(100.0, 104.0, true, 0.05).1, "");
        assert_eq!(verdict(2.0, 3.0, false, 0.05).1, "WORSE");
    }
}
