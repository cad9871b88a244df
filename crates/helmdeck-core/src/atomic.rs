//! Files written whole or not at all: a temporary file beside the target, synced, then renamed
//! over it. A reader (a CI step tailing the report, a second helmdeck) sees the old file or the
//! new one, never a part, and a killed run leaves no half-written file behind. A symlink at the
//! target is replaced, never followed.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Who may read the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// 0644 (the umask still applies), as a plain create would make it: reports and JUnit
    /// files that CI uploads.
    Shared,
    /// 0600: values that may hold secrets.
    Private,
}

/// Writes `bytes` to `path` atomically. `what` names the temporary file
/// (`.helmdeck-{what}-….tmp`), so a stray one (a power loss between write and rename) says
/// whose it is.
pub fn write(path: &Path, bytes: &[u8], access: Access, what: &str) -> std::io::Result<()> {
    let dir = crate::validate::parent_dir(path);
    let mode = match access {
        Access::Shared => 0o644,
        Access::Private => 0o600,
    };
    let mut file = tempfile::Builder::new()
        .prefix(&format!(".helmdeck-{what}-"))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(mode))
        .tempfile_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    // The rename itself is durable once the directory is synced; a failure there loses nothing
    // a reader could see.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_a_symlink_and_keeps_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("report.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write(&link, b"new", Access::Shared, "report").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "new");
        assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
    }

    #[test]
    fn private_files_are_0600_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("values.yaml");
        write(&path, b"password: x", Access::Private, "values").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "only the file itself");
    }
}
