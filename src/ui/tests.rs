//! Whole screens through ratatui's `TestBackend`, as insta snapshots, at 80x24 and 160x48:
//! each step in progress, each verdict, a drill-down with logs, the help overlay, a filtered
//! list; and hostile text that must stay inert without breaking the layout.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Modifier;

use crate::engine::event::{Event, KubeEventView, PodView, Step, WorkloadView};
use crate::engine::logs::LogMsg;
use crate::engine::state::DeployState;
use crate::ui::app::UiState;
use crate::ui::deck::{Effect, FilterSlot, Pane};
use crate::ui::fit;
use crate::ui::fixture::{Story, pod, workload};
use crate::ui::testkit::{Keys, SIZES, assert_inert, find_text, press, row_text, type_text};

impl Keys for UiState {
    type Data = DeployState;
    type Effect = Effect;
    fn key(&mut self, key: KeyEvent, state: &DeployState) -> Effect {
        self.on_key(key, state)
    }
}

/// Snapshots of the story at both sizes, with a fresh UI state each (prepared by `setup`).
fn screens(name: &str, story: &Story, setup: impl Fn(&mut UiState, &DeployState)) {
    for (w, h) in SIZES {
        let mut ui = UiState::new();
        // A first frame, as the live loop draws before any key.
        story.render(&mut ui, w, h);
        setup(&mut ui, &story.state);
        let screen = story.render(&mut ui, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
    }
}

#[test]
fn step_preflight() {
    screens("preflight", &Story::preflight(), |_, _| {});
}

#[test]
fn step_upgrade() {
    screens("upgrade", &Story::upgrade(), |_, _| {});
}

#[test]
fn step_rollout() {
    screens("rollout", &Story::rollout(), |_, _| {});
}

#[test]
fn step_init() {
    screens("init", &Story::init(), |_, _| {});
}

#[test]
fn verdict_landed() {
    screens("landed", &Story::landed(), |_, _| {});
}

#[test]
fn verdict_failed() {
    screens("failed", &Story::failed(), |_, _| {});
}

#[test]
fn verdict_live_init_incomplete() {
    screens("init_incomplete", &Story::init_incomplete(), |_, _| {});
}

/// Enter on demo-web, then down to its crash-looping pod, whose log has streamed in.
#[test]
fn drill_down_into_a_workload_with_its_log() {
    let story = Story::failed();
    for (w, h) in SIZES {
        let mut ui = UiState::new();
        story.render(&mut ui, w, h);
        // Rows: demo-agent, demo-api, demo-db, demo-web, then the optional ones.
        for _ in 0..3 {
            press(&mut ui, &story.state, KeyCode::Char('j'));
        }
        press(&mut ui, &story.state, KeyCode::Enter);
        press(&mut ui, &story.state, KeyCode::Down);
        let wanted = ui
            .wanted_log(&story.state)
            .expect("a log is wanted for the selected pod");
        assert_eq!(
            (wanted.pod.as_str(), wanted.container.as_str()),
            ("demo-web-7c9f8-d34x2", "app")
        );
        ui.log.apply(LogMsg::Started {
            id: 1,
            pod: wanted.pod.clone(),
            container: wanted.container.clone(),
        });
        for line in [
            "2026-12-01T10:00:52Z starting web on :8080",
            "2026-12-01T10:00:52Z loading config from /etc/deck/web.yaml",
            "2026-12-01T10:00:53Z fatal: cannot allocate 2GiB cache (limit 512Mi)",
        ] {
            ui.log.apply(LogMsg::Line {
                id: 1,
                text: line.into(),
            });
        }
        ui.log.apply(LogMsg::Line {
            id: 0,
            text: "a line of a stream that was replaced".into(),
        });
        ui.log.apply(LogMsg::Ended {
            id: 1,
            why: "end of log (the container is not running)".into(),
        });
        let screen = story.render(&mut ui, w, h);
        assert!(screen.contains("fatal: cannot allocate"), "{screen}");
        assert!(!screen.contains("was replaced"));
        insta::assert_snapshot!(format!("drilldown_{w}x{h}"), screen);
    }
}

/// Enter on the init Job in the hooks pane: its pod and the log the init step streamed.
#[test]
fn drill_down_into_the_init_job() {
    let story = Story::init_incomplete();
    let mut ui = UiState::new();
    story.render(&mut ui, 160, 48);
    press(&mut ui, &story.state, KeyCode::Tab);
    press(&mut ui, &story.state, KeyCode::Char('G'));
    press(&mut ui, &story.state, KeyCode::Enter);
    assert_eq!(
        ui.wanted_log(&story.state),
        None,
        "the engine already streamed this log"
    );
    let screen = story.render(&mut ui, 160, 48);
    assert!(screen.contains("refusing to change roles"), "{screen}");
    insta::assert_snapshot!("drilldown_init_job_160x48", screen);
}

/// A pod with initContainers: the drill-down lists every container (initContainers marked,
/// with their state) and `c` steps through them, initContainers first.
#[test]
fn drill_down_lists_init_containers_and_c_cycles_through_them() {
    use crate::engine::event::ContainerView;
    let mut story = Story::init_incomplete();
    let state = |name: &str, init: bool, state: &str, restarts: i32| ContainerView {
        name: name.into(),
        init,
        state: state.into(),
        restarts,
    };
    for (container, line) in [
        ("wait-db", "demo-db:5432 accepting connections"),
        ("configure", "error: site setup refused"),
    ] {
        story.send(Event::Log {
            pod: "demo-init-sw2q4".into(),
            container: container.into(),
            text: line.into(),
        });
    }
    story.send(Event::Pod(PodView {
        containers: vec!["init".into()],
        causes: vec!["init container configure: CrashLoopBackOff (exit 1, 3 restarts)".into()],
        container_states: vec![
            state("wait-db", true, "completed", 0),
            state("configure", true, "waiting: CrashLoopBackOff (exit 1)", 3),
            state("init", false, "waiting: PodInitializing", 0),
        ],
        ..pod("demo-init-sw2q4", "Job/demo-init", "Pending", false)
    }));
    let mut ui = UiState::new();
    story.render(&mut ui, 160, 48);
    press(&mut ui, &story.state, KeyCode::Tab);
    press(&mut ui, &story.state, KeyCode::Char('G'));
    press(&mut ui, &story.state, KeyCode::Enter);
    let first = story.render(&mut ui, 160, 48);
    assert!(
        first.contains("CONTAINERS ▸init wait-db completed · init configure waiting: CrashLoopBackOff (exit 1), 3 restarts · init waiting: PodInitializing"),
        "{first}"
    );
    assert!(
        first.contains("LOG demo-init-sw2q4 / init wait-db (1 of 3, c next)"),
        "{first}"
    );
    assert!(
        first.contains("demo-db:5432 accepting connections"),
        "{first}"
    );
    press(&mut ui, &story.state, KeyCode::Char('c'));
    let second = story.render(&mut ui, 160, 48);
    assert!(
        second.contains("LOG demo-init-sw2q4 / init configure (2 of 3, c next)"),
        "{second}"
    );
    assert!(second.contains("error: site setup refused"), "{second}");
    insta::assert_snapshot!("drilldown_init_containers_160x48", second);
    press(&mut ui, &story.state, KeyCode::Char('c'));
    let third = story.render(&mut ui, 160, 48);
    assert!(
        third.contains("LOG demo-init-sw2q4 / init (3 of 3, c next)"),
        "{third}"
    );
    assert!(third.contains("refusing to change roles"), "{third}");
}

#[test]
fn help_overlay() {
    screens("help", &Story::rollout(), |ui, state| {
        press(ui, state, KeyCode::Char('?'));
    });
}

#[test]
fn filtered_workloads() {
    screens("filtered", &Story::rollout(), |ui, state| {
        press(ui, state, KeyCode::Char('/'));
        type_text(ui, state, "gpu");
        press(ui, state, KeyCode::Enter);
    });
}

#[test]
fn filtered_helm_output() {
    let story = Story::landed();
    let mut ui = UiState::new();
    story.render(&mut ui, 80, 24);
    press(&mut ui, &story.state, KeyCode::BackTab);
    press(&mut ui, &story.state, KeyCode::Char('/'));
    type_text(&mut ui, &story.state, "revision");
    let screen = story.render(&mut ui, 80, 24);
    insta::assert_snapshot!("filtered_helm_editing_80x24", screen);
}

#[test]
fn cancel_confirmation() {
    let story = Story::rollout();
    let mut ui = UiState::new();
    press(&mut ui, &story.state, KeyCode::Char('q'));
    let screen = story.render(&mut ui, 80, 24);
    insta::assert_snapshot!("confirm_80x24", screen);
}

/// A watch runs no helm: its stop prompt and notices never say helm gets a signal.
#[test]
fn a_watchs_cancel_never_mentions_helm() {
    let mut story = Story::rollout();
    story.state.plan.watch = true;
    let mut ui = UiState::new();
    press(&mut ui, &story.state, KeyCode::Char('q'));
    let asked = story.render(&mut ui, 80, 24);
    assert!(asked.contains("Stop watching?"), "{asked}");
    assert!(!asked.contains("SIGTERM"), "{asked}");
    press(&mut ui, &story.state, KeyCode::Char('y'));
    assert!(ui.cancelling);
    let stopping = story.render(&mut ui, 80, 24);
    assert!(stopping.contains("stopping the watch"), "{stopping}");
    assert!(!stopping.contains("SIGTERM"), "{stopping}");
    press(&mut ui, &story.state, KeyCode::Char('q'));
    let notice = ui.notice.clone().unwrap_or_default();
    assert!(
        notice.contains("stopping the watch") && !notice.contains("helm"),
        "{notice}"
    );
}

/// A terminal too small for the layout says so rather than drawing garbage.
#[test]
fn tiny_terminal() {
    let story = Story::rollout();
    let screen = story.render(&mut UiState::new(), 30, 8);
    assert!(screen.contains("helmdeck needs at"), "{screen}");
}

#[test]
fn optional_rows_are_dim_and_never_red() {
    let story = Story::rollout();
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 48)).unwrap();
    let mut ui = UiState::new();
    terminal
        .draw(|f| crate::ui::screen::draw(f, &story.frame(), &mut ui))
        .unwrap();
    let buf = terminal.backend().buffer();
    let (x, y) = find_text(buf, "demo-gpu-client", 0);
    let line = row_text(buf, y);
    let cell = &buf[(x, y)];
    assert!(cell.modifier.contains(Modifier::DIM), "{:?}", cell.style());
    assert!(line.contains("optional ·"), "{line}");
    let status_x = line[..line.find("optional ·").unwrap()].chars().count() as u16;
    assert_ne!(buf[(status_x, y)].fg, ratatui::style::Color::Red);
    // The blocker, by contrast, is not dim.
    let (x, y) = find_text(buf, "demo-web", 0);
    assert!(!buf[(x, y)].modifier.contains(Modifier::DIM));
}

