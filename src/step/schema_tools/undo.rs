//! After a program: drop the triggers and shadow tables it created and left (only those: what
//! existed before it started is never touched), with bounded lock waits and a few tries.

use std::time::Duration;

use super::MethodRunner;
use crate::dbms::ddl::tools::ToolObjects;
use crate::dbms::Conn;

/// Longest wait for a lock of each clean-up statement, seconds.
pub(super) const CLEANUP_LOCK_WAIT: u32 = 10;
/// Attempts of each clean-up statement (a lock timeout, or ixbench's own stop cancelling it).
const CLEANUP_TRIES: u32 = 6;
/// Rounds of looking for what a program left and dropping it.
const CLEANUP_ROUNDS: u32 = 3;

impl MethodRunner<'_> {
    /// Drop what the program created and left (`before`: the same objects before it started),
    /// with bounded lock waits and a few tries each; recorded in the state.
    pub(super) fn clean_up(
        &self,
        conn: &mut dyn Conn,
        before: &ToolObjects,
    ) -> (Vec<String>, Vec<String>) {
        let Some(tools) = self.tools else {
            return (Vec::new(), Vec::new());
        };
        let db = self
            .target
            .client_params()
            .map(|p| p.database)
            .unwrap_or_default();
        let mut cleaned: Vec<String> = Vec::new();
        let mut left: Vec<String> = Vec::new();
        if let Some(sql) = &self.lock_timeout {
            let _ = conn.execute(sql);
        }
        // Looked for again after each round: a statement of the program's that was still
        // waiting for its lock when the program died (a RENAME TABLE) may run meanwhile and
        // leave other objects (`_t_old` instead of `_t_new`).
        for _round in 0..CLEANUP_ROUNDS {
            let now = match tools.objects(self.method, conn, &db, &self.req.table) {
                Ok(n) => n,
                Err(e) => {
                    left.push(format!(
                        "cannot look for what the tool left: {}",
                        crate::format::error_line(&e)
                    ));
                    return (cleaned, left);
                }
            };
            let created = now.minus(before);
            if created.is_empty() {
                left.clear();
                break;
            }
            left.clear();
            for (what, sql) in tools.drop_statements(&self.req.table, &created) {
                let mut last = None;
                for attempt in 0..CLEANUP_TRIES {
                    match conn.execute(&sql) {
                        Ok(()) => {
                            last = None;
                            break;
                        }
                        Err(e) => {
                            last = Some(crate::format::error_line(&e));
                            if attempt + 1 < CLEANUP_TRIES {
                                std::thread::sleep(Duration::from_millis(500));
                            }
                        }
                    }
                }
                match last {
                    None if !cleaned.contains(&what) => cleaned.push(what),
                    None => {}
                    Some(e) => left.push(format!("{what} ({sql}: {e})")),
                }
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        (cleaned, left)
    }
}
