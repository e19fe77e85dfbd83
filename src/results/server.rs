//! What `run.json` records about the throwaway server ixbench started for a run: where its
//! programs came from (`--server-bin` or the system's), the version the program reports, and
//! what became of its data directory.

use serde::{Deserialize, Serialize};

/// The throwaway server of a run (`--target postgres|mariadb`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ServerRecord {
    /// `postgres` or `mariadb`.
    pub kind: String,
    /// The server program that ran (`/usr/lib/postgresql/15/bin/postgres`).
    pub program: String,
    /// The `bin/` directory given with `--server-bin`; `None`: the system's install.
    pub server_bin: Option<String>,
    /// What the program says with `--version` (`postgres (PostgreSQL) 18.6`); `None` when it
    /// could not be run. The version the server reports over SQL is `target.version`.
    pub program_version: Option<String>,
    /// Its data directory.
    pub data_directory: String,
    /// Whether the data directory was kept at the end (`--keep-data`); `None` while the run
    /// goes, or when stopping the server failed.
    pub data_kept: Option<bool>,
}

impl ServerRecord {
    /// The record of `server`, while it runs.
    pub fn of(server: &crate::server::RunningServer) -> ServerRecord {
        ServerRecord {
            kind: server.kind.name().to_string(),
            program: server.program().display().to_string(),
            server_bin: server.bin_dir.as_ref().map(|d| d.display().to_string()),
            program_version: server.program_version(),
            data_directory: server.datadir.display().to_string(),
            data_kept: None,
        }
    }
}
