//! Faults on real servers: the server restarts in the middle of a step. ixbench must stop with a
//! one-line error naming the target (without a password), a non-zero exit, and every finished
//! step and interval on disk.
//!
//! Without the server binaries a test prints `SKIPPED <name>: <why>` and returns; with
//! `CI=true` it fails instead.

mod common;

use std::time::Duration;

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
