//! The examples in mcp-smol's docs compile for a crate that depends on mcp-smol alone: they
//! name the engine through the re-export (`mcp_smol::mcp_sansio::…`), never as `mcp_sansio::…`,
//! which only this workspace's own dev-dependencies make compile. (Doc tests cannot show it:
//! they build with the crate's dev-dependencies, which include mcp-sansio.)
//!
//! The same holds one level down: the engine's own examples say `use mcp_sansio::…`, which is
//! right on the engine's pages. rustdoc would copy an engine type's page, examples included,
//! into mcp-smol's docs wherever mcp-smol re-exports it, so every such re-export is
//! `#[doc(no_inline)]`: mcp-smol's pages link to the engine's instead.

use std::path::{Path, PathBuf};

/// The `.rs` files under `dir`, each with its text, in a stable order.
fn rust_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut visit = vec![dir.to_path_buf()];
    while let Some(path) = visit.pop() {
        if path.is_dir() {
            visit.extend(std::fs::read_dir(&path).unwrap().map(|entry| entry.unwrap().path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            files.push((path, text));
        }
    }
    files.sort();
    files
}

/// Every line of a code block in a `///` or `//!` comment of the files under `dir`.
fn doc_code_lines(dir: &Path, out: &mut Vec<(String, usize, String)>) {
    for (path, text) in rust_files(dir) {
        let mut in_code = false;
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            let Some(doc) = trimmed.strip_prefix("///").or_else(|| trimmed.strip_prefix("//!")) else {
                in_code = false;
                continue;
            };
            let doc = doc.trim_start();
            if doc.starts_with("```") {
                in_code = !in_code;
                continue;
            }
            if in_code {
                out.push((path.display().to_string(), n + 1, doc.to_owned()));
            }
        }
    }
}

/// Whether `line` names the engine crate directly (not through `mcp_smol::` or `crate::`).
fn names_the_engine_directly(line: &str) -> bool {
    line.match_indices("mcp_sansio::").any(|(at, _)| {
        let before = &line[..at];
        !(before.ends_with("mcp_smol::") || before.ends_with("crate::"))
    })
}

#[test]
fn doc_examples_reach_the_engine_through_the_re_export() {
    let mut lines = Vec::new();
    doc_code_lines(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut lines);
    assert!(lines.len() > 100, "the scan found the examples ({} lines)", lines.len());
    let offending: Vec<_> = lines
        .iter()
        .filter(|(_, _, line)| names_the_engine_directly(line))
        .map(|(file, n, line)| format!("{file}:{n}: {line}"))
        .collect();
    assert!(offending.is_empty(), "examples that need mcp-sansio as a dependency:\n{}", offending.join("\n"));
}

#[test]
fn the_scan_tells_the_re_export_from_the_direct_name() {
    assert!(names_the_engine_directly("use mcp_sansio::schema::Root;"));
    assert!(names_the_engine_directly("let x = mcp_sansio::ClientConfig::new(info);"));
    assert!(!names_the_engine_directly("use mcp_smol::mcp_sansio::schema::Root;"));
}

/// Each `pub use` of engine items in the files under `dir` (the crate itself, `pub use
/// mcp_sansio;`, is never inlined), with whether its attributes include `#[doc(no_inline)]`.
fn engine_re_exports(dir: &Path, out: &mut Vec<(String, usize, bool)>) {
    for (path, text) in rust_files(dir) {
        let lines: Vec<&str> = text.lines().map(str::trim_start).collect();
        for (n, line) in lines.iter().enumerate() {
            if !(line.starts_with("pub use ") && line.contains("mcp_sansio::")) {
                continue;
            }
            let attributes =
                lines[..n].iter().rev().take_while(|l| l.starts_with("#[") || l.starts_with("///"));
            let no_inline = attributes.clone().any(|l| l.starts_with("#[doc(no_inline)]"));
            out.push((path.display().to_string(), n + 1, no_inline));
        }
    }
}

