//! Key patterns on `ixbench run` (`--pk-pattern`, `--index-pattern`): the run stores each
//! step's geek code, and `ixbench pattern infer --table` on the table's rows, read in
//! insertion order, agrees with it; bad patterns are one-line errors before anything runs.

use crate::common;

use common::*;
use ixbench::server::ServerKind;

/// `ixbench pattern infer --target T --table pi1 --column C [--order-by O]`: the code.
fn infer(target: &str, column: &str, order_by: Option<&str>) -> String {
    let mut a = vec![
        "pattern", "infer", "--target", target, "--table", "pi1", "--column", column,
    ];
    if let Some(o) = order_by {
        a.extend(["--order-by", o]);
    }
    let o = ixbench(&a);
    let (out, err) = text(&o);
    assert!(o.status.success(), "infer {column}: {err}");
    out.lines().next().unwrap().to_string()
}

/// The code of index `name` in a stored geek code line.
fn code_of<'a>(line: &'a str, name: &str) -> &'a str {
    let start = line
        .find(&format!("{name}=("))
        .unwrap_or_else(|| panic!("no {name} in {line}"));
    let rest = &line[start + name.len() + 1..];
    &rest[..=rest.find(')').unwrap()]
}

fn step<'a>(run: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

/// SQLite: index patterns with the oldest rows deleted in l.i1; the stored codes of l.i0 (PK
/// only: the indexes do not exist yet) and l.i1, and inference on the table's rows in
/// insertion (PK) order.
#[test]
fn sqlite_index_patterns_stored_and_inferred() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let target = format!("sqlite:{}", db.display());
    let out = dir.path().join("res");
    let o = ixbench(&[
        "run",
        "--target",
        &target,
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "6000",
        "--rows2",
        "3000",
        "--steps",
        "l.i0,l.x,l.i1",
        "--pk-pattern",
        "asc",
        "--index-pattern",
        "pdc=streams:4",
        "--index-pattern",
        "marketsegment=desc",
        "--index-pattern",
        "registersegment=streams:2asc+1desc",
    ]);
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let run = run_json(&out);
    assert_all_ok(&run);
    assert_eq!(run["config"]["key_patterns"]["pdc"], "streams:4");
    assert_eq!(
        step(&run, "l.i0")["geek_code"],
        "pk=(nAsc:1, nRHS:1)",
        "l.i0 inserts before the secondary indexes exist"
    );
    // l.i1 deleted the oldest rows, the patterns' fence keys with them: pdc's highest middle
    // stream now grows at the right end; registersegment's middle streams still have each
    // other above and below.
    let l1 = step(&run, "l.i1")["geek_code"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        l1,
        "pk=(nAsc:1, nRHS:1) marketsegment=(nDesc:1, nLHS:1) \
         registersegment=(nAsc:2, nDesc:1) pdc=(nAsc:4, nRHS:1)"
    );
    assert!(stdout.contains(&format!("geek code: {l1}")), "{stdout}");
    for (col, index) in [
        ("transactionid", "pk"),
        ("productid", "marketsegment"),
        ("cashregisterid", "registersegment"),
        ("price", "pdc"),
    ] {
        let got = infer(&target, col, Some("transactionid"));
        assert_eq!(
            got,
            format!("{col}={}", code_of(&l1, index)),
            "{col} read in insertion order"
        );
    }
    // read-only: the default order (rowid) is the PK here; the file is unchanged
    let before = std::fs::read(&db).unwrap();
    assert!(infer(&target, "price", None).starts_with("price=(nAsc:4"));
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

