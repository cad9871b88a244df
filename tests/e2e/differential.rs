//! Differential test: for simulator states across every scenario, helmdeck's per-workload
//! verdict agrees with real `kubectl rollout status --watch=false` (done or not, error or
//! not), except the stricter StatefulSet revision rule.

use std::time::Duration;

use helmdeck::rollout::readiness::{self, Progress};
use serde_json::Value;

use crate::support::Sim;

/// What kubectl says about one workload, parsed from its output.
#[derive(Debug, PartialEq)]
enum Kubectl {
    Done,
    Waiting,
    Error,
}

fn kubectl_verdict(sim: &Sim, kind: &str, name: &str) -> (Kubectl, String) {
    let out = sim.kubectl(&[
        "rollout",
        "status",
        &format!("{kind}/{name}"),
        "-n",
        "apps",
        "--watch=false",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    if !out.status.success() {
        return (Kubectl::Error, stderr);
    }
    let done = [
        "successfully rolled out",
        "roll out complete",
        "rolling update complete",
    ]
    .iter()
    .any(|m| stdout.contains(m));
    (
        if done {
            Kubectl::Done
        } else {
            Kubectl::Waiting
        },
        stdout,
    )
}

/// The object as kubectl reads it; `Err` says why it could not be read.
fn get(sim: &Sim, kind: &str, name: &str) -> Result<Value, String> {
    let out = sim.kubectl(&["get", kind, name, "-n", "apps", "-o", "json"]);
    if !out.status.success() {
        return Err(format!(
            "kubectl get {kind}/{name}: {}",
            crate::support::text(&out)
        ));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("kubectl get {kind}/{name}: not JSON ({e})"))
}

fn helmdeck_verdict(kind: &str, obj: &Value) -> Progress {
    let r = match kind {
        "deployment" => readiness::deployment(&serde_json::from_value(obj.clone()).unwrap()),
        "statefulset" => readiness::statefulset(&serde_json::from_value(obj.clone()).unwrap()),
        _ => readiness::daemonset(&serde_json::from_value(obj.clone()).unwrap()),
    };
    r.progress
}

/// The one place helmdeck is stricter than kubectl (decisions.md): a StatefulSet with partition
/// 0 whose revisions differ.
fn revision_rule_applies(kind: &str, obj: &Value) -> bool {
    kind == "statefulset"
        && obj
            .pointer("/spec/updateStrategy/rollingUpdate/partition")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            == 0
        && obj.pointer("/status/currentRevision") != obj.pointer("/status/updateRevision")
}

/// Compares one workload on a state that did not change while kubectl looked at it.
/// `Ok(false)` when the state moved (the caller samples again later); `Err` when the workload
/// could not be read at all (the caller counts the sample as lost).
fn compare(sim: &Sim, kind: &str, name: &str, seen: &mut Vec<String>) -> Result<bool, String> {
    let before = get(sim, kind, name)?;
    let (kubectl, said) = kubectl_verdict(sim, kind, name);
    let after = get(sim, kind, name)?;
    if before["metadata"]["resourceVersion"] != after["metadata"]["resourceVersion"] {
        return Ok(false);
    }
    let ours = helmdeck_verdict(kind, &before);
    let agree = match (&ours, &kubectl) {
        (Progress::Done, Kubectl::Done)
        | (Progress::Waiting, Kubectl::Waiting)
        | (Progress::Failed, Kubectl::Error) => true,
        (Progress::Waiting, Kubectl::Done) => revision_rule_applies(kind, &before),
        _ => false,
    };
    assert!(
        agree,
        "{kind}/{name}: helmdeck {ours:?}, kubectl {kubectl:?} ({said})\nobject: {before}"
    );
    seen.push(format!("{kind}/{name}:{ours:?}"));
    Ok(true)
}

const WORKLOADS: [(&str, &str); 6] = [
    ("deployment", "demo-api"),
    ("deployment", "demo-web"),
    ("deployment", "demo-gpu-client"),
    ("deployment", "demo-monitoring"),
    ("statefulset", "demo-db"),
    ("daemonset", "demo-agent"),
];

/// Sampling rounds per scenario: early, mid and late in the rollout.
const ROUNDS: usize = 4;

/// Compared samples a scenario must yield of its `ROUNDS * WORKLOADS.len()`; fewer means
/// installs or reads failed and the agreement above was checked on too little.
const MIN_SAMPLES: usize = ROUNDS * WORKLOADS.len() * 3 / 4;

fn sample_scenario(scenario: &str, upgrade: bool) -> Vec<String> {
    sample_scenario_with(scenario, upgrade, &[])
}

/// `sample_scenario` with the demo chart installed with `extra` flags too (a story's `--set`).
fn sample_scenario_with(scenario: &str, upgrade: bool, extra: &[&str]) -> Vec<String> {
    let sim = Sim::start(scenario);
    let mut seen = Vec::new();
    let mut lost = Vec::new();
    let mut install = vec!["--timeout", "60s", "--set", "initJob.enabled=false"];
    install.extend_from_slice(extra);
    let out = sim.install_demo(&install);
    assert!(
        out.status.success(),
        "{scenario}: install: {}",
        crate::support::text(&out)
    );
    if upgrade {
        let out = sim.install_demo(&[
            "--timeout",
            "60s",
            "--set",
            "initJob.enabled=false",
            "--set",
            "image.tag=1.4.3",
        ]);
        assert!(
            out.status.success(),
            "{scenario}: upgrade: {}",
            crate::support::text(&out)
        );
    }
    for _ in 0..ROUNDS {
        for (kind, name) in WORKLOADS {
            let sampled = (0..5)
                .find_map(|_| match compare(&sim, kind, name, &mut seen) {
                    Ok(true) => Some(Ok(())),
                    Ok(false) => None,
                    Err(e) => Some(Err(e)),
                })
                .unwrap_or_else(|| Err(format!("{kind}/{name}: still changing after 5 reads")));
            if let Err(e) = sampled {
                lost.push(e);
            }
        }
        std::thread::sleep(Duration::from_millis(1500));
    }
    assert!(
        seen.len() >= MIN_SAMPLES,
        "{scenario}: only {} of {} samples compared (at least {MIN_SAMPLES} needed); lost: {lost:#?}",
        seen.len(),
        ROUNDS * WORKLOADS.len()
    );
    for (kind, name) in WORKLOADS {
        let of_it = seen
            .iter()
            .filter(|s| s.starts_with(&format!("{kind}/{name}:")))
            .count();
        assert!(
            of_it >= ROUNDS / 2,
            "{scenario}: {kind}/{name} compared {of_it} times in {ROUNDS} rounds; lost: {lost:#?}"
        );
    }
    eprintln!("{scenario}: {} samples compared", seen.len());
    seen
}

#[test]
fn readiness_agrees_with_kubectl_rollout_status_on_first_installs() {
    let mut all = Vec::new();
    for scenario in [
        "all-green",
        "optional-pending",
        "crashloop",
        "image-pull",
        "oom",
        "readiness-never",
        "progress-deadline",
    ] {
        all.extend(sample_scenario(scenario, false));
    }
    // The samples must cover both outcomes, or the test proves little.
    assert!(all.iter().any(|s| s.ends_with(":Done")), "{all:?}");
    assert!(all.iter().any(|s| s.ends_with(":Waiting")), "{all:?}");
    assert!(all.iter().any(|s| s.ends_with(":Failed")), "{all:?}");
}

/// Pods that fail as a kubelet and a scheduler make them fail (issue 21): a missing Secret,
/// claims that never bind, an initContainer in back-off. helmdeck waits where kubectl waits.
#[test]
fn readiness_agrees_with_kubectl_rollout_status_when_pods_cannot_start() {
    let mut all = Vec::new();
    for (scenario, set) in [
        ("missing-secret", "api.existingSecret=deck-db-credentials"),
        ("pvc-pending", "db.storageClassName=fast-ssd"),
        ("init-container-fails", "api.waitForDb=true"),
    ] {
        all.extend(sample_scenario_with(scenario, false, &["--set", set]));
    }
    for stuck in ["deployment/demo-api:Waiting", "statefulset/demo-db:Waiting"] {
        assert!(all.iter().any(|s| s.starts_with(stuck)), "{stuck}: {all:?}");
    }
}

#[test]
fn readiness_agrees_with_kubectl_rollout_status_on_upgrades() {
    let mut all = Vec::new();
    for scenario in [
        "never-observed",
        "surge-stuck",
        "sts-revision-stuck",
        "all-green",
    ] {
        all.extend(sample_scenario(scenario, true));
    }
    assert!(
        all.iter()
            .any(|s| s.starts_with("statefulset/demo-db:Waiting")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|s| s.starts_with("deployment/demo-web:Waiting")),
        "{all:?}"
    );
}

/// The upgrade step judges hooks from the release record Secret, not from `helm status`: the
/// hook phases it reports agree with `helm status -o json` (the oracle), and helmdeck never
/// asked helm for a status (a logging wrapper records every helm call it made).
#[test]
fn hooks_judged_from_the_record_agree_with_helm_status() {
    use std::os::unix::fs::PermissionsExt;

    use crate::support::{chart, finish, hook_phases, stdout_json, tool, with_init};

    let sim = Sim::start("hook-fails");
    let calls = sim.home().join("helm-calls.log");
    let wrapper = sim.home().join("helm-logging");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$1\" >> '{}'\nexec '{}' \"$@\"\n",
            calls.display(),
            tool("helm").display()
        ),
    )
    .expect("write the wrapper");
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let report = sim.home().join("report-oracle.json");
    let started = std::time::Instant::now();
    let out = sim
        .deploy_chart_command(&chart(), &report, &with_init(&["--timeout", "60s"]))
        .env("HELM_BIN", &wrapper)
        .output()
        .expect("run helmdeck");
    let run = finish(out, &report, started);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let called = std::fs::read_to_string(&calls).unwrap_or_default();
    assert!(
        called.lines().any(|l| l == "upgrade"),
        "the wrapper saw helm's upgrade: {called}"
    );
    assert!(
        !called.lines().any(|l| l == "status"),
        "no helm status after the upgrade: {called}"
    );

    let status = stdout_json(&sim.helm(&["status", "demo", "-n", "apps", "-o", "json"]));
    let oracle = hook_phases(&status);
    let reported: Vec<(String, String)> = run.report["hooks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| {
            (
                h["name"].as_str().unwrap_or("").to_string(),
                h["phase"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let ran: Vec<&(String, String)> = oracle
        .iter()
        .filter(|(_, phase)| phase == "Succeeded" || phase == "Failed")
        .collect();
    assert!(
        ran.iter().any(|(_, p)| p == "Failed"),
        "the scenario fails a hook: {oracle:?}"
    );
    for (name, phase) in ran {
        let ours = reported.iter().find(|(n, _)| n == name).map(|(_, p)| p);
        assert_eq!(
            ours,
            Some(phase),
            "{name}: report {reported:?}, helm {oracle:?}"
        );
    }
}
