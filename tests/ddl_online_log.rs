//! InnoDB's online ADD INDEX keeps the table's changes made during the build in a row log of
//! at most `innodb_online_alter_log_max_size` bytes; a build whose log overflows fails with
//! error 1799. Here a throwaway MariaDB with the smallest log (64 KiB, and a 64 KiB sort buffer,
//! the log's block size) builds an index on `c` of 500k rows while the load updates `c` at
//! 400 TPS: `ixbench ddl` reports the failure as a DDL failure, runs it again as many times as
//! `--ddl-retries` says, keeps the timeline, leaves no index behind, and exits non-zero (zero
//! with `--on-error continue`).
//!
//! Without the server binaries the test prints `SKIPPED <name>: <why>` and returns; with
//! `CI=true` it fails instead.

use crate::common;

use common::*;
use ixbench::server::ServerKind;

#[test]
fn innodb_online_log_overflow_is_retried_then_reported() {
    let name = "innodb_online_log_overflow_is_retried_then_reported";
    let Some(s) = start_server_set(
        name,
        ServerKind::Mariadb,
        false,
        &[
            ("innodb_sort_buffer_size", "65536"),
            ("innodb_online_alter_log_max_size", "65536"),
        ],
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = s.url();
    let run = |out: &std::path::Path, extra: &[&str]| {
        let mut a = vec![
            "ddl",
            "--target",
            &url,
            "--out",
            out.to_str().unwrap(),
            "--engine",
            "innodb",
            // Large enough that the build lasts a few seconds: a load that stalls for part
            // of it (behind the ALTER's metadata lock, or a busy CPU) still changes far more
            // than 64 KiB of rows while it runs. 200k rows built in 1.1 s once, with the
            // load stalled for half of it, and the log did not overflow.
            "--table-size",
            "500000",
            "--threads",
            "4",
            "--rate",
            "400",
            "--baseline-seconds",
            "1",
            "--recovery-seconds",
            "1",
            "--quiet-timeout",
            "5",
        ];
        a.extend_from_slice(extra);
        ixbench(&a)
    };
    let check_failed = |run: &serde_json::Value, attempts: u64| {
        let p = &run["ddl"]["points"][0];
        assert_eq!(p["ok"], false, "{p}");
        let d = &p["ddl"];
        assert_eq!(d["error_code"], "1799", "{d}");
        assert_eq!(d["attempts"], attempts, "{d}");
        let errs = d["attempt_errors"].as_array().unwrap();
        assert_eq!(errs.len() as u64, attempts, "{d}");
        for e in errs {
            let e = e.as_str().unwrap();
            assert!(
                e.starts_with("1799: ") && e.contains("innodb_online_alter_log_max_size"),
                "{e}"
            );
        }
        // The timeline up to the failure is kept, with the DDL's start marked.
        let tl = p["timeline"].as_array().unwrap();
        assert!(tl.len() >= 2, "{p}");
        assert!(tl
            .iter()
            .flat_map(|r| r["marks"].as_array().unwrap())
            .any(|m| m == "DDL start"));
        assert!(p["impact"]["baseline"]["txns"].as_u64().unwrap() > 0, "{p}");
    };

    // One retry, stop on error: non-zero exit with one line naming the error.
    let out = dir.path().join("stop");
    let o = run(&out, &["--ddl-retries", "1"]);
    let (stdout, stderr) = text(&o);
    assert!(!o.status.success(), "{stderr}\n{stdout}");
    assert!(stderr.contains("1799"), "{stderr}");
    check_failed(&run_json(&out), 2);

    // No index was left behind by the failed builds.
    use crate::common::sql::SqlExt;
    let mut c = crate::common::sql::connect(&s.url_with_password()).unwrap();
    let n: Option<u64> = c
        .query_first(
            "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() \
             AND TABLE_NAME = 'sbtest1' AND INDEX_NAME = 'sbtest1_c_ixb'",
        )
        .unwrap();
    assert_eq!(n, Some(0));

    // Two retries on the reused table, go on after errors: the failure in the results, the
    // point FAILED: exit 4.
    let out = dir.path().join("continue");
    let o = run(
        &out,
        &["--reuse", "--ddl-retries", "2", "--on-error", "continue"],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(4), "{stderr}\n{stdout}");
    assert!(stdout.contains("error 1799"), "{stdout}");
    check_failed(&run_json(&out), 3);
}
