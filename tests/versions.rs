//! The version matrix: `ixbench run`, `ixbench ddl` and `ixbench index` at `--size smoke` pass
//! every self-check (exit 0, status ok, every check of run.json ok) on each server version
//! people run: PostgreSQL 12 to 18 (`.ci/run` installs them into `.ci/`, found by
//! `common::versions`) and MariaDB 10.11 (Debian's; InnoDB and MyRocks) and 11.8
//! (`.ci/mariadb118`), each a throwaway server of `--server-bin`. What a version lacks must be
//! an unknown with its reason, never a failed query or check: the DBMS's own figures are read
//! too (`--server-figures both`), no figure may be unknown because its query failed, and on
//! PostgreSQL the views a version lacks (pg_stat_wal before 14, pg_stat_io before 16) are
//! listed as unknown with the version. One test per version: they share nothing and run side
//! by side (4 at a time), and a test's three commands run at once, each on its own server.

use crate::common::{self, ixbench, run_json, text};

use std::path::Path;
use std::time::Duration;

/// A throwaway PostgreSQL `major` server (`None`: that version is not installed, see
/// [`common::skip`]).
fn throwaway_postgres(test: &str, major: u32) -> Option<common::TestServer> {
    let bin = common::versions::pg_bin(test, major)?;
    common::start_server_from(
        test,
        ixbench::server::ServerKind::Postgres,
        false,
        &[],
        Some(&bin),
    )
}