/// Names, events, logs and helm lines carrying escapes, BiDi controls, replacement characters
/// (what invalid UTF-8 decodes to) and a 1 MB line: all inert, and every row keeps its width.
#[test]
fn hostile_text_renders_inert() {
    let mut story = Story::rollout();
    let evil = "evil\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mred\u{202e}txt.exe\u{2066}\u{fffd}\u{fffd}\u{9b}31m";
    let huge = "x".repeat(1 << 20);
    let invalid = String::from_utf8_lossy(b"bad \xff\xfe bytes \xc3\x28").into_owned();
    story.send(Event::Workload(WorkloadView {
        ready: false,
        message: format!("{evil} {huge}"),
        pod_causes: vec![format!("pod {evil}: {invalid}")],
        ..workload("Deployment", &format!("demo-{evil}-名前-{huge}"))
    }));
    story.send(Event::Pod(PodView {
        causes: vec![huge.clone()],
        ..pod(
            &format!("p-{evil}"),
            "Deployment/demo-web",
            "Running",
            false,
        )
    }));
    story.send(Event::KubeEvent(KubeEventView {
        object: format!("pod/{evil}"),
        namespace: "apps".into(),
        kind: "Warning".into(),
        reason: evil.into(),
        message: format!("{evil}{huge}"),
        count: 2,
        last_seen: None,
    }));
    story.send(Event::HelmLine {
        stderr: true,
        text: format!("{evil} {invalid}"),
    });
    story.send(Event::HelmLine {
        stderr: false,
        text: huge.clone(),
    });
    story.send(Event::Note {
        step: Step::Rollout,
        level: crate::engine::event::Level::Warn,
        text: evil.into(),
    });
    for (w, h) in SIZES {
        let mut ui = UiState::new();
        story.render(&mut ui, w, h);
        // Into demo-web's drill-down, where the hostile pod and event are.
        for _ in 0..4 {
            press(&mut ui, &story.state, KeyCode::Char('j'));
        }
        let main = story.render(&mut ui, w, h);
        press(&mut ui, &story.state, KeyCode::Enter);
        ui.log.apply(LogMsg::Started {
            id: 7,
            pod: "x".into(),
            container: "y".into(),
        });
        let detail = story.render(&mut ui, w, h);
        for screen in [&main, &detail] {
            assert_inert(screen);
            for line in screen.lines() {
                assert!(
                    !line.contains("Hidden by multi-width"),
                    "a wide character overlapped: {line}"
                );
                let inner = line.trim_start_matches('"').trim_end_matches('"');
                assert_eq!(fit::width(inner), w as usize, "row width changed: {line}");
            }
        }
        assert!(main.contains("evil"), "{main}");
        assert!(
            main.contains("\u{fffd}"),
            "the replacement character shows as text"
        );
        insta::assert_snapshot!(format!("hostile_{w}x{h}"), main);
    }
}

