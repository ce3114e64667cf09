//! Fuzz target: `gust_core::fuzzing::connection` (its property is documented there and in fuzz/README.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gust_core::fuzzing::connection(data));
