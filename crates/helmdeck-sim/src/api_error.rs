//! Kubernetes `Status` errors, as the API server answers failed requests.

use serde_json::{Value, json};

use super::resources::{self, ResourceId};

/// One request as RBAC sees it.
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`.
    pub verb: &'a str,
    /// The plural (`secrets`).
    pub resource: &'a str,
    pub subresource: Option<&'a str>,
    /// The API group, empty for the core group.
    pub group: &'a str,
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
}

#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Value,
    /// The Status's `metadata.continue`: where an expired paged list may go on, inconsistently.
    pub list_continue: Option<String>,
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>, details: Value) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details,
            list_continue: None,
        }
    }

    fn details(res: ResourceId, name: &str) -> Value {
        let rt = resources::get(res);
        json!({"name": name, "group": rt.group, "kind": rt.plural})
    }

    /// An error about the object `name`: its details, and `message` given the object as the
    /// API server names it (`deployments.apps "web"`).
    fn about(
        res: ResourceId,
        name: &str,
        code: u16,
        reason: &'static str,
        message: impl FnOnce(String) -> String,
    ) -> Self {
        let object = format!("{} \"{name}\"", resources::get(res).qualified());
        Self::new(code, reason, message(object), Self::details(res, name))
    }

    pub fn not_found(res: ResourceId, name: &str) -> Self {
        Self::about(res, name, 404, "NotFound", |o| format!("{o} not found"))
    }

    pub fn already_exists(res: ResourceId, name: &str) -> Self {
        Self::about(res, name, 409, "AlreadyExists", |o| {
            format!("{o} already exists")
        })
    }

    pub fn conflict(res: ResourceId, name: &str) -> Self {
        Self::about(res, name, 409, "Conflict", |o| {
            format!(
                "Operation cannot be fulfilled on {o}: the object has been modified; please apply your changes to the latest version and try again"
            )
        })
    }

    /// 409 Conflict for a server-side apply that would change fields other managers own;
    /// `details` carries a `FieldManagerConflict` cause per field.
    pub fn apply_conflict(message: String, details: Value) -> Self {
        Self::new(409, "Conflict", message, details)
    }

    /// 422 Invalid, worded as the API server words it: `Kind.group "name" is invalid: <causes>`.
    pub fn invalid(res: ResourceId, name: &str, causes: &str) -> Self {
        let rt = resources::get(res);
        let kind = if rt.group.is_empty() {
            rt.kind.to_string()
        } else {
            format!("{}.{}", rt.kind, rt.group)
        };
        let mut details = Self::details(res, name);
        details["kind"] = json!(rt.kind);
        details["causes"] = json!(
            causes
                .split("; ")
                .map(|c| match c.split_once(": ") {
                    Some((field, msg)) =>
                        json!({"reason": "FieldValueInvalid", "message": msg, "field": field}),
                    None => json!({"reason": "FieldValueInvalid", "message": c}),
                })
                .collect::<Vec<_>>()
        );
        Self::new(
            422,
            "Invalid",
            format!("{kind} \"{name}\" is invalid: {causes}"),
            details,
        )
    }

    /// 403 Forbidden, as an admission plugin refuses a request: `pods "x" is forbidden: <why>`.
    pub fn forbidden(res: ResourceId, name: &str, why: &str) -> Self {
        let rt = resources::get(res);
        Self::new(
            403,
            "Forbidden",
            format!("{} \"{name}\" is forbidden: {why}", rt.qualified()),
            Self::details(res, name),
        )
    }

    /// 403 Forbidden as the API server answers a request RBAC denies (`forbiddenMessage` and
    /// `NewForbidden` in k8s.io/apiserver): `secrets is forbidden: User "u" cannot list resource
    /// "secrets" in API group "" in the namespace "apps"`.
    pub fn rbac_forbidden(user: &str, req: &Access<'_>) -> Self {
        let scope = match req.namespace.filter(|n| !n.is_empty()) {
            Some(ns) => format!("in the namespace \"{ns}\""),
            None => "at the cluster scope".to_string(),
        };
        let resource = match req.subresource {
            Some(sub) => format!("{}/{sub}", req.resource),
            None => req.resource.to_string(),
        };
        let (verb, group) = (req.verb, req.group);
        let why = format!(
            "User \"{user}\" cannot {verb} resource \"{resource}\" in API group \"{group}\" {scope}"
        );
        let qualified = if group.is_empty() {
            req.resource.to_string()
        } else {
            format!("{}.{group}", req.resource)
        };
        // StatusDetails leaves out an empty group and name (`omitempty`).
        let mut details = json!({"kind": req.resource});
        if !group.is_empty() {
            details["group"] = json!(group);
        }
        let object = match req.name.filter(|n| !n.is_empty()) {
            Some(n) => {
                details["name"] = json!(n);
                format!("{qualified} \"{n}\"")
            }
            None => qualified,
        };
        Self::new(
            403,
            "Forbidden",
            format!("{object} is forbidden: {why}"),
            details,
        )
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message, Value::Null)
    }

    pub fn unprocessable(message: String) -> Self {
        Self::new(422, "Invalid", message, Value::Null)
    }

    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message, Value::Null)
    }

    /// 415 for a patch type the resource does not take (strategic merge on a custom resource).
    pub fn unsupported_patch(accepted: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {accepted}"
            ),
            Value::Null,
        )
    }

    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got {content_type:?})"
            ),
            Value::Null,
        )
    }

    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message, Value::Null)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message, Value::Null)
    }

    /// The `Status` object for the response body or an in-band watch ERROR event.
    pub fn to_status(&self) -> Value {
        let mut s = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.message, "reason": self.reason, "code": self.code});
        if let Some(token) = &self.list_continue {
            s["metadata"]["continue"] = json!(token);
        }
        if !self.details.is_null() {
            s["details"] = self.details.clone();
        }
        s
    }
}