#[test]
fn ui_state_transitions() {
    let story = Story::rollout();
    let s = &story.state;
    let mut ui = UiState::new();
    ui.sync(s);
    assert_eq!(
        ui.workloads.key.as_deref(),
        Some("DaemonSet/demo-agent"),
        "gating rows first, by name"
    );
    press(&mut ui, s, KeyCode::Char('G'));
    assert_eq!(
        ui.workloads.key.as_deref(),
        Some("Deployment/demo-monitoring"),
        "optional rows last"
    );
    press(&mut ui, s, KeyCode::Char('g'));
    press(&mut ui, s, KeyCode::Down);
    assert_eq!(ui.workloads.key.as_deref(), Some("Deployment/demo-api"));
    // Focus cycles both ways.
    press(&mut ui, s, KeyCode::Tab);
    assert_eq!(ui.focus, Pane::Hooks);
    press(&mut ui, s, KeyCode::Tab);
    assert_eq!(ui.focus, Pane::Helm);
    press(&mut ui, s, KeyCode::Tab);
    assert_eq!(ui.focus, Pane::Workloads);
    press(&mut ui, s, KeyCode::BackTab);
    assert_eq!(ui.focus, Pane::Helm);
    // Follow toggles off and back on; scrolling up leaves follow mode.
    assert!(ui.helm.follow);
    press(&mut ui, s, KeyCode::Char('f'));
    assert!(!ui.helm.follow);
    press(&mut ui, s, KeyCode::Char('f'));
    assert!(ui.helm.follow);
    press(&mut ui, s, KeyCode::Up);
    assert!(!ui.helm.follow);
    press(&mut ui, s, KeyCode::Char('G'));
    assert!(ui.helm.follow);
    // Help opens and closes without quitting.
    press(&mut ui, s, KeyCode::Char('?'));
    assert_eq!(ui.overlay, crate::ui::deck::Overlay::Help);
    assert_eq!(press(&mut ui, s, KeyCode::Char('q')), Effect::None);
    assert_eq!(ui.overlay, crate::ui::deck::Overlay::None);
}

