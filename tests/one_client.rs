//! One client per protocol: every PostgreSQL and MySQL/MariaDB connection (workload, admin,
//! cancel, DDL session, throwaway servers, clusters, these tests) goes through ixbench's own
//! clients (`src/dbms/pgwire.rs`, `src/dbms/mywire.rs`); the crates under them are codecs
//! (`postgres-protocol`, `mysql_common`). This test fails, naming the file and line, when a path
//! into the `postgres` or `mysql` client crates appears in `src/` or `tests/`, and when either
//! crate is a dependency again (even the connection settings are ixbench's own:
//! `pgwire::Config`, `mywire::Config`).
//!
//! A bare `postgres::`/`mysql::` is a path into the crate unless the file declares a module of
//! that name (`mod postgres;`: then it is the module; also in a child file that imports
//! `super::*`) or the path follows `::` (as in `dbms::postgres::`). Comments are not read.

use std::path::Path;

/// The client crates' names.
const CRATES: &[&str] = &["postgres", "mysql"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Whether `text` declares a module `name` (so a bare `name::` there, and in a child that
/// imports `super::*`, is that module).
fn declares(text: &str, name: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim();
        l == format!("mod {name};") || l == format!("pub mod {name};")
    })
}

/// Byte offsets of `name::` paths into the crate `name` in `line` (see the module doc).
fn crate_paths(line: &str, name: &str) -> Vec<usize> {
    let pat = format!("{name}::");
    let b = line.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    line.match_indices(&pat)
        .map(|(i, _)| i)
        .filter(|&i| {
            if i > 0 && ident(b[i - 1]) {
                return false;
            }
            // `a::postgres::` is a module path; `::postgres::` at the start of a path is the
            // crate.
            if i >= 2 && &line[i - 2..i] == "::" {
                return i == 2 || !ident(b[i - 3]);
            }
            true
        })
        .collect()
}

#[test]
fn no_connection_outside_the_own_clients() {
    let mut files = Vec::new();
    crate::common::rs_files(&root().join("src"), &mut files);
    crate::common::rs_files(&root().join("tests"), &mut files);
    files.sort();
    let mut bad = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == "tests/one_client.rs" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let parent = std::fs::read_to_string(f.with_file_name("mod.rs")).unwrap_or_default();
        // At the top level (a child module's file), not in an inline `mod tests`.
        let glob = text.lines().any(|l| l == "use super::*;");
        for name in CRATES {
            if declares(&text, name) || (glob && declares(&parent, name)) {
                continue;
            }
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                if !crate_paths(code, name).is_empty() {
                    bad.push(format!("{rel}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "connections go through ixbench's own clients (src/dbms/session.rs for ixbench's own \
         connections, tests/common/sql.rs for the tests'), not the {CRATES:?} crates:\n{}",
        bad.join("\n")
    );
}

/// The lines of `toml` that make one of [`CRATES`] a dependency (`name = ...`, also with a
/// `package = "name"` rename, or a `[dependencies.name]` table).
fn client_crate_deps(toml: &str) -> Vec<&str> {
    toml.lines()
        .filter(|l| {
            let l = l.trim_start();
            CRATES.iter().any(|c| {
                let key = l.strip_prefix(c).map(str::trim_start);
                matches!(key, Some(k) if k.starts_with('='))
                    || l.replace(' ', "").contains(&format!("package=\"{c}\""))
                    || l.replace(' ', "").ends_with(&format!(".{c}]"))
            })
        })
        .collect()
}

#[test]
fn the_client_crates_are_not_dependencies() {
    let toml = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let deps = client_crate_deps(&toml);
    assert!(
        deps.is_empty(),
        "Cargo.toml makes a client crate a dependency again (use ixbench's own clients, \
         src/dbms/pgwire.rs and mywire.rs): {deps:?}"
    );
    // What Cargo resolved, too (a dependency added under another table or another name).
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).unwrap();
    let locked: Vec<&str> = lock
        .lines()
        .filter(|l| CRATES.iter().any(|c| *l == format!("name = \"{c}\"")))
        .collect();
    assert!(locked.is_empty(), "Cargo.lock: {locked:?}");
}

#[test]
fn client_crate_deps_are_found() {
    assert_eq!(
        client_crate_deps("postgres = \"0.19\""),
        ["postgres = \"0.19\""]
    );
    assert_eq!(client_crate_deps("  mysql={ version = \"25\" }").len(), 1);
    assert_eq!(
        client_crate_deps("pg = { package = \"postgres\", version = \"0.19\" }").len(),
        1
    );
    assert_eq!(client_crate_deps("[dependencies.postgres]").len(), 1);
    assert!(client_crate_deps(
        "postgres-protocol = \"0.6\"\nmysql_common = \"0.37\"\n# postgres = \"0.19\""
    )
    .is_empty());
}

#[test]
fn crate_paths_tell_modules_from_crates() {
    assert_eq!(crate_paths("use postgres::Config;", "postgres"), [4]);
    assert_eq!(
        crate_paths("x.downcast_ref::<::postgres::Error>()", "postgres"),
        [19]
    );
    assert!(crate_paths("use super::postgres::PgError;", "postgres").is_empty());
    assert!(crate_paths("crate::dbms::mysql::Mysql::open", "mysql").is_empty());
    assert!(crate_paths("tokio_postgres::Config", "postgres").is_empty());
    assert_eq!(crate_paths("let c: mysql::Conn = x;", "mysql"), [7]);
}
