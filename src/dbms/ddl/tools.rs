//! Schema-change methods besides the engine's own statement, for `ixbench ddl --method`: the
//! tools DBAs run on a hot table (pt-online-schema-change on MySQL/MariaDB, pg_repack on
//! PostgreSQL), any command a user gives (gh-ost, pg_squeeze), and an engine's other rebuild
//! statements (PostgreSQL's `VACUUM FULL`, `CLUSTER`, `REINDEX TABLE CONCURRENTLY`).
//!
//! What is here is what every engine's methods share: the [`Method`] names, the program a
//! method runs ([`Tool`]), the words of `--method-opt`, a user's command (its environment),
//! the objects a tool leaves ([`ToolObjects`]), and [`EngineTools`], what an engine knows of
//! its own methods: which apply, its tools' arguments and environment (never a password on a
//! command line), their output read into phases (`copying rows 45%`, `swapping tables`), the
//! objects each tool creates on the server found and dropped again after a failure, the
//! sessions waiting behind a tool. Each engine's part is a `tools.rs` in its folder
//! (`mysql/tools.rs`, `postgres/tools.rs`), handed out by its registry row
//! ([`crate::dbms::registry::DdlForms::tools`]). Running the tools is the step layer's
//! (`crate::step::schema_tools`).

use anyhow::{bail, Result};

use super::{DdlKind, DdlPlan, DdlRequest, Waits};
use crate::dbms::{ClientParams, Conn};

/// How the schema change is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The engine's own statement for `--ddl` and `--lock`.
    Native,
    /// PostgreSQL `VACUUM FULL` (a rebuild holding ACCESS EXCLUSIVE).
    VacuumFull,
    /// PostgreSQL `CLUSTER ... USING <primary key>` (a rebuild in key order, ACCESS EXCLUSIVE).
    Cluster,
    /// PostgreSQL `REINDEX TABLE CONCURRENTLY` (the indexes rebuilt online).
    ReindexConcurrently,
    /// Percona's pt-online-schema-change (MySQL, MariaDB).
    PtOsc,
    /// pg_repack: the whole table rebuilt online.
    PgRepack,
    /// pg_repack `--only-indexes`: the table's indexes rebuilt online.
    PgRepackIndexes,
    /// A user's command (`--ddl-command`), e.g. gh-ost or pg_squeeze.
    External,
}

/// Every method, in the order `--method` lists them.
pub const ALL: [Method; 8] = [
    Method::Native,
    Method::VacuumFull,
    Method::Cluster,
    Method::ReindexConcurrently,
    Method::PtOsc,
    Method::PgRepack,
    Method::PgRepackIndexes,
    Method::External,
];

/// A program a method runs (an engine's [`EngineTools::tool`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tool {
    /// The program, looked up in PATH.
    pub program: &'static str,
    /// The package that installs it (for the message when it is missing).
    pub package: &'static str,
    /// The oldest version ixbench drives (its progress lines and object names are parsed).
    pub min_version: (u32, u32, u32),
    /// Its options that are ixbench's to set (the table, the change, the connection), refused
    /// in `--method-opt`.
    pub refused: &'static [&'static str],
}

