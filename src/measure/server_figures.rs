//! Where the server's figures come from (`--server-figures`): its processes seen through
//! /proc when they run on this machine, what the DBMS itself reports over SQL (the only
//! figures there are for a managed, remote or containerized server), both, or neither. The
//! choice is made once per command ([`set`]) and read by every resource window
//! ([`super::resources::Window`]) and every search for the server's processes
//! ([`super::resources::CostSource::for_target`]).

use std::sync::atomic::{AtomicU8, Ordering};

use serde::{Deserialize, Serialize};

use crate::dbms::server_stats::{ReportedFigure, UnknownFigure};

/// `--server-figures`: where the server's CPU, I/O and memory figures come from.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ServerFigures {
    /// /proc when the server's processes are on this machine (a local URL host and their
    /// PIDs found), else what the DBMS reports.
    #[default]
    Auto,
    /// The server's processes through /proc only (unknown when they are not on this machine).
    Proc,
    /// What the DBMS reports over SQL only, as for a server that is not here (/proc not read).
    Dbms,
    /// Both, side by side (to compare them on a local server).
    Both,
    /// Neither: no server figures, and no query or /proc read for them.
    None,
}

impl ServerFigures {
    /// The value as given on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ServerFigures::Auto => "auto",
            ServerFigures::Proc => "proc",
            ServerFigures::Dbms => "dbms",
            ServerFigures::Both => "both",
            ServerFigures::None => "none",
        }
    }

    /// Whether /proc may be read for the server's processes.
    pub fn reads_proc(self) -> bool {
        matches!(
            self,
            ServerFigures::Auto | ServerFigures::Proc | ServerFigures::Both
        )
    }

    /// Whether the DBMS's own figures are read, given whether the server's processes were
    /// found on this machine.
    pub fn reads_dbms(self, processes_here: bool) -> bool {
        match self {
            ServerFigures::Auto => !processes_here,
            ServerFigures::Dbms | ServerFigures::Both => true,
            ServerFigures::Proc | ServerFigures::None => false,
        }
    }
}

static CHOICE: AtomicU8 = AtomicU8::new(0);

const ALL: [ServerFigures; 5] = [
    ServerFigures::Auto,
    ServerFigures::Proc,
    ServerFigures::Dbms,
    ServerFigures::Both,
    ServerFigures::None,
];

/// Choose where this process takes server figures from (once, as a command starts).
pub fn set(choice: ServerFigures) {
    let i = ALL.iter().position(|c| *c == choice).unwrap_or(0);
    CHOICE.store(i as u8, Ordering::SeqCst);
}

/// The choice in effect ([`ServerFigures::Auto`] until [`set`]).
pub fn current() -> ServerFigures {
    ALL[CHOICE.load(Ordering::SeqCst) as usize % ALL.len()]
}

/// How a command took its server figures: what was asked, what it came to and why; in
/// `run.json` as `server_figures`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerFiguresChoice {
    /// `--server-figures` as given.
    pub asked: ServerFigures,
    /// Read from /proc (the server's processes on this machine).
    pub proc: bool,
    /// Read from the DBMS's own views and counters.
    pub dbms: bool,
    /// Why, in words (`the server's processes are on this machine (PIDs 123)`, `the host
    /// db.example.com is not this machine`).
    pub why: String,
    /// What the DBMS reports, when read (`PostgreSQL 15.8: pg_stat_database, ...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dbms_source: Option<String>,
    /// What it cannot report, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dbms_unknown: Vec<UnknownFigure>,
}

/// What the DBMS reported over one window (a step's workers, an index build): each figure
/// named for what it is and where it comes from, and what it could not say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DbmsReport {
    /// The server and what was read (`PostgreSQL 15.8: pg_stat_database, pg_stat_wal, ...`).
    pub source: String,
    /// Bytes written as the DBMS counts them, the same sum as the /proc side's
    /// `dbms_written_bytes` (WAL/redo + data pages + temp); `None` when unknown.
    #[serde(default)]
    pub written_bytes: Option<u64>,
    /// Which counters `written_bytes` adds up.
    #[serde(default)]
    pub written_what: Option<String>,
    /// The figures, in the order read.
    pub figures: Vec<ReportedFigure>,
    /// What this server cannot report, each with why (an older version, an extension not
    /// installed, performance_schema off): the same in every window of a run.
    #[serde(default)]
    pub unknown: Vec<UnknownFigure>,
    /// What could not be read in this window, with why (a query that failed, a counter that
    /// went down).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<UnknownFigure>,
    /// Statements sent to read them: the probe of what the server has and the plan's
    /// queries at both ends (besides the I/O counters `written_bytes` comes from, which the
    /// /proc side reads too).
    #[serde(default)]
    pub queries: u32,
}

impl DbmsReport {
    /// The figure read from `source` (`pg_stat_wal.wal_bytes`), if any.
    pub fn value(&self, source: &str) -> Option<f64> {
        self.figures
            .iter()
            .find(|f| f.source.eq_ignore_ascii_case(source))
            .map(|f| f.value)
    }

    /// Add a later window's figures (the figures of both, summed by source; unknown in
    /// either stays unknown).
    pub fn add(&self, o: &DbmsReport) -> DbmsReport {
        let mut figures = self.figures.clone();
        for f in &o.figures {
            match figures.iter_mut().find(|g| g.source == f.source) {
                Some(g) => g.value += f.value,
                None => figures.push(f.clone()),
            }
        }
        let union = |a: &[UnknownFigure], b: &[UnknownFigure]| {
            let mut v = a.to_vec();
            for u in b {
                if !v.iter().any(|x| x.name == u.name) {
                    v.push(u.clone());
                }
            }
            v
        };
        DbmsReport {
            source: o.source.clone(),
            written_bytes: self.written_bytes.zip(o.written_bytes).map(|(a, b)| a + b),
            written_what: o.written_what.clone(),
            figures,
            unknown: union(&self.unknown, &o.unknown),
            failed: union(&self.failed, &o.failed),
            queries: self.queries + o.queries,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_and_what_it_reads() {
        assert!(ServerFigures::Auto.reads_dbms(false));
        assert!(!ServerFigures::Auto.reads_dbms(true));
        assert!(!ServerFigures::None.reads_dbms(false));
        assert!(!ServerFigures::None.reads_proc());
        assert!(!ServerFigures::Dbms.reads_proc());
        assert!(ServerFigures::Both.reads_proc() && ServerFigures::Both.reads_dbms(true));
    }

    #[test]
    fn reports_add_by_source() {
        let f = |s: &str, v: f64| ReportedFigure {
            name: s.into(),
            source: s.into(),
            unit: "bytes".into(),
            value: v,
        };
        let a = DbmsReport {
            figures: vec![f("a", 1.0), f("b", 2.0)],
            written_bytes: Some(5),
            queries: 2,
            ..Default::default()
        };
        let b = DbmsReport {
            figures: vec![f("b", 3.0), f("c", 4.0)],
            written_bytes: None,
            queries: 2,
            ..Default::default()
        };
        let s = a.add(&b);
        assert_eq!(s.value("b"), Some(5.0));
        assert_eq!(s.value("c"), Some(4.0));
        assert_eq!(
            s.written_bytes, None,
            "unknown in one window: unknown in the sum"
        );
        assert_eq!(s.queries, 4);
    }
}
