//! The DBMS drivers' generic statement API (prepare, exec, query, query_int, transactions with
//! typed parameters), which every workload is built on, against real SQLite, PostgreSQL and
//! MariaDB (InnoDB and MyRocks) servers started here.

use crate::common;

use ixbench::dbms::prelude::*;
use ixbench::dbms::{self, in_txn, TargetOptions, TargetSpec, TxnKind, Value};
use ixbench::server::ServerKind;

/// Create a table of every parameter type, write and read it back through prepared statements.
fn exercise(t: &dyn Dbms, create_suffix: &str) {
    let ph = |n| t.dialect().ph(n);
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
            ph(1),
            ph(2),
            ph(3),
            ph(4),
            ph(5)
        ))
        .unwrap();
    // The same text gives the same handle.
    let again = c
        .prepare(&format!(
            "INSERT INTO ixb_api (id, n, f, s, ts) VALUES ({}, {}, {}, {}, {})",
            ph(1),
            ph(2),
            ph(3),
            ph(4),
            ph(5)
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
            ph(1)
        ))
        .unwrap();
    assert_eq!(c.query_int(count, &[Value::Int(0)]).unwrap(), Some(10));
    assert_eq!(c.query_int(count, &[Value::Int(6)]).unwrap(), Some(5));
    let sum = c
        .prepare(&format!(
            "SELECT n FROM ixb_api WHERE id = {} AND s = {}",
            ph(1),
            ph(2)
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
            ph(1),
            ph(2)
        ))
        .unwrap();
    assert_eq!(c.query(rows, &[Value::Int(2), Value::Int(7)]).unwrap(), 6);
    // Timestamps arrive as the same instant.
    let ts = c
        .prepare(&format!(
            "SELECT count(*) FROM ixb_api WHERE ts = {}",
            ph(1)
        ))
        .unwrap();
    assert_eq!(
        c.query_int(ts, &[Value::Timestamp(1_700_000_004)]).unwrap(),
        Some(1)
    );
    let upd = c
        .prepare(&format!(
            "UPDATE ixb_api SET n = n + 1 WHERE id <= {}",
            ph(1)
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
    // What SQLite answers in its own way (none of it the traits' defaults), the cluster
    // answers the same: Admin's and IndexLab's methods come from the entry node.
    let idx = ixbench::dbms::IndexSpec {
        table: "t".into(),
        name: "t_a".into(),
        columns: vec!["a".into()],
        unique: false,
    };
    let answers = |t: &dyn Dbms| {
        let mut c = t.connect().unwrap();
        (
            t.rebuild_statements("t"),
            t.drop_index_sql(&idx),
            t.plan_uses_index("SEARCH t USING COVERING INDEX t_a (a>?)", "t_a"),
            t.knob_value(c.as_mut(), "cache_size").ok(),
            t.data_directory(c.as_mut()),
        )
    };
    let (rebuild, _, covering, knob, data_dir) = answers(file.as_ref());
    assert!(!rebuild.is_empty() && covering == Some(true) && knob.is_some() && data_dir.is_some());
    assert_eq!(answers(&cluster), answers(file.as_ref()));

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

/// The traits a `Dbms` is made of and the two that describe a dialect, with their files under
/// src/dbms/.
const TRAITS: &[(&str, &str)] = &[
    ("Driver", "driver.rs"),
    ("Admin", "admin.rs"),
    ("IndexLab", "index_lab.rs"),
    ("DdlDialect", "ddl/mod.rs"),
    ("DbmsSql", "dialect/mod.rs"),
];

/// The methods `ClusterDbms` answers itself instead of its entry node (trait, method, why).
/// Every other method of the traits it implements is forwarded to the entry node's driver.
const CLUSTER_OVERRIDES: &[(&str, &str, &str)] = &[
    (
        "Driver",
        "connect",
        "round robin over the write nodes, the session's statements run on each",
    ),
    ("Driver", "connect_admin", "follows the entry when it moves"),
    (
        "Driver",
        "server_pids",
        "every node's processes: a step's server CPU and I/O are the cluster's",
    ),
    (
        "Driver",
        "fails_over",
        "a cluster of several nodes goes on when one leaves",
    ),
    ("Driver", "embedded", "never: its nodes are servers"),
];

/// The traits `ClusterDbms` gets through `AnswersAs` (src/dbms/forward.rs): declared inside
/// `forwarded_trait!`, which forwards every method of the trait's own declaration to the entry
/// node, so none can be missed (and none overridden: a method a cluster answers itself
/// belongs in `Driver`).
const CLUSTER_FORWARDED: &[&str] = &["Admin", "IndexLab"];

/// The traits `ClusterDbms` does not implement: reached through its kind and version, the
/// entry node's (trait, how).
const CLUSTER_BY_KIND: &[(&str, &str)] = &[
    (
        "DdlDialect",
        "registry::ddl_dialect_of / ddl_dialect, from the kind and version of the target's info",
    ),
    ("DbmsSql", "registry::dialect(kind())"),
];

/// The body of the block whose `{` is the first at or after `from` in `s` (code only).
fn block(s: &str, from: usize) -> &str {
    let open = from + s[from..].find('{').expect("a block");
    let mut depth = 0;
    for (j, c) in s[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &s[open + 1..open + j];
                }
            }
            _ => {}
        }
    }
    panic!("an unclosed block");
}

