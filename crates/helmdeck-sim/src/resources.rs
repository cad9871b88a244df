//! The resource types the simulated API server serves: discovery, OpenAPI, routing, storage
//! and `kubectl get` tables all read this one registry.
//!
//! Built-in kinds are a static table. Kinds a CustomResourceDefinition defines are interned at
//! runtime ([`intern`]): each distinct definition is leaked once and gets a stable id after the
//! built-ins, so `get(id)` stays a cheap `&'static` lookup for the controllers. Which interned
//! kinds a simulator *serves* is that simulator's own state (its store's CRDs), so two
//! simulators in one process never see each other's custom kinds.

use std::sync::RwLock;

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
    /// Discovery categories (`all` makes `kubectl get all` include the kind).
    pub categories: &'static [&'static str],
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

const NS: bool = true;
const CLUSTER: bool = false;
const ALL: &[&str] = &["all"];
const EXT: &[&str] = &["api-extensions"];
const NONE: &[&str] = &[];
const STATUS: &[&str] = &["status"];
const SCALE: &[&str] = &["status", "scale"];

#[allow(clippy::too_many_arguments)] // a table row: positional reads best here
const fn res(
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    singular: &'static str,
    kind: &'static str,
    namespaced: bool,
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    subresources: &'static [&'static str],
    has_generation: bool,
) -> ResourceType {
    ResourceType {
        group,
        version,
        plural,
        singular,
        kind,
        namespaced,
        short_names,
        categories,
        subresources,
        has_generation,
    }
}

