#!/usr/bin/env bash
# The test command: installs the real helm and kubectl (.tools/bin) and the test runner
# (cargo-nextest, pinned), then runs every suite. Every crate's unit tests, the architecture
# checks (tests/architecture.rs: layers, import cycles, file sizes), the fuzz targets and the
# end-to-end tests (real helm/kubectl against `helmdeck sim`) run in one `cargo nextest run`,
# which names slow tests (.config/nextest.toml); extra arguments go to it as filters (e.g.
# `scripts/test.sh sim_kubectl`). Then the benches' smoke rounds (each case once, as a test).
# Then the real-cluster subset (tests/e2e/real_cluster.rs) runs once more against a
# `helmdeck sim` started here as a separate process, through HELMDECK_E2E_KUBECONFIG, as it
# would against a kind cluster.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-tools.sh
NEXTEST_VERSION="0.9.143"
if ! cargo nextest --version >/dev/null 2>&1; then
    cargo install --locked cargo-nextest --version "$NEXTEST_VERSION"
fi
cargo nextest run --workspace --locked --no-fail-fast "$@"

if [ "$#" -eq 0 ]; then
    cargo test --locked --benches
    work=$(mktemp -d)
    sim_pid=""
    cleanup() {
        if [ -n "$sim_pid" ]; then kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi
        rm -rf "$work"
    }
    trap cleanup EXIT
    cargo build --locked --bin helmdeck
    # The documented install, `cargo install --locked --path .`, with the dev profile in the
    # target directory just built: it only copies; the installed binary names its commit.
    cargo install --locked --quiet --path . --profile dev --root "$work/install" \
        --target-dir "${CARGO_TARGET_DIR:-target}"
    "$work/install/bin/helmdeck" --version | grep -q '^helmdeck [0-9.]* ([0-9a-f]' \
        || { echo "the installed helmdeck does not name its commit" >&2; exit 1; }
    "${CARGO_TARGET_DIR:-target}/debug/helmdeck" sim --scenario all-green --kubeconfig-out "$work/kubeconfig" >"$work/sim.out" &
    sim_pid=$!
    for _ in $(seq 1 100); do
        grep -q '^ready ' "$work/sim.out" 2>/dev/null && break
        sleep 0.1
    done
    grep -q '^ready ' "$work/sim.out" || { echo "helmdeck sim did not start" >&2; exit 1; }
    HELMDECK_E2E_KUBECONFIG="$work/kubeconfig" cargo nextest run --locked --test e2e real_cluster::
fi
