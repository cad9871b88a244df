//! The API server validation that matters to a deploy: fields that may not change after
//! create. Messages follow the API server's wording.

use serde_json::Value;

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
