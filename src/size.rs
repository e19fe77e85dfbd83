//! Run length: `--size smoke|small|default|large` presets, the planned duration printed at the
//! start, and the status line's step plan.
//!
//! A preset is a set of flag values per command (see [`PRESETS`]). It is applied at parsing:
//! each of its flags the user did not give on the command line is added to it, so an explicit
//! flag always wins and every command sees ordinary flag values. The preset's name is recorded
//! in the results (`config.size`).

use std::ffi::OsString;

use clap::parser::ValueSource;

use crate::progress::{human, Planned};
use crate::step::{StepKind, StepSpec};

pub use crate::cli::SizePreset;

/// (flag without `--`, value) pairs.
pub type Flags = &'static [(&'static str, &'static str)];

/// The flags each preset sets, per command: (command, preset, [(flag, value)]). `default` sets
/// nothing: the built-in defaults are that size.
pub const PRESETS: &[(&str, SizePreset, Flags)] = &[
    (
        "run",
        SizePreset::Smoke,
        &[
            ("rows", "10000"),
            ("rows2", "5000"),
            ("query-seconds", "2"),
            ("quiet-timeout", "10"),
        ],
    ),
    (
        "run",
        SizePreset::Small,
        &[
            ("rows", "100000"),
            ("rows2", "30000"),
            ("query-seconds", "5"),
        ],
    ),
    (
        "run",
        SizePreset::Large,
        &[
            ("rows", "10000000"),
            ("rows2", "3000000"),
            ("query-seconds", "300"),
        ],
    ),
    (
        "index",
        SizePreset::Smoke,
        &[("rows", "10000"), ("quiet-timeout", "10")],
    ),
    ("index", SizePreset::Small, &[("rows", "100000")]),
    ("index", SizePreset::Large, &[("rows", "10000000")]),
    (
        "ddl",
        SizePreset::Smoke,
        &[
            ("table-size", "2000"),
            ("probe-seconds", "2"),
            ("baseline-seconds", "3"),
            ("recovery-seconds", "3"),
            ("quiet-timeout", "10"),
        ],
    ),
    (
        "ddl",
        SizePreset::Small,
        &[
            ("table-size", "20000"),
            ("probe-seconds", "5"),
            ("baseline-seconds", "10"),
            ("recovery-seconds", "10"),
        ],
    ),
    (
        "ddl",
        SizePreset::Large,
        &[
            ("table-size", "1000000"),
            ("baseline-seconds", "120"),
            ("recovery-seconds", "120"),
        ],
    ),
    (
        "oltp",
        SizePreset::Smoke,
        crate::workload::oltp::PRESET_SMOKE,
    ),
    (
        "oltp",
        SizePreset::Small,
        crate::workload::oltp::PRESET_SMALL,
    ),
    (
        "oltp",
        SizePreset::Large,
        crate::workload::oltp::PRESET_LARGE,
    ),
    (
        "timeseries",
        SizePreset::Smoke,
        crate::workload::timeseries::PRESET_SMOKE,
    ),
    (
        "timeseries",
        SizePreset::Small,
        crate::workload::timeseries::PRESET_SMALL,
    ),
    (
        "timeseries",
        SizePreset::Large,
        crate::workload::timeseries::PRESET_LARGE,
    ),
];

/// The flags `preset` sets on `command`.
pub fn preset_flags(command: &str, preset: SizePreset) -> Flags {
    PRESETS
        .iter()
        .find(|(c, p, _)| *c == command && *p == preset)
        .map_or(&[], |(_, _, f)| f)
}

/// `ixbench run --workload NAME --size S`: the workload's own preset (from the workload
/// registry) when it is not the insert benchmark, whose preset is `run`'s.
fn run_workload_presets(command: &str, sub: &clap::ArgMatches, size: SizePreset) -> Option<Flags> {
    if command != "run" {
        return None;
    }
    let name = sub.try_get_one::<String>("workload").ok()??;
    let entry = crate::workload::registry::find(name)?;
    (entry.name != crate::workload::registry::DEFAULT).then(|| (entry.presets)(size.name()))
}

/// Parse the command line as [`clap::Parser::try_parse`] does, with `--size`'s flags added
/// where the user did not give them.
pub fn parse_cli<C: clap::Parser>() -> Result<C, clap::Error> {
    parse_cli_from(std::env::args_os().collect())
}

