//! The JUnit XML report (`--junit FILE`), for the test reporters of GitLab, Jenkins and GitHub:
//! one test case per step, per gating workload and for the verdict; optional workloads as
//! skipped cases; with `--test`, its step and one case per test hook. Built from the final state alone, so it says what the JSON report says and
//! never more: no values, no Secret data (the state holds neither).

use std::path::Path;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use crate::engine::event::{HookView, Step, StepOutcome, WorkloadView};
use crate::engine::state::DeployState;
use crate::engine::verdict::Verdict;

/// One `<testcase>`: what a reporter shows per line.
#[derive(Debug, Clone, PartialEq)]
struct Case {
    name: String,
    classname: String,
    secs: f64,
    result: Result_,
    out: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Result_ {
    Passed,
    /// `<failure>`: the deploy judged it failed.
    Failure {
        kind: &'static str,
        message: String,
        body: String,
    },
    /// `<error>`: it never ended (the run was killed or ended without a verdict).
    Error {
        message: String,
    },
    Skipped {
        message: String,
    },
}

/// The JUnit document of a run (running or finished).
pub fn build(state: &DeployState) -> String {
    build_suites(&[(suite_name(state), state)])
}

/// The JUnit document of a fleet: one test suite per target, named with its label, in the
/// fleet's order.
pub fn build_fleet(targets: &[(&str, &DeployState)]) -> String {
    let suites: Vec<(String, &DeployState)> = targets
        .iter()
        .map(|(label, state)| {
            let label = crate::text::plain(label);
            (format!("{} @ {label}", suite_name(state)), *state)
        })
        .collect();
    build_suites(&suites)
}

/// Counts of a list of cases, as the `<testsuite>` and `<testsuites>` attributes say them.
#[derive(Default)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
}

impl Counts {
    fn of(cases: &[Case]) -> Counts {
        let count = |f: fn(&Result_) -> bool| cases.iter().filter(|c| f(&c.result)).count();
        Counts {
            tests: cases.len(),
            failures: count(|r| matches!(r, Result_::Failure { .. })),
            errors: count(|r| matches!(r, Result_::Error { .. })),
            skipped: count(|r| matches!(r, Result_::Skipped { .. })),
        }
    }

    fn add(&mut self, other: &Counts) {
        self.tests += other.tests;
        self.failures += other.failures;
        self.errors += other.errors;
        self.skipped += other.skipped;
    }

    fn attributes(&self, name: &str, time: &str) -> Vec<(&'static str, String)> {
        vec![
            ("name", name.to_string()),
            ("tests", self.tests.to_string()),
            ("failures", self.failures.to_string()),
            ("errors", self.errors.to_string()),
            ("skipped", self.skipped.to_string()),
            ("time", time.to_string()),
        ]
    }
}

fn build_suites(suites: &[(String, &DeployState)]) -> String {
    let cased: Vec<(&str, &DeployState, Vec<Case>, Counts)> = suites
        .iter()
        .map(|(name, state)| {
            let cases = cases(state);
            let counts = Counts::of(&cases);
            (name.as_str(), *state, cases, counts)
        })
        .collect();
    let mut total = Counts::default();
    for (.., counts) in &cased {
        total.add(counts);
    }
    let longest = suites
        .iter()
        .map(|(_, s)| s.now_secs)
        .fold(0.0_f64, f64::max);
    let mut xml = Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing into a Vec cannot fail; the io::Result is quick-xml's general signature.
    let written: std::io::Result<()> = (|| {
        xml.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
        let all = total.attributes("helmdeck", &secs(longest));
        xml.create_element("testsuites")
            .with_attributes(all.iter().map(|(k, v)| (*k, v.as_str())))
            .write_inner_content(|xml| {
                for (name, state, cases, counts) in &cased {
                    write_suite(xml, name, state, cases, counts)?;
                }
                Ok(())
            })?;
        Ok(())
    })();
    debug_assert!(written.is_ok());
    let mut out = String::from_utf8(xml.into_inner()).unwrap_or_default();
    out.push('\n');
    out
}

