//! Commands of the binary besides `serve`: run a program, print the SDK, generate protocol files.

mod run;

pub use run::{run_program, sdk_text};

use dsh_tools::ToolRuntime;
use dsh_tools::code_mode::CodeMode;
use dsh_tools::policy::PolicySet;
use dsh_tools_protocol::{HostConfig, PresentationMode};
use std::sync::Arc;

/// A runtime presenting Code Mode (whatever `tools.mode` says: the CLI only runs programs),
/// with the configured tool sources registered.
pub fn local_runtime(config: &HostConfig) -> anyhow::Result<(Arc<ToolRuntime>, Arc<CodeMode>)> {
    let mut config = config.clone();
    config.tools.mode = PresentationMode::Code;
    let runtime = ToolRuntime::new(&config);
    let code = CodeMode::install(&runtime, config.code_runtime.clone())?;
    PolicySet::install(&runtime, &config)?;
    dsh_tools::builtins::register_builtins(&runtime, &config.builtins)?;
    Ok((runtime, code))
}
