//! Thin napi-rs glue between `gust-core` and the `gust` package: options and routes in, a batch of requests
//! out to JavaScript per event-loop turn, a batch of answers back in one call.
#![deny(clippy::all)]

mod batch_text;
mod binding_connection;
mod binding_group;
#[cfg(unix)]
mod binding_js_calls;
// The one-thread engine's host runs on Linux and macOS; elsewhere a stand-in with the same face refuses it.
#[cfg_attr(not(unix), path = "binding_local_elsewhere.rs")]
mod binding_local;
mod binding_local_handler;
mod binding_options;
mod binding_pubsub;
mod binding_rate_limit;
#[cfg(target_os = "linux")]
mod binding_ring;
mod binding_route;
mod binding_route_registry;
mod binding_server;
mod binding_server_ws;
#[cfg(unix)]
mod binding_uv;
#[cfg(unix)]
mod binding_wake;
mod binding_wire;
mod gc_pressure;
mod js_handler;
mod servers;

/// Every Rust allocation of the addon (request records, responses, hyper's buffers) goes through mimalloc: the
/// I/O thread allocates and the JavaScript thread frees, a pattern glibc's malloc handles poorly (it showed as
/// ~18% of server CPU on `GET /id/:id`, in `_int_free` and `malloc_consolidate`).
#[global_allocator]
static ALLOCATOR: Allocator = Allocator;

/// mimalloc, asked through its plain entry points whenever the alignment wanted is one every block has: the
/// `mimalloc` crate's allocator always calls the `_aligned` ones, whose fast path only serves small sizes from a
/// page with a free block, and otherwise takes a generic path (sometimes over-allocating): about 400
/// instructions an allocation there, against about 100 (callgrind, `GET /` at 500 connections, two to three
/// allocations a request; `benchmarks/results/first-on-the-seed-2026-11-29d.md`).
struct Allocator;

/// The alignment every mimalloc block has, whatever its size (a word).
const PLAIN_ALIGN: usize = std::mem::size_of::<usize>();

// SAFETY: each method forwards to mimalloc, which returns blocks of at least the size asked, aligned to a word
// always (so to `layout.align()` when that is at most `PLAIN_ALIGN`) and to `layout.align()` through its
// `_aligned` entry points; every block is freed by `mi_free`, whichever entry point made it.
unsafe impl std::alloc::GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= PLAIN_ALIGN {
            libmimalloc_sys::mi_malloc(layout.size()).cast()
        } else {
            libmimalloc_sys::mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= PLAIN_ALIGN {
            libmimalloc_sys::mi_zalloc(layout.size()).cast()
        } else {
            libmimalloc_sys::mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        libmimalloc_sys::mi_free(ptr.cast());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= PLAIN_ALIGN {
            libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast()
        } else {
            libmimalloc_sys::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
        }
    }
}

/// `mi_option_arena_eager_commit` (mimalloc v3's `mi_option_e`, the fifth option).
#[cfg(target_os = "linux")]
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Lets mimalloc give freed memory back to the system. By default it commits its arenas eagerly where the system
/// overcommits (Linux), and then never returns what a burst freed: 10,000 WebSocket handshakes left about 2 KiB per
/// socket resident after their buffers and request batches were freed (compare-fair's idle WebSockets). Runs
/// before the addon's first allocation (`.init_array` with a priority runs before unprioritised constructors,
/// napi-rs's registration among them).
#[used]
#[link_section = ".init_array.00101"]
#[cfg(target_os = "linux")]
static LAZY_COMMIT: extern "C" fn() = {
    extern "C" fn lazy_commit() {
        // SAFETY: sets a process-wide allocator option while the addon is being loaded, before any of its threads
        // exist or it has allocated.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
    }
    lazy_commit
};

/// Lets mimalloc purge what an I/O thread freed, when the thread is about to wait for work
/// (`gust_core::Config::on_io_wait`). mimalloc purges freed pages on later calls of the thread that owns them, and
/// an I/O thread whose connections have all gone idle (parked) makes none: 10,000 parked turbo connections kept
/// about 0.6 KB each of freed state resident. Cost: a clock read per wait; the collection itself (a walk of the
/// thread's pages, microseconds) at most every [`COLLECT_EVERY`].
pub(crate) fn give_back_freed_memory() {
    thread_local! {
        static LAST: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
    }
    let now = std::time::Instant::now();
    LAST.with(|last| {
        if last.get().is_some_and(|at| now.duration_since(at) < COLLECT_EVERY) {
            return;
        }
        last.set(Some(now));
        // SAFETY: collects the calling thread's own mimalloc heap; no pointer is passed.
        unsafe { libmimalloc_sys::mi_collect(false) };
    });
}

/// The least time between two collections on one I/O thread.
const COLLECT_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

pub use binding_connection::BindingConnection;
pub use binding_group::BindingGroup;
pub use binding_options::{
    compression_type_accepts, engine_info, thread_plan, BindingEngineInfo, BindingMessages, BindingOptionInfo,
    BindingOptions, BindingThreadPlan,
};
pub use binding_route::{static_option_accepts, BindingFixed, BindingMount, BindingRoute, BindingStaticDefaults};
pub use binding_route_registry::BindingRouteRegistry;
pub use binding_server::{BindingInvalidAnswer, BindingLane, BindingServer};
pub use binding_wire::{wire_layout, BindingWireEntry};
pub use gc_pressure::report_external_buffers;

/// Turns a core error into a JavaScript `Error` carrying the same message. A failure to listen that the system
/// names also carries, as its `cause`, an error whose message is the code Node gives the same failure and the
/// address, `EADDRINUSE 127.0.0.1:3000` (napi errors carry no other fields): the package rebuilds from it the
/// error `net.Server` throws (`listen-error.ts`). Any other error with a code (a Redis `pubsub` cannot reach)
/// carries the bare code as its cause's message.
pub(crate) fn js_error(err: gust_core::Error) -> napi::Error {
    let status = if err.is_io() { napi::Status::GenericFailure } else { napi::Status::InvalidArg };
    let mut js = napi::Error::new(status, err.to_string());
    if let (Some(code), Some(addr)) = (err.os_error().and_then(listen_code), err.listen_addr()) {
        js.set_cause(napi::Error::new(napi::Status::GenericFailure, format!("{code} {addr}")));
    } else if let Some(code) = err.code() {
        // The package gives the error this code (`packages/gust/src/pubsub.ts`, `pubsubError`).
        js.set_cause(napi::Error::new(napi::Status::GenericFailure, code.to_owned()));
    }
    js
}

/// The code Node's `net.Server` gives a failure to listen of this kind.
fn listen_code(err: &std::io::Error) -> Option<&'static str> {
    use std::io::ErrorKind;
    Some(match err.kind() {
        ErrorKind::AddrInUse => "EADDRINUSE",
        ErrorKind::PermissionDenied => "EACCES",
        ErrorKind::AddrNotAvailable => "EADDRNOTAVAIL",
        _ => return None,
    })
}
