//! Elicitation by ingested servers: a server's `elicitation/create` goes to the host's
//! [`Elicitor`] (the front end's client, the person at the terminal, `--elicit defaults`,
//! or [`Nobody`]), attributed to the server's call in flight, and the answer goes back to
//! the server. The capability declared to servers in `initialize` is what the elicitor
//! answers (none for [`Nobody`]). A decline the host makes itself (no one to ask, a mode
//! the front end does not answer, a form without defaults) is noted on the call's result,
//! so the model reads why the server got no input.
//!
//! A server's request does not say which of its calls it belongs to (on stdio the Python
//! and TypeScript SDKs send no related id): it is attributed to the server's most recent
//! call in flight, exactly right while a server runs one call at a time.

mod defaults;

pub use defaults::Defaults;

use crate::tool::{BodyOutput, ContentBlock, Signal, ToolError, ToolExecution, ToolRunContext};
use futures::future::BoxFuture;
use parking_lot::{Mutex, RwLock};
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    FormElicitationCapability, UrlElicitationCapability,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The elicitation modes an elicitor answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modes {
    /// Form mode (`requestedSchema`).
    pub form: bool,
    /// URL mode (a page the user opens).
    pub url: bool,
}

impl Modes {
    /// Neither: the capability is not declared.
    pub const NONE: Modes = Modes {
        form: false,
        url: false,
    };
    /// Forms only.
    pub const FORM: Modes = Modes {
        form: true,
        url: false,
    };
    /// Both.
    pub const ALL: Modes = Modes {
        form: true,
        url: true,
    };

    /// The `elicitation` client capability for these modes (`None` for neither).
    pub fn capability(self) -> Option<ElicitationCapability> {
        if self == Modes::NONE {
            return None;
        }
        let mut capability = ElicitationCapability::new();
        capability.form = self.form.then(FormElicitationCapability::new);
        capability.url = self.url.then(UrlElicitationCapability::new);
        Some(capability)
    }

    /// Whether `params`' mode is among these.
    pub fn answer(self, params: &ElicitRequestParams) -> bool {
        match params {
            ElicitRequestParams::FormElicitationParams { .. } => self.form,
            _ => self.url,
        }
    }
}

/// `form` or `url`, for messages.
pub fn mode_name(params: &ElicitRequestParams) -> &'static str {
    match params {
        ElicitRequestParams::FormElicitationParams { .. } => "form",
        _ => "URL",
    }
}

/// What the server tells the user.
pub fn message(params: &ElicitRequestParams) -> &str {
    match params {
        ElicitRequestParams::FormElicitationParams { message, .. }
        | ElicitRequestParams::UrlElicitationParams { message, .. } => message,
        _ => "",
    }
}

/// What a call's result says of a decline the host made: who asked what, and why.
pub fn note(server: &str, params: &ElicitRequestParams, why: &str) -> String {
    let (mode, message) = (mode_name(params), message(params));
    format!(
        "MCP server \"{server}\" asked for input ({mode} elicitation: \"{message}\") and dsh-tools declined it: {why}"
    )
}

/// One server's request, as an elicitor is asked it.
#[derive(Clone, Debug)]
pub struct Elicitation {
    /// The server's name.
    pub server: Arc<str>,
    /// The call it was attributed to (none when the server had no call in flight).
    pub call: Option<Arc<ToolExecution>>,
    /// Fires when that call is aborted (never without a call).
    pub signal: Signal,
    /// What the server asked.
    pub params: ElicitRequestParams,
}

/// What goes back to the server, and why the host declined when it did.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The server's answer.
    pub result: ElicitResult,
    /// Set when the host declined on its own: noted on the call's result.
    pub declined_because: Option<String>,
}

impl Answer {
    /// The person's (or the front end's) answer.
    pub fn given(result: ElicitResult) -> Answer {
        Answer {
            result,
            declined_because: None,
        }
    }

    /// A decline the host made, saying why.
    pub fn declined(why: impl Into<String>) -> Answer {
        Answer {
            result: ElicitResult::new(ElicitationAction::Decline),
            declined_because: Some(why.into()),
        }
    }

    /// Dismissed (the call was aborted, or the answer could not be had).
    pub fn cancelled() -> Answer {
        Answer::given(ElicitResult::new(ElicitationAction::Cancel))
    }
}

