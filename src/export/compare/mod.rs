//! The comparison of runs: did a version or a config change make it slower? For `ixbench
//! compare` (its options and loading are `cmd/compare.rs`), `ixbench ab` (which runs the sides
//! first) and `ixbench report` (several runs in one report).
//!
//! Each side is one or more runs (repeats). Steps are matched by name and index builds by
//! (knobs, build, mode); every figure is shown as the median of its side with the side's
//! run-to-run spread, and judged by the noise rule of [`rule`]: with repeats a change must lie
//! beyond the spread, without them beyond a large threshold. Every figure, every side and the
//! whole comparison get one state of [`crate::results::verdict`] (FAILED, REGRESSION, NO
//! VERDICT, IMPROVED, NO CHANGE), the worst that applies: failed, interrupted or missing steps,
//! failed checks and runs, on either side (the base's included), are FAILED; a load that missed
//! its rate leaves its step's figures NO VERDICT, as too few runs do. The DBMS versions and the
//! settings that differ (those that name ports, paths and the like hidden, those that differ
//! only by two versions' defaults counted) are listed first, since they usually explain the
//! rest.

pub mod model;
pub mod rule;
pub mod settings;

use std::path::PathBuf;

use anyhow::Result;

use crate::export::{csv, markdown, text, Table};
use crate::results::verdict::{self, PassOn, State};
use model::{Class, Figure, Run};
use rule::{judge, Mode, Rule, Stats};

/// Output format of the comparison table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns.
    Text,
    /// GitHub Markdown.
    Markdown,
    /// CSV (RFC 4180) on stdout; notes and warnings on stderr.
    Csv,
    /// The verdicts as JSON on stdout (what `ab.json` holds under `judgement`); notes on
    /// stderr.
    Json,
}

/// One side of the comparison: its runs.
#[derive(Debug, Clone)]
pub struct Side {
    /// `base`, `new`, `new1`...
    pub name: String,
    /// The runs (repeats).
    pub runs: Vec<Run>,
}

/// A failure of a run: a step that did not finish well, or is missing (FAILED); or a load that
/// missed its rate (NO VERDICT for the figures of its step).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Failure {
    /// The run's label.
    pub run: String,
    /// Step, build, or `run`.
    pub what: String,
    /// Short kind: `interrupted`, `failed`, `missing`, `check failed`, `rate NOT met`...
    pub kind: String,
    /// In words.
    pub detail: String,
    /// FAILED, or NO VERDICT for a missed rate.
    pub state: State,
}

/// The kind of a load that missed its rate: NO VERDICT, not FAILED.
pub const RATE_MISSED: &str = "rate NOT met";

/// The failures of one run, given the steps and builds the base side has.
pub fn failures(run: &Run, expected_steps: &[String], expected_builds: &[String]) -> Vec<Failure> {
    let mut out = Vec::new();
    let mut add = |what: &str, kind: &str, detail: String| {
        out.push(Failure {
            run: run.label.clone(),
            what: what.to_string(),
            kind: kind.to_string(),
            detail,
            state: if kind == RATE_MISSED {
                State::NoVerdict
            } else {
                State::Failed
            },
        })
    };
    if run.status != "ok" {
        let why = run
            .error
            .as_deref()
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        let what = if run.status == "running" {
            "did not finish (status running: killed?)".to_string()
        } else {
            format!("ended {}{why}", run.status)
        };
        add("run", &format!("run {}", run.status), what);
    }
    for name in expected_steps {
        if !run.steps.iter().any(|s| &s.name == name) {
            add(name, "missing", "step missing from the run".into());
        }
    }
    for s in &run.steps {
        if s.status != "ok" && s.status != "checks_failed" {
            let why = s
                .error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            add(&s.name, &s.status, format!("step {}{why}", s.status));
        }
        for c in &s.failed_checks {
            add(&s.name, "check failed", format!("check failed: {c}"));
        }
        if s.status == "checks_failed" && s.failed_checks.is_empty() {
            add(&s.name, "check failed", "a self-check failed".into());
        }
        if s.rate_ok == Some(false) {
            let how = match (s.achieved_rate, s.target_rate, &s.rate_unit) {
                (Some(a), Some(t), Some(unit)) => format!(": {a:.1} of {t:.1} {unit} offered"),
                (Some(a), Some(t), None) => {
                    format!(": writers did {a:.0} of {t:.0} rows/s per client")
                }
                _ => String::new(),
            };
            add(&s.name, "rate NOT met", format!("rate NOT met{how}"));
        }
        for st in &s.stalls {
            add(&s.name, "stalled", st.clone());
        }
    }
    for key in expected_builds {
        if !run.builds.iter().any(|b| &b.key == key) {
            add(key, "missing", "build missing from the run".into());
        }
    }
    for b in &run.builds {
        if let Some(p) = &b.problem {
            add(&b.key, "failed", p.clone());
        }
        if let Some(why) = &b.rate_missed {
            add(
                &b.key,
                "rate NOT met",
                format!("rate NOT met, no verdict on the DDL: {why}"),
            );
        }
    }
    out
}

