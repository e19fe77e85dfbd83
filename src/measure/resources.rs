//! A resource window: the client's and the server's CPU, I/O and memory over exactly the
//! operations they are charged to (a step's workers, one index build), so set-up and checks
//! (DROP/CREATE, `count(*)`, statistics waits) do not inflate per-operation figures.

use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::sys::{dir_allocated_bytes, DeviceCounters, ProcSnapshot, ServerCounters, ServerSample};
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
        let server = cost.sample();
        Window {
            t0: Instant::now(),
            client: ProcSnapshot::now(),
            cost,
            server,
            dbms,
            device,
            datadir,
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
        }
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
