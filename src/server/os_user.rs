//! The OS user a server runs as. PostgreSQL refuses to run as root and MariaDB needs `--user`
//! as root, so when ixbench runs as root the server and its initialization run as the DBMS's
//! own user (`postgres`, `mysql`), switched to with `setgid`/`setuid` in the child process.
//! Otherwise they run as the current user.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// A user to switch to before running a server program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OsUser {
    /// Login name.
    pub name: String,
    /// User id.
    pub uid: u32,
    /// Primary group id (supplementary groups are dropped in the child).
    pub gid: u32,
    /// Home directory (set as `HOME` for the child).
    pub home: PathBuf,
}

impl OsUser {
    /// Look a user up by name in the password database; `None` when there is no such user.
    pub fn lookup(name: &str) -> Result<Option<OsUser>> {
        if name.contains('\0') {
            bail!("user name contains a NUL byte");
        }
        let user = nix::unistd::User::from_name(name)
            .with_context(|| format!("looking up OS user {name}"))?;
        Ok(user.map(|u| OsUser {
            name: name.to_string(),
            uid: u.uid.as_raw(),
            gid: u.gid.as_raw(),
            home: u.dir,
        }))
    }

    /// Set up `cmd` to run as this user (and its primary group only) with `HOME`, `USER` and
    /// `LOGNAME` to match.
    pub fn apply(&self, cmd: &mut Command) {
        cmd.uid(self.uid)
            .gid(self.gid)
            .env("HOME", &self.home)
            .env("USER", &self.name)
            .env("LOGNAME", &self.name);
    }

    /// Hand `path` over to this user.
    pub fn chown(&self, path: &Path) -> Result<()> {
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid))
            .with_context(|| format!("chown {} to {}", path.display(), self.name))
    }

    /// Check that this user can reach `dir`: every existing ancestor must be searchable (x) by
    /// the user's uid or primary gid, as the server process will have exactly those.
    pub fn check_can_traverse(&self, dir: &Path) -> Result<()> {
        for anc in dir.ancestors().skip(1) {
            let Ok(meta) = std::fs::metadata(anc) else {
                continue;
            };
            let mode = meta.permissions().mode();
            let ok = if meta.uid() == self.uid {
                mode & 0o100 != 0
            } else if meta.gid() == self.gid {
                mode & 0o010 != 0
            } else {
                mode & 0o001 != 0
            };
            if !ok {
                bail!(
                    "data directory {} is not reachable by OS user {} (uid {}), which the server \
                     must run as when ixbench runs as root: {} has mode {:o} (owner uid {}); \
                     choose a data directory under a world-searchable path such as /tmp or \
                     /var/tmp (ixbench does not change the permissions of existing directories)",
                    dir.display(),
                    self.name,
                    self.uid,
                    anc.display(),
                    mode & 0o7777,
                    meta.uid()
                );
            }
        }
        Ok(())
    }
}

/// True when ixbench runs as root (effective uid 0).
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The user the server must run as: `Some(user)` when ixbench runs as root (the DBMS's account,
/// e.g. `postgres`), `None` to run as the current user.
pub fn server_user(account: &str, package: &str) -> Result<Option<OsUser>> {
    if !is_root() {
        return Ok(None);
    }
    match OsUser::lookup(account)? {
        Some(u) if u.uid != 0 => Ok(Some(u)),
        Some(_) => bail!("OS user {account} has uid 0; the server must not run as root"),
        None => bail!(
            "ixbench runs as root, so the server must run as OS user {account}, which does not \
             exist (the Debian package {package} creates it); or run ixbench as a non-root user"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_exists_and_nobody_knows() {
        let root = OsUser::lookup("root").unwrap().expect("root exists");
        assert_eq!(root.uid, 0);
        assert!(OsUser::lookup("no-such-user-ixbench").unwrap().is_none());
    }

    #[test]
    fn traversal_check_reads_modes() {
        let dir = tempfile::tempdir().unwrap();
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
        let meta = std::fs::metadata(&locked).unwrap();
        // A user that is neither the owner nor in the group: only "other" bits count.
        let stranger = OsUser {
            name: "stranger".into(),
            uid: meta.uid().wrapping_add(12345),
            gid: meta.gid().wrapping_add(12345),
            home: "/".into(),
        };
        let e = stranger
            .check_can_traverse(&locked.join("data"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not reachable") && e.contains("700"), "{e}");
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o711)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        stranger.check_can_traverse(&locked.join("data")).unwrap();
    }
}
