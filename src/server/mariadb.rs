//! MariaDB: `mariadb-install-db`, then `mariadbd --no-defaults` with InnoDB and, when the
//! plugin is installed, MyRocks, on 127.0.0.1 and a socket in a private directory. Every start
//! runs `DATADIR/ixbench-init.sql` (`--init-file`, mode 0600) before accepting connections:
//! it gives each `root` account (the administrator and benchmark user) the generated password,
//! which the initializer leaves empty.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::dbms::session::{Session, SessionOptions};
use anyhow::{bail, Context, Result};

use super::flavor::{find_program, is_executable, socket_fits, Binaries, Flavor};
use super::os_user::OsUser;
use super::process;

/// Where Debian's mariadb-plugin-rocksdb installs MyRocks.
const ROCKSDB_PLUGIN: &str = "/usr/lib/mysql/plugin/ha_rocksdb.so";

/// The server's own temp directory inside the data directory. At start-up mariadbd deletes
/// every `#sql*` file in its tmpdir, so servers sharing /tmp delete each other's temp tables;
/// `#` keeps the name from clashing with a database, and `--ignore-db-dirs` hides it.
const TMPDIR: &str = "#tmp";

/// The SQL run at every start (`--init-file`): root's password.
const INIT_FILE: &str = "ixbench-init.sql";

/// Options ixbench sets itself.
const RESERVED: &[&str] = &[
    "port",
    "bind_address",
    "socket",
    "datadir",
    "pid_file",
    "log_error",
    "user",
    "no_defaults",
    "init_file",
    "defaults_file",
    "defaults_extra_file",
];

/// Options that shape the files mariadb-install-db creates, so they are given to it as well.
const INIT_TIME: &[&str] = &[
    "innodb_page_size",
    "innodb_data_file_path",
    "innodb_data_home_dir",
    "innodb_log_group_home_dir",
    "innodb_undo_directory",
    "innodb_undo_tablespaces",
    "lower_case_table_names",
];

/// The MariaDB flavor.
pub struct Mariadb;

/// The MyRocks plugin, when installed (package mariadb-plugin-rocksdb).
pub fn rocksdb_plugin() -> Option<PathBuf> {
    let p = PathBuf::from(ROCKSDB_PLUGIN);
    p.is_file().then_some(p)
}

