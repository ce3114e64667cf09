//! HTTPS over real sockets: the handshake with ALPN, turbo and dynamic routes over TLS (the handler told the
//! request is secure), keep-alive, a bad certificate refused at start, and clients that fail or stall their
//! handshake costing the server nothing.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use gust_core::{ClientAuth, Config, Identity, TlsOptions, TlsVersion};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use support::*;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn tls_config() -> Config {
    config(|c| c.tls = Some(TlsOptions::new(fixture("cert.pem"), fixture("key.pem"))))
}

/// A client that trusts the test CA and offers `alpn`, asking for `localhost`.
fn client(addr: std::net::SocketAddr, alpn: &[&[u8]]) -> StreamOwned<ClientConnection, TcpStream> {
    client_for(addr, alpn, "localhost")
}

fn client_for(addr: std::net::SocketAddr, alpn: &[&[u8]], name: &str) -> StreamOwned<ClientConnection, TcpStream> {
    client_with(addr, alpn, name, None, None)
}

/// A client with every choice: `identity`, the client certificate and key fixtures it presents; `tls12`, offer
/// TLS 1.2 only.
fn client_with(
    addr: std::net::SocketAddr,
    alpn: &[&[u8]],
    name: &str,
    identity: Option<(&str, &str)>,
    tls12: Option<bool>,
) -> StreamOwned<ClientConnection, TcpStream> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&fixture("ca.pem")) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider);
    let builder = if tls12 == Some(true) {
        builder.with_protocol_versions(&[&rustls::version::TLS12])
    } else {
        builder.with_safe_default_protocol_versions()
    };
    let builder = builder.unwrap().with_root_certificates(roots);
    let mut config = match identity {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(&fixture(cert)).map(Result::unwrap).collect();
            let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(&fixture(key)).unwrap();
            builder.with_client_auth_cert(chain, key).unwrap()
        }
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let conn = ClientConnection::new(Arc::new(config), ServerName::try_from(name.to_owned()).unwrap()).unwrap();
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    StreamOwned::new(conn, tcp)
}

/// One response read off a TLS stream: its head and a `content-length` body.
fn read_response(s: &mut impl Read) -> (String, Vec<u8>) {
    let mut buf = Vec::new();
    let mut byte = [0; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).unwrap(), 1, "the connection closed mid-head: {}", String::from_utf8_lossy(&buf));
        buf.push(byte[0]);
    }
    let head = String::from_utf8(buf).unwrap();
    let length = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase().strip_prefix("content-length: ").map(|v| v.trim().parse::<usize>().unwrap())
        })
        .unwrap_or(0);
    let mut body = vec![0; length];
    s.read_exact(&mut body).unwrap();
    (head, body)
}

#[test]
fn https_should_serve_turbo_and_dynamic_routes_on_one_kept_alive_connection() {
    let t = start(tls_config());
    let mut s = client(t.addr(), &[b"http/1.1"]);
    s.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n").unwrap();
    let (head, body) = read_response(&mut s);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(body, b"Hi");
    assert_eq!(s.conn.alpn_protocol(), Some(&b"http/1.1"[..]), "ALPN settles on HTTP/1.1");
    s.write_all(b"POST /echo/a HTTP/1.1\r\nhost: localhost\r\ncontent-length: 3\r\n\r\nabc").unwrap();
    let (head, body) = read_response(&mut s);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let text = String::from_utf8_lossy(&body);
    assert!(text.starts_with("POST /echo/a [\"a\"]"), "{text}");
    assert!(text.lines().next().unwrap().ends_with(" tls"), "the handler is told the request came over TLS: {text}");
}

#[test]
fn a_client_offering_no_alpn_is_served_http1_and_plain_requests_are_not_marked_secure() {
    let t = start(tls_config());
    let mut s = client(t.addr(), &[]);
    s.write_all(b"GET /echo/b HTTP/1.1\r\nhost: localhost\r\n\r\n").unwrap();
    let (head, body) = read_response(&mut s);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(String::from_utf8_lossy(&body).lines().next().unwrap().ends_with(" tls"));
    let plain = start(Config::default());
    let res = roundtrip(plain.addr(), b"GET /echo/b HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert!(!res.text().lines().next().unwrap().ends_with(" tls"), "{}", res.text());
}

#[test]
fn failed_and_stalled_handshakes_cost_nothing_and_others_are_still_served() {
    let t = start(config(|c| {
        c.tls = Some(TlsOptions::new(fixture("cert.pem"), fixture("key.pem")));
        c.header_timeout = Duration::from_millis(300);
    }));
    // Plain HTTP to a TLS port: the handshake fails and the connection is closed.
    let mut plain = connect(t.addr());
    plain.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert!(closed_within(&mut plain, Duration::from_secs(3)), "a failed handshake closes the connection");
    // A client that connects and says nothing is dropped by the header timeout.
    let mut silent = connect(t.addr());
    assert!(closed_within(&mut silent, Duration::from_secs(3)), "a stalled handshake is timed out");
    let mut s = client(t.addr(), &[b"http/1.1"]);
    s.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut s).1, b"Hi");
}

