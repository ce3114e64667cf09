//! How the relay says what went wrong with Redis: plainly, naming the cause (`listen()` shows it, and
//! `server.pubsub.lastError`), and within the timeout.

use std::time::Duration;

use redis::{RedisError, Value};

pub(super) const LOST: &str = "the connection to Redis was lost";

/// A failure to reach Redis, said plainly.
pub(super) fn describe(e: &RedisError) -> String {
    use redis::ErrorKind;
    let code = e.code().unwrap_or_default();
    if code == "NOPERM" {
        return format!("Redis's ACL does not allow it ({e})");
    }
    if e.kind() == ErrorKind::AuthenticationFailed || matches!(code, "WRONGPASS" | "NOAUTH") {
        return format!("Redis refused the credentials ({e})");
    }
    if e.is_connection_refusal() {
        return format!("the connection was refused ({e})");
    }
    if e.is_timeout() {
        return format!("no answer in time ({e})");
    }
    let text = e.to_string();
    if text.contains("certificate") {
        return format!("its TLS certificate could not be verified ({text})");
    }
    if text.contains("HELLO") {
        return format!("it does not speak RESP3: Redis 6 or later (or Valkey) is needed ({text})");
    }
    text
}

/// `work`, within `timeout`; its failure said plainly.
pub(super) async fn within<T>(
    timeout: Duration,
    work: impl std::future::Future<Output = redis::RedisResult<T>>,
) -> Result<T, String> {
    match tokio::time::timeout(timeout, work).await {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(e)) => Err(describe(&e)),
        Err(_) => Err(format!("Redis did not answer within {} ms", timeout.as_millis())),
    }
}

/// The replies of a pipeline of (un)subscribes, or why Redis refused one: a moved slot (the link starts over and
/// reads the cluster's map again), an ACL, anything else.
pub(super) fn accepted(replies: Vec<Value>) -> Result<(), String> {
    match replies.into_iter().find_map(|reply| if let Value::ServerError(e) = reply { Some(e) } else { None }) {
        None => Ok(()),
        Some(e) => Err(describe(&RedisError::from(e))),
    }
}
