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
    fn host_facts() {
        let h = HostInfo::gather();
        assert!(h.cpus >= 1);
        assert!(h.memory_bytes > 0);
        assert!(h.kernel.starts_with("Linux"), "{}", h.kernel);
    }
}
