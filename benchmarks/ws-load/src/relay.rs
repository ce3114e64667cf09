//! `relay <hostA:port/path> <hostB:port/path> <subscribers> <seconds> <rate> <size>`: pub/sub across two
//! processes (through Redis). `subscribers` sockets on each server wait for its `ready` (sent once it has
//! subscribed them to the topic); one more socket on each publishes, `rate` messages a second in all, half on
//! each server, each naming its publisher, its sequence number and when it was sent. The server publishes every
//! message to the topic's other sockets, in its process and, through Redis, in the other. Every subscriber checks
//! that each publisher's messages arrive in order without a gap and, at the end, that none is missing; the time
//! from publish to delivery is sampled where the subscriber is on the other server (the relay's latency). A
//! delivery is one "request". With `--validate`: 200 messages, which must all arrive.
//!
//! Prints one JSON line: `deliveries`, `seconds`, `wrong`, `errors`, `p50_ms`, `p99_ms` (across processes),
//! `publishes`, `missing`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;

use super::{message, open_counted, report, target, Conn, Tally};

/// Publishers, by the letter their messages start with.
const ORIGINS: [u8; 2] = [b'a', b'b'];

/// One subscriber's view: the next sequence number expected from each publisher.
struct Seen {
    next: [u64; 2],
}

