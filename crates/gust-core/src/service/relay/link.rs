//! The relay's thread: connect, subscribe what is wanted, publish what is queued (messages that arrive are
//! delivered by the connections themselves, [`Pushes`]); on a lost connection, back off and do it all again.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use redis::aio::ConnectionLike;

use super::failures::{accepted, within, LOST};
use super::join::all;
use super::nodes::{self, Nodes};
use super::pushes::Pushes;
use super::shared::RelayShared;
use crate::values::sync::Locked;

/// Channels per SUBSCRIBE or UNSUBSCRIBE command, and publishes per pipeline.
const BATCH: usize = 256;
/// Pipelines in flight at once while subscribing (10,000 topics are 40 of them).
const WAVE: usize = 64;
/// The first retry's delay, doubled per failure up to `MAX_BACKOFF`; each delay is jittered down by up to half,
/// so processes that lost the same Redis do not all come back at once. The cap is one second so that delivery
/// resumes within about a second of Redis coming back, however long it was gone (an attempt is a TCP connect:
/// one a second per process costs Redis nothing).
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// How long a link must last for the next failure to be retried at once again.
const STEADY: Duration = Duration::from_secs(10);
/// How often a cluster's primary that is down is tried again (its shard's topics wait meanwhile).
const REPAIR_EVERY: Duration = Duration::from_secs(1);

