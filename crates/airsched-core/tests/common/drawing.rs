//! The "Layers" drawing of docs/architecture.md as the tests that hold the code to it read it
//! (tests/architecture_doc.rs, tests/layers.rs): the core's entries, top layer first, and the
//! `climbs:` line.

use std::path::Path;

fn doc() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md")).unwrap()
}

/// The core part of the drawing: (entry names, description text) per entry.
pub fn entries() -> Vec<(Vec<String>, String)> {
    let doc = doc();
    let layers = doc.split("## Layers").nth(1).expect("a Layers section");
    let block = layers.split("```").nth(1).expect("a drawing");
    let core = block.split("crates/airsched-core").nth(1).expect("the core's part");
    let mut out: Vec<(Vec<String>, String)> = Vec::new();
    // A name column that ends in a comma goes on with the next line: one entry (one layer).
    let mut continues = false;
    for line in core.lines().skip(1) {
        let (name_col, desc) = line.split_at(line.len().min(23));
        let names: Vec<String> = name_col
            .split([',', ' '])
            .map(str::trim)
            .filter(|t| t.ends_with('/') || t.ends_with(".rs"))
            .map(str::to_string)
            .collect();
        if !names.is_empty() && line.starts_with("  ") && !line.starts_with("   ") {
            match out.last_mut() {
                Some(last) if continues => {
                    last.0.extend(names);
                    last.1 += " ";
                    last.1 += desc;
                }
                _ => out.push((names, desc.to_string())),
            }
            continues = name_col.trim_end().ends_with(',');
        } else if let Some(last) = out.last_mut() {
            last.1 += " ";
            last.1 += line;
        }
    }
    out
}

/// The `climbs:` line's pairs (from, to): the imports that may climb a layer.
pub fn climbs() -> Vec<(String, String)> {
    let doc = doc();
    let section = doc.split("## Layers").nth(1).expect("a Layers section");
    let line = section.lines().find(|l| l.trim_start().starts_with("climbs:")).expect("a `climbs:` line");
    line.trim_start()
        .trim_start_matches("climbs:")
        .split(';')
        .filter_map(|c| {
            let c = c.split('(').next().unwrap();
            let (a, b) = c.split_once("->")?;
            Some((a.trim().trim_matches('`').to_string(), b.trim().trim_matches('`').to_string()))
        })
        .collect()
}
