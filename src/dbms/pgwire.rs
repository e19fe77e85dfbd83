//! A blocking PostgreSQL client (frontend/backend protocol 3.0) for the workload's hot path:
//! one socket, one buffer each way, no async runtime.
//!
//! Why not the `postgres` crate: it is `tokio-postgres` behind a `block_on`, so each statement
//! goes through a channel to a connection future, an executor and `epoll_wait`; in
//! `ixbench oltp` that made ixbench's user CPU per transaction 1.7x sysbench's (libpq). Here a
//! statement is one `write` of Bind+Execute+Sync and the `read`s of its answer, rows are
//! walked in the read buffer without allocating, and parameters are encoded straight from the
//! workload's [`Value`]s. Authentication (md5, SCRAM-SHA-256) and the frontend messages of the
//! start-up come from `postgres-protocol`, the codec `tokio-postgres` itself uses. The target's
//! settings are resolved by [`super::conninfo`] (URL or `key=value`, service file, environment,
//! password file) and handed over as a [`Config`] (hosts, ports, user, database, password, ...)
//! and a [`Tls`] built by [`tls_from_params`].
//!
//! TLS (rustls, see [`super::tls`]) with libpq's `sslmode` meanings: `disable`, `allow` (clear
//! first, TLS if the server refuses), `prefer` (the default: TLS first, clear if TLS fails),
//! `require` (TLS; the certificate is checked only when a root certificate is given or
//! `~/.postgresql/root.crt` exists, as libpq), `verify-ca` (the chain), `verify-full` (the
//! chain and the host name). `sslrootcert=FILE|system`, `sslcert`/`sslkey` (default
//! `~/.postgresql/postgresql.crt` and `.key` when present), `sslsni=0|1`. Never TLS over a
//! Unix socket (as libpq). SCRAM-SHA-256-PLUS (channel binding `tls-server-end-point`) when
//! TLS is on and the server offers it; `channel_binding=disable|prefer|require` as libpq.
//! Cancel requests go in clear on a connection of their own, as libpq's `PQcancel` sends them
//! (the server reads them before any authentication).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::BytesMut;
use postgres_protocol::authentication::sasl::{
    ChannelBinding, ScramSha256, SCRAM_SHA_256, SCRAM_SHA_256_PLUS,
};
use postgres_protocol::message::frontend;
use rustls::ClientConfig;

use super::netio::{self, InBuf, Stream, Transport};
use super::tls;
use super::Value;
use crate::deadline::Since;

/// Type OIDs ixbench encodes and decodes (pg_type.dat).
pub mod oid {
    pub const INT8: u32 = 20;
    pub const INT2: u32 = 21;
    pub const INT4: u32 = 23;
    pub const TEXT: u32 = 25;
    pub const FLOAT4: u32 = 700;
    pub const FLOAT8: u32 = 701;
    pub const BPCHAR: u32 = 1042;
    pub const VARCHAR: u32 = 1043;
    pub const TIMESTAMP: u32 = 1114;
    pub const TIMESTAMPTZ: u32 = 1184;
    pub const NUMERIC: u32 = 1700;
}

/// Seconds from the Unix epoch to PostgreSQL's (2000-01-01).
const PG_EPOCH_UNIX_SECS: i64 = 946_684_800;

/// An error the server sent (ErrorResponse), with the fields ixbench reports.
#[derive(Debug, Clone)]
pub struct DbError {
    /// `ERROR`, `FATAL`, ... (the `S` field, in the server's language).
    pub severity: String,
    /// True for FATAL and PANIC (from the `V` field, never translated, when the server sends
    /// it): the server closes the connection.
    pub fatal: bool,
    /// SQLSTATE.
    pub code: String,
    pub message: String,
    pub detail: Option<String>,
}

/// Why a call failed.
#[derive(Debug)]
pub enum WireError {
    /// The server said no; the connection is still usable unless the severity is FATAL.
    Db(DbError),
    /// The socket failed or the server closed it: the connection is gone.
    Io(io::Error),
    /// The server sent something this client does not expect, or ixbench was asked for
    /// something it cannot send (e.g. a parameter of another type): the text says what.
    Protocol(String),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Db(d) => write!(f, "{} {}: {}", d.severity, d.code, d.message),
            WireError::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                f.write_str("connection closed by the server")
            }
            WireError::Io(e) => write!(f, "error communicating with the server: {e}"),
            WireError::Protocol(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for WireError {}

impl From<io::Error> for WireError {
    fn from(e: io::Error) -> Self {
        WireError::Io(e)
    }
}

type WResult<T> = std::result::Result<T, WireError>;

fn protocol<T>(what: impl Into<String>) -> WResult<T> {
    Err(WireError::Protocol(what.into()))
}

/// Where a connection went, for its cancel requests.
#[derive(Clone, Debug)]
enum Addr {
    Tcp(std::net::SocketAddr),
    Unix(std::path::PathBuf),
}

/// What a cancel request needs: the server's address and the connection's key.
#[derive(Clone, Debug)]
pub struct CancelKey {
    addr: Addr,
    pid: i32,
    secret: i32,
    timeout: Duration,
}

impl CancelKey {
    /// Ask the server to cancel what the connection runs (a CancelRequest on a connection of
    /// its own; the answer is the statement's error on the original connection).
    pub fn cancel(&self) -> io::Result<()> {
        let mut buf = BytesMut::new();
        frontend::cancel_request(self.pid, self.secret, &mut buf);
        let mut s = match &self.addr {
            Addr::Tcp(a) => Stream::Tcp(TcpStream::connect_timeout(a, self.timeout)?),
            Addr::Unix(p) => Stream::Unix(UnixStream::connect(p)?),
        };
        s.set_timeouts(Some(self.timeout))?;
        s.write_all(&buf)?;
        // The server closes the connection when it has read the request.
        let mut b = [0u8; 1];
        let _ = s.read(&mut b);
        Ok(())
    }
}

/// A statement prepared on the server, with its parameter and result column types.
#[derive(Debug, Clone)]
pub struct Prepared {
    name: String,
    /// Parameter type OIDs, as the server inferred them.
    pub params: Vec<u32>,
    /// Result column type OIDs (empty for statements without rows).
    pub columns: Vec<u32>,
}

/// One connection.
pub struct Wire {
    stream: Stream,
    out: BytesMut,
    inb: InBuf,
    cancel: CancelKey,
    notices: Option<(Arc<Mutex<Vec<String>>>, usize)>,
    /// Set when the socket failed: every later call fails at once.
    broken: bool,
    /// What broke it, when known: the server's FATAL error, the socket's error.
    lost_cause: Option<String>,
    next_name: u32,
    transport: Transport,
}

/// Where and as whom to connect: the settings [`super::conninfo`] resolved (the TLS ones
/// aside, see [`Tls`]), as [`Wire::connect`] reads them.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The hosts, tried in order until one accepts.
    pub hosts: Vec<Host>,
    /// The ports: none (5432 for every host), one (for every host) or one per host.
    pub ports: Vec<u16>,
    /// The user (`user` of the start-up message).
    pub user: Option<String>,
    /// The database (`database` of the start-up message; the server's default is the user).
    pub dbname: Option<String>,
    /// The password, when one is given (never shown: see [`Password`]).
    pub password: Option<Password>,
    /// Command-line options for the server (`options`, e.g. `-c work_mem=64MB`).
    pub options: Option<String>,
    /// The `application_name` the server shows in `pg_stat_activity`.
    pub application_name: Option<String>,
    /// How long the TCP connect and start-up may take (`None`: the caller's default).
    pub connect_timeout: Option<Duration>,
    /// libpq's `channel_binding`.
    pub channel_binding: ChannelBindingMode,
}

