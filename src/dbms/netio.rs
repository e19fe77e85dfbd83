//! The socket and read buffer under ixbench's own database clients ([`super::pgwire`],
//! [`super::mywire`]): a blocking TCP (no Nagle delay) or Unix stream, or TLS over one of them
//! (rustls; settings in [`super::tls`]), and a buffer that reads as much as the stream has and
//! hands out whole messages in place.
//!
//! Plain TCP stays as cheap as before: a read or write is one `match` away from the socket's
//! own call, with no copy in between. Over TLS, rustls decrypts into its own buffer and copies
//! the plaintext into [`InBuf`] (one copy), and encrypts each write into one record.
//!
//! [`Transport`] is what the results record of a connection: TCP or Unix, TLS or not, the TLS
//! version and cipher suite, what was verified, and how the client logged in.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use serde::{Deserialize, Serialize};

use crate::deadline::Since;

/// A connected socket, or TLS over one.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// TLS over a [`Stream::Tcp`] or [`Stream::Unix`].
    Tls(Box<StreamOwned<ClientConnection, Stream>>),
}

impl Read for Stream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tls(s) => s.flush(),
            _ => Ok(()),
        }
    }
}

/// A TLS connection's negotiated version and cipher suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsInfo {
    /// `TLSv1.3`, `TLSv1.2`.
    pub version: String,
    /// The IANA name of the cipher suite (`TLS13_AES_256_GCM_SHA384`).
    pub cipher: String,
}

/// How a connection of ixbench's own clients reached its server, for the results.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Transport {
    /// `tcp` or `unix` (a Unix-domain socket).
    pub socket: String,
    /// Whether the connection is encrypted with TLS.
    pub tls: bool,
    /// The TLS protocol version (`TLSv1.3`), when TLS is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_version: Option<String>,
    /// The negotiated cipher suite (`TLS13_AES_256_GCM_SHA384`), when TLS is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_cipher: Option<String>,
    /// What the client checked of the server's certificate, when TLS is on: `none`, `chain`
    /// (signed by a trusted root), `chain and host name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_verified: Option<String>,
    /// The TLS setting the connection was made with (`sslmode=prefer`, `ssl-mode=PREFERRED`).
    pub tls_mode: String,
    /// How the client logged in: `trust`, `password`, `md5`, `SCRAM-SHA-256`,
    /// `SCRAM-SHA-256-PLUS` (with channel binding) on PostgreSQL; the authentication plugin
    /// (`mysql_native_password`, `caching_sha2_password`, `client_ed25519`, ...) on MySQL.
    pub auth: String,
}

impl Stream {
    /// Bound reads and writes (the start-up), or not (`None`: statements run as long as
    /// they run).
    pub fn set_timeouts(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Stream::Unix(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Stream::Tls(s) => s.sock.set_timeouts(t),
        }
    }

    /// A Unix-domain socket (with or without TLS over it).
    pub fn is_unix(&self) -> bool {
        match self {
            Stream::Unix(_) => true,
            Stream::Tls(s) => s.sock.is_unix(),
            Stream::Tcp(_) => false,
        }
    }

    /// Whether what is sent cannot be read on the way: TLS, or a Unix socket (never leaves
    /// the machine). A password may be sent in clear only then.
    pub fn is_secure(&self) -> bool {
        matches!(self, Stream::Tls(_) | Stream::Unix(_))
    }

