//! A blocking MySQL/MariaDB client (client/server protocol 4.1) for the workload's hot path:
//! one socket, one buffer each way.
//!
//! Why not the `mysql` crate: it decodes every value of every row into an owned `Value`
//! (a `Vec<u8>` per string), takes parameters by value, and looks each statement up in a
//! cache by its SQL; in `ixbench oltp` that made ixbench's user CPU per transaction 1.4x
//! sysbench's (libmysqlclient). Here a statement is one `write` of COM_STMT_EXECUTE with the
//! parameters encoded straight from the workload's [`Value`]s, and rows are walked in the read
//! buffer without allocating. The handshake, the password scrambles (mysql_native_password,
//! caching_sha2_password with its RSA exchange, MariaDB's client_ed25519 signature,
//! cleartext) come from `mysql_common`, the codec the `mysql` crate is built on; ixbench's
//! own connections (server start-up, clusters, Galera's watch) go through this client too.
//!
//! TLS (rustls, see [`super::tls`]) with the MySQL client's `--ssl-mode` meanings:
//! `DISABLED`, `PREFERRED` (the default: TLS when the server offers it, not over a Unix
//! socket), `REQUIRED` (TLS, the certificate not checked), `VERIFY_CA` (the chain; the
//! default when `ssl-ca` is given), `VERIFY_IDENTITY` (the chain and the host name); roots
//! from `ssl-ca`, else the system's; a client certificate from `ssl-cert`/`ssl-key`. A
//! password is sent as it is (mysql_clear_password, caching_sha2_password's full path) only
//! over TLS or a Unix socket; caching_sha2_password's full path uses the server's RSA key
//! otherwise (checked first: a server without keys, a malformed key or a password too long for
//! the key is a one-line error, the password not sent), and mysql_clear_password is refused.
//!
//! No compression.

use std::io::{self, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mysql_common::collations::CollationId;
use mysql_common::constants::CapabilityFlags;
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthPlugin, HandshakePacket, HandshakeResponse, SslRequest};
use mysql_common::proto::{MyDeserialize, MySerialize};
use rustls::ClientConfig;

use super::netio::{self, InBuf, Stream, Transport};
use super::tls;
use super::Value;

/// Where and as whom to connect.
#[derive(Clone)]
pub struct Config {
    pub host: String,
    pub port: u16,
    /// A Unix socket path: used instead of host and port when set.
    pub socket: Option<String>,
    pub user: String,
    pub password: Option<String>,
    pub database: String,
    /// Statements run right after connecting (`SET SESSION ...`).
    pub init: Vec<String>,
    pub connect_timeout: Duration,
    /// TLS of the connection.
    pub tls: Tls,
}

/// The MySQL client's `--ssl-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disabled,
    Preferred,
    Required,
    VerifyCa,
    VerifyIdentity,
}

impl SslMode {
    fn parse(s: &str) -> Option<SslMode> {
        Some(match s.to_ascii_uppercase().as_str() {
            "DISABLED" => SslMode::Disabled,
            "PREFERRED" => SslMode::Preferred,
            "REQUIRED" => SslMode::Required,
            "VERIFY_CA" => SslMode::VerifyCa,
            "VERIFY_IDENTITY" => SslMode::VerifyIdentity,
            _ => return None,
        })
    }

    /// The name as the MySQL client spells it.
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disabled => "DISABLED",
            SslMode::Preferred => "PREFERRED",
            SslMode::Required => "REQUIRED",
            SslMode::VerifyCa => "VERIFY_CA",
            SslMode::VerifyIdentity => "VERIFY_IDENTITY",
        }
    }
}

/// The TLS parameters of a `mysql://` URL as given: `ssl-mode`, `ssl-ca`, `ssl-cert`,
/// `ssl-key` (or with `_`, as in option files).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsParams {
    mode: Option<SslMode>,
    ca: Option<PathBuf>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
}

impl TlsParams {
    /// Take the URL parameter `key=value` (already percent-decoded) when it is a TLS one:
    /// `Ok(true)` when taken, `Ok(false)` when it is another parameter.
    pub fn take(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let path = |v: &str| (!v.is_empty()).then(|| PathBuf::from(v));
        match key.replace('_', "-").as_str() {
            "ssl-mode" => {
                self.mode = Some(SslMode::parse(value).ok_or_else(|| {
                    format!(
                        "ssl-mode={value}: expected DISABLED, PREFERRED, REQUIRED, VERIFY_CA or \
                         VERIFY_IDENTITY"
                    )
                })?)
            }
            "ssl-ca" => self.ca = path(value),
            "ssl-cert" => self.cert = path(value),
            "ssl-key" => self.key = path(value),
            "ssl-capath" | "ssl-crl" | "ssl-crlpath" | "ssl-cipher" | "tls-version" => {
                return Err(format!(
                    "{key} is not supported by ixbench's MySQL client (it takes ssl-mode, ssl-ca, \
                     ssl-cert, ssl-key)"
                ))
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The mode: as given, else `VERIFY_CA` when a CA is given (as the MySQL client), else
    /// `PREFERRED` (the MySQL client's default).
    pub fn mode(&self) -> SslMode {
        self.mode.unwrap_or(if self.ca.is_some() {
            SslMode::VerifyCa
        } else {
            SslMode::Preferred
        })
    }

    /// What connections need (files read now). `VERIFY_CA` and `VERIFY_IDENTITY` without
    /// `ssl-ca` trust the system's roots.
    pub fn build(&self) -> Result<Tls, String> {
        let mode = self.mode();
        let verify = match mode {
            SslMode::VerifyIdentity => tls::Verify::Full,
            SslMode::VerifyCa => tls::Verify::Chain,
            _ => tls::Verify::Nothing,
        };
        let client_cert = match (&self.cert, &self.key) {
            (Some(c), Some(k)) => Some((c.clone(), k.clone())),
            (None, None) => None,
            (Some(_), None) => return Err("ssl-cert needs ssl-key (its private key)".into()),
            (None, Some(_)) => return Err("ssl-key needs ssl-cert (its certificate)".into()),
        };
        let client = if mode == SslMode::Disabled {
            None
        } else {
            let settings = tls::Settings {
                verify,
                roots: Some(match &self.ca {
                    Some(f) => tls::Roots::File(f.clone()),
                    None => tls::Roots::System,
                }),
                client_cert,
                sni: true,
            };
            Some(settings.client_config(("ssl-ca", "ssl-cert", "ssl-key"))?)
        };
        Ok(Tls {
            mode,
            verify,
            client,
        })
    }
}

/// TLS as the connections of one target use it (see [`TlsParams::build`]).
#[derive(Clone)]
pub struct Tls {
    pub mode: SslMode,
    /// What is checked of the server's certificate.
    pub verify: tls::Verify,
    client: Option<Arc<ClientConfig>>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Tls(ssl-mode={}, verify {})",
            self.mode.name(),
            self.verify.name()
        )
    }
}

/// Why a call failed.
#[derive(Debug)]
pub enum MyWireError {
    /// The server said no (an ERR packet).
    Server {
        code: u16,
        state: String,
        message: String,
    },
    /// The socket failed or the server closed it: the connection is gone.
    Io(io::Error),
    /// Something this client does not expect or cannot send; the text says what.
    Protocol(String),
}

impl std::fmt::Display for MyWireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MyWireError::Server {
                code,
                state,
                message,
            } => write!(f, "ERROR {code} ({state}): {message}"),
            MyWireError::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                f.write_str("connection closed by the server")
            }
            MyWireError::Io(e) => write!(f, "{e}"),
            MyWireError::Protocol(s) => write!(f, "protocol error: {s}"),
        }
    }
}

