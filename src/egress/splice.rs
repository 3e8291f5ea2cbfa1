//! Moving a connection's bytes without touching them: `splice(2)` from one socket into a
//! pipe and from the pipe into the other socket, so the kernel passes page references and
//! the data never enters this process. A user-space copy (read into a buffer, write it out)
//! costs every byte two more copies, which on a loopback download is a third of the time.
//! Where the kernel refuses to splice a pair, the bytes are copied instead.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// Bytes asked of one splice (the pipe is grown to hold them).
const CHUNK: usize = 1 << 20;

/// Moves everything `from` sends to `to` until `from` ends, then shuts `to`'s write side
/// (a half-close, so the other direction may still finish). The bytes moved.
pub async fn move_bytes(from: &TcpStream, to: &TcpStream) -> io::Result<u64> {
    let moved = match Pipe::new() {
        Ok(pipe) => pipe.relay(from, to).await,
        Err(_) => copy(from, to).await,
    };
    // SAFETY: shutdown on a socket this process owns.
    unsafe { libc::shutdown(to.as_raw_fd(), libc::SHUT_WR) };
    moved
}

/// The pipe bytes pass through.
struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
}

impl Pipe {
    fn new() -> io::Result<Pipe> {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: pipe2 fills a live array; both descriptors are owned at once.
        let made = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) };
        if made != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 returned two new descriptors.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // A bigger pipe means fewer splices; the default (64 KiB) still works.
        // SAFETY: fcntl on a descriptor we own.
        unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, CHUNK as libc::c_int) };
        Ok(Pipe { read, write })
    }

    /// Fills the pipe from `from` and drains it into `to` at the same time: the sender is
    /// read again as soon as the pipe has room, not after the pipe was emptied, so neither
    /// socket waits on the other's turn.
    async fn relay(&self, from: &TcpStream, to: &TcpStream) -> io::Result<u64> {
        let mut total = 0u64;
        // Bytes in the pipe; whether `from` ended; whether the pipe refused more (it is
        // tried again once some were drained).
        let (mut held, mut ended, mut full) = (0usize, false, false);
        loop {
            if ended && held == 0 {
                return Ok(total);
            }
            tokio::select! {
                biased;
                drained = to.async_io(Interest::WRITABLE, || {
                    splice(self.read.as_raw_fd(), to.as_raw_fd(), held)
                }), if held > 0 => {
                    held -= drained?;
                    full = false;
                }
                filled = from.async_io(Interest::READABLE, || self.fill(from, held)),
                    if !ended && !full =>
                {
                    match filled {
                        Ok(Filled::Bytes(0)) => ended = true,
                        Ok(Filled::Bytes(got)) => {
                            held += got;
                            total += got as u64;
                        }
                        Ok(Filled::PipeFull) => full = true,
                        // The kernel cannot splice this pair: copy (nothing was taken yet).
                        Err(e) if total == 0 && e.raw_os_error() == Some(libc::EINVAL) => {
                            return copy(from, to).await;
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }

    /// One splice from `from` into the pipe. `EAGAIN` while the pipe holds bytes may mean
    /// the pipe is full rather than the socket empty: it is reported as [`Filled::PipeFull`]
    /// and not as `WouldBlock`, which would make the runtime wait for new bytes from a
    /// socket that may already hold the rest. With an empty pipe it means the socket is empty.
    fn fill(&self, from: &TcpStream, held: usize) -> io::Result<Filled> {
        match splice(from.as_raw_fd(), self.write.as_raw_fd(), CHUNK) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && held > 0 => Ok(Filled::PipeFull),
            moved => moved.map(Filled::Bytes),
        }
    }
}

/// What one splice into the pipe did.
enum Filled {
    /// Bytes moved (0: the sender ended).
    Bytes(usize),
    /// Nothing moved; the pipe holds bytes and may be full.
    PipeFull,
}

/// One non-blocking splice of up to `len` bytes (`WouldBlock` when it would wait).
fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
    let flags = libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK;
    // SAFETY: splice between two descriptors this process owns, no offsets.
    let n = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            len,
            flags,
        )
    };
    match n {
        -1 => Err(io::Error::last_os_error()),
        n => Ok(n as usize),
    }
}

/// The user-space copy, through one 64 KiB buffer.
async fn copy(from: &TcpStream, to: &TcpStream) -> io::Result<u64> {
    let mut buf = vec![0u8; 64 << 10];
    let mut total = 0u64;
    loop {
        let got = from
            .async_io(Interest::READABLE, || from.try_read(&mut buf))
            .await?;
        if got == 0 {
            return Ok(total);
        }
        let mut sent = 0;
        while sent < got {
            sent += to
                .async_io(Interest::WRITABLE, || to.try_write(&buf[sent..got]))
                .await?;
        }
        total += got as u64;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;
    use tokio::task::JoinHandle;

    async fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let near = TcpStream::connect(listener.local_addr().unwrap());
        let (near, far) = tokio::join!(near, listener.accept());
        (near.unwrap(), far.unwrap().0)
    }

    /// `sent` written into one connection, then its end; the relay moving it into another;
    /// the receiving end of that one.
    async fn relaying(sent: &[u8]) -> (JoinHandle<()>, JoinHandle<u64>, TcpStream) {
        let (mut source, from) = pair().await;
        let (to, sink) = pair().await;
        let sent = sent.to_vec();
        let writer = tokio::spawn(async move {
            source.write_all(&sent).await.unwrap();
            source.shutdown().await.unwrap();
        });
        let relay = tokio::spawn(async move { move_bytes(&from, &to).await.unwrap() });
        (writer, relay, sink)
    }

    #[tokio::test]
    async fn every_byte_arrives_in_order_and_the_end_is_passed_on() {
        let sent: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let (writer, relay, mut sink) = relaying(&sent).await;
        let mut received = Vec::new();
        sink.read_to_end(&mut received).await.unwrap();
        writer.await.unwrap();
        assert_eq!(relay.await.unwrap(), sent.len() as u64);
        assert!(received == sent, "the bytes differ");
    }

    /// A receiver slower than the sender: the pipe fills while the socket behind it holds
    /// more, and the relay must neither stall (waiting for bytes already there) nor lose any.
    #[tokio::test]
    async fn a_slow_receiver_gets_everything_through_a_full_pipe() {
        let sent: Vec<u8> = (0..12_000_000u32).map(|i| (i % 253) as u8).collect();
        let (writer, relay, mut sink) = relaying(&sent).await;
        let received = tokio::time::timeout(std::time::Duration::from_secs(120), async move {
            let mut received = Vec::new();
            let mut slice = [0u8; 4096];
            while received.len() < sent.len() / 2 {
                let n = sink.read(&mut slice).await.unwrap();
                assert!(n > 0, "the stream ended early");
                received.extend_from_slice(&slice[..n]);
                tokio::task::yield_now().await;
            }
            sink.read_to_end(&mut received).await.unwrap();
            (received, sent)
        })
        .await;
        let Ok((received, sent)) = received else {
            panic!("the relay stalled");
        };
        writer.await.unwrap();
        assert_eq!(relay.await.unwrap(), sent.len() as u64);
        assert!(received == sent, "the bytes differ");
    }
}
