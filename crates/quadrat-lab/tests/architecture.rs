//! ARCHITECTURE.md stays true to the tree of files: its file maps name every
//! source file of every crate, and name no file that does not exist.
//!
//! A file map is a fenced block whose first line is a crate's directory
//! (`crates/quadrat/`); each line after it indented by two spaces starts
//! with a path relative to that directory, a file or a directory ending in
//! `/`. Lines indented further continue the description above them.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every path the maps name, relative to the workspace root.
fn mapped(doc: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let mut in_block = false;
    let mut base: Option<String> = None;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            base = None;
            continue;
        }
        if !in_block {
            continue;
        }
        match &base {
            None => {
                // Only blocks that open with a crate directory are maps.
                let first = line.trim();
                if first.starts_with("crates/") && first.ends_with('/') && !first.contains(' ') {
                    base = Some(first.to_owned());
                } else {
                    base = Some(String::new());
                }
            }
            Some(b) if b.is_empty() => {}
            Some(b) => {
                let continues = line.starts_with("   ") || line.trim().is_empty();
                if let (false, Some(path)) = (continues, line.split_whitespace().next()) {
                    named.insert(format!("{b}{path}"));
                }
            }
        }
    }
    named
}

/// The source files that must be mapped: every file under each crate's
/// `src/` and `web/`.
fn sources() -> BTreeSet<String> {
    fn walk(dir: &Path, rel: &str, out: &mut BTreeSet<String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            let rel = format!("{rel}{name}");
            if entry.file_type().unwrap().is_dir() {
                walk(&entry.path(), &format!("{rel}/"), out);
            } else {
                out.insert(rel);
            }
        }
    }
    let mut out = BTreeSet::new();
    for krate in fs::read_dir(root().join("crates")).unwrap() {
        let krate = krate.unwrap();
        let name = krate.file_name().into_string().unwrap();
        for dir in ["src", "web"] {
            walk(
                &krate.path().join(dir),
                &format!("crates/{name}/{dir}/"),
                &mut out,
            );
        }
    }
    out
}

#[test]
fn every_source_file_is_in_the_map() {
    let doc = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let named = mapped(&doc);
    let sources = sources();
    assert!(
        sources.len() > 40,
        "found only {} source files",
        sources.len()
    );
    let missing: Vec<_> = sources.iter().filter(|f| !named.contains(*f)).collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not map: {missing:#?}"
    );
}

#[test]
fn the_map_names_only_files_that_exist() {
    let doc = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let named = mapped(&doc);
    assert!(named.len() > 40, "the maps name only {} paths", named.len());
    let gone: Vec<_> = named.iter().filter(|p| !root().join(p).exists()).collect();
    assert!(
        gone.is_empty(),
        "ARCHITECTURE.md names files that do not exist: {gone:#?}"
    );
}
