//! Route path syntax: Gust's `:name` and trailing `*`, translated to matchit's `{name}` and `{*name}`
//! (`golden/path-syntax.json` holds the cases every parser of it, Rust and TypeScript, is tested against); and
//! the engine's one percent-decoder, for request paths, parameter values and file paths.

use std::borrow::Cow;

use crate::values::error::Error;

/// A route path as written by the user, checked and translated for matchit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RoutePath {
    /// The matchit pattern, e.g. `/id/{id}/{*rest}`.
    pub(crate) pattern: String,
    /// Parameter names in the order matchit yields them; a bare trailing `*` is named `*`.
    pub(crate) params: Vec<String>,
}

/// The name a bare trailing `*` gets in matchit; the user sees it as `*`.
const WILDCARD: &str = "__gust_wildcard";

impl RoutePath {
    /// Parses `/users/:id/files/*` (or `*name`). Braces are escaped, since matchit would read them as params.
    pub(crate) fn parse(path: &str) -> Result<Self, Error> {
        if !path.starts_with('/') {
            return Err(Error::route(format!("route path {path:?} must start with '/'")));
        }
        let mut pattern = String::with_capacity(path.len() + 8);
        let mut params = Vec::new();
        let segments: Vec<&str> = path.split('/').skip(1).collect();
        for (i, segment) in segments.iter().enumerate() {
            pattern.push('/');
            let last = i + 1 == segments.len();
            if let Some(name) = segment.strip_prefix(':') {
                check_name(path, name)?;
                if params.iter().any(|p| p == name) {
                    return Err(Error::route(format!("route path {path:?} uses the parameter :{name} twice")));
                }
                pattern.push('{');
                pattern.push_str(name);
                pattern.push('}');
                params.push(name.to_owned());
            } else if let Some(name) = segment.strip_prefix('*') {
                if !last {
                    return Err(Error::route(format!("route path {path:?}: '*' is only allowed as the last segment")));
                }
                let (matchit_name, user_name) = if name.is_empty() { (WILDCARD, "*") } else { (name, name) };
                if !name.is_empty() {
                    check_name(path, name)?;
                }
                if params.iter().any(|p| p == user_name) {
                    return Err(Error::route(format!("route path {path:?} uses the parameter {user_name} twice")));
                }
                pattern.push_str("{*");
                pattern.push_str(matchit_name);
                pattern.push('}');
                params.push(user_name.to_owned());
            } else {
                if segment.contains(['*', ':']) && !segment.is_empty() {
                    // matchit allows neither inside a static segment in our syntax; say so plainly.
                    if segment.contains('*') {
                        return Err(Error::route(format!(
                            "route path {path:?}: '*' must start a segment and be the last one"
                        )));
                    }
                }
                // Requests are routed on their decoded path, where a literal '%' is still written `%25` (see
                // `routing_path`), so a route's literal '%' must be too.
                for ch in segment.chars() {
                    match ch {
                        '{' => pattern.push_str("{{"),
                        '}' => pattern.push_str("}}"),
                        '%' => pattern.push_str("%25"),
                        c => pattern.push(c),
                    }
                }
            }
        }
        Ok(Self { pattern, params })
    }
}

fn check_name(path: &str, name: &str) -> Result<(), Error> {
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if valid {
        Ok(())
    } else {
        Err(Error::route(format!("route path {path:?}: parameter name {name:?} must be letters, digits, '_' or '$'")))
    }
}

/// What [`percent_decode_keeping`] leaves percent-encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Nothing: every escape is decoded (a parameter's value, a file path's segment).
    Nothing,
    /// `%2F` and `%25`: the routing form (see [`routing_path`]).
    SlashAndPercent,
}

