//! Rate limits decided in the engine: a request over its limit is answered `429` with `Retry-After` without
//! waking JavaScript, and every request a limit counted carries the IETF `RateLimit-Policy` and `RateLimit`
//! fields (draft-ietf-httpapi-ratelimit-headers-10: `"name";q=100;w=60` and `"name";r=99;t=60`).
//!
//! A limit counts per key (the client's address, a header, a path parameter) with GCRA ([`gcra`]) in a bounded
//! store ([`store`]); who the client is follows the package's `trustProxy` rules ([`trust`]). A limit applies
//! under a middleware pattern ([`pattern`]) or to one route (the route table holds it beside the route). Its
//! counters live as long as the [`RateLimit`]: the binding keeps one per limit the app declared, so that route
//! table swaps and every engine of the process (workers included) count together.

mod gcra;
mod pattern;
mod sharing;
mod store;
mod trust;

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode};

pub(crate) use pattern::Pattern;
pub use sharing::StoreDown;
pub use trust::TrustedProxies;

use super::body::Body;
use super::response::messages;
use crate::values::clock;
use crate::values::error::Error;
use gcra::{Gcra, Verdict};
use sharing::Sharing;
use store::Counters;

static RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
static RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

/// What a limit counts by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitKey {
    /// The client's address (after trusted proxies); IPv6 clients by their `/ipv6_subnet` network (128: each
    /// address), since one host commonly holds a whole /64 or more.
    Address {
        /// The prefix length IPv6 clients are counted by (1 to 128).
        ipv6_subnet: u8,
    },
    /// A request header's value; requests without it count by their address.
    Header {
        /// The header's name.
        name: HeaderName,
        /// As for [`LimitKey::Address`], for requests without the header.
        ipv6_subnet: u8,
    },
    /// A path parameter's value, by name (of the route's path, or of the `use()` pattern).
    Param(String),
}

/// A limit as the app declared it.
#[derive(Debug, Clone)]
pub struct RateLimitOptions {
    /// The policy's name in the headers (a token-ish string; quoted there).
    pub name: String,
    /// Requests per window: all at once, then one per `window / limit`.
    pub limit: u32,
    /// The window, in whole seconds.
    pub window: Duration,
    /// What it counts by.
    pub key: LimitKey,
    /// Peers whose forwarded addresses name the client.
    pub trust: TrustedProxies,
    /// Send `RateLimit-Policy` and `RateLimit` on the answers it counted (refusals always carry them).
    pub headers: bool,
    /// The refusal's body and its type (`None`: no `Content-Type`).
    pub body: Bytes,
    /// The refusal's `Content-Type`.
    pub content_type: Option<HeaderValue>,
    /// Keys held at most (see [`store`]).
    pub max_keys: usize,
    /// Counted across processes through Redis ([`sharing`]): this limit's name in its Redis keys (the same in
    /// every process), and what it does while Redis cannot be reached. `None`: this process alone.
    pub shared: Option<(String, StoreDown)>,
}

/// One declared limit and its counters.
#[derive(Debug)]
pub struct RateLimit {
    gcra: Gcra,
    key: LimitKey,
    trust: TrustedProxies,
    headers: bool,
    body: Bytes,
    content_type: Option<HeaderValue>,
    /// `"name"`, as both fields start each of its items.
    quoted: String,
    limit: u32,
    /// `"name";q=…;w=…`, and as a header value (made once).
    policy: String,
    policy_value: HeaderValue,
    counters: Counters,
    /// Requests it let through and refused, for `server.rateLimits` (relaxed adds).
    allowed: AtomicU64,
    refused: AtomicU64,
    sharing: Option<Sharing>,
}

/// What a limit has decided so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateLimitStats {
    /// Requests it let through.
    pub allowed: u64,
    /// Requests it refused (429).
    pub refused: u64,
    /// Clients it holds a count for now.
    pub keys: usize,
    /// Requests let through uncounted because it held `max_keys` active clients.
    pub overflowed: u64,
    /// A shared limit: requests let through that Redis did not hear of, or refused because it was unreachable.
    pub unsynced: u64,
}