impl std::error::Error for MyWireError {}

impl From<io::Error> for MyWireError {
    fn from(e: io::Error) -> Self {
        MyWireError::Io(e)
    }
}

type MResult<T> = std::result::Result<T, MyWireError>;

fn protocol<T>(what: impl Into<String>) -> MResult<T> {
    Err(MyWireError::Protocol(what.into()))
}

/// Column types (`enum_field_types`) whose binary form has a fixed length.
pub mod ty {
    pub const DECIMAL: u8 = 0x00;
    pub const TINY: u8 = 0x01;
    pub const SHORT: u8 = 0x02;
    pub const LONG: u8 = 0x03;
    pub const FLOAT: u8 = 0x04;
    pub const DOUBLE: u8 = 0x05;
    pub const NULL: u8 = 0x06;
    pub const TIMESTAMP: u8 = 0x07;
    pub const LONGLONG: u8 = 0x08;
    pub const INT24: u8 = 0x09;
    pub const DATE: u8 = 0x0a;
    pub const TIME: u8 = 0x0b;
    pub const DATETIME: u8 = 0x0c;
    pub const YEAR: u8 = 0x0d;
    pub const NEWDATE: u8 = 0x0e;
    pub const NEWDECIMAL: u8 = 0xf6;
    pub const VAR_STRING: u8 = 0xfd;
}

const UNSIGNED_FLAG: u16 = 0x20;
const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;
const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// A column of a result: its name (kept only where asked), type and flags.
#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub ty: u8,
    pub flags: u16,
}

/// A statement prepared on the server.
#[derive(Debug, Clone)]
pub struct Prepared {
    id: u32,
    /// How many `?` it takes.
    pub params: usize,
    /// Its result columns (empty for statements without rows).
    pub columns: Vec<Column>,
}

/// What a text query returned: each result set's columns and rows, and the affected rows.
#[derive(Debug, Default)]
pub struct ResultSet {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
    pub affected: u64,
}

/// One connection.
pub struct MyWire {
    stream: Stream,
    out: Vec<u8>,
    inb: InBuf,
    seq: u8,
    broken: bool,
    /// What broke it, when known (a server that closed an idle connection: its wait_timeout).
    lost_cause: Option<String>,
    /// When the last answer was read, and how long the connection had been idle before the
    /// last request (on the coarse clock: two reads per round trip of the precise one were 3%
    /// of an oltp_read_write transaction's client instructions).
    last_read: crate::deadline::CoarseSince,
    idle_before: std::time::Duration,
    /// The server's connection id (for KILL QUERY).
    pub connection_id: u32,
    /// The version string of the handshake (`5.5.5-10.11.6-MariaDB-...` on MariaDB).
    pub server_version: String,
    /// Columns of the last binary result, reused between executions.
    cols: Vec<(u8, u16)>,
    /// The last timestamp parameter: (Unix seconds, DATETIME bytes).
    ts: (i64, [u8; 7]),
    transport: Transport,
}

/// A packet: where its payload is in the read buffer.
#[derive(Clone, Copy)]
struct Pkt {
    start: usize,
    end: usize,
}

impl MyWire {
    /// Connect, authenticate and run the init statements.
    pub fn connect(cfg: &Config) -> MResult<MyWire> {
        let stream =
            match &cfg.socket {
                Some(path) => Stream::Unix(UnixStream::connect(path).map_err(|e| {
                    MyWireError::Io(io::Error::new(e.kind(), format!("{path}: {e}")))
                })?),
                None => netio::open_tcp(&cfg.host, cfg.port, cfg.connect_timeout)?.0,
            };
        stream.set_timeouts(Some(cfg.connect_timeout))?;
        let mut w = match Self::handshake(stream, cfg) {
            Ok(w) => w,
            Err(MyWireError::Io(e)) => {
                return Err(match netio::handshake_timeout(&e, cfg.connect_timeout) {
                    Some(m) => MyWireError::Protocol(m),
                    None => MyWireError::Io(e),
                })
            }
            Err(e) => return Err(e),
        };
        w.stream.set_timeouts(None)?;
        for sql in &cfg.init {
            w.query_drop(sql)?;
        }
        Ok(w)
    }

