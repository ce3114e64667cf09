//! The answer record: how a batch of handler responses comes back from JavaScript in one call.
//!
//! A batch is three values: `meta`, a `u32` array; `text`, one UTF-16 string holding every header name and
//! value of the batch back to back; and one body per answer, in order (a string or bytes; the binding turns
//! each into [`Bytes`]). Per answer, `meta` holds:
//!
//! | word | meaning |
//! |-----|---------|
//! | 0 | tag: kind [`Kind::Answer`], [`VERSION`](super::VERSION), no flags yet |
//! | 1 | the request id |
//! | 2 | status |
//! | 3 | header count `n` |
//! | 4 … 3 + 2n | per header, the name's then the value's length in UTF-16 code units |
//!
//! Lengths count UTF-16 units, so no character, however exotic, can shift a boundary; what is not valid HTTP is
//! refused per answer by the engine (a 500 for that request alone).

use bytes::Bytes;

use super::{untag, Kind, VERSION};

/// Words before an answer's header lengths.
pub const HEAD_WORDS: usize = 4;

/// The batch could not be read: a bug on the JavaScript side, never something a client can cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedAnswers(pub(crate) String);

impl std::fmt::Display for MalformedAnswers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed answer batch: {}", self.0)
    }
}

impl std::error::Error for MalformedAnswers {}

/// One handler answer, as decoded from a batch.
#[derive(Debug)]
pub struct Answer<'a> {
    /// The id the request carried.
    pub id: u32,
    /// HTTP status code as sent; the engine refuses one outside 200–599.
    pub status: u32,
    /// Header names and values, repeated names allowed.
    pub headers: Vec<(&'a str, &'a str)>,
    /// The whole body.
    pub body: Bytes,
}

#[derive(Debug)]
struct Head {
    id: u32,
    status: u32,
    header_count: usize,
}

/// A decoded batch: the answers' heads, and their header texts re-encoded as UTF-8 (valid headers are ASCII, so
/// this is one byte per code unit; anything else is kept as text, for the engine to refuse by name).
#[derive(Debug)]
pub struct AnswerBatch {
    heads: Vec<Head>,
    text: String,
    /// `(name end, value end)` per header; each piece starts where the previous one ended.
    ends: Vec<(usize, usize)>,
}

impl AnswerBatch {
    /// Reads `meta` and `text`, walking each once. Cost: one pass over the header text; no allocation per answer
    /// beyond the head list.
    pub fn decode(meta: &[u32], text: &[u16]) -> Result<Self, MalformedAnswers> {
        let mut batch = Self { heads: Vec::new(), text: String::with_capacity(text.len()), ends: Vec::new() };
        let (mut at, mut unit) = (0, 0);
        while at < meta.len() {
            let head = meta.get(at..at + HEAD_WORDS).ok_or_else(|| malformed("a truncated answer head"))?;
            let (kind, version, _flags) = untag(head[0]);
            if version != VERSION {
                return Err(malformed(&format!("version {version}, expected {VERSION}")));
            }
            if kind != Kind::Answer as u8 {
                return Err(malformed(&format!("record kind {kind} is not an answer")));
            }
            let header_count = head[3] as usize;
            let lengths = meta
                .get(at + HEAD_WORDS..at + HEAD_WORDS + 2 * header_count)
                .ok_or_else(|| malformed("header lengths past the end of meta"))?;
            for pair in lengths.chunks_exact(2) {
                let mut end = [0; 2];
                for (slot, len) in end.iter_mut().zip(pair) {
                    let piece =
                        text.get(unit..unit + *len as usize).ok_or_else(|| malformed("header text too short"))?;
                    unit += piece.len();
                    if piece.iter().all(|&u| u < 0x80) {
                        batch.text.extend(piece.iter().map(|&u| char::from(u as u8)));
                    } else {
                        batch.text.extend(char::decode_utf16(piece.iter().copied()).map(|c| c.unwrap_or('\u{fffd}')));
                    }
                    *slot = batch.text.len();
                }
                batch.ends.push((end[0], end[1]));
            }
            batch.heads.push(Head { id: head[1], status: head[2], header_count });
            at += HEAD_WORDS + 2 * header_count;
        }
        if unit != text.len() {
            return Err(malformed("header text longer than its lengths"));
        }
        Ok(batch)
    }

    /// How many answers the batch holds.
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    /// Whether the batch holds no answer.
    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// The request ids, in order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.heads.iter().map(|h| h.id)
    }

    /// Pairs each head with its body. `None` when the counts differ: pairing them anyway could send one
    /// request's body to another.
    pub fn answers(&self, bodies: Vec<Bytes>) -> Option<impl Iterator<Item = Answer<'_>>> {
        if bodies.len() != self.heads.len() {
            return None;
        }
        let mut start = 0;
        let mut pieces = self.ends.iter().map(move |&(name_end, value_end)| {
            let piece = (&self.text[start..name_end], &self.text[name_end..value_end]);
            start = value_end;
            piece
        });
        Some(self.heads.iter().zip(bodies).map(move |(head, body)| Answer {
            id: head.id,
            status: head.status,
            headers: pieces.by_ref().take(head.header_count).collect(),
            body,
        }))
    }
}

