//! PostgreSQL: `initdb` (superuser `postgres` with a generated password, scram-sha-256 for TCP
//! and socket connections alike, UTF8, C locale) and `postgres` started directly (no pg_ctl),
//! listening on 127.0.0.1 and a socket in a private directory (the data directory, mode 0700).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::dbms::session::{Session, SessionOptions};

use super::flavor::{is_executable, socket_fits, Binaries, Flavor};
use super::os_user::OsUser;
use super::process;

/// Where Debian installs the server binaries of each major version.
const DEBIAN_ROOT: &str = "/usr/lib/postgresql";

/// Settings ixbench sets itself (from `--port` and the data directory).
const RESERVED: &[&str] = &[
    "port",
    "listen_addresses",
    "unix_socket_directories",
    "data_directory",
    "config_file",
    "hba_file",
    "ident_file",
];

/// The PostgreSQL flavor.
pub struct Postgres;

impl Flavor for Postgres {
    fn product(&self) -> &'static str {
        "PostgreSQL"
    }

    fn account(&self) -> &'static str {
        "postgres"
    }

    fn package(&self) -> &'static str {
        "postgresql"
    }

    fn find(&self) -> Result<Binaries> {
        let bindir = debian_bindir(Path::new(DEBIAN_ROOT))
            .or_else(pg_config_bindir)
            .with_context(|| {
                format!(
                    "PostgreSQL server binaries not found (no {DEBIAN_ROOT}/VERSION/bin/initdb, \
                     and pg_config --bindir has none): install the Debian package postgresql"
                )
            })?;
        Ok(Binaries {
            server: bindir.join("postgres"),
            init: bindir.join("initdb"),
            rocksdb_plugin: None,
            basedir: None,
        })
    }

    fn find_in(&self, dir: &Path) -> Result<Binaries> {
        let missing: Vec<&str> = ["initdb", "postgres"]
            .into_iter()
            .filter(|p| !is_executable(&dir.join(p)))
            .collect();
        if !missing.is_empty() {
            bail!(
                "--server-bin {}: no executable {} there (give the bin/ directory of a \
                 PostgreSQL install, the one with initdb and postgres)",
                dir.display(),
                missing.join(" or ")
            );
        }
        Ok(Binaries {
            server: dir.join("postgres"),
            init: dir.join("initdb"),
            rocksdb_plugin: None,
            basedir: None,
        })
    }

    fn check_setting(&self, _bins: &Binaries, name: &str, value: &str) -> Result<()> {
        if RESERVED.contains(&name) {
            bail!(
                "setting {name} is managed by ixbench (it starts the server on 127.0.0.1, the \
                 port given with --port, and a socket in the data directory)"
            );
        }
        initdb_flag(name, value).map(drop)
    }

    fn init_only(&self, name: &str) -> bool {
        matches!(name, "data_checksums" | "wal_segment_size")
    }

    fn setting_names(&self, bins: &Binaries) -> Option<Vec<String>> {
        // one line per setting, its name first, tab-separated
        let out = Command::new(&bins.server)
            .arg("--describe-config")
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split('\t').next())
            .filter(|n| !n.is_empty())
            .map(|n| n.to_ascii_lowercase())
            .collect();
        (!names.is_empty()).then_some(names)
    }

    fn init(
        &self,
        bins: &Binaries,
        dir: &Path,
        user: Option<&OsUser>,
        settings: &[(String, String)],
        password: &str,
    ) -> Result<()> {
        // initdb reads the password from a file and wants an empty data directory: the file
        // goes to a private directory of its own, removed right after.
        let pwdir = super::secret::private_socket_dir(user)?;
        let pwfile = pwdir.join("pw");
        let done = (|| {
            super::secret::write_private(&pwfile, &format!("{password}\n"), user)?;
            let mut cmd = process::command(&bins.init, dir, user);
            cmd.arg("-D")
                .arg(dir)
                .args([
                    "--auth-host=scram-sha-256",
                    "--auth-local=scram-sha-256",
                    "-U",
                    "postgres",
                    "--encoding=UTF8",
                ])
                .arg(format!("--pwfile={}", pwfile.display()))
                .arg("--no-locale")
                // initdb fsyncs ~1000 files one by one: seconds on a busy disk. A throwaway
                // cluster does not need it, and after a crash the server syncs the data directory
                // itself before recovery (recovery_init_sync_method).
                .arg("--no-sync");
            for (name, value) in settings {
                cmd.args(initdb_flag(name, value)?);
            }
            process::run_to_end(&mut cmd, "initdb", &dir.join("init.log"))
        })();
        let _ = std::fs::remove_dir_all(&pwdir);
        done
    }

    fn socket(&self, sockdir: &Path, port: u16) -> Option<PathBuf> {
        let dir = sockdir;
        // unix_socket_directories is a comma-separated list; keep paths it cannot split wrongly.
        let plain = dir
            .to_str()
            .is_some_and(|s| !s.contains([',', '"', ' ', '\t', '\\']));
        let sock = dir.join(format!(".s.PGSQL.{port}"));
        (plain && socket_fits(&sock)).then_some(sock)
    }

    fn server_args(
        &self,
        bins: &Binaries,
        dir: &Path,
        port: u16,
        socket: Option<&Path>,
        settings: &[(String, String)],
    ) -> Command {
        let mut cmd = Command::new(&bins.server);
        let sockdir = socket
            .and_then(|s| s.parent())
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        cmd.arg("-D")
            .arg(dir)
            .arg("-p")
            .arg(port.to_string())
            .args(["-c", "listen_addresses=127.0.0.1"])
            .arg("-c")
            .arg(format!("unix_socket_directories={sockdir}"));
        for (name, value) in settings.iter().filter(|(n, _)| !self.init_only(n)) {
            cmd.arg("-c").arg(format!("{name}={value}"));
        }
        cmd
    }

    fn ready(&self, port: u16, dir: &Path, password: &str, tls: bool) -> bool {
        let Ok(mut c) = admin_session(port, password, tls) else {
            return false;
        };
        c.value("SHOW data_directory")
            .ok()
            .flatten()
            .is_some_and(|d| Path::new(&d) == dir)
    }

    fn create_database(&self, port: u16, password: &str, tls: bool) -> Result<()> {
        let mut c =
            admin_session(port, password, tls).context("connecting to create database ixbench")?;
        c.execute("CREATE DATABASE ixbench")
            .context("CREATE DATABASE ixbench")
    }

    fn url(&self, port: u16) -> String {
        format!("postgres://postgres@127.0.0.1:{port}/ixbench")
    }

    fn tls_params(&self, ca: &Path) -> String {
        format!(
            "sslmode=verify-full&sslrootcert={}",
            crate::dbms::percent_encode(&ca.display().to_string())
        )
    }

    fn require_tls(&self, dir: &Path, cert: &Path, key: &Path) -> Result<Vec<(String, String)>> {
        // TCP over TLS only: initdb's `host` lines become `hostssl` (the socket's `local`
        // lines stay: a Unix socket does not leave the machine).
        let hba = dir.join("pg_hba.conf");
        let text =
            std::fs::read_to_string(&hba).with_context(|| format!("reading {}", hba.display()))?;
        let tls_only: String = text
            .lines()
            .map(|l| match l.strip_prefix("host ") {
                Some(rest) => format!("hostssl {rest}\n"),
                None => format!("{l}\n"),
            })
            .collect();
        std::fs::write(&hba, tls_only).with_context(|| format!("writing {}", hba.display()))?;
        Ok(vec![
            ("ssl".into(), "on".into()),
            ("ssl_cert_file".into(), cert.display().to_string()),
            ("ssl_key_file".into(), key.display().to_string()),
        ])
    }

    fn admin_user(&self) -> &'static str {
        "postgres"
    }

    fn pid_file(&self, dir: &Path) -> PathBuf {
        dir.join("postmaster.pid")
    }

    fn owns_cmdline(&self, cmdline: &[String], dir: &Path) -> bool {
        let is_postgres = cmdline
            .first()
            .is_some_and(|p| p.ends_with("postgres") || p.ends_with("postmaster"));
        is_postgres
            && cmdline
                .windows(2)
                .any(|w| w[0] == "-D" && Path::new(&w[1]) == dir)
    }

    fn stop_signal(&self) -> nix::sys::signal::Signal {
        // SIGINT is PostgreSQL's "fast" shutdown (SIGTERM is "smart": it waits for clients).
        nix::sys::signal::Signal::SIGINT
    }

    fn has_children(&self) -> bool {
        true
    }
}

