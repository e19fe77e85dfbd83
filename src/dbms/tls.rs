//! TLS settings of ixbench's own database clients ([`super::pgwire`], [`super::mywire`]):
//! what to check of the server's certificate, which roots to trust, which client certificate
//! to show. They are built once per target into a rustls [`ClientConfig`] that every
//! connection shares (root stores are read once, TLS 1.3 sessions are resumed), and the
//! stream itself is in [`super::netio`].
//!
//! Also here: one-line messages for a handshake that failed (an untrusted certificate, a
//! certificate for another host, an alert from the server) and the `tls-server-end-point`
//! channel binding of SCRAM-SHA-256-PLUS (RFC 5929: the server certificate's hash).
//!
//! rustls with its `ring` provider (see Cargo.toml); no OpenSSL.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, Error as TlsError, RootCertStore,
    SignatureScheme,
};
use sha2::Digest;

/// What a client checks of the server's certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Nothing: the connection is encrypted but the server not authenticated (libpq's
    /// `require` without a root certificate, MySQL's `REQUIRED`).
    Nothing,
    /// The chain up to a trusted root, not the host name (`verify-ca`, `VERIFY_CA`).
    Chain,
    /// The chain and that the certificate names the host connected to (`verify-full`,
    /// `VERIFY_IDENTITY`).
    Full,
}

impl Verify {
    /// How the results name it.
    pub fn name(self) -> &'static str {
        match self {
            Verify::Nothing => "none",
            Verify::Chain => "chain",
            Verify::Full => "chain and host name",
        }
    }
}

/// Where the trusted root certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Roots {
    /// A PEM file of one or more certificates.
    File(PathBuf),
    /// The system's store (`/etc/ssl/certs` on Debian; `SSL_CERT_FILE`/`SSL_CERT_DIR` when set).
    System,
}

/// What a TLS connection should check and show, from a URL's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub verify: Verify,
    /// Required for [`Verify::Chain`] and [`Verify::Full`].
    pub roots: Option<Roots>,
    /// Client certificate chain and its private key (PEM files), both or neither.
    pub client_cert: Option<(PathBuf, PathBuf)>,
    /// Send the host name in the handshake (SNI; never for an IP address).
    pub sni: bool,
}

/// The crypto provider of every connection.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl Settings {
    /// The rustls configuration: files read and checked now, so a bad path or PEM is one
    /// error before any connection. `what` names the parameters in messages (e.g.
    /// `sslrootcert`), as `(roots, cert, key)`.
    pub fn client_config(&self, what: (&str, &str, &str)) -> Result<Arc<ClientConfig>, String> {
        let provider = provider();
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS set-up: {e}"))?;
        let chain = match self.verify {
            Verify::Nothing => None,
            Verify::Chain | Verify::Full => {
                let roots = match &self.roots {
                    Some(r) => load_roots(r, what.0)?,
                    None => return Err(format!("no root certificate to verify with ({})", what.0)),
                };
                let webpki =
                    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                        .build()
                        .map_err(|e| format!("{}: {e}", what.0))?;
                Some(webpki)
            }
        };
        let verifier = Arc::new(Checker {
            provider,
            chain,
            host_name: self.verify == Verify::Full,
        });
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let mut config = match &self.client_cert {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => {
                let chain = read_certs(cert, what.1)?;
                let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                    format!(
                        "{} {}: {} (an unencrypted PEM private key is needed)",
                        what.2,
                        key.display(),
                        pem_error(&e)
                    )
                })?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| format!("{} / {}: {e}", what.1, what.2))?
            }
        };
        config.enable_sni = self.sni;
        // After the handshake netio::TlsStream en- and decrypts the records itself (in place,
        // in its own reused buffers), with the keys rustls hands over.
        config.enable_secret_extraction = true;
        Ok(Arc::new(config))
    }
}

/// Check that `cert` (PEM: the server's certificate, then any intermediates) chains to a root
/// in `ca` and names `host`, as a verifying client will: for a server ixbench starts with
/// TLS, so a set of files no client could trust is refused before the server starts.
pub fn check_server_cert(cert: &Path, ca: &Path, host: &str) -> Result<(), String> {
    let provider = provider();
    let roots = load_roots(&Roots::File(ca.to_path_buf()), "ca.crt")?;
    let chain = read_certs(cert, "server.crt")?;
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|e| format!("ca.crt {}: {e}", ca.display()))?;
    let name = ServerName::try_from(host.to_string()).map_err(|e| format!("{host}: {e}"))?;
    verifier
        .verify_server_cert(&chain[0], &chain[1..], &name, &[], UnixTime::now())
        .map(|_| ())
        .map_err(|e| match e {
            TlsError::InvalidCertificate(CertificateError::UnknownIssuer) => format!(
                "server.crt is not signed by a trusted root (ca.crt {}): no client that trusts \
                 ca.crt could connect; nothing started",
                ca.display()
            ),
            TlsError::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            ) => format!(
                "server.crt {} does not name {host} (the address clients connect to); nothing \
                 started",
                cert.display()
            ),
            e => format!("server.crt {}: {e}", cert.display()),
        })
}

