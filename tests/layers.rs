//! The crate's layers run one way: commands -> steps -> workloads, measuring, results, export ->
//! DBMS drivers and servers -> base. This test reads every `crate::` (and `super::`) path in
//! `src/` (use statements and inline paths), maps each file to its component (a top-level
//! module, or one command under `src/cmd/`) and fails on
//! - an import from a lower layer into a higher one (the two files named),
//! - a command reaching into another command,
//! - a circle between components (one file pair per edge of the circle named),
//!
//! except for the edges listed in [`KNOWN`], which are debt being paid off: an edge listed there
//! that no longer occurs fails too, so the list only shrinks.
//!
//! Inside one component the files import one way too: a circle of files (each using the next,
//! the last the first) fails, naming its files and the pairs that tie them, except for the
//! circles listed in [`KNOWN_FILE_CIRCLES`] (same rule: one that no longer occurs fails). Here
//! a file's paths also count when they name one of its child modules (`ddl::f` in a `mod.rs`),
//! its `#[cfg(test)]` items do not count (a file's tests use it from above), nor do its
//! re-exports (`pub use`: names handed on to its users, nothing it takes), nor its use of a
//! folder's `mod.rs` it lies in (its `super::`): that file declares it (`mod x;`), so the
//! folder's own module is read as the folder, not as one of its files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layer of each component, from the top (highest number) down. A component is a file or
/// folder directly under `src/` (or `src/cmd/NAME`); one missing here fails the test.
const LAYERS: &[(&str, u8)] = &[
    ("main", 90),
    // commands: one file or folder each (with its options), never importing another; cmd/mod.rs
    // is the table of commands main.rs dispatches
    ("cmd", 85),
    ("cmd/*", 80),
    // steps, from the top: the steps, the session they run in (results directory, target,
    // throwaway server, the checks of the shared options against it), the cluster targets a
    // session can start, and the options every database command shares (options/: the shared
    // options, their parsers, the --size presets, a several-process run's part)
    ("step", 74),
    ("session", 73),
    ("cluster_target", 71),
    ("options", 70),
    // workloads (each with what is its own: the insert benchmark's indexes' codes), then the
    // generic key-pattern machinery they use
    ("workload", 50),
    ("index_spec", 50),
    ("pattern", 45),
    // results and their formats (the comparison of runs among them)
    ("export", 41),
    ("results", 40),
    // the measuring loop, meters, reporters, counters
    ("measure", 30),
    // throwaway servers, and the DBMS drivers they and everything else connect through
    ("server", 20),
    ("dbms", 10),
    // base: signals, output, the live status line, timeouts and waits, reading a user's text,
    // the formatting of what a person reads
    ("stop", 0),
    ("out", 0),
    ("progress", 0),
    ("deadline", 0),
    ("input", 0),
    ("format", 0),
];

/// Edges (from component, to component) that break the rules today, each a piece of debt with
/// the reason it is still there. Remove a line when its edge is gone (the test says so). None
/// today: keep it so (what two components both need belongs below both).
const KNOWN: &[(&str, &str)] = &[];

/// Circles of files inside one component being untied now, each with its files and the reason
/// it is still there. A circle found must lie inside one entry's files (it may have lost some);
/// an entry no circle lies in fails, so remove it when its circle is gone.
const KNOWN_FILE_CIRCLES: &[(&[&str], &str)] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

use crate::common::{code_only, rs_files};

/// The module path of a file: `src/dbms/mod.rs` -> [dbms], `src/dbms/pgwire.rs` -> [dbms, pgwire].
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The component of a module: its first segment, or `cmd/NAME` under `cmd`; `main` for main.rs.
fn component_of(module: &[String], rel: &Path) -> String {
    if rel == Path::new("main.rs") {
        return "main".into();
    }
    match module {
        [] => "lib".into(),
        [first, second, ..] if first == "cmd" => format!("cmd/{second}"),
        [first, ..] => first.clone(),
    }
}

