#!/bin/sh
# with-keyring.sh CMD [ARGS...]
#
# Runs CMD inside a private D-Bus session with gnome-keyring's Secret Service
# started and unlocked, so the keychain tests run against the real backend:
#
#   keychain/testdata/with-keyring.sh go test -race ./keychain/
#
# Needs: apt-get install -y gnome-keyring dbus dbus-x11 libsecret-tools
# The keyring lives in a throw-away XDG_DATA_HOME, so a developer's own login
# keyring is never touched. CMD sees ZQAGENT_KEYRING_TEST=1.
set -eu

if [ "$#" -eq 0 ]; then
	echo "usage: $0 CMD [ARGS...]" >&2
	exit 2
fi

if [ -z "${ZQAGENT_KEYRING_INNER:-}" ]; then
	for tool in dbus-run-session gnome-keyring-daemon; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			echo "$0: $tool not found; apt-get install -y gnome-keyring dbus dbus-x11" >&2
			exit 1
		fi
	done
	ZQAGENT_KEYRING_INNER=1 exec dbus-run-session -- "$0" "$@"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zqagent-keyring.XXXXXX")
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
mkdir -m 700 "$tmp/data" "$tmp/run"
export XDG_DATA_HOME="$tmp/data"
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
	export XDG_RUNTIME_DIR="$tmp/run"
fi

# --unlock with a password on stdin creates the "login" collection with that
# password and unlocks it, so no prompt is ever needed. The daemon is
# started on this session bus and exits when dbus-run-session ends it.
eval "$(printf '%s' zqagent-test | gnome-keyring-daemon --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL="${GNOME_KEYRING_CONTROL:-}"
export ZQAGENT_KEYRING_TEST=1
unset ZQAGENT_KEYRING_INNER

set +e
"$@"
rc=$?
set -e
exit "$rc"
