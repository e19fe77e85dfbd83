//! One row per DBMS kind: everything ixbench decides from a kind (`sqlite`, `null`, `postgres`,
//! `mysql`) is read from its [`Kind`] row, so no code anywhere `match`es on a kind's name.
//!
//! A row says how `--target` names the kind (bare words, `NAME:PATH`, URL schemes, a libpq
//! conninfo), whether a bare word starts a throwaway server and which, how to open it, its SQL
//! dialect, its schema-change dialect and methods (`ixbench ddl --method`: its tools), its
//! statistics probe, how to read a user's table
//! read-only, how ixbench's own sessions connect, its error classes and how a sharded cluster
//! of it spreads its tables. Each engine's row is a `static` in the engine's own file
//! (`KIND`), next to the functions it names; [`KINDS`] lists them, by folder name: build.rs
//! finds every folder of `src/dbms/` whose `mod.rs` defines a `KIND` and writes the engines'
//! `mod` lines and [`KINDS`] (`dbms/mod.rs` includes them), so adding an engine edits no file
//! outside its folder. What a list shows users is in each row's [`Kind::rank`] order.

use anyhow::Result;

use super::ddl::distributed::Distributed;
use super::ddl::tools::{EngineTools, Method, Tool};
use super::ddl::DdlDialect;
use super::dialect::{DbmsSql, Query};
use super::server_stats::StatsPlan;
use super::sharded::Sharding;
use super::{Conn, Dbms, TargetOptions, TargetSpec};

/// Every DBMS kind, by folder name (written by build.rs, included by `dbms/mod.rs`).
pub use super::KINDS;

/// The row of the kind named `name` (as [`super::Driver::kind`] and [`TargetSpec::kind`] say).
pub fn find(name: &str) -> Option<&'static Kind> {
    KINDS.iter().copied().find(|k| k.name == name)
}

/// The row whose SQL dialect is that of a kind no row names (the null target's: it sends
/// nothing, so nothing it writes can be wrong for a server).
pub fn unknown_kind() -> &'static Kind {
    KINDS
        .iter()
        .copied()
        .find(|k| k.unknown)
        .expect("one row is the unknown kind's")
}

/// Checks a `NAME=VALUE` setting of `--sqlite-pragma` with the row that takes such settings
/// (its [`Kind::check_pragma`]), before anything opens.
pub fn check_pragma(name: &str, value: &str) -> Result<()> {
    for check in KINDS.iter().filter_map(|k| k.check_pragma) {
        check(name, value)?;
    }
    Ok(())
}

/// The row of the kind whose URLs start with `scheme` (`postgresql`, `mariadb`).
pub fn by_scheme(scheme: &str) -> Option<&'static Kind> {
    KINDS.iter().copied().find(|k| k.schemes.contains(&scheme))
}

// What a concern module (dialect, DDL, statistics, sharding) would otherwise dispatch itself by
// a kind's name, asked here: the registry is the one place that goes from a kind to its row,
// so the concern modules, which the rows point into, never import the registry back (no
// import circle inside src/dbms/).

/// The dialect of a target kind as [`crate::dbms::Driver::kind`] and `TargetSpec` name it
/// (`postgres`, `mysql`, `sqlite`, `null`), for code that has the kind and not the opened target
/// (checks of the command line before anything connects). `mysql` is MySQL's (MariaDB differs
/// only where the opened target says so: [`DbmsSql::index_expressions`]); anything else is
/// the unknown kind's row's ([`unknown_kind`]: null's).
pub fn dialect(kind: &str) -> &'static dyn DbmsSql {
    find(kind).map_or(unknown_kind().sql, |k| k.sql)
}

/// The DDL dialect for a DBMS: `kind` as [`crate::dbms::Dbms::kind`] says, its version string
/// and storage engine. TiDB is recognised by `TiDB` in its version (it answers as MySQL).
pub fn ddl_dialect(kind: &str, version: &str, engine: Option<&str>) -> Result<Box<dyn DdlDialect>> {
    match find(kind).and_then(|k| k.ddl.as_ref()) {
        Some(ddl) => Ok((ddl.dialect)(version, engine)),
        None => anyhow::bail!("ixbench ddl cannot run a schema change on {kind}"),
    }
}

