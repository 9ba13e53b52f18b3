//! The exporter's errors: starting and serving the HTTP endpoints.

use std::io;

/// Why an exporter endpoint could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The listen address does not parse or resolve.
    #[error("bad listen address '{addr}': {why}")]
    Address {
        /// As given.
        addr: String,
        /// What is wrong.
        why: String,
    },
    /// Binding or configuring the listening socket failed.
    #[error("unable to listen for HTTP: {0}")]
    Listen(io::Error),
    /// The async runtime could not start.
    #[error("unable to start the HTTP runtime: {0}")]
    Runtime(io::Error),
    /// The server thread could not start.
    #[error("unable to start the metrics thread: {0}")]
    Thread(io::Error),
    /// Serving failed.
    #[error("HTTP server failed: {0}")]
    Serve(io::Error),
}

/// Binds a listener on `addr` (`HOST:PORT`, `[V6]:PORT`, or `:PORT` for all addresses).
pub fn bind(addr: &str) -> Result<std::net::TcpListener, Error> {
    let full = if addr.starts_with(':') { format!("0.0.0.0{addr}") } else { addr.to_string() };
    let bad = |why: String| Error::Address { addr: addr.to_string(), why };
    let mut addrs = std::net::ToSocketAddrs::to_socket_addrs(&full).map_err(|e| bad(e.to_string()))?;
    let first = addrs.next().ok_or_else(|| bad("no address".into()))?;
    std::net::TcpListener::bind(first).map_err(Error::Listen)
}
