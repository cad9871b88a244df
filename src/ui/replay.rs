//! `helmdeck replay` in the deploy screen: the recorded events are applied with the same
//! [`crate::engine::state::DeployState::apply`] and drawn by the same screen as live, paced by
//! the record's own offsets through [`Clock`]. The replay's keys come first (space pause/resume,
//! `+`/`-` speed, `n` next step, `End` to the end, which also keeps its list meaning); every
//! other key means what it means live. `q` quits at once: there is no deploy to cancel.

use std::time::{Duration, Instant};

use color_eyre::eyre::Result;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use crate::engine::state::DeployState;
use crate::record::clock::Clock;
use crate::record::reader::Record;
use crate::signals::Signal;
use crate::ui::app::UiState;
use crate::ui::deck::{Effect, Overlay};
use crate::ui::panes::DeployFrame;
use crate::ui::screen;
use crate::ui::theme::Theme;
use crate::ui::tui::{self, Flow, Screen, Tui, TuiEvent};

/// The slow tick: the spinner, and the clock while nothing is due.
pub const TICK: Duration = Duration::from_millis(250);

pub(crate) struct ReplayScreen<'r> {
    record: &'r Record,
    pub(crate) mirror: DeployState,
    pub(crate) ui: UiState,
    pub(crate) clock: Clock,
    theme: Theme,
    /// When the clock was last advanced.
    last: Instant,
    /// Ages on screen are told against the record's own time (None in tests: ages blank).
    wall_clock: bool,
    quit: bool,
}

impl<'r> ReplayScreen<'r> {
    pub(crate) fn new(record: &'r Record, speed: f64) -> Self {
        let mut screen = ReplayScreen {
            record,
            mirror: record.new_state(),
            ui: UiState::new(),
            clock: Clock::new(speed),
            theme: Theme::from_env(),
            last: Instant::now(),
            wall_clock: true,
            quit: false,
        };
        screen.catch_up();
        screen
    }

    /// Applies every line the clock has reached.
    fn catch_up(&mut self) -> bool {
        let due = self.clock.due(&self.record.lines);
        let any = !due.is_empty();
        for i in due.clone() {
            self.record.apply(&mut self.mirror, i);
        }
        self.clock.applied(due.end);
        if self.clock.finished(&self.record.lines)
            && let Some(cut) = &self.record.cut
        {
            self.ui.notice = Some(format!("replay: the record is cut short: {cut}"));
        }
        any
    }

    fn tick_clock(&mut self) -> bool {
        let now = Instant::now();
        let real = now.duration_since(self.last).as_secs_f64();
        self.last = now;
        self.advance_by(real)
    }

    /// `real` seconds passed: the lines they reach are applied (whether any was).
    pub(crate) fn advance_by(&mut self, real: f64) -> bool {
        self.clock.advance(real);
        self.catch_up()
    }

    /// Real seconds until the next line is due; `None` once every line is applied.
    pub(crate) fn wait(&self) -> Option<f64> {
        self.clock.wait(&self.record.lines)
    }

    pub(crate) fn played_out(&self) -> bool {
        self.clock.finished(&self.record.lines)
    }

    pub(crate) fn set_theme(&mut self, theme: Theme) {
        self.theme = theme;
    }

    fn status(&self) -> String {
        format!(
            "replay {}x{} · space pause · +/- speed · n next step · End end · q quit",
            self.clock.speed,
            if self.clock.paused { " (paused)" } else { "" }
        )
    }

    /// The replay's own keys; `false` for the ones the screen handles as live.
    pub(crate) fn replay_key(&mut self, key: KeyEvent) -> bool {
        let typing = self.ui.filters.editing.is_some() || self.ui.overlay != Overlay::None;
        if typing || key.kind == KeyEventKind::Release {
            return false;
        }
        let lines = &self.record.lines;
        match key.code {
            KeyCode::Char(' ') => self.clock.toggle_pause(),
            KeyCode::Char('+') => self.clock.faster(),
            KeyCode::Char('-') => self.clock.slower(),
            KeyCode::Char('n') => self.clock.next_step(lines),
            KeyCode::End => {
                self.clock.end(lines);
                self.catch_up();
                // Still the list's last row, as live.
                return false;
            }
            _ => return false,
        }
        self.catch_up();
        self.ui.notice = Some(self.status());
        true
    }

    fn frame(&self) -> DeployFrame<'_> {
        let elapsed = if self.mirror.verdict.is_some() || self.clock.finished(&self.record.lines) {
            self.mirror.now_secs
        } else {
            self.clock.at
        };
        let now = self
            .wall_clock
            .then(|| self.record.wall(elapsed).parse::<jiff::Timestamp>().ok())
            .flatten();
        DeployFrame {
            state: &self.mirror,
            theme: self.theme,
            title: self.record.header.title.as_deref(),
            context: self.record.header.context.as_deref(),
            elapsed,
            now,
            history: &[],
        }
    }
}

