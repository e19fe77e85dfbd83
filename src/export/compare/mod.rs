//! The comparison of runs: did a version or a config change make it slower? For `ixbench
//! compare` (its options and loading are `cmd/compare.rs`), `ixbench ab` (which runs the sides
//! first) and `ixbench report` (several runs in one report).
//!
//! Each side is one or more runs (repeats). Steps are matched by name and index builds by
//! (knobs, build, mode); every figure is shown as the median of its side with the side's
//! run-to-run spread, and judged by the noise rule of [`rule`]: with repeats a change must lie
//! beyond the spread, without them beyond a large threshold. Failed, interrupted or missing
//! steps, failed checks and writers that missed their rate are failures of the new side, listed
//! plainly. The DBMS versions and the settings that differ (those that name ports, paths and the
//! like hidden) are listed first, since they usually explain the rest.

pub mod model;
pub mod rule;
pub mod settings;

use std::path::PathBuf;

use anyhow::Result;

use crate::export::{csv, markdown, text, Table};
use model::{Class, Figure, Run};
use rule::{judge, Mode, Rule, Stats, Verdict};

/// Output format of the comparison table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns.
    Text,
    /// GitHub Markdown.
    Markdown,
    /// CSV (RFC 4180) on stdout; notes and warnings on stderr.
    Csv,
}

/// One side of the comparison: its runs.
#[derive(Debug, Clone)]
pub struct Side {
    /// `base`, `new`, `new1`...
    pub name: String,
    /// The runs (repeats).
    pub runs: Vec<Run>,
}

/// A failure of a run: a step that did not finish well, or is missing.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The run's label.
    pub run: String,
    /// Step, build, or `run`.
    pub what: String,
    /// Short kind: `interrupted`, `failed`, `missing`, `check failed`, `rate NOT met`...
    pub kind: String,
    /// In words.
    pub detail: String,
}

/// The failures of one run, given the steps and builds the base side has.
pub fn failures(run: &Run, expected_steps: &[String], expected_builds: &[String]) -> Vec<Failure> {
    let mut out = Vec::new();
    let mut add = |what: &str, kind: &str, detail: String| {
        out.push(Failure {
            run: run.label.clone(),
            what: what.to_string(),
            kind: kind.to_string(),
            detail,
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

/// 0 decimals from 100, 3 from 1, else 3 significant digits (a 0.4 ms maxop is not `0.000`).
fn fmt(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 || a == 0.0 {
        format!("{v:.3}")
    } else {
        let decimals = (2 - a.log10().floor() as i32).clamp(3, 12) as usize;
        format!("{v:.decimals$}")
    }
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
    /// Each figure judged worse or better beyond the noise.
    pub flagged: Vec<Flag>,
}

/// A figure of one new side judged worse or better than the base beyond the noise.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Flag {
    /// The new side's name.
    pub side: String,
    /// Step or build.
    pub what: String,
    /// The figure.
    pub metric: String,
    /// `worse` or `better`.
    pub verdict: String,
    /// Median of the base side.
    pub base: f64,
    /// Median of the new side.
    pub new: f64,
}

/// Compare each of `news` with `base`.
pub fn compare(base: &Side, news: &[Side], rule: &Rule) -> Outcome {
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

    let (mut worse, mut better) = (0, 0);
    let mut flagged = Vec::new();
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
        for (side, n) in news.iter().zip(&ns) {
            let st = Stats::of(n);
            cells.push(st.map(|s| fmt(s.median)).unwrap_or_else(|| "-".into()));
            cells.push(spread_cell(st.as_ref(), *is_build));
            match (bs, st) {
                (Some(b), Some(n)) => {
                    let (v, mode) = judge(&b, &n, row.higher_is_better, row.class, rule, res);
                    if v != Verdict::Same {
                        flagged.push(Flag {
                            side: side.name.clone(),
                            what: row.what.clone(),
                            metric: row.metric.clone(),
                            verdict: if v == Verdict::Worse {
                                "worse"
                            } else {
                                "better"
                            }
                            .into(),
                            base: b.median,
                            new: n.median,
                        });
                    }
                    cells.push(if b.median != 0.0 {
                        format!("{:.3}", n.median / b.median)
                    } else {
                        "-".into()
                    });
                    cells.push(
                        match v {
                            Verdict::Worse => {
                                worse += 1;
                                "WORSE"
                            }
                            Verdict::Better => {
                                better += 1;
                                "better"
                            }
                            Verdict::Same => "",
                        }
                        .into(),
                    );
                    cells.push(match mode {
                        Mode::Spread(l) => format!("spread, floor {:.0}%", l * 100.0),
                        Mode::Single(l) => format!("no spread, >{:.0}%", l * 100.0),
                        Mode::NoVerdict => "too few runs: no verdict".to_string(),
                    });
                }
                _ => cells.extend(["-".into(), "unknown".into(), String::new()]),
            }
        }
        table.push(cells);
    }

    // Failures: what the base side has, every new run must have and finish well.
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
    let base_failures: Vec<Failure> = base
        .runs
        .iter()
        .flat_map(|r| failures(r, &[], &[]))
        .collect();
    let mut all_failures = Vec::new();
    for (i, side) in news.iter().enumerate() {
        // (what, kind, runs it happened in, also in a base run)
        let mut groups: Vec<(String, String, Vec<String>, bool)> = Vec::new();
        for r in &side.runs {
            for f in failures(r, &expected_steps, &expected_builds) {
                let in_base = base_failures
                    .iter()
                    .any(|b| b.what == f.what && b.kind == f.kind);
                match groups
                    .iter_mut()
                    .find(|(w, k, _, _)| *w == f.what && *k == f.kind)
                {
                    Some(g) if g.2.contains(&r.label) => {}
                    Some(g) => g.2.push(r.label.clone()),
                    None => groups.push((
                        f.what.clone(),
                        f.kind.clone(),
                        vec![r.label.clone()],
                        in_base,
                    )),
                }
                all_failures.push((side.name.clone(), f, in_base));
            }
        }
        for (what, kind, runs, in_base) in groups {
            let count = runs.len();
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
                        format!("{count} of {} runs", side.runs.len()),
                        String::new(),
                        String::new(),
                        "FAILED".into(),
                        String::new(),
                    ]);
                } else {
                    cells.extend(vec![String::new(); 5]);
                }
            }
            table.push(cells);
        }
    }
    Outcome {
        table,
        worse,
        better,
        failures: all_failures,
        base_failures,
        flagged,
    }
}

