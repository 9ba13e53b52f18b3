//! Engine failures, each with the iperf3 error code a stock tool would report.

use std::io;
use wireperf_protocol::IperfErrno;
use wireperf_protocol::client::ClientError;
use wireperf_protocol::server::ServerError;

/// An OS error as iperf3 prints it: `strerror`'s text alone. Rust's `io::Error` adds
/// " (os error N)", which no iperf3 message has and which a script matching iperf3's
/// messages would trip on.
fn os_text(err: &io::Error) -> String {
    let text = err.to_string();
    match err.raw_os_error() {
        Some(code) => text.strip_suffix(&format!(" (os error {code})")).map_or_else(|| text.clone(), str::to_string),
        None => text,
    }
}

/// Why a test failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The server could not be reached.
    #[error("unable to connect to server - server may have stopped running or use a different port, firewall issue, etc.: {}", os_text(.0))]
    Connect(io::Error),
    /// The host name did not resolve.
    #[error("unable to resolve host {host}: {reason}")]
    Resolve {
        /// Host as given.
        host: String,
        /// Resolver message.
        reason: String,
    },
    /// A data stream could not be connected.
    #[error("unable to connect stream: {}", os_text(.0))]
    StreamConnect(io::Error),
    /// The IPv6 flow label (`-L`) could not be set, or the server is reached over IPv4. The
    /// message is iperf3's, which names no OS error.
    #[error("unable to set IPv6 flow label")]
    FlowLabel {
        /// The OS error, or why the destination cannot carry a label.
        #[source]
        err: io::Error,
    },
    /// `-A` (or a client's `server_affinity`) named a CPU this thread cannot be pinned to.
    #[error("unable to set CPU affinity: {}", os_text(.0))]
    Affinity(io::Error),
    /// Writing or reading the control connection failed.
    #[error("unable to {op} the control socket: {}", os_text(err))]
    Ctrl {
        /// `read from` / `write to`.
        op: &'static str,
        /// The OS error.
        err: io::Error,
    },
    /// The client-side protocol broke down.
    #[error("{0}")]
    ClientProtocol(#[from] ClientError),
    /// The server-side protocol broke down.
    #[error("{0}")]
    ServerProtocol(#[from] ServerError),
    /// The server said it is busy.
    #[error("the server is busy running a test. try again later")]
    AccessDenied,
    /// The server reported an error.
    #[error("{}", server_error_text(*.i_errno, *.errno))]
    ServerReported {
        /// iperf3 code.
        i_errno: IperfErrno,
        /// OS errno.
        errno: Option<i32>,
    },
    /// The server was interrupted.
    #[error("the server has terminated")]
    ServerTerminated,
    /// The client was interrupted.
    #[error("the client has terminated")]
    ClientTerminated,
    /// A data stream failed.
    #[error("unable to {op} stream socket: {}", os_text(err))]
    Stream {
        /// `write to` / `read from`.
        op: &'static str,
        /// The OS error.
        err: io::Error,
    },
    /// No data arrived for `--rcv-timeout`.
    #[error("idle timeout for receiving data")]
    RecvTimeout,
    /// A socket option could not be set.
    #[error("{what}: {}", os_text(err))]
    SocketOption {
        /// What was being set.
        what: &'static str,
        /// The OS error.
        err: io::Error,
    },
    /// The request is not supported by this build.
    #[error("{0} is not supported yet")]
    Unsupported(&'static str),
    /// The test was refused for its parameters.
    #[error("{0}")]
    Refused(String),
    /// Listening failed.
    #[error("unable to start listener for connections: {}", os_text(.0))]
    Listen(io::Error),
    /// `-F` file could not be read or written.
    #[error("unable to open -F file {path}: {}", os_text(err))]
    File {
        /// The file.
        path: String,
        /// The OS error.
        err: io::Error,
    },
    /// Timed out waiting for the server.
    #[error("timed out {0}")]
    Timeout(&'static str),
    /// The server's policy refused the test (a limit or authentication); the client is told
    /// `i_errno`, the server log gets `reason`.
    #[error("{reason}")]
    Policy {
        /// The iperf3 code sent in SERVER_ERROR.
        i_errno: IperfErrno,
        /// What was wrong, for the server's log.
        reason: String,
    },
}

fn server_error_text(code: IperfErrno, errno: Option<i32>) -> String {
    match errno {
        Some(e) if e > 0 => format!("{}: {}", code.message(), io::Error::from_raw_os_error(e)),
        _ => code.message(),
    }
}

impl EngineError {
    /// The iperf3 error code for this failure (sent to a client in SERVER_ERROR).
    pub fn errno(&self) -> IperfErrno {
        match self {
            EngineError::Connect(_) | EngineError::Resolve { .. } => IperfErrno::CONNECT,
            EngineError::StreamConnect(_) => IperfErrno::STREAMCONNECT,
            EngineError::FlowLabel { .. } => IperfErrno::SETFLOW,
            EngineError::Affinity(_) => IperfErrno::AFFINITY,
            EngineError::Ctrl { op, .. } if op.starts_with("read") => IperfErrno::CTRLREAD,
            EngineError::Ctrl { .. } => IperfErrno::CTRLWRITE,
            EngineError::ClientProtocol(e) => e.errno(),
            EngineError::ServerProtocol(e) => e.errno(),
            EngineError::AccessDenied => IperfErrno::ACCESSDENIED,
            EngineError::ServerReported { i_errno, .. } => *i_errno,
            EngineError::ServerTerminated => IperfErrno::SERVERTERM,
            EngineError::ClientTerminated => IperfErrno::CLIENTTERM,
            EngineError::Stream { op, .. } if op.starts_with("read") => IperfErrno::STREAMREAD,
            EngineError::Stream { .. } => IperfErrno::STREAMWRITE,
            EngineError::RecvTimeout => IperfErrno::NOMSG,
            EngineError::SocketOption { .. } => IperfErrno::INITSTREAM,
            EngineError::Unsupported(_) => IperfErrno::UNIMP,
            EngineError::Refused(_) => IperfErrno::RECVPARAMS,
            EngineError::Listen(_) => IperfErrno::LISTEN,
            EngineError::Timeout(_) => IperfErrno::NOMSG,
            EngineError::Policy { i_errno, .. } => *i_errno,
            EngineError::File { .. } => IperfErrno::FILE,
        }
    }

    /// The OS errno behind the failure, if any.
    pub fn os_errno(&self) -> i32 {
        match self {
            EngineError::Connect(e)
            | EngineError::StreamConnect(e)
            | EngineError::FlowLabel { err: e }
            | EngineError::Affinity(e)
            | EngineError::Listen(e)
            | EngineError::Ctrl { err: e, .. }
            | EngineError::Stream { err: e, .. }
            | EngineError::SocketOption { err: e, .. }
            | EngineError::File { err: e, .. } => e.raw_os_error().unwrap_or(0),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_errors_read_as_iperf3_prints_them() {
        let refused = EngineError::Connect(io::Error::from_raw_os_error(libc::ECONNREFUSED));
        assert_eq!(
            refused.to_string(),
            "unable to connect to server - server may have stopped running or use a different port, \
             firewall issue, etc.: Connection refused"
        );
        // An error that is not the OS's keeps its own text.
        let other = EngineError::Stream { op: "write to", err: io::Error::other("peer went away") };
        assert_eq!(other.to_string(), "unable to write to stream socket: peer went away");
    }
}
