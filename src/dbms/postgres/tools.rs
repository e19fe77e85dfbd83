//! pg_repack, PostgreSQL's online table rebuild (`ixbench ddl --method pg-repack`, and
//! `pg-repack-indexes` for `--only-indexes`): a new heap filled while a trigger logs the writes,
//! the log replayed, then the files swapped under a short ACCESS EXCLUSIVE lock; and
//! PostgreSQL's other rebuild statements (`VACUUM FULL`, `CLUSTER`, `REINDEX TABLE
//! CONCURRENTLY`). Here is what ixbench knows of them ([`PgTools`], handed out by the kind's
//! registry row): which apply (a rebuild, on PostgreSQL itself), pg_repack's arguments (the
//! password in its environment), its `--echo` output read into phases, the extension it needs
//! in the database, the key it replays the writes by, its trigger, log table and type found
//! and dropped again after a failure, the sessions waiting behind it, the server's view of its
//! index builds, and a user's command's libpq variables.

use anyhow::{bail, Context, Result};

use crate::dbms::ddl::tools::{
    first_column, parse_version, EngineTools, Method, MethodForm, Tool, ToolArgs, ToolCall,
    ToolLine, ToolObjects,
};
use crate::dbms::ddl::{check_ident, text_literal, DdlKind, Waits};
use crate::dbms::{ClientParams, Conn};

