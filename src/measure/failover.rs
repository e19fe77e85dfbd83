//! A worker whose connection is lost on a target that fails over (a Galera cluster writing to
//! several nodes, one of which died): the one loop ([`super::drive`]) connects again to a
//! surviving node with [`Failover`] and goes on, whichever workload the worker runs; the
//! operation only prepares its statements again on the new connection
//! ([`super::drive::Operation::reconnected`]). What was in flight is counted as a retry; a
//! write whose commit's outcome is unknown is the operation's to record (the insert benchmark
//! keeps its row changes, and finds out from the row count which of them committed with
//! [`subset_sums`]: each committed whole or not at all).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::dbms::{Conn, Dbms};
use crate::deadline::Since;

/// How long a worker tries to connect again before its error stands (a hang guard: the
/// cluster's remaining nodes normally take the connection at once).
const RECONNECT_FOR: Duration = Duration::from_secs(60);

/// Where the workers of a step connect again when their connection died, given to the one
/// loop ([`super::drive::Pacing::failover`]): the target (which connects to a surviving
/// node when it fails over), and the count of connections made again that the step reports.
#[derive(Clone, Copy)]
pub struct Failover<'a> {
    /// The target the workers connected to.
    pub target: &'a dyn Dbms,
    /// Connections made again on a surviving node after theirs died.
    pub reconnects: &'a AtomicU64,
}

impl std::fmt::Debug for Failover<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Failover")
            .field("reconnects", &self.reconnects)
            .finish_non_exhaustive()
    }
}

impl Failover<'_> {
    /// After a worker's operation on `conn` failed: `Some(new connection)` when the target
    /// fails over and `conn` is dead (the node went away), after connecting again to the
    /// target (counted in `reconnects`); `None` when the error stands (the target does not
    /// fail over, the connection still works, so the error was the statement's, or `stop()`
    /// says the phase is stopping, or no node took the connection within the hang guard).
    /// Out of line: only an error gets here, and the loop's hot path stays small.
    #[cold]
    #[inline(never)]
    pub fn reconnect(&self, conn: &mut dyn Conn, stop: &dyn Fn() -> bool) -> Option<Box<dyn Conn>> {
        if !self.target.fails_over() || conn.query_rows("SELECT 1").is_ok() {
            return None;
        }
        let t0 = Since::start();
        while !stop() && t0.so_far() < RECONNECT_FOR {
            // Connecting round robin: an attempt at the dead node (before the node watcher
            // marks it down) fails at once and the next goes to another node.
            match self.target.connect() {
                Ok(c) => {
                    self.reconnects.fetch_add(1, Ordering::SeqCst);
                    return Some(c);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
        None
    }
}

/// Every sum of a subset of `changes` (0 included): the row changes a set of writes in doubt
/// can have made.
pub fn subset_sums(changes: &[i64]) -> HashSet<i64> {
    let mut sums = HashSet::from([0i64]);
    for &c in changes {
        let more: Vec<i64> = sums.iter().map(|s| s + c).collect();
        sums.extend(more);
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_of_writes_in_doubt() {
        let mut s: Vec<i64> = subset_sums(&[10, 10, -10]).into_iter().collect();
        s.sort();
        assert_eq!(s, vec![-10, 0, 10, 20]);
        assert_eq!(subset_sums(&[]), HashSet::from([0]));
        assert!(!subset_sums(&[100, -40]).contains(&40));
        assert!(subset_sums(&[100, -40]).contains(&60));
    }
}
