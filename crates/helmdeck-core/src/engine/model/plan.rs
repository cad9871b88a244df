//! The plan's data: each object `helm upgrade` would add, remove or change, and how.

use serde::Serialize;

/// What replaces each Secret value on both sides of a diff.
pub const MASK: &str = "***";
/// The new side of a Secret value that differs from the old one: the change shows, the value
/// never does.
pub const MASK_CHANGED: &str = "*** (changed)";

/// Who an object is: (apiVersion, kind, namespace, name). An object without a namespace is in
/// the release's, where helm puts it.
pub type ObjectKey = (String, String, String, String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Added,
    Removed,
    Changed,
}

impl Change {
    /// The marker lists show: `+`, `-`, `~`.
    pub fn marker(self) -> &'static str {
        match self {
            Change::Added => "+",
            Change::Removed => "-",
            Change::Changed => "~",
        }
    }
}

/// One object the upgrade would touch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PlanObject {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub change: Change,
    /// A workload whose pod template changes: its pods will be replaced.
    pub will_roll: bool,
    /// Why the API server will refuse the change (an immutable field), when it will.
    pub refused: Option<String>,
    /// What the plan could not check, or where the object comes from: a CRD from the chart's
    /// `crds/` that an install creates first, a custom resource of such a CRD that helm's
    /// server dry run cannot know.
    #[serde(default)]
    pub note: Option<String>,
    /// Unified diff of the object (Secret values masked); empty for the report.
    #[serde(skip)]
    pub diff: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Plan {
    /// No revision to compare with: everything is added.
    pub first_install: bool,
    /// In order: kind, namespace, name.
    pub objects: Vec<PlanObject>,
    pub unchanged: usize,
}

impl Plan {
    pub fn count(&self, change: Change) -> usize {
        self.objects.iter().filter(|o| o.change == change).count()
    }

    pub fn has_changes(&self) -> bool {
        !self.objects.is_empty()
    }

    pub fn refused(&self) -> impl Iterator<Item = &PlanObject> {
        self.objects.iter().filter(|o| o.refused.is_some())
    }

    /// `2 added, 1 removed, 3 changed (1 will roll, 1 refused), 4 unchanged`.
    pub fn summary(&self) -> String {
        let rolls = self.objects.iter().filter(|o| o.will_roll).count();
        let refused = self.refused().count();
        let mut tags = Vec::new();
        if rolls > 0 {
            tags.push(format!("{rolls} will roll"));
        }
        if refused > 0 {
            tags.push(format!("{refused} refused"));
        }
        let tags = if tags.is_empty() {
            String::new()
        } else {
            format!(" ({})", tags.join(", "))
        };
        format!(
            "{} added, {} removed, {} changed{tags}, {} unchanged",
            self.count(Change::Added),
            self.count(Change::Removed),
            self.count(Change::Changed),
            self.unchanged
        )
    }
}

impl PlanObject {
    /// `Kind/name`, or `Kind/namespace/name` outside the release namespace.
    pub fn reference(&self, home: &str) -> String {
        super::reference(&self.kind, &self.namespace, &self.name, home)
    }

    /// `will roll`, `helm will be refused: …`, as lists tag an object.
    pub fn tags(&self) -> Vec<String> {
        let mut tags = Vec::new();
        if self.will_roll {
            tags.push("will roll".to_string());
        }
        if let Some(why) = &self.refused {
            tags.push(format!("helm will be refused: {why}"));
        }
        if let Some(note) = &self.note {
            tags.push(note.clone());
        }
        tags
    }
}