impl Method {
    /// As `--method` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Native => "native",
            Method::VacuumFull => "vacuum-full",
            Method::Cluster => "cluster",
            Method::ReindexConcurrently => "reindex-concurrently",
            Method::PtOsc => "pt-osc",
            Method::PgRepack => "pg-repack",
            Method::PgRepackIndexes => "pg-repack-indexes",
            Method::External => "external",
        }
    }

    /// Parse one `--method` value (also `pt-online-schema-change`, `pg_repack`,
    /// `pg_repack-indexes`, `vacuum_full`, ...: `_` and `-` alike).
    pub fn parse(s: &str) -> Result<Method> {
        let n = s.trim().to_ascii_lowercase().replace('_', "-");
        let m = match n.as_str() {
            "pt-online-schema-change" => Some(Method::PtOsc),
            "repack" => Some(Method::PgRepack),
            "repack-indexes" | "pg-repack-only-indexes" => Some(Method::PgRepackIndexes),
            "reindex" => Some(Method::ReindexConcurrently),
            other => ALL.iter().copied().find(|m| m.name() == other),
        };
        m.ok_or_else(|| {
            anyhow::anyhow!(
                "unknown --method {s:?}: expected {}",
                ALL.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")
            )
        })
    }

    /// True when the change runs as a separate program rather than as SQL on ixbench's DDL
    /// session.
    pub fn is_process(self) -> bool {
        matches!(
            self,
            Method::PtOsc | Method::PgRepack | Method::PgRepackIndexes | Method::External
        )
    }

    /// Whether the method can make the change `ddl` on a DBMS whose methods are `tools` (its
    /// registry row's; `None`: a target no other program can connect to) and whose DDL dialect
    /// is named `dialect`; the error says why not, in one line.
    pub fn check(self, tools: Option<&dyn EngineTools>, dialect: &str, ddl: DdlKind) -> Result<()> {
        match self {
            Method::Native => Ok(()),
            Method::External => {
                if tools.is_none() {
                    bail!("--method external needs a server another program can connect to; this target is {dialect}");
                }
                Ok(())
            }
            m => match tools.and_then(|t| t.check(m, dialect, ddl)) {
                Some(r) => r,
                None => bail!("{}", m.elsewhere(dialect)),
            },
        }
    }

    /// Where the method works, for a target whose engine does not run it.
    fn elsewhere(self, dialect: &str) -> String {
        match self {
            Method::PtOsc => {
                format!(
                    "pt-online-schema-change works on MySQL and MariaDB; this target is {dialect}"
                )
            }
            Method::PgRepack | Method::PgRepackIndexes => {
                format!("pg_repack works on PostgreSQL; this target is {dialect}")
            }
            m => format!(
                "--method {} is PostgreSQL's statement; this target is {dialect}",
                m.name()
            ),
        }
    }
}

/// Parse `--method a,b,c`: each once, in the order given.
pub fn parse_methods(list: &[String]) -> Result<Vec<Method>> {
    let mut out: Vec<Method> = Vec::new();
    for s in list.iter().flat_map(|s| s.split(',')) {
        if s.trim().is_empty() {
            continue;
        }
        let m = Method::parse(s)?;
        if out.contains(&m) {
            bail!("--method names {} twice", m.name());
        }
        out.push(m);
    }
    if out.is_empty() {
        out.push(Method::Native);
    }
    Ok(out)
}

/// `--method-opt METHOD=ARGS`: the extra arguments of one method's program (ARGS split as a
/// shell would: spaces, '...' and "..." quotes). Only the methods that run a tool take them
/// (`tool_of`: the program a method runs, from the engine that runs it), and none of the
/// options that are ixbench's to set ([`Tool::refused`]).
pub fn parse_method_opt(
    s: &str,
    tool_of: impl Fn(Method) -> Option<Tool>,
) -> Result<(Method, Vec<String>)> {
    let Some((m, args)) = s.split_once('=') else {
        bail!(
            "--method-opt {s:?}: expected METHOD=ARGS, e.g. pt-osc='--chunk-size 500 --sleep 0.05'"
        );
    };
    let m = Method::parse(m)?;
    let Some(tool) = tool_of(m) else {
        bail!(
            "--method-opt {}: only pt-osc, pg-repack and pg-repack-indexes take extra arguments",
            m.name()
        );
    };
    let args = split_words(args)?;
    for a in &args {
        let flag = a.split('=').next().unwrap_or(a);
        if tool.refused.contains(&flag) {
            bail!(
                "--method-opt {}: {flag} is ixbench's to set (the table, the change and the connection come from --ddl and --target)",
                m.name()
            );
        }
    }
    Ok((m, args))
}

/// Split `s` into words as a POSIX shell would for plain words and quotes ('...', "..." with
/// \" and \\, a backslash outside quotes); no expansion.
pub fn split_words(s: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => bail!("unclosed ' in {s:?}"),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x @ ('"' | '\\' | '$' | '`')) => cur.push(x),
                            Some(x) => {
                                cur.push('\\');
                                cur.push(x);
                            }
                            None => bail!("unclosed \" in {s:?}"),
                        },
                        Some(x) => cur.push(x),
                        None => bail!("unclosed \" in {s:?}"),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(x) = chars.next() {
                    cur.push(x);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// The first `a.b.c` version in a text (`pt-online-schema-change 3.2.1`, `pg_repack 1.4.8`).
pub fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    for word in text.split(|c: char| c.is_whitespace() || c == 'v' || c == '(' || c == ')') {
        let parts: Vec<&str> = word.split('.').collect();
        if parts.len() < 2 || parts[0].is_empty() || !parts[0].chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let num = |s: Option<&&str>| -> Option<u32> {
            let s = s?;
            let d: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
            d.parse().ok()
        };
        if let (Some(a), Some(b)) = (num(parts.first()), num(parts.get(1))) {
            return Some((a, b, num(parts.get(2)).unwrap_or(0)));
        }
    }
    None
}

