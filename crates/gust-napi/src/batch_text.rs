//! Reading an answer batch's text out of JavaScript.

use bytes::{Bytes, BytesMut};
use gust_core::Text;
use napi::{sys, JsString, JsValue};

/// Reads the whole text of a batch. An ASCII string (the common case: header texts are ASCII by the rules
/// `checkHeader` enforces, and most bodies are) is copied once, as bytes, into the buffer every header value and
/// body of the batch will be a slice of. Anything else is read as UTF-16, for the core to re-encode piece by
/// piece (lone surrogates become U+FFFD, as `Buffer.from(string)` makes them).
///
/// Cost: one `napi_get_value_string_utf16` call for the length (O(1) in V8 and JavaScriptCore), one UTF-8 copy,
/// and an ASCII check of the bytes copied.
pub(crate) fn read(text: &JsString<'_>) -> napi::Result<Text> {
    let value = text.value();
    let mut units = 0;
    // SAFETY: a null buffer asks only for the length, in UTF-16 code units.
    check(unsafe { sys::napi_get_value_string_utf16(value.env, value.value, std::ptr::null_mut(), 0, &mut units) })?;
    if units == 0 {
        return Ok(Text::Ascii(Bytes::new()));
    }
    // An ASCII string is exactly `units` bytes of UTF-8; one more byte is room for the terminating NUL napi
    // writes. A string that is not ASCII is longer in UTF-8, so it is cut short or has a byte above 0x7f.
    let mut buf = BytesMut::with_capacity(units + 1);
    let mut copied = 0;
    // SAFETY: `buf` has room for `units + 1` bytes; napi writes at most that many, NUL included, and reports
    // how many it wrote before the NUL, so only initialised bytes are exposed by `set_len`.
    unsafe {
        check(sys::napi_get_value_string_utf8(
            value.env,
            value.value,
            buf.as_mut_ptr().cast(),
            units + 1,
            &mut copied,
        ))?;
        buf.set_len(copied.min(units));
    }
    if copied == units && buf.is_ascii() {
        return Ok(Text::Ascii(buf.freeze()));
    }
    let mut wide: Vec<u16> = Vec::with_capacity(units + 1);
    // SAFETY: as above, with room for `units` code units and the NUL.
    unsafe {
        check(sys::napi_get_value_string_utf16(value.env, value.value, wide.as_mut_ptr(), units + 1, &mut copied))?;
        wide.set_len(copied.min(units));
    }
    Ok(Text::Utf16(wide))
}

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!("could not read the answer text (napi status {status})")))
    }
}
