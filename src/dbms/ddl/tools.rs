//! Schema-change methods besides the engine's own statement, for `ixbench ddl --method`: the
//! tools DBAs run on a hot table (Percona's `pt-online-schema-change` on MySQL/MariaDB: a
//! shadow table filled in chunks while triggers copy the writes, then `RENAME TABLE`;
//! `pg_repack` on PostgreSQL: a new heap filled while a trigger logs the writes, the log
//! replayed, then the files swapped under a short ACCESS EXCLUSIVE lock), any command a user
//! gives (gh-ost, pg_squeeze), and PostgreSQL's other rebuild statements (`VACUUM FULL`,
//! `CLUSTER`, `REINDEX TABLE CONCURRENTLY`).
//!
//! What is here is what the DBMS layer knows: the method names and where each applies, the
//! tools' arguments and environment (never a password on a command line), their output read
//! into phases (`copying rows 45%`, `swapping tables`), the objects each tool creates on the
//! server (its triggers, shadow and log tables) found and dropped again after a failure, the
//! sessions waiting behind a tool, and the bytes the server has written so far. Running the
//! tools is the step layer's (`crate::step::schema_tools`).

use anyhow::{bail, Result};

use super::{check_ident, DdlKind, DdlPlan, DdlRequest, IndexSpec, Waits};
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

/// A program a method runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tool {
    /// The program, looked up in PATH.
    pub program: &'static str,
    /// The package that installs it (for the message when it is missing).
    pub package: &'static str,
    /// The oldest version ixbench drives (its progress lines and object names are parsed).
    pub min_version: (u32, u32, u32),
}

/// pt-online-schema-change: 3.x prints `Copying ... x% ... remain` progress lines and names its
/// triggers `pt_osc_<db>_<table>_{ins,upd,del}`.
pub const PT_OSC: Tool = Tool {
    program: "pt-online-schema-change",
    package: "percona-toolkit",
    min_version: (3, 0, 0),
};