/// Names in order of first appearance.
fn union<'a>(names: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
    out
}

/// One compared figure: what, metric, direction, class.
struct Row {
    what: String,
    metric: String,
    higher_is_better: bool,
    class: Class,
}

/// The values of `row` in a side's runs (ok steps and builds only; repeats of a build pooled)
/// and the coarsest resolution among them.
fn values(side: &Side, row: &Row, is_build: bool) -> (Vec<f64>, f64) {
    let mut out = Vec::new();
    let mut res: f64 = 0.0;
    let mut take = |figs: &[Figure]| {
        if let Some(f) = figs.iter().find(|f| f.metric == row.metric) {
            out.push(f.value);
            res = res.max(f.resolution);
        }
    };
    for r in &side.runs {
        if is_build {
            for b in r.builds.iter().filter(|b| b.key == row.what && b.ok) {
                take(&b.figures);
            }
        } else if let Some(s) = r.steps.iter().find(|s| s.name == row.what) {
            if s.status == "ok" {
                take(&s.figures);
            }
        }
    }
    (out, res)
}

/// A figure as the table shows it: 3 significant digits ([`crate::format::num`]; a
/// 0.4 ms maxop is `0.000400`, not `0.000`).
fn fmt(v: f64) -> String {
    crate::format::num(v)
}

/// `3 runs, 4.1%`: how many values (runs, or repeats of a build) and their spread.
fn spread_cell(s: Option<&Stats>, builds: bool) -> String {
    let (one, many) = if builds {
        ("repeat", "repeats")
    } else {
        ("run", "runs")
    };
    match s {
        None => "-".into(),
        Some(s) if s.n == 1 => format!("1 {one}"),
        Some(s) => match s.spread() {
            Some(sp) if sp.is_finite() => format!("{} {many}, {:.1}%", s.n, (sp - 1.0) * 100.0),
            _ => format!("{} {many}, unknown", s.n),
        },
    }
}

/// The rule cell of a figure without a verdict for want of runs.
const TOO_FEW_RUNS: &str = "too few runs";

/// The start of the rule cell of a figure one side did not measure at all, with no failure
/// to explain it (a figure an older ixbench or another DBMS version does not record): NO
/// VERDICT for the figure, which does not decide its side's verdict (else every comparison of
/// two versions, one with a view the other lacks, would be NO VERDICT).
const UNKNOWN: &str = "unknown";

/// The verdict on one figure of one new side.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FigureVerdict {
    /// The new side's name.
    pub side: String,
    /// Step or build.
    pub what: String,
    /// The figure.
    pub metric: String,
    /// `higher` or `lower` is better.
    pub better: &'static str,
    /// Median of the base side (`null`: unknown).
    pub base: Option<f64>,
    /// Median of the new side (`null`: unknown).
    pub new: Option<f64>,
    /// new / base (`null`: unknown, or a base of 0).
    pub ratio: Option<f64>,
    /// Its state.
    pub state: State,
    /// The rule that gave it, or why there is none.
    pub rule: String,
}

