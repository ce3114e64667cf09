//! compare-fair's WebSocket load client. No existing tool checks every WebSocket answer, so this one does, on one
//! thread (the harness pins it to the load core):
//!
//! - `echo <host:port/path> <connections> <seconds> <size>`: each connection sends a text message of `size`
//!   bytes naming itself and its sequence number, waits for the echo, checks it byte for byte, and sends the
//!   next. A round trip is one "request".
//! - `fanout <host:port/path> <subscribers> <seconds> <size>`: `subscribers` sockets wait for the server's
//!   `ready` (sent once it has subscribed them), then one more socket publishes `p<seq>:…` messages; the server
//!   publishes each to every other socket and acknowledges with how many it reached. The publisher keeps at most
//!   [`WINDOW`] messages ahead of the slowest subscriber, so the server is never asked to queue without bound.
//!   Every subscriber checks that sequence numbers arrive in order without a gap; at the end each must have all
//!   of them. A delivery is one "request".
//! - `idle <host:port/path> <connections>`: opens the sockets, prints `ready <opened> <failed>`, and holds them
//!   (answering pings) until stdin closes.
//!
//! - `relay <host:port/path> <host:port/path> <subscribers> <seconds> <rate> <size>`: pub/sub across two
//!   processes (see `relay.rs`).
//!
//! Add `--validate` to `echo` or `fanout` for a short run that must be perfect (the harness runs it before load).
//! Add `--h2` to `echo` or `fanout` to open every socket over HTTP/2 (RFC 8441): one h2c connection carries them
//! all, each an extended CONNECT stream, as a browser holding a connection to the server opens them.
//! Add `--deflate` to `echo` to offer permessage-deflate without context takeover either way (RFC 7692): the
//! server must agree, every message is sent compressed, padded with text instead of `x` (so compressing it has
//! work to do), and every echo must come back compressed and inflate to the message.
//! Prints one JSON line: `messages` (or `deliveries`), `seconds`, `wrong`, `errors`, `p50_ms`, `p99_ms`.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::task::LocalSet;

mod h2;
mod relay;

/// Messages the publisher may be ahead of the slowest subscriber.
const WINDOW: u64 = 16;

struct Target {
    addr: String,
    path: String,
    deflate: bool,
    /// `--h2`: the one HTTP/2 connection every socket is a stream of, opened by the first.
    h2: Option<tokio::sync::OnceCell<h2::Sender>>,
}

