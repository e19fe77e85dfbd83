//! Helpers shared by the integration tests: run the ixbench binary and read its results.

#![allow(dead_code)]

pub mod certs;
pub mod galera;
pub mod scale;
pub mod sql;
pub mod versions;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Run `ixbench ARGS` to completion.
pub fn ixbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args(args)
        .output()
        .expect("ixbench binary runs")
}

/// A short run on the null target with a read step (l.i0 then 3 s of qr100, a line every
/// 0.2 s): something to stop or merge part way through.
pub const NULL_READ_RUN: [&str; 13] = [
    "run",
    "--target",
    "null",
    "--steps",
    "l.i0,qr100",
    "--rows",
    "1000",
    "--rows2",
    "100",
    "--query-seconds",
    "3",
    "--interval",
    "0.2",
];

/// Start `ixbench ARGS` with its stdout and stderr piped (to read with `wait_with_output`).
pub fn spawn_ixbench<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ixbench binary starts")
}

/// stdout + stderr as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The parsed run.json of a results directory.
pub fn run_json(dir: &Path) -> serde_json::Value {
    let s = std::fs::read_to_string(dir.join("run.json")).expect("run.json exists");
    serde_json::from_str(&s).expect("run.json parses")
}

/// The parsed lines of intervals.ndjson.
pub fn intervals(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("intervals.ndjson"))
        .expect("intervals.ndjson exists")
        .lines()
        .map(|l| serde_json::from_str(l).expect("interval line parses"))
        .collect()
}

/// Assert the run ended ok with every step ok and every check passed; returns the steps.
pub fn assert_all_ok(run: &serde_json::Value) -> Vec<serde_json::Value> {
    assert_eq!(run["status"], "ok", "run status: {}", run["error"]);
    let steps = run["steps"].as_array().expect("steps").clone();
    for s in &steps {
        assert_eq!(
            s["status"], "ok",
            "step {} status {} {}",
            s["name"], s["status"], s["error"]
        );
        for c in s["checks"].as_array().unwrap() {
            assert_eq!(c["ok"], true, "step {} check {}", s["name"], c);
        }
    }
    steps
}

