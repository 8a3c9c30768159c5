//! mcp-smol's modules import one another in layers: no circle of `crate::` paths among them
//! (issue 35). A module is a file at the top of `src/` or a directory there (`driver/` is one
//! module); a path to a name the crate root re-exports counts as a path to the module it comes
//! from. Comments are skipped; the test modules inside files count like the rest.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every `.rs` file under `dir`, with the module (top-level name under `src/`) it belongs to.
fn files(src: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(src, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(src).unwrap();
            let first = relative.components().next().unwrap().as_os_str().to_str().unwrap();
            let module = first.trim_end_matches(".rs").to_owned();
            out.push((module, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The text without `//` comments (line by line; enough for this crate's sources).
fn code(text: &str) -> String {
    text.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn identifier_at(text: &str) -> &str {
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(text.len());
    &text[..end]
}

/// Names the crate root re-exports (`pub use module::{A, B}` or `pub use module::A`), and the
/// module each comes from.
fn root_exports(lib: &str) -> BTreeMap<String, String> {
    let mut exports = BTreeMap::new();
    let lib = code(lib);
    for statement in lib.split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else { continue };
        let Some((module, items)) = rest.split_once("::") else { continue };
        for item in items.split(|c: char| c == ',' || c == '{' || c == '}' || c.is_whitespace()) {
            let name = item.split("::").next().unwrap_or("");
            if !name.is_empty() && name != "self" {
                exports.insert(name.to_owned(), module.trim().to_owned());
            }
        }
    }
    exports
}

/// The modules each module names through `crate::` (itself and the root excluded).
fn edges(
    sources: &[(String, String)],
    exports: &BTreeMap<String, String>,
) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<&str> = sources.iter().map(|(m, _)| m.as_str()).collect();
    let target = |name: &str| -> Option<String> {
        if modules.contains(name) { Some(name.to_owned()) } else { exports.get(name).cloned() }
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in sources {
        if module == "lib" {
            continue;
        }
        let text = code(text);
        let mut names = Vec::new();
        for (at, _) in text.match_indices("crate::") {
            let rest = &text[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // `use crate::{a::X, b::{Y, Z}}`: the first name of each top-level item.
                let mut depth = 0;
                let mut item_start = true;
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => item_start = true,
                        c if item_start && (c.is_alphanumeric() || c == '_') => {
                            names.push(identifier_at(&group[i..]).to_owned());
                            item_start = false;
                        }
                        _ => {}
                    }
                }
            } else {
                names.push(identifier_at(rest).to_owned());
            }
        }
        for name in names {
            if let Some(to) = target(&name) {
                if &to != module && to != "lib" {
                    edges.entry(module.clone()).or_default().insert(to);
                }
            }
        }
    }
    edges
}

/// The modules from which `from` is reached again, following `edges` (a circle through it).
fn circle_through(from: &str, edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // Depth-first, keeping the path, so a circle is reported as one.
    fn walk(
        at: &str,
        from: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in edges.get(at).into_iter().flatten() {
            if next == from {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(next, from, edges, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![from.to_owned()];
    walk(from, from, edges, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn no_module_imports_itself_through_others() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = Vec::new();
    files(&src, &src, &mut sources);
    let lib = sources.iter().find(|(m, _)| m == "lib").map(|(_, text)| text.clone()).unwrap();
    let edges = edges(&sources, &root_exports(&lib));
    // The scan sees the layers it should: the driver on the shared state, the client on both.
    assert!(edges["driver"].contains("shared"), "{edges:?}");
    assert!(edges["client"].contains("driver") && edges["client"].contains("shared"), "{edges:?}");
    let circles: Vec<Vec<String>> = edges.keys().filter_map(|m| circle_through(m, &edges)).collect();
    assert!(circles.is_empty(), "import circles among mcp-smol's modules: {circles:?}");
}
