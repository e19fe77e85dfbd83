//! Faults on real servers: the server restarts in the middle of a step. ixbench must stop with a
//! one-line error naming the target (without a password), a non-zero exit, and every finished
//! step and interval on disk.
//!
//! Without the server binaries a test prints `SKIPPED <name>: <why>` and returns; with
//! `CI=true` it fails instead.

use crate::common;

use std::time::Duration;

use common::sql::SqlExt;
use common::*;
use ixbench::server::{self, ServerKind, ServerOptions};

fn restart_mid_step(kind: ServerKind, name: &str, extra: &[&str]) {
    if let Err(e) = server::check_installed(kind) {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{name}: {e:#}; CI=true: the server must be installed");
        }
        eprintln!("SKIPPED {name}: {e:#}");
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("ixbench-fault-")
        .tempdir()
        .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut srv = server::start(kind, &ServerOptions::new(dir.path().join("data"))).unwrap();
    let url = srv.url();
    let out = dir.path().join("r");
    let mut args = vec![
        "run",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "3000",
        "--rows2",
        "1000",
        "--rates",
        "100",
        "--query-seconds",
        "60",
        "--interval",
        "0.2",
        "--steps",
        "l.i0,l.x,qr100",
    ];
    args.extend_from_slice(extra);
    let child = spawn_until_intervals(&args, &out, "qr100", 3, Duration::from_secs(90));
    // The server goes away under the workers and comes back.
    let settings = srv.settings.clone();
    srv.restart_with(&settings).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = assert_one_line_error(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("target {url}")),
        "names the target: {err}"
    );
    assert!(err.contains("qr100"), "names the step: {err}");
    let run = run_json(&out);
    assert_eq!(run["status"], "failed");
    let steps = run["steps"].as_array().unwrap();
    assert_eq!(steps[0]["status"], "ok");
    assert_eq!(steps[1]["status"], "ok");
    assert_eq!(steps[2]["status"], "failed");
    assert!(
        intervals(&out)
            .iter()
            .filter(|l| l["step"] == "qr100")
            .count()
            >= 3
    );
    srv.stop().unwrap();
}

#[test]
fn postgres_restart_mid_step() {
    restart_mid_step(ServerKind::Postgres, "postgres_restart_mid_step", &[]);
}

#[test]
fn mariadb_restart_mid_step() {
    restart_mid_step(
        ServerKind::Mariadb,
        "mariadb_restart_mid_step",
        &["--engine", "innodb"],
    );
}

/// True when `kind` can be started; prints SKIPPED (or fails under CI=true) otherwise.
fn installed(kind: ServerKind, name: &str) -> bool {
    match server::check_installed(kind) {
        Ok(()) => true,
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("{name}: {e:#}; CI=true: the server must be installed")
        }
        Err(e) => {
            eprintln!("SKIPPED {name}: {e:#}");
            false
        }
    }
}

