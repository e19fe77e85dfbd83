//! `ixbench ab`: the same command against two or more server builds or setting sets.
//!
//! Each side is a label and the options it adds to the command (`--side 'pg18: --server-bin
//! DIR'`, `--side 'small: --set maintenance_work_mem=1MB'`). The command runs as a child
//! `ixbench` process per repeat and side, interleaved (A B A B ...) so that a machine that gets
//! busier part way hurts every side alike, each in a results directory of its own
//! (`OUT/LABEL/rN`) and, for `--target postgres|mariadb`, on a fresh throwaway server. Then the
//! sides are compared with `ixbench compare`'s noise rule
//! ([`crate::export::compare::run_sides`]): the first side is the base, a figure is flagged
//! only beyond the run-to-run spread of both sides, the versions and settings that differ are
//! listed, and `OUT/ab.txt`, `OUT/report.html` and `OUT/ab.json` are written. Exit status 3
//! when a figure got worse beyond the noise or a run failed (for CI gates), 0 otherwise.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::export::compare::{self, model::load_path, rule::Rule, Side};
use crate::measure::clock::Stopwatch;

/// Checks a whole `ixbench` command line (the program name first) without running it: the
/// command table's parser, handed to [`run`] by `main.rs` (`cmd::check_command_line`), so `ab`
/// refuses a side whose command line would not parse before it starts anything, without
/// importing the table of the commands it runs.
pub type CommandLineCheck = fn(Vec<String>) -> std::result::Result<(), clap::Error>;

/// The commands `ab` can run: those that work on a database and write a results directory.
const COMMANDS: [&str; 5] = ["run", "index", "ddl", "oltp", "timeseries"];

/// Exit status when a regression was flagged (as `ixbench compare --fail-on-regression`).
pub const EXIT_REGRESSION: u8 = 3;

/// Options of `ixbench ab`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "Examples:\n  \
    ixbench ab --side pg15: --side 'pg18: --server-bin /opt/pg18/bin' -- index --target postgres --rows 200000\n  \
    ixbench ab --repeat 3 --side default: --side 'mwm1MB: --set maintenance_work_mem=1MB' -- index --target postgres")]
