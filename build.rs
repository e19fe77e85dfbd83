//! Records what the results need to say how ixbench was built: the git commit of the source
//! tree (`IXBENCH_GIT_COMMIT`, empty when unknown: a tarball without `.git`, no git installed;
//! the environment variable of the same name overrides it, e.g. for a packager who knows it),
//! whether tracked files differed from it, and the cargo profile and optimization level; and
//! finds the DBMS engines and workloads (`build/plugins.rs`), so adding one edits no list.

include!("build/git.rs");
include!("build/plugins.rs");

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    println!("cargo:rerun-if-env-changed=IXBENCH_GIT_COMMIT");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/git.rs");
    println!("cargo:rerun-if-changed=build/plugins.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    discover(&dir, &out);
    // Source changes can change "dirty" (cargo rebuilds then anyway).
    for p in ["src", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={p}");
    }
    let (commit, dirty) = match std::env::var("IXBENCH_GIT_COMMIT") {
        Ok(c) if !c.trim().is_empty() => (c.trim().to_string(), String::new()),
        _ => match probe(&dir) {
            Some((c, d, watch)) => {
                for f in watch.iter().filter(|f| f.exists()) {
                    println!("cargo:rerun-if-changed={}", f.display());
                }
                (c, d.to_string())
            }
            None => (String::new(), String::new()),
        },
    };
    println!("cargo:rustc-env=IXBENCH_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=IXBENCH_GIT_DIRTY={dirty}");
    let profile = std::env::var("PROFILE").unwrap_or_default();
    let opt = std::env::var("OPT_LEVEL").unwrap_or_default();
    println!("cargo:rustc-env=IXBENCH_PROFILE={profile}");
    println!("cargo:rustc-env=IXBENCH_OPT_LEVEL={opt}");
}
