//! The one-thread engine's executor: tasks polled on the JavaScript thread that owns the engine, from that
//! runtime's loop, one bounded turn at a time.
//!
//! A turn ([`Core::turn`]) takes one poll pass of the sockets (no waiting), fires due timers, and polls every
//! task that is ready, again while polling makes more ready, up to [`ROUNDS`] rounds; whatever is still ready
//! after that rings the engine's waker for another turn, so a busy turn cannot starve the loop. Tasks are
//! woken by [`Waker`]s that work from any thread: a wake from another thread (a publish from a worker, blocking
//! work done) or from this one outside a turn rings the waker, whose descriptor the host loop watches; a wake
//! during a turn, or during a call that ends with one ([`Core::defer`]), only queues the task.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use super::reactor::{Reactor, Registrations};
use super::table::{give_back, Slab};
use super::timers::Timers;
use crate::values::sync::Locked;

type Task = Pin<Box<dyn Future<Output = ()>>>;

/// Rounds of polling per turn: tasks woken by tasks of the last round run in the next, within the same turn.
const ROUNDS: usize = 64;

thread_local! {
    /// The engine polling on this thread now, if any.
    static CURRENT: RefCell<Option<Rc<Core>>> = const { RefCell::new(None) };
    /// Names this thread (by its address) for wakers that must know whether they run on their engine's.
    static THREAD: u8 = const { 0 };
}

fn this_thread() -> usize {
    THREAD.with(|t| std::ptr::from_ref(t) as usize)
}

/// Whether a one-thread engine is polling on this thread now. Cost: a thread-local read.
pub(crate) fn is_polling() -> bool {
    CURRENT.with(|c| c.borrow().is_some())
}

/// Spawns `task` on the engine polling on this thread. Only called when [`is_polling`].
pub(crate) fn spawn(task: Task) {
    let core = CURRENT.with(|c| c.borrow().clone());
    if let Some(core) = core {
        core.spawn(task);
    }
}

/// The timers of the engine polling here.
pub(crate) fn timers() -> Option<Arc<Mutex<Timers>>> {
    CURRENT.with(|c| c.borrow().as_ref().map(|core| core.timers.clone()))
}

/// One engine's executor, timers and poller.
pub(crate) struct Core {
    tasks: RefCell<Tasks>,
    ready: Arc<Ready>,
    timers: Arc<Mutex<Timers>>,
    reactor: Reactor,
}

/// The tasks alive, each at its token (its index in the table).
#[derive(Default)]
struct Tasks {
    table: Slab<TaskEntry>,
    /// Stamped on each task spawned, so a waker of an ended task tells the task now at its token apart.
    generation: u32,
}

/// A live task: its future (none while it is polled) and its waker's state.
struct TaskEntry {
    task: Option<Task>,
    flag: Arc<TaskWaker>,
}

/// The queue of woken tasks, shared with their wakers.
struct Ready {
    state: Mutex<ReadyState>,
    signal: mio::Waker,
    owner: usize,
    /// A turn runs, or will run before the owner's thread returns to its loop: wakes on it need no signal.
    deferring: AtomicBool,
}

#[derive(Default)]
struct ReadyState {
    ids: Vec<(u32, u32)>,
    /// The signal was rung (or a turn is sure to come) since the queue was last taken.
    rung: bool,
}

impl Ready {
    fn push(&self, index: u32, generation: u32) {
        let ring = {
            let mut state = self.state.locked();
            state.ids.push((index, generation));
            !std::mem::replace(&mut state.rung, true)
        };
        if ring && !(self.deferring.load(Ordering::Acquire) && this_thread() == self.owner) {
            // Fails only if the descriptor is gone (the engine is closing).
            let _ = self.signal.wake();
        }
    }

    fn take(&self, into: &mut Vec<(u32, u32)>) {
        // A burst's queue is not kept once it has passed.
        if into.capacity() > 1024 {
            *into = Vec::new();
        }
        let mut state = self.state.locked();
        state.rung = false;
        std::mem::swap(&mut state.ids, into);
    }
}

struct TaskWaker {
    ready: Arc<Ready>,
    index: u32,
    generation: u32,
    queued: AtomicBool,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            self.ready.push(self.index, self.generation);
        }
    }
}

/// What a turn of the one-thread engine leaves its host to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn {
    /// Turn again at this instant at the latest (a timer is due then), even if the descriptor stays quiet.
    pub next_timer: Option<Instant>,
    /// The server has stopped: every socket is closed and the handler was told; the host lets go of it.
    pub finished: bool,
    /// Readiness events the turn's poll pass took (0 for a run without one): none means the sockets were quiet
    /// (a host that polls while busy goes back to waiting).
    pub events: usize,
}

impl Turn {
    /// The turn of an engine that has finished.
    pub(crate) const FINISHED: Turn = Turn { next_timer: None, finished: true, events: 0 };
}

impl Core {
    pub(crate) fn new() -> std::io::Result<Rc<Self>> {
        let (reactor, signal) = Reactor::new()?;
        let ready = Arc::new(Ready {
            state: Mutex::default(),
            signal,
            owner: this_thread(),
            deferring: AtomicBool::new(false),
        });
        Ok(Rc::new(Self { tasks: RefCell::default(), ready, timers: Arc::default(), reactor }))
    }

