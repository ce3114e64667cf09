//! Sleeping and timeouts on whichever engine polls: tokio's timer on the threaded engine, the one-thread
//! engine's heap ([`super::local::timers`]) on a JavaScript thread. Which one is fixed when the sleep is made.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::local;
use super::local::timers::LocalSleep;

pin_project_lite::pin_project! {
    /// A future that ends at its deadline; [`Sleep::reset`] moves the deadline.
    #[project = SleepProj]
    pub(crate) enum Sleep {
        Tokio { #[pin] inner: tokio::time::Sleep },
        Local { inner: LocalSleep },
    }
}

/// Ends `duration` from now.
pub(crate) fn sleep(duration: Duration) -> Sleep {
    sleep_until(after(duration))
}

/// Ends at `deadline`.
pub(crate) fn sleep_until(deadline: Instant) -> Sleep {
    if let Some(timers) = local::timers() {
        Sleep::Local { inner: LocalSleep::new(deadline, timers) }
    } else {
        Sleep::Tokio { inner: tokio::time::sleep_until(deadline.into()) }
    }
}

impl Sleep {
    /// Ends at `deadline` instead, whether or not it had ended.
    pub(crate) fn reset(self: Pin<&mut Self>, deadline: Instant) {
        match self.project() {
            SleepProj::Tokio { inner } => inner.reset(deadline.into()),
            SleepProj::Local { inner } => inner.reset(deadline),
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.project() {
            SleepProj::Tokio { inner } => inner.poll(cx),
            SleepProj::Local { inner } => inner.poll(cx),
        }
    }
}

/// The instant `duration` from now (far in the future for a duration too long to add).
pub(crate) fn after(duration: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(duration).unwrap_or_else(|| now + Duration::from_secs(86_400 * 365))
}

/// A future that did not end in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Elapsed;

pin_project_lite::pin_project! {
    /// `future`, or [`Elapsed`] once its time is up.
    pub(crate) struct Timeout<F> {
        #[pin] future: F,
        #[pin] sleep: Sleep,
    }
}

/// Runs `future` for at most `duration`.
pub(crate) fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    Timeout { future, sleep: sleep(duration) }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(out) = this.future.poll(cx) {
            return Poll::Ready(Ok(out));
        }
        this.sleep.poll(cx).map(|()| Err(Elapsed))
    }
}
