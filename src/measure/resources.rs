//! A resource window: the client's and the server's CPU, I/O and memory over exactly the
//! operations they are charged to (a step's workers, one index build), so set-up and checks
//! (DROP/CREATE, `count(*)`, statistics waits) do not inflate per-operation figures.

use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::server_figures::{self, DbmsReport};
use super::sys::{dir_allocated_bytes, DeviceCounters, ProcSnapshot, ServerCounters, ServerSample};
use crate::dbms::server_stats::{StatsPlan, StatsSnapshot};
use crate::dbms::{Conn, Dbms};

/// What the client and the server used over one window (or several, added).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowCost {
    /// Wall seconds of the window(s).
    pub seconds: f64,
    /// The ixbench process (for an embedded DBMS: the engine too).
    pub client: ProcSnapshot,
    /// The server, when its processes are on this machine and not embedded.
    pub server: Option<ServerSample>,
    /// What the DBMS itself reported over the window (`--server-figures dbms|both`, or
    /// `auto` when the server's processes are not on this machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dbms: Option<DbmsReport>,
}

impl WindowCost {
    /// Add a later window.
    pub fn add(&self, o: &WindowCost) -> WindowCost {
        WindowCost {
            seconds: self.seconds + o.seconds,
            client: self.client.plus(&o.client),
            server: match (&self.server, &o.server) {
                (Some(a), Some(b)) => Some(a.add(b)),
                (None, b) if self.seconds == 0.0 => b.clone(),
                _ => None,
            },
            dbms: match (&self.dbms, &o.dbms) {
                (Some(a), Some(b)) => Some(a.add(b)),
                (None, b) if self.seconds == 0.0 => b.clone(),
                _ => None,
            },
        }
    }

    /// `self - inner`: what a whole step used outside its measured window.
    pub fn minus(&self, inner: &WindowCost) -> WindowCost {
        let mut client = self.client.since(&inner.client);
        client.max_rss_bytes = self.client.max_rss_bytes;
        WindowCost {
            seconds: (self.seconds - inner.seconds).max(0.0),
            client,
            server: match (&self.server, &inner.server) {
                (Some(a), Some(b)) => Some(a.minus(b)),
                _ => None,
            },
            // the whole step is not read from the DBMS: only its measured window is
            dbms: None,
        }
    }
}

/// An open window: counters read at its start.
pub struct Window {
    t0: Instant,
    client: ProcSnapshot,
    cost: CostSource,
    server: Option<ServerCounters>,
    dbms: Option<Vec<(String, u64)>>,
    device: Option<DeviceCounters>,
    datadir: Option<PathBuf>,
    /// What the DBMS reports, read at the start (`None`: not asked for, or no server).
    stats: Option<ReportedWindow>,
}

impl Window {
    /// Read the counters now. `conn` is a control connection (not a worker's): the DBMS's
    /// own write counters are read on it. A server embedded in ixbench has no server figures
    /// (the client's are the engine's).
    pub fn open(target: &dyn Dbms, conn: &mut dyn Conn) -> Window {
        let cost = match CostSource::for_target(target) {
            CostSource::Embedded => CostSource::None,
            other => other,
        };
        let local = matches!(cost, CostSource::Server(_));
        let datadir = local.then(|| target.data_directory(conn)).flatten();
        let dbms = local.then(|| target.io_counters(conn).ok()).flatten();
        let device = datadir.as_deref().and_then(DeviceCounters::of_path);
        let stats = (!target.embedded() && server_figures::current().reads_dbms(local))
            .then(|| open_stats(target, conn))
            .flatten();
        let server = cost.sample();
        Window {
            t0: Instant::now(),
            client: ProcSnapshot::now(),
            cost,
            server,
            dbms,
            device,
            datadir,
            stats,
        }
    }

