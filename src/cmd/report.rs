//! `ixbench report`: write the HTML report of one or more results directories again, from
//! their `run.json`, `intervals.ndjson` and table CSVs; for several runs, the first is the base
//! and each other is compared with it (as `ixbench compare` would, with its default rule).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::export::compare::model::load_path;
use crate::export::compare::rule::Rule;
use crate::export::compare::{compare, Side};
use crate::export::{csv, html, Table};
use crate::results::store::{read_intervals, read_run, read_txn_lines};

/// Options of `ixbench report`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "Examples:\n  \
    ixbench report ixbench-results/2026-11-23T10-00-00      rewrite its report.html\n  \
    ixbench report BASE NEW -o cmp.html                   both runs, NEW compared with BASE")]
pub struct ReportArgs {
    /// Results directories (or their run.json files). With several, the first is the base the
    /// others are compared with.
    #[arg(required = true, value_name = "RUN_DIR")]
    pub runs: Vec<PathBuf>,
    /// Where to write the report. Default: RUN_DIR/report.html for one run; required for
    /// several.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The tables a command wrote beside `run.json`, in the order it writes them; then each
/// workload's own, named as its part of `run.json` ([`crate::results::parts`]).
const TABLES: [&str; 7] = [
    "steps",
    "index",
    "shards",
    "strategies",
    "warnings",
    "ddl",
    "ddl_windows",
];

/// One results directory, read back.
struct Loaded {
    dir: PathBuf,
    run: crate::results::RunResult,
    intervals: Vec<crate::measure::interval::IntervalLine>,
    /// A transaction workload's interval lines.
    txn: Vec<crate::measure::txn::TxnLine>,
    tables: Vec<(String, Table)>,
}

fn results_dir(p: &Path) -> PathBuf {
    if p.is_file() {
        p.parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    } else {
        p.to_path_buf()
    }
}

fn load(p: &Path) -> Result<Loaded> {
    let dir = results_dir(p);
    let json = dir.join("run.json");
    if !json.is_file() {
        bail!(
            "{} is not a results directory (no run.json in it)",
            dir.display()
        );
    }
    let run = read_run(&json)?;
    let intervals = read_intervals(&dir.join("intervals.ndjson"))?;
    let txn = read_txn_lines(&dir.join("intervals.ndjson"))?;
    let mut tables = Vec::new();
    for name in TABLES.into_iter().chain(run.workloads.names()) {
        let f = dir.join(format!("{name}.csv"));
        if let Ok(text) = std::fs::read_to_string(&f) {
            match csv::parse(&text) {
                Some(t) => tables.push((name.to_string(), t)),
                None => bail!("{} is not a CSV table", f.display()),
            }
        }
    }
    Ok(Loaded {
        dir,
        run,
        intervals,
        txn,
        tables,
    })
}

fn section(prefix: &str, l: &Loaded, label: bool) -> String {
    let tables: Vec<(&str, Table)> = l
        .tables
        .iter()
        .map(|(n, t)| (n.as_str(), t.clone()))
        .collect();
    let name = l.dir.display().to_string();
    html::run_section(
        prefix,
        label.then_some(name.as_str()),
        &l.run,
        &l.intervals,
        &l.txn,
        &tables,
    )
}

/// Run `ixbench report`; returns the exit status.
pub fn run(args: &ReportArgs) -> Result<u8> {
    let loaded: Vec<Loaded> = args.runs.iter().map(|p| load(p)).collect::<Result<_>>()?;
    // `-o` may name a run's own report (made again), never another file of an input.
    if let Some(o) = &args.output {
        let own_report = |l: &Loaded| {
            let r = l.dir.join("report.html");
            r.canonicalize()
                .ok()
                .is_some_and(|r| o.canonicalize().ok() == Some(r))
        };
        if !loaded.iter().any(own_report) {
            crate::results::store::refuse_overwriting_inputs("-o", o, &args.runs)?;
        }
    }
    let (out, page) = if loaded.len() == 1 {
        let l = &loaded[0];
        let out = args
            .output
            .clone()
            .unwrap_or_else(|| l.dir.join("report.html"));
        (out, html::page("ixbench report", &section("", l, false)))
    } else {
        let Some(out) = args.output.clone() else {
            bail!("a report of several runs needs -o FILE (where to write it)");
        };
        let base = Side {
            name: "base".into(),
            runs: load_path(&loaded[0].dir)?,
        };
        let mut news = Vec::new();
        for (i, l) in loaded[1..].iter().enumerate() {
            news.push(Side {
                name: if loaded.len() == 2 {
                    "new".into()
                } else {
                    format!("new{}", i + 1)
                },
                runs: load_path(&l.dir)?,
            });
        }
        // `ixbench compare`'s default rule.
        let rule = Rule::default();
        let outcome = compare(&base, &news, &rule);
        let mut notes = vec![format!("base: {}", loaded[0].dir.display())];
        for (s, l) in news.iter().zip(&loaded[1..]) {
            notes.push(format!("{}: {}", s.name, l.dir.display()));
        }
        notes.push(format!(
            "{} figure(s) worse beyond the noise, {} better; {} failure(s) in the new runs \
             (one run per side: only changes beyond 50%, or 2x for tail figures, are flagged)",
            outcome.worse,
            outcome.better,
            outcome.failures.len()
        ));
        // The verdict model's words, as `ixbench compare` prints them.
        for v in &outcome.judgement.sides {
            notes.push(crate::export::compare::verdict_line(v));
        }
        let names: Vec<String> = news.iter().map(|s| s.name.clone()).collect();
        let mut body = html::comparison_section(&notes, &outcome.table, &names);
        for (i, l) in loaded.iter().enumerate() {
            body.push_str(&section(&format!("r{}-", i + 1), l, true));
        }
        (out, html::page("ixbench report", &body))
    };
    std::fs::write(&out, page).with_context(|| format!("cannot write {}", out.display()))?;
    crate::outln!("report: {}", out.display());
    Ok(0)
}
