//! Throwaway local servers started from the installed binaries, for tests and sweeps:
//! PostgreSQL and MariaDB (InnoDB and MyRocks). A server gets a new data directory, a free
//! local port, and runs as the DBMS's own user when ixbench runs as root.
//!
//! - [`start`] initializes a new data directory (`initdb`, `mariadb-install-db`), starts the
//!   server on 127.0.0.1 in a session of its own (stdin /dev/null, output to `DIR/server.log`),
//!   waits until it answers, and creates the database `ixbench`.
//! - [`RunningServer`] gives its URL and PIDs, stops it ([`RunningServer::stop`], or on drop),
//!   restarts it with other settings ([`RunningServer::restart_with`]), or leaves it running
//!   ([`RunningServer::detach`], for `ixbench server start`).
//! - [`stop_datadir`] stops a server left running by `ixbench server start`.
//! - [`start_cluster`] starts a cluster of such servers: Galera, Spider over MariaDB shards,
//!   PostgreSQL over postgres_fdw shards (see `cluster.rs`); [`stop_cluster_dir`] stops one
//!   left running.
//!
//! Running as root: the data directory is owned by, and the programs run as, `postgres` or
//! `mysql`. Every ancestor of the data directory must be searchable by that user; if one is not
//! (e.g. under `/root`, mode 700), [`start`] fails and says which, rather than changing the
//! permissions of directories it did not create. The default of `ixbench server start` is a new
//! directory under the system temp dir, which is searchable.
//!
//! Files ixbench adds to a data directory: `server.log` (server output), `init.log` (output of
//! the initializer), `ixbench-server.json` (kind, port, settings, and whether ixbench created
//! the directory) and `ixbench-password` (mode 0600).
//!
//! Privacy: a server accepts only its administrator (`postgres`, `root`) with a generated
//! password (PostgreSQL: scram-sha-256 for TCP and socket; MariaDB: every root account),
//! kept in `DATADIR/ixbench-password` and printed nowhere; [`RunningServer::url`] has no
//! password, [`RunningServer::url_with_password`] has it. Its socket is in the data directory
//! (mode 0700), or, when that path is too long for a socket, in a new private directory
//! `/tmp/ixbench-sock-*` (0700). A per-user registry (see `secret.rs`) lets ixbench find the
//! password of a server it started from the URL's port ([`password_for_port`]).

pub mod cluster;
pub mod datadir;
mod flavor;
pub mod galera;
mod mariadb;
mod os_user;
pub mod pg_shards;
mod postgres;
mod process;
mod secret;
pub mod spider;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

pub use cluster::{
    describe_cluster_dir, is_cluster_dir, remove_cluster_dir, start_cluster, stop_cluster_dir,
    ClusterKind, ClusterOptions, RunningCluster, StartKind,
};
pub use secret::{password_for_port, password_for_socket_dir, PASSWORD_FILE};

/// One row per cluster kind, in the order of [`ClusterKind::ALL`], each given by the kind's own
/// file: every question asked of a kind is answered by its row ([`ClusterKind`] reads it), so
/// no code matches on a kind, and `cluster.rs` calls no kind's code by name. A new kind is its
/// file with its `CLUSTER` row, and a line here.
const CLUSTERS: [cluster::ClusterRow; 3] = [galera::CLUSTER, spider::CLUSTER, pg_shards::CLUSTER];

/// Whether process `pid` runs (exists and is not a zombie waiting to be reaped).
pub fn process_runs(pid: u32) -> bool {
    process::ProcId::of(pid).is_some()
}

use datadir::Marker;
use flavor::{Binaries, Flavor};
use os_user::OsUser;
use process::{Proc, ProcId};

use crate::deadline::Since;

/// How long a server may take to accept connections after it is started.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a clean shutdown may take before the server is killed with SIGKILL (a shutdown
/// checkpoint of a large buffer pool takes a while).
const STOP_TIMEOUT: Duration = Duration::from_secs(120);

/// Which server to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ServerKind {
    /// PostgreSQL (initdb, postgres).
    Postgres,
    /// MariaDB (mariadb-install-db, mariadbd), with the RocksDB plugin when installed.
    Mariadb,
}

impl ServerKind {
    /// Short name, as on the command line: `postgres`, `mariadb`.
    pub fn name(self) -> &'static str {
        SERVERS[self as usize].1
    }

    /// The kind with short name `name`.
    pub fn from_name(name: &str) -> Option<ServerKind> {
        SERVERS.iter().find(|s| s.1 == name).map(|s| s.0)
    }

    /// The throwaway server that speaks the protocol of a target kind (as
    /// `dbms::TargetSpec` names it), as the kind's row says: PostgreSQL for `postgres`, MariaDB
    /// for `mysql` (and for anything else: callers ask only for a kind that needs a server).
    pub fn for_target(kind: &str) -> ServerKind {
        crate::dbms::registry::find(kind)
            .and_then(|k| k.server)
            .and_then(ServerKind::from_name)
            .unwrap_or(ServerKind::Mariadb)
    }

    /// Product name for messages: `PostgreSQL`, `MariaDB`.
    pub fn product(self) -> &'static str {
        self.flavor().product()
    }

    fn flavor(self) -> &'static dyn Flavor {
        SERVERS[self as usize].2
    }
}

/// One row per server kind, in the order of its variants: the kind, its short name and how to
/// find, initialize, start and stop it (its [`Flavor`]).
static SERVERS: [(ServerKind, &str, &dyn Flavor); 2] = [
    (ServerKind::Postgres, "postgres", &postgres::Postgres),
    (ServerKind::Mariadb, "mariadb", &mariadb::Mariadb),
];

