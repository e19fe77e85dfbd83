//! One client per protocol: every PostgreSQL and MySQL/MariaDB connection (workload, admin,
//! cancel, DDL session, throwaway servers, clusters, these tests) goes through ixbench's own
//! clients (`src/dbms/pgwire.rs`, `src/dbms/mywire.rs`); the crates under them are codecs
//! (`postgres-protocol`, `mysql_common`). This test fails, naming the file and line, when a path
//! into the `postgres` or `mysql` client crates appears in `src/` or `tests/`, except for the
//! uses [`ALLOWED`] lists with their reason (an entry that no longer matches fails too, so the
//! list only shrinks), and when the `mysql` crate is a dependency again.
//!
//! A bare `postgres::`/`mysql::` is a path into the crate unless the file declares a module of
//! that name (`mod postgres;`: then it is the module; also in a child file that imports
//! `super::*`) or the path follows `::` (as in `dbms::postgres::`). Comments are not read.

use std::path::Path;

/// The client crates' names.
const CRATES: &[&str] = &["postgres", "mysql"];

/// Uses that stay (file, a piece of the line, why).
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "src/dbms/postgres.rs",
        "use postgres::config::Host;",
        "postgres::Config and its hosts, only as the container of the settings \
         src/dbms/conninfo.rs resolves (libpq's rules), which pgwire reads",
    ),
    (
        "src/dbms/postgres.rs",
        "use postgres::Config;",
        "the URL parser (see above)",
    ),
    (
        "src/dbms/postgres.rs",
        "=> postgres::config::ChannelBinding::",
        "the resolved settings (src/dbms/conninfo.rs) are copied into postgres::Config, the \
         container pgwire reads (see above)",
    ),
    (
        "src/dbms/pgwire.rs",
        "use postgres::config::{ChannelBinding as ChannelBindingMode, Host};",
        "the client reads the parsed URL (see above)",
    ),
    (
        "src/dbms/pgwire.rs",
        "use postgres::Config;",
        "the client reads the parsed URL (see above)",
    ),
];

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
    let mut used = vec![false; ALLOWED.len()];
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
                if crate_paths(code, name).is_empty() {
                    continue;
                }
                match ALLOWED
                    .iter()
                    .position(|(file, piece, _)| *file == rel && line.contains(piece))
                {
                    Some(k) => used[k] = true,
                    None => bad.push(format!("{rel}:{}: {}", n + 1, line.trim())),
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
    let stale: Vec<_> = ALLOWED
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|((f, p, _), _)| format!("{f}: {p}"))
        .collect();
    assert!(
        stale.is_empty(),
        "ALLOWED entries that match nothing any more (remove them): {stale:?}"
    );
}

#[test]
fn the_mysql_client_crate_is_not_a_dependency() {
    let toml = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let deps: Vec<&str> = toml
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.starts_with("mysql =") || l.starts_with("mysql=")
        })
        .collect();
    assert!(deps.is_empty(), "Cargo.toml: {deps:?}");
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
