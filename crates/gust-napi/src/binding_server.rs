use std::sync::Arc;

use bytes::Bytes;
use gust_core::{Answer, Responder, Server};
use napi::bindgen_prelude::{Buffer, Either, FnArgs, Function, Object, Uint32Array, Uint8Array, Utf16String};
use napi::Env;
use napi_derive::napi;

use crate::binding_options::BindingOptions;
use crate::binding_route::{build_table, BindingRoute};
use crate::js_handler::JsHandler;

/// A running native server.
#[napi]
pub struct BindingServer {
    server: Arc<Server>,
    responder: Responder,
    handler: Arc<JsHandler>,
}

/// An answer the engine refused (bad status or header); the client got a 500.
#[napi(object)]
pub struct BindingInvalidAnswer {
    pub id: u32,
    pub message: String,
}

#[napi]
impl BindingServer {
    /// Binds and starts serving. `dispatch(batch, count)` receives every dynamic request of one event-loop turn.
    /// `notFound` and `methodFallback` are handler indexes for unknown paths and for 405/OPTIONS (the `Allow`
    /// value is the request's only parameter); without them Rust answers those.
    #[napi(factory)]
    pub fn start(
        env: &Env,
        options: BindingOptions,
        routes: Vec<BindingRoute>,
        not_found: Option<u32>,
        method_fallback: Option<u32>,
        dispatch: Function<FnArgs<(Buffer, u32)>, ()>,
    ) -> napi::Result<Self> {
        let config = options.into_config()?;
        let table = build_table(routes, not_found, method_fallback)?;
        let tsfn = dispatch
            .build_threadsafe_function::<gust_core::RequestBatch>()
            .callee_handled::<false>()
            .build_callback(|ctx| {
                let count = ctx.value.len() as u32;
                Ok((Buffer::from(ctx.value.into_bytes()), count).into())
            })?;
        let handler = Arc::new(JsHandler::new(tsfn));
        let server = Arc::new(Server::start(config, table, handler.clone()).map_err(crate::js_error)?);
        // A worker thread terminated (or an environment torn down) while serving must not leave the port bound.
        env.add_env_cleanup_hook(Arc::downgrade(&server), |server| {
            if let Some(server) = server.upgrade() {
                server.stop(true);
                server.wait();
            }
        })?;
        Ok(Self { responder: server.responder(), server, handler })
    }

    /// The bound port (the real one when 0 was asked for).
    #[napi(getter)]
    pub fn port(&self) -> u32 {
        u32::from(self.server.local_addr().port())
    }

    /// The bound address, without the port.
    #[napi(getter)]
    pub fn address(&self) -> String {
        self.server.local_addr().ip().to_string()
    }

    /// Swaps the whole route table atomically; requests in flight keep the old one.
    #[napi]
    pub fn set_routes(
        &self,
        routes: Vec<BindingRoute>,
        not_found: Option<u32>,
        method_fallback: Option<u32>,
    ) -> napi::Result<()> {
        self.server.replace_routes(build_table(routes, not_found, method_fallback)?);
        Ok(())
    }

    /// Answers a batch of requests in one call.
    ///
    /// `meta` holds, per answer, `[id, status, headerCount]` followed by a name length and a value length per
    /// header; `headers` every header name and value of the batch, concatenated (lengths are UTF-16 code units,
    /// so no character can shift a boundary); `bodies` one string or byte array per answer. Returns the answers
    /// the engine refused (sent as 500), or nothing when all were valid.
    ///
    /// Cost: one string conversion for all headers of the batch, instead of two per header.
    #[napi]
    pub fn respond(
        &self,
        meta: Uint32Array,
        headers: Utf16String,
        bodies: Vec<Either<String, Uint8Array>>,
    ) -> napi::Result<Option<Vec<BindingInvalidAnswer>>> {
        let batch = AnswerBatch::decode(&meta, &headers)?;
        let mut pieces = batch.pieces();
        let answers = batch.heads.iter().zip(bodies).map(|(head, body)| Answer {
            id: head.id,
            status: u16::try_from(head.status).unwrap_or(0),
            headers: pieces.by_ref().take(head.header_count).collect(),
            body: match body {
                Either::A(text) => Bytes::from(text),
                Either::B(bytes) => Bytes::copy_from_slice(&bytes),
            },
        });
        let invalid = self.responder.respond(answers);
        if invalid.is_empty() {
            return Ok(None);
        }
        Ok(Some(invalid.into_iter().map(|(id, err)| BindingInvalidAnswer { id, message: err.to_string() }).collect()))
    }

