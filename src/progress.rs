//! The live status line on a terminal: step k of n, elapsed, ETA, the last interval's rates,
//! and what a silent phase is waiting for (an index build, a quiet wait, a checkpoint, a server
//! start), drawn with `indicatif` under the plain output.
//!
//! Only when stdout is a terminal (and `TERM` is not `dumb`, and `IXBENCH_PROGRESS` is not
//! `0`): otherwise every function here does nothing, so output to a file or a pipe is
//! byte-for-byte what it was without it. While the line is shown, everything ixbench prints
//! goes through [`suspend`] (the `outln!`/`out!` macros do it), which clears the line, prints,
//! and draws it again below, so no printed line is lost or mixed with it.
//!
//! The ETA adds up what is left: a step bounded by seconds (read+write steps, `--time`) by
//! its planned seconds, a step bounded by rows by its rows left at the insert rate measured
//! so far (the current step's own rate, else the last step that inserted); a step whose
//! length nothing measured yet can tell (an index build, maintenance) makes it a lower bound,
//! shown as `ETA >= ...`.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use crate::deadline::Since;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a planned step is, as far as the plan says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Planned {
    /// Bounded by time: about this many seconds.
    Seconds(f64),
    /// Bounded by rows inserted (all clients).
    Rows(u64),
    /// Nothing in the plan says (index builds, maintenance, a sweep point).
    Unknown,
}

struct Status {
    bar: ProgressBar,
    steps: Vec<(String, Planned)>,
    current: Option<usize>,
    step_start: Since,
    rows_done: u64,
    /// The last interval's (inserts/s, deletes/s, queries/s) of the current step.
    rates: Option<[f64; 3]>,
    /// The current step's average insert rate.
    step_ins_rate: Option<f64>,
    /// The average insert rate of the last step that inserted.
    last_ins_rate: Option<f64>,
    waiting: Option<String>,
    /// The phase of the step (see [`phase`]).
    phase: Option<String>,
}

static STATUS: Mutex<Option<Status>> = Mutex::new(None);

/// What is in progress, kept whether or not a line is drawn (the live view,
/// `--metrics-listen`, shows it): the plan's step names, the current step, its phase, what a
/// silent phase waits for.
struct Now {
    plan: Vec<String>,
    step: Option<String>,
    phase: Option<String>,
    waiting: Option<String>,
}

static NOW: Mutex<Now> = Mutex::new(Now {
    plan: Vec::new(),
    step: None,
    phase: None,
    waiting: None,
});

fn now_lock() -> std::sync::MutexGuard<'static, Now> {
    NOW.lock().unwrap_or_else(|e| e.into_inner())
}

/// What is in progress, as the command told this module ([`in_progress`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InProgress {
    /// The step in progress (a step, a sweep point, a load).
    pub step: Option<String>,
    /// Its phase, when the step has phases ([`phase`]: `ixbench ddl`'s windows).
    pub phase: Option<String>,
    /// What a silent phase of it waits for (an index build, a quiet wait, a server start).
    pub waiting: Option<String>,
}

/// The step in progress, its phase and what a silent phase of it waits for; kept whether or
/// not a status line is drawn.
pub fn in_progress() -> InProgress {
    let n = now_lock();
    InProgress {
        step: n.step.clone(),
        phase: n.phase.clone(),
        waiting: n.waiting.clone(),
    }
}

fn lock() -> std::sync::MutexGuard<'static, Option<Status>> {
    STATUS.lock().unwrap_or_else(|e| e.into_inner())
}

/// True when a status line would be drawn: stdout is a terminal, `TERM` is not `dumb` and
/// `IXBENCH_PROGRESS` is not `0`.
pub fn wanted() -> bool {
    std::io::stdout().is_terminal()
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
        && std::env::var("IXBENCH_PROGRESS").map_or(true, |v| v != "0")
}