#[test]
fn selection_survives_new_rows_and_changes() {
    let mut story = Story::rollout();
    let mut ui = UiState::new();
    ui.sync(&story.state);
    for _ in 0..3 {
        press(&mut ui, &story.state, KeyCode::Down);
    }
    assert_eq!(ui.workloads.key.as_deref(), Some("Deployment/demo-web"));
    // A new workload sorting before it, and demo-web changing, keep the selection on demo-web.
    story.send(Event::Workload(workload("Deployment", "demo-aaa")));
    let web = story.state.workloads[&(
        "Deployment".to_string(),
        "apps".to_string(),
        "demo-web".to_string(),
    )]
        .clone();
    story.send(Event::Workload(WorkloadView {
        available: 2,
        ..web
    }));
    ui.sync(&story.state);
    assert_eq!(ui.workloads.key.as_deref(), Some("Deployment/demo-web"));
    assert_eq!(ui.workloads.index, 4);
    // Gone: the selection stays at the same place.
    story.send(Event::WorkloadGone {
        kind: "Deployment".into(),
        namespace: "apps".into(),
        name: "demo-web".into(),
    });
    ui.sync(&story.state);
    assert_eq!(
        ui.workloads.key.as_deref(),
        Some("Deployment/demo-gpu-client")
    );
}

#[test]
fn quitting_asks_before_the_verdict_and_not_after() {
    let running = Story::rollout();
    let mut ui = UiState::new();
    assert_eq!(
        press(&mut ui, &running.state, KeyCode::Char('q')),
        Effect::None
    );
    assert_eq!(ui.overlay, crate::ui::deck::Overlay::Confirm);
    assert_eq!(
        press(&mut ui, &running.state, KeyCode::Char('n')),
        Effect::None
    );
    assert!(!ui.cancelling);
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(ui.on_key(ctrl_c, &running.state), Effect::None);
    assert_eq!(ui.overlay, crate::ui::deck::Overlay::Confirm);
    assert_eq!(
        press(&mut ui, &running.state, KeyCode::Char('y')),
        Effect::Cancel
    );
    assert!(ui.cancelling);
    // A second q while cancelling only explains.
    assert_eq!(
        press(&mut ui, &running.state, KeyCode::Char('q')),
        Effect::None
    );
    assert!(ui.notice.is_some());
    assert!(!ui.done(&running.state, false));
    // The verdict of a cancel ends the screen by itself; otherwise q does, without asking.
    let landed = Story::landed();
    assert!(ui.done(&landed.state, false));
    let mut ui = UiState::new();
    assert!(!ui.done(&landed.state, false));
    assert_eq!(
        press(&mut ui, &landed.state, KeyCode::Char('q')),
        Effect::Quit
    );
    assert_eq!(ui.on_key(ctrl_c, &landed.state), Effect::Quit);
}

#[test]
fn drill_down_and_back() {
    let story = Story::rollout();
    let s = &story.state;
    let mut ui = UiState::new();
    ui.sync(s);
    press(&mut ui, s, KeyCode::Char('G'));
    press(&mut ui, s, KeyCode::Char('k'));
    press(&mut ui, s, KeyCode::Enter);
    let detail = ui.detail.as_ref().expect("a drill-down");
    assert_eq!(detail.target.name(), "demo-gpu-client");
    assert_eq!(
        detail.pod.key.as_deref(),
        Some("demo-gpu-client-5b7d9-wsfmt")
    );
    assert_eq!(
        ui.wanted_log(s).map(|r| r.pod),
        Some("demo-gpu-client-5b7d9-wsfmt".into())
    );
    // `/` in the drill-down searches the log, and Esc there clears only the search.
    press(&mut ui, s, KeyCode::Char('/'));
    type_text(&mut ui, s, "err");
    assert_eq!(ui.filters.get(FilterSlot::Log), "err");
    press(&mut ui, s, KeyCode::Esc);
    assert!(ui.detail.is_some() && ui.filters.get(FilterSlot::Log).is_empty());
    press(&mut ui, s, KeyCode::Esc);
    assert!(ui.detail.is_none());
    assert_eq!(ui.wanted_log(s), None);
    assert_eq!(
        ui.workloads.key.as_deref(),
        Some("Deployment/demo-gpu-client"),
        "the selection is where it was"
    );
}

