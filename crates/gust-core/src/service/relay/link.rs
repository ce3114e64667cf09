//! The relay's thread: connect, subscribe what is wanted, publish what is queued, deliver what arrives; on a
//! lost connection, back off and do it all again.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use redis::aio::{MultiplexedConnection, PubSubSink, PubSubStream};
use redis::{AsyncConnectionConfig, Client, RedisError};

use super::envelope;
use super::shared::Shared;
use crate::values::sync::Locked;

/// Channels per SUBSCRIBE or UNSUBSCRIBE command, and publishes per pipeline.
const BATCH: usize = 256;
/// Messages from Redis delivered before the subscribers are woken (when that many are there at once).
const BURST: usize = 1024;
/// The first retry's delay, doubled per failure up to `MAX_BACKOFF`; each delay is jittered down by up to half,
/// so processes that lost the same Redis do not all come back at once. The cap is one second so that delivery
/// resumes within about a second of Redis coming back, however long it was gone (an attempt is a TCP connect:
/// one a second per process costs Redis nothing).
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Runs until the relay is dropped or shut. `first` hears how the first attempt to connect went.
pub(super) async fn run(shared: Arc<Shared>, client: Client, first: std::sync::mpsc::Sender<Result<(), String>>) {
    let mut first = Some(first);
    let mut failures = 0u32;
    let mut ever = false;
    while !shared.quit.load(Ordering::Acquire) {
        match connect(&client, shared.options.timeout).await {
            Ok((publisher, sink, stream)) => {
                failures = 0;
                shared.state.locked().last_error = None;
                if std::mem::replace(&mut ever, true) {
                    shared.reconnects.fetch_add(1, Ordering::Relaxed);
                }
                let lost = serve(&shared, publisher, sink, stream, &mut first).await;
                shared.connected.store(false, Ordering::Release);
                let mut state = shared.state.locked();
                state.subscribed = 0;
                // Until the next connection takes its snapshot of what is wanted, changes need no record.
                state.linked = false;
                state.changed.clear();
                if let Err(why) = lost {
                    state.last_error = Some(why);
                }
            }
            Err(why) => {
                shared.state.locked().last_error = Some(why.clone());
                if let Some(tx) = first.take() {
                    let _ = tx.send(Err(why));
                }
            }
        }
        if shared.quit.load(Ordering::Acquire) {
            break;
        }
        let delay = backoff(failures);
        failures = failures.saturating_add(1);
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = quit(&shared) => {}
        }
    }
}

/// Makes both connections once and lets them go: whether Redis can be reached, and why not. Blocks the calling
/// thread (a runtime of its own) for at most twice `options.timeout`.
pub(super) fn probe(options: &super::RelayOptions) -> Result<(), String> {
    let client = Client::open(options.url.as_str()).map_err(|e| describe(&e))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime to reach Redis: {e}"))?;
    runtime.block_on(connect(&client, options.timeout)).map(|_| ())
}

/// Resolves once the relay is dropped (woken by its `Drop`).
async fn quit(shared: &Shared) {
    while !shared.quit.load(Ordering::Acquire) {
        shared.wake.notified().await;
    }
}

/// How often both connections are checked with a PING: twice the timeout, from 1 to 15 s.
fn health_every(timeout: Duration) -> Duration {
    (timeout * 2).clamp(Duration::from_secs(1), Duration::from_secs(15))
}

fn backoff(failures: u32) -> Duration {
    let full = FIRST_BACKOFF.saturating_mul(1 << failures.min(16)).min(MAX_BACKOFF);
    // Jitter from the clock's nanoseconds: enough to spread processes apart, no random source needed.
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    full / 2 + full.mul_f64(f64::from(nanos % 1000) / 2000.0)
}

/// Both connections, each within `timeout`.
async fn connect(
    client: &Client,
    timeout: Duration,
) -> Result<(MultiplexedConnection, PubSubSink, PubSubStream), String> {
    let config =
        AsyncConnectionConfig::new().set_connection_timeout(Some(timeout)).set_response_timeout(Some(timeout));
    let publisher = tokio::time::timeout(timeout, client.get_multiplexed_async_connection_with_config(&config))
        .await
        .map_err(|_| format!("no answer within {} ms", timeout.as_millis()))?
        .map_err(|e| describe(&e))?;
    let pubsub = tokio::time::timeout(timeout, client.get_async_pubsub())
        .await
        .map_err(|_| format!("no answer within {} ms", timeout.as_millis()))?
        .map_err(|e| describe(&e))?;
    let (sink, stream) = pubsub.split();
    Ok((publisher, sink, stream))
}