/// Answers servers' elicitations for a host.
pub trait Elicitor: Send + Sync + 'static {
    /// The modes it answers (declared to the servers).
    fn modes(&self) -> Modes;
    /// Asks about one request.
    fn elicit(&self, request: Elicitation) -> BoxFuture<'static, Answer>;
}

/// No one to ask: every request is declined with the reason.
pub struct Nobody(pub String);

impl Elicitor for Nobody {
    fn modes(&self) -> Modes {
        Modes::NONE
    }

    fn elicit(&self, _: Elicitation) -> BoxFuture<'static, Answer> {
        let why = self.0.clone();
        Box::pin(async move { Answer::declined(why) })
    }
}

/// One call in flight and the declines noted for it.
struct OpenCall {
    id: u64,
    execution: Arc<ToolExecution>,
    signal: Signal,
    notes: Arc<Mutex<Vec<String>>>,
}

/// One server's elicitation state: the host's elicitor and the server's calls in flight.
pub struct Asking {
    server: Arc<str>,
    elicitor: RwLock<Arc<dyn Elicitor>>,
    open: Mutex<Vec<OpenCall>>,
    next: AtomicU64,
}

impl Asking {
    /// No elicitor yet: requests are declined saying no front end answers them.
    pub fn new(server: Arc<str>) -> Asking {
        Asking {
            server,
            elicitor: RwLock::new(Arc::new(Nobody(
                "no front end answers elicitation".to_owned(),
            ))),
            open: Mutex::new(Vec::new()),
            next: AtomicU64::new(0),
        }
    }

    /// Who answers from now on (set before the server's handshake, which declares its modes).
    pub fn set_elicitor(&self, elicitor: Arc<dyn Elicitor>) {
        *self.elicitor.write() = elicitor;
    }

    /// What the elicitor answers.
    pub fn modes(&self) -> Modes {
        self.elicitor.read().modes()
    }

    /// Registers a call in flight until the returned guard drops.
    pub fn open(self: &Arc<Self>, ctx: &ToolRunContext) -> InFlight {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let notes = Arc::new(Mutex::new(Vec::new()));
        self.open.lock().push(OpenCall {
            id,
            execution: ctx.execution.clone(),
            signal: ctx.signal.clone(),
            notes: notes.clone(),
        });
        InFlight {
            asking: self.clone(),
            id,
            notes,
        }
    }

    /// Puts one request to the elicitor; a decline it made itself is noted on the call.
    pub async fn ask(&self, params: ElicitRequestParams) -> ElicitResult {
        let (call, signal, notes) = match self.open.lock().last() {
            Some(open) => (
                Some(open.execution.clone()),
                open.signal.clone(),
                Some(open.notes.clone()),
            ),
            None => (None, Signal::never(), None),
        };
        let mode = mode_name(&params);
        let noted = |why: &str| note(&self.server, &params, why);
        let elicitor = self.elicitor.read().clone();
        let request = Elicitation {
            server: self.server.clone(),
            call,
            signal,
            params: params.clone(),
        };
        let answer = elicitor.elicit(request).await;
        if let Some(why) = &answer.declined_because {
            let server = &self.server;
            tracing::info!(target: "mcp", "[{server}] declined a {mode} elicitation: {why}");
            if let Some(notes) = notes {
                notes.lock().push(noted(why));
            }
        }
        answer.result
    }
}

/// A call registered with [`Asking::open`]; dropping it ends the registration.
pub struct InFlight {
    asking: Arc<Asking>,
    id: u64,
    notes: Arc<Mutex<Vec<String>>>,
}

impl InFlight {
    /// `output` with every decline noted during the call: a text block after the content
    /// (and a line after a text value, which is the text of the content), or a line after
    /// a failure's message.
    pub fn noted(self, output: Result<BodyOutput, ToolError>) -> Result<BodyOutput, ToolError> {
        let notes = std::mem::take(&mut *self.notes.lock());
        if notes.is_empty() {
            return output;
        }
        let note = notes.join("\n");
        match output {
            Ok(mut body) => {
                let content = body.content.get_or_insert_with(|| {
                    vec![ContentBlock::text(crate::json::render_compact(&body.value))]
                });
                content.push(ContentBlock::text(note.clone()));
                if let serde_json::Value::String(text) = &mut body.value {
                    text.push('\n');
                    text.push_str(&note);
                }
                Ok(body)
            }
            Err(mut error) => {
                error.message = format!("{}\n{note}", error.message);
                Err(error)
            }
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.asking.open.lock().retain(|open| open.id != self.id);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
