//! The door for request paths: percent-decoding and the routing form.

use crate::values::path::{percent_decode, routing_path};

/// A request path: the routing form keeps `%2F` and `%25` escaped and decodes, once more, to what the raw path
/// decodes to.
pub fn request_path(data: &[u8]) {
    let Ok(raw) = std::str::from_utf8(data) else { return };
    let Some(routed) = routing_path(raw) else {
        return;
    };
    let mut rest = routed.as_ref();
    while let Some(at) = rest.find('%') {
        let escape = rest.get(at..at + 3);
        assert!(matches!(escape, Some("%2F" | "%25")), "routing form keeps {escape:?}");
        rest = &rest[at + 3..];
    }
    assert_eq!(percent_decode(&routed).as_deref(), percent_decode(raw).as_deref(), "decoded twice differs");
}