impl RateLimit {
    /// Checks the options; the error names what is wrong.
    pub fn new(options: RateLimitOptions) -> Result<Self, Error> {
        let RateLimitOptions { name, limit, window, key, trust, headers, body, content_type, max_keys, shared } =
            options;
        let bad = |what: String| Err(Error::config(format!("rateLimit: {what}")));
        if limit == 0 {
            return bad("limit must be at least 1".into());
        }
        if window.is_zero() || window.subsec_nanos() != 0 {
            return bad(format!("window must be a whole number of seconds, at least 1, got {} ms", window.as_millis()));
        }
        if name.is_empty() || !name.bytes().all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\') {
            return bad(format!("name {name:?} must be printable ASCII without quotes or backslashes"));
        }
        if let LimitKey::Address { ipv6_subnet } | LimitKey::Header { ipv6_subnet, .. } = key {
            if !(1..=128).contains(&ipv6_subnet) {
                return bad(format!("ipv6Subnet must be 1 to 128, got {ipv6_subnet}"));
            }
        }
        let gcra = Gcra::new(limit, window.as_nanos().min(u128::from(u64::MAX)) as u64);
        let quoted = format!("\"{name}\"");
        let policy = format!("{quoted};q={limit};w={}", window.as_secs());
        let policy_value = HeaderValue::from_str(&policy).map_err(|_| Error::config("rateLimit: invalid name"))?;
        let counters = Counters::new(max_keys.max(1));
        let (allowed, refused) = (AtomicU64::new(0), AtomicU64::new(0));
        let sharing = shared.map(|(name, down)| Sharing::new(name, down));
        Ok(Self {
            gcra,
            key,
            trust,
            headers,
            body,
            content_type,
            quoted,
            limit,
            policy,
            policy_value,
            counters,
            allowed,
            refused,
            sharing,
        })
    }

    /// What the limit counts by.
    pub fn key(&self) -> &LimitKey {
        &self.key
    }

    /// Decides one request of `key` now (for a key JavaScript computed): (allowed, remaining, seconds until the
    /// quota is whole, seconds until the next request is allowed when refused); `None` when a shared limit that
    /// fails closed cannot reach Redis (answer 503).
    pub fn take(&self, key: &[u8]) -> Option<(bool, u32, u64, u64)> {
        if self.closed() {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let v = self.count(key);
        Some((v.allowed, v.remaining, seconds(v.reset), seconds(v.retry)))
    }

    fn count(&self, key: &[u8]) -> Verdict {
        // A client chooses its header's or parameter's value, up to the header and URI limits: a long one is
        // held as its digest, so that `max_keys` bounds the store's memory (about 80 bytes a client).
        let digest;
        let key = if key.len() > MAX_KEY_BYTES {
            digest = long_key(key);
            &digest[..]
        } else {
            key
        };
        let v = self.counters.take(&self.gcra, key, clock::now_ns());
        let counter = if v.allowed { &self.allowed } else { &self.refused };
        counter.fetch_add(1, Ordering::Relaxed);
        if let (true, Some(sharing)) = (v.allowed, &self.sharing) {
            sharing.note(key);
        }
        v
    }

    /// A shared limit that refuses everything while Redis cannot be reached, now that it cannot.
    fn closed(&self) -> bool {
        self.sharing.as_ref().is_some_and(|s| s.down == StoreDown::Closed && !s.reachable())
    }

    /// Whether it is counted across processes through Redis.
    pub fn is_shared(&self) -> bool {
        self.sharing.is_some()
    }

    /// Its shared side, when it is counted through Redis.
    pub(crate) fn sharing(&self) -> Option<&Sharing> {
        self.sharing.as_ref()
    }

    /// Merges what Redis says of `key`: its TAT is `ahead_ns` past now there.
    pub(crate) fn merge(&self, key: &[u8], ahead_ns: u64) {
        self.counters.merge(&self.gcra, key, clock::now_ns(), ahead_ns);
    }

    /// How far `key`'s TAT is ahead of now, in ns (tests: whether what Redis said has been merged).
    #[cfg(test)]
    pub(crate) fn ahead(&self, key: &[u8]) -> u64 {
        self.counters.tat(key).map_or(0, |tat| tat.saturating_sub(clock::now_ns()))
    }

    /// One request's cost and the window, in microseconds (what the Redis script counts in).
    pub(crate) fn micros(&self) -> (u64, u64) {
        (self.gcra.interval_ns().div_ceil(1000), self.gcra.window_ns() / 1000)
    }

    /// The `RateLimit-Policy` item, and the `RateLimit` item for a decision taken in JavaScript.
    pub fn header_items(&self, remaining: u32, reset_s: u64) -> (String, String) {
        (self.policy.clone(), format!("{};r={remaining};t={reset_s}", self.quoted))
    }

    /// What it has decided so far. Cost: a lock per shard of its store, to count the clients held.
    pub fn stats(&self) -> RateLimitStats {
        RateLimitStats {
            allowed: self.allowed.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            keys: self.counters.len(),
            overflowed: self.counters.overflowed(),
            unsynced: self.sharing.as_ref().map_or(0, |s| s.unsynced.load(Ordering::Relaxed)),
        }
    }

    /// The policy's name, limit and window in seconds.
    pub fn policy(&self) -> (&str, u32, u64) {
        (&self.quoted[1..self.quoted.len() - 1], self.limit, self.gcra.window_ns() / 1_000_000_000)
    }

    /// Decides a request: `None` lets it through (its fields noted in `applied`), else the refusal to send.
    pub(crate) fn admit(
        &self,
        peer: &str,
        headers: &HeaderMap,
        param: Option<&str>,
        applied: &mut Applied,
    ) -> Option<Response<Body>> {
        if self.decide(peer, headers, param, applied) {
            return None;
        }
        // A refused decision always noted its refusal (the first limit to refuse answers).
        applied.refusal()
    }

    /// Decides a request: `param` is the path parameter the key names, when it does.
    pub(crate) fn decide(&self, peer: &str, headers: &HeaderMap, param: Option<&str>, applied: &mut Applied) -> bool {
        if self.closed() {
            self.refused.fetch_add(1, Ordering::Relaxed);
            if let Some(s) = &self.sharing {
                s.unsynced.fetch_add(1, Ordering::Relaxed);
            }
            applied.unavailable();
            return false;
        }
        let mut buf = [0u8; 16];
        let mut spill = Vec::new();
        let key: &[u8] = match (&self.key, param) {
            (LimitKey::Param(_), Some(value)) => value.as_bytes(),
            (LimitKey::Header { name, ipv6_subnet }, _) => match headers.get(name) {
                Some(value) => value.as_bytes(),
                None => self.address(peer, headers, *ipv6_subnet, &mut buf, &mut spill),
            },
            (LimitKey::Address { ipv6_subnet }, _) => self.address(peer, headers, *ipv6_subnet, &mut buf, &mut spill),
            // A parameter the path did not carry (the route table checks it exists): by address.
            (LimitKey::Param(_), None) => self.address(peer, headers, 128, &mut buf, &mut spill),
        };
        let verdict = self.count(key);
        applied.note(self, verdict);
        verdict.allowed
    }

    /// The client's address as key bytes: 4 for IPv4, 16 for IPv6 cut to its network, else the text itself
    /// after a marker byte (a forwarded `unknown`, an obfuscated node), which no address's bytes can equal.
    fn address<'a>(
        &self,
        peer: &str,
        headers: &HeaderMap,
        subnet: u8,
        buf: &'a mut [u8; 16],
        spill: &'a mut Vec<u8>,
    ) -> &'a [u8] {
        let client = self.trust.client(peer, headers);
        match trust::parse_ip(&client) {
            Some(IpAddr::V4(v4)) => {
                buf[..4].copy_from_slice(&v4.octets());
                &buf[..4]
            }
            Some(IpAddr::V6(v6)) => {
                let cut = if subnet >= 128 { u128::MAX } else { !(u128::MAX >> subnet) };
                *buf = (u128::from(v6) & cut).to_be_bytes();
                &buf[..]
            }
            None => {
                spill.push(0xff);
                spill.extend_from_slice(client.as_bytes());
                spill
            }
        }
    }
}

