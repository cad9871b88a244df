//! The API server validation that matters to a deploy: fields that may not change after
//! create. Messages follow the API server's wording.

use serde_json::Value;

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// `metadata.name` as the API server checks it for `kind`: RBAC objects allow any path
/// segment (`system:metrics-server`), Namespaces are RFC 1123 labels, Services DNS-1035
/// labels, everything else an RFC 1123 subdomain. The message is the server's cause.
pub fn name(kind: &str, name: &str) -> Result<(), String> {
    let invalid = |why: &str| Err(format!("metadata.name: Invalid value: \"{name}\": {why}"));
    match kind {
        "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding" => {
            if name == "." || name == ".." {
                return invalid(&format!("may not be '{name}'"));
            }
            if let Some(c) = ["/", "%"].iter().find(|c| name.contains(*c)) {
                return invalid(&format!("may not contain '{c}'"));
            }
            Ok(())
        }
        "Namespace" if !is_label(name) => invalid(LABEL_MSG),
        "Service" if !is_label(name) || !name.as_bytes()[0].is_ascii_lowercase() => {
            invalid(DNS1035_MSG)
        }
        _ if name.len() > 253 || !name.split('.').all(is_label) => invalid(SUBDOMAIN_MSG),
        _ => Ok(()),
    }
}

/// The body's `apiVersion`/`kind`, when set, must be the URL's (the server answers 400).
pub fn type_meta(api_version: &str, kind: &str, body: &Value) -> Result<(), String> {
    let field = |f: &str| {
        body.get(f)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    if let Some(v) = field("apiVersion")
        && v != api_version
    {
        return Err(format!(
            "the API version in the data ({v}) does not match the expected API version ({api_version})"
        ));
    }
    if let Some(k) = field("kind")
        && k != kind
    {
        let version = api_version.rsplit('/').next().unwrap_or(api_version);
        return Err(format!(
            "{k} in version \"{version}\" cannot be handled as a {kind}: the kind in the data ({k}) does not match the expected kind ({kind})"
        ));
    }
    Ok(())
}

pub fn on_create(kind: &str, obj: &Value) -> Result<(), String> {
    match kind {
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" => {
            if obj.pointer("/spec/selector").is_none() {
                return Err("spec.selector: Required value".into());
            }
            if obj.pointer("/spec/template").is_none() {
                return Err("spec.template: Required value".into());
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

pub fn on_update(kind: &str, old: &Value, new: &Value) -> Result<(), String> {
    let changed = |p: &str| old.pointer(p) != new.pointer(p);
    let mut causes = Vec::new();
    match kind {
        "Deployment" | "DaemonSet" | "ReplicaSet" if changed("/spec/selector") => {
            causes.push(format!(
                "spec.selector: Invalid value: {}: field is immutable",
                compact(new.pointer("/spec/selector"))
            ));
        }
        "StatefulSet" => {
            const MUTABLE: &[&str] = &[
                "replicas",
                "ordinals",
                "template",
                "updateStrategy",
                "persistentVolumeClaimRetentionPolicy",
                "minReadySeconds",
                "revisionHistoryLimit",
            ];
            let strip = |v: Option<&Value>| -> Value {
                let mut v = v.cloned().unwrap_or(Value::Null);
                if let Some(o) = v.as_object_mut() {
                    o.retain(|k, _| !MUTABLE.contains(&k.as_str()));
                }
                v
            };
            if strip(old.get("spec")) != strip(new.get("spec")) {
                causes.push("spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden".into());
            }
        }
        "Job" => {
            if changed("/spec/selector") {
                causes.push(format!(
                    "spec.selector: Invalid value: {}: field is immutable",
                    compact(new.pointer("/spec/selector"))
                ));
            }
            if changed("/spec/template") {
                causes.push(format!(
                    "spec.template: Invalid value: {}: field is immutable",
                    compact(new.pointer("/spec/template"))
                ));
            }
            if changed("/spec/completions") {
                causes.push("spec.completions: Invalid value: field is immutable".into());
            }
        }
        _ => {}
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(causes.join("; "))
    }
}

fn compact(v: Option<&Value>) -> String {
    let s = v.map(|v| v.to_string()).unwrap_or_else(|| "null".into());
    if s.len() > 200 {
        format!("{}…", &s[..s.floor_char_boundary(200)])
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_follow_the_rule_of_their_kind() {
        assert!(name("ConfigMap", "a.b-c").is_ok());
        let err = name("ConfigMap", "Bad_Name").unwrap_err();
        assert!(
            err.starts_with(
                "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"
            ),
            "{err}"
        );
        assert!(name("ConfigMap", &"a".repeat(254)).is_err());
        assert!(name("ClusterRole", "system:metrics-server").is_ok());
        assert!(name("ClusterRole", "a/b").is_err());
        assert!(name("Namespace", "a.b").is_err(), "a namespace is a label");
        assert!(
            name("Service", "1abc").is_err(),
            "a service starts with a letter"
        );
        assert!(name("Pod", "1abc").is_ok());
    }

    #[test]
    fn type_meta_must_match_the_url() {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap"});
        assert!(type_meta("v1", "ConfigMap", &body).is_ok());
        assert!(
            type_meta("v1", "Secret", &body)
                .unwrap_err()
                .contains("cannot be handled as a Secret")
        );
        assert!(
            type_meta("apps/v1", "ConfigMap", &body)
                .unwrap_err()
                .contains("(apps/v1)")
        );
        assert!(
            type_meta("v1", "Secret", &json!({})).is_ok(),
            "unset is taken from the URL"
        );
    }

    #[test]
    fn statefulset_volume_claims_are_immutable_but_template_is_not() {
        let old = json!({"spec": {"replicas": 1, "serviceName": "db", "template": {"a": 1},
            "volumeClaimTemplates": [{"spec": {"resources": {"requests": {"storage": "1Gi"}}}}]}});
        let mut new = old.clone();
        new["spec"]["template"] = json!({"a": 2});
        new["spec"]["replicas"] = json!(3);
        assert!(on_update("StatefulSet", &old, &new).is_ok());
        new["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] =
            json!("2Gi");
        let err = on_update("StatefulSet", &old, &new).unwrap_err();
        assert!(err.contains("Forbidden"), "{err}");
        let mut renamed = old.clone();
        renamed["spec"]["serviceName"] = json!("db2");
        assert!(on_update("StatefulSet", &old, &renamed).is_err());
    }

    #[test]
    fn job_template_and_deployment_selector_are_immutable() {
        let old = json!({"spec": {"selector": {"a": 1}, "template": {"x": 1}}});
        let mut new = old.clone();
        new["spec"]["template"] = json!({"x": 2});
        assert!(
            on_update("Job", &old, &new)
                .unwrap_err()
                .contains("spec.template")
        );
        assert!(on_update("Deployment", &old, &new).is_ok());
        new["spec"]["selector"] = json!({"a": 2});
        assert!(
            on_update("Deployment", &old, &new)
                .unwrap_err()
                .contains("spec.selector")
        );
    }
}
