//! The inspect screen through ratatui's `TestBackend`, as insta snapshots at 80x24 and 160x48
//! (kept with the deploy screen's in `src/ui/snapshots/`): the hook-fails post-mortem, its
//! failed hook's evidence (log lines and exit code), a workload's drill-down, the locked
//! release, an unreadable revision, help and a filter; and the keys.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Color, Modifier};

use crate::helm::hooks::HookPhase;
use crate::inspect::model::Inspection;
use crate::ui::fit;
use crate::ui::inspect::data::{InspectFrame, Inspected};
use crate::ui::inspect::fixture::{self, SEED_LOG};
use crate::ui::inspect::screen;
use crate::ui::inspect::state::{Drill, Effect, Focus, InspectUi, Slot};
use crate::ui::testkit::{Keys, SIZES, assert_inert, find_text, press, row_text, type_text};
use crate::ui::theme::Theme;

impl Keys for InspectUi {
    type Data = Inspected;
    type Effect = Effect;
    fn key(&mut self, key: KeyEvent, data: &Inspected) -> Effect {
        self.on_key(key, data)
    }
}

fn snapshot(name: &str, screen: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.bind(|| insta::assert_snapshot!(name.to_string(), screen));
}

/// Snapshots at both sizes, each from a fresh UI state prepared by `setup` after a first frame.
fn screens(name: &str, i: &Inspection, setup: impl Fn(&mut InspectUi, &Inspected)) -> Vec<String> {
    let data = fixture::data(i.clone());
    let mut out = Vec::new();
    for (w, h) in SIZES {
        let mut ui = InspectUi::new(&data);
        fixture::render(&data, &mut ui, w, h);
        setup(&mut ui, &data);
        let screen = fixture::render(&data, &mut ui, w, h);
        assert_rows_keep_width(&screen, w);
        snapshot(&format!("{name}_{w}x{h}"), &screen);
        out.push(screen);
    }
    out
}

/// Every row is exactly `w` columns; a wide character hides only the blank cell after it
/// (the test backend lists hidden cells after the row).
fn assert_rows_keep_width(screen: &str, w: u16) {
    for line in screen.lines() {
        let (row, hidden) = match line.split_once(" Hidden by multi-width symbols: ") {
            Some((row, hidden)) => (row, hidden),
            None => (line, ""),
        };
        assert!(
            hidden.is_empty()
                || hidden
                    .split("), (")
                    .all(|h| h.ends_with("\" \"") || h.ends_with("\" \")]")),
            "a wide character overlapped text: {line}"
        );
        let inner = row.trim_start_matches('"').trim_end_matches('"');
        assert_eq!(fit::width(inner), w as usize, "row width changed: {line}");
    }
}

#[test]
fn hook_fails_post_mortem() {
    let shown = screens("hook_fails", &fixture::hook_fails(), |_, _| {});
    for screen in &shown {
        assert!(screen.contains("revision 2 (upgrade)"), "{screen}");
        assert!(screen.contains("✗ failed"), "{screen}");
        assert!(screen.contains("Install complete"), "{screen}");
        assert!(screen.contains("demo-seed"), "{screen}");
        // The failed hook's row already says why.
        assert!(screen.contains("exit 1 (Error) · error: fixtures/demo/orders.yaml"));
        assert!(screen.contains("quit (exit 0)"), "{screen}");
        assert!(!screen.contains("LOCKED"));
    }
}

