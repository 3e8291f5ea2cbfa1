//! The MCP protocol revisions the client speaks. `initialize` offers the newest revision
//! that still has the handshake ([`OFFERED`], `2025-11-25`: `2026-07-28` replaced the
//! handshake with `server/discover` and per-request `_meta`, so offering it in
//! `initialize` is a contradiction most servers answer with an older revision anyway). The
//! server answers with that revision or another it supports; the client accepts every
//! revision rmcp implements ([`SPEAKS`]) and otherwise ends the session with an error
//! naming both sides, as the spec asks of a client that does not support the answer.

use rmcp::model::ProtocolVersion;

/// The revision offered in `initialize`.
pub const OFFERED: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// Every revision the client accepts from a server, oldest first (a server answering
/// `2026-07-28` gets per-request `_meta`, which rmcp adds itself).
pub const SPEAKS: &[ProtocolVersion] = ProtocolVersion::KNOWN_VERSIONS;

/// Why a server's answer to `initialize` cannot be used: `None` when `answered` is spoken.
pub fn refusal(answered: &ProtocolVersion) -> Option<String> {
    if SPEAKS.contains(answered) {
        return None;
    }
    let speaks: Vec<&str> = SPEAKS.iter().map(ProtocolVersion::as_str).collect();
    Some(format!(
        "the server chose MCP protocol version {:?}, which dsh-tools does not support (it offered {} and speaks {})",
        answered.as_str(),
        OFFERED.as_str(),
        speaks.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offer_is_the_newest_revision_with_a_handshake() {
        assert_eq!(OFFERED.as_str(), "2025-11-25");
        assert!(OFFERED.has_initialize());
    }

    #[test]
    fn known_revisions_are_accepted_and_others_refused_by_name() {
        for version in ["2025-06-18", "2025-11-25", "2026-07-28", "2025-03-26"] {
            let parsed: ProtocolVersion =
                serde_json::from_value(version.into()).unwrap_or_default();
            assert_eq!(refusal(&parsed), None, "{version}");
        }
        let odd: ProtocolVersion = serde_json::from_value("1999-01-01".into()).unwrap_or_default();
        let why = refusal(&odd).unwrap_or_default();
        assert!(why.contains("\"1999-01-01\""), "{why}");
        assert!(why.contains("offered 2025-11-25"), "{why}");
    }
}
