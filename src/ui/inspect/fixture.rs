//! Inspections for the screen's tests, mirroring what `helmdeck inspect` collects from the
//! simulator's `hook-fails` scenario (revision 2's post-upgrade seed hook fails with exit 1
//! over a deployed revision 1), and the same release left locked by a `pending-upgrade`
//! revision 3.

use crate::engine::event::{KubeEventView, PodView, WorkloadView};
use crate::helm::hooks::HookPhase;
use crate::helm::status::HookRecord;
use crate::inspect::model::{
    ContainerEvidence, HistoryRow, HookEvidence, HookPod, InspectedHook, Inspection, LockState,
    Operation, RevisionInfo, Storage, Termination,
};
use crate::ui::fixture as deploy_fixture;
use crate::ui::inspect::data::{InspectFrame, Inspected};
use crate::ui::inspect::screen;
use crate::ui::inspect::state::InspectUi;
use crate::ui::theme::Theme;
use helmdeck_core::helm::status::HistoryEntry;

/// When the release was read.
pub const NOW: &str = "2026-12-01T10:08:00Z";

pub const SEED_LOG: [&str; 5] = [
    "deck-api seed --fixtures=demo",
    "loading fixtures/demo/catalog.yaml: 120 products",
    "loading fixtures/demo/customers.yaml: 40 customers",
    "loading fixtures/demo/orders.yaml: row 17: customer_id 4711 not found",
    "error: fixtures/demo/orders.yaml: insert or update on table \"orders\" violates foreign key constraint \"orders_customer_id_fkey\"",
];

pub const UPGRADE_FAILED: &str = "Upgrade \"demo\" failed: post-upgrade hooks failed: resource Job/apps/demo-seed not ready. status: Failed, message: Job Failed. failed: 2/1";

fn at(hms: &str) -> String {
    format!("2026-12-01T{hms}Z")
}

fn history(revision: i64, updated: &str, status: &str, description: &str) -> HistoryRow {
    HistoryRow {
        entry: HistoryEntry {
            revision,
            updated: at(updated),
            status: status.into(),
            chart: "deckapp-0.4.2".into(),
            app_version: "1.4.2".into(),
            description: description.into(),
        },
        storage: Storage::Secret,
        object: format!("sh.helm.release.v1.demo.v{revision}"),
        written_at: None,
        error: None,
    }
}

fn hook(
    name: &str,
    events: &[&str],
    weight: i64,
    phase: HookPhase,
    times: Option<(&str, &str)>,
) -> HookRecord {
    HookRecord {
        name: name.into(),
        kind: "Job".into(),
        path: format!(
            "deckapp/templates/{}-job.yaml",
            name.trim_start_matches("demo-")
        ),
        events: events.iter().map(|e| e.to_string()).collect(),
        weight,
        phase,
        started_at: times.map(|(s, _)| at(s)),
        completed_at: times.map(|(_, c)| at(c)),
        delete_policies: vec!["before-hook-creation".into()],
    }
}

fn event(object: &str, kind: &str, reason: &str, message: &str, seen: &str) -> KubeEventView {
    KubeEventView {
        object: object.into(),
        namespace: "apps".into(),
        kind: kind.into(),
        reason: reason.into(),
        message: message.into(),
        count: 1,
        last_seen: Some(at(seen)),
    }
}

fn seed_pod(name: &str, node: &str, started: &str, finished: &str) -> HookPod {
    HookPod {
        name: name.into(),
        phase: "Failed".into(),
        node: Some(node.into()),
        created: Some(at(started)),
        causes: vec!["Failed: Error (exit 1)".into()],
        containers: vec![ContainerEvidence {
            name: "seed".into(),
            init: false,
            restarts: 0,
            state: "terminated".into(),
            terminated: Some(Termination {
                exit_code: 1,
                signal: None,
                reason: Some("Error".into()),
                message: None,
                finished_at: Some(at(finished)),
            }),
            last_terminated: None,
            log: SEED_LOG.iter().map(|l| l.to_string()).collect(),
            log_previous: false,
            log_error: None,
        }],
    }
}

