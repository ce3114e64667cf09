//! Replays every committed fuzz input (fuzz/corpus/<target>/, regressions included) through its door in
//! `gust_core::fuzzing`, then [`MUTANTS`] mutants of each (bytes flipped, dropped, repeated, spliced with another
//! input), drawn from a fixed seed: a decoder fixed after a fuzzer found a failure stays fixed on stable Rust,
//! without cargo-fuzz, and the neighbourhood of every known input is searched on each `make test` with the
//! debug build's overflow checks on. Coverage-guided search (libFuzzer, AddressSanitizer, nightly) is
//! `make fuzz`.
#![cfg(feature = "fuzzing")]

use std::path::Path;

use gust_core::fuzzing;

/// Mutants tried per committed input. Same seed every run: a failure names its input and mutant, and repeats.
const MUTANTS: u64 = 512;

/// xorshift64*: enough to draw mutations, and the same sequence on every machine.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// One mutant of `input`: one to four edits of the kinds libFuzzer starts with.
fn mutant(input: &[u8], others: &[Vec<u8>], draw: &mut Draw) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=draw.below(4) {
        let at = draw.below(out.len() + 1);
        match draw.below(6) {
            // A bit flipped.
            0 if at < out.len() => out[at] ^= 1 << draw.below(8),
            // A byte set to an edge value, or any.
            1 if at < out.len() => out[at] = [0, 0xff, 0x7f, 0x80, b'\r', b'\n', b':', b';'][draw.below(8)],
            // A run dropped.
            2 if at < out.len() => {
                let end = (at + 1 + draw.below(16)).min(out.len());
                out.drain(at..end);
            }
            // A run repeated.
            3 if at < out.len() => {
                let end = (at + 1 + draw.below(32)).min(out.len());
                let run = out[at..end].to_vec();
                let times = 1 + draw.below(8);
                for _ in 0..times {
                    out.splice(at..at, run.iter().copied());
                }
            }
            // Spliced with another input of the target.
            4 if !others.is_empty() => {
                let other = &others[draw.below(others.len())];
                let from = draw.below(other.len() + 1);
                out.truncate(at);
                out.extend_from_slice(&other[from..]);
            }
            // A random byte inserted.
            _ => out.insert(at, draw.next() as u8),
        }
    }
    out
}

fn replay(target: &str, door: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut inputs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "{target} has no corpus");
    let corpus: Vec<Vec<u8>> = inputs.iter().map(|input| std::fs::read(input).expect("a corpus file")).collect();
    for (input, data) in inputs.iter().zip(&corpus) {
        let name = input.display().to_string();
        // Named on failure: the input to hand `cargo fuzz run <target> <file>`.
        let outcome = std::panic::catch_unwind(|| door(data));
        assert!(outcome.is_ok(), "{target} fails on {name}");
    }
    let mut draw = Draw(0x9e37_79b9_7f4a_7c15 ^ target.len() as u64);
    for (input, data) in inputs.iter().zip(&corpus) {
        for k in 0..MUTANTS {
            let bytes = mutant(data, &corpus, &mut draw);
            if std::panic::catch_unwind(|| door(&bytes)).is_err() {
                // Kept where `cargo fuzz run` can take it, and named.
                let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-mutants").join(target);
                let _ = std::fs::create_dir_all(&dir);
                let file =
                    dir.join(format!("mutant-{k}-of-{}", input.file_name().unwrap_or_default().to_string_lossy()));
                let _ = std::fs::write(&file, &bytes);
                panic!("{target} fails on mutant {k} of {} (written to {})", input.display(), file.display());
            }
        }
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
