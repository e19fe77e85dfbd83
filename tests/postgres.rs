//! The PostgreSQL target against real, throwaway PostgreSQL servers started by the tests
//! (`ixbench::server::start`), never a server of the machine.
//!
//! Without PostgreSQL binaries (initdb, postgres) a test that needs a server prints
//! `SKIPPED <name>: <why>` to stderr and returns; with `CI=true` it fails instead.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

use ixbench::dbms::postgres::Postgres;
use ixbench::dbms::TargetOptions;
use ixbench::server::{self, RunningServer, ServerKind, ServerOptions};
use ixbench::workload::iibench::{Batch, RowGen, Statements, TableSql};
use serde_json::Value;

/// A throwaway server, stopped when dropped (also when the test panics), and its directory.
struct Pg {
    server: Option<RunningServer>,
    _dir: tempfile::TempDir,
}

impl Pg {
    fn url(&self) -> String {
        self.server.as_ref().expect("server running").url()
    }

    fn password(&self) -> String {
        self.server
            .as_ref()
            .expect("server running")
            .password()
            .to_string()
    }

    fn datadir(&self) -> &Path {
        &self.server.as_ref().expect("server running").datadir
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            if let Err(e) = s.stop() {
                eprintln!("stopping the test server failed: {e:#}");
            }
        }
    }
}

/// Start a server for test `name`, or say why not: `None` means skipped.
fn start_pg(name: &str) -> Option<Pg> {
    if let Err(e) = server::check_installed(ServerKind::Postgres) {
        let why = format!("{e:#}");
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{name}: {why}; CI=true: PostgreSQL must be installed");
        }
        eprintln!("SKIPPED {name}: {why}");
        return None;
    }
    let dir = tempfile::Builder::new()
        .prefix("ixbench-pgtest-")
        .tempdir()
        .expect("temp dir");
    // The server may run as the postgres user (when the tests run as root): let it through.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod temp dir");
    }
    let opts = ServerOptions {
        datadir: dir.path().join("pgdata"),
        port: None,
        settings: Vec::new(),
        tls: None,
    };
    let server = server::start(ServerKind::Postgres, &opts)
        .unwrap_or_else(|e| panic!("{name}: cannot start a PostgreSQL server: {e:#}"));
    Some(Pg {
        server: Some(server),
        _dir: dir,
    })
}

/// `url` with `password` put after its user name.
fn with_password(url: &str, password: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("URL has a scheme");
    let (user, host) = rest.split_once('@').expect("URL has a user");
    let user = user.split(':').next().unwrap_or(user);
    format!("{scheme}://{user}:{password}@{host}")
}

/// `url` with another user name and no password.
fn with_user(url: &str, user: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("URL has a scheme");
    let (_, host) = rest.split_once('@').expect("URL has a user");
    format!("{scheme}://{user}@{host}")
}

fn ixbench(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ixbench"));
    cmd.args(args).env_remove("PGPASSWORD");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run the ixbench binary")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    )
}

/// Every file under `dir` (results), as text.
fn files_text(dir: &Path) -> String {
    let mut out = String::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.push_str(&files_text(&p));
            } else if let Ok(b) = std::fs::read(&p) {
                out.push_str(&text(&b));
            }
        }
    }
    out
}

fn assert_no_secret(secret: &str, o: &Output, results: &Path) {
    assert!(
        !text(&o.stdout).contains(secret),
        "password in stdout\n{}",
        show(o)
    );
    assert!(
        !text(&o.stderr).contains(secret),
        "password in stderr\n{}",
        show(o)
    );
    assert!(
        !files_text(results).contains(secret),
        "password in the results under {}",
        results.display()
    );
}

/// The error of a failed run: exit status 1 and exactly one line on stderr.
fn one_line_error(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(1), "{}", show(o));
    let err = text(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "not a one-line error\n{}", show(o));
    assert!(lines[0].starts_with("ixbench: error: "), "{}", show(o));
    lines[0].to_string()
}

fn steps(run: &Value) -> &Vec<Value> {
    run["steps"].as_array().expect("steps array")
}

