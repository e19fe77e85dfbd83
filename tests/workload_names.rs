//! Adding a workload is one file (or folder) in `src/workload/` plus its tests: nothing outside
//! `src/workload/` names a workload. Commands find a workload in the registry by name and run
//! it with what its entry carries (`workload::runner::Runner`), so this test reads every `.rs`
//! file of `src/` outside `src/workload/` and fails, naming the file and line, on
//! - a path into a workload's module (`workload::oltp`, `workload::timeseries_run`, ...): any
//!   module of `src/workload/` but the shared ones ([`SHARED`]),
//! - a registered workload's name (or alias) compared as a string literal (`== "timeseries"`,
//!   a `"oltp_insert" =>` match arm),
//! - `Family`, the enum of workload families `ixbench run` used to dispatch on.
//!
//! Comments and string literals are not read for paths. [`ALLOWED`] lists what must stay, each
//! line with its reason; an entry that no longer matches anything fails too, so the list only
//! shrinks.

use std::path::Path;

use crate::common::rs_files;

/// Modules of `src/workload/` every workload shares: the registry, the runner interface, the
/// table ownership, what the index lab asks of a workload.
const SHARED: &[&str] = &["mod", "registry", "runner", "tables", "lab"];

/// What must stay (file under `src/`, what it names, why).
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "step/plan_run.rs",
        "workload::iibench",
        "the host of `Runner::Steps` (as `step::txn_phase` is of `Runner::Own`): it runs the insert benchmark's step plan in a session (each step on `step::step_host`) and re-exports its options (`PlanArgs`) for `cmd/run.rs`; moving it under src/workload/ needs the session, a several-process run's part (`options::scale`), the shared options' checks and the barrier's construction through `workload::runner::Host`, and its options' heading kept before the transaction workloads' in `run --help` (issue 32)",
    ),
];

/// One finding: `src/FILE:LINE: what it names: the line`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Finding {
    file: String,
    line: usize,
    names: String,
    text: String,
}

/// The line without its comment and string literals (a line's own; a string that spans lines
/// is read as code on its other lines, where no workload path is written).
fn code_of_line(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => in_str = false,
                _ => {}
            }
        } else if c == '"' {
            in_str = true;
            out.push_str("\"\"");
        } else if c == '/' && chars.peek() == Some(&'/') {
            break;
        } else {
            out.push(c);
        }
    }
    out
}

/// The workload modules of `src/workload/` (files and folders) that no other part may name.
fn workload_modules(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root.join("workload"))
        .expect("src/workload readable")
        .map(|e| e.expect("dir entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            match name.strip_suffix(".rs") {
                Some(stem) => Some(stem.to_string()),
                None if p.is_dir() => Some(name),
                None => None,
            }
        })
        .filter(|m| !SHARED.contains(&m.as_str()))
        .collect();
    v.sort();
    v
}

