//! Answers coming back from one JavaScript thread (lane), applied to the requests waiting for them: each answer
//! becomes the [`Reply`] its request acts on (a response, with a stream opened for a streamed head; a file to
//! serve; a handshake to accept), chunks feed streams, reads let request bodies on. Each I/O thread concerned is
//! woken once per batch (see [`Completions`]).

use std::sync::Arc;

use super::completions::{Completions, Delivery};
use super::lanes::Lanes;
use crate::bodies::stream::{Streams, Written};
use crate::bodies::upload::Uploads;
use crate::responses::response::{self, messages, InvalidResponse};
use crate::values::ids::shard_of;
use crate::wire::answer::{FileTarget, Record, Reply};

/// Sends one lane's answers back to waiting requests. Cheap to clone; usable from any thread.
#[derive(Clone)]
pub struct Responder {
    shards: Arc<[Shard]>,
    /// The lane answering through it: it owns what follows an answer (a stream, a WebSocket).
    lanes: Arc<Lanes>,
    lane: u8,
}

/// What one I/O thread holds for answers: its waiting requests, its streamed responses and request bodies.
#[derive(Debug, Clone)]
pub(crate) struct Shard {
    pub(crate) completions: Arc<Completions>,
    pub(crate) streams: Arc<Streams>,
    pub(crate) uploads: Arc<Uploads>,
}

/// What became of a batch of answers, for the JavaScript side to act on.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Answers replaced by a 500, with the reason, so the caller can log it where the developer will see it.
    pub invalid: Vec<(u32, InvalidResponse)>,
    /// Streams whose queue went over the high-water mark: their producers should wait for a drain event.
    pub full: Vec<u32>,
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Responder").field("lane", &self.lane).finish_non_exhaustive()
    }
}

impl Responder {
    pub(crate) fn new(shards: Arc<[Shard]>, lanes: Arc<Lanes>, lane: u8) -> Self {
        Self { shards, lanes, lane }
    }