    /// How this connection reached its server (TLS, its version and cipher, the log-in).
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// Bound each read and write on the socket from now on (`None`: wait as long as it takes).
    pub fn set_io_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        self.stream.set_timeouts(t)
    }

    /// The server's greeting, TLS when `cfg.tls` says so (the SSL request, then the TLS
    /// handshake), then the log-in.
    fn handshake(mut stream: Stream, cfg: &Config) -> MResult<MyWire> {
        // The greeting, read before the connection is built: TLS may wrap the stream next.
        let mut inb = InBuf::new();
        inb.fill(&mut stream, 4)?;
        let len = header_len(&inb.buf[inb.pos..]);
        inb.fill(&mut stream, 4 + len)?;
        let greeting = inb.buf[inb.pos + 4..inb.pos + 4 + len].to_vec();
        inb.pos += 4 + len;
        if greeting.first() == Some(&0xFF) {
            return Err(server_error(&greeting));
        }
        if inb.pos != inb.end {
            return protocol("the server sent more than its greeting before the client spoke");
        }
        let hs = HandshakePacket::deserialize((), &mut ParseBuf(&greeting))?;
        let version = hs.server_version_parsed().unwrap_or((5, 7, 0));
        let wanted = CapabilityFlags::CLIENT_PROTOCOL_41
            | CapabilityFlags::CLIENT_SECURE_CONNECTION
            | CapabilityFlags::CLIENT_LONG_PASSWORD
            | CapabilityFlags::CLIENT_LONG_FLAG
            | CapabilityFlags::CLIENT_TRANSACTIONS
            | CapabilityFlags::CLIENT_MULTI_STATEMENTS
            | CapabilityFlags::CLIENT_MULTI_RESULTS
            | CapabilityFlags::CLIENT_PS_MULTI_RESULTS
            | CapabilityFlags::CLIENT_PLUGIN_AUTH
            | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
        let mut caps = wanted & hs.capabilities();
        if !caps.contains(CapabilityFlags::CLIENT_PROTOCOL_41) {
            return protocol("the server does not speak protocol 4.1");
        }
        // As the handshake response will say (HandshakeResponse sets it): the SSL request must
        // carry the same flags, since a server may keep the first ones it reads (MariaDB then
        // ignores the database of the response).
        if !cfg.database.is_empty() {
            caps |= CapabilityFlags::CLIENT_CONNECT_WITH_DB;
        }
        let tls = &cfg.tls;
        let where_ = match &cfg.socket {
            Some(s) => s.clone(),
            None => format!("{}:{}", cfg.host, cfg.port),
        };
        let server_tls = hs.capabilities().contains(CapabilityFlags::CLIENT_SSL);
        let use_tls = match tls.mode {
            SslMode::Disabled => false,
            // As the MySQL client: not over a Unix socket (already private) unless required.
            SslMode::Preferred => server_tls && !stream.is_unix(),
            m if !server_tls => {
                return protocol(format!(
                    "ssl-mode={}: the server at {where_} does not offer TLS (its have_ssl is \
                     not YES: it needs ssl_cert and ssl_key); use ssl-mode=PREFERRED or \
                     DISABLED to connect in clear",
                    m.name()
                ))
            }
            _ => true,
        };
        let mut seq = 1u8;
        if use_tls {
            let client = tls.client.as_ref().ok_or_else(|| {
                MyWireError::Protocol("TLS wanted without a TLS configuration".into())
            })?;
            caps |= CapabilityFlags::CLIENT_SSL;
            let collation = if version >= (5, 5, 3) {
                CollationId::UTF8MB4_GENERAL_CI as u8
            } else {
                CollationId::UTF8MB3_GENERAL_CI as u8
            };
            let mut req = Vec::new();
            SslRequest::new(caps, MAX_PAYLOAD as u32, collation).serialize(&mut req);
            let mut pkt = (req.len() as u32).to_le_bytes()[..3].to_vec();
            pkt.push(seq);
            pkt.extend_from_slice(&req);
            stream.write_all(&pkt)?;
            seq += 1;
            let host = if cfg.socket.is_some() {
                "localhost"
            } else {
                cfg.host.as_str()
            };
            stream = match netio::start_tls(stream, client, host) {
                Ok(s) => s,
                Err(e) if netio::handshake_timeout(&e, Duration::ZERO).is_some() => {
                    return Err(e.into())
                }
                Err(e) => {
                    return protocol(format!(
                        "TLS with the server at {where_}: {}",
                        tls::describe(&e, "ssl-ca", "ssl-cert/ssl-key")
                    ))
                }
            };
        }
        let mut w = MyWire {
            stream,
            out: Vec::with_capacity(1024),
            inb,
            seq,
            broken: false,
            lost_cause: None,
            last_read: crate::deadline::CoarseSince::start(),
            idle_before: std::time::Duration::ZERO,
            connection_id: hs.connection_id(),
            server_version: String::from_utf8_lossy(hs.server_version_ref()).into_owned(),
            cols: Vec::new(),
            ts: (i64::MIN, [0; 7]),
            transport: Transport::default(),
        };
        let auth = match w.log_in(cfg, &hs, version, caps) {
            Ok(a) => a,
            // MariaDB refuses a clear connection to a server that requires TLS
            // (require_secure_transport) with "Access denied", as if the password were wrong.
            Err(MyWireError::Server {
                code,
                state,
                mut message,
            }) if !use_tls && server_tls && code == 1045 => {
                message.push_str(
                    " (this connection has no TLS, which the server offers: if it requires TLS, \
                     use ssl-mode=REQUIRED or stricter)",
                );
                return Err(MyWireError::Server {
                    code,
                    state,
                    message,
                });
            }
            Err(e) => return Err(e),
        };
        w.transport = w.stream.transport(
            format!("ssl-mode={}", tls.mode.name()),
            tls.verify.name(),
            &auth,
        );
        Ok(w)
    }

    /// The handshake response and whatever the authentication plugins ask after it; returns
    /// the plugin that logged in.
    fn log_in(
        &mut self,
        cfg: &Config,
        hs: &HandshakePacket,
        version: (u16, u16, u16),
        caps: CapabilityFlags,
    ) -> MResult<String> {
        let mut nonce = hs.nonce();
        let mut plugin = hs
            .auth_plugin()
            .map(AuthPlugin::into_owned)
            .unwrap_or(AuthPlugin::MysqlNativePassword);
        let pass = cfg.password.as_deref();
        let secure = self.stream.is_secure();
        let data = auth_data(&plugin, pass, &nonce, secure)?;
        let resp = HandshakeResponse::new(
            Some(data.as_slice()),
            version,
            Some(cfg.user.as_bytes()),
            (!cfg.database.is_empty()).then_some(cfg.database.as_bytes()),
            Some(plugin.clone()),
            caps,
            None,
            MAX_PAYLOAD as u32,
        );
        let mut payload = Vec::new();
        resp.serialize(&mut payload);
        self.send(&payload)?;
        let mut sha2_path = "";
        loop {
            let p = self.read_packet()?;
            let body = &self.inb.buf[p.start..p.end];
            match body.first() {
                Some(0x00) => {
                    let name = String::from_utf8_lossy(plugin.as_bytes()).into_owned();
                    return Ok(if sha2_path.is_empty() {
                        name
                    } else {
                        format!("{name} ({sha2_path})")
                    });
                }
                Some(0xFF) => return Err(self.server_error(p)),
                Some(0xFE) => {
                    // AuthSwitchRequest: plugin name, NUL, the new plugin's data.
                    let rest = &body[1..];
                    let name_end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                    let name = rest[..name_end].to_vec();
                    let mut n = rest.get(name_end + 1..).unwrap_or_default().to_vec();
                    plugin = AuthPlugin::deserialize((), &mut ParseBuf(&name))?.into_owned();
                    // A scramble ends with a NUL; ed25519's 32-byte nonce is raw bytes.
                    if n.last() == Some(&0) && !matches!(plugin, AuthPlugin::Ed25519) {
                        n.pop();
                    }
                    nonce = n;
                    let data = auth_data(&plugin, pass, &nonce, secure)?;
                    self.send(&data)?;
                }
                Some(0x01) => {
                    // AuthMoreData (caching_sha2_password): 3 = fast auth done, 4 = full auth.
                    match body.get(1) {
                        Some(3) => sha2_path = "fast path",
                        Some(4) => {
                            let mut pw = pass.unwrap_or_default().as_bytes().to_vec();
                            pw.push(0);
                            if secure {
                                // TLS or a Unix socket: the password as it is.
                                self.send(&pw)?;
                                sha2_path = "full path, password over TLS or socket";
                            } else {
                                self.send(&[2])?; // request the server's public key
                                let k = self.read_packet()?;
                                let body = &self.inb.buf[k.start..k.end];
                                // A server without RSA keys answers with an error (MariaDB:
                                // a plain "Access denied"). The key comes as AuthMoreData
                                // (0x01, then the PEM).
                                if body.first() == Some(&0xFF) {
                                    let e = self.server_error(k);
                                    return protocol(format!(
                                        "caching_sha2_password on a connection without TLS \
                                         needs the server's RSA public key, and the server \
                                         answered the request for it with {e} (it may have no \
                                         RSA keys: use ssl-mode=REQUIRED or stricter, or a Unix \
                                         socket)"
                                    ));
                                }
                                let key = body.strip_prefix(&[1]).unwrap_or(body);
                                for (i, b) in pw.iter_mut().enumerate() {
                                    *b ^= nonce[i % nonce.len().max(1)];
                                }
                                let enc = match rsa_encrypt(&pw, key) {
                                    Ok(e) => e,
                                    Err(why) => {
                                        return protocol(format!(
                                            "caching_sha2_password on a connection without TLS \
                                             needs the server's RSA public key: {why}, so the \
                                             password was not sent (use ssl-mode=REQUIRED or \
                                             stricter, or a Unix socket)"
                                        ))
                                    }
                                };
                                self.send(&enc)?;
                                sha2_path = "full path, RSA";
                            }
                        }
                        _ => return protocol("unexpected authentication data"),
                    }
                }
                _ => return protocol("unexpected packet during authentication"),
            }
        }
    }

    /// The socket failed: every later call fails at once, naming why. Out of line and cold,
    /// as [`MyWire::lost`], so the statement's path stays small enough to inline.
    #[cold]
    #[inline(never)]
    fn fail<T>(&mut self, e: io::Error) -> MResult<T> {
        self.broken = true;
        let closed = matches!(
            e.kind(),
            io::ErrorKind::UnexpectedEof
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::BrokenPipe
        );
        let idle = self.idle_before.as_secs_f64();
        // The server closes a connection idle past its wait_timeout without a word (MySQL
        // 8.0.24+ sends error 4031 first, which says so itself).
        let cause = if closed && idle >= 1.0 {
            format!(
                "the server closed it after it had been idle {idle:.0} s: its wait_timeout is \
                 {idle:.0} s or less (MariaDB and MySQL close a connection idle longer; raise \
                 wait_timeout for ixbench's user), or the server restarted ({e})"
            )
        } else {
            e.to_string()
        };
        self.lost_cause.get_or_insert(cause);
        Err(MyWireError::Io(e))
    }

    #[cold]
    #[inline(never)]
    fn lost(&self) -> MyWireError {
        MyWireError::Io(netio::lost_because(self.lost_cause.as_deref()))
    }

    /// Send one payload as the next packet(s) of the exchange.
    fn send(&mut self, payload: &[u8]) -> MResult<()> {
        self.out.clear();
        let mut chunks = payload.chunks(MAX_PAYLOAD).peekable();
        if payload.is_empty() {
            self.out.extend_from_slice(&[0, 0, 0, self.seq]);
            self.seq = self.seq.wrapping_add(1);
        }
        while let Some(c) = chunks.next() {
            let n = c.len() as u32;
            self.out.extend_from_slice(&n.to_le_bytes()[..3]);
            self.out.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            self.out.extend_from_slice(c);
            if chunks.peek().is_none() && c.len() == MAX_PAYLOAD {
                self.out.extend_from_slice(&[0, 0, 0, self.seq]);
                self.seq = self.seq.wrapping_add(1);
            }
        }
        self.write_out()
    }

    fn write_out(&mut self) -> MResult<()> {
        if self.broken {
            return Err(self.lost());
        }
        self.idle_before = self.last_read.so_far();
        if let Err(e) = self.stream.write_all(&self.out) {
            return self.fail(e);
        }
        Ok(())
    }

    /// Start a command: sequence 0, payload built in `out` after a 4-byte header.
    fn begin_command(&mut self, cmd: u8) {
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, 0, cmd]);
        self.seq = 0;
    }

    /// Finish the command built in `out` and send it (split when it is 16 MiB or more).
    fn send_command(&mut self) -> MResult<()> {
        let len = self.out.len() - 4;
        if len < MAX_PAYLOAD {
            self.out[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.seq = 1;
            return self.write_out();
        }
        let payload = self.out[4..].to_vec();
        self.seq = 0;
        self.send(&payload)
    }

    /// The next packet (several joined when the server split a 16 MiB payload).
    #[inline]
    fn read_packet(&mut self) -> MResult<Pkt> {
        // Fast path: a whole packet is already in the buffer (rows of a result set).
        let (pos, end) = (self.inb.pos, self.inb.end);
        if end - pos >= 4 {
            let len = header_len(&self.inb.buf[pos..pos + 4]);
            if len < MAX_PAYLOAD && end - pos >= 4 + len {
                self.seq = self.inb.buf[pos + 3].wrapping_add(1);
                self.inb.pos = pos + 4 + len;
                return Ok(Pkt {
                    start: pos + 4,
                    end: pos + 4 + len,
                });
            }
        }
        self.read_packet_slow()
    }

    #[inline(never)]
    fn read_packet_slow(&mut self) -> MResult<Pkt> {
        self.fill(4)?;
        let mut last = header_len(&self.inb.buf[self.inb.pos..]);
        self.seq = self.inb.buf[self.inb.pos + 3].wrapping_add(1);
        self.fill(4 + last)?;
        // The payload so far is inb[pos + 4 .. pos + 4 + len] (pos may move in fill).
        let mut len = last;
        while last == MAX_PAYLOAD {
            self.fill(4 + len + 4)?;
            let h = self.inb.pos + 4 + len;
            last = header_len(&self.inb.buf[h..]);
            self.seq = self.inb.buf[h + 3].wrapping_add(1);
            self.fill(4 + len + 4 + last)?;
            // Drop the next packet's header so its payload follows this one's.
            let h = self.inb.pos + 4 + len;
            self.inb.buf.copy_within(h + 4..self.inb.end, h);
            self.inb.end -= 4;
            len += last;
        }
        let p = Pkt {
            start: self.inb.pos + 4,
            end: self.inb.pos + 4 + len,
        };
        self.inb.pos = p.end;
        Ok(p)
    }

    fn fill(&mut self, n: usize) -> MResult<()> {
        if self.broken {
            return Err(self.lost());
        }
        match self.inb.fill(&mut self.stream, n) {
            Ok(()) => {
                self.last_read.restart();
                Ok(())
            }
            Err(e) => self.fail(e),
        }
    }

    fn server_error(&self, p: Pkt) -> MyWireError {
        server_error(&self.inb.buf[p.start..p.end])
    }

    /// True for an EOF packet (0xFE and shorter than 9 bytes), with its status flags.
    fn eof_status(&self, p: Pkt) -> Option<u16> {
        let b = &self.inb.buf[p.start..p.end];
        (b.first() == Some(&0xFE) && b.len() < 9).then(|| {
            b.get(3..5)
                .map(|s| u16::from_le_bytes([s[0], s[1]]))
                .unwrap_or(0)
        })
    }

    /// Read `n` column definitions and the EOF after them; `f` gets each one's bytes.
    fn read_columns(&mut self, n: usize, mut f: impl FnMut(&[u8]) -> MResult<()>) -> MResult<()> {
        for _ in 0..n {
            let p = self.read_packet()?;
            f(&self.inb.buf[p.start..p.end])?;
        }
        let p = self.read_packet()?;
        if self.eof_status(p).is_none() {
            self.broken = true;
            return protocol("no EOF after the column definitions");
        }
        Ok(())
    }

    /// Run `sql` (text protocol, several statements allowed); `row` gets each text row's
    /// payload with its result set's column names (collected only when `names`). Returns the
    /// affected rows summed over the statements; the first error after reading everything the
    /// server sent.
    fn text(
        &mut self,
        sql: &str,
        names: bool,
        mut on_set: impl FnMut(Vec<String>),
        mut row: impl FnMut(&[u8]) -> MResult<()>,
    ) -> MResult<u64> {
        self.begin_command(0x03);
        self.out.extend_from_slice(sql.as_bytes());
        self.send_command()?;
        let mut affected = 0;
        // A row that cannot be read fails the call after the rest is read (the connection
        // stays in step).
        let mut first_err = None;
        loop {
            let p = self.read_packet()?;
            let b = &self.inb.buf[p.start..p.end];
            let more = match b.first() {
                Some(0x00) => {
                    let (a, status) = ok_packet(b)?;
                    affected += a;
                    status & SERVER_MORE_RESULTS_EXISTS != 0
                }
                Some(0xFF) => return Err(self.server_error(p)),
                Some(0xFB) => {
                    // LOAD DATA LOCAL INFILE: refuse by sending an empty file.
                    self.send(&[])?;
                    continue;
                }
                _ => {
                    let n = lenenc(b, &mut 0)? as usize;
                    let mut cols = Vec::new();
                    self.read_columns(n, |d| {
                        if names {
                            cols.push(column_name(d)?);
                        }
                        Ok(())
                    })?;
                    on_set(cols);
                    loop {
                        let p = self.read_packet()?;
                        if let Some(status) = self.eof_status(p) {
                            break status & SERVER_MORE_RESULTS_EXISTS != 0;
                        }
                        if self.inb.buf[p.start] == 0xFF {
                            // Ends the whole exchange: nothing follows an error.
                            return Err(self.server_error(p));
                        }
                        if first_err.is_none() {
                            if let Err(e) = row(&self.inb.buf[p.start..p.end]) {
                                first_err = Some(e);
                            }
                        }
                    }
                }
            };
            if !more {
                return match first_err {
                    Some(e) => Err(e),
                    None => Ok(affected),
                };
            }
        }
    }

    /// Run `sql` and drop any rows; returns the affected rows.
    pub fn query_drop(&mut self, sql: &str) -> MResult<u64> {
        self.text(sql, false, |_| {}, |_| Ok(()))
    }

    /// Run `sql` and walk its rows' values in place; returns the rows.
    pub fn query_count(&mut self, sql: &str) -> MResult<u64> {
        let mut n = 0;
        self.text(
            sql,
            false,
            |_| {},
            |b| {
                let mut at = 0;
                while at < b.len() {
                    std::hint::black_box(text_value(b, &mut at)?);
                }
                n += 1;
                Ok(())
            },
        )?;
        Ok(n)
    }

    /// Every result set of `sql` with its column names and rows as text.
    pub fn query_sets(&mut self, sql: &str) -> MResult<Vec<ResultSet>> {
        let sets = std::cell::RefCell::new(Vec::<ResultSet>::new());
        let affected = self.text(
            sql,
            true,
            |columns| {
                sets.borrow_mut().push(ResultSet {
                    columns,
                    ..Default::default()
                })
            },
            |b| {
                let mut at = 0;
                let mut r = Vec::new();
                while at < b.len() {
                    r.push(
                        text_value(b, &mut at)?.map(|v| String::from_utf8_lossy(v).into_owned()),
                    );
                }
                if let Some(s) = sets.borrow_mut().last_mut() {
                    s.rows.push(r);
                }
                Ok(())
            },
        )?;
        let mut sets = sets.into_inner();
        if let Some(s) = sets.last_mut() {
            s.affected = affected;
        }
        Ok(sets)
    }

    /// Prepare `sql` on the server.
    pub fn prepare(&mut self, sql: &str) -> MResult<Prepared> {
        self.begin_command(0x16);
        self.out.extend_from_slice(sql.as_bytes());
        self.send_command()?;
        let p = self.read_packet()?;
        let b = &self.inb.buf[p.start..p.end];
        match b.first() {
            Some(0x00) if b.len() >= 12 => {}
            Some(0xFF) => return Err(self.server_error(p)),
            _ => {
                self.broken = true;
                return protocol("unexpected answer to COM_STMT_PREPARE");
            }
        }
        let id = u32::from_le_bytes([b[1], b[2], b[3], b[4]]);
        let ncol = u16::from_le_bytes([b[5], b[6]]) as usize;
        let nparam = u16::from_le_bytes([b[7], b[8]]) as usize;
        if nparam > 0 {
            self.read_columns(nparam, |_| Ok(()))?;
        }
        let mut columns = Vec::with_capacity(ncol);
        if ncol > 0 {
            self.read_columns(ncol, |d| {
                let (ty, flags) = column_type(d)?;
                columns.push(Column {
                    name: column_name(d)?,
                    ty,
                    flags,
                });
                Ok(())
            })?;
        }
        Ok(Prepared {
            id,
            params: nparam,
            columns,
        })
    }

    /// Execute `st` with `params` (binary protocol); `row` gets each row's values in place
    /// (binary, NULL as `None`) with their column types and flags. Returns the affected rows
    /// (statements without rows) or the rows.
    pub fn execute(
        &mut self,
        st: &Prepared,
        params: &[Value],
        mut row: impl FnMut(&mut BinValues) -> MResult<()>,
    ) -> MResult<u64> {
        if params.len() != st.params {
            return protocol(format!(
                "the statement takes {} parameters, {} given",
                st.params,
                params.len()
            ));
        }
        self.begin_command(0x17);
        self.out.extend_from_slice(&st.id.to_le_bytes());
        self.out.extend_from_slice(&[0, 1, 0, 0, 0]); // no cursor, one iteration
        if !params.is_empty() {
            let bitmap = self.out.len();
            self.out.resize(bitmap + params.len().div_ceil(8), 0);
            self.out.push(1); // types follow
            for (i, v) in params.iter().enumerate() {
                let t = match v {
                    Value::Null => {
                        self.out[bitmap + i / 8] |= 1 << (i % 8);
                        ty::NULL
                    }
                    Value::Int(_) => ty::LONGLONG,
                    Value::Float(_) => ty::DOUBLE,
                    Value::Text(_) => ty::VAR_STRING,
                    Value::Timestamp(_) => ty::DATETIME,
                };
                self.out.extend_from_slice(&[t, 0]);
            }
            for v in params {
                match *v {
                    Value::Null => {}
                    Value::Int(x) => self.out.extend_from_slice(&x.to_le_bytes()),
                    Value::Float(x) => self.out.extend_from_slice(&x.to_le_bytes()),
                    Value::Text(s) => {
                        put_lenenc(&mut self.out, s.len() as u64);
                        self.out.extend_from_slice(s.as_bytes());
                    }
                    Value::Timestamp(secs) => {
                        if self.ts.0 != secs {
                            self.ts = (secs, datetime(secs));
                        }
                        self.out.push(7);
                        let ts = self.ts.1;
                        self.out.extend_from_slice(&ts);
                    }
                }
            }
        }
        self.send_command()?;
        let p = self.read_packet()?;
        let b = &self.inb.buf[p.start..p.end];
        match b.first() {
            Some(0x00) => return Ok(ok_packet(b)?.0),
            Some(0xFF) => return Err(self.server_error(p)),
            _ => {}
        }
        let n = lenenc(b, &mut 0)? as usize;
        let mut cols = std::mem::take(&mut self.cols);
        cols.clear();
        let r = self.read_columns(n, |d| {
            cols.push(column_type(d)?);
            Ok(())
        });
        if let Err(e) = r {
            self.cols = cols;
            return Err(e);
        }
        let mut rows = 0;
        let mut err = None;
        let result = loop {
            let p = match self.read_packet() {
                Ok(p) => p,
                Err(e) => break Err(e),
            };
            if let Some(status) = self.eof_status(p) {
                if status & SERVER_MORE_RESULTS_EXISTS != 0 {
                    // A procedure's trailing OK: read and ignore.
                    if let Err(e) = self.read_packet() {
                        break Err(e);
                    }
                }
                break Ok(());
            }
            let b = &self.inb.buf[p.start..p.end];
            if b.first() == Some(&0xFF) {
                break Err(self.server_error(p));
            }
            rows += 1;
            if err.is_none() {
                let nulls = (cols.len() + 7 + 2) / 8;
                let mut v = BinValues {
                    body: b,
                    cols: &cols,
                    nulls: b.get(1..1 + nulls).unwrap_or_default(),
                    at: 1 + nulls,
                    i: 0,
                    bad: false,
                };
                if let Err(e) = row(&mut v) {
                    err = Some(e);
                }
            }
        };
        self.cols = cols;
        result?;
        match err {
            Some(e) => Err(e),
            None => Ok(rows),
        }
    }

    /// Say goodbye (best effort).
    fn quit(&mut self) {
        if !self.broken {
            self.begin_command(0x01);
            let _ = self.send_command();
        }
    }
}

