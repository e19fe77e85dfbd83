//! What changed between two runs besides the figures: DBMS version and engine, settings, the run
//! configuration, the ixbench version. Settings that name where things are rather than how the
//! DBMS behaves (ports, paths, data directory, sockets, pid and log files, temp directories,
//! host names, generated names and positions) differ between any two runs and are hidden unless
//! `--all-settings` is given.

use serde_json::Value;

use super::model::{show, Run};

/// True for a setting that says where or who rather than how: hidden by default.
pub fn is_environment(name: &str, value: &str) -> bool {
    let n = name.to_ascii_lowercase();
    const EXACT: [&str; 14] = [
        "port",
        "socket",
        "datadir",
        "tmpdir",
        "basedir",
        "hostname",
        "application_name",
        "listen_addresses",
        "bind_address",
        "timestamp",
        "pseudo_thread_id",
        "out",
        "url",
        "location",
    ];
    const SUFFIXES: [&str; 15] = [
        "_port",
        "_socket",
        "_file",
        "_filename",
        "_dir",
        "_datadir",
        "_tmpdir",
        "_path",
        "_host",
        "_address",
        "_addresses",
        "_uuid",
        "_uid",
        "_basename",
        "_keyfile",
    ];
    let v = value.trim();
    EXACT.contains(&n.as_str())
        || SUFFIXES.iter().any(|s| n.ends_with(s))
        || n.contains("directory")
        || n.contains("directories")
        || n.contains("pid_file")
        // MariaDB GTID positions and states change with every write.
        || (n.starts_with("gtid_") && (n.ends_with("_pos") || n.ends_with("_state")))
        // Values that are paths or URLs.
        || v.starts_with('/')
        || v.contains(":/")
}

/// One difference: `name: old -> new`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What (`synchronous`, `config plan.rows`, `target`...).
    pub name: String,
    /// Base value.
    pub old: String,
    /// New value.
    pub new: String,
    /// Hidden unless `--all-settings`.
    pub environment: bool,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} -> {}", self.name, self.old, self.new)
    }
}

/// Flatten a JSON object into `a.b.c` keys and displayed values (arrays whole, as JSON).
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        other => out.push((prefix.to_string(), show(other))),
    }
}

/// Name/value pairs that differ (a name missing on one side shows as `(absent)`).
fn diff_pairs(
    old: &[(String, String)],
    new: &[(String, String)],
    prefix: &str,
    out: &mut Vec<Change>,
) {
    let absent = "(absent)".to_string();
    let mut names: Vec<&String> = old.iter().map(|(k, _)| k).collect();
    for (k, _) in new {
        if !names.contains(&k) {
            names.push(k);
        }
    }
    for k in names {
        let o = old.iter().find(|(n, _)| n == k).map(|(_, v)| v);
        let n = new.iter().find(|(n, _)| n == k).map(|(_, v)| v);
        if o == n {
            continue;
        }
        let last = k.rsplit('.').next().unwrap_or(k);
        let environment = is_environment(last, o.unwrap_or(&absent))
            || is_environment(last, n.unwrap_or(&absent));
        out.push(Change {
            name: format!("{prefix}{k}"),
            old: o.unwrap_or(&absent).clone(),
            new: n.unwrap_or(&absent).clone(),
            environment,
        });
    }
}

/// The configuration with its step list as the steps' names (`l.i0,l.x,l.i1`): the details of
/// each step follow from the other settings (`plan.rows2`...), which show on their own.
fn step_names(config: &Value) -> Value {
    let mut c = config.clone();
    if let Some(steps) = c.get_mut("steps") {
        if let Some(list) = steps.as_array() {
            let names: Vec<String> = list
                .iter()
                .map(|s| s["name"].as_str().unwrap_or("?").to_string())
                .collect();
            *steps = Value::String(names.join(","));
        }
    }
    c
}

/// Settings present on one side only, by prefix (`rocksdb_*` when a plugin is loaded on one
/// side): more than 3 of one prefix become one line with their count.
pub fn group_absent(changes: Vec<Change>) -> Vec<Change> {
    let absent = |c: &Change| c.old == "(absent)" || c.new == "(absent)";
    let prefix = |c: &Change| -> Option<String> {
        absent(c).then(|| c.name.split('_').next().unwrap_or("").to_string())
    };
    let mut out: Vec<Change> = Vec::new();
    for c in &changes {
        let Some(p) = prefix(c) else {
            out.push(c.clone());
            continue;
        };
        let same: Vec<&Change> = changes
            .iter()
            .filter(|d| prefix(d).as_deref() == Some(p.as_str()) && d.old == c.old)
            .collect();
        if same.len() <= 3 {
            out.push(c.clone());
        } else if std::ptr::eq(same[0], c) {
            let (old, new) = if c.old == "(absent)" {
                ("(absent)".to_string(), "present".to_string())
            } else {
                ("present".to_string(), "(absent)".to_string())
            };
            out.push(Change {
                name: format!("{p}_* ({} settings)", same.len()),
                old,
                new,
                environment: false,
            });
        }
    }
    out
}

