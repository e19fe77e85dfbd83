//! The measuring path end to end on SQLite, through the binary and its files: interval lines
//! add up to the step totals (first and last partial interval included) at `--interval 0.1`,
//! a line has a max exactly when it has operations, the writers' lockstep keeps the table size
//! within one batch, arrivals and phases are recorded, and shared tables work with 2 clients.

use crate::common;

use common::*;
use serde_json::Value;

/// Per step: the lines' counts (differences of the cumulative `t_*` columns, which are exact
/// integers) add up to the step totals; `max_*` is non-zero exactly in the lines with
/// operations of that kind; `i_sec` adds up to the step's seconds.
pub fn assert_lines_match_totals(run: &Value, lines: &[Value]) {
    for s in run["steps"].as_array().unwrap() {
        let name = s["name"].as_str().unwrap();
        let mine: Vec<&Value> = lines.iter().filter(|l| l["step"] == name).collect();
        let totals = &s["totals"];
        if totals["ops"].as_array().unwrap().iter().all(|v| v == 0) {
            assert!(mine.is_empty(), "{name}: lines without operations");
            continue;
        }
        assert!(!mine.is_empty(), "{name}: no interval lines");
        let never = |k: usize| totals["never_started"][k].as_u64().unwrap_or(0);
        let (mut ins, mut del, mut q, mut secs) = (0u64, 0u64, 0u64, 0.0f64);
        for l in &mine {
            let n = |c: &str| l[c].as_u64().unwrap();
            let (di, dd, dq) = (n("t_ins") - ins, n("t_del") - del, n("t_query") - q);
            (ins, del, q) = (n("t_ins"), n("t_del"), n("t_query"));
            secs += l["i_sec"].as_f64().unwrap();
            // rates times lengths give back the counts
            let back = l["i_ips"].as_f64().unwrap() * l["i_sec"].as_f64().unwrap();
            assert!(
                (back - di as f64).abs() < 1e-6 * (di as f64 + 1.0),
                "{name}: {l}"
            );
            if never(0) == 0 {
                assert_eq!(n("max_i") > 0, di > 0, "{name}: insert max vs count: {l}");
            }
            assert_eq!(n("max_d") > 0, dd > 0, "{name}: delete max vs count: {l}");
            assert_eq!(n("max_q") > 0, dq > 0, "{name}: query max vs count: {l}");
        }
        assert_eq!(ins, totals["rows"][0], "{name}: inserted rows");
        assert_eq!(del, totals["rows"][1], "{name}: deleted rows");
        assert_eq!(q, totals["ops"][2], "{name}: queries");
        let step_secs = s["seconds"].as_f64().unwrap();
        assert!(
            (secs - step_secs).abs() < 1e-6,
            "{name}: {secs} vs {step_secs}"
        );
        // the reporter's own cross-checks ran and passed
        let checks = s["checks"].as_array().unwrap();
        for c in ["interval_sums", "histogram_counts"] {
            assert!(
                checks.iter().any(|x| x["name"] == c && x["ok"] == true),
                "{name}: no passing {c} check in {checks:?}"
            );
        }
    }
}