/// The one percent-decoder of the engine: every `%XX` (two hex digits, either case) becomes its byte, except what
/// `keep` names, which stays escaped and is written in upper case (`%2f` becomes `%2F`); every other byte is
/// copied, `+` included (a space only in form bodies, never in paths). Decodes once: `%252F` becomes `%2F`.
/// `None` when a `%` is not followed by two hex digits, or when the bytes decoded are not UTF-8 (an overlong
/// `%C0%AF` included). NUL and control bytes are decoded: a caller that must refuse them checks the result (see
/// `bodies::files::resolve`).
///
/// Cost: a scan for `%`; with none (the common case) `raw` is returned borrowed and nothing is allocated.
/// Otherwise one allocation of `raw`'s length, one pass, and a UTF-8 check of the result.
pub(crate) fn percent_decode_keeping(raw: &str, keep: Keep) -> Option<Cow<'_, str>> {
    let Some(first) = raw.find('%') else {
        return Some(Cow::Borrowed(raw));
    };
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&bytes[..first]);
    let mut i = first;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let byte = hex(*bytes.get(i + 1)?)? << 4 | hex(*bytes.get(i + 2)?)?;
            match byte {
                b'/' if keep == Keep::SlashAndPercent => out.extend_from_slice(b"%2F"),
                b'%' if keep == Keep::SlashAndPercent => out.extend_from_slice(b"%25"),
                b => out.push(b),
            }
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

/// The path a request is routed on: its percent-escapes decoded, except `%2F` (a slash inside a segment must
/// not split it) and `%25` (so the result can be decoded once more, unambiguously, into param values). A `%2f`
/// is written `%2F`. `None` when an escape is malformed or the decoded path is not UTF-8. Cost: that of
/// [`percent_decode_keeping`] (nothing when the path holds no `%`).
pub(crate) fn routing_path(raw: &str) -> Option<Cow<'_, str>> {
    percent_decode_keeping(raw, Keep::SlashAndPercent)
}

