//! permessage-deflate's codec (RFC 7692 §7.2): a message is compressed with a sync flush and sent without the
//! 4-byte tail that flush ends with; a received one is inflated with that tail put back.
//!
//! Memory: a socket whose context is reset for every message (`*_no_context_takeover`, the default both ways)
//! owns nothing; the thread that compresses or inflates keeps one compressor per window size it was asked for
//! (about 370 KiB each with zlib-rs, whose hash table is 128 KiB whatever the window) and one decompressor
//! (about 46 KiB), made when first used. A dedicated compressor or decompressor costs the same per socket, from
//! its first compressed message to its close. Clients that ask for every window size can make a sending thread
//! keep seven shared compressors (2.6 MiB), no more.

use std::cell::RefCell;

use bytes::Bytes;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use super::frame::{self, OpCode};
use super::violation::Violation;

/// What a sync flush ends with: the sender drops it and the receiver appends it (§7.2.1, §7.2.2).
const TAIL: [u8; 4] = [0x00, 0x00, 0xFF, 0xFF];
/// zlib's fastest level, which uWS (so Bun) uses too: WebSocket messages wait on it, and on text most of the
/// gain is already there.
const LEVEL: u32 = 1;
/// A thread's buffer that grew past this for a large message is given back after it, not kept.
const KEEP: usize = 256 * 1024;

type Compressors = [Option<Box<Compress>>; 7];

thread_local! {
    /// Compressors that keep no context, one per window size (9..=15 bits), made when first asked for.
    static SHARED: RefCell<Compressors> = RefCell::new(Default::default());
    /// The decompressor for sockets whose client resets its context for every message.
    static INFLATER: RefCell<Option<Box<Decompress>>> = const { RefCell::new(None) };
    /// Compressed bytes before they are framed, and inflated messages before they are handed on.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A whole message compressed into one frame by the calling thread's compressor for `window_bits` (9..=15),
/// reset after. Compressed even where that makes it a few bytes larger, as Bun does: a send that asks for
/// compression gets it. Cost: zlib-rs's reset clears its 128 KiB hash table (a few µs), so tiny messages are
/// better left plain (the route's threshold).
pub(crate) fn shared_frame(opcode: OpCode, payload: &[u8], window_bits: u8) -> Bytes {
    SHARED.with_borrow_mut(|compressors| {
        let slot = &mut compressors[usize::from(window_bits.clamp(9, 15) - 9)];
        let compress = slot.get_or_insert_with(|| Box::new(new_compressor(window_bits)));
        let frame = compressed_frame(compress, opcode, payload);
        compress.reset();
        frame
    })
}

/// A socket's own compressor, whose window carries from message to message (context takeover).
pub(crate) struct Dedicated(Compress);

impl Dedicated {
    pub(crate) fn new(window_bits: u8) -> Self {
        Self(new_compressor(window_bits))
    }

    /// The message compressed, in one frame. Once the context has seen a message the client must see it
    /// compressed too, so a message is sent compressed even when that does not make it smaller.
    pub(crate) fn frame(&mut self, opcode: OpCode, payload: &[u8]) -> Bytes {
        compressed_frame(&mut self.0, opcode, payload)
    }
}

/// `payload` compressed by `compress` into one frame, through the thread's buffer.
fn compressed_frame(compress: &mut Compress, opcode: OpCode, payload: &[u8]) -> Bytes {
    SCRATCH.with_borrow_mut(|out| {
        let frame = match deflate(compress, payload, out) {
            Some(deflated) => frame::encode_compressed(opcode, deflated),
            // zlib-rs fails only on misuse (an empty message never reaches it). The message goes plain, which
            // the RFC allows, and the context starts afresh: a fresh compressor refers only to what it has seen,
            // which the client's window holds too.
            None => {
                compress.reset();
                frame::encode(true, opcode, payload)
            }
        };
        give_back(out);
        frame
    })
}

fn new_compressor(window_bits: u8) -> Compress {
    Compress::new_with_window_bits(Compression::new(LEVEL), false, window_bits.clamp(9, 15))
}

/// An empty message compressed (§7.2.3.6): one empty stored block's first byte; the tail completes it.
const EMPTY: [u8; 1] = [0x00];

/// Compresses `payload` into `out` with a sync flush and returns it without the tail; `None` if zlib fails.
/// An empty message is [`EMPTY`], without asking zlib, which answers a second sync flush with nothing new
/// (`BufError`) and would leave no tail to drop; the context is untouched by it either way.
fn deflate<'a>(compress: &mut Compress, payload: &[u8], out: &'a mut Vec<u8>) -> Option<&'a [u8]> {
    out.clear();
    if payload.is_empty() {
        out.extend_from_slice(&EMPTY);
        return Some(&out[..]);
    }
    out.reserve(payload.len() / 2 + 64);
    let start = compress.total_in();
    loop {
        // zlib asks for more than six bytes of room on a sync flush, or it may repeat the flush marker.
        if out.capacity() - out.len() < 64 {
            out.reserve(out.capacity().max(1024));
        }
        compress.compress_vec(&payload[(compress.total_in() - start) as usize..], out, FlushCompress::Sync).ok()?;
        let used = (compress.total_in() - start) as usize;
        if used == payload.len() && out.len() < out.capacity() {
            break;
        }
    }
    let len = out.len().checked_sub(TAIL.len()).filter(|&n| out[n..] == TAIL)?;
    Some(&out[..len])
}

