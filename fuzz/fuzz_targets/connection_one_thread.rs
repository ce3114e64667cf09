//! Fuzz target: `gust_core::fuzzing::connection_one_thread` (`connection` through the one-thread engine; it
//! starts from `connection`'s corpus, see scripts/fuzz.mjs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gust_core::fuzzing::connection_one_thread(data));
