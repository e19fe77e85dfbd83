//! What a command found, in a few lines a person reads first: the opening of every report
//! ([`super::html::run_section`]). Per command: for `run` (and any workload with steps) each
//! step's rates and p99; for `ddl` each point's (method's) verdict, dip, backlog and recovery
//! in [`super::ddl`]'s own words; for `index` each build's time and cost and the knob point
//! that built fastest; then the self-checks, and the error of a run that failed. Only figures
//! run.json holds are shown, formatted by [`super::format`]; nothing is computed again.

use crate::format as fmt;
use crate::results::ddl::{ddl_secs, DdlPoint, DdlRunResult};
use crate::results::oltp::OltpRun;
use crate::results::verdict::State;
use crate::results::{
    build_groups, median, BuildResult, RunResult, Status, StepResult, StrategyResult,
};

/// One line of the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The words.
    pub text: String,
    /// A line to read first: a failure, a missed rate, no verdict, no recovery.
    pub alarm: bool,
}

impl Line {
    fn ok(text: String) -> Self {
        Line { text, alarm: false }
    }
    fn alarm(text: String) -> Self {
        Line { text, alarm: true }
    }
}

/// Lines per kind of result at most, so the answer stays a few lines (the rest is below).
const MAX_LINES: usize = 12;

/// The answer of a run: what its command found, then its checks and error.
pub fn answer(run: &RunResult) -> Vec<Line> {
    let mut out = Vec::new();
    if let Some(d) = &run.ddl {
        out.extend(ddl_answer(d));
    }
    if !run.builds.is_empty() || !run.strategies.is_empty() {
        out.extend(index_answer(&run.builds, &run.strategies));
    } else if run.ddl.is_none() {
        out.extend(steps_answer(run));
    }
    out.extend(oltp_answer(run));
    out.extend(timeseries_answer(run));
    out.push(checks_line(run));
    if run.status != Status::Ok {
        let status = serde_json::to_value(run.status)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        out.push(Line::alarm(match &run.error {
            Some(e) => format!("status {status}: {e}"),
            None => format!("status {status}"),
        }));
    }
    out
}