fn target(url: &str, deflate: bool, over_h2: bool) -> Target {
    let url = url.trim_start_matches("ws://").trim_start_matches("http://");
    let (addr, path) = url.split_once('/').map_or((url, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    Target { addr: addr.to_owned(), path, deflate, h2: over_h2.then(tokio::sync::OnceCell::new) }
}

/// permessage-deflate's codec on the client's side, no context kept either way: a message is compressed with a
/// sync flush and sent without its 4-byte tail; one received is inflated with the tail put back.
struct Deflate {
    compress: flate2::Compress,
    decompress: flate2::Decompress,
}

const TAIL: [u8; 4] = [0, 0, 0xFF, 0xFF];

impl Deflate {
    fn new() -> Self {
        Self {
            compress: flate2::Compress::new_with_window_bits(flate2::Compression::fast(), false, 15),
            decompress: flate2::Decompress::new(false),
        }
    }

    fn deflate(&mut self, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(payload.len() + 64);
        loop {
            let used = self.compress.total_in() as usize;
            self.compress.compress_vec(&payload[used..], &mut out, flate2::FlushCompress::Sync).expect("deflate");
            if self.compress.total_in() as usize == payload.len() && out.len() < out.capacity() {
                break;
            }
            out.reserve(out.capacity());
        }
        self.compress.reset();
        out.truncate(out.len().saturating_sub(TAIL.len()));
        out
    }

    fn inflate(&mut self, payload: &[u8]) -> Option<Vec<u8>> {
        self.decompress.reset(false);
        let input = [payload, &TAIL].concat();
        let mut out = Vec::with_capacity(payload.len() * 8 + 1024);
        loop {
            let used = self.decompress.total_in() as usize;
            self.decompress.decompress_vec(&input[used..], &mut out, flate2::FlushDecompress::Sync).ok()?;
            if self.decompress.total_in() as usize == input.len() && out.len() < out.capacity() {
                return Some(out);
            }
            out.reserve(out.capacity());
        }
    }
}

/// One client socket: the read side with its buffer, and the write side.
struct Conn {
    /// A TCP connection's halves, or an HTTP/2 stream's (`--h2`).
    rd: Box<dyn AsyncRead + Unpin>,
    wr: Box<dyn AsyncWrite + Unpin>,
    buf: Vec<u8>,
    mask: u32,
    /// permessage-deflate, agreed.
    deflate: Option<Box<Deflate>>,
    /// The last data frame `next` returned came compressed.
    compressed: bool,
}

impl Conn {
    async fn open(t: &Target, n: u32) -> io::Result<Self> {
        let offer = "permessage-deflate; server_no_context_takeover; client_no_context_takeover";
        let mask = 0x9E37_79B9u32.wrapping_mul(n + 1);
        if let Some(cell) = &t.h2 {
            let sender = cell.get_or_try_init(|| h2::connect(&t.addr)).await?;
            let (rd, wr, head) = h2::open(sender, &t.addr, &t.path, t.deflate.then_some(offer)).await?;
            if t.deflate && !head.contains("sec-websocket-extensions: permessage-deflate") {
                return Err(io::Error::other("the server did not agree to permessage-deflate"));
            }
            let deflate = t.deflate.then(|| Box::new(Deflate::new()));
            return Ok(Self { rd: Box::new(rd), wr: Box::new(wr), buf: Vec::new(), mask, deflate, compressed: false });
        }
        let stream = TcpStream::connect(&t.addr).await?;
        stream.set_nodelay(true)?;
        let (mut rd, mut wr) = stream.into_split();
        let key = "dGhlIHNhbXBsZSBub25jZQ==";
        let offer = if t.deflate { format!("Sec-WebSocket-Extensions: {offer}\r\n") } else { String::new() };
        let req = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: {key}\r\n{offer}\r\n",
            t.path, t.addr
        );
        wr.write_all(req.as_bytes()).await?;
        let mut buf = Vec::with_capacity(4096);
        let end = loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
            let mut chunk = [0u8; 2048];
            let n = rd.read(&mut chunk).await?;
            if n == 0 {
                return Err(io::Error::other("closed during the handshake"));
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        if !buf.starts_with(b"HTTP/1.1 101") {
            let head = String::from_utf8_lossy(&buf[..end.min(80)]).into_owned();
            return Err(io::Error::other(format!("no 101: {head}")));
        }
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        if t.deflate && !head.contains("sec-websocket-extensions: permessage-deflate") {
            return Err(io::Error::other("the server did not agree to permessage-deflate"));
        }
        buf.drain(..end);
        let deflate = t.deflate.then(|| Box::new(Deflate::new()));
        Ok(Self { rd: Box::new(rd), wr: Box::new(wr), buf, mask, deflate, compressed: false })
    }

    async fn send(&mut self, opcode: u8, payload: &[u8]) -> io::Result<()> {
        // Data messages go compressed where permessage-deflate was agreed (RSV1 on the frame).
        let (first, deflated) = match &mut self.deflate {
            Some(d) if opcode == 1 || opcode == 2 => (0xC0 | opcode, Some(d.deflate(payload))),
            _ => (0x80 | opcode, None),
        };
        let payload = deflated.as_deref().unwrap_or(payload);
        let mut frame = Vec::with_capacity(payload.len() + 14);
        frame.push(first);
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n <= 0xFFFF => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        self.mask = self.mask.rotate_left(7) ^ 0x5bd1_e995;
        let mask = self.mask.to_be_bytes();
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i & 3]));
        self.wr.write_all(&frame).await
    }

    /// The next data frame (`opcode`, payload); pings are answered on the way. `None` once the server closed.
    async fn next(&mut self) -> io::Result<Option<(u8, Vec<u8>)>> {
        loop {
            if let Some((first, payload, used)) = parse(&self.buf) {
                self.buf.drain(..used);
                let opcode = first & 0x0F;
                self.compressed = first & 0x40 != 0;
                let payload = match &mut self.deflate {
                    Some(d) if self.compressed => d.inflate(&payload).ok_or_else(|| io::Error::other("bad deflate"))?,
                    _ => payload,
                };
                match opcode {
                    0x9 => self.send(0xA, &payload).await?,
                    0xA => {}
                    0x8 => return Ok(None),
                    _ => return Ok(Some((opcode, payload))),
                }
                continue;
            }
            let len = self.buf.len();
            self.buf.resize(len + 16 * 1024, 0);
            let n = self.rd.read(&mut self.buf[len..]).await?;
            self.buf.truncate(len + n);
            if n == 0 {
                return Ok(None);
            }
        }
    }
}