impl Drop for MyWire {
    fn drop(&mut self) {
        self.quit();
    }
}

/// An ERR packet's code, SQLSTATE and message.
fn server_error(b: &[u8]) -> MyWireError {
    let code = b
        .get(1..3)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .unwrap_or(0);
    let (state, msg) = match b.get(3) {
        Some(b'#') => (
            String::from_utf8_lossy(b.get(4..9).unwrap_or_default()).into_owned(),
            b.get(9..).unwrap_or_default(),
        ),
        _ => ("HY000".to_string(), b.get(3..).unwrap_or_default()),
    };
    MyWireError::Server {
        code,
        state,
        message: String::from_utf8_lossy(msg).into_owned(),
    }
}

/// The answer `plugin` wants for `nonce`: a scramble, a signature (ed25519), or the password
/// itself (mysql_clear_password, only when `secure`: over TLS or a Unix socket).
fn auth_data(
    plugin: &AuthPlugin,
    pass: Option<&str>,
    nonce: &[u8],
    secure: bool,
) -> MResult<Vec<u8>> {
    match plugin {
        AuthPlugin::MysqlNativePassword | AuthPlugin::CachingSha2Password | AuthPlugin::Ed25519 => {
        }
        AuthPlugin::MysqlClearPassword if secure => {}
        AuthPlugin::MysqlClearPassword => {
            return protocol(
                "the server asks for the password in clear text (mysql_clear_password) on a \
                 connection without TLS, so the password was not sent (use ssl-mode=REQUIRED or \
                 stricter, or a Unix socket)",
            )
        }
        other => {
            return protocol(format!(
                "the server asks for authentication plugin {} (ixbench speaks \
                 mysql_native_password, caching_sha2_password, client_ed25519 and, over TLS \
                 or a Unix socket, mysql_clear_password)",
                String::from_utf8_lossy(other.as_bytes())
            ))
        }
    }
    let mut v = Vec::new();
    if let Some(d) = plugin.gen_data(pass, nonce) {
        d.serialize(&mut v);
    }
    if matches!(plugin, AuthPlugin::MysqlClearPassword) {
        v.push(0);
    }
    Ok(v)
}