/// Enter on the failed seed hook (selected at start): its pods, exit code and log tail.
#[test]
fn failed_hook_evidence_shows_the_log_and_the_exit_code() {
    let shown = screens("hook_fails_evidence", &fixture::hook_fails(), |ui, data| {
        assert_eq!(ui.focus, Focus::Hooks);
        assert_eq!(ui.hooks.key.as_deref(), Some("Job/demo-seed"));
        press(ui, data, KeyCode::Enter);
    });
    for screen in &shown {
        assert!(screen.contains("demo-seed · Job"), "{screen}");
        assert!(screen.contains("✗ Failed"), "{screen}");
        assert!(screen.contains("exit 1 (Error)"), "{screen}");
        assert!(screen.contains("LOG demo-seed-pg4z6 / seed"), "{screen}");
        for line in &SEED_LOG[..4] {
            assert!(
                screen.contains(line),
                "log line {line:?} missing:\n{screen}"
            );
        }
        assert!(screen.contains("BackoffLimitExceeded"), "{screen}");
    }
    // At 160 columns the failing line shows whole, on one row.
    assert!(shown[1].contains(SEED_LOG[4]), "{}", shown[1]);
    // At 80 it wraps, and all of it is there.
    let joined: String = shown[0]
        .lines()
        .map(|l| {
            l.trim_matches('"')
                .trim_start_matches('┃')
                .trim_end_matches('┃')
        })
        .collect();
    assert!(joined.contains(SEED_LOG[4]), "{}", shown[0]);
}

/// The second pod of the seed Job, its log shown from the top.
#[test]
fn evidence_second_pod_and_log_keys() {
    let data = fixture::data(fixture::hook_fails());
    let mut ui = InspectUi::new(&data);
    press(&mut ui, &data, KeyCode::Enter);
    press(&mut ui, &data, KeyCode::Down);
    let Some(Drill::Hook(d)) = &ui.drill else {
        panic!("a hook drill-down");
    };
    assert_eq!(d.pod.key.as_deref(), Some("demo-seed-vk599"));
    // The only container: c stays on it.
    press(&mut ui, &data, KeyCode::Char('c'));
    let screen = fixture::render(&data, &mut ui, 160, 48);
    assert!(screen.contains("LOG demo-seed-vk599 / seed"), "{screen}");
    press(&mut ui, &data, KeyCode::Char('g'));
    let Some(Drill::Hook(d)) = &ui.drill else {
        panic!("a hook drill-down");
    };
    assert!(!d.log.follow);
    assert_eq!(d.log.top, 0);
    press(&mut ui, &data, KeyCode::Char('G'));
    let Some(Drill::Hook(d)) = &ui.drill else {
        panic!("a hook drill-down");
    };
    assert!(d.log.follow);
    // Search narrows the log.
    press(&mut ui, &data, KeyCode::Char('/'));
    assert_eq!(ui.filters.editing, Some(Slot::Log));
    type_text(&mut ui, &data, "row 17");
    press(&mut ui, &data, KeyCode::Enter);
    let screen = fixture::render(&data, &mut ui, 160, 48);
    assert!(screen.contains(SEED_LOG[3]), "{screen}");
    assert!(!screen.contains(SEED_LOG[0]), "{screen}");
    press(&mut ui, &data, KeyCode::Esc);
    assert_eq!(ui.drill, None);
}

#[test]
fn workload_drill_down() {
    screens("workload", &fixture::hook_fails(), |ui, data| {
        press(ui, data, KeyCode::Tab);
        assert_eq!(ui.focus, Focus::Workloads);
        press(ui, data, KeyCode::Char('j'));
        assert_eq!(ui.workloads.key.as_deref(), Some("Deployment/demo-api"));
        press(ui, data, KeyCode::Enter);
    });
}

#[test]
fn locked_release() {
    let shown = screens("locked", &fixture::locked(), |_, _| {});
    for screen in &shown {
        assert!(screen.contains("◐ LOCKED"), "{screen}");
        assert!(screen.contains("revision 3 is pending-upgrade"), "{screen}");
        assert!(screen.contains("helm rollback demo 1 -n apps"), "{screen}");
        assert!(screen.contains("never ran"), "{screen}");
        assert!(screen.contains("◐ pending-upgrade"), "{screen}");
    }
}

#[test]
fn revision_record() {
    screens("revision", &fixture::hook_fails(), |ui, data| {
        press(ui, data, KeyCode::BackTab);
        assert_eq!(ui.focus, Focus::History);
        assert_eq!(
            ui.history.key.as_deref(),
            Some("2"),
            "the inspected revision"
        );
        press(ui, data, KeyCode::Enter);
    });
}

