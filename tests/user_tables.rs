//! A user's own tables as the DBMS describes them (issue 29), on SQLite, PostgreSQL and MariaDB
//! (throwaway servers): `ixbench index --from-table` copies a table with generated (computed)
//! columns, PostgreSQL's STORED, MariaDB's VIRTUAL and PERSISTENT, SQLite's VIRTUAL and STORED,
//! without inserting into them, keeps each column's collation, and builds an index on a
//! generated column; and tables and columns named like SQL keywords, with spaces and in mixed
//! case (`order`, `select`, `Key Col`, `Key Tab`) copied, indexed and read by `pattern infer
//! --table --column --order-by`, each name quoted the DBMS's way.

use crate::common;

use common::*;
use ixbench::dbms::{self, Conn, Dbms, TargetOptions, TargetSpec};
use ixbench::server::ServerKind;

fn open(url: &str) -> Box<dyn Dbms> {
    dbms::open(&TargetSpec::parse(url).unwrap(), &TargetOptions::default()).unwrap()
}

/// Each column's collation as the catalog gives it (`None`: the default), by column name.
fn collations(kind: &str, c: &mut dyn Conn, table: &str) -> Vec<Vec<Option<String>>> {
    let sql = match kind {
        "mysql" => format!(
            "SELECT COLUMN_NAME, COLLATION_NAME FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{table}' ORDER BY ORDINAL_POSITION"
        ),
        "postgres" => format!(
            "SELECT column_name, collation_name FROM information_schema.columns \
             WHERE table_name = '{table}' ORDER BY ordinal_position"
        ),
        // SQLite keeps the collation in the table's text only: the column's clause
        _ => format!(
            "SELECT name, CASE WHEN (SELECT sql FROM sqlite_master WHERE name = '{table}') \
             LIKE '%' || name || ' TEXT COLLATE NOCASE%' THEN 'NOCASE' END \
             FROM pragma_table_xinfo('{table}') ORDER BY cid"
        ),
    };
    c.query_rows(&sql).unwrap()
}

/// `ixbench index --from-table TABLE --table-prefix Px --keep EXTRA...` into `out`: it
/// succeeds and every build in it is ok (the copy is `pxcopy_...`: its name lower case).
fn copy_and_index(url: &str, out: &std::path::Path, table: &str, extra: &[&str]) {
    let mut args = vec![
        "index",
        "--out",
        out.to_str().unwrap(),
        "--target",
        url,
        "--from-table",
        table,
        "--table-prefix",
        "Px",
        "--keep",
    ];
    args.extend(extra);
    let o = ixbench(&args);
    assert!(o.status.success(), "{table}: {:?}", text(&o));
    let run = common::run_json(out);
    let builds = run["builds"].as_array().unwrap();
    assert!(
        !builds.is_empty() && builds.iter().all(|b| b["ok"] == true),
        "{table}: {builds:?}"
    );
}

fn generated_columns(url: &str) {
    let t = open(url);
    let mut conn = t.connect().unwrap();
    let c = conn.as_mut();
    let kind = t.kind().to_string();
    let create = match kind.as_str() {
        "mysql" => {
            "CREATE TABLE gen (id INT NOT NULL PRIMARY KEY, a INT NOT NULL, \
                    name VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, \
                    twice INT AS (a * 2) VIRTUAL, thrice INT AS (a * 3) PERSISTENT) ENGINE=InnoDB"
        }
        "postgres" => {
            "CREATE TABLE gen (id INTEGER NOT NULL PRIMARY KEY, a INTEGER NOT NULL, \
                       name TEXT COLLATE \"POSIX\", \
                       thrice INTEGER GENERATED ALWAYS AS (a * 3) STORED)"
        }
        _ => {
            "CREATE TABLE gen (id INTEGER NOT NULL PRIMARY KEY, a INTEGER NOT NULL, \
              name TEXT COLLATE NOCASE, twice INTEGER GENERATED ALWAYS AS (a * 2) VIRTUAL, \
              thrice INTEGER GENERATED ALWAYS AS (a * 3) STORED)"
        }
    };
    c.execute(create).unwrap();
    let vals: Vec<String> = (1..=200)
        .map(|i| format!("({i}, {}, 'N{}')", i * 7 % 50, i % 13))
        .collect();
    c.execute(&format!(
        "INSERT INTO gen (id, a, name) VALUES {}",
        vals.join(", ")
    ))
    .unwrap();
    let rows = |c: &mut dyn Conn, table: &str| {
        c.query_rows(&format!("SELECT * FROM {table} ORDER BY id"))
            .unwrap()
    };
    let source = rows(c, "gen");
    let source_coll = collations(&kind, c, "gen");
    assert!(
        source_coll.iter().any(|r| r[1].is_some()),
        "the test's table has a collated column: {source_coll:?}"
    );
    let tmp = tempfile::tempdir().unwrap();
    copy_and_index(
        url,
        &tmp.path().join("gen"),
        "gen",
        &["--index", "by_thrice: thrice"],
    );
    assert_eq!(rows(c, "pxcopy_gen"), source, "the copy's rows");
    assert_eq!(
        collations(&kind, c, "pxcopy_gen"),
        source_coll,
        "the copy's collations"
    );
}

