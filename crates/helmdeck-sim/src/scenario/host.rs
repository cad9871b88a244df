//! `host_paths`: what exists on each simulated node's filesystem, for `hostPath` volumes that
//! set a `type` (the kubelet checks the path before it mounts it).

use std::collections::BTreeMap;

use serde::Deserialize;

/// What a path on a node is, named as the API's `hostPath.type` names it.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub enum HostPathKind {
    Directory,
    File,
    Socket,
    CharDevice,
    BlockDevice,
}

/// Node name (or `*` for every node) → absolute path → what is there. A node's own entry
/// beats `*` for the same path; a path listed nowhere does not exist on that node.
#[derive(Debug, Clone, Deserialize, Default, PartialEq)]
#[serde(transparent)]
pub struct HostPaths(pub BTreeMap<String, BTreeMap<String, HostPathKind>>);

impl HostPaths {
    /// What is at `path` on `node`, or None when nothing is.
    pub fn at(&self, node: &str, path: &str) -> Option<HostPathKind> {
        let path = normalize(path);
        let find = |key: &str| {
            self.0.get(key).and_then(|paths| {
                paths
                    .iter()
                    .find(|(p, _)| normalize(p) == path)
                    .map(|(_, kind)| *kind)
            })
        };
        find(node).or_else(|| find("*"))
    }
}

/// `/var/log/` and `/var/log` are the same directory to the kubelet's stat.
fn normalize(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() && path.starts_with('/') {
        "/"
    } else {
        trimmed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_entry_beats_the_wildcard_and_trailing_slashes_do_not_matter() {
        let paths: HostPaths = serde_saphyr::from_str(
            "'*': {/var/log: Directory, /dev/kvm: File}\nnode-2: {/dev/kvm/: CharDevice}\n",
        )
        .expect("parses");
        assert_eq!(
            paths.at("node-1", "/var/log/"),
            Some(HostPathKind::Directory)
        );
        assert_eq!(paths.at("node-1", "/dev/kvm"), Some(HostPathKind::File));
        assert_eq!(
            paths.at("node-2", "/dev/kvm"),
            Some(HostPathKind::CharDevice)
        );
        assert_eq!(paths.at("node-2", "/etc"), None);
        assert_eq!(normalize("/"), "/");
    }

    #[test]
    fn an_unknown_kind_is_refused() {
        let err = serde_saphyr::from_str::<HostPaths>("'*': {/x: Folder}\n").unwrap_err();
        assert!(err.to_string().contains("Folder"), "{err}");
    }
}