#[test]
fn log_buffer_ignores_replaced_streams() {
    let mut buf = crate::ui::deck::LogBuffer::default();
    buf.apply(LogMsg::Started {
        id: 2,
        pod: "p".into(),
        container: "c".into(),
    });
    buf.apply(LogMsg::Line {
        id: 1,
        text: "old".into(),
    });
    buf.apply(LogMsg::Line {
        id: 2,
        text: "new".into(),
    });
    buf.apply(LogMsg::Ended {
        id: 1,
        why: "old ended".into(),
    });
    assert_eq!(buf.lines, ["new"]);
    assert_eq!(buf.ended, None);
    assert!(buf.is_for("p", "c"));
}

#[test]
fn an_untouched_selection_stays_on_the_first_row_as_rows_arrive() {
    let mut story = Story::upgrade();
    let mut ui = UiState::new();
    story.send(Event::Workload(workload("Deployment", "demo-web")));
    ui.sync(&story.state);
    assert_eq!(ui.workloads.key.as_deref(), Some("Deployment/demo-web"));
    story.send(Event::Workload(workload("Deployment", "demo-api")));
    ui.sync(&story.state);
    assert_eq!(
        ui.workloads.key.as_deref(),
        Some("Deployment/demo-api"),
        "the top row, until the operator moves"
    );
    press(&mut ui, &story.state, KeyCode::Down);
    story.send(Event::Workload(workload("Deployment", "demo-aaa")));
    ui.sync(&story.state);
    assert_eq!(
        ui.workloads.key.as_deref(),
        Some("Deployment/demo-web"),
        "then it stays where they put it"
    );
}

/// Under NO_COLOR no cell has a colour, and the optional row keeps DIM and its tag.
#[test]
fn no_color_keeps_dim_and_words() {
    let story = Story::rollout();
    let ctx = crate::ui::panes::DeployFrame {
        theme: crate::ui::theme::Theme::plain(),
        ..story.frame()
    };
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    let mut ui = UiState::new();
    terminal
        .draw(|f| crate::ui::screen::draw(f, &ctx, &mut ui))
        .unwrap();
    let buf = terminal.backend().buffer();
    let reset = ratatui::style::Color::Reset;
    assert!(
        buf.content.iter().all(|c| c.fg == reset && c.bg == reset),
        "a colour under NO_COLOR"
    );
    let (x, y) = find_text(buf, "demo-gpu-client", 0);
    let line = row_text(buf, y);
    assert!(line.contains("optional ·") && line.contains('░'), "{line}");
    assert!(buf[(x, y)].modifier.contains(Modifier::DIM));
}

/// docs/keys.md (linked from docs/screen.md) lists every key the help overlay lists.
#[test]
fn the_keys_doc_lists_every_key() {
    let doc = include_str!("../../docs/keys.md");
    for (_, what) in crate::ui::KEYS {
        assert!(doc.contains(what), "docs/keys.md lacks: {what}");
    }
}

/// The rollout story with `namespaceOverride` workloads: a second `demo-api` and the exporter
/// in `monitoring`, each with a pod of the same name as one in `apps`.
fn two_namespaces() -> Story {
    let mut story = Story::rollout();
    let elsewhere = |w: WorkloadView| WorkloadView {
        namespace: "monitoring".into(),
        ..w
    };
    story.send(Event::Workload(elsewhere(WorkloadView {
        ready: false,
        message: "Waiting for deployment \"demo-api\" rollout to finish: 0 of 2 updated replicas are available...".into(),
        ready_replicas: 0,
        available: 0,
        pod_causes: vec!["pod demo-api-1: CrashLoopBackOff (exit 1, 3 restarts)".into()],
        ..workload("Deployment", "demo-api")
    })));
    story.send(Event::Workload(elsewhere(workload(
        "DaemonSet",
        "demo-exporter",
    ))));
    story.send(Event::Pod(pod(
        "demo-api-1",
        "Deployment/demo-api",
        "Running",
        true,
    )));
    story.send(Event::Pod(PodView {
        namespace: "monitoring".into(),
        restarts: 3,
        causes: vec!["CrashLoopBackOff (exit 1, 3 restarts)".into()],
        ..pod("demo-api-1", "Deployment/demo-api", "Running", false)
    }));
    story
}