/// The stderr must be one line (plus nothing), start with `ixbench: error:`, and have no
/// backtrace or panic.
pub fn assert_one_line_error(o: &Output) -> String {
    let (_, err) = text(o);
    assert!(!o.status.success(), "expected failure, stderr: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "stderr not one line: {err}");
    err
}

/// Start `ixbench ARGS` in the background and return once `step` has written `n` interval
/// lines to `out/intervals.ndjson` (panics after `limit`, killing it). The caller waits for
/// the returned child.
#[allow(clippy::zombie_processes)]
pub fn spawn_until_intervals(
    args: &[&str],
    out: &Path,
    step: &str,
    n: usize,
    limit: Duration,
) -> Child {
    let mut child = spawn_ixbench(args);
    let t0 = Instant::now();
    let needle = format!("\"{step}\"");
    loop {
        if t0.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{step} never wrote {n} intervals");
        }
        let have = std::fs::read_to_string(out.join("intervals.ndjson"))
            .map(|s| s.lines().filter(|l| l.contains(&needle)).count())
            .unwrap_or(0);
        if have >= n {
            return child;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Skip a test whose server binaries are missing: `SKIPPED <test>: <why>` on stderr and
/// `None`; under `CI=true` a missing server is a failure instead.
pub fn skip<T>(test: &str, why: &str) -> Option<T> {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: {why} (CI=true: a missing server binary is a failure)");
    }
    eprintln!("SKIPPED {test}: {why}");
    None
}

/// A throwaway server for one test: its data directory in a temporary directory the server's
/// OS user can reach (tests run as root, servers as postgres/mysql). Dropping it stops the
/// server (fields drop in order), then removes the directory.
pub struct TestServer {
    pub server: ixbench::server::RunningServer,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for TestServer {
    type Target = ixbench::server::RunningServer;
    fn deref(&self) -> &Self::Target {
        &self.server
    }
}

/// One server start at a time in this process (starts are short: the lock is held only
/// while a server starts, see [`start_server_from`]).
pub static STARTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The cluster tests (Galera, Spider, pg-shards: three or four servers each). One whose checks
/// depend on timing (a node killed and its loss noticed, a joiner's state transfer, clients
/// moving to the surviving nodes) runs as the only cluster ([`one_cluster`]): two clusters at
/// once on a 2-core machine make those timings depend on the other's load. The others (what a
/// cluster holds and reports, nothing timed: [`shared_cluster`]) run two at a time, never
/// beside one of the first kind: when they waited for each other, the test threads that took
/// the next cluster tests (they come one after the other in the test order) sat idle for
/// minutes. A cluster test runs beside the other tests: it does not take [`STARTING`] for its
/// run (it held it once, which stopped every other test from starting a server for the
/// minutes a Galera test runs).
pub static CLUSTER: ClusterSlots = ClusterSlots {
    held: std::sync::Mutex::new(Held {
        alone: false,
        shared: 0,
    }),
    freed: std::sync::Condvar::new(),
};

/// At most this many [`shared_cluster`] tests at once.
pub const SHARED_CLUSTERS: usize = 2;

/// Who holds [`CLUSTER`]: a test running as the only cluster, or how many shared ones.
pub struct Held {
    alone: bool,
    shared: usize,
}

/// [`CLUSTER`]: what is held, and a wake-up for the tests waiting when some of it is freed.
pub struct ClusterSlots {
    held: std::sync::Mutex<Held>,
    freed: std::sync::Condvar,
}

impl ClusterSlots {
    /// Wait until `free` holds of what is held, then `take` (a test that panicked holding a
    /// slot does not poison the others: its guard frees it as it unwinds).
    fn take(&'static self, free: impl Fn(&Held) -> bool, take: impl FnOnce(&mut Held)) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        while !free(&held) {
            held = self.freed.wait(held).unwrap_or_else(|e| e.into_inner());
        }
        take(&mut held);
    }
}

/// A slot of [`CLUSTER`], freed when dropped.
pub struct ClusterGuard {
    alone: bool,
}

impl Drop for ClusterGuard {
    fn drop(&mut self) {
        let mut held = CLUSTER.held.lock().unwrap_or_else(|e| e.into_inner());
        if self.alone {
            held.alone = false;
        } else {
            held.shared -= 1;
        }
        CLUSTER.freed.notify_all();
    }
}

/// Run as the only cluster (no other cluster test runs until the guard is dropped).
pub fn one_cluster() -> ClusterGuard {
    CLUSTER.take(|h| !h.alone && h.shared == 0, |h| h.alone = true);
    ClusterGuard { alone: true }
}

/// Run beside at most `SHARED_CLUSTERS - 1` other [`shared_cluster`] tests, never beside a
/// [`one_cluster`] one.
pub fn shared_cluster() -> ClusterGuard {
    CLUSTER.take(
        |h| !h.alone && h.shared < SHARED_CLUSTERS,
        |h| h.shared += 1,
    );
    ClusterGuard { alone: false }
}

/// Start a throwaway `kind` server for `test` (with `rocksdb`: skip unless the MyRocks plugin
/// is installed); `None` when it is not installed (see [`skip`]).
pub fn start_server(
    test: &str,
    kind: ixbench::server::ServerKind,
    rocksdb: bool,
) -> Option<TestServer> {
    start_server_set(test, kind, rocksdb, &[])
}

/// As [`start_server`], with server settings given at start-up (`name`, `value`).
pub fn start_server_set(
    test: &str,
    kind: ixbench::server::ServerKind,
    rocksdb: bool,
    settings: &[(&str, &str)],
) -> Option<TestServer> {
    if let Err(e) = ixbench::server::check_installed(kind) {
        return skip(test, &format!("{e:#}"));
    }
    start_server_from(test, kind, rocksdb, settings, None)
}

/// As [`start_server_set`], from the install whose `bin/` directory is `bin_dir` (`--server-bin`;
/// `None`: the system's), which the caller has checked is there.
pub fn start_server_from(
    test: &str,
    kind: ixbench::server::ServerKind,
    rocksdb: bool,
    settings: &[(&str, &str)],
    bin_dir: Option<&Path>,
) -> Option<TestServer> {
    use ixbench::server;
    if rocksdb && !server::rocksdb_available() {
        return skip(test, "the MyRocks plugin is not installed");
    }
    let dir = tempfile::Builder::new()
        .prefix("ixbench-test-")
        .tempdir()
        .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut opts = server::ServerOptions::new(dir.path().join("data"));
    opts.settings = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let server = {
        let _one = STARTING.lock().unwrap_or_else(|e| e.into_inner());
        server::start_from(kind, &opts, bin_dir)
            .unwrap_or_else(|e| panic!("{test}: cannot start {}: {e:#}", kind.name()))
    };
    Some(TestServer { server, _dir: dir })
}

/// The text without comments, string and char literals (so a path in a doc comment or a
/// message is not an import, a brace in a message no block; the source readers:
/// tests/layers.rs, tests/dbms_api.rs).
pub fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'r'
            && (b[i..].starts_with(b"r\"") || b[i..].starts_with(b"r#"))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // raw string r"..." or r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while j < b.len() && b[j] == b'#' {
                hashes += 1;
                j += 1;
            }
            if j < b.len() && b[j] == b'"' {
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat(b'#').take(hashes))
                    .collect();
                j += 1;
                while j < b.len() && !b[j..].starts_with(&close) {
                    j += 1;
                }
                i = j + close.len();
                out.push_str("\"\"");
            } else {
                out.push('r');
                i += 1;
            }
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' {
            // a char literal ('x', '\n', '\u{..}') or a lifetime ('a)
            if i + 2 < b.len() && b[i + 1] == b'\\' {
                let mut j = i + 2;
                while j < b.len() && b[j] != b'\'' {
                    j += 1;
                }
                i = j + 1;
                out.push_str("' '");
            } else if i + 2 < b.len() && b[i + 2] == b'\'' {
                i += 3;
                out.push_str("' '");
            } else {
                out.push('\'');
                i += 1;
            }
        } else {
            let c = text[i..].chars().next().expect("a char");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Every `.rs` file below `dir` (the source readers: tests/layers.rs, tests/dialect_branches.rs).
pub fn rs_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src readable") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A run several tests read (its output and results directory), made once per test process.
pub struct SharedRun {
    /// The results directory (`--out`).
    pub out: std::path::PathBuf,
    pub output: Output,
}

/// `ixbench ddl` options whose load cannot keep its rate on SQLite (50,000 TPS offered to two
/// clients): the point is NO VERDICT (exit status 5).
pub const DDL_MISSED_RATE: [&str; 10] = [
    "--table-size",
    "3000",
    "--threads",
    "2",
    "--rate",
    "50000",
    "--baseline-seconds",
    "2",
    "--recovery-seconds",
    "1",
];

/// `ixbench CMD --size smoke --target sqlite` (embedded: no server), run once per test process
/// for the tests that check the same runs from two sides (`smoke::smoke_sqlite`: every command
/// ends ok with every step and check; `report::every_command_shows_the_checks_it_ran`: the text,
/// report and checks.csv list the checks). Whichever test asks first makes the run while the
/// other waits for it; neither depends on the other having run. The results go under Cargo's
/// `target/tmp` (see [`shared_dir`]).
pub fn sqlite_smoke(cmd: &str) -> &'static SharedRun {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static RUNS: OnceLock<Mutex<HashMap<String, &'static SharedRun>>> = OnceLock::new();
    // Held while the run is made: a second caller of the same command waits for it.
    let mut runs = RUNS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(r) = runs.get(cmd) {
        return r;
    }
    let out = shared_dir().join(cmd);
    let mut args = vec![
        cmd,
        "--size",
        "smoke",
        "--target",
        "sqlite",
        "--out",
        out.to_str().unwrap(),
    ];
    // A smoke-sized load on a busy machine may miss its rate: NO VERDICT (exit 5) is not what
    // these tests are about.
    if cmd == "ddl" {
        args.extend(["--pass-on", "no-verdict"]);
    }
    let output = ixbench(&args);
    let run: &'static SharedRun = Box::leak(Box::new(SharedRun { out, output }));
    runs.insert(cmd.to_string(), run);
    run
}

/// This test process's directory for shared runs, `target/tmp/ixbench-shared-PID`, removed
/// when the process exits; made on first use, when the directories of test processes no longer
/// running (killed before they could remove theirs) are removed.
fn shared_dir() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
        for e in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("ixbench-shared-") {
                if !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = tmp.join(format!("ixbench-shared-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory under target/tmp");
        remove_at_exit(dir.clone());
        dir
    })
}

/// Remove `dir` when the test process exits (statics are never dropped: libtest ends with
/// `exit`, which runs the C library's exit handlers).
fn remove_at_exit(dir: std::path::PathBuf) {
    use std::sync::Mutex;
    static DIRS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());
    static REGISTER: std::sync::Once = std::sync::Once::new();
    extern "C" fn remove_all() {
        let dirs = DIRS.lock().unwrap_or_else(|e| e.into_inner());
        for d in dirs.iter() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    DIRS.lock().unwrap_or_else(|e| e.into_inner()).push(dir);
    REGISTER.call_once(|| {
        // SAFETY: registers a plain function with no arguments, as atexit requires.
        unsafe {
            libc::atexit(remove_all);
        }
    });
}
