//! How the ixbench that measured was built: the cargo profile and optimization level, and the
//! git commit of its source (from `build.rs`; unknown for a tree without its own `.git`).
//! A debug build's client is several times slower than a release build's, so its client-side
//! figures (CPU per operation, the rates a single client reaches) are not comparable: the
//! header says so when one measures.

use serde::{Deserialize, Serialize};

/// The build of the ixbench binary that wrote a result.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct BuildInfo {
    /// Cargo profile the binary was built with: `debug` (cargo build, cargo test) or `release`.
    pub profile: String,
    /// Optimization level of ixbench's own code (`0` in a debug build, `3` in release).
    pub opt_level: String,
    /// Git commit of the source tree it was built from (40 hex digits); `None` when unknown (a
    /// tarball without `.git`, no git on the build machine).
    pub git_commit: Option<String>,
    /// Tracked files differed from that commit when it was built; `None` when unknown.
    pub git_dirty: Option<bool>,
}

impl BuildInfo {
    /// This binary's build.
    pub fn current() -> Self {
        let commit = env!("IXBENCH_GIT_COMMIT");
        let dirty = env!("IXBENCH_GIT_DIRTY");
        BuildInfo {
            profile: env!("IXBENCH_PROFILE").to_string(),
            opt_level: env!("IXBENCH_OPT_LEVEL").to_string(),
            git_commit: (!commit.is_empty()).then(|| commit.to_string()),
            git_dirty: match dirty {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            },
        }
    }

    /// A debug (unoptimized) build.
    pub fn is_debug(&self) -> bool {
        self.profile == "debug" || self.opt_level == "0"
    }

    /// `release, commit 979e221 (modified)`, `debug, commit unknown`.
    pub fn describe(&self) -> String {
        let commit = match &self.git_commit {
            Some(c) => c.chars().take(12).collect::<String>(),
            None => "unknown".into(),
        };
        let dirty = if self.git_dirty == Some(true) {
            " (with uncommitted changes)"
        } else {
            ""
        };
        format!(
            "{} build (opt-level {}), commit {commit}{dirty}",
            self.profile, self.opt_level
        )
    }

    /// The warning a debug build prints when it measures, `None` for an optimized build.
    pub fn warning(&self) -> Option<String> {
        self.is_debug().then(|| {
            "WARNING: this ixbench is a debug build (not optimized): the client's own figures \
             (CPU per operation, what one client can reach) are not comparable with a release \
             build's; for measurements use `cargo build --release` or `cargo install --locked --path .`"
                .to_string()
        })
    }
}

#[cfg(test)]
mod git_probe {
    include!("../../build/git.rs");

    #[test]
    fn no_git_checkout_is_unknown() {
        let d = std::env::temp_dir().join(format!("ixbench-nogit-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("Cargo.toml"), "[package]\n").unwrap();
        assert_eq!(probe(&d), None);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn this_checkout_has_its_commit() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let Some(head) = git(dir, &["rev-parse", "HEAD"]) else {
            // a tarball: nothing to compare with
            assert_eq!(probe(dir), None);
            return;
        };
        let (c, _, watch) = probe(dir).expect("a git checkout");
        assert_eq!(c, head);
        assert!(watch.iter().any(|f| f.ends_with("HEAD")), "{watch:?}");
        // a subdirectory of a checkout is not the top of one: unknown, not the outer commit
        assert_eq!(probe(&dir.join("src")), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_builds_warn() {
        let mut b = BuildInfo {
            profile: "release".into(),
            opt_level: "3".into(),
            git_commit: None,
            git_dirty: None,
        };
        assert!(b.warning().is_none());
        assert!(b.describe().contains("commit unknown"), "{}", b.describe());
        b.profile = "debug".into();
        b.opt_level = "0".into();
        assert!(b.warning().unwrap().contains("debug build"));
        // this test binary says what it is
        assert_eq!(BuildInfo::current().is_debug(), cfg!(debug_assertions));
    }
}
