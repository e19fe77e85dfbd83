//! When a measuring loop stops taking operations ([`Until`]): shared by the workers of a step
//! ([`super::drive`]), the reporter that ends the last interval at it ([`super::reporter`]) and
//! whoever decides the end (a step's time, a DDL's recovery window).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// When a loop stops taking operations: at an end fixed in advance (a step's time), at one set
/// while it runs (a DDL's recovery window, once the DDL has ended), or at once when told to.
/// Shared by the workers of a step and whoever decides their end.
#[derive(Debug)]
pub struct Until {
    origin: Instant,
    /// Nanoseconds from `origin`; `u64::MAX`: not known yet.
    end_ns: AtomicU64,
    stop: AtomicBool,
}

impl Until {
    /// No end yet (see [`Until::set_end`]); `origin` is the step's start.
    pub fn open(origin: Instant) -> Self {
        Until {
            origin,
            end_ns: AtomicU64::new(u64::MAX),
            stop: AtomicBool::new(false),
        }
    }

    /// The end at `origin + d`.
    pub fn after(origin: Instant, d: Duration) -> Self {
        let u = Until::open(origin);
        u.set_end(origin + d);
        u
    }

    /// The step's start.
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// End at `at`: no operation starts at or after it.
    pub fn set_end(&self, at: Instant) {
        let ns = at.saturating_duration_since(self.origin).as_nanos();
        self.end_ns
            .store(u64::try_from(ns).unwrap_or(u64::MAX - 1), Ordering::SeqCst);
    }

    /// The end, once known.
    pub fn end(&self) -> Option<Instant> {
        match self.end_ns.load(Ordering::SeqCst) {
            u64::MAX => None,
            ns => Some(self.origin + Duration::from_nanos(ns)),
        }
    }

    /// Stop now (a foreground error, an interrupted DDL).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// True once [`Until::stop`] was called.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}