    /// Stops the server; resolves once every connection is closed. `force` closes in-flight requests too, and
    /// may follow a graceful stop to cut it short.
    ///
    /// The wait happens on a short-lived thread of its own, not on the libuv pool: a graceful drain can last as
    /// long as the slowest handler, and the pool's few threads belong to file system, DNS and crypto work.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn stop<'env>(&self, env: &'env Env, force: bool) -> napi::Result<Object<'env>> {
        self.server.stop(force);
        let (deferred, promise) = env.create_deferred()?;
        let server = self.server.clone();
        let handler = self.handler.clone();
        std::thread::Builder::new()
            .name("gust-stop".into())
            .spawn(move || {
                server.wait();
                // Runs on the JavaScript thread: releasing the dispatcher lets the event loop end.
                deferred.resolve(move |_env| {
                    handler.release();
                    Ok(())
                });
            })
            .map_err(|e| napi::Error::from_reason(format!("cannot wait for the server to stop: {e}")))?;
        Ok(promise)
    }
}

/// The head of one answer in a batch.
struct AnswerHead {
    id: u32,
    status: u32,
    header_count: usize,
}

/// A batch's answer heads, and its header names and values re-encoded as UTF-8 (valid headers are ASCII, so this
/// is one byte per code unit; anything else is kept as text, for the engine to refuse by name) with each piece's
/// range. `meta` is walked once.
struct AnswerBatch {
    heads: Vec<AnswerHead>,
    utf8: String,
    /// `(name end, value end)` per header; each piece starts where the previous one ended.
    ends: Vec<(usize, usize)>,
}

impl AnswerBatch {
    fn decode(meta: &[u32], text: &[u16]) -> napi::Result<Self> {
        let malformed = || napi::Error::from_reason("malformed response batch");
        let mut batch = Self { heads: Vec::new(), utf8: String::with_capacity(text.len()), ends: Vec::new() };
        let (mut at, mut unit) = (0, 0);
        while at < meta.len() {
            let [id, status, count] =
                *meta.get(at..at + 3).and_then(|h| <&[u32; 3]>::try_from(h).ok()).ok_or_else(malformed)?;
            let header_count = count as usize;
            let lengths = meta.get(at + 3..at + 3 + 2 * header_count).ok_or_else(malformed)?;
            for pair in lengths.chunks_exact(2) {
                let mut end = [0; 2];
                for (slot, len) in end.iter_mut().zip(pair) {
                    let piece = text.get(unit..unit + *len as usize).ok_or_else(malformed)?;
                    unit += piece.len();
                    if piece.iter().all(|&u| u < 0x80) {
                        batch.utf8.extend(piece.iter().map(|&u| char::from(u as u8)));
                    } else {
                        batch.utf8.extend(char::decode_utf16(piece.iter().copied()).map(|c| c.unwrap_or('\u{fffd}')));
                    }
                    *slot = batch.utf8.len();
                }
                batch.ends.push((end[0], end[1]));
            }
            batch.heads.push(AnswerHead { id, status, header_count });
            at += 3 + 2 * header_count;
        }
        Ok(batch)
    }

    /// Every header of the batch as `(name, value)`, in order.
    fn pieces(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut start = 0;
        self.ends.iter().map(move |&(name_end, value_end)| {
            let piece = (&self.utf8[start..name_end], &self.utf8[name_end..value_end]);
            start = value_end;
            piece
        })
    }
}