/// Every built-in kind of Kubernetes 1.35 a chart renders (and the ones the controllers write),
/// at the version a 1.35 API server prefers. Create-only review kinds (TokenReview,
/// SubjectAccessReview…) and `bindings`/`componentstatuses` are left out: no chart stores them.
#[rustfmt::skip]
pub static RESOURCES: &[ResourceType] = &[
    // core v1
    res("", "v1", "namespaces", "namespace", "Namespace", CLUSTER, &["ns"], NONE, STATUS, false),
    res("", "v1", "nodes", "node", "Node", CLUSTER, &["no"], NONE, STATUS, false),
    res("", "v1", "pods", "pod", "Pod", NS, &["po"], ALL, &["status", "log"], false),
    res("", "v1", "services", "service", "Service", NS, &["svc"], ALL, STATUS, false),
    res("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", NS, &["sa"], NONE, NONE, false),
    res("", "v1", "secrets", "secret", "Secret", NS, NONE, NONE, NONE, false),
    res("", "v1", "configmaps", "configmap", "ConfigMap", NS, &["cm"], NONE, NONE, false),
    res("", "v1", "events", "event", "Event", NS, &["ev"], NONE, NONE, false),
    res("", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", NS, &["pvc"], NONE, STATUS, false),
    res("", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", CLUSTER, &["pv"], NONE, STATUS, false),
    res("", "v1", "endpoints", "endpoints", "Endpoints", NS, &["ep"], NONE, NONE, false),
    res("", "v1", "limitranges", "limitrange", "LimitRange", NS, &["limits"], NONE, NONE, false),
    res("", "v1", "resourcequotas", "resourcequota", "ResourceQuota", NS, &["quota"], NONE, STATUS, false),
    res("", "v1", "replicationcontrollers", "replicationcontroller", "ReplicationController", NS, &["rc"], ALL, SCALE, true),
    res("", "v1", "podtemplates", "podtemplate", "PodTemplate", NS, NONE, NONE, NONE, false),
    // apps/v1
    res("apps", "v1", "deployments", "deployment", "Deployment", NS, &["deploy"], ALL, SCALE, true),
    res("apps", "v1", "replicasets", "replicaset", "ReplicaSet", NS, &["rs"], ALL, SCALE, true),
    res("apps", "v1", "statefulsets", "statefulset", "StatefulSet", NS, &["sts"], ALL, SCALE, true),
    res("apps", "v1", "daemonsets", "daemonset", "DaemonSet", NS, &["ds"], ALL, STATUS, true),
    res("apps", "v1", "controllerrevisions", "controllerrevision", "ControllerRevision", NS, NONE, NONE, NONE, false),
    // batch/v1
    res("batch", "v1", "jobs", "job", "Job", NS, NONE, ALL, STATUS, true),
    res("batch", "v1", "cronjobs", "cronjob", "CronJob", NS, &["cj"], ALL, STATUS, true),
    // autoscaling/v2
    res("autoscaling", "v2", "horizontalpodautoscalers", "horizontalpodautoscaler", "HorizontalPodAutoscaler", NS, &["hpa"], ALL, STATUS, true),
    // policy/v1
    res("policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", NS, &["pdb"], NONE, STATUS, true),
    // networking.k8s.io/v1
    res("networking.k8s.io", "v1", "ingresses", "ingress", "Ingress", NS, &["ing"], NONE, STATUS, true),
    res("networking.k8s.io", "v1", "ingressclasses", "ingressclass", "IngressClass", CLUSTER, NONE, NONE, NONE, true),
    res("networking.k8s.io", "v1", "networkpolicies", "networkpolicy", "NetworkPolicy", NS, &["netpol"], NONE, NONE, true),
    res("networking.k8s.io", "v1", "ipaddresses", "ipaddress", "IPAddress", CLUSTER, &["ip"], NONE, NONE, false),
    res("networking.k8s.io", "v1", "servicecidrs", "servicecidr", "ServiceCIDR", CLUSTER, NONE, NONE, STATUS, true),
    // rbac.authorization.k8s.io/v1
    res("rbac.authorization.k8s.io", "v1", "roles", "role", "Role", NS, NONE, NONE, NONE, false),
    res("rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", NS, NONE, NONE, NONE, false),
    res("rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", CLUSTER, NONE, NONE, NONE, false),
    res("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", CLUSTER, NONE, NONE, NONE, false),
    // admissionregistration.k8s.io/v1 (stored, never called)
    res("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "validatingwebhookconfiguration", "ValidatingWebhookConfiguration", CLUSTER, NONE, EXT, NONE, true),
    res("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "mutatingwebhookconfiguration", "MutatingWebhookConfiguration", CLUSTER, NONE, EXT, NONE, true),
    res("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "validatingadmissionpolicy", "ValidatingAdmissionPolicy", CLUSTER, NONE, EXT, STATUS, true),
    res("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings", "validatingadmissionpolicybinding", "ValidatingAdmissionPolicyBinding", CLUSTER, NONE, EXT, NONE, true),
    // apiextensions.k8s.io/v1, apiregistration.k8s.io/v1
    res("apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition", "CustomResourceDefinition", CLUSTER, &["crd", "crds"], EXT, STATUS, true),
    res("apiregistration.k8s.io", "v1", "apiservices", "apiservice", "APIService", CLUSTER, NONE, EXT, STATUS, false),
    // scheduling, coordination, discovery, node, certificates
    res("scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", CLUSTER, &["pc"], NONE, NONE, false),
    res("coordination.k8s.io", "v1", "leases", "lease", "Lease", NS, NONE, NONE, NONE, false),
    res("discovery.k8s.io", "v1", "endpointslices", "endpointslice", "EndpointSlice", NS, NONE, NONE, NONE, false),
    res("node.k8s.io", "v1", "runtimeclasses", "runtimeclass", "RuntimeClass", CLUSTER, NONE, NONE, NONE, false),
    res("certificates.k8s.io", "v1", "certificatesigningrequests", "certificatesigningrequest", "CertificateSigningRequest", CLUSTER, &["csr"], NONE, &["status", "approval"], false),
    // storage.k8s.io/v1
    res("storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", CLUSTER, &["sc"], NONE, NONE, false),
    res("storage.k8s.io", "v1", "csidrivers", "csidriver", "CSIDriver", CLUSTER, NONE, NONE, NONE, false),
    res("storage.k8s.io", "v1", "csinodes", "csinode", "CSINode", CLUSTER, NONE, NONE, NONE, false),
    res("storage.k8s.io", "v1", "csistoragecapacities", "csistoragecapacity", "CSIStorageCapacity", NS, NONE, NONE, NONE, false),
    res("storage.k8s.io", "v1", "volumeattachments", "volumeattachment", "VolumeAttachment", CLUSTER, NONE, NONE, STATUS, false),
    res("storage.k8s.io", "v1", "volumeattributesclasses", "volumeattributesclass", "VolumeAttributesClass", CLUSTER, &["vac"], NONE, NONE, false),
    // flowcontrol.apiserver.k8s.io/v1
    res("flowcontrol.apiserver.k8s.io", "v1", "flowschemas", "flowschema", "FlowSchema", CLUSTER, NONE, NONE, STATUS, true),
    res("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations", "prioritylevelconfiguration", "PriorityLevelConfiguration", CLUSTER, NONE, NONE, STATUS, true),
];

/// Index of a resource: below `RESOURCES.len()` a built-in, above it an interned custom kind.
/// The store keeps one map per index.
pub type ResourceId = usize;

/// Custom kinds interned so far (process-wide; each leaked once per distinct definition).
static INTERNED: RwLock<Vec<&'static ResourceType>> = RwLock::new(Vec::new());

/// A built-in resource by its URL segments.
pub fn by_path(group: &str, version: &str, plural: &str) -> Option<ResourceId> {
    RESOURCES
        .iter()
        .position(|r| r.group == group && r.version == version && r.plural == plural)
}

/// A built-in resource by `apiVersion` and `kind`.
pub fn by_kind(api_version: &str, kind: &str) -> Option<ResourceId> {
    RESOURCES
        .iter()
        .position(|r| r.kind == kind && r.api_version() == api_version)
}

pub fn get(id: ResourceId) -> &'static ResourceType {
    match RESOURCES.get(id) {
        Some(r) => r,
        None => INTERNED.read().unwrap_or_else(|e| e.into_inner())[id - RESOURCES.len()],
    }
}

/// Whether the id names a custom kind (defined by a CRD) rather than a built-in.
pub fn is_custom(id: ResourceId) -> bool {
    id >= RESOURCES.len()
}

/// The owned form of a custom kind, as read from a CRD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomType {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub subresources: Vec<&'static str>,
}

impl CustomType {
    fn same_as(&self, r: &ResourceType) -> bool {
        r.group == self.group
            && r.version == self.version
            && r.plural == self.plural
            && r.singular == self.singular
            && r.kind == self.kind
            && r.namespaced == self.namespaced
            && r.short_names.iter().eq(self.short_names.iter())
            && r.categories.iter().eq(self.categories.iter())
            && r.subresources == self.subresources.as_slice()
    }
}

fn leak_strs(v: &[String]) -> &'static [&'static str] {
    v.iter()
        .map(|s| &*s.clone().leak())
        .collect::<Vec<_>>()
        .leak()
}

/// The id of a custom kind: the same definition always gets the same id, so re-creating a
/// CRD (helm upgrade, a test run twice) leaks nothing new.
pub fn intern(t: &CustomType) -> ResourceId {
    if let Some(i) = INTERNED
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .position(|r| t.same_as(r))
    {
        return RESOURCES.len() + i;
    }
    let mut interned = INTERNED.write().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = interned.iter().position(|r| t.same_as(r)) {
        return RESOURCES.len() + i;
    }
    let leaked: &'static ResourceType = Box::leak(Box::new(ResourceType {
        group: t.group.clone().leak(),
        version: t.version.clone().leak(),
        plural: t.plural.clone().leak(),
        singular: t.singular.clone().leak(),
        kind: t.kind.clone().leak(),
        namespaced: t.namespaced,
        short_names: leak_strs(&t.short_names),
        categories: leak_strs(&t.categories),
        subresources: t.subresources.clone().leak(),
        has_generation: true,
    }));
    interned.push(leaked);
    RESOURCES.len() + interned.len() - 1
}