/// pg_repack: 1.4 has `--only-indexes`, `--echo` and the `repack_trigger` name.
pub const PG_REPACK: Tool = Tool {
    program: "pg_repack",
    package: "postgresql-NN-repack",
    min_version: (1, 4, 0),
    refused: &[
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

/// PostgreSQL's methods (CockroachDB and YugabyteDB, which speak its protocol, run none).
pub struct PgTools;

/// The PostgreSQL kind's methods (its registry row's).
pub static TOOLS: PgTools = PgTools;

fn is_repack(m: Method) -> bool {
    matches!(m, Method::PgRepack | Method::PgRepackIndexes)
}

impl EngineTools for PgTools {
    fn check(&self, m: Method, dialect: &str, ddl: DdlKind) -> Option<Result<()>> {
        let statement = matches!(
            m,
            Method::VacuumFull | Method::Cluster | Method::ReindexConcurrently
        );
        if dialect != "PostgreSQL" || !(statement || is_repack(m)) {
            return None;
        }
        Some(if ddl == DdlKind::Rebuild {
            Ok(())
        } else if statement {
            Err(anyhow::anyhow!(
                "--method {} rebuilds a table: use it with --ddl rebuild",
                m.name()
            ))
        } else {
            Err(anyhow::anyhow!(
                "pg_repack rebuilds a table (--method pg-repack) or its indexes (--method pg-repack-indexes); it cannot {}: use --ddl rebuild",
                ddl.name().replace('-', " ")
            ))
        })
    }

    fn tool(&self, m: Method) -> Option<Tool> {
        is_repack(m).then_some(PG_REPACK)
    }

    fn form(&self, m: Method, t: &str) -> Option<MethodForm> {
        let (statement, online, lock) = match m {
            Method::VacuumFull => (
                Some(format!("VACUUM FULL {t}")),
                false,
                "ACCESS EXCLUSIVE (VACUUM FULL): reads and writes wait for the whole rebuild",
            ),
            Method::Cluster => (
                Some(format!("CLUSTER {t} USING {t}_pkey")),
                false,
                "ACCESS EXCLUSIVE (CLUSTER): reads and writes wait for the whole rebuild, in primary-key order",
            ),
            Method::ReindexConcurrently => (
                Some(format!("REINDEX TABLE CONCURRENTLY {t}")),
                true,
                "SHARE UPDATE EXCLUSIVE (REINDEX TABLE CONCURRENTLY): reads and writes go on; the indexes are rebuilt, not the table",
            ),
            Method::PgRepack => (
                None,
                true,
                "pg_repack: a new heap filled while a trigger logs the writes, the log replayed; ACCESS EXCLUSIVE for a moment at the start and for the swap",
            ),
            Method::PgRepackIndexes => (
                None,
                true,
                "pg_repack --only-indexes: each index built again CONCURRENTLY; ACCESS EXCLUSIVE for a moment to swap them",
            ),
            _ => return None,
        };
        Some(MethodForm {
            statement,
            online,
            lock,
        })
    }

    fn launch(&self, m: Method, c: &ToolCall) -> Result<ToolArgs> {
        if !is_repack(m) {
            bail!("--method {} runs no program here", m.name());
        }
        let args = pg_repack_args(
            c.params,
            &c.req.table,
            m == Method::PgRepackIndexes,
            c.extra,
        );
        let mut env = Vec::new();
        if let Some(p) = &c.params.password {
            env.push(("PGPASSWORD".to_string(), p.clone()));
        }
        if c.major >= 14 {
            // A backend whose pg_repack was killed notices within a second, so its
            // transaction ends and the clean-up does not wait behind it.
            let mut opts = std::env::var("PGOPTIONS").unwrap_or_default();
            opts.push_str(" -c client_connection_check_interval=1000");
            env.push(("PGOPTIONS".into(), opts.trim().to_string()));
        }
        Ok(ToolArgs {
            args,
            env,
            secret: None,
        })
    }

    fn client_env(&self, params: &ClientParams) -> Vec<(String, String)> {
        let mut e: Vec<(String, String)> = vec![
            (
                "PGHOST".into(),
                params.socket.clone().unwrap_or_else(|| params.host.clone()),
            ),
            ("PGPORT".into(), params.port.to_string()),
            ("PGUSER".into(), params.user.clone()),
            ("PGDATABASE".into(), params.database.clone()),
        ];
        if let Some(p) = &params.password {
            e.push(("PGPASSWORD".into(), p.clone()));
        }
        e
    }

    fn read_line(&self, m: Method, line: &str) -> ToolLine {
        if !is_repack(m) {
            return ToolLine::default();
        }
        ToolLine {
            phase: pg_repack_phase(line),
            refusal: pg_repack_refusal(line),
        }
    }

    fn is_progress_line(&self, line: &str) -> bool {
        line.starts_with("LOG: ")
    }

    fn prepare(
        &self,
        m: Method,
        conn: &mut dyn Conn,
        ours: bool,
        program: (u32, u32, u32),
    ) -> Result<Option<String>> {
        if !is_repack(m) {
            return Ok(None);
        }
        prepare_pg_repack(conn, ours, program).map(Some)
    }

    fn before_run(&self, m: Method, conn: &mut dyn Conn, table: &str) -> Result<()> {
        if is_repack(m) && !pg_has_repack_key(conn, table)? {
            bail!(
                "pg_repack refuses {table}: it has no primary key and no unique index on NOT NULL columns (pg_repack needs one to replay the writes made during the copy)"
            );
        }
        Ok(())
    }

    fn objects(
        &self,
        m: Method,
        conn: &mut dyn Conn,
        _db: &str,
        table: &str,
    ) -> Result<ToolObjects> {
        if is_repack(m) {
            pg_repack_objects(conn, table)
        } else {
            Ok(ToolObjects::default())
        }
    }

    fn drop_statements(&self, table: &str, objs: &ToolObjects) -> Vec<(String, String)> {
        let mut out = Vec::new();
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
        out
    }

    fn waits(&self, conn: &mut dyn Conn) -> Result<Waits> {
        table_waits(conn)
    }

    fn progress(&self, m: Method, phase: Option<&str>, conn: &mut dyn Conn) -> Option<String> {
        // The server's view of pg_repack's index builds, while it says it builds one.
        let building = phase.is_some_and(|c| c.starts_with("building index"));
        if is_repack(m) && building {
            pg_repack_progress(conn).ok().flatten()
        } else {
            None
        }
    }
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

/// A line in which pg_repack declines the table while exiting 0 (`WARNING: relation ... must
/// have a primary key or not-null unique keys`, `WARNING: the table ... has no primary key`).
pub fn pg_repack_refusal(line: &str) -> Option<String> {
    let l = line.trim();
    let w = l.strip_prefix("WARNING: ")?;
    (w.contains("primary key") || w.contains("not-null unique") || w.contains("skipping"))
        .then(|| w.to_string())
}

/// pg_repack's objects for `table` (in the current schema): its trigger on the table, the log
/// and new tables and the key type in schema `repack` named after the table's OID, and
/// `index_<oid>` indexes on the table.
pub fn pg_repack_objects(conn: &mut dyn Conn, table: &str) -> Result<ToolObjects> {
    check_ident(table)?;
    let Some(oid) = conn.query_i64(&format!(
        "SELECT c.oid::int8 FROM pg_class c WHERE c.oid = to_regclass({})",
        text_literal(table)
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

/// Who waits for a lock because of pg_repack (its sessions are not ixbench's: they are found
/// by their application_name): `ddl_waits` is a pg_repack session waiting for a lock,
/// `blocked_sessions` the other sessions of the database waiting for one.
pub fn table_waits(conn: &mut dyn Conn) -> Result<Waits> {
    let num = |v: Option<&Option<String>>| -> Option<f64> { v.cloned().flatten()?.parse().ok() };
    let mut w = Waits::default();
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
            text_literal(table)
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

/// Make sure the pg_repack extension is in the target's database, at the version of the
/// program: created on a server ixbench started (`ours`), a one-line error on another server.
/// Returns what was done, for the output.
pub fn prepare_pg_repack(
    conn: &mut dyn Conn,
    ours: bool,
    program: (u32, u32, u32),
) -> Result<String> {
    let (installed, available) = pg_repack_extension(conn)?;
    let db = conn
        .query_rows("SELECT current_database()")?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next().flatten())
        .unwrap_or_default();
    let installed = match installed {
        Some(v) => v,
        None if ours && available => {
            conn.execute("CREATE EXTENSION pg_repack")
                .context("CREATE EXTENSION pg_repack")?;
            return Ok(format!(
                "created the pg_repack extension in database {db} (a server ixbench started)"
            ));
        }
        None if ours => bail!(
            "the pg_repack extension is not installed on this PostgreSQL server (its files are missing: install postgresql-NN-repack for this server's version)"
        ),
        None => bail!(
            "the pg_repack extension is not in database {db}: a superuser must run CREATE EXTENSION pg_repack there first (ixbench creates it only on a server it started)"
        ),
    };
    match parse_version(&installed) {
        Some(v) if v == program => Ok(format!("pg_repack extension {installed} in database {db}")),
        _ => bail!(
            "pg_repack is {}.{}.{} but the extension in database {db} is {installed}: pg_repack refuses to run with another version (ALTER EXTENSION pg_repack UPDATE, or install the matching program)",
            program.0,
            program.1,
            program.2
        ),
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pg_repack_arguments_hold_no_password() {
        let p = ClientParams {
            host: "127.0.0.1".into(),
            port: 5433,
            socket: Some("/tmp/pg".into()),
            user: "ixb".into(),
            password: Some("se\"cr\\et".into()),
            database: "ixbench".into(),
        };
        let a = pg_repack_args(&p, "sbtest1", true, &[]);
        assert!(a.contains(&"--only-indexes".to_string()) && a.contains(&"--echo".to_string()));
        assert!(a.iter().all(|x| !x.contains("cr")), "{a:?}");
        assert_eq!(a[0..2], ["--host", "/tmp/pg"]);
        let req = crate::dbms::ddl::DdlRequest {
            kind: DdlKind::Rebuild,
            lock: crate::dbms::ddl::LockChoice::Online,
            table: "sbtest1".into(),
            pk: "id".into(),
            indexes: Vec::new(),
            column: String::new(),
        };
        let call = |major| ToolCall {
            params: &p,
            req: &req,
            engine: "",
            secret_path: "",
            extra: &[],
            major,
        };
        let t = TOOLS.launch(Method::PgRepack, &call(16)).unwrap();
        assert!(!t.args.contains(&"--only-indexes".to_string()));
        assert!(t.args.iter().all(|x| !x.contains("cr")), "{:?}", t.args);
        assert_eq!(t.secret, None);
        let env = |t: &ToolArgs, k: &str| {
            t.env
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(env(&t, "PGPASSWORD").as_deref(), Some("se\"cr\\et"));
        assert!(env(&t, "PGOPTIONS")
            .unwrap()
            .ends_with("-c client_connection_check_interval=1000"));
        let t = TOOLS.launch(Method::PgRepackIndexes, &call(13)).unwrap();
        assert!(t.args.contains(&"--only-indexes".to_string()));
        assert_eq!(env(&t, "PGOPTIONS"), None);
        assert!(TOOLS.launch(Method::VacuumFull, &call(16)).is_err());
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
        // Read only for pg_repack's own runs; a refusal too.
        let w = "WARNING: the table \"public.t\" has no primary key";
        assert!(TOOLS.read_line(Method::PgRepack, w).refusal.is_some());
        assert_eq!(TOOLS.read_line(Method::External, w), ToolLine::default());
        assert!(TOOLS.is_progress_line("LOG: (query) ANALYZE t"));
        assert!(!TOOLS.is_progress_line("INFO: repacking table"));
    }

    #[test]
    fn drop_statements_name_the_table_for_triggers() {
        let pg = ToolObjects {
            triggers: vec!["repack_trigger".into()],
            tables: vec!["repack.log_1".into()],
            types: vec!["repack.pk_1".into()],
            indexes: vec!["index_2".into()],
        };
        let d = TOOLS.drop_statements("sbtest1", &pg);
        assert_eq!(d[0].1, "DROP TRIGGER IF EXISTS repack_trigger ON sbtest1");
        assert_eq!(d[1].1, "DROP TABLE IF EXISTS repack.log_1");
        assert_eq!(d[2].1, "DROP TYPE IF EXISTS repack.pk_1");
        assert_eq!(d[3].1, "DROP INDEX CONCURRENTLY IF EXISTS index_2");
    }
}
