//! The kubelet's checks of what a pod refers to, as pure functions of the pod's references,
//! the objects that exist (names and key names) and the node's paths, with the real
//! components' wording: `makeEnvironmentVariables` (kubelet_pods.go), the secret, configmap,
//! projected and hostpath volume plugins, and the attach/detach controller's Multi-Attach
//! report.

use crate::scenario::{HostPathKind, HostPaths};

use super::keys::{ObjKind, RefObjects};
use super::pod::{ContainerRefs, Projection, Source, VolumeRef};

/// The kubelet's secret and configmap managers answer a missing object with a NotFound for
/// the singular resource (`corev1.Resource("secret")`).
pub(crate) fn not_found(kind: ObjKind, name: &str) -> String {
    match kind {
        ObjKind::Secret => format!("secret \"{name}\" not found"),
        ObjKind::ConfigMap => format!("configmap \"{name}\" not found"),
    }
}

/// Why the container's config cannot be made (`CreateContainerConfigError`'s message), or
/// None when every reference resolves or is optional.
pub(crate) fn container_error(c: &ContainerRefs, ns: &str, objs: &RefObjects) -> Option<String> {
    for r in &c.env {
        let Some(keys) = objs.keys(r.kind, ns, &r.name) else {
            if r.optional {
                continue;
            }
            return Some(not_found(r.kind, &r.name));
        };
        // Env reads `data` only: a ConfigMap key in `binaryData` is not found here.
        if let Some(key) = &r.key
            && !keys.has_data(key)
            && !r.optional
        {
            let kind = match r.kind {
                ObjKind::Secret => "Secret",
                ObjKind::ConfigMap => "ConfigMap",
            };
            return Some(format!("couldn't find key {key} in {kind} {ns}/{}", r.name));
        }
    }
    None
}

/// The `FailedMount` message for a volume that cannot be set up, or None when it can (claims
/// are the attach step's, see [`multi_attach`]). `hosts` None: hostPath types are not checked.
pub(crate) fn volume_error(
    v: &VolumeRef,
    ns: &str,
    objs: &RefObjects,
    hosts: Option<&HostPaths>,
    node: &str,
) -> Option<String> {
    let err = match &v.source {
        Source::Objects { projected, sources } => {
            let mut errs: Vec<String> = Vec::new();
            for s in sources {
                if let Some(e) = projection_error(s, ns, objs)
                    && !errs.contains(&e)
                {
                    errs.push(e);
                }
                if !projected && !errs.is_empty() {
                    break;
                }
            }
            // utilerrors.NewAggregate: one error reads as itself, more as `[a, b]`.
            match errs.len() {
                0 => return None,
                1 => errs.remove(0),
                _ => format!("[{}]", errs.join(", ")),
            }
        }
        Source::HostPath { path, kind } => host_path_error(path, kind, hosts?.at(node, path))?,
        Source::Claim(_) => return None,
    };
    Some(format!(
        "MountVolume.SetUp failed for volume \"{}\" : {err}",
        v.name
    ))
}

fn projection_error(s: &Projection, ns: &str, objs: &RefObjects) -> Option<String> {
    let Some(keys) = objs.keys(s.kind, ns, &s.name) else {
        return (!s.optional).then(|| not_found(s.kind, &s.name));
    };
    if s.optional {
        return None;
    }
    let missing = s.items.iter().find(|k| match s.kind {
        ObjKind::Secret => !keys.has_data(k),
        ObjKind::ConfigMap => !keys.has_data(k) && !keys.has_binary(k),
    })?;
    Some(match s.kind {
        ObjKind::Secret => format!("references non-existent secret key: {missing}"),
        ObjKind::ConfigMap => format!("configmap references non-existent config key: {missing}"),
    })
}

/// The hostpath plugin's `checkTypeInternal`: the `…OrCreate` types create what is absent but
/// still check what is there.
fn host_path_error(path: &str, kind: &str, found: Option<HostPathKind>) -> Option<String> {
    let (want, what) = match kind {
        "DirectoryOrCreate" if found.is_none() => return None,
        "FileOrCreate" if found.is_none() => return None,
        "Directory" | "DirectoryOrCreate" => (HostPathKind::Directory, "a directory"),
        "File" | "FileOrCreate" => (HostPathKind::File, "a file"),
        "Socket" => (HostPathKind::Socket, "a socket file"),
        "CharDevice" => (HostPathKind::CharDevice, "a character device"),
        "BlockDevice" => (HostPathKind::BlockDevice, "a block device"),
        other => return Some(format!("{other} is an invalid volume type")),
    };
    (found != Some(want)).then(|| format!("hostPath type check failed: {path} is not {what}"))
}

