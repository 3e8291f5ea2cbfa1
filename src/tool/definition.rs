//! A tool definition: schemas, output declaration, policy metadata and the body that runs it.

use super::{
    CardMeta, ContentBlock, DefinitionError, ToolCards, ToolError, ToolExecution,
    ToolExecutionResult, ToolRole, ToolRunContext,
};
use crate::schema::{self, Validator};
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::Arc;

/// What a body returns: the canonical value, optionally with its own content and metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyOutput {
    /// Canonical JSON value (validated against the output declaration).
    pub value: Value,
    /// Content to use instead of rendering the value.
    pub content: Option<Vec<ContentBlock>>,
    /// Presentation metadata.
    pub meta: Option<Value>,
    /// An MCP server's `structuredContent` (see [`ToolExecutionResult::structured_content`]).
    pub structured_content: Option<Value>,
}

impl From<Value> for BodyOutput {
    fn from(value: Value) -> Self {
        BodyOutput {
            value,
            content: None,
            meta: None,
            structured_content: None,
        }
    }
}

/// Runs a call. Bodies observe `ctx.signal` and settle only after their own work stops.
pub trait ToolBody: Send + Sync + 'static {
    /// Runs one call with frozen, validated arguments.
    fn call(&self, ctx: ToolRunContext) -> BoxFuture<'static, Result<BodyOutput, ToolError>>;
}

impl<F, Fut> ToolBody for F
where
    F: Fn(ToolRunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<BodyOutput, ToolError>> + Send + 'static,
{
    fn call(&self, ctx: ToolRunContext) -> BoxFuture<'static, Result<BodyOutput, ToolError>> {
        Box::pin(self(ctx))
    }
}

/// Decides per call whether a call may overlap others (`true` exactly means parallel).
pub trait Classifier: Send + Sync + 'static {
    /// Classifies one call's (softly validated) arguments.
    fn classify(&self, registration: &str, arguments: &Value) -> BoxFuture<'static, bool>;
}

/// Renders a canonical value into model-facing content (for `render: "client"` and custom
/// renderers). A failure becomes a normalized error result.
pub trait Renderer: Send + Sync + 'static {
    /// Renders `value` for `execution`.
    fn render(
        &self,
        execution: &ToolExecution,
        registration: &str,
        value: &Value,
    ) -> BoxFuture<'static, Result<Vec<ContentBlock>, ToolError>>;
}

/// Replaces final content once every outcome is normalized. Synchronous and total.
pub type FinalizeContent =
    Arc<dyn Fn(&ToolExecution, &ToolExecutionResult) -> Option<Vec<ContentBlock>> + Send + Sync>;

/// Whether calls may overlap.
#[derive(Clone, Default)]
pub enum Concurrency {
    /// Always exclusive (the default).
    #[default]
    Exclusive,
    /// Always parallel.
    Parallel,
    /// Asked per call.
    Classified(Arc<dyn Classifier>),
}

/// How a value becomes content.
#[derive(Clone, Default)]
pub enum Render {
    /// Strings raw, other JSON pretty (indentation capped at ten characters).
    #[default]
    Default,
    /// A custom or client renderer.
    Custom(Arc<dyn Renderer>),
}

/// How arguments are checked.
#[derive(Clone)]
pub enum InputSchema {
    /// Compiled from the DSL: the host validates arguments (`INVALID_ARGS`).
    Validated {
        /// The compiled JSON Schema.
        json_schema: Value,
        /// Its validator.
        validator: Arc<Validator>,
    },
    /// Raw JSON Schema: the tool owns input validation.
    Raw(Value),
}

impl InputSchema {
    /// The JSON Schema the model sees.
    pub fn json_schema(&self) -> &Value {
        match self {
            InputSchema::Validated { json_schema, .. } | InputSchema::Raw(json_schema) => {
                json_schema
            }
        }
    }
}

/// The mandatory canonical output declaration.
#[derive(Clone)]
pub struct OutputDeclaration {
    /// JSON Schema (enforced subset).
    pub json_schema: Value,
    /// The schema as its source wrote it, when that goes beyond the enforced subset (an MCP
    /// server's `outputSchema` with `$ref` or `minimum`): shown to clients and the SDK,
    /// while `json_schema` (then `{}`) is what values are validated against.
    pub unenforced: Option<Value>,
    /// Its validator.
    pub validator: Arc<Validator>,
    /// Rendering.
    pub render: Render,
}

impl OutputDeclaration {
    /// The schema clients and the SDK are shown: the source's own when it was beyond the
    /// enforced subset, else the enforced one.
    pub fn presented_schema(&self) -> &Value {
        self.unenforced.as_ref().unwrap_or(&self.json_schema)
    }
}

