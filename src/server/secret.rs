//! What keeps a throwaway server private: a generated password, the file that holds it, a
//! private socket directory, and the per-user registry through which ixbench finds the
//! password of a server it started (so `ixbench run --target postgres://postgres@127.0.0.1:PORT/ixbench`
//! works without the user typing it). This is the writing half; the clients read the registry
//! and the password file through [`crate::dbms::throwaway`].
//!
//! - The password: 24 random bytes from the OS (`/dev/urandom`) as 48 hex digits (nothing to
//!   quote or percent-encode), in `DATADIR/ixbench-password` (mode 0600, owned by the server's
//!   user so `initdb --pwfile` can read it). Printed nowhere.
//! - The registry: one file per port, `$XDG_STATE_HOME/ixbench/servers/PORT.json` (else
//!   `~/.local/state/ixbench/servers/`), mode 0600 in a 0700 directory, naming the data
//!   directory (and, for a server started with `--server-tls`, the root certificate its URL
//!   names, so `server list` shows the URL `server start` printed). A lookup trusts it only
//!   when the data directory's marker names the same port and holds a password file; the
//!   entry is removed when ixbench stops the server.

use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::datadir::Marker;
use super::os_user::OsUser;

pub use crate::dbms::throwaway::{password_for_port, password_for_socket_dir, PASSWORD_FILE};
use crate::dbms::throwaway::{registry_dir, Entry};

/// A new random password: 48 hex digits from 24 bytes of `/dev/urandom` (the kernel's CSPRNG;
/// one read, no crate needed).
pub fn generate() -> Result<String> {
    let mut bytes = [0u8; 24];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("reading /dev/urandom for the server's password")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Write `content` to a new file `path` with mode 0600 (replacing any), owned by `user` when
/// given.
pub fn write_private(path: &Path, content: &str, user: Option<&OsUser>) -> Result<()> {
    use std::io::Write;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    f.write_all(content.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    if let Some(u) = user {
        u.chown(path)?;
    }
    Ok(())
}

/// Write the password file of `datadir`.
pub fn write_password(datadir: &Path, password: &str, user: Option<&OsUser>) -> Result<()> {
    write_private(&datadir.join(PASSWORD_FILE), &format!("{password}\n"), user)
}

/// A private directory for a server's socket when the data directory's path is too long for
/// one: a new `/tmp/ixbench-sock-XXXX` (the system temp dir), mode 0700, owned by `user`.
pub fn private_socket_dir(user: Option<&OsUser>) -> Result<PathBuf> {
    let tmp = std::env::temp_dir();
    for _ in 0..10 {
        let name = format!("ixbench-sock-{}", &generate()?[..12]);
        let dir = tmp.join(name);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                // The umask may have narrowed it; set exactly 0700.
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
                    .with_context(|| format!("chmod 700 {}", dir.display()))?;
                if let Some(u) = user {
                    u.chown(&dir)?;
                }
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
        }
    }
    anyhow::bail!(
        "cannot create a private socket directory in {}",
        tmp.display()
    )
}

/// Whether `dir` is a private socket directory made by [`private_socket_dir`].
pub fn is_private_socket_dir(dir: &Path) -> bool {
    dir.parent() == Some(std::env::temp_dir().as_path())
        && dir
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("ixbench-sock-"))
}

/// Record that the server on 127.0.0.1:`port` has its data directory (and password) in
/// `datadir`, and, when it runs with TLS, the root certificate `tls_ca` its URL names. Best
/// effort: without a registry the user gives the password.
pub fn register(port: u16, datadir: &Path, tls_ca: Option<&Path>) {
    let Some(dir) = registry_dir() else { return };
    let made = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir);
    if made.is_err() {
        return;
    }
    let entry = Entry {
        port,
        datadir: datadir.to_path_buf(),
        tls_ca: tls_ca.map(Path::to_path_buf),
    };
    let Ok(text) = serde_json::to_string(&entry) else {
        return;
    };
    prune(&dir);
    // Written whole under a temporary name, then renamed: a reader never sees half.
    let tmp = dir.join(format!(".{port}.{}.tmp", std::process::id()));
    if write_private(&tmp, &text, None).is_ok() {
        let _ = std::fs::rename(&tmp, dir.join(format!("{port}.json")));
    }
}

/// Remove entries whose data directory is gone or now belongs to another port (left by an
/// ixbench that exited at once, or a data directory removed by hand).
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().and_then(|x| x.to_str()) != Some("json") {
            continue;
        }
        let stale = match std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<Entry>(&t).ok())
        {
            Some(entry) => !Marker::read(&entry.datadir)
                .ok()
                .flatten()
                .is_some_and(|m| m.port == entry.port),
            None => true,
        };
        if stale {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Every entry the registry holds (port, data directory, root certificate), by port: the
/// servers this user's ixbench started and has not stopped (stale entries are pruned first).
pub fn registered() -> Vec<Entry> {
    let Some(dir) = registry_dir() else {
        return Vec::new();
    };
    prune(&dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<Entry> = entries
        .flatten()
        .filter(|e| e.path().extension().and_then(|x| x.to_str()) == Some("json"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter_map(|t| serde_json::from_str::<Entry>(&t).ok())
        .collect();
    out.sort_by(|a, b| (a.port, &a.datadir).cmp(&(b.port, &b.datadir)));
    out
}

/// Forget the registry entry of `port` if it names `datadir`.
pub fn unregister(port: u16, datadir: &Path) {
    let Some(dir) = registry_dir() else { return };
    let path = dir.join(format!("{port}.json"));
    let names_it = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<Entry>(&t).ok())
        .is_some_and(|e| e.datadir == datadir);
    if names_it {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::throwaway::read_password;

    #[test]
    fn passwords_are_random_hex_in_private_files() {
        let a = generate().unwrap();
        let b = generate().unwrap();
        assert_eq!(a.len(), 48);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        let t = tempfile::tempdir().unwrap();
        write_password(t.path(), &a, None).unwrap();
        let meta = std::fs::metadata(t.path().join(PASSWORD_FILE)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(read_password(t.path()).as_deref(), Some(a.as_str()));
        // Rewriting replaces it.
        write_password(t.path(), &b, None).unwrap();
        assert_eq!(read_password(t.path()).as_deref(), Some(b.as_str()));
    }

    #[test]
    fn private_socket_dirs() {
        let d = private_socket_dir(None).unwrap();
        let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert!(is_private_socket_dir(&d));
        assert!(!is_private_socket_dir(Path::new("/tmp")));
        std::fs::remove_dir(&d).unwrap();
    }
}