impl Config {
    /// The port of the `i`th host (the last port given for the hosts past it; 5432 when
    /// none is given).
    pub fn port(&self, i: usize) -> u16 {
        self.ports
            .get(i)
            .or(self.ports.last())
            .copied()
            .unwrap_or(5432)
    }
}

/// A server to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// A host name or address, over TCP.
    Tcp(String),
    /// The directory of the server's Unix socket (`.s.PGSQL.PORT` in it).
    Unix(PathBuf),
}

/// A password: its `Debug` shows that there is one, never what it is.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// Wrap `password`.
    pub fn new(password: impl Into<String>) -> Password {
        Password(password.into())
    }

    /// The password itself (never print it).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(..)")
    }
}

/// libpq's `channel_binding`: whether SCRAM binds to the TLS connection
/// (SCRAM-SHA-256-PLUS, `tls-server-end-point`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChannelBindingMode {
    /// Never bind.
    Disable,
    /// Bind when the connection has TLS and the server offers it (libpq's default).
    #[default]
    Prefer,
    /// Bind or fail, before the password is used.
    Require,
}

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(s: &str) -> Option<SslMode> {
        Some(match s {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    /// The name as libpq spells it.
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    fn requires_tls(self) -> bool {
        matches!(
            self,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull
        )
    }
}

/// TLS as the connections of one target use it: the mode and, unless it is `disable`, the
/// client configuration (files read once, sessions resumed across connections).
#[derive(Clone)]
pub struct Tls {
    pub mode: SslMode,
    /// What is checked of the server's certificate.
    pub verify: tls::Verify,
    client: Option<Arc<ClientConfig>>,
    /// A client certificate is shown (a log-in without password may then be pg_hba's `cert`).
    client_cert: bool,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Tls(sslmode={}, verify {})",
            self.mode.name(),
            self.verify.name()
        )
    }
}

impl Default for Tls {
    /// libpq's default, `prefer`, without certificates.
    fn default() -> Self {
        Tls {
            mode: SslMode::Prefer,
            verify: tls::Verify::Nothing,
            client: tls::Settings {
                verify: tls::Verify::Nothing,
                roots: None,
                client_cert: None,
                sni: true,
            }
            .client_config(("sslrootcert", "sslcert", "sslkey"))
            .ok(),
            client_cert: false,
        }
    }
}

/// The TLS parameters ixbench reads itself, off the query of a `postgres://` URL; the other
/// parameters stay in the URL.
const TLS_PARAMS: &[&str] = &[
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "sslsni",
    "sslnegotiation",
    "sslpassword",
    "sslcrl",
    "sslcrldir",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "requiressl",
];

/// Take the TLS parameters off `url` (`postgres://...?sslmode=verify-full&sslrootcert=...`)
/// and build what connections need from them (files read now). Returns the URL without them
/// and the [`Tls`]. Errors are one line naming the parameter.
pub fn split_tls_params(url: &str) -> Result<(String, Tls), String> {
    let (head, query) = match url.split_once('?') {
        Some((h, q)) => (h, q),
        None => (url, ""),
    };
    let mut kept = Vec::new();
    let mut given: Vec<(&str, String)> = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match TLS_PARAMS.iter().find(|p| **p == k) {
            Some(p) => {
                let v = percent_encoding::percent_decode_str(v)
                    .decode_utf8()
                    .map_err(|_| format!("{k}: not UTF-8 once percent-decoded"))?;
                given.retain(|(q, _)| q != p);
                given.push((p, v.into_owned()));
            }
            None => kept.push(pair),
        }
    }
    let get = |k: &str| given.iter().find(|(p, _)| *p == k).map(|(_, v)| v.as_str());
    let tls = tls_from_params(get)?;
    let rest = if kept.is_empty() {
        head.to_string()
    } else {
        format!("{head}?{}", kept.join("&"))
    };
    Ok((rest, tls))
}

