//! A deploy told as events, for the UI's tests: each stage applies what the engine would have
//! sent, through [`DeployState::apply`], so the screens under test are built the real way.

use crate::engine::event::{
    Event, HookView, KubeEventView, Level, PodView, Step, StepOutcome, WorkloadView,
};
use crate::engine::state::{DeployState, PlanSummary};
use crate::engine::verdict;
use crate::helm::hooks::HookPhase;
use crate::ui::app::UiState;
use crate::ui::panes::DeployFrame;
use crate::ui::screen;
use crate::ui::theme::Theme;

/// The wall clock of the story's second 0.
pub const T0: &str = "2026-12-01T10:00:00Z";

pub struct Story {
    pub state: DeployState,
    pub t: f64,
    /// Every event sent, at its second (the record a replay test writes).
    pub events: Vec<(f64, Event)>,
}

fn t0() -> jiff::Timestamp {
    T0.parse().expect("a valid time")
}

pub fn wall(t: f64) -> String {
    let at = t0()
        .checked_add(jiff::SignedDuration::from_secs_f64(t))
        .expect("a time in range");
    at.to_string()
}

pub fn workload(kind: &str, name: &str) -> WorkloadView {
    WorkloadView {
        kind: kind.into(),
        namespace: "apps".into(),
        name: name.into(),
        optional: false,
        optional_because: None,
        ready: true,
        failed: false,
        message: match kind {
            "Deployment" => format!("deployment \"{name}\" successfully rolled out"),
            "DaemonSet" => format!("daemon set \"{name}\" successfully rolled out"),
            _ => "partitioned roll out complete: 2 new pods have been updated...".into(),
        },
        desired: 2,
        ready_replicas: 2,
        updated: 2,
        available: 2,
        generation: 2,
        created: Some(wall(-3600.0)),
        pod_causes: vec![],
        evidence: vec![],
        notes: vec![],
    }
}

pub fn pod(name: &str, owner: &str, phase: &str, ready: bool) -> PodView {
    PodView {
        name: name.into(),
        namespace: "apps".into(),
        owner: owner.into(),
        phase: phase.into(),
        ready,
        restarts: 0,
        node: Some("node-1".into()),
        current: true,
        causes: vec![],
        containers: vec!["app".into()],
        container_states: Vec::new(),
    }
}

fn hook(
    name: &str,
    events: &[&str],
    weight: i64,
    phase: HookPhase,
    start: f64,
    end: f64,
) -> HookView {
    HookView {
        name: name.into(),
        kind: "Job".into(),
        events: events.iter().map(|e| e.to_string()).collect(),
        weight,
        phase,
        started_at: Some(wall(start)),
        completed_at: Some(wall(end)),
    }
}

impl Story {
    pub fn new() -> Story {
        let plan = PlanSummary {
            release: "demo".into(),
            namespace: "apps".into(),
            chart: "/tmp/helmdeck-demo/deckapp".into(),
            context: Some("prod-eu".into()),
            only: None,
            init_job: Some("demo-init".into()),
            timeout_secs: 300,
            dry_run: false,
            ..PlanSummary::default()
        };
        Story {
            state: DeployState::new(plan),
            t: 0.0,
            events: vec![],
        }
    }

    pub fn at(&mut self, t: f64) -> &mut Self {
        self.t = t;
        self
    }

    pub fn send(&mut self, event: Event) -> &mut Self {
        self.state.apply(&event, self.t, &wall(self.t));
        self.events.push((self.t, event.clone()));
        self
    }

    fn note(&mut self, step: Step, text: &str) -> &mut Self {
        self.send(Event::Note {
            step,
            level: Level::Info,
            text: text.into(),
        })
    }

    fn helm(&mut self, text: &str) -> &mut Self {
        self.send(Event::HelmLine {
            stderr: false,
            text: text.into(),
        })
    }

    /// Preflight checking the cluster.
    pub fn preflight() -> Story {
        let mut s = Story::new();
        s.at(0.0).send(Event::StepStarted {
            step: Step::Preflight,
        });
        s.at(0.1)
            .note(Step::Preflight, "helm v4.1.4 (/usr/local/bin/helm)");
        s.at(0.3).note(
            Step::Preflight,
            "cluster https://10.0.0.1:6443 reachable (Kubernetes v1.35.2)",
        );
        s.at(0.4).note(Step::Preflight, "namespace apps exists");
        s.at(0.6);
        s
    }

