//! The process's exit code when something other than a verdict ends it. Before the first
//! cluster request nothing has changed anywhere, so an error there is a usage error (2); after
//! it the cluster may be mid-change, so every error, and any panic, is a failure (1), never 2.

use std::sync::atomic::{AtomicBool, Ordering};

/// Anything caught before the first cluster request.
pub const USAGE: i32 = 2;
/// A failure (the verdict's 1), and every error once the cluster was touched.
pub const FAILED: i32 = 1;

/// `--plan-only` found changes pending. Only that flag ends with it: a deploy never does, so a
/// script that knows 0/1/2/3 is not misled.
pub const CHANGES_PENDING: i32 = 4;

static TOUCHED: AtomicBool = AtomicBool::new(false);

/// Marks the moment the first cluster request is about to go out.
pub fn touching_the_cluster() {
    TOUCHED.store(true, Ordering::SeqCst);
}

/// Whether the cluster may have been touched.
pub fn touched() -> bool {
    TOUCHED.load(Ordering::SeqCst)
}

/// The exit code of an error, given whether the cluster was touched when it happened.
pub fn for_error(touched: bool) -> i32 {
    if touched { FAILED } else { USAGE }
}

/// The exit code of a whole run: its own code, or what its error or panic calls for. A panic
/// is never a usage error: it is helmdeck's fault, not the input's.
pub fn of<E>(run: std::thread::Result<Result<i32, E>>, touched: bool) -> i32 {
    match run {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => for_error(touched),
        Err(_) => FAILED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: impl FnOnce() -> Result<i32, String>) -> std::thread::Result<Result<i32, String>> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
    }

    #[test]
    fn errors_after_the_cluster_was_touched_are_1_never_2() {
        assert_eq!(of(run(|| Ok(3)), true), 3);
        assert_eq!(of(run(|| Err("bad flag".into())), false), USAGE);
        assert_eq!(of(run(|| Err("terminal failed".into())), true), FAILED);
    }

    #[test]
    fn a_panic_is_a_failure_touched_or_not() {
        // The panic messages print (the hook is process-wide, not the test's to swap).
        let panicked = run(|| panic!("a task panicked"));
        assert!(panicked.is_err());
        assert_eq!(of(panicked, true), FAILED);
        assert_eq!(of(run(|| panic!("early")), false), FAILED);
    }
}