/// A connection of the superuser to the maintenance database over TCP, in clear (the server
/// has no TLS) or over TLS not verified (`tls`: the server takes TCP over TLS only; the
/// connections after the start verify it, see [`Flavor::tls_params`]; this one only checks
/// which server answers), within 2 s.
fn admin_session(port: u16, password: &str, tls: bool) -> Result<Session> {
    let url = format!(
        "postgres://postgres:{}@127.0.0.1:{port}/postgres?application_name=ixbench-server&sslmode={}",
        crate::dbms::percent_encode(password),
        if tls { "require" } else { "disable" }
    );
    Session::connect(
        &url,
        &SessionOptions::starting_server(Duration::from_secs(2)),
    )
}

/// The bin directory of the highest major version under Debian's `root` that has both initdb
/// and postgres.
fn debian_bindir(root: &Path) -> Option<PathBuf> {
    let mut found: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(root)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version: Option<Vec<u32>> = name.split('.').map(|p| p.parse().ok()).collect();
            let bin = e.path().join("bin");
            let complete =
                is_executable(&bin.join("initdb")) && is_executable(&bin.join("postgres"));
            version.filter(|_| complete).map(|v| (v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// `pg_config --bindir`, when it names a directory with initdb and postgres.
fn pg_config_bindir() -> Option<PathBuf> {
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let bin = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success()
        && is_executable(&bin.join("initdb"))
        && is_executable(&bin.join("postgres")))
    .then_some(bin)
}

/// The initdb option an init-only setting turns into (none for other settings).
fn initdb_flag(name: &str, value: &str) -> Result<Option<String>> {
    match name {
        "data_checksums" => {
            let on = parse_bool(value).with_context(|| format!("data_checksums={value}"))?;
            Ok(on.then(|| "--data-checksums".to_string()))
        }
        "wal_segment_size" => Ok(Some(format!("--wal-segsize={}", wal_segsize_mb(value)?))),
        _ => Ok(None),
    }
}

/// A PostgreSQL boolean (`on`, `off`, `true`, `1`, ...).
fn parse_bool(v: &str) -> Result<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => bail!("expected on or off"),
    }
}

