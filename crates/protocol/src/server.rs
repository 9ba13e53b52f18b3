//! The server side of the control connection.
//!
//! The session reads the cookie, asks for and checks the parameters, and walks the test through
//! its phases as the engine reports progress. Time is passed in by the caller so that timeouts
//! (a client that sends half a cookie and goes silent, a test that never ends) are decided
//! here, deterministically, and tested on a virtual clock.

use crate::cookie::Cookie;
use crate::errno::IperfErrno;
use crate::frame::{Expect, FrameError, FrameReader, Item, encode_json, encode_server_error};
use crate::params::{ParamsError, TestParams};
use crate::results::{ExchangeResults, ResultsError};
use crate::state::State;
use serde_json::Value;
use std::collections::VecDeque;
use std::time::Duration;

/// Limits a server applies to one control connection.
#[derive(Clone, Debug)]
pub struct ServerLimits {
    /// Longest wait for a complete cookie, parameters, results or IPERF_DONE.
    pub ctrl_timeout: Duration,
    /// Largest parameters message: 8 KiB, as 3.22 (`MAX_PARAMS_JSON_STRING`), so a client
    /// that works against wireperf also works against a stock server.
    pub max_params: u32,
    /// Largest client results message.
    pub max_results: u32,
    /// Grace after `time + omit` before a running test is ended by the server (iperf3: 40 s).
    pub safety_margin: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            ctrl_timeout: Duration::from_secs(30),
            max_params: crate::params::limits::MAX_PARAMS_JSON,
            max_results: 4 * 1024 * 1024,
            safety_margin: Duration::from_secs(40),
        }
    }
}

/// Something the engine must act on.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerEvent {
    /// The client's cookie (PARAM_EXCHANGE has been queued).
    Cookie(Cookie),
    /// The parameters arrived: validate, then [`ServerSession::accept_params`] or
    /// [`ServerSession::refuse`].
    Params(Box<TestParams>),
    /// The client ended the test: stop, then [`ServerSession::begin_exchange`].
    TestEnd,
    /// The client's results: answer with [`ServerSession::send_results`].
    ClientResults(Box<ExchangeResults>),
    /// The client is done; the test is over.
    IperfDone,
    /// The client was interrupted.
    ClientTerminate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    AwaitCookie,
    AwaitParams,
    Validating,
    CreatingStreams,
    Running,
    Stopping,
    AwaitClientResults,
    MustSendResults,
    AwaitIperfDone,
    Finished,
    Failed,
}

