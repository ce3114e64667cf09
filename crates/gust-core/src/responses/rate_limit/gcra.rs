//! The generic cell rate algorithm (GCRA): a limit of `limit` requests per `window` as one number per key, the
//! theoretical arrival time (TAT) of the next request. Each request moves it one emission interval
//! (`window / limit`) later; a request is refused when that would put it more than a window ahead of now. A key
//! that kept quiet for a window has its whole quota back, and its entry means nothing any more (the store drops
//! it). Burst: all `limit` requests at once, then one per interval. Cost: a few integer operations, no allocation.

/// One limit's arithmetic, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gcra {
    /// `window / limit`: what one request costs.
    interval: u64,
    /// The whole window: how far ahead of now the TAT may go.
    window: u64,
    limit: u32,
}

/// What one decision says, for the answer's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) allowed: bool,
    /// Requests that may still come now (after this one, when it was allowed).
    pub(crate) remaining: u32,
    /// Nanoseconds until the whole quota is back.
    pub(crate) reset: u64,
    /// Refused: nanoseconds until one more request is allowed. Allowed: 0.
    pub(crate) retry: u64,
}

impl Gcra {
    /// `limit` requests per `window_ns` (both above zero; the package checks them).
    pub(crate) fn new(limit: u32, window_ns: u64) -> Self {
        let limit = limit.max(1);
        let window = window_ns.max(1);
        Self { interval: (window / u64::from(limit)).max(1), window, limit }
    }

    pub(crate) fn interval_ns(&self) -> u64 {
        self.interval
    }

    pub(crate) fn window_ns(&self) -> u64 {
        self.window
    }

    /// Decides one request at `now` against the key's `tat` (0: never seen), moving it when allowed.
    pub(crate) fn take(&self, tat: &mut u64, now: u64) -> Verdict {
        let start = (*tat).max(now);
        let next = start + self.interval;
        if next - now > self.window {
            let retry = next - now - self.window;
            return Verdict { allowed: false, remaining: 0, reset: start - now, retry };
        }
        *tat = next;
        let reset = next - now;
        let remaining = ((self.window - reset) / self.interval).min(u64::from(self.limit)) as u32;
        Verdict { allowed: true, remaining, reset, retry: 0 }
    }

    /// Whether a key's entry still limits anything at `now` (otherwise it may be forgotten).
    pub(crate) fn live(&self, tat: u64, now: u64) -> bool {
        tat > now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn a_burst_should_take_the_whole_quota_and_no_more() {
        let g = Gcra::new(5, 10 * S);
        let mut tat = 0;
        let now = 100 * S;
        let remaining: Vec<u32> = (0..5).map(|_| g.take(&mut tat, now)).map(|v| v.remaining).collect();
        assert_eq!(remaining, [4, 3, 2, 1, 0]);
        let refused = g.take(&mut tat, now);
        assert!(!refused.allowed);
        assert_eq!(refused.retry, 2 * S, "one interval (10 s / 5) until the next request");
        assert_eq!(refused.reset, 10 * S, "the whole quota is back one window after the burst");
        assert_eq!(tat, now + 10 * S, "a refusal does not move the TAT");
    }

    #[test]
    fn the_quota_should_come_back_one_interval_at_a_time() {
        let g = Gcra::new(5, 10 * S);
        let mut tat = 0;
        let now = 100 * S;
        (0..5).for_each(|_| assert!(g.take(&mut tat, now).allowed));
        assert!(!g.take(&mut tat, now + 2 * S - 1).allowed, "just before one interval passed");
        let v = g.take(&mut tat, now + 2 * S);
        assert!(v.allowed);
        assert_eq!(v.remaining, 0);
        // Quiet for a whole window: everything back, and the entry means nothing any more.
        assert!(!g.live(tat, now + 12 * S));
        assert_eq!(g.take(&mut tat, now + 12 * S).remaining, 4);
    }

    #[test]
    fn a_steady_rate_at_the_limit_should_always_pass() {
        let g = Gcra::new(1000, S);
        let mut tat = 0;
        let refused = (0..10_000u64).filter(|i| !g.take(&mut tat, 5 * S + i * (S / 1000)).allowed).count();
        assert_eq!(refused, 0);
        // Twice the rate: about half refused once the burst is spent.
        let mut tat = 0;
        let allowed = (0..10_000u64).filter(|i| g.take(&mut tat, 5 * S + i * (S / 2000)).allowed).count();
        assert!((5_000..=6_001).contains(&allowed), "{allowed}");
    }

    #[test]
    fn no_span_should_admit_more_than_the_burst_plus_its_refill() {
        // 100 per minute (an interval of 0.6 s): in any span of d seconds at most 100 + d / 0.6 are admitted,
        // whatever the arrival pattern; at once, exactly 100.
        let g = Gcra::new(100, 60 * S);
        let mut tat = 0;
        let mut admitted = Vec::new();
        for i in 0..5_000u64 {
            let now = 1_000 * S + i * 97_000_000 + (i % 7) * 13_000_000;
            if g.take(&mut tat, now).allowed {
                admitted.push(now);
            }
        }
        for (i, &t) in admitted.iter().enumerate() {
            for d in [S, 10 * S, 60 * S] {
                let in_span = admitted[i..].iter().take_while(|&&u| u < t + d).count() as u64;
                assert!(in_span <= 100 + d / (600 * S / 1000) + 1, "{in_span} admitted in {d} ns from {t}");
            }
        }
        let mut tat = 0;
        assert_eq!((0..1_000).filter(|_| g.take(&mut tat, 7 * S).allowed).count(), 100);
    }
}
