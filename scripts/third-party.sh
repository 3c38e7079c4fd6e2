#!/bin/sh
# third_party/jsonschema is github.com/santhosh-tekuri/jsonschema/v6 at
# $VER (pulled in by mcp-go's server package, which mcp-go's client links),
# with third_party/jsonschema.patch applied: upstream compiles every draft's
# metaschema in init, ~5 ms and 1.7 MB on each start of the sidecar whether
# or not a schema is ever compiled; the patch compiles them on the first
# Compile. go.mod replaces the module with this copy.
#
#   scripts/third-party.sh check   upstream + the patch == third_party/jsonschema (make test)
#   scripts/third-party.sh diff    rewrite the patch from third_party/jsonschema
#   scripts/third-party.sh test    the copy's own tests (upstream's and the patch's), with -race
#
# To take a new upstream version: set VER, run "check" to see the patch
# still applies (fix it by hand if not), copy upstream in, apply the patch,
# run "diff", "test" and make test.
set -eu
MOD=github.com/santhosh-tekuri/jsonschema/v6
VER=v6.0.3
# Files of upstream's module left out of the copy: its CI and linter set-up,
# the submodule of a test suite it skips when absent, its workspace,
# and an example that fetches a schema from the internet.
DROP='.github .gitmodules .golangci.yml .pre-commit-hooks.yaml go.work go.work.sum example_http_test.go'

root=$(cd "$(dirname "$0")/.." && pwd)
fork=$root/third_party/jsonschema
patchfile=$root/third_party/jsonschema.patch
GO=${GO:-go}

upstream() { # $1: a new directory that gets upstream's files
	dir=$(cd "$tmp" && "$GO" mod download -json "$MOD@$VER" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -n "$dir" ] || { echo "third-party: cannot download $MOD@$VER" >&2; exit 1; }
	cp -R "$dir" "$1"
	chmod -R u+w "$1"
	for f in $DROP; do rm -rf "${1:?}/$f"; done
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case ${1:-check} in
check)
	upstream "$tmp/a"
	(cd "$tmp/a" && patch -s -p1 <"$patchfile") || { echo "third-party: $patchfile does not apply to $MOD@$VER" >&2; exit 1; }
	if ! diff -r "$tmp/a" "$fork" >"$tmp/out"; then
		echo "third-party: third_party/jsonschema is not $MOD@$VER + third_party/jsonschema.patch:" >&2
		cat "$tmp/out" >&2
		echo "(scripts/third-party.sh diff rewrites the patch from the copy)" >&2
		exit 1
	fi
	echo "third-party: third_party/jsonschema = $MOD@$VER + jsonschema.patch"
	;;
diff)
	upstream "$tmp/a"
	cp -R "$fork" "$tmp/b"
	# diff exits 1 when the trees differ (the patch), 2 when it failed.
	st=0
	(cd "$tmp" && diff -ruN a b) >"$tmp/patch" || st=$?
	[ "$st" -le 1 ] || { echo "third-party: diff failed" >&2; exit 1; }
	sed -E "s/^(---|[+]{3}) ([^\t]*)\t.*/\1 \2/" "$tmp/patch" >"$patchfile"
	echo "third-party: wrote $patchfile"
	;;
test)
	cd "$fork" && "$GO" test -race -count=1 ./...
	;;
*)
	echo "usage: scripts/third-party.sh check|diff|test" >&2
	exit 2
	;;
esac