/// Build the [`Tls`] from libpq's TLS settings as `get` gives them (resolved by
/// [`super::conninfo`] from the target, service file and environment); files are read now.
/// Errors are one line naming the parameter.
pub fn tls_from_params<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Tls, String> {
    for k in [
        "sslpassword",
        "sslcrl",
        "sslcrldir",
        "ssl_min_protocol_version",
        "ssl_max_protocol_version",
        "requiressl",
    ] {
        if get(k).is_some() {
            return Err(format!(
                "{k} is not supported by ixbench's PostgreSQL client (it takes sslmode, \
                 sslrootcert, sslcert, sslkey, sslsni)"
            ));
        }
    }
    match get("sslnegotiation") {
        None | Some("postgres") => {}
        Some("direct") => {
            return Err(
                "sslnegotiation=direct is not supported by ixbench's PostgreSQL client (use \
                 postgres, the default)"
                    .into(),
            )
        }
        Some(v) => return Err(format!("sslnegotiation={v}: expected postgres or direct")),
    }
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let default_file = |name: &str| {
        home.as_ref()
            .map(|h| h.join(".postgresql").join(name))
            .filter(|p| p.is_file())
    };
    let roots = match get("sslrootcert") {
        Some("system") => Some(tls::Roots::System),
        Some("") => None,
        Some(f) => Some(tls::Roots::File(f.into())),
        None => default_file("root.crt").map(tls::Roots::File),
    };
    let mode = match get("sslmode") {
        Some(m) => SslMode::parse(m).ok_or_else(|| {
            format!(
                "sslmode={m}: expected disable, allow, prefer, require, verify-ca or verify-full"
            )
        })?,
        // libpq 16: the system's roots make verify-full the default.
        None if roots == Some(tls::Roots::System) => SslMode::VerifyFull,
        None => SslMode::Prefer,
    };
    if roots == Some(tls::Roots::System) && mode != SslMode::VerifyFull && mode != SslMode::Disable
    {
        return Err(format!(
            "sslrootcert=system needs sslmode=verify-full (sslmode={} would trust any \
             certificate the system's roots sign, for any host)",
            mode.name()
        ));
    }
    let verify = match mode {
        SslMode::VerifyFull => tls::Verify::Full,
        SslMode::VerifyCa => tls::Verify::Chain,
        // As libpq: a root certificate at hand makes the weaker modes check the chain.
        _ if roots.is_some() => tls::Verify::Chain,
        _ => tls::Verify::Nothing,
    };
    if verify != tls::Verify::Nothing && roots.is_none() {
        return Err(format!(
            "sslmode={} needs a root certificate to verify the server with: give \
             sslrootcert=FILE (or sslrootcert=system for the system's), or put it in \
             ~/.postgresql/root.crt",
            mode.name()
        ));
    }
    let cert = match get("sslcert") {
        Some("") => None,
        Some(c) => Some(std::path::PathBuf::from(c)),
        None => default_file("postgresql.crt"),
    };
    let client_cert = match cert {
        None => None,
        Some(c) => {
            let key = match get("sslkey") {
                Some(k) if !k.is_empty() => std::path::PathBuf::from(k),
                _ => home
                    .as_ref()
                    .map(|h| h.join(".postgresql/postgresql.key"))
                    .filter(|p| p.is_file())
                    .ok_or_else(|| {
                        format!(
                            "sslcert={} needs its private key: give sslkey=FILE",
                            c.display()
                        )
                    })?,
            };
            Some((c, key))
        }
    };
    let sni = match get("sslsni") {
        None | Some("1") => true,
        Some("0") => false,
        Some(v) => return Err(format!("sslsni={v}: expected 0 or 1")),
    };
    let has_cert = client_cert.is_some();
    let client = if mode == SslMode::Disable {
        None
    } else {
        let settings = tls::Settings {
            verify,
            roots,
            client_cert,
            sni,
        };
        Some(settings.client_config(("sslrootcert", "sslcert", "sslkey"))?)
    };
    Ok(Tls {
        mode,
        verify,
        client,
        client_cert: has_cert,
    })
}

/// A server message: its tag and where its body is in the read buffer.
#[derive(Clone, Copy)]
struct Msg {
    tag: u8,
    start: usize,
    end: usize,
}

