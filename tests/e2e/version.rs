//! `helmdeck --version` names the commit the binary was built from (build.rs).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// `helmdeck 0.1.0 (abc1234 2026-12-02)`: HEAD's short hash and date (`-dirty` after the hash
/// when tracked files differed at build time), `(unknown)` outside a git checkout.
#[test]
fn the_version_line_names_the_head_commit() {
    let out = Command::new(env!("CARGO_BIN_EXE_helmdeck"))
        .arg("--version")
        .output()
        .expect("run helmdeck --version");
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).expect("UTF-8");
    let version = env!("CARGO_PKG_VERSION");
    let Some(head) = git(&["log", "-1", "--format=%h %cs"]) else {
        assert_eq!(line, format!("helmdeck {version} (unknown)\n"));
        return;
    };
    let (hash, date) = head.split_once(' ').expect("a hash and a date");
    let clean = format!("helmdeck {version} ({hash} {date})\n");
    let dirty = format!("helmdeck {version} ({hash}-dirty {date})\n");
    assert!(
        line == clean || line == dirty,
        "{line:?} is neither {clean:?} nor {dirty:?}"
    );
}
