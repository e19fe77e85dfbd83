//! Run length: `--size smoke|small|default|large` presets (the insert benchmark's planned
//! duration printed at the start and the status line's step plan are its plan's:
//! `workload::iibench::plan`).
//!
//! A preset is a set of flag values per command (see [`PRESETS`]). It is applied at parsing:
//! each of its flags the user did not give on the command line is added to it, so an explicit
//! flag always wins and every command sees ordinary flag values. The preset's name is recorded
//! in the results (`config.size`).

use std::ffi::OsString;

use clap::parser::ValueSource;

pub use crate::options::cli::SizePreset;

/// (flag without `--`, value) pairs.
pub type Flags = &'static [(&'static str, &'static str)];

/// The flags each preset sets, per command: (command, preset, [(flag, value)]). `default` sets
/// nothing: the built-in defaults are that size. A workload's command of its own (`ixbench
/// oltp`, `ixbench timeseries`) takes its workload's presets from the workload registry
/// ([`crate::workload::registry::Command::presets`]).
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
];

/// The flags `preset` sets on `command`.
pub fn preset_flags(command: &str, preset: SizePreset) -> Flags {
    if let Some(own) = crate::workload::registry::command(command) {
        return (own.presets)(preset.name());
    }
    PRESETS
        .iter()
        .find(|(c, p, _)| *c == command && *p == preset)
        .map_or(&[], |(_, _, f)| f)
}

/// Every (command, preset, flags) that sets flags: [`PRESETS`] and the presets of the
/// workloads' commands of their own.
pub fn every_preset() -> Vec<(&'static str, SizePreset, Flags)> {
    let own = crate::workload::registry::commands()
        .into_iter()
        .flat_map(|c| {
            [SizePreset::Smoke, SizePreset::Small, SizePreset::Large]
                .into_iter()
                .map(move |p| (c.name, p, (c.presets)(p.name())))
        });
    PRESETS.iter().copied().chain(own).collect()
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