impl Screen for ReplayScreen<'_> {
    fn draw(&mut self, frame: &mut Frame) {
        let mut ui = std::mem::take(&mut self.ui);
        screen::draw(frame, &self.frame(), &mut ui);
        self.ui = ui;
    }

    fn on_event(&mut self, event: TuiEvent) -> Flow {
        match event {
            TuiEvent::Key(key) => {
                if crate::ui::nav::is_ctrl_c(key)
                    || (key.code == KeyCode::Char('q') && self.ui.filters.editing.is_none())
                {
                    self.quit = true;
                    return Flow::Quit;
                }
                if self.replay_key(key) {
                    return Flow::Redraw;
                }
                match self.ui.on_key(key, &self.mirror) {
                    Effect::Quit => {
                        self.quit = true;
                        Flow::Quit
                    }
                    // A replay answers nothing: the recorded run already had its answer.
                    Effect::Cancel
                    | Effect::ApprovePlan
                    | Effect::DeclinePlan
                    | Effect::Unlock
                    | Effect::Rollback(_)
                    | Effect::None => Flow::Redraw,
                }
            }
            TuiEvent::Tick => {
                self.ui.tick = self.ui.tick.wrapping_add(1);
                self.tick_clock();
                Flow::Redraw
            }
            TuiEvent::Signal(Signal::Hangup | Signal::Interrupt | Signal::Terminate)
            | TuiEvent::InputClosed => {
                self.quit = true;
                Flow::Quit
            }
            TuiEvent::Resize => Flow::Redraw,
        }
    }

    async fn changed(&mut self) -> Flow {
        match self.clock.wait(&self.record.lines) {
            Some(wait) => {
                tokio::time::sleep(Duration::from_secs_f64(wait.min(TICK.as_secs_f64()))).await;
                if self.tick_clock() {
                    Flow::Redraw
                } else {
                    Flow::Same
                }
            }
            None => std::future::pending().await,
        }
    }

    fn on_lost(&mut self, _: std::io::Error) -> Result<Flow> {
        Ok(Flow::Quit)
    }

    fn done(&self) -> bool {
        self.quit
    }
}

/// Plays `record` in the deploy screen until `q`; the state it reached is returned (the whole
/// record's, once played to the end). A terminal that does not answer gets nothing: the
/// headless replay is the plain form.
pub async fn run_replay(record: &Record, speed: f64) -> Result<DeployState> {
    let Some(mut tui) = Tui::enter_or_plain(Some(TICK)) else {
        return Ok(record.fold());
    };
    let mut screen = ReplayScreen::new(record, speed);
    let outcome = tui::run(&mut tui, &mut screen).await;
    drop(tui);
    outcome?;
    Ok(screen.mirror)
}

/// The replay's last frame, drawn into a `width`x`height` test terminal: `record` played in the
/// replay screen to its end (the replay's `End`, the list left where it was), ages told
/// against `now`. What [`crate::ui::live::final_frame`] draws for the live run it records.
pub fn final_frame(record: &Record, now: Option<jiff::Timestamp>, size: (u16, u16)) -> String {
    final_frame_at(record, now, size, 0)
}

