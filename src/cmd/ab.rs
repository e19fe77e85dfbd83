//! `ixbench ab`: the same command against two or more server builds or setting sets.
//!
//! Each side is a label and the options it adds to the command (`--side 'pg18: --server-bin
//! DIR'`, `--side 'small: --set maintenance_work_mem=1MB'`). The command runs as a child
//! `ixbench` process per repeat and side, interleaved in an order that rotates each repeat (A B,
//! B A, ...: no side always runs after the same one) so that a machine that gets
//! busier part way hurts every side alike, each in a results directory of its own
//! (`OUT/LABEL/rN`) and, for `--target postgres|mariadb`, on a fresh throwaway server. Then the
//! sides are compared with `ixbench compare`'s noise rule
//! ([`crate::export::compare::run_sides`]): the first side is the base, a figure is flagged
//! only beyond the run-to-run spread of both sides, the versions and settings that differ are
//! listed, and `OUT/ab.txt`, `OUT/report.html` and `OUT/ab.json` are written. With three or
//! more sides one compact table follows: each figure's ratio to the base per side. The exit
//! status is the verdict's ([`crate::results::verdict`]): 0 NO CHANGE or IMPROVED, 3
//! REGRESSION, 4 FAILED (a run failed on any side, the base included: a non-zero exit, a run
//! that left no results, a failed step or self-check), 5 NO VERDICT (too few runs, a missed
//! rate); `--pass-on` lets a state exit 0 on purpose.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::export::compare::{self, model::load_path, rule::Rule, Failure, Side};
use crate::measure::clock::Stopwatch;
use crate::results::verdict::{PassArgs, State};

/// Checks a whole `ixbench` command line (the program name first) without running it: the
/// command table's parser, handed to [`run`] by `main.rs` (`cmd::check_command_line`), so `ab`
/// refuses a side whose command line would not parse before it starts anything, without
/// importing the table of the commands it runs.
pub type CommandLineCheck = fn(Vec<String>) -> std::result::Result<(), clap::Error>;

/// The commands `ab` can run: those that work on a database and write a results directory.
const COMMANDS: [&str; 5] = ["run", "index", "ddl", "oltp", "timeseries"];

/// Exit status when a regression was flagged (as `ixbench compare`).
pub const EXIT_REGRESSION: u8 = crate::results::verdict::EXIT_REGRESSION;

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
    /// Runs per side, interleaved, the order rotating each repeat (A B, B A, A B ...; 3 or more
    /// lets the noise rule use the spread).
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
    /// List every setting that differs (see `ixbench compare --all-settings`), also those that
    /// differ only by the versions' defaults (otherwise a count per side).
    #[arg(long)]
    pub all_settings: bool,
    #[command(flatten)]
    pub pass: PassArgs,
    /// The command and its options, after `--` (run, index, ddl, oltp or timeseries; no
    /// `--out`: each run gets its own).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// The hint for clap's "unexpected argument" error when `args` (the whole command line, the
/// program first) gives `ab` its child command without `--` (`ixbench ab --side a: --side b:
/// run --size smoke`): the same line in the form ab takes, `--` before the command.
/// `None` when `unexpected` is not one of the commands ab runs or the line is not an `ab` one.
pub fn child_without_dashes_hint(args: &[String], unexpected: &str) -> Option<String> {
    if !COMMANDS.contains(&unexpected) {
        return None;
    }
    let ab = args.iter().skip(1).position(|a| a == "ab")? + 1;
    if args[ab..].iter().any(|a| a == "--") {
        return None;
    }
    let at = args[ab..].iter().position(|a| a == unexpected)? + ab;
    // ab's own options written after the command (`--side`, and `--out`, which ab sets for
    // each run) go before the `--`.
    let mut own: Vec<&str> = args[1..at].iter().map(String::as_str).collect();
    let mut child: Vec<&str> = Vec::new();
    let mut rest = args[at..].iter().map(String::as_str);
    while let Some(a) = rest.next() {
        if a == "--side" || a == "--out" {
            own.push(a);
            own.extend(rest.next());
        } else if a.starts_with("--side=") || a.starts_with("--out=") {
            own.push(a);
        } else {
            child.push(a);
        }
    }
    let words: Vec<&str> = std::iter::once("ixbench")
        .chain(own)
        .chain(std::iter::once("--"))
        .chain(child)
        .collect();
    let line = shlex::try_join(words).ok()?;
    Some(format!(
        "ab runs the command given after '--', last: {line}"
    ))
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
    /// The signal that killed it, if one did.
    signal: Option<i32>,
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
    /// The worst state of every side (`failed`, `regression`, `no_verdict`, `improved`,
    /// `no_change`).
    state: State,
    /// Per side, per figure, and the failures of every side's runs.
    judgement: compare::Judgement,
    interrupted: bool,
    exit: u8,
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
        Some(o) => {
            if o.exists() {
                bail!(
                    "results directory {} already exists: give a new one with --out",
                    o.display()
                );
            }
            std::fs::create_dir_all(o).with_context(|| format!("creating {}", o.display()))?;
            o.clone()
        }
        // ab-TIMESTAMP, or ab-TIMESTAMP-2, ... when another ab of the same second has it.
        None => crate::results::store::Store::new_default_dir(
            &PathBuf::from("ixbench-results"),
            &format!(
                "ab-{}",
                crate::measure::clock::local_now().format("%Y%m%d-%H%M%S")
            ),
        )?,
    };
    let out = out.canonicalize()?;
    let total = sides.len() as u32 * args.repeat;
    crate::outln!(
        "ab: {} sides x {} repeats = {total} runs of `ixbench {}`, interleaved (the order \
         rotates each repeat); base: {}",
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
    let (runs, interrupted) = run_all(args, &sides, &out, interrupt)?;
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
    judge(args, &sides, &out, runs, &loaded, interrupted)
}

