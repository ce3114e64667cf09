//! Which of a Redis Cluster's 16,384 hash slots a channel lives in: CRC16 (XMODEM) of the channel, or of its
//! hash tag (the text between the first `{` and the next `}`, when that is not empty), modulo 16,384. The
//! cluster's own rule, so the relay sends each `SPUBLISH` and `SSUBSCRIBE` straight to the node that owns it.

/// Slots in a cluster.
pub(crate) const SLOTS: usize = 16_384;

/// The slot of `key`. Cost: one pass over the key's bytes (or its tag's), a table lookup each.
pub(crate) fn of(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) % SLOTS as u16
}

/// The part of `key` that is hashed: its tag if it has a non-empty one, else all of it.
fn hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0.
fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |crc, &b| (crc << 8) ^ TABLE[usize::from((crc >> 8) as u8 ^ b)])
}

static TABLE: [u16; 256] = table();

const fn table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_the_clusters_own() {
        // The check value of CRC16/XMODEM, and slots Redis's CLUSTER KEYSLOT reports.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(of(b"foo"), 12182);
        assert_eq!(of(b"bar"), 5061);
        assert_eq!(of(b""), 0);
        assert_eq!(of(b"{user1000}.following"), of(b"{user1000}.followers"));
        assert_eq!(of(b"foo{}{bar}"), of(b"foo{}{bar}"), "an empty first tag means the whole key");
        assert_ne!(of(b"foo{}{bar}"), of(b"bar"));
        assert_eq!(of(b"foo{{bar}}zap"), of(b"{bar"));
        assert_eq!(of(b"foo{bar}{zap}"), of(b"bar"));
    }
}
