//! Judging the hooks of one `helm upgrade --install` run from the final release record.
//!
//! Helm runs the hooks of an event one at a time, sorted by weight then name, and stops at the
//! first failure (semantics §6.1); the record then holds `Failed` for that hook and `""` for
//! every hook it never reached. So the phase in the record is the evidence, and the order below
//! only says where each hook stood in the run.

pub use crate::helm::phase::HookPhase;
use crate::helm::status::{HistoryEntry, HookRecord};

/// Which path `helm upgrade --install` took, which decides the hook events that fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RunKind {
    /// `pre-install` / `post-install` hooks.
    Install,
    /// `pre-upgrade` / `post-upgrade` hooks.
    Upgrade,
    /// `pre-rollback` / `post-rollback` hooks (`helm rollback`).
    Rollback,
}

impl RunKind {
    /// The event of the hooks that run before the main apply.
    pub fn pre_event(self) -> &'static str {
        match self {
            RunKind::Install => "pre-install",
            RunKind::Upgrade => "pre-upgrade",
            RunKind::Rollback => "pre-rollback",
        }
    }

    /// The event of the hooks that run after the apply (and helm's wait).
    pub fn post_event(self) -> &'static str {
        match self {
            RunKind::Install => "post-install",
            RunKind::Upgrade => "post-upgrade",
            RunKind::Rollback => "post-rollback",
        }
    }
}

/// One hook with its outcome and its place in the run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct JudgedHook {
    pub record: HookRecord,
    /// Succeeded, Failed, Running, Unknown, Skipped or NotInThisRun (never NeverRan: a hook of
    /// this run that never ran was skipped).
    pub outcome: HookPhase,
    /// Execution order within the run: pre-hooks first, then post-hooks. Hooks not in this
    /// run come after all of them, in record order; for those the number only sorts.
    pub order: usize,
}

/// Judges every hook of a final record (read after helm exited), returned in `order`.
///
/// A hook listing both the pre and the post event of this run runs twice; it is placed once, at
/// its first (pre) run, and its phase is whatever its last run left.
pub fn judge(hooks: &[HookRecord], run: RunKind) -> Vec<JudgedHook> {
    let has = |h: &HookRecord, event: &str| h.events.iter().any(|e| e == event);
    let (pre_event, post_event) = (run.pre_event(), run.post_event());

    let mut pre: Vec<&HookRecord> = hooks.iter().filter(|h| has(h, pre_event)).collect();
    let mut post: Vec<&HookRecord> = hooks
        .iter()
        .filter(|h| !has(h, pre_event) && has(h, post_event))
        .collect();
    sort_for_execution(&mut pre);
    sort_for_execution(&mut post);
    let elsewhere = hooks
        .iter()
        .filter(|h| !has(h, pre_event) && !has(h, post_event))
        .map(|h| (h, HookPhase::NotInThisRun));

    pre.into_iter()
        .chain(post)
        .map(|h| (h, outcome_of(h.phase)))
        .chain(elsewhere)
        .enumerate()
        .map(|(order, (h, outcome))| JudgedHook {
            record: h.clone(),
            outcome,
            order,
        })
        .collect()
}

/// Helm's order: weight ascending, then name. The sort is stable, so equal weight and name
/// keep record order, which helm's kind-sorted rendering produced and its stable sort keeps.
fn sort_for_execution(hooks: &mut [&HookRecord]) {
    hooks.sort_by(|a, b| a.weight.cmp(&b.weight).then_with(|| a.name.cmp(&b.name)));
}

/// The outcome in this run of a hook of this run, from its recorded phase.
fn outcome_of(recorded: HookPhase) -> HookPhase {
    match recorded {
        // The revision's record is written fresh from the chart with empty phases, so "" on a
        // hook of this run means helm never got to it.
        HookPhase::NeverRan => HookPhase::Skipped,
        other => other,
    }
}

/// The hooks that failed, in execution order.
pub fn failing(judged: &[JudgedHook]) -> Vec<&JudgedHook> {
    with_outcome(judged, HookPhase::Failed)
}

/// The hooks of this run that never ran, in execution order.
pub fn skipped(judged: &[JudgedHook]) -> Vec<&JudgedHook> {
    with_outcome(judged, HookPhase::Skipped)
}

fn with_outcome(judged: &[JudgedHook], outcome: HookPhase) -> Vec<&JudgedHook> {
    judged.iter().filter(|j| j.outcome == outcome).collect()
}

/// Whether `helm rollback` wrote a revision, from its own record: pending as a rollback, or
/// described as helm describes a rollback's end ("Rollback to N", `Rollback "NAME" failed`).
pub fn is_rollback(status: &str, description: &str) -> bool {
    status == "pending-rollback"
        || description.starts_with("Rollback to ")
        || description.starts_with("Rollback \"")
}

