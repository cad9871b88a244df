//! The resource types the simulated API server serves: discovery, routing and storage all
//! read this one table.

/// One served resource (a plural under a group-version).
#[derive(Debug, PartialEq, Eq)]
pub struct ResourceType {
    /// API group; empty for the core group.
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
    /// Subresources served besides the object itself (`status`, `log`, `scale`).
    pub subresources: &'static [&'static str],
    /// Whether `metadata.generation` is kept and bumped on spec changes.
    pub has_generation: bool,
}

impl ResourceType {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `deployments.apps`, as Kubernetes names a resource in error messages.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// Whether writes to the main resource leave `.status` alone (and `/status` changes only it).
    pub fn has_status(&self) -> bool {
        self.subresources.contains(&"status")
    }

    /// The URL path of the collection, for `selfLink`-style messages and tests.
    pub fn collection_path(&self, namespace: Option<&str>) -> String {
        let prefix = if self.group.is_empty() {
            "/api/v1".to_string()
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match namespace {
            Some(ns) if self.namespaced => format!("{prefix}/namespaces/{ns}/{}", self.plural),
            _ => format!("{prefix}/{}", self.plural),
        }
    }
}

#[allow(clippy::too_many_arguments)] // a table row: positional reads best here
const fn res(
    group: &'static str,
    plural: &'static str,
    singular: &'static str,
    kind: &'static str,
    namespaced: bool,
    short_names: &'static [&'static str],
    subresources: &'static [&'static str],
    has_generation: bool,
) -> ResourceType {
    ResourceType {
        group,
        version: "v1",
        plural,
        singular,
        kind,
        namespaced,
        short_names,
        subresources,
        has_generation,
    }
}

pub static RESOURCES: &[ResourceType] = &[
    res(
        "",
        "namespaces",
        "namespace",
        "Namespace",
        false,
        &["ns"],
        &["status"],
        false,
    ),
    res(
        "",
        "nodes",
        "node",
        "Node",
        false,
        &["no"],
        &["status"],
        false,
    ),
    res(
        "",
        "pods",
        "pod",
        "Pod",
        true,
        &["po"],
        &["status", "log"],
        false,
    ),
    res(
        "",
        "services",
        "service",
        "Service",
        true,
        &["svc"],
        &["status"],
        false,
    ),
    res(
        "",
        "serviceaccounts",
        "serviceaccount",
        "ServiceAccount",
        true,
        &["sa"],
        &[],
        false,
    ),
    res("", "secrets", "secret", "Secret", true, &[], &[], false),
    res(
        "",
        "configmaps",
        "configmap",
        "ConfigMap",
        true,
        &["cm"],
        &[],
        false,
    ),
    res("", "events", "event", "Event", true, &["ev"], &[], false),
    res(
        "",
        "persistentvolumeclaims",
        "persistentvolumeclaim",
        "PersistentVolumeClaim",
        true,
        &["pvc"],
        &["status"],
        false,
    ),
    res(
        "",
        "endpoints",
        "endpoints",
        "Endpoints",
        true,
        &["ep"],
        &[],
        false,
    ),
    res(
        "apps",
        "deployments",
        "deployment",
        "Deployment",
        true,
        &["deploy"],
        &["status", "scale"],
        true,
    ),
    res(
        "apps",
        "replicasets",
        "replicaset",
        "ReplicaSet",
        true,
        &["rs"],
        &["status", "scale"],
        true,
    ),
    res(
        "apps",
        "statefulsets",
        "statefulset",
        "StatefulSet",
        true,
        &["sts"],
        &["status", "scale"],
        true,
    ),
    res(
        "apps",
        "daemonsets",
        "daemonset",
        "DaemonSet",
        true,
        &["ds"],
        &["status"],
        true,
    ),
    res(
        "apps",
        "controllerrevisions",
        "controllerrevision",
        "ControllerRevision",
        true,
        &[],
        &[],
        false,
    ),
    res("batch", "jobs", "job", "Job", true, &[], &["status"], true),
    res(
        "batch",
        "cronjobs",
        "cronjob",
        "CronJob",
        true,
        &["cj"],
        &["status"],
        true,
    ),
    res(
        "policy",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        true,
        &["pdb"],
        &["status"],
        true,
    ),
    res(
        "networking.k8s.io",
        "ingresses",
        "ingress",
        "Ingress",
        true,
        &["ing"],
        &["status"],
        true,
    ),
    res(
        "rbac.authorization.k8s.io",
        "roles",
        "role",
        "Role",
        true,
        &[],
        &[],
        false,
    ),
    res(
        "rbac.authorization.k8s.io",
        "rolebindings",
        "rolebinding",
        "RoleBinding",
        true,
        &[],
        &[],
        false,
    ),
];

/// Index of a resource in [`RESOURCES`]; the store keeps one map per index.
pub type ResourceId = usize;

pub fn by_path(group: &str, version: &str, plural: &str) -> Option<ResourceId> {
    RESOURCES
        .iter()
        .position(|r| r.group == group && r.version == version && r.plural == plural)
}

pub fn by_kind(api_version: &str, kind: &str) -> Option<ResourceId> {
    RESOURCES
        .iter()
        .position(|r| r.kind == kind && r.api_version() == api_version)
}

pub fn get(id: ResourceId) -> &'static ResourceType {
    &RESOURCES[id]
}

/// The distinct group-versions, in table order (core `v1` first).
pub fn group_versions() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for r in RESOURCES {
        if !out.contains(&(r.group, r.version)) {
            out.push((r.group, r.version));
        }
    }
    out
}

/// Shorthand ids for the resources the controllers work on.
pub mod ids {
    use super::{ResourceId, by_path};
    use std::sync::LazyLock;

    macro_rules! id {
        ($name:ident, $group:literal, $plural:literal) => {
            pub static $name: LazyLock<ResourceId> = LazyLock::new(|| {
                by_path($group, "v1", $plural).expect(concat!($plural, " is in the table"))
            });
        };
    }
    id!(NAMESPACES, "", "namespaces");
    id!(NODES, "", "nodes");
    id!(PODS, "", "pods");
    id!(SECRETS, "", "secrets");
    id!(SERVICEACCOUNTS, "", "serviceaccounts");
    id!(CONFIGMAPS, "", "configmaps");
    id!(EVENTS, "", "events");
    id!(DEPLOYMENTS, "apps", "deployments");
    id!(REPLICASETS, "apps", "replicasets");
    id!(STATEFULSETS, "apps", "statefulsets");
    id!(DAEMONSETS, "apps", "daemonsets");
    id!(JOBS, "batch", "jobs");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_agree() {
        let d = by_path("apps", "v1", "deployments").unwrap();
        assert_eq!(by_kind("apps/v1", "Deployment"), Some(d));
        assert_eq!(get(d).qualified(), "deployments.apps");
        assert_eq!(get(*ids::PODS).api_version(), "v1");
        assert_eq!(by_kind("v1", "Deployment"), None);
        assert_eq!(group_versions()[0], ("", "v1"));
    }

    #[test]
    fn paths() {
        let d = get(*ids::DEPLOYMENTS);
        assert_eq!(
            d.collection_path(Some("apps")),
            "/apis/apps/v1/namespaces/apps/deployments"
        );
        assert_eq!(get(*ids::NODES).collection_path(Some("x")), "/api/v1/nodes");
    }
}
