//! Open-loop scheduling for rate-limited workers.
//!
//! A throttled worker does not "sleep a bit after each operation" (which hides stalls: the
//! coordinated-omission mistake). Each operation has an *intended* start time fixed in advance;
//! when the database stalls, the following operations start late, their latency is counted from
//! the intended start, so the stall shows up in every operation it delayed, as a user of the
//! database would have seen it. The lag (actual − intended start) is reported too.
//!
//! Arrivals are either uniform (a fixed grid, one operation per period) or Poisson
//! (exponential gaps with the same mean, from a seeded generator, so runs repeat). Each writer
//! of a step gets its own phase, spread evenly over one period from the step's start, so the
//! writers of a step do not all fire at the same instants.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

/// How the intended starts of a throttled writer are spaced.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// One operation every `1/rate` seconds.
    Uniform,
    /// Exponentially distributed gaps with mean `1/rate` (seeded from `--seed`).
    Poisson,
}

/// Intended start times of a stream of operations at a mean rate.
#[derive(Debug, Clone)]
pub struct Schedule {
    origin: Instant,
    /// Nanoseconds between two intended starts (the mean gap for Poisson arrivals).
    period_ns: f64,
    arrivals: Arrivals,
    rng: Pcg64Mcg,
    /// Offset of the next intended start from `origin`, nanoseconds.
    next_ns: f64,
    /// Intended starts handed out so far.
    issued: u64,
}

impl Schedule {
    /// A schedule of `ops_per_sec` operations per second whose first operation is due one gap
    /// after `origin` (each operation closes its slot, so `n` operations at `r` per second
    /// span `n / r` seconds).
    ///
    /// Panics if the rate is not positive (callers validate user input first).
    pub fn new(origin: Instant, ops_per_sec: f64, arrivals: Arrivals, seed: u64) -> Self {
        assert!(ops_per_sec > 0.0, "rate must be positive");
        let mut s = Schedule {
            origin,
            period_ns: 1e9 / ops_per_sec,
            arrivals,
            rng: Pcg64Mcg::seed_from_u64(seed),
            next_ns: 0.0,
            issued: 0,
        };
        s.next_ns = s.gap(1);
        s
    }

    /// The schedule of writer `index` of `writers` in a step that began at `step_start`:
    /// its origin is `step_start` plus `index / writers` of a period, moved on by whole periods
    /// so that its first operation is not due before `now` (the writer's connect time is not
    /// charged to its first operation).
    pub fn for_writer(
        step_start: Instant,
        now: Instant,
        ops_per_sec: f64,
        arrivals: Arrivals,
        seed: u64,
        index: usize,
        writers: usize,
    ) -> Self {
        assert!(ops_per_sec > 0.0, "rate must be positive");
        let period = 1e9 / ops_per_sec;
        let phase = period * index as f64 / writers.max(1) as f64;
        let mut origin = step_start + Duration::from_nanos(phase.round() as u64);
        // How far the first slot (one period after the origin) is behind `now`.
        let first = origin + Duration::from_nanos(period.round() as u64);
        let late = now.saturating_duration_since(first).as_nanos() as f64;
        if late > 0.0 {
            let skip = (late / period).ceil();
            origin += Duration::from_nanos((skip * period).round() as u64);
        }
        Schedule::new(origin, ops_per_sec, arrivals, seed)
    }

    /// The offset from the origin of intended start number `i` (from 1), the previous one being
    /// at `next_ns`.
    fn gap(&mut self, i: u64) -> f64 {
        match self.arrivals {
            // From the index, not by adding, so the grid never drifts.
            Arrivals::Uniform => i as f64 * self.period_ns,
            Arrivals::Poisson => {
                // 1 - u is in (0, 1]: its logarithm is finite.
                let u: f64 = self.rng.random();
                self.next_ns - (1.0 - u).ln() * self.period_ns
            }
        }
    }

    fn at(&self, ns: f64) -> Instant {
        self.origin + Duration::from_nanos(ns.round() as u64)
    }

