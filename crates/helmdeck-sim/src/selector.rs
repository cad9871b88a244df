//! Label and field selectors, as the API server parses them from `labelSelector` and
//! `fieldSelector` query parameters.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

impl Requirement {
    fn key(&self) -> &str {
        match self {
            Requirement::Equals(k, _)
            | Requirement::NotEquals(k, _)
            | Requirement::In(k, _)
            | Requirement::NotIn(k, _)
            | Requirement::Exists(k)
            | Requirement::DoesNotExist(k) => k,
        }
    }

    fn matches(&self, lookup: impl Fn(&str) -> Option<String>) -> bool {
        match self {
            Requirement::Equals(k, v) => lookup(k).as_deref() == Some(v.as_str()),
            // As in Kubernetes: `a!=b` also matches objects without the key.
            Requirement::NotEquals(k, v) => lookup(k).as_deref() != Some(v.as_str()),
            Requirement::In(k, vs) => lookup(k).is_some_and(|x| vs.contains(&x)),
            Requirement::NotIn(k, vs) => lookup(k).is_none_or(|x| !vs.contains(&x)),
            Requirement::Exists(k) => lookup(k).is_some(),
            Requirement::DoesNotExist(k) => lookup(k).is_none(),
        }
    }
}

/// A parsed selector: every requirement must hold (AND). Empty matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selector {
    requirements: Vec<Requirement>,
}

/// Splits on commas that are not inside `( … )`.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn parse_set(key: &str, rest: &str, text: &str) -> Result<Vec<String>, String> {
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| {
            format!("unable to parse requirement: {text:?}: expected ( values ) after {key}")
        })?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

