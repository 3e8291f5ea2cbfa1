//! Typed params from raw JSON, without serde_json's 128-level limit (tool arguments may be
//! deeply nested; the transport already bounded nesting) and with errors naming the field.

use super::errors::invalid_params;
use jsonrpsee_types::{ErrorObjectOwned, Params};
use serde::de::DeserializeOwned;

/// Parses `params` (absent = `{}`) into `T`; `-32602` names the offending field.
pub fn parse<T: DeserializeOwned>(params: &Params<'_>) -> Result<T, ErrorObjectOwned> {
    let text = params.as_str().unwrap_or("{}");
    if text.trim_start().starts_with('[') {
        return Err(invalid_params(
            "invalid params: expected an object (every method takes named params)",
        ));
    }
    from_str(text)
}

/// Parses JSON text into `T` with field-naming errors.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, ErrorObjectOwned> {
    let mut json = serde_json::Deserializer::from_str(text);
    json.disable_recursion_limit();
    let stacked = serde_stacker::Deserializer::new(&mut json);
    let parsed: T = serde_path_to_error::deserialize(stacked).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            invalid_params(format!("invalid params: {inner}"))
        } else {
            invalid_params(format!("invalid params: {path}: {inner}"))
        }
    })?;
    json.end()
        .map_err(|e| invalid_params(format!("invalid params: {e}")))?;
    Ok(parsed)
}
