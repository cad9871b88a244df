//! Time as both helmdeck and its simulated cluster write and read it: Kubernetes timestamps,
//! durations a person types (`500ms`, `90s`, `1h30m`) and ages (`5m`, `1m35s`). It lives
//! outside `sim` so that the product never has to import the simulator to tell the time.

use std::fmt;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

/// The shape of `metav1.Time` in JSON: UTC, whole seconds, a `Z`.
const KUBERNETES_TIME: &str = "%Y-%m-%dT%H:%M:%SZ";

/// Now, as Kubernetes writes timestamps (`2026-12-01T00:00:00Z`).
pub fn now_rfc3339() -> String {
    rfc3339(Timestamp::now())
}

/// A timestamp as Kubernetes writes it; sub-second digits are dropped, as JSON clients see.
pub fn rfc3339(t: Timestamp) -> String {
    t.strftime(KUBERNETES_TIME).to_string()
}

/// Unix seconds as Kubernetes writes them, for any second of the four-digit years (0000 to
/// 9999) that RFC 3339 can express; `None` outside them. Computed on a civil date-time because
/// jiff's `Timestamp` stops a day short of 9999-12-31 to leave room for offsets.
pub fn unix_rfc3339(secs: i64) -> Option<String> {
    let epoch = jiff::civil::date(1970, 1, 1).at(0, 0, 0, 0);
    let t = epoch.checked_add(SignedDuration::from_secs(secs)).ok()?;
    (t.year() >= 0).then(|| t.strftime(KUBERNETES_TIME).to_string())
}

/// Why a duration was refused. Callers that add rules of their own (a timeout must be at
/// least a second) branch on the kind rather than on the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DurationError {
    /// Not a duration at all; `reason` is the parser's own explanation.
    Malformed { text: String, reason: String },
    /// Before now (`-1s`, `1s ago`): no wait can be negative.
    Negative { text: String },
    /// A duration, but too long to represent.
    TooLong { text: String },
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::Malformed { text, reason } => write!(
                f,
                "{text:?} is not a duration (like 500ms, 3s, 2m, 1h30m): {reason}"
            ),
            DurationError::Negative { text } => {
                write!(f, "{text:?} is negative; a duration must be 0 or more")
            }
            DurationError::TooLong { text } => write!(f, "{text:?} is too long a duration"),
        }
    }
}

impl std::error::Error for DurationError {}

/// Parses a duration as a person writes it: `500ms`, `3s`, `2m`, `1.5h`, `1h30m`, `2 minutes`,
/// ISO 8601 `PT2M`, or a bare number of seconds (`1.5`). Never panics, whatever the input.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let t = text.trim();
    // A bare number is seconds, as scenario files and older configs write it; jiff wants a unit.
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let secs: f64 = t.parse().map_err(|_| DurationError::Malformed {
            text: text.into(),
            reason: "not a number".into(),
        })?;
        return seconds(secs).map_err(|e| e.for_text(text));
    }
    let signed: SignedDuration = match t.parse() {
        Ok(d) => d,
        Err(_) if parses_when_smaller(t) => {
            return Err(DurationError::TooLong { text: text.into() });
        }
        Err(e) => {
            return Err(DurationError::Malformed {
                text: text.into(),
                reason: e.to_string(),
            });
        }
    };
    if signed.is_negative() {
        return Err(DurationError::Negative { text: text.into() });
    }
    Duration::try_from(signed).map_err(|_| DurationError::TooLong { text: text.into() })
}

/// A number of seconds as a duration (`Duration::from_secs_f64` would panic on the bad ones).
pub fn seconds(secs: f64) -> Result<Duration, DurationError> {
    let text = secs.to_string();
    if secs.is_nan() {
        return Err(DurationError::Malformed {
            text,
            reason: "not a number".into(),
        });
    }
    if secs < 0.0 {
        return Err(DurationError::Negative { text });
    }
    Duration::try_from_secs_f64(secs).map_err(|_| DurationError::TooLong { text })
}

impl DurationError {
    fn for_text(self, text: &str) -> Self {
        let text = text.to_string();
        match self {
            DurationError::Malformed { reason, .. } => DurationError::Malformed { text, reason },
            DurationError::Negative { .. } => DurationError::Negative { text },
            DurationError::TooLong { .. } => DurationError::TooLong { text },
        }
    }
}

/// jiff reports a number too big for its unit as a plain parse error. Written with every
/// number shrunk to 1, such a text parses; a text that is wrong in any other way still fails.
fn parses_when_smaller(t: &str) -> bool {
    let mut shrunk = String::with_capacity(t.len());
    let mut in_number = false;
    for c in t.chars() {
        if c.is_ascii_digit() || (in_number && c == '.') {
            if !in_number {
                shrunk.push('1');
                in_number = true;
            }
        } else {
            in_number = false;
            shrunk.push(c);
        }
    }
    shrunk != t && shrunk.parse::<SignedDuration>().is_ok()
}

/// How an age is written; each screen keeps the form its readers know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgeStyle {
    /// One unit in kubectl's coarse steps: `42s`, `5m`, `3h`, `2d` (the TUI, preflight).
    Short,
    /// kubectl's AGE column, which keeps seconds under ten minutes: `5s`, `3m12s`, `120m`, `2d`.
    Kubectl,
    /// Two units for a report: `1m35s`, `2h1m`, `1d1h`.
    TwoUnits,
}