fn pem_error(e: &rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(e) => e.to_string(),
        rustls::pki_types::pem::Error::NoItemsFound => "no PEM item of the expected kind".into(),
        e => format!("{e:?}"),
    }
}

/// Every certificate of a PEM file (at least one).
fn read_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let bad = |e: &dyn std::fmt::Display| format!("{what} {}: {e}", path.display());
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(&pem_error(&e)))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(&pem_error(&e)))?;
    if certs.is_empty() {
        return Err(bad(&"no PEM certificate in it"));
    }
    Ok(certs)
}

fn load_roots(roots: &Roots, what: &str) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::File(path) => {
            for c in read_certs(path, what)? {
                store
                    .add(c)
                    .map_err(|e| format!("{what} {}: {e}", path.display()))?;
            }
        }
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found
                    .errors
                    .first()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default();
                return Err(format!(
                    "{what}=system: no root certificates found on this system{why}: install \
                     ca-certificates, or give {what}=FILE"
                ));
            }
        }
    }
    Ok(store)
}

/// What [`Verify`] checks of the server's certificate, as rustls's verifier: nothing
/// (`chain: None`), the chain up to a trusted root, or the chain and the host name. The
/// handshake's signatures are checked with the certificate's key in every case, so the stream
/// is encrypted to whoever holds that key.
#[derive(Debug)]
struct Checker {
    provider: Arc<CryptoProvider>,
    /// The chain's check (webpki); `None`: the certificate is not checked.
    chain: Option<Arc<WebPkiServerVerifier>>,
    /// Whether the certificate must name the host connected to.
    host_name: bool,
}

