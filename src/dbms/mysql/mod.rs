//! MySQL and MariaDB over the MySQL protocol, with the InnoDB or the MyRocks (RocksDB) engine.
//!
//! - URL: `mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (`mariadb://` is the same), or a Unix
//!   socket with `?socket=/path/mysqld.sock`; TLS with `ssl-mode=`, `ssl-ca=`, `ssl-cert=`,
//!   `ssl-key=` as the MySQL client has them (see [`super::mywire`]). What the URL leaves out
//!   comes from the option files, then `MYSQL_PWD`/`MYSQL_HOST`/`MYSQL_TCP_PORT`/
//!   `MYSQL_UNIX_PORT`, then the defaults ([`ServerUrl::resolve`], [`super::mycnf`]). The
//!   password is never printed nor stored ([`TargetInfo::location`] has none; the notes say
//!   where it came from). A TCP URL stays on TCP (never switched to the server's socket on
//!   loopback).
//! - One connection per worker (no pool), over ixbench's own blocking client
//!   ([`super::mywire`]), which also sends the KILL QUERY of a stop request and carries
//!   ixbench's own connections (servers' start-up, Galera's status: see [`super::session`]).
//! - Hot path: server-side prepared statements and the binary protocol. Each connection holds
//!   the handles of its prepared statements, so an execution neither builds, parses nor hashes
//!   SQL text. An insert is one multi-row INSERT in autocommit (an explicit
//!   transaction only when a batch needs more than 65535 parameters); deleting the oldest rows
//!   is one transaction: the PK of the n-th oldest row, then a PK-range DELETE.
//! - Range queries carry `FORCE INDEX`, as the insert benchmark's do on MySQL.
//! - Row counters (`Innodb_rows_*`, `Rocksdb_rows_*`) are server-global: anything else the
//!   server does at the same time is included.
//! - Index lab (`ixbench index`): all the indexes of a build in one `ALTER TABLE t ADD INDEX
//!   a (...), ADD INDEX b (...)` (InnoDB builds them from one scan of the clustered index;
//!   MyRocks scans once per index). Blocking builds take `LOCK=SHARED` (reads go on, writes
//!   wait, like PostgreSQL's plain CREATE INDEX); online builds `LOCK=NONE` on InnoDB, and
//!   `LOCK=SHARED` on MyRocks, which refuses `LOCK=NONE` (its in-place ADD INDEX blocks
//!   writes; the run's notes say so). The statements name no `ALGORITHM`: MariaDB's session
//!   variable `alter_algorithm` decides, so it can be swept as a knob; at its default the
//!   server builds in place without copying the table. Knob scopes come from
//!   `information_schema.SYSTEM_VARIABLES` (session, dynamic global, or read-only = restart,
//!   e.g. `innodb_sort_buffer_size`); progress from `information_schema.PROCESSLIST` and
//!   `Innodb_onlineddl_pct_progress`; rebuilds are `ALTER TABLE t ENGINE=...` and `OPTIMIZE
//!   TABLE t`.

pub mod ddl;
pub mod dialect;
pub mod stats;
pub mod tools;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::mycnf;
use super::mywire::{self, MyWire, MyWireError, Prepared};
use crate::dbms::FigureClock;
use crate::deadline::{Deadline, Since};

use super::ddl::{Algorithm, DdlDialect};
use super::registry::{DdlForms, ErrorClasses, Kind};
use super::{
    Admin, Conn, Dbms, Driver, IndexLab, IndexSpec, KnobScope, MaintAction, QuietProbe,
    RowCounters, Sizes, SqlDialect, Stmt, TargetInfo, TargetOptions, TxnKind, Value as DbValue,
    QUIET_SETTLE,
};

/// Most bind parameters one prepared statement may have (the protocol counts them in 2 bytes).
pub const MAX_PARAMS: usize = 65_535;

/// Maintenance waits (dirty-page flush, compaction) give up after this long.
const MAINT_DEADLINE: Duration = Duration::from_secs(3600);

/// How often maintenance polls the server while it waits.
const POLL: Duration = Duration::from_millis(200);

/// MySQL error codes.
mod code {
    pub const ACCESS_DENIED_DB: u16 = 1044;
    pub const ACCESS_DENIED: u16 = 1045;
    pub const BAD_DB: u16 = 1049;
    pub const TABLE_ACCESS_DENIED: u16 = 1142;
    pub const SPECIFIC_ACCESS_DENIED: u16 = 1227;
    /// Unknown table (e.g. an information_schema view this server lacks).
    pub const UNKNOWN_TABLE: u16 = 1109;
    pub const LOCK_WAIT_TIMEOUT: u16 = 1205;
    pub const LOCK_DEADLOCK: u16 = 1213;
    /// "Record has changed since last read" (MariaDB snapshot isolation).
    pub const CHECKREAD: u16 = 1020;
    /// "Got error %d from storage engine".
    pub const GET_ERRNO: u16 = 1030;
    /// "Got error %d during COMMIT".
    pub const ERROR_DURING_COMMIT: u16 = 1180;
    /// "Got error %d '%s' from %s".
    pub const GET_ERRMSG: u16 = 1296;
    /// "Variable '%s' is a GLOBAL variable".
    pub const GLOBAL_VARIABLE: u16 = 1238;
    /// "Unknown system variable '%s'".
    pub const UNKNOWN_SYSTEM_VARIABLE: u16 = 1193;
}

/// The storage engine of the benchmark tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// InnoDB (the default).
    InnoDb,
    /// MyRocks (`ha_rocksdb`).
    RocksDb,
}

impl Engine {
    /// The engine `--engine` names (`innodb`, the default, or `rocksdb`).
    pub fn parse(name: Option<&str>) -> Result<Self> {
        match name.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
            None | Some("innodb") => Ok(Engine::InnoDb),
            Some("rocksdb") | Some("myrocks") => Ok(Engine::RocksDb),
            Some(other) => bail!("unknown engine {other:?}: expected innodb or rocksdb"),
        }
    }

    /// Name as results show it (`InnoDB`, `RocksDB`).
    pub fn name(self) -> &'static str {
        match self {
            Engine::InnoDb => "InnoDB",
            Engine::RocksDb => "RocksDB",
        }
    }

    /// Name in `ENGINE=` and `information_schema.ENGINES`.
    pub fn sql_name(self) -> &'static str {
        match self {
            Engine::InnoDb => "InnoDB",
            Engine::RocksDb => "ROCKSDB",
        }
    }
}

/// A parsed `mysql://` / `mariadb://` URL. The password is kept out of `Debug` and of every
/// text this type makes.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerUrl {
    /// `mysql` or `mariadb`.
    pub scheme: String,
    /// User name.
    pub user: String,
    password: Option<String>,
    /// Host name or address (`localhost` when only a socket is given).
    pub host: String,
    /// TCP port (3306 unless given).
    pub port: u16,
    /// Database (schema) the benchmark tables go to.
    pub database: String,
    /// Unix socket, when given with `?socket=`.
    pub socket: Option<String>,
    /// TLS parameters (`ssl-mode`, `ssl-ca`, `ssl-cert`, `ssl-key`).
    pub tls: mywire::TlsParams,
    /// What the results say of the settings: where the password came from (never the
    /// password), warnings of reading the option files.
    pub notes: Vec<String>,
}

impl fmt::Debug for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ServerUrl({})", self.location())
    }
}

impl ServerUrl {
    /// Parse `url` alone: `env_password` (from `MYSQL_PWD`) is used when the URL has no
    /// password; no option file is read. Error messages never contain the password.
    pub fn parse(url: &str, env_password: Option<String>) -> Result<Self> {
        let pw = env_password.unwrap_or_default();
        Self::resolve(url, &mycnf::Env::of(&[("MYSQL_PWD", &pw)]))
    }

