//! `--statements text|prepared` and the insert benchmark's response-time lines.
//!
//! On every engine (SQLite, PostgreSQL, MariaDB InnoDB and MyRocks, each a throwaway server):
//! the same seeded run with `--statements prepared` and with `--statements text` leaves the
//! same rows in its table (every column but the server-assigned PK and the clock's
//! `dateandtime`, compared row by row in PK order), the results and the header say which was
//! used, and values that need escaping (quotes, backslashes, `$1`, `?`, non-ASCII) are stored
//! unchanged by a literal INSERT. With `--line-format v2` the `Insert rt:` / `Delete rt:` /
//! `Query rt:` lines are read with the very awk lines of the insert benchmark's own report
//! scripts, and their bucket counts add up to the operations the step counted.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::{assert_all_ok, ixbench, run_json, text};
use ixbench::dbms::{self, Dbms, TargetOptions, TargetSpec};
use ixbench::server::ServerKind;
use ixbench::workload::iibench::{Batch, RowGen, StatementMode, Statements, TableSql};
use serde_json::Value;

/// A small run of every kind of step the statements take part in: the load, the index build,
/// inserts with deletes, range and point queries with throttled writers.
const STEPS: &str = "l.i0,l.x,l.i1,qr100,qp100";

/// The same without the index build and range queries (PostgreSQL's l.x measures the server
/// over a few seconds per index: 30 s here); the range query's literal text runs in
/// [`escaping`] on every engine.
const STEPS_NO_INDEX: &str = "l.i0,l.i1,qp100";

/// Run the steps on `target` with `mode` (tables `<prefix>1`), `--line-format v2`; returns
/// stdout and run.json.
fn run(
    target: &str,
    engine: Option<&str>,
    steps: &str,
    prefix: &str,
    mode: &str,
    out: &Path,
) -> (String, Value) {
    let mut a = vec![
        "run",
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "3000",
        "--rows2",
        "1000",
        "--steps",
        steps,
        "--query-seconds",
        "1",
        "--table-prefix",
        prefix,
        "--seed",
        "7",
        "--statements",
        mode,
        "--line-format",
        "v2",
    ];
    if let Some(e) = engine {
        a.extend(["--engine", e]);
    }
    if steps == STEPS_NO_INDEX {
        a.extend(["--secondary-indexes", "0"]);
    }
    let o = ixbench(&a);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{mode}: {stderr}\n{stdout}");
    let j = run_json(out);
    assert_all_ok(&j);
    assert_eq!(j["config"]["statements"], mode);
    assert!(
        stdout.contains(&format!("statements: {mode} (")),
        "the header says how statements are sent: {stdout}"
    );
    (stdout, j)
}

/// Every column but the PK and `dateandtime`, in PK order.
fn rows(t: &dyn Dbms, table: &str) -> Vec<Vec<Option<String>>> {
    let mut c = t.connect().unwrap();
    c.query_rows(&format!(
        "SELECT cashregisterid, customerid, productid, price, data FROM {table} ORDER BY transactionid"
    ))
    .unwrap()
}

/// Seconds of `YYYY-MM-DD HH:MM:SS`.
fn secs(ts: &str) -> i64 {
    chrono::NaiveDateTime::parse_from_str(&ts[..19], "%Y-%m-%d %H:%M:%S")
        .unwrap_or_else(|e| panic!("{ts}: {e}"))
        .and_utc()
        .timestamp()
}

