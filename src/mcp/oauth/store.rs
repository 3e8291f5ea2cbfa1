//! Where a remote server's OAuth credentials live between runs: one JSON file per server
//! (named by the server and a hash of its URL) in `$XDG_CONFIG_HOME/dsh-tools/oauth/`
//! (`~/.config/dsh-tools/oauth/` without it), created mode 0600 in a 0700 directory and
//! replaced whole by a rename, so a reader never sees half a token and no other user reads one.

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The directory of every server's credentials, or `None` without `$XDG_CONFIG_HOME` and `$HOME`.
pub fn token_dir() -> Option<PathBuf> {
    token_dir_in(|var| std::env::var_os(var))
}

/// [`token_dir`] with `env` for the process environment.
fn token_dir_in(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let set = |var: &str| {
        env(var)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    let base = set("XDG_CONFIG_HOME").or_else(|| set("HOME").map(|home| home.join(".config")))?;
    Some(base.join("dsh-tools").join("oauth"))
}

/// What one file holds: the credentials and the URL they were granted for (a server renamed
/// to point elsewhere starts over instead of sending its token to another URL).
#[derive(Serialize, Deserialize)]
struct Saved {
    url: String,
    credentials: StoredCredentials,
}

/// One server's credential file.
#[derive(Clone)]
pub struct FileStore {
    path: PathBuf,
    url: String,
}

impl FileStore {
    /// The store of server `name` at `url`, in `dir`.
    pub fn new(dir: &Path, name: &str, url: &str) -> FileStore {
        let safe: String = name
            .chars()
            .map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c,
                _ => '_',
            })
            .collect();
        let hash = xxhash_rust::xxh3::xxh3_64(url.as_bytes());
        FileStore {
            path: dir.join(format!("{safe}-{hash:016x}.json")),
            url: url.to_owned(),
        }
    }

    /// The file's path (for messages and tests).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether credentials for this URL were saved.
    pub fn holds_credentials(&self) -> bool {
        self.read().is_ok_and(|saved| saved.is_some())
    }

    fn read(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(failure(&self.path, &e)),
        };
        // An unreadable or foreign file is no credential: the next authorization replaces it.
        Ok(serde_json::from_slice::<Saved>(&text)
            .ok()
            .filter(|saved| saved.url == self.url)
            .map(|saved| saved.credentials))
    }

    fn write(&self, credentials: StoredCredentials) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let saved = Saved {
            url: self.url.clone(),
            credentials,
        };
        let text = serde_json::to_vec_pretty(&saved).map_err(std::io::Error::other)?;
        let partial = self
            .path
            .with_extension(format!("{}.tmp", std::process::id()));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&partial)?;
        file.write_all(&text)?;
        file.sync_all()?;
        std::fs::rename(&partial, &self.path)
    }
}

fn failure(path: &Path, error: &std::io::Error) -> AuthError {
    AuthError::CredentialStoreError(format!("{}: {error}", path.display()))
}

#[async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read()
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(credentials).map_err(|e| failure(&self.path, &e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(failure(&self.path, &e)),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn credentials() -> StoredCredentials {
        StoredCredentials::new("client-1".into(), None, vec!["mcp".into()], Some(7))
    }

    #[tokio::test]
    async fn saved_credentials_are_private_and_bound_to_their_url() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(&dir.path().join("oauth"), "team/docs", "http://a/mcp");
        assert!(store.load().await.unwrap().is_none());
        store.save(credentials()).await.unwrap();
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(store.path().parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        assert!(
            store
                .path()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("team_docs-")
        );
        assert_eq!(store.load().await.unwrap().unwrap().client_id, "client-1");
        // The same name at another URL is another file; a file for another URL is ignored.
        let elsewhere = FileStore::new(&dir.path().join("oauth"), "team/docs", "http://b/mcp");
        assert_ne!(elsewhere.path(), store.path());
        let moved = FileStore {
            path: store.path().to_owned(),
            url: "http://b/mcp".into(),
        };
        assert!(moved.load().await.unwrap().is_none());
        store.clear().await.unwrap();
        assert!(!store.holds_credentials());
    }

    #[test]
    fn the_token_dir_is_under_xdg_config_home_else_home_config() {
        let env = |xdg: &'static str| {
            move |var: &str| match var {
                "XDG_CONFIG_HOME" => Some(xdg.into()),
                "HOME" => Some("/home/u".into()),
                _ => None,
            }
        };
        assert_eq!(
            token_dir_in(env("/x")),
            Some(PathBuf::from("/x/dsh-tools/oauth"))
        );
        assert_eq!(
            token_dir_in(env("")),
            Some(PathBuf::from("/home/u/.config/dsh-tools/oauth"))
        );
        assert_eq!(token_dir_in(|_| None), None);
    }
}
