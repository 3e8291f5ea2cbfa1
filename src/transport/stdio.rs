//! The process's standard input and output, read and written by the event loop itself.
//!
//! tokio's `stdin()` and `stdout()` do every read and write on its blocking pool, so each
//! request and each answer crosses one more thread than it needs to: on an idle machine a
//! thread woken from sleep costs tens to hundreds of microseconds, a large part of a trivial
//! Code Mode run's round trip. A pipe or a socket (what an editor or an agent front end gives
//! the host it spawns) is pollable: it is set non-blocking and registered with the event
//! loop, and the worker that handles a message does the system call. A terminal or a
//! regular file keeps tokio's blocking handles (a terminal's flags are shared with the shell
//! around it, and a file cannot be polled). The original flags come back when the stream
//! drops.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::stat::{SFlag, fstat};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// Standard input: polled when it is a pipe or socket, else tokio's blocking reader.
pub enum Stdin {
    Polled(Polled),
    Blocking(tokio::io::Stdin),
}

/// Standard output: polled when it is a pipe or socket, else tokio's blocking writer.
pub enum Stdout {
    Polled(Polled),
    Blocking(tokio::io::Stdout),
}

/// The host's standard input. Call it inside the tokio runtime.
pub fn stdin() -> Stdin {
    match Polled::new(0, Interest::READABLE) {
        Some(polled) => Stdin::Polled(polled),
        None => Stdin::Blocking(tokio::io::stdin()),
    }
}

/// The host's standard output. Call it inside the tokio runtime.
pub fn stdout() -> Stdout {
    match Polled::new(1, Interest::WRITABLE) {
        Some(polled) => Stdout::Polled(polled),
        None => Stdout::Blocking(tokio::io::stdout()),
    }
}

/// A standard descriptor registered with the event loop; it stays open when this drops.
pub struct Polled {
    fd: AsyncFd<Standard>,
}

/// A descriptor number with the flags it had before it was made non-blocking.
struct Standard {
    fd: RawFd,
    flags: OFlag,
}

impl AsRawFd for Standard {
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}

impl AsFd for Standard {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the standard descriptors stay open for the process's life; nothing here
        // closes them.
        unsafe { BorrowedFd::borrow_raw(self.fd) }
    }
}

impl Drop for Standard {
    fn drop(&mut self) {
        let _ = fcntl(self.as_fd(), FcntlArg::F_SETFL(self.flags));
    }
}

impl Polled {
    /// `fd` registered for polling `interest`, if it is a pipe or a socket the event loop
    /// accepts.
    fn new(fd: RawFd, interest: Interest) -> Option<Self> {
        // SAFETY: a standard descriptor number; if it is closed, fstat fails and it is left alone.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let kind = SFlag::from_bits_truncate(fstat(borrowed).ok()?.st_mode) & SFlag::S_IFMT;
        if kind != SFlag::S_IFIFO && kind != SFlag::S_IFSOCK {
            return None;
        }
        let flags = OFlag::from_bits_truncate(fcntl(borrowed, FcntlArg::F_GETFL).ok()?);
        fcntl(borrowed, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).ok()?;
        // Made before registering, so a refused registration restores the flags.
        let standard = Standard { fd, flags };
        // SAFETY: a standard descriptor stays open and names the same description for the
        // process's life: the host never closes or replaces descriptors 0 and 1.
        unsafe { AsyncFd::register_with_interest(standard, interest) }
            .ok()
            .map(|fd| Polled { fd })
    }

    fn poll_read(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            let mut ready = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match ready.try_io(|fd| Ok(nix::unistd::read(fd.get_ref(), unfilled)?)) {
                Ok(Ok(read)) => {
                    buf.advance(read);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(error)) if error.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                Err(_would_block) => {}
            }
        }
    }

    fn poll_write(&self, cx: &mut Context<'_>, bytes: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            let mut ready = ready!(self.fd.poll_write_ready(cx))?;
            match ready.try_io(|fd| Ok(nix::unistd::write(fd.get_ref(), bytes)?)) {
                Ok(Ok(written)) => return Poll::Ready(Ok(written)),
                Ok(Err(error)) if error.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                Err(_would_block) => {}
            }
        }
    }
}

impl AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stdin::Polled(polled) => polled.poll_read(cx, buf),
            Stdin::Blocking(blocking) => Pin::new(blocking).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stdout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stdout::Polled(polled) => polled.poll_write(cx, bytes),
            Stdout::Blocking(blocking) => Pin::new(blocking).poll_write(cx, bytes),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            // Written bytes are in the kernel already: nothing is buffered here.
            Stdout::Polled(_) => Poll::Ready(Ok(())),
            Stdout::Blocking(blocking) => Pin::new(blocking).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stdout::Polled(_) => Poll::Ready(Ok(())),
            Stdout::Blocking(blocking) => Pin::new(blocking).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::fd::OwnedFd;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn non_blocking(fd: &OwnedFd) -> bool {
        OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL).unwrap()).contains(OFlag::O_NONBLOCK)
    }

    #[tokio::test]
    async fn a_pipe_is_polled_both_ways_and_gets_its_flags_back() {
        let (read_end, write_end) = nix::unistd::pipe().unwrap();
        {
            let reader = Polled::new(read_end.as_raw_fd(), Interest::READABLE).unwrap();
            let writer = Polled::new(write_end.as_raw_fd(), Interest::WRITABLE).unwrap();
            assert!(non_blocking(&read_end) && non_blocking(&write_end));
            let mut input = Stdin::Polled(reader);
            let mut output = Stdout::Polled(writer);
            // More than a pipe holds (64 KiB): the writer waits for room, the reader drains.
            let message = vec![b'x'; 1 << 20];
            let sent = message.clone();
            let writing = async move {
                output.write_all(&sent).await.unwrap();
                output.flush().await.unwrap();
            };
            let mut received = vec![0; message.len()];
            let reading = input.read_exact(&mut received);
            let ((), read) = tokio::join!(writing, reading);
            assert_eq!(read.unwrap(), message.len());
            assert_eq!(received, message);
        }
        assert!(!non_blocking(&read_end) && !non_blocking(&write_end));
    }

    #[tokio::test]
    async fn a_regular_file_is_not_polled() {
        let file = tempfile::tempfile().unwrap();
        assert!(Polled::new(file.as_raw_fd(), Interest::READABLE).is_none());
        let flags = OFlag::from_bits_truncate(fcntl(&file, FcntlArg::F_GETFL).unwrap());
        assert!(!flags.contains(OFlag::O_NONBLOCK));
    }
}