impl std::fmt::Display for ServerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How to start a server.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// New data directory (must not exist, or be empty).
    pub datadir: PathBuf,
    /// Port; `None` picks a free one.
    pub port: Option<u16>,
    /// Server settings (`--set name=value`), passed at start-up.
    pub settings: Vec<(String, String)>,
    /// Start it with TLS required (`--server-tls DIR`); `None`: in clear.
    pub tls: Option<ServerTls>,
}

/// TLS for a throwaway server or cluster (`--server-tls DIR`): the server's certificate and
/// private key, and the root certificate that signed it. The server takes TCP connections over
/// TLS only (PostgreSQL: `hostssl` lines in pg_hba.conf; MariaDB: `require_secure_transport`),
/// and every connection ixbench makes to it verifies the chain and the host name 127.0.0.1
/// against the root ([`RunningServer::url`] carries the settings). Copies of the three files
/// go in the data directory, owned by the server's user (a cluster's nodes read the root's
/// copy when they connect to each other: postgres_fdw, Spider).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTls {
    /// The server's certificate (PEM); it must name 127.0.0.1 (`subjectAltName=IP:127.0.0.1`).
    pub cert: PathBuf,
    /// Its private key (PEM, unencrypted).
    pub key: PathBuf,
    /// The root certificate (PEM) that signed `cert`.
    pub ca: PathBuf,
}

/// The names of the files of [`ServerTls`] in a data directory.
const TLS_CERT: &str = "ixbench-server.crt";
const TLS_KEY: &str = "ixbench-server.key";
const TLS_CA: &str = "ixbench-ca.crt";

impl ServerTls {
    /// `DIR/server.crt`, `DIR/server.key` and `DIR/ca.crt`, each a file.
    pub fn from_dir(dir: &Path) -> Result<ServerTls> {
        let dir =
            std::path::absolute(dir).with_context(|| format!("--server-tls {}", dir.display()))?;
        let file = |name: &str| -> Result<PathBuf> {
            let p = dir.join(name);
            if !p.is_file() {
                bail!(
                    "--server-tls {}: no file {name} there (give a directory with server.crt, \
                     server.key and ca.crt, the certificate naming 127.0.0.1)",
                    dir.display()
                );
            }
            Ok(p)
        };
        let tls = ServerTls {
            cert: file("server.crt")?,
            key: file("server.key")?,
            ca: file("ca.crt")?,
        };
        crate::dbms::tls::check_server_cert(&tls.cert, &tls.ca, "127.0.0.1")
            .map_err(|e| anyhow::anyhow!("--server-tls {}: {e}", dir.display()))?;
        Ok(tls)
    }
}

impl ServerOptions {
    /// Options for a new data directory `datadir`, a free port, and default settings.
    pub fn new(datadir: impl Into<PathBuf>) -> ServerOptions {
        ServerOptions {
            datadir: datadir.into(),
            port: None,
            settings: Vec::new(),
            tls: None,
        }
    }
}

/// A server started by ixbench. Dropping it stops the server (unless it was detached).
#[derive(Debug)]
pub struct RunningServer {
    /// What it is.
    pub kind: ServerKind,
    /// Its data directory (absolute, symlinks resolved).
    pub datadir: PathBuf,
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
    /// Its Unix socket, when it has one (PostgreSQL: none when the path would be too long).
    pub socket: Option<PathBuf>,
    /// The server's log file (`DATADIR/server.log`).
    pub log: PathBuf,
    /// Settings it runs with (names normalized: lower case, `_` for `-`).
    pub settings: Vec<(String, String)>,
    /// Whether ixbench created the data directory (only then may it remove it).
    pub created_datadir: bool,
    /// The install's `bin/` directory given with `--server-bin`; `None`: the system's.
    pub bin_dir: Option<PathBuf>,
    /// The administrator's generated password (never printed).
    password: String,
    /// The private socket directory ixbench made outside the data directory, if any.
    private_sockdir: Option<PathBuf>,
    /// Settings consumed when the data directory was created (fixed afterwards).
    init_settings: Vec<(String, String)>,
    /// The server's TLS settings (`--server-tls`), given at every start besides `settings`;
    /// empty when it runs without TLS.
    tls_settings: Vec<(String, String)>,
    /// The root certificate ixbench's connections verify the server with (`--server-tls`).
    tls_ca: Option<PathBuf>,
    bins: Binaries,
    user: Option<OsUser>,
    proc: Option<Proc>,
    detached: bool,
}

impl RunningServer {
    /// URL ixbench's targets accept (`postgres://...` or `mysql://...`), no password: the one
    /// to print. ixbench finds the password by itself (see [`password_for_port`]).
    /// A server started with TLS (`--server-tls`): the URL's parameters verify its chain and
    /// host name against the root certificate, so every connection made from it (the
    /// workload's, the admin ones of a cluster) is TLS, verified.
    pub fn url(&self) -> String {
        url_of(self.kind.flavor(), self.port, self.tls_ca.as_deref())
    }

    /// The root certificate the server's certificate is verified with, when it runs with TLS
    /// (`--server-tls`): its copy in the data directory, which the server's user reads (for
    /// the connections one node of a cluster makes to another).
    pub fn tls_ca_for_server(&self) -> Option<PathBuf> {
        self.tls_ca.as_ref().map(|_| self.datadir.join(TLS_CA))
    }

