//! The socket and read buffer under ixbench's own database clients ([`super::pgwire`],
//! [`super::mywire`]): a blocking TCP (no Nagle delay) or Unix stream, and a buffer that
//! reads as much as the kernel has and hands out whole messages in place.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A connected socket.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
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
        }
    }

    pub fn is_unix(&self) -> bool {
        matches!(self, Stream::Unix(_))
    }
}

/// Connect to the first address of `host:port` that accepts within `timeout` (all of them
/// together), with TCP_NODELAY: each statement is one write and waits for its answer.
pub fn open_tcp(host: &str, port: u16, timeout: Duration) -> io::Result<(Stream, SocketAddr)> {
    let t0 = Instant::now();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let mut last = None;
    for a in (bare, port).to_socket_addrs()? {
        let left = timeout
            .saturating_sub(t0.elapsed())
            .max(Duration::from_millis(1));
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
