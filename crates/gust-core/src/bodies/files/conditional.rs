//! Validators of a file and the conditional requests they answer (RFC 9110 §8.8 and §13): `ETag` and
//! `Last-Modified` out, `If-Match`, `If-Unmodified-Since`, `If-None-Match`, `If-Modified-Since` and `If-Range` in,
//! evaluated in the order §13.2.2 gives.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::header::{IF_MATCH, IF_MODIFIED_SINCE, IF_NONE_MATCH, IF_RANGE, IF_UNMODIFIED_SINCE};
use http::HeaderMap;

/// What identifies one version of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validators {
    /// A strong entity tag, quoted: `"<len hex>-<mtime ns hex>"`. Changes whenever the size or the modification
    /// time does (to the nanosecond where the file system keeps them).
    pub etag: String,
    /// The modification time, truncated to the second as HTTP dates are.
    pub last_modified: SystemTime,
}

impl Validators {
    /// The validators of a file of `len` bytes last modified at `modified`.
    pub fn new(len: u64, modified: SystemTime) -> Self {
        let since = modified.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
        Self {
            etag: format!("\"{len:x}-{:x}\"", since.as_nanos()),
            last_modified: UNIX_EPOCH + Duration::from_secs(since.as_secs()),
        }
    }

    /// `Last-Modified` as an HTTP date.
    pub fn last_modified_header(&self) -> String {
        httpdate::fmt_http_date(self.last_modified)
    }
}

/// What the preconditions of a request decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precondition {
    /// Serve the representation (a `Range` may still apply).
    Proceed,
    /// 304 Not Modified (GET and HEAD only), with the validators.
    NotModified,
    /// 412 Precondition Failed.
    Failed,
}

/// Evaluates the preconditions of a request for a file with validators `v` (`safe`: GET or HEAD).
pub fn evaluate(headers: &HeaderMap, v: &Validators, safe: bool) -> Precondition {
    // 1–2: the client's copy must be the current one.
    if let Some(value) = joined(headers, IF_MATCH) {
        if !matches_list(&value, &v.etag, true) {
            return Precondition::Failed;
        }
    } else if let Some(since) = date(headers, IF_UNMODIFIED_SINCE) {
        if v.last_modified > since {
            return Precondition::Failed;
        }
    }
    // 3–4: the client's copy may already be current.
    if let Some(value) = joined(headers, IF_NONE_MATCH) {
        if matches_list(&value, &v.etag, false) {
            return if safe { Precondition::NotModified } else { Precondition::Failed };
        }
    } else if safe {
        if let Some(since) = date(headers, IF_MODIFIED_SINCE) {
            if v.last_modified <= since {
                return Precondition::NotModified;
            }
        }
    }
    Precondition::Proceed
}

/// Whether a `Range` applies under `If-Range` (§13.1.5): absent, a strong match of the entity tag, or exactly the
/// modification date. Otherwise the whole representation is sent.
pub fn range_applies(headers: &HeaderMap, v: &Validators) -> bool {
    let Some(value) = headers.get(IF_RANGE) else { return true };
    let Ok(value) = value.to_str() else { return false };
    let value = value.trim();
    if value.starts_with('"') || value.starts_with("W/") {
        return !value.starts_with("W/") && value == v.etag;
    }
    httpdate::parse_http_date(value).is_ok_and(|d| d == v.last_modified)
}

/// Every value of a list header joined with commas, or none when absent.
fn joined(headers: &HeaderMap, name: http::HeaderName) -> Option<String> {
    let mut values = headers.get_all(name).iter().peekable();
    values.peek()?;
    Some(values.filter_map(|v| v.to_str().ok()).collect::<Vec<_>>().join(","))
}

fn date(headers: &HeaderMap, name: http::HeaderName) -> Option<SystemTime> {
    httpdate::parse_http_date(headers.get(name)?.to_str().ok()?.trim()).ok()
}

