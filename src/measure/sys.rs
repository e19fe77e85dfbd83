//! System counters: the ixbench process's own CPU, I/O and context switches (so the client's
//! cost is reported apart from the server's), and facts about the host.

use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::stat::{major, minor};
use nix::sys::time::TimeVal;
use procfs::Current as _;
use serde::{Deserialize, Serialize};

/// A snapshot of this process's resource counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProcSnapshot {
    /// User CPU, microseconds, all threads.
    pub user_us: u64,
    /// System CPU, microseconds, all threads.
    pub sys_us: u64,
    /// Voluntary + involuntary context switches.
    pub ctx_switches: u64,
    /// Bytes this process caused to be read from storage (`/proc/self/io` read_bytes).
    pub read_bytes: u64,
    /// Page-cache bytes this process dirtied plus its direct I/O (`/proc/self/io` write_bytes):
    /// NOT the bytes written on file systems with large folios (see [`ServerSample`]).
    pub write_bytes: u64,
    /// Bytes this process passed to write calls (`/proc/self/io` wchar): its file writes
    /// (for an embedded DBMS, the engine's), its terminal output and pipes.
    #[serde(default)]
    pub write_call_bytes: u64,
    /// Read system calls.
    pub read_calls: u64,
    /// Write system calls.
    pub write_calls: u64,
    /// Peak resident set size, bytes.
    pub max_rss_bytes: u64,
}

/// A `getrusage` time, microseconds.
fn micros(tv: TimeVal) -> u64 {
    tv.tv_sec() as u64 * 1_000_000 + tv.tv_usec() as u64
}

impl ProcSnapshot {
    /// Read the counters now. Fields the system does not provide stay 0.
    pub fn now() -> Self {
        let mut s = ProcSnapshot::default();
        if let Ok(ru) = getrusage(UsageWho::RUSAGE_SELF) {
            s.user_us = micros(ru.user_time());
            s.sys_us = micros(ru.system_time());
            s.ctx_switches =
                (ru.voluntary_context_switches() + ru.involuntary_context_switches()) as u64;
            s.max_rss_bytes = ru.max_rss() as u64 * 1024;
        }
        if let Ok(io) = procfs::process::Process::myself().and_then(|p| p.io()) {
            s.read_bytes = io.read_bytes;
            s.write_bytes = io.write_bytes.saturating_sub(io.cancelled_write_bytes);
            s.write_call_bytes = io.wchar;
            s.read_calls = io.syscr;
            s.write_calls = io.syscw;
        }
        s
    }

    /// CPU microseconds (user + system).
    pub fn cpu_us(&self) -> u64 {
        self.user_us + self.sys_us
    }

    /// Sum of two deltas (peak RSS: the larger).
    pub fn plus(&self, o: &ProcSnapshot) -> ProcSnapshot {
        ProcSnapshot {
            user_us: self.user_us + o.user_us,
            sys_us: self.sys_us + o.sys_us,
            ctx_switches: self.ctx_switches + o.ctx_switches,
            read_bytes: self.read_bytes + o.read_bytes,
            write_bytes: self.write_bytes + o.write_bytes,
            write_call_bytes: self.write_call_bytes + o.write_call_bytes,
            read_calls: self.read_calls + o.read_calls,
            write_calls: self.write_calls + o.write_calls,
            max_rss_bytes: self.max_rss_bytes.max(o.max_rss_bytes),
        }
    }

    /// Counter differences `self - earlier` (peak RSS is kept as the later value).
    pub fn since(&self, earlier: &ProcSnapshot) -> ProcSnapshot {
        ProcSnapshot {
            user_us: self.user_us.saturating_sub(earlier.user_us),
            sys_us: self.sys_us.saturating_sub(earlier.sys_us),
            ctx_switches: self.ctx_switches.saturating_sub(earlier.ctx_switches),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            write_call_bytes: self
                .write_call_bytes
                .saturating_sub(earlier.write_call_bytes),
            read_calls: self.read_calls.saturating_sub(earlier.read_calls),
            write_calls: self.write_calls.saturating_sub(earlier.write_calls),
            max_rss_bytes: self.max_rss_bytes,
        }
    }
}

