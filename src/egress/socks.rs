//! The SOCKS5 side of the proxy (RFC 1928), for git over SSH and tools that speak SOCKS:
//! the no-authentication method, the `CONNECT` command, and addresses as a domain, IPv4 or
//! IPv6. An address given as an IP is checked as a host like a name (by default not listed).
//! A refusal is reply 0x02 (connection not allowed by ruleset), a name without address or an
//! upstream that does not answer 0x04 (host unreachable); `BIND` and `UDP ASSOCIATE` are
//! 0x07 (command not supported). The handshake must complete within the head timeout.

use super::policy::Host;
use super::{Egress, Failure, tunnel};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// The first byte of every SOCKS5 greeting.
pub(super) const VERSION: u8 = 0x05;

const NO_AUTH: u8 = 0x00;
const NO_ACCEPTABLE_METHOD: u8 = 0xff;
const CMD_CONNECT: u8 = 0x01;

/// Reply codes.
pub(super) const SUCCEEDED: u8 = 0x00;
pub(super) const GENERAL_FAILURE: u8 = 0x01;
pub(super) const NOT_ALLOWED: u8 = 0x02;
pub(super) const HOST_UNREACHABLE: u8 = 0x04;
pub(super) const COMMAND_NOT_SUPPORTED: u8 = 0x07;
pub(super) const ADDRESS_NOT_SUPPORTED: u8 = 0x08;

/// What the client asked for, or the reply that ends the handshake.
enum Request {
    Connect(Host, u16),
    Refuse(u8),
}

pub(super) async fn serve(egress: &Egress, mut client: TcpStream, deadline: Instant) {
    let request = match tokio::time::timeout_at(deadline, handshake(&mut client)).await {
        Ok(Ok(Some(request))) => request,
        _ => return,
    };
    let (host, port) = match request {
        Request::Connect(host, port) => (host, port),
        Request::Refuse(code) => return reply(&mut client, code, None).await,
    };
    let upstream = match egress.open(&host, port).await {
        Ok(upstream) => upstream,
        Err(Failure::Blocked(_)) => return reply(&mut client, NOT_ALLOWED, None).await,
        Err(Failure::Unreachable(why)) => {
            tracing::debug!("egress proxy: SOCKS5 {}: {why}", host.authority(port));
            return reply(&mut client, HOST_UNREACHABLE, None).await;
        }
    };
    let bound = upstream.local_addr().ok();
    if client
        .write_all(&reply_bytes(SUCCEEDED, bound))
        .await
        .is_err()
    {
        return;
    }
    tunnel(client, upstream).await;
}

/// The method negotiation and the request. `Ok(None)`: not SOCKS5, or no acceptable method
/// (already answered); the connection just closes.
async fn handshake(client: &mut TcpStream) -> std::io::Result<Option<Request>> {
    let mut greeting = [0u8; 2];
    client.read_exact(&mut greeting).await?;
    let mut methods = vec![0u8; usize::from(greeting[1])];
    client.read_exact(&mut methods).await?;
    if greeting[0] != VERSION {
        return Ok(None);
    }
    if !methods.contains(&NO_AUTH) {
        client.write_all(&[VERSION, NO_ACCEPTABLE_METHOD]).await?;
        return Ok(None);
    }
    client.write_all(&[VERSION, NO_AUTH]).await?;
    let mut head = [0u8; 4];
    client.read_exact(&mut head).await?;
    if head[0] != VERSION {
        return Ok(None);
    }
    let host = match head[3] {
        0x01 => {
            let mut octets = [0u8; 4];
            client.read_exact(&mut octets).await?;
            Some(Host::Ip(IpAddr::V4(Ipv4Addr::from(octets))))
        }
        0x04 => {
            let mut octets = [0u8; 16];
            client.read_exact(&mut octets).await?;
            Some(Host::Ip(IpAddr::V6(Ipv6Addr::from(octets))))
        }
        0x03 => {
            let mut len = [0u8; 1];
            client.read_exact(&mut len).await?;
            let mut name = vec![0u8; usize::from(len[0])];
            client.read_exact(&mut name).await?;
            std::str::from_utf8(&name).ok().and_then(Host::parse)
        }
        _ => return Ok(Some(Request::Refuse(ADDRESS_NOT_SUPPORTED))),
    };
    let mut port = [0u8; 2];
    client.read_exact(&mut port).await?;
    let port = u16::from_be_bytes(port);
    Ok(Some(match host {
        _ if head[1] != CMD_CONNECT => Request::Refuse(COMMAND_NOT_SUPPORTED),
        Some(host) if port != 0 => Request::Connect(host, port),
        _ => Request::Refuse(GENERAL_FAILURE),
    }))
}

async fn reply(client: &mut TcpStream, code: u8, bound: Option<SocketAddr>) {
    let _ = client.write_all(&reply_bytes(code, bound)).await;
    let _ = client.shutdown().await;
}

/// `VER REP RSV ATYP BND.ADDR BND.PORT`, the bound address `0.0.0.0:0` if unknown.
fn reply_bytes(code: u8, bound: Option<SocketAddr>) -> Vec<u8> {
    let bound = bound.unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0)));
    let mut out = vec![VERSION, code, 0x00];
    match bound.ip() {
        IpAddr::V4(v4) => {
            out.push(0x01);
            out.extend_from_slice(&v4.octets());
        }
        IpAddr::V6(v6) => {
            out.push(0x04);
            out.extend_from_slice(&v6.octets());
        }
    }
    out.extend_from_slice(&bound.port().to_be_bytes());
    out
}