    /// The origin: the first operation is due one gap after it.
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// Intended start of the next operation, without taking it.
    pub fn peek(&self) -> Instant {
        self.at(self.next_ns)
    }

    /// Intended start of the next operation, and advance to the one after it.
    pub fn next_intended(&mut self) -> Instant {
        let t = self.peek();
        self.issued += 1;
        self.next_ns = self.gap(self.issued + 1);
        t
    }

    /// Number of intended starts handed out so far.
    pub fn issued(&self) -> u64 {
        self.issued
    }

    /// Take the intended starts that are due by `t` and were not handed out (the backlog of a
    /// writer cut off at `t`), at most `max` of them.
    pub fn take_due(&mut self, t: Instant, max: u64) -> Due {
        match self.arrivals {
            Arrivals::Uniform => {
                let first = self.peek();
                if first > t || max == 0 {
                    return Due::Grid {
                        first,
                        period_ns: self.period_ns,
                        count: 0,
                    };
                }
                // Slots issued+1 .. at offsets (i) * period: count those at or before t.
                let upto = ((t - self.origin).as_nanos() as f64 / self.period_ns).floor() as u64;
                let count = (upto.saturating_sub(self.issued)).min(max);
                self.issued += count;
                self.next_ns = self.gap(self.issued + 1);
                Due::Grid {
                    first,
                    period_ns: self.period_ns,
                    count,
                }
            }
            Arrivals::Poisson => {
                let mut v = Vec::new();
                while self.peek() <= t && (v.len() as u64) < max {
                    v.push(self.next_intended());
                }
                Due::List(v)
            }
        }
    }
}

impl Schedule {
    /// Advance past the intended starts due by `t` without listing them, and return how many
    /// there were: what the reporter's copy of a worker's schedule counts to know how many of
    /// the worker's starts were due at a cut (see [`super::drive::Gauge`]). O(1) for uniform
    /// arrivals, one step per start for Poisson ones.
    pub fn count_due(&mut self, t: Instant) -> u64 {
        match self.arrivals {
            Arrivals::Uniform => self.take_due(t, u64::MAX).len(),
            Arrivals::Poisson => {
                let mut n = 0;
                while self.peek() <= t {
                    self.next_intended();
                    n += 1;
                }
                n
            }
        }
    }
}

/// Intended starts that were due and never started.
#[derive(Debug, Clone, PartialEq)]
pub enum Due {
    /// `count` starts from `first`, `period_ns` apart (uniform arrivals: not listed one by
    /// one, a backlog can hold millions).
    Grid {
        /// The first.
        first: Instant,
        /// Nanoseconds between two.
        period_ns: f64,
        /// How many.
        count: u64,
    },
    /// Each start (Poisson arrivals).
    List(Vec<Instant>),
}

impl Due {
    /// How many.
    pub fn len(&self) -> u64 {
        match self {
            Due::Grid { count, .. } => *count,
            Due::List(v) => v.len() as u64,
        }
    }