fn seed_evidence() -> HookEvidence {
    let mut events = Vec::new();
    for (pod, node, t) in [
        ("demo-seed-pg4z6", "node-1", "10:00:08"),
        ("demo-seed-vk599", "node-2", "10:00:10"),
    ] {
        events.push(event(
            "job/demo-seed",
            "Normal",
            "SuccessfulCreate",
            &format!("Created pod: {pod}"),
            t,
        ));
        events.push(event(
            &format!("pod/{pod}"),
            "Normal",
            "Scheduled",
            &format!("Successfully assigned apps/{pod} to {node}"),
            t,
        ));
        events.push(event(
            &format!("pod/{pod}"),
            "Normal",
            "Pulled",
            "Successfully pulled image \"ghcr.io/example/deck-api:1.4.2\" in 812ms (812ms including waiting). Image size: 78465628 bytes.",
            t,
        ));
        events.push(event(
            &format!("pod/{pod}"),
            "Normal",
            "Started",
            "Started container seed",
            t,
        ));
    }
    events.push(event(
        "job/demo-seed",
        "Warning",
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
        "10:00:11",
    ));
    HookEvidence {
        kind: "Job".into(),
        name: "demo-seed".into(),
        found: true,
        created: Some(at("10:00:08")),
        status: Some(
            "Failed: BackoffLimitExceeded: Job has reached the specified backoff limit".into(),
        ),
        active: 0,
        succeeded: 0,
        failed: 2,
        pods: vec![
            seed_pod("demo-seed-pg4z6", "node-1", "10:00:08", "10:00:09"),
            seed_pod("demo-seed-vk599", "node-2", "10:00:10", "10:00:11"),
        ],
        events,
        notes: vec![],
    }
}

/// The deploy screen's rolled-out workload, as inspect reads it at revision 1.
fn workload(kind: &str, name: &str, n: i32, optional: bool) -> WorkloadView {
    WorkloadView {
        optional,
        optional_because: optional.then(|| "annotation helmdeck.io/optional".into()),
        desired: n,
        ready_replicas: n,
        updated: n,
        available: n,
        generation: 1,
        created: Some(at("09:52:12")),
        ..deploy_fixture::workload(kind, name)
    }
}

fn pod(name: &str, owner: &str, node: &str) -> PodView {
    PodView {
        node: Some(node.into()),
        ..deploy_fixture::pod(name, owner, "Running", true)
    }
}

