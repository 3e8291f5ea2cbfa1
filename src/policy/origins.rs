//! Where each permission list was written: the `--config` file, `initialize.config` (a
//! list given there replaces the file's), so `permissions/explain` and denials can name it.

use serde_json::Value;

/// Names where each permission list of a merged configuration was written: the last of
/// `layers` (origin, the layer's raw value) that sets `permissions.<list>`, over `base`.
pub fn permission_origins(
    base: &dsh_tools_protocol::RuleOrigins,
    layers: &[(&str, &Value)],
) -> dsh_tools_protocol::RuleOrigins {
    let mut origins = base.clone();
    for (origin, value) in layers {
        let sets = |list: &str| value.pointer(&format!("/permissions/{list}")).is_some();
        for (list, slot) in [
            ("allow", &mut origins.allow),
            ("ask", &mut origins.ask),
            ("deny", &mut origins.deny),
        ] {
            if sets(list) {
                *slot = Some((*origin).to_owned());
            }
        }
    }
    origins
}
