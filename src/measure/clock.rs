//! The one place measured time comes from: every figure ixbench reports in seconds (a step's,
//! an index build's, a load's, a DDL's, a server start's), every timestamp of a result, and the
//! origin of the measuring loop ([`super::drive`]) read the clock here. Timeouts, polls and
//! waits are not figures: they use [`crate::deadline`]. `tests/clock_reads.rs` fails on a read
//! of the clock anywhere else.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Now, as a point on the monotonic clock (an origin, the end of a phase, a sample's time).
#[inline]
pub fn now() -> Instant {
    Instant::now()
}

/// The time from `t` until now (zero if `t` is later).
#[inline]
pub fn since(t: Instant) -> Duration {
    Instant::now().saturating_duration_since(t)
}

/// Times one thing: started at a moment, read as often as needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopwatch(Instant);

impl Stopwatch {
    /// Started now.
    #[inline]
    pub fn start() -> Self {
        Stopwatch(Instant::now())
    }

    /// The moment it started.
    pub fn started(&self) -> Instant {
        self.0
    }

    /// The time since the start.
    #[inline]
    pub fn elapsed_time(&self) -> Duration {
        self.0.elapsed()
    }

    /// The time since the start, in seconds.
    #[inline]
    pub fn elapsed_secs(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }

    /// The time since the start (or the last lap), and start again from now.
    pub fn lap(&mut self) -> Duration {
        let now = Instant::now();
        let d = now.saturating_duration_since(self.0);
        self.0 = now;
        d
    }
}

/// The measuring clock as the DBMS drivers (a layer below) take it, to time a figure they
/// report: a maintenance action, a quiet wait ([`crate::dbms::FigureClock`]).
pub struct Figures;

impl crate::dbms::FigureClock for Figures {
    fn start(&self) -> Box<dyn Fn() -> f64> {
        let s = Stopwatch::start();
        Box::new(move || s.elapsed_secs())
    }
}

/// The wall clock now, as a time since the Unix epoch (zero for a clock set before 1970).
pub fn wall_now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// The wall clock now, in UTC: the stamps of results (a run's start and end, a check's or a
/// node loss's `at`) and the dates a workload writes into its rows.
#[inline]
pub fn utc_now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

/// The wall clock now, in local time (the date in the name of a directory a person reads).
pub fn local_now() -> chrono::DateTime<chrono::Local> {
    chrono::Local::now()
}

/// The time from `t` (a wall-clock time, such as a file's modification time) until now; None
/// when `t` is in the future.
pub fn wall_since(t: SystemTime) -> Option<Duration> {
    t.elapsed().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwatch_counts_and_laps() {
        let mut s = Stopwatch::start();
        std::thread::sleep(Duration::from_millis(15));
        assert!(s.elapsed_time() >= Duration::from_millis(15));
        assert!(s.elapsed_secs() >= 0.015);
        let l = s.lap();
        assert!(l >= Duration::from_millis(15));
        assert!(s.elapsed_time() < l);
        assert!(since(s.started()) <= s.elapsed_time() + Duration::from_millis(5));
        assert_eq!(since(now() + Duration::from_secs(60)), Duration::ZERO);
    }

    #[test]
    fn figures_time_from_their_start() {
        use crate::dbms::FigureClock;
        let secs = Figures.start();
        std::thread::sleep(Duration::from_millis(15));
        let a = secs();
        assert!(a >= 0.015, "{a}");
        assert!(secs() >= a);
    }

    #[test]
    fn wall_clock_is_after_2020() {
        assert!(wall_now().as_secs() > 1_577_836_800);
        assert!(wall_since(SystemTime::now() + Duration::from_secs(60)).is_none());
    }
}