/// Totals of one server process at one instant.
#[derive(Debug, Clone, Copy, Default)]
struct ProcTotals {
    /// CPU of the reaped children (`cutime` + `cstime`), ns (clock-tick resolution).
    children_ns: u64,
    /// CPU of the process's live threads (sum of `/proc/<pid>/task/*/schedstat`), ns.
    threads_ns: u64,
    /// `/proc/<pid>/io`, when readable (it needs the right to trace the process).
    io: Option<procfs::process::Io>,
}

/// Raw counters of a server's processes (the given roots and all their descendants) at one
/// instant; [`ServerCounters::since`] turns two of them into a [`ServerSample`].
///
/// CPU has nanosecond resolution: each live thread's `schedstat` run time, so N processes do
/// not each add a 10 ms tick of error to a short build. The CPU of processes that exited and
/// were reaped by another server process (PostgreSQL parallel workers, backends) comes from
/// the parent's `cutime`/`cstime`, with tick resolution, minus what they had used before the
/// window began. I/O totals of `/proc/<pid>/io` include reaped children, so the sums over the
/// processes are consistent across a child's exit.
#[derive(Debug, Clone)]
pub struct ServerCounters {
    at: std::time::Instant,
    /// By (pid, start time): the start time tells a reused PID apart.
    procs: std::collections::HashMap<(i32, u64), ProcTotals>,
    /// Thread id -> ns on CPU.
    threads: std::collections::HashMap<i32, u64>,
    /// PSS (proportional set size) of the processes, bytes: shared memory counted once.
    pss_bytes: Option<u64>,
    /// Nanoseconds per clock tick.
    tick_ns: u64,
}

impl ServerCounters {
    /// Sample the processes rooted at `roots` now; `None` when none of them is alive (or the
    /// list is empty): a gone server gives no figure rather than zeros.
    pub fn now(roots: &[u32]) -> Option<Self> {
        Self::sample(roots, false)
    }

    /// As [`ServerCounters::now`], also reading the processes' PSS (slower: it walks their
    /// page tables), for the end of a window.
    pub fn now_with_memory(roots: &[u32]) -> Option<Self> {
        Self::sample(roots, true)
    }

    fn sample(roots: &[u32], memory: bool) -> Option<Self> {
        // A child reaped while we walk /proc would be in neither its own entry (read after it
        // was gone) nor its parent's children CPU (read before): sample again until no member
        // reaped a child during the walk.
        let mut last = None;
        for _ in 0..5 {
            let s = Self::sample_once(roots, memory)?;
            let mut buf = [0u8; STAT_BUF];
            let stable = s.procs.iter().all(|((pid, start), t)| {
                stat_of(*pid, &mut buf)
                    .map(|st| {
                        st.starttime != *start
                            || (st.cutime.max(0) + st.cstime.max(0)) as u64 * s.tick_ns
                                == t.children_ns
                    })
                    .unwrap_or(true)
            });
            if stable {
                return Some(s);
            }
            last = Some(s);
        }
        last
    }

    fn sample_once(roots: &[u32], memory: bool) -> Option<Self> {
        if roots.is_empty() {
            return None;
        }
        let tick_ns = 1_000_000_000 / procfs::ticks_per_second().max(1);
        let procs = all_stats()?;
        let mut members: Vec<i32> = roots.iter().map(|&r| r as i32).collect();
        // Descendants: repeat until no new child is found (process trees here are shallow).
        loop {
            let before = members.len();
            for st in &procs {
                if members.contains(&st.ppid) && !members.contains(&st.pid) {
                    members.push(st.pid);
                }
            }
            if members.len() == before {
                break;
            }
        }
        let mut out = ServerCounters {
            at: std::time::Instant::now(),
            procs: Default::default(),
            threads: Default::default(),
            pss_bytes: if memory { Some(0) } else { None },
            tick_ns,
        };
        for st in &procs {
            if !members.contains(&st.pid) {
                continue;
            }
            let gone = |e: &procfs::ProcError| matches!(e, procfs::ProcError::NotFound(_));
            let Ok(p) = procfs::process::Process::new(st.pid) else {
                continue; // gone since the walk (or not ours to read): left out, as before
            };
            // A process that exited while we read it is left out whole (its totals reach its
            // parent when it is reaped); one whose counters we may not read makes them unknown.
            let io = match p.io() {
                Ok(io) => Some(io),
                Err(e) if gone(&e) => continue,
                Err(_) => None,
            };
            let mut t = ProcTotals {
                children_ns: (st.cutime.max(0) + st.cstime.max(0)) as u64 * tick_ns,
                io,
                ..Default::default()
            };
            let mut threads = Vec::new();
            if st.state != 'Z' {
                if let Ok(tasks) = p.tasks() {
                    for task in tasks.flatten() {
                        if let Ok(ss) = task.schedstat() {
                            threads.push((task.tid, ss.sum_exec_runtime));
                        }
                    }
                }
            }
            if threads.is_empty() {
                // A zombie (exited, not yet reaped) or a process whose threads are gone: its
                // CPU from stat, in ticks, under its PID, until its parent reaps it.
                threads.push((st.pid, (st.utime + st.stime) * tick_ns));
            }
            for (tid, ns) in threads {
                t.threads_ns += ns;
                out.threads.insert(tid, ns);
            }
            if memory {
                out.pss_bytes = match (out.pss_bytes, pss_of(&p)) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
            }
            out.procs.insert((st.pid, st.starttime), t);
        }
        if out.procs.is_empty() {
            return None;
        }
        Some(out)
    }

