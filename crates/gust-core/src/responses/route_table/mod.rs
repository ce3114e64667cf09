//! An immutable route table: matchit for paths, an array per path for methods.
//!
//! Tables are never mutated once built. Adding or replacing routes builds a new table and swaps it in with one
//! atomic store ([`crate::Server::replace_routes`]); readers never block, and a request keeps the table it
//! started with until it is answered.

use std::collections::HashMap;
use std::sync::Arc;

use http::HeaderValue;

use super::body::Body;
use super::files::FileRoute;
use super::fixed::FixedResponse;
use super::rate_limit::{Pattern, RateLimit};
use crate::bodies::files::dir::StaticDir;
use crate::values::error::Error;
use crate::values::method::{self, METHODS};
use crate::values::path::RoutePath;
use crate::values::ws_options::WsOptions;

/// What answers a route.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Target {
    /// A JavaScript handler, by its index in the binding's handler list.
    Dynamic(u32),
    /// A response fixed at registration, answered entirely in Rust (a turbo route).
    Fixed(Arc<FixedResponse>),
    /// A directory served entirely in Rust; the route's wildcard is the path below it.
    Static(Arc<StaticDir>),
    /// One file served entirely in Rust (a turbo file route).
    File(Arc<FileRoute>),
}

/// All routes registered for one path pattern.
#[derive(Debug)]
struct PathRoutes {
    path: String,
    /// The matchit pattern.
    pattern: String,
    params: Vec<String>,
    by_method: [Option<Target>; METHODS.len()],
    any: Option<Target>,
    allow: HeaderValue,
    /// Limits of single routes: by method code (`None`: the `ALL` route).
    limits: Vec<(Option<u8>, RouteLimit)>,
}

/// A limit on one route, and the index of the route parameter its key names.
#[derive(Debug, Clone)]
pub(crate) struct RouteLimit {
    pub(crate) limit: Arc<RateLimit>,
    pub(crate) param: Option<usize>,
}

/// A limit on every request under a pattern (`None`: every request), and the pattern parameter its key names.
#[derive(Debug)]
pub(crate) struct PathLimit {
    pub(crate) pattern: Option<Pattern>,
    pub(crate) limit: Arc<RateLimit>,
    pub(crate) param: Option<String>,
}

