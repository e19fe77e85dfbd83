//! The insert benchmark's end-of-step response-time lines (`--line-format v2`): `Insert rt:`,
//! `Delete rt:` and `Query rt:`, each a header line and a line of counts per bucket (256us,
//! 1ms, 4ms, 16ms, 64ms, 256ms, 1s, 4s, 16s, gt) then the largest response time in seconds,
//! in the column widths its client prints them (`%10s`, `%9d` per bucket, `%11.6f`), so the
//! scripts that read its output (mytools `bench/ibench/np.sh`, `rth.sh`) read ixbench's.
//!
//! Like the insert benchmark's client, each operation's time is its service time: from when
//! it was sent to when it finished (ixbench's coordinated-omission-corrected latency of a
//! throttled step is in the step summary above them).

use std::fmt::Write as _;

use crate::measure::histogram::LatencySummary;
use crate::results::StepResult;

/// Bucket names as the insert benchmark's client prints them (its last bucket is `gt`).
pub const RT_HEADERS: [&str; 10] = [
    "256us", "1ms", "4ms", "16ms", "64ms", "256ms", "1s", "4s", "16s", "gt",
];

/// The two lines of one operation (`prefix` such as `Insert rt:`), without a final newline.
pub fn rt_lines(prefix: &str, l: &LatencySummary) -> String {
    let mut s = format!("{prefix:>10}");
    for h in RT_HEADERS {
        let _ = write!(s, " {h:>9}");
    }
    let _ = write!(s, " {:>11}\n{prefix:>10}", "max");
    for i in 0..RT_HEADERS.len() {
        let _ = write!(s, " {:>9}", l.buckets.get(i).copied().unwrap_or(0));
    }
    let _ = write!(s, " {:>11.6}", l.max_us as f64 / 1e6);
    s
}

/// The response-time lines of a step's operations (insert, delete, query; those the step
/// ran), one pair per operation, each line ending in a newline; empty when it ran none.
pub fn step_rt_lines(step: &StepResult) -> String {
    let mut s = String::new();
    for (op, prefix) in [
        ("insert", "Insert rt:"),
        ("delete", "Delete rt:"),
        ("query", "Query rt:"),
    ] {
        if let Some(l) = step.latency.iter().find(|l| l.op == op) {
            s.push_str(&rt_lines(prefix, &l.service));
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_as_the_insert_benchmark_prints_them() {
        let l = LatencySummary {
            count: 15,
            max_us: 1_234_567,
            buckets: vec![10, 2, 0, 0, 0, 0, 3, 0, 0, 0],
            ..Default::default()
        };
        let s = rt_lines("Query rt:", &l);
        let lines: Vec<&str> = s.lines().collect();
        // '%10s %9s ... %11s' and '%10s %9d ... %11.6f'
        assert_eq!(
            lines[0],
            " Query rt:     256us       1ms       4ms      16ms      64ms     256ms        1s        4s       16s        gt         max"
        );
        assert_eq!(
            lines[1],
            " Query rt:        10         2         0         0         0         0         3         0         0         0    1.234567"
        );
        assert_eq!(lines[1].split_whitespace().count(), 13);
    }
}
