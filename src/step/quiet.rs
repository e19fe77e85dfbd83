//! The one wait for a quiet server before a measurement: background work left from before
//! (compactions, purge, autovacuum, the last step's WAL) must not slow the measurement down,
//! so it is waited for (at most `--quiet-timeout`) outside it. Every command waits through
//! [`wait`]: `run`'s steps (through [`crate::step::step_host`]), the index lab's builds (`cmd::index`) and `ddl`'s
//! points (`cmd::ddl::points`); a build on shards waits for each shard's server with
//! [`quiet_wait`], the part of [`wait`] that leaves a
//! failed watch and the warning to its caller.

use std::time::Duration;

use anyhow::Result;

use crate::dbms::{self, Conn, Dbms, QuietWait};
use crate::measure::clock;
use crate::measure::resources::CostSource;

/// How a wait for quiet ended, for the measurement that follows it to record.
#[derive(Default)]
pub struct Quieted {
    /// The wait (`None`: nothing to wait for, `--quiet-timeout 0`, or not watched).
    pub wait: Option<QuietWait>,
    /// The server could not be watched: why, for the measurement's warnings.
    pub unwatched: Option<String>,
    /// The server was still busy when the timeout ran out, for the measurement's warnings.
    pub not_quiet: Option<String>,
}

impl Quieted {
    /// The warnings the measurement carries (at most one).
    pub fn warnings(&self) -> impl Iterator<Item = String> + '_ {
        self.unwatched.iter().chain(&self.not_quiet).cloned()
    }

    /// Print at once that the server could not be watched (a step's and a point's lines; a
    /// build prints its warnings with its own line).
    pub fn say_unwatched(&self) {
        if let Some(u) = &self.unwatched {
            crate::outln!("   WARNING: {u}");
        }
    }
}

/// Wait (at most `timeout`) until the server has finished its background work on `tables`
/// before the `when` (`step`, `build`, ...; empty for a point of `ixbench ddl`, whose lines
/// name nothing). A line is printed as the wait ends when it mattered, and one when the
/// timeout ran out; a failed watch does not stop the measurement (it is a side query), it
/// comes back as a warning.
pub fn wait(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    tables: &[String],
    timeout: Duration,
    when: &str,
) -> Quieted {
    let before = if when.is_empty() {
        String::new()
    } else {
        format!(" before the {when}")
    };
    match quiet_wait(target, conn, tables, timeout, when) {
        Ok(wait) => Quieted {
            not_quiet: wait.as_ref().filter(|w| w.timed_out).map(quiet_warning),
            wait,
            unwatched: None,
        },
        Err(e) => Quieted {
            unwatched: Some(format!(
                "could not watch the server for quiet{before}: {e:#}"
            )),
            ..Default::default()
        },
    }
}

/// One wait for quiet over the tables `names`, printed as it ends when it mattered; `None`
/// when the target has nothing to wait for or `timeout` is 0; an error when the server could
/// not be watched.
pub fn quiet_wait(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    names: &[String],
    timeout: Duration,
    when: &str,
) -> Result<Option<QuietWait>> {
    if timeout.is_zero() {
        return Ok(None);
    }
    let wait = crate::progress::waiting(format!(
        "server to be quiet (at most {:.0}s)",
        timeout.as_secs_f64()
    ));
    let quiet = wait_server_quiet(target, conn, names, timeout);
    drop(wait);
    let Some(mut w) = quiet? else {
        return Ok(None);
    };
    w.when = when.to_string();
    if w.timed_out {
        crate::outln!("   {}", quiet_warning(&w));
    } else if let Some(line) = waited_line(&w) {
        crate::outln!("   {line}");
    }
    Ok(Some(w))
}

/// The line of a wait that took noticeable time or found work going on. A point of `ixbench
/// ddl` (no `when`) says only how long, and only past 2 s, as its lines always have.
fn waited_line(w: &QuietWait) -> Option<String> {
    if w.when.is_empty() {
        return (w.seconds >= 2.0)
            .then(|| format!("waited {:.1} s for the server to be quiet", w.seconds));
    }
    if w.busy_at_start.is_empty() && !w.server_cpu_busy && w.seconds < 2.0 {
        return None;
    }
    let what = if !w.busy_at_start.is_empty() {
        w.busy_at_start.join(", ")
    } else if w.server_cpu_busy {
        "server CPU busy".to_string()
    } else {
        "background writes".to_string()
    };
    Some(format!(
        "waited {:.1} s before the {} for the server to be quiet ({what})",
        w.seconds, w.when
    ))
}

/// Wait (at most `timeout`) for the server to finish its background work on `names`
/// ([`dbms::wait_quiet`]), watching the CPU of its processes when it runs on this machine.
fn wait_server_quiet(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    names: &[String],
    timeout: Duration,
) -> Result<Option<QuietWait>> {
    // The server's CPU, when it runs on this machine (not for an embedded DBMS: that is us).
    let cost = match CostSource::for_target(target) {
        CostSource::Embedded => CostSource::None,
        other => other,
    };
    // CPU used by the server's processes since the wait began (µs, ns-resolution counters).
    let base = cost.sample();
    let cpu = || match (&base, cost.sample()) {
        (Some(a), Some(b)) => Some(b.since(a).cpu_us),
        _ => None,
    };
    dbms::wait_quiet(target, conn, names, timeout, &cpu, &clock::Figures)
}

/// The warning of a wait whose timeout ran out before the server was quiet.
pub fn quiet_warning(w: &QuietWait) -> String {
    format!(
        "SERVER NOT QUIET: still busy after {:.0} s (--quiet-timeout) before the {}: {}; \
         figures may include its background work",
        w.seconds,
        w.when,
        w.busy_at_end.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waited(when: &str, seconds: f64, busy: &[&str], cpu: bool) -> Option<String> {
        waited_line(&QuietWait {
            when: when.into(),
            seconds,
            busy_at_start: busy.iter().map(|s| s.to_string()).collect(),
            server_cpu_busy: cpu,
            ..Default::default()
        })
    }

    #[test]
    fn a_wait_is_told_as_each_command_always_told_it() {
        assert_eq!(waited("step", 0.3, &[], false), None);
        assert_eq!(
            waited("step", 0.3, &["purge"], false).as_deref(),
            Some("waited 0.3 s before the step for the server to be quiet (purge)")
        );
        assert_eq!(
            waited("build", 0.5, &[], true).as_deref(),
            Some("waited 0.5 s before the build for the server to be quiet (server CPU busy)")
        );
        assert_eq!(
            waited("step", 2.5, &[], false).as_deref(),
            Some("waited 2.5 s before the step for the server to be quiet (background writes)")
        );
        // a point of ixbench ddl: only how long, only past 2 s
        assert_eq!(waited("", 1.0, &["purge"], true), None);
        assert_eq!(
            waited("", 2.0, &["purge"], false).as_deref(),
            Some("waited 2.0 s for the server to be quiet")
        );
    }
}
