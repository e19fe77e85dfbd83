//! The DBMS drivers' generic statement API (prepare, exec, query, query_int, transactions with
//! typed parameters), which every workload is built on, against real SQLite, PostgreSQL and
//! MariaDB (InnoDB and MyRocks) servers started here.

use crate::common;

use ixbench::dbms::prelude::*;
use ixbench::dbms::{self, in_txn, TargetOptions, TargetSpec, TxnKind, Value};
use ixbench::server::ServerKind;

/// Create a table of every parameter type, write and read it back through prepared statements.
fn exercise(t: &dyn Dbms, create_suffix: &str) {
    let ph = t.dialect().placeholder;
    let mut c = t.connect().unwrap();
    let c: &mut dyn Conn = c.as_mut();
    let _ = c.execute("DROP TABLE IF EXISTS ixb_api");
    c.execute(&format!(
        "CREATE TABLE ixb_api (id BIGINT PRIMARY KEY, n INT, f DOUBLE PRECISION, s VARCHAR(40), \
         ts TIMESTAMP NULL){create_suffix}"
    ))
    .unwrap();
    let ins = c
        .prepare(&format!(
            "INSERT INTO ixb_api (id, n, f, s, ts) VALUES ({}, {}, {}, {}, {})",
            ph.nth(1),
            ph.nth(2),
            ph.nth(3),
            ph.nth(4),
            ph.nth(5)
        ))
        .unwrap();
    // The same text gives the same handle.
    let again = c
        .prepare(&format!(
            "INSERT INTO ixb_api (id, n, f, s, ts) VALUES ({}, {}, {}, {}, {})",
            ph.nth(1),
            ph.nth(2),
            ph.nth(3),
            ph.nth(4),
            ph.nth(5)
        ))
        .unwrap();
    assert_eq!(ins, again);
    let n = in_txn(c, TxnKind::Write, |c| {
        let mut n = 0;
        for i in 1..=10i64 {
            let s = format!("row {i}");
            n += c.exec(
                ins,
                &[
                    Value::Int(i),
                    Value::Int(i * 10),
                    Value::Float(i as f64 / 4.0),
                    Value::Text(&s),
                    if i % 2 == 0 {
                        Value::Timestamp(1_700_000_000 + i)
                    } else {
                        Value::Null
                    },
                ],
            )?;
        }
        Ok(n)
    })
    .unwrap();
    assert_eq!(n, 10);

    // A failed transaction leaves nothing behind.
    let r = in_txn(c, TxnKind::Write, |c| {
        c.exec(
            ins,
            &[
                Value::Int(11),
                Value::Int(0),
                Value::Null,
                Value::Null,
                Value::Null,
            ],
        )?;
        // Duplicate key.
        c.exec(
            ins,
            &[
                Value::Int(1),
                Value::Int(0),
                Value::Null,
                Value::Null,
                Value::Null,
            ],
        )
    });
    assert!(r.is_err());

    let count = c
        .prepare(&format!(
            "SELECT count(*) FROM ixb_api WHERE id >= {}",
            ph.nth(1)
        ))
        .unwrap();
    assert_eq!(c.query_int(count, &[Value::Int(0)]).unwrap(), Some(10));
    assert_eq!(c.query_int(count, &[Value::Int(6)]).unwrap(), Some(5));
    let sum = c
        .prepare(&format!(
            "SELECT n FROM ixb_api WHERE id = {} AND s = {}",
            ph.nth(1),
            ph.nth(2)
        ))
        .unwrap();
    assert_eq!(
        c.query_int(sum, &[Value::Int(3), Value::Text("row 3")])
            .unwrap(),
        Some(30)
    );
    assert_eq!(
        c.query_int(sum, &[Value::Int(3), Value::Text("row 4")])
            .unwrap(),
        None
    );
    let rows = c
        .prepare(&format!(
            "SELECT id, n, f, s, ts FROM ixb_api WHERE id BETWEEN {} AND {} ORDER BY id",
            ph.nth(1),
            ph.nth(2)
        ))
        .unwrap();
    assert_eq!(c.query(rows, &[Value::Int(2), Value::Int(7)]).unwrap(), 6);
    // Timestamps arrive as the same instant.
    let ts = c
        .prepare(&format!(
            "SELECT count(*) FROM ixb_api WHERE ts = {}",
            ph.nth(1)
        ))
        .unwrap();
    assert_eq!(
        c.query_int(ts, &[Value::Timestamp(1_700_000_004)]).unwrap(),
        Some(1)
    );
    let upd = c
        .prepare(&format!(
            "UPDATE ixb_api SET n = n + 1 WHERE id <= {}",
            ph.nth(1)
        ))
        .unwrap();
    assert_eq!(c.exec(upd, &[Value::Int(4)]).unwrap(), 4);
    // Read-only transaction, then rollback of a write.
    in_txn(c, TxnKind::Read, |c| {
        c.query(rows, &[Value::Int(1), Value::Int(10)])
    })
    .unwrap();
    c.begin(TxnKind::Write).unwrap();
    c.exec(upd, &[Value::Int(10)]).unwrap();
    c.rollback().unwrap();
    assert_eq!(
        c.query_int(sum, &[Value::Int(5), Value::Text("row 5")])
            .unwrap(),
        Some(50)
    );
    // Wrong parameter count: an error, not a panic.
    assert!(c.exec(upd, &[]).is_err());
    c.execute("DROP TABLE ixb_api").unwrap();
}

#[test]
fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let t = dbms::sqlite::Sqlite::open(dir.path().join("x.db"), &[]).unwrap();
    exercise(&t, "");
}

