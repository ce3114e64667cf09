//! Workers on the one-thread engine: a group of one-thread servers on one port, each driven by its own thread.
//! Every member serves, a stop asked of the group or of any member stops them all and is heard once, a slot
//! without a server has its connections served by another member until its own joins, and with no member
//! left they wait in its queue for the replacement.
#![cfg(unix)]

mod support;

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gust_core::{Closed, Error, Handler, LocalGroup, RequestBatch, Server};
use support::{config, connect, roundtrip, routes, run_local};

/// The main thread's side: no request reaches it; it hears the group end.
#[derive(Default)]
struct Supervisor(Mutex<Vec<String>>);

impl Handler for Supervisor {
    fn handle(&self, _batch: RequestBatch) -> Result<(), Closed> {
        Err(Closed)
    }

    fn unbound(&self) {
        self.0.lock().unwrap().push("unbound".to_owned());
    }

    fn stopped(&self, failure: Option<&Error>) {
        self.0.lock().unwrap().push(format!("stopped {}", failure.map_or("ok".to_owned(), ToString::to_string)));
    }
}

/// Nothing dynamic is asked of the members in these tests: their handler takes batches and drops them.
struct Members;

impl Handler for Members {
    fn handle(&self, _batch: RequestBatch) -> Result<(), Closed> {
        Ok(())
    }
}

fn group(slots: usize) -> (Arc<LocalGroup>, Arc<Supervisor>) {
    let supervisor = Arc::new(Supervisor::default());
    let config = config(|c| c.addrs = vec!["127.0.0.1:0".parse().unwrap()]);
    (LocalGroup::bind(&config, slots, supervisor.clone()).unwrap(), supervisor)
}

fn join(group: &Arc<LocalGroup>, slot: usize, quit: Option<Arc<AtomicBool>>) -> Result<Server, Error> {
    let group = group.clone();
    run_local(quit, move || {
        let config = config(|c| c.addrs = vec!["127.0.0.1:0".parse().unwrap()]);
        group.join(slot, config, routes(), Arc::new(Members))
    })
}

fn heard_within(supervisor: &Supervisor, within: Duration) -> Vec<String> {
    let deadline = Instant::now() + within;
    while supervisor.0.lock().unwrap().len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    supervisor.0.lock().unwrap().clone()
}

#[test]
fn every_member_serves_and_a_stop_of_the_group_ends_it_once() {
    let (group, supervisor) = group(2);
    let addr = group.local_addrs()[0];
    let members = [join(&group, 0, None).unwrap(), join(&group, 1, None).unwrap()];
    for _ in 0..40 {
        let res = roundtrip(addr, b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").expect("an answer");
        assert_eq!(res.text(), "Hi");
    }
    assert_eq!(group.in_flight(), vec![(0, 0), (1, 0)]);
    assert_eq!(members[0].local_addr(), Some(addr));
    group.stop(false);
    assert_eq!(heard_within(&supervisor, Duration::from_secs(5)), ["unbound", "stopped ok"]);
    assert!(group.is_finished());
    let late = join(&group, 0, None).unwrap_err().to_string();
    assert!(late.contains("stopping"), "{late}");
    // Every socket of the port is closed: it can be bound again at once.
    std::net::TcpListener::bind(addr).expect("the port is free");
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(supervisor.0.lock().unwrap().len(), 2, "heard once");
}

#[test]
fn a_stop_asked_of_one_member_stops_the_whole_group() {
    let (group, supervisor) = group(2);
    let members = [join(&group, 0, None).unwrap(), join(&group, 1, None).unwrap()];
    members[1].stop(true);
    assert_eq!(heard_within(&supervisor, Duration::from_secs(5)), ["unbound", "stopped ok"]);
    assert!(members.iter().all(|m| m.is_finished()));
}

#[test]
fn a_slot_is_served_once_and_its_queue_waits_for_the_replacement() {
    let (group, supervisor) = group(1);
    let addr = group.local_addrs()[0];
    let quit = Arc::new(AtomicBool::new(false));
    let first = join(&group, 0, Some(quit.clone())).unwrap();
    let taken = join(&group, 0, None).unwrap_err().to_string();
    assert!(taken.contains("served already"), "{taken}");
    let missing = join(&group, 3, None).unwrap_err().to_string();
    assert!(missing.contains("no slot 3"), "{missing}");

    // The worker goes away: its server closes, the group goes on.
    quit.store(true, Ordering::Release);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !first.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(first.is_finished());
    assert!(group.in_flight().is_empty());
    assert!(supervisor.0.lock().unwrap().is_empty(), "the group did not end");

    // A client that comes meanwhile waits in the slot's queue, held by the group.
    let mut client = connect(addr);
    client.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").unwrap();
    client.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let mut buf = [0u8; 256];
    assert!(client.read(&mut buf).is_err(), "nobody answers while the slot is empty");

    let second = join(&group, 0, None).unwrap();
    client.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut answer = Vec::new();
    client.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("Hi"), "{answer}");
    second.stop(false);
    assert_eq!(heard_within(&supervisor, Duration::from_secs(5)), ["unbound", "stopped ok"]);
}

