//! The driver side of a DBMS: what it is, how its SQL differs, and how to connect to it.
//! Together with [`super::Admin`] and [`super::IndexLab`] it makes a [`super::Dbms`].

use anyhow::Result;

use super::{Conn, SqlDialect, TargetInfo};

/// What a DBMS is and how to connect to it (see [`super::Dbms`]).
pub trait Driver: Send + Sync {
    /// Short name: `sqlite`, `postgres`, `mysql`, `null`.
    fn kind(&self) -> &'static str;

    /// How this DBMS's SQL differs from others', for workloads to write their statements.
    fn dialect(&self) -> &SqlDialect;

    /// A new connection for one worker.
    fn connect(&self) -> Result<Box<dyn Conn>>;

    /// Version, settings and location (never a password).
    fn info(&self, conn: &mut dyn Conn) -> Result<TargetInfo>;

    /// False for the null target: nothing is stored, so there is nothing to check.
    fn stores_rows(&self) -> bool {
        true
    }

    /// PIDs of the server's processes when it runs on this machine and ixbench knows them
    /// (for server CPU and I/O from /proc); empty otherwise.
    fn server_pids(&self) -> Vec<u32> {
        Vec::new()
    }

    /// The TCP port of a server on this machine (127.0.0.1, ::1, localhost), so its processes
    /// can be found; `None` for remote servers and embedded DBMSs.
    fn local_port(&self) -> Option<u16> {
        None
    }

    /// A connection for ixbench's own work rather than the workload's (the control session,
    /// the DDL's session and its progress sampler): [`Driver::connect`] except on a cluster,
    /// where it goes to the entry node whatever `--write-nodes` says.
    fn connect_admin(&self) -> Result<Box<dyn Conn>> {
        self.connect()
    }

    /// True when a worker whose connection was lost may connect again and go on: the DBMS is
    /// several nodes that each take the workload's SQL (a Galera cluster), and
    /// [`Driver::connect`] goes to one that is still up (a write node while one is left).
    fn fails_over(&self) -> bool {
        false
    }

    /// True when the DBMS runs inside ixbench (its CPU and I/O are the ixbench process's).
    fn embedded(&self) -> bool {
        false
    }

    /// How another program (a schema-change tool ixbench runs: pt-online-schema-change,
    /// pg_repack, a user's command) reaches the database ixbench uses, with the same user and
    /// password; `None` where no other program can (SQLite, the null target).
    fn client_params(&self) -> Option<ClientParams> {
        None
    }

    /// The server's major version where its behaviour depends on it (PostgreSQL: 15 for
    /// 15.8, from `server_version_num`), for a command or step to hand to code that needs it
    /// (a schema-change tool's figures); `None` where ixbench does not tell.
    fn major_version(&self) -> Option<u32> {
        None
    }
}

/// Where and as whom another program connects (see [`Driver::client_params`]). The password
/// is kept out of `Debug`: hand it to the program in a file or an environment variable, never
/// on its command line.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientParams {
    /// Host name or address (`localhost` with a Unix socket).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// Unix socket (MySQL: the socket file; PostgreSQL: its directory), when used.
    pub socket: Option<String>,
    /// User name.
    pub user: String,
    /// Password, when one is sent.
    pub password: Option<String>,
    /// Database.
    pub database: String,
}

impl std::fmt::Debug for ClientParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ClientParams({}@{}:{}/{}{}, password {})",
            self.user,
            self.host,
            self.port,
            self.database,
            self.socket
                .as_deref()
                .map(|s| format!(" socket {s}"))
                .unwrap_or_default(),
            if self.password.is_some() {
                "***"
            } else {
                "none"
            }
        )
    }
}
