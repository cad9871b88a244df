//! The sending side of the event channel, shared by every step.

use tokio::sync::mpsc::UnboundedSender;

use crate::engine::event::{Event, Level, Step, StepOutcome};

#[derive(Clone)]
pub struct Emitter {
    tx: UnboundedSender<Event>,
}

impl Emitter {
    pub fn new(tx: UnboundedSender<Event>) -> Self {
        Emitter { tx }
    }

    pub fn send(&self, event: Event) {
        // The receiver lives as long as the deploy; after it is gone nobody is listening.
        let _ = self.tx.send(event);
    }

    pub fn note(&self, step: Step, level: Level, text: impl Into<String>) {
        self.send(Event::Note {
            step,
            level,
            text: text.into(),
        });
    }

    pub fn info(&self, step: Step, text: impl Into<String>) {
        self.note(step, Level::Info, text);
    }

    pub fn warn(&self, step: Step, text: impl Into<String>) {
        self.note(step, Level::Warn, text);
    }

    pub fn started(&self, step: Step) {
        self.send(Event::StepStarted { step });
    }

    pub fn ended(&self, step: Step, outcome: StepOutcome) -> StepOutcome {
        self.send(Event::StepEnded {
            step,
            outcome: outcome.clone(),
        });
        outcome
    }
}
