//! What the kubelet may know of the objects pods refer to: Secrets' and ConfigMaps' names and
//! key names (never a Secret's values), and each claim's bound volume and access modes. Kept up
//! to date from the store's change feed by the controllers' cache.

use std::collections::HashMap;

use serde_json::Value;

/// Key names of one Secret or ConfigMap, sorted.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Keys {
    /// `data` (and, for a Secret the API server has not folded yet, `stringData`).
    pub data: Box<[Box<str>]>,
    /// A ConfigMap's `binaryData`.
    pub binary: Box<[Box<str>]>,
}

impl Keys {
    fn of(obj: &Value, fields: &[&str]) -> Box<[Box<str>]> {
        let mut keys: Vec<Box<str>> = fields
            .iter()
            .filter_map(|f| obj.get(*f).and_then(Value::as_object))
            .flat_map(|m| m.keys().map(|k| Box::from(k.as_str())))
            .collect();
        keys.sort();
        keys.dedup();
        keys.into_boxed_slice()
    }

    pub fn has_data(&self, key: &str) -> bool {
        self.data.binary_search_by(|k| (**k).cmp(key)).is_ok()
    }

    pub fn has_binary(&self, key: &str) -> bool {
        self.binary.binary_search_by(|k| (**k).cmp(key)).is_ok()
    }
}

/// A PersistentVolumeClaim as the attach/detach controller sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Claim {
    /// `spec.volumeName` once bound (the PV's name).
    pub volume: Option<String>,
    /// Whether its access modes allow one node only (`ReadWriteOnce`/`ReadWriteOncePod`).
    pub one_node: bool,
}

/// Which kind of object a reference names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ObjKind {
    Secret,
    ConfigMap,
}

type ByNamespace<T> = HashMap<String, HashMap<String, T>>;

#[derive(Default)]
pub(crate) struct RefObjects {
    secrets: ByNamespace<Keys>,
    config_maps: ByNamespace<Keys>,
    claims: ByNamespace<Claim>,
}

impl RefObjects {
    pub fn keys(&self, kind: ObjKind, ns: &str, name: &str) -> Option<&Keys> {
        let map = match kind {
            ObjKind::Secret => &self.secrets,
            ObjKind::ConfigMap => &self.config_maps,
        };
        map.get(ns).and_then(|m| m.get(name))
    }

    pub fn claim(&self, ns: &str, name: &str) -> Option<&Claim> {
        self.claims.get(ns).and_then(|m| m.get(name))
    }

    /// Records a Secret, ConfigMap or claim written or deleted (`kind` is the object's
    /// `kind`-like tag: "Secret", "ConfigMap" or "PersistentVolumeClaim"). Returns the
    /// namespace when a Secret or ConfigMap changed (pods waiting on one there look again).
    pub fn apply(&mut self, kind: &str, obj: &Value, deleted: bool) -> Option<String> {
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("");
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        match kind {
            "Secret" => {
                let keys = Keys {
                    data: Keys::of(obj, &["data", "stringData"]),
                    binary: Box::default(),
                };
                put(&mut self.secrets, ns, name, (!deleted).then_some(keys));
            }
            "ConfigMap" => {
                let keys = Keys {
                    data: Keys::of(obj, &["data"]),
                    binary: Keys::of(obj, &["binaryData"]),
                };
                put(&mut self.config_maps, ns, name, (!deleted).then_some(keys));
            }
            "PersistentVolumeClaim" => {
                let claim = Claim {
                    volume: obj
                        .pointer("/spec/volumeName")
                        .and_then(Value::as_str)
                        .filter(|v| !v.is_empty())
                        .map(String::from),
                    one_node: one_node(obj.pointer("/spec/accessModes")),
                };
                put(&mut self.claims, ns, name, (!deleted).then_some(claim));
                return None;
            }
            _ => return None,
        }
        Some(ns.to_string())
    }
}

/// The attach/detach controller's `isMultiAttachAllowed`, negated: any one-node mode in the
/// list forbids a second node; no modes at all allow it (the attacher would decide).
fn one_node(modes: Option<&Value>) -> bool {
    modes.and_then(Value::as_array).is_some_and(|m| {
        m.iter()
            .any(|x| x == "ReadWriteOnce" || x == "ReadWriteOncePod")
    })
}

fn put<T>(map: &mut ByNamespace<T>, ns: &str, name: &str, value: Option<T>) {
    match value {
        Some(v) => {
            map.entry(ns.to_string())
                .or_default()
                .insert(name.to_string(), v);
        }
        None => {
            if let Some(m) = map.get_mut(ns) {
                m.remove(name);
                if m.is_empty() {
                    map.remove(ns);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_key_names_are_kept_and_deletes_forget() {
        let mut objs = RefObjects::default();
        let secret = json!({"metadata": {"namespace": "a", "name": "s"},
            "data": {"password": "c2VjcmV0"}, "stringData": {"token": "plain"}});
        assert_eq!(objs.apply("Secret", &secret, false).as_deref(), Some("a"));
        let keys = objs.keys(ObjKind::Secret, "a", "s").expect("kept");
        assert!(keys.has_data("password") && keys.has_data("token"));
        assert!(!keys.has_data("c2VjcmV0") && !keys.has_data("plain"));
        assert!(!format!("{keys:?}").contains("c2VjcmV0"));
        assert!(objs.keys(ObjKind::ConfigMap, "a", "s").is_none());
        objs.apply("Secret", &secret, true);
        assert!(objs.keys(ObjKind::Secret, "a", "s").is_none());
    }

    #[test]
    fn config_map_binary_keys_are_apart_and_claims_know_their_modes() {
        let mut objs = RefObjects::default();
        let cm = json!({"metadata": {"namespace": "a", "name": "c"},
            "data": {"x": "1"}, "binaryData": {"b": "AA=="}});
        objs.apply("ConfigMap", &cm, false);
        let keys = objs.keys(ObjKind::ConfigMap, "a", "c").expect("kept");
        assert!(keys.has_data("x") && !keys.has_data("b") && keys.has_binary("b"));
        let pvc = json!({"metadata": {"namespace": "a", "name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": "pvc-1"}});
        assert_eq!(objs.apply("PersistentVolumeClaim", &pvc, false), None);
        let claim = objs.claim("a", "data").expect("kept");
        assert_eq!(claim.volume.as_deref(), Some("pvc-1"));
        assert!(claim.one_node);
        let rwx = json!({"metadata": {"namespace": "a", "name": "shared"},
            "spec": {"accessModes": ["ReadWriteMany"]}});
        objs.apply("PersistentVolumeClaim", &rwx, false);
        let shared = objs.claim("a", "shared").expect("kept");
        assert!(!shared.one_node && shared.volume.is_none());
    }
}