    /// What the processes used from `earlier` to `self`.
    pub fn since(&self, earlier: &ServerCounters) -> ServerSample {
        // CPU of threads alive now: what they ran since `earlier` (all of it when new).
        let mut cpu: i128 = self
            .threads
            .iter()
            .map(|(tid, ns)| ns.saturating_sub(*earlier.threads.get(tid).unwrap_or(&0)) as i128)
            .sum();
        for (key, now) in &self.procs {
            match earlier.procs.get(key) {
                Some(then) => cpu += now.children_ns as i128 - then.children_ns as i128,
                None => cpu += now.children_ns as i128,
            }
        }
        // Processes gone since `earlier` were reaped by their parent, whose children CPU now
        // holds their whole run: take off what they had run before.
        for (key, then) in &earlier.procs {
            if !self.procs.contains_key(key) {
                cpu -= then.threads_ns as i128 + then.children_ns as i128;
            }
        }
        // I/O: totals summed over the processes (a reaped child's totals move to its parent).
        let io_sum = |c: &ServerCounters, f: &dyn Fn(&procfs::process::Io) -> u64| {
            c.procs
                .values()
                .map(|p| p.io.as_ref().map(f))
                .sum::<Option<u64>>()
        };
        let delta =
            |f: &dyn Fn(&procfs::process::Io) -> u64| match (io_sum(self, f), io_sum(earlier, f)) {
                (Some(a), Some(b)) => Some(a.saturating_sub(b)),
                _ => None,
            };
        let dirtied = delta(&|io| io.write_bytes);
        let cancelled = delta(&|io| io.cancelled_write_bytes);
        ServerSample {
            seconds: self.at.duration_since(earlier.at).as_secs_f64(),
            cpu_us: (cpu.max(0) / 1000) as u64,
            read_bytes: delta(&|io| io.read_bytes),
            write_call_bytes: delta(&|io| io.wchar),
            dirtied_bytes: match (dirtied, cancelled) {
                (Some(d), Some(c)) => Some(d.saturating_sub(c)),
                _ => None,
            },
            pss_bytes: self.pss_bytes,
            processes: self.procs.len(),
            ..Default::default()
        }
    }
}

/// Room for one `/proc/<pid>/stat` line (52 fields, the command name at most 64 bytes).
const STAT_BUF: usize = 2048;