/// A registered tool's definition. Build one with [`ToolDefinition::builder`].
#[derive(Clone)]
pub struct ToolDefinition {
    /// Name (unique in its layer).
    pub name: Arc<str>,
    /// Model-facing description.
    pub description: String,
    /// Argument schema.
    pub input: InputSchema,
    /// Output declaration.
    pub output: OutputDeclaration,
    /// Cooperative deadline (enforced by `pipeline.timeout`).
    pub timeout_ms: Option<u64>,
    /// Overlap classification.
    pub concurrency: Concurrency,
    /// The retry policy may repeat it.
    pub idempotent: bool,
    /// The body.
    pub body: Arc<dyn ToolBody>,
    /// Last content-only invariant.
    pub finalize_content: Option<FinalizeContent>,
    /// UI cards for this tool's calls (`tools/presentCall`, `tools/presentResult`).
    pub cards: Option<Arc<dyn ToolCards>>,
    /// Metadata derived for successful direct calls and persisted with the result.
    pub card_meta: Option<CardMeta>,
    /// Its description and schema stay out of the prompt until `search_tools` loads it
    /// (the registry's `tools.deferred` globs and `tools.alwaysLoaded` decide too).
    pub deferred: bool,
    /// What the tool is to the host (ordinary, or a host tool such as Code Mode's entry).
    pub role: ToolRole,
}

impl std::fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ToolDefinition {
    /// Starts a definition.
    pub fn builder(name: impl Into<Arc<str>>) -> ToolDefinitionBuilder {
        ToolDefinitionBuilder {
            name: name.into(),
            description: String::new(),
            input: None,
            output: None,
            unenforced_output: None,
            timeout_ms: None,
            concurrency: Concurrency::Exclusive,
            idempotent: false,
            render: Render::Default,
            finalize_content: None,
            cards: None,
            card_meta: None,
            deferred: false,
            role: ToolRole::Ordinary,
        }
    }
}

/// Builder of [`ToolDefinition`]; every schema is compiled and checked in `body`.
pub struct ToolDefinitionBuilder {
    name: Arc<str>,
    description: String,
    input: Option<Result<InputSchema, DefinitionError>>,
    output: Option<Result<(Value, Validator), DefinitionError>>,
    unenforced_output: Option<Value>,
    timeout_ms: Option<Value>,
    concurrency: Concurrency,
    idempotent: bool,
    render: Render,
    finalize_content: Option<FinalizeContent>,
    cards: Option<Arc<dyn ToolCards>>,
    card_meta: Option<CardMeta>,
    deferred: bool,
    role: ToolRole,
}