/// The p99 of each kind of operation of a step: `insert 18.1 ms, query 0.0340 ms`.
fn p99s(st: &StepResult) -> String {
    st.latency
        .iter()
        .filter(|l| l.latency.count > 0)
        .map(|l| format!("{} {} ms", l.op, fmt::ms(l.latency.p99_us)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per step: its rates (the operations it ran) and p99 per operation.
pub fn steps_answer(run: &RunResult) -> Vec<Line> {
    let mut out = Vec::new();
    for st in run.steps.iter().take(MAX_LINES) {
        let m = &st.summary;
        let mut rates = Vec::new();
        if !st.index_builds.is_empty() {
            rates.push(format!("{} rows indexed/s", fmt::rate(m.ips)));
        } else {
            for (v, what) in [
                (m.ips, "rows inserted/s"),
                (m.dps, "rows deleted/s"),
                (m.qps, "queries/s"),
            ] {
                if v > 0.0 {
                    rates.push(format!("{} {what}", fmt::rate(v)));
                }
            }
        }
        if rates.is_empty() {
            rates.push("no operations timed".into());
        }
        let p99 = p99s(st);
        let mut text = format!(
            "{}: {} in {} s",
            st.name,
            rates.join(", "),
            fmt::secs(st.seconds)
        );
        if !p99.is_empty() {
            text.push_str(&format!("; p99 {p99}"));
        }
        let alarm = !st.rate_ok || st.status != Status::Ok;
        if !st.rate_ok {
            text.push_str("; rate NOT met");
        }
        if let Some(e) = &st.error {
            text.push_str(&format!("; error: {e}"));
        }
        out.push(Line { text, alarm });
    }
    if run.steps.len() > MAX_LINES {
        out.push(Line::ok(format!(
            "... and {} more steps (table below)",
            run.steps.len() - MAX_LINES
        )));
    }
    out
}

/// `ixbench oltp`: per measured run its TPS, QPS, p99 and errors.
pub fn oltp_answer(run: &RunResult) -> Vec<Line> {
    run.workloads
        .typed::<OltpRun>("oltp")
        .iter()
        .take(MAX_LINES)
        .map(|r| {
            let p99 = if r.latency.count > 0 {
                format!("p99 {} ms", fmt::ms(r.latency.p99_us))
            } else {
                "p99 unknown".into()
            };
            let errors = r.totals.errors;
            Line {
                text: format!(
                    "{} ({} threads): {} transactions/s, {} queries/s in {} s; {p99}; {errors} errors",
                    r.workload,
                    r.threads,
                    fmt::rate(r.tps),
                    fmt::rate(r.qps),
                    fmt::secs(r.seconds)
                ),
                alarm: errors > 0,
            }
        })
        .collect()
}

/// `ixbench timeseries`: per partitioning its insert rate and commit p99 (as run.json
/// records them; a figure it does not hold is unknown).
pub fn timeseries_answer(run: &RunResult) -> Vec<Line> {
    run.workloads
        .get("timeseries")
        .into_iter()
        .take(MAX_LINES)
        .map(|v| {
            let part = v["partitioning"].as_str().unwrap_or("?");
            let rate = v["rows_per_sec"]
                .as_f64()
                .map_or("unknown".into(), fmt::rate);
            let p99 = v["latency"]["p99_us"]
                .as_u64()
                .map_or("unknown".into(), |us| format!("{} ms", fmt::ms(us)));
            Line::ok(format!(
                "partitioning {part}: {rate} rows inserted/s; commit p99 {p99}"
            ))
        })
        .collect()
}

/// A point's name: its method (when the run compared methods) and knobs.
fn point_name(n: usize, p: &DdlPoint, methods: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    if methods {
        parts.push(
            p.method
                .as_ref()
                .map(|m| m.method.clone())
                .unwrap_or_else(|| "native".into()),
        );
    }
    parts.extend(p.knobs.iter().map(|(k, v)| format!("{k}={v}")));
    if parts.is_empty() {
        format!("point {}", n + 1)
    } else {
        format!("point {} ({})", n + 1, parts.join(", "))
    }
}

/// Per point (method and knobs): the lines that must be read first
/// ([`super::ddl::verdict_lines`]), then the DDL's time, the dip (TPS and p99 during the DDL
/// against the baseline, [`super::ddl::ratio`]), the backlog's peak and when it drained, and
/// the recovery verdict ([`super::ddl::recovery_verdict`]).
pub fn ddl_answer(d: &DdlRunResult) -> Vec<Line> {
    use super::ddl::{f1, ratio, recovery_verdict, verdict_lines};
    // the method named where the run compared several
    let method = |p: &DdlPoint| p.method.as_ref().map(|m| m.method.clone());
    let methods = d
        .points
        .iter()
        .any(|p| method(p) != d.points.first().and_then(method));
    let mut out = Vec::new();
    for (n, p) in d.points.iter().enumerate().take(MAX_LINES) {
        let name = point_name(n, p, methods);
        for l in verdict_lines(p) {
            out.push(Line::alarm(format!("{name}: {l}")));
        }
        let mut parts = Vec::new();
        match (&p.error, p.ddl.seconds) {
            (Some(e), _) => parts.push(format!("FAILED: {e}")),
            (None, Some(s)) => parts.push(format!("DDL {} s", ddl_secs(s))),
            (None, None) => parts.push("DDL did not run".into()),
        }
        let (state, why) = p.judge();
        let mut alarm = p.error.is_some() || !p.ok || state.exit_status() != 0;
        if let Some(i) = &p.impact {
            if i.tps_ratio.is_some() || i.p99_ratio.is_some() {
                parts.push(format!(
                    "during it TPS {} and p99 {} the baseline's",
                    ratio(i.tps_ratio),
                    ratio(i.p99_ratio)
                ));
            }
            if let Some(b) = &i.backlog {
                parts.push(match b.drained_after_s {
                    Some(a) => format!(
                        "backlog peak {}, drained {} s after the DDL",
                        b.peak,
                        f1(Some(a))
                    ),
                    None => format!("backlog peak {}, NOT drained within the run", b.peak),
                });
                alarm |= b.drained_after_s.is_none();
            }
            let v = recovery_verdict(i);
            alarm |= v.starts_with("NOT");
            parts.push(v);
        }
        parts.push(why);
        out.push(Line {
            text: format!("{name}: {state}: {}", parts.join("; ")),
            alarm,
        });
    }
    if d.points.len() > MAX_LINES {
        out.push(Line::ok(format!(
            "... and {} more points (below)",
            d.points.len() - MAX_LINES
        )));
    }
    out
}

/// The index lab: per build (and mode), the median build time of its repeats at each knob
/// point with its cost (rows/s, the DBMS's CPU, index size), and the knob point that built
/// fastest; then the load strategies, fastest first.
pub fn index_answer(builds: &[BuildResult], strategies: &[StrategyResult]) -> Vec<Line> {
    let mut out = Vec::new();
    // (build mode) -> [(knobs, median s, repeats, ok of all, cpu s, index bytes)]
    // ... rows/s, and the seconds of every repeat that built (for the noise rule)
    type Point = (
        String,
        f64,
        usize,
        usize,
        Option<f64>,
        Option<u64>,
        f64,
        Vec<f64>,
    );
    let mut per_build: Vec<(String, Vec<Point>)> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for ((knobs, build, mode), group) in build_groups(builds) {
        let knob_text = knobs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let ok: Vec<_> = group.iter().filter(|b| b.ok).collect();
        let name = format!("{build} ({mode})");
        if ok.len() < group.len() {
            failed.push(format!(
                "{name}{}: {} of {} builds FAILED",
                if knob_text.is_empty() {
                    String::new()
                } else {
                    format!(" at {knob_text}")
                },
                group.len() - ok.len(),
                group.len()
            ));
        }
        let Some(m) = median(ok.iter().map(|b| b.seconds).collect()) else {
            continue;
        };
        let cpu = median(ok.iter().filter_map(|b| b.server_cpu_secs).collect());
        let bytes: Option<u64> = ok
            .first()
            .filter(|b| !b.index_bytes.is_empty())
            .map(|b| b.index_bytes.iter().map(|(_, v)| v).sum());
        let rps = median(ok.iter().map(|b| b.rows_per_sec).collect()).unwrap_or(0.0);
        let secs = ok.iter().map(|b| b.seconds).collect();
        let point = (knob_text, m, ok.len(), group.len(), cpu, bytes, rps, secs);
        match per_build.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(point),
            None => per_build.push((name, vec![point])),
        }
    }
    for f in failed {
        out.push(Line::alarm(f));
    }
    for (name, mut points) in per_build.into_iter().take(MAX_LINES) {
        points.sort_by(|a, b| a.1.total_cmp(&b.1));
        let best = &points[0];
        let cost = {
            let mut c = vec![format!("{} rows/s", fmt::rate(best.6))];
            c.push(match best.4 {
                Some(s) => format!("DBMS CPU {} s", fmt::secs(s)),
                None => "DBMS CPU unknown".into(),
            });
            if let Some(b) = best.5 {
                c.push(format!("index {}", fmt::bytes(b as f64)));
            }
            c.join(", ")
        };
        let repeats = if best.2 > 1 {
            format!(" (median of {})", best.2)
        } else {
            String::new()
        };
        let text = if points.len() > 1 {
            let worst = &points[points.len() - 1];
            let (state, why) = winner(&best.7, &points[1].0, &points[1].7);
            format!(
                "{name}: {} at {}: {} s{repeats}, {cost}; slowest at {}: {} s ({}x); {state}: {why}",
                if state == State::Improved {
                    "fastest"
                } else {
                    "quickest median"
                },
                best.0,
                fmt::secs(best.1),
                worst.0,
                fmt::secs(worst.1),
                fmt::num(worst.1 / best.1)
            )
        } else {
            let at = if best.0.is_empty() {
                String::new()
            } else {
                format!(" at {}", best.0)
            };
            format!("{name}{at}: {} s{repeats}, {cost}", fmt::secs(best.1))
        };
        out.push(Line::ok(text));
    }
    // The knob point that won: the least total of the builds' medians, over the builds every
    // point measured.
    if let Some(w) = knob_winner(builds) {
        out.push(Line::ok(w));
    }
    if !strategies.is_empty() {
        let mut s: Vec<_> = strategies.iter().collect();
        s.sort_by(|a, b| a.total_secs.total_cmp(&b.total_secs));
        let first = s[0].total_secs;
        let parts: Vec<String> = s
            .iter()
            .map(|x| {
                if x.total_secs == first || first <= 0.0 {
                    format!("{} {} s", x.strategy, fmt::secs(x.total_secs))
                } else {
                    format!(
                        "{} {} s ({}x)",
                        x.strategy,
                        fmt::secs(x.total_secs),
                        fmt::num(x.total_secs / first)
                    )
                }
            })
            .collect();
        out.push(Line::ok(format!(
            "load strategies, to a loaded and indexed table: {}",
            parts.join(", ")
        )));
    }
    out
}

/// Whether the quickest (`best`: the seconds of its repeats) won against the next quickest
/// (`next_name`, `next`), by `compare`'s noise rule ([`super::compare::rule::judge`]):
/// IMPROVED (faster beyond the noise of both), NO CHANGE (within it: no winner) or NO VERDICT
/// (too few runs for the rule: 2 a side and 5 in all), and why in words.
fn winner(best: &[f64], next_name: &str, next: &[f64]) -> (State, String) {
    use super::compare::{model::Class, rule};
    let (Some(b), Some(n)) = (rule::Stats::of(best), rule::Stats::of(next)) else {
        return (State::NoVerdict, "no build to compare".into());
    };
    let (state, _) = rule::judge(&n, &b, false, Class::Rate, &rule::Rule::default(), 0.0);
    let why = match state {
        State::Improved => {
            format!("faster than at {next_name} beyond the noise of their repeats")
        }
        State::NoVerdict => format!(
            "too few runs to call a winner ({} and {} repeat(s); --repeat 3 gives a verdict)",
            b.n, n.n
        ),
        _ => format!("within the noise of the repeats of {next_name}: no winner"),
    };
    // the quickest median is never worse beyond the noise; said as no winner all the same
    let state = match state {
        State::Regression => State::NoChange,
        s => s,
    };
    (state, why)
}

/// `knob point that built fastest: cache_size=-64000, 0.035 s for its 4 build(s), against
/// 0.041 s at cache_size=-2000; IMPROVED: ...`, when the lab swept knobs: the sum of the median
/// build times of the builds every knob point measured, and whether it won beyond the noise of
/// the repeats ([`winner`], on each repeat's sum); else `knob point with the quickest builds`
/// and NO CHANGE or NO VERDICT.
fn knob_winner(builds: &[BuildResult]) -> Option<String> {
    // knob point -> [(build and mode, median s, [(repeat, s)])]
    type Builds = Vec<(String, f64, Vec<(u32, f64)>)>;
    let mut points: Vec<(String, Builds)> = Vec::new();
    for ((knobs, build, mode), group) in build_groups(builds) {
        let text = knobs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let Some(m) = median(group.iter().filter(|b| b.ok).map(|b| b.seconds).collect()) else {
            continue;
        };
        // a build outside the sweep (the load-first strategy's) is no knob point
        if text.is_empty() {
            continue;
        }
        let build = format!("{build} {mode}");
        let reps: Vec<(u32, f64)> = group
            .iter()
            .filter(|b| b.ok)
            .map(|b| (b.repeat, b.seconds))
            .collect();
        match points.iter_mut().find(|(t, _)| *t == text) {
            Some((_, v)) => v.push((build, m, reps)),
            None => points.push((text, vec![(build, m, reps)])),
        }
    }
    if points.len() < 2 {
        return None;
    }
    let common: Vec<String> = points[0]
        .1
        .iter()
        .map(|(b, _, _)| b.clone())
        .filter(|b| points.iter().all(|(_, v)| v.iter().any(|(x, _, _)| x == b)))
        .collect();
    if common.is_empty() {
        return None;
    }
    // (knob point, sum of the medians, each repeat's sum where every common build ran)
    let mut totals: Vec<(String, f64, Vec<f64>)> = points
        .iter()
        .map(|(t, v)| {
            let mine: Vec<_> = v.iter().filter(|(b, _, _)| common.contains(b)).collect();
            let sum = mine.iter().map(|(_, m, _)| m).sum();
            let mut repeats: Vec<u32> = mine[0].2.iter().map(|(r, _)| *r).collect();
            repeats.dedup();
            let per_repeat = repeats
                .iter()
                .filter_map(|r| {
                    mine.iter()
                        .map(|(_, _, reps)| reps.iter().find(|(x, _)| x == r).map(|(_, s)| s))
                        .sum::<Option<f64>>()
                })
                .collect();
            (t.clone(), sum, per_repeat)
        })
        .collect();
    totals.sort_by(|a, b| a.1.total_cmp(&b.1));
    let others: Vec<String> = totals[1..]
        .iter()
        .map(|p| format!("{} s at {}", fmt::secs(p.1), p.0))
        .collect();
    let (state, why) = winner(&totals[0].2, &totals[1].0, &totals[1].2);
    Some(format!(
        "{}: {}, {} s for the {} build(s) every point ran, against {}; {state}: {why}",
        if state == State::Improved {
            "knob point that built fastest"
        } else {
            "knob point with the quickest builds"
        },
        totals[0].0,
        fmt::secs(totals[0].1),
        common.len(),
        others.join(", ")
    ))
}

/// `checks: all 63 passed`, or how many FAILED (an alarm).
pub fn checks_line(run: &RunResult) -> Line {
    let all = run.all_checks();
    let failed = all.iter().filter(|c| !c.check.ok).count();
    if all.is_empty() {
        Line::ok("checks: no self-check ran".into())
    } else if failed == 0 {
        Line::ok(format!("checks: all {} passed", all.len()))
    } else {
        Line::alarm(format!(
            "checks: {failed} of {} FAILED (listed below)",
            all.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(knob: &str, name: &str, seconds: f64) -> BuildResult {
        BuildResult {
            knobs: vec![("cache_size".into(), knob.into())],
            build: name.into(),
            mode: "blocking".into(),
            ok: true,
            seconds,
            rows: 1000,
            rows_per_sec: 1000.0 / seconds,
            index_bytes: vec![(name.into(), 90_112)],
            ..Default::default()
        }
    }

    #[test]
    fn index_lab_answer_names_the_fastest_knob_point() {
        let builds = vec![
            build("-2000", "pi1", 0.012),
            build("-2000", "pi1", 0.016),
            build("-2000", "pi2", 0.020),
            build("-64000", "pi1", 0.030),
            build("-64000", "pi2", 0.010),
            // a failed repeat: said first, left out of the times
            BuildResult {
                ok: false,
                ..build("-64000", "pi2", 9.0)
            },
        ];
        let strategies = vec![
            StrategyResult {
                strategy: "indexes-first".into(),
                total_secs: 0.08,
                ..Default::default()
            },
            StrategyResult {
                strategy: "load-first".into(),
                total_secs: 0.04,
                ..Default::default()
            },
        ];
        let a = index_answer(&builds, &strategies);
        let texts: Vec<&str> = a.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts[0], "pi2 (blocking) at cache_size=-64000: 1 of 2 builds FAILED",
            "{texts:?}"
        );
        assert!(a[0].alarm);
        // medians of the repeats (0.012, 0.016 s -> 0.014 s; 83333, 62500 rows/s -> 72917);
        // unknown CPU said so, never 0
        // 2 and 1 repeats: too few to call a winner
        assert_eq!(
            texts[1],
            "pi1 (blocking): quickest median at cache_size=-2000: 0.0140 s (median of 2), 72917 \
             rows/s, DBMS CPU unknown, index 90.1 kB; slowest at cache_size=-64000: 0.0300 s \
             (2.14x); NO VERDICT: too few runs to call a winner (2 and 1 repeat(s); --repeat 3 \
             gives a verdict)"
        );
        assert!(
            texts[2].starts_with("pi2 (blocking): quickest median at cache_size=-64000: 0.0100 s,")
        );
        // totals over both builds: -2000 0.014 + 0.020 = 0.034, -64000 0.030 + 0.010 = 0.040
        assert!(
            texts[3].starts_with(
                "knob point with the quickest builds: cache_size=-2000, 0.0340 s for the 2 \
                 build(s) every point ran, against 0.0400 s at cache_size=-64000; NO VERDICT: \
                 too few runs"
            ),
            "{}",
            texts[3]
        );
        assert_eq!(
            texts[4],
            "load strategies, to a loaded and indexed table: load-first 0.0400 s, indexes-first \
             0.0800 s (2.00x)"
        );
    }

    /// With 3 repeats a point: a winner beyond the noise is IMPROVED and called fastest; one
    /// within the noise is NO CHANGE, no winner.
    #[test]
    fn a_knob_winner_is_called_only_beyond_the_noise() {
        let sweep = |a: [f64; 3], b: [f64; 3]| {
            let mut v = Vec::new();
            for (knob, secs) in [("-2000", a), ("-64000", b)] {
                for (r, s) in secs.iter().enumerate() {
                    v.push(BuildResult {
                        repeat: r as u32 + 1,
                        ..build(knob, "pi1", *s)
                    });
                }
            }
            knob_winner(&v).unwrap()
        };
        let w = sweep([0.010, 0.011, 0.0105], [0.020, 0.021, 0.0205]);
        assert!(
            w.starts_with("knob point that built fastest: cache_size=-2000,")
                && w.ends_with(
                    "IMPROVED: faster than at cache_size=-64000 beyond the noise of their repeats"
                ),
            "{w}"
        );
        // overlapping repeats: no winner
        let w = sweep([0.010, 0.014, 0.012], [0.011, 0.015, 0.013]);
        assert!(
            w.starts_with("knob point with the quickest builds: cache_size=-2000,")
                && w.contains("NO CHANGE: within the noise of the repeats of cache_size=-64000"),
            "{w}"
        );
        let a = index_answer(
            &[0.010, 0.011, 0.0105]
                .iter()
                .enumerate()
                .map(|(r, s)| BuildResult {
                    repeat: r as u32 + 1,
                    ..build("-2000", "pi1", *s)
                })
                .chain(
                    [0.020, 0.021, 0.0205]
                        .iter()
                        .enumerate()
                        .map(|(r, s)| BuildResult {
                            repeat: r as u32 + 1,
                            ..build("-64000", "pi1", *s)
                        }),
                )
                .collect::<Vec<_>>(),
            &[],
        );
        assert!(
            a[0].text
                .starts_with("pi1 (blocking): fastest at cache_size=-2000")
                && a[0]
                    .text
                    .contains("; IMPROVED: faster than at cache_size=-64000"),
            "{a:?}"
        );
    }

    /// A point measured by ddl's own analysis (export::ddl's test point, at 64MB).
    fn point(ddl_s: f64) -> DdlPoint {
        super::super::ddl::tests::point("64MB", ddl_s)
    }

    #[test]
    fn ddl_answer_is_ddl_s_own_words() {
        let r = DdlRunResult {
            points: vec![point(1.2), point(0.01)],
            ..Default::default()
        };
        let a = ddl_answer(&r);
        let p1 = &a[0];
        let i = r.points[0].impact.as_ref().unwrap();
        assert!(
            p1.text.starts_with(&format!(
                "point 1 (maintenance_work_mem=64MB): {}: DDL ",
                r.points[0].judge().0
            )),
            "{p1:?}"
        );
        assert!(
            p1.text.contains(&format!(
                "during it TPS {} and p99 {} the baseline's",
                super::super::ddl::ratio(i.tps_ratio),
                super::super::ddl::ratio(i.p99_ratio)
            )),
            "{p1:?}"
        );
        assert!(
            p1.text.contains(&super::super::ddl::recovery_verdict(i))
                && p1.text.ends_with(&r.points[0].judge().1),
            "{p1:?}"
        );
        // a DDL shorter than its window: ddl's loud line first, then the figures
        let short: Vec<&Line> = a
            .iter()
            .filter(|l| l.text.starts_with("point 2 "))
            .collect();
        let loud = super::super::ddl::verdict_lines(&r.points[1]);
        assert!(!loud.is_empty());
        assert!(
            short[0].alarm && short[0].text.ends_with(&loud[0]),
            "{short:?}"
        );
        assert!(short.last().unwrap().text.contains(": DDL "), "{short:?}");
    }
}