    /// Parse `url` and fill what it leaves out as the MySQL client does (see [`super::mycnf`]):
    /// the URL, then the option files (`?defaults-file=`, `?defaults-extra-file=`,
    /// `?no-defaults`), then `MYSQL_PWD`, `MYSQL_HOST`, `MYSQL_TCP_PORT`, `MYSQL_UNIX_PORT`,
    /// then the defaults (the OS user, `localhost`, 3306). A URL naming `root` of a throwaway
    /// server ixbench started at its loopback port takes nothing from files or the
    /// environment: its generated password. Error messages never contain the password.
    pub fn resolve(url: &str, env: &mycnf::Env) -> Result<Self> {
        let shown = super::redact_url(url);
        let bad = |why: &str| {
            anyhow::anyhow!(
                "invalid MySQL URL {shown}: {why} (percent-encode special characters in the \
                 user and password, e.g. @ as %40, : as %3A, / as %2F, ? as %3F, % as %25)"
            )
        };
        let decode =
            |s: &str, what: &str| super::percent_decode(s, what).map_err(|e| bad(&e.to_string()));
        // The user part first (see split_url: a password may hold any character), then the
        // query, host and database from what follows it.
        let parts =
            super::split_url(url).ok_or_else(|| bad("expected mysql://USER@HOST:PORT/DATABASE"))?;
        let scheme = parts.scheme;
        if !KIND.schemes.contains(&scheme) {
            return Err(bad("the scheme must be mysql:// or mariadb://"));
        }
        let (hostpath, query) = match parts.rest.split_once('?') {
            Some((m, q)) => (m, Some(q)),
            None => (parts.rest, None),
        };
        let (hostport, path) = match hostpath.split_once('/') {
            Some((h, p)) => (h, p),
            None => (hostpath, ""),
        };
        let user = match parts.user {
            Some(u) => decode(u, "user")?,
            None => String::new(),
        };
        let password = match parts.password {
            Some(p) => Some(decode(p, "password")?),
            None => None,
        };
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| bad("unclosed [ in the host"))?;
            let port = match after.strip_prefix(':') {
                Some(p) => Some(p),
                None if after.is_empty() => None,
                None => return Err(bad("unexpected text after the IPv6 address")),
            };
            (format!("[{h}]"), port)
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (hostport.to_string(), None),
            }
        };
        let parse_port = |p: &str| {
            p.parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| bad(&format!("invalid port {p:?}")))
        };
        let port = port.map(&parse_port).transpose()?;
        let database = decode(path, "database")?;
        let mut socket = None;
        let mut which = mycnf::Which::default();
        let mut url_tls = Vec::new();
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = decode(v, k)?;
            match k {
                "socket" if !v.is_empty() => socket = Some(v),
                "socket" => return Err(bad("empty socket path")),
                "defaults-file" => which.defaults_file = Some(v.into()),
                "defaults-extra-file" => which.extra_file = Some(v.into()),
                "no-defaults" => which.none = true,
                other => url_tls.push((other.to_string(), v)),
            }
        }
        // ixbench's own throwaway server: the URL and its generated password only.
        let own = (user == "root")
            .then(|| match &socket {
                Some(s) => Path::new(s)
                    .parent()
                    .and_then(super::throwaway::password_for_socket_dir),
                None if matches!(host.as_str(), "127.0.0.1" | "localhost" | "[::1]") => {
                    port.and_then(super::throwaway::password_for_port)
                }
                None => None,
            })
            .flatten();
        let mut notes = Vec::new();
        let mut tls = mywire::TlsParams::default();
        let (user, password, host, port, socket, database, password_from) = if let Some(pw) = own {
            // Its generated password, given in the URL (--target mariadb) or not.
            let from = if password.as_ref().is_some_and(|p| *p != pw) {
                "the URL"
            } else {
                "the throwaway server ixbench started"
            };
            (
                user,
                password.or(Some(pw)),
                host,
                port.unwrap_or(3306),
                socket,
                database,
                from.to_string(),
            )
        } else {
            let files = mycnf::read(&which, env).map_err(|e| bad(&e))?;
            for w in &files.warnings {
                eprintln!("ixbench: WARNING: {w}");
                notes.push(format!("WARNING: {w}"));
            }
            let opt = |k: &str| files.get(k);
            // TLS: the option files' first, the URL's over them. The files serve every
            // client: a TLS option ixbench's client lacks is left out and said, not refused.
            for (k, v, file) in files.iter() {
                if matches!(k, "ssl-mode" | "ssl-ca" | "ssl-cert" | "ssl-key") {
                    tls.take(k, v).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
                } else if k.starts_with("ssl") || k == "tls-version" {
                    notes.push(format!(
                        "{k} in {file} is not used: ixbench's MySQL client takes ssl-mode, \
                         ssl-ca, ssl-cert and ssl-key"
                    ));
                }
            }
            let from_env = |var: &str| env.get(var).map(|v| (v.to_string(), var.to_string()));
            let from_file = |k: &str| opt(k).map(|(v, f)| (v.to_string(), f.to_string()));
            let user = if user.is_empty() {
                from_file("user")
                    .map(|u| u.0)
                    .or_else(|| env.get("USER").map(str::to_string))
                    .ok_or_else(|| {
                        bad("no user (mysql://USER@HOST:PORT/DATABASE, or user= in an option file)")
                    })?
            } else {
                user
            };
            let (password, password_from) = match password {
                Some(p) => (Some(p), "the URL".to_string()),
                None => match from_file("password").or_else(|| from_env("MYSQL_PWD")) {
                    Some((p, from)) => (Some(p), from),
                    None => (None, String::new()),
                },
            };
            let mut socket = socket;
            let host = if host.is_empty() && socket.is_none() {
                let h = from_file("host")
                    .or_else(|| from_env("MYSQL_HOST"))
                    .map(|h| h.0)
                    .unwrap_or_else(|| "localhost".into());
                // As the client: localhost means the Unix socket, when one is named.
                if h == "localhost" {
                    socket = from_file("socket")
                        .or_else(|| from_env("MYSQL_UNIX_PORT"))
                        .map(|s| s.0);
                }
                h
            } else if host.is_empty() {
                "localhost".to_string()
            } else {
                host
            };
            let port = match port {
                Some(p) => p,
                None => match from_file("port").or_else(|| from_env("MYSQL_TCP_PORT")) {
                    Some((p, _)) => parse_port(&p)?,
                    None => 3306,
                },
            };
            let database = if database.is_empty() {
                from_file("database").map(|d| d.0).unwrap_or_default()
            } else {
                database
            };
            (user, password, host, port, socket, database, password_from)
        };
        let host = if host.is_empty() {
            "localhost".to_string()
        } else {
            host
        };
        for (k, v) in url_tls {
            if !tls.take(&k, &v).map_err(|e| bad(&e))? {
                return Err(bad(&format!(
                    "unknown parameter {k:?} (supported: socket=PATH, ssl-mode, ssl-ca, \
                     ssl-cert, ssl-key, defaults-file, defaults-extra-file, no-defaults)"
                )));
            }
        }
        if user.is_empty() {
            return Err(bad("no user (mysql://USER@HOST:PORT/DATABASE)"));
        }
        if database.is_empty() || database.contains('/') {
            return Err(bad("name one database: mysql://USER@HOST:PORT/DATABASE"));
        }
        if database.len() > 64 || database.contains('`') || database.contains('\0') {
            return Err(bad("invalid database name"));
        }
        let password = password.filter(|p| !p.is_empty());
        notes.insert(
            0,
            match &password {
                Some(_) => format!("password: from {password_from}"),
                None => "password: none given".into(),
            },
        );
        Ok(ServerUrl {
            scheme: scheme.to_string(),
            user,
            password,
            host,
            port,
            database,
            socket,
            tls,
            notes,
        })
    }

    /// The URL without the password, for messages and results.
    pub fn location(&self) -> String {
        match &self.socket {
            Some(s) => format!(
                "{}://{}@{}/{}?socket={s}",
                self.scheme, self.user, self.host, self.database
            ),
            None => format!(
                "{}://{}@{}:{}/{}",
                self.scheme, self.user, self.host, self.port, self.database
            ),
        }
    }

    /// Whether the server is on this machine (a Unix socket or a loopback address).
    pub fn is_local(&self) -> bool {
        self.socket.is_some()
            || matches!(
                self.host.as_str(),
                "localhost" | "127.0.0.1" | "[::1]" | "::1"
            )
            || self.host.starts_with("127.")
    }

    /// Whether a password will be sent.
    pub fn has_password(&self) -> bool {
        self.password.is_some()
    }

    /// Settings for ixbench's own client ([`MyWire`]).
    fn wire_config(
        &self,
        init: Vec<String>,
        connect_timeout: Duration,
        tls: &mywire::Tls,
    ) -> mywire::Config {
        mywire::Config {
            host: self.host.clone(),
            port: self.port,
            socket: self.socket.clone(),
            user: self.user.clone(),
            password: self.password.clone(),
            database: self.database.clone(),
            init,
            connect_timeout,
            tls: tls.clone(),
        }
    }
}

/// The PID in the server's `pid_file`, if that process runs here and is the server on
/// `datadir`: a `mysqld`/`mariadbd` whose working directory is the data directory (the server
/// changes into it). `None` when anything does not match or cannot be read (another machine,
/// container, or user).
pub fn local_server_pid(pid_file: &Path, datadir: &Path) -> Option<u32> {
    let pid_file = if pid_file.is_relative() {
        datadir.join(pid_file)
    } else {
        pid_file.to_path_buf()
    };
    let pid: u32 = std::fs::read_to_string(pid_file)
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let comm = std::fs::read_to_string(proc_dir.join("comm")).ok()?;
    if !matches!(comm.trim(), "mysqld" | "mariadbd") {
        return None;
    }
    let cwd = std::fs::read_link(proc_dir.join("cwd")).ok()?;
    (cwd.canonicalize().ok()? == datadir.canonicalize().ok()?).then_some(pid)
}

/// An error from the server or the driver, as one clean line (`ERROR 1045 (28000): ...`).
#[derive(Debug, Clone)]
pub struct MysqlError {
    /// The server's error code, when the server sent one.
    pub code: Option<u16>,
    /// The text.
    pub message: String,
}

impl fmt::Display for MysqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MysqlError {}

impl From<MyWireError> for MysqlError {
    fn from(e: MyWireError) -> Self {
        let code = match &e {
            MyWireError::Server { code, .. } => Some(*code),
            _ => None,
        };
        MysqlError {
            code,
            message: e.to_string(),
        }
    }
}

/// An error of ixbench's own client as [`MysqlError`].
fn my(e: MyWireError) -> anyhow::Error {
    anyhow::Error::new(MysqlError::from(e))
}

/// The server's error code in `e`'s chain, if any.
pub fn error_code(e: &anyhow::Error) -> Option<u16> {
    e.chain()
        .find_map(|c| c.downcast_ref::<MysqlError>())
        .and_then(|m| m.code)
}

/// Whether a server error is transient: deadlock (1213, also MyRocks's snapshot conflicts),
/// lock wait timeout (1205), MariaDB's snapshot-isolation conflict (1020), and MyRocks's
/// "busy / try again" statuses reported as storage-engine errors (1030, 1180, 1296).
pub fn is_retryable_error(e: &MysqlError) -> bool {
    match e.code {
        Some(code::LOCK_DEADLOCK | code::LOCK_WAIT_TIMEOUT | code::CHECKREAD) => true,
        Some(code::GET_ERRNO | code::ERROR_DURING_COMMIT | code::GET_ERRMSG) => {
            let m = e.message.to_ascii_lowercase();
            ["busy", "try again", "tryagain", "timed out", "snapshot"]
                .iter()
                .any(|w| m.contains(w))
        }
        _ => false,
    }
}

fn is_privilege_error(e: &anyhow::Error) -> bool {
    matches!(
        error_code(e),
        Some(
            code::SPECIFIC_ACCESS_DENIED
                | code::ACCESS_DENIED_DB
                | code::ACCESS_DENIED
                | code::TABLE_ACCESS_DENIED
        )
    )
}

/// What an operator should do about a failed connect.
fn connect_hint(e: &MysqlError, url: &ServerUrl) -> &'static str {
    match e.code {
        Some(code::ACCESS_DENIED) if url.has_password() => {
            " (check the user and the password, given in the URL, an option file or MYSQL_PWD)"
        }
        Some(code::ACCESS_DENIED) => {
            " (no password was sent: give it in the URL, in an option file (~/.my.cnf) or in MYSQL_PWD)"
        }
        Some(code::BAD_DB) => " (create it first: CREATE DATABASE ...)",
        Some(code::ACCESS_DENIED_DB) => " (grant the user privileges on the database)",
        Some(_) if e.message.contains("insecure transport") => {
            " (the server requires TLS: use ssl-mode=REQUIRED or stricter in the URL)"
        }
        Some(_) => "",
        None => {
            let m = e.message.to_ascii_lowercase();
            if m.contains("connection refused")
                || m.contains("no such file")
                || m.contains("timed out")
            {
                " (is the server running and listening there?)"
            } else {
                ""
            }
        }
    }
}

/// A MySQL or MariaDB server.
pub struct Mysql {
    url: ServerUrl,
    /// TLS of every connection (from the URL's ssl-* parameters).
    tls: mywire::Tls,
    /// How the last connection opened reached the server (for [`TargetInfo::transport`]).
    last_transport: std::sync::Arc<std::sync::Mutex<Option<super::netio::Transport>>>,
    /// Statements each new connection runs first.
    init: Vec<String>,
    /// How long connecting (TCP and handshake) may take.
    connect_timeout: Duration,
    engine: Engine,
    dialect: SqlDialect,
    version: String,
    /// The information_schema view of InnoDB's tablespace files, by server flavor.
    tablespaces_view: &'static str,
    /// The server's pid file and data directory when it runs on this machine: its PID is read
    /// from them whenever asked (see [`local_server_pid`]), so a restarted server is found.
    server_files: Option<(PathBuf, PathBuf)>,
    /// ixbench may change global state (see [`TargetOptions::server_changes`]).
    server_changes: bool,
}

/// MySQL's and MariaDB's row in the registry of kinds ([`super::registry`]): `mysql://`,
/// `mariadb://`, or a bare `mariadb` or `mysql` (a throwaway MariaDB server).
pub static KIND: Kind = Kind {
    name: "mysql",
    rank: 3,
    words: &["mariadb", "mysql"],
    path: false,
    schemes: &["mysql", "mariadb"],
    conninfo: false,
    shown: &["mariadb"],
    shown_url: Some("mysql://USER@HOST:PORT/DB"),
    server: Some("mariadb"),
    check_pragma: None,
    unknown: false,
    open: |spec, opts| {
        let url = spec.url.as_deref().context("no MySQL URL")?;
        Mysql::open(url, opts)
    },
    sql: &dialect::MYSQL,
    ddl: Some(DdlForms {
        dialect: ddl::for_version,
        full_version: |_, shown| shown.to_string(),
        distributed: super::ddl::distributed::Distributed::on_mysql,
        tools: Some(&tools::TOOLS),
    }),
    stats: Some(stats::probe),
    scan: Some(super::scan::scan_server),
    session: Some(|url, connect, io, url_only| Ok(Box::new(session(url, connect, io, url_only)?))),
    errors: ErrorClasses {
        code: |e| {
            e.downcast_ref::<MysqlError>()
                .and_then(|m| m.code)
                .map(|c| c.to_string())
        },
        duplicate_key: |e| {
            e.downcast_ref::<MysqlError>()
                .is_some_and(|m| m.code == Some(1062))
        },
        retryable: |e| e.downcast_ref::<MysqlError>().is_some_and(is_retryable_error),
    },
    sharding: Some(super::sharded::Sharding::Spider),
};