fn write_suite(
    xml: &mut Writer<Vec<u8>>,
    name: &str,
    state: &DeployState,
    cases: &[Case],
    counts: &Counts,
) -> std::io::Result<()> {
    let attributes = counts.attributes(name, &secs(state.now_secs));
    let mut start = xml
        .create_element("testsuite")
        .with_attributes(attributes.iter().map(|(k, v)| (*k, v.as_str())));
    let stamp = state
        .steps
        .values()
        .find_map(|s| s.started_at.as_deref())
        .map(xml_text);
    if let Some(stamp) = &stamp {
        start = start.with_attribute(("timestamp", stamp.as_str()));
    }
    start.write_inner_content(|xml| {
        for case in cases {
            write_case(xml, case)?;
        }
        Ok(())
    })?;
    Ok(())
}

fn write_case(xml: &mut Writer<Vec<u8>>, case: &Case) -> std::io::Result<()> {
    let name = xml_text(&case.name);
    let classname = xml_text(&case.classname);
    let time = secs(case.secs);
    let start = xml.create_element("testcase").with_attributes([
        ("name", name.as_str()),
        ("classname", classname.as_str()),
        ("time", time.as_str()),
    ]);
    if case.result == Result_::Passed && case.out.is_empty() {
        start.write_empty()?;
        return Ok(());
    }
    start.write_inner_content(|xml| {
        match &case.result {
            Result_::Passed => {}
            Result_::Failure {
                kind,
                message,
                body,
            } => {
                let message = xml_text(message);
                xml.create_element("failure")
                    .with_attributes([("message", message.as_str()), ("type", kind)])
                    .write_text_content(BytesText::new(&xml_text(body)))?;
            }
            Result_::Error { message } => {
                let message = xml_text(message);
                xml.create_element("error")
                    .with_attributes([("message", message.as_str()), ("type", "unfinished")])
                    .write_empty()?;
            }
            Result_::Skipped { message } => {
                let message = xml_text(message);
                xml.create_element("skipped")
                    .with_attribute(("message", message.as_str()))
                    .write_empty()?;
            }
        }
        if !case.out.is_empty() {
            xml.create_element("system-out")
                .write_text_content(BytesText::new(&xml_text(&case.out)))?;
        }
        Ok(())
    })?;
    Ok(())
}

fn suite_name(state: &DeployState) -> String {
    let mut name = format!(
        "helmdeck deploy {}/{}",
        state.plan.namespace, state.plan.release
    );
    if state.plan.dry_run {
        name.push_str(" (dry run)");
    }
    name
}

/// Every case of the run, in the order a reader follows: the steps, the workloads, the verdict.
fn cases(state: &DeployState) -> Vec<Case> {
    let class = |group: &str| format!("helmdeck.{}.{group}", state.plan.release);
    let evidence = state
        .verdict
        .as_ref()
        .map(|v| v.evidence.join("\n"))
        .unwrap_or_default();
    let mut cases: Vec<Case> = Step::ALL
        .iter()
        .map(|step| {
            let secs = state
                .steps
                .get(step)
                .and_then(|s| Some(s.ended_secs? - s.started_secs?))
                .unwrap_or(0.0);
            let (result, out) = step_result(state, *step, &evidence);
            Case {
                name: step.name().to_string(),
                classname: class("steps"),
                secs,
                result,
                out,
            }
        })
        .collect();
    // `--test`: its step after the deploy's, then one case per test hook helm ran or skipped.
    if state.steps.contains_key(&Step::Test) {
        let secs = state
            .steps
            .get(&Step::Test)
            .and_then(|s| Some(s.ended_secs? - s.started_secs?))
            .unwrap_or(0.0);
        let (result, out) = step_result(state, Step::Test, &evidence);
        cases.push(Case {
            name: Step::Test.name().to_string(),
            classname: class("steps"),
            secs,
            result,
            out,
        });
        cases.extend(
            state
                .hooks
                .iter()
                .filter(|h| h.events.iter().any(|e| e.starts_with("test")))
                .map(|h| Case {
                    name: format!("{}/{}", h.kind, h.name),
                    classname: class("tests"),
                    secs: 0.0,
                    result: test_result(state, h),
                    out: String::new(),
                }),
        );
    }
    cases.extend(state.workloads.values().map(|w| Case {
        name: w.reference(&state.plan.namespace),
        classname: class("workloads"),
        secs: 0.0,
        result: workload_result(w),
        out: String::new(),
    }));
    let (result, out) = verdict_result(state.verdict.as_ref());
    cases.push(Case {
        name: "verdict".into(),
        classname: class("verdict"),
        secs: state.now_secs,
        result,
        out,
    });
    cases
}