/// `wal_segment_size` as initdb's `--wal-segsize` (MB): `64`, `64MB` or `1GB`.
fn wal_segsize_mb(v: &str) -> Result<u64> {
    let t = v.trim().to_ascii_uppercase();
    let (num, mult) = if let Some(n) = t.strip_suffix("GB") {
        (n, 1024)
    } else if let Some(n) = t.strip_suffix("MB") {
        (n, 1)
    } else {
        (t.as_str(), 1)
    };
    let mb = num
        .trim()
        .parse::<u64>()
        .ok()
        .map(|n| n * mult)
        .filter(|n| n.is_power_of_two() && (1..=1024).contains(n));
    mb.with_context(|| format!("wal_segment_size={v}: expected a power of two from 1MB to 1GB"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highest_complete_version_wins() {
        let t = tempfile::tempdir().unwrap();
        for (v, complete) in [("9.6", true), ("15", true), ("16", false), ("x", true)] {
            let bin = t.path().join(v).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            let progs: &[&str] = if complete {
                &["initdb", "postgres"]
            } else {
                &["initdb"]
            };
            for p in progs {
                let f = bin.join(p);
                std::fs::write(&f, "#!/bin/sh\n").unwrap();
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        assert_eq!(debian_bindir(t.path()), Some(t.path().join("15/bin")));
        assert_eq!(debian_bindir(&t.path().join("none")), None);
    }

    #[test]
    fn init_settings_parse() {
        assert_eq!(wal_segsize_mb("64MB").unwrap(), 64);
        assert_eq!(wal_segsize_mb("1GB").unwrap(), 1024);
        assert_eq!(wal_segsize_mb("16").unwrap(), 16);
        assert!(wal_segsize_mb("3MB").is_err());
        assert!(parse_bool("on").unwrap() && !parse_bool("off").unwrap());
        assert!(parse_bool("maybe").is_err());
    }

    #[test]
    fn cmdline_ownership() {
        let dir = Path::new("/tmp/d");
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let p = Postgres;
        assert!(p.owns_cmdline(
            &argv(&["/usr/lib/postgresql/15/bin/postgres", "-D", "/tmp/d"]),
            dir
        ));
        assert!(!p.owns_cmdline(
            &argv(&["/usr/lib/postgresql/15/bin/postgres", "-D", "/tmp/e"]),
            dir
        ));
        assert!(!p.owns_cmdline(&argv(&["/bin/sleep", "-D", "/tmp/d"]), dir));
    }
}