/// Why a server-wide action was not done, for the results.
const NOT_ALLOWED: &str = "SKIPPED: it changes the whole server and ixbench did not start this                            one (--allow-server-changes allows it)";

/// InnoDB's purge counts as caught up at or below this history list length (undo logs).
const PURGE_FLOOR: i64 = 100;

impl Mysql {
    /// Check the server at `url` can be reached, logged into, and has the engine `opts.engine`
    /// asks for (InnoDB by default); then return the target.
    pub fn open(url: &str, opts: &TargetOptions) -> Result<Box<dyn Dbms>> {
        // The URL, option files, environment; a throwaway server's generated password.
        let url = ServerUrl::resolve(url, &mycnf::Env::from_process())?;
        let engine = Engine::parse(opts.engine.as_deref())?;
        let connect_timeout = opts
            .connect_timeout
            .unwrap_or(super::DEFAULT_CONNECT_TIMEOUT);
        if url.socket.is_none() {
            // Whatever listens there must answer, and in MySQL's protocol: the driver would
            // wait forever for a greeting from a PostgreSQL (or a silent) server.
            super::probe_protocol(&url.host, url.port, super::Protocol::Mysql, connect_timeout)
                .with_context(|| format!("cannot connect to {}", url.location()))?;
        }
        let init = vec!["SET SESSION autocommit = 1".to_string()];
        let mut m = Mysql {
            tls: url
                .tls
                .build()
                .map_err(|e| anyhow::anyhow!("{}: {e}", url.location()))?,
            last_transport: Default::default(),
            init,
            connect_timeout,
            url,
            engine,
            dialect: dialect::sql_dialect(engine.sql_name(), false),
            version: String::new(),
            tablespaces_view: "INNODB_SYS_TABLESPACES",
            server_files: None,
            server_changes: opts.server_changes,
        };
        let mut conn = m.connect_raw()?;
        let loc = m.url.location();
        let version = conn.wire.server_version.clone();
        let version = match version.split_once("5.5.5-") {
            // MariaDB prefixes its version with 5.5.5- in the handshake.
            Some(("", v)) => v.to_string(),
            _ => version,
        };
        let rows = conn
            .query_rows("SELECT VERSION()")
            .with_context(|| format!("cannot read the version of {loc}"))?;
        let version = rows
            .first()
            .map(|r| cell(r, 0).to_string())
            .filter(|v| !v.is_empty())
            .unwrap_or(version);
        let mariadb = version.to_ascii_lowercase().contains("mariadb");
        m.dialect = dialect::sql_dialect(engine.sql_name(), mariadb);
        let major: u32 = version
            .split('.')
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if !mariadb && major >= 8 {
            // MySQL 8 caches information_schema.TABLES sizes for a day by default.
            m.init
                .push("SET SESSION information_schema_stats_expiry = 0".into());
            m.tablespaces_view = "INNODB_TABLESPACES";
        }
        m.version = version;
        if m.url.is_local() {
            let rows = conn
                .query_rows("SELECT @@pid_file, @@datadir")
                .with_context(|| format!("cannot read @@pid_file of {loc}"))?;
            m.server_files = rows
                .first()
                .map(|r| (PathBuf::from(cell(r, 0)), PathBuf::from(cell(r, 1))))
                .filter(|(pid_file, datadir)| local_server_pid(pid_file, datadir).is_some());
        }
        let support: Option<String> = conn
            .query_rows(&format!(
                "SELECT SUPPORT FROM information_schema.ENGINES WHERE UPPER(ENGINE) = UPPER({})",
                mysql_lit(engine.sql_name())
            ))
            .with_context(|| format!("cannot read the engines of {loc}"))?
            .first()
            .map(|r| cell(r, 0).to_string());
        let ok = matches!(
            support.as_deref().map(str::to_ascii_uppercase).as_deref(),
            Some("YES" | "DEFAULT")
        );
        if !ok {
            let state = match &support {
                Some(s) => format!("SUPPORT = {s} in information_schema.ENGINES"),
                None => "not in information_schema.ENGINES".into(),
            };
            let how = match engine {
                // Present but NO/DISABLED: loaded, then disabled (rocksdb=OFF, or it failed
                // to start).
                Engine::RocksDb if support.is_some() => {
                    "MyRocks is installed but disabled: start the server without rocksdb=OFF \
                     or skip-rocksdb, and see its error log if it failed to initialize"
                }
                Engine::RocksDb if mariadb => {
                    "load it with INSTALL SONAME 'ha_rocksdb' (package mariadb-plugin-rocksdb) \
                     or start the server with plugin-load-add=ha_rocksdb.so"
                }
                Engine::RocksDb => {
                    "MyRocks needs MariaDB (INSTALL SONAME 'ha_rocksdb', package \
                     mariadb-plugin-rocksdb) or Percona Server (ps-admin --enable-rocksdb)"
                }
                Engine::InnoDb => "start the server with InnoDB enabled",
            };
            bail!(
                "engine {} is not available on {loc} ({state}): {how}",
                engine.name()
            );
        }
        Ok(Box::new(m))
    }

    fn connect_raw(&self) -> Result<MysqlConn> {
        let conn = connect(
            &self.url,
            &self.tls,
            self.init.clone(),
            self.connect_timeout,
        )?;
        if let Ok(mut t) = self.last_transport.lock() {
            *t = Some(conn.wire.transport().clone());
        }
        Ok(conn)
    }

    /// The storage engine of the benchmark tables.
    pub fn engine(&self) -> Engine {
        self.engine
    }
}

/// A new connection to `url` running `init` first, with one-line errors naming the server
/// (never the password) and a hint at what to do; a stop request (Ctrl-C, SIGTERM) kills the
/// statement it runs with KILL QUERY from a new connection.
fn connect(
    url: &ServerUrl,
    tls: &mywire::Tls,
    init: Vec<String>,
    connect_timeout: Duration,
) -> Result<MysqlConn> {
    let (cfg, hint_url) = (url.wire_config(init, connect_timeout, tls), url.clone());
    let location = url.location();
    // The handshake itself is bounded too (read timeouts); this bounds name resolution.
    let wire = super::connect_within(connect_timeout + Duration::from_secs(1), move || {
        MyWire::connect(&cfg).map_err(|e| {
            let mut e = MysqlError::from(e);
            e.message.push_str(connect_hint(&e, &hint_url));
            anyhow::Error::new(e)
        })
    })
    .with_context(|| format!("cannot connect to {location}"))?;
    let id = wire.connection_id;
    let kill = url.wire_config(Vec::new(), connect_timeout, tls);
    let cancel = crate::stop::register_canceller(move || {
        let kill = kill.clone();
        let _ = super::connect_within(kill.connect_timeout, move || {
            let mut c = MyWire::connect(&kill)?;
            c.query_drop(&format!("KILL QUERY {id}"))?;
            Ok(())
        });
    });
    Ok(MysqlConn {
        wire,
        prepared: Vec::new(),
        _cancel: cancel,
    })
}

/// A connection of ixbench's own (see [`super::session`]) to the server at `url` (its password
/// as [`ServerUrl::resolve`] finds it), reads and writes bounded by `io_timeout` when given.
pub(super) fn session(
    url: &str,
    connect_timeout: Duration,
    io_timeout: Option<Duration>,
    url_only: bool,
) -> Result<MysqlConn> {
    let env = if url_only {
        mycnf::Env::of(&[])
    } else {
        mycnf::Env::from_process()
    };
    let url = ServerUrl::resolve(url, &env)?;
    let tls = url
        .tls
        .build()
        .map_err(|e| anyhow::anyhow!("{}: {e}", url.location()))?;
    let conn = connect(&url, &tls, Vec::new(), connect_timeout)?;
    if io_timeout.is_some() {
        conn.wire.set_io_timeout(io_timeout).map_err(|e| {
            anyhow::anyhow!("{}: setting the socket's timeouts: {e}", url.location())
        })?;
    }
    Ok(conn)
}

/// All rows of a text query as strings, on any [`Conn`].
fn rows(conn: &mut dyn Conn, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
    conn.query_rows(sql)
}

fn cell(row: &[Option<String>], i: usize) -> &str {
    row.get(i).and_then(|c| c.as_deref()).unwrap_or("")
}

/// Global status counters by lower-case name (missing ones are absent).
fn global_status(conn: &mut dyn Conn, names: &[&str]) -> Result<HashMap<String, i64>> {
    let list: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    let sql = format!(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
        list.join(",")
    );
    let mut out = HashMap::new();
    for r in rows(conn, &sql)? {
        if let Ok(v) = cell(&r, 1).trim().parse::<i64>() {
            out.insert(cell(&r, 0).to_ascii_lowercase(), v);
        }
    }
    Ok(out)
}

fn status_of(conn: &mut dyn Conn, name: &str) -> Result<i64> {
    global_status(conn, &[name])?
        .get(&name.to_ascii_lowercase())
        .copied()
        .with_context(|| format!("the server reports no status variable {name}"))
}

/// A global variable's value, `None` when the server has no such variable.
fn global_variable(conn: &mut dyn Conn, name: &str) -> Result<Option<String>> {
    let r = rows(
        conn,
        &format!("SHOW GLOBAL VARIABLES WHERE Variable_name = '{name}'"),
    )?;
    Ok(r.first().map(|r| cell(r, 1).to_string()))
}

