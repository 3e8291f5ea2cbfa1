//! The file tools (`read`, `write`, `edit`, `glob`, `grep`), every path confined to
//! `builtins.fs.root` by [`FsRoot`].

mod edit;
mod glob;
mod grep;
mod read;
mod root;
mod walk;
mod write;

pub use edit::EditOutput;
pub use glob::GlobOutput;
pub use grep::{GrepOutput, MatchedFile, MatchedLine, PathCount};
pub use read::{NumberedLine, ReadOutput};
pub use root::{Confined, FsRoot};
pub use write::WriteOutput;

use crate::tool::{DefinitionError, ToolDefinition, ToolError};
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// The five file tool definitions over one root.
pub fn definitions(root: &Arc<FsRoot>) -> Result<Vec<ToolDefinition>, DefinitionError> {
    Ok(vec![
        read::definition(root.clone())?,
        write::definition(root.clone())?,
        edit::definition(root.clone())?,
        glob::definition(root.clone())?,
        grep::definition(root.clone())?,
    ])
}

/// Opens an existing regular file; directories, devices and FIFOs are refused before open
/// (opening a FIFO would block).
fn regular_file(path: &Path, requested: &str) -> Result<File, ToolError> {
    let meta = std::fs::metadata(path).map_err(|e| file_error("open", requested, &e))?;
    if meta.is_dir() {
        return Err(ToolError::new(format!(
            "\"{requested}\" is a directory, not a file"
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::new(format!(
            "\"{requested}\" is not a regular file"
        )));
    }
    File::open(path).map_err(|e| file_error("open", requested, &e))
}

/// A file-system failure in words the model can act on.
fn file_error(verb: &str, requested: &str, error: &io::Error) -> ToolError {
    match error.kind() {
        io::ErrorKind::NotFound => ToolError::new(format!("\"{requested}\" does not exist")),
        io::ErrorKind::PermissionDenied => {
            ToolError::new(format!("permission denied: cannot {verb} \"{requested}\""))
        }
        _ => ToolError::new(format!("cannot {verb} \"{requested}\": {error}")),
    }
}
