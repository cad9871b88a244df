//! The kubelet's restart back-off, as client-go's `flowcontrol.Backoff` runs it for the
//! kubelet (10 s initial, doubling, capped at 5 min, forgotten after 10 min without news), in
//! simulated time that the scenario's `time_scale` compresses.
//!
//! The first exit of a container restarts it at once and starts the series at 10 s; each
//! later exit waits the current delay (the `back-off 10s restarting failed container=...`
//! message shows it), then restarts and doubles it. Image pulls back off the same way.

use std::time::Duration;

use crate::scenario::TimeScale;

const INITIAL: Duration = Duration::from_secs(10);
const MAX: Duration = Duration::from_secs(300);
/// A series whose last step is older than this starts again (`2 * MAX` in client-go).
pub(super) const FORGET: Duration = Duration::from_secs(600);

/// How far a back-off series got: 0 = none yet (the next exit restarts at once), n = the
/// current delay is `10s * 2^(n-1)`, capped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Backoff(u8);

impl Backoff {
    /// The simulated delay now in force (zero before the first step).
    pub fn delay(self) -> Duration {
        if self.0 == 0 {
            return Duration::ZERO;
        }
        let shift = u32::from(self.0 - 1).min(10);
        (INITIAL * (1u32 << shift)).min(MAX)
    }

    /// client-go's `Next`: start the series, or double the delay.
    pub fn next(&mut self) {
        self.0 = self.0.saturating_add(1).min(16);
    }

    /// Forgets the series (the container ran long enough: its next exit restarts at once).
    pub fn reset(&mut self) {
        self.0 = 0;
    }

    pub fn started(self) -> bool {
        self.0 > 0
    }
}

/// The real time a simulated duration takes at this scale.
pub(super) fn real(scale: TimeScale, simulated: Duration) -> Duration {
    scale.real(simulated)
}

/// A delay as Go's `time.Duration` prints it (`10s`, `1m20s`, `5m0s`).
pub(super) fn go_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 60 {
        format!("{}m{}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_from_10s_to_5m_and_print_as_go_does() {
        let mut b = Backoff::default();
        assert_eq!(b.delay(), Duration::ZERO);
        let mut seen = Vec::new();
        for _ in 0..8 {
            b.next();
            seen.push(go_duration(b.delay()));
        }
        assert_eq!(
            seen,
            [
                "10s", "20s", "40s", "1m20s", "2m40s", "5m0s", "5m0s", "5m0s"
            ]
        );
        for _ in 0..100 {
            b.next();
        }
        assert_eq!(b.delay(), MAX);
        b.reset();
        assert!(!b.started());
    }

    #[test]
    fn the_default_scale_keeps_seconds_short() {
        let scale = TimeScale::default();
        let mut b = Backoff::default();
        let real_secs: Vec<f64> = (0..7)
            .map(|_| {
                b.next();
                real(scale, b.delay()).as_secs_f64()
            })
            .collect();
        assert_eq!(real_secs, [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]);
        assert_eq!(
            real(TimeScale(1.0), Duration::from_secs(40)),
            Duration::from_secs(40)
        );
    }
}
