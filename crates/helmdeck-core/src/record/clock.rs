//! The replay clock: where in the record the screen stands, as pure functions of the keys and of
//! real time passing, so pause, speed, next step and end are tested without a terminal.

use crate::engine::event::Event;
use crate::record::Line;

pub const MIN_SPEED: f64 = 0.25;
pub const MAX_SPEED: f64 = 64.0;

#[derive(Debug, Clone, PartialEq)]
pub struct Clock {
    /// Seconds of the record shown so far.
    pub at: f64,
    pub speed: f64,
    pub paused: bool,
    /// Index of the first line not yet applied.
    pub next: usize,
}

impl Clock {
    pub fn new(speed: f64) -> Clock {
        Clock {
            at: 0.0,
            speed: speed.clamp(MIN_SPEED, MAX_SPEED),
            paused: false,
            next: 0,
        }
    }

    /// `real` seconds passed on the wall clock.
    pub fn advance(&mut self, real: f64) {
        if !self.paused {
            self.at += real.max(0.0) * self.speed;
        }
    }

    pub fn toggle_pause(&mut self) {
        self.paused = !self.paused;
    }

    pub fn faster(&mut self) {
        self.speed = (self.speed * 2.0).min(MAX_SPEED);
    }

    pub fn slower(&mut self) {
        self.speed = (self.speed / 2.0).max(MIN_SPEED);
    }

    /// The lines due by now: `next..end`; the caller applies them, then calls [`Clock::applied`].
    pub fn due(&self, lines: &[Line]) -> std::ops::Range<usize> {
        let end = lines[self.next.min(lines.len())..]
            .iter()
            .position(|l| l.t > self.at)
            .map_or(lines.len(), |i| self.next + i);
        self.next.min(end)..end
    }

    pub fn applied(&mut self, through: usize) {
        self.next = self.next.max(through);
    }

    /// `n`: on to the next step's start (its line included), or the end when no step is left.
    pub fn next_step(&mut self, lines: &[Line]) {
        let start = lines
            .iter()
            .enumerate()
            .skip(self.next)
            .find(|(_, l)| matches!(l.event, Event::StepStarted { .. }));
        match start {
            Some((_, line)) => self.at = self.at.max(line.t),
            None => self.end(lines),
        }
    }

    /// `End`: everything.
    pub fn end(&mut self, lines: &[Line]) {
        if let Some(last) = lines.last() {
            self.at = self.at.max(last.t);
        }
    }

    /// Real seconds until the next line is due (`None`: paused or nothing left).
    pub fn wait(&self, lines: &[Line]) -> Option<f64> {
        if self.paused {
            return None;
        }
        let line = lines.get(self.next)?;
        Some(((line.t - self.at) / self.speed).max(0.0))
    }

    pub fn finished(&self, lines: &[Line]) -> bool {
        self.next >= lines.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::event::{Level, Step};

    fn note(t: f64) -> Line {
        Line {
            t,
            wall: None,
            event: Event::Note {
                step: Step::Preflight,
                level: Level::Info,
                text: "x".into(),
            },
        }
    }

    fn start(t: f64, step: Step) -> Line {
        Line {
            t,
            wall: None,
            event: Event::StepStarted { step },
        }
    }

    fn lines() -> Vec<Line> {
        vec![
            start(0.0, Step::Preflight),
            note(0.5),
            note(2.0),
            start(3.0, Step::Upgrade),
            note(10.0),
            start(20.0, Step::Rollout),
        ]
    }

    /// Takes what is due and marks it applied, as the screen does.
    fn take(c: &mut Clock, lines: &[Line]) -> std::ops::Range<usize> {
        let due = c.due(lines);
        c.applied(due.end);
        due
    }

    #[test]
    fn time_passing_releases_the_lines_in_their_order_at_the_speed() {
        let l = lines();
        let mut c = Clock::new(1.0);
        assert_eq!(take(&mut c, &l), 0..1);
        c.advance(1.0);
        assert_eq!(take(&mut c, &l), 1..2);
        assert_eq!(c.wait(&l), Some(1.0));
        c.faster();
        assert_eq!(c.speed, 2.0);
        assert_eq!(c.wait(&l), Some(0.5));
        c.advance(1.0);
        assert_eq!(take(&mut c, &l), 2..4);
        assert_eq!(take(&mut c, &l), 4..4);
    }

    #[test]
    fn a_paused_clock_releases_nothing_and_waits_for_nothing() {
        let l = lines();
        let mut c = Clock::new(1.0);
        take(&mut c, &l);
        c.toggle_pause();
        c.advance(100.0);
        assert_eq!(take(&mut c, &l), 1..1);
        assert_eq!(c.wait(&l), None);
        c.toggle_pause();
        c.advance(0.5);
        assert_eq!(take(&mut c, &l), 1..2);
    }

    #[test]
    fn speed_doubles_and_halves_within_its_bounds() {
        let mut c = Clock::new(1.0);
        c.slower();
        assert_eq!(c.speed, 0.5);
        for _ in 0..10 {
            c.slower();
        }
        assert_eq!(c.speed, MIN_SPEED);
        for _ in 0..20 {
            c.faster();
        }
        assert_eq!(c.speed, MAX_SPEED);
        assert_eq!(Clock::new(1000.0).speed, MAX_SPEED);
    }

    #[test]
    fn next_step_jumps_to_the_next_step_start_and_past_the_last_to_the_end() {
        let l = lines();
        let mut c = Clock::new(1.0);
        take(&mut c, &l);
        c.next_step(&l);
        assert_eq!(take(&mut c, &l), 1..4, "through the upgrade's start");
        c.next_step(&l);
        assert_eq!(take(&mut c, &l), 4..6, "through the rollout's start");
        c.next_step(&l);
        assert!(c.finished(&l));
        // Paused, `n` still moves on (the operator asked for it).
        let mut p = Clock::new(1.0);
        p.toggle_pause();
        p.next_step(&l);
        assert_eq!(take(&mut p, &l), 0..1);
    }

    #[test]
    fn end_releases_everything() {
        let l = lines();
        let mut c = Clock::new(1.0);
        c.end(&l);
        assert_eq!(take(&mut c, &l), 0..6);
        assert!(c.finished(&l));
        assert_eq!(c.wait(&l), None);
    }
}