pub struct AbArgs {
    /// A side: `LABEL:OPTIONS`, the options it adds to the command (split like a shell does;
    /// may be empty). Two or more; the first is the base the others are compared with.
    #[arg(long = "side", value_name = "LABEL:OPTIONS", required = true)]
    pub sides: Vec<String>,
    /// Runs per side, interleaved A B A B ... (3 or more lets the noise rule use the spread).
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// Directory for the runs and the report (must not exist). Default:
    /// `./ixbench-results/ab-<timestamp>`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Noise floor for rates, times and CPU (see `ixbench compare --threshold`).
    #[arg(long, default_value_t = 0.05)]
    pub threshold: f64,
    /// Noise floor for tail figures (see `ixbench compare --tail-threshold`).
    #[arg(long, default_value_t = 0.25)]
    pub tail_threshold: f64,
    /// Threshold without a spread (see `ixbench compare --single-threshold`).
    #[arg(long, default_value_t = 0.5)]
    pub single_threshold: f64,
    /// A verdict even with fewer repeats than the spread rule needs (see `ixbench compare
    /// --single-verdict`).
    #[arg(long)]
    pub single_verdict: bool,
    /// List every setting that differs (see `ixbench compare --all-settings`).
    #[arg(long)]
    pub all_settings: bool,
    /// The command and its options, after `--` (run, index, ddl, oltp or timeseries; no
    /// `--out`: each run gets its own).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// One side: its label and the options it adds.
#[derive(Debug, Clone, Serialize)]
struct SideSpec {
    label: String,
    options: Vec<String>,
}

/// One child run.
#[derive(Debug, Clone, Serialize)]
struct RunRecord {
    side: String,
    repeat: u32,
    dir: PathBuf,
    log: PathBuf,
    exit: Option<i32>,
    seconds: f64,
    /// Whether it left a run.json to compare.
    results: bool,
}

/// What `OUT/ab.json` holds.
#[derive(Debug, Serialize)]
struct AbResult {
    command: Vec<String>,
    repeat: u32,
    sides: Vec<SideSpec>,
    runs: Vec<RunRecord>,
    /// Per new side: figures worse and better beyond the noise, failures.
    verdicts: Vec<SideVerdict>,
    flagged: Vec<compare::Flag>,
    interrupted: bool,
    exit: u8,
}

#[derive(Debug, Serialize)]
struct SideVerdict {
    side: String,
    worse: usize,
    better: usize,
    failures: usize,
}

/// Parse `LABEL:OPTIONS`.
fn parse_side(s: &str) -> Result<SideSpec> {
    let (label, rest) = s
        .split_once(':')
        .with_context(|| format!("--side {s:?}: expected LABEL:OPTIONS (e.g. 'pg18: --server-bin /opt/pg18/bin', or 'base:' for none)"))?;
    let label = label.trim();
    if label.is_empty()
        || !label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
        || label.starts_with('.')
    {
        bail!("--side {s:?}: the label must be letters, digits, _ . - (it names a directory)");
    }
    let options = shlex::split(rest)
        .with_context(|| format!("--side {s:?}: unbalanced quotes in the options"))?;
    Ok(SideSpec {
        label: label.to_string(),
        options,
    })
}

/// Whether `args` set the results directory themselves.
fn names_out(args: &[String]) -> bool {
    args.iter().any(|a| a == "--out" || a.starts_with("--out="))
}

/// The checked sides.
fn check(args: &AbArgs, parses: CommandLineCheck) -> Result<Vec<SideSpec>> {
    let sides: Vec<SideSpec> = args
        .sides
        .iter()
        .map(|s| parse_side(s))
        .collect::<Result<_>>()?;
    if sides.len() < 2 {
        bail!("ab needs two or more --side (the first is the base)");
    }
    for (i, s) in sides.iter().enumerate() {
        if sides[..i].iter().any(|o| o.label == s.label) {
            bail!("--side label {} is given twice", s.label);
        }
    }
    if !(1..=100).contains(&args.repeat) {
        bail!("--repeat must be between 1 and 100");
    }
    let cmd = &args.command;
    if !COMMANDS.contains(&cmd[0].as_str()) {
        bail!(
            "ab runs one of {} after --, not {:?}",
            COMMANDS.join(", "),
            cmd[0]
        );
    }
    if names_out(cmd) || sides.iter().any(|s| names_out(&s.options)) {
        bail!("--out is set by ab for each run (OUT/LABEL/rN): give it to ab, not the command");
    }
    // Each side's command line is parsed now, so a typo fails before anything runs.
    for s in &sides {
        let argv = std::iter::once("ixbench".to_string())
            .chain(cmd.iter().cloned())
            .chain(s.options.iter().cloned())
            .collect();
        if let Err(e) = parses(argv) {
            let first = e
                .to_string()
                .lines()
                .next()
                .unwrap_or("invalid command line")
                .trim_start_matches("error: ")
                .to_string();
            bail!("side {}: {}", s.label, crate::dbms::redact_text(&first));
        }
    }
    rule(args)?;
    Ok(sides)
}

/// The last non-empty line of a log, for a message.
fn last_line(log: &Path) -> String {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string()
}

/// The noise rule of ab's thresholds (`ixbench compare`'s).
fn rule(args: &AbArgs) -> Result<Rule> {
    Rule::checked(
        args.threshold,
        args.tail_threshold,
        args.single_threshold,
        args.single_verdict,
    )
}

/// Run `ixbench ab`; returns the exit status. `parses` checks each side's command line
/// ([`CommandLineCheck`]).
pub fn run(args: &AbArgs, interrupt: &AtomicBool, parses: CommandLineCheck) -> Result<u8> {
    let sides = check(args, parses)?;
    let out = match &args.out {
        Some(o) => o.clone(),
        None => PathBuf::from("ixbench-results").join(format!(
            "ab-{}",
            crate::measure::clock::local_now().format("%Y%m%d-%H%M%S")
        )),
    };
    if out.exists() {
        bail!(
            "results directory {} already exists: give a new one with --out",
            out.display()
        );
    }
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let out = out.canonicalize()?;
    let exe = std::env::current_exe().context("finding the ixbench program")?;
    let total = sides.len() as u32 * args.repeat;
    crate::outln!(
        "ab: {} sides x {} repeats = {total} runs of `ixbench {}`, interleaved; base: {}",
        sides.len(),
        args.repeat,
        args.command.join(" "),
        sides[0].label
    );
    for s in &sides {
        crate::outln!(
            "   {}: {}",
            s.label,
            if s.options.is_empty() {
                "(no options added)".to_string()
            } else {
                crate::dbms::redact_text(&s.options.join(" "))
            }
        );
    }
    let mut runs: Vec<RunRecord> = Vec::new();
    let mut interrupted = false;
    let mut k = 0;
    'outer: for r in 1..=args.repeat {
        for s in &sides {
            k += 1;
            let side_dir = out.join(&s.label);
            std::fs::create_dir_all(&side_dir)
                .with_context(|| format!("creating {}", side_dir.display()))?;
            let dir = side_dir.join(format!("r{r}"));
            let log = side_dir.join(format!("r{r}.log"));
            let logf = std::fs::File::create(&log)
                .with_context(|| format!("creating {}", log.display()))?;
            let t0 = Stopwatch::start();
            let argv: Vec<String> = args
                .command
                .iter()
                .chain(&s.options)
                .cloned()
                .chain(["--out".to_string(), dir.display().to_string()])
                .collect();
            let status = crate::step::child::run_program(
                &exe,
                &argv,
                logf.try_clone()?.into(),
                logf.into(),
                interrupt,
            )?;
            let secs = t0.elapsed_secs();
            let results = dir.join("run.json").is_file();
            let code = status.code();
            crate::outln!(
                "[{k}/{total}] {} repeat {r}: {secs:.1} s, {}{}",
                s.label,
                match code {
                    Some(0) => "ok".to_string(),
                    Some(c) => format!("exit {c}"),
                    None => "killed by a signal".to_string(),
                },
                if code == Some(0) {
                    String::new()
                } else {
                    format!(" ({})", last_line(&log))
                }
            );
            runs.push(RunRecord {
                side: s.label.clone(),
                repeat: r,
                dir: dir.clone(),
                log,
                exit: code,
                seconds: secs,
                results,
            });
            if interrupt.load(Ordering::SeqCst) || code == Some(130) || code.is_none() {
                interrupted = true;
                break 'outer;
            }
            // A side whose first run left nothing to compare is set up wrongly: stop now
            // rather than repeat the failure.
            if r == 1 && !results {
                bail!(
                    "side {}: the command failed before it measured anything: {} (log: {})",
                    s.label,
                    last_line(&runs.last().expect("pushed").log),
                    runs.last().expect("pushed").log.display()
                );
            }
        }
    }

