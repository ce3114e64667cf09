//! Writing what the handler side hands back, as the binding does: answers, streamed heads, chunks and reads.

use bytes::Bytes;
use gust_core::wire::{
    self,
    answer::{Text, ABORT, BINARY_BODY, END, STREAM as STREAM_FLAG},
};
use gust_core::AnswerBatch;

/// A read record: the handler wants the next bytes of request `id`'s body (or, with `stop`, none).
pub fn read_batch(id: u32, stop: bool) -> AnswerBatch {
    let meta = [6 | u32::from(wire::VERSION) << 8 | u32::from(stop) << 16, id, 0];
    AnswerBatch::decode(&meta, Text::Ascii(Bytes::new()), vec![]).unwrap()
}

/// A streamed answer's head and first bytes, as the binding hands them over.
pub fn stream_head(id: u32, headers: &[(&str, &str)], first: Bytes) -> AnswerBatch {
    let mut meta = vec![
        2 | u32::from(wire::VERSION) << 8 | u32::from(BINARY_BODY | STREAM_FLAG) << 16,
        id,
        200,
        headers.len() as u32,
    ];
    meta.push(first.len() as u32);
    let mut text = Vec::new();
    for (name, value) in headers {
        meta.extend([name.len() as u32, value.len() as u32]);
        text.extend_from_slice(name.as_bytes());
        text.extend_from_slice(value.as_bytes());
    }
    AnswerBatch::decode(&meta, Text::Ascii(text.into()), vec![first]).unwrap()
}

/// One chunk record.
pub fn chunk_batch(id: u32, data: Bytes, end: bool, abort: bool) -> AnswerBatch {
    let flags = BINARY_BODY | (if end { END } else { 0 }) | (if abort { ABORT } else { 0 });
    let meta = [5 | u32::from(wire::VERSION) << 8 | u32::from(flags) << 16, id, data.len() as u32];
    AnswerBatch::decode(&meta, Text::Ascii(Bytes::new()), vec![data]).unwrap()
}

/// A test answer: `(id, status, headers, body)`.
type TestAnswer<'a> = (u32, u32, Vec<(&'a str, &'a str)>, Bytes);

/// Answers as the binding hands them over: every body as bytes, headers as ASCII text.
pub fn answer_batch(answers: &[TestAnswer<'_>]) -> AnswerBatch {
    let (mut meta, mut text, mut binary) = (Vec::new(), Vec::new(), Vec::new());
    for (id, status, headers, body) in answers {
        meta.extend([2 | u32::from(wire::VERSION) << 8 | u32::from(BINARY_BODY) << 16, *id, *status]);
        meta.extend([headers.len() as u32, body.len() as u32]);
        for (name, value) in headers {
            meta.extend([name.len() as u32, value.len() as u32]);
            text.extend_from_slice(name.as_bytes());
            text.extend_from_slice(value.as_bytes());
        }
        binary.push(body.clone());
    }
    AnswerBatch::decode(&meta, Text::Ascii(text.into()), binary).unwrap()
}