    /// True when none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`th (from 0).
    pub fn at(&self, i: u64) -> Instant {
        match self {
            Due::Grid {
                first, period_ns, ..
            } => *first + Duration::from_nanos((i as f64 * period_ns).round() as u64),
            Due::List(v) => v[i as usize],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_grid_is_exact_and_does_not_drift() {
        let t0 = Instant::now();
        let mut s = Schedule::new(t0, 3.0, Arrivals::Uniform, 1); // 333.33 ms apart
        let times: Vec<_> = (0..3).map(|_| s.next_intended() - t0).collect();
        assert_eq!(times[0], Duration::from_nanos(333_333_333));
        assert_eq!(times[2], Duration::from_secs(1));
        for _ in 3..3_000_000 {
            s.next_intended();
        }
        // after three million operations the grid is still exact (no accumulated rounding)
        assert_eq!(s.peek() - t0, Duration::from_secs(1_000_000) + times[0]);
        assert_eq!(s.issued(), 3_000_000);
    }

    #[test]
    fn writers_get_evenly_spread_phases_and_skip_slots_before_they_connect() {
        let t0 = Instant::now();
        let first: Vec<Duration> = (0..4)
            .map(|w| {
                Schedule::for_writer(t0, t0, 10.0, Arrivals::Uniform, 1, w, 4).next_intended() - t0
            })
            .collect();
        // period 100 ms: phases 0, 25, 50, 75 ms, first slot one period later
        let ms = Duration::from_millis;
        assert_eq!(first, vec![ms(100), ms(125), ms(150), ms(175)]);
        // connected 230 ms after the step began: the first slot is still on the writer's grid
        let mut s = Schedule::for_writer(t0, t0 + ms(230), 10.0, Arrivals::Uniform, 1, 1, 4);
        assert_eq!(s.next_intended() - t0, ms(325));
        assert_eq!(s.next_intended() - t0, ms(425));
    }

    #[test]
    fn poisson_arrivals_have_the_mean_rate_and_repeat_with_the_seed() {
        let t0 = Instant::now();
        let mut a = Schedule::new(t0, 1000.0, Arrivals::Poisson, 7);
        let mut b = Schedule::new(t0, 1000.0, Arrivals::Poisson, 7);
        let mut c = Schedule::new(t0, 1000.0, Arrivals::Poisson, 8);
        let n = 100_000;
        let mut gaps = Vec::with_capacity(n);
        let mut prev = t0;
        for _ in 0..n {
            let t = a.next_intended();
            assert_eq!(t, b.next_intended());
            gaps.push((t - prev).as_secs_f64());
            prev = t;
        }
        assert_ne!(a.next_intended(), c.next_intended());
        let mean = gaps.iter().sum::<f64>() / n as f64;
        // 1 ms mean; the standard error of the mean of 1e5 exponential gaps is 0.3%
        assert!((mean - 0.001).abs() < 0.00002, "{mean}");
        // exponential: about 1/e of the gaps are longer than the mean
        let longer = gaps.iter().filter(|g| **g > 0.001).count() as f64 / n as f64;
        assert!((longer - (-1.0f64).exp()).abs() < 0.01, "{longer}");
    }

    #[test]
    fn take_due_returns_the_backlog() {
        let t0 = Instant::now();
        let mut s = Schedule::new(t0, 10.0, Arrivals::Uniform, 1);
        s.next_intended(); // 100 ms, started
        let due = s.take_due(t0 + Duration::from_millis(450), u64::MAX);
        let ms: Vec<u128> = (0..due.len())
            .map(|i| (due.at(i) - t0).as_millis())
            .collect();
        assert_eq!(ms, vec![200, 300, 400]);
        assert_eq!(s.issued(), 4);
        assert!(s.take_due(t0 + Duration::from_millis(450), 9).is_empty());
        assert_eq!(s.peek() - t0, Duration::from_millis(500));
        // at most `max`
        assert_eq!(s.take_due(t0 + Duration::from_secs(10), 5).len(), 5);
        assert_eq!(s.peek() - t0, Duration::from_millis(1_000));
        // Poisson: listed, the same count as the arrivals by then
        let mut p = Schedule::new(t0, 1000.0, Arrivals::Poisson, 3);
        let mut q = p.clone();
        let due = p.take_due(t0 + Duration::from_millis(200), u64::MAX);
        let mut n = 0;
        while q.next_intended() <= t0 + Duration::from_millis(200) {
            n += 1;
        }
        assert_eq!(due.len(), n);
    }

    #[test]
    fn count_due_counts_what_take_due_lists() {
        let t0 = Instant::now();
        for arrivals in [Arrivals::Uniform, Arrivals::Poisson] {
            let mut a = Schedule::new(t0, 500.0, arrivals, 5);
            let mut b = a.clone();
            let mut n = 0;
            for ms in [0u64, 3, 250, 251, 900] {
                let t = t0 + Duration::from_millis(ms);
                let c = a.count_due(t);
                assert_eq!(c, b.take_due(t, u64::MAX).len(), "{arrivals:?} {ms}");
                n += c;
            }
            assert_eq!(a.issued(), n);
            assert_eq!(a.peek(), b.peek());
        }
    }
}