/// pg_repack: 1.4 has `--only-indexes`, `--echo` and the `repack_trigger` name.
pub const PG_REPACK: Tool = Tool {
    program: "pg_repack",
    package: "postgresql-NN-repack",
    min_version: (1, 4, 0),
};

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

    /// The program it runs, when it runs one (`external` runs the user's command).
    pub fn tool(self) -> Option<Tool> {
        match self {
            Method::PtOsc => Some(PT_OSC),
            Method::PgRepack | Method::PgRepackIndexes => Some(PG_REPACK),
            _ => None,
        }
    }

    /// True when the change runs as a separate program rather than as SQL on ixbench's DDL
    /// session.
    pub fn is_process(self) -> bool {
        matches!(
            self,
            Method::PtOsc | Method::PgRepack | Method::PgRepackIndexes | Method::External
        )
    }

    /// Whether the method can make the change `ddl` on a DBMS of `kind` whose DDL dialect is
    /// named `dialect`; the error says why not, in one line.
    pub fn check(self, kind: &str, dialect: &str, ddl: DdlKind) -> Result<()> {
        let pg = kind == "postgres" && dialect == "PostgreSQL";
        let my = kind == "mysql" && dialect != "TiDB";
        match self {
            Method::Native => {}
            Method::VacuumFull | Method::Cluster | Method::ReindexConcurrently => {
                if !pg {
                    bail!(
                        "--method {} is PostgreSQL's statement; this target is {dialect}",
                        self.name()
                    );
                }
                if ddl != DdlKind::Rebuild {
                    bail!(
                        "--method {} rebuilds a table: use it with --ddl rebuild",
                        self.name()
                    );
                }
            }
            Method::PtOsc => {
                if !my {
                    bail!("pt-online-schema-change works on MySQL and MariaDB; this target is {dialect}");
                }
            }
            Method::PgRepack | Method::PgRepackIndexes => {
                if !pg {
                    bail!("pg_repack works on PostgreSQL; this target is {dialect}");
                }
                if ddl != DdlKind::Rebuild {
                    bail!(
                        "pg_repack rebuilds a table (--method pg-repack) or its indexes (--method pg-repack-indexes); it cannot {}: use --ddl rebuild",
                        ddl.name().replace('-', " ")
                    );
                }
            }
            Method::External => {
                if kind != "postgres" && kind != "mysql" {
                    bail!("--method external needs a server another program can connect to; this target is {dialect}");
                }
            }
        }
        Ok(())
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
/// shell would: spaces, '...' and "..." quotes). Only the process methods take them.
pub fn parse_method_opt(s: &str) -> Result<(Method, Vec<String>)> {
    let Some((m, args)) = s.split_once('=') else {
        bail!(
            "--method-opt {s:?}: expected METHOD=ARGS, e.g. pt-osc='--chunk-size 500 --sleep 0.05'"
        );
    };
    let m = Method::parse(m)?;
    if !matches!(
        m,
        Method::PtOsc | Method::PgRepack | Method::PgRepackIndexes
    ) {
        bail!(
            "--method-opt {}: only pt-osc, pg-repack and pg-repack-indexes take extra arguments",
            m.name()
        );
    }
    let args = split_words(args)?;
    for a in &args {
        let flag = a.split('=').next().unwrap_or(a);
        let refused: &[&str] = match m {
            Method::PtOsc => &[
                "--alter",
                "--execute",
                "--dry-run",
                "--password",
                "--user",
                "--host",
                "--port",
                "--socket",
                "--defaults-file",
                "-p",
                "-u",
                "-h",
                "-P",
                "-S",
                "-F",
            ],
            _ => &[
                "--table",
                "-t",
                "--dbname",
                "-d",
                "--host",
                "-h",
                "--port",
                "-p",
                "--username",
                "-U",
                "--password",
                "-W",
                "--all",
                "-a",
                "--only-indexes",
                "-x",
            ],
        };
        if refused.contains(&flag) {
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

/// The change as an `ALTER TABLE` clause, for the MySQL tools (pt-online-schema-change's
/// `--alter`, gh-ost's): `ADD INDEX a (x), ADD INDEX b (y)`, `DROP INDEX a`, `ADD COLUMN c INT
/// NULL`, `ENGINE=<the table's engine>` (a rebuild).
pub fn alter_clause(req: &DdlRequest, engine: &str) -> Result<String> {
    super::check_request(req)?;
    let index = |i: &IndexSpec| {
        format!(
            "ADD {}INDEX {} ({})",
            if i.unique { "UNIQUE " } else { "" },
            i.name,
            i.columns.join(", ")
        )
    };
    Ok(match req.kind {
        DdlKind::AddIndex => req.indexes.iter().map(index).collect::<Vec<_>>().join(", "),
        DdlKind::DropIndex => req
            .indexes
            .iter()
            .map(|i| format!("DROP INDEX {}", i.name))
            .collect::<Vec<_>>()
            .join(", "),
        DdlKind::AddColumn => format!("ADD COLUMN {} INT NULL", req.column),
        DdlKind::Rebuild => format!("ENGINE={}", check_ident(engine)?),
    })
}

/// The statements and the lock of a method that runs as SQL on ixbench's DDL session, from the
/// dialect's plan `base` (its set-up and undo are kept). For the process methods: `base` with
/// its statements replaced by `what` (the command, for the record) and the lock in words.
pub fn method_plan(method: Method, base: &DdlPlan, req: &DdlRequest, what: &str) -> DdlPlan {
    let mut p = base.clone();
    let t = &req.table;
    let set = |p: &mut DdlPlan, stmt: String, online: bool, lock: &str| {
        p.statements = vec![stmt];
        p.online = online;
        p.lock = lock.into();
        p.notes.clear();
    };
    match method {
        Method::Native => {}
        Method::VacuumFull => set(
            &mut p,
            format!("VACUUM FULL {t}"),
            false,
            "ACCESS EXCLUSIVE (VACUUM FULL): reads and writes wait for the whole rebuild",
        ),
        Method::Cluster => set(
            &mut p,
            format!("CLUSTER {t} USING {t}_pkey"),
            false,
            "ACCESS EXCLUSIVE (CLUSTER): reads and writes wait for the whole rebuild, in primary-key order",
        ),
        Method::ReindexConcurrently => set(
            &mut p,
            format!("REINDEX TABLE CONCURRENTLY {t}"),
            true,
            "SHARE UPDATE EXCLUSIVE (REINDEX TABLE CONCURRENTLY): reads and writes go on; the indexes are rebuilt, not the table",
        ),
        Method::PtOsc => set(
            &mut p,
            what.into(),
            true,
            "pt-online-schema-change: a shadow table filled in chunks while triggers copy the writes; an exclusive metadata lock for the RENAME TABLE swap",
        ),
        Method::PgRepack => set(
            &mut p,
            what.into(),
            true,
            "pg_repack: a new heap filled while a trigger logs the writes, the log replayed; ACCESS EXCLUSIVE for a moment at the start and for the swap",
        ),
        Method::PgRepackIndexes => set(
            &mut p,
            what.into(),
            true,
            "pg_repack --only-indexes: each index built again CONCURRENTLY; ACCESS EXCLUSIVE for a moment to swap them",
        ),
        Method::External => set(
            &mut p,
            what.into(),
            true,
            "whatever the command takes (ixbench runs it and times it)",
        ),
    }
    p
}

/// pt-online-schema-change's arguments: the change, `--execute`, progress every second, no
/// replica discovery and no version check (no network), then the user's `extra` (which win:
/// the tool takes the last of a repeated option), then the DSN. The password is in
/// `defaults_file` (`F=`), never here.
pub fn pt_osc_args(
    params: &ClientParams,
    table: &str,
    alter: &str,
    defaults_file: &str,
    extra: &[String],
) -> Vec<String> {
    let mut a: Vec<String> = [
        "--alter",
        alter,
        "--execute",
        "--progress",
        "time,1",
        "--recursion-method",
        "none",
        "--no-version-check",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().cloned());
    let mut dsn = vec![format!("F={defaults_file}")];
    match &params.socket {
        Some(s) => dsn.push(format!("S={s}")),
        None => {
            dsn.push(format!("h={}", params.host));
            dsn.push(format!("P={}", params.port));
        }
    }
    dsn.push(format!("D={}", params.database));
    dsn.push(format!("t={table}"));
    a.push(dsn.join(","));
    a
}

/// The `[client]` option file pt-online-schema-change reads (`F=`): user and password, quoted
/// as MySQL option files quote.
pub fn mysql_defaults_file(params: &ClientParams) -> String {
    let q = |v: &str| format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""));
    let mut s = format!("[client]\nuser={}\n", q(&params.user));
    if let Some(p) = &params.password {
        s.push_str(&format!("password={}\n", q(p)));
    }
    s
}

/// pg_repack's arguments: the table (or `--only-indexes`), `--echo` (its SQL, read into
/// phases), the connection without the password (PGPASSWORD), then the user's `extra`.
pub fn pg_repack_args(
    params: &ClientParams,
    table: &str,
    only_indexes: bool,
    extra: &[String],
) -> Vec<String> {
    let mut a = vec![
        "--host".to_string(),
        params.socket.clone().unwrap_or_else(|| params.host.clone()),
        "--port".into(),
        params.port.to_string(),
        "--username".into(),
        params.user.clone(),
        "--dbname".into(),
        params.database.clone(),
        "--table".into(),
        table.into(),
        "--echo".into(),
    ];
    if only_indexes {
        a.push("--only-indexes".into());
    }
    a.extend(extra.iter().cloned());
    a
}

/// The environment of a user's `--ddl-command`: `IXBENCH_KIND` (postgres, mysql), `IXBENCH_HOST`,
/// `IXBENCH_PORT`, `IXBENCH_SOCKET` (when used), `IXBENCH_USER`, `IXBENCH_PASSWORD`,
/// `IXBENCH_DB`, `IXBENCH_TABLE`, `IXBENCH_DDL` (add-index, ...), `IXBENCH_ALTER` (the change as
/// an ALTER TABLE clause, on MySQL), `IXBENCH_SQL` (the engine's own statements, `;`-separated),
/// and the standard client variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE;
/// MYSQL_HOST, MYSQL_TCP_PORT, MYSQL_PWD, MYSQL_UNIX_PORT) so psql or mariadb run as they are.
pub fn external_env(
    kind: &str,
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
    let pw = params.password.clone().unwrap_or_default();
    e.push(("IXBENCH_PASSWORD".into(), pw.clone()));
    match kind {
        "postgres" => {
            e.push((
                "PGHOST".into(),
                params.socket.clone().unwrap_or_else(|| params.host.clone()),
            ));
            e.push(("PGPORT".into(), params.port.to_string()));
            e.push(("PGUSER".into(), params.user.clone()));
            e.push(("PGDATABASE".into(), params.database.clone()));
            if params.password.is_some() {
                e.push(("PGPASSWORD".into(), pw));
            }
        }
        _ => {
            e.push(("MYSQL_HOST".into(), params.host.clone()));
            e.push(("MYSQL_TCP_PORT".into(), params.port.to_string()));
            if let Some(s) = &params.socket {
                e.push(("MYSQL_UNIX_PORT".into(), s.clone()));
            }
            if params.password.is_some() {
                e.push(("MYSQL_PWD".into(), pw));
            }
        }
    }
    e
}

/// What one line of a tool's output says about its phase, if anything.
pub fn phase_of(method: Method, line: &str) -> Option<String> {
    match method {
        Method::PtOsc => pt_osc_phase(line),
        Method::PgRepack | Method::PgRepackIndexes => pg_repack_phase(line),
        _ => None,
    }
}

/// A line without pt-online-schema-change's leading `2026-11-26T15:50:29 ` time stamp.
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

/// pt-online-schema-change's lines: `Creating new table...`, `Altering new table...`,
/// `Creating triggers...`, `Copying approximately N rows...`, the progress lines `Copying
/// `db`.`t`:  45% 00:03 remain`, `Analyzing new table...`, `Swapping tables...`, `Dropping old
/// table...`, `Dropping triggers...`, `Successfully altered ...`.
pub fn pt_osc_phase(line: &str) -> Option<String> {
    let l = without_timestamp(line);
    if let Some(rest) = l.strip_prefix("Copying `") {
        // Copying `db`.`t`:  45% 00:03 remain
        let after = rest.split_once(':').map(|(_, a)| a.trim())?;
        let mut words = after.split_whitespace();
        let pct = words.next().filter(|w| w.ends_with('%'))?;
        let eta = words.next();
        let remain = words.next() == Some("remain");
        return Some(match eta.filter(|_| remain) {
            Some(t) => format!("copying rows {pct} ({t} remain)"),
            None => format!("copying rows {pct}"),
        });
    }
    let table = [
        ("Creating new table", "creating the new table"),
        ("Altering new table", "altering the new table"),
        ("Creating triggers", "creating triggers"),
        ("Copying approximately", "copying rows"),
        ("Copied rows OK", "rows copied"),
        ("Analyzing new table", "analyzing the new table"),
        ("Swapping tables", "swapping tables"),
        ("Swapped original and new tables OK", "tables swapped"),
        ("Dropping old table", "dropping the old table"),
        ("Dropping triggers", "dropping triggers"),
        ("Dropping new table", "dropping the new table"),
        ("Successfully altered", "done"),
    ];
    table
        .iter()
        .find(|(p, _)| l.starts_with(p))
        .map(|(_, ph)| ph.to_string())
}

/// pg_repack's `--echo` lines (`LOG: (query) ...`) and its `INFO:` lines, read into phases:
/// the log table and trigger created, rows copied into the new heap, indexes built, the log
/// replayed, the swap, the old heap dropped, ANALYZE; with `--only-indexes`, each index built
/// CONCURRENTLY, the swap, the old indexes dropped.
pub fn pg_repack_phase(line: &str) -> Option<String> {
    let l = line.trim();
    if let Some(info) = l.strip_prefix("INFO: ") {
        if let Some(rest) = info.strip_prefix("repacking index ") {
            return Some(format!("building index {}", rest.trim_matches('"')));
        }
        return None;
    }
    let q = l.strip_prefix("LOG: (query) ")?;
    let has = |s: &str| q.contains(s);
    Some(
        if has("CREATE TRIGGER repack_trigger") || has("CREATE TRIGGER z_repack_trigger") {
            "creating the log table and trigger".into()
        } else if q.starts_with("INSERT INTO repack.table_") {
            "copying rows into the new table".into()
        } else if (q.starts_with("CREATE INDEX") || q.starts_with("CREATE UNIQUE INDEX"))
            && has("ON repack.table_")
        {
            let name = q.split_whitespace().nth(if has("UNIQUE") { 3 } else { 2 });
            format!("building index {}", name.unwrap_or("?"))
        } else if has("repack.repack_apply") {
            "replaying the log".into()
        } else if has("repack.repack_swap") || has("repack.repack_index_swap") {
            "swapping".into()
        } else if has("repack.repack_drop") {
            "dropping the old table".into()
        } else if q.starts_with("DROP INDEX CONCURRENTLY") {
            "dropping the old indexes".into()
        } else if q.starts_with("ANALYZE") {
            "analyzing".into()
        } else {
            return None;
        },
    )
}

/// A pt-online-schema-change progress line (`Copying ...: 45% ...`), not worth keeping as the
/// tool's last message.
pub fn is_progress_line(line: &str) -> bool {
    without_timestamp(line).starts_with("Copying `") || line.starts_with("LOG: ")
}

/// A line in which pg_repack declines the table while exiting 0 (`WARNING: relation ... must
/// have a primary key or not-null unique keys`, `WARNING: the table ... has no primary key`).
pub fn pg_repack_refusal(line: &str) -> Option<String> {
    let l = line.trim();
    let w = l.strip_prefix("WARNING: ")?;
    (w.contains("primary key") || w.contains("not-null unique") || w.contains("skipping"))
        .then(|| w.to_string())
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

/// pt-online-schema-change's trigger names for `db`.`table`: `pt_osc_<db>_<table>` (non-word
/// characters as `_`, cut at 60 characters) + `_ins`, `_upd`, `_del`.
pub fn pt_osc_trigger_names(db: &str, table: &str) -> Vec<String> {
    let mut prefix: String = format!("pt_osc_{db}_{table}")
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if prefix.chars().count() > 60 {
        prefix = prefix.chars().take(60).collect();
    }
    ["ins", "upd", "del"]
        .iter()
        .map(|s| format!("{prefix}_{s}"))
        .collect()
}

/// Whether `name` is one of pt-online-schema-change's shadow tables of `table`: `_<table>_new`,
/// `_<table>_old`, with more leading `_` when those names were taken.
pub fn is_pt_osc_table(name: &str, table: &str) -> bool {
    let rest = name.trim_start_matches('_');
    name.starts_with('_') && (rest == format!("{table}_new") || rest == format!("{table}_old"))
}

/// MySQL's and MariaDB's "table doesn't exist".
const NO_SUCH_TABLE: u16 = 1146;

/// Whether `e`, the error of a load's transaction, is "table doesn't exist" (1146) for
/// pt-online-schema-change's shadow table of `table`, the table its triggers on `table` write
/// to. MariaDB (10.11 at least) gives it to a server-side prepared statement that writes
/// `table` while another session creates a trigger on it that writes a table the statement
/// did not touch before, though that table exists (MDEV-26048); a statement sent as text never
/// gets it. pt-online-schema-change creates its three triggers just before its copy, so a load
/// with prepared statements may get it then; the transaction can run again at once (mostly it
/// passes then; the server may also keep giving it for a while, to new sessions too, and the
/// retries run out).
pub fn is_pt_osc_trigger_error(table: &str, e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<crate::dbms::mysql::MysqlError>())
        .any(|m| {
            m.code == Some(NO_SUCH_TABLE)
                && missing_table(&m.message).is_some_and(|t| is_pt_osc_table(t, table))
        })
}

/// The table a "Table 'db.name' doesn't exist" message names, without its database.
fn missing_table(message: &str) -> Option<&str> {
    let (_, rest) = message.split_once("Table '")?;
    let (name, _) = rest.split_once("' doesn't exist")?;
    Some(name.rsplit_once('.').map_or(name, |(_, t)| t))
}

fn first_column(rows: Vec<Vec<Option<String>>>) -> Vec<String> {
    rows.into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect()
}

/// pt-online-schema-change's triggers and shadow tables of `table` in the current database.
pub fn pt_osc_objects(conn: &mut dyn Conn, db: &str, table: &str) -> Result<ToolObjects> {
    check_ident(table)?;
    let names = pt_osc_trigger_names(db, table);
    let list: Vec<String> = names.iter().map(|n| super::text_literal(n)).collect();
    let triggers = first_column(conn.query_rows(&format!(
        "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS \
         WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME IN ({}) ORDER BY 1",
        list.join(", ")
    ))?);
    let tables = first_column(conn.query_rows(&format!(
        "SELECT TABLE_NAME FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '%{table}%' ORDER BY 1"
    ))?)
    .into_iter()
    .filter(|t| is_pt_osc_table(t, table))
    .collect();
    Ok(ToolObjects {
        triggers,
        tables,
        ..Default::default()
    })
}

/// pg_repack's objects for `table` (in the current schema): its trigger on the table, the log
/// and new tables and the key type in schema `repack` named after the table's OID, and
/// `index_<oid>` indexes on the table.
pub fn pg_repack_objects(conn: &mut dyn Conn, table: &str) -> Result<ToolObjects> {
    check_ident(table)?;
    let Some(oid) = conn.query_i64(&format!(
        "SELECT c.oid::int8 FROM pg_class c WHERE c.oid = to_regclass({})",
        super::text_literal(table)
    ))?
    else {
        return Ok(ToolObjects::default());
    };
    let triggers = first_column(conn.query_rows(&format!(
        "SELECT tgname FROM pg_trigger WHERE tgrelid = {oid} \
         AND tgname IN ('repack_trigger', 'z_repack_trigger') ORDER BY 1"
    ))?);
    let tables = first_column(conn.query_rows(&format!(
        "SELECT 'repack.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = 'repack' AND c.relname IN ('log_{oid}', 'table_{oid}') ORDER BY 1"
    ))?);
    let types = first_column(conn.query_rows(&format!(
        "SELECT 'repack.' || t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace \
         WHERE n.nspname = 'repack' AND t.typname = 'pk_{oid}'"
    ))?);
    let indexes = first_column(conn.query_rows(&format!(
        "SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid \
         WHERE x.indrelid = {oid} AND i.relname ~ '^index_[0-9]+$' ORDER BY 1"
    ))?);
    Ok(ToolObjects {
        triggers,
        tables,
        types,
        indexes,
    })
}

/// The objects of a method's tool on `table` now (empty for a method whose objects ixbench
/// does not know: native statements, a user's command).
pub fn tool_objects(
    method: Method,
    conn: &mut dyn Conn,
    db: &str,
    table: &str,
) -> Result<ToolObjects> {
    match method {
        Method::PtOsc => pt_osc_objects(conn, db, table),
        Method::PgRepack | Method::PgRepackIndexes => pg_repack_objects(conn, table),
        _ => Ok(ToolObjects::default()),
    }
}

/// The statements that drop `objs` (triggers first: they write into the tables), each with
/// what it drops.
pub fn drop_statements(kind: &str, table: &str, objs: &ToolObjects) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if kind == "postgres" {
        for t in &objs.triggers {
            out.push((
                format!("trigger {t} on {table}"),
                format!("DROP TRIGGER IF EXISTS {t} ON {table}"),
            ));
        }
        for t in &objs.tables {
            out.push((format!("table {t}"), format!("DROP TABLE IF EXISTS {t}")));
        }
        for t in &objs.types {
            out.push((format!("type {t}"), format!("DROP TYPE IF EXISTS {t}")));
        }
        for i in &objs.indexes {
            out.push((
                format!("index {i}"),
                format!("DROP INDEX CONCURRENTLY IF EXISTS {i}"),
            ));
        }
    } else {
        for t in &objs.triggers {
            out.push((
                format!("trigger {t}"),
                format!("DROP TRIGGER IF EXISTS `{t}`"),
            ));
        }
        for t in &objs.tables {
            out.push((format!("table {t}"), format!("DROP TABLE IF EXISTS `{t}`")));
        }
    }
    out
}

/// The statement that bounds the lock waits of ixbench's clean-up session to `secs`.
pub fn cleanup_lock_timeout(kind: &str, secs: u32) -> String {
    if kind == "postgres" {
        format!("SET lock_timeout = '{secs}s'")
    } else {
        format!("SET SESSION lock_wait_timeout = {secs}")
    }
}

/// Who waits for a lock because of a change made by another program (a tool's sessions are
/// not ixbench's, so they are found by what they run): `ddl_waits` is a tool's own statement
/// waiting (MySQL: RENAME TABLE, CREATE/DROP TRIGGER waiting for a metadata lock; PostgreSQL:
/// a pg_repack session waiting for a lock), `blocked_sessions` the other sessions waiting for
/// a lock (MySQL: a metadata lock, or a row lock in InnoDB).
pub fn table_waits(kind: &str, conn: &mut dyn Conn) -> Result<Waits> {
    let num = |v: Option<&Option<String>>| -> Option<f64> { v.cloned().flatten()?.parse().ok() };
    let mut w = Waits::default();
    if kind == "postgres" {
        let rows = conn.query_rows(
            "SELECT l.locktype || ' ' || l.mode, \
             extract(epoch FROM clock_timestamp() - l.waitstart)::float8 \
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
             WHERE NOT l.granted AND a.application_name = 'pg_repack' LIMIT 1",
        )?;
        if let Some(r) = rows.first() {
            let what = r.first().cloned().flatten().unwrap_or_default();
            w.ddl_waits = Some((format!("{what} lock"), num(r.get(1))));
        }
        let rows = conn.query_rows(
            "SELECT count(DISTINCT l.pid), \
             max(extract(epoch FROM clock_timestamp() - l.waitstart))::float8 \
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
             WHERE NOT l.granted AND a.application_name <> 'pg_repack' \
             AND a.datname = current_database() AND a.pid <> pg_backend_pid()",
        )?;
        if let Some(r) = rows.first() {
            w.blocked_sessions = num(r.first()).unwrap_or(0.0) as u32;
            w.blocked_max_secs = num(r.get(1));
        }
    } else {
        let rows = conn.query_rows(
            "SELECT STATE, TIME, LEFT(INFO, 20) FROM information_schema.PROCESSLIST \
             WHERE ID <> CONNECTION_ID() AND STATE LIKE 'Waiting for%' \
             AND (INFO LIKE 'RENAME TABLE%' OR INFO LIKE 'CREATE TRIGGER%' \
             OR INFO LIKE 'DROP TRIGGER%' OR INFO LIKE 'ALTER TABLE%' OR INFO LIKE 'DROP TABLE%') \
             ORDER BY TIME DESC LIMIT 1",
        )?;
        if let Some(r) = rows.first() {
            let state = r.first().cloned().flatten().unwrap_or_default();
            let info = r.get(2).cloned().flatten().unwrap_or_default();
            let stmt: Vec<&str> = info.split_whitespace().take(2).collect();
            w.ddl_waits = Some((format!("{state} ({})", stmt.join(" ")), num(r.get(1))));
        }
        let rows = conn.query_rows(
            "SELECT COUNT(*), MAX(TIME) FROM information_schema.PROCESSLIST \
             WHERE ID <> CONNECTION_ID() AND DB = DATABASE() AND STATE LIKE 'Waiting for%' \
             AND NOT (INFO LIKE 'RENAME TABLE%' OR INFO LIKE 'CREATE TRIGGER%' \
             OR INFO LIKE 'DROP TRIGGER%' OR INFO LIKE 'ALTER TABLE%' OR INFO LIKE 'DROP TABLE%')",
        )?;
        let mut n = 0u32;
        let mut longest: Option<f64> = None;
        if let Some(r) = rows.first() {
            n = num(r.first()).unwrap_or(0.0) as u32;
            longest = num(r.get(1));
        }
        // Row-lock waits (the tool's chunk holds locks the load's writes wait for).
        if let Ok(rows) = conn.query_rows(
            "SELECT COUNT(*), MAX(TIMESTAMPDIFF(SECOND, trx_wait_started, NOW())) \
             FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'",
        ) {
            if let Some(r) = rows.first() {
                n += num(r.first()).unwrap_or(0.0) as u32;
                longest = match (longest, num(r.get(1))) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
            }
        }
        w.blocked_sessions = n;
        w.blocked_max_secs = longest;
    }
    Ok(w)
}

/// The phase of pg_repack's index builds, from `pg_stat_progress_create_index` (its sessions'
/// application_name is `pg_repack`); `None` when none runs.
pub fn pg_repack_progress(conn: &mut dyn Conn) -> Result<Option<String>> {
    let rows = conn.query_rows(
        "SELECT p.phase, p.blocks_done, p.blocks_total, p.tuples_done, p.tuples_total \
         FROM pg_stat_progress_create_index p JOIN pg_stat_activity a ON a.pid = p.pid \
         WHERE a.application_name = 'pg_repack'",
    )?;
    let Some(r) = rows.first() else {
        return Ok(None);
    };
    let c = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
    let mut s = format!("index build: {}", c(0));
    for (label, i) in [("blocks", 1), ("tuples", 3)] {
        if c(i + 1).parse::<i64>().unwrap_or(0) > 0 {
            s.push_str(&format!(", {label} {}/{}", c(i), c(i + 1)));
        }
    }
    Ok(Some(s))
}

/// Whether `table` has what pg_repack needs to replay its log: a primary key, or a valid
/// unique index on NOT NULL columns without a predicate or expression.
pub fn pg_has_repack_key(conn: &mut dyn Conn, table: &str) -> Result<bool> {
    check_ident(table)?;
    Ok(conn
        .query_i64(&format!(
            "SELECT count(*) FROM pg_index x WHERE x.indrelid = to_regclass({}) AND x.indisvalid \
             AND (x.indisprimary OR (x.indisunique AND x.indpred IS NULL AND x.indexprs IS NULL \
             AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = x.indrelid \
             AND a.attnum = ANY(x.indkey) AND NOT a.attnotnull)))",
            super::text_literal(table)
        ))?
        .unwrap_or(0)
        > 0)
}

/// The pg_repack extension in the current database: `Ok(Some(version))` when installed,
/// `Ok(None)` when not; `available` says whether the server has its files (so `CREATE
/// EXTENSION pg_repack` would work).
pub fn pg_repack_extension(conn: &mut dyn Conn) -> Result<(Option<String>, bool)> {
    let installed = conn
        .query_rows("SELECT extversion FROM pg_extension WHERE extname = 'pg_repack'")?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next().flatten());
    let available = !conn
        .query_rows("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_repack'")?
        .is_empty();
    Ok((installed, available))
}

