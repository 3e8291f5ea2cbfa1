//! The rule book of one host: the configured permission rules (with where each list was
//! written), the rules of `permissions.persistTo`, and the grants users gave through
//! `client/approve` with a scope. The permission gate decides with it, the pipeline asks it
//! whether a grant answers an `ask` before the approver is asked, and `permissions/explain`,
//! `permissions/grants` and `permissions/revoke` read and change it.
//!
//! A grant is an allow rule that turns an `ask` into `allow` (never a `deny`): a session
//! grant lasts as long as the host (or the MCP session whose scope it is narrowed to), an
//! `always` grant is also written to `persistTo`. A grant given for a command run outside
//! the sandbox (`dangerouslyDisableSandbox`) covers such runs; one given for a sandboxed run
//! does not. A call for which no single rule could be suggested (a shell command needing
//! several) is granted as that exact call.

use super::permissions::{Decision, Permissions, RuleError, RuleSource, Verdict};
use super::settings_file;
use crate::pipeline::hooks::{Approval, ApprovalOutcome, ApprovalRequest, GrantBook};
use crate::tool::{AgentId, ToolExecution};
use dsh_tools_protocol::{
    GrantScope, PermissionDecision, PermissionDefault, PermissionGrant, PermissionsConfig,
};
use parking_lot::RwLock;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The argument that runs a `bash` command outside the sandbox.
const UNSANDBOXED: &str = "dangerouslyDisableSandbox";

/// What a grant allows.
#[derive(Clone, Debug, PartialEq)]
enum Covers {
    /// Calls an allow rule matches.
    Rule(String),
    /// This exact call.
    Call { name: Arc<str>, arguments: Value },
}

#[derive(Clone, Debug)]
struct Grant {
    id: u64,
    covers: Covers,
    scope: GrantScope,
    agent: Option<AgentId>,
    unsandboxed: bool,
}

impl Grant {
    fn applies_to(&self, agent: Option<&AgentId>, unsandboxed: bool) -> bool {
        let agent = self.agent.is_none() || self.agent.as_ref() == agent;
        agent && (self.unsandboxed || !unsandboxed)
    }

    fn view(&self) -> PermissionGrant {
        PermissionGrant {
            id: format!("g{}", self.id),
            rule: match &self.covers {
                Covers::Rule(rule) => rule.clone(),
                Covers::Call { name, arguments } => format!("{name} {arguments}"),
            },
            scope: self.scope,
            agent: self.agent.as_deref().map(str::to_owned),
            unsandboxed: self.unsandboxed,
        }
    }
}

fn unsandboxed(execution: &ToolExecution) -> bool {
    is_unsandboxed(&execution.arguments)
}

fn is_unsandboxed(arguments: &Value) -> bool {
    arguments.get(UNSANDBOXED) == Some(&Value::Bool(true))
}

/// Whose grants (an agent's, or the host's own) for which runs (unsandboxed or not).
type GrantView = (Option<AgentId>, bool);

/// The configured rules, as compiled, and what they were compiled from.
struct Rules {
    config: PermissionsConfig,
    persist_to: Option<PathBuf>,
    compiled: Arc<Permissions>,
}

/// A permission rule or the `persistTo` file that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    /// A rule does not parse.
    #[error(transparent)]
    Rule(#[from] RuleError),
    /// The `persistTo` file cannot be read.
    #[error("config.permissions.persistTo: {0}")]
    File(String),
}

/// One host's rules and grants.
pub struct Book {
    rules: RwLock<Rules>,
    grants: RwLock<Vec<Grant>>,
    next_id: std::sync::atomic::AtomicU64,
    /// Grants compiled as allow rules, by (agent, unsandboxed call); emptied on any change.
    compiled_grants: RwLock<HashMap<GrantView, Arc<Permissions>>>,
}

impl Book {
    /// A book of `config`'s rules (and its `persistTo` file's).
    pub fn new(config: &PermissionsConfig) -> Result<Book, BookError> {
        let book = Book {
            rules: RwLock::new(Rules {
                config: PermissionsConfig::default(),
                persist_to: None,
                compiled: Arc::new(Permissions::default()),
            }),
            grants: RwLock::new(Vec::new()),
            next_id: std::sync::atomic::AtomicU64::new(1),
            compiled_grants: RwLock::new(HashMap::new()),
        };
        book.configure(config)?;
        Ok(book)
    }

    /// Replaces the configured rules (grants are kept).
    pub fn configure(&self, config: &PermissionsConfig) -> Result<(), BookError> {
        let persist_to = config.persist_to.as_ref().map(PathBuf::from);
        let compiled = compile(config, persist_to.as_ref())?;
        *self.rules.write() = Rules {
            config: config.clone(),
            persist_to,
            compiled: Arc::new(compiled),
        };
        Ok(())
    }

    /// The compiled rules.
    pub fn rules(&self) -> Arc<Permissions> {
        self.rules.read().compiled.clone()
    }

    /// Whether no rule or default is configured (the gate is then not installed).
    pub fn is_empty(&self) -> bool {
        self.rules.read().compiled.is_empty()
    }

