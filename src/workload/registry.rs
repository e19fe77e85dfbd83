//! The registry of workloads: every workload by name, with what the commands need to know about
//! it without knowing it: its aliases, one-line description, which of `ixbench run`'s option
//! groups (help headings) it takes, its `--size` presets, its notes, what runs it (the insert
//! benchmark's steps or its own runner, see [`crate::workload::runner`]), the table and column
//! a schema change works on and the secondary indexes an index build makes.
//!
//! `ixbench run --workload NAME` looks its workload up here (a typo is a usage error with a
//! "did you mean"), refuses an option of another workload's group, and runs it with the
//! entry's runner; no command names a workload. A workload registers itself by defining its
//! entry in its own file (`pub fn entry() -> Entry`, or `pub fn entries() -> Vec<Entry>` for
//! several): build.rs finds it and [`all`] lists it. build.rs also finds its options (the
//! `pub struct` under `#[command(next_help_heading = HEADING)]` in its file: a field of
//! [`WorkloadOptions`], its heading among [`headings`]), its record's part of `run.json`
//! (`crate::workload::txn_runner::record_parts`) and its command of its own ([`Command`],
//! `pub fn command()`: `ixbench oltp`, `ixbench timeseries`, found by [`command`]), so this
//! file names no workload module.

use anyhow::Result;

use crate::dbms::Dbms;
pub use crate::results::oltp::RandType;
pub use crate::workload::runner::Runner;
use crate::workload::runner::Host;
pub use crate::workload::WorkloadOptions;
use crate::workload::Workload;

/// Where a schema change under the workload works.
#[derive(Debug, Clone, Copy)]
pub struct DdlTarget {
    /// The table.
    pub table: &'static str,
    /// The column an index is added on by default.
    pub column: &'static str,
    /// Its primary key (first column).
    pub pk: &'static str,
}

/// `ixbench ddl`'s options of the load around the schema change, whichever workload runs it.
#[derive(Debug, Clone)]
pub struct DdlLoad {
    /// Tables (the OLTP mixes: sbtest1..N; the others have one).
    pub tables: u32,
    /// Rows of each table.
    pub table_size: u32,
    /// Clients that run the load.
    pub threads: u64,
    /// Distribution of ids (the OLTP mixes).
    pub rand_type: RandType,
    /// Seed of the loaded rows and the clients.
    pub seed: u64,
}

/// The help heading of the insert benchmark's own options of `ixbench run`.
pub const H_IIBENCH: &str = "Insert benchmark (--workload iibench, the default)";
/// The help heading of the options every transaction workload of `ixbench run` shares.
pub const H_TXN: &str = "Transaction workloads (--workload oltp_*|timeseries|kv)";
/// Every workload-specific help heading of `ixbench run`: the insert benchmark's, the
/// transaction workloads', and each workload's own (found by build.rs, in the order of
/// [`WorkloadOptions`]).
pub fn headings() -> Vec<&'static str> {
    [H_IIBENCH, H_TXN]
        .into_iter()
        .chain(crate::workload::HEADINGS.iter().copied())
        .collect()
}

/// Makes a registered workload for a command: (its name, the load's options, the target).
pub type MakeWorkload = fn(&str, &DdlLoad, &dyn Dbms) -> Result<Box<dyn Workload>>;

/// (flag without `--`, value) pairs of a `--size` preset.
pub type Flags = &'static [(&'static str, &'static str)];

/// One registered workload.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its name, as `--workload` takes it.
    pub name: &'static str,
    /// Its place in the lists of workloads users see (`--help`, the unknown-workload
    /// message): lowest first, the default 0 (the insert benchmark 0, the OLTP mixes 1, the
    /// time series 2, the key-value mix 3, the order of the hand-kept list they replace).
    pub rank: u8,
    /// Other names `--workload` takes for it.
    pub aliases: &'static [&'static str],
    /// One line saying what it is.
    pub about: &'static str,
    /// What runs it under `ixbench run`: the insert benchmark's steps, or its own runner.
    pub runner: Runner,
    /// The help headings of `ixbench run` whose options it takes (an option under another
    /// workload's heading is a usage error with it).
    pub headings: &'static [&'static str],
    /// Options of another heading it takes too (flag without `--`): the time series' rows per
    /// commit is the insert benchmark's `--rows-per-commit`.
    pub also_takes: &'static [&'static str],
    /// The flags `--size NAME` (smoke, small, large) sets for it under `ixbench run`.
    pub presets: fn(&str) -> Flags,
    /// Its notes on a target kind (printed under the header and kept in run.json); only its
    /// own: the insert benchmark's never show up in another workload's output.
    pub notes: fn(&str) -> Vec<String>,
    /// The table a schema change works on, its column and its primary key's first column.
    pub ddl_target: DdlTarget,
    /// Its tables under `ixbench ddl` with `load`'s options.
    pub ddl_tables: fn(&DdlLoad) -> Vec<String>,
    /// The workload `ixbench ddl` runs around the schema change (called with the entry's name
    /// and `load`'s options).
    pub ddl_workload: MakeWorkload,
    /// The secondary indexes its load makes, (name, columns), with the default options.
    pub indexes: fn() -> Vec<(String, Vec<String>)>,
    /// Its hooks for the index lab and `ixbench pattern` (see [`crate::workload::lab`]): its
    /// lab table and its indexes' geek codes; `None`: `ixbench index --workload NAME` builds
    /// on its `ddl_target`'s table, loaded by its `ddl_workload`, with its `indexes`.
    pub lab: Option<crate::workload::lab::LabHooks>,
}