/// Everything that differs between `base` and `new`, shown or hidden.
pub fn changes(base: &Run, new: &Run) -> Vec<Change> {
    let mut out = Vec::new();
    let mut top = |name: &str, o: String, n: String| {
        if o != n {
            out.push(Change {
                name: name.into(),
                old: o,
                new: n,
                environment: false,
            });
        }
    };
    top(
        "target",
        format!("{} {}", base.kind, base.version),
        format!("{} {}", new.kind, new.version),
    );
    let engine = |r: &Run| r.engine.clone().unwrap_or_else(|| "none".into());
    top("engine", engine(base), engine(new));
    top(
        "ixbench",
        base.ixbench_version.clone(),
        new.ixbench_version.clone(),
    );
    diff_pairs(&base.settings, &new.settings, "", &mut out);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    flatten("", &step_names(&base.config), &mut a);
    flatten("", &step_names(&new.config), &mut b);
    // How long the set-up took (`like_table.seconds`, `copy.seconds`: the table the index lab
    // made) is measured, not set: it differs between any two runs.
    let set = |p: &(String, String)| !p.0.ends_with(".seconds");
    a.retain(set);
    b.retain(set);
    diff_pairs(&a, &b, "config ", &mut out);
    out
}

/// Whether the run's own command line set the setting `name` (`--set NAME=...`,
/// `--sqlite-pragma NAME=...`, or a side's option of `ixbench ab`).
fn set_by(run: &Run, name: &str) -> bool {
    let want = format!("{}=", name.to_ascii_lowercase());
    run.command_line.iter().any(|a| {
        let a = a.to_ascii_lowercase();
        a.starts_with(&want) || a.contains(&format!("={want}")) || a.contains(&format!(" {want}"))
    })
}

/// The DBMS settings among `changes` that differ only because the versions differ: the runs'
/// DBMS versions differ and neither run set the setting on its command line (a new version's
/// defaults, settings a version added or removed). Returns the other changes and the number of
/// those left out; with the same version nothing is left out.
pub fn split_version_defaults(base: &Run, new: &Run, changes: Vec<Change>) -> (Vec<Change>, usize) {
    if base.kind == new.kind && base.version == new.version {
        return (changes, 0);
    }
    let mut left_out = 0;
    let kept = changes
        .into_iter()
        .filter(|c| {
            let setting = !["target", "engine", "ixbench"].contains(&c.name.as_str())
                && !c.name.starts_with("config ");
            let default = setting && !set_by(base, &c.name) && !set_by(new, &c.name);
            left_out += default as usize;
            !default
        })
        .collect();
    (kept, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_of_a_plugin_are_one_line() {
        let ch = |n: &str, o: &str, v: &str| Change {
            name: n.into(),
            old: o.into(),
            new: v.into(),
            environment: false,
        };
        let mut all = vec![ch("synchronous", "1", "2")];
        for i in 0..5 {
            all.push(ch(&format!("rocksdb_x{i}"), "(absent)", "ON"));
        }
        all.push(ch("aria_a", "(absent)", "1"));
        let g = group_absent(all);
        let shown: Vec<String> = g.iter().map(|c| c.to_string()).collect();
        assert_eq!(
            shown,
            [
                "synchronous: 1 -> 2",
                "rocksdb_* (5 settings): (absent) -> present",
                "aria_a: (absent) -> 1"
            ]
        );
    }

    #[test]
    fn a_measured_set_up_time_in_the_config_is_not_a_change() {
        let run = |secs: f64, rows: u64| {
            super::super::model::from_json(
                "r",
                &serde_json::json!({"builds": [], "target": {"kind": "sqlite", "version": "3"},
                    "config": {"like_table": {"rows": rows, "seconds": secs}}}),
            )
            .unwrap()
        };
        let names = |a: &Run, b: &Run| -> Vec<String> {
            changes(a, b).into_iter().map(|c| c.name).collect()
        };
        assert!(names(&run(11.9, 10), &run(3.4, 10)).is_empty());
        assert_eq!(
            names(&run(11.9, 10), &run(3.4, 20)),
            ["config like_table.rows"]
        );
    }

    #[test]
    fn environment_settings_are_recognised() {
        for (n, v) in [
            ("port", "43011"),
            ("data_directory", "/tmp/x/postgres-data"),
            ("unix_socket_directories", "/tmp/x"),
            ("hba_file", "/tmp/x/pg_hba.conf"),
            ("krb_server_keyfile", "FILE:/etc/krb5.keytab"),
            ("application_name", "ixbench-15532"),
            ("socket", "/run/mysqld/mysqld.sock"),
            ("pid_file", "/tmp/x/mariadb.pid"),
            ("log_error", "/tmp/x/error.log"),
            ("general_log_file", "host.log"),
            ("tmpdir", "/tmp"),
            ("hostname", "box"),
            ("gtid_binlog_pos", "0-1-5"),
            ("innodb_buffer_pool_filename", "ib_buffer_pool"),
            ("server_uid", "jdRGRKTbOOj2oK/dvhSpj+o5I+A="),
            ("rocksdb_wal_dir", ""),
        ] {
            assert!(is_environment(n, v), "{n}={v}");
        }
        for (n, v) in [
            ("synchronous", "2"),
            ("cache_size", "-262144"),
            ("innodb_log_file_size", "100663296"),
            ("shared_buffers", "128MB"),
            ("max_files_per_process", "1000"),
            ("innodb_support_xa", "ON"),
            ("gtid_strict_mode", "OFF"),
            ("secondary_indexes", "3"),
        ] {
            assert!(!is_environment(n, v), "{n}={v}");
        }
    }
}