    // Load each side's finished runs and compare.
    if interrupted
        && sides
            .iter()
            .any(|s| load_path(&out.join(&s.label)).is_err())
    {
        crate::outln!(
            "ab: interrupted after {} of {total} runs, before every side had one to compare; the runs are in {}",
            runs.len(),
            out.display()
        );
        return Ok(crate::stop::exit_code().max(130));
    }
    let mut loaded = Vec::new();
    for s in &sides {
        let dir = out.join(&s.label);
        match load_path(&dir) {
            Ok(runs) => loaded.push(Side {
                name: s.label.clone(),
                runs,
            }),
            Err(e) => bail!(
                "side {} has no finished run to compare ({e:#}); runs in {}",
                s.label,
                out.display()
            ),
        }
    }
    let html = out.join("report.html");
    let cargs = compare::Options {
        rule: rule(args)?,
        fail_on_regression: true,
        format: compare::Format::Text,
        html: Some(html),
        all_settings: args.all_settings,
    };
    crate::outln!();
    let report = compare::run_sides(&cargs, &loaded[0], &loaded[1..])?;
    // Runs that left no results directory are failures compare cannot see.
    let lost: Vec<&RunRecord> = runs.iter().filter(|r| !r.results).collect();
    for r in &lost {
        crate::outln!(
            "failure: {} repeat {} left no results: {}",
            r.side,
            r.repeat,
            last_line(&r.log)
        );
    }
    let verdicts: Vec<SideVerdict> = loaded[1..]
        .iter()
        .map(|s| SideVerdict {
            side: s.name.clone(),
            worse: report
                .outcome
                .flagged
                .iter()
                .filter(|f| f.side == s.name && f.verdict == "worse")
                .count(),
            better: report
                .outcome
                .flagged
                .iter()
                .filter(|f| f.side == s.name && f.verdict == "better")
                .count(),
            failures: report
                .outcome
                .failures
                .iter()
                .filter(|(side, _, _)| *side == s.name)
                .count()
                + lost.iter().filter(|r| r.side == s.name).count(),
        })
        .collect();
    for v in &verdicts {
        crate::outln!(
            "verdict {} vs {}: {}",
            v.side,
            sides[0].label,
            if v.worse == 0 && v.failures == 0 {
                format!("no regression beyond the noise ({} better)", v.better)
            } else {
                format!(
                    "REGRESSION: {} figure(s) worse beyond the noise, {} failure(s)",
                    v.worse, v.failures
                )
            }
        );
    }
    let regression = report.code != 0 || !lost.is_empty();
    let code = if interrupted {
        crate::stop::exit_code().max(130)
    } else if regression {
        EXIT_REGRESSION
    } else {
        0
    };
    // The text report: the notes and the table as printed.
    let mut text = report.notes.join("\n");
    text.push_str("\n\n");
    text.push_str(&crate::export::text::table(&report.outcome.table));
    for v in &verdicts {
        text.push_str(&format!(
            "verdict {} vs {}: worse {}, better {}, failures {}\n",
            v.side, sides[0].label, v.worse, v.better, v.failures
        ));
    }
    std::fs::write(out.join("ab.txt"), text).context("writing ab.txt")?;
    let result = AbResult {
        command: args
            .command
            .iter()
            .map(|a| crate::dbms::redact_text(a))
            .collect(),
        repeat: args.repeat,
        sides: sides.clone(),
        runs,
        verdicts,
        flagged: report.outcome.flagged.clone(),
        interrupted,
        exit: code,
    };
    std::fs::write(
        out.join("ab.json"),
        serde_json::to_string_pretty(&result)? + "\n",
    )
    .context("writing ab.json")?;
    crate::outln!(
        "results: {} (ab.txt, ab.json, report.html; each run in LABEL/rN)",
        out.display()
    );
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_parse() {
        let s = parse_side("pg18: --server-bin '/opt/my pg/bin' --set a=b").unwrap();
        assert_eq!(s.label, "pg18");
        assert_eq!(
            s.options,
            ["--server-bin", "/opt/my pg/bin", "--set", "a=b"]
        );
        assert!(parse_side("base:").unwrap().options.is_empty());
        for bad in ["nolabel", ":x", "a b: x", "../x: y", "a: 'open"] {
            assert!(parse_side(bad).is_err(), "{bad}");
        }
    }
}
