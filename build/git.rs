// The git commit of the source tree, read at build time by `build.rs` (and unit-tested from
// `src/results/build.rs`, which includes this file). A tree that is not its own git checkout (a
// tarball, or a copy inside some other repository) or a machine without git has no commit:
// `None`, recorded as unknown.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `git` with `args` in `dir`, its trimmed stdout when it succeeded.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .ok()?;
    if !o.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// What git says about the tree at `dir`: the commit checked out (40 hex digits), whether
/// tracked files differ from it, and the files whose change means a new commit (HEAD, the
/// branch's ref, packed-refs, the index). `None` when `dir` is not the top of a git checkout.
pub fn probe(dir: &Path) -> Option<(String, bool, Vec<PathBuf>)> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same(Path::new(&top), dir) {
        return None;
    }
    let commit = git(dir, &["rev-parse", "--verify", "HEAD"])?;
    if commit.len() != 40 || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    // --no-optional-locks: never rewrite the index (its change would rerun the build script).
    let dirty = git(
        dir,
        &["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"],
    )
        .map(|s| !s.is_empty())
        .unwrap_or(false);
    let mut watch = Vec::new();
    let mut paths = vec!["HEAD".to_string(), "packed-refs".into()];
    if let Some(r) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        paths.push(r);
    }
    for p in paths {
        if let Some(f) = git(dir, &["rev-parse", "--git-path", &p]) {
            let f = PathBuf::from(f);
            watch.push(if f.is_absolute() { f } else { dir.join(f) });
        }
    }
    Some((commit, dirty, watch))
}
