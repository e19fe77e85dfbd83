//! What differs between the DBMSs: how to find, initialize, start, probe and stop one. Each
//! DBMS implements [`Flavor`] in its own module; the rest of `server` is shared.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Result;

use super::os_user::OsUser;

/// Installed programs of one DBMS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binaries {
    /// The server (`postgres`, `mariadbd`).
    pub server: PathBuf,
    /// The data directory initializer (`initdb`, `mariadb-install-db`).
    pub init: PathBuf,
    /// MariaDB's MyRocks plugin (`ha_rocksdb.so`) when installed.
    pub rocksdb_plugin: Option<PathBuf>,
    /// The install's base directory, for an install given with `--server-bin DIR` (MariaDB
    /// finds its messages, plugins and bootstrap SQL from it); `None` for the system's.
    pub basedir: Option<PathBuf>,
}

/// The per-DBMS part of a local server.
pub trait Flavor: Sync {
    /// Product name for messages (`PostgreSQL`, `MariaDB`).
    fn product(&self) -> &'static str;

    /// The OS account the server runs as when ixbench runs as root.
    fn account(&self) -> &'static str;

    /// Debian package that installs the server.
    fn package(&self) -> &'static str;

    /// Find the installed programs, or fail with one line naming the package to install.
    fn find(&self) -> Result<Binaries>;

    /// The programs of the install whose `bin/` directory is `dir` (`--server-bin DIR`), or
    /// fail with one line saying what is missing there.
    fn find_in(&self, dir: &Path) -> Result<Binaries>;

    /// Check one setting (normalized name: lower case, `_` for `-`) before anything starts.
    fn check_setting(&self, bins: &Binaries, name: &str, value: &str) -> Result<()>;

    /// Every setting the server program knows (normalized: lower case, `_` for `-`), read
    /// from the program itself without starting a server (PostgreSQL `--describe-config`,
    /// MariaDB `--verbose --help`); `None` when it cannot be read. Plugins' settings are not
    /// in it: see [`Flavor::plugin_setting`].
    fn setting_names(&self, bins: &Binaries) -> Option<Vec<String>>;

    /// A setting of a plugin the program's own list leaves out (MariaDB `rocksdb_*`,
    /// `spider_*`), which only a running server can check.
    fn plugin_setting(&self, _name: &str) -> bool {
        false
    }

    /// Whether a setting is consumed when the data directory is created and cannot change
    /// afterwards (PostgreSQL `data_checksums`, `wal_segment_size`).
    fn init_only(&self, name: &str) -> bool;

    /// Initialize an empty data directory `dir`, running as `user` (None: current user), so
    /// that the administrator (and the benchmark user) can log in only with `password`.
    fn init(
        &self,
        bins: &Binaries,
        dir: &Path,
        user: Option<&OsUser>,
        settings: &[(String, String)],
        password: &str,
    ) -> Result<()>;

    /// The Unix socket the server will listen on in `sockdir`, when the path fits in
    /// `sun_path` (and the DBMS can take that directory).
    fn socket(&self, sockdir: &Path, port: u16) -> Option<PathBuf>;

    /// The server command line (program and arguments only; user, environment, stdio and session
    /// are set by the caller).
    fn server_args(
        &self,
        bins: &Binaries,
        dir: &Path,
        port: u16,
        socket: Option<&Path>,
        settings: &[(String, String)],
    ) -> Command;

    /// Whether the server on `port` accepts connections and is the one on `dir` (not another
    /// server that happens to listen there).
    /// `tls`: the server takes TCP connections over TLS only (see [`Flavor::require_tls`]).
    fn ready(&self, port: u16, dir: &Path, password: &str, tls: bool) -> bool;

    /// Create the `ixbench` database.
    fn create_database(&self, port: u16, password: &str, tls: bool) -> Result<()>;

    /// The URL ixbench's targets accept, without the password.
    fn url(&self, port: u16) -> String;

    /// The URL parameters that make a connection TLS, verifying the server's chain and host
    /// name against the root certificate `ca`.
    fn tls_params(&self, ca: &Path) -> String;

    /// The settings that make the server on `dir` use the certificate `cert` and key `key`
    /// (files in `dir`) and take TCP connections over TLS only; a change of the data
    /// directory's files it needs for that (PostgreSQL's pg_hba.conf) is made here.
    fn require_tls(&self, dir: &Path, cert: &Path, key: &Path) -> Result<Vec<(String, String)>>;

    /// The administrator the URL names (`postgres`, `root`).
    fn admin_user(&self) -> &'static str;

    /// The pid file the server writes in `dir`.
    fn pid_file(&self, dir: &Path) -> PathBuf;

    /// Whether `cmdline` (from /proc) is this DBMS's server on `dir`.
    fn owns_cmdline(&self, cmdline: &[String], dir: &Path) -> bool;

    /// The signal for a fast, clean shutdown.
    fn stop_signal(&self) -> nix::sys::signal::Signal;

    /// Whether the server forks child processes that belong to it (PostgreSQL).
    fn has_children(&self) -> bool;
}

/// Normalized setting name: lower case, `-` as `_`, no leading `--`.
pub fn normalize(name: &str) -> String {
    name.trim_start_matches("--")
        .to_ascii_lowercase()
        .replace('-', "_")
}

/// A program by name: the first of `dirs`, then `PATH`, that has it.
pub fn find_program(name: &str, dirs: &[&str]) -> Option<PathBuf> {
    let path_dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.iter()
        .map(PathBuf::from)
        .chain(path_dirs)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// Whether `p` is an executable regular file.
pub fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether a Unix socket path fits in `sockaddr_un.sun_path` (108 bytes with the NUL).
pub fn socket_fits(p: &Path) -> bool {
    p.as_os_str().len() < 108
}