/// `/proc/<pid>/stat`, read with one `openat`, one `read` and one `close` into `buf` (procfs's
/// `Process::new(pid).stat()` takes about 8 system calls: a directory handle, its checks, the
/// file, a size probe); `None` when the process is gone or may not be read.
fn stat_of(pid: i32, buf: &mut [u8; STAT_BUF]) -> Option<procfs::process::Stat> {
    use procfs::FromRead;
    use std::io::Read;
    let mut f = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?;
    let mut n = 0;
    loop {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => {
                n += k;
                // The kernel hands the whole line in one read when it fits: no second read
                // for the end of the file.
                if buf[..n].ends_with(b"\n") || n == buf.len() {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    procfs::process::Stat::from_read(&buf[..n]).ok()
}

/// The `stat` of every process on the machine (those that exit during the walk are left out);
/// `None` when /proc cannot be listed.
fn all_stats() -> Option<Vec<procfs::process::Stat>> {
    let mut buf = [0u8; STAT_BUF];
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(st) = stat_of(pid, &mut buf) {
            out.push(st);
        }
    }
    Some(out)
}

/// PSS of a process from `/proc/<pid>/smaps_rollup`, bytes: 0 for a process that is gone or
/// has no memory left (exiting), `None` when it may not be read. procfs opens the file at the
/// process's directory handle `p` already holds: no more system calls than reading it by path.
fn pss_of(p: &procfs::process::Process) -> Option<u64> {
    let rollup = match p.smaps_rollup() {
        Ok(r) => r,
        Err(procfs::ProcError::NotFound(_)) => return Some(0), // ENOENT or ESRCH: gone
        Err(_) => return None,
    };
    let pss = rollup
        .memory_map_rollup
        .iter()
        .find_map(|m| m.extension.map.get("Pss"));
    Some(pss.copied().unwrap_or(0))
}

/// Read and write counters of one block device (`/proc/diskstats`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceCounters {
    /// Device name (`vda`, `nvme0n1p2`, `dm-0`).
    pub name: String,
    /// Bytes read (sectors of 512 bytes).
    pub read_bytes: u64,
    /// Bytes written.
    pub written_bytes: u64,
}

impl DeviceCounters {
    /// The counters of the block device that holds `path` (the device of its file system),
    /// `None` when it is not a block device listed in /proc/diskstats (tmpfs, overlay, NFS).
    pub fn of_path(path: &std::path::Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let dev = std::fs::metadata(path).ok()?.dev();
        let (major, minor) = (major(dev) as i32, minor(dev) as i32);
        // procfs reads the file with one open and reads (no size probe) and parses its lines.
        let d = procfs::diskstats()
            .ok()?
            .into_iter()
            .find(|d| d.major == major && d.minor == minor)?;
        Some(DeviceCounters {
            name: d.name,
            read_bytes: d.sectors_read * 512,
            written_bytes: d.sectors_written * 512,
        })
    }

    /// Differences `self - earlier` (`None` for a different device).
    pub fn since(&self, earlier: &DeviceCounters) -> Option<DeviceIo> {
        (self.name == earlier.name).then(|| DeviceIo {
            device: self.name.clone(),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            written_bytes: self.written_bytes.saturating_sub(earlier.written_bytes),
        })
    }
}

/// What a block device read and wrote over a window: everything on the device, from every
/// process, the file system's journal included.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceIo {
    /// Device name.
    pub device: String,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub written_bytes: u64,
}

/// What a server used over a window: CPU and I/O of its processes (from /proc), the DBMS's own
/// count of bytes it wrote, and what the device holding its data directory did. A figure that
/// could not be read is `None` (unknown), never 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerSample {
    /// Length of the window, seconds.
    #[serde(default)]
    pub seconds: f64,
    /// User + system CPU, microseconds (ns resolution for live threads, see
    /// [`ServerCounters`]).
    pub cpu_us: u64,
    /// Bytes the processes caused to be read from storage (`/proc/<pid>/io` read_bytes).
    pub read_bytes: Option<u64>,
    /// Bytes the processes passed to write(2)/pwrite(2) calls (`/proc/<pid>/io` wchar): file
    /// writes before any caching, not socket sends; asynchronous I/O (libaio, io_uring) is
    /// not in it.
    #[serde(default)]
    pub write_call_bytes: Option<u64>,
    /// `/proc/<pid>/io` write_bytes minus cancelled_write_bytes: page-cache bytes the
    /// processes dirtied, plus direct I/O. NOT the bytes written: a file system with large
    /// folios (ext4 on Linux 6.16+) charges the whole folio (up to 2 MiB) each time a write
    /// dirties a clean one, so a DBMS rewriting its WAL page after each fsync is charged many
    /// times what it wrote (see README, "How ixbench checks itself").
    #[serde(default, alias = "write_bytes")]
    pub dirtied_bytes: Option<u64>,
    /// Bytes written as the DBMS counts them (see `dbms_written_what`).
    #[serde(default)]
    pub dbms_written_bytes: Option<u64>,
    /// Which DBMS counters `dbms_written_bytes` adds up.
    #[serde(default)]
    pub dbms_written_what: Option<String>,
    /// Deltas of the DBMS's own I/O counters over the window (name, value), e.g.
    /// `wal_bytes`, `redo_bytes`.
    #[serde(default)]
    pub dbms_counters: Vec<(String, u64)>,
    /// The block device holding the data directory (whole device, every process).
    #[serde(default)]
    pub device: Option<DeviceIo>,
    /// PSS of the processes at the end of the window, bytes (shared memory counted once).
    #[serde(default)]
    pub pss_bytes: Option<u64>,
    /// Size of the data directory at the end (allocated bytes of its files).
    #[serde(default)]
    pub datadir_bytes: Option<u64>,
    /// Processes found (roots and descendants) at the end.
    pub processes: usize,
}

