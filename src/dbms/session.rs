//! ixbench's own connections to a server, beside a target's workers: the administrator's
//! connection to a throwaway server while it starts (is it up, create the database), the set-up
//! of the clusters it starts (accounts, sharded tables, index builds on each shard), Galera's
//! status reads and watch. They go through the same clients as the workload ([`super::pgwire`],
//! [`super::mywire`]): one client per protocol, with the same TLS, password lookup, one-line
//! errors without the password, connect timeouts and stop-request cancels.
//!
//! A session is opened from a URL, as a target is (`postgres://`/`postgresql://` or
//! `mysql://`/`mariadb://`), and runs text statements.

use std::time::Duration;

use anyhow::{bail, Result};

use super::Conn;

/// How long a session may take to connect and, when set, each read and write.
#[derive(Debug, Clone, Copy)]
pub struct SessionOptions {
    /// TCP connect and handshake (a URL's own `connect_timeout=` wins on PostgreSQL).
    pub connect_timeout: Duration,
    /// Each read and write on the socket once connected: a statement whose answer does not
    /// come within it fails (`None`: statements run as long as they run).
    pub io_timeout: Option<Duration>,
    /// Settings from the URL alone: no environment variable, service file, password file or
    /// option file is read. For the servers ixbench starts: while one starts it is not yet in
    /// the registry that otherwise keeps a user's `PGSERVICE`/`PGHOST`/`~/.my.cnf` away from it.
    pub url_only: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            connect_timeout: super::DEFAULT_CONNECT_TIMEOUT,
            io_timeout: None,
            url_only: false,
        }
    }
}

impl SessionOptions {
    /// Connect within `t`, statements unbounded.
    pub fn connect_within(t: Duration) -> Self {
        SessionOptions {
            connect_timeout: t,
            io_timeout: None,
            url_only: false,
        }
    }

    /// For a server ixbench is starting: connect within `t`, settings from the URL alone
    /// (see [`SessionOptions::url_only`]).
    pub fn starting_server(t: Duration) -> Self {
        SessionOptions {
            url_only: true,
            ..Self::connect_within(t)
        }
    }
}

/// One connection of ixbench's own to a PostgreSQL or MySQL/MariaDB server.
pub struct Session {
    conn: Box<dyn Conn>,
}

impl Session {
    /// Connect to `url` (with its password, or one found as for a target). Errors are one line
    /// naming the server without the password.
    pub fn connect(url: &str, opts: &SessionOptions) -> Result<Session> {
        let scheme = url.split_once("://").map(|(s, _)| s).unwrap_or_default();
        let Some(session) = super::registry::by_scheme(scheme).and_then(|k| k.session) else {
            bail!(
                "cannot connect to {}: expected a postgres:// or mysql:// URL",
                super::redact_url(url)
            );
        };
        let conn = session(url, opts.connect_timeout, opts.io_timeout, opts.url_only)?;
        Ok(Session { conn })
    }

    fn conn(&mut self) -> &mut dyn Conn {
        &mut *self.conn
    }

    /// Run `sql`, dropping any rows (several statements separated by `;` are allowed).
    pub fn execute(&mut self, sql: &str) -> Result<()> {
        self.conn().execute(sql)
    }

    /// Run `sql`, which holds a secret (a password), dropping any rows: an error is the
    /// server's, without the statement (the caller says what failed).
    pub fn execute_secret(&mut self, sql: &str) -> Result<()> {
        self.conn().exec_text(sql).map(|_| ())
    }

    /// The rows of `sql` as text (`None` for NULL); on MySQL, of its first result set.
    pub fn rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        self.conn().query_rows(sql)
    }

    /// The first column of the first row of `sql`; `None` when there is no row or it is NULL.
    pub fn value(&mut self, sql: &str) -> Result<Option<String>> {
        Ok(self
            .rows(sql)?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .flatten())
    }

    /// The connection as a [`Conn`], for code written against a target's connections.
    pub fn as_conn(&mut self) -> &mut dyn Conn {
        self.conn()
    }
}
