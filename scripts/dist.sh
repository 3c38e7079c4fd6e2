#!/usr/bin/env bash
# Builds the release binaries: sidecar-<version>-<os>-<arch>[.exe] for every
# platform in $PLATFORMS, static (CGO_ENABLED=0), stripped, reproducible
# paths; writes SHA256SUMS beside them and fails when one binary is over
# $MAX_BYTES (the size budget, 25 MiB). Called by `make dist`.
#
# It also lays them out under names electron-builder expands:
# electron-builder/<os>-<arch>/sidecar[.exe] with its ${os} (linux, mac,
# win) and ${arch} (x64, arm64), so a shell lists one entry,
# {"from": "<dist>/electron-builder/${os}-${arch}", "to": "bin"}, in
# extraResources (README.md, "A shell bundles the binary"). Hard links
# where the file system allows, else copies.
set -euo pipefail
cd "$(dirname "$0")/.."
GO="${GO:-go}"
VERSION="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
DIST="${DIST:-dist}"
PLATFORMS="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"
MAX_BYTES="${MAX_BYTES:-26214400}"

rm -rf "$DIST"
mkdir -p "$DIST"
over=()
for p in $PLATFORMS; do
  os="${p%/*}" arch="${p#*/}"
  ext=""; [ "$os" = windows ] && ext=".exe"
  out="$DIST/sidecar-$VERSION-$os-$arch$ext"
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" "$GO" build -trimpath \
    -ldflags "-s -w -X main.version=$VERSION" -o "$out" ./cmd/sidecar
  size=$(stat -c %s "$out" 2>/dev/null || stat -f %z "$out")
  printf '%-45s %10d bytes  %5.1f MiB\n' "$(basename "$out")" "$size" "$(awk "BEGIN{print $size/1048576}")"
  [ "$size" -le "$MAX_BYTES" ] || over+=("$(basename "$out") ($size bytes)")
  case "$os" in darwin) ebos=mac ;; windows) ebos=win ;; *) ebos="$os" ;; esac
  case "$arch" in amd64) ebarch=x64 ;; 386) ebarch=ia32 ;; arm) ebarch=armv7l ;; *) ebarch="$arch" ;; esac
  mkdir -p "$DIST/electron-builder/$ebos-$ebarch"
  ln -f "$out" "$DIST/electron-builder/$ebos-$ebarch/sidecar$ext" 2>/dev/null || cp "$out" "$DIST/electron-builder/$ebos-$ebarch/sidecar$ext"
done
(cd "$DIST" && sha256sum sidecar-* > SHA256SUMS 2>/dev/null || shasum -a 256 sidecar-* > SHA256SUMS)
echo "dist: $DIST/SHA256SUMS; electron-builder layout in $DIST/electron-builder/<os>-<arch>/"
if ((${#over[@]})); then
  echo "dist: over the size budget of $MAX_BYTES bytes: ${over[*]}" >&2
  exit 1
fi
