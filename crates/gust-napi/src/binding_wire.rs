//! The wire formats' named numbers (`gust_core::wire::layout`), for `scripts/gen-wire-layout.mjs`, which writes
//! `packages/gust/src/native/layout.ts` from them at build time, and for the package's test that the two agree.

use napi_derive::napi;

/// One named number of the wire formats.
#[napi(object)]
pub struct BindingWireEntry {
    /// The name the package reads it by.
    pub name: String,
    /// Its value (flags unshifted).
    pub value: u32,
    /// One line on what it is.
    pub doc: String,
}

/// Every named number of the wire formats, in the core's order. Called at build time and by tests, never per
/// request.
#[napi]
pub fn wire_layout() -> Vec<BindingWireEntry> {
    gust_core::wire::layout::LAYOUT
        .iter()
        .map(|e| BindingWireEntry { name: e.name.to_owned(), value: e.value, doc: e.doc.to_owned() })
        .collect()
}
