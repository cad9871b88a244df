//! How the store keeps an object: its compact JSON bytes plus a small index of what label and
//! field selectors read, so a LIST or WATCH filters and answers without parsing. A parsed
//! `serde_json::Value` costs ~5× its JSON (every map a B-tree node): 10,000 pods and their
//! ~60,000 Events held that way were most of the simulator's memory (docs/benchmarks.md).

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::selector::{Selector, pointed_text};

/// The field paths the index keeps: those field selectors ask for (kubectl, helm, kube-rs
/// clients, the controllers). Any other path is answered by parsing the object.
const INDEXED_FIELDS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "spec.nodeName",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "status.phase",
    "status.podIP",
    "type",
    "reason",
    "involvedObject.kind",
    "involvedObject.name",
    "involvedObject.namespace",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.fieldPath",
];
/// The same paths as JSON pointers (every write indexes its object: no formatting there).
const INDEXED_POINTERS: &[&str] = &[
    "/metadata/name",
    "/metadata/namespace",
    "/spec/nodeName",
    "/spec/schedulerName",
    "/spec/serviceAccountName",
    "/status/phase",
    "/status/podIP",
    "/type",
    "/reason",
    "/involvedObject/kind",
    "/involvedObject/name",
    "/involvedObject/namespace",
    "/involvedObject/uid",
    "/involvedObject/apiVersion",
    "/involvedObject/fieldPath",
];

/// What selectors and the garbage collector read of one object version.
#[derive(Debug, Default)]
pub struct Index {
    labels: Box<[(Box<str>, Box<str>)]>,
    /// Non-empty indexed fields: (position in [`INDEXED_FIELDS`], value as a selector reads it).
    fields: Box<[(u8, Box<str>)]>,
    pub uid: Box<str>,
    /// The uids the object's ownerReferences name.
    pub owners: Box<[Box<str>]>,
}

impl Index {
    fn of(obj: &Value) -> Index {
        let labels = obj
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.as_str().into(), v.into())))
                    .collect()
            })
            .unwrap_or_default();
        let fields = INDEXED_POINTERS
            .iter()
            .enumerate()
            .filter_map(|(i, pointer)| {
                let text = pointed_text(obj.pointer(pointer));
                (!text.is_empty()).then(|| (i as u8, text.into_boxed_str()))
            })
            .collect();
        let owners = obj
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|o| o["uid"].as_str().map(Into::into))
            .collect();
        Index {
            labels,
            fields,
            uid: obj
                .pointer("/metadata/uid")
                .and_then(Value::as_str)
                .unwrap_or("")
                .into(),
            owners,
        }
    }

    fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| &**v)
    }

    /// An indexed field's value; `None` when the path is not indexed.
    fn field(&self, path: &str) -> Option<&str> {
        let at = INDEXED_FIELDS.iter().position(|p| *p == path)? as u8;
        Some(
            self.fields
                .iter()
                .find(|(i, _)| *i == at)
                .map_or("", |(_, v)| &**v),
        )
    }

    pub fn namespace(&self) -> &str {
        self.field("metadata.namespace").unwrap_or("")
    }

    pub fn name(&self) -> &str {
        self.field("metadata.name").unwrap_or("")
    }

    /// Whether the selectors match, from the index alone; `None` when a field selector asks
    /// for a path the index does not keep.
    fn matches(&self, labels: &Selector, fields: &Selector) -> Option<bool> {
        let fields_ok = fields.matches_lookup(|path| self.field(path).map(|v| Some(v.into())))?;
        Some(fields_ok && labels.matches_lookup(|k| Some(self.label(k).map(String::from)))?)
    }
}

/// One stored object version: its compact JSON and its index. Cloning shares both.
#[derive(Debug, Clone)]
pub struct Stored {
    pub rv: u64,
    pub bytes: Bytes,
    pub idx: Arc<Index>,
}

impl Stored {
    /// Encodes an object whose `metadata.resourceVersion` is `rv`.
    pub fn encode(obj: &Value, rv: u64) -> Stored {
        // Serializing a Value cannot fail.
        Stored::from_json(serde_json::to_vec(obj).unwrap_or_default(), obj, rv)
    }