/// Which path `helm upgrade --install` takes, from `helm history` read before running it.
///
/// Install when there is no history, and also when the newest revision is `uninstalled` (a
/// release removed with `--keep-history`): helm's upgrade command checks exactly these two
/// cases (`pkg/cmd/upgrade.go`, `isReleaseUninstalled`). Any other history, even one with no
/// deployed revision, takes the upgrade path.
pub fn run_kind(history_before: &[HistoryEntry]) -> RunKind {
    match history_before.iter().max_by_key(|h| h.revision) {
        None => RunKind::Install,
        Some(last) if last.status == "uninstalled" => RunKind::Install,
        Some(_) => RunKind::Upgrade,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(name: &str, events: &[&str], weight: i64, phase: &str) -> HookRecord {
        HookRecord {
            name: name.into(),
            kind: "Job".into(),
            path: format!("deckapp/templates/{name}.yaml"),
            events: events.iter().map(|e| (*e).to_string()).collect(),
            weight,
            phase: HookPhase::from_helm(phase),
            ..HookRecord::default()
        }
    }

    const PRE: &[&str] = &["pre-install", "pre-upgrade"];
    const POST: &[&str] = &["post-install", "post-upgrade"];

    /// (name, outcome) in the returned order.
    fn judged(hooks: &[HookRecord], run: RunKind) -> Vec<(String, HookPhase)> {
        let j = judge(hooks, run);
        for (i, h) in j.iter().enumerate() {
            assert_eq!(h.order, i, "returned in order");
        }
        j.into_iter().map(|h| (h.record.name, h.outcome)).collect()
    }

    fn names_outcomes(rows: &[(&str, HookPhase)]) -> Vec<(String, HookPhase)> {
        rows.iter().map(|(n, o)| ((*n).to_string(), *o)).collect()
    }

    use HookPhase::*;

    #[test]
    fn table() {
        struct Case {
            what: &'static str,
            run: RunKind,
            hooks: Vec<HookRecord>,
            want: Vec<(&'static str, HookPhase)>,
        }
        let cases = [
            Case {
                what: "all succeeded: pre by weight, then post by weight",
                run: RunKind::Upgrade,
                hooks: vec![
                    hook("seed", POST, 5, "Succeeded"),
                    hook("init", POST, 0, "Succeeded"),
                    hook("migrate", PRE, -5, "Succeeded"),
                ],
                want: vec![
                    ("migrate", Succeeded),
                    ("init", Succeeded),
                    ("seed", Succeeded),
                ],
            },
            Case {
                what: "pre hook failed: later pre hooks and every post hook skipped",
                run: RunKind::Upgrade,
                hooks: vec![
                    hook("init", POST, 0, ""),
                    hook("schema", PRE, 3, ""),
                    hook("migrate", PRE, -5, "Failed"),
                    hook("seed", POST, 5, ""),
                ],
                want: vec![
                    ("migrate", Failed),
                    ("schema", Skipped),
                    ("init", Skipped),
                    ("seed", Skipped),
                ],
            },
            Case {
                what: "post hook of weight 0 succeeded, weight 5 failed",
                run: RunKind::Upgrade,
                hooks: vec![
                    hook("seed", POST, 5, "Failed"),
                    hook("init", POST, 0, "Succeeded"),
                    hook("migrate", PRE, -5, "Succeeded"),
                ],
                want: vec![
                    ("migrate", Succeeded),
                    ("init", Succeeded),
                    ("seed", Failed),
                ],
            },
            Case {
                what: "equal weights run by name",
                run: RunKind::Upgrade,
                hooks: vec![
                    hook("zeta", PRE, 0, "Succeeded"),
                    hook("alpha", PRE, 0, "Succeeded"),
                    hook("mid", PRE, 0, "Failed"),
                    hook("early", PRE, -1, "Succeeded"),
                ],
                want: vec![
                    ("early", Succeeded),
                    ("alpha", Succeeded),
                    ("mid", Failed),
                    ("zeta", Succeeded),
                ],
            },
            Case {
                what: "install record: install events count, upgrade-only hooks do not",
                run: RunKind::Install,
                hooks: vec![
                    hook("migrate", &["pre-install"], 0, "Succeeded"),
                    hook("upgrade-only", &["pre-upgrade"], 0, ""),
                    hook("init", &["post-install"], 0, ""),
                ],
                want: vec![
                    ("migrate", Succeeded),
                    ("init", Skipped),
                    ("upgrade-only", NotInThisRun),
                ],
            },
            Case {
                what: "test hooks are not part of an install or upgrade",
                run: RunKind::Upgrade,
                hooks: vec![
                    hook("smoke", &["test"], -10, ""),
                    hook("migrate", PRE, 0, "Succeeded"),
                    hook("cleanup", &["pre-delete", "post-rollback"], 0, "Succeeded"),
                ],
                want: vec![
                    ("migrate", Succeeded),
                    ("smoke", NotInThisRun),
                    ("cleanup", NotInThisRun),
                ],
            },
            Case {
                what: "helm died mid-hook: Running and Unknown are reported as such",
                run: RunKind::Upgrade,
                hooks: vec![
                    hook("migrate", PRE, 0, "Running"),
                    hook("init", POST, 0, "Unknown"),
                    hook("seed", POST, 5, ""),
                ],
                want: vec![("migrate", Running), ("init", Unknown), ("seed", Skipped)],
            },
            Case {
                what: "a hook on both pre and post events is placed at its pre run",
                run: RunKind::Upgrade,
                hooks: vec![
                    hook("after", POST, -100, "Succeeded"),
                    hook("both", &["pre-upgrade", "post-upgrade"], 0, "Succeeded"),
                ],
                want: vec![("both", Succeeded), ("after", Succeeded)],
            },
        ];
        for c in cases {
            assert_eq!(
                judged(&c.hooks, c.run),
                names_outcomes(&c.want),
                "{}",
                c.what
            );
        }
    }

    #[test]
    fn a_hook_with_phase_empty_in_an_install_record_is_never_succeeded() {
        let hooks = [hook("migrate", PRE, -5, "")];
        let j = judge(&hooks, RunKind::Install);
        assert_eq!(j[0].outcome, Skipped);
        assert_eq!(skipped(&j).len(), 1);
        assert!(failing(&j).is_empty());
    }

    #[test]
    fn equal_weight_and_name_keep_record_order() {
        let mut pod = hook("check", PRE, 0, "Succeeded");
        pod.kind = "Pod".into();
        let job = hook("check", PRE, 0, "Failed");
        let j = judge(&[pod, job], RunKind::Upgrade);
        let kinds: Vec<&str> = j.iter().map(|h| h.record.kind.as_str()).collect();
        assert_eq!(kinds, ["Pod", "Job"]);
    }

    #[test]
    fn failing_and_skipped_pick_their_hooks_in_order() {
        let hooks = [
            hook("seed", POST, 5, ""),
            hook("b", PRE, 0, "Failed"),
            hook("a", PRE, 0, "Failed"),
            hook("init", POST, 0, ""),
            hook("smoke", &["test"], 0, ""),
        ];
        let j = judge(&hooks, RunKind::Upgrade);
        let names = |v: Vec<&JudgedHook>| -> Vec<String> {
            v.into_iter().map(|h| h.record.name.clone()).collect()
        };
        assert_eq!(names(failing(&j)), ["a", "b"]);
        assert_eq!(names(skipped(&j)), ["init", "seed"]);
    }

    #[test]
    fn every_phase_serialises_as_the_word_it_shows() {
        for p in HookPhase::ALL {
            assert_eq!(serde_json::to_value(p).expect("serialises"), p.word());
            assert_eq!(p.to_string(), p.word());
            let back: HookPhase =
                serde_json::from_value(serde_json::json!(p.word())).expect("reads");
            assert_eq!(back, p);
        }
        // The words the JSON report and the screens have always used.
        let words: Vec<&str> = HookPhase::ALL.iter().map(|p| p.word()).collect();
        assert_eq!(
            words,
            [
                "Succeeded",
                "Failed",
                "Running",
                "Unknown",
                "never ran",
                "skipped",
                "not in this run"
            ]
        );
    }

    #[test]
    fn helm_phases_read_as_record_phases_only() {
        for (helm, want) in [
            ("", NeverRan),
            ("Succeeded", Succeeded),
            ("Failed", Failed),
            ("Running", Running),
            ("Unknown", Unknown),
            ("skipped", Unknown),
            ("never ran", Unknown),
            ("Exploded", Unknown),
        ] {
            assert_eq!(HookPhase::from_helm(helm), want, "{helm:?}");
        }
    }

    fn entry(revision: i64, status: &str) -> HistoryEntry {
        HistoryEntry {
            revision,
            status: status.into(),
            ..HistoryEntry::default()
        }
    }

    #[test]
    fn run_kind_from_history() {
        assert_eq!(run_kind(&[]), RunKind::Install);
        assert_eq!(run_kind(&[entry(1, "deployed")]), RunKind::Upgrade);
        assert_eq!(run_kind(&[entry(1, "failed")]), RunKind::Upgrade);
        assert_eq!(
            run_kind(&[entry(1, "superseded"), entry(2, "uninstalled")]),
            RunKind::Install
        );
        // The newest revision decides, whatever the input order.
        assert_eq!(
            run_kind(&[entry(3, "deployed"), entry(2, "uninstalled")]),
            RunKind::Upgrade
        );
        assert_eq!(run_kind(&[entry(1, "pending-install")]), RunKind::Upgrade);
    }
}