/// Whether an `If-Match` / `If-None-Match` list holds `etag` (`*` holds any). `strong`: a weak tag never matches
/// (If-Match); otherwise tags compare without their `W/` (If-None-Match's weak comparison).
fn matches_list(list: &str, etag: &str, strong: bool) -> bool {
    if list.trim() == "*" {
        return true;
    }
    list.split(',').map(str::trim).filter(|t| !t.is_empty()).any(|tag| match tag.strip_prefix("W/") {
        Some(_) if strong => false,
        Some(weak) => weak == etag,
        None => tag == etag,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (n, v) in pairs {
            h.append(http::HeaderName::from_bytes(n.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    fn file() -> Validators {
        Validators::new(1234, UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789))
    }

    #[test]
    fn validators_change_with_size_and_time_and_dates_are_whole_seconds() {
        let v = file();
        assert_eq!(v.etag, format!("\"4d2-{:x}\"", 1_700_000_000_123_456_789u128));
        assert_ne!(v.etag, Validators::new(1235, UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789)).etag);
        assert_ne!(v.etag, Validators::new(1234, UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_790)).etag);
        assert_eq!(v.last_modified_header(), "Tue, 14 Nov 2023 22:13:20 GMT");
    }

    #[test]
    fn if_none_match_wins_over_if_modified_since_and_compares_weakly() {
        let v = file();
        let tag = v.etag.clone();
        let date = v.last_modified_header();
        assert_eq!(evaluate(&headers(&[("if-none-match", &tag)]), &v, true), Precondition::NotModified);
        assert_eq!(evaluate(&headers(&[("if-none-match", &format!("W/{tag}"))]), &v, true), Precondition::NotModified);
        assert_eq!(
            evaluate(&headers(&[("if-none-match", &format!("\"x\", {tag}"))]), &v, true),
            Precondition::NotModified
        );
        assert_eq!(
            evaluate(&headers(&[("if-none-match", "\"x\""), ("if-none-match", &tag)]), &v, true),
            Precondition::NotModified
        );
        assert_eq!(evaluate(&headers(&[("if-none-match", "*")]), &v, true), Precondition::NotModified);
        // A non-matching If-None-Match means "send it", whatever If-Modified-Since says.
        assert_eq!(
            evaluate(&headers(&[("if-none-match", "\"old\""), ("if-modified-since", &date)]), &v, true),
            Precondition::Proceed
        );
        assert_eq!(evaluate(&headers(&[("if-modified-since", &date)]), &v, true), Precondition::NotModified);
        assert_eq!(
            evaluate(&headers(&[("if-modified-since", "Tue, 14 Nov 2023 22:13:19 GMT")]), &v, true),
            Precondition::Proceed
        );
        assert_eq!(evaluate(&headers(&[("if-modified-since", "not a date")]), &v, true), Precondition::Proceed);
        // For unsafe methods a matching If-None-Match fails, and If-Modified-Since is ignored.
        assert_eq!(evaluate(&headers(&[("if-none-match", &tag)]), &v, false), Precondition::Failed);
        assert_eq!(evaluate(&headers(&[("if-modified-since", &date)]), &v, false), Precondition::Proceed);
    }

    #[test]
    fn if_match_and_if_unmodified_since_guard_the_current_version() {
        let v = file();
        let tag = v.etag.clone();
        assert_eq!(evaluate(&headers(&[("if-match", &tag)]), &v, true), Precondition::Proceed);
        assert_eq!(evaluate(&headers(&[("if-match", "*")]), &v, true), Precondition::Proceed);
        assert_eq!(
            evaluate(&headers(&[("if-match", &format!("W/{tag}"))]), &v, true),
            Precondition::Failed,
            "strong comparison"
        );
        assert_eq!(evaluate(&headers(&[("if-match", "\"other\"")]), &v, true), Precondition::Failed);
        assert_eq!(
            evaluate(&headers(&[("if-unmodified-since", "Mon, 13 Nov 2023 00:00:00 GMT")]), &v, true),
            Precondition::Failed
        );
        assert_eq!(
            evaluate(&headers(&[("if-unmodified-since", &v.last_modified_header())]), &v, true),
            Precondition::Proceed
        );
        // If-Match present: If-Unmodified-Since is not consulted.
        assert_eq!(
            evaluate(
                &headers(&[("if-match", &tag), ("if-unmodified-since", "Mon, 13 Nov 2023 00:00:00 GMT")]),
                &v,
                true
            ),
            Precondition::Proceed
        );
    }

    #[test]
    fn if_range_needs_a_strong_match_or_the_exact_date() {
        let v = file();
        assert!(range_applies(&headers(&[]), &v));
        assert!(range_applies(&headers(&[("if-range", &v.etag)]), &v));
        assert!(!range_applies(&headers(&[("if-range", &format!("W/{}", v.etag))]), &v));
        assert!(!range_applies(&headers(&[("if-range", "\"old\"")]), &v));
        assert!(range_applies(&headers(&[("if-range", &v.last_modified_header())]), &v));
        assert!(!range_applies(&headers(&[("if-range", "Mon, 13 Nov 2023 00:00:00 GMT")]), &v));
        assert!(!range_applies(&headers(&[("if-range", "garbage")]), &v));
    }
}
