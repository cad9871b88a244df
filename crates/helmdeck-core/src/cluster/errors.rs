//! A kube-rs error in one line for the operator. The client's own `Display` of an API answer
//! says its message three times (`ApiError: MSG: REASON (Status { message: MSG, … })`, then the
//! `Status` source again); here it is said once: a 403 as what RBAC denied (verb, resource,
//! namespace, user), any other answer as its message and code. Cluster text, made inert.

use kube::core::Status;

use crate::text;

/// One line for `error`: [`api_status`] for an answer of the API server, else the client's
/// own words.
pub fn describe(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => api_status(status),
        other => text::plain(&other.to_string()),
    }
}

/// An API server's error answer: a 403 as [`denied`] says it, else `MESSAGE (CODE REASON)`.
pub fn api_status(status: &Status) -> String {
    if status.code == 403 {
        return denied(&status.message);
    }
    let message = text::plain(status.message.trim());
    let reason = text::plain(status.reason.trim());
    match (message.is_empty(), reason.is_empty()) {
        (true, true) => format!("the API server answered {}", status.code),
        (true, false) => format!("{} {reason}", status.code),
        (false, true) => format!("{message} ({})", status.code),
        (false, false) => format!("{message} ({} {reason})", status.code),
    }
}

/// A 403 from RBAC, whose message reads `secrets is forbidden: User "U" cannot list resource
/// "secrets" in API group "" in the namespace "apps"` (or `… at the cluster scope`):
/// `403 Forbidden: user "U" may not list secrets in namespace apps`. A message of another
/// shape (an admission plugin's) is kept whole after `403 Forbidden: `.
pub fn denied(message: &str) -> String {
    let quoted = |after: &str| -> Option<&str> {
        let rest = &message[message.find(after)? + after.len()..];
        rest.split('"').next()
    };
    let verb = message
        .find(" cannot ")
        .map(|i| &message[i + " cannot ".len()..])
        .and_then(|rest| rest.split_whitespace().next());
    let (Some(verb), Some(resource)) = (verb, quoted("resource \"")) else {
        return format!("403 Forbidden: {}", text::plain(message.trim()));
    };
    let resource = match quoted("in API group \"") {
        Some(group) if !group.is_empty() => format!("{resource}.{group}"),
        _ => resource.to_string(),
    };
    let user = quoted("User \"").map_or(String::new(), |u| format!("user \"{u}\" "));
    let scope = match quoted("in the namespace \"") {
        Some(ns) => format!(" in namespace {ns}"),
        None if message.contains("at the cluster scope") => " at the cluster scope".to_string(),
        None => String::new(),
    };
    text::plain(&format!(
        "403 Forbidden: {user}may not {verb} {resource}{scope}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_rbac_denial_names_verb_resource_namespace_and_user_once() {
        let said = denied(
            "secrets is forbidden: User \"alice@example.com\" cannot list resource \"secrets\" in API group \"\" in the namespace \"apps\"",
        );
        assert_eq!(
            said,
            "403 Forbidden: user \"alice@example.com\" may not list secrets in namespace apps"
        );
        let named = denied(
            "deployments.apps \"web\" is forbidden: User \"system:serviceaccount:ci:deployer\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"prod\": RBAC: role.rbac.authorization.k8s.io \"x\" not found",
        );
        assert_eq!(
            named,
            "403 Forbidden: user \"system:serviceaccount:ci:deployer\" may not get deployments.apps in namespace prod"
        );
        let cluster = denied(
            "namespaces is forbidden: User \"bob\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope",
        );
        assert_eq!(
            cluster,
            "403 Forbidden: user \"bob\" may not list namespaces at the cluster scope"
        );
    }

    #[test]
    fn another_403_or_answer_is_its_message_once_and_inert() {
        assert_eq!(
            denied("pods \"q\" is forbidden: exceeded quota\u{1b}[2J"),
            "403 Forbidden: pods \"q\" is forbidden: exceeded quota"
        );
        let status = Status {
            code: 500,
            message: "etcdserver: request timed out".into(),
            reason: "InternalError".into(),
            ..Status::default()
        };
        assert_eq!(
            api_status(&status),
            "etcdserver: request timed out (500 InternalError)"
        );
        let error = kube::Error::Api(Box::new(Status {
            code: 403,
            message: "secrets is forbidden: User \"u\" cannot get resource \"secrets\" in API group \"\" in the namespace \"a\"".into(),
            reason: "Forbidden".into(),
            ..Status::default()
        }));
        let line = describe(&error);
        assert_eq!(
            line,
            "403 Forbidden: user \"u\" may not get secrets in namespace a"
        );
        assert!(!line.contains("Status"), "{line}");
    }
}
