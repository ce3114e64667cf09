use std::sync::Arc;

use bytes::Bytes;
use gust_core::{FileRoute, StaticDir, StaticOptions};
use gust_core::{FixedResponse, RouteTable, Target};
use napi::bindgen_prelude::{Buffer, Either};
use napi_derive::napi;

use crate::binding_rate_limit::{limit_for, BindingLimits};

/// A route as the facade sends it: a handler index, or a fixed (turbo) response.
#[napi(object)]
pub struct BindingRoute {
    pub method: String,
    pub path: String,
    pub handler: Option<u32>,
    pub fixed: Option<BindingFixed>,
    /// The largest body this route's handler accepts, when it differs from the server's `maxBodySize`
    /// (`Infinity`: no limit). Checked by the package.
    pub max_body_size: Option<f64>,
    /// Served from this mounted directory, in Rust (the route's wildcard is the path below it).
    pub mount: Option<u32>,
    /// The handler accepts WebSocket handshakes, and its sockets behave so.
    pub websocket: Option<BindingWebSocket>,
    /// The route's own rate limit, by its index in the table's `BindingLimits`.
    pub rate_limit: Option<u32>,
}

/// A WebSocket route's options, as the package checked them.
#[napi(object)]
pub struct BindingWebSocket {
    pub max_payload_length: u32,
    /// Seconds; 0: never.
    pub idle_timeout: u32,
    pub backpressure_limit: f64,
    pub close_on_backpressure_limit: bool,
    pub send_pings: bool,
    /// permessage-deflate; none: offers are ignored.
    pub per_message_deflate: Option<BindingDeflate>,
}

/// permessage-deflate as the package checked it.
#[napi(object)]
pub struct BindingDeflate {
    /// `disable`, `shared` or `dedicated`.
    pub compress: String,
    /// Let clients keep their context (a decompressor per socket).
    pub dedicated_decompressor: bool,
    /// Messages shorter than this go plain unless a send asks for compression.
    pub threshold: u32,
}

impl From<BindingWebSocket> for gust_core::ws::WsOptions {
    fn from(o: BindingWebSocket) -> Self {
        Self {
            max_payload: o.max_payload_length as usize,
            idle_timeout: (o.idle_timeout > 0).then(|| std::time::Duration::from_secs(u64::from(o.idle_timeout))),
            // f64 -> usize saturates.
            backpressure_limit: o.backpressure_limit as usize,
            close_on_backpressure_limit: o.close_on_backpressure_limit,
            send_pings: o.send_pings,
            deflate: o.per_message_deflate.map(|d| gust_core::ws::DeflateOptions {
                // The package sends only these three words.
                compress: match d.compress.as_str() {
                    "shared" => gust_core::ws::Compressor::Shared,
                    "dedicated" => gust_core::ws::Compressor::Dedicated,
                    _ => gust_core::ws::Compressor::Disabled,
                },
                dedicated_decompressor: d.dedicated_decompressor,
                threshold: d.threshold as usize,
            }),
        }
    }
}

/// A directory to serve (`app.static()`), with the options the user gave as the package checked them; each
/// absent one keeps the engine's default (`gust_core::StaticOptions::default`).
#[napi(object)]
pub struct BindingMount {
    pub dir: String,
    /// The file served for a directory; `false`: directories are not found.
    pub index: Option<Either<String, bool>>,
    pub dotfiles: Option<bool>,
    /// Follow symbolic links that point outside the directory.
    pub follow_symlinks: Option<bool>,
    pub cache_control: Option<String>,
    /// A file (relative to `dir`) answered for paths that name nothing.
    pub fallback: Option<String>,
    /// Serve `.br` / `.zst` / `.gz` siblings to clients that accept them.
    pub precompressed: Option<bool>,
}

impl BindingMount {
    /// The directory and how it is served: the engine's defaults, and what the user gave.
    fn into_options(self) -> napi::Result<(String, StaticOptions)> {
        let mut options = StaticOptions::default();
        match self.index {
            Some(Either::A(index)) => options.index = Some(index),
            Some(Either::B(false)) => options.index = None,
            Some(Either::B(true)) | None => {}
        }
        if let Some(value) = self.cache_control {
            let parsed =
                Some(value.as_str()).filter(|v| StaticOptions::is_cache_control(v)).and_then(|v| v.parse().ok());
            options.cache_control = Some(parsed.ok_or_else(|| {
                napi::Error::new(
                    napi::Status::InvalidArg,
                    format!("static {}: invalid cacheControl {value:?}", self.dir),
                )
            })?);
        }
        options.dotfiles = self.dotfiles.unwrap_or(options.dotfiles);
        options.follow_symlinks = self.follow_symlinks.unwrap_or(options.follow_symlinks);
        options.fallback = self.fallback.or(options.fallback);
        options.precompressed = self.precompressed.unwrap_or(options.precompressed);
        Ok((self.dir, options))
    }
}

/// `app.static()`'s options, each with the engine's default (`null`: none, for `index` that directories are not
/// found); their names are the options the package takes.
#[napi(object, use_nullable = true)]
pub struct BindingStaticDefaults {
    pub index: Option<String>,
    pub dotfiles: bool,
    pub follow_symlinks: bool,
    pub cache_control: Option<String>,
    pub fallback: Option<String>,
    pub precompressed: bool,
}

impl BindingStaticDefaults {
    pub(crate) fn new() -> Self {
        let d = StaticOptions::default();
        Self {
            index: d.index,
            dotfiles: d.dotfiles,
            follow_symlinks: d.follow_symlinks,
            cache_control: d.cache_control.and_then(|v| v.to_str().ok().map(str::to_owned)),
            fallback: d.fallback,
            precompressed: d.precompressed,
        }
    }
}