#[test]
fn interval_lines_add_up_to_the_totals_at_a_tenth_of_a_second() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = ixbench(&[
        "run",
        "--out",
        out.to_str().unwrap(),
        "--steps",
        "l.i0,l.x,l.i1,qr200,qp200",
        "--rows",
        "30000",
        "--rows2",
        "10000",
        "--rows-per-commit-i1",
        "20",
        "--rw-rows-per-commit",
        "10",
        "--query-seconds",
        "1.2",
        "--interval",
        "0.1",
        "--arrivals",
        "poisson",
        "--line-format",
        "v2",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let run = run_json(&out);
    let steps = assert_all_ok(&run);
    assert_eq!(run["config"]["arrivals"], "poisson");
    assert_lines_match_totals(&run, &intervals(&out));

    // l.i1: inserter and deleter in lockstep, the table size within one batch (20 rows)
    let li1 = &steps[2];
    assert_eq!(li1["totals"]["rows"][0], li1["totals"]["rows"][1]);
    let flow = &li1["flow"];
    assert!(flow["max_excess_rows"].as_u64().unwrap() <= 20, "{flow}");
    assert!(flow["max_deficit_rows"].as_u64().unwrap() <= 20, "{flow}");
    assert!(flow["insert_wait_secs"].as_f64().unwrap() >= 0.0);
    assert!(li1["checks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["name"] == "table_size" && c["ok"] == true));
    // the throttled steps record their arrivals; the load steps have none
    assert_eq!(steps[3]["flow"]["arrivals"], "poisson");
    assert_eq!(li1["flow"]["arrivals"], Value::Null);
    // nothing stalled on a healthy run
    for s in &steps {
        if let Some(f) = s["flow"].as_object() {
            assert_eq!(f["stall_timed_out"], false);
        }
    }
    // a line says STALLED exactly when a step recorded a stalled line (a checkpoint's fsync
    // of a second or more on a busy disk is a real stall, not a bug, so none is not required)
    let stalled: u64 = steps
        .iter()
        .filter_map(|s| s["flow"]["stalled_lines"].as_u64())
        .sum();
    assert_eq!(
        stdout.matches("\tSTALLED ").count() as u64,
        stalled,
        "{stdout}"
    );
}

#[test]
fn two_clients_share_one_table_with_disjoint_deletes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = ixbench(&[
        "run",
        "--out",
        out.to_str().unwrap(),
        "--steps",
        "l.i0,l.i1,l.i2",
        "--clients",
        "2",
        "--shared-table",
        "--rows",
        "5000",
        "--rows2",
        "5000",
        "--interval",
        "0.1",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let run = run_json(&out);
    let steps = assert_all_ok(&run);
    assert_eq!(steps[1]["totals"]["rows"][1], 8_000);
    assert_eq!(steps[2]["totals"]["rows"][1], 2_000);
    assert_lines_match_totals(&run, &intervals(&out));
}

#[test]
fn a_bad_stall_timeout_is_a_one_line_error() {
    let o = ixbench(&["run", "--target", "null", "--stall-timeout", "0"]);
    let err = assert_one_line_error(&o);
    assert!(err.contains("--stall-timeout"), "{err}");
}

/// A writer that cannot keep its rate is cut off at 3x the planned time; the inserts that were
/// due by then but never started are in the insert latency (from their intended start to the
/// cut-off) and counted, so the worst case is in the figures.
#[test]
fn the_backlog_at_the_cut_off_is_in_the_latency() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = ixbench(&[
        "run",
        "--out",
        out.to_str().unwrap(),
        "--steps",
        "l.i0,qp1000000",
        "--rows",
        "2000",
        "--secondary-indexes",
        "0",
        "--rw-rows-per-commit",
        "1",
        "--query-seconds",
        "0.3",
        "--interval",
        "0.1",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let run = run_json(&out);
    let steps = assert_all_ok(&run);
    let s = &steps[1];
    assert_eq!(s["rate_ok"], false);
    let never = s["totals"]["never_started"][0].as_u64().unwrap();
    let done = s["totals"]["ops"][0].as_u64().unwrap();
    // 1M commits/s for 0.9 s were due; SQLite commits far fewer
    assert!(never > 100_000, "{never} never started");
    let ins = s["latency"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["op"] == "insert")
        .unwrap();
    assert_eq!(ins["latency"]["count"].as_u64().unwrap(), done + never);
    assert_eq!(ins["service"]["count"].as_u64().unwrap(), done);
    // the first never-started insert was due right at the start: it waited ~0.9 s
    assert!(
        ins["latency"]["max_us"].as_u64().unwrap() >= 600_000,
        "{ins}"
    );
    assert!(stdout.contains("never started"), "{stdout}");
    assert_lines_match_totals(&run, &intervals(&out));
}
