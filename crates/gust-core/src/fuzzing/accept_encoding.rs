//! The door for `Accept-Encoding` and its q-values.

use http::header::ACCEPT_ENCODING;
use http::{HeaderMap, HeaderValue};

use super::selector;
use crate::bodies::compress::encoding::Accepted;
use crate::bodies::compress::Encoding;

/// `Accept-Encoding` lines (split at newlines) against every order of the codings the engine offers.
pub fn accept_encoding(data: &[u8]) {
    let (sel, text) = selector(data);
    let mut headers = HeaderMap::new();
    for line in text.split(|&b| b == b'\n') {
        if let Ok(value) = HeaderValue::from_bytes(line) {
            headers.append(ACCEPT_ENCODING, value);
        }
    }
    let accepted = Accepted::from_headers(&headers);
    let mut offered = Encoding::ALL.to_vec();
    let n = offered.len();
    offered.rotate_left(usize::from(sel) % n);
    offered.truncate(1 + usize::from(sel >> 2) % n);
    let best = accepted.best(&offered);
    let ranked = accepted.ranked(&offered);
    assert_eq!(best, ranked.first().copied(), "the best is not ranked first");
    for coding in &ranked {
        assert!(offered.contains(coding), "{coding:?} was not offered");
    }
    let mut seen = ranked.clone();
    seen.dedup();
    assert_eq!(seen.len(), ranked.len(), "a coding ranked twice");
}