/// A step's result and its captured output: a failure carries the verdict's evidence (or its
/// own reason when there is none), and a failed upgrade also helm's stderr; a step that started
/// and never ended is an error, one never started is skipped as not run.
fn step_result(state: &DeployState, step: Step, evidence: &str) -> (Result_, String) {
    let s = state.steps.get(&step);
    let started = s.and_then(|s| s.started_at.as_ref()).is_some();
    let mut out = String::new();
    let result = match s.and_then(|s| s.outcome.as_ref()) {
        Some(StepOutcome::Succeeded) => Result_::Passed,
        Some(StepOutcome::Failed { reason }) => {
            let mut body = evidence.to_string();
            if step == Step::Upgrade && !state.helm.stderr_tail.is_empty() {
                out = state.helm.stderr_tail.join("\n");
            }
            if body.is_empty() {
                body = reason.clone();
            }
            Result_::Failure {
                kind: "failed",
                message: reason.clone(),
                body,
            }
        }
        Some(StepOutcome::Cancelled) => Result_::Failure {
            kind: "cancelled",
            message: "cancelled".into(),
            body: evidence.to_string(),
        },
        Some(StepOutcome::Skipped { reason }) => Result_::Skipped {
            message: reason.clone(),
        },
        None if started => Result_::Error {
            message: "the step never ended".into(),
        },
        None => Result_::Skipped {
            message: "not run".into(),
        },
    };
    (result, out)
}

/// The verdict case: passed on exit 0, a failure otherwise (exit 3 has its own kind, so a CI
/// can tell an incomplete live init from a failed deploy), an error when the run never judged.
fn verdict_result(verdict: Option<&Verdict>) -> (Result_, String) {
    let Some(v) = verdict else {
        return (
            Result_::Error {
                message: "no verdict: the run did not finish".into(),
            },
            String::new(),
        );
    };
    let mut out = format!(
        "verdict: {} (exit {}): {}",
        v.outcome.title(),
        v.code(),
        v.reason
    );
    if let Some(next) = &v.next {
        out.push_str(&format!("\nnext: {next}"));
    }
    let result = if v.code() == 0 {
        Result_::Passed
    } else {
        Result_::Failure {
            kind: if v.code() == 3 {
                "live-init-incomplete"
            } else {
                "failed"
            },
            message: v.reason.clone(),
            body: v.evidence.join("\n"),
        }
    };
    (result, out)
}

/// A test hook after `helm test`, by the phase helm recorded: passed when it succeeded; skipped
/// when helm never started it (it stops at the first failing test); a failure otherwise, with
/// the test step's notes about it (its phase and last log line).
fn test_result(state: &DeployState, h: &HookView) -> Result_ {
    let phase = h.phase;
    if phase.succeeded() {
        return Result_::Passed;
    }
    if !phase.started() {
        return Result_::Skipped {
            message: "skipped: helm test never started it (helm stops at the first failing test)"
                .into(),
        };
    }
    // Failed, or left Running/Unknown. The step's notes name the hook `… NAME: phase · last
    // log line`.
    let about = [format!(" {}: ", h.name), format!("/{}: ", h.name)];
    let notes: Vec<&str> = state
        .notes
        .iter()
        .filter(|n| n.step == Step::Test && about.iter().any(|a| n.text.contains(a)))
        .map(|n| n.text.as_str())
        .collect();
    Result_::Failure {
        kind: "failed",
        message: format!("{} {}: {phase}", h.kind, h.name),
        body: notes.join("\n"),
    }
}

/// A gating workload passes when ready; an optional one never gates, so it is skipped whatever
/// its state (the message says where it stood).
fn workload_result(w: &WorkloadView) -> Result_ {
    if w.optional {
        let because = w.optional_because.as_deref().unwrap_or("deny list");
        return Result_::Skipped {
            message: format!("optional ({because}): {}", w.message),
        };
    }
    if w.ready {
        return Result_::Passed;
    }
    let mut body: Vec<String> = vec![format!(
        "{}/{} ready, {}/{} updated",
        w.ready_replicas, w.desired, w.updated, w.desired
    )];
    body.extend(w.pod_causes.iter().cloned());
    body.extend(w.notes.iter().cloned());
    Result_::Failure {
        kind: if w.failed { "failed" } else { "not-ready" },
        message: w.message.clone(),
        body: body.join("\n"),
    }
}

