//! Finding the helm (and kubectl) binary, and asking helm its version.
//!
//! Search order: the `--helm` flag, `$HELM_BIN`, `.tools/bin/helm` in the current directory or
//! any parent, `.tools/bin/helm` beside or above the running executable, then `helm` on `PATH`.
//! The project-local copy wins over `PATH` because `scripts/install-tools.sh` pins the helm
//! version the tests and the demo were checked against; a system helm may be a different major.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::helm::HelmError;

/// Running helm fails with a [`HelmError`]; finding it, with a [`LocateError`].
type Result<T, E = HelmError> = std::result::Result<T, E>;

/// Where the pinned tools live, relative to a project root.
const TOOLS_BIN: &str = ".tools/bin";

/// The install command named in every "not found" message.
const INSTALL_HINT: &str = "scripts/install-tools.sh";

/// `helm version` reads no cluster, so anything slower than this is a hung binary.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// One place that was searched, and what was there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Looked {
    /// Human description of the place, such as `$HELM_BIN` or a path.
    pub place: String,
    /// What was found there: "not set", "not found", "not executable", ...
    pub outcome: String,
}

/// The binary could not be found, or an explicitly named one is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocateError {
    /// An explicit choice (the flag or the environment variable) names something that is not an
    /// executable file. We stop there rather than fall back: running a different binary than
    /// the one the operator named would be a surprise.
    #[error(
        "{tool} from {origin} ({}) {why}; point it at the {tool} binary, or unset it and run \
         {INSTALL_HINT}",
        .path.display()
    )]
    Unusable {
        tool: &'static str,
        origin: String,
        path: PathBuf,
        why: String,
    },
    /// Nothing usable anywhere; `looked` lists every place in search order.
    #[error("{}", not_found(tool, looked))]
    NotFound {
        tool: &'static str,
        looked: Vec<Looked>,
    },
}

/// The `NotFound` message: every place looked at, one a line, then how to install.
fn not_found(tool: &str, looked: &[Looked]) -> String {
    let mut text = format!("{tool} not found. Looked at:\n");
    for l in looked {
        text.push_str(&format!("  {}: {}\n", l.place, l.outcome));
    }
    text.push_str(&format!(
        "Install it with {INSTALL_HINT}, or put {tool} on PATH."
    ));
    text
}

/// What the search reads from the process, gathered once so tests can supply their own.
#[derive(Debug, Clone, Default)]
struct Search {
    tool: &'static str,
    flag_name: &'static str,
    env_name: &'static str,
    flag: Option<PathBuf>,
    env: Option<OsString>,
    cwd: Option<PathBuf>,
    exe: Option<PathBuf>,
    path_var: Option<OsString>,
}

impl Search {
    fn from_process(
        tool: &'static str,
        flag_name: &'static str,
        env_name: &'static str,
        flag: Option<&Path>,
    ) -> Search {
        Search {
            tool,
            flag_name,
            env_name,
            flag: flag.map(Path::to_path_buf),
            env: std::env::var_os(env_name),
            cwd: std::env::current_dir().ok(),
            exe: std::env::current_exe().ok(),
            path_var: std::env::var_os("PATH"),
        }
    }
}

/// The helm binary to run. `flag` is the value of `--helm`, if given.
pub fn find_helm(flag: Option<&Path>) -> Result<PathBuf, LocateError> {
    locate(&Search::from_process("helm", "--helm", "HELM_BIN", flag))
}

/// The kubectl binary (tests and the demo only), searched like helm with `$KUBECTL_BIN`.
pub fn find_kubectl(flag: Option<&Path>) -> Result<PathBuf, LocateError> {
    locate(&Search::from_process(
        "kubectl",
        "--kubectl",
        "KUBECTL_BIN",
        flag,
    ))
}

