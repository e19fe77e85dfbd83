//! `ixbench compare`: did a version or a config change make it slower? The command's options
//! and the loading of each side's runs; the comparison itself (the noise rule, what is read from
//! `run.json`, the settings that differ, the table and the notes) is
//! [`crate::export::compare`], which `ixbench ab` and `ixbench report` use too. Its exit
//! status is the verdict's ([`crate::results::verdict`]): a comparison that could not judge (a
//! failed run on either side, too few runs, a missed rate) does not pass a CI gate.

use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::export::compare::model::load_path;
use crate::export::compare::rule::{self, Rule};
use crate::export::compare::{run_sides, Format, Options, Side};
use crate::results::verdict::PassArgs;

/// Options of `ixbench compare`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "Examples:\n  \
    ixbench compare BASE NEW              one run per side (no spread known)\n  \
    ixbench compare A1 A2 A3 -- B1 B2 B3  three repeats per side (flags before --)\n  \
    ixbench compare BASEDIR NEWDIR        directories whose subdirectories are results directories")]
pub struct CompareArgs {
    /// Runs: results directories, run.json files, or directories of repeats (whose
    /// subdirectories are results directories). Without `--`: the first is the base, each other
    /// is compared with it. With `--`: all of these are the base side.
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// After `--`: the new side's runs (repeats), compared with the base side's.
    #[arg(last = true, value_name = "NEW")]
    pub new_side: Vec<PathBuf>,
    /// Noise floor for rates and CPU per operation when both sides have repeats: every new run
    /// must be worse than every base run by more than this (relative), as well as by more than
    /// either side's spread (max/min).
    #[arg(long, default_value_t = rule::DEFAULT_THRESHOLD)]
    pub threshold: f64,
    /// Noise floor for tail figures (p01, p99, maxop) when both sides have repeats.
    #[arg(long, default_value_t = rule::DEFAULT_TAIL_THRESHOLD)]
    pub tail_threshold: f64,
    /// Relative change flagged when a side has too few runs for a spread (rates and CPU per
    /// operation; tail figures must change by a factor of 2, or of 1 + this if larger).
    #[arg(long, default_value_t = rule::DEFAULT_SINGLE_THRESHOLD)]
    pub single_threshold: f64,
    /// Give a verdict even with fewer runs than the spread rule needs (one run per side cannot
    /// tell a change from noise; without this such figures get no verdict).
    #[arg(long)]
    pub single_verdict: bool,
    /// Accepted for old scripts: what is now the default. The exit status is the verdict's:
    /// 0 for NO CHANGE or IMPROVED, 3 REGRESSION, 4 FAILED (a run failed on either side), 5 NO
    /// VERDICT (too few runs, a missed rate); `--pass-on` lets a state exit 0.
    #[arg(long)]
    pub fail_on_regression: bool,
    #[command(flatten)]
    pub pass: PassArgs,
    /// Table format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the comparison as an HTML page: ratios to the base as bars with their noise
    /// bands, and the table.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// List every setting that differs, also those that name ports, paths, directories,
    /// sockets, files, hosts and generated values.
    #[arg(long)]
    pub all_settings: bool,
}

/// Run `ixbench compare`; returns the exit status.
pub fn run(args: &CompareArgs) -> Result<u8> {
    // After `--` every argument is a run: a flag there is a flag given in the wrong place.
    if let Some(f) = args
        .new_side
        .iter()
        .find(|p| p.to_string_lossy().starts_with("--") && !p.exists())
    {
        bail!(
            "{}: after `--` every argument is a run of the new side; give the options before \
             `--` (ixbench compare [OPTIONS] A1 A2 -- B1 B2)",
            f.display()
        );
    }
    if let Some(html) = &args.html {
        let inputs: Vec<PathBuf> = args.runs.iter().chain(&args.new_side).cloned().collect();
        crate::results::store::refuse_overwriting_inputs("--html", html, &inputs)?;
    }
    let options = Options {
        rule: Rule::checked(
            args.threshold,
            args.tail_threshold,
            args.single_threshold,
            args.single_verdict,
        )?,
        format: args.format,
        html: args.html.clone(),
        all_settings: args.all_settings,
        pass_on: args.pass.pass_on.clone(),
    };
    let (base, news) = if args.new_side.is_empty() {
        if args.runs.len() < 2 {
            bail!(
                "compare needs a base and a new run: ixbench compare BASE NEW, or with repeats \
                 ixbench compare A1 A2 A3 -- B1 B2 B3"
            );
        }
        let base = Side {
            name: "base".into(),
            runs: load_path(&args.runs[0])?,
        };
        let mut news = Vec::new();
        for (i, p) in args.runs[1..].iter().enumerate() {
            let name = if args.runs.len() == 2 {
                "new".to_string()
            } else {
                format!("new{}", i + 1)
            };
            news.push(Side {
                name,
                runs: load_path(p)?,
            });
        }
        (base, news)
    } else {
        let mut b = Vec::new();
        for p in &args.runs {
            b.extend(load_path(p)?);
        }
        let mut n = Vec::new();
        for p in &args.new_side {
            n.extend(load_path(p)?);
        }
        (
            Side {
                name: "base".into(),
                runs: b,
            },
            vec![Side {
                name: "new".into(),
                runs: n,
            }],
        )
    };

    run_sides(&options, &base, &news, &[]).map(|r| r.code)
}