#[test]
fn a_bad_certificate_or_key_fails_the_start_naming_which() {
    let start = |cert: &[u8], key: &[u8]| {
        let mut c = config(|c| c.tls = Some(TlsOptions::new(cert, key)));
        c.addrs = vec!["127.0.0.1:0".parse().unwrap()];
        gust_core::Server::start(c, routes(), Arc::new(Refuse)).err().map(|e| (e.is_config(), e.to_string()))
    };
    let (cert, key) = (fixture("cert.pem"), fixture("key.pem"));
    let (config_error, message) = start(b"garbage", &key).unwrap();
    assert!(config_error && message.contains("tls.cert"), "{message}");
    let (_, message) = start(&cert, &fixture("encrypted-key.pem")).unwrap();
    assert!(message.contains("tls.key: the private key is encrypted"), "{message}");
    let (_, message) = start(&cert, &fixture("other-key.pem")).unwrap();
    assert!(message.contains("does not fit the certificate"), "{message}");
}

#[test]
fn a_reloaded_certificate_is_presented_to_new_handshakes_while_open_connections_go_on() {
    let t = start(tls_config());
    let mut old = client(t.addr(), &[b"http/1.1"]);
    old.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut old).1, b"Hi");
    // A pair that does not fit is refused, and the server keeps its certificate.
    let bad = TlsOptions::new(fixture("cert.pem"), fixture("other-key.pem"));
    assert!(t.server.reload_tls(&bad).unwrap_err().to_string().contains("does not fit"));
    let mut still = client(t.addr(), &[]);
    still.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut still).1, b"Hi");

    t.server.reload_tls(&TlsOptions::new(fixture("other-cert.pem"), fixture("other-key.pem"))).unwrap();
    let mut new = client_for(t.addr(), &[], "other.test");
    new.write_all(b"GET / HTTP/1.1\r\nhost: other.test\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut new).1, b"Hi", "a new handshake gets the new certificate");
    let mut refused = client(t.addr(), &[]);
    let failed = refused.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n").and_then(|()| refused.flush());
    assert!(failed.is_err(), "the old name's certificate is no longer presented");
    old.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut old).1, b"Hi", "a connection opened before the reload goes on");

    let plain = start(Config::default());
    let refused = plain.server.reload_tls(&TlsOptions::new(fixture("cert.pem"), fixture("key.pem")));
    assert!(refused.unwrap_err().to_string().contains("started without TLS"));
}

/// `GET /echo/x` over `s`: the answer's status line and its `x-tls` header (the handler's view of the TLS
/// section), or the error that ended the connection.
fn tls_seen(s: &mut StreamOwned<ClientConnection, TcpStream>, host: &str) -> Result<String, String> {
    s.write_all(format!("GET /echo/x HTTP/1.1\r\nhost: {host}\r\n\r\n").as_bytes()).map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    let mut byte = [0; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => buf.push(byte[0]),
            Ok(_) => return Err("closed".into()),
            Err(e) => return Err(e.to_string()),
        }
    }
    let head = String::from_utf8(buf).unwrap();
    Ok(head.lines().find_map(|l| l.strip_prefix("x-tls: ")).unwrap_or_default().to_owned())
}

#[test]
fn the_certificate_is_chosen_by_the_host_the_client_names() {
    let mut other = Identity::new(fixture("other-cert.pem"), fixture("other-key.pem"));
    other.server_name = Some("*.test".into());
    let options = TlsOptions::with_identities(vec![Identity::new(fixture("cert.pem"), fixture("key.pem")), other]);
    let t = start(config(|c| c.tls = Some(options)));
    // The client checks the certificate is for the name it asked: a wrong choice fails the handshake.
    let seen = tls_seen(&mut client_for(t.addr(), &[b"http/1.1"], "other.test"), "other.test").unwrap();
    assert_eq!(seen, "v3 alpn=http/1.1 sni=other.test err= cert=0");
    let seen = tls_seen(&mut client_for(t.addr(), &[], "localhost"), "localhost").unwrap();
    assert_eq!(seen, "v3 alpn= sni=localhost err= cert=0", "the default, for a name no other is for");
    let mut by_ip = client_for(t.addr(), &[], "127.0.0.1");
    assert_eq!(tls_seen(&mut by_ip, "127.0.0.1").unwrap(), "v3 alpn= sni= err= cert=0", "no SNI: the default");
}

