// Discovery of the DBMS engines and the workloads, run by `build.rs`: adding an engine is a
// folder under `src/dbms/` whose `mod.rs` defines its row `pub static KIND`, and adding a
// workload is a file or folder under `src/workload/` whose code defines its registry entry
// (`pub fn entry()` or `pub fn entries()`) and, where it has them, its options under its help
// heading, its record's part of `run.json` and its command of its own, with no list anywhere to
// edit by hand. The `mod`
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

/// What build.rs finds in one workload module's code (see [`workloads`]).
struct Found {
    name: String,
    /// `vec![NAME::entry()]` or `NAME::entries()`.
    entries: Option<String>,
    /// Its rank (`pub const RANK: u8 = N;`), which orders its options in `--help`.
    rank: Option<u8>,
    /// Its options struct under its heading (`pub const HEADING` and the `pub struct` after
    /// `#[command(next_help_heading = HEADING)]`).
    options: Option<String>,
    /// Its records with their own part of `run.json` (`pub struct T` and `impl Record for T`).
    records: Vec<String>,
    /// It defines a command of its own (`pub fn command() -> `).
    command: bool,
}

/// Reads one workload module's code for its conventions (each a line of its own, at the
/// start of the line, outside its unit tests).
fn find(name: &str, c: &str) -> Found {
    let lines: Vec<&str> = c.lines().collect();
    let defines = |f: &str| lines.iter().any(|l| l.starts_with(f));
    let entries = if defines("pub fn entry() -> ") {
        Some(format!("vec![{name}::entry()]"))
    } else if defines("pub fn entries() -> ") {
        Some(format!("{name}::entries()"))
    } else {
        None
    };
    let rank = lines.iter().find_map(|l| {
        let v = l.strip_prefix("pub const RANK: u8 = ")?.strip_suffix(';')?;
        Some(v.trim().parse::<u8>().unwrap_or_else(|e| panic!("{name}: RANK {v:?}: {e}")))
    });
    let heading = defines("pub const HEADING: &str");
    let options = lines
        .iter()
        .position(|l| l.trim() == "#[command(next_help_heading = HEADING)]")
        .and_then(|i| {
            lines[i + 1..].iter().take(4).find_map(|l| {
                let rest = l.strip_prefix("pub struct ")?;
                Some(rest.split(|ch: char| !ch.is_alphanumeric() && ch != '_').next()?.to_string())
            })
        });
    assert!(
        heading == options.is_some(),
        "src/workload/{name}: a workload's options are a `pub struct` right after \
         `#[command(next_help_heading = HEADING)]`, with `pub const HEADING: &str` in its file"
    );
    let structs: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("pub struct "))
        .filter_map(|r| r.split(|ch: char| !ch.is_alphanumeric() && ch != '_').next())
        .collect();
    let records = lines
        .iter()
        .filter_map(|l| {
            let l = l.strip_prefix("impl ")?;
            let l = l.strip_prefix("txn_runner::").unwrap_or(l);
            l.strip_prefix("Record for ")?.split_whitespace().next()
        })
        .filter(|t| structs.contains(t))
        .map(str::to_string)
        .collect();
    Found {
        name: name.to_string(),
        entries,
        rank,
        options,
        records,
        command: defines("pub fn command() -> "),
    }
}

/// `src/workload/`'s modules and what build.rs finds in each (see docs/contributing.md,
/// "Adding things"): the registry entries of those that define one, the options of those with
/// options of their own (the fields of `WorkloadOptions`, flattened into `ixbench run`, and
/// their help headings, by `RANK`, then name), the result parts of those with a record of
/// their own, and the commands of their own (`ixbench oltp`, `ixbench timeseries`).
fn workloads(src: &Path) -> String {
    let mut out = String::from("// Written by build.rs (build/plugins.rs): the workload modules.\n");
    let mut found = Vec::new();
    for (name, path) in modules(&src.join("workload")) {
        mod_line(&mut out, &name, &path);
        found.push(find(&name, &code(&path)));
    }
    let calls: Vec<&str> = found.iter().filter_map(|f| f.entries.as_deref()).collect();
    assert!(!calls.is_empty(), "no workload under src/workload/");
    write!(
        out,
        "\n/// The registry entries of every workload module (found by build.rs), by module name\n\
         /// ([`registry::all`] puts them in their listed order).\n\
         pub(crate) fn entries() -> Vec<registry::Entry> {{\n    [{}].concat()\n}}\n",
        calls.join(", ")
    )
    .unwrap();
    let mut with_options: Vec<&Found> = found.iter().filter(|f| f.options.is_some()).collect();
    with_options.sort_by_key(|f| (f.rank.unwrap_or(u8::MAX), f.name.clone()));
    out.push_str(
        "\n/// The workload-specific options of `ixbench run`, each workload's under its own heading\n\
         /// (found by build.rs: a workload module's `pub struct` under\n\
         /// `#[command(next_help_heading = HEADING)]`, by its `RANK`); its runner reads them from\n\
         /// [`runner::RunIn::opts`], the field named as its module.\n\
         #[derive(Debug, Clone, clap::Args)]\npub struct WorkloadOptions {\n",
    );
    for f in &with_options {
        let (n, t) = (&f.name, f.options.as_deref().unwrap_or_default());
        writeln!(
            out,
            "    /// The options of `{n}` (under its heading).\n    #[command(flatten)]\n    pub {n}: {n}::{t},"
        )
        .unwrap();
    }
    out.push_str("}\n");
    let headings: Vec<String> = with_options.iter().map(|f| format!("{}::HEADING", f.name)).collect();
    write!(
        out,
        "\n/// The help headings of the workloads' own options ([`WorkloadOptions`]), in its order.\n\
         pub(crate) const HEADINGS: &[&str] = &[{}];\n",
        headings.join(", ")
    )
    .unwrap();
    let parts: Vec<String> = found
        .iter()
        .flat_map(|f| {
            f.records
                .iter()
                .map(move |t| format!("<{}::{t} as txn_runner::Record>::part()", f.name))
        })
        .collect();
    write!(
        out,
        "\n/// The parts of `run.json` of the workloads' records of their own (found by build.rs: a\n\
         /// module's `pub struct T` with `impl Record for T`), by module name.\n\
         pub(crate) fn record_parts() -> Vec<crate::results::parts::PartSchema> {{\n    vec![{}]\n}}\n",
        parts.join(", ")
    )
    .unwrap();
    let commands: Vec<String> = found
        .iter()
        .filter(|f| f.command)
        .map(|f| format!("{}::command()", f.name))
        .collect();
    write!(
        out,
        "\n/// The workloads' commands of their own (found by build.rs: a module's\n\
         /// `pub fn command()`), by module name.\n\
         pub(crate) fn commands() -> Vec<registry::Command> {{\n    vec![{}]\n}}\n",
        commands.join(", ")
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
