//! Each vendored crate (vendor/v8x, vendor/oxc_parser) is the published crate plus
//! vendor/patches/<crate> and nothing else, checked offline: the patches are taken back out of
//! a copy in reverse order, what remains must hash as the published crate did
//! (vendor/patches/<crate>/IMPORT.sha256, written by `vendor/patches.sh <crate> manifest`), and
//! applying them again must give vendor/<crate> back byte for byte. A change made to a
//! vendored crate directly fails here; it belongs in a patch.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::root;

#[test]
fn vendored_v8x_is_the_published_crate_plus_its_patches() {
    published_plus_patches("v8x");
}

#[test]
fn vendored_oxc_parser_is_the_published_crate_plus_its_patches() {
    published_plus_patches("oxc_parser");
}

fn published_plus_patches(crate_name: &str) {
    let how_to_fix = format!(
        "vendor/{crate_name} must be {crate_name} as published plus vendor/patches/{crate_name}: \
         put the change in a patch and run `vendor/patches.sh {crate_name} apply` (see \
         vendor/README.md)"
    );
    let vendored = root().join("vendor").join(crate_name);
    let patch_dir = root().join("vendor/patches").join(crate_name);
    let patches = patches(&patch_dir);
    assert!(!patches.is_empty(), "no patches in {}", patch_dir.display());
    let scratch = tempfile::tempdir().unwrap();
    let copy = scratch.path().join(crate_name);
    copy_tree(&vendored, &copy);

    for patch in patches.iter().rev() {
        if let Err(error) = git_apply(&copy, patch, true) {
            panic!(
                "{} does not come back out of vendor/{crate_name}: {error}\n{how_to_fix}",
                name(patch)
            );
        }
    }
    let expected = std::fs::read_to_string(patch_dir.join("IMPORT.sha256")).unwrap();
    let found = manifest(&copy);
    if found != expected {
        let expected: Vec<&str> = expected.lines().collect();
        let differing: Vec<&str> = found
            .lines()
            .filter(|line| !expected.contains(line))
            .take(10)
            .collect();
        panic!(
            "without its patches, vendor/{crate_name} is not the published crate \
             (files that differ or are new, by sha256, up to 10: {differing:?}; \
             {} files expected, {} found)\n{how_to_fix}",
            expected.len(),
            found.lines().count()
        );
    }

    for patch in &patches {
        if let Err(error) = git_apply(&copy, patch, false) {
            panic!(
                "{} does not apply again: {error}\n{how_to_fix}",
                name(patch)
            );
        }
    }
    let (rebuilt, current) = (files(&copy), files(&vendored));
    assert_eq!(
        rebuilt, current,
        "the files of the published crate plus its patches are not vendor/{crate_name}'s\n{how_to_fix}"
    );
    for path in &current {
        let same =
            std::fs::read(copy.join(path)).unwrap() == std::fs::read(vendored.join(path)).unwrap();
        assert!(
            same,
            "vendor/{crate_name}/{path} is not what its patches make\n{how_to_fix}"
        );
    }
}

/// The patches, in application order (their names start with a four-digit number).
fn patches(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "patch"))
        .collect();
    found.sort();
    found
}

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// Applies (or with `reverse`, takes out) one patch in `dir`, which is outside any
/// repository: the ceiling keeps git from looking for one above it.
fn git_apply(dir: &Path, patch: &Path, reverse: bool) -> Result<(), String> {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
        .args(["apply", "--whitespace=nowarn"]);
    if reverse {
        command.arg("-R");
    }
    let output = command
        .arg(patch)
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// Every file under `dir`, as paths relative to it with `/`, sorted bytewise.
fn files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(dir).unwrap();
                found.push(relative.to_str().unwrap().to_owned());
            }
        }
    }
    found.sort();
    found
}

/// `sha256sum` of every file under `dir`, sorted by path: the format the script writes.
fn manifest(dir: &Path) -> String {
    let output = Command::new("sha256sum")
        .current_dir(dir)
        .arg("--")
        .args(files(dir))
        .output()
        .unwrap();
    assert!(output.status.success(), "sha256sum failed");
    String::from_utf8(output.stdout).unwrap()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().map(Result::unwrap) {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
