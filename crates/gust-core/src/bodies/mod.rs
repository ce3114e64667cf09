//! Layer 3, **bodies**: each kind of body on its own, knowing only bytes, `http_body` and the values below:
//! a response streamed from JavaScript ([`stream`]), a request body read as the handler asks ([`upload`]),
//! compression and request-body decoding ([`compress`]), files and their lookups ([`files`]). None names the
//! response layer's `Body`: a compressor wraps any `http_body::Body`, a file body knows nothing of responses,
//! and where a body must tell JavaScript something (a drain, the next bytes of an upload) it calls a trait
//! defined here and implemented by the crossing above.
//!
//! May import: `values`; within this layer, `files` may use `compress` and `stream`, `compress` may use
//! `stream`, and `upload` may use `compress` (for request decoding).

pub mod compress;
pub mod files;
pub mod stream;
pub(crate) mod upload;