impl ServerCertVerifier for Checker {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            // webpki checks the chain before the name: a name error means the chain was good.
            Err(TlsError::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.host_name => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A failed handshake in words a user can act on (one line). `roots` names the root
/// certificate parameter (`sslrootcert`, `ssl-ca`), `cert` the client certificate's.
pub fn describe(e: &std::io::Error, roots: &str, cert: &str) -> String {
    let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<TlsError>()) else {
        return match e.kind() {
            std::io::ErrorKind::UnexpectedEof => {
                "the server closed the connection during the TLS handshake".into()
            }
            _ => format!("TLS handshake: {e}"),
        };
    };
    use CertificateError as C;
    match tls {
        TlsError::InvalidCertificate(c) => match c {
            C::UnknownIssuer => format!(
                "the server's certificate is not signed by a trusted root (check {roots}, or \
                 use a mode that does not verify)"
            ),
            C::NotValidForNameContext {
                expected,
                presented,
            } => format!(
                "the server's certificate is not valid for host {} (it names {}): connect by \
                 a name it holds, or verify the chain only",
                expected.to_str(),
                if presented.is_empty() {
                    "no host".to_string()
                } else {
                    presented
                        .iter()
                        .map(|p| bare_name(p))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
            C::NotValidForName => {
                "the server's certificate is not valid for the host name connected to".into()
            }
            C::Expired | C::ExpiredContext { .. } => "the server's certificate has expired".into(),
            C::NotValidYet | C::NotValidYetContext { .. } => {
                "the server's certificate is not valid yet (check the clocks)".into()
            }
            C::Revoked => "the server's certificate is revoked".into(),
            other => format!("the server's certificate was refused: {other:?}"),
        },
        TlsError::AlertReceived(a) => {
            use rustls::AlertDescription as A;
            let hint = match a {
                A::CertificateRequired | A::HandshakeFailure | A::BadCertificate => {
                    format!(" (does it want a client certificate? see {cert})")
                }
                A::UnknownCA => format!(" (it does not trust the client certificate, {cert})"),
                A::ProtocolVersion => " (it speaks no TLS version ixbench does: 1.2 or 1.3)".into(),
                _ => String::new(),
            };
            format!("the server refused the TLS handshake (alert {a:?}){hint}")
        }
        other => format!("TLS handshake: {other}"),
    }
}

/// `localhost` of rustls's `DnsName("localhost")` (names are shown in their debug form).
fn bare_name(p: &str) -> &str {
    match (p.find("(\""), p.rfind("\")")) {
        (Some(a), Some(b)) if a + 2 <= b => &p[a + 2..b],
        _ => p,
    }
}

/// The `tls-server-end-point` channel binding data of a server certificate (DER): its hash
/// with the hash function of its signature algorithm, SHA-256 for MD5 and SHA-1 (RFC 5929,
/// 4.1). `None` when the algorithm names no single hash (Ed25519, RSASSA-PSS) or the
/// certificate cannot be read: then the client does not offer channel binding (as libpq).
pub fn server_end_point(cert: &[u8]) -> Option<Vec<u8>> {
    // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm AlgorithmIdentifier, ... }
    let (tag, body, _) = der(cert)?;
    if tag != 0x30 {
        return None;
    }
    let (_, _, after_tbs) = der(body)?;
    let (tag, alg, _) = der(after_tbs)?;
    if tag != 0x30 {
        return None;
    }
    let (tag, oid, _) = der(alg)?;
    if tag != 0x06 {
        return None;
    }
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04];
    let hash = match oid {
        // md5WithRSA, sha1WithRSA, sha256WithRSA; ecdsa-with-SHA1, -SHA256
        o if o
            .strip_prefix(RSA)
            .is_some_and(|r| matches!(r, [4] | [5] | [11])) =>
        {
            256
        }
        o if o
            .strip_prefix(ECDSA)
            .is_some_and(|r| matches!(r, [1] | [3, 2])) =>
        {
            256
        }
        o if o.strip_prefix(RSA) == Some(&[14]) || o.strip_prefix(ECDSA) == Some(&[3, 1]) => 224,
        o if o.strip_prefix(RSA) == Some(&[12]) || o.strip_prefix(ECDSA) == Some(&[3, 3]) => 384,
        o if o.strip_prefix(RSA) == Some(&[13]) || o.strip_prefix(ECDSA) == Some(&[3, 4]) => 512,
        _ => return None,
    };
    Some(match hash {
        224 => sha2::Sha224::digest(cert).to_vec(),
        256 => sha2::Sha256::digest(cert).to_vec(),
        384 => sha2::Sha384::digest(cert).to_vec(),
        _ => sha2::Sha512::digest(cert).to_vec(),
    })
}

/// One DER element at the start of `b`: (tag, contents, what follows).
fn der(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let tag = *b.first()?;
    let first = *b.get(1)? as usize;
    let (len, at) = if first < 0x80 {
        (first, 2)
    } else {
        let n = first & 0x7f;
        if n == 0 || n > 4 {
            return None;
        }
        let len = b
            .get(2..2 + n)?
            .iter()
            .fold(0usize, |acc, &x| (acc << 8) | x as usize);
        (len, 2 + n)
    };
    let end = at.checked_add(len)?;
    Some((tag, b.get(at..end)?, b.get(end..)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A certificate skeleton: SEQUENCE { tbs, AlgorithmIdentifier { oid }, BIT STRING }.
    fn cert_with(oid: &[u8]) -> Vec<u8> {
        let mut alg = vec![0x06, oid.len() as u8];
        alg.extend_from_slice(oid);
        let mut body = vec![0x30, 3, 0x02, 1, 7]; // tbs: SEQUENCE { INTEGER 7 }
        body.push(0x30);
        body.push(alg.len() as u8);
        body.extend_from_slice(&alg);
        body.extend_from_slice(&[0x03, 2, 0, 0xff]);
        let mut c = vec![0x30, body.len() as u8];
        c.extend_from_slice(&body);
        c
    }

    #[test]
    fn channel_binding_hash_follows_the_signature_algorithm() {
        let sha256_rsa = cert_with(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 11]);
        assert_eq!(
            server_end_point(&sha256_rsa).unwrap(),
            sha2::Sha256::digest(&sha256_rsa).to_vec()
        );
        // SHA-1 is replaced by SHA-256 (RFC 5929).
        let sha1_rsa = cert_with(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 5]);
        assert_eq!(server_end_point(&sha1_rsa).unwrap().len(), 32);
        let ecdsa384 = cert_with(&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 3, 3]);
        assert_eq!(
            server_end_point(&ecdsa384).unwrap(),
            sha2::Sha384::digest(&ecdsa384).to_vec()
        );
        // Ed25519 names no hash: no channel binding.
        assert_eq!(server_end_point(&cert_with(&[0x2b, 0x65, 0x70])), None);
        assert_eq!(server_end_point(&[0x30, 0x05, 1]), None);
    }

    #[test]
    fn presented_names_lose_their_debug_form() {
        assert_eq!(bare_name("DnsName(\"db.example\")"), "db.example");
        assert_eq!(bare_name("127.0.0.1"), "127.0.0.1");
    }

    #[test]
    fn verification_needs_roots_and_files_are_checked_early() {
        let s = Settings {
            verify: Verify::Full,
            roots: None,
            client_cert: None,
            sni: true,
        };
        let e = s
            .client_config(("sslrootcert", "sslcert", "sslkey"))
            .unwrap_err();
        assert!(e.contains("sslrootcert"), "{e}");
        let s = Settings {
            roots: Some(Roots::File("/nonexistent/root.crt".into())),
            ..s
        };
        let e = s
            .client_config(("sslrootcert", "sslcert", "sslkey"))
            .unwrap_err();
        assert!(e.contains("/nonexistent/root.crt"), "{e}");
        let s = Settings {
            verify: Verify::Nothing,
            roots: None,
            ..s
        };
        assert!(s.client_config(("a", "b", "c")).is_ok());
    }
}
