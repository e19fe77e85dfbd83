//! The insert benchmark end to end on embedded SQLite (and the null target), at a small size:
//! every step runs, outputs parse, numbers agree with each other, self-checks pass.

use crate::common;

use common::*;
use std::path::Path;

const SMALL: &[&str] = &[
    "--rows",
    "20000",
    "--rows2",
    "5000",
    "--query-seconds",
    "1.5",
    "--rates",
    "100,400",
    "--interval",
    "0.5",
];

fn run_small(out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", "--out", out.to_str().unwrap()];
    args.extend_from_slice(SMALL);
    args.extend_from_slice(extra);
    ixbench(&args)
}

#[test]
fn every_step_runs_and_checks_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run_small(&out, &["--line-format", "v2"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let run = run_json(&out);
    let steps = assert_all_ok(&run);
    let names: Vec<&str> = steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["l.i0", "l.x", "l.i1", "l.i2", "maint", "qr100", "qp100", "qr400", "qp400"]
    );
    // run.json records what a comparison needs
    assert_eq!(run["target"]["kind"], "sqlite");
    assert!(run["target"]["version"].as_str().unwrap().starts_with('3'));
    assert!(run["host"]["cpus"].as_u64().unwrap() >= 1);
    assert!(run["host"]["memory_bytes"].as_u64().unwrap() > 0);
    assert_eq!(run["config"]["seed"], 1);
    let settings = run["target"]["settings"].as_array().unwrap();
    assert!(settings
        .iter()
        .any(|s| s[0] == "journal_mode" && s[1] == "wal"));

    // l.i0 loaded every row, l.x built 3 indexes, deletes kept the size constant
    assert_eq!(steps[0]["totals"]["rows"][0], 20_000);
    assert_eq!(steps[1]["index_builds"].as_array().unwrap().len(), 3);
    assert_eq!(steps[2]["totals"]["rows"][0], 4_000);
    assert_eq!(steps[2]["totals"]["rows"][1], 4_000);
    assert_eq!(steps[3]["totals"]["rows"][0], 1_000);
    assert_eq!(
        steps[3]["totals"]["ops"][0], 200,
        "l.i2 commits 5 rows at a time"
    );
    assert!(steps[4]["maintenance"].as_array().unwrap().len() >= 2);

    // query steps: throttled writers, achieved rate = rows / seconds, and a missed rate is
    // always flagged (whether this machine keeps up is a benchmark question, not a test's)
    for s in &steps[5..] {
        assert_eq!(s["throttled"], true);
        let secs = s["seconds"].as_f64().unwrap();
        assert!(
            secs >= 1.4,
            "{} lasted {secs}: ends only after rate * seconds rows",
            s["name"]
        );
        // the rate over the inserter's own schedule (its phase and the deleter's last batch
        // are not time it had to insert in)
        let achieved = s["achieved_rate"].as_f64().unwrap();
        let rows = s["totals"]["rows"][0].as_f64().unwrap();
        let wsecs = s["flow"]["writer_secs"].as_f64().unwrap();
        assert!(wsecs <= secs);
        assert!((achieved - rows / wsecs).abs() < 1e-6 * rows.max(1.0));
        let target = s["target_rate"].as_f64().unwrap();
        assert_eq!(s["rate_ok"].as_bool().unwrap(), achieved >= 0.95 * target);
        // the rate's warning exactly when it was missed (a real stall on a busy disk may add
        // another warning)
        assert_eq!(
            s["rate_ok"].as_bool().unwrap(),
            !s["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w.as_str().unwrap().contains("WRITERS FELL BEHIND"))
        );
        assert!(s["totals"]["ops"][2].as_u64().unwrap() > 0);
        let q = s["latency"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["op"] == "query")
            .unwrap();
        assert!(q["latency"]["p50_us"].as_u64().unwrap() > 0);
        assert!(!q["latency"]["hdr_base64"].as_str().unwrap().is_empty());
        let names: Vec<&str> = s["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"plan") && names.contains(&"rows"),
            "{names:?}"
        );
    }
    assert_eq!(
        steps[7]["totals"]["rows"][0], 600,
        "qr400 inserts 400 rows/s * 1.5 s"
    );

    // histogram bucket counts add up to the operation counts
    for s in &steps {
        for l in s["latency"].as_array().unwrap() {
            let n: u64 = l["latency"]["buckets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_u64().unwrap())
                .sum();
            assert_eq!(n, l["latency"]["count"].as_u64().unwrap());
        }
    }

    // intervals: per step, the last line's totals equal the step's totals, and the
    // interval rates integrate to the same counts
    let lines = intervals(&out);
    for s in &steps {
        let mine: Vec<_> = lines.iter().filter(|l| l["step"] == s["name"]).collect();
        if s["totals"]["ops"][0].as_u64().unwrap() == 0 {
            continue;
        }
        let last = mine.last().expect("a step with writes has interval lines");
        assert_eq!(last["t_ins"], s["totals"]["rows"][0], "step {}", s["name"]);
        assert_eq!(last["t_del"], s["totals"]["rows"][1], "step {}", s["name"]);
        assert_eq!(last["t_query"], s["totals"]["ops"][2], "step {}", s["name"]);
        let ins: f64 = mine
            .iter()
            .map(|l| l["i_ips"].as_f64().unwrap() * l["i_sec"].as_f64().unwrap())
            .sum();
        assert!((ins - last["t_ins"].as_f64().unwrap()).abs() < 1.0, "{ins}");
    }
    // the printed per-interval header is the 17-column one
    assert!(stdout
        .contains("i_sec\tt_sec\ti_ips\tt_ips\ti_dps\tt_dps\ti_qps\tt_qps\tmax_i\tmax_d\tmax_q"));
    assert!(stdout.contains("results: "));
    // the same table as CSV, Markdown and a self-contained HTML report
    let csv = std::fs::read_to_string(out.join("steps.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + names.len());
    assert!(std::fs::read_to_string(out.join("steps.md"))
        .unwrap()
        .contains("| qp400 |"));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.starts_with("<!DOCTYPE html>") && html.contains("<td>qp400</td>"),
        "{html}"
    );
}

#[test]
fn same_seed_same_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sums = Vec::new();
    for (i, seed) in ["7", "7", "8"].iter().enumerate() {
        let db = tmp.path().join(format!("s{i}.db"));
        let out = tmp.path().join(format!("r{i}"));
        let o = ixbench(&[
            "run",
            "--target",
            &format!("sqlite:{}", db.display()),
            "--out",
            out.to_str().unwrap(),
            "--steps",
            "l.i0",
            "--rows",
            "3000",
            "--seed",
            seed,
        ]);
        assert!(o.status.success(), "{:?}", text(&o));
        let c = rusqlite::Connection::open(&db).unwrap();
        let v: (i64, i64, String) = c
            .query_row(
                "SELECT sum(price * cashregisterid), sum(customerid + productid), group_concat(data, '') FROM pi1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        sums.push(v);
    }
    assert_eq!(sums[0], sums[1]);
    assert_ne!(sums[0], sums[2]);
}

#[test]
fn clients_with_own_and_shared_tables() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, layout) in ["--table-per-client", "--shared-table"].iter().enumerate() {
        let out = tmp.path().join(format!("r{i}"));
        let o = ixbench(&[
            "run",
            "--out",
            out.to_str().unwrap(),
            "--clients",
            "2",
            layout,
            "--rows",
            "4000",
            "--rows2",
            "1000",
            "--query-seconds",
            "1",
            "--rates",
            "200",
            "--steps",
            "l.i0,l.x,l.i1,qr200",
        ]);
        assert!(o.status.success(), "{layout}: {:?}", text(&o));
        let run = run_json(&out);
        let steps = assert_all_ok(&run);
        assert_eq!(steps[0]["totals"]["rows"][0], 8_000, "rows are per client");
        let rows_checks: Vec<_> = steps[0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["name"] == "rows")
            .collect();
        assert_eq!(rows_checks.len(), if i == 0 { 2 } else { 1 }, "{layout}");
        assert_eq!(steps[2]["totals"]["rows"][1], steps[2]["totals"]["rows"][0]);
    }
}

#[test]
fn profile_2020_and_later_steps_reuse_the_table() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    let target = format!("sqlite:{}", db.display());
    let out = tmp.path().join("a");
    let o = ixbench(&[
        "run",
        "--target",
        &target,
        "--out",
        out.to_str().unwrap(),
        "--profile",
        "2020",
        "--rows",
        "5000",
        "--rows2",
        "1000",
        "--rates",
        "100",
        "--query-seconds",
        "1",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let steps = assert_all_ok(&run_json(&out));
    let names: Vec<&str> = steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["l.i0", "l.x", "maint", "l.i1", "q100.1", "q100.2"]);
    assert_eq!(
        steps[3]["totals"]["rows"][1], 0,
        "2020's l.i1 is insert-only"
    );

    // a second run continues on the same table: 5000 + 1000 + 2 * 100 rows are there
    let out2 = tmp.path().join("b");
    let o = ixbench(&[
        "run",
        "--target",
        &target,
        "--out",
        out2.to_str().unwrap(),
        "--steps",
        "qp100,l.i2",
        "--rows2",
        "500",
        "--query-seconds",
        "1",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let steps = assert_all_ok(&run_json(&out2));
    let rows = steps[0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "rows")
        .unwrap();
    assert!(
        rows["detail"].as_str().unwrap().contains("6200 rows"),
        "{rows}"
    );
}

#[test]
fn null_target_measures_the_client_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("n");
    let o = ixbench(&[
        "run",
        "--target",
        "null",
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "200000",
        "--rows2",
        "1000",
        "--rates",
        "1000",
        "--query-seconds",
        "1",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let run = run_json(&out);
    let steps = assert_all_ok(&run);
    assert_eq!(run["target"]["kind"], "null");
    assert_eq!(steps[0]["totals"]["rows"][0], 200_000);
    assert!(steps[0]["summary"]["cpupq"].as_f64().unwrap() > 0.0);
    assert!(
        steps
            .iter()
            .all(|s| s["checks"].as_array().unwrap().iter().all(|c| [
                "interval_sums",
                "histogram_counts",
                "table_size"
            ]
            .contains(&c["name"].as_str().unwrap()))),
        "nothing stored to check: only the measuring path's own checks"
    );
}

#[test]
fn sqlite_pragmas_are_applied_and_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("p");
    let o = ixbench(&[
        "run",
        "--out",
        out.to_str().unwrap(),
        "--steps",
        "l.i0",
        "--rows",
        "1000",
        "--sqlite-pragma",
        "synchronous=FULL",
        "--sqlite-pragma",
        "threads=2",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let run = run_json(&out);
    let settings = run["target"]["settings"].as_array().unwrap();
    assert!(
        settings
            .iter()
            .any(|s| s[0] == "synchronous" && s[1] == "2"),
        "{settings:?}"
    );
    assert!(
        settings.iter().any(|s| s[0] == "threads" && s[1] == "2"),
        "{settings:?}"
    );
    let (stdout, _) = text(&o);
    assert!(stdout.contains("synchronous=2"));
}

#[test]
fn an_unattainable_rate_is_reported_loudly() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    // 5 million commits/s of one row each: no SQLite keeps that up
    let o = ixbench(&[
        "run",
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "2000",
        "--steps",
        "l.i0,l.x,qp5000000",
        "--rw-rows-per-commit",
        "1",
        "--query-seconds",
        "0.5",
    ]);
    let (stdout, _) = text(&o);
    assert!(
        o.status.success(),
        "a missed rate is a finding, not a failure: {stdout}"
    );
    let run = run_json(&out);
    let s = &run["steps"][2];
    assert_eq!(s["rate_ok"], false);
    assert!(s["achieved_rate"].as_f64().unwrap() < 0.95 * 5_000_000.0);
    assert!(s["warnings"][0]
        .as_str()
        .unwrap()
        .contains("WRITERS FELL BEHIND"));
    // the step is cut at 3x its planned time instead of running until 2.5M rows are in
    assert!(
        s["seconds"].as_f64().unwrap() < 1.5 + 1.0,
        "{}",
        s["seconds"]
    );
    assert!(
        s["warnings"][1].as_str().unwrap().contains("stopped at 3x"),
        "{}",
        s["warnings"]
    );
    assert!(stdout.contains("WARNING: WRITERS FELL BEHIND"), "{stdout}");
    assert!(stdout.contains("rate NOT met"), "{stdout}");
}
