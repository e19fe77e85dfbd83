//! No code outside `src/dbms/` and `src/server/` branches on which DBMS or cluster it talks to:
//! what differs between DBMSs is the dialect's to say (`src/dbms/dialect/`, one file per DBMS),
//! what differs between clusters the cluster kind's (`src/server/cluster.rs`). This test reads
//! every `.rs` file of `src/` outside those two folders and fails, naming the file and line, on
//! a variant of a server or cluster kind named in code (`ClusterKind::Galera`,
//! `ServerKind::Postgres`, `StartKind::Spider`: a match arm or a comparison, asked of the kind
//! instead), and on a DBMS's or cluster's name (`postgres`, `mysql`, `mariadb`, `sqlite`, `null`,
//! an engine: `innodb`, `rocksdb`, `myrocks`; a cluster: `galera`, `spider`, `pg-shards`) in a
//! string literal that is compared:
//! - an operand of `==` / `!=` (also as `Some("...")`),
//! - a `match` pattern (`"mysql" =>`, `"a" | "b" =>`, `("mysql", x) =>`, `matches!(k, "a" | ..)`),
//! - the argument of `eq`, `eq_ignore_ascii_case`, `contains`, `starts_with`, `ends_with`.
//!
//! Comments, other string literals (messages, help texts, a `--target postgres` in an error) and
//! test code (`#[cfg(test)]` items, `tests.rs` files) are not read. [`ALLOWED`] lists what must
//! stay (and the debt not paid yet), each line with its reason; an entry that no longer matches
//! anything fails too, so the list only shrinks.

use std::path::Path;

/// Names of DBMSs, their flavours and engines (compared case-insensitively).
const NAMES: &[&str] = &[
    "postgres",
    "postgresql",
    "mysql",
    "mariadb",
    "sqlite",
    "null",
    "innodb",
    "rocksdb",
    "myrocks",
    "galera",
    "spider",
    "pg-shards",
];

/// The enums whose variants name a server or cluster kind.
const KIND_ENUMS: &[&str] = &["ServerKind", "ClusterKind", "StartKind"];

/// Folders whose code may branch on the DBMS: the drivers and dialects, and the throwaway
/// servers.
const EXEMPT: &[&str] = &["dbms/", "server/"];

/// Comparisons that must stay (file under `src/`, a piece of the line, why).
const ALLOWED: &[(&str, &str, &str)] = &[];

/// One finding: `src/FILE:LINE: the line`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Finding {
    file: String,
    line: usize,
    text: String,
}

use crate::common::rs_files;

/// A string literal of the text: its content and byte range (quotes included).
struct Literal {
    content: String,
    start: usize,
    end: usize,
}

/// The text with comments blanked (newlines kept, so lines keep their numbers), and its string
/// literals. `code` keeps the literals; `bare` blanks their content too (for brace matching).
struct Lexed {
    code: Vec<u8>,
    bare: Vec<u8>,
    literals: Vec<Literal>,
}

