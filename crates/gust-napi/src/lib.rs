//! Thin napi-rs glue between `gust-core` and the `gust` package: options and routes in, a batch of requests
//! out to JavaScript per event-loop turn, a batch of answers back in one call.
#![deny(clippy::all)]

mod batch_text;
mod binding_connection;
mod binding_options;
mod binding_route;
mod binding_route_registry;
mod binding_server;
mod js_handler;

/// Every Rust allocation of the addon (request records, responses, hyper's buffers) goes through mimalloc: the
/// I/O thread allocates and the JavaScript thread frees, a pattern glibc's malloc handles poorly (it showed as
/// ~18% of server CPU on `GET /id/:id`, in `_int_free` and `malloc_consolidate`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub use binding_connection::BindingConnection;
pub use binding_options::{engine_info, BindingEngineInfo, BindingOptions};
pub use binding_route::{BindingFixed, BindingMount, BindingRoute};
pub use binding_route_registry::BindingRouteRegistry;
pub use binding_server::{BindingInvalidAnswer, BindingServer};

/// Turns a core error into a JavaScript `Error` carrying the same message.
pub(crate) fn js_error(err: gust_core::Error) -> napi::Error {
    let status = if err.is_io() { napi::Status::GenericFailure } else { napi::Status::InvalidArg };
    napi::Error::new(status, err.to_string())
}
