//! Replays every committed fuzz input (fuzz/corpus/<target>/, regressions included) through its door in
//! `gust_core::fuzzing`: a decoder fixed after a fuzzer found a failure stays fixed on stable Rust, without
//! cargo-fuzz. `make fuzz` searches for new inputs.
#![cfg(feature = "fuzzing")]

use std::path::Path;

use gust_core::fuzzing;

fn replay(target: &str, door: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut inputs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "{target} has no corpus");
    for input in inputs {
        let data = std::fs::read(&input).expect("a corpus file");
        let name = input.display().to_string();
        // Named on failure: the input to hand `cargo fuzz run <target> <file>`.
        let outcome = std::panic::catch_unwind(|| door(&data));
        assert!(outcome.is_ok(), "{target} fails on {name}");
    }
}

/// One test per fuzz target, named after it, replaying its corpus through the door of the same name.
macro_rules! replays {
    ($($target:ident),* $(,)?) => {$(
        #[test]
        fn $target() {
            replay(stringify!($target), fuzzing::$target);
        }
    )*};
}

replays!(
    ws_frames,
    ws_deflate,
    ws_extension,
    answer_batch,
    range,
    accept_encoding,
    request_path,
    static_path,
    content_coding,
    connection
);

/// The one-thread engine takes the same connections as the threaded one: `connection`'s corpus through its door.
#[test]
fn connection_one_thread() {
    replay("connection", fuzzing::connection_one_thread);
}