impl ToolDefinitionBuilder {
    /// Model-facing description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = text.into();
        self
    }

    /// DSL parameters (`ParameterSchemaSpec`): the host validates arguments.
    pub fn parameters(mut self, spec: Value) -> Self {
        self.input = Some(compile_parameters(&spec));
        self
    }

    /// Raw input JSON Schema in the enforced subset, validated by the host like DSL input.
    pub fn validated_input_schema(mut self, schema: Value) -> Self {
        let unsupported =
            |e: schema::SchemaError| DefinitionError::UnsupportedSchema(e.to_string());
        self.input = Some(
            Validator::new(&schema, "inputSchema")
                .map(|validator| InputSchema::Validated {
                    json_schema: schema,
                    validator: Arc::new(validator),
                })
                .map_err(unsupported),
        );
        self
    }

    /// Raw input JSON Schema: the tool validates its own arguments.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input = Some(Ok(InputSchema::Raw(schema)));
        self
    }

    /// DSL output (`ValueSchemaSpec`).
    pub fn output(mut self, spec: Value) -> Self {
        self.output = Some(
            schema::compile_value(&spec, "output.schema")
                .map_err(|e| DefinitionError::UnsupportedSchema(e.to_string()))
                .and_then(|json| compile_output(json, "output.schema")),
        );
        self.unenforced_output = None;
        self
    }

    /// Raw output JSON Schema in the enforced subset.
    pub fn output_json_schema(mut self, schema: Value) -> Self {
        self.output = Some(compile_output(schema, "output.jsonSchema"));
        self.unenforced_output = None;
        self
    }

    /// An output schema beyond the enforced subset: values are accepted as any JSON, and
    /// `schema` is what clients and the SDK are shown.
    pub fn unenforced_output_schema(mut self, schema: Value) -> Self {
        self.output = Some(compile_output(Value::Object(Default::default()), "output"));
        self.unenforced_output = Some(schema);
        self
    }

    /// Cooperative deadline in ms (positive and finite).
    pub fn timeout_ms(mut self, ms: Value) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    /// Overlap classification.
    pub fn concurrency(mut self, concurrency: Concurrency) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// Marks the tool safe to retry.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// Custom rendering.
    pub fn render(mut self, render: Render) -> Self {
        self.render = render;
        self
    }

    /// Final content-only invariant.
    pub fn finalize_content(mut self, finalize: FinalizeContent) -> Self {
        self.finalize_content = Some(finalize);
        self
    }

    /// UI cards for this tool's calls.
    pub fn cards(mut self, cards: Arc<dyn ToolCards>) -> Self {
        self.cards = Some(cards);
        self
    }

    /// Metadata derived from `(arguments, value)` for successful direct calls.
    pub fn card_meta(mut self, derive: CardMeta) -> Self {
        self.card_meta = Some(derive);
        self
    }

    /// Defers the tool: it stays visible and callable, but its description and schema leave
    /// the prompt until a `search_tools` call loads it.
    pub fn deferred(mut self, deferred: bool) -> Self {
        self.deferred = deferred;
        self
    }

    /// What the tool is to the host; only the layer that defines a host tool sets this.
    pub fn role(mut self, role: ToolRole) -> Self {
        self.role = role;
        self
    }

    /// Finishes the definition with its body; fails like registration would.
    pub fn body(self, body: impl ToolBody) -> Result<ToolDefinition, DefinitionError> {
        self.body_arc(Arc::new(body))
    }

    /// Finishes the definition with a shared body.
    pub fn body_arc(self, body: Arc<dyn ToolBody>) -> Result<ToolDefinition, DefinitionError> {
        let input = self
            .input
            .unwrap_or_else(|| compile_parameters(&Value::Object(Default::default())))?;
        let (json_schema, validator) = self.output.ok_or(DefinitionError::MissingOutput)??;
        let timeout_ms = self
            .timeout_ms
            .map(|ms| positive_finite_ms(&ms))
            .transpose()?;
        Ok(ToolDefinition {
            name: self.name,
            description: self.description,
            input,
            output: OutputDeclaration {
                json_schema,
                unenforced: self.unenforced_output,
                validator: Arc::new(validator),
                render: self.render,
            },
            timeout_ms,
            concurrency: self.concurrency,
            idempotent: self.idempotent,
            body,
            finalize_content: self.finalize_content,
            cards: self.cards,
            card_meta: self.card_meta,
            deferred: self.deferred,
            role: self.role,
        })
    }
}

fn compile_parameters(spec: &Value) -> Result<InputSchema, DefinitionError> {
    let unsupported = |e: schema::SchemaError| DefinitionError::UnsupportedSchema(e.to_string());
    let json_schema = schema::compile_parameters(spec, "parameters").map_err(unsupported)?;
    let validator = Validator::new(&json_schema, "parameters").map_err(unsupported)?;
    Ok(InputSchema::Validated {
        json_schema,
        validator: Arc::new(validator),
    })
}

fn compile_output(json_schema: Value, field: &str) -> Result<(Value, Validator), DefinitionError> {
    let validator = Validator::new(&json_schema, field)
        .map_err(|e| DefinitionError::UnsupportedSchema(e.to_string()))?;
    Ok((json_schema, validator))
}

/// `timeoutMs` must be a positive, finite number of milliseconds. The refusal shows a
/// number by its kept source text (`1e999` reads `1e+999`): canonical rendering would
/// print an overflowing number as `null`, which is not what the caller sent.
fn positive_finite_ms(ms: &Value) -> Result<u64, DefinitionError> {
    let invalid = || {
        DefinitionError::InvalidTimeout(match ms {
            Value::Number(number) => number.as_str().to_owned(),
            other => crate::json::render_compact(other),
        })
    };
    let number = ms
        .as_f64()
        .filter(|n| n.is_finite() && *n > 0.0)
        .ok_or_else(invalid)?;
    Ok(number.ceil() as u64)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_must_be_positive_and_finite_and_refusals_show_what_was_sent() {
        let check = |text: &str, expected: Result<u64, String>| {
            let ms: Value = serde_json::from_str(text).unwrap();
            let got = positive_finite_ms(&ms).map_err(|e| e.to_string());
            assert_eq!(got, expected, "{text}");
        };
        let refused = |shown: &str| {
            Err(format!(
                "timeoutMs must be a positive, finite number of milliseconds (got {shown})"
            ))
        };
        check("30000", Ok(30000));
        check("0.5", Ok(1));
        check("0", refused("0"));
        check("-5", refused("-5"));
        check("1e999", refused("1e+999"));
        check("-1E+400", refused("-1e+400"));
        check("\"5\"", refused("\"5\""));
        check("null", refused("null"));
    }
}
