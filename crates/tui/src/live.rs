//! The view on a real terminal: a draw-and-keys thread, and the observer that feeds it.
//!
//! The engine calls observers on its own thread once per interval; the screen has to tick
//! between intervals ("time left") and answer keys at once, so a second thread owns the
//! terminal and redraws from the shared [`LiveState`] several times a second. The terminal is
//! put back (raw mode off, main screen, cursor shown) when that thread ends, also when it
//! unwinds from a panic, before anything else is printed. A finished test's screen (both
//! hosts' figures, which come with the results) stays up for [`HOLD`] or until a key.

use crate::hosts::{FarHost, HostProbe};
use crate::state::LiveState;
use crate::view;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::crossterm::{cursor, execute, terminal};
use serde_json::Value;
use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wireperf_engine::{Event, Observer, ServerOutput};
use wireperf_sys::CpuSampler;

/// How often the screen is redrawn when nothing else happens.
const TICK: Duration = Duration::from_millis(200);
/// How long the finished test's screen stays before the summary is printed (any key skips).
pub const HOLD: Duration = Duration::from_secs(3);

struct Shared {
    state: LiveState,
    /// When the last interval arrived (the header's clock runs on from it).
    last_interval: Instant,
}

/// Flags the keys set for the caller's engine run.
#[derive(Clone, Debug, Default)]
pub struct Controls {
    /// `q`/Ctrl-C: end the test now, as if its time were up (results exchanged and printed).
    pub finish: Arc<AtomicBool>,
    /// A second `q`/Ctrl-C: abandon the test, as SIGINT does.
    pub interrupt: Arc<AtomicBool>,
}

/// A running full-screen view. [`LiveView::close`] (or dropping it) restores the terminal.
pub struct LiveView {
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl LiveView {
    /// Takes over the terminal on stdout. `controls` are the flags the engine run polls.
    pub fn start(controls: Controls) -> io::Result<Self> {
        let shared = Arc::new(Mutex::new(Shared { state: LiveState::new(), last_interval: Instant::now() }));
        let stop = Arc::new(AtomicBool::new(false));
        let screen = Screen::enter()?;
        let thread = {
            let (shared, stop) = (Arc::clone(&shared), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("wireperf-tui".into())
                .spawn(move || screen.run(&shared, &stop, &controls))?
        };
        Ok(Self { shared, stop, thread: Some(thread) })
    }

    /// An observer that updates the view and passes every event on to `inner`; `probe` reads
    /// the hosts' CPU and DSACK counters (without one those figures say "not read").
    pub fn observer<'a>(
        &self,
        inner: Box<dyn Observer + Send + 'a>,
        probe: Option<Box<dyn HostProbe + 'a>>,
    ) -> LiveObserver<'a> {
        LiveObserver { shared: Arc::clone(&self.shared), inner, cpu: None, probe }
    }

    /// Stops drawing and gives the terminal back (after [`HOLD`] when the test finished);
    /// returns the drawing thread's error, if any.
    pub fn close(mut self) -> io::Result<()> {
        self.stop_thread()
    }

    fn stop_thread(&mut self) -> io::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(io::Error::other("the live view's thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for LiveView {
    fn drop(&mut self) {
        let _ = self.stop_thread();
    }
}

/// Feeds the view from the engine's events and forwards them.
pub struct LiveObserver<'a> {
    shared: Arc<Mutex<Shared>>,
    inner: Box<dyn Observer + Send + 'a>,
    /// Start of the current interval's CPU measurement.
    cpu: Option<CpuSampler>,
    /// Reads both hosts' CPU and the DSACK counters.
    probe: Option<Box<dyn HostProbe + 'a>>,
}

/// Asks the probe (if any) for the hosts' figures now.
fn read_hosts(probe: &mut Option<Box<dyn HostProbe + '_>>, state: &mut LiveState) {
    if let Some(p) = probe.as_mut() {
        state.record_hosts(p.sample(state.split_basis(), state.client_sends));
    }
}

impl Observer for LiveObserver<'_> {
    fn event(&mut self, ev: Event<'_>) {
        {
            let mut g = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
            g.state.apply(&ev);
            match &ev {
                Event::TestStart(_) => self.cpu = CpuSampler::start().ok(),
                Event::Interval(_) => {
                    if let Some(util) = self.cpu.and_then(|c| c.sample().ok()) {
                        g.state.record_local_cpu(util.total_pct);
                    }
                    self.cpu = CpuSampler::start().ok();
                    g.last_interval = Instant::now();
                    read_hosts(&mut self.probe, &mut g.state);
                }
                Event::End(_) => read_hosts(&mut self.probe, &mut g.state),
                _ => {}
            }
        }
        self.inner.event(ev);
    }

