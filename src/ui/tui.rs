//! The one terminal shell both screens run in: raw mode and the alternate screen on the way in,
//! restored on every way out (a normal return, an error, a panic: the hook restores before the
//! panic message prints, so it is readable); the keys, resizes, the slow tick and the signals
//! as one stream of [`TuiEvent`]s; and [`run`], the loop that draws a [`Screen`] and hands it
//! those events and its own changes.
//!
//! Unlike the ratatui component template's `tui.rs`, nothing runs on a task of its own (the
//! loop awaits the sources directly, so stopping never waits or sleeps), and `Drop` ignores
//! restore errors rather than panicking inside a drop.
//!
//! The terminal may be gone by then (an ssh session dropped: every write fails with EIO, stderr
//! included). Restoring is best effort and silent, and ratatui's own `Drop` for its terminal
//! never runs: it `eprintln!`s when showing the cursor fails, and `eprintln!` panics when stderr
//! is gone, which aborted the process (a panic inside the panic report).

use std::future::Future;
use std::io::{self, Stdout, Write};
use std::mem::ManuallyDrop;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr, eyre};
use futures::StreamExt;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::Show;
use ratatui::crossterm::event::{Event as TermEvent, EventStream, KeyEvent};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode, size,
};
use ratatui::{Frame, Terminal};
use tokio::time::{Interval, MissedTickBehavior};

use crate::signals::{Signal, Signals};

type Term = Terminal<CrosstermBackend<Stdout>>;

/// Whether the terminal is in our mode (so restoring twice is harmless).
static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Leaves raw mode and the alternate screen and shows the cursor. Safe to call at any time,
/// any number of times; errors are ignored (there is nothing better to do on the way out).
fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = disable_raw_mode();
        let mut out = io::stdout();
        let _ = execute!(out, LeaveAlternateScreen, Show);
        let _ = out.flush();
    }
}

fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

/// What a panic prints, installed once when the process starts: color-eyre's report when
/// stdout is a terminal, one plain line elsewhere (a pipe, a CI log: no colours, no
/// backtrace). Either is written with a write whose failure is ignored, never `eprintln!`:
/// after a hang-up stderr is gone, and a panic inside the panic hook aborts the process.
pub fn install_panic_report(on_terminal: bool) -> Result<()> {
    fn say(report: impl std::fmt::Display) {
        let _ = writeln!(io::stderr().lock(), "{report}");
    }
    if on_terminal {
        let (panic, eyre) = color_eyre::config::HookBuilder::default().try_into_hooks()?;
        eyre.install()?;
        std::panic::set_hook(Box::new(move |info| say(panic.panic_report(info))));
    } else {
        std::panic::set_hook(Box::new(|info| {
            let at = info.location().map(|l| (l.file(), l.line()));
            say(crate::text::panic_line(info.payload(), at));
        }));
    }
    Ok(())
}

/// Raw mode, the alternate screen, a hidden cursor. On an error part of it may be set up: the
/// caller restores.
fn enter_terminal() -> io::Result<ManuallyDrop<Term>> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    execute!(io::stdout(), EnterAlternateScreen)?;
    // Never dropped, from the start: a failure below returns without ratatui's `Drop`.
    let mut terminal = ManuallyDrop::new(Terminal::new(CrosstermBackend::new(io::stdout()))?);
    terminal.hide_cursor()?;
    terminal.clear()?;
    Ok(terminal)
}

/// What the terminal says, in the order it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuiEvent {
    Key(KeyEvent),
    /// The terminal changed size (the next frame fits it).
    Resize,
    /// The slow tick (spinners, clocks), when the screen asked for one.
    Tick,
    Signal(Signal),
    /// The input ended or failed: no key comes any more.
    InputClosed,
}

/// Owns the terminal while a screen runs; dropping it restores the terminal.
pub struct Tui {
    /// Never dropped: [`restore`] does what its `Drop` would, without printing (see above).
    terminal: ManuallyDrop<Term>,
    input: EventStream,
    input_open: bool,
    tick: Option<Interval>,
    signals: Signals,
    /// Frames no longer reach anyone (a failed frame, a hang-up): nothing is drawn.
    lost: bool,
}

