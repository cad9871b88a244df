#!/usr/bin/env bash
# The test command: installs the real helm and kubectl (.tools/bin), then runs every suite.
# Unit tests and the end-to-end tests (real helm/kubectl against `helmdeck sim`) run in one
# `cargo test`; extra arguments go to cargo test (e.g. `scripts/test.sh sim_kubectl`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-tools.sh
cargo test --all-targets --locked "$@"
