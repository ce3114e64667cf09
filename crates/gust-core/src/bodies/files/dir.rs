//! A directory served as files: where a request path leads under it (index, fallback, precompressed siblings),
//! and a cache of small files and their coded variants, revalidated against the disk on every request. Only
//! lookups live here, run on tokio's blocking pool; answering with them is the response layer's
//! (`responses::files`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue};

use super::resolve::{Found, Root};
use crate::bodies::compress::{encoder, Accepted, Compression, Encoding};
use crate::values::mime;
use crate::values::sync::Locked;

/// Files up to this size are kept in memory once read (revalidated by size and modification time).
pub const SMALL_FILE: u64 = 64 * 1024;
/// The most bytes the small-file cache holds; past it, it starts over.
const CACHE_BYTES: usize = 16 * 1024 * 1024;

/// How a directory is served.
#[derive(Debug, Clone)]
pub struct StaticOptions {
    /// The file served for a directory (`index.html`); `None` makes directories 404.
    pub index: Option<String>,
    /// Serve names starting with `.`.
    pub dotfiles: bool,
    /// Follow symbolic links whose targets are outside the directory (links within it are always followed).
    pub follow_symlinks: bool,
    /// `Cache-Control` sent with every file (`public, max-age=31536000, immutable` for hashed assets).
    pub cache_control: Option<HeaderValue>,
    /// A file (relative to the directory) answered, with 200, for paths that name nothing: an SPA's `index.html`.
    pub fallback: Option<String>,
    /// Serve `<file>.br`, `<file>.zst` or `<file>.gz`, when present and the client accepts that encoding, in
    /// place of the file (with `Content-Encoding`, its own `ETag`, and `Vary: Accept-Encoding` on every answer).
    pub precompressed: bool,
}

impl Default for StaticOptions {
    fn default() -> Self {
        Self {
            index: Some("index.html".into()),
            dotfiles: false,
            follow_symlinks: false,
            cache_control: None,
            fallback: None,
            precompressed: false,
        }
    }
}

impl StaticOptions {
    /// Whether `name` may be a directory's index file: a name, not a path (no `/`, `\` or NUL), and not empty.
    pub fn is_index_name(name: &str) -> bool {
        !name.is_empty() && !name.contains(['/', '\\', '\0'])
    }

    /// Whether `path` may be the fallback: relative (not starting with `/` or `\`), not empty, and without a `..`
    /// segment.
    pub fn is_fallback_path(path: &str) -> bool {
        !path.is_empty() && !path.starts_with(['/', '\\']) && !path.split(['/', '\\']).any(|segment| segment == "..")
    }

    /// Whether `value` may be sent as `Cache-Control`: tabs and visible ASCII only.
    pub fn is_cache_control(value: &str) -> bool {
        value.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
    }
}

/// A directory served as files.
#[derive(Debug)]
pub struct StaticDir {
    root: Root,
    options: StaticOptions,
    cache: Mutex<Cache>,
    coded: Mutex<CodedCache>,
}

#[derive(Debug, Default)]
struct Cache {
    files: HashMap<PathBuf, (u64, SystemTime, Bytes)>,
    bytes: usize,
}

/// Coded variants of small files, by file and coding, with the size and modification time of the file they
/// were made from.
#[derive(Debug, Default)]
struct CodedCache {
    files: HashMap<(PathBuf, Encoding), (u64, SystemTime, Bytes)>,
    bytes: usize,
}

/// What the blocking pool found for a request: what the response layer answers from.
pub(crate) enum Lookup {
    Missing,
    Redirect,
    File {
        path: PathBuf,
        len: u64,
        modified: SystemTime,
        small: Option<Bytes>,
        file: Option<std::fs::File>,
        /// The `Content-Encoding` of a precompressed sibling served instead of the file (`path` stays the file's,
        /// for its type), or of a variant coded here.
        encoding: Option<Encoding>,
        /// The coding was made here, not read from a sibling: the tag is the file's, made weak (as for any
        /// compressed response), instead of a strong one of its own.
        weak: bool,
    },
}

impl StaticDir {
    /// The options it is served with.
    pub(crate) fn options(&self) -> &StaticOptions {
        &self.options
    }

