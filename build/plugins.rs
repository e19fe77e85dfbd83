// Discovery of the DBMS engines and the workloads, run by `build.rs`: adding an engine is a
// folder under `src/dbms/` whose `mod.rs` defines its row `pub static KIND`, and adding a
// workload is a file or folder under `src/workload/` whose code defines its registry entry
// (`pub fn entry()` or `pub fn entries()`), with no list anywhere to edit by hand. The `mod`
// lines and the lists are written into OUT_DIR and `include!`d by `src/dbms/mod.rs` and
// `src/workload/mod.rs`; names are sorted, so the output depends only on the files.

use std::fmt::Write as _;
use std::fs;
// `Path` and `PathBuf` come from build/git.rs, included beside this file by build.rs.

/// The modules of `dir` (sorted by name): `NAME.rs` files (but `mod.rs`) and folders with a
/// `mod.rs`, each as (name, path of its main file).
fn modules(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = e.expect("a directory entry").path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_string) else {
            continue;
        };
        if path.is_dir() && path.join("mod.rs").is_file() {
            out.push((name, path.join("mod.rs")));
        } else if let Some(stem) = name.strip_suffix(".rs").filter(|s| *s != "mod") {
            out.push((stem.to_string(), path));
        }
    }
    out.sort();
    out
}

/// The source of `path` without its unit tests (a test module may name anything). What is
/// looked for in it starts a line, so a comment mentioning it does not count.
fn code(path: &Path) -> String {
    let s = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match s.find("#[cfg(test)]") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// A `#[path]` module line for `name` at `path`.
fn mod_line(out: &mut String, name: &str, path: &Path) {
    let p = path.display().to_string();
    assert!(!p.contains('"') && !p.contains('\\'), "unusual path {p}");
    writeln!(out, "#[path = \"{p}\"]\npub mod {name};").unwrap();
}

/// `src/dbms/`'s engines: their `mod` lines and `KINDS`.
fn engines(src: &Path) -> String {
    let mut out = String::from("// Written by build.rs (build/plugins.rs): the engine folders.\n");
    let found: Vec<_> = modules(&src.join("dbms"))
        .into_iter()
        .filter(|(_, p)| {
            p.ends_with("mod.rs") && code(p).lines().any(|l| l.starts_with("pub static KIND: "))
        })
        .collect();
    assert!(!found.is_empty(), "no engine under src/dbms/");
    for (name, path) in &found {
        mod_line(&mut out, name, path);
    }
    out.push_str(
        "\n/// Every DBMS kind's row ([`registry::Kind`]), one per engine folder (found by \
         build.rs),\n/// by folder name.\npub static KINDS: &[&registry::Kind] = &[",
    );
    let rows: Vec<String> = found.iter().map(|(name, _)| format!("&{name}::KIND")).collect();
    writeln!(out, "{}];", rows.join(", ")).unwrap();
    out
}

/// `src/workload/`'s modules and the registry entries of those that define one.
fn workloads(src: &Path) -> String {
    let mut out = String::from("// Written by build.rs (build/plugins.rs): the workload modules.\n");
    let mut calls = Vec::new();
    for (name, path) in modules(&src.join("workload")) {
        mod_line(&mut out, &name, &path);
        let c = code(&path);
        let defines = |f: &str| c.lines().any(|l| l.starts_with(f));
        if defines("pub fn entry() -> ") {
            calls.push(format!("vec![{name}::entry()]"));
        } else if defines("pub fn entries() -> ") {
            calls.push(format!("{name}::entries()"));
        }
    }
    assert!(!calls.is_empty(), "no workload under src/workload/");
    write!(
        out,
        "\n/// The registry entries of every workload module (found by build.rs), by module name\n\
         /// ([`registry::all`] puts them in their listed order).\n\
         pub(crate) fn entries() -> Vec<registry::Entry> {{\n    [{}].concat()\n}}\n",
        calls.join(", ")
    )
    .unwrap();
    out
}

/// Writes both files into `out_dir` (only when they changed, so an unchanged list rebuilds
/// nothing) and tells cargo to run again when either folder changes.
pub fn discover(manifest: &Path, out_dir: &Path) {
    let src = manifest.join("src");
    for (file, text) in [
        ("dbms_engines.rs", engines(&src)),
        ("workloads.rs", workloads(&src)),
    ] {
        let to = out_dir.join(file);
        if fs::read_to_string(&to).ok().as_deref() != Some(text.as_str()) {
            fs::write(&to, text).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
        }
    }
    for dir in ["src/dbms", "src/workload"] {
        println!("cargo:rerun-if-changed={dir}");
    }
}
