//! Key generators for insert patterns: the keys of one column (the PK or an indexed column)
//! in insertion order, for any [`Spec`], deterministic from a seed, O(1) and allocation-free
//! per key.
//!
//! Layout of the key range `[lo, hi]` (width W): the left quarter holds the left-growing stream
//! (it starts at the quarter's top and descends), the right quarter the right-growing stream (it
//! starts at the quarter's bottom and ascends), the middle half the middle streams (evenly
//! spaced starts, even keys, step 2; ascending ones below descending ones) and the random keys
//! (odd keys, a seeded bijection of the key number, so they never repeat). When there are
//! middle ascending (descending) streams, the very first key is a fence at the top (bottom) of
//! the middle half, so that the highest middle stream has keys above it even in an empty index
//! (otherwise it would grow at the right end, which is another pattern).
//!
//! Keys are dealt to the streams in turn (and to the random keys at their share, spread
//! evenly), so key number `i` is a pure function of `i`: [`KeyGen::key_at`] gives it directly,
//! [`KeyGen::next_key`] walks the sequence with a few additions.

use super::spec::Spec;

#[derive(Debug, Clone, Copy)]
struct Lane {
    start: i64,
    step: i64,
}

/// Generator of one column's keys in insertion order. See the module text for the layout.
#[derive(Debug, Clone)]
pub struct KeyGen {
    spec: Spec,
    lanes: Box<[Lane]>,
    /// Keys per lane in one period.
    w_lane: u64,
    /// Random keys in one period.
    w_rand: u64,
    /// Slots of one period: `lanes * w_lane + w_rand`.
    period: u64,
    fences: [i64; 2],
    n_fences: u64,
    rand_lo: i64,
    rand_bits: u32,
    rand_mask: u64,
    rand_keys: [u64; 4],
    capacity: u64,
    // position of the next key
    i: u64,
    cycle: u64,
    slot: u64,
    acc: u64,
    rand_in_period: u64,
    lane_i: usize,
    lane_occ: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// SplitMix64: seed words for the random keys' bijection.
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl KeyGen {
    /// A generator of `keys` keys of pattern `spec` in `[lo, hi]`, seeded with `seed` (the
    /// seed picks the random keys; streams are laid out the same for every seed). Errors (one
    /// line) when the pattern has more streams than keys or the range is too small to hold
    /// `keys` keys without two streams meeting or a key repeating.
    pub fn new(spec: &Spec, seed: u64, lo: i64, hi: i64, keys: u64) -> Result<KeyGen, String> {
        spec.check_keys(keys)?;
        if hi <= lo {
            return Err(format!("key range {lo}..={hi} is empty"));
        }
        let width = hi as i128 - lo as i128 + 1;
        let q = width / 4;
        let mid_lo = lo as i128 + q;
        let mid_hi = hi as i128 - q;
        let even_up = |v: i128| if v.rem_euclid(2) == 0 { v } else { v + 1 };
        let even_down = |v: i128| if v.rem_euclid(2) == 0 { v } else { v - 1 };
        let mut lanes: Vec<Lane> = Vec::new();
        // capacity of each lane, in keys of that lane
        let mut lane_cap = i128::MAX;
        if spec.rhs {
            lanes.push(Lane {
                start: (hi as i128 - q + 1) as i64,
                step: 1,
            });
            lane_cap = lane_cap.min(q);
        }
        if spec.lhs {
            lanes.push(Lane {
                start: (lo as i128 + q - 1) as i64,
                step: -1,
            });
            lane_cap = lane_cap.min(q);
        }
        let m = spec.mid_asc as i128 + spec.mid_desc as i128;
        let mut fences = [0i64; 2];
        let mut n_fences = 0u64;
        if m > 0 {
            let gap = (mid_hi - mid_lo) / (m + 1);
            // an ascending lane heading for a descending one meets it half way: a quarter of
            // the gap each at step 2
            lane_cap = lane_cap.min(gap / 4 - 1);
            for j in 1..=m {
                let asc = j <= spec.mid_asc as i128;
                lanes.push(Lane {
                    start: even_down(mid_lo + gap * j) as i64,
                    step: if asc { 2 } else { -2 },
                });
            }
            if spec.mid_asc > 0 {
                fences[n_fences as usize] = even_down(mid_hi) as i64;
                n_fences += 1;
            }
            if spec.mid_desc > 0 {
                fences[n_fences as usize] = even_up(mid_lo) as i64;
                n_fences += 1;
            }
        }
        let n_lanes = lanes.len() as u64;
        // weights per period
        let (mut w_lane, mut w_rand) = match (spec.random, spec.random_permille) {
            (false, _) => (1, 0),
            (true, None) => (1, 1),
            (true, Some(p)) => (1000 - p as u64, p as u64 * n_lanes),
        };
        if n_lanes == 0 {
            (w_lane, w_rand) = (0, 1);
        }
        let g = gcd(w_lane, w_rand).max(1);
        w_lane /= g;
        w_rand /= g;
        let period = n_lanes * w_lane + w_rand;
        // random keys: odd keys of the middle half
        let rand_lo = if mid_lo.rem_euclid(2) == 1 {
            mid_lo
        } else {
            mid_lo + 1
        };
        let odd = (mid_hi - rand_lo) / 2 + 1;
        let rand_bits = if odd >= 4 {
            (127 - (odd as u128).leading_zeros()).min(62)
        } else {
            0
        };
        let rand_mask = if rand_bits == 0 {
            0
        } else {
            (1u64 << rand_bits) - 1
        };
        let mut s = seed;
        let rand_keys = [
            splitmix(&mut s),
            splitmix(&mut s) | 1,
            splitmix(&mut s) | 1,
            splitmix(&mut s) | 1,
        ];
        // keys the generator can make before a lane leaves its room or a random key repeats
        let periods_lane = if n_lanes > 0 {
            if lane_cap <= 0 {
                0
            } else {
                lane_cap / w_lane as i128
            }
        } else {
            i128::MAX
        };
        let periods_rand = if w_rand > 0 {
            if rand_bits < 2 {
                0
            } else {
                (1i128 << rand_bits) / w_rand as i128
            }
        } else {
            i128::MAX
        };
        let periods = periods_lane.min(periods_rand);
        let capacity = (periods.saturating_mul(period as i128) + n_fences as i128)
            .min(u64::MAX as i128) as u64;
        if keys > capacity {
            return Err(format!(
                "key range {lo}..={hi} is too small for pattern {spec} with {keys} keys (room \
                 for {capacity})"
            ));
        }
        Ok(KeyGen {
            spec: spec.clone(),
            lanes: lanes.into_boxed_slice(),
            w_lane,
            w_rand,
            period,
            fences,
            n_fences,
            rand_lo: rand_lo as i64,
            rand_bits,
            rand_mask,
            rand_keys,
            capacity,
            i: 0,
            cycle: 0,
            slot: 0,
            acc: 0,
            rand_in_period: 0,
            lane_i: 0,
            lane_occ: 0,
        })
    }

    /// The pattern.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// Keys this generator can make with every key distinct and every stream in its room.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Number of the next key [`KeyGen::next_key`] returns.
    pub fn position(&self) -> u64 {
        self.i
    }

    /// Random key number `r` (a seeded bijection on `rand_bits` bits, odd keys).
    #[inline]
    fn random_key(&self, r: u64) -> i64 {
        let b = self.rand_bits;
        let m = self.rand_mask;
        let s = b.div_ceil(2).max(1);
        let k = &self.rand_keys;
        let mut x = (r ^ k[0]) & m;
        x = x.wrapping_mul(k[1]) & m;
        x ^= x >> s;
        x = x.wrapping_mul(k[2]) & m;
        x ^= x >> s;
        x = x.wrapping_mul(k[3]) & m;
        x ^= x >> s;
        self.rand_lo.wrapping_add((x as i64).wrapping_mul(2))
    }

    #[inline]
    fn lane_key(&self, lane: usize, occ: u64) -> i64 {
        let l = self.lanes[lane];
        l.start.wrapping_add(l.step.wrapping_mul(occ as i64))
    }

    /// Key number `i` (0-based) of the sequence, directly.
    pub fn key_at(&self, i: u64) -> i64 {
        if i < self.n_fences {
            return self.fences[i as usize];
        }
        let j = i - self.n_fences;
        let cycle = j / self.period;
        let r = j % self.period;
        let rand_before = (r as u128 * self.w_rand as u128 / self.period as u128) as u64;
        let is_rand =
            ((r as u128 + 1) * self.w_rand as u128 / self.period as u128) as u64 > rand_before;
        if is_rand {
            return self.random_key(cycle * self.w_rand + rand_before);
        }
        let s = r - rand_before;
        let n = self.lanes.len() as u64;
        self.lane_key((s % n) as usize, cycle * self.w_lane + s / n)
    }

    /// Continue from key number `i` (e.g. a later step that goes on with the same pattern).
    pub fn seek(&mut self, i: u64) {
        self.i = i;
        let j = i.saturating_sub(self.n_fences);
        self.cycle = j / self.period;
        self.slot = j % self.period;
        self.acc = ((self.slot as u128 * self.w_rand as u128) % self.period as u128) as u64;
        self.rand_in_period =
            (self.slot as u128 * self.w_rand as u128 / self.period as u128) as u64;
        let s = self.slot - self.rand_in_period;
        let n = self.lanes.len().max(1) as u64;
        self.lane_i = (s % n) as usize;
        self.lane_occ = s / n;
    }

    /// The next key: a few additions and one multiplication, no allocation.
    #[inline]
    pub fn next_key(&mut self) -> i64 {
        let i = self.i;
        self.i += 1;
        if i < self.n_fences {
            return self.fences[i as usize];
        }
        let next_acc = self.acc + self.w_rand;
        let key = if next_acc >= self.period {
            self.acc = next_acc - self.period;
            let r = self.cycle * self.w_rand + self.rand_in_period;
            self.rand_in_period += 1;
            self.random_key(r)
        } else {
            self.acc = next_acc;
            let k = self.lane_key(self.lane_i, self.cycle * self.w_lane + self.lane_occ);
            self.lane_i += 1;
            if self.lane_i == self.lanes.len() {
                self.lane_i = 0;
                self.lane_occ += 1;
            }
            k
        };
        self.slot += 1;
        if self.slot == self.period {
            self.slot = 0;
            self.cycle += 1;
            self.acc = 0;
            self.rand_in_period = 0;
            self.lane_i = 0;
            self.lane_occ = 0;
        }
        key
    }
}

impl Iterator for KeyGen {
    type Item = i64;
    fn next(&mut self) -> Option<i64> {
        Some(self.next_key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn gen(spec: &str, seed: u64, keys: u64) -> KeyGen {
        KeyGen::new(&spec.parse().unwrap(), seed, i64::MIN, i64::MAX, keys).unwrap()
    }

    #[test]
    fn next_key_equals_key_at_and_seek_resumes() {
        for spec in [
            "asc",
            "desc",
            "lr",
            "inf",
            "streams:3",
            "streams:3asc+2desc",
            "lr+streams:2+inf@7.5%",
            "asc+inf",
        ] {
            let mut g = gen(spec, 9, 10_000);
            let keys: Vec<i64> = (0..5_000).map(|_| g.next_key()).collect();
            for (i, k) in keys.iter().enumerate() {
                assert_eq!(*k, g.key_at(i as u64), "{spec} key {i}");
            }
            let mut h = gen(spec, 9, 10_000);
            h.seek(1234);
            assert_eq!(h.position(), 1234);
            for k in &keys[1234..] {
                assert_eq!(h.next_key(), *k, "{spec} after seek");
            }
            let distinct: HashSet<i64> = keys.iter().copied().collect();
            assert_eq!(distinct.len(), keys.len(), "{spec}: keys repeat");
        }
    }

    #[test]
    fn shapes_of_the_simple_patterns() {
        let a: Vec<i64> = gen("asc", 1, 100).take(100).collect();
        assert!(a.windows(2).all(|w| w[1] == w[0] + 1));
        let d: Vec<i64> = gen("desc", 1, 100).take(100).collect();
        assert!(d.windows(2).all(|w| w[1] == w[0] - 1));
        // lr: alternate, the ascending stream above the descending one
        let lr: Vec<i64> = gen("lr", 1, 100).take(100).collect();
        assert!(lr.chunks(2).all(|c| c[0] > c[1]));
        assert!(lr
            .iter()
            .step_by(2)
            .collect::<Vec<_>>()
            .windows(2)
            .all(|w| w[1] > w[0]));
        // middle streams: the fence first, then 2 ascending streams below it
        let m: Vec<i64> = gen("streams:2", 1, 100).take(101).collect();
        assert!(m[1..].iter().all(|k| *k < m[0] && k % 2 == 0));
        assert!(m[1] < m[2] && m[3] == m[1] + 2 && m[4] == m[2] + 2);
        // mixes: 5% random keys, odd, in the middle half, spread evenly
        let mix: Vec<i64> = gen("asc+inf@5%", 1, 2000).take(2000).collect();
        let (q1, q3) = (i64::MIN / 2, i64::MAX / 2);
        let random: Vec<usize> = (0..mix.len())
            .filter(|&i| mix[i] > q1 && mix[i] < q3)
            .collect();
        assert_eq!(random.len(), 100);
        assert!(random.iter().all(|&i| mix[i] % 2 != 0));
        assert!(random.windows(2).all(|w| w[1] - w[0] == 20), "{random:?}");
    }

    #[test]
    fn seeds_change_random_keys_only_and_are_reproducible() {
        let a: Vec<i64> = gen("inf", 1, 1000).take(1000).collect();
        let b: Vec<i64> = gen("inf", 1, 1000).take(1000).collect();
        let c: Vec<i64> = gen("inf", 2, 1000).take(1000).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let s1: Vec<i64> = gen("streams:4", 1, 100).take(100).collect();
        let s2: Vec<i64> = gen("streams:4", 2, 100).take(100).collect();
        assert_eq!(s1, s2);
    }

    #[test]
    fn small_ranges_and_impossible_patterns_are_refused() {
        let spec: Spec = "streams:8".parse().unwrap();
        let e = KeyGen::new(&spec, 1, 0, 1000, 5).unwrap_err();
        assert!(e.contains("more than the 5 keys"), "{e}");
        let e = KeyGen::new(&spec, 1, 0, 1000, 1_000).unwrap_err();
        assert!(e.contains("too small"), "{e}");
        // an i32 column holds 4 middle streams of 100M keys
        let g = KeyGen::new(
            &"streams:4".parse().unwrap(),
            1,
            i32::MIN as i64,
            i32::MAX as i64,
            100_000_000,
        )
        .unwrap();
        assert!(g.capacity() >= 100_000_000);
        let keys: Vec<i64> = (0..400_000_000u64)
            .step_by(1_000_003)
            .map(|i| g.key_at(i))
            .collect();
        assert!(keys
            .iter()
            .all(|k| (i32::MIN as i64..=i32::MAX as i64).contains(k)));
        assert!(KeyGen::new(&spec, 1, 5, 5, 1).is_err());
    }

    /// This thread's CPU time, seconds (steadier than wall time on a busy machine).
    fn thread_cpu() -> f64 {
        use nix::time::{clock_gettime, ClockId};
        let ts = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).unwrap();
        ts.tv_sec() as f64 + ts.tv_nsec() as f64 * 1e-9
    }

    /// Micro-benchmark of the hot path (release build):
    /// `cargo test --release --lib pattern::gen -- --ignored --nocapture`. Prints wall and
    /// thread-CPU nanoseconds per key.
    #[test]
    #[ignore]
    fn ns_per_key() {
        for spec in ["asc", "inf", "streams:3asc+2desc", "lr+streams:4+inf@5%"] {
            let mut g = gen(spec, 1, u32::MAX as u64);
            let n = 100_000_000u64;
            let (t, c) = (crate::measure::clock::Stopwatch::start(), thread_cpu());
            let mut acc = 0i64;
            for _ in 0..n {
                acc = acc.wrapping_add(std::hint::black_box(g.next_key()));
            }
            let cpu = (thread_cpu() - c) * 1e9 / n as f64;
            let wall = t.elapsed_time().as_nanos() as f64 / n as f64;
            let at = (0..n).step_by(97).take(1_000_000);
            let c2 = thread_cpu();
            let mut acc2 = 0i64;
            for i in at {
                acc2 = acc2.wrapping_add(std::hint::black_box(g.key_at(i)));
            }
            let cpu_at = (thread_cpu() - c2) * 1e9 / 1e6;
            println!(
                "{spec}: next_key {wall:.2} ns/key wall, {cpu:.2} ns/key CPU; key_at {cpu_at:.2} \
                 ns/key CPU ({n} keys, checksums {acc} {acc2})"
            );
        }
    }
}