/// The verdict on one new side against the base: the worst state that applies
/// ([`State::overall`]) of its figures, its runs' failures and the base runs' failures.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SideVerdict {
    /// The new side's name.
    pub side: String,
    /// The base side's name.
    pub base: String,
    /// Its state.
    pub state: State,
    /// Figures worse beyond the noise.
    pub regressions: usize,
    /// Figures better beyond the noise.
    pub improvements: usize,
    /// Figures without a verdict.
    pub no_verdict: usize,
    /// Figures within the noise.
    pub no_change: usize,
    /// Failures of this side's runs (FAILED).
    pub failures: usize,
    /// Failures of the base side's runs (FAILED).
    pub base_failures: usize,
    /// Missed rates on either side (NO VERDICT for their steps).
    pub missed_rates: usize,
    /// Figures without a verdict because there were too few runs for the rule.
    pub too_few_runs: usize,
}

/// A failure with the side whose run it is.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SideFailure {
    /// The side's name (the base's too).
    pub side: String,
    /// The failure.
    #[serde(flatten)]
    pub failure: Failure,
}

/// What a comparison judged, as `compare --format json` prints it and `ab.json` holds it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Judgement {
    /// The worst state of every side.
    pub state: State,
    /// Its text form (`NO VERDICT`).
    pub state_text: &'static str,
    /// The command's exit status (after `--pass-on`).
    pub exit_status: u8,
    /// One per new side.
    pub sides: Vec<SideVerdict>,
    /// Every figure of every new side.
    pub figures: Vec<FigureVerdict>,
    /// Failures and missed rates of every side's runs, base included.
    pub failures: Vec<SideFailure>,
}

/// The result of a comparison.
pub struct Outcome {
    /// The table (figures, then failure rows).
    pub table: Table,
    /// Figures worse beyond the noise.
    pub worse: usize,
    /// Figures better beyond the noise.
    pub better: usize,
    /// Failures of the new sides' runs: (side, failure, also seen in a base run).
    pub failures: Vec<(String, Failure, bool)>,
    /// Failures of the base side's runs (their figures are left out).
    pub base_failures: Vec<Failure>,
    /// The verdicts (exit status without `--pass-on`).
    pub judgement: Judgement,
}

/// Compare each of `news` with `base`.
pub fn compare(base: &Side, news: &[Side], rule: &Rule) -> Outcome {
    compare_with(base, news, rule, &[])
}

/// Group failures by (what, kind): (what, kind, state, runs it happened in).
fn group(failures: &[Failure]) -> Vec<(String, String, State, Vec<String>)> {
    let mut groups: Vec<(String, String, State, Vec<String>)> = Vec::new();
    for f in failures {
        match groups
            .iter_mut()
            .find(|(w, k, _, _)| *w == f.what && *k == f.kind)
        {
            Some(g) if g.3.contains(&f.run) => {}
            Some(g) => g.3.push(f.run.clone()),
            None => groups.push((f.what.clone(), f.kind.clone(), f.state, vec![f.run.clone()])),
        }
    }
    groups
}