/// The DDL dialect of the server `conn` is connected to: [`ddl_dialect`] with `shown`, the
/// version string the driver reported, or on a PostgreSQL-protocol server the full
/// `SELECT version()` when it names CockroachDB or YugabyteDB (their `server_version` names
/// PostgreSQL).
pub fn ddl_dialect_of(
    kind: &str,
    conn: &mut dyn Conn,
    shown: &str,
    engine: Option<&str>,
) -> Result<Box<dyn DdlDialect>> {
    ddl_dialect(kind, &full_version(kind, conn, shown), engine)
}

/// The version string to recognise the engine by: on a PostgreSQL-protocol server the full
/// `SELECT version()` when it names CockroachDB or YugabyteDB (their `server_version` may
/// not), otherwise `shown` (what the driver reported).
pub fn full_version(kind: &str, conn: &mut dyn Conn, shown: &str) -> String {
    match find(kind).and_then(|k| k.ddl.as_ref()) {
        Some(ddl) => (ddl.full_version)(conn, shown),
        None => shown.to_string(),
    }
}

/// The distributed engine `version` names, for a server reached over `kind`'s protocol
/// (`mysql`, `postgres`, as its row's `distributed` says); `None` for anything else (MySQL,
/// MariaDB, PostgreSQL themselves).
pub fn distributed(kind: &str, version: &str) -> Option<Distributed> {
    let ddl = find(kind)?.ddl.as_ref()?;
    (ddl.distributed)(version)
}

/// The schema-change methods of the kind named `kind` (its row's [`DdlForms::tools`]); `None`:
/// only its own statement runs there.
pub fn tools(kind: &str) -> Option<&'static dyn EngineTools> {
    find(kind)?.ddl.as_ref()?.tools
}

/// The program method `m` runs, from the kind whose method it is (for the checks of the
/// command line before anything connects: the program in PATH, `--method-opt`'s words).
pub fn tool_of(m: Method) -> Option<Tool> {
    KINDS
        .iter()
        .filter_map(|k| k.ddl.as_ref()?.tools)
        .find_map(|t| t.tool(m))
}

/// Whether `line` is a progress line of any kind's tools (not worth keeping as a program's
/// last message: a user's command may run any of them).
pub fn is_tool_progress_line(line: &str) -> bool {
    KINDS
        .iter()
        .filter_map(|k| k.ddl.as_ref()?.tools)
        .any(|t| t.is_progress_line(line))
}

/// Ask the server of `kind` (a [`crate::dbms::Driver::kind`]) what it reports: its version,
/// which statistics views and extensions it has. `None` for a target with no server (SQLite,
/// null).
pub fn stats_probe(kind: &str, conn: &mut dyn Conn) -> Result<Option<StatsPlan>> {
    match find(kind).and_then(|k| k.stats) {
        Some(probe) => probe(conn).map(Some),
        None => Ok(None),
    }
}

/// Whether a target of `kind` has a server that reports its own figures (not SQLite, null).
pub fn reports_stats(kind: &str) -> bool {
    find(kind).is_some_and(|k| k.stats.is_some())
}

/// How a sharded cluster with a head of `kind` lays out its shards (`None`: not a sharded
/// kind).
pub fn sharding(kind: &str) -> Option<Sharding> {
    find(kind).and_then(|k| k.sharding)
}

/// Opens a target of a kind from its spec.
pub type OpenFn = fn(&TargetSpec, &TargetOptions) -> Result<Box<dyn Dbms>>;

/// Connects one of ixbench's own sessions (see [`super::session`]) to a URL: the URL, the
/// connect timeout, the read/write timeout, and whether settings come from the URL alone.
pub type SessionFn =
    fn(&str, std::time::Duration, Option<std::time::Duration>, bool) -> Result<Box<dyn Conn>>;