/// A workload's command of its own: `ixbench oltp` and `ixbench timeseries`, the OLTP mixes
/// and the time series under the names they had before `ixbench run --workload`. Its module
/// defines it (`pub fn command() -> Command`, found by build.rs); the command's file in
/// `src/cmd/` adds the options every database command shares and the transaction head's
/// around the workload's own and runs it on the shared transaction head, naming no workload.
#[derive(Debug, Clone, Copy)]
pub struct Command {
    /// Its name: `ixbench NAME`.
    pub name: &'static str,
    /// The flags `--size NAME` (smoke, small, large) sets for it.
    pub presets: fn(&str) -> Flags,
    /// Adds its options listed before the transaction head's (`--workload`, `--threads`, ...).
    pub args: fn(clap::Command) -> clap::Command,
    /// Adds its options listed after the head's (its options under its own heading).
    pub options: fn(clap::Command) -> clap::Command,
    /// Its clients (`--threads`) on the parsed command line.
    pub threads: fn(&clap::ArgMatches) -> u64,
    /// Runs it with its parsed command line on the host.
    pub run: fn(&clap::ArgMatches, &mut dyn Host) -> Result<u8>,
}

/// Every workload's command of its own (found by build.rs), by module name.
pub fn commands() -> Vec<Command> {
    crate::workload::commands()
}

/// The workload's command of its own called `name` (`oltp`, `timeseries`).
pub fn command(name: &str) -> Option<Command> {
    commands().into_iter().find(|c| c.name == name)
}

impl Entry {
    /// The workload `ixbench ddl` runs around a schema change, with `load`'s options.
    pub fn ddl_workload(&self, load: &DdlLoad, dbms: &dyn Dbms) -> Result<Box<dyn Workload>> {
        (self.ddl_workload)(self.name, load, dbms)
    }

    /// True when it is `name` or has it as an alias.
    pub fn is(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }

    /// True when `--long` (without `--`) under `heading` is one of its options.
    pub fn takes(&self, heading: &str, long: &str) -> bool {
        self.headings.contains(&heading) || self.also_takes.contains(&long)
    }
}

/// Every workload, by [`Entry::rank`] (the default, the insert benchmark, first); those of one
/// module in the order it gives them.
pub fn all() -> Vec<Entry> {
    let mut v = crate::workload::entries();
    v.sort_by_key(|e| e.rank);
    v
}

/// The default workload of `ixbench run`.
pub const DEFAULT: &str = "iibench";

/// The workload called `name` (or with that alias).
pub fn find(name: &str) -> Option<Entry> {
    all().into_iter().find(|e| e.is(name))
}

/// `--workload`: checked at parsing, so a typo is a usage error (exit status 2) with a "did
/// you mean" and the list of workloads; gives the workload's own name for an alias.
pub fn parse_arg(s: &str) -> Result<String, String> {
    if let Some(e) = find(s) {
        return Ok(e.name.to_string());
    }
    let all = all();
    let lower = s.to_ascii_lowercase();
    let close = all
        .iter()
        .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()))
        .map(|n| (strsim::damerau_levenshtein(&lower, n), n))
        .filter(|(d, n)| *d <= 2.max(n.len() / 3))
        .min();
    let hint = close.map_or(String::new(), |(_, n)| format!("; did you mean {n}?"));
    Err(format!(
        "unknown workload {s:?}{hint} (workloads: {})",
        all.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
    ))
}

/// The workload an option of `ixbench run` given on the command line belongs to, when it is
/// not `entry`'s: `(long, heading)` of the first such option in `given` (the longs given,
/// without `--`), out of `options` ((long, heading) of every option).
pub fn foreign_option<'a>(
    entry: &Entry,
    options: &'a [(String, String)],
    given: &[String],
) -> Option<&'a (String, String)> {
    options.iter().find(|(long, heading)| {
        headings().contains(&heading.as_str())
            && !entry.takes(heading, long)
            && given.iter().any(|g| g == long)
    })
}