/// Compare each of `news` with `base`, with failures the runs' results cannot show (`extra`:
/// (side, failure), e.g. `ab`'s runs that exited non-zero or left no results).
pub fn compare_with(
    base: &Side,
    news: &[Side],
    rule: &Rule,
    extra: &[(String, Failure)],
) -> Outcome {
    let one = news.len() == 1;
    let mut headers: Vec<String> = ["what", "metric", "better", "base", "base spread"]
        .map(String::from)
        .to_vec();
    for s in news {
        let p = |c: &str| {
            if one && c != "spread" {
                c.to_string()
            } else {
                format!("{} {c}", s.name)
            }
        };
        headers.push(s.name.clone());
        headers.extend([p("spread"), p("ratio"), p("verdict"), p("rule")]);
    }
    let mut table = Table::new(headers);
    let all = || std::iter::once(base).chain(news.iter());

    // Failures first: what the base side has, every run (base included) must have and finish
    // well; a failure decides the figures of its step.
    let expected_steps = union(
        base.runs
            .iter()
            .flat_map(|r| r.steps.iter().map(|s| &s.name)),
    );
    let expected_builds = union(
        base.runs
            .iter()
            .flat_map(|r| r.builds.iter().map(|b| &b.key)),
    );
    let extra_of = |side: &str| -> Vec<Failure> {
        extra
            .iter()
            .filter(|(s, _)| s == side)
            .map(|(_, f)| f.clone())
            .collect()
    };
    let side_failures = |side: &Side| -> Vec<Failure> {
        let mut f: Vec<Failure> = side
            .runs
            .iter()
            .flat_map(|r| failures(r, &expected_steps, &expected_builds))
            .collect();
        f.extend(extra_of(&side.name));
        f
    };
    let base_failures = side_failures(base);
    let new_failures: Vec<Vec<Failure>> = news.iter().map(side_failures).collect();
    // The state a side's failures give the figures of `what`: FAILED when its step (or the
    // whole run) failed, NO VERDICT when its load missed its rate.
    let touches = |fs: &[Failure], what: &str, state: State| {
        fs.iter()
            .any(|f| f.state == state && (f.what == what || f.what == "run"))
    };

    // Rows: steps in order of first appearance (base first), each with its figures in order of
    // first appearance; then builds.
    let mut rows: Vec<(Row, bool)> = Vec::new();
    for is_build in [false, true] {
        let names = if is_build {
            union(all().flat_map(|s| s.runs.iter().flat_map(|r| r.builds.iter().map(|b| &b.key))))
        } else {
            union(all().flat_map(|s| s.runs.iter().flat_map(|r| r.steps.iter().map(|s| &s.name))))
        };
        for name in names {
            let mut metrics: Vec<&Figure> = Vec::new();
            for side in all() {
                for r in &side.runs {
                    let figs: Vec<&Figure> = if is_build {
                        r.builds
                            .iter()
                            .filter(|b| b.key == name)
                            .flat_map(|b| b.figures.iter())
                            .collect()
                    } else {
                        r.steps
                            .iter()
                            .filter(|s| s.name == name)
                            .flat_map(|s| s.figures.iter())
                            .collect()
                    };
                    for f in figs {
                        if !metrics.iter().any(|m| m.metric == f.metric) {
                            metrics.push(f);
                        }
                    }
                }
            }
            for f in metrics {
                rows.push((
                    Row {
                        what: name.clone(),
                        metric: f.metric.clone(),
                        higher_is_better: f.higher_is_better,
                        class: f.class,
                    },
                    is_build,
                ));
            }
        }
    }

    let mut figures: Vec<FigureVerdict> = Vec::new();
    for (row, is_build) in &rows {
        let (b, b_res) = values(base, row, *is_build);
        let mut res = b_res;
        let mut ns: Vec<Vec<f64>> = Vec::new();
        for s in news {
            let (v, r) = values(s, row, *is_build);
            ns.push(v);
            res = res.max(r);
        }
        // A figure that is 0 everywhere does not apply to this step (qps of a load step).
        if b.iter().chain(ns.iter().flatten()).all(|v| *v == 0.0) {
            continue;
        }
        let bs = Stats::of(&b);
        let mut cells = vec![
            row.what.clone(),
            row.metric.clone(),
            if row.higher_is_better {
                "higher"
            } else {
                "lower"
            }
            .to_string(),
            bs.map(|s| fmt(s.median)).unwrap_or_else(|| "-".into()),
            spread_cell(bs.as_ref(), *is_build),
        ];
        for ((side, n), nf) in news.iter().zip(&ns).zip(&new_failures) {
            let st = Stats::of(n);
            cells.push(st.map(|s| fmt(s.median)).unwrap_or_else(|| "-".into()));
            cells.push(spread_cell(st.as_ref(), *is_build));
            let ratio = match (bs, st) {
                (Some(b), Some(n)) if b.median != 0.0 => Some(n.median / b.median),
                _ => None,
            };
            // Which sides failed this step, or missed its rate.
            let on = |b: bool, n: bool| match (b, n) {
                (true, true) => format!("on {} and {}", base.name, side.name),
                (true, false) => format!("on {}", base.name),
                _ => format!("on {}", side.name),
            };
            let failed = (
                touches(&base_failures, &row.what, State::Failed),
                touches(nf, &row.what, State::Failed),
            );
            let missed = (
                touches(&base_failures, &row.what, State::NoVerdict),
                touches(nf, &row.what, State::NoVerdict),
            );
            let (state, rule_cell) = match (bs, st) {
                (Some(b), Some(n)) => {
                    let (v, mode) = judge(&b, &n, row.higher_is_better, row.class, rule, res);
                    if missed.0 || missed.1 {
                        (
                            State::NoVerdict,
                            format!("rate NOT met {}", on(missed.0, missed.1)),
                        )
                    } else {
                        (
                            v,
                            match mode {
                                Mode::Spread(l) => format!("spread, floor {:.0}%", l * 100.0),
                                Mode::Single(l) => format!("no spread, >{:.0}%", l * 100.0),
                                Mode::NoVerdict => TOO_FEW_RUNS.to_string(),
                            },
                        )
                    }
                }
                _ => {
                    let (b_gone, n_gone) = (bs.is_none(), st.is_none());
                    if (b_gone && failed.0) || (n_gone && failed.1) {
                        (
                            State::Failed,
                            format!("failed {}", on(b_gone && failed.0, n_gone && failed.1)),
                        )
                    } else {
                        (
                            State::NoVerdict,
                            format!("{UNKNOWN} {}", on(b_gone, n_gone)),
                        )
                    }
                }
            };
            cells.push(ratio.map_or_else(|| "-".into(), fmt));
            cells.push(state.text().into());
            cells.push(rule_cell.clone());
            figures.push(FigureVerdict {
                side: side.name.clone(),
                what: row.what.clone(),
                metric: row.metric.clone(),
                better: if row.higher_is_better {
                    "higher"
                } else {
                    "lower"
                },
                base: bs.map(|s| s.median),
                new: st.map(|s| s.median),
                ratio,
                state,
                rule: rule_cell,
            });
        }
        table.push(cells);
    }

    // Failure rows: the base side's (every new side's verdict), then each new side's.
    for (what, kind, state, runs) in group(&base_failures) {
        let mut cells = vec![
            what,
            kind,
            String::new(),
            format!("{} of {} runs", runs.len(), base.runs.len()),
            String::new(),
        ];
        for _ in news {
            cells.extend([
                String::new(),
                String::new(),
                String::new(),
                state.text().into(),
                format!("on {}", base.name),
            ]);
        }
        table.push(cells);
    }
    let mut all_failures = Vec::new();
    for (i, (side, fs)) in news.iter().zip(&new_failures).enumerate() {
        for f in fs {
            let in_base = base_failures
                .iter()
                .any(|b| b.what == f.what && b.kind == f.kind);
            all_failures.push((side.name.clone(), f.clone(), in_base));
        }
        for (what, kind, state, runs) in group(fs) {
            let in_base = base_failures
                .iter()
                .any(|b| b.what == what && b.kind == kind);
            let mut cells = vec![
                what,
                kind,
                String::new(),
                if in_base { "same in base" } else { "" }.to_string(),
                String::new(),
            ];
            for j in 0..news.len() {
                if j == i {
                    cells.extend([
                        format!("{} of {} runs", runs.len(), side.runs.len()),
                        String::new(),
                        String::new(),
                        state.text().into(),
                        format!("on {}", side.name),
                    ]);
                } else {
                    cells.extend(vec![String::new(); 5]);
                }
            }
            table.push(cells);
        }
    }

    // Each side's verdict: the worst of its figures, its failures and the base's failures.
    let sides: Vec<SideVerdict> = news
        .iter()
        .zip(&new_failures)
        .map(|(side, fs)| {
            let figs: Vec<&FigureVerdict> =
                figures.iter().filter(|f| f.side == side.name).collect();
            let count = |s: State| figs.iter().filter(|f| f.state == s).count();
            let failed = |fs: &[Failure]| fs.iter().filter(|f| f.state == State::Failed).count();
            let missed = base_failures
                .iter()
                .chain(fs)
                .filter(|f| f.state == State::NoVerdict)
                .count();
            let state = State::overall(
                figs.iter()
                    .filter(|f| !f.rule.starts_with(UNKNOWN))
                    .map(|f| f.state)
                    .chain(base_failures.iter().chain(fs).map(|f| f.state)),
            );
            SideVerdict {
                side: side.name.clone(),
                base: base.name.clone(),
                state,
                regressions: count(State::Regression),
                improvements: count(State::Improved),
                no_verdict: count(State::NoVerdict),
                no_change: count(State::NoChange),
                failures: failed(fs),
                base_failures: failed(&base_failures),
                missed_rates: missed,
                too_few_runs: figs
                    .iter()
                    .filter(|f| f.state == State::NoVerdict && f.rule == TOO_FEW_RUNS)
                    .count(),
            }
        })
        .collect();
    let state = State::overall(sides.iter().map(|s| s.state));
    let failures_list = base_failures
        .iter()
        .map(|f| SideFailure {
            side: base.name.clone(),
            failure: f.clone(),
        })
        .chain(all_failures.iter().map(|(s, f, _)| SideFailure {
            side: s.clone(),
            failure: f.clone(),
        }))
        .collect();
    let count = |s: State| figures.iter().filter(|f| f.state == s).count();
    Outcome {
        table,
        worse: count(State::Regression),
        better: count(State::Improved),
        failures: all_failures,
        base_failures,
        judgement: Judgement {
            state,
            state_text: state.text(),
            exit_status: verdict::exit_status(sides.iter().map(|s| s.state), &[]),
            sides,
            figures,
            failures: failures_list,
        },
    }
}

