//! The client side of the control connection.
//!
//! The session turns bytes from the server into [`ClientEvent`]s and the engine's decisions
//! (end the test, here are my results, I am done) into bytes. It never blocks and never reads
//! a clock: the engine owns sockets and timers.

use crate::cookie::Cookie;
use crate::errno::IperfErrno;
use crate::frame::{Expect, FrameError, FrameReader, Item, encode_json};
use crate::params::TestParams;
use crate::results::{ExchangeResults, ResultsError};
use crate::state::State;
use serde_json::Value;
use std::collections::VecDeque;

/// Largest server results message accepted: it can carry the server's whole `-J` output.
pub const MAX_SERVER_RESULTS: u32 = 256 * 1024 * 1024;

/// Largest latency offer accepted: a few ports and a token.
pub const MAX_LATENCY_OFFER: u32 = 4096;

/// Something the engine must act on.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientEvent {
    /// A wireperf server's latency echo offer (asked for with `wireperf_latency`), before
    /// [`ClientEvent::CreateStreams`]. Its shape belongs to the caller's prober.
    LatencyOffer(Value),
    /// The server accepted the parameters: open the data connections now.
    CreateStreams,
    /// All streams were accepted; start the clocks.
    TestStart,
    /// Data may flow.
    TestRunning,
    /// The server asks for our results: call [`ClientSession::send_results`].
    ExchangeResults,
    /// The server's results arrived.
    ServerResults(Box<ExchangeResults>),
    /// The final report may be printed; then call [`ClientSession::done`].
    DisplayResults,
    /// The server refused the test because it is busy.
    AccessDenied,
    /// The server reported an error.
    ServerError {
        /// iperf3 error code.
        i_errno: IperfErrno,
        /// The server's OS errno, when sent.
        errno: Option<i32>,
    },
    /// The server was interrupted.
    ServerTerminate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    AwaitParamExchange,
    AwaitCreateStreams,
    AwaitLatencyOffer,
    AwaitTestStart,
    AwaitTestRunning,
    Running,
    AwaitExchangeResults,
    MustSendResults,
    AwaitServerResults,
    AwaitDisplayResults,
    AwaitErrorCodes,
    Finished,
    Failed,
}

