//! Several ixbench processes as one run (`--client-id K --client-count N --start-at T`) against
//! one database, and `ixbench merge`: merged totals are the sums, merged percentiles those of
//! one HDR histogram of every sample, interval lines on one time grid; bad parts are refused.

use crate::common;

use std::path::{Path, PathBuf};

use common::scale::{merge_and_check, now, run_parts};
use common::{assert_one_line_error, ixbench, text};
use ixbench::server::ServerKind;

#[test]
fn sqlite_three_processes_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.sqlite");
    let target = format!("sqlite:{}", db.display());
    let parts = run_parts(
        dir.path(),
        &target,
        3,
        &[
            "--steps",
            "l.i0,l.x,qr50",
            "--rows",
            "3000",
            "--rows-per-commit",
            "50",
            "--query-seconds",
            "2",
            "--interval",
            "0.5",
        ],
    );
    let m = merge_and_check(dir.path(), &parts);
    // The time grid: l.i0 of three processes started together.
    assert_eq!(m["steps"][0]["totals"]["rows"][0].as_u64().unwrap(), 9000);
    // report works on the merged run
    let o = ixbench(&["report", dir.path().join("merged").to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
}

#[test]
fn postgres_two_processes() {
    let Some(s) = common::start_server("scale postgres", ServerKind::Postgres, false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let parts = run_parts(
        dir.path(),
        &s.url(),
        2,
        &[
            "--steps",
            "l.i0,l.x,qp100",
            "--rows",
            "5000",
            "--clients",
            "2",
            "--query-seconds",
            "2",
            "--interval",
            "0.5",
        ],
    );
    let m = merge_and_check(dir.path(), &parts);
    assert_eq!(m["config"]["clients"], 4);
    assert_eq!(m["steps"][0]["totals"]["rows"][0].as_u64().unwrap(), 20_000);
}

fn null_part(base: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = base.join(name);
    let mut a = vec![
        "run",
        "--target",
        "null",
        "--steps",
        "l.i0",
        "--rows",
        "1000",
        "--out",
        out.to_str().unwrap(),
    ];
    a.extend_from_slice(extra);
    let o = ixbench(&a);
    assert!(o.status.success(), "{:?}", text(&o));
    out
}

#[test]
fn bad_parts_and_flags_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |s: &Path| s.to_str().unwrap().to_string();
    let a0 = null_part(d, "a0", &["--client-id", "0", "--client-count", "2"]);
    let a0b = null_part(d, "a0b", &["--client-id", "0", "--client-count", "2"]);
    let a1 = null_part(d, "a1", &["--client-id", "1", "--client-count", "2"]);
    let b1 = null_part(d, "b1", &["--client-id", "1", "--client-count", "3"]);
    let c1 = null_part(
        d,
        "c1",
        &[
            "--client-id",
            "1",
            "--client-count",
            "2",
            "--rows-per-commit",
            "10",
        ],
    );
    let alone = null_part(d, "alone", &[]);
    let out = p(&d.join("m"));
    let merge = |runs: &[&PathBuf]| {
        let mut a = vec!["merge".to_string()];
        a.extend(runs.iter().map(|r| p(r)));
        a.extend(["-o".to_string(), out.clone()]);
        ixbench(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    for (runs, want) in [
        (vec![&a0, &a0b], "overlapping parts"),
        (vec![&a0, &a0], "overlapping parts"),
        (vec![&a0, &b1], "mismatched --client-count"),
        (vec![&a0, &c1], "settings differ"),
        (vec![&a0, &alone], "not part of a several-process run"),
        (vec![&a0], "at least two"),
    ] {
        let e = assert_one_line_error(&merge(&runs));
        assert!(e.contains(want), "{runs:?}: {e}");
        assert!(!d.join("m").exists());
    }
    // A missing part: count 3 with two parts given.
    let b0 = null_part(d, "b0", &["--client-id", "0", "--client-count", "3"]);
    let e = assert_one_line_error(&merge(&[&b0, &b1]));
    assert!(
        e.contains("missing parts") && e.contains("--client-id 2"),
        "{e}"
    );
    // The good pair merges.
    assert!(merge(&[&a1, &a0]).status.success());

    // Bad flags of run.
    let past = format!("{}", now() as u64 - 60);
    for (extra, want) in [
        (vec!["--client-id", "2", "--client-count", "2"], "0..1"),
        (vec!["--client-id", "0"], "--client-count"),
        (
            vec!["--client-id", "0", "--client-count", "2", "--shared-table"],
            "shared-table",
        ),
        (vec!["--start-at", past.as_str()], "in the past"),
        (vec!["--start-at", "soon"], "RFC 3339"),
    ] {
        let mut a = vec!["run", "--target", "null", "--steps", "l.i0", "--rows", "10"];
        a.extend_from_slice(&extra);
        let e = assert_one_line_error(&ixbench(&a));
        assert!(e.contains(want), "{extra:?}: {e}");
    }
}