/// PostgreSQL: a PK pattern that is not ascending (ixbench gives the PK) in a load that only
/// inserts; read back in heap (ctid) order, the default, which is insertion order here.
#[test]
fn postgres_pk_pattern_inferred_from_the_table() {
    let Some(s) = start_server(
        "postgres_pk_pattern_inferred_from_the_table",
        ServerKind::Postgres,
        false,
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    let url = s.url();
    let o = ixbench(&[
        "run",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "5000",
        "--steps",
        "l.i0",
        "--secondary-indexes",
        "1",
        "--pk-pattern",
        "lr+streams:2",
        "--index-pattern",
        "all=inf",
    ]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let run = run_json(&out);
    assert_all_ok(&run);
    let code = step(&run, "l.i0")["geek_code"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(code, "pk=(nAsc:3, nDesc:1, nLHS:1, nRHS:1)");
    assert_eq!(
        infer(&url, "transactionid", None),
        format!("transactionid={}", code_of(&code, "pk"))
    );
    // ordered by the PK, the PK is one ascending run: the order matters
    assert_eq!(
        infer(&url, "transactionid", Some("transactionid")),
        "transactionid=(nAsc:1, nRHS:1)"
    );
    // productid follows `inf`: random
    assert_eq!(infer(&url, "productid", None), "productid=(inf)");
}

/// MariaDB (InnoDB): read back with no --order-by, in the order InnoDB stores rows, the
/// primary key's (ixbench reads its columns from the catalog): the PK is then one ascending run
/// whatever order it was inserted in, and the other columns keep their own pattern.
#[test]
fn mariadb_reads_in_primary_key_order() {
    let Some(s) = start_server(
        "mariadb_reads_in_primary_key_order",
        ServerKind::Mariadb,
        false,
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    let url = s.url();
    let o = ixbench(&[
        "run",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "3000",
        "--steps",
        "l.i0",
        "--secondary-indexes",
        "1",
        "--pk-pattern",
        "lr+streams:2",
        "--index-pattern",
        "all=inf",
    ]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let run = run_json(&out);
    assert_all_ok(&run);
    let code = step(&run, "l.i0")["geek_code"].as_str().unwrap();
    assert_ne!(code_of(code, "pk"), "(nAsc:1, nRHS:1)", "{code}");
    assert_eq!(
        infer(&url, "transactionid", None),
        "transactionid=(nAsc:1, nRHS:1)"
    );
    assert_eq!(infer(&url, "productid", None), "productid=(inf)");
}

/// Bad patterns: one line, non-zero exit, nothing created.
#[test]
fn bad_patterns_fail_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let out = dir.path().join("res");
    let target = format!("sqlite:{}", db.display());
    let base = [
        "run",
        "--target",
        &target,
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "50",
        "--rows2",
        "10",
    ];
    for (extra, want) in [
        (
            vec!["--index-pattern", "pdc=streams:100", "--steps", "l.i0"],
            "more than the 50 keys",
        ),
        (
            vec!["--index-pattern", "nosuch=asc"],
            "unknown index \"nosuch\"",
        ),
        (vec!["--index-pattern", "pdc=upward"], "unknown part"),
        (vec!["--pk-pattern", "inf"], "needs an ascending PK"),
        (
            vec!["--index-pattern", "pdc=asc", "--steps", "l.x"],
            "the first step must be l.i0",
        ),
    ] {
        let mut a: Vec<&str> = base.to_vec();
        a.extend(extra.iter().copied());
        let e = assert_one_line_error(&ixbench(&a));
        assert!(e.contains(want), "{extra:?}: {e}");
        assert!(!db.exists() && !out.exists(), "{extra:?} created something");
    }
    for (a, want) in [
        (
            vec![
                "pattern", "infer", "--target", &target, "--table", "pi1", "--column", "price",
            ],
            "no SQLite database",
        ),
        (
            vec![
                "pattern", "infer", "--target", "postgres", "--table", "t", "--column", "c",
            ],
            "give its URL",
        ),
        (
            vec![
                "pattern", "infer", "--target", &target, "--table", "t'drop", "--column", "c",
            ],
            "as the catalog spells it",
        ),
        (
            vec!["pattern", "infer", "--column", "price"],
            "a name needs --table",
        ),
    ] {
        let o = if a.len() == 4 {
            // the CSV column from stdin: give it a file so it does not wait on a terminal
            let f = dir.path().join("k.csv");
            std::fs::write(&f, "1\n").unwrap();
            let mut a = a.clone();
            a.push(f.to_str().unwrap());
            ixbench(&a)
        } else {
            ixbench(&a)
        };
        let e = assert_one_line_error(&o);
        assert!(e.contains(want), "{a:?}: {e}");
    }
}

/// `ixbench pattern cost` at tiny sizes on PostgreSQL: it runs, and every figure in its
/// results is the one its runs measured (no invented numbers).
#[test]
fn pattern_cost_figures_come_from_the_runs() {
    if let Err(e) = ixbench::server::check_installed(ServerKind::Postgres) {
        skip::<()>("pattern_cost_figures_come_from_the_runs", &format!("{e:#}"));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cost");
    let o = ixbench(&[
        "pattern",
        "cost",
        "--engines",
        "postgres",
        "--patterns",
        "asc,streams:3",
        "--rows",
        "2000",
        "--rows2",
        "1000",
        "--cache",
        "16MB",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        stdout.contains("| postgres | streams:3 | pdc=(nAsc:3) | 1000 |"),
        "{stdout}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("pattern-cost.json")).unwrap())
            .unwrap();
    let points = j["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (p, pat) in points.iter().zip(["asc", "streams:3"]) {
        assert_eq!(p["pattern"], pat);
        let run = run_json(std::path::Path::new(p["run_dir"].as_str().unwrap()));
        assert_eq!(run["config"]["key_patterns"]["pdc"], pat);
        let set = run["command_line"].as_array().unwrap();
        assert!(set.iter().any(|a| a == "shared_buffers=16MB"), "{set:?}");
        let l1 = step(&run, "l.i1");
        let rows = l1["totals"]["rows"][0].as_u64().unwrap();
        assert_eq!(rows, 1000);
        assert_eq!(p["rows"], rows);
        assert_eq!(p["inserts_per_sec"], l1["summary"]["ips"]);
        let srv = &l1["server"];
        let cpu = srv["cpu_us"]
            .as_u64()
            .expect("the server's CPU was measured");
        let per = p["server_cpu_us_per_row"].as_f64().unwrap();
        assert!((per - cpu as f64 / rows as f64).abs() < 1e-9);
        assert!(per > 0.0);
        let blks = srv["dbms_counters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c[0] == "blks_read")
            .map(|c| c[1].as_u64().unwrap())
            .expect("blks_read counted");
        let reads = p["dbms_reads_per_row"].as_f64().unwrap();
        assert!((reads - blks as f64 / rows as f64).abs() < 1e-9);
        assert_eq!(p["dbms_reads_counter"], "blks_read");
        assert!(p["geek_code"].as_str().unwrap().contains(if pat == "asc" {
            "pdc=(nAsc:1, nRHS:1)"
        } else {
            "pdc=(nAsc:3)"
        }));
    }
    // bad input: one line, before any server starts
    let e = assert_one_line_error(&ixbench(&[
        "pattern",
        "cost",
        "--engines",
        "oracle",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(e.contains("unknown engine"), "{e}");
    let e = assert_one_line_error(&ixbench(&[
        "pattern",
        "cost",
        "--patterns",
        "sideways",
        "--out",
        dir.path().join("x").to_str().unwrap(),
    ]));
    assert!(e.contains("--patterns"), "{e}");
}
