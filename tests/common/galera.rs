//! Helpers of the Galera test files: a node's pid, a results directory the servers' OS user
//! can reach, and starting ixbench until a step is being measured.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The pid of a node's mariadbd, from the pid file in its data directory.
pub fn node_pid(cluster_dir: &Path, role: &str) -> i32 {
    let dir = cluster_dir.join(role);
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "pid") {
            return std::fs::read_to_string(&p).unwrap().trim().parse().unwrap();
        }
    }
    panic!("no pid file in {}", dir.display());
}

/// A results directory the servers' OS user can reach: (the temporary directory, `r` in it).
pub fn results_dir() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = t.path().join("r");
    (t, out)
}

/// Start `ixbench ARGS` (stdout to `log`) and return it once `step` has written `n` lines to
/// intervals.ndjson; a run that never gets there is stopped (SIGINT: ixbench stops its
/// cluster) and fails the test with its output.
pub fn start_until(args: &[&str], out: &Path, log: &Path, step: &str, n: usize) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args(args)
        .stdout(std::fs::File::create(log).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let want = format!("\"{step}\"");
    while !std::fs::read_to_string(out.join("intervals.ndjson"))
        .map(|s| s.lines().filter(|l| l.contains(&want)).count() >= n)
        .unwrap_or(false)
    {
        if t0.elapsed() > Duration::from_secs(240) || child.try_wait().unwrap().is_some() {
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            let o = child.wait_with_output().unwrap();
            panic!(
                "{step} never measured: stdout {}\nstderr {}",
                std::fs::read_to_string(log).unwrap_or_default(),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child
}

/// Start `ixbench ARGS` (stdout to `log`), SIGKILL `role`'s mariadbd once `step` has written
/// two intervals, and wait for ixbench: it must succeed and say the node was lost. Returns its
/// stdout and run.json.
pub fn kill_node_during(
    args: &[&str],
    out: &Path,
    log: &Path,
    step: &str,
    role: &str,
) -> (String, serde_json::Value) {
    let child = start_until(args, out, log, step, 2);
    let pid = node_pid(&out.join("galera-cluster"), role);
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let stdout = std::fs::read_to_string(log).unwrap();
    assert!(o.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains(&format!("NODE LOST: {role} left the cluster")),
        "{stdout}"
    );
    (stdout, super::run_json(out))
}