/// Why a control connection failed on the server.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ServerError {
    /// The client closed the control connection before the test was over.
    #[error("the client has unexpectedly closed the connection")]
    ControlClosed,
    /// A state byte that makes no sense now.
    #[error("received an unknown control message (byte {0:#04x})")]
    UnexpectedState(u8),
    /// A message could not be read.
    #[error("bad control message: {0}")]
    Frame(#[from] FrameError),
    /// The parameters were unusable.
    #[error("unable to receive parameters from client: {0}")]
    Params(#[from] ParamsError),
    /// The client's results were unusable.
    #[error("unable to receive results: {0}")]
    Results(#[from] ResultsError),
    /// The client took too long to say something.
    #[error("timed out {0}")]
    Timeout(&'static str),
    /// The test ran past its length plus the safety margin without TEST_END.
    #[error("test ran past its duration without the client ending it")]
    DurationExpired,
    /// The engine called a method that does not fit the current phase (a bug).
    #[error("internal error: {0} is not allowed while {1}")]
    WrongPhase(&'static str, &'static str),
}

impl ServerError {
    /// The code sent to the client in SERVER_ERROR for this failure.
    pub fn errno(&self) -> IperfErrno {
        match self {
            ServerError::ControlClosed => IperfErrno::CTRLCLOSE,
            ServerError::UnexpectedState(_) | ServerError::WrongPhase(..) => IperfErrno::MESSAGE,
            ServerError::Frame(_) => IperfErrno::RECVPARAMS,
            ServerError::Params(e) => e.errno(),
            ServerError::Results(_) => IperfErrno::RECVRESULTS,
            ServerError::Timeout("waiting for the cookie") => IperfErrno::RECVCOOKIE,
            ServerError::Timeout(_) => IperfErrno::NOMSG,
            ServerError::DurationExpired => IperfErrno::SERVERTESTDURATIONEXPIRED,
        }
    }
}

/// The server's control-connection state machine for one test.
#[derive(Debug)]
pub struct ServerSession {
    limits: ServerLimits,
    reader: FrameReader,
    out: Vec<u8>,
    phase: Phase,
    events: VecDeque<ServerEvent>,
    deadline: Option<Duration>,
}

impl ServerSession {
    /// A session for a control connection accepted at `now`.
    pub fn new(now: Duration, limits: ServerLimits) -> Self {
        let deadline = Some(now + limits.ctrl_timeout);
        Self {
            limits,
            reader: FrameReader::new(),
            out: Vec::new(),
            phase: Phase::AwaitCookie,
            events: VecDeque::new(),
            deadline,
        }
    }

    /// The single byte a busy server writes to a connection it cannot serve.
    pub fn busy_reply() -> [u8; 1] {
        [State::AccessDenied.to_byte()]
    }

    /// Bytes waiting to be written to the control connection (drained by this call).
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// The next event for the engine, if any.
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.events.pop_front()
    }

    /// When [`Self::handle_timeout`] must next be called, if ever.
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.deadline
    }

    /// True once the test is over, well or badly.
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Finished | Phase::Failed)
    }

    /// True while data streams may still be attached to this test.
    pub fn is_creating_streams(&self) -> bool {
        self.phase == Phase::CreatingStreams
    }

    fn phase_name(&self) -> &'static str {
        match self.phase {
            Phase::AwaitCookie => "waiting for the cookie",
            Phase::AwaitParams => "waiting for the parameters",
            Phase::Validating => "validating parameters",
            Phase::CreatingStreams => "waiting for the data streams",
            Phase::Running => "running",
            Phase::Stopping => "stopping",
            Phase::AwaitClientResults => "waiting for the client's results",
            Phase::MustSendResults => "sending results",
            Phase::AwaitIperfDone => "waiting for IPERF_DONE",
            Phase::Finished => "finished",
            Phase::Failed => "failed",
        }
    }

    fn expect(&self) -> Option<Expect> {
        match self.phase {
            Phase::AwaitCookie => Some(Expect::Cookie),
            Phase::AwaitParams => Some(Expect::Json { max_len: self.limits.max_params }),
            Phase::AwaitClientResults => Some(Expect::Json { max_len: self.limits.max_results }),
            Phase::Finished | Phase::Failed => None,
            // In the other phases the client may still send TEST_END, IPERF_DONE or
            // CLIENT_TERMINATE (e.g. it gave up while streams were being created).
            _ => Some(Expect::State),
        }
    }

    fn fail(&mut self, e: ServerError) -> ServerError {
        self.phase = Phase::Failed;
        self.deadline = None;
        e
    }

    /// Feeds bytes read from the control connection at time `now`.
    pub fn handle_input(&mut self, now: Duration, data: &[u8]) -> Result<(), ServerError> {
        self.reader.push(data);
        while let Some(expect) = self.expect() {
            let item = match self.reader.next(expect) {
                Ok(Some(item)) => item,
                Ok(None) => break,
                Err(e) => return Err(self.fail(e.into())),
            };
            match item {
                Item::Cookie(c) => {
                    self.events.push_back(ServerEvent::Cookie(c));
                    self.out.push(State::ParamExchange.to_byte());
                    self.phase = Phase::AwaitParams;
                    self.deadline = Some(now + self.limits.ctrl_timeout);
                }
                Item::Json(v) if self.phase == Phase::AwaitParams => {
                    let p = TestParams::from_json(&v).map_err(|e| self.fail(e.into()))?;
                    self.events.push_back(ServerEvent::Params(Box::new(p)));
                    self.phase = Phase::Validating;
                    self.deadline = None;
                }
                Item::Json(v) => {
                    let r = ExchangeResults::from_json(&v).map_err(|e| self.fail(e.into()))?;
                    self.events.push_back(ServerEvent::ClientResults(Box::new(r)));
                    self.phase = Phase::MustSendResults;
                    self.deadline = None;
                }
                Item::State(b) => self.on_state(b)?,
                Item::ErrorCodes { .. } => {}
            }
        }
        Ok(())
    }

    fn on_state(&mut self, b: u8) -> Result<(), ServerError> {
        match State::from_byte(b) {
            Some(State::TestEnd) if self.phase == Phase::Running => {
                self.events.push_back(ServerEvent::TestEnd);
                self.phase = Phase::Stopping;
                self.deadline = None;
            }
            Some(State::IperfDone) => {
                self.events.push_back(ServerEvent::IperfDone);
                self.phase = Phase::Finished;
                self.deadline = None;
            }
            Some(State::ClientTerminate) => {
                self.events.push_back(ServerEvent::ClientTerminate);
                self.phase = Phase::Failed;
                self.deadline = None;
            }
            _ => return Err(self.fail(ServerError::UnexpectedState(b))),
        }
        Ok(())
    }

    /// The client closed the control connection.
    pub fn handle_eof(&mut self) -> Result<(), ServerError> {
        if self.is_finished() {
            return Ok(());
        }
        Err(self.fail(ServerError::ControlClosed))
    }

    /// Checks deadlines at time `now`.
    pub fn handle_timeout(&mut self, now: Duration) -> Result<(), ServerError> {
        match self.deadline {
            Some(d) if now >= d => {
                let e = if self.phase == Phase::Running {
                    ServerError::DurationExpired
                } else {
                    ServerError::Timeout(self.phase_name())
                };
                Err(self.fail(e))
            }
            _ => Ok(()),
        }
    }

    fn require(&self, phase: Phase, call: &'static str) -> Result<(), ServerError> {
        if self.phase == phase { Ok(()) } else { Err(ServerError::WrongPhase(call, self.phase_name())) }
    }

    /// The parameters are acceptable: queues CREATE_STREAMS.
    pub fn accept_params(&mut self, now: Duration) -> Result<(), ServerError> {
        self.require(Phase::Validating, "accept_params")?;
        self.out.push(State::CreateStreams.to_byte());
        self.phase = Phase::CreatingStreams;
        self.deadline = Some(now + self.limits.ctrl_timeout);
        Ok(())
    }

    /// Offers latency echo ports to a client that asked (`wireperf_latency`): queues the
    /// `LatencyOffer` state and the offer as JSON. Call before [`Self::accept_params`].
    pub fn offer_latency(&mut self, offer: &Value) -> Result<(), ServerError> {
        self.require(Phase::Validating, "offer_latency")?;
        self.out.push(State::LatencyOffer.to_byte());
        self.out.extend_from_slice(&encode_json(offer));
        Ok(())
    }

    /// Refuses the test with an iperf3 error code (SERVER_ERROR + i_errno + errno).
    pub fn refuse(&mut self, i_errno: IperfErrno, errno: i32) {
        self.out.extend_from_slice(&encode_server_error(i_errno.0, errno));
        self.phase = Phase::Failed;
        self.deadline = None;
    }

    /// All streams are connected: queues TEST_START and TEST_RUNNING. `test_len` is
    /// `time + omit` (`None` for `-n`/`-k` tests, which have no safety timer).
    pub fn start_test(&mut self, now: Duration, test_len: Option<Duration>) -> Result<(), ServerError> {
        self.require(Phase::CreatingStreams, "start_test")?;
        self.out.push(State::TestStart.to_byte());
        self.out.push(State::TestRunning.to_byte());
        self.phase = Phase::Running;
        self.deadline = test_len.map(|t| now + t + self.limits.safety_margin);
        Ok(())
    }

    /// Data streams are stopped and closed: queues EXCHANGE_RESULTS.
    pub fn begin_exchange(&mut self, now: Duration) -> Result<(), ServerError> {
        self.require(Phase::Stopping, "begin_exchange")?;
        self.out.push(State::ExchangeResults.to_byte());
        self.phase = Phase::AwaitClientResults;
        self.deadline = Some(now + self.limits.ctrl_timeout);
        // The client's results may already be buffered.
        self.handle_input(now, &[])
    }

    /// Sends our results and DISPLAY_RESULTS.
    pub fn send_results(&mut self, now: Duration, results: &ExchangeResults) -> Result<(), ServerError> {
        self.require(Phase::MustSendResults, "send_results")?;
        self.out.extend_from_slice(&encode_json(&results.to_json()));
        self.out.push(State::DisplayResults.to_byte());
        self.phase = Phase::AwaitIperfDone;
        self.deadline = Some(now + self.limits.ctrl_timeout);
        self.handle_input(now, &[])
    }

    /// Queues SERVER_TERMINATE (the server was interrupted).
    pub fn terminate(&mut self) {
        self.out.push(State::ServerTerminate.to_byte());
        self.phase = Phase::Failed;
        self.deadline = None;
    }
}
