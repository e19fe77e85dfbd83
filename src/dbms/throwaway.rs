//! The reading half of the registry of throwaway servers (the writing half is
//! `server::secret`): how a client finds the generated password of a server ixbench started,
//! so `ixbench run --target postgres://postgres@127.0.0.1:PORT/ixbench` works without the user
//! typing it. It sits with the clients, below the servers, as the other ways to find a password
//! do (the URL, the environment).
//!
//! - The password: in `DATADIR/ixbench-password` (mode 0600), 48 hex digits.
//! - The registry: one file per port, `$XDG_STATE_HOME/ixbench/servers/PORT.json` (else
//!   `~/.local/state/ixbench/servers/`), naming the data directory (and the root certificate
//!   of a server started with TLS, for the URL `server list` shows). A lookup trusts it only when
//!   the data directory's marker (`ixbench-server.json`) names the same port and the directory
//!   holds a password file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The password file in a data directory.
pub const PASSWORD_FILE: &str = "ixbench-password";

/// The marker file ixbench leaves in a data directory it initialized.
pub const MARKER: &str = "ixbench-server.json";

/// A registry entry: the server on 127.0.0.1:`port` has its data directory in `datadir`.
#[derive(Serialize, Deserialize)]
pub struct Entry {
    /// The server's TCP port on 127.0.0.1.
    pub port: u16,
    /// Its data directory (with the marker and the password file).
    pub datadir: PathBuf,
    /// The root certificate its URL verifies it with, when it was started with TLS
    /// (`--server-tls`): `server list` prints the URL `server start` printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_ca: Option<PathBuf>,
}

/// The registry directory, when a home or state directory is known.
pub fn registry_dir() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".local/state"))
        })?;
    Some(state.join("ixbench/servers"))
}

/// The password in `datadir`'s password file, if there is one.
pub fn read_password(datadir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(datadir.join(PASSWORD_FILE)).ok()?;
    let pw = text.trim_end_matches(['\n', '\r']).to_string();
    (!pw.is_empty()).then_some(pw)
}

/// The port the marker of `datadir` names; `None` without a readable marker.
fn marker_port(datadir: &Path) -> Option<u16> {
    #[derive(Deserialize)]
    struct Port {
        port: u16,
    }
    let text = std::fs::read_to_string(datadir.join(MARKER)).ok()?;
    serde_json::from_str::<Port>(&text).ok().map(|m| m.port)
}

/// The password of the server ixbench started on 127.0.0.1:`port`, if the registry knows it
/// and the data directory it names still belongs to a server on that port.
pub fn password_for_port(port: u16) -> Option<String> {
    let path = registry_dir()?.join(format!("{port}.json"));
    let entry: Entry = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    (marker_port(&entry.datadir)? == port && entry.port == port)
        .then(|| read_password(&entry.datadir))
        .flatten()
}

/// The password of the server ixbench started whose socket is in `socket_dir` (the data
/// directory itself, when the path was short enough).
pub fn password_for_socket_dir(socket_dir: &Path) -> Option<String> {
    marker_port(socket_dir)?;
    read_password(socket_dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_dir_needs_a_marker_and_a_password() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(password_for_socket_dir(t.path()), None);
        std::fs::write(t.path().join(PASSWORD_FILE), "abc\n").unwrap();
        assert_eq!(password_for_socket_dir(t.path()), None);
        std::fs::write(
            t.path().join(MARKER),
            r#"{"kind":"postgres","port":5999,"created_dir":true,"settings":[]}"#,
        )
        .unwrap();
        assert_eq!(password_for_socket_dir(t.path()).as_deref(), Some("abc"));
        assert_eq!(marker_port(t.path()), Some(5999));
    }
}
