//! docs/architecture.md draws the core's layout: every folder and file its "Layers" drawing
//! names exists, every file a folder's description names is in that folder, and every module
//! of the crate appears in the drawing, and the climbs it states join drawn modules.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::drawing;
use drawing::entries;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn files_under(dir: &Path, out: &mut BTreeSet<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, out);
        } else if let Some(n) = p.file_name().and_then(|n| n.to_str()) {
            out.insert(n.to_string());
        }
    }
}

#[test]
fn the_drawing_names_what_exists_and_every_module_is_drawn() {
    let entries = entries();
    assert!(entries.len() > 12, "the drawing was not read: {entries:?}");
    let mut drawn = BTreeSet::new();
    for (names, desc) in &entries {
        for name in names {
            let path = src().join(name);
            assert!(path.exists(), "docs/architecture.md names {name}, which is not in src/");
            drawn.insert(name.split('/').next().unwrap().trim_end_matches(".rs").to_string());
        }
        // Every file the description names is in one of the entry's folders (or is one of its
        // files).
        let folders: Vec<&String> = names.iter().filter(|n| n.ends_with('/')).collect();
        if !folders.is_empty() {
            let mut inside = BTreeSet::new();
            for f in &folders {
                files_under(&src().join(f), &mut inside);
            }
            inside.extend(names.iter().cloned());
            for word in desc.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')) {
                if word.ends_with(".rs") && word.len() > 3 {
                    assert!(inside.contains(word), "docs/architecture.md says {folders:?} hold {word}; they do not");
                }
            }
        }
    }
    for e in std::fs::read_dir(src()).unwrap() {
        let p = e.unwrap().path();
        let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
        if stem == "lib" {
            continue;
        }
        assert!(
            drawn.contains(&stem),
            "src/{} is not in docs/architecture.md's drawing",
            p.file_name().unwrap().to_str().unwrap()
        );
    }
    // The climbs the doc states join modules of its drawing.
    for (from, to) in drawing::climbs() {
        assert!(drawn.contains(&from) && drawn.contains(&to), "the climb {from} -> {to} names a module not drawn");
    }
}
