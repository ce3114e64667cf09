//! The door for the static files' path guard, over a fixture tree with links in and out of its root.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::selector;
use crate::bodies::files::resolve::{Found, Root};

/// The static files' guard: a root with files, a dotfile, a directory and links in and out, beside a sibling
/// whose name extends the root's and a directory outside it.
pub fn static_path(data: &[u8]) {
    let (sel, raw) = selector(data);
    let Ok(raw) = std::str::from_utf8(raw) else { return };
    let tree = fixture_tree();
    let mut root = Root::new(tree.join("root")).expect("the fixture root");
    root.dotfiles = sel & 1 != 0;
    let dir = root.dir().to_path_buf();
    let Some(found) = root.resolve(raw) else { return };
    let path = match found {
        Found::File(path, meta) => {
            assert!(meta.is_file());
            path
        }
        Found::Directory(path) => path,
    };
    assert!(path.starts_with(&dir), "{raw:?} resolved to {} outside {}", path.display(), dir.display());
    if !root.dotfiles {
        let hidden = path
            .strip_prefix(&dir)
            .expect("inside")
            .components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
        assert!(!hidden, "{raw:?} resolved to a dotfile: {}", path.display());
    }
}

/// The tree [`static_path`] serves, made once per process under the system's temporary directory.
fn fixture_tree() -> &'static Path {
    static TREE: OnceLock<PathBuf> = OnceLock::new();
    TREE.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("gust-fuzz-tree-{}", std::process::id()));
        let write = |rel: &str, body: &str| {
            let path = base.join(rel);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("fixture dir");
            std::fs::write(path, body).expect("fixture file");
        };
        write("root/index.html", "index");
        write("root/a.txt", "a");
        write("root/.env", "secret");
        write("root/dir/b.txt", "b");
        write("root/dir/.git/config", "secret");
        write("root-evil/x.txt", "outside");
        write("outside/secret.txt", "outside");
        #[cfg(unix)]
        {
            let _ = std::os::unix::fs::symlink(base.join("outside/secret.txt"), base.join("root/out-link"));
            let _ = std::os::unix::fs::symlink(base.join("outside"), base.join("root/out-dir"));
            let _ = std::os::unix::fs::symlink(base.join("root/a.txt"), base.join("root/dir/in-link"));
        }
        base
    })
}
