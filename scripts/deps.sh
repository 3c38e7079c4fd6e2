#!/usr/bin/env bash
# Installs what the tests need: Debian packages (git, bubblewrap, ripgrep,
# the Secret Service keychain and D-Bus, Chromium for the reference shell's
# browser test), the npm MCP reference server, the official ACP TypeScript
# client, and the npm packages of clients/ts and examples/shell-web.
# Says exactly why when it cannot.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(git bubblewrap ripgrep gnome-keyring dbus dbus-x11 libsecret-tools procps tesseract-ocr poppler-utils chromium)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null; then
    echo "deps: need root (or sudo) to apt-get install: ${missing[*]}" >&2
    exit 1
  fi
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "deps: installing ${missing[*]}"
  $SUDO apt-get update -qq || { echo "deps: apt-get update failed (no access to Debian's package mirror?)" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || { echo "deps: apt-get install ${missing[*]} failed" >&2; exit 1; }
fi

# The MCP reference server, for the mcp package's end-to-end test.
if [ -f mcp/testdata/npm/package.json ]; then
  if ! command -v npm >/dev/null; then
    echo "deps: npm not found: install Node.js 20+ (apt-get install nodejs npm) for the MCP server-everything test" >&2
    exit 1
  fi
  if [ ! -d mcp/testdata/npm/node_modules/@modelcontextprotocol/server-everything ]; then
    echo "deps: npm install @modelcontextprotocol/server-everything"
    (cd mcp/testdata/npm && npm install --no-audit --no-fund --silent) \
      || { echo "deps: npm install failed (no access to the npm registry?)" >&2; exit 1; }
  fi
fi
# The official ACP TypeScript client, for the acp package's Node test.
if [ -f acp/testdata/node/package.json ]; then
  if ! command -v npm >/dev/null; then
    echo "deps: npm not found: install Node.js 20+ (apt-get install nodejs npm) for the ACP client test" >&2
    exit 1
  fi
  if [ ! -d acp/testdata/node/node_modules/@agentclientprotocol/sdk ]; then
    echo "deps: npm ci @agentclientprotocol/sdk"
    (cd acp/testdata/node && npm ci --no-audit --no-fund --silent) \
      || { echo "deps: npm ci failed (no access to the npm registry?)" >&2; exit 1; }
  fi
fi
# The TypeScript client and the reference shell (make test-ts, make test-ui):
# npm ci when node_modules is missing or older than the lock file (clients/ts
# first). The shell's test imports the client's dist/: make test-ui builds it.
for dir in clients/ts examples/shell-web; do
  [ -f "$dir/package-lock.json" ] || continue
  if ! command -v npm >/dev/null; then
    echo "deps: npm not found: install Node.js 20+ (apt-get install nodejs npm) for $dir" >&2
    exit 1
  fi
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    echo "deps: npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --silent) \
      || { echo "deps: npm ci in $dir failed (no access to the npm registry?)" >&2; exit 1; }
  fi
done
echo "deps: ok"