/// A failure to reach Redis, said plainly.
fn describe(e: &RedisError) -> String {
    use redis::ErrorKind;
    let code = e.code().unwrap_or_default();
    if e.kind() == ErrorKind::AuthenticationFailed || matches!(code, "WRONGPASS" | "NOAUTH" | "NOPERM") {
        return format!("Redis refused the credentials ({e})");
    }
    if e.is_connection_refusal() {
        return format!("the connection was refused ({e})");
    }
    if e.is_timeout() {
        return format!("no answer in time ({e})");
    }
    let text = e.to_string();
    if text.contains("certificate") {
        return format!("its TLS certificate could not be verified ({text})");
    }
    text
}

/// Serves one pair of connections until one fails (`Err`: why) or the relay is dropped or shut (`Ok`). Once
/// every wanted topic is subscribed the relay counts as connected, and `first` (if not told yet) hears so.
async fn serve(
    shared: &Shared,
    mut publisher: MultiplexedConnection,
    mut sink: PubSubSink,
    mut stream: PubSubStream,
    first: &mut Option<std::sync::mpsc::Sender<Result<(), String>>>,
) -> Result<(), String> {
    let timeout = shared.options.timeout;
    let mut health = tokio::time::interval_at(tokio::time::Instant::now() + health_every(timeout), health_every(timeout));
    health.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Everything wanted now is subscribed afresh: the connection is new. From here on, changes are recorded.
    let mut subscribed: HashSet<Box<str>> = HashSet::new();
    let mut todo: Vec<Box<str>> = {
        let mut state = shared.state.locked();
        state.changed.clear();
        state.linked = true;
        state.wanted.keys().cloned().collect()
    };
    reconcile(shared, &mut sink, &mut subscribed, std::mem::take(&mut todo), timeout).await?;
    shared.connected.store(true, Ordering::Release);
    if let Some(tx) = first.take() {
        let _ = tx.send(Ok(()));
    }
    loop {
        if shared.quit.load(Ordering::Acquire) {
            return Ok(());
        }
        reconcile(shared, &mut sink, &mut subscribed, std::mem::take(&mut todo), timeout).await?;
        // One pipeline per pass: publishers that never pause must not keep what arrives from Redis waiting (it
        // would pile up unread in the connection's buffer).
        let more = publish(shared, &mut publisher, timeout).await?;
        if more {
            deliver_ready(shared, &mut stream)?;
        } else {
            tokio::select! {
                message = next(&mut stream) => {
                    let Some(message) = message else { return Err(LOST.into()) };
                    deliver(shared, &message);
                    deliver_ready(shared, &mut stream)?;
                }
                () = shared.wake.notified() => {}
                _ = health.tick() => {
                    // A sign of life from both connections: a Redis that stopped answering (stopped, or cut off
                    // without a reset) is noticed within `timeout` and connected to again, rather than trusted
                    // while nothing arrives. On the subscribing connection Redis answers with an array.
                    within(timeout, sink.ping::<redis::Value>()).await?;
                    within(timeout, redis::cmd("PING").query_async::<redis::Value>(&mut publisher)).await?;
                }
            }
        }
        todo = std::mem::take(&mut shared.state.locked().changed);
    }
}

const LOST: &str = "the connection to Redis was lost";

/// Delivers what has arrived from Redis already (up to `BURST` messages), then wakes the subscribers' engines
/// once for all of it, so each socket writes the burst in one go (one write per message was most of the relay's
/// cost).
fn deliver_ready(shared: &Shared, stream: &mut PubSubStream) -> Result<(), String> {
    let mut delivered = 0;
    while delivered < BURST {
        match ready_now(stream) {
            Some(Some(message)) => deliver(shared, &message),
            Some(None) => return Err(LOST.into()),
            None => break,
        }
        delivered += 1;
    }
    if let Some(peers) = shared.peers.get().and_then(std::sync::Weak::upgrade) {
        peers.flush();
    }
    Ok(())
}

