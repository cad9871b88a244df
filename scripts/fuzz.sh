#!/usr/bin/env bash
# Fuzzes the parsers of outside input (tests/fuzz: release records, helm status/history JSON,
# the sanitizer and width cuts, helmdeck.toml, scenarios) for about SECONDS in all (default
# 300). Every target runs, FUZZ_JOBS at a time (default: the number of CPUs), each for its
# share of the time, with no cap on cases. Not part of CI: those targets are #[ignore]d.
#
# A failure prints the target and its shrunk minimal input (the full log is target/fuzz.log).
# Make it a named regression test beside the parser, then fix the parser.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds="${1:-300}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [[ "$seconds" -eq 0 ]]; then
    echo "usage: scripts/fuzz.sh [SECONDS]   (whole seconds, more than 0)" >&2
    exit 2
fi
jobs="${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}"

cargo test --test fuzz --no-run
targets=$(cargo test --quiet --test fuzz -- --ignored --list 2>/dev/null | grep -c ': test$')
if [[ "$targets" -eq 0 ]]; then
    echo "fuzz.sh: no fuzz targets found" >&2
    exit 1
fi
# Targets run `jobs` at a time, so each gets jobs/targets of the wall-clock budget.
per_target=$(awk -v s="$seconds" -v j="$jobs" -v t="$targets" 'BEGIN { printf "%.1f", s * j / t }')
echo "fuzz.sh: $targets targets, $jobs at a time, ${per_target}s each (~${seconds}s in all)"

log=target/fuzz.log
status=0
PROPTEST_CASES=4000000000 HELMDECK_FUZZ_SECONDS="$per_target" \
    cargo test --test fuzz -- --ignored --nocapture --test-threads "$jobs" >"$log" 2>&1 ||
    status=$?

grep -E '^fuzz [a-z_]+: [0-9]+ cases' "$log" | sort || true
awk '/^fuzz [a-z_]+: [0-9]+ cases/ { n += $3 } END { printf "fuzz.sh: %d cases in all\n", n }' "$log"
if [[ "$status" -ne 0 ]]; then
    echo "fuzz.sh: FAILED (full log: $log)" >&2
    # Each failing target's message and the start of its minimal input, lines cut short.
    awk '/^fuzz [a-z_]+ FAILED: / { p = 1; n = 0 }
         p && /^(test |fuzz [a-z_]+: )/ { p = 0 }
         p && n++ < 30 && !/^ +[0-9]+: |^ +at |^stack backtrace|^note: /' "$log" |
        cut -c1-200 >&2
fi
exit "$status"