/// The rule in words, for the notes.
fn rule_text(rule: &Rule) -> Vec<String> {
    vec![
        format!(
            "rule: with repeats (2+ runs per side, 5+ in all) a figure is WORSE (or better) only \
             when every new run is worse than every base run by a factor wider than either \
             side's spread and than a noise floor ({:.0}% for rates and CPU per op, {:.0}% for \
             p01, p99 and maxop);",
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
            "      with fewer runs no spread is known and no verdict is given: one run per side \
             cannot tell a change from noise (--single-verdict asks for one anyway)."
                .to_string()
        },
        "      figures are medians over a side's runs, spread = max/min - 1; failed steps are \
         left out of the figures and listed as failures."
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
    /// List every setting that differs, also those that name ports, paths and the like.
    pub all_settings: bool,
    /// Exit status 3 when a figure got worse beyond the noise or a new run has a failure.
    pub fail_on_regression: bool,
}

/// What [`run_sides`] found and printed.
pub struct Report {
    /// The exit status (3: a regression with `--fail-on-regression`).
    pub code: u8,
    /// The notes printed before and after the table.
    pub notes: Vec<String>,
    /// The comparison.
    pub outcome: Outcome,
}

/// Compare `news` with `base` (sides already loaded and named), print the notes and the table,
/// write `--html`; for `ixbench compare` and for commands that run the sides themselves
/// (`ixbench ab`).
pub fn run_sides(args: &Options, base: &Side, news: &[Side]) -> Result<Report> {
    let rule = args.rule;
    // Notes go to stdout with the table, except in CSV, where stdout holds only the CSV.
    let csv_out = args.format == Format::Csv;
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
            let shown = if args.all_settings {
                shown
            } else {
                settings::group_absent(shown)
            };
            for c in &shown {
                note(format!("   changed: {c}"));
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
                    "no verdict, the ratios are shown as measured"
                }
            )
        };
        note(format!("{} vs {}: {how}", s.name, base.name));
    }
    for l in rule_text(&rule) {
        note(l);
    }

    let out = compare(base, news, &rule);
    for f in &out.base_failures {
        note(format!(
            "warning: base run {}: {}: {} (left out of the figures)",
            f.run, f.what, f.detail
        ));
    }
    if !csv_out {
        crate::outln!();
    }
    match args.format {
        Format::Text => crate::out!("{}", text::table(&out.table)),
        Format::Markdown => crate::out!("{}", markdown::render(&out.table)),
        Format::Csv => crate::out!("{}", csv::render(&out.table)),
    }
    if !out.failures.is_empty() {
        note(String::new());
        note(format!(
            "failures in the new runs ({}, each a regression):",
            out.failures.len()
        ));
        for (side, f, in_base) in &out.failures {
            let also = if *in_base {
                " (also in a base run)"
            } else {
                ""
            };
            let who = if news.len() > 1 {
                format!("{side} ")
            } else {
                String::new()
            };
            note(format!("  {who}{}: {}: {}{also}", f.run, f.what, f.detail));
        }
    }
    note(String::new());
    note(format!(
        "{} figure(s) worse beyond the noise, {} better; {} failure(s) in the new runs",
        out.worse,
        out.better,
        out.failures.len()
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
    let code = if args.fail_on_regression && (out.worse > 0 || !out.failures.is_empty()) {
        3
    } else {
        0
    };
    Ok(Report {
        code,
        notes: notes.into_inner(),
        outcome: out,
    })
}
