//! Futures run together on the relay's thread, without futures-util: commands to several Redis servers (or many
//! commands to one, pipelined by the connection) waited for at once.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// Runs `work` together until all are done; their outputs, in order. Cost: every pending future is polled on
/// each wake-up, so callers keep the batches small (tens).
pub(super) async fn join<F: Future>(work: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut work: Vec<Pin<Box<F>>> = work.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = work.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, done) in work.iter_mut().zip(&mut out) {
            if done.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(output) => *done = Some(output),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    out.into_iter().map(|o| o.expect("every future is done")).collect()
}

/// Runs `work` together until all are done (none is cut short: each counts what it did); the first failure.
pub(super) async fn all<F: Future<Output = Result<(), String>>>(
    work: impl IntoIterator<Item = F>,
) -> Result<(), String> {
    join(work).await.into_iter().collect()
}