/// `data` (the password, NUL-terminated, XORed with the nonce) encrypted with the RSA public
/// key `pem` (PKCS#8 `PUBLIC KEY` or PKCS#1 `RSA PUBLIC KEY`) and OAEP padding, as
/// caching_sha2_password's full path over clear TCP sends it. mysql_common's own
/// `crypto::encrypt` panics on a malformed key or a password too long for the key: here each
/// is an error saying which (the key comes from the server, so it is checked before use).
fn rsa_encrypt(data: &[u8], pem: &[u8]) -> Result<Vec<u8>, String> {
    use base64::Engine;
    use mysql_common::crypto::rsa::{GetRandom, Pkcs1OaepPadding, PublicKey};
    use mysql_common::num_bigint::BigUint;
    let bad = |what: &str| format!("the server's public key is not usable ({what})");
    let text = std::str::from_utf8(pem).map_err(|_| bad("not PEM text"))?;
    let (pkcs1, body) = [("RSA PUBLIC KEY", true), ("PUBLIC KEY", false)]
        .iter()
        .find_map(|(label, pkcs1)| {
            let begin = format!("-----BEGIN {label}-----");
            let end = format!("-----END {label}-----");
            let from = text.find(&begin)? + begin.len();
            let to = from + text[from..].find(&end)?;
            Some((*pkcs1, &text[from..to]))
        })
        .ok_or_else(|| bad("no PEM public key in it"))?;
    let b64: String = body.split_whitespace().collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|_| bad("bad base64"))?;
    // DER: one element (tag, length, contents) at the start of `b`, and what follows it.
    fn element(b: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
        let (&t, rest) = b.split_first()?;
        let (&l, rest) = rest.split_first()?;
        let (len, rest) = if l < 0x80 {
            (l as usize, rest)
        } else {
            let n = (l & 0x7F) as usize;
            if n == 0 || n > 4 || rest.len() < n {
                return None;
            }
            let len = rest[..n].iter().fold(0usize, |a, &x| (a << 8) | x as usize);
            (len, &rest[n..])
        };
        (t == tag && rest.len() >= len).then(|| (&rest[..len], &rest[len..]))
    }
    let parse = |der: &[u8]| -> Option<(BigUint, BigUint)> {
        let mut rsa = der;
        if !pkcs1 {
            // SubjectPublicKeyInfo: SEQUENCE { SEQUENCE algorithm, BIT STRING key }
            let (spki, _) = element(der, 0x30)?;
            let (alg, rest) = element(spki, 0x30)?;
            // rsaEncryption, 1.2.840.113549.1.1.1
            let (oid, _) = element(alg, 0x06)?;
            if oid != [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01] {
                return None;
            }
            let (bits, _) = element(rest, 0x03)?;
            let (&unused, key) = bits.split_first()?;
            if unused != 0 {
                return None;
            }
            rsa = key;
        }
        // RSAPublicKey: SEQUENCE { INTEGER modulus, INTEGER exponent }
        let (seq, _) = element(rsa, 0x30)?;
        let (n, rest) = element(seq, 0x02)?;
        let (e, _) = element(rest, 0x02)?;
        Some((BigUint::from_bytes_be(n), BigUint::from_bytes_be(e)))
    };
    let (n, e) = parse(&der).ok_or_else(|| bad("not an RSA public key"))?;
    if n.bits() < 1024 || e.bits() == 0 {
        return Err(bad(&format!("an RSA key of {} bits", n.bits())));
    }
    let key = PublicKey::new(n, e);
    // OAEP with SHA-1 takes at most k - 42 bytes (k: the modulus's bytes).
    let room = key.num_octets() - 42;
    if data.len() > room {
        return Err(format!(
            "the password is longer than its {}-bit RSA key can carry ({} bytes at most)",
            key.modulus().bits(),
            room.saturating_sub(1)
        ));
    }
    Ok(key.encrypt_block(data, Pkcs1OaepPadding::new(GetRandom)))
}