impl Tui {
    /// [`Tui::enter`], or `None` once stderr says why the plain output comes instead (a terminal
    /// that does not answer or cannot show a screen).
    pub fn enter_or_plain(tick: Option<Duration>) -> Option<Tui> {
        match Tui::enter(tick) {
            Ok(tui) => Some(tui),
            Err(e) => {
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "helmdeck: {}: plain output instead",
                    crate::text::one_line(e.chain())
                );
                None
            }
        }
    }

    /// Signals first, the terminal second: nothing has started if either fails. `tick`, when
    /// given, is how often [`TuiEvent::Tick`] comes.
    pub fn enter(tick: Option<Duration>) -> Result<Tui> {
        // A terminal that cannot say its size (or says 0) would get an invisible screen.
        match size() {
            Ok((w, h)) if w > 0 && h > 0 => {}
            Ok((w, h)) => return Err(eyre!("the terminal reports its size as {w}x{h}")),
            Err(e) => return Err(e).wrap_err("the terminal does not tell its size"),
        }
        let signals = Signals::install_with_hangup()?;
        let terminal = enter_terminal()
            .inspect_err(|_| restore())
            .wrap_err("setting up the terminal")?;
        let tick = tick.map(|every| {
            let mut t = tokio::time::interval(every);
            t.set_missed_tick_behavior(MissedTickBehavior::Skip);
            t
        });
        Ok(Tui {
            terminal,
            input: EventStream::new(),
            input_open: true,
            tick,
            signals,
            lost: false,
        })
    }

    /// Draws one frame, unless the terminal is lost. An error means it is lost from now on.
    pub fn draw(&mut self, render: impl FnOnce(&mut Frame)) -> io::Result<()> {
        if self.lost {
            return Ok(());
        }
        self.terminal.draw(render).map(|_| ()).inspect_err(|_| {
            self.lost = true;
        })
    }

    /// The next event. Cancel-safe: each source keeps what arrived while nobody waited.
    pub async fn next(&mut self) -> TuiEvent {
        let Tui {
            terminal,
            input,
            input_open,
            tick,
            signals,
            lost,
        } = self;
        let tick = async {
            match tick.as_mut() {
                Some(t) => {
                    t.tick().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::pin!(tick);
        loop {
            tokio::select! {
                read = input.next(), if *input_open => match read {
                    Some(Ok(TermEvent::Key(key))) => return TuiEvent::Key(key),
                    Some(Ok(TermEvent::Resize(..))) => {
                        // A failed resize shows at the next draw, which knows what to do.
                        let _ = terminal.autoresize();
                        return TuiEvent::Resize;
                    }
                    // Mouse, focus and paste events mean nothing here.
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => {
                        *input_open = false;
                        return TuiEvent::InputClosed;
                    }
                },
                () = &mut tick => return TuiEvent::Tick,
                signal = signals.recv() => {
                    if signal == Signal::Hangup {
                        *lost = true;
                    }
                    return TuiEvent::Signal(signal);
                }
            }
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        restore();
    }
}

/// What the loop does after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Nothing shown changed.
    Same,
    Redraw,
    /// The screen ends now.
    Quit,
}

/// A screen the loop runs: the deploy screen and the inspect screen.
pub trait Screen {
    fn draw(&mut self, frame: &mut Frame);
    /// One event from the terminal (a resize never comes here: the loop redraws on its own).
    fn on_event(&mut self, event: TuiEvent) -> Flow;
    /// The screen's own next change (engine events, a reload). Cancel-safe: the loop drops
    /// this future whenever the terminal speaks first.
    fn changed(&mut self) -> impl Future<Output = Flow>;
    /// A frame could not be drawn: nothing more will be. `Err` ends the loop with it.
    fn on_lost(&mut self, error: io::Error) -> Result<Flow>;
    /// Whether the loop ends (asked after every frame).
    fn done(&self) -> bool {
        false
    }
}

/// Runs `screen` in `tui` until it quits or is done: draws when something changed, then waits
/// for the terminal or the screen's own change, whichever comes first.
pub async fn run<S: Screen>(tui: &mut Tui, screen: &mut S) -> Result<()> {
    enum Next {
        Terminal(TuiEvent),
        Screen(Flow),
    }
    let mut dirty = true;
    loop {
        if dirty {
            dirty = false;
            if let Err(e) = tui.draw(|frame| screen.draw(frame))
                && screen.on_lost(e)? == Flow::Quit
            {
                return Ok(());
            }
        }
        if screen.done() {
            return Ok(());
        }
        let next = tokio::select! {
            event = tui.next() => Next::Terminal(event),
            flow = screen.changed() => Next::Screen(flow),
        };
        let flow = match next {
            Next::Terminal(TuiEvent::Resize) => Flow::Redraw,
            Next::Terminal(event) => screen.on_event(event),
            Next::Screen(flow) => flow,
        };
        match flow {
            Flow::Quit => return Ok(()),
            Flow::Redraw => dirty = true,
            Flow::Same => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    /// Set in the child the test below starts: which report it installs.
    const CHILD: &str = "HELMDECK_TEST_PANIC_CHILD";
    const NAME: &str = "ui::tui::tests::a_panic_reported_into_a_gone_stderr_never_aborts";

    /// The panic report (and the screen's hook around it) writing into a stderr nobody reads
    /// any more (a pipe closed at the far end, as a hung-up terminal fails writes) is a
    /// panic like any other, caught where it is caught; never an abort. Run in a child process
    /// of this test binary: the hooks are process-wide.
    #[test]
    fn a_panic_reported_into_a_gone_stderr_never_aborts() {
        if let Ok(mode) = std::env::var(CHILD) {
            super::install_panic_report(mode == "terminal").expect("installing the report");
            super::install_panic_hook();
            let mut fds = [0; 2];
            // SAFETY: plain descriptor calls on descriptors this process owns.
            unsafe {
                assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
                libc::close(fds[0]);
                assert_eq!(libc::dup2(fds[1], 2), 2);
            }
            let caught = std::panic::catch_unwind(|| panic!("on purpose"));
            assert!(caught.is_err());
            return;
        }
        let exe = std::env::current_exe().expect("the test binary");
        for mode in ["terminal", "plain"] {
            let out = Command::new(&exe)
                .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
                .env(CHILD, mode)
                .output()
                .expect("running the test binary again");
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("1 passed"),
                "{mode}: {:?}\n{stdout}",
                out.status
            );
        }
    }
}