#[test]
fn full_small_run_passes_every_check_with_index_only_plans() {
    let Some(pg) = start_pg("full_small_run_passes_every_check_with_index_only_plans") else {
        return;
    };
    // The server's generated password is on the command line: it must not show up in the
    // output or the results.
    let secret = pg.password();
    let secret = secret.as_str();
    let url = with_password(&pg.url(), secret);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = ixbench(
        &[
            "run",
            "--target",
            &url,
            "--out",
            out.to_str().unwrap(),
            "--rows",
            "3000",
            "--rows2",
            "1000",
            "--query-seconds",
            "1",
            "--rates",
            "100",
            "--table-prefix",
            "pgt_full",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert_no_secret(secret, &o, &out);

    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["status"], "ok");
    let target = &run["target"];
    assert_eq!(target["kind"], "postgres");
    let location = target["location"].as_str().unwrap();
    assert!(
        location.starts_with("postgres://postgres@127.0.0.1:") && location.ends_with("/ixbench"),
        "{location}"
    );
    assert!(!target["version"].as_str().unwrap().is_empty());
    let settings = target["settings"].as_array().unwrap();
    assert!(
        settings
            .iter()
            .any(|s| s[0] == "shared_buffers" && !s[1].as_str().unwrap().is_empty()),
        "no shared_buffers in {} settings",
        settings.len()
    );

    let names: Vec<&str> = steps(&run)
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["l.i0", "l.x", "l.i1", "l.i2", "maint", "qr100", "qp100"]
    );
    for s in steps(&run) {
        let name = s["name"].as_str().unwrap();
        assert_eq!(s["status"], "ok", "step {name}: {s}");
        let checks = s["checks"].as_array().unwrap();
        assert!(!checks.is_empty(), "step {name} has no checks");
        for c in checks {
            assert_eq!(c["ok"], true, "step {name}: check failed: {c}");
        }
        // l.x, maint and the query steps check that each index's range query is index-only.
        if matches!(name, "l.x" | "maint" | "qr100" | "qp100") {
            let plans: Vec<&str> = checks
                .iter()
                .filter(|c| c["name"] == "plan")
                .map(|c| c["detail"].as_str().unwrap())
                .collect();
            assert_eq!(plans.len(), 3, "step {name}: {plans:?}");
            for (p, idx) in plans
                .iter()
                .zip(["marketsegment", "registersegment", "pdc"])
            {
                assert!(
                    p.contains(&format!(
                        "Index Only Scan using pgt_full1_{idx} on pgt_full1"
                    )),
                    "step {name}: {p}"
                );
            }
            // Right after VACUUM every heap page is all-visible: no heap fetches at all.
            if name == "maint" {
                for p in &plans {
                    assert!(p.contains("Heap Fetches: 0"), "{p}");
                }
            }
        }
    }

    let by_name = |n: &str| steps(&run).iter().find(|s| s["name"] == n).unwrap();
    assert_eq!(by_name("l.i0")["totals"]["rows"][0], 3000);
    assert_eq!(by_name("l.i1")["totals"]["rows"][0], 800);
    assert_eq!(by_name("l.i1")["totals"]["rows"][1], 800);
    assert!(by_name("qr100")["summary"]["qps"].as_f64().unwrap() > 0.0);
    assert!(by_name("qp100")["summary"]["qps"].as_f64().unwrap() > 0.0);

    let maint = by_name("maint")["maintenance"].as_array().unwrap();
    let actions: Vec<&str> = maint
        .iter()
        .map(|m| m["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions[..2],
        ["VACUUM (ANALYZE, INDEX_CLEANUP ON) pgt_full1", "CHECKPOINT"],
        "{maint:?}"
    );
    assert!(
        !maint[1]["detail"].as_str().unwrap().contains("NOT RUN"),
        "{maint:?}"
    );
    let vm = maint[2]["detail"].as_str().unwrap();
    assert!(
        vm.contains("all-visible (100.0%)") && !vm.contains("WARNING"),
        "{vm}"
    );

    // Detailed sizes after the index builds: the table, its PK and the three indexes.
    let objects: Vec<&str> = by_name("l.x")["sizes"]["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o[0].as_str().unwrap())
        .collect();
    for want in [
        "pgt_full1",
        "pgt_full1_pkey",
        "pgt_full1_marketsegment",
        "pgt_full1_registersegment",
        "pgt_full1_pdc",
    ] {
        assert!(objects.contains(&want), "{want} not in {objects:?}");
    }
    assert!(by_name("l.x")["sizes"]["database_bytes"].as_u64().unwrap() > 0);
    // l.x's figures cover its builds: the window they are charged over holds the builds and
    // no wait for the statistics of an idle connection (each such wait was a 5 s time-out:
    // `l.x done in 0.0 s` next to `over the 15.0 s of its operations` before)
    let lx = by_name("l.x");
    let built: f64 = lx["index_builds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["seconds"].as_f64().unwrap())
        .sum();
    let window = lx["window_secs"].as_f64().unwrap();
    assert!(
        window >= built * 0.99 && window < built + 5.0,
        "l.x window {window} s for {built} s of builds"
    );
    assert!(
        lx["outside"]["seconds"].as_f64().unwrap() < 5.0,
        "{}",
        lx["outside"]
    );
}

#[test]
fn unreachable_port_is_a_one_line_error_without_the_password() {
    // A port nothing listens on: bind one, then free it.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let secret = "Secret-Pw-51c2";
    let url = format!("postgres://bench:{secret}@127.0.0.1:{port}/nowhere");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = ixbench(
        &["run", "--target", &url, "--out", out.to_str().unwrap()],
        &[],
    );
    let err = one_line_error(&o);
    assert!(
        err.contains(&format!("postgres://bench@127.0.0.1:{port}/nowhere")),
        "{err}"
    );
    assert!(err.contains("Connection refused"), "{err}");
    assert_no_secret(secret, &o, &out);
}

#[test]
fn access_errors_are_one_line_and_name_the_server_without_the_password() {
    let name = "access_errors_are_one_line_and_name_the_server_without_the_password";
    let Some(pg) = start_pg(name) else {
        return;
    };
    let right = "Right-Pw-3a9e";
    let wrong = "Wrong-Pw-77b0";
    // A role that must give its password (scram) from 127.0.0.1, ahead of the server's rules.
    let admin = Postgres::open(&pg.url(), &TargetOptions::default()).unwrap();
    let mut c = admin.connect().unwrap();
    c.execute(&format!(
        "CREATE ROLE ixb_pw LOGIN PASSWORD '{right}'; GRANT CREATE ON SCHEMA public TO ixb_pw"
    ))
    .unwrap();
    let hba = pg.datadir().join("pg_hba.conf");
    let old = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(
        &hba,
        format!("host all ixb_pw 127.0.0.1/32 scram-sha-256\n{old}"),
    )
    .unwrap();
    c.query_rows("SELECT pg_reload_conf()").unwrap();
    // The reload is asynchronous: wait until the rule is in force.
    let user_url = with_user(&pg.url(), "ixb_pw");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while Postgres::open_raw(&with_password(&user_url, wrong)).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "pg_hba.conf reload not in force"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }

    let tmp = tempfile::tempdir().unwrap();
    let run = |n: &str, url: &str, env: &[(&str, &str)]| {
        let out = tmp.path().join(n);
        let o = ixbench(
            &[
                "run",
                "--target",
                url,
                "--out",
                out.to_str().unwrap(),
                "--steps",
                "l.i0",
                "--rows",
                "200",
                "--table-prefix",
                "pgt_pw",
            ],
            env,
        );
        for secret in [right, wrong] {
            assert_no_secret(secret, &o, &out);
        }
        o
    };

    // Wrong password in the URL.
    let o = run("a", &with_password(&user_url, wrong), &[]);
    let err = one_line_error(&o);
    assert!(
        err.contains("28P01") && err.contains("password authentication failed"),
        "{err}"
    );
    assert!(err.contains(&user_url), "target not named: {err}");

    // Wrong password in PGPASSWORD.
    let o = run("b", &user_url, &[("PGPASSWORD", wrong)]);
    let err = one_line_error(&o);
    assert!(err.contains("28P01") && err.contains("PGPASSWORD"), "{err}");

    // No password at all.
    let o = run("c", &user_url, &[]);
    let err = one_line_error(&o);
    assert!(err.contains("asks user ixb_pw for a password"), "{err}");

    // The right one, from PGPASSWORD: the run works, so the failures above were the password's.
    let o = run("d", &user_url, &[("PGPASSWORD", right)]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));

    // A database that does not exist.
    let no_db = format!("{}/nosuchdb", user_url.rsplit_once('/').unwrap().0);
    let o = run("e", &with_password(&no_db, right), &[]);
    let err = one_line_error(&o);
    assert!(
        err.contains("3D000") && err.contains("\"nosuchdb\" does not exist"),
        "{err}"
    );
    assert!(err.contains(&no_db), "target not named: {err}");

    // A user that may connect but not use what ixbench needs (it cannot read ixbench_tables,
    // owned by ixb_pw since run d, nor create tables: no CREATE on public in PostgreSQL 15+).
    // (Throwaway servers ask every user for a password.)
    c.execute(&format!(
        "CREATE ROLE ixb_nocreate LOGIN PASSWORD '{right}'"
    ))
    .unwrap();
    let o = run(
        "f",
        &with_user(&pg.url(), "ixb_nocreate"),
        &[("PGPASSWORD", right)],
    );
    let err = one_line_error(&o);
    assert!(
        err.contains("42501") && err.contains("permission denied"),
        "{err}"
    );
    assert!(
        err.contains(&with_user(&pg.url(), "ixb_nocreate")),
        "target not named: {err}"
    );
}

#[test]
fn a_table_ixbench_did_not_create_is_refused_and_kept() {
    let Some(pg) = start_pg("a_table_ixbench_did_not_create_is_refused_and_kept") else {
        return;
    };
    let target = Postgres::open(&pg.url(), &TargetOptions::default()).unwrap();
    let mut c = target.connect().unwrap();
    c.execute("CREATE TABLE pgt_theirs1 (x int); INSERT INTO pgt_theirs1 VALUES (42)")
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for (n, steps) in [("a", "l.i0"), ("b", "l.x"), ("c", "l.i1")] {
        let out = tmp.path().join(n);
        let o = ixbench(
            &[
                "run",
                "--target",
                &pg.url(),
                "--out",
                out.to_str().unwrap(),
                "--steps",
                steps,
                "--rows",
                "100",
                "--table-prefix",
                "pgt_theirs",
            ],
            &[],
        );
        let err = one_line_error(&o);
        assert!(
            err.contains("pgt_theirs1") && err.contains("not created by ixbench"),
            "{steps}: {err}"
        );
        let rows = c.query_rows("SELECT x FROM pgt_theirs1").unwrap();
        assert_eq!(rows, vec![vec![Some("42".to_string())]], "after {steps}");
    }
}

#[test]
fn row_counters_count_every_row_of_closed_connections() {
    let Some(pg) = start_pg("row_counters_count_every_row_of_closed_connections") else {
        return;
    };
    let target = Postgres::open(&pg.url(), &TargetOptions::default()).unwrap();
    let mut main = target.connect().unwrap();
    let t = std::sync::Arc::new(TableSql::new("pgt_rc1", target.dialect()));
    main.execute(&t.create_table()).unwrap();
    let tables = vec!["pgt_rc1".to_string()];
    let before = target
        .row_counters(main.as_mut(), &tables)
        .unwrap()
        .expect("PostgreSQL keeps row counters");

    // Eight writers and a deleter on their own connections, all closed just before the
    // counters are read: a backend flushes its statistics only when it exits (or at most once
    // a second), so the counters must wait for them.
    let mut gen = RowGen::new(5, 10, 20);
    let mut batch = Batch::default();
    gen.fill(&mut batch, 100, 1_700_000_000);
    let mut d = target.connect().unwrap();
    let mut writers: Vec<_> = (0..8).map(|_| target.connect().unwrap()).collect();
    std::thread::scope(|s| {
        for c in writers.iter_mut() {
            let (t, b) = (&t, &batch);
            s.spawn(move || {
                let mut st = Statements::new(t.clone(), true);
                for _ in 0..7 {
                    st.insert(c.as_mut(), b).unwrap();
                }
            });
        }
    });
    let del = Statements::new(t.clone(), true)
        .delete_oldest(d.as_mut(), 0, 250)
        .unwrap();
    assert_eq!(del.rows, 250);
    drop(writers);
    drop(d);
    let after = target
        .row_counters(main.as_mut(), &tables)
        .unwrap()
        .unwrap();
    assert_eq!(
        after.inserted - before.inserted,
        5600,
        "{before:?} {after:?}"
    );
    assert_eq!(after.deleted - before.deleted, 250, "{before:?} {after:?}");
    assert_eq!(t.count_rows(main.as_mut()).unwrap(), 5600 - 250);

    // Deleting from where the last delete ended removes the next rows, in PK order.
    let mut d = target.connect().unwrap();
    let del2 = Statements::new(t.clone(), true)
        .delete_oldest(d.as_mut(), del.next_from, 10)
        .unwrap();
    assert_eq!(del2.rows, 10);
    assert_eq!(t.count_rows(main.as_mut()).unwrap(), 5600 - 260);
    let (min, _) = t.min_max_ids(main.as_mut()).unwrap().unwrap();
    assert!(min >= del2.next_from, "{min} {del2:?}");
}

#[test]
fn serialization_failure_is_retryable_and_other_errors_are_not() {
    let Some(pg) = start_pg("serialization_failure_is_retryable_and_other_errors_are_not") else {
        return;
    };
    let target = Postgres::open(&pg.url(), &TargetOptions::default()).unwrap();
    let mut a = target.connect().unwrap();
    let mut b = target.connect().unwrap();
    a.execute("CREATE TABLE pgt_ser (k int PRIMARY KEY, v int); INSERT INTO pgt_ser VALUES (1, 0)")
        .unwrap();
    // A repeatable-read transaction that updates a row another transaction changed after its
    // snapshot fails with 40001.
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    a.query_rows("SELECT v FROM pgt_ser").unwrap();
    b.execute("UPDATE pgt_ser SET v = 1 WHERE k = 1").unwrap();
    let e = a
        .execute("UPDATE pgt_ser SET v = 2 WHERE k = 1")
        .expect_err("concurrent update must fail");
    assert!(format!("{e:#}").contains("40001"), "{e:#}");
    assert!(a.is_retryable(&e), "{e:#}");
    a.execute("ROLLBACK").unwrap();
    // Not transient: a duplicate key.
    let e = a
        .execute("INSERT INTO pgt_ser VALUES (1, 3)")
        .expect_err("duplicate key");
    assert!(!a.is_retryable(&e), "{e:#}");
    assert!(!format!("{e:#}").contains('\n'), "{e:#}");
}

/// ixbench's own PostgreSQL client (src/dbms/pgwire.rs) against a real server: each way the
/// server may ask for a password (SCRAM-SHA-256, md5, cleartext, none), typed parameters in
/// and integers out, rows larger than the read buffer, an error in the middle of a
/// transaction and of a multi-statement string (the connection stays in step and usable),
/// notices, a cancelled statement, and a server that goes away (an error, not a hang).
#[test]
fn own_client_authenticates_every_way_and_stays_in_step() {
    use ixbench::dbms::{Conn, Stmt, Value as V};
    let Some(mut pg) = start_pg("own_client_authenticates_every_way_and_stays_in_step") else {
        return;
    };
    let admin = Postgres::open_raw(&pg.url()).unwrap();
    let mut c = admin.connect_raw().unwrap();
    let pw = "s3cret-Pass";
    c.execute(&format!(
        "SET password_encryption = 'md5'; CREATE ROLE ixb_md5 LOGIN PASSWORD '{pw}'; \
         CREATE ROLE ixb_clear LOGIN PASSWORD '{pw}'; CREATE ROLE ixb_trust LOGIN; \
         SET password_encryption = 'scram-sha-256'; CREATE ROLE ixb_scram LOGIN PASSWORD '{pw}'"
    ))
    .unwrap();
    let hba = c.query_rows("SHOW hba_file").unwrap()[0][0]
        .clone()
        .unwrap();
    let old = std::fs::read_to_string(&hba).unwrap();
    let ours = "host all ixb_md5 127.0.0.1/32 md5\nhost all ixb_clear 127.0.0.1/32 password\n\
                host all ixb_trust 127.0.0.1/32 trust\n";
    std::fs::write(&hba, format!("{ours}{old}")).unwrap();
    c.execute("SELECT pg_reload_conf()").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    for (user, with_pw) in [
        ("ixb_scram", true),
        ("ixb_md5", true),
        ("ixb_clear", true),
        ("ixb_trust", false),
    ] {
        let mut url = with_user(&pg.url(), user);
        if with_pw {
            url = with_password(&url, pw);
        }
        let t = Postgres::open_raw(&url).unwrap_or_else(|e| panic!("{user}: {e:#}"));
        let mut u = t.connect_raw().unwrap();
        let rows = u.query_rows("SELECT current_user").unwrap();
        assert_eq!(rows[0][0].as_deref(), Some(user));
        if with_pw {
            let bad = with_password(&with_user(&pg.url(), user), "wrong");
            let e = format!(
                "{:#}",
                Postgres::open_raw(&bad).err().expect("wrong password")
            );
            assert!(e.contains("28P01") && !e.contains("wrong"), "{user}: {e}");
        }
    }

    // Over the server's Unix socket (password from the throwaway server's file).
    let srv = pg.server.as_ref().unwrap();
    if let Some(sock) = &srv.socket {
        let dir = sock.parent().unwrap().display().to_string();
        let url = format!("postgres://postgres@/ixbench?host={dir}&port={}", srv.port);
        let t = Postgres::open_raw(&url).unwrap_or_else(|e| panic!("{url}: {e:#}"));
        let mut u = t.connect_raw().unwrap();
        let rows = u.query_rows("SELECT inet_server_addr() IS NULL").unwrap();
        assert_eq!(rows[0][0].as_deref(), Some("t"), "a socket connection");
    } else {
        panic!("the throwaway server has no socket");
    }

    // Typed parameters in, rows and integers out.
    c.execute(
        "CREATE TABLE pgt_wire (id int8 PRIMARY KEY, a int4, b int2, f float8, r float4, \
         ts timestamp, s varchar(10), t text, ch char(3))",
    )
    .unwrap();
    let ins = c
        .prepare("INSERT INTO pgt_wire VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)")
        .unwrap();
    let n = c
        .exec(
            ins,
            &[
                V::Int(1),
                V::Int(-7),
                V::Int(3),
                V::Float(2.5),
                V::Float(0.25),
                V::Timestamp(1_700_000_000),
                V::Text("héllo"),
                V::Text("t"),
                V::Text("abc"),
            ],
        )
        .unwrap();
    assert_eq!(n, 1);
    c.exec(
        ins,
        &[
            V::Int(2),
            V::Null,
            V::Null,
            V::Int(4),
            V::Null,
            V::Null,
            V::Null,
            V::Null,
            V::Null,
        ],
    )
    .unwrap();
    let back = c
        .query_rows("SELECT a, b, f, r, ts, s, ch FROM pgt_wire WHERE id = 1")
        .unwrap();
    assert_eq!(
        back[0],
        [
            "-7",
            "3",
            "2.5",
            "0.25",
            "2023-11-14 22:13:20",
            "héllo",
            "abc"
        ]
        .iter()
        .map(|s| Some(s.to_string()))
        .collect::<Vec<_>>()
    );
    let sum: Stmt = c.prepare("SELECT sum(id)::int8 FROM pgt_wire").unwrap();
    assert_eq!(c.query_int(sum, &[]).unwrap(), Some(3));
    let a = c.prepare("SELECT a FROM pgt_wire WHERE id = $1").unwrap();
    assert_eq!(c.query_int(a, &[V::Int(1)]).unwrap(), Some(-7));
    assert_eq!(c.query_int(a, &[V::Int(2)]).unwrap(), None, "NULL");
    assert_eq!(c.query_int(a, &[V::Int(9)]).unwrap(), None, "no row");
    let numeric = c.prepare("SELECT sum(id) FROM pgt_wire").unwrap();
    let e = format!("{:#}", c.query_int(numeric, &[]).unwrap_err());
    assert!(e.contains("NUMERIC"), "{e}");
    let e = format!("{:#}", c.exec(ins, &[V::Int(1)]).unwrap_err());
    assert!(e.contains("9 parameters, 1 given"), "{e}");
    let e = format!("{:#}", c.query(a, &[V::Text("x")]).unwrap_err());
    assert!(e.contains("cannot send") && e.contains("int8"), "{e}");
    // A parameter that did not fit was not half sent: the connection still works.
    assert_eq!(c.query(a, &[V::Int(1)]).unwrap(), 1);

    // Rows much larger than the 16 KiB read buffer, and many of them.
    let big = c
        .prepare("SELECT repeat('x', $1::int4), g FROM generate_series(1, 50) g")
        .unwrap();
    assert_eq!(c.query(big, &[V::Int(100_000)]).unwrap(), 50);
    let rows = c.query_rows("SELECT repeat('y', 70000)").unwrap();
    assert_eq!(rows[0][0].as_ref().map(String::len), Some(70_000));

    // An error inside a transaction: the transaction is aborted, the connection is not.
    c.begin(ixbench::dbms::TxnKind::Write).unwrap();
    let dup = [
        V::Int(1),
        V::Null,
        V::Null,
        V::Null,
        V::Null,
        V::Null,
        V::Null,
        V::Null,
        V::Null,
    ];
    let e = format!("{:#}", c.exec(ins, &dup).unwrap_err());
    assert!(e.contains("23505"), "{e}");
    let e = format!("{:#}", c.query(a, &[V::Int(1)]).unwrap_err());
    assert!(e.contains("25P02"), "in an aborted transaction: {e}");
    c.rollback().unwrap();
    assert_eq!(c.query(a, &[V::Int(1)]).unwrap(), 1);
    // An error in the middle of several statements: the ones before ran, the rest did not.
    let e = c
        .execute("INSERT INTO pgt_wire (id) VALUES (10); SELECT 1/0; INSERT INTO pgt_wire (id) VALUES (11)")
        .unwrap_err();
    assert!(format!("{e:#}").contains("22012"), "{e:#}");
    assert_eq!(
        c.query_rows("SELECT count(*) FROM pgt_wire WHERE id >= 10")
            .unwrap()[0][0]
            .as_deref(),
        Some("0"),
        "one implicit transaction: all rolled back"
    );
    assert_eq!(c.exec_text("UPDATE pgt_wire SET a = 1").unwrap(), 2);
    assert_eq!(c.query_text("SELECT * FROM pgt_wire").unwrap(), 2);
    assert!(c.table_exists("PGT_WIRE").unwrap());
    assert!(!c.table_exists("pgt_nope").unwrap());
    assert!(c.index_exists("pgt_wire", "pgt_wire_pkey").unwrap());

    // A statement cancelled from another thread (what Ctrl-C does) ends with 57014.
    let t0 = std::time::Instant::now();
    let key = c.cancel_key();
    let h = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        key.cancel().unwrap();
    });
    let e = format!("{:#}", c.execute("SELECT pg_sleep(30)").unwrap_err());
    h.join().unwrap();
    assert!(e.contains("57014"), "{e}");
    assert!(t0.elapsed().as_secs() < 10);
    assert_eq!(c.query(a, &[V::Int(1)]).unwrap(), 1);

    // The server goes away: an error naming the lost connection, then errors at once.
    pg.server.take().unwrap().stop().unwrap();
    let e = format!("{:#}", c.query(a, &[V::Int(1)]).unwrap_err());
    assert!(
        e.contains("57P01") || e.contains("connection") || e.contains("communicating"),
        "{e}"
    );
    let t0 = std::time::Instant::now();
    assert!(c.query(a, &[V::Int(1)]).is_err());
    assert!(t0.elapsed().as_secs() < 2);
}