fn quoted_list(tables: &[String]) -> String {
    tables
        .iter()
        .map(|t| format!("'{}'", t.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(",")
}

/// `ANALYZE TABLE` each table; an `error` row fails.
fn analyze(conn: &mut dyn Conn, tables: &[String], clock: &dyn FigureClock) -> Result<MaintAction> {
    let t = clock.start();
    let mut said = Vec::new();
    for tab in tables {
        for r in rows(conn, &format!("ANALYZE TABLE {tab}"))? {
            let (kind, text) = (cell(&r, 2), cell(&r, 3));
            if kind.eq_ignore_ascii_case("error") {
                bail!("ANALYZE TABLE {tab}: {text}");
            }
            said.push(format!("{tab}: {kind} {text}"));
        }
    }
    Ok(MaintAction {
        action: "ANALYZE TABLE".into(),
        seconds: t(),
        detail: said.join("; "),
    })
}

/// A `SET GLOBAL` maintenance action the user may lack the privilege for: `Ok(Err(detail))`
/// when the privilege is missing.
fn set_global(
    conn: &mut dyn Conn,
    name: &str,
    value: &str,
) -> Result<std::result::Result<(), String>> {
    match conn.execute(&format!("SET GLOBAL {name} = {value}")) {
        Ok(()) => Ok(Ok(())),
        Err(e) if is_privilege_error(&e) => Ok(Err(format!(
            "not done: the user lacks the privilege for SET GLOBAL {name} ({}); grant SUPER (MariaDB) or \
             SYSTEM_VARIABLES_ADMIN (MySQL 8) to let ixbench do it",
            e.chain()
                .find_map(|c| c.downcast_ref::<MysqlError>())
                .map(|m| m.message.clone())
                .unwrap_or_else(|| e.to_string())
        ))),
        Err(e) => Err(e),
    }
}

/// Flush InnoDB's dirty pages: lower `innodb_max_dirty_pages_pct(_lwm)` to 0, poll
/// `Innodb_buffer_pool_pages_dirty` until few remain (at most max(64, 0.1% of the pool)), no
/// progress for 15 s, or an hour; then restore both settings.
fn flush_innodb(conn: &mut dyn Conn, clock: &dyn FigureClock) -> Result<MaintAction> {
    let t = clock.start();
    let end = Deadline::after(MAINT_DEADLINE);
    let action = "flush dirty pages (innodb_max_dirty_pages_pct = 0)".to_string();
    let st = global_status(
        conn,
        &[
            "Innodb_buffer_pool_pages_dirty",
            "Innodb_buffer_pool_pages_total",
        ],
    )?;
    let before = st
        .get("innodb_buffer_pool_pages_dirty")
        .copied()
        .context("the server reports no Innodb_buffer_pool_pages_dirty")?;
    let total = st
        .get("innodb_buffer_pool_pages_total")
        .copied()
        .unwrap_or(0);
    let numeric = |v: Option<String>, name: &str| -> Result<String> {
        let v = v.with_context(|| format!("the server has no variable {name}"))?;
        v.trim()
            .parse::<f64>()
            .with_context(|| format!("{name} = {v:?} is not a number"))?;
        Ok(v.trim().to_string())
    };
    let old_pct = numeric(
        global_variable(conn, "innodb_max_dirty_pages_pct")?,
        "innodb_max_dirty_pages_pct",
    )?;
    let old_lwm = numeric(
        global_variable(conn, "innodb_max_dirty_pages_pct_lwm")?,
        "innodb_max_dirty_pages_pct_lwm",
    )?;
    // lwm first: MySQL wants lwm <= pct at every moment.
    if let Err(why) = set_global(conn, "innodb_max_dirty_pages_pct_lwm", "0")? {
        return Ok(MaintAction {
            action,
            seconds: t(),
            detail: format!("{why}; {before} dirty pages left to the server"),
        });
    }
    let few = (total / 1000).max(64);
    let waited = (|| -> Result<(i64, String)> {
        conn.execute("SET GLOBAL innodb_max_dirty_pages_pct = 0")?;
        let mut best = before;
        let mut best_at = Since::start();
        loop {
            let d = status_of(conn, "Innodb_buffer_pool_pages_dirty")?;
            if d <= few {
                return Ok((d, format!("{few} or fewer reached")));
            }
            if d < best {
                best = d;
                best_at.restart();
            } else if best_at.so_far() >= Duration::from_secs(15) {
                return Ok((d, "stopped: no progress for 15 s".into()));
            }
            if end.expired() {
                return Ok((d, "stopped at the one-hour deadline".into()));
            }
            std::thread::sleep(POLL);
        }
    })();
    let restored = conn
        .execute(&format!(
            "SET GLOBAL innodb_max_dirty_pages_pct = {old_pct}"
        ))
        .and_then(|_| {
            conn.execute(&format!(
                "SET GLOBAL innodb_max_dirty_pages_pct_lwm = {old_lwm}"
            ))
        })
        .with_context(|| {
            format!(
                "could not restore innodb_max_dirty_pages_pct = {old_pct}, \
                 innodb_max_dirty_pages_pct_lwm = {old_lwm}"
            )
        });
    let (after, how) = waited?;
    restored?;
    Ok(MaintAction {
        action,
        seconds: t(),
        detail: format!(
            "dirty pages {before} -> {after} of {total} ({how}); \
             innodb_max_dirty_pages_pct {old_pct} and _lwm {old_lwm} restored"
        ),
    })
}

/// MyRocks's pending flushes and compactions (summed over column families) and the counters
/// that move when a flush or compaction finishes.
fn rocks_activity(conn: &mut dyn Conn) -> Result<(i64, i64)> {
    let pending = conn
        .query_i64(
            "SELECT COALESCE(SUM(VALUE), 0) FROM information_schema.ROCKSDB_CFSTATS \
             WHERE STAT_TYPE IN ('COMPACTION_PENDING', 'MEM_TABLE_FLUSH_PENDING')",
        )?
        .unwrap_or(0);
    let st = global_status(
        conn,
        &[
            "Rocksdb_compact_write_bytes",
            "Rocksdb_compact_read_bytes",
            "Rocksdb_flush_write_bytes",
            "Rocksdb_manual_compactions_running",
        ],
    )?;
    let moved = st.get("rocksdb_compact_write_bytes").copied().unwrap_or(0)
        + st.get("rocksdb_compact_read_bytes").copied().unwrap_or(0)
        + st.get("rocksdb_flush_write_bytes").copied().unwrap_or(0);
    let running = st
        .get("rocksdb_manual_compactions_running")
        .copied()
        .unwrap_or(0);
    Ok((pending + running, moved))
}

/// Wait until MyRocks has no flush or compaction pending and none finished in the last 2 s
/// (MariaDB's MyRocks shows no count of running compactions, so a compaction longer than 2 s
/// with nothing queued behind it may still run).
fn wait_rocks_idle(conn: &mut dyn Conn, clock: &dyn FigureClock) -> Result<MaintAction> {
    let t = clock.start();
    let end = Deadline::after(MAINT_DEADLINE);
    let (_, start_bytes) = rocks_activity(conn)?;
    let mut last = start_bytes;
    let mut quiet_since = Since::start();
    let how = loop {
        let (pending, bytes) = rocks_activity(conn)?;
        if pending > 0 || bytes != last {
            quiet_since.restart();
            last = bytes;
        } else if quiet_since.so_far() >= Duration::from_secs(2) {
            break "idle: nothing pending, nothing finished for 2 s".to_string();
        }
        if end.expired() {
            break format!("stopped at the one-hour deadline ({pending} pending)");
        }
        std::thread::sleep(POLL);
    };
    Ok(MaintAction {
        action: "wait for compaction to go idle".into(),
        seconds: t(),
        detail: format!(
            "{how}; {} bytes flushed or compacted meanwhile",
            last - start_bytes
        ),
    })
}

/// Whether MyRocks's memtables hold entries of a user column family, so that the SST
/// files (which the per-index sizes read) hold every row: a table copy (`ALTER TABLE ...
/// ENGINE=ROCKSDB`) or a load leaves its rows in the memtable, while ADD INDEX ingests SST
/// files directly. The caller flushes them (`rocksdb_force_flush_memtable_now`) when it may
/// change the server; else those rows are left out of the per-index sizes and it says so.
fn rocks_memtables_hold_rows(conn: &mut dyn Conn) -> Result<bool> {
    let entries = conn
        .query_i64(
            "SELECT COALESCE(SUM(VALUE), 0) FROM information_schema.ROCKSDB_CFSTATS \
             WHERE CF_NAME <> '__system__' \
             AND STAT_TYPE IN ('NUM_ENTRIES_ACTIVE_MEM_TABLE', 'NUM_ENTRIES_IMM_MEM_TABLES')",
        )?
        .unwrap_or(0);
    Ok(entries > 0)
}

/// Fire a MyRocks trigger variable (`SET GLOBAL x = 1` makes the server flush or compact) and
/// leave the variable as it was: `Ok(Ok(value))` with the value it reads (as before), or
/// `Ok(Err(detail))` without the privilege.
fn trigger(conn: &mut dyn Conn, var: &str) -> Result<std::result::Result<String, String>> {
    let before =
        global_variable(conn, var)?.with_context(|| format!("the server has no variable {var}"))?;
    if let Err(why) = set_global(conn, var, "1")? {
        return Ok(Err(why));
    }
    let after = global_variable(conn, var)?.unwrap_or_default();
    if after != before {
        let old = if before.eq_ignore_ascii_case("on") {
            "1"
        } else {
            "0"
        };
        conn.execute(&format!("SET GLOBAL {var} = {old}"))
            .with_context(|| format!("could not restore {var} = {before}"))?;
    }
    Ok(Ok(before))
}

/// Files in L0 over all column families.
fn rocks_l0_files(conn: &mut dyn Conn) -> Result<i64> {
    Ok(conn
        .query_i64(
            "SELECT COALESCE(SUM(VALUE), 0) FROM information_schema.ROCKSDB_COMPACTION_STATS \
             WHERE LEVEL = 'L0' AND TYPE = 'NumFiles'",
        )?
        .unwrap_or(0))
}

/// A MyRocks `SET GLOBAL x = 1` trigger, timed, with L0 files and memtable bytes around it.
fn rocks_trigger(conn: &mut dyn Conn, var: &str, clock: &dyn FigureClock) -> Result<MaintAction> {
    let t = clock.start();
    let l0 = rocks_l0_files(conn)?;
    let mem = status_of(conn, "Rocksdb_memtable_unflushed").unwrap_or(-1);
    let detail = match trigger(conn, var)? {
        Err(why) => why,
        Ok(value) => format!(
            "L0 files {l0} -> {}, unflushed memtable bytes {mem} -> {}; {var} reads {value} \
             as before",
            rocks_l0_files(conn)?,
            status_of(conn, "Rocksdb_memtable_unflushed").unwrap_or(-1)
        ),
    };
    Ok(MaintAction {
        action: format!("SET GLOBAL {var} = 1"),
        seconds: t(),
        detail,
    })
}

impl Driver for Mysql {
    fn kind(&self) -> &'static str {
        KIND.name
    }

    fn client_params(&self) -> Option<super::ClientParams> {
        Some(super::ClientParams {
            host: self.url.host.clone(),
            port: self.url.port,
            socket: self.url.socket.clone(),
            user: self.url.user.clone(),
            password: self.url.password.clone(),
            database: self.url.database.clone(),
        })
    }

    fn dialect(&self) -> &SqlDialect {
        &self.dialect
    }

    fn connect(&self) -> Result<Box<dyn Conn>> {
        Ok(Box::new(self.connect_raw()?))
    }

    fn info(&self, conn: &mut dyn Conn) -> Result<TargetInfo> {
        let version = rows(conn, "SELECT VERSION()")?
            .first()
            .map(|r| cell(r, 0).to_string())
            .unwrap_or_else(|| self.version.clone());
        let settings = rows(conn, "SHOW GLOBAL VARIABLES")?
            .into_iter()
            .map(|r| (cell(&r, 0).to_string(), cell(&r, 1).to_string()))
            .collect();
        let transport = match &self.url.socket {
            Some(s) => format!("Unix socket {s}"),
            None => format!("TCP {}:{}", self.url.host, self.url.port),
        };
        let st = global_status(
            conn,
            &ROW_COUNTERS
                .iter()
                .flat_map(|(i, d)| [*i, *d])
                .collect::<Vec<_>>(),
        )?;
        let (ins, del) = row_counter_names(self.engine, &st);
        let counters = if ins == "Handler_write" {
            format!(
                "{ins}, {del}: this server keeps no InnoDB row counters, so these count the rows \
                 every engine writes and deletes, system tables included"
            )
        } else {
            format!("{ins}, {del}")
        };
        let conn_transport = self.last_transport.lock().ok().and_then(|t| t.clone());
        let transport = match conn_transport.as_ref().and_then(|t| t.tls_version.as_ref()) {
            Some(v) => format!("{transport} with TLS ({v})"),
            None => transport,
        };
        Ok(TargetInfo {
            kind: KIND.name.into(),
            transport: conn_transport,
            location: self.url.location(),
            version,
            engine: Some(self.engine.name().into()),
            settings,
            // What a workload does here (the insert benchmark's inserts, the index lab's
            // builds on MyRocks) is in that workload's notes, not the target's.
            notes: vec![
                format!(
                    "client/server over {transport}: one connection per worker, server-side \
                     prepared statements (binary protocol); client CPU figures are ixbench's own"
                ),
                format!(
                    "the DBMS row counters ({counters}) are server-global: other activity on \
                     the server is included"
                ),
            ]
            .into_iter()
            .chain(self.url.notes.iter().cloned())
            .collect(),
        })
    }

    fn server_pids(&self) -> Vec<u32> {
        self.server_files
            .as_ref()
            .and_then(|(pid_file, datadir)| local_server_pid(pid_file, datadir))
            .into_iter()
            .collect()
    }

    fn local_port(&self) -> Option<u16> {
        // A Unix socket has no port; its server is found through the pid file instead.
        (self.url.socket.is_none() && self.url.is_local()).then_some(self.url.port)
    }
}

impl Admin for Mysql {
    fn maintenance(
        &self,
        conn: &mut dyn Conn,
        tables: &[String],
        clock: &dyn FigureClock,
    ) -> Result<Vec<MaintAction>> {
        match self.engine {
            Engine::InnoDb if !self.server_changes => Ok(vec![
                analyze(conn, tables, clock)?,
                MaintAction {
                    action: "flush dirty pages (innodb_max_dirty_pages_pct = 0)".into(),
                    seconds: 0.0,
                    detail: format!(
                        "{NOT_ALLOWED}; {} dirty pages left to the server",
                        status_of(conn, "Innodb_buffer_pool_pages_dirty")?
                    ),
                },
            ]),
            Engine::InnoDb => Ok(vec![
                analyze(conn, tables, clock)?,
                flush_innodb(conn, clock)?,
            ]),
            Engine::RocksDb if !self.server_changes => {
                let mut out = vec![wait_rocks_idle(conn, clock)?];
                for var in [
                    "rocksdb_force_flush_memtable_now",
                    "rocksdb_compact_lzero_now / rocksdb_force_flush_memtable_and_lzero_now",
                ] {
                    out.push(MaintAction {
                        action: format!("SET GLOBAL {var} = 1"),
                        seconds: 0.0,
                        detail: NOT_ALLOWED.into(),
                    });
                }
                out.push(analyze(conn, tables, clock)?);
                Ok(out)
            }
            Engine::RocksDb => {
                let mut out = vec![wait_rocks_idle(conn, clock)?];
                out.push(rocks_trigger(
                    conn,
                    "rocksdb_force_flush_memtable_now",
                    clock,
                )?);
                // FB MyRocks names it rocksdb_compact_lzero_now; MariaDB's flushes and then
                // compacts L0.
                let lzero = [
                    "rocksdb_compact_lzero_now",
                    "rocksdb_force_flush_memtable_and_lzero_now",
                ];
                let mut found = false;
                for v in lzero {
                    if global_variable(conn, v)?.is_some() {
                        out.push(rocks_trigger(conn, v, clock)?);
                        found = true;
                        break;
                    }
                }
                if !found {
                    out.push(MaintAction {
                        action: "compact L0".into(),
                        seconds: 0.0,
                        detail: "not done: the server has neither rocksdb_compact_lzero_now \
                                 nor rocksdb_force_flush_memtable_and_lzero_now"
                            .into(),
                    });
                }
                out.push(wait_rocks_idle(conn, clock)?);
                out.push(analyze(conn, tables, clock)?);
                Ok(out)
            }
        }
    }

    fn sizes(&self, conn: &mut dyn Conn, tables: &[String], detailed: bool) -> Result<Sizes> {
        // InnoDB tables: their tablespace files (current, like a file size); other tables, and
        // all of them when the view cannot be read (it needs PROCESS): information_schema.TABLES,
        // whose InnoDB figures are persistent statistics that can lag a load by many seconds.
        let files = conn.query_i64(&format!(
            "SELECT COALESCE(SUM(COALESCE(ts.ALLOCATED_SIZE, t.data_length + t.index_length)), 0) \
             FROM information_schema.TABLES t LEFT JOIN information_schema.{} ts \
             ON t.engine = 'InnoDB' AND ts.NAME = CONCAT(t.table_schema, '/', t.table_name) \
             WHERE t.table_schema = DATABASE()",
            self.tablespaces_view
        ));
        let db = match files {
            Ok(v) => v,
            Err(e) if is_privilege_error(&e) || error_code(&e) == Some(code::UNKNOWN_TABLE) => conn
                .query_i64(
                    "SELECT COALESCE(SUM(data_length + index_length), 0) \
                     FROM information_schema.TABLES WHERE table_schema = DATABASE()",
                )?,
            Err(e) => return Err(e),
        }
        .unwrap_or(0);
        let mut s = Sizes {
            database_bytes: Some(db.max(0) as u64),
            objects: Vec::new(),
            notes: Vec::new(),
        };
        if !detailed || tables.is_empty() {
            return Ok(s);
        }
        let list = quoted_list(tables);
        if self.engine == Engine::RocksDb && rocks_memtables_hold_rows(conn)? {
            let left_out = "the per-index sizes leave out the rows still in MyRocks's memtables";
            if !self.server_changes {
                s.notes.push(format!(
                    "{left_out}: the memtable flush (SET GLOBAL rocksdb_force_flush_memtable_now) \
                     was {NOT_ALLOWED}"
                ));
            } else if let Err(why) = trigger(conn, "rocksdb_force_flush_memtable_now")? {
                s.notes.push(format!("{left_out}: memtable flush {why}"));
            }
        }
        let per_index = match self.engine {
            // Pages of each index as of the last statistics update (ANALYZE, index build,
            // or InnoDB's automatic recalculation).
            Engine::InnoDb => rows(
                conn,
                &format!(
                    "SELECT table_name, index_name, stat_value * @@innodb_page_size \
                     FROM mysql.innodb_index_stats WHERE database_name = DATABASE() \
                     AND table_name IN ({list}) AND stat_name = 'size' \
                     ORDER BY table_name, index_name"
                ),
            ),
            // Key and value bytes of each index in the SST files (uncompressed), after a
            // flush of the memtables (see rocks_memtables_hold_rows).
            Engine::RocksDb => rows(
                conn,
                &format!(
                    "SELECT d.TABLE_NAME, d.INDEX_NAME, COALESCE(SUM(m.DATA_SIZE), 0) \
                     FROM information_schema.ROCKSDB_DDL d \
                     LEFT JOIN information_schema.ROCKSDB_INDEX_FILE_MAP m \
                     ON m.COLUMN_FAMILY = d.COLUMN_FAMILY AND m.INDEX_NUMBER = d.INDEX_NUMBER \
                     WHERE d.TABLE_SCHEMA = DATABASE() AND d.TABLE_NAME IN ({list}) \
                     GROUP BY d.TABLE_NAME, d.INDEX_NAME ORDER BY d.TABLE_NAME, d.INDEX_NAME"
                ),
            ),
        };
        match per_index {
            Ok(r) => {
                for row in r {
                    let (table, index) = (cell(&row, 0), cell(&row, 1));
                    let bytes = cell(&row, 2).trim().parse::<f64>().unwrap_or(0.0);
                    let name = if index == "PRIMARY" { table } else { index };
                    s.objects.push((name.to_string(), bytes.max(0.0) as u64));
                }
            }
            // No SELECT on mysql.*: fall back to the table-level figures.
            Err(e) if is_privilege_error(&e) => {
                for row in rows(
                    conn,
                    &format!(
                        "SELECT table_name, data_length, index_length FROM information_schema.TABLES \
                         WHERE table_schema = DATABASE() AND table_name IN ({list}) ORDER BY table_name"
                    ),
                )? {
                    let num = |i| cell(&row, i).trim().parse::<u64>().unwrap_or(0);
                    s.objects.push((cell(&row, 0).to_string(), num(1)));
                    s.objects
                        .push((format!("{} (secondary indexes)", cell(&row, 0)), num(2)));
                }
            }
            Err(e) => return Err(e),
        }
        Ok(s)
    }

    /// The data directory of a server on this machine (`@@datadir`).
    fn data_directory(&self, conn: &mut dyn Conn) -> Option<PathBuf> {
        if let Some((_, dir)) = &self.server_files {
            return Some(dir.clone());
        }
        let rows = conn.query_rows("SELECT @@datadir").ok()?;
        let dir = rows.first()?.first()?.clone()?;
        (!dir.is_empty()).then(|| dir.into())
    }

    /// InnoDB: `Innodb_data_written` (data files, doublewrite included) +
    /// `Innodb_os_log_written` (redo). MyRocks: `Rocksdb_wal_bytes` + flush and compaction
    /// write bytes.
    fn written_bytes(&self, deltas: &[(String, u64)]) -> Option<(u64, String)> {
        let get = |k: &str| deltas.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        match self.engine {
            Engine::InnoDb => Some((
                get("data_written_bytes")? + get("redo_bytes")?,
                "InnoDB: Innodb_data_written + Innodb_os_log_written".into(),
            )),
            Engine::RocksDb => Some((
                get("wal_bytes")? + get("flush_bytes")? + get("compact_write_bytes")?,
                "MyRocks: Rocksdb_wal_bytes + Rocksdb_flush_write_bytes + Rocksdb_compact_write_bytes (SST files an index build bulk-loads and ingests are in none of them)".into(),
            )),
        }
    }

    fn row_counters_server_wide(&self) -> bool {
        true
    }

    fn row_counters(&self, conn: &mut dyn Conn, _tables: &[String]) -> Result<Option<RowCounters>> {
        let st = global_status(
            conn,
            &ROW_COUNTERS
                .iter()
                .flat_map(|(i, d)| [*i, *d])
                .collect::<Vec<_>>(),
        )?;
        let (ins, del) = row_counter_names(self.engine, &st);
        let get = |n: &str| -> Result<u64> {
            st.get(&n.to_ascii_lowercase())
                .map(|v| (*v).max(0) as u64)
                .with_context(|| format!("the server reports no status variable {n}"))
        };
        Ok(Some(RowCounters {
            inserted: get(ins)?,
            deleted: get(del)?,
        }))
    }

    fn quiet_watched(&self) -> String {
        let settle = QUIET_SETTLE.as_secs_f64();
        match self.engine {
            Engine::InnoDb => format!(
                "InnoDB purge (history list length <= {PURGE_FLOOR}), and page and redo writes \
                 (Innodb_buffer_pool_pages_flushed + Innodb_os_log_written) still for {settle} s"
            ),
            Engine::RocksDb => format!(
                "MyRocks flushes and compactions pending (ROCKSDB_CFSTATS), indexes of dropped \
                 tables being removed (ROCKSDB_GLOBAL_INFO DDL_DROP_INDEX_ONGOING), and \
                 flush and compaction bytes still for {settle} s"
            ),
        }
    }

    fn quiet_probe(&self, conn: &mut dyn Conn, _tables: &[String]) -> Result<Option<QuietProbe>> {
        let mut p = QuietProbe::default();
        match self.engine {
            Engine::InnoDb => {
                let st = global_status(
                    conn,
                    &[
                        "Innodb_history_list_length",
                        "Innodb_buffer_pool_pages_flushed",
                        "Innodb_os_log_written",
                    ],
                )?;
                let history = match st.get("innodb_history_list_length") {
                    Some(h) => Some(*h),
                    None => conn
                        .query_i64(
                            "SELECT MAX(COUNT) FROM information_schema.INNODB_METRICS \
                             WHERE NAME = 'trx_rseg_history_len'",
                        )
                        .unwrap_or(None),
                };
                if let Some(h) = history.filter(|h| *h > PURGE_FLOOR) {
                    p.busy
                        .push(format!("InnoDB purge behind: history list length {h}"));
                }
                p.activity = Some(
                    st.get("innodb_buffer_pool_pages_flushed")
                        .copied()
                        .unwrap_or(0)
                        .wrapping_add(st.get("innodb_os_log_written").copied().unwrap_or(0)),
                );
            }
            Engine::RocksDb => {
                for (stat, what) in [
                    ("COMPACTION_PENDING", "MyRocks compactions pending"),
                    (
                        "MEM_TABLE_FLUSH_PENDING",
                        "MyRocks memtable flushes pending",
                    ),
                ] {
                    let n = conn
                        .query_i64(&format!(
                            "SELECT COALESCE(SUM(VALUE), 0) FROM information_schema.ROCKSDB_CFSTATS \
                             WHERE STAT_TYPE = '{stat}'"
                        ))?
                        .unwrap_or(0);
                    if n > 0 {
                        p.busy.push(format!("{what}: {n}"));
                    }
                }
                let drops = conn
                    .query_i64(
                        "SELECT COUNT(*) FROM information_schema.ROCKSDB_GLOBAL_INFO \
                         WHERE TYPE = 'DDL_DROP_INDEX_ONGOING'",
                    )?
                    .unwrap_or(0);
                if drops > 0 {
                    p.busy
                        .push(format!("MyRocks removing {drops} dropped indexes"));
                }
                p.activity = Some(rocks_activity(conn)?.1);
            }
        }
        Ok(Some(p))
    }

    /// Server-global counters of the engine (deltas include anything else the server does
    /// meanwhile), plus `Created_tmp_files` (sort files of index builds among them).
    fn io_counters(&self, conn: &mut dyn Conn) -> Result<Vec<(String, u64)>> {
        let names: &[(&str, &str)] = match self.engine {
            Engine::InnoDb => &INNODB_IO_COUNTERS,
            Engine::RocksDb => &ROCKSDB_IO_COUNTERS,
        };
        let mut all: Vec<&str> = names.iter().map(|(v, _)| *v).collect();
        all.push("Created_tmp_files");
        let st = global_status(conn, &all)?;
        let out = names
            .iter()
            .chain(std::iter::once(&("Created_tmp_files", "tmp_files")))
            .filter_map(|(var, short)| {
                st.get(&var.to_ascii_lowercase())
                    .map(|v| (short.to_string(), (*v).max(0) as u64))
            })
            .collect();
        Ok(out)
    }
}

impl Mysql {
    /// The writer of this server's index DDL (see [`DdlDialect`]).
    fn ddl_dialect(&self) -> ddl::Mysql {
        ddl::Mysql {
            mariadb: self.version.to_ascii_lowercase().contains("mariadb"),
            rocksdb: self.engine == Engine::RocksDb,
        }
    }
}

impl IndexLab for Mysql {
    fn plan_uses_index(&self, plan: &str, index: &str) -> Option<bool> {
        Some(plan_uses_covering_index(plan, index))
    }

    /// [`DdlDialect::add_indexes_sql`] (the one writer of index DDL): one `ALTER TABLE` for all
    /// of `idxs`, `LOCK=SHARED` blocking, `LOCK=NONE` online on InnoDB (MyRocks refuses it:
    /// `LOCK=SHARED` too). No `ALGORITHM` clause ([`Algorithm::Session`]): the session's
    /// `alter_algorithm` (MariaDB) chooses, and at its default the server takes the fastest the
    /// engine supports (in place, no table copy, for ADD INDEX on both engines), so `--knob
    /// alter_algorithm=...` works.
    fn index_build_plan(&self, idxs: &[IndexSpec], online: bool) -> Result<Vec<Vec<String>>> {
        let table = idxs.first().map(|i| i.table.as_str()).unwrap_or_default();
        Ok(vec![self.ddl_dialect().add_indexes_sql(
            table,
            idxs,
            online,
            Algorithm::Session,
        )?])
    }

    /// [`DdlDialect::drop_index_sql`]: `ALGORITHM=INPLACE` so that dropping an index never
    /// copies the table, whatever `alter_algorithm` a swept knob left on the connection.
    fn drop_index_sql(&self, idx: &IndexSpec) -> String {
        self.ddl_dialect()
            .drop_index_sql(&idx.table, &idx.name, false)
    }

    /// From `information_schema.SYSTEM_VARIABLES` (MariaDB): a variable with a session value
    /// is Session; a dynamic global-only one is Global; a read-only one that can be given at
    /// server start is Restart. On MySQL (no such view) a variable with a session value is
    /// Session and any other Global.
    fn knob_scope(&self, conn: &mut dyn Conn, name: &str) -> Result<KnobScope> {
        check_knob(name, "0")?;
        let sql = format!(
            "SELECT VARIABLE_SCOPE, READ_ONLY, COMMAND_LINE_ARGUMENT \
             FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME = '{}'",
            name.to_ascii_uppercase()
        );
        let rows = match conn.query_rows(&sql) {
            Ok(r) => r,
            Err(e) if error_code(&e) == Some(code::UNKNOWN_TABLE) => {
                return mysql_knob_scope(conn, name)
            }
            Err(e) => return Err(e).with_context(|| format!("cannot read knob {name}")),
        };
        let Some(row) = rows.first() else {
            bail!("unknown knob {name}: the server has no system variable {name}");
        };
        let (scope, read_only) = (cell(row, 0), cell(row, 1));
        let session = scope.to_ascii_uppercase().starts_with("SESSION");
        let on_command_line = row.get(2).is_some_and(|c| c.is_some());
        Ok(match (read_only.eq_ignore_ascii_case("YES"), session) {
            (false, true) => KnobScope::Session,
            (false, false) => KnobScope::Global,
            (true, _) if scope.eq_ignore_ascii_case("SESSION ONLY") || !on_command_line => bail!(
                "knob {name} is read-only: it can be set neither with SET nor at server start"
            ),
            (true, _) => KnobScope::Restart,
        })
    }

    /// The value `SHOW SESSION VARIABLES` shows: the session's where the variable has one,
    /// else the global one; booleans as ON/OFF (as in `SHOW VARIABLES` and option files),
    /// where `SELECT @@name` would say 1/0.
    fn knob_value(&self, conn: &mut dyn Conn, name: &str) -> Result<String> {
        check_knob(name, "0")?;
        let rows = conn.query_rows(&format!(
            "SHOW SESSION VARIABLES WHERE Variable_name = '{name}'"
        ))?;
        rows.first()
            .map(|r| cell(r, 1).to_string())
            .with_context(|| {
                format!("unknown knob {name}: the server has no system variable {name}")
            })
    }

    /// `SET SESSION name = value`, then the value the server reports. MariaDB adjusts some
    /// values with only a warning (a size below the minimum, not a multiple of the block
    /// size): the value returned is the adjusted one, which the lab compares with the asked.
    fn set_session_knob(&self, conn: &mut dyn Conn, name: &str, value: &str) -> Result<String> {
        check_knob(name, value)?;
        // Numbers bare (a quoted number is a type error for numeric variables), words quoted.
        let literal = if is_number(value) {
            value.to_string()
        } else {
            format!("'{value}'")
        };
        if let Err(e) = conn.execute(&format!("SET SESSION {name} = {literal}")) {
            bail!("the server refused {name}={value}: {}", server_message(&e));
        }
        self.knob_value(conn, name)
    }

    /// The DDL statements running now in this database (other connections), from
    /// `information_schema.PROCESSLIST`: `STATE`, and on MariaDB `stage S/M P%` (reported for
    /// table copies, 0 for InnoDB's in-place build); with InnoDB on MariaDB,
    /// `Innodb_onlineddl_pct_progress` as `innodb phase P%` (the current merge-sort or insert
    /// phase of one index: it starts again at each phase, so it is not monotonic over a build)
    /// and the online row log. Statements are joined with ` | `; `none running` when there is
    /// none.
    fn build_progress(&self, conn: &mut dyn Conn) -> Result<Option<String>> {
        let mariadb = self.version.to_ascii_lowercase().contains("mariadb");
        let stage_cols = if mariadb {
            "STAGE, MAX_STAGE, PROGRESS"
        } else {
            "0, 0, 0"
        };
        let rows = conn.query_rows(&format!(
            "SELECT STATE, {stage_cols}, LEFT(INFO, 16) FROM information_schema.PROCESSLIST \
             WHERE ID <> CONNECTION_ID() AND COMMAND = 'Query' AND DB = DATABASE() \
             AND (INFO LIKE 'ALTER%' OR INFO LIKE 'CREATE%INDEX%' OR INFO LIKE 'DROP%INDEX%' \
             OR INFO LIKE 'OPTIMIZE%') ORDER BY ID"
        ))?;
        if rows.is_empty() {
            return Ok(Some("none running".into()));
        }
        let innodb = if mariadb && self.engine == Engine::InnoDb {
            global_status(
                conn,
                &[
                    "Innodb_onlineddl_pct_progress",
                    "Innodb_onlineddl_rowlog_rows",
                    "Innodb_onlineddl_rowlog_pct_used",
                ],
            )?
        } else {
            HashMap::new()
        };
        let mut parts = Vec::new();
        for r in &rows {
            let statement = cell(r, 4).split_whitespace().next().unwrap_or("");
            let mut p = format!("{statement}: {}", cell(r, 0));
            let (stage, max) = (cell(r, 1), cell(r, 2));
            if max.parse::<u32>().unwrap_or(0) > 0 {
                let pct = cell(r, 3).parse::<f64>().unwrap_or(0.0);
                p.push_str(&format!(", stage {stage}/{max} {pct:.1}%"));
            }
            if let Some(pct) = innodb.get("innodb_onlineddl_pct_progress") {
                p.push_str(&format!(", innodb phase {:.2}%", *pct as f64 / 100.0));
            }
            if let Some(n) = innodb
                .get("innodb_onlineddl_rowlog_rows")
                .filter(|n| **n > 0)
            {
                let used = innodb
                    .get("innodb_onlineddl_rowlog_pct_used")
                    .copied()
                    .unwrap_or(0);
                p.push_str(&format!(
                    ", row log {n} rows ({:.2}% of the maximum)",
                    used as f64 / 100.0
                ));
            }
            parts.push(p);
        }
        Ok(Some(parts.join(" | ")))
    }

    /// MySQL and MariaDB have no invalid indexes: an index exists or not. With MyRocks it must
    /// also be in MyRocks's data dictionary (`ROCKSDB_DDL`).
    fn index_valid(&self, conn: &mut dyn Conn, table: &str, index: &str) -> Result<bool> {
        if !conn.index_exists(table, index)? {
            return Ok(false);
        }
        if self.engine == Engine::InnoDb {
            return Ok(true);
        }
        let n = conn
            .query_i64(&format!(
                "SELECT count(*) FROM information_schema.ROCKSDB_DDL \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = {} AND INDEX_NAME = {}",
                quoted_list(&[table.to_string()]),
                quoted_list(&[index.to_string()])
            ))?
            .unwrap_or(0);
        Ok(n > 0)
    }

    /// `ALTER TABLE t ENGINE=<engine>` (a full rebuild: in place on InnoDB, a copy on
    /// MyRocks; the statement of seed 004's regression) and `OPTIMIZE TABLE t` (InnoDB:
    /// recreate + analyze; MyRocks: a compaction of the table's key ranges).
    fn rebuild_statements(&self, table: &str) -> Vec<(String, String)> {
        let engine = self.engine.sql_name();
        vec![
            (
                format!("ENGINE={engine}"),
                format!("ALTER TABLE {} ENGINE={engine}", table),
            ),
            ("OPTIMIZE".into(), format!("OPTIMIZE TABLE {}", table)),
        ]
    }
}

/// Status counters read around each index build: (server name, short name).
/// `Innodb_pages_read` and `Innodb_buffer_pool_pages_flushed` are the page counters seed 004
/// quotes for table rebuilds (with pages written and doublewrite pages).
const INNODB_IO_COUNTERS: [(&str, &str); 9] = [
    ("Innodb_data_read", "data_read_bytes"),
    ("Innodb_pages_read", "pages_read"),
    ("Innodb_buffer_pool_pages_flushed", "pages_flushed"),
    ("Innodb_data_written", "data_written_bytes"),
    ("Innodb_pages_written", "pages_written"),
    ("Innodb_dblwr_pages_written", "doublewrite_pages"),
    ("Innodb_dblwr_writes", "doublewrite_writes"),
    ("Innodb_os_log_written", "redo_bytes"),
    ("Innodb_buffer_pool_reads", "buffer_pool_reads"),
];

/// MyRocks's counterparts of [`INNODB_IO_COUNTERS`].
const ROCKSDB_IO_COUNTERS: [(&str, &str); 7] = [
    ("Rocksdb_bytes_read", "read_bytes"),
    ("Rocksdb_bytes_written", "written_bytes"),
    ("Rocksdb_wal_bytes", "wal_bytes"),
    ("Rocksdb_flush_write_bytes", "flush_bytes"),
    ("Rocksdb_compact_read_bytes", "compact_read_bytes"),
    ("Rocksdb_compact_write_bytes", "compact_write_bytes"),
    // block reads that missed the block cache (`ixbench pattern cost`'s reads per insert)
    ("Rocksdb_block_cache_miss", "block_cache_miss"),
];

/// Knob names and values are spliced into SQL text: names are letters, digits and `_`;
/// values letters, digits, `_`, `-` and `.`.
fn check_knob(name: &str, value: &str) -> Result<()> {
    let name_ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !name_ok {
        bail!("invalid knob name {name:?}: MySQL variables are letters, digits and _");
    }
    let value_ok = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
    if !value_ok {
        bail!("invalid value {value:?} for knob {name}: use letters, digits, _ - .");
    }
    Ok(())
}

/// A decimal number (`-12`, `0.5`), which SET takes bare.
fn is_number(v: &str) -> bool {
    let digits = v.strip_prefix('-').unwrap_or(v);
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.chars().filter(|&c| c == '.').count() <= 1
        && digits.chars().any(|c| c.is_ascii_digit())
}

/// The server's one-line message in `e` (`ERROR 1231 (42000): ...`), or the whole chain.
fn server_message(e: &anyhow::Error) -> String {
    e.chain()
        .find_map(|c| c.downcast_ref::<MysqlError>())
        .map(|m| m.message.clone())
        .unwrap_or_else(|| format!("{e:#}"))
}

/// [`Dbms::knob_scope`] on MySQL, which has no `information_schema.SYSTEM_VARIABLES`: a
/// variable with a session value is Session; a global-only one (error 1238) is taken as
/// Global (ixbench sweeps server-wide knobs only on the MariaDB servers it starts).
fn mysql_knob_scope(conn: &mut dyn Conn, name: &str) -> Result<KnobScope> {
    match conn.query_rows(&format!("SELECT @@SESSION.{name}")) {
        Ok(_) => Ok(KnobScope::Session),
        Err(e) => match error_code(&e) {
            Some(code::GLOBAL_VARIABLE) => Ok(KnobScope::Global),
            Some(code::UNKNOWN_SYSTEM_VARIABLE) => {
                bail!("unknown knob {name}: the server has no system variable {name}")
            }
            _ => Err(e).with_context(|| format!("cannot read knob {name}")),
        },
    }
}

/// Server-global status counters of rows inserted and deleted, best first.
const ROW_COUNTERS: [(&str, &str); 3] = [
    ("Rocksdb_rows_inserted", "Rocksdb_rows_deleted"),
    ("Innodb_rows_inserted", "Innodb_rows_deleted"),
    ("Handler_write", "Handler_delete"),
];

/// Which counters count the engine's rows: MyRocks's own; InnoDB's own where the server has
/// them (MySQL; MariaDB 10.11 has none), else the handler counters of all engines.
fn row_counter_names(
    engine: Engine,
    status: &HashMap<String, i64>,
) -> (&'static str, &'static str) {
    match engine {
        Engine::RocksDb => ROW_COUNTERS[0],
        Engine::InnoDb if status.contains_key("innodb_rows_inserted") => ROW_COUNTERS[1],
        Engine::InnoDb => ROW_COUNTERS[2],
    }
}

/// Whether an [`MysqlConn::explain`] text shows `index` read as a covering index: the chosen
/// key is the index and Extra says `Using index` (not `Using index condition`).
pub fn plan_uses_covering_index(plan: &str, index: &str) -> bool {
    plan.split(" | ").any(|row| {
        let key = row
            .split_once("key=")
            .map(|(_, r)| r.split(' ').next().unwrap_or(""));
        let extra = row.split_once("extra=").map(|(_, r)| r).unwrap_or("");
        key == Some(index) && extra.split(';').any(|e| e.trim() == "Using index")
    })
}

/// One worker's connection, over ixbench's own client ([`super::mywire`]).
///
/// It holds its prepared statements (ids, not SQL text), so executing one neither parses nor
/// hashes the SQL again.
pub struct MysqlConn {
    wire: MyWire,
    /// Statements prepared through [`Conn::prepare`] (index = [`Stmt`]), with their SQL.
    prepared: Vec<(String, Prepared)>,
    /// Lets a stop request kill this connection's statement.
    _cancel: crate::stop::CancelGuard,
}

impl MysqlConn {
    /// The first result set of `sql` with rows (column names and rows as text).
    fn first_set(&mut self, sql: &str) -> Result<mywire::ResultSet> {
        let sets = self
            .wire
            .query_sets(sql)
            .map_err(my)
            .with_context(|| format!("MySQL: {sql}"))?;
        Ok(sets.into_iter().next().unwrap_or_default())
    }
}

/// A MySQL string literal (backslashes escaped too: the default SQL mode reads them).
fn mysql_lit(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

impl Conn for MysqlConn {
    fn prepare(&mut self, sql: &str) -> Result<Stmt> {
        if let Some(st) = super::already_prepared(&self.prepared, sql)? {
            return Ok(st);
        }
        let st = self
            .wire
            .prepare(sql)
            .map_err(my)
            .with_context(|| format!("MySQL: cannot prepare {sql}"))?;
        self.prepared.push((sql.to_string(), st));
        Ok(Stmt(self.prepared.len() as u32 - 1))
    }

    // One write (COM_STMT_EXECUTE) and the reads of the answer per statement; rows are walked
    // in the read buffer (see `mywire`).
    fn exec(&mut self, st: Stmt, params: &[DbValue]) -> Result<u64> {
        let s = super::prepared_at(&self.prepared, st)?;
        self.wire.execute(s, params, |_| Ok(())).map_err(my)
    }

    fn query(&mut self, st: Stmt, params: &[DbValue]) -> Result<u64> {
        let s = super::prepared_at(&self.prepared, st)?;
        self.wire
            .execute(s, params, |vals| {
                while let Some(v) = vals.next_value() {
                    std::hint::black_box(v);
                }
                vals.check()
            })
            .map_err(my)
    }

    fn query_int(&mut self, st: Stmt, params: &[DbValue]) -> Result<Option<i64>> {
        let s = super::prepared_at(&self.prepared, st)?;
        let mut first: Option<Option<i64>> = None;
        self.wire
            .execute(s, params, |vals| {
                if first.is_none() {
                    first = Some(match vals.next_value() {
                        Some((Some(v), t, flags)) => Some(mywire::decode_int(v, t, flags)?),
                        _ => None,
                    });
                }
                vals.check()
            })
            .map_err(my)?;
        Ok(first.flatten())
    }

    fn begin(&mut self, _kind: TxnKind) -> Result<()> {
        self.wire.query_drop("BEGIN").map_err(my)?;
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        self.wire.query_drop("COMMIT").map_err(my)?;
        Ok(())
    }

    fn rollback(&mut self) -> Result<()> {
        self.wire.query_drop("ROLLBACK").map_err(my)?;
        Ok(())
    }

    /// Run `sql`, reading any rows it returns. Administrative statements (`OPTIMIZE TABLE`,
    /// `ANALYZE TABLE`, ...) report failure as a row with `Msg_type` `error` rather than as an
    /// error: such a row fails the statement here, with the server's text.
    fn execute(&mut self, sql: &str) -> Result<()> {
        let sets = self
            .wire
            .query_sets(sql)
            .map_err(my)
            .with_context(|| format!("MySQL: {sql}"))?;
        let mut failed = Vec::new();
        for set in &sets {
            let col = |name: &str| {
                set.columns
                    .iter()
                    .position(|c| c.eq_ignore_ascii_case(name))
            };
            if let (Some(kind), Some(text)) = (col("Msg_type"), col("Msg_text")) {
                for row in &set.rows {
                    let cell = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
                    if cell(kind).eq_ignore_ascii_case("error") {
                        failed.push(cell(text));
                    }
                }
            }
        }
        if !failed.is_empty() {
            bail!("MySQL: {sql}: {}", failed.join("; "));
        }
        Ok(())
    }

    fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        Ok(self.first_set(sql)?.rows)
    }

    fn exec_text(&mut self, sql: &str) -> Result<u64> {
        self.wire.query_drop(sql).map_err(my)
    }

    fn query_text(&mut self, sql: &str) -> Result<u64> {
        self.wire.query_count(sql).map_err(my)
    }

    fn table_exists(&mut self, table: &str) -> Result<bool> {
        let rows = self.query_rows(&format!(
            "SELECT count(*) FROM information_schema.TABLES \
             WHERE table_schema = DATABASE() AND table_name = {}",
            mysql_lit(table)
        ))?;
        Ok(cell(rows.first().map(Vec::as_slice).unwrap_or_default(), 0) != "0")
    }

    fn index_exists(&mut self, table: &str, index: &str) -> Result<bool> {
        let rows = self.query_rows(&format!(
            "SELECT count(*) FROM information_schema.STATISTICS \
             WHERE table_schema = DATABASE() AND table_name = {} AND index_name = {}",
            mysql_lit(table),
            mysql_lit(index)
        ))?;
        Ok(cell(rows.first().map(Vec::as_slice).unwrap_or_default(), 0) != "0")
    }

    /// `EXPLAIN`: one `table= type= key= rows= extra=` entry per row, joined with ` | `.
    fn explain(&mut self, sql: &str) -> Result<String> {
        let set = self.first_set(&format!("EXPLAIN {sql}"))?;
        let mut out = Vec::new();
        for row in &set.rows {
            let col = |name: &str| -> String {
                set.columns
                    .iter()
                    .position(|c| c.eq_ignore_ascii_case(name))
                    .and_then(|i| row.get(i).cloned().flatten())
                    .unwrap_or_else(|| "NULL".into())
            };
            out.push(format!(
                "table={} type={} key={} rows={} extra={}",
                col("table"),
                col("type"),
                col("key"),
                col("rows"),
                col("Extra")
            ));
        }
        Ok(out.join(" | "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = ServerUrl::parse("mysql://root@127.0.0.1:3307/ixbench", None).unwrap();
        assert_eq!(
            (
                u.user.as_str(),
                u.host.as_str(),
                u.port,
                u.database.as_str()
            ),
            ("root", "127.0.0.1", 3307, "ixbench")
        );
        assert!(!u.has_password());
        assert_eq!(u.location(), "mysql://root@127.0.0.1:3307/ixbench");

        let u = ServerUrl::parse("mariadb://bob:s%40cret@db.example/test", None).unwrap();
        assert_eq!(u.password.as_deref(), Some("s@cret"));
        assert_eq!(u.port, 3306);
        assert_eq!(u.location(), "mariadb://bob@db.example:3306/test");
        assert!(!format!("{u:?}").contains("cret"));
        // User, database and query values decode as the password does (one decoder): a raw
        // `%` (or `%+1`, which the old hand-written one took for 0x01) is refused by name.
        let u = ServerUrl::parse("mysql://b%6Fb@h/d%62?socket=/tmp/a%25b", None).unwrap();
        assert_eq!((u.user.as_str(), u.database.as_str()), ("bob", "db"));
        for (url, what) in [
            ("mysql://u%+1@h/db", "user"),
            ("mysql://u@h/5%off", "database"),
        ] {
            let e = ServerUrl::parse(url, None).unwrap_err().to_string();
            assert!(
                e.contains(&format!("the {what} has a %")) && e.contains("%25"),
                "{e}"
            );
        }

        // a raw @ in the password: the last @ ends the user part
        let u = ServerUrl::parse("mysql://u:p@ss@h:1/d", None).unwrap();
        assert_eq!(
            (u.password.as_deref(), u.host.as_str()),
            (Some("p@ss"), "h")
        );

        let u = ServerUrl::parse("mysql://root@/db?socket=/run/mysqld/mysqld.sock", None).unwrap();
        assert_eq!(u.socket.as_deref(), Some("/run/mysqld/mysqld.sock"));
        assert_eq!(
            u.location(),
            "mysql://root@localhost/db?socket=/run/mysqld/mysqld.sock"
        );

        assert!(u.is_local());
        assert!(!ServerUrl::parse("mysql://r@db.example/d", None)
            .unwrap()
            .is_local());
        assert!(ServerUrl::parse("mysql://r@127.0.0.1/d", None)
            .unwrap()
            .is_local());

        let u = ServerUrl::parse("mysql://root@[::1]:3310/db", Some("envpw".into())).unwrap();
        assert_eq!((u.host.as_str(), u.port), ("[::1]", 3310));
        assert_eq!(u.password.as_deref(), Some("envpw"));
        // the URL's password wins over MYSQL_PWD
        let u = ServerUrl::parse("mysql://root:urlpw@h/db", Some("envpw".into())).unwrap();
        assert_eq!(u.password.as_deref(), Some("urlpw"));

        for bad in [
            "mysql://root@h:3306",
            "mysql://root@h:3306/",
            "mysql://h:3306/db",
            "mysql://root@h:99999/db",
            "mysql://root@h:x/db",
            "postgres://root@h/db",
            "mysql://root@h/db?sslmode=1",
            "mysql://root@h/a/b",
        ] {
            assert!(ServerUrl::parse(bad, None).is_err(), "{bad}");
        }
        // No host: localhost, as the mysql client.
        let u = ServerUrl::parse("mysql://root@/db", None).unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.socket.as_deref()),
            ("localhost", 3306, None)
        );
        let e = ServerUrl::parse("mysql://root:hunter2@h:0/db", None)
            .unwrap_err()
            .to_string();
        assert!(!e.contains("hunter2"), "{e}");
        let e = ServerUrl::parse("mysql://root:hunter2%zz@h/db", None)
            .unwrap_err()
            .to_string();
        assert!(!e.contains("hunter2"), "{e}");
    }

    /// The URL, then option files, then the environment, then the defaults.
    #[test]
    fn option_files_and_environment_precedence() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let cnf = d.path().join(".my.cnf");
        std::fs::write(
            &cnf,
            "[client]\nuser=filer\npassword=filepw\nport=3400\ndatabase=filedb\n\
             socket=/file.sock\nssl-mode=REQUIRED\nssl-cipher=X\n",
        )
        .unwrap();
        std::fs::set_permissions(&cnf, std::fs::Permissions::from_mode(0o600)).unwrap();
        let home = d.path().to_str().unwrap();
        let env = mycnf::Env::of(&[
            ("HOME", home),
            ("USER", "osuser"),
            ("MYSQL_PWD", "envpw"),
            ("MYSQL_HOST", "envhost"),
            ("MYSQL_TCP_PORT", "3500"),
            ("MYSQL_UNIX_PORT", "/env.sock"),
        ]);
        // The URL wins.
        let u = ServerUrl::resolve("mysql://u:urlpw@h:1/db?ssl-mode=DISABLED", &env).unwrap();
        assert_eq!(
            (u.user.as_str(), u.password.as_deref()),
            ("u", Some("urlpw"))
        );
        assert_eq!(
            (u.host.as_str(), u.port, u.database.as_str()),
            ("h", 1, "db")
        );
        assert_eq!(u.tls.mode(), mywire::SslMode::Disabled);
        assert_eq!(u.notes[0], "password: from the URL");
        // Then the option file (over MYSQL_PWD, MYSQL_TCP_PORT).
        let u = ServerUrl::resolve("mysql://h/", &env).unwrap();
        assert_eq!(
            (u.user.as_str(), u.password.as_deref()),
            ("filer", Some("filepw"))
        );
        assert_eq!((u.port, u.database.as_str()), (3400, "filedb"));
        assert_eq!(u.tls.mode(), mywire::SslMode::Required);
        assert_eq!(u.notes[0], "password: from ~/.my.cnf");
        assert!(
            u.notes[1].starts_with("ssl-cipher in ~/.my.cnf is not used"),
            "{:?}",
            u.notes
        );
        assert_eq!(u.socket, None, "a host in the URL stays TCP");
        // No host anywhere: MYSQL_HOST; localhost (by default) takes the file's socket.
        let u = ServerUrl::resolve("mysql:///x", &env).unwrap();
        assert_eq!(u.host, "envhost");
        let e2 = mycnf::Env::of(&[("HOME", home), ("MYSQL_UNIX_PORT", "/env.sock")]);
        let u = ServerUrl::resolve("mysql:///x", &e2).unwrap();
        assert_eq!(u.socket.as_deref(), Some("/file.sock"));
        // Without the file: the environment, then the defaults.
        let u = ServerUrl::resolve("mysql:///x?no-defaults", &env).unwrap();
        assert_eq!(
            (u.user.as_str(), u.password.as_deref()),
            ("osuser", Some("envpw"))
        );
        assert_eq!((u.host.as_str(), u.port), ("envhost", 3500));
        assert_eq!(u.notes[0], "password: from MYSQL_PWD");
        let u = ServerUrl::resolve(
            "mysql:///x?no-defaults",
            &mycnf::Env::of(&[("USER", "o"), ("MYSQL_UNIX_PORT", "/env.sock")]),
        )
        .unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.socket.as_deref()),
            ("localhost", 3306, Some("/env.sock"))
        );
        assert_eq!(u.notes[0], "password: none given");
    }

    #[test]
    fn engines() {
        assert_eq!(Engine::parse(None).unwrap(), Engine::InnoDb);
        assert_eq!(Engine::parse(Some("InnoDB")).unwrap(), Engine::InnoDb);
        assert_eq!(Engine::parse(Some("rocksdb")).unwrap(), Engine::RocksDb);
        assert!(Engine::parse(Some("myisam")).is_err());
    }

    #[test]
    fn covering_plans() {
        let good = "table=pi1 type=range key=pi1_pdc rows=99 extra=Using where; Using index";
        assert!(plan_uses_covering_index(good, "pi1_pdc"));
        assert!(!plan_uses_covering_index(good, "pi1_marketsegment"));
        let icp = "table=pi1 type=range key=pi1_pdc rows=99 extra=Using index condition";
        assert!(!plan_uses_covering_index(icp, "pi1_pdc"));
        let full = "table=pi1 type=ALL key=NULL rows=99 extra=Using where; Using filesort";
        assert!(!plan_uses_covering_index(full, "pi1_pdc"));
        let prefix = "table=pi1 type=range key=pi1_pdc2 rows=9 extra=Using index";
        assert!(!plan_uses_covering_index(prefix, "pi1_pdc"));
    }

    #[test]
    fn retryable_errors() {
        let e = |code: u16, message: &str| MysqlError {
            code: Some(code),
            message: message.into(),
        };
        assert!(is_retryable_error(&e(
            1213,
            "Deadlock found (snapshot conflict)"
        )));
        assert!(is_retryable_error(&e(1205, "Lock wait timeout exceeded")));
        assert!(is_retryable_error(&e(
            1296,
            "Got error 10 'Operation aborted: Resource busy' from ROCKSDB"
        )));
        assert!(!is_retryable_error(&e(
            1296,
            "Got error 4 'Corruption' from ROCKSDB"
        )));
        assert!(!is_retryable_error(&e(1062, "Duplicate entry")));
        assert!(!is_retryable_error(&MysqlError {
            code: None,
            message: "Connection refused".into()
        }));
    }

    #[test]
    fn index_build_sql() {
        let idx = |name: &str, cols: &[&str]| IndexSpec {
            table: "pi1".into(),
            name: name.into(),
            columns: cols.iter().map(|c| c.to_string()).collect(),
            unique: false,
        };
        let t = [
            idx("pi1_pdc", &["price", "dateandtime", "customerid"]),
            idx("pi1_marketsegment", &["productid", "customerid", "price"]),
        ];
        let ddl = ddl::Mysql {
            mariadb: true,
            rocksdb: false,
        };
        assert_eq!(
            ddl.add_indexes_sql("pi1", &t, true, Algorithm::Session)
                .unwrap(),
            vec![
                "ALTER TABLE pi1 ADD INDEX pi1_pdc (price, dateandtime, customerid), \
             ADD INDEX pi1_marketsegment (productid, customerid, price), LOCK=NONE"
            ]
        );
    }

    #[test]
    fn knob_text() {
        for ok in [
            ("sort_buffer_size", "1048576"),
            ("alter_algorithm", "COPY"),
            ("x", "-1.5"),
        ] {
            assert!(check_knob(ok.0, ok.1).is_ok(), "{ok:?}");
        }
        for bad in [
            ("a.b", "1"),
            ("x;y", "1"),
            ("", "1"),
            ("x", ""),
            ("x", "1'"),
            ("x", "a b"),
        ] {
            assert!(check_knob(bad.0, bad.1).is_err(), "{bad:?}");
        }
        for n in ["0", "1048576", "-3", "0.5"] {
            assert!(is_number(n), "{n}");
        }
        for w in ["ON", "1M", "NaN", "inf", "-", ".", "1.2.3", "1-2"] {
            assert!(!is_number(w), "{w}");
        }
    }
}