/// A whole server frame at the front of `buf`: its first byte (flags and opcode), payload, bytes used.
fn parse(buf: &[u8]) -> Option<(u8, Vec<u8>, usize)> {
    if buf.len() < 2 {
        return None;
    }
    let (len, at) = match buf[1] & 0x7F {
        126 if buf.len() >= 4 => (u16::from_be_bytes([buf[2], buf[3]]) as usize, 4),
        127 if buf.len() >= 10 => (u64::from_be_bytes(buf[2..10].try_into().ok()?) as usize, 10),
        126 | 127 => return None,
        n => (n as usize, 2),
    };
    if buf.len() < at + len {
        return None;
    }
    Some((buf[0], buf[at..at + len].to_vec(), at + len))
}

/// A message of `size` bytes that names its sender and sequence number, padded with `x`, or with JSON-like
/// records that count up where compression is tested (`x` alone would compress to almost nothing, and cost
/// almost nothing).
fn message(prefix: &str, size: usize, text: bool) -> Vec<u8> {
    let mut m = prefix.as_bytes().to_vec();
    let mut k = 0;
    while text && m.len() < size {
        m.extend_from_slice(
            format!("{{\"user\":\"ada\",\"n\":{k},\"text\":\"the quick brown fox, {}\"}}", k * 7919 % 1000).as_bytes(),
        );
        k += 1;
    }
    m.resize(size.max(prefix.len()), b'x');
    m
}

#[derive(Default)]
struct Tally {
    count: Cell<u64>,
    wrong: Cell<u64>,
    errors: Cell<u64>,
    first_wrong: RefCell<Option<String>>,
    latencies_us: RefCell<Vec<u32>>,
}

impl Tally {
    fn wrong(&self, what: String) {
        self.wrong.set(self.wrong.get() + 1);
        self.first_wrong.borrow_mut().get_or_insert(what);
    }
}

/// A connection, or `None` with the failure counted as an error (and kept, if it is the first).
async fn open_counted(t: &Target, n: u32, tally: &Tally) -> Option<Conn> {
    match Conn::open(t, n).await {
        Ok(conn) => Some(conn),
        Err(e) => {
            tally.errors.set(tally.errors.get() + 1);
            tally.first_wrong.borrow_mut().get_or_insert(e.to_string());
            None
        }
    }
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[i]) / 1000.0
}

