//! The file tools (`read`, `write`, `edit`, `glob`, `grep`), every path confined to
//! `builtins.fs.root` by [`FsRoot`].

mod beneath;
mod edit;
mod glob;
mod grep;
mod ledger;
mod read;
mod replace;
mod root;
mod walk;
mod write;

pub use edit::EditOutput;
pub use glob::GlobOutput;
pub use grep::{
    CARD_ENTRIES as GREP_CARD_ENTRIES, GrepOutput, MatchedFile, MatchedLine, PathCount,
};
pub use read::{
    CellOutput, ImageRead, MediaRead, NotebookCell, NotebookRead, NumberedLine, PdfPage, PdfRead,
    ReadOutput, TextRead,
};
pub use root::{Confined, FsRoot};
pub use write::WriteOutput;

use crate::tool::{DefinitionError, ToolDefinition, ToolError};
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// The five file tool definitions over one root; with `stale_edits`, `write` and `edit`
/// refuse an existing file the calling scope has not read as it is now (see `ledger`).
pub fn definitions(
    root: &Arc<FsRoot>,
    stale_edits: bool,
) -> Result<Vec<ToolDefinition>, DefinitionError> {
    let ledger = Arc::new(ledger::Ledger::new(stale_edits));
    Ok(vec![
        read::definition(root.clone(), ledger.clone())?,
        write::definition(root.clone(), ledger.clone())?,
        edit::definition(root.clone(), ledger)?,
        glob::definition(root.clone())?,
        grep::definition(root.clone())?,
    ])
}

/// Opens an existing regular file beneath `root` (see `beneath`), with its size;
/// directories, devices and FIFOs are refused after an open that cannot block.
fn regular_file(root: &FsRoot, path: &Path, requested: &str) -> Result<(File, u64), ToolError> {
    let file = beneath::open_for_reading(root.path(), path)
        .map_err(|e| file_error("open", requested, &e))?;
    let meta = file
        .metadata()
        .map_err(|e| file_error("open", requested, &e))?;
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
    Ok((file, meta.len()))
}

/// Writes `content` as the whole of `path` (see `replace`): `Ok(true)` when it was created.
fn replace_file(
    root: &FsRoot,
    path: &Path,
    requested: &str,
    content: &[u8],
    make_parents: bool,
) -> Result<bool, ToolError> {
    root.check_writable(path, requested)?;
    replace::replace(root.path(), path, content, make_parents).map_err(|error| match error {
        replace::ReplaceError::Directory => {
            ToolError::new(format!("\"{requested}\" is a directory, not a file"))
        }
        replace::ReplaceError::NotRegular => {
            ToolError::new(format!("\"{requested}\" is not a regular file"))
        }
        replace::ReplaceError::Io(e) => file_error("write", requested, &e),
    })
}

/// What `path` (a resolved path inside `root`) holds now, when it is an existing regular
/// file: for the stale-edit check before it is replaced. Anything else (missing, a
/// directory, a FIFO) is `None`, left to the write to create or refuse.
fn existing_state(
    root: &FsRoot,
    path: &Path,
    requested: &str,
) -> Result<Option<ledger::Seen>, ToolError> {
    let file = match beneath::open_for_reading(root.path(), path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(file_error("open", requested, &error)),
    };
    let meta = file
        .metadata()
        .map_err(|e| file_error("open", requested, &e))?;
    if !meta.is_file() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut &file, &mut bytes).map_err(|e| file_error("read", requested, &e))?;
    Ok(Some(ledger::Seen::of(&bytes, Some(&meta))))
}

/// What `path` looks like after this host wrote `content` to it (its mtime as stored now).
fn written_state(root: &FsRoot, path: &Path, content: &[u8]) -> ledger::Seen {
    let meta = beneath::open_for_reading(root.path(), path).and_then(|file| file.metadata());
    ledger::Seen::of(content, meta.ok().as_ref())
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
