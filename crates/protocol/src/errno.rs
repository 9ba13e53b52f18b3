//! iperf3's `i_errno` codes.
//!
//! A server reports failures to the client as SERVER_ERROR followed by an `i_errno`; stock
//! clients then print `iperf3: error - <message>`. The numbers are part of the wire protocol
//! (identical in 3.12 and 3.21 where both have them), the messages are what users already know.

use std::fmt;

/// An iperf3 `i_errno` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IperfErrno(pub i32);

macro_rules! codes {
    ($($name:ident = $val:expr, $msg:expr;)*) => {
        impl IperfErrno {
            $(
                #[doc = $msg]
                pub const $name: IperfErrno = IperfErrno($val);
            )*

            /// The text a stock iperf3 prints for this code (without any `: strerror` tail).
            pub fn message(self) -> String {
                match self.0 {
                    $($val => $msg.to_string(),)*
                    other => format!("unknown iperf3 error code {other}"),
                }
            }
        }
    };
}

codes! {
    NONE = 0, "no error";
    SERVCLIENT = 1, "cannot be both server and client";
    NOROLE = 2, "must either be a client (-c) or server (-s)";
    SERVERONLY = 3, "some option you are trying to set is server only";
    CLIENTONLY = 4, "some option you are trying to set is client only";
    DURATION = 5, "test duration valid values are 0 to 86400 seconds";
    NUMSTREAMS = 6, "number of parallel streams too large (maximum = 128)";
    BLOCKSIZE = 7, "block size too large (maximum = 1048576 bytes)";
    BUFSIZE = 8, "socket buffer size too large (maximum = 536870912 bytes)";
    INTERVAL = 9, "invalid report interval (min = 0.1, max = 60 seconds)";
    MSS = 10, "TCP MSS too large (maximum = 9216 bytes)";
    OMIT = 12, "bogus value for --omit (maximum = 600 seconds)";
    UNIMP = 13, "an option you are trying to set is not implemented yet";
    FILE = 14, "unable to open -F file";
    BURST = 15, "invalid burst count (maximum = 1000)";
    ENDCONDITIONS = 16, "only one test end condition (-t, -n, -k) may be specified";
    LOGFILE = 17, "unable to open log file";
    UDPBLOCKSIZE = 20, "block size invalid (minimum = 16 bytes, maximum = 65507 bytes)";
    BADTOS = 21, "bad TOS value (must be between 0 and 255 inclusive)";
    BADFORMAT = 24, "bad format specifier (valid formats are in the set [kmgtKMGT])";
    REVERSEBIDIR = 25, "cannot be both reverse and bidirectional";
    BADPORT = 26, "port number must be between 1 and 65535 inclusive";
    TOTALRATE = 27, "total required bandwidth is larger than server limit";
    IDLETIMEOUT = 30, "idle timeout parameter is not positive or larger than allowed limit";
    RCVTIMEOUT = 31, "receive timeout value is incorrect or not in range";
    SNDTIMEOUT = 33, "send timeout value is incorrect or not in range";
    UDPFILETRANSFER = 34, "cannot transfer file using UDP";
    MAXSERVERTESTDURATIONEXCEEDED = 37, "client's requested duration exceeds the server's maximum permitted limit";
    NEWTEST = 100, "unable to create a new test";
    INITTEST = 101, "test initialization failed";
    LISTEN = 102, "unable to start listener for connections";
    CONNECT = 103, "unable to connect to server";
    ACCEPT = 104, "unable to accept connection from client";
    SENDCOOKIE = 105, "unable to send cookie to server";
    RECVCOOKIE = 106, "unable to receive cookie at server";
    CTRLWRITE = 107, "unable to write to the control socket";
    CTRLREAD = 108, "unable to read from the control socket";
    CTRLCLOSE = 109, "control socket has closed unexpectedly";
    MESSAGE = 110, "received an unknown control message (ensure other side is iperf3 and not iperf)";
    SENDMESSAGE = 111, "unable to send control message - port may not be available, the other side may have stopped running, etc.";
    RECVMESSAGE = 112, "unable to receive control message - port may not be available, the other side may have stopped running, etc.";
    SENDPARAMS = 113, "unable to send parameters to server";
    RECVPARAMS = 114, "unable to receive parameters from client";
    PACKAGERESULTS = 115, "unable to package results";
    SENDRESULTS = 116, "unable to send results";
    RECVRESULTS = 117, "unable to receive results";
    SELECT = 118, "select failed";
    CLIENTTERM = 119, "the client has terminated";
    SERVERTERM = 120, "the server has terminated";
    ACCESSDENIED = 121, "the server is busy running a test. try again later";
    SETNODELAY = 122, "unable to set TCP/SCTP NODELAY";
    SETMSS = 123, "unable to set TCP/SCTP MSS";
    SETBUF = 124, "unable to set socket buffer size";
    SETTOS = 125, "unable to set IP TOS";
    SETCOS = 126, "unable to set IPv6 traffic class";
    REUSEADDR = 128, "unable to reuse address on socket";
    SETWINDOWSIZE = 130, "unable to set socket window size";
    PROTOCOL = 131, "protocol does not exist";
    AFFINITY = 132, "unable to set CPU affinity";
    DAEMON = 133, "unable to become a daemon";
    SETCONGESTION = 134, "unable to set TCP_CONGESTION: Supplied congestion control algorithm not supported on this host";
    PIDFILE = 135, "unable to write PID file";
    SETPACING = 140, "unable to set socket pacing";
    SETBUF2 = 141, "socket buffer size not set correctly";
    AUTHTEST = 142, "test authorization failed";
    BINDDEV = 143, "Unable to bind-to-device (check perror, maybe permissions?)";
    NOMSG = 144, "idle timeout for receiving data";
    SETDONTFRAGMENT = 145, "unable to set IP Do-Not-Fragment flag";
    SETUSERTIMEOUT = 148, "unable to set TCP USER_TIMEOUT";
    SERVERTESTDURATIONEXPIRED = 160, "server test duration expired";
    CREATESTREAM = 200, "unable to create a new stream";
    INITSTREAM = 201, "unable to initialize stream";
    STREAMLISTEN = 202, "unable to start stream listener";
    STREAMCONNECT = 203, "unable to connect stream";
    STREAMACCEPT = 204, "unable to accept stream connection";
    STREAMWRITE = 205, "unable to write to stream socket";
    STREAMREAD = 206, "unable to read from stream socket";
    STREAMCLOSE = 207, "stream socket has closed unexpectedly";
    STREAMID = 208, "stream has an invalid id";
}

impl fmt::Display for IperfErrno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_what_stock_clients_print() {
        assert_eq!(IperfErrno::ACCESSDENIED.message(), "the server is busy running a test. try again later");
        assert_eq!(IperfErrno(27).message(), "total required bandwidth is larger than server limit");
        assert!(IperfErrno(9999).message().contains("9999"));
    }
}