    /// Close the window: read the counters again and return the differences. The DBMS's
    /// counters are read first (on PostgreSQL that waits until the workers' sessions have
    /// ended and flushed their statistics), so the sessions' last work is in the /proc
    /// sample that follows.
    pub fn close(self, target: &dyn Dbms, conn: &mut dyn Conn) -> WindowCost {
        let dbms_after = self
            .dbms
            .is_some()
            .then(|| target.io_counters(conn).ok())
            .flatten();
        let reported = self.stats.map(|w| w.close(target, conn));
        let client = ProcSnapshot::now().since(&self.client);
        let seconds = self.t0.elapsed().as_secs_f64();
        let server_after = self.cost.sample_with_memory();
        let device_after = self.datadir.as_deref().and_then(DeviceCounters::of_path);
        let server = match (&self.server, &server_after) {
            (Some(a), Some(b)) => {
                let mut s = b.since(a);
                if let (Some(before), Some(after)) = (&self.dbms, &dbms_after) {
                    let deltas = counter_deltas(before, after);
                    if let Some((bytes, what)) = target.written_bytes(&deltas) {
                        s.dbms_written_bytes = Some(bytes);
                        s.dbms_written_what = Some(what);
                    }
                    s.dbms_counters = deltas;
                }
                s.device = match (&self.device, &device_after) {
                    (Some(a), Some(b)) => b.since(a),
                    _ => None,
                };
                s.datadir_bytes = self.datadir.as_deref().and_then(dir_allocated_bytes);
                Some(s)
            }
            _ => None,
        };
        WindowCost {
            seconds,
            client,
            server,
            dbms: reported,
        }
    }
}

/// The DBMS's own figures over a span: a [`Window`]'s, or one measured outside a window (the
/// index lab's builds). Holds what the server has (its plan), its counters at the start, and
/// the I/O counters its bytes written are added from.
pub struct ReportedWindow {
    plan: StatsPlan,
    before: StatsSnapshot,
    io: Option<Vec<(String, u64)>>,
}

impl ReportedWindow {
    /// Read the DBMS's figures now when `--server-figures` asks for them with `cost` (the
    /// processes the span is charged to); `None` otherwise.
    pub fn open(target: &dyn Dbms, conn: &mut dyn Conn, cost: &CostSource) -> Option<Self> {
        let here = !matches!(cost, CostSource::None);
        (!target.embedded() && server_figures::current().reads_dbms(here))
            .then(|| open_stats(target, conn))
            .flatten()
    }

    /// What moved since the start.
    pub fn close(self, target: &dyn Dbms, conn: &mut dyn Conn) -> DbmsReport {
        close_stats(target, conn, &self.plan, &self.before, self.io.as_deref())
    }
}

/// What the DBMS reports at a window's start: its plan (what this server has), its counters,
/// and the I/O counters its bytes written are added from (on PostgreSQL reading them first
/// waits until ixbench's other sessions have flushed their statistics). `None` for a target
/// without a server, or when the server will not say what it has (the window then has no
/// DBMS figures rather than failing the step).
fn open_stats(target: &dyn Dbms, conn: &mut dyn Conn) -> Option<ReportedWindow> {
    let plan = crate::dbms::registry::stats_probe(target.kind(), conn).ok()??;
    let io = target.io_counters(conn).ok();
    let before = plan.read(conn);
    Some(ReportedWindow { plan, before, io })
}

/// The DBMS's figures over a window opened by [`open_stats`].
fn close_stats(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    plan: &StatsPlan,
    before: &StatsSnapshot,
    io_before: Option<&[(String, u64)]>,
) -> DbmsReport {
    let io_after = io_before.and_then(|_| target.io_counters(conn).ok());
    let after = plan.read(conn);
    let (figures, failed) = before.delta(&after, plan);
    let written = match (io_before, &io_after) {
        (Some(a), Some(b)) => target.written_bytes(&counter_deltas(a, b)),
        _ => None,
    };
    DbmsReport {
        source: plan.source.clone(),
        written_bytes: written.as_ref().map(|w| w.0),
        written_what: written.map(|w| w.1),
        figures,
        unknown: plan.unknown.clone(),
        failed,
        // the probe and the plan's statements at both ends
        queries: 1 + before.queries + after.queries,
    }
}

/// `after - before` of each counter present in both.
pub fn counter_deltas(before: &[(String, u64)], after: &[(String, u64)]) -> Vec<(String, u64)> {
    after
        .iter()
        .filter_map(|(k, v)| {
            let b = before.iter().find(|(n, _)| n == k)?.1;
            Some((k.clone(), v.saturating_sub(b)))
        })
        .collect()
}

