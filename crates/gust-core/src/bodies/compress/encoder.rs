//! Compressors: one-shot for whole bodies, incremental for streamed ones. A streamed body's compressor is
//! flushed after each chunk (gzip's sync flush, brotli's and zstd's flush operations), so a client decodes every
//! chunk as it arrives: an SSE event is never held back waiting for more input.

use std::io::{self, Write};

use bytes::Bytes;

use super::Encoding;

/// Window of a streamed body's compressor, as a power of two: 256 KiB bounds its memory whatever the body's
/// length (brotli and zstd would otherwise size theirs at 4 MiB and 2 MiB).
const STREAM_WINDOW_LOG: u32 = 18;

/// An incremental compressor for one body.
pub(crate) enum Encoder {
    Gzip(flate2::write::GzEncoder<Vec<u8>>),
    Br(Box<brotli::CompressorWriter<Vec<u8>>>),
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Encoder::Gzip(_) => "Encoder(gzip)",
            Encoder::Br(_) => "Encoder(br)",
            Encoder::Zstd(_) => "Encoder(zstd)",
        })
    }
}

impl Encoder {
    /// A compressor at `level` (checked by [`super::Compression::validate`]).
    pub(crate) fn new(encoding: Encoding, level: i32) -> io::Result<Self> {
        Ok(match encoding {
            Encoding::Gzip => {
                Encoder::Gzip(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level as u32)))
            }
            Encoding::Br => {
                Encoder::Br(Box::new(brotli::CompressorWriter::new(Vec::new(), 4096, level as u32, STREAM_WINDOW_LOG)))
            }
            Encoding::Zstd => {
                let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), level)?;
                encoder.window_log(STREAM_WINDOW_LOG)?;
                Encoder::Zstd(encoder)
            }
        })
    }

    /// Compresses `input`; with `flush`, everything given so far comes out decodable. Returns what came out
    /// (often nothing without `flush`).
    pub(crate) fn push(&mut self, input: &[u8], flush: bool) -> io::Result<Bytes> {
        match self {
            Encoder::Gzip(e) => {
                e.write_all(input)?;
                if flush {
                    e.flush()?;
                }
                Ok(Bytes::from(std::mem::take(e.get_mut())))
            }
            Encoder::Br(e) => {
                e.write_all(input)?;
                if flush {
                    e.flush()?;
                }
                Ok(Bytes::from(std::mem::take(e.get_mut())))
            }
            Encoder::Zstd(e) => {
                e.write_all(input)?;
                if flush {
                    e.flush()?;
                }
                Ok(Bytes::from(std::mem::take(e.get_mut())))
            }
        }
    }

    /// Ends the coded body: what is left, with the format's trailer.
    pub(crate) fn finish(self) -> io::Result<Bytes> {
        Ok(Bytes::from(match self {
            Encoder::Gzip(e) => e.finish()?,
            Encoder::Br(e) => e.into_inner(),
            Encoder::Zstd(e) => e.finish()?,
        }))
    }
}

/// Compresses a whole body at once, with the window sized to it.
pub(crate) fn compress(encoding: Encoding, level: i32, input: &[u8]) -> io::Result<Bytes> {
    match encoding {
        Encoding::Gzip => {
            let mut e = flate2::write::GzEncoder::new(
                Vec::with_capacity(input.len() / 3 + 64),
                flate2::Compression::new(level as u32),
            );
            e.write_all(input)?;
            Ok(Bytes::from(e.finish()?))
        }
        Encoding::Br => {
            // The smallest window that holds the body (brotli's minimum is 2^10).
            let window = (usize::BITS - input.len().max(1).leading_zeros()).clamp(10, 22);
            let mut out = Vec::with_capacity(input.len() / 3 + 64);
            {
                let mut e = brotli::CompressorWriter::new(&mut out, 4096, level as u32, window);
                e.write_all(input)?;
            }
            Ok(Bytes::from(out))
        }
        // The bulk API tells zstd the size up front: it picks its tables and window for it.
        Encoding::Zstd => Ok(Bytes::from(zstd::bulk::compress(input, level)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::compress::decode::Decoder;

    fn decode(encoding: Encoding, coded: &[u8]) -> Vec<u8> {
        let mut d = Decoder::new(encoding);
        let mut out = Vec::new();
        let mut buf = vec![0u8; 8192];
        let mut input = coded;
        loop {
            let (used, made, done) = d.run(input, &mut buf).expect("valid");
            input = &input[used..];
            out.extend_from_slice(&buf[..made]);
            if done || (used == 0 && made == 0) {
                break;
            }
        }
        out
    }

    #[test]
    fn whole_and_streamed_bodies_round_trip_in_every_encoding() {
        let text: Vec<u8> = (0..20_000).flat_map(|i| format!("line {i} of the body\n").into_bytes()).collect();
        for encoding in Encoding::ALL {
            let whole = compress(encoding, 3, &text).unwrap();
            assert!(whole.len() < text.len() / 4, "{encoding:?} compresses text");
            assert_eq!(decode(encoding, &whole), text, "{encoding:?} whole");

            let mut e = Encoder::new(encoding, 3).unwrap();
            let mut coded = Vec::new();
            for chunk in text.chunks(7000) {
                let out = e.push(chunk, true).unwrap();
                assert!(!out.is_empty(), "{encoding:?}: a flushed chunk comes out at once");
                coded.extend_from_slice(&out);
                // Everything so far decodes: what a client of an event stream relies on.
                assert!(text.starts_with(&decode_prefix(encoding, &coded)));
            }
            coded.extend_from_slice(&e.finish().unwrap());
            assert_eq!(decode(encoding, &coded), text, "{encoding:?} streamed");
        }
    }

    /// Decodes what it can of an unfinished coded body.
    fn decode_prefix(encoding: Encoding, coded: &[u8]) -> Vec<u8> {
        let mut d = Decoder::new(encoding);
        let mut out = Vec::new();
        let mut buf = vec![0u8; 8192];
        let mut input = coded;
        while let Ok((used, made, done)) = d.run(input, &mut buf) {
            input = &input[used..];
            out.extend_from_slice(&buf[..made]);
            if done || (used == 0 && made == 0) {
                break;
            }
        }
        out
    }
}