fn lex(text: &str) -> Lexed {
    let b = text.as_bytes();
    let mut code = b.to_vec();
    let mut bare = b.to_vec();
    let mut literals = Vec::new();
    let blank = |v: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut v[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let s = i;
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            blank(&mut code, s, i);
            blank(&mut bare, s, i);
        } else if b[i..].starts_with(b"/*") {
            let s = i;
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            blank(&mut code, s, i);
            blank(&mut bare, s, i);
        } else if (b[i] == b'r' || (b[i] == b'b' && b.get(i + 1) == Some(&b'r')))
            && (i == 0 || !ident(b[i - 1]))
            && {
                let mut j = i + if b[i] == b'b' { 2 } else { 1 };
                while j < b.len() && b[j] == b'#' {
                    j += 1;
                }
                b.get(j) == Some(&b'"')
            }
        {
            // raw string r"..." / r#"..."# (and br"...")
            let s = i;
            let mut j = i + if b[i] == b'b' { 2 } else { 1 };
            let mut hashes = 0;
            while b[j] == b'#' {
                hashes += 1;
                j += 1;
            }
            let open = j + 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat(b'#').take(hashes))
                .collect();
            j = open;
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            let end = (j + close.len()).min(b.len());
            literals.push(Literal {
                content: text[open..j.min(b.len())].to_string(),
                start: s,
                end,
            });
            blank(&mut bare, open, j.min(b.len()));
            i = end;
        } else if b[i] == b'"' {
            let s = i;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            let end = (i + 1).min(b.len());
            literals.push(Literal {
                content: text[s + 1..i.min(b.len())].to_string(),
                start: s,
                end,
            });
            blank(&mut bare, s + 1, i.min(b.len()));
            i = end;
        } else if b[i] == b'\'' {
            // a char literal ('x', '\n', '"') or a lifetime ('a)
            if i + 2 < b.len() && b[i + 1] == b'\\' {
                let mut j = i + 2;
                while j < b.len() && b[j] != b'\'' {
                    j += 1;
                }
                blank(&mut bare, i, j + 1);
                i = j + 1;
            } else if i + 2 < b.len() && b[i + 2] == b'\'' {
                blank(&mut bare, i, i + 3);
                i += 3;
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    Lexed {
        code,
        bare,
        literals,
    }
}

/// Byte ranges of test code: each `#[cfg(test)]` item, up to its closing brace.
fn test_ranges(bare: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let needle = b"#[cfg(test)]";
    let mut i = 0;
    while let Some(p) = bare[i..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + i)
    {
        let mut j = p + needle.len();
        while j < bare.len() && bare[j] != b'{' && bare[j] != b';' {
            j += 1;
        }
        if j >= bare.len() || bare[j] == b';' {
            // `#[cfg(test)] mod tests;`: a file of its own
            i = j.min(bare.len());
            continue;
        }
        let mut depth = 0;
        while j < bare.len() {
            match bare[j] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        out.push((p, j));
        i = j.min(bare.len());
    }
    out
}

/// Whether the literal at `lit` is compared (see the module's doc).
fn compared(text: &str, lit: &Literal) -> bool {
    let before = text[..lit.start].trim_end();
    let before = before.strip_suffix("Some(").unwrap_or(before).trim_end();
    let before = before.strip_suffix('&').unwrap_or(before).trim_end();
    let after_all = &text[lit.end..];
    let after = after_all.trim_start();
    let after_some = after.strip_prefix(')').unwrap_or(after).trim_start();
    let op = |s: &str| s.starts_with("==") || s.starts_with("!=");
    if before.ends_with("==") || before.ends_with("!=") || op(after) || op(after_some) {
        return true;
    }
    // a pattern: `"a" =>`, `"a" | "b"`, `| "b"` (not `||`)
    if after.starts_with("=>") || (after.starts_with('|') && !after.starts_with("||")) {
        return true;
    }
    if before.ends_with('|') && !before.ends_with("||") {
        // `| "b"` in a pattern, unless it is a closure's body (`|x| "b"`): a pattern's `|` has
        // a pattern before it, which ends with a quote, a `_` or a `)`
        let b2 = before[..before.len() - 1].trim_end();
        if b2.ends_with('"') || b2.ends_with(')') || b2.ends_with('_') {
            return true;
        }
    }
    // a method that compares: `.eq("mysql")`, `.contains("mariadb")`, ...
    for m in [
        ".eq(",
        ".eq_ignore_ascii_case(",
        ".contains(",
        ".starts_with(",
        ".ends_with(",
    ] {
        if before.ends_with(m) {
            return true;
        }
    }
    // a tuple pattern: `("mysql", x) =>` (up to the end of the line)
    let line_rest = after_all.split('\n').next().unwrap_or("");
    if let Some(arrow) = line_rest.find("=>") {
        let head = &line_rest[..arrow];
        if !head.contains([';', '{', '}']) && head.trim_end().ends_with(')') {
            let open_before = text[..lit.start].rsplit('\n').next().unwrap_or("");
            if open_before.contains('(') {
                return true;
            }
        }
    }
    false
}

/// Where `bare` (code without comments and literals' contents) names a variant of a kind enum
/// (`ClusterKind::Galera`, also as `crate::server::ServerKind::Mariadb`): its offset and text.
fn kind_variants(bare: &str) -> Vec<(usize, String)> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for e in KIND_ENUMS {
        let pat = format!("{e}::");
        let mut from = 0;
        while let Some(p) = bare[from..].find(&pat).map(|p| p + from) {
            from = p + pat.len();
            if bare[..p].chars().next_back().is_some_and(ident) {
                continue;
            }
            let variant: String = bare[from..].chars().take_while(|&c| ident(c)).collect();
            if variant.starts_with(|c: char| c.is_ascii_uppercase()) {
                out.push((p, format!("{pat}{variant}")));
            }
        }
    }
    out.sort();
    out
}

/// Every comparison on a DBMS name in the files under `root` (a `src/` folder), outside the
/// exempt folders and test code, as `src/FILE:LINE: line`.
fn findings(root: &Path) -> Vec<Finding> {
    let mut files = Vec::new();
    rs_files(root, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(root)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        if EXEMPT.iter().any(|e| rel.starts_with(e))
            || rel.ends_with("/tests.rs")
            || rel == "tests.rs"
        {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("readable");
        let lexed = lex(&text);
        let tests = test_ranges(&lexed.bare);
        let code = String::from_utf8(lexed.code).expect("comments blanked whole");
        let bare = String::from_utf8(lexed.bare).expect("literals blanked whole");
        for (at, _) in kind_variants(&bare) {
            if tests.iter().any(|&(a, b)| at >= a && at <= b) {
                continue;
            }
            let line = text[..at].matches('\n').count() + 1;
            out.push(Finding {
                file: rel.clone(),
                line,
                text: text.lines().nth(line - 1).unwrap_or("").trim().to_string(),
            });
        }
        for lit in &lexed.literals {
            let name = lit.content.to_ascii_lowercase();
            if !NAMES.contains(&name.as_str()) {
                continue;
            }
            if tests.iter().any(|&(a, b)| lit.start >= a && lit.start <= b) {
                continue;
            }
            if !compared(&code, lit) {
                continue;
            }
            let line = text[..lit.start].matches('\n').count() + 1;
            let text = text.lines().nth(line - 1).unwrap_or("").trim().to_string();
            out.push(Finding {
                file: rel.clone(),
                line,
                text,
            });
        }
    }
    // In file and line order (a variant and a literal on one line: the variant first).
    out.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    out
}

/// The findings not allowed, and the allowed entries that matched nothing, as messages.
fn problems(root: &Path, allowed: &[(&str, &str, &str)]) -> Vec<String> {
    let found = findings(root);
    let mut out = Vec::new();
    for f in &found {
        if !allowed
            .iter()
            .any(|(file, piece, _)| f.file == *file && f.text.contains(piece))
        {
            out.push(format!(
                "src/{}:{}: branches on a DBMS's or cluster's kind outside src/dbms/ and \
                 src/server/ (ask the dialect or the kind instead, see src/dbms/dialect/ and \
                 src/server/cluster.rs): {}",
                f.file, f.line, f.text
            ));
        }
    }
    for (file, piece, why) in allowed {
        if !found
            .iter()
            .any(|f| f.file == *file && f.text.contains(piece))
        {
            out.push(format!(
                "ALLOWED lists src/{file} `{piece}` ({why}), which no longer occurs: remove it \
                 from the list"
            ));
        }
    }
    out
}

#[test]
fn no_code_outside_dbms_and_server_branches_on_the_dbms() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let p = problems(&root, ALLOWED);
    assert!(p.is_empty(), "\n{}\n", p.join("\n"));
}

#[test]
fn the_checker_names_each_branch_and_nothing_else() {
    let t = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| {
        let p = t.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w(
        "workload/w.rs",
        r#"//! "postgres" == kind in a comment is no branch
pub fn f(kind: &str, v: &str, e: Option<&str>) -> String {
    if kind == "postgres" {
        return "a".into();
    }
    if "SQLite" != kind && e == Some("rocksdb") {
        bail!("--target postgres: start it with `--target mysql`");
    }
    let t = match kind {
        "mysql" | "mariadb" => "x",
        "sqlite" => r"y",
        _ => "z",
    };
    let s = match (kind, 3) {
        ("null", _) => 1,
        _ => 2,
    };
    let up = v.to_ascii_lowercase().contains("mariadb");
    let names = ["postgres", "mysql"];
    let f = |_x: u8| "postgres";
    /* if kind == "mysql" */
    format!("{t}{s}{up}{names:?}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn t() {
        assert!(super::f("postgres", "", None) == "postgres");
    }
}
"#,
    );
    w(
        "dbms/d.rs",
        "pub fn g(k: &str) -> bool { k == \"postgres\" }\n",
    );
    w(
        "server/s.rs",
        "pub fn g(k: &str) -> bool { matches!(k, \"mysql\" | \"mariadb\") }\n\
         pub fn h(k: ClusterKind) -> bool { k == ClusterKind::Galera }\n",
    );
    w(
        "session.rs",
        r#"use crate::server::ClusterKind;
pub fn k(t: &str, c: ClusterKind) -> bool {
    if t == "pg-shards" || t.eq("Galera") { return true; }
    let s = ClusterKind::from_target(t).is_some_and(ClusterKind::sharded);
    // ClusterKind::Galera in a comment, "spider" too
    let m = "ClusterKind::Spider in a message";
    matches!(c, ClusterKind::Galera) || crate::server::ServerKind::Mariadb == x
}
#[cfg(test)]
mod tests {
    fn t() -> bool { super::ClusterKind::Galera == "spider" }
}
"#,
    );
    w(
        "cmd/c.rs",
        "pub fn h(k: &str) -> u8 { match k { \"innodb\" => 1, _ => 0 } }\n",
    );
    let found: Vec<(String, usize)> = findings(t.path())
        .into_iter()
        .map(|f| (f.file, f.line))
        .collect();
    let at = |l: usize| ("workload/w.rs".to_string(), l);
    assert_eq!(
        found,
        vec![
            ("cmd/c.rs".to_string(), 1),
            ("session.rs".to_string(), 3), // a cluster's name ==
            ("session.rs".to_string(), 3), // and eq (any case)
            ("session.rs".to_string(), 7), // a cluster kind's variant
            ("session.rs".to_string(), 7), // a server kind's, by its path
            at(3),                         // ==
            at(6),                         // != (any case)
            at(6),                         // == Some(..)
            at(10),                        // a pattern
            at(10),                        // its alternative
            at(11),                        // a raw string pattern
            at(15),                        // a tuple pattern
            at(18),                        // contains
        ]
    );
    let p = problems(
        t.path(),
        &[
            ("cmd/c.rs", r#""innodb" => 1"#, "a test entry"),
            ("cmd/gone.rs", r#""mysql" =>"#, "a stale entry"),
        ],
    );
    assert_eq!(p.len(), 13, "{p:#?}");
    assert!(
        p[0].starts_with("src/session.rs:3: branches on a DBMS's or cluster's kind")
            && p[0].ends_with("if t == \"pg-shards\" || t.eq(\"Galera\") { return true; }"),
        "{p:#?}"
    );
    assert!(
        p[4].starts_with("src/workload/w.rs:3: branches on a DBMS's or cluster's kind")
            && p[4].ends_with("if kind == \"postgres\" {"),
        "{p:#?}"
    );
    assert!(
        p.last()
            .is_some_and(|l| l.contains("src/cmd/gone.rs") && l.contains("no longer occurs")),
        "{p:#?}"
    );
    assert!(!p.iter().any(|l| l.contains("cmd/c.rs:")), "{p:#?}");
}