#[test]
fn unreadable_revision() {
    let mut i = fixture::hook_fails();
    i.requested = Some(3);
    i.revision = Some(3);
    i.info = None;
    i.hooks.clear();
    i.error = Some("revision 3 of demo is not stored (stored: 1, 2)".into());
    let shown = screens("unreadable", &i, |_, _| {});
    for screen in &shown {
        assert!(screen.contains("UNREADABLE"), "{screen}");
        assert!(screen.contains("quit (exit 1)"), "{screen}");
        assert!(screen.contains("--revision 2"), "{screen}");
    }
}

#[test]
fn help_overlay() {
    let data = fixture::data(fixture::hook_fails());
    let mut ui = InspectUi::new(&data);
    press(&mut ui, &data, KeyCode::Char('?'));
    let screen = fixture::render(&data, &mut ui, 80, 24);
    assert!(screen.contains("read the release again"), "{screen}");
    snapshot("help_80x24", &screen);
    // q closes the help; it does not quit.
    assert_eq!(press(&mut ui, &data, KeyCode::Char('q')), Effect::None);
    assert!(!ui.help);
}

#[test]
fn filtered_hooks() {
    let data = fixture::data(fixture::hook_fails());
    let mut ui = InspectUi::new(&data);
    press(&mut ui, &data, KeyCode::Char('/'));
    type_text(&mut ui, &data, "post");
    let screen = fixture::render(&data, &mut ui, 80, 24);
    assert!(!screen.contains("demo-migrate"), "{screen}");
    assert!(screen.contains("filter: post"), "{screen}");
    snapshot("filtered_hooks_80x24", &screen);
    press(&mut ui, &data, KeyCode::Enter);
    assert_eq!(ui.filters.editing, None);
    assert_eq!(ui.filters.get(Slot::Hooks), "post");
    press(&mut ui, &data, KeyCode::Esc);
    assert_eq!(ui.filters.get(Slot::Hooks), "");
}

#[test]
fn keys_focus_select_and_quit() {
    let data = fixture::data(fixture::hook_fails());
    let mut ui = InspectUi::new(&data);
    // Opens on the failed hook.
    assert_eq!(ui.focus, Focus::Hooks);
    assert_eq!(ui.hooks.key.as_deref(), Some("Job/demo-seed"));
    press(&mut ui, &data, KeyCode::Char('g'));
    assert_eq!(ui.hooks.key.as_deref(), Some("Job/demo-migrate"));
    press(&mut ui, &data, KeyCode::Down);
    assert_eq!(ui.hooks.key.as_deref(), Some("Job/demo-init"));
    press(&mut ui, &data, KeyCode::Char('k'));
    press(&mut ui, &data, KeyCode::Up);
    assert_eq!(ui.hooks.key.as_deref(), Some("Job/demo-migrate"));
    press(&mut ui, &data, KeyCode::End);
    assert_eq!(ui.hooks.key.as_deref(), Some("Job/demo-seed"));
    // Focus cycles both ways.
    for want in [Focus::Workloads, Focus::History, Focus::Hooks] {
        press(&mut ui, &data, KeyCode::Tab);
        assert_eq!(ui.focus, want);
    }
    press(&mut ui, &data, KeyCode::BackTab);
    assert_eq!(ui.focus, Focus::History);
    // Workloads: gating first by name, optional last.
    press(&mut ui, &data, KeyCode::BackTab);
    assert_eq!(ui.focus, Focus::Workloads);
    press(&mut ui, &data, KeyCode::Char('G'));
    assert_eq!(
        ui.workloads.key.as_deref(),
        Some("Deployment/demo-monitoring")
    );
    press(&mut ui, &data, KeyCode::Home);
    assert_eq!(ui.workloads.key.as_deref(), Some("DaemonSet/demo-agent"));
    // A succeeded hook's drill-down says why there is no evidence.
    press(&mut ui, &data, KeyCode::Tab);
    press(&mut ui, &data, KeyCode::Tab);
    press(&mut ui, &data, KeyCode::Char('g'));
    press(&mut ui, &data, KeyCode::Enter);
    let screen = fixture::render(&data, &mut ui, 80, 24);
    assert!(screen.contains("it succeeded"), "{screen}");
    press(&mut ui, &data, KeyCode::Backspace);
    assert_eq!(ui.drill, None);
    // m without --show-manifest says how to get it.
    press(&mut ui, &data, KeyCode::Char('m'));
    assert!(
        ui.notice
            .as_deref()
            .unwrap_or("")
            .contains("--show-manifest")
    );
    // r asks for a reload once.
    assert_eq!(press(&mut ui, &data, KeyCode::Char('r')), Effect::Reload);
    assert_eq!(press(&mut ui, &data, KeyCode::Char('r')), Effect::None);
    assert!(ui.notice.is_some());
    // q and Ctrl+C quit, also from a drill-down.
    press(&mut ui, &data, KeyCode::Enter);
    assert!(ui.drill.is_some());
    assert_eq!(press(&mut ui, &data, KeyCode::Char('q')), Effect::Quit);
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(ui.on_key(ctrl_c, &data), Effect::Quit);
}

