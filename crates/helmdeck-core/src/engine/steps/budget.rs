//! Preflight's timeout budget: renders the chart offline with this deploy's values and warns
//! when `--timeout` is shorter than the slowest workload's legitimate rollout
//! ([`crate::rollout::budget`] holds the arithmetic).

use serde_json::Value;

use crate::engine::event::Step;
use crate::engine::steps::Ctx;
use crate::engine::steps::init_render;
use crate::rollout::budget;

/// `helm template` with the values the upgrade gets, in the upgrade's order (the plan's, the
/// init toggle off, then those after `--`: a later `--set` of the same key wins in both).
fn render_args(ctx: &Ctx) -> Vec<String> {
    let plan = &ctx.plan;
    let mut args = vec![
        "template".into(),
        plan.release.clone(),
        plan.helm_chart(),
        "-n".into(),
        ctx.namespace().to_string(),
    ];
    args.extend(plan.value_args());
    if let Some(key) = &plan.init_toggle {
        args.extend(["--set".into(), format!("{key}=false")]);
    }
    args.extend(plan.extra_value_args());
    args.extend(plan.render_extra());
    args
}

/// The warning text, or `None` when every estimate fits.
pub fn warning(docs: &[Value], timeout_secs: u64) -> Option<String> {
    budget::over_budget(docs, timeout_secs).map(|e| {
        format!(
            "--timeout {timeout_secs}s is shorter than {} may legitimately take to roll out ({}); \
             raise --timeout to at least {}s",
            format_args!("{}/{}", e.kind, e.name),
            e.arithmetic(),
            e.secs()
        )
    })
}

/// Never stops the deploy: a chart that does not render offline (a `lookup`, a required value)
/// is judged by helm itself; only the check is skipped, and the operator is told.
pub async fn check(ctx: &Ctx) {
    let step = Step::Preflight;
    let rendered = match init_render::template(&ctx.helm, &ctx.helm_env, render_args(ctx)).await {
        Ok(r) => r,
        Err(e) => {
            ctx.emit
                .info(step, format!("timeout budget not checked: {e}"));
            return;
        }
    };
    let docs: Vec<Value> = match serde_saphyr::from_multiple::<Value>(&rendered) {
        Ok(d) => d.into_iter().filter(|d| !d.is_null()).collect(),
        Err(e) => {
            ctx.emit.info(
                step,
                format!("timeout budget not checked: unreadable render: {e}"),
            );
            return;
        }
    };
    if let Some(text) = warning(&docs, ctx.plan.timeout.as_secs()) {
        ctx.emit.warn(step, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_warning_names_the_workload_and_the_arithmetic() {
        let doc = json!({"kind": "StatefulSet", "metadata": {"name": "db"}, "spec": {
            "replicas": 3,
            "template": {"spec": {"containers": [{"name": "db",
                "readinessProbe": {"initialDelaySeconds": 50, "periodSeconds": 10}}]}}}});
        assert_eq!(
            warning(std::slice::from_ref(&doc), 120).as_deref(),
            Some(
                "--timeout 120s is shorter than StatefulSet/db may legitimately take to roll \
                 out (StatefulSet/db: 3 replicas ÷ surge 1 = 3 waves × (50s delay + 10s \
                 period) = 180s); raise --timeout to at least 180s"
            )
        );
        assert_eq!(warning(&[doc], 180), None);
    }
}