/// How many ids exist so far (built-in and interned), for sizing per-id tables.
pub fn id_count() -> usize {
    RESOURCES.len() + INTERNED.read().unwrap_or_else(|e| e.into_inner()).len()
}

/// The distinct group-versions of `types`, in order (core `v1` first for the built-ins).
pub fn group_versions(types: &[ResourceId]) -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for r in types.iter().map(|&id| get(id)) {
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
    id!(CRDS, "apiextensions.k8s.io", "customresourcedefinitions");
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
        let all: Vec<ResourceId> = (0..RESOURCES.len()).collect();
        assert_eq!(group_versions(&all)[0], ("", "v1"));
        assert!(group_versions(&all).contains(&("autoscaling", "v2")));
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

    #[test]
    fn no_two_rows_share_a_path_a_kind_or_a_short_name() {
        for (i, a) in RESOURCES.iter().enumerate() {
            for b in &RESOURCES[i + 1..] {
                assert!(
                    (a.group, a.version, a.plural) != (b.group, b.version, b.plural),
                    "{}",
                    a.plural
                );
                assert!((a.group, a.kind) != (b.group, b.kind), "{}", a.kind);
                for s in a.short_names {
                    assert!(!b.short_names.contains(s), "short name {s}");
                }
            }
        }
    }

    #[test]
    fn interning_is_stable_per_definition() {
        let t = CustomType {
            group: "intern.test.io".into(),
            version: "v1".into(),
            plural: "widgets".into(),
            singular: "widget".into(),
            kind: "Widget".into(),
            namespaced: true,
            short_names: vec!["wg".into()],
            categories: vec![],
            subresources: vec!["status"],
        };
        let a = intern(&t);
        assert!(is_custom(a));
        assert_eq!(intern(&t), a);
        assert_eq!(get(a).qualified(), "widgets.intern.test.io");
        let b = intern(&CustomType {
            namespaced: false,
            ..t.clone()
        });
        assert_ne!(a, b);
        assert!(!get(b).namespaced);
    }
}
