//! The control loop both roles run, written once: send what the session queued, wait for the
//! control connection, a data connection, a stream or the test's next deadline, hand what woke
//! the loop to the role, advance the test's clock, then act on each event the session raised
//! (the parameters, create streams, start, running, test end, the results, display, the end).
//!
//! A role ([`ControlLoop`]: `client`, `server::one_test`) supplies only what the protocol makes
//! different: who connects or accepts, who sends the parameters, who ends the test and who
//! sends its results first, what it waits for. What both keep of the measured test, and how
//! they end it, is [`Measured`].

use crate::ctrl::{Ctrl, Wake};
use crate::error::EngineError;
use crate::event::Observer;
use crate::running::TestRun;
use crate::session::{Finished, StreamPlan};
use crate::stream::Stream;
use std::time::{Duration, Instant};
use wireperf_sys::{CpuSampler, CpuUtil};

/// How long a side waits for in-flight data to its receiving streams once the test ended
/// (the client: what the server sent before closing; the server: what the client's results
/// say it sent). Generous, because it only matters when the network really is slow.
const DRAIN_LIMIT: Duration = Duration::from_secs(5);

/// Whether the loop goes on after an event.
pub(crate) enum Step {
    /// Wait for the next wake-up.
    Continue,
    /// The test is over, as the protocol ends it.
    Done,
}

/// One end of a test, as the shared loop drives it.
pub(crate) trait ControlLoop {
    /// What the session raises.
    type Event;
    /// How the role fails (the server's failure says whether the client may still be told why).
    type Error: From<EngineError>;

    /// The control connection.
    fn ctrl(&mut self) -> &mut Ctrl;
    /// The bytes the session queued for the peer.
    fn take_output(&mut self) -> Vec<u8>;
    /// When the loop must wake without input (`None`: only on input).
    fn deadline(&self) -> Option<Instant>;
    /// Control bytes, a data connection, a failed stream, an interrupt, or the deadline.
    fn woken(&mut self, wake: Option<Wake>) -> Result<(), Self::Error>;
    /// The test's clock: its end, interval ticks, the end of omit, the server's limits.
    fn clock(&mut self) -> Result<(), Self::Error>;
    /// The session's next event, if it raised one.
    fn next_event(&mut self) -> Option<Self::Event>;
    /// Acts on one event.
    fn on_event(&mut self, event: Self::Event) -> Result<Step, Self::Error>;
}

/// Runs `role`'s test from its first message to the end the protocol gives it.
pub(crate) fn drive<R: ControlLoop>(role: &mut R) -> Result<(), R::Error> {
    loop {
        let out = role.take_output();
        role.ctrl().send(&out)?;
        let deadline = role.deadline();
        let wake = role.ctrl().wait(deadline);
        role.woken(wake)?;
        role.clock()?;
        while let Some(event) = role.next_event() {
            if let Step::Done = role.on_event(event)? {
                return Ok(());
            }
        }
    }
}

/// The measured test as both sides hold it: its streams once created, when it ended, and this
/// side's CPU use.
#[derive(Default)]
pub(crate) struct Measured {
    /// The streams and their sampling, from CREATE_STREAMS on.
    pub(crate) run: Option<TestRun>,
    /// When the test ended here (TEST_END sent or received).
    pub(crate) t_end: Option<Instant>,
    /// This side's CPU use since the test started.
    pub(crate) cpu: Option<CpuSampler>,
    /// The CPU use at the end.
    pub(crate) cpu_end: Option<CpuUtil>,
}

impl Measured {
    /// The streams, which a message after CREATE_STREAMS needs.
    pub(crate) fn run(&mut self) -> Result<&mut TestRun, EngineError> {
        self.run.as_mut().ok_or(EngineError::Timeout("for streams"))
    }

    /// Notes the end of the test: now, and the CPU used until now.
    pub(crate) fn stamp_end(&mut self) {
        self.t_end = Some(Instant::now());
        self.cpu_end = self.cpu.and_then(|c| c.sample().ok());
    }

    /// Waits (bounded) until each receiving stream has what `sent` says the peer sent on it
    /// (`None`: all it can get), takes the final sample, and reads this side's half of the end.
    pub(crate) fn finish(
        &mut self,
        plan: &StreamPlan,
        sent: &dyn Fn(&Stream) -> Option<u64>,
        obs: &mut dyn Observer,
    ) -> Result<Finished, EngineError> {
        let t_end = self.t_end.unwrap_or_else(Instant::now);
        let cpu = self.cpu_end.unwrap_or_default();
        let r = self.run()?;
        r.drain_receivers(Instant::now() + DRAIN_LIMIT, sent);
        r.finish(t_end, obs);
        Ok(Finished::new(r, cpu, plan))
    }
}