/// Start the status line for a command with these planned steps (nothing when not
/// [`wanted`]). A second call replaces the plan (the line stays).
pub fn start(steps: Vec<(String, Planned)>) {
    now_lock().plan = steps.iter().map(|(n, _)| n.clone()).collect();
    if !wanted() {
        return;
    }
    let mut g = lock();
    if let Some(s) = g.as_mut() {
        s.steps = steps;
        s.current = None;
        redraw(s);
        return;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stdout());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed_precise} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let mut s = Status {
        bar,
        steps,
        current: None,
        step_start: Since::start(),
        rows_done: 0,
        rates: None,
        step_ins_rate: None,
        last_ins_rate: None,
        waiting: None,
        phase: None,
    };
    redraw(&mut s);
    *g = Some(s);
}

/// Step `index` (0-based, of the plan given to [`start`]) begins.
pub fn step(index: usize) {
    {
        let mut n = now_lock();
        n.step = n.plan.get(index).cloned();
        n.phase = None;
        n.waiting = None;
    }
    with(|s| {
        if let Some(r) = s.step_ins_rate.take() {
            s.last_ins_rate = Some(r);
        }
        s.current = Some(index);
        s.step_start.restart();
        s.rows_done = 0;
        s.rates = None;
        s.phase = None;
    });
}

/// The step named `name` begins: the first step of that name after the current one (a step
/// the plan did not name is added to it, its length unknown).
pub fn step_named(name: &str) {
    {
        let mut n = now_lock();
        n.step = Some(name.to_string());
        n.phase = None;
        n.waiting = None;
    }
    let index = {
        let mut g = lock();
        let Some(s) = g.as_mut() else {
            return;
        };
        let from = s.current.map_or(0, |c| c + 1);
        match s.steps.iter().skip(from).position(|(n, _)| n == name) {
            Some(i) => from + i,
            None => {
                s.steps.push((name.to_string(), Planned::Unknown));
                s.steps.len() - 1
            }
        }
    };
    step(index);
}

/// An interval line of the current step was printed: its rates (inserts, deletes, queries
/// per second), the rows inserted so far and the seconds the step has run.
pub fn interval(rates: [f64; 3], rows_inserted: u64, seconds: f64) {
    with(|s| {
        s.rates = Some(rates);
        s.rows_done = rows_inserted;
        if rows_inserted > 0 && seconds > 0.0 {
            s.step_ins_rate = Some(rows_inserted as f64 / seconds);
        }
    });
}

/// The phase of the current step (`ixbench ddl`'s point: `baseline`, `during`, `catch-up`,
/// `after`, the words of its report's windows), shown after the step's name; `None` when
/// the step is between phases (its set-up, its checks). A new step starts without one.
pub fn phase(phase: Option<&str>) {
    let phase = phase.map(str::to_string);
    {
        let mut n = now_lock();
        if n.phase == phase {
            return;
        }
        n.phase = phase.clone();
    }
    with(|s| s.phase = phase);
}

/// Say what a silent phase is waiting for until the returned guard is dropped.
#[must_use = "the status line says it waits until this is dropped"]
pub fn waiting(what: impl Into<String>) -> Waiting {
    let what = what.into();
    now_lock().waiting = Some(what.clone());
    let shown = with(|s| s.waiting = Some(what.clone())).is_some();
    Waiting { shown }
}

/// Clears the "waiting for" part of the status line when dropped.
pub struct Waiting {
    shown: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        now_lock().waiting = None;
        if self.shown {
            with(|s| s.waiting = None);
        }
    }
}

/// Run `f` (which prints) with the status line cleared, then draw it again.
pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
    let bar = lock().as_ref().map(|s| s.bar.clone());
    match bar {
        Some(b) => b.suspend(f),
        None => f(),
    }
}

/// Remove the status line (at the end of a command, also on errors).
pub fn finish() {
    if let Some(s) = lock().take() {
        s.bar.finish_and_clear();
    }
}

fn with<R>(f: impl FnOnce(&mut Status) -> R) -> Option<R> {
    let mut g = lock();
    let s = g.as_mut()?;
    let r = f(s);
    redraw(s);
    Some(r)
}

fn redraw(s: &mut Status) {
    s.bar.set_message(message(s));
}

