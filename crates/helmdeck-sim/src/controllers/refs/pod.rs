//! What a pod refers to, read once from its spec: the Secrets and ConfigMaps its containers'
//! `env`/`envFrom` name, and its volumes' sources (Secret, ConfigMap, projected, typed
//! hostPath, claim). A pod that refers to none of these reads as None and costs nothing more.

use serde_json::Value;

use super::keys::ObjKind;

/// One env reference: `envFrom[].secretRef`/`configMapRef` (no key) or
/// `env[].valueFrom.secretKeyRef`/`configMapKeyRef` (a key).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EnvRef {
    pub kind: ObjKind,
    pub name: String,
    pub key: Option<String>,
    pub optional: bool,
}

/// A container with env references, in the order the kubelet resolves them (envFrom, then env).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ContainerRefs {
    pub name: String,
    pub init: bool,
    pub env: Vec<EnvRef>,
}

/// One Secret or ConfigMap a volume projects, with the keys its `items` pick.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Projection {
    pub kind: ObjKind,
    pub name: String,
    pub items: Vec<String>,
    pub optional: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Source {
    /// `secret` or `configMap` (one projection), or `projected` (any number; errors aggregate).
    Objects {
        projected: bool,
        sources: Vec<Projection>,
    },
    /// A `hostPath` with a `type` other than the empty one.
    HostPath { path: String, kind: String },
    /// A `persistentVolumeClaim` (what attaches to a node).
    Claim(String),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VolumeRef {
    pub name: String,
    pub source: Source,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct PodRefs {
    /// Init containers first, then containers, each as they start.
    pub containers: Vec<ContainerRefs>,
    pub volumes: Vec<VolumeRef>,
}

impl PodRefs {
    /// The references of a pod, or None when it has none the kubelet checks.
    pub fn of(pod: &Value) -> Option<PodRefs> {
        let spec = pod.get("spec")?;
        let mut refs = PodRefs::default();
        for (key, init) in [("initContainers", true), ("containers", false)] {
            for c in spec
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let env = env_refs(c);
                if !env.is_empty() {
                    refs.containers.push(ContainerRefs {
                        name: str_at(c, "name").to_string(),
                        init,
                        env,
                    });
                }
            }
        }
        for v in spec
            .get("volumes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(source) = volume_source(v) {
                refs.volumes.push(VolumeRef {
                    name: str_at(v, "name").to_string(),
                    source,
                });
            }
        }
        (!refs.containers.is_empty() || !refs.volumes.is_empty()).then_some(refs)
    }
}

fn str_at<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn optional(v: &Value) -> bool {
    v.get("optional").and_then(Value::as_bool).unwrap_or(false)
}

fn env_refs(c: &Value) -> Vec<EnvRef> {
    let mut out = Vec::new();
    let from = c
        .get("envFrom")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for e in from {
        for (field, kind) in [
            ("configMapRef", ObjKind::ConfigMap),
            ("secretRef", ObjKind::Secret),
        ] {
            if let Some(r) = e.get(field).filter(|r| r.is_object()) {
                out.push(EnvRef {
                    kind,
                    name: str_at(r, "name").to_string(),
                    key: None,
                    optional: optional(r),
                });
            }
        }
    }
    let env = c.get("env").and_then(Value::as_array).into_iter().flatten();
    for e in env {
        let Some(from) = e.get("valueFrom") else {
            continue;
        };
        let pairs = [
            ("configMapKeyRef", ObjKind::ConfigMap),
            ("secretKeyRef", ObjKind::Secret),
        ];
        for (field, kind) in pairs {
            if let Some(r) = from.get(field).filter(|r| r.is_object()) {
                out.push(EnvRef {
                    kind,
                    name: str_at(r, "name").to_string(),
                    key: Some(str_at(r, "key").to_string()),
                    optional: optional(r),
                });
            }
        }
    }
    out
}

fn projection(kind: ObjKind, v: &Value, name_field: &str) -> Projection {
    let items = v
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    Projection {
        kind,
        name: str_at(v, name_field).to_string(),
        items: items.map(|i| str_at(i, "key").to_string()).collect(),
        optional: optional(v),
    }
}

