//! From a request path to a file under a root directory, never outside it.
//!
//! The path's segments are percent-decoded once, each on its own (by the engine's one decoder, [`percent_decode`]; a
//! malformed escape or bytes that are not UTF-8 refuse the path), and a segment is refused when it could name anything
//! but a child: `.` and `..`, an empty segment inside the path, a decoded `/` or `\`, NUL and other control bytes, a
//! `:` (a Windows drive or stream), and a dotfile unless allowed. What is left is joined under the root and resolved on
//! disk; a symbolic link whose target leaves the root is refused unless allowed. Every refusal is "not found", so a
//! probe learns nothing it could not from a missing file.

use std::fs::Metadata;
use std::io;
use std::path::{Path, PathBuf};

use crate::values::path::percent_decode;

/// A directory files are served from, and what it allows.
#[derive(Debug, Clone)]
pub struct Root {
    /// The directory, canonical (symbolic links resolved).
    dir: PathBuf,
    /// Serve names starting with `.` (`.well-known` needs it; `.env` and `.git` are why it is off by default).
    pub dotfiles: bool,
    /// Follow symbolic links whose targets are outside the root.
    pub follow_symlinks: bool,
}

/// What a request path names under a root.
#[derive(Debug)]
pub enum Found {
    /// A regular file, with its metadata (read once, with the resolution).
    File(PathBuf, Metadata),
    /// A directory: served through its index file, after a redirect if the path lacked its trailing slash.
    Directory(PathBuf),
}

impl Root {
    /// A root at `dir`, which must be an existing directory.
    pub fn new(dir: impl AsRef<Path>) -> io::Result<Self> {
        let dir = std::fs::canonicalize(dir.as_ref())?;
        if !dir.is_dir() {
            return Err(io::Error::new(io::ErrorKind::NotADirectory, format!("{} is not a directory", dir.display())));
        }
        Ok(Self { dir, dotfiles: false, follow_symlinks: false })
    }

    /// The canonical directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file or directory `raw` (the request path below the root's prefix, still percent-encoded, with or
    /// without a leading `/`) names, or `None` for anything refused or missing.
    pub fn resolve(&self, raw: &str) -> Option<Found> {
        let relative = self.relative(raw)?;
        let candidate = self.dir.join(&relative);
        let real = std::fs::canonicalize(&candidate).ok()?;
        if !real.starts_with(&self.dir) && !self.follow_symlinks {
            return None;
        }
        let meta = std::fs::metadata(&real).ok()?;
        if meta.is_dir() {
            Some(Found::Directory(real))
        } else if meta.is_file() {
            Some(Found::File(real, meta))
        } else {
            // Devices, sockets and FIFOs are never content.
            None
        }
    }