fn layer_of(component: &str) -> Option<u8> {
    LAYERS
        .iter()
        .find(|(c, _)| {
            *c == component || (c.ends_with("/*") && component.starts_with(&c[..c.len() - 1]))
        })
        .map(|&(_, l)| l)
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path a use tree names, from the text after `crate::` (or `super::`): `a::{b, c::d}` ->
/// [a::b], [a::c::d] (a trailing `*` or `self` ends a path at its prefix).
fn use_tree(s: &str, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut i = 0;
    let bytes: Vec<char> = s.chars().collect();
    let mut path = prefix.to_vec();
    loop {
        while i < bytes.len() && bytes[i].is_whitespace() {
            i += 1;
        }
        if i >= bytes.len() {
            out.push(path);
            return i;
        }
        if bytes[i] == '{' {
            i += 1;
            loop {
                let used = use_tree(&bytes[i..].iter().collect::<String>(), &path, out);
                i += used;
                while i < bytes.len() && bytes[i].is_whitespace() {
                    i += 1;
                }
                if i < bytes.len() && bytes[i] == ',' {
                    i += 1;
                    while i < bytes.len() && bytes[i].is_whitespace() {
                        i += 1;
                    }
                    if i < bytes.len() && bytes[i] == '}' {
                        return i + 1;
                    }
                    continue;
                }
                if i < bytes.len() && bytes[i] == '}' {
                    i += 1;
                }
                return i;
            }
        }
        let start = i;
        while i < bytes.len() && (is_ident(bytes[i]) || bytes[i] == '*') {
            i += 1;
        }
        let seg: String = bytes[start..i].iter().collect();
        if seg.is_empty() {
            out.push(path);
            return i;
        }
        if seg != "self" && seg != "*" {
            path.push(seg);
        }
        while i < bytes.len() && bytes[i].is_whitespace() {
            i += 1;
        }
        if bytes[i..].starts_with(&[':', ':']) {
            i += 2;
            continue;
        }
        // `as name`, then the end of this tree
        if bytes[i..].iter().collect::<String>().starts_with("as ") {
            i += 3;
            while i < bytes.len() && (bytes[i].is_whitespace() || is_ident(bytes[i])) {
                i += 1;
            }
        }
        out.push(path);
        return i;
    }
}

/// The module a path names: the longest prefix of it that is a module file.
fn resolve(path: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
}

/// Every `crate::`/`super::` path of a file, as absolute module paths.
fn paths_of(code: &str, module: &[String], is_mod_file: bool) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let text: String = chars.iter().collect();
    let mut i = 0;
    while let Some(pos) = text[i..]
        .find("crate::")
        .map(|p| p + i)
        .into_iter()
        .chain(text[i..].find("super::").map(|p| p + i))
        .min()
    {
        let before = text[..pos].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            i = pos + 1;
            continue;
        }
        let is_crate = text[pos..].starts_with("crate::");
        let mut rest = &text[pos..];
        let prefix: Vec<String> = if is_crate {
            rest = &rest["crate::".len()..];
            Vec::new()
        } else {
            // super:: (repeated) relative to this file's module; a mod.rs is its module itself
            let mut base: Vec<String> = module.to_vec();
            let _ = is_mod_file;
            while rest.starts_with("super::") {
                base.pop();
                rest = &rest["super::".len()..];
            }
            base
        };
        // the use tree or path ends at `;`, or for inline paths at the first char that is not
        // part of a path
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                c == ';'
                    || c == '('
                    || c == ')'
                    || c == '<'
                    || c == '>'
                    || c == '!'
                    || c == '='
                    || c == '&'
                    || c == '['
                    || c == ']'
                    || c == '.'
            })
            .map(|(k, _)| k)
            .unwrap_or(rest.len());
        let mut tree = &rest[..end];
        // an inline path stops at the first char that cannot continue it unless it opens a group
        if !tree.trim_start().starts_with('{') {
            let stop = tree
                .char_indices()
                .find(|&(k, c)| {
                    !(is_ident(c)
                        || c == ':'
                        || (c == '{' && tree[..k].ends_with("::"))
                        || c == '*')
                })
                .map(|(k, _)| k);
            if let Some(stop) = stop {
                if !tree[..stop].ends_with("::") || !tree[stop..].starts_with('{') {
                    tree = &tree[..stop];
                }
            }
        }
        let mut found = Vec::new();
        use_tree(tree, &prefix, &mut found);
        out.extend(found.into_iter().filter(|p| !p.is_empty()));
        i = pos + 1;
    }
    out
}

struct Edge {
    from_file: String,
    to_file: String,
}

