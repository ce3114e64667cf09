//! Bun, Linux: the engine's descriptor watched by Bun's own event loop, with no thread of ours in between.
//!
//! Bun's `uv_poll_*` are stubs, and none of its APIs polls an arbitrary descriptor for readiness alone; but it
//! polls a socket it reads from (`Bun.connect({ fd })`). So a small io_uring turns the engine's readiness into a
//! byte on a socket pair: a one-shot poll of the engine's descriptor, linked to a one-byte write to our end. The
//! kernel completes both when a socket of the engine becomes ready, the write wakes the loop of the JavaScript
//! thread (the thread that armed the ring, so no other thread runs), Bun reads the byte and the package calls
//! `BindingServer.woken`. Against the waiting thread (`binding_uv::Waiter`) this saves two context switches per
//! quiet turn: that thread's wake-up to poll again, and its wake-up when the descriptor becomes readable.
//!
//! Cost per arming: one `io_uring_enter` (two entries); per wake-up: the byte (one `recv` by Bun, whose socket
//! stays registered with its loop) and the two completions reaped from shared memory, no system call. A pipe
//! read through `Bun.file(fd).stream()` cost three reads and two `epoll_ctl` per wake-up instead.

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

use io_uring::{opcode, squeue, types, IoUring};

/// What the write sends: any byte; its value is never read.
static BYTE: [u8; 1] = [1];

/// The ring, the engine's descriptor it polls, and the socket pair it writes to.
pub(crate) struct RingWake {
    ring: io_uring::IoUring,
    engine: RawFd,
    /// Our end of the pair, written to; the other end is handed to JavaScript once (`take_reader`).
    writer: OwnedFd,
    reader: Cell<Option<OwnedFd>>,
    /// A poll is in the ring: its completion (and the byte) is on its way or waits for readiness.
    armed: Cell<bool>,
}

impl RingWake {
    /// A ring polling `engine` (the one-thread engine's descriptor); fails where io_uring cannot be set up
    /// (seccomp in containers, `kernel.io_uring_disabled`, kernels before 5.6), and the caller falls back to a
    /// waiting thread.
    pub(crate) fn new(engine: RawFd) -> io::Result<Self> {
        // Two chains in flight at most (one armed, one whose completions are not reaped yet): 8 is ample.
        let ring = IoUring::builder().build(8)?;
        let mut fds = [0; 2];
        let kind = libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
        // SAFETY: `fds` has room for the two descriptors socketpair writes.
        if unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just made by socketpair and are owned here alone.
        let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(Self { ring, engine, writer, reader: Cell::new(Some(reader)), armed: Cell::new(false) })
    }

    /// JavaScript's end of the pair, to watch; from then on its socket owns it (Bun closes it when our end
    /// closes, with the ring). `None` after the first call.
    pub(crate) fn take_reader(&self) -> Option<RawFd> {
        self.reader.take().map(IntoRawFd::into_raw_fd)
    }

    /// Arms the ring unless it is armed: the next readiness of the engine's descriptor (at once, if it is
    /// readable now) writes the byte.
    pub(crate) fn arm(&self) -> io::Result<()> {
        if self.armed.get() {
            return Ok(());
        }
        let poll = opcode::PollAdd::new(types::Fd(self.engine), libc::POLLIN as u32)
            .build()
            .flags(squeue::Flags::IO_LINK)
            .user_data(1);
        let write = opcode::Write::new(types::Fd(self.writer.as_raw_fd()), BYTE.as_ptr(), 1).build().user_data(2);
        // SAFETY: the entries point at `BYTE` (static) and at descriptors that outlive the ring (dropped after
        // it: fields drop in order, and `ring` is first).
        unsafe {
            let mut queue = self.ring.submission_shared();
            queue.push_multiple(&[poll, write]).map_err(|_| io::Error::other("io_uring submission queue full"))?;
        }
        self.ring.submit()?;
        self.armed.set(true);
        Ok(())
    }

    /// JavaScript read the byte: the poll has completed. Reaps the completions posted so far (from shared
    /// memory; the write's may come a moment after its byte, and is reaped next time) so the next `arm` polls
    /// again.
    pub(crate) fn woken(&self) {
        // SAFETY: completions are only reaped here, on the JavaScript thread.
        unsafe { self.ring.completion_shared() }.for_each(drop);
        self.armed.set(false);
    }
}
