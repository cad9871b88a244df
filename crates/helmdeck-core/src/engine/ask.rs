//! The questions a deploy may put to an operator at a screen, and their answers: one channel
//! for the plan's `y`/`n`, the stuck lock's `u` then `y`, and the rollback's `R` then `y`.
//! The engine holds [`Asks`] (in the prepared deploy, so any step can take the answer it waits
//! for); the screen holds [`Answers`]. Headless runs ask nothing: [`Asks::default`].

use std::sync::Mutex;

use tokio::sync::oneshot;

/// What the engine may wait on an operator for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    /// `--plan`: go on with the upgrade?
    Plan,
    /// Preflight stopped on a stuck lock: roll it back?
    Unlock,
    /// The verdict failed and nothing rolled back: roll back now (the screen's `R`)?
    Rollback,
}

impl Question {
    const ALL: [Question; 3] = [Question::Plan, Question::Unlock, Question::Rollback];

    fn slot(self) -> usize {
        self as usize
    }
}

/// One answer, when it comes: `true` goes on. A dropped sender (the operator quit, the
/// keyboard is gone) ends the wait as a no.
pub type Answer = oneshot::Receiver<bool>;

/// The engine's side: the answer to each question asked, taken once by the step that waits.
#[derive(Debug, Default)]
pub struct Asks {
    waiting: Mutex<[Option<Answer>; 3]>,
}

/// The screen's side: where each answer goes, taken once by the key that gives it.
#[derive(Debug, Default)]
pub struct Answers {
    to: [Option<oneshot::Sender<bool>>; 3],
}

impl Asks {
    /// A channel for each of `questions`; the others are never asked.
    pub fn ask(questions: &[Question]) -> (Asks, Answers) {
        let (asks, mut answers) = (Asks::default(), Answers::default());
        let mut waiting = asks.waiting.lock().unwrap_or_else(|e| e.into_inner());
        for q in Question::ALL.into_iter().filter(|q| questions.contains(q)) {
            let (tx, rx) = oneshot::channel();
            waiting[q.slot()] = Some(rx);
            answers.to[q.slot()] = Some(tx);
        }
        drop(waiting);
        (asks, answers)
    }

    /// The answer to wait for, once; `None` where nobody was asked (or it was taken).
    pub fn take(&self, question: Question) -> Option<Answer> {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        waiting[question.slot()].take()
    }
}

impl Answers {
    /// Where the answer goes, once; `None` once answered or never asked.
    pub fn take(&mut self, question: Question) -> Option<oneshot::Sender<bool>> {
        self.to[question.slot()].take()
    }

    /// Whether the engine may still be told (nothing answered or withdrawn yet).
    pub fn waits(&self, question: Question) -> bool {
        self.to[question.slot()].is_some()
    }

    /// Nobody will answer: the engine's wait ends as a no.
    pub fn withdraw(&mut self, question: Question) {
        self.to[question.slot()] = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_answer_reaches_its_own_question_once() {
        let (asks, mut answers) = Asks::ask(&[Question::Plan, Question::Rollback]);
        assert!(asks.take(Question::Unlock).is_none(), "never asked");
        assert!(!answers.waits(Question::Unlock));
        let plan = asks.take(Question::Plan).expect("asked");
        assert!(asks.take(Question::Plan).is_none(), "taken once");
        answers
            .take(Question::Plan)
            .expect("asked")
            .send(true)
            .unwrap();
        assert_eq!(plan.await, Ok(true));
        let rollback = asks.take(Question::Rollback).expect("asked");
        answers.withdraw(Question::Rollback);
        assert!(!answers.waits(Question::Rollback));
        assert!(
            rollback.await.is_err(),
            "a withdrawn question ends the wait"
        );
    }

    #[test]
    fn a_headless_run_asks_nothing() {
        let asks = Asks::default();
        for q in Question::ALL {
            assert!(asks.take(q).is_none());
        }
    }
}
