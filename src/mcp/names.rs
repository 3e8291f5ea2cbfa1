//! Registered names of MCP tools and the per-server allow/deny filter.

use dsh_tools_protocol::NameFilter;

/// `mcp__<server>__<tool>`, byte for byte: no sanitizing, so any MCP tool name (dots,
/// dashes, spaces, unicode) stays exactly what discovery shows and dispatch resolves.
pub fn registered_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// Whether `filter` admits the server's own tool name (`allow` lists, then `deny` removes).
pub fn admits(filter: Option<&NameFilter>, tool: &str) -> bool {
    let Some(filter) = filter else {
        return true;
    };
    let allowed = filter
        .allow
        .as_ref()
        .is_none_or(|allow| allow.iter().any(|name| name == tool));
    let denied = filter
        .deny
        .as_ref()
        .is_some_and(|deny| deny.iter().any(|name| name == tool));
    allowed && !denied
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_every_character() {
        let cases = [
            ("time", "get_current_time", "mcp__time__get_current_time"),
            ("everything", "get-sum", "mcp__everything__get-sum"),
            ("x", "a.b c/é🎉", "mcp__x__a.b c/é🎉"),
            ("my server", "__proto__", "mcp__my server____proto__"),
        ];
        for (server, tool, expected) in cases {
            assert_eq!(registered_name(server, tool), expected);
        }
    }

    fn filter(allow: Option<&[&str]>, deny: Option<&[&str]>) -> NameFilter {
        let list = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
        NameFilter {
            allow: allow.map(list),
            deny: deny.map(list),
        }
    }

    #[test]
    fn allow_then_deny() {
        let cases = [
            (None, "echo", true),
            (Some(filter(None, None)), "echo", true),
            (Some(filter(Some(&["echo"]), None)), "echo", true),
            (Some(filter(Some(&["echo"]), None)), "add", false),
            (Some(filter(None, Some(&["echo"]))), "echo", false),
            (Some(filter(None, Some(&["echo"]))), "add", true),
            (
                Some(filter(Some(&["echo", "add"]), Some(&["add"]))),
                "add",
                false,
            ),
            (Some(filter(Some(&[]), None)), "echo", false),
        ];
        for (filter, tool, expected) in cases {
            assert_eq!(admits(filter.as_ref(), tool), expected, "{filter:?} {tool}");
        }
    }
}
