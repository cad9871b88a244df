//! Property-based fuzzing of the parsers that read outside input: release records, helm's
//! status and history JSON, the sanitizer and the width cuts, `helmdeck.toml` and scenarios.
//!
//! Every target is `#[ignore]`d so `cargo test --all-targets` (and CI) skips it; run them with
//! `scripts/fuzz.sh [SECONDS]`, or by hand:
//!
//! ```text
//! cargo test --test fuzz -- --ignored --nocapture              # 64 cases per target
//! PROPTEST_CASES=100000 HELMDECK_FUZZ_SECONDS=60 cargo test --test fuzz -- --ignored --nocapture
//! ```
//!
//! `HELMDECK_FUZZ_SECONDS` stops each target at that time even when cases remain, so a run is
//! bounded. A crash found here becomes a named regression test beside the parser (not here:
//! these tests do not run in CI) and a fix in the parser. `PROPTEST_RNG_SEED` replays a run.

mod config;
mod inputs;
mod records;
mod release;
mod scenario;
mod status;
mod text;

use std::fmt::Debug;
use std::time::{Duration, Instant};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseResult, TestError, TestRunner};

/// Cases per target when `PROPTEST_CASES` is not set: a quick smoke run.
const DEFAULT_CASES: u32 = 64;

/// Cases per runner; the time budget is checked between batches.
const BATCH: u32 = 256;

/// Stack of the thread each target runs on. Generating values from deeply nested strategies
/// takes more than a test thread's 2 MiB in debug builds (the overflow is in proptest's value
/// trees, not in the code under test).
const STACK: usize = 64 << 20;

/// Runs `test` on values of the strategy `make` builds until the case count or the time
/// budget is spent, then reports how many cases ran. A failing case is shrunk and reported
/// with its minimal input.
pub fn fuzz<S>(
    name: &str,
    make: impl FnOnce() -> S + Send,
    test: impl Fn(S::Value) -> TestCaseResult + Send,
) where
    S: Strategy,
    S::Value: Debug,
{
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name(name.to_string())
            .stack_size(STACK)
            .spawn_scoped(scope, || run(name, make(), test))
            .expect("spawning a fuzz thread");
        if let Err(panic) = worker.join() {
            std::panic::resume_unwind(panic);
        }
    });
}

fn run<S>(name: &str, strategy: S, test: impl Fn(S::Value) -> TestCaseResult)
where
    S: Strategy,
    S::Value: Debug,
{
    let cases = env_number::<u32>("PROPTEST_CASES").unwrap_or(DEFAULT_CASES);
    let budget = env_number::<f64>("HELMDECK_FUZZ_SECONDS")
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(Duration::from_secs_f64);
    let base = Config {
        // Crashes become regression unit tests beside the parser; no seed files in the tree.
        failure_persistence: None,
        ..Config::default()
    };
    // Each batch gets its own runner (a runner stops once it has counted `cases` successes);
    // their RNGs derive from one parent, so `PROPTEST_RNG_SEED` replays the whole run.
    let mut parent = TestRunner::new(base.clone());
    let started = Instant::now();
    let mut done: u64 = 0;
    while done < u64::from(cases) && budget.is_none_or(|b| started.elapsed() < b) {
        let batch = u32::try_from(u64::from(cases) - done)
            .unwrap_or(BATCH)
            .min(BATCH);
        let config = Config {
            cases: batch,
            ..base.clone()
        };
        let mut runner = TestRunner::new_with_rng(config, parent.new_rng());
        match runner.run(&strategy, &test) {
            Ok(()) => done += u64::from(batch),
            Err(TestError::Fail(reason, input)) => {
                panic!("fuzz {name} FAILED: {reason}\nminimal input: {input:#?}")
            }
            Err(TestError::Abort(reason)) => panic!("fuzz {name} FAILED: aborted: {reason}"),
        }
    }
    eprintln!(
        "fuzz {name}: {done} cases in {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

fn env_number<T: std::str::FromStr>(var: &str) -> Option<T> {
    std::env::var(var).ok()?.trim().parse().ok()
}