    /// The URL with the administrator's password, for connecting from code (never print it).
    pub fn url_with_password(&self) -> String {
        let flavor = self.kind.flavor();
        let url = self.url();
        let user = flavor.admin_user();
        url.replacen(
            &format!("://{user}@"),
            &format!("://{user}:{}@", crate::dbms::percent_encode(&self.password)),
            1,
        )
    }

    /// The administrator's password (never print it).
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The server program it runs (`.../bin/postgres`, `/usr/sbin/mariadbd`).
    pub fn program(&self) -> &Path {
        &self.bins.server
    }

    /// What the server program says its version is (`postgres (PostgreSQL) 18.6`), from
    /// `PROGRAM --version`; `None` when it could not be run or said nothing.
    pub fn program_version(&self) -> Option<String> {
        let out = std::process::Command::new(&self.bins.server)
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().next()?.trim();
        (out.status.success() && !line.is_empty()).then(|| line.to_string())
    }

    /// PIDs of the server's processes (for /proc CPU and I/O figures): the postmaster and its
    /// children for PostgreSQL, `mariadbd` for MariaDB. Empty once stopped.
    pub fn pids(&self) -> Vec<u32> {
        let Some(id) = self.proc.as_ref().map(Proc::id).filter(ProcId::alive) else {
            return Vec::new();
        };
        let mut pids = vec![id.pid];
        if self.kind.flavor().has_children() {
            pids.extend(process::children(id.pid).into_iter().map(|c| c.pid));
        }
        pids
    }

    /// Stop the server (fast shutdown) and wait for its processes to exit; after 120 s they are
    /// killed with SIGKILL and an error says so. The data directory is kept.
    pub fn stop(mut self) -> Result<()> {
        self.shutdown()?;
        self.forget();
        Ok(())
    }

    /// Stop the server, then remove its data directory if ixbench created it; a directory that
    /// existed before is left as it is, files and all.
    pub fn stop_and_remove(mut self) -> Result<()> {
        self.shutdown()?;
        self.forget();
        if self.created_datadir {
            std::fs::remove_dir_all(&self.datadir)
                .with_context(|| format!("removing {}", self.datadir.display()))?;
        }
        Ok(())
    }

    /// Stop the server and start it again on the same data directory and port with `settings`
    /// instead of the current ones (for settings that need a restart, such as
    /// `innodb_sort_buffer_size` or `max_worker_processes`). On failure the server stays
    /// stopped and the error holds the last lines of its log; calling again with other
    /// settings may start it.
    pub fn restart_with(&mut self, settings: &[(String, String)]) -> Result<()> {
        let flavor = self.kind.flavor();
        let new = check_settings(flavor, &self.bins, settings)?;
        for (name, value) in new.iter().filter(|(n, _)| flavor.init_only(n)) {
            let at_init = self.init_settings.iter().find(|(n, _)| n == name);
            if at_init.map(|(_, v)| v) != Some(value) {
                bail!(
                    "{name} is fixed when the data directory is created (it was {}); start a \
                     new server to change it",
                    at_init.map_or("the default", |(_, v)| v.as_str())
                );
            }
        }
        self.shutdown()?;
        self.settings = new;
        self.launch()
            .with_context(|| format!("restarting {} on {}", self.kind.product(), self.dir()))
    }

    /// Leave the server running after this value is dropped (for `ixbench server start`); stop
    /// it later with [`stop_datadir`].
    pub fn detach(mut self) {
        self.detached = true;
        // Dropping our handle of the child neither signals nor waits for it.
        if let Some(p) = self.proc.take() {
            crate::stop::unregister_server(p.pid());
        }
    }

    fn dir(&self) -> String {
        self.datadir.display().to_string()
    }

