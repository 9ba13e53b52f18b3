//! Control-connection states.
//!
//! iperf3 sends its state as one signed byte. Only a few values travel: the server announces
//! phases, the client sends TEST_END, IPERF_DONE and CLIENT_TERMINATE.

/// A control-connection state byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// 1: the server accepted every data stream; the test clock starts.
    TestStart,
    /// 2: data may flow.
    TestRunning,
    /// 4: the client ends the test.
    TestEnd,
    /// 9: the server asks for the parameters.
    ParamExchange,
    /// 10: the server is ready for the data connections.
    CreateStreams,
    /// 11: the server was interrupted.
    ServerTerminate,
    /// 12: the client was interrupted.
    ClientTerminate,
    /// 13: the server asks for the client's results.
    ExchangeResults,
    /// 14: the client may print the final report.
    DisplayResults,
    /// 16: the client is done; the control connection closes.
    IperfDone,
    /// -1: the server is busy with another test.
    AccessDenied,
    /// -2: the server failed; two big-endian int32s (i_errno, errno) follow.
    ServerError,
    /// 80 (wireperf extension): a length-prefixed JSON offer of latency echo ports follows,
    /// before CREATE_STREAMS. Sent only to a client that asked (`wireperf_latency`), so a stock
    /// client never sees it; iperf3 uses no state near this value.
    LatencyOffer,
}

impl State {
    /// The byte on the wire.
    pub fn to_byte(self) -> u8 {
        let v: i8 = match self {
            State::TestStart => 1,
            State::TestRunning => 2,
            State::TestEnd => 4,
            State::ParamExchange => 9,
            State::CreateStreams => 10,
            State::ServerTerminate => 11,
            State::ClientTerminate => 12,
            State::ExchangeResults => 13,
            State::DisplayResults => 14,
            State::IperfDone => 16,
            State::AccessDenied => -1,
            State::ServerError => -2,
            State::LatencyOffer => 80,
        };
        v as u8
    }

    /// Parses a state byte; `None` for values that never travel on the wire.
    pub fn from_byte(b: u8) -> Option<Self> {
        Some(match b as i8 {
            1 => State::TestStart,
            2 => State::TestRunning,
            4 => State::TestEnd,
            9 => State::ParamExchange,
            10 => State::CreateStreams,
            11 => State::ServerTerminate,
            12 => State::ClientTerminate,
            13 => State::ExchangeResults,
            14 => State::DisplayResults,
            16 => State::IperfDone,
            -1 => State::AccessDenied,
            -2 => State::ServerError,
            80 => State::LatencyOffer,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_round_trips_or_is_rejected() {
        for b in 0..=255u8 {
            if let Some(s) = State::from_byte(b) {
                assert_eq!(s.to_byte(), b);
            }
        }
        assert_eq!(State::AccessDenied.to_byte(), 0xff);
        assert_eq!(State::ServerError.to_byte(), 0xfe);
        assert_eq!(State::from_byte(3), None);
    }
}