    /// The decision for one call, the grants that apply to it taken into account.
    pub fn decide(&self, execution: &ToolExecution) -> Decision {
        let agent = execution.agent.as_ref();
        self.explain(&execution.name, &execution.arguments, agent)
    }

    /// The decision for a call of `name` with `arguments` by `agent`, grants included.
    pub fn explain(&self, name: &str, arguments: &Value, agent: Option<&AgentId>) -> Decision {
        let grants = self.grants_for(agent, is_unsandboxed(arguments));
        self.rules().decide_with(name, arguments, grants.as_deref())
    }

    /// The ids of the grants a decision used.
    pub fn grants_used(decision: &Decision) -> Vec<String> {
        let mut used: Vec<String> = decision
            .parts
            .iter()
            .filter_map(|part| part.rule.as_ref())
            .filter_map(|rule| rule.origin.strip_prefix("grant "))
            .map(str::to_owned)
            .collect();
        used.dedup();
        used
    }

    /// Every grant, oldest first.
    pub fn grants(&self) -> Vec<PermissionGrant> {
        self.grants.read().iter().map(Grant::view).collect()
    }

    /// Removes a grant (an `always` one from `persistTo` too).
    pub fn revoke(&self, id: &str) -> Result<PermissionGrant, String> {
        let number = id.strip_prefix('g').and_then(|n| n.parse::<u64>().ok());
        let grant = {
            let mut grants = self.grants.write();
            let index = grants
                .iter()
                .position(|g| Some(g.id) == number)
                .ok_or_else(|| format!("no grant {id:?} (permissions/grants lists them)"))?;
            grants.remove(index)
        };
        self.compiled_grants.write().clear();
        if let (GrantScope::Always, Covers::Rule(rule)) = (grant.scope, &grant.covers) {
            let config = {
                let rules = self.rules.read();
                let path = rules.persist_to.clone();
                (rules.config.clone(), path)
            };
            if let (config, Some(path)) = config {
                settings_file::remove_allow(&path, rule)?;
                self.configure(&config).map_err(|e| e.to_string())?;
            }
        }
        Ok(grant.view())
    }

    /// Drops the grants narrowed to these agent scopes (they closed).
    pub fn close_scopes(&self, agents: &[AgentId]) {
        let mut grants = self.grants.write();
        let before = grants.len();
        grants.retain(|g| g.agent.as_ref().is_none_or(|a| !agents.contains(a)));
        if grants.len() != before {
            self.compiled_grants.write().clear();
        }
    }

    /// The grants that apply to `execution`, compiled as allow rules.
    fn grants_for(&self, agent: Option<&AgentId>, unsandboxed: bool) -> Option<Arc<Permissions>> {
        let key = (agent.cloned(), unsandboxed);
        if let Some(compiled) = self.compiled_grants.read().get(&key) {
            return Some(compiled.clone());
        }
        let grants = self.grants.read();
        let rules: Vec<&Grant> = grants
            .iter()
            .filter(|g| g.applies_to(agent, unsandboxed) && matches!(g.covers, Covers::Rule(_)))
            .collect();
        if rules.is_empty() {
            return None;
        }
        let configs: Vec<(String, PermissionsConfig)> = rules
            .iter()
            .map(|g| {
                let Covers::Rule(rule) = &g.covers else {
                    unreachable!("filtered to rules")
                };
                let config = PermissionsConfig {
                    allow: vec![rule.clone()],
                    ..PermissionsConfig::default()
                };
                (format!("grant g{}", g.id), config)
            })
            .collect();
        let sources: Vec<RuleSource<'_>> = configs
            .iter()
            .map(|(origin, config)| RuleSource { origin, config })
            .collect();
        // Every grant's rule compiled when it was given.
        let compiled = Arc::new(Permissions::compile_from(&sources).ok()?);
        self.compiled_grants.write().insert(key, compiled.clone());
        Some(compiled)
    }

    /// The exact-call grant that covers `execution`, if one does.
    fn exact_grant(&self, execution: &ToolExecution) -> Option<String> {
        self.grants
            .read()
            .iter()
            .filter(|g| g.applies_to(execution.agent.as_ref(), unsandboxed(execution)))
            .find(|g| match &g.covers {
                Covers::Call { name, arguments } => {
                    *name == execution.name && *arguments == *execution.arguments
                }
                Covers::Rule(_) => false,
            })
            .map(|g| format!("g{}", g.id))
    }

    /// The rule a "don't ask again" answer adds: for the parts the rules do not allow, else
    /// (an ask that did not come from the rules: a hook, the sandbox) for every part.
    fn suggest(&self, execution: &ToolExecution, decision: &Decision) -> Option<String> {
        let (name, arguments) = (&execution.name, &*execution.arguments);
        if decision.decision != Verdict::Allow {
            return decision.suggested_rule(name, arguments);
        }
        let everything_asks = PermissionsConfig {
            default: Some(PermissionDefault::Ask),
            ..PermissionsConfig::default()
        };
        Permissions::compile(&everything_asks)
            .ok()?
            .decide_with(name, arguments, None)
            .suggested_rule(name, arguments)
    }