impl Wire {
    /// Connect to the first of `config`'s hosts that accepts, start up and authenticate, with
    /// TLS as `tls` says (libpq's rules: `prefer` tries TLS first and falls back to a clear
    /// connection when the TLS one fails, `allow` the other way round; never TLS over a Unix
    /// socket). `notices` collects NoticeResponses (`SEVERITY: message`), at most `max` of them.
    pub fn connect(
        config: &Config,
        tls: &Tls,
        timeout: Duration,
        notices: Option<(Arc<Mutex<Vec<String>>>, usize)>,
    ) -> WResult<Wire> {
        let t0 = Since::start();
        let port = |i: usize| config.port(i);
        let mut last: Option<WireError> = None;
        'hosts: for (i, host) in config.hosts.iter().enumerate() {
            // TLS first or not, and whether the other way is tried when the first fails.
            let plan: &[bool] = match (host, tls.mode) {
                (Host::Unix(_), _) | (_, SslMode::Disable) => &[false],
                (_, SslMode::Allow) => &[false, true],
                (_, SslMode::Prefer) => &[true, false],
                _ => &[true],
            };
            let mut first: Option<WireError> = None;
            for (k, &want_tls) in plan.iter().enumerate() {
                let left = t0.left_of(timeout).max(Duration::from_millis(1));
                let opened = match host {
                    Host::Tcp(name) => {
                        netio::open_tcp(name, port(i), left).map(|(s, a)| (s, Addr::Tcp(a)))
                    }
                    Host::Unix(dir) => {
                        let path = dir.join(format!(".s.PGSQL.{}", port(i)));
                        UnixStream::connect(&path)
                            .map(|s| (Stream::Unix(s), Addr::Unix(path.clone())))
                            .map_err(|e| {
                                io::Error::new(e.kind(), format!("{}: {e}", path.display()))
                            })
                    }
                };
                let (stream, addr) = match opened {
                    Ok(x) => x,
                    Err(e) => {
                        last = Some(WireError::Io(e));
                        continue 'hosts;
                    }
                };
                let name = match host {
                    Host::Tcp(name) => name.as_str(),
                    Host::Unix(_) => "localhost",
                };
                let (r, used_tls) = Self::attempt(
                    stream,
                    addr,
                    tls,
                    want_tls,
                    name,
                    config,
                    left,
                    notices.clone(),
                );
                let e = match r {
                    Ok(w) => return Ok(w),
                    Err(WireError::Io(e)) => match netio::handshake_timeout(&e, left) {
                        Some(m) => {
                            // Out of time: the other way is not tried (the next host is).
                            last = Some(WireError::Protocol(m));
                            continue 'hosts;
                        }
                        None => WireError::Io(e),
                    },
                    Err(e) => e,
                };
                let retry = k + 1 < plan.len()
                    && match tls.mode {
                        // The TLS connection failed in any way: try in clear.
                        SslMode::Prefer => used_tls,
                        // The server refused the clear connection: try TLS.
                        SslMode::Allow => matches!(e, WireError::Db(_)),
                        _ => false,
                    };
                if retry {
                    first = Some(e);
                    continue;
                }
                // Of two failures, the server's own answer tells more, the TLS one first.
                let e = match first.take() {
                    Some(f @ WireError::Db(_))
                        if tls.mode == SslMode::Prefer || !matches!(e, WireError::Db(_)) =>
                    {
                        f
                    }
                    _ => e,
                };
                // The server answered: another host would not change its mind.
                if matches!(e, WireError::Db(_)) {
                    return Err(e);
                }
                last = Some(e);
                continue 'hosts;
            }
        }
        Err(last.unwrap_or_else(|| WireError::Protocol("no host to connect to".into())))
    }

    /// One start-up on a new socket, TLS first when `want_tls` (the server may say no, which
    /// fails only when the mode requires TLS). Also returns whether TLS was on.
    #[allow(clippy::too_many_arguments)]
    fn attempt(
        mut stream: Stream,
        addr: Addr,
        tls: &Tls,
        want_tls: bool,
        host: &str,
        config: &Config,
        timeout: Duration,
        notices: Option<(Arc<Mutex<Vec<String>>>, usize)>,
    ) -> (WResult<Wire>, bool) {
        // Bound the start-up; statements themselves may run as long as they run.
        if let Err(e) = stream.set_timeouts(Some(timeout)) {
            return (Err(e.into()), false);
        }
        let mut used_tls = false;
        if want_tls {
            match Self::start_tls(stream, tls, host) {
                Ok((s, on)) => {
                    stream = s;
                    used_tls = on;
                }
                Err(e) => return (Err(e), true),
            }
        }
        let mut w = Wire {
            stream,
            out: BytesMut::with_capacity(1024),
            inb: InBuf::new(),
            cancel: CancelKey {
                addr,
                pid: 0,
                secret: 0,
                timeout,
            },
            notices,
            broken: false,
            lost_cause: None,
            next_name: 0,
            transport: Transport::default(),
        };
        let r = w.startup(config).and_then(|auth| {
            // No password asked: trust, or (pg_hba `cert`) the client certificate.
            let auth = match auth {
                "trust" if used_tls && tls.client_cert => "trust or client certificate",
                a => a,
            };
            w.transport = w.stream.transport(
                format!("sslmode={}", tls.mode.name()),
                tls.verify.name(),
                auth,
            );
            w.stream.set_timeouts(None)?;
            Ok(())
        });
        (r.map(|()| w), used_tls)
    }

    /// SSLRequest, then the TLS handshake when the server says `S`; a server that says `N`
    /// leaves the stream as it was (an error when the mode requires TLS). Returns the stream
    /// and whether TLS is on.
    fn start_tls(mut stream: Stream, tls: &Tls, host: &str) -> WResult<(Stream, bool)> {
        let Some(client) = &tls.client else {
            return Ok((stream, false));
        };
        // SSLRequest: length 8, code 80877103.
        stream.write_all(&[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f])?;
        // Exactly one byte: anything after an `S` is the TLS handshake, and nothing sent before
        // it may be taken as coming from inside TLS (CVE-2021-23222).
        let mut b = [0u8; 1];
        loop {
            match stream.read(&mut b) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        match b[0] {
            b'S' => match netio::start_tls(stream, client, host) {
                Ok(s) => Ok((s, true)),
                Err(e) if netio::handshake_timeout(&e, Duration::ZERO).is_some() => Err(e.into()),
                Err(e) => protocol(format!(
                    "TLS with the server at {host}: {}",
                    tls::describe(&e, "sslrootcert", "sslcert/sslkey")
                )),
            },
            b'N' if tls.mode.requires_tls() => protocol(format!(
                "sslmode={}: the server at {host} does not accept TLS connections (its ssl \
                 setting is off); use sslmode=prefer or disable to connect in clear",
                tls.mode.name()
            )),
            b'N' => Ok((stream, false)),
            b'E' => protocol(format!(
                "the server at {host} answered the TLS request with an error (a server older \
                 than 7.0, or not PostgreSQL)"
            )),
            c => protocol(format!(
                "the server at {host} sent {c:#04x} to the TLS request (not PostgreSQL?)"
            )),
        }
    }

    /// The key a stop request cancels this connection's statement with.
    pub fn cancel_key(&self) -> CancelKey {
        self.cancel.clone()
    }

    /// How this connection reached its server (TLS, its version and cipher, the log-in).
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// Bound each read and write on the socket from now on (`None`: wait as long as it takes).
    pub fn set_io_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        self.stream.set_timeouts(t)
    }

    /// Start up and authenticate; returns how (`trust`, `password`, `md5`, `SCRAM-SHA-256`,
    /// `SCRAM-SHA-256-PLUS`).
    fn startup(&mut self, config: &Config) -> WResult<&'static str> {
        let user = config.user.as_deref().unwrap_or_default();
        let mut params: Vec<(&str, &str)> = vec![("client_encoding", "UTF8"), ("user", user)];
        if let Some(db) = config.dbname.as_deref() {
            params.push(("database", db));
        }
        if let Some(o) = config.options.as_deref() {
            params.push(("options", o));
        }
        if let Some(a) = config.application_name.as_deref() {
            params.push(("application_name", a));
        }
        frontend::startup_message(params.iter().copied(), &mut self.out)?;
        self.flush()?;
        let password = config.password.as_ref().map(|p| p.expose().as_bytes());
        let missing = || {
            WireError::Protocol(format!(
                "password missing: the server asks user {user} for a password"
            ))
        };
        let binding = config.channel_binding;
        let no_tls = if self.stream.tls_info().is_none() {
            " (the connection has no TLS)"
        } else {
            ""
        };
        let binding_required = || {
            WireError::Protocol(format!(
                "channel_binding=require: the server asks for a password without SCRAM channel \
                 binding{no_tls}; the password was not sent"
            ))
        };
        let mut auth = "trust";
        loop {
            let m = self.next()?;
            match m.tag {
                b'R' => {
                    let body = &self.inb.buf[m.start..m.end];
                    let kind = be_i32(body, 0)?;
                    match kind {
                        0 => {
                            if binding == ChannelBindingMode::Require
                                && auth != "SCRAM-SHA-256-PLUS"
                            {
                                return protocol(format!(
                                    "channel_binding=require: the server logged user {user} in \
                                     without channel binding ({auth})"
                                ));
                            }
                        }
                        3 => {
                            if binding == ChannelBindingMode::Require {
                                return Err(binding_required());
                            }
                            let pw = password.ok_or_else(missing)?.to_vec();
                            frontend::password_message(&pw, &mut self.out)?;
                            self.flush()?;
                            auth = "password";
                        }
                        5 => {
                            if binding == ChannelBindingMode::Require {
                                return Err(binding_required());
                            }
                            let pw = password.ok_or_else(missing)?;
                            let salt: [u8; 4] = body
                                .get(4..8)
                                .and_then(|s| s.try_into().ok())
                                .ok_or_else(|| WireError::Protocol("short md5 salt".into()))?;
                            let hash = postgres_protocol::authentication::md5_hash(
                                user.as_bytes(),
                                pw,
                                salt,
                            );
                            frontend::password_message(hash.as_bytes(), &mut self.out)?;
                            self.flush()?;
                            auth = "md5";
                        }
                        10 => {
                            let pw = password.ok_or_else(missing)?;
                            let mechs: Vec<&[u8]> = body[4..]
                                .split(|&b| b == 0)
                                .filter(|s| !s.is_empty())
                                .collect();
                            let plus = mechs.contains(&SCRAM_SHA_256_PLUS.as_bytes());
                            if !plus && !mechs.contains(&SCRAM_SHA_256.as_bytes()) {
                                return protocol(
                                    "the server offers no SASL mechanism ixbench knows (SCRAM-SHA-256)",
                                );
                            }
                            auth = self.scram(pw, plus, binding)?;
                        }
                        k => {
                            return protocol(format!(
                                "the server asks for an authentication method ixbench does not speak ({k})"
                            ))
                        }
                    }
                }
                b'K' => {
                    let body = &self.inb.buf[m.start..m.end];
                    self.cancel.pid = be_i32(body, 0)?;
                    self.cancel.secret = be_i32(body, 4)?;
                }
                b'E' => return Err(WireError::Db(self.db_error(m))),
                b'Z' => return Ok(auth),
                t => return protocol(format!("unexpected message {:?} at start-up", t as char)),
            }
        }
    }

    /// SCRAM-SHA-256, with channel binding (`-PLUS`, tls-server-end-point) when the connection
    /// has TLS, the server offers it and `binding` allows it (libpq's rules; `require` fails
    /// before the password is used otherwise). Returns the mechanism used.
    fn scram(
        &mut self,
        password: &[u8],
        server_plus: bool,
        binding: ChannelBindingMode,
    ) -> WResult<&'static str> {
        let end_point = self
            .stream
            .peer_certificate()
            .and_then(tls::server_end_point);
        let on_tls = self.stream.tls_info().is_some();
        let (mech, cb) = match (binding, end_point) {
            (ChannelBindingMode::Disable, _) => (SCRAM_SHA_256, ChannelBinding::unsupported()),
            (_, Some(hash)) if server_plus => (
                SCRAM_SHA_256_PLUS,
                ChannelBinding::tls_server_end_point(hash),
            ),
            (ChannelBindingMode::Require, _) => {
                return protocol(if !on_tls {
                    "channel_binding=require: the connection has no TLS, so SCRAM cannot bind to \
                     it (use sslmode=require or stricter); the password was not sent"
                } else if !server_plus {
                    "channel_binding=require: the server does not offer SCRAM-SHA-256-PLUS; the \
                     password was not sent"
                } else {
                    "channel_binding=require: the server's certificate names no hash for \
                     tls-server-end-point (e.g. Ed25519); the password was not sent"
                })
            }
            // TLS on but the server offers no -PLUS: say the client could ("y"), so a server
            // that did offer it and was stripped of it notices.
            (_, Some(_)) => (SCRAM_SHA_256, ChannelBinding::unrequested()),
            (_, None) => (SCRAM_SHA_256, ChannelBinding::unsupported()),
        };
        let mut scram = ScramSha256::new(password, cb);
        frontend::sasl_initial_response(mech, scram.message(), &mut self.out)?;
        self.flush()?;
        for step in [11, 12] {
            let m = self.next()?;
            if m.tag == b'E' {
                return Err(WireError::Db(self.db_error(m)));
            }
            let body = &self.inb.buf[m.start..m.end];
            if m.tag != b'R' || be_i32(body, 0)? != step {
                return protocol("unexpected message during SCRAM authentication");
            }
            let data = body[4..].to_vec();
            if step == 11 {
                scram.update(&data)?;
                frontend::sasl_response(scram.message(), &mut self.out)?;
                self.flush()?;
            } else {
                scram.finish(&data)?;
            }
        }
        Ok(if mech == SCRAM_SHA_256_PLUS {
            "SCRAM-SHA-256-PLUS"
        } else {
            "SCRAM-SHA-256"
        })
    }

    fn flush(&mut self) -> WResult<()> {
        if self.broken {
            self.out.clear();
            return Err(self.lost());
        }
        let r = self.stream.write_all(&self.out);
        self.out.clear();
        r.map_err(|e| self.broke(e))
    }

    /// The next message that is not asynchronous (notices are collected, parameter statuses
    /// and notifications skipped).
    fn next(&mut self) -> WResult<Msg> {
        loop {
            let m = self.read_msg()?;
            match m.tag {
                b'N' => self.notice(m),
                b'S' | b'A' => {}
                _ => return Ok(m),
            }
        }
    }

    #[inline]
    fn read_msg(&mut self) -> WResult<Msg> {
        // Fast path: a whole message is already in the buffer (rows of a result).
        let (pos, end) = (self.inb.pos, self.inb.end);
        if end - pos >= 5 {
            let b = &self.inb.buf[pos..pos + 5];
            let len = i32::from_be_bytes([b[1], b[2], b[3], b[4]]);
            if len >= 4 && end - pos > len as usize {
                let total = 1 + len as usize;
                self.inb.pos = pos + total;
                return Ok(Msg {
                    tag: b[0],
                    start: pos + 5,
                    end: pos + total,
                });
            }
        }
        self.read_msg_slow()
    }

    #[inline(never)]
    fn read_msg_slow(&mut self) -> WResult<Msg> {
        self.fill(5)?;
        let at = self.inb.pos;
        let tag = self.inb.buf[at];
        let len = be_i32(&self.inb.buf[at + 1..at + 5], 0)?;
        if len < 4 {
            self.broken = true;
            return protocol(format!("bad message length {len}"));
        }
        let total = 1 + len as usize;
        self.fill(total)?;
        let at = self.inb.pos;
        self.inb.pos += total;
        Ok(Msg {
            tag,
            start: at + 5,
            end: at + total,
        })
    }

    fn fill(&mut self, n: usize) -> WResult<()> {
        if self.broken {
            return Err(self.lost());
        }
        self.inb
            .fill(&mut self.stream, n)
            .map_err(|e| self.broke(e))
    }

    /// The socket failed (`e`): every later call fails at once, naming it. Out of line and
    /// cold, as [`Wire::lost`] and [`Wire::note_fatal`]: kept inline, the error paths made the
    /// compiler stop inlining `fill`, `flush` and `execute` into a statement's path (+2.6% of
    /// an oltp_read_write transaction's client instructions).
    #[cold]
    #[inline(never)]
    fn broke(&mut self, e: io::Error) -> WireError {
        self.broken = true;
        self.lost_cause.get_or_insert_with(|| e.to_string());
        WireError::Io(e)
    }

    /// The error of a call on a connection that broke earlier, with its cause.
    #[cold]
    #[inline(never)]
    fn lost(&self) -> WireError {
        WireError::Io(netio::lost_because(self.lost_cause.as_deref()))
    }

    /// A FATAL error: the server closes the connection; its words are the cause every later
    /// call names (an idle timeout names the server's setting).
    #[cold]
    #[inline(never)]
    fn note_fatal(&mut self, e: &DbError) {
        if !e.fatal {
            return;
        }
        self.broken = true;
        let cause = match e.code.as_str() {
            "57P05" => format!(
                "the server closed it after it was idle longer than its idle_session_timeout \
                 ({} {}): raise idle_session_timeout (0 turns it off) for ixbench's user",
                e.code, e.message
            ),
            "25P03" => format!(
                "the server closed it after it was idle in a transaction longer than its \
                 idle_in_transaction_session_timeout ({} {}): raise it (0 turns it off) for \
                 ixbench's user",
                e.code, e.message
            ),
            _ => format!("the server closed it ({} {})", e.code, e.message),
        };
        self.lost_cause = Some(cause);
    }

    fn fields(&self, m: Msg) -> impl Iterator<Item = (u8, String)> + '_ {
        self.inb.buf[m.start..m.end]
            .split(|&b| b == 0)
            .filter(|f| !f.is_empty())
            .map(|f| (f[0], String::from_utf8_lossy(&f[1..]).into_owned()))
    }

    fn db_error(&self, m: Msg) -> DbError {
        let mut e = DbError {
            severity: String::new(),
            fatal: false,
            code: String::new(),
            message: String::new(),
            detail: None,
        };
        let mut v_field = None;
        for (k, v) in self.fields(m) {
            match k {
                b'V' => v_field = Some(v),
                b'S' => e.severity = v,
                b'C' => e.code = v,
                b'M' => e.message = v,
                b'D' => e.detail = Some(v),
                _ => {}
            }
        }
        let sev = v_field.as_deref().unwrap_or(&e.severity);
        e.fatal = sev == "FATAL" || sev == "PANIC";
        e
    }

    fn notice(&mut self, m: Msg) {
        let Some((sink, max)) = &self.notices else {
            return;
        };
        let (mut sev, mut msg) = (String::new(), String::new());
        for (k, v) in self.fields(m) {
            match k {
                b'S' => sev = v,
                b'M' => msg = v,
                _ => {}
            }
        }
        if let Ok(mut v) = sink.lock() {
            if v.len() < *max {
                v.push(format!("{sev}: {msg}"));
            }
        }
    }

    /// Read to ReadyForQuery, handing each DataRow body to `row` and counting the rows the
    /// commands report (CommandComplete's last number). The first error is returned after
    /// ReadyForQuery, so the connection stays in step.
    fn read_results(
        &mut self,
        mut row: impl FnMut(&[u8]) -> WResult<()>,
        mut row_desc: impl FnMut(&[u8]),
    ) -> WResult<u64> {
        let mut affected = 0;
        let mut err: Option<WireError> = None;
        loop {
            let m = self.next()?;
            match m.tag {
                b'D' => {
                    if err.is_none() {
                        if let Err(e) = row(&self.inb.buf[m.start..m.end]) {
                            err = Some(e);
                        }
                    }
                }
                b'C' => affected += command_rows(&self.inb.buf[m.start..m.end]),
                b'T' => row_desc(&self.inb.buf[m.start..m.end]),
                b'E' => {
                    let e = self.db_error(m);
                    if e.fatal {
                        self.note_fatal(&e);
                        return Err(WireError::Db(e));
                    }
                    err.get_or_insert(WireError::Db(e));
                }
                b'Z' => {
                    return match err {
                        Some(e) => Err(e),
                        None => Ok(affected),
                    }
                }
                // ParseComplete, BindComplete, CloseComplete, NoData, EmptyQueryResponse,
                // PortalSuspended, ParameterDescription outside prepare.
                b'1' | b'2' | b'3' | b'n' | b'I' | b's' | b't' => {}
                b'G' | b'H' | b'W' => {
                    self.broken = true;
                    return protocol("COPY is not supported on this connection");
                }
                t => {
                    self.broken = true;
                    return protocol(format!("unexpected message {:?}", t as char));
                }
            }
        }
    }

    /// Run `sql` with the simple query protocol (several statements allowed); each row's
    /// values as text (NULL as `None`) go to `row`. Returns the rows the commands report.
    pub fn simple(
        &mut self,
        sql: &str,
        mut row: impl FnMut(&mut dyn Iterator<Item = Option<&[u8]>>) -> WResult<()>,
    ) -> WResult<u64> {
        frontend::query(sql, &mut self.out)?;
        self.flush()?;
        self.read_results(|body| row(&mut Values::new(body)?), |_| {})
    }

    /// The rows of `sql` (simple protocol) as text.
    pub fn simple_rows(&mut self, sql: &str) -> WResult<Vec<Vec<Option<String>>>> {
        let mut out = Vec::new();
        self.simple(sql, |vals| {
            out.push(
                vals.map(|v| v.map(|b| String::from_utf8_lossy(b).into_owned()))
                    .collect(),
            );
            Ok(())
        })?;
        Ok(out)
    }

    /// Prepare `sql` as a named statement and learn its parameter and column types.
    pub fn prepare(&mut self, sql: &str) -> WResult<Prepared> {
        let name = format!("ixb{}", self.next_name);
        self.next_name += 1;
        frontend::parse(&name, sql, std::iter::empty(), &mut self.out)?;
        frontend::describe(b'S', &name, &mut self.out)?;
        frontend::sync(&mut self.out);
        self.flush()?;
        let mut params = Vec::new();
        let mut columns = Vec::new();
        let mut err = None;
        loop {
            let m = self.next()?;
            let body = &self.inb.buf[m.start..m.end];
            match m.tag {
                b'1' | b'n' => {}
                b't' => {
                    let n = be_i16(body, 0)? as usize;
                    params = (0..n)
                        .map(|i| be_i32(body, 2 + 4 * i).map(|v| v as u32))
                        .collect::<WResult<_>>()?;
                }
                b'T' => {
                    columns = column_types(body)?;
                }
                b'E' => {
                    let e = self.db_error(m);
                    self.note_fatal(&e);
                    err.get_or_insert(WireError::Db(e));
                }
                b'Z' => break,
                t => {
                    self.broken = true;
                    return protocol(format!("unexpected message {:?} to Parse", t as char));
                }
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(Prepared {
                name,
                params,
                columns,
            }),
        }
    }

    /// Bind `params` (binary) to `st`, execute it and read its answer: each row's values
    /// (binary, NULL as `None`) go to `row`. Returns the rows CommandComplete reports.
    pub fn execute(
        &mut self,
        st: &Prepared,
        params: &[Value],
        mut row: impl FnMut(&mut Values) -> WResult<()>,
    ) -> WResult<u64> {
        if params.len() != st.params.len() {
            return protocol(format!(
                "the statement takes {} parameters, {} given",
                st.params.len(),
                params.len()
            ));
        }
        if let Err(e) = self.bind(st, params) {
            self.out.clear();
            return Err(e);
        }
        // Execute the unnamed portal, all rows; then Sync.
        self.out
            .extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0]);
        self.out.extend_from_slice(&[b'S', 0, 0, 0, 4]);
        self.flush()?;
        self.read_results(|body| row(&mut Values::new(body)?), |_| {})
    }

    fn bind(&mut self, st: &Prepared, params: &[Value]) -> WResult<()> {
        let out = &mut self.out;
        let at = out.len();
        out.extend_from_slice(&[b'B', 0, 0, 0, 0, 0]); // length patched below; portal ""
        out.extend_from_slice(st.name.as_bytes());
        out.extend_from_slice(&[0, 0, 1, 0, 1]); // one format code for all: binary
        out.extend_from_slice(&(params.len() as i16).to_be_bytes());
        for (v, &ty) in params.iter().zip(&st.params) {
            encode(v, ty, out)?;
        }
        out.extend_from_slice(&[0, 1, 0, 1]); // results: binary
        let len = (out.len() - at - 1) as i32;
        out[at + 1..at + 5].copy_from_slice(&len.to_be_bytes());
        Ok(())
    }

    /// Say goodbye (best effort).
    pub fn terminate(&mut self) {
        if !self.broken {
            frontend::terminate(&mut self.out);
            let _ = self.flush();
        }
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// Encode one parameter in binary as a `ty` value: length, then bytes (-1 for NULL).
fn encode(v: &Value, ty: u32, out: &mut BytesMut) -> WResult<()> {
    fn put(out: &mut BytesMut, b: &[u8]) {
        out.extend_from_slice(&(b.len() as i32).to_be_bytes());
        out.extend_from_slice(b);
    }
    let narrow = |v: i64| WireError::Protocol(format!("{v} does not fit the parameter's type"));
    match (*v, ty) {
        (Value::Null, _) => out.extend_from_slice(&(-1i32).to_be_bytes()),
        (Value::Int(v), oid::INT8) => put(out, &v.to_be_bytes()),
        (Value::Int(v), oid::INT4) => {
            put(out, &i32::try_from(v).map_err(|_| narrow(v))?.to_be_bytes())
        }
        (Value::Int(v), oid::INT2) => {
            put(out, &i16::try_from(v).map_err(|_| narrow(v))?.to_be_bytes())
        }
        (Value::Int(v), oid::FLOAT8) => put(out, &(v as f64).to_be_bytes()),
        (Value::Float(v), oid::FLOAT8) => put(out, &v.to_be_bytes()),
        (Value::Float(v), oid::FLOAT4) => put(out, &(v as f32).to_be_bytes()),
        (Value::Timestamp(secs), oid::TIMESTAMP | oid::TIMESTAMPTZ) => {
            let us = secs
                .saturating_sub(PG_EPOCH_UNIX_SECS)
                .saturating_mul(1_000_000);
            put(out, &us.to_be_bytes())
        }
        (Value::Text(s), oid::TEXT | oid::VARCHAR | oid::BPCHAR) => put(out, s.as_bytes()),
        (v, ty) => {
            return protocol(format!(
                "cannot send {v:?} as a parameter of type {}",
                type_name(ty)
            ))
        }
    }
    Ok(())
}

/// A type's name for messages.
pub fn type_name(ty: u32) -> String {
    match ty {
        oid::INT8 => "int8".into(),
        oid::INT2 => "int2".into(),
        oid::INT4 => "int4".into(),
        oid::TEXT => "text".into(),
        oid::FLOAT4 => "float4".into(),
        oid::FLOAT8 => "float8".into(),
        oid::BPCHAR => "bpchar".into(),
        oid::VARCHAR => "varchar".into(),
        oid::TIMESTAMP => "timestamp".into(),
        oid::TIMESTAMPTZ => "timestamptz".into(),
        oid::NUMERIC => "numeric".into(),
        o => format!("oid {o}"),
    }
}

/// An integer value of a binary column of type `ty` (int2, int4, int8).
pub fn decode_int(raw: &[u8], ty: u32) -> WResult<i64> {
    let bad = || WireError::Protocol(format!("bad {} value", type_name(ty)));
    match ty {
        oid::INT2 => Ok(i16::from_be_bytes(raw.try_into().map_err(|_| bad())?) as i64),
        oid::INT4 => Ok(i32::from_be_bytes(raw.try_into().map_err(|_| bad())?) as i64),
        oid::INT8 => Ok(i64::from_be_bytes(raw.try_into().map_err(|_| bad())?)),
        oid::NUMERIC => protocol("a NUMERIC result: cast it to bigint in the query"),
        t => protocol(format!("{} is not an integer type", type_name(t))),
    }
}

/// The values of one DataRow, in order, read in place.
pub struct Values<'a> {
    body: &'a [u8],
    at: usize,
    left: usize,
}

