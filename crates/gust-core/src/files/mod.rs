//! Static files, the HTTP semantics first (issue #13, begun): where a request path may lead under a root
//! ([`resolve`]), which version of a file the client holds ([`conditional`]), and which part it asks for
//! ([`range`]). Serving them from the route table, the cache of small files and the streamed reads of large ones
//! come next, on top of these.

pub mod conditional;
pub mod range;
pub mod resolve;