#[test]
fn postgres() {
    let Some(s) = common::start_server("dbms_api postgres", ServerKind::Postgres, false) else {
        return;
    };
    let t = dbms::open(
        &TargetSpec::parse(&s.url_with_password()).unwrap(),
        &TargetOptions::default(),
    )
    .unwrap();
    exercise(t.as_ref(), "");
    // The major version the DBMS layer tells (what `ddl` hands a method's figures) is the one
    // the server shows.
    let shown = t.info(t.connect().unwrap().as_mut()).unwrap().version;
    let major: u32 = shown.split('.').next().unwrap().parse().unwrap();
    assert_eq!(t.major_version(), Some(major), "{shown}");
}

#[test]
fn mariadb_innodb_and_myrocks() {
    let Some(s) = common::start_server("dbms_api mariadb", ServerKind::Mariadb, false) else {
        return;
    };
    let t = dbms::open(
        &TargetSpec::parse(&s.url_with_password()).unwrap(),
        &TargetOptions::default(),
    )
    .unwrap();
    exercise(t.as_ref(), " ENGINE=InnoDB");
    // Unknown where ixbench does not tell, never a number parsed from another DBMS's version.
    assert_eq!(t.major_version(), None);
    if ixbench::server::rocksdb_available() {
        exercise(t.as_ref(), " ENGINE=ROCKSDB");
    } else if std::env::var_os("CI").is_some() {
        panic!("the MyRocks plugin is not installed");
    }
}

/// A DBMS that implements only the core (the null target: `Driver`'s kind, dialect, connect
/// and info, and `Conn`) gets the capabilities' defaults: figures unknown and "not supported
/// by this DBMS (null)", never a 0; its index DDL is the SQL-standard dialect's.
#[test]
fn only_the_core_gives_unknowns() {
    let t = dbms::null::Null::new();
    let mut c = t.connect().unwrap();
    let c: &mut dyn Conn = c.as_mut();
    let tables = ["t".to_string()];
    let not_supported = "not supported by this DBMS (null)";

    let sizes = t.sizes(c, &tables, true).unwrap();
    assert_eq!(sizes.database_bytes, None);
    assert!(sizes.objects.is_empty());
    assert!(
        sizes.notes.iter().any(|n| n.contains(not_supported)),
        "{sizes:?}"
    );
    let maint = t
        .maintenance(c, &tables, &ixbench::measure::clock::Figures)
        .unwrap();
    assert!(
        maint
            .iter()
            .all(|a| a.detail.starts_with("SKIPPED") && a.detail.contains(not_supported)),
        "{maint:?}"
    );
    assert!(!maint.is_empty());
    assert_eq!(t.row_counters(c, &tables).unwrap(), None);
    assert!(t.io_counters(c).unwrap().is_empty());
    assert!(t.quiet_probe(c, &tables).unwrap().is_none());
    assert_eq!(t.wal_bytes(), None);
    assert_eq!(t.major_version(), None);

    assert_eq!(t.plan_uses_index("Index Only Scan using i on t", "i"), None);
    let spec = dbms::IndexSpec {
        table: "t".into(),
        name: "i".into(),
        columns: vec!["a".into(), "b".into()],
        unique: false,
    };
    let e = t
        .index_build_plan(std::slice::from_ref(&spec), true)
        .unwrap_err();
    assert!(e.to_string().contains(not_supported), "{e}");
    assert_eq!(
        t.index_build_plan(std::slice::from_ref(&spec), false)
            .unwrap(),
        [["CREATE INDEX i ON t (a, b)"]]
    );
    assert_eq!(t.drop_index_sql(&spec), "DROP INDEX i");
    let e = t.knob_scope(c, "work_mem").unwrap_err();
    assert!(
        e.to_string()
            .contains("knobs are not supported by this DBMS (null)"),
        "{e}"
    );
    assert_eq!(t.build_progress(c).unwrap(), None);
}

/// A cluster target (`ClusterDbms`, Galera's) answers as its entry node's driver for every
/// method it does not make its own: the connection parameters another program (pt-osc) is
/// given, and the disk estimate printed before a run (SQLite's, the one driver that has one),
/// once answered by the trait's defaults ("no server another program can connect to", no
/// estimate).
#[test]
fn a_cluster_answers_as_its_entry_node() {
    use ixbench::dbms::cluster::ClusterDbms;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let one = |node: Arc<dyn Dbms>| {
        ClusterDbms::new(
            vec![node],
            Arc::new(vec![AtomicBool::new(false)]),
            vec![0],
            vec![],
        )
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let file: Arc<dyn Dbms> =
        Arc::new(dbms::sqlite::Sqlite::open(dir.path().join("x.db"), &[]).unwrap());
    let cluster = one(file.clone());
    let note = |t: &dyn Dbms| t.disk_note(1_000_000, 3, (10, 20), &[]);
    assert!(note(file.as_ref()).is_some());
    assert_eq!(note(&cluster), note(file.as_ref()));

    let Some(s) = common::start_server("dbms_api cluster", ServerKind::Mariadb, false) else {
        return;
    };
    let node: Arc<dyn Dbms> = Arc::from(
        dbms::open(
            &TargetSpec::parse(&s.url_with_password()).unwrap(),
            &TargetOptions::default(),
        )
        .unwrap(),
    );
    let cluster = one(node.clone());
    let params = cluster
        .client_params()
        .expect("the entry node's parameters");
    assert_eq!(Some(params.clone()), node.client_params());
    assert_eq!(params.port, s.port);
    assert!(params.password.is_some());
}