    /// helm upgrade running, hooks not yet known.
    pub fn upgrade() -> Story {
        let mut s = Story::preflight();
        s.send(Event::Release {
            revision_before: Some(4),
            deployed_before: Some(4),
            revision: None,
            chart: None,
        });
        s.note(Step::Preflight, "release demo at revision 4 (deployed)");
        s.at(0.8).send(Event::StepEnded {
            step: Step::Preflight,
            outcome: StepOutcome::Succeeded,
        });
        s.send(Event::StepStarted {
            step: Step::Upgrade,
        });
        s.note(Step::Upgrade, "helm upgrade --install demo /tmp/helmdeck-demo/deckapp -n apps --set initJob.enabled=false --timeout 300s");
        s.at(1.2).send(Event::HelmLine { stderr: true, text: "\u{1b}[33mWARNING:\u{1b}[0m Kubernetes configuration file is group-readable. This is insecure.".into() });
        s.at(14.0);
        s
    }

    /// The rollout waiting on demo-web (CrashLoopBackOff) with the optional GPU client Pending.
    pub fn rollout() -> Story {
        let mut s = Story::upgrade();
        s.at(38.5);
        for line in [
            "Release \"demo\" has been upgraded. Happy Helming!",
            "NAME: demo",
            "LAST DEPLOYED: Tue Dec  1 10:00:38 2026",
            "NAMESPACE: apps",
            "STATUS: \u{1b}[1;32mdeployed\u{1b}[0m",
            "REVISION: 5",
            "TEST SUITE: None",
            "NOTES:",
            "deckapp 1.4.2 is deployed as release demo in namespace apps (revision 5).",
        ] {
            s.helm(line);
        }
        s.send(Event::HelmExited {
            code: Some(0),
            signal: None,
            cancelled: false,
            stderr_tail: vec![],
        });
        s.send(Event::Release {
            revision_before: None,
            deployed_before: None,
            revision: Some(5),
            chart: Some("deckapp 1.4.2".into()),
        });
        s.send(Event::Hooks {
            hooks: vec![
                hook(
                    "demo-migrate",
                    &["pre-install", "pre-upgrade"],
                    -5,
                    HookPhase::Succeeded,
                    1.5,
                    5.7,
                ),
                hook(
                    "demo-seed",
                    &["post-install", "post-upgrade"],
                    5,
                    HookPhase::Succeeded,
                    34.0,
                    37.2,
                ),
            ],
        });
        s.note(Step::Upgrade, "revision 5 deployed");
        s.at(38.6).send(Event::StepEnded {
            step: Step::Upgrade,
            outcome: StepOutcome::Succeeded,
        });
        s.send(Event::StepStarted {
            step: Step::Rollout,
        });
        s.note(Step::Rollout, "watching Deployments, StatefulSets, DaemonSets with app.kubernetes.io/instance=demo in apps");
        s.at(39.0);
        s.send(Event::Workload(workload("Deployment", "demo-api")));
        s.send(Event::Workload(workload("StatefulSet", "demo-db")));
        s.send(Event::Workload(WorkloadView {
            desired: 3,
            ready_replicas: 3,
            updated: 3,
            available: 3,
            ..workload("DaemonSet", "demo-agent")
        }));
        s.send(Event::Workload(WorkloadView {
            ready: false,
            message: "Waiting for deployment \"demo-web\" rollout to finish: 1 of 3 updated replicas are available...".into(),
            desired: 3,
            ready_replicas: 2,
            updated: 3,
            available: 1,
            pod_causes: vec!["pod demo-web-7c9f8-d34x2: CrashLoopBackOff (exit 137, 4 restarts)".into()],
            ..workload("Deployment", "demo-web")
        }));
        s.send(Event::Workload(WorkloadView {
            optional: true,
            optional_because: Some("annotation helmdeck.io/optional".into()),
            ready: false,
            message: "Waiting for deployment \"demo-gpu-client\" rollout to finish: 0 of 1 updated replicas are available...".into(),
            desired: 1,
            ready_replicas: 0,
            updated: 1,
            available: 0,
            pod_causes: vec!["pod demo-gpu-client-5b7d9-wsfmt: Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.".into()],
            ..workload("Deployment", "demo-gpu-client")
        }));
        s.send(Event::Workload(WorkloadView {
            optional: true,
            optional_because: Some("--optional Deployment/*-monitoring".into()),
            desired: 1,
            ready_replicas: 1,
            updated: 1,
            available: 1,
            ..workload("Deployment", "demo-monitoring")
        }));
        s.send(Event::Pod(pod(
            "demo-web-7c9f8-a12bc",
            "Deployment/demo-web",
            "Running",
            true,
        )));
        s.send(Event::Pod(PodView {
            restarts: 4,
            node: Some("node-2".into()),
            causes: vec!["CrashLoopBackOff (exit 137, 4 restarts)".into()],
            ..pod(
                "demo-web-7c9f8-d34x2",
                "Deployment/demo-web",
                "Running",
                false,
            )
        }));
        s.send(Event::Pod(PodView {
            node: Some("node-3".into()),
            ..pod(
                "demo-web-7c9f8-g56kk",
                "Deployment/demo-web",
                "Running",
                true,
            )
        }));
        s.send(Event::Pod(PodView {
            current: false,
            ..pod(
                "demo-web-5d4b1-o11qq",
                "Deployment/demo-web",
                "Running",
                true,
            )
        }));
        s.send(Event::Pod(PodView {
            node: None,
            causes: vec![
                "Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.".into(),
            ],
            ..pod(
                "demo-gpu-client-5b7d9-wsfmt",
                "Deployment/demo-gpu-client",
                "Pending",
                false,
            )
        }));
        s.send(Event::KubeEvent(KubeEventView {
            namespace: "apps".into(),
            object: "pod/demo-gpu-client-5b7d9-wsfmt".into(),
            kind: "Warning".into(),
            reason: "FailedScheduling".into(),
            message: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.".into(),
            count: 1,
            last_seen: Some(wall(39.2)),
        }));
        s.send(Event::KubeEvent(KubeEventView {
            namespace: "apps".into(),
            object: "pod/demo-web-7c9f8-d34x2".into(),
            kind: "Warning".into(),
            reason: "BackOff".into(),
            message: "Back-off restarting failed container app in pod demo-web-7c9f8-d34x2_apps"
                .into(),
            count: 4,
            last_seen: Some(wall(60.0)),
        }));
        s.send(Event::KubeEvent(KubeEventView {
            namespace: "apps".into(),
            object: "replicaset/demo-web-7c9f8".into(),
            kind: "Normal".into(),
            reason: "SuccessfulCreate".into(),
            message: "Created pod: demo-web-7c9f8-d34x2".into(),
            count: 1,
            last_seen: Some(wall(39.5)),
        }));
        s.at(62.0);
        s
    }

