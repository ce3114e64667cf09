//! The door for `Range` headers.

use crate::bodies::files::range::{self as ranges, Ranged};

/// A `Range` header against a file whose length the first eight bytes give.
pub fn range(data: &[u8]) {
    if data.len() < 8 {
        return;
    }
    let (len, header) = data.split_at(8);
    let len = u64::from_le_bytes(len.try_into().expect("eight bytes")) >> (len[0] & 63);
    match ranges::evaluate(header, len) {
        Ranged::Partial(r) => {
            assert!(r.start < r.end && r.end <= len, "range {r:?} outside a file of {len} bytes");
            let stated = ranges::content_range(&r, len);
            assert_eq!(stated, format!("bytes {}-{}/{len}", r.start, r.end - 1));
        }
        Ranged::Unsatisfiable => assert_eq!(ranges::unsatisfied_range(len), format!("bytes */{len}")),
        Ranged::Full => {}
    }
}
