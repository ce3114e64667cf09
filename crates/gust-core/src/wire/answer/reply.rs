//! What an answer asks of the request it answers, typed once by the responder: a response to send, a file to
//! serve, or a WebSocket handshake to accept; and the file a `FILE` answer names, read from its body.

use std::path::PathBuf;

use http::{HeaderMap, Response};

use crate::responses::body::Body;
use crate::responses::response::InvalidResponse;

/// What a request waiting for JavaScript gets back: the responder decides which from the answer's flags, and the
/// request's task, which still holds the request's headers and connection, does what it says.
#[derive(Debug)]
pub(crate) enum Reply {
    /// A response to send as it is: a handler's whole or streamed answer, or one of the engine's own (a 503).
    Send(Response<Body>),
    /// A file to serve with the request's conditional and range headers, the answer's `headers` added
    /// ([`FILE`](super::FILE)).
    File {
        /// The answer's headers, validated (CORS, a cache policy a middleware set).
        headers: HeaderMap,
        /// Where the file is.
        target: FileTarget,
    },
    /// The handler accepts a WebSocket handshake ([`UPGRADE`](super::UPGRADE)): a 101 with `headers`, and the
    /// connection becomes a socket owned by `lane`, the JavaScript thread that answered.
    Upgrade {
        /// The answer's headers, validated (a chosen `Sec-WebSocket-Protocol`, cookies).
        headers: HeaderMap,
        /// The lane that answered.
        lane: u8,
    },
}

impl From<Response<Body>> for Reply {
    fn from(res: Response<Body>) -> Self {
        Self::Send(res)
    }
}

/// The file a `FILE` answer names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileTarget {
    /// `path:<path>`: one file by its path (a handler's `c.file(path)`, always absolute).
    Path(PathBuf),
    /// `mount:<index>:<path>`: a file under a directory the route table holds (see
    /// [`RouteTableBuilder::mount`](crate::responses::route_table::RouteTableBuilder::mount)), by the directory's
    /// index and the request path below it, still percent-encoded as routing left it.
    Mount {
        /// The directory's index in the route table.
        index: usize,
        /// The path below the directory.
        tail: String,
    },
}

impl FileTarget {
    /// Reads a `FILE` answer's body. The JavaScript side writes it, so a body in neither form is a bug there: the
    /// answer is invalid, refused as an answer with a bad header is (a 500 for that request, the reason logged).
    ///
    /// Cost: a UTF-8 check and one allocation (the path or the tail).
    pub(crate) fn parse(body: &[u8]) -> Result<Self, InvalidResponse> {
        let invalid = |why: &str| {
            InvalidResponse::new(format!(
                "invalid file answer {:?}: {why}; expected \"path:<path>\" or \"mount:<index>:<path>\"",
                String::from_utf8_lossy(body)
            ))
        };
        let text = std::str::from_utf8(body).map_err(|_| invalid("not UTF-8"))?;
        // A relative path is the process's working directory's, as `fs.readFile` reads it (the package always
        // writes an absolute one; a hand-made `FileReply` may not).
        if let Some(path) = text.strip_prefix("path:") {
            return Ok(Self::Path(PathBuf::from(path)));
        }
        if let Some(rest) = text.strip_prefix("mount:") {
            // `mount:<index>` alone is the mount's own root.
            let (index, tail) = rest.split_once(':').unwrap_or((rest, ""));
            let index = index.parse().map_err(|_| invalid("the mount's index is not a number"))?;
            return Ok(Self::Mount { index, tail: tail.to_owned() });
        }
        Err(invalid("no \"path:\" or \"mount:\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(text: &str) -> FileTarget {
        FileTarget::Path(PathBuf::from(text))
    }

    #[test]
    fn a_path_target_should_name_its_path() {
        #[cfg(unix)]
        {
            assert_eq!(FileTarget::parse(b"path:/srv/a b/caf\xc3\xa9.txt"), Ok(path("/srv/a b/café.txt")));
            assert_eq!(FileTarget::parse(b"path:/x:y"), Ok(path("/x:y")), "only the first ':' separates");
        }
        assert_eq!(FileTarget::parse(b"path:a.txt"), Ok(path("a.txt")), "relative: the working directory's");
        #[cfg(windows)]
        assert_eq!(FileTarget::parse(br"path:C:\srv\a.txt"), Ok(path(r"C:\srv\a.txt")));
    }

    #[test]
    fn a_mount_target_should_name_its_index_and_the_path_below() {
        let mount = |index, tail: &str| Ok(FileTarget::Mount { index, tail: tail.to_owned() });
        assert_eq!(FileTarget::parse(b"mount:0:/a.txt"), mount(0, "/a.txt"));
        assert_eq!(FileTarget::parse(b"mount:12:"), mount(12, ""), "the mount's own root");
        assert_eq!(FileTarget::parse(b"mount:12"), mount(12, ""), "the mount's own root, without its ':'");
        assert_eq!(FileTarget::parse(b"mount:3:/a%2Fb/c:d"), mount(3, "/a%2Fb/c:d"), "the tail is kept as it is");
    }

    #[test]
    fn malformed_targets_should_be_invalid_answers_naming_the_target() {
        for (body, why) in [
            (&b"/srv/a.txt"[..], "no \"path:\" or \"mount:\""),
            (b"", "no \"path:\" or \"mount:\""),
            (b"file:/srv/a.txt", "no \"path:\" or \"mount:\""),
            (b"path:/a\xff", "not UTF-8"),
            (b"mount:x:/a", "not a number"),
            (b"mount:-1:/a", "not a number"),
            (b"mount::/a", "not a number"),
            (b"mount:99999999999999999999999:/a", "not a number"),
        ] {
            let err = FileTarget::parse(body).unwrap_err().to_string();
            assert!(err.contains(why), "{body:?}: {err}");
            assert!(err.starts_with(&format!("invalid file answer {:?}", String::from_utf8_lossy(body))), "{err}");
        }
    }
}
