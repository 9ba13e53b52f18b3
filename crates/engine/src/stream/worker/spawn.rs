//! Starting the workers of one direction: a poll and a waker each, their streams registered
//! and dealt, a thread each, and the crew that lets streams move between them.

use super::accounting::thread_cpu;
use super::member::{Member, WorkerLink};
use super::poll::{Runs, WAKE, Worker};
use super::recv::RxState;
use super::send::TxState;
use super::slot::{Slot, tcp};
use crate::ctrl::Wake;
use crate::error::EngineError;
use crate::stream::crew::{Crew, Group};
use crate::stream::spec::StreamSpec;
use crossbeam_channel::Sender;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Tells the crew when the worker thread leaves, however it leaves.
struct ExitFlag(Arc<Crew>);

impl Drop for ExitFlag {
    fn drop(&mut self) {
        self.0.worker_left(std::thread::panicking());
    }
}

/// Starts the workers of one direction, one per member list, all sending (`sender`) or all
/// receiving. Their streams may move between them (`balance`, `crew`).
pub(crate) fn spawn(
    name: &str,
    sender: bool,
    workers: Vec<Vec<Member>>,
    spec: &StreamSpec,
    notify: Sender<Wake>,
) -> Result<(Vec<JoinHandle<()>>, WorkerLink), EngineError> {
    if sender {
        spawn_as::<TxState>(name, true, workers, spec, notify)
    } else {
        spawn_as::<RxState>(name, false, workers, spec, notify)
    }
}

fn spawn_as<S: Send + 'static>(
    name: &str,
    sender: bool,
    workers: Vec<Vec<Member>>,
    spec: &StreamSpec,
    notify: Sender<Wake>,
) -> Result<(Vec<JoinHandle<()>>, WorkerLink), EngineError>
where
    Worker<S>: Runs,
{
    let fail = |op| move |err| EngineError::Stream { op, err };
    let interest = if sender { Interest::WRITABLE } else { Interest::READABLE };
    let mut polls = Vec::with_capacity(workers.len());
    let mut wakers = Vec::with_capacity(workers.len());
    let mut next_id = 0;
    let mut dealt = Vec::with_capacity(workers.len());
    for members in &workers {
        let poll = Poll::new().map_err(fail("watch"))?;
        wakers.push(Arc::new(Waker::new(poll.registry(), WAKE).map_err(fail("watch"))?));
        let mut ids = Vec::with_capacity(members.len());
        for m in members {
            let Some(s) = tcp(m) else {
                let err = std::io::Error::new(ErrorKind::InvalidInput, "a shared worker moves TCP streams only");
                return Err(EngineError::Stream { op: "watch", err });
            };
            s.set_nonblocking(true).map_err(fail(if sender { "write to" } else { "read from" }))?;
            poll.registry().register(&mut SourceFd(&s.as_raw_fd()), Token(next_id), interest).map_err(fail("watch"))?;
            ids.push(next_id);
            next_id += 1;
        }
        dealt.push(ids);
        polls.push(poll);
    }
    let (group, inboxes) = Group::<Slot<S>>::new(wakers, next_id);
    let link = WorkerLink { crew: Arc::clone(&group.crew) };
    let mut handles = Vec::with_capacity(workers.len());
    let parts = polls.into_iter().zip(inboxes).zip(workers).zip(dealt).enumerate();
    for (index, (((poll, inbox), members), ids)) in parts {
        let spec = spec.clone();
        let mine = Arc::clone(&group);
        let notify = notify.clone();
        let flag = ExitFlag(Arc::clone(&group.crew));
        let handle = std::thread::Builder::new()
            .name(format!("{name}{index}"))
            .spawn(move || {
                let _flag = flag;
                if let Some(cpu) = spec.affinity {
                    let _ = wireperf_sys::set_thread_affinity(cpu);
                }
                let n = members.len();
                let mut w = Worker::<S> {
                    index,
                    poll,
                    interest,
                    events: Events::with_capacity(n.clamp(16, 256)),
                    notify,
                    group: mine,
                    inbox,
                    slots: Vec::with_capacity(n),
                    period_start: Instant::now(),
                    waited: Duration::ZERO,
                    cpu_mark: thread_cpu(),
                    period_cpu: thread_cpu(),
                };
                w.run(ids.into_iter().zip(members).collect(), &spec);
            })
            .map_err(fail("start a thread for"));
        match handle {
            Ok(h) => handles.push(h),
            Err(e) => {
                // The streams of the workers not started never end: let the others go.
                group.crew.abandon();
                return Err(e);
            }
        }
    }
    Ok((handles, link))
}