/// Longer keys are held as [`long_key`]'s digest.
const MAX_KEY_BYTES: usize = 32;

/// A long key's stand-in: a marker byte, then its SHA-1 (collisions would need a chosen-prefix attack on a key the
/// attacker already knows, which it could simply send).
fn long_key(key: &[u8]) -> [u8; 21] {
    use sha1::{Digest, Sha1};
    let mut out = [0xfe; 21];
    out[1..].copy_from_slice(&Sha1::digest(key));
    out
}

/// Whole seconds, rounded up: a client told 0 would retry at once.
fn seconds(ns: u64) -> u64 {
    ns.div_ceil(1_000_000_000)
}

/// What the limits a request met said, for its answer's headers; empty when none sends them. Written without
/// `core::fmt`, and the policy's value made once per limit: a refusal's own cost was mostly formatting and header
/// maps growing (`benchmarks/results/rate-limits-2026-11-29.md`).
#[derive(Debug, Default)]
pub(crate) struct Applied {
    /// `RateLimit-Policy`: the one limit's value as made, or several joined.
    policy: Option<HeaderValue>,
    /// `RateLimit`'s items, joined.
    state: Vec<u8>,
    /// The first refusal: its status, its limit's body and type, and seconds until it may retry.
    refused: Option<(StatusCode, Bytes, Option<HeaderValue>, u64)>,
}

