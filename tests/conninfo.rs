//! The native clients' conventions, end to end through the ixbench binary against real
//! throwaway servers: PostgreSQL log-ins via `PGPASSWORD`, a password file (`PGPASSFILE`, mode
//! 0600; one with 0644 ignored with libpq's warning), a service file (`PGSERVICEFILE` +
//! `service=`), a `key=value` connection string, `PGSSLMODE=require` against a TLS server;
//! MariaDB log-ins via `?defaults-file=`, `MYSQL_PWD`, `~/.my.cnf` (HOME set to a temporary
//! directory in the child) and `MYSQL_TCP_PORT`. Precedence is checked with conflicting values
//! (the wrong one must lose), the results must say where the password came from and never
//! hold it, and the environment must not redirect ixbench's own throwaway servers.
//!
//! Each run is a child process with its own environment: the test process's environment is
//! never changed (tests run in parallel threads).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{run_json, start_server, text};
use ixbench::dbms::{self, TargetOptions, TargetSpec};
use ixbench::server::ServerKind;

/// A child's home directory and results, and how to run ixbench there.
struct Child {
    dir: tempfile::TempDir,
    n: std::cell::Cell<u32>,
}

impl Child {
    fn new() -> Child {
        let dir = tempfile::Builder::new()
            .prefix("ixbench-conninfo-")
            .tempdir()
            .unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        Child {
            dir,
            n: std::cell::Cell::new(0),
        }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// Write `text` to `name` (under the child's home) with `mode`.
    fn file(&self, name: &str, text: &str, mode: u32) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = self.home().join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    /// `ixbench run` of one small step on `target` (no quiet wait), in an environment of only `env` (plus
    /// PATH, HOME set to the child's home, and the registry of the servers the test
    /// started): no `PG*` or `MYSQL_*` variable of the test's own environment leaks in.
    /// Returns the output and the results directory.
    fn run(&self, target: &str, env: &[(&str, &str)]) -> (Output, PathBuf) {
        self.n.set(self.n.get() + 1);
        let out = self.dir.path().join(format!("r{}", self.n.get()));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ixbench"));
        cmd.args([
            "run",
            "--target",
            target,
            "--out",
            out.to_str().unwrap(),
            "--steps",
            "l.i0",
            "--rows",
            "100",
            // What is checked is how the connection was made: no wait for a quiet server
            // (about a second a run, 32 runs).
            "--quiet-timeout",
            "0",
            "--table-prefix",
            &format!("conv{}", self.n.get()),
        ]);
        for (k, _) in std::env::vars() {
            if k.starts_with("PG") || k.starts_with("MYSQL") || k == "MARIADB_HOME" {
                cmd.env_remove(k);
            }
        }
        // The registry of the servers this test started stays where it is.
        let state = std::env::var("XDG_STATE_HOME").unwrap_or_else(|_| {
            format!("{}/.local/state", std::env::var("HOME").unwrap_or_default())
        });
        cmd.env("XDG_STATE_HOME", state).env("HOME", self.home());
        for (k, v) in env {
            cmd.env(k, v);
        }
        (cmd.output().expect("ixbench runs"), out)
    }
}

fn show(o: &Output) -> String {
    let (so, se) = text(o);
    format!(
        "exit {:?}\n--- stdout\n{so}\n--- stderr\n{se}",
        o.status.code()
    )
}

/// Every file under `dir`, as text.
fn files_text(dir: &Path) -> String {
    let mut s = String::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                s.push_str(&files_text(&p));
            } else if let Ok(t) = std::fs::read(&p) {
                s.push_str(&String::from_utf8_lossy(&t));
            }
        }
    }
    s
}

