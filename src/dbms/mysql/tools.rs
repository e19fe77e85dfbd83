//! pt-online-schema-change (Percona's), MySQL's and MariaDB's schema-change tool for `ixbench
//! ddl --method pt-osc`: a shadow table filled in chunks while triggers copy the writes, then
//! `RENAME TABLE`. Here is what ixbench knows of it ([`MysqlTools`], handed out by the kind's
//! registry row): its arguments (the password in an option file, never on the command line),
//! its output read into phases (`copying rows 45%`, `swapping tables`), its triggers and
//! shadow tables found and dropped again after a failure, the sessions waiting behind it, the
//! error MariaDB gives the load's prepared statements while it creates its triggers, and a
//! user's command's MySQL client variables.

use anyhow::Result;

use super::MysqlError;
use crate::dbms::ddl::tools::{
    first_column, without_timestamp, EngineTools, Method, MethodForm, Tool, ToolArgs, ToolCall,
    ToolLine, ToolObjects,
};
use crate::dbms::ddl::{check_ident, text_literal, DdlKind, Waits};
use crate::dbms::{ClientParams, Conn};

/// pt-online-schema-change: 3.x prints `Copying ... x% ... remain` progress lines and names its
/// triggers `pt_osc_<db>_<table>_{ins,upd,del}`.
pub const PT_OSC: Tool = Tool {
    program: "pt-online-schema-change",
    package: "percona-toolkit",
    min_version: (3, 0, 0),
    refused: &[
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
};

/// MySQL's and MariaDB's methods (TiDB, which speaks their protocol, runs none of them).
pub struct MysqlTools;

/// The MySQL kind's methods (its registry row's).
pub static TOOLS: MysqlTools = MysqlTools;

impl EngineTools for MysqlTools {
    fn check(&self, m: Method, dialect: &str, _ddl: DdlKind) -> Option<Result<()>> {
        (m == Method::PtOsc && dialect != "TiDB").then_some(Ok(()))
    }

    fn tool(&self, m: Method) -> Option<Tool> {
        (m == Method::PtOsc).then_some(PT_OSC)
    }

    fn form(&self, m: Method, _table: &str) -> Option<MethodForm> {
        (m == Method::PtOsc).then_some(MethodForm {
            statement: None,
            online: true,
            lock: "pt-online-schema-change: a shadow table filled in chunks while triggers copy the writes; an exclusive metadata lock for the RENAME TABLE swap",
        })
    }

    fn launch(&self, m: Method, c: &ToolCall) -> Result<ToolArgs> {
        if m != Method::PtOsc {
            anyhow::bail!("--method {} runs no program here", m.name());
        }
        let alter = super::ddl::alter_clause(c.req, c.engine)?;
        Ok(ToolArgs {
            args: pt_osc_args(c.params, &c.req.table, &alter, c.secret_path, c.extra),
            env: Vec::new(),
            secret: Some(mysql_defaults_file(c.params)),
        })
    }

    fn client_env(&self, params: &ClientParams) -> Vec<(String, String)> {
        let mut e: Vec<(String, String)> = vec![
            ("MYSQL_HOST".into(), params.host.clone()),
            ("MYSQL_TCP_PORT".into(), params.port.to_string()),
        ];
        if let Some(s) = &params.socket {
            e.push(("MYSQL_UNIX_PORT".into(), s.clone()));
        }
        if let Some(p) = &params.password {
            e.push(("MYSQL_PWD".into(), p.clone()));
        }
        e
    }

    fn read_line(&self, m: Method, line: &str) -> ToolLine {
        ToolLine {
            phase: (m == Method::PtOsc).then(|| pt_osc_phase(line)).flatten(),
            refusal: None,
        }
    }

    fn is_progress_line(&self, line: &str) -> bool {
        is_progress_line(line)
    }

    fn objects(
        &self,
        m: Method,
        conn: &mut dyn Conn,
        db: &str,
        table: &str,
    ) -> Result<ToolObjects> {
        match m {
            Method::PtOsc => pt_osc_objects(conn, db, table),
            _ => Ok(ToolObjects::default()),
        }
    }

    fn drop_statements(&self, _table: &str, objs: &ToolObjects) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for t in &objs.triggers {
            out.push((
                format!("trigger {t}"),
                format!("DROP TRIGGER IF EXISTS `{t}`"),
            ));
        }
        for t in &objs.tables {
            out.push((format!("table {t}"), format!("DROP TABLE IF EXISTS `{t}`")));
        }
        out
    }

    fn waits(&self, conn: &mut dyn Conn) -> Result<Waits> {
        table_waits(conn)
    }

    fn load_error_is_transient(&self, m: Method, table: &str, e: &anyhow::Error) -> bool {
        // A user's command may be pt-online-schema-change too (its own flags, another
        // version), or a tool that copies the same way under the same shadow table's name.
        matches!(m, Method::PtOsc | Method::External) && is_pt_osc_trigger_error(table, e)
    }
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

/// A pt-online-schema-change progress line (`Copying ...: 45% ...`), not worth keeping as the
/// tool's last message.
pub fn is_progress_line(line: &str) -> bool {
    without_timestamp(line).starts_with("Copying `")
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
        .filter_map(|c| c.downcast_ref::<MysqlError>())
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

/// pt-online-schema-change's triggers and shadow tables of `table` in the current database.
pub fn pt_osc_objects(conn: &mut dyn Conn, db: &str, table: &str) -> Result<ToolObjects> {
    check_ident(table)?;
    let names = pt_osc_trigger_names(db, table);
    let list: Vec<String> = names.iter().map(|n| text_literal(n)).collect();
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

/// Who waits for a lock because of pt-online-schema-change (its sessions are not ixbench's, so
/// they are found by what they run): `ddl_waits` is its own statement waiting (RENAME TABLE,
/// CREATE/DROP TRIGGER waiting for a metadata lock), `blocked_sessions` the other sessions
/// waiting for a lock (a metadata lock, or a row lock in InnoDB).
pub fn table_waits(conn: &mut dyn Conn) -> Result<Waits> {
    let num = |v: Option<&Option<String>>| -> Option<f64> { v.cloned().flatten()?.parse().ok() };
    let mut w = Waits::default();
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
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::dbms::ddl::tools::tests::params;

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
        let req = crate::dbms::ddl::DdlRequest {
            kind: DdlKind::Rebuild,
            lock: crate::dbms::ddl::LockChoice::Online,
            table: "sbtest1".into(),
            pk: "id".into(),
            indexes: Vec::new(),
            column: String::new(),
        };
        let t = TOOLS
            .launch(
                Method::PtOsc,
                &ToolCall {
                    params: &p,
                    req: &req,
                    engine: "ROCKSDB",
                    secret_path: "/r/x.cnf",
                    extra: &[],
                    major: 0,
                },
            )
            .unwrap();
        assert_eq!(t.args[0..2], ["--alter", "ENGINE=ROCKSDB"]);
        assert!(t.args.last().unwrap().starts_with("F=/r/x.cnf,"));
        assert_eq!(t.secret, Some(f));
        assert!(t.env.is_empty());
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
        // Only pt-osc's own run is read into phases (a user's command's lines are its own).
        let said = TOOLS.read_line(Method::External, "Swapping tables...");
        assert_eq!(said, ToolLine::default());
        let said = TOOLS.read_line(Method::PtOsc, "Swapping tables...");
        assert_eq!(said.phase.as_deref(), Some("swapping tables"));
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
            anyhow::Error::new(MysqlError {
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
        assert!(TOOLS.load_error_is_transient(Method::PtOsc, "sbtest1", &my(1146, shadow)));
        assert!(TOOLS.load_error_is_transient(Method::External, "sbtest1", &my(1146, shadow)));
        assert!(!TOOLS.load_error_is_transient(Method::Native, "sbtest1", &my(1146, shadow)));
        let new = ToolObjects {
            triggers: vec!["pt_osc_x_ins".into()],
            tables: vec!["_t_new".into()],
            ..Default::default()
        };
        let d = TOOLS.drop_statements("t", &new);
        assert_eq!(d[0].1, "DROP TRIGGER IF EXISTS `pt_osc_x_ins`");
        assert_eq!(d[1].1, "DROP TABLE IF EXISTS `_t_new`");
    }
}
