//! Open-loop scheduling for rate-limited workers.
//!
//! A throttled worker does not "sleep a bit after each operation" (which hides stalls: the
//! coordinated-omission mistake). Each operation has an *intended* start time on a fixed grid,
//! `start + i * period`. When the database stalls, the following operations start late; their
//! latency is counted from the intended start, so the stall shows up in every operation it
//! delayed, as a user of the database would have seen it. The lag (actual − intended start) is
//! reported too, so a writer that cannot keep up is visible.

use std::time::{Duration, Instant};

/// A source of time, so schedules can be tested with a fake clock.
pub trait Clock {
    /// The current time.
    fn now(&self) -> Instant;
    /// Sleep until `t` (or return at once if it has passed).
    fn sleep_until(&self, t: Instant);
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
    fn sleep_until(&self, t: Instant) {
        let now = Instant::now();
        if t > now {
            std::thread::sleep(t - now);
        }
    }
}

/// Intended start times of a constant-rate stream of operations.
#[derive(Debug, Clone)]
pub struct Schedule {
    start: Instant,
    /// Nanoseconds between two intended starts.
    period_ns: f64,
    /// Index of the next operation.
    next: u64,
}

impl Schedule {
    /// A schedule of `ops_per_sec` operations per second beginning at `start`.
    ///
    /// Panics if the rate is not positive (callers validate user input first).
    pub fn new(start: Instant, ops_per_sec: f64) -> Self {
        assert!(ops_per_sec > 0.0, "rate must be positive");
        Schedule {
            start,
            period_ns: 1e9 / ops_per_sec,
            next: 0,
        }
    }

    /// A schedule whose first operation is due one period after `now`: each operation closes
    /// its slot, so `n` operations at `r` per second span `n / r` seconds.
    pub fn after(now: Instant, ops_per_sec: f64) -> Self {
        let mut s = Schedule::new(now, ops_per_sec);
        s.next = 1;
        s
    }

    /// Intended start of operation `i`.
    pub fn intended(&self, i: u64) -> Instant {
        self.start + Duration::from_nanos((i as f64 * self.period_ns).round() as u64)
    }

    /// Intended start of the next operation, and advance to the one after it.
    pub fn next_intended(&mut self) -> Instant {
        let t = self.intended(self.next);
        self.next += 1;
        t
    }

    /// Number of grid slots handed out so far (including a skipped slot 0 of [`Schedule::after`]).
    pub fn issued(&self) -> u64 {
        self.next
    }

    /// How many operations should have started by `now` (for "behind schedule" reports).
    pub fn due_by(&self, now: Instant) -> u64 {
        if now < self.start {
            return 0;
        }
        ((now - self.start).as_nanos() as f64 / self.period_ns).floor() as u64 + 1
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use std::cell::Cell;

    /// A fake clock: `sleep_until` jumps forward; `advance` simulates time spent in an operation.
    pub struct FakeClock {
        now: Cell<Instant>,
    }

    impl FakeClock {
        pub fn new(t: Instant) -> Self {
            FakeClock { now: Cell::new(t) }
        }
        pub fn advance(&self, d: Duration) {
            self.now.set(self.now.get() + d);
        }
    }

    impl Clock for FakeClock {
        fn now(&self) -> Instant {
            self.now.get()
        }
        fn sleep_until(&self, t: Instant) {
            if t > self.now.get() {
                self.now.set(t);
            }
        }
    }

    #[test]
    fn grid_is_exact_and_does_not_drift() {
        let t0 = Instant::now();
        let mut s = Schedule::new(t0, 3.0); // 333.33 ms apart
        let times: Vec<_> = (0..4).map(|_| s.next_intended() - t0).collect();
        assert_eq!(times[0], Duration::ZERO);
        assert_eq!(times[1], Duration::from_nanos(333_333_333));
        assert_eq!(times[3], Duration::from_secs(1));
        // after a million operations the grid is still exact (no accumulated rounding)
        assert_eq!(s.intended(3_000_000) - t0, Duration::from_secs(1_000_000));
    }

    /// A stall delays the operations behind it: their latency from the intended start includes
    /// the wait (coordinated omission corrected), their service time does not.
    #[test]
    fn stall_is_charged_to_waiting_operations() {
        let t0 = Instant::now();
        let clock = FakeClock::new(t0);
        let mut s = Schedule::new(t0, 100.0); // every 10 ms
        let mut latencies = Vec::new();
        let mut services = Vec::new();
        for i in 0..10 {
            let intended = s.next_intended();
            clock.sleep_until(intended);
            let start = clock.now();
            // operation 2 stalls for 50 ms, the others take 1 ms
            clock.advance(Duration::from_millis(if i == 2 { 50 } else { 1 }));
            let done = clock.now();
            latencies.push((done - intended).as_millis() as u64);
            services.push((done - start).as_millis() as u64);
        }
        assert_eq!(services, vec![1, 1, 50, 1, 1, 1, 1, 1, 1, 1]);
        // op 2 ends at 70 ms; ops 3..7 (intended 30..70) start late and catch up by op 8
        assert_eq!(latencies, vec![1, 1, 50, 41, 32, 23, 14, 5, 1, 1]);
        assert_eq!(s.issued(), 10);
    }

    #[test]
    fn after_closes_each_slot() {
        let t0 = Instant::now();
        let mut s = Schedule::after(t0, 2.0);
        assert_eq!(s.next_intended() - t0, Duration::from_millis(500));
        assert_eq!(s.next_intended() - t0, Duration::from_secs(1));
    }

    #[test]
    fn due_by_counts_started_slots() {
        let t0 = Instant::now();
        let s = Schedule::new(t0, 10.0);
        assert_eq!(s.due_by(t0), 1);
        assert_eq!(s.due_by(t0 + Duration::from_millis(99)), 1);
        assert_eq!(s.due_by(t0 + Duration::from_millis(100)), 2);
        assert_eq!(s.due_by(t0 + Duration::from_secs(1)), 11);
    }
}