/// How an engine's method makes the change: its statement on ixbench's DDL session (a SQL
/// method), or `None` for a program (its command line stands in the record), whether writes
/// go on, and the lock it takes, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodForm {
    /// The statement of a SQL method (`VACUUM FULL t`); `None`: the method runs a program.
    pub statement: Option<String>,
    /// True when writes go on.
    pub online: bool,
    /// The lock, in words.
    pub lock: &'static str,
}

/// The statements and the lock of a method, from the dialect's plan `base` (its set-up and undo
/// are kept) and the engine's `tools`: for a SQL method its statement, for a process method
/// `what` (the command, for the record), and the lock in words.
pub fn method_plan(
    method: Method,
    tools: Option<&dyn EngineTools>,
    base: &DdlPlan,
    req: &DdlRequest,
    what: &str,
) -> DdlPlan {
    let mut p = base.clone();
    let form = match method {
        Method::Native => return p,
        Method::External => Some(MethodForm {
            statement: None,
            online: true,
            lock: "whatever the command takes (ixbench runs it and times it)",
        }),
        m => tools.and_then(|t| t.form(m, &req.table)),
    };
    if let Some(f) = form {
        p.statements = vec![f.statement.unwrap_or_else(|| what.into())];
        p.online = f.online;
        p.lock = f.lock.into();
        p.notes.clear();
    }
    p
}

/// What a program needs to run a method: the connection (no password on its command line),
/// the change, the table's storage engine (MySQL), the option file's path (MySQL's tools read
/// the password from it), the user's extra arguments and the server's major version.
pub struct ToolCall<'a> {
    /// The connection.
    pub params: &'a ClientParams,
    /// The change.
    pub req: &'a DdlRequest,
    /// The table's storage engine on MySQL (`InnoDB`, `ROCKSDB`).
    pub engine: &'a str,
    /// Where the option file with the password is, when the program takes one.
    pub secret_path: &'a str,
    /// `--method-opt`'s arguments.
    pub extra: &'a [String],
    /// The server's major version (0 when unknown).
    pub major: u32,
}

/// A program's arguments and environment for one run, and what the option file holds (the
/// password) when it reads one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolArgs {
    /// Its arguments (never a password).
    pub args: Vec<String>,
    /// Environment added to ixbench's (may hold the password).
    pub env: Vec<(String, String)>,
    /// The contents of the option file at [`ToolCall::secret_path`] (written 0600, removed
    /// after); `None`: it reads none.
    pub secret: Option<String>,
}

/// What one line of a tool's output says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolLine {
    /// The phase it announces (`copying rows 45%`), for the method's own tool.
    pub phase: Option<String>,
    /// The tool declines the table while exiting 0 (pg_repack's `WARNING: ... must have a
    /// primary key`): the method failed, with this message.
    pub refusal: Option<String>,
}

/// What an engine knows of its schema-change methods besides its own statement (its folder's
/// `tools.rs`): handed out by its registry row ([`crate::dbms::registry::DdlForms::tools`]), for
/// a kind another program can connect to. The methods of other engines never reach it: a method
/// whose [`EngineTools::check`] says `None` is refused first. Required is what a user's command
/// (`--method external`, which every such kind runs) needs: its client variables and who waits
/// behind it; the defaults are those of an engine with no methods of its own (no tool, no
/// objects, no phases).
pub trait EngineTools: Sync {
    /// `None` when method `m` is not this engine's, or not of its dialect named `dialect`
    /// (TiDB and CockroachDB speak MySQL's and PostgreSQL's protocols but are not the engine
    /// the tools know); else whether it can make the change `ddl` (one-line error).
    fn check(&self, _m: Method, _dialect: &str, _ddl: DdlKind) -> Option<Result<()>> {
        None
    }

