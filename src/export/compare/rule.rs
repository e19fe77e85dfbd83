//! The noise rule: when is a difference between two sets of runs a change?
//!
//! Figures are positive and their noise is multiplicative (a busy machine makes a run 2x slower,
//! never 1000 rows/s slower), so the rule works with factors. With repeats on both sides (at
//! least 2 each and 5 in all) a figure is WORSE only when every new run is worse than every base
//! run, and the gap between the two sides (worst base run / best new run, as a factor) is wider
//! than either side's spread (its max/min) and than a noise floor (1.05 for rates and CPU per
//! operation, 1.25 for tail figures, by default). In words: the change must be larger than the
//! run-to-run spread seen on either side.
//!
//! Why this rule: a comparison judges 15-40 figures at once, so a per-figure false alarm rate
//! of a few percent makes most comparisons of identical setups report something (the old rule,
//! a 5% threshold on single runs, flagged 6 figures per pair of identical small SQLite runs).
//! Separate ranges alone happen by chance once in C(n+m, n) (1 in 20 for 3+3 runs); requiring a
//! gap wider than the spread brings that to about 1 in 250 per figure (simulated with log-normal
//! noise of 3-30%: 0.2-0.4% for 3+3 runs), while a change of about 3 spreads is still found.
//! The floor keeps tiny but consistent differences from being flagged. `better` is the mirror
//! image.
//!
//! With fewer runs no spread is known, and one run per side cannot tell a change from noise (two
//! identical smoke runs on a busy 2-core machine differ by more than 2x in some figures): no
//! verdict is given, the ratios are shown as they are. Asked for one (`--single-verdict`), only
//! a change beyond a large threshold is flagged (a factor of 1.5 for rates by default, 2 for
//! tail figures). Changes are factors (`new/base` for
//! lower-is-better, `base/new` for higher-is-better), so halving a rate counts as much as
//! doubling a latency.

use anyhow::{bail, Result};

use super::model::Class;
use crate::results::verdict::State;

/// Thresholds of the rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Noise floor for rates and CPU per operation, with repeats.
    pub floor: f64,
    /// Noise floor for tail figures, with repeats.
    pub tail_floor: f64,
    /// Threshold for rates and CPU per operation without repeats.
    pub single: f64,
    /// Threshold for tail figures without repeats.
    pub tail_single: f64,
    /// Judge figures without repeats at all (by `single` and `tail_single`); otherwise they get
    /// no verdict.
    pub single_verdict: bool,
}

/// `ixbench compare`'s defaults (its options' defaults; `ixbench report` uses them as they are).
pub const DEFAULT_THRESHOLD: f64 = 0.05;
/// The default of `--tail-threshold`.
pub const DEFAULT_TAIL_THRESHOLD: f64 = 0.25;
/// The default of `--single-threshold`.
pub const DEFAULT_SINGLE_THRESHOLD: f64 = 0.5;

impl Default for Rule {
    /// `ixbench compare`'s rule with its options' defaults.
    fn default() -> Rule {
        Rule::checked(
            DEFAULT_THRESHOLD,
            DEFAULT_TAIL_THRESHOLD,
            DEFAULT_SINGLE_THRESHOLD,
            false,
        )
        .expect("the defaults are in range")
    }
}

impl Rule {
    /// The rule of `ixbench compare`'s options (and `ixbench ab`'s, which are the same), after
    /// checking them: each a relative change above 0 and below its maximum; the tail threshold
    /// without repeats is `single_threshold`, but at least a factor of 2.
    pub fn checked(
        threshold: f64,
        tail_threshold: f64,
        single_threshold: f64,
        single_verdict: bool,
    ) -> Result<Rule> {
        for (name, v, max) in [
            ("--threshold", threshold, 1.0),
            ("--tail-threshold", tail_threshold, 10.0),
            ("--single-threshold", single_threshold, 10.0),
        ] {
            if !(v > 0.0 && v < max) {
                bail!("{name} must be above 0 and below {max} (a relative change: 0.05 is 5%)");
            }
        }
        Ok(Rule {
            floor: threshold,
            tail_floor: tail_threshold,
            single: single_threshold,
            tail_single: single_threshold.max(1.0),
            single_verdict,
        })
    }

    /// The floor (with repeats) or threshold (without) for a class.
    pub fn limit(&self, class: Class, spread: bool) -> f64 {
        match (class, spread) {
            (Class::Rate, true) => self.floor,
            (Class::Tail, true) => self.tail_floor,
            (Class::Rate, false) => self.single,
            (Class::Tail, false) => self.tail_single,
        }
    }
}