/// The outcome of routing one request.
#[derive(Debug)]
pub(crate) enum Lookup<'t, 'p> {
    /// A route answers; `params` are values in path order, still holding `%2F` and `%25` (see
    /// [`crate::values::path::routing_path`]). `empty_tail`: a trailing catch-all matched nothing (`/files/` for
    /// `/files/*`), so its value, the empty string, is not among `params`. `limit`: the route's own rate limit.
    Found { target: &'t Target, params: matchit::Params<'t, 'p>, empty_tail: bool, limit: Option<&'t RouteLimit> },
    /// The path exists for other methods only.
    MethodNotAllowed { allow: &'t HeaderValue },
    /// `OPTIONS` on a path with no explicit OPTIONS route.
    Options { allow: &'t HeaderValue },
    /// No route has this path.
    NotFound { target: &'t Target },
}

/// A complete, immutable routing table.
#[derive(Debug)]
pub struct RouteTable {
    router: matchit::Router<RouteSlot>,
    paths: Vec<PathRoutes>,
    not_found: Target,
    method_fallback: Option<Target>,
    allow_any: HeaderValue,
    /// Handlers that accept a body larger than the server's `max_body_size`, with their limit.
    body_limits: HashMap<u32, u64>,
    /// Directories handlers may answer from (`FILE` answers naming a mount), by index.
    mounts: Vec<Arc<StaticDir>>,
    /// Handlers that accept WebSocket handshakes, with their sockets' options.
    websockets: HashMap<u32, Arc<WsOptions>>,
    /// Limits on paths, checked in order before routing.
    limits: Vec<PathLimit>,
    /// Limits decided elsewhere (JavaScript) that the table holds for the link to Redis.
    held: Vec<Arc<RateLimit>>,
}

/// Where a matchit pattern leads: a path's routes, and whether the pattern is the empty-tail alias of a
/// catch-all (`/files/` for `/files/*`, `/` for `/*`), added unless a route of its own has that path.
#[derive(Debug, Clone, Copy)]
struct RouteSlot {
    index: usize,
    empty_tail: bool,
}

impl RouteTable {
    /// Starts an empty table whose unknown paths get the default 404.
    pub fn builder() -> RouteTableBuilder {
        RouteTableBuilder::default()
    }

    /// The largest request body handler `index` accepts, when its route set one. Cost: nothing unless some route
    /// did (then one hash lookup per dynamic request).
    pub(crate) fn body_limit(&self, handler: u32) -> Option<u64> {
        if self.body_limits.is_empty() {
            return None;
        }
        self.body_limits.get(&handler).copied()
    }

    /// The socket options of handler `index` when it accepts WebSocket handshakes. Cost: nothing unless some
    /// route does (then one hash lookup per dynamic request).
    pub(crate) fn websocket(&self, handler: u32) -> Option<&Arc<WsOptions>> {
        if self.websockets.is_empty() {
            return None;
        }
        self.websockets.get(&handler)
    }

    /// Every rate limit of the table, on paths and on routes (a limit may appear more than once).
    pub(crate) fn all_limits(&self) -> impl Iterator<Item = &Arc<RateLimit>> {
        let on_paths = self.limits.iter().map(|l| &l.limit);
        let on_routes = self.paths.iter().flat_map(|p| p.limits.iter().map(|(_, l)| &l.limit));
        on_paths.chain(on_routes).chain(&self.held)
    }

    /// The limits on paths, in the order declared (empty: no cost).
    pub(crate) fn path_limits(&self) -> &[PathLimit] {
        &self.limits
    }

    /// Where 405s and OPTIONS are answered when not in Rust: a handler that receives the `Allow` value as its
    /// only parameter.
    pub(crate) fn method_fallback(&self) -> Option<&Target> {
        self.method_fallback.as_ref()
    }

    /// A directory handlers may answer from, by the index [`RouteTableBuilder::mount`] gave it.
    pub(crate) fn mount(&self, index: usize) -> Option<Arc<StaticDir>> {
        self.mounts.get(index).cloned()
    }

    /// Where unknown paths go (a directory's misses too).
    pub(crate) fn not_found(&self) -> &Target {
        &self.not_found
    }

    /// The not-found answer when Rust gives it (the target is not a handler).
    pub(crate) fn not_found_response(&self) -> http::Response<Body> {
        match &self.not_found {
            Target::Fixed(fixed) => fixed.to_response(),
            _ => FixedResponse::not_found().to_response(),
        }
    }

    /// Gives every fixed response its coded variants (see [`FixedResponse::compressed`]): done once, when the
    /// table is installed, never per request.
    pub(crate) fn compress_fixed(&mut self, compression: &crate::bodies::compress::Compression) {
        let compress = |target: &mut Target| {
            if let Target::Fixed(fixed) = target {
                *fixed = Arc::new(fixed.compressed(compression));
            }
        };
        for routes in &mut self.paths {
            routes.by_method.iter_mut().flatten().for_each(compress);
            routes.any.iter_mut().for_each(compress);
        }
        compress(&mut self.not_found);
        self.method_fallback.iter_mut().for_each(compress);
    }

    /// `Allow` for `OPTIONS *`: every method some route answers.
    pub(crate) fn allow_any(&self) -> &HeaderValue {
        &self.allow_any
    }

    /// Routes a request on its routing path. Cost: one radix-trie walk plus an array index; no allocation.
    pub(crate) fn lookup<'t, 'p>(&'t self, method_code: u8, path: &'p str) -> Lookup<'t, 'p> {
        let Ok(matched) = self.router.at(path) else {
            return Lookup::NotFound { target: &self.not_found };
        };
        let RouteSlot { index, empty_tail } = *matched.value;
        let routes = &self.paths[index];
        let by_code = |code: u8| routes.by_method.get(code as usize).and_then(Option::as_ref).map(|t| (t, Some(code)));
        let target = by_code(method_code)
            .or_else(|| if method_code == method::HEAD { by_code(method::GET) } else { None })
            .or(routes.any.as_ref().map(|t| (t, None)));
        match target {
            Some((target, code)) => {
                let limit = match routes.limits.is_empty() {
                    true => None,
                    false => routes.limits.iter().find(|(c, _)| *c == code).map(|(_, l)| l),
                };
                Lookup::Found { target, params: matched.params, empty_tail, limit }
            }
            None if method_code == method::OPTIONS => Lookup::Options { allow: &routes.allow },
            None => Lookup::MethodNotAllowed { allow: &routes.allow },
        }
    }
}

/// Collects routes, rejecting malformed paths and conflicts as they are added.
#[derive(Debug, Default)]
pub struct RouteTableBuilder {
    router: matchit::Router<RouteSlot>,
    paths: Vec<PathRoutes>,
    by_pattern: HashMap<String, usize>,
    not_found: Option<Target>,
    method_fallback: Option<Target>,
    body_limits: HashMap<u32, u64>,
    mounts: Vec<Arc<StaticDir>>,
    websockets: HashMap<u32, Arc<WsOptions>>,
    limits: Vec<PathLimit>,
    held: Vec<Arc<RateLimit>>,
}

impl RouteTableBuilder {
    /// Adds `method` (`GET`, `POST`, …, or `ALL` for any method) on `path` (`/id/:id`, `/files/*`).
    ///
    /// Returns the route's parameter names in the order requests will carry their values. Fails when the path is
    /// malformed, the method unknown, or the route conflicts with one already added; the error names both routes.
    pub fn add(&mut self, method: &str, path: &str, target: Target) -> Result<Vec<String>, Error> {
        let code = match method {
            "ALL" => None,
            m => Some(method::code_of_name(m).ok_or_else(|| {
                Error::route(format!(
                    "unsupported method {m:?} for route {path:?}: use one of {} or ALL",
                    METHODS.join(", ")
                ))
            })?),
        };
        let parsed = RoutePath::parse(path)?;
        let index = match self.by_pattern.get(&parsed.pattern) {
            Some(&index) => index,
            None => self.insert_path(path, parsed)?,
        };
        let routes = &mut self.paths[index];
        let slot = match code {
            Some(code) => &mut routes.by_method[code as usize],
            None => &mut routes.any,
        };
        if slot.is_some() {
            return Err(Error::route(format!("route {method} {path} is already registered")));
        }
        *slot = Some(target);
        routes.allow = allow_header(routes);
        Ok(routes.params.clone())
    }

    /// Replaces the default 404 with a target of the caller's.
    pub fn not_found(&mut self, target: Target) -> &mut Self {
        self.not_found = Some(target);
        self
    }

    /// Hands 405 and OPTIONS answers to a target of the caller's (the `Allow` value is its only parameter)
    /// instead of answering them in Rust; used when middleware must see every request.
    pub fn method_fallback(&mut self, target: Target) -> &mut Self {
        self.method_fallback = Some(target);
        self
    }

    /// Lets handler `index` receive bodies up to `limit` bytes instead of the server's `max_body_size`. Bodies
    /// over `max_body_size` reach it as a stream only (see [`crate::Config::max_body_size`]).
    pub fn body_limit(&mut self, handler: u32, limit: u64) -> &mut Self {
        self.body_limits.insert(handler, limit);
        self
    }

    /// Makes handler `index` a WebSocket endpoint: requests routed to it must be valid handshakes (else 426 or
    /// 400, answered in Rust), and its `UPGRADE` answer opens a socket with `options`.
    pub fn websocket(&mut self, handler: u32, options: WsOptions) -> &mut Self {
        self.websockets.insert(handler, Arc::new(options));
        self
    }

    /// Limits every request under `pattern` (the package's middleware syntax; `None`: every request), before it
    /// is routed. Fails when the pattern is malformed or the limit's key names a parameter the pattern lacks.
    pub fn limit_path(&mut self, pattern: Option<&str>, limit: Arc<RateLimit>) -> Result<&mut Self, Error> {
        let pattern = pattern.map(Pattern::parse).transpose().map_err(|e| Error::route(format!("rateLimit: {e}")))?;
        let param = match limit.key() {
            super::rate_limit::LimitKey::Param(name) => {
                if !pattern.as_ref().is_some_and(|p| p.has_param(name)) {
                    return Err(Error::route(format!(
                        "rateLimit: the key names the parameter {name:?}, which its pattern does not have"
                    )));
                }
                Some(name.clone())
            }
            _ => None,
        };
        self.limits.push(PathLimit { pattern, limit, param });
        Ok(self)
    }

    /// Holds a limit decided elsewhere (a JavaScript key), so that a server's link to Redis counts it when shared.
    pub fn hold_limit(&mut self, limit: Arc<RateLimit>) -> &mut Self {
        self.held.push(limit);
        self
    }

    /// Limits the route `method path` (added before); fails when there is none, or the limit's key names a
    /// parameter the route lacks.
    pub fn limit_route(&mut self, method: &str, path: &str, limit: Arc<RateLimit>) -> Result<&mut Self, Error> {
        let code = match method {
            "ALL" => None,
            m => method::code_of_name(m),
        };
        let pattern = RoutePath::parse(path)?.pattern;
        let routes = self
            .by_pattern
            .get(&pattern)
            .map(|&i| &mut self.paths[i])
            .ok_or_else(|| Error::route(format!("rateLimit: no route {method} {path}")))?;
        let param = match limit.key() {
            super::rate_limit::LimitKey::Param(name) => {
                let at = routes.params.iter().position(|p| p == name);
                Some(at.ok_or_else(|| {
                    Error::route(format!("rateLimit on {method} {path}: the key names the parameter {name:?}, which the route does not have"))
                })?)
            }
            _ => None,
        };
        routes.limits.push((code, RouteLimit { limit, param }));
        Ok(self)
    }

    /// Makes a directory one handlers may answer from (`mount:<index>:<path>` file answers); returns its index,
    /// the number of directories mounted before it.
    pub fn mount(&mut self, dir: Arc<StaticDir>) -> u32 {
        self.mounts.push(dir);
        (self.mounts.len() - 1) as u32
    }

    /// Freezes the table.
    pub fn build(mut self) -> RouteTable {
        // A catch-all also answers its empty tail (Hono's semantics: `/*` answers `/`), unless a route of its
        // own claims that path.
        for (index, routes) in self.paths.iter().enumerate() {
            if let Some(alias) = routes.pattern.strip_suffix('}').and_then(|p| p.rfind("/{*").map(|at| &p[..=at])) {
                if !self.by_pattern.contains_key(alias) {
                    // matchit refuses only a conflicting pattern; an alias that conflicts is simply not added.
                    let _ = self.router.insert(alias, RouteSlot { index, empty_tail: true });
                }
            }
        }
        let mut any: Vec<&str> = Vec::new();
        for routes in &self.paths {
            for method in routes.allow.to_str().unwrap_or("").split(", ").filter(|m| !m.is_empty()) {
                if !any.contains(&method) {
                    any.push(method);
                }
            }
        }
        any.sort_by_key(|m| METHODS.iter().position(|x| x == m));
        let allow_any = HeaderValue::from_str(&if any.is_empty() { "OPTIONS".to_owned() } else { any.join(", ") })
            .expect("method names are valid header text");
        RouteTable {
            router: self.router,
            paths: self.paths,
            not_found: self.not_found.unwrap_or_else(|| Target::Fixed(Arc::new(FixedResponse::not_found()))),
            method_fallback: self.method_fallback,
            allow_any,
            body_limits: self.body_limits,
            mounts: self.mounts,
            websockets: self.websockets,
            limits: self.limits,
            held: self.held,
        }
    }

    fn insert_path(&mut self, path: &str, parsed: RoutePath) -> Result<usize, Error> {
        let index = self.paths.len();
        self.router.insert(parsed.pattern.clone(), RouteSlot { index, empty_tail: false }).map_err(
            |err| match err {
                matchit::InsertError::Conflict { with } => {
                    let other = self.by_pattern.get(&with).map_or(with.as_str(), |&i| self.paths[i].path.as_str());
                    Error::route(format!("route {path:?} conflicts with the registered route {other:?}"))
                }
                other => Error::route(format!("route {path:?} is invalid: {other}")),
            },
        )?;
        self.by_pattern.insert(parsed.pattern.clone(), index);
        self.paths.push(PathRoutes {
            path: path.to_owned(),
            pattern: parsed.pattern,
            params: parsed.params,
            by_method: Default::default(),
            any: None,
            allow: HeaderValue::from_static(""),
            limits: Vec::new(),
        });
        Ok(index)
    }
}

/// `Allow` lists every registered method, HEAD wherever GET is, and OPTIONS, which is always answered.
fn allow_header(routes: &PathRoutes) -> HeaderValue {
    let mut allowed: Vec<&str> = if routes.any.is_some() {
        METHODS.to_vec()
    } else {
        METHODS.iter().zip(&routes.by_method).filter(|(_, t)| t.is_some()).map(|(m, _)| *m).collect()
    };
    for implied in ["HEAD", "OPTIONS"] {
        let has_get = allowed.contains(&"GET");
        if !allowed.contains(&implied) && (implied == "OPTIONS" || has_get) {
            allowed.push(implied);
        }
    }
    allowed.sort_by_key(|m| METHODS.iter().position(|x| x == m));
    HeaderValue::from_str(&allowed.join(", ")).expect("method names are valid header text")
}

#[cfg(test)]
mod tests;
