//! The core's layers, as docs/architecture.md draws them, hold in the code.
//!
//! The "Layers" drawing lists the core's modules from the top layer down; modules named on one
//! line are peers of one layer. Every `crate::...` path in a module's code (a `use`, or a path
//! written inline) must name a module of a lower layer, except the climbs the doc states on its
//! `climbs:` line (at most one). Paths are followed to the file that defines the name they
//! end in (through `pub use` re-exports), and the graph of files taking names from files must
//! have no circle. Test code (`tests.rs`, `*_tests.rs`, `testutil.rs`, `#[cfg(test)] mod
//! tests`) is left out: tests may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::drawing;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn src() -> PathBuf {
    root().join("src")
}

/// The drawing's layers, top first, each the modules its entry names (`wifi/` -> `wifi`), and
/// the `climbs:` line's pairs (from, to).
fn layers() -> (Vec<Vec<String>>, Vec<(String, String)>) {
    let layers = drawing::entries()
        .into_iter()
        .map(|(names, _)| {
            names.iter().map(|t| t.split('/').next().unwrap().trim_end_matches(".rs").to_string()).collect()
        })
        .collect();
    (layers, drawing::climbs())
}

/// A source file: its module path (`["wifi", "ht", "params"]`) and its code without comments
/// and test modules.
struct File {
    path: PathBuf,
    module: Vec<String>,
    code: String,
}

fn is_test_file(p: &Path) -> bool {
    let n = p.file_name().unwrap().to_str().unwrap();
    n == "tests.rs"
        || n.ends_with("_tests.rs")
        || n == "testutil.rs"
        || p.components().any(|c| c.as_os_str() == "tests")
}

/// Code without line comments, and without an inline `#[cfg(test)] mod ... { }`.
fn strip(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        let t = l.trim_start();
        if t.starts_with("//") {
            continue;
        }
        if t.starts_with("#[cfg(test)]") {
            // Skip the item that follows: a module with a body to its closing brace, or one line.
            let mut depth = 0i32;
            let mut opened = false;
            for l in lines.by_ref() {
                depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
                opened |= l.contains('{');
                if (opened && depth <= 0) || (!opened && l.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        let code = match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

fn files() -> Vec<File> {
    let mut out = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<File>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") && !is_test_file(&p) {
                let rel = p.strip_prefix(src()).unwrap();
                let mut module: Vec<String> =
                    rel.with_extension("").components().map(|c| c.as_os_str().to_str().unwrap().to_string()).collect();
                if module.last().is_some_and(|m| m == "mod" || m == "lib") {
                    module.pop();
                }
                let code = strip(&std::fs::read_to_string(&p).unwrap());
                out.push(File { path: p, module, code });
            }
        }
    }
    walk(&src(), &mut out);
    out
}

/// The file of module `m` (`["wifi", "ht"]` -> src/wifi/ht/mod.rs), if it exists.
fn module_file(m: &[String]) -> Option<PathBuf> {
    if m.is_empty() {
        return Some(src().join("lib.rs"));
    }
    let base = m.iter().fold(src(), |p, s| p.join(s));
    [base.with_extension("rs"), base.join("mod.rs")].into_iter().find(|p| p.exists())
}

/// Every path a file's code names in its crate: `crate::a::b::C` written inline and in
/// `use` items (braces expanded), `super::...` resolved against the file's module.
fn paths(f: &File) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let code = &f.code;
    // `use` items (a line that starts one, to its `;`), braces expanded.
    let lines: Vec<&str> = code.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        let t = t
            .strip_prefix("pub ")
            .or_else(|| t.strip_prefix("pub(crate) "))
            .or_else(|| t.strip_prefix("pub(super) "))
            .unwrap_or(t);
        if let Some(rest) = t.strip_prefix("use ") {
            let mut item = rest.to_string();
            while !item.contains(';') && i + 1 < lines.len() {
                i += 1;
                item.push_str(lines[i]);
            }
            let item = item.split(';').next().unwrap().replace(char::is_whitespace, "");
            expand(&item, &mut out, &f.module);
        }
        i += 1;
    }
    // Inline paths.
    for start in ["crate::", "super::"] {
        let mut rest = code.as_str();
        while let Some(i) = rest.find(start) {
            let ok = rest[..i].chars().last().is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
            let tail = &rest[i..];
            let end = tail.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(tail.len());
            let line_start = rest[..i].rfind('\n').map_or(0, |n| n + 1);
            let on_use_line = rest[line_start..i].contains("use ");
            if ok && !on_use_line {
                let p = tail[..end].trim_end_matches(':');
                if let Some(v) = absolute(p.split("::").map(str::to_string).collect(), &f.module) {
                    out.push(v);
                }
            }
            rest = &tail[end.max(1)..];
        }
    }
    out
}