/// A server asking for client certificates signed by the test client CA, `required` or not.
fn asking_for_client_certificates(required: bool) -> TestServer {
    let mut options = TlsOptions::new(fixture("cert.pem"), fixture("key.pem"));
    options.client_auth = Some(ClientAuth::new(Some(fixture("client-ca.pem")), required));
    start(config(|c| c.tls = Some(options)))
}

#[test]
fn required_client_certificates_let_in_only_those_the_ca_signed() {
    let t = asking_for_client_certificates(true);
    let alice = Some(("client-cert.pem", "client-key.pem"));
    let seen = tls_seen(&mut client_with(t.addr(), &[], "localhost", alice, None), "localhost").unwrap();
    assert!(seen.starts_with("v3 alpn= sni=localhost asked authorized err= cert="), "{seen}");
    assert!(!seen.ends_with("cert=0"), "the client's certificate reaches the handler: {seen}");
    let stranger = Some(("stranger-cert.pem", "stranger-key.pem"));
    assert!(tls_seen(&mut client_with(t.addr(), &[], "localhost", stranger, None), "localhost").is_err());
    assert!(tls_seen(&mut client_with(t.addr(), &[], "localhost", None, None), "localhost").is_err());
    // TLS 1.2 too.
    let seen = tls_seen(&mut client_with(t.addr(), &[], "localhost", alice, Some(true)), "localhost").unwrap();
    assert!(seen.starts_with("v2 alpn= sni=localhost asked authorized"), "{seen}");
}

#[test]
fn optional_client_certificates_let_everyone_in_and_say_who_was_authorized() {
    let t = asking_for_client_certificates(false);
    let alice = Some(("client-cert.pem", "client-key.pem"));
    let seen = tls_seen(&mut client_with(t.addr(), &[], "localhost", alice, None), "localhost").unwrap();
    assert!(seen.starts_with("v3 alpn= sni=localhost asked authorized err= cert="), "{seen}");
    let stranger = Some(("stranger-cert.pem", "stranger-key.pem"));
    let seen = tls_seen(&mut client_with(t.addr(), &[], "localhost", stranger, None), "localhost").unwrap();
    assert!(seen.starts_with("v3 alpn= sni=localhost asked err=invalid peer certificate"), "{seen}");
    assert!(!seen.ends_with("cert=0"), "{seen}");
    let seen = tls_seen(&mut client_with(t.addr(), &[], "localhost", None, None), "localhost").unwrap();
    assert_eq!(seen, "v3 alpn= sni=localhost asked err=no client certificate cert=0");
}

#[test]
fn an_encrypted_key_serves_with_its_passphrase_and_tls_13_only_refuses_a_12_client() {
    let mut identity = Identity::new(fixture("cert.pem"), fixture("encrypted-key.pem"));
    identity.passphrase = Some("secret".into());
    let mut options = TlsOptions::with_identities(vec![identity]);
    options.min_version = TlsVersion::Tls13;
    let t = start(config(|c| c.tls = Some(options)));
    let seen = tls_seen(&mut client_for(t.addr(), &[b"http/1.1"], "localhost"), "localhost");
    assert!(seen.is_ok(), "{seen:?}");
    assert!(tls_seen(&mut client_with(t.addr(), &[], "localhost", None, Some(true)), "localhost").is_err());
}

struct Refuse;

impl gust_core::Handler for Refuse {
    fn handle(&self, _: gust_core::RequestBatch) -> Result<(), gust_core::Closed> {
        Err(gust_core::Closed)
    }
}

#[test]
fn a_parked_https_connection_serves_its_next_request() {
    let t = start(tls_config());
    let mut s = client(t.addr(), &[b"http/1.1"]);
    s.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut s).1, b"Hi");
    // Idle past half a second: the connection waits without hyper's state (tests/parked.rs), its TLS session kept.
    std::thread::sleep(Duration::from_millis(800));
    s.write_all(b"POST /echo/p HTTP/1.1\r\nhost: localhost\r\ncontent-length: 2\r\n\r\nok").unwrap();
    let (head, body) = read_response(&mut s);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let text = String::from_utf8_lossy(&body);
    assert!(text.starts_with("POST /echo/p [\"p\"]") && text.ends_with("\nok"), "{text}");
}
