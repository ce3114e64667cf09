//! Why a client's bytes end its connection: the close code and reason (RFC 6455 §7.4.1) that the frames and
//! messages checks (`message`) and the inflater (`deflate`) fail with.

/// A violation that ends the connection with `code` (§7.4.1): 1002 protocol error, 1007 invalid UTF-8 (or a
/// compressed message that does not inflate), 1009 message too big.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Violation {
    /// The close code to send.
    pub code: u16,
    /// What went wrong, for the close frame's reason.
    pub reason: &'static str,
}

impl Violation {
    /// 1002: the client broke the protocol, as `reason` says.
    pub(crate) const fn protocol(reason: &'static str) -> Self {
        Self { code: 1002, reason }
    }

    /// 1007: a text message (or a close reason) that is not UTF-8.
    pub(crate) const fn invalid_utf8() -> Self {
        Self { code: 1007, reason: "a text message that is not valid UTF-8" }
    }

    /// 1007: a compressed message that does not inflate.
    pub(crate) const fn corrupt() -> Self {
        Self { code: 1007, reason: "a compressed message that does not inflate" }
    }

    /// 1009: a message over the route's limit (inflated, or before).
    pub(crate) const fn too_big() -> Self {
        Self { code: 1009, reason: "message too big" }
    }
}
