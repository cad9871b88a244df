//! Embeds the demo chart (`assets/demo-chart`) so `helmdeck demo` works from any directory.
use std::{env, fs, path::Path};

fn main() {
    let out_dir = env::var("OUT_DIR").unwrap();
    embed_chart(
        Path::new("assets/demo-chart"),
        Path::new(&out_dir).join("demo_chart.rs").as_path(),
    );
}

/// Embeds every file of the demo chart, so `helmdeck demo` works from any directory.
fn embed_chart(root: &Path, out: &Path) {
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(read) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in read.flatten() {
            let path = entry.path();
            if path.is_dir() {
                println!("cargo:rerun-if-changed={}", path.display());
                stack.push(path);
            } else {
                println!("cargo:rerun-if-changed={}", path.display());
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                // Relative to the crate's directory: worktrees sharing a target directory share
                // this generated file.
                let from_root = format!("/{}", path.display());
                files.push(format!(
                    "({rel:?}, include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {from_root:?})) as &[u8])"
                ));
            }
        }
    }
    files.sort();
    fs::write(out, format!("[{}]", files.join(",\n"))).unwrap();
}
