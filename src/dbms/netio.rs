//! The socket and read buffer under ixbench's own database clients ([`super::pgwire`],
//! [`super::mywire`]): a blocking TCP (no Nagle delay) or Unix stream, or TLS over one of them
//! (rustls; settings in [`super::tls`]), and a buffer that reads as much as the stream has and
//! hands out whole messages in place.
//!
//! Plain TCP stays as cheap as before: a read or write is one `match` away from the socket's
//! own call, with no copy in between. Over TLS ([`TlsStream`]), rustls runs the handshake and
//! hands over the traffic keys; the records are then read straight from the socket into one
//! reused buffer (as much as the socket has ready), decrypted in place there, and the
//! plaintext copied once into [`InBuf`]: no allocation per record, no zero-filling. Each write
//! is copied into one reused buffer, encrypted there in place (one record per 16 KB) and sent
//! in one call.
//!
//! [`Transport`] is what the results record of a connection: TCP or Unix, TLS or not, the TLS
//! version and cipher suite, what was verified, and how the client logged in.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use rustls::client::{ClientConnectionData, UnbufferedClientConnection};
use rustls::crypto::cipher::{AeadKey, InboundOpaqueMessage, Iv, MessageDecrypter};
use rustls::kernel::KernelConnection;
use rustls::pki_types::ServerName;
use rustls::unbuffered::{ConnectionState, EncodeError};
use rustls::{
    ClientConfig, ConnectionTrafficSecrets, ContentType, ProtocolVersion, SupportedCipherSuite,
};
use serde::{Deserialize, Serialize};

use crate::deadline::Since;

/// A connected socket, or TLS over one.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// TLS over a [`Stream::Tcp`] or [`Stream::Unix`].
    Tls(Box<TlsStream>),
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
        Ok(())
    }
}

/// The largest TLS record body (TLS 1.2 allows 2^14 + 2048 bytes of ciphertext; 1.3 less).
const MAX_RECORD: usize = 16384 + 2048;
/// The largest plaintext of one record.
const MAX_PLAIN: usize = 16384;
/// The record buffer: room for a few records, so one `read` takes what the socket has.
const RAW_SIZE: usize = 64 * 1024 + 5 + MAX_RECORD;

/// TLS after the handshake: rustls ran the handshake (and keeps the session tickets and
/// traffic-secret updates, [`KernelConnection`]); the records are framed here, read straight
/// from the socket into one reused buffer (as much as the socket has), decrypted in place
/// there by the cipher suite's own rustls decrypter, and the plaintext copied once into the
/// caller's buffer. A write is encrypted into one record per 16 KB and sent in one call.
pub struct TlsStream {
    sock: Stream,
    kernel: KernelConnection<ClientConnectionData>,
    suite: SupportedCipherSuite,
    dec: Box<dyn MessageDecrypter>,
    rx_seq: u64,
    enc: Sealer,
    tx_seq: u64,
    /// Records encrypted with one key before it is replaced (TLS 1.3 key update) or the
    /// connection refuses to go on (TLS 1.2).
    tx_limit: u64,
    /// Bytes read from the socket: `raw[rpos..rend]` not yet decrypted, `raw[plain.0..plain.1]`
    /// decrypted but not yet handed out (a record larger than the caller's buffer).
    raw: Vec<u8>,
    rpos: usize,
    rend: usize,
    plain: (usize, usize),
    /// The records of one write, encrypted in place here and sent together (reused: no
    /// allocation per record).
    out: Vec<u8>,
    /// The server sent close_notify: no more data.
    closed: bool,
    info: TlsInfo,
    peer_cert: Option<Vec<u8>>,
}

