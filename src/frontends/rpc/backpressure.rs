//! How far behind the client may fall before the connection stops taking on work. Bytes
//! queued for the client and not yet written are the measure: a client that stopped
//! reading lets them grow, one that reads keeps them near zero.
//!
//! Past [`OUTPUT_HIGH_WATER`] the reader reads nothing more. Past [`WORK_HIGH_WATER`] no
//! new work starts: a request read earlier waits before its method runs, a
//! `tools/executeBatch` starts no further call, and a program printing on a thread of its
//! own waits before its next line. Responses are never dropped; they and the work that
//! would produce more of them wait for the client.

/// Unsent bytes at which the reader pauses.
pub const OUTPUT_HIGH_WATER: usize = 64 << 20;

/// Unsent bytes at which new work waits. Above the mark where observe-only notifications
/// are dropped (16 MiB), so those alone never stop work: only answers the client has not
/// read do.
pub const WORK_HIGH_WATER: usize = 64 << 20;