impl<'a> Values<'a> {
    fn new(body: &'a [u8]) -> WResult<Values<'a>> {
        Ok(Values {
            left: be_i16(body, 0)? as usize,
            body,
            at: 2,
        })
    }
}

impl<'a> Iterator for Values<'a> {
    type Item = Option<&'a [u8]>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let len = be_i32(self.body, self.at).ok()?;
        self.at += 4;
        if len < 0 {
            return Some(None);
        }
        let v = self.body.get(self.at..self.at + len as usize)?;
        self.at += len as usize;
        Some(Some(v))
    }
}

/// The type OIDs of a RowDescription's columns.
fn column_types(body: &[u8]) -> WResult<Vec<u32>> {
    let n = be_i16(body, 0)? as usize;
    let mut at = 2;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let name_end = body[at..]
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| WireError::Protocol("bad RowDescription".into()))?;
        at += name_end + 1;
        // table oid (4), column number (2), type oid (4), size (2), modifier (4), format (2)
        v.push(be_i32(body, at + 6)? as u32);
        at += 18;
    }
    Ok(v)
}

/// The row count at the end of a CommandComplete tag (`INSERT 0 5`, `UPDATE 3`, `SELECT 10`);
/// 0 for tags without one (`BEGIN`, `CREATE INDEX`).
fn command_rows(body: &[u8]) -> u64 {
    let tag = body.strip_suffix(&[0]).unwrap_or(body);
    let last = tag.rsplit(|&b| b == b' ').next().unwrap_or_default();
    if last.is_empty() || !last.iter().all(u8::is_ascii_digit) || last.len() == tag.len() {
        return 0;
    }
    std::str::from_utf8(last)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn be_i32(b: &[u8], at: usize) -> WResult<i32> {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map(i32::from_be_bytes)
        .ok_or_else(|| WireError::Protocol("short message".into()))
}

fn be_i16(b: &[u8], at: usize) -> WResult<i16> {
    b.get(at..at + 2)
        .and_then(|s| s.try_into().ok())
        .map(i16::from_be_bytes)
        .ok_or_else(|| WireError::Protocol("short message".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_parameters_come_off_the_url() {
        let (rest, t) =
            split_tls_params("postgres://u@h:5/db?sslmode=require&application_name=x&sslsni=0")
                .unwrap();
        assert_eq!(rest, "postgres://u@h:5/db?application_name=x");
        assert_eq!(t.mode, SslMode::Require);
        assert!(t.client.as_ref().is_some_and(|c| !c.enable_sni));
        let (rest, t) = split_tls_params("postgres://u@h/db").unwrap();
        assert_eq!(rest, "postgres://u@h/db");
        assert_eq!(t.mode, SslMode::Prefer);
        let (_, t) = split_tls_params("postgres://u@h/db?sslmode=disable").unwrap();
        assert!(t.client.is_none());
        for (url, want) in [
            ("postgres://u@h/db?sslmode=verify-full", "sslrootcert"),
            (
                "postgres://u@h/db?sslmode=verify-ca&sslrootcert=/nonexistent.crt",
                "/nonexistent.crt",
            ),
            ("postgres://u@h/db?sslmode=sometimes", "sslmode=sometimes"),
            (
                "postgres://u@h/db?sslrootcert=system&sslmode=require",
                "verify-full",
            ),
            ("postgres://u@h/db?sslcrl=x", "sslcrl"),
            ("postgres://u@h/db?sslnegotiation=direct", "direct"),
            (
                "postgres://u@h/db?sslmode=require&sslcert=/x.crt&sslkey=/nonexistent.key",
                "/x.crt",
            ),
        ] {
            let e = split_tls_params(url)
                .err()
                .unwrap_or_else(|| panic!("{url} accepted"));
            assert!(e.contains(want), "{url}: {e}");
            assert!(!e.contains('\n') && !e.contains("  "), "{e}");
        }
    }

    #[test]
    fn command_tags() {
        assert_eq!(command_rows(b"INSERT 0 5\0"), 5);
        assert_eq!(command_rows(b"UPDATE 3\0"), 3);
        assert_eq!(command_rows(b"SELECT 10\0"), 10);
        assert_eq!(command_rows(b"BEGIN\0"), 0);
        assert_eq!(command_rows(b"CREATE INDEX\0"), 0);
    }

    #[test]
    fn parameters_encode_by_type() {
        let mut b = BytesMut::new();
        encode(&Value::Int(7), oid::INT4, &mut b).unwrap();
        assert_eq!(&b[..], &[0, 0, 0, 4, 0, 0, 0, 7]);
        b.clear();
        encode(&Value::Null, oid::INT4, &mut b).unwrap();
        assert_eq!(&b[..], &[255, 255, 255, 255]);
        b.clear();
        encode(
            &Value::Timestamp(PG_EPOCH_UNIX_SECS + 1),
            oid::TIMESTAMP,
            &mut b,
        )
        .unwrap();
        assert_eq!(&b[4..], &1_000_000i64.to_be_bytes());
        assert!(encode(&Value::Int(1 << 40), oid::INT4, &mut b).is_err());
        let e = encode(&Value::Text("x"), oid::INT8, &mut b).unwrap_err();
        assert!(e.to_string().contains("int8"), "{e}");
    }

    #[test]
    fn data_rows_read_in_place() {
        // two columns: "ab" and NULL
        let body = [0, 2, 0, 0, 0, 2, b'a', b'b', 255, 255, 255, 255];
        let v: Vec<_> = Values::new(&body).unwrap().collect();
        assert_eq!(v, vec![Some(&b"ab"[..]), None]);
        assert_eq!(decode_int(&7i32.to_be_bytes(), oid::INT4).unwrap(), 7);
        assert!(decode_int(&[0; 8], oid::NUMERIC).is_err());
    }
}