    /// The version and cipher suite, over TLS.
    pub fn tls_info(&self) -> Option<TlsInfo> {
        let Stream::Tls(s) = self else { return None };
        let version = match s.conn.protocol_version()? {
            rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3".to_string(),
            rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2".to_string(),
            v => format!("{v:?}"),
        };
        let suite = s.conn.negotiated_cipher_suite()?.suite();
        let cipher = suite
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("{suite:?}"));
        Some(TlsInfo { version, cipher })
    }

    /// The server's own certificate (DER), over TLS.
    pub fn peer_certificate(&self) -> Option<&[u8]> {
        let Stream::Tls(s) = self else { return None };
        s.conn.peer_certificates()?.first().map(|c| c.as_ref())
    }

    /// `tcp` or `unix`, for [`Transport::socket`].
    pub fn kind(&self) -> &'static str {
        if self.is_unix() {
            "unix"
        } else {
            "tcp"
        }
    }

    /// A [`Transport`] of this stream (TLS version and cipher filled in), with `mode`,
    /// `verified` (when TLS is on) and `auth` as given.
    pub fn transport(&self, mode: String, verified: &str, auth: &str) -> Transport {
        let info = self.tls_info();
        Transport {
            socket: self.kind().into(),
            tls: info.is_some(),
            tls_verified: info.as_ref().map(|_| verified.to_string()),
            tls_version: info.as_ref().map(|i| i.version.clone()),
            tls_cipher: info.map(|i| i.cipher),
            tls_mode: mode,
            auth: auth.into(),
        }
    }
}

/// Run a TLS handshake over `sock` for `host` (its name is checked against the certificate
/// when `config` verifies names, and sent as SNI when it is a name, not an address). Nothing
/// may have been read ahead from `sock`. Errors are rustls's or the socket's (see
/// [`super::tls::describe`]); a read timeout set on `sock` bounds the handshake.
pub fn start_tls(sock: Stream, config: &Arc<ClientConfig>, host: &str) -> io::Result<Stream> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let name = ServerName::try_from(bare.to_string()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{host:?} is not a host name TLS can check"),
        )
    })?;
    let mut conn = ClientConnection::new(config.clone(), name).map_err(io::Error::other)?;
    let mut sock = sock;
    while conn.is_handshaking() {
        conn.complete_io(&mut sock)?;
    }
    Ok(Stream::Tls(Box::new(StreamOwned::new(conn, sock))))
}

/// Connect to the first address of `host:port` that accepts within `timeout` (all of them
/// together), with TCP_NODELAY: each statement is one write and waits for its answer.
pub fn open_tcp(host: &str, port: u16, timeout: Duration) -> io::Result<(Stream, SocketAddr)> {
    let t0 = Since::start();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let mut last = None;
    for a in (bare, port).to_socket_addrs()? {
        let left = t0.left_of(timeout).max(Duration::from_millis(1));
        match TcpStream::connect_timeout(&a, left) {
            Ok(s) => {
                s.set_nodelay(true)?;
                return Ok((Stream::Tcp(s), a));
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address")))
}

/// Bytes read from a socket and not yet consumed: `buf[pos..end]`.
pub struct InBuf {
    pub buf: Vec<u8>,
    pub pos: usize,
    pub end: usize,
}

impl InBuf {
    pub fn new() -> Self {
        InBuf {
            buf: vec![0; 16 * 1024],
            pos: 0,
            end: 0,
        }
    }

    /// Make `buf[pos..]` hold at least `n` bytes, reading as needed (as much as the kernel
    /// has, so a small answer takes one `read`). Moves the unread bytes to the front first
    /// when they would not fit; a closed socket is `UnexpectedEof`.
    pub fn fill(&mut self, stream: &mut Stream, n: usize) -> io::Result<()> {
        if self.end - self.pos >= n {
            return Ok(());
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.buf.len() < n {
            self.buf.resize(n.next_power_of_two(), 0);
        }
        while self.end < n {
            match stream.read(&mut self.buf[self.end..]) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Default for InBuf {
    fn default() -> Self {
        Self::new()
    }
}

/// The error every call of a client whose socket failed earlier returns at once.
pub fn lost() -> io::Error {
    io::Error::new(
        io::ErrorKind::NotConnected,
        "the connection was lost earlier",
    )
}

/// The error of a start-up that timed out (the socket's read timeout during the handshake), in
/// the words [`super::connect_within`] uses; `None` for other errors.
pub fn handshake_timeout(e: &io::Error, timeout: Duration) -> Option<String> {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
    .then(|| {
        format!(
            "the server accepted the connection but its handshake got no answer within {:.0} s \
             (see --connect-timeout)",
            timeout.as_secs_f64()
        )
    })
}
