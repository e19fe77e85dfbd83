//! `ixbench index` on data like the user's own (issue 12), on SQLite, PostgreSQL and MariaDB
//! (throwaway servers): `--index` specs (UNIQUE, DESC, prefix lengths) and their errors,
//! `--like sbtest --text-bytes`, table rebuilds crossed with a 2-value knob (InnoDB page
//! counters per rebuild), and `--from-table` copies, full and sampled: rows and indexes equal
//! to the original, the original byte-for-byte unchanged (rows and DDL), the copy dropped.

use crate::common;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use common::*;
use ixbench::dbms::{self, Conn, Dbms, TargetOptions, TargetSpec};
use ixbench::server::ServerKind;
use serde_json::Value;

fn open(url: &str) -> Box<dyn Dbms> {
    dbms::open(&TargetSpec::parse(url).unwrap(), &TargetOptions::default()).unwrap()
}

/// The user's table: a PK, a UNIQUE index, another index and a TEXT column.
fn make_user_table(t: &dyn Dbms, c: &mut dyn Conn) {
    let (pk, opts) = match t.kind() {
        "mysql" => (
            "booking_id INT NOT NULL PRIMARY KEY",
            " ENGINE=InnoDB ROW_FORMAT=DYNAMIC",
        ),
        _ => ("booking_id INTEGER NOT NULL PRIMARY KEY", ""),
    };
    c.execute(&format!(
        "CREATE TABLE booking ({pk}, flight_id INTEGER NOT NULL, seat VARCHAR(8) NOT NULL, \
         passenger_id INTEGER NOT NULL, price DECIMAL(10,2), note TEXT){opts}"
    ))
    .unwrap();
    c.execute("CREATE UNIQUE INDEX uq_seat ON booking (flight_id, seat)")
        .unwrap();
    c.execute("CREATE INDEX by_pass ON booking (passenger_id)")
        .unwrap();
    let mut id = 0;
    for _ in 0..30 {
        let vals: Vec<String> = (0..100)
            .map(|_| {
                id += 1;
                format!(
                    "({id}, {}, 'S{:03}', {}, {}.{:02}, '{}')",
                    id / 50,
                    id % 50,
                    (id * 7919) % 1000,
                    id % 500,
                    id % 100,
                    "n".repeat((id % 40) as usize * 10)
                )
            })
            .collect();
        c.execute(&format!("INSERT INTO booking VALUES {}", vals.join(", ")))
            .unwrap();
    }
}

/// A checksum of a table's rows (in PK order) and, when `ddl`, of its definition.
fn checksum(t: &dyn Dbms, c: &mut dyn Conn, table: &str, ddl: bool) -> (u64, usize) {
    let rows = c
        .query_rows(&format!("SELECT * FROM {table} ORDER BY booking_id"))
        .unwrap();
    let mut h = DefaultHasher::new();
    rows.hash(&mut h);
    if ddl {
        let def = match t.kind() {
            "mysql" => c.query_rows(&format!("SHOW CREATE TABLE {table}")).unwrap(),
            "postgres" => c
                .query_rows(&format!(
                    "SELECT column_name, data_type, is_nullable, character_maximum_length::text \
                     FROM information_schema.columns WHERE table_name = '{table}' \
                     UNION ALL SELECT indexname, indexdef, '', '' FROM pg_indexes \
                     WHERE tablename = '{table}' ORDER BY 1"
                ))
                .unwrap(),
            _ => c
                .query_rows(&format!(
                    "SELECT name, sql FROM sqlite_master WHERE tbl_name = '{table}' ORDER BY name"
                ))
                .unwrap(),
        };
        assert!(!def.is_empty());
        def.hash(&mut h);
    }
    (h.finish(), rows.len())
}

fn secondary(t: &dyn Dbms, c: &mut dyn Conn, table: &str) -> Vec<String> {
    ixbench::step::own_table::secondary_indexes(c, t.kind(), table).unwrap()
}

fn builds(run: &Value) -> Vec<Value> {
    run["builds"].as_array().unwrap().clone()
}

