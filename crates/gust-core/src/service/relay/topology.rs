//! A Redis Cluster's map as the relay reads it: which primary owns each of the 16,384 slots and how to reach
//! each primary, from `CLUSTER SLOTS` (endpoints that are nil, `""` or `"?"` included), and the text fields of
//! `HELLO`'s and the slots' metadata maps.

use redis::{ConnectionAddr, Value};

use super::slot;

/// Which primary owns each slot, and how to reach them.
pub(super) struct Map {
    /// Slot to index in `conns`; `NONE` for a slot no primary serves.
    pub(super) owners: Box<[u16]>,
    /// Each primary's address, by index.
    pub(super) addrs: Vec<(String, u16)>,
    /// The seed's settings (credentials, TLS), for the primaries.
    pub(super) seed: redis::ConnectionInfo,
    /// Why a primary could not be reached.
    pub(super) why: Option<String>,
}

pub(super) const NONE: u16 = u16::MAX;

/// How to reach a primary at `addr`: the seed's settings, its address.
pub(super) fn node_info(seed: &redis::ConnectionInfo, (host, port): &(String, u16)) -> redis::ConnectionInfo {
    let addr = match seed.addr() {
        ConnectionAddr::TcpTls { insecure, .. } => {
            ConnectionAddr::TcpTls { host: host.clone(), port: *port, insecure: *insecure, tls_params: None }
        }
        _ => ConnectionAddr::Tcp(host.clone(), *port),
    };
    seed.clone().set_addr(addr)
}

/// The primaries (their addresses) and each slot's owner (an index among them, or `NONE`), from
/// `CLUSTER SLOTS`.
#[allow(clippy::type_complexity)]
pub(super) fn read_map(
    slots: &Value,
    seed: &redis::ConnectionInfo,
) -> Result<(Vec<(String, u16)>, Box<[u16]>), String> {
    let bad = || "Redis Cluster answered CLUSTER SLOTS with something unexpected".to_owned();
    let Value::Array(ranges) = slots else { return Err(bad()) };
    let mut addrs: Vec<(String, u16)> = Vec::new();
    let mut owners = vec![NONE; slot::SLOTS].into_boxed_slice();
    for range in ranges {
        let Value::Array(range) = range else { return Err(bad()) };
        let (Some(Value::Int(start)), Some(Value::Int(end)), Some(Value::Array(primary))) =
            (range.first(), range.get(1), range.get(2))
        else {
            return Err(bad());
        };
        // The node's endpoint: unknown (nil or "") means the address the seed was reached at; "?" (a hostname
        // endpoint without a hostname) means its IP, from the metadata.
        let host = match primary.first() {
            Some(Value::Nil) => String::new(),
            Some(Value::BulkString(h)) => String::from_utf8_lossy(h).into_owned(),
            Some(Value::SimpleString(h)) => h.clone(),
            _ => return Err(bad()),
        };
        let Some(Value::Int(port)) = primary.get(1) else { return Err(bad()) };
        let host = match host.as_str() {
            "" => seed_host(seed),
            "?" => metadata_ip(primary.get(3)).ok_or_else(|| {
                "a Redis Cluster node announces no endpoint (\"?\") and no IP: set its cluster-announce-hostname"
                    .to_owned()
            })?,
            _ => host,
        };
        let port = u16::try_from(*port).map_err(|_| bad())?;
        let index = match addrs.iter().position(|a| *a == (host.clone(), port)) {
            Some(i) => i,
            None => {
                addrs.push((host, port));
                addrs.len() - 1
            }
        };
        let (start, end) = (usize::try_from(*start).map_err(|_| bad())?, usize::try_from(*end).map_err(|_| bad())?);
        if start > end || end >= slot::SLOTS || index >= usize::from(NONE) {
            return Err(bad());
        }
        owners[start..=end].fill(index as u16);
    }
    Ok((addrs, owners))
}

/// The `ip` of a node's metadata in `CLUSTER SLOTS`.
fn metadata_ip(metadata: Option<&Value>) -> Option<String> {
    field(metadata?, "ip")
}

/// A text field of a map (RESP3), or of pairs in an array (RESP2).
pub(super) fn field(map: &Value, name: &str) -> Option<String> {
    let text = |v: &Value| match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    };
    match map {
        Value::Map(pairs) => pairs.iter().find(|(k, _)| text(k).as_deref() == Some(name)).and_then(|(_, v)| text(v)),
        Value::Array(flat) => {
            flat.chunks(2).find(|kv| text(&kv[0]).as_deref() == Some(name)).and_then(|kv| text(kv.get(1)?))
        }
        _ => None,
    }
}

fn seed_host(seed: &redis::ConnectionInfo) -> String {
    match seed.addr() {
        ConnectionAddr::Tcp(host, _) | ConnectionAddr::TcpTls { host, .. } => host.clone(),
        _ => "127.0.0.1".into(),
    }
}