/// Seconds as JUnit writes them: a decimal with milliseconds, never negative.
fn secs(s: f64) -> String {
    format!("{:.3}", s.max(0.0))
}

/// Text fit for XML 1.0, line by line: made plain (no controls, which XML forbids even escaped),
/// and the two non-characters plain text keeps but XML forbids dropped: one of them in a pod's
/// message would make the whole file unreadable to the CI.
fn xml_text(s: &str) -> String {
    s.split('\n')
        .map(|line| {
            crate::text::plain(line)
                .chars()
                .filter(|c| !matches!(c, '\u{FFFE}' | '\u{FFFF}'))
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes the document atomically, as the JSON report is written: a temporary file beside the
/// path, synced, renamed over it.
pub fn write(path: &Path, xml: &str) -> std::io::Result<()> {
    crate::atomic::write(path, xml.as_bytes(), crate::atomic::Access::Shared, "junit")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::event::{Event, WorkloadView};
    use crate::engine::state::PlanSummary;

    fn state() -> DeployState {
        DeployState::new(PlanSummary {
            release: "demo".into(),
            namespace: "apps".into(),
            ..PlanSummary::default()
        })
    }

    /// A run still going (the file `start` writes) reads as unfinished to CI, never as passed:
    /// the step that began is an error, the ones not reached are skipped, the verdict an error.
    #[test]
    fn a_running_run_is_an_error_not_a_pass() {
        let mut state = state();
        let started = Event::StepStarted {
            step: Step::Preflight,
        };
        state.apply(&started, 0.5, "2026-01-01T00:00:00Z");
        let xml = build(&state);
        assert!(
            xml.contains(
                r#"<testsuites name="helmdeck" tests="5" failures="0" errors="2" skipped="3" time="0.500">"#
            ),
            "{xml}"
        );
        assert!(xml.contains(r#"timestamp="2026-01-01T00:00:00Z""#), "{xml}");
        assert!(xml.contains(
            r#"<error message="no verdict: the run did not finish" type="unfinished"/>"#
        ));
        assert!(xml.contains(r#"<error message="the step never ended" type="unfinished"/>"#));
    }

    /// Cluster text with markup and a control character XML forbids even escaped: escaped and
    /// dropped, so the file stays well-formed.
    #[test]
    fn cluster_text_is_escaped_and_xml_forbidden_characters_dropped() {
        let mut state = state();
        let mut w = WorkloadView::ready_web("apps", "waiting <for> \"x\" & \u{7}b\u{FFFF}ell");
        w.ready = false;
        w.pod_causes = vec!["pod web-1: CrashLoopBackOff".into()];
        state.workloads.insert(w.key(), w);
        let xml = build(&state);
        assert!(
            xml.contains(r#"<failure message="waiting &lt;for&gt; &quot;x&quot; &amp; bell" type="not-ready">1/1 ready, 1/1 updated"#),
            "{xml}"
        );
        assert!(
            xml.contains("pod web-1: CrashLoopBackOff</failure>"),
            "{xml}"
        );
        assert!(!xml.contains(['\u{7}', '\u{FFFF}']));
    }

    /// An optional workload never gates: skipped even when it is failing, with the reason.
    #[test]
    fn an_optional_workload_is_a_skipped_case() {
        let mut w = WorkloadView::ready_web("apps", "0 of 1 available");
        w.ready = false;
        w.failed = true;
        w.optional = true;
        w.optional_because = Some("--optional web".into());
        assert_eq!(
            workload_result(&w),
            Result_::Skipped {
                message: "optional (--optional web): 0 of 1 available".into()
            }
        );
        w.optional = false;
        assert!(matches!(
            workload_result(&w),
            Result_::Failure { kind: "failed", .. }
        ));
        w.ready = true;
        assert_eq!(workload_result(&w), Result_::Passed);
    }
}
