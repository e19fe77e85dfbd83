//! Test certificates made with the openssl command (tests/tls.rs, tests/server.rs).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Test certificates: `ca.crt` signs `server.crt` (valid for DNS `localhost` only),
/// `client.crt` (CN `cert_u`) and `node.crt` (IP 127.0.0.1 and DNS localhost: for
/// `--server-tls`, see [`server_tls_dir`]); `other-ca.crt` signs nothing.
pub struct Certs {
    dir: tempfile::TempDir,
}

impl Certs {
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn s(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }
}

/// `openssl ARGS` in `dir`, which must succeed.
pub fn openssl(dir: &Path, args: &[&str]) {
    let o = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl command runs");
    assert!(
        o.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Make the certificates, or `None` (skipped) without the openssl command.
pub fn make_certs(test: &str) -> Option<Certs> {
    if Command::new("openssl").arg("version").output().is_err() {
        return super::skip(test, "the openssl command is not installed");
    }
    let dir = tempfile::Builder::new()
        .prefix("ixbench-tls-")
        .tempdir()
        .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let d = dir.path();
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    for ca in ["ca", "other-ca"] {
        let (key, crt, subj) = (
            format!("{ca}.key"),
            format!("{ca}.crt"),
            format!("/CN=ixbench test {ca}"),
        );
        let mut a = vec!["req", "-x509"];
        a.extend_from_slice(&ec);
        a.extend_from_slice(&["-keyout", &key, "-out", &crt, "-days", "2", "-subj", &subj]);
        openssl(d, &a);
    }
    std::fs::write(
        d.join("server.ext"),
        "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    std::fs::write(d.join("client.ext"), "extendedKeyUsage=clientAuth\n").unwrap();
    // For `--server-tls`: the servers ixbench starts are reached at 127.0.0.1.
    std::fs::write(
        d.join("node.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    for (who, cn) in [
        ("server", "/CN=localhost"),
        ("client", "/CN=cert_u"),
        ("node", "/CN=localhost"),
    ] {
        let (key, csr, crt, ext) = (
            format!("{who}.key"),
            format!("{who}.csr"),
            format!("{who}.crt"),
            format!("{who}.ext"),
        );
        let mut a = vec!["req"];
        a.extend_from_slice(&ec);
        a.extend_from_slice(&["-keyout", &key, "-out", &csr, "-subj", cn]);
        openssl(d, &a);
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                &crt,
                "-days",
                "2",
                "-extfile",
                &ext,
            ],
        );
    }
    // The server runs as its own user: let it read its files.
    for f in [
        "ca.crt",
        "server.crt",
        "server.key",
        "client.crt",
        "client.key",
        "node.crt",
        "node.key",
    ] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    Some(Certs { dir })
}

/// A `--server-tls` directory `name`: the certificate naming 127.0.0.1 and its key, and as
/// `ca.crt` the root `ca` (`ca.crt`; `other-ca.crt` signed nothing here).
pub fn server_tls_dir(certs: &Certs, name: &str, ca: &str) -> PathBuf {
    let d = certs.path(name);
    std::fs::create_dir(&d).unwrap();
    for (from, to) in [
        ("node.crt", "server.crt"),
        ("node.key", "server.key"),
        (ca, "ca.crt"),
    ] {
        std::fs::copy(certs.path(from), d.join(to)).unwrap();
    }
    d
}
