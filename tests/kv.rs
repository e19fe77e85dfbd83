//! `ixbench run --workload kv`: the key-value workload, the example of a transaction workload
//! that is one file on the one runner, on SQLite, PostgreSQL and MariaDB. Checked: the runner's
//! figures and checks (interval sums, rows before + inserted - deleted) and its own (every get
//! and put found its key), the mix of gets and puts, its options under its own heading.

use crate::common;

use std::path::Path;

use common::{run_json, start_server, text};
use ixbench::server::ServerKind;

/// Run the key-value mix on `target` (500 keys, half gets) and check what holds on any DBMS;
/// returns run.json.
fn run_kv(test: &str, target: &str, dir: &Path) -> serde_json::Value {
    let out = dir.join("r");
    let args = [
        "run",
        "--workload",
        "kv",
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
        "--kv-keys",
        "500",
        "--kv-get-percent",
        "50",
        "--kv-value-size",
        "20",
        "--threads",
        "2",
        "--time",
        "1",
        "--interval",
        "0.5",
    ];
    let o = common::ixbench(&args);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{test}: {so}\n{se}");
    assert!(so.contains("loaded 500 keys in "), "{test}: {so}");
    assert!(
        so.contains("running kv with 2 thread(s) for 1 s"),
        "{test}: {so}"
    );
    assert!(so.contains("SQL statistics:"), "{test}: {so}");
    let run = run_json(&out);
    assert_eq!(run["status"], "ok", "{test}: {}", run["error"]);
    assert_eq!(run["config"]["workload"], "kv");
    assert_eq!(run["config"]["options"]["kv_keys"], 500);
    let r = &run["oltp"][0];
    assert_eq!(r["workload"], "kv", "{test}");
    assert_eq!(r["status"], "ok", "{test}");
    let names: Vec<&str> = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["ok"], true, "{test}: {c}");
            c["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(names, ["interval_sums", "rows", "keys_found"], "{test}");
    let t = &r["totals"];
    let n = |v: &serde_json::Value| v.as_u64().unwrap();
    let (txns, reads, writes) = (n(&t["txns"]), n(&t["reads"]), n(&t["writes"]));
    assert!(txns > 100, "{test}: only {txns} operations");
    // One statement each, about half of them gets.
    assert_eq!(reads + writes, txns, "{test}");
    assert!(reads > txns / 4 && writes > txns / 4, "{test}: {t}");
    assert_eq!(n(&t["rows"]), txns, "{test}");
    assert_eq!(n(&r["rows_before"]), 500);
    assert_eq!(n(&r["rows_after"]), 500);
    assert_eq!(n(&r["load"]["rows"]), 500);
    run
}

#[test]
fn kv_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("kv.db").display());
    run_kv("kv_on_sqlite", &db, dir.path());
}

/// On a throwaway server of `kind`.
fn on_server(test: &str, kind: ServerKind) {
    let Some(s) = start_server(test, kind, false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    run_kv(test, &s.url(), dir.path());
}

#[test]
fn kv_on_postgres() {
    on_server("kv_on_postgres", ServerKind::Postgres);
}

#[test]
fn kv_on_mariadb() {
    on_server("kv_on_mariadb", ServerKind::Mariadb);
}

/// Its options are its own: another workload given one is a usage error naming its heading.
#[test]
fn kv_options_are_kvs_own() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("u.db").display());
    let out = dir.path().join("out");
    let o = common::ixbench(&[
        "run",
        "--workload",
        "oltp_insert",
        "--kv-keys",
        "5",
        "--target",
        &db,
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = common::assert_one_line_error(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--kv-keys does not apply to --workload oltp_insert")
            && err.contains("Key-value (--workload kv)"),
        "{err}"
    );
    assert!(!out.exists());
}