fn report(key: &str, tally: &Tally, seconds: f64, extra: &str) {
    let mut lat = tally.latencies_us.borrow_mut();
    lat.sort_unstable();
    let first = tally.first_wrong.borrow().clone().unwrap_or_default().replace('"', "'");
    println!(
        "{{\"{key}\":{},\"seconds\":{seconds:.3},\"wrong\":{},\"errors\":{},\"p50_ms\":{:.3},\"p99_ms\":{:.3},\"wrong_sample\":\"{}\"{extra}}}",
        tally.count.get(),
        tally.wrong.get(),
        tally.errors.get(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        first.chars().take(120).collect::<String>(),
    );
}

async fn echo(t: Rc<Target>, connections: u32, seconds: f64, size: usize, validate: bool) -> i32 {
    let tally = Rc::new(Tally::default());
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..connections {
        let (t, tally) = (t.clone(), tally.clone());
        tasks.push(tokio::task::spawn_local(async move {
            let Some(mut conn) = open_counted(&t, c, &tally).await else { return };
            let mut seq = 0u64;
            loop {
                let done = if validate { seq >= 50 } else { Instant::now() >= deadline };
                if done {
                    break;
                }
                // Every tenth message of a validation run is binary, and must come back binary.
                let binary = validate && seq % 10 == 9;
                let m = message(&format!("c{c}:{seq}:"), size, t.deflate);
                let sent = Instant::now();
                if conn.send(if binary { 2 } else { 1 }, &m).await.is_err() {
                    tally.errors.set(tally.errors.get() + 1);
                    return;
                }
                match conn.next().await {
                    Ok(Some((op, payload)))
                        if payload == m && op == if binary { 2 } else { 1 } && conn.compressed == t.deflate =>
                    {
                        tally.count.set(tally.count.get() + 1);
                        tally.latencies_us.borrow_mut().push(sent.elapsed().as_micros().min(u32::MAX as u128) as u32);
                    }
                    Ok(Some((op, payload))) => tally.wrong(format!(
                        "opcode {op}, compressed {}, {:?}",
                        conn.compressed,
                        String::from_utf8_lossy(&payload[..payload.len().min(40)])
                    )),
                    Ok(None) | Err(_) => {
                        tally.errors.set(tally.errors.get() + 1);
                        return;
                    }
                }
                seq += 1;
            }
            let _ = conn.send(8, &1000u16.to_be_bytes()).await;
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    let seconds = started.elapsed().as_secs_f64();
    report("messages", &tally, seconds, "");
    if validate && (tally.wrong.get() > 0 || tally.errors.get() > 0 || tally.count.get() != u64::from(connections) * 50)
    {
        eprintln!("echo validation failed: {} of {} right", tally.count.get(), connections * 50);
        return 1;
    }
    0
}

/// Per published sequence number (from `base`), how many subscribers have it.
#[derive(Default)]
struct Progress {
    base: u64,
    counts: VecDeque<u32>,
}

async fn fanout(t: Rc<Target>, subscribers: u32, seconds: f64, size: usize, validate: bool) -> i32 {
    let tally = Rc::new(Tally::default());
    let ready = Rc::new(Cell::new(0u32));
    let all_ready = Rc::new(Notify::new());
    let progress = Rc::new(RefCell::new(Progress::default()));
    let advanced = Rc::new(Notify::new());
    let measuring = Rc::new(Cell::new(true));
    let last = Rc::new(Cell::new(u64::MAX));
    let mut subs = Vec::new();
    for s in 0..subscribers {
        let (t, tally, ready, all_ready, progress, advanced, measuring, last) = (
            t.clone(),
            tally.clone(),
            ready.clone(),
            all_ready.clone(),
            progress.clone(),
            advanced.clone(),
            measuring.clone(),
            last.clone(),
        );
        // Opened in waves, so the server's accept queue never overflows.
        if s % 200 == 199 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        subs.push(tokio::task::spawn_local(async move {
            let Some(mut conn) = open_counted(&t, s, &tally).await else { return };
            match conn.next().await {
                Ok(Some((_, p))) if p == b"ready" => {}
                _ => {
                    tally.wrong("no ready".to_owned());
                    return;
                }
            }
            ready.set(ready.get() + 1);
            if ready.get() == subscribers {
                all_ready.notify_one();
            }
            let mut expected = 0u64;
            loop {
                if last.get() != u64::MAX && expected > last.get() {
                    break;
                }
                let payload = match conn.next().await {
                    Ok(Some((_, p))) => p,
                    _ => {
                        tally.errors.set(tally.errors.get() + 1);
                        return;
                    }
                };
                let seq = std::str::from_utf8(&payload)
                    .ok()
                    .and_then(|s| s.strip_prefix('p'))
                    .and_then(|s| s.split(':').next())
                    .and_then(|s| s.parse::<u64>().ok());
                if seq != Some(expected) || payload.len() != size.max(payload.len().min(size)) {
                    tally.wrong(format!(
                        "subscriber {s} expected p{expected}, got {:?}",
                        String::from_utf8_lossy(&payload[..payload.len().min(30)])
                    ));
                    return;
                }
                if measuring.get() {
                    tally.count.set(tally.count.get() + 1);
                }
                let mut p = progress.borrow_mut();
                let at = (expected - p.base) as usize;
                if let Some(c) = p.counts.get_mut(at) {
                    *c += 1;
                    if *c == subscribers && at == 0 {
                        drop(p);
                        advanced.notify_one();
                    }
                }
                expected += 1;
            }
        }));
    }
    if ready.get() < subscribers {
        let wait = tokio::time::timeout(Duration::from_secs(30), all_ready.notified()).await;
        if wait.is_err() {
            eprintln!("fanout: only {} of {subscribers} subscribers were ready", ready.get());
            return 1;
        }
    }
    let mut publisher = match Conn::open(&t, subscribers).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fanout: the publisher could not connect: {e}");
            return 1;
        }
    };
    let _ = publisher.next().await; // its own `ready`
    let (mut prd, mut pwr) = (publisher.rd, publisher.wr);
    let pbuf = std::mem::take(&mut publisher.buf);
    // Acknowledgements: how many sockets each publish reached.
    let acks = {
        let tally = tally.clone();
        tokio::task::spawn_local(async move {
            let mut conn_buf = pbuf;
            let mut acks = 0u64;
            loop {
                while let Some((op, payload, used)) = parse(&conn_buf) {
                    conn_buf.drain(..used);
                    if op == 1 {
                        acks += 1;
                        if payload != subscribers.to_string().as_bytes() {
                            tally.wrong(format!(
                                "publish reached {:?}, not {subscribers}",
                                String::from_utf8_lossy(&payload)
                            ));
                        }
                    }
                }
                let len = conn_buf.len();
                conn_buf.resize(len + 4096, 0);
                match prd.read(&mut conn_buf[len..]).await {
                    Ok(0) | Err(_) => return acks,
                    Ok(n) => conn_buf.truncate(len + n),
                }
            }
        })
    };
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds);
    let mut seq = 0u64;
    let mut mask = 0x1234_5678u32;
    loop {
        let done = if validate { seq >= 200 } else { Instant::now() >= deadline };
        if done {
            break;
        }
        // Never more than WINDOW ahead of the slowest subscriber.
        loop {
            {
                let mut p = progress.borrow_mut();
                while p.counts.front() == Some(&subscribers) {
                    p.counts.pop_front();
                    p.base += 1;
                }
                if seq < p.base + WINDOW {
                    p.counts.push_back(0);
                    break;
                }
            }
            if tokio::time::timeout(Duration::from_secs(10), advanced.notified()).await.is_err() {
                eprintln!("fanout: subscribers stopped receiving at p{}", progress.borrow().base);
                return 1;
            }
        }
        let m = message(&format!("p{seq}:"), size, false);
        mask = mask.rotate_left(5) ^ 0x9E37_79B9;
        let mut frame = vec![0x81, 0x80 | m.len() as u8];
        frame.extend_from_slice(&mask.to_be_bytes());
        let k = mask.to_be_bytes();
        frame.extend(m.iter().enumerate().map(|(i, b)| b ^ k[i & 3]));
        if pwr.write_all(&frame).await.is_err() {
            eprintln!("fanout: the publisher's connection failed");
            return 1;
        }
        seq += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    measuring.set(false);
    last.set(seq - 1);
    // Every subscriber must end up with every message.
    let drained = tokio::time::timeout(Duration::from_secs(10), async {
        for s in subs {
            let _ = s.await;
        }
    })
    .await;
    if drained.is_err() {
        tally.wrong("subscribers did not receive every message within 10 s".to_owned());
    }
    let _ = pwr.shutdown().await;
    let acks = tokio::time::timeout(Duration::from_secs(5), acks).await.ok().and_then(Result::ok).unwrap_or(0);
    report("deliveries", &tally, seconds, &format!(",\"publishes\":{seq},\"acks\":{acks}"));
    if validate && (tally.wrong.get() > 0 || tally.errors.get() > 0) {
        eprintln!("fanout validation failed");
        return 1;
    }
    0
}

async fn idle(t: Rc<Target>, connections: u32) -> i32 {
    let opened = Rc::new(Cell::new(0u32));
    let failed = Rc::new(Cell::new(0u32));
    let mut holders = Vec::new();
    for c in 0..connections {
        if c % 500 == 499 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let (t, opened, failed) = (t.clone(), opened.clone(), failed.clone());
        holders.push(tokio::task::spawn_local(async move {
            match Conn::open(&t, c).await {
                Ok(mut conn) => {
                    opened.set(opened.get() + 1);
                    while let Ok(Some(_)) = conn.next().await {}
                }
                Err(_) => failed.set(failed.get() + 1),
            }
        }));
    }
    for _ in 0..600 {
        if opened.get() + failed.get() >= connections {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!("ready {} {}", opened.get(), failed.get());
    let mut line = String::new();
    let _ = tokio::io::BufReader::new(tokio::io::stdin()).read_line(&mut line).await;
    0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let validate = args.iter().any(|a| a == "--validate");
    let deflate = args.iter().any(|a| a == "--deflate");
    let over_h2 = args.iter().any(|a| a == "--h2");
    let flags = ["--validate", "--deflate", "--h2"];
    let args: Vec<&str> = args.iter().map(String::as_str).filter(|a| !flags.contains(a)).collect();
    let usage = "usage: ws-load echo|fanout <host:port/path> <connections> <seconds> <size> [--validate] [--deflate] [--h2] | idle <host:port/path> <connections> | relay <host:port/path> <host:port/path> <subscribers> <seconds> <rate> <size> [--validate]";
    let (Some(mode), Some(url)) = (args.first(), args.get(1)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let num = |i: usize, d: f64| args.get(i).and_then(|a| a.parse::<f64>().ok()).unwrap_or(d);
    let t = Rc::new(target(url, deflate && *mode == "echo", over_h2 && (*mode == "echo" || *mode == "fanout")));
    let (url, other) = ((*url).to_owned(), args.get(2).map_or_else(String::new, |a| (*a).to_owned()));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let code = LocalSet::new().block_on(&runtime, async move {
        match *mode {
            "echo" => echo(t, num(2, 64.0) as u32, num(3, 5.0), num(4, 32.0) as usize, validate).await,
            "fanout" => fanout(t, num(2, 1000.0) as u32, num(3, 5.0), num(4, 32.0).min(125.0) as usize, validate).await,
            "idle" => idle(t, num(2, 10_000.0) as u32).await,
            "relay" => {
                relay::relay(
                    [&url, &other],
                    num(3, 1000.0) as u32,
                    num(4, 5.0),
                    num(5, 1000.0),
                    num(6, 32.0) as usize,
                    validate,
                )
                .await
            }
            _ => {
                eprintln!("{usage}");
                2
            }
        }
    });
    std::process::exit(code);
}
