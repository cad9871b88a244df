//! Table-driven decoding of the kinds `kubectl create` sends as protobuf (kubectl 1.35's typed
//! clients do for every built-in kind): each message is a list of (field number, JSON name,
//! type), with the numbers of k8s.io/api's `generated.proto`.
//!
//! Go writes every non-pointer field, set or not, so a field this table leaves out is skipped
//! when its payload is empty (an empty string, a zero, an empty message) and is an error
//! otherwise: nothing a client sent is dropped silently. Status (field 3 of the kinds with
//! one) is skipped whole: the API server drops a client's status on create anyway.

use serde_json::{Map, Value};

use super::{Field, ObjectMeta, ProtoError, Result, WireValue, for_each_field, map_entry, utf8};

#[derive(Clone, Copy)]
enum Ty {
    Str,
    Int,
    Bool,
    Msg(&'static Msg),
    /// A struct embedded with `json:",inline"`: its fields land in the parent's object.
    Inline(&'static Msg),
    Meta,
    StrMap,
    /// `map<string, Quantity>` (resource lists).
    QtyMap,
    IntOrStr,
    /// Server-owned (status): read past, never kept.
    Skip,
}

#[derive(Clone, Copy)]
struct Fld {
    num: u32,
    name: &'static str,
    ty: Ty,
    /// Repeated on the wire, a list in JSON.
    list: bool,
    /// A Go pointer: present means set, so a zero or empty value is kept.
    ptr: bool,
}

pub(super) struct Msg {
    name: &'static str,
    fields: &'static [Fld],
}

const fn f(num: u32, name: &'static str, ty: Ty) -> Fld {
    Fld {
        num,
        name,
        ty,
        list: false,
        ptr: false,
    }
}

const fn p(num: u32, name: &'static str, ty: Ty) -> Fld {
    Fld {
        num,
        name,
        ty,
        list: false,
        ptr: true,
    }
}

const fn l(num: u32, name: &'static str, ty: Ty) -> Fld {
    Fld {
        num,
        name,
        ty,
        list: true,
        ptr: false,
    }
}

const META: Fld = f(1, "metadata", Ty::Meta);
const STATUS: Fld = f(3, "status", Ty::Skip);

static LABEL_SELECTOR_REQUIREMENT: Msg = Msg {
    name: "LabelSelectorRequirement",
    fields: &[
        f(1, "key", Ty::Str),
        f(2, "operator", Ty::Str),
        l(3, "values", Ty::Str),
    ],
};
static LABEL_SELECTOR: Msg = Msg {
    name: "LabelSelector",
    fields: &[
        f(1, "matchLabels", Ty::StrMap),
        l(2, "matchExpressions", Ty::Msg(&LABEL_SELECTOR_REQUIREMENT)),
    ],
};
static OBJECT_REFERENCE: Msg = Msg {
    name: "ObjectReference",
    fields: &[
        f(1, "kind", Ty::Str),
        f(2, "namespace", Ty::Str),
        f(3, "name", Ty::Str),
        f(4, "uid", Ty::Str),
        f(5, "apiVersion", Ty::Str),
        f(6, "resourceVersion", Ty::Str),
        f(7, "fieldPath", Ty::Str),
    ],
};
static LOCAL_OBJECT_REFERENCE: Msg = Msg {
    name: "LocalObjectReference",
    fields: &[f(1, "name", Ty::Str)],
};

// core/v1 -------------------------------------------------------------------------------------

static SERVICE_ACCOUNT: Msg = Msg {
    name: "ServiceAccount",
    fields: &[
        META,
        l(2, "secrets", Ty::Msg(&OBJECT_REFERENCE)),
        l(3, "imagePullSecrets", Ty::Msg(&LOCAL_OBJECT_REFERENCE)),
        p(4, "automountServiceAccountToken", Ty::Bool),
    ],
};
static SERVICE_PORT: Msg = Msg {
    name: "ServicePort",
    fields: &[
        f(1, "name", Ty::Str),
        f(2, "protocol", Ty::Str),
        p(3, "port", Ty::Int),
        f(4, "targetPort", Ty::IntOrStr),
        f(5, "nodePort", Ty::Int),
        p(6, "appProtocol", Ty::Str),
    ],
};
static SERVICE_SPEC: Msg = Msg {
    name: "ServiceSpec",
    fields: &[
        l(1, "ports", Ty::Msg(&SERVICE_PORT)),
        f(2, "selector", Ty::StrMap),
        f(3, "clusterIP", Ty::Str),
        f(4, "type", Ty::Str),
        l(5, "externalIPs", Ty::Str),
        f(7, "sessionAffinity", Ty::Str),
        f(8, "loadBalancerIP", Ty::Str),
        l(9, "loadBalancerSourceRanges", Ty::Str),
        f(10, "externalName", Ty::Str),
        f(11, "externalTrafficPolicy", Ty::Str),
        f(12, "healthCheckNodePort", Ty::Int),
        f(13, "publishNotReadyAddresses", Ty::Bool),
        p(17, "ipFamilyPolicy", Ty::Str),
        l(18, "clusterIPs", Ty::Str),
        l(19, "ipFamilies", Ty::Str),
        p(20, "allocateLoadBalancerNodePorts", Ty::Bool),
        p(21, "loadBalancerClass", Ty::Str),
        p(22, "internalTrafficPolicy", Ty::Str),
        p(23, "trafficDistribution", Ty::Str),
    ],
};
static SERVICE: Msg = Msg {
    name: "Service",
    fields: &[META, f(2, "spec", Ty::Msg(&SERVICE_SPEC)), STATUS],
};
static SCOPED_RESOURCE_SELECTOR_REQUIREMENT: Msg = Msg {
    name: "ScopedResourceSelectorRequirement",
    fields: &[
        f(1, "scopeName", Ty::Str),
        f(2, "operator", Ty::Str),
        l(3, "values", Ty::Str),
    ],
};
static SCOPE_SELECTOR: Msg = Msg {
    name: "ScopeSelector",
    fields: &[l(
        1,
        "matchExpressions",
        Ty::Msg(&SCOPED_RESOURCE_SELECTOR_REQUIREMENT),
    )],
};
static RESOURCE_QUOTA_SPEC: Msg = Msg {
    name: "ResourceQuotaSpec",
    fields: &[
        f(1, "hard", Ty::QtyMap),
        l(2, "scopes", Ty::Str),
        p(3, "scopeSelector", Ty::Msg(&SCOPE_SELECTOR)),
    ],
};
static RESOURCE_QUOTA: Msg = Msg {
    name: "ResourceQuota",
    fields: &[META, f(2, "spec", Ty::Msg(&RESOURCE_QUOTA_SPEC)), STATUS],
};
static CONTAINER_PORT: Msg = Msg {
    name: "ContainerPort",
    fields: &[
        f(1, "name", Ty::Str),
        f(2, "hostPort", Ty::Int),
        p(3, "containerPort", Ty::Int),
        f(4, "protocol", Ty::Str),
        f(5, "hostIP", Ty::Str),
    ],
};
static ENV_VAR: Msg = Msg {
    name: "EnvVar",
    fields: &[f(1, "name", Ty::Str), f(2, "value", Ty::Str)],
};
static RESOURCE_REQUIREMENTS: Msg = Msg {
    name: "ResourceRequirements",
    fields: &[f(1, "limits", Ty::QtyMap), f(2, "requests", Ty::QtyMap)],
};
static CONTAINER: Msg = Msg {
    name: "Container",
    fields: &[
        f(1, "name", Ty::Str),
        f(2, "image", Ty::Str),
        l(3, "command", Ty::Str),
        l(4, "args", Ty::Str),
        f(5, "workingDir", Ty::Str),
        l(6, "ports", Ty::Msg(&CONTAINER_PORT)),
        l(7, "env", Ty::Msg(&ENV_VAR)),
        f(8, "resources", Ty::Msg(&RESOURCE_REQUIREMENTS)),
        f(13, "terminationMessagePath", Ty::Str),
        f(14, "imagePullPolicy", Ty::Str),
        f(16, "stdin", Ty::Bool),
        f(17, "stdinOnce", Ty::Bool),
        f(18, "tty", Ty::Bool),
        f(20, "terminationMessagePolicy", Ty::Str),
        p(24, "restartPolicy", Ty::Str),
    ],
};
static POD_SPEC: Msg = Msg {
    name: "PodSpec",
    fields: &[
        l(2, "containers", Ty::Msg(&CONTAINER)),
        f(3, "restartPolicy", Ty::Str),
        p(4, "terminationGracePeriodSeconds", Ty::Int),
        p(5, "activeDeadlineSeconds", Ty::Int),
        f(6, "dnsPolicy", Ty::Str),
        f(7, "nodeSelector", Ty::StrMap),
        f(8, "serviceAccountName", Ty::Str),
        f(9, "serviceAccount", Ty::Str),
        f(10, "nodeName", Ty::Str),
        f(11, "hostNetwork", Ty::Bool),
        f(12, "hostPID", Ty::Bool),
        f(13, "hostIPC", Ty::Bool),
        l(15, "imagePullSecrets", Ty::Msg(&LOCAL_OBJECT_REFERENCE)),
        f(16, "hostname", Ty::Str),
        f(17, "subdomain", Ty::Str),
        f(19, "schedulerName", Ty::Str),
        l(20, "initContainers", Ty::Msg(&CONTAINER)),
        p(21, "automountServiceAccountToken", Ty::Bool),
        f(24, "priorityClassName", Ty::Str),
        p(25, "priority", Ty::Int),
    ],
};
static POD_TEMPLATE_SPEC: Msg = Msg {
    name: "PodTemplateSpec",
    fields: &[META, f(2, "spec", Ty::Msg(&POD_SPEC))],
};

// apps/v1, batch/v1 ---------------------------------------------------------------------------

static ROLLING_UPDATE_DEPLOYMENT: Msg = Msg {
    name: "RollingUpdateDeployment",
    fields: &[
        p(1, "maxUnavailable", Ty::IntOrStr),
        p(2, "maxSurge", Ty::IntOrStr),
    ],
};
static DEPLOYMENT_STRATEGY: Msg = Msg {
    name: "DeploymentStrategy",
    fields: &[
        f(1, "type", Ty::Str),
        p(2, "rollingUpdate", Ty::Msg(&ROLLING_UPDATE_DEPLOYMENT)),
    ],
};
static DEPLOYMENT_SPEC: Msg = Msg {
    name: "DeploymentSpec",
    fields: &[
        p(1, "replicas", Ty::Int),
        p(2, "selector", Ty::Msg(&LABEL_SELECTOR)),
        f(3, "template", Ty::Msg(&POD_TEMPLATE_SPEC)),
        f(4, "strategy", Ty::Msg(&DEPLOYMENT_STRATEGY)),
        f(5, "minReadySeconds", Ty::Int),
        p(6, "revisionHistoryLimit", Ty::Int),
        f(7, "paused", Ty::Bool),
        p(9, "progressDeadlineSeconds", Ty::Int),
    ],
};
static DEPLOYMENT: Msg = Msg {
    name: "Deployment",
    fields: &[META, f(2, "spec", Ty::Msg(&DEPLOYMENT_SPEC)), STATUS],
};
static JOB_SPEC: Msg = Msg {
    name: "JobSpec",
    fields: &[
        p(1, "parallelism", Ty::Int),
        p(2, "completions", Ty::Int),
        p(3, "activeDeadlineSeconds", Ty::Int),
        p(4, "selector", Ty::Msg(&LABEL_SELECTOR)),
        p(5, "manualSelector", Ty::Bool),
        f(6, "template", Ty::Msg(&POD_TEMPLATE_SPEC)),
        p(7, "backoffLimit", Ty::Int),
        p(8, "ttlSecondsAfterFinished", Ty::Int),
        p(9, "completionMode", Ty::Str),
        p(10, "suspend", Ty::Bool),
    ],
};
static JOB: Msg = Msg {
    name: "Job",
    fields: &[META, f(2, "spec", Ty::Msg(&JOB_SPEC)), STATUS],
};
static JOB_TEMPLATE_SPEC: Msg = Msg {
    name: "JobTemplateSpec",
    fields: &[META, f(2, "spec", Ty::Msg(&JOB_SPEC))],
};
static CRON_JOB_SPEC: Msg = Msg {
    name: "CronJobSpec",
    fields: &[
        f(1, "schedule", Ty::Str),
        p(2, "startingDeadlineSeconds", Ty::Int),
        f(3, "concurrencyPolicy", Ty::Str),
        p(4, "suspend", Ty::Bool),
        f(5, "jobTemplate", Ty::Msg(&JOB_TEMPLATE_SPEC)),
        p(6, "successfulJobsHistoryLimit", Ty::Int),
        p(7, "failedJobsHistoryLimit", Ty::Int),
        p(8, "timeZone", Ty::Str),
    ],
};
static CRON_JOB: Msg = Msg {
    name: "CronJob",
    fields: &[META, f(2, "spec", Ty::Msg(&CRON_JOB_SPEC)), STATUS],
};

// rbac, networking, policy, scheduling ------------------------------------------------------

static POLICY_RULE: Msg = Msg {
    name: "PolicyRule",
    fields: &[
        l(1, "verbs", Ty::Str),
        l(2, "apiGroups", Ty::Str),
        l(3, "resources", Ty::Str),
        l(4, "resourceNames", Ty::Str),
        l(5, "nonResourceURLs", Ty::Str),
    ],
};
static AGGREGATION_RULE: Msg = Msg {
    name: "AggregationRule",
    fields: &[l(1, "clusterRoleSelectors", Ty::Msg(&LABEL_SELECTOR))],
};
static ROLE: Msg = Msg {
    name: "Role",
    fields: &[META, l(2, "rules", Ty::Msg(&POLICY_RULE))],
};
static CLUSTER_ROLE: Msg = Msg {
    name: "ClusterRole",
    fields: &[
        META,
        l(2, "rules", Ty::Msg(&POLICY_RULE)),
        p(3, "aggregationRule", Ty::Msg(&AGGREGATION_RULE)),
    ],
};
static SUBJECT: Msg = Msg {
    name: "Subject",
    fields: &[
        f(1, "kind", Ty::Str),
        f(2, "apiGroup", Ty::Str),
        f(3, "name", Ty::Str),
        f(4, "namespace", Ty::Str),
    ],
};
static ROLE_REF: Msg = Msg {
    name: "RoleRef",
    fields: &[
        f(1, "apiGroup", Ty::Str),
        f(2, "kind", Ty::Str),
        f(3, "name", Ty::Str),
    ],
};
static ROLE_BINDING: Msg = Msg {
    name: "RoleBinding",
    fields: &[
        META,
        l(2, "subjects", Ty::Msg(&SUBJECT)),
        f(3, "roleRef", Ty::Msg(&ROLE_REF)),
    ],
};
static SERVICE_BACKEND_PORT: Msg = Msg {
    name: "ServiceBackendPort",
    fields: &[f(1, "name", Ty::Str), f(2, "number", Ty::Int)],
};
static INGRESS_SERVICE_BACKEND: Msg = Msg {
    name: "IngressServiceBackend",
    fields: &[
        f(1, "name", Ty::Str),
        f(2, "port", Ty::Msg(&SERVICE_BACKEND_PORT)),
    ],
};
static TYPED_LOCAL_OBJECT_REFERENCE: Msg = Msg {
    name: "TypedLocalObjectReference",
    fields: &[
        p(1, "apiGroup", Ty::Str),
        f(2, "kind", Ty::Str),
        f(3, "name", Ty::Str),
    ],
};
static INGRESS_BACKEND: Msg = Msg {
    name: "IngressBackend",
    fields: &[
        p(3, "resource", Ty::Msg(&TYPED_LOCAL_OBJECT_REFERENCE)),
        p(4, "service", Ty::Msg(&INGRESS_SERVICE_BACKEND)),
    ],
};
static HTTP_INGRESS_PATH: Msg = Msg {
    name: "HTTPIngressPath",
    fields: &[
        f(1, "path", Ty::Str),
        f(2, "backend", Ty::Msg(&INGRESS_BACKEND)),
        p(3, "pathType", Ty::Str),
    ],
};
static HTTP_INGRESS_RULE_VALUE: Msg = Msg {
    name: "HTTPIngressRuleValue",
    fields: &[l(1, "paths", Ty::Msg(&HTTP_INGRESS_PATH))],
};
static INGRESS_RULE_VALUE: Msg = Msg {
    name: "IngressRuleValue",
    fields: &[p(1, "http", Ty::Msg(&HTTP_INGRESS_RULE_VALUE))],
};
static INGRESS_RULE: Msg = Msg {
    name: "IngressRule",
    fields: &[
        f(1, "host", Ty::Str),
        f(2, "ingressRuleValue", Ty::Inline(&INGRESS_RULE_VALUE)),
    ],
};
static INGRESS_TLS: Msg = Msg {
    name: "IngressTLS",
    fields: &[l(1, "hosts", Ty::Str), f(2, "secretName", Ty::Str)],
};
static INGRESS_SPEC: Msg = Msg {
    name: "IngressSpec",
    fields: &[
        p(1, "defaultBackend", Ty::Msg(&INGRESS_BACKEND)),
        l(2, "tls", Ty::Msg(&INGRESS_TLS)),
        l(3, "rules", Ty::Msg(&INGRESS_RULE)),
        p(4, "ingressClassName", Ty::Str),
    ],
};
static INGRESS: Msg = Msg {
    name: "Ingress",
    fields: &[META, f(2, "spec", Ty::Msg(&INGRESS_SPEC)), STATUS],
};
static PDB_SPEC: Msg = Msg {
    name: "PodDisruptionBudgetSpec",
    fields: &[
        p(1, "minAvailable", Ty::IntOrStr),
        p(2, "selector", Ty::Msg(&LABEL_SELECTOR)),
        p(3, "maxUnavailable", Ty::IntOrStr),
        p(4, "unhealthyPodEvictionPolicy", Ty::Str),
    ],
};
static PDB: Msg = Msg {
    name: "PodDisruptionBudget",
    fields: &[META, f(2, "spec", Ty::Msg(&PDB_SPEC)), STATUS],
};
static PRIORITY_CLASS: Msg = Msg {
    name: "PriorityClass",
    fields: &[
        META,
        p(2, "value", Ty::Int),
        f(3, "globalDefault", Ty::Bool),
        f(4, "description", Ty::Str),
        p(5, "preemptionPolicy", Ty::Str),
    ],
};

/// The message of a top-level kind this table decodes.
pub(super) fn kind(api_version: &str, kind: &str) -> Option<&'static Msg> {
    Some(match (api_version, kind) {
        ("v1", "ServiceAccount") => &SERVICE_ACCOUNT,
        ("v1", "Service") => &SERVICE,
        ("v1", "ResourceQuota") => &RESOURCE_QUOTA,
        ("apps/v1", "Deployment") => &DEPLOYMENT,
        ("batch/v1", "Job") => &JOB,
        ("batch/v1", "CronJob") => &CRON_JOB,
        ("rbac.authorization.k8s.io/v1", "Role") => &ROLE,
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => &CLUSTER_ROLE,
        ("rbac.authorization.k8s.io/v1", "RoleBinding" | "ClusterRoleBinding") => &ROLE_BINDING,
        ("networking.k8s.io/v1", "Ingress") => &INGRESS,
        ("policy/v1", "PodDisruptionBudget") => &PDB,
        ("scheduling.k8s.io/v1", "PriorityClass") => &PRIORITY_CLASS,
        _ => return None,
    })
}

/// Decodes one message into `out` (fields merge, lists append, as protobuf merges).
pub(super) fn decode(msg: &'static Msg, buf: &[u8], out: &mut Map<String, Value>) -> Result<()> {
    let mut meta: Option<ObjectMeta> = None;
    for_each_field(buf, msg.name, |fd| {
        let Some(d) = msg.fields.iter().find(|d| d.num == fd.number) else {
            return if empty(&fd) {
                Ok(())
            } else {
                Err(ProtoError::new(format!(
                    "field {} is not one this simulator decodes",
                    fd.number
                )))
            };
        };
        match d.ty {
            Ty::Meta => meta.get_or_insert_default().merge_field(&fd),
            Ty::Skip => Ok(()),
            Ty::Inline(inner) => decode(inner, fd.bytes(d.name)?, out),
            _ => field(d, &fd, out).map_err(|e| e.context(d.name)),
        }
    })?;
    if let Some(meta) = meta {
        out.insert("metadata".into(), meta.into_json());
    }
    Ok(())
}

fn empty(fd: &Field<'_>) -> bool {
    matches!(fd.value, WireValue::Varint(0) | WireValue::Len([]))
}

/// One known field into `out`.
fn field(d: &Fld, fd: &Field<'_>, out: &mut Map<String, Value>) -> Result<()> {
    let value = match d.ty {
        Ty::Str => Value::String(fd.string(d.name)?),
        Ty::Int => Value::from(fd.int64(d.name)?),
        Ty::Bool => Value::Bool(fd.bool(d.name)?),
        Ty::IntOrStr => int_or_string(fd.bytes(d.name)?)?,
        Ty::Msg(inner) => {
            // A repeated singular message merges into what came before; a list item is new.
            let mut obj = match (d.list, out.remove(d.name)) {
                (false, Some(Value::Object(o))) => o,
                (true, Some(list)) => {
                    out.insert(d.name.into(), list);
                    Map::new()
                }
                _ => Map::new(),
            };
            decode(inner, fd.bytes(d.name)?, &mut obj)?;
            Value::Object(obj)
        }
        Ty::StrMap | Ty::QtyMap => {
            let (key, raw) = map_entry(fd.bytes(d.name)?)?;
            let value = match d.ty {
                Ty::QtyMap => quantity(raw)?,
                _ => Value::String(utf8(raw)?),
            };
            let map = out
                .entry(d.name)
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(map) = map.as_object_mut() {
                map.insert(key, value);
            }
            return Ok(());
        }
        Ty::Meta | Ty::Skip | Ty::Inline(_) => return Ok(()),
    };
    if d.list {
        let list = out
            .entry(d.name)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(items) = list.as_array_mut() {
            items.push(value);
        }
        return Ok(());
    }
    let zero = match &value {
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_i64() == Some(0),
        Value::Bool(b) => !b,
        _ => false,
    };
    if zero && !d.ptr {
        // Go's JSON leaves out an unset non-pointer field (`omitempty`).
        out.remove(d.name);
    } else {
        out.insert(d.name.into(), value);
    }
    Ok(())
}

/// `IntOrString{1 type, 2 intVal, 3 strVal}`: a number or a string in JSON.
fn int_or_string(buf: &[u8]) -> Result<Value> {
    let (mut ty, mut int, mut text) = (0, 0, String::new());
    for_each_field(buf, "IntOrString", |fd| {
        match fd.number {
            1 => ty = fd.int64("type")?,
            2 => int = fd.int64("intVal")?,
            3 => text = fd.string("strVal")?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(if ty == 1 {
        Value::String(text)
    } else {
        Value::from(int)
    })
}

/// `Quantity{1 string}`.
fn quantity(buf: &[u8]) -> Result<Value> {
    let mut text = String::new();
    for_each_field(buf, "Quantity", |fd| {
        if fd.number == 1 {
            text = fd.string("string")?;
        }
        Ok(())
    })?;
    Ok(Value::String(text))
}
