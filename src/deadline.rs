//! Time that is not a measured figure: timeouts, polls, waits, retry back-off and the live
//! status line's elapsed time. Every measured figure (a step's seconds, a build's, a latency)
//! comes from [`crate::measure::clock`] instead; `tests/clock_reads.rs` fails on a read of the
//! clock anywhere else.
//!
//! Base layer: drivers and servers (below `measure`) bound their waits with these.

use std::time::{Duration, Instant};

/// A moment after which a wait gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Deadline(Instant);

impl Deadline {
    /// `d` from now.
    pub fn after(d: Duration) -> Self {
        Deadline(Instant::now() + d)
    }

    /// True once the deadline has passed (or is now).
    pub fn expired(&self) -> bool {
        Instant::now() >= self.0
    }

    /// The time left (zero once expired).
    pub fn remaining(&self) -> Duration {
        self.0.saturating_duration_since(Instant::now())
    }

    /// Move the deadline to `d` from now.
    pub fn reset(&mut self, d: Duration) {
        self.0 = Instant::now() + d;
    }
}

/// How long a wait (or a phase shown on the live status line) has gone on: for "no progress
/// for 15 s", "quiet for 2 s", a connect timeout shared by several attempts. Never a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Since(Instant);

impl Since {
    /// From now.
    pub fn start() -> Self {
        Since(Instant::now())
    }

    /// The time gone since the start.
    pub fn so_far(&self) -> Duration {
        self.0.elapsed()
    }

    /// What is left of `budget` counted from the start (zero once spent).
    pub fn left_of(&self, budget: Duration) -> Duration {
        budget.saturating_sub(self.0.elapsed())
    }

    /// Start again from now.
    pub fn restart(&mut self) {
        self.0 = Instant::now();
    }
}

/// [`Since`] on the kernel's coarse monotonic clock (`CLOCK_MONOTONIC_COARSE`: a resolution of
/// a few milliseconds, read for about a fifth of `Instant::now`'s cost, 6 against 29-39 ns
/// here): for bookkeeping on a statement's path that only needs seconds, such as how long a
/// connection had been idle when the server closed it. Never a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoarseSince(Duration);

impl CoarseSince {
    /// From now.
    pub fn start() -> Self {
        CoarseSince(coarse_now())
    }

    /// The time gone since the start (to the clock's resolution).
    pub fn so_far(&self) -> Duration {
        coarse_now().saturating_sub(self.0)
    }

    /// Start again from now.
    pub fn restart(&mut self) {
        self.0 = coarse_now();
    }
}

/// The coarse monotonic clock's reading (zero if it cannot be read: the times then read 0 s,
/// which only loses the idle time from a message).
fn coarse_now() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC_COARSE)
        .map(Duration::from)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarse_since_counts_seconds() {
        let mut c = CoarseSince::start();
        std::thread::sleep(Duration::from_millis(60));
        let t = c.so_far();
        // The coarse clock ticks every few milliseconds (4 ms at 250 Hz).
        assert!(
            t >= Duration::from_millis(40) && t < Duration::from_secs(5),
            "{t:?}"
        );
        c.restart();
        assert!(c.so_far() < Duration::from_millis(40));
    }

    #[test]
    fn deadline_expires_and_remaining_shrinks() {
        let d = Deadline::after(Duration::from_millis(30));
        assert!(!d.expired());
        assert!(d.remaining() <= Duration::from_millis(30));
        std::thread::sleep(Duration::from_millis(40));
        assert!(d.expired());
        assert_eq!(d.remaining(), Duration::ZERO);
        assert!(Deadline::after(Duration::ZERO).expired());
    }

    #[test]
    fn since_counts_up_and_restarts() {
        let mut s = Since::start();
        std::thread::sleep(Duration::from_millis(20));
        assert!(s.so_far() >= Duration::from_millis(20));
        assert!(s.left_of(Duration::from_millis(10)) == Duration::ZERO);
        s.restart();
        assert!(s.so_far() < Duration::from_millis(20));
    }
}