/// A rustls error as the `io::Error` the clients and [`super::tls::describe`] expect.
fn tls_err(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// The key and IV of extracted traffic secrets.
fn key_iv(
    suite: SupportedCipherSuite,
    secrets: ConnectionTrafficSecrets,
) -> io::Result<(AeadKey, Iv)> {
    match secrets {
        ConnectionTrafficSecrets::Aes128Gcm { key, iv }
        | ConnectionTrafficSecrets::Aes256Gcm { key, iv }
        | ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => Ok((key, iv)),
        _ => Err(io::Error::other(format!(
            "TLS: the cipher suite {:?} is not supported",
            suite.suite()
        ))),
    }
}

/// The decrypter of `suite` for extracted traffic secrets.
fn decrypter(
    suite: SupportedCipherSuite,
    secrets: ConnectionTrafficSecrets,
) -> io::Result<Box<dyn MessageDecrypter>> {
    let (key, iv) = key_iv(suite, secrets)?;
    Ok(match suite {
        SupportedCipherSuite::Tls13(s) => s.aead_alg.decrypter(key, iv),
        SupportedCipherSuite::Tls12(s) => {
            // The extracted IV is the fixed part, then (GCM) the first explicit nonce.
            let fixed = s.aead_alg.key_block_shape().fixed_iv_len;
            s.aead_alg.decrypter(key, &iv.as_ref()[..fixed])
        }
    })
}

/// Encrypts records in place in the caller's buffer with the suite's AEAD (ring, as rustls's
/// own encrypters do, byte for byte the same records: TLS 1.3's inner content type and
/// 5-byte AAD; TLS 1.2's 13-byte AAD and, for AES-GCM, the 8-byte explicit nonce), so a write
/// needs no allocation: rustls's `MessageEncrypter` returns each record in a new `Vec`.
struct Sealer {
    key: ring::aead::LessSafeKey,
    /// The 12-byte IV; a record's nonce is it with the sequence number XORed into its last 8.
    iv: [u8; 12],
    tls13: bool,
    /// TLS 1.2 AES-GCM: the nonce's last 8 bytes are sent before the ciphertext.
    explicit_nonce: bool,
}

impl Sealer {
    /// The sealer of `suite` for extracted traffic secrets.
    fn new(suite: SupportedCipherSuite, secrets: ConnectionTrafficSecrets) -> io::Result<Self> {
        use ring::aead;
        let alg = match &secrets {
            ConnectionTrafficSecrets::Aes128Gcm { .. } => &aead::AES_128_GCM,
            ConnectionTrafficSecrets::Aes256Gcm { .. } => &aead::AES_256_GCM,
            _ => &aead::CHACHA20_POLY1305,
        };
        let gcm = !matches!(secrets, ConnectionTrafficSecrets::Chacha20Poly1305 { .. });
        let (key, iv) = key_iv(suite, secrets)?;
        let iv: [u8; 12] = iv
            .as_ref()
            .try_into()
            .map_err(|_| io::Error::other("TLS: the traffic IV is not 12 bytes"))?;
        let key = aead::UnboundKey::new(alg, key.as_ref())
            .map_err(|_| io::Error::other("TLS: the traffic key does not fit its cipher"))?;
        let tls13 = matches!(suite, SupportedCipherSuite::Tls13(_));
        Ok(Sealer {
            key: aead::LessSafeKey::new(key),
            iv,
            tls13,
            explicit_nonce: !tls13 && gcm,
        })
    }

    /// Append one record of `data` (at most [`MAX_PLAIN`] bytes) of type `typ`, header
    /// included, to `out`, encrypted with sequence number `seq`.
    fn seal(&self, typ: ContentType, data: &[u8], seq: u64, out: &mut Vec<u8>) -> io::Result<()> {
        use ring::aead::{Aad, Nonce};
        const TAG: usize = 16;
        let mut nonce = self.iv;
        for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
            *n ^= s;
        }
        let start = out.len();
        let (body, outer) = if self.tls13 {
            (data.len() + 1 + TAG, ContentType::ApplicationData)
        } else {
            (
                data.len() + TAG + if self.explicit_nonce { 8 } else { 0 },
                typ,
            )
        };
        let [hi, lo] = (body as u16).to_be_bytes();
        out.extend_from_slice(&[u8::from(outer), 3, 3, hi, lo]);
        if self.explicit_nonce {
            out.extend_from_slice(&nonce[4..]);
        }
        let plain_at = out.len();
        out.extend_from_slice(data);
        let sealed = if self.tls13 {
            out.push(u8::from(typ));
            let aad: [u8; 5] = out[start..start + 5].try_into().expect("5 bytes");
            self.key.seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(aad),
                &mut out[plain_at..],
            )
        } else {
            let mut aad = [0u8; 13];
            aad[..8].copy_from_slice(&seq.to_be_bytes());
            aad[8] = u8::from(typ);
            aad[9..11].copy_from_slice(&[3, 3]);
            aad[11..].copy_from_slice(&(data.len() as u16).to_be_bytes());
            self.key.seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(aad),
                &mut out[plain_at..],
            )
        };
        let tag = sealed.map_err(|_| tls_err(rustls::Error::EncryptError))?;
        out.extend_from_slice(tag.as_ref());
        Ok(())
    }
}