/// One line per workload for help texts: `name  about`.
pub fn list() -> String {
    all()
        .iter()
        .map(|e| format!("{:<22} {}", e.name, e.about))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The default workload: the registry's first (the lowest rank), never found by a name.
pub fn default_entry() -> Entry {
    all()
        .into_iter()
        .next()
        .expect("the registry lists at least one workload")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for e in all() {
            for n in std::iter::once(e.name).chain(e.aliases.iter().copied()) {
                assert!(seen.insert(n), "{n} registered twice");
            }
        }
        assert_eq!(all()[0].name, DEFAULT);
        assert!(all()[1..].iter().all(|e| e.rank > all()[0].rank));
    }

    #[test]
    fn a_typo_gets_a_did_you_mean() {
        assert_eq!(parse_arg("iibench").unwrap(), "iibench");
        assert_eq!(parse_arg("oltp_read_write").unwrap(), "oltp_read_write");
        let e = parse_arg("oltp_red_write").unwrap_err();
        assert!(e.contains("did you mean oltp_read_write?"), "{e}");
        let e = parse_arg("timeserie").unwrap_err();
        assert!(e.contains("did you mean timeseries?"), "{e}");
        let e = parse_arg("zzzzzzzzz").unwrap_err();
        assert!(!e.contains("did you mean") && e.contains("iibench"), "{e}");
        // The list keeps the order of the hand-kept list the ranks replaced.
        assert!(
            e.contains("(workloads: iibench, oltp_") && e.ends_with(", timeseries, kv)"),
            "{e}"
        );
    }

    #[test]
    fn only_the_insert_benchmark_has_its_notes() {
        let ii = (find("iibench").unwrap().notes)("postgres");
        assert!(!ii.is_empty());
        for e in all().iter().filter(|e| e.name != "iibench") {
            for kind in ["sqlite", "postgres", "mysql"] {
                let n = (e.notes)(kind);
                assert!(n.iter().all(|l| !ii.contains(l)), "{}: {n:?}", e.name);
            }
        }
    }

    #[test]
    fn an_option_of_another_workload_is_found() {
        let oltp = find("oltp_read_write").unwrap();
        let ts = find("timeseries").unwrap();
        let ii = find("iibench").unwrap();
        // Each workload's own heading is its last.
        let (h_oltp, h_ts) = (oltp.headings[1], ts.headings[1]);
        let opts = vec![
            ("rows".to_string(), H_IIBENCH.to_string()),
            ("rows-per-commit".to_string(), H_IIBENCH.to_string()),
            ("table-size".to_string(), h_oltp.to_string()),
            ("threads".to_string(), H_TXN.to_string()),
            ("devices".to_string(), h_ts.to_string()),
            ("target".to_string(), "Options".to_string()),
        ];
        let g = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(foreign_option(&oltp, &opts, &g(&["table-size", "threads", "target"])).is_none());
        assert_eq!(
            foreign_option(&oltp, &opts, &g(&["rows"])).unwrap().0,
            "rows"
        );
        assert_eq!(
            foreign_option(&oltp, &opts, &g(&["devices"])).unwrap().0,
            "devices"
        );
        assert!(foreign_option(&ts, &opts, &g(&["devices", "rows-per-commit"])).is_none());
        assert_eq!(
            foreign_option(&ii, &opts, &g(&["threads"])).unwrap().0,
            "threads"
        );
    }

    #[test]
    fn the_found_lists_follow_the_workloads() {
        // Every heading of `ixbench run`'s workload options, in `--help`'s order, each once;
        // every entry's headings among them.
        let h = headings();
        assert_eq!(&h[..2], &[H_IIBENCH, H_TXN]);
        assert_eq!(
            h.iter().collect::<std::collections::BTreeSet<_>>().len(),
            h.len()
        );
        for e in all() {
            assert!(e.headings.iter().all(|x| h.contains(x)), "{}", e.name);
        }
        let own: Vec<&str> = ["oltp_read_write", "timeseries", "kv"]
            .iter()
            .map(|n| *find(n).unwrap().headings.last().unwrap())
            .collect();
        assert_eq!(&h[2..], &own[..]);
        // The old commands, by name, each with its presets.
        for name in ["oltp", "timeseries"] {
            let c = command(name).unwrap();
            assert_eq!(c.name, name);
            assert!(!(c.presets)("smoke").is_empty());
        }
        assert!(command("run").is_none() && command("kv").is_none());
    }
}
