//! How the relay says what went wrong with Redis: plainly, naming the cause (`listen()` shows it, and
//! `server.pubsub.lastError`), and within the timeout.

use std::time::Duration;

use redis::{RedisError, Value};

pub(super) const LOST: &str = "the connection to Redis was lost";

/// How each failure is said, and the code `listen()`'s error carries for it ([`code_of`]): the phrases are this
/// file's own, so the code follows from the text the relay keeps (`lastError` too).
const FAILURES: [(&str, &str); 7] = [
    ("Redis's ACL does not allow it", "ERR_GUST_REDIS_ACL"),
    ("Redis refused the credentials", "ERR_GUST_REDIS_AUTH"),
    ("the connection was refused", "ECONNREFUSED"),
    ("the host name does not resolve", "ENOTFOUND"),
    ("no answer in time", "ETIMEDOUT"),
    ("its TLS certificate could not be verified", "ERR_GUST_REDIS_TLS"),
    ("it does not speak RESP3", "ERR_GUST_REDIS_RESP3"),
];

/// The phrase of the failure whose code is `code`.
fn said(code: &str) -> &'static str {
    FAILURES.iter().find(|(_, c)| *c == code).map_or("", |(phrase, _)| phrase)
}

/// The code of a failure described here: `ECONNREFUSED`, `ENOTFOUND`, `ETIMEDOUT` as Node's own sockets name
/// them, `ERR_GUST_REDIS_AUTH`, `_ACL`, `_TLS`, `_RESP3` for what only Redis says, and `ERR_GUST_REDIS` for
/// anything else (a seed list that is not a cluster's, a command the server lacks).
pub(super) fn code_of(cause: &str) -> &'static str {
    FAILURES.iter().find(|(phrase, _)| cause.starts_with(phrase)).map_or("ERR_GUST_REDIS", |(_, code)| code)
}

/// A wait that ended without an answer, said as [`describe`] says a timeout.
pub(super) fn timed_out(what: &str) -> String {
    format!("{}: {what}", said("ETIMEDOUT"))
}

/// A failure to reach Redis, said plainly.
pub(super) fn describe(e: &RedisError) -> String {
    use redis::ErrorKind;
    let code = e.code().unwrap_or_default();
    if code == "NOPERM" {
        return format!("{} ({e})", said("ERR_GUST_REDIS_ACL"));
    }
    if e.kind() == ErrorKind::AuthenticationFailed || matches!(code, "WRONGPASS" | "NOAUTH") {
        return format!("{} ({e})", said("ERR_GUST_REDIS_AUTH"));
    }
    if e.is_connection_refusal() {
        return format!("{} ({e})", said("ECONNREFUSED"));
    }
    if e.is_timeout() {
        return format!("{} ({e})", said("ETIMEDOUT"));
    }
    let text = e.to_string();
    // The resolver's failure, as the standard library words it (`getaddrinfo` said the name is unknown).
    if text.contains("failed to lookup address") {
        return format!("{} ({text})", said("ENOTFOUND"));
    }
    if text.contains("certificate") {
        return format!("{} ({text})", said("ERR_GUST_REDIS_TLS"));
    }
    if text.contains("HELLO") {
        return format!("{}: Redis 6 or later (or Valkey) is needed ({text})", said("ERR_GUST_REDIS_RESP3"));
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
        Err(_) => Err(timed_out(&format!("Redis did not answer within {} ms", timeout.as_millis()))),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_is_said_with_its_code() {
        for (phrase, code) in FAILURES {
            assert_eq!(code_of(&format!("{phrase} (details)")), code);
            assert_eq!(said(code), phrase);
        }
        assert_eq!(code_of(&timed_out("Redis did not answer within 50 ms")), "ETIMEDOUT");
        assert_eq!(code_of("127.0.0.1:7000 is not a Redis Cluster node"), "ERR_GUST_REDIS");
        let refused = RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert_eq!(code_of(&describe(&refused)), "ECONNREFUSED");
        let unknown =
            RedisError::from(std::io::Error::other("failed to lookup address information: Name or service not known"));
        assert_eq!(code_of(&describe(&unknown)), "ENOTFOUND");
    }
}