/// `use` tree text (no blanks) into absolute paths.
fn expand(tree: &str, out: &mut Vec<Vec<String>>, module: &[String]) {
    fn go(prefix: &str, tree: &str, acc: &mut Vec<String>) {
        match tree.find('{') {
            None => acc.push(format!("{prefix}{tree}")),
            Some(i) => {
                let head = &tree[..i];
                let Some(close) = tree.rfind('}') else { return };
                let inner = &tree[i + 1..close];
                let mut depth = 0;
                let mut start = 0;
                for (j, c) in inner.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            go(&format!("{prefix}{head}"), &inner[start..j], acc);
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                if start < inner.len() {
                    go(&format!("{prefix}{head}"), &inner[start..], acc);
                }
            }
        }
    }
    let mut acc = Vec::new();
    go("", tree, &mut acc);
    for p in acc {
        let p = p.split(" as ").next().unwrap().trim_end_matches("::*").to_string();
        let segs: Vec<String> = p.split("::").filter(|s| !s.is_empty() && *s != "self").map(str::to_string).collect();
        if let Some(v) = absolute(segs, module) {
            out.push(v);
        }
    }
}

/// A path from `crate` or `super`, absolute; None for any other (std, a dependency, a child).
fn absolute(segs: Vec<String>, module: &[String]) -> Option<Vec<String>> {
    let mut it = segs.into_iter().peekable();
    let mut base: Vec<String> = match it.peek().map(String::as_str) {
        Some("crate") => {
            it.next();
            Vec::new()
        }
        Some("super") => {
            let mut b = module.to_vec();
            while it.peek().is_some_and(|s| s == "super") {
                it.next();
                b.pop()?;
            }
            b
        }
        _ => return None,
    };
    base.extend(it);
    Some(base)
}

/// The file that defines the item a path ends in: the deepest module file on the path, then
/// through `pub use` re-exports of that module to the defining file.
fn defining_file(path: &[String], depth: u32) -> Option<PathBuf> {
    let mut k = path.len();
    while k > 0 && module_file(&path[..k]).is_none() {
        k -= 1;
    }
    let file = module_file(&path[..k])?;
    if k == path.len() || depth > 8 {
        return Some(file);
    }
    let name = &path[k];
    let text = strip(&std::fs::read_to_string(&file).ok()?);
    let defines = ["struct", "enum", "fn", "const", "static", "type", "trait", "mod", "union"].iter().any(|kw| {
        text.contains(&format!("{kw} {name} "))
            || text.contains(&format!("{kw} {name}<"))
            || text.contains(&format!("{kw} {name}("))
            || text.contains(&format!("{kw} {name};"))
            || text.contains(&format!("{kw} {name}:"))
    }) || text.contains(&format!("macro_rules! {name}"));
    if defines {
        return Some(file);
    }
    // A re-export: follow the `pub use` that names it.
    let module = path[..k].to_vec();
    let mut reexports = Vec::new();
    for l in text.split(';') {
        let t = l.trim();
        if let Some(u) = t.strip_prefix("pub use ").or_else(|| t.strip_prefix("pub(crate) use ")) {
            let mut v = Vec::new();
            let u = u.replace(char::is_whitespace, "");
            let u = if u.starts_with("crate::") || u.starts_with("super::") { u } else { format!("self::{u}") };
            let u = u
                .strip_prefix("self::")
                .map(|r| format!("crate::{}{r}", module.iter().map(|m| format!("{m}::")).collect::<String>()))
                .unwrap_or(u);
            expand(&u, &mut v, &module);
            reexports.extend(v.into_iter().filter(|p| p.last() == Some(name)));
        }
    }
    match reexports.first() {
        Some(p) => defining_file(p, depth + 1),
        None => Some(file),
    }
}

fn top(file: &Path) -> String {
    let rel = file.strip_prefix(src()).unwrap();
    rel.components().next().unwrap().as_os_str().to_str().unwrap().trim_end_matches(".rs").to_string()
}

