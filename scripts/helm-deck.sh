#!/bin/sh
# The `helm deck` plugin command: runs helmdeck with the arguments helm passed on. helm sets
# HELM_PLUGIN_DIR (the checkout) and HELM_BIN (the helm that ran us, which helmdeck then uses).
set -eu

dir="$(cd "${HELM_PLUGIN_DIR:-$(dirname "$0")/..}" && pwd -P)"
bin="${HELMDECK_BIN:-}"
if [ -z "$bin" ]; then
    if command -v helmdeck >/dev/null 2>&1; then
        bin="$(command -v helmdeck)"
    elif [ -x "$dir/target/release/helmdeck" ]; then
        bin="$dir/target/release/helmdeck"
    elif [ -x "$dir/target/debug/helmdeck" ]; then
        bin="$dir/target/debug/helmdeck"
    fi
fi
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    echo "helm deck: the helmdeck binary is not installed: run \`cargo install --path $dir\` (or set HELMDECK_BIN)" >&2
    exit 2
fi
# helm took -n and --kube-context for itself; deploy, watch and inspect get them back (first, so
# they never land after a `--`). HELM_NAMESPACE is helm's resolved one: -n, else the context's,
# else `default`, as helmdeck would resolve it. demo, replay and sim never get them: demo runs its
# own cluster, replay reads a file, sim serves one.
if [ $# -gt 0 ]; then
    case "$1" in
    deploy | watch | inspect)
        sub="$1"
        shift
        set -- "$sub" ${HELM_NAMESPACE:+-n "$HELM_NAMESPACE"} \
            ${HELM_KUBECONTEXT:+--kube-context "$HELM_KUBECONTEXT"} "$@"
        ;;
    esac
fi
exec "$bin" "$@"