fn message(s: &Status) -> String {
    let n = s.steps.len();
    let mut parts = Vec::new();
    match s.current {
        Some(i) if i < n => parts.push(format!(
            "step {} of {n}: {}{}",
            i + 1,
            s.steps[i].0,
            s.phase
                .as_deref()
                .map_or(String::new(), |p| format!(", {p}"))
        )),
        _ => parts.push(format!("{n} steps planned")),
    }
    if let Some(w) = &s.waiting {
        parts.push(format!("waiting: {w}"));
    }
    if let Some((secs, exact)) = eta(s) {
        parts.push(format!(
            "ETA {}{}",
            if exact { "" } else { ">= " },
            human(secs)
        ));
    }
    if let Some([i, d, q]) = s.rates {
        let r: Vec<String> = [(i, "ins/s"), (d, "del/s"), (q, "q/s")]
            .iter()
            .filter(|(v, _)| *v > 0.0)
            .map(|(v, unit)| format!("{} {unit}", rate(*v)))
            .collect();
        if !r.is_empty() {
            parts.push(r.join(", "));
        }
    }
    parts.join(" | ")
}

/// Seconds left, and whether every remaining step could be estimated.
fn eta(s: &Status) -> Option<(f64, bool)> {
    let first = s.current.unwrap_or(0);
    let mut left = 0.0;
    let mut exact = true;
    let in_step = s.step_start.so_far().as_secs_f64();
    for (i, (_, p)) in s.steps.iter().enumerate().skip(first) {
        let current = s.current == Some(i);
        match *p {
            Planned::Seconds(t) => left += if current { (t - in_step).max(0.0) } else { t },
            Planned::Rows(r) => {
                let rate = if current {
                    s.step_ins_rate.or(s.last_ins_rate)
                } else {
                    s.last_ins_rate.or(s.step_ins_rate)
                };
                let r = if current {
                    r.saturating_sub(s.rows_done)
                } else {
                    r
                };
                match rate {
                    Some(v) if v > 0.0 => left += r as f64 / v,
                    _ => exact = false,
                }
            }
            Planned::Unknown => exact = false,
        }
    }
    if left == 0.0 && !exact {
        return None;
    }
    Some((left, exact))
}

fn rate(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{:.1}k", v / 1000.0)
    } else {
        format!("{v:.0}")
    }
}

/// `75` -> `1m15s`, `3700` -> `1h01m`.
pub fn human(secs: f64) -> String {
    let t = secs.round().max(0.0) as u64;
    if t >= 3600 {
        format!("{}h{:02}m", t / 3600, (t % 3600) / 60)
    } else if t >= 60 {
        format!("{}m{:02}s", t / 60, t % 60)
    } else {
        format!("{t}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(steps: Vec<(String, Planned)>) -> Status {
        Status {
            bar: ProgressBar::hidden(),
            steps,
            current: Some(0),
            step_start: Since::start(),
            rows_done: 0,
            rates: None,
            step_ins_rate: None,
            last_ins_rate: None,
            waiting: None,
            phase: None,
        }
    }

    #[test]
    fn eta_is_a_lower_bound_until_rates_are_known() {
        let mut s = status(vec![
            ("l.i0".into(), Planned::Rows(1000)),
            ("l.x".into(), Planned::Unknown),
            ("qr100".into(), Planned::Seconds(10.0)),
        ]);
        let (left, exact) = eta(&s).unwrap();
        assert!(!exact);
        assert!((left - 10.0).abs() < 0.5);
        s.step_ins_rate = Some(100.0);
        s.rows_done = 500;
        let (left, _) = eta(&s).unwrap();
        assert!((left - 15.0).abs() < 0.5, "{left}");
        s.current = Some(2);
        let (left, exact) = eta(&s).unwrap();
        assert!(exact);
        assert!(left <= 10.0 && left > 9.0);
        assert!(message(&s).starts_with("step 3 of 3: qr100 | ETA "));
    }

    #[test]
    fn the_line_names_the_step_s_phase() {
        let mut s = status(vec![
            ("load".into(), Planned::Unknown),
            ("point 1/2".into(), Planned::Unknown),
        ]);
        s.current = Some(1);
        assert_eq!(message(&s), "step 2 of 2: point 1/2");
        s.phase = Some("during".into());
        assert_eq!(message(&s), "step 2 of 2: point 1/2, during");
    }

    #[test]
    fn human_durations() {
        assert_eq!(human(5.4), "5s");
        assert_eq!(human(75.0), "1m15s");
        assert_eq!(human(3700.0), "1h01m");
    }
}
