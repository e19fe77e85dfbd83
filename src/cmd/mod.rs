//! The commands, one file (or folder) each, all of one shape: `pub fn run(args, ...) ->
//! Result<u8>` takes the command's parsed options and returns the exit status. A command
//! composes steps ([`crate::step`], [`crate::session`]) and never reaches into another command
//! (held by tests/layers.rs): what two commands share lives below them (`compare`, `ab` and
//! `report` compare runs through [`crate::export::compare`]), and `ab`, which checks each
//! side's command line with this table's parser, is handed [`check_command_line`] by `main.rs`.

pub mod ab;
pub mod compare;
pub mod ddl;
pub mod index;
pub mod merge;
pub mod oltp;
pub mod pattern;
pub mod report;
pub mod run;
pub mod server;
pub mod timeseries;

use clap::{Parser, Subcommand};

/// ixbench: the insert benchmark and friends, for write-heavy workloads with secondary indexes.
#[derive(Debug, Parser)]
#[command(name = "ixbench", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Run a workload against a target: the insert benchmark (l.i0, l.x, l.i1, l.i2, maint,
    /// qrN/qpN) by default, or --workload oltp_read_write, ..., timeseries.
    Run(run::RunArgs),
    /// Index-build lab: timed CREATE INDEX with its cost, knob sweeps, load strategies,
    /// table rebuilds.
    Index(index::IndexArgs),
    /// What a schema change does to a live workload: the load at a fixed rate, a baseline, an
    /// online or blocking ADD INDEX (DROP INDEX, ADD COLUMN, rebuild) in its own session, and
    /// recovery; TPS, QPS and p99 before, during and after, over a grid of knobs.
    Ddl(ddl::DdlArgs),
    /// Compare runs with base runs (repeats per side: `A1 A2 -- B1 B2`): changes beyond the
    /// run-to-run spread and failed steps flagged, changed versions and settings listed.
    Compare(compare::CompareArgs),
    /// Start or stop a throwaway local PostgreSQL or MariaDB server.
    Server(server::ServerArgs),
    /// sysbench's OLTP workloads (oltp_read_write, oltp_read_only, ...) on their own, to
    /// compare with sysbench: load sbtest1..N, run for --time, print sysbench-like lines and
    /// summary.
    Oltp(crate::cmd::oltp::OltpArgs),
    /// Write the HTML report of results directories again (several: compared with the first).
    Report(crate::cmd::report::ReportArgs),
    /// Insert patterns: infer the geek code of a key stream, print the code of a pattern
    /// spec, generate a pattern's keys.
    Pattern(crate::cmd::pattern::PatternArgs),
    /// The time-series workload: (time, device_id, metric_id, value) with retention, native
    /// range partitions or none, queries with their plans; --compare-partitioning.
    Timeseries(crate::cmd::timeseries::TsArgs),
    /// Version and configuration A/B: the same command (run, index, ddl, ...) against two or
    /// more server builds (--server-bin) or setting sets, interleaved A B A B with --repeat,
    /// each on a fresh server; the figures that changed beyond the noise, the settings that
    /// differ, a report; exit status 3 on a regression.
    Ab(crate::cmd::ab::AbArgs),
    /// Add the results of the processes of one several-process run (`run --client-id K
    /// --client-count N`) into one run: counts summed, HDR histograms added, interval lines
    /// by time.
    Merge(crate::cmd::merge::MergeArgs),
}

/// Whether `argv` (the program name first) parses as an `ixbench` command line: handed to
/// `ixbench ab` ([`ab::CommandLineCheck`]), which checks each side's command line before it
/// starts anything; a command never imports this table itself.
pub fn check_command_line(argv: Vec<String>) -> Result<(), clap::Error> {
    Cli::try_parse_from(argv).map(|_| ())
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::options::size::{every_preset, parse_cli_from, SizePreset};

    fn parse(args: &[&str]) -> Command {
        let mut v: Vec<OsString> = vec!["ixbench".into()];
        v.extend(args.iter().map(OsString::from));
        parse_cli_from::<Cli>(v).unwrap().command
    }

    #[test]
    fn a_preset_sets_flags_and_explicit_flags_win() {
        let Command::Run(a) = parse(&["run", "--size", "smoke", "--rows", "777"]) else {
            panic!()
        };
        assert_eq!(a.plan.rows, 777);
        assert_eq!(a.plan.rows2, 5000);
        assert_eq!(a.plan.query_seconds, 2.0);
        assert_eq!(a.common.quiet_timeout, 10.0);
        assert_eq!(a.common.size, Some(SizePreset::Smoke));
        let Command::Run(a) = parse(&["run"]) else {
            panic!()
        };
        assert_eq!(
            (a.plan.rows, a.plan.rows2, a.common.size),
            (1_000_000, 300_000, None)
        );
        let Command::Oltp(a) = parse(&["oltp", "--size=smoke", "--quiet-timeout", "0"]) else {
            panic!()
        };
        assert_eq!(
            (a.own.get_one::<u32>("table_size"), a.head.time),
            (Some(&1000), 3.0)
        );
        assert_eq!(a.common.quiet_timeout, 0.0);
        let Command::Timeseries(a) = parse(&["timeseries", "--size=smoke", "--devices", "7"])
        else {
            panic!()
        };
        assert_eq!(
            (a.own.get_one::<u64>("devices"), a.head.time),
            (Some(&7), 3.0)
        );
        assert_eq!(a.own.get_one::<u64>("threads"), Some(&1));
    }

    #[test]
    fn the_check_ab_is_handed_parses_with_the_command_table() {
        let argv = |a: &[&str]| {
            std::iter::once("ixbench")
                .chain(a.iter().copied())
                .map(String::from)
                .collect()
        };
        assert!(check_command_line(argv(&["run", "--rows", "10"])).is_ok());
        assert!(check_command_line(argv(&["run", "--rowz", "10"])).is_err());
        assert!(check_command_line(argv(&["nosuchcommand"])).is_err());
    }

    #[test]
    fn every_preset_flag_exists_on_its_command() {
        let all = every_preset();
        for c in ["run", "index", "ddl", "oltp", "timeseries"] {
            assert!(all.iter().any(|(n, _, f)| *n == c && !f.is_empty()), "{c}");
        }
        for (cmd, size, flags) in all {
            let mut args = vec![cmd.to_string(), format!("--size={}", size.name())];
            for (f, v) in flags {
                args.push(format!("--{f}={v}"));
            }
            let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            parse(&args);
        }
    }
}