    /// The program method `m` runs, when it is this engine's and runs one.
    fn tool(&self, _m: Method) -> Option<Tool> {
        None
    }

    /// How method `m` (this engine's) makes the change on `table`.
    fn form(&self, _m: Method, _table: &str) -> Option<MethodForm> {
        None
    }

    /// The arguments, environment and option file of method `m`'s program.
    fn launch(&self, m: Method, _call: &ToolCall) -> Result<ToolArgs> {
        bail!("--method {} runs no program", m.name())
    }

    /// The standard client variables a user's command gets (`PGHOST`, ...; `MYSQL_HOST`, ...),
    /// so the engine's own client runs as it is.
    fn client_env(&self, params: &ClientParams) -> Vec<(String, String)>;

    /// What a line of method `m`'s program says (any method: a user's command may be one of
    /// the engine's tools).
    fn read_line(&self, _m: Method, _line: &str) -> ToolLine {
        ToolLine::default()
    }

    /// A progress line of one of its tools (`Copying ...: 45%`), not worth keeping as a
    /// program's last message, whatever the method (a user's command may run the tool).
    fn is_progress_line(&self, _line: &str) -> bool {
        false
    }

    /// What method `m` needs on the server before the run (an extension), given whether the
    /// server is one ixbench started (`ours`) and the program's version; a line for the output.
    fn prepare(
        &self,
        _m: Method,
        _conn: &mut dyn Conn,
        _ours: bool,
        _program: (u32, u32, u32),
    ) -> Result<Option<String>> {
        Ok(None)
    }

    /// Before each run of method `m` on `table`: refuse a table its tool cannot take.
    fn before_run(&self, _m: Method, _conn: &mut dyn Conn, _table: &str) -> Result<()> {
        Ok(())
    }

    /// The objects method `m`'s tool has on `table` (in database `db`) now; empty for a method
    /// whose objects ixbench does not know (a user's command).
    fn objects(
        &self,
        _m: Method,
        _conn: &mut dyn Conn,
        _db: &str,
        _table: &str,
    ) -> Result<ToolObjects> {
        Ok(ToolObjects::default())
    }

    /// The statements that drop `objs` (triggers first: they write into the tables), each
    /// with what it drops.
    fn drop_statements(&self, _table: &str, _objs: &ToolObjects) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Who waits for a lock because of a change made by another program (a tool's sessions are
    /// not ixbench's, so they are found by what they run): [`Waits::ddl_waits`] is a tool's
    /// own statement waiting, [`Waits::blocked_sessions`] the other sessions waiting.
    fn waits(&self, conn: &mut dyn Conn) -> Result<Waits>;

    /// The server's view of method `m`'s work while its program is in `phase` (pg_repack's
    /// index builds); `None` where it has none.
    fn progress(&self, _m: Method, _phase: Option<&str>, _conn: &mut dyn Conn) -> Option<String> {
        None
    }

    /// True when `e`, the error of one of the load's transactions on `table`, is one the
    /// server raises because of method `m`'s run: the transaction runs again.
    fn load_error_is_transient(&self, _m: Method, _table: &str, _e: &anyhow::Error) -> bool {
        false
    }
}

/// The environment of a user's `--ddl-command` on a kind named `kind` whose methods are
/// `tools`: `IXBENCH_KIND` (postgres, mysql), `IXBENCH_HOST`, `IXBENCH_PORT`,
/// `IXBENCH_SOCKET` (when used), `IXBENCH_USER`, `IXBENCH_PASSWORD`, `IXBENCH_DB`,
/// `IXBENCH_TABLE`, `IXBENCH_DDL` (add-index, ...), `IXBENCH_ALTER` (the change as an ALTER
/// TABLE clause, on MySQL), `IXBENCH_SQL` (the engine's own statements, `;`-separated), and
/// the engine's standard client variables ([`EngineTools::client_env`]) so psql or mariadb
/// run as they are.
pub fn external_env(
    kind: &str,
    tools: &dyn EngineTools,
    params: &ClientParams,
    req: &DdlRequest,
    alter: Option<&str>,
    native: &[String],
) -> Vec<(String, String)> {
    let mut e: Vec<(String, String)> = vec![
        ("IXBENCH_KIND".into(), kind.into()),
        ("IXBENCH_HOST".into(), params.host.clone()),
        ("IXBENCH_PORT".into(), params.port.to_string()),
        ("IXBENCH_USER".into(), params.user.clone()),
        ("IXBENCH_DB".into(), params.database.clone()),
        ("IXBENCH_TABLE".into(), req.table.clone()),
        ("IXBENCH_DDL".into(), req.kind.name().into()),
        ("IXBENCH_SQL".into(), native.join("; ")),
    ];
    if let Some(s) = &params.socket {
        e.push(("IXBENCH_SOCKET".into(), s.clone()));
    }
    if let Some(a) = alter {
        e.push(("IXBENCH_ALTER".into(), a.into()));
    }
    e.push((
        "IXBENCH_PASSWORD".into(),
        params.password.clone().unwrap_or_default(),
    ));
    e.extend(tools.client_env(params));
    e
}

/// A line without a leading `2026-11-26T15:50:29 ` time stamp (pt-online-schema-change's).
pub fn without_timestamp(line: &str) -> &str {
    let l = line.trim();
    match l.split_once(' ') {
        Some((ts, rest))
            if ts.len() >= 19
                && ts.as_bytes()[4] == b'-'
                && ts.contains('T')
                && ts.chars().next().is_some_and(|c| c.is_ascii_digit()) =>
        {
            rest.trim()
        }
        _ => l,
    }
}

/// Objects a tool creates on the server while it works, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolObjects {
    /// Triggers (MySQL: by name; PostgreSQL: on the table).
    pub triggers: Vec<String>,
    /// Tables (MySQL: shadow tables `_t_new`, `_t_old`; PostgreSQL: `repack.log_<oid>`,
    /// `repack.table_<oid>`).
    pub tables: Vec<String>,
    /// PostgreSQL types (`repack.pk_<oid>`).
    pub types: Vec<String>,
    /// Indexes on the table (pg_repack `--only-indexes`: `index_<oid>`).
    pub indexes: Vec<String>,
}