    /// demo-web recovered; the init Job runs and streams its log.
    pub fn init() -> Story {
        let mut s = Story::rollout();
        s.at(70.0);
        let web = s
            .state
            .workloads
            .get(&(
                "Deployment".to_string(),
                "apps".to_string(),
                "demo-web".to_string(),
            ))
            .cloned()
            .expect("demo-web");
        s.send(Event::Workload(WorkloadView {
            ready: true,
            message: "deployment \"demo-web\" successfully rolled out".into(),
            ready_replicas: 3,
            available: 3,
            pod_causes: vec![],
            ..web
        }));
        s.send(Event::StepEnded {
            step: Step::Rollout,
            outcome: StepOutcome::Succeeded,
        });
        s.at(70.1).send(Event::StepStarted { step: Step::Init });
        s.note(Step::Init, "created Job demo-init");
        s.at(71.0).send(Event::Pod(PodView {
            containers: vec!["init".into()],
            ..pod("demo-init-sw2q4", "Job/demo-init", "Running", true)
        }));
        for line in [
            "deck-api init --admin-email=admin@example.com --site-name=Deck Demo",
            "connected to postgres at demo-db:5432 (database deck)",
            "creating site config \"Deck Demo\" (locale en-US, timezone UTC) ... ok",
        ] {
            s.send(Event::Log {
                pod: "demo-init-sw2q4".into(),
                container: "init".into(),
                text: line.into(),
            });
        }
        s.at(73.0);
        s
    }

    fn verdict(&mut self) -> &mut Self {
        let v = verdict::decide(&self.state);
        self.send(Event::Verdict(v))
    }

    pub fn landed() -> Story {
        let mut s = Story::init();
        s.at(74.0);
        for line in [
            "creating admin user admin@example.com (role owner) ... ok",
            "init complete",
        ] {
            s.send(Event::Log {
                pod: "demo-init-sw2q4".into(),
                container: "init".into(),
                text: line.into(),
            });
        }
        s.send(Event::Pod(PodView {
            containers: vec!["init".into()],
            ..pod("demo-init-sw2q4", "Job/demo-init", "Succeeded", false)
        }));
        s.at(75.5).send(Event::StepEnded {
            step: Step::Init,
            outcome: StepOutcome::Succeeded,
        });
        s.verdict();
        s
    }