/// A socket's own decompressor, for a client that keeps its context between messages.
pub(crate) struct Inflater(Decompress);

impl Inflater {
    pub(crate) fn new() -> Self {
        Self(Decompress::new(false))
    }
}

/// Inflates one compressed message (its frames' payloads joined) and hands it to `deliver`: with the socket's own
/// decompressor when its client keeps its context (`own`), else with the thread's, reset first. More than `max`
/// bytes once inflated is 1009 (found as soon as it is passed: a small message cannot inflate into a large
/// allocation); data that does not inflate is 1007.
pub(crate) fn inflate<R>(
    payload: &[u8],
    max: usize,
    own: Option<&mut Inflater>,
    deliver: impl FnOnce(&[u8]) -> R,
) -> Result<R, Violation> {
    SCRATCH.with_borrow_mut(|out| {
        out.clear();
        let done = match own {
            Some(own) => inflate_into(&mut own.0, payload, max, out),
            None => INFLATER.with_borrow_mut(|slot| {
                let shared = slot.get_or_insert_with(|| Box::new(Decompress::new(false)));
                shared.reset(false);
                inflate_into(shared, payload, max, out)
            }),
        };
        let delivered = done.map(|()| deliver(out));
        give_back(out);
        delivered
    })
}

fn inflate_into(d: &mut Decompress, payload: &[u8], max: usize, out: &mut Vec<u8>) -> Result<(), Violation> {
    let input = [payload, &TAIL[..]];
    let (mut part, mut at) = (0, 0);
    while part < input.len() {
        let flush = if part == 0 { FlushDecompress::None } else { FlushDecompress::Sync };
        if out.len() == out.capacity() {
            let room = out.len().max(4096).min((max + 1).saturating_sub(out.len()));
            if room == 0 {
                return Err(Violation::too_big());
            }
            out.reserve_exact(room);
        }
        let before = (d.total_in(), out.len());
        let status = d.decompress_vec(&input[part][at..], out, flush).map_err(|_| Violation::corrupt())?;
        if out.len() > max {
            return Err(Violation::too_big());
        }
        at += (d.total_in() - before.0) as usize;
        if status == Status::StreamEnd {
            // The client ended its stream with a final block (BFINAL, §7.2.3.3): what follows, with the tail, is
            // a new stream (the RFC's example adds one 0x00, an empty stored block's start). Its window is this
            // message's output, which a client that keeps its context may refer back to.
            d.reset(false);
            let keep = &out[out.len().saturating_sub(32 * 1024)..];
            if !keep.is_empty() {
                d.set_dictionary(keep).map_err(|_| Violation::corrupt())?;
            }
            // Ended exactly at the payload's end (no 0x00 after it): the tail would only begin a stream that
            // never ends, and leave the next message to continue it.
            if part == 0 && at == payload.len() {
                return Ok(());
            }
            continue;
        }
        if at == input[part].len() {
            if out.len() < out.capacity() {
                (part, at) = (part + 1, 0);
            }
            continue;
        }
        if (d.total_in(), out.len()) == before && out.len() < out.capacity() {
            return Err(Violation::corrupt());
        }
    }
    Ok(())
}