/// The processes whose CPU and I/O a build costs: the ixbench process for an embedded DBMS,
/// the server's processes when they are on this machine, nothing otherwise.
pub enum CostSource {
    /// The DBMS runs inside ixbench.
    Embedded,
    /// These root PIDs (and their descendants) are the server.
    Server(Vec<u32>),
    /// Not measurable from here (remote server).
    None,
}

impl CostSource {
    /// Where the target's CPU and I/O can be read: ixbench itself for an embedded DBMS, the
    /// server's processes (known PIDs, or the process listening on its local port), or nowhere.
    pub fn for_target(target: &dyn Dbms) -> CostSource {
        if target.embedded() {
            return CostSource::Embedded;
        }
        if !server_figures::current().reads_proc() {
            // `--server-figures dbms|none`: as for a server that is not on this machine
            return CostSource::None;
        }
        let mut pids = target.server_pids();
        if pids.is_empty() {
            if let Some(pid) = target
                .local_port()
                .and_then(crate::measure::sys::pid_listening_on)
            {
                pids.push(pid);
            }
        }
        if pids.is_empty() {
            CostSource::None
        } else {
            CostSource::Server(pids)
        }
    }

    /// A sample of the source's counters now (`None` when there is no source, or its
    /// processes are gone: a restarted server gives no figure rather than zeros).
    pub fn sample(&self) -> Option<ServerCounters> {
        match self {
            CostSource::Embedded => ServerCounters::now(&[std::process::id()]),
            CostSource::Server(p) => ServerCounters::now(p),
            CostSource::None => None,
        }
    }

    /// As [`CostSource::sample`], with the processes' memory (PSS), for the end of a window.
    pub fn sample_with_memory(&self) -> Option<ServerCounters> {
        match self {
            CostSource::Embedded => ServerCounters::now_with_memory(&[std::process::id()]),
            CostSource::Server(p) => ServerCounters::now_with_memory(p),
            CostSource::None => None,
        }
    }
}

/// Where the figures of `target`'s server come from under `asked`, and why: the record of
/// `run.json`'s `server_figures`. Call after [`server_figures::set`].
pub fn figures_choice(
    target: &dyn Dbms,
    conn: &mut dyn Conn,
    asked: server_figures::ServerFigures,
) -> server_figures::ServerFiguresChoice {
    use server_figures::{ServerFigures, ServerFiguresChoice};
    let mut c = ServerFiguresChoice {
        asked,
        ..Default::default()
    };
    if target.embedded() {
        c.why = "the DBMS runs inside ixbench: its work is in the client's figures".into();
        return c;
    }
    if asked == ServerFigures::None {
        c.why = "--server-figures none: no server figures are taken".into();
        return c;
    }
    let here = match CostSource::for_target(target) {
        CostSource::Server(pids) => Some(pids),
        _ => None,
    };
    c.proc = here.is_some();
    c.dbms = asked.reads_dbms(c.proc) && crate::dbms::registry::reports_stats(target.kind());
    let procs = match (&here, asked.reads_proc(), target.local_port()) {
        (Some(p), _, _) => format!(
            "the server's processes are on this machine (PIDs {})",
            p.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        (None, false, _) => format!("--server-figures {}: /proc is not read", asked.name()),
        (None, true, Some(port)) => format!(
            "the server's processes were not found on this machine (no process of ours to \
             read listens on port {port})"
        ),
        (None, true, None) => "the server's host is not this machine (not localhost, \
                               127.x, ::1 or a Unix socket)"
            .into(),
    };
    if c.dbms {
        match crate::dbms::registry::stats_probe(target.kind(), conn) {
            Ok(Some(plan)) => {
                c.dbms_source = Some(plan.source);
                c.dbms_unknown = plan.unknown;
            }
            Ok(None) => {}
            Err(e) => c
                .dbms_unknown
                .push(crate::dbms::server_stats::UnknownFigure {
                    name: "every figure of the DBMS".into(),
                    why: format!(
                        "asking the server what it reports failed: {}",
                        crate::format::error_line(&e)
                    ),
                }),
        }
    }
    let dbms = if c.dbms {
        "; the DBMS's own statistics are read"
    } else if asked.reads_dbms(c.proc) {
        "; this target reports no statistics of its own"
    } else {
        ""
    };
    c.why = format!("{procs}{dbms}");
    c
}
