//! Running out of file descriptors: the accept loop backs off instead of spinning on `EMFILE`, the connections it
//! has keep being served, and once descriptors free up the server accepts again. A file of its own: it lowers the
//! descriptor limit of its whole process, which no other test may share.
#![cfg(target_os = "linux")]

mod support;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use gust_core::Config;
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use support::*;

fn open_descriptors() -> u64 {
    std::fs::read_dir("/proc/self/fd").unwrap().count() as u64
}

/// CPU seconds (user and system) this process has used, read through `stat` (`/proc/self/stat`, opened before
/// the descriptors ran out).
fn cpu_seconds(stat: &mut std::fs::File) -> f64 {
    use std::io::{Read, Seek};
    stat.rewind().unwrap();
    let mut text = String::new();
    stat.read_to_string(&mut text).unwrap();
    let stat = text;
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

#[test]
fn out_of_descriptors_the_accept_loop_backs_off_and_recovers() {
    let t = start(Config::default());
    let addr = t.addr();
    let mut kept = TcpStream::connect(addr).unwrap();
    std::io::Write::write_all(&mut kept, b"GET /echo/kept HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut kept, false).expect("an answer").status, 200);

    // 300 connections wait in the backlog; the limit leaves the server room to accept a few of them only.
    let waiting: Vec<TcpStream> = (0..300).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let mut stat = std::fs::File::open("/proc/self/stat").unwrap();
    let original = getrlimit(Resource::Nofile);
    let low = open_descriptors() + 8;
    setrlimit(Resource::Nofile, Rlimit { current: Some(low), maximum: original.maximum }).unwrap();

    // While accept fails, the loop waits between tries: a spinning loop would take a whole core.
    std::thread::sleep(Duration::from_millis(300));
    let (cpu, started) = (cpu_seconds(&mut stat), Instant::now());
    std::thread::sleep(Duration::from_secs(1));
    let used = (cpu_seconds(&mut stat) - cpu) / started.elapsed().as_secs_f64();
    eprintln!("out of descriptors: {:.0}% of a core", used * 100.0);
    assert!(used < 0.3, "the accept loop spun: {:.0}% of a core", used * 100.0);

    // A connection it already had is still served.
    std::io::Write::write_all(&mut kept, b"GET /echo/again HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut kept, false).expect("an answer on a kept connection").status, 200);

    // Descriptors free up: the waiting clients leave and the limit is restored. New clients are served.
    drop(waiting);
    setrlimit(Resource::Nofile, original).unwrap();
    let started = Instant::now();
    let res = loop {
        if let Some(res) = roundtrip(addr, b"GET /echo/new HTTP/1.1\r\nhost: x\r\n\r\n") {
            break res;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "no new connection was served after recovery");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(res.status, 200);
    t.server.stop(true);
}
