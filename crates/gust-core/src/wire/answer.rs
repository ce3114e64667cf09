//! The answer record: how a batch of handler responses comes back from JavaScript in one call.
//!
//! A batch is three values: `meta`, a `u32` array; `text`, one string holding every header name and value and
//! every text body of the batch back to back, in answer order; and `binary`, the byte bodies in answer order.
//! Per answer, `meta` holds:
//!
//! | word | meaning |
//! |-----|---------|
//! | 0 | tag: kind [`Kind::Answer`], [`VERSION`](super::VERSION), flags ([`BINARY_BODY`]) |
//! | 1 | the request id |
//! | 2 | status |
//! | 3 | header count `n` |
//! | 4 | body length: UTF-16 code units of text following the headers, or bytes of the next binary body |
//! | 5 … 4 + 2n | per header, the name's then the value's length in UTF-16 code units |
//!
//! With [`STREAM`] set, the answer is a head and the first bytes of its body; the rest follows in chunk records
//! (in this batch or later ones), each three words in `meta` with its bytes taken from `text` or `binary` the
//! same way:
//!
//! | word | meaning |
//! |-----|---------|
//! | 0 | tag: kind [`Kind::Chunk`], [`VERSION`](super::VERSION), flags ([`BINARY_BODY`], [`END`], [`ABORT`]) |
//! | 1 | the request id |
//! | 2 | length: UTF-16 code units of text, or bytes of the next binary body |
//!
//! A handler reading a streamed request body asks for its next bytes with a read record, three words in `meta`
//! and nothing in `text` or `binary`:
//!
//! | word | meaning |
//! |-----|---------|
//! | 0 | tag: kind [`Kind::Read`], [`VERSION`](super::VERSION), flags ([`STOP`]) |
//! | 1 | the request id |
//! | 2 | 0 (reserved) |
//!
//! Lengths count UTF-16 units, so no character, however exotic, can shift a boundary; what is not valid HTTP is
//! refused per answer by the engine (a 500 for that request alone).
//!
//! Cost: the binding reads `text` once, as UTF-8 straight into one buffer when it is all ASCII (the common
//! case, where units and bytes coincide); every header value and text body is then a slice of that buffer, so a
//! batch costs one allocation for its text however many answers it holds. The buffer is freed when the last
//! answer of its batch has been sent.

use bytes::{Bytes, BytesMut};

use super::{untag, Kind, VERSION};

/// Words before an answer's header lengths.
pub const HEAD_WORDS: usize = 5;
/// Words of a chunk record.
pub const CHUNK_WORDS: usize = 3;
/// Answer and chunk flag: the bytes are the next entry of `binary`, not text.
pub const BINARY_BODY: u16 = 1;
/// Answer flag: the body streams; chunk records with the same id carry the rest of it.
pub const STREAM: u16 = 2;
/// Answer flag: the body is not sent; it names a file the engine serves, with the request's conditional and
/// range headers applied and the answer's headers added: `path:<absolute path>`, or `mount:<index>:<path below
/// the mount>` for a directory the route table holds (see [`crate::files::FileAnswer`]).
pub const FILE: u16 = 4;
/// Answer flag: the handler accepts a WebSocket handshake: the engine answers 101 with these headers (a chosen
/// `Sec-WebSocket-Protocol`, cookies) and the connection becomes a socket. Status and body are ignored.
pub const UPGRADE: u16 = 8;
/// Chunk flag: these are the body's last bytes.
pub const END: u16 = 2;
/// Chunk flag: the body failed after its head was sent; the response is cut off (its connection closes).
pub const ABORT: u16 = 4;

/// Read flag: the handler wants no more of the body; the engine stops reading it.
pub const STOP: u16 = 1;
/// Words of a read record.
pub const READ_WORDS: usize = 3;

/// The batch could not be read: a bug on the JavaScript side, never something a client can cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedAnswers(pub(crate) String);

