//! Bytes on stdio: framing, the single writer task, and the peer table of host→client
//! requests. Knows nothing of tools.

pub mod framing;
mod outbox;
mod peer;
pub mod stdio;
mod unsent;
mod writer;

pub use outbox::{OBSERVED_HIGH_WATER, Outbox, spawn_writer};
pub use peer::{Peer, PeerError};
pub use unsent::unsent_in_process;