/// Makes Redis's subscriptions match what is wanted, for the topics in `topics` (each checked now, so a topic
/// subscribed and unsubscribed meanwhile costs nothing).
async fn reconcile(
    shared: &Shared,
    sink: &mut PubSubSink,
    subscribed: &mut HashSet<Box<str>>,
    topics: Vec<Box<str>>,
    timeout: Duration,
) -> Result<(), String> {
    if topics.is_empty() {
        return Ok(());
    }
    let (mut add, mut remove) = (Vec::new(), Vec::new());
    {
        let state = shared.state.locked();
        for topic in topics {
            let wanted = state.wanted.contains_key(&topic);
            if wanted && !subscribed.contains(&topic) {
                add.push(topic);
            } else if !wanted && subscribed.contains(&topic) {
                remove.push(topic);
            }
        }
    }
    for chunk in add.chunks(BATCH) {
        let channels: Vec<Vec<u8>> = chunk.iter().map(|t| shared.options.channel(t)).collect();
        within(timeout, sink.subscribe(channels)).await?;
        subscribed.extend(chunk.iter().cloned());
    }
    for chunk in remove.chunks(BATCH) {
        let channels: Vec<Vec<u8>> = chunk.iter().map(|t| shared.options.channel(t)).collect();
        within(timeout, sink.unsubscribe(channels)).await?;
        for topic in chunk {
            subscribed.remove(topic);
        }
    }
    shared.state.locked().subscribed = subscribed.len();
    Ok(())
}

/// Sends the oldest queued publishes, a pipeline of up to `BATCH`, in order; whether more wait. A pipeline that
/// fails is counted dropped (Redis may have taken part of it: sending it again could deliver twice).
async fn publish(shared: &Shared, publisher: &mut MultiplexedConnection, timeout: Duration) -> Result<bool, String> {
    let (batch, more): (Vec<(Vec<u8>, Vec<u8>)>, bool) = {
        let mut state = shared.state.locked();
        let n = state.outbox.len().min(BATCH);
        let batch: Vec<_> = state.outbox.drain(..n).collect();
        state.queued -= batch.iter().map(|(c, e)| c.len() + e.len()).sum::<usize>();
        (batch, !state.outbox.is_empty())
    };
    if batch.is_empty() {
        return Ok(false);
    }
    let mut pipe = redis::pipe();
    for (channel, envelope) in &batch {
        pipe.cmd("PUBLISH").arg(channel).arg(envelope).ignore();
    }
    let n = batch.len() as u64;
    match within(timeout, pipe.query_async::<()>(publisher)).await {
        Ok(()) => {
            shared.published.fetch_add(n, Ordering::Relaxed);
            Ok(more)
        }
        Err(why) => {
            shared.dropped.fetch_add(n, Ordering::Relaxed);
            Err(why)
        }
    }
}

/// Hands a message from Redis to the local subscribers of its topic, unless it is this relay's own.
fn deliver(shared: &Shared, message: &redis::Msg) {
    let Ok(channel) = message.get_channel::<Vec<u8>>() else { return };
    let Some(topic) = shared.options.topic(&channel) else { return };
    let Some(received) = envelope::decode(message.get_payload_bytes()) else { return };
    if received.origin == shared.origin {
        return;
    }
    let Some(peers) = shared.peers.get().and_then(std::sync::Weak::upgrade) else { return };
    peers.deliver(topic, received.payload, received.compress);
    shared.delivered.fetch_add(1, Ordering::Relaxed);
}

/// The stream's next message if it is there already (`None` when it is not, `Some(None)` at its end).
fn ready_now(stream: &mut PubSubStream) -> Option<Option<redis::Msg>> {
    use futures_core::Stream;
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::Pin::new(&mut *stream).poll_next(&mut cx) {
        std::task::Poll::Ready(message) => Some(message),
        std::task::Poll::Pending => None,
    }
}

/// The stream's next message (`StreamExt::next`, without futures-util).
async fn next(stream: &mut PubSubStream) -> Option<redis::Msg> {
    use futures_core::Stream;
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *stream).poll_next(cx)).await
}

async fn within<T>(timeout: Duration, work: impl std::future::Future<Output = redis::RedisResult<T>>) -> Result<T, String> {
    match tokio::time::timeout(timeout, work).await {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(e)) => Err(describe(&e)),
        Err(_) => Err(format!("Redis did not answer within {} ms", timeout.as_millis())),
    }
}