impl TlsStream {
    fn is_tls13(&self) -> bool {
        matches!(self.suite, SupportedCipherSuite::Tls13(_))
    }

    /// Decrypt the next whole record of `raw[rpos..rend]` in place: `Some((offset, len))` of
    /// its application data in `raw`, `None` when no whole record is there (or the server
    /// closed the TLS session). Handshake records (TLS 1.3 session tickets, key updates) and
    /// alerts are handled here.
    fn next_record(&mut self) -> io::Result<Option<(usize, usize)>> {
        loop {
            let avail = self.rend - self.rpos;
            if avail < 5 || self.closed {
                return Ok(None);
            }
            let h = &self.raw[self.rpos..self.rpos + 5];
            let typ = ContentType::from(h[0]);
            let version = ProtocolVersion::from(u16::from_be_bytes([h[1], h[2]]));
            let len = u16::from_be_bytes([h[3], h[4]]) as usize;
            if len > MAX_RECORD {
                return Err(tls_err(rustls::Error::PeerMisbehaved(
                    rustls::PeerMisbehaved::IllegalTlsInnerPlaintext,
                )));
            }
            if avail < 5 + len {
                return Ok(None);
            }
            let start = self.rpos + 5;
            self.rpos += 5 + len;
            if typ == ContentType::ChangeCipherSpec && self.is_tls13() {
                continue; // middlebox compatibility, no meaning
            }
            let base = self.raw.as_ptr() as usize;
            let msg = InboundOpaqueMessage::new(typ, version, &mut self.raw[start..start + len]);
            let plain = self.dec.decrypt(msg, self.rx_seq).map_err(tls_err)?;
            self.rx_seq += 1;
            // The plaintext is where its ciphertext was (decrypted in place).
            let off = plain.payload.as_ptr() as usize - base;
            let n = plain.payload.len();
            let ptyp = plain.typ;
            match ptyp {
                ContentType::ApplicationData if n > 0 => return Ok(Some((off, n))),
                ContentType::ApplicationData => {}
                ContentType::Handshake => {
                    let body = self.raw[off..off + n].to_vec();
                    self.handshake_messages(&body)?;
                }
                ContentType::Alert if n == 2 => {
                    let desc = rustls::AlertDescription::from(self.raw[off + 1]);
                    if desc == rustls::AlertDescription::CloseNotify {
                        self.closed = true;
                        return Ok(None);
                    }
                    return Err(tls_err(rustls::Error::AlertReceived(desc)));
                }
                other => {
                    return Err(tls_err(rustls::Error::InappropriateMessage {
                        expect_types: vec![ContentType::ApplicationData],
                        got_type: other,
                    }))
                }
            }
        }
    }

