//! An established connection's bytes moved by two threads that block in `splice(2)`, one per
//! direction: the kernel wakes the thread that waits on a socket directly, where the async
//! relay ([`super::splice`]) pays an epoll round and a task switch for every chunk that
//! arrives. On a fast link that per-chunk toll is most of what a proxy costs (a 100 MB
//! download arrives in ~1,500 chunks). The threads are small (their stacks hold a loop), end
//! when their direction ends, and are cut loose by `shutdown(2)` when the proxy stops.

use std::io;
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

use super::splice::CHUNK;

/// Stack of a relay thread: a loop of system calls.
const STACK_BYTES: usize = 128 * 1024;

/// How the exchange ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// A tunnel: each direction ends on its own (a half-close is passed on); done when both are.
    BothDirections,
    /// A forwarded HTTP response: once the download is through, the upload is cut off.
    WithTheDownload,
}

/// Relays `client` ⇄ `upstream` until the exchange ends (`ending`); returns the bytes moved
/// downstream (upstream → client). Both sockets leave tokio's reactor here. Dropping the
/// future (the proxy stopping, its task aborted) shuts both sockets down, so the threads
/// return at once and nothing outlives the proxy.
pub async fn relay(
    client: tokio::net::TcpStream,
    upstream: tokio::net::TcpStream,
    ending: Ending,
) -> io::Result<u64> {
    let cut = Cut(Arc::new(blocking(client)?), Arc::new(blocking(upstream)?));
    let upload = direction(Arc::clone(&cut.0), Arc::clone(&cut.1))?;
    let download = direction(Arc::clone(&cut.1), Arc::clone(&cut.0))?;
    match ending {
        Ending::BothDirections => tokio::join!(upload, download).1,
        Ending::WithTheDownload => {
            let moved = download.await;
            cut.now();
            let _ = upload.await;
            moved
        }
    }
}

/// Both sockets of a relay, shut down (both ways) when this drops or on [`Cut::now`].
struct Cut(Arc<TcpStream>, Arc<TcpStream>);

impl Cut {
    fn now(&self) {
        let _ = self.0.shutdown(Shutdown::Both);
        let _ = self.1.shutdown(Shutdown::Both);
    }
}

impl Drop for Cut {
    fn drop(&mut self) {
        self.now();
    }
}

/// A tokio socket as a blocking std one.
fn blocking(stream: tokio::net::TcpStream) -> io::Result<TcpStream> {
    let stream = stream.into_std()?;
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// Starts the thread of one direction; resolves to the bytes it moved.
fn direction(
    from: Arc<TcpStream>,
    to: Arc<TcpStream>,
) -> io::Result<impl std::future::Future<Output = io::Result<u64>>> {
    let (done, outcome) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("dsh-egress-relay".to_owned())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let moved = move_all(&from, &to);
            match &moved {
                // The end is passed on (a half-close): the other direction may still finish.
                Ok(_) => {
                    let _ = to.shutdown(Shutdown::Write);
                }
                // A broken direction ends the exchange: the other thread returns too.
                Err(_) => {
                    let _ = from.shutdown(Shutdown::Both);
                    let _ = to.shutdown(Shutdown::Both);
                }
            }
            let _ = done.send(moved);
        })?;
    Ok(async move {
        outcome
            .await
            .unwrap_or_else(|_| Err(io::Error::other("a relay thread died")))
    })
}

