//! Discovery documents (`/version`, `/api`, `/apis`, `/api/v1`, `/apis/G/V`) and the OpenAPI v3
//! stubs that make kubectl and helm leave field validation to the server.
//!
//! The stubs carry, for each kind, a PATCH operation with an operation-level `fieldValidation`
//! query parameter: that is what client-go's validator looks for before it falls back to
//! downloading the protobuf OpenAPI v2 document (see fake-apiserver notes §2).

use serde_json::{Value, json};

use super::resources::{RESOURCES, group_versions};

pub fn version() -> Value {
    json!({"major": "1", "minor": "35", "gitVersion": "v1.35.0-helmdeck-sim", "gitCommit": "0000000",
        "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.25.0",
        "compiler": "gc", "platform": "linux/amd64"})
}

pub fn core_versions() -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
}

pub fn group_list() -> Value {
    let groups: Vec<Value> = group_versions()
        .into_iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, v)| {
            let gv = json!({"groupVersion": format!("{g}/{v}"), "version": v});
            json!({"name": g, "versions": [gv.clone()], "preferredVersion": gv})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// `APIResourceList` for one group-version; `None` if it is not served.
pub fn resource_list(group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for r in RESOURCES
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        let mut entry = json!({"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
            "kind": r.kind, "verbs": VERBS});
        if !r.short_names.is_empty() {
            entry["shortNames"] = json!(r.short_names);
        }
        if matches!(
            r.kind,
            "Deployment"
                | "StatefulSet"
                | "DaemonSet"
                | "Pod"
                | "Service"
                | "Job"
                | "ReplicaSet"
                | "CronJob"
        ) {
            entry["categories"] = json!(["all"]);
        }
        resources.push(entry);
        for sub in r.subresources {
            let (kind, verbs): (&str, &[&str]) = match *sub {
                "log" => ("Pod", &["get"]),
                "scale" => ("Scale", &["get", "patch", "update"]),
                _ => (r.kind, &["get", "patch", "update"]),
            };
            resources.push(
                json!({"name": format!("{}/{sub}", r.plural), "singularName": "",
                "namespaced": r.namespaced, "kind": kind, "verbs": verbs}),
            );
        }
    }
    if resources.is_empty() {
        return None;
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: one entry per group-version.
pub fn openapi_root() -> Value {
    let mut paths = serde_json::Map::new();
    for (g, v) in group_versions() {
        let p = gv_path(g, v);
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash=helmdeck-sim-1")}),
        );
    }
    json!({"paths": paths})
}

/// `/openapi/v3/api/v1`, `/openapi/v3/apis/G/V`: PATCH operations with `fieldValidation`.
pub fn openapi_group_version(path: &str) -> Option<Value> {
    let (group, version) = match path.split('/').collect::<Vec<_>>()[..] {
        ["api", v] => ("", v),
        ["apis", g, v] => (g, v),
        _ => return None,
    };
    let mut paths = serde_json::Map::new();
    for r in RESOURCES
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        let base = format!("/{}", gv_path(group, version));
        let item = if r.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}/{{name}}", r.plural)
        } else {
            format!("{base}/{}/{{name}}", r.plural)
        };
        let op = json!({
            "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": r.kind},
            "parameters": [
                {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
                {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
                {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            ],
            "responses": {"200": {"description": "OK"}}
        });
        paths.insert(item, json!({"patch": op.clone(), "put": op}));
    }
    if paths.is_empty() {
        return None;
    }
    Some(
        json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.35.0"},
        "paths": paths, "components": {"schemas": {}}}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_group_version_in_apis_is_served() {
        let list = group_list();
        for g in list["groups"].as_array().unwrap() {
            let gv = g["preferredVersion"]["groupVersion"].as_str().unwrap();
            let (group, version) = gv.split_once('/').unwrap();
            assert!(resource_list(group, version).is_some(), "{gv}");
            assert!(
                openapi_group_version(&format!("apis/{gv}")).is_some(),
                "{gv}"
            );
        }
        assert!(resource_list("", "v1").is_some());
        assert!(resource_list("nope", "v1").is_none());
    }

    #[test]
    fn openapi_patch_ops_declare_field_validation_at_operation_level() {
        let doc = openapi_group_version("apis/apps/v1").unwrap();
        let op = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert_eq!(op["x-kubernetes-group-version-kind"]["kind"], "Deployment");
        assert!(
            op["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation")
        );
    }
}