impl Flavor for Mariadb {
    fn product(&self) -> &'static str {
        "MariaDB"
    }

    fn account(&self) -> &'static str {
        "mysql"
    }

    fn package(&self) -> &'static str {
        "mariadb-server"
    }

    fn find(&self) -> Result<Binaries> {
        let dirs = ["/usr/sbin", "/usr/bin"];
        match (
            find_program("mariadbd", &dirs),
            find_program("mariadb-install-db", &dirs),
        ) {
            (Some(server), Some(init)) => Ok(Binaries {
                server,
                init,
                rocksdb_plugin: rocksdb_plugin(),
                basedir: None,
            }),
            _ => bail!(
                "MariaDB server binaries not found (mariadbd and mariadb-install-db in /usr/sbin, \
                 /usr/bin or PATH): install the Debian package mariadb-server \
                 (and mariadb-plugin-rocksdb for MyRocks)"
            ),
        }
    }

    fn find_in(&self, dir: &Path) -> Result<Binaries> {
        // A tarball has bin/mariadbd and scripts/mariadb-install-db; Debian has
        // /usr/sbin/mariadbd and /usr/bin/mariadb-install-db.
        let base = dir.parent().unwrap_or(dir).to_path_buf();
        let first = |names: &[&str], dirs: &[PathBuf]| {
            dirs.iter()
                .flat_map(|d| names.iter().map(move |n| d.join(n)))
                .find(|p| is_executable(p))
        };
        let server = first(
            &["mariadbd", "mysqld"],
            &[dir.to_path_buf(), base.join("sbin")],
        );
        let init = first(
            &["mariadb-install-db", "mysql_install_db"],
            &[dir.to_path_buf(), base.join("scripts"), base.join("bin")],
        );
        let (Some(server), Some(init)) = (server, init) else {
            bail!(
                "--server-bin {}: no executable mariadbd (or mysqld) and mariadb-install-db \
                 there or in ../sbin, ../scripts, ../bin (give the bin/ directory of a MariaDB \
                 install)",
                dir.display()
            );
        };
        let plugin = ["lib/plugin", "lib/mysql/plugin", "lib64/plugin"]
            .iter()
            .map(|d| base.join(d).join("ha_rocksdb.so"))
            .find(|p| p.is_file());
        Ok(Binaries {
            server,
            init,
            rocksdb_plugin: plugin,
            basedir: Some(base),
        })
    }

    fn check_setting(&self, bins: &Binaries, name: &str, _value: &str) -> Result<()> {
        if RESERVED.contains(&name) {
            bail!(
                "option {name} is managed by ixbench (it starts the server with --no-defaults on \
                 127.0.0.1, the port given with --port, and its files in the data directory)"
            );
        }
        if name.starts_with("rocksdb") && bins.rocksdb_plugin.is_none() {
            bail!(
                "option {name} needs MyRocks, which is not installed ({ROCKSDB_PLUGIN} is \
                 missing): install the Debian package mariadb-plugin-rocksdb"
            );
        }
        Ok(())
    }

    fn init_only(&self, _name: &str) -> bool {
        false
    }

    fn setting_names(&self, bins: &Binaries) -> Option<Vec<String>> {
        // `--verbose --help` ends with a table of every variable and option:
        // "Variables (--variable-name=value)", a header line, dashes, then `name  value` lines
        let out = Command::new(&bins.server)
            .args(["--no-defaults", "--verbose", "--help"])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let table = text.split("Variables (--variable-name=value)").nth(1)?;
        let names: Vec<String> = table
            .lines()
            .skip_while(|l| !l.starts_with("----"))
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .filter_map(|l| l.split_whitespace().next())
            .map(|n| n.to_ascii_lowercase().replace('-', "_"))
            .collect();
        (!names.is_empty()).then_some(names)
    }

    fn plugin_setting(&self, name: &str) -> bool {
        name.starts_with("rocksdb_") || name.starts_with("spider_")
    }

    fn init(
        &self,
        bins: &Binaries,
        dir: &Path,
        user: Option<&OsUser>,
        settings: &[(String, String)],
        password: &str,
    ) -> Result<()> {
        // Runs as the server's user already, so no --user (which would need root).
        let mut cmd = process::command(&bins.init, dir, user);
        if let Some(tmp) = private_tmpdir(dir) {
            std::fs::create_dir(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
            if let Some(u) = user {
                u.chown(&tmp)?;
            }
            // The bootstrap server takes its tmpdir from TMPDIR (the script would split a path
            // given as an option at spaces).
            cmd.env("TMPDIR", &tmp);
        }
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", dir.display()));
        if let Some(b) = &bins.basedir {
            cmd.arg(format!("--basedir={}", b.display()));
        }
        cmd.args([
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ]);
        for (name, value) in settings
            .iter()
            .filter(|(n, _)| INIT_TIME.contains(&n.as_str()))
        {
            cmd.arg(format!("--{name}={value}"));
        }
        process::run_to_end(&mut cmd, "mariadb-install-db", &dir.join("init.log"))?;
        // The initializer makes root@localhost, @127.0.0.1, @::1 and @HOSTNAME with an empty
        // password (and no anonymous accounts without a test database). One statement on one
        // line, as --init-file reads it; the password is hex, nothing to quote.
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().replace(['\'', '\\'], ""))
            .unwrap_or_default();
        let mut hosts = vec!["localhost", "127.0.0.1", "::1"];
        if !host.is_empty() && !hosts.contains(&host.as_str()) {
            hosts.push(&host);
        }
        let users: Vec<String> = hosts
            .iter()
            .map(|h| format!("'root'@'{h}' IDENTIFIED BY '{password}'"))
            .collect();
        let sql = format!("ALTER USER IF EXISTS {};\n", users.join(", "));
        super::secret::write_private(&dir.join(INIT_FILE), &sql, user)
    }

    fn socket(&self, sockdir: &Path, _port: u16) -> Option<PathBuf> {
        let inside = sockdir.join("mysqld.sock");
        socket_fits(&inside).then_some(inside)
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
        // --no-defaults must come first.
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", dir.display()))
            .arg(format!("--port={port}"))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--pid-file={}", self.pid_file(dir).display()))
            .arg(format!("--log-error={}", dir.join("server.log").display()));
        if let Some(b) = &bins.basedir {
            cmd.arg(format!("--basedir={}", b.display()));
            if let Some(p) = bins.rocksdb_plugin.as_deref().and_then(Path::parent) {
                cmd.arg(format!("--plugin-dir={}", p.display()));
            }
        }
        if let Some(tmp) = private_tmpdir(dir) {
            cmd.arg(format!("--tmpdir={}", tmp.display()))
                .arg(format!("--ignore-db-dirs={TMPDIR}"));
        }
        if let Some(s) = socket {
            cmd.arg(format!("--socket={}", s.display()));
        }
        let init = dir.join(INIT_FILE);
        if init.is_file() {
            cmd.arg(format!("--init-file={}", init.display()));
        }
        if bins.rocksdb_plugin.is_some() {
            cmd.arg("--plugin-load-add=ha_rocksdb.so");
        }
        for (name, value) in settings {
            cmd.arg(format!("--{name}={value}"));
        }
        cmd
    }

    fn ready(&self, port: u16, dir: &Path, password: &str, tls: bool) -> bool {
        let Ok(mut c) = admin_session(port, password, tls) else {
            return false;
        };
        c.value("SELECT @@datadir")
            .ok()
            .flatten()
            .is_some_and(|d| Path::new(d.trim_end_matches('/')) == dir)
    }

    fn create_database(&self, port: u16, password: &str, tls: bool) -> Result<()> {
        let mut c =
            admin_session(port, password, tls).context("connecting to create database ixbench")?;
        // utf8mb4 as Debian's configuration and MySQL 8 have it (--no-defaults leaves latin1).
        c.execute("CREATE DATABASE ixbench CHARACTER SET utf8mb4")
            .context("CREATE DATABASE ixbench")
    }

    fn url(&self, port: u16) -> String {
        format!("mysql://root@127.0.0.1:{port}/ixbench")
    }

    fn tls_params(&self, ca: &Path) -> String {
        format!(
            "ssl-mode=VERIFY_IDENTITY&ssl-ca={}",
            crate::dbms::percent_encode(&ca.display().to_string())
        )
    }

    fn require_tls(&self, _dir: &Path, cert: &Path, key: &Path) -> Result<Vec<(String, String)>> {
        // TCP over TLS only; the Unix socket stays open in clear (it does not leave the machine).
        Ok(vec![
            ("ssl_cert".into(), cert.display().to_string()),
            ("ssl_key".into(), key.display().to_string()),
            ("require_secure_transport".into(), "ON".into()),
        ])
    }

    fn admin_user(&self) -> &'static str {
        "root"
    }

    fn pid_file(&self, dir: &Path) -> PathBuf {
        dir.join("mariadbd.pid")
    }

    fn owns_cmdline(&self, cmdline: &[String], dir: &Path) -> bool {
        let is_server = cmdline
            .first()
            .is_some_and(|p| p.ends_with("mariadbd") || p.ends_with("mysqld"));
        let datadir = format!("--datadir={}", dir.display());
        is_server && cmdline.contains(&datadir)
    }

    fn stop_signal(&self) -> nix::sys::signal::Signal {
        nix::sys::signal::Signal::SIGTERM
    }

    fn has_children(&self) -> bool {
        false
    }
}