/// The verdict line of one side: `verdict NEW vs BASE: STATE: what made it`.
pub fn verdict_line(v: &SideVerdict) -> String {
    let mut why: Vec<String> = Vec::new();
    if v.base_failures > 0 {
        why.push(if v.base == "base" {
            format!("{} failure(s) in the base runs", v.base_failures)
        } else {
            format!(
                "{} failure(s) in the base runs ({})",
                v.base_failures, v.base
            )
        });
    }
    if v.failures > 0 {
        why.push(format!("{} failure(s) in the {} runs", v.failures, v.side));
    }
    if v.missed_rates > 0 {
        why.push(format!(
            "{} missed rate(s) (rate NOT met: no verdict on their steps)",
            v.missed_rates
        ));
    }
    if v.too_few_runs > 0 {
        why.push(format!(
            "{} figure(s) with too few runs for the rule (3 runs per side, or --single-verdict)",
            v.too_few_runs
        ));
    }
    why.push(format!(
        "{} figure(s) worse beyond the noise, {} better, {} without a verdict, {} unchanged",
        v.regressions, v.improvements, v.no_verdict, v.no_change
    ));
    format!(
        "verdict {} vs {}: {}: {}",
        v.side,
        v.base,
        v.state.text(),
        why.join("; ")
    )
}

