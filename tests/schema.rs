//! Results as an interface: the JSON Schemas kept in `schema/` are the ones generated from the
//! result types, and the real `run.json` and `intervals.ndjson` of every command that writes
//! them (`run`, `index`, `oltp`, `ddl`, `timeseries` on SQLite; `run`, `index` and `ddl` on a
//! throwaway PostgreSQL, whose server-side figures, progress samples and waits SQLite has not)
//! validate against them. A reader refuses a run.json of an unknown `schema_version` with one
//! line; the results say how the measuring ixbench was built.
//!
//! After changing a result type: `IXBENCH_UPDATE_SCHEMA=1 cargo test --test integration schema::kept` rewrites
//! `schema/*.json` (review the diff; bump `SCHEMA_VERSION` if a field went away or changed).

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use ixbench::server::ServerKind;
use serde_json::Value;

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema")
}

fn load_schema(name: &str) -> jsonschema::Validator {
    let f = schema_dir().join(name);
    let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    let v: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&v).unwrap_or_else(|e| panic!("{name} is not a valid schema: {e}"))
}

/// Every place `v` breaks the schema, with its path in the document.
fn errors(schema: &jsonschema::Validator, v: &Value) -> Vec<String> {
    schema
        .iter_errors(v)
        .take(20)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// The run.json and every intervals.ndjson line of a results directory validate; returns the
/// run and its lines.
fn validate(what: &str, dir: &Path) -> (Value, Vec<Value>) {
    let run = run_json(dir);
    let e = errors(&load_schema("run.schema.json"), &run);
    assert!(
        e.is_empty(),
        "{what}: run.json breaks the schema:\n{}",
        e.join("\n")
    );
    let lines = intervals(dir);
    let line_schema = load_schema("intervals.schema.json");
    for (n, l) in lines.iter().enumerate() {
        let e = errors(&line_schema, l);
        assert!(
            e.is_empty(),
            "{what}: intervals.ndjson line {}: {l}\n{}",
            n + 1,
            e.join("\n")
        );
    }
    (run, lines)
}

/// Run ixbench; it must succeed.
fn ok(args: &[&str]) -> String {
    let o = ixbench(args);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{args:?}: {se}\n{so}");
    so
}

#[test]
fn kept_schemas_are_current() {
    let parts = ixbench::workload::txn_runner::record_parts();
    for (name, text) in ixbench::results::schema::files(&parts) {
        let f = schema_dir().join(name);
        if std::env::var_os("IXBENCH_UPDATE_SCHEMA").is_some() {
            std::fs::write(&f, &text).unwrap();
            continue;
        }
        let kept = std::fs::read_to_string(&f).unwrap_or_default();
        assert!(
            kept == text,
            "{} is not the schema of the result types: run `IXBENCH_UPDATE_SCHEMA=1 cargo test \
             --test schema kept` and review the diff",
            f.display()
        );
    }
    // The schema says what a consumer relies on: e.g. a step's throughput and an unknown
    // server figure allowed to be null, never a number made up.
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(schema_dir().join("run.schema.json")).unwrap(),
    )
    .unwrap();
    // Each workload's own part is described by its records' type.
    for (part, record) in [("oltp", "OltpRun"), ("timeseries", "TsRun")] {
        let p = &s["properties"][part];
        assert_eq!(p["type"], "array", "{part}: {p}");
        assert_eq!(
            p["items"]["$ref"],
            format!("#/$defs/{record}"),
            "{part}: {p}"
        );
        assert!(s["$defs"][record]["properties"].is_object(), "{record}");
    }
    let summary = &s["$defs"]["SummaryLine"];
    assert_eq!(summary["properties"]["ips"]["type"], "number", "{summary}");
    assert!(
        summary["properties"]["srv_cpupq"]["type"]
            .as_array()
            .is_some_and(|t| t.contains(&Value::from("null"))),
        "{summary}"
    );
    assert!(summary["required"]
        .as_array()
        .unwrap()
        .contains(&Value::from("ips")));
}

