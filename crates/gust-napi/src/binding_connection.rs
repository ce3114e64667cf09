use bytes::Bytes;
use gust_core::{Pipe, PipeEvent};
use napi::bindgen_prelude::{Buffer, FnArgs, Function, Uint8ArraySlice};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

/// `(kind, bytes)`: what the server sent (`DATA`, with bytes), that it closed (`END`), or that a write was taken
/// (`WRITTEN`). Weak: a connection nobody reads never keeps the event loop alive; the caller keeps it alive
/// while it waits (see the package's `in-process.ts`).
pub(crate) type OnEvent = ThreadsafeFunction<PipeEvent, (), FnArgs<(u32, Option<Buffer>)>, napi::Status, false, true>;

/// Event kinds passed to `onEvent`.
const DATA: u32 = 0;
const END: u32 = 1;
const WRITTEN: u32 = 2;

pub(crate) fn on_event(callback: Function<FnArgs<(u32, Option<Buffer>)>, ()>) -> napi::Result<OnEvent> {
    callback.build_threadsafe_function::<PipeEvent>().callee_handled::<false>().weak::<true>().build_callback(|ctx| {
        Ok(match ctx.value {
            PipeEvent::Data(bytes) => (DATA, Some(Buffer::from(Vec::from(bytes)))),
            PipeEvent::End => (END, None),
            PipeEvent::Written => (WRITTEN, None),
        }
        .into())
    })
}

/// A connection to a server without a socket (`BindingServer.connect`): bytes in, the server's bytes out,
/// through exactly the path an accepted TCP connection takes. The package keeps it open until the answer is
/// read, as a keep-alive client does, so it never half-closes.
#[napi]
pub struct BindingConnection {
    pipe: Pipe,
}

impl BindingConnection {
    pub(crate) fn new(pipe: Pipe) -> Self {
        Self { pipe }
    }
}

#[napi]
impl BindingConnection {
    /// Sends bytes to the server (copied); `WRITTEN` follows once it has taken them.
    #[napi]
    pub fn write(&self, bytes: Uint8ArraySlice<'_>) {
        self.pipe.write(Bytes::copy_from_slice(&bytes));
    }

    /// Asks for the server's next bytes: one `DATA` or `END` follows.
    #[napi]
    pub fn read(&self) {
        self.pipe.read();
    }

    /// Closes the connection, as a client that leaves does. Idempotent.
    #[napi]
    pub fn close(&self) {
        self.pipe.close();
    }
}

/// Calls `on_event` from the I/O thread without blocking it.
pub(crate) fn forward(on_event: OnEvent) -> impl Fn(PipeEvent) + Send + Sync + 'static {
    move |event| {
        // Fails only while the environment is being torn down, when nobody is left to tell.
        let _ = on_event.call(event, ThreadsafeFunctionCallMode::NonBlocking);
    }
}
