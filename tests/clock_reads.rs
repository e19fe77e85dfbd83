//! One measuring loop: nothing outside `src/measure/` reads the clock for a figure. Measured time
//! (stopwatches, the wall-clock stamps of results) comes from `measure::clock`; time that is
//! not a figure (timeouts, polls, waits) from the base module `deadline`; a DBMS driver (below
//! `measure`) times a figure with the `dbms::FigureClock` its caller hands it.
//!
//! This test reads every file in `src/` (comments, strings and char literals blanked, lines
//! kept) and fails on each read of the clock outside `src/measure/` and `src/deadline.rs`,
//! naming file:line: `Instant::now`, `SystemTime::now`, `UNIX_EPOCH`, `.elapsed()` (of an
//! `Instant` or a `SystemTime`), chrono's `Utc::now` and `Local::now`. The reads that must stay
//! are listed in [`ALLOWED`] with their count and reason; an entry whose file reads the clock
//! a different number of times fails too (fewer: shrink the list; more: a new read).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::rs_files;

/// What reads the clock (matched in code, not after an identifier character).
const READS: &[&str] = &[
    "Instant::now",
    "SystemTime::now",
    "UNIX_EPOCH",
    ".elapsed()",
    "Utc::now",
    "Local::now",
];

/// Where the clock may be read (paths under `src/`, a folder ending in `/`).
const EXEMPT: &[&str] = &["measure/", "deadline.rs"];

/// Reads that stay outside `measure` (path under `src/`, how many, why); none is a figure.
const ALLOWED: &[(&str, usize, &str)] = &[(
    "server/datadir.rs",
    1,
    "the local date in the name a data directory is moved aside to: a name, not a figure, and \
     servers are below measure",
)];