impl ServerSample {
    /// Add another window's figures (a figure unknown in either stays unknown; PSS, data
    /// directory size and processes are the later window's).
    pub fn add(&self, o: &ServerSample) -> ServerSample {
        let sum = |a: Option<u64>, b: Option<u64>| Some(a? + b?);
        ServerSample {
            seconds: self.seconds + o.seconds,
            cpu_us: self.cpu_us + o.cpu_us,
            read_bytes: sum(self.read_bytes, o.read_bytes),
            write_call_bytes: sum(self.write_call_bytes, o.write_call_bytes),
            dirtied_bytes: sum(self.dirtied_bytes, o.dirtied_bytes),
            dbms_written_bytes: sum(self.dbms_written_bytes, o.dbms_written_bytes),
            dbms_written_what: o.dbms_written_what.clone(),
            dbms_counters: {
                let mut v = self.dbms_counters.clone();
                for (k, x) in &o.dbms_counters {
                    match v.iter_mut().find(|(n, _)| n == k) {
                        Some(e) => e.1 += x,
                        None => v.push((k.clone(), *x)),
                    }
                }
                v
            },
            device: match (&self.device, &o.device) {
                (Some(a), Some(b)) if a.device == b.device => Some(DeviceIo {
                    device: a.device.clone(),
                    read_bytes: a.read_bytes + b.read_bytes,
                    written_bytes: a.written_bytes + b.written_bytes,
                }),
                _ => None,
            },
            pss_bytes: o.pss_bytes,
            datadir_bytes: o.datadir_bytes,
            processes: o.processes,
        }
    }

    /// `self - inner`, for the part of a window outside an inner one (figures clamp at 0).
    pub fn minus(&self, inner: &ServerSample) -> ServerSample {
        let sub = |a: Option<u64>, b: Option<u64>| Some(a?.saturating_sub(b?));
        ServerSample {
            seconds: (self.seconds - inner.seconds).max(0.0),
            cpu_us: self.cpu_us.saturating_sub(inner.cpu_us),
            read_bytes: sub(self.read_bytes, inner.read_bytes),
            write_call_bytes: sub(self.write_call_bytes, inner.write_call_bytes),
            dirtied_bytes: sub(self.dirtied_bytes, inner.dirtied_bytes),
            dbms_written_bytes: sub(self.dbms_written_bytes, inner.dbms_written_bytes),
            dbms_written_what: self.dbms_written_what.clone(),
            dbms_counters: Vec::new(),
            device: match (&self.device, &inner.device) {
                (Some(a), Some(b)) if a.device == b.device => Some(DeviceIo {
                    device: a.device.clone(),
                    read_bytes: a.read_bytes.saturating_sub(b.read_bytes),
                    written_bytes: a.written_bytes.saturating_sub(b.written_bytes),
                }),
                _ => None,
            },
            pss_bytes: self.pss_bytes,
            datadir_bytes: self.datadir_bytes,
            processes: self.processes,
        }
    }
}