/// A schema that accepted anything would pass every run: it must refuse broken documents.
#[test]
fn schemas_refuse_broken_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    ok(&[
        "run",
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "2000",
        "--rows2",
        "500",
        "--query-seconds",
        "0.3",
        "--rates",
        "100",
        "--interval",
        "0.5",
    ]);
    let (run, lines) = validate("run sqlite", &out);
    let schema = load_schema("run.schema.json");
    let mut bad = run.clone();
    bad["steps"][0]["summary"]["ips"] = Value::from("fast");
    assert!(!errors(&schema, &bad).is_empty(), "a string rate accepted");
    let mut bad = run.clone();
    bad["steps"][0].as_object_mut().unwrap().remove("totals");
    assert!(
        !errors(&schema, &bad).is_empty(),
        "a step without totals accepted"
    );
    let mut bad = run.clone();
    bad["schema_version"] = Value::from(2);
    assert!(
        !errors(&schema, &bad).is_empty(),
        "another schema_version accepted"
    );
    let mut bad = run;
    bad["status"] = Value::from("great");
    assert!(
        !errors(&schema, &bad).is_empty(),
        "an unknown status accepted"
    );
    let line_schema = load_schema("intervals.schema.json");
    let mut bad = lines[0].clone();
    bad.as_object_mut().unwrap().remove("step");
    assert!(
        !errors(&line_schema, &bad).is_empty(),
        "a line without its step accepted"
    );
    assert!(!errors(&line_schema, &Value::from(3)).is_empty());
}

#[test]
fn every_command_on_sqlite_validates() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let s = |b: &PathBuf| b.to_str().unwrap().to_string();
    let run = p("run");
    let stdout = ok(&[
        "run",
        "--out",
        &s(&run),
        "--rows",
        "4000",
        "--rows2",
        "1000",
        "--query-seconds",
        "0.5",
        "--rates",
        "100",
        "--interval",
        "0.5",
    ]);
    let (r, lines) = validate("run", &run);
    assert!(r["steps"].as_array().unwrap().len() >= 5);
    assert!(!lines.is_empty());
    // How it was built: this binary's profile and the commit of this checkout.
    let b = &r["build"];
    let debug = cfg!(debug_assertions);
    assert_eq!(b["profile"], if debug { "debug" } else { "release" }, "{b}");
    assert_eq!(
        stdout.contains("WARNING: this ixbench is a debug build"),
        debug,
        "{stdout}"
    );
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--show-toplevel", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(String::from)
                .collect::<Vec<_>>()
        });
    match head {
        Some(l)
            if Path::new(&l[0]).canonicalize().ok()
                == Path::new(env!("CARGO_MANIFEST_DIR")).canonicalize().ok() =>
        {
            assert_eq!(b["git_commit"], l[1].as_str(), "{b}")
        }
        // not a git checkout of its own (a tarball): unknown
        _ => assert!(b["git_commit"].is_null(), "{b}"),
    }

    let lab = p("index");
    ok(&[
        "index",
        "--out",
        &s(&lab),
        "--rows",
        "3000",
        "--knob",
        "cache_size=-2000,-64000",
        "--strategy",
    ]);
    let (r, _) = validate("index", &lab);
    assert!(!r["builds"].as_array().unwrap().is_empty());

    let oltp = p("oltp");
    ok(&[
        "oltp",
        "--out",
        &s(&oltp),
        "--tables",
        "1",
        "--table-size",
        "1000",
        "--threads",
        "2",
        "--time",
        "1",
        "--interval",
        "0.5",
    ]);
    let (r, lines) = validate("oltp", &oltp);
    assert_eq!(r["oltp"].as_array().unwrap().len(), 1);
    assert!(!lines.is_empty());

    let ddl = p("ddl");
    ok(&[
        "ddl",
        "--out",
        &s(&ddl),
        "--table-size",
        "2000",
        "--threads",
        "2",
        "--rate",
        "100",
        "--baseline-seconds",
        "1",
        "--recovery-seconds",
        "1",
        "--quiet-timeout",
        "5",
        "--pass-on",
        "no-verdict",
    ]);
    let (r, lines) = validate("ddl", &ddl);
    assert!(!r["ddl"]["points"].as_array().unwrap().is_empty());
    assert!(!lines.is_empty());

    let ts = p("timeseries");
    ok(&[
        "timeseries",
        "--out",
        &s(&ts),
        "--devices",
        "20",
        "--metrics",
        "2",
        "--ticks-per-partition",
        "5",
        "--keep-partitions",
        "3",
        "--rows-per-commit",
        "10",
        "--threads",
        "2",
        "--time",
        "1",
        "--interval",
        "0.5",
        "--queries",
        "3",
        "--latest-n",
        "10",
    ]);
    let (r, lines) = validate("timeseries", &ts);
    assert!(!r["timeseries"].as_array().unwrap().is_empty());
    assert!(!lines.is_empty());
}