/// Every run of every side, interleaved; the records and whether the user stopped ab.
fn run_all(
    args: &AbArgs,
    sides: &[SideSpec],
    out: &Path,
    interrupt: &AtomicBool,
) -> Result<(Vec<RunRecord>, bool)> {
    let exe = std::env::current_exe().context("finding the ixbench program")?;
    let total = sides.len() as u32 * args.repeat;
    let mut runs: Vec<RunRecord> = Vec::new();
    let mut interrupted = false;
    let mut k = 0;
    'outer: for r in 1..=args.repeat {
        // The order rotates each repeat (A B C, B C A, C A B, ...): a run is slowed by what
        // ran before it (the disk still writing back a side that fsyncs, a cache another side
        // filled), and in a fixed order one side always pays for the same neighbour. With
        // SQLite synchronous=OFF run right after synchronous=FULL at load 8, every run of an
        // identical side was 1.5-1.8x slower than the base's and flagged.
        let first = (r as usize - 1) % sides.len();
        for s in sides[first..].iter().chain(&sides[..first]) {
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
            let signal = {
                use std::os::unix::process::ExitStatusExt;
                status.signal()
            };
            crate::outln!(
                "[{k}/{total}] {} repeat {r}: {secs:.1} s, {}{}",
                s.label,
                match (code, signal) {
                    (Some(0), _) => "ok".to_string(),
                    (Some(c), _) => format!("exit {c}"),
                    (None, Some(sig)) => format!("killed by signal {sig}"),
                    (None, None) => "killed by a signal".to_string(),
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
                signal,
                seconds: secs,
                results,
            });
            // Stopped by the user: ab's own signal (Ctrl-C on the terminal reaches ab and the
            // child at once, so ab knows by the time the child has ended). A child stopped by a
            // signal sent to it alone (SIGKILL, a crash, SIGINT or SIGTERM from another
            // program: it exits 130 or 143) is a failed run, and ab goes on.
            if interrupt.load(Ordering::SeqCst) {
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

    Ok((runs, interrupted))
}

/// Compare the sides' runs, print and write the verdict (ab.txt, ab.json, report.html);
/// returns the exit status.
fn judge(
    args: &AbArgs,
    sides: &[SideSpec],
    out: &Path,
    runs: Vec<RunRecord>,
    loaded: &[Side],
    interrupted: bool,
) -> Result<u8> {
    let extra = exit_failures(&runs, loaded);
    let html = out.join("report.html");
    let cargs = compare::Options {
        rule: rule(args)?,
        pass_on: args.pass.pass_on.clone(),
        format: compare::Format::Text,
        html: Some(html),
        all_settings: args.all_settings,
    };
    crate::outln!();
    let report = compare::run_sides(&cargs, &loaded[0], &loaded[1..], &extra)?;
    let news: Vec<String> = sides[1..].iter().map(|s| s.label.clone()).collect();
    let ratios = (news.len() >= 2).then(|| compare::ratio_table(&report.outcome.judgement, &news));
    let ratio_head = format!(
        "ratios to {} (median new/base; the state where not NO CHANGE):",
        sides[0].label
    );
    if let Some(t) = &ratios {
        crate::outln!();
        crate::outln!("{ratio_head}");
        crate::out!("{}", crate::export::text::table(t));
    }
    let code = if interrupted {
        crate::stop::exit_code().max(130)
    } else {
        report.code
    };
    // The text report: the notes and the tables as printed.
    let (before, after) = report
        .notes
        .split_at(report.table_at.min(report.notes.len()));
    let mut text = before.join("\n");
    text.push_str("\n\n");
    text.push_str(&crate::export::text::table(&report.outcome.table));
    text.push_str(&after.join("\n"));
    text.push('\n');
    if let Some(t) = &ratios {
        text.push_str(&format!("\n{ratio_head}\n"));
        text.push_str(&crate::export::text::table(t));
    }
    std::fs::write(out.join("ab.txt"), text).context("writing ab.txt")?;
    let result = AbResult {
        command: args
            .command
            .iter()
            .map(|a| crate::dbms::redact_text(a))
            .collect(),
        repeat: args.repeat,
        sides: sides.to_vec(),
        runs,
        state: report.outcome.judgement.state,
        judgement: report.outcome.judgement,
        interrupted,
        exit: code,
    };
    std::fs::write(
        out.join("ab.json"),
        serde_json::to_string_pretty(&result)? + "\n",
    )
    .context("writing ab.json")?;
    crate::outln!(
        "results: {} (ab.txt, ab.json; each run in LABEL/rN; report: {})",
        out.display(),
        out.join("report.html").display()
    );
    Ok(code)
}

/// The failures of runs that their results cannot show: a run that left no results, and a
/// run that exited non-zero (or was killed) although its `run.json` shows no failure. Each is
/// (side, failure), FAILED.
fn exit_failures(runs: &[RunRecord], loaded: &[Side]) -> Vec<(String, Failure)> {
    let mut out = Vec::new();
    // A run that left results and exited with a verdict of its own (`ddl`: NO VERDICT 5, or
    // REGRESSION 3 with --fail-on-regression) is judged from its results, as any other.
    let verdict_exit = |r: &RunRecord| {
        use crate::results::verdict::{EXIT_NO_VERDICT, EXIT_REGRESSION};
        r.results
            && r.exit
                .is_some_and(|c| c == EXIT_NO_VERDICT as i32 || c == EXIT_REGRESSION as i32)
    };
    for r in runs
        .iter()
        .filter(|r| r.exit != Some(0) && !verdict_exit(r))
    {
        let how = match (r.exit, r.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            (None, None) => "killed by a signal".to_string(),
        };
        let label = r.dir.display().to_string();
        let shown = loaded
            .iter()
            .flat_map(|s| s.runs.iter())
            .find(|run| run.label == label)
            .is_some_and(|run| {
                compare::failures(run, &[], &[])
                    .iter()
                    .any(|f| f.state == State::Failed)
            });
        if r.results && shown {
            continue;
        }
        let (kind, what) = if r.results {
            (how.clone(), format!("ended {how}"))
        } else {
            ("no results".to_string(), format!("{how}, left no run.json"))
        };
        out.push((
            r.side.clone(),
            Failure {
                run: label,
                what: "run".into(),
                kind,
                detail: format!("{what}: {}", last_line(&r.log)),
                state: State::Failed,
            },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_command_without_dashes_gets_the_right_form() {
        let line = "/x/ixbench ab --repeat 1 --side pg15: --side 'pg18: --server-bin /opt/pg 18' index --target postgres";
        let args: Vec<String> = shlex::split(line).unwrap();
        assert_eq!(
            child_without_dashes_hint(&args, "index").as_deref(),
            Some("ab runs the command given after '--', last: ixbench ab --repeat 1 --side pg15: --side 'pg18: --server-bin /opt/pg 18' -- index --target postgres")
        );
        // ab's options after the command go before the --
        let late: Vec<String> =
            shlex::split("ixbench ab run --size smoke --side a: --side=b: --out o").unwrap();
        assert_eq!(
            child_without_dashes_hint(&late, "run").as_deref(),
            Some("ab runs the command given after '--', last: ixbench ab --side a: '--side=b:' --out o -- run --size smoke")
        );
        assert_eq!(child_without_dashes_hint(&args, "frob"), None);
        let mut with = args.clone();
        with.insert(8, "--".into());
        assert_eq!(child_without_dashes_hint(&with, "index"), None);
        let other: Vec<String> = ["ixbench", "report", "run"].map(String::from).to_vec();
        assert_eq!(child_without_dashes_hint(&other, "run"), None);
    }

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