/// Workloads in two namespaces: a NAMESPACE column (NS when narrow), one row per (kind,
/// namespace, name), and a drill-down that shows only its own namespace's pods and logs.
#[test]
fn workloads_in_two_namespaces_get_a_namespace_column() {
    let story = two_namespaces();
    assert_eq!(story.state.workloads.len(), 8, "demo-api twice");
    assert_eq!(story.state.pods.len(), 7, "demo-api-1 twice");
    screens("namespaces", &story, |_, _| {});
    let mut ui = UiState::new();
    let screen = story.render(&mut ui, 160, 48);
    assert!(screen.contains(" KIND        NAMESPACE  NAME "), "{screen}");
    // Rows: demo-agent, demo-api (apps), demo-api (monitoring), ...
    for _ in 0..2 {
        press(&mut ui, &story.state, KeyCode::Char('j'));
    }
    assert_eq!(
        ui.workloads.key.as_deref(),
        Some("Deployment/monitoring/demo-api")
    );
    press(&mut ui, &story.state, KeyCode::Enter);
    let wanted = ui.wanted_log(&story.state).expect("a log is wanted");
    assert_eq!(
        (wanted.pod.as_str(), wanted.namespace.as_str()),
        ("demo-api-1", "monitoring")
    );
    let screen = story.render(&mut ui, 160, 48);
    assert!(screen.contains("monitoring/demo-api"), "{screen}");
    assert!(screen.contains("CrashLoopBackOff"), "{screen}");

    // One namespace: no column (the other snapshots stay as they were).
    let screen = Story::rollout().render(&mut UiState::new(), 160, 48);
    assert!(screen.contains(" KIND        NAME "), "{screen}");
    assert!(!screen.contains(" NAMESPACE  NAME "), "{screen}");
}

/// A ServiceAccount hook reads as one in the hooks pane: its kind is never cut when it fits.
#[test]
fn a_service_account_hook_shows_its_whole_kind() {
    let mut story = Story::rollout();
    let mut hooks = story.state.hooks.clone();
    hooks.insert(
        0,
        crate::engine::event::HookView {
            name: "demo-migrate-sa".into(),
            kind: "ServiceAccount".into(),
            events: vec!["pre-upgrade".into()],
            weight: -10,
            phase: crate::helm::hooks::HookPhase::Succeeded,
            started_at: None,
            completed_at: None,
        },
    );
    story.send(Event::Hooks { hooks });
    for (w, h) in SIZES {
        let screen = story.render(&mut UiState::new(), w, h);
        let row = screen
            .lines()
            .find(|l| l.contains("demo-migrate-sa"))
            .unwrap_or_else(|| panic!("no hook row in {screen}"));
        assert!(row.contains("ServiceAccount"), "{w}x{h}: {row}");
        // At 80 columns START gives way rather than the phase.
        assert!(row.contains("Succeeded"), "{w}x{h}: {row}");
    }
}

/// `helmdeck watch` mid-way through another operator's upgrade: the record pending, the
/// post-upgrade seed hook failing live, no chart and no helm command on screen.
fn watched_mid_hook() -> Story {
    use crate::engine::event::{HookView, Level, StepOutcome};
    use crate::helm::hooks::HookPhase;
    let mut s = Story::new();
    s.state.plan.chart = crate::cli::NO_CHART.into();
    s.state.plan.init_job = None;
    let note = |s: &mut Story, step: Step, text: &str| {
        s.send(Event::Note {
            step,
            level: Level::Info,
            text: text.into(),
        });
    };
    s.at(0.0).send(Event::StepStarted {
        step: Step::Preflight,
    });
    note(
        &mut s,
        Step::Preflight,
        "cluster https://10.0.0.1:6443 reachable (Kubernetes v1.35.2)",
    );
    note(
        &mut s,
        Step::Preflight,
        "watching release demo in apps from its records (no chart, no helm)",
    );
    s.at(0.3).send(Event::StepEnded {
        step: Step::Preflight,
        outcome: StepOutcome::Succeeded,
    });
    s.send(Event::StepStarted {
        step: Step::Upgrade,
    });
    s.send(Event::Release {
        revision_before: Some(4),
        deployed_before: Some(4),
        revision: Some(5),
        chart: None,
    });
    note(
        &mut s,
        Step::Upgrade,
        "revision 5 is pending-upgrade (upgrade of demo)",
    );
    note(
        &mut s,
        Step::Upgrade,
        "another deploy in progress since 2026-12-01T10:00:00Z (upgrade of revision 5, pending-upgrade, 9s ago): attaching to its rollout",
    );
    s.at(6.0).send(Event::Hooks {
        hooks: vec![HookView {
            name: "demo-seed".into(),
            kind: "Job".into(),
            events: vec!["post-install".into(), "post-upgrade".into()],
            weight: 5,
            phase: HookPhase::Running,
            started_at: Some(crate::ui::fixture::wall(5.5)),
            completed_at: None,
        }],
    });
    s.send(Event::Pod(pod(
        "demo-seed-7xk2p",
        "Job/demo-seed",
        "Running",
        false,
    )));
    s.at(9.0);
    s
}

#[test]
fn a_watched_deploy_mid_hook() {
    screens("watch_mid_hook", &watched_mid_hook(), |_, _| {});
}

