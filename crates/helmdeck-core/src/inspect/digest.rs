//! A hook's events as the operator reads them: every Warning in full, and a Normal reason that
//! repeats (a Job retried up to `backoffLimit: 6` schedules, pulls, creates and starts seven
//! pods) folded into one line with a count. The inspection keeps every event (the JSON gives
//! them all); only the text and the screen read this digest.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::event::KubeEventView;

/// A Normal reason seen this many times or more is folded. Two stay apart: each still tells
/// its own pod's node or image, and folding them would save a single line.
pub const FOLD_FROM: usize = 3;

/// One line of the digest.
#[derive(Debug, Clone, PartialEq)]
pub struct EventLine {
    /// The event shown: the group's latest, with `count` the group's total.
    pub event: KubeEventView,
    /// How many events it stands for (1: shown as it came).
    pub folded: usize,
    /// How many objects those events were about.
    pub objects: usize,
    /// Their kind in the plural (`pods`) when they share one, else `objects`.
    pub noun: String,
}

impl EventLine {
    /// What a folded line adds after the message: `×7 across 7 pods, the last shown`. Empty
    /// for an event shown as it came (its own count is printed as before).
    pub fn fold_note(&self) -> String {
        if self.folded < 2 {
            return String::new();
        }
        if self.objects > 1 {
            format!(
                "×{} across {} {}, the last shown",
                self.event.count, self.objects, self.noun
            )
        } else {
            format!("×{}, the last shown", self.event.count)
        }
    }
}

/// The lines as event views for a list that prints `message ×count`: a folded line's
/// message starts with its count (`×7 across 7 pods, last: Started container seed`).
pub fn as_views(lines: &[EventLine]) -> Vec<KubeEventView> {
    lines
        .iter()
        .map(|l| match l.folded {
            0 | 1 => l.event.clone(),
            // The count leads, so a narrow screen that cuts the message still shows it.
            _ => {
                let across = if l.objects > 1 {
                    format!(" across {} {}", l.objects, l.noun)
                } else {
                    String::new()
                };
                KubeEventView {
                    message: format!("×{}{across}, last: {}", l.event.count, l.event.message),
                    count: 1,
                    ..l.event.clone()
                }
            }
        })
        .collect()
}

/// The digest of `events` (oldest first, as collected): each folded group stands where its
/// latest event stood, so the order still reads as a timeline.
pub fn digest(events: &[KubeEventView]) -> Vec<EventLine> {
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (k, e) in events.iter().enumerate() {
        if e.kind == "Normal" {
            groups.entry(e.reason.as_str()).or_default().push(k);
        }
    }
    groups.retain(|_, members| members.len() >= FOLD_FROM);
    let mut out = Vec::new();
    for (k, e) in events.iter().enumerate() {
        let members = match groups.get(e.reason.as_str()) {
            Some(m) if e.kind == "Normal" => m,
            _ => {
                out.push(EventLine {
                    event: e.clone(),
                    folded: 1,
                    objects: 1,
                    noun: noun(std::iter::once(e)),
                });
                continue;
            }
        };
        if members.last() != Some(&k) {
            continue;
        }
        let group: Vec<&KubeEventView> = members.iter().map(|&m| &events[m]).collect();
        let objects: BTreeSet<&str> = group.iter().map(|g| g.object.as_str()).collect();
        out.push(EventLine {
            event: KubeEventView {
                count: group.iter().map(|g| g.count.max(1)).sum(),
                ..e.clone()
            },
            folded: group.len(),
            objects: objects.len(),
            noun: noun(group.iter().copied()),
        });
    }
    out
}