impl std::fmt::Display for MalformedAnswers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed answer batch: {}", self.0)
    }
}

impl std::error::Error for MalformedAnswers {}

/// A batch's text, as the binding could read it.
#[derive(Debug)]
pub enum Text {
    /// Every code unit was ASCII, read as one byte each: unit offsets are byte offsets.
    Ascii(Bytes),
    /// Anything else, as UTF-16 code units; each piece is re-encoded as UTF-8 on its own.
    Utf16(Vec<u16>),
}

/// One record of a batch, in the order the JavaScript side wrote them.
#[derive(Debug)]
pub enum Record<'a> {
    /// A response's head, with its whole body or the first bytes of a stream.
    Answer(Answer<'a>),
    /// More of a streamed body.
    Chunk(Chunk),
    /// The handler wants the next bytes of a streamed request body, or none any more.
    Read {
        /// The id the request carried.
        id: u32,
        /// No more is wanted: the engine stops reading the body.
        stop: bool,
    },
}

/// One handler answer, as decoded from a batch.
#[derive(Debug)]
pub struct Answer<'a> {
    /// The id the request carried.
    pub id: u32,
    /// HTTP status code as sent; the engine refuses one outside 200–599.
    pub status: u32,
    /// Header names and values, repeated names allowed.
    pub headers: Headers<'a>,
    /// The whole body, or the first bytes of a streamed one.
    pub body: Bytes,
    /// Whether the body streams: [`Chunk`] records with this id carry the rest.
    pub stream: bool,
    /// Whether the body names a file to serve ([`FILE`]).
    pub file: bool,
    /// Whether the answer accepts a WebSocket handshake ([`UPGRADE`]).
    pub upgrade: bool,
}

/// Bytes of a streamed body.
#[derive(Debug)]
pub struct Chunk {
    /// The id the request carried.
    pub id: u32,
    /// The bytes; may be empty (with `end` or `abort`).
    pub data: Bytes,
    /// These are the last bytes.
    pub end: bool,
    /// The body failed: cut the response off.
    pub abort: bool,
}

#[derive(Debug)]
struct Head {
    id: u32,
    /// [`Kind::Answer`] or [`Kind::Chunk`], as its code.
    kind: u8,
    flags: u16,
    status: u32,
    header_count: usize,
    /// Index in `ends` of the answer's first piece; the byte where it starts.
    first_piece: usize,
    start: usize,
    /// Index in `binary`, for a byte body.
    binary: Option<usize>,
}

/// A decoded batch: the answers' heads, their text as UTF-8 in one buffer, and the byte bodies.
#[derive(Debug)]
pub struct AnswerBatch {
    heads: Vec<Head>,
    text: Bytes,
    /// The byte end of each piece (header name, header value, text body) in `text`; each starts where the
    /// previous one ended.
    ends: Vec<usize>,
    binary: Vec<Bytes>,
}