fn malformed(what: &str) -> MalformedAnswers {
    MalformedAnswers(what.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tag;

    /// The answers of `golden/answers.json`: `(id, status, headers)`.
    fn golden() -> Vec<(u32, u32, Vec<(&'static str, &'static str)>)> {
        vec![
            (5, 201, vec![("content-type", "text/plain; charset=utf-8"), ("set-cookie", "a=1"), ("set-cookie", "b=2")]),
            (6, 204, vec![]),
            (7, 200, vec![("x-emoji-\u{1f600}", "caf\u{e9}"), ("x-crlf", "a\r\nb")]),
        ]
    }

    /// What the TypeScript encoder must produce for [`golden`], written in the documented layout.
    fn encode(answers: &[(u32, u32, Vec<(&str, &str)>)]) -> (Vec<u32>, Vec<u16>) {
        let (mut meta, mut text) = (Vec::new(), Vec::new());
        for (id, status, headers) in answers {
            meta.extend([tag(Kind::Answer, 0), *id, *status, headers.len() as u32]);
            for (name, value) in headers {
                for piece in [name, value] {
                    let units: Vec<u16> = piece.encode_utf16().collect();
                    meta.push(units.len() as u32);
                    text.extend(units);
                }
            }
        }
        (meta, text)
    }

    #[test]
    fn a_batch_should_decode_to_its_answers_in_order() {
        let (meta, text) = encode(&golden());
        let batch = AnswerBatch::decode(&meta, &text).unwrap();
        let bodies = vec![Bytes::from_static(b"one"), Bytes::new(), Bytes::from_static(b"\x00")];
        let answers: Vec<Answer<'_>> = batch.answers(bodies).unwrap().collect();
        for (answer, (id, status, headers)) in answers.iter().zip(golden()) {
            assert_eq!((answer.id, answer.status, &answer.headers), (id, status, &headers));
        }
        assert_eq!(answers[0].body, "one");
    }

    #[test]
    fn a_body_count_that_differs_should_pair_nothing() {
        let (meta, text) = encode(&golden());
        let batch = AnswerBatch::decode(&meta, &text).unwrap();
        assert!(batch.answers(vec![Bytes::new(); 2]).is_none());
        assert!(batch.answers(vec![Bytes::new(); 4]).is_none());
        assert_eq!(batch.ids().collect::<Vec<_>>(), [5, 6, 7]);
    }

    #[test]
    fn malformed_batches_should_be_refused_with_the_reason() {
        let (meta, text) = encode(&golden());
        assert!(AnswerBatch::decode(&meta[..meta.len() - 1], &text).is_err());
        assert!(AnswerBatch::decode(&meta, &text[..text.len() - 1]).is_err());
        let mut longer = text.clone();
        longer.push(b'x'.into());
        assert!(AnswerBatch::decode(&meta, &longer).is_err());
        let mut other_version = meta.clone();
        other_version[0] = Kind::Answer as u32 | 9 << 8;
        assert!(AnswerBatch::decode(&other_version, &text).unwrap_err().to_string().contains("version 9"));
        let mut request = meta;
        request[0] = tag(Kind::Request, 0);
        assert!(AnswerBatch::decode(&request, &text).is_err());
    }

    #[test]
    fn the_golden_answers_should_match_the_shared_fixture() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/wire/golden/answers.json");
        let (meta, text) = encode(&golden());
        let mut json = String::from("{\n  \"answers\": [\n");
        for (i, (id, status, headers)) in golden().iter().enumerate() {
            let pairs: Vec<String> = headers.iter().map(|(n, v)| format!("{}, {}", js(n), js(v))).collect();
            let comma = if i + 1 < golden().len() { "," } else { "" };
            json +=
                &format!("    {{ \"id\": {id}, \"status\": {status}, \"headers\": [{}] }}{comma}\n", pairs.join(", "));
        }
        let meta: Vec<String> = meta.iter().map(u32::to_string).collect();
        json += &format!(
            "  ],\n  \"meta\": [{}],\n  \"text\": {}\n}}\n",
            meta.join(", "),
            js(&String::from_utf16(&text).unwrap())
        );
        if std::env::var_os("GUST_BLESS").is_some() {
            std::fs::write(path, &json).unwrap();
        }
        let fixture = std::fs::read_to_string(path).expect("golden/answers.json (GUST_BLESS=1 cargo test writes it)");
        assert_eq!(fixture, json, "the answer format changed: update answer.ts and the fixture together");
    }

    /// A JSON string literal.
    fn js(s: &str) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out += "\\\"",
                '\\' => out += "\\\\",
                c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        out += &format!("\\u{u:04x}");
                    }
                }
                c => out.push(c),
            }
        }
        out + "\""
    }
}
