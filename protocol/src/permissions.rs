//! Permission decisions on the wire: `permissions/explain`, session and persistent grants
//! (`permissions/grants`, `permissions/revoke`), and the decision record that rides on
//! `client/approve` and on a denied result's `meta.permission`.

use crate::JsonValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum PermissionVerdict {
    /// Run it.
    Allow,
    /// Ask the user.
    Ask,
    /// Refuse.
    Deny,
}

/// What one part of a call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum PermissionPartKind {
    /// A whole call of a tool that is not a shell command.
    Call,
    /// One simple command a shell command would run.
    Command,
    /// A file a shell command would write (a redirection, `tee`).
    Write,
    /// A construct the host cannot judge before it runs (`eval`, a computed program name).
    Unreadable,
}

/// The rule that decided a part, and where it was written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRuleRef {
    /// `allow`, `ask` or `deny`.
    pub list: String,
    /// Its index in that list of its origin.
    pub index: u32,
    /// Its text (`Bash(rm:*)`).
    pub rule: String,
    /// Where it comes from: a settings file's path, `initialize.config`, `config`, or
    /// `grant <id>` for a grant the user gave during this host's life.
    pub origin: String,
}

/// One judged part.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct PermissionPart {
    /// What the part is.
    pub kind: PermissionPartKind,
    /// The command as rules see it, the written path, the construct, or the tool's name.
    pub text: String,
    /// Its verdict.
    pub decision: PermissionVerdict,
    /// The rule that decided it (absent: the default, or a construct that always asks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rule: Option<PermissionRuleRef>,
    /// The construct it sits in (`$(...)`, `bash -c`, `find -exec`), absent at top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub inside: Option<String>,
    /// Why, when no rule decided it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
}

/// How the permission rules decide one call: the verdict and the parts that produced it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct PermissionDecision {
    /// The call's verdict under the rules and grants (the strongest part's).
    pub decision: PermissionVerdict,
    /// Each judged part, in the order the command reads.
    pub parts: Vec<PermissionPart>,
}

/// `permissions/explain` params: a call to judge without running it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct ExplainParams {
    /// The tool's name.
    pub name: String,
    /// Its arguments.
    #[serde(default)]
    pub arguments: JsonValue,
    /// The calling agent scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<String>,
}

/// A client hook the call would be put to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExplainedHook {
    /// `tools/pre-execute` or `tools/guard`.
    pub event: String,
    /// The listener's name (a client subscription's id, or a host hook's name).
    pub name: String,
    /// Its order among listeners of its event.
    pub order: i32,
}

/// `permissions/explain` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExplainResult {
    /// The permission rules' verdict (session grants applied), and each part's.
    #[serde(flatten)]
    pub permission: PermissionDecision,
    /// The grants that turned an `ask` into `allow` for this call.
    pub grants: Vec<String>,
    /// The hooks the call would be put to after the rules, in order.
    pub hooks: Vec<ExplainedHook>,
    /// Whether an `ask` would reach an approver (without one it is refused).
    pub approver: bool,
    /// The sandbox the call would run in, when the tool runs a command (`bash`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sandbox: Option<JsonValue>,
    /// Whether the tool exists in the calling scope.
    pub known: bool,
}

/// How long a grant lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum GrantScope {
    /// Until the host ends (for `dsh-tools mcp`, the MCP session).
    Session,
    /// Written to `permissions.persistTo`; a new host loads it.
    Always,
}

/// One grant a user gave through `client/approve`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct PermissionGrant {
    /// Its id (`g1`, `g2`, ...), for `permissions/revoke`.
    pub id: String,
    /// The allow rule it adds (`Bash(npm run test:*)`).
    pub rule: String,
    /// How long it lasts.
    pub scope: GrantScope,
    /// The agent scope it is narrowed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<String>,
    /// It was given for a command run outside the sandbox (`dangerouslyDisableSandbox`), so
    /// it covers such runs too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsandboxed: bool,
}

/// `permissions/revoke` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct RevokeParams {
    /// The grant's id.
    pub id: String,
}

/// `permissions/revoke` result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct RevokeResult {
    /// The grant that was removed.
    pub revoked: PermissionGrant,
}