/// Tables `order` and `Key Tab` with columns `select` and `Key Col` (and an index of the user's
/// on `Key Col`): `index --from-table` copies each and builds `--index` on the quoted columns.
fn keyword_names(url: &str) {
    let t = open(url);
    let mut conn = t.connect().unwrap();
    let c = conn.as_mut();
    let d = ixbench::dbms::registry::dialect(t.kind());
    let q = |n: &str| d.quote_ident(n);
    let tmp = tempfile::tempdir().unwrap();
    for (i, table) in ["order", "Key Tab"].into_iter().enumerate() {
        c.execute(&format!(
            "CREATE TABLE {} (id INTEGER NOT NULL PRIMARY KEY, {} INTEGER NOT NULL, {} VARCHAR(20))",
            q(table),
            q("select"),
            q("Key Col")
        ))
        .unwrap();
        c.execute(&format!(
            "CREATE INDEX {} ON {} ({})",
            q(&format!("Key Idx{i}")),
            q(table),
            q("Key Col")
        ))
        .unwrap();
        let vals: Vec<String> = (1..=100)
            .map(|i| format!("({i}, {}, 'v{}')", i % 7, i % 11))
            .collect();
        c.execute(&format!(
            "INSERT INTO {} VALUES {}",
            q(table),
            vals.join(", ")
        ))
        .unwrap();
        // index names are per database (SQLite) or schema (PostgreSQL): one per copy
        let spec = format!(r#"by_sel{i}: "select", "Key Col" DESC"#);
        let out = tmp.path().join(format!("k{i}"));
        copy_and_index(url, &out, table, &["--index", &spec, "--sample", "60"]);
        let copy = ixbench::step::own_table::copy_name("Px", table);
        let n = c
            .query_rows(&format!(
                "SELECT COUNT(*), COUNT({}) FROM {copy}",
                q("Key Col")
            ))
            .unwrap();
        assert_eq!(n[0][0].as_deref(), Some("60"), "{table}: {n:?}");
        assert_eq!(n[0][1].as_deref(), Some("60"), "{table}: {n:?}");
        // pattern infer reads the user's table, its columns quoted, read-only
        let o = ixbench(&[
            "pattern",
            "infer",
            "--target",
            url,
            "--table",
            table,
            "--column",
            "select",
            "--order-by",
            r#""Key Col" DESC, id"#,
        ]);
        assert!(o.status.success(), "{table}: {:?}", text(&o));
        assert!(
            text(&o).0.contains("100 of 100 keys"),
            "{table}: {:?}",
            text(&o)
        );
        let idx = ixbench::step::own_table::secondary_indexes(c, t.kind(), &copy).unwrap();
        assert!(
            idx.len() >= 2,
            "{table}: the copy has its own index and by_sel: {idx:?}"
        );
    }
}

/// `check` on a new SQLite file, then on a throwaway PostgreSQL and MariaDB server (each
/// skipped, and said so, where not installed).
fn on_each_engine(test: &str, check: fn(&str)) {
    let tmp = tempfile::tempdir().unwrap();
    check(&format!("sqlite:{}", tmp.path().join("user.db").display()));
    for kind in [ServerKind::Postgres, ServerKind::Mariadb] {
        if let Some(s) = start_server(test, kind, false) {
            check(&s.url_with_password());
        }
    }
}

#[test]
fn generated_columns_and_collations() {
    on_each_engine("generated_columns_and_collations", generated_columns);
}

#[test]
fn keyword_and_spaced_names() {
    on_each_engine("keyword_and_spaced_names", keyword_names);
}
