//! The MySQL/MariaDB client's option files and environment, read as MariaDB's client library
//! reads them, for what a `mysql://` target leaves out (see [`super::mysql::ServerUrl`], which
//! applies them with the client's precedence: the URL, then option files, then environment
//! variables, then defaults).
//!
//! - Files, in order, later values overriding earlier ones (MariaDB's "Default Option File
//!   Locations" on Linux): `/etc/my.cnf`, `/etc/mysql/my.cnf`, `$MARIADB_HOME/my.cnf` (else
//!   `$MYSQL_HOME/my.cnf`), the `defaults-extra-file`, `~/.my.cnf`. With `defaults-file` only
//!   that file; with `no-defaults` none (the URL parameters of the same names as the client's
//!   `--defaults-file`, `--defaults-extra-file`, `--no-defaults`).
//! - Groups: `[client]` (every MySQL and MariaDB client), `[client-server]` and
//!   `[client-mariadb]` (MariaDB's client library reads them too) and `[ixbench]` (the
//!   program's own group, as the `mysql` program reads `[mysql]`).
//! - Syntax: `# ...` and `; ...` comment lines, `[group]`, `name = value` or `name` alone;
//!   `-` and `_` alike in names, a `loose-` prefix dropped; a value in `"..."` or `'...'`
//!   keeps `#` and spaces (`\n \t \\ \"` escapes inside), an unquoted one ends at `#`;
//!   `!include FILE` and `!includedir DIR` (its `*.cnf` files, sorted). A world-writable
//!   file is ignored with a warning, as the client ignores it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The option groups ixbench reads.
pub const GROUPS: &[&str] = &["client", "client-server", "client-mariadb", "ixbench"];

/// The environment the resolution reads: a snapshot of the process's (tests give their own).
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: BTreeMap<String, String>,
    /// The system files (`/etc/my.cnf`, `/etc/mysql/my.cnf`) are read: true but in tests.
    pub system_files: bool,
}

impl Env {
    /// The process's environment (`MYSQL_*`, `MARIADB_HOME`, `HOME`, `USER`), system files
    /// read.
    pub fn from_process() -> Env {
        Env {
            vars: std::env::vars()
                .filter(|(k, _)| {
                    k.starts_with("MYSQL_") || k == "MARIADB_HOME" || k == "HOME" || k == "USER"
                })
                .collect(),
            system_files: true,
        }
    }

    /// An environment of exactly these variables, without the system files.
    pub fn of(pairs: &[(&str, &str)]) -> Env {
        Env {
            vars: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            system_files: false,
        }
    }

    /// A variable's value; empty counts as unset.
    pub fn get(&self, k: &str) -> Option<&str> {
        self.vars
            .get(k)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// Which option files to read (the client's `--defaults-file`, `--defaults-extra-file`,
/// `--no-defaults`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Which {
    /// Only this file.
    pub defaults_file: Option<PathBuf>,
    /// This file after the system ones, before `~/.my.cnf`.
    pub extra_file: Option<PathBuf>,
    /// No file at all.
    pub none: bool,
}

/// The options of the groups read: name (with `-`) to value and the file it came from (as
/// shown: `~/.my.cnf`). `None` for a name given without a value.
#[derive(Debug, Clone, Default)]
pub struct Options {
    values: BTreeMap<String, (Option<String>, String)>,
    /// Warnings (a world-writable file ignored).
    pub warnings: Vec<String>,
}

impl Options {
    /// An option's value and its file; `None` when unset or given without a value.
    pub fn get(&self, name: &str) -> Option<(&str, &str)> {
        self.values
            .get(name)
            .and_then(|(v, f)| v.as_deref().map(|v| (v, f.as_str())))
    }

    /// All options set with a value (name, value, file).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.values
            .iter()
            .filter_map(|(k, (v, f))| v.as_deref().map(|v| (k.as_str(), v, f.as_str())))
    }
}

/// The files to read, in order.
pub fn files(which: &Which, env: &Env) -> Vec<PathBuf> {
    if which.none {
        return Vec::new();
    }
    if let Some(f) = &which.defaults_file {
        return vec![f.clone()];
    }
    let mut out = Vec::new();
    if env.system_files {
        out.push(PathBuf::from("/etc/my.cnf"));
        out.push(PathBuf::from("/etc/mysql/my.cnf"));
    }
    if let Some(h) = env.get("MARIADB_HOME").or_else(|| env.get("MYSQL_HOME")) {
        out.push(Path::new(h).join("my.cnf"));
    }
    if let Some(f) = &which.extra_file {
        out.push(f.clone());
    }
    if let Some(h) = env.get("HOME") {
        out.push(Path::new(h).join(".my.cnf"));
    }
    out
}

/// Read the option files `which` names, in `env`. A file named by `defaults-file` or
/// `defaults-extra-file` must exist (as the client requires); the default ones may not.
pub fn read(which: &Which, env: &Env) -> Result<Options, String> {
    let mut opts = Options::default();
    for f in files(which, env) {
        let named =
            Some(&f) == which.defaults_file.as_ref() || Some(&f) == which.extra_file.as_ref();
        if named && !f.is_file() {
            return Err(format!("could not open option file {}", f.display()));
        }
        read_file(&f, env, &mut opts, 0)?;
    }
    Ok(opts)
}

fn shown(p: &Path, env: &Env) -> String {
    if let Some(home) = env.get("HOME") {
        if let Ok(rest) = p.strip_prefix(home) {
            return format!("~/{}", rest.display());
        }
    }
    p.display().to_string()
}

