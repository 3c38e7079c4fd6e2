#!/bin/sh
# Compares the grep tool with ripgrep on the Go standard library source.
# Usage: tools/search/bench_rg.sh [runs]   (from the module root)
# Prints, per pattern, rg's best wall time and its CPU time (user+sys) over
# the runs, then runs BenchmarkGrepGoroot, which reports ns/op and
# cpu-ms/op for the same patterns (all matches, no cap). Timing only: no
# assertion. On a loaded machine compare the CPU figures.
set -eu
runs=${1:-7}
src="$(go env GOROOT)/src"
command -v rg >/dev/null || { echo "ripgrep (rg) not installed: apt-get install -y ripgrep" >&2; exit 1; }
for pat in 'func main' 'errors\.New\("[a-z]+' '(?i)deadline exceeded'; do
	rg -c "$pat" "$src" >/dev/null || true # warm the page cache
	best=""
	i=0
	while [ "$i" -lt "$runs" ]; do
		t=$( { /usr/bin/time -f '%e %U %S' rg -c "$pat" "$src" >/dev/null; } 2>&1 | tail -1)
		best=$(printf '%s\n%s\n' "$best" "$t" | awk 'NF==3 {print $1+0, $2+$3}' | sort -n | head -1)
		i=$((i + 1))
	done
	cpu=$(echo "$best" | awk '{print $2*1000}')
	wall=$(echo "$best" | awk '{print $1*1000}')
	matches=$(rg -c "$pat" "$src" | awk -F: '{s += $NF} END {print s}')
	printf 'rg %-24s best wall %6.0f ms  cpu %6.0f ms  matches %s\n' "$pat" "$wall" "$cpu" "$matches"
done
go test -run '^$' -bench BenchmarkGrepGoroot -benchtime "${runs}x" ./tools/search