/// The attach/detach controller's `FailedAttachVolume` message for a pod in `ns` whose
/// one-node `volume` is attached elsewhere, used there by `users` (namespace, name).
pub(crate) fn multi_attach(volume: &str, ns: &str, users: &[(&str, &str)]) -> String {
    let local: Vec<&str> = users
        .iter()
        .filter(|(n, _)| *n == ns)
        .map(|(_, name)| *name)
        .collect();
    let others = users.len() - local.len();
    let msg = if local.is_empty() {
        format!("Volume is already used by {others} pod(s) in different namespaces")
    } else if others > 0 {
        format!(
            "Volume is already used by pod(s) {} and {others} pod(s) in different namespaces",
            local.join(", ")
        )
    } else {
        format!("Volume is already used by pod(s) {}", local.join(", "))
    };
    format!("Multi-Attach error for volume \"{volume}\" {msg}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::refs::pod::{EnvRef, PodRefs};
    use serde_json::json;

    fn objects() -> RefObjects {
        let mut objs = RefObjects::default();
        let secret =
            json!({"metadata": {"namespace": "apps", "name": "db"}, "data": {"password": "eA=="}});
        objs.apply("Secret", &secret, false);
        let cm = json!({"metadata": {"namespace": "apps", "name": "settings"},
            "data": {"mode": "fast"}, "binaryData": {"blob": "AA=="}});
        objs.apply("ConfigMap", &cm, false);
        objs
    }

    fn container(env: Vec<EnvRef>) -> ContainerRefs {
        ContainerRefs {
            name: "app".into(),
            init: false,
            env,
        }
    }

    fn env(kind: ObjKind, name: &str, key: Option<&str>, optional: bool) -> EnvRef {
        EnvRef {
            kind,
            name: name.into(),
            key: key.map(String::from),
            optional,
        }
    }

    #[test]
    fn env_references_fail_in_the_kubelets_words() {
        let objs = objects();
        let err = |e: EnvRef| container_error(&container(vec![e]), "apps", &objs);
        assert_eq!(
            err(env(ObjKind::Secret, "x", None, false)).as_deref(),
            Some("secret \"x\" not found")
        );
        assert_eq!(
            err(env(ObjKind::ConfigMap, "x", Some("k"), false)).as_deref(),
            Some("configmap \"x\" not found")
        );
        assert_eq!(
            err(env(ObjKind::Secret, "db", Some("user"), false)).as_deref(),
            Some("couldn't find key user in Secret apps/db")
        );
        assert_eq!(
            err(env(ObjKind::ConfigMap, "settings", Some("blob"), false)).as_deref(),
            Some("couldn't find key blob in ConfigMap apps/settings")
        );
        assert_eq!(
            err(env(ObjKind::Secret, "db", Some("password"), false)),
            None
        );
        assert_eq!(err(env(ObjKind::ConfigMap, "settings", None, false)), None);
        // Optional: a missing object or key is skipped.
        assert_eq!(err(env(ObjKind::Secret, "x", Some("k"), true)), None);
        assert_eq!(err(env(ObjKind::Secret, "db", Some("user"), true)), None);
        // Another namespace's object is not this pod's.
        let c = container(vec![env(ObjKind::Secret, "db", None, false)]);
        assert_eq!(
            container_error(&c, "other", &objs).as_deref(),
            Some("secret \"db\" not found")
        );
        // The first failing reference is the one reported.
        let c = container(vec![
            env(ObjKind::Secret, "db", None, false),
            env(ObjKind::ConfigMap, "a", None, false),
            env(ObjKind::Secret, "b", None, false),
        ]);
        assert_eq!(
            container_error(&c, "apps", &objs).as_deref(),
            Some("configmap \"a\" not found")
        );
    }

    fn volumes(spec: serde_json::Value) -> Vec<VolumeRef> {
        PodRefs::of(&json!({"spec": {"volumes": spec}}))
            .map(|r| r.volumes)
            .unwrap_or_default()
    }

    #[test]
    fn secret_config_map_and_projected_volumes() {
        let objs = objects();
        let vs = volumes(json!([
            {"name": "a", "secret": {"secretName": "nope"}},
            {"name": "b", "configMap": {"name": "nope"}},
            {"name": "c", "configMap": {"name": "nope", "optional": true}},
            {"name": "d", "secret": {"secretName": "db", "items": [{"key": "user", "path": "u"}]}},
            {"name": "e", "configMap": {"name": "settings", "items": [{"key": "blob", "path": "b"}]}},
            {"name": "f", "configMap": {"name": "settings", "items": [{"key": "gone", "path": "g"}]}},
            {"name": "g", "projected": {"sources": [{"secret": {"name": "s1"}}, {"configMap": {"name": "settings"}},
                {"configMap": {"name": "c1"}}]}},
            {"name": "h", "projected": {"sources": [{"secret": {"name": "db", "items": [{"key": "nokey", "path": "x"}]}}]}},
        ]));
        let msgs: Vec<Option<String>> = vs
            .iter()
            .map(|v| volume_error(v, "apps", &objs, None, "node-1"))
            .collect();
        let prefix =
            |v: &str, e: &str| Some(format!("MountVolume.SetUp failed for volume \"{v}\" : {e}"));
        assert_eq!(msgs[0], prefix("a", "secret \"nope\" not found"));
        assert_eq!(msgs[1], prefix("b", "configmap \"nope\" not found"));
        assert_eq!(msgs[2], None);
        assert_eq!(
            msgs[3],
            prefix("d", "references non-existent secret key: user")
        );
        assert_eq!(msgs[4], None, "a volume reads binaryData too");
        assert_eq!(
            msgs[5],
            prefix("f", "configmap references non-existent config key: gone")
        );
        assert_eq!(
            msgs[6],
            prefix("g", "[secret \"s1\" not found, configmap \"c1\" not found]")
        );
        assert_eq!(
            msgs[7],
            prefix("h", "references non-existent secret key: nokey")
        );
    }

    #[test]
    fn host_path_types_against_the_nodes_paths() {
        let objs = RefObjects::default();
        let hosts: HostPaths = serde_saphyr::from_str(
            "'*': {/var/log: Directory, /etc/hosts: File}\nnode-2: {/dev/sda: BlockDevice, /run/d.sock: Socket, /dev/tty: CharDevice}\n",
        )
        .expect("parses");
        let check = |path: &str, kind: &str, node: &str| {
            let v = volumes(json!([{"name": "h", "hostPath": {"path": path, "type": kind}}]));
            volume_error(&v[0], "apps", &objs, Some(&hosts), node)
        };
        let failed = |e: &str| {
            Some(format!(
                "MountVolume.SetUp failed for volume \"h\" : hostPath type check failed: {e}"
            ))
        };
        assert_eq!(check("/var/log", "Directory", "node-1"), None);
        assert_eq!(
            check("/x", "Directory", "node-1"),
            failed("/x is not a directory")
        );
        assert_eq!(
            check("/etc/hosts", "Directory", "node-1"),
            failed("/etc/hosts is not a directory")
        );
        assert_eq!(check("/x", "DirectoryOrCreate", "node-1"), None);
        assert_eq!(
            check("/etc/hosts", "DirectoryOrCreate", "node-1"),
            failed("/etc/hosts is not a directory")
        );
        assert_eq!(check("/x", "FileOrCreate", "node-1"), None);
        assert_eq!(
            check("/var/log", "FileOrCreate", "node-1"),
            failed("/var/log is not a file")
        );
        assert_eq!(check("/etc/hosts", "File", "node-1"), None);
        assert_eq!(check("/dev/sda", "BlockDevice", "node-2"), None);
        assert_eq!(
            check("/dev/sda", "BlockDevice", "node-1"),
            failed("/dev/sda is not a block device")
        );
        assert_eq!(
            check("/run/d.sock", "Socket", "node-1"),
            failed("/run/d.sock is not a socket file")
        );
        assert_eq!(check("/run/d.sock", "Socket", "node-2"), None);
        assert_eq!(
            check("/dev/tty", "CharDevice", "node-3"),
            failed("/dev/tty is not a character device")
        );
        assert_eq!(check("/dev/tty", "CharDevice", "node-2"), None);
        // Without `host_paths` the types are not checked.
        let v = volumes(json!([{"name": "h", "hostPath": {"path": "/x", "type": "Directory"}}]));
        assert_eq!(volume_error(&v[0], "apps", &objs, None, "node-1"), None);
    }

    #[test]
    fn multi_attach_names_the_pods_as_the_controller_does() {
        assert_eq!(
            multi_attach("pvc-1", "apps", &[("apps", "web-a")]),
            "Multi-Attach error for volume \"pvc-1\" Volume is already used by pod(s) web-a"
        );
        assert_eq!(
            multi_attach(
                "pvc-1",
                "apps",
                &[("apps", "a"), ("other", "b"), ("apps", "c")]
            ),
            "Multi-Attach error for volume \"pvc-1\" Volume is already used by pod(s) a, c and 1 pod(s) in different namespaces"
        );
        assert_eq!(
            multi_attach("pvc-1", "apps", &[("other", "b")]),
            "Multi-Attach error for volume \"pvc-1\" Volume is already used by 1 pod(s) in different namespaces"
        );
    }
}
