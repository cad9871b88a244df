//! Micro-benchmarks (criterion): readiness judging over 20,000 objects, and one TUI frame with
//! 1,000 workload rows and 10,000 helm lines (issue 14's target: a frame ≤ 5 ms).
//!
//! The cases are the real code paths (`rollout::readiness`, `ui::screen::draw` on ratatui's
//! TestBackend). Run: `cargo bench --bench judge_frame`; under `cargo test --all-targets`
//! criterion runs each case once, as a test.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use serde_json::json;

use helmdeck::engine::event::{Event, Step, WorkloadView};
use helmdeck::engine::state::{DeployState, PlanSummary};
use helmdeck::rollout::readiness::{self, Progress};
use helmdeck::ui::app::UiState;
use helmdeck::ui::panes::DeployFrame;
use helmdeck::ui::theme::Theme;

fn objects(n: usize) -> (Vec<Deployment>, Vec<StatefulSet>, Vec<DaemonSet>) {
    let conditions = json!([{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
        {"type": "Available", "status": "True"}]);
    let mut d = Vec::new();
    let mut s = Vec::new();
    let mut ds = Vec::new();
    for i in 0..n {
        let ready = (i % 3) as i32 + 8;
        let meta = json!({"name": format!("w{i}"), "generation": 1});
        match i % 10 {
            0..=6 => d.push(
                serde_json::from_value(json!({"metadata": meta, "spec": {"replicas": 10},
                "status": {"observedGeneration": 1, "replicas": 10, "updatedReplicas": 10,
                    "readyReplicas": ready, "availableReplicas": ready, "conditions": conditions}}))
                .unwrap(),
            ),
            7 | 8 => s.push(
                serde_json::from_value(json!({"metadata": meta, "spec": {"replicas": 10},
                "status": {"observedGeneration": 1, "replicas": 10, "readyReplicas": ready,
                    "currentReplicas": 10, "updatedReplicas": 10,
                    "currentRevision": "a", "updateRevision": "a"}}))
                .unwrap(),
            ),
            _ => ds.push(
                serde_json::from_value(json!({"metadata": meta,
                "status": {"observedGeneration": 1, "desiredNumberScheduled": 10,
                    "updatedNumberScheduled": 10, "numberAvailable": ready, "numberReady": ready}}))
                .unwrap(),
            ),
        }
    }
    (d, s, ds)
}

fn state(rows: usize, helm_lines: usize) -> DeployState {
    let mut state = DeployState::new(PlanSummary {
        release: "bench".into(),
        namespace: "apps".into(),
        chart: "./bench".into(),
        timeout_secs: 300,
        ..Default::default()
    });
    let mut t = 0.0;
    let mut send = |state: &mut DeployState, e: Event| {
        t += 0.001;
        state.apply(&e, t, "12:00:00");
    };
    send(
        &mut state,
        Event::StepStarted {
            step: Step::Upgrade,
        },
    );
    for i in 0..helm_lines {
        send(
            &mut state,
            Event::HelmLine {
                stderr: i % 17 == 0,
                text: format!(
                    "client.go:{i}: creating 1 resource(s) for workload w{:04}",
                    i % rows.max(1)
                ),
            },
        );
    }
    send(
        &mut state,
        Event::StepStarted {
            step: Step::Rollout,
        },
    );
    for i in 0..rows {
        let ready = i % 4 != 0;
        send(
            &mut state,
            Event::Workload(WorkloadView {
                kind: ["Deployment", "StatefulSet", "DaemonSet"][i % 3].into(),
                namespace: "apps".into(),
                name: format!("w{i:04}-svc"),
                optional: i % 50 == 1,
                optional_because: (i % 50 == 1).then(|| "--optional *-svc".into()),
                ready,
                failed: false,
                message: if ready {
                    "successfully rolled out".into()
                } else {
                    "Waiting for 3 pods to be ready...".into()
                },
                desired: 10,
                ready_replicas: if ready { 10 } else { 7 },
                updated: 10,
                available: if ready { 10 } else { 7 },
                generation: 1,
                created: None,
                pod_causes: if ready {
                    vec![]
                } else {
                    vec!["w-pod-1: Back-off restarting failed container".into()]
                },
                evidence: vec![],
                notes: vec![],
            }),
        );
    }
    state
}

fn readiness(c: &mut Criterion) {
    let n = 20_000;
    let (d, s, ds) = objects(n);
    let mut group = c.benchmark_group("readiness");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("20000 workloads", |b| {
        b.iter(|| {
            let mut done = 0;
            for x in &d {
                done += (readiness::deployment(x).progress == Progress::Done) as usize;
            }
            for x in &s {
                done += (readiness::statefulset(x).progress == Progress::Done) as usize;
            }
            for x in &ds {
                done += (readiness::daemonset(x).progress == Progress::Done) as usize;
            }
            black_box(done)
        })
    });
    group.finish();
}

fn frame(c: &mut Criterion) {
    let (rows, lines) = (1_000, 10_000);
    let state = state(rows, lines);
    assert_eq!(
        state.gating().count() + state.optional().count(),
        rows,
        "every row is in the state"
    );
    let mut group = c.benchmark_group("frame");
    for (w, h) in [(160u16, 48u16), (240, 70)] {
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
        let mut ui = UiState::new();
        let frame = DeployFrame {
            state: &state,
            theme: Theme::coloured(),
            title: Some("bench"),
            context: None,
            elapsed: 12.0,
            now: None,
            history: &[],
        };
        let id = format!("{w}x{h}, {rows} rows + {lines} helm lines");
        group.bench_function(id, |b| {
            b.iter(|| {
                terminal
                    .draw(|f| helmdeck::ui::screen::draw(f, &frame, &mut ui))
                    .unwrap();
            })
        });
    }
    group.finish();
}

criterion_group!(benches, readiness, frame);
criterion_main!(benches);
