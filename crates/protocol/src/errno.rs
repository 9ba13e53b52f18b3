//! iperf3's `i_errno` codes.
//!
//! A server reports failures to the client as SERVER_ERROR followed by an `i_errno`; stock
//! clients then print `iperf3: error - <message>`. The numbers are part of the wire protocol
//! (identical from 3.12 to 3.22 where both have them); the messages are 3.22's, the newest a
//! user will have seen (3.22 changed a few, e.g. the `-P` range and the 32767-byte MSS limit).

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
    NUMSTREAMS = 6, "invalid number of parallel streams (min = 1, max = 128)";
    BLOCKSIZE = 7, "block size too large (maximum = 1048576 bytes)";
    BUFSIZE = 8, "socket buffer size too large (maximum = 536870912 bytes)";
    INTERVAL = 9, "invalid report interval (min = 0.1, max = 60 seconds)";
    MSS = 10, "TCP MSS too large (maximum = 32767 bytes)";
    NOSENDFILE = 11, "this OS does not support sendfile";
    OMIT = 12, "bogus value for --omit (maximum = 600 seconds)";
    UNIMP = 13, "an option you are trying to set is not implemented yet";
    FILE = 14, "unable to open -F file";
    BURST = 15, "invalid burst count (maximum = 1000)";
    ENDCONDITIONS = 16, "only one test end condition (-t, -n, -k) may be specified";
    LOGFILE = 17, "unable to open log file";
    NOSCTP = 18, "no SCTP support available";
    UDPBLOCKSIZE = 20, "block size invalid (minimum = 16 bytes, maximum = 65507 bytes)";
    BADTOS = 21, "bad TOS value (must be between 0 and 255 inclusive)";
    SETCLIENTAUTH = 22, "you must specify a username, password, and path to a valid RSA public key";
    SETSERVERAUTH = 23, "you must specify a path to a valid RSA private key and a user credential file";
    BADFORMAT = 24, "bad format specifier (valid formats are in the set [kmgtKMGT])";
    REVERSEBIDIR = 25, "cannot be both reverse and bidirectional";
    BADPORT = 26, "port number must be between 1 and 65535 inclusive";
    TOTALRATE = 27, "total required bandwidth is larger than server limit";
    TOTALINTERVAL = 28, "invalid time interval for calculating average data rate";
    SKEWTHRESHOLD = 29, "skew threshold must be a positive number";
    IDLETIMEOUT = 30, "idle timeout parameter is not positive or larger than allowed limit";
    RCVTIMEOUT = 31, "receive timeout value is incorrect or not in range";
    RVRSONLYRCVTIMEOUT = 32, "client receive timeout is valid only in receiving mode";
    SNDTIMEOUT = 33, "send timeout value is incorrect or not in range";
    UDPFILETRANSFER = 34, "cannot transfer file using UDP";
    SERVERAUTHUSERS = 35, "cannot access authorized users file";
    CNTLKA = 36, "control connection Keepalive period should be larger than the full retry period (interval * count)";
    MAXSERVERTESTDURATIONEXCEEDED = 37, "client's requested duration exceeds the server's maximum permitted limit";
    UNITVAL = 38, "invalid unit value or suffix";
    RVRSONLYSKIPRXCOPY = 39, "this OS does not support --skip-rx-copy";
    BADDSCP = 40, "bad DSCP value (numeric: 0-63 inclusive, symbolic: one of [af11-13, af21-23, af31-33, af41-43, cs1-7, ef, va, lowdelay, throughput, reliability])";
    NEWTEST = 100, "unable to create a new test";
    INITTEST = 101, "test initialization failed";
    LISTEN = 102, "unable to start listener for connections";
    CONNECT = 103, "unable to connect to server - server may have stopped running or use a different port, firewall issue, etc.";
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
    SETFLOW = 127, "unable to set IPv6 flow label";
    REUSEADDR = 128, "unable to reuse address on socket";
    NONBLOCKING = 129, "unable to set socket to non-blocking";
    SETWINDOWSIZE = 130, "unable to set socket window size";
    PROTOCOL = 131, "protocol does not exist";
    AFFINITY = 132, "unable to set CPU affinity";
    DAEMON = 133, "unable to become a daemon";
    SETCONGESTION = 134, "unable to set TCP_CONGESTION: Supplied congestion control algorithm not supported on this host";
    PIDFILE = 135, "unable to write PID file";
    V6ONLY = 136, "Unable to set/reset IPV6_V6ONLY";
    SETSCTPDISABLEFRAG = 137, "unable to set SCTP_DISABLE_FRAGMENTS";
    SETSCTPNSTREAM = 138, "unable to set SCTP_INIT num of SCTP streams";
    SETPACING = 140, "unable to set socket pacing";
    SETBUF2 = 141, "socket buffer size not set correctly";
    AUTHTEST = 142, "test authorization failed";
    BINDDEV = 143, "Unable to bind-to-device (check perror, maybe permissions?)";
    NOMSG = 144, "idle timeout for receiving data";
    SETDONTFRAGMENT = 145, "unable to set IP Do-Not-Fragment flag";
    BINDDEVNOSUPPORT = 146, "`<ip>%<dev>` is not supported as system does not support bind to device";
    HOSTDEV = 147, "host device name (ip%<dev>) is supported (and required) only for IPv6 link-local address";
    SETUSERTIMEOUT = 148, "unable to set TCP USER_TIMEOUT";
    PTHREADCREATE = 150, "unable to create thread";
    PTHREADCANCEL = 151, "unable to cancel thread";
    PTHREADJOIN = 152, "unable to join thread";
    PTHREADATTRINIT = 153, "unable to create thread attributes";
    PTHREADATTRDESTROY = 154, "unable to destroy thread attributes";
    SETCNTLKA = 155, "unable to set socket keepalive (SO_KEEPALIVE) option";
    SETCNTLKAKEEPIDLE = 156, "unable to set socket keepalive TCP period (TCP_KEEPIDLE) option";
    SETCNTLKAINTERVAL = 157, "unable to set/get socket keepalive TCP retry interval (TCP_KEEPINTVL) option";
    SETCNTLKACOUNT = 158, "unable to set/get socket keepalive TCP number of retries (TCP_KEEPCNT) option";
    PTHREADSIGMASK = 159, "unable to change mask of blocked signals";
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
    NEWTIMER = 300, "unable to create new timer";
    UPDATETIMER = 301, "unable to update timer";
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
        // Codes added after 3.12, and 3.22's wording where it changed.
        assert_eq!(IperfErrno(39).message(), "this OS does not support --skip-rx-copy");
        assert_eq!(IperfErrno(155).message(), "unable to set socket keepalive (SO_KEEPALIVE) option");
        assert_eq!(IperfErrno::NUMSTREAMS.message(), "invalid number of parallel streams (min = 1, max = 128)");
        assert_eq!(IperfErrno::MSS.message(), "TCP MSS too large (maximum = 32767 bytes)");
        for code in (34..=40).chain(150..=160) {
            assert!(!IperfErrno(code).message().starts_with("unknown"), "{code}");
        }
    }
}
