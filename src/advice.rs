//! The commands helmdeck prints as advice (the next step after exit 3, a rollback, a lock's
//! recovery). Each is complete and shell-quoted (POSIX `sh`), so it runs exactly as printed, and
//! none carries a value: `--only init` reads the deployed revision's values from its record.

use std::borrow::Cow;

use crate::config::DEFAULT_TIMEOUT;
use crate::engine::state::PlanSummary;

/// One word, quoted for `sh` only when it needs to be.
pub fn quote(word: &str) -> Cow<'_, str> {
    match shlex::try_quote(word) {
        Ok(quoted) => quoted,
        // A NUL cannot reach a program's argv at all; drop it rather than print something
        // that cannot run.
        Err(_) => Cow::Owned(quote(&word.replace('\0', "")).into_owned()),
    }
}

/// The words as one command line.
pub fn join<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `-n NS [--kube-context CTX]` as helm spells it.
fn helm_scope(namespace: &str, context: Option<&str>) -> Vec<String> {
    let mut words = vec!["-n".to_string(), namespace.to_string()];
    if let Some(context) = context {
        words.extend(["--kube-context".to_string(), context.to_string()]);
    }
    words
}

/// `helm rollback RELEASE REVISION -n NS [--kube-context CTX]`.
pub fn helm_rollback(
    release: &str,
    revision: i64,
    namespace: &str,
    context: Option<&str>,
) -> String {
    let mut words = vec![
        "helm".to_string(),
        "rollback".into(),
        release.into(),
        revision.to_string(),
    ];
    words.extend(helm_scope(namespace, context));
    join(&words)
}

/// `kubectl delete KIND NAME -n NS [--context CTX]` (kubectl's flag is `--context`).
pub fn kubectl_delete(kind: &str, name: &str, namespace: &str, context: Option<&str>) -> String {
    let mut words = vec![
        "kubectl".to_string(),
        "delete".into(),
        kind.into(),
        name.into(),
        "-n".into(),
        namespace.into(),
    ];
    if let Some(context) = context {
        words.extend(["--context".to_string(), context.to_string()]);
    }
    join(&words)
}

/// The command that re-runs the init step against the live release: every setting the step
/// reads (scope, init toggle and Job, its timeout, the helm binary, the chart source and render
/// flags), and no value.
pub fn only_init(plan: &PlanSummary) -> String {
    let mut words = vec![
        "helmdeck".to_string(),
        "deploy".into(),
        plan.release.clone(),
        plan.chart.clone(),
    ];
    words.extend(helm_scope(&plan.namespace, plan.context.as_deref()));
    if let (Some(toggle), Some(job)) = (&plan.init_toggle, &plan.init_job) {
        words.extend([
            "--init-toggle".into(),
            toggle.clone(),
            "--init-job".into(),
            job.clone(),
        ]);
    }
    if plan.timeout_secs != DEFAULT_TIMEOUT.as_secs() {
        words.extend(["--timeout".into(), format!("{}s", plan.timeout_secs)]);
    }
    if let Some(helm) = &plan.helm {
        words.extend(["--helm".into(), helm.clone()]);
    }
    words.extend(["--only".into(), "init".into()]);
    if !plan.advice_args.is_empty() {
        words.push("--".into());
        words.extend(plan.advice_args.iter().cloned());
    }
    join(&words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_the_shell_needs_it() {
        assert_eq!(
            join(&["helm", "rollback", "demo", "2", "-n", "apps"]),
            "helm rollback demo 2 -n apps"
        );
        assert_eq!(
            join(&["a b", "it's", "$HOME", "x;rm", "", "k=v"]),
            r#"'a b' "it's" '$HOME' 'x;rm' '' 'k=v'"#
        );
        assert_eq!(quote("with\0nul"), "withnul");
    }

    #[test]
    fn a_rollback_and_a_record_deletion_carry_the_context() {
        assert_eq!(
            helm_rollback("demo", 4, "apps", Some("prod eu")),
            "helm rollback demo 4 -n apps --kube-context 'prod eu'"
        );
        assert_eq!(
            kubectl_delete("secret", "sh.helm.release.v1.demo.v1", "apps", Some("prod")),
            "kubectl delete secret sh.helm.release.v1.demo.v1 -n apps --context prod"
        );
    }

    #[test]
    fn only_init_carries_every_setting_and_no_value() {
        let plan = PlanSummary {
            release: "demo".into(),
            namespace: "apps".into(),
            chart: "./my chart".into(),
            context: Some("prod".into()),
            init_toggle: Some("initJob.enabled".into()),
            init_job: Some("demo-init".into()),
            timeout_secs: 600,
            helm: Some("/opt/helm".into()),
            advice_args: vec!["--post-renderer".into(), "stamp".into()],
            ..PlanSummary::default()
        };
        assert_eq!(
            only_init(&plan),
            "helmdeck deploy demo './my chart' -n apps --kube-context prod --init-toggle initJob.enabled \
             --init-job demo-init --timeout 600s --helm /opt/helm --only init -- --post-renderer stamp"
        );
        let plain = PlanSummary {
            release: "demo".into(),
            namespace: "apps".into(),
            chart: "./chart".into(),
            timeout_secs: DEFAULT_TIMEOUT.as_secs(),
            ..PlanSummary::default()
        };
        assert_eq!(
            only_init(&plain),
            "helmdeck deploy demo ./chart -n apps --only init"
        );
    }
}