/// Allocated bytes of the files under `dir` (what `du` counts), `None` when it cannot be read.
pub fn dir_allocated_bytes(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt as _;
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    let mut first = true;
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(_) if first => return None,
            // A file or directory removed while we walk (a WAL segment recycled) is skipped.
            Err(_) => continue,
        };
        first = false;
        for e in entries.flatten() {
            let Ok(md) = e.metadata() else { continue };
            total += md.blocks() * 512;
            if md.is_dir() {
                stack.push(e.path());
            }
        }
    }
    Some(total)
}

/// The PID of the process listening on TCP `port` on this machine, if any (found through
/// /proc/net/tcp{,6} and the processes' open sockets; needs the right to read their fds).
pub fn pid_listening_on(port: u16) -> Option<u32> {
    use procfs::net::TcpState;
    let mut inodes = Vec::new();
    for table in [procfs::net::tcp(), procfs::net::tcp6()]
        .into_iter()
        .flatten()
    {
        for e in table {
            if e.state == TcpState::Listen && e.local_address.port() == port {
                inodes.push(e.inode);
            }
        }
    }
    if inodes.is_empty() {
        return None;
    }
    let holds = |p: &procfs::process::Process| {
        p.fd().is_ok_and(|fds| {
            fds.flatten().any(|fd| {
                matches!(fd.target, procfs::process::FDTarget::Socket(inode) if inodes.contains(&inode))
            })
        })
    };
    // The last answer, checked against that one process's sockets (a step asks several
    // times; each full walk reads every process's every fd: thousands of system calls).
    static LAST: std::sync::Mutex<Option<(u16, i32)>> = std::sync::Mutex::new(None);
    let last = *LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, pid)) = last.filter(|(p, _)| *p == port) {
        if procfs::process::Process::new(pid).is_ok_and(|p| holds(&p)) {
            return Some(pid as u32);
        }
    }
    let found = procfs::process::all_processes()
        .ok()?
        .flatten()
        .find(|p| holds(p))?
        .pid;
    *LAST.lock().unwrap_or_else(|e| e.into_inner()) = Some((port, found));
    Some(found as u32)
}

/// Facts about the machine a run happened on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// CPUs available to this process.
    pub cpus: usize,
    /// CPU model name, from /proc/cpuinfo.
    pub cpu_model: String,
    /// Total memory in bytes.
    pub memory_bytes: u64,
    /// Kernel name and release (`uname -sr`).
    pub kernel: String,
    /// Machine architecture.
    pub arch: String,
}

