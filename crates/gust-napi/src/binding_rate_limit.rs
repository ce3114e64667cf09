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

    /// Decides one request of `key`: `[allowed (1 or 0), remaining, seconds until the quota is whole, seconds
    /// until the next request is allowed]`.
    #[napi]
    pub fn take(&self, key: String) -> Vec<u32> {
        let (allowed, remaining, reset, retry) = self.limit.take(key.as_bytes());
        vec![u32::from(allowed), remaining, clamp(reset), clamp(retry)]
    }

    /// `RateLimit-Policy` and `RateLimit` items for a decision `take` returned.
    #[napi]
    pub fn fields(&self, remaining: u32, reset_seconds: u32) -> Vec<String> {
        let (policy, state) = self.limit.header_items(remaining, u64::from(reset_seconds));
        vec![policy, state]
    }

    /// `[keys held, decisions taken uncounted because the store was full]`.
    #[napi]
    pub fn stats(&self) -> Vec<f64> {
        let (keys, overflowed) = self.limit.stats();
        vec![keys as f64, overflowed as f64]
    }
}

fn clamp(seconds: u64) -> u32 {
    u32::try_from(seconds).unwrap_or(u32::MAX)
}