    /// Handshake messages after the handshake: TLS 1.3 session tickets (kept by rustls for
    /// the next connection) and key updates (the receiving key replaced; answered with our
    /// own when asked). TLS 1.2 renegotiation requests are ignored (rustls refuses them too).
    fn handshake_messages(&mut self, mut b: &[u8]) -> io::Result<()> {
        if !self.is_tls13() {
            return Ok(());
        }
        while b.len() >= 4 {
            let typ = b[0];
            let len = u32::from_be_bytes([0, b[1], b[2], b[3]]) as usize;
            if b.len() < 4 + len {
                return Err(io::Error::other(
                    "TLS: a handshake message split across records after the handshake",
                ));
            }
            let body = &b[4..4 + len];
            match typ {
                4 => {
                    // new_session_ticket: a malformed one only costs the next resumption
                    let _ = self.kernel.handle_new_session_ticket(body);
                }
                24 => {
                    let (seq, secrets) = self.kernel.update_rx_secret().map_err(tls_err)?;
                    self.dec = decrypter(self.suite, secrets)?;
                    self.rx_seq = seq;
                    if body.first() == Some(&1) {
                        self.out.clear();
                        self.update_tx_key()?;
                        self.sock.write_all(&self.out)?;
                    }
                }
                _ => {}
            }
            b = &b[4 + len..];
        }
        Ok(())
    }

    /// Append to `out` a TLS 1.3 key update with the current key, then switch keys.
    fn update_tx_key(&mut self) -> io::Result<()> {
        self.seal_one(ContentType::Handshake, &[24, 0, 0, 1, 0])?;
        let (seq, secrets) = self.kernel.update_tx_secret().map_err(tls_err)?;
        self.enc = Sealer::new(self.suite, secrets)?;
        self.tx_seq = seq;
        Ok(())
    }

    /// Append one record of `data` (at most [`MAX_PLAIN`] bytes), header included, to `out`.
    fn seal_one(&mut self, typ: ContentType, data: &[u8]) -> io::Result<()> {
        self.enc.seal(typ, data, self.tx_seq, &mut self.out)?;
        self.tx_seq += 1;
        Ok(())
    }