    fn add(&self, grant: Grant) {
        self.grants.write().push(grant);
        self.compiled_grants.write().clear();
    }
}

impl GrantBook for Book {
    fn covering(&self, execution: &ToolExecution) -> Option<String> {
        if let Some(id) = self.exact_grant(execution) {
            return Some(id);
        }
        let grants = self.grants_for(execution.agent.as_ref(), unsandboxed(execution))?;
        let decision = self.decide(execution);
        if decision.decision != Verdict::Allow {
            return None;
        }
        // A part a grant allowed; else (the rules allow every part, and something else
        // asked) the grants alone must allow the whole call.
        if let Some(id) = Book::grants_used(&decision).into_iter().next() {
            return Some(id);
        }
        let alone = grants.decide_with(&execution.name, &execution.arguments, None);
        let by_grant = |part: &super::permissions::PartDecision| {
            part.decision == Verdict::Allow
                && part
                    .rule
                    .as_ref()
                    .is_some_and(|r| r.origin.starts_with("grant "))
        };
        alone
            .parts
            .iter()
            .all(by_grant)
            .then(|| Book::grants_used(&alone).into_iter().next())
            .flatten()
    }

    fn describe(&self, execution: &ToolExecution, request: &mut ApprovalRequest) {
        let decision = self.decide(execution);
        request.suggested_rule = self.suggest(execution, &decision);
        // With no rule configured the record says only "the default allows": left out.
        if !self.is_empty() {
            request.decision = Some(wire_decision(&decision));
        }
    }

    fn record(
        &self,
        execution: &ToolExecution,
        request: &ApprovalRequest,
        approval: &Approval,
    ) -> Result<(), String> {
        let rule = approval
            .rule
            .clone()
            .or_else(|| request.suggested_rule.clone());
        let covers = match rule {
            Some(rule) => {
                // The client may have edited it: it must be a rule.
                let config = PermissionsConfig {
                    allow: vec![rule.clone()],
                    ..PermissionsConfig::default()
                };
                Permissions::compile(&config).map_err(|e| format!("rule {rule:?}: {e}"))?;
                Covers::Rule(rule)
            }
            None => Covers::Call {
                name: execution.name.clone(),
                arguments: (*execution.arguments).clone(),
            },
        };
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut grant = Grant {
            id,
            covers,
            scope: GrantScope::Session,
            agent: approval
                .agent_only
                .then(|| execution.agent.clone())
                .flatten(),
            unsandboxed: unsandboxed(execution),
        };
        let mut kept = Ok(());
        if approval.outcome == ApprovalOutcome::AllowedAlways {
            kept = self.persist(&grant.covers);
            if kept.is_ok() {
                grant.scope = GrantScope::Always;
            }
        }
        self.add(grant);
        kept.map_err(|e| format!("{e}; kept for this session only"))
    }
}

impl Book {
    /// Writes an `always` rule to `persistTo` and loads it.
    fn persist(&self, covers: &Covers) -> Result<(), String> {
        let Covers::Rule(rule) = covers else {
            return Err("no single rule covers the call".into());
        };
        let (config, path) = {
            let rules = self.rules.read();
            (rules.config.clone(), rules.persist_to.clone())
        };
        let path = path.ok_or("permissions.persistTo is not set")?;
        settings_file::add_allow(&path, rule)?;
        self.configure(&config).map_err(|e| e.to_string())
    }
}

/// The configured lists (each with its origin) and the `persistTo` file's rules.
fn compile(
    config: &PermissionsConfig,
    persist_to: Option<&PathBuf>,
) -> Result<Permissions, BookError> {
    let origin = |o: &Option<String>| o.clone().unwrap_or_else(|| "config".into());
    let only = |allow: &[String], ask: &[String], deny: &[String]| PermissionsConfig {
        allow: allow.to_vec(),
        ask: ask.to_vec(),
        deny: deny.to_vec(),
        ..PermissionsConfig::default()
    };
    let mut sources: Vec<(String, PermissionsConfig)> = vec![
        (origin(&config.origins.allow), only(&config.allow, &[], &[])),
        (origin(&config.origins.ask), only(&[], &config.ask, &[])),
        (origin(&config.origins.deny), only(&[], &[], &config.deny)),
    ];
    if let Some(path) = persist_to {
        let file = settings_file::read_rules(path).map_err(BookError::File)?;
        sources.push((path.display().to_string(), file));
    }
    sources.push((
        "config".into(),
        PermissionsConfig {
            default: config.default,
            ..PermissionsConfig::default()
        },
    ));
    let sources: Vec<RuleSource<'_>> = sources
        .iter()
        .map(|(origin, config)| RuleSource { origin, config })
        .collect();
    Ok(Permissions::compile_from(&sources)?)
}

/// The decision as the wire carries it.
pub fn wire_decision(decision: &Decision) -> PermissionDecision {
    // The two are the same shape by construction; a unit test holds them together.
    serde_json::to_value(decision)
        .ok()
        .and_then(|value| serde_json::from_value(value).ok())
        .unwrap_or_else(|| PermissionDecision {
            decision: dsh_tools_protocol::PermissionVerdict::Deny,
            parts: Vec::new(),
        })
}
