//! One mapping from host faults to JSON-RPC errors (a failure the model reads is a result,
//! never an RPC error).

use crate::registry::RegistryError;
use dsh_tools_protocol::error_codes;
use jsonrpsee_types::ErrorObjectOwned;

/// A JSON-RPC error with an optional harness `data.code`.
pub fn rpc_error(
    code: i32,
    message: impl Into<String>,
    data_code: Option<&str>,
) -> ErrorObjectOwned {
    let data = data_code.map(|c| serde_json::json!({ "code": c }));
    ErrorObjectOwned::owned(code, message.into(), data)
}

/// `-32602` naming the field.
pub fn invalid_params(message: impl Into<String>) -> ErrorObjectOwned {
    rpc_error(error_codes::INVALID_PARAMS, message, None)
}

impl From<RegistryError> for ErrorObjectOwned {
    fn from(error: RegistryError) -> Self {
        rpc_error(
            error_codes::REQUEST_FAILED,
            error.to_string(),
            Some(error.code()),
        )
    }
}
