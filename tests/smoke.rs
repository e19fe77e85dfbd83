//! `--size smoke` of every command (run, index, oltp, ddl, timeseries) on every engine:
//! SQLite, PostgreSQL, MariaDB InnoDB and MyRocks, one throwaway server per engine, and the
//! live status line: drawn on a terminal (a pty from `script`) without losing a line of the
//! output, and absent (not one escape byte) when stdout is not a terminal.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::{assert_all_ok, intervals, ixbench, run_json, start_server, text};
use ixbench::server::ServerKind;
use serde_json::Value;

/// Run `ixbench CMD --size smoke --target TARGET --out DIR/CMD EXTRA` and check it ended ok
/// (see [`check`]).
fn smoke(cmd: &str, target: &str, dir: &Path, extra: &[&str]) -> Value {
    let out = dir.join(cmd);
    let mut args = vec![
        cmd,
        "--size",
        "smoke",
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    // A smoke-sized load on a busy machine may miss its rate: NO VERDICT is not what this tests.
    if cmd == "ddl" {
        args.extend(["--pass-on", "no-verdict"]);
    }
    check(cmd, target, &ixbench(&args), &out)
}

/// Check a `--size smoke` run of `cmd` ended ok: exit status 0 (checks failed would be 3),
/// status ok, the preset recorded, every step of a run ok with its checks passed.
fn check(cmd: &str, target: &str, o: &Output, out: &Path) -> Value {
    let (stdout, stderr) = text(o);
    assert!(
        o.status.success(),
        "{cmd} on {target}: exit {:?}\n{stderr}\n{stdout}",
        o.status
    );
    assert!(
        !stdout.contains('\x1b'),
        "{cmd}: escape codes in piped output"
    );
    let run = run_json(out);
    assert_eq!(run["status"], "ok", "{cmd}: {}", run["error"]);
    assert_eq!(run["config"]["size"], "smoke", "{cmd}: preset not recorded");
    if cmd == "run" {
        let steps = assert_all_ok(&run);
        assert_eq!(steps.len(), 11, "run: every default step");
        assert!(stdout.contains("plan: 11 steps; 6 bounded by time add up to 12s"));
        // Every step's interval lines are on disk.
        let lines = intervals(out);
        for s in &steps {
            let name = s["name"].as_str().unwrap();
            if name != "l.x" && name != "maint" {
                assert!(
                    lines.iter().any(|l| l["step"] == name),
                    "run: no interval line of {name}"
                );
            }
        }
    }
    for s in run["steps"].as_array().into_iter().flatten() {
        for c in s["checks"].as_array().into_iter().flatten() {
            assert_eq!(c["ok"], true, "{cmd}: check {c}");
        }
    }
    run
}

/// Every command on one target.
fn all_commands(target: &str, engine: &[&str], timeseries: bool) {
    let dir = tempfile::tempdir().unwrap();
    every_command(timeseries, |cmd| smoke(cmd, target, dir.path(), engine));
}

/// Run (or read) `smoke(cmd)` for every command and check what each one made.
fn every_command(timeseries: bool, smoke: impl Fn(&str) -> Value) {
    smoke("run");
    let lab = smoke("index");
    assert!(
        !lab["builds"].as_array().unwrap().is_empty(),
        "index: no build"
    );
    let oltp = smoke("oltp");
    assert!(
        !oltp["oltp"].as_array().unwrap().is_empty(),
        "oltp: no result"
    );
    let ddl = smoke("ddl");
    assert!(
        !ddl["ddl"]["points"].as_array().unwrap().is_empty(),
        "ddl: no point"
    );
    if timeseries {
        let ts = smoke("timeseries");
        assert!(
            !ts["timeseries"].as_array().unwrap().is_empty(),
            "timeseries: no result"
        );
    }
}

#[test]
fn smoke_sqlite() {
    // The runs report::every_command_shows_the_checks_it_ran reads too (made once).
    every_command(true, |cmd| {
        let r = common::sqlite_smoke(cmd);
        check(cmd, "sqlite", &r.output, &r.out)
    });
}

#[test]
fn smoke_postgres() {
    let Some(s) = start_server("smoke_postgres", ServerKind::Postgres, false) else {
        return;
    };
    all_commands(&s.url(), &[], true);
}

#[test]
fn smoke_mariadb_innodb() {
    let Some(s) = start_server("smoke_mariadb_innodb", ServerKind::Mariadb, false) else {
        return;
    };
    all_commands(&s.url(), &["--engine", "innodb"], true);
}

#[test]
fn smoke_myrocks() {
    let Some(s) = start_server("smoke_myrocks", ServerKind::Mariadb, true) else {
        return;
    };
    all_commands(&s.url(), &["--engine", "rocksdb"], true);
}

/// On a terminal the status line is drawn (step k of n, the ETA, what l.x waits for) and the
/// output still has every line of the run; the same run piped has no escape byte at all.
#[test]
fn status_line_on_a_terminal_only() {
    if Command::new("script").arg("--version").output().is_err() {
        panic!("`script` (util-linux) is needed to give ixbench a terminal");
    }
    let dir = tempfile::tempdir().unwrap();
    let args = |out: &str| {
        format!(
            "{} run --size smoke --steps l.i0,l.x,l.i1,qr100 --time 2 --out {}",
            env!("CARGO_BIN_EXE_ixbench"),
            dir.path().join(out).display()
        )
    };
    let typescript = dir.path().join("typescript");
    let o = Command::new("script")
        .args(["-qec", &args("tty")])
        .arg(&typescript)
        .env("TERM", "xterm")
        .env_remove("IXBENCH_PROGRESS")
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let tty = String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()).into_owned();
    assert!(tty.contains('\x1b'), "no status line drawn on a terminal");
    for want in [
        "step 1 of 4: l.i0",
        "step 2 of 4: l.x",
        "step 3 of 4: l.i1",
        "step 4 of 4: qr100",
        "ETA",
        "ins/s",
    ] {
        assert!(tty.contains(want), "status line lacks {want:?}");
    }
    // Piped: the same run, not one escape byte, and every line of the terminal's output.
    let o = Command::new("sh")
        .args(["-c", &args("pipe")])
        .env("TERM", "xterm")
        .output()
        .unwrap();
    let (piped, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        !piped.contains('\x1b') && !piped.contains('\r'),
        "escapes in piped output"
    );
    assert!(!piped.contains("step 1 of 4"));
    let run = run_json(&dir.path().join("tty"));
    assert_all_ok(&run);
    assert_eq!(run["config"]["time_secs"], 2.0);
    // Each piped line that does not depend on timing is on the terminal too, in order.
    let stable: Vec<&str> = piped
        .lines()
        .filter(|l| l.starts_with("== ") || l.starts_with("   checks:") || l.starts_with("plan:"))
        .collect();
    assert_eq!(stable.len(), 4 + 4 + 1, "{piped}");
    let mut at = 0;
    for l in stable {
        match tty[at..].find(l) {
            Some(i) => at += i + l.len(),
            None => panic!("line missing on the terminal: {l:?}"),
        }
    }
}
