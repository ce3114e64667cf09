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

#[test]
fn ws_frames() {
    replay("ws_frames", fuzzing::ws_frames);
}

#[test]
fn ws_deflate() {
    replay("ws_deflate", fuzzing::ws_deflate);
}

#[test]
fn ws_extension() {
    replay("ws_extension", fuzzing::ws_extension);
}

#[test]
fn answer_batch() {
    replay("answer_batch", fuzzing::answer_batch);
}

#[test]
fn range() {
    replay("range", fuzzing::range);
}

#[test]
fn accept_encoding() {
    replay("accept_encoding", fuzzing::accept_encoding);
}

#[test]
fn request_path() {
    replay("request_path", fuzzing::request_path);
}

#[test]
fn static_path() {
    replay("static_path", fuzzing::static_path);
}

#[test]
fn content_coding() {
    replay("content_coding", fuzzing::content_coding);
}
