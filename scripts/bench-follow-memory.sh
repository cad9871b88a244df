#!/usr/bin/env bash
# `helmdeck watch REL --follow` over N revisions (default 100): helmdeck's resident set after
# each tenth, to show its memory stays flat as revisions pass (issue 24). Uses the release
# binary (HELMDECK= to choose another), the real helm from .tools/bin, and `helmdeck sim`.
# A chart of one small Deployment, so a revision takes about two seconds. EVENT_TTL=30s gives
# the simulator the API server's Event expiry (an hour there): the namespace's Events then stop
# growing with the revisions, which tells helmdeck's growth from the cluster's.
set -euo pipefail
revisions=${1:-100}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${HELMDECK:-$root/target/release/helmdeck}
helm=$root/.tools/bin/helm
work=$(mktemp -d)
cleanup() {
    kill "${watcher:-}" "${sim:-}" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
export HOME=$work KUBECONFIG=$work/kubeconfig XDG_STATE_HOME=$work/state HELM_BIN=$helm
mkdir -p "$work/chart/templates"
printf 'apiVersion: v2\nname: web\nversion: 0.1.0\n' > "$work/chart/Chart.yaml"
printf 'rev: "0"\n' > "$work/chart/values.yaml"
cat > "$work/chart/templates/web.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels: {app.kubernetes.io/instance: {{ .Release.Name }}}
spec:
  replicas: 2
  selector: {matchLabels: {app.kubernetes.io/instance: {{ .Release.Name }}}}
  template:
    metadata:
      labels: {app.kubernetes.io/instance: {{ .Release.Name }}}
      annotations: {rev: {{ .Values.rev | quote }}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
YAML
printf 'description: follow\nnodes: 2\nnamespaces: [apps]\ntick: 100ms\ndefaults:\n  start_after: 200ms\n  ready_after: 300ms\n' > "$work/scenario.yaml"
if [ -n "${EVENT_TTL:-}" ]; then printf 'event_ttl: %s\n' "$EVENT_TTL" >> "$work/scenario.yaml"; fi
"$bin" sim --scenario "$work/scenario.yaml" --kubeconfig-out "$KUBECONFIG" > "$work/sim.out" 2>&1 &
sim=$!
for _ in $(seq 100); do [ -s "$KUBECONFIG" ] && break; sleep 0.1; done
"$helm" install rel "$work/chart" -n apps > /dev/null
"$bin" watch rel -n apps --follow --headless > "$work/watch.out" 2>&1 &
watcher=$!
verdicts() { grep -c '^verdict:' "$work/watch.out" || true; }
until [ "$(verdicts)" -ge 1 ]; do sleep 0.2; done
echo "revisions  helmdeck VmRSS KiB  VmHWM KiB  RssAnon KiB"
for i in $(seq 1 "$revisions"); do
    "$helm" upgrade rel "$work/chart" -n apps --set rev="$i" > /dev/null
    until [ "$(verdicts)" -ge $((i + 1)) ]; do sleep 0.1; done
    if [ $((i % 10)) -eq 0 ]; then
        rss=$(awk '/^VmRSS/ {print $2}' "/proc/$watcher/status")
        hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$watcher/status")
        anon=$(awk '/^RssAnon/ {print $2}' "/proc/$watcher/status")
        echo "$((i + 1))  $rss  $hwm  $anon"
    fi
done