/// Reads rows of a user's table read-only (see [`super::scan::scan_column`]): the spec, the
/// select list and table (`"col" FROM "t"`), a function that gets the ORDER BY list given a
/// way to run catalog queries, and what to call for each value. Returns nothing; `each` counts.
pub type ScanFn = fn(
    &TargetSpec,
    &str,
    &mut dyn FnMut(&mut Query) -> Result<String>,
    &mut dyn FnMut(Option<&str>) -> Result<()>,
) -> Result<()>;

/// How a kind's error of its own driver reads: its code, and whether it is a duplicate key.
pub struct ErrorClasses {
    /// The code of one error of the chain, when it is this kind's (the SQLSTATE, the error
    /// number, `sqlite:<code>`).
    pub code: fn(&(dyn std::error::Error + 'static)) -> Option<String>,
    /// Whether that error (one [`ErrorClasses::code`] read) is a duplicate key.
    pub duplicate_key: fn(&(dyn std::error::Error + 'static)) -> bool,
    /// Whether that error is transient (busy, deadlock, serialization failure): what a worker
    /// runs again and counts as a retry ([`super::Conn::is_retryable`]).
    pub retryable: fn(&(dyn std::error::Error + 'static)) -> bool,
}

/// A kind's schema-change DDL: which dialect its version and storage engine get.
pub struct DdlForms {
    /// The dialect for a version string and storage engine.
    pub dialect: fn(&str, Option<&str>) -> Box<dyn DdlDialect>,
    /// The version string to recognise the engine by, given what the driver reported (on a
    /// PostgreSQL-protocol server: `SELECT version()`, which names CockroachDB or YugabyteDB).
    pub full_version: fn(&mut dyn Conn, &str) -> String,
    /// The distributed engine speaking this kind's protocol that a version names, if any.
    pub distributed: fn(&str) -> Option<Distributed>,
    /// Its schema-change methods besides its own statement (`ixbench ddl --method`: its
    /// tools, its other rebuild statements, a user's command's client variables); `None`: no
    /// other program can connect to it, only its own statement runs.
    pub tools: Option<&'static dyn EngineTools>,
}

/// What ixbench knows of one DBMS kind (see the module's doc).
pub struct Kind {
    /// Its name: what [`super::Driver::kind`] and [`TargetSpec::kind`] say.
    pub name: &'static str,
    /// Its place in what lists the kinds to users (the unknown-target message): lowest first,
    /// so that message stays as it was when the rows were listed by hand (sqlite 0, null 1,
    /// postgres 2, mysql 3).
    pub rank: u8,
    /// Bare `--target` words that name it (`mariadb` and `mysql` both name `mysql`).
    pub words: &'static [&'static str],
    /// True when `WORD:PATH` names a file of it (SQLite), `WORD` alone a default file.
    pub path: bool,
    /// URL schemes that name it (`postgres`, `postgresql`), before `://`.
    pub schemes: &'static [&'static str],
    /// True when a libpq `key=value` connection string names it.
    pub conninfo: bool,
    /// Its forms as the unknown-target message lists them, bare first (`sqlite`,
    /// `sqlite:PATH`), and its URL form (`postgres://USER@HOST:PORT/DB`) listed after every
    /// kind's bare forms.
    pub shown: &'static [&'static str],
    /// Its URL form in the unknown-target message, if it has URLs.
    pub shown_url: Option<&'static str>,
    /// The throwaway server (`server::ServerKind` by name: `postgres`, `mariadb`) that speaks
    /// its protocol, started for a bare word without a URL; `None` for an embedded DBMS.
    pub server: Option<&'static str>,
    /// How to open it.
    pub open: OpenFn,
    /// How a `--sqlite-pragma NAME=VALUE` is checked on the command line, for the kind that
    /// takes such settings; `None` for the others.
    pub check_pragma: Option<fn(&str, &str) -> Result<()>>,
    /// True for the one row whose dialect serves a kind no row names ([`unknown_kind`]).
    pub unknown: bool,
    /// Its SQL dialect, as code that has only the kind needs it (before anything connects).
    pub sql: &'static dyn DbmsSql,
    /// Its schema-change DDL; `None`: `ixbench ddl` cannot run a schema change on it.
    pub ddl: Option<DdlForms>,
    /// Its statistics probe (what the server reports of its own work); `None` without a server.
    pub stats: Option<fn(&mut dyn Conn) -> Result<StatsPlan>>,
    /// How to read a user's table read-only; `None`: `pattern infer --table` refuses it.
    pub scan: Option<ScanFn>,
    /// How ixbench's own sessions connect to its URLs; `None` without URLs.
    pub session: Option<SessionFn>,
    /// Its driver's error codes and classes.
    pub errors: ErrorClasses,
    /// How a sharded cluster of it spreads its tables; `None`: it cannot be sharded.
    pub sharding: Option<Sharding>,
}

/// The error for a `--target` no kind takes: every kind's forms, as its row shows them
/// (`expected sqlite, sqlite:PATH, null, postgres, mariadb, postgres://... or mysql://...`).
pub(super) fn unknown_target(shown_target: &str) -> anyhow::Error {
    let mut rows: Vec<&Kind> = KINDS.to_vec();
    rows.sort_by_key(|k| k.rank);
    let forms: Vec<&str> = rows
        .iter()
        .flat_map(|k| k.shown.iter().copied())
        .chain(rows.iter().filter_map(|k| k.shown_url))
        .collect();
    let (last, rest) = forms.split_last().expect("at least one kind");
    anyhow::anyhow!(
        "unknown target {shown_target:?}: expected {} or {last}",
        rest.join(", ")
    )
}

/// A row's [`ErrorClasses`] for a DBMS with no errors of its own (the null target).
pub(super) const NO_ERRORS: ErrorClasses = ErrorClasses {
    code: |_| None,
    duplicate_key: |_| false,
    retryable: |_| false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_unique_and_found() {
        for k in KINDS {
            assert!(std::ptr::eq(find(k.name).unwrap(), *k), "{}", k.name);
            for s in k.schemes {
                assert_eq!(by_scheme(s).unwrap().name, k.name);
            }
        }
        let names: std::collections::BTreeSet<_> = KINDS.iter().map(|k| k.name).collect();
        assert_eq!(names.len(), KINDS.len());
        let ranks: std::collections::BTreeSet<_> = KINDS.iter().map(|k| k.rank).collect();
        assert_eq!(ranks.len(), KINDS.len(), "two rows share a rank");
        assert_eq!(KINDS.iter().filter(|k| k.unknown).count(), 1);
        assert!(find("oracle").is_none());
    }

    /// Every form a row names parses to that row, and a bare word starts its server (when it
    /// has one); an embedded kind opens as a driver that says it is that kind.
    #[test]
    fn every_form_of_a_row_parses_to_it() {
        for k in KINDS {
            for w in k.words {
                let spec = TargetSpec::parse(w).unwrap();
                assert_eq!(spec.kind, k.name, "{w}");
                assert_eq!(spec.needs_server(), k.server.is_some(), "{w}");
            }
            for s in k.schemes {
                let spec = TargetSpec::parse(&format!("{s}://u@h:1/db")).unwrap();
                assert_eq!(
                    (spec.kind.as_str(), spec.needs_server()),
                    (k.name, false),
                    "{s}"
                );
            }
            assert_eq!(super::dialect(k.name).name(), k.sql.name());
        }
        let dir = tempfile::tempdir().unwrap();
        let opts = TargetOptions {
            engine: None,
            sqlite_pragmas: Vec::new(),
            default_sqlite_path: Some(dir.path().join("x.db")),
            connect_timeout: None,
            server_changes: false,
        };
        for k in KINDS.iter().filter(|k| k.server.is_none()) {
            let db = super::super::open(&TargetSpec::parse(k.words[0]).unwrap(), &opts).unwrap();
            assert_eq!(db.kind(), k.name);
            assert_eq!(db.dialect().name(), k.sql.name());
        }
    }

    /// The message users get is the one they got before the rows existed.
    #[test]
    fn unknown_target_message() {
        assert_eq!(
            unknown_target("oracle").to_string(),
            "unknown target \"oracle\": expected sqlite, sqlite:PATH, null, postgres, mariadb, \
             postgres://USER@HOST:PORT/DB or mysql://USER@HOST:PORT/DB"
        );
    }
}