    /// An object already serialized as `json`.
    pub fn from_json(json: Vec<u8>, obj: &Value, rv: u64) -> Stored {
        Stored {
            rv,
            // Boxed first: a Vec's spare capacity (up to half of it, from doubling) would
            // stay allocated behind the Bytes.
            bytes: Bytes::from(json.into_boxed_slice()),
            idx: Arc::new(Index::of(obj)),
        }
    }

    /// Whether `json`, an object stamped with `rv`, is this object but for its rv.
    /// `"resourceVersion":"N"` can only be a key and its value (quotes inside JSON strings
    /// are escaped), and an rv is never used twice, so the first such pair is the object's
    /// own; if another object's rv matched first the answer is "changed", a harmless write.
    pub fn same_but_rv(&self, json: &[u8], rv: u64) -> bool {
        let key = |rv: u64| format!("\"resourceVersion\":\"{rv}\"");
        let (mine, theirs) = (key(self.rv), key(rv));
        let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
        match (
            find(&self.bytes, mine.as_bytes()),
            find(json, theirs.as_bytes()),
        ) {
            (Some(i), Some(j)) => {
                self.bytes[..i] == json[..j]
                    && self.bytes[i + mine.len()..] == json[j + theirs.len()..]
            }
            _ => self.bytes[..] == json[..],
        }
    }

    /// The object, parsed.
    pub fn value(&self) -> Value {
        // The bytes were serialized from a Value by `encode`: they parse.
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }

    /// Whether label and field selectors match: from the index, or by parsing when a field
    /// selector reads a path the index does not keep.
    pub fn selected(&self, labels: &Selector, fields: &Selector) -> bool {
        self.idx.matches(labels, fields).unwrap_or_else(|| {
            let obj = self.value();
            labels.matches_labels(&obj) && fields.matches_fields(&obj)
        })
    }
}