/// Both modes on one target: the same rows, `dateandtime` written as the same instant, and
/// the response-time lines read by the insert benchmark's scripts.
fn both_modes(
    what: &str,
    target: &str,
    admin_url: Option<&str>,
    engine: Option<&str>,
    steps: &str,
) {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (
        format!("sp{}_", std::process::id()),
        format!("st{}_", std::process::id()),
    );
    let (out_a, out_b) = (dir.path().join("prepared"), dir.path().join("text"));
    let (_, ja) = run(target, engine, steps, &pa, "prepared", &out_a);
    let (stdout, jb) = run(target, engine, steps, &pb, "text", &out_b);
    check_rt_lines(what, &stdout, &jb, dir.path());

    // The same rows, read back through the library.
    let (t, sqlite_path);
    match admin_url {
        Some(u) => {
            t = dbms::open(
                &TargetSpec::parse(u).unwrap(),
                &TargetOptions {
                    engine: engine.map(str::to_string),
                    ..Default::default()
                },
            )
            .unwrap();
            sqlite_path = None;
        }
        None => {
            // Each SQLite run has its database in its results directory.
            t = Box::new(dbms::sqlite::Sqlite::open(out_a.join("ixbench.sqlite"), &[]).unwrap())
                as Box<dyn Dbms>;
            sqlite_path = Some(out_b.join("ixbench.sqlite"));
        }
    }
    let a = rows(t.as_ref(), &format!("{pa}1"));
    let b = match &sqlite_path {
        Some(p) => rows(
            &dbms::sqlite::Sqlite::open(p.clone(), &[]).unwrap(),
            &format!("{pb}1"),
        ),
        None => rows(t.as_ref(), &format!("{pb}1")),
    };
    // 3000 loaded; l.i1 and the query steps delete as many as they insert.
    assert_eq!(a.len(), 3000, "{what}: prepared rows");
    assert_eq!(b.len(), a.len(), "{what}: text rows");
    assert!(
        a == b,
        "{what}: text and prepared runs stored different rows"
    );
    let inserted = |j: &Value| -> u64 {
        j["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["totals"]["rows"][0].as_u64().unwrap())
            .sum()
    };
    assert_eq!(inserted(&ja), inserted(&jb), "{what}: rows inserted");

    // dateandtime: the literal is read as the instant the prepared path binds (no time zone
    // shift): both runs' newest rows are within the few seconds between them.
    let newest = |table: &str, db: &dyn Dbms| -> i64 {
        let mut c = db.connect().unwrap();
        let r = c
            .query_rows(&format!("SELECT max(dateandtime) FROM {table}"))
            .unwrap();
        secs(r[0][0].as_deref().unwrap())
    };
    let na = newest(&format!("{pa}1"), t.as_ref());
    let nb = match &sqlite_path {
        Some(p) => newest(
            &format!("{pb}1"),
            &dbms::sqlite::Sqlite::open(p.clone(), &[]).unwrap(),
        ),
        None => newest(&format!("{pb}1"), t.as_ref()),
    };
    assert!(
        (0..=300).contains(&(nb - na)),
        "{what}: dateandtime {na} then {nb}"
    );

    escaping(what, t.as_ref());
}

/// Values that must be escaped reach the table unchanged through a literal INSERT, and a
/// literal range and point query read them back as the prepared ones do.
fn escaping(what: &str, t: &dyn Dbms) {
    let nasty = [
        "it's",
        "back\\slash",
        "\\'; DROP TABLE x; --",
        "''",
        "\\",
        "$1 ? %s :x",
        "é ü 日本",
        "tab\there",
    ];
    let mut g = RowGen::new(1, 10, 20);
    let mut b = Batch::default();
    g.fill(&mut b, nasty.len(), 1_700_000_000);
    b.data.clear();
    b.data_end.clear();
    for v in nasty {
        b.data.push_str(v);
        b.data_end.push(b.data.len());
    }
    let mut c = t.connect().unwrap();
    let mut got = Vec::new();
    for (i, mode) in [StatementMode::Prepared, StatementMode::Text]
        .into_iter()
        .enumerate()
    {
        let table = format!("esc{}_{i}", std::process::id());
        let sql = TableSql::new(&table, t.dialect()).with_statements(mode);
        c.execute(&format!("DROP TABLE IF EXISTS {table}")).unwrap();
        c.execute(&sql.create_table()).unwrap();
        c.execute(&sql.create_index(0)).unwrap();
        let mut st = Statements::new(Arc::new(sql), t.stores_rows());
        st.insert(c.as_mut(), &b).unwrap();
        assert_eq!(
            st.range_query(c.as_mut(), 0, 0).unwrap(),
            nasty.len(),
            "{what} {mode:?}: range query"
        );
        let keys = [1, 2, 3, 4, 5, 6, 7, 8, 1_000_000, -1];
        assert_eq!(
            st.point_query(c.as_mut(), &keys).unwrap(),
            8,
            "{what} {mode:?}"
        );
        let d = st.delete_oldest(c.as_mut(), 1, 2).unwrap();
        assert_eq!(d.rows, 2, "{what} {mode:?}: delete");
        let r = c
            .query_rows(&format!(
                "SELECT data, dateandtime FROM {table} ORDER BY transactionid"
            ))
            .unwrap();
        c.execute(&format!("DROP TABLE {table}")).unwrap();
        got.push(r);
    }
    let want: Vec<&str> = nasty[2..].to_vec();
    let text: Vec<&str> = got[1].iter().map(|r| r[0].as_deref().unwrap()).collect();
    assert_eq!(text, want, "{what}: literal INSERT changed a value");
    assert_eq!(got[0], got[1], "{what}: text and prepared differ");
    assert_eq!(secs(got[1][0][1].as_deref().unwrap()), 1_700_000_000);
}

/// The response-time lines, read with the insert benchmark's own report scripts' awk:
/// mytools `bench/ibench/np.sh` ("Max insert"/"Max delete"/"Max query":
/// `grep -h "Insert rt" FILE | grep -v max | awk '{ printf "%.3f\n", $13 }'`) and
/// `bench/ibench/rth.sh` (the bucket names from the header line, then each data line's counts
/// `$3..$(NF-1)` and max `$NF`). One pair per operation per step that ran it, in step order;
/// the counts add up to the operations the step counted and the max is the step's largest
/// service time.
fn check_rt_lines(what: &str, stdout: &str, run: &Value, dir: &Path) {
    let file = dir.join("o.ib.dop1.1");
    std::fs::write(&file, stdout).unwrap();
    let f = file.to_str().unwrap();
    let sh = |script: &str| -> String {
        let o = Command::new("bash").arg("-c").arg(script).output().unwrap();
        assert!(
            o.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    let steps = run["steps"].as_array().unwrap();
    for (grepme, op, k) in [
        ("Insert rt", "insert", 0),
        ("Delete rt", "delete", 1),
        ("Query rt", "query", 2),
    ] {
        // np.sh
        let maxes = sh(&format!(
            "grep -h \"{grepme}\" {f} | grep -v max | awk '{{ printf \"%.3f\\n\", $13 }}'"
        ));
        // rth.sh: header, then each line's counts and max
        let head = sh(&format!(
            "grep \"{grepme}\" {f} | head -1 | awk '{{ for (x=3; x<NF; x++) {{ printf \"%s,\", $x }}; printf \"%s,tag\\n\", $NF }}'"
        ));
        let data = sh(&format!(
            "grep \"{grepme}\" {f} | grep -v max | awk '{{ for (x=3; x<NF; x++) {{ printf \"%s,\", $x}}; printf \"%.5f\\n\", $NF }}'"
        ));
        let with_op: Vec<&Value> = steps
            .iter()
            .filter(|s| {
                s["latency"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|l| l["op"] == op)
            })
            .collect();
        assert!(!with_op.is_empty(), "{what}: no step ran {op}");
        assert_eq!(
            head.trim(),
            "256us,1ms,4ms,16ms,64ms,256ms,1s,4s,16s,gt,max,tag",
            "{what}: {grepme} header"
        );
        let maxes: Vec<f64> = maxes.lines().map(|l| l.parse().unwrap()).collect();
        let data: Vec<&str> = data.lines().collect();
        assert_eq!(maxes.len(), with_op.len(), "{what}: {grepme} lines");
        assert_eq!(data.len(), with_op.len(), "{what}: {grepme} lines");
        for ((s, max), line) in with_op.iter().zip(&maxes).zip(&data) {
            let fields: Vec<&str> = line.split(',').collect();
            assert_eq!(fields.len(), 11, "{what}: {line}");
            let counted: u64 = fields[..10].iter().map(|c| c.parse::<u64>().unwrap()).sum();
            let ops = s["totals"]["ops"][k].as_u64().unwrap();
            assert_eq!(
                counted, ops,
                "{what} {}: {grepme} buckets vs operations",
                s["name"]
            );
            assert!(ops > 0);
            let l = s["latency"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| l["op"] == op)
                .unwrap();
            let want = l["service"]["max_us"].as_f64().unwrap() / 1e6;
            assert!((max - want).abs() < 0.0006, "{what}: max {max} vs {want}");
            let rth_max: f64 = fields[10].parse().unwrap();
            assert!(
                (rth_max - want).abs() < 0.000_01,
                "{what}: {rth_max} vs {want}"
            );
        }
    }
}

#[test]
fn sqlite_both_modes() {
    both_modes("sqlite", "sqlite", None, None, STEPS);
}

#[test]
fn postgres_both_modes() {
    let Some(s) = common::start_server("statements postgres", ServerKind::Postgres, false) else {
        return;
    };
    both_modes(
        "postgres",
        &s.url(),
        Some(&s.url_with_password()),
        None,
        STEPS_NO_INDEX,
    );
}

#[test]
fn mariadb_innodb_and_myrocks_both_modes() {
    let Some(s) = common::start_server("statements mariadb", ServerKind::Mariadb, false) else {
        return;
    };
    let url = s.url_with_password();
    both_modes("innodb", &s.url(), Some(&url), Some("innodb"), STEPS);
    if ixbench::server::rocksdb_available() {
        both_modes("myrocks", &s.url(), Some(&url), Some("rocksdb"), STEPS);
    } else {
        common::skip::<()>("statements myrocks", "the MyRocks plugin is not installed");
    }
}