#[cfg(test)]
mod tests {
    use super::super::tests::req;
    use super::*;
    use crate::dbms::ddl::LockChoice;

    fn params() -> ClientParams {
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
        assert!(Method::PtOsc
            .check("mysql", "MariaDB InnoDB", AddIndex)
            .is_ok());
        assert!(Method::PtOsc
            .check("postgres", "PostgreSQL", AddIndex)
            .is_err());
        assert!(Method::PtOsc.check("mysql", "TiDB", AddIndex).is_err());
        assert!(Method::PgRepack
            .check("postgres", "PostgreSQL", Rebuild)
            .is_ok());
        let e = Method::PgRepack
            .check("postgres", "PostgreSQL", AddIndex)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--ddl rebuild") && e.contains("add index"),
            "{e}"
        );
        assert!(Method::VacuumFull
            .check("mysql", "MariaDB InnoDB", Rebuild)
            .is_err());
        assert!(Method::Cluster
            .check("postgres", "CockroachDB", Rebuild)
            .is_err());
        assert!(Method::External
            .check("sqlite", "SQLite", AddIndex)
            .is_err());
        assert!(Method::External
            .check("postgres", "PostgreSQL", AddIndex)
            .is_ok());
    }

    #[test]
    fn method_opts_and_words() {
        let (m, a) = parse_method_opt("pt-osc=--chunk-size 500 --sleep 0.05").unwrap();
        assert_eq!(m, Method::PtOsc);
        assert_eq!(a, ["--chunk-size", "500", "--sleep", "0.05"]);
        assert!(parse_method_opt("pt-osc=--alter 'DROP TABLE x'").is_err());
        assert!(parse_method_opt("pt-osc=--password=x").is_err());
        assert!(parse_method_opt("native=--x").is_err());
        assert!(parse_method_opt("--chunk-size 5").is_err());
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
        let my = crate::dbms::registry::ddl_dialect("mysql", "10.11.6-MariaDB", Some("ROCKSDB"))
            .unwrap();
        assert_eq!(
            my.external_alter_clause(&r, "ROCKSDB").as_deref(),
            Some("ENGINE=ROCKSDB")
        );
        assert_eq!(my.external_alter_clause(&r, "Bad;Engine"), None);
        let tidb = crate::dbms::registry::ddl_dialect("mysql", "8.0.11-TiDB-v7.5.0", None).unwrap();
        assert!(tidb.external_alter_clause(&r, "InnoDB").is_some());
        for (kind, version) in [("postgres", "PostgreSQL 15.8"), ("sqlite", "3.45.1")] {
            let d = crate::dbms::registry::ddl_dialect(kind, version, None).unwrap();
            assert_eq!(d.external_alter_clause(&r, "InnoDB"), None, "{kind}");
        }
    }

    #[test]
    fn alter_clauses() {
        let r = req(DdlKind::AddIndex, LockChoice::Online, 2);
        assert_eq!(
            alter_clause(&r, "InnoDB").unwrap(),
            "ADD INDEX c_idx (c), ADD INDEX pad_idx (pad)"
        );
        let r = req(DdlKind::DropIndex, LockChoice::Online, 1);
        assert_eq!(alter_clause(&r, "InnoDB").unwrap(), "DROP INDEX c_idx");
        let r = req(DdlKind::AddColumn, LockChoice::Online, 0);
        assert_eq!(
            alter_clause(&r, "InnoDB").unwrap(),
            "ADD COLUMN ixb_col INT NULL"
        );
        let r = req(DdlKind::Rebuild, LockChoice::Online, 0);
        assert_eq!(alter_clause(&r, "InnoDB").unwrap(), "ENGINE=InnoDB");
        assert!(alter_clause(&r, "Inno;DB").is_err());
    }

    #[test]
    fn tool_arguments_hold_no_password() {
        let p = params();
        let a = pt_osc_args(
            &p,
            "sbtest1",
            "ADD INDEX c_idx (c)",
            "/r/pt-osc.cnf",
            &["--chunk-size".into(), "500".into()],
        );
        assert_eq!(a[0..2], ["--alter", "ADD INDEX c_idx (c)"]);
        assert_eq!(
            a.last().unwrap(),
            "F=/r/pt-osc.cnf,h=127.0.0.1,P=3307,D=ixbench,t=sbtest1"
        );
        assert!(a.iter().all(|x| !x.contains("cr")), "{a:?}");
        let f = mysql_defaults_file(&p);
        assert_eq!(f, "[client]\nuser=\"root\"\npassword=\"se\\\"cr\\\\et\"\n");
        let a = pg_repack_args(&p, "sbtest1", true, &[]);
        assert!(a.contains(&"--only-indexes".to_string()) && a.contains(&"--echo".to_string()));
        assert!(a.iter().all(|x| !x.contains("cr")), "{a:?}");
        let r = req(DdlKind::AddIndex, LockChoice::Online, 1);
        let e = external_env(
            "mysql",
            &p,
            &r,
            Some("ADD INDEX c_idx (c)"),
            &["ALTER ...".into()],
        );
        let get = |k: &str| e.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("IXBENCH_TABLE"), Some("sbtest1"));
        assert_eq!(get("IXBENCH_PASSWORD"), Some("se\"cr\\et"));
        assert_eq!(get("MYSQL_PWD"), Some("se\"cr\\et"));
        assert_eq!(get("IXBENCH_ALTER"), Some("ADD INDEX c_idx (c)"));
        assert_eq!(get("PGPASSWORD"), None);
    }

    #[test]
    fn pt_osc_lines() {
        assert_eq!(
            pt_osc_phase("Copying `ixb`.`sbtest1`:  22% 00:03 remain").unwrap(),
            "copying rows 22% (00:03 remain)"
        );
        assert_eq!(
            pt_osc_phase("2026-11-26T15:50:32 Swapping tables...").unwrap(),
            "swapping tables"
        );
        assert_eq!(
            pt_osc_phase("2026-11-26T15:50:29 Copying approximately 200001 rows...").unwrap(),
            "copying rows"
        );
        assert_eq!(
            pt_osc_phase("Successfully altered `ixb`.`sbtest1`.").unwrap(),
            "done"
        );
        assert_eq!(
            pt_osc_phase("Creating new table...").unwrap(),
            "creating the new table"
        );
        assert_eq!(pt_osc_phase("No slaves found."), None);
        assert!(is_progress_line("Copying `a`.`b`:  5% 00:10 remain"));
        assert!(!is_progress_line("`ixb`.`sbtest1` was not altered."));
    }

    #[test]
    fn pg_repack_lines() {
        let p = |s: &str| pg_repack_phase(s);
        assert_eq!(
            p("LOG: (query) INSERT INTO repack.table_16386 SELECT id,k,c,pad FROM ONLY public.sbtest1")
                .unwrap(),
            "copying rows into the new table"
        );
        assert_eq!(
            p("LOG: (query) CREATE UNIQUE INDEX index_16393 ON repack.table_16386 USING btree (id)")
                .unwrap(),
            "building index index_16393"
        );
        assert_eq!(
            p("LOG: (query) SELECT repack.repack_swap($1)").unwrap(),
            "swapping"
        );
        assert_eq!(
            p("INFO: repacking index \"public.k_1\"").unwrap(),
            "building index public.k_1"
        );
        assert_eq!(p("LOG: \t(param:0) = 16386"), None);
        assert_eq!(p("INFO: repacking table \"public.sbtest1\""), None);
        assert!(pg_repack_refusal(
            "WARNING: relation \"public.nopk\" must have a primary key or not-null unique keys"
        )
        .is_some());
        assert!(pg_repack_refusal("INFO: repacking table").is_none());
    }

    #[test]
    fn objects_and_names() {
        assert_eq!(
            pt_osc_trigger_names("ixbench", "sbtest1"),
            [
                "pt_osc_ixbench_sbtest1_ins",
                "pt_osc_ixbench_sbtest1_upd",
                "pt_osc_ixbench_sbtest1_del"
            ]
        );
        let long = pt_osc_trigger_names(&"d".repeat(40), &"t".repeat(40));
        assert_eq!(long[0].len(), 64);
        assert!(pt_osc_trigger_names("my-db", "t")[0].starts_with("pt_osc_my_db_t"));
        assert!(is_pt_osc_table("_sbtest1_new", "sbtest1"));
        assert!(is_pt_osc_table("__sbtest1_old", "sbtest1"));
        assert!(!is_pt_osc_table("sbtest1_new", "sbtest1"));
        assert!(!is_pt_osc_table("_sbtest10_new", "sbtest1"));
        // MariaDB's error for the shadow table a pt-osc trigger writes; not for another table,
        // nor another code.
        let my = |code: u16, message: &str| {
            anyhow::Error::new(crate::dbms::mysql::MysqlError {
                code: Some(code),
                message: message.into(),
            })
            .context("MySQL: UPDATE sbtest1 SET k = k + 1 WHERE id = ?")
        };
        let shadow = "ERROR 1146 (42S02): Table 'ixbench._sbtest1_new' doesn't exist";
        assert!(is_pt_osc_trigger_error("sbtest1", &my(1146, shadow)));
        assert!(!is_pt_osc_trigger_error("sbtest2", &my(1146, shadow)));
        assert!(!is_pt_osc_trigger_error("sbtest1", &my(1213, shadow)));
        assert!(!is_pt_osc_trigger_error(
            "sbtest1",
            &my(
                1146,
                "ERROR 1146 (42S02): Table 'ixbench.sbtest1' doesn't exist"
            )
        ));
        assert!(!is_pt_osc_trigger_error(
            "sbtest1",
            &anyhow::anyhow!("{shadow}")
        ));
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
        let d = drop_statements("mysql", "t", &new);
        assert_eq!(d[0].1, "DROP TRIGGER IF EXISTS `pt_osc_x_ins`");
        assert_eq!(d[1].1, "DROP TABLE IF EXISTS `_t_new`");
        let pg = ToolObjects {
            triggers: vec!["repack_trigger".into()],
            tables: vec!["repack.log_1".into()],
            types: vec!["repack.pk_1".into()],
            indexes: vec!["index_2".into()],
        };
        let d = drop_statements("postgres", "sbtest1", &pg);
        assert_eq!(d[0].1, "DROP TRIGGER IF EXISTS repack_trigger ON sbtest1");
        assert_eq!(d[2].1, "DROP TYPE IF EXISTS repack.pk_1");
        assert_eq!(d[3].1, "DROP INDEX CONCURRENTLY IF EXISTS index_2");
    }

    #[test]
    fn plans_of_methods() {
        let r = req(DdlKind::Rebuild, LockChoice::Online, 0);
        let base = DdlPlan {
            statements: vec!["REINDEX TABLE CONCURRENTLY sbtest1".into()],
            online: true,
            ..Default::default()
        };
        let p = method_plan(Method::Cluster, &base, &r, "");
        assert_eq!(p.statements, ["CLUSTER sbtest1 USING sbtest1_pkey"]);
        assert!(!p.online);
        let p = method_plan(Method::PgRepack, &base, &r, "pg_repack --table sbtest1");
        assert_eq!(p.statements, ["pg_repack --table sbtest1"]);
        assert_eq!(method_plan(Method::Native, &base, &r, "x"), base);
    }
}