/// True when `code` has the path `workload::MODULE` (as a whole segment).
fn names_module(code: &str, module: &str) -> bool {
    let pat = format!("workload::{module}");
    code.match_indices(&pat).any(|(i, _)| {
        let after = code[i + pat.len()..].chars().next();
        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// True when the literal `"name"` is compared on `line` (operand of `==`/`!=`, a match arm).
fn compares_name(line: &str, name: &str) -> bool {
    let lit = format!("\"{name}\"");
    line.match_indices(&lit).any(|(i, _)| {
        let before = line[..i].trim_end();
        let after = line[i + lit.len()..].trim_start();
        before.ends_with("==")
            || before.ends_with("!=")
            || after.starts_with("==")
            || after.starts_with("!=")
            || after.starts_with("=>")
            || after.starts_with('|')
            || before.ends_with('|')
    })
}

fn findings(root: &Path, names: &[String]) -> Vec<Finding> {
    let modules = workload_modules(root);
    let mut files = Vec::new();
    rs_files(root, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(root)
            .expect("below src")
            .to_string_lossy()
            .replace('\\', "/");
        if rel.starts_with("workload/") {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("source readable");
        for (no, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            let code = code_of_line(line);
            let mut named: Vec<String> = modules
                .iter()
                .filter(|m| names_module(&code, m))
                .map(|m| format!("workload::{m}"))
                .collect();
            if code
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == "Family")
            {
                named.push("Family".into());
            }
            named.extend(
                names
                    .iter()
                    .filter(|n| compares_name(line, n))
                    .map(|n| format!("\"{n}\"")),
            );
            for n in named {
                out.push(Finding {
                    file: rel.clone(),
                    line: no + 1,
                    names: n,
                    text: line.trim().to_string(),
                });
            }
        }
    }
    out
}

fn problems(root: &Path, names: &[String], allowed: &[(&str, &str, &str)]) -> Vec<String> {
    let found = findings(root, names);
    let mut p: Vec<String> = found
        .iter()
        .filter(|f| {
            !allowed
                .iter()
                .any(|(file, n, _)| *file == f.file && *n == f.names)
        })
        .map(|f| {
            format!(
                "src/{}:{}: names the workload module or name {} outside src/workload/ (find \
                 it in the registry and run what its entry carries): {}",
                f.file, f.line, f.names, f.text
            )
        })
        .collect();
    for (file, n, why) in allowed {
        if !found.iter().any(|f| f.file == *file && f.names == *n) {
            p.push(format!(
                "ALLOWED entry no longer matches (remove it): {file}: {n} ({why})"
            ));
        }
    }
    p
}

/// Every registered workload's name and aliases.
fn registered() -> Vec<String> {
    ixbench::workload::registry::all()
        .iter()
        .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()))
        .map(String::from)
        .collect()
}

#[test]
fn nothing_outside_src_workload_names_a_workload() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let p = problems(&root, &registered(), ALLOWED);
    assert!(p.is_empty(), "\n{}\n", p.join("\n"));
}

#[test]
fn the_checker_names_each_mention_and_nothing_else() {
    let t = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| {
        let p = t.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w("workload/mod.rs", "pub mod registry;\npub mod newload;\n");
    w("workload/registry.rs", "");
    w("workload/iibench.rs", "");
    w(
        "workload/newload.rs",
        "use crate::workload::newload::X; // its own file may name itself\n",
    );
    w(
        "cmd/run.rs",
        r#"//! crate::workload::newload in a doc comment is no mention
use crate::workload::newload::Opts;
use crate::workload::newload_extra::Y;
use crate::workload::iibench::TableSql;
use crate::workload::registry::{self, Runner};
fn f(name: &str, e: registry::Family) {
    let msg = "crate::workload::newload in a message is no mention";
    if name == "newload" {}
    let help = "--workload newload";
    match name {
        "newload" => {}
        _ => {}
    }
}
"#,
    );
    w("cmd/ok.rs", "use crate::workload::newload::Z;\n");
    let names = vec!["newload".to_string()];
    let got: Vec<(String, usize, String)> = findings(t.path(), &names)
        .into_iter()
        .map(|f| (f.file, f.line, f.names))
        .collect();
    let want = |f: &str, l: usize, n: &str| (f.to_string(), l, n.to_string());
    assert_eq!(
        got,
        [
            want("cmd/ok.rs", 1, "workload::newload"),
            want("cmd/run.rs", 2, "workload::newload"),
            // the insert benchmark is a workload like the others: no module is exempt
            want("cmd/run.rs", 4, "workload::iibench"),
            want("cmd/run.rs", 6, "Family"),
            want("cmd/run.rs", 8, "\"newload\""),
            want("cmd/run.rs", 11, "\"newload\""),
        ]
    );
    // An allowed mention passes; a stale allowance fails.
    let allowed = [
        ("cmd/ok.rs", "workload::newload", "its old command"),
        ("cmd/gone.rs", "workload::newload", "stale"),
    ];
    let p = problems(t.path(), &names, &allowed);
    assert_eq!(p.len(), 6, "{p:#?}");
    assert!(p.iter().any(|l| l.contains("src/cmd/run.rs:2:")), "{p:#?}");
    assert!(!p.iter().any(|l| l.contains("src/cmd/ok.rs")), "{p:#?}");
    assert!(
        p.iter()
            .any(|l| l.contains("no longer matches") && l.contains("cmd/gone.rs")),
        "{p:#?}"
    );
}
