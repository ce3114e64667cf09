//! Static files (issue #13): where a request path may lead under a root ([`resolve`]), a directory's lookups and
//! cache of small files ([`dir`]), which version of it the client holds ([`conditional`]), which part it asks for
//! ([`range`]), and its bytes streamed in chunks, maybe through a compressor ([`body`]), or handed to the socket
//! straight from the page cache (`sendfile`). Answering with them is
//! the response layer's (`responses::files`).

pub mod body;
pub mod conditional;
pub mod dir;
pub mod range;
pub mod resolve;
pub(crate) mod sendfile;