/// Every `checks` array in `v` (run.json: steps, builds, DDL points): (where, check).
fn checks<'a>(v: &'a serde_json::Value, at: &str, out: &mut Vec<(String, &'a serde_json::Value)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("checks", serde_json::Value::Array(cs)) => {
                        out.extend(cs.iter().map(|c| (at.to_string(), c)));
                    }
                    _ => checks(x, &format!("{at}.{k}"), out),
                }
            }
        }
        serde_json::Value::Array(xs) => {
            for (i, x) in xs.iter().enumerate() {
                checks(x, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Run `ixbench CMD --size smoke --server-figures both` with `target` (the target's and
/// server's options) and assert it passed every check; returns run.json.
fn passes(test: &str, dir: &Path, cmd: &str, target: &[&str]) -> serde_json::Value {
    let out = dir.join(cmd);
    let mut args = vec![cmd, "--size", "smoke", "--server-figures", "both"];
    args.extend_from_slice(target);
    args.extend(["--out", out.to_str().unwrap()]);
    // A smoke-sized load on a busy machine may miss its rate: NO VERDICT is not what this tests.
    if cmd == "ddl" {
        args.extend(["--pass-on", "no-verdict"]);
    }
    let o = ixbench(&args);
    let (stdout, stderr) = text(&o);
    let tail: String = stdout
        .lines()
        .filter(|l| l.contains("FAIL") || l.contains("checks"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        o.status.success(),
        "{test}: ixbench {} exited {:?}\n{tail}\n{stderr}",
        args.join(" "),
        o.status.code()
    );
    let run = run_json(&out);
    assert_eq!(run["status"], "ok", "{test} {cmd}: {}", run["error"]);
    let mut all = Vec::new();
    checks(&run, "", &mut all);
    assert!(!all.is_empty(), "{test} {cmd}: no checks in run.json");
    for (at, c) in &all {
        assert_eq!(c["ok"], true, "{test} {cmd}: check {at} {c}");
    }
    let json = run.to_string();
    assert!(
        !json.contains("the query failed"),
        "{test} {cmd}: a figure is unknown because its query failed (a version gap the DBMS \
         layer does not know): {}",
        json.match_indices("the query failed")
            .map(|(i, _)| &json[i.saturating_sub(200)..(i + 200).min(json.len())])
            .next()
            .unwrap_or_default()
    );
    run
}

/// [`passes`] of `run`, `ddl` and `index` with `target`, the three at once (each starts its own
/// throwaway server and writes its own results; one after the other they were three server
/// starts and three loads in a row): (command, run.json) in that order. A command that fails
/// panics its thread, which fails the test.
fn all_three(test: &str, dir: &Path, target: &[&str]) -> Vec<(&'static str, serde_json::Value)> {
    std::thread::scope(|sc| {
        let runs: Vec<_> = ["run", "ddl", "index"]
            .into_iter()
            .map(|cmd| (cmd, sc.spawn(move || passes(test, dir, cmd, target))))
            .collect();
        runs.into_iter()
            .map(|(cmd, r)| (cmd, r.join().unwrap()))
            .collect()
    })
}

/// The three commands on PostgreSQL `major`; the server is the version asked for and the
/// views it lacks are unknown with the version as the reason.
fn postgres(test: &str, major: u32) {
    let Some(bin) = common::versions::pg_bin(test, major) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let target = [
        "--target",
        "postgres",
        "--server-bin",
        bin.to_str().unwrap(),
    ];
    for (cmd, run) in all_three(test, dir.path(), &target) {
        let version = run["target"]["version"].as_str().unwrap_or_default();
        assert!(
            version.starts_with(&format!("{major}.")),
            "{test}: server version {version}"
        );
        let unknown = run["server_figures"]["dbms_unknown"].to_string();
        for (view, since) in [("pg_stat_wal", 14), ("pg_stat_io", 16)] {
            let said =
                format!("{view} is in PostgreSQL {since} and later; this server is {version}");
            assert_eq!(
                unknown.contains(&said),
                major < since,
                "{test} {cmd}: {view} (since {since}) in the unknowns: {unknown}"
            );
        }
    }
}

/// The three commands on a throwaway MariaDB (`bin`: its `--server-bin`, `None`: Debian's) of
/// version `want` with `engine`.
fn mariadb(test: &str, bin: Option<&Path>, want: &str, engine: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut target = vec!["--target", "mariadb", "--engine", engine];
    if let Some(b) = bin {
        target.extend(["--server-bin", b.to_str().unwrap()]);
    }
    for (_, run) in all_three(test, dir.path(), &target) {
        let version = run["target"]["version"].as_str().unwrap_or_default();
        assert!(
            version.starts_with(want),
            "{test}: server version {version}, not {want}"
        );
    }
}

#[test]
fn postgres_12() {
    postgres("postgres_12", 12);
}

#[test]
fn postgres_13() {
    postgres("postgres_13", 13);
}

#[test]
fn postgres_14() {
    postgres("postgres_14", 14);
}

#[test]
fn postgres_15() {
    postgres("postgres_15", 15);
}

#[test]
fn postgres_16() {
    postgres("postgres_16", 16);
}

#[test]
fn postgres_17() {
    postgres("postgres_17", 17);
}

#[test]
fn postgres_18() {
    postgres("postgres_18", 18);
}

#[test]
fn mariadb_10_11_innodb() {
    let test = "mariadb_10_11_innodb";
    if let Err(e) = ixbench::server::check_installed(ixbench::server::ServerKind::Mariadb) {
        return common::skip(test, &format!("{e:#}")).unwrap_or(());
    }
    mariadb(test, None, "10.11.", "innodb");
}

#[test]
fn mariadb_10_11_myrocks() {
    let test = "mariadb_10_11_myrocks";
    if let Err(e) = ixbench::server::check_installed(ixbench::server::ServerKind::Mariadb) {
        return common::skip(test, &format!("{e:#}")).unwrap_or(());
    }
    if !ixbench::server::rocksdb_available() {
        return common::skip(test, "the MyRocks plugin is not installed").unwrap_or(());
    }
    mariadb(test, None, "10.11.", "rocksdb");
}

#[test]
fn mariadb_11_8_innodb() {
    let test = "mariadb_11_8_innodb";
    let Some(bin) = common::versions::mariadb118_bin(test) else {
        return;
    };
    mariadb(test, Some(&bin), "11.8.", "innodb");
}

/// PostgreSQL before 15 (the statistics collector): the rows a session wrote just before it
/// ended are in the row counters read right after, even when the collector's last statistics
/// file is recent (a reader takes it when at most 500 ms old: the counts read before the fix
/// were that file's, 0 rows). Each round reads the counters (a fresh file), then writes and
/// ends a session and reads again at once.
fn collector_counts_a_session_just_ended(test: &str, major: u32) {
    let Some(pg) = throwaway_postgres(test, major) else {
        return;
    };
    let target = ixbench::dbms::postgres::Postgres::open(
        &pg.url(),
        &ixbench::dbms::TargetOptions::default(),
    )
    .unwrap();
    let mut main = target.connect().unwrap();
    main.execute("CREATE TABLE vt_rc (id int PRIMARY KEY)")
        .unwrap();
    let tables = vec!["vt_rc".to_string()];
    for round in 0..3 {
        let before = target
            .row_counters(main.as_mut(), &tables)
            .unwrap()
            .expect("PostgreSQL keeps row counters");
        let mut w = target.connect().unwrap();
        w.execute(&format!(
            "INSERT INTO vt_rc SELECT g FROM generate_series({}, {}) g",
            round * 10 + 1,
            round * 10 + 10
        ))
        .unwrap();
        drop(w);
        let after = target
            .row_counters(main.as_mut(), &tables)
            .unwrap()
            .unwrap();
        assert_eq!(
            after.inserted - before.inserted,
            10,
            "{test} round {round}: {before:?} {after:?}"
        );
    }
}

#[test]
fn postgres_12_counts_a_session_just_ended() {
    collector_counts_a_session_just_ended("postgres_12_counts_a_session_just_ended", 12);
}

#[test]
fn postgres_14_counts_a_session_just_ended() {
    collector_counts_a_session_just_ended("postgres_14_counts_a_session_just_ended", 14);
}

/// PostgreSQL 12 has no pg_stat_wal: the WAL bytes of a step are the difference of the WAL
/// position (`pg_current_wal_lsn()`, `pg_wal_lsn_diff`), in the DBMS's figures and in the
/// written bytes `compare` judges. Against the WAL position this test reads itself before and
/// after the run (nothing else writes to the server): the steps' WAL bytes are at most the
/// whole run's and most of it (the load and the index build are nearly all the WAL a run
/// writes; the tables' creation and the statistics between steps the rest).
#[test]
fn postgres_12_wal_bytes_from_the_wal_position() {
    let test = "postgres_12_wal_bytes_from_the_wal_position";
    let Some(s) = throwaway_postgres(test, 12) else {
        return;
    };
    use common::sql::SqlExt;
    let mut c = common::sql::connect(&s.url_with_password()).unwrap();
    let mut lsn = || -> i64 {
        c.query_one(
            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::int8",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let before = lsn();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = ixbench(&[
        "run",
        "--target",
        &s.url(),
        "--size",
        "smoke",
        "--steps",
        "l.i0,l.x",
        "--server-figures",
        "dbms",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}\n{stdout}");
    let whole = (lsn() - before) as f64;
    let run = run_json(&out);
    let mut steps = 0.0;
    for st in run["steps"].as_array().unwrap() {
        let rep = &st["server_reported"];
        let wal = rep["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["source"] == "pg_current_wal_lsn.wal_bytes")
            .unwrap_or_else(|| panic!("no WAL bytes in {}: {rep}", st["name"]));
        assert_eq!(wal["unit"], "bytes");
        let v = wal["value"].as_f64().unwrap();
        assert!(v > 0.0, "{}: {wal}", st["name"]);
        steps += v;
        // the written bytes compare judges are known, and say where the WAL bytes came from
        assert!(rep["written_bytes"].as_f64().unwrap() >= v, "{rep}");
        assert!(
            rep["written_what"]
                .as_str()
                .unwrap()
                .contains("pg_current_wal_lsn() difference"),
            "{rep}"
        );
    }
    eprintln!("{test}: steps {steps} WAL bytes of the run's {whole}");
    assert!(
        steps <= whole && steps >= 0.5 * whole,
        "the steps' WAL bytes {steps} against the WAL position's {whole} around the run"
    );
}

/// The bytes `ddl --method` reads while its load runs (`Admin::written_so_far`): PostgreSQL's
/// own counters, read without waiting for the load's sessions to end (the statistics settle of
/// a step waits up to 5 s for them), the WAL from the WAL position before 14 (no
/// pg_stat_wal). A session kept open (the load) writes rows: the written bytes grow by at least
/// most of the WAL the rows took, as the WAL position this test reads itself says.
fn written_so_far_while_a_session_runs(test: &str, major: u32) {
    let Some(pg) = throwaway_postgres(test, major) else {
        return;
    };
    let target = ixbench::dbms::postgres::Postgres::open(
        &pg.url(),
        &ixbench::dbms::TargetOptions::default(),
    )
    .unwrap();
    let mut main = target.connect().unwrap();
    let mut load = target.connect().unwrap();
    load.execute("CREATE TABLE vt_w (id int PRIMARY KEY, pad text)")
        .unwrap();
    let t = ixbench::deadline::Since::start();
    let (before, what) = target
        .written_so_far(main.as_mut())
        .expect("PostgreSQL counts its writes");
    assert!(
        t.so_far() < Duration::from_secs(5),
        "{test}: the reading waited {:?} (for the open session?)",
        t.so_far()
    );
    let from_lsn = what.contains("pg_current_wal_lsn() difference");
    assert_eq!(from_lsn, major < 14, "{test}: {what}");
    let lsn_sql = "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::int8";
    let l0 = main.query_i64(lsn_sql).unwrap().unwrap();
    load.execute("INSERT INTO vt_w SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g")
        .unwrap();
    let wal = main.query_i64(lsn_sql).unwrap().unwrap() - l0;
    assert!(wal > 4_000_000, "{test}: {wal} bytes of WAL for 20000 rows");
    // The load's session hands its statistics on when idle (15+: within a second of its last
    // flush, else 10 s later; before 15 the collector's file): look again for a while.
    let deadline = ixbench::deadline::Deadline::after(Duration::from_secs(30));
    let grown = loop {
        let (now, _) = target.written_so_far(main.as_mut()).unwrap();
        let grown = now.saturating_sub(before);
        if grown as f64 >= 0.9 * wal as f64 || deadline.expired() {
            break grown;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    eprintln!("{test}: written {grown} bytes, WAL position moved {wal}");
    assert!(
        grown as f64 >= 0.9 * wal as f64,
        "{test}: written {grown} bytes, the WAL alone {wal} ({what})"
    );
    drop(load);
}

#[test]
fn postgres_12_written_so_far_while_a_session_runs() {
    written_so_far_while_a_session_runs("postgres_12_written_so_far_while_a_session_runs", 12);
}

#[test]
fn postgres_17_written_so_far_while_a_session_runs() {
    written_so_far_while_a_session_runs("postgres_17_written_so_far_while_a_session_runs", 17);
}