/// Whether the engine takes `value` for the `app.static()` option `name`: a boolean for `dotfiles`,
/// `followSymlinks` and `precompressed`; a file name or `false` for `index`; a relative path inside the directory for
/// `fallback`; tabs and visible ASCII for `cacheControl`. The package asks before it keeps a mount, so a bad value
/// is refused where it was given, and each rule is written once, here.
#[napi]
pub fn static_option_accepts(name: String, value: Either<String, bool>) -> bool {
    match (name.as_str(), value) {
        ("dotfiles" | "followSymlinks" | "precompressed", Either::B(_)) => true,
        ("index", Either::B(enabled)) => !enabled,
        ("index", Either::A(file)) => StaticOptions::is_index_name(&file),
        ("fallback", Either::A(path)) => StaticOptions::is_fallback_path(&path),
        ("cacheControl", Either::A(value)) => StaticOptions::is_cache_control(&value),
        _ => false,
    }
}

/// A response encoded once at start-up and served from Rust.
#[napi(object)]
pub struct BindingFixed {
    pub status: u32,
    /// Names and values, alternating.
    pub headers: Vec<String>,
    /// Any `Uint8Array` (a `Buffer` is one); declared so, the package's types need no `@types/node`.
    #[napi(ts_type = "Uint8Array")]
    pub body: Buffer,
    /// A file served in its place, by absolute path (a turbo file route): `status` is 200 and `body` empty.
    pub file: Option<String>,
}

/// Builds a table; the error names the offending route. `not_found` and `method_fallback` are handler indexes
/// for unknown paths and for 405/OPTIONS; without them those are answered in Rust.
pub(crate) fn build_table(
    routes: Vec<BindingRoute>,
    mounts: Vec<BindingMount>,
    not_found: Option<u32>,
    method_fallback: Option<u32>,
    limits: Option<BindingLimits>,
) -> napi::Result<RouteTable> {
    let mut builder = RouteTable::builder();
    let (limits, paths, held) = match limits {
        Some(l) => (l.limits.iter().map(limit_for).collect::<napi::Result<Vec<_>>>()?, l.paths, l.held),
        None => (Vec::new(), Vec::new(), Vec::new()),
    };
    let limit = |index: u32| {
        limits
            .get(index as usize)
            .cloned()
            .ok_or_else(|| napi::Error::new(napi::Status::InvalidArg, format!("no rate limit at index {index}")))
    };
    for path in paths {
        builder.limit_path(path.pattern.as_deref(), limit(path.limit)?).map_err(crate::js_error)?;
    }
    for index in held {
        builder.hold_limit(limit(index)?);
    }
    let mut dirs = Vec::with_capacity(mounts.len());
    for mount in mounts {
        let (dir, options) = mount.into_options()?;
        let dir = StaticDir::new(&dir, options)
            .map_err(|e| napi::Error::new(napi::Status::InvalidArg, format!("static directory {dir}: {e}")))?;
        let dir = Arc::new(dir);
        builder.mount(dir.clone());
        dirs.push(dir);
    }
    for route in routes {
        if let Some(index) = route.mount {
            let dir = dirs.get(index as usize).ok_or_else(|| {
                napi::Error::new(napi::Status::InvalidArg, format!("route {} names no mounted directory", route.path))
            })?;
            builder.add(&route.method, &route.path, Target::Static(dir.clone())).map_err(crate::js_error)?;
            continue;
        }
        let route_limit = route.rate_limit.map(limit).transpose()?;
        let target = match (route.handler, route.fixed) {
            (_, Some(fixed)) if fixed.file.is_some() => {
                let headers = fixed.headers.chunks(2).filter_map(|p| Some((p.first()?.as_str(), p.get(1)?.as_str())));
                let file = FileRoute::new(fixed.file.unwrap_or_default(), headers).map_err(|e| {
                    napi::Error::new(
                        napi::Status::InvalidArg,
                        format!("route {} {} has an invalid file response: {e}", route.method, route.path),
                    )
                })?;
                Target::File(Arc::new(file))
            }
            (_, Some(fixed)) => {
                let status = fixed.status;
                let headers = fixed.headers.chunks(2).filter_map(|p| Some((p.first()?.as_str(), p.get(1)?.as_str())));
                let response =
                    FixedResponse::new(status, headers, Bytes::copy_from_slice(&fixed.body)).map_err(|e| {
                        napi::Error::new(
                            napi::Status::InvalidArg,
                            format!("route {} {} has an invalid fixed response: {e}", route.method, route.path),
                        )
                    })?;
                Target::Fixed(Arc::new(response))
            }
            (Some(index), None) => {
                if let Some(options) = route.websocket {
                    builder.websocket(index, options.into());
                }
                if let Some(limit) = route.max_body_size {
                    // f64 -> u64 saturates: `Infinity` is no limit.
                    builder.body_limit(index, limit as u64);
                }
                Target::Dynamic(index)
            }
            (None, None) => {
                return Err(napi::Error::new(
                    napi::Status::InvalidArg,
                    format!("route {} {} has neither a handler nor a fixed response", route.method, route.path),
                ))
            }
        };
        builder.add(&route.method, &route.path, target).map_err(crate::js_error)?;
        if let Some(limit) = route_limit {
            builder.limit_route(&route.method, &route.path, limit).map_err(crate::js_error)?;
        }
    }
    if let Some(index) = not_found {
        builder.not_found(Target::Dynamic(index));
    }
    if let Some(index) = method_fallback {
        builder.method_fallback(Target::Dynamic(index));
    }
    Ok(builder.build())
}
