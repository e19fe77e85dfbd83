//! Throwaway local servers, against the real installed PostgreSQL and MariaDB binaries.
//!
//! Each test starts its own server on a new temp data directory and a free port (the system
//! servers on 5432 and 3306 are neither used nor touched). When a server binary is missing the
//! test prints `SKIPPED <test>: <why>` and returns, except with `CI=true`, where it fails.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common;
use crate::common::sql::SqlExt;
use ixbench::server::{self, RunningServer, ServerKind, ServerOptions};

/// True when the test may run; false (after printing SKIPPED) when `kind` is not installed.
/// Panics instead under CI=true.
fn installed(kind: ServerKind, test: &str) -> bool {
    match server::check_installed(kind) {
        Ok(()) => true,
        Err(e) => skip(test, &format!("{e:#}")),
    }
}

/// Print SKIPPED and return false, or fail under CI=true.
fn skip(test: &str, why: &str) -> bool {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: {why} (CI=true: a missing server binary is a failure)");
    }
    note(&format!("SKIPPED {test}: {why}"));
    false
}

/// Write a line to the real stderr: libtest captures `eprintln!` of passing tests, and a skip
/// must be seen.
fn note(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn settings(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A process at one moment (PID + start time), to tell it from a later one with the same PID.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Proc {
    pid: u32,
    start: u64,
}

impl Proc {
    fn of(pid: u32) -> Option<Proc> {
        let stat = procfs::process::Process::new(pid as i32)
            .ok()?
            .stat()
            .ok()?;
        (stat.state != 'Z').then_some(Proc {
            pid,
            start: stat.starttime,
        })
    }

    fn alive(&self) -> bool {
        Proc::of(self.pid) == Some(*self)
    }
}

/// Check the server's processes: the main one (postmaster, mariadbd) exists, and every one
/// runs as the data directory's owner (not root when we are root). Returns those still alive:
/// `pids()` is a snapshot, and a short-lived backend may exit before it is looked at.
fn check_processes(s: &RunningServer, at_least: usize) -> Vec<Proc> {
    let pids = s.pids();
    assert!(
        pids.len() >= at_least,
        "expected >= {at_least} processes, got {pids:?}"
    );
    let owner = std::fs::metadata(&s.datadir).unwrap().uid();
    let mut alive = Vec::new();
    for (i, &pid) in pids.iter().enumerate() {
        let uid = procfs::process::Process::new(pid as i32).and_then(|p| p.uid());
        let (Some(p), Ok(uid)) = (Proc::of(pid), uid) else {
            assert!(i > 0, "main server process {pid} does not exist");
            continue;
        };
        assert_eq!(
            uid, owner,
            "process {pid} runs as the data directory's owner"
        );
        if is_root() {
            assert_ne!(uid, 0, "process {pid} must not run as root");
        }
        alive.push(p);
    }
    alive
}

fn assert_gone(procs: &[Proc]) {
    for p in procs {
        assert!(!p.alive(), "process {} still runs", p.pid);
    }
}

fn pg_connect(url: &str) -> ixbench::dbms::session::Session {
    crate::common::sql::connect(url).unwrap_or_else(|e| panic!("{url}: {e}"))
}

fn pg_show(c: &mut ixbench::dbms::session::Session, name: &str) -> String {
    c.query_one(&format!("SHOW {name}"), &[]).unwrap().get(0)
}

fn my_connect(url: &str) -> ixbench::dbms::session::Session {
    crate::common::sql::connect(url).unwrap_or_else(|e| panic!("{url}: {e}"))
}

fn my_var(c: &mut ixbench::dbms::session::Session, name: &str) -> String {
    c.query_first::<String, _>(format!("SELECT @@{name}"))
        .unwrap()
        .unwrap()
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t0 = Instant::now();
    let v = f();
    eprintln!("TIMING {what}: {:.2} s", t0.elapsed().as_secs_f64());
    v
}

#[test]
fn postgres_start_query_settings_stop() {
    if !installed(ServerKind::Postgres, "postgres_start_query_settings_stop") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut opts = ServerOptions::new(dir.path());
    opts.settings = settings(&[("work_mem", "7MB"), ("shared_buffers", "32MB")]);
    let s = timed("postgres start", || {
        server::start(ServerKind::Postgres, &opts)
    })
    .unwrap();
    assert_eq!(
        s.url(),
        format!("postgres://postgres@127.0.0.1:{}/ixbench", s.port)
    );
    assert_ne!(s.port, 5432);
    let mut c = pg_connect(&s.url_with_password());
    let one: i32 = c.query_one("SELECT 1", &[]).unwrap().get(0);
    assert_eq!(one, 1);
    let db: String = c
        .query_one("SELECT current_database()", &[])
        .unwrap()
        .get(0);
    assert_eq!(db, "ixbench");
    assert_eq!(pg_show(&mut c, "work_mem"), "7MB");
    assert_eq!(pg_show(&mut c, "shared_buffers"), "32MB");
    let dd = pg_show(&mut c, "data_directory");
    assert_eq!(Path::new(&dd), s.datadir);
    assert_eq!(pg_show(&mut c, "listen_addresses"), "127.0.0.1");

    // postmaster + checkpointer, background writer, walwriter, ... and our backend.
    let procs = check_processes(&s, 4);
    let backend: i32 = c.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    assert!(
        s.pids().contains(&(backend as u32)),
        "pids() includes the backends"
    );
    let postmaster: u32 = std::fs::read_to_string(s.datadir.join("postmaster.pid"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(s.pids()[0], postmaster);
    assert!(s.socket.as_ref().unwrap().exists());
    drop(c);

    let datadir = s.datadir.clone();
    timed("postgres stop", || s.stop()).unwrap();
    assert_gone(&procs);
    assert!(
        !datadir.join("postmaster.pid").exists(),
        "clean shutdown removes the pid file"
    );
    assert!(datadir.join("PG_VERSION").exists(), "stop keeps the data");
}

#[test]
fn mariadb_start_query_rocksdb_settings_stop() {
    let test = "mariadb_start_query_rocksdb_settings_stop";
    if !installed(ServerKind::Mariadb, test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut opts = ServerOptions::new(dir.path());
    opts.settings = settings(&[
        ("innodb_buffer_pool_size", "64M"),
        ("max-connections", "77"),
    ]);
    let s = timed("mariadb start", || {
        server::start(ServerKind::Mariadb, &opts)
    })
    .unwrap();
    assert_eq!(
        s.url(),
        format!("mysql://root@127.0.0.1:{}/ixbench", s.port)
    );
    assert_ne!(s.port, 3306);
    let mut c = my_connect(&s.url_with_password());
    assert_eq!(c.query_first::<i64, _>("SELECT 1").unwrap(), Some(1));
    assert_eq!(my_var(&mut c, "innodb_buffer_pool_size"), "67108864");
    assert_eq!(my_var(&mut c, "max_connections"), "77");
    assert_eq!(
        c.query_first::<String, _>("SELECT DATABASE()").unwrap(),
        Some("ixbench".into())
    );
    assert_eq!(
        my_var(&mut c, "datadir").trim_end_matches('/'),
        s.datadir.to_str().unwrap()
    );
    assert_eq!(my_var(&mut c, "bind_address"), "127.0.0.1");
    // A private tmpdir (mariadbd deletes every #sql* file in its tmpdir at start-up), not
    // listed as a database.
    assert_eq!(Path::new(&my_var(&mut c, "tmpdir")), s.datadir.join("#tmp"));
    let dbs: Vec<String> = c.query("SHOW DATABASES").unwrap();
    assert_eq!(
        dbs,
        [
            "information_schema",
            "ixbench",
            "mysql",
            "performance_schema",
            "sys"
        ]
    );

    let rocksdb: Option<String> = c
        .query_first("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE='ROCKSDB'")
        .unwrap();
    if server::rocksdb_available() {
        assert_eq!(rocksdb.as_deref(), Some("YES"));
        c.query_drop("CREATE TABLE r (id BIGINT PRIMARY KEY, v INT, KEY (v)) ENGINE=ROCKSDB")
            .unwrap();
        c.query_drop("INSERT INTO r VALUES (1, 10), (2, 20)")
            .unwrap();
        let n: Option<i64> = c.query_first("SELECT SUM(v) FROM r").unwrap();
        assert_eq!(n, Some(30));
    } else {
        assert_ne!(rocksdb.as_deref(), Some("YES"));
        skip(
            &format!("{test} (MyRocks part)"),
            "MyRocks is not installed: install the Debian package mariadb-plugin-rocksdb",
        );
    }

    let procs = check_processes(&s, 1);
    assert_eq!(procs.len(), 1, "one mariadbd process");
    let pid_file: u32 = std::fs::read_to_string(s.datadir.join("mariadbd.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(procs[0].pid, pid_file);
    drop(c);
    timed("mariadb stop", || s.stop()).unwrap();
    assert_gone(&procs);
}

#[test]
fn postgres_restart_with_changes_restart_only_setting() {
    if !installed(
        ServerKind::Postgres,
        "postgres_restart_with_changes_restart_only_setting",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut opts = ServerOptions::new(dir.path());
    opts.settings = settings(&[("work_mem", "7MB")]);
    let mut s = server::start(ServerKind::Postgres, &opts).unwrap();
    let port = s.port;
    {
        let mut c = pg_connect(&s.url_with_password());
        c.batch_execute("CREATE TABLE t (id int); INSERT INTO t VALUES (1), (2), (3)")
            .unwrap();
        assert_eq!(pg_show(&mut c, "max_worker_processes"), "8");
    }
    let before = check_processes(&s, 2);
    timed("postgres restart_with", || {
        s.restart_with(&settings(&[("max_worker_processes", "11")]))
    })
    .unwrap();
    assert_gone(&before);
    assert_eq!(s.port, port, "same port");
    let mut c = pg_connect(&s.url_with_password());
    assert_eq!(pg_show(&mut c, "max_worker_processes"), "11");
    assert_eq!(
        pg_show(&mut c, "work_mem"),
        "4MB",
        "restart_with replaces the settings"
    );
    let n: i64 = c.query_one("SELECT count(*) FROM t", &[]).unwrap().get(0);
    assert_eq!(n, 3, "data survives the restart");
    drop(c);

    // A setting the server rejects: the error carries the log, and the server stays stopped.
    let e = s
        .restart_with(&settings(&[("max_worker_processes", "-5")]))
        .unwrap_err();
    let msg = format!("{e:#}");
    assert!(
        msg.contains("server.log") && msg.contains("max_worker_processes"),
        "{msg}"
    );
    assert!(s.pids().is_empty());
    // ... and starts again with good settings.
    s.restart_with(&[]).unwrap();
    let mut c = pg_connect(&s.url_with_password());
    assert_eq!(pg_show(&mut c, "max_worker_processes"), "8");
    drop(c);
    s.stop().unwrap();
}

#[test]
fn mariadb_restart_with_changes_restart_only_setting() {
    if !installed(
        ServerKind::Mariadb,
        "mariadb_restart_with_changes_restart_only_setting",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut s = server::start(ServerKind::Mariadb, &ServerOptions::new(dir.path())).unwrap();
    {
        let mut c = my_connect(&s.url_with_password());
        assert_eq!(my_var(&mut c, "innodb_sort_buffer_size"), "1048576");
        c.query_drop("CREATE TABLE t (id INT PRIMARY KEY) ENGINE=InnoDB")
            .unwrap();
        c.query_drop("INSERT INTO t VALUES (1), (2)").unwrap();
    }
    let before = check_processes(&s, 1);
    timed("mariadb restart_with", || {
        s.restart_with(&settings(&[("innodb_sort_buffer_size", "4M")]))
    })
    .unwrap();
    assert_gone(&before);
    let mut c = my_connect(&s.url_with_password());
    assert_eq!(my_var(&mut c, "innodb_sort_buffer_size"), "4194304");
    assert_eq!(
        c.query_first::<i64, _>("SELECT COUNT(*) FROM t").unwrap(),
        Some(2)
    );
    drop(c);
    s.stop().unwrap();
}

#[test]
fn drop_stops_the_server_even_on_panic() {
    if !installed(ServerKind::Postgres, "drop_stops_the_server_even_on_panic") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let opts = ServerOptions::new(dir.path());
    let (tx, rx) = mpsc::channel();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let s = server::start(ServerKind::Postgres, &opts).unwrap();
        tx.send(check_processes(&s, 2)).unwrap();
        panic!("test panics while the server runs");
    }));
    assert!(result.is_err());
    let procs = rx.recv().unwrap();
    assert_gone(&procs);
}

#[test]
fn bad_setting_fails_with_the_server_log() {
    let test = "bad_setting_fails_with_the_server_log";
    for (kind, name, expect) in [
        (
            ServerKind::Postgres,
            "no_such_setting_xyz",
            "unrecognized configuration parameter",
        ),
        (
            ServerKind::Mariadb,
            "no_such_option_xyz",
            "unknown variable",
        ),
    ] {
        if !installed(kind, test) {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut opts = ServerOptions::new(dir.path());
        opts.settings = settings(&[(name, "1")]);
        let e = server::start(kind, &opts).unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains(expect), "{msg}");
        assert!(!msg.contains('\n'), "one line: {msg}");
        // The log it names is a copy that outlives the removed data directory, when the
        // server got as far as writing one.
        if let Some(log) = msg.split("(log: ").nth(1).and_then(|r| r.split(')').next()) {
            assert!(Path::new(log).is_file(), "{log} is gone: {msg}");
        } else {
            assert!(
                msg.contains("server.log") || msg.contains("last lines"),
                "{msg}"
            );
        }
    }
}

#[test]
fn refuses_non_empty_datadir_and_leaves_it_alone() {
    if !installed(
        ServerKind::Postgres,
        "refuses_non_empty_datadir_and_leaves_it_alone",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("precious.txt"), "keep me").unwrap();
    let e = server::start(ServerKind::Postgres, &ServerOptions::new(dir.path())).unwrap_err();
    assert!(e.to_string().contains("not empty"), "{e:#}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("precious.txt")).unwrap(),
        "keep me"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // remove_datadir refuses a directory ixbench did not create.
    assert!(server::remove_datadir(dir.path()).is_err());
    assert!(dir.path().join("precious.txt").exists());
}

#[test]
fn refuses_taken_port_and_reserved_settings() {
    if !installed(
        ServerKind::Postgres,
        "refuses_taken_port_and_reserved_settings",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut opts = ServerOptions::new(dir.path().join("a"));
    opts.port = Some(taken.local_addr().unwrap().port());
    let e = server::start(ServerKind::Postgres, &opts).unwrap_err();
    assert!(e.to_string().contains("not free"), "{e:#}");
    let mut opts = ServerOptions::new(dir.path().join("b"));
    opts.settings = settings(&[("port", "5432")]);
    let e = server::start(ServerKind::Postgres, &opts).unwrap_err();
    assert!(e.to_string().contains("managed by ixbench"), "{e:#}");
    assert!(
        !dir.path().join("a").exists() && !dir.path().join("b").exists(),
        "nothing created"
    );
}

#[test]
fn as_root_refuses_datadir_the_server_user_cannot_reach() {
    let test = "as_root_refuses_datadir_the_server_user_cannot_reach";
    if !is_root() {
        note(&format!(
            "SKIPPED {test}: only meaningful when running as root"
        ));
        return;
    }
    if !installed(ServerKind::Postgres, test) {
        return;
    }
    // A directory of root's with mode 0700, like /root: the postgres user cannot traverse it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let datadir = dir.path().join("data");
    let e = server::start(ServerKind::Postgres, &ServerOptions::new(&datadir)).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("not reachable by OS user postgres") && msg.contains("mode 700"),
        "{msg}"
    );
    assert!(
        !datadir.exists(),
        "the directory ixbench created is removed again"
    );
}

#[test]
fn long_datadir_path_still_works() {
    // A socket path must fit in 108 bytes: the socket then goes to a new private directory
    // (0700) under the system temp dir (TMPDIR, else /tmp), removed when the server stops.
    let test = "long_datadir_path_still_works";
    for kind in [ServerKind::Postgres, ServerKind::Mariadb] {
        if !installed(kind, test) {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let datadir = dir.path().join("d".repeat(110));
        let s = server::start(kind, &ServerOptions::new(&datadir)).unwrap();
        let sock = s.socket.clone().unwrap();
        let sockdir = sock.parent().unwrap().to_path_buf();
        assert!(
            sockdir.parent() == Some(std::env::temp_dir().as_path())
                && sockdir
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("ixbench-sock-"))
                && sock.exists(),
            "{sock:?} is not in a new ixbench-sock-* directory of {:?}",
            std::env::temp_dir()
        );
        assert_eq!(
            std::fs::metadata(&sockdir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        match kind {
            ServerKind::Postgres => {
                let mut c = pg_connect(&s.url_with_password());
                assert_eq!(
                    pg_show(&mut c, "unix_socket_directories"),
                    sockdir.to_str().unwrap()
                );
            }
            ServerKind::Mariadb => {
                let mut c = my_connect(&s.url_with_password());
                assert_eq!(my_var(&mut c, "socket"), sock.to_str().unwrap());
            }
        }
        s.stop().unwrap();
        assert!(!sockdir.exists(), "{} removed at stop", sockdir.display());
    }
}

/// Stops a server left running by `ixbench server start`, if a test fails before it does.
struct StopOnDrop(PathBuf);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let _ = server::stop_datadir(&self.0);
    }
}

/// Run the ixbench binary; fail if it does not finish, or keeps its stdout open (as a server
/// that inherited it would), within `limit`. Returns (exit code, stdout, stderr).
fn ixbench(args: &[&str], limit: Duration) -> (i32, String, String) {
    ixbench_with(Command::new(env!("CARGO_BIN_EXE_ixbench")), args, limit)
}

/// [`ixbench`], with `cmd` set up by the caller (program, user, environment).
fn ixbench_with(mut cmd: Command, args: &[&str], limit: Duration) -> (i32, String, String) {
    let mut child = cmd
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let read = |mut r: Box<dyn Read + Send>| {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            let _ = tx.send(s);
        });
        rx
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let t0 = Instant::now();
    let stdout = out
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("ixbench {args:?}: stdout still open after {limit:?}"));
    let stderr = err
        .recv_timeout(limit.saturating_sub(t0.elapsed()))
        .unwrap_or_else(|_| panic!("ixbench {args:?}: stderr still open"));
    let status = child.wait().unwrap();
    (status.code().unwrap_or(-1), stdout, stderr)
}

fn field<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key:?} line in {out:?}"))
        .trim()
}

fn cli_start_stop(kind: ServerKind, set: &str, check: impl FnOnce(&str)) {
    let dir = tempfile::tempdir().unwrap();
    let datadir = dir.path().to_str().unwrap();
    let (code, out, err) = timed(&format!("cli {kind} server start"), || {
        ixbench(
            &[
                "server",
                "start",
                kind.name(),
                "--set",
                set,
                "--datadir",
                datadir,
            ],
            Duration::from_secs(90),
        )
    });
    let _guard = StopOnDrop(dir.path().to_path_buf());
    assert_eq!(code, 0, "stdout: {out} stderr: {err}");
    let url = field(&out, "url:");
    let pid: u32 = field(&out, "pid:").parse().unwrap();
    assert_eq!(
        Path::new(field(&out, "datadir:")),
        dir.path().canonicalize().unwrap()
    );
    // ixbench has exited: the server must still run and answer.
    let proc = Proc::of(pid).expect("server outlives `ixbench server start`");
    // The generated password is in a 0600 file of the data directory and printed nowhere.
    let pw_file = dir.path().join(server::PASSWORD_FILE);
    let password = std::fs::read_to_string(&pw_file)
        .unwrap()
        .trim()
        .to_string();
    assert!(password.len() >= 32, "a long random password");
    assert_eq!(
        std::fs::metadata(&pw_file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(!out.contains(&password) && !err.contains(&password));
    check(&url.replacen("@", &format!(":{password}@"), 1));
    // `ixbench run --target URL` finds the password by itself (the user types none), and
    // prints it nowhere.
    let results = tempfile::tempdir().unwrap();
    let out_dir = results.path().join("r");
    let (code, rout, rerr) = ixbench(
        &[
            "run",
            "--target",
            url,
            "--out",
            out_dir.to_str().unwrap(),
            "--steps",
            "l.i0",
            "--rows",
            "300",
        ],
        Duration::from_secs(120),
    );
    assert_eq!(code, 0, "stdout: {rout} stderr: {rerr}");
    assert!(!rout.contains(&password) && !rerr.contains(&password));
    for f in std::fs::read_dir(&out_dir).unwrap() {
        let bytes = std::fs::read(f.unwrap().path()).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&bytes).contains(&password));
    }

    let (code, out, err) = timed(&format!("cli {kind} server stop"), || {
        ixbench(&["server", "stop", datadir], Duration::from_secs(150))
    });
    assert_eq!(code, 0, "stdout: {out} stderr: {err}");
    assert!(!proc.alive(), "server process {pid} is gone");

    let (code, _, err) = ixbench(&["server", "stop", datadir], Duration::from_secs(30));
    assert_eq!(code, 1);
    assert!(
        err.starts_with("ixbench: error: no ") && err.trim_end().lines().count() == 1,
        "{err}"
    );
    // The directory existed before (an empty temp dir): --remove refuses and keeps it.
    let (code, _, err) = ixbench(
        &["server", "stop", "--remove", datadir],
        Duration::from_secs(30),
    );
    assert_eq!(code, 1);
    assert!(err.contains("existed before"), "{err}");
    assert!(dir.path().join("ixbench-server.json").exists());
}

#[test]
fn cli_server_start_and_stop_postgres() {
    if !installed(ServerKind::Postgres, "cli_server_start_and_stop_postgres") {
        return;
    }
    cli_start_stop(ServerKind::Postgres, "work_mem=9MB", |url| {
        let mut c = pg_connect(url);
        assert_eq!(pg_show(&mut c, "work_mem"), "9MB");
    });
}

#[test]
fn cli_server_start_and_stop_mariadb() {
    if !installed(ServerKind::Mariadb, "cli_server_start_and_stop_mariadb") {
        return;
    }
    cli_start_stop(ServerKind::Mariadb, "innodb_buffer_pool_size=80M", |url| {
        let mut c = my_connect(url);
        assert_eq!(my_var(&mut c, "innodb_buffer_pool_size"), "83886080");
    });
}

#[test]
fn cli_default_datadir_and_remove() {
    if !installed(ServerKind::Postgres, "cli_default_datadir_and_remove") {
        return;
    }
    let (code, out, err) = ixbench(&["server", "start", "postgres"], Duration::from_secs(90));
    assert_eq!(code, 0, "stdout: {out} stderr: {err}");
    let datadir = PathBuf::from(field(&out, "datadir:"));
    let _guard = StopOnDrop(datadir.clone());
    assert!(datadir.starts_with(std::env::temp_dir().canonicalize().unwrap()));
    let (code, out, err) = ixbench(
        &["server", "stop", "--remove", datadir.to_str().unwrap()],
        Duration::from_secs(150),
    );
    assert_eq!(code, 0, "stdout: {out} stderr: {err}");
    assert!(
        !datadir.exists(),
        "ixbench removed the directory it created"
    );
}

/// A throwaway server lets in only its administrator with the generated password: an empty
/// password, a wrong one, or its socket without one are refused; ixbench's own targets find
/// the password by themselves from the URL without it. The socket directory is private.
fn refuses_other_passwords(kind: ServerKind, test: &str) {
    if !installed(kind, test) {
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("ixbench-pw-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = server::start(kind, &ServerOptions::new(dir.path().join("d"))).unwrap();
    let url = s.url();
    let password = s.password().to_string();
    assert!(!url.contains(&password));
    let wrong = url.replacen("@", ":not-the-password@", 1);
    let sock = s.socket.clone().expect("a socket");
    let sockdir = sock.parent().unwrap();
    assert_eq!(
        std::fs::metadata(sockdir).unwrap().permissions().mode() & 0o777,
        0o700,
        "socket directory {} is private",
        sockdir.display()
    );
    match kind {
        ServerKind::Postgres => {
            // An empty password (ixbench's clients would find the generated one of a server
            // it started when none is given) and a wrong one.
            let empty = url.replacen("@", ":@", 1);
            for bad in [empty, wrong] {
                let e = crate::common::sql::connect(&bad)
                    .err()
                    .unwrap_or_else(|| panic!("{bad} let in"));
                // "password missing" (client side) or 28P01 from the server.
                let e = format!("{e:#}");
                assert!(
                    e.contains("password missing") || e.contains("28P01"),
                    "refused for its password: {e}"
                );
            }
            let by_socket = format!(
                "postgres://postgres:@/ixbench?host={}&port={}",
                sockdir.display(),
                s.port
            );
            assert!(
                crate::common::sql::connect(&by_socket).is_err(),
                "the socket without a password is refused"
            );
            pg_connect(&s.url_with_password());
            let t = ixbench::dbms::postgres::Postgres::open_raw(&url)
                .expect("ixbench finds the password of a server it started");
            assert!(!t.location().contains(&password));
        }
        ServerKind::Mariadb => {
            let empty = url.replacen("@", ":@", 1);
            for bad in [empty, wrong] {
                let e = crate::common::sql::connect(&bad)
                    .err()
                    .unwrap_or_else(|| panic!("{bad} let in"));
                assert!(format!("{e:#}").contains("1045"), "access denied: {e:#}");
            }
            let by_socket = format!(
                "mysql://root:@localhost/ixbench?socket={}",
                sock.to_str().unwrap()
            );
            assert!(
                crate::common::sql::connect(&by_socket).is_err(),
                "the socket without a password is refused"
            );
            my_connect(&s.url_with_password());
            let spec = ixbench::dbms::TargetSpec::parse(&url).unwrap();
            ixbench::dbms::open(&spec, &Default::default())
                .expect("ixbench finds the password of a server it started");
        }
    }
    s.stop().unwrap();
}

#[test]
fn postgres_refuses_other_passwords() {
    refuses_other_passwords(ServerKind::Postgres, "postgres_refuses_other_passwords");
}

#[test]
fn mariadb_refuses_other_passwords() {
    refuses_other_passwords(ServerKind::Mariadb, "mariadb_refuses_other_passwords");
}

// ---- Several users and terminals: nobody stops or removes another's server ----------------

/// A throwaway OS user made with `useradd` for one test (we run as root), with its own home
/// (hence its own registry of servers) in `dir`. Dropping it first stops, as that user, the
/// servers it started, then deletes the user.
struct TestUser {
    name: String,
    uid: u32,
    gid: u32,
    home: PathBuf,
    bin: PathBuf,
    datadirs: std::cell::RefCell<Vec<PathBuf>>,
}

impl TestUser {
    /// Create user `name` (which must not exist) with its home under `dir`; `bin` is an
    /// ixbench binary the user can run.
    fn create(name: &str, dir: &Path, bin: &Path) -> Result<TestUser, String> {
        let home = dir.join(format!("home-{name}"));
        let out = Command::new("useradd")
            .args([
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                "--home-dir",
            ])
            .arg(&home)
            .arg(name)
            .output()
            .map_err(|e| format!("useradd: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "useradd {name}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let id = |flag: &str| -> Result<u32, String> {
            let o = Command::new("id")
                .args([flag, name])
                .output()
                .map_err(|e| format!("id: {e}"))?;
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse()
                .map_err(|e| format!("id {flag} {name}: {e}"))
        };
        let mut user = TestUser {
            name: name.to_string(),
            uid: 0,
            gid: 0,
            home: home.clone(),
            bin: bin.to_path_buf(),
            datadirs: Default::default(),
        };
        // From here on, dropping `user` deletes it again.
        user.uid = id("-u")?;
        user.gid = id("-g")?;
        std::fs::create_dir(&home).map_err(|e| format!("{}: {e}", home.display()))?;
        std::os::unix::fs::chown(&home, Some(user.uid), Some(user.gid))
            .map_err(|e| format!("chown {}: {e}", home.display()))?;
        Ok(user)
    }

    /// `ixbench ARGS` run as this user, in its home, with its own registry.
    fn ixbench(&self, args: &[&str], limit: Duration) -> (i32, String, String) {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(&self.bin);
        cmd.uid(self.uid)
            .gid(self.gid)
            .current_dir(&self.home)
            .env("HOME", &self.home)
            .env("USER", &self.name)
            .env("LOGNAME", &self.name)
            .env_remove("XDG_STATE_HOME");
        ixbench_with(cmd, args, limit)
    }

    /// `ixbench server start KIND --datadir DIR` as this user; returns (data directory,
    /// the server's process, its URL with the password).
    fn start(&self, kind: ServerKind, datadir: &Path) -> (PathBuf, Proc, String) {
        let (code, out, err) = self.ixbench(
            &[
                "server",
                "start",
                kind.name(),
                "--datadir",
                datadir.to_str().unwrap(),
            ],
            Duration::from_secs(120),
        );
        assert_eq!(code, 0, "{}: stdout: {out} stderr: {err}", self.name);
        let dir = PathBuf::from(field(&out, "datadir:"));
        self.datadirs.borrow_mut().push(dir.clone());
        let pid: u32 = field(&out, "pid:").parse().unwrap();
        let proc = Proc::of(pid).expect("the server runs");
        let url = with_password(field(&out, "url:"), &dir);
        (dir, proc, url)
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        for d in self.datadirs.borrow().iter() {
            let _ = self.ixbench(
                &["server", "stop", "--remove", d.to_str().unwrap()],
                Duration::from_secs(150),
            );
        }
        let _ = Command::new("userdel")
            .args(["--force", &self.name])
            .output();
    }
}

/// `url` with the password of the server in `datadir` (read as root).
fn with_password(url: &str, datadir: &Path) -> String {
    let pw = std::fs::read_to_string(datadir.join(server::PASSWORD_FILE)).unwrap();
    url.replacen("@", &format!(":{}@", pw.trim()), 1)
}

/// The non-empty lines of `server list` that name a server (none when it says there is none).
fn list_lines(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.contains("datadir "))
        .map(str::to_string)
        .collect()
}

/// The stderr of a refusal: exit 1, one line, `ixbench: error: ...`.
fn assert_refused(code: i32, out: &str, err: &str, expect: &str) {
    assert_eq!(code, 1, "expected a refusal; stdout: {out} stderr: {err}");
    assert!(
        err.starts_with("ixbench: error: ") && err.trim_end().lines().count() == 1,
        "one line: {err}"
    );
    assert!(err.contains(expect), "expected {expect:?} in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn two_os_users_never_stop_or_remove_each_others_servers() {
    let test = "two_os_users_never_stop_or_remove_each_others_servers";
    if !is_root() {
        note(&format!(
            "SKIPPED {test}: creating two OS users needs root (two registries of one user are \
             tested by one_user_two_terminals_keep_their_servers_apart)"
        ));
        return;
    }
    if !installed(ServerKind::Postgres, test) || !installed(ServerKind::Mariadb, test) {
        return;
    }
    let shared = tempfile::Builder::new()
        .prefix("ixbench-users-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // The test binary's directory may be private to root (/root/...): the users run a copy.
    let bin = shared.path().join("ixbench");
    std::fs::copy(env!("CARGO_BIN_EXE_ixbench"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tag = std::process::id();
    let make = |n: &str| {
        TestUser::create(&format!("ixbt{tag}{n}"), shared.path(), &bin)
            .unwrap_or_else(|e| panic!("{test}: cannot create a throwaway OS user: {e}"))
    };
    let (a, b) = (make("a"), make("b"));
    // Each user's data directory in a directory of its own that others can traverse (so a
    // refusal is ixbench's, not a path the other user cannot even resolve).
    let place = |u: &TestUser| {
        let d = shared.path().join(format!("dirs-{}", u.name));
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::chown(&d, Some(u.uid), Some(u.gid)).unwrap();
        d.join("data")
    };
    let (a_dir, a_proc, a_url) = a.start(ServerKind::Postgres, &place(&a));
    let (b_dir, b_proc, b_url) = b.start(ServerKind::Mariadb, &place(&b));
    let limit = Duration::from_secs(60);
    let (a_s, b_s) = (a_dir.to_str().unwrap(), b_dir.to_str().unwrap());
    // The servers run as their users, not as root nor as postgres/mysql.
    for (p, u) in [(&a_proc, &a), (&b_proc, &b)] {
        let uid = procfs::process::Process::new(p.pid as i32)
            .unwrap()
            .uid()
            .unwrap();
        assert_eq!(uid, u.uid, "{}'s server runs as {}", u.name, u.name);
    }

    // Each user's list shows its own server and only it.
    for (u, own, other) in [(&a, a_s, b_s), (&b, b_s, a_s)] {
        let (code, out, err) = u.ixbench(&["server", "list"], limit);
        assert_eq!(code, 0, "{err}");
        let lines = list_lines(&out);
        assert_eq!(lines.len(), 1, "{}'s list: {out}", u.name);
        assert!(lines[0].contains(own), "{}'s list: {out}", u.name);
        assert!(!out.contains(other), "{}'s list: {out}", u.name);
    }
    // root's list (its own registry) shows neither.
    let (code, out, _) = ixbench(&["server", "list"], limit);
    assert_eq!(code, 0);
    assert!(
        !out.contains(a_s) && !out.contains(b_s),
        "root's list: {out}"
    );

    // Nobody else stops or removes a's server: not b, with or without --remove, and not root
    // (who could, as far as the OS goes).
    let refusals = [
        b.ixbench(&["server", "stop", a_s], limit),
        b.ixbench(&["server", "stop", "--remove", a_s], limit),
        ixbench(&["server", "stop", a_s], limit),
        ixbench(&["server", "stop", "--remove", a_s], limit),
        a.ixbench(&["server", "stop", b_s], limit),
        a.ixbench(&["server", "stop", "--remove", b_s], limit),
        ixbench(&["server", "stop", "--remove", b_s], limit),
    ];
    for (code, out, err) in &refusals {
        assert_refused(*code, out, err, "belongs to another OS user");
    }
    assert!(server::stop_datadir(&a_dir).is_err() && server::remove_datadir(&a_dir).is_err());
    for (p, d) in [(&a_proc, &a_dir), (&b_proc, &b_dir)] {
        assert!(p.alive(), "server {} still runs", p.pid);
        assert!(
            d.join("ixbench-server.json").is_file(),
            "{} is kept",
            d.display()
        );
    }
    // Both still answer.
    let mut c = pg_connect(&a_url);
    assert_eq!(c.query_one("SELECT 1", &[]).unwrap().get::<i32>(0), 1);
    drop(c);
    assert_eq!(
        my_var(&mut my_connect(&b_url), "port"),
        b_url.split(':').nth(3).unwrap().split('/').next().unwrap()
    );

    // Each stops its own; the other's keeps running.
    let (code, out, err) = a.ixbench(
        &["server", "stop", "--remove", a_s],
        Duration::from_secs(150),
    );
    assert_eq!(code, 0, "stdout: {out} stderr: {err}");
    assert!(!a_proc.alive() && !a_dir.exists());
    assert!(b_proc.alive(), "b's server survives a's stop");
    let (_, out, _) = a.ixbench(&["server", "list"], limit);
    assert!(
        list_lines(&out).is_empty(),
        "a's list after its stop: {out}"
    );
    let (code, out, err) = b.ixbench(
        &["server", "stop", "--remove", b_s],
        Duration::from_secs(150),
    );
    assert_eq!(code, 0, "stdout: {out} stderr: {err}");
    assert!(!b_proc.alive() && !b_dir.exists());
}

/// Wait until `p` has exited (`limit` at most).
fn wait_gone(p: &Proc, limit: Duration) {
    let t0 = Instant::now();
    while p.alive() {
        assert!(t0.elapsed() < limit, "process {} still runs", p.pid);
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A new scratch directory (mode 0755, for a server that runs as its own user) and its
/// canonical path, for [`ixbench_apart`].
fn scratch(prefix: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

/// [`ixbench`] with a registry (XDG_STATE_HOME) and default data directories (TMPDIR) of the
/// test's own, in `tmp`, so other tests' servers do not show in its lists.
fn ixbench_apart(tmp: &Path, args: &[&str], limit: Duration) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ixbench"));
    cmd.env("XDG_STATE_HOME", tmp.join("state"))
        .env("TMPDIR", tmp);
    ixbench_with(cmd, args, limit)
}

/// `ixbench ARGS` run a test's way (its own registry, its own temp directory).
type Run<'a> = &'a dyn Fn(&[&str], Duration) -> (i32, String, String);

/// Stops and removes the servers in these data directories with `server stop --remove`, run
/// the test's way, also when the test fails first.
struct Cleanup<'a>(Run<'a>, Vec<PathBuf>);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        for d in &self.1 {
            (self.0)(
                &["server", "stop", "--remove", d.to_str().unwrap()],
                Duration::from_secs(150),
            );
        }
    }
}

#[test]
fn one_user_two_terminals_keep_their_servers_apart() {
    let test = "one_user_two_terminals_keep_their_servers_apart";
    if !installed(ServerKind::Postgres, test) {
        return;
    }
    let (_scratch, tmp) = scratch("ixbench-terms-");
    let run = |args: &[&str], limit: Duration| ixbench_apart(&tmp, args, limit);
    // Three terminals start a server at the same moment, each with the default data directory
    // and a free port.
    let outs: Vec<(i32, String, String)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..3)
            .map(|_| s.spawn(|| run(&["server", "start", "postgres"], Duration::from_secs(120))))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut cleanup = Cleanup(&run, Vec::new());
    let mut servers = Vec::new();
    for (code, out, _) in &outs {
        if *code == 0 {
            cleanup.1.push(PathBuf::from(field(out, "datadir:")));
        }
    }
    for (code, out, err) in &outs {
        assert_eq!(*code, 0, "stdout: {out} stderr: {err}");
        let dir = PathBuf::from(field(out, "datadir:"));
        let url = field(out, "url:").to_string();
        let proc = Proc::of(field(out, "pid:").parse().unwrap()).expect("server runs");
        assert!(dir.starts_with(&tmp), "{}", dir.display());
        servers.push((dir, url, proc));
    }
    let mut dirs: Vec<_> = servers.iter().map(|s| s.0.clone()).collect();
    let mut urls: Vec<_> = servers.iter().map(|s| s.1.clone()).collect();
    dirs.sort();
    dirs.dedup();
    urls.sort();
    urls.dedup();
    assert_eq!(
        (dirs.len(), urls.len()),
        (3, 3),
        "distinct data directories and ports"
    );
    let list = || {
        let (code, out, err) = run(&["server", "list"], Duration::from_secs(60));
        assert_eq!(code, 0, "{err}");
        list_lines(&out)
    };
    let line_of = |lines: &[String], dir: &Path| {
        lines
            .iter()
            .find(|l| l.ends_with(&format!("datadir {}", dir.display())))
            .cloned()
    };
    let lines = list();
    assert_eq!(lines.len(), 3, "{lines:?}");
    for (dir, url, proc) in &servers {
        let l = line_of(&lines, dir).unwrap_or_else(|| panic!("{} in {lines:?}", dir.display()));
        assert!(
            l.contains(url) && l.contains(&format!("pid {}", proc.pid)),
            "{l}"
        );
    }
    let [(d1, _, p1), (d2, _, p2), (d3, url3, p3)] = &servers[..] else {
        unreachable!()
    };

    // One terminal stops its server: the others keep running and listed.
    let (code, out, err) = run(
        &["server", "stop", d1.to_str().unwrap()],
        Duration::from_secs(150),
    );
    assert_eq!(code, 0, "stdout: {out} stderr: {err}");
    assert!(!p1.alive());
    assert!(p2.alive() && p3.alive());
    let lines = list();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(line_of(&lines, d1).is_none());

    // A server that died (killed) is shown as not running, next to the live one...
    // SAFETY: kill(2) on a process this test started (via ixbench), checked alive just above.
    let children: Vec<Proc> = procfs::process::all_processes()
        .unwrap()
        .filter_map(|p| p.ok()?.stat().ok())
        .filter(|s| s.ppid == p2.pid as i32)
        .filter_map(|s| Proc::of(s.pid as u32))
        .collect();
    assert_eq!(unsafe { libc::kill(p2.pid as i32, libc::SIGKILL) }, 0);
    // PostgreSQL's other processes leave when they see their postmaster gone.
    for p in std::iter::once(p2).chain(&children) {
        wait_gone(p, Duration::from_secs(60));
    }
    let lines = list();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let stale = line_of(&lines, d2).expect("the dead server is still listed");
    assert!(stale.contains("not running"), "{stale}");
    let live = line_of(&lines, d3).expect("the live server is listed");
    assert!(
        live.contains(&format!("pid {}", p3.pid)) && !live.contains("not running"),
        "{live}"
    );
    // ... and stopping it forgets the entry (it says there was nothing to stop), not the live one.
    let (code, out, err) = run(
        &["server", "stop", d2.to_str().unwrap()],
        Duration::from_secs(60),
    );
    assert_refused(code, &out, &err, "no PostgreSQL server is running");
    let lines = list();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(line_of(&lines, d3).is_some() && p3.alive());
    let mut c = pg_connect(&with_password(url3, d3));
    assert_eq!(c.query_one("SELECT 1", &[]).unwrap().get::<i32>(0), 1);
    drop(c);

    // The dead one's and the stopped one's directories are removed; the live one stays.
    for d in [d1, d2] {
        let (code, out, err) = run(
            &["server", "stop", "--remove", d.to_str().unwrap()],
            Duration::from_secs(60),
        );
        assert_eq!(code, 0, "stdout: {out} stderr: {err}");
        assert!(!d.exists());
    }
    assert!(p3.alive() && d3.join("PG_VERSION").is_file());
    let (code, out, err) = run(
        &["server", "stop", "--remove", d3.to_str().unwrap()],
        Duration::from_secs(150),
    );
    assert_eq!(code, 0, "stdout: {out} stderr: {err}");
    assert!(!p3.alive() && !d3.exists());
    assert!(list().is_empty());
}

#[test]
fn list_shows_the_url_start_printed_with_tls() {
    let test = "list_shows_the_url_start_printed_with_tls";
    if !installed(ServerKind::Postgres, test) {
        return;
    }
    let Some(certs) = common::certs::make_certs(test) else {
        return;
    };
    let (_scratch, tmp) = scratch("ixbench-list-tls-");
    // A `--server-tls` directory: a root certificate and the server's, naming 127.0.0.1.
    let tls = common::certs::server_tls_dir(&certs, "tls", "ca.crt");
    let run = |args: &[&str], limit: Duration| ixbench_apart(&tmp, args, limit);
    let datadir = tmp.join("pg");
    let (code, out, err) = run(
        &[
            "server",
            "start",
            "postgres",
            "--datadir",
            datadir.to_str().unwrap(),
            "--server-tls",
            tls.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    let _cleanup = Cleanup(&run, vec![datadir.clone()]);
    assert_eq!(code, 0, "stdout: {out} stderr: {err}");
    let url = field(&out, "url:").to_string();
    assert!(
        url.contains("?sslmode=verify-full&sslrootcert=") && url.contains("ca.crt"),
        "{url}"
    );
    let (code, list, list_err) = run(&["server", "list"], Duration::from_secs(60));
    assert_eq!(code, 0, "{list_err}");
    let lines = list_lines(&list);
    assert_eq!(lines.len(), 1, "{list}");
    // `postgres  URL  pid ...`: the URL is the one the start printed, TLS settings and all.
    assert_eq!(
        lines[0].split_whitespace().nth(1),
        Some(url.as_str()),
        "{list}"
    );
    assert!(lines[0].starts_with("postgres  "), "{list}");
    let password = std::fs::read_to_string(datadir.join("ixbench-password")).unwrap();
    let password = password.trim();
    assert_eq!(password.len(), 48);
    for text in [&out, &err, &list, &list_err] {
        assert!(!text.contains(password), "a password printed: {text}");
    }
}

#[test]
fn server_tls_whose_root_signed_nothing_is_refused_before_a_start() {
    let test = "server_tls_whose_root_signed_nothing_is_refused_before_a_start";
    let Some(certs) = common::certs::make_certs(test) else {
        return;
    };
    let (_scratch, tmp) = scratch("ixbench-wrong-tls-");
    // ca.crt is a root that did not sign server.crt: no verifying client could connect.
    let wrong = common::certs::server_tls_dir(&certs, "wrong", "other-ca.crt");
    let datadir = tmp.join("pg");
    let (code, out, err) = ixbench_apart(
        &tmp,
        &[
            "server",
            "start",
            "postgres",
            "--datadir",
            datadir.to_str().unwrap(),
            "--server-tls",
            wrong.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(code, 1, "stdout: {out} stderr: {err}");
    assert!(!out.contains("url:"), "{out}");
    let line = err.trim();
    assert!(
        !line.contains('\n') && line.contains("not signed by a trusted root"),
        "{err}"
    );
    assert!(!datadir.exists(), "a data directory was made");
}

/// A server that exits during start-up: its data directory is removed, and the log the error
/// names is a copy that still exists (it named the log inside the removed directory).
#[test]
fn a_failed_start_names_a_log_that_exists() {
    let test = "a_failed_start_names_a_log_that_exists";
    if !installed(ServerKind::Postgres, test) {
        return;
    }
    let (_scratch, tmp) = scratch("ixbench-failed-start-");
    let datadir = tmp.join("pg");
    let (code, out, err) = ixbench_apart(
        &tmp,
        &[
            "server",
            "start",
            "postgres",
            "--datadir",
            datadir.to_str().unwrap(),
            "--set",
            "max_connections=0",
        ],
        Duration::from_secs(120),
    );
    assert_eq!(code, 1, "stdout: {out} stderr: {err}");
    assert!(!datadir.exists(), "the data directory is removed");
    let log = err
        .split("(log: ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap_or_else(|| panic!("no log named: {err}"));
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{log}: {e}: {err}"));
    assert!(text.contains("max_connections"), "{log}: {text}");
    assert!(!log.starts_with(datadir.to_str().unwrap()), "{log}");
}

/// Every file below `dir` with its contents, to show a refused command changed nothing.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn stop_refuses_servers_and_directories_ixbench_did_not_start() {
    let test = "stop_refuses_servers_and_directories_ixbench_did_not_start";
    let limit = Duration::from_secs(60);
    // Directories that look like data directories, whose pid files name a live process (this
    // test's own): no marker of ixbench's, so nothing is signalled, read as a server, or removed.
    let me = std::process::id();
    let tmp = tempfile::tempdir().unwrap();
    let pg = tmp.path().join("pg");
    std::fs::create_dir(&pg).unwrap();
    std::fs::write(pg.join("PG_VERSION"), "15\n").unwrap();
    std::fs::write(
        pg.join("postmaster.pid"),
        format!("{me}\n{}\n", pg.display()),
    )
    .unwrap();
    let my = tmp.path().join("my");
    std::fs::create_dir_all(my.join("mysql")).unwrap();
    std::fs::write(my.join("mariadbd.pid"), format!("{me}\n")).unwrap();
    let plain = tmp.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    std::fs::write(plain.join("postmaster.pid"), format!("{me}\n")).unwrap();
    for d in [&pg, &my, &plain] {
        let before = snapshot(tmp.path());
        for args in [&["server", "stop"][..], &["server", "stop", "--remove"][..]] {
            let mut args = args.to_vec();
            args.push(d.to_str().unwrap());
            let (code, out, err) = ixbench(&args, limit);
            assert_refused(
                code,
                &out,
                &err,
                "not a data directory of a server started by ixbench",
            );
        }
        assert_eq!(snapshot(tmp.path()), before, "{} untouched", d.display());
    }

    // A live PostgreSQL that ixbench did not initialize, as the machine's own is: owned by the
    // postgres user, its postmaster.pid naming a live `postgres -D DIR`. (Made here by starting
    // one and taking ixbench's marker away: the machine's own server is never touched.)
    let Some(s) = common::start_server(test, ServerKind::Postgres, false) else {
        return;
    };
    let marker = s.datadir.join("ixbench-server.json");
    let aside = s.datadir.with_extension("marker");
    std::fs::rename(&marker, &aside).unwrap();
    let procs = check_processes(&s, 2);
    let d = s.datadir.to_str().unwrap().to_string();
    let refusals = [
        ixbench(&["server", "stop", &d], limit),
        ixbench(&["server", "stop", "--remove", &d], limit),
    ];
    let kept = procs[0].alive() && s.datadir.join("PG_VERSION").is_file();
    std::fs::rename(&aside, &marker).unwrap();
    for (code, out, err) in &refusals {
        assert_refused(
            *code,
            out,
            err,
            "not a data directory of a server started by ixbench",
        );
    }
    assert!(
        kept,
        "the server ixbench did not start still runs, with its data"
    );
    let mut c = pg_connect(&s.url_with_password());
    assert_eq!(c.query_one("SELECT 1", &[]).unwrap().get::<i32>(0), 1);
}