/// Moves everything `from` sends to `to` through a pipe, blocking; copies instead where the
/// kernel refuses to splice the pair.
fn move_all(from: &TcpStream, to: &TcpStream) -> io::Result<u64> {
    let Ok((read, write)) = super::splice::grown_pipe(0) else {
        return copy(from, to);
    };
    let mut total = 0u64;
    loop {
        let got = match splice(from.as_raw_fd(), write.as_raw_fd(), CHUNK) {
            Ok(got) => got,
            Err(e) if total == 0 && e.raw_os_error() == Some(libc::EINVAL) => {
                return copy(from, to);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if got == 0 {
            return Ok(total);
        }
        let mut left = got;
        while left > 0 {
            match splice(read.as_raw_fd(), to.as_raw_fd(), left) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(sent) => left -= sent,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        total += got as u64;
    }
}

/// One blocking splice of up to `len` bytes.
fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
    super::splice::splice_with(from, to, len, libc::SPLICE_F_MOVE)
}

/// The blocking user-space copy, through one 64 KiB buffer.
fn copy(from: &TcpStream, to: &TcpStream) -> io::Result<u64> {
    let (mut reader, mut writer) = (from, to);
    io::copy(&mut reader, &mut writer)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// Two connected sockets: `(near, far)`.
    async fn pair() -> (tokio::net::TcpStream, tokio::net::TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let near = tokio::net::TcpStream::connect(listener.local_addr().unwrap());
        let (near, far) = tokio::join!(near, listener.accept());
        (near.unwrap(), far.unwrap().0)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn both_directions_arrive_whole_and_in_order_and_each_end_is_passed_on() {
        let (mut user, client) = pair().await;
        let (upstream, mut server) = pair().await;
        let relayed = tokio::spawn(relay(client, upstream, Ending::BothDirections));
        let down: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let up: Vec<u8> = (0..500_000u32).map(|i| (i % 239) as u8).collect();
        let (sent_down, sent_up) = (down.clone(), up.clone());
        let serving = tokio::spawn(async move {
            let mut got = Vec::new();
            let (mut read, mut write) = server.split();
            let (read_all, write_all) = tokio::join!(read.read_to_end(&mut got), async {
                write.write_all(&sent_down).await.unwrap();
                write.shutdown().await.unwrap();
            });
            read_all.unwrap();
            let () = write_all;
            got
        });
        let (mut read, mut write) = user.split();
        let mut received = Vec::new();
        let (got, ()) = tokio::join!(read.read_to_end(&mut received), async {
            write.write_all(&sent_up).await.unwrap();
            write.shutdown().await.unwrap();
        });
        got.unwrap();
        assert!(received == down, "the download differs");
        assert!(serving.await.unwrap() == up, "the upload differs");
        assert_eq!(relayed.await.unwrap().unwrap(), down.len() as u64);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_the_relay_cuts_both_connections_at_once() {
        let (mut user, client) = pair().await;
        let (upstream, mut server) = pair().await;
        let relayed = tokio::spawn(relay(client, upstream, Ending::BothDirections));
        server.write_all(b"first").await.unwrap();
        let mut first = [0u8; 5];
        user.read_exact(&mut first).await.unwrap();
        relayed.abort();
        // Both ends see the connection end although neither peer closed it (a relay that
        // outlived its task would leave these reads waiting: the bound makes that a failure).
        let patience = std::time::Duration::from_secs(30);
        let mut rest = Vec::new();
        let user_end = tokio::time::timeout(patience, user.read_to_end(&mut rest)).await;
        assert_eq!(
            user_end.expect("the user's side was not cut").unwrap_or(0),
            0
        );
        let server_end = tokio::time::timeout(patience, server.read_to_end(&mut rest)).await;
        assert_eq!(
            server_end
                .expect("the server's side was not cut")
                .unwrap_or(0),
            0
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn with_the_download_the_upload_is_cut_once_the_response_is_through() {
        let (mut user, client) = pair().await;
        let (upstream, mut server) = pair().await;
        let relayed = tokio::spawn(relay(client, upstream, Ending::WithTheDownload));
        server.write_all(b"response").await.unwrap();
        server.shutdown().await.unwrap();
        let mut response = Vec::new();
        user.read_to_end(&mut response).await.unwrap();
        assert_eq!(response, b"response");
        // The user never closed its side; the relay still ends, and the server sees the end.
        assert_eq!(relayed.await.unwrap().unwrap(), 8);
        let mut upload = Vec::new();
        assert_eq!(server.read_to_end(&mut upload).await.unwrap_or(0), 0);
    }
}
