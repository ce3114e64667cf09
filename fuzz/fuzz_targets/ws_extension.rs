//! Fuzz target: `gust_core::fuzzing::ws_extension` (its property is documented there and in fuzz/README.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gust_core::fuzzing::ws_extension(data));