impl ToolObjects {
    /// Nothing.
    pub fn is_empty(&self) -> bool {
        self.triggers.is_empty()
            && self.tables.is_empty()
            && self.types.is_empty()
            && self.indexes.is_empty()
    }

    /// What is in `self` and not in `before`: what the tool created (an object that was there
    /// before it started is never the tool's to drop).
    pub fn minus(&self, before: &ToolObjects) -> ToolObjects {
        let new = |a: &[String], b: &[String]| -> Vec<String> {
            a.iter().filter(|x| !b.contains(x)).cloned().collect()
        };
        ToolObjects {
            triggers: new(&self.triggers, &before.triggers),
            tables: new(&self.tables, &before.tables),
            types: new(&self.types, &before.types),
            indexes: new(&self.indexes, &before.indexes),
        }
    }

    /// In words: `triggers a, b; tables c`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (what, v) in [
            ("triggers", &self.triggers),
            ("tables", &self.tables),
            ("types", &self.types),
            ("indexes", &self.indexes),
        ] {
            if !v.is_empty() {
                parts.push(format!("{what} {}", v.join(", ")));
            }
        }
        parts.join("; ")
    }
}

/// The first column of each row (a catalog query's names).
pub(crate) fn first_column(rows: Vec<Vec<Option<String>>>) -> Vec<String> {
    rows.into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::tests::req;
    use super::*;
    use crate::dbms::ddl::LockChoice;
    use crate::dbms::registry;

    pub(crate) fn params() -> ClientParams {
        ClientParams {
            host: "127.0.0.1".into(),
            port: 3307,
            socket: None,
            user: "root".into(),
            password: Some("se\"cr\\et".into()),
            database: "ixbench".into(),
        }
    }

    #[test]
    fn method_names() {
        assert_eq!(Method::parse("pt_osc").unwrap(), Method::PtOsc);
        assert_eq!(
            Method::parse("pt-online-schema-change").unwrap(),
            Method::PtOsc
        );
        assert_eq!(Method::parse("pg_repack").unwrap(), Method::PgRepack);
        assert_eq!(Method::parse("VACUUM_FULL").unwrap(), Method::VacuumFull);
        assert!(Method::parse("gh-ost").is_err());
        for m in ALL {
            assert_eq!(Method::parse(m.name()).unwrap(), m);
        }
        let v = parse_methods(&["native,pt-osc".into()]).unwrap();
        assert_eq!(v, [Method::Native, Method::PtOsc]);
        assert_eq!(parse_methods(&[]).unwrap(), [Method::Native]);
        assert!(parse_methods(&["native,native".into()]).is_err());
    }

    #[test]
    fn where_methods_apply() {
        use DdlKind::*;
        let check = |m: Method, kind: &str, dialect: &str, ddl: DdlKind| {
            m.check(registry::tools(kind), dialect, ddl)
        };
        assert!(check(Method::PtOsc, "mysql", "MariaDB InnoDB", AddIndex).is_ok());
        assert!(check(Method::PtOsc, "postgres", "PostgreSQL", AddIndex).is_err());
        assert!(check(Method::PtOsc, "mysql", "TiDB", AddIndex).is_err());
        assert!(check(Method::PgRepack, "postgres", "PostgreSQL", Rebuild).is_ok());
        let e = check(Method::PgRepack, "postgres", "PostgreSQL", AddIndex)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--ddl rebuild") && e.contains("add index"),
            "{e}"
        );
        let e = check(Method::VacuumFull, "mysql", "MariaDB InnoDB", Rebuild)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--method vacuum-full is PostgreSQL's statement; this target is MariaDB InnoDB"
        );
        assert!(check(Method::VacuumFull, "postgres", "PostgreSQL", Rebuild).is_ok());
        let e = check(Method::VacuumFull, "postgres", "PostgreSQL", AddIndex)
            .unwrap_err()
            .to_string();
        assert!(e.contains("use it with --ddl rebuild"), "{e}");
        assert!(check(Method::Cluster, "postgres", "CockroachDB", Rebuild).is_err());
        let e = check(Method::External, "sqlite", "SQLite", AddIndex)
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs a server another program"), "{e}");
        assert!(check(Method::External, "postgres", "PostgreSQL", AddIndex).is_ok());
        assert!(check(Method::External, "mysql", "TiDB", AddIndex).is_ok());
        let e = check(Method::PgRepack, "sqlite", "SQLite", Rebuild)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "pg_repack works on PostgreSQL; this target is SQLite");
        let e = check(Method::PtOsc, "null", "null", Rebuild)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "pt-online-schema-change works on MySQL and MariaDB; this target is null"
        );
    }

    #[test]
    fn method_opts_and_words() {
        let opt = |s: &str| parse_method_opt(s, registry::tool_of);
        let (m, a) = opt("pt-osc=--chunk-size 500 --sleep 0.05").unwrap();
        assert_eq!(m, Method::PtOsc);
        assert_eq!(a, ["--chunk-size", "500", "--sleep", "0.05"]);
        assert!(opt("pt-osc=--alter 'DROP TABLE x'").is_err());
        assert!(opt("pt-osc=--password=x").is_err());
        assert!(opt("pg-repack=--table=x").is_err());
        assert!(opt("pg-repack-indexes=-x").is_err());
        assert_eq!(opt("pg-repack=--jobs 2").unwrap().1, ["--jobs", "2"]);
        let e = opt("native=--x").unwrap_err().to_string();
        assert!(e.contains("only pt-osc, pg-repack"), "{e}");
        assert!(opt("external=--x").is_err());
        assert!(opt("--chunk-size 5").is_err());
        assert_eq!(
            split_words(r#"a 'b c' "d \"e\"" f\ g"#).unwrap(),
            ["a", "b c", "d \"e\"", "f g"]
        );
        assert!(split_words("'open").is_err());
        assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn versions() {
        assert_eq!(
            parse_version("pt-online-schema-change 3.2.1"),
            Some((3, 2, 1))
        );
        assert_eq!(parse_version("pg_repack 1.4.8"), Some((1, 4, 8)));
        assert_eq!(parse_version("pg_repack 1.5"), Some((1, 5, 0)));
        assert_eq!(parse_version("no version"), None);
    }

    #[test]
    fn external_alter_clause_where_the_tools_take_one() {
        let r = req(DdlKind::Rebuild, LockChoice::Online, 0);
        let my = registry::ddl_dialect("mysql", "10.11.6-MariaDB", Some("ROCKSDB")).unwrap();
        assert_eq!(
            my.external_alter_clause(&r, "ROCKSDB").as_deref(),
            Some("ENGINE=ROCKSDB")
        );
        assert_eq!(my.external_alter_clause(&r, "Bad;Engine"), None);
        let tidb = registry::ddl_dialect("mysql", "8.0.11-TiDB-v7.5.0", None).unwrap();
        assert!(tidb.external_alter_clause(&r, "InnoDB").is_some());
        for (kind, version) in [("postgres", "PostgreSQL 15.8"), ("sqlite", "3.45.1")] {
            let d = registry::ddl_dialect(kind, version, None).unwrap();
            assert_eq!(d.external_alter_clause(&r, "InnoDB"), None, "{kind}");
        }
    }

    #[test]
    fn a_users_command_gets_the_engines_client_variables() {
        let p = params();
        let r = req(DdlKind::AddIndex, LockChoice::Online, 1);
        let my = registry::tools("mysql").unwrap();
        let e = external_env(
            "mysql",
            my,
            &p,
            &r,
            Some("ADD INDEX c_idx (c)"),
            &["ALTER ...".into()],
        );
        let get = |e: &[(String, String)], k: &str| {
            e.iter().find(|(n, _)| n == k).map(|(_, v)| v.to_string())
        };
        assert_eq!(get(&e, "IXBENCH_KIND").as_deref(), Some("mysql"));
        assert_eq!(get(&e, "IXBENCH_TABLE").as_deref(), Some("sbtest1"));
        assert_eq!(get(&e, "IXBENCH_PASSWORD").as_deref(), Some("se\"cr\\et"));
        assert_eq!(get(&e, "MYSQL_PWD").as_deref(), Some("se\"cr\\et"));
        assert_eq!(get(&e, "MYSQL_TCP_PORT").as_deref(), Some("3307"));
        assert_eq!(
            get(&e, "IXBENCH_ALTER").as_deref(),
            Some("ADD INDEX c_idx (c)")
        );
        assert_eq!(get(&e, "PGPASSWORD"), None);
        let pg = registry::tools("postgres").unwrap();
        let e = external_env("postgres", pg, &p, &r, None, &[]);
        assert_eq!(get(&e, "PGPASSWORD").as_deref(), Some("se\"cr\\et"));
        assert_eq!(get(&e, "PGHOST").as_deref(), Some("127.0.0.1"));
        assert_eq!(get(&e, "PGDATABASE").as_deref(), Some("ixbench"));
        assert_eq!(get(&e, "MYSQL_PWD"), None);
        assert_eq!(get(&e, "IXBENCH_ALTER"), None);
    }

    #[test]
    fn plans_of_methods() {
        let r = req(DdlKind::Rebuild, LockChoice::Online, 0);
        let base = DdlPlan {
            statements: vec!["REINDEX TABLE CONCURRENTLY sbtest1".into()],
            online: true,
            ..Default::default()
        };
        let pg = registry::tools("postgres");
        let p = method_plan(Method::Cluster, pg, &base, &r, "");
        assert_eq!(p.statements, ["CLUSTER sbtest1 USING sbtest1_pkey"]);
        assert!(!p.online);
        let p = method_plan(Method::PgRepack, pg, &base, &r, "pg_repack --table sbtest1");
        assert_eq!(p.statements, ["pg_repack --table sbtest1"]);
        assert_eq!(method_plan(Method::Native, pg, &base, &r, "x"), base);
        let p = method_plan(Method::External, None, &base, &r, "sh x");
        assert_eq!(p.statements, ["sh x"]);
        assert!(p.online && p.lock.starts_with("whatever the command takes"));
    }

    #[test]
    fn objects_made_by_a_tool() {
        let before = ToolObjects {
            triggers: vec!["user_trigger".into()],
            ..Default::default()
        };
        let now = ToolObjects {
            triggers: vec!["user_trigger".into(), "pt_osc_x_ins".into()],
            tables: vec!["_t_new".into()],
            ..Default::default()
        };
        let new = now.minus(&before);
        assert_eq!(new.triggers, ["pt_osc_x_ins"]);
        assert_eq!(new.describe(), "triggers pt_osc_x_ins; tables _t_new");
        assert!(!new.is_empty() && ToolObjects::default().is_empty());
        assert_eq!(
            without_timestamp("2026-11-26T15:50:32 Swapping tables..."),
            "Swapping tables..."
        );
        assert_eq!(without_timestamp(" plain line "), "plain line");
    }
}