#[test]
fn opens_on_a_blocking_workload_when_no_hook_failed() {
    let mut i = fixture::hook_fails();
    i.hooks.retain(|h| h.record.phase == HookPhase::Succeeded);
    i.workloads[3].ready = false;
    i.workloads[3].pod_causes =
        vec!["pod demo-web-x: CrashLoopBackOff (exit 137, 4 restarts)".into()];
    let data = fixture::data(i);
    let ui = InspectUi::new(&data);
    assert_eq!(ui.focus, Focus::Workloads);
    assert_eq!(ui.workloads.key.as_deref(), Some("Deployment/demo-web"));
}

#[test]
fn manifest_view() {
    let mut i = fixture::hook_fails();
    i.manifest = Some(
        "---\n# Source: deckapp/templates/secret.yaml\nkind: Secret\ndata:\n  password: ***\n"
            .into(),
    );
    let data = fixture::data(i);
    let mut ui = InspectUi::new(&data);
    press(&mut ui, &data, KeyCode::Char('m'));
    assert!(matches!(ui.drill, Some(Drill::Manifest(_))));
    let screen = fixture::render(&data, &mut ui, 80, 24);
    assert!(screen.contains("password: ***"), "{screen}");
    assert!(screen.contains("Secret values masked"), "{screen}");
}

/// The failed hook is bold red and its glyph says so without colour; hooks that never ran
/// are dimmed.
#[test]
fn failed_stands_out_and_never_ran_is_dim() {
    let data = fixture::data(fixture::locked());
    let mut ui = InspectUi::new(&data);
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 48)).expect("terminal");
    let mut draw = |data: &Inspected, ui: &mut InspectUi| {
        let ctx = InspectFrame {
            data,
            theme: Theme::coloured(),
        };
        terminal.draw(|f| screen::draw(f, &ctx, ui)).expect("draw");
        terminal.backend().buffer().clone()
    };
    let buf = draw(&data, &mut ui);
    let (_, hooks_top) = find_text(&buf, "Hooks", 0);
    let (x, y) = find_text(&buf, "demo-seed", hooks_top);
    assert!(
        buf[(x, y)].modifier.contains(Modifier::DIM),
        "never ran is dim"
    );

    let data = fixture::data(fixture::hook_fails());
    let mut ui = InspectUi::new(&data);
    // Focus elsewhere, so the selection does not reverse the row under test.
    ui.focus = Focus::History;
    let buf = draw(&data, &mut ui);
    let (_, hooks_top) = find_text(&buf, "Hooks", 0);
    let (x, y) = find_text(&buf, "Failed", hooks_top);
    assert_eq!(buf[(x, y)].fg, Color::Red);
    assert!(buf[(x, y)].modifier.contains(Modifier::BOLD));
    let line = row_text(&buf, y);
    assert!(line.contains('✗'), "{line}");
    let (x, y) = find_text(&buf, "Succeeded", hooks_top);
    assert_ne!(buf[(x, y)].fg, Color::Red);
    assert!(!buf[(x, y)].modifier.contains(Modifier::DIM));
}

