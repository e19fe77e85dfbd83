//! SQLite's memory from the process's allocator (mimalloc, src/lib.rs) instead of the C
//! library's `malloc`.
//!
//! Why: SQLite's page cache (`cache_size`, 256 MiB by default here) fills one 4 KiB page at a
//! time in the thread that inserts, and glibc grows a non-main thread's arena by exactly what an
//! allocation lacks, with one `mprotect` call each: l.i0 made 13,000 of them per million rows,
//! which a loop in the main thread (grown by `brk` in 128 KiB steps) does not. mimalloc takes
//! memory from the system in large segments per thread. Everything SQLite allocates goes
//! through [`use_process_allocator`]'s methods, in every binary of this crate (the bare loop
//! of `bench/sqlite-li0.sh` too), so both sides of that comparison use the same allocator.
//!
//! SQLite takes an allocator only before it is initialised (`sqlite3_config` answers
//! SQLITE_MISUSE after): every SQLite connection ixbench opens calls [`use_process_allocator`]
//! first.

use std::alloc::{alloc, dealloc, realloc, Layout};
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

use rusqlite::ffi;

/// Bytes in front of each block holding its size (SQLite asks a block's size back, `xSize`);
/// 16 keeps the block 16-byte aligned, as `malloc`'s are.
const HEAD: usize = 16;
const ALIGN: usize = 16;

/// The layout of a block of `n` bytes with its head.
fn layout(n: usize) -> Option<Layout> {
    Layout::from_size_align(n.checked_add(HEAD)?, ALIGN).ok()
}

unsafe extern "C" fn x_malloc(n: c_int) -> *mut c_void {
    let Some(l) = usize::try_from(n).ok().filter(|&n| n > 0).and_then(layout) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the layout has a non-zero size; the head is written inside the block.
    unsafe {
        let p = alloc(l);
        if p.is_null() {
            return std::ptr::null_mut();
        }
        (p as *mut usize).write(n as usize);
        p.add(HEAD) as *mut c_void
    }
}

/// The start of the block and its size, from what [`x_malloc`] returned.
///
/// # Safety
/// `p` came from [`x_malloc`] or [`x_realloc`] and was not freed.
unsafe fn block(p: *mut c_void) -> (*mut u8, usize) {
    // SAFETY: as the caller promises, the head is HEAD bytes before `p`.
    unsafe {
        let base = (p as *mut u8).sub(HEAD);
        (base, (base as *const usize).read())
    }
}

unsafe extern "C" fn x_free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: SQLite frees only what its xMalloc/xRealloc returned, once.
    unsafe {
        let (base, n) = block(p);
        if let Some(l) = layout(n) {
            dealloc(base, l);
        }
    }
}

unsafe extern "C" fn x_realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    if p.is_null() {
        // SAFETY: a fresh block, as malloc.
        return unsafe { x_malloc(n) };
    }
    let Some(new) = usize::try_from(n).ok().filter(|&n| n > 0) else {
        return std::ptr::null_mut();
    };
    // SAFETY: `p` is a live block of ours (SQLite's contract); the new size fits a Layout.
    unsafe {
        let (base, old) = block(p);
        let (Some(l), Some(_)) = (layout(old), layout(new)) else {
            return std::ptr::null_mut();
        };
        let q = realloc(base, l, new + HEAD);
        if q.is_null() {
            return std::ptr::null_mut();
        }
        (q as *mut usize).write(new);
        q.add(HEAD) as *mut c_void
    }
}

unsafe extern "C" fn x_size(p: *mut c_void) -> c_int {
    if p.is_null() {
        return 0;
    }
    // SAFETY: a live block of ours.
    unsafe { block(p).1 as c_int }
}

unsafe extern "C" fn x_roundup(n: c_int) -> c_int {
    (n + 7) & !7
}

unsafe extern "C" fn x_init(_: *mut c_void) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_shutdown(_: *mut c_void) {}

/// Hands SQLite the process's allocator, once, before its first connection. Returns whether
/// SQLite took it (false when something initialised SQLite before: it keeps `malloc` then,
/// which changes only the speed).
pub fn use_process_allocator() -> bool {
    static TAKEN: OnceLock<bool> = OnceLock::new();
    *TAKEN.get_or_init(|| {
        let methods = ffi::sqlite3_mem_methods {
            xMalloc: Some(x_malloc),
            xFree: Some(x_free),
            xRealloc: Some(x_realloc),
            xSize: Some(x_size),
            xRoundup: Some(x_roundup),
            xInit: Some(x_init),
            xShutdown: Some(x_shutdown),
            pAppData: std::ptr::null_mut(),
        };
        // SAFETY: SQLITE_CONFIG_MALLOC copies the struct; its functions stay valid forever.
        unsafe { ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &methods) == ffi::SQLITE_OK }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_size_and_contents() {
        // SAFETY: the methods' own contract: sizes > 0, blocks freed once.
        unsafe {
            let p = x_malloc(100) as *mut u8;
            assert!(!p.is_null());
            assert_eq!(p as usize % ALIGN, 0);
            assert_eq!(x_size(p as *mut c_void), 100);
            for i in 0..100 {
                p.add(i).write(i as u8);
            }
            let q = x_realloc(p as *mut c_void, 5000) as *mut u8;
            assert_eq!(x_size(q as *mut c_void), 5000);
            assert!((0..100).all(|i| q.add(i).read() == i as u8));
            let r = x_realloc(q as *mut c_void, 10) as *mut u8;
            assert_eq!(x_size(r as *mut c_void), 10);
            assert!((0..10).all(|i| r.add(i).read() == i as u8));
            x_free(r as *mut c_void);
            assert!(x_malloc(0).is_null());
            assert!(x_malloc(-1).is_null());
            assert_eq!(x_roundup(13), 16);
        }
    }

    #[test]
    fn sqlite_runs_on_it() {
        // Whichever test opened SQLite first took the allocator (every open calls this).
        assert!(use_process_allocator());
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE t(a, b); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 \
             FROM n WHERE i < 20000) INSERT INTO t SELECT i, randomblob(300) FROM n;",
        )
        .unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 20000);
        // SQLite counts what it holds through xSize: more than the rows' blobs.
        let (mut cur, mut hi) = (0i64, 0i64);
        // SAFETY: plain status read.
        unsafe { ffi::sqlite3_status64(ffi::SQLITE_STATUS_MEMORY_USED, &mut cur, &mut hi, 0) };
        assert!(hi > 0, "{cur} {hi}");
    }
}
