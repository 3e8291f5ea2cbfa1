//! Who may hold a connection to `dsh-tools mcp --http`: at most `total` connections at once
//! and at most `per_peer` from one IP address, so idle sockets can neither exhaust the
//! host's file descriptors nor let one peer lock every other client out. A connection past
//! either cap is refused as soon as it is accepted; each admitted one holds a [`Seat`]
//! until it closes.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

/// Why a connection was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// `total` connections are open.
    Total,
    /// `per_peer` connections from this address are open.
    Peer,
}

/// The open connections, in all and per peer address.
pub struct Admission {
    total: usize,
    per_peer: usize,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    all: usize,
    by_peer: HashMap<IpAddr, usize>,
}

/// One admitted connection; dropping it frees its place.
pub struct Seat {
    admission: Arc<Admission>,
    peer: IpAddr,
}

impl Admission {
    /// Caps of `total` connections and `per_peer` from one address (each at least 1).
    pub fn new(total: usize, per_peer: usize) -> Arc<Self> {
        Arc::new(Admission {
            total: total.max(1),
            per_peer: per_peer.max(1),
            open: Mutex::default(),
        })
    }

    /// A seat for a connection from `peer`, unless a cap is reached.
    pub fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Seat, Refused> {
        let mut open = self.open.lock();
        if open.all >= self.total {
            return Err(Refused::Total);
        }
        let from_peer = open.by_peer.entry(peer).or_default();
        if *from_peer >= self.per_peer {
            return Err(Refused::Peer);
        }
        *from_peer += 1;
        open.all += 1;
        Ok(Seat {
            admission: self.clone(),
            peer,
        })
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut open = self.admission.open.lock();
        open.all -= 1;
        if let Some(from_peer) = open.by_peer.get_mut(&self.peer) {
            *from_peer -= 1;
            if *from_peer == 0 {
                open.by_peer.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn caps_hold_in_all_and_per_peer_and_seats_are_given_back() {
        let admission = Admission::new(3, 2);
        let (a, b, c): (IpAddr, IpAddr, IpAddr) = (
            "127.0.0.2".parse().unwrap(),
            "127.0.0.3".parse().unwrap(),
            "::1".parse().unwrap(),
        );
        let first = admission.admit(a).unwrap();
        let _second = admission.admit(a).unwrap();
        assert_eq!(admission.admit(a).err(), Some(Refused::Peer));
        let _third = admission.admit(b).unwrap();
        assert_eq!(admission.admit(c).err(), Some(Refused::Total));
        drop(first);
        assert_eq!(admission.admit(b).map(|_| ()), Ok(()));
        assert!(!admission.open.lock().by_peer.contains_key(&c));
    }
}