/// `--test`: each test pod is a row of the hooks pane with the phase helm recorded.
#[test]
fn test_pods_are_rows_of_the_hooks_pane() {
    let story = Story::tested();
    for (w, h) in SIZES {
        let mut ui = UiState::new();
        let screen = story.render(&mut ui, w, h);
        assert_inert(&screen);
        insta::assert_snapshot!(format!("tested_{w}x{h}"), screen);
    }
    let screen = story.render(&mut UiState::new(), 160, 48);
    let row = |name: &str| {
        screen
            .lines()
            .find(|l| l.contains(name) && l.contains(" Pod "))
            .unwrap_or_default()
            .to_string()
    };
    let api = row("demo-test-api");
    assert!(api.contains("Succeeded"), "{api}\n{screen}");
    let db = row("demo-test-db");
    assert!(
        db.contains("test") && db.contains("Failed"),
        "{db}\n{screen}"
    );
}

/// Enter on a test pod's row: its log as `helm test --logs` printed it, no other pod's.
#[test]
fn a_test_pods_drill_down_shows_its_log_from_helm_test() {
    let story = Story::tested();
    for (w, h) in SIZES {
        let mut ui = UiState::new();
        story.render(&mut ui, w, h);
        for key in [KeyCode::Tab, KeyCode::End, KeyCode::Enter] {
            press(&mut ui, &story.state, key);
        }
        let screen = story.render(&mut ui, w, h);
        assert_inert(&screen);
        insta::assert_snapshot!(format!("tested_drilldown_{w}x{h}"), screen);
        assert!(
            screen.contains("LOG demo-test-db")
                && screen.contains("as helm test --logs printed it")
                && screen.contains("checking demo-db:5432")
                && !screen.contains("demo-api healthy"),
            "{screen}"
        );
    }
}

/// `watch --follow` after its second verdict: revision 5 (the watched mid-hook upgrade) failed
/// on its seed hook and stays on screen while the watch waits for the next revision; the
/// history pane lists revision 4's verdict and revision 5's.
#[test]
fn a_followed_watch_lists_each_revisions_verdict() {
    use crate::engine::event::{HookView, StepOutcome};
    use crate::engine::verdict::{self, Outcome, Verdict};
    use crate::helm::hooks::HookPhase;
    use crate::ui::panes::history::Judged;
    let mut story = watched_mid_hook();
    story.at(14.0).send(Event::Hooks {
        hooks: vec![HookView {
            name: "demo-seed".into(),
            kind: "Job".into(),
            events: vec!["post-install".into(), "post-upgrade".into()],
            weight: 5,
            phase: HookPhase::Failed,
            started_at: Some(crate::ui::fixture::wall(5.5)),
            completed_at: Some(crate::ui::fixture::wall(13.5)),
        }],
    });
    for line in [
        "revision 5: failed",
        "Upgrade \"demo\" failed: post-upgrade hooks failed: resource Job/apps/demo-seed not ready",
    ] {
        story.send(Event::HelmLine {
            stderr: false,
            text: line.into(),
        });
    }
    story.at(15.0).send(Event::StepEnded {
        step: Step::Upgrade,
        outcome: StepOutcome::Failed {
            reason: "revision 5 is failed: Upgrade \"demo\" failed: post-upgrade hooks failed \
                     · failing hooks: demo-seed"
                .into(),
        },
    });
    let failed = verdict::decide(&story.state);
    story.send(Event::Verdict(failed.clone()));
    let history = [
        Judged {
            revision: Some(4),
            verdict: Verdict {
                outcome: Outcome::Landed,
                reason: "4/4 gating workloads ready".into(),
                evidence: vec![],
                next: None,
            },
            at: Some(crate::ui::fixture::wall(-600.0)),
            lines: vec![],
        },
        Judged {
            revision: Some(5),
            verdict: failed,
            at: Some(crate::ui::fixture::wall(15.0)),
            lines: vec![],
        },
    ];
    for (w, h) in SIZES {
        let mut ui = UiState::new();
        let ctx = crate::ui::panes::DeployFrame {
            history: &history,
            title: Some("watch --follow · demo"),
            ..story.frame()
        };
        let screen = crate::ui::screen::render_to_string(&ctx, &mut ui, w, h);
        assert!(
            screen.contains("revision 4   LANDED exit 0")
                && screen.contains("revision 5   FAILED exit 1"),
            "{w}x{h}: both verdicts in the history:\n{screen}"
        );
        insta::assert_snapshot!(format!("follow_history_{w}x{h}"), screen);
    }
}

// The verdict banner, read off a whole screen. It renders the Story fixture through ui::screen,
// which imports the banner pane, so it lives here rather than in panes/banner.rs.

/// The banner rows of a whole 80x24 screen, each trimmed of its borders and padding.
fn banner_rows(story: &Story) -> Vec<String> {
    let screen = story.render(&mut UiState::new(), 80, 24);
    screen
        .lines()
        .skip_while(|l| !l.contains("╔"))
        .skip(1)
        .take_while(|l| !l.contains("╚"))
        .map(|l| {
            l.trim_matches('"')
                .trim_matches(|c| c == '║' || c == ' ')
                .to_string()
        })
        .collect()
}