impl Selector {
    /// Parses a label selector (`a=b,c!=d,e in (x,y),f notin (z),g,!h`).
    pub fn parse_labels(text: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let req = if let Some(key) = part.strip_prefix('!') {
                Requirement::DoesNotExist(key.trim().to_string())
            } else if let Some((k, v)) = part.split_once("!=") {
                Requirement::NotEquals(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = part.split_once("==") {
                Requirement::Equals(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = part.split_once('=') {
                Requirement::Equals(k.trim().into(), v.trim().into())
            } else if let Some(i) = part.find(" notin ").or_else(|| part.find(" notin(")) {
                let key = part[..i].trim();
                Requirement::NotIn(key.into(), parse_set(key, &part[i + 6..], part)?)
            } else if let Some(i) = part.find(" in ").or_else(|| part.find(" in(")) {
                let key = part[..i].trim();
                Requirement::In(key.into(), parse_set(key, &part[i + 3..], part)?)
            } else {
                Requirement::Exists(part.to_string())
            };
            let key = match &req {
                Requirement::Equals(k, _)
                | Requirement::NotEquals(k, _)
                | Requirement::In(k, _)
                | Requirement::NotIn(k, _)
                | Requirement::Exists(k)
                | Requirement::DoesNotExist(k) => k,
            };
            if !valid_key(key) {
                return Err(format!(
                    "unable to parse requirement: invalid label key {key:?}"
                ));
            }
            requirements.push(req);
        }
        Ok(Selector { requirements })
    }

    /// Parses a field selector (`metadata.name=x,involvedObject.uid!=y`).
    pub fn parse_fields(text: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let req = if let Some((k, v)) = part.split_once("!=") {
                Requirement::NotEquals(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = part.split_once("==") {
                Requirement::Equals(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = part.split_once('=') {
                Requirement::Equals(k.trim().into(), v.trim().into())
            } else {
                return Err(format!("invalid selector: {part:?}; can't understand it"));
            };
            requirements.push(req);
        }
        Ok(Selector { requirements })
    }

    /// A selector from a Kubernetes `LabelSelector` object (`matchLabels` + `matchExpressions`).
    pub fn from_label_selector(sel: &Value) -> Self {
        let mut requirements = Vec::new();
        if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in labels {
                requirements.push(Requirement::Equals(
                    k.clone(),
                    v.as_str().unwrap_or("").into(),
                ));
            }
        }
        for expr in sel
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = expr["key"].as_str().unwrap_or("").to_string();
            let values: Vec<String> = expr["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(String::from))
                .collect();
            requirements.push(match expr["operator"].as_str().unwrap_or("") {
                "In" => Requirement::In(key, values),
                "NotIn" => Requirement::NotIn(key, values),
                "Exists" => Requirement::Exists(key),
                _ => Requirement::DoesNotExist(key),
            });
        }
        Selector { requirements }
    }

    /// The selector as the API server prints it (`labels.Selector.String()`): requirements
    /// sorted by key, set values sorted. The scale subresource hands this text to autoscalers.
    pub fn to_text(&self) -> String {
        let mut reqs: Vec<&Requirement> = self.requirements.iter().collect();
        reqs.sort_by(|a, b| a.key().cmp(b.key()));
        let set = |vs: &[String]| {
            let mut vs = vs.to_vec();
            vs.sort();
            vs.join(",")
        };
        reqs.iter()
            .map(|r| match r {
                Requirement::Equals(k, v) => format!("{k}={v}"),
                Requirement::NotEquals(k, v) => format!("{k}!={v}"),
                Requirement::In(k, vs) => format!("{k} in ({})", set(vs)),
                Requirement::NotIn(k, vs) => format!("{k} notin ({})", set(vs)),
                Requirement::Exists(k) => k.clone(),
                Requirement::DoesNotExist(k) => format!("!{k}"),
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Matches against an object's `metadata.labels`.
    pub fn matches_labels(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels");
        self.requirements.iter().all(|r| {
            r.matches(|k| {
                labels
                    .and_then(|l| l.get(k))
                    .and_then(Value::as_str)
                    .map(String::from)
            })
        })
    }

    /// Matches against dotted field paths of the object (`metadata.name`, `spec.nodeName`).
    pub fn matches_fields(&self, obj: &Value) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches(|path| Some(field_text(obj, path))))
    }

    /// Matches with `lookup` giving each key's value (`Some(None)`: absent); `None` when
    /// `lookup` cannot tell for some key (the caller then reads the whole object).
    pub fn matches_lookup(&self, lookup: impl Fn(&str) -> Option<Option<String>>) -> Option<bool> {
        let mut all = true;
        for r in &self.requirements {
            let value = lookup(r.key())?;
            all = all && r.matches(|_| value.clone());
        }
        Some(all)
    }
}

/// A field's value as a field selector compares it: absent and null read as "", numbers and
/// booleans as their JSON.
pub fn field_text(obj: &Value, path: &str) -> String {
    let pointer = format!("/{}", path.replace('.', "/"));
    pointed_text(obj.pointer(&pointer))
}

/// [`field_text`] of what a JSON pointer found.
pub fn pointed_text(found: Option<&Value>) -> String {
    match found {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj() -> Value {
        json!({"metadata": {"name": "web", "labels": {"app": "web", "tier": "front", "owner": "helm"}},
               "spec": {"nodeName": "node-1"}})
    }

    #[test]
    fn label_selectors() {
        let o = obj();
        let yes = [
            "app=web",
            "app==web,owner=helm",
            "app!=db",
            "missing!=x",
            "tier in (front,back)",
            "tier notin (back)",
            "missing notin (x)",
            "app",
            "!missing",
            "",
        ];
        let no = [
            "app=db",
            "app!=web",
            "tier in (back)",
            "tier notin (front)",
            "missing",
            "!app",
            "app=web,owner=other",
            "missing in (x)",
        ];
        for s in yes {
            assert!(Selector::parse_labels(s).unwrap().matches_labels(&o), "{s}");
        }
        for s in no {
            assert!(
                !Selector::parse_labels(s).unwrap().matches_labels(&o),
                "{s}"
            );
        }
    }

    #[test]
    fn bad_label_selectors_are_errors() {
        assert!(Selector::parse_labels("tier in front").is_err());
        assert!(Selector::parse_labels("a b c").is_err());
    }

    #[test]
    fn field_selectors() {
        let o = obj();
        assert!(
            Selector::parse_fields("metadata.name=web")
                .unwrap()
                .matches_fields(&o)
        );
        assert!(
            Selector::parse_fields("spec.nodeName=node-1,metadata.name!=db")
                .unwrap()
                .matches_fields(&o)
        );
        assert!(
            !Selector::parse_fields("metadata.name=db")
                .unwrap()
                .matches_fields(&o)
        );
        assert!(
            Selector::parse_fields("metadata.namespace=")
                .unwrap()
                .matches_fields(&o)
        );
        assert!(Selector::parse_fields("nonsense").is_err());
    }

    #[test]
    fn label_selector_objects() {
        let sel = json!({"matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]},
                                 {"key": "gone", "operator": "DoesNotExist"}]});
        assert!(Selector::from_label_selector(&sel).matches_labels(&obj()));
        let sel = json!({"matchLabels": {"app": "db"}});
        assert!(!Selector::from_label_selector(&sel).matches_labels(&obj()));
    }

    #[test]
    fn selectors_print_as_the_api_server_prints_them() {
        let sel = json!({"matchLabels": {"tier": "front", "app": "web"},
            "matchExpressions": [{"key": "zone", "operator": "In", "values": ["b", "a"]},
                                 {"key": "canary", "operator": "DoesNotExist"},
                                 {"key": "env", "operator": "Exists"}]});
        assert_eq!(
            Selector::from_label_selector(&sel).to_text(),
            "app=web,!canary,env,tier=front,zone in (a,b)"
        );
        let parsed = Selector::parse_labels("b notin (y,x),a!=1").unwrap();
        assert_eq!(parsed.to_text(), "a!=1,b notin (x,y)");
        assert_eq!(Selector::default().to_text(), "");
    }
}