/// Why the control conversation with the server broke down.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ClientError {
    /// The server closed the control connection mid-test.
    #[error("control socket has closed unexpectedly")]
    ControlClosed,
    /// A state byte that makes no sense now.
    #[error("received an unknown control message (state {state} while {phase})")]
    UnexpectedState {
        /// The byte received.
        state: u8,
        /// What the client was waiting for.
        phase: &'static str,
    },
    /// A JSON message could not be read.
    #[error("unable to receive results: {0}")]
    Frame(#[from] FrameError),
    /// The server's results message is unusable.
    #[error("unable to receive results: {0}")]
    Results(#[from] ResultsError),
    /// The engine called a method that does not fit the current phase (a bug).
    #[error("internal error: {0} is not allowed while {1}")]
    WrongPhase(&'static str, &'static str),
}

impl ClientError {
    /// The iperf3 error code a stock client would report for this failure.
    pub fn errno(&self) -> IperfErrno {
        match self {
            ClientError::ControlClosed => IperfErrno::CTRLCLOSE,
            ClientError::UnexpectedState { .. } => IperfErrno::MESSAGE,
            ClientError::Frame(_) | ClientError::Results(_) => IperfErrno::RECVRESULTS,
            ClientError::WrongPhase(..) => IperfErrno::MESSAGE,
        }
    }
}

/// The client's control-connection state machine.
#[derive(Debug)]
pub struct ClientSession {
    params: Value,
    reader: FrameReader,
    out: Vec<u8>,
    phase: Phase,
    events: VecDeque<ClientEvent>,
    asked_latency: bool,
}

impl ClientSession {
    /// Starts a session: the cookie is queued for sending at once.
    pub fn new(cookie: Cookie, params: &TestParams) -> Self {
        Self {
            params: params.to_json(),
            reader: FrameReader::new(),
            out: cookie.as_bytes().to_vec(),
            phase: Phase::AwaitParamExchange,
            events: VecDeque::new(),
            asked_latency: params.wireperf_latency,
        }
    }

    /// Bytes waiting to be written to the control connection (drained by this call).
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// The next event for the engine, if any.
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// True once IPERF_DONE was queued or the server ended the session.
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Finished | Phase::Failed)
    }

    fn phase_name(&self) -> &'static str {
        match self.phase {
            Phase::AwaitParamExchange => "waiting for PARAM_EXCHANGE",
            Phase::AwaitCreateStreams => "waiting for CREATE_STREAMS",
            Phase::AwaitLatencyOffer => "reading a latency offer",
            Phase::AwaitTestStart => "waiting for TEST_START",
            Phase::AwaitTestRunning => "waiting for TEST_RUNNING",
            Phase::Running => "running",
            Phase::AwaitExchangeResults => "waiting for EXCHANGE_RESULTS",
            Phase::MustSendResults => "sending results",
            Phase::AwaitServerResults => "waiting for the server's results",
            Phase::AwaitDisplayResults => "waiting for DISPLAY_RESULTS",
            Phase::AwaitErrorCodes => "reading a server error",
            Phase::Finished => "finished",
            Phase::Failed => "failed",
        }
    }

    fn expect(&self) -> Option<Expect> {
        match self.phase {
            Phase::AwaitServerResults => Some(Expect::Json { max_len: MAX_SERVER_RESULTS }),
            Phase::AwaitLatencyOffer => Some(Expect::Json { max_len: MAX_LATENCY_OFFER }),
            Phase::AwaitErrorCodes => Some(Expect::ErrorCodes),
            Phase::MustSendResults | Phase::Failed => None,
            _ => Some(Expect::State),
        }
    }

    /// Feeds bytes read from the control connection.
    pub fn handle_input(&mut self, data: &[u8]) -> Result<(), ClientError> {
        self.reader.push(data);
        while let Some(expect) = self.expect() {
            let Some(item) = self.reader.next(expect)? else { break };
            match item {
                Item::State(b) => self.on_state(b)?,
                Item::Json(v) if self.phase == Phase::AwaitLatencyOffer => {
                    self.events.push_back(ClientEvent::LatencyOffer(v));
                    self.phase = Phase::AwaitCreateStreams;
                }
                Item::Json(v) => {
                    let r = ExchangeResults::from_json(&v)?;
                    self.events.push_back(ClientEvent::ServerResults(Box::new(r)));
                    self.phase = Phase::AwaitDisplayResults;
                }
                Item::ErrorCodes { i_errno, errno } => {
                    self.events.push_back(ClientEvent::ServerError { i_errno: IperfErrno(i_errno), errno });
                    self.phase = Phase::Failed;
                }
                Item::Cookie(_) => {}
            }
        }
        Ok(())
    }

    /// The server closed the control connection.
    pub fn handle_eof(&mut self) -> Result<(), ClientError> {
        if self.phase == Phase::AwaitErrorCodes {
            // 3.12 servers send only i_errno after an auth failure; anything shorter still
            // tells the user the server failed.
            let item = self.reader.at_eof(Expect::ErrorCodes);
            let (i_errno, errno) = match item {
                Some(Item::ErrorCodes { i_errno, errno }) => (IperfErrno(i_errno), errno),
                _ => (IperfErrno::CTRLCLOSE, None),
            };
            self.events.push_back(ClientEvent::ServerError { i_errno, errno });
            self.phase = Phase::Failed;
            return Ok(());
        }
        if self.is_finished() {
            return Ok(());
        }
        self.phase = Phase::Failed;
        Err(ClientError::ControlClosed)
    }

    fn on_state(&mut self, b: u8) -> Result<(), ClientError> {
        let state = State::from_byte(b);
        let next = match (self.phase, state) {
            (_, Some(State::AccessDenied)) => {
                self.events.push_back(ClientEvent::AccessDenied);
                Phase::Failed
            }
            (_, Some(State::ServerError)) => Phase::AwaitErrorCodes,
            (_, Some(State::ServerTerminate)) => {
                self.events.push_back(ClientEvent::ServerTerminate);
                Phase::Failed
            }
            (Phase::AwaitParamExchange, Some(State::ParamExchange)) => {
                self.out.extend_from_slice(&encode_json(&self.params));
                Phase::AwaitCreateStreams
            }
            // Only a client that asked may get an offer: to any other it is an unknown state.
            (Phase::AwaitCreateStreams, Some(State::LatencyOffer)) if self.asked_latency => Phase::AwaitLatencyOffer,
            (Phase::AwaitCreateStreams, Some(State::CreateStreams)) => {
                self.events.push_back(ClientEvent::CreateStreams);
                Phase::AwaitTestStart
            }
            (Phase::AwaitTestStart, Some(State::TestStart)) => {
                self.events.push_back(ClientEvent::TestStart);
                Phase::AwaitTestRunning
            }
            (Phase::AwaitTestRunning, Some(State::TestRunning)) => {
                self.events.push_back(ClientEvent::TestRunning);
                Phase::Running
            }
            (Phase::AwaitExchangeResults, Some(State::ExchangeResults)) => {
                self.events.push_back(ClientEvent::ExchangeResults);
                Phase::MustSendResults
            }
            (Phase::AwaitDisplayResults, Some(State::DisplayResults)) => {
                self.events.push_back(ClientEvent::DisplayResults);
                Phase::Finished
            }
            _ => {
                let phase = self.phase_name();
                self.phase = Phase::Failed;
                return Err(ClientError::UnexpectedState { state: b, phase });
            }
        };
        self.phase = next;
        Ok(())
    }

    /// Ends the test (the client alone decides when): queues TEST_END.
    pub fn end_test(&mut self) -> Result<(), ClientError> {
        if self.phase != Phase::Running {
            return Err(ClientError::WrongPhase("end_test", self.phase_name()));
        }
        self.out.push(State::TestEnd.to_byte());
        self.phase = Phase::AwaitExchangeResults;
        Ok(())
    }

    /// Answers EXCHANGE_RESULTS with our results (the client always sends first).
    pub fn send_results(&mut self, results: &ExchangeResults) -> Result<(), ClientError> {
        if self.phase != Phase::MustSendResults {
            return Err(ClientError::WrongPhase("send_results", self.phase_name()));
        }
        self.out.extend_from_slice(&encode_json(&results.to_json()));
        self.phase = Phase::AwaitServerResults;
        // The server's results may already be buffered behind EXCHANGE_RESULTS.
        self.handle_input(&[])
    }

    /// Queues IPERF_DONE after the final report, or after a local failure once the server
    /// knows of the test (as stock clients do).
    pub fn done(&mut self) {
        if self.phase != Phase::Failed {
            self.out.push(State::IperfDone.to_byte());
        }
        self.phase = Phase::Finished;
    }

    /// Queues CLIENT_TERMINATE (the user interrupted the test).
    pub fn terminate(&mut self) {
        self.out.push(State::ClientTerminate.to_byte());
        self.phase = Phase::Failed;
    }
}
