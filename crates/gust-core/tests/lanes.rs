//! Several handler threads (lanes) behind one server: requests spread per request, even on one keep-alive
//! connection; a lane that leaves gets no more requests and its unanswered ones get 503; the starting lane
//! serves again once no other is attached.
mod support;

use std::io::Write;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use gust_core::{Handler, RequestBatch, Server};
use support::{answer_batch, connect, decode, read_response, NEVER};

/// A handler thread that answers every request with its own name, except `/never`, which it holds.
struct Named(Mutex<mpsc::Sender<RequestBatch>>);

impl Handler for Named {
    fn handle(&self, batch: RequestBatch) -> Result<(), gust_core::Closed> {
        self.0.lock().unwrap().send(batch).map_err(|_| gust_core::Closed)
    }
}

/// Answers the batches of `rx` on a thread of their own.
fn answer(server: &Server, rx: mpsc::Receiver<RequestBatch>, name: &'static str) {
    let responder = server.responder();
    std::thread::spawn(move || {
        for batch in rx {
            let answers: Vec<_> = decode(&batch.into_bytes())
                .into_iter()
                .filter(|r| r.handler != NEVER)
                .map(|r| (r.id, 200, vec![], Bytes::from(name)))
                .collect();
            responder.respond(answer_batch(&answers).records());
        }
    });
}

fn lane(server: &Server, name: &'static str) -> Arc<Named> {
    let (tx, rx) = mpsc::channel::<RequestBatch>();
    answer(server, rx, name);
    Arc::new(Named(Mutex::new(tx)))
}

/// A server whose lane 0 is a handler thread named `main`.
fn start() -> Arc<Server> {
    let (tx, rx) = mpsc::channel::<RequestBatch>();
    let config = support::config(|c| c.addrs = vec!["127.0.0.1:0".parse().unwrap()]);
    let server = Arc::new(Server::start(config, support::routes(), Arc::new(Named(Mutex::new(tx)))).unwrap());
    answer(&server, rx, "main");
    server
}