/// What the controllers read of a bound pod: its metadata, where it runs, its phase, and the
/// affinity terms other pods are placed against (the feed carries a bound pod so). A whole pod parsed costs ~20 KB (every map
/// a B-tree node); 10,000 of them were most of the simulator's memory.
pub fn slim_pod(pod: &Value) -> Value {
    let mut spec = Map::new();
    for key in ["nodeName", "affinity"] {
        if let Some(v) = pod["spec"].get(key) {
            spec.insert(key.into(), v.clone());
        }
    }
    let mut out = json!({"metadata": pod["metadata"], "spec": spec});
    if let Some(phase) = pod.pointer("/status/phase") {
        out["status"] = json!({"phase": phase});
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::resources::ids;
    use crate::store::Store;

    const LABELS: &[&str] = &[
        "",
        "app=web",
        "app!=web",
        "app in (web,db)",
        "app notin (db)",
        "tier",
        "!tier",
        "app=web,tier=front",
        "owner=helm",
    ];
    /// Indexed paths, and some the index does not keep (read by parsing).
    const FIELDS: &[&str] = &[
        "",
        "metadata.name=p1",
        "metadata.namespace=apps",
        "metadata.namespace!=apps",
        "spec.nodeName=node-1",
        "spec.nodeName=",
        "spec.nodeName!=",
        "status.phase!=Running",
        "status.phase=Pending,spec.nodeName=node-2",
        "involvedObject.name=p1",
        "spec.replicas=3",
        "metadata.labels.app=web",
    ];

    fn object(i: usize, picks: &[usize]) -> Value {
        let pick = |n: usize, of: &[Value]| of[picks[n] % of.len()].clone();
        let mut labels = serde_json::Map::new();
        for (n, key) in ["app", "tier", "owner"].iter().enumerate() {
            let v = pick(
                n,
                &[
                    Value::Null,
                    json!("web"),
                    json!("db"),
                    json!("front"),
                    json!(7),
                ],
            );
            if !v.is_null() {
                labels.insert((*key).into(), v);
            }
        }
        json!({"metadata": {"name": format!("p{i}"), "namespace": pick(3, &[json!("apps"), json!("other")]),
                "labels": labels},
            "spec": {"nodeName": pick(4, &[Value::Null, json!("node-1"), json!("node-2"), json!("")]),
                "replicas": pick(5, &[Value::Null, json!(3), json!("3")])},
            "status": {"phase": pick(6, &[Value::Null, json!("Running"), json!("Pending")])},
            "involvedObject": {"name": pick(7, &[Value::Null, json!("p1"), json!("p2")])}})
    }

    fn selectors() -> Vec<(Selector, Selector)> {
        let mut out = Vec::new();
        for l in LABELS {
            for f in FIELDS {
                out.push((
                    Selector::parse_labels(l).unwrap(),
                    Selector::parse_fields(f).unwrap(),
                ));
            }
        }
        out
    }

    #[test]
    fn a_version_that_differs_only_in_its_rv_is_the_same() {
        let event = |involved: &str, rv: u64, msg: &str| {
            json!({"involvedObject": {"resourceVersion": involved},
                "metadata": {"name": "e", "resourceVersion": rv.to_string()}, "message": msg})
        };
        let json = |v: &Value| serde_json::to_vec(v).unwrap();
        let stored = Stored::encode(&event("3", 7, "a"), 7);
        assert!(stored.same_but_rv(&json(&event("3", 9, "a")), 9));
        assert!(!stored.same_but_rv(&json(&event("3", 9, "b")), 9));
        assert!(!stored.same_but_rv(&json(&event("4", 9, "a")), 9));
        // Another object's rv equal to this one's: at worst a change is seen where none is.
        let stored = Stored::encode(&event("7", 7, "a"), 7);
        assert!(!stored.same_but_rv(&json(&event("7", 9, "b")), 9));
    }

    #[test]
    fn the_pointers_are_the_paths() {
        let pointers: Vec<String> = INDEXED_FIELDS
            .iter()
            .map(|p| format!("/{}", p.replace('.', "/")))
            .collect();
        assert_eq!(pointers, INDEXED_POINTERS);
    }

    proptest! {
        #[test]
        fn the_index_answers_every_selector_as_the_object_does(
            picks in proptest::collection::vec(0usize..8, 8),
            i in 0usize..3,
        ) {
            let obj = object(i, &picks);
            let stored = Stored::encode(&obj, 1);
            prop_assert_eq!(stored.value(), obj.clone());
            for (labels, fields) in selectors() {
                let scan = labels.matches_labels(&obj) && fields.matches_fields(&obj);
                prop_assert_eq!(stored.selected(&labels, &fields), scan, "{:?} {:?} on {}", labels, fields, obj);
            }
        }
    }

    #[test]
    fn a_selector_list_from_the_index_is_the_full_scans() {
        let s = Store::new();
        for ns in ["apps", "other"] {
            s.ensure(*ids::NAMESPACES, json!({"metadata": {"name": ns}}))
                .unwrap();
        }
        for i in 0..40 {
            let picks: Vec<usize> = (0..8).map(|n| (i * 7 + n * 3 + i / 5) % 8).collect();
            let obj = object(i, &picks);
            let ns = obj["metadata"]["namespace"].as_str().unwrap().to_string();
            s.create(*ids::CONFIGMAPS, Some(&ns), obj).unwrap();
        }
        let mut matched = 0;
        for ns in [None, Some("apps")] {
            for (labels, fields) in selectors() {
                let names = |items: Vec<Value>| -> Vec<String> {
                    items
                        .iter()
                        .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
                        .collect()
                };
                let (indexed, _) = s.list_stored(*ids::CONFIGMAPS, ns, &labels, &fields);
                let indexed = names(indexed.iter().map(Stored::value).collect());
                let (scanned, _) = s.list(*ids::CONFIGMAPS, ns, |o| {
                    labels.matches_labels(o) && fields.matches_fields(o)
                });
                let scanned = names(scanned.iter().map(|o| (**o).clone()).collect());
                assert_eq!(indexed, scanned, "{labels:?} {fields:?} in {ns:?}");
                matched += usize::from(!indexed.is_empty());
            }
        }
        // The table is no use if every selector matches nothing.
        assert!(matched > 50, "{matched}");
    }
}
