//! The workloads pane with 4- and 5-digit replica counts (issue 24: at 3,000 pods the row read
//! `/3000  000  3000`): READY, UPD and AVAIL are as wide as their widest number, never cut, the
//! NAME column yields first, and a gauge (updated and ready of desired) shows the roll's
//! progress where there is room, greyed for an optional workload.

use ratatui::style::Modifier;

use crate::engine::event::{Event, Step, WorkloadView};
use crate::ui::app::UiState;
use crate::ui::fixture::{Story, workload};
use crate::ui::testkit::{SIZES, find_text, row_text};

/// A release mid-roll: a 3,000-replica Deployment half updated, a 12,000-replica DaemonSet
/// done, and an optional 10,000-replica Deployment a tenth of the way.
fn big() -> Story {
    let mut story = Story::new();
    story.send(Event::StepStarted {
        step: Step::Rollout,
    });
    story.send(Event::Workload(WorkloadView {
        ready: false,
        desired: 3000,
        ready_replicas: 1499,
        updated: 1500,
        available: 1499,
        message: "Waiting for deployment \"api\" rollout to finish: 1500 out of 3000 new replicas have been updated...".into(),
        ..workload("Deployment", "api")
    }));
    story.send(Event::Workload(WorkloadView {
        desired: 12000,
        ready_replicas: 12000,
        updated: 12000,
        available: 12000,
        ..workload("DaemonSet", "node-agent")
    }));
    story.send(Event::Workload(WorkloadView {
        optional: true,
        optional_because: Some("--optional *-batch".into()),
        ready: false,
        desired: 10000,
        ready_replicas: 1000,
        updated: 1000,
        available: 1000,
        message: "Waiting for deployment \"nightly-batch\" rollout to finish: 1000 out of 10000 new replicas have been updated...".into(),
        ..workload("Deployment", "nightly-batch")
    }));
    story
}

#[test]
fn four_and_five_digit_counts_are_never_cut() {
    let story = big();
    for (w, h) in SIZES {
        let screen = story.render(&mut UiState::new(), w, h);
        for whole in ["1499/3000", "1500/3000", "12000/12000", "1000/10000"] {
            assert!(screen.contains(whole), "{whole} at {w}x{h}:\n{screen}");
        }
        let api = screen
            .lines()
            .find(|l| l.contains("api") && l.contains("/3000"))
            .unwrap_or_else(|| panic!("the api row at {w}x{h}:\n{screen}"));
        assert!(api.contains(" 1499 "), "AVAIL whole at {w}x{h}: {api}");
        insta::assert_snapshot!(format!("big_numbers_{w}x{h}"), screen);
    }
}

#[test]
fn the_gauge_shows_progress_when_wide_and_is_grey_for_an_optional_workload() {
    let story = big();
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 48))
        .expect("a test terminal");
    let mut ui = UiState::new();
    terminal
        .draw(|f| crate::ui::screen::draw(f, &story.frame(), &mut ui))
        .expect("a frame");
    let buf = terminal.backend().buffer();
    let (_, y) = find_text(buf, "node-agent", 0);
    let done = row_text(buf, y);
    assert!(done.contains("██████████"), "a full gauge: {done}");
    let (_, y) = find_text(buf, " api ", 0);
    let half = row_text(buf, y);
    let bar: String = half.chars().filter(|c| "█▒░".contains(*c)).collect();
    // 1,500 of 3,000 updated, 1,499 ready: four tenths ready, the fifth updated, not ready yet.
    assert_eq!(
        bar, "████▒░░░░░",
        "half updated, just under half ready: {half}"
    );
    let (_, y) = find_text(buf, "nightly-batch", 0);
    let line = row_text(buf, y);
    let at = line
        .find('█')
        .unwrap_or_else(|| panic!("a tenth done: {line}"));
    let x = line[..at].chars().count() as u16;
    assert!(
        buf[(x, y)].modifier.contains(Modifier::DIM),
        "greyed: {:?}",
        buf[(x, y)].style()
    );
    // At 80 columns the gauge gives way to the numbers (the optional row's mark is one `░`).
    let narrow = story.render(&mut UiState::new(), 80, 24);
    assert!(!narrow.contains('█') && !narrow.contains("░░"), "{narrow}");
}

/// With a NAMESPACE column and long names at 80 columns there is not room for everything: the
/// name is cut in its middle, the numbers stay whole.
#[test]
fn the_name_yields_before_a_number_is_cut() {
    let mut story = big();
    story.send(Event::Workload(WorkloadView {
        namespace: "monitoring".into(),
        desired: 20000,
        ready_replicas: 19999,
        updated: 20000,
        available: 19999,
        ready: false,
        ..workload("DaemonSet", "node-exporter-with-a-long-name")
    }));
    let screen = story.render(&mut UiState::new(), 80, 24);
    for whole in ["19999/20000", "12000/12000", "1000/10000"] {
        assert!(screen.contains(whole), "{whole}:\n{screen}");
    }
    assert!(
        !screen.contains("node-exporter-with-a-long-name"),
        "{screen}"
    );
    assert!(
        screen.contains("…ng-name 19999/20000"),
        "the name cut in its middle:\n{screen}"
    );
}