/// Names, messages and log lines carrying escapes, BiDi controls and a huge line: all inert,
/// and every row keeps its width.
#[test]
fn hostile_text_renders_inert() {
    let evil = "evil\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mred\u{202e}txt\u{2066}名前\u{fffd}";
    let huge = "x".repeat(1 << 20);
    let mut i = fixture::hook_fails();
    i.history[1].description = format!("{evil} {huge}");
    if let Some(info) = i.info.as_mut() {
        info.description = format!("{evil} {huge}");
    }
    let seed = &mut i.hooks[2];
    seed.record.name = format!("demo-{evil}");
    if let Some(e) = seed.live.as_mut() {
        e.pods[0].containers[0].log.push(format!("{evil}{huge}"));
        e.pods[0].containers[0].terminated.as_mut().unwrap().message = Some(evil.into());
        e.events[0].message = format!("{evil}{huge}");
    }
    i.warnings.push(format!("cannot list Events: {evil}"));
    let data = fixture::data(i);
    for (w, h) in SIZES {
        let mut ui = InspectUi::new(&data);
        let main = fixture::render(&data, &mut ui, w, h);
        press(&mut ui, &data, KeyCode::Enter);
        let detail = fixture::render(&data, &mut ui, w, h);
        for screen in [&main, &detail] {
            assert_inert(screen);
            assert_rows_keep_width(screen, w);
        }
        assert!(main.contains("evil"), "{main}");
        assert!(detail.contains("termination message"), "{detail}");
    }
}

#[test]
fn tiny_terminal() {
    let data = fixture::data(fixture::hook_fails());
    let screen = fixture::render(&data, &mut InspectUi::new(&data), 30, 8);
    assert!(screen.contains("helmdeck needs at"), "{screen}");
}

/// `namespaceOverride` workloads: the shared workloads pane gets its NAMESPACE column, a
/// blocker outside the release namespace is opened on by (kind, namespace, name), and its
/// drill-down names the namespace.
#[test]
fn workloads_in_two_namespaces_show_their_namespace() {
    let mut i = fixture::hook_fails();
    i.hooks.retain(|h| h.record.phase == HookPhase::Succeeded);
    let mut other = i.workloads[1].clone();
    other.namespace = "monitoring".into();
    other.ready = false;
    other.pod_causes = vec!["pod demo-api-x: CrashLoopBackOff (exit 1, 2 restarts)".into()];
    i.workloads.push(other);
    let data = fixture::data(i);
    let mut ui = InspectUi::new(&data);
    assert_eq!(ui.focus, Focus::Workloads);
    assert_eq!(
        ui.workloads.key.as_deref(),
        Some("Deployment/monitoring/demo-api")
    );
    let screen = fixture::render(&data, &mut ui, 160, 48);
    assert!(screen.contains(" KIND        NAMESPACE  NAME "), "{screen}");
    press(&mut ui, &data, KeyCode::Enter);
    let screen = fixture::render(&data, &mut ui, 160, 48);
    assert!(
        screen.contains("monitoring/demo-api · Deployment"),
        "{screen}"
    );
}

/// A ServiceAccount hook reads whole in the KIND column at both sizes, and the Job hooks'
/// columns line up after it.
#[test]
fn hooks_table_with_a_service_account_hook() {
    let shown = screens("hooks_service_account", &fixture::backoff_six(), |_, _| {});
    for screen in &shown {
        assert!(screen.contains("ServiceAccount"), "{screen}");
        assert!(!screen.contains("Ser…"), "{screen}");
        let row = |a: &str, b: &str| {
            screen
                .lines()
                .find(|l| l.contains(a) && l.contains(b))
                .unwrap_or_default()
        };
        let (sa, job) = (
            row("demo-hook", "pre-install"),
            row("demo-seed", "post-install"),
        );
        let column = |row: &str, word: &str| row.find(word).map(|b| fit::width(&row[..b]));
        assert!(column(sa, "ServiceAccount").is_some(), "{screen}");
        assert_eq!(
            column(sa, "ServiceAccount"),
            column(job, "Job "),
            "{screen}"
        );
        assert_eq!(column(sa, "pre-"), column(job, "post-"), "{screen}");
    }
}