/// The methods declared directly in `body` (a trait's or an impl's, code only): name, whether
/// it has a body, and that body.
fn methods(body: &str) -> Vec<(String, bool, String)> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < body.len() {
        let c = body.as_bytes()[i];
        if c == b'{' {
            depth += 1;
        } else if c == b'}' {
            depth -= 1;
        } else if depth == 0 && body[i..].starts_with("fn ") {
            let name: String = body[i + 3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let rest = &body[i..];
            let semi = rest.find(';').unwrap_or(rest.len());
            let brace = rest.find('{').unwrap_or(rest.len());
            if brace < semi {
                let text = block(body, i);
                out.push((name, true, text.to_string()));
                i += brace + text.len() + 2;
                continue;
            }
            out.push((name, false, String::new()));
            i += semi;
        }
        i += 1;
    }
    out
}

/// The methods of `pub trait NAME` in `code`.
fn trait_methods(code: &str, name: &str) -> Vec<(String, bool, String)> {
    let at = code
        .find(&format!("pub trait {name}"))
        .unwrap_or_else(|| panic!("no trait {name}"));
    methods(block(code, at))
}

/// What `ClusterDbms` (the code of src/dbms/cluster.rs in `own`) does not forward to its
/// entry node and does not name as overridden, and what the lists name wrongly; `traits` are
/// (name, code of its file).
fn forwarding_problems(own: &str, traits: &[(&str, String)], dbms_mod: &str) -> Vec<String> {
    let own = &own[..own.find("#[cfg(test)]").unwrap_or(own.len())];
    let mut problems = Vec::new();
    // The traits a Dbms is made of are all looked at.
    let at = dbms_mod.find("pub trait Dbms:").expect("the Dbms trait");
    let supers = &dbms_mod[at + "pub trait Dbms:".len()..];
    for t in supers[..supers.find('{').unwrap()].split('+') {
        let t = t.trim();
        if !traits.iter().any(|(n, _)| *n == t) {
            problems.push(format!(
                "Dbms is made of {t}, which this test does not read"
            ));
        }
    }
    for (name, code) in traits {
        let declared = trait_methods(code, name);
        assert!(!declared.is_empty(), "{name}: no method read");
        let Some(at) = own.find(&format!("impl {name} for ClusterDbms")) else {
            if CLUSTER_FORWARDED.contains(name) {
                problems.extend(forwarded_problems(own, name, code));
            } else if !CLUSTER_BY_KIND.iter().any(|(t, _)| t == name) {
                problems.push(format!(
                    "ClusterDbms does not implement {name}, and CLUSTER_BY_KIND does not say how \
                     a cluster reaches it"
                ));
            }
            continue;
        };
        let implemented = methods(block(own, at));
        for (m, provided, _) in &declared {
            if !implemented.iter().any(|(i, _, _)| i == m) {
                problems.push(format!(
                    "ClusterDbms neither forwards nor overrides {name}::{m}{}: forward it to \
                     self.entry() (or override it and say why in CLUSTER_OVERRIDES)",
                    if *provided {
                        " (its default answers for every cluster)"
                    } else {
                        ""
                    }
                ));
            }
        }
        for (m, _, body) in &implemented {
            let overridden = CLUSTER_OVERRIDES
                .iter()
                .any(|(t, o, _)| t == name && o == m);
            let forwards = body.contains(&format!("self.entry().{m}("));
            if !overridden && !forwards {
                problems.push(format!(
                    "ClusterDbms's {name}::{m} is neither a forward to self.entry() nor named in \
                     CLUSTER_OVERRIDES"
                ));
            }
            if overridden && forwards {
                problems.push(format!(
                    "CLUSTER_OVERRIDES names {name}::{m}, which forwards to self.entry()"
                ));
            }
        }
    }
    for (t, m, _) in CLUSTER_OVERRIDES {
        let declared = traits
            .iter()
            .find(|(n, _)| n == t)
            .is_some_and(|(n, code)| trait_methods(code, n).iter().any(|d| d.0 == *m));
        if !declared {
            problems.push(format!(
                "CLUSTER_OVERRIDES names {t}::{m}, which no trait declares"
            ));
        }
    }
    for t in CLUSTER_FORWARDED {
        if !traits.iter().any(|(n, _)| n == t) {
            problems.push(format!(
                "CLUSTER_FORWARDED names {t}, which this test does not read"
            ));
        }
    }
    for (t, _) in CLUSTER_BY_KIND {
        if own.contains(&format!("impl {t} for ClusterDbms")) {
            problems.push(format!(
                "CLUSTER_BY_KIND names {t}, which ClusterDbms implements"
            ));
        }
    }
    problems
}

