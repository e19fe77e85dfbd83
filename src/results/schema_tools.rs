//! What `ixbench ddl --method` stores per point besides the DDL's outcome: which method made
//! the change (the engine's statement, pt-online-schema-change, pg_repack, a user's command),
//! the tool's version, exit status, last message and output file, its phases on the load's
//! clock, what the server spent on the change beyond what the load alone costs (CPU, bytes
//! written), the tool's own CPU, the row count against the workload's own count, and what
//! ixbench dropped after a failed or interrupted tool.

use serde::{Deserialize, Serialize};

/// How one point's change was made and what it cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MethodOutcome {
    /// `native`, `pt-osc`, `pg-repack`, `pg-repack-indexes`, `vacuum-full`, `cluster`,
    /// `reindex-concurrently`, `external`.
    pub method: String,
    /// The statements, or the command line (no password: it goes through a file or the
    /// environment).
    pub command: String,
    /// The program's version (`pt-online-schema-change 3.2.1`), for a tool.
    pub tool_version: Option<String>,
    /// How the program ended: `exit 0`, `exit 11`, `killed by SIGKILL`; `None` for SQL.
    pub exit_status: Option<String>,
    /// The program's last meaningful line (an error, a refusal, `Successfully altered ...`).
    pub last_message: Option<String>,
    /// The program's output in the results directory (both streams, with seconds since its
    /// start).
    pub output_file: Option<String>,
    /// Phases as the program's output announced them: (seconds from the load's start, phase).
    pub phases: Vec<(f64, String)>,
    /// Seconds from the program's announcing its swap (pt-online-schema-change's `Swapping
    /// tables...`, pg_repack's `repack_swap`) to its next line: how long the swap held its lock.
    pub swap_s: Option<f64>,
    /// CPU seconds of the program and its children (client side), from wait4's rusage.
    pub tool_cpu_s: Option<f64>,
    /// The server's CPU seconds from the change's start to its end (/proc; `None` when the
    /// server is not on this machine).
    pub server_cpu_s: Option<f64>,
    /// The same less what the load alone cost over as long (its rate in the baseline window):
    /// what the change added. Negative when the change slowed the load down more than it cost.
    pub extra_server_cpu_s: Option<f64>,
    /// Bytes the server wrote from the change's start to its end, as the DBMS counts them
    /// (see `written_what`).
    pub written_bytes: Option<i64>,
    /// The same less the baseline's rate over as long: the bytes the change added.
    pub extra_written_bytes: Option<i64>,
    /// Which counters `written_bytes` adds up.
    pub written_what: Option<String>,
    /// Rows of the workload's tables when the load started.
    pub rows_before: Option<i64>,
    /// Rows the workload's committed transactions inserted less those they deleted.
    pub rows_net: Option<i64>,
    /// Rows of the workload's tables after the change (with the load stopped).
    pub rows_after: Option<i64>,
    /// What ixbench dropped that the program had created and left (triggers, shadow tables).
    pub cleaned_up: Vec<String>,
    /// What ixbench could not drop (with why): left on the server for the user.
    pub left_behind: Vec<String>,
}