/// The seed hook at `backoffLimit: 6`: 43 events, the Normal ones folded by reason with
/// their count, the Job's Warning whole.
#[test]
fn backoff_six_evidence_folds_repeated_events() {
    let shown = screens(
        "backoff_six_evidence",
        &fixture::backoff_six(),
        |ui, data| {
            assert_eq!(ui.hooks.key.as_deref(), Some("Job/demo-seed"));
            press(ui, data, KeyCode::Enter);
        },
    );
    for screen in &shown {
        assert!(screen.contains("EVENTS (newest first, 43"), "{screen}");
        assert!(screen.contains("BackoffLimitExceeded"), "{screen}");
        assert!(screen.contains("×7 across 7 pods"), "{screen}");
        assert!(
            screen.matches("Started container seed").count() <= 1,
            "{screen}"
        );
    }
    // At 160 columns every line of the digest shows, the Warning's message in full.
    assert!(shown[1].contains("Job has reached the specified backoff limit"));
    for reason in [
        "SuccessfulCreate",
        "Scheduled",
        "Pulling",
        "Pulled",
        "Created",
    ] {
        assert_eq!(
            shown[1].matches(&format!("Normal  {reason} ")).count(),
            1,
            "{reason}:\n{}",
            shown[1]
        );
    }
}

/// The same inspection as plain text (`--headless`, or stdout not a terminal): the hooks
/// table aligned for the ServiceAccount, and the seed hook's events folded.
#[test]
fn backoff_six_as_text() {
    let text = crate::inspect::text::render(&fixture::backoff_six());
    snapshot("inspect_text_backoff_six", &text);
    let events: Vec<&str> = text
        .lines()
        .skip_while(|l| l.trim() != "events")
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .collect();
    assert_eq!(events.len(), 7, "{text}");
    assert!(
        events[6].contains("Warning  BackoffLimitExceeded"),
        "{text}"
    );
    assert!(
        events[5].contains("(×7 across 7 pods, the last shown)"),
        "{text}"
    );
    let header = text.lines().find(|l| l.contains("WEIGHT")).unwrap_or("");
    let sa = text
        .lines()
        .find(|l| l.contains("ServiceAccount"))
        .unwrap_or("");
    let job = text
        .lines()
        .find(|l| l.contains("demo-seed  "))
        .unwrap_or("");
    let at = |row: &str, word: &str| row.find(word);
    assert_eq!(at(header, "KIND"), at(sa, "ServiceAccount"), "{text}");
    assert_eq!(at(header, "EVENTS"), at(sa, "pre-install"), "{text}");
    assert_eq!(at(header, "EVENTS"), at(job, "post-install"), "{text}");
}

/// `--revision 99` of a release storing 1 and 2: the workloads pane says they were not read,
/// never that none were found.
#[test]
fn a_revision_that_does_not_exist_reads_no_workloads() {
    let mut i = fixture::hook_fails();
    (i.requested, i.revision, i.info) = (Some(99), Some(99), None);
    i.hooks.clear();
    (i.workloads, i.pods, i.events) = (vec![], vec![], vec![]);
    i.error = Some("release demo has no revision 99 (stored: 1, 2)".into());
    assert!(i.revision_absent());
    let data = fixture::data(i.clone());
    for (w, h) in [(80, 24), (160, 48)] {
        let mut ui = InspectUi::new(&data);
        let screen = fixture::render(&data, &mut ui, w, h);
        assert!(screen.contains("has no revision 99"), "{screen}");
        assert!(screen.contains("not read: the release has no revision 99"));
        assert!(!screen.contains("no workload of the release found"));
        assert!(screen.contains("quit (exit 1)"), "{screen}");
    }
    let text = crate::inspect::text::render(&i);
    assert!(!text.contains("Workloads"), "{text}");
    assert!(!text.contains("none found"), "{text}");
}