/// Affected rows and status flags of an OK packet.
fn ok_packet(b: &[u8]) -> MResult<(u64, u16)> {
    let mut at = 1;
    let affected = lenenc(b, &mut at)?;
    lenenc(b, &mut at)?; // last insert id
    let status = b
        .get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .unwrap_or(0);
    Ok((affected, status))
}

/// A length-encoded integer at `*at`, advancing it.
fn lenenc(b: &[u8], at: &mut usize) -> MResult<u64> {
    let short = || MyWireError::Protocol("short packet".into());
    let first = *b.get(*at).ok_or_else(short)?;
    let (v, n) = match first {
        0xFC => (le(b.get(*at + 1..*at + 3).ok_or_else(short)?), 3),
        0xFD => (le(b.get(*at + 1..*at + 4).ok_or_else(short)?), 4),
        0xFE => (le(b.get(*at + 1..*at + 9).ok_or_else(short)?), 9),
        x => (x as u64, 1),
    };
    *at += n;
    Ok(v)
}

fn header_len(h: &[u8]) -> usize {
    u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize
}

fn le(b: &[u8]) -> u64 {
    b.iter().rev().fold(0, |acc, &x| (acc << 8) | x as u64)
}

fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => out.push(v as u8),
        251..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// A length-encoded string at `*at` (NULL, 0xFB, as `None`), advancing it.
