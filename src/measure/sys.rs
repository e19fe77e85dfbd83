//! System counters: the ixbench process's own CPU, I/O and context switches (so the client's
//! cost is reported apart from the server's), and facts about the host.

use procfs::Current as _;
use serde::{Deserialize, Serialize};

/// A snapshot of this process's resource counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcSnapshot {
    /// User CPU, microseconds, all threads.
    pub user_us: u64,
    /// System CPU, microseconds, all threads.
    pub sys_us: u64,
    /// Voluntary + involuntary context switches.
    pub ctx_switches: u64,
    /// Bytes this process caused to be read from storage (`/proc/self/io` read_bytes).
    pub read_bytes: u64,
    /// Bytes this process caused to be written to storage (`/proc/self/io` write_bytes).
    pub write_bytes: u64,
    /// Read system calls.
    pub read_calls: u64,
    /// Write system calls.
    pub write_calls: u64,
    /// Peak resident set size, bytes.
    pub max_rss_bytes: u64,
}

impl ProcSnapshot {
    /// Read the counters now. Fields the system does not provide stay 0.
    pub fn now() -> Self {
        let mut s = ProcSnapshot::default();
        // SAFETY: getrusage writes into the zeroed struct we pass and reads nothing else.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } == 0 {
            let us = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64;
            s.user_us = us(ru.ru_utime);
            s.sys_us = us(ru.ru_stime);
            s.ctx_switches = (ru.ru_nvcsw + ru.ru_nivcsw) as u64;
            s.max_rss_bytes = ru.ru_maxrss as u64 * 1024;
        }
        if let Ok(io) = procfs::process::Process::myself().and_then(|p| p.io()) {
            s.read_bytes = io.read_bytes;
            s.write_bytes = io.write_bytes;
            s.read_calls = io.syscr;
            s.write_calls = io.syscw;
        }
        s
    }

    /// CPU microseconds (user + system).
    pub fn cpu_us(&self) -> u64 {
        self.user_us + self.sys_us
    }

    /// Counter differences `self - earlier` (peak RSS is kept as the later value).
    pub fn since(&self, earlier: &ProcSnapshot) -> ProcSnapshot {
        ProcSnapshot {
            user_us: self.user_us.saturating_sub(earlier.user_us),
            sys_us: self.sys_us.saturating_sub(earlier.sys_us),
            ctx_switches: self.ctx_switches.saturating_sub(earlier.ctx_switches),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            read_calls: self.read_calls.saturating_sub(earlier.read_calls),
            write_calls: self.write_calls.saturating_sub(earlier.write_calls),
            max_rss_bytes: self.max_rss_bytes,
        }
    }
}

/// CPU and I/O of a server's processes: the given root PIDs and all their descendants,
/// including the CPU of children the processes have already reaped (`cutime`/`cstime`), such
/// as PostgreSQL parallel workers that ended during an index build.
///
/// I/O comes from `/proc/<pid>/io` of the live processes; the I/O of a process that exited
/// between two samples is not counted (the DBMS's own counters cover it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSample {
    /// User + system CPU, microseconds.
    pub cpu_us: u64,
    /// Bytes read from storage.
    pub read_bytes: u64,
    /// Bytes written to storage.
    pub write_bytes: u64,
    /// Processes found (roots and descendants).
    pub processes: usize,
}

impl ServerSample {
    /// Sample the processes rooted at `roots` now.
    pub fn now(roots: &[u32]) -> Self {
        let mut out = ServerSample::default();
        if roots.is_empty() {
            return out;
        }
        let tps = procfs::ticks_per_second().max(1);
        let Ok(all) = procfs::process::all_processes() else {
            return out;
        };
        let mut procs = Vec::new();
        for p in all.flatten() {
            if let Ok(st) = p.stat() {
                procs.push((p, st));
            }
        }
        let mut members: Vec<i32> = roots.iter().map(|&r| r as i32).collect();
        // Descendants: repeat until no new child is found (process trees here are shallow).
        loop {
            let before = members.len();
            for (_, st) in &procs {
                if members.contains(&st.ppid) && !members.contains(&st.pid) {
                    members.push(st.pid);
                }
            }
            if members.len() == before {
                break;
            }
        }
        for (p, st) in &procs {
            if !members.contains(&st.pid) {
                continue;
            }
            out.processes += 1;
            let ticks = st.utime + st.stime + st.cutime.max(0) as u64 + st.cstime.max(0) as u64;
            out.cpu_us += ticks * 1_000_000 / tps;
            if let Ok(io) = p.io() {
                out.read_bytes += io.read_bytes;
                out.write_bytes += io.write_bytes;
            }
        }
        out
    }

    /// Differences `self - earlier`.
    pub fn since(&self, earlier: &ServerSample) -> ServerSample {
        ServerSample {
            cpu_us: self.cpu_us.saturating_sub(earlier.cpu_us),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            processes: self.processes,
        }
    }
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
    for p in procfs::process::all_processes().ok()?.flatten() {
        if let Ok(fds) = p.fd() {
            for fd in fds.flatten() {
                if let procfs::process::FDTarget::Socket(inode) = fd.target {
                    if inodes.contains(&inode) {
                        return Some(p.pid as u32);
                    }
                }
            }
        }
    }
    None
}

/// Facts about the machine a run happened on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
        // SAFETY: uname fills the zeroed struct; its fields are NUL-terminated C strings.
        let mut u: libc::utsname = unsafe { std::mem::zeroed() };
        if unsafe { libc::uname(&mut u) } == 0 {
            let field = |f: &[libc::c_char]| {
                let bytes: Vec<u8> = f
                    .iter()
                    .take_while(|&&c| c != 0)
                    .map(|&c| c as u8)
                    .collect();
                String::from_utf8_lossy(&bytes).into_owned()
            };
            h.kernel = format!("{} {}", field(&u.sysname), field(&u.release));
            h.hostname = field(&u.nodename);
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

    #[test]
    fn cpu_counter_moves_when_we_burn_cpu() {
        let a = ProcSnapshot::now();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(50) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let d = ProcSnapshot::now().since(&a);
        assert!(d.cpu_us() >= 20_000, "cpu {} us", d.cpu_us());
        assert!(d.max_rss_bytes > 0);
    }

    #[test]
    fn server_sample_counts_reaped_children() {
        let me = std::process::id();
        let a = ServerSample::now(&[me]);
        // a child that burns CPU and is reaped: its CPU moves into our cutime
        let st = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(st.success());
        let d = ServerSample::now(&[me]).since(&a);
        assert!(d.cpu_us >= 20_000, "cpu {} us", d.cpu_us);
        assert!(d.processes >= 1);
        assert_eq!(ServerSample::now(&[]), ServerSample::default());
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
