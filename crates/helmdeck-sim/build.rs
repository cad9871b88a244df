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
                let abs = fs::canonicalize(&path).unwrap();
                entries.push((name, abs.display().to_string()));
            }
        }
    }
    entries.sort();
    let body: Vec<String> = entries
        .iter()
        .map(|(n, p)| format!("({n:?}, include_str!({p:?}))"))
        .collect();
    let out_dir = env::var("OUT_DIR").unwrap();
    fs::write(
        Path::new(&out_dir).join("scenarios.rs"),
        format!("[{}]", body.join(",\n")),
    )
    .unwrap();
}