/// Median, min, max and count of a set of values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// Number of values.
    pub n: usize,
    /// Median (mean of the middle two for an even count).
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Stats {
    /// `None` for no values.
    pub fn of(v: &[f64]) -> Option<Stats> {
        let median = crate::results::median(v.to_vec())?;
        Some(Stats {
            n: v.len(),
            median,
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }

    /// Run-to-run spread as a factor, max/min (1 for equal values, infinite when the smallest
    /// is 0 and the largest is not); `None` for one value.
    pub fn spread(&self) -> Option<f64> {
        (self.n >= 2).then(|| gap(self.max, self.min).max(1.0))
    }
}

/// Which rule judged a figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// Ranges apart and the median beyond the base range by more than the floor.
    Spread(f64),
    /// No spread known: a change beyond a large threshold (asked for).
    Single(f64),
    /// No spread known and no verdict asked for: too few runs to tell a change from noise.
    NoVerdict,
}

/// Number of ways to pick `k` of `n` (small numbers only).
pub fn choose(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// Enough runs for the spread rule: at least 2 per side and a chance of separate ranges without
/// a change of 1 in 10 or less.
pub fn has_spread(n_base: usize, n_new: usize) -> bool {
    n_base >= 2 && n_new >= 2 && choose(n_base + n_new, n_base) >= 10.0
}

/// How many times `hi` exceeds `lo` (0 when `hi` is 0, infinite when only `lo` is).
fn gap(hi: f64, lo: f64) -> f64 {
    if hi <= 0.0 {
        0.0
    } else if lo <= 0.0 {
        f64::INFINITY
    } else {
        hi / lo
    }
}

impl Stats {
    /// Min, max and median widened by a measuring resolution (an absolute amount each way,
    /// never below 0): a figure counted in clock ticks is only known to within a tick.
    fn widened(&self, resolution: f64) -> (f64, f64, f64, f64) {
        let lo = |x: f64| (x - resolution).max(0.0);
        (
            lo(self.min),
            self.max + resolution,
            lo(self.median),
            self.median + resolution,
        )
    }
}

/// Judge a figure (REGRESSION, IMPROVED, NO CHANGE, or NO VERDICT without enough runs and
/// without `--single-verdict`): base values against new values, each known to within `resolution`
/// (absolute; 0 for finely measured figures).
pub fn judge(
    base: &Stats,
    new: &Stats,
    higher_is_better: bool,
    class: Class,
    rule: &Rule,
    resolution: f64,
) -> (State, Mode) {
    let spread = has_spread(base.n, new.n);
    let limit = rule.limit(class, spread);
    let (b_min, b_max, b_med_lo, b_med_hi) = base.widened(resolution);
    let (n_min, n_max, n_med_lo, n_med_hi) = new.widened(resolution);
    let (worse, better) = if spread {
        // Worse: every new run worse than every base run, by a factor beyond both spreads and
        // the floor. A spread that cannot be measured (a 0 beside a positive value) is
        // infinite, and nothing is flagged.
        let need = (1.0 + limit)
            .max(gap(b_max, b_min).max(1.0))
            .max(gap(n_max, n_min).max(1.0));
        let (worse_gap, better_gap) = if higher_is_better {
            (gap(b_min, n_max), gap(n_min, b_max))
        } else {
            (gap(n_min, b_max), gap(b_min, n_max))
        };
        (worse_gap > need, better_gap > need)
    } else {
        // Medians, each taken at the end of its resolution that is least in favour of a change.
        let need = 1.0 + limit;
        if higher_is_better {
            (
                gap(b_med_lo, n_med_hi) > need,
                gap(n_med_lo, b_med_hi) > need,
            )
        } else {
            (
                gap(n_med_lo, b_med_hi) > need,
                gap(b_med_lo, n_med_hi) > need,
            )
        }
    };
    if !spread && !rule.single_verdict {
        return (State::NoVerdict, Mode::NoVerdict);
    }
    let v = if worse {
        State::Regression
    } else if better {
        State::Improved
    } else {
        State::NoChange
    };
    let mode = if spread {
        Mode::Spread(limit)
    } else {
        Mode::Single(limit)
    };
    (v, mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: Rule = Rule {
        floor: 0.05,
        tail_floor: 0.25,
        single: 0.5,
        tail_single: 1.0,
        single_verdict: true,
    };

    fn st(v: &[f64]) -> Stats {
        Stats::of(v).unwrap()
    }

    #[test]
    fn enough_runs_for_a_spread() {
        assert!(!has_spread(1, 5));
        assert!(!has_spread(2, 2)); // 1 in 6
        assert!(has_spread(2, 3)); // 1 in 10
        assert!(has_spread(3, 3)); // 1 in 20
    }

    #[test]
    fn spread_rule_needs_separate_ranges_and_the_floor() {
        let base = st(&[100.0, 104.0, 110.0]);
        // overlapping ranges: never a change, however far the medians
        let v = judge(
            &base,
            &st(&[60.0, 70.0, 101.0]),
            true,
            Class::Rate,
            &RULE,
            0.0,
        );
        assert_eq!(v, (State::NoChange, Mode::Spread(0.05)));
        // apart, but by less than the floor (100/96.5 < 1.05)
        let v = judge(
            &base,
            &st(&[96.0, 97.0, 96.5]),
            true,
            Class::Rate,
            &RULE,
            0.0,
        );
        assert_eq!(v.0, State::NoChange);
        // apart, but by less than the base spread (110/100 = 1.1)
        let v = judge(
            &base,
            &st(&[91.0, 92.0, 93.0]),
            true,
            Class::Rate,
            &RULE,
            0.0,
        );
        assert_eq!(v.0, State::NoChange);
        // apart, but by less than the new spread (86/70 = 1.23)
        let v = judge(
            &base,
            &st(&[70.0, 80.0, 86.0]),
            true,
            Class::Rate,
            &RULE,
            0.0,
        );
        assert_eq!(v.0, State::NoChange);
        // apart by more than both spreads and the floor (100/88 = 1.136): worse for a rate,
        // better for a latency
        let new = st(&[80.0, 85.0, 88.0]);
        assert_eq!(
            judge(&base, &new, true, Class::Rate, &RULE, 0.0).0,
            State::Regression
        );
        assert_eq!(
            judge(&base, &new, false, Class::Rate, &RULE, 0.0).0,
            State::Improved
        );
        // the same gap (1.136) is within the tail floor (1.25)
        assert_eq!(
            judge(&base, &new, true, Class::Tail, &RULE, 0.0).0,
            State::NoChange
        );
        // mirror image
        assert_eq!(
            judge(&new, &base, true, Class::Rate, &RULE, 0.0).0,
            State::Improved
        );
        assert_eq!(
            judge(&new, &base, false, Class::Rate, &RULE, 0.0).0,
            State::Regression
        );
    }

    #[test]
    fn spreads_are_factors() {
        // one fast outlier widens the base to 2.6x, yet a 3x slowdown of every run is beyond it
        let base = st(&[24739.0, 65538.0, 33546.0]);
        let new = st(&[7969.0, 5594.0, 6874.0]);
        assert_eq!(
            judge(&base, &new, true, Class::Rate, &RULE, 0.0).0,
            State::Regression
        );
        // a 0 beside positive values: the spread is unknown (infinite), nothing is flagged
        let zeros = st(&[0.0, 5.0, 6.0]);
        assert_eq!(zeros.spread(), Some(f64::INFINITY));
        assert_eq!(
            judge(&base, &zeros, true, Class::Tail, &RULE, 0.0).0,
            State::NoChange
        );
        // all 0 against all positive: a factor beyond any spread
        let none = st(&[0.0, 0.0, 0.0]);
        assert_eq!(
            judge(&base, &none, true, Class::Rate, &RULE, 0.0).0,
            State::Regression
        );
    }

    #[test]
    fn clock_ticks_are_not_changes() {
        // server CPU seconds of short builds: 1 tick against 2 ticks is within the resolution
        let base = st(&[0.02, 0.02, 0.02]);
        let new = st(&[0.01, 0.01, 0.01]);
        assert_eq!(
            judge(&base, &new, false, Class::Rate, &RULE, 0.0).0,
            State::Improved
        );
        assert_eq!(
            judge(&base, &new, false, Class::Rate, &RULE, 0.01).0,
            State::NoChange
        );
        // 2 s against 1 s of CPU is a change at any tick
        let base = st(&[2.0, 2.01, 2.02]);
        let new = st(&[1.0, 1.01, 1.0]);
        assert_eq!(
            judge(&base, &new, false, Class::Rate, &RULE, 0.01).0,
            State::Improved
        );
        assert_eq!(
            judge(&st(&[2.0]), &st(&[1.0]), false, Class::Rate, &RULE, 0.01).0,
            State::Improved
        );
        assert_eq!(
            judge(&st(&[0.02]), &st(&[0.01]), false, Class::Rate, &RULE, 0.01).0,
            State::NoChange
        );
    }

    #[test]
    fn single_runs_need_a_large_change() {
        let one = |x: f64| st(&[x]);
        let v = judge(&one(100.0), &one(70.0), true, Class::Rate, &RULE, 0.0);
        assert_eq!(v, (State::NoChange, Mode::Single(0.5)));
        assert_eq!(
            judge(&one(100.0), &one(60.0), true, Class::Rate, &RULE, 0.0).0,
            State::Regression
        );
        // a tail figure must double
        assert_eq!(
            judge(&one(10.0), &one(18.0), false, Class::Tail, &RULE, 0.0).0,
            State::NoChange
        );
        assert_eq!(
            judge(&one(10.0), &one(21.0), false, Class::Tail, &RULE, 0.0).0,
            State::Regression
        );
        // a rate that fell to 0 is worse; 0 to something is better
        assert_eq!(
            judge(&one(100.0), &one(0.0), true, Class::Rate, &RULE, 0.0).0,
            State::Regression
        );
        assert_eq!(
            judge(&one(0.0), &one(5.0), true, Class::Rate, &RULE, 0.0).0,
            State::Improved
        );
    }
}