fn text_value<'a>(b: &'a [u8], at: &mut usize) -> MResult<Option<&'a [u8]>> {
    if b.get(*at) == Some(&0xFB) {
        *at += 1;
        return Ok(None);
    }
    let n = lenenc(b, at)? as usize;
    let v = b
        .get(*at..*at + n)
        .ok_or_else(|| MyWireError::Protocol("short row".into()))?;
    *at += n;
    Ok(Some(v))
}

/// The name (alias) of a column definition: catalog, schema, table, org_table, name, ...
fn column_name(d: &[u8]) -> MResult<String> {
    let mut at = 0;
    for _ in 0..4 {
        text_value(d, &mut at)?;
    }
    Ok(String::from_utf8_lossy(text_value(d, &mut at)?.unwrap_or_default()).into_owned())
}

/// The type and flags of a column definition.
fn column_type(d: &[u8]) -> MResult<(u8, u16)> {
    let mut at = 0;
    for _ in 0..6 {
        text_value(d, &mut at)?;
    }
    lenenc(d, &mut at)?; // length of the fixed fields (0x0c)
                         // charset (2), column length (4), type (1), flags (2)
    let f = d
        .get(at + 6..at + 9)
        .ok_or_else(|| MyWireError::Protocol("short column definition".into()))?;
    Ok((f[0], u16::from_le_bytes([f[1], f[2]])))
}

/// A Unix time as the 7 bytes of a binary DATETIME (year, month, day, hour, minute, second).
fn datetime(secs: i64) -> [u8; 7] {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = (yoe + era * 400 + i64::from(m <= 2)).clamp(0, 9999) as u16;
    let y = y.to_le_bytes();
    [
        y[0],
        y[1],
        m as u8,
        d as u8,
        (rem / 3600) as u8,
        (rem / 60 % 60) as u8,
        (rem % 60) as u8,
    ]
}

/// The values of one binary row, read in place.
pub struct BinValues<'a> {
    body: &'a [u8],
    cols: &'a [(u8, u16)],
    nulls: &'a [u8],
    at: usize,
    i: usize,
    /// Set when the row is shorter than its columns say.
    bad: bool,
}

impl<'a> BinValues<'a> {
    /// The next value with its column type and flags (`None` for SQL NULL); `None` after the
    /// last, or when the row is malformed (see [`BinValues::check`]).
    #[inline]
    #[allow(clippy::type_complexity)]
    pub fn next_value(&mut self) -> Option<(Option<&'a [u8]>, u8, u16)> {
        let &(t, flags) = self.cols.get(self.i)?;
        let bit = self.i + 2;
        self.i += 1;
        if self
            .nulls
            .get(bit / 8)
            .is_some_and(|b| b & (1 << (bit % 8)) != 0)
        {
            return Some((None, t, flags));
        }
        let b = self.body;
        let n = match t {
            ty::TINY => 1,
            ty::SHORT | ty::YEAR => 2,
            ty::LONG | ty::INT24 | ty::FLOAT => 4,
            ty::LONGLONG | ty::DOUBLE => 8,
            ty::NULL => 0,
            ty::DATE | ty::DATETIME | ty::TIMESTAMP | ty::TIME | ty::NEWDATE => {
                let Some(&n) = b.get(self.at) else {
                    self.bad = true;
                    return None;
                };
                self.at += 1;
                n as usize
            }
            // A length-encoded string: one length byte below 251.
            _ => match b.get(self.at) {
                Some(&n) if n < 0xFB => {
                    self.at += 1;
                    n as usize
                }
                _ => match lenenc(b, &mut self.at) {
                    Ok(n) => n as usize,
                    Err(_) => {
                        self.bad = true;
                        return None;
                    }
                },
            },
        };
        let Some(v) = b.get(self.at..self.at + n) else {
            self.bad = true;
            return None;
        };
        self.at += n;
        Some((Some(v), t, flags))
    }