#[test]
fn the_next_command_is_never_cut_at_80_columns() {
    let mut story = Story::init_incomplete();
    let next = "helmdeck deploy demo /tmp/helmdeck-demo/deckapp -n apps --kube-context \
                prod-eu-west-1-a --only init --init-toggle initJob.enabled --init-job \
                demo-init --timeout 600s -- --post-renderer ./scripts/kustomize-wrapper.sh";
    let verdict = story
        .state
        .verdict
        .as_mut()
        .expect("the story ends in a verdict");
    verdict.next = Some(next.into());
    let rows = banner_rows(&story);
    let at = rows
        .iter()
        .position(|r| r.starts_with("next: "))
        .unwrap_or_else(|| panic!("no next line in the banner: {rows:#?}"));
    // Wrapped at spaces only, so the rows joined by one space give the command back.
    let shown = rows[at..].join(" ");
    assert!(
        shown.starts_with(&format!("next: {next}")),
        "the banner cut the next command:\n{rows:#?}"
    );
    assert!(rows[0].contains("LIVE — INIT INCOMPLETE"), "{rows:#?}");
}

#[test]
fn a_failed_banner_says_each_fact_once_and_its_why_names_the_cause() {
    let story = Story::failed();
    let screen = story.render(&mut UiState::new(), 160, 48);
    let rows: Vec<String> = screen
        .lines()
        .skip_while(|l| !l.contains("╔"))
        .skip(1)
        .take_while(|l| !l.contains("╚"))
        .map(|l| {
            l.trim_matches('"')
                .trim_matches(|c| c == '║' || c == ' ')
                .to_string()
        })
        .collect();
    let banner = rows.join(" ");
    assert!(
        banner.contains(
            "why: Deployment/demo-web: log demo-web-7c9f8-d34x2/web (previous instance): Error: \
             SESSION_SECRET is not set"
        ),
        "the why line quotes the crashing container's log:\n{rows:#?}"
    );
    assert_eq!(
        banner
            .matches("CrashLoopBackOff (exit 137, 4 restarts)")
            .count(),
        1,
        "the reason's cause is not said again:\n{rows:#?}"
    );
}

#[test]
fn the_why_line_skips_evidence_that_repeats_the_reason() {
    use crate::ui::panes::banner::new_fact;
    let reason = "rollout failed: timed out after 8s; not ready: Deployment/api: 0 of 2 updated \
                  replicas are available... (pod api-1: CrashLoopBackOff (exit 1, 3 restarts))";
    let evidence = [
        "Deployment/api not ready: 0 of 2 updated replicas are available...; pod api-1: \
         CrashLoopBackOff (exit 1, 3 restarts)"
            .to_string(),
        "Deployment/api: log api-1/api (previous instance): FATAL: no database".to_string(),
    ];
    assert_eq!(new_fact(&evidence, reason), Some(evidence[1].as_str()));
    assert_eq!(new_fact(&evidence[..1], reason), None);
}

/// At thousands of pods the drill-down builds only the pod rows that fit: the first screenful
/// at first, then wherever ↑↓ took the selection, the selected one each time.
#[test]
fn a_drill_down_into_thousands_of_pods_shows_the_rows_that_fit_wherever_the_selection_is() {
    let mut story = Story::failed();
    for i in 0..3000 {
        let p = pod(
            &format!("demo-web-7c9f8-{i:05}"),
            "Deployment/demo-web",
            "Running",
            true,
        );
        story
            .state
            .pods
            .insert((p.namespace.clone(), p.name.clone()), p);
    }
    let mut ui = UiState::new();
    story.render(&mut ui, 160, 48);
    for _ in 0..3 {
        press(&mut ui, &story.state, KeyCode::Char('j'));
    }
    press(&mut ui, &story.state, KeyCode::Enter);
    // The pod table's rows (each names its node), not the events or the log below it.
    let rows = |screen: String| -> String {
        screen
            .lines()
            .filter(|l| l.contains(" node-"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let first = rows(story.render(&mut ui, 160, 48));
    assert!(first.contains("demo-web-7c9f8-00000"), "{first}");
    assert!(!first.contains("demo-web-7c9f8-02999"), "{first}");
    for _ in 0..3001 {
        press(&mut ui, &story.state, KeyCode::Down);
    }
    let last = rows(story.render(&mut ui, 160, 48));
    let selected = ui.detail.as_ref().and_then(|d| d.pod.key.clone());
    assert_eq!(
        selected.as_deref(),
        Some("demo-web-7c9f8-d34x2"),
        "sorted by name, last"
    );
    assert!(last.contains("demo-web-7c9f8-d34x2"), "{last}");
    assert!(!last.contains("demo-web-7c9f8-00000"), "{last}");
    for _ in 0..1500 {
        press(&mut ui, &story.state, KeyCode::Up);
    }
    let middle = rows(story.render(&mut ui, 160, 48));
    let selected = ui.detail.as_ref().and_then(|d| d.pod.key.clone());
    assert_eq!(
        selected.as_deref(),
        Some("demo-web-7c9f8-01501"),
        "1,500 above the last of 3,002"
    );
    assert!(middle.contains("demo-web-7c9f8-01501"), "{middle}");
    assert!(!middle.contains("demo-web-7c9f8-d34x2"), "{middle}");
}