impl HostInfo {
    /// Gather host facts; missing ones are left empty.
    pub fn gather() -> Self {
        let mut h = HostInfo {
            cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            arch: std::env::consts::ARCH.to_string(),
            ..Default::default()
        };
        if let Ok(u) = nix::sys::utsname::uname() {
            let field = |f: &std::ffi::OsStr| f.to_string_lossy().into_owned();
            h.kernel = format!("{} {}", field(u.sysname()), field(u.release()));
            h.hostname = field(u.nodename());
        }
        if let Ok(mem) = procfs::Meminfo::current() {
            h.memory_bytes = mem.mem_total;
        }
        if let Ok(cpu) = procfs::CpuInfo::current() {
            h.cpu_model = cpu.model_name(0).unwrap_or_default().to_string();
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client's CPU (getrusage, all threads) against this thread's own run time from the
    /// scheduler (`/proc/thread-self/schedstat`, ns): burning 30 ms of this thread's CPU moves
    /// the process figure by at least that (other test threads only add), whatever the load.
    #[test]
    fn cpu_counter_moves_when_we_burn_cpu() {
        let thread_ns = || -> u64 {
            let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
            s.split_whitespace().next().unwrap().parse().unwrap()
        };
        let a = ProcSnapshot::now();
        let t0 = thread_ns();
        let mut x = 0u64;
        while thread_ns() - t0 < 30_000_000 {
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        let d = ProcSnapshot::now().since(&a);
        let burnt_us = (thread_ns() - t0) / 1000;
        // getrusage splits the same run time into user and system: microsecond rounding.
        assert!(
            d.cpu_us() + 1_000 >= burnt_us,
            "process cpu {} us < this thread's {burnt_us} us",
            d.cpu_us()
        );
        assert!(d.max_rss_bytes > 0);
    }

    #[test]
    fn server_counters_count_reaped_children_once() {
        let me = std::process::id();
        // The reaped children's run time, read by the parent the kernel's way (getrusage):
        // a difference over the test, as other tests of this process reap children too
        // (netio's TLS test runs openssl): the total since the process began held theirs.
        let children_us = || {
            let ru = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap();
            micros(ru.user_time()) + micros(ru.system_time())
        };
        let before = children_us();
        let a = ServerCounters::now(&[me]).unwrap();
        // A child that burns CPU and is reaped: its CPU moves into our cutime, once.
        let st = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(st.success());
        let d = ServerCounters::now(&[me]).unwrap().since(&a);
        let child = children_us() - before;
        assert!(child >= 20_000, "child cpu {child} us");
        // Counted once: at least the child's CPU, and not twice it (our own threads idle).
        assert!(
            d.cpu_us + 10_000 >= child,
            "cpu {} us, child {child} us",
            d.cpu_us
        );
        assert!(
            d.cpu_us < 2 * child,
            "cpu {} us, child {child} us",
            d.cpu_us
        );
        assert!(d.processes >= 1);
        assert!(ServerCounters::now(&[]).is_none());
    }

    /// The /proc figures that say "written": a child process rewrites one 8 KiB page of a
    /// preallocated 16 MiB file and fdatasyncs it 300 times, as a DBMS does with its WAL.
    /// `write_call_bytes` is what it wrote; `dirtied_bytes` is printed to show what large
    /// folios do to /proc write_bytes on this kernel (not asserted: it depends on the file
    /// system).
    #[test]
    fn write_call_bytes_are_the_bytes_written() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("wal");
        let prefill = std::process::Command::new("dd")
            .args([
                "if=/dev/zero",
                "bs=1M",
                "count=16",
                "conv=fsync",
                "status=none",
            ])
            .arg(format!("of={}", f.display()))
            .status()
            .unwrap();
        assert!(prefill.success());
        let me = std::process::id();
        let dev0 = DeviceCounters::of_path(dir.path());
        let a = ServerCounters::now(&[me]).unwrap();
        let script = format!(
            "i=0; while [ $i -lt 300 ]; do dd if=/dev/zero of={} bs=8k count=1 seek=$((i/4)) \
             conv=notrunc,fdatasync status=none || exit 1; i=$((i+1)); done",
            f.display()
        );
        let st = std::process::Command::new("sh")
            .args(["-c", &script])
            .status()
            .unwrap();
        assert!(st.success());
        let d = ServerCounters::now(&[me]).unwrap().since(&a);
        let wrote = 300 * 8192u64;
        let calls = d
            .write_call_bytes
            .expect("our own /proc/self/io is readable");
        assert!(
            calls >= wrote && calls <= wrote + wrote / 10,
            "write calls {calls} bytes for {wrote} written"
        );
        let dev = dev0.and_then(|d0| DeviceCounters::of_path(dir.path())?.since(&d0));
        eprintln!(
            "wrote {wrote} bytes: write calls {calls}, /proc write_bytes {:?}, device {:?}",
            d.dirtied_bytes, dev
        );
        if let Some(dev) = dev {
            // fdatasync put every page on the device (which other processes also write to).
            assert!(
                dev.written_bytes >= wrote,
                "device wrote {}",
                dev.written_bytes
            );
        }
    }

    #[test]
    fn unreadable_figures_are_unknown() {
        assert!(DeviceCounters::of_path(std::path::Path::new("/proc")).is_none());
        assert!(dir_allocated_bytes(std::path::Path::new("/nonexistent/ixbench")).is_none());
        let a = ServerSample {
            read_bytes: Some(5),
            ..Default::default()
        };
        // Unknown (None) stays unknown through sums and differences, never 0.
        assert_eq!(a.add(&ServerSample::default()).read_bytes, None);
        assert_eq!(a.minus(&ServerSample::default()).write_call_bytes, None);
    }

    #[test]
    fn finds_the_listener_of_a_port() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(pid_listening_on(port), Some(std::process::id()));
        drop(l);
        assert_eq!(pid_listening_on(port), None);
    }

    #[test]
    fn host_facts() {
        let h = HostInfo::gather();
        assert!(h.cpus >= 1);
        assert!(h.memory_bytes > 0);
        assert!(h.kernel.starts_with("Linux"), "{}", h.kernel);
    }
}