/// `pods` when every object is a pod (`pod/demo-seed-x`), likewise for any one kind; else
/// `objects`.
fn noun<'a>(events: impl Iterator<Item = &'a KubeEventView>) -> String {
    let kinds: BTreeSet<&str> = events
        .map(|e| e.object.split_once('/').map_or("", |(kind, _)| kind))
        .collect();
    match kinds.into_iter().collect::<Vec<_>>().as_slice() {
        [kind] if !kind.is_empty() => format!("{}s", kind.to_lowercase()),
        _ => "objects".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(object: &str, kind: &str, reason: &str, message: &str, seen: u32) -> KubeEventView {
        KubeEventView {
            object: object.into(),
            namespace: "apps".into(),
            kind: kind.into(),
            reason: reason.into(),
            message: message.into(),
            count: 1,
            last_seen: Some(format!("2026-12-01T10:00:{seen:02}Z")),
        }
    }

    /// A Job retried until `backoffLimit: 6`: seven pods, each created, scheduled, pulled and
    /// started, then the Job's Warning.
    fn backoff_six() -> Vec<KubeEventView> {
        let mut events = Vec::new();
        for n in 0..7u32 {
            let pod = format!("pod/demo-migrate-{n}");
            let s = n * 5;
            events.push(event(
                "job/demo-migrate",
                "Normal",
                "SuccessfulCreate",
                &format!("Created pod: demo-migrate-{n}"),
                s,
            ));
            events.push(event(&pod, "Normal", "Scheduled", "assigned", s));
            events.push(event(&pod, "Normal", "Pulling", "Pulling image", s + 1));
            events.push(event(&pod, "Normal", "Pulled", "Pulled image", s + 1));
            events.push(event(&pod, "Normal", "Created", "Created container", s + 2));
            events.push(event(&pod, "Normal", "Started", "Started container", s + 2));
        }
        events.push(event(
            "job/demo-migrate",
            "Warning",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
            40,
        ));
        events
    }

    #[test]
    fn repeated_normal_events_fold_and_warnings_stay_whole() {
        let lines = digest(&backoff_six());
        let shown: Vec<(&str, String)> = lines
            .iter()
            .map(|l| (l.event.reason.as_str(), l.fold_note()))
            .collect();
        assert_eq!(
            shown,
            [
                ("SuccessfulCreate", "×7, the last shown".to_string()),
                ("Scheduled", "×7 across 7 pods, the last shown".into()),
                ("Pulling", "×7 across 7 pods, the last shown".into()),
                ("Pulled", "×7 across 7 pods, the last shown".into()),
                ("Created", "×7 across 7 pods, the last shown".into()),
                ("Started", "×7 across 7 pods, the last shown".into()),
                ("BackoffLimitExceeded", String::new()),
            ]
        );
        assert_eq!(lines[5].event.object, "pod/demo-migrate-6", "the latest");
        assert_eq!(lines[6].event.kind, "Warning");
    }

    #[test]
    fn every_warning_is_kept_even_when_it_repeats() {
        let events: Vec<KubeEventView> = (0..5)
            .map(|n| event(&format!("pod/p{n}"), "Warning", "BackOff", "back-off", n))
            .collect();
        let lines = digest(&events);
        assert_eq!(lines.len(), 5);
        assert!(
            lines
                .iter()
                .all(|l| l.folded == 1 && l.fold_note().is_empty())
        );
    }

    #[test]
    fn two_of_a_kind_stay_apart_and_counts_add_up() {
        let two = [
            event("pod/a", "Normal", "Pulled", "one", 1),
            event("pod/b", "Normal", "Pulled", "two", 2),
        ];
        assert_eq!(digest(&two).len(), 2);
        let mut three = two.to_vec();
        three.push(KubeEventView {
            count: 4,
            ..event("pod/b", "Normal", "Pulled", "again", 3)
        });
        three.push(event("job/j", "Normal", "Completed", "done", 4));
        let lines = digest(&three);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].event.count, 6);
        assert_eq!(lines[0].folded, 3);
        assert_eq!(lines[0].objects, 2);
        assert_eq!(lines[0].event.message, "again");
        assert_eq!(lines[1].event.reason, "Completed");
    }
}