    /// Sends a batch of records (answers, streamed heads, chunks) to their requests, waking each I/O thread
    /// concerned once. Answers to requests that timed out or whose client left are dropped silently, as are
    /// chunks of streams that are gone (their producers get a cancel event).
    pub fn respond<'a>(&self, records: impl IntoIterator<Item = Record<'a>>) -> Outcome {
        self.respond_pausing(records, true)
    }

    /// As [`Responder::respond`], for an engine that writes what the batch woke before its call returns (the
    /// one-thread engine): no producer is paused here, and `full` lists the streams that went over their
    /// high-water mark; once the writes are done, [`Responder::pause_full`] keeps (and pauses) only those still
    /// over it.
    pub fn respond_before_writing<'a>(&self, records: impl IntoIterator<Item = Record<'a>>) -> Outcome {
        self.respond_pausing(records, false)
    }

    /// After [`Responder::respond_before_writing`] and the writes it woke: pauses the streams of `outcome.full`
    /// still over their high-water mark, and drops the others from it.
    pub fn pause_full(&self, outcome: &mut Outcome) {
        outcome.full.retain(|&id| self.shards.get(shard_of(id)).is_some_and(|shard| shard.streams.pause_if_full(id)));
    }

    fn respond_pausing<'a>(&self, records: impl IntoIterator<Item = Record<'a>>, pause: bool) -> Outcome {
        let mut outcome = Outcome::default();
        let records = records.into_iter();
        // With one I/O thread (the usual case) everything goes to one queue; otherwise one per thread.
        let mut deliveries: Vec<Vec<Delivery>> = vec![Vec::with_capacity(records.size_hint().0)];
        deliveries.resize_with(self.shards.len(), Vec::new);
        for record in records {
            let id = match &record {
                Record::Answer(a) => a.id,
                Record::Chunk(c) => c.id,
                Record::Read { id, .. } => *id,
            };
            // An id no shard gave is one whose request is gone, as an unknown id is: its answer is dropped.
            let Some(shard) = self.shards.get(shard_of(id)) else { continue };
            let index = shard_of(id);
            let deliveries = &mut deliveries[index];
            match record {
                Record::Answer(a) => {
                    // A streamed head wins over the other flags, then an upgrade, then a file.
                    let reply = if a.stream {
                        let first = a.body;
                        response::streamed_response(a.status, a.headers, |length| {
                            let events = self.lanes.batcher(self.lane, index);
                            let body = shard.streams.open(a.id, self.lane, events, length);
                            if !first.is_empty() {
                                shard.streams.append(a.id, first, false, false, pause);
                            }
                            body
                        })
                        .map(Reply::Send)
                    } else if a.upgrade {
                        // The 101 itself is built by the request's task, which holds the handshake; status and
                        // body are ignored.
                        response::validate(200, a.headers, false)
                            .map(|(_, headers, _)| Reply::Upgrade { headers, lane: self.lane })
                    } else if a.file {
                        response::validate(a.status, a.headers, false).and_then(|(_, headers, _)| {
                            Ok(Reply::File { headers, target: FileTarget::parse(&a.body)? })
                        })
                    } else {
                        response::handler_response(a.status, a.headers, a.body).map(Reply::Send)
                    };
                    let reply = reply.unwrap_or_else(|err| {
                        outcome.invalid.push((a.id, err));
                        response::text(http::StatusCode::INTERNAL_SERVER_ERROR, messages::INTERNAL).into()
                    });
                    deliveries.push(Delivery::Answer(a.id, reply));
                }
                Record::Chunk(c) => {
                    let (written, waker) = shard.streams.append(c.id, c.data, c.end, c.abort, pause);
                    if written == Written::Full {
                        outcome.full.push(c.id);
                    }
                    deliveries.extend(waker.map(Delivery::Wake));
                }
                Record::Read { id, stop } => deliveries.extend(shard.uploads.read(id, stop).map(Delivery::Wake)),
            }
        }
        for (shard, deliveries) in self.shards.iter().zip(deliveries) {
            shard.completions.post(deliveries);
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crossing::handler::{Closed, Handler, RequestBatch};

    struct Nobody;

    impl Handler for Nobody {
        fn handle(&self, _: RequestBatch) -> Result<(), Closed> {
            Err(Closed)
        }
    }

    #[tokio::test]
    async fn answers_should_reach_their_request_and_invalid_ones_become_500() {
        use crate::wire::answer::tests::{encode, read, TestBody};
        use crate::wire::answer::AnswerBatch;

        let c = Arc::new(Completions::default());
        let delivery = c.clone();
        tokio::spawn(async move { delivery.deliver(None).await });
        let (good, _, rx_good) = c.register(8, |_, _| 0).unwrap();
        let (bad, _, rx_bad) = c.register(8, |_, _| 0).unwrap();
        let shard = Shard { completions: c.clone(), streams: Arc::default(), uploads: Arc::default() };
        let lanes = Arc::new(Lanes::new(Arc::new(Nobody), std::slice::from_ref(&c)));
        let responder = Responder::new(Arc::new([shard]), lanes, 0);
        let (meta, text, binary) = encode(&[
            (good, 201, vec![], TestBody::Text("x")),
            (998, 4_294_967_295, vec![], TestBody::Text("")),
            (bad, 200, vec![("x", "a\r\nb")], TestBody::Text("")),
            (999, 200, vec![], TestBody::Text("")),
        ]);
        let batch = AnswerBatch::decode(&meta, read(text), binary).unwrap();
        let outcome = responder.respond(batch.records());
        assert_eq!(outcome.invalid.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [998, bad]);
        assert_eq!(status(rx_good.await.unwrap()), 201);
        assert_eq!(status(rx_bad.await.unwrap()), 500);
    }

    fn status(reply: Reply) -> u16 {
        match reply {
            Reply::Send(res) => res.status().as_u16(),
            other => panic!("a response to send, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn file_and_upgrade_answers_should_arrive_typed() {
        use crate::wire::answer::tests::{encode, read, TestBody};
        use crate::wire::answer::{AnswerBatch, FILE, UPGRADE};
        use crate::wire::{tag, Kind};

        let c = Arc::new(Completions::default());
        let delivery = c.clone();
        tokio::spawn(async move { delivery.deliver(None).await });
        let (file, _, rx_file) = c.register(8, |_, _| 0).unwrap();
        let (bad_file, _, rx_bad_file) = c.register(8, |_, _| 0).unwrap();
        let (upgrade, _, rx_upgrade) = c.register(8, |_, _| 0).unwrap();
        let shard = Shard { completions: c.clone(), streams: Arc::default(), uploads: Arc::default() };
        let lanes = Arc::new(Lanes::new(Arc::new(Nobody), std::slice::from_ref(&c)));
        let responder = Responder::new(Arc::new([shard]), lanes, 0);
        let (mut meta, text, binary) = encode(&[
            (file, 200, vec![("cache-control", "no-store")], TestBody::Text("mount:2:/a%2Fb.txt")),
            (bad_file, 200, vec![], TestBody::Text("/etc/passwd")),
            (upgrade, 0, vec![("sec-websocket-protocol", "chat")], TestBody::Text("")),
        ]);
        // Each answer here has one header or none: the heads start at words 0, 7 and 12.
        meta[0] = tag(Kind::Answer, FILE);
        meta[7] = tag(Kind::Answer, FILE);
        meta[12] = tag(Kind::Answer, UPGRADE);
        let batch = AnswerBatch::decode(&meta, read(text), binary).unwrap();
        let outcome = responder.respond(batch.records());
        match rx_file.await.unwrap() {
            Reply::File { headers, target } => {
                assert_eq!(headers["cache-control"], "no-store");
                assert_eq!(target, FileTarget::Mount { index: 2, tail: "/a%2Fb.txt".into() });
            }
            other => panic!("a file, got {other:?}"),
        }
        assert_eq!(status(rx_bad_file.await.unwrap()), 500);
        let [(id, why)] = &outcome.invalid[..] else { panic!("one invalid answer: {:?}", outcome.invalid) };
        assert_eq!(*id, bad_file);
        assert!(why.to_string().contains("\"/etc/passwd\""), "{why}");
        match rx_upgrade.await.unwrap() {
            Reply::Upgrade { headers, lane } => {
                assert_eq!(headers["sec-websocket-protocol"], "chat");
                assert_eq!(lane, 0);
            }
            other => panic!("an upgrade, got {other:?}"),
        }
    }
}
