//! Embeds `scenarios/*.yaml` so `--scenario NAME` works from any directory.
use std::{env, fs, path::Path};

fn main() {
    let dir = Path::new("scenarios");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<(String, String)> = Vec::new();
    if let Ok(read) = fs::read_dir(dir) {
        for entry in read.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "yaml") {
                println!("cargo:rerun-if-changed={}", path.display());
                let name = path.file_stem().unwrap().to_string_lossy().into_owned();
                entries.push((name.clone(), format!("/scenarios/{name}.yaml")));
            }
        }
    }
    entries.sort();
    let body: Vec<String> = entries
        .iter()
        // Relative to the crate's own directory, not an absolute path: worktrees that share one
        // target directory share this generated file, and a path into one of them breaks the
        // build in the others once it is removed.
        .map(|(n, p)| {
            format!("({n:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {p:?})))")
        })
        .collect();
    let out_dir = env::var("OUT_DIR").unwrap();
    fs::write(
        Path::new(&out_dir).join("scenarios.rs"),
        format!("[{}]", body.join(",\n")),
    )
    .unwrap();
}