    /// The descriptor the host loop watches: readable when a socket has news or a task was woken from outside.
    #[cfg(unix)]
    pub(crate) fn fd(&self) -> std::os::fd::RawFd {
        self.reactor.fd()
    }

    pub(crate) fn registrations(&self) -> &Arc<Registrations> {
        self.reactor.registrations()
    }

    /// Queues `task`, to be polled in this turn (or the next).
    pub(crate) fn spawn(&self, task: Task) {
        let mut tasks = self.tasks.borrow_mut();
        tasks.generation = tasks.generation.wrapping_add(1);
        let generation = tasks.generation;
        let entry = tasks.table.vacant_entry();
        let index = u32::try_from(entry.key()).unwrap_or(u32::MAX);
        let flag = Arc::new(TaskWaker { ready: self.ready.clone(), index, generation, queued: AtomicBool::new(true) });
        entry.insert(TaskEntry { task: Some(task), flag });
        drop(tasks);
        self.ready.push(index, generation);
    }

    /// One turn: a poll pass, due timers, ready tasks.
    pub(crate) fn turn(self: &Rc<Self>) -> Turn {
        let _enter = Enter::new(self);
        let events = self.reactor.pass();
        Timers::fire(&self.timers, Instant::now());
        self.run();
        Turn { events, next_timer: Timers::next(&self.timers), finished: false }
    }

    /// Polls the tasks that are ready, without a poll pass: what a call from JavaScript woke (answers to
    /// write) runs before the call returns.
    pub(crate) fn run_ready(self: &Rc<Self>) -> Turn {
        let _enter = Enter::new(self);
        self.run();
        Turn { events: 0, next_timer: Timers::next(&self.timers), finished: false }
    }

    /// Runs `f` with wakes on this thread queued without a signal, then the tasks they woke: for a call that
    /// wakes tasks of this engine (answers handed over) and wants them polled before it returns.
    pub(crate) fn defer<T>(self: &Rc<Self>, f: impl FnOnce() -> T) -> (T, Turn) {
        let was = self.ready.deferring.swap(true, Ordering::AcqRel);
        let out = f();
        self.ready.deferring.store(was, Ordering::Release);
        (out, self.run_ready())
    }

    fn run(&self) {
        let mut batch = Vec::new();
        for _ in 0..ROUNDS {
            self.ready.take(&mut batch);
            if batch.is_empty() {
                return;
            }
            for (index, generation) in batch.drain(..) {
                self.poll_task(index, generation);
            }
        }
        // Still busy: another turn, after the host loop has had its say.
        if !self.ready.state.locked().ids.is_empty() {
            let _ = self.ready.signal.wake();
        }
    }

    fn poll_task(&self, index: u32, generation: u32) {
        let (task, flag) = {
            let mut tasks = self.tasks.borrow_mut();
            let Some(slot) = tasks.table.get_mut(index as usize) else { return };
            if slot.flag.generation != generation {
                return;
            }
            let flag = slot.flag.clone();
            flag.queued.store(false, Ordering::Release);
            (slot.task.take(), flag)
        };
        let Some(mut task) = task else { return };
        let waker = Waker::from(flag);
        let mut cx = Context::from_waker(&waker);
        super::budget::renew();
        let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task.as_mut().poll(&mut cx)));
        let mut tasks = self.tasks.borrow_mut();
        match polled {
            Ok(Poll::Pending) => {
                if let Some(slot) = tasks.table.get_mut(index as usize) {
                    slot.task = Some(task);
                }
            }
            // Done, or panicked (the panic hook has told it, as it does for a tokio task): the entry is free.
            Ok(Poll::Ready(())) | Err(_) => {
                let ended = tasks.table.try_remove(index as usize);
                give_back(&mut tasks.table);
                drop(tasks);
                drop(ended);
                drop(task);
            }
        }
    }

    /// Drops every task (the engine is done): sockets close, waiters hear their channels close.
    pub(crate) fn shutdown(self: &Rc<Self>) {
        let _enter = Enter::new(self);
        loop {
            let taken: Vec<Task> = self.tasks.borrow_mut().table.drain().filter_map(|slot| slot.task).collect();
            if taken.is_empty() {
                break;
            }
            // Dropped outside the borrow: a drop may spawn or wake.
            drop(taken);
        }
    }
}

impl Core {
    /// Rings the engine's waker: its descriptor becomes readable, so the host loop runs a turn soon.
    pub(crate) fn ring(&self) {
        let _ = self.ready.signal.wake();
    }

    /// When the earliest armed timer is due.
    pub(crate) fn next_timer(&self) -> Option<Instant> {
        Timers::next(&self.timers)
    }
}

/// Marks the engine as polling on this thread, for as long as it lives.
struct Enter {
    previous: Option<Rc<Core>>,
    deferring: bool,
    core: Rc<Core>,
}

impl Enter {
    fn new(core: &Rc<Core>) -> Self {
        let previous = CURRENT.with(|c| c.borrow_mut().replace(core.clone()));
        let deferring = core.ready.deferring.swap(true, Ordering::AcqRel);
        Self { previous, deferring, core: core.clone() }
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        self.core.ready.deferring.store(self.deferring, Ordering::Release);
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
        // A wake queued at the very end without a signal (deferred) must not be lost.
        if !self.deferring && !self.core.ready.state.locked().ids.is_empty() {
            let _ = self.core.ready.signal.wake();
        }
    }
}
