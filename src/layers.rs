//! The layering rules of ARCHITECTURE.md, checked: which top-level module may name which.
//!
//! A rule kept only in prose drifts (the engine once imported the simulator's clock); this test
//! reads every source file's non-test code and fails on an import the table does not allow.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What each top-level module may import from the crate (besides itself). `main.rs` and
/// `demo.rs` sit on top and may import anything, so they are not listed.
const ALLOWED: &[(&str, &[&str])] = &[
    // Leaves: shared by every layer, knowing none.
    ("text", &[]),
    ("time", &[]),
    ("glob", &[]),
    ("signals", &[]),
    ("cli", &[]),
    ("exit", &[]),
    ("advice", &[]),
    // Pure judgement and helm's formats.
    ("rollout", &["glob"]),
    ("helm", &["text", "time"]),
    // The rules input is held to (helm parses its own --set flags).
    ("validate", &["helm", "text"]),
    // Talking to Kubernetes.
    ("cluster", &["helm", "text", "time", "advice"]),
    // The plan, then the engine that runs it.
    (
        "config",
        &[
            "cli", "glob", "time", "text", "engine", "helm", "rollout", "validate",
        ],
    ),
    (
        "engine",
        &[
            "cli", "config", "glob", "helm", "rollout", "cluster", "text", "time", "advice",
            "validate", "exit",
        ],
    ),
    (
        "inspect",
        &[
            "cli", "cluster", "engine", "glob", "helm", "rollout", "text", "time", "advice",
        ],
    ),
    // Renderers: the terminal, and the formats CI reads.
    ("junit", &["engine", "text", "validate"]),
    ("gha", &["engine", "text"]),
    // Records of runs, read back for replay.
    ("record", &["engine", "helm", "text", "time"]),
    (
        "headless",
        &["engine", "gha", "helm", "text", "time", "signals"],
    ),
    (
        "ui",
        &[
            "engine", "headless", "helm", "inspect", "record", "signals", "text", "time",
        ],
    ),
    // The simulated cluster: its own world, sharing only leaves and helm's record codec.
    ("sim", &["glob", "helm", "time", "text"]),
    ("layers", &[]),
];

const TOP: &[&str] = &["main", "demo", "lib"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`src/engine/steps/init.rs` -> `engine`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a component");
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string()
}

/// A file's code before its test module, skipping test-only files altogether: tests may reach
/// across layers to compare them (inspect and deploy agreeing, for one).
fn production_code(file: &Path) -> Option<String> {
    let name = file.file_name()?.to_string_lossy();
    if name == "tests.rs"
        || name == "fixture.rs"
        || file.components().any(|c| c.as_os_str() == "tests")
    {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let cut = text.find("#[cfg(test)]").unwrap_or(text.len());
    Some(text[..cut].to_string())
}

/// Every `crate::NAME` a piece of code names.
fn crate_paths(code: &str) -> Vec<String> {
    code.match_indices("crate::")
        .map(|(i, m)| {
            code[i + m.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .collect()
}

fn violations() -> BTreeMap<String, Vec<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in files {
        let module = module_of(&src, &file);
        let Some(code) = production_code(&file) else {
            continue;
        };
        let shown = file
            .strip_prefix(&src)
            .unwrap_or(&file)
            .display()
            .to_string();
        if module != "ui" && (code.contains("ratatui") || code.contains("crossterm")) {
            found
                .entry(shown.clone())
                .or_default()
                .push("ratatui/crossterm".into());
        }
        if TOP.contains(&module.as_str()) {
            continue;
        }
        let Some(may) = allowed.get(module.as_str()) else {
            found
                .entry(shown)
                .or_default()
                .push(format!("module {module} is not in the table"));
            continue;
        };
        for name in crate_paths(&code) {
            if name != module && !may.contains(&name.as_str()) {
                found
                    .entry(shown.clone())
                    .or_default()
                    .push(format!("crate::{name}"));
            }
        }
    }
    found
}

#[test]
fn every_module_imports_only_what_its_layer_may() {
    let found = violations();
    assert!(
        found.is_empty(),
        "imports the layering (ARCHITECTURE.md) does not allow: {found:#?}"
    );
}

#[test]
fn the_check_sees_an_import_it_must_refuse() {
    assert_eq!(
        crate_paths("use crate::sim::store::now; let x = crate::time::now();"),
        vec!["sim".to_string(), "time".to_string()]
    );
    let src = Path::new("/x/src");
    assert_eq!(
        module_of(src, Path::new("/x/src/engine/steps/init.rs")),
        "engine"
    );
    assert_eq!(module_of(src, Path::new("/x/src/config.rs")), "config");
}