/// `n` in decimal, at the end of `out`.
fn push_number(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

impl Applied {
    fn note(&mut self, limit: &RateLimit, v: Verdict) {
        if !v.allowed && self.refused.is_none() {
            let retry = seconds(v.retry).max(1);
            self.refused = Some((StatusCode::TOO_MANY_REQUESTS, limit.body.clone(), limit.content_type.clone(), retry));
        }
        if !limit.headers && v.allowed {
            return;
        }
        self.policy = Some(match self.policy.take() {
            None => limit.policy_value.clone(),
            Some(before) => {
                let mut joined = before.as_bytes().to_vec();
                joined.extend_from_slice(b", ");
                joined.extend_from_slice(limit.policy.as_bytes());
                HeaderValue::from_maybe_shared(Bytes::from(joined)).unwrap_or(before)
            }
        });
        if !self.state.is_empty() {
            self.state.extend_from_slice(b", ");
        }
        self.state.extend_from_slice(limit.quoted.as_bytes());
        self.state.extend_from_slice(b";r=");
        push_number(&mut self.state, u64::from(v.remaining));
        self.state.extend_from_slice(b";t=");
        push_number(&mut self.state, seconds(v.reset));
    }

    /// A shared limit that fails closed could not reach Redis: 503, retried in a second.
    fn unavailable(&mut self) {
        if self.refused.is_none() {
            let body = Bytes::from_static(messages::RATE_LIMIT_UNREACHABLE.as_bytes());
            let text = HeaderValue::from_static("text/plain; charset=utf-8");
            self.refused = Some((StatusCode::SERVICE_UNAVAILABLE, body, Some(text), 1));
        }
    }

    /// The refusal, when a limit refused: 429 with its body, `Retry-After` and the fields (or 503, above).
    pub(crate) fn refusal(&mut self) -> Option<Response<Body>> {
        let (status, body, content_type, retry) = self.refused.take()?;
        let mut res = Response::new(Body::full(body));
        *res.status_mut() = status;
        // Room for its fields at once, rather than the map growing as they are added.
        let headers = res.headers_mut();
        *headers = HeaderMap::with_capacity(6);
        if let Some(content_type) = content_type {
            headers.insert(CONTENT_TYPE, content_type);
        }
        headers.insert(RETRY_AFTER, HeaderValue::from(retry));
        self.add_to(headers);
        Some(res)
    }

    /// Adds the fields to an answer (no-op when no limit sends them).
    pub(crate) fn add_to(&mut self, headers: &mut HeaderMap) {
        if let Some(fields) = self.take_fields() {
            fields.add_to(headers);
        }
    }

    /// The fields for an answer made later (a handler's, a file's), when a limit sends them; boxed, since
    /// most requests carry none and the request's future holds only the pointer.
    pub(crate) fn fields(&mut self) -> Option<Box<LimitFields>> {
        self.take_fields().map(Box::new)
    }

    fn take_fields(&mut self) -> Option<LimitFields> {
        let policy = self.policy.take()?;
        // Names, quotes, `;`, `=`, digits and `, `: always a valid value (the names were checked).
        let state = HeaderValue::from_maybe_shared(Bytes::from(std::mem::take(&mut self.state))).ok()?;
        Some(LimitFields { policy, state })
    }
}

/// `RateLimit-Policy` and `RateLimit` for an allowed request's answer, whoever makes it.
#[derive(Debug)]
pub(crate) struct LimitFields {
    policy: HeaderValue,
    state: HeaderValue,
}

impl LimitFields {
    pub(crate) fn add_to(self, headers: &mut HeaderMap) {
        headers.insert(RATELIMIT_POLICY.clone(), self.policy);
        headers.insert(RATELIMIT.clone(), self.state);
    }
}

#[cfg(test)]
mod tests;
