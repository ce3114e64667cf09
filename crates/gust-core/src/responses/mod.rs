//! Layer 4, **responses and routes**: [`Body`](body::Body), the sum of the kinds of body below; fixed (turbo)
//! responses with their compressed variants; responses built from a handler's head and the engine's own
//! answers with their stable messages; compressing a response on its way out; answering with a file; and the
//! route table that maps a path to what answers it, with the rate limits that apply before anything answers.
//!
//! May import: `values`, `bodies`.

pub(crate) mod body;
pub(crate) mod compressed;
pub(crate) mod files;
pub(crate) mod fixed;
pub(crate) mod rate_limit;
pub(crate) mod response;
pub(crate) mod route_table;