/// [`final_frame`] with the spinners at `tick` slow ticks (a cast's last frame: its time over
/// the tick).
pub fn final_frame_at(
    record: &Record,
    now: Option<jiff::Timestamp>,
    (width, height): (u16, u16),
    tick: u64,
) -> String {
    let mut screen = ReplayScreen::new(record, 1.0);
    screen.ui.tick = tick;
    screen.wall_clock = false;
    screen.replay_key(KeyEvent::new(
        KeyCode::End,
        ratatui::crossterm::event::KeyModifiers::NONE,
    ));
    let mut ctx = screen.frame();
    ctx.theme = Theme::coloured();
    ctx.now = now;
    let mut ui = screen.ui.clone();
    crate::ui::layout::draw_to_text(width, height, |f| screen::draw(f, &ctx, &mut ui))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::event::Event;
    use crate::record::{Header, Line};
    use crate::ui::fixture::Story;
    use ratatui::crossterm::event::KeyModifiers;

    /// The story's events as a record file's bytes, through the writer's serde shape.
    pub(crate) fn record_of(story: &Story) -> Vec<u8> {
        let mut header = Header::new(
            "helmdeck demo".into(),
            story.state.plan.context.clone(),
            Some("demo · crashloop".into()),
            story.state.plan.clone(),
        );
        header.started = crate::ui::fixture::T0.into();
        let mut out = serde_json::to_string(&header).unwrap();
        out.push('\n');
        for (t, event) in &story.events {
            let wall = matches!(event, Event::StepStarted { .. } | Event::StepEnded { .. })
                .then(|| crate::ui::fixture::wall(*t));
            out.push_str(
                &serde_json::to_string(&Line {
                    t: *t,
                    wall,
                    event: event.clone(),
                })
                .unwrap(),
            );
            out.push('\n');
        }
        out.into_bytes()
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn frame_of(screen: &ReplayScreen, ui: &mut UiState, w: u16, h: u16) -> String {
        let mut ctx = screen.frame();
        ctx.theme = Theme::coloured();
        screen::render_to_string(&ctx, ui, w, h)
    }

    /// The last frame of a replay is the last frame of the run, byte for byte, at both sizes.
    #[test]
    fn the_replayed_final_frame_equals_the_live_final_frame() {
        for story in [Story::landed(), Story::failed(), Story::init_incomplete()] {
            let record = crate::record::reader::parse(&record_of(&story)).unwrap();
            assert_eq!(record.cut, None);
            let mut screen = ReplayScreen::new(&record, 1.0);
            screen.wall_clock = false;
            assert!(screen.replay_key(key(KeyCode::Char(' '))));
            screen.replay_key(key(KeyCode::End));
            assert!(screen.clock.finished(&record.lines));
            for (w, h) in crate::ui::testkit::SIZES {
                let mut live = story.frame();
                live.now = None;
                let expected = screen::render_to_string(&live, &mut UiState::new(), w, h);
                assert_eq!(frame_of(&screen, &mut UiState::new(), w, h), expected);
            }
        }
    }

    /// `n` steps through the steps' starts; space holds the clock; End plays the rest.
    #[test]
    fn the_replay_keys_move_the_screen_through_the_record() {
        let story = Story::landed();
        let record = crate::record::reader::parse(&record_of(&story)).unwrap();
        let mut screen = ReplayScreen::new(&record, 1.0);
        screen.replay_key(key(KeyCode::Char(' ')));
        assert!(screen.clock.paused);
        let starts = |s: &ReplayScreen| {
            s.mirror
                .steps
                .values()
                .filter(|st| st.started_secs.is_some())
                .count()
        };
        let before = starts(&screen);
        screen.replay_key(key(KeyCode::Char('n')));
        assert_eq!(starts(&screen), before + 1);
        assert!(
            screen
                .ui
                .notice
                .as_deref()
                .is_some_and(|n| n.contains("(paused)"))
        );
        screen.replay_key(key(KeyCode::Char('+')));
        assert_eq!(screen.clock.speed, 2.0);
        assert!(screen.mirror.verdict.is_none());
        screen.replay_key(key(KeyCode::End));
        assert!(matches!(
            record.lines.last().map(|l| &l.event),
            Some(Event::Verdict(_))
        ));
        assert!(screen.mirror.verdict.is_some());
        // A filter being typed takes the keys as text.
        screen.ui.filters.edit(screen.ui.filter_slot());
        assert!(!screen.replay_key(key(KeyCode::Char('n'))));
    }

    /// A record cut short plays to the cut and says so on the key bar.
    #[test]
    fn a_cut_record_says_so_once_played_out() {
        let bytes = record_of(&Story::landed());
        let cut = &bytes[..bytes.len() * 2 / 3];
        let record = crate::record::reader::parse(cut).unwrap();
        assert!(record.cut.is_some());
        let mut screen = ReplayScreen::new(&record, 1.0);
        screen.replay_key(key(KeyCode::End));
        assert!(screen.mirror.verdict.is_none());
        assert!(
            screen
                .ui
                .notice
                .as_deref()
                .is_some_and(|n| n.contains("cut short"))
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config { cases: 256, ..Default::default() })]

        /// A record cut at any byte (a killed deploy, a full disk) replays to the cut: the lines
        /// read are the whole ones before it, the screen plays them without a panic, and it
        /// says the record is cut short.
        #[test]
        fn a_record_cut_at_any_byte_replays_to_the_cut(at in 0.0f64..1.0) {
            let story = Story::failed();
            let bytes = record_of(&story);
            let full = crate::record::reader::parse(&bytes).unwrap();
            let cut_at = ((bytes.len() as f64) * at) as usize;
            match crate::record::reader::parse(&bytes[..cut_at]) {
                Err(e) => {
                    let header_end = bytes.iter().position(|b| *b == b'\n').unwrap();
                    proptest::prop_assert!(cut_at <= header_end, "{e} at {cut_at}");
                }
                Ok(record) => {
                    let n = record.lines.len();
                    proptest::prop_assert_eq!(&record.lines[..], &full.lines[..n]);
                    proptest::prop_assert!(record.cut.is_some());
                    let mut screen = ReplayScreen::new(&record, 1.0);
                    screen.wall_clock = false;
                    screen.replay_key(key(KeyCode::End));
                    proptest::prop_assert!(screen.clock.finished(&record.lines));
                    proptest::prop_assert!(screen.mirror.verdict.is_none());
                    let shown = frame_of(&screen, &mut screen.ui.clone(), 80, 24);
                    proptest::prop_assert!(shown.contains("cut short"), "{}", shown);
                }
            }
        }
    }
}