/// `hook-fails`, as inspected after the failed upgrade.
pub fn hook_fails() -> Inspection {
    let workloads = vec![
        workload("DaemonSet", "demo-agent", 3, false),
        workload("Deployment", "demo-api", 2, false),
        workload("StatefulSet", "demo-db", 2, false),
        workload("Deployment", "demo-web", 2, false),
        workload("Deployment", "demo-gpu-client", 1, true),
        workload("Deployment", "demo-monitoring", 1, true),
    ];
    let pods = vec![
        pod("demo-agent-5qk9t", "DaemonSet/demo-agent", "node-2"),
        pod("demo-agent-c4wdj", "DaemonSet/demo-agent", "node-3"),
        pod("demo-agent-vbgm8", "DaemonSet/demo-agent", "node-1"),
        pod("demo-api-p8gjfftcjz-8wdcl", "Deployment/demo-api", "node-2"),
        pod("demo-api-p8gjfftcjz-l4db9", "Deployment/demo-api", "node-3"),
        pod("demo-db-0", "StatefulSet/demo-db", "node-1"),
        pod("demo-db-1", "StatefulSet/demo-db", "node-3"),
        pod("demo-web-thwxjgq54f-dk89w", "Deployment/demo-web", "node-3"),
        pod("demo-web-thwxjgq54f-qc69v", "Deployment/demo-web", "node-2"),
        pod(
            "demo-gpu-client-t87qsr9qzr-p6cxx",
            "Deployment/demo-gpu-client",
            "node-1",
        ),
        pod(
            "demo-monitoring-z4gqzbmnd6-95xdh",
            "Deployment/demo-monitoring",
            "node-3",
        ),
    ];
    let events = vec![
        event(
            "deployment/demo-api",
            "Normal",
            "ScalingReplicaSet",
            "Scaled up replica set demo-api-p8gjfftcjz from 0 to 2",
            "09:52:12",
        ),
        event(
            "replicaset/demo-api-p8gjfftcjz",
            "Normal",
            "SuccessfulCreate",
            "Created pod: demo-api-p8gjfftcjz-8wdcl",
            "09:52:12",
        ),
        event(
            "pod/demo-api-p8gjfftcjz-8wdcl",
            "Normal",
            "Started",
            "Started container app",
            "09:52:13",
        ),
    ];
    Inspection {
        release: "demo".into(),
        namespace: "apps".into(),
        requested: None,
        revision: Some(2),
        error: None,
        init_job: None,
        history: vec![
            history(1, "09:52:10.521534127", "deployed", "Install complete"),
            history(2, "10:00:00.747860519", "failed", UPGRADE_FAILED),
        ],
        lock: None,
        info: Some(RevisionInfo {
            revision: 2,
            status: "failed".into(),
            description: UPGRADE_FAILED.into(),
            chart: "deckapp-0.4.2".into(),
            app_version: "1.4.2".into(),
            first_deployed: Some(at("09:52:10.521534127")),
            last_deployed: Some(at("10:00:00.747860519")),
            operation: Operation::Upgrade,
            storage: Storage::Secret,
            object: "sh.helm.release.v1.demo.v2".into(),
        }),
        hooks: vec![
            InspectedHook {
                record: hook(
                    "demo-migrate",
                    &["pre-install", "pre-upgrade"],
                    -5,
                    HookPhase::Succeeded,
                    Some(("10:00:00.822067386", "10:00:02.728896255")),
                ),
                in_this_run: true,
                live: None,
            },
            InspectedHook {
                record: hook(
                    "demo-init",
                    &["post-install", "post-upgrade"],
                    0,
                    HookPhase::Succeeded,
                    Some(("10:00:05.762279475", "10:00:08.128633626")),
                ),
                in_this_run: true,
                live: None,
            },
            InspectedHook {
                record: hook(
                    "demo-seed",
                    &["post-install", "post-upgrade"],
                    5,
                    HookPhase::Failed,
                    Some(("10:00:08.140103982", "10:00:11.82879834")),
                ),
                in_this_run: true,
                live: Some(seed_evidence()),
            },
        ],
        workloads,
        pods,
        events,
        manifest: None,
        warnings: vec![],
    }
}

/// The same release after an upgrade to revision 3 was interrupted while its pre-upgrade
/// migrate hook ran: revision 3 is `pending-upgrade` and holds the lock.
pub fn locked() -> Inspection {
    let mut i = hook_fails();
    i.history.push(history(
        3,
        "09:48:00",
        "pending-upgrade",
        "Preparing upgrade",
    ));
    // Revision 3 came after revision 2, twenty minutes before the release was read.
    i.history[0].updated = at("09:30:10.521534127");
    i.history[1].updated = at("09:40:00.747860519");
    i.revision = Some(3);
    i.lock = Some(LockState {
        revision: 3,
        status: "pending-upgrade".into(),
        since: Some(at("09:48:00")),
        age_seconds: Some(1200),
        last_deployed: Some(1),
        command: "helm rollback demo 1 -n apps".into(),
        note: "helm refuses every other operation on demo while revision 3 is pending-upgrade; if no helm process is still working on it, roll back to revision 1 (helmdeck never runs this)".into(),
    });
    i.info = Some(RevisionInfo {
        revision: 3,
        status: "pending-upgrade".into(),
        description: "Preparing upgrade".into(),
        last_deployed: Some(at("09:48:00")),
        object: "sh.helm.release.v1.demo.v3".into(),
        ..i.info.clone().expect("revision 2 decoded")
    });
    let migrate_pod = HookPod {
        name: "demo-migrate-x7k2p".into(),
        phase: "Running".into(),
        node: Some("node-2".into()),
        created: Some(at("09:48:00")),
        causes: vec![],
        containers: vec![ContainerEvidence {
            name: "migrate".into(),
            state: "running".into(),
            log: vec![
                "deck-api migrate up".into(),
                "connected to postgres at demo-db:5432 (database deck)".into(),
                "schema at version 0043, 1 migration pending".into(),
                "applying 0044_backfill_order_totals ...".into(),
            ],
            ..ContainerEvidence::default()
        }],
    };
    // Revision 3's record holds the same hooks, fresh: none has run but migrate, still running.
    for h in &mut i.hooks {
        (h.record.phase, h.record.started_at, h.record.completed_at) =
            (HookPhase::NeverRan, None, None);
        h.live = None;
    }
    let migrate = &mut i.hooks[0];
    migrate.record.phase = HookPhase::Running;
    migrate.record.started_at = Some(at("09:48:00.2"));
    migrate.live = Some(HookEvidence {
        kind: "Job".into(),
        name: "demo-migrate".into(),
        found: true,
        created: Some(at("09:48:00")),
        status: Some("Running".into()),
        active: 1,
        pods: vec![migrate_pod],
        ..HookEvidence::default()
    });
    i
}