    /// Serves `dir`, which must be an existing directory; an index that is not a name or a fallback that is not a
    /// relative path inside it is refused ([`StaticOptions::is_index_name`], [`StaticOptions::is_fallback_path`]).
    pub fn new(dir: impl AsRef<Path>, options: StaticOptions) -> std::io::Result<Self> {
        let invalid = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, what);
        if let Some(index) = options.index.as_deref().filter(|i| !StaticOptions::is_index_name(i)) {
            return Err(invalid(format!("index {index:?} is not a file name")));
        }
        if let Some(fallback) = options.fallback.as_deref().filter(|f| !StaticOptions::is_fallback_path(f)) {
            return Err(invalid(format!("fallback {fallback:?} is not a relative path inside the directory")));
        }
        let mut root = Root::new(dir)?;
        root.dotfiles = options.dotfiles;
        root.follow_symlinks = options.follow_symlinks;
        Ok(Self { root, options, cache: Mutex::default(), coded: Mutex::default() })
    }

    /// A small file's coded variant, when the client accepts a coding and the file is worth coding: from the cache
    /// when it holds one for the same size and modification time, else compressed now (on the I/O thread: at
    /// most 64 KiB, once per file and coding) and kept. A coding that does not shrink the file is not used.
    pub(crate) fn code(&self, mut looked: Lookup, headers: &HeaderMap, c: &Compression) -> Lookup {
        let Lookup::File { path, len, modified, small: Some(bytes), file: None, encoding: encoding @ None, weak } =
            &mut looked
        else {
            return looked;
        };
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let worth = bytes.len() >= c.threshold && c.compressible(mime::content_type(&name));
        let Some(coding) = Accepted::from_headers(headers).best(&c.encodings).filter(|_| worth) else { return looked };
        let key = (path.clone(), coding);
        let cached = {
            let held = self.coded.locked();
            held.files.get(&key).filter(|(l, m, _)| l == len && m == modified).map(|(_, _, b)| b.clone())
        };
        let coded = cached.or_else(|| {
            let coded = encoder::compress(coding, c.level(coding), bytes).ok()?;
            let mut held = self.coded.locked();
            if held.bytes + coded.len() > CACHE_BYTES {
                *held = CodedCache::default();
            }
            held.bytes += coded.len();
            held.files.insert(key, (*len, *modified, coded.clone()));
            Some(coded)
        });
        // `len` stays the file's: the tag is made from it.
        if let Some(coded) = coded.filter(|coded| coded.len() < bytes.len()) {
            *bytes = coded;
            *encoding = Some(coding);
            *weak = true;
        }
        looked
    }

    /// On the blocking pool: resolves the path (index and fallback included), and reads a small file or opens a
    /// large one.
    pub(crate) fn lookup(&self, tail: &str, accepted: &[Encoding]) -> Lookup {
        let (path, meta) = match self.locate(tail) {
            Located::File(path, meta) => (path, meta),
            Located::Redirect => return Lookup::Redirect,
            Located::Missing => return Lookup::Missing,
        };
        for &coding in accepted {
            let mut sibling = path.clone().into_os_string();
            sibling.push(coding.suffix());
            let sibling = PathBuf::from(sibling);
            let Ok(compressed) = std::fs::metadata(&sibling) else { continue };
            if !compressed.is_file() {
                continue;
            }
            if let Lookup::File { len, modified, small, file, .. } = open(sibling, &compressed, Some(&self.cache)) {
                return Lookup::File { path, len, modified, small, file, encoding: Some(coding), weak: false };
            }
        }
        open(path, &meta, Some(&self.cache))
    }

    /// Whether [`StaticDir::lookup`] would find something for `tail` (a file, an index, the fallback, or a
    /// directory's redirect) rather than miss; nothing is opened or read. What a handler's answer naming a file
    /// here is checked with before it is sent, so that a miss reaches the app's not-found handler.
    pub(crate) fn serves(&self, tail: &str) -> bool {
        !matches!(self.locate(tail), Located::Missing)
    }

    /// Where `tail` leads, the index and the fallback included; what [`StaticDir::lookup`] opens and
    /// [`StaticDir::serves`] asks about.
    fn locate(&self, tail: &str) -> Located {
        match self.root.resolve(tail) {
            Some(Found::File(path, meta)) => Located::File(path, meta),
            Some(Found::Directory(_)) if !tail.is_empty() && !tail.ends_with('/') => Located::Redirect,
            Some(Found::Directory(dir)) => {
                let index = self.options.index.as_ref().map(|index| dir.join(index));
                match index.and_then(|path| std::fs::metadata(&path).ok().map(|meta| (path, meta))) {
                    Some((path, meta)) if meta.is_file() => Located::File(path, meta),
                    _ => self.fallback(),
                }
            }
            None => self.fallback(),
        }
    }

    fn fallback(&self) -> Located {
        // Resolved as a request path is: a fallback can no more leave the directory than a request can.
        let Some(name) = &self.options.fallback else { return Located::Missing };
        match self.root.resolve(name) {
            Some(Found::File(path, meta)) => Located::File(path, meta),
            _ => Located::Missing,
        }
    }
}

/// Where a request path below a directory leads.
enum Located {
    File(PathBuf, std::fs::Metadata),
    Redirect,
    Missing,
}

/// Whether [`lookup_file`] would find a regular file at `path`.
pub(crate) fn is_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file())
}

/// On the blocking pool: one file by its path, uncached (a handler's `c.file(path)`); missing when there is no
/// regular file there.
pub(crate) fn lookup_file(path: PathBuf) -> Lookup {
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => open(path, &meta, None),
        _ => Lookup::Missing,
    }
}