/// Runs until the relay is dropped or shut. `first` hears how the first attempt to connect went.
pub(super) async fn run(shared: Arc<RelayShared>, first: std::sync::mpsc::Sender<Result<(), String>>) {
    let mut first = Some(first);
    let mut failures = 0u32;
    let mut ever = false;
    while !shared.quit.load(Ordering::Acquire) {
        let pushes = Arc::new(Pushes::new(shared.clone()));
        match nodes::connect(&shared, &pushes).await {
            Ok(mut nodes) => {
                shared.state.locked().last_error = None;
                if std::mem::replace(&mut ever, true) {
                    shared.reconnects.fetch_add(1, Ordering::Relaxed);
                }
                let began = std::time::Instant::now();
                let lost = serve(&shared, &mut nodes, &pushes, &mut first).await;
                // The backoff starts again only after a link that lasted: one that fails at once each time (a
                // refusal after connecting, a map that keeps changing) is retried ever more slowly.
                if began.elapsed() >= STEADY {
                    failures = 0;
                }
                drop(nodes);
                shared.connected.store(false, Ordering::Release);
                super::limits::reachable(&shared, false);
                let mut state = shared.state.locked();
                state.nodes = 0;
                state.subscriptions.unlink();
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

/// Connects as a relay would, checks that Redis lets it subscribe to and publish on the prefix's channels (an
/// ACL that does not fails here, by name, not later in the background), and lets go. Blocks the calling thread
/// (a runtime of its own) for at most a few `options.timeout`s.
pub(super) fn probe(options: &super::RelayOptions) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime to reach Redis: {e}"))?;
    let shared = Arc::new(RelayShared::new(options.clone()));
    let pushes = Arc::new(Pushes::new(shared.clone()));
    runtime.block_on(async {
        let nodes = nodes::connect(&shared, &pushes).await?;
        if let Some(why) = nodes.missing() {
            return Err(why);
        }
        // The empty topic's channel: a message on it is no envelope, so every relay drops it.
        let channel = options.channel("");
        let mut conn = nodes.conn(nodes.owner(&channel).ok_or(LOST)?);
        let timeout = options.timeout;
        let mut subscribe = redis::pipe();
        subscribe.cmd(nodes.mode.subscribe()).arg(&channel);
        accepted(within(timeout, conn.req_packed_commands(&subscribe, 0, 1)).await?)?;
        shared.state.locked().subscriptions.leave([channel.clone()]);
        let mut unsubscribe = redis::pipe();
        unsubscribe.cmd(nodes.mode.unsubscribe()).arg(&channel);
        accepted(within(timeout, conn.req_packed_commands(&unsubscribe, 0, 1)).await?)?;
        let publish = redis::cmd(nodes.mode.publish()).arg(&channel).arg(b"").clone();
        within(timeout, publish.query_async::<redis::Value>(&mut conn)).await?;
        Ok(())
    })
}

/// Resolves once the relay is dropped (woken by its `Drop`).
async fn quit(shared: &RelayShared) {
    while !shared.quit.load(Ordering::Acquire) {
        shared.wake.notified().await;
    }
}

/// How often the connections are checked with a PING: twice the timeout, from 1 to 15 s.
fn health_every(timeout: Duration) -> Duration {
    (timeout * 2).clamp(Duration::from_secs(1), Duration::from_secs(15))
}

fn backoff(failures: u32) -> Duration {
    let full = FIRST_BACKOFF.saturating_mul(1 << failures.min(16)).min(MAX_BACKOFF);
    // Jitter from the clock's nanoseconds: enough to spread processes apart, no random source needed.
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    full / 2 + full.mul_f64(f64::from(nanos % 1000) / 2000.0)
}

/// Serves one set of connections until one fails (`Err`: why) or the relay is dropped or shut (`Ok`). Once
/// every wanted topic is subscribed the relay counts as connected, and `first` (if not told yet) hears so.
async fn serve(
    shared: &Arc<RelayShared>,
    nodes: &mut Nodes,
    pushes: &Arc<Pushes>,
    first: &mut Option<std::sync::mpsc::Sender<Result<(), String>>>,
) -> Result<(), String> {
    let work = follow(shared, nodes, pushes, first);
    // Wakes the subscribers once the connections have delivered all that a read brought (they run on this
    // thread: the flusher runs when they wait for more).
    let flusher = async {
        loop {
            pushes.ring.notified().await;
            pushes.flush();
        }
    };
    let done = tokio::select! {
        done = work => done,
        () = flusher => Ok(()),
    };
    // What the last read delivered, if the link ended before the flusher ran.
    pushes.flush();
    // A failure after Redis said why (ended a subscription, closed a connection) is that: later replies may have
    // been out of step.
    done.map_err(|why| pushes.lost.locked().take().unwrap_or(why))
}

/// The link's work: subscribe what is wanted, then follow the changes, publish, check the connections and repair a
/// cluster's down primaries, until a connection fails or the relay stops.
async fn follow(
    shared: &Arc<RelayShared>,
    nodes: &mut Nodes,
    pushes: &Arc<Pushes>,
    first: &mut Option<std::sync::mpsc::Sender<Result<(), String>>>,
) -> Result<(), String> {
    let timeout = shared.options.timeout;
    let mut next_health = std::time::Instant::now() + health_every(timeout);
    // Everything wanted now is subscribed afresh: the connections are new. Changes are recorded from here.
    let wanted: Vec<Box<str>> = {
        let mut state = shared.state.locked();
        state.sharded = nodes.mode != nodes::Mode::Plain;
        state.subscriptions.link()
    };
    reconcile(shared, nodes, wanted).await?;
    report(shared, nodes);
    if let Some(tx) = first.take() {
        let _ = tx.send(Ok(()));
    }
    // While a cluster's primary is down, its shard waits and the others go on; it is tried every second,
    // beside the link.
    let mut next_repair = std::time::Instant::now() + REPAIR_EVERY;
    let mut repairing: Option<Repairing> = None;
    let mut todo: Vec<Box<str>> = Vec::new();
    loop {
        if shared.quit.load(Ordering::Acquire) {
            return Ok(());
        }
        if let Some(why) = pushes.lost.locked().take() {
            return Err(why);
        }
        reconcile(shared, nodes, std::mem::take(&mut todo)).await?;
        if let Some(done) = repairing.as_mut().and_then(Repairing::done) {
            repairing = None;
            next_repair = std::time::Instant::now() + REPAIR_EVERY;
            let (up, why) = done?;
            let up = nodes.repaired(up, why);
            subscribe_back(shared, nodes, &up).await?;
            report(shared, nodes);
        }
        if repairing.is_none() && std::time::Instant::now() >= next_repair {
            repairing = nodes.repair(shared, pushes).map(Repairing::start);
        }
        if std::time::Instant::now() >= next_health {
            // A sign of life from every connection: a Redis that stopped answering (stopped, or cut off
            // without a reset) is noticed within a check's interval and `timeout`, and connected to again,
            // rather than trusted while nothing arrives. Checked on every pass, so a busy publisher cannot
            // put it off.
            all(nodes.live().map(|conn| {
                    let mut conn = conn.clone();
                    async move {
                        within(timeout, redis::cmd("PING").query_async::<redis::Value>(&mut conn)).await.map(drop)
                    }
                }))
                .await?;
            next_health = std::time::Instant::now() + health_every(timeout);
        }
        // One pipeline per node per pass, so a publisher that never pauses cannot keep subscription changes
        // waiting.
        let published = publish(shared, nodes, pushes).await?;
        let counted = super::limits::sync(shared, nodes, pushes).await?;
        if !published && !counted {
            let next = if nodes.missing().is_some() && repairing.is_none() {
                next_health.min(next_repair)
            } else {
                next_health
            };
            tokio::select! {
                () = shared.wake.notified() => {}
                () = tokio::time::sleep_until(next.into()) => {}
                () = Repairing::finished(&mut repairing) => {}
            }
        }
        todo = shared.state.locked().subscriptions.take_changes();
    }
}

/// What the counters say of the connections: all up (and every topic subscribed: called after reconciling), how
/// many, and why some are not.
fn report(shared: &RelayShared, nodes: &Nodes) {
    let missing = nodes.missing();
    shared.connected.store(missing.is_none(), Ordering::Release);
    super::limits::reachable(shared, true);
    let mut state = shared.state.locked();
    state.nodes = nodes.live().count();
    state.last_error = missing;
}

/// Subscribes the wanted topics of the primaries at `up` (back after a repair), at once.
async fn subscribe_back(shared: &RelayShared, nodes: &Nodes, up: &[usize]) -> Result<(), String> {
    if up.is_empty() {
        return Ok(());
    }
    let owned_by_up = |t: &str| nodes.owner(&shared.options.channel(t)).is_some_and(|o| up.contains(&o));
    let theirs = shared.state.locked().subscriptions.wanted_where(owned_by_up);
    reconcile(shared, nodes, theirs).await
}

/// A repair running beside the link; aborted if the link ends first.
struct Repairing {
    task: tokio::task::JoinHandle<nodes::Repaired>,
    /// Its outcome, once it has finished (taken by [`done`](Self::done)).
    outcome: Option<nodes::Repaired>,
}

impl Repairing {
    fn start(job: impl Future<Output = nodes::Repaired> + Send + 'static) -> Self {
        Self { task: tokio::spawn(job), outcome: None }
    }

    /// Ready once the outcome is in.
    fn poll_outcome(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.outcome.is_none() {
            let Poll::Ready(joined) = std::pin::Pin::new(&mut self.task).poll(cx) else { return Poll::Pending };
            self.outcome = Some(joined.unwrap_or_else(|e| Err(format!("the repair of the link failed: {e}"))));
        }
        Poll::Ready(())
    }

    /// Its outcome, if it has finished (without waiting).
    fn done(&mut self) -> Option<nodes::Repaired> {
        let _ = self.poll_outcome(&mut std::task::Context::from_waker(std::task::Waker::noop()));
        self.outcome.take()
    }

    /// Resolves when the repair in `slot` has finished; never if there is none.
    async fn finished(slot: &mut Option<Self>) {
        match slot {
            Some(repair) => std::future::poll_fn(|cx| repair.poll_outcome(cx)).await,
            None => std::future::pending().await,
        }
    }
}

impl Drop for Repairing {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Makes Redis's subscriptions match what is wanted, for the topics in `topics` (each checked now against the
/// ledger, so a topic subscribed and unsubscribed meanwhile costs nothing).
async fn reconcile(shared: &RelayShared, nodes: &nodes::Nodes, topics: Vec<Box<str>>) -> Result<(), String> {
    if topics.is_empty() {
        return Ok(());
    }
    let (add, remove) = shared.state.locked().subscriptions.diff(topics);
    let timeout = shared.options.timeout;
    for (command, topics) in [(nodes.mode.subscribe(), &add), (nodes.mode.unsubscribe(), &remove)] {
        // One pipeline per node and `BATCH` channels, one channel per command: each command has exactly one
        // reply (its confirmation, or Redis's refusal), so the replies stay in step whatever Redis says. A topic
        // whose owner is down (a cluster's primary) waits: it is subscribed when the primary is back.
        let mut by_node: HashMap<usize, Vec<Vec<u8>>> = HashMap::new();
        for topic in topics.iter() {
            let channel = shared.options.channel(topic);
            if let Some(owner) = nodes.owner(&channel) {
                by_node.entry(owner).or_default().push(channel);
            }
        }
        let mut commands = Vec::new();
        for (node, channels) in by_node {
            for chunk in channels.chunks(BATCH) {
                if command == nodes.mode.unsubscribe() {
                    // Their confirmations are expected (any other unsubscribe is Redis's own doing).
                    shared.state.locked().subscriptions.leave(chunk.iter().cloned());
                }
                let mut pipe = redis::pipe();
                for channel in chunk {
                    pipe.cmd(command).arg(channel);
                }
                commands.push((node, pipe, chunk.len()));
            }
        }
        while !commands.is_empty() {
            let wave: Vec<_> = commands.drain(..commands.len().min(WAVE)).collect();
            all(wave.into_iter().map(|(node, pipe, n)| {
                let mut conn = nodes.conn(node);
                async move { accepted(within(timeout, conn.req_packed_commands(&pipe, 0, n)).await?) }
            }))
            .await?;
        }
    }
    let served = |t: &str| nodes.owner(&shared.options.channel(t)).is_some();
    shared.state.locked().subscriptions.confirm(add, &remove, served);
    Ok(())
}

/// Sends the oldest queued publishes, up to `BATCH`, each to the node that owns its channel (one pipeline per
/// node, in order: a topic's messages all go to one node); whether more wait. A pipeline that fails is counted
/// dropped (Redis may have taken part of it: sending it again could deliver twice).
async fn publish(shared: &RelayShared, nodes: &Nodes, pushes: &Pushes) -> Result<bool, String> {
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
    // One pipeline per connection; a message whose owner is down (a cluster's primary) is dropped.
    let mut pipes: HashMap<usize, (redis::Pipeline, u64)> = HashMap::new();
    for (channel, envelope) in &batch {
        let Some(owner) = nodes.owner(channel) else {
            shared.dropped.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        let (pipe, n) = pipes.entry(owner).or_insert_with(|| (redis::pipe(), 0));
        pipe.cmd(nodes.mode.publish()).arg(channel).arg(envelope).ignore();
        *n += 1;
    }
    let timeout = shared.options.timeout;
    all(pipes.into_iter().map(|(owner, (pipe, n))| {
        let mut conn = nodes.conn(owner);
        async move {
            match within(timeout, pipe.query_async::<()>(&mut conn)).await {
                // Redis ended a subscription meanwhile: its notice may have been taken for one of these replies,
                // so whether they all arrived is not known. At most once: dropped.
                Ok(()) if pushes.lost.locked().is_some() => {
                    shared.dropped.fetch_add(n, Ordering::Relaxed);
                    Err(LOST.into())
                }
                Ok(()) => {
                    shared.published.fetch_add(n, Ordering::Relaxed);
                    Ok(())
                }
                Err(why) => {
                    shared.dropped.fetch_add(n, Ordering::Relaxed);
                    Err(why)
                }
            }
        }
    }))
    .await?;
    Ok(more)
}
