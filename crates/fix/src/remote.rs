//! The client's end of the fix channel ([`wireperf_protocol::fix_wire`]): one connection to
//! the server for the whole loop, one request and one answer at a time.
//!
//! The connection is the far host's safety line: the server undoes every step not yet kept
//! when it closes, so this end never has to be told to clean up after a crash.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;
use wireperf_protocol::fix_wire::{
    FIX_COOKIE, FixAnswer, FixRequest, MAX_MESSAGE, decode_answer, encode_request, first_byte_is_frame,
};
use wireperf_protocol::frame::{Expect, FrameReader, Item};

/// How long an answer may take: applying a change on the server runs its doctor (`tc`,
/// `ethtool`), which takes a second or two on a slow board.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the channel could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The server is not a wireperf server with the fix channel (a stock iperf3, an older
    /// wireperf).
    #[error("the server does not take fix requests (a stock iperf3 or an older wireperf server answered)")]
    NotWireperf,
    /// It refused, and why (no `--allow-fix`, authentication, not root, busy).
    #[error("{0}")]
    Refused(String),
    /// The connection failed.
    #[error("fix channel to {host}: {err}")]
    Io {
        /// The server.
        host: String,
        /// What failed.
        err: std::io::Error,
    },
    /// An answer that is not one of the channel's.
    #[error("fix channel: {0}")]
    Protocol(String),
}

/// An open fix channel.
#[derive(Debug)]
pub struct FixChannel {
    sock: TcpStream,
    host: String,
    reader: FrameReader,
    /// The server runs as root (it can change its host).
    pub server_is_root: bool,
}

impl FixChannel {
    /// Connects to `host:port`, reads the server's offer and says hello (with `authtoken` for a
    /// server that authenticates).
    pub fn open(host: &str, port: u16, authtoken: Option<String>) -> Result<FixChannel, RemoteError> {
        let io = |err| RemoteError::Io { host: host.to_string(), err };
        let addr = (host.trim_matches(|c| c == '[' || c == ']'), port)
            .to_socket_addrs()
            .map_err(io)?
            .next()
            .ok_or_else(|| io(std::io::Error::other("no address")))?;
        let sock = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).map_err(io)?;
        sock.set_read_timeout(Some(ANSWER_TIMEOUT)).map_err(io)?;
        sock.set_write_timeout(Some(ANSWER_TIMEOUT)).map_err(io)?;
        let _ = sock.set_nodelay(true);
        let mut ch = FixChannel { sock, host: host.to_string(), reader: FrameReader::new(), server_is_root: false };
        ch.sock.write_all(&FIX_COOKIE).map_err(io)?;
        let mut first = [0u8; 1];
        match ch.sock.read(&mut first) {
            Ok(1) if first_byte_is_frame(first[0]) => ch.reader.push(&first),
            Ok(1) => return Err(RemoteError::NotWireperf),
            Ok(_) => {
                return Err(io(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the server closed the channel without an answer",
                )));
            }
            Err(e) => return Err(io(e)),
        }
        let auth_required = match ch.answer()? {
            FixAnswer::Offer { auth_required } => auth_required,
            FixAnswer::Refused { reason } => return Err(RemoteError::Refused(reason)),
            other => return Err(RemoteError::Protocol(format!("unexpected first answer {other:?}"))),
        };
        if auth_required && authtoken.is_none() {
            return Err(RemoteError::Refused(
                "the server authenticates its clients: give --username and --rsa-public-key-path".into(),
            ));
        }
        match ch.request(&FixRequest::Hello { authtoken })? {
            FixAnswer::Welcome { root } => ch.server_is_root = root,
            FixAnswer::Refused { reason } => return Err(RemoteError::Refused(reason)),
            other => return Err(RemoteError::Protocol(format!("unexpected answer to hello {other:?}"))),
        }
        Ok(ch)
    }

    /// Sends one request and reads its answer.
    pub fn request(&mut self, r: &FixRequest) -> Result<FixAnswer, RemoteError> {
        self.sock.write_all(&encode_request(r)).map_err(|err| RemoteError::Io { host: self.host.clone(), err })?;
        self.answer()
    }

    /// Closes the channel politely (every step is kept or undone by now).
    pub fn bye(mut self) {
        let _ = self.sock.write_all(&encode_request(&FixRequest::Bye));
    }

    fn answer(&mut self) -> Result<FixAnswer, RemoteError> {
        let mut buf = [0u8; 4096];
        loop {
            match self.reader.next(Expect::Json { max_len: MAX_MESSAGE }) {
                Ok(Some(Item::Json(v))) => return decode_answer(v).map_err(|e| RemoteError::Protocol(e.to_string())),
                Ok(Some(_)) => return Err(RemoteError::Protocol("not a JSON answer".into())),
                Ok(None) => {}
                Err(e) => return Err(RemoteError::Protocol(e.to_string())),
            }
            match self.sock.read(&mut buf) {
                Ok(0) => {
                    return Err(RemoteError::Io {
                        host: self.host.clone(),
                        err: std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the server closed the channel"),
                    });
                }
                Ok(n) => self.reader.push(&buf[..n]),
                Err(err) => return Err(RemoteError::Io { host: self.host.clone(), err }),
            }
        }
    }
}
