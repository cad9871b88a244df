//! The signals that stop a run, installed in one place for the TUI and the headless runs.
//! Each arrives as a value the caller decides about (cancel the deploy, quit the screen); the
//! process is never ended by a signal's default action once a handler is installed, so helm
//! always gets its SIGTERM and is waited for.

use color_eyre::eyre::{Result, WrapErr};
use tokio::signal::unix::{self, SignalKind};

/// Which signal arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Interrupt,
    Terminate,
    /// The terminal went away.
    Hangup,
}

/// SIGINT, SIGTERM and (when asked for) SIGHUP, as [`Signal`]s.
pub struct Signals {
    int: unix::Signal,
    term: unix::Signal,
    hup: Option<unix::Signal>,
}

impl Signals {
    /// SIGINT and SIGTERM only: SIGHUP keeps its default action (it ends the process).
    pub fn install() -> Result<Signals> {
        Ok(Signals {
            int: unix::signal(SignalKind::interrupt()).wrap_err("installing the SIGINT handler")?,
            term: unix::signal(SignalKind::terminate())
                .wrap_err("installing the SIGTERM handler")?,
            hup: None,
        })
    }

    /// SIGINT, SIGTERM and SIGHUP: a deploy (TUI or headless) outlives its terminal to reach
    /// the verdict.
    pub fn install_with_hangup() -> Result<Signals> {
        let mut signals = Signals::install()?;
        signals.hup =
            Some(unix::signal(SignalKind::hangup()).wrap_err("installing the SIGHUP handler")?);
        Ok(signals)
    }

    /// The next signal. Cancel-safe: a signal that arrives while nobody waits is kept.
    pub async fn recv(&mut self) -> Signal {
        let Signals { int, term, hup } = self;
        let hup = async {
            match hup.as_mut() {
                Some(hup) => hup.recv().await,
                None => std::future::pending().await,
            }
        };
        // A stream that reports its end (the runtime shutting down) is not a signal.
        tokio::select! {
            Some(()) = int.recv() => Signal::Interrupt,
            Some(()) = term.recv() => Signal::Terminate,
            Some(()) = hup => Signal::Hangup,
            else => std::future::pending().await,
        }
    }
}
