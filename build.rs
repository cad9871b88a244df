//! Embeds the demo chart (`assets/demo-chart`) so `helmdeck demo` works from any directory,
//! and names the commit the binary is built from (`helmdeck --version`).
use std::{env, fs, path::Path, process::Command};

fn main() {
    let out_dir = env::var("OUT_DIR").unwrap();
    embed_chart(
        Path::new("assets/demo-chart"),
        Path::new(&out_dir).join("demo_chart.rs").as_path(),
    );
    println!("cargo:rustc-env=HELMDECK_BUILD={}", build_id());
}

/// `abc1234 2026-12-02` (the commit and its date), `abc1234-dirty …` when tracked files differ
/// from it, `unknown` outside a git checkout (a source tarball) or without git.
fn build_id() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            // `git status` would otherwise refresh the index it is watched through: a rebuild
            // on every build.
            .env("GIT_OPTIONAL_LOCKS", "0")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(commit) = git(&["log", "-1", "--format=%h %cs"]).filter(|c| !c.is_empty()) else {
        return "unknown".into();
    };
    // Rebuilt when HEAD moves (a commit, a checkout) or the index changes; the sources are
    // watched already, so an edit refreshes the dirty flag too.
    // Only files that exist: a missing one makes cargo rerun this on every build.
    let watch = |p: String| {
        if Path::new(&p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    };
    for path in ["HEAD", "index", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            watch(p);
        }
    }
    if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(p) = git(&["rev-parse", "--git-path", &head])
    {
        watch(p);
    }
    for path in ["src", "crates", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={path}");
    }
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    match commit.split_once(' ') {
        Some((hash, date)) if dirty => format!("{hash}-dirty {date}"),
        _ => commit,
    }
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
