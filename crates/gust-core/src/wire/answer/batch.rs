//! Decoding an answer batch (the layout in [`super`]): `meta` and the text walked once, every header value and
//! text body a slice of one buffer.

use bytes::{Bytes, BytesMut};

use super::record::{Answer, Chunk, Headers, MalformedAnswers, Record, Text};
use super::{ABORT, BINARY_BODY, CHUNK_WORDS, END, FILE, HEAD_WORDS, READ_WORDS, STOP, STREAM, UPGRADE};
use crate::wire::{untag, Kind, VERSION};

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