impl AnswerBatch {
    /// Reads a batch, walking `meta` and the text once. Cost: no allocation per answer beyond the head list,
    /// unless the text is not ASCII (then one re-encoding pass).
    pub fn decode(meta: &[u32], text: Text, binary: Vec<Bytes>) -> Result<Self, MalformedAnswers> {
        let (units, mut utf8) = match &text {
            Text::Ascii(bytes) => (bytes.len(), None),
            Text::Utf16(units) => (units.len(), Some(BytesMut::with_capacity(units.len()))),
        };
        let mut heads = Vec::new();
        let mut ends = Vec::new();
        let (mut at, mut unit, mut byte, mut binaries) = (0, 0, 0, 0);
        while at < meta.len() {
            let (kind, version, flags) = untag(meta[at]);
            if version != VERSION {
                return Err(malformed(&format!("version {version}, expected {VERSION}")));
            }
            if kind == Kind::Read as u8 {
                let record = meta.get(at..at + READ_WORDS).ok_or_else(|| malformed("a truncated read record"))?;
                heads.push(Head {
                    id: record[1],
                    kind,
                    flags,
                    status: 0,
                    header_count: 0,
                    first_piece: ends.len(),
                    start: byte,
                    binary: None,
                });
                at += READ_WORDS;
                continue;
            }
            // (words before the header lengths, header count, status, body length)
            let (words, header_count, status, body_len) = if kind == Kind::Answer as u8 {
                let head = meta.get(at..at + HEAD_WORDS).ok_or_else(|| malformed("a truncated answer head"))?;
                (HEAD_WORDS, head[3] as usize, head[2], head[4])
            } else if kind == Kind::Chunk as u8 {
                let head = meta.get(at..at + CHUNK_WORDS).ok_or_else(|| malformed("a truncated chunk record"))?;
                (CHUNK_WORDS, 0, 0, head[2])
            } else {
                return Err(malformed(&format!("record kind {kind} is not an answer, a chunk or a read")));
            };
            let lengths = meta
                .get(at + words..at + words + 2 * header_count)
                .ok_or_else(|| malformed("header lengths past the end of meta"))?;
            let binary_index = (flags & BINARY_BODY != 0).then(|| {
                binaries += 1;
                binaries - 1
            });
            let body_piece = binary_index.is_none().then_some(&body_len);
            heads.push(Head {
                id: meta[at + 1],
                kind,
                flags,
                status,
                header_count,
                first_piece: ends.len(),
                start: byte,
                binary: binary_index,
            });
            for len in lengths.iter().chain(body_piece) {
                let len = *len as usize;
                if unit + len > units {
                    return Err(malformed("text shorter than its lengths"));
                }
                byte = match (&text, utf8.as_mut()) {
                    (Text::Utf16(all), Some(out)) => {
                        encode_utf8(&all[unit..unit + len], out);
                        out.len()
                    }
                    _ => byte + len,
                };
                unit += len;
                ends.push(byte);
            }
            if let Some(index) = binary_index {
                let body = binary.get(index).ok_or_else(|| malformed("fewer byte bodies than answers flagged so"))?;
                if body.len() != body_len as usize {
                    return Err(malformed("a byte body's length differs from its answer's"));
                }
            }
            at += words + 2 * header_count;
        }
        if unit != units {
            return Err(malformed("text longer than its lengths"));
        }
        if binaries != binary.len() {
            return Err(malformed("more byte bodies than answers flagged so"));
        }
        let text = match (text, utf8) {
            (_, Some(out)) => out.freeze(),
            (Text::Ascii(bytes), None) => bytes,
            (Text::Utf16(_), None) => unreachable!("UTF-16 text always has an output buffer"),
        };
        Ok(Self { heads, text, ends, binary })
    }

    /// How many records (answers and chunks) the batch holds.
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    /// Whether the batch holds no record.
    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// The records, in order. Cost per record: reference-count increments only; nothing is copied.
    pub fn records(&self) -> impl Iterator<Item = Record<'_>> {
        self.heads.iter().map(move |head| {
            if head.kind == Kind::Read as u8 {
                return Record::Read { id: head.id, stop: head.flags & STOP != 0 };
            }
            let header_ends = &self.ends[head.first_piece..head.first_piece + 2 * head.header_count];
            let body = match head.binary {
                Some(index) => self.binary[index].clone(),
                None => {
                    let start = header_ends.last().copied().unwrap_or(head.start);
                    self.text.slice(start..self.ends[head.first_piece + 2 * head.header_count])
                }
            };
            if head.kind == Kind::Chunk as u8 {
                return Record::Chunk(Chunk {
                    id: head.id,
                    data: body,
                    end: head.flags & END != 0,
                    abort: head.flags & ABORT != 0,
                });
            }
            Record::Answer(Answer {
                id: head.id,
                status: head.status,
                headers: Headers { text: &self.text, ends: header_ends, start: head.start },
                body,
                stream: head.flags & STREAM != 0,
                file: head.flags & FILE != 0,
                upgrade: head.flags & UPGRADE != 0,
            })
        })
    }

    /// The answers alone, in order (chunk records skipped): for tests and tools that send whole bodies.
    pub fn answers(&self) -> impl Iterator<Item = Answer<'_>> {
        self.records().filter_map(|record| match record {
            Record::Answer(answer) => Some(answer),
            Record::Chunk(_) | Record::Read { .. } => None,
        })
    }
}

