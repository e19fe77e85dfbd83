//! Data directories: claiming a new one, and the marker file ixbench leaves in it so a later
//! `ixbench server stop DIR` knows what runs there and whether ixbench created the directory.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::os_user::OsUser;

/// Name of the marker file in a data directory initialized by ixbench (the clients read its
/// port when they look up a throwaway server's password).
pub use crate::dbms::throwaway::MARKER;

/// What ixbench records about a server in its data directory.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Marker {
    /// `postgres` or `mariadb`.
    pub kind: String,
    /// TCP port on 127.0.0.1 of the last start.
    pub port: u16,
    /// True when ixbench created the directory itself (only then may it remove it).
    pub created_dir: bool,
    /// Settings of the last start.
    pub settings: Vec<(String, String)>,
    /// The private socket directory outside the data directory, when the data directory's
    /// path was too long for a socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_dir: Option<PathBuf>,
}

impl Marker {
    /// Read the marker of `datadir`; `None` when there is none.
    pub fn read(datadir: &Path) -> Result<Option<Marker>> {
        let path = datadir.join(MARKER);
        match std::fs::read_to_string(&path) {
            Ok(s) => Ok(Some(
                serde_json::from_str(&s).with_context(|| format!("reading {}", path.display()))?,
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Write the marker into `datadir`.
    pub fn write(&self, datadir: &Path) -> Result<()> {
        let path = datadir.join(MARKER);
        let text = serde_json::to_string_pretty(self).context("encoding the server marker")?;
        std::fs::write(&path, text + "\n").with_context(|| format!("writing {}", path.display()))
    }
}

/// A data directory claimed for a new server.
#[derive(Debug, Clone)]
pub struct Claimed {
    /// Absolute path with symlinks resolved.
    pub path: PathBuf,
    /// Whether ixbench created it (it did not exist before).
    pub created: bool,
}

/// Claim `dir` for a new server: it must not exist (it is then created, with missing parents)
/// or be an empty directory. It ends up mode 0700 and, when `user` is given, owned by that user
/// after checking that the user can reach it. Nothing that existed before is removed.
pub fn claim(dir: &Path, user: Option<&OsUser>) -> Result<Claimed> {
    let created = match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => {
            let mut entries =
                std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
            if entries.next().is_some() {
                bail!(
                    "data directory {} is not empty: ixbench initializes a new data directory; \
                     give a path that does not exist or an empty directory",
                    dir.display()
                );
            }
            false
        }
        Ok(_) => bail!(
            "data directory {} exists and is not a directory",
            dir.display()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            // create_dir (not _all) fails if someone else created it meanwhile.
            std::fs::create_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
            true
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    let path = dir
        .canonicalize()
        .with_context(|| format!("resolving {}", dir.display()))?;
    let prepared = (|| -> Result<()> {
        if let Some(u) = user {
            u.check_can_traverse(&path)?;
            u.chown(&path)?;
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("chmod 700 {}", path.display()))
    })();
    if let Err(e) = prepared {
        if created {
            // Empty and ours: leave no trace of a failed claim.
            let _ = std::fs::remove_dir(&path);
        }
        return Err(e);
    }
    Ok(Claimed { path, created })
}

/// A default data directory for `ixbench server start`: a new name under the system temp dir.
pub fn default_path(kind: &str) -> PathBuf {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    std::env::temp_dir().join(format!("ixbench-{kind}-{stamp}-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_new_or_empty_refuses_non_empty() {
        let t = tempfile::tempdir().unwrap();
        let new = t.path().join("a/b/data");
        let c = claim(&new, None).unwrap();
        assert!(c.created && c.path.is_absolute() && new.is_dir());
        let mode = std::fs::metadata(&new).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);

        let empty = t.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(!claim(&empty, None).unwrap().created);

        let full = t.path().join("full");
        std::fs::create_dir(&full).unwrap();
        std::fs::write(full.join("keep.txt"), "x").unwrap();
        let e = claim(&full, None).unwrap_err().to_string();
        assert!(e.contains("not empty"), "{e}");
        assert!(
            full.join("keep.txt").exists(),
            "a refused directory is left alone"
        );

        let file = t.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(claim(&file, None).is_err());
        assert!(file.is_file());
    }

    #[test]
    fn marker_round_trip() {
        let t = tempfile::tempdir().unwrap();
        assert!(Marker::read(t.path()).unwrap().is_none());
        let m = Marker {
            kind: "postgres".into(),
            port: 5555,
            created_dir: true,
            settings: vec![("work_mem".into(), "8MB".into())],
            socket_dir: None,
        };
        m.write(t.path()).unwrap();
        assert_eq!(Marker::read(t.path()).unwrap(), Some(m));
    }
}