#[test]
fn engine_types_are_re_exported_without_their_engine_examples() {
    let mut found = Vec::new();
    engine_re_exports(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut found);
    assert!(found.len() >= 3, "the scan found the prelude's and the skills' re-exports: {found:?}");
    let inlined: Vec<_> = found
        .iter()
        .filter(|(_, _, no_inline)| !no_inline)
        .map(|(file, n, _)| format!("{file}:{n}"))
        .collect();
    assert!(
        inlined.is_empty(),
        "re-exports that would copy the engine's examples (`use mcp_sansio::…`) into mcp-smol's docs; \
         mark them #[doc(no_inline)]:\n{}",
        inlined.join("\n")
    );
}

/// The code blocks of a Markdown file (```` ```rust ```` ones), one `Vec` of lines each.
fn markdown_rust_blocks(text: &str) -> Vec<Vec<String>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in text.lines() {
        if line.starts_with("```") {
            match current.take() {
                Some(block) => blocks.push(block),
                None if line.starts_with("```rust") => current = Some(Vec::new()),
                None => {}
            }
        } else if let Some(block) = &mut current {
            block.push(line.to_owned());
        }
    }
    blocks
}

/// The code blocks of the doc comments of the files under `dir`, one `Vec` of lines each.
fn doc_blocks(dir: &Path, out: &mut Vec<(String, Vec<String>)>) {
    let mut lines = Vec::new();
    doc_code_lines(dir, &mut lines);
    // Consecutive lines of one file form a block; a gap starts the next one.
    let mut last: Option<(String, usize)> = None;
    for (file, n, line) in lines {
        let continues = last.as_ref().is_some_and(|(f, m)| *f == file && *m + 1 == n);
        if !continues {
            out.push((file.clone(), Vec::new()));
        }
        out.last_mut().unwrap().1.push(line);
        last = Some((file, n));
    }
}

/// Whether an example runs `smol::block_on` as a statement of its own and drops the `Result`
/// its block returns: copied, a failure (no server, say) would print nothing.
fn discards_a_result(block: &[String]) -> bool {
    let visible: Vec<&String> = block.iter().filter(|l| !l.trim_start().starts_with('#')).collect();
    visible.iter().any(|l| l.starts_with("smol::block_on(")) && visible.iter().any(|l| l.contains("Ok::<"))
}

#[test]
fn examples_keep_the_result_of_block_on() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = crate_dir.join("../..");
    let mut blocks = Vec::new();
    for dir in ["runtimes/smol/src", "runtimes/hyper/src", "runtimes/surf/src"] {
        doc_blocks(&workspace.join(dir), &mut blocks);
    }
    for file in ["README.md", "docs/guide.md", "runtimes/smol/README.md", "runtimes/hyper/README.md"] {
        let text = std::fs::read_to_string(workspace.join(file)).unwrap();
        blocks.extend(markdown_rust_blocks(&text).into_iter().map(|block| (file.to_owned(), block)));
    }
    assert!(blocks.len() > 50, "the scan found the examples ({} blocks)", blocks.len());
    let offending: Vec<_> = blocks
        .iter()
        .filter(|(_, block)| discards_a_result(block))
        .map(|(file, block)| format!("{file}: {}", block.first().map_or("", |l| l.as_str())))
        .collect();
    assert!(
        offending.is_empty(),
        "examples that drop block_on's Result (return it from main instead):\n{}",
        offending.join("\n")
    );
}

#[test]
fn the_scan_tells_a_dropped_result_from_a_returned_one() {
    let lines = |text: &str| text.lines().map(str::to_owned).collect::<Vec<_>>();
    assert!(discards_a_result(&lines("smol::block_on(async {\n    Ok::<_, Error>(())\n});")));
    assert!(!discards_a_result(&lines(
        "fn main() -> Result<(), Error> {\n    smol::block_on(async {\n        Ok(())\n    })\n}"
    )));
    assert!(!discards_a_result(&lines("# smol::block_on(async {\nlet x = 1;\n# Ok::<(), Error>(()) });")));
}