    /// An error when a value could not be read.
    pub fn check(&self) -> MResult<()> {
        if self.bad {
            return protocol("a row shorter than its columns");
        }
        Ok(())
    }
}

/// An integer from a binary value of column type `t` (or a decimal/text holding one).
pub fn decode_int(v: &[u8], t: u8, flags: u16) -> MResult<i64> {
    let unsigned = flags & UNSIGNED_FLAG != 0;
    let x = le(v);
    let signed = |bits: u32| -> i64 {
        let shift = 64 - bits;
        ((x << shift) as i64) >> shift
    };
    Ok(match t {
        ty::TINY | ty::SHORT | ty::YEAR | ty::LONG | ty::INT24 if unsigned => x as i64,
        ty::TINY => signed(8),
        ty::SHORT | ty::YEAR => signed(16),
        ty::LONG | ty::INT24 => signed(32),
        ty::LONGLONG if unsigned => i64::try_from(x)
            .map_err(|_| MyWireError::Protocol(format!("{x} does not fit a signed integer")))?,
        ty::LONGLONG => x as i64,
        _ => {
            let s = String::from_utf8_lossy(v);
            s.trim()
                .parse::<i64>()
                .map_err(|_| MyWireError::Protocol(format!("not an integer: {s}")))?
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2048-bit RSA public key (`openssl rsa -pubout` and `-RSAPublicKey_out`).
    const PUB_PKCS8: &str = "-----BEGIN PUBLIC KEY-----\n\
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAlEI/jfzg+5w3ui7orji1\n\
QaKY3rZzpI3f9jAPTaSe9MlI8L+CRIpqB3V5MB/rXnBGlNBxvAIbspF/3Fyb00Go\n\
5oG3lC9CwvJp0gcU0ekJX3zEB1agsTGPva7eDKVgy6kGJIt8quI4esszVz7UfqIM\n\
7sQ8Kjt9ZPmCY16ctZrUo0InHL4SmWxy/A/mejYBQrRWWxU+lTSRdyhuQUKPwzVp\n\
q7g3Mc8k0L4TKzivxnqg/MooKufBvfQx7FvDBzUtO9pt8+B/e1gr/f3tc1+bsBoM\n\
KCWc2C2xI4ZNXWzvw2wIXfrDu5KVi+bZt3D+w6hzVqB4/MnZUitb9UGDn+4LDzVV\n\
uQIDAQAB\n\
-----END PUBLIC KEY-----\n";
    const PUB_PKCS1: &str = "-----BEGIN RSA PUBLIC KEY-----\n\
MIIBCgKCAQEAlEI/jfzg+5w3ui7orji1QaKY3rZzpI3f9jAPTaSe9MlI8L+CRIpq\n\
B3V5MB/rXnBGlNBxvAIbspF/3Fyb00Go5oG3lC9CwvJp0gcU0ekJX3zEB1agsTGP\n\
va7eDKVgy6kGJIt8quI4esszVz7UfqIM7sQ8Kjt9ZPmCY16ctZrUo0InHL4SmWxy\n\
/A/mejYBQrRWWxU+lTSRdyhuQUKPwzVpq7g3Mc8k0L4TKzivxnqg/MooKufBvfQx\n\
7FvDBzUtO9pt8+B/e1gr/f3tc1+bsBoMKCWc2C2xI4ZNXWzvw2wIXfrDu5KVi+bZ\n\
t3D+w6hzVqB4/MnZUitb9UGDn+4LDzVVuQIDAQAB\n\
-----END RSA PUBLIC KEY-----\n";

    #[test]
    fn rsa_encrypt_checks_the_servers_key() {
        let pw = b"rsa-Secret1\0";
        for pem in [PUB_PKCS8, PUB_PKCS1] {
            let enc = rsa_encrypt(pw, pem.as_bytes()).unwrap();
            assert_eq!(enc.len(), 256);
            assert!(!enc.windows(pw.len()).any(|w| w == pw));
        }
        // The most a 2048-bit key carries with OAEP/SHA-1: 256 - 42 bytes.
        assert!(rsa_encrypt(&[b'x'; 214], PUB_PKCS8.as_bytes()).is_ok());
        let e = rsa_encrypt(&[b'x'; 215], PUB_PKCS8.as_bytes()).unwrap_err();
        assert!(e.contains("2048-bit") && e.contains("213 bytes"), "{e}");
        // Whatever else a server sends: an error, never a panic.
        let cut = &PUB_PKCS8[..PUB_PKCS8.len() / 2];
        // Another algorithm's identifier (1.2.840.113549.1.1.2).
        let flipped = PUB_PKCS8.replace("hkiG9w0BAQEF", "hkiG9w0BAQIF");
        let short = PUB_PKCS8.replace("MIIBIjAN", "MIIAIjAN");
        for bad in [
            "",
            "-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n",
            "----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
            "-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n",
            "-----BEGIN PUBLIC KEY-----\nMAA=\n-----END PUBLIC KEY-----\n",
            cut,
            &flipped,
            &short,
        ] {
            let e = rsa_encrypt(pw, bad.as_bytes()).unwrap_err();
            assert!(e.starts_with("the server's public key"), "{e}");
        }
        assert!(rsa_encrypt(pw, &[0xFF, 0xFE]).is_err());
    }

    #[test]
    fn length_encoded_integers_round_trip() {
        for v in [
            0u64,
            250,
            251,
            65_535,
            65_536,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc(&mut b, v);
            let mut at = 0;
            assert_eq!(lenenc(&b, &mut at).unwrap(), v);
            assert_eq!(at, b.len());
        }
    }

    #[test]
    fn datetimes_from_unix_seconds() {
        // 2023-11-14 22:13:20 UTC
        let d = datetime(1_700_000_000);
        assert_eq!(u16::from_le_bytes([d[0], d[1]]), 2023);
        assert_eq!(&d[2..], &[11, 14, 22, 13, 20]);
        let d = datetime(0);
        assert_eq!(u16::from_le_bytes([d[0], d[1]]), 1970);
        assert_eq!(&d[2..], &[1, 1, 0, 0, 0]);
        // 2024-02-29 (a leap day) 00:00:00
        let d = datetime(1_709_164_800);
        assert_eq!(&d[2..4], &[2, 29]);
    }

    #[test]
    fn integers_by_type_and_sign() {
        assert_eq!(decode_int(&[0xFF], ty::TINY, 0).unwrap(), -1);
        assert_eq!(decode_int(&[0xFF], ty::TINY, UNSIGNED_FLAG).unwrap(), 255);
        assert_eq!(decode_int(&(-5i32).to_le_bytes(), ty::LONG, 0).unwrap(), -5);
        assert_eq!(decode_int(&7i64.to_le_bytes(), ty::LONGLONG, 0).unwrap(), 7);
        assert!(decode_int(&u64::MAX.to_le_bytes(), ty::LONGLONG, UNSIGNED_FLAG).is_err());
        assert_eq!(decode_int(b"42", ty::NEWDECIMAL, 0).unwrap(), 42);
    }
}