pub(super) async fn relay(
    urls: [&str; 2],
    subscribers: u32,
    seconds: f64,
    rate: f64,
    size: usize,
    validate: bool,
) -> i32 {
    let targets = urls.map(|u| Rc::new(target(u, false, false)));
    let tally = Rc::new(Tally::default());
    let epoch = Instant::now();
    let measuring = Rc::new(Cell::new(false));
    let seen: Rc<RefCell<Vec<Seen>>> = Rc::new(RefCell::new(Vec::new()));
    let ready = Rc::new(Cell::new(0u32));
    let total = subscribers * 2;
    let mut tasks = Vec::new();
    for side in 0..2usize {
        for s in 0..subscribers {
            // Opened in waves, so no accept queue overflows.
            if s % 200 == 199 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let index = seen.borrow().len();
            seen.borrow_mut().push(Seen { next: [0, 0] });
            let (t, tally, measuring, seen, ready) =
                (targets[side].clone(), tally.clone(), measuring.clone(), seen.clone(), ready.clone());
            tasks.push(tokio::task::spawn_local(async move {
                let Some(mut conn) = open_counted(&t, s, &tally).await else { return };
                if !matches!(conn.next().await, Ok(Some((_, p))) if p == b"ready") {
                    tally.wrong("no ready".to_owned());
                    return;
                }
                ready.set(ready.get() + 1);
                loop {
                    let payload = match conn.next().await {
                        Ok(Some((_, p))) => p,
                        _ => return,
                    };
                    let now = epoch.elapsed();
                    let Some((origin, seq, sent)) = fields(&payload) else {
                        tally.wrong(format!(
                            "unreadable {:?}",
                            String::from_utf8_lossy(&payload[..payload.len().min(30)])
                        ));
                        continue;
                    };
                    let o = usize::from(origin == b'b');
                    let mut all = seen.borrow_mut();
                    let expected = &mut all[index].next[o];
                    // Before the run, while subscriptions reach Redis, the first messages may not all arrive;
                    // from then on every one must, in order.
                    if measuring.get() && seq != *expected {
                        tally.wrong(format!(
                            "subscriber {side}/{s} expected {}{expected}, got {}{seq}",
                            origin as char, origin as char
                        ));
                    }
                    *expected = seq + 1;
                    if measuring.get() {
                        tally.count.set(tally.count.get() + 1);
                        // Across processes: a message published on the other server.
                        if o != side {
                            let us = now.as_micros().saturating_sub(u128::from(sent));
                            tally.latencies_us.borrow_mut().push(u32::try_from(us).unwrap_or(u32::MAX));
                        }
                    }
                }
            }));
        }
    }
    for _ in 0..600 {
        if ready.get() == total {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if ready.get() < total {
        eprintln!("relay: only {} of {total} subscribers were ready", ready.get());
        return 1;
    }
    // The publishers (subscribed too, as every socket of the route: what reaches them is read and dropped).
    let mut writers = Vec::new();
    for side in 0..2usize {
        let mut conn = match Conn::open(&targets[side], total + side as u32).await {
            Ok(c) => c,
            Err(e) => {
                eprintln!("relay: a publisher could not connect: {e}");
                return 1;
            }
        };
        let _ = conn.next().await;
        let (mut rd, wr) = (conn.rd, conn.wr);
        tasks.push(tokio::task::spawn_local(async move {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n) = tokio::io::AsyncReadExt::read(&mut rd, &mut buf).await {
                if n == 0 {
                    break;
                }
            }
        }));
        writers.push(wr);
    }
    // Numbered messages from each side until every subscriber has one from both publishers: the subscriptions
    // have reached Redis, and the run starts.
    let mut sent = [0u64; 2];
    let deadline = Instant::now() + Duration::from_secs(20);
    while !seen.borrow().iter().all(|s| s.next[0] > 0 && s.next[1] > 0) {
        if Instant::now() > deadline {
            eprintln!("relay: messages did not reach every subscriber of both servers within 20 s");
            return 1;
        }
        for side in 0..2usize {
            let prefix = format!("{}{}:{}:", ORIGINS[side] as char, sent[side], epoch.elapsed().as_micros());
            send(&mut writers[side], prefix.as_bytes(), side as u32).await;
            sent[side] += 1;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // What is still on its way from the probes arrives before the first numbered message of the run.
    tokio::time::sleep(Duration::from_millis(200)).await;
    measuring.set(true);
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds);
    let per_tick = rate / 2.0 / 1000.0;
    let mut owed = 0.0f64;
    let mut ticker = tokio::time::interval(Duration::from_millis(1));
    loop {
        ticker.tick().await;
        let done =
            if validate { Instant::now() >= started + Duration::from_millis(200) } else { Instant::now() >= deadline };
        if done {
            break;
        }
        owed += per_tick;
        while owed >= 1.0 {
            owed -= 1.0;
            for side in 0..2usize {
                let prefix = format!("{}{}:{}:", ORIGINS[side] as char, sent[side], epoch.elapsed().as_micros());
                send(&mut writers[side], &message(&prefix, size, false), side as u32).await;
                sent[side] += 1;
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    measuring.set(false);
    // Every subscriber must end with every message.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let missing: u64 =
        seen.borrow().iter().map(|s| (sent[0] - s.next[0].min(sent[0])) + (sent[1] - s.next[1].min(sent[1]))).sum();
    for w in &mut writers {
        let _ = w.shutdown().await;
    }
    for t in tasks {
        t.abort();
    }
    report("deliveries", &tally, seconds, &format!(",\"publishes\":{},\"missing\":{missing}", sent[0] + sent[1]));
    if validate && (tally.wrong.get() > 0 || tally.errors.get() > 0 || missing > 0) {
        eprintln!("relay validation failed");
        return 1;
    }
    0
}

/// One masked text frame.
async fn send(writer: &mut (dyn tokio::io::AsyncWrite + Unpin), payload: &[u8], salt: u32) {
    let mask = (0x9E37_79B9u32 ^ salt).rotate_left(payload.len() as u32 % 31).to_be_bytes();
    let mut frame = vec![0x81];
    if payload.len() < 126 {
        frame.push(0x80 | payload.len() as u8);
    } else {
        frame.push(0x80 | 126);
        frame.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    }
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i & 3]));
    let _ = writer.write_all(&frame).await;
}

/// `(origin, seq, sent µs)` of `<origin><seq>:<sent>:…`.
fn fields(payload: &[u8]) -> Option<(u8, u64, u64)> {
    let origin = *payload.first()?;
    if !ORIGINS.contains(&origin) {
        return None;
    }
    let text = std::str::from_utf8(&payload[1..]).ok()?;
    let mut parts = text.split(':');
    let seq = parts.next()?.parse().ok()?;
    let sent = parts.next()?.parse().ok()?;
    Some((origin, seq, sent))
}