/// What is wrong with how `ClusterDbms` (code `own`) gets trait `name` (declared in `code`)
/// through `AnswersAs`: the trait must be declared inside `forwarded_trait!` (which implements
/// it for every `AnswersAs` type, forwarding every method), and `ClusterDbms` must answer as
/// its entry node.
fn forwarded_problems(own: &str, name: &str, code: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let declared = code.find(&format!("pub trait {name}"));
    let wrapped = code.find("forwarded_trait! {");
    if !matches!((wrapped, declared), (Some(w), Some(d)) if w < d) {
        problems.push(format!(
            "{name} is in CLUSTER_FORWARDED but not declared inside forwarded_trait! (so \
             ClusterDbms would not get its methods forwarded)"
        ));
    }
    match own.find("impl AnswersAs for ClusterDbms") {
        Some(at) if block(own, at).contains("self.entry()") => {}
        _ => problems.push(format!(
            "ClusterDbms gets {name} through AnswersAs but does not answer as self.entry()"
        )),
    }
    problems
}

/// Every method of the traits a cluster is made of is forwarded to the entry node's driver or
/// overridden on purpose (named in `CLUSTER_OVERRIDES`): a method added to a trait later fails
/// here until it is one or the other (its default would otherwise answer for every cluster,
/// whatever its nodes' driver says: so were `client_params` and `disk_note` missed), and so
/// does an entry of the lists that no longer applies.
#[test]
fn a_cluster_forwards_every_method_it_does_not_override() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/dbms");
    let read = |f: &str| common::code_only(&std::fs::read_to_string(dir.join(f)).unwrap());
    let traits: Vec<(&str, String)> = TRAITS.iter().map(|(n, f)| (*n, read(f))).collect();
    let p = forwarding_problems(&read("cluster.rs"), &traits, &read("mod.rs"));
    assert!(p.is_empty(), "\n{}\n", p.join("\n"));
}

/// The forwarding checker reads provided and required methods, braces in strings, nested
/// blocks, and names what is missing.
#[test]
fn the_forwarding_checker_names_what_a_cluster_misses() {
    let traits = vec![(
        "Driver",
        common::code_only(
            r#"pub trait Driver: Send {
                /// fn doc() { not one }
                fn req(&self) -> u8;
                fn prov(&self) -> String { format!("{}}}{{", 1) }
                fn nested(&self) -> u8 { if true { 1 } else { '}' as u8 } }
                fn connect(&self) -> u8 { 0 }
            }"#,
        ),
    )];
    let dbms_mod = "pub trait Dbms: Driver {}";
    let own = |body: &str| common::code_only(&format!("impl Driver for ClusterDbms {{ {body} }}"));
    let names: Vec<(String, bool)> = trait_methods(&traits[0].1, "Driver")
        .into_iter()
        .map(|(n, p, _)| (n, p))
        .collect();
    assert_eq!(
        names,
        [
            ("req".to_string(), false),
            ("prov".to_string(), true),
            ("nested".to_string(), true),
            ("connect".to_string(), true)
        ]
    );
    let p = forwarding_problems(
        &own(
            "fn req(&self) -> u8 { self.entry().req() } fn connect(&self) -> u8 { 1 } \
              fn nested(&self) -> u8 { 2 }",
        ),
        &traits,
        dbms_mod,
    );
    let has = |piece: &str| p.iter().any(|l| l.contains(piece));
    assert!(
        has("neither forwards nor overrides Driver::prov (its default"),
        "{p:#?}"
    );
    assert!(has("Driver::nested is neither a forward"), "{p:#?}");
    // The overrides of the real list that the toy trait does not declare.
    assert!(
        has("CLUSTER_OVERRIDES names Driver::server_pids, which no trait"),
        "{p:#?}"
    );
    assert!(!has("Driver::req") && !has("Driver::connect "), "{p:#?}");
    let p = forwarding_problems(&own(""), &traits, "pub trait Dbms: Driver + Admin {}");
    assert!(
        p.iter().any(|l| l.contains("Dbms is made of Admin")),
        "{p:#?}"
    );
    // A trait the cluster gets through AnswersAs must be declared inside forwarded_trait!,
    // and the cluster must answer as its entry node.
    let plain = "pub trait Admin: Driver { fn a(&self) -> u8 { 0 } }";
    let p = forwarded_problems("", "Admin", plain);
    assert!(
        p.iter()
            .any(|l| l.contains("not declared inside forwarded_trait!")),
        "{p:#?}"
    );
    assert!(
        p.iter()
            .any(|l| l.contains("does not answer as self.entry()")),
        "{p:#?}"
    );
    let wrapped = format!("forwarded_trait! {{ {plain} }}");
    let answering =
        "impl AnswersAs for ClusterDbms { fn answers_as(&self) -> &dyn Dbms { self.entry() } }";
    assert!(forwarded_problems(answering, "Admin", &wrapped).is_empty());
}