/// The run worked, its results say the password came from `from`, and no secret is in its
/// output or results.
fn ok_from(r: &(Output, PathBuf), from: &str, secrets: &[&str]) -> serde_json::Value {
    let (o, out) = r;
    assert_eq!(o.status.code(), Some(0), "{}", show(o));
    let (so, se) = text(o);
    let files = files_text(out);
    for s in secrets {
        assert!(
            !so.contains(s) && !se.contains(s),
            "password printed\n{}",
            show(o)
        );
        assert!(
            !files.contains(s),
            "password in the results {}",
            out.display()
        );
    }
    let run = run_json(out);
    let notes = run["target"]["notes"].to_string();
    assert!(
        notes.contains(&format!("password: from {from}")),
        "want password from {from}: {notes}"
    );
    run
}

/// The run failed with one `ixbench: error:` line holding `want` (after any warnings), no
/// secret printed. Returns stderr.
fn failed(r: &(Output, PathBuf), want: &str, secrets: &[&str]) -> String {
    let (o, _) = r;
    assert_eq!(o.status.code(), Some(1), "{}", show(o));
    let (so, se) = text(o);
    for s in secrets {
        assert!(
            !so.contains(s) && !se.contains(s),
            "password printed\n{}",
            show(o)
        );
    }
    let errors: Vec<&str> = se
        .lines()
        .filter(|l| l.starts_with("ixbench: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", show(o));
    assert!(errors[0].contains(want), "want {want:?}\n{}", show(o));
    se
}

fn openssl_cert(dir: &Path) -> bool {
    Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
        ])
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// PostgreSQL: every source of settings, and which wins when they disagree.
#[test]
fn postgres_environment_service_file_and_pgpass() {
    let test = "postgres_environment_service_file_and_pgpass";
    let Some(s) = start_server(test, ServerKind::Postgres, false) else {
        return;
    };
    let right = "conv-Right-5e1d";
    let wrong = "conv-Wrong-90aa";
    let secrets = [right, wrong, s.password()];
    let port = s.port.to_string();
    // TLS on (a self-signed certificate), a role that must give its password.
    let dd = &s.datadir;
    assert!(openssl_cert(dd), "openssl makes a certificate");
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let meta = std::fs::metadata(dd).unwrap();
        for f in ["server.crt", "server.key"] {
            let p = dd.join(f);
            std::os::unix::fs::chown(&p, Some(meta.uid()), Some(meta.gid())).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
    }
    let admin = format!("{}?sslmode=disable", s.url_with_password());
    let pg = dbms::open(
        &TargetSpec::parse(&admin).unwrap(),
        &TargetOptions::default(),
    )
    .unwrap();
    let mut c = pg.connect().unwrap();
    for sql in [
        "ALTER SYSTEM SET ssl = on",
        "ALTER SYSTEM SET ssl_cert_file = 'server.crt'",
        "ALTER SYSTEM SET ssl_key_file = 'server.key'",
        &format!("CREATE ROLE conv_u LOGIN PASSWORD '{right}'"),
        "GRANT CREATE ON SCHEMA public TO conv_u",
    ] {
        c.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e:#}"));
    }
    c.query_rows("SELECT pg_reload_conf()").unwrap();
    drop(c);
    let tls_url = format!("postgres://conv_u:{right}@127.0.0.1:{port}/ixbench?sslmode=require");
    let t0 = std::time::Instant::now();
    while dbms::open(
        &TargetSpec::parse(&tls_url).unwrap(),
        &TargetOptions::default(),
    )
    .is_err()
    {
        assert!(t0.elapsed().as_secs() < 20, "TLS never came on");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }

    let ch = Child::new();
    let bare = format!("postgres://conv_u@127.0.0.1:{port}/ixbench");

    // PGPASSWORD, and a wrong one loses to the URL's.
    ok_from(
        &ch.run(&bare, &[("PGPASSWORD", right)]),
        "PGPASSWORD",
        &secrets,
    );
    let with_pw = format!("postgres://conv_u:{right}@127.0.0.1:{port}/ixbench");
    ok_from(
        &ch.run(&with_pw, &[("PGPASSWORD", wrong)]),
        "the target given",
        &secrets,
    );
    failed(&ch.run(&bare, &[("PGPASSWORD", wrong)]), "28P01", &secrets);

    // A password file (0600) through PGPASSFILE: escapes, a wildcard, the first match wins;
    // PGPASSWORD wins over it.
    let pgpass = ch.file(
        "pgpass",
        &format!(
            "# comment\nother:*:*:*:{wrong}\n127.0.0.1:{port}:ixbench:conv_u:{right}\n\
             *:*:*:conv_u:{wrong}\n"
        ),
        0o600,
    );
    let pf = pgpass.to_str().unwrap();
    ok_from(&ch.run(&bare, &[("PGPASSFILE", pf)]), "~/pgpass", &secrets);
    ok_from(
        &ch.run(&bare, &[("PGPASSFILE", pf), ("PGPASSWORD", right)]),
        "PGPASSWORD",
        &secrets,
    );
    let first_wrong = ch.file(
        "pgpass-wrong-first",
        &format!("*:{port}:*:conv_u:{wrong}\n127.0.0.1:{port}:ixbench:conv_u:{right}\n"),
        0o600,
    );
    failed(
        &ch.run(&bare, &[("PGPASSFILE", first_wrong.to_str().unwrap())]),
        "28P01",
        &secrets,
    );
    // ~/.pgpass by default.
    ch.file(
        ".pgpass",
        &format!("127.0.0.1:{port}:*:conv_u:{right}\n"),
        0o600,
    );
    ok_from(&ch.run(&bare, &[]), "~/.pgpass", &secrets);
    std::fs::remove_file(ch.home().join(".pgpass")).unwrap();
    // 0644: ignored with libpq's warning, so no password is sent.
    let open = ch.file("pgpass-open", &format!("*:*:*:*:{right}\n"), 0o644);
    let se = failed(
        &ch.run(&bare, &[("PGPASSFILE", open.to_str().unwrap())]),
        "asks user conv_u for a password",
        &secrets,
    );
    assert!(
        se.contains("has group or world access; permissions should be u=rw (0600) or less"),
        "{se}"
    );

    // A service file: its settings beat the environment's, the target's beat its.
    let svc = ch.file(
        "services.conf",
        &format!(
            "[other]\nhost=192.0.2.1\n[bench]\nhost=127.0.0.1\nport={port}\ndbname=ixbench\n\
             user=conv_u\npassword={right}\n"
        ),
        0o644,
    );
    let sf = svc.to_str().unwrap();
    let run = ok_from(
        &ch.run(
            "service=bench",
            &[
                ("PGSERVICEFILE", sf),
                ("PGHOST", "192.0.2.1"),
                ("PGPORT", "1"),
                ("PGPASSWORD", wrong),
            ],
        ),
        "service bench in ~/services.conf",
        &secrets,
    );
    assert_eq!(run["target"]["transport"]["tls"], true, "prefer uses TLS");
    ok_from(
        &ch.run(
            "postgres://",
            &[("PGSERVICEFILE", sf), ("PGSERVICE", "bench")],
        ),
        "service bench",
        &secrets,
    );
    failed(
        &ch.run(
            &format!("service=bench password={wrong}"),
            &[("PGSERVICEFILE", sf)],
        ),
        "28P01",
        &secrets,
    );
    failed(
        &ch.run("service=nope", &[("PGSERVICEFILE", sf)]),
        "definition of service \"nope\" not found",
        &secrets,
    );

    // A key=value string, quoted as libpq quotes, and the environment filling what it
    // leaves out; its port wins over PGPORT.
    ok_from(
        &ch.run(
            &format!("host = 127.0.0.1 port={port} dbname='ixbench' password='{right}'"),
            &[("PGUSER", "conv_u"), ("PGPORT", "1")],
        ),
        "the target given",
        &secrets,
    );
    ok_from(
        &ch.run(
            "dbname=ixbench",
            &[
                ("PGHOST", "127.0.0.1"),
                ("PGPORT", &port),
                ("PGUSER", "conv_u"),
                ("PGPASSWORD", right),
            ],
        ),
        "PGPASSWORD",
        &secrets,
    );

    // PGSSLMODE against the TLS server; the target's sslmode wins over it.
    let run = ok_from(
        &ch.run(&bare, &[("PGPASSWORD", right), ("PGSSLMODE", "require")]),
        "PGPASSWORD",
        &secrets,
    );
    assert_eq!(run["target"]["transport"]["tls"], true, "{}", run["target"]);
    assert_eq!(run["target"]["transport"]["tls_mode"], "sslmode=require");
    let run = ok_from(
        &ch.run(
            &format!("{bare}?sslmode=disable"),
            &[("PGPASSWORD", right), ("PGSSLMODE", "require")],
        ),
        "PGPASSWORD",
        &secrets,
    );
    assert_eq!(
        run["target"]["transport"]["tls"], false,
        "{}",
        run["target"]
    );
    // PGSSLMODE=verify-full without a root certificate is refused, naming what is missing.
    failed(
        &ch.run(
            &bare,
            &[("PGPASSWORD", right), ("PGSSLMODE", "verify-full")],
        ),
        "needs a root certificate",
        &secrets,
    );
    // A setting ixbench cannot honour is refused, naming its source.
    failed(
        &ch.run(
            &bare,
            &[
                ("PGPASSWORD", right),
                ("PGTARGETSESSIONATTRS", "read-write"),
            ],
        ),
        "from PGTARGETSESSIONATTRS",
        &secrets,
    );

    // ixbench's own server (the URL --target postgres connects with) is not redirected.
    let hostile = [
        ("PGHOST", "192.0.2.1"),
        ("PGPORT", "1"),
        ("PGUSER", "nobody"),
        ("PGDATABASE", "nope"),
        ("PGPASSWORD", wrong),
        ("PGSSLMODE", "verify-full"),
        ("PGSERVICE", "nope"),
        ("PGPASSFILE", open.to_str().unwrap()),
        ("PGTARGETSESSIONATTRS", "read-write"),
    ];
    ok_from(
        &ch.run(&s.url(), &hostile),
        "the throwaway server ixbench started",
        &secrets,
    );
    let (o, out) = ch.run("postgres", &hostile);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let notes = run_json(&out)["target"]["notes"].to_string();
    assert!(
        notes.contains("password: from the throwaway server ixbench started"),
        "{notes}"
    );
    assert!(!files_text(&out).contains(wrong));
}