/// What the check finds in `files`: the imports that climb (not among `climbs`), the climbs of
/// `climbs` the code has, and the circles of files.
fn check(
    files: &[File],
    layers: &[Vec<String>],
    climbs: &[(String, String)],
) -> (Vec<String>, BTreeSet<(String, String)>, Vec<String>) {
    let n = layers.len();
    let rank: BTreeMap<String, usize> =
        layers.iter().enumerate().flat_map(|(i, ms)| ms.iter().map(move |m| (m.clone(), n - i))).collect();
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    let mut climbing = Vec::new();
    let mut climbs_used = BTreeSet::new();
    for f in files {
        let from = top(&f.path);
        if from == "lib" {
            continue;
        }
        let from_rank = *rank.get(&from).unwrap_or_else(|| panic!("src/{from} is not in the drawing's layers"));
        for p in paths(f) {
            let Some(to_file) = defining_file(&p, 0) else { continue };
            if to_file == f.path || to_file == src().join("lib.rs") {
                continue;
            }
            edges.entry(f.path.clone()).or_default().insert(to_file.clone());
            let to = top(&to_file);
            if to == from {
                continue;
            }
            let to_rank = *rank.get(&to).unwrap_or_else(|| panic!("src/{to} is not in the drawing's layers"));
            if to_rank >= from_rank {
                if climbs.contains(&(from.clone(), to.clone())) {
                    climbs_used.insert((from.clone(), to.clone()));
                } else {
                    let rel = f.path.strip_prefix(src()).unwrap().display().to_string();
                    climbing.push(format!(
                        "{rel} names crate::{} ({to} is {} {from})",
                        p.join("::"),
                        if to_rank == from_rank { "a peer of" } else { "above" }
                    ));
                }
            }
        }
    }
    climbing.sort();
    climbing.dedup();

    // Circles among files (Tarjan's strongly connected components).
    let nodes: Vec<&PathBuf> = files.iter().map(|f| &f.path).collect();
    let index: BTreeMap<&PathBuf, usize> = nodes.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    let adj: Vec<Vec<usize>> = nodes
        .iter()
        .map(|p| edges.get(*p).map_or(Vec::new(), |s| s.iter().filter_map(|q| index.get(q).copied()).collect()))
        .collect();
    let circles = sccs(&adj)
        .iter()
        .map(|c| {
            let mut names: Vec<String> =
                c.iter().map(|&i| nodes[i].strip_prefix(src()).unwrap().display().to_string()).collect();
            names.sort();
            names.join(", ")
        })
        .collect();
    (climbing, climbs_used, circles)
}

#[test]
fn imports_go_down_the_documented_layers_and_files_form_no_circle() {
    let (layers, climbs) = layers();
    assert!(layers.len() >= 8, "the drawing was not read: {layers:?}");
    assert!(climbs.len() <= 1, "at most one import may climb a layer; the doc states {climbs:?}");
    let (climbing, used, circles) = check(&files(), &layers, &climbs);
    assert!(climbing.is_empty(), "imports that climb docs/architecture.md's layers:\n{}", climbing.join("\n"));
    for c in &climbs {
        assert!(used.contains(c), "the doc states the climb {c:?}, which the code no longer has: drop it");
    }
    assert!(circles.is_empty(), "files that import each other in a circle:\n{}", circles.join("\n"));
}

#[test]
fn the_check_finds_a_climbing_import_and_a_circle() {
    // The crate as it is, with two files changed: phy/mod.rs names the cell (above it), and
    // node.rs and time.rs name each other.
    let (layers, climbs) = layers();
    let mut files = files();
    for f in &mut files {
        if f.path.ends_with("src/phy/mod.rs") {
            f.code.push_str("\nuse crate::wifi::Wifi;\n");
        }
        if f.path.ends_with("src/node.rs") {
            f.code.push_str("\nfn f() -> crate::time::Nanos { todo!() }\n");
        }
        if f.path.ends_with("src/time.rs") {
            f.code.push_str("\nuse crate::node::Node;\n");
        }
    }
    let (climbing, _, circles) = check(&files, &layers, &climbs);
    assert!(
        climbing.iter().any(|c| c.starts_with("phy/mod.rs names crate::wifi::Wifi (wifi is above phy)")),
        "{climbing:?}"
    );
    assert!(
        climbing.iter().any(|c| c.starts_with("time.rs names crate::node::Node (node is above time)")),
        "{climbing:?}"
    );
    assert!(circles.contains(&"node.rs, time.rs".to_string()), "{circles:?}");
}

/// The strongly connected components of more than one node.
fn sccs(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct T<'a> {
        adj: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T<'_>, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in &t.adj[v] {
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut c = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on[w] = false;
                c.push(w);
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                t.out.push(c);
            }
        }
    }
    let n = adj.len();
    let mut t = T {
        adj,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn the_resolver_follows_reexports_and_super() {
    // Sanity of the reader itself, on paths that exist in any version of the crate.
    let f = defining_file(&["time".into(), "Nanos".into()], 0).unwrap();
    assert!(f.ends_with("src/time.rs"), "{f:?}");
    let mut v = Vec::new();
    expand("super::{a,b::{C,D}}", &mut v, &["x".into(), "y".into()]);
    assert_eq!(v, vec![vec!["x", "a"], vec!["x", "b", "C"], vec!["x", "b", "D"]]);
    assert_eq!(strip("a\n// b\n#[cfg(test)]\nmod tests {\n  x\n}\nc // d\n"), "a\nc \n");
}
