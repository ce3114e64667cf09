//! Static files (issue #13): where a request path may lead under a root ([`resolve`]), what it is ([`mime`]), which
//! version of it the client holds ([`conditional`]), which part it asks for ([`range`]), and serving it
//! ([`serve`]: directories from the route table, turbo file routes, a handler's `FILE` answer), with small files
//! and their coded variants cached and large ones streamed in chunks ([`body`]).

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