pub fn data(i: Inspection) -> Inspected {
    Inspected::new(i, Some(NOW.parse().expect("a valid time")))
}

/// One frame at `w`x`h`, without colour (the snapshot holds the text).
pub fn render(data: &Inspected, ui: &mut InspectUi, w: u16, h: u16) -> String {
    let ctx = InspectFrame {
        data,
        theme: Theme::plain(),
    };
    screen::render_to_string(&ctx, ui, w, h)
}

/// The seed hook with helm's default `backoffLimit: 6`: seven pods, each created, scheduled,
/// pulled, started and failed, then the Job's Warning (43 events).
fn seed_evidence_backoff_six() -> HookEvidence {
    let nodes = ["node-1", "node-2", "node-3"];
    let names = [
        "demo-seed-pg4z6",
        "demo-seed-vk599",
        "demo-seed-2xq8r",
        "demo-seed-h7c4m",
        "demo-seed-t9wlz",
        "demo-seed-bn5kd",
        "demo-seed-r3fjs",
    ];
    let mut events = Vec::new();
    let mut pods = Vec::new();
    for (n, pod) in names.iter().enumerate() {
        let node = nodes[n % nodes.len()];
        let (start, end) = (
            format!("10:0{}:{:02}", n / 2, (n % 2) * 30 + 8),
            format!("10:0{}:{:02}", n / 2, (n % 2) * 30 + 11),
        );
        let job = "job/demo-seed";
        let it = format!("pod/{pod}");
        for (object, reason, message) in [
            (job, "SuccessfulCreate", format!("Created pod: {pod}")),
            (
                &it,
                "Scheduled",
                format!("Successfully assigned apps/{pod} to {node}"),
            ),
            (
                &it,
                "Pulling",
                "Pulling image \"ghcr.io/example/deck-api:1.4.2\"".into(),
            ),
            (
                &it,
                "Pulled",
                "Successfully pulled image \"ghcr.io/example/deck-api:1.4.2\" in 812ms (812ms including waiting). Image size: 78465628 bytes.".into(),
            ),
            (&it, "Created", "Created container seed".into()),
            (&it, "Started", "Started container seed".into()),
        ] {
            events.push(event(object, "Normal", reason, &message, &start));
        }
        pods.push(seed_pod(pod, node, &start, &end));
    }
    events.push(event(
        "job/demo-seed",
        "Warning",
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
        "10:03:41",
    ));
    HookEvidence {
        failed: 7,
        pods,
        events,
        ..seed_evidence()
    }
}

/// `hook-fails` with the seed hook at helm's default `backoffLimit: 6` (seven failed pods),
/// and a ServiceAccount hook before the migration, as charts create one for their hook Jobs.
pub fn backoff_six() -> Inspection {
    let mut i = hook_fails();
    let seed = i.hooks.iter_mut().find(|h| h.record.name == "demo-seed");
    if let Some(seed) = seed {
        seed.record.completed_at = Some(at("10:03:41.82879834"));
        seed.live = Some(seed_evidence_backoff_six());
    }
    let mut account = hook(
        "demo-hook-serviceaccount",
        &["pre-install", "pre-upgrade"],
        -10,
        HookPhase::Succeeded,
        Some(("10:00:00.801234567", "10:00:00.81345678")),
    );
    account.kind = "ServiceAccount".into();
    account.path = "deckapp/templates/hook-serviceaccount.yaml".into();
    i.hooks.insert(
        0,
        InspectedHook {
            record: account,
            in_this_run: true,
            live: None,
        },
    );
    i
}
