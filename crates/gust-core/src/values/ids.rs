//! Request ids: their bit layout and their hash. An id names the I/O thread (shard) holding the request in its
//! top bits, so answers, body chunks and WebSocket wakes from any JavaScript thread go back to that thread; the
//! rest is a sequence number, unique among the shard's requests in flight.

use std::hash::Hasher;

/// Bits of a request id below the shard.
pub(crate) const SHARD_SHIFT: u32 = 28;
/// How many lanes a server can have at once (lane 0 included).
pub const MAX_LANES: usize = 256;
/// How many I/O threads a server can have.
pub const MAX_IO_THREADS: usize = 16;
/// Requests in flight at most: every lane of every shard then always has a free id.
pub const MAX_PENDING: usize = (1 << SHARD_SHIFT) - 1;

// Every shard fits in the bits above the sequence.
const _: () = assert!(MAX_IO_THREADS <= 1 << (32 - SHARD_SHIFT));

/// The shard (I/O thread) a request id belongs to.
pub(crate) fn shard_of(id: u32) -> usize {
    (id >> SHARD_SHIFT) as usize
}

/// The id of request `seq` on shard `shard`.
pub(crate) fn request_id(shard: u8, seq: u32) -> u32 {
    u32::from(shard) << SHARD_SHIFT | (seq & ((1 << SHARD_SHIFT) - 1))
}

/// Ids are sequential, so they are their own hash. Cost: nothing, unlike SipHash's ~20 ns.
#[derive(Debug, Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_should_name_its_shard_and_keep_its_sequence_below_it() {
        let id = request_id(5, 42);
        assert_eq!(shard_of(id), 5);
        assert_eq!(id & ((1 << SHARD_SHIFT) - 1), 42);
        assert_eq!(shard_of(request_id(15, u32::MAX)), 15, "a sequence past its bits wraps, never into the shard");
    }
}