/// One compact table of ratios to the base: a row per figure, a column per new side (the
/// ratio of the medians, new/base, with the state where it is not NO CHANGE), as the insert
/// benchmark's author publishes the figures of several versions.
pub fn ratio_table(j: &Judgement, sides: &[String]) -> Table {
    let mut headers = vec!["what".to_string(), "metric".to_string()];
    headers.extend(sides.iter().cloned());
    let mut t = Table::new(headers);
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for f in &j.figures {
        if !keys.contains(&(f.what.as_str(), f.metric.as_str())) {
            keys.push((f.what.as_str(), f.metric.as_str()));
        }
    }
    for (what, metric) in keys {
        let mut cells = vec![what.to_string(), metric.to_string()];
        for s in sides {
            let f = j
                .figures
                .iter()
                .find(|f| f.side == *s && f.what == what && f.metric == metric);
            cells.push(match f {
                None => "-".into(),
                Some(f) => {
                    let r = f.ratio.map_or_else(|| "-".into(), fmt);
                    if f.state == State::NoChange {
                        r
                    } else {
                        format!("{r} {}", f.state.text())
                    }
                }
            });
        }
        t.push(cells);
    }
    t
}

/// The rule in words, for the notes.
fn rule_text(rule: &Rule) -> Vec<String> {
    vec![
        format!(
            "rule: with repeats (2+ runs per side, 5+ in all) a figure is a REGRESSION (or \
             IMPROVED) only when every new run is worse (better) than every base run by a factor \
             wider than either side's spread and than a noise floor ({:.0}% for rates and CPU \
             per op, {:.0}% for p01, p99 and maxop), else NO CHANGE;",
            rule.floor * 100.0,
            rule.tail_floor * 100.0
        ),
        if rule.single_verdict {
            format!(
                "      with fewer runs no spread is known and only a change beyond {:.0}% ({:.0}% \
                 for p01, p99 and maxop) is flagged (--single-verdict).",
                rule.single * 100.0,
                rule.tail_single * 100.0
            )
        } else {
            "      with fewer runs no spread is known and the figures get NO VERDICT: one run \
             per side cannot tell a change from noise (--single-verdict asks for one anyway)."
                .to_string()
        },
        "      figures are medians over a side's runs, spread = max/min - 1; a failed run on \
         either side (base included) is FAILED, a load that missed its rate is NO VERDICT for \
         its step; failed steps are left out of the figures."
            .to_string(),
    ]
}