    /// `--test` after a landed deploy: two test pods, one failing, in the hooks pane.
    pub fn tested() -> Story {
        let mut s = Story::landed();
        s.state.verdict = None;
        s.at(76.0).send(Event::StepStarted { step: Step::Test });
        s.note(Step::Test, "helm test demo -n apps --logs --timeout 300s");
        let mut hooks = s.state.hooks.clone();
        for (name, phase, start, end) in [
            ("demo-test-api", HookPhase::Succeeded, 76.2, 77.0),
            ("demo-test-db", HookPhase::Failed, 77.1, 79.4),
        ] {
            hooks.push(HookView {
                kind: "Pod".into(),
                ..hook(name, &["test"], 0, phase, start, end)
            });
        }
        for line in [
            "TEST SUITE:     demo-test-api",
            "Phase:          Succeeded",
            "TEST SUITE:     demo-test-db",
            "Phase:          Failed",
            "",
            "POD LOGS: demo-test-api",
            "demo-api healthy",
            "",
            "POD LOGS: demo-test-db",
            "checking demo-db:5432",
            "GET /healthz: 503 Service Unavailable",
        ] {
            s.helm(line);
        }
        s.at(79.6).send(Event::Hooks { hooks });
        s.note(
            Step::Test,
            "test pod demo-test-api: Succeeded · demo-api healthy",
        );
        s.note(
            Step::Test,
            "test pod demo-test-db: Failed · GET /healthz: 503 Service Unavailable",
        );
        s.send(Event::StepEnded {
            step: Step::Test,
            outcome: StepOutcome::Failed {
                reason: "pod demo-test-db failed · test pod demo-test-db Failed (log: GET /healthz: 503 Service Unavailable)".into(),
            },
        });
        s.verdict();
        s
    }

    pub fn failed() -> Story {
        let mut s = Story::rollout();
        // What the rollout step gathers when the wait ends: the previous instance's log line.
        let web = s
            .state
            .workloads
            .values()
            .find(|w| w.name == "demo-web")
            .cloned()
            .expect("the rollout story has demo-web");
        s.at(338.5).send(Event::Workload(WorkloadView {
            evidence: vec![
                "log demo-web-7c9f8-d34x2/web (previous instance): Error: SESSION_SECRET is not set (required when NODE_ENV=production)".into(),
                "event pod/demo-web-7c9f8-d34x2 BackOff ×4: Back-off restarting failed container web".into(),
            ],
            ..web
        }));
        s.at(338.6).send(Event::StepEnded {
            step: Step::Rollout,
            outcome: StepOutcome::Failed {
                reason: "timed out after 300s; not ready: Deployment/demo-web: Waiting for deployment \"demo-web\" rollout to finish: 1 of 3 updated replicas are available... (pod demo-web-7c9f8-d34x2: CrashLoopBackOff (exit 137, 4 restarts))".into(),
            },
        });
        s.verdict();
        s
    }

    pub fn init_incomplete() -> Story {
        let mut s = Story::init();
        s.at(80.0);
        s.send(Event::Log {
            pod: "demo-init-sw2q4".into(),
            container: "init".into(),
            text: "error: admin@example.com already exists (role viewer); refusing to change roles"
                .into(),
        });
        s.send(Event::Pod(PodView {
            containers: vec!["init".into()],
            causes: vec!["Failed: Error (exit 2)".into()],
            ..pod("demo-init-sw2q4", "Job/demo-init", "Failed", false)
        }));
        s.at(81.0).send(Event::StepEnded {
            step: Step::Init,
            outcome: StepOutcome::Failed { reason: "Job demo-init failed: BackoffLimitExceeded; pod demo-init-sw2q4: Failed: Error (exit 2)".into() },
        });
        s.verdict();
        s
    }

    /// What a frame draws from at the story's current second.
    pub fn frame(&self) -> DeployFrame<'_> {
        let now = t0()
            .checked_add(jiff::SignedDuration::from_secs_f64(self.t))
            .expect("a time in range");
        DeployFrame {
            state: &self.state,
            theme: Theme::coloured(),
            title: Some("demo · crashloop"),
            context: self.state.plan.context.as_deref(),
            elapsed: self.t,
            now: Some(now),
            history: &[],
        }
    }

    pub fn render(&self, ui: &mut UiState, width: u16, height: u16) -> String {
        screen::render_to_string(&self.frame(), ui, width, height)
    }
}