    /// After a stop: remove the registry entry and the private socket directory.
    fn forget(&mut self) {
        secret::unregister(self.port, &self.datadir);
        if let Some(d) = self.private_sockdir.take() {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    /// Start the server process and wait until it accepts connections as the server on our
    /// data directory.
    fn launch(&mut self) -> Result<()> {
        let flavor = self.kind.flavor();
        Marker {
            kind: self.kind.name().into(),
            port: self.port,
            created_dir: self.created_datadir,
            settings: self.settings.clone(),
            socket_dir: self.private_sockdir.clone(),
        }
        .write(&self.datadir)?;
        let settings: Vec<(String, String)> = self
            .settings
            .iter()
            .chain(&self.tls_settings)
            .cloned()
            .collect();
        let mut cmd = flavor.server_args(
            &self.bins,
            &self.datadir,
            self.port,
            self.socket.as_deref(),
            &settings,
        );
        process::setup(&mut cmd, &self.datadir, self.user.as_ref());
        let log_from = std::fs::metadata(&self.log).map_or(0, |m| m.len());
        let mut proc = process::spawn_server(&mut cmd, &self.log)?;
        let t0 = Since::start();
        loop {
            if !proc.alive() {
                let status = proc
                    .exit_status()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                // The server's own error first, on its own; the log's last lines after it.
                match process::log_error(&self.log, log_from) {
                    Some(error) => bail!(
                        "{} on {} exited during start-up{status}: {error} (log: {})",
                        flavor.product(),
                        self.dir(),
                        self.log.display()
                    ),
                    None => bail!(
                        "{} on {} exited during start-up{status}; last lines of {}: {}",
                        flavor.product(),
                        self.dir(),
                        self.log.display(),
                        process::log_tail(&self.log, 12)
                    ),
                }
            }
            if flavor.ready(
                self.port,
                &self.datadir,
                &self.password,
                !self.tls_settings.is_empty(),
            ) {
                // A third stop request (Ctrl-C, SIGTERM) asks it to shut down before exiting.
                crate::stop::register_server(proc.pid(), flavor.stop_signal());
                self.proc = Some(proc);
                return Ok(());
            }
            if t0.so_far() > START_TIMEOUT {
                let others = if flavor.has_children() {
                    process::children(proc.pid())
                } else {
                    Vec::new()
                };
                let _ = process::shut_down(
                    &mut proc,
                    &others,
                    nix::sys::signal::Signal::SIGKILL,
                    STOP_TIMEOUT,
                );
                bail!(
                    "{} on {} did not accept connections on 127.0.0.1:{} within {} s (killed); \
                     last lines of {}: {}",
                    flavor.product(),
                    self.dir(),
                    self.port,
                    START_TIMEOUT.as_secs(),
                    self.log.display(),
                    process::log_tail(&self.log, 12)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stop the server if it runs.
    fn shutdown(&mut self) -> Result<()> {
        let Some(mut proc) = self.proc.take() else {
            return Ok(());
        };
        crate::stop::unregister_server(proc.pid());
        let flavor = self.kind.flavor();
        let others = if flavor.has_children() {
            process::children(proc.pid())
        } else {
            Vec::new()
        };
        process::shut_down(&mut proc, &others, flavor.stop_signal(), STOP_TIMEOUT)
            .with_context(|| format!("stopping {} on {}", flavor.product(), self.dir()))
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if self.detached {
            return;
        }
        if let Err(e) = self.shutdown() {
            // Not eprintln!: it panics when stderr is gone (after SIGHUP), in a drop.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "ixbench: warning: {e:#}");
        }
        self.forget();
    }
}

/// A data directory for a throwaway server of `kind`: `preferred` when the OS user the server
/// runs as can reach it, otherwise a new directory under the system temp dir. The second
/// value says why the preferred one was not used.
pub fn reachable_datadir(kind: ServerKind, preferred: &Path) -> (PathBuf, Option<String>) {
    let flavor = kind.flavor();
    match os_user::server_user(flavor.account(), flavor.package()) {
        Ok(Some(u)) => match u.check_can_traverse(preferred) {
            Ok(()) => (preferred.to_path_buf(), None),
            Err(e) => (datadir::default_path(kind.name()), Some(format!("{e:#}"))),
        },
        _ => (preferred.to_path_buf(), None),
    }
}

/// Initialize a new data directory and start a server on it.
///
/// The data directory must not exist (it is created) or be empty. Settings are checked first
/// (names reserved by ixbench such as `port` are refused). When `port` is `None` a free port is
/// picked, and picked again if another process takes it before the server binds it.
pub fn start(kind: ServerKind, opts: &ServerOptions) -> Result<RunningServer> {
    start_node(kind, opts, &NodeInit::default())
}

/// [`start`], from the install whose `bin/` directory is `bin_dir` (`--server-bin DIR`; `None`:
/// the system's, as [`start`]).
pub fn start_from(
    kind: ServerKind,
    opts: &ServerOptions,
    bin_dir: Option<&Path>,
) -> Result<RunningServer> {
    let node = NodeInit {
        bin_dir: bin_dir.map(Path::to_path_buf),
        ..NodeInit::default()
    };
    start_node(kind, opts, &node)
}

/// Check setting names (e.g. `--knob` axes) against the list the server program itself gives,
/// before anything is started or created: an unknown name fails with a "did you mean" from
/// that list. Names the list cannot hold (plugins' settings) are left to the server.
pub fn check_setting_names(
    kind: ServerKind,
    bin_dir: Option<&Path>,
    names: &[String],
) -> Result<()> {
    let flavor = kind.flavor();
    let bins = find_bins(flavor, bin_dir)?;
    let Some(known) = flavor.setting_names(&bins) else {
        return Ok(());
    };
    for name in names {
        let n = name.to_ascii_lowercase().replace('-', "_");
        if known.contains(&n) || flavor.plugin_setting(&n) {
            continue;
        }
        let close = known
            .iter()
            .map(|k| (strsim::damerau_levenshtein(&n, k), k))
            .filter(|(d, k)| *d <= 3.min(1.max(k.len() / 4)))
            .min();
        bail!(
            "{} has no setting {name:?}{}",
            flavor.product(),
            close.map_or(String::new(), |(_, k)| format!("; did you mean {k}?"))
        );
    }
    Ok(())
}

/// The programs [`start_from`] would run: from `bin_dir` when given, else the system's. For
/// checking `--server-bin` before anything is created.
pub fn check_server_bin(kind: ServerKind, bin_dir: Option<&Path>) -> Result<()> {
    find_bins(kind.flavor(), bin_dir).map(drop)
}

fn find_bins(flavor: &dyn Flavor, bin_dir: Option<&Path>) -> Result<Binaries> {
    match bin_dir {
        Some(d) => {
            let d =
                std::path::absolute(d).with_context(|| format!("--server-bin {}", d.display()))?;
            if !d.is_dir() {
                bail!("--server-bin {}: no such directory", d.display());
            }
            flavor.find_in(&d)
        }
        None => flavor.find(),
    }
}

/// How a node of a cluster starts differently from a lone server.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeInit {
    /// The administrator's password to set instead of a new one (the nodes of a Galera cluster
    /// share their accounts: a joiner receives the donor's `mysql` schema by SST).
    pub password: Option<String>,
    /// Do not create the database `ixbench` (a Galera joiner receives it from the cluster).
    pub skip_create_database: bool,
    /// The install's `bin/` directory (`--server-bin`); `None`: the system's.
    pub bin_dir: Option<PathBuf>,
}

/// [`start`], for a node of a cluster. A start that fails leaves nothing behind: the server
/// is stopped and a data directory ixbench created is removed (the error holds the last lines
/// of the server's log).
pub(crate) fn start_node(
    kind: ServerKind,
    opts: &ServerOptions,
    node: &NodeInit,
) -> Result<RunningServer> {
    let flavor = kind.flavor();
    let bins = find_bins(flavor, node.bin_dir.as_deref())?;
    let settings = check_settings(flavor, &bins, &opts.settings)?;
    if let Some(p) = opts.port {
        if p == 0 {
            bail!("port 0 is not a port a server can be reached on: give 1..65535, or none");
        }
        process::check_port_free(p)?;
    }
    let user = os_user::server_user(flavor.account(), flavor.package())?;
    if let (Some(u), Some(d)) = (&user, &node.bin_dir) {
        u.check_can_traverse(&bins.server).with_context(|| {
            format!(
                "--server-bin {}: the server runs as {}, which must reach its programs",
                d.display(),
                flavor.account()
            )
        })?;
    }
    let claimed = datadir::claim(&opts.datadir, user.as_ref())?;
    let (dir, created) = (claimed.path.clone(), claimed.created);
    let started = start_in(kind, opts, node, bins, settings, user, claimed);
    let Err(e) = started else {
        return started;
    };
    // The server, if it ran, was stopped when start_in dropped it. Its log goes with the
    // directory: keep a copy outside it, and name that copy in the message.
    let log = dir.join("server.log");
    let e = match keep_log(&log, &dir) {
        Some(kept) => anyhow::anyhow!(
            "{}",
            format!("{e:#}").replace(&log.display().to_string(), &kept.display().to_string())
        ),
        None => e,
    };
    // The directory was new, or empty when claimed: everything in it is ixbench's.
    let cleaned = if created {
        std::fs::remove_dir_all(&dir)
    } else {
        clear_dir(&dir)
    };
    Err(match cleaned {
        Ok(()) => e.context(format!(
            "starting {} (nothing left behind: {} {})",
            flavor.product(),
            if created { "removed" } else { "emptied" },
            dir.display()
        )),
        Err(r) => e.context(format!(
            "starting {} (could not clean up {}: {r})",
            flavor.product(),
            dir.display()
        )),
    })
}

/// A copy of the log of a server that failed to start, outside its data directory (which is
/// removed): `TMPDIR/ixbench-DIRNAME-PID.log`; `None` when there is no log or no copy.
fn keep_log(log: &Path, dir: &Path) -> Option<PathBuf> {
    if !log.is_file() {
        return None;
    }
    let name = dir.file_name()?.to_string_lossy().to_string();
    let kept = std::env::temp_dir().join(format!("ixbench-{name}-{}.log", std::process::id()));
    std::fs::copy(log, &kept).ok()?;
    Some(kept)
}

/// Copy the files of `tls` into the data directory `dir` (owned by the server's `user`, the
/// key readable by it only) and return the settings that make the server use them and take
/// TCP connections over TLS only.
fn install_tls(
    flavor: &dyn Flavor,
    dir: &Path,
    tls: &ServerTls,
    user: Option<&OsUser>,
) -> Result<Vec<(String, String)>> {
    for (from, name) in [
        (&tls.cert, TLS_CERT),
        (&tls.key, TLS_KEY),
        (&tls.ca, TLS_CA),
    ] {
        let text = std::fs::read_to_string(from)
            .with_context(|| format!("--server-tls: reading {}", from.display()))?;
        secret::write_private(&dir.join(name), &text, user)?;
    }
    flavor.require_tls(dir, &dir.join(TLS_CERT), &dir.join(TLS_KEY))
}

/// Remove everything inside `dir`, keeping `dir`.
fn clear_dir(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let p = entry?.path();
        if p.is_dir() && !p.is_symlink() {
            std::fs::remove_dir_all(&p)?;
        } else {
            std::fs::remove_file(&p)?;
        }
    }
    Ok(())
}

/// The rest of [`start_node`], once the data directory is claimed.
fn start_in(
    kind: ServerKind,
    opts: &ServerOptions,
    node: &NodeInit,
    bins: Binaries,
    settings: Vec<(String, String)>,
    user: Option<OsUser>,
    claimed: datadir::Claimed,
) -> Result<RunningServer> {
    let flavor = kind.flavor();
    let dir = claimed.path.clone();
    let password = match &node.password {
        Some(p) => p.clone(),
        None => secret::generate()?,
    };
    flavor
        .init(&bins, &dir, user.as_ref(), &settings, &password)
        .with_context(|| {
            format!(
                "initializing a {} data directory in {}",
                flavor.product(),
                dir.display()
            )
        })?;
    secret::write_password(&dir, &password, user.as_ref())?;
    // The socket goes in the data directory (0700) when the path fits, else in a private
    // directory of its own (5 digits: the longest port).
    let private_sockdir = if flavor.socket(&dir, 65535).is_some() {
        None
    } else {
        Some(secret::private_socket_dir(user.as_ref())?)
    };
    let log = dir.join("server.log");
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .with_context(|| format!("creating {}", log.display()))?;
    if let Some(u) = &user {
        // The server opens its log itself (mariadbd --log-error) as that user.
        u.chown(&log)?;
    }
    let init_settings = settings
        .iter()
        .filter(|(n, _)| flavor.init_only(n))
        .cloned()
        .collect();
    let tls_settings = match &opts.tls {
        Some(tls) => install_tls(flavor, &dir, tls, user.as_ref())?,
        None => Vec::new(),
    };
    let mut server = RunningServer {
        kind,
        datadir: dir,
        port: 0,
        socket: None,
        log,
        settings,
        created_datadir: claimed.created,
        bin_dir: node.bin_dir.clone(),
        password,
        private_sockdir,
        init_settings,
        tls_settings,
        tls_ca: opts.tls.as_ref().map(|t| t.ca.clone()),
        bins,
        user,
        proc: None,
        detached: false,
    };
    let mut attempt = 0;
    loop {
        attempt += 1;
        server.port = match opts.port {
            Some(p) => p,
            None => process::free_port()?,
        };
        let sockdir = server
            .private_sockdir
            .clone()
            .unwrap_or_else(|| server.datadir.clone());
        server.socket = flavor.socket(&sockdir, server.port);
        match server.launch() {
            Ok(()) => break,
            // Another process took the free port before the server bound it: pick another.
            Err(e)
                if opts.port.is_none()
                    && attempt < 3
                    && e.to_string().contains("Address already in use") =>
            {
                continue
            }
            Err(e) => return Err(e),
        }
    }
    // On failure the server is dropped, which stops it.
    if !node.skip_create_database {
        flavor.create_database(server.port, &server.password, server.tls_ca.is_some())?;
    }
    secret::register(server.port, &server.datadir, server.tls_ca.as_deref());
    Ok(server)
}

/// Stop the server running on `datadir` (started by `ixbench server start`): read its pid file,
/// check the process is that server, request a fast shutdown and wait for it to exit.
pub fn stop_datadir(datadir: &Path) -> Result<()> {
    let dir = datadir
        .canonicalize()
        .with_context(|| format!("no data directory {}", datadir.display()))?;
    let kind = check_own_datadir(&dir)?;
    let flavor = kind.flavor();
    let Some(id) = running_on(flavor, &dir)? else {
        // The server is gone (killed, or the machine restarted): forget its registry entry so
        // `server list` stops showing it.
        if let Some(m) = Marker::read(&dir)? {
            secret::unregister(m.port, &dir);
        }
        bail!(
            "no {} server is running on {} ({} is missing or names no such process)",
            flavor.product(),
            dir.display(),
            flavor.pid_file(&dir).display()
        );
    };
    let others = if flavor.has_children() {
        process::children(id.pid)
    } else {
        Vec::new()
    };
    process::shut_down(
        &mut Proc::Other(id),
        &others,
        flavor.stop_signal(),
        STOP_TIMEOUT,
    )
    .with_context(|| format!("stopping {} on {}", flavor.product(), dir.display()))?;
    if let Some(m) = Marker::read(&dir)? {
        secret::unregister(m.port, &dir);
        if let Some(s) = m.socket_dir.filter(|s| secret::is_private_socket_dir(s)) {
            let _ = std::fs::remove_dir_all(s);
        }
    }
    Ok(())
}

/// Whether a server runs on `datadir` (per its pid file and the process's command line).
pub fn server_running(datadir: &Path) -> Result<bool> {
    let dir = datadir
        .canonicalize()
        .with_context(|| format!("no data directory {}", datadir.display()))?;
    let kind = kind_of(&dir)?;
    Ok(running_on(kind.flavor(), &dir)?.is_some())
}

/// Remove a data directory that ixbench created (per its `ixbench-server.json`) and on which no
/// server runs. Anything else is refused and left alone.
pub fn remove_datadir(datadir: &Path) -> Result<()> {
    let dir = datadir
        .canonicalize()
        .with_context(|| format!("no data directory {}", datadir.display()))?;
    check_own_datadir(&dir)?;
    let marker = Marker::read(&dir)?.with_context(|| {
        format!(
            "{} has no {}: ixbench removes only data directories it created",
            dir.display(),
            datadir::MARKER
        )
    })?;
    if !marker.created_dir {
        bail!(
            "{} existed before ixbench initialized a server in it: ixbench removes only \
             directories it created",
            dir.display()
        );
    }
    let kind = kind_of(&dir)?;
    if running_on(kind.flavor(), &dir)?.is_some() {
        bail!("a server still runs on {}: stop it first", dir.display());
    }
    std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))
}

/// Fail with one line naming the package to install when `kind`'s binaries are missing.
pub fn check_installed(kind: ServerKind) -> Result<()> {
    kind.flavor().find().map(drop)
}

/// Whether MariaDB's MyRocks plugin is installed (so [`start`] loads it).
pub fn rocksdb_available() -> bool {
    mariadb::rocksdb_plugin().is_some()
}

/// A storage engine as a throwaway server runs it, with the setting that sizes its cache and
/// the counter of its cache misses (`ixbench pattern cost --engines`).
#[derive(Debug, Clone, Copy)]
pub struct CacheEngine {
    /// The `--target` kind of its server.
    pub target: &'static str,
    /// The `--engine` of its tables, where the server has several.
    pub engine: Option<&'static str>,
    /// The server setting that sizes the engine's cache.
    pub cache_setting: &'static str,
    /// What follows the unit letter of a size in the cache setting (PostgreSQL `64MB`,
    /// MariaDB `64M`).
    pub size_suffix: &'static str,
    /// The server counter of reads that missed the cache.
    pub reads: &'static str,
}

impl CacheEngine {
    /// Whether the engine can be started here (MyRocks needs its plugin).
    pub fn installed(&self) -> bool {
        self.engine != Some("rocksdb") || rocksdb_available()
    }
}

/// The engines `pattern cost --engines` knows, each with the names a user may give it.
const CACHE_ENGINES: &[(&[&str], CacheEngine)] = &[
    (
        &["postgres", "postgresql"],
        CacheEngine {
            target: "postgres",
            engine: None,
            cache_setting: "shared_buffers",
            size_suffix: "B",
            reads: "blks_read",
        },
    ),
    (
        &["innodb"],
        CacheEngine {
            target: "mariadb",
            engine: Some("innodb"),
            cache_setting: "innodb_buffer_pool_size",
            size_suffix: "",
            reads: "buffer_pool_reads",
        },
    ),
    (
        &["myrocks", "rocksdb"],
        CacheEngine {
            target: "mariadb",
            engine: Some("rocksdb"),
            cache_setting: "rocksdb_block_cache_size",
            size_suffix: "",
            reads: "block_cache_miss",
        },
    ),
];

/// The engine a user names (`postgres`, `innodb`, `myrocks`), or `None`.
pub fn cache_engine(name: &str) -> Option<CacheEngine> {
    let name = name.to_ascii_lowercase();
    CACHE_ENGINES
        .iter()
        .find(|(names, _)| names.contains(&name.as_str()))
        .map(|(_, e)| *e)
}

pub fn parse_setting(s: &str) -> Result<(String, String)> {
    let (name, value) = s
        .split_once('=')
        .with_context(|| format!("bad setting {s:?}: expected NAME=VALUE"))?;
    let name = name.trim();
    if name.is_empty() {
        bail!("bad setting {s:?}: expected NAME=VALUE");
    }
    Ok((name.to_string(), value.to_string()))
}

/// Normalize and check settings for `flavor`.
fn check_settings(
    flavor: &dyn Flavor,
    bins: &Binaries,
    settings: &[(String, String)],
) -> Result<Vec<(String, String)>> {
    settings
        .iter()
        .map(|(name, value)| {
            let n = flavor::normalize(name);
            let valid = n.starts_with(|c: char| c.is_ascii_alphabetic())
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
            if !valid {
                bail!(
                    "bad setting name {name:?}: expected letters, digits, _ and . (e.g. \
                     work_mem=64MB)"
                );
            }
            if value.contains('\0') {
                bail!("setting {n} has a NUL byte in its value");
            }
            flavor.check_setting(bins, &n, value)?;
            Ok((n, value.clone()))
        })
        .collect()
}

/// The URL of a server of `flavor` on 127.0.0.1:`port` (no password), with the parameters
/// that verify it against the root certificate `tls_ca` when it runs with TLS: the one
/// `server start` prints and `server list` shows.
fn url_of(flavor: &dyn Flavor, port: u16, tls_ca: Option<&Path>) -> String {
    let url = flavor.url(port);
    match tls_ca {
        Some(ca) => format!("{url}?{}", flavor.tls_params(ca)),
        None => url,
    }
}

/// A server this user's ixbench started and did not stop, as `ixbench server list` shows it.
pub struct Registered {
    /// TCP port on 127.0.0.1.
    pub port: u16,
    /// Its data directory.
    pub datadir: PathBuf,
    /// `postgres` or `mariadb`.
    pub kind: String,
    /// Its URL (without a password), with its TLS settings when it was started with
    /// `--server-tls`: the one `server start` printed.
    pub url: String,
    /// The server's PID, when it runs.
    pub pid: Option<u32>,
    /// When it started (its PID file was written), when it runs.
    pub started: Option<std::time::SystemTime>,
}

/// The servers in this user's registry (see [`secret::registered`]): started by an ixbench of
/// this user, on this machine, and not stopped since. Another user's servers are in their own
/// registry and never listed (nor stopped) here.
pub fn registered_servers() -> Vec<Registered> {
    secret::registered()
        .into_iter()
        .filter_map(|e| {
            let (port, dir) = (e.port, e.datadir);
            let kind = kind_of(&dir).ok()?;
            let flavor = kind.flavor();
            let id = running_on(flavor, &dir).ok().flatten();
            let started = id.as_ref().and_then(|_| {
                std::fs::metadata(flavor.pid_file(&dir))
                    .ok()?
                    .modified()
                    .ok()
            });
            Some(Registered {
                port,
                url: url_of(flavor, port, e.tls_ca.as_deref()),
                kind: kind.name().to_string(),
                pid: id.map(|i| i.pid),
                started,
                datadir: dir,
            })
        })
        .collect()
}

/// The kind of server in `datadir` if it is one this OS user's ixbench started, the only ones
/// `server stop` stops and removes: it must hold ixbench's marker (a data directory ixbench did
/// not initialize, such as the machine's own PostgreSQL's, is refused however its pid file
/// reads), and belong to the user this user's servers run as (the DBMS's account, `postgres`
/// or `mysql`, under root; else this user). Another user's server is refused even when root
/// asks: it is theirs to stop.
pub fn check_own_datadir(datadir: &Path) -> Result<ServerKind> {
    use std::os::unix::fs::MetadataExt;
    let dir = datadir
        .canonicalize()
        .with_context(|| format!("no data directory {}", datadir.display()))?;
    let owner = std::fs::metadata(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .uid();
    let me = nix::unistd::geteuid().as_raw();
    let others = |owner: u32| {
        anyhow::anyhow!(
            "{} belongs to another OS user (uid {owner}): ixbench stops and removes only the \
             servers this user started (`ixbench server list`)",
            dir.display()
        )
    };
    match Marker::read(&dir) {
        Ok(Some(_)) => {}
        Ok(None) => bail!(
            "{} is not a data directory of a server started by ixbench (it has no {}): \
             ixbench stops and removes only the servers it started",
            dir.display(),
            datadir::MARKER
        ),
        Err(_) if owner != me => return Err(others(owner)),
        Err(e) => return Err(e),
    }
    let kind = kind_of(&dir)?;
    let flavor = kind.flavor();
    let runs_as = os_user::server_user(flavor.account(), flavor.package())?.map_or(me, |u| u.uid);
    if owner != runs_as {
        return Err(others(owner));
    }
    Ok(kind)
}

/// The kind of server in `dir`: from ixbench's marker, else from the files the DBMS leaves.
fn kind_of(dir: &Path) -> Result<ServerKind> {
    if let Some(m) = Marker::read(dir)? {
        return ServerKind::from_name(&m.kind).with_context(|| {
            format!(
                "unknown server kind {:?} in {}",
                m.kind,
                dir.join(datadir::MARKER).display()
            )
        });
    }
    if dir.join("PG_VERSION").is_file() {
        Ok(ServerKind::Postgres)
    } else if dir.join("mysql").is_dir() {
        Ok(ServerKind::Mariadb)
    } else {
        bail!(
            "{} is not a data directory of a server started by ixbench",
            dir.display()
        )
    }
}

/// The live server process named by `dir`'s pid file, if its command line shows it is
/// `flavor`'s server on `dir` (a stale pid file may name an unrelated process).
fn running_on(flavor: &dyn Flavor, dir: &Path) -> Result<Option<ProcId>> {
    let pid_file = flavor.pid_file(dir);
    let text = match std::fs::read_to_string(&pid_file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", pid_file.display())),
    };
    let pid: u32 = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .with_context(|| format!("{} does not start with a PID", pid_file.display()))?;
    Ok(ProcId::of(pid).filter(|_| flavor.owns_cmdline(&process::cmdline(pid), dir)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_tls_needs_its_three_files() {
        let t = tempfile::tempdir().unwrap();
        for f in ["server.crt", "server.key"] {
            std::fs::write(t.path().join(f), "x").unwrap();
        }
        let e = ServerTls::from_dir(t.path()).unwrap_err().to_string();
        assert!(e.contains("no file ca.crt") && !e.contains('\n'), "{e}");
        // Files that are there but no certificates: refused before a server starts (the chain
        // is checked as a verifying client checks it; tests/server.rs: a root that signed
        // nothing).
        std::fs::write(t.path().join("ca.crt"), "x").unwrap();
        let e = ServerTls::from_dir(t.path()).unwrap_err().to_string();
        assert!(e.contains("ca.crt") && !e.contains('\n'), "{e}");
        // The URL parameters verify the chain and the host name against the root.
        let ca = Path::new("/d/ca.crt");
        assert_eq!(
            ServerKind::Postgres.flavor().tls_params(ca),
            "sslmode=verify-full&sslrootcert=%2Fd%2Fca.crt"
        );
        assert_eq!(
            ServerKind::Mariadb.flavor().tls_params(ca),
            "ssl-mode=VERIFY_IDENTITY&ssl-ca=%2Fd%2Fca.crt"
        );
    }

    #[test]
    fn settings_parse_and_check() {
        assert_eq!(
            parse_setting("work_mem=64MB").unwrap(),
            ("work_mem".into(), "64MB".into())
        );
        assert_eq!(
            parse_setting("search_path=").unwrap(),
            ("search_path".into(), "".into())
        );
        assert!(parse_setting("work_mem").is_err());
        assert!(parse_setting("=1").is_err());

        let bins = Binaries {
            server: "/x".into(),
            init: "/y".into(),
            rocksdb_plugin: None,
            basedir: None,
        };
        let pg = ServerKind::Postgres.flavor();
        let ok = check_settings(pg, &bins, &[("Work-Mem".into(), "8MB".into())]).unwrap();
        assert_eq!(ok, vec![("work_mem".to_string(), "8MB".to_string())]);
        for bad in ["port", "listen_addresses", "x y", "1abc", "a;b"] {
            assert!(
                check_settings(pg, &bins, &[(bad.into(), "1".into())]).is_err(),
                "{bad}"
            );
        }
        for (name, value) in [("data_checksums", "maybe"), ("wal_segment_size", "3MB")] {
            let e = check_settings(pg, &bins, &[(name.into(), value.into())]).unwrap_err();
            assert!(format!("{e:#}").contains(name), "{e:#}");
        }
    }

    #[test]
    fn kinds_by_name() {
        for (i, k) in [ServerKind::Postgres, ServerKind::Mariadb]
            .into_iter()
            .enumerate()
        {
            // Each kind's row is its own.
            assert_eq!(SERVERS[i].0, k);
            assert_eq!(ServerKind::from_name(k.name()), Some(k));
        }
        assert_eq!(ServerKind::from_name("oracle"), None);
    }
}
