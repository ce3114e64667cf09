//! Static files, the HTTP semantics first (issue #13, begun): where a request path may lead under a root
//! ([`resolve`]), what it is ([`mime`]), which version of it the client holds ([`conditional`]), and which part it asks for
//! ([`range`]). Serving them from the route table, the cache of small files and the streamed reads of large ones
//! come next, on top of these.

pub mod body;
pub mod conditional;
pub mod mime;
pub mod range;
pub mod resolve;
pub mod serve;

/// A handler's answer naming a file, carried in the response's extensions from the answer batch to the request's
/// service future, which still holds the request's headers: `path:<absolute>` or `mount:<index>:<tail>`.
#[derive(Debug, Clone)]
pub struct FileAnswer(pub bytes::Bytes);
