//! `BindingServer`'s WebSocket methods: thin pass-throughs to the engine's `WebSockets` (send, ping, close,
//! subscribe, publish, flush, counts), a second `#[napi] impl` of the same class beside its lifecycle
//! (`binding_server`).

use gust_core::ws::Payload;
use napi::bindgen_prelude::Uint8ArraySlice;
use napi_derive::napi;

use crate::binding_server::BindingServer;

#[napi]
impl BindingServer {
    /// Sends a text message on WebSocket `id`: its length when sent, -1 when queued behind backpressure, 0 when
    /// dropped (closed, or over the backpressure limit). `compress`: where the client agreed to permessage-deflate,
    /// compress it (true), never (false), or by the route's threshold (none). Cost: the string read once, the
    /// frame built once.
    #[napi]
    pub fn ws_send_text(&self, id: u32, text: String, compress: Option<bool>) -> i64 {
        self.delivering(|| self.websockets.send(id, Payload::Text(&text), compress)).code()
    }

    /// Sends a binary message on WebSocket `id`; the same answers as `wsSendText`.
    #[napi]
    pub fn ws_send_binary(&self, id: u32, data: Uint8ArraySlice<'_>, compress: Option<bool>) -> i64 {
        self.delivering(|| self.websockets.send(id, Payload::Binary(&data), compress)).code()
    }

    /// Pings WebSocket `id` (at most 125 bytes).
    #[napi]
    pub fn ws_ping(&self, id: u32, data: Uint8ArraySlice<'_>) -> napi::Result<i64> {
        Ok(self.delivering(|| self.websockets.ping(id, &data)).map_err(crate::js_error)?.code())
    }

    /// Starts WebSocket `id`'s close handshake; throws for a code an endpoint may not send or a reason over 123
    /// bytes.
    #[napi]
    pub fn ws_close(&self, id: u32, code: u32, reason: String) -> napi::Result<()> {
        let code = u16::try_from(code).unwrap_or(0);
        self.delivering(|| self.websockets.close(id, code, &reason)).map_err(crate::js_error)
    }

    /// Drops WebSocket `id`'s connection at once.
    #[napi]
    pub fn ws_terminate(&self, id: u32) {
        self.delivering(|| self.websockets.terminate(id));
    }

    /// Bytes queued for WebSocket `id` that its client has not taken yet.
    #[napi]
    pub fn ws_buffered(&self, id: u32) -> f64 {
        self.websockets.buffered(id) as f64
    }

    #[napi]
    pub fn ws_subscribe(&self, id: u32, topic: String) -> bool {
        self.websockets.subscribe(id, &topic)
    }

    #[napi]
    pub fn ws_unsubscribe(&self, id: u32, topic: String) -> bool {
        self.websockets.unsubscribe(id, &topic)
    }

    #[napi]
    pub fn ws_is_subscribed(&self, id: u32, topic: String) -> bool {
        self.websockets.is_subscribed(id, &topic)
    }

    #[napi]
    pub fn ws_subscriptions(&self, id: u32) -> Vec<String> {
        self.websockets.subscriptions(id).iter().map(|t| t.to_string()).collect()
    }

    /// Sends a text message to every subscriber of `topic` but `exclude`; returns how many took it. The frame is
    /// built once and shared by every subscriber's queue.
    #[napi]
    pub fn publish_text(&self, topic: String, text: String, exclude: Option<u32>, compress: Option<bool>) -> u32 {
        self.delivering(|| self.websockets.publish(&topic, Payload::Text(&text), exclude, compress)) as u32
    }

    /// Sends a binary message to every subscriber of `topic` but `exclude`; returns how many took it.
    #[napi]
    pub fn publish_binary(
        &self,
        topic: String,
        data: Uint8ArraySlice<'_>,
        exclude: Option<u32>,
        compress: Option<bool>,
    ) -> u32 {
        self.delivering(|| self.websockets.publish(&topic, Payload::Binary(&data), exclude, compress)) as u32
    }

    /// Wakes the WebSockets sent something since the last flush (one doorbell for all): the package calls it
    /// once per event-loop turn in which it sent.
    #[napi]
    pub fn ws_flush(&self) {
        self.delivering(|| self.websockets.flush());
    }

    /// How many WebSockets subscribe to `topic`.
    #[napi]
    pub fn subscriber_count(&self, topic: String) -> u32 {
        self.websockets.subscriber_count(&topic) as u32
    }

    /// How many WebSockets are open.
    #[napi(getter)]
    pub fn websocket_count(&self) -> u32 {
        self.websockets.len() as u32
    }
}