/// Whether a new connection gets its answer within a second.
fn answered(addr: std::net::SocketAddr) -> bool {
    let mut client = connect(addr);
    client.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    client.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    let _ = client.read_to_end(&mut answer);
    answer.starts_with(b"HTTP/1.1 200") && answer.ends_with(b"Hi")
}

/// Waits until `n` slots are served.
fn served(group: &LocalGroup, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while group.in_flight().len() != n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(group.in_flight().len(), n);
}

#[test]
fn a_slot_that_lost_its_server_is_served_by_another_member_until_its_own_joins() {
    let (group, supervisor) = group(3);
    let addr = group.local_addrs()[0];
    let quits = [Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false))];
    let _first = join(&group, 0, Some(quits[0].clone())).unwrap();
    // Slots still waiting for their first server are not lent.
    assert_eq!(group.lent(), []);
    let _second = join(&group, 1, Some(quits[1].clone())).unwrap();
    let third = join(&group, 2, None).unwrap();

    // Slot 0's worker goes away: the next serving slot serves its sockets too. Only on Linux, where each slot
    // has sockets of its own (elsewhere they share one queue, which the others serve anyway).
    quits[0].store(true, Ordering::Release);
    served(&group, 2);
    let lending = cfg!(target_os = "linux");
    assert_eq!(group.lent(), if lending { vec![(0, 1)] } else { vec![] });
    // On Linux the kernel queues about a third of the new connections on slot 0's socket: every one is answered.
    for i in 0..40 {
        assert!(answered(addr), "connection {i} was not answered");
    }
    // The member serving them goes away too: both empty slots move to the last one.
    quits[1].store(true, Ordering::Release);
    served(&group, 1);
    assert_eq!(group.lent(), if lending { vec![(0, 2), (1, 2)] } else { vec![] });
    for i in 0..40 {
        assert!(answered(addr), "connection {i} with one member left was not answered");
    }

    let replacement = join(&group, 0, None).unwrap();
    assert_eq!(group.lent(), if lending { vec![(1, 2)] } else { vec![] });
    for i in 0..20 {
        assert!(answered(addr), "connection {i} after the replacement was not answered");
    }
    assert!(!third.is_finished() && !replacement.is_finished());
    // A stop while a slot is lent frees the port once the members have ended.
    third.stop(false);
    assert_eq!(heard_within(&supervisor, Duration::from_secs(5)), ["unbound", "stopped ok"]);
    assert_eq!(group.lent(), []);
    std::net::TcpListener::bind(addr).expect("the port is free");
}

#[test]
fn a_join_that_fails_frees_its_slot() {
    let (group, supervisor) = group(1);
    let bad = {
        let group = group.clone();
        run_local(None, move || {
            let config = config(|c| c.max_header_size = 1);
            group.join(0, config, routes(), Arc::new(Members))
        })
    };
    assert!(bad.unwrap_err().to_string().contains("max_header_size"), "the bad option is named");
    // The slot is free again, and the group still serves.
    let member = join(&group, 0, None).unwrap();
    let res = roundtrip(group.local_addrs()[0], b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    assert_eq!(res.expect("an answer").text(), "Hi");
    group.stop(true);
    assert_eq!(heard_within(&supervisor, Duration::from_secs(5)), ["unbound", "stopped ok"]);
    assert!(member.is_finished());
}