/// Who answered each of `n` requests sent one after another on one keep-alive connection.
fn answered_by(server: &Server, n: usize) -> Vec<String> {
    let mut s = connect(server.local_addr().unwrap());
    (0..n)
        .map(|i| {
            s.write_all(format!("GET /echo/{i} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes()).unwrap();
            read_response(&mut s, false).unwrap().text()
        })
        .collect()
}

fn count(answers: &[String], name: &str) -> usize {
    answers.iter().filter(|a| *a == name).count()
}

#[test]
fn requests_on_one_connection_should_spread_over_the_attached_lanes_and_not_the_first() {
    let server = start();
    assert!(answered_by(&server, 5).iter().all(|a| a == "main"));
    let a = server.attach(lane(&server, "a")).unwrap();
    let b = server.attach(lane(&server, "b")).unwrap();
    assert_ne!(a, b);
    assert_eq!(server.lanes().iter().map(|(l, _)| l.index()).collect::<Vec<_>>(), [0, a.index(), b.index()]);
    let answers = answered_by(&server, 200);
    assert_eq!(count(&answers, "main"), 0, "the first lane only supervises while others are attached");
    // Idle lanes are tied: taken in turn, so a sequential client alternates.
    assert!(
        count(&answers, "a") >= 90 && count(&answers, "b") >= 90,
        "{} a, {} b",
        count(&answers, "a"),
        count(&answers, "b")
    );
    server.detach(a, Vec::new);
    server.detach(b, Vec::new);
    assert!(answered_by(&server, 5).iter().all(|a| a == "main"), "the first lane serves again");
    server.stop(true);
    server.wait();
}

#[test]
fn a_busy_lane_should_get_fewer_requests_and_a_detached_one_should_answer_its_waiting_requests_503() {
    let server = start();
    // `a` keeps what it is handed, as a worker busy elsewhere would.
    let holding = Arc::new(Holding(Mutex::default()));
    let a = server.attach(holding.clone()).unwrap();
    let _b = server.attach(lane(&server, "b")).unwrap();
    // Held requests (never answered) pile up on whichever lane took them; the next ones go to the other.
    let addr = server.local_addr().unwrap();
    let mut held: Vec<std::net::TcpStream> = (0..4)
        .map(|_| {
            let mut s = connect(addr);
            s.write_all(b"GET /never HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
            s
        })
        .collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while server.lanes().iter().map(|(_, n)| n).sum::<u32>() < 4 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let in_flight: Vec<u32> = server.lanes().iter().map(|(_, n)| *n).collect();
    assert_eq!(in_flight, [0, 2, 2], "least busy first: the held requests split evenly");

    let on_a = server.lanes()[1].1;
    // Detached once its requests reached it: requests still in the engine's queue for a lane that leaves go to
    // another lane instead (`requests_a_leaving_lane_never_took_should_go_to_another_lane`), and `b` never
    // answers these.
    let taken = || holding.0.lock().unwrap().iter().map(RequestBatch::len).sum::<usize>();
    while taken() < on_a as usize && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(taken(), on_a as usize, "lane a was handed its requests");
    server.detach(a, Vec::new);
    server.detach(a, Vec::new); // idempotent

    // The 503s are awaited as long as a slow machine needs; then the other lane's requests must still be quiet.
    let mut answered = vec![false; held.len()];
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while answered.iter().filter(|a| **a).count() < on_a as usize && std::time::Instant::now() < until {
        for (s, done) in held.iter_mut().zip(answered.iter_mut()).filter(|(_, done)| !**done) {
            s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
            if let Some(res) = read_response(s, false) {
                assert_eq!(res.status, 503);
                assert_eq!(res.text(), "Service Unavailable: the worker handling the request exited");
                *done = true;
            }
        }
    }
    for (s, _) in held.iter_mut().zip(&answered).filter(|(_, done)| !**done) {
        s.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        assert!(read_response(s, false).is_none(), "only the detached lane's requests are answered");
    }
    let refused = answered.iter().filter(|a| **a).count();
    assert_eq!(refused, on_a as usize, "exactly the detached lane's requests were answered");
    assert!(answered_by(&server, 10).iter().all(|a| a == "b"));
    assert_eq!(server.lanes().len(), 2);
    server.stop(true);
    server.wait();
    assert!(server.attach(lane(&server, "late")).is_err(), "a stopped server takes no new lane");
}

/// A lane whose thread never takes its batches (as one that exits before its event loop runs them).
struct Holding(Mutex<Vec<RequestBatch>>);

impl Handler for Holding {
    fn handle(&self, batch: RequestBatch) -> Result<(), gust_core::Closed> {
        self.0.lock().unwrap().push(batch);
        Ok(())
    }
}

#[test]
fn requests_a_leaving_lane_never_took_should_go_to_another_lane() {
    let server = start();
    let holding = Arc::new(Holding(Mutex::default()));
    let gone = server.attach(holding.clone()).unwrap();
    let addr = server.local_addr().unwrap();
    let mut clients: Vec<std::net::TcpStream> = (0..5)
        .map(|i| {
            let mut s = connect(addr);
            s.write_all(format!("GET /echo/{i} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes()).unwrap();
            s
        })
        .collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while server.lanes()[1].1 < 5 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(server.lanes()[1].1, 5, "all five went to the only attached lane");
    let b = server.attach(lane(&server, "b")).unwrap();
    // The holding lane leaves with its batches untaken: they are handed back, and go to `b`.
    server.detach(gone, || {
        std::mem::take(&mut *holding.0.lock().unwrap()).into_iter().map(RequestBatch::into_bytes).collect()
    });
    for s in &mut clients {
        let res = read_response(s, false).unwrap();
        assert_eq!((res.status, res.text()), (200, "b".to_owned()));
    }
    assert_eq!(server.lanes().iter().map(|(l, n)| (l.index(), *n)).collect::<Vec<_>>(), [(0, 0), (b.index(), 0)]);
    server.stop(true);
    server.wait();
}

#[test]
fn lanes_should_be_reusable_after_many_attach_and_detach_cycles() {
    let server = start();
    for i in 0..300 {
        let name: &'static str = if i % 2 == 0 { "even" } else { "odd" };
        let l = server.attach(lane(&server, name)).unwrap();
        if i % 50 == 0 {
            assert_eq!(answered_by(&server, 2), [name, name]);
        }
        server.detach(l, Vec::new);
    }
    assert_eq!(server.lanes().len(), 1);
    assert_eq!(answered_by(&server, 1), ["main"]);
    server.stop(true);
    server.wait();
}

#[test]
fn connections_should_spread_over_several_io_threads_and_answers_find_their_way_back() {
    let (tx, rx) = mpsc::channel::<RequestBatch>();
    let config = support::config(|c| {
        c.addrs = vec!["127.0.0.1:0".parse().unwrap()];
        c.io_threads = 3;
    });
    let server = Arc::new(Server::start(config, support::routes(), Arc::new(Named(Mutex::new(tx)))).unwrap());
    // Answers name the I/O thread (shard) in the request's id: its top four bits.
    let responder = server.responder();
    std::thread::spawn(move || {
        for batch in rx {
            let answers: Vec<_> = decode(&batch.into_bytes())
                .into_iter()
                .map(|r| (r.id, 200, vec![], Bytes::from(format!("shard {}", r.id >> 28))))
                .collect();
            responder.respond(answer_batch(&answers).records());
        }
    });
    let a = server.attach(lane(&server, "a")).unwrap();
    let mut shards = std::collections::BTreeSet::new();
    let mut lanes = std::collections::BTreeSet::new();
    for _ in 0..64 {
        let answers = answered_by(&server, 2);
        for answer in answers {
            if answer.starts_with("shard") {
                shards.insert(answer);
            } else {
                lanes.insert(answer);
            }
        }
        if shards.len() == 3 {
            break;
        }
    }
    // Lane `a` took every request while attached; detached, lane 0 (which names the shard) answers again.
    assert_eq!(lanes.into_iter().collect::<Vec<_>>(), ["a"]);
    server.detach(a, Vec::new);
    for _ in 0..200 {
        shards.extend(answered_by(&server, 1));
        if shards.len() == 3 {
            break;
        }
    }
    assert_eq!(
        shards.into_iter().collect::<Vec<_>>(),
        ["shard 0", "shard 1", "shard 2"],
        "SO_REUSEPORT spreads connections"
    );
    server.stop(false);
    server.wait();
    assert!(server.failure().is_none());
}

#[test]
fn a_port_another_server_holds_should_still_be_refused_with_several_io_threads() {
    let first = start();
    let config = support::config(|c| {
        c.addrs = vec![first.local_addr().unwrap()];
        c.io_threads = 2;
    });
    let (tx, _rx) = mpsc::channel::<RequestBatch>();
    let err = Server::start(config, support::routes(), Arc::new(Named(Mutex::new(tx)))).unwrap_err();
    assert!(err.to_string().contains("cannot listen on"), "{err}");
    first.stop(true);
    first.wait();
}