/// Reads a small file (through `cache` when given) or opens a large one.
fn open(path: PathBuf, meta: &std::fs::Metadata, cache: Option<&Mutex<Cache>>) -> Lookup {
    let len = meta.len();
    let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    if len <= SMALL_FILE {
        if let Some(cache) = cache {
            let held = cache.locked();
            if let Some((l, m, bytes)) = held.files.get(&path) {
                if *l == len && *m == modified {
                    return Lookup::File {
                        path,
                        len,
                        modified,
                        small: Some(bytes.clone()),
                        file: None,
                        encoding: None,
                        weak: false,
                    };
                }
            }
        }
        let Ok(read) = std::fs::read(&path) else { return Lookup::Missing };
        // Changed between the metadata and the read: serve what was read, with validators of its own size.
        let bytes = Bytes::from(read);
        let len = bytes.len() as u64;
        if let Some(cache) = cache {
            let mut held = cache.locked();
            if held.bytes + bytes.len() > CACHE_BYTES {
                *held = Cache::default();
            }
            held.bytes += bytes.len();
            held.files.insert(path.clone(), (len, modified, bytes.clone()));
        }
        return Lookup::File { path, len, modified, small: Some(bytes), file: None, encoding: None, weak: false };
    }
    match std::fs::File::open(&path) {
        Ok(file) => Lookup::File { path, len, modified, small: None, file: Some(file), encoding: None, weak: false },
        Err(_) => Lookup::Missing,
    }
}

/// The precompressed encodings a request accepts, best first: q-values decide, and among equals brotli, then zstd,
/// then gzip (smallest first). `identity` is always acceptable here: the file itself is the fallback.
pub(crate) fn accepted_encodings(headers: &HeaderMap) -> Vec<Encoding> {
    Accepted::from_headers(headers).ranked(&Encoding::ALL)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(accept_encoding: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(http::header::ACCEPT_ENCODING, HeaderValue::from_str(accept_encoding).unwrap());
        h
    }

    #[test]
    fn encodings_are_negotiated_by_q_value_then_size() {
        let order = |value: &str| -> Vec<&str> {
            accepted_encodings(&headers(value)).into_iter().map(Encoding::token).collect()
        };
        assert_eq!(order("gzip, deflate, br, zstd"), ["br", "zstd", "gzip"]);
        assert_eq!(order("gzip;q=1, br;q=0.5"), ["gzip", "br"]);
        assert_eq!(order("br;q=0, gzip"), ["gzip"], "q=0 refuses");
        assert_eq!(order("*"), ["br", "zstd", "gzip"]);
        assert_eq!(order("*;q=0.1, gzip;q=0.9"), ["gzip", "br", "zstd"]);
        assert_eq!(order("identity"), Vec::<&str>::new());
        assert_eq!(order("br;q=2, gzip;q=abc, x-gzip"), ["gzip"], "malformed weights drop their coding");
        assert!(accepted_encodings(&HeaderMap::new()).is_empty());
    }

    #[test]
    fn static_options_should_refuse_an_index_or_fallback_that_could_leave_the_directory() {
        for name in ["index.html", "index.htm", ".index", "a..b"] {
            assert!(StaticOptions::is_index_name(name), "{name}");
        }
        for name in ["", "a/index.html", "/etc/passwd", "a\\b", "a\0b"] {
            assert!(!StaticOptions::is_index_name(name), "{name:?}");
        }
        for path in ["index.html", "app/index.html", "a..b/c", ".well-known/x"] {
            assert!(StaticOptions::is_fallback_path(path), "{path}");
        }
        for path in ["", "/index.html", "\\index.html", "../x", "a/../../x", "a\\..\\x", ".."] {
            assert!(!StaticOptions::is_fallback_path(path), "{path:?}");
        }
        assert!(StaticOptions::is_cache_control("public, max-age=31536000,\timmutable"));
        assert!(StaticOptions::is_cache_control(""));
        for value in ["a\r\nb", "caf\u{e9}", "\x7f"] {
            assert!(!StaticOptions::is_cache_control(value), "{value:?}");
        }
        let dir = std::env::temp_dir();
        let with = |index: Option<&str>, fallback: Option<&str>| {
            let options = StaticOptions {
                index: index.map(Into::into),
                fallback: fallback.map(Into::into),
                ..StaticOptions::default()
            };
            StaticDir::new(&dir, options).map(|_| ()).map_err(|e| e.to_string())
        };
        assert_eq!(with(Some("index.html"), Some("app/index.html")), Ok(()));
        assert_eq!(with(None, None), Ok(()));
        assert!(with(Some("/etc/passwd"), None).unwrap_err().contains("index"));
        assert!(with(None, Some("../secret")).unwrap_err().contains("fallback"));
    }
}