fn locate(s: &Search) -> Result<PathBuf, LocateError> {
    let mut looked = Vec::new();

    // Explicit choices first; a bad one is an error, not a reason to keep looking.
    let explicit = [
        (s.flag_name, s.flag.clone().map(OsString::from)),
        (s.env_name, s.env.clone().filter(|v| !v.is_empty())),
    ];
    for (i, (name, value)) in explicit.into_iter().enumerate() {
        let origin = if i == 0 {
            format!("the {name} flag")
        } else {
            format!("${name}")
        };
        let Some(value) = value else {
            let outcome = if i == 0 { "not given" } else { "not set" };
            looked.push(Looked {
                place: origin,
                outcome: outcome.into(),
            });
            continue;
        };
        return explicit_choice(s, origin, PathBuf::from(value));
    }

    let rel = Path::new(TOOLS_BIN).join(s.tool);
    if let Some(cwd) = &s.cwd
        && let Some(found) = walk_up(cwd, &rel, "the current directory", &mut looked)
    {
        return Ok(found);
    }
    // Starting from the executable's own directory covers both "beside" and every "above".
    if let Some(dir) = s.exe.as_deref().and_then(Path::parent)
        && let Some(found) = walk_up(dir, &rel, "the running executable", &mut looked)
    {
        return Ok(found);
    }

    let path_place = format!("{} on PATH", s.tool);
    match s.path_var.as_deref() {
        None => looked.push(Looked {
            place: path_place,
            outcome: "PATH is not set".into(),
        }),
        Some(path_var) => match search_path(path_var, s.tool) {
            Ok(found) => return Ok(found),
            Err(outcome) => looked.push(Looked {
                place: path_place,
                outcome,
            }),
        },
    }

    Err(LocateError::NotFound {
        tool: s.tool,
        looked,
    })
}

/// A flag or env value: a bare name (no `/`) is looked up on `PATH` as a shell would, so
/// `HELM_BIN=helm3` works; anything with a `/` is a path (relative to the current directory).
fn explicit_choice(s: &Search, origin: String, value: PathBuf) -> Result<PathBuf, LocateError> {
    if !value.as_os_str().as_encoded_bytes().contains(&b'/') {
        let name = value.to_string_lossy().into_owned();
        let path_var = s.path_var.clone().unwrap_or_default();
        return search_path(&path_var, &name).map_err(|why| LocateError::Unusable {
            tool: s.tool,
            origin,
            path: value,
            why: format!("is a bare name that is not on PATH ({why})"),
        });
    }
    match check_executable(&value) {
        Ok(()) => Ok(value),
        Err(why) => Err(LocateError::Unusable {
            tool: s.tool,
            origin,
            path: value,
            why,
        }),
    }
}

/// Checks `dir/rel`, then the same under every ancestor of `dir`. Records one summary line (the
/// ancestors are implied) plus one line per candidate that exists but is unusable, because that
/// is the line the operator needs to see.
fn walk_up(dir: &Path, rel: &Path, what: &str, looked: &mut Vec<Looked>) -> Option<PathBuf> {
    let mut unusable = false;
    for ancestor in dir.ancestors() {
        let candidate = ancestor.join(rel);
        match check_executable(&candidate) {
            Ok(()) => return Some(candidate),
            Err(why) if candidate.exists() => {
                unusable = true;
                looked.push(Looked {
                    place: candidate.display().to_string(),
                    outcome: why,
                });
            }
            Err(_) => {}
        }
    }
    looked.push(Looked {
        place: format!(
            "{} in {} ({what}) and every parent directory",
            rel.display(),
            dir.display()
        ),
        outcome: if unusable { "none usable" } else { "not found" }.into(),
    });
    None
}

fn search_path(path_var: &std::ffi::OsStr, name: &str) -> Result<PathBuf, String> {
    let mut unusable = Vec::new();
    // An empty PATH entry means "current directory" to a shell; running a binary from wherever
    // we happen to be is a trap, so empty entries are skipped.
    for dir in std::env::split_paths(path_var).filter(|d| !d.as_os_str().is_empty()) {
        let candidate = dir.join(name);
        match check_executable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(why) if candidate.exists() => {
                unusable.push(format!("{} {why}", candidate.display()));
            }
            Err(_) => {}
        }
    }
    if unusable.is_empty() {
        Err(format!("not found in {}", path_var.to_string_lossy()))
    } else {
        Err(unusable.join("; "))
    }
}

/// A usable binary is a regular file (after following links) with an execute bit.
fn check_executable(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "does not exist".to_string(),
        _ => format!("cannot be read: {e}"),
    })?;
    if !meta.is_file() {
        return Err("is not a file".into());
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err("is not executable (chmod +x it)".into());
    }
    Ok(())
}

