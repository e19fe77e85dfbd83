//! Running a schema change by another method than the engine's statement, under the load of
//! `ixbench ddl` ([`crate::step::online_ddl`]): a tool DBAs use (pt-online-schema-change,
//! pg_repack) or a user's command, started as a child process in its own process group, its
//! output kept in the results directory and read into phases on the load's timeline, stopped
//! (SIGTERM, then SIGKILL) when ixbench is interrupted or the DDL times out, and, whenever it
//! did not finish cleanly, the triggers and shadow tables it created dropped again (only those:
//! what existed before it started is never touched). For every method, also the engine's own
//! statements, the server's CPU and bytes written during the change are measured against the
//! baseline's rate, so methods compare on what they add to the server.
//!
//! The password never reaches a command line: pt-online-schema-change reads it from an option
//! file in memory only (a memfd it inherits: nothing on disk, even if ixbench is killed), pg_repack and
//! user commands from the environment; lines a tool prints are written with it masked.
//!
//! [`RowCounting`] wraps the workload so its committed transactions' inserted and deleted rows
//! are counted: after the change the tables must hold exactly the rows the workload says (a
//! trigger-based copy must lose no row written during the copy).
//!
//! The parts: [`plan`] (what to run: the methods of a run, their programs found in PATH, each
//! program's command line and environment), [`prepare`] (what a method needs on the server
//! before it runs), [`run`] (start the program, read its output into phases, stop it and reap
//! it), [`undo`] (drop the triggers and shadow tables it left), [`rows`] (the row-count
//! check).

mod plan;
mod prepare;
mod rows;
mod run;
mod undo;

pub use plan::{find_in_path, find_tool, launch_for, FoundTool, Launch, LaunchSpec, Methods};
pub use rows::{count_rows, row_check, RowCounting};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::dbms::ddl::tools::{EngineTools, Method};
use crate::dbms::ddl::{DdlRequest, Waits};
use crate::dbms::{Conn, Dbms};
use crate::measure::clock;
use crate::measure::sys::ServerCounters;
use crate::results::schema_tools::MethodOutcome;
use crate::step::create_index::CostSource;

/// What [`crate::step::online_ddl`] asks of a method while the load runs. All calls come from
/// the DDL's thread except [`DdlHook::phase`] and [`DdlHook::waits`] (the sampler's),
/// [`DdlHook::cancel`] (the reporter's) and [`DdlHook::load_error_is_transient`] (the
/// clients').
pub trait DdlHook: Sync {
    /// The load's clock started (`origin`): the baseline's counters are read on `conn` (the
    /// DDL's session, idle until the change starts).
    fn load_started(&self, origin: Instant, conn: &mut dyn Conn);
    /// The change starts (before its first attempt).
    fn ddl_started(&self, conn: &mut dyn Conn);
    /// One attempt: `None` to run the plan's statements on `conn` as usual, or the outcome of
    /// running the method's program (cleaned up after a failure).
    fn run(&self, conn: &mut dyn Conn) -> Option<Result<()>>;
    /// The change ended (after its last attempt).
    fn ddl_ended(&self, conn: &mut dyn Conn);
    /// The change's phase for the timeline: the phases the program announced since the last
    /// call (`a -> b`), else the one it is in; `None` to use the engine's progress view.
    fn phase(&self, conn: &mut dyn Conn) -> Option<String>;
    /// Who waits because of the change, when the engine's view of the DDL session's waits
    /// does not apply (a program's sessions are not ixbench's); `None`: the dialect's.
    fn waits(&self, conn: &mut dyn Conn) -> Option<Waits>;
    /// Stop the change (Ctrl-C, SIGTERM, the DDL's timeout, a fatal foreground error).
    fn cancel(&self);
    /// True when `e`, the error of one of the load's transactions, is one the server raises
    /// because of the method's run (pt-online-schema-change's triggers: see
    /// [`EngineTools::load_error_is_transient`]): the transaction runs again, and the retry is
    /// counted by its code in the point's figures, a cost of the method. Called from the
    /// load's clients.
    fn load_error_is_transient(&self, e: &anyhow::Error) -> bool;
}

/// Counters at one instant.
struct Sample {
    at: Instant,
    cpu: Option<ServerCounters>,
    written: Option<i64>,
}

#[derive(Default)]
struct State {
    origin: Option<Instant>,
    /// (seconds from the origin, phase)
    phases: Vec<(f64, String)>,
    /// Phases already given to the sampler.
    reported: usize,
    /// The second of the load the sampler last asked in, and the first phase it was given in
    /// that second (a later sample in the same second repeats them: the timeline keeps the
    /// last sample of each second).
    asked_in: Option<u64>,
    second_from: usize,
    current: Option<String>,
    /// The last few lines on stderr (not progress), with when they came: an error a program
    /// prints as it exits is the lines of its last burst.
    last_err: Vec<(Instant, String)>,
    last_out: Option<String>,
    refusal: Option<String>,
    exit_status: Option<String>,
    tool_cpu_us: Option<u64>,
    base: Option<Sample>,
    start: Option<Sample>,
    end: Option<Sample>,
    cleaned: Vec<String>,
    left: Vec<String>,
}

