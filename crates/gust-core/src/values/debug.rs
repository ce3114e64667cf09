//! Debug messages on stderr, off unless the `GUST_DEBUG` environment variable names their topic, as Node's
//! `NODE_DEBUG` does: `GUST_DEBUG=tls`, several separated by commas, `*` for all. Read once, at the first check.
//!
//! They tell an operator what the server drops without a word to anyone else (a client whose TLS handshake
//! failed gets no HTTP answer to carry an error), so a hostile client can make many: at most [`PER_SECOND`] are
//! printed each second, and the next one printed says how many were left out.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use super::clock;

/// What a debug message is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Topic {
    /// TLS handshakes that failed or stalled.
    Tls,
}

impl Topic {
    const ALL: [Topic; 1] = [Topic::Tls];

    fn name(self) -> &'static str {
        match self {
            Topic::Tls => "tls",
        }
    }

    fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// Messages printed per second at most, over all topics.
pub(crate) const PER_SECOND: u64 = 20;

static TOPICS: OnceLock<u32> = OnceLock::new();
/// The second (of the coarse clock) the last message was printed in, and how many were printed in it.
static WINDOW: AtomicU64 = AtomicU64::new(0);
static PRINTED: AtomicU64 = AtomicU64::new(0);
static LEFT_OUT: AtomicU64 = AtomicU64::new(0);

/// The topics `value` (the variable's text) turns on, as bits.
fn parse(value: &str) -> u32 {
    value
        .split(',')
        .map(str::trim)
        .flat_map(|word| Topic::ALL.into_iter().filter(move |t| word == "*" || word.eq_ignore_ascii_case(t.name())))
        .fold(0, |bits, t| bits | t.bit())
}

/// Whether messages about `topic` are printed. Cost: one load of an initialised `OnceLock`.
#[inline]
pub(crate) fn enabled(topic: Topic) -> bool {
    TOPICS.get_or_init(|| std::env::var("GUST_DEBUG").map(|v| parse(&v)).unwrap_or(0)) & topic.bit() != 0
}

/// Prints `message` about `topic` when it is on and this second's allowance is not spent. Callers check
/// [`enabled`] first, so a message is formatted only when it may be printed.
pub(crate) fn log(topic: Topic, message: fmt::Arguments<'_>) {
    if !enabled(topic) {
        return;
    }
    if !allowed(clock::now_ms() / 1000) {
        LEFT_OUT.fetch_add(1, Ordering::Relaxed);
        return;
    }
    match LEFT_OUT.swap(0, Ordering::Relaxed) {
        0 => eprintln!("gust {}: {message}", topic.name()),
        n => {
            eprintln!("gust {}: {message} ({n} earlier message(s) left out: over {PER_SECOND} a second)", topic.name())
        }
    }
}

/// Whether one more message fits in `second`'s allowance (racing threads may print a few more: harmless).
fn allowed(second: u64) -> bool {
    if WINDOW.swap(second, Ordering::Relaxed) != second {
        PRINTED.store(0, Ordering::Relaxed);
    }
    PRINTED.fetch_add(1, Ordering::Relaxed) < PER_SECOND
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_are_named_by_commas_or_a_star() {
        assert_eq!(parse("tls"), Topic::Tls.bit());
        assert_eq!(parse("http, TLS"), Topic::Tls.bit());
        assert_eq!(parse("*"), Topic::Tls.bit());
        assert_eq!(parse(""), 0);
        assert_eq!(parse("tlsx,h2"), 0);
    }

    #[test]
    fn a_second_allows_so_many_messages_and_the_next_second_as_many_again() {
        let second = u64::MAX / 2;
        let first: Vec<bool> = (0..PER_SECOND + 5).map(|_| allowed(second)).collect();
        assert_eq!(first.iter().filter(|&&ok| ok).count() as u64, PER_SECOND);
        assert!(allowed(second + 1));
    }
}
