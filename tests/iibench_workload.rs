//! The insert benchmark's operations and its transaction workload (`ixbench ddl`'s) on SQLite, through the
//! generic statement API (a test file of its own: they write files, and the library's unit
//! tests measure this process's own writes).

use std::sync::Arc;

use ixbench::dbms::prelude::*;
use ixbench::workload::iibench::{
    Batch, RowGen, Statements, TableSql, INDEXES, POINT_KEYS, RANGE_LIMIT,
};

/// The operations on SQLite: a batch over the parameter limit goes in as several
/// INSERTs in one commit; deletes take the oldest rows; queries read what is there; each
/// statement is prepared once.
#[test]
fn operations_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = ixbench::dbms::sqlite::Sqlite::open(dir.path().join("t.db"), &[]).unwrap();
    let mut conn = db.connect().unwrap();
    let t = TableSql::new("ops", db.dialect());
    conn.execute(&t.create_table()).unwrap();
    for i in 0..3 {
        conn.execute(&t.create_index(i)).unwrap();
    }
    let t = Arc::new(t);
    let mut st = Statements::new(t.clone(), true);
    let mut g = RowGen::new(1, 10, 20);
    let mut b = Batch::default();
    let big = t.max_rows_per_statement() + 7;
    g.fill(&mut b, big, 1_700_000_000);
    st.insert(conn.as_mut(), &b).unwrap();
    g.fill(&mut b, 100, 1_700_000_001);
    for _ in 0..3 {
        st.insert(conn.as_mut(), &b).unwrap();
    }
    let total = big as u64 + 300;
    assert_eq!(t.count_rows(conn.as_mut()).unwrap(), total);
    let (min, max) = t.min_max_ids(conn.as_mut()).unwrap().unwrap();
    assert_eq!(max - min + 1, total as i64);
    let d = st.delete_oldest(conn.as_mut(), min, 250).unwrap();
    assert_eq!((d.rows, d.next_from), (250, min + 250));
    assert_eq!(st.nth_id(conn.as_mut(), max, 2).unwrap(), None);
    assert_eq!(st.delete_range(conn.as_mut(), max, max).unwrap(), 1);
    assert_eq!(t.count_rows(conn.as_mut()).unwrap(), total - 251);
    for (i, idx) in INDEXES.iter().enumerate() {
        assert_eq!(st.range_query(conn.as_mut(), i, 0).unwrap(), RANGE_LIMIT);
        let plan = t.explain(conn.as_mut(), i).unwrap();
        assert_eq!(
            db.plan_uses_index(&plan, &idx.name("ops")),
            Some(true),
            "{plan}"
        );
    }
    let mut keys = [0i64; POINT_KEYS];
    for (j, k) in keys.iter_mut().enumerate() {
        *k = min + 250 + j as i64;
    }
    assert_eq!(st.point_query(conn.as_mut(), &keys).unwrap(), POINT_KEYS);
    keys = [min; POINT_KEYS];
    assert_eq!(st.point_query(conn.as_mut(), &keys).unwrap(), 0);
    // INSERTs of 3 sizes (5461, 7 and 100 rows), nth (250 and 2), delete, 3 ranges, point.
    assert_eq!(st.prepared(), 3 + 2 + 1 + 3 + 1);
}

/// The insert benchmark as a transaction workload, as `ixbench ddl --workload iibench` makes it
/// from the registry, on SQLite: the load fills the table and builds every secondary index;
/// each transaction inserts its batch and deletes as many of the oldest rows (the table keeps
/// its size); loading again replaces ixbench's own table; bad options are refused before
/// anything runs.
#[test]
fn insert_load_from_the_registry_on_sqlite() {
    use ixbench::workload::iibench::load::InsertLoad;
    use ixbench::workload::registry::{self, DdlLoad, RandType};
    let dir = tempfile::tempdir().unwrap();
    let db = ixbench::dbms::sqlite::Sqlite::open(dir.path().join("w.db"), &[]).unwrap();
    let entry = registry::find("iibench").expect("the insert benchmark is registered");
    let load = DdlLoad {
        tables: 1,
        table_size: 3_001,
        threads: 2,
        rand_type: RandType::Uniform,
        seed: 9,
    };
    let w = entry.ddl_workload(&load, &db).unwrap();
    assert_eq!((w.name(), w.tables()), ("iibench", vec!["pi1".to_string()]));
    w.load(&db, 2).unwrap();
    let mut conn = db.connect().unwrap();
    let sql = TableSql::new("pi1", db.dialect());
    assert_eq!(sql.count_rows(conn.as_mut()).unwrap(), 3_001);
    for idx in &INDEXES {
        assert!(conn.index_exists("pi1", &idx.name("pi1")).unwrap());
    }
    let mut c = w.client(conn.as_mut(), 0, 9).unwrap();
    for _ in 0..5 {
        let d = c.run(conn.as_mut()).unwrap();
        // 50 rows inserted and the 50 oldest deleted, in one commit.
        assert_eq!((d.writes, d.inserted, d.deleted, d.rows), (2, 50, 50, 100));
    }
    assert_eq!(sql.count_rows(conn.as_mut()).unwrap(), 3_001);
    // Loading again replaces ixbench's own table.
    let (min, _) = sql.min_max_ids(conn.as_mut()).unwrap().unwrap();
    conn.execute(&sql.delete_range_literal(min, min + 9))
        .unwrap();
    assert_eq!(sql.count_rows(conn.as_mut()).unwrap(), 2_991);
    w.load(&db, 1).unwrap();
    assert_eq!(sql.count_rows(conn.as_mut()).unwrap(), 3_001);
    // Bad options are refused before anything runs.
    for per in [0, 100_000] {
        assert!(InsertLoad::new("pi1", &db, 10, per, (10, 20), 1).is_err());
    }
    assert!(InsertLoad::new("no such; table", &db, 10, 10, (10, 20), 1).is_err());
}
