//! How a socket's events reach JavaScript: as records in its lane's request batch, beside the requests.

use std::task::Context;

use super::task::WsEvents;
use crate::crossing::batcher::Batcher;
use crate::wire::event::{encode_data, encode_event, encode_ws_open, WS_BINARY, WS_FAILED};
use crate::wire::Kind;

impl WsEvents for Batcher {
    fn open(&self, socket: u32, request: u32, failed: bool) {
        self.append(|bytes| encode_ws_open(bytes, if failed { WS_FAILED } else { 0 }, socket, request));
    }

    /// Cost: the lock and one copy of the message.
    fn message(&self, socket: u32, binary: bool, data: &[u8]) {
        self.append(|bytes| encode_data(bytes, Kind::WsMessage, if binary { WS_BINARY } else { 0 }, socket, data));
    }

    fn closed(&self, socket: u32, code: u16, reason: &[u8]) {
        self.append(|bytes| encode_data(bytes, Kind::WsClose, code, socket, reason));
    }

    fn drain(&self, socket: u32) {
        self.append(|bytes| encode_event(bytes, Kind::WsDrain, 0, socket));
    }

    fn poll_room(&self, cx: &mut Context<'_>) -> bool {
        Batcher::poll_room(self, cx)
    }
}