/// The server's private tmpdir, unless the path has a `:` (tmpdir is a `:`-separated list).
fn private_tmpdir(dir: &Path) -> Option<PathBuf> {
    let tmp = dir.join(TMPDIR);
    (!tmp.as_os_str().to_string_lossy().contains(':')).then_some(tmp)
}

/// A connection of root over TCP (never the socket: the port is what is checked), in clear or
/// over TLS not verified (`tls`: the server requires it; the connections after the start
/// verify it, see [`Flavor::tls_params`]; this one only checks which server answers), to the
/// `mysql` schema (there before `ixbench` is created), within 2 s.
fn admin_session(port: u16, password: &str, tls: bool) -> Result<Session> {
    let url = format!(
        "mysql://root:{}@127.0.0.1:{port}/mysql?ssl-mode={}&no-defaults",
        crate::dbms::percent_encode(password),
        if tls { "REQUIRED" } else { "DISABLED" }
    );
    Session::connect(
        &url,
        &SessionOptions::starting_server(Duration::from_secs(2)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_ownership() {
        let dir = Path::new("/tmp/m");
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let m = Mariadb;
        assert!(m.owns_cmdline(
            &argv(&["/usr/sbin/mariadbd", "--no-defaults", "--datadir=/tmp/m"]),
            dir
        ));
        assert!(!m.owns_cmdline(&argv(&["/usr/sbin/mariadbd", "--datadir=/tmp/mm"]), dir));
        assert!(!m.owns_cmdline(&argv(&["/bin/true", "--datadir=/tmp/m"]), dir));
    }

    #[test]
    fn reserved_and_rocksdb_options() {
        let bins = Binaries {
            server: "/x/mariadbd".into(),
            init: "/x/mariadb-install-db".into(),
            rocksdb_plugin: None,
            basedir: None,
        };
        assert!(Mariadb.check_setting(&bins, "port", "1").is_err());
        let e = Mariadb
            .check_setting(&bins, "rocksdb_block_cache_size", "1G")
            .unwrap_err()
            .to_string();
        assert!(e.contains("mariadb-plugin-rocksdb"), "{e}");
        Mariadb
            .check_setting(&bins, "innodb_buffer_pool_size", "1G")
            .unwrap();
    }
}