/// An age of `secs` seconds (a negative one, from clock skew, reads as `0s`).
pub fn age(secs: i64, style: AgeStyle) -> String {
    let s = secs.max(0);
    match style {
        AgeStyle::Short => match s {
            s if s < 120 => format!("{s}s"),
            s if s < 7200 => format!("{}m", s / 60),
            s if s < 172_800 => format!("{}h", s / 3600),
            s => format!("{}d", s / 86_400),
        },
        AgeStyle::Kubectl => match s {
            s if s < 120 => format!("{s}s"),
            s if s < 600 => format!("{}m{}s", s / 60, s % 60),
            s if s < 3 * 3600 => format!("{}m", s / 60),
            s if s < 48 * 3600 => format!("{}h", s / 3600),
            s => format!("{}d", s / 86_400),
        },
        AgeStyle::TwoUnits => match s {
            0..60 => format!("{s}s"),
            60..3600 => format!("{}m{}s", s / 60, s % 60),
            3600..86400 => format!("{}h{}m", s / 3600, s % 3600 / 60),
            _ => format!("{}d{}h", s / 86400, s % 86400 / 3600),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_kubernetes_shaped() {
        let t: Timestamp = "2026-01-01T10:00:00.123456Z".parse().unwrap();
        assert_eq!(rfc3339(t), "2026-01-01T10:00:00Z");
        let now = now_rfc3339();
        assert_eq!(now.len(), "2026-01-01T10:00:00Z".len());
        assert!(now.ends_with('Z'));
        assert_eq!(unix_rfc3339(1_767_261_600).unwrap(), "2026-01-01T10:00:00Z");
        assert_eq!(
            unix_rfc3339(-62_167_219_200).unwrap(),
            "0000-01-01T00:00:00Z"
        );
        assert_eq!(
            unix_rfc3339(253_402_300_799).unwrap(),
            "9999-12-31T23:59:59Z"
        );
        assert_eq!(unix_rfc3339(-62_167_219_201), None);
        assert_eq!(unix_rfc3339(253_402_300_800), None);
        assert_eq!(unix_rfc3339(i64::MIN), None);
        assert_eq!(unix_rfc3339(i64::MAX), None);
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("3s").unwrap(), Duration::from_secs(3));
        assert_eq!(parse_duration(" 2m ").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("1.5m").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("0s").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
    }

    #[test]
    fn bad_durations_are_typed_errors() {
        let malformed = |t: &str| matches!(parse_duration(t), Err(DurationError::Malformed { .. }));
        for t in [
            "",
            "s",
            "3 weeks",
            "1.2.3",
            "abc",
            "1e19s",
            "inf",
            "NaN",
            "5 parsecs",
        ] {
            assert!(malformed(t), "{t:?}: {:?}", parse_duration(t));
        }
        for t in ["-1s", "1s ago", "-0.5h"] {
            assert_eq!(
                parse_duration(t),
                Err(DurationError::Negative { text: t.into() })
            );
        }
        for t in [
            "10000000000000000000s",
            "10000000000000000000000000s",
            "99999999999999999999h",
            "100000000000000000000000000000",
        ] {
            assert_eq!(
                parse_duration(t),
                Err(DurationError::TooLong { text: t.into() })
            );
        }
        let e = parse_duration("3 weeks").unwrap_err().to_string();
        assert!(e.starts_with("\"3 weeks\" is not a duration"), "{e}");
    }

    #[test]
    fn seconds_never_panic() {
        assert_eq!(seconds(1.5).unwrap(), Duration::from_millis(1500));
        assert!(matches!(
            seconds(f64::NAN),
            Err(DurationError::Malformed { .. })
        ));
        assert!(matches!(seconds(-1.0), Err(DurationError::Negative { .. })));
        assert!(matches!(seconds(1e25), Err(DurationError::TooLong { .. })));
        assert!(matches!(
            seconds(f64::INFINITY),
            Err(DurationError::TooLong { .. })
        ));
    }

    #[test]
    fn ages_in_each_style() {
        let short = |s| age(s, AgeStyle::Short);
        assert_eq!(short(30), "30s");
        assert_eq!(short(119), "119s");
        assert_eq!(short(600), "10m");
        assert_eq!(short(7200), "2h");
        assert_eq!(short(172_800), "2d");
        assert_eq!(short(-3), "0s");

        let kubectl = |s| age(s, AgeStyle::Kubectl);
        assert_eq!(kubectl(5), "5s");
        assert_eq!(kubectl(180), "3m0s");
        assert_eq!(kubectl(192), "3m12s");
        assert_eq!(kubectl(7200), "120m");
        assert_eq!(kubectl(4 * 3600), "4h");
        assert_eq!(kubectl(2 * 86_400), "2d");

        let two = |s| age(s, AgeStyle::TwoUnits);
        assert_eq!(two(5), "5s");
        assert_eq!(two(95), "1m35s");
        assert_eq!(two(7300), "2h1m");
        assert_eq!(two(90000), "1d1h");
        assert_eq!(two(-3), "0s");
    }
}
