//! Shared rate limits' counts, sent to Redis on the link's passes (see `responses::rate_limit::sharing`): for
//! each client a limit let through since the last pass, one script call adds those requests to the client's TAT
//! in Redis and answers how far ahead of Redis's clock it now is, which the limit merges into its own count.
//! The script keeps the TAT on Redis's clock (`TIME`), so processes' clocks need not agree, and lets the key
//! expire when it no longer limits anything. One pipeline per Redis server per pass.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use redis::Value;

use super::failures::{within, LOST};
use super::join::all;
use super::nodes::Nodes;
use super::pushes::Pushes;
use super::shared::RelayShared;
use crate::responses::rate_limit::RateLimit;
use crate::values::sync::Locked;

/// `KEYS[1]`: the client's key; `ARGV`: one request's cost and the window (µs), and the requests let through.
/// Returns the TAT's lead over now (µs). The lead never passes the window: requests let through past the limit
/// by processes that had not heard yet cannot lock a client out for longer than a window.
const SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval, window, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
tat = math.min(tat + n * interval, now + window)
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.floor((tat - now) / 1000) + 1)
return tat - now
";

/// Requests per pipeline: a pass with more sends them in several.
const BATCH: usize = 512;

/// A pipeline of script calls, and whose count each answers (the limit and the client).
type Batch = (redis::Pipeline, Vec<(Arc<RateLimit>, Box<[u8]>)>);

/// The key of `client` for the limit named `name`: `<prefix>:rl:<name>:<client>` (the client's bytes as they are:
/// an address's 4 or 16, a header's value, a parameter's).
fn key(prefix: &str, name: &str, client: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(prefix.len() + name.len() + client.len() + 5);
    key.extend_from_slice(prefix.as_bytes());
    key.extend_from_slice(b":rl:");
    key.extend_from_slice(name.as_bytes());
    key.push(b':');
    key.extend_from_slice(client);
    key
}

/// The shared limits of the servers on this link; entries go with their limits.
pub(super) fn live(shared: &RelayShared) -> Vec<Arc<RateLimit>> {
    let mut limits = shared.limits.locked();
    limits.retain(|l| l.strong_count() > 0);
    limits.iter().filter_map(Weak::upgrade).collect()
}

/// Tells every shared limit whether Redis can be reached now.
pub(super) fn reachable(shared: &RelayShared, up: bool) {
    for limit in live(shared) {
        if let Some(sharing) = limit.sharing() {
            sharing.set_reachable(up);
        }
    }
}

/// Sends what the shared limits let through since the last pass and merges what Redis answers. `Ok(true)` when
/// there was something to send; `Err` when a connection failed (the link starts over).
pub(super) async fn sync(shared: &RelayShared, nodes: &Nodes, pushes: &Pushes) -> Result<bool, String> {
    let prefix = &shared.options.prefix;
    let mut pipes: HashMap<usize, Vec<Batch>> = HashMap::new();
    let mut any = false;
    for limit in live(shared) {
        let Some(sharing) = limit.sharing() else { continue };
        let (interval, window) = limit.micros();
        for (client, n) in sharing.take() {
            any = true;
            let key = key(prefix, &sharing.name, &client);
            let Some(owner) = nodes.owner(&key) else {
                // A cluster's primary that is down: this process counted them; Redis will not hear.
                sharing.unsynced.fetch_add(u64::from(n), Ordering::Relaxed);
                continue;
            };
            let batches = pipes.entry(owner).or_default();
            if batches.last().is_none_or(|(_, of)| of.len() >= BATCH) {
                batches.push((redis::pipe(), Vec::new()));
            }
            let (pipe, of) = batches.last_mut().expect("just pushed");
            pipe.cmd("EVAL").arg(SCRIPT).arg(1).arg(key).arg(interval).arg(window).arg(n);
            of.push((limit.clone(), client));
        }
    }
    if !any {
        return Ok(false);
    }
    let timeout = shared.options.timeout;
    all(pipes.into_iter().flat_map(|(owner, batches)| batches.into_iter().map(move |b| (owner, b))).map(
        |(owner, (pipe, of))| {
            let mut conn = nodes.conn(owner);
            async move {
                let replies: Vec<Value> = within(timeout, pipe.query_async(&mut conn)).await?;
                // Redis ended a subscription meanwhile: its notice may have been taken for a reply. Unsure, the
                // answers are not merged (the counts were kept here; Redis has them or forgets them).
                if pushes.lost.locked().is_some() {
                    return Err(LOST.to_owned());
                }
                for (reply, (limit, client)) in replies.iter().zip(&of) {
                    match reply {
                        Value::Int(ahead) => limit.merge(client, u64::try_from(*ahead).unwrap_or(0) * 1000),
                        // Refused (an ACL without EVAL, say): counted here only, and said.
                        other => {
                            if let Some(sharing) = limit.sharing() {
                                sharing.unsynced.fetch_add(1, Ordering::Relaxed);
                            }
                            shared.state.locked().last_error = Some(format!("rate limits: Redis answered {other:?}"));
                        }
                    }
                }
                Ok(())
            }
        },
    ))
    .await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_key_should_name_the_prefix_the_limit_and_the_client() {
        assert_eq!(super::key("gust", "api", &[127, 0, 0, 1]), b"gust:rl:api:\x7f\x00\x00\x01");
    }
}