/// The text with comments, string and char literals blanked out (newlines kept, so line
/// numbers stay true).
fn code_lines(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    // blank b[from..to] (keeping newlines)
    let blank = |out: &mut String, from: usize, to: usize| {
        for &c in &b[from..to.min(b.len())] {
            out.push(if c == '\n' { '\n' } else { ' ' });
        }
    };
    let at = |i: usize, s: &str| s.chars().enumerate().all(|(k, c)| b.get(i + k) == Some(&c));
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < b.len() {
        if at(i, "//") {
            let mut j = i;
            while j < b.len() && b[j] != '\n' {
                j += 1;
            }
            blank(&mut out, i, j);
            i = j;
        } else if at(i, "/*") {
            let (mut j, mut depth) = (i, 0);
            while j < b.len() {
                if at(j, "/*") {
                    depth += 1;
                    j += 2;
                } else if at(j, "*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if b[i] == 'r' && (at(i, "r\"") || at(i, "r#")) && (i == 0 || !ident(b[i - 1])) {
            let mut j = i + 1;
            let mut hashes = 0;
            while j < b.len() && b[j] == '#' {
                hashes += 1;
                j += 1;
            }
            if j < b.len() && b[j] == '"' {
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat('#').take(hashes))
                    .collect();
                j += 1;
                while j < b.len() && !at(j, &close) {
                    j += 1;
                }
                let end = (j + close.chars().count()).min(b.len());
                blank(&mut out, i, end);
                i = end;
            } else {
                out.push('r');
                i += 1;
            }
        } else if b[i] == '"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                if b[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            let end = (j + 1).min(b.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == '\'' {
            // a char literal ('x', '\n', '\u{..}') or a lifetime ('a)
            if i + 2 < b.len() && b[i + 1] == '\\' {
                let mut j = i + 2;
                while j < b.len() && b[j] != '\'' {
                    j += 1;
                }
                blank(&mut out, i, j + 1);
                i = j + 1;
            } else if i + 2 < b.len() && b[i + 2] == '\'' {
                blank(&mut out, i, i + 3);
                i += 3;
            } else {
                out.push('\'');
                i += 1;
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// Every read of the clock in the code of `text`: (line, what).
fn reads_in(text: &str) -> Vec<(usize, &'static str)> {
    let code = code_lines(text);
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        for what in READS {
            let mut from = 0;
            while let Some(p) = line[from..].find(what).map(|p| p + from) {
                let before = line[..p].chars().next_back();
                let glued = !what.starts_with('.')
                    && before.is_some_and(|c| c.is_alphanumeric() || c == '_');
                if !glued {
                    out.push((n + 1, *what));
                }
                from = p + what.len();
            }
        }
    }
    out
}

/// The reads of the clock under `root` outside [`EXEMPT`], by file (relative to `root`, with
/// `/`): each read as `file:line: what`.
fn reads(root: &Path) -> BTreeMap<String, Vec<String>> {
    let mut files: Vec<PathBuf> = Vec::new();
    rs_files(root, &mut files);
    files.sort();
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in files {
        let rel = f
            .strip_prefix(root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        if EXEMPT.iter().any(|e| {
            if e.ends_with('/') {
                rel.starts_with(e)
            } else {
                rel == *e
            }
        }) {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("source readable");
        for (line, what) in reads_in(&text) {
            out.entry(rel.clone())
                .or_default()
                .push(format!("src/{rel}:{line}: {what}"));
        }
    }
    out
}

/// What is wrong under `root` given the `allowed` reads: one line each.
fn problems(root: &Path, allowed: &[(&str, usize, &str)]) -> Vec<String> {
    let mut found = reads(root);
    let mut out = Vec::new();
    for &(file, count, _) in allowed {
        match found.remove(file) {
            None => out.push(format!(
                "ALLOWED lists src/{file} ({count} read(s)), which no longer reads the clock: \
                 remove the entry"
            )),
            Some(r) if r.len() < count => out.push(format!(
                "ALLOWED lists {count} read(s) of the clock in src/{file}, now {}: lower the \
                 count ({})",
                r.len(),
                r.join("; ")
            )),
            Some(r) if r.len() > count => out.push(format!(
                "src/{file} reads the clock {} time(s), ALLOWED says {count}: {}",
                r.len(),
                r.join("; ")
            )),
            Some(_) => {}
        }
    }
    for r in found.into_values().flatten() {
        out.push(format!(
            "{r}: a read of the clock outside src/measure (a figure: measure::clock; a timeout \
             or a wait: deadline)"
        ));
    }
    out
}

#[test]
fn no_clock_reads_outside_measure() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let p = problems(&src, ALLOWED);
    assert!(p.is_empty(), "{} problem(s):\n{}", p.len(), p.join("\n"));
}

#[test]
fn every_allowed_read_has_a_reason() {
    for (file, count, why) in ALLOWED {
        assert!(*count > 0 && why.len() > 20, "{file}: a count and a reason");
    }
}

/// The scanner on a small tree: it finds each kind of read with its line, skips comments,
/// strings and the exempt places, and holds the ALLOWED list to its counts.
#[test]
fn scanner_fails_on_reads_in_a_synthetic_tree() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "measure/clock.rs",
        "fn now() -> Instant { Instant::now() }\n",
    );
    write(
        "deadline.rs",
        "fn d() { let _ = std::time::Instant::now(); }\n",
    );
    write(
        "step/a.rs",
        "// Instant::now() in a comment\n\
         fn a() {\n\
         \x20   let s = \"Instant::now() in a string,\n\
         over two lines\";\n\
         \x20   let t = std::time::Instant::now();\n\
         \x20   let _ = t.elapsed();\n\
         \x20   /* SystemTime::now() */ let _ = std::time::SystemTime::now()\n\
         \x20       .duration_since(std::time::UNIX_EPOCH);\n\
         \x20   let _ = (MyInstant::now(), chrono::Utc::now(), chrono::Local::now());\n\
         \x20   let _ = r#\"UNIX_EPOCH\"#; let c = 'x'; let _ = sw.elapsed_secs();\n\
         }\n",
    );
    write("dbms/b.rs", "fn b() { let _ = Instant::now(); }\n");
    write("server/c.rs", "fn c() {}\n");
    let found: Vec<String> = reads(root).into_values().flatten().collect();
    assert_eq!(
        found,
        [
            "src/dbms/b.rs:1: Instant::now",
            "src/step/a.rs:5: Instant::now",
            "src/step/a.rs:6: .elapsed()",
            "src/step/a.rs:7: SystemTime::now",
            "src/step/a.rs:8: UNIX_EPOCH",
            "src/step/a.rs:9: Utc::now",
            "src/step/a.rs:9: Local::now",
        ]
    );
    // Nothing allowed: every read is a problem.
    assert_eq!(problems(root, &[]).len(), 7);
    // dbms/b.rs allowed: the rest still fail.
    let p = problems(root, &[("dbms/b.rs", 1, "why")]);
    assert_eq!(p.len(), 6, "{p:?}");
    assert!(p.iter().all(|l| l.starts_with("src/step/a.rs:")), "{p:?}");
    // An entry for a file that reads the clock no more, or a count that is off, fails.
    let p = problems(root, &[("dbms/b.rs", 1, "why"), ("server/c.rs", 1, "why")]);
    assert!(
        p[0].contains("src/server/c.rs") && p[0].contains("no longer"),
        "{p:?}"
    );
    let p = problems(root, &[("dbms/b.rs", 2, "why")]);
    assert!(p[0].contains("lower the count"), "{p:?}");
    let p = problems(root, &[("step/a.rs", 3, "why"), ("dbms/b.rs", 1, "why")]);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("6 time(s), ALLOWED says 3"), "{p:?}");
    // Everything allowed at its count: clean.
    assert!(problems(root, &[("step/a.rs", 6, "why"), ("dbms/b.rs", 1, "why")]).is_empty());
}