/// `helm version --template '{{.Version}}'`, e.g. `v4.1.4`.
///
/// Killed after 10 s: `kill_on_drop` is safe here (unlike the upgrade run) because `version`
/// touches no release.
pub async fn helm_version(bin: &Path) -> Result<String> {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(["version", "--template", "{{.Version}}"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let bin = bin.to_path_buf();
    let output = tokio::time::timeout(VERSION_TIMEOUT, cmd.output())
        .await
        .map_err(|_| HelmError::VersionTimeout {
            bin: bin.clone(),
            secs: VERSION_TIMEOUT.as_secs(),
        })?
        .map_err(|source| HelmError::VersionRun {
            bin: bin.clone(),
            source,
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(HelmError::VersionFailed {
            bin,
            status: output.status,
            stderr: stderr.trim().to_string(),
        });
    }
    let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if version.is_empty() {
        return Err(HelmError::VersionEmpty { bin });
    }
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn make_tool(path: &Path, mode: u32) {
        fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
        fs::write(path, "#!/bin/sh\necho v9.9.9\n").expect("write tool");
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
    }

    fn search(root: &Path) -> Search {
        Search {
            tool: "helm",
            flag_name: "--helm",
            env_name: "HELM_BIN",
            cwd: Some(root.join("work/deep/er")),
            exe: Some(root.join("proj/target/debug/helmdeck")),
            path_var: Some(root.join("pathdir").into_os_string()),
            ..Search::default()
        }
    }

    #[test]
    fn flag_wins_over_everything() {
        let t = tempfile::tempdir().expect("tempdir");
        let flag = t.path().join("mine/helm");
        make_tool(&flag, 0o755);
        make_tool(&t.path().join("env/helm"), 0o755);
        let mut s = search(t.path());
        s.flag = Some(flag.clone());
        s.env = Some(t.path().join("env/helm").into_os_string());
        assert_eq!(locate(&s), Ok(flag));
    }

    #[test]
    fn env_beats_tools_dir() {
        let t = tempfile::tempdir().expect("tempdir");
        let env = t.path().join("env/helm");
        make_tool(&env, 0o755);
        make_tool(&t.path().join("work/.tools/bin/helm"), 0o755);
        let mut s = search(t.path());
        s.env = Some(env.clone().into_os_string());
        assert_eq!(locate(&s), Ok(env));
    }

    #[test]
    fn empty_env_is_unset() {
        let t = tempfile::tempdir().expect("tempdir");
        let tools = t.path().join("work/.tools/bin/helm");
        make_tool(&tools, 0o755);
        let mut s = search(t.path());
        s.env = Some(OsString::new());
        assert_eq!(locate(&s), Ok(tools));
    }

    #[test]
    fn explicit_but_unusable_is_an_error_not_a_fallback() {
        let t = tempfile::tempdir().expect("tempdir");
        let flag = t.path().join("mine/helm");
        make_tool(&flag, 0o644);
        make_tool(&t.path().join("work/.tools/bin/helm"), 0o755);
        let mut s = search(t.path());
        s.flag = Some(flag);
        let err = locate(&s).expect_err("not executable");
        assert!(matches!(err, LocateError::Unusable { .. }), "{err:?}");
        assert!(err.to_string().contains("not executable"), "{err}");
        assert!(err.to_string().contains("--helm"), "{err}");
    }

    #[test]
    fn bare_name_in_env_is_looked_up_on_path() {
        let t = tempfile::tempdir().expect("tempdir");
        let on_path = t.path().join("pathdir/helm3");
        make_tool(&on_path, 0o755);
        let mut s = search(t.path());
        s.env = Some("helm3".into());
        assert_eq!(locate(&s), Ok(on_path));
    }

    #[test]
    fn tools_dir_in_an_ancestor_of_cwd() {
        let t = tempfile::tempdir().expect("tempdir");
        let tools = t.path().join("work/.tools/bin/helm");
        make_tool(&tools, 0o755);
        make_tool(&t.path().join("proj/.tools/bin/helm"), 0o755);
        make_tool(&t.path().join("pathdir/helm"), 0o755);
        assert_eq!(locate(&search(t.path())), Ok(tools));
    }

    #[test]
    fn tools_dir_above_the_executable() {
        let t = tempfile::tempdir().expect("tempdir");
        let tools = t.path().join("proj/.tools/bin/helm");
        make_tool(&tools, 0o755);
        make_tool(&t.path().join("pathdir/helm"), 0o755);
        assert_eq!(locate(&search(t.path())), Ok(tools));
    }

    #[test]
    fn path_is_last_and_skips_non_executables() {
        let t = tempfile::tempdir().expect("tempdir");
        // Not executable in the tools dir: skipped (and reported), PATH still used.
        make_tool(&t.path().join("work/.tools/bin/helm"), 0o644);
        make_tool(&t.path().join("a/helm"), 0o644);
        let good = t.path().join("b/helm");
        make_tool(&good, 0o755);
        let mut s = search(t.path());
        s.path_var = Some(
            std::env::join_paths([t.path().join("a"), t.path().join("b")]).expect("join paths"),
        );
        assert_eq!(locate(&s), Ok(good));
    }

    #[test]
    fn directory_named_helm_is_not_a_binary() {
        let t = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(t.path().join("work/.tools/bin/helm")).expect("mkdir");
        let err = locate(&search(t.path())).expect_err("nothing usable");
        assert!(err.to_string().contains("is not a file"), "{err}");
    }

    #[test]
    fn not_found_lists_every_place_and_the_install_command() {
        let t = tempfile::tempdir().expect("tempdir");
        make_tool(&t.path().join("work/.tools/bin/helm"), 0o600);
        let err = locate(&search(t.path())).expect_err("nothing usable");
        let LocateError::NotFound { looked, .. } = &err else {
            panic!("expected NotFound, got {err:?}");
        };
        let places: Vec<&str> = looked.iter().map(|l| l.place.as_str()).collect();
        assert_eq!(places[0], "the --helm flag");
        assert_eq!(places[1], "$HELM_BIN");
        assert!(places.iter().any(|p| p.ends_with("work/.tools/bin/helm")));
        assert!(places.iter().any(|p| p.contains("(the current directory)")));
        assert!(
            places
                .iter()
                .any(|p| p.contains("(the running executable)"))
        );
        assert_eq!(places.last(), Some(&"helm on PATH"));
        let text = err.to_string();
        assert!(text.contains("scripts/install-tools.sh"), "{text}");
        assert!(text.contains("is not executable"), "{text}");
        assert!(
            text.contains("every parent directory: none usable"),
            "{text}"
        );
    }

    #[test]
    fn kubectl_uses_its_own_names() {
        let t = tempfile::tempdir().expect("tempdir");
        let mut s = search(t.path());
        s.tool = "kubectl";
        s.flag_name = "--kubectl";
        s.env_name = "KUBECTL_BIN";
        let kubectl = t.path().join("work/.tools/bin/kubectl");
        make_tool(&kubectl, 0o755);
        make_tool(&t.path().join("work/.tools/bin/helm"), 0o755);
        assert_eq!(locate(&s), Ok(kubectl));
    }

    /// Executing a script we just wrote can fail with ETXTBSY when another test thread forked
    /// while our write handle was open (the child holds it until its exec); retry that case.
    async fn version_retrying(bin: &Path) -> Result<String> {
        for _ in 0..5 {
            match helm_version(bin).await {
                Err(HelmError::VersionRun { source, .. })
                    if source.raw_os_error() == Some(libc::ETXTBSY) =>
                {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                other => return other,
            }
        }
        helm_version(bin).await
    }

    #[tokio::test]
    async fn version_of_a_fake_helm() {
        let t = tempfile::tempdir().expect("tempdir");
        let fake = t.path().join("helm");
        make_tool(&fake, 0o755);
        assert_eq!(version_retrying(&fake).await.expect("version"), "v9.9.9");
    }

    #[tokio::test]
    async fn version_failure_carries_stderr() {
        let t = tempfile::tempdir().expect("tempdir");
        let fake = t.path().join("helm");
        fs::write(&fake, "#!/bin/sh\necho 'Error: boom' >&2\nexit 1\n").expect("write");
        fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).expect("chmod");
        let err = version_retrying(&fake).await.expect_err("fails");
        assert!(format!("{err:#}").contains("Error: boom"), "{err:#}");
    }
}
