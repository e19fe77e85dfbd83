//! CPU priority of closed-loop workers.
//!
//! A read+write step runs, per client, an open-loop (rate-limited) inserter and deleter and a
//! closed-loop query thread that runs as fast as it can. With many clients on few cores the
//! closed-loop threads are always runnable and take the CPU from the writers: at 256 clients on
//! the null target the writers reached 46% of their rate. The query threads therefore run at a
//! higher nice value than the writers (Linux: `setpriority` on the thread's own id, which only
//! ever lowers that thread's priority, allowed to any user). The writers then get the CPU when
//! they are due and the query threads use what is left, which is what a closed loop is for.
//! `bench/clients-scale.sh` measures the writers' achieved rate with and without it.

use nix::errno::Errno;

/// Nice increment of the closed-loop query threads (`--query-nice`'s default).
pub const QUERY_NICE: i32 = 10;

/// Add `inc` (0..=19) to the calling thread's nice value. Returns the new nice value, or
/// `None` when the system refused (the thread then runs at its old priority: not an error,
/// the step measures the same work; the caller may say so).
pub fn lower_this_thread(inc: i32) -> Option<i32> {
    if inc <= 0 {
        return None;
    }
    let new = (this_thread_nice()? + inc).min(19);
    // SAFETY: a plain system call on the calling thread's own id. nix has no
    // getpriority/setpriority (only the whole process's `nice`), so these two stay libc calls.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, this_thread_id(), new) } != 0 {
        return None;
    }
    Some(new)
}

/// The calling thread's nice value (`None` when it cannot be read).
pub fn this_thread_nice() -> Option<i32> {
    // getpriority may return -1 as a valid nice value: only errno tells a failure.
    Errno::clear();
    // SAFETY: as above.
    let cur = unsafe { libc::getpriority(libc::PRIO_PROCESS, this_thread_id()) };
    (cur != -1 || Errno::last_raw() == 0).then_some(cur)
}

/// The calling thread's id, as `setpriority` takes it (Linux: a thread is a "process" there).
fn this_thread_id() -> libc::id_t {
    nix::unistd::gettid().as_raw() as libc::id_t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowers_only_the_calling_thread() {
        let main_before = this_thread_nice().unwrap();
        let (before, after) = std::thread::spawn(|| {
            let b = this_thread_nice().unwrap();
            (b, lower_this_thread(3))
        })
        .join()
        .unwrap();
        assert_eq!(after, Some((before + 3).min(19)));
        assert_eq!(this_thread_nice().unwrap(), main_before);
        assert_eq!(lower_this_thread(0), None);
    }
}
