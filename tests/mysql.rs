//! The MySQL-protocol target against a real MariaDB server, with InnoDB and with MyRocks.
//!
//! Each test starts its own throwaway server (`ixbench::server`, a new temp data directory and a
//! free port; the system server is neither used nor touched) and runs the `ixbench` binary or
//! the target API against it. When the MariaDB binaries (or, for MyRocks, the plugin) are
//! missing, the test prints `SKIPPED <test>: <why>` and returns, except with `CI=true`, where it
//! fails.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Duration;

use crate::common::sql::SqlExt;
use ixbench::dbms::{self, Conn, Dbms, TargetOptions, TargetSpec};
use ixbench::server::{self, RunningServer, ServerKind, ServerOptions};
use ixbench::workload::iibench::{Batch, RowGen, Statements, TableSql};
use serde_json::Value;

/// A running throwaway server and its data directory (the server is stopped first).
struct Fixture {
    server: RunningServer,
    _dir: tempfile::TempDir,
}

/// Print SKIPPED and return None, or fail under CI=true.
fn skip<T>(test: &str, why: &str) -> Option<T> {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: {why} (CI=true: a missing server binary is a failure)");
    }
    eprintln!("SKIPPED {test}: {why}");
    None
}

/// Start a MariaDB server with `settings`; `None` (after SKIPPED) when MariaDB, or MyRocks when
/// `rocksdb`, is not installed.
fn mariadb(test: &str, rocksdb: bool, settings: &[(&str, &str)]) -> Option<Fixture> {
    if let Err(e) = server::check_installed(ServerKind::Mariadb) {
        return skip(test, &format!("{e:#}"));
    }
    if rocksdb && !server::rocksdb_available() {
        return skip(
            test,
            "the MyRocks plugin is not installed (Debian package mariadb-plugin-rocksdb)",
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let mut opts = ServerOptions::new(dir.path());
    opts.settings = settings
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    // One start at a time: a starting mariadbd removes every `#sql*` file in its tmpdir (/tmp),
    // which breaks a mariadb-install-db running at the same time.
    static STARTING: Mutex<()> = Mutex::new(());
    let server = {
        let _one = STARTING.lock().unwrap_or_else(|e| e.into_inner());
        server::start(ServerKind::Mariadb, &opts)
            .unwrap_or_else(|e| panic!("{test}: cannot start MariaDB: {e:#}"))
    };
    Some(Fixture { server, _dir: dir })
}

/// A table prefix no other test uses.
fn prefix(tag: &str) -> String {
    format!("{tag}{}", std::process::id())
}

/// Run the ixbench binary; `MYSQL_PWD` is removed from its environment unless given.
fn ixbench(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ixbench"));
    c.args(args).env_remove("MYSQL_PWD");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("cannot run ixbench")
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout (tail)\n{}\n--- stderr\n{}",
        o.status.code(),
        tail(&String::from_utf8_lossy(&o.stdout), 60),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    // The run header's settings line is long: leave it out.
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .filter(|l| !l.starts_with("settings:"))
        .cloned()
        .collect::<Vec<_>>()
        .join("\n")
}

fn read_run(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("run.json")).expect("no run.json");
    serde_json::from_str(&text).expect("run.json does not parse")
}

/// Every file under `dir` (recursively), as text.
fn all_files_text(dir: &Path) -> String {
    let mut out = String::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.push_str(&all_files_text(&p));
            } else if let Ok(b) = std::fs::read(&p) {
                out.push_str(&String::from_utf8_lossy(&b));
            }
        }
    }
    out
}

