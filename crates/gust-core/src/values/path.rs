//! Route path syntax: Gust's `:name` and trailing `*`, translated to matchit's `{name}` and `{*name}`.

use crate::Error;

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

/// The path a request is routed on: its percent-escapes decoded, except `%2F` (a slash inside a segment must
/// not split it) and `%25` (so the result can be decoded once more, unambiguously, into param values). A `%2f`
/// is written `%2F`. `None` when an escape is malformed or the decoded path is not UTF-8.
///
/// Cost: a scan for `%`, and nothing more when there is none (the common case: the raw path is returned
/// borrowed); one allocation otherwise.
pub(crate) fn routing_path(raw: &str) -> Option<std::borrow::Cow<'_, str>> {
    let Some(first) = raw.find('%') else {
        return Some(std::borrow::Cow::Borrowed(raw));
    };
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&bytes[..first]);
    let mut i = first;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let byte = hex(*bytes.get(i + 1)?)? << 4 | hex(*bytes.get(i + 2)?)?;
            match byte {
                b'/' => out.extend_from_slice(b"%2F"),
                b'%' => out.extend_from_slice(b"%25"),
                b => out.push(b),
            }
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().map(std::borrow::Cow::Owned)
}

/// Percent-decodes one path segment value. `None` when the result is not UTF-8 or an escape is malformed.
///
/// Cost: returns the input borrowed when it holds no `%`, the common case; one allocation otherwise.
pub(crate) fn percent_decode(raw: &str) -> Option<std::borrow::Cow<'_, str>> {
    if !raw.contains('%') {
        return Some(std::borrow::Cow::Borrowed(raw));
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = hex(*bytes.get(i + 1)?)?;
            let lo = hex(*bytes.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().map(std::borrow::Cow::Owned)
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
        assert!(matches!(routing_path("/plain").unwrap(), std::borrow::Cow::Borrowed(_)));
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
}
