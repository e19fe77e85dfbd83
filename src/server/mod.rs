//! Throwaway local servers started from the installed binaries, for tests and sweeps:
//! PostgreSQL and MariaDB (InnoDB and MyRocks). A server gets a new data directory, a free
//! local port, and runs as the DBMS's own user when ixbench runs as root.

use std::path::{Path, PathBuf};

use anyhow::Result;

/// Which server to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ServerKind {
    /// PostgreSQL (initdb, postgres).
    Postgres,
    /// MariaDB (mariadb-install-db, mariadbd), with the RocksDB plugin when installed.
    Mariadb,
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
}

/// A server started by ixbench.
#[derive(Debug)]
pub struct RunningServer {
    /// What it is.
    pub kind: ServerKind,
    /// Its data directory.
    pub datadir: PathBuf,
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
}

impl RunningServer {
    /// URL ixbench's targets accept (`postgres://...` or `mysql://...`), no password.
    pub fn url(&self) -> String {
        todo!("server module")
    }

    /// PIDs of the server's processes (for /proc CPU and I/O figures).
    pub fn pids(&self) -> Vec<u32> {
        todo!("server module")
    }

    /// Stop the server and wait for it to exit.
    pub fn stop(self) -> Result<()> {
        todo!("server module")
    }
}

/// Initialize a new data directory and start a server on it.
pub fn start(_kind: ServerKind, _opts: &ServerOptions) -> Result<RunningServer> {
    todo!("server module")
}

/// Stop the server running on `datadir` (started by `ixbench server start`).
pub fn stop_datadir(_datadir: &Path) -> Result<()> {
    todo!("server module")
}
