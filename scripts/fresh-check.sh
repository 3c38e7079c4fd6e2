#!/usr/bin/env bash
# Checks that `make test` passes on a fresh machine: clones the committed
# HEAD into a temp dir and runs the test phases with empty GOPATH, GOBIN,
# GOCACHE, GOMODCACHE and HOME (every module comes from the proxy again,
# npm starts with an empty cache), printing how long each phase took.
#   scripts/fresh-check.sh            (keeps nothing; KEEP=1 keeps the temp dir)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d /tmp/zqagent-fresh.XXXXXX)"
cleanup() {
  if [ "${KEEP:-}" = 1 ]; then echo "fresh-check: kept $tmp"; else chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"; fi
}
trap cleanup EXIT
mkdir -p "$tmp/home" "$tmp/gopath" "$tmp/gobin" "$tmp/gocache"
export HOME="$tmp/home" GOPATH="$tmp/gopath" GOBIN="$tmp/gobin" GOCACHE="$tmp/gocache"
export GOMODCACHE="$tmp/gopath/pkg/mod"
unset GOENV GOTOOLCHAIN 2>/dev/null || true

declare -a names times
phase() {
  local name="$1"; shift
  echo "== fresh-check: $name: $*"
  local t0=$SECONDS
  if ! "$@"; then
    names+=("$name (FAILED)"); times+=("$((SECONDS - t0))")
    exit 1
  fi
  names+=("$name"); times+=("$((SECONDS - t0))")
}
summary() {
  echo "== fresh-check: phase times (s)"
  for i in "${!names[@]}"; do printf '   %-22s %5ss\n' "${names[$i]}" "${times[$i]}"; done
}
trap 'summary; cleanup' EXIT

phase clone git clone -q "$repo" "$tmp/src"
cd "$tmp/src"
phase "go mod download" go mod download
phase "make deps" make deps
phase "make lint" make lint
phase "make test-go" make test-go
phase "make test-third-party" make test-third-party
phase "make test-ts" make test-ts
phase "make test-ui" make test-ui
phase "make build" make build
echo "== fresh-check: ok ($(git rev-parse --short HEAD))"