/// One file (and what it includes), into `opts`.
fn read_file(path: &Path, env: &Env, opts: &mut Options, depth: usize) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    if depth > 10 {
        return Err(format!("{}: !include nested too deep", path.display()));
    }
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if !meta.is_file() {
        return Ok(());
    }
    if meta.permissions().mode() & 0o002 != 0 {
        opts.warnings.push(format!(
            "World-writable config file '{}' is ignored",
            path.display()
        ));
        return Ok(());
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read option file {}: {e}", path.display()))?;
    let file = shown(path, env);
    let mut in_group = false;
    for (i, raw) in crate::input::without_bom(&text).lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(inc) = line.strip_prefix("!includedir") {
            let dir = Path::new(inc.trim());
            let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
                .map(|d| {
                    d.filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| p.extension().is_some_and(|x| x == "cnf"))
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            for n in names {
                read_file(&n, env, opts, depth + 1)?;
            }
            continue;
        }
        if let Some(inc) = line.strip_prefix("!include") {
            read_file(Path::new(inc.trim()), env, opts, depth + 1)?;
            continue;
        }
        if let Some(g) = line.strip_prefix('[') {
            let g = g
                .split(']')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            in_group = GROUPS.contains(&g.as_str());
            continue;
        }
        if !in_group {
            continue;
        }
        let (name, value) = match line.split_once('=') {
            Some((n, v)) => (
                n.trim(),
                Some(parse_value(v.trim()).map_err(|e| format!("{file}, line {}: {e}", i + 1))?),
            ),
            None => (line.split('#').next().unwrap_or_default().trim(), None),
        };
        let name = name.replace('_', "-").to_ascii_lowercase();
        let name = name.strip_prefix("loose-").unwrap_or(&name).to_string();
        opts.values.insert(name, (value, file.clone()));
    }
    Ok(())
}

/// An option's value as written after `=`: quoted (escapes `\n \t \r \b \s \\ \" \'`) or
/// unquoted up to a `#`.
pub fn parse_value(v: &str) -> Result<String, String> {
    let mut chars = v.chars();
    match chars.next() {
        Some(q @ ('"' | '\'')) => {
            let mut out = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some('r') => out.push('\r'),
                        Some('b') => out.push('\u{8}'),
                        Some('s') => out.push(' '),
                        Some(c) => out.push(c),
                        None => out.push('\\'),
                    },
                    c if c == q => return Ok(out),
                    c => out.push(c),
                }
            }
            Err("unterminated quoted value".into())
        }
        _ => Ok(v
            .split('#')
            .next()
            .unwrap_or_default()
            .trim_end()
            .to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(p, text).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn values() {
        assert_eq!(parse_value("abc # comment").unwrap(), "abc");
        assert_eq!(parse_value("\"a#b c\\\"d\"").unwrap(), "a#b c\"d");
        assert_eq!(parse_value("'x\\sy'").unwrap(), "x y");
        assert!(parse_value("\"open").is_err());
    }

    /// Groups, order of files (later wins), includes, defaults-file alone, no-defaults, and a
    /// world-writable file ignored.
    #[test]
    fn files_groups_and_order() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let conf_d = d.path().join("conf.d");
        std::fs::create_dir(&conf_d).unwrap();
        // saved by a Windows editor: a byte-order mark and CRLF line ends
        write(
            &conf_d.join("b.cnf"),
            "\u{feff}[client]\r\nport=4000\r\n",
            0o644,
        );
        write(&conf_d.join("a.txt"), "[client]\nport=9\n", 0o644);
        write(
            &home.join(".my.cnf"),
            &format!(
                "# mine\n[mysql]\nuser=not-read\n[client]\nuser = home_user\n\
                 password=\"p#w d\"\nloose_ssl_ca=/ca.pem\n[mysqld]\nport=1\n\
                 [ixbench]\ndatabase=bench\n!includedir {}\n",
                conf_d.display()
            ),
            0o600,
        );
        let extra = d.path().join("extra.cnf");
        write(
            &extra,
            "[client-server]\nuser=extra_user\nsocket=/s.sock\n",
            0o644,
        );
        let env = Env::of(&[("HOME", home.to_str().unwrap())]);
        let which = Which {
            extra_file: Some(extra.clone()),
            ..Default::default()
        };
        let o = read(&which, &env).unwrap();
        assert_eq!(o.get("user"), Some(("home_user", "~/.my.cnf")));
        assert_eq!(o.get("password").map(|p| p.0), Some("p#w d"));
        assert_eq!(o.get("ssl-ca").map(|p| p.0), Some("/ca.pem"));
        assert_eq!(o.get("database").map(|p| p.0), Some("bench"));
        assert_eq!(o.get("port").map(|p| p.0), Some("4000"));
        assert_eq!(o.get("socket").map(|p| p.0), Some("/s.sock"));
        // defaults-file: that file only.
        let only = Which {
            defaults_file: Some(extra.clone()),
            ..Default::default()
        };
        let o = read(&only, &env).unwrap();
        assert_eq!(o.get("user").map(|p| p.0), Some("extra_user"));
        assert_eq!(o.get("password"), None);
        let none = Which {
            none: true,
            ..Default::default()
        };
        assert_eq!(read(&none, &env).unwrap().iter().count(), 0);
        // A missing named file is an error; a world-writable one is ignored with a warning.
        let missing = Which {
            defaults_file: Some(d.path().join("nope.cnf")),
            ..Default::default()
        };
        assert!(read(&missing, &env).unwrap_err().contains("nope.cnf"));
        write(&extra, "[client]\nuser=ww\n", 0o666);
        let o = read(&only, &env).unwrap();
        assert_eq!(o.get("user"), None);
        assert!(o.warnings[0].contains("World-writable"), "{:?}", o.warnings);
    }
}