/// MariaDB: option files, MYSQL_PWD, MYSQL_TCP_PORT, and which wins when they disagree.
#[test]
fn mariadb_option_files_and_environment() {
    let test = "mariadb_option_files_and_environment";
    let Some(s) = start_server(test, ServerKind::Mariadb, false) else {
        return;
    };
    let right = "conv-Right-71c4";
    let wrong = "conv-Wrong-0b3e";
    let secrets = [right, wrong, s.password()];
    let port = s.port.to_string();
    let m = dbms::open(
        &TargetSpec::parse(&s.url_with_password()).unwrap(),
        &TargetOptions::default(),
    )
    .unwrap();
    let mut c = m.connect().unwrap();
    for sql in [
        format!("CREATE USER conv_u@'%' IDENTIFIED BY '{right}'"),
        "GRANT ALL ON ixbench.* TO conv_u@'%'".to_string(),
    ] {
        c.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e:#}"));
    }
    drop(c);
    let ch = Child::new();
    let bare = format!("mysql://conv_u@127.0.0.1:{port}/ixbench");

    // MYSQL_PWD; the URL's password wins over it.
    ok_from(
        &ch.run(&bare, &[("MYSQL_PWD", right)]),
        "MYSQL_PWD",
        &secrets,
    );
    ok_from(
        &ch.run(
            &format!("mysql://conv_u:{right}@127.0.0.1:{port}/ixbench"),
            &[("MYSQL_PWD", wrong)],
        ),
        "the URL",
        &secrets,
    );
    failed(
        &ch.run(&bare, &[("MYSQL_PWD", wrong)]),
        "Access denied",
        &secrets,
    );

    // ~/.my.cnf [client] wins over MYSQL_PWD; its [mysql] and [mysqld] groups are not read;
    // the URL wins over it.
    ch.file(
        ".my.cnf",
        &format!("[mysql]\npassword={wrong}\n[client]\npassword=\"{right}\"\n[mysqld]\nport=1\n"),
        0o600,
    );
    ok_from(
        &ch.run(&bare, &[("MYSQL_PWD", wrong)]),
        "~/.my.cnf",
        &secrets,
    );
    failed(
        &ch.run(
            &format!("mysql://conv_u:{wrong}@127.0.0.1:{port}/ixbench"),
            &[],
        ),
        "Access denied",
        &secrets,
    );
    // Its port wins over MYSQL_TCP_PORT; MYSQL_TCP_PORT over the default.
    ch.file(
        ".my.cnf",
        &format!("[client]\npassword={right}\nport={port}\n"),
        0o600,
    );
    let no_port = "mysql://conv_u@127.0.0.1/ixbench";
    ok_from(
        &ch.run(no_port, &[("MYSQL_TCP_PORT", "1")]),
        "~/.my.cnf",
        &secrets,
    );
    std::fs::remove_file(ch.home().join(".my.cnf")).unwrap();
    ok_from(
        &ch.run(no_port, &[("MYSQL_TCP_PORT", &port), ("MYSQL_PWD", right)]),
        "MYSQL_PWD",
        &secrets,
    );

    // --defaults-file: everything from that file only (~/.my.cnf, wrong, is not read).
    ch.file(".my.cnf", &format!("[client]\npassword={wrong}\n"), 0o600);
    let df = ch.file(
        "bench.cnf",
        &format!(
            "[client]\nuser=conv_u\nhost=127.0.0.1\nport={port}\npassword={right}\n\
             [ixbench]\ndatabase=ixbench\n"
        ),
        0o600,
    );
    let df = df.to_str().unwrap();
    ok_from(
        &ch.run(
            &format!("mysql://?defaults-file={df}"),
            &[("MYSQL_PWD", wrong)],
        ),
        "~/bench.cnf",
        &secrets,
    );
    // defaults-extra-file is read before ~/.my.cnf, which wins.
    failed(
        &ch.run(&format!("mysql://?defaults-extra-file={df}"), &[]),
        "Access denied",
        &secrets,
    );
    // A world-writable ~/.my.cnf is ignored with the client's warning.
    ch.file(".my.cnf", &format!("[client]\npassword={wrong}\n"), 0o666);
    let (o, out) = ch.run(&bare, &[("MYSQL_PWD", right)]);
    ok_from(&(o.clone(), out), "MYSQL_PWD", &secrets);
    assert!(
        text(&o).1.contains("World-writable config file"),
        "{}",
        show(&o)
    );

    // ixbench's own server is not redirected by MYSQL_* or ~/.my.cnf.
    ch.file(
        ".my.cnf",
        &format!("[client]\npassword={wrong}\nport=1\nssl-mode=VERIFY_IDENTITY\n"),
        0o600,
    );
    let hostile = [
        ("MYSQL_PWD", wrong),
        ("MYSQL_HOST", "192.0.2.1"),
        ("MYSQL_TCP_PORT", "1"),
    ];
    ok_from(
        &ch.run(&s.url(), &hostile),
        "the throwaway server ixbench started",
        &secrets,
    );
    let (o, out) = ch.run("mariadb", &hostile);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let notes = run_json(&out)["target"]["notes"].to_string();
    assert!(
        notes.contains("password: from the throwaway server ixbench started"),
        "{notes}"
    );
}