    fn server_output(&mut self) -> Option<ServerOutput> {
        self.inner.server_output()
    }

    fn peer_watch(&mut self, watch: &Value) {
        if let Some(cpu) = self.probe.as_mut().and_then(|p| p.far(watch)) {
            self.shared.lock().unwrap_or_else(PoisonError::into_inner).state.far = FarHost::Seen(cpu);
        }
        self.inner.peer_watch(watch);
    }
}

/// The terminal in raw mode on the alternate screen; leaving it restores the user's screen.
struct Screen {
    term: Terminal<CrosstermBackend<Stdout>>,
    /// Keys come from stdin (else crossterm reads `/dev/tty`, and only it can wait for them).
    stdin_tty: bool,
}

impl Screen {
    fn enter() -> io::Result<Self> {
        let stdin_tty = wireperf_sys::tty::stdin_is_terminal();
        terminal::enable_raw_mode()?;
        let mut out = io::stdout();
        if let Err(e) = execute!(out, terminal::EnterAlternateScreen, cursor::Hide) {
            let _ = terminal::disable_raw_mode();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(out)) {
            Ok(term) => Ok(Self { term, stdin_tty }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }

    fn run(mut self, shared: &Mutex<Shared>, stop: &AtomicBool, controls: &Controls) -> io::Result<()> {
        // Set once the caller is done and the test finished: the final screen's deadline.
        let mut hold: Option<Instant> = None;
        loop {
            let done = {
                let g = shared.lock().unwrap_or_else(PoisonError::into_inner);
                let since = g.last_interval.elapsed().as_secs_f64();
                self.term.draw(|f| view::draw(f, &g.state, since))?;
                g.state.phase == Some(crate::state::Phase::Done)
            };
            if stop.load(Ordering::Relaxed) {
                if !done || hold.is_some_and(|until| Instant::now() >= until) {
                    break;
                }
                hold.get_or_insert_with(|| Instant::now() + HOLD);
            }
            if !self.key_waiting(controls)? {
                if controls.interrupt.load(Ordering::Relaxed) {
                    return Ok(());
                }
                continue;
            }
            let TermEvent::Key(key) = event::read()? else { continue };
            if key.kind != KeyEventKind::Press {
                continue;
            }
            if hold.is_some() {
                break;
            }
            let ctrl_c = key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
            match key.code {
                KeyCode::Char('q') | KeyCode::Esc => end_test(controls),
                _ if ctrl_c => end_test(controls),
                KeyCode::Char('p') | KeyCode::Char(' ') => {
                    shared.lock().unwrap_or_else(PoisonError::into_inner).state.toggle_pause();
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl Screen {
    /// Waits up to [`TICK`] for a key. A terminal that hung up abandons the test as SIGHUP does
    /// (nobody can watch or press a key) and reads as "no key"; the caller then leaves.
    fn key_waiting(&self, controls: &Controls) -> io::Result<bool> {
        if !self.stdin_tty {
            return event::poll(TICK);
        }
        match wireperf_sys::tty::wait_for_input(TICK) {
            wireperf_sys::tty::Input::Ready => event::poll(Duration::ZERO),
            wireperf_sys::tty::Input::Idle => Ok(false),
            wireperf_sys::tty::Input::HungUp => {
                controls.interrupt.store(true, Ordering::Relaxed);
                Ok(false)
            }
        }
    }
}

/// The first quit key ends the test cleanly; a second one abandons it.
fn end_test(c: &Controls) {
    if c.finish.swap(true, Ordering::Relaxed) {
        c.interrupt.store(true, Ordering::Relaxed);
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

fn restore() {
    let _ = execute!(io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
    let _ = terminal::disable_raw_mode();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_quit_finishes_second_interrupts() {
        let c = Controls::default();
        end_test(&c);
        assert!(c.finish.load(Ordering::Relaxed));
        assert!(!c.interrupt.load(Ordering::Relaxed));
        end_test(&c);
        assert!(c.interrupt.load(Ordering::Relaxed));
    }
}
