//! Which engine the tests' servers run on: the threaded one, or, with `GUST_TEST_ENGINE=one-thread`, the
//! one-thread engine driven from a thread of its own as a JavaScript thread's loop would drive it (wait for its
//! descriptor or its next timer, then a turn). `make test` runs the suites both ways.

use std::sync::Arc;
use std::time::Duration;

use gust_core::{Config, Handler, RouteTable, Server};

/// Whether this run's servers use the one-thread engine.
pub fn one_thread() -> bool {
    std::env::var("GUST_TEST_ENGINE").is_ok_and(|e| e == "one-thread")
}

/// Starts a server on this run's engine (in-memory servers are always threaded).
pub fn start_server(config: Config, routes: RouteTable, handler: Arc<dyn Handler>) -> Result<Server, gust_core::Error> {
    if !one_thread() || config.addrs.is_empty() {
        return Server::start(config, routes, handler);
    }
    run_local(None, move || Server::start_local(config, routes, handler))
}

/// Starts a one-thread server with `start` on a thread of its own, and drives it there as a host loop would
/// until it finishes, or, once `quit` is set, closes it at once (as a worker thread that goes away does).
pub fn run_local(
    quit: Option<Arc<std::sync::atomic::AtomicBool>>,
    start: impl FnOnce() -> Result<(Server, gust_core::LocalEngine), gust_core::Error> + Send + 'static,
) -> Result<Server, gust_core::Error> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("gust-one-thread".to_owned())
        .spawn(move || {
            let (server, engine) = match start() {
                Ok(started) => started,
                Err(err) => {
                    let _ = tx.send(Err(err));
                    return;
                }
            };
            let _ = tx.send(Ok(server));
            let mut wait = Some(Duration::ZERO);
            loop {
                // With a way to quit, the flag is looked at every 20 ms at the latest.
                let limit = match (&quit, wait) {
                    (Some(_), Some(w)) => Some(w.min(Duration::from_millis(20))),
                    (Some(_), None) => Some(Duration::from_millis(20)),
                    (None, w) => w,
                };
                wait_readable(engine.fd(), limit);
                if quit.as_ref().is_some_and(|q| q.load(std::sync::atomic::Ordering::Acquire)) {
                    engine.close_now();
                    return;
                }
                let turn = engine.turn();
                if turn.finished {
                    return;
                }
                wait = turn.next_timer.map(|at| at.saturating_duration_since(std::time::Instant::now()));
            }
        })
        .expect("a thread for the engine");
    rx.recv().expect("the engine thread answers")
}

#[cfg(target_os = "linux")]
fn wait_readable(fd: std::os::fd::RawFd, limit: Option<Duration>) {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    use std::os::fd::BorrowedFd;
    // The descriptor lives as long as the engine, which outlives this call.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let timeout = limit.map(|d| Timespec { tv_sec: d.as_secs() as i64, tv_nsec: i64::from(d.subsec_nanos()) });
    let _ = poll(&mut fds, timeout.as_ref());
}

#[cfg(not(target_os = "linux"))]
fn wait_readable(_fd: std::os::fd::RawFd, limit: Option<Duration>) {
    std::thread::sleep(limit.unwrap_or(Duration::from_millis(1)).min(Duration::from_millis(1)));
}