    /// The checked, decoded relative path, or `None` when a segment is refused.
    fn relative(&self, raw: &str) -> Option<PathBuf> {
        let trimmed = raw.strip_prefix('/').unwrap_or(raw);
        let segments: Vec<&str> = trimmed.split('/').collect();
        let mut out = PathBuf::new();
        for (i, segment) in segments.iter().enumerate() {
            // A trailing slash (a directory) leaves one empty segment at the end; any other empty one is `//`.
            if segment.is_empty() {
                if i + 1 == segments.len() {
                    break;
                }
                return None;
            }
            let decoded = percent_decode(segment)?;
            if decoded == "." || decoded == ".." || (decoded.starts_with('.') && !self.dotfiles) {
                return None;
            }
            if decoded.bytes().any(|b| b == b'/' || b == b'\\' || b == b':' || b < 0x20 || b == 0x7f) {
                return None;
            }
            out.push(&*decoded);
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A fresh directory tree: `root/{a.txt, sub/b.txt, .env, dir/index.html, café.txt}` and `outside/secret`.
    fn tree() -> (PathBuf, Root) {
        static N: AtomicU32 = AtomicU32::new(0);
        let base = std::env::temp_dir().join(format!(
            "gust-resolve-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(root.join("dir")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        for (path, text) in
            [("a.txt", "a"), ("sub/b.txt", "b"), (".env", "x"), ("dir/index.html", "i"), ("café.txt", "c")]
        {
            std::fs::write(root.join(path), text).unwrap();
        }
        std::fs::write(base.join("outside/secret"), "s").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(base.join("outside/secret"), root.join("escape")).unwrap();
            std::os::unix::fs::symlink(root.join("a.txt"), root.join("inside-link")).unwrap();
            std::os::unix::fs::symlink(base.join("outside"), root.join("escape-dir")).unwrap();
        }
        let r = Root::new(&root).unwrap();
        (base, r)
    }

    fn file_name(found: Option<Found>) -> Option<String> {
        match found? {
            Found::File(p, _) => Some(p.file_name()?.to_string_lossy().into_owned()),
            Found::Directory(p) => Some(format!("{}/", p.file_name()?.to_string_lossy())),
        }
    }

    #[test]
    fn files_and_directories_under_the_root_are_found() {
        let (base, root) = tree();
        assert_eq!(file_name(root.resolve("/a.txt")).as_deref(), Some("a.txt"));
        assert_eq!(file_name(root.resolve("sub/b.txt")).as_deref(), Some("b.txt"));
        assert_eq!(file_name(root.resolve("/caf%C3%A9.txt")).as_deref(), Some("café.txt"));
        assert_eq!(file_name(root.resolve("/dir")).as_deref(), Some("dir/"));
        assert_eq!(file_name(root.resolve("/dir/")).as_deref(), Some("dir/"));
        assert_eq!(file_name(root.resolve("/")).as_deref(), Some("root/"));
        assert!(root.resolve("/missing.txt").is_none());
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn no_escape_attempt_leaves_the_root() {
        let (base, root) = tree();
        let attempts = [
            "/../outside/secret",
            "/..%2foutside%2fsecret",
            "/..%2Foutside/secret",
            "/%2e%2e/outside/secret",
            "/%2E%2E/outside/secret",
            "/.%2e/outside/secret",
            "/%2e./outside/secret",
            "/sub/../../outside/secret",
            "/sub/%2e%2e/%2e%2e/outside/secret",
            "/..\\outside\\secret",
            "/..%5coutside%5csecret",
            "/sub%5c..%5c..%5coutside%5csecret",
            "/a.txt%00.png",
            "/a.txt\0",
            "/%00",
            "//etc/passwd",
            "/%2fetc%2fpasswd",
            "/c:/windows/win.ini",
            "/C%3a%5cwindows",
            "/%252e%252e/outside/secret",
            "/.env",
            "/%2eenv",
            "/./a.txt",
            "/sub/./b.txt",
            "/%zz",
            "/%c3",
            "/escape",
            "/escape-dir/secret",
        ];
        for attempt in attempts {
            assert!(root.resolve(attempt).is_none(), "{attempt} must not resolve");
        }
        #[cfg(unix)]
        assert_eq!(file_name(root.resolve("/inside-link")).as_deref(), Some("a.txt"), "links within the root are fine");
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn options_allow_dotfiles_and_links_out() {
        let (base, mut root) = tree();
        root.dotfiles = true;
        assert_eq!(file_name(root.resolve("/.env")).as_deref(), Some(".env"));
        assert!(root.resolve("/../outside/secret").is_none(), "dotfiles never allow `..`");
        #[cfg(unix)]
        {
            root.follow_symlinks = true;
            assert_eq!(file_name(root.resolve("/escape")).as_deref(), Some("secret"));
        }
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn a_root_must_be_a_directory() {
        let (base, root) = tree();
        assert!(Root::new(root.dir().join("a.txt")).is_err());
        assert!(Root::new(base.join("nope")).is_err());
        std::fs::remove_dir_all(base).unwrap();
    }
}
