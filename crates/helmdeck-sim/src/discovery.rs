//! Discovery documents (`/version`, `/api`, `/apis`, `/api/v1`, `/apis/G/V`) and the OpenAPI v3
//! documents that make kubectl and helm leave field validation to the server, for every kind
//! the store serves (built-in and custom).
//!
//! The documents carry, for each kind, a PATCH operation with an operation-level
//! `fieldValidation` query parameter: that is what client-go's validator looks for before it
//! falls back to downloading the protobuf OpenAPI v2 document (see fake-apiserver notes §2).
//! A custom kind's schema (its CRD's `openAPIV3Schema`) is included under `components`.

use serde_json::{Value, json};

use super::Store;
use super::resources::{self, ResourceType, group_versions};

fn types_of(store: &Store, group: &str, version: &str) -> Vec<(usize, &'static ResourceType)> {
    store
        .served()
        .into_iter()
        .map(|id| (id, resources::get(id)))
        .filter(|(_, r)| r.group == group && r.version == version)
        .collect()
}

pub fn version() -> Value {
    json!({"major": "1", "minor": "35", "gitVersion": "v1.35.0-helmdeck-sim", "gitCommit": "0000000",
        "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.25.0",
        "compiler": "gc", "platform": "linux/amd64"})
}

pub fn core_versions() -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
}

/// `/apis`: one entry per group, its versions in serving order (the first is preferred).
pub fn group_list(store: &Store) -> Value {
    let mut groups: Vec<(&str, Vec<Value>)> = Vec::new();
    for (g, v) in group_versions(&store.served()) {
        if g.is_empty() {
            continue;
        }
        let gv = json!({"groupVersion": format!("{g}/{v}"), "version": v});
        match groups.iter_mut().find(|(name, _)| *name == g) {
            Some((_, versions)) => versions.push(gv),
            None => groups.push((g, vec![gv])),
        }
    }
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(g, versions)| {
            json!({"name": g, "preferredVersion": versions[0].clone(), "versions": versions})
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
pub fn resource_list(store: &Store, group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for (_, r) in types_of(store, group, version) {
        let mut entry = json!({"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
            "kind": r.kind, "verbs": VERBS});
        if !r.short_names.is_empty() {
            entry["shortNames"] = json!(r.short_names);
        }
        if !r.categories.is_empty() {
            entry["categories"] = json!(r.categories);
        }
        resources.push(entry);
        for sub in r.subresources {
            let (kind, verbs): (&str, &[&str]) = match *sub {
                "log" => ("Pod", &["get"]),
                "scale" => ("Scale", &["get", "patch", "update"]),
                "approval" => (r.kind, &["get", "patch", "update"]),
                _ => (r.kind, &["get", "patch", "update"]),
            };
            let mut entry = json!({"name": format!("{}/{sub}", r.plural), "singularName": "",
                "namespaced": r.namespaced, "kind": kind, "verbs": verbs});
            if *sub == "scale" {
                // Scale lives in autoscaling/v1 whatever the parent's group: client-go's scale
                // client reads the group and version here and refuses `apps/v1 Scale`.
                entry["group"] = json!("autoscaling");
                entry["version"] = json!("v1");
            }
            resources.push(entry);
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

/// `/openapi/v3`: one entry per group-version. Clients cache each document by its hash, so a
/// custom group-version's hash changes with the CRD behind it.
pub fn openapi_root(store: &Store) -> Value {
    let mut paths = serde_json::Map::new();
    for (g, v) in group_versions(&store.served()) {
        let p = gv_path(g, v);
        let hash = types_of(store, g, v)
            .iter()
            .filter_map(|(id, _)| store.schema(*id))
            .fold(1u64, |h, schema| {
                schema
                    .to_string()
                    .bytes()
                    .fold(h, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
            });
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash=helmdeck-sim-{hash:x}")}),
        );
    }
    json!({"paths": paths})
}

/// `/openapi/v3/api/v1`, `/openapi/v3/apis/G/V`: PATCH operations with `fieldValidation`.
pub fn openapi_group_version(store: &Store, path: &str) -> Option<Value> {
    let (group, version) = match path.split('/').collect::<Vec<_>>()[..] {
        ["api", v] => ("", v),
        ["apis", g, v] => (g, v),
        _ => return None,
    };
    let mut paths = serde_json::Map::new();
    let mut schemas = serde_json::Map::new();
    for (id, r) in types_of(store, group, version) {
        if let Some(mut schema) = store.schema(id) {
            schema["x-kubernetes-group-version-kind"] =
                json!([{"group": group, "version": version, "kind": r.kind}]);
            let reversed: Vec<&str> = r.group.split('.').rev().collect();
            schemas.insert(
                format!("{}.{version}.{}", reversed.join("."), r.kind),
                schema,
            );
        }
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
        "paths": paths, "components": {"schemas": schemas}}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_group_version_in_apis_is_served() {
        let store = Store::new();
        let list = group_list(&store);
        for g in list["groups"].as_array().unwrap() {
            let gv = g["preferredVersion"]["groupVersion"].as_str().unwrap();
            let (group, version) = gv.split_once('/').unwrap();
            assert!(resource_list(&store, group, version).is_some(), "{gv}");
            assert!(
                openapi_group_version(&store, &format!("apis/{gv}")).is_some(),
                "{gv}"
            );
        }
        assert!(resource_list(&store, "", "v1").is_some());
        assert!(resource_list(&store, "nope", "v1").is_none());
        let root = openapi_root(&store);
        assert_eq!(
            root["paths"].as_object().unwrap().len(),
            list["groups"].as_array().unwrap().len() + 1,
            "one OpenAPI document per group-version, core included"
        );
    }

    #[test]
    fn categories_come_from_the_table() {
        let store = Store::new();
        let apps = resource_list(&store, "apps", "v1").unwrap();
        let deploy = apps["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "deployments")
            .unwrap();
        assert_eq!(deploy["categories"], json!(["all"]));
        let rbac = resource_list(&store, "rbac.authorization.k8s.io", "v1").unwrap();
        let names: Vec<&str> = rbac["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"clusterroles") && names.contains(&"clusterrolebindings"));
    }

    #[test]
    fn openapi_patch_ops_declare_field_validation_at_operation_level() {
        let doc = openapi_group_version(&Store::new(), "apis/apps/v1").unwrap();
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