    /// Make room for at least one more whole record after `rpos` and read what the socket
    /// has; `Ok(0)` at its end.
    fn read_more(&mut self) -> io::Result<usize> {
        if self.rpos == self.rend {
            self.rpos = 0;
            self.rend = 0;
        } else if self.raw.len() - self.rpos < 5 + MAX_RECORD {
            self.raw.copy_within(self.rpos..self.rend, 0);
            self.rend -= self.rpos;
            self.rpos = 0;
        }
        loop {
            match self.sock.read(&mut self.raw[self.rend..]) {
                Ok(k) => {
                    self.rend += k;
                    return Ok(k);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

impl Read for TlsStream {
    /// The plaintext of as many whole records as are here and fit `buf`; reads the socket
    /// only when none is. `Ok(0)` once the server closed (close_notify or the socket's end).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let (p, e) = self.plain;
            if p < e {
                let k = (e - p).min(buf.len());
                buf[..k].copy_from_slice(&self.raw[p..p + k]);
                self.plain.0 += k;
                return Ok(k);
            }
            let mut got = 0;
            while got < buf.len() {
                let Some((off, n)) = self.next_record()? else {
                    break;
                };
                let k = n.min(buf.len() - got);
                buf[got..got + k].copy_from_slice(&self.raw[off..off + k]);
                got += k;
                if k < n {
                    self.plain = (off + k, off + n);
                    break;
                }
            }
            if got > 0 {
                return Ok(got);
            }
            if self.closed || self.read_more()? == 0 {
                return Ok(0);
            }
        }
    }
}

impl Write for TlsStream {
    /// Encrypt all of `buf` (one record per 16 KB) and send it in one call.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.clear();
        if self
            .tx_seq
            .saturating_add(2 + (buf.len() / MAX_PLAIN) as u64)
            >= self.tx_limit
        {
            if !self.is_tls13() {
                return Err(io::Error::other(
                    "TLS 1.2: the cipher's limit of records per key is reached; reconnect",
                ));
            }
            self.update_tx_key()?;
        }
        for c in buf.chunks(MAX_PLAIN) {
            self.seal_one(ContentType::ApplicationData, c)?;
        }
        self.sock.write_all(&self.out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
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
        Some(s.info.clone())
    }

    /// The server's own certificate (DER), over TLS.
    pub fn peer_certificate(&self) -> Option<&[u8]> {
        let Stream::Tls(s) = self else { return None };
        s.peer_cert.as_deref()
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
/// [`super::tls::describe`]); a read timeout set on `sock` bounds the handshake. `config`
/// must allow secret extraction ([`super::tls`] sets it): after the handshake the records
/// are en- and decrypted by [`TlsStream`].
pub fn start_tls(sock: Stream, config: &Arc<ClientConfig>, host: &str) -> io::Result<Stream> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let name = ServerName::try_from(bare.to_string()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{host:?} is not a host name TLS can check"),
        )
    })?;
    let mut conn =
        UnbufferedClientConnection::new(config.clone(), name).map_err(io::Error::other)?;
    let mut sock = sock;
    let mut inb = vec![0u8; RAW_SIZE];
    let mut in_len = 0;
    let mut out = vec![0u8; 4096];
    let mut out_len = 0;
    loop {
        let status = conn.process_tls_records(&mut inb[..in_len]);
        let discard = status.discard;
        let done = match status.state {
            Err(e) => {
                // Send the alert rustls queued, if it can, and report the error.
                let st = conn.process_tls_records(&mut []);
                if let Ok(ConnectionState::EncodeTlsData(mut enc)) = st.state {
                    let mut alert = [0u8; 64];
                    if let Ok(k) = enc.encode(&mut alert) {
                        let _ = sock.write_all(&alert[..k]);
                    }
                }
                return Err(tls_err(e));
            }
            Ok(ConnectionState::EncodeTlsData(mut enc)) => {
                loop {
                    match enc.encode(&mut out[out_len..]) {
                        Ok(k) => {
                            out_len += k;
                            break;
                        }
                        Err(EncodeError::InsufficientSize(s)) => {
                            out.resize(out_len + s.required_size, 0)
                        }
                        Err(e) => return Err(io::Error::other(format!("TLS handshake: {e}"))),
                    }
                }
                false
            }
            Ok(ConnectionState::TransmitTlsData(t)) => {
                sock.write_all(&out[..out_len])?;
                out_len = 0;
                t.done();
                false
            }
            Ok(ConnectionState::BlockedHandshake) => {
                if in_len == inb.len() {
                    inb.resize(inb.len() * 2, 0);
                }
                let k = loop {
                    match sock.read(&mut inb[in_len..]) {
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        r => break r?,
                    }
                };
                if k == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                in_len += k;
                false
            }
            Ok(ConnectionState::WriteTraffic(_)) => true,
            Ok(other) => {
                return Err(io::Error::other(format!(
                    "TLS handshake: unexpected state {other:?}"
                )))
            }
        };
        if discard > 0 {
            inb.copy_within(discard..in_len, 0);
            in_len -= discard;
        }
        if done {
            break;
        }
    }
    let info = TlsInfo {
        version: match conn.protocol_version() {
            Some(ProtocolVersion::TLSv1_3) => "TLSv1.3".to_string(),
            Some(ProtocolVersion::TLSv1_2) => "TLSv1.2".to_string(),
            v => format!("{v:?}"),
        },
        cipher: conn
            .negotiated_cipher_suite()
            .map(|s| {
                let suite = s.suite();
                suite
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("{suite:?}"))
            })
            .unwrap_or_default(),
    };
    let peer_cert = conn
        .peer_certificates()
        .and_then(|c| c.first())
        .map(|c| c.as_ref().to_vec());
    let (secrets, kernel) = conn.dangerous_into_kernel_connection().map_err(tls_err)?;
    let suite = kernel.negotiated_cipher_suite();
    let tx_limit = match suite {
        SupportedCipherSuite::Tls13(s) => s.common.confidentiality_limit,
        SupportedCipherSuite::Tls12(s) => s.common.confidentiality_limit,
    };
    let dec = decrypter(suite, secrets.rx.1)?;
    let enc = Sealer::new(suite, secrets.tx.1)?;
    inb.resize(RAW_SIZE.max(in_len), 0);
    Ok(Stream::Tls(Box::new(TlsStream {
        sock,
        kernel,
        suite,
        dec,
        rx_seq: secrets.rx.0,
        enc,
        tx_seq: secrets.tx.0,
        tx_limit,
        raw: inb,
        rpos: 0,
        rend: in_len,
        plain: (0, 0),
        out: Vec::with_capacity(4096),
        closed: false,
        info,
        peer_cert,
    })))
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
    lost_because(None)
}

/// [`lost`], with what ended the connection when it is known (the server's last words, or the
/// socket's error), so a later call does not hide the cause behind its own failure.
pub fn lost_because(cause: Option<&str>) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotConnected,
        match cause {
            Some(c) => format!("the connection was lost earlier: {c}"),
            None => "the connection was lost earlier".to_string(),
        },
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

#[cfg(test)]
mod tests {
    //! [`TlsStream`] against a rustls server in a thread, over a Unix socket pair: the server
    //! sends its records a few bytes at a time (every record split across reads), changes its
    //! keys (TLS 1.3 key update, the client answering with its own) and closes with
    //! close_notify; the client's writes span several records and (TLS 1.3) change keys every
    //! few records. Every byte must arrive intact and in order, both ways.
    use super::*;
    use crate::dbms::tls::{Settings, Verify};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use rustls::ServerConnection;

