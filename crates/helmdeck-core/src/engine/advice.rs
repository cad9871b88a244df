//! The next-step commands the engine and the screen print: re-run the init step (exit 3), roll
//! back (`R`); runnable exactly as printed.

use crate::advice::{helm_scope, join};
use crate::config::DEFAULT_TIMEOUT;
use crate::engine::model::PlanSummary;

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
        if let Some(selector) = &plan.init_selector {
            words.extend(["--init-selector".into(), selector.clone()]);
        }
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

/// What to do after a watched deploy's init step did not finish. The watch has no chart, and
/// re-running init is the deployer's (it needs the chart and the values they upgraded with):
/// the operator who attached can read why the Job failed, which runs as printed wherever the
/// watch ran. Without a Job named there is no init step to advise on: the release's inspection.
pub fn watched_init(plan: &PlanSummary) -> String {
    match &plan.init_job {
        Some(job) => crate::advice::kubectl_logs_job(job, &plan.namespace, plan.context.as_deref()),
        None => {
            let mut words = vec![
                "helmdeck".to_string(),
                "inspect".into(),
                plan.release.clone(),
            ];
            words.extend(helm_scope(&plan.namespace, plan.context.as_deref()));
            join(&words)
        }
    }
}

/// The `helm rollback` the TUI's `R` offers, to revision `to` in the deploy's scope.
pub fn rollback(plan: &PlanSummary, to: i64) -> String {
    crate::advice::helm_rollback(&plan.release, to, &plan.namespace, plan.context.as_deref())
}

/// `helm history` of the deploy's release in its scope: where the release stands now.
pub fn history(plan: &PlanSummary) -> String {
    crate::advice::helm_history(&plan.release, &plan.namespace, plan.context.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_init_carries_every_setting_and_no_value() {
        let plan = PlanSummary {
            release: "demo".into(),
            namespace: "apps".into(),
            chart: "./my chart".into(),
            context: Some("prod".into()),
            init_toggle: Some("initJob.enabled".into()),
            init_job: Some("demo-init".into()),
            init_selector: Some("app.kubernetes.io/component=xnat-init".into()),
            timeout_secs: 600,
            helm: Some("/opt/helm".into()),
            advice_args: vec!["--post-renderer".into(), "stamp".into()],
            ..PlanSummary::default()
        };
        assert_eq!(
            only_init(&plan),
            "helmdeck deploy demo './my chart' -n apps --kube-context prod --init-toggle initJob.enabled \
             --init-job demo-init --init-selector 'app.kubernetes.io/component=xnat-init' --timeout 600s --helm /opt/helm --only init -- --post-renderer stamp"
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

    #[test]
    fn a_watched_init_failure_advises_the_jobs_log_never_a_deploy() {
        let watched = PlanSummary {
            release: "demo".into(),
            namespace: "apps".into(),
            chart: crate::cli::NO_CHART.into(),
            context: Some("prod".into()),
            init_job: Some("demo-init".into()),
            watch: true,
            ..PlanSummary::default()
        };
        assert_eq!(
            watched_init(&watched),
            "kubectl logs job/demo-init -n apps --context prod"
        );
        let no_job = PlanSummary {
            init_job: None,
            ..watched
        };
        assert_eq!(
            watched_init(&no_job),
            "helmdeck inspect demo -n apps --kube-context prod"
        );
    }
}