/// An earlier attempt that ended differently (another exit, another log) keeps its own lines.
#[test]
fn an_attempt_that_ended_differently_shows_whole_in_text() {
    let mut i = fixture::backoff_six();
    let seed = i.hooks.iter_mut().find(|h| h.record.name == "demo-seed");
    let live = seed
        .and_then(|h| h.live.as_mut())
        .expect("the seed evidence");
    let first = &mut live.pods[0].containers[0];
    first.log = vec!["connection refused: demo-db:5432".into()];
    if let Some(t) = first.terminated.as_mut() {
        t.exit_code = 2;
    }
    let text = crate::inspect::text::render(&i);
    assert!(
        text.contains("│ connection refused: demo-db:5432"),
        "{text}"
    );
    assert!(
        text.contains("container seed: terminated, exit 2 (Error)"),
        "{text}"
    );
    assert_eq!(
        text.matches("(exit and log as the last attempt's, below)")
            .count(),
        5,
        "{text}"
    );
}

/// The newest run's init Job is the hooks pane's last row (event `init`); Enter shows its pod,
/// the failed initContainer and its log tail.
#[test]
fn the_init_job_is_listed_with_its_failed_init_container() {
    use crate::inspect::model::{
        ContainerEvidence, HookEvidence, HookPod, InitJobView, Termination,
    };
    let mut i = fixture::hook_fails();
    let configure = ContainerEvidence {
        name: "configure".into(),
        init: true,
        restarts: 0,
        state: "terminated".into(),
        terminated: Some(Termination {
            exit_code: 1,
            reason: Some("Error".into()),
            ..Termination::default()
        }),
        log: vec!["error: site setup refused".into()],
        ..ContainerEvidence::default()
    };
    i.init_job = Some(InitJobView {
        name: "demo-setup".into(),
        run: Some("r1".into()),
        live: Some(HookEvidence {
            kind: "Job".into(),
            name: "demo-setup".into(),
            found: true,
            status: Some("Failed: BackoffLimitExceeded".into()),
            failed: 1,
            pods: vec![HookPod {
                name: "demo-setup-x1".into(),
                phase: "Failed".into(),
                causes: vec!["init container configure: Failed: Error (exit 1)".into()],
                containers: vec![
                    configure,
                    ContainerEvidence {
                        name: "init".into(),
                        state: "waiting: PodInitializing".into(),
                        ..ContainerEvidence::default()
                    },
                ],
                ..HookPod::default()
            }],
            ..HookEvidence::default()
        }),
        failed_container: Some("configure".into()),
        note: None,
    });
    let data = fixture::data(i);
    let mut ui = InspectUi::new(&data);
    fixture::render(&data, &mut ui, 160, 48);
    let list = fixture::render(&data, &mut ui, 160, 48);
    assert!(list.contains("demo-setup"), "{list}");
    let keys: Vec<String> = crate::ui::inspect::data::hook_keys(&data.inspection, "");
    assert_eq!(
        keys.last().map(String::as_str),
        Some("Job/demo-setup"),
        "{keys:?}"
    );
    press(&mut ui, &data, KeyCode::Char('G'));
    press(&mut ui, &data, KeyCode::Enter);
    let screen = fixture::render(&data, &mut ui, 160, 48);
    assert!(screen.contains("init container configure"), "{screen}");
    assert!(screen.contains("error: site setup refused"), "{screen}");
    // Named as a hook of the release already (helm ran it): listed once.
    let mut twice = data.inspection.clone();
    if let Some(j) = twice.init_job.as_mut() {
        j.name = "demo-init".into();
    }
    twice.hooks.retain(|h| h.record.events != ["init"]);
    let again = fixture::data(twice);
    let keys = crate::ui::inspect::data::hook_keys(&again.inspection, "");
    assert_eq!(
        keys.iter().filter(|k| *k == "Job/demo-init").count(),
        1,
        "{keys:?}"
    );
}