/// A temp dir the servers' OS users can traverse (tests run as root).
fn open_tempdir(prefix: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn kill(pid: u32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    assert_eq!(
        unsafe { libc::kill(pid as i32, sig) },
        0,
        "kill {pid} {sig}"
    );
}

/// Wait for `child` to exit within `limit` (killing it and failing otherwise); returns its
/// output and how long it took.
fn wait_limited(
    mut child: std::process::Child,
    limit: Duration,
) -> (std::process::Output, Duration) {
    let t0 = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return (child.wait_with_output().unwrap(), t0.elapsed());
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "ixbench did not exit within {limit:?}: {}\n{}",
                String::from_utf8_lossy(&o.stderr),
                String::from_utf8_lossy(&o.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Live processes whose command line mentions `needle` (a data directory).
fn processes_mentioning(needle: &str) -> Vec<u32> {
    procfs::process::all_processes()
        .unwrap()
        .filter_map(|p| p.ok())
        .filter(|p| {
            p.stat().is_ok_and(|s| s.state != 'Z')
                && p.cmdline()
                    .is_ok_and(|c| c.iter().any(|a| a.contains(needle)))
        })
        .map(|p| p.pid as u32)
        .collect()
}

/// Stop a run of `--target postgres|mariadb` with `signals` (one after the other, 0.3 s
/// apart) while l.i0 loads; it must exit with 128+the first signal, leave run.json
/// `interrupted`, the exports written, and no server process nor pid file.
fn stop_run(kind: ServerKind, signals: &[i32]) {
    let dir = open_tempdir("ixbench-stop-");
    let out = dir.path().join("r");
    let target = kind.name();
    let args = [
        "run",
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "5000000",
        "--interval",
        "0.2",
        "--steps",
        "l.i0,l.x",
    ];
    let child = spawn_until_intervals(&args, &out, "l.i0", 2, Duration::from_secs(120));
    let pid = child.id();
    let datadir = out.join(format!("{}-data", kind.name()));
    let pid_file = datadir.join(match kind {
        ServerKind::Postgres => "postmaster.pid",
        ServerKind::Mariadb => "mariadbd.pid",
    });
    assert!(
        pid_file.exists(),
        "the server runs in {}",
        datadir.display()
    );
    for (i, &sig) in signals.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(300));
        }
        kill(pid, sig);
    }
    let (o, took) = wait_limited(child, Duration::from_secs(120));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    eprintln!(
        "MEASURED {kind} signals {signals:?}: exit {:?} after {:.2} s",
        o.status.code(),
        took.as_secs_f64()
    );
    assert_eq!(o.status.code(), Some(128 + signals[0]), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let run = run_json(&out);
    assert_eq!(run["status"], "interrupted", "{err}");
    let steps = run["steps"].as_array().unwrap();
    assert_eq!(steps[0]["name"], "l.i0");
    assert_eq!(steps[0]["status"], "interrupted");
    for f in ["steps.csv", "steps.md", "report.html", "intervals.ndjson"] {
        assert!(out.join(f).is_file(), "{f} written");
    }
    assert!(
        !pid_file.exists(),
        "the server shut down cleanly ({})",
        pid_file.display()
    );
    let left = processes_mentioning(datadir.to_str().unwrap());
    assert!(left.is_empty(), "server processes left: {left:?}");
}

fn stop_runs(kind: ServerKind, name: &str) {
    if !installed(kind, name) {
        return;
    }
    // The three runs at once, each with its own server and results: they share nothing (a
    // signal goes to its own run's pid), and one after the other they took three server
    // starts and loads in a row. A run that fails panics its thread, which fails the test.
    std::thread::scope(|sc| {
        sc.spawn(|| stop_run(kind, &[libc::SIGTERM]));
        sc.spawn(|| stop_run(kind, &[libc::SIGHUP]));
        // Twice Ctrl-C: quicker (cancel now, skip checks), but still saved and stopped.
        sc.spawn(|| stop_run(kind, &[libc::SIGINT, libc::SIGINT]));
    });
}

#[test]
fn postgres_sigterm_sighup_and_twice_ctrl_c_keep_the_run() {
    stop_runs(
        ServerKind::Postgres,
        "postgres_sigterm_sighup_and_twice_ctrl_c_keep_the_run",
    );
}

#[test]
fn mariadb_sigterm_sighup_and_twice_ctrl_c_keep_the_run() {
    stop_runs(
        ServerKind::Mariadb,
        "mariadb_sigterm_sighup_and_twice_ctrl_c_keep_the_run",
    );
}

/// A statement in flight when ixbench is stopped is cancelled on the server: l.x's index
/// build waits for a lock the test holds; after SIGTERM no ixbench statement runs there any
/// more (without the cancel it would wait as long as the lock is held).
fn cancel_in_flight(kind: ServerKind, name: &str) {
    if !installed(kind, name) {
        return;
    }
    let dir = open_tempdir("ixbench-cancel-");
    let srv = server::start(kind, &ServerOptions::new(dir.path().join("data"))).unwrap();
    let url = srv.url();
    let out1 = dir.path().join("r1");
    let o = ixbench(&[
        "run",
        "--target",
        &url,
        "--out",
        out1.to_str().unwrap(),
        "--rows",
        "2000",
        "--steps",
        "l.i0",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out2 = dir.path().join("r2");
    let args = [
        "run",
        "--target",
        &url,
        "--out",
        out2.to_str().unwrap(),
        "--rows",
        "2000",
        "--steps",
        "l.x",
    ];
    let spawn = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_ixbench"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let waiting = |count: &mut dyn FnMut() -> i64| {
        let t0 = std::time::Instant::now();
        while count() == 0 {
            assert!(t0.elapsed() < Duration::from_secs(60), "l.x never waited");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let gone = |count: &mut dyn FnMut() -> i64| {
        // Generous: without the cancel it never ends while the lock is held.
        let t0 = std::time::Instant::now();
        while count() > 0 {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "the ixbench statement still runs on the server after ixbench exited"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    match kind {
        ServerKind::Postgres => {
            let mut admin = crate::common::sql::connect(&srv.url_with_password()).unwrap();
            let mut locker = crate::common::sql::connect(&srv.url_with_password()).unwrap();
            // ROW EXCLUSIVE lets ixbench count rows but blocks CREATE INDEX (SHARE).
            locker
                .batch_execute("BEGIN; LOCK TABLE pi1 IN ROW EXCLUSIVE MODE")
                .unwrap();
            let mut count = || -> i64 {
                admin
                    .query_one(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE \
                         'ixbench-%' AND state = 'active' AND query ILIKE '%INDEX%'",
                        &[],
                    )
                    .unwrap()
                    .get(0)
            };
            let child = spawn();
            waiting(&mut count);
            kill(child.id(), libc::SIGTERM);
            let (o, took) = wait_limited(child, Duration::from_secs(60));
            eprintln!(
                "MEASURED {kind} cancel: exit {:?} after {:.2} s",
                o.status.code(),
                took.as_secs_f64()
            );
            assert_eq!(
                o.status.code(),
                Some(143),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            gone(&mut count);
            locker.batch_execute("ROLLBACK").unwrap();
        }
        ServerKind::Mariadb => {
            let mut admin = crate::common::sql::connect(&srv.url_with_password()).unwrap();
            let mut locker = crate::common::sql::connect(&srv.url_with_password()).unwrap();
            // An open transaction that read pi1 holds its metadata lock: ALTER/CREATE INDEX
            // waits for it.
            locker.query_drop("START TRANSACTION").unwrap();
            locker
                .query_drop("SELECT * FROM ixbench.pi1 LIMIT 1")
                .unwrap();
            let mut count = || -> i64 {
                admin
                    .query_first(
                        "SELECT count(*) FROM information_schema.PROCESSLIST WHERE \
                         COMMAND = 'Query' AND INFO LIKE '%INDEX%' AND INFO NOT LIKE \
                         '%PROCESSLIST%'",
                    )
                    .unwrap()
                    .unwrap()
            };
            let child = spawn();
            waiting(&mut count);
            kill(child.id(), libc::SIGTERM);
            let (o, took) = wait_limited(child, Duration::from_secs(60));
            eprintln!(
                "MEASURED {kind} cancel: exit {:?} after {:.2} s",
                o.status.code(),
                took.as_secs_f64()
            );
            assert_eq!(
                o.status.code(),
                Some(143),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            gone(&mut count);
            locker.query_drop("ROLLBACK").unwrap();
        }
    }
    let run = run_json(&out2);
    assert_eq!(run["status"], "interrupted");
    assert_eq!(run["steps"][0]["status"], "interrupted");
    // Without the cancel, ixbench would wait as long as the lock is held (wait_limited
    // fails), and the statement would stay on the server (checked by hand with SIGKILL on
    // PostgreSQL: the backend kept waiting for the lock).
    srv.stop().unwrap();
}

#[test]
fn postgres_stop_cancels_the_statement_in_flight() {
    cancel_in_flight(
        ServerKind::Postgres,
        "postgres_stop_cancels_the_statement_in_flight",
    );
}

#[test]
fn mariadb_stop_cancels_the_statement_in_flight() {
    cancel_in_flight(
        ServerKind::Mariadb,
        "mariadb_stop_cancels_the_statement_in_flight",
    );
}

/// Run ixbench against `url` expecting a one-line error within the hang limit; returns it.
fn connect_error(url: &str, timeout: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args([
            "run",
            "--target",
            url,
            "--out",
            out.to_str().unwrap(),
            "--connect-timeout",
            timeout,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A hang, not a speed goal: far beyond the timeout.
    let (o, took) = wait_limited(child, Duration::from_secs(60));
    let err = assert_one_line_error(&o);
    eprintln!(
        "MEASURED {url}: exit {:?} after {:.2} s: {err}",
        o.status.code(),
        took.as_secs_f64()
    );
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!out.exists(), "no empty results directory left");
    err
}

#[test]
fn a_url_of_the_other_protocol_fails_saying_so() {
    let name = "a_url_of_the_other_protocol_fails_saying_so";
    if !installed(ServerKind::Postgres, name) || !installed(ServerKind::Mariadb, name) {
        return;
    }
    let dir = open_tempdir("ixbench-proto-");
    let pg = server::start(
        ServerKind::Postgres,
        &ServerOptions::new(dir.path().join("pg")),
    )
    .unwrap();
    let my = server::start(
        ServerKind::Mariadb,
        &ServerOptions::new(dir.path().join("my")),
    )
    .unwrap();
    let err = connect_error(&format!("mysql://root@127.0.0.1:{}/ixbench", pg.port), "5");
    assert!(
        err.contains("speaks the PostgreSQL protocol, not the MySQL/MariaDB protocol"),
        "{err}"
    );
    let err = connect_error(
        &format!("postgres://postgres@127.0.0.1:{}/ixbench", my.port),
        "5",
    );
    assert!(
        err.contains("speaks the MySQL/MariaDB protocol, not the PostgreSQL protocol"),
        "{err}"
    );
    pg.stop().unwrap();
    my.stop().unwrap();
}

#[test]
fn a_server_that_never_answers_gives_a_timeout_error() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    // Accept and hold every connection, never saying a word.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming() {
            held.push(s);
        }
    });
    for url in [
        format!("postgres://u@127.0.0.1:{port}/db"),
        format!("mysql://u@127.0.0.1:{port}/db"),
    ] {
        let err = connect_error(&url, "1");
        assert!(err.contains("did not answer within 1 s"), "{err}");
    }
}

/// A password holding `@ : / #` (and `?`, a space) works and appears in no output nor file,
/// not even in part.
fn odd_password(kind: ServerKind, name: &str) {
    if !installed(kind, name) {
        return;
    }
    let dir = open_tempdir("ixbench-pw-");
    let srv = server::start(kind, &ServerOptions::new(dir.path().join("data"))).unwrap();
    let pw = "Qx7@Rd8:Zk9/Wm4#Tv2?Hj5 Lp3";
    let user = "bench";
    match kind {
        ServerKind::Postgres => {
            let mut c = crate::common::sql::connect(&srv.url_with_password()).unwrap();
            c.batch_execute(&format!(
                "CREATE ROLE {user} LOGIN SUPERUSER PASSWORD '{pw}'"
            ))
            .unwrap();
        }
        ServerKind::Mariadb => {
            let mut c = crate::common::sql::connect(&srv.url_with_password()).unwrap();
            c.query_drop(format!(
                "CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY '{pw}'"
            ))
            .unwrap();
            c.query_drop(format!("GRANT ALL ON *.* TO '{user}'@'127.0.0.1'"))
                .unwrap();
        }
    }
    let scheme = match kind {
        ServerKind::Postgres => "postgres",
        ServerKind::Mariadb => "mysql",
    };
    let url = format!("{scheme}://{user}:{pw}@127.0.0.1:{}/ixbench", srv.port);
    let fragments: Vec<&str> = pw
        .split(['@', ':', '/', '#', '?', ' '])
        .filter(|f| !f.is_empty())
        .collect();
    let check = |what: &str, text: &str| {
        for f in &fragments {
            assert!(!text.contains(f), "{what} holds {f:?}: {text}");
        }
    };
    // A run with it works...
    let out = dir.path().join("ok");
    let o = ixbench(&[
        "run",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "500",
        "--steps",
        "l.i0",
    ]);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{se}");
    check("stdout", &so);
    check("stderr", &se);
    for f in std::fs::read_dir(&out).unwrap() {
        let p = f.unwrap().path();
        if p.is_file() {
            check(
                &p.display().to_string(),
                &String::from_utf8_lossy(&std::fs::read(&p).unwrap()),
            );
        }
    }
    // ... and errors never show it either: a wrong port, a bad URL, a bad option value.
    let bad_port = url.replace(&format!(":{}/", srv.port), ":1/");
    let bad_url = url.replace(&format!(":{}/", srv.port), ":notaport/");
    let bp_out = dir.path().join("bp");
    for args in [
        vec![
            "run",
            "--target",
            bad_port.as_str(),
            "--out",
            bp_out.to_str().unwrap(),
        ],
        vec!["run", "--target", bad_url.as_str()],
        vec!["run", "--rows", url.as_str()],
    ] {
        let o = ixbench(&args);
        let (so, se) = text(&o);
        assert!(!o.status.success());
        check("stdout", &so);
        check("stderr", &se);
    }
    let o = ixbench(&["run", "--target", &bad_url]);
    assert!(text(&o).1.contains("percent-encode"), "{}", text(&o).1);
    srv.stop().unwrap();
}

#[test]
fn postgres_password_with_url_characters_is_never_shown() {
    odd_password(
        ServerKind::Postgres,
        "postgres_password_with_url_characters_is_never_shown",
    );
}

#[test]
fn mariadb_password_with_url_characters_is_never_shown() {
    odd_password(
        ServerKind::Mariadb,
        "mariadb_password_with_url_characters_is_never_shown",
    );
}

/// A third signal exits at once (run.json may stay `running`), but still asks the throwaway
/// server to shut down: no server process is left behind.
#[test]
fn third_ctrl_c_exits_at_once_and_leaves_no_server() {
    let name = "third_ctrl_c_exits_at_once_and_leaves_no_server";
    if !installed(ServerKind::Postgres, name) {
        return;
    }
    let dir = open_tempdir("ixbench-stop3-");
    let out = dir.path().join("r");
    let args = [
        "run",
        "--target",
        "postgres",
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "5000000",
        "--interval",
        "0.2",
        "--steps",
        "l.i0",
    ];
    let child = spawn_until_intervals(&args, &out, "l.i0", 2, Duration::from_secs(120));
    let pid = child.id();
    for _ in 0..3 {
        kill(pid, libc::SIGINT);
        std::thread::sleep(Duration::from_millis(50));
    }
    let (o, took) = wait_limited(child, Duration::from_secs(60));
    eprintln!(
        "MEASURED third SIGINT: exit {:?} after {:.2} s",
        o.status.code(),
        took.as_secs_f64()
    );
    assert_eq!(o.status.code(), Some(130));
    let datadir = out.join("postgres-data");
    let t0 = std::time::Instant::now();
    while !processes_mentioning(datadir.to_str().unwrap()).is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the server outlived ixbench's exit"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A server that starts the protocol and then stops answering: it passes the first check
/// (PostgreSQL: answers the SSLRequest; MySQL: sends a valid greeting) but never answers the
/// driver's handshake. The connect timeout covers the handshake, not only the TCP connect.
#[test]
fn a_server_that_stops_answering_during_the_handshake_gives_a_timeout_error() {
    use std::io::{Read, Write};
    fn serve(greeting: Option<Vec<u8>>) -> u16 {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for s in l.incoming() {
                let Ok(mut s) = s else { continue };
                match &greeting {
                    Some(g) => {
                        let _ = s.write_all(g);
                    }
                    None => {
                        let mut b = [0u8; 8];
                        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                        // An SSLRequest gets PostgreSQL's "no SSL"; anything else, silence.
                        if s.read_exact(&mut b).is_ok() && b == [0, 0, 0, 8, 4, 210, 22, 47] {
                            let _ = s.write_all(b"N");
                        }
                    }
                }
                held.push(s);
            }
        });
        port
    }
    // A MySQL HandshakeV10: protocol 10, version, connection id, salt, capabilities
    // (protocol 4.1, secure connection, plugin auth), charset, status, auth plugin name.
    let mut body = vec![10u8];
    body.extend_from_slice(b"5.5.5-10.11.0-fake\0");
    body.extend_from_slice(&7u32.to_le_bytes());
    body.extend_from_slice(b"abcdefgh\0");
    body.extend_from_slice(&0xf7ffu16.to_le_bytes());
    body.push(33);
    body.extend_from_slice(&2u16.to_le_bytes());
    body.extend_from_slice(&0x000fu16.to_le_bytes());
    body.push(21);
    body.extend_from_slice(&[0u8; 10]);
    body.extend_from_slice(b"ijklmnopqrst\0");
    body.extend_from_slice(b"mysql_native_password\0");
    let mut packet = (body.len() as u32).to_le_bytes()[..3].to_vec();
    packet.push(0);
    packet.extend_from_slice(&body);
    let my = serve(Some(packet));
    let pg = serve(None);
    for url in [
        format!("postgres://u:pw@127.0.0.1:{pg}/db"),
        format!("mysql://u:pw@127.0.0.1:{my}/db"),
    ] {
        let err = connect_error(&url, "1");
        assert!(err.contains("no answer within"), "{err}");
        assert!(!err.contains(":pw@"), "{err}");
    }
}

/// SIGTERM on the embedded target: the same promise without a server.
#[test]
fn sqlite_sigterm_keeps_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let args = [
        "run",
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "50000000",
        "--interval",
        "0.2",
        "--steps",
        "l.i0",
    ];
    let child = spawn_until_intervals(&args, &out, "l.i0", 2, Duration::from_secs(60));
    kill(child.id(), libc::SIGTERM);
    let (o, took) = wait_limited(child, Duration::from_secs(60));
    eprintln!(
        "MEASURED sqlite SIGTERM: exit {:?} after {:.2} s",
        o.status.code(),
        took.as_secs_f64()
    );
    assert_eq!(o.status.code(), Some(143));
    let run = run_json(&out);
    assert_eq!(run["status"], "interrupted");
    assert_eq!(run["steps"][0]["status"], "interrupted");
    for f in ["steps.csv", "steps.md", "report.html"] {
        assert!(out.join(f).is_file(), "{f} written");
    }
}

/// Ctrl-C while l.x builds its indexes: the step is interrupted, keeps every build that
/// finished, names the indexes it left unbuilt (once: not `interrupted: interrupted`), and its
/// client figures are the ones measured (peak RSS known, never 0).
#[test]
fn sqlite_stop_during_lx_keeps_its_builds() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args([
            "run",
            "--out",
            out.to_str().unwrap(),
            "--rows",
            "200000",
            "--steps",
            "l.i0,l.x",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ixbench starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines() {
            let l = line.unwrap();
            if l.starts_with("== l.x") {
                let _ = tx.send(());
            }
            all.push_str(&l);
            all.push('\n');
        }
        all
    });
    if rx.recv_timeout(Duration::from_secs(180)).is_err() {
        let _ = child.kill();
        panic!("l.x never began");
    }
    kill(child.id(), libc::SIGINT);
    let (o, _) = wait_limited(child, Duration::from_secs(120));
    let text = reader.join().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    let run = run_json(&out);
    let lx = &run["steps"][1];
    assert_eq!(lx["name"], "l.x");
    assert_eq!(lx["status"], "interrupted", "{lx}");
    let warnings: Vec<&str> = lx["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    for w in &warnings {
        assert!(!w.contains("interrupted: interrupted"), "{w}");
    }
    assert!(!text.contains("interrupted: interrupted"), "{text}");
    // measured over the builds (or the whole step when none finished): never 0
    let rss = lx["summary"]["client_rss_mb"].as_f64();
    assert!(rss.is_some_and(|v| v > 0.0), "client_rss_mb {rss:?}");
    assert!(!text.contains("peak rss 0 MB"), "{text}");
    // every index is either built (and kept) or named as not built
    if let Some(w) = warnings.iter().find(|w| w.ends_with(" not built")) {
        let unbuilt: Vec<&str> = w
            .trim_start_matches("interrupted: ")
            .trim_end_matches(" not built")
            .split(", ")
            .collect();
        let built: Vec<String> = lx["index_builds"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|b| b["indexes"].as_array().unwrap().clone())
            .map(|i| i.as_str().unwrap().to_string())
            .collect();
        let mut all: Vec<String> = built.to_vec();
        all.extend(unbuilt.iter().map(|s| s.to_string()));
        all.sort();
        assert_eq!(
            all,
            ["pi1_marketsegment", "pi1_pdc", "pi1_registersegment"],
            "built {built:?}, not built {unbuilt:?}"
        );
        for b in &built {
            assert!(
                text.contains(&format!("   {b} on pi1: ")),
                "{b} not printed"
            );
        }
    }
}

/// `run --size smoke --steps l.i0` on `url` into `out`, within 150 s.
fn smoke_load(url: &str, out: &std::path::Path) -> (std::process::Output, Duration) {
    let child = spawn_ixbench(&[
        "run",
        "--target",
        url,
        "--size",
        "smoke",
        "--steps",
        "l.i0",
        "--out",
        out.to_str().unwrap(),
    ]);
    wait_limited(child, Duration::from_secs(150))
}

/// Another session holds ixbench's table (an open transaction that read it): loading it again
/// must drop it, and the drop waits a bounded time, then fails in one line naming the cause
/// (it waited forever, with nothing on the screen but the load's first line).
fn a_held_table_is_a_bounded_wait(kind: ServerKind, name: &str, begin: &str) {
    let Some(s) = start_server(name, kind, false) else {
        return;
    };
    let dir = open_tempdir("ixbench-held-");
    let url = s.url();
    let run = |out: &str| smoke_load(&url, &dir.path().join(out));
    let (o, _) = run("first");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut blocker = common::sql::connect(&s.url_with_password()).unwrap();
    blocker.batch_execute(begin).unwrap();
    let (o, waited) = run("second");
    let err = assert_one_line_error(&o);
    assert!(
        err.contains("another session holds a lock on it (waited 10 s)"),
        "{name}: {err}"
    );
    assert!(waited < Duration::from_secs(60), "{name}: {waited:?}");
    blocker.batch_execute("ROLLBACK").unwrap();
}

#[test]
fn postgres_a_held_table_is_a_bounded_wait() {
    a_held_table_is_a_bounded_wait(
        ServerKind::Postgres,
        "postgres_a_held_table_is_a_bounded_wait",
        "BEGIN; SELECT count(*) FROM pi1",
    );
}

#[test]
fn mariadb_a_held_table_is_a_bounded_wait() {
    a_held_table_is_a_bounded_wait(
        ServerKind::Mariadb,
        "mariadb_a_held_table_is_a_bounded_wait",
        "START TRANSACTION; SELECT count(*) FROM pi1",
    );
}

/// A DDL that another session's open transaction holds up runs past `--ddl-timeout` and is
/// cancelled by ixbench: the error says it was ixbench's timeout (the DBMS only says a user
/// cancelled the statement: "canceling statement due to user request", "Query execution was
/// interrupted"), run.json is `failed` with the timeline kept and the cancel marked as the
/// timeout's, no index left half-built, the rows intact, no ixbench left running.
fn ddl_timeout_says_so(kind: ServerKind, name: &str, begin: &str) {
    let Some(s) = start_server(name, kind, false) else {
        return;
    };
    let dir = open_tempdir("ixbench-ddlto-");
    let url = s.url();
    let mut quick = crate::ddl::QUICK.to_vec();
    quick.extend(["--table-size", "2000"]);
    let first = dir.path().join("first");
    let mut a = vec!["ddl", "--target", &url, "--out", first.to_str().unwrap()];
    a.extend_from_slice(&quick);
    a.extend(["--pass-on", "no-verdict"]);
    let o = ixbench(&a);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut blocker = common::sql::connect(&s.url_with_password()).unwrap();
    blocker.batch_execute(begin).unwrap();
    let out = dir.path().join("cancel");
    let mut a = vec![
        "ddl",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--reuse",
        "--ddl-timeout",
        "2",
    ];
    a.extend_from_slice(&quick);
    let child = spawn_ixbench(&a);
    // The blocker ends once ixbench has cancelled (so the clean-up is not held up too).
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(out.join("intervals.ndjson"))
        .unwrap_or_default()
        .contains("DDL cancelled")
    {
        assert!(t0.elapsed() < Duration::from_secs(90), "{name}: no cancel");
        std::thread::sleep(Duration::from_millis(100));
    }
    blocker.batch_execute("ROLLBACK").unwrap();
    let (o, _) = wait_limited(child, Duration::from_secs(90));
    let err = assert_one_line_error(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the DDL ran past --ddl-timeout 2 s and was cancelled"),
        "{name}: {err}"
    );
    for dbms_says in ["user request", "interrupted"] {
        assert!(!err.contains(dbms_says), "{name}: {err}");
    }
    let run = run_json(&out);
    assert_eq!(run["status"], "failed", "{name}");
    let p = &run["ddl"]["points"][0];
    assert_eq!(p["ddl"]["cancelled"], true, "{name}");
    assert_eq!(p["ddl"]["timed_out"], true, "{name}");
    assert!(!p["timeline"].as_array().unwrap().is_empty(), "{name}");
    for c in p["checks"].as_array().unwrap() {
        assert_eq!(c["ok"], true, "{name}: {c}");
    }
    assert!(processes_mentioning(&out.display().to_string()).is_empty());
    // The cancelled index is not there, half-built or INVALID; the rows are all there.
    let mut c = common::sql::connect(&s.url_with_password()).unwrap();
    let n: Option<i64> = c.query_first("SELECT count(*) FROM sbtest1").unwrap();
    assert!(n.unwrap() >= 2000, "{name}: {n:?}");
    let idx = match kind {
        ServerKind::Postgres => {
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'sbtest1_c_ixb'".to_string()
        }
        _ => "SELECT count(*) FROM information_schema.statistics WHERE table_schema = DATABASE() \
              AND index_name = 'sbtest1_c_ixb'"
            .to_string(),
    };
    let n: Option<i64> = c.query_first(idx).unwrap();
    assert_eq!(n, Some(0), "{name}");
}

#[test]
fn postgres_ddl_timeout_says_so() {
    ddl_timeout_says_so(
        ServerKind::Postgres,
        "postgres_ddl_timeout_says_so",
        "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM sbtest1",
    );
}

#[test]
fn mariadb_ddl_timeout_says_so() {
    ddl_timeout_says_so(
        ServerKind::Mariadb,
        "mariadb_ddl_timeout_says_so",
        "START TRANSACTION; SELECT count(*) FROM sbtest1",
    );
}

/// `merge` of a part whose ixbench is still running (here stopped with SIGSTOP while part 0
/// finishes): the error names that part as still running (its run.json status), not "the parts
/// ran different steps"; nothing is written. Once it goes on and ends, the parts merge.
#[test]
fn merge_of_a_part_still_running_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let part = |k: &str| {
        let out = dir.path().join(format!("p{k}"));
        let mut a = NULL_READ_RUN.to_vec();
        a.extend([
            "--client-id",
            k,
            "--client-count",
            "2",
            "--out",
            out.to_str().unwrap(),
        ]);
        let child = spawn_ixbench(&a);
        (out, child)
    };
    let (out1, c1) = part("1");
    let t0 = std::time::Instant::now();
    while !out1.join("run.json").exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "part 1 wrote no run.json"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(c1.id(), libc::SIGSTOP);
    let (out0, c0) = part("0");
    let (o, _) = wait_limited(c0, Duration::from_secs(120));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let merged = dir.path().join("m");
    let merge = || {
        ixbench(&[
            "merge",
            out0.to_str().unwrap(),
            out1.to_str().unwrap(),
            "-o",
            merged.to_str().unwrap(),
        ])
    };
    let e = assert_one_line_error(&merge());
    kill(c1.id(), libc::SIGCONT);
    assert!(
        e.contains(&format!("{} is still running", out1.display())),
        "{e}"
    );
    assert!(!e.contains("different steps"), "{e}");
    assert!(!merged.exists());
    let (o, _) = wait_limited(c1, Duration::from_secs(120));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = merge();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(run_json(&merged)["status"], "ok");
}

/// Another session holds a lock ixbench's load needs before it writes a row (PostgreSQL: `LOCK
/// TABLE ixbench_tables`, the record of ixbench's tables; MariaDB: `FLUSH TABLES WITH READ
/// LOCK`): the wait is shown while it lasts, naming the session that holds the lock where the
/// DBMS can tell, and after 30 s the statement is cancelled with a one-line error saying so.
/// It waited forever (a day on MariaDB, its lock_wait_timeout), the screen showing the step's
/// first line and nothing more. The user's rows are intact; run.json says failed.
fn a_held_lock_is_shown_and_bounded(kind: ServerKind, name: &str, hold: &str) {
    let Some(s) = start_server(name, kind, false) else {
        return;
    };
    let dir = open_tempdir("ixbench-lockwait-");
    let url = s.url();
    let run = |out: &std::path::Path| smoke_load(&url, out);
    let mut blocker = common::sql::connect(&s.url_with_password()).unwrap();
    if kind == ServerKind::Postgres {
        // The record of ixbench's tables exists once a first run made it.
        let (o, _) = run(&dir.path().join("first"));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    blocker
        .batch_execute("CREATE TABLE mine (a int); INSERT INTO mine VALUES (1), (2), (3)")
        .unwrap();
    let id: Option<i64> = blocker
        .query_first(match kind {
            ServerKind::Postgres => "SELECT pg_backend_pid()",
            _ => "SELECT CONNECTION_ID()",
        })
        .unwrap();
    let id = id.unwrap();
    blocker.batch_execute(hold).unwrap();
    let out = dir.path().join("held");
    let (o, waited) = run(&out);
    let err = assert_one_line_error(&o);
    assert_eq!(o.status.code(), Some(1), "{name}: {err}");
    assert!(err.contains("waited 30 s for a lock"), "{name}: {err}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let shown = lock_waits_shown(&stdout, ": waiting ");
    assert!(
        !shown.is_empty(),
        "{name}: the wait was not shown: {stdout}"
    );
    match kind {
        ServerKind::Postgres => {
            let holder = format!("held by session {id} (");
            assert!(err.contains(&holder), "{name}: {err}");
            assert!(shown[0].contains(&holder), "{name}: {stdout}");
        }
        _ => {
            // FLUSH TABLES WITH READ LOCK is a backup lock on MariaDB 10.4+.
            assert!(
                err.contains("global read lock") || err.contains("backup lock"),
                "{name}: {err}"
            );
            assert!(
                err.contains(&format!("held by session {id} ("))
                    || err.contains("the DBMS does not say which"),
                "{name}: {err}"
            );
        }
    }
    assert!(waited < Duration::from_secs(120), "{name}: {waited:?}");
    assert_eq!(run_json(&out)["status"], "failed", "{name}");
    blocker
        .batch_execute(match kind {
            ServerKind::Postgres => "ROLLBACK",
            _ => "UNLOCK TABLES",
        })
        .unwrap();
    let n: Option<i64> = blocker.query_first("SELECT count(*) FROM mine").unwrap();
    assert_eq!(n, Some(3), "{name}");
    // With the lock gone the same run goes through.
    let (o, _) = run(&dir.path().join("after"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The lines of `stdout` that show a wait for a lock, of the work that `says` names.
fn lock_waits_shown<'a>(stdout: &'a str, says: &str) -> Vec<&'a str> {
    stdout
        .lines()
        .filter(|l| l.contains(says) && l.contains(" s for a lock"))
        .collect()
}

#[test]
fn postgres_a_held_lock_is_shown_and_bounded() {
    a_held_lock_is_shown_and_bounded(
        ServerKind::Postgres,
        "postgres_a_held_lock_is_shown_and_bounded",
        "BEGIN; LOCK TABLE ixbench_tables IN ACCESS EXCLUSIVE MODE",
    );
}

#[test]
fn mariadb_a_held_lock_is_shown_and_bounded() {
    a_held_lock_is_shown_and_bounded(
        ServerKind::Mariadb,
        "mariadb_a_held_lock_is_shown_and_bounded",
        "FLUSH TABLES WITH READ LOCK",
    );
}

/// The server closes ixbench's idle connection (its main session waits through a read step)
/// by its own idle timeout: the error names the timeout and the setting (PostgreSQL
/// `idle_session_timeout`, MariaDB `wait_timeout`), not only "the connection was lost
/// earlier"; run.json is failed with the finished steps and the intervals kept.
fn an_idle_timeout_is_named(kind: ServerKind, name: &str, set: (&str, &str), says: &str) {
    let Some(s) = start_server_set(name, kind, false, &[set]) else {
        return;
    };
    let dir = open_tempdir("ixbench-idle-");
    let out = dir.path().join("r");
    let child = spawn_ixbench(&[
        "run",
        "--target",
        &s.url(),
        "--size",
        "smoke",
        "--steps",
        "l.i0,l.x,qr100",
        "--query-seconds",
        "6",
        "--interval",
        "0.5",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (o, _) = wait_limited(child, Duration::from_secs(150));
    let err = assert_one_line_error(&o);
    assert_eq!(o.status.code(), Some(1), "{name}: {err}");
    assert!(err.contains(says), "{name}: {err}");
    assert!(err.contains("idle"), "{name}: {err}");
    let run = run_json(&out);
    assert_eq!(run["status"], "failed", "{name}");
    assert_eq!(run["steps"][0]["status"], "ok", "{name}");
    assert!(
        intervals(&out).iter().any(|l| l["step"] == "qr100"),
        "{name}: the read step's intervals are kept"
    );
}

#[test]
fn postgres_an_idle_timeout_is_named() {
    an_idle_timeout_is_named(
        ServerKind::Postgres,
        "postgres_an_idle_timeout_is_named",
        ("idle_session_timeout", "3000"),
        "idle_session_timeout",
    );
}

#[test]
fn mariadb_an_idle_timeout_is_named() {
    an_idle_timeout_is_named(
        ServerKind::Mariadb,
        "mariadb_an_idle_timeout_is_named",
        ("wait_timeout", "3"),
        "wait_timeout",
    );
}

/// The results directory's disk fills up part way through a step (a small tmpfs): the error
/// names the disk and the file it could not write (it said "No space left on device (os error
/// 28)"), and run.json is marked failed with the steps measured up to then (it was left
/// `running`, without the step that failed); no temp or reserve file is left.
#[test]
fn a_full_results_disk_is_named_and_the_run_marked_failed() {
    let name = "a_full_results_disk_is_named_and_the_run_marked_failed";
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            "size=1m",
            "tmpfs",
            mnt.to_str().unwrap(),
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIPPED {name}: cannot mount a tmpfs here (not root?)");
        return;
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.clone());
    // About 300 KiB left: ixbench's reserve for run.json (256 KiB) and a few seconds of lines.
    std::fs::write(mnt.join("filler"), vec![1u8; 740 * 1024]).unwrap();
    let out = mnt.join("r");
    let mut a: Vec<&str> = NULL_READ_RUN.to_vec();
    let secs = a.iter().position(|x| *x == "--query-seconds").unwrap() + 1;
    a[secs] = "60";
    let interval = a.iter().position(|x| *x == "--interval").unwrap() + 1;
    a[interval] = "0.05";
    a.extend(["--out", out.to_str().unwrap()]);
    let (o, _) = wait_limited(spawn_ixbench(&a), Duration::from_secs(120));
    let err = assert_one_line_error(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "the disk holding the results directory {} is full: cannot write ",
            out.display()
        )),
        "{err}"
    );
    let run = run_json(&out);
    assert_eq!(run["status"], "failed", "{}", run["error"]);
    let steps = run["steps"].as_array().unwrap();
    assert_eq!(steps[0]["status"], "ok");
    assert_eq!(steps.last().unwrap()["name"], "qr100");
    assert_eq!(steps.last().unwrap()["status"], "failed");
    for f in ["run.json.tmp", "run.json.reserve"] {
        assert!(!out.join(f).exists(), "{f} left behind");
    }
    assert!(processes_mentioning(&out.display().to_string()).is_empty());
}

/// `ixbench ARGS --target URL --out DIR/OUT`, failing the test when it has not ended after
/// 150 s: its output, how long it took, and its results directory.
fn ixbench_bounded(
    dir: &std::path::Path,
    url: &str,
    args: &[&str],
    out: &str,
) -> (std::process::Output, Duration, std::path::PathBuf) {
    let out = dir.join(out);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args(args)
        .args(["--target", url, "--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (o, waited) = wait_limited(child, Duration::from_secs(150));
    (o, waited, out)
}

/// Another session holds a lock on ixbench's table that an index build needs but a read does
/// not (PostgreSQL: `LOCK TABLE pi1, pl1 IN SHARE ROW EXCLUSIVE MODE`, which blocks CREATE INDEX;
/// MariaDB: an open transaction that read the table, whose metadata lock blocks ALTER TABLE
/// ... ADD INDEX): `ixbench index --reuse`, and `ixbench run`'s l.x, show the wait while it
/// lasts, naming the session where the DBMS can tell, and cancel the build after 30 s with a
/// one-line error saying so. The build waited forever before, the screen showing `index build
/// ...` and nothing more.
fn a_held_lock_bounds_an_index_build(kind: ServerKind, name: &str, hold: &str, end: &str) {
    let Some(s) = start_server(name, kind, false) else {
        return;
    };
    let dir = open_tempdir("ixbench-buildlock-");
    let url = s.url();
    let ixbench = |args: &[&str], out: &str| ixbench_bounded(dir.path(), &url, args, out);
    // The index lab builds on pi1, run's l.x on a table of its own (pl1): the two wait for
    // the held lock at the same time, not one 30 s bound after the other.
    let lx = [
        "run",
        "--steps",
        "l.x",
        "--rows",
        "2000",
        "--table-prefix",
        "pl",
    ];
    for (prefix, out) in [("pi", "load"), ("pl", "load-lx")] {
        let load = [
            "run",
            "--steps",
            "l.i0",
            "--rows",
            "2000",
            "--table-prefix",
            prefix,
        ];
        let (o, _, _) = ixbench(&load, out);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let mut blocker = common::sql::connect(&s.url_with_password()).unwrap();
    let id: Option<i64> = blocker
        .query_first(match kind {
            ServerKind::Postgres => "SELECT pg_backend_pid()",
            _ => "SELECT CONNECTION_ID()",
        })
        .unwrap();
    let id = id.unwrap();
    blocker.batch_execute(hold).unwrap();
    let index = ["index", "--reuse", "--builds", "all"];
    // The index lab's builds and run's l.x: both time their builds on the one build timer,
    // which watches the build's sessions.
    let cases = [(&index[..], "held", "pi1"), (&lx[..], "held-lx", "pl1")];
    let ran: Vec<_> = std::thread::scope(|sc| {
        let runs: Vec<_> = cases
            .iter()
            .map(|&(args, out, _)| sc.spawn(move || ixbench(args, out)))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for (&(args, _, table), (o, waited, out)) in cases.iter().zip(ran) {
        let err = assert_one_line_error(&o);
        assert_eq!(o.status.code(), Some(1), "{name} {args:?}: {err}");
        assert!(
            err.contains(&format!("building {table}_")) && err.contains("waited 30 s for a lock"),
            "{name} {args:?}: {err}"
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        let shown = lock_waits_shown(&stdout, &format!("building {table}_"));
        assert!(
            !shown.is_empty(),
            "{name} {args:?}: the wait was not shown: {stdout}"
        );
        let holder = format!("held by session {id} (");
        match kind {
            ServerKind::Postgres => {
                assert!(err.contains(&holder), "{name} {args:?}: {err}");
                assert!(shown[0].contains(&holder), "{name} {args:?}: {stdout}");
            }
            _ => assert!(
                err.contains("metadata lock")
                    && (err.contains(&holder) || err.contains("the DBMS does not say which")),
                "{name} {args:?}: {err}"
            ),
        }
        assert!(
            waited < Duration::from_secs(120),
            "{name} {args:?}: {waited:?}"
        );
        assert_eq!(run_json(&out)["status"], "failed", "{name} {args:?}");
    }
    blocker.batch_execute(end).unwrap();
    let n: Option<i64> = blocker.query_first("SELECT count(*) FROM pi1").unwrap();
    assert_eq!(n, Some(2000), "{name}");
    // With the lock gone the same builds go through.
    let (o, _, _) = ixbench(&index, "after");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn postgres_a_held_lock_bounds_an_index_build() {
    a_held_lock_bounds_an_index_build(
        ServerKind::Postgres,
        "postgres_a_held_lock_bounds_an_index_build",
        "BEGIN; LOCK TABLE pi1, pl1 IN SHARE ROW EXCLUSIVE MODE",
        "ROLLBACK",
    );
}

#[test]
fn mariadb_a_held_lock_bounds_an_index_build() {
    a_held_lock_bounds_an_index_build(
        ServerKind::Mariadb,
        "mariadb_a_held_lock_bounds_an_index_build",
        "START TRANSACTION; SELECT count(*) FROM pi1; SELECT count(*) FROM pl1",
        "COMMIT",
    );
}

/// `ixbench timeseries` creating its table while another session holds a lock it needs (an
/// open transaction with `LOCK TABLE ixbench_tables`, ixbench's record of its tables): the
/// wait is shown and cancelled after 30 s with a one-line error, as the insert benchmark's
/// load does; it waited forever (issue 29).
#[test]
fn postgres_a_held_lock_bounds_the_timeseries_table() {
    let name = "postgres_a_held_lock_bounds_the_timeseries_table";
    let Some(s) = start_server(name, ServerKind::Postgres, false) else {
        return;
    };
    let dir = open_tempdir("ixbench-tslock-");
    let url = s.url();
    // The time-series tests' small shape.
    let mut args = vec!["timeseries"];
    args.extend_from_slice(crate::timeseries::SHAPE);
    let ts = |out: &str| ixbench_bounded(dir.path(), &url, &args, out);
    let (o, _, _) = ts("first");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut blocker = common::sql::connect(&s.url_with_password()).unwrap();
    let id: Option<i64> = blocker.query_first("SELECT pg_backend_pid()").unwrap();
    let id = id.unwrap();
    blocker
        .batch_execute("BEGIN; LOCK TABLE ixbench_tables IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let (o, waited, out) = ts("held");
    let err = assert_one_line_error(&o);
    assert!(
        err.contains("creating ts_metrics waited 30 s for a lock")
            && err.contains(&format!("held by session {id} (")),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("creating ts_metrics: waiting ") && l.contains(" s for a lock")),
        "the wait was not shown: {stdout}"
    );
    assert!(waited < Duration::from_secs(120), "{waited:?}");
    assert_eq!(run_json(&out)["status"], "failed");
    blocker.batch_execute("ROLLBACK").unwrap();
}

/// A statement that has run longer than the 30 s bound before it waits a moment for another
/// session's lock (an index build that waits at its end: CREATE INDEX CONCURRENTLY, MariaDB's
/// online ALTER) is not cancelled: a wait is counted from when the watcher sees it, not from
/// the statement's start (the server's count, which cancelled it at once) (issue 29).
#[test]
fn postgres_a_long_statement_waiting_briefly_is_not_cancelled() {
    let name = "postgres_a_long_statement_waiting_briefly_is_not_cancelled";
    let Some(s) = start_server(name, ServerKind::Postgres, false) else {
        return;
    };
    let spec = ixbench::dbms::TargetSpec::parse(&s.url_with_password()).unwrap();
    let target = ixbench::dbms::open(&spec, &Default::default()).unwrap();
    let mut conn = target.connect().unwrap();
    conn.execute("CREATE TABLE held (a int)").unwrap();
    let mut blocker = common::sql::connect(&s.url_with_password()).unwrap();
    blocker
        .batch_execute("BEGIN; LOCK TABLE held IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    // The lock is released 5 s after the statement starts waiting for it (at 31 s).
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(36));
        blocker.batch_execute("COMMIT").unwrap();
    });
    let r =
        ixbench::dbms::lock_watch::watched(target.as_ref(), conn.as_mut(), "locking held", |c| {
            c.execute("DO $$ BEGIN PERFORM pg_sleep(31); LOCK TABLE held; END $$")
        });
    release.join().unwrap();
    assert!(r.is_ok(), "{r:?}");
}
