//! Where a limit given to `use(pattern, rateLimit(…))` applies: the package's middleware pattern syntax
//! (`src/path-pattern.ts`): literal segments, `:name` for one segment, a last `*` for any rest, and `/admin/*`
//! covering `/admin` itself. Matched against the decoded path routing saw, as middleware is. Cost: one pass
//! over the path's segments, no allocation.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param(String),
}

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    segments: Vec<Segment>,
    /// Ends in `*`: any rest, or none.
    rest: bool,
}

impl Pattern {
    /// Parses a pattern; the error says what is wrong with it.
    pub(crate) fn parse(pattern: &str) -> Result<Self, String> {
        let Some(body) = pattern.strip_prefix('/') else {
            return Err(format!("pattern {pattern:?} does not start with \"/\""));
        };
        let parts: Vec<&str> = body.split('/').collect();
        let mut segments = Vec::new();
        let mut rest = false;
        for (i, part) in parts.iter().enumerate() {
            if part.starts_with('*') {
                if i != parts.len() - 1 {
                    return Err(format!("pattern {pattern:?}: \"*\" may only be the last segment"));
                }
                rest = true;
            } else if let Some(name) = part.strip_prefix(':') {
                if name.is_empty() {
                    return Err(format!("pattern {pattern:?}: a \":\" segment needs a name"));
                }
                segments.push(Segment::Param(name.to_owned()));
            } else if part.contains(['*', ':']) {
                return Err(format!("pattern {pattern:?}: \"*\" and \":\" must start a segment"));
            } else {
                segments.push(Segment::Literal((*part).to_owned()));
            }
        }
        Ok(Self { segments, rest })
    }

    /// Whether the pattern names a `:name` segment.
    pub(crate) fn has_param(&self, name: &str) -> bool {
        self.segments.iter().any(|s| matches!(s, Segment::Param(n) if n == name))
    }

    /// Whether `path` falls under the pattern; `Some(value)` of the segment `param` names, when asked for one.
    pub(crate) fn matches<'p>(&self, path: &'p str, param: Option<&str>) -> Option<Option<&'p str>> {
        let mut parts = path.strip_prefix('/')?.split('/');
        let mut captured = None;
        for segment in &self.segments {
            let part = parts.next()?;
            match segment {
                Segment::Literal(text) if text == part => {}
                Segment::Literal(_) => return None,
                Segment::Param(_) if part.is_empty() => return None,
                Segment::Param(name) => {
                    if param == Some(name.as_str()) {
                        captured = Some(part);
                    }
                }
            }
        }
        // `/a` matches `/a/*` (nothing left), `/a/` and `/a/b/c` too (a rest); without `*`, nothing may be left.
        match parts.next() {
            None => Some(captured),
            Some(_) if self.rest => Some(captured),
            Some(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        Pattern::parse(pattern).unwrap().matches(path, None).is_some()
    }

    #[test]
    fn patterns_should_match_as_middleware_patterns_do() {
        assert!(m("/*", "/") && m("/*", "/a/b"));
        assert!(m("/admin/*", "/admin") && m("/admin/*", "/admin/") && m("/admin/*", "/admin/x/y"));
        assert!(!m("/admin/*", "/administrator") && !m("/admin/*", "/"));
        assert!(m("/a", "/a") && !m("/a", "/a/") && !m("/a", "/a/b") && !m("/a", "/b"));
        assert!(m("/u/:id", "/u/7") && !m("/u/:id", "/u/") && !m("/u/:id", "/u/7/x"));
        assert!(m("/u/:id/*", "/u/7") && m("/u/:id/*", "/u/7/posts"));
        assert!(m("/a/", "/a/") && !m("/a/", "/a"));
    }

    #[test]
    fn a_param_segment_should_be_captured_by_name() {
        let p = Pattern::parse("/t/:tenant/*").unwrap();
        assert_eq!(p.matches("/t/acme/x", Some("tenant")), Some(Some("acme")));
        assert_eq!(p.matches("/t/acme/x", None), Some(None));
        assert!(p.has_param("tenant") && !p.has_param("x"));
    }

    #[test]
    fn malformed_patterns_should_be_refused_naming_the_mistake() {
        for (bad, says) in [("a", "start"), ("/*/a", "last"), ("/:", "name"), ("/a*", "start a segment")] {
            let err = Pattern::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
