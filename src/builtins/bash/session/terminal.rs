//! The pseudo-terminal of a `tty: true` command. It is opened in the host (a sandboxed
//! child's private `/dev` has its own `devpts`, and Landlock grants it no terminal to
//! open): the child gets the terminal end as stdin, stdout and stderr, the host keeps the
//! controlling end to read what the program draws and to type into it. Both ends are
//! close-on-exec from their first instant, so no other child inherits them (a program
//! holding a stray copy would keep the terminal open after this one exits).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Columns of the window the program sees (wide enough for most tables and logs).
pub const COLUMNS: u16 = 120;
/// Rows of the window the program sees.
pub const ROWS: u16 = 40;

/// The host's end of a terminal: read what the program prints, write what it reads.
pub struct Terminal {
    controller: AsyncFd<OwnedFd>,
}

/// A new terminal: the host's end and the end for the child's stdio.
pub fn open() -> io::Result<(Terminal, OwnedFd)> {
    // SAFETY: posix_openpt returns a new descriptor or -1; it is owned at once.
    let controller = unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        OwnedFd::from_raw_fd(fd)
    };
    let raw = controller.as_raw_fd();
    let size = libc::winsize {
        ws_row: ROWS,
        ws_col: COLUMNS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: plain ioctls and fcntl on a descriptor we own; `size` outlives the call.
    let program_end = unsafe {
        check(libc::grantpt(raw))?;
        check(libc::unlockpt(raw))?;
        check(libc::ioctl(raw, libc::TIOCSWINSZ, &size))?;
        // TIOCGPTPEER opens the other end without a path, close-on-exec.
        let fd = libc::ioctl(
            raw,
            libc::TIOCGPTPEER,
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        check(fd)?;
        let flags = check(libc::fcntl(raw, libc::F_GETFL))?;
        check(libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK))?;
        OwnedFd::from_raw_fd(fd)
    };
    Ok((Terminal::register(controller)?, program_end))
}

impl Terminal {
    /// A second handle on the same terminal (one reads while the other writes).
    pub fn try_clone(&self) -> io::Result<Terminal> {
        Terminal::register(self.controller.get_ref().try_clone()?)
    }

    fn register(controller: OwnedFd) -> io::Result<Terminal> {
        // SAFETY: the descriptor is owned by the `AsyncFd` and stays open with it.
        let controller = unsafe { AsyncFd::register(controller) }.map_err(io::Error::from)?;
        Ok(Terminal { controller })
    }
}

fn check(result: libc::c_int) -> io::Result<libc::c_int> {
    match result {
        -1 => Err(io::Error::last_os_error()),
        ok => Ok(ok),
    }
}

impl AsyncRead for Terminal {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.controller.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            // SAFETY: reads into the initialised unfilled part of `buf`.
            let read = guard.try_io(|fd| {
                let n = unsafe {
                    libc::read(fd.as_raw_fd(), unfilled.as_mut_ptr().cast(), unfilled.len())
                };
                match n {
                    -1 => Err(io::Error::last_os_error()),
                    n => Ok(n as usize),
                }
            });
            match read {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                // Every process closed the terminal's other end: the end of the stream.
                Ok(Err(e)) if e.raw_os_error() == Some(libc::EIO) => return Poll::Ready(Ok(())),
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for Terminal {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.controller.poll_write_ready(cx))?;
            // SAFETY: writes from a live slice.
            let written = guard.try_io(|fd| {
                let n = unsafe { libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
                match n {
                    -1 => Err(io::Error::last_os_error()),
                    n => Ok(n as usize),
                }
            });
            match written {
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// What a model reads of a terminal's output: printed text, newlines and tabs, with escape
/// sequences (colours, cursor moves, titles, bracketed paste) removed, carriage returns
/// dropped (`\r\n` is a newline) and backspaces applied. Fed in pieces as the output
/// arrives: a sequence split between two reads is still recognised.
pub struct TerminalText {
    parser: vte::Parser,
    text: Printed,
}

struct Printed(Vec<u8>);

impl vte::Perform for Printed {
    fn print(&mut self, c: char) {
        let mut encoded = [0u8; 4];
        self.0
            .extend_from_slice(c.encode_utf8(&mut encoded).as_bytes());
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' | b'\t' => self.0.push(byte),
            0x08 => {
                // Back over one character (all of its UTF-8 bytes), never past a line.
                while let Some(&last) = self.0.last() {
                    if last == b'\n' {
                        break;
                    }
                    self.0.pop();
                    if last & 0xC0 != 0x80 {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
}

impl Default for TerminalText {
    fn default() -> Self {
        TerminalText {
            parser: vte::Parser::new(),
            text: Printed(Vec::new()),
        }
    }
}

impl TerminalText {
    /// The text of `raw` (and of what an earlier piece left unfinished).
    pub fn feed(&mut self, raw: &[u8]) -> Vec<u8> {
        self.parser.advance(&mut self.text, raw);
        std::mem::take(&mut self.text.0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_go_and_text_stays_even_when_split() {
        let mut text = TerminalText::default();
        let mut out = text.feed(b"\x1b[?2004h>>> \x1b[3");
        out.extend(text.feed(b"2mgreen\x1b[0m\r\nnext\tcol\x1b]0;title\x07 end"));
        assert_eq!(String::from_utf8(out).unwrap(), ">>> green\nnext\tcol end");
    }

    #[test]
    fn a_backspace_removes_the_last_character_of_the_line() {
        let mut text = TerminalText::default();
        let out = text.feed("ab€\x08\x08c\n\x08d".as_bytes());
        assert_eq!(String::from_utf8(out).unwrap(), "ac\nd");
    }

    #[tokio::test]
    async fn what_the_host_writes_the_program_end_reads_and_echoes() {
        use std::io::Read;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut terminal, program_end) = open().unwrap();
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: TIOCGWINSZ fills a live local.
        assert_eq!(
            unsafe { libc::ioctl(program_end.as_raw_fd(), libc::TIOCGWINSZ, &mut size) },
            0
        );
        assert_eq!((size.ws_col, size.ws_row), (COLUMNS, ROWS));
        terminal.write_all(b"hello\n").await.unwrap();
        let mut program = std::fs::File::from(program_end);
        let mut line = [0u8; 6];
        program.read_exact(&mut line).unwrap();
        assert_eq!(&line, b"hello\n");
        let mut echoed = [0u8; 7];
        terminal.read_exact(&mut echoed).await.unwrap();
        assert_eq!(&echoed, b"hello\r\n", "the line discipline echoes input");
        drop(program);
        let mut rest = Vec::new();
        terminal.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "a closed program end reads as the end");
    }
}