fn volume_source(v: &Value) -> Option<Source> {
    if let Some(s) = v.get("secret").filter(|s| s.is_object()) {
        let sources = vec![projection(ObjKind::Secret, s, "secretName")];
        return Some(Source::Objects {
            projected: false,
            sources,
        });
    }
    if let Some(c) = v.get("configMap").filter(|c| c.is_object()) {
        let sources = vec![projection(ObjKind::ConfigMap, c, "name")];
        return Some(Source::Objects {
            projected: false,
            sources,
        });
    }
    if let Some(p) = v.get("projected") {
        let mut sources = Vec::new();
        for s in p
            .get("sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(x) = s.get("secret").filter(|x| x.is_object()) {
                sources.push(projection(ObjKind::Secret, x, "name"));
            }
            if let Some(x) = s.get("configMap").filter(|x| x.is_object()) {
                sources.push(projection(ObjKind::ConfigMap, x, "name"));
            }
        }
        return (!sources.is_empty()).then_some(Source::Objects {
            projected: true,
            sources,
        });
    }
    if let Some(h) = v.get("hostPath") {
        let kind = str_at(h, "type");
        return (!kind.is_empty()).then(|| Source::HostPath {
            path: str_at(h, "path").to_string(),
            kind: kind.to_string(),
        });
    }
    let claim = v
        .pointer("/persistentVolumeClaim/claimName")
        .and_then(Value::as_str)?;
    Some(Source::Claim(claim.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pod_without_references_reads_as_none() {
        let pod = json!({"spec": {"containers": [{"name": "c", "env": [{"name": "A", "value": "1"}]}],
            "volumes": [{"name": "tmp", "emptyDir": {}}, {"name": "proc", "hostPath": {"path": "/proc"}}]}});
        assert_eq!(PodRefs::of(&pod), None);
        assert_eq!(PodRefs::of(&json!({})), None);
    }

    #[test]
    fn env_from_comes_before_env_and_init_containers_first() {
        let pod = json!({"spec": {
            "containers": [{"name": "app",
                "env": [{"name": "P", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password", "optional": true}}}],
                "envFrom": [{"configMapRef": {"name": "settings"}}]}],
            "initContainers": [{"name": "setup", "envFrom": [{"secretRef": {"name": "boot"}}]}]}});
        let refs = PodRefs::of(&pod).expect("has references");
        let names: Vec<(&str, bool)> = refs
            .containers
            .iter()
            .map(|c| (c.name.as_str(), c.init))
            .collect();
        assert_eq!(names, [("setup", true), ("app", false)]);
        let app = &refs.containers[1].env;
        assert_eq!(
            app[0],
            EnvRef {
                kind: ObjKind::ConfigMap,
                name: "settings".into(),
                key: None,
                optional: false
            }
        );
        assert_eq!(
            app[1],
            EnvRef {
                kind: ObjKind::Secret,
                name: "db".into(),
                key: Some("password".into()),
                optional: true
            }
        );
    }

    #[test]
    fn volume_sources_are_read() {
        let pod = json!({"spec": {"containers": [{"name": "c"}], "volumes": [
            {"name": "certs", "secret": {"secretName": "tls", "items": [{"key": "tls.crt", "path": "c"}]}},
            {"name": "conf", "configMap": {"name": "app", "optional": true}},
            {"name": "all", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}},
                {"secret": {"name": "a"}}, {"configMap": {"name": "b"}}]}},
            {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
            {"name": "sock", "hostPath": {"path": "/run/x.sock", "type": "Socket"}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}}]}});
        let refs = PodRefs::of(&pod).expect("has references");
        let names: Vec<&str> = refs.volumes.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["certs", "conf", "all", "sock", "data"]);
        let Source::Objects {
            projected: false,
            sources,
        } = &refs.volumes[0].source
        else {
            panic!("secret")
        };
        assert_eq!(sources[0].items, ["tls.crt"]);
        assert_eq!(sources[0].name, "tls");
        let Source::Objects {
            projected: true,
            sources,
        } = &refs.volumes[2].source
        else {
            panic!("projected")
        };
        assert_eq!(sources.len(), 2);
        assert_eq!(
            refs.volumes[3].source,
            Source::HostPath {
                path: "/run/x.sock".into(),
                kind: "Socket".into()
            }
        );
        assert_eq!(refs.volumes[4].source, Source::Claim("data-0".into()));
    }
}