    /// Bytes no two positions of which (mod 251) are alike, so a lost, repeated or moved
    /// byte shows.
    fn pattern(n: usize, salt: usize) -> Vec<u8> {
        (0..n).map(|i| ((i * 7 + salt) % 251) as u8).collect()
    }

    fn server_config(dir: &std::path::Path, tls12: bool) -> Arc<rustls::ServerConfig> {
        let (c, k) = (dir.join("c.pem"), dir.join("k.pem"));
        let st = std::process::Command::new("openssl")
            .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
            .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
            .args(["-subj", "/CN=localhost", "-keyout"])
            .arg(&k)
            .arg("-out")
            .arg(&c)
            .stderr(std::process::Stdio::null())
            .status()
            .expect("the openssl command");
        assert!(st.success());
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&c)
            .unwrap()
            .map(|c| c.unwrap())
            .collect();
        let key = PrivateKeyDer::from_pem_file(&k).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let versions: &[&rustls::SupportedProtocolVersion] = if tls12 {
            &[&rustls::version::TLS12]
        } else {
            &[&rustls::version::TLS13]
        };
        let cfg = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        Arc::new(cfg)
    }

    /// Send what `conn` has to send, `step` bytes per write (the client reads records in pieces).
    fn dribble(conn: &mut ServerConnection, sock: &mut UnixStream, step: &mut usize) {
        let mut v = Vec::new();
        while conn.wants_write() {
            conn.write_tls(&mut v).unwrap();
        }
        let mut rest = &v[..];
        while !rest.is_empty() {
            let k = (*step).min(rest.len());
            sock.write_all(&rest[..k]).unwrap();
            sock.flush().unwrap();
            rest = &rest[k..];
            // 1, 2, ... 17 bytes, then a large piece now and then
            *step = if *step >= 17 { 1 } else { *step + 1 };
            if rest.len() > 30000 && *step == 9 {
                let k = 30000;
                sock.write_all(&rest[..k]).unwrap();
                rest = &rest[k..];
            }
        }
    }