/// Edges between components (each with the file pairs that make it), each file's component,
/// and the edges between files of one component (see the module doc for what counts there).
type Graph = (
    BTreeMap<(String, String), Vec<Edge>>,
    BTreeMap<String, String>,
    BTreeMap<(String, String), Vec<Edge>>,
);

/// `code` without its re-exports (`pub use ...;`, `pub(crate) use ...;`): they hand names on to
/// the file's users, the file takes nothing from them.
fn without_reexports(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("pub") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + 3..];
        let vis_end = if after.starts_with('(') {
            after.find(')').map_or(0, |k| k + 1)
        } else {
            0
        };
        let is_reexport =
            !before.is_some_and(is_ident) && after[vis_end..].trim_start().starts_with("use ");
        match (is_reexport, after.find(';')) {
            (true, Some(semi)) => {
                out.push_str(&rest[..at]);
                rest = &after[semi + 1..];
            }
            _ => {
                out.push_str(&rest[..at + 3]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `code` without its `#[cfg(test)]` items (a test module, a helper only tests call).
fn without_test_items(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        // the item ends at its first `;` before any `{`, or at the `}` matching that `{`
        let end = match (item.find(';'), item.find('{')) {
            (Some(semi), Some(open)) if semi < open => semi + 1,
            (Some(semi), None) => semi + 1,
            (_, Some(open)) => {
                let mut depth = 0;
                let mut end = item.len();
                for (k, c) in item[open..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = open + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The paths of `code` that start at one of the module's own children (`child::item`, or
/// `self::child::item`), as absolute module paths.
fn child_paths(code: &str, module: &[String], children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let text = code.replace("self::", "");
    for child in children {
        let needle = format!("{child}::");
        let mut i = 0;
        while let Some(pos) = text[i..].find(&needle).map(|p| p + i) {
            i = pos + needle.len();
            let before = text[..pos].chars().next_back();
            if before.is_some_and(|c| is_ident(c) || c == ':') {
                continue;
            }
            let end = text[pos..]
                .char_indices()
                .find(|&(_, c)| {
                    !(is_ident(c)
                        || c == ':'
                        || c == '{'
                        || c == '}'
                        || c == ','
                        || c.is_whitespace())
                })
                .map_or(text.len(), |(k, _)| pos + k);
            let mut found = Vec::new();
            use_tree(&text[pos..end], module, &mut found);
            out.extend(found);
        }
    }
    out
}

fn graph(root: &Path) -> Graph {
    let root = root.to_path_buf();
    let mut files = Vec::new();
    rs_files(&root, &mut files);
    files.sort();
    let mut modules: BTreeMap<Vec<String>, PathBuf> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&root).expect("under src").to_path_buf();
        if rel != Path::new("main.rs") {
            modules.insert(module_of(&rel), rel);
        }
    }
    let module_set: BTreeSet<Vec<String>> = modules.keys().cloned().collect();
    let mut edges: BTreeMap<(String, String), Vec<Edge>> = BTreeMap::new();
    let mut file_edges: BTreeMap<(String, String), Vec<Edge>> = BTreeMap::new();
    let mut comp_of_file = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&root).expect("under src").to_path_buf();
        let module = if rel == Path::new("main.rs") {
            Vec::new()
        } else {
            module_of(&rel)
        };
        let from = component_of(&module, &rel);
        comp_of_file.insert(rel.display().to_string(), from.clone());
        let text = std::fs::read_to_string(f).expect("source readable");
        let mut code = code_only(&text);
        if rel == Path::new("main.rs") {
            code = code.replace("ixbench::", "crate::");
        }
        let is_mod = rel.file_name().is_some_and(|n| n == "mod.rs");
        // an inline `mod tests { use super::*; ... }` at the end of a file: `super` there is
        // the file's own module
        let (body, tests) = match code.find("mod tests {") {
            Some(at) => code.split_at(at),
            None => (code.as_str(), ""),
        };
        let mut test_module = module.clone();
        test_module.push("tests".into());
        let own = paths_of(body, &module, is_mod);
        let untested = without_reexports(&without_test_items(body));
        let own_untested = paths_of(&untested, &module, is_mod);
        let children: BTreeSet<String> = module_set
            .iter()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(&module))
            .map(|m| m[module.len()].clone())
            .collect();
        for p in own_untested
            .iter()
            .chain(&child_paths(&untested, &module, &children))
        {
            let Some(m) = resolve(p, &module_set) else {
                continue;
            };
            let to_rel = &modules[&m];
            // the file itself, or a folder's mod.rs it lies in (see the module doc)
            if module.starts_with(&m) || component_of(&m, to_rel) != from {
                continue;
            }
            let e = Edge {
                from_file: format!("src/{}", rel.display()),
                to_file: format!("src/{}", to_rel.display()),
            };
            file_edges
                .entry((e.from_file.clone(), e.to_file.clone()))
                .or_insert_with(|| vec![e]);
        }
        let paths = own.into_iter().chain(paths_of(tests, &test_module, false));
        for p in paths {
            let Some(m) = resolve(&p, &module_set) else {
                continue;
            };
            let to_rel = &modules[&m];
            let to = component_of(&m, to_rel);
            if to == from || to == "lib" {
                continue;
            }
            let list = edges.entry((from.clone(), to.clone())).or_default();
            let e = Edge {
                from_file: format!("src/{}", rel.display()),
                to_file: format!("src/{}", to_rel.display()),
            };
            if !list
                .iter()
                .any(|x| x.from_file == e.from_file && x.to_file == e.to_file)
            {
                list.push(e);
            }
        }
    }
    (edges, comp_of_file, file_edges)
}

/// Strongly connected components of more than one component (Tarjan's algorithm).
fn circles(edges: &BTreeMap<(String, String), Vec<Edge>>) -> Vec<Vec<String>> {
    let mut nodes: BTreeSet<&str> = BTreeSet::new();
    for (a, b) in edges.keys() {
        nodes.insert(a);
        nodes.insert(b);
    }
    let nodes: Vec<&str> = nodes.into_iter().collect();
    let idx = |n: &str| nodes.iter().position(|x| *x == n).expect("a node");
    let mut adj = vec![Vec::new(); nodes.len()];
    for (a, b) in edges.keys() {
        adj[idx(a)].push(idx(b));
    }
    struct T {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, adj: &[Vec<usize>], t: &mut T) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in &adj[v] {
            match t.index[w] {
                None => {
                    visit(w, adj, t);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut scc = Vec::new();
            loop {
                let w = t.stack.pop().expect("on the stack");
                t.on[w] = false;
                scc.push(w);
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                t.out.push(scc);
            }
        }
    }
    let n = nodes.len();
    let mut t = T {
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(v, &adj, &mut t);
        }
    }
    t.out
        .into_iter()
        .map(|s| {
            let mut v: Vec<String> = s.into_iter().map(|i| nodes[i].to_string()).collect();
            v.sort();
            v
        })
        .collect()
}

fn known(from: &str, to: &str) -> bool {
    KNOWN.iter().any(|&(a, b)| a == from && b == to)
}

/// What breaks the rules in the tree at `root` (a `src/` folder), one line each.
fn problems(root: &Path) -> Vec<String> {
    let (edges, comps, file_edges) = graph(root);
    let mut problems = Vec::new();
    for c in comps.values().collect::<BTreeSet<_>>() {
        if c != "lib" && layer_of(c).is_none() {
            problems.push(format!(
                "component {c} has no layer: add it to LAYERS in tests/layers.rs"
            ));
        }
    }
    let mut bad: BTreeSet<(String, String)> = BTreeSet::new();
    for ((from, to), list) in &edges {
        let (Some(lf), Some(lt)) = (layer_of(from), layer_of(to)) else {
            continue;
        };
        let why = if lf < lt {
            Some("imports upward")
        } else if from.starts_with("cmd/") && to.starts_with("cmd/") {
            Some("is a command reaching into another command")
        } else {
            None
        };
        if let Some(why) = why {
            bad.insert((from.clone(), to.clone()));
            if !known(from, to) {
                let e = &list[0];
                problems.push(format!(
                    "{} {why}: it uses {} ({from} -> {to}{})",
                    e.from_file,
                    e.to_file,
                    more(list)
                ));
            }
        }
    }
    // A circle has at least one edge that does not run down: upward ones are flagged above,
    // so here the same-layer edges that close a circle.
    for scc in circles(&edges) {
        let closing: Vec<&(String, String)> = edges
            .keys()
            .filter(|(a, b)| scc.contains(a) && scc.contains(b) && layer_of(a) <= layer_of(b))
            .collect();
        for k in &closing {
            bad.insert((*k).clone());
        }
        let shown: Vec<String> = closing
            .iter()
            .filter(|(a, b)| !known(a, b) && layer_of(a) == layer_of(b))
            .map(|k| format!("{} uses {}", edges[*k][0].from_file, edges[*k][0].to_file))
            .collect();
        if !shown.is_empty() {
            problems.push(format!(
                "circle between {}: {}",
                scc.join(", "),
                shown.join("; ")
            ));
        }
    }
    for &(a, b) in KNOWN {
        if !bad.contains(&(a.to_string(), b.to_string())) {
            problems.push(format!("KNOWN lists {a} -> {b}, which no longer breaks a rule: remove it from tests/layers.rs"));
        }
    }
    problems.extend(file_circle_problems(&file_edges, KNOWN_FILE_CIRCLES));
    let upward = bad.len();
    let files: usize = bad.iter().map(|k| edges.get(k).map_or(0, Vec::len)).sum();
    println!(
        "component edges {}, rule-breaking {upward} (file pairs {files})",
        edges.len()
    );
    problems
}

/// Circles of files inside one component not in `known`, each with its files and the file
/// pairs that tie them; and the entries of `known` no circle lies in.
fn file_circle_problems(
    file_edges: &BTreeMap<(String, String), Vec<Edge>>,
    known: &[(&[&str], &str)],
) -> Vec<String> {
    let found = circles(file_edges);
    let lies_in = |c: &[String], files: &[&str]| c.iter().all(|f| files.contains(&f.as_str()));
    let mut problems = Vec::new();
    for c in &found {
        if known.iter().any(|(files, _)| lies_in(c, files)) {
            continue;
        }
        let ties: Vec<String> = file_edges
            .keys()
            .filter(|(a, b)| c.contains(a) && c.contains(b))
            .map(|(a, b)| format!("{a} uses {b}"))
            .collect();
        problems.push(format!(
            "circle of files {}: {} (put what they share in a file below them)",
            c.join(", "),
            ties.join("; ")
        ));
    }
    for (files, _) in known {
        if !found.iter().any(|c| lies_in(c, files)) {
            problems.push(format!(
                "KNOWN_FILE_CIRCLES lists the circle of {}, which no longer occurs: remove it from \
                 tests/layers.rs",
                files.join(", ")
            ));
        }
    }
    println!("circles of files inside one component: {}", found.len());
    problems
}

#[test]
fn layers_run_one_way_without_circles() {
    let problems = problems(&src());
    assert!(
        problems.is_empty(),
        "layer rules broken:\n{}",
        problems.join("\n")
    );
}

/// The checker itself: a tree with an upward import, a command using another and a circle.
#[test]
fn the_checker_names_the_files_of_each_broken_rule() {
    let t = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| {
        let p = t.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w(
        "lib.rs",
        "pub mod cmd; pub mod dbms; pub mod measure; pub mod out; pub mod stop;",
    );
    w("cmd/mod.rs", "pub mod run; pub mod index;");
    w(
        "cmd/run.rs",
        "use crate::dbms::Conn; // crate::cmd::index in a comment is no import\n",
    );
    w(
        "cmd/index.rs",
        "pub fn f() { crate::cmd::run::g(); let s = \"crate::stop\"; }",
    );
    w("dbms/mod.rs", "pub mod pg; pub struct Conn;");
    w("dbms/pg.rs", "use crate::{measure::meter::Meter, out};");
    w("measure/mod.rs", "pub mod meter; use super::dbms::Conn;");
    w("measure/meter.rs", "pub struct Meter;");
    w("out.rs", "use crate::stop::flag;");
    w(
        "stop.rs",
        "pub fn flag() { crate::out::x(); }\n#[cfg(test)]\nmod tests { use super::*; }",
    );
    let p = problems(t.path());
    let has = |s: &str| p.iter().any(|l| l.contains(s));
    assert!(
        has("src/dbms/pg.rs imports upward: it uses src/measure/meter.rs"),
        "{p:?}"
    );
    assert!(
        has("src/cmd/index.rs is a command reaching into another command: it uses src/cmd/run.rs"),
        "{p:?}"
    );
    assert!(has("circle between out, stop"), "{p:?}");
    assert!(
        !has("cmd/run.rs is a command"),
        "a comment is not an import: {p:?}"
    );
    assert!(
        !p.iter()
            .any(|l| l.contains("uses src/stop.rs") && l.contains("cmd/index")),
        "{p:?}"
    );
}

/// The checker of circles of files: one between two files, one through a child path of a
/// `mod.rs`, and what does not tie files (a use of the folder's `mod.rs`, a re-export, a test
/// item, another component); a known circle passes, a known one gone fails.
#[test]
fn the_checker_names_the_files_of_each_circle_inside_a_component() {
    let t = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| {
        let p = t.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w("lib.rs", "pub mod dbms; pub mod measure; pub mod out;");
    w(
        "measure/mod.rs",
        "pub mod a; pub mod b; pub mod c; pub mod d; pub mod e; pub mod f; pub mod g;\n\
         pub struct Top; fn t() { c::go(); }",
    );
    // a <-> b: a circle
    w("measure/a.rs", "use super::b::B; pub struct A;");
    w("measure/b.rs", "pub struct B; fn f() { super::a::A; }");
    // c uses the folder's mod.rs, which uses c: the folder, not a circle
    w("measure/c.rs", "use super::Top; pub fn go() {}");
    // d re-exports e's item, e uses d: no circle
    w("measure/d.rs", "pub use super::e::E;\npub struct D;");
    w("measure/e.rs", "use super::d::D; pub struct E;");
    // f's tests use g, g uses f: no circle
    w(
        "measure/f.rs",
        "pub struct F;\n#[cfg(test)]\nmod tests { use crate::measure::g::G; }\n\
         #[cfg(test)]\npub fn helper() { crate::measure::g::G; }",
    );
    w("measure/g.rs", "use super::f::F; pub struct G;");
    // my/mod.rs -> my/dd.rs (a child path) -> tools.rs -> my/mod.rs: a circle
    w("dbms/mod.rs", "pub mod my; pub mod tools; pub mod lone;");
    w(
        "dbms/my/mod.rs",
        "pub mod dd; pub struct MyErr; fn f() { dd::alter(); }",
    );
    w(
        "dbms/my/dd.rs",
        "use crate::dbms::tools::clause; pub fn alter() {}",
    );
    w(
        "dbms/tools.rs",
        "use crate::dbms::my::MyErr; pub fn clause() {}",
    );
    w("dbms/lone.rs", "use crate::out::x;");
    w("out.rs", "pub fn x() {}");
    let (_, _, file_edges) = graph(t.path());
    let p = file_circle_problems(&file_edges, &[]);
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(
        p[0].starts_with(
            "circle of files src/dbms/my/dd.rs, src/dbms/my/mod.rs, src/dbms/tools.rs: \
             src/dbms/my/dd.rs uses src/dbms/tools.rs; src/dbms/my/mod.rs uses src/dbms/my/dd.rs; \
             src/dbms/tools.rs uses src/dbms/my/mod.rs"
        ),
        "{p:?}"
    );
    assert!(
        p[1].starts_with(
            "circle of files src/measure/a.rs, src/measure/b.rs: src/measure/a.rs uses \
             src/measure/b.rs; src/measure/b.rs uses src/measure/a.rs"
        ),
        "{p:?}"
    );
    // Known: the circle passes, also once it lost a file; an entry no circle lies in fails.
    let known: &[(&[&str], &str)] = &[
        (
            &[
                "src/dbms/my/dd.rs",
                "src/dbms/my/mod.rs",
                "src/dbms/tools.rs",
                "src/dbms/gone.rs",
            ],
            "being untied",
        ),
        (&["src/measure/a.rs", "src/measure/b.rs"], "being untied"),
        (&["src/measure/c.rs", "src/measure/mod.rs"], "untied"),
    ];
    let p = file_circle_problems(&file_edges, known);
    assert_eq!(
        p,
        ["KNOWN_FILE_CIRCLES lists the circle of src/measure/c.rs, src/measure/mod.rs, which no \
          longer occurs: remove it from tests/layers.rs"],
    );
}

fn more(list: &[Edge]) -> String {
    if list.len() > 1 {
        format!(", and {} more file pairs", list.len() - 1)
    } else {
        String::new()
    }
}