/// One point's method: the program to run (none for SQL methods) and what it measured.
pub struct MethodRunner<'a> {
    /// The method.
    pub method: Method,
    target: &'a dyn Dbms,
    /// The target's methods (its registry row's).
    tools: Option<&'static dyn EngineTools>,
    /// The statement that bounds the clean-up's lock waits (the target's DDL dialect's).
    lock_timeout: Option<String>,
    req: &'a DdlRequest,
    launch: Option<Launch>,
    command: String,
    /// The program's password, to mask in its output.
    secret: Option<String>,
    cost: CostSource,
    state: Arc<Mutex<State>>,
    cancel: AtomicBool,
}

/// From the swap phase to the next one, seconds.
fn swap_seconds(phases: &[(f64, String)]) -> Option<f64> {
    let i = phases
        .iter()
        .position(|(_, p)| p == "swapping tables" || p == "swapping")?;
    let (from, _) = phases[i];
    phases.get(i + 1).map(|(to, _)| (to - from).max(0.0))
}

/// The stderr lines that came within half a second of the last one, joined: the whole of a
/// message a program prints on several lines as it exits.
fn last_burst(lines: &[(Instant, String)]) -> Option<String> {
    let (last, _) = lines.last()?;
    let burst: Vec<&str> = lines
        .iter()
        .filter(|(t, _)| last.saturating_duration_since(*t) <= Duration::from_millis(500))
        .map(|(_, l)| l.as_str())
        .collect();
    Some(burst.join(" "))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<'a> MethodRunner<'a> {
    /// A runner for `method` (with its program for a process method); `statements` is what
    /// the method runs as SQL, for the record; `lock_timeout` bounds the clean-up's lock waits.
    pub fn new(
        method: Method,
        target: &'a dyn Dbms,
        lock_timeout: Option<String>,
        req: &'a DdlRequest,
        launch: Option<Launch>,
        statements: &[String],
    ) -> Self {
        let cost = match CostSource::for_target(target) {
            CostSource::Embedded => CostSource::None,
            other => other,
        };
        let command = launch
            .as_ref()
            .map(|l| l.display.clone())
            .unwrap_or_else(|| statements.join("; "));
        let secret = target
            .client_params()
            .and_then(|p| p.password)
            .filter(|p| p.len() >= 4);
        MethodRunner {
            method,
            target,
            tools: crate::dbms::registry::tools(target.kind()),
            lock_timeout,
            req,
            launch,
            command,
            secret,
            cost,
            state: Arc::default(),
            cancel: AtomicBool::new(false),
        }
    }

    /// Bytes the server wrote so far as the DBMS counts them, with what that adds up.
    fn written(&self, conn: &mut dyn Conn) -> (Option<i64>, Option<String>) {
        match self.target.written_so_far(conn) {
            Some((b, what)) => (i64::try_from(b).ok(), Some(what)),
            None => (None, None),
        }
    }

    fn sample(&self, conn: &mut dyn Conn) -> Sample {
        let (written, _) = self.written(conn);
        Sample {
            at: clock::now(),
            cpu: self.cost.sample(),
            written,
        }
    }

    /// What this point's method did and cost, for the results; `rows` is (before, net,
    /// after) of the row-count check.
    pub fn outcome(
        &self,
        conn: &mut dyn Conn,
        rows: (Option<i64>, Option<i64>, Option<i64>),
    ) -> MethodOutcome {
        let (_, written_what) = self.written(conn);
        let st = lock(&self.state);
        let mut o = MethodOutcome {
            method: self.method.name().into(),
            command: self.command.clone(),
            tool_version: self.launch.as_ref().and_then(|l| l.version.clone()),
            exit_status: st.exit_status.clone(),
            last_message: self.last_message(&st),
            output_file: self.launch.as_ref().map(|l| {
                l.log_path
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default()
            }),
            phases: st.phases.clone(),
            swap_s: swap_seconds(&st.phases),
            tool_cpu_s: st.tool_cpu_us.map(|u| u as f64 / 1e6),
            written_what,
            rows_before: rows.0,
            rows_net: rows.1,
            rows_after: rows.2,
            cleaned_up: st.cleaned.clone(),
            left_behind: st.left.clone(),
            ..Default::default()
        };
        if let (Some(b), Some(s), Some(e)) = (&st.base, &st.start, &st.end) {
            let base_s = s.at.saturating_duration_since(b.at).as_secs_f64();
            let ddl_s = e.at.saturating_duration_since(s.at).as_secs_f64();
            if let (Some(cb), Some(cs), Some(ce)) = (&b.cpu, &s.cpu, &e.cpu) {
                let during = ce.since(cs).cpu_us as f64 / 1e6;
                o.server_cpu_s = Some(during);
                if base_s > 0.0 {
                    let rate = cs.since(cb).cpu_us as f64 / 1e6 / base_s;
                    o.extra_server_cpu_s = Some(during - rate * ddl_s);
                }
            }
            if let (Some(wb), Some(ws), Some(we)) = (b.written, s.written, e.written) {
                let during = we - ws;
                o.written_bytes = Some(during);
                if base_s > 0.0 {
                    let rate = (ws - wb) as f64 / base_s;
                    o.extra_written_bytes = Some(during - (rate * ddl_s).round() as i64);
                }
            }
        }
        o
    }

    fn last_message(&self, st: &State) -> Option<String> {
        let failed = st.exit_status.as_deref().is_some_and(|s| s != "exit 0");
        if failed {
            st.refusal
                .clone()
                .or_else(|| last_burst(&st.last_err))
                .or_else(|| st.last_out.clone())
        } else {
            st.refusal
                .clone()
                .or_else(|| st.last_out.clone())
                .or_else(|| last_burst(&st.last_err))
        }
    }

    fn set_phase(state: &Mutex<State>, phase: String, at: Instant) {
        let mut st = lock(state);
        if st.current.as_deref() == Some(phase.as_str()) {
            return;
        }
        let t = st
            .origin
            .map(|o| at.saturating_duration_since(o).as_secs_f64())
            .unwrap_or(0.0);
        st.current = Some(phase.clone());
        st.phases.push((t, phase));
    }
}

impl DdlHook for MethodRunner<'_> {
    fn load_started(&self, origin: Instant, conn: &mut dyn Conn) {
        lock(&self.state).origin = Some(origin);
        let s = self.sample(conn);
        lock(&self.state).base = Some(s);
    }

    fn ddl_started(&self, conn: &mut dyn Conn) {
        let s = self.sample(conn);
        lock(&self.state).start = Some(s);
    }

    fn run(&self, conn: &mut dyn Conn) -> Option<Result<()>> {
        let launch = self.launch.as_ref()?;
        Some(self.run_program(launch, conn))
    }

    fn ddl_ended(&self, conn: &mut dyn Conn) {
        let s = self.sample(conn);
        lock(&self.state).end = Some(s);
    }

    fn phase(&self, conn: &mut dyn Conn) -> Option<String> {
        self.launch.as_ref()?;
        let text = {
            let mut st = lock(&self.state);
            let second = st.origin.map(|o| clock::since(o).as_secs());
            if second != st.asked_in {
                st.asked_in = second;
                st.second_from = st.reported;
            }
            let new: Vec<String> = st.phases[st.second_from..]
                .iter()
                .map(|(_, p)| p.clone())
                .collect();
            st.reported = st.phases.len();
            if new.is_empty() {
                st.current.clone()
            } else {
                let mut v = new;
                // The line a user's command printed last, when it printed one.
                if self.method == Method::External {
                    if let Some(c) = st.current.clone().filter(|c| !v.contains(c)) {
                        v.push(c);
                    }
                }
                Some(v.join(" -> "))
            }
        };
        // The server's view of the program's work (pg_repack's index builds).
        let current = lock(&self.state).current.clone();
        let db = self
            .tools
            .and_then(|t| t.progress(self.method, current.as_deref(), conn));
        match (text, db) {
            (Some(t), Some(d)) => Some(format!("{t}; {d}")),
            (t, d) => t.or(d),
        }
    }

    fn waits(&self, conn: &mut dyn Conn) -> Option<Waits> {
        self.launch.as_ref()?;
        self.tools?.waits(conn).ok()
    }

    fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
    }

    fn load_error_is_transient(&self, e: &anyhow::Error) -> bool {
        self.tools
            .is_some_and(|t| t.load_error_is_transient(self.method, &self.req.table, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_time() {
        let p = |v: &[(f64, &str)]| -> Vec<(f64, String)> {
            v.iter().map(|(t, s)| (*t, s.to_string())).collect()
        };
        let v = p(&[
            (1.0, "copying rows"),
            (4.25, "swapping tables"),
            (4.5, "tables swapped"),
        ]);
        assert_eq!(swap_seconds(&v), Some(0.25));
        assert_eq!(swap_seconds(&p(&[(1.0, "swapping")])), None);
        assert_eq!(swap_seconds(&p(&[(1.0, "copying rows")])), None);
    }
}