/// One answer's headers: `(name, value)` pairs, the values slices of the batch's text.
#[derive(Debug, Clone)]
pub struct Headers<'a> {
    text: &'a Bytes,
    ends: &'a [usize],
    start: usize,
}

impl<'a> Iterator for Headers<'a> {
    type Item = (&'a [u8], Bytes);

    fn next(&mut self) -> Option<Self::Item> {
        let [name_end, value_end, rest @ ..] = self.ends else { return None };
        let name = &self.text[self.start..*name_end];
        let value = self.text.slice(*name_end..*value_end);
        self.start = *value_end;
        self.ends = rest;
        Some((name, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.ends.len() / 2, Some(self.ends.len() / 2))
    }
}

impl ExactSizeIterator for Headers<'_> {}

/// Appends `units` as UTF-8; a lone surrogate becomes U+FFFD, as `Buffer.from(string)` does.
fn encode_utf8(units: &[u16], out: &mut BytesMut) {
    if units.iter().all(|&u| u < 0x80) {
        out.extend(units.iter().map(|&u| u as u8));
        return;
    }
    let mut buf = [0; 4];
    for c in char::decode_utf16(units.iter().copied()) {
        out.extend_from_slice(c.unwrap_or('\u{fffd}').encode_utf8(&mut buf).as_bytes());
    }
}

fn malformed(what: &str) -> MalformedAnswers {
    MalformedAnswers(what.to_owned())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::wire::tag;

    /// A body in a test answer.
    #[derive(Debug, Clone, Copy)]
    pub(crate) enum TestBody {
        Text(&'static str),
        Binary(&'static [u8]),
    }

    /// An answer to encode: `(id, status, headers, body)`.
    pub(crate) type TestAnswer = (u32, u32, Vec<(&'static str, &'static str)>, TestBody);

    /// The answers of `golden/answers.json`.
    fn golden() -> Vec<TestAnswer> {
        vec![
            (
                5,
                201,
                vec![("content-type", "text/plain; charset=utf-8"), ("set-cookie", "a=1"), ("set-cookie", "b=2")],
                TestBody::Text("one"),
            ),
            (6, 204, vec![], TestBody::Text("")),
            (7, 200, vec![("x-emoji-\u{1f600}", "caf\u{e9}"), ("x-crlf", "a\r\nb")], TestBody::Binary(&[0, 255])),
            (8, 200, vec![], TestBody::Text("\u{e9}t\u{e9} \u{1f600}")),
        ]
    }

    /// What the TypeScript writer must produce, in the documented layout: `(meta, text units, binary)`.
    pub(crate) fn encode(answers: &[TestAnswer]) -> (Vec<u32>, Vec<u16>, Vec<Bytes>) {
        let (mut meta, mut text, mut binary) = (Vec::new(), Vec::new(), Vec::new());
        for (id, status, headers, body) in answers {
            let (flags, body_len) = match body {
                TestBody::Text(s) => (0, s.encode_utf16().count()),
                TestBody::Binary(b) => (BINARY_BODY, b.len()),
            };
            meta.extend([tag(Kind::Answer, flags), *id, *status, headers.len() as u32, body_len as u32]);
            for (name, value) in headers {
                for piece in [name, value] {
                    let units: Vec<u16> = piece.encode_utf16().collect();
                    meta.push(units.len() as u32);
                    text.extend(units);
                }
            }
            match body {
                TestBody::Text(s) => text.extend(s.encode_utf16()),
                TestBody::Binary(b) => binary.push(Bytes::from_static(b)),
            }
        }
        (meta, text, binary)
    }

    /// How the binding reads text: bytes when all ASCII, UTF-16 otherwise.
    pub(crate) fn read(units: Vec<u16>) -> Text {
        if units.iter().all(|&u| u < 0x80) {
            Text::Ascii(units.iter().map(|&u| u as u8).collect::<Vec<u8>>().into())
        } else {
            Text::Utf16(units)
        }
    }

    #[test]
    fn a_batch_should_decode_to_its_answers_in_order() {
        let (meta, text, binary) = encode(&golden());
        let batch = AnswerBatch::decode(&meta, read(text), binary).unwrap();
        let answers: Vec<Answer<'_>> = batch.answers().collect();
        assert_eq!(answers.len(), 4);
        for (answer, (id, status, headers, body)) in answers.into_iter().zip(golden()) {
            assert_eq!((answer.id, answer.status), (id, status));
            let got: Vec<(String, Bytes)> =
                answer.headers.map(|(n, v)| (String::from_utf8(n.to_vec()).unwrap(), v)).collect();
            let want: Vec<(String, Bytes)> =
                headers.iter().map(|(n, v)| (n.to_string(), Bytes::copy_from_slice(v.as_bytes()))).collect();
            assert_eq!(got, want);
            match body {
                TestBody::Text(s) => assert_eq!(answer.body, s.as_bytes()),
                TestBody::Binary(b) => assert_eq!(answer.body, b),
            }
        }
    }

    #[test]
    fn ascii_text_should_be_shared_not_copied() {
        let answers =
            vec![(1, 200, vec![("x-a", "1")], TestBody::Text("hello")), (2, 200, vec![], TestBody::Text("!"))];
        let (meta, text, binary) = encode(&answers);
        let Text::Ascii(bytes) = read(text) else { panic!("ASCII text") };
        let batch = AnswerBatch::decode(&meta, Text::Ascii(bytes.clone()), binary).unwrap();
        let first = batch.answers().next().unwrap();
        assert_eq!(first.body, "hello");
        assert_eq!(first.body.as_ptr(), bytes[4..].as_ptr(), "the body is a slice of the batch's text");
    }

    #[test]
    fn streamed_heads_and_their_chunks_should_decode_in_order() {
        let meta = vec![
            tag(Kind::Answer, STREAM),
            3,
            200,
            1,
            2,
            1,
            1,
            tag(Kind::Chunk, 0),
            3,
            3,
            tag(Kind::Answer, 0),
            4,
            204,
            0,
            0,
            tag(Kind::Chunk, BINARY_BODY | END),
            3,
            2,
            tag(Kind::Chunk, ABORT),
            9,
            0,
        ];
        let text = read("xyhiabc".encode_utf16().collect());
        let batch = AnswerBatch::decode(&meta, text, vec![Bytes::from_static(b"\0\xff")]).unwrap();
        let records: Vec<Record<'_>> = batch.records().collect();
        assert_eq!(records.len(), 5);
        let Record::Answer(head) = &records[0] else { panic!("an answer first") };
        assert_eq!((head.id, head.status, head.stream, &head.body[..]), (3, 200, true, &b"hi"[..]));
        assert_eq!(
            head.headers.clone().map(|(n, v)| (n.to_vec(), v)).collect::<Vec<_>>(),
            [(b"x".to_vec(), "y".into())]
        );
        let Record::Chunk(chunk) = &records[1] else { panic!("a chunk") };
        assert_eq!((chunk.id, &chunk.data[..], chunk.end, chunk.abort), (3, &b"abc"[..], false, false));
        let Record::Answer(whole) = &records[2] else { panic!("an answer") };
        assert_eq!((whole.id, whole.stream), (4, false));
        let Record::Chunk(last) = &records[3] else { panic!("a chunk") };
        assert_eq!((&last.data[..], last.end, last.abort), (&b"\0\xff"[..], true, false));
        let Record::Chunk(abort) = &records[4] else { panic!("a chunk") };
        assert_eq!((abort.id, abort.data.len(), abort.abort), (9, 0, true));
        assert_eq!(batch.answers().count(), 2);
        assert!(AnswerBatch::decode(&meta[..meta.len() - 1], read(vec![]), vec![]).is_err());
    }

    #[test]
    fn lone_surrogates_should_become_replacement_characters() {
        let mut units: Vec<u16> = "ok".encode_utf16().collect();
        units.push(0xd800);
        let meta = vec![tag(Kind::Answer, 0), 1, 200, 0, 3];
        let batch = AnswerBatch::decode(&meta, Text::Utf16(units), vec![]).unwrap();
        assert_eq!(batch.answers().next().unwrap().body, "ok\u{fffd}".as_bytes());
    }

    #[test]
    fn malformed_batches_should_be_refused_with_the_reason() {
        let (meta, text, binary) = encode(&golden());
        let decode = |meta: &[u32], text: &[u16], binary: &[Bytes]| {
            AnswerBatch::decode(meta, read(text.to_vec()), binary.to_vec())
        };
        assert!(decode(&meta, &text, &binary).is_ok());
        assert!(decode(&meta[..meta.len() - 1], &text, &binary).is_err());
        assert!(decode(&meta, &text[..text.len() - 1], &binary).is_err());
        let mut longer = text.clone();
        longer.push(b'x'.into());
        assert!(decode(&meta, &longer, &binary).unwrap_err().to_string().contains("longer"));
        assert!(decode(&meta, &text, &[]).unwrap_err().to_string().contains("fewer byte bodies"));
        let two = [binary[0].clone(), binary[0].clone()];
        assert!(decode(&meta, &text, &two).unwrap_err().to_string().contains("more byte bodies"));
        assert!(decode(&meta, &text, &[Bytes::from_static(b"x")]).unwrap_err().to_string().contains("length"));
        let mut other_version = meta.clone();
        other_version[0] = Kind::Answer as u32 | 9 << 8;
        assert!(decode(&other_version, &text, &binary).unwrap_err().to_string().contains("version 9"));
        let mut request = meta;
        request[0] = tag(Kind::Request, 0);
        assert!(decode(&request, &text, &binary).unwrap_err().to_string().contains("not an answer, a chunk or a read"));
    }

    #[test]
    fn the_golden_answers_should_match_the_shared_fixture() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/wire/golden/answers.json");
        let (meta, text, binary) = encode(&golden());
        let mut json = String::from("{\n  \"answers\": [\n");
        for (i, (id, status, headers, body)) in golden().iter().enumerate() {
            let pairs: Vec<String> = headers.iter().map(|(n, v)| format!("{}, {}", js(n), js(v))).collect();
            let body = match body {
                TestBody::Text(s) => js(s),
                TestBody::Binary(b) => format!("{{ \"bytes\": {b:?} }}"),
            };
            let comma = if i + 1 < golden().len() { "," } else { "" };
            json += &format!(
                "    {{ \"id\": {id}, \"status\": {status}, \"headers\": [{}], \"body\": {body} }}{comma}\n",
                pairs.join(", ")
            );
        }
        let meta: Vec<String> = meta.iter().map(u32::to_string).collect();
        let binary: Vec<String> = binary.iter().map(|b| format!("{:?}", b.to_vec())).collect();
        json += &format!(
            "  ],\n  \"meta\": [{}],\n  \"text\": {},\n  \"binary\": [{}]\n}}\n",
            meta.join(", "),
            js(&String::from_utf16(&text).unwrap()),
            binary.join(", ")
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