/// Everything on one target: `url` for ixbench and the test's own connection; `knob` a
/// 2-value session knob; `rebuilds` the --rebuilds words.
fn own_data(url: &str, knob: &str, rebuilds: &str) {
    let t = open(url);
    let mut c = t.connect().unwrap();
    let c = c.as_mut();
    let kind = t.kind().to_string();
    make_user_table(t.as_ref(), c);
    let before = checksum(t.as_ref(), c, "booking", true);
    assert_eq!(before.1, 3000);
    let tmp = tempfile::tempdir().unwrap();
    let out = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();

    // 1. a full copy, kept; user indexes built each alone and together; rebuilds x knob
    let prefix_col = if kind == "mysql" { "note(10)" } else { "note" };
    let o1 = out("full");
    let uidx = format!("UNIQUE u2: booking_id DESC, {prefix_col}");
    let o = ixbench(&[
        "index",
        "--out",
        &o1,
        "--target",
        url,
        "--from-table",
        "booking",
        "--index",
        "idx_2: flight_id, seat, passenger_id",
        "--index",
        &uidx,
        "--knob",
        knob,
        "--rebuild",
        "--rebuilds",
        rebuilds,
        "--keep",
        "--strategy",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let run = run_json(std::path::Path::new(&o1));
    let copy = &run["config"]["copy"];
    assert_eq!(copy["source_rows"], 3000, "{copy}");
    assert_eq!(copy["rows"], 3000, "{copy}");
    assert!(copy["seconds"].as_f64().unwrap() > 0.0);
    // seed 002 on the copy: indexes in place during the load, against load then build
    let st = run["strategies"].as_array().unwrap();
    assert_eq!(st.len(), 2, "{stdout}");
    assert_eq!(st[0]["strategy"], "indexes-first");
    assert_eq!(st[1]["strategy"], "load-first");
    for x in st {
        assert_eq!(x["rows"], 3000, "{x}");
        assert!(
            x["checks"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["ok"] == true),
            "{x}"
        );
    }
    assert_eq!(st[0]["index_secs"].as_f64().unwrap(), 0.0);
    assert!(st[1]["index_secs"].as_f64().unwrap() > 0.0, "{}", st[1]);
    let bs = builds(&run);
    let nrb = bs.iter().filter(|b| b["mode"] == "rebuild").count();
    // 2 knob values x (idx_2, u2, all) index builds + 2 x the rebuilds
    assert_eq!(bs.len() - nrb, 2 * 3, "{stdout}");
    assert!(nrb >= 2 && nrb % 2 == 0, "{stdout}");
    let knob_name = knob.split('=').next().unwrap();
    for b in &bs {
        assert_eq!(b["ok"], true, "{b}");
        assert_eq!(b["rows"], 3000, "{b}");
        assert_eq!(b["knobs"][0][0], knob_name, "{b}");
    }
    if kind == "mysql" {
        // seed 004's page counters, per rebuild
        for b in bs.iter().filter(|b| b["mode"] == "rebuild") {
            let names: Vec<&str> = b["counters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p[0].as_str().unwrap())
                .collect();
            for want in ["pages_read", "pages_written"] {
                assert!(names.contains(&want), "{want} missing in {b}");
            }
        }
        let all: Vec<&str> = bs
            .iter()
            .flat_map(|b| b["counters"].as_array().unwrap().iter())
            .map(|p| p[0].as_str().unwrap())
            .collect();
        for want in ["doublewrite_pages", "pages_flushed"] {
            assert!(all.contains(&want), "{want} never reported");
        }
        assert!(stdout.contains("ALGORITHM=COPY") && stdout.contains("ALGORITHM=INPLACE"));
    }
    let dst = "picopy_booking";
    assert!(ixbench::workload::tables::is_owned(c, &kind, dst).unwrap());
    // same rows, same indexes (the user's, not the --index ones), the original unchanged
    assert_eq!(
        checksum(t.as_ref(), c, dst, false).0,
        checksum(t.as_ref(), c, "booking", false).0
    );
    let orig_idx = secondary(t.as_ref(), c, "booking");
    let copy_idx = secondary(t.as_ref(), c, dst);
    assert_eq!(orig_idx.len(), 2);
    assert_eq!(copy_idx.len(), 2, "{copy_idx:?}");
    if kind == "mysql" {
        assert_eq!(orig_idx, copy_idx);
        let def = c.query_rows("SHOW CREATE TABLE picopy_booking").unwrap();
        let def = def[0][1].clone().unwrap();
        assert!(
            def.contains("UNIQUE KEY `uq_seat`") && def.contains("ROW_FORMAT=DYNAMIC"),
            "{def}"
        );
    }
    assert_eq!(checksum(t.as_ref(), c, "booking", true), before);

    // 2. a sampled copy (over the kept one, which is ixbench's), rebuilds only, dropped
    let o2 = out("sample");
    let o = ixbench(&[
        "index",
        "--out",
        &o2,
        "--target",
        url,
        "--from-table",
        "booking",
        "--sample",
        "500",
        "--rebuild",
        "--rebuilds",
        rebuilds,
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let run = run_json(std::path::Path::new(&o2));
    assert_eq!(run["config"]["copy"]["rows"], 500);
    assert!(builds(&run)
        .iter()
        .all(|b| b["mode"] == "rebuild" && b["rows"] == 500));
    assert!(!c.table_exists(dst).unwrap(), "the copy is dropped");
    let o3 = out("pct");
    let o = ixbench(&[
        "index",
        "--out",
        &o3,
        "--target",
        url,
        "--from-table",
        "booking",
        "--sample-pct",
        "20",
        "--index",
        "p: price DESC",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let rows = run_json(std::path::Path::new(&o3))["config"]["copy"]["rows"]
        .as_u64()
        .unwrap();
    assert!((300..=900).contains(&rows), "about 20% of 3000: {rows}");
    assert_eq!(checksum(t.as_ref(), c, "booking", true), before);

    // 3. --like sbtest with large TEXT values
    let o4 = out("like");
    let o = ixbench(&[
        "index",
        "--out",
        &o4,
        "--target",
        url,
        "--like",
        "sbtest",
        "--rows",
        "300",
        "--text-bytes",
        "3000",
        "--index",
        "kc: k, pad",
        "--keep",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let r = c
        .query_rows(
            "SELECT COUNT(*), MIN(LENGTH(c)), MAX(LENGTH(c)), COUNT(DISTINCT c) FROM pisbtest",
        )
        .unwrap();
    let v: Vec<String> = r[0].iter().map(|x| x.clone().unwrap()).collect();
    assert_eq!(v[..3], ["300", "3000", "3000"], "{v:?}");
    assert!(
        v[3].parse::<u64>().unwrap() > 250,
        "values differ between rows: {v:?}"
    );
    // its own index k_1, and the --index one left by the last build (--keep)
    assert_eq!(
        secondary(t.as_ref(), c, "pisbtest"),
        vec!["k_1".to_string(), "kc".to_string()]
    );

    // 4. bad input: one line, non-zero, nothing copied
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--from-table", "nosuch", "--index", "a: x"],
            "does not exist",
        ),
        (
            vec!["--from-table", "booking", "--index", "a: nocol"],
            "no column nocol",
        ),
        (
            vec![
                "--from-table",
                "booking",
                "--index",
                "a: seat",
                "--index",
                "A: price",
            ],
            "two indexes",
        ),
        (
            vec!["--from-table", "booking", "--index", "a seat"],
            "bad --index",
        ),
        (
            vec!["--from-table", "booking", "--index", "by_pass: price"],
            "already has an index",
        ),
        (vec!["--from-table", "booking"], "nothing to build"),
        (
            vec!["--like", "sbtest", "--index", "a: nope"],
            "no column nope",
        ),
    ];
    for (i, (args, want)) in cases.iter().enumerate() {
        let o_i = out(&format!("bad{i}"));
        let mut a = vec!["index", "--out", &o_i, "--target", url];
        a.extend(args.iter().copied());
        let o = ixbench(&a);
        let e = assert_one_line_error(&o);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    // a name clash with a table ixbench did not create
    c.execute("CREATE TABLE pxcopy_booking (a INTEGER)")
        .unwrap();
    let o_c = out("clash");
    let o = ixbench(&[
        "index",
        "--out",
        &o_c,
        "--target",
        url,
        "--from-table",
        "booking",
        "--table-prefix",
        "px",
        "--index",
        "a: seat",
    ]);
    let e = assert_one_line_error(&o);
    assert!(
        e.contains("clashes") && e.contains("not created by ixbench"),
        "{e}"
    );
    assert_eq!(
        c.query_rows("SELECT COUNT(*) FROM pxcopy_booking").unwrap()[0][0].as_deref(),
        Some("0")
    );
    // An expression index: built where the DBMS has them, refused before anything runs on
    // MariaDB (which has none).
    let o_x = out("expr");
    let o = ixbench(&[
        "index",
        "--out",
        &o_x,
        "--target",
        url,
        "--like",
        "sbtest",
        "--rows",
        "500",
        "--index",
        "lc: (lower(c)), k DESC",
        "--builds",
        "each",
    ]);
    if kind == "mysql" {
        let e = assert_one_line_error(&o);
        assert!(e.contains("no expressions in indexes"), "{e}");
    } else {
        assert!(o.status.success(), "{:?}", text(&o));
        let run = common::run_json(std::path::Path::new(&o_x));
        let b = builds(&run);
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(b[0]["ok"], Value::Bool(true), "{b:?}");
        assert!(b[0]["index_bytes"][0][1].as_u64().unwrap() > 0, "{b:?}");
    }
    if kind != "mysql" {
        let o_p = out("prefix");
        let o = ixbench(&[
            "index",
            "--out",
            &o_p,
            "--target",
            url,
            "--from-table",
            "booking",
            "--index",
            "a: note(10)",
        ]);
        let e = assert_one_line_error(&o);
        assert!(e.contains("prefix lengths"), "{e}");
    }
    assert_eq!(checksum(t.as_ref(), c, "booking", true), before);
}

#[test]
fn sqlite_own_data() {
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", tmp.path().join("user.db").display());
    own_data(&url, "cache_size=-2000,-64000", "reindex");
}

#[test]
fn postgres_own_data() {
    let Some(s) = start_server("postgres_own_data", ServerKind::Postgres, false) else {
        return;
    };
    own_data(
        &s.url_with_password(),
        "maintenance_work_mem=1MB,64MB",
        "vacuum",
    );
}

#[test]
fn mariadb_own_data() {
    let Some(s) = start_server("mariadb_own_data", ServerKind::Mariadb, false) else {
        return;
    };
    own_data(
        &s.url_with_password(),
        "sort_buffer_size=262144,1048576",
        "engine",
    );
}
