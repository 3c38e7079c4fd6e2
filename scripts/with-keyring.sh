#!/bin/sh
# Runs a command with a real, unlocked Secret Service keychain (gnome-keyring
# on a private D-Bus session), so the keychain tests use the real backend.
# See keychain/testdata/with-keyring.sh.
exec "$(dirname "$0")/../keychain/testdata/with-keyring.sh" "$@"
