//! The manifest as `--show-manifest` prints it: every `kind: Secret` document keeps its shape
//! but each `data` / `stringData` value becomes `***`. Fails closed: a document that cannot be
//! parsed and mentions `Secret` is withheld entirely.

use serde_json::Value;

/// What replaces each Secret value.
pub const MASK: &str = "***";

/// Shown instead of a document that might be a Secret but could not be parsed.
const WITHHELD: &str =
    "# (document withheld: it mentions a Secret and could not be parsed to redact it)";

/// The manifest with Secret values masked; documents without Secrets are kept verbatim.
pub fn manifest(manifest: &str) -> String {
    let mut out = String::with_capacity(manifest.len());
    let mut doc = String::new();
    for line in manifest.split_inclusive('\n') {
        if is_separator(line) {
            out.push_str(&document(&doc));
            doc.clear();
            out.push_str(line);
        } else {
            doc.push_str(line);
        }
    }
    out.push_str(&document(&doc));
    out
}

/// `---` alone, or followed by a space and a comment.
fn is_separator(line: &str) -> bool {
    let line = line.trim_end();
    line == "---" || line.starts_with("--- ")
}

fn document(doc: &str) -> String {
    if doc.trim().is_empty() {
        return doc.to_string();
    }
    match serde_saphyr::from_str::<Value>(doc) {
        Ok(mut value) => {
            if !mask_secrets(&mut value) {
                return doc.to_string();
            }
            match serde_saphyr::to_string(&value) {
                Ok(yaml) => {
                    let mut kept = leading_comments(doc);
                    kept.push_str(&yaml);
                    if !kept.ends_with('\n') {
                        kept.push('\n');
                    }
                    kept
                }
                Err(_) => withheld(doc),
            }
        }
        Err(_) if doc.contains("Secret") => withheld(doc),
        Err(_) => doc.to_string(),
    }
}

fn withheld(doc: &str) -> String {
    let mut kept = leading_comments(doc);
    kept.push_str(WITHHELD);
    kept.push('\n');
    kept
}

/// The `# Source: …` header lines helm writes before each document.
fn leading_comments(doc: &str) -> String {
    doc.lines()
        .take_while(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Masks every Secret in `value` (also inside a `List`'s `items`); true when one was found.
fn mask_secrets(value: &mut Value) -> bool {
    let Some(obj) = value.as_object_mut() else {
        return false;
    };
    let mut found = false;
    if obj.get("kind").and_then(Value::as_str) == Some("Secret") {
        found = true;
        for key in ["data", "stringData"] {
            match obj.get_mut(key) {
                Some(Value::Object(map)) => map
                    .values_mut()
                    .for_each(|v| *v = Value::String(MASK.into())),
                Some(Value::Null) | None => {}
                Some(other) => *other = Value::String(MASK.into()),
            }
        }
    }
    if let Some(Value::Array(items)) = obj.get_mut("items") {
        for item in items {
            found |= mask_secrets(item);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = "---\n# Source: deckapp/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: demo-db\ntype: Opaque\ndata:\n  password: czNjcjN0LWh1bnRlcjI=\nstringData:\n  admin: s3cr3t-hunter2\n  multi: |\n    line one s3cr3t-hunter2\n    line two\n---\n# Source: deckapp/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-cfg\ndata:\n  mode: fast # kept\n";

    #[test]
    fn secret_values_are_masked_and_other_documents_kept_verbatim() {
        let out = manifest(MANIFEST);
        assert!(!out.contains("s3cr3t-hunter2"), "{out}");
        assert!(!out.contains("czNjcjN0LWh1bnRlcjI="), "{out}");
        assert!(
            out.contains("# Source: deckapp/templates/secret.yaml\n"),
            "{out}"
        );
        assert!(
            out.contains("password: ***")
                || out.contains("password: '***'")
                || out.contains("password: \"***\""),
            "{out}"
        );
        assert!(out.contains("name: demo-db"), "{out}");
        // The ConfigMap document is untouched, comment included.
        assert!(out.ends_with("---\n# Source: deckapp/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-cfg\ndata:\n  mode: fast # kept\n"), "{out}");
    }

    #[test]
    fn manifests_without_secrets_are_unchanged() {
        let m = "---\n# Source: a.yaml\nkind: Deployment\nmetadata:\n  name: web\n---\n# Source: b.yaml\nkind: Service\nmetadata: {name: web}\n";
        assert_eq!(manifest(m), m);
        assert_eq!(manifest(""), "");
    }

    #[test]
    fn secrets_in_flow_style_and_in_lists_are_masked() {
        let m = "---\n{kind: Secret, metadata: {name: x}, data: {k: aHVudGVyMg==}}\n---\nkind: List\nitems:\n- kind: Secret\n  stringData: {token: hunter2}\n- kind: ConfigMap\n  data: {a: b}\n";
        let out = manifest(m);
        assert!(!out.contains("aHVudGVyMg=="), "{out}");
        assert!(!out.contains("hunter2"), "{out}");
        assert!(out.contains("a: b"), "{out}");
    }

    #[test]
    fn unparsable_documents_mentioning_a_secret_are_withheld() {
        let m = "---\n# Source: bad.yaml\nkind: Secret\ndata:\n  password: hunter2\n   broken: [\n---\n# Source: odd.yaml\nnot: [valid\n";
        let out = manifest(m);
        assert!(!out.contains("hunter2"), "{out}");
        assert!(
            out.contains("# Source: bad.yaml\n# (document withheld"),
            "{out}"
        );
        // Not a Secret: kept as is, even if it does not parse.
        assert!(out.contains("not: [valid"), "{out}");
    }

    #[test]
    fn a_secret_whose_data_is_not_a_map_is_masked_whole() {
        let out = manifest("kind: Secret\ndata: hunter2\n");
        assert!(!out.contains("hunter2"), "{out}");
    }
}