/// Percent-decodes a value whole: a path parameter's value (from its routing form), a file path's segment.
/// `None` when an escape is malformed or the result is not UTF-8. Cost: that of [`percent_decode_keeping`]
/// (nothing when the value holds no `%`).
pub(crate) fn percent_decode(raw: &str) -> Option<Cow<'_, str>> {
    percent_decode_keeping(raw, Keep::Nothing)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_and_wildcards_should_translate_to_matchit() {
        let p = RoutePath::parse("/id/:id/files/*").unwrap();
        assert_eq!(p.pattern, "/id/{id}/files/{*__gust_wildcard}");
        assert_eq!(p.params, ["id", "*"]);
        let p = RoutePath::parse("/static/*path").unwrap();
        assert_eq!(p.pattern, "/static/{*path}");
        assert_eq!(p.params, ["path"]);
        assert_eq!(RoutePath::parse("/").unwrap().pattern, "/");
        assert_eq!(RoutePath::parse("/a{b}").unwrap().pattern, "/a{{b}}");
        assert_eq!(RoutePath::parse("/100%/café").unwrap().pattern, "/100%25/café");
    }

    #[test]
    fn malformed_paths_should_be_rejected_with_the_path_named() {
        for bad in ["id", "/a/*/b", "/:", "/:a-b", "/:id/:id", "/a*"] {
            let err = RoutePath::parse(bad).unwrap_err();
            assert!(err.is_route());
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn routing_paths_should_decode_all_but_slash_and_percent() {
        assert_eq!(routing_path("/plain").unwrap(), "/plain");
        assert!(matches!(routing_path("/plain").unwrap(), Cow::Borrowed(_)));
        assert_eq!(routing_path("/caf%C3%A9/a%20b").unwrap(), "/café/a b");
        assert_eq!(routing_path("/a%2Fb/a%2fb/100%25/%252F").unwrap(), "/a%2Fb/a%2Fb/100%25/%252F");
        assert!(routing_path("/%zz").is_none());
        assert!(routing_path("/%4").is_none());
        assert!(routing_path("/%FF").is_none());
    }

    #[test]
    fn percent_decoding_should_reject_bad_escapes_and_non_utf8() {
        assert_eq!(percent_decode("a%20b").unwrap(), "a b");
        assert_eq!(percent_decode("caf%C3%A9").unwrap(), "café");
        assert_eq!(percent_decode("a%2Fb").unwrap(), "a/b");
        assert!(percent_decode("%zz").is_none());
        assert!(percent_decode("%4").is_none());
        assert!(percent_decode("%FF").is_none());
    }

    #[test]
    fn each_rule_of_the_decoder_should_hold_in_both_modes() {
        fn both(raw: &str) -> (Option<String>, Option<String>) {
            let decode = |keep| percent_decode_keeping(raw, keep).map(Cow::into_owned);
            (decode(Keep::Nothing), decode(Keep::SlashAndPercent))
        }
        fn decoded(nothing: &str, routing: &str) -> (Option<String>, Option<String>) {
            (Some(nothing.to_owned()), Some(routing.to_owned()))
        }
        // No `%`: the input itself, borrowed.
        for keep in [Keep::Nothing, Keep::SlashAndPercent] {
            assert!(matches!(percent_decode_keeping("/a b+c", keep), Some(Cow::Borrowed("/a b+c"))));
        }
        // Hex digits of either case; what comes before the first `%` is kept.
        assert_eq!(both("x%41%6a%6A"), decoded("xAjj", "xAjj"));
        // `/` and `%` are decoded, or kept escaped in upper case by the routing form.
        assert_eq!(both("a%2fb%2Fc"), decoded("a/b/c", "a%2Fb%2Fc"));
        assert_eq!(both("100%25"), decoded("100%", "100%25"));
        // Once only: an escaped escape becomes an escape.
        assert_eq!(both("%252F%2541"), decoded("%2F%41", "%252F%2541"));
        // `+` is not a space; NUL and control bytes are decoded (their callers refuse them).
        assert_eq!(both("a+b%00%0A"), decoded("a+b\0\n", "a+b\0\n"));
        // Multi-byte UTF-8, escaped or raw.
        assert_eq!(both("%E2%9C%93é"), decoded("✓é", "✓é"));
        // Malformed escapes: short, not hex, a sign (which `u8::from_str_radix` would take), at the end.
        for bad in ["%", "a%", "%4", "%zz", "%g0", "%+1", "%-1", "% 1", "%%41"] {
            assert_eq!(both(bad), (None, None), "{bad:?}");
        }
        // Bytes that are not UTF-8: a lone continuation byte, a truncated sequence, an overlong `/`.
        for bad in ["%FF", "%80", "%C3", "%E2%9C", "%C0%AF"] {
            assert_eq!(both(bad), (None, None), "{bad:?}");
        }
    }

    /// Every case of `golden/path-syntax.json`, the table the TypeScript parsers of the syntax are tested against
    /// too, through the route table as the service uses it: a route is registered on each valid pattern (alone
    /// in its table) with its params named in order, each invalid one is refused naming it, and each request
    /// path routes, in its routing form, to the params the handler reads (decoded as the service decodes them),
    /// or to nothing.
    #[test]
    fn every_shared_path_syntax_case_should_hold_for_the_route_table() {
        use crate::responses::route_table::{Lookup, RouteTable, Target};
        use crate::values::method::GET;
        use serde_json::{Map, Value};

        let table: Value = serde_json::from_str(include_str!("golden/path-syntax.json")).unwrap();
        let cases = table["cases"].as_array().unwrap();
        assert!(cases.len() >= 20, "{} cases", cases.len());
        let strings = |v: &Value| -> Vec<String> {
            v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect()
        };
        for case in cases {
            let pattern = case["pattern"].as_str().unwrap();
            assert!(case["differs"].get("route").is_none(), "{pattern:?}: the route table is the authority");
            let mut b = RouteTable::builder();
            let added = b.add("GET", pattern, Target::Dynamic(0));
            if !case["valid"].as_bool().unwrap() {
                let err = added.expect_err(pattern);
                assert!(err.is_route() && err.to_string().contains(&format!("{pattern:?}")), "{err}");
                continue;
            }
            let names = added.unwrap_or_else(|e| panic!("{pattern:?}: {e}"));
            assert_eq!(names, strings(&case["params"]), "{pattern:?}: params");
            let t = b.build();
            // The params a request gets, as the service hands them over; `None` when no route matches.
            let params = |path: &str| -> Option<Value> {
                let routed = routing_path(path).unwrap();
                let Lookup::Found { params, empty_tail, .. } = t.lookup(GET, &routed) else { return None };
                let values = params.iter().map(|(_, raw)| percent_decode(raw).unwrap().into_owned());
                let values = values.chain(empty_tail.then(String::new));
                Some(Value::Object(names.iter().cloned().zip(values.map(Value::from)).collect::<Map<_, _>>()))
            };
            for example in case["matches"].as_array().unwrap() {
                let path = example["path"].as_str().unwrap();
                let routed = example["routed"].as_str().unwrap_or(path);
                assert_eq!(routing_path(path).unwrap(), routed, "{path:?}: routing form");
                assert_eq!(params(path).as_ref(), Some(&example["params"]), "{pattern:?} on {path:?}");
            }
            for path in strings(&case["misses"]) {
                assert_eq!(params(&path), None, "{pattern:?} must not match {path:?}");
            }
        }
    }
}
