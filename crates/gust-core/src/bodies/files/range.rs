//! `Range: bytes=…` (RFC 9110 §14): which part of a representation a request asks for.
//!
//! One range is served as a 206 with `Content-Range`; several are coalesced when they overlap or touch and, if
//! more than one remains, the whole representation is sent (200), as many servers do rather than build
//! `multipart/byteranges`. A request with more than [`MAX_RANGES`] ranges is ignored the same way: a thousand
//! overlapping ranges are an amplification attack, not a request.

use std::ops::Range;

/// The most ranges a request may list before the header is ignored.
pub const MAX_RANGES: usize = 16;

/// What a `Range` header asks of a representation of a known length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ranged {
    /// No usable range (absent, another unit, malformed, too many, or several disjoint ones): send it all, 200.
    Full,
    /// One satisfiable range: send those bytes, 206 with `Content-Range: bytes start-end/len`.
    Partial(Range<u64>),
    /// Syntactically valid but none satisfiable: 416 with `Content-Range: bytes */len`.
    Unsatisfiable,
}

/// Evaluates a `Range` header value against a representation of `len` bytes.
pub fn evaluate(header: &[u8], len: u64) -> Ranged {
    let Ok(text) = std::str::from_utf8(header) else { return Ranged::Full };
    let Some((unit, set)) = text.split_once('=') else { return Ranged::Full };
    if !unit.trim().eq_ignore_ascii_case("bytes") {
        return Ranged::Full;
    }
    let mut ranges: Vec<Range<u64>> = Vec::new();
    let mut any = false;
    for (i, spec) in set.split(',').enumerate() {
        if i >= MAX_RANGES {
            return Ranged::Full;
        }
        let spec = spec.trim();
        if spec.is_empty() {
            continue;
        }
        let Some((first, last)) = spec.split_once('-') else { return Ranged::Full };
        let (first, last) = (first.trim(), last.trim());
        let range = match (first.is_empty(), last.is_empty()) {
            // `-N`: the last N bytes.
            (true, false) => {
                let Some(n) = digits(last) else { return Ranged::Full };
                any = true;
                if n == 0 || len == 0 {
                    continue;
                }
                len.saturating_sub(n)..len
            }
            // `N-`: from N to the end.
            (false, true) => {
                let Some(start) = digits(first) else { return Ranged::Full };
                any = true;
                if start >= len {
                    continue;
                }
                start..len
            }
            (false, false) => {
                let (Some(start), Some(end)) = (digits(first), digits(last)) else { return Ranged::Full };
                if end < start {
                    return Ranged::Full;
                }
                any = true;
                if start >= len {
                    continue;
                }
                start..end.saturating_add(1).min(len)
            }
            (true, true) => return Ranged::Full,
        };
        ranges.push(range);
    }
    if !any {
        return Ranged::Full;
    }
    if ranges.is_empty() {
        return Ranged::Unsatisfiable;
    }
    ranges.sort_by_key(|r| r.start);
    let mut merged = ranges[0].clone();
    for r in &ranges[1..] {
        if r.start > merged.end {
            // Disjoint ranges would need multipart/byteranges: the whole body answers them all.
            return Ranged::Full;
        }
        merged.end = merged.end.max(r.end);
    }
    Ranged::Partial(merged)
}

/// A non-empty run of ASCII digits (RFC 9110 `1*DIGIT`), without sign or spaces.
fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `Content-Range` for a 206.
pub fn content_range(range: &Range<u64>, len: u64) -> String {
    format!("bytes {}-{}/{len}", range.start, range.end - 1)
}

/// `Content-Range` for a 416.
pub fn unsatisfied_range(len: u64) -> String {
    format!("bytes */{len}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(h: &str, len: u64) -> Ranged {
        evaluate(h.as_bytes(), len)
    }

    #[test]
    fn single_ranges_in_every_form() {
        assert_eq!(eval("bytes=0-99", 1000), Ranged::Partial(0..100));
        assert_eq!(eval("bytes=900-", 1000), Ranged::Partial(900..1000));
        assert_eq!(eval("bytes=-100", 1000), Ranged::Partial(900..1000));
        assert_eq!(eval("bytes=-5000", 1000), Ranged::Partial(0..1000), "a suffix longer than the body is all of it");
        assert_eq!(eval("bytes=990-2000", 1000), Ranged::Partial(990..1000), "an end past the body is clamped");
        assert_eq!(eval("BYTES = 5-5", 1000), Ranged::Partial(5..6));
        assert_eq!(content_range(&(0..100), 1000), "bytes 0-99/1000");
    }

    #[test]
    fn unsatisfiable_ranges_are_416_and_malformed_ones_are_ignored() {
        assert_eq!(eval("bytes=1000-", 1000), Ranged::Unsatisfiable);
        assert_eq!(eval("bytes=999999999-", 10), Ranged::Unsatisfiable);
        assert_eq!(eval("bytes=-0", 10), Ranged::Unsatisfiable);
        assert_eq!(eval("bytes=0-", 0), Ranged::Unsatisfiable, "nothing of an empty body is satisfiable");
        assert_eq!(unsatisfied_range(10), "bytes */10");
        for bad in [
            "",
            "bytes",
            "bytes=",
            "bytes=-",
            "bytes=5-1",
            "bytes=a-b",
            "bytes=+1-2",
            "items=0-1",
            "bytes=0-1-2",
            "bytes= 1 2-3",
        ] {
            assert_eq!(eval(bad, 1000), Ranged::Full, "{bad:?}");
        }
        assert_eq!(evaluate(b"bytes=\xff-1", 10), Ranged::Full);
    }

    #[test]
    fn several_ranges_coalesce_or_fall_back_to_the_whole_body() {
        assert_eq!(eval("bytes=0-10,5-20,21-30", 100), Ranged::Partial(0..31), "overlapping and adjacent merge");
        assert_eq!(eval("bytes=50-60, 0-10", 100), Ranged::Full, "disjoint: the whole body");
        assert_eq!(eval("bytes=0-1,200-300", 100), Ranged::Partial(0..2), "unsatisfiable parts drop out");
        let many = format!("bytes={}", vec!["0-1"; MAX_RANGES + 1].join(","));
        assert_eq!(eval(&many, 100), Ranged::Full, "too many ranges are ignored, not merged");
        let enough = format!("bytes={}", vec!["0-1"; MAX_RANGES].join(","));
        assert_eq!(eval(&enough, 100), Ranged::Partial(0..2));
    }
}
