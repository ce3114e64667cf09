//! Rate limits as the package declares them, and the process's one set of counters per limit: the tables of
//! every engine in this process (workers' included, and each table a route change swaps in) hold the same
//! `RateLimit` for the same declared limit, found here by the id the package gives it. Entries are weak: a limit
//! lives as long as some table or `BindingRateLimiter` holds it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use gust_core::{LimitKey, Locked, RateLimit, RateLimitOptions, TrustedProxies};
use http::{HeaderName, HeaderValue};
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;

static LIMITS: Mutex<Option<HashMap<String, Weak<RateLimit>>>> = Mutex::new(None);

/// One limit, as `rateLimit()` checked it.
#[napi(object)]
pub struct BindingRateLimit {
    /// Who shares its counters: the same id, the same counters, process-wide.
    pub id: String,
    pub name: String,
    pub limit: u32,
    pub window_seconds: u32,
    /// `ip`, `header` or `param`.
    pub key: String,
    /// The header's or the parameter's name.
    pub key_name: Option<String>,
    pub ipv6_subnet: u32,
    pub headers: bool,
    #[napi(ts_type = "Uint8Array")]
    pub body: Buffer,
    pub content_type: Option<String>,
    pub max_keys: u32,
    /// Trusted proxies as address ranges (`::/0`: every peer).
    pub trust: Vec<String>,
    /// Counted across processes through Redis under this name.
    pub shared: Option<String>,
    /// A shared limit refuses (503) while Redis cannot be reached.
    pub shared_closed: bool,
}

/// A limit under a pattern (none: every request), by its index in the list of limits.
#[napi(object)]
pub struct BindingPathLimit {
    pub limit: u32,
    pub pattern: Option<String>,
}

/// Every limit of an app's table.
#[napi(object)]
pub struct BindingLimits {
    pub limits: Vec<BindingRateLimit>,
    pub paths: Vec<BindingPathLimit>,
    /// Limits decided in JavaScript that the table holds so that the engine's link to Redis counts them.
    pub held: Vec<u32>,
}

fn invalid(message: String) -> napi::Error {
    napi::Error::new(napi::Status::InvalidArg, message)
}

/// The process's limit for `spec`, made on first use.
pub(crate) fn limit_for(spec: &BindingRateLimit) -> napi::Result<Arc<RateLimit>> {
    let mut registry = LIMITS.locked();
    let map = registry.get_or_insert_with(HashMap::new);
    if let Some(limit) = map.get(&spec.id).and_then(Weak::upgrade) {
        return Ok(limit);
    }
    let subnet = u8::try_from(spec.ipv6_subnet).unwrap_or(0);
    let key = match (spec.key.as_str(), &spec.key_name) {
        ("ip", _) => LimitKey::Address { ipv6_subnet: subnet },
        ("header", Some(name)) => LimitKey::Header {
            name: HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| invalid(format!("rateLimit: {name:?} is not a header name")))?,
            ipv6_subnet: subnet,
        },
        ("param", Some(name)) => LimitKey::Param(name.clone()),
        (other, _) => return Err(invalid(format!("rateLimit: unknown key kind {other:?}"))),
    };
    let content_type = spec
        .content_type
        .as_deref()
        .map(HeaderValue::from_str)
        .transpose()
        .map_err(|_| invalid("rateLimit: invalid content type".into()))?;
    let limit = RateLimit::new(RateLimitOptions {
        name: spec.name.clone(),
        limit: spec.limit,
        window: Duration::from_secs(u64::from(spec.window_seconds)),
        key,
        trust: TrustedProxies::parse(spec.trust.iter().map(String::as_str))
            .map_err(|e| invalid(format!("rateLimit: trustProxy {e}")))?,
        headers: spec.headers,
        body: Bytes::copy_from_slice(&spec.body),
        content_type,
        max_keys: spec.max_keys as usize,
        shared: spec.shared.clone().map(|name| {
            (name, if spec.shared_closed { gust_core::StoreDown::Closed } else { gust_core::StoreDown::Open })
        }),
    })
    .map_err(crate::js_error)?;
    let limit = Arc::new(limit);
    map.retain(|_, l| l.strong_count() > 0);
    map.insert(spec.id.clone(), Arc::downgrade(&limit));
    Ok(limit)
}

/// A limit whose key JavaScript computes (`rateLimit({ key: (c) => … })`): one crossing per decision, the same
/// counters as the engine's limit of the same id.
#[napi]
pub struct BindingRateLimiter {
    limit: Arc<RateLimit>,
}

#[napi]
impl BindingRateLimiter {
    #[napi(constructor)]
    pub fn new(spec: BindingRateLimit) -> napi::Result<Self> {
        Ok(Self { limit: limit_for(&spec)? })
    }

    /// Decides one request of `key`: `[verdict, remaining, seconds until the quota is whole, seconds until the
    /// next request is allowed]`; the verdict is 1 (allowed), 0 (refused: 429) or 2 (a shared limit that fails
    /// closed cannot reach Redis: 503).
    #[napi]
    pub fn take(&self, key: String) -> Vec<u32> {
        match self.limit.take(key.as_bytes()) {
            Some((allowed, remaining, reset, retry)) => vec![u32::from(allowed), remaining, clamp(reset), clamp(retry)],
            None => vec![2, 0, 0, 1],
        }
    }

    /// `RateLimit-Policy` and `RateLimit` items for a decision `take` returned.
    #[napi]
    pub fn fields(&self, remaining: u32, reset_seconds: u32) -> Vec<String> {
        let (policy, state) = self.limit.header_items(remaining, u64::from(reset_seconds));
        vec![policy, state]
    }
}

/// What one limit has decided so far.
#[napi(object)]
pub struct BindingRateLimitStats {
    pub name: String,
    pub limit: u32,
    pub window_seconds: f64,
    pub allowed: f64,
    pub refused: f64,
    /// Clients it holds a count for now.
    pub clients: f64,
    /// Requests let through uncounted because it held `maxKeys` active clients.
    pub overflowed: f64,
    /// A shared limit: requests let through that Redis did not hear of, or refused because it was unreachable.
    pub unsynced: f64,
}

/// The counts of the limits `ids` names that are alive (a stopped app's are gone), in that order.
#[napi]
pub fn rate_limit_stats(ids: Vec<String>) -> Vec<BindingRateLimitStats> {
    let live: Vec<Arc<RateLimit>> = {
        let registry = LIMITS.locked();
        let Some(map) = registry.as_ref() else { return Vec::new() };
        ids.iter().filter_map(|id| map.get(id).and_then(Weak::upgrade)).collect()
    };
    live.iter()
        .map(|limit| {
            let (name, quota, window) = limit.policy();
            let s = limit.stats();
            BindingRateLimitStats {
                name: name.to_owned(),
                limit: quota,
                window_seconds: window as f64,
                allowed: s.allowed as f64,
                refused: s.refused as f64,
                clients: s.keys as f64,
                overflowed: s.overflowed as f64,
                unsynced: s.unsynced as f64,
            }
        })
        .collect()
}

fn clamp(seconds: u64) -> u32 {
    u32::try_from(seconds).unwrap_or(u32::MAX)
}