/// [`parse_cli`] on these arguments (the first is the program name).
pub fn parse_cli_from<C: clap::Parser>(argv: Vec<OsString>) -> Result<C, clap::Error> {
    let matches = C::command().try_get_matches_from(argv.clone())?;
    let extra = match matches.subcommand() {
        Some((name, sub)) => match sub.try_get_one::<SizePreset>("size") {
            Ok(Some(&size)) => run_workload_presets(name, sub, size)
                .unwrap_or_else(|| preset_flags(name, size))
                .iter()
                .filter(|(flag, _)| {
                    let id = flag.replace('-', "_");
                    sub.value_source(&id) != Some(ValueSource::CommandLine)
                })
                .map(|(flag, value)| OsString::from(format!("--{flag}={value}")))
                .collect::<Vec<_>>(),
            _ => Vec::new(),
        },
        None => Vec::new(),
    };
    if extra.is_empty() {
        return C::from_arg_matches(&matches);
    }
    let mut argv = argv;
    argv.extend(extra);
    let matches = C::command().try_get_matches_from(argv)?;
    C::from_arg_matches(&matches)
}

/// `--time SECONDS`: bound l.i1, l.i2 and the read+write steps by seconds instead of rows.
pub fn bound_by_time(steps: &mut [StepSpec], t: f64) {
    for s in steps.iter_mut() {
        match &mut s.kind {
            StepKind::Load {
                create_table: false,
                seconds,
                ..
            } => *seconds = Some(t),
            StepKind::ReadWrite {
                seconds,
                time_bound,
                ..
            } => {
                *seconds = t;
                *time_bound = true;
            }
            _ => {}
        }
    }
}

/// How long each step is planned to be, for the status line: read+write steps and steps
/// bounded by `--time` by their seconds, loads by their rows (all clients), the rest unknown.
pub fn planned_steps(steps: &[StepSpec], clients: usize) -> Vec<(String, Planned)> {
    steps
        .iter()
        .map(|s| {
            let p = match &s.kind {
                StepKind::Load {
                    seconds: Some(t), ..
                } => Planned::Seconds(*t),
                StepKind::Load { rows, .. } => Planned::Rows(rows.saturating_mul(clients as u64)),
                StepKind::ReadWrite { seconds, .. } => Planned::Seconds(*seconds),
                StepKind::CreateIndexes | StepKind::Maintenance => Planned::Unknown,
            };
            (s.name.clone(), p)
        })
        .collect()
}

/// The line printed at the start: the steps bounded by time add up exactly; the others are
/// named with their rows, since their length is the insert rate the run will measure.
pub fn plan_line(steps: &[StepSpec], clients: usize) -> String {
    let planned = planned_steps(steps, clients);
    let timed: f64 = planned
        .iter()
        .map(|(_, p)| match p {
            Planned::Seconds(t) => *t,
            _ => 0.0,
        })
        .sum();
    let n_timed = planned
        .iter()
        .filter(|(_, p)| matches!(p, Planned::Seconds(_)))
        .count();
    let rows: Vec<String> = planned
        .iter()
        .filter_map(|(n, p)| match p {
            Planned::Rows(r) => Some(format!("{n} {r} rows")),
            _ => None,
        })
        .collect();
    let other: Vec<&str> = planned
        .iter()
        .filter(|(_, p)| matches!(p, Planned::Unknown))
        .map(|(n, _)| n.as_str())
        .collect();
    let mut line = format!(
        "plan: {} steps; {n_timed} bounded by time add up to {}",
        steps.len(),
        human(timed)
    );
    if !rows.is_empty() {
        line.push_str(&format!(
            "; bounded by rows: {} (their time is rows / the insert rate measured as they run)",
            rows.join(", ")
        ));
    }
    if !other.is_empty() {
        line.push_str(&format!("; {} as long as the DBMS takes", other.join(", ")));
    }
    line.push_str("; quiet waits before steps at most --quiet-timeout each");
    line
}

/// A warning when `--rows2` is far larger than `--rows`: l.i1 and l.i2 then insert and
/// delete the whole table several times over, and take many times the load's time.
pub fn rows2_warning(rows: u64, rows2: u64) -> Option<String> {
    (rows2 > rows.saturating_mul(4)).then(|| {
        format!(
            "--rows2 {rows2} is {:.0}x --rows {rows}: l.i1 and l.i2 insert (and delete) that many rows \
             per client into a table of {rows}, so they take many times as long as the load \
             (the insert benchmark's default is --rows2 = 0.3 x --rows)",
            rows2 as f64 / rows as f64
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows2_far_larger_warns() {
        assert!(rows2_warning(1000, 300).is_none());
        assert!(rows2_warning(1000, 4000).is_none());
        assert!(rows2_warning(1000, 40_000).unwrap().contains("40x"));
    }
}