fn admin(server: &RunningServer) -> ixbench::dbms::session::Session {
    let url = server.url_with_password();
    crate::common::sql::connect(&url).unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// The full small run on `engine`: every step ok, every check passed, covering plans, sizes,
/// maintenance, the rows left in the table; then the target API's row counters and a batch
/// larger than one statement's parameter limit.
fn full_run(test: &str, engine: &str) {
    let Some(f) = mariadb(test, engine == "rocksdb", &[]) else {
        return;
    };
    let url = f.server.url();
    let out = tempfile::tempdir().unwrap();
    let r = out.path().join("r");
    let p = prefix(&format!("{engine}_"));
    let o = ixbench(
        &[
            "run",
            "--target",
            &url,
            "--engine",
            engine,
            "--out",
            r.to_str().unwrap(),
            "--rows",
            "3000",
            "--rows2",
            "1000",
            "--query-seconds",
            "1",
            "--rates",
            "100",
            "--table-prefix",
            &p,
            // The test started this server, not ixbench: let maint flush it (the flush and
            // its restore are checked below; tests/quiet.rs checks the default).
            "--allow-server-changes",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", show(&o));
    let run = read_run(&r);
    assert_eq!(run["status"], "ok", "{}", show(&o));
    let want_engine = if engine == "rocksdb" {
        "RocksDB"
    } else {
        "InnoDB"
    };
    assert_eq!(run["target"]["kind"], "mysql");
    assert_eq!(run["target"]["engine"], want_engine);
    assert_eq!(run["target"]["location"], url.as_str());
    assert!(run["target"]["version"]
        .as_str()
        .unwrap()
        .contains("MariaDB"));
    let settings = run["target"]["settings"].as_array().unwrap();
    assert!(settings.len() > 100, "all global variables are recorded");
    assert!(settings.iter().any(|kv| kv[0] == "innodb_buffer_pool_size"));

    let steps = run["steps"].as_array().unwrap();
    let names: Vec<&str> = steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["l.i0", "l.x", "l.i1", "l.i2", "maint", "qr100", "qp100"]
    );
    let table = format!("{p}1");
    let mut plans = 0;
    for s in steps {
        let name = s["name"].as_str().unwrap();
        assert_eq!(s["status"], "ok", "step {name}: {s}");
        let checks = s["checks"].as_array().unwrap();
        assert!(!checks.is_empty(), "step {name} has checks");
        for c in checks {
            assert_eq!(c["ok"], true, "step {name}: check {c}");
            if c["name"] == "plan" {
                plans += 1;
                let d = c["detail"].as_str().unwrap();
                assert!(d.contains(&format!("key={table}_")), "{d}");
                assert!(d.contains("Using index"), "{d}");
            }
        }
    }
    // l.x, maint, qr100 and qp100 each check the 3 range-query plans.
    assert_eq!(plans, 12);
    let by_name = |n: &str| steps.iter().find(|s| s["name"] == n).unwrap();
    assert_eq!(by_name("l.i0")["totals"]["rows"][0], 3000);
    assert_eq!(by_name("l.i1")["totals"]["rows"][1], 800);
    // l.x builds as the insert benchmark does: one ALTER TABLE adding the three indexes
    let lx = by_name("l.x")["index_builds"].as_array().unwrap();
    assert_eq!(lx.len(), 1, "{lx:?}");
    assert_eq!(lx[0]["indexes"].as_array().unwrap().len(), 3, "{lx:?}");
    assert!(
        lx[0]["statement"]
            .as_str()
            .unwrap()
            .starts_with("ALTER TABLE"),
        "{lx:?}"
    );
    let qr = by_name("qr100");
    assert!(qr["totals"]["ops"][2].as_u64().unwrap() > 0, "queries ran");
    assert!(qr["totals"]["rows"][2].as_u64().unwrap() > 0, "rows read");

    let maint = by_name("maint")["maintenance"].as_array().unwrap();
    let actions: Vec<&str> = maint
        .iter()
        .map(|a| a["action"].as_str().unwrap())
        .collect();
    if engine == "rocksdb" {
        assert_eq!(actions.first(), Some(&"wait for compaction to go idle"));
        assert!(actions.contains(&"SET GLOBAL rocksdb_force_flush_memtable_now = 1"));
        assert!(
            actions.iter().any(|a| a.contains("lzero_now")),
            "{actions:?}"
        );
        // root may SET GLOBAL: nothing is reported as skipped
        assert!(
            maint
                .iter()
                .all(|a| !a["detail"].as_str().unwrap().contains("not done")),
            "{maint:?}"
        );
        assert_eq!(actions.last(), Some(&"ANALYZE TABLE"));
    } else {
        // ANALYZE TABLE, then the flush of dirty pages.
        assert_eq!(actions.len(), 2, "{actions:?}");
        assert_eq!(actions[0], "ANALYZE TABLE");
        assert!(actions[1].starts_with("flush dirty pages"), "{actions:?}");
        let d = maint[1]["detail"].as_str().unwrap();
        assert!(d.starts_with("dirty pages "), "{d}");
        assert!(d.contains("restored"), "{d}");
    }

    // Sizes after maintenance: the database, and the table and its 3 indexes.
    let sizes = &by_name("maint")["sizes"];
    assert!(sizes["database_bytes"].as_u64().unwrap() > 0);
    let objects = sizes["objects"].as_array().unwrap();
    let names: Vec<&str> = objects.iter().map(|o| o[0].as_str().unwrap()).collect();
    for n in [
        table.clone(),
        format!("{table}_marketsegment"),
        format!("{table}_registersegment"),
        format!("{table}_pdc"),
    ] {
        assert!(names.contains(&n.as_str()), "{n} in {names:?}");
    }
    assert!(
        objects.iter().all(|o| o[1].as_u64().unwrap() > 0),
        "{objects:?}"
    );

    // What the server holds: the engine asked for, and as many rows as loaded (every later
    // step deleted as many as it inserted).
    let mut c = admin(&f.server);
    let eng: String = c
        .query_first(format!(
            "SELECT ENGINE FROM information_schema.TABLES WHERE table_schema = 'ixbench' \
             AND table_name = '{table}'"
        ))
        .unwrap()
        .unwrap();
    assert_eq!(eng.to_ascii_uppercase(), want_engine.to_ascii_uppercase());
    let n: i64 = c
        .query_first(format!("SELECT count(*) FROM {table}"))
        .unwrap()
        .unwrap();
    assert_eq!(n, 3000);

    // The target API: row counters move with an insert of more rows than one statement may
    // carry (an explicit transaction of two INSERTs) and a delete.
    let spec = TargetSpec::parse(&url).unwrap();
    let t = dbms::open(
        &spec,
        &TargetOptions {
            engine: Some(engine.to_string()),
            ..Default::default()
        },
    )
    .unwrap();
    // The server runs here: the target finds its process.
    assert_eq!(t.server_pids(), f.server.pids());
    let mut conn = t.connect().unwrap();
    let sql = std::sync::Arc::new(TableSql::new(&table, t.dialect()));
    let before = t.row_counters(conn.as_mut(), &[]).unwrap().unwrap();
    let big = sql.max_rows_per_statement() + 100;
    let mut g = RowGen::new(7, 10, 20);
    let mut b = Batch::default();
    g.fill(&mut b, big, 1_700_000_000);
    let mut st = Statements::new(sql.clone(), true);
    st.insert(conn.as_mut(), &b).unwrap();
    assert_eq!(sql.count_rows(conn.as_mut()).unwrap(), 3000 + big as u64);
    let (min, _) = sql.min_max_ids(conn.as_mut()).unwrap().unwrap();
    let d = st.delete_oldest(conn.as_mut(), min, 500).unwrap();
    assert_eq!(d.rows, 500);
    assert!(d.next_from > min + 499);
    assert_eq!(sql.count_rows(conn.as_mut()).unwrap(), 2500 + big as u64);
    let after = t.row_counters(conn.as_mut(), &[]).unwrap().unwrap();
    // Server-global counters: at least our rows, and not much else on a private server.
    let ins = after.inserted - before.inserted;
    let del = after.deleted - before.deleted;
    assert!(
        (big as u64..big as u64 + 100).contains(&ins),
        "inserted {ins}"
    );
    assert!((500..600).contains(&del), "deleted {del}");
}

#[test]
fn innodb_full_run() {
    full_run("innodb_full_run", "innodb");
}

#[test]
fn rocksdb_full_run() {
    full_run("rocksdb_full_run", "rocksdb");
}

/// A wrong password fails in one line that names the target without the password; the right
/// one (in the URL or MYSQL_PWD) works and is stored nowhere; a user without SET GLOBAL still
/// gets its maintenance step, which says what it could not do.
#[test]
fn passwords_and_privileges() {
    let test = "passwords_and_privileges";
    let Some(f) = mariadb(test, false, &[]) else {
        return;
    };
    let port = f.server.port;
    let good = "Right-Pw-4711";
    let bad = "Wr0ng-Pw-0815";
    let mut c = admin(&f.server);
    for host in ["localhost", "127.0.0.1"] {
        c.query_drop(format!("CREATE USER 'ixb'@'{host}' IDENTIFIED BY '{good}'"))
            .unwrap();
        c.query_drop(format!("GRANT ALL ON ixbench.* TO 'ixb'@'{host}'"))
            .unwrap();
    }
    let out = tempfile::tempdir().unwrap();
    let shown = format!("mysql://ixb@127.0.0.1:{port}/ixbench");

    let fails = [
        (
            format!("mysql://ixb:{bad}@127.0.0.1:{port}/ixbench"),
            vec![],
        ),
        (shown.clone(), vec![("MYSQL_PWD", bad)]),
    ];
    for (i, (url, env)) in fails.iter().enumerate() {
        let r = out.path().join(format!("bad{i}"));
        let o = ixbench(
            &[
                "run",
                "--target",
                url,
                "--out",
                r.to_str().unwrap(),
                "--rows",
                "100",
                "--steps",
                "l.i0",
            ],
            env,
        );
        assert_eq!(o.status.code(), Some(1), "{}", show(&o));
        let stderr = String::from_utf8_lossy(&o.stderr);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(
            stderr.starts_with(&format!(
                "ixbench: error: cannot connect to {shown}: ERROR 1045 (28000): Access denied"
            )),
            "{stderr}"
        );
        for s in [&stderr, &stdout] {
            assert!(!s.contains(bad) && !s.contains(good), "password shown: {s}");
        }
        assert!(!all_files_text(&r).contains(bad));
    }

    // The right password, in the URL: it works and lands in no output and no result.
    let r = out.path().join("good");
    let o = ixbench(
        &[
            "run",
            "--target",
            &format!("mysql://ixb:{good}@127.0.0.1:{port}/ixbench"),
            "--out",
            r.to_str().unwrap(),
            "--rows",
            "2000",
            "--steps",
            "l.i0,l.x,maint",
            "--table-prefix",
            &prefix("pw"),
            "--allow-server-changes",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", show(&o));
    let text = format!(
        "{}{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
        all_files_text(&r)
    );
    assert!(!text.contains(good), "the password was printed or stored");
    let run = read_run(&r);
    assert_eq!(run["status"], "ok");
    assert_eq!(run["target"]["location"], shown.as_str());
    // No SUPER: the flush is not done, and the step says why instead of failing.
    let maint = &run["steps"][2];
    assert_eq!(maint["name"], "maint");
    assert_eq!(maint["status"], "ok");
    let flush = maint["maintenance"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| {
            a["action"]
                .as_str()
                .unwrap()
                .starts_with("flush dirty pages")
        })
        .unwrap();
    let d = flush["detail"].as_str().unwrap();
    assert!(d.contains("lacks the privilege for SET GLOBAL"), "{d}");
    // No SELECT on mysql.*: per-table sizes come from information_schema.TABLES.
    let objects = maint["sizes"]["objects"].as_array().unwrap();
    assert!(!objects.is_empty());

    // The password from MYSQL_PWD works too.
    let r = out.path().join("env");
    let o = ixbench(
        &[
            "run",
            "--target",
            &shown,
            "--out",
            r.to_str().unwrap(),
            "--rows",
            "100",
            "--steps",
            "l.i0",
            "--table-prefix",
            &prefix("env"),
        ],
        &[("MYSQL_PWD", good)],
    );
    assert!(o.status.success(), "{}", show(&o));
    assert!(!all_files_text(&r).contains(good));
}

/// A table ixbench did not create is neither dropped nor written; other connect failures are
/// one clear line.
#[test]
fn foreign_table_and_connect_errors() {
    let test = "foreign_table_and_connect_errors";
    let Some(f) = mariadb(test, false, &[]) else {
        return;
    };
    let url = f.server.url();
    let p = prefix("fx");
    let table = format!("{p}1");
    let mut c = admin(&f.server);
    c.query_drop(format!(
        "CREATE TABLE {table} (id int PRIMARY KEY, note varchar(20))"
    ))
    .unwrap();
    c.query_drop(format!("INSERT INTO {table} VALUES (42, 'keep me')"))
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    for steps in ["l.i0", "l.i1"] {
        let r = out.path().join(steps);
        let o = ixbench(
            &[
                "run",
                "--target",
                &url,
                "--out",
                r.to_str().unwrap(),
                "--rows",
                "100",
                "--steps",
                steps,
                "--table-prefix",
                &p,
            ],
            &[],
        );
        assert!(!o.status.success(), "{}", show(&o));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("not created by ixbench"), "{stderr}");
    }
    let kept: Option<String> = c
        .query_first(format!("SELECT note FROM {table} WHERE id = 42"))
        .unwrap();
    assert_eq!(kept.as_deref(), Some("keep me"));
    let cols: i64 = c
        .query_first(format!(
            "SELECT count(*) FROM information_schema.COLUMNS WHERE table_schema = 'ixbench' \
             AND table_name = '{table}'"
        ))
        .unwrap()
        .unwrap();
    assert_eq!(cols, 2, "the table is unchanged");

    // Unknown database, nothing listening, bad URL: one line each, naming the target.
    let port = f.server.port;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let cases = [
        (
            format!("mysql://root@127.0.0.1:{port}/nosuchdb"),
            "Unknown database 'nosuchdb'",
        ),
        (
            format!("mysql://root@127.0.0.1:{closed}/ixbench"),
            "Connection refused",
        ),
        (
            format!("mysql://root:S3cret-x@127.0.0.1:{port}/ixbench?sslmode=on"),
            "unknown parameter \"sslmode\"",
        ),
    ];
    for (i, (u, want)) in cases.iter().enumerate() {
        let r = out.path().join(format!("e{i}"));
        let o = ixbench(
            &[
                "run",
                "--target",
                u,
                "--out",
                r.to_str().unwrap(),
                "--steps",
                "l.i0",
            ],
            &[],
        );
        assert_eq!(o.status.code(), Some(1), "{}", show(&o));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(want), "{stderr}");
        assert!(!stderr.contains("S3cret-x"), "{stderr}");
    }
}

/// `--engine rocksdb` on a server without MyRocks loaded fails at once and says how to load
/// it.
#[test]
fn rocksdb_not_loaded() {
    let test = "rocksdb_not_loaded";
    // With the plugin installed, start the server with MyRocks disabled; without it, a plain
    // server has no MyRocks either.
    let settings: &[(&str, &str)] = if server::rocksdb_available() {
        &[("rocksdb", "OFF")]
    } else {
        &[]
    };
    let Some(f) = mariadb(test, false, settings) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let r = out.path().join("r");
    let o = ixbench(
        &[
            "run",
            "--target",
            &f.server.url(),
            "--engine",
            "rocksdb",
            "--out",
            r.to_str().unwrap(),
            "--steps",
            "l.i0",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("engine RocksDB is not available on mysql://root@127.0.0.1:"),
        "{stderr}"
    );
    if server::rocksdb_available() {
        assert!(stderr.contains("SUPPORT = NO"), "{stderr}");
        assert!(stderr.contains("installed but disabled"), "{stderr}");
    } else {
        assert!(
            stderr.contains("not in information_schema.ENGINES"),
            "{stderr}"
        );
        assert!(stderr.contains("INSTALL SONAME 'ha_rocksdb'"), "{stderr}");
    }
    // Nothing was created.
    let n: i64 = admin(&f.server)
        .query_first(
            "SELECT count(*) FROM information_schema.TABLES WHERE table_schema = 'ixbench'",
        )
        .unwrap()
        .unwrap();
    assert_eq!(n, 0);
}

/// Lock conflicts are recognized as retryable on both engines (deadlock or lock wait timeout;
/// MyRocks's snapshot conflict); other errors are not.
#[test]
fn retryable_errors() {
    let test = "retryable_errors";
    let Some(f) = mariadb(test, false, &[("innodb_lock_wait_timeout", "2")]) else {
        return;
    };
    let url = f.server.url();
    let mut engines = vec!["innodb"];
    if server::rocksdb_available() {
        engines.push("rocksdb");
    } else {
        eprintln!("{test}: MyRocks not installed: InnoDB only");
    }
    for engine in engines {
        let t = dbms::open(
            &TargetSpec::parse(&url).unwrap(),
            &TargetOptions {
                engine: Some(engine.into()),
                ..Default::default()
            },
        )
        .unwrap();
        let table = format!("rt_{engine}");
        let mut c1 = t.connect().unwrap();
        let mut c2 = t.connect().unwrap();
        c1.execute(&format!(
            "CREATE TABLE {table} (id int PRIMARY KEY, v int){}",
            t.dialect().table_options()
        ))
        .unwrap();
        c1.execute(&format!("INSERT INTO {table} VALUES (1, 0), (2, 0)"))
            .unwrap();

        // Two transactions each wait for the other's row.
        c1.execute("BEGIN").unwrap();
        c1.execute(&format!("UPDATE {table} SET v = 1 WHERE id = 1"))
            .unwrap();
        c2.execute("BEGIN").unwrap();
        c2.execute(&format!("UPDATE {table} SET v = 2 WHERE id = 2"))
            .unwrap();
        let sql = format!("UPDATE {table} SET v = 1 WHERE id = 2");
        let h = std::thread::spawn(move || {
            let r = c1.execute(&sql);
            (c1, r)
        });
        std::thread::sleep(Duration::from_millis(300));
        let r2 = c2.execute(&format!("UPDATE {table} SET v = 2 WHERE id = 1"));
        let (mut c1, r1) = h.join().unwrap();
        let errors: Vec<&anyhow::Error> = [&r1, &r2]
            .into_iter()
            .filter_map(|r| r.as_ref().err())
            .collect();
        assert!(!errors.is_empty(), "{engine}: a lock conflict must fail");
        for e in &errors {
            assert!(c1.is_retryable(e), "{engine}: not retryable: {e:#}");
        }
        let _ = c1.execute("ROLLBACK");
        let _ = c2.execute("ROLLBACK");

        if engine == "rocksdb" {
            // Snapshot conflict: c1 reads, c2 changes the row, c1 writes it.
            c1.execute("BEGIN").unwrap();
            c1.query_rows(&format!("SELECT v FROM {table} WHERE id = 1"))
                .unwrap();
            c2.execute(&format!("UPDATE {table} SET v = 5 WHERE id = 1"))
                .unwrap();
            let e = c1
                .execute(&format!("UPDATE {table} SET v = v + 1 WHERE id = 1"))
                .unwrap_err();
            assert!(c1.is_retryable(&e), "snapshot conflict: {e:#}");
            let _ = c1.execute("ROLLBACK");
        }

        // Not transient: a duplicate key, a syntax error.
        let dup = c1
            .execute(&format!("INSERT INTO {table} VALUES (1, 9)"))
            .unwrap_err();
        assert!(!c1.is_retryable(&dup), "{dup:#}");
        assert!(format!("{dup:#}").contains("ERROR 1062"), "{dup:#}");
        let syntax = c1.execute("SELEC 1").unwrap_err();
        assert!(!c1.is_retryable(&syntax));
        check_table_helpers(t.as_ref(), c1.as_mut(), &table);
    }
}

fn check_table_helpers(t: &dyn Dbms, c: &mut dyn Conn, table: &str) {
    assert!(c.table_exists(table).unwrap());
    assert!(!c.table_exists("no_such_table").unwrap());
    assert!(c.index_exists(table, "PRIMARY").unwrap());
    assert!(!c.index_exists(table, "no_such_index").unwrap());
    assert_eq!(t.kind(), "mysql");
}

/// One connection working on ten tables: the workload prepares each statement once on it and
/// keeps the handle, so the server holds exactly the statements the workload prepared, and
/// running every operation again prepares nothing more (no statement prepared per operation,
/// none leaked).
#[test]
fn prepared_statements_stay_bounded() {
    let test = "prepared_statements_stay_bounded";
    let Some(f) = mariadb(test, false, &[]) else {
        return;
    };
    let t = dbms::open(
        &TargetSpec::parse(&f.server.url()).unwrap(),
        &TargetOptions::default(),
    )
    .unwrap();
    let mut c = t.connect().unwrap();
    let mut g = RowGen::new(3, 10, 20);
    let mut b = Batch::default();
    // 10 tables x (3 range queries, point query, delete, n-th-PK query, 5 INSERT sizes).
    let tables: Vec<std::sync::Arc<TableSql>> = (0..10)
        .map(|i| std::sync::Arc::new(TableSql::new(&format!("ps{i}"), t.dialect())))
        .collect();
    let mut stmts: Vec<Statements> = tables
        .iter()
        .map(|s| Statements::new(s.clone(), true))
        .collect();
    for (s, st) in tables.iter().zip(stmts.iter_mut()) {
        c.execute(&s.create_table()).unwrap();
        for i in 0..3 {
            c.execute(&s.create_index(i)).unwrap();
        }
        for rows in [50, 60, 70, 80, 90] {
            g.fill(&mut b, rows, 1_700_000_000);
            st.insert(c.as_mut(), &b).unwrap();
        }
    }
    let server_count = || -> u64 {
        admin(&f.server)
            .query_first::<(String, String), _>("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'")
            .unwrap()
            .unwrap()
            .1
            .parse()
            .unwrap()
    };
    let mut keys = [0i64; 10];
    let mut counts = Vec::new();
    for round in 0..2 {
        for (k, (s, st)) in tables.iter().zip(stmts.iter_mut()).enumerate() {
            for i in 0..3 {
                assert_eq!(
                    st.range_query(c.as_mut(), i, 0).unwrap(),
                    10,
                    "round {round}"
                );
            }
            let (min, _) = s.min_max_ids(c.as_mut()).unwrap().unwrap();
            for (j, key) in keys.iter_mut().enumerate() {
                *key = min + j as i64;
            }
            assert_eq!(st.point_query(c.as_mut(), &keys).unwrap(), 10);
            let d = st.delete_oldest(c.as_mut(), 0, 5 + k).unwrap();
            assert_eq!(d.rows as usize, 5 + k);
        }
        counts.push(server_count());
    }
    let held: usize = stmts.iter().map(|s| s.prepared()).sum();
    assert_eq!(held, 10 * 11);
    assert_eq!(
        counts,
        vec![held as u64; 2],
        "prepared statements on the server after each round"
    );
}

/// ixbench's own MySQL client (src/dbms/mywire.rs) against a real server: typed parameters
/// in and integers out, rows of every common type, a row and a statement larger than one 16 MiB
/// packet (split and joined), an error in the middle of a transaction and of several
/// statements (the connection stays in step), an authentication plugin it does not speak (a
/// clear error), a killed statement and a server that goes away (errors, not hangs).
#[test]
fn own_client_speaks_the_protocol_and_stays_in_step() {
    use ixbench::dbms::{Stmt, Value as V};
    let test = "own_client_speaks_the_protocol_and_stays_in_step";
    let Some(f) = mariadb(test, false, &[("max_allowed_packet", "64M")]) else {
        return;
    };
    let url = f.server.url();
    let t = dbms::open(&TargetSpec::parse(&url).unwrap(), &TargetOptions::default()).unwrap();
    let mut c = t.connect().unwrap();
    c.execute(
        "CREATE TABLE mw (id bigint PRIMARY KEY, a int, b smallint unsigned, f double, \
         ts datetime, s varchar(10), t text, d decimal(10,2))",
    )
    .unwrap();
    let ins = c
        .prepare("INSERT INTO mw VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        .unwrap();
    let row1 = [
        V::Int(1),
        V::Int(-7),
        V::Int(65_535),
        V::Float(2.5),
        V::Timestamp(1_700_000_000),
        V::Text("héllo"),
        V::Text(""),
        V::Float(12.25),
    ];
    assert_eq!(c.exec(ins, &row1).unwrap(), 1);
    let row2 = [
        V::Int(2),
        V::Null,
        V::Null,
        V::Int(4),
        V::Null,
        V::Null,
        V::Null,
        V::Null,
    ];
    assert_eq!(c.exec(ins, &row2).unwrap(), 1);
    let back = c
        .query_rows("SELECT a, b, f, ts, s, t, d FROM mw WHERE id = 1")
        .unwrap();
    assert_eq!(
        back[0],
        [
            "-7",
            "65535",
            "2.5",
            "2023-11-14 22:13:20",
            "héllo",
            "",
            "12.25"
        ]
        .iter()
        .map(|s| Some(s.to_string()))
        .collect::<Vec<_>>()
    );
    assert_eq!(
        c.query_rows("SELECT a, ts FROM mw WHERE id = 2").unwrap()[0],
        vec![None, None]
    );
    let all: Stmt = c.prepare("SELECT * FROM mw WHERE id >= ?").unwrap();
    assert_eq!(
        c.query(all, &[V::Int(0)]).unwrap(),
        2,
        "rows with NULLs and every type"
    );
    let a = c.prepare("SELECT a FROM mw WHERE id = ?").unwrap();
    assert_eq!(c.query_int(a, &[V::Int(1)]).unwrap(), Some(-7));
    assert_eq!(c.query_int(a, &[V::Int(2)]).unwrap(), None, "NULL");
    assert_eq!(c.query_int(a, &[V::Int(9)]).unwrap(), None, "no row");
    let b = c.prepare("SELECT b FROM mw WHERE id = ?").unwrap();
    assert_eq!(
        c.query_int(b, &[V::Int(1)]).unwrap(),
        Some(65_535),
        "unsigned"
    );
    let sum = c.prepare("SELECT sum(id) FROM mw").unwrap();
    assert_eq!(c.query_int(sum, &[]).unwrap(), Some(3), "a DECIMAL sum");
    let e = format!("{:#}", c.exec(ins, &[V::Int(1)]).unwrap_err());
    assert!(e.contains("8 parameters, 1 given"), "{e}");
    assert_eq!(c.query(a, &[V::Int(1)]).unwrap(), 1);

    // Over the server's Unix socket.
    let sock = f
        .server
        .socket
        .clone()
        .expect("the throwaway server has a socket");
    let surl = format!(
        "mysql://root:{}@localhost/ixbench?socket={}",
        f.server.password(),
        sock.display()
    );
    let st = dbms::open(
        &TargetSpec::parse(&surl).unwrap(),
        &TargetOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
    let mut sc = st.connect().unwrap();
    let via = sc
        .query_rows("SELECT @@hostname IS NOT NULL, USER()")
        .unwrap();
    assert!(
        via[0][1]
            .as_deref()
            .unwrap_or_default()
            .ends_with("@localhost"),
        "{via:?}"
    );

    // More than one packet (16 MiB) each way: a statement and a row.
    let big = "x".repeat(17 * 1024 * 1024);
    c.execute("CREATE TABLE mw_big (id int PRIMARY KEY, v longtext)")
        .unwrap();
    let put = c.prepare("INSERT INTO mw_big VALUES (?, ?)").unwrap();
    assert_eq!(c.exec(put, &[V::Int(1), V::Text(&big)]).unwrap(), 1);
    c.execute(&format!("INSERT INTO mw_big VALUES (2, '{big}')"))
        .unwrap();
    let len = c
        .query_rows("SELECT length(v), v = repeat('x', 17825792) FROM mw_big ORDER BY id")
        .unwrap();
    assert_eq!(len.len(), 2);
    for r in &len {
        assert_eq!(r[0].as_deref(), Some("17825792"));
        assert_eq!(r[1].as_deref(), Some("1"));
    }
    let get = c.prepare("SELECT v, id FROM mw_big").unwrap();
    assert_eq!(c.query(get, &[]).unwrap(), 2);
    let rows = c
        .query_rows("SELECT v, id FROM mw_big WHERE id = 2")
        .unwrap();
    assert_eq!(rows[0][0].as_ref().map(String::len), Some(big.len()));
    assert_eq!(rows[0][1].as_deref(), Some("2"));
    assert_eq!(
        c.query_int(a, &[V::Int(1)]).unwrap(),
        Some(-7),
        "still in step"
    );

    // An error inside a transaction, and in the middle of several statements.
    c.execute("BEGIN").unwrap();
    let e = format!("{:#}", c.exec(ins, &row1).unwrap_err());
    assert!(e.contains("ERROR 1062"), "{e}");
    c.execute("ROLLBACK").unwrap();
    let e = c
        .execute("INSERT INTO mw (id) VALUES (10); SELECT * FROM no_such_table; INSERT INTO mw (id) VALUES (11)")
        .unwrap_err();
    assert!(format!("{e:#}").contains("ERROR 1146"), "{e:#}");
    assert_eq!(
        c.query_rows("SELECT count(*) FROM mw WHERE id >= 10")
            .unwrap()[0][0]
            .as_deref(),
        Some("1"),
        "the statement before the error ran, the one after did not"
    );
    assert_eq!(c.exec_text("UPDATE mw SET a = 1").unwrap(), 3);
    assert_eq!(c.query_text("SELECT * FROM mw").unwrap(), 3);
    let plan = c.explain("SELECT id FROM mw WHERE id = 1").unwrap();
    assert!(plan.contains("key=PRIMARY"), "{plan}");

    // MariaDB's ed25519 accounts log in (client_ed25519); a wrong password is refused
    // without being shown.
    let mut adm = admin(&f.server);
    let (host_port, db) = url.rsplit_once('/').unwrap();
    let hp = host_port.rsplit_once('@').unwrap().1;
    if adm.query_drop("INSTALL SONAME 'auth_ed25519'").is_ok() {
        adm.query_drop("CREATE USER mw_ed IDENTIFIED VIA ed25519 USING PASSWORD('pw1')")
            .unwrap();
        adm.query_drop("GRANT ALL ON *.* TO mw_ed").unwrap();
        let ed = format!("mysql://mw_ed:pw1@{hp}/{db}?ssl-mode=DISABLED");
        let t = dbms::open(&TargetSpec::parse(&ed).unwrap(), &TargetOptions::default())
            .expect("ed25519 is spoken");
        let mut ec = t.connect().unwrap();
        let info = t.info(ec.as_mut()).unwrap();
        assert_eq!(info.transport.unwrap().auth, "client_ed25519");
        let bad = format!("mysql://mw_ed:wrong-pw9@{hp}/{db}?ssl-mode=DISABLED");
        let e = format!(
            "{:#}",
            dbms::open(&TargetSpec::parse(&bad).unwrap(), &TargetOptions::default())
                .err()
                .expect("a wrong password is refused")
        );
        assert!(e.contains("ERROR 1045") && !e.contains("wrong-pw9"), "{e}");
    } else {
        eprintln!("{test}: auth_ed25519 not installed: ed25519 check skipped");
    }
    // A user whose authentication plugin ixbench does not speak (PAM's `dialog`): a clear
    // error, the password not shown.
    if adm.query_drop("INSTALL SONAME 'auth_pam_v1'").is_ok() {
        adm.query_drop("CREATE USER mw_pam IDENTIFIED VIA pam USING 'ixbench-none'")
            .unwrap();
        let pam = format!("mysql://mw_pam:pw2@{hp}/{db}");
        let e = format!(
            "{:#}",
            dbms::open(&TargetSpec::parse(&pam).unwrap(), &TargetOptions::default())
                .err()
                .expect("dialog is not spoken")
        );
        assert!(e.contains("dialog") && !e.contains("pw2"), "{e}");
    } else {
        eprintln!("{test}: auth_pam_v1 not installed: plugin check skipped");
    }

    // A statement killed from another connection (what a stop request does).
    let ids: Vec<u64> = adm
        .query("SELECT id FROM information_schema.PROCESSLIST WHERE user = 'root' AND id <> CONNECTION_ID()")
        .unwrap();
    let h = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        for i in ids {
            let _ = adm.query_drop(format!("KILL QUERY {i}"));
        }
    });
    let t0 = std::time::Instant::now();
    let r = c.query_rows("SELECT SLEEP(30)");
    h.join().unwrap();
    assert!(
        t0.elapsed().as_secs() < 10,
        "the kill ended the statement: {r:?}"
    );
    assert_eq!(
        c.query_int(a, &[V::Int(1)]).unwrap(),
        Some(1),
        "still usable"
    );

    // The server goes away: an error, then errors at once.
    let Fixture { server, _dir } = f;
    server.stop().unwrap();
    let e = format!("{:#}", c.query(a, &[V::Int(1)]).unwrap_err());
    assert!(!e.is_empty());
    let t0 = std::time::Instant::now();
    assert!(c.query(a, &[V::Int(1)]).is_err());
    assert!(t0.elapsed().as_secs() < 2);
}

/// MySQL 8's lock-wait queries (PROCESSLIST for the wait, performance_schema's metadata locks
/// for its holder: MySQL 8 has no information_schema InnoDB lock views), run on a real MariaDB
/// whose performance_schema has the same tables: a session waiting for a table's metadata lock
/// is seen, and the session holding it is named; a session that does not wait gives no row.
#[test]
fn mysql_8_lock_queries_see_a_wait_and_name_its_holder() {
    use ixbench::dbms::dialect::DbmsSql;
    use ixbench::dbms::mysql::dialect::MYSQL;
    let test = "mysql_8_lock_queries_see_a_wait_and_name_its_holder";
    let Some(f) = mariadb(
        test,
        false,
        &[
            ("performance_schema", "ON"),
            (
                "performance_schema_instrument",
                "wait/lock/metadata/sql/mdl=ON",
            ),
        ],
    ) else {
        return;
    };
    let t = dbms::open(
        &TargetSpec::parse(&f.server.url()).unwrap(),
        &TargetOptions::default(),
    )
    .unwrap();
    let id = |c: &mut Box<dyn Conn>| -> i64 {
        c.query_rows("SELECT CONNECTION_ID()").unwrap()[0][0]
            .clone()
            .unwrap()
            .parse()
            .unwrap()
    };
    let mut holder = t.connect().unwrap();
    let mut waiter = t.connect().unwrap();
    let mut watch = t.connect().unwrap();
    let (holder_id, waiter_id) = (id(&mut holder), id(&mut waiter));
    holder
        .execute("CREATE TABLE mdl8 (id int PRIMARY KEY)")
        .unwrap();
    let not_waiting = MYSQL.lock_wait_of_sql(waiter_id).unwrap();
    assert!(watch.query_rows(&not_waiting).unwrap().is_empty());
    holder.execute("BEGIN").unwrap();
    holder.query_rows("SELECT * FROM mdl8").unwrap();
    waiter
        .execute("SET SESSION lock_wait_timeout = 30")
        .unwrap();
    let alter = std::thread::spawn(move || {
        let r = waiter.execute("ALTER TABLE mdl8 ADD COLUMN v int");
        (waiter, r)
    });
    let q = MYSQL.lock_wait_of_sql(waiter_id).unwrap();
    let mut seen = None;
    for _ in 0..100 {
        if let Some(r) = watch.query_rows(&q).unwrap().into_iter().next() {
            seen = Some(r);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let row = seen.expect("the ALTER waiting for the metadata lock is seen");
    let state = row[1].clone().unwrap();
    assert!(state.contains("metadata lock"), "{row:?}");
    assert_eq!(row[2], None, "holders are asked apart: {row:?}");
    let hq = MYSQL
        .lock_holders_sql(waiter_id, &state.to_ascii_lowercase())
        .unwrap();
    let holders = watch.query_rows(&hq).unwrap()[0][0].clone();
    let holders = holders.expect("performance_schema names the holder");
    assert!(
        holders.contains(&format!("session {holder_id} ")),
        "{holders} (holder {holder_id}, waiter {waiter_id})"
    );
    assert!(
        !holders.contains(&format!("session {waiter_id} ")),
        "{holders}"
    );
    holder.execute("ROLLBACK").unwrap();
    let (_, r) = alter.join().unwrap();
    r.unwrap();
}