fn give_back(buf: &mut Vec<u8>) {
    if buf.capacity() > KEEP {
        *buf = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compresses as a client would: a sync flush, the tail dropped; `reset` between messages or not.
    fn client_deflate(compress: &mut Compress, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        deflate(compress, payload, &mut out).unwrap().to_vec()
    }

    fn inflated(payload: &[u8], max: usize, own: Option<&mut Inflater>) -> Result<Vec<u8>, u16> {
        inflate(payload, max, own, <[u8]>::to_vec).map_err(|v| v.code)
    }

    fn text(n: usize) -> Vec<u8> {
        (0..n).map(|i| b"the quick brown fox jumps over the lazy dog "[i % 44]).collect()
    }

    #[test]
    fn a_shared_frame_inflates_back_to_the_message_and_sets_rsv1() {
        for bits in [9u8, 12, 15] {
            let message = text(10_000);
            let frame = shared_frame(OpCode::Text, &message, bits);
            assert_eq!(frame[0], 0xC1, "FIN, RSV1, text");
            let head = frame::FrameDecoder::new(1 << 20, true);
            let mut masked =
                bytes::BytesMut::from(&frame::encode_masked(true, OpCode::Text, &frame[4..], [1, 2, 3, 4])[..]);
            let body = head.decode(&mut masked).unwrap().unwrap().payload;
            assert!(body.len() < message.len() / 4, "{} bytes", body.len());
            assert_eq!(inflated(&body, 1 << 20, None).unwrap(), message);
        }
        let tiny = shared_frame(OpCode::Binary, &[7, 1, 200, 3], 15);
        assert_eq!(tiny[0], 0xC2, "compressed when asked, even a few bytes larger");
        assert_eq!(inflated(&tiny[2..], 10, None).unwrap(), [7, 1, 200, 3]);
    }

    #[test]
    fn a_dedicated_context_carries_over_and_its_messages_shrink() {
        let mut server = Dedicated::new(15);
        let mut client = Inflater::new();
        let message = text(3000);
        let first = server.frame(OpCode::Text, &message);
        let second = server.frame(OpCode::Text, &message);
        assert!(second.len() < first.len(), "the second refers back to the first");
        for frame in [first, second] {
            assert_eq!(frame[0], 0xC1);
            let body = &frame[if frame[1] & 0x7F == 126 { 4 } else { 2 }..];
            assert_eq!(inflated(body, 1 << 20, Some(&mut client)).unwrap(), message);
        }
    }

    #[test]
    fn a_client_that_keeps_its_context_needs_its_own_decompressor() {
        let mut client = new_compressor(15);
        let first = client_deflate(&mut client, &text(2000));
        let second = client_deflate(&mut client, &text(2000));
        let mut own = Inflater::new();
        assert_eq!(inflated(&first, 1 << 20, Some(&mut own)).unwrap(), text(2000));
        assert_eq!(inflated(&second, 1 << 20, Some(&mut own)).unwrap(), text(2000));
        assert_eq!(inflated(&second, 1 << 20, None), Err(1007), "the thread's decompressor starts afresh");
    }

    #[test]
    fn bombs_and_garbage_are_refused_with_their_codes() {
        let mut client = new_compressor(15);
        let bomb = client_deflate(&mut client, &vec![0u8; 10 << 20]);
        assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
        assert_eq!(inflated(&bomb, 1 << 20, None), Err(1009));
        client.reset();
        let exact = client_deflate(&mut client, &vec![b'a'; 5000]);
        assert_eq!(inflated(&exact, 5000, None).unwrap().len(), 5000, "exactly the limit");
        assert_eq!(inflated(&exact, 4999, None), Err(1009));
        assert_eq!(inflated(&[0xFF, 0xFF, 0xFF], 1 << 20, None), Err(1007));
        assert_eq!(inflated(&[], 10, None).unwrap(), b"", "an empty message");
        // A final block (BFINAL) alone, and the RFC's example of one followed by a 0x00 (§7.2.3.3): "Hello".
        let mut finished = Vec::with_capacity(64);
        let mut c = new_compressor(15);
        c.compress_vec(b"hello", &mut finished, FlushCompress::Finish).unwrap();
        assert_eq!(inflated(&finished, 100, None).unwrap(), b"hello");
        assert_eq!(inflated(&[0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00], 100, None).unwrap(), b"Hello");
        // After a final block, a client that keeps its context may still refer back to that message.
        let mut own = Inflater::new();
        assert_eq!(inflated(&[0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00], 100, Some(&mut own)).unwrap(), b"Hello");
        let mut next = new_compressor(15);
        next.set_dictionary(b"Hello").unwrap();
        let again = client_deflate(&mut next, b"Hello");
        assert_eq!(inflated(&again, 100, Some(&mut own)).unwrap(), b"Hello");
        // An empty message, compressed by a fresh compressor and by one that has already flushed.
        let mut d = Dedicated::new(15);
        for _ in 0..2 {
            let frame = d.frame(OpCode::Binary, b"");
            assert_eq!(&frame[..], &[0xC2, 1, 0x00]);
            assert_eq!(inflated(&frame[2..], 10, None).unwrap(), b"");
        }
        let after = d.frame(OpCode::Text, b"still compressed");
        assert_eq!(after[0], 0xC1, "the context survived the empty messages");
    }
}