    fn round_trip(tls12: bool) {
        let dir = tempfile::tempdir().unwrap();
        let scfg = server_config(dir.path(), tls12);
        let (a, mut b) = UnixStream::pair().unwrap();
        const UP: usize = 80_000;
        const DOWN: usize = 300_000;
        let server = std::thread::spawn(move || {
            let mut conn = ServerConnection::new(scfg).unwrap();
            while conn.is_handshaking() {
                conn.complete_io(&mut b).unwrap();
            }
            // What the client sends (several records), read back whole.
            let mut got = Vec::new();
            while got.len() < UP {
                conn.read_tls(&mut b).unwrap();
                conn.process_new_packets().unwrap();
                let mut chunk = [0u8; 8192];
                while let Ok(k) = conn.reader().read(&mut chunk) {
                    if k == 0 {
                        break;
                    }
                    got.extend_from_slice(&chunk[..k]);
                }
            }
            let mut step = 1;
            let down = pattern(DOWN, 3);
            for (i, part) in down.chunks(DOWN / 6).enumerate() {
                if i == 3 && !tls12 {
                    conn.refresh_traffic_keys().unwrap();
                }
                conn.writer().write_all(part).unwrap();
                dribble(&mut conn, &mut b, &mut step);
            }
            conn.send_close_notify();
            dribble(&mut conn, &mut b, &mut step);
            // What the client sends after it has seen the end (after its answer to the key
            // update, so under its new key).
            let mut last = Vec::new();
            while last.len() < 1000 {
                if conn.read_tls(&mut b).unwrap() == 0 {
                    break;
                }
                conn.process_new_packets().unwrap();
                let mut chunk = [0u8; 1000];
                while let Ok(k) = conn.reader().read(&mut chunk) {
                    if k == 0 {
                        break;
                    }
                    last.extend_from_slice(&chunk[..k]);
                }
            }
            got.extend_from_slice(&last);
            got
        });
        let settings = Settings {
            verify: Verify::Nothing,
            roots: None,
            client_cert: None,
            sni: true,
        };
        let ccfg = settings.client_config(("ca", "cert", "key")).unwrap();
        let mut s = start_tls(Stream::Unix(a), &ccfg, "localhost").unwrap();
        let info = s.tls_info().unwrap();
        assert_eq!(info.version, if tls12 { "TLSv1.2" } else { "TLSv1.3" });
        assert!(s.peer_certificate().is_some());
        if !tls12 {
            // Our own key updates: one every few records (at the cipher's limit otherwise).
            let Stream::Tls(t) = &mut s else {
                unreachable!()
            };
            t.tx_limit = t.tx_seq + 4;
        }
        // Ten writes of one record each, then one of three records.
        let up = pattern(UP, 1);
        for c in up[..40_000].chunks(4000) {
            s.write_all(c).unwrap();
        }
        s.write_all(&up[40_000..]).unwrap();
        // Read as the clients do: InBuf::fill of growing and shrinking sizes.
        let mut inb = InBuf::new();
        let mut seen = Vec::new();
        let mut n = 1;
        while seen.len() < DOWN {
            let want = n.min(DOWN - seen.len());
            inb.fill(&mut s, want).unwrap();
            seen.extend_from_slice(&inb.buf[inb.pos..inb.pos + want]);
            inb.pos += want;
            n = if n > 20_000 { 1 } else { n * 3 + 1 };
        }
        assert!(
            seen == pattern(DOWN, 3),
            "the server's bytes changed on the way"
        );
        let e = inb.fill(&mut s, 1).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        s.write_all(&pattern(1000, 5)).unwrap();
        let got = server.join().unwrap();
        let mut want = pattern(UP, 1);
        want.extend_from_slice(&pattern(1000, 5));
        assert!(got == want, "the client's bytes changed on the way");
    }

    #[test]
    fn tls13_records_split_across_reads_and_key_updates_arrive_intact() {
        round_trip(false);
    }

    #[test]
    fn tls12_records_split_across_reads_arrive_intact() {
        round_trip(true);
    }
}