fn runs_text(n: usize) -> String {
    if n == 1 {
        "1 run".into()
    } else {
        format!("{n} runs")
    }
}

/// How [`run_sides`] judges and prints: `ixbench compare`'s options (`ixbench ab` sets them
/// from its own).
#[derive(Debug, Clone)]
pub struct Options {
    /// The noise rule ([`Rule::checked`] from the thresholds).
    pub rule: Rule,
    /// The table's format.
    pub format: Format,
    /// Also write the comparison as an HTML page here.
    pub html: Option<PathBuf>,
    /// List every setting that differs, also those that name ports, paths and the like, and
    /// those that differ only by the versions' defaults.
    pub all_settings: bool,
    /// States that exit 0 on purpose (`--pass-on`).
    pub pass_on: Vec<PassOn>,
}

/// What [`run_sides`] found and printed.
pub struct Report {
    /// The exit status: the worst state's ([`verdict`]), after `--pass-on`.
    pub code: u8,
    /// The notes printed before and after the table.
    pub notes: Vec<String>,
    /// How many of `notes` come before the table.
    pub table_at: usize,
    /// The comparison.
    pub outcome: Outcome,
}

/// Compare `news` with `base` (sides already loaded and named), print the notes and the table,
/// write `--html`; for `ixbench compare` and for commands that run the sides themselves
/// (`ixbench ab`, whose runs that exited non-zero or left no results are `extra` failures:
/// (side, failure)).
pub fn run_sides(
    args: &Options,
    base: &Side,
    news: &[Side],
    extra: &[(String, Failure)],
) -> Result<Report> {
    let rule = args.rule;
    // Notes go to stdout with the table, except in CSV and JSON, where stdout holds only those.
    let csv_out = matches!(args.format, Format::Csv | Format::Json);
    // The notes also go into the HTML page (`--html`).
    let notes = std::cell::RefCell::new(Vec::<String>::new());
    let note = |s: String| {
        notes.borrow_mut().push(s.clone());
        if csv_out {
            eprintln!("{s}");
        } else {
            crate::outln!("{s}");
        }
    };
    for side in std::iter::once(base).chain(news.iter()) {
        let r0 = &side.runs[0];
        let engine = r0
            .engine
            .as_deref()
            .map(|e| format!(" {e}"))
            .unwrap_or_default();
        let labels: Vec<&str> = side.runs.iter().map(|r| r.label.as_str()).collect();
        note(format!(
            "{}: {} ({} {}{engine}): {}",
            side.name,
            runs_text(side.runs.len()),
            r0.kind,
            r0.version,
            labels.join(", ")
        ));
        if side.name != base.name {
            let ch = settings::changes(&base.runs[0], r0);
            let hidden = ch.iter().filter(|c| c.environment).count();
            let shown: Vec<settings::Change> = ch
                .into_iter()
                .filter(|c| args.all_settings || !c.environment)
                .collect();
            let (shown, by_version) = if args.all_settings {
                (shown, 0)
            } else {
                let (s, n) = settings::split_version_defaults(&base.runs[0], r0, shown);
                (settings::group_absent(s), n)
            };
            for c in &shown {
                note(format!("   changed: {c}"));
            }
            if by_version > 0 {
                note(format!(
                    "   {}: {by_version} settings differ from {} by the versions' defaults \
                     (set by neither side; --all-settings lists them)",
                    side.name, base.name
                ));
            }
            if hidden > 0 && !args.all_settings {
                note(format!(
                    "   ({hidden} other difference(s) name ports, paths, sockets, hosts or \
                     generated values: hidden, --all-settings shows them)"
                ));
            }
        }
        for r in &side.runs[1..] {
            let ch: Vec<settings::Change> = settings::changes(r0, r)
                .into_iter()
                .filter(|c| args.all_settings || !c.environment)
                .collect();
            for c in settings::group_absent(ch) {
                note(format!(
                    "warning: the {} runs differ among themselves: {}: {c}",
                    side.name, r.label
                ));
            }
        }
    }
    let counts: Vec<usize> = news.iter().map(|s| s.runs.len()).collect();
    for (s, n) in news.iter().zip(&counts) {
        let how = if rule::has_spread(base.runs.len(), *n) {
            format!(
                "{} + {}: the spread rule applies (separate ranges happen by chance about 1 time \
                 in {:.0} without a change)",
                runs_text(base.runs.len()),
                runs_text(*n),
                rule::choose(base.runs.len() + n, base.runs.len())
            )
        } else {
            format!(
                "{} + {}: no spread is known (too few runs): {}; repeat the runs (e.g. 3 per \
                 side) for a verdict",
                runs_text(base.runs.len()),
                runs_text(*n),
                if rule.single_verdict {
                    "only large changes are flagged"
                } else {
                    "NO VERDICT, the ratios are shown as measured"
                }
            )
        };
        note(format!("{} vs {}: {how}", s.name, base.name));
    }
    for l in rule_text(&rule) {
        note(l);
    }

    let mut out = compare_with(base, news, &rule, extra);
    let code = verdict::exit_status(out.judgement.sides.iter().map(|s| s.state), &args.pass_on);
    out.judgement.exit_status = code;
    let table_at = notes.borrow().len();
    if !csv_out {
        crate::outln!();
    }
    match args.format {
        Format::Text => crate::out!("{}", text::table(&out.table)),
        Format::Markdown => crate::out!("{}", markdown::render(&out.table)),
        Format::Csv => crate::out!("{}", csv::render(&out.table)),
        Format::Json => crate::outln!("{}", serde_json::to_string_pretty(&out.judgement)?),
    }
    let listed = &out.judgement.failures;
    if !listed.is_empty() {
        note(String::new());
        note(format!(
            "failures and missed rates ({}; a failure on either side is FAILED, a missed rate \
             NO VERDICT for its step):",
            listed.len()
        ));
        for sf in listed {
            let f = &sf.failure;
            let also = if sf.side != base.name
                && out
                    .base_failures
                    .iter()
                    .any(|b| b.what == f.what && b.kind == f.kind)
            {
                " (also in a base run)"
            } else {
                ""
            };
            note(format!(
                "  {} {}: {}: {}{also} [{}]",
                sf.side,
                f.run,
                f.what,
                f.detail,
                f.state.text()
            ));
        }
    }
    note(String::new());
    let new_failed = out
        .failures
        .iter()
        .filter(|(_, f, _)| f.state == State::Failed)
        .count();
    // The count line as before the verdict model (scripts read it); the verdict lines follow.
    note(format!(
        "{} figure(s) worse beyond the noise, {} better; {} failure(s) in the new runs",
        out.worse, out.better, new_failed
    ));
    for v in &out.judgement.sides {
        note(verdict_line(v));
    }
    let passed = if code == 0 && out.judgement.state.exit_status() != 0 {
        " (let pass by --pass-on)"
    } else {
        ""
    };
    note(format!(
        "verdict: {}, exit status {code}{passed}",
        out.judgement.state.text()
    ));
    if let Some(path) = &args.html {
        let names: Vec<String> = news.iter().map(|s| s.name.clone()).collect();
        let page = crate::export::html::page(
            "ixbench comparison",
            &crate::export::html::comparison_section(&notes.borrow(), &out.table, &names),
        );
        std::fs::write(path, page)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        note(format!("report: {}", path.display()));
    }
    Ok(Report {
        code,
        notes: notes.into_inner(),
        table_at,
        outcome: out,
    })
}