#[test]
fn postgres_results_validate() {
    let Some(srv) = start_server("postgres_results_validate", ServerKind::Postgres, false) else {
        return;
    };
    let url = srv.url();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    ok(&[
        "run",
        "--target",
        &url,
        "--out",
        run.to_str().unwrap(),
        "--rows",
        "4000",
        "--rows2",
        "1000",
        "--query-seconds",
        "0.5",
        "--rates",
        "100",
        "--interval",
        "0.5",
    ]);
    let (r, _) = validate("run postgres", &run);
    // the server's own figures are there (SQLite has none)
    assert!(r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| !s["server"].is_null()));
    let lab = dir.path().join("index");
    ok(&[
        "index",
        "--target",
        &url,
        "--out",
        lab.to_str().unwrap(),
        "--rows",
        "20000",
        "--knob",
        "maintenance_work_mem=1MB,64MB",
    ]);
    validate("index postgres", &lab);
    let ddl = dir.path().join("ddl");
    ok(&[
        "ddl",
        "--target",
        &url,
        "--out",
        ddl.to_str().unwrap(),
        "--table-size",
        "20000",
        "--threads",
        "2",
        "--rate",
        "100",
        "--baseline-seconds",
        "1",
        "--recovery-seconds",
        "1",
        "--quiet-timeout",
        "5",
    ]);
    validate("ddl postgres", &ddl);
}

#[test]
fn unknown_schema_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    ok(&[
        "run",
        "--out",
        a.to_str().unwrap(),
        "--rows",
        "1000",
        "--steps",
        "l.i0",
    ]);
    let b = dir.path().join("b");
    std::fs::create_dir(&b).unwrap();
    let mut v = run_json(&a);
    v["schema_version"] = Value::from(99);
    std::fs::write(b.join("run.json"), serde_json::to_string(&v).unwrap()).unwrap();
    for args in [
        vec!["report", b.to_str().unwrap()],
        vec!["compare", a.to_str().unwrap(), b.to_str().unwrap()],
        vec![
            "report",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            dir.path().join("x.html").to_str().unwrap(),
        ],
    ] {
        let o = ixbench(&args);
        let err = assert_one_line_error(&o);
        assert!(
            err.contains("schema_version 99") && err.contains("reads version 1"),
            "{args:?}: {err}"
        );
    }
    // the run itself is still read
    ok(&["report", a.to_str().unwrap()]);
}

/// A run.json of each workload with figures of its own, as ixbench wrote it before the
/// workloads' records moved to one generic place (`tests/data/run-v1/`: `ixbench oltp`,
/// `ixbench timeseries`, `ixbench run --workload kv` on SQLite): each still validates, reads,
/// gives the same answer lines, checks and compared steps, and is written back byte for byte.
#[test]
fn results_written_before_still_read() {
    use ixbench::export::compare::model;
    use ixbench::export::summary::answer;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-v1");
    let cases: [(&str, &[&str], &[&str], &str); 3] = [
        (
            "oltp",
            &[
                "oltp_read_write (2 threads): 1363 transactions/s, 27268 queries/s in 1.03 s; \
                 p99 25.2 ms; 0 errors",
                "checks: all 2 passed",
            ],
            &["interval_sums", "rows"],
            "oltp_read_write",
        ),
        (
            "kv",
            &[
                "kv (1 threads): 44513 transactions/s, 44513 queries/s in 1.05 s; p99 0.0400 ms; \
                 0 errors",
                "checks: all 3 passed",
            ],
            &["interval_sums", "rows", "keys_found"],
            "kv",
        ),
        (
            "timeseries",
            &[
                "partitioning none: 35678 rows inserted/s; commit p99 5.60 ms",
                "checks: all 7 passed",
            ],
            &[
                "interval_sums",
                "rows",
                "retention_rows",
                "rows_latest",
                "rows_device_range",
                "rows_metric_range",
                "rows_minmax",
            ],
            "timeseries.none",
        ),
    ];
    let run_schema = load_schema("run.schema.json");
    for (name, lines, checks, step) in cases {
        let f = dir.join(format!("{name}.json"));
        let text = std::fs::read_to_string(&f).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let e = errors(&run_schema, &v);
        assert!(e.is_empty(), "{name}: {}", e.join("\n"));
        let run = ixbench::results::store::read_run(&f).unwrap();
        // kv keeps the standard record of a transaction run, in the `oltp` part
        let part = if name == "kv" { "oltp" } else { name };
        assert_eq!(run.workloads.get(part).len(), 1, "{name}");
        let said: Vec<String> = answer(&run).into_iter().map(|l| l.text).collect();
        assert_eq!(said, lines, "{name}");
        let all = run.all_checks();
        let at: Vec<&str> = all.iter().map(|c| c.check.name.as_str()).collect();
        assert_eq!(at, checks, "{name}");
        assert!(all.iter().all(|c| c.check.ok), "{name}");
        let m = model::from_json(name, &v).unwrap();
        assert_eq!(
            m.steps.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            [step],
            "{name}"
        );
        let back = serde_json::to_string_pretty(&run).unwrap() + "\n";
        assert_eq!(back, text, "{name}: written back byte for byte");
    }
}
