//! The threaded engine's driving code: `Config::io_threads` dedicated I/O threads (one by default), each a
//! current-thread tokio runtime with its own connections (a shard), feeding the JavaScript threads attached as
//! lanes (`lanes.rs`).
//!
//! Why current-thread runtimes rather than one multi-thread runtime: measurements on this class of machine
//! showed a current-thread runtime on its own thread batching better than a one-worker multi-thread runtime, and
//! a shard that owns its connections needs no work stealing, no lock shared with other threads on the way of a
//! request, and keeps its answers' wake-ups local.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use tokio::sync::mpsc;

use super::assembly::{bound_addrs, shard_ended, Assembly, Built, Engine, Runtimes};
use super::lifecycle::Unbound;
use super::listener;
use crate::crossing::handler::Handler;
use crate::responses::route_table::RouteTable;
use crate::rt::BLOCKING_THREADS;
use crate::service::config::Config;
use crate::values::error::Error;

/// Binds every address and starts serving on `config.io_threads` new threads. Binding happens before this
/// returns, so a taken port is reported here rather than lost on an I/O thread. With no address, the server
/// serves only in-memory connections (`Server::connect`).
///
/// Each I/O thread (a shard) has its own runtime, listening sockets (on Linux, `SO_REUSEPORT` sockets on one
/// port, so the kernel spreads connections; elsewhere duplicates of one socket), table of waiting requests and
/// batchers: nothing on the per-request path is shared between them but the route table (read through an
/// `ArcSwap`) and the count of pending requests (one atomic).
pub(super) fn start(config: Config, routes: RouteTable, handler: Arc<dyn Handler>) -> Result<Built, Error> {
    let count = config.io_threads;
    let assembly = Assembly::new(&config, routes, handler, count, None)?;
    let runtimes = (0..count)
        .map(|_| {
            let mut builder = tokio::runtime::Builder::new_current_thread();
            builder
                .enable_all()
                // Files are read on the blocking pool. Unbounded (tokio's default is 512), a burst of small-file
                // requests grew it to hundreds of threads, each with its stack, for work a few threads do as fast.
                .max_blocking_threads(BLOCKING_THREADS);
            if let Some(hook) = config.on_io_wait {
                builder.on_thread_park(hook);
            }
            builder.build().map_err(|e| Error::io("cannot start the I/O runtime", e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let bound = listener::bind_all(&config.addrs, count)?;
    let addrs = bound_addrs(&bound[0])?;
    let mut listeners = bound
        .into_iter()
        .zip(&runtimes)
        .map(|(shard, runtime)| {
            let _in_runtime = runtime.enter();
            shard
                .into_iter()
                .map(|l| tokio::net::TcpListener::from_std(l).map_err(|e| Error::io("cannot register the listener", e)))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()?;

    let (in_memory, in_memory_rx) = mpsc::unbounded_channel();
    let mut in_memory_rx = Some(in_memory_rx);
    let handles = Runtimes::new(runtimes.iter().map(|r| r.handle().clone()).collect());
    let built = assembly.built(addrs.clone(), in_memory, Engine::Threaded(handles.clone()));

    for (i, runtime) in runtimes.into_iter().enumerate() {
        let shared = assembly.shards[i].clone();
        let done = assembly.done.clone();
        let phase = assembly.phase.clone();
        // Subscribed here, before `start` returns: a stop that comes before the thread runs is still seen.
        let phase_rx = phase.subscribe();
        let once = Arc::new(Unbound::new(&assembly.unbound));
        let shard_listeners = std::mem::take(&mut listeners[i]);
        // In-memory connections are served by the first I/O thread.
        let memory = in_memory_rx.take();
        let thread_tls = assembly.tls.clone();
        let handles = handles.clone();
        let name = addrs.first().map_or_else(|| "gust-io-memory".to_owned(), |a| format!("gust-io-{}", a.port()));
        std::thread::Builder::new()
            .name(if count == 1 { name } else { format!("{name}-{i}") })
            .spawn(move || {
                let serving =
                    listener::serve(shard_listeners, thread_tls, memory, None, shared.clone(), phase_rx, once.clone());
                let failure = match std::panic::catch_unwind(AssertUnwindSafe(|| runtime.block_on(serving))) {
                    Ok(failure) => failure,
                    Err(panic) => {
                        let err =
                            Error::engine(format!("the I/O thread panicked: {}", crate::rt::panic_message(&*panic)));
                        eprintln!("gust: the server stopped because {err}");
                        Some(err)
                    }
                };
                // Dropping the runtime closes every socket it still owns, the listeners included; its driver's
                // own descriptors close with the last handle on it, the server's released first (so nothing
                // is started on a runtime that is shutting down).
                handles.release(i);
                drop(runtime);
                shard_ended(failure, &shared, &once, &done, &phase);
            })
            .map_err(|e| Error::io("cannot spawn the I/O thread", e))?;
    }
    Ok(built)
}
