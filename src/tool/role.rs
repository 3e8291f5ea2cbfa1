//! What a tool is to the host beyond its schema. A role is decided once, where the tool is
//! defined (`code_mode` for `run_code`, `discovery` for `search_tools`), and every generic
//! layer asks the role instead of comparing names.

/// How the host treats a tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolRole {
    /// A tool registered by a client, a built-in or an MCP server.
    #[default]
    Ordinary,
    /// A tool the host itself provides: installed once, its name reserved.
    Host(HostRole),
}

/// The properties of a host tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostRole {
    /// What the name is reserved for, as a refusal says it ("Code Mode").
    pub purpose: &'static str,
    /// When a scope sees it.
    pub presence: Presence,
    /// The model's entry into Code Mode: callable directly under a `code` presentation,
    /// described in the scope's Code Mode language, and never a binding (a program that
    /// started runs of its own would hold the isolates the host's other runs wait for).
    pub code_entry: bool,
}

/// When a scope sees a host tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// While the scope's presentation is `code` or `both`.
    CodePresentation,
    /// While the scope sees at least one deferred tool.
    WhileDeferred,
}

impl ToolRole {
    /// The host properties, if this is a host tool.
    pub fn host(&self) -> Option<&HostRole> {
        match self {
            ToolRole::Ordinary => None,
            ToolRole::Host(host) => Some(host),
        }
    }

    /// Its name cannot be registered, reserved, shadowed or restricted.
    pub fn is_reserved(&self) -> bool {
        self.host().is_some()
    }

    /// A Code Mode program may call it (it is a binding of the SDK).
    pub fn is_binding(&self) -> bool {
        !self.is_code_entry()
    }

    /// It is callable directly under a `code` presentation (every other tool only from a
    /// program there).
    pub fn is_code_entry(&self) -> bool {
        self.host().is_some_and(|host| host.code_entry)
    }

    /// A native listing may name it (`toolOrder`), present or not at the moment.
    pub fn is_listable(&self) -> bool {
        self.host()
            .is_some_and(|host| host.presence != Presence::CodePresentation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRY: ToolRole = ToolRole::Host(HostRole {
        purpose: "Code Mode",
        presence: Presence::CodePresentation,
        code_entry: true,
    });
    const DISCOVERY: ToolRole = ToolRole::Host(HostRole {
        purpose: "tool discovery",
        presence: Presence::WhileDeferred,
        code_entry: false,
    });

    #[test]
    fn an_ordinary_tool_is_a_binding_and_nothing_else() {
        let role = ToolRole::default();
        assert!(role.is_binding());
        assert!(!role.is_reserved() && !role.is_code_entry() && !role.is_listable());
    }

    #[test]
    fn the_code_entry_is_reserved_direct_and_never_a_binding() {
        assert!(ENTRY.is_reserved() && ENTRY.is_code_entry());
        assert!(!ENTRY.is_binding() && !ENTRY.is_listable());
    }

    #[test]
    fn a_discovery_tool_is_reserved_listable_and_a_binding() {
        assert!(DISCOVERY.is_reserved() && DISCOVERY.is_binding() && DISCOVERY.is_listable());
        assert!(!DISCOVERY.is_code_entry());
    }
}
